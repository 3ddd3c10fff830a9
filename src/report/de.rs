//! Reading a saved report back: the one reader of `report show|merge|compare|list`. `read_file`
//! reads the file through `fsio` (a regular file of at most `MAX_REPORT_BYTES`), `read` takes
//! it as JSON, checks its schema, reads it whole into a `Report` and then checks what a type
//! alone cannot (`check`): counts that no run reaches (over 2^53) or that contradict each
//! other (more accepted than sent), negative figures, times outside any run, a shard section
//! that is not one, a verdict that is no exit code, and the latency histograms, decoded with
//! their headers checked (`hdr::decode`: a histogram of the run's configuration only) and
//! counting what `latency_ms` says. Whatever one command refuses, the others refuse with the
//! same words.
//!
//! The report's vocabulary words are `&'static str` in the types the run fills (no
//! allocation, one spelling), so reading one back gives each such word a `'static` home. A
//! command reads a few reports in a process that then ends, so their few words are leaked
//! rather than interned.

use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::report::{REPORT_SCHEMA, Report, hdr};

/// The most a saved report file may be (`report …`, `size --report`, `verify --report`): a
/// 12-hour soak's is tens of MB.
pub const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;
/// The most shards one run is spread over (their counters are summed).
pub const MAX_SHARDS: u32 = 1024;
/// The longest run a report can be of, in seconds (a year).
pub const MAX_RUN_S: u64 = 366 * 86_400;
/// Wall-clock starts a report can have: 2000-01-01 to 2200-01-01, ns since the epoch.
const WALL_NS: std::ops::RangeInclusive<i64> = 946_684_800_000_000_000..=7_258_118_400_000_000_000;

/// The saved report at `path`, read and checked.
pub fn read_file(path: &Path) -> Result<Report, String> {
    let text = crate::fsio::read_text(path, MAX_REPORT_BYTES).map_err(|e| e.to_string())?;
    read(&path.display().to_string(), &text)
}

/// A saved JSON report (`file` names it in errors) read back whole and checked.
pub fn read(file: &str, text: &str) -> Result<Report, String> {
    read_with_json(file, text).map(|(rep, _)| rep)
}

/// `read`, and the report's JSON as the file has it (where a figure is `null`, the `Report`
/// holds a number: `report compare` reads its figures from the JSON).
pub fn read_with_json(file: &str, text: &str) -> Result<(Report, Value), String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{file}: not JSON: {e}"))?;
    let schema = v.get("schema").and_then(Value::as_str).unwrap_or("");
    if schema != REPORT_SCHEMA {
        return Err(format!(
            "{file}: report schema {schema:?}; this ingestbench reads {REPORT_SCHEMA:?}"
        ));
    }
    figures(&v).map_err(|e| format!("{file}: {e}"))?;
    let rep =
        Report::deserialize(v.clone()).map_err(|e| format!("{file}: not a whole report: {e}"))?;
    check(&rep).map_err(|e| format!("{file}: {e}"))?;
    Ok((rep, v))
}

/// The sections of counts, rates and times: no number in them is negative, and a count
/// (an integer not in nanoseconds) is at most `hdr::MAX_COUNT`.
const FIGURES: &[&str] = &[
    "summary",
    "latency_ms",
    "latency_histogram",
    "status",
    "hec_codes",
    "timeline",
    "loss",
    "accounting",
    "shard",
    "duration_s",
    "paused_s",
    "threads",
    "connections",
    "batch_max_events",
    "batch_max_bytes",
];

fn figures(v: &Value) -> Result<(), String> {
    for key in FIGURES {
        if let Some(x) = v.get(key) {
            walk(x, key)?;
        }
    }
    Ok(())
}

fn walk(v: &Value, at: &str) -> Result<(), String> {
    match v {
        Value::Number(n) => number(n, at),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| walk(x, &format!("{at}[{i}]"))),
        Value::Object(o) => o
            .iter()
            .try_for_each(|(k, x)| walk(x, &format!("{at}.{k}"))),
        _ => Ok(()),
    }
}

/// Figures that are differences, and may be negative (`loss.unattributed`: what the
/// counters do not close on).
const SIGNED: &[&str] = &["loss.unattributed"];

fn number(n: &serde_json::Number, at: &str) -> Result<(), String> {
    let nanos = at.ends_with("_ns") || at.contains("_ns.") || at.contains("_ns[");
    if SIGNED.contains(&at) {
        return match n.as_i64() {
            Some(x) if x.unsigned_abs() <= hdr::MAX_COUNT => Ok(()),
            _ => Err(format!("{at} is {n}: beyond any run")),
        };
    }
    if n.as_i64().is_some_and(|x| x < 0) || n.as_f64().is_some_and(|x| x < 0.0) {
        return Err(format!(
            "{at} is {n}: a count, rate or time is never negative"
        ));
    }
    if let Some(x) = n.as_u64() {
        if !nanos && x > hdr::MAX_COUNT {
            return Err(format!(
                "{at} is {x}: beyond any run (counts are at most 2^53)"
            ));
        }
        if x > i64::MAX as u64 {
            return Err(format!("{at} is {x}: beyond any run"));
        }
    } else if n.as_f64().is_some_and(|x| x > 1e18) {
        return Err(format!("{at} is {n}: beyond any run"));
    }
    Ok(())
}

/// What the types let through and no run writes.
fn check(r: &Report) -> Result<(), String> {
    let v = &r.verdict;
    if !matches!(v.exit_code, 0 | 2..=6) || v.pass != (v.exit_code == 0) {
        return Err(format!(
            "verdict: pass {} with exit code {}: not a verdict ingestbench gives",
            v.pass, v.exit_code
        ));
    }
    let s = &r.summary;
    if s.events_accepted > s.events_sent || s.events_failed > s.events_sent {
        return Err(format!(
            "summary: {} events accepted and {} failed of {} sent",
            s.events_accepted, s.events_failed, s.events_sent
        ));
    }
    if r.duration_s > MAX_RUN_S as f64 {
        return Err(format!(
            "duration_s {} is longer than any run",
            r.duration_s
        ));
    }
    for (clock, text, count) in [
        (
            "intended",
            &r.latency_hdr.intended,
            r.latency_ms.intended.count,
        ),
        (
            "service",
            &r.latency_hdr.service,
            r.latency_ms.service.count,
        ),
    ] {
        let h = hdr::decode(text).map_err(|e| format!("latency_hdr.{clock}: {e}"))?;
        if h.len() != count {
            return Err(format!(
                "latency_hdr.{clock} holds {} values and latency_ms.{clock}.count says {count}",
                h.len()
            ));
        }
    }
    if let Some(sv) = &r.verification {
        let most = [
            sv.events_received,
            sv.distinct,
            sv.duplicates,
            sv.lost_events,
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        if most > hdr::MAX_COUNT {
            return Err(format!("verification: a count of {most} is beyond any run"));
        }
    }
    if let Some(sh) = &r.shard {
        shard(sh)?;
    }
    Ok(())
}

/// A shard section as `run --shard` writes one.
fn shard(s: &crate::report::merge::ShardSection) -> Result<(), String> {
    if s.count == 0 || s.count > MAX_SHARDS || s.index >= s.count {
        return Err(format!(
            "shard {}/{}: not a shard of a run (at most {MAX_SHARDS} shards, index below count)",
            s.index, s.count
        ));
    }
    if !WALL_NS.contains(&s.started_wall_ns) {
        return Err(format!(
            "shard.started_wall_ns {} is not a time between 2000 and 2200",
            s.started_wall_ns
        ));
    }
    let max_ns = MAX_RUN_S * 1_000_000_000;
    for (what, ns) in [
        ("duration_ns", s.duration_ns),
        ("window_ns", s.window_ns),
        ("drain_ns", s.drain_ns),
        ("warmup_ns", s.warmup_ns),
        ("paused_ns", s.paused_ns),
    ] {
        if ns > max_ns {
            return Err(format!("shard.{what} {ns} is longer than any run"));
        }
    }
    if !s.target_events.is_finite() || s.target_events > hdr::MAX_COUNT as f64 {
        return Err(format!(
            "shard.target_events {} is beyond any run",
            s.target_events
        ));
    }
    let t = &s.totals;
    if t.events_accepted > t.events_sent || t.events_failed > t.events_sent {
        return Err(format!(
            "shard.totals: {} events accepted and {} failed of {} sent",
            t.events_accepted, t.events_failed, t.events_sent
        ));
    }
    if let Some(x) = s.seconds.iter().find(|x| u64::from(x.t) > MAX_RUN_S) {
        return Err(format!("shard.seconds: second {} is beyond any run", x.t));
    }
    let per_agent = crate::verify::expected::MAX_EVENTS_PER_AGENT;
    if let Some(a) = s.agents.iter().find(|a| a.events_sent > per_agent) {
        return Err(format!(
            "shard.agents: agent {} sent {}, beyond what one agent can (2^36)",
            a.agent, a.events_sent
        ));
    }
    Ok(())
}

fn keep(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

pub fn leak<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    String::deserialize(d).map(keep)
}

pub fn leak_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
    Option::<String>::deserialize(d).map(|o| o.map(keep))
}

/// A field whose type reads only from `'static` input (it holds such words): read through a
/// JSON value, which lends it that.
pub fn owned<'de, D: Deserializer<'de>, T: Deserialize<'static>>(d: D) -> Result<T, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    T::deserialize(v).map_err(serde::de::Error::custom)
}

pub fn leak_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<&'static str>, D::Error> {
    Vec::<String>::deserialize(d).map(|v| v.into_iter().map(keep).collect())
}
