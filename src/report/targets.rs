//! The report's `by_target`: a run to several targets (`target.url` as a list) broken down
//! target by target — events and batches sent, accepted and failed there, its connections'
//! fortunes (opened, refused or failing, broken, timed out), latency, and whether it was down
//! (no connection to it ever opened) — over the whole run. A batch counts where its first
//! attempt went (sent) and where its last one went (accepted or failed): a batch retried
//! from a target that broke to another is accepted by the other.

use serde::Serialize;

use super::sources::{PartFigures, figures};
use crate::stats::parts::Parts;

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TargetRow {
    pub url: String,
    pub address: String,
    /// No connection to it ever opened: it took no part in the run.
    pub down: bool,
    #[serde(flatten)]
    pub figures: PartFigures,
    pub connects: u64,
    pub connect_errors: u64,
    pub connection_resets: u64,
    pub timeouts: u64,
}

/// One row per target: `targets` is each one's (url, address), in the config's order.
#[allow(
    clippy::indexing_slicing,
    reason = "k ranges over 0..parts.len(), and counters has one entry per part"
)]
pub fn rows(targets: &[(String, String)], parts: &Parts) -> Vec<TargetRow> {
    targets
        .iter()
        .enumerate()
        .take(parts.len())
        .map(|(k, (url, address))| {
            let c = parts.counters[k];
            TargetRow {
                url: url.clone(),
                address: address.clone(),
                down: c.connects == 0,
                figures: figures(parts, k),
                connects: c.connects,
                connect_errors: c.connect_errors,
                connection_resets: c.connection_resets,
                timeouts: c.timeouts,
            }
        })
        .collect()
}

/// The text report's table of the rows (nothing with one target).
pub fn text(o: &mut String, rows: &[TargetRow]) {
    use std::fmt::Write;
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nBy target (whole run):");
    let w = rows.iter().map(|r| r.url.len()).max().unwrap_or(6).max(6);
    let _ = writeln!(
        o,
        "  {:<w$}  {:>12}  {:>12}  {:>8}  {:>8}  {:>8}  {:>8}  {:>9}  state",
        "target", "events sent", "accepted", "failed", "conn err", "resets", "timeouts", "p99 ms"
    );
    for r in rows {
        let _ = writeln!(
            o,
            "  {:<w$}  {:>12}  {:>12}  {:>8}  {:>8}  {:>8}  {:>8}  {:>9.2}  {}",
            r.url,
            r.figures.events_sent,
            r.figures.events_accepted,
            r.figures.events_failed,
            r.connect_errors,
            r.connection_resets,
            r.timeouts,
            r.figures.latency_ms.p99,
            if r.down {
                "DOWN (never connected)"
            } else {
                "up"
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::parts::LinkEvent;

    #[test]
    fn a_target_never_connected_is_down() {
        let mut p = Parts::new(2);
        p.note(0, LinkEvent::Connected);
        p.sent_to(0, 100);
        p.accepted_at(0, 100, 3000, 1000);
        p.note(1, LinkEvent::ConnectError);
        p.note(1, LinkEvent::ConnectError);
        let t = [
            ("http://a:1".to_string(), "127.0.0.1:1".to_string()),
            ("http://b:2".to_string(), "127.0.0.1:2".to_string()),
        ];
        let rows = rows(&t, &p);
        assert!(!rows[0].down && rows[1].down);
        assert_eq!(rows[0].figures.events_accepted, 100);
        assert_eq!(rows[1].connect_errors, 2);
        let mut o = String::new();
        text(&mut o, &rows);
        assert!(o.contains("DOWN (never connected)"), "{o}");
    }
}
