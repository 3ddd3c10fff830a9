//! Service-level objectives from the config, judged once against the finished report. Each
//! objective gives a row (limit, actual, pass); one that cannot be judged (no verification
//! data for `max_lost_events`) says so instead of passing silently.

use serde::Serialize;

use crate::config::schema::Slo;
use crate::report::Report;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SloResult {
    pub name: &'static str,
    /// Applied because the config's `slo` block did not set this objective (the fail-closed
    /// defaults), rather than asked for.
    pub default: bool,
    pub limit: f64,
    /// `None` when the run has no data to judge this objective.
    pub actual: Option<f64>,
    pub pass: bool,
}

pub fn judge(s: &Slo, r: &Report) -> Vec<SloResult> {
    let sum = &r.summary;
    let mut out = Vec::new();
    let mut at_least = |name: &'static str, limit: Option<f64>, actual: Option<f64>| {
        if let Some(limit) = limit {
            out.push(SloResult {
                name,
                default: false,
                limit,
                actual,
                pass: actual.is_some_and(|a| a >= limit),
            });
        }
    };
    at_least(
        "min_success_rate",
        s.min_success_rate,
        Some(sum.success_rate),
    );
    at_least("min_eps_ratio", s.min_eps_ratio, Some(sum.eps_ratio));
    let mut at_most = |name: &'static str, limit: Option<f64>, actual: Option<f64>| {
        if let Some(limit) = limit {
            out.push(SloResult {
                name,
                default: false,
                limit,
                actual,
                pass: actual.is_some_and(|a| a <= limit),
            });
        }
    };
    let lat = &r.latency_ms.intended;
    let has_lat = lat.count > 0;
    at_most("max_p95_ms", s.max_p95_ms, has_lat.then_some(lat.p95));
    at_most("max_p99_ms", s.max_p99_ms, has_lat.then_some(lat.p99));
    at_most("max_error_rate", s.max_error_rate, Some(sum.error_rate));
    at_most(
        "max_lost_events",
        s.max_lost_events.map(|v| v as f64),
        r.verification.as_ref().map(|v| v.lost_events as f64),
    );
    out
}

/// The objectives that failed (judged and over their limit).
pub fn breaches(results: &[SloResult]) -> Vec<&SloResult> {
    results
        .iter()
        .filter(|r| !r.pass && r.actual.is_some())
        .collect()
}
