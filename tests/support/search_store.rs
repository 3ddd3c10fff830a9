//! A fake search store for `tests/verify_search.rs`: OpenSearch (`_refresh`, `_count`,
//! `_search` with a `composite` aggregation paged by `after`) or Splunk
//! (`/services/search/v2/jobs/export`, JSON lines), answering from a list of held documents in
//! the shapes the real APIs document, on 127.0.0.1 port 0 (tiny_http, one thread). A held
//! document's tag may carry `sent` or not: OpenSearch answers `min` on `ingestbench.sent` as
//! on a `long` (a double, no `value_as_string`; `null` where no copy has it), Splunk's listing
//! computes `ib_lag_ms` and `ib_by_sent` as the verifier's `eval` asks (from `sent` where the
//! event has it, else from `_time`; `_indextime` whole seconds). Every request is recorded
//! (method, path, query, headers, body) for the test to check its shape. It stops when
//! dropped, and by itself after `LIFETIME` in any case.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The longest a fake store lives.
const LIFETIME: Duration = Duration::from_secs(120);

/// One document (or, for Splunk, one event) held, `copies` times.
#[derive(Clone, Debug)]
pub struct Doc {
    pub run: String,
    pub agent: u32,
    pub seq: u64,
    pub copies: u64,
    /// The event's time, epoch ms.
    pub time_ms: u64,
    /// The tag's `sent`, epoch ms (`None`: a tag without it, as deterministic runs write).
    pub sent_ms: Option<u64>,
    /// When the store took it in, epoch ms (the first copy).
    pub ingested_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    OpenSearch,
    Splunk,
}

/// How the fake answers.
#[derive(Clone, Debug)]
pub struct Setup {
    pub kind: Kind,
    pub docs: Vec<Doc>,
    /// The `Authorization` value required (401 otherwise); `None`: anything goes.
    pub auth: Option<String>,
    /// OpenSearch: the status of `_refresh` (403: a read-only user).
    pub refresh_status: u16,
    /// OpenSearch: refuse with a 400 any page asking `min` on one of these fields (mapped as
    /// text).
    pub refuse_min: Vec<String>,
    /// Splunk: the index holding the docs (other indexes hold nothing).
    pub splunk_index: String,
    /// Splunk: end the listing export with a FATAL message.
    pub fatal_listing: bool,
}

impl Setup {
    pub fn new(kind: Kind, docs: Vec<Doc>) -> Setup {
        Setup {
            kind,
            docs,
            auth: None,
            refresh_status: 200,
            refuse_min: Vec::new(),
            splunk_index: "main".into(),
            fatal_listing: false,
        }
    }
}

/// A request as received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The body as `application/x-www-form-urlencoded` fields, in order.
    pub fn form(&self) -> Vec<(String, String)> {
        self.body
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (form_decode(k), form_decode(v))
            })
            .collect()
    }

    pub fn form_field(&self, name: &str) -> Option<String> {
        self.form()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}

fn form_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(v) => out.push(v),
                    Err(_) => out.push(b'%'),
                }
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A running fake store.
pub struct FakeStore {
    pub port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeStore {
    pub fn start(setup: Setup) -> FakeStore {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = server.server_addr().to_ip().expect("an IP listener").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (rq, st) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || serve(server, setup, rq, st));
        FakeStore {
            port,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub fn clear(&self) {
        if let Ok(mut r) = self.requests.lock() {
            r.clear();
        }
    }
}

impl Drop for FakeStore {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    server: tiny_http::Server,
    setup: Setup,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
) {
    let deadline = Instant::now() + LIFETIME;
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        let Ok(Some(mut req)) = server.recv_timeout(Duration::from_millis(50)) else {
            continue;
        };
        let mut body = String::new();
        let _ = req.as_reader().read_to_string(&mut body);
        let (path, query) = match req.url().split_once('?') {
            Some((p, q)) => (p.to_string(), q.to_string()),
            None => (req.url().to_string(), String::new()),
        };
        let rec = Recorded {
            method: req.method().as_str().to_string(),
            path,
            query,
            headers: req
                .headers()
                .iter()
                .map(|h| {
                    (
                        h.field.as_str().as_str().to_string(),
                        h.value.as_str().to_string(),
                    )
                })
                .collect(),
            body,
        };
        let (status, answer) = answer(&setup, &rec);
        if let Ok(mut r) = requests.lock() {
            r.push(rec);
        }
        let resp = tiny_http::Response::from_string(answer)
            .with_status_code(status)
            .with_header(
                tiny_http::Header::from_bytes("Content-Type", "application/json")
                    .expect("a valid header"),
            );
        let _ = req.respond(resp);
    }
}

fn answer(s: &Setup, r: &Recorded) -> (u16, String) {
    if let Some(want) = &s.auth
        && r.header("Authorization") != Some(want.as_str())
    {
        return match s.kind {
            Kind::OpenSearch => (401, os_401(&r.path)),
            Kind::Splunk => (
                401,
                json!({"messages": [{"type": "WARN", "text": "call not properly authenticated"}]})
                    .to_string(),
            ),
        };
    }
    match s.kind {
        Kind::OpenSearch => opensearch(s, r),
        Kind::Splunk => splunk(s, r),
    }
}

// ---- OpenSearch ----

fn os_401(path: &str) -> String {
    let reason = format!("missing authentication credentials for REST request [{path}]");
    json!({
        "error": {
            "root_cause": [{"type": "security_exception", "reason": reason}],
            "type": "security_exception",
            "reason": reason,
            "header": {"WWW-Authenticate": "Basic realm=\"security\" charset=\"UTF-8\""}
        },
        "status": 401
    })
    .to_string()
}

fn shards() -> Value {
    json!({"total": 1, "successful": 1, "skipped": 0, "failed": 0})
}

pub fn opensearch(s: &Setup, r: &Recorded) -> (u16, String) {
    if r.method != "POST" && r.method != "GET" {
        return (405, json!({"error": "method"}).to_string());
    }
    if r.path.ends_with("/_refresh") {
        if s.refresh_status != 200 {
            return (
                s.refresh_status,
                json!({"error": {"type": "security_exception",
                    "reason": "no permissions for [indices:admin/refresh]"}, "status": 403})
                .to_string(),
            );
        }
        return (
            200,
            json!({"_shards": {"total": 2, "successful": 1, "failed": 0}}).to_string(),
        );
    }
    let body = r.json();
    let run = run_of_query(&body["query"]);
    let docs: Vec<&Doc> = s
        .docs
        .iter()
        .filter(|d| run.as_deref() == Some(d.run.as_str()))
        .collect();
    if r.path.ends_with("/_count") {
        let n: u64 = docs.iter().map(|d| d.copies).sum();
        return (200, json!({"count": n, "_shards": shards()}).to_string());
    }
    if r.path.ends_with("/_search") {
        return composite(s, &body, &docs);
    }
    (404, json!({"error": "no such endpoint"}).to_string())
}

/// The run id a query asks for: the value of a `term` on `ingestbench.run` or `.keyword`
/// inside its `bool.filter[].bool.should`.
fn run_of_query(q: &Value) -> Option<String> {
    let should = q.pointer("/bool/filter/0/bool/should")?.as_array()?;
    should.iter().find_map(|t| {
        let term = t.get("term")?.as_object()?;
        term.iter()
            .find(|(k, _)| *k == "ingestbench.run" || *k == "ingestbench.run.keyword")
            .and_then(|(_, v)| v.as_str().map(str::to_string))
    })
}

fn composite(s: &Setup, body: &Value, docs: &[&Doc]) -> (u16, String) {
    let Some((name, agg)) = body["aggs"].as_object().and_then(|m| m.iter().next()) else {
        return (400, json!({"error": "no aggs"}).to_string());
    };
    let comp = &agg["composite"];
    let size = comp["size"].as_u64().unwrap_or(10) as usize;
    let subs = agg.get("aggs").and_then(Value::as_object);
    let refused = subs.into_iter().flatten().find_map(|(_, def)| {
        let field = def.pointer("/min/field").and_then(Value::as_str)?;
        s.refuse_min.iter().any(|r| r == field).then_some(field)
    });
    if let Some(field) = refused {
        let reason =
            format!("Field [{field}] of type [text] is not supported for aggregation [min]");
        return (
            400,
            json!({"error": {"root_cause": [{"type": "illegal_argument_exception",
                "reason": reason}],
                "type": "search_phase_execution_exception"}, "status": 400})
            .to_string(),
        );
    }
    let mut keys: BTreeMap<(u32, u64), Mins> = BTreeMap::new();
    for d in docs {
        let e = keys.entry((d.agent, d.seq)).or_insert(Mins {
            docs: 0,
            ingested: u64::MAX,
            time: u64::MAX,
            sent: None,
        });
        e.docs += d.copies;
        e.ingested = e.ingested.min(d.ingested_ms);
        e.time = e.time.min(d.time_ms);
        e.sent = match (e.sent, d.sent_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    let after = comp.get("after").map(|a| {
        (
            a["agent"].as_u64().unwrap_or(0) as u32,
            a["seq"].as_u64().unwrap_or(0),
        )
    });
    let page: Vec<_> = keys
        .iter()
        .filter(|(k, _)| after.is_none_or(|a| **k > a))
        .take(size)
        .collect();
    let buckets: Vec<Value> = page
        .iter()
        .map(|((agent, seq), m)| {
            let mut b = json!({"key": {"agent": agent, "seq": seq}, "doc_count": m.docs});
            for (sub, def) in subs.into_iter().flatten() {
                let field = def.pointer("/min/field").and_then(Value::as_str);
                b[sub] = match field {
                    // Dates: ms as a double, with the formatted date beside it.
                    Some("event.ingested") => date_min(m.ingested),
                    Some("@timestamp") => date_min(m.time),
                    // A JSON number, mapped `long`: a double only.
                    Some("ingestbench.sent") => json!({"value": m.sent.map(|ms| ms as f64)}),
                    _ => json!({"value": null}),
                };
            }
            b
        })
        .collect();
    let mut out = json!({"buckets": buckets});
    if let Some(((agent, seq), _)) = page.last() {
        out["after_key"] = json!({"agent": agent, "seq": seq});
    }
    let total: u64 = docs.iter().map(|d| d.copies).sum();
    (
        200,
        json!({
            "took": 4,
            "timed_out": false,
            "_shards": shards(),
            "hits": {"total": {"value": total.min(10_000), "relation": if total > 10_000 {"gte"} else {"eq"}},
                     "max_score": null, "hits": []},
            "aggregations": {name: out}
        })
        .to_string(),
    )
}

/// One composite key's documents and the minimums of their fields.
struct Mins {
    docs: u64,
    ingested: u64,
    time: u64,
    sent: Option<u64>,
}

fn date_min(ms: u64) -> Value {
    json!({"value": ms as f64, "value_as_string": format!("{ms}")})
}

// ---- Splunk ----

fn splunk(s: &Setup, r: &Recorded) -> (u16, String) {
    if r.method != "POST" || r.path != "/services/search/v2/jobs/export" {
        return (
            404,
            json!({"messages": [{"type": "ERROR", "text": "Not Found"}]}).to_string(),
        );
    }
    let Some(search) = r.form_field("search") else {
        return (
            400,
            json!({"messages": [{"type": "FATAL", "text": "Empty search."}]}).to_string(),
        );
    };
    let index = search
        .split_whitespace()
        .find_map(|w| w.strip_prefix("index="))
        .unwrap_or("");
    let run = search
        .split_once("ingestbench.run=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(run, _)| run.to_string());
    let docs: Vec<&Doc> = s
        .docs
        .iter()
        .filter(|d| index == s.splunk_index && run.as_deref() == Some(d.run.as_str()))
        .collect();
    let line = |offset: usize, last: bool, preview: bool, result: Value| {
        let mut v = json!({"preview": preview, "offset": offset, "result": result});
        if last {
            v["lastrow"] = json!(true);
        }
        v.to_string()
    };
    let mut lines = Vec::new();
    if search.contains("| stats count AS copies") {
        let mut per: BTreeMap<u32, (u64, BTreeMap<u64, ()>)> = BTreeMap::new();
        for d in &docs {
            let e = per.entry(d.agent).or_default();
            e.0 += d.copies;
            e.1.insert(d.seq, ());
        }
        // A preview first (partial, wrong on purpose): a reader must skip it.
        lines.push(line(
            0,
            false,
            true,
            json!({"ingestbench.agent": "7", "copies": "1",
            "distinct": "1", "min_seq": "0", "max_seq": "0"}),
        ));
        let n = per.len();
        for (i, (agent, (copies, seqs))) in per.iter().enumerate() {
            lines.push(line(
                i,
                i + 1 == n,
                false,
                json!({
                    "ingestbench.agent": agent.to_string(),
                    "copies": copies.to_string(),
                    "distinct": seqs.len().to_string(),
                    "min_seq": seqs.keys().next().copied().unwrap_or(0).to_string(),
                    "max_seq": seqs.keys().last().copied().unwrap_or(0).to_string(),
                }),
            ));
        }
    } else if search.ends_with("| stats count") {
        let n: u64 = docs.iter().map(|d| d.copies).sum();
        lines.push(line(0, true, false, json!({"count": n.to_string()})));
    } else if search.contains("| fields ") {
        let lags = search.contains(LISTING_EVAL);
        let mut i = 0;
        for d in &docs {
            for _ in 0..d.copies {
                let mut row = json!({
                    "ingestbench.agent": d.agent.to_string(),
                    "ingestbench.seq": d.seq.to_string(),
                });
                if lags {
                    let (ms, by_sent) = splunk_lag(d);
                    row["ib_lag_ms"] = json!(ms);
                    row["ib_by_sent"] = json!(by_sent);
                }
                lines.push(line(i, false, false, row));
                i += 1;
            }
        }
        if s.fatal_listing {
            lines.push(
                json!({"messages": [{"type": "FATAL",
                    "text": "Search auto-canceled: the search head ran out of disk"}]})
                .to_string(),
            );
        }
    } else {
        return (
            400,
            json!({"messages": [{"type": "FATAL", "text": "Unknown search."}]}).to_string(),
        );
    }
    let mut body = lines.join("\n");
    body.push('\n');
    (200, body)
}

/// The start of the listing's `eval` this fake computes (anything else: no lag fields).
const LISTING_EVAL: &str = "| eval ib_lag_ms=if(isnotnull('ingestbench.sent'), \
    _indextime*1000-'ingestbench.sent', (_indextime-_time)*1000), \
    ib_by_sent=if(isnotnull('ingestbench.sent'), 1, 0) |";

/// `ib_lag_ms` and `ib_by_sent` as Splunk prints them: `_indextime` is whole seconds, `_time`
/// keeps milliseconds (so the `_time` measure has a fraction).
fn splunk_lag(d: &Doc) -> (String, String) {
    let indextime_ms = (d.ingested_ms / 1000 * 1000) as i64;
    match d.sent_ms {
        Some(sent) => ((indextime_ms - sent as i64).to_string(), "1".into()),
        None => {
            let ms = (indextime_ms - d.time_ms as i64) as f64;
            (format!("{ms:.3}"), "0".into())
        }
    }
}
