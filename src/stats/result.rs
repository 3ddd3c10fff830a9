//! What a finished run measured, as plain data below both the engine that fills it and the
//! report that reads it: totals, both latency histograms, one row per second, why the run
//! stopped early (if it did), what the schedule asked for, and the control actions taken.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::stats::snapshot::{ControlMark, Latency};
use crate::stats::{AgentAccount, Counters};

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    Auth(String),
    Unreachable(String),
    /// The TLS handshake failed: the certificate problem, named.
    Tls(String),
    /// Ctrl-C or SIGTERM: the run stopped early but still reports what it did.
    Interrupted,
    /// Stopped through its control handle (status page, panel, library caller).
    Stopped,
    Io(String),
    /// A worker thread failed (panicked): the run ends with what was measured until then.
    WorkerFailed(String),
}

impl AbortReason {
    /// Whether the run was stopped on purpose (a signal, control) rather than by a failure.
    pub fn is_stop(&self) -> bool {
        matches!(self, AbortReason::Interrupted | AbortReason::Stopped)
    }
}

impl std::fmt::Display for AbortReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AbortReason::Auth(m) => write!(f, "authentication failed: {m}"),
            AbortReason::Unreachable(m) => write!(f, "target unreachable: {m}"),
            AbortReason::Tls(m) => write!(f, "TLS handshake failed: {m}"),
            AbortReason::Interrupted => {
                f.write_str("interrupted (SIGINT or SIGTERM); the report covers the run until then")
            }
            AbortReason::Stopped => {
                f.write_str("stopped by control; the report covers the run until then")
            }
            AbortReason::Io(m) => write!(f, "I/O error: {m}"),
            AbortReason::WorkerFailed(m) => write!(f, "worker failed: {m}"),
        }
    }
}

/// One second's counts, all workers merged: what the timeline and the live view need, and
/// no more (a whole `Counters` is 5 KB; a 12-hour soak keeps 43,200 of these).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SecondCounts {
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    pub batches_sent: u64,
    pub batches_accepted: u64,
    pub batches_failed: u64,
    pub batches_retried: u64,
    pub bytes_sent: u64,
    /// Failed batches and transport errors (connects, resets, timeouts, protocol errors).
    pub errors: u64,
    /// Reconnects, and answers that refused for now (429, 503).
    pub reconnects: u64,
    pub refused: u64,
    /// Gauges at the end of the second: the worst lag, the backlog, connections open.
    pub lag_ns_max: u64,
    pub backlog_events: u64,
    pub connections_open: u64,
}

impl SecondCounts {
    /// Adds the same second of another part of the run (shards): counts and gauges summed,
    /// the worst lag kept (as `Counters::add` does).
    pub fn add(&mut self, o: &SecondCounts) {
        self.events_sent += o.events_sent;
        self.events_accepted += o.events_accepted;
        self.events_failed += o.events_failed;
        self.batches_sent += o.batches_sent;
        self.batches_accepted += o.batches_accepted;
        self.batches_failed += o.batches_failed;
        self.batches_retried += o.batches_retried;
        self.bytes_sent += o.bytes_sent;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
        self.refused += o.refused;
        self.lag_ns_max = self.lag_ns_max.max(o.lag_ns_max);
        self.backlog_events += o.backlog_events;
        self.connections_open += o.connections_open;
    }

    pub fn of(c: &Counters) -> SecondCounts {
        SecondCounts {
            events_sent: c.events_sent,
            events_accepted: c.events_accepted,
            events_failed: c.events_failed,
            batches_sent: c.batches_sent,
            batches_accepted: c.batches_accepted,
            batches_failed: c.batches_failed,
            batches_retried: c.batches_retried,
            bytes_sent: c.bytes_sent,
            errors: c.batches_failed + c.connection_errors(),
            reconnects: c.reconnects,
            refused: c.refusals(),
            lag_ns_max: c.lag_ns_max,
            backlog_events: c.backlog_events,
            connections_open: c.connections_open,
        }
    }
}

/// One second of the run, all workers merged.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Second {
    pub t: u32,
    pub counts: SecondCounts,
    /// Events the schedule asked for in this second.
    pub target_eps: f64,
    /// Percentiles of the batches answered in this second.
    pub latency: Latency,
}

/// What a run measured.
pub struct RunResult {
    /// Wall time from the start to the last worker stopping.
    pub duration: Duration,
    pub threads: usize,
    pub connections: usize,
    /// What was measured: the batches scheduled after the warm-up (and what happened after
    /// it), whenever they were answered.
    pub totals: Counters,
    /// The whole run's counts, the warm-up's batches included (what a store that counts
    /// everything it received is held against).
    pub all_totals: Counters,
    /// Accepted events whose answers came in the window (after the warm-up, before the
    /// drain), whichever second their batch was due in: the target's completion rate.
    pub answered_in_window: u64,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub seconds: Vec<Second>,
    pub abort: Option<AbortReason>,
    /// Events the schedule asked for in its window (target): up to where the schedule ended,
    /// or to the stop when the run was stopped or interrupted.
    pub target_events: f64,
    /// The window's length in schedule time (paused time left out): the target's and the
    /// achieved rate's denominator.
    pub window: Duration,
    /// From the end of the window to the last worker stopping: answers in flight waited for.
    pub drain: Duration,
    /// The warm-up at the start of the run, kept in `seconds` and out of everything else.
    pub warmup: Duration,
    /// Time spent paused by control.
    pub paused: Duration,
    /// Control actions, in the order taken.
    pub control: Vec<ControlMark>,
    /// Per agent (worker): the seqs its events carried and which were given up.
    pub agents: Vec<AgentAccount>,
    /// The scenario lane's own measurements (`run --scenario`), apart from the background's.
    pub scenario: Option<LaneResult>,
    /// A plain HTTP load's request phases (the whole run, warm-up included).
    pub phases: Option<crate::stats::phases::Phases>,
    /// A mix's figures by source, in the config's order (the whole run, warm-up included).
    pub sources: Option<crate::stats::parts::Parts>,
    /// Several targets: the figures by target, in the config's order (the whole run).
    pub targets: Option<crate::stats::parts::Parts>,
    /// `_bulk`: the first item errors met (`STATUS TYPE: REASON`), a few of each worker's.
    pub item_errors: Vec<String>,
}

/// What the scenario lane did: its stage events, counted apart from the background load.
#[derive(Clone, Debug)]
pub struct LaneResult {
    /// Stage events in the scenario (its whole schedule).
    pub events: u64,
    pub totals: Counters,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    /// Its accounting agent, with the seqs its events carried.
    pub account: Option<AgentAccount>,
}
