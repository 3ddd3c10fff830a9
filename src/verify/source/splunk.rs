//! Splunk's search REST API: `POST /services/search/v2/jobs/export` (the v1 path is deprecated
//! since 9.0.1), a form body of `search`, `output_mode=json`, `earliest_time` and
//! `latest_time` (both filter `_time`, the event's own time: the default window is all time up
//! to a day ahead, so backfilled and slightly future-dated events are found). The export
//! streams one JSON object per line (`{"preview":false,"offset":N,"result":{...}}`, or
//! `{"messages":[{"type":..,"text":..}]}`); values are strings, a multivalued field is a list.
//!
//! Three searches, all on `index=X RUN_FIELD="R"`:
//! - settling: `| stats count`;
//! - counts: `| stats count AS copies dc(SEQ) AS distinct min(SEQ) AS min_seq max(SEQ) AS
//!   max_seq by AGENT` (duplicated = copies − distinct, lost = expected − distinct);
//! - the listing: `| eval ib_lag_ms=if(isnotnull('SENT'), _indextime*1000-'SENT',
//!   (_indextime-_time)*1000), ib_by_sent=if(isnotnull('SENT'), 1, 0) | fields AGENT SEQ
//!   ib_lag_ms ib_by_sent | fields - _*`, streamed: every copy's seq, so the missing seqs are
//!   listed exactly, and every copy's ingest lag in ms, from the tag's send time where the event
//!   has it (`_indextime - SENT`), else from its own time (`_indextime - _time`); `_indextime`
//!   is whole seconds. In `eval` a field name with a `.` is quoted with single quotes.
//!   `--splunk-counts-only` skips it.
//!
//! Preview results are skipped, FATAL and ERROR messages are errors, lines and rows are capped
//! (from the report's event count).

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::http::Client;
use super::{Fields, SplunkOptions};
use crate::verify::expected::Expected;
use crate::verify::held::{AgentHold, CountHold, Held};
use crate::verify::lag::{SentLag, Start};
use crate::verify::{Options, VerifyError};

pub const EXPORT_PATH: &str = "/services/search/v2/jobs/export";
/// Longest line of an export stream.
const MAX_LINE: u64 = 1 << 20;
/// Largest answer of the two `stats` searches.
const MAX_STATS_BODY: u64 = 16 << 20;
/// Bytes allowed per listed row (a row is under 200).
const ROW_BYTES: u64 = 2048;
/// Warnings kept from a stream.
const MAX_WARNINGS: usize = 5;
/// The lag field the listing computes, in ms.
const LAG_FIELD: &str = "ib_lag_ms";
/// The listing's `1` where the lag is from the tag's send time, `0` from the event's time.
const BY_SENT_FIELD: &str = "ib_by_sent";

/// A value as SPL reads it inside double quotes.
pub fn quote_spl(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn base(index: &str, run: &str, f: &Fields) -> String {
    format!("search index={index} {}={}", f.run, quote_spl(run))
}

/// The settling search: one row, `count`.
pub fn total_search(index: &str, run: &str, f: &Fields) -> String {
    format!("{} | stats count", base(index, run, f))
}

/// The counts search: one row per agent.
pub fn counts_search(index: &str, run: &str, f: &Fields) -> String {
    let s = &f.seq;
    format!(
        "{} | stats count AS copies dc({s}) AS distinct min({s}) AS min_seq max({s}) AS \
         max_seq by {}",
        base(index, run, f),
        f.agent
    )
}

/// The listing search: one row per copy held, with its lag and the start it is from.
pub fn list_search(index: &str, run: &str, f: &Fields) -> String {
    // `check_field` keeps `'` out of field names: quoting is just the two quotes.
    let sent = format!("'{}'", f.sent);
    format!(
        "{} | eval {LAG_FIELD}=if(isnotnull({sent}), _indextime*1000-{sent}, \
         (_indextime-_time)*1000), {BY_SENT_FIELD}=if(isnotnull({sent}), 1, 0) | fields {} {} \
         {LAG_FIELD} {BY_SENT_FIELD} | fields - _*",
        base(index, run, f),
        f.agent,
        f.seq
    )
}

/// A listing row's lag in ms and its start; `None` when Splunk computed none.
pub fn row_lag(m: &Map<String, Value>) -> Option<(f64, Start)> {
    let ms = field_f64(m, LAG_FIELD)?;
    let start = match field_u64(m, BY_SENT_FIELD) {
        Some((1, _)) => Start::Sent,
        _ => Start::EventTime,
    };
    Some((ms, start))
}

/// The export's form fields for `search`; `now_s` places the default `latest_time`.
pub fn form(search: String, o: &SplunkOptions, now_s: u64) -> Vec<(&'static str, String)> {
    let latest = o
        .latest
        .clone()
        .unwrap_or_else(|| (now_s + 86_400).to_string());
    vec![
        ("search", search),
        ("output_mode", "json".into()),
        ("earliest_time", o.earliest.clone()),
        ("latest_time", latest),
    ]
}

/// What a stream said besides its results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamInfo {
    /// Final results passed on.
    pub rows: u64,
    /// Preview results skipped.
    pub previews: u64,
    /// WARN / INFO messages (the first few).
    pub warnings: Vec<String>,
}

/// Reads an export stream, passing every final result to `row`; at most `max_rows` rows.
pub fn stream(
    mut r: impl BufRead,
    max_rows: u64,
    mut row: impl FnMut(&Map<String, Value>),
) -> Result<StreamInfo, String> {
    let mut info = StreamInfo::default();
    let mut line = Vec::with_capacity(1024);
    for n in 1u64.. {
        line.clear();
        let got = r
            .by_ref()
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("reading the export: {e}"))?;
        if got == 0 {
            return Ok(info);
        }
        if got as u64 > MAX_LINE {
            return Err(format!(
                "line {n} of the export is longer than {MAX_LINE} bytes"
            ));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v: Value = serde_json::from_slice(&line)
            .map_err(|e| format!("line {n} of the export is not JSON: {e}"))?;
        messages(&v, &mut info)?;
        let preview = v.get("preview").and_then(Value::as_bool) == Some(true);
        let results: Vec<&Map<String, Value>> = match (v.get("result"), v.get("results")) {
            (Some(Value::Object(m)), _) => vec![m],
            (_, Some(Value::Array(list))) => list.iter().filter_map(Value::as_object).collect(),
            _ => Vec::new(),
        };
        for m in results {
            if preview {
                info.previews += 1;
                continue;
            }
            info.rows += 1;
            if info.rows > max_rows {
                return Err(format!(
                    "more than {max_rows} results: far more than the report sent; stopped"
                ));
            }
            row(m);
        }
    }
    Ok(info)
}

/// A line's `messages`: FATAL and ERROR are errors, others kept as warnings.
fn messages(v: &Value, info: &mut StreamInfo) -> Result<(), String> {
    let Some(list) = v.get("messages").and_then(Value::as_array) else {
        return Ok(());
    };
    for m in list {
        let kind = m.get("type").and_then(Value::as_str).unwrap_or("?");
        let text = m.get("text").and_then(Value::as_str).unwrap_or("");
        if kind.eq_ignore_ascii_case("FATAL") || kind.eq_ignore_ascii_case("ERROR") {
            return Err(format!("the search failed: {kind}: {text}"));
        }
        if info.warnings.len() < MAX_WARNINGS {
            info.warnings.push(format!("{kind}: {text}"));
        }
    }
    Ok(())
}

/// A result's field as a whole number; `(value, multivalued)`. A list (a multivalued field)
/// gives its first value.
pub fn field_u64(m: &Map<String, Value>, name: &str) -> Option<(u64, bool)> {
    match m.get(name)? {
        Value::Array(list) => list.first().and_then(whole).map(|n| (n, true)),
        v => whole(v).map(|n| (n, false)),
    }
}

/// The distinct (agent, seq) tags one event's fields hold: agent and seq paired value by
/// value when both are lists of one length, else every seq with the first agent.
fn tags_of(m: &Map<String, Value>, f: &Fields) -> Vec<(u32, u64)> {
    let all = |name: &str| -> Vec<u64> {
        match m.get(name) {
            Some(Value::Array(list)) => list.iter().filter_map(whole).collect(),
            Some(v) => whole(v).into_iter().collect(),
            None => Vec::new(),
        }
    };
    let (agents, seqs) = (all(&f.agent), all(&f.seq));
    let agents: Vec<u32> = agents
        .into_iter()
        .filter_map(|a| u32::try_from(a).ok())
        .collect();
    let mut tags: Vec<(u32, u64)> = if agents.len() == seqs.len() {
        agents.into_iter().zip(seqs).collect()
    } else {
        let first = agents.first().copied().unwrap_or(0);
        seqs.into_iter().map(|s| (first, s)).collect()
    };
    tags.sort_unstable();
    tags.dedup();
    tags
}

fn whole(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) if !s.is_empty() && s.len() <= 20 => s
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())?,
        _ => None,
    }
}

/// A result's field as a number (`ib_lag_ms`: ms, maybe with a fraction from `_time`).
fn field_f64(m: &Map<String, Value>, name: &str) -> Option<f64> {
    match m.get(name)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// One agent's row of the counts search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentCounts {
    pub agent: u32,
    pub copies: u64,
    pub distinct: u64,
    pub max_seq: u64,
}

/// A counts row, `None` when its agent or counts are not whole numbers.
pub fn counts_row(m: &Map<String, Value>, f: &Fields) -> Option<AgentCounts> {
    let (agent, _) = field_u64(m, &f.agent)?;
    Some(AgentCounts {
        agent: u32::try_from(agent).ok()?,
        copies: field_u64(m, "copies")?.0,
        distinct: field_u64(m, "distinct")?.0,
        max_seq: field_u64(m, "max_seq").map_or(0, |v| v.0),
    })
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Runs one export search, passing its rows to `row`.
fn export(
    c: &Client,
    what: &str,
    search: String,
    o: &Options,
    max_rows: u64,
    max_body: u64,
    row: impl FnMut(&Map<String, Value>),
) -> Result<StreamInfo, VerifyError> {
    let form = form(search, &o.search.splunk, now_s());
    let r = c.post_form_stream(what, EXPORT_PATH, &form, max_body)?;
    stream(r, max_rows, row).map_err(|e| c.unreachable(format!("{what}: {e}")))
}

fn client(label: &str, base: &str, o: &Options) -> Result<Client, VerifyError> {
    Client::new(label, base, &o.search, o.http_timeout)
}

/// The events of the run the index holds (`| stats count`).
pub fn progress(label: &str, base: &str, exp: &Expected, o: &Options) -> Result<u64, VerifyError> {
    super::check_run_id(&exp.run_id)?;
    let c = client(label, base, o)?;
    let search = total_search(&o.search.splunk.index, &exp.run_id, &o.search.fields);
    let mut total = 0;
    export(&c, "the count search", search, o, 16, MAX_STATS_BODY, |m| {
        total += field_u64(m, "count").map_or(0, |v| v.0);
    })?;
    Ok(total)
}

/// Counts per agent, then (unless counts only) the listing of every copy.
pub fn read(label: &str, base: &str, exp: &Expected, o: &Options) -> Result<Held, VerifyError> {
    super::check_run_id(&exp.run_id)?;
    let c = client(label, base, o)?;
    let (s, f) = (&o.search.splunk, &o.search.fields);
    let mut counts = BTreeMap::new();
    let mut bad_rows = 0u64;
    let agents_cap = exp.agents.len() as u64 + 100_000;
    let info = export(
        &c,
        "the stats search",
        counts_search(&s.index, &exp.run_id, f),
        o,
        agents_cap,
        MAX_STATS_BODY,
        |m| match counts_row(m, f) {
            Some(a) => {
                counts.insert(a.agent, a);
            }
            None => bad_rows += 1,
        },
    )?;
    let mut held = Held::default();
    warn(&mut held, &info);
    if bad_rows > 0 {
        held.notes.push(format!(
            "{bad_rows} rows of the stats search had an {} that is not a whole number",
            f.agent
        ));
    }
    if s.counts_only {
        for a in counts.values() {
            held.scanned += a.copies;
            held.agents.insert(
                a.agent,
                AgentHold::Counts(CountHold {
                    received: a.copies,
                    distinct: a.distinct,
                    max_seq: a.max_seq,
                }),
            );
        }
        return Ok(held);
    }
    list(&c, exp, o, &mut held)?;
    cross_check(&counts, &mut held);
    Ok(held)
}

/// The listing search into `held` (seqs and the lag).
fn list(c: &Client, exp: &Expected, o: &Options, held: &mut Held) -> Result<(), VerifyError> {
    let (s, f) = (&o.search.splunk, &o.search.fields);
    let events: u64 = exp.agents.iter().map(|a| a.events_sent).sum();
    let max_rows = events.saturating_mul(4).saturating_add(100_000);
    let mut lag = SentLag::new(
        format!("_indextime - {}", f.sent),
        "_indextime - _time".into(),
        1000,
    );
    let (mut bad, mut multi) = (0u64, 0u64);
    let info = export(
        c,
        "the listing search",
        list_search(&s.index, &exp.run_id, f),
        o,
        max_rows,
        max_rows.saturating_mul(ROW_BYTES),
        |m| {
            let (Some((agent, ma)), Some((seq, ms))) =
                (field_u64(m, &f.agent), field_u64(m, &f.seq))
            else {
                bad += 1;
                return;
            };
            let Ok(agent) = u32::try_from(agent) else {
                bad += 1;
                return;
            };
            held.scanned += 1;
            // Different values in one event: several events stored as one (merged lines);
            // the same value twice: the field extracted twice.
            let tags = tags_of(m, f);
            if tags.len() > 1 {
                held.merged.add(tags.len() as u64, || {
                    format!("an event with {} {:?}", f.seq, m.get(&f.seq))
                });
                for (a, s) in tags {
                    held.record(a, exp.agent(a).map_or(0, |x| x.events_sent), s, 1);
                }
                return;
            }
            multi += u64::from(ma || ms);
            let size = exp.agent(agent).map_or(0, |a| a.events_sent);
            held.record(agent, size, seq, 1);
            if let Some((ms, start)) = row_lag(m) {
                lag.record_ms(ms, start);
            }
        },
    )?;
    warn(held, &info);
    held.ingest_lag = lag.finish();
    held.notes.extend(lag.note());
    if bad > 0 {
        held.notes.push(format!(
            "{bad} events of this run have no whole-number {} or {}: not counted",
            f.agent, f.seq
        ));
    }
    if multi > 0 {
        held.notes.push(format!(
            "{multi} events have {} or {} multivalued (the field extracted twice, e.g. \
             INDEXED_EXTRACTIONS and KV_MODE both on?): the first value was used",
            f.agent, f.seq
        ));
    }
    Ok(())
}

/// The listing against the stats search: a difference means the index changed in between,
/// or seqs are written in forms `dc` tells apart ("1" and "01").
fn cross_check(counts: &BTreeMap<u32, AgentCounts>, held: &mut Held) {
    let stats_copies: u64 = counts.values().map(|a| a.copies).sum();
    let stats_distinct: u64 = counts.values().map(|a| a.distinct).sum();
    let (mut copies, mut distinct) = (0u64, 0u64);
    for h in held.agents.values() {
        if let AgentHold::Seqs(h) = h {
            copies += h.copies;
            distinct += h.count_in(0, h.size()) + h.beyond_distinct;
        }
    }
    if copies != stats_copies {
        held.notes.push(format!(
            "the stats search counted {stats_copies} events, the listing {copies}: the index \
             changed in between (the listing is what was compared)"
        ));
    } else if distinct != stats_distinct {
        held.notes.push(format!(
            "dc(seq) counted {stats_distinct} distinct seqs, the listing {distinct}: seqs are \
             written in forms dc tells apart (it compares strings)"
        ));
    }
}

fn warn(held: &mut Held, info: &StreamInfo) {
    for w in &info.warnings {
        held.notes.push(format!("Splunk said {w}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_and_form() {
        let f = Fields::default();
        assert_eq!(
            total_search("main", "r-1", &f),
            r#"search index=main ingestbench.run="r-1" | stats count"#
        );
        assert_eq!(
            counts_search("ib", "r-1", &f),
            "search index=ib ingestbench.run=\"r-1\" | stats count AS copies \
             dc(ingestbench.seq) AS distinct min(ingestbench.seq) AS min_seq \
             max(ingestbench.seq) AS max_seq by ingestbench.agent"
        );
        assert_eq!(
            list_search("ib", "r-1", &f),
            "search index=ib ingestbench.run=\"r-1\" | eval ib_lag_ms=if(isnotnull(\
             'ingestbench.sent'), _indextime*1000-'ingestbench.sent', (_indextime-_time)*1000), \
             ib_by_sent=if(isnotnull('ingestbench.sent'), 1, 0) | fields ingestbench.agent \
             ingestbench.seq ib_lag_ms ib_by_sent | fields - _*"
        );
        let other = Fields {
            sent: "tag.sent_ms".into(),
            ..Fields::default()
        };
        assert!(
            list_search("ib", "r-1", &other).contains(
                "if(isnotnull('tag.sent_ms'), _indextime*1000-'tag.sent_ms', \
                 (_indextime-_time)*1000), ib_by_sent=if(isnotnull('tag.sent_ms'), 1, 0)"
            ),
            "{}",
            list_search("ib", "r-1", &other)
        );
        assert_eq!(quote_spl(r#"a"b\c"#), r#""a\"b\\c""#);
        let o = SplunkOptions::default();
        let fm = form("search x".into(), &o, 1_000);
        assert_eq!(
            fm,
            vec![
                ("search", "search x".to_string()),
                ("output_mode", "json".into()),
                ("earliest_time", "0".into()),
                ("latest_time", "87400".into())
            ]
        );
        let o = SplunkOptions {
            latest: Some("now".into()),
            ..o
        };
        assert_eq!(form("s".into(), &o, 1)[3].1, "now");
    }

    #[test]
    fn streams_skip_previews_and_fail_on_errors() {
        let text = concat!(
            r#"{"preview":true,"offset":0,"result":{"count":"1"}}"#,
            "\n\n",
            r#"{"messages":[{"type":"WARN","text":"slow"}]}"#,
            "\n",
            r#"{"preview":false,"offset":0,"result":{"count":"7"}}"#,
            "\n",
            r#"{"preview":false,"offset":1,"lastrow":true,"result":{"count":["8","9"]}}"#,
            "\n",
            r#"{"preview":false,"results":[{"count":"10"},3]}"#
        );
        let mut got = Vec::new();
        let info = stream(text.as_bytes(), 10, |m| got.push(field_u64(m, "count"))).unwrap();
        assert_eq!(
            got,
            vec![Some((7, false)), Some((8, true)), Some((10, false))]
        );
        assert_eq!(info.rows, 3);
        assert_eq!(info.previews, 1);
        assert_eq!(info.warnings, vec!["WARN: slow"]);
        let fatal = r#"{"messages":[{"type":"FATAL","text":"Unknown search command 'x'."}]}"#;
        let e = stream(fatal.as_bytes(), 10, |_| {}).unwrap_err();
        assert!(e.contains("Unknown search command"), "{e}");
        assert!(stream(&b"{\"result\":"[..], 10, |_| {}).is_err());
        assert!(stream(&b"<html>"[..], 10, |_| {}).is_err());
        let many = "{\"result\":{}}\n".repeat(5);
        assert!(stream(many.as_bytes(), 4, |_| {}).is_err());
        assert!(stream(&b""[..], 4, |_| {}).unwrap().rows == 0);
    }

    #[test]
    fn listing_rows_say_their_lag_and_its_start() {
        let row = |s: &str| -> Map<String, Value> { serde_json::from_str(s).unwrap() };
        assert_eq!(
            row_lag(&row(r#"{"ib_lag_ms":"400","ib_by_sent":"1"}"#)),
            Some((400.0, Start::Sent))
        );
        assert_eq!(
            row_lag(&row(r#"{"ib_lag_ms":"-250.000","ib_by_sent":"0"}"#)),
            Some((-250.0, Start::EventTime))
        );
        assert_eq!(
            row_lag(&row(r#"{"ib_lag_ms":"750"}"#)),
            Some((750.0, Start::EventTime))
        );
        assert_eq!(row_lag(&row(r#"{"ib_by_sent":"1"}"#)), None);
        assert_eq!(row_lag(&row(r#"{"ib_lag_ms":"x","ib_by_sent":"1"}"#)), None);
    }

    #[test]
    fn an_event_holding_several_tags_is_told_from_a_field_extracted_twice() {
        let f = Fields::default();
        let row = |s: &str| -> Map<String, Value> { serde_json::from_str(s).unwrap() };
        // Two messages stored as one event: two seqs.
        let merged = row(r#"{"ingestbench.agent":["0","0"],"ingestbench.seq":["4","5"]}"#);
        assert_eq!(tags_of(&merged, &f), vec![(0, 4), (0, 5)]);
        let mixed = row(r#"{"ingestbench.agent":"1","ingestbench.seq":["4","5","6"]}"#);
        assert_eq!(tags_of(&mixed, &f), vec![(1, 4), (1, 5), (1, 6)]);
        // The same value twice (INDEXED_EXTRACTIONS and KV_MODE): one tag.
        let twice = row(r#"{"ingestbench.agent":["0","0"],"ingestbench.seq":["4","4"]}"#);
        assert_eq!(tags_of(&twice, &f), vec![(0, 4)]);
    }

    #[test]
    fn odd_values_are_not_numbers() {
        let m: Map<String, Value> = serde_json::from_str(
            r#"{"a":"12","b":"-1","c":"1.5","d":"","e":7,"f":["x"],"g":{"x":1},
                "h":"99999999999999999999999","ib_lag_ms":"250.5","i":"nan"}"#,
        )
        .unwrap();
        assert_eq!(field_u64(&m, "a"), Some((12, false)));
        assert_eq!(field_u64(&m, "e"), Some((7, false)));
        for k in ["b", "c", "d", "f", "g", "h", "missing"] {
            assert_eq!(field_u64(&m, k), None, "{k}");
        }
        assert_eq!(field_f64(&m, "ib_lag_ms"), Some(250.5));
        assert_eq!(field_f64(&m, "i"), None);
        let f = Fields::default();
        let row: Map<String, Value> = serde_json::from_str(
            r#"{"ingestbench.agent":"2","copies":"10","distinct":"9","min_seq":"0","max_seq":"9"}"#,
        )
        .unwrap();
        assert_eq!(
            counts_row(&row, &f),
            Some(AgentCounts {
                agent: 2,
                copies: 10,
                distinct: 9,
                max_seq: 9
            })
        );
        let no_agent: Map<String, Value> = serde_json::from_str(r#"{"copies":"1"}"#).unwrap();
        assert_eq!(counts_row(&no_agent, &f), None);
    }
}
