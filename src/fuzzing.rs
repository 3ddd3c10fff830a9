//! Fuzz targets: each parser and decoder that reads bytes from outside, as one function of
//! `&[u8]` that must return (never panic, never hang) whatever the bytes. `fuzz/` runs them
//! under cargo-fuzz (libFuzzer, nightly) for long local runs; `tests/fuzz_stable.rs` drives
//! the same functions on stable from the seed corpus in `fuzz/corpus/<target>/` for a fixed
//! budget per target. Where a parser reads a stream, the input's first byte chooses where it
//! is split, so every split point gets tried. The web handlers take a whole request (head and
//! body) and answer it with no server. `TARGETS` names them all, in one place.

use crate::config::secrets::Store;

/// A fuzz target: a function that must return on any bytes.
pub type Target = fn(&[u8]);

/// Every target: its name (the corpus directory and the cargo-fuzz target) and function.
pub const TARGETS: &[(&str, Target)] = &[
    ("config", config),
    ("pack", pack),
    ("scenario", scenario),
    ("http_response", http_response),
    ("hec_ack", hec_ack),
    ("sink_head", sink_head),
    ("sink_chunked", sink_chunked),
    ("sink_bodies", sink_bodies),
    ("syslog_frames", syslog_frames),
    ("acct_tags", acct_tags),
    ("status_request", status_request),
    ("panel_request", panel_request),
];

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// Split sizes drawn from the input's first byte: the rest fed in pieces of 1 ..= 64 bytes.
pub(crate) fn pieces(data: &[u8]) -> (usize, &[u8]) {
    match data.split_first() {
        Some((b, rest)) => (usize::from(*b % 64) + 1, rest),
        None => (1, data),
    }
}

/// A config file: read, checked and validated (no pack catalog, no secret store).
pub fn config(data: &[u8]) {
    let store = Store::new(std::path::PathBuf::from("/nonexistent/fuzz-store"));
    let _ = crate::config::load_str(&text(data), &store, None);
}

/// A pack file: read, checked, and when it reads, compiled and trial-rendered.
pub fn pack(data: &[u8]) {
    let src = crate::pack::PackSource {
        file: "fuzz.yaml".into(),
        text: text(data),
    };
    if let Ok(open) = crate::pack::open(&src) {
        let entities = crate::pack::entities::Entities::generate(1, &Default::default());
        let _ = open.compile(&entities, true);
    }
}

/// A scenario file: read and checked.
pub fn scenario(data: &[u8]) {
    let _ = crate::scenario::open_text("fuzz.yaml", &text(data));
}

/// The client's HTTP response reader, fed the bytes in pieces, answers consumed as they
/// complete, then the end of the stream.
pub fn http_response(data: &[u8]) {
    let (step, data) = pieces(data);
    let mut r = crate::net::http::ResponseReader::new();
    for chunk in data.chunks(step) {
        let spare = r.spare();
        let n = chunk.len().min(spare.len());
        for (to, from) in spare.iter_mut().zip(chunk) {
            *to = *from;
        }
        r.filled(n);
        if !drain(&mut r, false) {
            return;
        }
    }
    drain(&mut r, true);
}

/// Polls complete responses out of `r`; false once it refuses the stream.
fn drain(r: &mut crate::net::http::ResponseReader, eof: bool) -> bool {
    for _ in 0..1024 {
        match r.poll(eof) {
            Ok(Some((resp, used))) => {
                let _ = r.body(&resp).len();
                r.consume(used);
            }
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
    true
}

/// An HEC ack-poll answer (`{"acks":{"0":true,…}}`), asked about a few ids.
pub fn hec_ack(data: &[u8]) {
    for id in [0, 1, 7, 42, u64::MAX] {
        let _ = crate::adapter::hec_ack::is_acked(data, id);
    }
}

/// The sink's request head parser, on every prefix a stream shows it.
pub fn sink_head(data: &[u8]) {
    crate::sink::fuzz::head(data);
}

/// The sink's chunked body decoder, over a buffer growing as bytes arrive.
pub fn sink_chunked(data: &[u8]) {
    crate::sink::fuzz::chunked(data);
}

/// The sink's body readers: lphc (JSON array or NDJSON), HEC concatenated envelopes, HEC
/// raw lines, the event scanner, and gzip.
pub fn sink_bodies(data: &[u8]) {
    crate::sink::fuzz::bodies(data);
}

/// The sink's syslog deframer (octet counting and LF), fed in pieces as a stream is.
pub fn syslog_frames(data: &[u8]) {
    crate::sink::fuzz::syslog_frames(data);
}

/// The accounting-tag scanner (JSON member, RFC 5424 SD element, CEF and key=value forms).
pub fn acct_tags(data: &[u8]) {
    crate::acct::find_tags(data, |t| {
        let _ = (t.agent, t.seq);
    });
}

/// A request to the status page (an HTTP/1.1 head and a body), answered with no server:
/// checks, routes, the snapshot and control actions, and the response's headers.
pub fn status_request(data: &[u8]) {
    crate::serve::fuzz::status_request(data);
}

/// A request to the control panel, answered with no server and without launching a run:
/// checks, routes, every API handler on a scratch directory, and the response's headers.
pub fn panel_request(data: &[u8]) {
    crate::serve::fuzz::panel_request(data);
}
