#!/usr/bin/env bash
# `ingestbench spawn` side by side with hillu/edr-loadgen (built from its source by
# ../shared/peers/edr-loadgen/build.sh) at a rate a ticker loop cannot keep on this machine:
# the same command (/bin/true), delay (1 ms = 1,000/s) and duration (10 s), watching the same
# process with a known duty cycle (tests/support/duty_cycle.py: 30 ms of CPU every 100 ms).
# The two tools run in turns, ROUNDS times. Per run it prints spawns started, achieved
# spawns/s, what edr-loadgen cannot say (lateness p50/p99/max and late spawns: a period or
# more behind), the watched process's CPU as each tool measured it, and each tool's own CPU
# with its reaped children (bash `time`). Release build. Everything is bounded and stopped by
# PID.   perf/spawn-vs-edr-loadgen.sh [SECONDS] [DELAY] [ROUNDS]   (defaults 10, 1ms, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
delay=${2:-1ms}
rounds=${3:-3}
delay_s=$(python3 -c "import sys; d='$delay'; print(float(d[:-2])/1000 if d.endswith('ms') else float(d.rstrip('s')))")
cargo build --release --quiet --bin ingestbench
bin=$PWD/target/release/ingestbench
work=$(mktemp -d)
duty_pid=""
cleanup() { [ -z "$duty_pid" ] || kill "$duty_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
../shared/peers/edr-loadgen/build.sh "$work/edr-loadgen" >/dev/null
python3 tests/support/duty_cycle.py $(( (secs * 2 + 5) * rounds + 30 )) 30 &
duty_pid=$!
sleep 0.5
echo "watching PID $duty_pid (30 % duty cycle); /bin/true every $delay for ${secs}s; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %6s %8s %9s %9s %9s %6s %9s %9s\n' tool started spawns/s "p50 ms" "p99 ms" "max ms" late "watched" "tool cpu"
TIMEFORMAT='%U %S'
for r in $(seq "$rounds"); do
  { time "$work/edr-loadgen" -command /bin/true -delay "$delay_s" -duration "$secs" "$duty_pid" 2> "$work/el.log" ; } 2> "$work/el.time"
  python3 - "$work/el.log" "$work/el.time" "$secs" "$duty_pid" <<'PY'
import re, sys
log = open(sys.argv[1]).read(); secs = float(sys.argv[3]); pid = sys.argv[4]
n = int(re.search(r"(\d+) events generated", log).group(1))
cpu = float(re.search(r"PID %s\[.*?\]: [\d.]+\+[\d.]+ = ([\d.]+) seconds" % pid, log).group(1))
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
print("%-12s %6d %8.1f %9s %9s %9s %6s %8.2fs %8.2fs" % ("edr-loadgen", n, n / secs, "-", "-", "-", "-", cpu, u + s))
PY
  { time "$bin" spawn --command /bin/true --delay "$delay" --duration "${secs}s" --pid "$duty_pid" \
      --no-baseline --output json > "$work/ib.json" 2> "$work/ib.log" || true ; } 2> "$work/ib.time"
  python3 - "$work/ib.json" "$work/ib.time" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); s = v["spawns"]; l = v["lateness_ms"]
u, sy = map(float, open(sys.argv[2]).read().split()[-2:])
print("%-12s %6d %8.1f %9.3f %9.3f %9.3f %6d %8.2fs %8.2fs" % ("ingestbench", s["started"], s["achieved_per_s"],
      l["p50"], l["p99"], l["max"], s["late"], v["processes"][0]["load"]["sum_s"], u + sy))
PY
done
