//! The CSV report: edr-loadgen's eleven columns first, in its order and number formats (UNIX
//! timestamp, events expected, events generated, PID, command line, user/system/sum seconds
//! with 2 decimals, user/system/sum %CPU with 3), then ours: peak RSS, the baseline, the
//! difference, failed and late spawns and lateness. One row per watched process and, as
//! edr-loadgen does, a SUM row when there is more than one (also when there is none, so the
//! spawn figures are always there). Rows are appended like edr-loadgen's; a header row is
//! written only when the file is new or empty.

use std::fmt::Write as _;
use std::path::Path;

use super::report::{Cpu, CpuRow, SpawnReport};

pub const EDR_LOADGEN_COLUMNS: [&str; 11] = [
    "timestamp",
    "events_expected",
    "events_generated",
    "pid",
    "cmdline",
    "user_s",
    "system_s",
    "sum_s",
    "user_pct",
    "system_pct",
    "sum_pct",
];

pub const OUR_COLUMNS: [&str; 13] = [
    "rss_peak_bytes",
    "baseline_user_s",
    "baseline_system_s",
    "baseline_sum_s",
    "baseline_sum_pct",
    "overhead_sum_s",
    "overhead_sum_pct",
    "events_failed",
    "events_late",
    "events_not_started",
    "lateness_p50_ms",
    "lateness_p99_ms",
    "lateness_max_ms",
];

/// Quotes a field the way Go's encoding/csv does: when it holds a comma, quote, CR or LF, or
/// starts with a space.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) || s.starts_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn ours(r: &SpawnReport, row: &CpuRow, rss: u64) -> Vec<String> {
    let b = row.baseline.as_ref();
    let o = row.overhead.as_ref();
    let f2 = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_default();
    let f3 = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    vec![
        rss.to_string(),
        f2(b.map(|b| b.user_s)),
        f2(b.map(|b| b.system_s)),
        f2(b.map(|b| b.sum_s)),
        f3(b.map(|b| b.sum_pct)),
        f2(o.map(|o| o.sum_s)),
        f3(o.map(|o| o.sum_pct)),
        r.spawns.failed.to_string(),
        r.spawns.late.to_string(),
        r.spawns.not_started.to_string(),
        format!("{:.3}", r.lateness_ms.p50),
        format!("{:.3}", r.lateness_ms.p99),
        format!("{:.3}", r.lateness_ms.max),
    ]
}

fn common(r: &SpawnReport) -> [String; 3] {
    [
        r.timestamp.to_string(),
        r.spawns.scheduled.to_string(),
        r.spawns.started.to_string(),
    ]
}

fn process_row(r: &SpawnReport, pid: u32, cmdline: &str, row: &CpuRow) -> Vec<String> {
    let c: &Cpu = &row.load;
    let mut v: Vec<String> = common(r).into();
    v.extend([
        pid.to_string(),
        cmdline.to_string(),
        format!("{:.2}", c.user_s),
        format!("{:.2}", c.system_s),
        format!("{:.2}", c.sum_s),
        format!("{:.3}", c.user_pct),
        format!("{:.3}", c.system_pct),
        format!("{:.3}", c.sum_pct),
    ]);
    v.extend(ours(r, row, c.rss_peak_bytes));
    v
}

fn sum_row(r: &SpawnReport) -> Vec<String> {
    let c = &r.sum.load;
    let mut v: Vec<String> = common(r).into();
    v.extend([
        String::new(),
        "SUM".into(),
        String::new(),
        String::new(),
        format!("{:.2}", c.sum_s),
        String::new(),
        String::new(),
        format!("{:.3}", c.sum_pct),
    ]);
    v.extend(ours(r, &r.sum, c.rss_peak_bytes));
    v
}

/// The rows (no header), each ending in a newline.
pub fn rows(r: &SpawnReport) -> String {
    let mut lines: Vec<Vec<String>> = r
        .processes
        .iter()
        .map(|p| process_row(r, p.pid, &p.cmdline, &p.cpu))
        .collect();
    if r.processes.len() != 1 {
        lines.push(sum_row(r));
    }
    let mut out = String::new();
    for l in lines {
        let fields: Vec<String> = l.iter().map(|f| field(f)).collect();
        let _ = writeln!(out, "{}", fields.join(","));
    }
    out
}

/// The header row.
pub fn header() -> String {
    let mut h: Vec<&str> = EDR_LOADGEN_COLUMNS.to_vec();
    h.extend(OUR_COLUMNS);
    format!("{}\n", h.join(","))
}

/// The most an existing CSV appended to may be.
pub const MAX_CSV_BYTES: u64 = 256 << 20;

/// Appends the rows to `path`, with a header first when the file is new or empty: the old
/// rows and the new written whole to a temporary file renamed over `path` (`fsio`), so a
/// failed write leaves the file as it was. A device or pipe (`/dev/stdout`) is written to.
pub fn append(path: &Path, r: &SpawnReport) -> Result<(), crate::fsio::FileError> {
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let mut text = if regular {
        crate::fsio::read_bytes(path, MAX_CSV_BYTES)?
    } else {
        Vec::new()
    };
    if text.is_empty() {
        text.extend_from_slice(header().as_bytes());
    } else if !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    text.extend_from_slice(rows(r).as_bytes());
    crate::fsio::write_atomic(path, &text, crate::fsio::WriteOptions::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(field("python3 -c x"), "python3 -c x");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field(" lead"), "\" lead\"");
    }

    #[test]
    fn header_has_edr_loadgens_columns_first() {
        let h = header();
        assert!(h.starts_with("timestamp,events_expected,events_generated,pid,cmdline,user_s,system_s,sum_s,user_pct,system_pct,sum_pct,rss_peak_bytes,"));
        assert_eq!(h.trim_end().split(',').count(), 24);
    }
}
