#!/usr/bin/env bash
# What watching processes costs: PIDS (50) `sleep` children sampled once a second for SECONDS
# (20) by the observe::Watcher (with ingestbench itself), first watched by PID, then by name
# (which adds the /proc rescan). Prints the sampling thread's CPU (utime + stime of
# /proc/self/task/TID/stat, the thread named ingestbench-obs) as % of one core, and per sample.
# Target: < 1 % of one core at 50 PIDs. Release build (the ignored test `observe_cost`).
#   perf/observe-cost.sh [SECONDS] [PIDS]        (defaults: 20 50)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
pids=${2:-50}
cargo test --release --quiet --test observe --no-run
for mode in pids names; do
  OBSERVE_COST_MODE=$mode OBSERVE_COST_SECS=$secs OBSERVE_COST_PIDS=$pids \
    cargo test --release --quiet --test observe observe_cost -- --ignored --nocapture 2>&1 \
    | grep '^observe-cost:'
done
