//! A strict recorded-answer Elasticsearch / OpenSearch `_bulk` endpoint for
//! `tests/elasticsearch_run.rs`, on 127.0.0.1 port 0 (tiny_http, one thread). Its request
//! checks follow the documented Bulk API (Elasticsearch "Bulk API" reference, OpenSearch
//! "Bulk" docs): `POST /_bulk` (an optional path prefix before it), `Content-Type:
//! application/x-ndjson`, the body NDJSON ending in a newline, lines alternating an action line
//! (one member: the configured op type, with `_index` and `_id`) and a document (a JSON object,
//! one line); `Content-Encoding: gzip` bodies are gzip; `?pipeline=` exactly when configured
//! and no other query; the auth header when one is required (401 in the security plugin's
//! shape otherwise). On top of the API it checks what ingestbench promises: each `_id` is
//! `RUN-AGENT-SEQ` and equals the document's `ingestbench` tag, and no id repeats within a
//! request. A request that breaks a rule is answered 400 (`illegal_argument_exception`) and
//! recorded in `violations()`, which a test asserts empty.
//!
//! Documents are held by id: `create` of a held id answers the item 409
//! (`version_conflict_engine_exception`), `index` overwrites. It can be told to answer items
//! 429 (`es_rejected_execution_exception`) the first time their id comes, items 400
//! (`mapper_parsing_exception`) always, and to store a whole first request and then answer it
//! 503 (the client's whole resend then meets 409s). Answers have the documented shape
//! (`took`, `errors`, `items[]` of `{ACTION: {_index, _id, _version, result, _shards, status,
//! error: {type, reason}}}`). Every other path (`INDEX/_refresh`, `_count`, `_search`) is
//! answered by `search_store::opensearch` from what `_bulk` stored, so `ingestbench verify`
//! can ask this same store. It stops when dropped, and by itself after `LIFETIME`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::search_store::{self, Doc, Kind, Recorded};

const LIFETIME: Duration = Duration::from_secs(120);

/// What the store requires and how it answers.
#[derive(Clone, Debug)]
pub struct Rules {
    pub index: String,
    /// `create` or `index`.
    pub op_type: String,
    /// The path before `/_bulk` (empty: none).
    pub prefix: String,
    pub pipeline: Option<String>,
    /// The `Authorization` value required.
    pub auth: Option<String>,
    /// Requests must be gzipped (true) or must not be (false).
    pub gzip: bool,
    /// Items whose seq % `.0` == `.1` are answered 429 the first time their id comes.
    pub reject_first: Option<(u64, u64)>,
    /// Items whose seq % `.0` == `.1` are answered 400 mapper_parsing_exception, always.
    pub refuse: Option<(u64, u64)>,
    /// The first request's documents are stored and the request answered 503.
    pub store_then_503_first: bool,
}

impl Rules {
    pub fn new(index: &str) -> Rules {
        Rules {
            index: index.into(),
            op_type: "create".into(),
            prefix: String::new(),
            pipeline: None,
            auth: None,
            gzip: false,
            reject_first: None,
            refuse: None,
            store_then_503_first: false,
        }
    }
}

/// What the store saw, besides the documents.
#[derive(Debug, Default)]
pub struct Seen {
    pub bulk_requests: u64,
    /// Item answers by status (in the answers given: not those of the request answered 503).
    pub item_status: BTreeMap<u16, u64>,
    pub violations: Vec<String>,
    /// Ids answered 429 once (never again).
    rejected: BTreeSet<String>,
    /// Every `Authorization` header value seen.
    pub auth_values: BTreeSet<String>,
    /// Per id, how many times it was written (`index` overwrites count).
    pub writes: BTreeMap<String, u64>,
}

struct Shared {
    docs: BTreeMap<String, Doc>,
    seen: Seen,
}

pub struct BulkStore {
    pub port: u16,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl BulkStore {
    pub fn start(rules: Rules) -> BulkStore {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = server.server_addr().to_ip().expect("an IP listener").port();
        let shared = Arc::new(Mutex::new(Shared {
            docs: BTreeMap::new(),
            seen: Seen::default(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (sh, st) = (shared.clone(), stop.clone());
        let thread = std::thread::spawn(move || serve(server, rules, sh, st));
        BulkStore {
            port,
            shared,
            stop,
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The documents held, by id.
    pub fn docs(&self) -> BTreeMap<String, Doc> {
        self.shared.lock().unwrap().docs.clone()
    }

    pub fn with_seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.shared.lock().unwrap().seen)
    }

    pub fn violations(&self) -> Vec<String> {
        self.with_seen(|s| s.violations.clone())
    }
}

impl Drop for BulkStore {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn serve(
    server: tiny_http::Server,
    rules: Rules,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
) {
    let deadline = Instant::now() + LIFETIME;
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        let Ok(Some(mut req)) = server.recv_timeout(Duration::from_millis(20)) else {
            continue;
        };
        let mut raw = Vec::new();
        let _ = req.as_reader().read_to_end(&mut raw);
        let (path, query) = match req.url().split_once('?') {
            Some((p, q)) => (p.to_string(), q.to_string()),
            None => (req.url().to_string(), String::new()),
        };
        let headers: Vec<(String, String)> = req
            .headers()
            .iter()
            .map(|h| {
                (
                    h.field.as_str().as_str().to_string(),
                    h.value.as_str().to_string(),
                )
            })
            .collect();
        let rec = Recorded {
            method: req.method().as_str().to_string(),
            path,
            query,
            headers,
            body: String::new(),
        };
        let (status, answer) = {
            let mut sh = shared.lock().unwrap();
            if let Some(a) = rec.header("Authorization") {
                sh.seen.auth_values.insert(a.to_string());
            }
            if rec.path.ends_with("/_bulk") {
                bulk(&rules, &mut sh, &rec, &raw)
            } else {
                // The verifier's questions, answered from what `_bulk` stored.
                let rec = Recorded {
                    body: String::from_utf8_lossy(&raw).into_owned(),
                    ..rec
                };
                let mut setup =
                    search_store::Setup::new(Kind::OpenSearch, sh.docs.values().cloned().collect());
                setup.auth = rules.auth.clone();
                search_store::opensearch(&setup, &rec)
            }
        };
        let resp = tiny_http::Response::from_string(answer)
            .with_status_code(status)
            .with_header(
                tiny_http::Header::from_bytes("Content-Type", "application/json; charset=UTF-8")
                    .expect("a valid header"),
            );
        let _ = req.respond(resp);
    }
}

fn refusal(sh: &mut Shared, why: String) -> (u16, String) {
    sh.seen.violations.push(why.clone());
    (
        400,
        json!({"error": {"root_cause": [{"type": "illegal_argument_exception", "reason": why}],
               "type": "illegal_argument_exception", "reason": why}, "status": 400})
        .to_string(),
    )
}

/// One parsed action/document pair.
struct Pair {
    id: String,
    run: String,
    agent: u32,
    seq: u64,
    sent_ms: Option<u64>,
}

fn bulk(rules: &Rules, sh: &mut Shared, r: &Recorded, raw: &[u8]) -> (u16, String) {
    if let Some(want) = &rules.auth
        && r.header("Authorization") != Some(want.as_str())
    {
        let reason = format!(
            "missing authentication credentials for REST request [{}]",
            r.path
        );
        return (
            401,
            json!({"error": {"root_cause": [{"type": "security_exception", "reason": reason}],
                   "type": "security_exception", "reason": reason}, "status": 401})
            .to_string(),
        );
    }
    sh.seen.bulk_requests += 1;
    let first = sh.seen.bulk_requests == 1;
    if r.method != "POST" {
        return refusal(sh, format!("method {} (the Bulk API takes POST)", r.method));
    }
    let want_path = format!("{}/_bulk", rules.prefix);
    if r.path != want_path {
        return refusal(sh, format!("path {} (want {want_path})", r.path));
    }
    let want_query = rules
        .pipeline
        .as_ref()
        .map_or(String::new(), |p| format!("pipeline={p}"));
    if r.query != want_query {
        return refusal(sh, format!("query {:?} (want {want_query:?})", r.query));
    }
    if r.header("Content-Type") != Some("application/x-ndjson") {
        return refusal(
            sh,
            format!(
                "Content-Type {:?} (NDJSON is application/x-ndjson)",
                r.header("Content-Type")
            ),
        );
    }
    let body = match (r.header("Content-Encoding"), rules.gzip) {
        (Some("gzip"), true) => {
            let mut out = Vec::new();
            if flate2::read::GzDecoder::new(raw)
                .read_to_end(&mut out)
                .is_err()
            {
                return refusal(
                    sh,
                    "Content-Encoding: gzip, and the body is not gzip".into(),
                );
            }
            out
        }
        (None, false) => raw.to_vec(),
        (enc, _) => {
            return refusal(
                sh,
                format!("Content-Encoding {enc:?} where gzip is {}", rules.gzip),
            );
        }
    };
    if body.is_empty() || body.last() != Some(&b'\n') {
        return refusal(sh, "the body must end with a newline".into());
    }
    let text = match std::str::from_utf8(&body) {
        Ok(t) => t,
        Err(_) => return refusal(sh, "the body is not UTF-8".into()),
    };
    let lines: Vec<&str> = text[..text.len() - 1].split('\n').collect();
    if !lines.len().is_multiple_of(2) {
        return refusal(
            sh,
            format!("{} lines: action and document lines alternate", lines.len()),
        );
    }
    let id_form = regex::Regex::new(r"^(r-[0-9a-f]{12}|[A-Za-z0-9._-]+)-([0-9]+)-([0-9]+)$")
        .expect("a valid regex");
    let mut pairs = Vec::with_capacity(lines.len() / 2);
    let mut ids = BTreeSet::new();
    for (k, two) in lines.chunks(2).enumerate() {
        let action: Value = match serde_json::from_str(two[0]) {
            Ok(v) => v,
            Err(e) => return refusal(sh, format!("action line {k}: not JSON: {e}")),
        };
        let Some(obj) = action.as_object().filter(|o| o.len() == 1) else {
            return refusal(sh, format!("action line {k}: one member, the action"));
        };
        let (op, meta) = obj.iter().next().unwrap();
        if *op != rules.op_type {
            return refusal(
                sh,
                format!("action line {k}: {op} (want {})", rules.op_type),
            );
        }
        if meta["_index"] != rules.index.as_str() {
            return refusal(sh, format!("action line {k}: _index {}", meta["_index"]));
        }
        let Some(id) = meta["_id"].as_str() else {
            return refusal(sh, format!("action line {k}: no _id"));
        };
        let Some(c) = id_form.captures(id) else {
            return refusal(
                sh,
                format!("action line {k}: _id {id:?} is not RUN-AGENT-SEQ"),
            );
        };
        if !ids.insert(id.to_string()) {
            return refusal(sh, format!("_id {id} twice in one request"));
        }
        let doc: Value = match serde_json::from_str::<Value>(two[1]) {
            Ok(v) if v.is_object() => v,
            _ => return refusal(sh, format!("document {k}: not a JSON object")),
        };
        let tag = &doc["ingestbench"];
        let (Some(run), Some(agent), Some(seq)) = (
            tag["run"].as_str(),
            tag["agent"].as_u64(),
            tag["seq"].as_u64(),
        ) else {
            return refusal(sh, format!("document {k}: no ingestbench tag: {}", two[1]));
        };
        if c[1] != *run || c[2] != agent.to_string() || c[3] != seq.to_string() {
            return refusal(sh, format!("_id {id} is not its document's tag {tag}"));
        }
        if doc.get("message").is_some() && doc["@timestamp"].as_str().is_none() {
            return refusal(sh, format!("document {k}: a message without @timestamp"));
        }
        pairs.push(Pair {
            id: id.to_string(),
            run: run.to_string(),
            agent: agent as u32,
            seq,
            sent_ms: tag["sent"].as_u64(),
        });
    }
    let mut items = Vec::with_capacity(pairs.len());
    let mut statuses = Vec::with_capacity(pairs.len());
    let mut errors = false;
    let ms = now_ms();
    for (n, p) in pairs.iter().enumerate() {
        let hit = |m: Option<(u64, u64)>| m.is_some_and(|(a, b)| p.seq % a == b);
        let mut item = json!({"_index": rules.index, "_id": p.id});
        let status: u16 = if hit(rules.refuse) {
            item["error"] = json!({"type": "mapper_parsing_exception",
                "reason": format!("failed to parse field [eventTime] of type [date] in document with id '{}'", p.id),
                "caused_by": {"type": "illegal_argument_exception", "reason": "failed to parse date field"}});
            400
        } else if hit(rules.reject_first) && sh.seen.rejected.insert(p.id.clone()) {
            item["error"] = json!({"type": "es_rejected_execution_exception",
                "reason": "rejected execution of coordinating operation [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, coordinating_operation_bytes=1024, max_coordinating_and_primary_bytes=1024]"});
            429
        } else if rules.op_type == "create" && sh.docs.contains_key(&p.id) {
            item["error"] = json!({"type": "version_conflict_engine_exception",
                "reason": format!("[{}]: version conflict, document already exists (current version [1])", p.id),
                "index": rules.index, "shard": "0"});
            409
        } else {
            let created = !sh.docs.contains_key(&p.id);
            sh.docs.insert(
                p.id.clone(),
                Doc {
                    run: p.run.clone(),
                    agent: p.agent,
                    seq: p.seq,
                    copies: 1,
                    time_ms: ms,
                    sent_ms: p.sent_ms,
                    ingested_ms: ms,
                },
            );
            *sh.seen.writes.entry(p.id.clone()).or_default() += 1;
            item["_version"] = json!(1);
            item["result"] = json!(if created { "created" } else { "updated" });
            item["_shards"] = json!({"total": 2, "successful": 1, "failed": 0});
            item["_seq_no"] = json!(n);
            item["_primary_term"] = json!(1);
            if created { 201 } else { 200 }
        };
        item["status"] = json!(status);
        errors |= status >= 300;
        statuses.push(status);
        items.push(json!({rules.op_type.as_str(): item}));
    }
    if first && rules.store_then_503_first {
        return (
            503,
            json!({"error": {"root_cause": [{"type": "unavailable_shards_exception",
                   "reason": "primary shard is not active"}],
                   "type": "unavailable_shards_exception", "reason": "primary shard is not active"},
                   "status": 503})
            .to_string(),
        );
    }
    // Item statuses count only in answers the client reads.
    for st in statuses {
        *sh.seen.item_status.entry(st).or_default() += 1;
    }
    (
        200,
        json!({"took": 3, "errors": errors, "items": items}).to_string(),
    )
}
