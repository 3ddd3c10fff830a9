//! One client connection of the web front, as a state machine with no socket: bytes read are
//! given to it (`received`), it says how many more it will take (`room`), what it has to
//! write (`pending`, `wrote`), what request is ready to be answered (`advance`), and what the
//! clock does to it (`expire`). The event loop (`front::Server`) and the fuzz targets
//! (`serve::fuzz`) drive the same machine.
//!
//! A request's head is judged (`Service::admit`: Host, route, method, token…) before any of
//! its body is read, and its declared length against the route's limit; only then is the body
//! read, exactly that many bytes, within a deadline. A connection never holds more than the
//! head limit plus the route's body limit, a body that never comes is answered 408, and a
//! body a refusal leaves unread is never read into memory: the connection closes after the
//! answer (`Linger`: the rest is read into a scratch buffer and dropped for a moment, so the
//! client sees the answer rather than a reset). One request at a time: a pipelined request
//! waits in the socket until the answer before it has been written.

use std::time::{Duration, Instant};

use super::Service;
use super::wire::{self, Parsed};
use crate::serve::guard::{self, Reply, Response, Slot, Verb};

/// How long a request head may take to arrive, from the connection's start or the end of
/// the answer before it; an idle connection is closed after it.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an admitted request's body may take to arrive.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long writing an answer may take.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a closing connection reads (and drops) what the client still sends.
pub const LINGER: Duration = Duration::from_secs(2);

/// The most a closing connection reads and drops.
pub const LINGER_BYTES: usize = 4 << 20;

/// A request ready to be answered.
pub struct Ready<R> {
    pub route: R,
    pub body: Vec<u8>,
}

enum State<R> {
    /// Waiting for a request head since then (idle while the buffer is empty).
    Head(Instant),
    /// Reading the body of an admitted request.
    Body {
        route: R,
        head_len: usize,
        len: usize,
        keep_alive: bool,
        since: Instant,
        _slot: Option<Slot>,
    },
    /// The request is with a handler.
    Busy {
        keep_alive: bool,
    },
    /// Writing the answer; then the next request, or closing.
    Write {
        keep_alive: bool,
        since: Instant,
    },
    /// Answered and closing: reading what the client still sends, and dropping it.
    Linger {
        since: Instant,
        dropped: usize,
    },
    Closed,
}

/// One connection's state and buffers.
pub struct Conn<R> {
    state: State<R>,
    buf: Vec<u8>,
    /// How much of `buf` has been searched for the end of a head: a head that trickles in
    /// is parsed once, when its blank line has come, not once per byte.
    scanned: usize,
    out: Vec<u8>,
    out_at: usize,
    /// The client has closed its side (no more requests will come).
    peer_done: bool,
}

/// What the limits of the connections of one server share: bodies being received at once.
pub struct Bodies {
    pub count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    pub most: usize,
}

impl<R> Conn<R> {
    pub fn new(now: Instant) -> Conn<R> {
        Conn {
            state: State::Head(now),
            buf: Vec::new(),
            scanned: 0,
            out: Vec::new(),
            out_at: 0,
            peer_done: false,
        }
    }

    /// How many more bytes it takes now (0: do not read). A closing connection takes what
    /// comes, to drop it.
    pub fn room(&self) -> usize {
        match &self.state {
            State::Head(_) => (wire::MAX_HEAD_BYTES + 1).saturating_sub(self.buf.len()),
            State::Body { head_len, len, .. } => (head_len + len).saturating_sub(self.buf.len()),
            State::Linger { dropped, .. } => LINGER_BYTES.saturating_sub(*dropped),
            State::Busy { .. } | State::Write { .. } | State::Closed => 0,
        }
    }

    /// Bytes read from the client (at most `room`).
    pub fn received(&mut self, bytes: &[u8]) {
        match &mut self.state {
            State::Linger { dropped, .. } => *dropped += bytes.len(),
            State::Closed => {}
            _ => self.buf.extend_from_slice(bytes),
        }
    }

    /// The client closed its side: a request not complete will never be; one being answered
    /// still is, and the connection closes after it.
    pub fn peer_closed(&mut self) {
        self.peer_done = true;
        match self.state {
            State::Head(_) | State::Body { .. } | State::Linger { .. } => {
                self.state = State::Closed;
            }
            State::Busy { .. } | State::Write { .. } | State::Closed => {}
        }
    }

    /// The connection failed (reset, a write that cannot be done): it is finished with.
    pub fn broken(&mut self) {
        self.state = State::Closed;
    }

    /// Bytes to write now.
    pub fn pending(&self) -> &[u8] {
        self.out.get(self.out_at..).unwrap_or_default()
    }

    /// `n` bytes of `pending` were written.
    pub fn wrote(&mut self, n: usize, now: Instant) {
        self.out_at = (self.out_at + n).min(self.out.len());
        if self.out_at < self.out.len() {
            return;
        }
        self.out.clear();
        self.out_at = 0;
        if let State::Write { keep_alive, .. } = self.state {
            self.state = match (keep_alive, self.peer_done) {
                (_, true) => State::Closed,
                (true, false) => State::Head(now),
                (false, false) => State::Linger {
                    since: now,
                    dropped: 0,
                },
            };
        }
    }

    /// Bytes held from the client (a head, a body, what follows them).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Whether it is receiving an admitted request's body.
    pub fn receiving_body(&self) -> bool {
        matches!(&self.state, State::Body { len, .. } if *len > 0)
    }

    /// Whether it is finished with: close the socket and forget it.
    pub fn closed(&self) -> bool {
        matches!(self.state, State::Closed)
    }

    /// Whether it has been answered and is only closing (nothing to write).
    pub fn lingering(&self) -> bool {
        matches!(self.state, State::Linger { .. })
    }

    /// Since when it has waited for a request head (the one to evict first when the server is
    /// full), when that is what it does, or since when it lingers.
    pub fn evictable_since(&self) -> Option<Instant> {
        match self.state {
            State::Head(since) | State::Linger { since, .. } => Some(since),
            _ => None,
        }
    }

    /// The handler's answer to the request `advance` gave.
    pub fn answered(&mut self, r: &Response, now: Instant) {
        if let State::Busy { keep_alive } = self.state {
            self.respond(r, keep_alive, now);
        }
    }

    fn respond(&mut self, r: &Response, keep_alive: bool, now: Instant) {
        let keep_alive = keep_alive && !self.peer_done;
        if !keep_alive {
            // Nothing more is read as a request: what is held goes.
            self.buf = Vec::new();
        }
        wire::write(r.status, &r.headers, &r.body, !keep_alive, &mut self.out);
        self.state = State::Write {
            keep_alive,
            since: now,
        };
    }

    /// Answers at once (a refusal) and closes after it.
    fn refuse(&mut self, status: u16, message: &str, now: Instant) {
        let r = guard::response(Reply::error(status, message), guard::SELF_CSP);
        self.respond(&r, false, now);
    }

    /// Applies the clock: a head or body that did not come in time is answered 408, an idle
    /// connection, an answer not taken in time or a linger that is over is closed. True when
    /// something changed.
    pub fn expire(&mut self, now: Instant) -> bool {
        let late = |since: Instant, limit: Duration| now.saturating_duration_since(since) >= limit;
        match self.state {
            State::Head(since) if late(since, HEAD_TIMEOUT) => {
                if self.buf.is_empty() {
                    self.state = State::Closed;
                } else {
                    self.refuse(408, "the request head did not arrive in time", now);
                }
            }
            State::Body { since, .. } if late(since, BODY_TIMEOUT) => {
                self.refuse(408, "the request body did not arrive in time", now);
            }
            State::Write { since, .. } if late(since, WRITE_TIMEOUT) => {
                self.state = State::Closed;
            }
            State::Linger { since, dropped } if late(since, LINGER) || dropped >= LINGER_BYTES => {
                self.state = State::Closed;
            }
            _ => return false,
        }
        true
    }

    /// Takes the buffered bytes as far as they go: a head judged by `svc` (refused, or its
    /// body awaited), a body complete. Gives the request to answer when one is ready.
    pub fn advance<S: Service<Route = R>>(
        &mut self,
        svc: &S,
        bodies: &Bodies,
        now: Instant,
    ) -> Option<Ready<R>> {
        if let State::Head(_) = self.state
            && !self.buf.is_empty()
        {
            self.judge_head(svc, bodies, now);
        }
        let State::Body { head_len, len, .. } = self.state else {
            return None;
        };
        let end = head_len + len;
        if self.buf.len() < end {
            return None;
        }
        let body = self.buf.get(head_len..end).unwrap_or_default().to_vec();
        self.buf.drain(..end);
        self.scanned = 0;
        self.shrink_idle();
        let state = std::mem::replace(&mut self.state, State::Busy { keep_alive: false });
        let State::Body {
            route, keep_alive, ..
        } = state
        else {
            return None;
        };
        self.state = State::Busy { keep_alive };
        Some(Ready { route, body })
    }

    /// A buffer grown for a body is given back once the body is taken.
    fn shrink_idle(&mut self) {
        if self.buf.capacity() > 2 * wire::MAX_HEAD_BYTES {
            self.buf.shrink_to(wire::MAX_HEAD_BYTES);
        }
    }

    fn judge_head<S: Service<Route = R>>(&mut self, svc: &S, bodies: &Bodies, now: Instant) {
        let ended = head_ends(&self.buf, self.scanned.saturating_sub(2));
        self.scanned = self.buf.len();
        if !ended && self.buf.len() <= wire::MAX_HEAD_BYTES {
            return;
        }
        let mut headers = [httparse::EMPTY_HEADER; wire::MAX_HEADERS];
        let judged = match wire::parse(&self.buf, &mut headers) {
            Parsed::Partial => return,
            Parsed::Bad(b) => Err((b.status, b.message.to_string())),
            Parsed::Done(req) => Ok(Judged::of(svc, &req)),
        };
        match judged {
            Err((status, message)) => self.refuse(status, &message, now),
            Ok(Judged::Refused {
                response,
                head_len,
                keep_alive,
            }) => {
                // The refused request's body is never read: the connection closes after the
                // answer unless there is none.
                self.buf.drain(..head_len.min(self.buf.len()));
                self.scanned = 0;
                self.respond(&response, keep_alive, now);
            }
            Ok(Judged::Admitted(a)) => self.admitted(a, bodies, now),
        }
    }

    fn admitted(&mut self, a: Admitted<R>, bodies: &Bodies, now: Instant) {
        let len = match usize::try_from(a.len) {
            Ok(n) if n <= a.max => n,
            _ => {
                let m = format!("the request body is over {}", guard::shown(a.max));
                return self.refuse(413, &m, now);
            }
        };
        let slot = if len > 0 {
            match Slot::take(&bodies.count, bodies.most) {
                Some(s) => Some(s),
                None => {
                    let m = "too many requests with a body at once; try again";
                    return self.refuse(503, m, now);
                }
            }
        } else {
            None
        };
        if a.expect_continue && len > 0 && self.buf.len() < a.head_len + len {
            self.out.extend_from_slice(wire::CONTINUE);
        }
        self.state = State::Body {
            route: a.route,
            head_len: a.head_len,
            len,
            keep_alive: a.keep_alive,
            since: now,
            _slot: slot,
        };
    }
}

/// Whether a blank line (the end of a head) is in `buf` from `from` on.
fn head_ends(buf: &[u8], from: usize) -> bool {
    let tail = buf.get(from..).unwrap_or_default();
    memchr::memchr_iter(b'\n', tail).any(|i| {
        let rest = tail.get(i + 1..).unwrap_or_default();
        rest.first() == Some(&b'\n') || rest.starts_with(b"\r\n")
    })
}

struct Admitted<R> {
    route: R,
    max: usize,
    head_len: usize,
    len: u64,
    keep_alive: bool,
    expect_continue: bool,
}

/// A complete head as the service judged it.
enum Judged<R> {
    Refused {
        response: Response,
        head_len: usize,
        keep_alive: bool,
    },
    Admitted(Admitted<R>),
}

impl<R> Judged<R> {
    fn of<S: Service<Route = R>>(svc: &S, req: &wire::Request) -> Judged<R> {
        // A method this server has no word for (HEAD among them) is answered and the
        // connection closed: what follows its answer is not for a client to guess.
        let keep_alive = req.keep_alive && req.head.verb != Verb::Other;
        match svc.admit(&req.head) {
            Err(response) => Judged::Refused {
                response,
                head_len: req.head_len,
                keep_alive: keep_alive && req.body_len == 0,
            },
            Ok((route, max)) => Judged::Admitted(Admitted {
                route,
                max,
                head_len: req.head_len,
                len: req.body_len,
                keep_alive,
                expect_continue: req.expect_continue,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::guard::Head;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    /// Takes `/small` (4 bytes of body), `/big` (1 MiB), refuses anything else with 404.
    struct Echo;

    impl Service for Echo {
        type Route = &'static str;

        fn admit(&self, head: &Head) -> Result<(&'static str, usize), Response> {
            match head.path {
                "/small" => Ok(("small", 4)),
                "/big" => Ok(("big", 1 << 20)),
                _ => Err(guard::response(Reply::error(404, "no"), guard::SELF_CSP)),
            }
        }

        fn answer(&self, route: &'static str, body: Vec<u8>) -> Response {
            let text = format!("{route}:{}", String::from_utf8_lossy(&body));
            guard::response(Reply::json(200, text.into_bytes()), guard::SELF_CSP)
        }
    }

    fn bodies(most: usize) -> Bodies {
        Bodies {
            count: Arc::new(AtomicUsize::new(0)),
            most,
        }
    }

    /// Feeds `input` (as much as the connection takes at each step), answers what it gives,
    /// and returns what it wrote and whether it ended closed.
    fn drive(input: &[u8], b: &Bodies, now: Instant) -> (String, Conn<&'static str>) {
        let mut c = Conn::new(now);
        let mut at = 0;
        let mut wrote = Vec::new();
        for _ in 0..100 {
            let n = c.room().min(input.len() - at);
            c.received(&input[at..at + n]);
            at += n;
            if let Some(r) = c.advance(&Echo, b, now) {
                let resp = Echo.answer(r.route, r.body);
                c.answered(&resp, now);
            }
            let p = c.pending().to_vec();
            wrote.extend_from_slice(&p);
            c.wrote(p.len(), now);
            if c.closed() || c.lingering() || (n == 0 && p.is_empty()) {
                break;
            }
        }
        (String::from_utf8_lossy(&wrote).into_owned(), c)
    }

    fn statuses(out: &str) -> Vec<u16> {
        out.split("HTTP/1.1 ")
            .skip(1)
            .map(|s| s[..3].parse().unwrap())
            .collect()
    }

    #[test]
    fn pipelined_requests_are_answered_in_order() {
        let b = bodies(8);
        let now = Instant::now();
        let input = b"POST /small HTTP/1.1\r\nContent-Length: 2\r\n\r\nhiGET /nope HTTP/1.1\r\n\r\nPOST /small HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd";
        let (out, c) = drive(input, &b, now);
        assert_eq!(statuses(&out), [200, 404, 200], "{out}");
        assert!(
            out.contains("small:hi") && out.contains("small:abcd"),
            "{out}"
        );
        assert!(!c.closed() && !c.lingering());
        assert_eq!(b.count.load(std::sync::atomic::Ordering::Relaxed), 0);
    }

    #[test]
    fn a_declared_length_over_the_limit_is_refused_unread() {
        let b = bodies(8);
        let now = Instant::now();
        for cl in [
            "5",
            "1000000000000",
            "18446744073709551615",
            "99999999999999999999999",
        ] {
            let input = format!("POST /small HTTP/1.1\r\nContent-Length: {cl}\r\n\r\nabcde");
            let (out, c) = drive(input.as_bytes(), &b, now);
            assert_eq!(statuses(&out), [413], "{cl}: {out}");
            assert!(out.contains("Connection: close"), "{out}");
            assert!(c.lingering());
            // A closing connection keeps nothing of what it was sent.
            assert!(c.buf.is_empty());
        }
    }

    #[test]
    fn a_refused_request_with_a_body_closes_the_connection() {
        let b = bodies(8);
        let (out, c) = drive(
            b"POST /nope HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /small HTTP/1.1\r\n\r\n",
            &b,
            Instant::now(),
        );
        assert_eq!(statuses(&out), [404]);
        assert!(c.lingering());
    }

    #[test]
    fn a_body_shorter_than_declared_times_out_and_one_longer_is_a_bad_next_request() {
        let b = bodies(8);
        let now = Instant::now();
        let (out, mut c) = drive(
            b"POST /small HTTP/1.1\r\nContent-Length: 4\r\n\r\nab",
            &b,
            now,
        );
        assert_eq!(out, "");
        assert_eq!(b.count.load(std::sync::atomic::Ordering::Relaxed), 1);
        c.expire(now + BODY_TIMEOUT - Duration::from_millis(1));
        assert!(c.pending().is_empty());
        c.expire(now + BODY_TIMEOUT);
        let late = String::from_utf8_lossy(c.pending()).into_owned();
        assert_eq!(statuses(&late), [408]);
        assert_eq!(b.count.load(std::sync::atomic::Ordering::Relaxed), 0);
        let (out, _) = drive(
            b"POST /small HTTP/1.1\r\nContent-Length: 1\r\n\r\nabc\r\n\r\n",
            &b,
            now,
        );
        assert_eq!(statuses(&out), [200, 400], "{out}");
    }

    #[test]
    fn bodies_in_flight_are_bounded() {
        let b = bodies(1);
        let now = Instant::now();
        let (_, held) = drive(b"POST /big HTTP/1.1\r\nContent-Length: 10\r\n\r\n", &b, now);
        let (out, _) = drive(b"POST /big HTTP/1.1\r\nContent-Length: 10\r\n\r\n", &b, now);
        assert_eq!(statuses(&out), [503]);
        drop(held);
        let (out, _) = drive(b"POST /big HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", &b, now);
        assert_eq!(statuses(&out), [200]);
    }

    #[test]
    fn expect_continue_is_answered_only_when_the_body_is_taken() {
        let b = bodies(8);
        let now = Instant::now();
        let (out, _) = drive(
            b"POST /small HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n",
            &b,
            now,
        );
        assert_eq!(statuses(&out), [100]);
        let (out, _) = drive(
            b"POST /small HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 400\r\n\r\n",
            &b,
            now,
        );
        assert_eq!(statuses(&out), [413]);
    }

    #[test]
    fn idle_and_slow_heads_end() {
        let b = bodies(8);
        let now = Instant::now();
        let (_, mut idle) = drive(b"", &b, now);
        idle.expire(now + HEAD_TIMEOUT);
        assert!(idle.closed());
        let (_, mut slow) = drive(b"GET /small HTTP/1.1\r\nHost: a", &b, now);
        slow.expire(now + HEAD_TIMEOUT);
        assert_eq!(statuses(&String::from_utf8_lossy(slow.pending())), [408]);
        let (out, c) = drive(&[b'a'; wire::MAX_HEAD_BYTES + 10], &b, now);
        assert_eq!(statuses(&out), [431]);
        assert!(c.lingering());
    }

    #[test]
    fn a_head_that_trickles_in_is_parsed_once_it_has_ended() {
        let b = bodies(8);
        let now = Instant::now();
        let mut c: Conn<&'static str> = Conn::new(now);
        let head = b"POST /small HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi";
        for (i, byte) in head.iter().enumerate() {
            c.received(&[*byte]);
            let ready = c.advance(&Echo, &b, now);
            assert_eq!(ready.is_some(), i == head.len() - 1, "at byte {i}");
        }
        assert!(head_ends(b"GET / HTTP/1.1\n\n", 0));
        assert!(head_ends(b"GET / HTTP/1.1\r\n\r\n", 12));
        assert!(!head_ends(b"GET / HTTP/1.1\r\nHost: a\r\n", 0));
    }

    #[test]
    fn a_linger_ends() {
        let b = bodies(8);
        let now = Instant::now();
        let (_, mut c) = drive(b"GET / HTTP/1.0\r\n\r\n", &b, now);
        assert!(c.lingering());
        c.received(&[0; 100]);
        assert!(c.buf.is_empty() || c.buf.len() < 100);
        c.expire(now + LINGER);
        assert!(c.closed());
    }
}
