#!/usr/bin/env bash
# Syslog generators side by side into the same null sink (perf/nullsink.c: reads and
# discards), same message size (~200 bytes, RFC 5424 with octet counting on TCP), one
# connection, unlimited rate, sink pinned to core 0 and generator to core 1:
#   ingestbench (linux.syslog pack: ~197-byte messages, batched writes; UDP with sendmmsg and
#   GSO, datagrams grouped by size: the default `udp_order: by_size`)
#   loggen from syslog-ng (apt-get install syslog-ng-core), one syscall per message
# This VM's loopback speed drifts by up to 2x over minutes (other tenants), so the two tools
# run in turns, ROUNDS times each, and the ratio printed is the median of the rounds' ratios.
# Prints messages/s of each and the ratio, for TCP and UDP. Bounded by SECONDS per run.
#   perf/syslog-vs-loggen.sh [SECONDS] [ROUNDS]     (defaults 10 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
rounds=${2:-3}
cargo build --release --quiet
bin=$PWD/target/release/ingestbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/nullsink" perf/nullsink.c
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

run_ib() { # transport port
  cat > "$work/ib.yaml" <<YAML
schema_version: "1.0"
seed: 1
target:
  adapter: syslog
  url: "$1://127.0.0.1:$2"
  syslog: { framing: octet-counting, format: rfc5424, max_message_bytes: 8KiB }
  batch: { max_events: 2000, max_bytes: 1MB }
source: { id: linux.syslog }
workload: { eps: 20000000, workers: 1, stop: { after: ${secs}s } }
# More than this machine can do, on purpose: the shortfall is the point, not a failure.
slo: { min_eps_ratio: 0 }
YAML
  taskset -c 1 "$bin" run --config "$work/ib.yaml" --threads 1 --no-pin --output json > "$work/ib.json"
  python3 -c "import json; r=json.load(open('$work/ib.json')); s=r['summary']; print(s['events_accepted']/r['duration_s'])"
}

null_run() { # transport port command...: runs the command against a fresh null sink
  local t=$1 p=$2
  shift 2
  taskset -c 0 "$work/nullsink" "$t" "$p" $((secs * 3 + 10)) > /dev/null &
  local sink=$!
  sleep 0.3
  "$@"
  kill "$sink" 2>/dev/null || true
  wait "$sink" 2>/dev/null || true
}
run_loggen() { # transport port
  local flag=-S
  [ "$1" = udp ] && flag=-D
  taskset -c 1 loggen $flag -P -s 200 -r 100000000 -I "$secs" --active-connections 1 127.0.0.1 "$2" \
    > "$work/loggen.txt" 2>&1 || true
  sed -n 's/.*average rate = \([0-9.]*\).*/\1/p' "$work/loggen.txt" | tail -1
}

for transport in tcp udp; do
  : > "$work/rounds"
  for round in $(seq "$rounds"); do
    p=$(port)
    null_run "$transport" "$p" run_ib "$transport" "$p" > "$work/ib.rate"
    p=$(port)
    null_run "$transport" "$p" run_loggen "$transport" "$p" > "$work/lg.rate"
    echo "$(cat "$work/ib.rate") $(cat "$work/lg.rate")" >> "$work/rounds"
  done
  python3 - "$transport" "$work/rounds" <<'PY'
import statistics, sys
t = sys.argv[1]
rows = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 2]
ratios = []
for i, (ib, lg) in enumerate(rows, 1):
    r = ib / lg if lg > 0 else float('nan')
    ratios.append(r)
    print(f"{t} round {i}: ingestbench {ib:,.0f} msg/s, loggen {lg:,.0f} msg/s, ratio {r:.2f}x")
print(f"{t}: median ratio {statistics.median(ratios):.2f}x over {len(ratios)} rounds")
PY
done

# TLS as a share of plain TCP: both into one `ingestbench sink` (the null sink speaks no TLS),
# same pack, same settings.
certs="$work/certs"
scripts/make-test-certs.sh "$certs" > /dev/null
taskset -c 0 "$bin" sink --http 127.0.0.1:0 --syslog-tcp 127.0.0.1:0 --syslog-tls 127.0.0.1:0 \
  --tls-cert "$certs/server.pem" --tls-key "$certs/server.key" --threads 1 --duration $((secs * 3 + 20))s \
  2> "$work/sink.err" > /dev/null &
sink=$!
for _ in $(seq 100); do grep -q "syslog+tls" "$work/sink.err" 2>/dev/null && break; sleep 0.05; done
tcp_port=$(sed -n 's/.*syslog+tcp:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/sink.err")
tls_port=$(sed -n 's/.*syslog+tls:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/sink.err")
tcp=$(run_ib tcp "$tcp_port")
sed -i "s|url: \"tcp://127.0.0.1:$tcp_port\"|url: \"tls://127.0.0.1:$tls_port\"\n  tls: { ca_file: \"$certs/ca.pem\", server_name: localhost }|" "$work/ib.yaml"
taskset -c 1 "$bin" run --config "$work/ib.yaml" --threads 1 --no-pin --output json > "$work/ib-tls.json"
tls=$(python3 -c "import json; r=json.load(open('$work/ib-tls.json')); print(r['summary']['events_accepted']/r['duration_s'])")
kill "$sink" 2>/dev/null || true
wait "$sink" 2>/dev/null || true
python3 -c "print(f'tls: {float($tls):,.0f} msg/s vs tcp {float($tcp):,.0f} msg/s into the built-in sink: {100*float($tls)/float($tcp):.0f}% of plain TCP')"
