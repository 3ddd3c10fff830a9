//! The report's `by_source`: a mix of sources broken down source by source — the share
//! asked and the share sent, events sent, accepted and failed, and latency (intended and
//! service) — over the whole run, warm-up and drain included (the summary's window leaves
//! them out, so these rows add up to the run's totals, not to the summary's). `PartFigures`
//! are what a source's row and a target's (`targets`) have alike.

use serde::Serialize;

use super::{Percentiles, percentiles};
use crate::stats::parts::Parts;

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct SourceRow {
    /// The pack id.
    pub source: String,
    /// The share the config asked for.
    pub share: f64,
    /// The share of the run's sent events this source had.
    pub sent_share: f64,
    #[serde(flatten)]
    pub figures: PartFigures,
}

/// One part's events, batches and latencies, named as the run's own.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PartFigures {
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    pub batches_sent: u64,
    pub batches_accepted: u64,
    pub batches_failed: u64,
    /// Syslog over TCP, TLS or UDP: events written and never confirmed (`summary`'s
    /// `events_unconfirmed`); left out when 0.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub events_unconfirmed: u64,
    /// Intended latency (from when each batch was due) of its accepted batches, ms.
    pub latency_ms: Percentiles,
    /// Service latency (from each batch's last write), ms.
    pub service_ms: Percentiles,
}

/// Part `k`'s figures.
#[allow(
    clippy::indexing_slicing,
    reason = "both callers pass k from 0..parts.len(), and counters, latency and service each have \
              one entry per part"
)]
pub(super) fn figures(parts: &Parts, k: usize) -> PartFigures {
    let c = parts.counters[k];
    PartFigures {
        events_sent: c.events_sent,
        events_accepted: c.events_accepted,
        events_failed: c.events_failed,
        batches_sent: c.batches_sent,
        batches_accepted: c.batches_accepted,
        batches_failed: c.batches_failed,
        events_unconfirmed: c.events_unconfirmed,
        latency_ms: percentiles(&parts.latency[k]),
        service_ms: percentiles(&parts.service[k]),
    }
}

/// One row per source, in the config's order: `sources` is each one's id and share.
pub fn rows(sources: &[(String, f64)], parts: &Parts) -> Vec<SourceRow> {
    let sent: u64 = parts.counters.iter().map(|c| c.events_sent).sum();
    sources
        .iter()
        .enumerate()
        .take(parts.len())
        .map(|(k, (id, share))| {
            let figures = figures(parts, k);
            SourceRow {
                source: id.clone(),
                share: *share,
                sent_share: if sent > 0 {
                    figures.events_sent as f64 / sent as f64
                } else {
                    0.0
                },
                figures,
            }
        })
        .collect()
}

/// The text report's table of the rows (nothing without a mix).
pub fn text(o: &mut String, rows: &[SourceRow]) {
    use std::fmt::Write;
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nBy source (whole run):");
    let w = rows
        .iter()
        .map(|r| r.source.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        o,
        "  {:<w$}  {:>6}  {:>6}  {:>12}  {:>12}  {:>10}  {:>9}  {:>9}",
        "source", "share", "sent", "events sent", "accepted", "failed", "p50 ms", "p99 ms"
    );
    for r in rows {
        let _ = writeln!(
            o,
            "  {:<w$}  {:>5.1}%  {:>5.1}%  {:>12}  {:>12}  {:>10}  {:>9.2}  {:>9.2}",
            r.source,
            r.share * 100.0,
            r.sent_share * 100.0,
            r.figures.events_sent,
            r.figures.events_accepted,
            r.figures.events_failed,
            r.figures.latency_ms.p50,
            r.figures.latency_ms.p99,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::parts::MAX_PARTS;

    #[test]
    fn rows_follow_the_config_order_with_the_share_each_had() {
        let mut p = Parts::new(2);
        let mut c = [0u32; MAX_PARTS];
        c[0] = 30;
        c[1] = 10;
        p.sent(&c);
        p.accepted(&c, 2000, 1000);
        let rows = rows(
            &[
                ("okta.system".into(), 0.75),
                ("aws.cloudtrail".into(), 0.25),
            ],
            &p,
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].source, "okta.system");
        assert_eq!(rows[0].figures.events_sent, 30);
        assert!((rows[0].sent_share - 0.75).abs() < 1e-9);
        assert_eq!(rows[1].figures.events_accepted, 10);
        assert!(rows[1].figures.latency_ms.p50 > 1.9 && rows[1].figures.latency_ms.p50 < 2.1);
        let mut t = String::new();
        text(&mut t, &rows);
        assert!(t.contains("okta.system") && t.contains("75.0%"), "{t}");
    }
}
