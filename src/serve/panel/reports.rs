//! The panel's Reports tab: the JSON reports of `--reports-dir` (and `last`, the report of
//! the last run this panel finished, kept in memory) listed with their headline figures,
//! opened as they were written, downloaded as JSON or as the timeline's CSV, and two compared
//! figure by figure, each difference of 5 % or more marked and the better side named.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Ctx, file_reply, no_dir_reason, shown};
use crate::report::csv;
use crate::serve::guard::{Body, Reply};

/// The names reports take.
pub const EXTS: &[&str] = &[".json"];

/// The name of the last finished run's report.
pub const LAST: &str = "last";

/// A relative difference at or above this is marked.
const DIFFERS: f64 = 0.05;

/// A report by name: `last`, or a file of `--reports-dir`.
fn load(ctx: &Ctx, name: &str) -> Result<Arc<Value>, Reply> {
    if name == LAST {
        return ctx
            .runner
            .last_report()
            .ok_or_else(|| Reply::error(404, "no run has finished in this panel yet"));
    }
    let Some(d) = &ctx.dirs.reports else {
        return Err(Reply::error(
            404,
            &no_dir_reason("--reports-dir", "report files"),
        ));
    };
    let text = d.read(name).map_err(file_reply)?;
    serde_json::from_str(&text)
        .map(Arc::new)
        .map_err(|e| Reply::error(422, &format!("{name}: not a JSON report: {e}")))
}

/// The headline figures of a report, for the list.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's Index returns Null for a missing key or a non-object and never \
              panics; IndexMut is used only on objects built here with json!"
)]
fn headline(r: &Value) -> Value {
    let s = &r["summary"];
    json!({
        "run_name": r["name"],
        "started_at": r["started_at"],
        "target": r["target"]["url"],
        "adapter": r["target"]["adapter"],
        "source": r["target"]["source"],
        "target_eps": s["target_eps"],
        "achieved_eps": s["achieved_eps"],
        "p99_ms": r["latency_ms"]["intended"]["p99"],
        "pass": r["verdict"]["pass"],
        "exit_code": r["verdict"]["exit_code"],
    })
}

/// `GET /api/reports`.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's Index returns Null for a missing key or a non-object and never \
              panics; IndexMut is used only on objects built here with json!"
)]
pub fn list(ctx: &Ctx) -> Reply {
    let Some(d) = &ctx.dirs.reports else {
        return Reply::value(
            200,
            &json!({"dir": null, "reason": no_dir_reason("--reports-dir", "report files"), "reports": []}),
        );
    };
    let mut entries = match d.list() {
        Ok(e) => e,
        Err(e) => return file_reply(e),
    };
    entries.sort_by(|a, b| b.modified_s.cmp(&a.modified_s).then(a.name.cmp(&b.name)));
    let reports: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut row = json!({"name": e.name, "bytes": e.bytes, "modified_s": e.modified_s});
            let parsed = d
                .read(&e.name)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()));
            match parsed {
                Ok(r) if r["schema"].is_string() || r["summary"].is_object() => {
                    merge(&mut row, headline(&r))
                }
                Ok(_) => row["error"] = json!("not an ingestbench report"),
                Err(m) => row["error"] = json!(m),
            }
            row
        })
        .collect();
    Reply::value(
        200,
        &json!({"dir": shown(d.root()), "reason": null, "reports": reports}),
    )
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), from) {
        a.extend(b);
    }
}

/// `GET /api/reports/{name}`.
pub fn open(ctx: &Ctx, name: &str, download: bool) -> Reply {
    let r = match load(ctx, name) {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let body = serde_json::to_vec_pretty(&*r).unwrap_or_default();
    let reply = Reply::json(200, body);
    if download {
        reply.attachment(&download_name(&r, name, "json"))
    } else {
        reply
    }
}

/// `GET /api/reports/{name}/csv`.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's Index returns Null for a missing key or a non-object and never \
              panics; IndexMut is used only on objects built here with json!"
)]
pub fn csv(ctx: &Ctx, name: &str) -> Reply {
    let r = match load(ctx, name) {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let rows = r["timeline"].as_array().map_or(&[][..], Vec::as_slice);
    Reply::of(200, Body::Csv, csv::render_json(rows).into_bytes())
        .attachment(&download_name(&r, name, "csv"))
}

/// The file name a download is saved as: the report's own, or the run's name for `last`;
/// only characters a file name takes everywhere.
fn download_name(r: &Value, name: &str, ext: &str) -> String {
    let stem = if name == LAST {
        r["name"].as_str().unwrap_or("report").to_string()
    } else {
        name.trim_end_matches(".json").to_string()
    };
    format!("{}.{ext}", safe_stem(&stem))
}

/// Letters, digits, `.`, `_`, `-`; anything else becomes `-`.
pub fn safe_stem(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let t = t.trim_start_matches('.');
    if t.is_empty() {
        "report".into()
    } else {
        t.chars().take(96).collect()
    }
}

/// Which way is better for a figure.
#[derive(Clone, Copy)]
enum Better {
    Higher,
    Lower,
    Neither,
}

/// The figures compared: JSON pointer into the report, label, unit, which way is better.
const FIGURES: &[(&str, &str, &str, &str, Better)] = &[
    (
        "target_eps",
        "/summary/target_eps",
        "target rate",
        "eps",
        Better::Neither,
    ),
    (
        "achieved_eps",
        "/summary/achieved_eps",
        "achieved rate",
        "eps",
        Better::Higher,
    ),
    (
        "eps_ratio",
        "/summary/eps_ratio",
        "achieved / target",
        "",
        Better::Higher,
    ),
    (
        "events_sent",
        "/summary/events_sent",
        "events sent",
        "",
        Better::Neither,
    ),
    (
        "events_accepted",
        "/summary/events_accepted",
        "events accepted",
        "",
        Better::Higher,
    ),
    (
        "events_failed",
        "/summary/events_failed",
        "events failed",
        "",
        Better::Lower,
    ),
    (
        "error_rate",
        "/summary/error_rate",
        "error rate",
        "",
        Better::Lower,
    ),
    (
        "shortfall_events",
        "/summary/shortfall_events",
        "due and not sent",
        "",
        Better::Lower,
    ),
    (
        "intended_p50_ms",
        "/latency_ms/intended/p50",
        "p50 intended",
        "ms",
        Better::Lower,
    ),
    (
        "intended_p99_ms",
        "/latency_ms/intended/p99",
        "p99 intended",
        "ms",
        Better::Lower,
    ),
    (
        "intended_p99_9_ms",
        "/latency_ms/intended/p99_9",
        "p99.9 intended",
        "ms",
        Better::Lower,
    ),
    (
        "intended_max_ms",
        "/latency_ms/intended/max",
        "max intended",
        "ms",
        Better::Lower,
    ),
    (
        "service_p50_ms",
        "/latency_ms/service/p50",
        "p50 service",
        "ms",
        Better::Lower,
    ),
    (
        "service_p99_ms",
        "/latency_ms/service/p99",
        "p99 service",
        "ms",
        Better::Lower,
    ),
    (
        "lag_ms_max",
        "/summary/lag_ms_max",
        "send lag max",
        "ms",
        Better::Lower,
    ),
    (
        "duration_s",
        "/duration_s",
        "duration",
        "s",
        Better::Neither,
    ),
];

/// `GET /api/reports/compare?a=&b=`.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's Index returns Null for a missing key or a non-object and never \
              panics; IndexMut is used only on objects built here with json!"
)]
pub fn compare(ctx: &Ctx, a: Option<&str>, b: Option<&str>) -> Reply {
    let (Some(a), Some(b)) = (a, b) else {
        return Reply::error(400, "name both reports: ?a=NAME&b=NAME");
    };
    let (ra, rb) = match (load(ctx, a), load(ctx, b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    let mut rows: Vec<Value> = FIGURES
        .iter()
        .map(|(metric, ptr, label, unit, better)| {
            number_row(
                metric,
                label,
                unit,
                *better,
                ra.pointer(ptr),
                rb.pointer(ptr),
            )
        })
        .collect();
    rows.push(verdict_row(&ra, &rb));
    let side = |name: &str, r: &Value| json!({"name": name, "run_name": r["name"], "started_at": r["started_at"], "target": r["target"]["url"]});
    Reply::value(
        200,
        &json!({"a": side(a, &ra), "b": side(b, &rb), "rows": rows}),
    )
}

fn number_row(
    metric: &str,
    label: &str,
    unit: &str,
    better: Better,
    a: Option<&Value>,
    b: Option<&Value>,
) -> Value {
    let (x, y) = (a.and_then(Value::as_f64), b.and_then(Value::as_f64));
    let (delta, pct, differs, side) = match (x, y) {
        (Some(x), Some(y)) => {
            let delta = y - x;
            let pct = (x != 0.0).then(|| 100.0 * delta / x.abs());
            let scale = x.abs().max(y.abs());
            let differs = scale > 0.0 && delta.abs() / scale >= DIFFERS;
            // Equal up to the last bits a report read back from a file may change.
            let equal = delta.abs() <= 1e-9 * scale;
            let side = match better {
                _ if equal => None,
                Better::Higher => Some(if y > x { "b" } else { "a" }),
                Better::Lower => Some(if y < x { "b" } else { "a" }),
                Better::Neither => None,
            };
            (Some(delta), pct, differs, side)
        }
        // One side has the figure and the other not (e.g. p99 of too few samples).
        (None, None) => (None, None, false, None),
        _ => (None, None, true, None),
    };
    json!({
        "metric": metric, "label": label, "unit": unit,
        "a": a.cloned().unwrap_or(Value::Null), "b": b.cloned().unwrap_or(Value::Null),
        "delta": delta, "delta_pct": pct, "better": side, "differs": differs,
    })
}

#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's Index returns Null for a missing key or a non-object and never \
              panics; IndexMut is used only on objects built here with json!"
)]
fn verdict_row(a: &Value, b: &Value) -> Value {
    let (pa, pb) = (&a["verdict"]["pass"], &b["verdict"]["pass"]);
    let better = match (pa.as_bool(), pb.as_bool()) {
        (Some(true), Some(false)) => Some("a"),
        (Some(false), Some(true)) => Some("b"),
        _ => None,
    };
    json!({
        "metric": "pass", "label": "verdict", "unit": "",
        "a": pa, "b": pb, "delta": null, "delta_pct": null,
        "better": better, "differs": pa != pb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_mark_differences_and_the_better_side() {
        let (a, b) = (json!(10.0), json!(9.0));
        let r = number_row("p", "p", "ms", Better::Lower, Some(&a), Some(&b));
        assert_eq!(r["better"], "b");
        assert_eq!(r["differs"], true);
        assert!((r["delta_pct"].as_f64().unwrap() + 10.0).abs() < 1e-9);
        let c = json!(10.2);
        let r = number_row("p", "p", "ms", Better::Lower, Some(&a), Some(&c));
        assert_eq!(
            (r["better"].clone(), r["differs"].clone()),
            (json!("a"), json!(false))
        );
        let r = number_row("e", "e", "", Better::Higher, Some(&a), Some(&a));
        assert_eq!(
            (r["better"].clone(), r["differs"].clone()),
            (Value::Null, json!(false))
        );
        let r = number_row("t", "t", "", Better::Neither, Some(&a), Some(&b));
        assert_eq!(r["better"], Value::Null);
        let r = number_row(
            "p99",
            "p99",
            "ms",
            Better::Lower,
            Some(&a),
            Some(&Value::Null),
        );
        assert_eq!(r["differs"], true);
        let zero = json!(0);
        let r = number_row("f", "f", "", Better::Lower, Some(&zero), Some(&zero));
        assert_eq!(r["differs"], false);
        let v = verdict_row(
            &json!({"verdict": {"pass": true}}),
            &json!({"verdict": {"pass": false}}),
        );
        assert_eq!(
            (v["better"].clone(), v["differs"].clone()),
            (json!("a"), json!(true))
        );
    }

    #[test]
    fn download_names_are_plain() {
        assert_eq!(safe_stem("steady smoke/../x"), "steady-smoke-..-x");
        assert_eq!(safe_stem("..."), "report");
        assert_eq!(safe_stem("ok-1.2_a"), "ok-1.2_a");
    }
}
