//! The framing step: one small batch (5 events) of the configured pack in the configured
//! framing, sent by a real run through the run library (`run::plan` with `setup::
//! batch_overrides`, then `Run::start` and `wait`): the generator, the adapter's framing, the
//! connection and the response reader are the load's own, and the answer is decoded from the
//! run's report (statuses, HEC codes, failures). Then, where the target can say what it
//! stored — the built-in sink, or an `ingestbench sink` that answers `GET /stats` — the
//! batch's events are looked for by the probe's run id; elsewhere the step says it cannot
//! confirm.

use std::time::{Duration, Instant};

use crate::config::units::Dur;
use crate::exit::Exit;
use crate::probe::http::Http;
use crate::probe::setup::{BATCH_EVENTS, batch_overrides};
use crate::probe::{Ctx, Step, cut_off};
use crate::report::Report;
use crate::run::{self, Run, RunOutcome};
use crate::sink::{SinkHandle, SinkStats};

const NAME: &str = "framing";

pub fn framing(ctx: &mut Ctx<'_>, left: Duration) -> Step {
    let t0 = Instant::now();
    let mut cfg = ctx.config_for_run();
    // A retried batch must not outlive the probe.
    cfg.target.retry.max_attempts = cfg.target.retry.max_attempts.min(3);
    cfg.target.retry.max_time = Dur(cfg.target.retry.max_time.0.min(left));
    let mut plan = match run::plan(
        cfg,
        &batch_overrides(ctx.config.seed),
        ctx.catalog,
        ctx.store,
    ) {
        Ok(p) => p,
        Err(e) => return Step::fail(NAME, e.to_string(), e.exit()),
    };
    plan.run_id = ctx.run_id.clone();
    // Syslog over TCP, TLS or UDP answers nothing; RELP answers every message.
    let syslog = plan.transport.is_syslog() && !plan.transport.is_relp();
    let run = Run::new(plan);
    let control = run.control();
    let handle = match run.start(Vec::new()) {
        Ok(h) => h,
        Err(e) => return Step::fail(NAME, e.to_string(), e.exit()),
    };
    let deadline = t0 + left;
    let mut cut = false;
    while !handle.is_finished() {
        if Instant::now() >= deadline {
            let _ = control.stop();
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let outcome = match handle.wait() {
        Ok(o) => o,
        Err(e) => return Step::fail(NAME, e.to_string(), Exit::Aborted),
    };
    let step = decoded(&outcome, syslog);
    if cut {
        return step.failed(cut_off(ctx.opts.timeout), Exit::Aborted);
    }
    if step.verdict == crate::probe::Verdict::Fail {
        return step;
    }
    let expected = outcome.report.summary.events_accepted;
    let left = left.saturating_sub(t0.elapsed());
    confirm(ctx, step, expected, left)
}

/// The run's answer, from its report.
fn decoded(o: &RunOutcome, syslog: bool) -> Step {
    let r: &Report = &o.report;
    let s = &r.summary;
    let statuses = counts(&r.status, "status");
    let codes = counts(&r.hec_codes, "HEC code");
    let answer = if syslog {
        "syslog answers nothing: events confirmed by the peer's TCP (acknowledged, kept, read)"
            .to_string()
    } else {
        [statuses.clone(), codes.clone()]
            .into_iter()
            .filter(|x| !x.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut step = Step::pass(
        NAME,
        format!(
            "{} of {BATCH_EVENTS} events {} in {} batch{} ({} bytes)",
            s.events_accepted,
            if syslog { "confirmed" } else { "accepted" },
            s.batches_sent,
            if s.batches_sent == 1 { "" } else { "es" },
            s.bytes_sent
        ),
    )
    .line(format!("answer {answer}"))
    .detail("events_sent", s.events_sent)
    .detail("events_accepted", s.events_accepted)
    .detail("events_failed", s.events_failed)
    .detail("batches_sent", s.batches_sent)
    .detail("batches_retried", s.batches_retried)
    .detail("bytes_sent", s.bytes_sent)
    .detail("status", &r.status)
    .detail("hec_codes", &r.hec_codes)
    .detail("events_unreadable_2xx", s.events_unreadable_2xx);
    let problems = [
        ("connect errors", s.connect_errors),
        ("connection resets", s.connection_resets),
        ("timeouts", s.timeouts),
        ("protocol errors", s.protocol_errors),
        ("oversize events", s.oversize_events),
        ("events answered 2xx, unreadable", s.events_unreadable_2xx),
        ("unconfirmed events", s.events_unconfirmed),
    ];
    let problems: Vec<String> = problems
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    if !problems.is_empty() {
        step = step.line(format!("on the way: {}", problems.join(", ")));
    }
    match o.exit {
        Exit::AuthFailed => {
            return step.failed(
                format!(
                    "authentication failed: {}",
                    o.reasons
                        .join("; ")
                        .trim_start_matches("authentication failed: ")
                ),
                Exit::AuthFailed,
            );
        }
        Exit::Aborted => return step.failed(o.reasons.join("; "), Exit::Aborted),
        _ => {}
    }
    let done = s.events_accepted;
    if done < BATCH_EVENTS {
        let why = if problems.is_empty() {
            answer
        } else {
            problems.join(", ")
        };
        return step.failed(
            format!(
                "{} of {BATCH_EVENTS} events {}: {why} (a run counts such events {}, exit 3)",
                BATCH_EVENTS - done,
                if syslog {
                    "not confirmed"
                } else {
                    "not accepted"
                },
                if s.events_unconfirmed > 0 {
                    "unconfirmed"
                } else {
                    "failed"
                },
            ),
            Exit::SloBreach,
        );
    }
    step
}

fn counts(m: &std::collections::BTreeMap<String, u64>, what: &str) -> String {
    m.iter()
        .map(|(k, n)| format!("{what} {k} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Asks the store, where there is one to ask, for the batch's events by run id.
fn confirm(ctx: &Ctx<'_>, step: Step, expected: u64, left: Duration) -> Step {
    let run_id = ctx.run_id.clone();
    let asked = match (&ctx.sink, &ctx.endpoint) {
        (Some(h), _) => Asked::Builtin(h),
        (None, Some(ep)) if !ctx.transport.is_syslog() => Asked::Remote(Http::new(
            ep,
            ctx.plan.as_ref().and_then(|p| p.tls.as_ref()),
            left,
        )),
        _ => {
            return step
                .line("stored: not confirmed: the target cannot be asked (syslog has no /stats)")
                .detail("stored", serde_json::Value::Null);
        }
    };
    let store = asked.name();
    let ask = || asked.stats();
    // The sink counts a datagram or a stream message as it reads it: give it a moment.
    let deadline = Instant::now() + left.min(Duration::from_secs(2));
    let mut last = ask();
    while let Ok(st) = &last {
        let distinct = st.runs.get(&run_id).map_or(0, |r| r.distinct);
        if distinct >= expected || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        last = ask();
    }
    let st = match last {
        Ok(st) => st,
        Err(why) => {
            return step
                .line(format!(
                    "stored: not confirmed: the target cannot be asked ({why})"
                ))
                .detail("stored", serde_json::Value::Null);
        }
    };
    let r = st.runs.get(&run_id).cloned().unwrap_or_default();
    let step = step
        .line(format!(
            "stored: {} of {expected} distinct in {store} (run {run_id}), {} duplicates",
            r.distinct, r.duplicates
        ))
        .detail(
            "stored",
            serde_json::json!({
                "store": store,
                "run_id": run_id,
                "events_received": r.received,
                "distinct": r.distinct,
                "duplicates": r.duplicates,
            }),
        );
    if r.distinct < expected || r.duplicates > 0 {
        return step.failed(
            format!(
                "{store} stored {} of the {expected} events{} (a run exits 5)",
                r.distinct,
                if r.duplicates > 0 {
                    format!(", {} twice", r.duplicates)
                } else {
                    String::new()
                }
            ),
            Exit::VerifyFailed,
        );
    }
    step
}

/// Who is asked what was stored.
enum Asked<'a> {
    Builtin(&'a SinkHandle),
    /// Perhaps an `ingestbench sink`: its `GET /stats` tells.
    Remote(Http),
}

impl Asked<'_> {
    fn name(&self) -> &'static str {
        match self {
            Asked::Builtin(_) => "the built-in sink",
            Asked::Remote(_) => "the target (an ingestbench sink)",
        }
    }

    fn stats(&self) -> Result<SinkStats, String> {
        match self {
            Asked::Builtin(h) => Ok(h.stats()),
            Asked::Remote(http) => sink_stats(http),
        }
    }
}

/// `GET /stats` as an `ingestbench sink` answers it, or why not.
fn sink_stats(http: &Http) -> Result<SinkStats, String> {
    let a = http.get("/stats")?;
    if a.status != 200 {
        return Err(format!("GET /stats answered {}", a.status));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&a.body).map_err(|_| "GET /stats is not JSON".to_string())?;
    if !(v.get("runs").is_some_and(|r| r.is_object()) && v.get("events_received").is_some()) {
        return Err("GET /stats is not an ingestbench sink's".into());
    }
    serde_json::from_value(v).map_err(|e| format!("GET /stats: {e}"))
}
