//! The sizing table (Signalith's): for a `steps` run, one row per step — the rate asked for,
//! offered (sent) and accepted events/s, stored events/s where the target can tell, the p99
//! answer, errors, and with watched processes the busiest one's CPU in cores and the most
//! memory of one — each over the step's seconds after its own warm-up (`workload.step_warmup`),
//! so a row is the step's steady state. Plain data built from the run's per-second rows and
//! what was gathered beside them (per-step latency histograms, the sink's stored counts, the
//! watched processes' seconds); a text table and CSV.

use std::fmt::Write;

use serde::Serialize;

use crate::report::SecondRow;

/// The seconds of the run a step's row is measured over: `[from_t, to_t)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepSpan {
    pub eps: f64,
    pub from_t: u32,
    pub to_t: u32,
}

/// The spans of `steps` (`(eps, hold_s)` in order), each leaving out its first
/// `step_warmup_s` (default: 2 s, or a quarter of a shorter step), in whole seconds as the
/// rows are.
pub fn spans(steps: &[(f64, f64)], step_warmup_s: Option<f64>) -> Vec<StepSpan> {
    let mut start = 0.0;
    steps
        .iter()
        .map(|&(eps, hold)| {
            let warm = step_warmup_s.unwrap_or((hold / 4.0).min(2.0));
            let from = (start + warm).ceil() as u32;
            let to = ((start + hold).floor() as u32).max(from);
            start += hold;
            StepSpan {
                eps,
                from_t: from,
                to_t: to,
            }
        })
        .collect()
}

/// One watched process's second, for the table: who, cores, resident bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchedSecond {
    pub t: u32,
    /// `(who, cores, rss_bytes)` per process or cgroup (`who` e.g. `syslog-ng[1234]`).
    pub each: Vec<(String, f64, u64)>,
}

/// What the table is built from.
pub struct Input<'a> {
    pub spans: &'a [StepSpan],
    pub timeline: &'a [SecondRow],
    /// Per step: the p99 of the intended latency of the answers in its span, ms.
    pub p99_ms: &'a [Option<f64>],
    /// `(elapsed_s, distinct events stored)` samples of the built-in sink, when it is the target.
    pub stored: Option<&'a [(f64, u64)]>,
    pub watched: Option<&'a [WatchedSecond]>,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SizingRow {
    pub step: u32,
    /// The rate the step asked for.
    pub target_eps: f64,
    /// The seconds the row is measured over (after the step's warm-up).
    pub from_s: u32,
    pub to_s: u32,
    /// Sent, accepted, and stored per second over them.
    pub offered_eps: f64,
    pub accepted_eps: f64,
    pub stored_eps: Option<f64>,
    pub p99_ms: Option<f64>,
    pub errors: u64,
    /// The watched process (or cgroup) with the most CPU over the span, and its mean cores.
    pub busiest: Option<String>,
    pub busiest_cores: Option<f64>,
    /// The watched process (or cgroup) with the most resident memory in the span, and it.
    pub most_memory: Option<String>,
    pub most_memory_bytes: Option<u64>,
}

pub fn build(i: &Input) -> Vec<SizingRow> {
    i.spans
        .iter()
        .enumerate()
        .map(|(k, s)| row(i, k, s))
        .collect()
}

fn row(i: &Input, k: usize, s: &StepSpan) -> SizingRow {
    let rows: Vec<&SecondRow> = i
        .timeline
        .iter()
        .filter(|r| r.t >= s.from_t && r.t < s.to_t)
        .collect();
    let secs = f64::from(s.to_t - s.from_t);
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let (busiest, most_memory) = i.watched.map_or((None, None), |w| watched(w, s));
    SizingRow {
        step: k as u32 + 1,
        target_eps: s.eps,
        from_s: s.from_t,
        to_s: s.to_t,
        offered_eps: per_s(rows.iter().map(|r| r.events_sent).sum()),
        accepted_eps: per_s(rows.iter().map(|r| r.events_accepted).sum()),
        stored_eps: i.stored.map(|st| {
            let n =
                stored_at(st, f64::from(s.to_t)).saturating_sub(stored_at(st, f64::from(s.from_t)));
            per_s(n)
        }),
        p99_ms: i.p99_ms.get(k).copied().flatten(),
        errors: rows.iter().map(|r| r.errors).sum(),
        busiest_cores: busiest.as_ref().map(|b| b.1),
        busiest: busiest.map(|b| b.0),
        most_memory_bytes: most_memory.as_ref().map(|m| m.1),
        most_memory: most_memory.map(|m| m.0),
    }
}

/// The stored count at `t` seconds, read between the samples around it (snapshots come
/// about once a second, not on the second); 0 at the start, the last count after the end.
fn stored_at(samples: &[(f64, u64)], t: f64) -> u64 {
    let mut before = (0.0, 0u64);
    for &(at, n) in samples {
        if at >= t {
            if at <= before.0 {
                return n;
            }
            let share = (t - before.0) / (at - before.0);
            return before.1 + ((n.saturating_sub(before.1)) as f64 * share).round() as u64;
        }
        before = (at, n);
    }
    before.1
}

type Pick = Option<(String, f64)>;
type PickBytes = Option<(String, u64)>;

/// Over the span: the process with the highest mean cores, and the one with the most memory.
fn watched(w: &[WatchedSecond], s: &StepSpan) -> (Pick, PickBytes) {
    let secs: Vec<&WatchedSecond> = w
        .iter()
        .filter(|x| x.t >= s.from_t && x.t < s.to_t)
        .collect();
    if secs.is_empty() {
        return (None, None);
    }
    let mut cores: Vec<(String, f64)> = Vec::new();
    let mut memory: PickBytes = None;
    for x in &secs {
        for (who, c, rss) in &x.each {
            match cores.iter_mut().find(|(w, _)| w == who) {
                Some(e) => e.1 += c,
                None => cores.push((who.clone(), *c)),
            }
            if memory.as_ref().is_none_or(|m| *rss > m.1) {
                memory = Some((who.clone(), *rss));
            }
        }
    }
    let n = secs.len() as f64;
    let busiest = cores
        .into_iter()
        .map(|(w, c)| (w, c / n))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    (busiest, memory)
}

/// The columns of the sizing CSV: keys of a `sizing` row.
pub const COLUMNS: [&str; 13] = [
    "step",
    "target_eps",
    "from_s",
    "to_s",
    "offered_eps",
    "accepted_eps",
    "stored_eps",
    "p99_ms",
    "errors",
    "busiest",
    "busiest_cores",
    "most_memory",
    "most_memory_bytes",
];

pub fn csv(rows: &[SizingRow]) -> String {
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.step,
            r.target_eps,
            r.from_s,
            r.to_s,
            r.offered_eps,
            r.accepted_eps,
            opt(r.stored_eps),
            opt(r.p99_ms),
            r.errors,
            crate::report::csv::field(r.busiest.as_deref().unwrap_or("")),
            opt(r.busiest_cores),
            crate::report::csv::field(r.most_memory.as_deref().unwrap_or("")),
            r.most_memory_bytes
                .map(|b| b.to_string())
                .unwrap_or_default(),
        );
    }
    out
}

/// The table for the text report.
pub fn text(o: &mut String, rows: &[SizingRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Sizing (per step, after its warm-up; stored: what the target says it has)"
    );
    let _ = writeln!(
        o,
        "  {:>4} {:>11} {:>9} {:>11} {:>11} {:>11} {:>9} {:>7}  {:<28} {:<28}",
        "step",
        "target eps",
        "seconds",
        "offered",
        "accepted",
        "stored",
        "p99 ms",
        "errors",
        "busiest (cores)",
        "most memory"
    );
    let dash = || "—".to_string();
    for r in rows {
        let _ = writeln!(
            o,
            "  {:>4} {:>11.0} {:>9} {:>11.0} {:>11.0} {:>11} {:>9} {:>7}  {:<28} {:<28}",
            r.step,
            r.target_eps,
            format!("{}-{}", r.from_s, r.to_s),
            r.offered_eps,
            r.accepted_eps,
            r.stored_eps.map_or_else(dash, |v| format!("{v:.0}")),
            r.p99_ms.map_or_else(dash, |v| format!("{v:.2}")),
            r.errors,
            match (&r.busiest, r.busiest_cores) {
                (Some(w), Some(c)) => format!("{w} {c:.2}"),
                _ => dash(),
            },
            match (&r.most_memory, r.most_memory_bytes) {
                (Some(w), Some(b)) => format!("{w} {:.1} MiB", b as f64 / 1048576.0),
                _ => dash(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(t: u32, sent: u64, accepted: u64, errors: u64) -> SecondRow {
        SecondRow {
            t,
            target_eps: 0.0,
            events_sent: sent,
            events_accepted: accepted,
            events_failed: 0,
            errors,
            reconnects: 0,
            refused: 0,
            p50_ms: 0.0,
            p99_ms: 0.0,
            lag_ms_max: 0.0,
            backlog_events: 0,
            watched_cores: None,
            watched_rss_bytes: None,
            own_cores: None,
            control: Vec::new(),
        }
    }

    #[test]
    fn spans_leave_out_each_steps_warm_up() {
        let s = spans(&[(100.0, 5.0), (200.0, 5.0), (400.0, 1.5)], Some(2.0));
        assert_eq!(
            s.iter().map(|x| (x.from_t, x.to_t)).collect::<Vec<_>>(),
            [(2, 5), (7, 10), (12, 12)]
        );
    }

    #[test]
    fn rows_add_up_their_seconds() {
        let sp = spans(&[(100.0, 4.0), (200.0, 4.0)], None);
        let timeline: Vec<SecondRow> = (0..8)
            .map(|t| {
                let eps = if t < 4 { 100 } else { 200 };
                second(t, eps, eps - 10, u64::from(t == 6))
            })
            .collect();
        let stored = [(1.0, 100), (3.5, 340), (4.5, 490), (5.5, 690), (8.0, 1160)];
        let watched: Vec<WatchedSecond> = (0..8)
            .map(|t| WatchedSecond {
                t,
                each: vec![
                    (
                        "a[1]".into(),
                        if t < 4 { 0.2 } else { 0.5 },
                        100 + u64::from(t),
                    ),
                    ("b[2]".into(), 0.3, 50),
                ],
            })
            .collect();
        let rows = build(&Input {
            spans: &sp,
            timeline: &timeline,
            p99_ms: &[Some(3.5), None],
            stored: Some(&stored),
            watched: Some(&watched),
        });
        assert_eq!(rows.len(), 2);
        let r = &rows[0];
        assert_eq!((r.from_s, r.to_s), (1, 4));
        assert_eq!(r.offered_eps, 100.0);
        assert_eq!(r.accepted_eps, 90.0);
        // 415 at 4 s (between 340 at 3.5 and 490 at 4.5), 100 at 1 s.
        assert_eq!(r.stored_eps, Some((415.0 - 100.0) / 3.0));
        assert_eq!(r.p99_ms, Some(3.5));
        assert_eq!(r.busiest.as_deref(), Some("b[2]"));
        assert_eq!(r.busiest_cores, Some(0.3));
        assert_eq!(r.most_memory_bytes, Some(103));
        let r = &rows[1];
        assert_eq!((r.offered_eps, r.errors), (200.0, 1));
        assert_eq!(r.busiest.as_deref(), Some("a[1]"));
        // 1160 at 8 s; 590 at 5 s (between 490 at 4.5 and 690 at 5.5).
        assert_eq!(r.stored_eps, Some((1160.0 - 590.0) / 3.0));
        let text = csv(&rows);
        assert!(text.starts_with("step,target_eps,from_s"), "{text}");
        assert_eq!(text.lines().count(), 3);
        let mut o = String::new();
        super::text(&mut o, &rows);
        assert!(o.contains("a[1] 0.50"), "{o}");
    }
}
