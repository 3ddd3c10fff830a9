//! The panel's Run tab: one run at a time, started through the run library in this process
//! (`run::plan`, `Run::new`, `Run::start` — the same calls as `ingestbench run`, never another
//! program), watched through its `SnapshotCell`, steered through its `Control` (the status
//! page's control bodies and answers), and when it ends its report written to
//! `--reports-dir` and kept in memory as `last`. A start is parsed, refused while a run is
//! going (409), prepared (the config read and checked, the flags taken) and only then
//! launched (planned, which resolves the target, and started); a runner made
//! `never_launching` stops after preparing (a panel with no server: the fuzz target).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use super::policy;
use super::reports::safe_stem;
use super::route::{Action, Kind};
use super::{Ctx, file_reply, no_dir, parse};
use crate::config::units::parse_duration;
use crate::run::{self, Control, Overrides, Run, RunOutcome, SetupError, SnapshotCell};
use crate::serve::guard::Reply;
use crate::serve::status::act;

/// The run in progress, and the last one finished.
#[derive(Default)]
pub struct Runner {
    state: Mutex<State>,
    launch: Launch,
}

/// Whether a run that is prepared is launched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Launch {
    #[default]
    Runs,
    /// A panel answering with no server (the fuzz target): a start is checked and prepared,
    /// and answered without planning it (which resolves names) or starting anything.
    Never,
}

#[derive(Default)]
struct State {
    active: Option<Active>,
    last: Option<Last>,
}

struct Active {
    control: Control,
    snapshots: Arc<SnapshotCell>,
    config: String,
    started_at: String,
}

struct Last {
    config: String,
    run_name: String,
    ended_at: String,
    exit_code: i32,
    pass: bool,
    reasons: Vec<String>,
    notes: Vec<String>,
    /// The report's file in `--reports-dir`, when it was written there.
    file: Option<String>,
    report: Arc<Value>,
    snapshots: Arc<SnapshotCell>,
}

impl Runner {
    /// A runner that prepares runs and never launches one.
    pub fn never_launching() -> Runner {
        Runner {
            launch: Launch::Never,
            ..Runner::default()
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: carry on with it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The last finished run's report.
    pub fn last_report(&self) -> Option<Arc<Value>> {
        self.lock().last.as_ref().map(|l| l.report.clone())
    }

    /// Stops the run in progress, if any, and waits up to `timeout` for it to end.
    pub fn stop_and_wait(&self, timeout: Duration) {
        let control = self.lock().active.as_ref().map(|a| a.control.clone());
        let Some(c) = control else { return };
        let _ = c.stop();
        c.refresh();
        let until = Instant::now() + timeout;
        while self.lock().active.is_some() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `GET /api/run`.
pub fn status(ctx: &Ctx) -> Reply {
    let st = ctx.runner.lock();
    let cell = st
        .active
        .as_ref()
        .map(|a| &a.snapshots)
        .or(st.last.as_ref().map(|l| &l.snapshots));
    let snapshot = cell
        .map(|c| serde_json::to_value(&*c.latest()).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let last = st.last.as_ref().map(|l| {
        json!({
            "config": l.config, "run_name": l.run_name, "ended_at": l.ended_at,
            "exit_code": l.exit_code, "pass": l.pass, "reasons": l.reasons, "notes": l.notes,
            "report": l.file.clone().unwrap_or_else(|| super::reports::LAST.into()),
        })
    });
    Reply::value(
        200,
        &json!({
            "active": st.active.is_some(),
            "config": st.active.as_ref().map(|a| a.config.clone()),
            "started_at": st.active.as_ref().map(|a| a.started_at.clone()),
            "snapshot": snapshot,
            "last": last,
        }),
    )
}

/// What `POST /api/run` takes: a config by name or as text, and `run`'s flags.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    config: Option<String>,
    text: Option<String>,
    duration: Option<String>,
    total: Option<u64>,
    eps: Option<f64>,
    threads: Option<usize>,
    workers: Option<usize>,
    seed: Option<u64>,
    scenario: Option<String>,
    scenario_speed: Option<String>,
}

const START_SHAPE: &str = r#"{"config": "NAME.yaml"} or {"text": "<YAML>"}, with optional "duration", "total", "eps", "threads", "workers", "seed", "scenario", "scenario_speed""#;

/// `POST /api/run`: the body parsed, a run already going refused (409), the run prepared,
/// then launched.
pub fn start(ctx: &Arc<Ctx>, body: &[u8]) -> Reply {
    let b: StartBody = match parse(body, START_SHAPE) {
        Ok(b) => b,
        Err(r) => return r,
    };
    // The lock is held while the run is planned and started, so two starts cannot both go.
    let mut st = ctx.runner.lock();
    if let Some(a) = &st.active {
        return Reply::error(
            409,
            &format!(
                "a run is already going ({}, started {}): one run at a time; stop it first",
                a.config, a.started_at
            ),
        );
    }
    let prepared = match prepare(ctx, &b) {
        Ok(p) => p,
        Err(r) => return r,
    };
    if ctx.runner.launch == Launch::Never {
        return Reply::value(
            200,
            &json!({"ok": true, "launched": false, "config": prepared.label}),
        );
    }
    match launch(ctx, prepared) {
        Ok((active, name, run_id)) => {
            st.active = Some(active);
            Reply::value(202, &json!({"ok": true, "run_id": run_id, "name": name}))
        }
        Err(e) => setup_reply(&e),
    }
}

/// A run ready to be planned and started: its config read and checked, `run`'s flags from
/// the body. Nothing outside the panel's directories has been touched yet.
struct Prepared {
    label: String,
    loaded: run::LoadedConfig,
    overrides: Overrides,
}

/// The config's text (by name from `--configs-dir`, or as given), the body's flags, the
/// config read and checked, then held to what a config sent to the panel may do
/// (`policy`, which also refuses a ceiling search).
fn prepare(ctx: &Ctx, b: &StartBody) -> Result<Prepared, Reply> {
    let (label, text) = config_text(ctx, b)?;
    let overrides = overrides(ctx, b).map_err(|e| setup_reply(&e))?;
    let mut loaded =
        run::load_text(&text, &label, &ctx.store, &ctx.catalog).map_err(|e| setup_reply(&e))?;
    let refused = policy::check(&mut loaded.config, &ctx.rules);
    if !refused.is_empty() {
        let messages = policy::diagnostics(&text, &refused)
            .iter()
            .map(|d| format!("{d}"))
            .collect();
        return Err(setup_reply(&SetupError::Invalid(messages)));
    }
    Ok(Prepared {
        label,
        loaded,
        overrides,
    })
}

/// The config's label (its file name, or `pasted config`) and text.
fn config_text(ctx: &Ctx, b: &StartBody) -> Result<(String, String), Reply> {
    match (&b.config, &b.text) {
        (Some(name), None) => {
            let d = ctx
                .dirs
                .configs
                .as_ref()
                .ok_or_else(|| no_dir(Kind::Configs.flag(), "config files"))?;
            d.read(name).map(|t| (name.clone(), t)).map_err(file_reply)
        }
        (None, Some(text)) => Ok(("pasted config".into(), text.clone())),
        _ => Err(Reply::error(
            400,
            "give the config by name (\"config\") or as text (\"text\"), one of the two",
        )),
    }
}

fn setup_reply(e: &SetupError) -> Reply {
    let status = match e {
        SetupError::Invalid(_) => 422,
        _ => 500,
    };
    let errors: Vec<Value> = e.messages().iter().map(|m| json!({"message": m})).collect();
    Reply::value(status, &json!({"error": e.to_string(), "errors": errors}))
}

/// `run`'s flags from the body.
fn overrides(ctx: &Ctx, b: &StartBody) -> Result<Overrides, SetupError> {
    let duration = match &b.duration {
        Some(d) => Some(
            parse_duration(d)
                .map_err(|e| SetupError::invalid(format!("duration: {e}")))?
                .0,
        ),
        None => None,
    };
    let scenario = match &b.scenario {
        Some(name) => {
            let d = ctx.dirs.scenarios.as_ref().ok_or_else(|| {
                SetupError::invalid(super::no_dir_reason("--scenarios-dir", "scenario files"))
            })?;
            Some(
                d.path(name)
                    .map_err(|e| SetupError::invalid(format!("scenario: {e}")))?,
            )
        }
        None => None,
    };
    Ok(Overrides {
        duration,
        total: b.total,
        eps: b.eps,
        threads: b.threads,
        workers: b.workers,
        seed: b.seed,
        scenario,
        scenario_speed: b.scenario_speed.clone(),
        ..Overrides::default()
    })
}

/// Plans and starts the run, and a thread that waits for its end.
fn launch(ctx: &Arc<Ctx>, prepared: Prepared) -> Result<(Active, String, String), SetupError> {
    let Prepared {
        label,
        loaded,
        overrides,
    } = prepared;
    let mut plan = run::plan(loaded.config, &overrides, &ctx.catalog, &ctx.store)?;
    // The run's own status page and /metrics ask for the panel's token when the config
    // gives them none: the panel's run is steered by its token holders only.
    if let Some(t) = ctx
        .policy
        .token
        .as_ref()
        .and_then(|t| String::from_utf8(t.clone()).ok())
    {
        for page in [&mut plan.serve.status, &mut plan.serve.metrics]
            .into_iter()
            .flatten()
        {
            page.token.get_or_insert_with(|| t.clone());
        }
    }
    let (name, run_id) = (plan.config.name.clone(), plan.run_id.clone());
    let name = name.unwrap_or_else(|| "run".into());
    let run = Run::new(plan);
    let live = crate::serve::Live::start(&run.plan().serve, run.snapshots(), run.control())?;
    let (control, snapshots) = (run.control(), run.snapshots());
    let handle = run.start(Vec::new())?;
    let (waiter_ctx, config) = (ctx.clone(), label.clone());
    let run_name = name.clone();
    std::thread::Builder::new()
        .name("ingestbench-panel-run".into())
        .spawn(move || {
            let outcome = handle.wait();
            live.finish();
            finished(&waiter_ctx, config, run_name, outcome);
        })
        .map_err(|e| SetupError::Io(format!("cannot start the run's waiting thread: {e}")))?;
    Ok((
        Active {
            control,
            snapshots,
            config: label,
            started_at: now(),
        },
        name,
        run_id,
    ))
}

/// Records a finished run: its report written to `--reports-dir` (when given) and kept.
fn finished(ctx: &Ctx, config: String, run_name: String, outcome: Result<RunOutcome, SetupError>) {
    let mut st = ctx.runner.lock();
    let Some(active) = st.active.take() else {
        return;
    };
    let last = match outcome {
        Ok(o) => {
            let report = Arc::new(serde_json::to_value(&o.report).unwrap_or(Value::Null));
            let mut notes = o.notes;
            let file = match save_report(ctx, &run_name, &report) {
                Ok(f) => f,
                Err(m) => {
                    notes.push(m);
                    None
                }
            };
            Last {
                config,
                run_name,
                ended_at: now(),
                exit_code: o.exit.code(),
                pass: o.exit.code() == 0,
                reasons: o.reasons,
                notes,
                file,
                report,
                snapshots: active.snapshots,
            }
        }
        Err(e) => Last {
            config,
            run_name,
            ended_at: now(),
            exit_code: e.exit().code(),
            pass: false,
            reasons: e.messages(),
            notes: Vec::new(),
            file: None,
            report: Arc::new(Value::Null),
            snapshots: active.snapshots,
        },
    };
    st.last = Some(last);
}

/// Writes the report as `<run name>-<YYYYmmdd-HHMMSS>.json`, a `-2`, `-3`… added when the name
/// is taken.
fn save_report(ctx: &Ctx, run_name: &str, report: &Value) -> Result<Option<String>, String> {
    let Some(d) = &ctx.dirs.reports else {
        return Ok(None);
    };
    let stamp: String = now()
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    let stem = format!(
        "{}-{}-{}",
        safe_stem(run_name),
        &stamp[..8.min(stamp.len())],
        &stamp[8.min(stamp.len())..]
    );
    let text = serde_json::to_string_pretty(report).unwrap_or_default() + "\n";
    for n in 1..100 {
        let name = if n == 1 {
            format!("{stem}.json")
        } else {
            format!("{stem}-{n}.json")
        };
        if d.path(&name).is_ok() {
            continue;
        }
        return d
            .write(&name, &text)
            .map(|()| Some(name))
            .map_err(|e| format!("the report could not be saved in --reports-dir: {e}"));
    }
    Err("the report could not be saved: 99 reports of that name this second".into())
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// `POST /api/run/stop|pause|resume|rate`.
pub fn control(ctx: &Ctx, action: Action, body: &[u8]) -> Reply {
    let control = ctx.runner.lock().active.as_ref().map(|a| a.control.clone());
    match control {
        Some(c) => act(&c, action, body),
        None => Reply::error(409, "no run is going"),
    }
}
