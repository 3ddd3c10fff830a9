#!/usr/bin/env bash
# Side by side on the same sink: ingestbench, wrk and oha each POST 500-event CloudTrail
# batches (~900 KB JSON arrays) over the same number of keep-alive connections to one
# `ingestbench sink` on 127.0.0.1, for the same bounded time, one client thread each, sink and
# client pinned to different cores. Prints requests/s and events/s of each and the ratios.
# wrk comes from Debian (apt-get install wrk); oha from crates.io (cargo install oha, ~15 min).
#   perf/side-by-side.sh [SECONDS] [CONNECTIONS]      (defaults: 10 4)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
conns=${2:-4}
cargo build --release --quiet
bin=$PWD/target/release/ingestbench
work=$(mktemp -d)
sink_pid=""
cleanup() { [ -z "$sink_pid" ] || kill "$sink_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# One batch body, the same for every tool.
"$bin" gen -s aws.cloudtrail -n 500 --seed 1 --format ndjson --tags > "$work/events.ndjson"
python3 -c "import sys,json; ev=[json.loads(l) for l in open(sys.argv[1])]; open(sys.argv[2],'w').write(json.dumps(ev,separators=(',',':')))" "$work/events.ndjson" "$work/body.json"
echo "batch body: $(wc -c < "$work/body.json") bytes, 500 events"

taskset -c 0 "$bin" sink --http 127.0.0.1:0 --threads 1 --duration $((secs * 4 + 30))s 2> "$work/sink.err" > /dev/null &
sink_pid=$!
for _ in $(seq 100); do grep -q "listening" "$work/sink.err" 2>/dev/null && break; sleep 0.05; done
port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$work/sink.err" | head -1)
url="http://127.0.0.1:$port/ingest"

# ingestbench: renders every event (no pre-built body) and paces; asked for far more than it can do.
cat > "$work/ib.yaml" <<YAML
schema_version: "1.0"
seed: 1
target:
  url: "$url"
  batch: { max_events: 500, max_bytes: 4MB }
source: { id: aws.cloudtrail }
workload: { eps: 5000000, workers: $conns, stop: { after: ${secs}s } }
# More than this machine can do, on purpose: the shortfall is the point, not a failure.
slo: { min_eps_ratio: 0 }
YAML
taskset -c 1 "$bin" run --config "$work/ib.yaml" --threads 1 --no-pin --output json > "$work/ib.json"
ib_rps=$(python3 -c "import json; r=json.load(open('$work/ib.json')); print(r['summary']['batches_accepted']/r['duration_s'])")

# wrk: the pre-built body, POSTed as fast as the connections allow.
cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$work/body.json", "rb"); wrk.body = f:read("*a"); f:close()
LUA
taskset -c 1 wrk -t1 -c"$conns" -d"${secs}s" -s "$work/post.lua" "$url" > "$work/wrk.txt"
wrk_rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")

oha_rps=""
if command -v oha >/dev/null 2>&1; then
  taskset -c 1 oha --no-tui -z "${secs}s" -c "$conns" -m POST -D "$work/body.json" -H "Content-Type: application/json" "$url" > "$work/oha.txt"
  oha_rps=$(awk '/Requests\/sec/ {print $2}' "$work/oha.txt")
fi

python3 - "$ib_rps" "$wrk_rps" "${oha_rps:-0}" <<'PY'
import sys
ib, wrk, oha = (float(x) for x in sys.argv[1:4])
print(f"{'tool':12} {'requests/s':>12} {'events/s':>12} {'ingestbench ÷ tool':>20}")
for name, rps in (("ingestbench", ib), ("wrk", wrk), ("oha", oha)):
    if rps <= 0:
        print(f"{name:12} {'(not installed)':>12}")
        continue
    print(f"{name:12} {rps:12.1f} {rps*500:12.0f} {ib/rps:20.2f}")
PY
