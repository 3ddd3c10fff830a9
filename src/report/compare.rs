//! Saved reports set side by side: `report compare` (Datadog SMP's model — replicates per
//! side, a confidence level, an effect-size threshold) and `report list`. A replicate is the
//! handful of figures a regression gate reads from a saved report (achieved eps, both
//! clocks' p50 and p99, the error rate, the watched processes' CPU and peak memory). Per
//! metric: each side's mean, the difference of the means with its Welch t interval (the
//! difference alone with one replicate a side), the change relative to the baseline, and a
//! verdict: `worse` or `better` when the interval excludes no change and the change is at
//! least the threshold, `no significant change` otherwise.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;
use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// One figure a comparison reads: its name, where a report has it, which way is better, and
/// the least baseline a relative change is taken against (a zero error rate would make any
/// error an infinite change).
struct Metric {
    name: &'static str,
    pointer: &'static str,
    higher_is_better: bool,
    floor: f64,
}

const METRICS: &[Metric] = &[
    Metric {
        name: "achieved_eps",
        pointer: "/summary/achieved_eps",
        higher_is_better: true,
        floor: 1.0,
    },
    Metric {
        name: "intended_p50_ms",
        pointer: "/latency_ms/intended/p50",
        higher_is_better: false,
        floor: 0.001,
    },
    Metric {
        name: "intended_p99_ms",
        pointer: "/latency_ms/intended/p99",
        higher_is_better: false,
        floor: 0.001,
    },
    Metric {
        name: "service_p50_ms",
        pointer: "/latency_ms/service/p50",
        higher_is_better: false,
        floor: 0.001,
    },
    Metric {
        name: "service_p99_ms",
        pointer: "/latency_ms/service/p99",
        higher_is_better: false,
        floor: 0.001,
    },
    Metric {
        name: "error_rate",
        pointer: "/summary/error_rate",
        higher_is_better: false,
        floor: 0.001,
    },
    Metric {
        name: "watched_cpu_cores",
        pointer: "/watched/total/cores_mean",
        higher_is_better: false,
        floor: 0.01,
    },
    Metric {
        name: "watched_rss_bytes",
        pointer: "/watched/total/rss_peak_bytes",
        higher_is_better: false,
        floor: 1_048_576.0,
    },
];

/// How to judge: the least relative change that counts and the intervals' confidence (both
/// fractions), and the metrics whose regression fails the comparison (all when `None`).
pub struct Settings {
    pub threshold: f64,
    pub confidence: f64,
    pub gate: Option<Vec<String>>,
}

/// `5%` or `0.05` as a fraction in (0, 1).
pub fn percent(flag: &str, v: &str) -> Result<f64, String> {
    let t = v.trim();
    let x = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("{flag} {v:?}: expected a percentage such as 5% (or 0.05)"))?;
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(format!("{flag} {v:?}: must lie between 0% and 100%"))
    }
}

/// The figures of one saved report, and its own verdict.
pub struct Replicate {
    pub file: String,
    values: BTreeMap<&'static str, f64>,
    /// The report's own exit code and reasons (0: it passed).
    exit_code: i32,
    reasons: Vec<String>,
}

impl Replicate {
    /// A saved report read by the one reader (`de::read`: what `report show` refuses is
    /// refused here too); a metric the report has as `null` (a percentile with too few
    /// samples, an aborted run's) is not in it.
    pub fn read(file: &str, text: &str) -> Result<Replicate, String> {
        let (rep, v) = super::de::read_with_json(file, text)?;
        Ok(Replicate::of(file, &rep, &v))
    }

    /// The figures of `rep`, read from its JSON `v`.
    fn of(file: &str, rep: &super::Report, v: &Value) -> Replicate {
        let values = METRICS
            .iter()
            .filter_map(|m| {
                v.pointer(m.pointer)
                    .and_then(Value::as_f64)
                    .map(|x| (m.name, x))
            })
            .collect();
        Replicate {
            file: file.to_string(),
            values,
            exit_code: rep.verdict.exit_code,
            reasons: rep.verdict.reasons.clone(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Comparison {
    pub confidence: f64,
    pub threshold: f64,
    pub baseline: Vec<String>,
    pub candidate: Vec<String>,
    pub metrics: Vec<Row>,
    /// Metrics not in every replicate of both sides, left out.
    pub skipped: Vec<String>,
    /// The gated metrics that are worse.
    pub regressed: Vec<String>,
    /// Why the gate fails beside a worse metric, one line each: a gated metric that cannot
    /// be compared (missing from a replicate, e.g. an aborted run's latency), a replicate
    /// whose own verdict is a failure.
    pub gate_failures: Vec<String>,
}

impl Comparison {
    /// Whether the gate fails (exit 3).
    pub fn failed(&self) -> bool {
        !self.regressed.is_empty() || !self.gate_failures.is_empty()
    }
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub metric: &'static str,
    pub higher_is_better: bool,
    pub gated: bool,
    pub baseline: f64,
    pub candidate: f64,
    /// Candidate minus baseline, and its interval.
    pub diff: f64,
    pub diff_low: f64,
    pub diff_high: f64,
    /// The same relative to the baseline, in percent.
    pub change_pct: f64,
    pub change_low_pct: f64,
    pub change_high_pct: f64,
    pub verdict: &'static str,
}

pub fn compare(base: &[Replicate], cand: &[Replicate], s: &Settings) -> Result<Comparison, String> {
    if let Some(g) = &s.gate
        && let Some(bad) = g
            .iter()
            .find(|n| !METRICS.iter().any(|m| m.name == n.as_str()))
    {
        let names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        return Err(format!(
            "--gate {bad:?}: not a metric; the metrics are {}",
            names.join(", ")
        ));
    }
    // Without --gate, every metric some report measured is gated.
    let gated = |name: &str| match &s.gate {
        Some(g) => g.iter().any(|n| n == name),
        None => base.iter().chain(cand).any(|r| r.values.contains_key(name)),
    };
    let mut metrics = Vec::new();
    let mut skipped = Vec::new();
    let mut gate_failures = Vec::new();
    for m in METRICS {
        let (Some(b), Some(c)) = (values(base, m.name), values(cand, m.name)) else {
            if base
                .iter()
                .chain(cand)
                .any(|r| r.values.contains_key(m.name))
            {
                skipped.push(m.name.to_string());
            }
            if gated(m.name) {
                gate_failures.push(format!(
                    "{}: gated and cannot be compared: not in {}",
                    m.name,
                    lacking(base, cand, m.name)
                ));
            }
            continue;
        };
        metrics.push(row(m, &b, &c, s, gated(m.name)));
    }
    gate_failures.extend(own_failures(base, cand));
    let regressed = metrics
        .iter()
        .filter(|r| r.gated && r.verdict == "worse")
        .map(|r| r.metric.to_string())
        .collect();
    Ok(Comparison {
        confidence: s.confidence,
        threshold: s.threshold,
        baseline: base.iter().map(|r| r.file.clone()).collect(),
        candidate: cand.iter().map(|r| r.file.clone()).collect(),
        metrics,
        skipped,
        regressed,
        gate_failures,
    })
}

/// The replicates whose own verdict is a failure (an aborted run, an SLO breach): a gate
/// passes only runs that passed.
fn own_failures(base: &[Replicate], cand: &[Replicate]) -> Vec<String> {
    let mut v = Vec::new();
    for (side, reps) in [("baseline", base), ("candidate", cand)] {
        for r in reps.iter().filter(|r| r.exit_code != 0) {
            let why = match r.reasons.as_slice() {
                [] => String::new(),
                w => format!(": {}", w.join("; ")),
            };
            v.push(format!(
                "{side} {}: its own verdict is FAIL (exit {}){why}",
                r.file, r.exit_code
            ));
        }
    }
    v
}

/// The replicates that lack `name`, by side and file.
fn lacking(base: &[Replicate], cand: &[Replicate], name: &str) -> String {
    let mut v = Vec::new();
    for (side, reps) in [("baseline", base), ("candidate", cand)] {
        for r in reps.iter().filter(|r| !r.values.contains_key(name)) {
            v.push(format!("{side} {}", r.file));
        }
    }
    if v.is_empty() {
        "every replicate".into()
    } else {
        v.join(", ")
    }
}

/// The metric's value in every replicate, or `None` when one lacks it.
fn values(side: &[Replicate], name: &str) -> Option<Vec<f64>> {
    side.iter().map(|r| r.values.get(name).copied()).collect()
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() > 1 {
        x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

/// The half-width of the Welch interval of the difference of the means (0 with one
/// replicate a side, or no spread).
fn half_width(b: &[f64], c: &[f64], confidence: f64) -> f64 {
    let ((_, vb), (_, vc)) = (mean_var(b), mean_var(c));
    let (nb, nc) = (b.len() as f64, c.len() as f64);
    let (qb, qc) = (vb / nb, vc / nc);
    let se = (qb + qc).sqrt();
    if se == 0.0 || b.len() < 2 || c.len() < 2 {
        return 0.0;
    }
    let df = (qb + qc).powi(2) / (qb * qb / (nb - 1.0) + qc * qc / (nc - 1.0));
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(0.5 + confidence / 2.0) * se,
        Err(_) => 0.0,
    }
}

fn row(m: &Metric, b: &[f64], c: &[f64], s: &Settings, gated: bool) -> Row {
    let ((mb, _), (mc, _)) = (mean_var(b), mean_var(c));
    let diff = mc - mb;
    let h = half_width(b, c, s.confidence);
    let (low, high) = (diff - h, diff + h);
    let base = mb.abs().max(m.floor);
    let rel = |d: f64| d / base * 100.0;
    let excludes_zero = low > 0.0 || high < 0.0;
    let big = diff.abs() / base >= s.threshold;
    let verdict = match (excludes_zero && big, (diff > 0.0) == m.higher_is_better) {
        (false, _) => "no significant change",
        (true, true) => "better",
        (true, false) => "worse",
    };
    Row {
        metric: m.name,
        higher_is_better: m.higher_is_better,
        gated,
        baseline: mb,
        candidate: mc,
        diff,
        diff_low: low,
        diff_high: high,
        change_pct: rel(diff),
        change_low_pct: rel(low),
        change_high_pct: rel(high),
        verdict,
    }
}

pub fn text(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "baseline  {} replicate(s), candidate {}; {:.0}% confidence, threshold {:.1}%",
        c.baseline.len(),
        c.candidate.len(),
        c.confidence * 100.0,
        c.threshold * 100.0
    );
    let _ = writeln!(
        o,
        "{:<18} {:>14} {:>14} {:>10} {:>24}  verdict",
        "metric", "baseline", "candidate", "change", "interval"
    );
    for r in &c.metrics {
        let gate = if r.gated { "" } else { " (not gated)" };
        let _ = writeln!(
            o,
            "{:<18} {:>14} {:>14} {:>+9.2}% {:>24}  {}{gate}",
            r.metric,
            num(r.baseline),
            num(r.candidate),
            r.change_pct,
            format!("[{:+.2}%, {:+.2}%]", r.change_low_pct, r.change_high_pct),
            r.verdict
        );
    }
    if !c.skipped.is_empty() {
        let _ = writeln!(
            o,
            "left out (not in every replicate): {}",
            c.skipped.join(", ")
        );
    }
    for f in &c.gate_failures {
        let _ = writeln!(o, "gate: {f}");
    }
    let _ = match (c.regressed.as_slice(), c.gate_failures.len()) {
        ([], 0) => writeln!(o, "PASS  no gated metric worse"),
        ([], n) => writeln!(o, "FAIL  exit 3: {n} gate failure(s) above"),
        (r, 0) => writeln!(o, "FAIL  exit 3: worse: {}", r.join(", ")),
        (r, n) => writeln!(
            o,
            "FAIL  exit 3: worse: {}; {n} gate failure(s) above",
            r.join(", ")
        ),
    };
    o
}

fn num(x: f64) -> String {
    if x.abs() >= 1000.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// One saved report as `report list` shows it.
#[derive(Debug, Serialize)]
pub struct ListRow {
    pub file: String,
    pub started_at: String,
    pub run_id: String,
    pub name: Option<String>,
    /// `shard I/N`, `merged N shards`, or empty for a run of one process.
    pub kind: String,
    pub achieved_eps: Option<f64>,
    pub intended_p99_ms: Option<f64>,
    pub exit_code: Option<i64>,
}

impl ListRow {
    pub fn read(file: &str, text: &str) -> Result<ListRow, String> {
        let rep = super::de::read(file, text)?;
        let v = serde_json::to_value(&rep).unwrap_or(Value::Null);
        let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
        let f = |p: &str| v.pointer(p).and_then(Value::as_f64);
        let kind = match (v.get("shard"), v.pointer("/merged/shards")) {
            (Some(sh), _) if !sh.is_null() => format!(
                "shard {}/{}",
                sh["index"].as_u64().unwrap_or(0),
                sh["count"].as_u64().unwrap_or(0)
            ),
            (_, Some(Value::Array(a))) => format!("merged {} shards", a.len()),
            _ => String::new(),
        };
        Ok(ListRow {
            file: file.to_string(),
            started_at: s("/started_at").unwrap_or_default(),
            run_id: s("/run_id").unwrap_or_default(),
            name: s("/name"),
            kind,
            achieved_eps: f("/summary/achieved_eps"),
            intended_p99_ms: f("/latency_ms/intended/p99"),
            exit_code: v.pointer("/verdict/exit_code").and_then(Value::as_i64),
        })
    }
}

pub fn list_text(rows: &[ListRow]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<24} {:<16} {:<18} {:<16} {:>10} {:>10}  verdict  file",
        "started", "run", "name", "kind", "eps", "p99 ms"
    );
    for r in rows {
        let verdict = match r.exit_code {
            Some(0) => "PASS".to_string(),
            Some(n) => format!("FAIL {n}"),
            None => "-".into(),
        };
        let _ = writeln!(
            o,
            "{:<24} {:<16} {:<18} {:<16} {:>10} {:>10}  {:<7}  {}",
            r.started_at,
            r.run_id,
            r.name.as_deref().unwrap_or("-"),
            if r.kind.is_empty() { "-" } else { &r.kind },
            r.achieved_eps.map_or("-".into(), |x| format!("{x:.0}")),
            r.intended_p99_ms.map_or("-".into(), |x| format!("{x:.3}")),
            verdict,
            r.file
        );
    }
    let _ = writeln!(o, "{} report(s)", rows.len());
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(eps: f64, p99: f64) -> Replicate {
        let values = [
            ("achieved_eps", eps),
            ("intended_p99_ms", p99),
            ("error_rate", 0.0),
        ]
        .into_iter()
        .collect();
        Replicate {
            file: "r.json".into(),
            values,
            exit_code: 0,
            reasons: Vec::new(),
        }
    }

    fn settings() -> Settings {
        Settings {
            threshold: 0.05,
            confidence: 0.9,
            gate: None,
        }
    }

    fn verdict(c: &Comparison, m: &str) -> &'static str {
        c.metrics.iter().find(|r| r.metric == m).unwrap().verdict
    }

    #[test]
    fn identical_replicates_are_no_change() {
        let base = [rep(1000.0, 10.0), rep(1010.0, 10.5), rep(990.0, 9.5)];
        let c = compare(&base, &base, &settings()).unwrap();
        assert!(
            c.metrics
                .iter()
                .all(|r| r.verdict == "no significant change")
        );
        assert!(c.regressed.is_empty());
    }

    #[test]
    fn twenty_percent_more_latency_is_worse() {
        let base = [rep(1000.0, 10.0), rep(1000.0, 10.2), rep(1000.0, 9.8)];
        let cand = [rep(1000.0, 12.0), rep(1000.0, 12.2), rep(1000.0, 11.8)];
        let c = compare(&base, &cand, &settings()).unwrap();
        assert_eq!(verdict(&c, "intended_p99_ms"), "worse");
        assert_eq!(c.regressed, ["intended_p99_ms"]);
        let r = &c.metrics[1];
        assert!((r.change_pct - 20.0).abs() < 1e-9);
        assert!(r.change_low_pct > 5.0 && r.change_high_pct < 40.0, "{r:?}");
    }

    #[test]
    fn noise_wider_than_the_change_is_not_significant() {
        let base = [rep(1000.0, 5.0), rep(1000.0, 15.0), rep(1000.0, 10.0)];
        let cand = [rep(1000.0, 6.0), rep(1000.0, 16.0), rep(1000.0, 11.5)];
        let c = compare(&base, &cand, &settings()).unwrap();
        assert_eq!(verdict(&c, "intended_p99_ms"), "no significant change");
    }

    #[test]
    fn a_small_change_is_under_the_threshold_and_more_eps_is_better() {
        let c = compare(&[rep(1000.0, 10.0)], &[rep(1300.0, 10.2)], &settings()).unwrap();
        assert_eq!(verdict(&c, "intended_p99_ms"), "no significant change");
        assert_eq!(verdict(&c, "achieved_eps"), "better");
    }

    #[test]
    fn gates_and_percentages() {
        let mut s = settings();
        s.gate = Some(vec!["achieved_eps".into()]);
        let c = compare(&[rep(1000.0, 10.0)], &[rep(1000.0, 20.0)], &s).unwrap();
        assert_eq!(verdict(&c, "intended_p99_ms"), "worse");
        assert!(c.regressed.is_empty(), "p99 is not gated");
        s.gate = Some(vec!["p99".into()]);
        assert!(compare(&[rep(1.0, 1.0)], &[rep(1.0, 1.0)], &s).is_err());
        assert_eq!(percent("--threshold", "5%"), Ok(0.05));
        assert_eq!(percent("--threshold", "0.1"), Ok(0.1));
        assert!(percent("--confidence", "100%").is_err());
        assert!(percent("--confidence", "x").is_err());
    }
}
