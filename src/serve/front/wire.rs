//! The HTTP/1.1 wire format of the web front: a request head parsed with httparse into the
//! `guard::Head` the checks read, with its framing judged before a byte of body is read (how
//! long the body says it is, whether the connection may stay open, whether the client waits
//! for `100 Continue`), and every way a head can lie about its body refused: more than one
//! `Content-Length`, a length that is not plain digits, any `Transfer-Encoding` (no chunked
//! body is ever decoded), an `Expect` other than `100-continue`. A response is written as
//! bytes here too.

use crate::serve::guard::{Head, Verb};

/// The longest request head taken (request line and headers).
pub const MAX_HEAD_BYTES: usize = 32 * 1024;

/// The most header lines a request may have.
pub const MAX_HEADERS: usize = 64;

/// A head that is complete and well formed.
#[derive(Debug)]
pub struct Request<'b> {
    pub head: Head<'b>,
    /// Bytes of the head, its blank line included.
    pub head_len: usize,
    /// The body's length as `Content-Length` declares it (0 without one); `u64::MAX` when
    /// the digits are more than a `u64` holds.
    pub body_len: u64,
    /// The client may send another request on this connection after this one.
    pub keep_alive: bool,
    /// The client waits for `100 Continue` before it sends the body.
    pub expect_continue: bool,
}

/// A head refused: the status and why (the connection is closed after the answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bad {
    pub status: u16,
    pub message: &'static str,
}

const fn bad(status: u16, message: &'static str) -> Bad {
    Bad { status, message }
}

/// What the bytes at the start of a connection's buffer come to.
#[derive(Debug)]
pub enum Parsed<'b> {
    /// The head is not complete yet (and not over `MAX_HEAD_BYTES`).
    Partial,
    Done(Request<'b>),
    Bad(Bad),
}

/// Parses the head at the start of `buf`. `headers` is httparse's scratch space.
pub fn parse<'b>(buf: &'b [u8], headers: &'b mut [httparse::Header<'b>]) -> Parsed<'b> {
    let too_large = bad(431, "the request head is over 32 KiB or 64 header lines");
    let mut req = httparse::Request::new(headers);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
            return Parsed::Bad(too_large);
        }
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => return Parsed::Bad(too_large),
        Err(_) => return Parsed::Bad(bad(400, "the request head is malformed")),
    };
    if head_len > MAX_HEAD_BYTES {
        return Parsed::Bad(too_large);
    }
    let (Some(method), Some(path), Some(version)) = (req.method, req.path, req.version) else {
        return Parsed::Bad(bad(400, "the request line is malformed"));
    };
    match framing(req.headers, version) {
        Ok((pairs, f)) => Parsed::Done(Request {
            head: Head::from_parts(Verb::named(method), path, pairs),
            head_len,
            body_len: f.body_len,
            keep_alive: f.keep_alive,
            expect_continue: f.expect_continue,
        }),
        Err(b) => Parsed::Bad(b),
    }
}

struct Framing {
    body_len: u64,
    keep_alive: bool,
    expect_continue: bool,
}

/// The headers as text pairs and what they say about the body and the connection.
#[allow(clippy::type_complexity)]
fn framing<'b>(
    headers: &[httparse::Header<'b>],
    version: u8,
) -> Result<(Vec<(&'b str, &'b str)>, Framing), Bad> {
    let mut pairs = Vec::with_capacity(headers.len());
    let mut length: Option<u64> = None;
    let mut f = Framing {
        body_len: 0,
        // HTTP/1.0 closes after each answer; 1.1 keeps the connection unless told not to.
        keep_alive: version == 1,
        expect_continue: false,
    };
    for h in headers {
        let value = text(h.value).ok_or(bad(400, "a header value is not visible ASCII"))?;
        let name = h.name;
        if name.eq_ignore_ascii_case("Content-Length") {
            if length.is_some() {
                return Err(bad(400, "more than one Content-Length"));
            }
            length = Some(content_length(value)?);
        } else if name.eq_ignore_ascii_case("Transfer-Encoding") {
            return Err(bad(
                411,
                "a body must be sent with a Content-Length (Transfer-Encoding is not taken)",
            ));
        } else if name.eq_ignore_ascii_case("Expect") {
            if !value.eq_ignore_ascii_case("100-continue") {
                return Err(bad(417, "the only expectation taken is 100-continue"));
            }
            f.expect_continue = true;
        } else if name.eq_ignore_ascii_case("Connection")
            && value
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("close"))
        {
            f.keep_alive = false;
        }
        pairs.push((name, value));
    }
    f.body_len = length.unwrap_or(0);
    Ok((pairs, f))
}

/// A header value as text: visible ASCII, spaces and tabs only, trimmed.
fn text(v: &[u8]) -> Option<&str> {
    if !v.iter().all(|&b| b == b'\t' || (b' '..=b'~').contains(&b)) {
        return None;
    }
    std::str::from_utf8(v).ok().map(str::trim)
}

/// Plain decimal digits; more than a `u64` holds is `u64::MAX` (over every limit).
fn content_length(v: &str) -> Result<u64, Bad> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(400, "Content-Length is not a decimal number"));
    }
    Ok(v.parse().unwrap_or(u64::MAX))
}

/// The reason phrase of a status this server sends.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// The interim answer to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Appends the response as it goes on the wire: status line, headers (one that could not be
/// sent as it is, holding a control byte, is left out), `Content-Length`, `Connection: close`
/// when the connection ends after it, and the body.
pub fn write(status: u16, headers: &[(&str, String)], body: &[u8], close: bool, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let _ = write!(out, "HTTP/1.1 {status} {}\r\n", reason(status));
    let sendable = |s: &str| s.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
    for (name, value) in headers {
        if !name.is_empty() && sendable(name) && !name.contains(' ') && sendable(value) {
            let _ = write!(out, "{name}: {value}\r\n");
        }
    }
    let _ = write!(out, "Content-Length: {}\r\n", body.len());
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::guard::Field;

    fn parsed(raw: &str) -> Result<(u64, bool, bool, usize), (u16, &'static str)> {
        let raw = raw.replace('\n', "\r\n");
        let mut h = [httparse::EMPTY_HEADER; MAX_HEADERS];
        match parse(raw.as_bytes(), &mut h) {
            Parsed::Done(r) => Ok((r.body_len, r.keep_alive, r.expect_continue, r.head_len)),
            Parsed::Partial => Err((0, "partial")),
            Parsed::Bad(b) => Err((b.status, b.message)),
        }
    }

    #[test]
    fn heads_and_their_framing() {
        let get = "GET /x HTTP/1.1\nHost: a\n\n";
        assert_eq!(parsed(get), Ok((0, true, false, get.len() + 3)));
        assert_eq!(
            parsed("POST / HTTP/1.1\nContent-Length: 12\n\n").map(|p| p.0),
            Ok(12)
        );
        assert_eq!(
            parsed("GET / HTTP/1.0\n\n").map(|p| p.1),
            Ok(false),
            "1.0 closes"
        );
        assert_eq!(
            parsed("GET / HTTP/1.1\nConnection: keep-alive, Close\n\n").map(|p| p.1),
            Ok(false)
        );
        assert_eq!(
            parsed("POST / HTTP/1.1\nExpect: 100-Continue\nContent-Length: 1\n\n").map(|p| p.2),
            Ok(true)
        );
        assert_eq!(parsed("GET / HTTP/1.1\nHost: a\n"), Err((0, "partial")));
    }

    #[test]
    fn every_lie_about_a_body_is_refused() {
        let status = |raw: &str| parsed(raw).map(|_| 0).unwrap_or_else(|e| e.0);
        for (raw, want) in [
            (
                "POST / HTTP/1.1\nContent-Length: 1\nContent-Length: 1\n\n",
                400,
            ),
            (
                "POST / HTTP/1.1\nContent-Length: 1\ncontent-length: 2\n\n",
                400,
            ),
            ("POST / HTTP/1.1\nContent-Length: -1\n\n", 400),
            ("POST / HTTP/1.1\nContent-Length: +5\n\n", 400),
            ("POST / HTTP/1.1\nContent-Length: 0x10\n\n", 400),
            ("POST / HTTP/1.1\nContent-Length: 1 2\n\n", 400),
            ("POST / HTTP/1.1\nContent-Length: \n\n", 400),
            ("POST / HTTP/1.1\nContent-Length: 1,1\n\n", 400),
            ("POST / HTTP/1.1\nTransfer-Encoding: chunked\n\n", 411),
            (
                "POST / HTTP/1.1\nTransfer-Encoding: chunked\nContent-Length: 3\n\n",
                411,
            ),
            ("POST / HTTP/1.1\nTransfer-Encoding: identity\n\n", 411),
            ("POST / HTTP/1.1\nExpect: 200-ok\n\n", 417),
            ("GET / HTTP/1.1\nX: caf\u{e9}\n\n", 400),
            ("GET / HTTP/2.0\n\n", 400),
            ("GET /\n\n", 400),
        ] {
            assert_eq!(status(raw), want, "{raw:?}");
        }
        // Longer than a u64: over every limit, never wrapped to a small number.
        assert_eq!(
            parsed("POST / HTTP/1.1\nContent-Length: 99999999999999999999999\n\n").map(|p| p.0),
            Ok(u64::MAX)
        );
        assert_eq!(
            parsed("POST / HTTP/1.1\nContent-Length: 000000000000000000000000012\n\n").map(|p| p.0),
            Ok(12)
        );
    }

    #[test]
    fn heads_are_bounded() {
        let long = format!("GET / HTTP/1.1\nX: {}\n\n", "a".repeat(MAX_HEAD_BYTES));
        assert_eq!(parsed(&long).unwrap_err().0, 431);
        let unfinished = format!("GET / HTTP/1.1\nX: {}", "a".repeat(MAX_HEAD_BYTES));
        assert_eq!(parsed(&unfinished).unwrap_err().0, 431);
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X{i}: 1\n")).collect();
        assert_eq!(
            parsed(&format!("GET / HTTP/1.1\n{many}\n")).unwrap_err().0,
            431
        );
    }

    #[test]
    fn the_head_the_checks_read() {
        let raw = "POST /a?b HTTP/1.1\r\nHost: h:1\r\nhost: h:2\r\nOrigin: http://o\r\n\r\n";
        let mut h = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let Parsed::Done(r) = parse(raw.as_bytes(), &mut h) else {
            panic!()
        };
        assert_eq!((r.head.verb, r.head.path), (Verb::Post, "/a?b"));
        assert_eq!(r.head.host, Field::Many);
        assert_eq!(r.head.origin, Field::One("http://o"));
    }

    #[test]
    fn responses_on_the_wire() {
        let mut out = Vec::new();
        let headers = [
            ("Content-Type", "text/plain".to_string()),
            ("X-Bad", "a\r\nInjected: 1".to_string()),
        ];
        write(404, &headers, b"no", true, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\
             Connection: close\r\n\r\nno"
        );
    }
}
