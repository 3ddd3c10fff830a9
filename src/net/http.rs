//! HTTP/1.1 client pieces that know nothing of event formats: writing a request head into a
//! reused buffer, and reading responses incrementally (status and headers with `httparse`,
//! bodies by Content-Length or chunked encoding) from bytes that arrive in any split. One
//! `ResponseReader` per connection; it allocates only to grow its buffer.

use crate::bytes::write_u64;

/// What the adapter needs from one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Seconds from a `Retry-After: N` header (HTTP-dates are ignored).
    pub retry_after_s: Option<u32>,
    /// The server asked to close the connection after this response.
    pub close: bool,
    /// Start and end of the body in the reader's buffer (valid until the next `consume`).
    pub body: (usize, usize),
}

#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The bytes are not an HTTP/1.1 response.
    Malformed(String),
    /// Headers or body beyond the limits.
    TooLarge,
}

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 16 * 1024 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BodyKind {
    Length(usize),
    Chunked,
    /// No length: the body runs until the server closes (HTTP/1.0 style).
    UntilClose,
}

/// Reads responses from a byte stream. Feed bytes with `buf_mut`/`filled`, then `poll`.
#[derive(Default)]
pub struct ResponseReader {
    buf: Vec<u8>,
    /// Bytes of `buf` that hold data.
    len: usize,
    /// Decoded chunked body (chunked responses only).
    dechunked: Vec<u8>,
    /// Answers to HEAD: no body, whatever Content-Length says.
    pub bodiless: bool,
}

impl ResponseReader {
    pub fn new() -> Self {
        ResponseReader {
            buf: vec![0; 16 * 1024],
            len: 0,
            dechunked: Vec::new(),
            bodiless: false,
        }
    }

    /// Spare room to read into (grows when full).
    pub fn spare(&mut self) -> &mut [u8] {
        if self.len == self.buf.len() {
            let n = (self.buf.len() * 2).max(16 * 1024);
            self.buf.resize(n, 0);
        }
        self.buf.get_mut(self.len..).unwrap_or_default()
    }

    /// Marks `n` bytes of `spare()` as read.
    pub fn filled(&mut self, n: usize) {
        self.len += n;
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
    }

    /// The body of the response `poll` returned.
    pub fn body(&self, r: &Response) -> &[u8] {
        if r.body.1 > self.buf.len() {
            // Chunked bodies are decoded aside.
            return &self.dechunked;
        }
        self.buf.get(r.body.0..r.body.1).unwrap_or_default()
    }

    /// A complete response, if the buffer holds one; `consume` it once handled.
    /// `eof` says the peer closed, which completes an until-close body.
    pub fn poll(&mut self, eof: bool) -> Result<Option<(Response, usize)>, ReadError> {
        let data = self.buf.get(..self.len).unwrap_or_default();
        let mut headers = [httparse::EMPTY_HEADER; 48];
        let mut resp = httparse::Response::new(&mut headers);
        let head_len = match resp.parse(data) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                return if data.len() > MAX_HEAD {
                    Err(ReadError::TooLarge)
                } else {
                    Ok(None)
                };
            }
            Err(e) => return Err(ReadError::Malformed(e.to_string())),
        };
        let status = resp.code.unwrap_or(0);
        let mut kind = BodyKind::UntilClose;
        let mut close = resp.version == Some(0);
        let mut retry_after_s = None;
        for h in resp.headers.iter() {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|s| s.trim().parse::<usize>().ok());
                match v {
                    Some(n) if n <= MAX_BODY => kind = BodyKind::Length(n),
                    Some(_) => return Err(ReadError::TooLarge),
                    None => return Err(ReadError::Malformed("bad Content-Length".into())),
                }
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                if h.value
                    .windows(7)
                    .any(|w| w.eq_ignore_ascii_case(b"chunked"))
                {
                    kind = BodyKind::Chunked;
                }
            } else if name.eq_ignore_ascii_case("connection") {
                if h.value.windows(5).any(|w| w.eq_ignore_ascii_case(b"close")) {
                    close = true;
                } else if h
                    .value
                    .windows(10)
                    .any(|w| w.eq_ignore_ascii_case(b"keep-alive"))
                {
                    close = false;
                }
            } else if name.eq_ignore_ascii_case("retry-after") {
                retry_after_s = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok());
            }
        }
        // 1xx, 204 and 304 have no body, nor has any answer to HEAD.
        if self.bodiless || (100..200).contains(&status) || status == 204 || status == 304 {
            kind = BodyKind::Length(0);
        }
        match kind {
            BodyKind::Length(n) => {
                if data.len() < head_len + n {
                    return Ok(None);
                }
                let r = Response {
                    status,
                    retry_after_s,
                    close,
                    body: (head_len, head_len + n),
                };
                Ok(Some((r, head_len + n)))
            }
            BodyKind::UntilClose => {
                if !eof {
                    return Ok(None);
                }
                let r = Response {
                    status,
                    retry_after_s,
                    close: true,
                    body: (head_len, data.len()),
                };
                Ok(Some((r, data.len())))
            }
            BodyKind::Chunked => {
                self.dechunked.clear();
                let mut pos = head_len;
                loop {
                    let rest = data.get(pos..).unwrap_or_default();
                    let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
                        return Ok(None);
                    };
                    let size_text = std::str::from_utf8(rest.get(..line_end).unwrap_or_default())
                        .map_err(|_| ReadError::Malformed("bad chunk size".into()))?;
                    let size_text = size_text.split(';').next().unwrap_or("").trim();
                    let size = usize::from_str_radix(size_text, 16)
                        .map_err(|_| ReadError::Malformed("bad chunk size".into()))?;
                    // Compared without adding: a chunk size near usize::MAX must not wrap.
                    if size > MAX_BODY.saturating_sub(self.dechunked.len()) {
                        return Err(ReadError::TooLarge);
                    }
                    let start = pos + line_end + 2;
                    if size == 0 {
                        // Trailers end with an empty line.
                        let tail = data.get(start..).unwrap_or_default();
                        let Some(end) = find_trailer_end(tail) else {
                            return Ok(None);
                        };
                        let r = Response {
                            status,
                            retry_after_s,
                            close,
                            body: (usize::MAX, usize::MAX),
                        };
                        return Ok(Some((r, start + end)));
                    }
                    if data.len() < start + size + 2 {
                        return Ok(None);
                    }
                    self.dechunked
                        .extend_from_slice(data.get(start..start + size).unwrap_or_default());
                    pos = start + size + 2;
                }
            }
        }
    }

    /// Drops the first `n` bytes (a handled response), keeping any that follow.
    pub fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.len, 0);
        self.len -= n;
    }
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

    #[test]
    fn garbage_and_limits() {
        let mut r = ResponseReader::new();
        let wire = b"NOT HTTP AT ALL\r\n\r\n";
        r.spare()[..wire.len()].copy_from_slice(wire);
        r.filled(wire.len());
        assert!(matches!(r.poll(false), Err(ReadError::Malformed(_))));
        let mut r = ResponseReader::new();
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n";
        r.spare()[..wire.len()].copy_from_slice(wire);
        r.filled(wire.len());
        assert_eq!(r.poll(false), Err(ReadError::TooLarge));
        // A chunk size at usize::MAX is too large, not an overflow.
        let mut r = ResponseReader::new();
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nffffffffffffffff\r\n";
        r.spare()[..wire.len()].copy_from_slice(wire);
        r.filled(wire.len());
        assert_eq!(r.poll(false), Err(ReadError::TooLarge));
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
