#!/usr/bin/env bash
# The project's one test command (README, .ci/run): installs what the tests need when it is
# missing, then runs cargo fmt --check, clippy with warnings as errors, cargo deny (licences,
# bans, sources; advisories when the advisory database can be fetched), and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-test-deps.sh

echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets --quiet -- -D warnings
echo "== cargo deny check licenses bans sources"
cargo deny check licenses bans sources
echo "== cargo deny check advisories"
if cargo deny fetch db >/dev/null 2>&1; then
  cargo deny --offline check advisories
else
  echo "cargo deny check advisories: skipped: advisory database unreachable"
fi
echo "== cargo test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --all-targets --no-fail-fast --quiet 2>&1 | tee "$log" || status=$?
# One closing line for the whole suite, summed over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "cargo-test: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
exit "$status"
