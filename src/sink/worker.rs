//! Sockets and time for the sink: the acceptor loop, and the worker loop that owns a
//! `mio::Poll` and its connections. A connection keeps one read buffer (grown to fit the
//! largest request it has sent, all of it initialised once, then reused) and one write
//! buffer. Readiness is edge-triggered, so every read and write goes on until `WouldBlock`.
//! A held response (latency or stall fault) sits in the write buffer until a deadline kept in
//! a heap; the poll timeout is the nearest deadline, so nothing ever sleeps.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use super::http::{self, Framing, HeadError, MAX_BODY, MAX_HEAD};
use super::route::{Action, Ctx};
use super::{Shared, WAKE};

/// Read buffer of a new connection.
const INITIAL_READ: usize = 16 * 1024;
/// A read buffer never grows past this (a chunked body's framing needs some room).
const MAX_READ: usize = MAX_HEAD + 2 * MAX_BODY;
/// An idle connection's read buffer is shrunk back when larger than this.
const KEEP_READ: usize = 4 * 1024 * 1024;
/// Stop parsing pipelined requests while this much output waits for the client.
const MAX_PENDING_OUT: usize = 1024 * 1024;

/// Accepts connections and deals them to the workers round robin.
pub(crate) fn accept_loop(
    mut poll: Poll,
    mut listener: TcpListener,
    shared: Arc<Shared>,
    workers: Vec<(Sender<TcpStream>, Arc<Waker>)>,
) {
    const LISTENER: Token = Token(1);
    if poll
        .registry()
        .register(&mut listener, LISTENER, Interest::READABLE)
        .is_err()
    {
        return;
    }
    let mut events = Events::with_capacity(16);
    let mut next = 0usize;
    let mut retry: Option<Duration> = None;
    loop {
        if let Err(e) = poll.poll(&mut events, retry) {
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if shared.stopping() {
            return;
        }
        retry = None;
        loop {
            match listener.accept() {
                Ok((s, _)) => {
                    let _ = s.set_nodelay(true);
                    shared.connections.0.fetch_add(1, Ordering::Relaxed);
                    let (tx, waker) = &workers[next % workers.len()];
                    next = next.wrapping_add(1);
                    if tx.send(s).is_ok() {
                        let _ = waker.wake();
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    // Out of file descriptors or similar: try again shortly.
                    retry = Some(Duration::from_millis(50));
                    break;
                }
            }
        }
    }
}

struct Conn {
    sock: TcpStream,
    /// Distinguishes this connection from an earlier one in the same slot (for timers).
    generation: u64,
    /// `rbuf[start..end]` holds bytes read and not yet consumed; all of `rbuf` is initialised.
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes the request at `start` needs in all, when its head said so.
    want: usize,
    /// Chunked bodies are decoded here, resumably: `chunk_pos` is how far into the body's
    /// wire bytes (after the head) decoding got.
    chunked: Vec<u8>,
    chunk_pos: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    /// Output is held until then (latency and stall faults).
    hold_until: Option<Instant>,
    timer_at: Option<Instant>,
    continue_sent: bool,
    /// A response asked to close: parse nothing more, close once it is written.
    closing: bool,
    peer_eof: bool,
    read_blocked: bool,
}

enum Next {
    Keep,
    Close,
    Reset,
}

pub(crate) struct Worker {
    poll: Poll,
    inbox: Receiver<TcpStream>,
    shared: Arc<Shared>,
    ctx: Ctx,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    generation: u64,
}

impl Worker {
    pub(crate) fn new(
        idx: usize,
        poll: Poll,
        inbox: Receiver<TcpStream>,
        shared: Arc<Shared>,
        seed: u64,
    ) -> Self {
        Worker {
            poll,
            inbox,
            ctx: Ctx::new(shared.clone(), idx, seed),
            shared,
            conns: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            generation: 0,
        }
    }

    pub(crate) fn run(mut self) {
        let mut events = Events::with_capacity(256);
        loop {
            let timeout = self
                .timers
                .peek()
                .map(|Reverse((t, _, _))| t.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            if self.shared.stopping() {
                return;
            }
            for ev in events.iter() {
                if ev.token() == WAKE {
                    self.adopt();
                    continue;
                }
                let i = ev.token().0 - 1;
                if let Some(Some(c)) = self.conns.get_mut(i) {
                    if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                        c.read_blocked = false;
                    }
                    self.service(i);
                }
            }
            self.fire_timers();
        }
    }

    /// Takes in the connections the acceptor sent.
    fn adopt(&mut self) {
        while let Ok(mut sock) = self.inbox.try_recv() {
            let i = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            if self
                .poll
                .registry()
                .register(
                    &mut sock,
                    Token(i + 1),
                    Interest::READABLE | Interest::WRITABLE,
                )
                .is_err()
            {
                self.free.push(i);
                continue;
            }
            self.generation += 1;
            self.conns[i] = Some(Conn {
                sock,
                generation: self.generation,
                rbuf: vec![0; INITIAL_READ],
                start: 0,
                end: 0,
                want: 0,
                chunked: Vec::new(),
                chunk_pos: 0,
                wbuf: Vec::with_capacity(4096),
                wpos: 0,
                hold_until: None,
                timer_at: None,
                continue_sent: false,
                closing: false,
                peer_eof: false,
                read_blocked: false,
            });
            self.service(i);
        }
    }

    fn fire_timers(&mut self) {
        let now = Instant::now();
        while let Some(Reverse((t, i, generation))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            let live = matches!(self.conns.get(i), Some(Some(c)) if c.generation == generation && c.timer_at == Some(t));
            if live {
                if let Some(Some(c)) = self.conns.get_mut(i) {
                    c.timer_at = None;
                }
                self.service(i);
            }
        }
    }

    /// Reads, answers and writes on connection `i` as far as it can go now.
    fn service(&mut self, i: usize) {
        let Some(Some(c)) = self.conns.get_mut(i) else {
            return;
        };
        let next = drive(c, &mut self.ctx);
        match next {
            Next::Keep => {
                if let Some(t) = c.hold_until
                    && c.timer_at != Some(t)
                {
                    c.timer_at = Some(t);
                    self.timers.push(Reverse((t, i, c.generation)));
                }
            }
            Next::Close => self.close(i, false),
            Next::Reset => self.close(i, true),
        }
    }

    fn close(&mut self, i: usize, reset: bool) {
        if let Some(mut c) = self.conns[i].take() {
            let _ = self.poll.registry().deregister(&mut c.sock);
            if reset {
                let _ = socket2::SockRef::from(&c.sock).set_linger(Some(Duration::ZERO));
            }
            drop(c);
            self.free.push(i);
        }
    }
}

/// One round on a connection: parse what is buffered, read more, repeat; then write. Goes
/// round again when writing drained output that had paused the parsing.
fn drive(c: &mut Conn, ctx: &mut Ctx) -> Next {
    loop {
        loop {
            if let Next::Reset = process(c, ctx) {
                return Next::Reset;
            }
            if c.closing || c.peer_eof || c.read_blocked || c.wbuf.len() - c.wpos > MAX_PENDING_OUT
            {
                break;
            }
            if !make_room(c) {
                ctx.refuse(413, "request too large", c.end - c.start, &mut c.wbuf);
                c.closing = true;
                c.start = c.end;
                break;
            }
            match c.sock.read(&mut c.rbuf[c.end..]) {
                Ok(0) => c.peer_eof = true,
                Ok(n) => c.end += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => c.read_blocked = true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Next::Close,
            }
        }
        match flush(c) {
            Next::Keep => {}
            other => return other,
        }
        let drained = c.wbuf.is_empty();
        let more = !c.closing && !c.peer_eof && !c.read_blocked && c.hold_until.is_none();
        if !(drained && more) {
            return Next::Keep;
        }
    }
}

/// Answers every complete request in the read buffer (in order).
fn process(c: &mut Conn, ctx: &mut Ctx) -> Next {
    while !c.closing && c.start < c.end && c.wbuf.len() - c.wpos <= MAX_PENDING_OUT {
        let avail = &c.rbuf[c.start..c.end];
        let h = match http::parse_head(avail) {
            Ok(Some(h)) => h,
            Ok(None) => {
                c.want = 0;
                return Next::Keep;
            }
            Err(e) => {
                let (code, msg) = match e {
                    HeadError::Malformed(m) => (400, m),
                    HeadError::TooLarge => (431, "request head too large"),
                    HeadError::BodyTooLarge => (413, "body too large"),
                };
                ctx.refuse(code, msg, avail.len(), &mut c.wbuf);
                c.closing = true;
                c.start = c.end;
                return Next::Keep;
            }
        };
        let (body, consumed): (&[u8], usize) = match h.framing {
            Framing::Empty => (&[], h.len),
            Framing::Length(n) => {
                if avail.len() < h.len + n {
                    c.want = h.len + n;
                    send_continue(c.continue_sent, h.expect_continue, &mut c.wbuf);
                    c.continue_sent |= h.expect_continue;
                    return Next::Keep;
                }
                (&avail[h.len..h.len + n], h.len + n)
            }
            Framing::Chunked => {
                match http::decode_chunked(&avail[h.len..], &mut c.chunked, &mut c.chunk_pos) {
                    Ok(Some(n)) => (&c.chunked[..], h.len + n),
                    Ok(None) => {
                        c.want = 0;
                        send_continue(c.continue_sent, h.expect_continue, &mut c.wbuf);
                        c.continue_sent |= h.expect_continue;
                        return Next::Keep;
                    }
                    Err(e) => {
                        let (code, msg) = match e {
                            http::ChunkError::Malformed => (400, "malformed chunked body"),
                            http::ChunkError::TooLarge => (413, "body too large"),
                        };
                        ctx.refuse(code, msg, avail.len(), &mut c.wbuf);
                        c.closing = true;
                        c.start = c.end;
                        return Next::Keep;
                    }
                }
            }
        };
        let action = ctx.handle(&h, body, consumed, &mut c.wbuf);
        c.start += consumed;
        c.want = 0;
        c.continue_sent = false;
        c.chunk_pos = 0;
        c.chunked.clear();
        if c.chunked.capacity() > KEEP_READ {
            c.chunked = Vec::new();
        }
        match action {
            Action::Reset => return Next::Reset,
            Action::Respond { close, hold } => {
                c.closing |= close;
                if !hold.is_zero() {
                    let t = Instant::now() + hold;
                    c.hold_until = Some(c.hold_until.map_or(t, |h| h.max(t)));
                }
            }
        }
    }
    Next::Keep
}

fn send_continue(already: bool, expected: bool, out: &mut Vec<u8>) {
    if expected && !already {
        out.extend_from_slice(http::CONTINUE);
    }
}

/// Makes room to read into: moves the unconsumed bytes to the front and grows the buffer to
/// what the current request needs. False when the request cannot fit at all.
fn make_room(c: &mut Conn) -> bool {
    if c.start == c.end {
        c.start = 0;
        c.end = 0;
        if c.rbuf.len() > KEEP_READ {
            c.rbuf = vec![0; INITIAL_READ];
        }
    }
    let need = c.want.max(c.end - c.start + 1);
    if c.rbuf.len() - c.start >= need && c.end < c.rbuf.len() {
        return true;
    }
    if c.start > 0 {
        c.rbuf.copy_within(c.start..c.end, 0);
        c.end -= c.start;
        c.start = 0;
    }
    if c.end < c.rbuf.len() && c.rbuf.len() >= need {
        return true;
    }
    if c.rbuf.len() >= MAX_READ {
        return false;
    }
    let grown = need.max(c.rbuf.len() * 2).min(MAX_READ);
    c.rbuf.resize(grown, 0);
    true
}

/// Writes pending output unless it is held; decides whether the connection lives on.
fn flush(c: &mut Conn) -> Next {
    if let Some(t) = c.hold_until {
        if Instant::now() < t {
            return Next::Keep;
        }
        c.hold_until = None;
    }
    while c.wpos < c.wbuf.len() {
        match c.sock.write(&c.wbuf[c.wpos..]) {
            Ok(0) => return Next::Close,
            Ok(n) => c.wpos += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Keep,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
    }
    c.wbuf.clear();
    c.wpos = 0;
    if c.closing || c.peer_eof {
        return Next::Close;
    }
    Next::Keep
}
