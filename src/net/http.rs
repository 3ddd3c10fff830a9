//! HTTP/1.1 client pieces that know nothing of event formats: writing a request head into a
//! reused buffer, and reading responses incrementally (status and headers with `httparse`,
//! bodies by Content-Length, chunked encoding or until the close) from bytes that arrive in
//! any split. One `ResponseReader` per connection; it allocates only to grow its buffer, and
//! never past a cap (`MAX_HEAD` plus the body cap): an answer over it, or one whose length
//! lies, is an error that keeps the status when the first line gave one (`ReadError`), so
//! a 2xx the engine cannot read is known as one.

use crate::bytes::write_u64;

/// What the adapter needs from one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Seconds from a `Retry-After: N` header (HTTP-dates are ignored).
    pub retry_after_s: Option<u32>,
    /// The server asked to close the connection after this response.
    pub close: bool,
    /// The body carries a content coding (`Content-Encoding` other than `identity`, or a
    /// transfer coding besides `chunked`): its bytes are not the answer's text.
    pub encoded: bool,
    /// Start and end of the body in the reader's buffer (valid until the next `consume`).
    pub body: (usize, usize),
}

/// Why an answer cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// No status can be read: the bytes are not an HTTP/1.x response.
    Malformed(String),
    /// The status line said `status`, but the rest of the answer cannot be read: a head
    /// or body over the cap, a length that lies or contradicts itself, a broken chunked
    /// encoding, or the connection closed before the end. For a 2xx this is "answered
    /// 2xx, unreadable": the collector said yes, and nothing more can be known.
    Unreadable { status: u16, why: &'static str },
}

impl ReadError {
    /// The status the answer's first line gave, when it could be read.
    pub fn status(&self) -> Option<u16> {
        match self {
            ReadError::Malformed(_) => None,
            ReadError::Unreadable { status, .. } => Some(*status),
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Malformed(m) => write!(f, "not an HTTP answer: {m}"),
            ReadError::Unreadable { status, why } => {
                write!(f, "answered {status}, unreadable: {why}")
            }
        }
    }
}

/// The most bytes a response head may take.
pub const MAX_HEAD: usize = 64 * 1024;
/// The most bytes a response body may take by default (chunk framing included).
pub const MAX_BODY: usize = 16 * 1024 * 1024;
/// The largest body cap a reader can be given (`ResponseReader::set_max_body`).
pub const MAX_BODY_CEILING: usize = 256 * 1024 * 1024;
/// A buffer that grew past this for one answer is given back once that answer is handled.
const KEEP_BUF: usize = 1024 * 1024;
const START_BUF: usize = 16 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BodyKind {
    Length(usize),
    Chunked,
    /// No length: the body runs until the server closes (HTTP/1.0 style).
    UntilClose,
}

/// What the head of an answer says.
struct Head {
    len: usize,
    status: u16,
    kind: BodyKind,
    close: bool,
    encoded: bool,
    retry_after_s: Option<u32>,
}

/// Reads responses from a byte stream. Feed bytes with `spare`/`filled`, then `poll`. The
/// buffer never grows past the head cap plus the body cap: an answer that would need more
/// is an error, never a larger buffer.
pub struct ResponseReader {
    buf: Vec<u8>,
    /// Bytes of `buf` that hold data.
    len: usize,
    /// Decoded chunked body (chunked responses only), and where in `buf` the next chunk's
    /// size line starts (0: not begun), so bytes arriving in pieces are decoded once.
    dechunked: Vec<u8>,
    chunk_at: usize,
    max_body: usize,
    /// Answers to HEAD: no body, whatever Content-Length says.
    pub bodiless: bool,
}

impl Default for ResponseReader {
    fn default() -> Self {
        ResponseReader::new()
    }
}

impl ResponseReader {
    pub fn new() -> Self {
        ResponseReader {
            buf: vec![0; START_BUF],
            len: 0,
            dechunked: Vec::new(),
            chunk_at: 0,
            max_body: MAX_BODY,
            bodiless: false,
        }
    }

    /// Sets the body cap (`_bulk` answers grow with the batch), within `MAX_BODY` and
    /// `MAX_BODY_CEILING`.
    pub fn set_max_body(&mut self, n: usize) {
        self.max_body = n.clamp(MAX_BODY, MAX_BODY_CEILING);
    }

    /// The most bytes the buffer holds.
    fn cap(&self) -> usize {
        MAX_HEAD + self.max_body
    }

    /// Whether the buffer holds all it may: reading more would pass the cap (`poll` then
    /// says what is wrong with the answer).
    pub fn is_full(&self) -> bool {
        self.len >= self.cap()
    }

    /// Spare room to read into (grows when full, up to the cap; empty at the cap).
    pub fn spare(&mut self) -> &mut [u8] {
        if self.len == self.buf.len() && self.len < self.cap() {
            let n = (self.buf.len() * 2).clamp(START_BUF, self.cap());
            self.buf.resize(n, 0);
        }
        self.buf.get_mut(self.len..).unwrap_or_default()
    }

    /// Marks `n` bytes of `spare()` as read.
    pub fn filled(&mut self, n: usize) {
        self.len = (self.len + n).min(self.buf.len());
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes read and not consumed (a protocol that parses its own frames, RELP).
    pub fn data(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.chunk_at = 0;
        self.dechunked.clear();
        self.shrink();
    }

    /// The body of the response `poll` returned.
    pub fn body(&self, r: &Response) -> &[u8] {
        if r.body.1 > self.buf.len() {
            // Chunked bodies are decoded aside.
            return &self.dechunked;
        }
        self.buf.get(r.body.0..r.body.1).unwrap_or_default()
    }

    /// A complete response, if the buffer holds one; `consume` it once handled. `eof`
    /// says the peer closed, which completes an until-close body and makes any other
    /// incomplete answer unreadable. Interim (1xx) answers are skipped.
    pub fn poll(&mut self, eof: bool) -> Result<Option<(Response, usize)>, ReadError> {
        loop {
            let Some(head) = self.head(eof)? else {
                return Ok(None);
            };
            if (100..200).contains(&head.status) && head.status != 101 {
                self.consume(head.len);
                continue;
            }
            let done = self.body_of(&head, eof)?;
            if done.is_none() && self.is_full() {
                // Nothing more can be read into the buffer, and the answer is not all there.
                return Err(ReadError::Unreadable {
                    status: head.status,
                    why: "the answer is over the cap",
                });
            }
            return Ok(done);
        }
    }

    /// The head at the front of the buffer, once it is all there.
    fn head(&self, eof: bool) -> Result<Option<Head>, ReadError> {
        let data = self.data();
        let mut headers = [httparse::EMPTY_HEADER; 48];
        let mut resp = httparse::Response::new(&mut headers);
        let unreadable = |why| match status_line(data) {
            Some(status) => ReadError::Unreadable { status, why },
            None => ReadError::Malformed(why.into()),
        };
        let len = match resp.parse(data) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                return if data.len() > MAX_HEAD {
                    Err(unreadable("the head is over the cap"))
                } else if eof && !data.is_empty() {
                    Err(unreadable(
                        "the connection closed in the middle of the head",
                    ))
                } else {
                    Ok(None)
                };
            }
            Err(httparse::Error::TooManyHeaders) => return Err(unreadable("too many headers")),
            Err(e) => {
                return Err(match status_line(data) {
                    Some(status) => ReadError::Unreadable {
                        status,
                        why: "a header is malformed",
                    },
                    None => ReadError::Malformed(e.to_string()),
                });
            }
        };
        let status = resp.code.unwrap_or(0);
        let bad = |why| ReadError::Unreadable { status, why };
        let mut head = Head {
            len,
            status,
            kind: BodyKind::UntilClose,
            close: resp.version == Some(0),
            encoded: false,
            retry_after_s: None,
        };
        let mut length: Option<usize> = None;
        let mut coded = false;
        for h in resp.headers.iter() {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-length") {
                let n = std::str::from_utf8(h.value)
                    .ok()
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|s| s.parse::<usize>().ok())
                    .ok_or_else(|| bad("its Content-Length is not a number"))?;
                if length.is_some_and(|l| l != n) {
                    return Err(bad("it has two different Content-Lengths"));
                }
                length = Some(n);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                coded = true;
                let last = h.value.rsplit(|b| *b == b',').next().unwrap_or_default();
                if last.trim_ascii().eq_ignore_ascii_case(b"chunked") {
                    head.kind = BodyKind::Chunked;
                    head.encoded |= h.value.contains(&b',');
                } else {
                    head.kind = BodyKind::UntilClose;
                    head.encoded = true;
                }
            } else if name.eq_ignore_ascii_case("content-encoding") {
                let v = h.value.trim_ascii();
                head.encoded |= !(v.is_empty() || v.eq_ignore_ascii_case(b"identity"));
            } else if name.eq_ignore_ascii_case("connection") {
                if h.value.windows(5).any(|w| w.eq_ignore_ascii_case(b"close")) {
                    head.close = true;
                } else if h
                    .value
                    .windows(10)
                    .any(|w| w.eq_ignore_ascii_case(b"keep-alive"))
                {
                    head.close = false;
                }
            } else if name.eq_ignore_ascii_case("retry-after") {
                head.retry_after_s = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok());
            }
        }
        // 1xx, 204 and 304 have no body, nor has any answer to HEAD.
        if self.bodiless || (100..200).contains(&status) || status == 204 || status == 304 {
            head.kind = BodyKind::Length(0);
            return Ok(Some(head));
        }
        match (length, coded) {
            // Both: a message that could be read two ways (RFC 9112 §6.3 says to treat it
            // as an error).
            (Some(_), true) => return Err(bad("it has both Content-Length and Transfer-Encoding")),
            (Some(n), false) if n > self.max_body => {
                return Err(bad("its Content-Length is over the body cap"));
            }
            (Some(n), false) => head.kind = BodyKind::Length(n),
            (None, _) => {}
        }
        Ok(Some(head))
    }

    /// The body after `h`, once it is all there.
    fn body_of(&mut self, h: &Head, eof: bool) -> Result<Option<(Response, usize)>, ReadError> {
        let bad = |why| ReadError::Unreadable {
            status: h.status,
            why,
        };
        let resp = |body, close| Response {
            status: h.status,
            retry_after_s: h.retry_after_s,
            close,
            encoded: h.encoded,
            body,
        };
        match h.kind {
            BodyKind::Length(n) => {
                if self.len >= h.len + n {
                    Ok(Some((resp((h.len, h.len + n), h.close), h.len + n)))
                } else if eof {
                    Err(bad("the connection closed before the body's end"))
                } else {
                    Ok(None)
                }
            }
            BodyKind::UntilClose => {
                if self.len - h.len > self.max_body {
                    Err(bad("its body (read until the close) is over the body cap"))
                } else if eof {
                    Ok(Some((resp((h.len, self.len), true), self.len)))
                } else {
                    Ok(None)
                }
            }
            BodyKind::Chunked => match self.dechunk(h.len, h.status)? {
                Some(end) => Ok(Some((resp((usize::MAX, usize::MAX), h.close), end))),
                None if self.len - h.len > self.max_body => {
                    Err(bad("its chunked body is over the body cap"))
                }
                None if eof => Err(bad("the connection closed before the last chunk")),
                None => Ok(None),
            },
        }
    }

    /// Decodes the chunks that have arrived since the last call; the end of the answer
    /// once the last chunk and the trailers are in. Chunk framing counts toward the cap.
    fn dechunk(&mut self, head_len: usize, status: u16) -> Result<Option<usize>, ReadError> {
        let bad = |why| ReadError::Unreadable { status, why };
        if self.chunk_at < head_len {
            self.chunk_at = head_len;
            self.dechunked.clear();
        }
        let data = self.buf.get(..self.len).unwrap_or_default();
        loop {
            let pos = self.chunk_at;
            let rest = data.get(pos..).unwrap_or_default();
            let Some(line_end) = memchr::memmem::find(rest, b"\r\n") else {
                return if rest.len() > 4096 {
                    Err(bad("a chunk size line is over 4 KiB"))
                } else {
                    Ok(None)
                };
            };
            let line = rest.get(..line_end).unwrap_or_default();
            let size_text = line
                .split(|b| *b == b';')
                .next()
                .unwrap_or_default()
                .trim_ascii();
            let size = std::str::from_utf8(size_text)
                .ok()
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|s| usize::from_str_radix(s, 16).ok())
                .ok_or_else(|| bad("a chunk size is not a hex number"))?;
            // Compared without adding: a chunk size near usize::MAX must not wrap.
            if size > self.max_body.saturating_sub(self.dechunked.len()) {
                return Err(bad("its chunked body is over the body cap"));
            }
            let start = pos + line_end + 2;
            if size == 0 {
                // Trailers end with an empty line.
                let tail = data.get(start..).unwrap_or_default();
                return match find_trailer_end(tail) {
                    Some(end) => Ok(Some(start + end)),
                    None if tail.len() > MAX_HEAD => Err(bad("its trailers are over the cap")),
                    None => Ok(None),
                };
            }
            let Some(chunk) = data.get(start..start + size) else {
                return Ok(None);
            };
            match data.get(start + size..start + size + 2) {
                None => return Ok(None),
                Some(b"\r\n") => {}
                Some(_) => return Err(bad("a chunk is longer than its size says")),
            }
            self.dechunked.extend_from_slice(chunk);
            self.chunk_at = start + size + 2;
        }
    }

    /// Drops the first `n` bytes (a handled response), keeping any that follow.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.buf.copy_within(n..self.len, 0);
        self.len -= n;
        self.chunk_at = 0;
        self.dechunked.clear();
        self.shrink();
    }

    /// Gives back what one large answer made the buffers grow to.
    fn shrink(&mut self) {
        if self.buf.len() > KEEP_BUF && self.len <= START_BUF {
            self.buf.truncate(START_BUF);
            self.buf.shrink_to_fit();
        }
        if self.dechunked.capacity() > KEEP_BUF {
            self.dechunked = Vec::new();
        }
    }
}

/// The status of `HTTP/1.x NNN` at the start of `data` (after any empty lines, as httparse
/// skips them), when the line says one.
pub fn status_line(data: &[u8]) -> Option<u16> {
    let start = data.iter().position(|b| !matches!(b, b'\r' | b'\n'))?;
    let rest = data.get(start..)?.strip_prefix(b"HTTP/1.")?;
    let (&minor, rest) = rest.split_first()?;
    let rest = rest.strip_prefix(b" ")?;
    let digits = rest.get(..3)?;
    let after = rest.get(3)?;
    if !minor.is_ascii_digit()
        || !digits.iter().all(u8::is_ascii_digit)
        || !matches!(after, b' ' | b'\r')
    {
        return None;
    }
    digits
        .iter()
        .try_fold(0u16, |a, d| Some(a * 10 + u16::from(d - b'0')))
        .filter(|s| (100..=599).contains(s))
}

/// Offset just past the empty line that ends the trailers (`\r\n` alone, or after trailers).
fn find_trailer_end(tail: &[u8]) -> Option<usize> {
    if tail.starts_with(b"\r\n") {
        return Some(2);
    }
    tail.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
}

/// Writes `{method} {path} HTTP/1.1` and the headers a batch needs into `out` (cleared first).
/// `extra` are pre-rendered header lines, each ending in `\r\n` (auth, channel, content type).
pub fn write_request_head(
    out: &mut Vec<u8>,
    method: &str,
    path: &str,
    host: &str,
    extra: &[u8],
    content_length: usize,
) {
    out.clear();
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(host.as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(extra);
    out.extend_from_slice(b"Content-Length: ");
    write_u64(content_length as u64, out);
    out.extend_from_slice(b"\r\n\r\n");
}

/// Rewrites the `Host` line of a head `write_request_head` wrote, through `scratch` (both
/// keep their capacity: no allocation once they hold a head).
pub fn rehost(head: &mut Vec<u8>, scratch: &mut Vec<u8>, host: &str) {
    const AT: &[u8] = b" HTTP/1.1\r\nHost: ";
    let Some(start) = memchr::memmem::find(head, AT).map(|i| i + AT.len()) else {
        return;
    };
    let Some((before, after)) = head.split_at_checked(start) else {
        return;
    };
    let Some(end) = memchr::memmem::find(after, b"\r\n") else {
        return;
    };
    scratch.clear();
    scratch.extend_from_slice(before);
    scratch.extend_from_slice(host.as_bytes());
    scratch.extend_from_slice(after.get(end..).unwrap_or_default());
    std::mem::swap(head, scratch);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rehost_changes_only_the_host_line() {
        let mut head = Vec::new();
        write_request_head(
            &mut head,
            "POST",
            "/ingest",
            "a.lab:8080",
            b"X-A: 1\r\n",
            12,
        );
        let mut scratch = Vec::new();
        rehost(&mut head, &mut scratch, "collector-2.lab:8443");
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "POST /ingest HTTP/1.1\r\nHost: collector-2.lab:8443\r\nX-A: 1\r\nContent-Length: 12\r\n\r\n"
        );
    }

    /// Feeds `wire` in pieces of `step` bytes and collects (status, body, retry, close).
    fn read_all(wire: &[u8], step: usize) -> Vec<(u16, Vec<u8>, Option<u32>, bool)> {
        let mut r = ResponseReader::new();
        let mut out = Vec::new();
        for piece in wire.chunks(step) {
            let spare = r.spare();
            spare[..piece.len()].copy_from_slice(piece);
            r.filled(piece.len());
            while let Some((resp, n)) = r.poll(false).unwrap() {
                out.push((
                    resp.status,
                    r.body(&resp).to_vec(),
                    resp.retry_after_s,
                    resp.close,
                ));
                r.consume(n);
            }
        }
        out
    }

    const WIRE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 27\r\n\r\n{\"text\":\"Success\",\"code\":0}\
HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\ncontent-length: 0\r\n\r\n\
HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n\
HTTP/1.1 204 No Content\r\n\r\n";

    #[test]
    fn responses_in_every_split() {
        let want = vec![
            (
                200,
                b"{\"text\":\"Success\",\"code\":0}".to_vec(),
                None,
                false,
            ),
            (429, b"".to_vec(), Some(3), false),
            (503, b"hello world".to_vec(), None, true),
            (204, b"".to_vec(), None, false),
        ];
        for step in 1..=WIRE.len() {
            assert_eq!(read_all(WIRE, step), want, "split every {step} bytes");
        }
    }

    #[test]
    fn until_close_body_needs_eof() {
        let mut r = ResponseReader::new();
        let wire = b"HTTP/1.0 200 OK\r\n\r\npartial body";
        r.spare()[..wire.len()].copy_from_slice(wire);
        r.filled(wire.len());
        assert!(r.poll(false).unwrap().is_none());
        let (resp, _) = r.poll(true).unwrap().unwrap();
        assert_eq!(r.body(&resp), b"partial body");
        assert!(resp.close);
    }

    /// A reader holding `wire`.
    fn holding(wire: &[u8]) -> ResponseReader {
        let mut r = ResponseReader::new();
        let mut rest = wire;
        while !rest.is_empty() {
            let spare = r.spare();
            let n = spare.len().min(rest.len());
            assert!(n > 0, "the reader is full");
            spare[..n].copy_from_slice(&rest[..n]);
            r.filled(n);
            rest = &rest[n..];
        }
        r
    }

    fn unreadable(status: u16) -> impl Fn(&Result<Option<(Response, usize)>, ReadError>) -> bool {
        move |got| matches!(got, Err(ReadError::Unreadable { status: s, .. }) if *s == status)
    }

    #[test]
    fn garbage_and_limits() {
        let mut r = holding(b"NOT HTTP AT ALL\r\n\r\n");
        assert!(matches!(r.poll(false), Err(ReadError::Malformed(_))));
        // A length over the cap is known at the head: unreadable, status kept.
        let mut r = holding(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n");
        assert!(unreadable(200)(&r.poll(false)));
        // A chunk size at usize::MAX is too large, not an overflow.
        let mut r = holding(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nffffffffffffffff\r\n",
        );
        assert!(unreadable(200)(&r.poll(false)));
    }

    #[test]
    fn a_2xx_that_cannot_be_read_keeps_its_status() {
        let cases: &[(&[u8], bool)] = &[
            // 100 MB announced, 27 bytes sent, then the close.
            (b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n{\"text\":\"Success\",\"code\":0}", false),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"text\":\"Success\"", true),
            // Lying chunked encodings: not hex, a chunk longer than its size, cut short.
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", false),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n", false),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", true),
            // Contradictions: two lengths, a length and chunked, a length that is no number.
            (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", false),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false),
            (b"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", false),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello", false),
            // A good status line, then a header that is not one.
            (b"HTTP/1.1 200 OK\r\nthis is no header\r\n\r\n", false),
            // The close in the middle of the head.
            (b"HTTP/1.1 200 OK\r\nContent-Le", true),
        ];
        for (wire, eof) in cases {
            let mut r = holding(wire);
            let got = r.poll(*eof);
            assert!(
                unreadable(200)(&got),
                "{:?}: {got:?}",
                String::from_utf8_lossy(wire)
            );
        }
        // No status line: not an answer at all, or the close before one.
        for wire in [
            &b"HTTP/1.1 2\x00\x01garbage\r\n\r\n"[..],
            b"\x15\x03\x03\x00\x02\x02\x46",
        ] {
            assert!(matches!(
                holding(wire).poll(true),
                Err(ReadError::Malformed(_))
            ));
        }
        let mut r = holding(b"HTTP/1.1 2");
        assert_eq!(r.poll(false), Ok(None));
        assert!(matches!(r.poll(true), Err(ReadError::Malformed(_))));
        // A clean close between answers is no error.
        assert_eq!(ResponseReader::new().poll(true), Ok(None));
    }

    #[test]
    fn an_until_close_body_stops_at_the_cap_and_the_buffer_never_passes_it() {
        let mut r = ResponseReader::new();
        let head = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
        r.spare()[..head.len()].copy_from_slice(head);
        r.filled(head.len());
        let mut fed = head.len();
        loop {
            let spare = r.spare();
            if spare.is_empty() {
                break;
            }
            let n = spare.len();
            spare.fill(b'x');
            r.filled(n);
            fed += n;
            if let Err(e) = r.poll(false) {
                assert_eq!(e.status(), Some(200));
                break;
            }
            assert!(fed < 64 << 20, "read far past the cap");
        }
        assert!(fed <= MAX_HEAD + MAX_BODY + 1, "{fed}");
        assert!(unreadable(200)(&r.poll(true)));
        // Given back once handled.
        r.clear();
        assert!(r.buf.len() <= START_BUF);
    }

    #[test]
    fn bodies_of_every_kind_read_whole_and_interim_answers_are_skipped() {
        let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        for step in 1..=wire.len() {
            assert_eq!(
                read_all(wire, step),
                vec![(200, b"ok".to_vec(), None, false)]
            );
        }
        let mut r = holding(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n\x1f\x8b",
        );
        let (resp, _) = r.poll(false).unwrap().unwrap();
        assert!(resp.encoded);
        let mut r = holding(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 2\r\n\r\nok",
        );
        assert!(!r.poll(false).unwrap().unwrap().0.encoded);
        // A chunked body over the cap in many small chunks: the framing counts.
        let mut r = ResponseReader::new();
        r.set_max_body(0);
        let mut wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        while wire.len() < MAX_BODY + MAX_HEAD + 10 {
            wire.extend_from_slice(b"1\r\nx\r\n");
        }
        let mut got = Ok(None);
        for piece in wire.chunks(64 * 1024) {
            let spare = r.spare();
            if spare.is_empty() {
                break;
            }
            let n = spare.len().min(piece.len());
            spare[..n].copy_from_slice(&piece[..n]);
            r.filled(n);
            got = r.poll(false);
            if got.is_err() {
                break;
            }
        }
        assert!(unreadable(200)(&got), "{got:?}");
    }

    #[test]
    fn status_lines() {
        assert_eq!(status_line(b"HTTP/1.1 200 OK\r\n"), Some(200));
        assert_eq!(status_line(b"\r\nHTTP/1.1 204 No Content\r\n"), Some(204));
        assert_eq!(status_line(b"HTTP/1.0 503\r\n"), Some(503));
        assert_eq!(status_line(b"HTTP/1.1 20"), None);
        assert_eq!(status_line(b"HTTP/1.1 2\x00\x01"), None);
        assert_eq!(status_line(b"HTTP/2 200 OK\r\n"), None);
        assert_eq!(status_line(b"\x15\x03\x03"), None);
    }

    #[test]
    fn request_head() {
        let mut out = Vec::new();
        write_request_head(
            &mut out,
            "POST",
            "/ingest",
            "127.0.0.1:8088",
            b"X-API-Key: k\r\n",
            42,
        );
        assert_eq!(
            out,
            b"POST /ingest HTTP/1.1\r\nHost: 127.0.0.1:8088\r\nX-API-Key: k\r\nContent-Length: 42\r\n\r\n"
        );
    }
}
