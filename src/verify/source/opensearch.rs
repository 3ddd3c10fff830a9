//! OpenSearch and Elasticsearch (the same REST shapes): what an index (or a pattern, a list)
//! holds of a run, exactly. `POST INDEX/_refresh` makes everything indexed so far searchable
//! (a 403 there only means a read-only user: automatic refresh is relied on, with a note);
//! `POST INDEX/_count` with a query on the run id is the settling figure; then a `composite`
//! aggregation over sources `(agent, seq)` is paged with `after` = the previous `after_key`
//! until a page comes back empty: every key with `doc_count` > 1 is duplicated, every accepted
//! seq absent is lost. Never `cardinality` (approximate). Each bucket also carries the `min` of
//! the ingest timestamp field, of the tag's sent field (a JSON number: dynamic mapping makes it
//! `long`, its `min` is ms) and of the event time field, so each event's ingest lag is
//! ingested − sent, or ingested − event time where it has no sent. A store refusing `min` on a
//! field (HTTP 400: mapped as text) is asked again on the first page with fewer (`LAG_STEPS`:
//! without the event time, without sent, then no lag at all), with a note. Pages are capped
//! (from the report's event count), as are bodies; a page whose `after_key` does not advance,
//! a timed-out or shard-failed answer is an error, never a partial count.
//!
//! The run field is matched with `term` on the field and on `FIELD.keyword`: dynamic mapping
//! makes a JSON string `text` with a `keyword` sub-field, and a `term` on the `text` field
//! would not match the whole run id.

use serde_json::{Value, json};

use super::SearchOptions;
use super::http::{Client, quote};
use crate::verify::expected::Expected;
use crate::verify::held::Held;
use crate::verify::lag::{SentLag, Start};
use crate::verify::{Options, VerifyError};

/// The aggregation's name in requests and answers.
pub const AGG: &str = "acct";
/// Largest `_refresh` / `_count` answer read.
const MAX_SMALL_BODY: u64 = 1 << 20;
/// Largest page read (65,535 buckets with their sub-aggregations fit many times over).
const MAX_PAGE_BODY: u64 = 256 << 20;
/// Pages allowed beyond those the report's events need.
const SPARE_PAGES: u64 = 16;

/// `URL/INDEX` split at the last `/`: the base url and the index (a name, a pattern, a list).
pub fn split_spec(rest: &str) -> Result<(String, String), String> {
    let rest = rest.trim_end_matches('/');
    let after_scheme = rest.find("://").map_or(0, |i| i + 3);
    let slash = rest[after_scheme..]
        .rfind('/')
        .map(|i| i + after_scheme)
        .ok_or("give the index after the url: opensearch:https://HOST:9200/INDEX")?;
    let (base, index) = (&rest[..slash], &rest[slash + 1..]);
    let ok = !index.is_empty()
        && index.len() <= 1024
        && index.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'*' | b',' | b':')
        });
    if !ok {
        return Err(format!(
            "index {index:?}: letters, digits and `- _ . * , :` only (a name, a pattern like \
             logs-*, or a list)"
        ));
    }
    Ok((base.to_string(), index.to_string()))
}

/// The query matching the run's documents.
pub fn run_query(run: &str, field: &str) -> Value {
    json!({"bool": {"filter": [{"bool": {
        "should": [
            {"term": {field: run}},
            {"term": {format!("{field}.keyword"): run}}
        ],
        "minimum_should_match": 1
    }}]}})
}

/// The `_count` body.
pub fn count_body(run: &str, o: &SearchOptions) -> Value {
    json!({"query": run_query(run, &o.fields.run)})
}

/// The `min` sub-aggregations a page asks for, beside the ingest time's (always there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagAggs {
    pub sent: bool,
    pub time: bool,
}

/// What the first page asks for, one step further after each HTTP 400; `None`: no lag.
pub const LAG_STEPS: [Option<LagAggs>; 4] = [
    Some(LagAggs {
        sent: true,
        time: true,
    }),
    Some(LagAggs {
        sent: true,
        time: false,
    }),
    Some(LagAggs {
        sent: false,
        time: true,
    }),
    None,
];

/// The `aggs` beside the composite: `ingested`, `sent` and `event_time` minimums.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's IndexMut never panics on the objects built here with json!"
)]
pub fn lag_aggs(o: &SearchOptions, l: LagAggs) -> Value {
    let f = &o.fields;
    let mut aggs = json!({"ingested": {"min": {"field": f.ingested}}});
    if l.sent {
        aggs["sent"] = json!({"min": {"field": f.sent}});
    }
    if l.time {
        aggs["event_time"] = json!({"min": {"field": f.time}});
    }
    aggs
}

/// One composite page's `_search` body: after `after` when given, with the `min`
/// sub-aggregations `lag` names.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's IndexMut never panics on the objects built here with json!"
)]
pub fn page_body(
    run: &str,
    o: &SearchOptions,
    after: Option<&Value>,
    lag: Option<LagAggs>,
) -> Value {
    let f = &o.fields;
    let mut composite = json!({
        "size": o.page_size,
        "sources": [
            {"agent": {"terms": {"field": f.agent}}},
            {"seq": {"terms": {"field": f.seq}}}
        ]
    });
    if let Some(a) = after {
        composite["after"] = a.clone();
    }
    let mut agg = json!({"composite": composite});
    if let Some(l) = lag {
        agg["aggs"] = lag_aggs(o, l);
    }
    json!({
        "size": 0,
        "query": run_query(run, &f.run),
        "aggs": {AGG: agg}
    })
}

/// `{"count": N, ...}`.
pub fn parse_count(v: &Value) -> Result<u64, String> {
    shards_ok(v)?;
    v.get("count")
        .and_then(Value::as_u64)
        .ok_or_else(|| "no `count` in the answer".to_string())
}

/// An answer's `_shards.failed` and `timed_out` as an error: a partial answer is no count.
pub fn shards_ok(v: &Value) -> Result<(), String> {
    if v.get("timed_out").and_then(Value::as_bool) == Some(true) {
        return Err("the search timed out on the server (a partial answer)".into());
    }
    let failed = v
        .pointer("/_shards/failed")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if failed > 0 {
        let why = v
            .pointer("/_shards/failures/0/reason/reason")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        return Err(format!("{failed} shards failed ({why})"));
    }
    Ok(())
}

/// One composite bucket; a key that is not a whole number (a float seq, a text agent) is
/// `None`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bucket {
    pub agent: Option<u32>,
    pub seq: Option<u64>,
    pub docs: u64,
    /// In ms, `min(ingested) - min(sent)`, else `min(ingested) - min(event time)`, and which.
    pub lag: Option<(f64, Start)>,
}

/// One page: its buckets and the `after_key` to ask the next one after.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub buckets: Vec<Bucket>,
    pub after: Option<Value>,
}

pub fn parse_page(v: &Value) -> Result<Page, String> {
    shards_ok(v)?;
    let Some(agg) = v.pointer(&format!("/aggregations/{AGG}")) else {
        // No index matched (a pattern over nothing): no shards, no aggregations.
        if v.pointer("/_shards/total").and_then(Value::as_u64) == Some(0) {
            return Ok(Page {
                buckets: Vec::new(),
                after: None,
            });
        }
        return Err(format!("no `aggregations.{AGG}` in the answer"));
    };
    let list = agg
        .get("buckets")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("`aggregations.{AGG}.buckets` is not a list"))?;
    let mut buckets = Vec::with_capacity(list.len());
    for (i, b) in list.iter().enumerate() {
        let docs = b
            .get("doc_count")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("bucket {i} has no doc_count"))?;
        let key = b
            .get("key")
            .filter(|k| k.is_object())
            .ok_or_else(|| format!("bucket {i} has no key object"))?;
        buckets.push(Bucket {
            agent: key
                .get("agent")
                .and_then(whole)
                .and_then(|a| u32::try_from(a).ok()),
            seq: key.get("seq").and_then(whole),
            docs,
            lag: bucket_lag(b),
        });
    }
    let after = agg.get("after_key").filter(|k| k.is_object()).cloned();
    Ok(Page { buckets, after })
}

/// A bucket's lag from its `min` values: from `sent` when there, else from `event_time`.
fn bucket_lag(b: &Value) -> Option<(f64, Start)> {
    let min = |name: &str| b.pointer(&format!("/{name}/value")).and_then(Value::as_f64);
    let ingested = min("ingested")?;
    match (min("sent"), min("event_time")) {
        (Some(s), _) => Some((ingested - s, Start::Sent)),
        (None, Some(t)) => Some((ingested - t, Start::EventTime)),
        (None, None) => None,
    }
}

/// A key as a whole number: `17`, `17.0` (a float mapping) or `"17"` (a keyword mapping).
fn whole(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    if let Some(f) = v.as_f64() {
        return (f >= 0.0 && f.fract() == 0.0 && f < 2f64.powi(53)).then_some(f as u64);
    }
    let s = v.as_str()?;
    if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The most pages a run's buckets can need (every seq of every agent once, twice over), plus
/// a few.
pub fn max_pages(exp: &Expected, page_size: u32) -> u64 {
    let events: u64 = exp.agents.iter().map(|a| a.events_sent).sum();
    events.saturating_mul(2) / u64::from(page_size.max(1)) + SPARE_PAGES
}

fn client(label: &str, base: &str, o: &Options) -> Result<Client, VerifyError> {
    Client::new(label, base, &o.search, o.http_timeout)
}

/// `POST INDEX/_refresh`: `Some(note)` when it could not be done but reading may go on.
fn refresh(c: &Client, index: &str) -> Result<Option<String>, VerifyError> {
    let a = c.post_json(
        "POST _refresh",
        &format!("/{index}/_refresh"),
        &json!({}),
        MAX_SMALL_BODY,
    )?;
    match a.status {
        200..=299 => {
            let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
            Ok(shards_ok(&v)
                .err()
                .map(|e| format!("_refresh: {e}; read as automatic refresh left it")))
        }
        403 => Ok(Some(format!(
            "_refresh was refused (HTTP 403: refreshing needs write access to the index): \
             read as automatic refresh left it ({})",
            quote(&a.body)
        ))),
        _ => Err(c.refused("POST _refresh", &a)),
    }
}

fn count(c: &Client, index: &str, exp: &Expected, o: &Options) -> Result<u64, VerifyError> {
    let a = c.post_json(
        "POST _count",
        &format!("/{index}/_count"),
        &count_body(&exp.run_id, &o.search),
        MAX_SMALL_BODY,
    )?;
    let v = c.json("POST _count", &a)?;
    parse_count(&v).map_err(|e| c.unreachable(format!("_count: {e}")))
}

/// Refreshes, then counts the run's documents.
pub fn progress(
    label: &str,
    base: &str,
    index: &str,
    exp: &Expected,
    o: &Options,
) -> Result<u64, VerifyError> {
    super::check_run_id(&exp.run_id)?;
    let c = client(label, base, o)?;
    refresh(&c, index)?;
    count(&c, index, exp, o)
}

/// Everything the index holds of the run, by composite pages.
pub fn read(
    label: &str,
    base: &str,
    index: &str,
    exp: &Expected,
    o: &Options,
) -> Result<Held, VerifyError> {
    super::check_run_id(&exp.run_id)?;
    let c = client(label, base, o)?;
    let mut held = Held::default();
    if let Some(note) = refresh(&c, index)? {
        held.notes.push(note);
    }
    let counted = count(&c, index, exp, o)?;
    let f = &o.search.fields;
    let mut lag = SentLag::new(
        format!("{} - {}", f.ingested, f.sent),
        format!("{} - {}", f.ingested, f.time),
        1,
    );
    let (bad_keys, asked) = pages(&c, index, exp, o, &mut held, &mut lag)?;
    held.ingest_lag = lag.finish();
    held.notes.extend(lag.note());
    if held.ingest_lag.is_none() && held.scanned > 0 && asked.is_some() {
        held.notes.push(format!(
            "ingest lag not measured: no document of this run has {} with {} or {} (a \
             number or a date)",
            f.ingested, f.sent, f.time
        ));
    }
    if bad_keys > 0 {
        held.notes.push(format!(
            "{bad_keys} documents of this run have an {} or {} that is not a whole number: \
             not counted",
            f.agent, f.seq
        ));
    }
    let bucketed = held.scanned + bad_keys;
    // More (agent, seq) keys than documents, and not because the index grew: documents
    // that hold several tags (an array of seqs), counted once by _count and in each of
    // their buckets by the aggregation.
    let now = if counted < bucketed {
        count(&c, index, exp, o)?
    } else {
        counted
    };
    if now < bucketed {
        let extra = bucketed - now;
        held.merged = crate::verify::held::SeveralTags {
            records: extra,
            tags: bucketed,
            first: Some(format!(
                "{index}: {bucketed} ({}, {}) keys in {now} documents: {extra} tags beyond one \
                 a document",
                f.agent, f.seq
            )),
        };
    }
    if counted > bucketed {
        held.notes.push(format!(
            "{} documents of this run lack {} or {} (counted {counted}, in buckets \
             {bucketed}): not counted",
            counted - bucketed,
            f.agent,
            f.seq
        ));
    } else if counted < bucketed && now >= bucketed {
        held.notes.push(format!(
            "the index grew while it was read (counted {counted}, then {bucketed} in buckets)"
        ));
    }
    Ok(held)
}

/// Pages the composite aggregation into `held` and `lag`; returns the documents whose keys
/// were not whole numbers and the `min` sub-aggregations the store took.
fn pages(
    c: &Client,
    index: &str,
    exp: &Expected,
    o: &Options,
    held: &mut Held,
    lag: &mut SentLag,
) -> Result<(u64, Option<LagAggs>), VerifyError> {
    let cap = max_pages(exp, o.search.page_size);
    let path = format!("/{index}/_search");
    let (mut after, mut n, mut bad_keys) = (None::<Value>, 0u64, 0u64);
    let (mut step, mut refusal) = (0usize, None::<String>);
    loop {
        let asked = LAG_STEPS.get(step).copied().flatten();
        if n >= cap {
            return Err(c.unreachable(format!(
                "more than {cap} composite pages for {} events: the index holds far more of \
                 this run than the report sent; stopped",
                exp.agents.iter().map(|a| a.events_sent).sum::<u64>()
            )));
        }
        let what = format!("composite page {}", n + 1);
        let body = page_body(&exp.run_id, &o.search, after.as_ref(), asked);
        let a = c.post_json(&what, &path, &body, MAX_PAGE_BODY)?;
        if n == 0 && asked.is_some() && a.status == 400 {
            refusal.get_or_insert_with(|| quote(&a.body));
            step += 1;
            continue;
        }
        let v = c.json(&what, &a)?;
        let page = parse_page(&v).map_err(|e| c.unreachable(format!("{what}: {e}")))?;
        if n == 0
            && let Some(why) = &refusal
        {
            held.notes.push(lag_refused(asked, why, &o.search));
        }
        n += 1;
        bad_keys += record(&page, exp, held, lag);
        if page.buckets.is_empty() {
            return Ok((bad_keys, asked));
        }
        match page.after {
            None => return Ok((bad_keys, asked)),
            Some(k) if after.as_ref() == Some(&k) => {
                return Err(
                    c.unreachable(format!("{what}: after_key {k} did not advance; stopped"))
                );
            }
            Some(k) => after = Some(k),
        }
    }
}

/// A page's buckets into `held` and `lag`; returns the documents whose keys were not whole
/// numbers.
fn record(page: &Page, exp: &Expected, held: &mut Held, lag: &mut SentLag) -> u64 {
    let mut bad_keys = 0;
    for b in &page.buckets {
        let (Some(agent), Some(seq)) = (b.agent, b.seq) else {
            bad_keys += b.docs;
            continue;
        };
        let size = exp.agent(agent).map_or(0, |a| a.events_sent);
        held.record(agent, size, seq, b.docs);
        held.scanned += b.docs;
        if let Some((ms, start)) = b.lag {
            lag.record_ms(ms, start);
        }
    }
    bad_keys
}

/// The note on what the lag is measured by after the store refused `min` (HTTP 400, its
/// first answer `why`) and took `took` instead (a later step of `LAG_STEPS`).
pub fn lag_refused(took: Option<LagAggs>, why: &str, o: &SearchOptions) -> String {
    let f = &o.fields;
    match took {
        None => format!(
            "ingest lag not measured: the store refused `min` on {} / {} / {} (HTTP 400: \
             {why}); read without it (see --ingested-field, --sent-field, --time-field)",
            f.ingested, f.sent, f.time
        ),
        Some(LagAggs { time: false, .. }) => format!(
            "ingest lag from {} only: the store refused `min` on {} beside it (HTTP 400: \
             {why}); documents without it are not measured (see --time-field)",
            f.sent, f.time
        ),
        Some(_) => format!(
            "ingest lag from {} only, not the tags' send time: the store refused `min` on {} \
             (HTTP 400: {why}; mapped as text, not a number?) (see --sent-field)",
            f.time, f.sent
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_specs() {
        assert_eq!(
            split_spec("https://h:9200/logs-*").unwrap(),
            ("https://h:9200".into(), "logs-*".into())
        );
        assert_eq!(
            split_spec("http://h/es/a,b/").unwrap(),
            ("http://h/es".into(), "a,b".into())
        );
        for bad in [
            "https://h:9200",
            "https://h:9200/",
            "https://h/a b",
            "https://h/a?b",
            "x",
        ] {
            assert!(split_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn page_bodies_are_composite_with_after_and_lag() {
        let mut o = SearchOptions {
            page_size: 500,
            ..SearchOptions::default()
        };
        let b = page_body("r-1", &o, None, LAG_STEPS[0]);
        assert_eq!(b["size"], 0);
        let comp = &b["aggs"][AGG]["composite"];
        assert_eq!(comp["size"], 500);
        assert_eq!(
            comp["sources"],
            json!([{"agent": {"terms": {"field": "ingestbench.agent"}}},
                   {"seq": {"terms": {"field": "ingestbench.seq"}}}])
        );
        assert!(comp.get("after").is_none());
        assert_eq!(
            b["aggs"][AGG]["aggs"],
            json!({"ingested": {"min": {"field": "event.ingested"}},
                   "sent": {"min": {"field": "ingestbench.sent"}},
                   "event_time": {"min": {"field": "@timestamp"}}})
        );
        assert_eq!(
            b["query"]["bool"]["filter"][0]["bool"]["should"],
            json!([{"term": {"ingestbench.run": "r-1"}},
                   {"term": {"ingestbench.run.keyword": "r-1"}}])
        );
        o.fields.seq = "tag.s".into();
        let after = json!({"agent": 1, "seq": 499});
        let b = page_body("r-1", &o, Some(&after), None);
        assert_eq!(b["aggs"][AGG]["composite"]["after"], after);
        assert_eq!(
            b["aggs"][AGG]["composite"]["sources"][1]["seq"]["terms"]["field"],
            "tag.s"
        );
        assert!(b["aggs"][AGG].get("aggs").is_none());
        // The steps down after a refusal: without the event time, without sent.
        o.fields.sent = "tag.sent_ms".into();
        assert_eq!(
            page_body("r-1", &o, None, LAG_STEPS[1])["aggs"][AGG]["aggs"],
            json!({"ingested": {"min": {"field": "event.ingested"}},
                   "sent": {"min": {"field": "tag.sent_ms"}}})
        );
        assert_eq!(
            page_body("r-1", &o, None, LAG_STEPS[2])["aggs"][AGG]["aggs"],
            json!({"ingested": {"min": {"field": "event.ingested"}},
                   "event_time": {"min": {"field": "@timestamp"}}})
        );
        assert_eq!(LAG_STEPS[3], None);
        assert_eq!(
            count_body("r-1", &o)["query"],
            run_query("r-1", "ingestbench.run")
        );
    }

    #[test]
    fn parses_pages_with_odd_keys() {
        let v = json!({
            "took": 3, "timed_out": false,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": 5, "relation": "eq"}, "max_score": null, "hits": []},
            "aggregations": {AGG: {
                "after_key": {"agent": "1", "seq": 4.0},
                "buckets": [
                    {"key": {"agent": 0, "seq": 0}, "doc_count": 1,
                     "ingested": {"value": 1000.0, "value_as_string": "x"},
                     "event_time": {"value": 250.0}},
                    {"key": {"agent": 0, "seq": 1.5}, "doc_count": 2,
                     "ingested": {"value": null}, "sent": {"value": 900.0},
                     "event_time": {"value": null}},
                    {"key": {"agent": "1", "seq": 4.0}, "doc_count": 3},
                    {"key": {"agent": -1, "seq": "x"}, "doc_count": 1},
                    {"key": {"agent": 5_000_000_000u64, "seq": 1}, "doc_count": 1}
                ]}}
        });
        let p = parse_page(&v).unwrap();
        assert_eq!(p.after, Some(json!({"agent": "1", "seq": 4.0})));
        let keys: Vec<_> = p.buckets.iter().map(|b| (b.agent, b.seq, b.docs)).collect();
        assert_eq!(
            keys,
            vec![
                (Some(0), Some(0), 1),
                (Some(0), None, 2),
                (Some(1), Some(4), 3),
                (None, None, 1),
                (None, Some(1), 1)
            ]
        );
        assert_eq!(p.buckets[0].lag, Some((750.0, Start::EventTime)));
        assert_eq!(p.buckets[1].lag, None, "no ingest time: no lag");
        // The last page: empty, no after_key.
        let last = json!({"_shards": {"total": 1, "failed": 0},
                          "aggregations": {AGG: {"buckets": []}}});
        assert_eq!(
            parse_page(&last).unwrap(),
            Page {
                buckets: vec![],
                after: None
            }
        );
        // An index pattern over nothing.
        assert!(
            parse_page(&json!({"_shards": {"total": 0}}))
                .unwrap()
                .buckets
                .is_empty()
        );
    }

    #[test]
    fn bucket_lag_prefers_sent_and_falls_back_to_the_event_time() {
        let lag = |b: Value| bucket_lag(&b);
        // `min` on a long gives a double; on a date, ms with value_as_string.
        assert_eq!(
            lag(
                json!({"ingested": {"value": 1_767_600_000_523.0, "value_as_string": "x"},
                       "sent": {"value": 1_767_600_000_123.0},
                       "event_time": {"value": 1_700_000_000_000.0}})
            ),
            Some((400.0, Start::Sent))
        );
        assert_eq!(
            lag(
                json!({"ingested": {"value": 2_000.0}, "sent": {"value": null},
                       "event_time": {"value": 1_250.0}})
            ),
            Some((750.0, Start::EventTime))
        );
        assert_eq!(
            lag(json!({"ingested": {"value": 2_000.0}, "sent": {"value": 2_500.0}})),
            Some((-500.0, Start::Sent))
        );
        assert_eq!(
            lag(json!({"ingested": {"value": 2_000.0}, "sent": {"value": "12"}})),
            None
        );
        assert_eq!(
            lag(json!({"sent": {"value": 1.0}, "event_time": {"value": 1.0}})),
            None
        );
    }

    #[test]
    fn refusal_notes_say_what_is_measured() {
        let o = SearchOptions::default();
        let none = lag_refused(None, "boom", &o);
        assert!(
            none.starts_with(
                "ingest lag not measured: the store refused `min` on \
                 event.ingested / ingestbench.sent / @timestamp (HTTP 400: boom)"
            ),
            "{none}"
        );
        let sent_only = lag_refused(LAG_STEPS[1], "boom", &o);
        assert!(
            sent_only.starts_with(
                "ingest lag from ingestbench.sent only: the store refused \
                 `min` on @timestamp"
            ),
            "{sent_only}"
        );
        let time_only = lag_refused(LAG_STEPS[2], "boom", &o);
        assert!(
            time_only.starts_with(
                "ingest lag from @timestamp only, not the tags' send time: \
                 the store refused `min` on ingestbench.sent"
            ),
            "{time_only}"
        );
    }

    #[test]
    fn refuses_partial_and_foreign_answers() {
        for bad in [
            json!({"timed_out": true, "aggregations": {AGG: {"buckets": []}}}),
            json!({"_shards": {"total": 2, "failed": 1,
                   "failures": [{"reason": {"reason": "boom"}}]},
                   "aggregations": {AGG: {"buckets": []}}}),
            json!({"_shards": {"total": 1, "failed": 0}}),
            json!({"aggregations": {AGG: {"buckets": {}}}}),
            json!({"aggregations": {AGG: {"buckets": [{"key": {"agent": 0}}]}}}),
            json!({"aggregations": {AGG: {"buckets": [{"key": 3, "doc_count": 1}]}}}),
            json!([1, 2]),
        ] {
            assert!(parse_page(&bad).is_err(), "{bad}");
        }
        let e = parse_page(&json!({"_shards": {"total": 2, "failed": 1,
            "failures": [{"reason": {"reason": "boom"}}]}}))
        .unwrap_err();
        assert!(e.contains("1 shards failed (boom)"), "{e}");
        assert_eq!(
            parse_count(&json!({"count": 42, "_shards": {"total": 1, "failed": 0}})),
            Ok(42)
        );
        assert!(parse_count(&json!({"count": -1})).is_err());
        assert!(parse_count(&json!({"error": "x"})).is_err());
    }

    #[test]
    fn pages_are_capped_by_the_report() {
        let exp = Expected::from_report(
            r#"{"accounting":{"run_id":"r","agents":[
                {"agent":0,"events_sent":100000,"failed":[]},
                {"agent":1,"events_sent":50000,"failed":[]}]}}"#,
        )
        .unwrap();
        assert_eq!(max_pages(&exp, 10_000), 30 + SPARE_PAGES);
        assert_eq!(max_pages(&exp, 0), 300_000 + SPARE_PAGES);
    }
}
