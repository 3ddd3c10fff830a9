#!/usr/bin/env bash
# The scenario lane's cost (issue #14): `run` against the built-in sink at more than this
# machine can do, aws.cloudtrail in 500-event batches on 2 worker threads (as
# perf/run-throughput.sh), three ways in alternating rounds so VM drift hits all alike:
#   base  — this build, background only;
#   lane  — this build, with --scenario (the issue's 3-stage chain scaled to 30,000 stage
#           events over 8 s of scenario time at 1x): the lane's own events/s and what is
#           left of the background's;
#   old   — an older build given as OLD=path/to/checkout/target/release/ingestbench
#           (optional; run from its checkout, with its packs), background only: the worker's
#           hot loop before the lane's `Source` was added.
# Every run is bounded by --duration. Prints achieved events/s per run and the medians.
#   perf/scenario-lane.sh [ROUNDS] [DURATION]        (defaults: 3 10s)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
dur=${2:-10s}
cargo build --release --quiet
new=$PWD/target/release/ingestbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/run.yaml" <<YAML
schema_version: "1.0"
seed: 1
target:
  url: builtin
  batch: { max_events: 500, max_bytes: 4MB }
source: { id: aws.cloudtrail }
workload: { eps: 2000000, workers: 4, stop: { after: $dur } }
slo: { min_eps_ratio: 0 }
YAML
cat > "$tmp/chain.yaml" <<'YAML'
schema_version: "2.0"
seed: 12345
anchor: "2024-06-03T13:00:00Z"
correlation: { shared: [user, host, source_ip] }
stages:
  - { tactic: TA0006, technique: T1110, source: windows.security, count: 12000, start_offset: 0s, duration: 3s }
  - { tactic: TA0001, technique: T1078, source: identity.okta, count: 6000, start_offset: 3s, duration: 2s }
  - { tactic: TA0002, technique: T1059, source: windows.security, count: 12000, start_offset: 5s, duration: 3s }
YAML
one() { # label, binary, extra args...
  local label=$1 bin=$2
  shift 2
  # Each build from its own checkout, so it reads the packs it was written for.
  (cd "$(dirname "$bin")/../.." && "$bin" run --config "$tmp/run.yaml" --threads 2 --output json "$@" > "$tmp/r.json" 2>/dev/null) || true
  python3 - "$label" "$tmp/r.json" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
s = r['summary']
line = f"{label:5} background {s['achieved_eps']:>12,.0f} eps"
sc = r.get('scenario')
if sc:
    line += f"   lane {sc['events_accepted']:,}/{sc['events']:,} stage events accepted, stored {sc['stored']['distinct']:,}"
print(line)
PY
}
for i in $(seq 1 "$rounds"); do
  echo "round $i"
  one base "$new" | tee -a "$tmp/base"
  one lane "$new" --scenario "$tmp/chain.yaml" | tee -a "$tmp/lane"
  if [ -n "${OLD:-}" ]; then one old "$OLD" | tee -a "$tmp/old"; fi
done
python3 - "$tmp" <<'PY'
import re, statistics, sys, os
d = sys.argv[1]
for k in ("old", "base", "lane"):
    p = os.path.join(d, k)
    if not os.path.exists(p):
        continue
    v = [float(re.search(r"background\s+([\d,]+)", l).group(1).replace(",", "")) for l in open(p)]
    print(f"median {k:5} background {statistics.median(v):>12,.0f} eps over {len(v)} runs")
PY
