#!/usr/bin/env bash
# `adapter: elasticsearch` beside `adapter: lphc`, the same source (aws.cloudtrail, 500-event
# batches, 2 worker threads, 4 connections, 10 s, as fast as it goes) into the same minimal
# answerer (perf/bulk_answerer.py, Python asyncio, 127.0.0.1), plain and gzipped: what the
# `_bulk` framing costs against lphc's JSON array. On a 2-core machine the answerer shares the
# cores and is the limit (shortfall_by: target): the figures compare the two framings, they are
# not a ceiling.   perf/bulk-throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin ingestbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
for compression in none gzip; do
  for adapter in lphc elasticsearch; do
    port=$(free_port)
    python3 perf/bulk_answerer.py "$port" 14 > "$tmp/ans.txt" &
    answerer=$!
    sleep 0.5
    path=$([ "$adapter" = lphc ] && echo /ingest || true)
    cat > "$tmp/c.yaml" <<YAML
schema_version: "1.0"
seed: 1
target:
  adapter: $adapter
  url: "http://127.0.0.1:$port$path"
  compression: $compression
  batch: { max_events: 500, max_bytes: 4MB }
source: { id: aws.cloudtrail }
workload: { eps: 2000000, workers: 4, stop: { after: 10s } }
slo: { min_eps_ratio: 0 }
YAML
    target/release/ingestbench run --config "$tmp/c.yaml" --threads 2 --output json > "$tmp/r.json" 2>/dev/null || true
    wait "$answerer"
    python3 - "$adapter" "$compression" "$tmp/r.json" <<'PY'
import json, sys
a, z, path = sys.argv[1:]
r = json.load(open(path)); s = r['summary']
print(f"{a:13} {z:4}  achieved {s['achieved_eps']:>9.0f} eps  {s['mb_per_s']:6.1f} MB/s  "
      f"{s['bytes_sent'] / max(s['events_sent'], 1):6.0f} B/event  worker cpu {s['worker_cpu_share']:.2f}  "
      f"service p50 {r['latency_ms']['service']['p50']} ms  shortfall by {s['shortfall_by']}")
PY
  done
done
