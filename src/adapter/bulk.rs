//! `adapter: elasticsearch`: Elasticsearch / OpenSearch `_bulk`. What a request is (NDJSON:
//! per event an action line `{"create":{"_index":"…","_id":"RUN-AGENT-SEQ"}}` and the document,
//! each line ending in `\n`, the last one too), rendered once per run where it can be (the
//! action line up to the id, the text document's envelope), and how its answer is read: a
//! scan over `items[]` in request order, each item's `status` and `error.type`, without
//! parsing the document into a tree and without allocating. A JSON event is the document
//! as it is (its accounting tag is a member already); any other event (syslog, CEF, auditd
//! lines) becomes `{"@timestamp":"…","message":"<the line>","ingestbench":{…}}`, the tag
//! where the OpenSearch verifier looks for it (`ingestbench.run/agent/seq/sent`).

use crate::bytes::{Sink, write_u64, write_u64_padded};
use crate::config::schema::{Elasticsearch, OpType};

/// One event's identity in the run: its accounting agent and seq, and its batch's intended
/// send time (ms) when tags carry it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventId {
    pub agent: u32,
    pub seq: u64,
    pub sent_ms: Option<u64>,
}

/// The per-run parts of a `_bulk` body.
#[derive(Clone, Debug)]
pub struct Bulk {
    /// `{"create":{"_index":"IDX","_id":"RUN-` — the agent, `-`, the seq and `"}}\n` follow.
    action: Vec<u8>,
    /// `"ingestbench":{"run":"RUN","agent":` for text documents (empty: untagged).
    tag: Vec<u8>,
    pub op_type: OpType,
}

impl Bulk {
    pub fn new(es: &Elasticsearch, run_id: &str) -> Bulk {
        let mut action = Vec::new();
        action.extend_from_slice(b"{\"");
        action.extend_from_slice(es.op_type.name().as_bytes());
        action.extend_from_slice(b"\":{\"_index\":\"");
        super::json_escape_into(es.index.as_bytes(), &mut action);
        action.extend_from_slice(b"\",\"_id\":\"");
        super::json_escape_into(run_id.as_bytes(), &mut action);
        action.push(b'-');
        let mut tag = b",\"ingestbench\":{\"run\":\"".to_vec();
        super::json_escape_into(run_id.as_bytes(), &mut tag);
        tag.extend_from_slice(b"\",\"agent\":");
        Bulk {
            action,
            tag,
            op_type: es.op_type,
        }
    }

    /// Text documents carry no tag object (the source's accounting is off).
    pub fn untagged(&mut self) {
        self.tag.clear();
    }

    /// The action line of event `id`.
    #[inline]
    pub fn action(&self, id: &EventId, out: &mut Vec<u8>) {
        out.put_slice(&self.action);
        write_u64(u64::from(id.agent), out);
        out.push(b'-');
        write_u64(id.seq, out);
        out.put_slice(b"\"}}\n");
    }

    /// The start of a text document, up to the opening quote of its message.
    #[inline]
    pub fn text_start(&self, time_ns: i64, out: &mut Vec<u8>) {
        out.put_slice(b"{\"@timestamp\":\"");
        write_rfc3339_ms(time_ns, out);
        out.put_slice(b"\",\"message\":");
    }

    /// The end of a text document after its message's closing quote.
    #[inline]
    pub fn text_end(&self, id: &EventId, out: &mut Vec<u8>) {
        if !self.tag.is_empty() {
            out.put_slice(&self.tag);
            write_u64(u64::from(id.agent), out);
            out.put_slice(b",\"seq\":");
            write_u64(id.seq, out);
            if let Some(ms) = id.sent_ms {
                out.put_slice(b",\"sent\":");
                write_u64(ms, out);
            }
            out.push(b'}');
        }
        out.push(b'}');
    }
}

/// `2026-12-02T05:10:07.123Z` (UTC, ms), as Elasticsearch's default date detection reads it.
fn write_rfc3339_ms(time_ns: i64, out: &mut Vec<u8>) {
    let secs = time_ns.div_euclid(1_000_000_000);
    let ms = (time_ns.rem_euclid(1_000_000_000) / 1_000_000) as u64;
    let (y, m, d) = crate::generate::time::civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400) as u64;
    write_u64_padded(y.max(0) as u64, 4, out);
    out.push(b'-');
    write_u64_padded(u64::from(m), 2, out);
    out.push(b'-');
    write_u64_padded(u64::from(d), 2, out);
    out.push(b'T');
    write_u64_padded(sod / 3600, 2, out);
    out.push(b':');
    write_u64_padded(sod / 60 % 60, 2, out);
    out.push(b':');
    write_u64_padded(sod % 60, 2, out);
    out.push(b'.');
    write_u64_padded(ms, 3, out);
    out.push(b'Z');
}

/// The item error types counted by name (`events_failed_by_type`); any other is `other`.
pub const ERROR_TYPES: [&str; 12] = [
    "mapper_parsing_exception",
    "document_parsing_exception",
    "strict_dynamic_mapping_exception",
    "illegal_argument_exception",
    "version_conflict_engine_exception",
    "es_rejected_execution_exception",
    "index_not_found_exception",
    "cluster_block_exception",
    "circuit_breaking_exception",
    "security_exception",
    "unavailable_shards_exception",
    "other",
];

/// The index of `ty` in `ERROR_TYPES` (the last, `other`, for any type not listed).
pub fn error_type_index(ty: &[u8]) -> u8 {
    ERROR_TYPES
        .iter()
        .take(ERROR_TYPES.len() - 1)
        .position(|t| t.as_bytes() == ty)
        .unwrap_or(ERROR_TYPES.len() - 1) as u8
}

/// What one item of a `_bulk` answer says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    pub status: u16,
    /// `ERROR_TYPES` index of `error.type` (meaningful when the status is not 2xx).
    pub error_type: u8,
    /// Where the item's `error` object is in the answer (`0..0`: none), for `describe`.
    pub error: (u32, u32),
}

/// `STATUS TYPE: REASON` of a failed item, from its answer (at most 300 bytes of reason; the
/// JSON escapes kept as they are). Allocates: for the first few failures only.
pub fn describe(body: &[u8], item: &Item) -> String {
    let (a, b) = (item.error.0 as usize, item.error.1 as usize);
    let err = body.get(a..b).unwrap_or(b"");
    let text = |key: &[u8]| {
        let v = member(err, key).unwrap_or(b"");
        let v = v
            .strip_prefix(b"\"")
            .and_then(|v| v.strip_suffix(b"\""))
            .unwrap_or(v);
        String::from_utf8_lossy(v.get(..300).unwrap_or(v)).into_owned()
    };
    format!("{} {}: {}", item.status, text(b"type"), text(b"reason"))
}

/// How a `_bulk` answer's item is settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Stored,
    /// `create` of an id that exists: an earlier attempt stored it.
    AlreadyStored,
    /// Worth sending again (429 rejected execution, 502/503/504).
    Resend,
    Failed,
}

impl Item {
    pub fn fate(&self, op: OpType) -> Fate {
        match self.status {
            200..=299 => Fate::Stored,
            409 if op == OpType::Create => Fate::AlreadyStored,
            429 | 502 | 503 | 504 => Fate::Resend,
            _ => Fate::Failed,
        }
    }
}

/// The top-level `"errors"` of a `_bulk` answer: `Some(false)` when every item succeeded.
/// `None` when the body is not a `_bulk` answer.
pub fn errors(body: &[u8]) -> Option<bool> {
    match member(body, b"errors")? {
        b"true" => Some(true),
        b"false" => Some(false),
        _ => None,
    }
}

/// Calls `f` with each item of a `_bulk` answer, in order; the number of items, or `None`
/// when the body has no `items` array or an item is not `{"ACTION":{…,"status":N,…}}`.
pub fn items(body: &[u8], mut f: impl FnMut(Item)) -> Option<usize> {
    let arr = member(body, b"items")?;
    let mut i = skip_ws(arr, 0);
    if arr.get(i) != Some(&b'[') {
        return None;
    }
    i += 1;
    let mut n = 0;
    loop {
        i = skip_ws(arr, i);
        match arr.get(i)? {
            b']' => return Some(n),
            b',' if n > 0 => {
                i += 1;
                continue;
            }
            b'{' => {}
            _ => return None,
        }
        let end = skip_value(arr, i)?;
        let item = arr.get(i..end)?;
        // `{"create":{…}}`: the one member's value.
        let (_, inner) = first_member(item)?;
        let status = number(member(inner, b"status")?)?;
        let err = member(inner, b"error");
        let error = err.map_or((0, 0), |e| {
            let at = e.as_ptr() as usize - body.as_ptr() as usize;
            (at as u32, (at + e.len()) as u32)
        });
        let error_type =
            err.and_then(|e| member(e, b"type"))
                .map_or(ERROR_TYPES.len() as u8 - 1, |t| {
                    error_type_index(
                        t.strip_prefix(b"\"")
                            .unwrap_or(t)
                            .strip_suffix(b"\"")
                            .unwrap_or(t),
                    )
                });
        f(Item {
            status,
            error_type,
            error,
        });
        n += 1;
        i = end;
    }
}

fn number(v: &[u8]) -> Option<u16> {
    if v.is_empty() || v.len() > 3 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter()
        .try_fold(0u16, |a, d| Some(a * 10 + u16::from(d - b'0')))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the JSON value starting at `i` (after whitespace).
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    let mut i = skip_ws(b, i);
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while let Some(&c) = b.get(i) {
                match c {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let start = i;
            while b
                .get(i)
                .is_some_and(|&c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
            {
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

/// The end (exclusive) of the string whose opening quote is at `i`.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Walks the members of the object `obj` (its first byte, after whitespace, is `{`), calling
/// `f(key, value)` until it returns true; the value it stopped at.
fn find_member(obj: &[u8], mut f: impl FnMut(&[u8]) -> bool) -> Option<(&[u8], &[u8])> {
    let mut i = skip_ws(obj, 0);
    if obj.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(obj, i);
        match obj.get(i)? {
            b'}' => return None,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let kend = skip_string(obj, i)?;
        let key = obj.get(i + 1..kend - 1)?;
        i = skip_ws(obj, kend);
        if obj.get(i) != Some(&b':') {
            return None;
        }
        let vstart = skip_ws(obj, i + 1);
        let vend = skip_value(obj, vstart)?;
        if f(key) {
            return Some((key, obj.get(vstart..vend)?));
        }
        i = vend;
    }
}

/// The value of the member `key` of the object `obj` (top level only; also what
/// `answer` reads HEC answers with).
pub(crate) fn member<'a>(obj: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    find_member(obj, |k| k == key).map(|(_, v)| v)
}

fn first_member(obj: &[u8]) -> Option<(&[u8], &[u8])> {
    find_member(obj, |_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn es(op: OpType) -> Elasticsearch {
        Elasticsearch {
            index: "logs-a".into(),
            pipeline: None,
            op_type: op,
        }
    }

    #[test]
    fn action_lines_and_text_documents() {
        let b = Bulk::new(&es(OpType::Create), "r-1");
        let id = EventId {
            agent: 3,
            seq: 42,
            sent_ms: Some(1_700_000_000_123),
        };
        let mut out = Vec::new();
        b.action(&id, &mut out);
        assert_eq!(
            out,
            b"{\"create\":{\"_index\":\"logs-a\",\"_id\":\"r-1-3-42\"}}\n"
        );
        out.clear();
        b.text_start(1_767_600_000_123_000_000, &mut out);
        out.extend_from_slice(b"\"x\"");
        b.text_end(&id, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["@timestamp"], "2026-01-05T08:00:00.123Z");
        assert_eq!(v["message"], "x");
        assert_eq!(
            v["ingestbench"],
            serde_json::json!({"run": "r-1", "agent": 3, "seq": 42, "sent": 1_700_000_000_123u64})
        );
        let mut b = Bulk::new(&es(OpType::Index), "r-1");
        b.untagged();
        out.clear();
        b.action(&id, &mut out);
        assert!(out.starts_with(b"{\"index\":"));
        out.clear();
        b.text_start(0, &mut out);
        out.extend_from_slice(b"\"x\"");
        b.text_end(&id, &mut out);
        assert_eq!(
            out,
            b"{\"@timestamp\":\"1970-01-01T00:00:00.000Z\",\"message\":\"x\"}"
        );
    }

    const ANSWER: &[u8] = br#"{
  "took" : 30, "errors" : true,
  "items" : [
    {"create":{"_index":"logs-a","_id":"r-1-0-0","_version":1,"result":"created","_shards":{"total":2,"successful":1,"failed":0},"_seq_no":0,"_primary_term":1,"status":201}},
    {"create":{"_index":"logs-a","_id":"r-1-0-1","status":429,"error":{"type":"es_rejected_execution_exception","reason":"rejected execution of coordinating operation [\"x\"]"}}},
    {"create":{"_index":"logs-a","_id":"r-1-0-2","status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse field [a] of type [long]","caused_by":{"type":"illegal_argument_exception","reason":"For input string: \"}{\""}}}},
    {"create":{"_index":"logs-a","_id":"r-1-0-3","status":409,"error":{"type":"version_conflict_engine_exception","reason":"[r-1-0-3]: version conflict, document already exists (current version [1])","index":"logs-a","shard":"0","index_uuid":"aAsFqTI0Tc2W0LCWgPNrOA"}}},
    {"index":{"_index":"logs-a","_id":"r-1-0-4","status":503,"error":{"type":"weird","reason":"?"}}}
  ]
}"#;

    #[test]
    fn items_are_read_in_order_with_status_and_type() {
        assert_eq!(errors(ANSWER), Some(true));
        let mut got = Vec::new();
        assert_eq!(items(ANSWER, |it| got.push(it)), Some(5));
        let t = |s: &str| error_type_index(s.as_bytes());
        assert_eq!(got[0].status, 201);
        assert_eq!(got[0].error, (0, 0));
        assert_eq!(
            describe(ANSWER, &got[2]),
            "400 mapper_parsing_exception: failed to parse field [a] of type [long]"
        );
        assert_eq!(
            (got[1].status, got[1].error_type),
            (429, t("es_rejected_execution_exception"))
        );
        assert_eq!(
            (got[2].status, got[2].error_type),
            (400, t("mapper_parsing_exception"))
        );
        assert_eq!(got[3].error_type, t("version_conflict_engine_exception"));
        assert_eq!(ERROR_TYPES[got[4].error_type as usize], "other");
        let fates: Vec<Fate> = got.iter().map(|i| i.fate(OpType::Create)).collect();
        assert_eq!(
            fates,
            [
                Fate::Stored,
                Fate::Resend,
                Fate::Failed,
                Fate::AlreadyStored,
                Fate::Resend
            ]
        );
        assert_eq!(got[3].fate(OpType::Index), Fate::Failed);
    }

    #[test]
    fn answers_that_are_not_bulk_answers_are_none() {
        assert_eq!(
            errors(b"{\"took\":1,\"errors\":false,\"items\":[]}"),
            Some(false)
        );
        assert_eq!(errors(b"{\"error\":\"x\"}"), None);
        assert_eq!(errors(b"not json"), None);
        assert_eq!(
            items(b"{\"items\":[{\"create\":{\"_id\":\"a\"}}]}", |_| {}),
            None
        );
        assert_eq!(
            items(b"{\"items\":[{\"create\":{\"status\":201}}", |_| {}),
            None
        );
        assert_eq!(items(b"{\"items\":[]}", |_| {}), Some(0));
        // A key named like a member inside a string is not a member.
        assert_eq!(
            errors(b"{\"x\":\"\\\"errors\\\":false\",\"errors\":true}"),
            Some(true)
        );
    }
}
