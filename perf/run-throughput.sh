#!/usr/bin/env bash
# Sustained throughput of `ingestbench run` against the built-in sink (in process, 127.0.0.1),
# aws.cloudtrail in 500-event batches, 2 worker threads, plus peak RSS. Bounded by --duration.
#   perf/run-throughput.sh [EPS] [DURATION]        (defaults: 2000000 10s = as fast as it goes)
set -euo pipefail
cd "$(dirname "$0")/.."
eps=${1:-2000000}
dur=${2:-10s}
cargo build --release --quiet
cfg=$(mktemp --suffix .yaml)
trap 'rm -f "$cfg"' EXIT
cat > "$cfg" <<YAML
schema_version: "1.0"
seed: 1
target:
  url: builtin
  batch: { max_events: 500, max_bytes: 4MB }
source: { id: aws.cloudtrail }
workload: { eps: $eps, workers: 4, stop: { after: $dur } }
# More than this machine can do, on purpose: the shortfall is the point, not a failure.
slo: { min_eps_ratio: 0 }
YAML
/usr/bin/time -f 'peak RSS %M KB' target/release/ingestbench run --config "$cfg" --threads 2 --output json > /tmp/ib-run.json
python3 - <<'PY'
import json
r = json.load(open('/tmp/ib-run.json'))
s, v = r['summary'], r['verification'] or {}
print(f"target {s['target_eps']:.0f} eps, achieved {s['achieved_eps']:.0f} eps ({s['eps_ratio']*100:.1f}%), "
      f"accepted {s['events_accepted']}, stored {v.get('distinct')}, lost {v.get('lost_events')}, dup {v.get('duplicates')}, "
      f"p50 {r['latency_ms']['intended']['p50']:.2f} ms p99 {r['latency_ms']['intended']['p99']:.2f} ms")
PY
