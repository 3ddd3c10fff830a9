//! HTTP/1.1 on the sink's side, as pure functions over byte buffers (no sockets): reading a
//! request head with httparse into the few facts the sink needs, finding where the body ends
//! (Content-Length, or chunked decoded into a scratch buffer), and writing responses. The
//! connection code in `worker.rs` calls these with whatever bytes have arrived so far, so
//! every function here answers "not yet" for a prefix and is tested with odd splits.

/// Largest request head (request line, headers and the blank line; also a chunked body's
/// trailers); a longer one is refused with 431.
pub const MAX_HEAD: usize = 64 * 1024;
/// Largest body: as declared by Content-Length, as decoded from chunks, and as inflated from
/// gzip (the inflating stops one byte past it); a larger one is refused with 413.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// Most header fields in a request head; more are refused with 431.
pub const MAX_HEADERS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    Empty,
    Length(usize),
    Chunked,
}

/// What the sink reads from a request head. Slices borrow from the read buffer.
#[derive(Clone, Debug)]
pub struct Head<'a> {
    pub method: Method,
    /// The path without the query.
    pub path: &'a str,
    pub query: &'a str,
    /// Bytes of the head, up to and including the blank line.
    pub len: usize,
    pub framing: Framing,
    pub gzip: bool,
    /// A Content-Encoding other than gzip or identity.
    pub unknown_encoding: bool,
    /// The client asked to close after this request (or spoke HTTP/1.0 without keep-alive).
    pub close: bool,
    pub expect_continue: bool,
    pub authorization: Option<&'a [u8]>,
    pub api_key: Option<&'a [u8]>,
    /// `X-Splunk-Request-Channel`
    pub channel: Option<&'a [u8]>,
}

/// Why a head is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Not HTTP, or a header the sink cannot frame (400).
    Malformed(&'static str),
    /// Over `MAX_HEAD` or `MAX_HEADERS` (431).
    TooLarge,
    /// A Content-Length over `MAX_BODY` (413).
    BodyTooLarge,
}

/// Parses the head at the start of `buf`: `Ok(None)` while it is incomplete.
pub fn parse_head(buf: &[u8]) -> Result<Option<Head<'_>>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > MAX_HEAD {
                Err(HeadError::TooLarge)
            } else {
                Ok(None)
            };
        }
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooLarge),
        Err(_) => return Err(HeadError::Malformed("malformed HTTP request")),
    };
    if len > MAX_HEAD {
        return Err(HeadError::TooLarge);
    }
    let method = match req.method.unwrap_or("") {
        "GET" => Method::Get,
        "POST" | "PUT" => Method::Post,
        _ => Method::Other,
    };
    let target = req.path.unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let http10 = req.version == Some(0);
    let mut h = Head {
        method,
        path,
        query,
        len,
        framing: Framing::Empty,
        gzip: false,
        unknown_encoding: false,
        close: http10,
        expect_continue: false,
        authorization: None,
        api_key: None,
        channel: None,
    };
    let mut length: Option<usize> = None;
    let mut chunked = false;
    for hd in req.headers.iter() {
        let v = hd.value;
        let name = hd.name;
        if name.eq_ignore_ascii_case("content-length") {
            let n = parse_length(v).ok_or(HeadError::Malformed("bad Content-Length"))?;
            if length.is_some_and(|l| l != n) {
                return Err(HeadError::Malformed("conflicting Content-Length headers"));
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            for coding in v.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if coding.eq_ignore_ascii_case(b"chunked") {
                    chunked = true;
                } else if !coding.is_empty() && !coding.eq_ignore_ascii_case(b"identity") {
                    return Err(HeadError::Malformed("unsupported Transfer-Encoding"));
                }
            }
        } else if name.eq_ignore_ascii_case("content-encoding") {
            let v = v.trim_ascii();
            if v.eq_ignore_ascii_case(b"gzip") || v.eq_ignore_ascii_case(b"x-gzip") {
                h.gzip = true;
            } else if !v.is_empty() && !v.eq_ignore_ascii_case(b"identity") {
                h.unknown_encoding = true;
            }
        } else if name.eq_ignore_ascii_case("connection") {
            for t in v.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if t.eq_ignore_ascii_case(b"close") {
                    h.close = true;
                } else if t.eq_ignore_ascii_case(b"keep-alive") {
                    h.close = false;
                }
            }
        } else if name.eq_ignore_ascii_case("expect") {
            h.expect_continue = v.trim_ascii().eq_ignore_ascii_case(b"100-continue");
        } else if name.eq_ignore_ascii_case("authorization") {
            h.authorization = Some(v.trim_ascii());
        } else if name.eq_ignore_ascii_case("x-api-key") {
            h.api_key = Some(v.trim_ascii());
        } else if name.eq_ignore_ascii_case("x-splunk-request-channel") {
            h.channel = Some(v.trim_ascii());
        }
    }
    h.framing = if chunked {
        Framing::Chunked
    } else {
        match length {
            Some(n) if n > MAX_BODY => return Err(HeadError::BodyTooLarge),
            Some(0) | None => Framing::Empty,
            Some(n) => Framing::Length(n),
        }
    };
    Ok(Some(h))
}

fn parse_length(v: &[u8]) -> Option<usize> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 15 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter().try_fold(0usize, |n, &d| {
        n.checked_mul(10)?.checked_add(usize::from(d - b'0'))
    })
}

/// Why a chunked body is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkError {
    Malformed,
    TooLarge,
}

/// Decodes a chunked body at the start of `buf` into `out`, resumably: `pos` is how far into
/// `buf` earlier calls got (0 and an empty `out` for a new body); each call appends the chunks
/// that are complete now and moves `pos` past them, so a large body arriving in many reads is
/// decoded once, not once per read. Returns the bytes of `buf` the body spans once complete
/// (trailers included), `Ok(None)` while incomplete.
pub fn decode_chunked(
    buf: &[u8],
    out: &mut Vec<u8>,
    pos: &mut usize,
) -> Result<Option<usize>, ChunkError> {
    loop {
        let at = *pos;
        let (hdr, size) = match httparse::parse_chunk_size(buf.get(at..).unwrap_or_default()) {
            Ok(httparse::Status::Complete(x)) => x,
            Ok(httparse::Status::Partial) => {
                return if buf.len() - at > 1024 {
                    Err(ChunkError::Malformed)
                } else {
                    Ok(None)
                };
            }
            Err(_) => return Err(ChunkError::Malformed),
        };
        let data = at + hdr;
        if size == 0 {
            // Trailers (usually none), then the blank line.
            let rest = buf.get(data..).unwrap_or_default();
            if rest.starts_with(b"\r\n") {
                return Ok(Some(data + 2));
            }
            return match memchr::memmem::find(rest, b"\r\n\r\n") {
                Some(i) => Ok(Some(data + i + 4)),
                None if rest.len() > MAX_HEAD => Err(ChunkError::Malformed),
                None => Ok(None),
            };
        }
        let size = usize::try_from(size).map_err(|_| ChunkError::TooLarge)?;
        if size > MAX_BODY || out.len() + size > MAX_BODY {
            return Err(ChunkError::TooLarge);
        }
        let end = data + size;
        if buf.len() < end + 2 {
            return Ok(None);
        }
        if buf.get(end..end + 2) != Some(&b"\r\n"[..]) {
            return Err(ChunkError::Malformed);
        }
        out.extend_from_slice(buf.get(data..end).unwrap_or_default());
        *pos = end + 2;
    }
}

/// The reason phrase of the codes the sink sends.
pub fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// Appends a complete response with a JSON body.
pub fn write_response(
    out: &mut Vec<u8>,
    code: u16,
    body: &[u8],
    retry_after_s: Option<u32>,
    close: bool,
) {
    let mut num = itoa::Buffer::new();
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(num.format(code).as_bytes());
    out.push(b' ');
    out.extend_from_slice(reason(code).as_bytes());
    out.extend_from_slice(b"\r\nContent-Type: application/json\r\nContent-Length: ");
    out.extend_from_slice(num.format(body.len()).as_bytes());
    if let Some(s) = retry_after_s {
        out.extend_from_slice(b"\r\nRetry-After: ");
        out.extend_from_slice(num.format(s).as_bytes());
    }
    if close {
        out.extend_from_slice(b"\r\nConnection: close");
    }
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body);
}

/// The interim response to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    const REQ: &[u8] = b"POST /ingest?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nX-API-Key: k\r\nContent-Encoding: gzip\r\n\r\nhello";

    #[test]
    fn head_in_every_split() {
        let head_len = REQ.len() - 5;
        for cut in 0..REQ.len() {
            match parse_head(&REQ[..cut]) {
                Ok(None) => assert!(cut < head_len, "cut {cut}"),
                Ok(Some(h)) => {
                    assert!(cut >= head_len);
                    assert_eq!(h.len, head_len);
                    assert_eq!(h.method, Method::Post);
                    assert_eq!((h.path, h.query), ("/ingest", "x=1"));
                    assert_eq!(h.framing, Framing::Length(5));
                    assert!(h.gzip && !h.close);
                    assert_eq!(h.api_key, Some(&b"k"[..]));
                }
                Err(e) => panic!("cut {cut}: {e:?}"),
            }
        }
    }

    #[test]
    fn head_errors() {
        assert!(matches!(
            parse_head(b"\x00\x01garbage\r\n\r\n"),
            Err(HeadError::Malformed(_))
        ));
        let big = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert_eq!(
            parse_head(big.as_bytes()).unwrap_err(),
            HeadError::BodyTooLarge
        );
        assert!(matches!(
            parse_head(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            Err(HeadError::Malformed(_))
        ));
        assert!(matches!(
            parse_head(b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
            Err(HeadError::Malformed(_))
        ));
        let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
        long.resize(MAX_HEAD + 10, b'a');
        assert_eq!(parse_head(&long).unwrap_err(), HeadError::TooLarge);
        // A complete head over the limit, and one header field too many.
        let mut head = b"GET / HTTP/1.1\r\nX: ".to_vec();
        head.resize(MAX_HEAD, b'a');
        head.extend_from_slice(b"\r\n\r\n");
        assert_eq!(parse_head(&head).unwrap_err(), HeadError::TooLarge);
        let fields = |n: usize| {
            let mut h = b"GET / HTTP/1.1\r\n".to_vec();
            for i in 0..n {
                h.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
            }
            h.extend_from_slice(b"\r\n");
            h
        };
        assert!(matches!(parse_head(&fields(MAX_HEADERS)), Ok(Some(_))));
        assert_eq!(
            parse_head(&fields(MAX_HEADERS + 1)).unwrap_err(),
            HeadError::TooLarge
        );
    }

    #[test]
    fn connection_close_and_http10() {
        let h = parse_head(b"GET /stats HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(h.close && h.framing == Framing::Empty);
        let h = parse_head(b"GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert!(h.close);
        let h = parse_head(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!h.close);
    }

    #[test]
    fn chunked_in_every_split() {
        let body = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";
        let total = body.len() - 4;
        // From scratch on every prefix, and resumed as bytes arrive one at a time.
        let (mut resumed, mut rpos) = (Vec::new(), 0);
        for cut in 0..body.len() {
            let (mut out, mut pos) = (Vec::new(), 0);
            for (o, p) in [(&mut out, &mut pos), (&mut resumed, &mut rpos)] {
                match decode_chunked(&body[..cut], o, p) {
                    Ok(None) => assert!(cut < total, "cut {cut}"),
                    Ok(Some(n)) => {
                        assert_eq!(n, total);
                        assert_eq!(o.as_slice(), b"hello, world");
                    }
                    Err(e) => panic!("cut {cut}: {e:?}"),
                }
            }
        }
        let bad = |b: &[u8]| decode_chunked(b, &mut Vec::new(), &mut 0);
        assert_eq!(bad(b"3\r\nabcX\r\n0\r\n\r\n"), Err(ChunkError::Malformed));
        assert_eq!(bad(b"zz\r\n"), Err(ChunkError::Malformed));
        assert_eq!(bad(b"ffffffffff\r\n"), Err(ChunkError::TooLarge));
        // Chunks adding up past the limit, refused before the last one arrives.
        let (mut out, mut pos) = (vec![0u8; MAX_BODY - 2], 0);
        assert_eq!(
            decode_chunked(b"3\r\n", &mut out, &mut pos),
            Err(ChunkError::TooLarge)
        );
    }

    #[test]
    fn response_bytes() {
        let mut out = Vec::new();
        write_response(&mut out, 429, b"{}", Some(2), true);
        assert_eq!(
            out,
            b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: 2\r\nRetry-After: 2\r\nConnection: close\r\n\r\n{}"
        );
    }
}
