#!/usr/bin/env bash
# The ceiling search on this machine (release build, 127.0.0.1 only):
#  1. against tests/support/capacity_sink.py at a known capacity (CAP events/s, answering 429
#     beyond it, then slowing down instead): how close the search comes to the capacity, in
#     how many steps and how long;
#  2. against the built-in sink in process (aws.cloudtrail, 500-event batches, 8 connections),
#     with 1 worker thread and then 2: the ceiling of our own generator + sink on this machine,
#     and whose limit the search says it was.
#   perf/ceiling.sh [CAP]          (default 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
cap=${1:-20000}
cargo build --release --quiet
bin=target/release/ingestbench
work=$(mktemp -d)
sink_pid=
cleanup() { [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

summary() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["ceiling"]
steps = c["steps"]
print(f'  ceiling {c["ceiling_eps"]} eps, first failed {c["first_failed_eps"]}, limited by {c["limited_by"]}: {c["detail"]}')
print(f'  {len(steps)} steps: ' + ", ".join(f'{s["target_eps"]:.0f}{"+" if s["sustained"] else "-"}' for s in steps))
print(f'  exit {r["verdict"]["exit_code"]}')
PY
}

for mode in refuse slow; do
  rm -f "$work/port"
  python3 tests/support/capacity_sink.py "$work/port" "$cap" "$mode" 600 & sink_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  cat > "$work/cap.yaml" <<YAML
schema_version: "1.0"
target:
  adapter: lphc
  url: http://127.0.0.1:$(cat "$work/port")/ingest
  batch: { max_events: 100 }
source: { id: aws.cloudtrail }
workload:
  find_ceiling: true
  workers: 16
  ceiling: { start_eps: $((cap / 8)), hold: 5s, warmup: 1s, precision: 0.05 }
YAML
  echo "capacity sink, $mode beyond $cap eps:"
  start=$(date +%s)
  "$bin" run --config "$work/cap.yaml" --threads 1 --output json > "$work/r.json" 2>/dev/null || true
  summary "$work/r.json"
  echo "  took $(( $(date +%s) - start )) s"
  kill "$sink_pid"; wait "$sink_pid" 2>/dev/null || true; sink_pid=
done

for threads in 1 2; do
  sed 's#csv: ceiling-steps.csv#csv: '"$work"'/steps.csv#' examples/ceiling.yaml > "$work/builtin.yaml"
  echo "built-in sink, $threads worker thread(s):"
  start=$(date +%s)
  "$bin" run --config "$work/builtin.yaml" --threads "$threads" --output json > "$work/r.json" 2>/dev/null || true
  summary "$work/r.json"
  echo "  took $(( $(date +%s) - start )) s"
done
