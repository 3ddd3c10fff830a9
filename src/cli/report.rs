//! `ingestbench report merge|compare|list`: saved JSON reports read back. `merge` joins a
//! sharded run's shard reports into the run's one report (`report::merge`) and exits with
//! its verdict; `compare` sets replicate reports of a baseline against a candidate's
//! (`report::compare`) and exits 3 when a gated metric regressed; `list` shows the reports in
//! a directory, one line each; `show` prints a saved report as the text report.

use argh::FromArgs;
use std::path::{Path, PathBuf};

use super::run::Output;
use crate::exit::Exit;
use crate::report::text::Timeline;
use crate::report::{self, compare};

#[derive(FromArgs)]
/// Saved reports: merge a sharded run's shard reports, compare a candidate's against a
/// baseline's, list a directory of them, show one as text.
#[argh(
    subcommand,
    name = "report",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench report merge out/report.shard-0.json out/report.shard-1.json out/report.shard-2.json",
    example = "ingestbench report compare base.json cand.json",
    example = "ingestbench report compare base/ cand/ --threshold 5% --confidence 90%",
    example = "ingestbench report list out/",
    example = "ingestbench report show out/report.json"
)]
pub struct Args {
    #[argh(subcommand)]
    command: Sub,
}

#[derive(FromArgs)]
#[argh(subcommand)]
enum Sub {
    Merge(MergeArgs),
    Compare(CompareArgs),
    List(ListArgs),
    Show(ShowArgs),
}

#[derive(FromArgs)]
/// Print a saved JSON report (`run --output json`, observability.report, `report merge`) as
/// the text report the run printed.
#[argh(subcommand, name = "show", help_triggers("-h", "--help", "help"))]
pub struct ShowArgs {
    /// the saved report
    #[argh(positional)]
    report: PathBuf,
    /// per-second timeline: condensed (default) or full
    #[argh(option, default = "Timeline::Condensed")]
    timeline: Timeline,
}

#[derive(FromArgs)]
/// Join the shard reports of one sharded run (`run --shard I/N`) into its report: histograms
/// added, counters summed, seconds aligned by wall clock, accounting joined, SLOs judged on
/// the merged figures. Refuses reports of another run, a shard twice or a shard missing.
#[argh(
    subcommand,
    name = "merge",
    help_triggers("-h", "--help", "help"),
    note = "Exit codes: the merged run's (0 OK, 3 SLO breach, 4 auth failure, 5 lost or duplicated, 6 aborted), 2 when the reports cannot be merged."
)]
pub struct MergeArgs {
    /// the shard reports, every shard of the run once
    #[argh(positional)]
    reports: Vec<PathBuf>,
    /// text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
    /// also write the merged JSON report here
    #[argh(option)]
    save: Option<PathBuf>,
}

#[derive(FromArgs)]
/// Compare a candidate's reports against a baseline's, metric by metric (achieved eps,
/// intended and service p50/p99, error rate, watched CPU and memory): the means, the
/// difference with its confidence interval, and a verdict (better, worse, no significant
/// change). Exit 3 when a gated metric is worse.
#[argh(
    subcommand,
    name = "compare",
    help_triggers("-h", "--help", "help"),
    note = "Arguments come in pairs, BASELINE CANDIDATE [BASELINE CANDIDATE …], each a report or a directory of replicate reports (*.json). A metric is worse (or better) when its interval lies wholly beyond the threshold on that side, no significant change otherwise; with one replicate a side the interval is the difference alone. Exit codes: 0 no gated metric worse, 3 one is, 2 bad input."
)]
pub struct CompareArgs {
    /// BASELINE CANDIDATE, and more replicate pairs
    #[argh(positional)]
    reports: Vec<PathBuf>,
    /// the smallest change that counts, relative to the baseline (default 5%)
    #[argh(option, default = "String::from(\"5%\")")]
    threshold: String,
    /// the confidence level of the intervals (default 90%)
    #[argh(option, default = "String::from(\"90%\")")]
    confidence: String,
    /// the metrics whose regression fails (exit 3), comma-separated (default: all)
    #[argh(option)]
    gate: Option<String>,
    /// text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
}

#[derive(FromArgs)]
/// List the reports in a directory, one line each, oldest first: when, run id, name, shard
/// or merge, achieved rate, intended p99, verdict.
#[argh(subcommand, name = "list", help_triggers("-h", "--help", "help"))]
pub struct ListArgs {
    /// the directory
    #[argh(positional)]
    dir: PathBuf,
    /// text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
}

pub fn run(a: Args) -> Exit {
    match a.command {
        Sub::Merge(m) => merge(m),
        Sub::Compare(c) => compare_cmd(c),
        Sub::List(l) => list(l),
        Sub::Show(s) => show(s),
    }
}

fn show(a: ShowArgs) -> Exit {
    let rep = match report::de::read_file(&a.report) {
        Ok(r) => r,
        Err(e) => return invalid(&e),
    };
    super::out(&report::text::render_with(&rep, a.timeline));
    Exit::Ok
}

fn invalid(msg: &str) -> Exit {
    super::err(&format!("error: {msg}"));
    Exit::Invalid
}

fn read(path: &Path) -> Result<String, String> {
    crate::fsio::read_text(path, report::de::MAX_REPORT_BYTES).map_err(|e| e.to_string())
}

fn merge(a: MergeArgs) -> Exit {
    if a.reports.is_empty() {
        return invalid("report merge: give the shard reports");
    }
    let files = match a
        .reports
        .iter()
        .map(|p| read(p).map(|t| (p.display().to_string(), t)))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(f) => f,
        Err(e) => return invalid(&e),
    };
    let rep = match report::merge::merge(&files) {
        Ok(r) => r,
        Err(e) => return invalid(&e.to_string()),
    };
    let json = format!(
        "{}\n",
        serde_json::to_string_pretty(&rep).unwrap_or_default()
    );
    let saved = a.save.as_ref().map(|path| {
        crate::fsio::write_atomic(path, json.as_bytes(), crate::fsio::WriteOptions::default())
    });
    match a.output {
        Output::Text => super::out(&report::text::render(&rep)),
        Output::Json => super::out(json.trim_end()),
    }
    for r in &rep.verdict.reasons {
        super::err(&format!("error: {r}"));
    }
    if let Some(Err(e)) = saved {
        // The merged report is not lost: it goes to stdout when it is not there already.
        if a.output != Output::Json {
            super::out(json.trim_end());
        }
        super::err(&format!(
            "error: --save: the merged report not written: {e} (what was at that path is \
             untouched); the JSON report is on stdout instead"
        ));
        return Exit::Aborted;
    }
    exit_of(rep.verdict.exit_code)
}

/// The exit a report's verdict gave.
fn exit_of(code: i32) -> Exit {
    match code {
        0 => Exit::Ok,
        2 => Exit::Invalid,
        3 => Exit::SloBreach,
        4 => Exit::AuthFailed,
        5 => Exit::VerifyFailed,
        _ => Exit::Aborted,
    }
}

/// The `*.json` files of a directory in name order, or the file itself.
fn reports_at(path: &Path) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(format!("{}: no *.json reports in it", path.display()));
    }
    Ok(v)
}

fn compare_cmd(a: CompareArgs) -> Exit {
    match compare_run(&a) {
        Ok(exit) => exit,
        Err(e) => invalid(&e),
    }
}

fn compare_run(a: &CompareArgs) -> Result<Exit, String> {
    if a.reports.len() < 2 || !a.reports.len().is_multiple_of(2) {
        return Err(
            "report compare: give BASELINE CANDIDATE (each a report or a directory of replicates), in pairs".into(),
        );
    }
    let settings = compare::Settings {
        threshold: compare::percent("--threshold", &a.threshold)?,
        confidence: compare::percent("--confidence", &a.confidence)?,
        gate: a
            .gate
            .as_deref()
            .map(|g| g.split(',').map(|s| s.trim().to_string()).collect()),
    };
    let (mut base, mut cand) = (Vec::new(), Vec::new());
    for pair in a.reports.chunks_exact(2) {
        let [b, c] = pair else { continue };
        for (side, path) in [(&mut base, b), (&mut cand, c)] {
            for p in reports_at(path)? {
                let text = read(&p)?;
                side.push(compare::Replicate::read(&p.display().to_string(), &text)?);
            }
        }
    }
    let c = compare::compare(&base, &cand, &settings)?;
    match a.output {
        Output::Text => super::out(&compare::text(&c)),
        Output::Json => super::out(&serde_json::to_string_pretty(&c).unwrap_or_default()),
    }
    if !c.regressed.is_empty() {
        super::err(&format!(
            "error: worse beyond {} at {} confidence: {}",
            a.threshold,
            a.confidence,
            c.regressed.join(", ")
        ));
    }
    for f in &c.gate_failures {
        super::err(&format!("error: gate: {f}"));
    }
    Ok(if c.failed() {
        Exit::SloBreach
    } else {
        Exit::Ok
    })
}

fn list(a: ListArgs) -> Exit {
    if !a.dir.is_dir() {
        return invalid(&format!("{}: not a directory", a.dir.display()));
    }
    let paths = match reports_at(&a.dir) {
        Ok(p) => p,
        Err(e) => return invalid(&e),
    };
    let mut rows = Vec::new();
    for p in paths {
        match read(&p).and_then(|t| compare::ListRow::read(&p.display().to_string(), &t)) {
            Ok(r) => rows.push(r),
            Err(e) => super::err(&format!("warning: skipped {e}")),
        }
    }
    rows.sort_by(|a, b| (&a.started_at, &a.file).cmp(&(&b.started_at, &b.file)));
    match a.output {
        Output::Text => super::out(&compare::list_text(&rows)),
        Output::Json => super::out(&serde_json::to_string_pretty(&rows).unwrap_or_default()),
    }
    Exit::Ok
}
