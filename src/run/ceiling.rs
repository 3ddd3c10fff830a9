//! The ceiling search (`workload.find_ceiling: true`, `probe --ceiling`): the highest rate the
//! target sustains, found the way a capacity planner would by hand. Each step is its own
//! steady run through the run library (warm-up + hold, fresh connections, its own run id), so
//! a failed step's backlog never leaks into the next; the search steps up geometrically until
//! a step fails (down, when even the first fails), then bisects between the last good and the
//! first bad rate until the gap is within the precision. While a step runs, an observer stops
//! it once it can no longer pass (its backlog is past what the latency limit allows).
//!
//! A step is sustained when achieved ≥ 99 % of the schedule over the hold (answers that came
//! in the drain after it left out), the step's SLO rows hold (the config's `slo`, with
//! `max_p99_ms` 2000 unless it says otherwise, and the fail-closed defaults), neither the
//! backlog nor the schedule lag grows, and nothing accepted was lost. Refusals (429/503)
//! retried in time do not fail a step by themselves: the retries' latency does. A step that
//! is not sustained says whose limit it hit: the target (refusals, errors, latency, every
//! connection waiting), the target down, the request cap, or the generator — and a limit that
//! is ours is never reported as the collector's. `Search` is the pure stepping rule; `judge`
//! reads one step's report; `find` drives runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::config::schema::{CeilingSettings, Config, Workload};
use crate::config::secrets::Store;
use crate::exit::Exit;
use crate::pack::Catalog;
use crate::report::Report;
use crate::report::ceiling::{Ceiling, Phase, StepRow};
use crate::run::outputs;
use crate::run::{Control, Observer, Overrides, Run, RunOutcome, SetupError, Snapshot, plan};
use crate::stats::snapshot::RunState;

/// A step holds when it achieves at least this share of its schedule.
pub const MIN_EPS_RATIO: f64 = 0.99;
/// Lag that grows by more than this over a hold is a schedule falling behind.
pub const LAG_GROWTH_MS: f64 = 250.0;
/// Worker threads this busy (CPU time over wall time) are the limit themselves.
pub const CPU_SATURATED: f64 = 0.9;
/// The intended-latency p99 limit when the config's `slo` sets none (Signalith's S1).
pub const DEFAULT_P99_MS: f64 = 2000.0;

/// How the search steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub start_eps: f64,
    pub max_eps: f64,
    pub min_eps: f64,
    pub growth: f64,
    pub precision: f64,
    pub hold: Duration,
    pub warmup: Duration,
    pub max_steps: u32,
    /// `max_steps` is what the time left allowed (`probe --ceiling`'s `--timeout`), not the
    /// config's: running out of steps is running out of time.
    pub steps_fit_time: bool,
}

impl Params {
    /// The full search: `workload.ceiling` over the defaults (start at `workload.eps` or
    /// 1000, double each step up, 5 %, 10 s judged after 2 s, at most 20 steps).
    pub fn of(w: &Workload) -> Params {
        Params::with(
            w,
            Params {
                start_eps: 1000.0,
                max_eps: 10_000_000.0,
                min_eps: 0.0,
                growth: 2.0,
                precision: 0.05,
                hold: Duration::from_secs(10),
                warmup: Duration::from_secs(2),
                max_steps: 20,
                steps_fit_time: false,
            },
        )
    }

    /// The short search `probe --ceiling` runs: 10 %, 3 s judged after 1 s, at most 10 steps,
    /// unless `workload.ceiling` says otherwise.
    pub fn short(w: &Workload) -> Params {
        Params::with(
            w,
            Params {
                start_eps: 1000.0,
                max_eps: 10_000_000.0,
                min_eps: 0.0,
                growth: 2.0,
                precision: 0.10,
                hold: Duration::from_secs(3),
                warmup: Duration::from_secs(1),
                max_steps: 10,
                steps_fit_time: false,
            },
        )
    }

    fn with(w: &Workload, d: Params) -> Params {
        let c = w.ceiling.clone().unwrap_or_default();
        let CeilingSettings {
            start_eps,
            max_eps,
            min_eps,
            growth,
            precision,
            hold,
            warmup,
            max_steps,
        } = c;
        let start = start_eps.or(w.eps).unwrap_or(d.start_eps);
        let max = max_eps.unwrap_or(d.max_eps).max(start);
        Params {
            start_eps: start,
            max_eps: max,
            min_eps: min_eps.unwrap_or((start / 100.0).max(1.0)).min(start),
            growth: growth.unwrap_or(d.growth),
            precision: precision.unwrap_or(d.precision),
            hold: hold.map_or(d.hold, |h| h.0),
            warmup: warmup.map_or(d.warmup, |h| h.0),
            max_steps: max_steps.unwrap_or(d.max_steps),
            steps_fit_time: false,
        }
    }
}

/// The stepping rule, apart from any run: what to try next given what held so far.
#[derive(Clone, Debug)]
pub struct Search {
    p: Params,
    /// The highest rate sustained and the lowest not, so far.
    good: Option<f64>,
    bad: Option<f64>,
    steps: u32,
}

/// Why the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The gap between good and bad is within the precision.
    Precise,
    /// Every step held up to `max_eps`.
    MaxEps,
    /// Not even `min_eps` held.
    MinEps,
    /// `max_steps` were used up first (the time left, for `probe --ceiling`).
    MaxSteps,
    /// A step aborted the search (auth, an unreachable target, …): the verdict says why.
    Aborted,
}

impl Search {
    pub fn new(p: Params) -> Search {
        Search {
            p,
            good: None,
            bad: None,
            steps: 0,
        }
    }

    /// The next rate to try, or why the search is over.
    pub fn next(&self) -> Result<(f64, Phase), End> {
        let p = &self.p;
        let next = match (self.good, self.bad) {
            (None, None) => (p.start_eps, Phase::Up),
            (Some(g), None) if g >= p.max_eps => return Err(End::MaxEps),
            (Some(g), None) => ((g * p.growth).min(p.max_eps), Phase::Up),
            (None, Some(b)) if b <= p.min_eps => return Err(End::MinEps),
            (None, Some(b)) => ((b / p.growth).max(p.min_eps), Phase::Down),
            (Some(g), Some(b)) if (b - g) <= g * p.precision => return Err(End::Precise),
            (Some(g), Some(b)) => ((g + b) / 2.0, Phase::Bisect),
        };
        if self.steps >= p.max_steps {
            return Err(End::MaxSteps);
        }
        let eps = round_rate(next.0);
        if Some(eps) == self.good || Some(eps) == self.bad {
            // The gap is narrower than rates are rounded to.
            return Err(End::Precise);
        }
        Ok((eps, next.1))
    }

    /// Records how a step at `eps` went.
    pub fn record(&mut self, eps: f64, sustained: bool) {
        self.steps += 1;
        if sustained {
            self.good = Some(self.good.map_or(eps, |g| g.max(eps)));
        } else {
            self.bad = Some(self.bad.map_or(eps, |b| b.min(eps)));
        }
    }

    pub fn good(&self) -> Option<f64> {
        self.good
    }

    pub fn bad(&self) -> Option<f64> {
        self.bad
    }
}

/// Rates are whole events per second (three significant digits above 1000).
fn round_rate(eps: f64) -> f64 {
    if eps < 1000.0 {
        eps.round().max(1.0)
    } else {
        let scale = 10f64.powi(eps.log10().floor() as i32 - 2);
        (eps / scale).round() * scale
    }
}

/// What one step's run came to, beside its report.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepFacts {
    /// The search stopped the step before the end of its hold.
    pub stopped_early: bool,
    /// The step's intended-latency p99 limit, ms.
    pub p99_limit_ms: f64,
    pub hold_s: f64,
    pub batch_events: usize,
    pub connections: usize,
}

/// Judges one step from its report: sustained or not, and if not, whose limit and why.
pub fn judge(n: u32, phase: Phase, rep: &Report, f: StepFacts) -> StepRow {
    let s = &rep.summary;
    let count = |m: &std::collections::BTreeMap<String, u64>, k: &str| m.get(k).copied();
    let refused = count(&rep.status, "429").unwrap_or(0)
        + count(&rep.status, "503").unwrap_or(0)
        + count(&rep.hec_codes, "9").unwrap_or(0);
    let errors =
        s.batches_failed + s.connect_errors + s.connection_resets + s.timeouts + s.protocol_errors;
    let lat = &rep.latency_ms;
    let hold_rows: Vec<_> = rep
        .timeline
        .iter()
        .filter(|r| f64::from(r.t) >= s.warmup_s)
        .collect();
    let backlog_end = hold_rows.last().map_or(0, |r| r.backlog_events);
    // Achieved over the hold: what the target completed in it (answers that came in the
    // drain after it left out, the warm-up's that came in it counted), and never more than
    // the hold's own events accepted: a target that flushes a stalled warm-up in the hold
    // has not done more than it was offered.
    let achieved_eps = if s.window_s > 0.0 {
        s.events_answered_in_window.min(s.events_accepted) as f64 / s.window_s
    } else {
        0.0
    };
    let eps_ratio = if s.target_eps > 0.0 {
        achieved_eps / s.target_eps
    } else {
        0.0
    };
    let mut why = Vec::new();
    let lost = rep
        .verification
        .as_ref()
        .map_or(0, |v| v.lost_events + v.duplicates);
    if lost > 0 {
        why.push(format!("the store lost or doubled {lost} accepted events"));
    }
    if s.events_failed > 0 {
        why.push(format!("{} events failed", s.events_failed));
    }
    if eps_ratio < MIN_EPS_RATIO {
        why.push(format!(
            "achieved {:.1} % of the schedule, below {:.0} %",
            eps_ratio * 100.0,
            MIN_EPS_RATIO * 100.0
        ));
    }
    if lat.intended.count > 0 && lat.intended.p99 > f.p99_limit_ms {
        why.push(format!(
            "p99 {:.0} ms over {:.0} ms",
            lat.intended.p99, f.p99_limit_ms
        ));
    }
    if backlog_growing(&hold_rows, s.target_eps, f) {
        why.push(format!(
            "backlog growing ({backlog_end} events due and unsent)"
        ));
    }
    if let Some((from, to)) = lag_growing(&hold_rows) {
        why.push(format!(
            "schedule lag growing ({from:.0} ms to {to:.0} ms over the hold)"
        ));
    }
    if f.stopped_early {
        why.push("stopped early: too far behind to pass".into());
    }
    for b in crate::report::slo::breaches(&rep.slo) {
        let covered = matches!(b.name, "max_p99_ms" | "max_failed_events" | "min_eps_ratio");
        if !covered {
            why.push(format!(
                "SLO {} (limit {}, actual {:.4})",
                b.name,
                b.limit,
                b.actual.unwrap_or(0.0)
            ));
        }
    }
    let sustained = why.is_empty();
    let limited_by = if sustained {
        None
    } else {
        let (who, words) = whose(rep, refused, errors, f);
        why.push(words);
        Some(who)
    };
    StepRow {
        step: n,
        phase,
        run_id: rep.run_id.clone(),
        target_eps: s.target_eps,
        achieved_eps,
        eps_ratio,
        p50_ms: lat.intended.p50,
        p99_ms: lat.intended.p99,
        service_p99_ms: lat.service.p99,
        events_failed: s.events_failed,
        errors,
        refused,
        backlog_events: backlog_end,
        lag_ms_max: s.lag_ms_max,
        worker_cpu_share: s.worker_cpu_share,
        sustained,
        limited_by,
        why,
        stopped_early: f.stopped_early,
        lost_or_doubled: lost,
    }
}

/// The backlog at the end of the hold is past what a healthy run carries (half a second of
/// events, or every connection's batch twice over) and larger than at its start.
fn backlog_growing(rows: &[&crate::report::SecondRow], eps: f64, f: StepFacts) -> bool {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return false;
    };
    let allowance = (eps * 0.5).max((2 * f.batch_events * f.connections.max(1)) as f64);
    last.backlog_events as f64 > allowance && last.backlog_events > first.backlog_events
}

/// Batches leave later and later: the mean worst lag of the hold's last third is more than
/// `LAG_GROWTH_MS` above its first third's. Gives both.
#[allow(
    clippy::indexing_slicing,
    reason = "third = rows.len() / 3 > 0 here, so both slices lie within rows"
)]
fn lag_growing(rows: &[&crate::report::SecondRow]) -> Option<(f64, f64)> {
    let third = rows.len() / 3;
    if third == 0 {
        return None;
    }
    let mean = |r: &[&crate::report::SecondRow]| {
        r.iter().map(|x| x.lag_ms_max).sum::<f64>() / r.len() as f64
    };
    let (from, to) = (mean(&rows[..third]), mean(&rows[rows.len() - third..]));
    (to > from + LAG_GROWTH_MS).then_some((from, to))
}

/// Whose limit a failed step hit, and the evidence in words: the target's answers first
/// (refusals, errors, slow answers), then where due batches waited (every connection busy,
/// none open, the request cap); what is left is the generator's — its CPU, or batches
/// leaving late while the target answered quickly.
fn whose(rep: &Report, refused: u64, errors: u64, f: StepFacts) -> (&'static str, String) {
    let s = &rep.summary;
    let svc = &rep.latency_ms.service;
    if s.connect_errors > 0 && s.events_accepted == 0 {
        return ("target down", "the target could not be reached".into());
    }
    if let Some(v) = rep.verification.as_ref().filter(|v| v.lost_events > 0) {
        return (
            "target",
            format!("the target lost {} accepted events", v.lost_events),
        );
    }
    if refused > 0 {
        return (
            "target",
            format!("the target refused {refused} requests (429/503)"),
        );
    }
    if errors > 0 {
        return (
            "target",
            format!(
                "the target: {errors} errors ({} failed batches, {} connect errors, {} resets, {} timeouts)",
                s.batches_failed, s.connect_errors, s.connection_resets, s.timeouts
            ),
        );
    }
    if svc.count > 0 && svc.p99 > f.p99_limit_ms {
        return (
            "target",
            format!(
                "the target answered slowly: service p99 {:.0} ms over {:.0} ms",
                svc.p99, f.p99_limit_ms
            ),
        );
    }
    let waited = |who: &'static str| -> (&'static str, String) {
        let words = match who {
            "target down" => format!(
                "no connection open for {:.0} ms of due batches",
                s.target_down_ms
            ),
            "request cap" => format!(
                "limits.max_requests_per_sec held due batches back for {:.0} ms",
                s.held_by_cap_ms
            ),
            _ => format!(
                "the target: all {} connections waiting for answers (service p99 {:.1} ms)",
                f.connections, svc.p99
            ),
        };
        (who, words)
    };
    let generator = || {
        if s.worker_cpu_share >= CPU_SATURATED {
            (
                "generator",
                format!(
                    "the generator: worker CPU {:.0} % busy",
                    s.worker_cpu_share * 100.0
                ),
            )
        } else {
            (
                "generator",
                format!(
                    "the generator: batches left late (lag max {:.0} ms) while the target answered in {:.1} ms (service p99)",
                    s.lag_ms_max, svc.p99
                ),
            )
        }
    };
    if s.worker_cpu_share >= CPU_SATURATED {
        // Our threads had no time to spare: whatever else waited, the limit is ours.
        return generator();
    }
    match s.shortfall_by {
        who @ ("target" | "target down" | "request cap") => waited(who),
        // A step the search stopped (it could not pass): whatever made it hopeless.
        "generator" | "stop: control" | "stop: signal"
            if s.wait_for_target_ms > s.processing_ms =>
        {
            waited("target")
        }
        "generator" | "stop: control" | "stop: signal" => generator(),
        // Every due event was sent: what fell short was the answers.
        _ if s.events_accepted_in_drain > 0 || s.lag_ms_max < f.p99_limit_ms / 2.0 => (
            "target",
            format!(
                "the target answered late: {} events accepted only after the hold (service p99 {:.1} ms)",
                s.events_accepted_in_drain, svc.p99
            ),
        ),
        _ => generator(),
    }
}

/// Runs the search for `cfg` (the steps take its target, source, batch settings, limits and
/// SLOs; `ov` its threads, connections and seed). `observers` makes each step's observers
/// (e.g. the terminal line); `on_step` hears each step as it is judged. The outcome's report
/// is the ceiling step's (the last step's when none held), with `ceiling` filled in.
pub fn find(
    cfg: Config,
    p: &Params,
    ov: &Overrides,
    catalog: &Catalog,
    store: &Store,
    observers: &mut dyn FnMut() -> Vec<Box<dyn Observer>>,
    on_step: &mut dyn FnMut(&StepRow),
) -> Result<RunOutcome, SetupError> {
    refuse_single_run_outputs(&cfg, ov)?;
    let mut search = Search::new(p.clone());
    let mut rows: Vec<StepRow> = Vec::new();
    let mut best: Option<RunOutcome> = None;
    let mut last: Option<RunOutcome> = None;
    let mut fatal: Option<(Exit, String)> = None;
    let end = loop {
        let (eps, phase) = match search.next() {
            Ok(next) => next,
            Err(end) => break end,
        };
        let n = rows.len() as u32 + 1;
        let (outcome, facts) = run_step(&cfg, p, ov, catalog, store, eps, n, observers)?;
        let row = judge(n, phase, &outcome.report, facts);
        on_step(&row);
        search.record(eps, row.sustained);
        match outcome.exit {
            Exit::AuthFailed => fatal = Some((Exit::AuthFailed, outcome.reasons.join("; "))),
            Exit::Aborted if !facts.stopped_early => {
                fatal = Some((Exit::Aborted, outcome.reasons.join("; ")))
            }
            _ => {}
        }
        let sustained = row.sustained;
        rows.push(row);
        if sustained
            && best
                .as_ref()
                .is_none_or(|b| b.report.summary.target_eps < eps)
        {
            best = Some(outcome);
        } else {
            last = Some(outcome);
        }
        if fatal.is_some() {
            break End::Aborted;
        }
    };
    let ceiling = summarise(&search, p, end, rows);
    let mut outcome = best
        .or(last)
        .ok_or_else(|| SetupError::invalid("workload.ceiling: the search ran no step"))?;
    let (exit, reasons) = match fatal {
        Some((exit, why)) => (exit, vec![why]),
        None => verdict(&ceiling),
    };
    finish(&mut outcome, ceiling, exit, reasons, &cfg);
    Ok(outcome)
}

/// A search writes one report; outputs that follow a single run have no place in it (the
/// config's: the validator's own rule, `validate::ceiling_outputs`), nor does a stop or a
/// shard (its steps judge one process's rate).
fn refuse_single_run_outputs(cfg: &Config, ov: &Overrides) -> Result<(), SetupError> {
    let mut msgs: Vec<String> = crate::config::validate::ceiling_outputs(&cfg.observability)
        .into_iter()
        .map(|(path, m)| format!("{path}: {m}"))
        .collect();
    if ov.status.is_some() || ov.prometheus.is_some() {
        msgs.push("--status/--prometheus: the status page and /metrics follow one run; a ceiling search prints each step as it is judged instead".to_string());
    }
    if ov.duration.is_some() || ov.total.is_some() {
        msgs.push("--duration/--total: a ceiling search runs each step for workload.ceiling.warmup + hold".to_string());
    }
    if ov.shard.is_some() || ov.shards.is_some() || cfg.workload.shards.is_some() {
        msgs.push(
            "--shard/--shards: a ceiling search steps one process's rate; search from one process"
                .to_string(),
        );
    }
    if msgs.is_empty() {
        Ok(())
    } else {
        Err(SetupError::Invalid(msgs))
    }
}

/// One step: a steady run at `eps` for warm-up + hold, stopped early once it cannot pass.
#[allow(clippy::too_many_arguments)]
fn run_step(
    cfg: &Config,
    p: &Params,
    ov: &Overrides,
    catalog: &Catalog,
    store: &Store,
    eps: f64,
    n: u32,
    observers: &mut dyn FnMut() -> Vec<Box<dyn Observer>>,
) -> Result<(RunOutcome, StepFacts), SetupError> {
    let mut c = cfg.clone();
    c.workload.find_ceiling = false;
    c.workload.warmup = crate::config::units::Dur(p.warmup);
    c.observability.report = None;
    c.observability.csv = None;
    let p99_limit_ms = *c.slo.max_p99_ms.get_or_insert(DEFAULT_P99_MS);
    let step_ov = Overrides {
        eps: Some(eps),
        duration: Some(p.warmup + p.hold),
        total: None,
        ..ov.clone()
    };
    let mut plan = plan(c, &step_ov, catalog, store)?;
    plan.run_id = format!("{}-c{n:02}", plan.run_id);
    let facts = StepFacts {
        stopped_early: false,
        p99_limit_ms,
        hold_s: p.hold.as_secs_f64(),
        batch_events: plan.batch_events,
        connections: plan.connections.max(plan.threads),
    };
    let run = Run::new(plan);
    let stopped = Arc::new(AtomicBool::new(false));
    let mut obs = observers();
    obs.push(Box::new(Hopeless {
        control: run.control(),
        stopped: stopped.clone(),
        eps,
        after_s: p.warmup.as_secs_f64() + 1.0,
        limit_s: p99_limit_ms / 1000.0 + 1.0,
    }));
    let outcome = run.start(obs)?.wait()?;
    Ok((
        outcome,
        StepFacts {
            stopped_early: stopped.load(Ordering::Relaxed),
            ..facts
        },
    ))
}

/// Stops a step whose backlog is past what its latency limit allows: every event due now
/// would already be later than the limit when sent, so the step cannot pass.
struct Hopeless {
    control: Control,
    stopped: Arc<AtomicBool>,
    eps: f64,
    after_s: f64,
    limit_s: f64,
}

impl Observer for Hopeless {
    fn on_snapshot(&mut self, s: &Snapshot) {
        if s.state != RunState::Running || s.elapsed_s < self.after_s {
            return;
        }
        if s.backlog_events as f64 > self.eps * self.limit_s
            && !self.stopped.swap(true, Ordering::Relaxed)
        {
            let _ = self.control.stop();
        }
    }
}

/// The search's result from its steps.
fn summarise(search: &Search, p: &Params, end: End, steps: Vec<StepRow>) -> Ceiling {
    let ceiling_eps = search.good();
    let first_failed_eps = search.bad();
    let failing = first_failed_eps.and_then(|b| {
        steps.iter().filter(|s| !s.sustained).min_by(|a, b2| {
            (a.target_eps - b)
                .abs()
                .partial_cmp(&(b2.target_eps - b).abs())
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    });
    let last_failure = failing
        .and_then(|f| f.why.last().cloned())
        .map(|w| format!("; the last failure: {w}"))
        .unwrap_or_default();
    let (limited_by, detail) = match (end, failing) {
        (End::MaxEps, _) => (
            "max_eps",
            format!("workload.ceiling.max_eps is {:.0}", p.max_eps),
        ),
        (End::MaxSteps, _) => out_of_steps(search, p, steps.len(), &last_failure),
        (End::Aborted, _) => (
            "aborted",
            "a step aborted, so the search stopped (the verdict says why)".to_string(),
        ),
        (_, Some(f)) => (
            f.limited_by.unwrap_or("target"),
            f.why.last().cloned().unwrap_or_default(),
        ),
        // Precise or at min_eps needs a failure; a search that has none ran out of steps.
        (_, None) => out_of_steps(search, p, steps.len(), &last_failure),
    };
    Ceiling {
        ceiling_eps,
        first_failed_eps,
        precision: p.precision,
        gap: match (ceiling_eps, first_failed_eps) {
            (Some(g), Some(b)) if g > 0.0 => Some((b - g) / g),
            _ => None,
        },
        limited_by,
        detail,
        hold_s: p.hold.as_secs_f64(),
        warmup_s: p.warmup.as_secs_f64(),
        steps,
    }
}

/// A search that ran out of steps (or, fitted into a probe, of time) before it found the
/// ceiling: its own result, with the highest rate held so far and what is known above it.
fn out_of_steps(
    search: &Search,
    p: &Params,
    n: usize,
    last_failure: &str,
) -> (&'static str, String) {
    let (who, why) = if p.steps_fit_time {
        (
            "out of time",
            format!("the time left held {n} steps (a longer --timeout goes further)"),
        )
    } else {
        (
            "out of steps",
            format!(
                "workload.ceiling.max_steps is {} (more steps go further)",
                p.max_steps
            ),
        )
    };
    let detail = match (search.good(), search.bad()) {
        (Some(g), None) => {
            format!("every step held, up to {g:.0} eps: the ceiling is above it; {why}")
        }
        (Some(g), Some(b)) => format!(
            "{g:.0} eps held, {b:.0} eps did not; the gap did not close to {:.0} %: {why}{last_failure}",
            p.precision * 100.0
        ),
        (None, Some(b)) => format!("no rate held, down to {b:.0} eps: {why}{last_failure}"),
        (None, None) => format!("no step ran: {why}"),
    };
    (who, detail)
}

/// The search's exit code: 0 when it found the target's ceiling to the precision (or every
/// step held up to `max_eps`); 5 when a store lost accepted events; 6 when the target was
/// down; 3 when the limit found is not the target's, or no rate held, or the steps (the
/// time) ran out first — a floor is not a ceiling: `out of steps`/`out of time` with the
/// highest rate held so far.
pub fn verdict(c: &Ceiling) -> (Exit, Vec<String>) {
    let lost: u64 = c.steps.iter().filter(|s| s.lost_or_doubled > 0).count() as u64;
    if lost > 0 {
        return (
            Exit::VerifyFailed,
            vec![format!(
                "verification: the store lost or doubled accepted events in {lost} step(s)"
            )],
        );
    }
    match (c.ceiling_eps, c.limited_by) {
        (Some(_), "target" | "max_eps") => (Exit::Ok, Vec::new()),
        (Some(_), "target down") => (
            Exit::Aborted,
            vec![format!(
                "ceiling search: {}",
                crate::report::ceiling::headline(c)
            )],
        ),
        _ => (
            Exit::SloBreach,
            vec![format!(
                "ceiling search: {}",
                crate::report::ceiling::headline(c)
            )],
        ),
    }
}

/// The outcome of the search: the chosen step's report with the search in it, its verdict,
/// written where the config asks.
fn finish(out: &mut RunOutcome, c: Ceiling, exit: Exit, reasons: Vec<String>, cfg: &Config) {
    let rep = &mut out.report;
    rep.summary.ceiling_eps = c.ceiling_eps;
    let csv = crate::report::ceiling::csv(&c);
    rep.ceiling = Some(c);
    rep.config = super::execute::redacted(cfg);
    rep.verdict = crate::report::Verdict {
        pass: exit == Exit::Ok,
        exit_code: exit.code(),
        reasons: reasons.clone(),
    };
    out.exit = exit;
    out.reasons = reasons;
    let csv = cfg.observability.csv.clone().map(|path| outputs::File {
        what: "the ceiling table CSV",
        path,
        text: csv,
    });
    outputs::write(
        out,
        None,
        csv.into_iter().collect(),
        cfg.observability.report.clone(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::result::{RunResult, Second, SecondCounts};
    use crate::stats::{Counters, new_histogram};

    /// A 1 s warm-up + 3 s step at 1000 eps (batches of 100): `c` measured after the
    /// warm-up, `service_ms`/`intended_ms` for every batch, `seconds` as (backlog, lag ms).
    fn report(c: Counters, service_ms: u64, intended_ms: u64, seconds: &[(u64, f64)]) -> Report {
        let (mut lat, mut svc) = (new_histogram(), new_histogram());
        for _ in 0..c.batches_accepted {
            lat.record(intended_ms * 1000).unwrap();
            svc.record(service_ms * 1000).unwrap();
        }
        let r = RunResult {
            duration: Duration::from_secs(4),
            threads: 1,
            connections: 4,
            all_totals: c.clone(),
            // What came before the drain, answered in the hold.
            answered_in_window: c.events_accepted - c.events_accepted_in_drain,
            totals: c,
            latency: lat,
            service: svc,
            seconds: seconds
                .iter()
                .enumerate()
                .map(|(t, &(backlog, lag))| Second {
                    t: t as u32,
                    counts: SecondCounts {
                        backlog_events: backlog,
                        lag_ns_max: (lag * 1e6) as u64,
                        ..SecondCounts::default()
                    },
                    target_eps: 1000.0,
                    latency: Default::default(),
                })
                .collect(),
            abort: None,
            phases: None,
            sources: None,
            targets: None,
            item_errors: Vec::new(),
            target_events: 3000.0,
            window: Duration::from_secs(3),
            drain: Duration::from_millis(100),
            warmup: Duration::from_secs(1),
            paused: Duration::ZERO,
            control: Vec::new(),
            agents: Vec::new(),
            scenario: None,
        };
        crate::report::build(
            &r,
            crate::testutil::context(
                "r-1-c01",
                crate::config::schema::Slo {
                    max_p99_ms: Some(DEFAULT_P99_MS),
                    ..Default::default()
                },
            ),
        )
    }

    fn sent(events: u64, accepted: u64) -> Counters {
        Counters {
            events_sent: events,
            batches_sent: events / 100,
            events_accepted: accepted,
            batches_accepted: accepted / 100,
            processing_ns: 50_000_000,
            cpu_ns: 300_000_000,
            ..Counters::default()
        }
    }

    fn facts() -> StepFacts {
        StepFacts {
            stopped_early: false,
            p99_limit_ms: DEFAULT_P99_MS,
            hold_s: 3.0,
            batch_events: 100,
            connections: 4,
        }
    }

    const CALM: [(u64, f64); 4] = [(0, 1.0), (0, 1.0), (0, 1.0), (0, 1.0)];

    #[test]
    fn a_step_that_kept_its_schedule_is_sustained() {
        let row = judge(
            1,
            Phase::Up,
            &report(sent(3000, 3000), 5, 6, &CALM),
            facts(),
        );
        assert!(row.sustained, "{:?}", row.why);
        assert_eq!(row.limited_by, None);
        assert_eq!(row.achieved_eps, 1000.0);
    }

    #[test]
    fn refusals_are_the_targets_limit() {
        let mut c = sent(3000, 2500);
        c.status[429] = 40;
        c.batches_retried = 40;
        c.wait_for_target_ns = 2_000_000_000;
        let row = judge(2, Phase::Up, &report(c, 5, 1500, &CALM), facts());
        assert!(!row.sustained);
        assert_eq!(row.limited_by, Some("target"));
        assert_eq!(row.refused, 40);
        assert!(
            row.why.last().unwrap().contains("refused 40 requests"),
            "{:?}",
            row.why
        );
    }

    #[test]
    fn answers_that_came_only_in_the_drain_do_not_count() {
        // Everything was sent; 400 events were answered after the hold.
        let mut c = sent(3000, 3000);
        c.events_accepted_in_drain = 400;
        let row = judge(3, Phase::Bisect, &report(c, 300, 400, &CALM), facts());
        assert!(!row.sustained);
        assert!(
            (row.achieved_eps - 866.67).abs() < 0.01,
            "{}",
            row.achieved_eps
        );
        assert_eq!(row.limited_by, Some("target"));
        assert!(
            row.why.last().unwrap().contains("answered late"),
            "{:?}",
            row.why
        );
    }

    #[test]
    fn the_holds_throughput_counts_the_warm_ups_answers_in_it_and_never_passes_offered() {
        // The hold's own 3,000 events all accepted; 500 answered in the drain, and the
        // warm-up's last 500 answered in the hold: the target kept pace.
        let mut c = sent(3000, 3000);
        c.events_accepted_in_drain = 500;
        let mut rep = report(c.clone(), 300, 400, &CALM);
        rep.summary.events_answered_in_window = 3000;
        let row = judge(1, Phase::Up, &rep, facts());
        assert!(row.sustained, "{:?}", row.why);
        assert!(
            (row.achieved_eps - 1000.0).abs() < 0.01,
            "{}",
            row.achieved_eps
        );
        // A warm-up flushed in the hold (1,100 answered per second) is not more than offered.
        rep.summary.events_answered_in_window = 3300;
        let row = judge(1, Phase::Up, &rep, facts());
        assert!(
            (row.achieved_eps - 1000.0).abs() < 0.01,
            "{}",
            row.achieved_eps
        );
        assert!(row.achieved_eps <= row.target_eps);
    }

    #[test]
    fn a_saturated_generator_is_ours_whatever_else_waited() {
        let mut c = sent(2400, 2400);
        c.cpu_ns = 3_900_000_000;
        c.wait_for_target_ns = 1_000_000_000;
        c.processing_ns = 2_500_000_000;
        let row = judge(4, Phase::Up, &report(c, 2, 900, &CALM), facts());
        assert!(!row.sustained);
        assert_eq!(row.limited_by, Some("generator"));
        assert!(
            row.why.last().unwrap().contains("worker CPU"),
            "{:?}",
            row.why
        );
    }

    #[test]
    fn late_batches_with_quick_answers_are_the_generators() {
        let c = sent(2400, 2400);
        let rows = [(0, 5.0), (300, 200.0), (600, 500.0), (900, 900.0)];
        let row = judge(5, Phase::Up, &report(c, 2, 900, &rows), facts());
        assert!(!row.sustained);
        assert!(
            row.why
                .iter()
                .any(|w| w.starts_with("schedule lag growing")),
            "{:?}",
            row.why
        );
        assert_eq!(row.limited_by, Some("generator"));
        assert!(
            row.why.last().unwrap().contains("batches left late"),
            "{:?}",
            row.why
        );
    }

    #[test]
    fn a_growing_backlog_fails_a_step_that_still_achieved_its_rate() {
        let rows = [(0, 1.0), (100, 1.0), (900, 1.0), (1900, 1.0)];
        let mut c = sent(3000, 3000);
        c.wait_for_target_ns = 2_000_000_000;
        let row = judge(6, Phase::Up, &report(c, 40, 60, &rows), facts());
        assert!(!row.sustained);
        assert!(
            row.why.iter().any(|w| w.starts_with("backlog growing")),
            "{:?}",
            row.why
        );
        assert_eq!(row.limited_by, Some("target"));
    }

    fn params() -> Params {
        Params {
            start_eps: 1000.0,
            max_eps: 1_000_000.0,
            min_eps: 10.0,
            growth: 2.0,
            precision: 0.05,
            hold: Duration::from_secs(10),
            warmup: Duration::from_secs(2),
            max_steps: 30,
            steps_fit_time: false,
        }
    }

    /// Runs the stepping rule against a target that holds exactly up to `cap`.
    fn against(p: Params, cap: f64) -> (Search, End, Vec<(f64, Phase)>) {
        let mut s = Search::new(p);
        let mut tried = Vec::new();
        let end = loop {
            match s.next() {
                Ok((eps, phase)) => {
                    tried.push((eps, phase));
                    s.record(eps, eps <= cap);
                }
                Err(e) => break e,
            }
        };
        (s, end, tried)
    }

    #[test]
    fn steps_up_then_bisects_to_the_precision() {
        let (s, end, tried) = against(params(), 3000.0);
        assert_eq!(end, End::Precise);
        let rates: Vec<f64> = tried.iter().map(|t| t.0).collect();
        assert_eq!(&rates[..3], &[1000.0, 2000.0, 4000.0]);
        assert!(tried[3..].iter().all(|t| t.1 == Phase::Bisect));
        let (g, b) = (s.good().unwrap(), s.bad().unwrap());
        assert!(g <= 3000.0 && b > 3000.0 && (b - g) <= g * 0.05, "{g} {b}");
        assert!(g >= 3000.0 * 0.95, "{g}");
    }

    #[test]
    fn steps_down_when_even_the_first_rate_fails() {
        let (s, end, tried) = against(params(), 300.0);
        assert_eq!(end, End::Precise);
        assert_eq!(tried[1], (500.0, Phase::Down));
        assert_eq!(tried[2], (250.0, Phase::Down));
        let g = s.good().unwrap();
        assert!((285.0..=300.0).contains(&g), "{g}");
    }

    #[test]
    fn ends_at_the_bounds() {
        let (s, end, _) = against(params(), 1e12);
        assert_eq!(end, End::MaxEps);
        assert_eq!(s.good(), Some(1_000_000.0));
        let (s, end, _) = against(params(), 1.0);
        assert_eq!(end, End::MinEps);
        assert_eq!(s.good(), None);
        let mut p = params();
        p.max_steps = 4;
        let (s, end, tried) = against(p, 3000.0);
        assert_eq!((end, tried.len()), (End::MaxSteps, 4));
        assert_eq!((s.good(), s.bad()), (Some(3000.0), Some(4000.0)));
    }

    fn row(n: u32, eps: f64, sustained: bool) -> StepRow {
        StepRow {
            step: n,
            phase: Phase::Up,
            run_id: format!("r-c{n:02}"),
            target_eps: eps,
            achieved_eps: if sustained { eps } else { eps / 2.0 },
            eps_ratio: if sustained { 1.0 } else { 0.5 },
            p50_ms: 1.0,
            p99_ms: 2.0,
            service_p99_ms: 2.0,
            events_failed: 0,
            errors: 0,
            refused: 0,
            backlog_events: 0,
            lag_ms_max: 1.0,
            worker_cpu_share: 0.1,
            sustained,
            limited_by: (!sustained).then_some("target"),
            why: if sustained {
                Vec::new()
            } else {
                vec!["the target: all 4 connections waiting for answers".into()]
            },
            stopped_early: false,
            lost_or_doubled: 0,
        }
    }

    /// The search's result and verdict when `held` rates held and `failed` did not, in that
    /// order, with `max_steps` as many steps.
    fn ran_out(held: &[f64], failed: &[f64], fit_time: bool) -> (Ceiling, Exit, Vec<String>) {
        let mut p = params();
        p.max_steps = (held.len() + failed.len()) as u32;
        p.steps_fit_time = fit_time;
        let mut s = Search::new(p.clone());
        let mut rows = Vec::new();
        for (k, (&eps, ok)) in held
            .iter()
            .map(|e| (e, true))
            .chain(failed.iter().map(|e| (e, false)))
            .enumerate()
        {
            s.record(eps, ok);
            rows.push(row(k as u32 + 1, eps, ok));
        }
        let end = s.next().unwrap_err();
        let c = summarise(&s, &p, end, rows);
        let (exit, why) = verdict(&c);
        (c, exit, why)
    }

    #[test]
    fn out_of_steps_with_every_step_held_is_its_own_verdict_with_the_rate_held() {
        // Issue 33 case 14: "FAIL … limited by the max_steps (3 steps used)".
        let (c, exit, why) = ran_out(&[1000.0, 2000.0, 4000.0], &[], false);
        assert_eq!(c.limited_by, "out of steps");
        assert_eq!(c.ceiling_eps, Some(4000.0));
        assert_eq!(exit, Exit::SloBreach, "a floor is not a ceiling");
        let why = why.join("; ");
        assert!(why.contains("out of steps: held 4000 eps"), "{why}");
        assert!(why.contains("the ceiling is above it"), "{why}");
        assert!(!why.contains("limited by"), "{why}");
        // Fitted into a probe's time: out of time.
        let (c, exit, why) = ran_out(&[1000.0, 2000.0, 4000.0], &[], true);
        assert_eq!((c.limited_by, exit), ("out of time", Exit::SloBreach));
        assert!(
            why.join("").contains("out of time: held 4000 eps"),
            "{why:?}"
        );
        // A bracket not closed in time says both ends and the last failure.
        let (c, exit, why) = ran_out(&[1000.0, 2000.0], &[4000.0], false);
        assert_eq!((c.limited_by, exit), ("out of steps", Exit::SloBreach));
        assert_eq!(c.first_failed_eps, Some(4000.0));
        let why = why.join("");
        assert!(why.contains("2000 eps held, 4000 eps did not"), "{why}");
        assert!(why.contains("connections waiting"), "{why}");
        // No rate held in the steps there were.
        let (c, exit, _) = ran_out(&[], &[1000.0, 500.0], false);
        assert_eq!(
            (c.limited_by, c.ceiling_eps, exit),
            ("out of steps", None, Exit::SloBreach)
        );
    }

    #[test]
    fn rates_are_rounded_to_three_digits() {
        assert_eq!(round_rate(1234.5), 1230.0);
        assert_eq!(round_rate(999.6), 1000.0);
        assert_eq!(round_rate(0.2), 1.0);
        assert_eq!(round_rate(3_456_789.0), 3_460_000.0);
    }

    #[test]
    fn defaults_and_settings() {
        let w = crate::config::schema::Workload {
            profile: crate::config::schema::Profile::Steady,
            eps: Some(500.0),
            rate: None,
            burst: None,
            ramp: None,
            steps: None,
            stop: Default::default(),
            warmup: Default::default(),
            step_warmup: None,
            find_ceiling: true,
            ceiling: Some(CeilingSettings {
                precision: Some(0.1),
                hold: Some(crate::config::units::Dur(Duration::from_secs(3))),
                ..Default::default()
            }),
            workers: None,
            shards: None,
        };
        let p = Params::of(&w);
        assert_eq!(p.start_eps, 500.0);
        assert_eq!(p.min_eps, 5.0);
        assert_eq!(p.precision, 0.1);
        assert_eq!(p.hold, Duration::from_secs(3));
        assert_eq!(p.warmup, Duration::from_secs(2));
        assert_eq!(Params::short(&w).max_steps, 10);
    }
}
