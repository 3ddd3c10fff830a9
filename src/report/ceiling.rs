//! The ceiling search in the report: one row per step (offered, achieved, p50/p99, errors,
//! 429/503, verdict and what held the step back) and the result — the highest rate the
//! target sustained, the first rate it did not, and whose limit that was. Plain data with
//! its text table and CSV; the search itself is `run::ceiling`.

use std::fmt::Write;

use serde::Serialize;

use crate::report::csv::field;

/// How a step came about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Stepping up geometrically from the first rate.
    Up,
    /// Stepping down, because even the first rate was not sustained.
    Down,
    /// Halving the gap between the last good and the first bad rate.
    Bisect,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Up => "up",
            Phase::Down => "down",
            Phase::Bisect => "bisect",
        }
    }
}

/// One step: a steady run at `target_eps`, judged over its hold (after its warm-up).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct StepRow {
    pub step: u32,
    pub phase: Phase,
    pub run_id: String,
    /// The rate offered: the schedule (events due over the hold, per second).
    pub target_eps: f64,
    /// Accepted over the hold itself (answers that came in the drain after it left out).
    pub achieved_eps: f64,
    pub eps_ratio: f64,
    /// Intended (coordinated-omission free) latency, ms.
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub service_p99_ms: f64,
    pub events_failed: u64,
    /// Failed batches and transport errors (connects, resets, timeouts, protocol errors).
    pub errors: u64,
    /// Answers 429 or 503 (and HEC code 9, server busy).
    pub refused: u64,
    /// Events due and not yet sent at the end of the hold.
    pub backlog_events: u64,
    pub lag_ms_max: f64,
    pub worker_cpu_share: f64,
    pub sustained: bool,
    /// For a step that was not sustained: `target`, `target down`, `request cap` or
    /// `generator`.
    #[serde(deserialize_with = "crate::report::de::leak_opt")]
    pub limited_by: Option<&'static str>,
    /// Why it was not sustained, one phrase each (empty when it was).
    pub why: Vec<String>,
    /// The step was stopped before the end of its hold because it could no longer pass.
    pub stopped_early: bool,
    /// Accepted events the built-in sink did not hold, plus those it held twice.
    pub lost_or_doubled: u64,
}

/// What the search found.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Ceiling {
    /// The highest rate sustained (null: not even the lowest rate tried).
    pub ceiling_eps: Option<f64>,
    /// The lowest rate not sustained above it (null: every step up to `max_eps` held).
    pub first_failed_eps: Option<f64>,
    /// The precision asked for: the search ends when the gap is within this share.
    pub precision: f64,
    /// The gap reached, as a share of the ceiling.
    pub gap: Option<f64>,
    /// Whose limit the ceiling is: `target`, `target down`, `request cap`, `generator`,
    /// `max_eps` (the search's own bound); or no ceiling was found: `out of steps`
    /// (`max_steps` ran out), `out of time` (`probe --ceiling`: the time left ran out),
    /// `aborted` (a step aborted the search).
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub limited_by: &'static str,
    /// The limit in words.
    pub detail: String,
    pub hold_s: f64,
    pub warmup_s: f64,
    pub steps: Vec<StepRow>,
}

/// The columns of the step table CSV, in order: keys of a `ceiling.steps` row.
pub const COLUMNS: [&str; 17] = [
    "step",
    "phase",
    "target_eps",
    "achieved_eps",
    "eps_ratio",
    "p50_ms",
    "p99_ms",
    "service_p99_ms",
    "events_failed",
    "errors",
    "refused",
    "backlog_events",
    "lag_ms_max",
    "worker_cpu_share",
    "sustained",
    "limited_by",
    "why",
];

/// The step table as CSV (RFC 4180 quoting, LF line ends).
pub fn csv(c: &Ceiling) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for s in &c.steps {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.step,
            s.phase.as_str(),
            s.target_eps,
            s.achieved_eps,
            s.eps_ratio,
            s.p50_ms,
            s.p99_ms,
            s.service_p99_ms,
            s.events_failed,
            s.errors,
            s.refused,
            s.backlog_events,
            s.lag_ms_max,
            s.worker_cpu_share,
            s.sustained,
            s.limited_by.unwrap_or(""),
            field(&s.why.join("; ")),
        );
    }
    out
}

/// One step as a progress line: rate, achieved, p99, and the verdict with its reasons.
pub fn step_line(s: &StepRow) -> String {
    let verdict = if s.sustained {
        "sustained".to_string()
    } else {
        format!(
            "NOT sustained ({}): {}",
            s.limited_by.unwrap_or("?"),
            s.why.join("; ")
        )
    };
    format!(
        "step {:>2} {:<6} {:>10.0} eps  achieved {:>10.0}  p99 {:>8.2} ms  {verdict}",
        s.step,
        s.phase.as_str(),
        s.target_eps,
        s.achieved_eps,
        s.p99_ms
    )
}

/// The result in one sentence.
pub fn headline(c: &Ceiling) -> String {
    match (c.ceiling_eps, c.limited_by) {
        (held, "aborted") => format!(
            "the search stopped: a step aborted{} ({})",
            held.map(|x| format!(" after {x:.0} eps held"))
                .unwrap_or_default(),
            c.detail
        ),
        (None, _) => format!(
            "no rate tried was sustained (lowest tried {:.0} eps): {}",
            c.steps
                .iter()
                .map(|s| s.target_eps)
                .fold(f64::MAX, f64::min),
            c.detail
        ),
        (Some(x), "max_eps") => format!(
            "at least {x:.0} eps: every step up to the search's max_eps held ({})",
            c.detail
        ),
        (Some(x), "generator") => format!(
            "the target's ceiling is above {x:.0} eps: the generator, not the target, could go no further ({})",
            c.detail
        ),
        (Some(x), "request cap") => format!(
            "{x:.0} eps under limits.max_requests_per_sec, not the target's ceiling ({})",
            c.detail
        ),
        (Some(x), who @ ("out of steps" | "out of time")) => {
            format!("{who}: held {x:.0} eps, no ceiling found ({})", c.detail)
        }
        (Some(x), who) => {
            let above = c
                .first_failed_eps
                .map(|b| format!(", not at {b:.0} eps"))
                .unwrap_or_default();
            format!(
                "{x:.0} eps sustained{above}: limited by the {who} ({})",
                c.detail
            )
        }
    }
}

/// The step table and the result, for the text report.
pub fn text(o: &mut String, c: &Ceiling) {
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Ceiling search ({} steps, each {:.0} s warm-up + {:.0} s judged; precision {:.0} %)",
        c.steps.len(),
        c.warmup_s,
        c.hold_s,
        c.precision * 100.0
    );
    let _ = writeln!(
        o,
        "  {:>4} {:<6} {:>11} {:>11} {:>9} {:>9} {:>9} {:>8} {:>8}  verdict",
        "step", "phase", "offered", "achieved", "p50 ms", "p99 ms", "svc p99", "errors", "429/503"
    );
    for s in &c.steps {
        let verdict = if s.sustained {
            "sustained".to_string()
        } else {
            format!(
                "NOT sustained{}: {}",
                s.limited_by.map(|w| format!(" ({w})")).unwrap_or_default(),
                s.why.join("; ")
            )
        };
        let _ = writeln!(
            o,
            "  {:>4} {:<6} {:>11.0} {:>11.0} {:>9.2} {:>9.2} {:>9.2} {:>8} {:>8}  {verdict}{}",
            s.step,
            s.phase.as_str(),
            s.target_eps,
            s.achieved_eps,
            s.p50_ms,
            s.p99_ms,
            s.service_p99_ms,
            s.errors,
            s.refused,
            if s.stopped_early {
                " (stopped early)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(o, "ceiling  {}", headline(c));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: u32, eps: f64, ok: bool) -> StepRow {
        StepRow {
            step: n,
            phase: Phase::Up,
            run_id: format!("r-1-c{n:02}"),
            target_eps: eps,
            achieved_eps: if ok { eps } else { eps * 0.8 },
            eps_ratio: if ok { 1.0 } else { 0.8 },
            p50_ms: 1.0,
            p99_ms: 2.5,
            service_p99_ms: 2.0,
            events_failed: 0,
            errors: 0,
            refused: if ok { 0 } else { 12 },
            backlog_events: 0,
            lag_ms_max: 0.5,
            worker_cpu_share: 0.1,
            sustained: ok,
            limited_by: (!ok).then_some("target"),
            why: if ok {
                vec![]
            } else {
                vec![
                    "refused 12 requests (429/503)".into(),
                    "achieved 80 %, below 99 %".into(),
                ]
            },
            stopped_early: false,
            lost_or_doubled: 0,
        }
    }

    fn ceiling() -> Ceiling {
        Ceiling {
            ceiling_eps: Some(1000.0),
            first_failed_eps: Some(2000.0),
            precision: 0.05,
            gap: Some(1.0),
            limited_by: "target",
            detail: "refused 12 requests (429/503)".into(),
            hold_s: 10.0,
            warmup_s: 2.0,
            steps: vec![step(1, 1000.0, true), step(2, 2000.0, false)],
        }
    }

    #[test]
    fn the_csv_has_one_row_per_step_and_quotes_the_reasons() {
        let text = csv(&ceiling());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].split(',').count(), COLUMNS.len());
        assert!(lines[1].starts_with("1,up,1000,1000,1,"), "{}", lines[1]);
        assert!(lines[1].ends_with(",true,,"), "{}", lines[1]);
        assert!(
            lines[2].ends_with(
                ",false,target,\"refused 12 requests (429/503); achieved 80 %, below 99 %\""
            ),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn the_headline_says_whose_limit_it_is() {
        let mut c = ceiling();
        assert_eq!(
            headline(&c),
            "1000 eps sustained, not at 2000 eps: limited by the target (refused 12 requests (429/503))"
        );
        c.limited_by = "generator";
        assert!(headline(&c).starts_with("the target's ceiling is above 1000 eps"));
        c.ceiling_eps = None;
        assert!(headline(&c).starts_with("no rate tried was sustained (lowest tried 1000 eps)"));
    }

    #[test]
    fn the_table_marks_each_step() {
        let mut o = String::new();
        text(&mut o, &ceiling());
        assert!(o.contains("sustained"), "{o}");
        assert!(
            o.contains("NOT sustained (target): refused 12 requests"),
            "{o}"
        );
        assert!(o.contains("ceiling  1000 eps sustained"), "{o}");
    }
}
