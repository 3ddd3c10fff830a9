#!/usr/bin/env bash
# Installs what the test suite needs when it is missing, and nothing when it is all there:
# the rustfmt and clippy components; cargo-deny (built from crates.io); nginx (a real HTTP/1.1 and TLS reverse proxy) and
# syslog-ng (syslog TCP/UDP/TLS receiver) from Debian; and rsyslog, which conflicts with
# syslog-ng-core as a Debian package, unpacked (not installed) from its .debs into
# ${INGESTBENCH_PEERS_DIR:-$HOME/.cache/ingestbench-peers}/rsyslog (with its RELP input,
# rsyslog-relp, and librelp0). Services are kept from
# starting on install: the tests start their own peers on 127.0.0.1 with generated configs
# and stop them by PID.
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

# cargo-deny: the licence, ban, source and advisory checks of scripts/test.sh (deny.toml).
if ! cargo deny --version >/dev/null 2>&1; then
  echo "installing cargo-deny"
  cargo install cargo-deny --locked
fi

apt_updated=0
apt_update() {
  [ "$apt_updated" -eq 0 ] || return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  apt_updated=1
}

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
  apt_update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
  [ "$created" -eq 0 ] || $sudo rm -f "$policy"
}

# A Python test helper from PyPI, when `import MODULE` fails: pip_install MODULE PACKAGE.
pip_install() {
  local module=$1 package=$2
  python3 -c "import $module" >/dev/null 2>&1 && return 0
  echo "installing $package (Python)"
  # A Debian-managed python3 refuses pip installs (PEP 668) unless told it may.
  python3 -m pip install --quiet "$package" ||
    python3 -m pip install --quiet --break-system-packages "$package"
}

# Go (Debian's golang-go) builds the peer edr-loadgen from its source for tests/spawn_peer.rs
# and perf/spawn-vs-edr-loadgen.sh (../shared/peers/edr-loadgen/build.sh); its cgo part needs gcc.
if ! command -v go >/dev/null 2>&1; then
  echo "installing golang-go"
  apt_install golang-go gcc libc6-dev
fi

# openssl makes the throwaway test certificates (scripts/make-test-certs.sh).
if ! command -v openssl >/dev/null 2>&1; then
  echo "installing openssl"
  apt_install openssl
fi

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "installing nginx"
  apt_install nginx-light
  # If the package started a default server anyway, stop it: tests run their own.
  if pgrep -x nginx >/dev/null 2>&1 && [ -f /run/nginx.pid ]; then
    kill "$(cat /run/nginx.pid)" 2>/dev/null || true
  fi
fi

# syslog-ng: syslog over TCP (octet counting and LF), UDP and TLS with strict RFC 5424 parsing.
if ! command -v syslog-ng >/dev/null 2>&1 && [ ! -x /usr/sbin/syslog-ng ]; then
  echo "installing syslog-ng"
  apt_install syslog-ng-core
  # If the package started the system syslog-ng anyway, stop it by its pidfile.
  for pidfile in /run/syslog-ng.pid /var/run/syslog-ng.pid /var/lib/syslog-ng/syslog-ng.pid; do
    if [ -f "$pidfile" ]; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
    fi
  done
fi

# rsyslog: downloaded and unpacked beside syslog-ng, never installed (the packages conflict).
# The tests run it as
#   LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:$R/lib/x86_64-linux-gnu \
#     $R/usr/sbin/rsyslogd -M $R/usr/lib/x86_64-linux-gnu/rsyslog -f CONF -i PIDFILE -n
peers_dir=${INGESTBENCH_PEERS_DIR:-${HOME:-/root}/.cache/ingestbench-peers}
rsyslog_root=$peers_dir/rsyslog
if [ ! -x "$rsyslog_root/usr/sbin/rsyslogd" ]; then
  echo "unpacking rsyslog into $rsyslog_root"
  debs=$peers_dir/debs
  mkdir -p "$debs"
  rm -f "$debs"/*.deb
  apt_update
  # As root, apt downloads into a folder its _apt user cannot write: say so, to keep it quiet.
  apt_dl_opts=""
  [ "$(id -u)" -ne 0 ] || apt_dl_opts="-o APT::Sandbox::User=root"
  # rsyslogd and its TLS drivers, and the libraries they link that syslog-ng-core does not
  # bring: libestr, libfastjson, liblognorm (and its own dependency libfastjson).
  (cd "$debs" && apt-get download -qq $apt_dl_opts rsyslog rsyslog-gnutls rsyslog-openssl libestr0 libfastjson4 liblognorm5)
  rm -rf "$rsyslog_root.tmp"
  mkdir -p "$rsyslog_root.tmp"
  for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$rsyslog_root.tmp"
  done
  # Any other library rsyslogd or its modules need and this machine lacks: download and unpack.
  libpath=$rsyslog_root.tmp/usr/lib/x86_64-linux-gnu:$rsyslog_root.tmp/lib/x86_64-linux-gnu
  missing=$(for f in "$rsyslog_root.tmp/usr/sbin/rsyslogd" "$rsyslog_root.tmp"/usr/lib/x86_64-linux-gnu/rsyslog/*.so; do
      LD_LIBRARY_PATH=$libpath ldd "$f" 2>/dev/null | awk '/not found/ { print $1 }'
    done | sort -u)
  for lib in $missing; do
    # Debian names a shared library's package after its soname: libfoo.so.3 -> libfoo3,
    # libfoo1.so.2 -> libfoo1-2.
    base=${lib%%.so.*} ver=${lib##*.so.}
    ver=${ver%%.*}
    case $base in *[0-9]) pkg=$base-$ver ;; *) pkg=$base$ver ;; esac
    pkg=$(echo "$pkg" | tr '[:upper:]_' '[:lower:]-')
    if apt-cache show "$pkg" >/dev/null 2>&1; then
      echo "rsyslog needs $lib: unpacking $pkg"
      (cd "$debs" && apt-get download -qq $apt_dl_opts "$pkg")
      for deb in "$debs"/"$pkg"_*.deb; do dpkg -x "$deb" "$rsyslog_root.tmp"; done
    else
      echo "warning: rsyslog needs $lib and no package $pkg was found" >&2
    fi
  done
  rm -rf "$rsyslog_root"
  mv "$rsyslog_root.tmp" "$rsyslog_root"
fi

# rsyslog's RELP input (imrelp, from rsyslog-relp) and librelp, unpacked into the same tree:
# tests/relp_rsyslog.rs runs rsyslog as a RELP server. Checked apart from rsyslogd, so a tree
# unpacked before RELP was needed gets it too.
if [ ! -f "$rsyslog_root/usr/lib/x86_64-linux-gnu/rsyslog/imrelp.so" ]; then
  echo "unpacking rsyslog-relp and librelp0 into $rsyslog_root"
  debs=$peers_dir/debs-relp
  mkdir -p "$debs"
  rm -f "$debs"/*.deb
  apt_update
  apt_dl_opts=""
  [ "$(id -u)" -ne 0 ] || apt_dl_opts="-o APT::Sandbox::User=root"
  (cd "$debs" && apt-get download -qq $apt_dl_opts rsyslog-relp librelp0)
  for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$rsyslog_root"
  done
  libpath=$rsyslog_root/usr/lib/x86_64-linux-gnu:$rsyslog_root/lib/x86_64-linux-gnu
  missing=$(LD_LIBRARY_PATH=$libpath ldd "$rsyslog_root/usr/lib/x86_64-linux-gnu/rsyslog/imrelp.so" 2>/dev/null | awk '/not found/ { print $1 }')
  if [ -n "$missing" ]; then
    echo "warning: imrelp needs $missing, which this machine lacks" >&2
  fi
fi

# prometheus: a real Prometheus server scraping `/metrics` (tests/prometheus.rs), from Debian,
# and the Python `prometheus-client` package, whose text parser reads our exposition. The
# tests start their own Prometheus on 127.0.0.1 with a generated config and stop it by PID;
# the package's own service must not stay running.
if [ ! -x /usr/bin/prometheus ] && ! command -v prometheus >/dev/null 2>&1; then
  echo "installing prometheus"
  apt_install prometheus
  # If the package started the system Prometheus anyway, stop it by its pidfile only.
  for pidfile in /run/prometheus/prometheus.pid /run/prometheus.pid /var/run/prometheus.pid; do
    if [ -f "$pidfile" ]; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
    fi
  done
fi
pip_install prometheus_client prometheus-client
# HdrHistogram's Python port: its HistogramLogReader reads our observability.hdr_log
# (tests/hdr_log.rs through tests/support/hdr_log_read.py).
pip_install hdrh hdrhistogram
# end prometheus
# status page and control panel: a real browser for tests/status_page.rs, tests/live_run.rs and
# tests/panel_browser.rs. Debian's chromium and its chromedriver load the pages headless, and
# Python's selenium (PyPI) drives them through tests/support/status_browser.py and
# tests/browser/panel.py.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  echo "installing chromium and chromium-driver"
  apt_install chromium chromium-driver
fi
pip_install selenium selenium
# end of status page block
# examples/k8s: the manifests are checked against the Kubernetes schemas offline by PyPI's
# kubernetes-validate (tests/shards.rs).
pip_install kubernetes_validate kubernetes-validate
