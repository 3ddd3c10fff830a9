//! `ingestbench verify --report FILE --source SPEC…`: reads the saved report's accounting,
//! asks every store what it holds (`verify` library), prints the result as text or JSON
//! (`ingestbench.verify/1`) and returns the exit code the verification chose.

use argh::FromArgs;
use std::path::PathBuf;
use std::time::Duration;

use super::run::Output;
use crate::config::units::parse_duration;
use crate::exit::Exit;
use crate::verify::{self, Options, VerifyError, expected::Expected, source::Spec};

#[derive(FromArgs)]
/// Ask stores what arrived: the events a saved report says were accepted, against what files
/// or a standalone sink hold, per agent: stored, lost, duplicated, unexpected.
#[argh(
    subcommand,
    name = "verify",
    example = "ingestbench verify --report report.json --source 'file:/var/log/ingest/out*.log'",
    example = "ingestbench verify --report report.json --source sink:http://127.0.0.1:9800 --output json",
    note = "SPEC: file:GLOB (every matching file, rotated and .gz ones included; wildcards in the file name only) or sink:URL (a standalone `ingestbench sink`, its GET /stats: counts only, the missing seqs cannot be listed).",
    note = "Exit codes: 0 nothing lost or duplicated beyond the limits, 2 bad report or flag, 5 lost or duplicated beyond the limits, or the report's failed list overflowed (inexact), 6 a store cannot be reached."
)]
pub struct Args {
    /// the saved report (`ingestbench run --output json`, with its accounting section)
    #[argh(option)]
    report: PathBuf,
    /// a store to ask, repeatable: file:GLOB or sink:URL
    #[argh(option)]
    source: Vec<String>,
    /// longest wait for a store to stop growing, polled every second (default 60s; 0s: none)
    #[argh(option)]
    settle_timeout: Option<String>,
    /// events lost allowed (default: the report's slo.max_lost_events, else 0)
    #[argh(option)]
    max_lost: Option<u64>,
    /// events duplicated allowed (default: the report's slo.max_dup_events, else 0)
    #[argh(option)]
    max_dup: Option<u64>,
    /// output: text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
}

pub fn run(a: Args) -> Exit {
    match start(&a) {
        Ok(code) => code,
        Err(e) => {
            super::err(&format!("error: {e}"));
            e.exit()
        }
    }
}

fn start(a: &Args) -> Result<Exit, VerifyError> {
    if a.source.is_empty() {
        return Err(VerifyError::Input(
            "give at least one --source (file:GLOB or sink:URL)".into(),
        ));
    }
    let specs = a
        .source
        .iter()
        .map(|s| Spec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let settle_timeout = match &a.settle_timeout {
        Some(s) => {
            parse_duration(s)
                .map_err(|e| VerifyError::Input(format!("--settle-timeout: {e}")))?
                .0
        }
        None => Duration::from_secs(60),
    };
    let text = std::fs::read_to_string(&a.report)
        .map_err(|e| VerifyError::Input(format!("{}: {e}", a.report.display())))?;
    let exp = Expected::from_report(&text)
        .map_err(|e| VerifyError::Input(format!("{}: {e}", a.report.display())))?;
    let v = verify::verify(
        &exp,
        &specs,
        &Options {
            settle_timeout,
            poll: Duration::from_secs(1),
            http_timeout: Duration::from_secs(10),
            max_lost: a.max_lost,
            max_dup: a.max_dup,
        },
    )?;
    match a.output {
        Output::Text => super::out(&verify::render::render_text(&v)),
        Output::Json => super::out(&serde_json::to_string_pretty(&v).unwrap_or_default()),
    }
    Ok(v.exit())
}
