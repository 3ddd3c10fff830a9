//! `observability.csv`: the per-second timeline as CSV, for a spreadsheet or a plotting tool.
//! The header row is the timeline rows' JSON keys, in the JSON's order; one row per second,
//! every second (the text report condenses, this never does). Numbers are written as Rust
//! prints them (shortest form that reads back the same, no exponent); `control` lists the
//! second's control actions separated by `;` (empty when none). Fields are quoted per
//! RFC 4180 when they hold a comma, a quote or a line break; lines end in LF.

use std::fmt::Write;

use crate::report::{Report, SecondRow};

/// The columns, in order: the keys of a `timeline` row in the JSON report.
pub const COLUMNS: [&str; 16] = [
    "t",
    "target_eps",
    "events_sent",
    "events_accepted",
    "events_failed",
    "errors",
    "reconnects",
    "refused",
    "p50_ms",
    "p99_ms",
    "lag_ms_max",
    "backlog_events",
    "watched_cores",
    "watched_rss_bytes",
    "own_cores",
    "control",
];

pub fn render(r: &Report) -> String {
    let mut out = String::with_capacity(64 * (r.timeline.len() + 1));
    out.push_str(&COLUMNS.join(","));
    out.push('\n');
    for row in &r.timeline {
        push_row(&mut out, row);
    }
    out
}

fn push_row(out: &mut String, row: &SecondRow) {
    let _ = write!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},",
        row.t,
        row.target_eps,
        row.events_sent,
        row.events_accepted,
        row.events_failed,
        row.errors,
        row.reconnects,
        row.refused,
        row.p50_ms,
        row.p99_ms,
        row.lag_ms_max,
        row.backlog_events,
        opt(row.watched_cores),
        opt(row.watched_rss_bytes),
        opt(row.own_cores),
    );
    out.push_str(&field(&row.control.join(";")));
    out.push('\n');
}

/// The same CSV from a report read back as JSON (the control panel's download of a saved
/// report): the same columns, numbers as Rust prints them, a missing value empty.
pub fn render_json(rows: &[serde_json::Value]) -> String {
    let mut out = String::with_capacity(64 * (rows.len() + 1));
    out.push_str(&COLUMNS.join(","));
    out.push('\n');
    for row in rows {
        let cells: Vec<String> = COLUMNS.iter().map(|c| json_cell(&row[*c])).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

fn json_cell(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => String::new(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => f.to_string(),
            _ => n.to_string(),
        },
        Value::String(s) => field(s),
        Value::Array(a) => field(
            &a.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(";"),
        ),
        other => field(&other.to_string()),
    }
}

/// An optional number: empty when absent.
fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// One field, quoted when RFC 4180 needs it (a comma, a double quote, CR or LF), with
/// double quotes doubled inside.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_follows_rfc_4180() {
        assert_eq!(field("pause"), "pause");
        assert_eq!(field(""), "");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn columns_are_the_json_keys_of_a_row() {
        let row = SecondRow {
            t: 3,
            target_eps: 1500.5,
            events_sent: 1500,
            events_accepted: 1400,
            events_failed: 100,
            errors: 2,
            reconnects: 1,
            refused: 3,
            p50_ms: 1.25,
            p99_ms: 9.0,
            lag_ms_max: 0.5,
            backlog_events: 0,
            watched_cores: None,
            watched_rss_bytes: None,
            own_cores: None,
            control: vec!["pause", "resume"],
        };
        // Every column is a key of the row's JSON, in the JSON's order, and nothing else.
        let json = serde_json::to_string(&row).unwrap();
        let at: Vec<usize> = COLUMNS
            .iter()
            .map(|c| {
                json.find(&format!("\"{c}\":"))
                    .unwrap_or_else(|| panic!("{c}"))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{json}");
        assert_eq!(json.matches("\":").count(), COLUMNS.len(), "{json}");
        let mut out = String::new();
        push_row(&mut out, &row);
        assert_eq!(
            out,
            "3,1500.5,1500,1400,100,2,1,3,1.25,9,0.5,0,,,,pause;resume\n"
        );
        // Read back as JSON (a saved report), the row comes out the same.
        let quiet = SecondRow {
            control: vec![],
            watched_cores: Some(0.25),
            ..row.clone()
        };
        let rows = [
            serde_json::to_value(&row).unwrap(),
            serde_json::to_value(&quiet).unwrap(),
        ];
        let mut direct = COLUMNS.join(",") + "\n";
        push_row(&mut direct, &row);
        push_row(&mut direct, &quiet);
        assert_eq!(render_json(&rows), direct);
    }
}
