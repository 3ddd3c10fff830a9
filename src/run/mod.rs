//! A run as a library call, shared by every command that loads a target (`run` today; the
//! panel, `probe`, the ceiling search, `http` and shards next). `plan` turns config +
//! overrides into a `RunPlan` (typed `SetupError`s); `Run::new(plan)` gives the run's
//! `Control` and its `SnapshotCell` before anything starts (so a status page can bind first);
//! `Run::start(observers)` starts the built-in sink when the url is `builtin`, then the engine
//! on a coordinator thread, and returns a `RunHandle` at once; `RunHandle::wait` gives the
//! `RunOutcome`: the report (verified against the sink where it is the target and against the
//! config's `verify` stores, written to `observability.report`) and the exit code, chosen here
//! once. Nothing here prints or reads
//! argv.
//!
//! ```text
//! let plan = run::plan(config, &overrides, &catalog, &store)?;
//! let run = Run::new(plan);
//! let (control, snapshots) = (run.control(), run.snapshots());
//! let handle = run.start(observers)?;          // threads started; returns at once
//! control.pause()?; control.set_rate(Rate::Factor(2.0))?; control.stop()?;
//! let outcome = handle.wait();                  // report, exit code, reasons
//! ```

pub mod ceiling;
pub mod error;
mod execute;
pub mod fault;
pub mod http;
pub(crate) mod outputs;
pub mod plan;
pub mod rate;
pub mod shard;
pub mod source;
mod store_verify;
pub mod target;

use std::sync::Arc;

use crossbeam_channel::Receiver;

use crate::engine::schedule::ScheduleCell;
pub use crate::engine::schedule::{Control, ControlError, Rate};
use crate::exit::Exit;
use crate::report::Report;
use crate::stats::snapshot::RunInfo;
pub use crate::stats::snapshot::{Snapshot, SnapshotCell};
pub use error::SetupError;
pub use execute::verdict;
pub use plan::{
    LoadedConfig, Overrides, RunPlan, ServePlan, StatusPlan, VerifyPlan, load_config,
    load_config_adjusted, load_generated, load_text, plan,
};

/// Something that watches a run: called with every snapshot (each second, on demand, and the
/// last one when the run has finished), on the run's coordinator thread, never on a worker.
/// It should return quickly; slow work belongs on its own thread reading the `SnapshotCell`.
pub trait Observer: Send {
    fn on_snapshot(&mut self, s: &Snapshot);
}

/// What a finished run comes to.
pub struct RunOutcome {
    pub report: Report,
    /// The exit code, by gravity: 4 auth, 6 aborted (or a `verify` store unreachable), 2 a
    /// `verify` spec unusable after the run, 5 lost/duplicated, 3 SLO, else 0.
    pub exit: Exit,
    /// Why the exit code is not 0, one line each.
    pub reasons: Vec<String>,
    /// Things that went wrong around the run without changing its verdict.
    pub notes: Vec<String>,
    /// Output files that could not be written (their paths; the run failed for it, exit 6):
    /// the CLI prints the JSON report on stdout instead.
    pub unwritten: Vec<String>,
}

/// A run planned and not started: its control and live view already exist.
pub struct Run {
    plan: RunPlan,
    cell: Arc<ScheduleCell>,
    snapshots: Arc<SnapshotCell>,
    control: Control,
    poke: Receiver<()>,
}

impl Run {
    pub fn new(plan: RunPlan) -> Run {
        let cell = ScheduleCell::new(plan.profile.clone());
        let (tx, poke) = crossbeam_channel::bounded(1);
        let snapshots = SnapshotCell::new(Snapshot::empty(execute::run_info(&plan, None)));
        Run {
            control: Control::new(cell.clone(), tx),
            cell,
            snapshots,
            poke,
            plan,
        }
    }

    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }

    pub fn control(&self) -> Control {
        self.control.clone()
    }

    pub fn snapshots(&self) -> Arc<SnapshotCell> {
        self.snapshots.clone()
    }

    /// Starts the run (the built-in sink first, when it is the target) and returns at once.
    pub fn start(self, observers: Vec<Box<dyn Observer>>) -> Result<RunHandle, SetupError> {
        let (control, snapshots) = (self.control.clone(), self.snapshots.clone());
        let handle_control = control.clone();
        let started = execute::prepare(self.plan)?;
        let info: RunInfo = started.info.clone();
        snapshots.publish(Arc::new(Snapshot::empty(info)));
        let steer = crate::engine::Steering {
            cell: self.cell,
            poke: self.poke,
        };
        let cell = snapshots.clone();
        let thread = std::thread::Builder::new()
            .name("ingestbench-coordinator".into())
            .spawn(move || execute::execute(started, steer, control, cell, observers))
            .map_err(|e| SetupError::Io(format!("cannot start the coordinator thread: {e}")))?;
        Ok(RunHandle {
            control: handle_control,
            snapshots,
            thread,
        })
    }
}

/// A started run.
pub struct RunHandle {
    control: Control,
    snapshots: Arc<SnapshotCell>,
    thread: std::thread::JoinHandle<RunOutcome>,
}

impl RunHandle {
    pub fn control(&self) -> Control {
        self.control.clone()
    }

    pub fn snapshots(&self) -> Arc<SnapshotCell> {
        self.snapshots.clone()
    }

    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the run to end and gives what it came to (an error only if the run's
    /// coordinator thread died, which is a bug).
    pub fn wait(self) -> Result<RunOutcome, SetupError> {
        self.thread
            .join()
            .map_err(|_| SetupError::Io("the run's coordinator thread panicked".into()))
    }
}
