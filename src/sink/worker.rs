//! Sockets and time for the sink: the acceptor loop, and the worker loop that owns a
//! `mio::Poll` and its connections. The acceptor owns every TCP listener (HTTP or HTTPS,
//! syslog TCP, syslog TLS) and deals connections to the workers round robin, each with the
//! kind of listener it came from. A worker serves HTTP connections (here), syslog stream
//! connections (`stream.rs`) and its own UDP socket of the syslog UDP group (`udp.rs`); TLS
//! sits under either kind of connection (`tls::Io`).
//!
//! Read buffers belong to the worker, not to its HTTP connections: a connection takes one
//! from the worker's stack (`reads`) when it has something to read and gives it back as soon
//! as it holds no unconsumed byte, so the buffer most recently written, still in the cache,
//! takes the next request whichever connection it comes on, and only connections with a
//! request partly read hold one. A buffer grows to fit the largest request it has taken, with
//! a quarter more room so that a slightly larger one later does not grow it again, all of it
//! initialised once, then reused. A closed connection's buffer goes back too (up to
//! `SPARE_READS` beyond what the open ones gave back), so a storm of reconnects allocates
//! nothing and the memory of a long run stays flat. Each connection has its own write buffer. Readiness is
//! edge-triggered, so every read and write goes on until `WouldBlock`. A held response
//! (latency or stall fault) sits in the write buffer until a deadline kept in a heap; the
//! poll timeout is the nearest deadline, so nothing ever sleeps. Syslog connections and the
//! UDP socket yield after a bounded amount of work and are resumed before the next wait (a
//! zero poll timeout), so one fast sender cannot starve the rest. Syslog counters are kept
//! in the worker and added to its `Totals` once per poll round. Told to stop, a worker reads
//! its syslog and RELP connections until their senders close them or nothing has come for
//! `DRAIN_QUIET` (at most `DRAIN` in all), and its UDP socket until it is empty, so what was
//! written before the end is counted.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::ErrorKind;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use super::http::{self, Framing, HeadError, MAX_BODY, MAX_HEAD};
use super::relp::RelpConn;
use super::route::{Action, Ctx};
use super::stats::SyslogStats;
use super::stream::{Step, StreamConn};
use super::tls::Io;
use super::udp;
use super::{Shared, WAKE};

/// The worker's UDP socket.
const UDP: Token = Token(usize::MAX);
/// UDP batches received before yielding to the other sockets of the thread.
const UDP_BATCHES_PER_TURN: usize = 16;
/// Once told to stop, a worker still reads its syslog and RELP connections to their end for
/// at most this long: a sender counts a message as sent once written, so what it wrote
/// before closing is stored, not dropped with the socket.
const DRAIN: Duration = Duration::from_secs(5);
/// How often a draining worker looks whether its stream connections are all closed.
const DRAIN_TICK: Duration = Duration::from_millis(20);
/// A connection its sender keeps open is read to the end of what has come: the drain is
/// over once nothing has come for this long.
const DRAIN_QUIET: Duration = Duration::from_millis(100);

/// Where the acceptor sends a worker its new connections, and how it wakes it.
pub(crate) type Inbox = (Sender<(TcpStream, Kind)>, Arc<Waker>);

/// Which listener a connection came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// HTTP, or HTTPS when the sink has TLS.
    Http,
    SyslogTcp,
    SyslogTls,
    /// RELP (`relp.rs`).
    Relp,
}

/// Read buffer of a new connection.
const INITIAL_READ: usize = 16 * 1024;
/// A read buffer never grows past this (a chunked body's framing needs some room).
const MAX_READ: usize = MAX_HEAD + 2 * MAX_BODY;
/// An idle connection's read buffer is shrunk back when larger than this.
const KEEP_READ: usize = 4 * 1024 * 1024;
/// Read buffers a closed HTTP connection gives back to the worker's stack while it holds
/// fewer than this; beyond, the buffer is freed.
const SPARE_READS: usize = 8;
/// Stop parsing pipelined requests while this much output waits for the client.
const MAX_PENDING_OUT: usize = 1024 * 1024;

/// Accepts connections on every listener and deals them to the workers round robin.
pub(crate) fn accept_loop(
    mut poll: Poll,
    mut listeners: Vec<(TcpListener, Kind)>,
    shared: Arc<Shared>,
    workers: Vec<Inbox>,
) {
    for (i, (l, _)) in listeners.iter_mut().enumerate() {
        if poll
            .registry()
            .register(l, Token(i + 1), Interest::READABLE)
            .is_err()
        {
            return;
        }
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
        // Every listener, every round: after a retry there is no new edge to wait for.
        for (listener, kind) in &listeners {
            loop {
                match listener.accept() {
                    Ok((s, _)) => {
                        let _ = s.set_nodelay(true);
                        shared.connections.0.fetch_add(1, Ordering::Relaxed);
                        let Some((tx, waker)) = workers.get(next % workers.len()) else {
                            continue;
                        };
                        next = next.wrapping_add(1);
                        if tx.send((s, *kind)).is_ok() {
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
}

struct Conn {
    io: Io,
    /// Distinguishes this connection from an earlier one in the same slot (for timers).
    generation: u64,
    /// `rbuf[start..end]` holds bytes read and not yet consumed; all of `rbuf` is initialised.
    /// Empty (no buffer) while the connection holds nothing unconsumed: it is on the worker's
    /// stack (`Worker::reads`).
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

/// A connection slot.
enum Slot {
    Http(Conn),
    Syslog(StreamConn),
    Relp(RelpConn),
}

pub(crate) struct Worker {
    poll: Poll,
    inbox: Receiver<(TcpStream, Kind)>,
    shared: Arc<Shared>,
    /// This worker's index (its slot in `Shared::totals`).
    idx: usize,
    ctx: Ctx,
    conns: Vec<Option<Slot>>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    generation: u64,
    /// Syslog connections that yielded with more to read, to resume before waiting.
    again: Vec<usize>,
    again_next: Vec<usize>,
    udp: Option<udp::Rx>,
    udp_again: bool,
    /// Syslog and TLS counts not yet added to this worker's totals.
    syslog: SyslogStats,
    tls_handshake_errors: u64,
    /// Read buffers no HTTP connection holds now, the one given back last on top.
    reads: Vec<Vec<u8>>,
}

impl Worker {
    pub(crate) fn new(
        idx: usize,
        poll: Poll,
        inbox: Receiver<(TcpStream, Kind)>,
        shared: Arc<Shared>,
        seed: u64,
        udp: Option<mio::net::UdpSocket>,
    ) -> std::io::Result<Self> {
        let udp = match udp {
            None => None,
            Some(mut sock) => {
                poll.registry()
                    .register(&mut sock, UDP, Interest::READABLE)?;
                Some(udp::Rx::new(sock))
            }
        };
        Ok(Worker {
            poll,
            inbox,
            ctx: Ctx::new(shared.clone(), idx, seed),
            shared,
            idx,
            conns: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            generation: 0,
            again: Vec::new(),
            again_next: Vec::new(),
            // Whatever arrived before the thread ran is read on its first round.
            udp_again: udp.is_some(),
            udp,
            syslog: SyslogStats::default(),
            tls_handshake_errors: 0,
            reads: Vec::new(),
        })
    }

    pub(crate) fn run(mut self) {
        let mut events = Events::with_capacity(256);
        let mut drain_until: Option<Instant> = None;
        let mut last_read = Instant::now();
        loop {
            let mut timeout = if !self.again.is_empty() || self.udp_again {
                Some(Duration::ZERO)
            } else {
                self.timers
                    .peek()
                    .map(|Reverse((t, _, _))| t.saturating_duration_since(Instant::now()))
            };
            if drain_until.is_some() {
                timeout = Some(timeout.map_or(DRAIN_TICK, |t| t.min(DRAIN_TICK)));
            }
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                self.add_totals();
                return;
            }
            if self.shared.stopping() {
                let now = Instant::now();
                let until = *drain_until.get_or_insert_with(|| {
                    // What datagrams wait in the socket buffer are read once more.
                    self.udp_again = self.udp.is_some();
                    now + DRAIN
                });
                if !events.is_empty() || !self.again.is_empty() || self.udp_again {
                    last_read = now;
                }
                let read_all = !self.streams_open() || now >= last_read + DRAIN_QUIET;
                if (read_all && !self.udp_again) || now >= until {
                    self.add_totals();
                    return;
                }
            }
            for ev in events.iter() {
                if ev.token() == WAKE {
                    self.adopt();
                    continue;
                }
                if ev.token() == UDP {
                    self.udp_again = true;
                    continue;
                }
                let i = ev.token().0 - 1;
                match self.conns.get_mut(i) {
                    Some(Some(Slot::Http(c))) => {
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            c.read_blocked = false;
                        }
                        self.service(i);
                    }
                    Some(Some(Slot::Syslog(_) | Slot::Relp(_))) => self.service_syslog(i),
                    _ => {}
                }
            }
            if self.udp_again {
                self.service_udp();
            }
            if !self.again.is_empty() {
                std::mem::swap(&mut self.again, &mut self.again_next);
                let mut again = std::mem::take(&mut self.again_next);
                for &i in &again {
                    self.service_syslog(i);
                }
                again.clear();
                self.again_next = again;
            }
            self.fire_timers();
            self.add_totals();
        }
    }

    /// Whether a syslog or RELP connection is still open (its sender may have more written).
    fn streams_open(&self) -> bool {
        self.conns
            .iter()
            .any(|c| matches!(c, Some(Slot::Syslog(_) | Slot::Relp(_))))
    }

    /// Adds the syslog and TLS counts of this round to the worker's totals (one lock).
    #[allow(
        clippy::indexing_slicing,
        reason = "idx is this worker's own slot in totals (one per worker, given at spawn); i is \
                  a free connection slot popped from free, which holds only indices < conns.len()"
    )]
    fn add_totals(&mut self) {
        if self.syslog == SyslogStats::default() && self.tls_handshake_errors == 0 {
            return;
        }
        if let Ok(mut t) = self.shared.totals[self.idx].0.lock() {
            t.syslog.add(&self.syslog);
            t.events_received += self.syslog.messages();
            t.tls_handshake_errors += self.tls_handshake_errors;
        }
        self.syslog = SyslogStats::default();
        self.tls_handshake_errors = 0;
    }

    /// Receives datagrams until none is left or the turn is over.
    fn service_udp(&mut self) {
        self.udp_again = false;
        let Some(rx) = &mut self.udp else {
            return;
        };
        let t = &mut self.syslog;
        for _ in 0..UDP_BATCHES_PER_TURN {
            let n = match rx.recv() {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // WouldBlock: all read. Anything else (nothing is expected on an unconnected
                // socket): wait for the next readiness.
                Err(_) => return,
            };
            for i in 0..n {
                let (d, truncated) = rx.datagram(i);
                t.bytes += d.len() as u64;
                let msg = trim_end(d);
                if msg.is_empty() {
                    t.framing_errors += 1;
                    continue;
                }
                t.messages_udp += 1;
                t.udp_truncated += u64::from(truncated);
                self.ctx.rec.queue_first(rx.base(), msg);
            }
            self.ctx.rec.record(&self.shared.ledger, rx.base());
        }
        self.udp_again = true;
    }

    /// Reads and counts on syslog (or RELP) connection `i`.
    fn service_syslog(&mut self, i: usize) {
        let (rec, ledger, t) = (&mut self.ctx.rec, &self.shared.ledger, &mut self.syslog);
        let step = match self.conns.get_mut(i) {
            Some(Some(Slot::Syslog(c))) => c.drive(rec, ledger, t),
            Some(Some(Slot::Relp(c))) => c.drive(rec, ledger, t),
            _ => return,
        };
        match step {
            Step::Keep => {}
            Step::Again => self.again.push(i),
            Step::Close => self.close(i, false),
        }
    }

    /// Takes in the connections the acceptor sent.
    #[allow(
        clippy::indexing_slicing,
        reason = "idx is this worker's own slot in totals (one per worker, given at spawn); i is \
                  a free connection slot popped from free, which holds only indices < conns.len()"
    )]
    fn adopt(&mut self) {
        while let Ok((sock, kind)) = self.inbox.try_recv() {
            let tls = match kind {
                Kind::Http => self.shared.http_tls.as_ref(),
                Kind::SyslogTcp | Kind::Relp => None,
                Kind::SyslogTls => self.shared.syslog_tls.as_ref(),
            };
            let mut io = match tls {
                None => Io::plain(sock),
                Some(cfg) => match Io::tls(sock, cfg) {
                    Ok(io) => io,
                    Err(_) => continue,
                },
            };
            let i = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            if self
                .poll
                .registry()
                .register(
                    &mut io.sock,
                    Token(i + 1),
                    Interest::READABLE | Interest::WRITABLE,
                )
                .is_err()
            {
                self.free.push(i);
                continue;
            }
            if kind == Kind::Relp {
                self.conns[i] = Some(Slot::Relp(RelpConn::new(io)));
                self.service_syslog(i);
                continue;
            }
            if kind != Kind::Http {
                self.conns[i] = Some(Slot::Syslog(StreamConn::new(io, kind == Kind::SyslogTls)));
                self.service_syslog(i);
                continue;
            }
            self.generation += 1;
            self.conns[i] = Some(Slot::Http(Conn {
                io,
                generation: self.generation,
                rbuf: Vec::new(),
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
            }));
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
            let live = matches!(self.conns.get(i), Some(Some(Slot::Http(c))) if c.generation == generation && c.timer_at == Some(t));
            if live {
                if let Some(Some(Slot::Http(c))) = self.conns.get_mut(i) {
                    c.timer_at = None;
                }
                self.service(i);
            }
        }
    }

    /// Reads, answers and writes on connection `i` as far as it can go now.
    fn service(&mut self, i: usize) {
        let Some(Some(Slot::Http(c))) = self.conns.get_mut(i) else {
            return;
        };
        if c.rbuf.is_empty() {
            c.rbuf = self.reads.pop().unwrap_or_else(|| vec![0; INITIAL_READ]);
        }
        let next = drive(c, &mut self.ctx);
        match next {
            Next::Keep => {
                if let Some(t) = c.hold_until
                    && c.timer_at != Some(t)
                {
                    c.timer_at = Some(t);
                    self.timers.push(Reverse((t, i, c.generation)));
                }
                if c.start == c.end {
                    give_back(&mut self.reads, std::mem::take(&mut c.rbuf));
                    c.start = 0;
                    c.end = 0;
                }
            }
            Next::Close => self.close(i, false),
            Next::Reset => self.close(i, true),
        }
    }

    fn close(&mut self, i: usize, reset: bool) {
        let Some(slot) = self.conns.get_mut(i).and_then(Option::take) else {
            return;
        };
        let mut io = match slot {
            Slot::Http(c) => {
                if self.reads.len() < SPARE_READS {
                    give_back(&mut self.reads, c.rbuf);
                }
                c.io
            }
            Slot::Syslog(c) => c.io,
            Slot::Relp(c) => c.io,
        };
        if io.handshake_failed() {
            self.tls_handshake_errors += 1;
        }
        let _ = self.poll.registry().deregister(&mut io.sock);
        if reset {
            let _ = socket2::SockRef::from(&io.sock).set_linger(Some(Duration::ZERO));
        } else {
            io.close_notify();
        }
        drop(io);
        self.free.push(i);
    }
}

/// Puts a read buffer back on the worker's stack, unless it is none or larger than a buffer is
/// kept (`KEEP_READ`).
fn give_back(reads: &mut Vec<Vec<u8>>, rbuf: Vec<u8>) {
    if !rbuf.is_empty() && rbuf.len() <= KEEP_READ {
        reads.push(rbuf);
    }
}

/// A datagram without the LF (CR, NUL) many senders end it with.
fn trim_end(mut d: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r' | 0] = d {
        d = rest;
    }
    d
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
            match c.io.read(c.rbuf.get_mut(c.end..).unwrap_or_default()) {
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
        let drained = c.wbuf.is_empty() && !c.io.wants_write();
        let more = !c.closing && !c.peer_eof && !c.read_blocked && c.hold_until.is_none();
        if !(drained && more) {
            return Next::Keep;
        }
    }
}

/// Answers every complete request in the read buffer (in order).
fn process(c: &mut Conn, ctx: &mut Ctx) -> Next {
    while !c.closing && c.start < c.end && c.wbuf.len() - c.wpos <= MAX_PENDING_OUT {
        let avail = c.rbuf.get(c.start..c.end).unwrap_or_default();
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
                (avail.get(h.len..h.len + n).unwrap_or_default(), h.len + n)
            }
            Framing::Chunked => {
                let after_head = avail.get(h.len..).unwrap_or_default();
                match http::decode_chunked(after_head, &mut c.chunked, &mut c.chunk_pos) {
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
    let grown = need
        .saturating_add(need / 4)
        .max(c.rbuf.len() * 2)
        .min(MAX_READ);
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
        match c.io.write(c.wbuf.get(c.wpos..).unwrap_or_default()) {
            Ok(0) => return Next::Close,
            Ok(n) => c.wpos += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Keep,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
    }
    c.wbuf.clear();
    c.wpos = 0;
    // TLS: the response is taken; the ciphertext still has to go out.
    match c.io.flush() {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Keep,
        Err(_) => return Next::Close,
    }
    if c.closing || c.peer_eof {
        return Next::Close;
    }
    Next::Keep
}
