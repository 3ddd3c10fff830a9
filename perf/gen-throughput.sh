#!/usr/bin/env bash
# End-to-end generator throughput: `ingestbench gen` for every pack into /dev/null on one
# thread (release build), N events each, printing events/s. Bounded by N; no network.
#   perf/gen-throughput.sh [N]          (default 3,000,000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3000000}
cargo build --release --quiet
bin=target/release/ingestbench
printf '%-22s %12s %10s\n' pack events/s seconds
for id in $($bin sources list | awk 'NR>1 {print $1}'); do
  start=$(date +%s%N)
  taskset -c 1 "$bin" gen -s "$id" -n "$n" --format raw --seed 1 --anchor 2026-01-05T00:00:00Z --tags > /dev/null
  end=$(date +%s%N)
  awk -v id="$id" -v n="$n" -v ns="$((end - start))" 'BEGIN { printf "%-22s %12.0f %10.3f\n", id, n / (ns / 1e9), ns / 1e9 }'
done
