#!/usr/bin/env bash
# Installs what the test suite needs when it is missing, and nothing when it is all there:
# the rustfmt and clippy components of the toolchain.
set -euo pipefail

need_component() {
  local probe=$1 component=$2
  if ! cargo "$probe" --version >/dev/null 2>&1; then
    echo "installing rust component $component"
    rustup component add "$component"
  fi
}
need_component fmt rustfmt
need_component clippy clippy
