#!/usr/bin/env bash
# What watching a run costs: the same full-speed run against the built-in sink (aws.cloudtrail,
# 500-event batches, 2 worker threads, 4 connections; in process, 127.0.0.1) with the status
# page and /metrics off, then on and scraped (both every second, as a person and Prometheus
# would, plus /metrics five times a second to time it), in turns, ROUNDS times. Prints each
# round, the median on/off throughput ratio, and how long a /metrics scrape took under that
# full load (curl's time_total: connect, request, render, transfer). Then the same pair at a
# fixed 200,000 events/s, where both keep up, comparing the CPU time the process used (user +
# system): the cost of serving, free of the VM's drift in throughput.
#   perf/live-overhead.sh [SECONDS] [ROUNDS]        (defaults: 10 5)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
rounds=${2:-5}
cargo build --release --quiet
bin=target/release/ingestbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/c.yaml" <<YAML
schema_version: "1.0"
seed: 1
target:
  url: builtin
  batch: { max_events: 500, max_bytes: 4MB }
source: { id: aws.cloudtrail }
workload: { eps: 2000000, workers: 4, stop: { after: ${secs}s } }
# More than this machine can do, on purpose: the shortfall is the point, not a failure.
slo: { min_eps_ratio: 0 }
YAML
sed 's/eps: 2000000/eps: 200000/' "$work/c.yaml" > "$work/fixed.yaml"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
achieved() { python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["summary"]["achieved_eps"]))' "$1"; }

# CPU ticks (utime + stime) used so far by the threads of process $1 that serve the status page
# and /metrics: ingestbench-status*, ingestbench-metrics, and tiny_http's own threads, which
# are unnamed and so show the process name (as does the main thread, which only waits).
serving_ticks() {
  local t=0 task name
  for task in /proc/"$1"/task/*; do
    name=$(cat "$task/comm" 2>/dev/null) || continue
    case $name in
      ingestbench|ingestbench-sta*|ingestbench-met*)
        t=$((t + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$task/stat" 2>/dev/null || echo 0)));;
    esac
  done
  echo "$t"
}

# Scrapes while the run with PID $1 lives: status.json and /metrics each second, and /metrics
# every 200 ms with its time appended to $4; the serving threads' CPU ticks go to $4.ticks.
scrape() {
  local pid=$1 sp=$2 mp=$3 times=$4 n=0
  while kill -0 "$pid" 2>/dev/null; do
    serving_ticks "$pid" > "$times.ticks.tmp" && mv "$times.ticks.tmp" "$times.ticks" 
    curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$mp/metrics" >> "$times" || true
    if (( n % 5 == 0 )); then
      curl -s -o /dev/null "http://127.0.0.1:$sp/status.json" || true
    fi
    n=$((n + 1))
    sleep 0.2
  done
}

off=() on=() ratios=()
: > "$work/times"
for r in $(seq 1 "$rounds"); do
  "$bin" run --config "$work/c.yaml" --threads 2 --output json > "$work/off.json" 2>/dev/null || true
  a=$(achieved "$work/off.json")
  sp=$(free_port) mp=$(free_port)
  "$bin" run --config "$work/c.yaml" --threads 2 --output json \
    --status "127.0.0.1:$sp" --prometheus "127.0.0.1:$mp" > "$work/on.json" 2>/dev/null &
  pid=$!
  sleep 1.5   # past start-up, into full load
  scrape "$pid" "$sp" "$mp" "$work/times" &
  wait "$pid" || true
  wait
  b=$(achieved "$work/on.json")
  ratio=$(python3 -c "print(f'{$b/$a:.4f}')")
  ticks=$(cat "$work/times.ticks" 2>/dev/null || echo 0)
  echo "round $r: off $a eps, on (scraped) $b eps, on/off $ratio; serving threads $((ticks * 1000 / $(getconf CLK_TCK))) CPU-ms in ${secs} s"
  off+=("$a") on+=("$b") ratios+=("$ratio")
done
# CPU seconds (user + system) of one run of config $1 with extra flags; scraped when given ports.
cpu_of() {
  local cfg=$1; shift
  /usr/bin/time -f '%U %S' -o "$work/cpu" "$bin" run --config "$cfg" --threads 2 --output json "$@" > /dev/null 2>&1 || true
  awk '{ print $1 + $2 }' "$work/cpu"
}
cpu_ratios=()
for r in $(seq 1 "$rounds"); do
  a=$(cpu_of "$work/fixed.yaml")
  sp=$(free_port) mp=$(free_port)
  cpu_of "$work/fixed.yaml" --status "127.0.0.1:$sp" --prometheus "127.0.0.1:$mp" > "$work/cpu_on" &
  pid=$!
  sleep 1.5
  # The run is /usr/bin/time's child: scrape while the wrapper lives.
  scrape "$pid" "$sp" "$mp" "$work/fixed_times" &
  wait "$pid" || true
  wait
  b=$(cat "$work/cpu_on")
  ratio=$(python3 -c "print(f'{$b/$a:.4f}')")
  echo "fixed 200,000 eps, round $r: CPU off $a s, on (scraped) $b s, on/off $ratio"
  cpu_ratios+=("$ratio")
done
python3 -c "import statistics,sys; m=statistics.median(map(float,sys.argv[1:])); print(f'median CPU on/off at a fixed rate: {m:.4f} ({(m-1)*100:+.2f} %)')" "${cpu_ratios[@]}"
python3 - "$work/times" "${ratios[@]}" <<'PY'
import statistics, sys
times = [float(x) * 1000 for x in open(sys.argv[1]) if x.strip()]
ratios = [float(x) for x in sys.argv[2:]]
print(f"median on/off throughput: {statistics.median(ratios):.4f} ({(statistics.median(ratios) - 1) * 100:+.2f} %)")
times.sort()
if times:
    p = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    print(f"/metrics scrape under full load: {len(times)} scrapes, median {p(0.5):.2f} ms, p99 {p(0.99):.2f} ms, max {times[-1]:.2f} ms")
PY
