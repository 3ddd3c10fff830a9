//! `ingestbench spawn` side by side with the seed tool, hillu/edr-loadgen, built from its
//! source by `../shared/peers/edr-loadgen/build.sh` (Debian's `golang-go`, which
//! scripts/install-test-deps.sh installs) into the test's temp dir. Both run the same command
//! (/bin/true), delay (5 ms) and duration (3 s) watching the same process, one with a known
//! duty cycle (30 ms of CPU in every 100 ms: `support/duty_cycle.py`).
//!
//! - Spawn counts agree within 2 %. edr-loadgen's ticker drops ticks when its goroutines are
//!   behind (we have seen 574 of 600 on this shared 2-core machine), ours never skips a due
//!   spawn; so each attempt runs both, and the test passes on the first of at most three
//!   attempts in which the two agree — a busy moment is the peer's shortfall, not a
//!   disagreement in what is counted.
//! - The watched CPU agrees within 2 % plus two clock ticks. Both tools read utime+stime from
//!   /proc/PID/stat, in whole ticks (CLK_TCK = 100: 10 ms), at the start and the end of their
//!   window, so each figure is off by up to a tick either way and two separate runs by up to
//!   2 ticks: measured 0.89 s against 0.91 s for the same 0.90 s of CPU (2.2 %), which is
//!   quantisation, not a difference in method. 2 % + 0.02 s is the honest bound for 3 s.
//!
//! A missing Go toolchain fails in CI and is skipped loudly elsewhere (`peers::require`).

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::peers::require;
use support::{DutyCycle, all, bin};

const ATTEMPTS: usize = 3;
/// Two clock ticks of /proc/PID/stat, in seconds (CLK_TCK is 100 on Linux).
const TWO_TICKS_S: f64 = 0.02;

fn go_toolchain() -> Option<()> {
    Command::new("go")
        .arg("version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| ())
}

/// Builds edr-loadgen into `dir`; `None` (loud skip, or a failure in CI) without Go.
fn build_peer(dir: &Path) -> Option<PathBuf> {
    require("go (Debian golang-go) to build edr-loadgen", go_toolchain())?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/edr-loadgen/build.sh");
    let found = script.exists().then_some(());
    require("../shared/peers/edr-loadgen/build.sh", found)?;
    let out = dir.join("edr-loadgen");
    let o = Command::new(&script).arg(&out).output().unwrap();
    assert!(o.status.success(), "build.sh failed:\n{}", all(&o));
    Some(out)
}

/// What edr-loadgen logged: events generated, and the watched PID's user+sys seconds.
fn run_peer(peer: &Path, pid: u32) -> (u64, f64, String) {
    let o = Command::new(peer)
        .args(["-command", "/bin/true", "-delay", ".005", "-duration", "3"])
        .arg(pid.to_string())
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "edr-loadgen failed:\n{log}");
    let events = log
        .lines()
        .find_map(|l| l.strip_suffix(" events generated."))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no event count in\n{log}"));
    // "PID p[cmdline]: u+s = t seconds / …"
    let seconds = log
        .lines()
        .find(|l| l.contains(&format!("PID {pid}[")))
        .and_then(|l| l.split(" = ").nth(1))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no CPU line for PID {pid} in\n{log}"));
    (events, seconds, log)
}

/// Ours with the same flags: started and the PID's user+sys seconds.
fn run_ours(pid: u32) -> (u64, f64, Value) {
    let o = bin()
        .args([
            "spawn",
            "--command",
            "/bin/true",
            "--delay",
            "5ms",
            "--duration",
            "3s",
        ])
        .args([
            "--no-baseline",
            "--output",
            "json",
            "--pid",
            &pid.to_string(),
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", all(&o)));
    // 0, or 6 when this machine made spawns late: the counts are what is compared here.
    assert!(matches!(o.status.code(), Some(0 | 6)), "{}", all(&o));
    let started = v["spawns"]["started"].as_u64().unwrap();
    let p = &v["processes"][0];
    assert_eq!(p["pid"].as_u64(), Some(pid as u64), "{v:#}");
    let seconds = p["load"]["sum_s"].as_f64().unwrap();
    (started, seconds, v)
}

#[test]
fn spawn_counts_and_watched_cpu_agree_with_edr_loadgen() {
    let dir = tempfile::tempdir().unwrap();
    let Some(peer) = build_peer(dir.path()) else {
        return;
    };
    let duty = DutyCycle::start(30, 60);
    let mut seen = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let (their_n, their_s, log) = run_peer(&peer, duty.pid());
        let (our_n, our_s, v) = run_ours(duty.pid());
        // Ours never skips a due spawn: all 600 start, whatever the machine does.
        assert!((599..=601).contains(&our_n), "ours started {our_n}: {v:#}");
        let counts_ok = (our_n as f64 - their_n as f64).abs() <= 0.02 * our_n as f64;
        let cpu_ok = (our_s - their_s).abs() <= 0.02 * their_s + TWO_TICKS_S;
        assert!(
            (0.8..=1.0).contains(&our_s),
            "ours measured {our_s} s of a 0.9 s duty cycle"
        );
        eprintln!(
            "attempt {attempt}: spawns edr-loadgen {their_n} / ours {our_n}; CPU edr-loadgen {their_s:.2} s / ours {our_s:.2} s"
        );
        if counts_ok && cpu_ok {
            return;
        }
        seen.push(format!(
            "{their_n}/{our_n} spawns, {their_s:.2}/{our_s:.2} s\n{log}"
        ));
    }
    panic!("no attempt agreed within the bounds:\n{}", seen.join("\n"));
}
