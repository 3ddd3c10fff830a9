//! `ingestbench spawn`: flags (argh) become a `spawn::plan::Request`, the library checks it
//! into a `Plan` (refusals exit 2 with the reason), runs the baseline and the load, and this
//! prints the report as text (edr-loadgen's terms) or JSON (`ingestbench.spawn/1`), appends
//! the CSV, and returns the verdict's exit code (0, or 6 with the reasons on stderr).

use argh::FromArgs;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::config::units::parse_duration;
use crate::exit::Exit;
use crate::spawn::plan::{self, MAX_RATE, Pace, Request};
use crate::spawn::{self, SpawnError};

use super::run::Output;

#[derive(FromArgs)]
/// Spawn processes on an open-loop schedule (spawn k due at start + k/rate) and measure the CPU the watched processes (an EDR agent, auditd) spend, against an idle baseline of the same length.
#[argh(
    subcommand,
    name = "spawn",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench spawn --rate 200/s --duration 30s --pid $(pidof auditd)",
    example = "ingestbench spawn --command /bin/true --delay 5ms --duration 30s --process laurel --report out.csv",
    example = "ingestbench spawn --rate 1000/s --duration 10s --baseline 5s --output json",
    note = "Default payload: ingestbench itself with INGESTBENCH_SPAWNED=1 as its whole environment, which exits 0 at once (edr-loadgen's EDR_LOADGEN=1). Refused (exit 2): a zero delay, a delay over a tenth of --duration, both or neither of --rate and --delay, a rate above {MAX_RATE}/s without --force. Exit 0 when every due spawn started, none failed and at most 1 % were a period or more late; 6 otherwise (the reasons on stderr)."
)]
pub struct Args {
    /// program to spawn (a path, or a name looked up on PATH; default: ingestbench itself)
    #[argh(option)]
    command: Option<String>,
    /// one argument for --command (repeat for more)
    #[argh(option)]
    args: Vec<String>,
    /// spawns per second: 200/s or 200
    #[argh(option)]
    rate: Option<String>,
    /// time between spawns, e.g. 5ms (edr-loadgen's -delay)
    #[argh(option)]
    delay: Option<String>,
    /// how long to spawn, e.g. 30s (required)
    #[argh(option)]
    duration: Option<String>,
    /// a process to watch by PID (repeatable)
    #[argh(option)]
    pid: Vec<u32>,
    /// processes to watch by name: comm or argv[0]'s basename (repeatable)
    #[argh(option)]
    process: Vec<String>,
    /// idle phase before the load, watching without spawning (default: as long as --duration)
    #[argh(option)]
    baseline: Option<String>,
    /// no baseline phase
    #[argh(switch)]
    no_baseline: bool,
    /// append CSV rows to this file (edr-loadgen's columns, then ours; a header when new)
    #[argh(option)]
    report: Option<PathBuf>,
    /// text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
    /// allow a rate above the ceiling
    #[argh(switch)]
    force: bool,
}

fn refuse(msg: &str) -> Exit {
    super::err(&format!("error: {msg}"));
    Exit::Invalid
}

fn duration(flag: &str, v: &Option<String>) -> Result<Option<std::time::Duration>, String> {
    v.as_deref()
        .map(|t| {
            parse_duration(t)
                .map(|d| d.0)
                .map_err(|e| format!("{flag}: {e}"))
        })
        .transpose()
}

fn request(a: &Args) -> Result<Request, String> {
    let pace = match (&a.rate, &a.delay) {
        (Some(_), Some(_)) => return Err("give --rate or --delay, not both".into()),
        (Some(r), None) => Some(Pace::Rate(plan::parse_rate(r)?)),
        (None, Some(_)) => duration("--delay", &a.delay)?.map(Pace::Delay),
        (None, None) => None,
    };
    Ok(Request {
        command: a.command.clone(),
        args: a.args.clone(),
        pace,
        duration: duration("--duration", &a.duration)?,
        baseline: duration("--baseline", &a.baseline)?,
        no_baseline: a.no_baseline,
        pids: a.pid.clone(),
        names: a.process.clone(),
        force: a.force,
    })
}

/// Checks before the run that the CSV can be written (a temporary file made beside it and
/// removed; the file itself untouched), so a bad path is refused before minutes of load.
fn check_report(path: &Option<PathBuf>) -> Result<(), String> {
    if let Some(p) = path {
        crate::fsio::AtomicFile::create(p, crate::fsio::WriteOptions::default())
            .map_err(|e| format!("--report: {e}"))?;
    }
    Ok(())
}

pub fn run(a: Args) -> Exit {
    let plan = match request(&a).and_then(|r| plan::plan(&r)) {
        Ok(p) => p,
        Err(msg) => return refuse(&msg),
    };
    if let Err(msg) = check_report(&a.report) {
        return refuse(&msg);
    }
    super::err(&spawn::text::header(
        &plan.payload.display(),
        plan.delay().as_secs_f64(),
        plan.schedule.rate_per_s,
        plan.duration.as_secs_f64(),
    ));
    let stop = Arc::new(AtomicBool::new(false));
    let signals: Vec<_> = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
        .into_iter()
        .filter_map(|sig| signal_hook::flag::register(sig, stop.clone()).ok())
        .collect();
    let result = spawn::run(&plan, &stop, &mut |line| super::err(line));
    for id in signals {
        signal_hook::low_level::unregister(id);
    }
    let report = match result {
        Ok(r) => r,
        Err(e @ SpawnError::Invalid(_)) => return refuse(&e.to_string()),
        Err(e) => {
            super::err(&format!("error: {e}"));
            return Exit::Aborted;
        }
    };
    match a.output {
        Output::Json => super::out(&serde_json::to_string_pretty(&report).unwrap_or_default()),
        Output::Text => super::out(&spawn::text::render(&report)),
    }
    let mut exit = if report.verdict.kept {
        Exit::Ok
    } else {
        for reason in &report.verdict.reasons {
            super::err(&format!("FAIL: {reason}"));
        }
        Exit::Aborted
    };
    if let Some(path) = &a.report
        && let Err(e) = spawn::csv::append(path, &report)
    {
        super::err(&format!(
            "error: --report: the CSV rows not written: {e} (what was at that path is untouched)"
        ));
        exit = Exit::Aborted;
    }
    exit
}
