//! `probe`: is this target reachable, trusted, accepting our token and our framing? A probe
//! runs a short list of steps in order — resolve, connect, TLS, auth, framing and, with
//! `--ceiling`, a short ceiling search — each giving a `Step` (verdict pass | warn | fail |
//! skipped, time, details, error); the first failure stops it (later steps are skipped) and
//! its exit code is the probe's, chosen once in `Probe::exit`: 4 auth, 6 unreachable / TLS /
//! cut off, 3 events the target refuses, 5 a batch not stored, 2 an invalid config (a
//! `SetupError` before any step). The whole probe is bounded by `Options::timeout`: each step
//! gets what is left, and a step that runs out fails (exit 6).
//!
//! Module map: `setup` (config or `--url` → `Ctx`: the run library's plan, the built-in sink
//! started when the url is `builtin`), `net` (resolve, connect), `tls` (the handshake with the
//! load's own client config, the chain parsed with x509-parser), `http` (ureq with that same
//! TLS config), `auth` (HEC health and one tagged event, lphc one tagged event, syslog one
//! message), `batch` (a 5-event run through the run library, stored or not), `ceiling` (a
//! short `run::ceiling` search in the time left), `text` (the human rendering). Nothing here prints or reads argv.

mod auth;
mod batch;
mod ceiling;
mod http;
mod net;
pub mod setup;
mod text;
mod tls;

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::exit::Exit;
pub use setup::{Ctx, Options, UrlTarget, guess_adapter};
pub use text::render as render_text;

/// The JSON document's schema name.
pub const SCHEMA: &str = "ingestbench.probe/1";

/// How one step went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
    Skipped,
}

impl Verdict {
    /// The word the text output starts a step's line with.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
            Verdict::Skipped => "SKIP",
        }
    }
}

/// One step of a probe: what it found (`summary`, `details` as JSON, `lines` for a person),
/// how long it took, and on failure why (`error`) and the exit code it gives.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub name: &'static str,
    pub verdict: Verdict,
    pub elapsed_ms: f64,
    /// One line: what was probed and what came of it.
    pub summary: String,
    /// The step's findings (each step its own keys; see README "probe").
    pub details: serde_json::Map<String, serde_json::Value>,
    /// Indented lines under the step in the text output.
    pub lines: Vec<String>,
    /// Why it failed, warned, or was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The exit code a failure gives (`exit`, as a number).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip)]
    exit: Option<Exit>,
}

impl Step {
    fn new(name: &'static str, verdict: Verdict, summary: impl Into<String>) -> Step {
        Step {
            name,
            verdict,
            elapsed_ms: 0.0,
            summary: summary.into(),
            details: serde_json::Map::new(),
            lines: Vec::new(),
            error: None,
            exit_code: None,
            exit: None,
        }
    }

    pub fn pass(name: &'static str, summary: impl Into<String>) -> Step {
        Step::new(name, Verdict::Pass, summary)
    }

    pub fn skipped(name: &'static str, why: impl Into<String>) -> Step {
        let why = why.into();
        let mut s = Step::new(name, Verdict::Skipped, why.clone());
        s.error = Some(why);
        s
    }

    pub fn fail(name: &'static str, error: impl Into<String>, exit: Exit) -> Step {
        let error = error.into();
        let mut s = Step::new(name, Verdict::Fail, error.clone());
        s.error = Some(error);
        s.set_exit(exit);
        s
    }

    fn set_exit(&mut self, exit: Exit) {
        self.exit = Some(exit);
        self.exit_code = Some(exit.code());
    }

    /// Turns a pass into a warning (a fail stays a fail).
    pub fn warn(mut self, why: impl Into<String>) -> Step {
        let why = why.into();
        if self.verdict == Verdict::Pass {
            self.verdict = Verdict::Warn;
        }
        if self.verdict != Verdict::Fail {
            self.error = Some(match self.error.take() {
                Some(e) => format!("{e}; {why}"),
                None => why,
            });
        }
        self
    }

    /// Turns the step into a failure with `error`, keeping what it found.
    pub fn failed(mut self, error: impl Into<String>, exit: Exit) -> Step {
        let error = error.into();
        self.verdict = Verdict::Fail;
        self.error = Some(error);
        self.set_exit(exit);
        self
    }

    pub fn detail(mut self, key: &str, value: impl Serialize) -> Step {
        self.details.insert(
            key.to_string(),
            serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
        );
        self
    }

    pub fn line(mut self, text: impl Into<String>) -> Step {
        self.lines.push(text.into());
        self
    }

    /// The exit code this step gives the probe: a failure's, else none.
    pub fn exit(&self) -> Option<Exit> {
        if self.verdict == Verdict::Fail {
            self.exit
        } else {
            None
        }
    }
}

/// A step of the probe: gets the context and the time left, gives its `Step`.
pub type StepFn = fn(&mut Ctx<'_>, Duration) -> Step;

/// The steps, in order. A new step is one more entry (with its `Options` switch, if any).
fn steps(opts: &Options) -> Vec<(&'static str, StepFn)> {
    let mut steps: Vec<(&'static str, StepFn)> = vec![
        ("resolve", net::resolve),
        ("connect", net::connect),
        ("tls", tls::handshake),
        ("auth", auth::auth),
        ("framing", batch::framing),
    ];
    if opts.ceiling {
        steps.push(("ceiling", ceiling::search));
    }
    steps
}

/// What the probe looked at.
#[derive(Clone, Debug, Serialize)]
pub struct TargetInfo {
    pub adapter: String,
    /// The url as configured (`builtin` stays `builtin`).
    pub url: String,
    /// Where the probe sent: `host:port` (the built-in sink's own port when started).
    pub address: String,
    /// http, https, syslog+tcp, syslog+udp or syslog+tls.
    pub transport: String,
    pub source: String,
}

/// The probe's verdict: the first failure's exit code, else 0.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeVerdict {
    pub pass: bool,
    pub exit_code: i32,
    pub reasons: Vec<String>,
}

/// A finished probe, as data (`--output json` is this, serialised).
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    pub schema: &'static str,
    /// The run id the probe's events carry (empty when the name did not resolve at setup).
    pub run_id: String,
    pub target: TargetInfo,
    pub timeout_s: f64,
    pub elapsed_ms: f64,
    pub warnings: Vec<String>,
    pub steps: Vec<Step>,
    pub verdict: ProbeVerdict,
}

impl Probe {
    /// The probe's exit code.
    pub fn exit(&self) -> Exit {
        self.steps.iter().find_map(Step::exit).unwrap_or(Exit::Ok)
    }
}

/// Runs every step in order within `ctx.opts.timeout`, stopping at the first failure.
pub fn run(mut ctx: Ctx<'_>) -> Probe {
    let t0 = Instant::now();
    let deadline = t0 + ctx.opts.timeout;
    let mut done: Vec<Step> = Vec::new();
    for (name, step) in steps(&ctx.opts) {
        if done.iter().any(|s| s.verdict == Verdict::Fail) {
            done.push(Step::skipped(name, "not run: an earlier step failed"));
            continue;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            done.push(Step::fail(name, cut_off(ctx.opts.timeout), Exit::Aborted));
            continue;
        }
        let started = Instant::now();
        let mut s = step(&mut ctx, left);
        s.name = name;
        s.elapsed_ms = ms3(started.elapsed());
        done.push(s);
    }
    let mut probe = Probe {
        schema: SCHEMA,
        run_id: ctx.run_id.clone(),
        target: ctx.target_info(),
        timeout_s: ctx.opts.timeout.as_secs_f64(),
        elapsed_ms: ms3(t0.elapsed()),
        warnings: ctx.warnings.clone(),
        steps: done,
        verdict: ProbeVerdict {
            pass: true,
            exit_code: 0,
            reasons: Vec::new(),
        },
    };
    let exit = probe.exit();
    probe.verdict = ProbeVerdict {
        pass: exit == Exit::Ok,
        exit_code: exit.code(),
        reasons: probe
            .steps
            .iter()
            .filter(|s| s.verdict == Verdict::Fail)
            .map(|s| format!("{}: {}", s.name, s.error.as_deref().unwrap_or("failed")))
            .collect(),
    };
    ctx.finish();
    probe
}

/// The error of a step the probe's time ran out on.
pub fn cut_off(timeout: Duration) -> String {
    format!(
        "cut off: the probe's time ({}) ran out (--timeout)",
        crate::config::units::Dur(timeout)
    )
}

/// Milliseconds to the microsecond, for `elapsed_ms`.
fn ms3(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// Milliseconds with one decimal, for summaries.
fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e4).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_chooses_the_exit_code() {
        let p = |steps: Vec<Step>| Probe {
            schema: SCHEMA,
            run_id: "r".into(),
            target: TargetInfo {
                adapter: "lphc".into(),
                url: "builtin".into(),
                address: "127.0.0.1:1".into(),
                transport: "http".into(),
                source: "s".into(),
            },
            timeout_s: 1.0,
            elapsed_ms: 0.0,
            warnings: vec![],
            steps,
            verdict: ProbeVerdict {
                pass: true,
                exit_code: 0,
                reasons: vec![],
            },
        };
        assert_eq!(
            p(vec![Step::pass("resolve", "x").warn("w")]).exit(),
            Exit::Ok
        );
        assert_eq!(
            p(vec![
                Step::pass("resolve", "x"),
                Step::fail("auth", "403", Exit::AuthFailed),
                Step::fail("framing", "x", Exit::Aborted),
            ])
            .exit(),
            Exit::AuthFailed
        );
    }

    #[test]
    fn steps_serialise_with_lowercase_verdicts_and_no_empty_error() {
        let s = Step::pass("tls", "ok").detail("version", "TLS 1.3");
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["verdict"], "pass");
        assert_eq!(v["details"]["version"], "TLS 1.3");
        assert!(v.get("error").is_none());
        let f = Step::fail("connect", "refused", Exit::Aborted);
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["verdict"], "fail");
        assert_eq!(v["exit_code"], 6);
        assert_eq!(Step::pass("a", "b").warn("soon").verdict, Verdict::Warn);
        assert_eq!(
            Step::fail("a", "b", Exit::Aborted).warn("x").verdict,
            Verdict::Fail
        );
    }
}
