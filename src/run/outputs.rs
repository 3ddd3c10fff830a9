//! What a run writes beside its outcome: the timeline CSV (`observability.csv`), the sizing
//! CSV (`observability.sizing_csv`), the HDR log (`observability.hdr_log`, renamed into place
//! when the run ends) and the JSON report (`observability.report`), each through `fsio`: a
//! temporary file beside the path, renamed over it. A file that cannot be written fails the
//! run — exit 6 (an auth failure's 4 or an abort's 6 stand), its path named among the
//! reasons — and leaves what was at its path untouched; the CLI then prints the JSON report
//! on stdout instead (`RunOutcome::unwritten`). The report is written last, so it carries the
//! other files' failures in its verdict.

use std::path::Path;

use crate::exit::Exit;
use crate::fsio::{self, FileError, WriteOptions};
use crate::report::{Report, Verdict};
use crate::run::RunOutcome;

/// One file to write: what it is (in messages), where, and its bytes.
pub(crate) struct File {
    pub what: &'static str,
    pub path: String,
    pub text: String,
}

/// The report as its JSON file holds it.
pub(crate) fn report_json(rep: &Report) -> String {
    let json = serde_json::to_string_pretty(rep).unwrap_or_default();
    format!("{json}\n")
}

/// Writes `files`, then the report to `report` (with the verdict every failure before it
/// left); `earlier` is a failure already met (the HDR log's).
pub(crate) fn write(
    out: &mut RunOutcome,
    earlier: Option<(&'static str, FileError)>,
    files: Vec<File>,
    report: Option<String>,
) {
    if let Some((what, e)) = earlier {
        failed(out, what, &e);
    }
    for f in files {
        if let Err(e) = fsio::write_atomic(Path::new(&f.path), f.text.as_bytes(), opts()) {
            failed(out, f.what, &e);
        }
    }
    if let Some(path) = report {
        let json = report_json(&out.report);
        if let Err(e) = fsio::write_atomic(Path::new(&path), json.as_bytes(), opts()) {
            failed(out, "the report", &e);
        }
    }
}

fn opts() -> WriteOptions {
    WriteOptions::default()
}

/// `what` could not be written: the run fails (6 unless it failed 4 or 6 already), and says
/// where and why.
pub(crate) fn failed(out: &mut RunOutcome, what: &str, e: &FileError) {
    out.unwritten.push(e.path().display().to_string());
    out.reasons.push(format!(
        "{what} not written: {e} (what was at that path is untouched)"
    ));
    if !matches!(out.exit, Exit::AuthFailed | Exit::Aborted) {
        out.exit = Exit::Aborted;
    }
    out.report.verdict = Verdict {
        pass: false,
        exit_code: out.exit.code(),
        reasons: out.reasons.clone(),
    };
}
