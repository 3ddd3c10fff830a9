//! `ingestbench spawn` as a library: process-spawn load on an open-loop schedule, and what it
//! costs the processes that watch it (an EDR agent, auditd), measured against an idle baseline
//! of the same length. The job hillu/edr-loadgen does, with the schedule kept honest.
//!
//! Files: `plan.rs` (flag values → a checked `Plan`, and every refusal), `schedule.rs` (due
//! times, pure), `launch.rs` (`posix_spawn` prepared once), `reap.rs` (the reaper thread),
//! `spawner.rs` (the loop on its own thread), `report.rs` (the result as data, the verdict),
//! `text.rs` and `csv.rs` (its writers). Process watching is `crate::observe`'s; this module
//! reads no /proc file itself.
//!
//! One run: baseline (watch, spawn nothing) → load (watch while the spawner runs the
//! schedule) → children reaped (stragglers killed by PID) → `report::build`.

pub mod csv;
pub mod launch;
pub mod plan;
pub mod reap;
pub mod report;
pub mod schedule;
pub mod spawner;
pub mod text;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::observe::{ObserveError, Observed, WatchSpec, Watcher};

pub use plan::Plan;
pub use report::SpawnReport;

/// How often the watched processes are sampled.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);
/// How long children may take to exit after the last spawn before they are killed.
pub const REAP_GRACE: Duration = Duration::from_secs(2);

/// Why a run could not start or finish. `Invalid` is the user's (exit 2), the rest the
/// machine's (exit 6).
#[derive(Debug)]
pub enum SpawnError {
    Invalid(String),
    Setup(String),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::Invalid(m) | SpawnError::Setup(m) => f.write_str(m),
        }
    }
}

impl From<ObserveError> for SpawnError {
    fn from(e: ObserveError) -> SpawnError {
        match e {
            ObserveError::NoSuchPid(_) => SpawnError::Invalid(e.to_string()),
            _ => SpawnError::Setup(e.to_string()),
        }
    }
}

/// What the load phase produced, before it becomes a report.
pub struct Load {
    pub spawned: spawner::Spawned,
    pub reaped: reap::Reaped,
    pub observed: Observed,
    /// The load phase's wall time: the duration, or longer when the spawner ran late.
    pub window: Duration,
}

/// Runs the plan: the baseline, then the load. `progress` gets one line per phase; `stop`
/// (set by SIGINT/SIGTERM) ends the current phase early.
pub fn run(
    plan: &Plan,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<SpawnReport, SpawnError> {
    let launcher = launch::Launcher::new(&plan.payload).map_err(|e| match e {
        launch::LaunchError::Nul(_) => SpawnError::Invalid(e.to_string()),
        _ => SpawnError::Setup(e.to_string()),
    })?;
    let baseline = match plan.baseline {
        Some(d) => {
            progress(&format!(
                "baseline: {:.1} s without spawning",
                d.as_secs_f64()
            ));
            Some(watch_idle(&plan.watch, d, stop)?)
        }
        None => None,
    };
    progress(&format!(
        "load: {} spawns due over {:.1} s",
        plan.schedule.count,
        plan.duration.as_secs_f64()
    ));
    let load = run_load(plan, &launcher, stop)?;
    Ok(report::build(
        plan,
        baseline,
        load,
        stop.load(Ordering::Relaxed),
    ))
}

/// Watches for `length` with nothing spawned.
fn watch_idle(
    spec: &WatchSpec,
    length: Duration,
    stop: &AtomicBool,
) -> Result<Observed, SpawnError> {
    let watcher = Watcher::start(spec.clone(), SAMPLE_INTERVAL)?;
    let t0 = spawner::now_ns();
    sleep_until(t0 + length.as_nanos() as u64, stop);
    Ok(watcher.finish())
}

/// Watches while the spawner runs the schedule on its own thread, then reaps.
fn run_load(
    plan: &Plan,
    launcher: &launch::Launcher,
    stop: &AtomicBool,
) -> Result<Load, SpawnError> {
    let reaper = reap::Reaper::start().map_err(|e| SpawnError::Setup(format!("reaper: {e}")))?;
    let watcher = Watcher::start(plan.watch.clone(), SAMPLE_INTERVAL)?;
    let t0 = spawner::now_ns();
    let limits = spawner::Limits {
        max_in_flight: plan.max_in_flight,
        deadline: plan.deadline(),
    };
    let spawned = spawner::run(&plan.schedule, launcher, &reaper, stop, limits, t0)
        .map_err(|e| SpawnError::Setup(format!("spawner threads: {e}")))?;
    // The window is the duration asked for, or longer when the spawner ran late.
    sleep_until(t0 + plan.duration.as_nanos() as u64, stop);
    let observed = watcher.finish();
    let window = Duration::from_nanos(spawner::now_ns().saturating_sub(t0));
    let reaped = reaper.finish(REAP_GRACE);
    Ok(Load {
        spawned,
        reaped,
        observed,
        window,
    })
}

/// Sleeps until the monotonic clock reads `at_ns`, in short naps so a stop is seen.
fn sleep_until(at_ns: u64, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let now = spawner::now_ns();
        if now >= at_ns {
            return;
        }
        std::thread::sleep(Duration::from_nanos((at_ns - now).min(50_000_000)));
    }
}
