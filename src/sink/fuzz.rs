//! The sink's parsers as fuzz targets (`crate::fuzzing` lists them): the request head, the
//! chunked body decoder and the syslog deframer fed as a stream feeds them (in pieces of the
//! size the input's first byte picks), and every body reader on one body. Kept here so the
//! parsers stay private to the sink.

use crate::fuzzing::pieces;

/// The request head parser on every prefix a stream would show it, until it decides.
pub fn head(data: &[u8]) {
    let (step, data) = pieces(data);
    let mut end = 0;
    while end < data.len() {
        end = (end + step).min(data.len());
        let seen = data.get(..end).unwrap_or(data);
        if !matches!(super::http::parse_head(seen), Ok(None)) {
            return;
        }
    }
}

/// The chunked decoder over a buffer growing as bytes arrive.
pub fn chunked(data: &[u8]) {
    let (step, data) = pieces(data);
    let (mut out, mut pos) = (Vec::new(), 0usize);
    let mut end = 0;
    while end < data.len() {
        end = (end + step).min(data.len());
        if !matches!(
            super::http::decode_chunked(data.get(..end).unwrap_or(data), &mut out, &mut pos),
            Ok(None)
        ) {
            return;
        }
    }
}

/// Every body reader on one body: lphc (JSON array or NDJSON), HEC concatenated envelopes,
/// HEC raw lines, the event scanner, and gzip (bounded as the sink bounds it).
pub fn bodies(data: &[u8]) {
    let _ = super::route::count_lphc(data);
    let _ = super::route::count_hec_events(data);
    let _ = super::route::count_lines(data);
    let _ = super::scan::count(data);
    let _ = super::scan::array_len(data);
    let mut out = Vec::new();
    let _ = super::route::gunzip(data, &mut out);
}

/// The syslog deframer (octet counting and LF) fed in pieces, then the end of the stream.
pub fn syslog_frames(data: &[u8]) {
    let (step, data) = pieces(data);
    let mut d = super::syslog::Deframer::default();
    let mut buf: Vec<u8> = Vec::new();
    for chunk in data.chunks(step) {
        buf.extend_from_slice(chunk);
        let used = d.feed(&buf, &mut |_| {});
        buf.drain(..used.min(buf.len()));
    }
    d.finish(&buf, &mut |_| {});
}
