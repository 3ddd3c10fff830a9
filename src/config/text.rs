//! A config written back as YAML text (`run --print-config`, and `run`'s flags over a config):
//! `to_yaml` writes a config's `Serialize` form — whose keys are the file's keys — as block
//! YAML, every string JSON-quoted (`yaml::quoted`, a YAML double-quoted scalar, so no value
//! can change the document's shape), nulls left out. `minimal` then leaves out every key
//! whose absence reads back to the same config (a default), so a printed config is short and
//! still reads back as the config it was printed from. Tokens are never in a config, only
//! where they are (`token_env`, `token_file`, `token_secret`), so none is ever printed.

use serde_json::{Map, Value};

use crate::config::Config;
use crate::config::secrets::Store;
use crate::yaml::quoted;

/// Keys in the order a person writes them; the rest follow alphabetically.
const ORDER: &[&str] = &[
    "schema_version",
    "name",
    "seed",
    "mode",
    "target",
    "source",
    "workload",
    "observability",
    "slo",
    "faults",
    "verify",
    "adapter",
    "url",
    "auth",
    "scheme",
    "tls",
    "id",
    "share",
    "version",
    "profile",
    "eps",
    "rate",
    "stop",
    "after",
    "total_events",
    "at",
    "action",
];

/// A config's form as data: what `to_yaml` writes and `minimal` compares.
pub fn value(c: &Config) -> Value {
    serde_json::to_value(c).unwrap_or(Value::Null)
}

/// The paths (`workload.stop.after`, `source[1].share`) where `a` and `b`, two configs'
/// forms, differ, each at the deepest key that holds the difference.
pub fn changed_paths(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    let key = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let null = Value::Null;
                let (va, vb) = (x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null));
                changed_paths(va, vb, &key(k), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                changed_paths(va, vb, &format!("{at}[{i}]"), out);
            }
        }
        _ if a != b => out.push(at.to_string()),
        _ => {}
    }
}

/// `v` (an object) as block YAML.
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    if let Value::Object(m) = v {
        write_map(&mut out, m, 0);
    }
    out
}

fn ordered(m: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut kv: Vec<(&String, &Value)> = m.iter().filter(|(_, v)| !v.is_null()).collect();
    let rank = |k: &str| ORDER.iter().position(|o| *o == k).unwrap_or(ORDER.len());
    kv.sort_by(|a, b| rank(a.0).cmp(&rank(b.0)).then_with(|| a.0.cmp(b.0)));
    kv
}

fn key(k: &str) -> String {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if plain { k.to_string() } else { quoted(k) }
}

/// A scalar, or a list or mapping with no mapping inside (written as JSON, which is YAML's
/// flow style).
fn flow(v: &Value) -> String {
    match v {
        Value::String(s) => quoted(s),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn has_map(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => a.iter().any(has_map),
        _ => false,
    }
}

fn write_map(out: &mut String, m: &Map<String, Value>, indent: usize) {
    let pad = " ".repeat(indent);
    for (k, v) in ordered(m) {
        out.push_str(&pad);
        out.push_str(&key(k));
        out.push(':');
        match v {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                write_map(out, inner, indent + 2);
            }
            Value::Array(items) if has_map(v) => {
                out.push('\n');
                for item in items {
                    write_item(out, item, indent + 2);
                }
            }
            _ => {
                out.push(' ');
                out.push_str(&flow(v));
                out.push('\n');
            }
        }
    }
}

/// One list item at `indent`: `- ` and a mapping's first key on the same line, its other keys
/// under it.
fn write_item(out: &mut String, item: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match item {
        Value::Object(m) if !m.is_empty() => {
            let mut block = String::new();
            write_map(&mut block, m, indent + 2);
            out.push_str(&pad);
            out.push_str("- ");
            out.push_str(&block[indent + 2..]);
        }
        other => {
            out.push_str(&pad);
            out.push_str("- ");
            out.push_str(&flow(other));
            out.push('\n');
        }
    }
}

/// One step into a config's form.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn at<'v>(v: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    let mut cur = v;
    for s in path {
        cur = match (s, cur) {
            (Step::Key(k), Value::Object(m)) => m.get_mut(k)?,
            (Step::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Reads `text` as a config (packs not looked up: they do not change what is read) and gives
/// its form, or `None` if it has errors.
pub fn read_back(text: &str) -> Option<Value> {
    let store = Store::new("/nonexistent/ingestbench-print-config".into());
    crate::config::load_str(text, &store, None)
        .config
        .as_ref()
        .map(value)
}

/// `v` (a config's form) without the keys whose absence reads back to the same config. If
/// `v` does not read back as itself in the first place, it is given back whole.
pub fn minimal(v: &Value) -> Value {
    if read_back(&to_yaml(v)).as_ref() != Some(v) {
        return v.clone();
    }
    let mut cur = v.clone();
    let mut pending: Vec<Vec<Step>> = vec![Vec::new()];
    while let Some(path) = pending.pop() {
        let keys: Vec<(String, bool, usize)> = match at(&mut cur, &path) {
            Some(Value::Object(m)) => m
                .iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| {
                    let items = match x {
                        Value::Array(a) if a.iter().any(Value::is_object) => a.len(),
                        _ => 0,
                    };
                    (k.clone(), x.is_object(), items)
                })
                .collect(),
            _ => continue,
        };
        // Later keys first, so that `pending` (a stack) walks the file from the top.
        for (k, is_map, items) in keys.into_iter().rev() {
            let mut trial = cur.clone();
            if let Some(Value::Object(m)) = at(&mut trial, &path) {
                m.remove(&k);
            }
            if read_back(&to_yaml(&trial)).as_ref() == Some(v) {
                cur = trial;
                continue;
            }
            let mut inner = path.clone();
            inner.push(Step::Key(k));
            if is_map {
                pending.push(inner.clone());
            }
            for i in (0..items).rev() {
                let mut item = inner.clone();
                item.push(Step::Index(i));
                pending.push(item);
            }
        }
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        let store = Store::new("/nonexistent/store".into());
        let l = crate::config::load_str(text, &store, None);
        let errors: Vec<String> = l.diags.errors().map(|d| d.to_string()).collect();
        l.config.unwrap_or_else(|| panic!("{errors:?}\n{text}"))
    }

    /// Every example config, written back whole and written back minimal, reads back as
    /// the same config.
    #[test]
    fn every_example_reads_back_as_itself() {
        let mut n = 0;
        for e in std::fs::read_dir("examples").unwrap() {
            let p = e.unwrap().path();
            if p.extension().and_then(|x| x.to_str()) != Some("yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            if !text.contains("\ntarget:") {
                continue;
            }
            let v = value(&config(&text));
            let whole = to_yaml(&v);
            assert_eq!(
                read_back(&whole).as_ref(),
                Some(&v),
                "{}:\n{whole}",
                p.display()
            );
            let short = to_yaml(&minimal(&v));
            assert_eq!(
                read_back(&short).as_ref(),
                Some(&v),
                "{}:\n{short}",
                p.display()
            );
            assert!(short.len() <= whole.len());
            n += 1;
        }
        assert!(n >= 10, "only {n} examples");
    }

    #[test]
    fn defaults_are_left_out_and_values_quoted() {
        let v = value(&config(
            "schema_version: \"1.0\"\ntarget: { url: builtin, batch: { max_events: 500 } }\nsource: { id: aws.cloudtrail, entities: { user: 50 } }\nworkload: { eps: 200, stop: { after: 3s } }\nobservability: { target: { command: x, env: { \"A B\": \"a: b # c\" } } }\n",
        ));
        let t = to_yaml(&minimal(&v));
        assert_eq!(
            t,
            "schema_version: \"1.0\"\ntarget:\n  url: \"builtin\"\nsource:\n  id: \"aws.cloudtrail\"\n  entities:\n    user: 50\nworkload:\n  eps: 200.0\n  stop:\n    after: \"3s\"\nobservability:\n  target:\n    command: \"x\"\n    env:\n      \"A B\": \"a: b # c\"\n"
        );
        assert_eq!(read_back(&t).as_ref(), Some(&v));
    }

    #[test]
    fn lists_of_mappings_are_block_items() {
        let v = serde_json::json!({
            "a": [{"x": 1, "y": {"z": "q"}}, {"x": 2}],
            "b": [1, 2],
            "c": [],
            "d": {},
        });
        assert_eq!(
            to_yaml(&v),
            "a:\n  - x: 1\n    y:\n      z: \"q\"\n  - x: 2\nb: [1,2]\nc: []\nd: {}\n"
        );
    }
}
