//! The report's `faults` section: each fault of the timeline as it was carried out, with its
//! visible effect on the per-second timeline (reconnects, refusals, errors, the worst p99 and
//! backlog from its begin until it had recovered) and its recovery time, and the latency of
//! the answers outside fault windows (what `slo.max_p95_ms`/`max_p99_ms` judge when there are
//! faults). Recovered: the first second ending after the fault's end that accepts at least
//! 99 % of the events its schedule asked for, with no refusal or error, and the backlog at
//! its end back within 1 % of a second's target of what it was before the fault began.
//! `recovery_s` is from the fault's end to the start of that second, at least 0 (a second's
//! resolution). A fault's window, for latency, is from the second it began to the one it had
//! recovered in, both included (the answers that catch up land in the latter).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use serde::Serialize;

use super::{Percentiles, SecondRow, percentiles};
use crate::run::fault::FaultRecord;
use crate::spill::{Block, Spill};
use crate::stats::new_histogram;

/// Achieved over target for a second to count as recovered.
pub const RECOVERED_RATIO: f64 = 0.99;
/// Seconds after a fault's planned end whose latency is held back until its recovery is
/// known, beyond `slo.max_recovery`.
pub const HOLD_AFTER_S: f64 = 60.0;

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Faults {
    pub actions: Vec<FaultRow>,
    /// Intended latency of the answers in seconds outside every fault window (from the
    /// second a fault began to the one it had recovered in, both included, or to the end).
    pub latency_outside_ms: Percentiles,
}

/// One fault, carried out and judged.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct FaultRow {
    #[serde(flatten)]
    pub record: FaultRecord,
    pub effect: Effect,
    pub recovered: bool,
    /// The second it had recovered in, and the time from its end to that second's start.
    pub recovered_t: Option<u32>,
    pub recovery_s: Option<f64>,
}

/// What the timeline showed from the second a fault began until it had recovered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Effect {
    /// The seconds looked at, `[from_t, to_t]`.
    pub from_t: u32,
    pub to_t: u32,
    pub reconnects: u64,
    pub refused: u64,
    pub errors: u64,
    pub events_failed: u64,
    pub p99_ms_max: f64,
    pub backlog_events_max: u64,
}

/// Each record judged against the timeline.
pub fn judge(records: Vec<FaultRecord>, rows: &[SecondRow]) -> Vec<FaultRow> {
    records
        .into_iter()
        .map(|record| {
            let (recovered_t, effect) = match (record.began_s, record.ended_s) {
                (Some(b), Some(e)) if record.error.is_none() => {
                    let rt = recovered_at(rows, b, e);
                    (rt, effect(rows, b, rt.unwrap_or(u32::MAX)))
                }
                _ => (None, Effect::default()),
            };
            let recovery_s = recovered_t
                .zip(record.ended_s)
                .map(|(t, e)| (f64::from(t) - e).max(0.0));
            FaultRow {
                recovered: recovery_s.is_some(),
                recovered_t,
                recovery_s,
                effect,
                record,
            }
        })
        .collect()
}

/// The first second ending after `ended_s` that is back on schedule.
pub fn recovered_at(rows: &[SecondRow], began_s: f64, ended_s: f64) -> Option<u32> {
    let before = (began_s.floor() as u32).checked_sub(1);
    let base = before
        .and_then(|t| rows.iter().find(|r| r.t == t))
        .map_or(0, |r| r.backlog_events);
    rows.iter()
        .filter(|r| f64::from(r.t) >= ended_s.floor() && f64::from(r.t) + 1.0 > ended_s)
        .filter(|r| r.target_eps > 0.0)
        .find(|r| {
            let slack = (r.target_eps * 0.01).ceil() as u64;
            r.events_accepted as f64 >= RECOVERED_RATIO * r.target_eps
                && r.backlog_events <= base + slack
                && r.refused == 0
                && r.errors == 0
        })
        .map(|r| r.t)
}

/// The timeline's figures over `[floor(began_s), to_t]`.
pub fn effect(rows: &[SecondRow], began_s: f64, to_t: u32) -> Effect {
    let from_t = began_s.floor() as u32;
    let mut e = Effect {
        from_t,
        to_t: from_t,
        ..Effect::default()
    };
    for r in rows.iter().filter(|r| r.t >= from_t && r.t <= to_t) {
        e.to_t = r.t;
        e.reconnects += r.reconnects;
        e.refused += r.refused;
        e.errors += r.errors;
        e.events_failed += r.events_failed;
        e.p99_ms_max = e.p99_ms_max.max(r.p99_ms);
        e.backlog_events_max = e.backlog_events_max.max(r.backlog_events);
    }
    e
}

/// Gathers the latency outside fault windows while the run goes on: seconds that may fall
/// in a window (from a fault's planned begin to its planned end plus the recovery allowed)
/// are held by second; the rest go straight into `outside`. Once the faults are judged,
/// held seconds outside every actual window join it. A held second is kept serialized (V2:
/// bytes per latency bucket in use, hundreds to a few KiB, where a histogram is 180 KiB) in a
/// `Spill` (a temporary file), so a soak of many faults holds 16 bytes of memory per held
/// second, not kilobytes.
pub struct OutsideLatency {
    /// Planned `[from_s, until_s)` spans whose seconds are held.
    spans: Vec<(f64, f64)>,
    outside: Histogram<u64>,
    /// Each held second's histogram, V2-serialized, in `spill` (disk, not memory: a soak's
    /// faults do not grow the process).
    held: BTreeMap<u32, Block>,
    spill: Spill,
    serializer: V2Serializer,
}

impl OutsideLatency {
    /// `spans`: each fault's planned begin and end, seconds after the start; `allow`: the
    /// recovery allowed (`slo.max_recovery`), if any.
    pub fn new(spans: &[(f64, f64)], allow: Option<f64>) -> OutsideLatency {
        let after = allow.unwrap_or(0.0) + HOLD_AFTER_S;
        OutsideLatency {
            spans: spans.iter().map(|&(b, e)| (b.floor(), e + after)).collect(),
            outside: new_histogram(),
            held: BTreeMap::new(),
            spill: Spill::new(),
            serializer: V2Serializer::new(),
        }
    }

    /// One second's intended latency (a second given twice is held as their sum). A second
    /// that cannot be serialized (writing to memory does not fail) is counted outside:
    /// judged, rather than left out.
    pub fn add(&mut self, t: u32, h: &Histogram<u64>) {
        let s = f64::from(t);
        if !self.spans.iter().any(|&(b, e)| s + 1.0 > b && s < e) {
            let _ = self.outside.add(h);
            return;
        }
        let mut sum = self
            .held
            .remove(&t)
            .and_then(|b| self.spill.get(&b))
            .and_then(|b| thaw(&b));
        if let Some(held) = &mut sum
            && held.add(h).is_err()
        {
            sum = None;
        }
        let h = sum.as_ref().unwrap_or(h);
        let mut bytes = Vec::new();
        match self.serializer.serialize(h, &mut bytes) {
            Ok(_) => {
                let block = self.spill.put(&bytes);
                self.held.insert(t, block);
            }
            Err(_) => {
                let _ = self.outside.add(h);
            }
        }
    }

    /// The latency outside the windows the judged faults had: from the second each began
    /// to the one it recovered in, both included (to the end, when it did not).
    pub fn finish(mut self, rows: &[FaultRow]) -> Percentiles {
        let windows: Vec<(u32, u32)> = rows
            .iter()
            .filter_map(|r| {
                let b = r.record.began_s?.floor() as u32;
                Some((b, r.recovered_t.unwrap_or(u32::MAX)))
            })
            .collect();
        for (t, block) in &self.held {
            if !windows.iter().any(|&(b, to)| *t >= b && *t <= to)
                && let Some(h) = self.spill.get(block).and_then(|b| thaw(&b))
            {
                let _ = self.outside.add(&h);
            }
        }
        percentiles(&self.outside)
    }
}

/// A held second back as a histogram.
fn thaw(bytes: &[u8]) -> Option<Histogram<u64>> {
    Deserializer::new().deserialize(&mut &bytes[..]).ok()
}

/// The faults block of the text report: one line per fault, then the latency outside.
pub fn text(o: &mut String, f: &Faults) {
    use std::fmt::Write;
    let _ = writeln!(o);
    let _ = writeln!(o, "faults");
    for a in &f.actions {
        let r = &a.record;
        let when = match (r.began_s, r.ended_s) {
            (Some(b), Some(e)) if (e - b).abs() < 0.0005 => format!("at {b:.1}s"),
            (Some(b), Some(e)) => format!("{b:.1}s-{e:.1}s"),
            (Some(b), None) => format!("from {b:.1}s"),
            _ => format!("planned at {}s", r.at_s),
        };
        let mut line = format!("  [{}] {} {} {when}", r.index, r.action, r.target);
        if !r.pids.is_empty() {
            let pids: Vec<String> = r.pids.iter().map(u32::to_string).collect();
            let _ = write!(line, " pid {}", pids.join(","));
        }
        if let Some(p) = r.new_pid {
            let _ = write!(line, " -> pid {p}");
        }
        match (&r.error, a.recovery_s) {
            (Some(e), _) => {
                let _ = write!(line, ": FAILED: {e}");
            }
            (None, Some(rec)) => {
                let e = &a.effect;
                let _ = write!(
                    line,
                    ": recovered in {rec:.0}s; reconnects {}, refused {}, errors {}, failed {}, p99 max {:.1} ms, backlog max {}",
                    e.reconnects,
                    e.refused,
                    e.errors,
                    e.events_failed,
                    e.p99_ms_max,
                    e.backlog_events_max
                );
            }
            (None, None) => line.push_str(": NOT recovered by the end of the run"),
        }
        let _ = writeln!(o, "{line}");
        for n in &r.notes {
            let _ = writeln!(o, "      {n}");
        }
    }
    let p = &f.latency_outside_ms;
    let _ = writeln!(
        o,
        "  latency outside fault windows: {} answers, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        p.count, p.p50, p.p99, p.max
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: u32, target: f64, accepted: u64, backlog: u64) -> SecondRow {
        SecondRow {
            t,
            target_eps: target,
            events_sent: accepted,
            events_accepted: accepted,
            events_failed: 0,
            errors: 0,
            reconnects: 0,
            refused: 0,
            p50_ms: 1.0,
            p99_ms: 2.0,
            lag_ms_max: 0.0,
            backlog_events: backlog,
            watched_cores: None,
            watched_rss_bytes: None,
            own_cores: None,
            control: Vec::new(),
        }
    }

    /// A stall from 3.0 to 5.0 s at 100 eps: nothing accepted, backlog 200, caught up at 7.
    fn stalled() -> Vec<SecondRow> {
        vec![
            row(0, 100.0, 100, 0),
            row(1, 100.0, 100, 0),
            row(2, 100.0, 100, 0),
            row(3, 100.0, 0, 100),
            row(4, 100.0, 0, 200),
            row(5, 100.0, 150, 150),
            row(6, 100.0, 150, 100),
            row(7, 100.0, 200, 0),
            row(8, 100.0, 100, 0),
        ]
    }

    #[test]
    fn recovery_waits_for_the_backlog_to_clear() {
        let rows = stalled();
        assert_eq!(recovered_at(&rows, 3.0, 5.0), Some(7));
        // Ending mid-second: that second is not a clean one.
        assert_eq!(recovered_at(&rows, 3.0, 4.5), Some(7));
        // A fault with no visible effect recovers at once.
        assert_eq!(recovered_at(&rows, 1.2, 1.2), Some(1));
        // Never back on schedule.
        let mut bad = rows.clone();
        bad.truncate(7);
        assert_eq!(recovered_at(&bad, 3.0, 5.0), None);
        // A second still refusing is not recovered.
        let mut refusing = rows.clone();
        refusing[7].refused = 1;
        assert_eq!(recovered_at(&refusing, 3.0, 5.0), Some(8));
    }

    #[test]
    fn judged_rows_carry_the_effect_and_the_recovery() {
        let mut rows = stalled();
        rows[3].reconnects = 2;
        rows[5].refused = 7;
        rows[4].p99_ms = 2500.0;
        let rec = FaultRecord {
            began_s: Some(3.0),
            ended_s: Some(5.0),
            ..FaultRecord::default()
        };
        let failed = FaultRecord {
            began_s: Some(3.0),
            error: Some("no process named x".into()),
            ..FaultRecord::default()
        };
        let j = judge(vec![rec, failed], &rows);
        assert!(j[0].recovered);
        assert_eq!(j[0].recovery_s, Some(2.0));
        assert_eq!(
            j[0].effect,
            Effect {
                from_t: 3,
                to_t: 7,
                reconnects: 2,
                refused: 7,
                errors: 0,
                events_failed: 0,
                p99_ms_max: 2500.0,
                backlog_events_max: 200,
            }
        );
        assert!(!j[1].recovered);
        assert_eq!(j[1].recovery_s, None);
    }

    #[test]
    fn latency_outside_leaves_the_windows_out() {
        let mut o = OutsideLatency::new(&[(3.0, 5.0)], None);
        let mut fast = new_histogram();
        fast.record(1_000).unwrap();
        let mut slow = new_histogram();
        slow.record(4_000_000).unwrap();
        for t in 0..10 {
            o.add(t, if (3..8).contains(&t) { &slow } else { &fast });
        }
        let rows = judge(
            vec![FaultRecord {
                began_s: Some(3.0),
                ended_s: Some(5.0),
                ..FaultRecord::default()
            }],
            &stalled(),
        );
        let p = o.finish(&rows);
        assert_eq!(p.count, 5);
        assert!(p.max < 2.0, "{}", p.max);
    }

    #[test]
    fn a_held_second_is_small_and_a_second_given_twice_is_their_sum() {
        let mut o = OutsideLatency::new(&[(0.0, 1.0)], None);
        let mut h = new_histogram();
        for us in [800, 1_000, 1_200, 50_000, 2_000_000] {
            h.record(us).unwrap();
        }
        o.add(2, &h);
        o.add(2, &h);
        assert!(
            matches!(o.held[&2], Block::Disk { len, .. } if len < 1024),
            "{:?}",
            o.held[&2]
        );
        // No fault began: nothing is left out.
        let p = o.finish(&[]);
        assert_eq!(p.count, 10);
        assert!((p.max - 2000.0).abs() < 2.0, "{}", p.max);
    }
}
