//! Service-level objectives, judged once against the finished report: the config's `slo`
//! keys, and the fail-closed defaults a run is held to when the config does not say
//! otherwise — no failed events, no due event left unsent, no answer "2xx, unreadable", at
//! least one event accepted, every HEC ackId confirmed (with `hec.ack`), every syslog event
//! written over TCP, TLS or UDP confirmed, nothing lost at the store (when it can tell). Each
//! default is a row like the others, marked `default`, and the config's key of the same name
//! (or the one named beside it below) replaces it. An objective that cannot be judged (no
//! verification data for `max_lost_events`) says so instead of passing silently.

use serde::Serialize;

use crate::config::schema::Slo;
use crate::report::Report;

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SloResult {
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub name: &'static str,
    /// Applied because the config's `slo` block did not set this objective (the fail-closed
    /// defaults), rather than asked for.
    pub default: bool,
    pub limit: f64,
    /// `None` when the run has no data to judge this objective.
    pub actual: Option<f64>,
    pub pass: bool,
}

/// What the defaults need to know beyond the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// HEC indexer acknowledgement was asked for.
    pub hec_ack: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Bound {
    AtLeast,
    AtMost,
}

struct Rows(Vec<SloResult>);

impl Rows {
    fn push(
        &mut self,
        name: &'static str,
        bound: Bound,
        limit: f64,
        actual: Option<f64>,
        default: bool,
    ) {
        let pass = actual.is_some_and(|a| match bound {
            Bound::AtLeast => a >= limit,
            Bound::AtMost => a <= limit,
        });
        self.0.push(SloResult {
            name,
            default,
            limit,
            actual,
            pass,
        });
    }

    /// The config's objective when it gives one.
    fn asked(&mut self, name: &'static str, bound: Bound, limit: Option<f64>, actual: Option<f64>) {
        if let Some(limit) = limit {
            self.push(name, bound, limit, actual, false);
        }
    }

    /// The config's objective, or — unless `replaced` (another key covers it) — the default.
    fn or_default(
        &mut self,
        name: &'static str,
        bound: Bound,
        asked: Option<f64>,
        replaced: bool,
        default: f64,
        actual: Option<f64>,
    ) {
        match asked {
            Some(limit) => self.push(name, bound, limit, actual, false),
            None if !replaced => self.push(name, bound, default, actual, true),
            None => {}
        }
    }
}

pub fn judge(s: &Slo, r: &Report, facts: Facts) -> Vec<SloResult> {
    use Bound::{AtLeast, AtMost};
    let sum = &r.summary;
    let mut rows = Rows(Vec::new());
    rows.asked(
        "min_success_rate",
        AtLeast,
        s.min_success_rate,
        Some(sum.success_rate),
    );
    rows.asked(
        "min_eps_ratio",
        AtLeast,
        s.min_eps_ratio,
        Some(sum.eps_ratio),
    );
    // With a fault timeline, latency is judged on the answers outside its windows.
    let lat = r
        .faults
        .as_ref()
        .map_or(&r.latency_ms.intended, |f| &f.latency_outside_ms);
    let has_lat = lat.count > 0;
    rows.asked(
        "max_p95_ms",
        AtMost,
        s.max_p95_ms,
        has_lat.then_some(lat.p95),
    );
    rows.asked(
        "max_p99_ms",
        AtMost,
        s.max_p99_ms,
        has_lat.then_some(lat.p99),
    );
    rows.asked(
        "max_error_rate",
        AtMost,
        s.max_error_rate,
        Some(sum.error_rate),
    );
    // The fail-closed defaults.
    rows.or_default(
        "max_failed_events",
        AtMost,
        s.max_failed_events.map(|v| v as f64),
        s.min_success_rate.is_some() || s.max_error_rate.is_some(),
        0.0,
        Some(sum.events_failed as f64),
    );
    rows.or_default(
        "max_unsent_events",
        AtMost,
        s.max_unsent_events.map(|v| v as f64),
        s.min_eps_ratio.is_some(),
        0.0,
        Some(sum.shortfall_events as f64),
    );
    rows.or_default(
        "max_unreadable_2xx_events",
        AtMost,
        s.max_unreadable_2xx_events.map(|v| v as f64),
        false,
        0.0,
        Some(sum.events_unreadable_2xx as f64),
    );
    rows.or_default(
        "min_events_accepted",
        AtLeast,
        s.min_events_accepted.map(|v| v as f64),
        false,
        1.0,
        Some(sum.events_accepted as f64),
    );
    rows.or_default(
        "max_acks_pending",
        AtMost,
        s.max_acks_pending.map(|v| v as f64),
        !facts.hec_ack,
        0.0,
        Some(sum.acks_pending as f64),
    );
    rows.or_default(
        "max_unconfirmed_events",
        AtMost,
        s.max_unconfirmed_events.map(|v| v as f64),
        sum.delivery != "written" && sum.events_unconfirmed == 0,
        0.0,
        Some(sum.events_unconfirmed as f64),
    );
    rows.or_default(
        "max_targets_down",
        AtMost,
        s.max_targets_down.map(|v| v as f64),
        r.by_target.is_empty(),
        0.0,
        Some(r.by_target.iter().filter(|t| t.down).count() as f64),
    );
    let w = r.watched.as_ref();
    rows.asked(
        "max_watched_cpu_cores",
        AtMost,
        s.max_watched_cpu_cores,
        w.and_then(|w| w.cores_p95_measured),
    );
    rows.asked(
        "max_watched_rss",
        AtMost,
        s.max_watched_rss.map(|b| b.0 as f64),
        w.map(|w| w.total.rss_peak_bytes as f64),
    );
    rows.or_default(
        "max_lost_events",
        AtMost,
        s.max_lost_events.map(|v| v as f64),
        r.verification.is_none(),
        0.0,
        r.verification.as_ref().map(|v| v.lost_events as f64),
    );
    rows.asked(
        "max_dup_events",
        AtMost,
        s.max_dup_events.map(|v| v as f64),
        r.verification.as_ref().map(|v| v.duplicates as f64),
    );
    if let (Some(limit), Some(f)) = (s.max_recovery, &r.faults) {
        rows.0
            .push(recovery(limit.0.as_secs_f64(), f, r.duration_s));
    }
    rows.0
}

/// `max_recovery`: the slowest recovery, in seconds. A fault never recovered from counts as
/// the time from its end to the end of the run, and fails whatever that is.
fn recovery(limit: f64, f: &crate::report::faults::Faults, duration_s: f64) -> SloResult {
    let mut worst: Option<f64> = None;
    let mut all = true;
    for a in f.actions.iter().filter(|a| a.record.error.is_none()) {
        let t = match (a.recovery_s, a.record.ended_s) {
            (Some(t), _) => t,
            (None, Some(e)) => {
                all = false;
                (duration_s - e).max(0.0)
            }
            (None, None) => {
                all = false;
                continue;
            }
        };
        worst = Some(worst.map_or(t, |w| w.max(t)));
    }
    let actual = worst.or((!all).then_some(duration_s));
    SloResult {
        name: "max_recovery_s",
        default: false,
        limit,
        actual,
        pass: all && actual.is_none_or(|a| a <= limit),
    }
}

/// The objectives that failed (judged and over their limit).
pub fn breaches(results: &[SloResult]) -> Vec<&SloResult> {
    results
        .iter()
        .filter(|r| !r.pass && r.actual.is_some())
        .collect()
}
