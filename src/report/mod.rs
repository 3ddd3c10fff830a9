//! The run report: plain data built once from a `RunResult`, the facts the engine does not
//! know (`Context`: run id, host, target, config, SLOs) and (when the target can tell) what
//! the store received; then small writers, one per format (`text`, JSON via serde, `csv` of
//! the timeline, `hdr_log` for HdrHistogram's interval log). The JSON schema is versioned
//! (`REPORT_SCHEMA`) and documented in docs/report.md; it carries both latency histograms
//! whole (`hdr`), so saved reports merge exactly. Nothing here reads clocks or the environment.

pub mod ceiling;
pub mod compare;
pub mod csv;
pub mod de;
pub mod faults;
pub mod hdr;
pub mod hdr_log;
pub mod http;
pub mod loss;
pub mod merge;
pub mod rate;
pub mod scenario;
pub mod sizing;
pub mod slo;
pub mod sources;
pub mod targets;
pub mod text;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use std::time::Duration;

use crate::stats::Counters;
use crate::stats::result::{AbortReason, RunResult};
use crate::stats::snapshot::ControlMark;
/// What the store says it received for this run, beside what the run says was accepted (the
/// same figures a snapshot carries as `stored`).
pub use crate::stats::snapshot::Stored as Verification;

pub const REPORT_SCHEMA: &str = "ingestbench.report/2";

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Report {
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub schema: &'static str,
    pub tool: Tool,
    pub run_id: String,
    pub name: Option<String>,
    pub host: String,
    pub started_at: String,
    pub ended_at: String,
    pub duration_s: f64,
    pub target: TargetInfo,
    pub threads: usize,
    /// Why `threads` is not what `--threads` asked (no more threads than connections), or
    /// how the threads sit on the cores when they outnumber them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_note: Option<String>,
    pub connections: usize,
    pub batch_max_events: usize,
    pub batch_max_bytes: usize,
    pub summary: Summary,
    /// A run asked for as a data rate (`workload.rate`): the rate asked in both units and
    /// the mean event size that converted it. Absent for a run asked for in events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_rate: Option<rate::DataRate>,
    pub latency_ms: Latencies,
    pub latency_histogram: Vec<Bucket>,
    /// Both latency histograms whole (HdrHistogram V2 + DEFLATE, base64): decode with
    /// `hdr::decode` and add to merge runs exactly.
    pub latency_hdr: LatencyHdr,
    pub status: BTreeMap<String, u64>,
    pub hec_codes: BTreeMap<String, u64>,
    pub timeline: Vec<SecondRow>,
    /// Control actions taken during the run (stop, pause, resume, rate), in order.
    pub control: Vec<ControlMark>,
    /// Time the run spent paused by control, seconds (not part of the schedule).
    pub paused_s: f64,
    pub verification: Option<Verification>,
    /// Which sequence numbers each agent's events carried and which were given up: what a
    /// store should hold (`ingestbench verify`). Absent when the events carry no tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting: Option<Accounting>,
    /// What the stores named in the config's `verify.sources` hold of this run, asked once it
    /// had ended. Absent without `verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_verification: Option<StoreVerification>,
    /// Every event of the schedule's window in exactly one stage: not sent, refused, accepted
    /// (stored or not, where a store said).
    pub loss: loss::Loss,
    /// What the watched processes and cgroups used (`observability.watch`, `--watch`, a
    /// launched `observability.target`), and ingestbench itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watched: Option<Watched>,
    /// The ceiling search's steps and result, when the report is one's (`find_ceiling`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<ceiling::Ceiling>,
    /// The fault timeline as carried out, each fault's effect and recovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<faults::Faults>,
    /// The sizing table: one row per step of a `steps` run (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizing: Vec<sizing::SizingRow>,
    /// The attack scenario played beside the load (`run --scenario`): its stage events
    /// counted apart, and its ground truth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<scenario::ScenarioReport>,
    /// A plain HTTP load's requests phase by phase (`adapter: http`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<http::HttpReport>,
    /// A mix of sources, source by source (`source:` as a list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_source: Vec<sources::SourceRow>,
    /// Several targets, target by target (`target.url` as a list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_target: Vec<targets::TargetRow>,
    pub slo: Vec<slo::SloResult>,
    pub aborted: Option<String>,
    /// This process was one shard of the run (`run --shard`): what `report merge` reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<merge::ShardSection>,
    /// This report is the merge of a run's shard reports: which, and what stayed theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<merge::Merged>,
    /// The run's outcome: pass or fail, the exit code, and why.
    pub verdict: Verdict,
    /// The config as read, defaults applied. Holds where tokens are, never a token.
    pub config: serde_json::Value,
}

/// What a store should hold of this run: per agent, seqs `0 .. events_sent` less the
/// `failed` ranges (`[from, to)`), whose events were given up.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Accounting {
    pub run_id: String,
    pub agents: Vec<AgentAccounting>,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct AgentAccounting {
    pub agent: u32,
    pub events_sent: u64,
    pub failed: Vec<(u64, u64)>,
    /// More ranges failed than were kept: `failed` is incomplete, the expected set inexact.
    pub failed_overflow: bool,
}

/// The config's `verify`, carried out after the run: the stores asked, and either their
/// answer (`result`, the same object `ingestbench verify --output json` prints) or why there
/// is none (`error`).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct StoreVerification {
    /// `verify.sources`, in order.
    pub sources: Vec<String>,
    pub settle_timeout_s: f64,
    pub status: StoreStatus,
    pub error: Option<String>,
    #[serde(deserialize_with = "crate::report::de::owned")]
    pub result: Option<crate::verify::Verification>,
}

/// How the config's `verify` went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreStatus {
    /// Every store answered: `result`.
    Verified,
    /// A store could not be reached or read (exit 6).
    Unreachable,
    /// A spec that could not be used once the run was over (exit 2).
    Invalid,
    /// A store refused the credentials (exit 4).
    AuthFailed,
    /// The run aborted first: nothing was asked.
    NotAsked,
}

impl StoreStatus {
    pub fn name(self) -> &'static str {
        match self {
            StoreStatus::Verified => "verified",
            StoreStatus::AuthFailed => "auth_failed",
            StoreStatus::Unreachable => "unreachable",
            StoreStatus::Invalid => "invalid",
            StoreStatus::NotAsked => "not asked",
        }
    }
}

/// The watched processes over the run: per process and cgroup, summed, and ingestbench's own.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Watched {
    pub processes: Vec<crate::observe::ProcSummary>,
    pub cgroups: Vec<crate::observe::CgroupSummary>,
    pub total: crate::observe::TotalSummary,
    /// The summed cores' p95 over the seconds after the warm-up (what
    /// `slo.max_watched_cpu_cores` judges).
    pub cores_p95_measured: Option<f64>,
    pub own: Option<crate::observe::ProcSummary>,
    /// The target the run launched, and how it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched: Option<LaunchedTarget>,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct LaunchedTarget {
    pub command: String,
    pub pid: u32,
    /// It exited before the run stopped it.
    pub exited_early: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// It did not stop on SIGTERM within the grace time.
    pub killed: bool,
}

/// PASS (exit 0) or FAIL with the exit code and every reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Verdict {
    pub pass: bool,
    pub exit_code: i32,
    pub reasons: Vec<String>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Tool {
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub name: &'static str,
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub version: &'static str,
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub commit: &'static str,
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub target: &'static str,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TargetInfo {
    pub adapter: String,
    pub url: String,
    pub address: String,
    pub source: String,
    pub source_version: String,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Summary {
    /// The highest rate the target sustained, when this is a ceiling search's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling_eps: Option<f64>,
    pub target_eps: f64,
    pub achieved_eps: f64,
    pub eps_ratio: f64,
    /// The schedule's window (schedule seconds, after the warm-up): the rates' denominator.
    pub window_s: f64,
    /// The warm-up at the start (`workload.warmup`): in the timeline, out of this summary.
    pub warmup_s: f64,
    /// After the window, waiting for answers in flight: how long, and how many events were
    /// accepted in it (counted in `events_accepted`, never in a rate's denominator).
    pub drain_s: f64,
    pub events_accepted_in_drain: u64,
    /// Accepted events whose answers came in the window, whichever second their batch was
    /// due in (the warm-up's late answers among them, the window's drain answers not): the
    /// target's completion rate over the window (what a ceiling step's throughput is).
    #[serde(default)]
    pub events_answered_in_window: u64,
    /// Request bytes per second of the window, in MB (10^6) and as GB (10^9) per day.
    pub mb_per_s: f64,
    pub gb_per_day: f64,
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    pub batches_sent: u64,
    pub batches_accepted: u64,
    pub batches_failed: u64,
    pub batches_retried: u64,
    /// HEC indexer acknowledgement (`hec.ack: true`): batches confirmed indexed, and batches
    /// accepted with an ackId that were not confirmed before the run ended.
    pub batches_acked: u64,
    pub acks_pending: u64,
    pub bytes_sent: u64,
    pub success_rate: f64,
    pub error_rate: f64,
    pub auth_failures: u64,
    pub connect_errors: u64,
    pub connection_resets: u64,
    pub timeouts: u64,
    pub protocol_errors: u64,
    pub reconnects: u64,
    /// Connections closed by a cut (control or a fault timeline).
    pub connections_cut: u64,
    pub lag_ms_max: f64,
    pub lag_ms_mean: f64,
    /// Events the schedule wanted that were never sent.
    pub shortfall_events: u64,
    /// Whose the shortfall is (`Blame`): `none`; an aborted run's abort (`abort: auth`,
    /// `abort: tls`, `abort: unreachable`, `abort: io`); `target down` (no connection open),
    /// `target` (every connection waiting for an answer), `request cap`; a stopped run's stop
    /// (`stop: signal`, `stop: control`); else `generator` (busy rendering while connections
    /// were free).
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub shortfall_by: &'static str,
    /// Time spent rendering and framing batches, summed over worker threads (Rally's
    /// processing time beside service time).
    pub processing_ms: f64,
    /// CPU time the worker threads used (user and system, all threads), after the warm-up.
    pub worker_cpu_ms: f64,
    /// That CPU time over the worker threads' wall time after the warm-up (0..1): near 1, the
    /// generator itself is the limit.
    pub worker_cpu_share: f64,
    /// Time due batches waited for a free connection (every one had a request in flight).
    pub wait_for_target_ms: f64,
    /// Time due batches waited because no connection was open.
    pub target_down_ms: f64,
    /// Time due batches waited for `limits.max_requests_per_sec`.
    pub held_by_cap_ms: f64,
    /// Batches (and their events) given up after the retry limits, whatever the cause.
    pub batches_retries_exhausted: u64,
    pub events_retries_exhausted: u64,
    /// The events failed for good, by what failed them (each event once): the status of
    /// the answer that refused it for good (`"400"`, `"413"`, `"401"`, …); given up after its
    /// retries, by what the last attempt met (`429`, `503`, `busy`: an HEC busy code,
    /// `transport`: a broken connection or a timeout); still unanswered at the end.
    pub events_failed_by_status: BTreeMap<String, u64>,
    pub events_given_up_after: GivenUpAfter,
    pub events_unfinished: u64,
    /// generic-hec: the events failed for good by an HEC code (`{"6": n}`: invalid data
    /// format…), whatever status came with it (a 200 too); left out when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events_failed_by_hec_code: BTreeMap<String, u64>,
    /// Events (and batches) answered 2xx in words the engine cannot read — a head or body
    /// over the cap, a length that lies, a connection closed mid-body, an HEC answer without
    /// a `code`, a `_bulk` 2xx that is no `_bulk` answer: never resent (the collector said
    /// yes), counted in `events_failed` and here apart; `max_unreadable_2xx_events` (default
    /// 0) fails the run on them.
    #[serde(default)]
    pub events_unreadable_2xx: u64,
    #[serde(default)]
    pub batches_unreadable_2xx: u64,
    /// Syslog over TCP, TLS or UDP: events written and never confirmed — neither accepted nor
    /// failed (the collector may or may not hold them): their bytes were not taken by the
    /// peer's TCP, or the connection ended within the confirmation time of it (UDP: ICMP port
    /// unreachable came back). By cause in `events_unconfirmed_by` (`connection reset`,
    /// `connection closed`, `not drained`, `port unreachable`). Each left out when 0 (its
    /// SLO row, `max_unconfirmed_events`, is there for every syslog run).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub events_unconfirmed: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events_unconfirmed_by: BTreeMap<String, u64>,
    /// Syslog over TCP or TLS: bytes the kernel still held unsent (SIOCOUTQ, not acknowledged
    /// by the peer's TCP) when connections ended: reset or closed by the peer, or closed here.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes_unsent_at_close: u64,
    /// HEC ack polls answered with something other than 2xx.
    pub ack_poll_failures: u64,
    /// Time batches waited for room in a full socket buffer (the target reads slower).
    pub send_blocked_ms: f64,
    /// Syslog messages over `max_message_bytes`, counted and left out (never cut).
    pub oversize_events: u64,
    /// UDP: send system calls, GSO buffers (each many datagrams, cut by the kernel) and
    /// sockets on which the kernel refused GSO.
    pub udp_send_calls: u64,
    pub udp_gso_sends: u64,
    pub udp_gso_refused: u64,
    /// RELP: messages written again on a new connection after the one they went on broke
    /// before answering them; elasticsearch: `_bulk` items answered 429 (or 502/503/504) sent
    /// again in a smaller batch (0 for every other transport).
    pub events_resent: u64,
    /// elasticsearch: `create` items answered 409 (the id exists: an earlier attempt stored
    /// the event). Counted accepted; left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub events_already_stored: u64,
    /// elasticsearch: `_bulk` items failed for good, by the item's `error.type` (the types
    /// of `adapter::bulk::ERROR_TYPES`, any other as `other`); left out when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events_failed_by_type: BTreeMap<String, u64>,
    /// elasticsearch: the first item errors met, `STATUS TYPE: REASON` (up to 3 per worker,
    /// 8 in all); left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item_errors_first: Vec<String>,
    /// What "accepted" means: `acknowledged` (HTTP 2xx, RELP `rsp 200`) or `written` (syslog
    /// over TCP, TLS or UDP: handed to the kernel; it has no acknowledgement).
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub delivery: &'static str,
}

/// Events given up after their retries, by what their last attempt met.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct GivenUpAfter {
    #[serde(rename = "429")]
    pub status_429: u64,
    #[serde(rename = "503")]
    pub status_503: u64,
    /// Another answer worth retrying (HEC busy or internal-error codes).
    pub busy: u64,
    /// A broken connection or a timeout.
    pub transport: u64,
}

/// Latency percentiles in milliseconds, as the histogram gives them. A percentile is only
/// *shown* (in JSON: a number, else `null`; in text: else `—`) when the sample count supports
/// it (`min_samples`, Rally's rule): no p99.99 from 500 samples. SLO judging reads the fields
/// as they are; with few samples the high percentiles approach the maximum, which is the
/// conservative side.
#[derive(Clone, Debug, Default)]
pub struct Percentiles {
    pub count: u64,
    pub mean: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

/// The fewest samples a percentile needs to be shown (Rally's `percentiles_for_sample_size`):
/// p50 and the max from one sample (p10, p25 and p75 with them), p90 from 10 (p95 with it),
/// p99 from 100, p99.9 from 1,000, p99.99 from 10,000.
pub fn min_samples(percent: f64) -> u64 {
    if percent <= 75.0 || percent >= 100.0 {
        1
    } else if percent <= 95.0 {
        10
    } else if percent <= 99.0 {
        100
    } else if percent <= 99.9 {
        1_000
    } else {
        10_000
    }
}

impl Percentiles {
    /// Every percentile field: its JSON key, its percent (the max is 100) and its value.
    pub fn fields(&self) -> [(&'static str, f64, f64); 10] {
        [
            ("p10", 10.0, self.p10),
            ("p25", 25.0, self.p25),
            ("p50", 50.0, self.p50),
            ("p75", 75.0, self.p75),
            ("p90", 90.0, self.p90),
            ("p95", 95.0, self.p95),
            ("p99", 99.0, self.p99),
            ("p99_9", 99.9, self.p99_9),
            ("p99_99", 99.99, self.p99_99),
            ("max", 100.0, self.max),
        ]
    }

    /// `value` (the field for `percent`) when this many samples support it, else `None`.
    pub fn shown(&self, percent: f64, value: f64) -> Option<f64> {
        (self.count > 0 && self.count >= min_samples(percent)).then_some(value)
    }
}

/// As saved: a percentile the sample count did not support is null, read back as 0.
impl<'de> serde::Deserialize<'de> for Percentiles {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Saved {
            count: u64,
            mean: Option<f64>,
            p10: Option<f64>,
            p25: Option<f64>,
            p50: Option<f64>,
            p75: Option<f64>,
            p90: Option<f64>,
            p95: Option<f64>,
            p99: Option<f64>,
            p99_9: Option<f64>,
            p99_99: Option<f64>,
            max: Option<f64>,
        }
        let s = Saved::deserialize(d)?;
        let v = |x: Option<f64>| x.unwrap_or(0.0);
        Ok(Percentiles {
            count: s.count,
            mean: v(s.mean),
            p10: v(s.p10),
            p25: v(s.p25),
            p50: v(s.p50),
            p75: v(s.p75),
            p90: v(s.p90),
            p95: v(s.p95),
            p99: v(s.p99),
            p99_9: v(s.p99_9),
            p99_99: v(s.p99_99),
            max: v(s.max),
        })
    }
}

impl Serialize for Percentiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Percentiles", 12)?;
        st.serialize_field("count", &self.count)?;
        st.serialize_field("mean", &(self.count > 0).then_some(self.mean))?;
        for (key, percent, value) in self.fields() {
            st.serialize_field(key, &self.shown(percent, value))?;
        }
        st.end()
    }
}

/// Latency from the intended send time (coordinated-omission free) and service time (from
/// the actual write of the attempt that succeeded), in milliseconds.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Latencies {
    pub intended: Percentiles,
    pub service: Percentiles,
}

/// The two latency histograms, each HdrHistogram V2 + DEFLATE in base64 (`hdr::encode`).
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct LatencyHdr {
    pub intended: String,
    pub service: String,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Bucket {
    pub le_ms: f64,
    pub count: u64,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct SecondRow {
    pub t: u32,
    pub target_eps: f64,
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    pub errors: u64,
    /// Reconnects, and answers refusing for now (429, 503), in this second.
    pub reconnects: u64,
    pub refused: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub lag_ms_max: f64,
    pub backlog_events: u64,
    /// The watched processes' CPU (cores, summed) and resident memory in this second, and
    /// ingestbench's own CPU; null when nothing is watched.
    pub watched_cores: Option<f64>,
    pub watched_rss_bytes: Option<u64>,
    pub own_cores: Option<f64>,
    /// Control actions taken in this second (`pause`, `resume`, `rate`, `stop`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::report::de::leak_vec")]
    pub control: Vec<&'static str>,
}

pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    if h.is_empty() {
        return Percentiles::default();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    Percentiles {
        count: h.len(),
        mean: h.mean() / 1000.0,
        p10: ms(h.value_at_quantile(0.10)),
        p25: ms(h.value_at_quantile(0.25)),
        p50: ms(h.value_at_quantile(0.50)),
        p75: ms(h.value_at_quantile(0.75)),
        p90: ms(h.value_at_quantile(0.90)),
        p95: ms(h.value_at_quantile(0.95)),
        p99: ms(h.value_at_quantile(0.99)),
        p99_9: ms(h.value_at_quantile(0.999)),
        p99_99: ms(h.value_at_quantile(0.9999)),
        max: ms(h.max()),
    }
}

/// Counts in power-of-two millisecond buckets (≤0.125 ms, ≤0.25 ms, … ≤ 64 s).
pub fn buckets(h: &Histogram<u64>) -> Vec<Bucket> {
    let mut out = Vec::new();
    if h.is_empty() {
        return out;
    }
    let mut le_us: u64 = 125;
    let mut below = 0;
    loop {
        let upto = h.count_between(0, le_us);
        out.push(Bucket {
            le_ms: le_us as f64 / 1000.0,
            count: upto - below,
        });
        below = upto;
        if upto >= h.len() || le_us > crate::stats::MAX_LATENCY_US {
            break;
        }
        le_us *= 2;
    }
    // Leading empty buckets say nothing.
    let first = out.iter().position(|b| b.count > 0).unwrap_or(0);
    out.drain(..first);
    out
}

/// Facts about the run that the engine does not know.
pub struct Context {
    pub run_id: String,
    /// The host name of the machine that ran the load.
    pub host: String,
    pub name: Option<String>,
    pub started_wall_ns: i64,
    pub target: TargetInfo,
    pub batch_max_events: usize,
    pub batch_max_bytes: usize,
    pub config: serde_json::Value,
    pub slo: crate::config::schema::Slo,
    /// What the default objectives need to know (HEC ack asked for).
    pub slo_facts: slo::Facts,
    pub verification: Option<Verification>,
    /// What the watched processes used, second by second, and the launched target.
    pub watched: Option<(crate::observe::Observed, Option<LaunchedTarget>)>,
    /// The events carry accounting tags (`source.accounting`).
    pub tagged: bool,
    /// What the fault timeline did, and the latency gathered outside its windows.
    pub faults: Option<(Vec<crate::run::fault::FaultRecord>, faults::OutsideLatency)>,
    /// What the breakdowns are of: a mix's sources (id, share) and several targets (url,
    /// address), in the config's order; empty for one of each.
    pub parts: PartNames,
    /// This process is one shard of the run: the report carries `shard`.
    pub shard: Option<crate::run::shard::Shard>,
}

/// The names of a run's parts, for `by_source` and `by_target`.
#[derive(Clone, Debug, Default)]
pub struct PartNames {
    pub sources: Vec<(String, f64)>,
    pub targets: Vec<(String, String)>,
}

pub(crate) fn rfc3339(ns: i64) -> String {
    use crate::generate::time::{TsFormat, TsWriter};
    let mut w = TsWriter::new(TsFormat::Rfc3339Ms);
    let mut v = Vec::new();
    w.write(ns, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// Whose a shortfall is: the one vocabulary of `summary.shortfall_by`, `loss.not_sent_by`,
/// the text report and the panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blame {
    /// Nothing due went unsent.
    None,
    /// The run was stopped before these were sent: by SIGINT/SIGTERM, or by control.
    Signal,
    Control,
    /// The run aborted (its reason): the credentials refused, the TLS handshake failed, the
    /// target never reached, an I/O error.
    Auth,
    Tls,
    Unreachable,
    Io,
    /// A worker thread failed (a panic, or it never stopped).
    WorkerFailed,
    /// No connection was open.
    TargetDown,
    /// Every connection was waiting for an answer or a retry.
    Target,
    /// `limits.max_requests_per_sec` held due batches back.
    RequestCap,
    /// None of the above: the generator rendered (or this machine ran it) too slowly.
    Generator,
}

impl Blame {
    /// Every blame.
    pub const ALL: [Blame; 12] = [
        Blame::None,
        Blame::Signal,
        Blame::Control,
        Blame::Auth,
        Blame::Tls,
        Blame::Unreachable,
        Blame::Io,
        Blame::WorkerFailed,
        Blame::TargetDown,
        Blame::Target,
        Blame::RequestCap,
        Blame::Generator,
    ];

    /// The name in `shortfall_by`.
    pub fn as_str(self) -> &'static str {
        match self {
            Blame::None => "none",
            Blame::Signal => "stop: signal",
            Blame::Control => "stop: control",
            Blame::Auth => "abort: auth",
            Blame::Tls => "abort: tls",
            Blame::Unreachable => "abort: unreachable",
            Blame::Io => "abort: io",
            Blame::WorkerFailed => "abort: worker failed",
            Blame::TargetDown => "target down",
            Blame::Target => "target",
            Blame::RequestCap => "request cap",
            Blame::Generator => "generator",
        }
    }

    /// The blame a name in `shortfall_by` stands for (`None` for one it does not know).
    pub fn named(name: &str) -> Option<Blame> {
        Blame::ALL.iter().copied().find(|b| b.as_str() == name)
    }

    /// Whose it is, in words, for the text report.
    pub fn words(self) -> &'static str {
        match self {
            Blame::None => "nothing due went unsent",
            Blame::Signal => "the stop's: SIGINT or SIGTERM ended the run before they were sent",
            Blame::Control => "the stop's: control stopped the run before they were sent",
            Blame::Auth => "the abort's: the target refused the credentials",
            Blame::Tls => "the abort's: the TLS handshake failed",
            Blame::Unreachable => "the abort's: the target could not be reached",
            Blame::Io => "the abort's: an I/O error ended the run",
            Blame::WorkerFailed => "the abort's: a worker thread failed",
            Blame::TargetDown => "the target's: no connection was open — the target was down",
            Blame::Target => "the target's: every connection was waiting for an answer",
            Blame::RequestCap => {
                "the request cap's: limits.max_requests_per_sec held due batches back"
            }
            Blame::Generator => {
                "the generator's: it rendered too slowly while connections were free"
            }
        }
    }

    /// The abort's blame, or the stop's.
    fn of_abort(a: &AbortReason) -> Blame {
        match a {
            AbortReason::Interrupted => Blame::Signal,
            AbortReason::Stopped => Blame::Control,
            AbortReason::Auth(_) => Blame::Auth,
            AbortReason::Tls(_) => Blame::Tls,
            AbortReason::Unreachable(_) => Blame::Unreachable,
            AbortReason::Io(_) => Blame::Io,
            AbortReason::WorkerFailed(_) => Blame::WorkerFailed,
        }
    }
}

/// Whose a shortfall is (Rally's split of latency into service and processing time). An
/// aborted run's is the abort's (it ended the run: auth, TLS, unreachable, I/O). Otherwise
/// what held due batches back longest, if that was over a tenth of the window — no
/// connection open (`target down`), every one waiting for an answer or a retry (`target`),
/// the configured request cap (`request cap`); else a stop's is the stop's (a signal,
/// control: what was not yet due to leave when it came); else the generator's (it rendered,
/// or this machine ran it, too slowly).
pub fn shortfall_by(
    shortfall: u64,
    abort: Option<&AbortReason>,
    c: &Counters,
    threads: usize,
    window: Duration,
) -> Blame {
    if shortfall == 0 {
        return Blame::None;
    }
    if let Some(a) = abort.filter(|a| !a.is_stop()) {
        return Blame::of_abort(a);
    }
    let budget = window.as_nanos() as f64 * threads.max(1) as f64 * 0.1;
    // A due batch waited for a free connection, or one was held by a full socket buffer (the
    // receiver did not read): both are the target's time.
    let causes = [
        (c.target_down_ns, Blame::TargetDown),
        (c.wait_for_target_ns.max(c.send_blocked_ns), Blame::Target),
        (c.held_by_cap_ns, Blame::RequestCap),
    ];
    match causes.iter().max_by_key(|(ns, _)| *ns) {
        Some((ns, who)) if *ns as f64 >= budget => *who,
        _ => abort.map_or(Blame::Generator, Blame::of_abort),
    }
}

pub fn build(r: &RunResult, cx: Context) -> Report {
    let c = &r.totals;
    // The target is the schedule: rates are per second of its window (paused time and the
    // drain after it are left out).
    let window_s = r.window.as_secs_f64();
    let per_s = |n: f64| if window_s > 0.0 { n / window_s } else { 0.0 };
    let target_eps = per_s(r.target_events);
    let achieved_eps = per_s(c.events_accepted as f64);
    // Unconfirmed events are judged too: neither accepted nor failed, they are not a success.
    let judged = c.events_accepted + c.events_failed + c.events_unconfirmed();
    let shortfall_events = (r.target_events as u64).saturating_sub(c.events_sent);
    let summary = Summary {
        ceiling_eps: None,
        target_eps,
        achieved_eps,
        eps_ratio: if target_eps > 0.0 {
            achieved_eps / target_eps
        } else {
            0.0
        },
        window_s,
        warmup_s: r.warmup.as_secs_f64(),
        drain_s: r.drain.as_secs_f64(),
        events_accepted_in_drain: c.events_accepted_in_drain,
        events_answered_in_window: r.answered_in_window,
        mb_per_s: per_s(c.bytes_sent as f64) / 1e6,
        gb_per_day: per_s(c.bytes_sent as f64) * 86_400.0 / 1e9,
        shortfall_by: shortfall_by(shortfall_events, r.abort.as_ref(), c, r.threads, r.window)
            .as_str(),
        processing_ms: c.processing_ns as f64 / 1e6,
        worker_cpu_ms: c.cpu_ns as f64 / 1e6,
        worker_cpu_share: {
            let wall = r.duration.saturating_sub(r.warmup).as_nanos() as f64 * r.threads as f64;
            if wall > 0.0 {
                (c.cpu_ns as f64 / wall).min(1.0)
            } else {
                0.0
            }
        },
        wait_for_target_ms: c.wait_for_target_ns as f64 / 1e6,
        target_down_ms: c.target_down_ns as f64 / 1e6,
        held_by_cap_ms: c.held_by_cap_ns as f64 / 1e6,
        batches_retries_exhausted: c.batches_retries_exhausted,
        events_retries_exhausted: c.events_retries_exhausted,
        events_failed_by_status: c
            .refused_statuses()
            .into_iter()
            .map(|(s, n)| (s.to_string(), n))
            .collect(),
        events_given_up_after: GivenUpAfter {
            status_429: c.events_given_up_429,
            status_503: c.events_given_up_503,
            busy: c.events_given_up_busy,
            transport: c.events_given_up_transport,
        },
        events_unfinished: c.events_unfinished,
        events_failed_by_hec_code: c
            .events_failed_by_hec_code
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (k.to_string(), *n))
            .collect(),
        events_unreadable_2xx: c.events_unreadable_2xx,
        batches_unreadable_2xx: c.batches_unreadable_2xx,
        events_unconfirmed: c.events_unconfirmed(),
        events_unconfirmed_by: c.unconfirmed_by_name(),
        bytes_unsent_at_close: c.bytes_unsent_at_close,
        ack_poll_failures: c.ack_poll_failures,
        events_sent: c.events_sent,
        events_accepted: c.events_accepted,
        events_failed: c.events_failed,
        batches_sent: c.batches_sent,
        batches_accepted: c.batches_accepted,
        batches_failed: c.batches_failed,
        batches_retried: c.batches_retried,
        batches_acked: c.batches_acked,
        acks_pending: c.acks_pending,
        bytes_sent: c.bytes_sent,
        success_rate: if judged > 0 {
            c.events_accepted as f64 / judged as f64
        } else {
            0.0
        },
        error_rate: if judged > 0 {
            c.events_failed as f64 / judged as f64
        } else {
            0.0
        },
        auth_failures: c.auth_failures,
        connect_errors: c.connect_errors,
        connection_resets: c.connection_resets,
        timeouts: c.timeouts,
        protocol_errors: c.protocol_errors,
        reconnects: c.reconnects,
        connections_cut: c.connections_cut,
        lag_ms_max: c.lag_ns_max as f64 / 1e6,
        lag_ms_mean: if c.batches_sent > 0 {
            c.lag_ns_sum as f64 / c.batches_sent as f64 / 1e6
        } else {
            0.0
        },
        shortfall_events,
        send_blocked_ms: c.send_blocked_ns as f64 / 1e6,
        oversize_events: c.oversize_events,
        udp_send_calls: c.udp_send_calls,
        udp_gso_sends: c.udp_gso_sends,
        udp_gso_refused: c.udp_gso_refused,
        events_resent: c.events_resent,
        events_already_stored: c.events_already_stored,
        item_errors_first: r.item_errors.clone(),
        events_failed_by_type: c
            .events_failed_by_type
            .iter()
            .zip(crate::adapter::bulk::ERROR_TYPES)
            .filter(|(n, _)| **n > 0)
            .map(|(n, t)| (t.to_string(), *n))
            .collect(),
        // RELP answers every message; syslog over TCP, TLS or UDP answers nothing.
        delivery: if cx.target.adapter == "syslog" && !cx.target.url.starts_with("relp") {
            "written"
        } else {
            "acknowledged"
        },
    };
    let latency_ms = Latencies {
        intended: percentiles(&r.latency),
        service: percentiles(&r.service),
    };
    let status = c
        .statuses()
        .into_iter()
        .map(|(s, n)| (s.to_string(), n))
        .collect();
    let hec_codes = c
        .hec_codes
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (k.to_string(), *n))
        .collect();
    let timeline = r
        .seconds
        .iter()
        .map(|s| SecondRow {
            t: s.t,
            target_eps: s.target_eps,
            events_sent: s.counts.events_sent,
            events_accepted: s.counts.events_accepted,
            events_failed: s.counts.events_failed,
            errors: s.counts.errors,
            reconnects: s.counts.reconnects,
            refused: s.counts.refused,
            p50_ms: s.latency.intended.p50,
            p99_ms: s.latency.intended.p99,
            lag_ms_max: s.counts.lag_ns_max as f64 / 1e6,
            backlog_events: s.counts.backlog_events,
            watched_cores: None,
            watched_rss_bytes: None,
            own_cores: None,
            control: r
                .control
                .iter()
                .filter(|m| m.t_s.floor() as u32 == s.t)
                .map(|m| m.action)
                .collect(),
        })
        .collect();
    let run_id = cx.run_id.clone();
    let mut rep = Report {
        schema: REPORT_SCHEMA,
        tool: Tool {
            name: "ingestbench",
            version: env!("CARGO_PKG_VERSION"),
            commit: env!("INGESTBENCH_GIT_COMMIT"),
            target: env!("INGESTBENCH_TARGET"),
        },
        run_id: cx.run_id,
        name: cx.name,
        host: cx.host,
        started_at: rfc3339(cx.started_wall_ns),
        ended_at: rfc3339(cx.started_wall_ns + r.duration.as_nanos() as i64),
        duration_s: r.duration.as_secs_f64(),
        target: cx.target,
        threads: r.threads,
        threads_note: None,
        connections: r.connections,
        batch_max_events: cx.batch_max_events,
        batch_max_bytes: cx.batch_max_bytes,
        summary,
        data_rate: None,
        latency_ms,
        latency_histogram: buckets(&r.latency),
        latency_hdr: LatencyHdr {
            intended: hdr::encode(&r.latency).unwrap_or_default(),
            service: hdr::encode(&r.service).unwrap_or_default(),
        },
        status,
        hec_codes,
        timeline,
        control: r.control.clone(),
        paused_s: r.paused.as_secs_f64(),
        verification: cx.verification,
        accounting: cx.tagged.then(|| accounting(r, &run_id)),
        store_verification: None,
        loss: loss::Loss::default(),
        watched: None,
        ceiling: None,
        faults: None,
        sizing: Vec::new(),
        scenario: None,
        http: None,
        by_source: Vec::new(),
        by_target: Vec::new(),
        slo: Vec::new(),
        aborted: r.abort.as_ref().map(|a| a.to_string()),
        shard: cx
            .shard
            .map(|s| merge::ShardSection::of(s, r, cx.started_wall_ns)),
        merged: None,
        verdict: Verdict::default(),
        config: cx.config,
    };
    if let Some((observed, launched)) = cx.watched {
        rep.watched = Some(watched(&mut rep.timeline, observed, launched, r.warmup));
    }
    if let Some((records, outside)) = cx.faults {
        let actions = faults::judge(records, &rep.timeline);
        let latency_outside_ms = outside.finish(&actions);
        rep.faults = Some(faults::Faults {
            actions,
            latency_outside_ms,
        });
    }
    if let Some(p) = &r.sources {
        rep.by_source = sources::rows(&cx.parts.sources, p);
    }
    if let Some(p) = &r.targets {
        rep.by_target = targets::rows(&cx.parts.targets, p);
    }
    rep.slo = slo::judge(&cx.slo, &rep, cx.slo_facts);
    rep.loss = loss::of(&rep, r.target_events as u64, None);
    rep
}

/// What each agent of the run sent and gave up, as the report's `accounting` says it (the
/// scenario lane's agent among them: a store holds its events too).
pub fn accounting(r: &RunResult, run_id: &str) -> Accounting {
    let lane = r.scenario.as_ref().and_then(|l| l.account.as_ref());
    Accounting {
        run_id: run_id.to_string(),
        agents: r
            .agents
            .iter()
            .chain(lane)
            .map(|a| AgentAccounting {
                agent: a.agent,
                events_sent: a.events_sent,
                failed: a.failed.clone(),
                failed_overflow: a.failed_overflow,
            })
            .collect(),
    }
}

/// The watched processes into the timeline (a watcher's interval `t` is the run's second
/// `t - 1`: both start together) and their summary, with the summed cores' p95 after the
/// warm-up.
fn watched(
    rows: &mut [SecondRow],
    o: crate::observe::Observed,
    launched: Option<LaunchedTarget>,
    warmup: Duration,
) -> Watched {
    for s in &o.seconds {
        if let Some(row) = s.t.checked_sub(1).and_then(|k| rows.get_mut(k as usize)) {
            row.watched_cores = Some(s.total.cores);
            row.watched_rss_bytes = Some(s.total.rss_bytes);
            row.own_cores = s.own.as_ref().map(|p| p.cores);
        }
    }
    let warm = warmup.as_secs_f64().ceil() as u32;
    let mut measured: Vec<f64> = rows
        .iter()
        .filter(|r| r.t >= warm)
        .filter_map(|r| r.watched_cores)
        .collect();
    measured.sort_by(f64::total_cmp);
    let cores_p95_measured = (!measured.is_empty()).then(|| {
        let rank = ((0.95 * measured.len() as f64).ceil() as usize).clamp(1, measured.len());
        measured.get(rank - 1).copied().unwrap_or_default()
    });
    Watched {
        processes: o.processes,
        cgroups: o.cgroups,
        total: o.total,
        cores_p95_measured,
        own: o.own,
        launched,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_count(n: u64) -> Percentiles {
        let mut h = crate::stats::new_histogram();
        for i in 0..n {
            h.record(1 + i % 1000).unwrap();
        }
        percentiles(&h)
    }

    /// The keys shown (not null) in JSON for a sample count.
    fn shown_keys(n: u64) -> Vec<String> {
        let v = serde_json::to_value(with_count(n)).unwrap();
        let keys = [
            "mean", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99_9", "p99_99", "max",
        ];
        assert_eq!(v["count"], n);
        keys.iter()
            .filter(|k| !v[**k].is_null())
            .map(|k| k.to_string())
            .collect()
    }

    #[test]
    fn an_abort_or_a_stop_owns_the_shortfall_and_the_evidence_comes_before_a_stop() {
        let w = Duration::from_secs(10);
        let quiet = Counters::default();
        let waited = Counters {
            wait_for_target_ns: 5_000_000_000,
            ..Counters::default()
        };
        let by = |n, a: Option<AbortReason>, c: &Counters| shortfall_by(n, a.as_ref(), c, 1, w);
        assert_eq!(by(0, Some(AbortReason::Interrupted), &waited), Blame::None);
        // An abort ended the run: its reason, whatever waited before.
        assert_eq!(
            by(5, Some(AbortReason::Auth("401".into())), &waited),
            Blame::Auth
        );
        assert_eq!(
            by(5, Some(AbortReason::Tls("x".into())), &quiet),
            Blame::Tls
        );
        assert_eq!(
            by(5, Some(AbortReason::Unreachable("x".into())), &quiet),
            Blame::Unreachable
        );
        assert_eq!(by(5, Some(AbortReason::Io("x".into())), &quiet), Blame::Io);
        // A stop: what held batches back, if anything did for long; else the stop.
        assert_eq!(by(5, Some(AbortReason::Interrupted), &quiet), Blame::Signal);
        assert_eq!(by(5, Some(AbortReason::Stopped), &quiet), Blame::Control);
        assert_eq!(by(5, Some(AbortReason::Stopped), &waited), Blame::Target);
        // Neither: the evidence, else the generator.
        assert_eq!(by(5, None, &waited), Blame::Target);
        assert_eq!(by(5, None, &quiet), Blame::Generator);
        for b in Blame::ALL {
            assert_eq!(Blame::named(b.as_str()), Some(b));
            assert!(!b.words().is_empty());
        }
        assert_eq!(Blame::named("nobody"), None);
    }

    #[test]
    fn min_samples_follows_rally() {
        let table = [
            (10.0, 1),
            (25.0, 1),
            (50.0, 1),
            (75.0, 1),
            (90.0, 10),
            (95.0, 10),
            (99.0, 100),
            (99.9, 1_000),
            (99.99, 10_000),
            (100.0, 1),
        ];
        for (percent, n) in table {
            assert_eq!(min_samples(percent), n, "p{percent}");
        }
    }

    #[test]
    fn percentiles_are_null_where_the_count_does_not_support_them() {
        let low = ["mean", "p10", "p25", "p50", "p75"];
        let mut want: Vec<&str> = Vec::new();
        assert_eq!(shown_keys(0), want, "no samples, nothing shown");
        want.extend(low);
        want.push("max");
        for n in [1, 9] {
            assert_eq!(shown_keys(n), want, "{n} samples");
        }
        let table: [(&[&str], &[u64]); 4] = [
            (&["p90", "p95"], &[10, 99]),
            (&["p99"], &[100, 999]),
            (&["p99_9"], &[1_000, 9_999]),
            (&["p99_99"], &[10_000, 25_000]),
        ];
        for (added, counts) in table {
            want.pop();
            want.extend(added);
            want.push("max");
            for &n in counts {
                assert_eq!(shown_keys(n), want, "{n} samples");
            }
        }
    }

    /// Issue 33 #11: writes held by a full socket buffer (a receiver that reads nothing) are
    /// the target's time, as a due batch waiting for a free connection is.
    #[test]
    fn writes_blocked_by_the_receiver_blame_the_target() {
        let window = Duration::from_secs(5);
        let mut c = Counters {
            send_blocked_ns: 4_800_000_000,
            ..Counters::default()
        };
        assert_eq!(shortfall_by(1000, None, &c, 1, window), Blame::Target);
        c.send_blocked_ns = 0;
        assert_eq!(shortfall_by(1000, None, &c, 1, window), Blame::Generator);
        c.send_blocked_ns = 4_800_000_000;
        c.target_down_ns = 4_900_000_000;
        assert_eq!(shortfall_by(1000, None, &c, 1, window), Blame::TargetDown);
        assert_eq!(shortfall_by(0, None, &c, 1, window), Blame::None);
    }

    #[test]
    fn shown_values_are_the_histograms() {
        let p = with_count(2_000);
        assert_eq!(p.shown(99.9, p.p99_9), Some(p.p99_9));
        assert_eq!(p.shown(99.99, p.p99_99), None);
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["p99"].as_f64(), Some(p.p99));
        assert_eq!(v["max"].as_f64(), Some(1.0));
    }
}
