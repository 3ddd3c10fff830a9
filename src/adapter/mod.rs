//! Adapters: how a batch of rendered events becomes an HTTP request, and how a response
//! becomes an outcome. `lphc` posts a JSON array of events; `generic-hec` posts concatenated
//! Splunk HEC envelopes to `/services/collector/event` or newline-separated events to
//! `/services/collector/raw`. Everything per run (paths, auth and channel headers, the static
//! part of each envelope) is rendered once in `Framer::new`; per event only the time and the
//! event itself are written. `syslog` frames syslog messages; `relp` is the RELP protocol that
//! carries them with an acknowledgement each. `elasticsearch` posts NDJSON action/document
//! pairs to `/_bulk` and reads the answer item by item (`bulk.rs`). Adapters never own sockets.

pub mod answer;
pub mod bulk;
pub mod gzip;
pub mod hec_ack;
pub mod relp;
pub mod syslog;

use crate::bytes::{Sink, write_i64, write_u64_padded};
use crate::config::schema::{Adapter, AuthScheme, Compression, HecEndpoint, HecFraming, Target};
use crate::config::secrets::Token;
use crate::net::http::Response;
use crate::pack::load::Carrier;
use answer::Judged;

/// JSON events go into a JSON body as they are; any other event as a JSON string.
fn json_embed(carrier: Carrier) -> Embed {
    if carrier == Carrier::Json {
        Embed::Direct
    } else {
        Embed::JsonString
    }
}

/// How one event sits in the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embed {
    /// Rendered straight into the body (JSON objects, raw lines).
    Direct,
    /// Rendered aside, then written as a JSON string.
    JsonString,
}

/// What a request body is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// lphc: a JSON array of events.
    JsonArray,
    /// HEC event endpoint: concatenated envelopes, one per event.
    HecEnvelopes,
    /// HEC raw endpoint: one event per line.
    HecLines,
    /// Plain HTTP (`adapter: http`): the event itself, or the fixed body, nothing around it.
    Plain,
    /// Elasticsearch / OpenSearch `_bulk`: an action line and a document line per event.
    Bulk,
}

impl Body {
    fn is_hec(self) -> bool {
        matches!(self, Body::HecEnvelopes | Body::HecLines)
    }
}

/// The per-run framing of batches for one adapter (built from the config at setup; the
/// worker sees only this).
pub struct Framer {
    pub body: Body,
    pub path: String,
    pub host: String,
    /// Header lines (each ending `\r\n`) every request carries: auth, content type, channel…
    pub headers: Vec<u8>,
    pub embed: Embed,
    pub gzip: bool,
    /// `/services/collector/ack?channel=…` when HEC indexer acknowledgement is on.
    pub ack_path: Option<String>,
    /// Header lines of an ack poll: auth and channel, JSON, never compressed.
    pub ack_headers: Vec<u8>,
    /// HEC envelope text after the time and before the event: `,"host":…,"event":`.
    envelope_mid: Vec<u8>,
    /// HEC envelope text after the event: `,"fields":{…}}` or `}`.
    envelope_end: Vec<u8>,
    /// The request method (POST but for plain HTTP).
    pub method: &'static str,
    /// Plain HTTP: the body every request carries (shared, never copied per request).
    pub fixed: Option<std::sync::Arc<[u8]>>,
    /// Plain HTTP: the statuses that are success (empty: any 2xx); every other answer fails
    /// its request, nothing is retried.
    pub expect: Option<Vec<u16>>,
    /// The answers carry no body whatever their headers say (HEAD).
    pub bodiless_answers: bool,
    /// Close the connection after every answer (plain HTTP without keep-alive).
    pub close_after: bool,
    /// `adapter: elasticsearch`: the per-run parts of the action lines and text documents.
    pub bulk: Option<bulk::Bulk>,
}

pub use bulk::EventId;

/// What a response means for its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted {
        ack_id: Option<u64>,
    },
    /// Send the same bytes again, after `after_s` seconds if the server said.
    Retry {
        after_s: Option<u32>,
    },
    AuthFailed,
    Failed,
    /// A `_bulk` answer: each item says what became of its event; items worth resending go
    /// again after `after_s` seconds if the server said.
    Items {
        after_s: Option<u32>,
    },
    /// Answered 2xx, but not in words the engine can read (`answer::Judged::Unreadable`, or
    /// an answer the response reader could not read whole): never resent, counted apart.
    Unreadable,
}

/// JSON-escapes `s` into `out` (quotes not included).
#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; start <= i < s.len() (start is an earlier i + 1), and a nibble \
              (& 0xf) indexes the 16 hex digits"
)]
pub fn json_escape_into(s: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.put_slice(&s[start..i]);
        if esc.is_empty() {
            out.put_slice(b"\\u00");
            write_u64_padded(u64::from(b >> 4), 1, out);
            out.push(b"0123456789abcdef"[(b & 0xf) as usize]);
        } else {
            out.put_slice(esc);
        }
        start = i + 1;
    }
    out.put_slice(&s[start..]);
}

fn json_str(s: &str) -> Vec<u8> {
    let mut v = vec![b'"'];
    json_escape_into(s.as_bytes(), &mut v);
    v.push(b'"');
    v
}

/// `Authorization`/key header line for the configured scheme, or nothing.
fn auth_header(t: &Target, token: Option<&Token>) -> Vec<u8> {
    let (Some(auth), Some(token)) = (&t.auth, token) else {
        return Vec::new();
    };
    let tok = token.expose();
    let line = match auth.scheme {
        Some(AuthScheme::XApiKey) => format!("X-API-Key: {tok}"),
        Some(AuthScheme::Bearer) => format!("Authorization: Bearer {tok}"),
        Some(AuthScheme::Splunk) => format!("Authorization: Splunk {tok}"),
        Some(AuthScheme::ApiKey) => format!("Authorization: ApiKey {tok}"),
        Some(AuthScheme::Basic) => {
            use base64::Engine;
            let user = auth.username.as_deref().unwrap_or("");
            let creds = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{tok}"));
            format!("Authorization: Basic {creds}")
        }
        Some(AuthScheme::Header) => format!(
            "{}: {tok}",
            auth.header.as_deref().unwrap_or("X-Auth-Token")
        ),
        None => return Vec::new(),
    };
    format!("{line}\r\n").into_bytes()
}

impl Framer {
    /// `base_path` is the URL path (for lphc, the collector's endpoint; for HEC, ignored in
    /// favour of the standard paths). `carrier` is the pack's; `sourcetype` its default.
    pub fn new(
        t: &Target,
        token: Option<&Token>,
        host: &str,
        base_path: &str,
        carrier: Carrier,
        sourcetype: &str,
        run_id: &str,
    ) -> Framer {
        let mut headers = auth_header(t, token);
        let gzip = t.compression == Compression::Gzip;
        let gzip_line: &[u8] = if gzip {
            b"Content-Encoding: gzip\r\n"
        } else {
            b""
        };
        match t.adapter {
            Adapter::GenericHec => {
                let hec = t.hec.clone().unwrap_or(crate::config::schema::Hec {
                    endpoint: HecEndpoint::Event,
                    index: None,
                    sourcetype: None,
                    source: None,
                    host: None,
                    channel: None,
                    ack: false,
                    framing: None,
                });
                let raw = hec.endpoint == HecEndpoint::Raw;
                let channel = hec
                    .channel
                    .clone()
                    .or_else(|| hec.ack.then(|| channel_for(run_id)));
                if let Some(ch) = &channel {
                    headers.extend_from_slice(
                        format!("X-Splunk-Request-Channel: {ch}\r\n").as_bytes(),
                    );
                }
                let mut ack_headers = headers.clone();
                ack_headers.extend_from_slice(b"Content-Type: application/json\r\n");
                headers.extend_from_slice(gzip_line);
                let st = hec
                    .sourcetype
                    .clone()
                    .unwrap_or_else(|| sourcetype.to_string());
                let path = if raw {
                    let mut q = format!("/services/collector/raw?sourcetype={}", query_escape(&st));
                    for (k, v) in [
                        ("index", &hec.index),
                        ("host", &hec.host),
                        ("source", &hec.source),
                        ("channel", &channel),
                    ] {
                        if let Some(v) = v {
                            q.push_str(&format!("&{k}={}", query_escape(v)));
                        }
                    }
                    q
                } else {
                    "/services/collector/event".to_string()
                };
                headers.extend_from_slice(if raw {
                    b"Content-Type: text/plain\r\n" as &[u8]
                } else {
                    b"Content-Type: application/json\r\n"
                });
                let framing = hec.framing.unwrap_or(match (raw, carrier) {
                    (true, _) => HecFraming::Raw,
                    (false, Carrier::Json) => HecFraming::Object,
                    (false, _) => HecFraming::String,
                });
                let mut mid = Vec::new();
                for (k, v) in [
                    ("host", &hec.host),
                    ("source", &hec.source),
                    ("index", &hec.index),
                ] {
                    if let Some(v) = v {
                        mid.extend_from_slice(format!(",\"{k}\":").as_bytes());
                        mid.extend_from_slice(&json_str(v));
                    }
                }
                mid.extend_from_slice(b",\"sourcetype\":");
                mid.extend_from_slice(&json_str(&st));
                mid.extend_from_slice(b",\"event\":");
                let embed = if framing == HecFraming::String
                    || (framing == HecFraming::Object && carrier != Carrier::Json)
                {
                    Embed::JsonString
                } else {
                    Embed::Direct
                };
                let mut end = b",\"fields\":{\"ingestbench_run\":".to_vec();
                end.extend_from_slice(&json_str(run_id));
                end.extend_from_slice(b"}}");
                Framer {
                    envelope_mid: mid,
                    envelope_end: end,
                    ack_path: if hec.ack {
                        channel
                            .as_ref()
                            .map(|c| format!("/services/collector/ack?channel={c}"))
                    } else {
                        None
                    },
                    ack_headers,
                    ..Framer::post(
                        if raw {
                            Body::HecLines
                        } else {
                            Body::HecEnvelopes
                        },
                        path,
                        host,
                        headers,
                        if raw { Embed::Direct } else { embed },
                        gzip,
                    )
                }
            }
            Adapter::Elasticsearch => {
                headers.extend_from_slice(gzip_line);
                headers.extend_from_slice(b"Content-Type: application/x-ndjson\r\n");
                let es = t.elasticsearch.clone().unwrap_or_default();
                let mut path = format!("{}/_bulk", base_path.trim_end_matches('/'));
                if let Some(p) = &es.pipeline {
                    path.push_str(&format!("?pipeline={}", query_escape(p)));
                }
                Framer {
                    bulk: Some(bulk::Bulk::new(&es, run_id)),
                    ..Framer::post(Body::Bulk, path, host, headers, json_embed(carrier), gzip)
                }
            }
            _ => {
                // Plain HTTP (`with_http`) says its own content type and never compresses.
                if t.adapter != Adapter::Http {
                    headers.extend_from_slice(gzip_line);
                    headers.extend_from_slice(b"Content-Type: application/json\r\n");
                }
                let path = if base_path.is_empty() {
                    "/".into()
                } else {
                    base_path.to_string()
                };
                Framer::post(
                    Body::JsonArray,
                    path,
                    host,
                    headers,
                    json_embed(carrier),
                    gzip,
                )
            }
        }
    }

    /// Text documents of `_bulk` carry no `ingestbench` object (the source's accounting is
    /// off); other framings are as they were.
    /// A POST of `body` with nothing around its events, no acknowledgement and no `_bulk`
    /// state: what every adapter's framing starts from.
    fn post(
        body: Body,
        path: String,
        host: &str,
        headers: Vec<u8>,
        embed: Embed,
        gzip: bool,
    ) -> Framer {
        Framer {
            body,
            path,
            host: host.to_string(),
            headers,
            embed,
            gzip,
            envelope_mid: Vec::new(),
            envelope_end: Vec::new(),
            method: "POST",
            fixed: None,
            expect: None,
            bodiless_answers: false,
            close_after: false,
            ack_path: None,
            ack_headers: Vec::new(),
            bulk: None,
        }
    }

    pub fn untagged(mut self, untagged: bool) -> Framer {
        if let (Some(b), true) = (self.bulk.as_mut(), untagged) {
            b.untagged();
        }
        self
    }

    /// This framing for a scenario stage's events: HEC envelopes also carry the stage's
    /// tactic and technique among their `fields` (`ingestbench_tactic`,
    /// `ingestbench_technique`); other bodies carry them in each event's tag alone.
    pub fn with_attack(mut self, tactic: &str, technique: &str) -> Framer {
        if self.body == Body::HecEnvelopes && self.envelope_end.ends_with(b"}}") {
            self.envelope_end.truncate(self.envelope_end.len() - 2);
            for (k, v) in [
                ("ingestbench_tactic", tactic),
                ("ingestbench_technique", technique),
            ] {
                self.envelope_end
                    .extend_from_slice(format!(",\"{k}\":").as_bytes());
                self.envelope_end.extend_from_slice(&json_str(v));
            }
            self.envelope_end.extend_from_slice(b"}}");
        }
        self
    }

    /// Starts a body.
    #[inline]
    pub fn begin(&self, body: &mut Vec<u8>) {
        body.clear();
        if self.body == Body::JsonArray {
            body.push(b'[');
        }
    }

    /// This framing as plain HTTP (`adapter: http`): the plan's method and header lines
    /// after the auth header, the bare event (or the fixed body), success by the expected
    /// statuses.
    pub fn with_http(mut self, h: &crate::run::http::HttpPlan) -> Framer {
        self.headers.extend_from_slice(&h.headers);
        self.body = Body::Plain;
        self.embed = Embed::Direct;
        self.gzip = false;
        self.envelope_mid.clear();
        self.envelope_end.clear();
        self.ack_path = None;
        self.method = h.method.name();
        self.fixed = h.fixed.clone();
        self.expect = Some(h.expect.clone());
        self.bodiless_answers = h.method == crate::config::schema::HttpMethod::Head;
        self.close_after = !h.keepalive;
        self
    }

    /// Writes what comes before event number `n` (0-based) of the batch; `time_ns` is the
    /// event's time (HEC envelopes carry it), `id` its agent and seq (`_bulk` ids).
    #[inline]
    pub fn before_event(&self, body: &mut Vec<u8>, n: usize, time_ns: i64, id: &EventId) {
        match self.body {
            Body::Bulk => {
                if let Some(b) = &self.bulk {
                    b.action(id, body);
                    if self.embed == Embed::JsonString {
                        b.text_start(time_ns, body);
                    }
                }
            }
            Body::HecLines => {
                if n > 0 {
                    body.push(b'\n');
                }
            }
            Body::HecEnvelopes => {
                body.put_slice(b"{\"time\":");
                write_i64(time_ns.div_euclid(1_000_000_000), body);
                body.push(b'.');
                write_u64_padded(
                    (time_ns.rem_euclid(1_000_000_000) / 1_000_000) as u64,
                    3,
                    body,
                );
                body.put_slice(&self.envelope_mid);
            }
            Body::JsonArray => {
                if n > 0 {
                    body.push(b',');
                }
            }
            Body::Plain => {}
        }
        if self.embed == Embed::JsonString {
            body.push(b'"');
        }
    }

    /// Writes what comes after an event.
    #[inline]
    pub fn after_event(&self, body: &mut Vec<u8>, id: &EventId) {
        if self.embed == Embed::JsonString {
            body.push(b'"');
        }
        match self.body {
            Body::HecEnvelopes => body.put_slice(&self.envelope_end),
            Body::Bulk => {
                if let (Some(b), Embed::JsonString) = (&self.bulk, self.embed) {
                    b.text_end(id, body);
                }
                body.push(b'\n');
            }
            _ => {}
        }
    }

    /// Ends a body.
    #[inline]
    pub fn finish(&self, body: &mut Vec<u8>) {
        match self.body {
            Body::JsonArray => body.push(b']'),
            Body::HecLines => body.push(b'\n'),
            Body::HecEnvelopes | Body::Plain | Body::Bulk => {}
        }
    }

    /// Reads a response: what happens to the batch (`answer::judge`, which `probe` uses too).
    pub fn outcome(&self, r: &Response, body: &[u8]) -> Outcome {
        let (judged, _) = self.judge(r.status, body, r.encoded);
        let after_s = r.retry_after_s;
        match judged {
            Judged::Accepted => Outcome::Accepted {
                ack_id: if self.body.is_hec() {
                    answer::hec_ack_id(body)
                } else {
                    None
                },
            },
            Judged::Retry => Outcome::Retry { after_s },
            Judged::AuthFailed => Outcome::AuthFailed,
            Judged::Failed => Outcome::Failed,
            Judged::Items => Outcome::Items { after_s },
            Judged::Unreadable => Outcome::Unreadable,
        }
    }

    /// What an answer says in this framing's protocol, and its HEC `code` if it has one.
    pub fn judge(&self, status: u16, body: &[u8], encoded: bool) -> (Judged, Option<i64>) {
        answer::judge(self.body, self.expect.as_deref(), status, body, encoded)
    }

    /// An answer of `status` the reader could not read whole: for a 2xx (plain HTTP: an
    /// expected status) "answered 2xx, unreadable"; otherwise the status alone decides, as
    /// if the body were empty.
    pub fn unreadable_outcome(&self, status: u16) -> Outcome {
        if answer::unreadable_is_success(self.expect.as_deref(), status) {
            return Outcome::Unreadable;
        }
        let r = Response {
            status,
            retry_after_s: None,
            close: true,
            encoded: false,
            body: (0, 0),
        };
        self.outcome(&r, b"")
    }

    /// The HEC response code in a body, when there is one.
    pub fn hec_code(&self, body: &[u8]) -> Option<i64> {
        if self.body.is_hec() {
            answer::hec_code(body)
        } else {
            None
        }
    }
}

/// A deterministic channel GUID for a run (HEC ack needs one).
fn channel_for(run_id: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in run_id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    let g = h ^ (h >> 29);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (h >> 32) as u32,
        (h >> 16) as u16,
        (g & 0xfff) as u16,
        ((g >> 12) & 0xfff) as u16,
        g >> 16 & 0xffff_ffff_ffff
    )
}

fn query_escape(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~:".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::secrets::Store;

    fn target(yaml_target: &str) -> Target {
        let text = format!(
            "schema_version: \"1.0\"\ntarget: {yaml_target}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 10, stop: {{ after: 5s }} }}\n"
        );
        let l = crate::config::load_str(&text, &Store::new("/nonexistent".into()), None);
        l.config
            .unwrap_or_else(|| panic!("{:?}", l.diags.items))
            .target
    }

    fn batch(f: &Framer, events: &[&[u8]]) -> Vec<u8> {
        let mut body = Vec::new();
        f.begin(&mut body);
        for (i, e) in events.iter().enumerate() {
            let id = EventId {
                agent: 1,
                seq: i as u64 + 7,
                sent_ms: None,
            };
            f.before_event(&mut body, i, 1_767_600_000_123_000_000, &id);
            match f.embed {
                Embed::Direct => body.extend_from_slice(e),
                Embed::JsonString => json_escape_into(e, &mut body),
            }
            f.after_event(&mut body, &id);
        }
        f.finish(&mut body);
        body
    }

    #[test]
    fn lphc_json_array() {
        let t = target(
            "{ url: \"http://127.0.0.1:1/ingest\", auth: { scheme: x-api-key, token_env: X } }",
        );
        let tok = Token::new("k3y".into());
        let f = Framer::new(
            &t,
            Some(&tok),
            "127.0.0.1:1",
            "/ingest",
            Carrier::Json,
            "st",
            "r-1",
        );
        let body = batch(&f, &[b"{\"a\":1}", b"{\"b\":2}"]);
        assert_eq!(body, b"[{\"a\":1},{\"b\":2}]");
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 2);
        assert_eq!(
            f.headers,
            b"X-API-Key: k3y\r\nContent-Type: application/json\r\n"
        );
        let lines = Framer::new(&t, None, "h", "/ingest", Carrier::Syslog, "st", "r-1");
        let body = batch(&lines, &[b"<14>1 a \"q\"", b"x\\y"]);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v[0], "<14>1 a \"q\"");
        assert_eq!(v[1], "x\\y");
    }

    #[test]
    fn hec_event_envelopes() {
        let t = target(
            "{ adapter: generic-hec, url: \"http://127.0.0.1:1\", hec: { index: main, host: lg1 }, auth: { scheme: splunk, token_env: X } }",
        );
        let tok = Token::new("t0k".into());
        let f = Framer::new(
            &t,
            Some(&tok),
            "h",
            "",
            Carrier::Json,
            "aws:cloudtrail",
            "r-9",
        );
        assert_eq!(f.path, "/services/collector/event");
        assert!(f.headers.starts_with(b"Authorization: Splunk t0k\r\n"));
        let body = batch(&f, &[b"{\"a\":1}", b"{\"b\":\"x\"}"]);
        let text = String::from_utf8(body.clone()).unwrap();
        assert_eq!(
            text,
            "{\"time\":1767600000.123,\"host\":\"lg1\",\"index\":\"main\",\"sourcetype\":\"aws:cloudtrail\",\"event\":{\"a\":1},\"fields\":{\"ingestbench_run\":\"r-9\"}}\
{\"time\":1767600000.123,\"host\":\"lg1\",\"index\":\"main\",\"sourcetype\":\"aws:cloudtrail\",\"event\":{\"b\":\"x\"},\"fields\":{\"ingestbench_run\":\"r-9\"}}"
        );
        // Concatenated objects: each one parses.
        let n = serde_json::Deserializer::from_slice(&body)
            .into_iter::<serde_json::Value>()
            .count();
        assert_eq!(n, 2);
    }

    #[test]
    fn a_scenario_stage_adds_its_tactic_and_technique_to_hec_fields() {
        let t = target("{ adapter: generic-hec, url: \"http://127.0.0.1:1\" }");
        let f = Framer::new(&t, None, "h", "", Carrier::Json, "okta", "r-9")
            .with_attack("TA0001", "T1078");
        let body = batch(&f, &[b"{\"a\":1}"]);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v["fields"],
            serde_json::json!({"ingestbench_run": "r-9", "ingestbench_tactic": "TA0001", "ingestbench_technique": "T1078"})
        );
        assert_eq!(v["sourcetype"], "okta");
        // lphc has no envelope: the event's tag carries them.
        let t = target("{ adapter: lphc, url: \"http://127.0.0.1:1/ingest\" }");
        let plain = Framer::new(&t, None, "h", "/ingest", Carrier::Json, "x", "r");
        let staged = Framer::new(&t, None, "h", "/ingest", Carrier::Json, "x", "r")
            .with_attack("TA0001", "T1078");
        assert_eq!(batch(&plain, &[b"{}"]), batch(&staged, &[b"{}"]));
    }

    #[test]
    fn hec_raw_and_strings() {
        let t = target(
            "{ adapter: generic-hec, url: \"http://127.0.0.1:1\", hec: { endpoint: raw, index: \"my idx\" } }",
        );
        let f = Framer::new(&t, None, "h", "", Carrier::Syslog, "syslog", "r-9");
        assert_eq!(
            f.path,
            "/services/collector/raw?sourcetype=syslog&index=my%20idx"
        );
        assert_eq!(batch(&f, &[b"<14>1 a", b"<14>1 b"]), b"<14>1 a\n<14>1 b\n");
        let t = target("{ adapter: generic-hec, url: \"http://127.0.0.1:1\" }");
        let f = Framer::new(&t, None, "h", "", Carrier::Line, "cef", "r-9");
        assert_eq!(f.embed, Embed::JsonString);
        let body = batch(&f, &[b"CEF:0|a\\|b"]);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["event"], "CEF:0|a\\|b");
    }

    #[test]
    fn outcomes() {
        let t = target("{ adapter: generic-hec, url: \"http://127.0.0.1:1\" }");
        let f = Framer::new(&t, None, "h", "", Carrier::Json, "x", "r");
        let r = |status, retry| Response {
            status,
            retry_after_s: retry,
            close: false,
            encoded: false,
            body: (0, 0),
        };
        assert_eq!(
            f.outcome(
                &r(200, None),
                b"{\"text\":\"Success\",\"code\":0,\"ackId\":7}"
            ),
            Outcome::Accepted { ack_id: Some(7) }
        );
        assert_eq!(
            f.outcome(&r(429, Some(2)), b""),
            Outcome::Retry { after_s: Some(2) }
        );
        assert_eq!(
            f.outcome(&r(503, None), b"{\"text\":\"Server is busy\",\"code\":9}"),
            Outcome::Retry { after_s: None }
        );
        assert_eq!(
            f.outcome(
                &r(500, None),
                b"{\"text\":\"Internal server error\",\"code\":8}"
            ),
            Outcome::Retry { after_s: None }
        );
        assert_eq!(
            f.outcome(&r(403, None), b"{\"text\":\"Invalid token\",\"code\":4}"),
            Outcome::AuthFailed
        );
        assert_eq!(
            f.outcome(&r(400, None), b"{\"text\":\"No data\",\"code\":5}"),
            Outcome::Failed
        );
        assert_eq!(f.hec_code(b"{\"text\":\"No data\",\"code\":5}"), Some(5));
        // A 2xx counts only with code 0 (issue 33, case 1): a non-zero code is read first.
        assert_eq!(
            f.outcome(
                &r(200, None),
                b"{\"text\":\"Invalid data format\",\"code\":6}"
            ),
            Outcome::Failed
        );
        assert_eq!(
            f.outcome(
                &r(200, Some(1)),
                b"{\"text\":\"Server is busy\",\"code\":9}"
            ),
            Outcome::Retry { after_s: Some(1) }
        );
        assert_eq!(
            f.outcome(&r(200, None), b"{\"text\":\"Success\"}"),
            Outcome::Unreadable
        );
        assert_eq!(f.outcome(&r(200, None), b"OK"), Outcome::Unreadable);
        // An answer the reader could not read whole: a 2xx is unreadable, never resent.
        assert_eq!(f.unreadable_outcome(200), Outcome::Unreadable);
        assert_eq!(f.unreadable_outcome(503), Outcome::Retry { after_s: None });
        assert_eq!(f.unreadable_outcome(400), Outcome::Failed);
        assert_eq!(f.unreadable_outcome(401), Outcome::AuthFailed);
    }

    #[test]
    fn elasticsearch_bulk_pairs_path_and_headers() {
        let t = target(
            "{ adapter: elasticsearch, url: \"http://127.0.0.1:9200\", compression: gzip, elasticsearch: { index: logs-x, pipeline: geo }, auth: { scheme: api-key, token_env: X } }",
        );
        let tok = Token::new("a2V5".into());
        let f = Framer::new(&t, Some(&tok), "h", "/", Carrier::Json, "st", "r-9");
        assert_eq!(f.path, "/_bulk?pipeline=geo");
        assert_eq!(
            f.headers,
            b"Authorization: ApiKey a2V5\r\nContent-Encoding: gzip\r\nContent-Type: application/x-ndjson\r\n"
        );
        let body = batch(&f, &[b"{\"a\":1}", b"{\"b\":2}"]);
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "{\"create\":{\"_index\":\"logs-x\",\"_id\":\"r-9-1-7\"}}\n{\"a\":1}\n\
{\"create\":{\"_index\":\"logs-x\",\"_id\":\"r-9-1-8\"}}\n{\"b\":2}\n"
        );
        // A text event: a document with the line as its message and the tag beside it.
        let t = target("{ adapter: elasticsearch, url: \"http://127.0.0.1:9200/es/\" }");
        let f = Framer::new(&t, None, "h", "/es/", Carrier::Syslog, "st", "r-9");
        assert_eq!(f.path, "/es/_bulk");
        assert_eq!(f.headers, b"Content-Type: application/x-ndjson\r\n");
        let body = batch(&f, &[b"<14>1 a \"q\"\n"]);
        let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
        assert_eq!(lines.len(), 3, "two lines and the final newline");
        let doc: serde_json::Value = serde_json::from_slice(lines[1]).unwrap();
        assert_eq!(doc["message"], "<14>1 a \"q\"\n");
        assert_eq!(doc["@timestamp"], "2026-01-05T08:00:00.123Z");
        assert_eq!(doc["ingestbench"]["seq"], 7);
        let untagged = Framer::new(&t, None, "h", "", Carrier::Line, "st", "r-9").untagged(true);
        let doc: serde_json::Value = serde_json::from_slice(
            batch(&untagged, &[b"x"])
                .split(|b| *b == b'\n')
                .nth(1)
                .unwrap(),
        )
        .unwrap();
        assert!(doc.get("ingestbench").is_none(), "{doc}");
        // Answers: all stored, items to read, busy, auth, not a _bulk answer.
        let r = |status| Response {
            status,
            retry_after_s: None,
            close: false,
            encoded: false,
            body: (0, 0),
        };
        // Every `_bulk` answer is read item by item, `"errors":false` too: an item's status
        // is the collector's word on its event.
        let ok = b"{\"took\":3,\"errors\":false,\"items\":[{\"create\":{\"status\":201}}]}";
        assert_eq!(f.outcome(&r(200), ok), Outcome::Items { after_s: None });
        assert_eq!(
            f.outcome(&r(200), b"{\"took\":3,\"errors\":true,\"items\":[]}"),
            Outcome::Items { after_s: None }
        );
        // A 2xx that is no `_bulk` answer: answered 2xx, unreadable.
        assert_eq!(f.outcome(&r(200), b"{}"), Outcome::Unreadable);
        assert_eq!(f.outcome(&r(429), b""), Outcome::Retry { after_s: None });
        assert_eq!(f.outcome(&r(502), b""), Outcome::Retry { after_s: None });
        assert_eq!(f.outcome(&r(401), b""), Outcome::AuthFailed);
        assert_eq!(f.outcome(&r(413), b""), Outcome::Failed);
    }

    #[test]
    fn escaping_and_basic_auth() {
        let mut o = Vec::new();
        json_escape_into(b"a\"b\\c\nd\x01", &mut o);
        assert_eq!(o, b"a\\\"b\\\\c\\nd\\u0001");
        let t = target(
            "{ url: \"http://127.0.0.1:1/x\", auth: { scheme: basic, username: svc, token_env: X } }",
        );
        let f = Framer::new(
            &t,
            Some(&Token::new("pw".into())),
            "h",
            "/x",
            Carrier::Json,
            "st",
            "r",
        );
        assert!(f.headers.starts_with(b"Authorization: Basic c3ZjOnB3\r\n"));
        let ch = channel_for("r-1");
        assert_eq!(ch.len(), 36);
    }
}
