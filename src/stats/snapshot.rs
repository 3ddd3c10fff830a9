//! The live view of a run: a `Snapshot` the coordinator publishes every second (and on
//! demand) while the run goes on, and once more when it has ended. Plain data in the JSON
//! report's vocabulary (`events_sent`, `latency_ms`, `_eps`, `_s`); observers (the terminal
//! line, the status page, Prometheus, the panel, the ceiling search) read it, workers never see
//! it. `SnapshotCell` holds the latest one for readers on any thread.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

pub const STATUS_SCHEMA: &str = "ingestbench.status/1";

/// Where the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Sending on schedule.
    Running,
    /// Paused by control: no events are due.
    Paused,
    /// The schedule has ended (or the run was stopped): waiting for answers in flight.
    Draining,
    /// Every worker has stopped; this is the last snapshot.
    Finished,
}

/// What the run is, fixed for its whole length.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunInfo {
    pub run_id: String,
    pub name: Option<String>,
    pub adapter: String,
    pub url: String,
    pub address: String,
    pub source: String,
    pub threads: usize,
    pub connections: usize,
    /// `stop.after` in seconds of schedule (paused time not counted), when the run stops by
    /// time.
    pub duration_s: Option<f64>,
    /// `stop.total_events`, when the run stops by count.
    pub total_events: Option<u64>,
}

/// Percentiles of one latency clock, in milliseconds; zeros when `count` is 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

/// Intended (from the schedule) and service (from the write) latency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub intended: LatencySummary,
    pub service: LatencySummary,
}

/// Counts over a stretch of the run: the last second (`interval`) or the whole run so far
/// (`cumulative`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Window {
    /// Length of the stretch, seconds (schedule time for `cumulative`: paused time is left out).
    pub seconds: f64,
    /// Events the schedule asked for in it, per second.
    pub target_eps: f64,
    /// Events accepted in it, per second.
    pub achieved_eps: f64,
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    pub batches_sent: u64,
    pub batches_accepted: u64,
    pub batches_failed: u64,
    pub batches_retried: u64,
    pub bytes_sent: u64,
    pub latency_ms: Latency,
}

/// Latency as a Prometheus histogram: cumulative counts of batches with latency ≤ each bound.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Buckets {
    /// `(le_s, count)` in increasing `le_s`; the last bound is `+Inf` (`f64::INFINITY`, in
    /// JSON the string `"+Inf"`) and its count equals `count`.
    #[serde(serialize_with = "bounds")]
    pub le_s: Vec<(f64, u64)>,
    pub sum_s: f64,
    pub count: u64,
}

/// `[[0.001, 3], …, ["+Inf", 9]]`: JSON has no infinity.
fn bounds<S: serde::Serializer>(v: &[(f64, u64)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for &(le, n) in v {
        if le.is_finite() {
            seq.serialize_element(&(le, n))?;
        } else {
            seq.serialize_element(&("+Inf", n))?;
        }
    }
    seq.end()
}

/// A control action taken during the run, in the order taken.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct ControlMark {
    /// Seconds since the start of the run (wall time).
    pub t_s: f64,
    /// `stop`, `pause`, `resume` or `rate`.
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub action: &'static str,
    /// For `rate`: the rate in force afterwards (eps at that instant).
    pub rate_eps: Option<f64>,
    /// For `rate`: what was asked (`eps` or `factor` and its value), for humans.
    pub detail: Option<String>,
}

/// What the built-in sink says it stored of this run so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    pub store: String,
    pub events_received: u64,
    pub distinct: u64,
    pub duplicates: u64,
    /// Accepted so far but not (yet) found in the store; settles at the end.
    pub lost_events: u64,
    /// Send → receive lag of the events that carried their send time (realtime runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingest_lag_ms: Option<crate::sink::LagSummary>,
}

/// What the watched processes used in the last interval (`observability.watch`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WatchedNow {
    /// Summed over the watched processes and cgroups (not ingestbench).
    pub cpu_cores: f64,
    pub rss_bytes: u64,
    /// CPU seconds used since the start, summed.
    pub cpu_s: f64,
    pub processes: Vec<WatchedProcess>,
    /// ingestbench itself.
    pub own: Option<WatchedProcess>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WatchedProcess {
    pub pid: u32,
    pub name: String,
    pub cpu_cores: f64,
    pub cpu_s: f64,
    pub rss_bytes: u64,
    pub alive: bool,
}

/// One second of the recent history kept for charts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Point {
    pub t: u32,
    pub target_eps: f64,
    pub achieved_eps: f64,
    pub p99_ms: f64,
    pub service_p99_ms: f64,
    pub errors: u64,
}

/// Seconds of history a snapshot carries (10 minutes).
pub const HISTORY_SECONDS: usize = 600;

/// The live view of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    pub schema: &'static str,
    /// Counts up by one for every snapshot of the run.
    pub seq: u64,
    pub run: RunInfo,
    pub state: RunState,
    /// Wall seconds since the start.
    pub elapsed_s: f64,
    /// Seconds of schedule left (stop by time), or null.
    pub remaining_s: Option<f64>,
    /// Seconds spent paused so far.
    pub paused_s: f64,
    /// The rate the schedule asks for now, events per second.
    pub rate_eps: f64,
    /// Events the schedule asked for up to now.
    pub events_due: u64,
    /// The last complete second.
    pub interval: Window,
    /// The whole run so far.
    pub cumulative: Window,
    /// Counters of problems by kind since the start: `connect`, `reset`, `timeout`,
    /// `protocol`, `auth`, `oversize`, `retries_exhausted` (batches), `ack_poll` (failed HEC
    /// ack polls), `unreadable_2xx` (batches answered 2xx, unreadable), `status_<code>` for
    /// answers other than 2xx,
    /// `hec_code_<n>` for HEC codes other than 0.
    pub errors: BTreeMap<String, u64>,
    /// Answers by HTTP status since the start.
    pub status: BTreeMap<String, u64>,
    pub auth_failures: u64,
    pub connect_errors: u64,
    pub connection_resets: u64,
    pub timeouts: u64,
    pub protocol_errors: u64,
    pub reconnects: u64,
    /// RELP: messages written again after a broken connection, since the start.
    pub events_resent: u64,
    /// Elasticsearch `_bulk`: `create` items answered 409, stored by an earlier attempt.
    pub events_already_stored: u64,
    pub batches_acked: u64,
    pub acks_pending: u64,
    /// Events and batches answered 2xx in words the engine cannot read (never resent,
    /// counted failed), since the start.
    pub events_unreadable_2xx: u64,
    pub batches_unreadable_2xx: u64,
    pub oversize_events: u64,
    /// Syslog over TCP, TLS or UDP: events written and never confirmed since the start, by
    /// cause (`stats::UNCONFIRMED_CAUSES`, the non-zero ones), and the bytes the kernel still
    /// held unsent when connections ended.
    pub events_unconfirmed: u64,
    pub events_unconfirmed_by: BTreeMap<String, u64>,
    pub bytes_unsent_at_close: u64,
    /// How late batches left compared with their schedule: the worst in the last second and
    /// since the start, ms.
    pub lag_ms_max: f64,
    pub lag_ms_max_cumulative: f64,
    /// Events due and not yet sent, at the end of the last second.
    pub backlog_events: u64,
    pub connections_open: u64,
    /// Latency histograms since the start, for `/metrics`.
    pub intended_buckets: Buckets,
    pub service_buckets: Buckets,
    /// What the built-in sink stored, when it is the target.
    pub stored: Option<Stored>,
    /// The watched processes and cgroups in the last interval, when any are watched.
    pub watched: Option<WatchedNow>,
    /// The scenario lane's stage events so far (`run --scenario`), apart from the counts above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<ScenarioNow>,
    pub control: Vec<ControlMark>,
    /// Up to `HISTORY_SECONDS` of the most recent complete seconds, oldest first.
    pub history: Vec<Point>,
    /// Why the run stopped early, once it has.
    pub aborted: Option<String>,
}

/// A scenario lane's progress: its stage events in all, and so far sent, accepted and failed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ScenarioNow {
    pub events: u64,
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
}

impl Snapshot {
    /// The snapshot of a run that has not reported yet.
    pub fn empty(run: RunInfo) -> Snapshot {
        Snapshot {
            schema: STATUS_SCHEMA,
            seq: 0,
            run,
            state: RunState::Running,
            elapsed_s: 0.0,
            remaining_s: None,
            paused_s: 0.0,
            rate_eps: 0.0,
            events_due: 0,
            interval: Window::default(),
            cumulative: Window::default(),
            errors: BTreeMap::new(),
            status: BTreeMap::new(),
            auth_failures: 0,
            connect_errors: 0,
            connection_resets: 0,
            timeouts: 0,
            protocol_errors: 0,
            reconnects: 0,
            events_resent: 0,
            events_already_stored: 0,
            batches_acked: 0,
            acks_pending: 0,
            events_unreadable_2xx: 0,
            batches_unreadable_2xx: 0,
            oversize_events: 0,
            events_unconfirmed: 0,
            events_unconfirmed_by: BTreeMap::new(),
            bytes_unsent_at_close: 0,
            lag_ms_max: 0.0,
            lag_ms_max_cumulative: 0.0,
            backlog_events: 0,
            connections_open: 0,
            intended_buckets: Buckets::default(),
            service_buckets: Buckets::default(),
            stored: None,
            watched: None,
            scenario: None,
            control: Vec::new(),
            history: Vec::new(),
            aborted: None,
        }
    }
}

/// The latest snapshot, shared with readers on other threads. Replacing it swaps an `Arc`
/// under a mutex held for a pointer copy; readers keep the one they took as long as they like.
pub struct SnapshotCell {
    latest: Mutex<Arc<Snapshot>>,
}

impl SnapshotCell {
    pub fn new(first: Snapshot) -> Arc<SnapshotCell> {
        Arc::new(SnapshotCell {
            latest: Mutex::new(Arc::new(first)),
        })
    }

    pub fn latest(&self) -> Arc<Snapshot> {
        match self.latest.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    pub fn publish(&self, s: Arc<Snapshot>) {
        match self.latest.lock() {
            Ok(mut g) => *g = s,
            Err(p) => *p.into_inner() = s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_infinite_bound_is_a_string_in_json() {
        let b = Buckets {
            le_s: vec![(0.5, 1), (f64::INFINITY, 2)],
            sum_s: 0.7,
            count: 2,
        };
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(v["le_s"], serde_json::json!([[0.5, 1], ["+Inf", 2]]));
    }
}
