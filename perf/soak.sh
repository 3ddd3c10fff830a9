#!/usr/bin/env bash
# Soak: two runs side by side for DURATION seconds, each watched from /proc every 10 s.
#   A  CloudTrail over lphc into the built-in sink at EPS_A, with a fault storm every
#      STORM_EVERY seconds (20 s of 429 + Retry-After, alternating with 20 s of connection
#      resets), retried (`retry:`) and verified event by event by the sink.
#   B  linux.syslog over TCP (RFC 5424, octet counting) into a real syslog-ng launched by the
#      run, writing a file that the run verifies line by line (`verify:`) at EPS_B.
# Pass (exit 0) when both runs exit 0 with nothing lost, each ingestbench's RSS (every sample)
# and open fds (each minute's median: a socket reopened in a reset storm or a file read at the
# moment of a sample is no leak) stay within ±5 % of their level at the end of the warm-up
# (WARMUP s), and the p99 latency of the last fifth of the run (outside fault windows) is
# within max(2x, +5 ms) of the first fifth after warm-up. Figures go to OUT: samples.csv,
# minutes.csv, summary.json, soak.svg.
#   perf/soak.sh [DURATION] [OUT]           (defaults 3600 and perf/soak; a short check: 120)
# Environment: EPS_A (default 100000), EPS_B (2000), STORM_EVERY (300), WARMUP (300, at most a
# fifth of DURATION).
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-3600}
out=${2:-perf/soak}
eps_a=${EPS_A:-100000}
eps_b=${EPS_B:-2000}
every=${STORM_EVERY:-300}
warmup=${WARMUP:-300}
[ "$warmup" -gt $((dur / 5)) ] && warmup=$((dur / 5))
sng=$(command -v syslog-ng || echo /usr/sbin/syslog-ng)
[ -x "$sng" ] || { echo "soak: needs syslog-ng (apt-get install syslog-ng-core)" >&2; exit 2; }
cargo build --release --quiet
bin=$PWD/target/release/ingestbench
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# The storm timeline, 20 s each, 429s then resets in turn: one of each in the warm-up (at a
# quarter and at half of it: the retry slots and connection buffers they fill are part of the
# level the soak holds), then every STORM_EVERY s from there.
storm() { # AT KIND
  local knob="share_429: 0.2, retry_after_s: 1"
  [ "$2" = reset ] && knob="reset_share: 0.05"
  faults+="  - { at: ${1}s, action: storm, for: 20s, storm: { $knob } }"$'\n'
}
faults=""
storm $((warmup / 4)) 429
storm $((warmup / 2)) reset
i=0
for ((at = warmup / 2 + every; at + 30 < dur; at += every)); do
  if ((i % 2 == 0)); then storm "$at" 429; else storm "$at" reset; fi
  i=$((i + 1))
done
[ -n "$faults" ] && faults="faults:"$'\n'"$faults"

cat > "$work/a.yaml" <<YAML
schema_version: "1.0"
name: soak-lphc-storms
seed: 7
target:
  adapter: lphc
  url: builtin
  batch: { max_events: 500 }
  retry: { max_attempts: 20, max_time: 30s }
source: { id: aws.cloudtrail }
workload: { eps: $eps_a, warmup: ${warmup}s, stop: { after: ${dur}s } }
observability: { report: $work/a.json }
slo: { max_lost_events: 0 }
$faults
YAML

sed "s|@V@|$("$sng" --version | sed -n 's/^Installer-Version: *//p' | cut -d. -f1,2)|; s|@PORT@|$port|; s|@OUT@|$work/sng.log|" \
  > "$work/sng.conf" <<'CONF'
@version: @V@
options { use-dns(no); keep-hostname(yes); flush-lines(0); log-fifo-size(200000); time-reopen(1); };
source s { syslog(ip("127.0.0.1") port(@PORT@) transport("tcp") max-connections(64) log-iw-size(64000)); };
destination d { file("@OUT@" template("$SDATA $MSG\n")); };
log { source(s); destination(d); flags(flow-control); };
CONF

cat > "$work/b.yaml" <<YAML
schema_version: "1.0"
name: soak-syslog-ng
seed: 8
target:
  adapter: syslog
  url: "tcp://127.0.0.1:$port"
  syslog: { framing: octet-counting, format: rfc5424 }
  batch: { max_events: 100 }
source: { id: linux.syslog }
workload: { eps: $eps_b, warmup: ${warmup}s, stop: { after: ${dur}s } }
observability:
  report: $work/b.json
  target:
    command: $sng
    args: [-F, --no-caps, --stderr, "--cfgfile=$work/sng.conf", "--persist-file=$work/sng.persist",
           "--pidfile=$work/sng.pid", "--control=$work/sng.ctl"]
    ready_port: $port
    log: $work/sng.stderr
verify: { sources: ["file:$work/sng.log"], settle_timeout: 30s }
slo: { max_lost_events: 0, max_dup_events: 0 }
YAML

"$bin" validate --config "$work/a.yaml" > /dev/null
"$bin" validate --config "$work/b.yaml" > /dev/null
echo "soak: ${dur}s, A lphc+storms ${eps_a}/s, B syslog-ng ${eps_b}/s; work in $work" >&2
"$bin" run --config "$work/a.yaml" --threads 1 --no-pin --output json > "$work/a.out" 2> "$work/a.err" &
pa=$!
"$bin" run --config "$work/b.yaml" --threads 1 --no-pin --output json > "$work/b.out" 2> "$work/b.err" &
pb=$!

# Every 10 s: RSS, open fds and threads of both ingestbench processes, until both end.
echo "t,run,rss_kb,fds,threads,rss_anon_kb,rss_file_kb" > "$out/samples.csv"
start=$(date +%s)
while kill -0 "$pa" 2>/dev/null || kill -0 "$pb" 2>/dev/null; do
  t=$(($(date +%s) - start))
  for pair in "A:$pa" "B:$pb"; do
    p=${pair#*:}
    [ -r "/proc/$p/status" ] || continue
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
    thr=$(awk '/^Threads/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
    split=$(awk '/^RssAnon/ {a=$2} /^RssFile/ {f=$2} END {print a "," f}' "/proc/$p/status" 2>/dev/null || true)
    fds=$(ls "/proc/$p/fd" 2>/dev/null | wc -l)
    [ -n "$rss" ] && echo "$t,${pair%%:*},$rss,$fds,$thr,$split" >> "$out/samples.csv"
  done
  sleep 10
done
rc_a=0; wait "$pa" || rc_a=$?
rc_b=0; wait "$pb" || rc_b=$?
cp "$work/a.yaml" "$work/b.yaml" "$out/"
cp "$work/a.json" "$out/a.report.json" 2>/dev/null || true
cp "$work/b.json" "$out/b.report.json" 2>/dev/null || true
python3 perf/soak_judge.py "$out" "$out/a.report.json" "$out/b.report.json" "$rc_a" "$rc_b" "$warmup" "$dur"
