#!/usr/bin/env bash
# Rate accuracy: achieved / target event rate over 10 s runs from 1,000 to 200,000 events/s
# against the built-in sink. Prints one row per rate.
#   perf/rate-accuracy.sh [DURATION]     (default 10s)
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10s}
cargo build --release --quiet
cfg=$(mktemp --suffix .yaml)
trap 'rm -f "$cfg"' EXIT
printf '%10s %12s %12s %9s\n' target_eps achieved_eps sent_eps error_%
for eps in 1000 5000 20000 50000 100000 200000; do
  cat > "$cfg" <<YAML
schema_version: "1.0"
seed: 1
target:
  url: builtin
  batch: { max_events: 500 }
source: { id: aws.cloudtrail }
workload: { eps: $eps, workers: 4, stop: { after: $dur } }
YAML
  target/release/ingestbench run --config "$cfg" --threads 2 --output json > /tmp/ib-rate.json
  python3 - "$eps" <<'PY'
import json, sys
eps = float(sys.argv[1])
r = json.load(open('/tmp/ib-rate.json'))
s = r['summary']
# The schedule's own window: events due by stop.after, over stop.after.
dur = float(r['config']['workload']['stop']['after'].rstrip('s'))
sent = s['events_sent'] / dur
print(f"{eps:10.0f} {s['achieved_eps']:12.0f} {sent:12.0f} {100*(sent-eps)/eps:9.3f}")
PY
done
