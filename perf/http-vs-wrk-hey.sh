#!/usr/bin/env bash
# Plain HTTP load, issue #16's proof: `ingestbench http`, wrk and hey take turns POSTing one
# fixed JSON-array body over keep-alive connections to the same target on 127.0.0.1 — the
# built-in sink; nginx reading each body whole before it answers (the echo module's
# `echo_read_request_body`); nginx answering at once (`return 200`: the answer goes out before
# the body is read, which nginx then discards 4 KB at a time) — with 4 and 64 connections and
# bodies of 600 B and 300 KB. The client is pinned to the last core, the target to all the
# others with a thread or worker process per core (on a 2-core machine: one each; a target
# on one core caps what any client can show, so on a larger machine the target gets more),
# one client thread each (ingestbench --threads 1, wrk -t1, hey with GOMAXPROCS=1). Each
# measurement lasts SECONDS; ROUNDS rounds, the tools' order rotated per round; medians and
# the median of the per-round ratios are printed. Then `-q` at 90 % of the sink's capacity
# for RATE_SECONDS (capacity measured right before: the lowest of three 5 s closed-loop runs,
# 600 B, 64 connections, as a VM's share of a core moves by 10-20 % from one minute to the
# next): achieved vs target and the exit code from `-o json`. Beside requests/s, each client's
# CPU time (user + system, from getrusage of the child) per request: when the one-core target
# is what bounds requests/s, this is where the clients differ.
#   perf/http-vs-wrk-hey.sh [SECONDS] [ROUNDS] [RATE_SECONDS]     (defaults: 10 3 30)
# Needs wrk, hey, nginx and its echo module (Debian: apt-get install wrk hey nginx-light
# libnginx-mod-http-echo).
set -euo pipefail
cd "$(dirname "$0")/.."
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || { echo "needs 2 cores or more: one for the client, the rest for the target" >&2; exit 2; }
client_core=$((ncpu - 1))
target_cores="0-$((ncpu - 2))"
target_threads=$((ncpu - 1))
echo "target on cores $target_cores ($target_threads thread(s)), client on core $client_core"
echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so
for need in wrk hey nginx; do
  command -v "$need" > /dev/null || { echo "needs $need (apt-get install wrk hey nginx-light libnginx-mod-http-echo)" >&2; exit 2; }
done
[ -f "$echo_module" ] || { echo "needs nginx's echo module $echo_module (apt-get install libnginx-mod-http-echo)" >&2; exit 2; }
secs=${1:-10}
rounds=${2:-3}
rate_secs=${3:-30}
cargo build --release --quiet
bin=$PWD/target/release/ingestbench
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Bodies: JSON arrays of exactly 600 and 300,000 bytes (the sink accepts them as events).
python3 - "$work" <<'PY'
import json, sys
def mk(n, size):
    ev = [{"i": i, "msg": ""} for i in range(n)]
    per = (size - len(json.dumps(ev, separators=(",", ":")))) // n
    for e in ev: e["msg"] = "x" * per
    ev[-1]["msg"] += "x" * (size - len(json.dumps(ev, separators=(",", ":"))))
    s = json.dumps(ev, separators=(",", ":")); assert len(s) == size
    return s
open(sys.argv[1] + "/600.json", "w").write(mk(2, 600))
open(sys.argv[1] + "/300k.json", "w").write(mk(1000, 300000))
PY

# Every run is bounded: the targets stop on their own after this long at the latest.
budget=$(( (secs + 3) * rounds * 3 * 12 + rate_secs + 150 ))
taskset -c "$target_cores" "$bin" sink --http 127.0.0.1:0 --threads "$target_threads" --duration "${budget}s" 2> "$work/sink.err" > /dev/null &
pids+=($!)
for _ in $(seq 100); do grep -q "listening" "$work/sink.err" 2>/dev/null && break; sleep 0.05; done
sink_port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$work/sink.err" | head -1)

free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"; }
ngx_port=$(free_port)
echo_port=$(free_port)
mkdir -p "$work/ngx/logs"
cat > "$work/ngx/nginx.conf" <<CONF
load_module $echo_module;
daemon off;
master_process on;
worker_processes $target_threads;
error_log $work/ngx/logs/error.log warn;
pid $work/ngx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/ngx/body;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:$ngx_port;
    client_max_body_size 1m;
    client_body_buffer_size 1m;
    # return answers at once; nginx then reads the body off the socket and discards it
    # (lingering discard) before the next request on the connection.
    location / { return 200; }
  }
  server {
    listen 127.0.0.1:$echo_port;
    client_max_body_size 1m;
    client_body_buffer_size 1m;
    # reads the whole body into client_body_buffer_size, then answers: request, then response.
    location / { echo_read_request_body; echo_status 200; echo ""; }
  }
}
CONF
taskset -c "$target_cores" timeout "${budget}s" nginx -p "$work/ngx" -c "$work/ngx/nginx.conf" &
pids+=($!)
sleep 0.3

# Check that nginx really reads the bodies, both ways: 20 requests of 300 KB answered on one
# keep-alive connection can only be parsed if nginx consumed each body first. (/proc/PID/io
# rchar does not count socket recv(), so it cannot show this: it stayed 0.)
for port in "$ngx_port" "$echo_port"; do
  "$bin" http "http://127.0.0.1:$port/ingest" -c 1 -n 20 -D "$work/300k.json" -T application/json -s 200 --threads 1 --no-pin -o json > "$work/check.json"
  python3 - "$work/check.json" "$port" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); ok = r["summary"]["batches_accepted"]; conns = r["http"]["connections_opened"]
print(f"nginx :{sys.argv[2]} check: {ok} requests of 300,000 B answered 200 on {conns} connection(s)")
assert ok == 20 and conns == 1, "nginx did not consume the bodies on keep-alive"
PY
done

# Runs a client and writes the CPU seconds (user + system) it used to $work/cpu.
cpu() {
  python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(str(r.ru_utime + r.ru_stime))' "$work/cpu" "$@"
}
ib() { # url conns body -> requests/s
  cpu taskset -c "$client_core" "$bin" http "$1" -c "$2" -z "${secs}s" -m POST -D "$3" -T application/json -s 200 --threads 1 --no-pin -o json > "$work/ib.json"
  python3 -c "import json,sys; r=json.load(open('$work/ib.json')); s=r['summary']; assert s['batches_failed']==0 and s['connection_resets']==0, s; print(r['http']['requests_per_s'])"
}
wrkr() {
  cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$3", "rb"); wrk.body = f:read("*a"); f:close()
LUA
  cpu taskset -c "$client_core" wrk -t1 -c"$2" -d"${secs}s" -s "$work/post.lua" "$1" > "$work/wrk.txt"
  if grep -q -e "Non-2xx" -e "Socket errors" "$work/wrk.txt"; then grep -e "Non-2xx" -e "Socket errors" "$work/wrk.txt" >&2; fi
  awk '/Requests\/sec/ {print $2}' "$work/wrk.txt"
}
heyr() {
  GOMAXPROCS=1 cpu taskset -c "$client_core" hey -z "${secs}s" -c "$2" -m POST -D "$3" -T application/json "$1" > "$work/hey.txt"
  if ! grep -q "\[200\]" "$work/hey.txt" || grep -A3 "Error distribution" "$work/hey.txt" | grep -q "\]"; then sed -n '/Status code/,$p' "$work/hey.txt" >&2; fi
  awk '/Requests\/sec/ {print $2}' "$work/hey.txt"
}

results="$work/results.tsv"
tools=(ib wrkr heyr)
for target in sink nginx-echo nginx-return; do
  case $target in
    sink) url="http://127.0.0.1:$sink_port/ingest" ;;
    nginx-echo) url="http://127.0.0.1:$echo_port/ingest" ;;
    nginx-return) url="http://127.0.0.1:$ngx_port/ingest" ;;
  esac
  for body in 600 300k; do
    for c in 4 64; do
      for r in $(seq "$rounds"); do
        for k in 0 1 2; do
          t=${tools[$(( (k + r - 1) % 3 ))]}
          rps=$($t "$url" "$c" "$work/$body.json")
          us=$(python3 -c "print($(cat "$work/cpu") / ($rps * $secs) * 1e6)")
          printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$body" "$c" "$r" "$t" "$rps" "$us" | tee -a "$results" >&2
        done
      done
    done
  done
done

echo
python3 - "$results" <<'PY'
import sys, statistics as st, collections
rows = collections.defaultdict(dict)
cpu = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    target, body, c, r, tool, rps, us = line.split("\t")
    rows[(target, body, int(c))].setdefault(tool, {})[int(r)] = float(rps)
    cpu[(target, body, int(c))].setdefault(tool, []).append(float(us))
print("| target | body | conns | ingestbench req/s | wrk req/s | hey req/s | ib ÷ wrk (per round) | ib ÷ hey (per round) |")
print("|---|---|---:|---:|---:|---:|---|---|")
for (target, body, c), t in rows.items():
    ib, wrk, hey = t["ib"], t["wrkr"], t["heyr"]
    rw = [ib[r] / wrk[r] for r in ib]; rh = [ib[r] / hey[r] for r in ib]
    fmt = lambda v: " / ".join(f"{x:.2f}" for x in v)
    print(f"| {target} | {body} B | {c} | {st.median(ib.values()):,.0f} | {st.median(wrk.values()):,.0f} | {st.median(hey.values()):,.0f} "
          f"| **{st.median(rw):.2f}** ({fmt(rw)}) | **{st.median(rh):.2f}** ({fmt(rh)}) |")
print()
print("Client CPU per request (user + system, µs, median of the rounds):")
print()
print("| target | body | conns | ingestbench | wrk | hey | wrk ÷ ib | hey ÷ ib |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for (target, body, c), t in cpu.items():
    ib, wrk, hey = (st.median(t[k]) for k in ("ib", "wrkr", "heyr"))
    print(f"| {target} | {body} B | {c} | {ib:.1f} | {wrk:.1f} | {hey:.1f} | **{wrk / ib:.2f}** | **{hey / ib:.2f}** |")
PY

# Open loop: -q at 90 % of the sink's capacity, measured right before (the VM's share of a core
# moves from one minute to the next: the figure from the matrix above can be stale by now).
caps=()
for _ in 1 2 3; do
  taskset -c "$client_core" "$bin" http "http://127.0.0.1:$sink_port/ingest" -c 64 -z 5s -m POST -D "$work/600.json" -T application/json -s 200 --threads 1 --no-pin -o json > "$work/cap.json"
  caps+=("$(python3 -c "import json; print(json.load(open('$work/cap.json'))['http']['requests_per_s'])")")
done
rate=$(python3 -c "import sys; print(round(min(map(float, sys.argv[1:])) * 0.9))" "${caps[@]}")
echo "sink capacity (600 B, 64 connections, 3 × 5 s): ${caps[*]} req/s; -q $rate"
q_rc=0
taskset -c "$client_core" "$bin" http "http://127.0.0.1:$sink_port/ingest" -c 64 -z "${rate_secs}s" -q "$rate" -m POST -D "$work/600.json" -T application/json -s 200 --threads 1 --no-pin -o json > "$work/q.json" || q_rc=$?
python3 - "$work/q.json" "$rate" "$q_rc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = r["summary"]
dev = (s["achieved_eps"] - s["target_eps"]) / s["target_eps"] * 100
print(f"\n-q {sys.argv[2]} for {s['window_s']} s: target_eps {s['target_eps']:,.1f}, achieved_eps {s['achieved_eps']:,.1f} ({dev:+.3f} %), "
      f"sent {s['batches_sent']:,}, failed {s['batches_failed']}, shortfall {s['shortfall_events']} ({s['shortfall_by']}), "
      f"intended latency p50/p99 {r['latency_ms']['intended'].get('p50')}/{r['latency_ms']['intended'].get('p99')} ms, exit {sys.argv[3]}")
PY
exit "$q_rc"
