//! What a request means: routing, authentication, fault decisions, counting the events of a
//! body and recording its accounting tags, and the response bytes. `Ctx` is one worker
//! thread's state for this (rng, a copy of the faults, scratch buffers, a cache of ledger
//! entries); it sees complete requests only and never touches a socket (`worker.rs` does).
//!
//! Endpoints:
//! - lphc: `POST /ingest` and any POST path not under `/services/`: a JSON array or NDJSON,
//!   answered `{"accepted":N}`.
//! - Splunk HEC: `/services/collector[/event[/1.0]]` (concatenated envelopes, one event each),
//!   `/services/collector/raw[/1.0]` (one event per non-empty line), `/services/collector/ack`,
//!   `GET /services/collector/health`.
//! - `GET /stats` (SinkStats JSON), `GET|POST /_faults` (read or set the faults), `GET /health`.

use serde::Deserialize;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use super::Shared;
use super::fault::{self, Faults, Outcome, Rng};
use super::http::{self, Head, MAX_BODY, Method};
use super::record::{Recorder, TagAt};
use super::scan;

/// What the connection does after a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// The response is in the output buffer; send it after `hold`, then close if `close`.
    Respond { close: bool, hold: Duration },
    /// Reset the connection, send nothing.
    Reset,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Ingest,
    HecEvent,
    HecRaw,
    HecAck,
    HecHealth,
    HecNotFound,
    Stats,
    FaultsGet,
    FaultsSet,
    Health,
    NotFound,
    MethodNotAllowed,
}

fn route(method: Method, path: &str) -> Route {
    let p = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    if let Some(rest) = p.strip_prefix("/services/") {
        let post = |r| {
            if method == Method::Post {
                r
            } else {
                Route::MethodNotAllowed
            }
        };
        return match rest {
            "collector" | "collector/event" | "collector/event/1.0" => post(Route::HecEvent),
            "collector/raw" | "collector/raw/1.0" => post(Route::HecRaw),
            "collector/ack" => post(Route::HecAck),
            "collector/health" | "collector/health/1.0" if method == Method::Get => {
                Route::HecHealth
            }
            "collector/health" | "collector/health/1.0" => Route::MethodNotAllowed,
            _ => Route::HecNotFound,
        };
    }
    match (method, p) {
        (Method::Get, "/stats") => Route::Stats,
        (_, "/stats") => Route::MethodNotAllowed,
        (Method::Get, "/_faults") => Route::FaultsGet,
        (Method::Post, "/_faults") => Route::FaultsSet,
        (_, "/_faults") => Route::MethodNotAllowed,
        (Method::Get, "/health") => Route::Health,
        (Method::Post, _) => Route::Ingest,
        (Method::Get, _) => Route::NotFound,
        (Method::Other, _) => Route::MethodNotAllowed,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Lphc,
    HecEvent,
    HecRaw,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Auth {
    Ok,
    Missing,
    Invalid,
}

const HEC_SUCCESS: &[u8] = br#"{"text":"Success","code":0}"#;
const HEC_HEALTHY: &[u8] = br#"{"text":"HEC is healthy","code":17}"#;
const HEC_TOKEN_REQUIRED: &[u8] = br#"{"text":"Token is required","code":2}"#;
const HEC_INVALID_TOKEN: &[u8] = br#"{"text":"Invalid token","code":4}"#;
const HEC_NO_DATA: &[u8] = br#"{"text":"No data","code":5}"#;
const HEC_INVALID_DATA: &[u8] = br#"{"text":"Invalid data format","code":6}"#;
const HEC_BUSY: &[u8] = br#"{"text":"Server is busy","code":9}"#;
const HEC_NO_CHANNEL: &[u8] = br#"{"text":"Data channel is missing","code":10}"#;
const HEC_ACK_DISABLED: &[u8] = br#"{"text":"ACK is disabled","code":14}"#;
const HEC_NOT_FOUND: &[u8] =
    br#"{"text":"The requested URL was not found on this server.","code":404}"#;
const HEC_TOO_LARGE: &[u8] = br#"{"text":"Content too large","code":27}"#;
const HEC_BAD_ENCODING: &[u8] = br#"{"text":"Unsupported content encoding","code":6}"#;

/// One worker thread's request-handling state.
pub(crate) struct Ctx {
    shared: Arc<Shared>,
    /// This worker's index (its slot in `Shared::totals`).
    idx: usize,
    rng: Rng,
    faults: Faults,
    faults_gen: u64,
    /// Queues the tags of a body and records them in the ledger (shared with the syslog
    /// listeners of this thread).
    pub(crate) rec: Recorder,
    decoded: Vec<u8>,
}

/// Per-request results folded into the thread's totals under one lock.
struct Tally {
    code: u16,
    events: u64,
    reset: bool,
}

impl Ctx {
    pub(crate) fn new(shared: Arc<Shared>, idx: usize, seed: u64) -> Self {
        Ctx {
            shared,
            idx,
            rng: Rng::new(seed),
            faults: Faults::default(),
            faults_gen: u64::MAX,
            rec: Recorder::new(),
            decoded: Vec::new(),
        }
    }

    /// Handles one complete request: appends its response to `out` (unless the answer is a
    /// reset) and counts it. `wire_len` is the size of the request on the wire.
    #[allow(
        clippy::indexing_slicing,
        reason = "idx is this worker's own slot, given at spawn, and totals has one per worker"
    )]
    pub(crate) fn handle(
        &mut self,
        h: &Head<'_>,
        body: &[u8],
        wire_len: usize,
        out: &mut Vec<u8>,
    ) -> Action {
        let mut tally = Tally {
            code: 200,
            events: 0,
            reset: false,
        };
        let action = self.dispatch(h, body, out, &mut tally);
        if let Ok(mut t) = self.shared.totals[self.idx].0.lock() {
            t.requests += 1;
            t.bytes_received += wire_len as u64;
            t.events_received += tally.events;
            if tally.reset {
                t.resets += 1;
            } else {
                t.count_status(tally.code);
            }
        }
        action
    }

    /// Answers a request the connection could not frame (bad head, too large) and counts it.
    #[allow(
        clippy::indexing_slicing,
        reason = "idx is this worker's own slot, given at spawn, and totals has one per worker"
    )]
    pub(crate) fn refuse(&mut self, code: u16, msg: &str, wire_len: usize, out: &mut Vec<u8>) {
        let body = format!(r#"{{"error":{}}}"#, json_str(msg));
        http::write_response(out, code, body.as_bytes(), None, true);
        if let Ok(mut t) = self.shared.totals[self.idx].0.lock() {
            t.requests += 1;
            t.bytes_received += wire_len as u64;
            t.count_status(code);
        }
    }

    fn dispatch(
        &mut self,
        h: &Head<'_>,
        body: &[u8],
        out: &mut Vec<u8>,
        tally: &mut Tally,
    ) -> Action {
        let close = h.close;
        let mut reply = |code: u16, bytes: &[u8]| {
            tally.code = code;
            http::write_response(out, code, bytes, None, close);
            Action::Respond {
                close,
                hold: Duration::ZERO,
            }
        };
        match route(h.method, h.path) {
            Route::HecHealth => reply(200, HEC_HEALTHY),
            Route::Health => reply(200, br#"{"status":"ok"}"#),
            Route::Stats => {
                let s = self.shared.stats();
                reply(200, s.to_json().as_bytes())
            }
            Route::FaultsGet => {
                let f = self.shared.faults();
                reply(
                    200,
                    serde_json::to_string(&f).unwrap_or_default().as_bytes(),
                )
            }
            Route::FaultsSet => {
                if self.auth(h) != Auth::Ok {
                    return reply(401, br#"{"error":"unauthorized"}"#);
                }
                match serde_json::from_slice::<Faults>(body)
                    .map_err(|e| e.to_string())
                    .and_then(|f| f.validate().map(|()| f))
                {
                    Ok(f) => {
                        self.shared.set_faults(f);
                        reply(
                            200,
                            serde_json::to_string(&f).unwrap_or_default().as_bytes(),
                        )
                    }
                    Err(e) => reply(400, format!(r#"{{"error":{}}}"#, json_str(&e)).as_bytes()),
                }
            }
            Route::HecNotFound => reply(404, HEC_NOT_FOUND),
            Route::NotFound => reply(404, br#"{"error":"not found"}"#),
            Route::MethodNotAllowed => reply(405, br#"{"error":"method not allowed"}"#),
            Route::HecAck => {
                let (code, bytes) = self.ack(h, body);
                reply(code, bytes.as_bytes())
            }
            Route::Ingest => self.data(Kind::Lphc, h, body, out, tally),
            Route::HecEvent => self.data(Kind::HecEvent, h, body, out, tally),
            Route::HecRaw => self.data(Kind::HecRaw, h, body, out, tally),
        }
    }

    /// A data request: auth, faults, decoding, counting, accounting.
    fn data(
        &mut self,
        kind: Kind,
        h: &Head<'_>,
        body: &[u8],
        out: &mut Vec<u8>,
        tally: &mut Tally,
    ) -> Action {
        let hec = kind != Kind::Lphc;
        let close = h.close;
        let mut finish = |code: u16, bytes: &[u8], retry: Option<u32>, hold: Duration| {
            tally.code = code;
            http::write_response(out, code, bytes, retry, close);
            Action::Respond { close, hold }
        };
        match self.auth(h) {
            Auth::Ok => {}
            Auth::Missing if hec => return finish(401, HEC_TOKEN_REQUIRED, None, Duration::ZERO),
            Auth::Invalid if hec => return finish(403, HEC_INVALID_TOKEN, None, Duration::ZERO),
            _ => return finish(401, br#"{"error":"unauthorized"}"#, None, Duration::ZERO),
        }
        if h.unknown_encoding {
            let b: &[u8] = if hec {
                HEC_BAD_ENCODING
            } else {
                br#"{"error":"unsupported Content-Encoding (gzip or identity)"}"#
            };
            return finish(415, b, None, Duration::ZERO);
        }
        let channel = h.channel.or_else(|| query_param(h.query, "channel"));
        if hec && self.shared.hec_ack && channel.is_none() {
            return finish(400, HEC_NO_CHANNEL, None, Duration::ZERO);
        }

        self.refresh_faults();
        let d = fault::decide(&self.faults, &mut self.rng);
        match d.outcome {
            Outcome::Reset => {
                tally.reset = true;
                return Action::Reset;
            }
            Outcome::Refuse(code) => {
                self.remember_refused(h.gzip, body);
                let b: &[u8] = match (hec, code) {
                    (true, _) => HEC_BUSY,
                    (false, 429) => br#"{"error":"too many requests"}"#,
                    (false, _) => br#"{"error":"service unavailable"}"#,
                };
                return finish(code, b, Some(self.faults.retry_after_s), d.hold);
            }
            Outcome::Serve => {}
        }

        let mut decoded = std::mem::take(&mut self.decoded);
        let payload: &[u8] = if h.gzip {
            match gunzip(body, &mut decoded) {
                Ok(()) => &decoded,
                Err(code) => {
                    self.decoded = decoded;
                    let b: &[u8] = match (hec, code) {
                        (true, 413) => HEC_TOO_LARGE,
                        (true, _) => HEC_INVALID_DATA,
                        (false, 413) => br#"{"error":"body too large"}"#,
                        (false, _) => br#"{"error":"bad gzip body"}"#,
                    };
                    return finish(code, b, None, d.hold);
                }
            }
        } else {
            body
        };
        let counted = match kind {
            Kind::Lphc => count_lphc(payload),
            Kind::HecEvent => count_hec_events(payload),
            Kind::HecRaw => count_lines(payload),
        };
        let events = match counted {
            Ok(n) => n,
            Err(msg) => {
                let b = if hec {
                    if payload.trim_ascii().is_empty() {
                        HEC_NO_DATA.to_vec()
                    } else {
                        HEC_INVALID_DATA.to_vec()
                    }
                } else {
                    format!(r#"{{"error":{}}}"#, json_str(msg)).into_bytes()
                };
                self.decoded = decoded;
                return finish(400, &b, None, d.hold);
            }
        };
        let first = self.account(payload);
        self.shared
            .refused
            .accepted(first.map(|t| (t.run(payload), t.agent, t.seq)), body);
        if decoded.capacity() > 4 * 1024 * 1024 {
            decoded = Vec::new();
        }
        self.decoded = decoded;
        tally.events = events;

        let mut num = itoa::Buffer::new();
        let mut msg = [0u8; 96];
        let len = if hec {
            let ack = match channel {
                Some(ch) if self.shared.hec_ack => Some(self.shared.next_ack_id(ch)),
                _ => None,
            };
            match ack {
                None => put(&mut msg, &[HEC_SUCCESS]),
                Some(id) => put(
                    &mut msg,
                    &[
                        HEC_SUCCESS.strip_suffix(b"}").unwrap_or(HEC_SUCCESS),
                        b",\"ackId\":",
                        num.format(id).as_bytes(),
                        b"}",
                    ],
                ),
            }
        } else {
            put(
                &mut msg,
                &[b"{\"accepted\":", num.format(events).as_bytes(), b"}"],
            )
        };
        finish(200, msg.get(..len).unwrap_or_default(), None, d.hold)
    }

    /// `POST /services/collector/ack`: `{"acks":[0,1]}` → `{"acks":{"0":true,"1":false}}`;
    /// an id is true once it was handed out on that channel (events are stored on receipt).
    fn ack(&mut self, h: &Head<'_>, body: &[u8]) -> (u16, String) {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match self.auth(h) {
            Auth::Ok => {}
            Auth::Missing => return (401, text(HEC_TOKEN_REQUIRED)),
            Auth::Invalid => return (403, text(HEC_INVALID_TOKEN)),
        }
        if !self.shared.hec_ack {
            return (400, text(HEC_ACK_DISABLED));
        }
        let Some(channel) = h.channel.or_else(|| query_param(h.query, "channel")) else {
            return (400, text(HEC_NO_CHANNEL));
        };
        #[derive(Deserialize)]
        struct AckRequest {
            acks: Vec<u64>,
        }
        let Ok(req) = serde_json::from_slice::<AckRequest>(body) else {
            return (400, text(HEC_INVALID_DATA));
        };
        let issued = self.shared.acks_issued(channel);
        let mut s = String::from(r#"{"acks":{"#);
        for (i, id) in req.acks.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let _ = write!(s, r#""{id}":{}"#, *id < issued);
        }
        s.push_str("}}");
        (200, s)
    }

    fn auth(&self, h: &Head<'_>) -> Auth {
        let Some(token) = self.shared.token.as_deref() else {
            return Auth::Ok;
        };
        let mut presented = false;
        if let Some(k) = h.api_key {
            presented = true;
            if k == token {
                return Auth::Ok;
            }
        }
        if let Some(a) = h.authorization {
            presented = true;
            let (scheme, cred) = match a.iter().position(|&b| b == b' ') {
                Some(i) => (
                    a.get(..i).unwrap_or_default(),
                    a.get(i + 1..).unwrap_or_default().trim_ascii(),
                ),
                None => (a, &b""[..]),
            };
            let ok = if scheme.eq_ignore_ascii_case(b"Bearer")
                || scheme.eq_ignore_ascii_case(b"Splunk")
            {
                cred == token
            } else if scheme.eq_ignore_ascii_case(b"Basic") {
                base64_decode(cred).is_some_and(|userpass| {
                    userpass
                        .iter()
                        .position(|&b| b == b':')
                        .is_some_and(|i| userpass.get(i + 1..) == Some(token))
                })
            } else {
                false
            };
            if ok {
                return Auth::Ok;
            }
        }
        if presented {
            Auth::Invalid
        } else {
            Auth::Missing
        }
    }

    fn refresh_faults(&mut self) {
        let g = self.shared.faults_gen();
        if g != self.faults_gen {
            self.faults = self.shared.faults();
            self.faults_gen = g;
        }
    }

    /// Records every tag of `payload` in the ledger: one lock per run of tags from the same
    /// (run, agent), which for a generated batch is one lock per request.
    /// Returns the first tag found, if any.
    fn account(&mut self, payload: &[u8]) -> Option<TagAt> {
        self.rec.queue_all(payload, payload);
        self.rec.record(&self.shared.ledger, payload)
    }

    /// Remembers a refused body so that its resend can be checked (see `resend`).
    fn remember_refused(&mut self, gzip: bool, body: &[u8]) {
        if !gzip {
            self.shared.refused.refused(body, body);
            return;
        }
        let mut decoded = std::mem::take(&mut self.decoded);
        if gunzip(body, &mut decoded).is_ok() {
            self.shared.refused.refused(&decoded, body);
        }
        self.decoded = decoded;
    }
}

/// Copies the pieces into `buf`; returns the length (pieces past the end are cut).
fn put(buf: &mut [u8], pieces: &[&[u8]]) -> usize {
    let mut n = 0;
    for p in pieces {
        let room = buf.get_mut(n..).unwrap_or_default();
        for (to, from) in room.iter_mut().zip(*p) {
            *to = *from;
        }
        n += p.len().min(room.len());
    }
    n
}

/// An lphc body: one JSON array (its elements) or NDJSON / concatenated JSON (its values).
pub(crate) fn count_lphc(body: &[u8]) -> Result<u64, &'static str> {
    let t = body.trim_ascii();
    match t.first() {
        None => Err("empty body (expected a JSON array or NDJSON)"),
        Some(b'[') => match scan::array_len(t) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err("expected one JSON array"),
            Err(e) => Err(e.message()),
        },
        Some(b'{') => scan::count(t)
            .map(|c| c.top_values)
            .map_err(|e| e.message()),
        Some(_) => Err("body is not a JSON array or NDJSON objects"),
    }
}

/// HEC event endpoint: concatenated envelopes, one event each.
pub(crate) fn count_hec_events(body: &[u8]) -> Result<u64, &'static str> {
    let t = body.trim_ascii();
    match t.first() {
        None => Err("no data"),
        Some(b'{') => scan::count(t)
            .map(|c| c.top_values)
            .map_err(|e| e.message()),
        Some(_) => Err("invalid data format"),
    }
}

/// HEC raw endpoint: one event per non-empty line.
pub(crate) fn count_lines(body: &[u8]) -> Result<u64, &'static str> {
    let mut n = 0u64;
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', body).chain(std::iter::once(body.len())) {
        let line = body.get(start..nl.min(body.len())).unwrap_or_default();
        if !line.trim_ascii().is_empty() {
            n += 1;
        }
        start = nl + 1;
        if start > body.len() {
            break;
        }
    }
    if n == 0 { Err("no data") } else { Ok(n) }
}

/// Inflates a gzip body (several members allowed) into `out`; Err(status) on failure.
pub(crate) fn gunzip(body: &[u8], out: &mut Vec<u8>) -> Result<(), u16> {
    use std::io::Read;
    out.clear();
    let mut dec = flate2::bufread::MultiGzDecoder::new(body).take(MAX_BODY as u64 + 1);
    match dec.read_to_end(out) {
        Ok(n) if n > MAX_BODY => Err(413),
        Ok(_) => Ok(()),
        Err(_) => Err(400),
    }
}

fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a [u8]> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name && !v.is_empty()).then_some(v.as_bytes())
    })
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Standard base64 (with or without padding); None when it is not.
fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    let s = s.strip_suffix(b"==").or(s.strip_suffix(b"=")).unwrap_or(s);
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * i);
        }
        out.push((acc >> 16) as u8);
        if chunk.len() > 2 {
            out.push((acc >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(acc as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        use Method::*;
        assert_eq!(route(Post, "/ingest"), Route::Ingest);
        assert_eq!(route(Post, "/api/v1/logs"), Route::Ingest);
        assert_eq!(route(Post, "/services/collector"), Route::HecEvent);
        assert_eq!(
            route(Post, "/services/collector/event/1.0"),
            Route::HecEvent
        );
        assert_eq!(route(Post, "/services/collector/raw/"), Route::HecRaw);
        assert_eq!(route(Post, "/services/collector/ack"), Route::HecAck);
        assert_eq!(route(Get, "/services/collector/health"), Route::HecHealth);
        assert_eq!(route(Post, "/services/other"), Route::HecNotFound);
        assert_eq!(route(Get, "/services/collector"), Route::MethodNotAllowed);
        assert_eq!(route(Get, "/stats"), Route::Stats);
        assert_eq!(route(Post, "/stats"), Route::MethodNotAllowed);
        assert_eq!(route(Post, "/_faults"), Route::FaultsSet);
        assert_eq!(route(Get, "/nope"), Route::NotFound);
        assert_eq!(route(Other, "/ingest"), Route::MethodNotAllowed);
    }

    #[test]
    fn counting_bodies() {
        assert_eq!(count_lphc(b"[]"), Ok(0));
        assert_eq!(count_lphc(br#"[{"a":1},{"b":[1,2]}]"#), Ok(2));
        assert_eq!(count_lphc(b"{\"a\":1}\n{\"a\":2}\n"), Ok(2));
        assert!(count_lphc(b"").is_err());
        assert!(count_lphc(b"hello").is_err());
        assert!(count_lphc(b"[{\"a\":1}").is_err());
        assert_eq!(
            count_hec_events(br#"{"event":{"a":1}}{"event":"x{"} {"event":2}"#),
            Ok(3)
        );
        assert!(count_hec_events(b"").is_err());
        assert_eq!(count_lines(b"a\nb\r\n\n  \nc"), Ok(3));
        assert_eq!(count_lines(b"a\n"), Ok(1));
        assert!(count_lines(b"\n\n").is_err());
    }

    #[test]
    fn base64() {
        assert_eq!(base64_decode(b"dXNlcjpzM2NyZXQ=").unwrap(), b"user:s3cret");
        assert_eq!(base64_decode(b"YQ==").unwrap(), b"a");
        assert_eq!(base64_decode(b"YWI").unwrap(), b"ab");
        assert!(base64_decode(b"!!!!").is_none());
    }

    #[test]
    fn query() {
        assert_eq!(query_param("a=1&channel=abc", "channel"), Some(&b"abc"[..]));
        assert_eq!(query_param("channel=", "channel"), None);
        assert_eq!(query_param("", "channel"), None);
    }

    #[test]
    fn gzip_round_trip() {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b"[1,2,3]").unwrap();
        let gz = e.finish().unwrap();
        let mut out = Vec::new();
        gunzip(&gz, &mut out).unwrap();
        assert_eq!(out, b"[1,2,3]");
        assert_eq!(gunzip(b"not gzip", &mut out), Err(400));
    }

    /// `MAX_BODY` + 1 zero bytes, gzipped to about 64 KB.
    fn gzip_bomb() -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let block = vec![0u8; 1 << 20];
        for _ in 0..MAX_BODY / block.len() {
            e.write_all(&block).unwrap();
        }
        e.write_all(&[0]).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_gzip_bomb_is_refused_with_413_after_max_body() {
        let bomb = gzip_bomb();
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        let mut out = Vec::new();
        assert_eq!(gunzip(&bomb, &mut out), Err(413));
        // Inflating stopped one byte past the limit.
        assert_eq!(out.len(), MAX_BODY + 1);
    }
}
