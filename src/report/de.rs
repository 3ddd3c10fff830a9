//! Reading a saved report back (`report show`): the report's vocabulary words are
//! `&'static str` in the types the run fills (no allocation, one spelling), so reading one
//! back gives each such word a `'static` home. `report show` reads one file in a process that
//! then ends, so the few words of a report are leaked rather than interned. `read` reads a
//! saved report whole, its schema checked first.

use serde::{Deserialize, Deserializer};

use crate::report::{REPORT_SCHEMA, Report};

/// The most a saved report file may be (`report …`, `size --report`): a 12-hour soak's is
/// tens of MB.
pub const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// A saved JSON report (`file` names it in errors) read back whole.
pub fn read(file: &str, text: &str) -> Result<Report, String> {
    let v = value(file, text)?;
    Report::deserialize(v).map_err(|e| format!("{file}: not a whole report: {e}"))
}

/// A saved report as JSON, its schema this ingestbench's (`report merge` reads its parts).
pub fn value(file: &str, text: &str) -> Result<serde_json::Value, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("{file}: not JSON: {e}"))?;
    let schema = v.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    if schema != REPORT_SCHEMA {
        return Err(format!(
            "{file}: report schema {schema:?}; this ingestbench reads {REPORT_SCHEMA:?}"
        ));
    }
    Ok(v)
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
