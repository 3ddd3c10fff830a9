#!/usr/bin/env bash
# Installs what the test suite needs when it is missing, and nothing when it is all there:
# the rustfmt and clippy components, and nginx (a real HTTP/1.1 reverse proxy for the run
# tests) from Debian. Services are kept from starting on install: the tests start their own
# nginx on 127.0.0.1 with a generated config and stop it by PID.
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

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # Keep Debian's maintainer scripts from starting the services we install.
  local policy=/usr/sbin/policy-rc.d created=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
    created=1
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
  [ "$created" -eq 0 ] || $sudo rm -f "$policy"
}

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "installing nginx"
  apt_install nginx-light
  # If the package started a default server anyway, stop it: tests run their own.
  if pgrep -x nginx >/dev/null 2>&1 && [ -f /run/nginx.pid ]; then
    kill "$(cat /run/nginx.pid)" 2>/dev/null || true
  fi
fi
