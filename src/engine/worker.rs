//! One worker: a pinned OS thread that owns a `mio::Poll`, its connections, its pacer share,
//! its generator, a pool of preallocated batch buffers and two latency histograms. Each loop
//! iteration reads the clock once, hands due batches (retries first) to idle connections,
//! writes until `WouldBlock`, reads and judges responses, and polls with a timeout to the next
//! deadline. Per-connection failures are counters and a reconnect, never a crash. Every second
//! it sends an `Interval` to the coordinator and takes back cleared histograms.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use hdrhistogram::Histogram;
use mio::{Events, Poll, Token};

use crate::adapter::gzip::Gzip;
use crate::adapter::syslog::SyslogFramer;
use crate::adapter::{Embed, Framer, Outcome, json_escape_into};
use crate::engine::pacer::Profile;
use crate::engine::{Abort, AbortReason};
use crate::generate::timeline::Timeline;
use crate::generate::{EventCtx, Generator, time};
use crate::net::conn::{Conn, ConnectError, ReadStatus, State};
use crate::net::http::write_request_head;
use crate::net::tls::TlsClient;
use crate::net::udp::{SendCost, UdpLink};
use crate::stats::{Counters, Interval, MAX_LATENCY_US, new_histogram};

/// How batches travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// HTTP/1.1 requests, one response per batch.
    Http,
    /// Syslog over TCP or TLS: a batch is done once written; there are no responses.
    SyslogStream,
    /// Syslog over UDP: one datagram per event.
    SyslogUdp,
}

/// Everything a worker needs, built by the coordinator.
pub struct WorkerPlan {
    pub mode: Mode,
    pub tls: Option<TlsClient>,
    /// The syslog framing (syslog modes only).
    pub syslog: Option<SyslogFramer>,
    /// UDP: send each batch's datagrams grouped by size (GSO), not in generation order.
    pub udp_by_size: bool,
    pub id: usize,
    pub threads: usize,
    pub core: Option<core_affinity::CoreId>,
    pub addr: SocketAddr,
    pub conns: usize,
    pub profile: Profile,
    pub stop_after: Option<Duration>,
    /// This worker's share of `stop.total_events`.
    pub total: Option<u64>,
    pub batch_events: usize,
    pub batch_bytes: usize,
    pub generator: Generator,
    pub timeline: Timeline,
    pub framer: Arc<Framer>,
    pub start: Instant,
    pub tx: Sender<Interval>,
    pub back: Receiver<(Histogram<u64>, Histogram<u64>)>,
    pub abort: Arc<Abort>,
    pub stopping: Arc<AtomicBool>,
    pub max_attempts: u32,
    pub request_timeout: Duration,
    pub drain_timeout: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Free,
    /// Waiting to be (re)sent at this instant.
    Waiting(Instant),
    /// On connection `usize`.
    InFlight(usize),
}

struct Batch {
    head: Vec<u8>,
    body: Vec<u8>,
    gz: Vec<u8>,
    /// UDP: where each datagram ends in `body`, and the order to send them in.
    ends: Vec<u32>,
    order: Vec<u32>,
    events: u64,
    intended: Instant,
    attempt_write: Instant,
    attempts: u32,
    state: SlotState,
}

impl Batch {
    fn wire(&self, gzip: bool) -> [&[u8]; 2] {
        [&self.head, if gzip { &self.gz } else { &self.body }]
    }
}

struct Link {
    conn: Conn,
    udp: UdpLink,
    batch: Option<usize>,
    /// Bytes written (TCP/TLS) or datagrams sent (UDP) of the batch in flight.
    offset: usize,
    /// When the batch in flight first found the socket buffer full.
    blocked_since: Option<Instant>,
    reconnect_at: Instant,
    backoff: Duration,
    was_open: bool,
}

const INTERVAL: Duration = Duration::from_secs(1);
/// A batch leaves at most this long after its first event is due, full or not.
pub const LINGER: Duration = Duration::from_secs(1);
/// How often a worker asks a HEC target which batches are indexed.
const ACK_POLL_EVERY: Duration = Duration::from_millis(500);
/// After `stop.after`, a worker may still send what was due by then for this long.
const FINAL_FLUSH: Duration = Duration::from_millis(250);
const UNREACHABLE_AFTER: Duration = Duration::from_secs(3);

pub fn run(mut p: WorkerPlan) {
    if let Some(core) = p.core {
        core_affinity::set_for_current(core);
    }
    let mut w = match Worker::new(&mut p) {
        Ok(w) => w,
        Err(e) => {
            p.abort.set(AbortReason::Io(format!(
                "worker {}: cannot create a poller: {e}",
                p.id
            )));
            let _ = p.tx.send(Interval {
                worker: p.id,
                counters: Counters::default(),
                latency: new_histogram(),
                service: new_histogram(),
                last: true,
            });
            return;
        }
    };
    w.run(&mut p);
}

struct Worker {
    poll: Poll,
    links: Vec<Link>,
    batches: Vec<Batch>,
    scratch: Vec<u8>,
    gzip: Gzip,
    counters: Counters,
    latency: Histogram<u64>,
    service: Histogram<u64>,
    /// Events rendered into batches so far (this worker's agent sequence).
    scheduled: u64,
    /// Events this worker will send in all: its share of the total, or what the schedule
    /// asks for up to `stop.after`.
    limit: u64,
    ever_connected: bool,
    last_connect_error: Option<String>,
    /// HEC indexer acknowledgement: the batch slot reserved for ack polls, ackIds waiting to
    /// be confirmed, the ids in the poll under way, and when to poll next.
    ack_slot: Option<usize>,
    ack_pending: Vec<u64>,
    ack_polling: Vec<u64>,
    next_ack_poll: Instant,
}

impl Worker {
    fn new(p: &mut WorkerPlan) -> std::io::Result<Worker> {
        let poll = Poll::new()?;
        let links = (0..p.conns)
            .map(|i| Link {
                conn: Conn::new(Token(i)),
                udp: UdpLink::new(Token(i)),
                batch: None,
                offset: 0,
                blocked_since: None,
                reconnect_at: p.start,
                backoff: Duration::from_millis(50),
                was_open: false,
            })
            .collect();
        // One batch per connection in flight plus as many waiting for a retry.
        let cap = p.batch_bytes + p.batch_bytes / 4 + 64 * 1024;
        let slots = p.conns * 2 + usize::from(p.framer.ack_path.is_some());
        let udp_events = if p.mode == Mode::SyslogUdp {
            p.batch_events
        } else {
            0
        };
        let batches = (0..slots)
            .map(|_| Batch {
                head: Vec::with_capacity(1024),
                body: Vec::with_capacity(cap),
                gz: Vec::with_capacity(if p.framer.gzip { cap } else { 0 }),
                ends: Vec::with_capacity(udp_events),
                order: Vec::with_capacity(udp_events),
                events: 0,
                intended: p.start,
                attempt_write: p.start,
                attempts: 0,
                state: SlotState::Free,
            })
            .collect();
        Ok(Worker {
            poll,
            links,
            batches,
            scratch: Vec::with_capacity(64 * 1024),
            gzip: Gzip::new(),
            counters: Counters::default(),
            latency: new_histogram(),
            service: new_histogram(),
            scheduled: 0,
            limit: {
                let by_time = p.stop_after.map_or(u64::MAX, |d| {
                    p.profile.cumulative(d.as_secs_f64()).floor() as u64
                });
                p.total.unwrap_or(u64::MAX).min(by_time)
            },
            ever_connected: false,
            last_connect_error: None,
            ack_slot: p.framer.ack_path.is_some().then_some(slots - 1),
            ack_pending: Vec::with_capacity(4096),
            ack_polling: Vec::with_capacity(1024),
            next_ack_poll: p.start,
        })
    }

    fn generation_done(&self, p: &WorkerPlan, now: Instant) -> bool {
        p.abort.is_set()
            || p.stopping.load(Ordering::Relaxed)
            || self.scheduled >= self.limit
            // A worker that fell behind stops at the deadline; the report shows the shortfall.
            || p.stop_after.is_some_and(|d| now.duration_since(p.start) >= d + FINAL_FLUSH)
    }

    /// The instant the next batch is due: when its last event is due, or `LINGER` after its
    /// first event is due, whichever comes first (so slow rates still send regularly).
    fn next_due(&self, p: &WorkerPlan) -> Option<Instant> {
        if self.scheduled >= self.limit {
            return None;
        }
        let full = (self.scheduled + p.batch_events as u64).min(self.limit);
        let t_full = p.profile.time_for(full as f64)?;
        let t_first = p.profile.time_for((self.scheduled + 1) as f64)?;
        let t = t_full.min(t_first + LINGER.as_secs_f64());
        Some(p.start + Duration::from_secs_f64(t))
    }

    /// How many events the batch sent at `now` carries: those due by now, at least one, at
    /// most a full batch.
    fn batch_size(&self, p: &WorkerPlan, now: Instant) -> u64 {
        let owed = p
            .profile
            .cumulative(now.duration_since(p.start).as_secs_f64())
            .floor() as u64;
        owed.saturating_sub(self.scheduled)
            .max(1)
            .min(p.batch_events as u64)
            .min(self.limit - self.scheduled)
    }

    fn run(&mut self, p: &mut WorkerPlan) {
        let mut events = Events::with_capacity(256);
        let mut next_interval = p.start + INTERVAL;
        let mut drain_deadline: Option<Instant> = None;
        loop {
            let now = Instant::now();
            let gen_done = self.generation_done(p, now);
            if gen_done && drain_deadline.is_none() {
                drain_deadline = Some(now + p.drain_timeout);
            }
            self.reconnect(p, now);
            self.check_timeouts(p, now);
            self.dispatch(p, now, gen_done);
            if !self.ever_connected
                && now.duration_since(p.start) > UNREACHABLE_AFTER
                && self.counters.connect_errors > 0
            {
                let why = self
                    .last_connect_error
                    .clone()
                    .unwrap_or_else(|| "no connection".into());
                p.abort.set(AbortReason::Unreachable(format!(
                    "cannot connect to {}: {why}",
                    p.addr
                )));
            }
            if now >= next_interval {
                self.send_interval(p, now, false);
                next_interval += INTERVAL;
                if next_interval < now {
                    next_interval = now + INTERVAL;
                }
            }
            let busy = self.batches.iter().any(|b| b.state != SlotState::Free)
                || !self.ack_pending.is_empty();
            if gen_done && (!busy || p.abort.is_set() || drain_deadline.is_some_and(|d| now >= d)) {
                self.give_up_unfinished();
                break;
            }
            let timeout = self.next_wakeup(p, now, gen_done, next_interval, drain_deadline);
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    p.abort.set(AbortReason::Io(format!("poll failed: {e}")));
                }
                continue;
            }
            let now = Instant::now();
            for ev in events.iter() {
                let i = ev.token().0;
                if i >= self.links.len() {
                    continue;
                }
                if self.links[i].conn.is_setting_up() {
                    self.finish_connect(p, i, now);
                    if !self.links[i].conn.is_open() {
                        continue;
                    }
                }
                if ev.is_writable() {
                    self.write(p, i, now);
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.read(p, i, now);
                }
            }
        }
        let now = Instant::now();
        self.send_interval(p, now, true);
        for l in &mut self.links {
            l.conn.close(self.poll.registry());
        }
    }

    fn next_wakeup(
        &self,
        p: &WorkerPlan,
        now: Instant,
        gen_done: bool,
        next_interval: Instant,
        drain: Option<Instant>,
    ) -> Duration {
        let mut at = next_interval;
        let idle_open = self
            .links
            .iter()
            .any(|l| l.conn.is_open() && l.batch.is_none());
        if idle_open {
            for b in &self.batches {
                if let SlotState::Waiting(t) = b.state {
                    at = at.min(t);
                }
            }
            if !gen_done && self.batches.iter().any(|b| b.state == SlotState::Free) {
                if let Some(due) = self.next_due(p) {
                    at = at.min(due);
                }
                if let Some(d) = p.stop_after {
                    at = at.min(p.start + d);
                }
            }
        }
        for l in &self.links {
            if l.conn.state == State::Closed {
                at = at.min(l.reconnect_at);
            }
            if let Some(b) = l.batch {
                at = at.min(self.batches[b].attempt_write + p.request_timeout);
            }
        }
        if let Some(d) = drain {
            at = at.min(d);
        }
        at.saturating_duration_since(now)
            .min(Duration::from_millis(250))
    }

    fn reconnect(&mut self, p: &WorkerPlan, now: Instant) {
        for i in 0..self.links.len() {
            let l = &mut self.links[i];
            if l.conn.state != State::Closed || now < l.reconnect_at {
                continue;
            }
            if p.mode == Mode::SyslogUdp {
                match l.udp.open(p.addr, true, self.poll.registry()) {
                    Ok(()) => {
                        l.conn.state = State::Open;
                        self.ever_connected = true;
                    }
                    Err(e) => self.connect_failed(i, now, e.to_string()),
                }
                continue;
            }
            if let Err(e) = l.conn.connect(p.addr, p.tls.as_ref(), self.poll.registry()) {
                self.connect_failed(i, now, e.to_string());
            }
        }
    }

    fn finish_connect(&mut self, p: &mut WorkerPlan, i: usize, now: Instant) {
        match self.links[i].conn.progress() {
            Ok(true) => {
                let l = &mut self.links[i];
                if l.was_open {
                    self.counters.reconnects += 1;
                }
                l.was_open = true;
                l.backoff = Duration::from_millis(50);
                self.ever_connected = true;
                self.dispatch(p, now, self.generation_done(p, now));
            }
            Ok(false) => {}
            Err(ConnectError::Tls(why)) => {
                // A certificate problem does not fix itself: stop the run and say why.
                let registry = self.poll.registry();
                self.links[i].conn.close(registry);
                self.counters.connect_errors += 1;
                p.abort.set(AbortReason::Tls(format!("{}: {why}", p.addr)));
            }
            Err(e) => {
                let registry = self.poll.registry();
                self.links[i].conn.close(registry);
                self.connect_failed(i, now, e.to_string());
            }
        }
    }

    fn connect_failed(&mut self, i: usize, now: Instant, why: String) {
        self.counters.connect_errors += 1;
        self.last_connect_error = Some(why);
        let l = &mut self.links[i];
        l.reconnect_at = now + l.backoff;
        l.backoff = (l.backoff * 2).min(Duration::from_secs(1));
        if let Some(b) = l.batch.take() {
            self.batches[b].state = SlotState::Waiting(now);
        }
    }

    /// Hands work to every idle open connection: retries whose time has come first, then new
    /// batches that are due.
    fn dispatch(&mut self, p: &mut WorkerPlan, now: Instant, gen_done: bool) {
        for i in 0..self.links.len() {
            if !self.links[i].conn.is_open() || self.links[i].batch.is_some() {
                continue;
            }
            if self.start_ack_poll(p, i, now) {
                continue;
            }
            let retry = self
                .batches
                .iter()
                .enumerate()
                .filter_map(|(k, b)| match b.state {
                    SlotState::Waiting(t) if t <= now => Some((t, k)),
                    _ => None,
                })
                .min();
            let slot = match retry {
                Some((_, k)) => {
                    self.counters.batches_retried += 1;
                    k
                }
                None => {
                    if gen_done {
                        continue;
                    }
                    let Some(due) = self.next_due(p) else {
                        continue;
                    };
                    if due > now {
                        break;
                    }
                    let ack_slot = self.ack_slot;
                    let Some(k) = self
                        .batches
                        .iter()
                        .enumerate()
                        .position(|(k, b)| b.state == SlotState::Free && Some(k) != ack_slot)
                    else {
                        break;
                    };
                    self.render(p, k, due, now);
                    if self.batches[k].events == 0 {
                        continue;
                    }
                    let lag = now.saturating_duration_since(due).as_nanos() as u64;
                    self.counters.lag_ns_sum += lag;
                    self.counters.lag_ns_max = self.counters.lag_ns_max.max(lag);
                    self.counters.events_sent += self.batches[k].events;
                    k
                }
            };
            let b = &mut self.batches[slot];
            b.attempts += 1;
            b.attempt_write = now;
            b.state = SlotState::InFlight(i);
            self.counters.batches_sent += 1;
            self.counters.bytes_sent +=
                (b.wire(p.framer.gzip)[0].len() + b.wire(p.framer.gzip)[1].len()) as u64;
            self.links[i].batch = Some(slot);
            self.links[i].offset = 0;
            self.write(p, i, now);
        }
    }

    /// Sends an ack poll on link `i` when one is due; true if it did.
    fn start_ack_poll(&mut self, p: &WorkerPlan, i: usize, now: Instant) -> bool {
        let (Some(a), Some(path)) = (self.ack_slot, p.framer.ack_path.as_deref()) else {
            return false;
        };
        if self.batches[a].state != SlotState::Free
            || self.ack_pending.is_empty()
            || now < self.next_ack_poll
        {
            return false;
        }
        let n = self.ack_pending.len().min(1000);
        self.ack_polling.clear();
        self.ack_polling.extend(self.ack_pending.drain(..n));
        let b = &mut self.batches[a];
        crate::adapter::ack_poll_body(&self.ack_polling, &mut b.body);
        if p.framer.gzip {
            self.gzip.compress(&b.body, &mut b.gz);
        }
        let len = if p.framer.gzip {
            b.gz.len()
        } else {
            b.body.len()
        };
        write_request_head(&mut b.head, path, &p.framer.host, &p.framer.headers, len);
        b.events = 0;
        b.intended = now;
        b.attempt_write = now;
        b.attempts = 1;
        b.state = SlotState::InFlight(i);
        self.counters.bytes_sent += (b.head.len() + len) as u64;
        self.links[i].batch = Some(a);
        self.links[i].offset = 0;
        self.write(p, i, now);
        true
    }

    /// Renders the next batch into slot `k`.
    fn render(&mut self, p: &mut WorkerPlan, k: usize, due: Instant, now: Instant) {
        let limit = self.batch_size(p, now);
        let f = &*p.framer;
        let b = &mut self.batches[k];
        let wall = time::now();
        b.ends.clear();
        if p.syslog.is_some() {
            b.body.clear();
        } else {
            f.begin(&mut b.body);
        }
        let mut n = 0u64;
        let mut skipped = 0u64;
        while n < limit {
            let seq = self.scheduled + n;
            let index = seq * p.threads as u64 + p.id as u64;
            let ctx = EventCtx {
                index,
                time_ns: p.timeline.time_of(index, wall),
                agent: p.id as u32,
                seq,
            };
            if let Some(sf) = &mut p.syslog {
                let before = b.body.len();
                let generator = &mut p.generator;
                let fits = sf.append(ctx.time_ns, &mut b.body, &mut self.scratch, |out| {
                    generator.render(&ctx, out);
                });
                if !fits {
                    // Never cut a message to fit: count it (sent and failed) and leave it out.
                    self.counters.oversize_events += 1;
                    self.counters.events_sent += 1;
                    self.counters.events_failed += 1;
                    skipped += 1;
                } else if b.body.len() > p.batch_bytes && n > 0 {
                    b.body.truncate(before);
                    break;
                } else if p.mode == Mode::SyslogUdp {
                    b.ends.push(b.body.len() as u32);
                }
                n += 1;
                continue;
            }
            let before = b.body.len();
            f.before_event(&mut b.body, n as usize, ctx.time_ns);
            match f.embed {
                Embed::Direct => {
                    p.generator.render(&ctx, &mut b.body);
                }
                Embed::JsonString => {
                    self.scratch.clear();
                    p.generator.render(&ctx, &mut self.scratch);
                    json_escape_into(&self.scratch, &mut b.body);
                }
            }
            f.after_event(&mut b.body);
            if b.body.len() + 2 > p.batch_bytes && n > 0 {
                // Over the byte limit: this event starts the next batch.
                b.body.truncate(before);
                break;
            }
            n += 1;
        }
        self.scheduled += n;
        b.events = n - skipped;
        b.intended = due;
        b.attempts = 0;
        if p.syslog.is_some() {
            // Syslog has no request head: the batch is the framed messages.
            b.head.clear();
            if p.mode == Mode::SyslogUdp {
                udp_order(&b.ends, p.udp_by_size, &mut b.order);
            }
            return;
        }
        f.finish(&mut b.body);
        if f.gzip {
            self.gzip.compress(&b.body, &mut b.gz);
        }
        let len = if f.gzip { b.gz.len() } else { b.body.len() };
        write_request_head(&mut b.head, &f.path, &f.host, &f.headers, len);
    }

    fn write(&mut self, p: &WorkerPlan, i: usize, now: Instant) {
        let Some(slot) = self.links[i].batch else {
            if self.links[i].conn.pending_tls() && self.links[i].conn.flush().is_err() {
                self.connection_lost(i, now);
            }
            return;
        };
        if p.mode == Mode::SyslogUdp {
            let b = &self.batches[slot];
            let from = self.links[i].offset;
            let mut cost = SendCost::default();
            let sent = self.links[i]
                .udp
                .send_batch(&b.body, &b.ends, &b.order, from, &mut cost);
            self.counters.udp_send_calls += cost.calls;
            self.counters.udp_gso_sends += cost.gso_sends;
            if cost.gso_refused > 0 {
                self.counters.udp_gso_refused += cost.gso_refused;
                if let Some(why) = self.links[i].udp.gso_refused() {
                    eprintln!(
                        "note: udp://{}: {why}; sending datagram by datagram",
                        p.addr
                    );
                }
            }
            match sent {
                Ok(n) => {
                    self.links[i].offset = n;
                    if n >= self.batches[slot].ends.len() {
                        self.written(i, slot, now);
                    } else {
                        self.links[i].blocked_since.get_or_insert(now);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    p.abort.set(AbortReason::Unreachable(format!(
                        "udp://{}: port unreachable (ICMP): nothing listens there",
                        p.addr
                    )));
                }
                Err(_) => self.connection_lost(i, now),
            }
            return;
        }
        let wire = self.batches[slot].wire(p.framer.gzip);
        let total = wire[0].len() + wire[1].len();
        let off = self.links[i].offset;
        let result = if off >= total {
            self.links[i].conn.flush().map(|_| off)
        } else {
            self.links[i].conn.write_from(wire, off)
        };
        match result {
            Ok(n) => {
                self.links[i].offset = n;
                if n < total || self.links[i].conn.pending_tls() {
                    self.links[i].blocked_since.get_or_insert(now);
                } else if p.mode == Mode::SyslogStream {
                    self.written(i, slot, now);
                }
            }
            Err(_) => self.connection_lost(i, now),
        }
    }

    /// Batch `slot` is done (accepted, or written for syslog): count it, record both latencies
    /// (from the schedule and from the write of this attempt), free the slot.
    fn accepted(&mut self, slot: usize, now: Instant) {
        let b = &mut self.batches[slot];
        self.counters.events_accepted += b.events;
        self.counters.batches_accepted += 1;
        let lat = now.saturating_duration_since(b.intended).as_micros() as u64;
        let svc = now.saturating_duration_since(b.attempt_write).as_micros() as u64;
        self.latency.saturating_record(lat.clamp(1, MAX_LATENCY_US));
        self.service.saturating_record(svc.clamp(1, MAX_LATENCY_US));
        b.state = SlotState::Free;
    }

    /// A syslog batch is fully handed to the kernel: that is all syslog can tell.
    fn written(&mut self, i: usize, slot: usize, now: Instant) {
        self.accepted(slot, now);
        let l = &mut self.links[i];
        if let Some(since) = l.blocked_since.take() {
            self.counters.send_blocked_ns += now.saturating_duration_since(since).as_nanos() as u64;
        }
        l.batch = None;
        l.offset = 0;
    }

    fn read(&mut self, p: &mut WorkerPlan, i: usize, now: Instant) {
        match p.mode {
            Mode::SyslogUdp => return,
            Mode::SyslogStream => {
                // Receivers send nothing; reading shows when they close.
                match self.links[i].conn.discard_input() {
                    Ok(ReadStatus::Drained) => {}
                    Ok(ReadStatus::Eof) | Err(_) => self.connection_lost(i, now),
                }
                return;
            }
            Mode::Http => {}
        }
        let status = match self.links[i].conn.read_available() {
            Ok(s) => s,
            Err(_) => {
                self.connection_lost(i, now);
                return;
            }
        };
        let eof = status == ReadStatus::Eof;
        loop {
            let polled = self.links[i].conn.reader.poll(eof);
            match polled {
                Ok(Some((resp, used))) => {
                    let body = self.links[i].conn.reader.body(&resp);
                    let outcome = p.framer.outcome(&resp, body);
                    if self.links[i].batch.is_some() && self.links[i].batch == self.ack_slot {
                        // An ack poll: confirmed ids are counted, the others asked about again.
                        let ok = matches!(outcome, Outcome::Accepted { .. });
                        for id in self.ack_polling.drain(..) {
                            if ok && crate::adapter::is_acked(body, id) {
                                self.counters.batches_acked += 1;
                            } else {
                                self.ack_pending.push(id);
                            }
                        }
                        self.next_ack_poll = now + ACK_POLL_EVERY;
                        if let Some(a) = self.links[i].batch.take() {
                            self.batches[a].state = SlotState::Free;
                        }
                        self.links[i].conn.reader.consume(used);
                        if resp.close {
                            self.close_link(i, now, Duration::ZERO);
                            return;
                        }
                        continue;
                    }
                    if let Some(code) = p.framer.hec_code(body)
                        && (0..32).contains(&code)
                    {
                        self.counters.hec_codes[code as usize] += 1;
                    }
                    if (resp.status as usize) < self.counters.status.len() {
                        self.counters.status[resp.status as usize] += 1;
                    }
                    self.links[i].conn.reader.consume(used);
                    let written_all = self.links[i].batch.is_some_and(|b| {
                        let w = self.batches[b].wire(p.framer.gzip);
                        self.links[i].offset >= w[0].len() + w[1].len()
                    });
                    self.finish_batch(p, i, outcome, now);
                    if resp.close || !written_all {
                        // A response before the whole request went out leaves the stream
                        // out of step: start over on a fresh connection.
                        self.close_link(i, now, Duration::ZERO);
                        return;
                    }
                }
                Ok(None) => break,
                Err(_) => {
                    self.counters.protocol_errors += 1;
                    self.connection_lost(i, now);
                    return;
                }
            }
        }
        if eof {
            self.connection_lost(i, now);
        }
    }

    fn finish_batch(&mut self, p: &mut WorkerPlan, i: usize, outcome: Outcome, now: Instant) {
        let Some(slot) = self.links[i].batch.take() else {
            // A response nobody asked for.
            self.counters.protocol_errors += 1;
            return;
        };
        let b = &mut self.batches[slot];
        match outcome {
            Outcome::Accepted { ack_id } => {
                if let (Some(id), Some(_)) = (ack_id, self.ack_slot) {
                    self.ack_pending.push(id);
                }
                self.accepted(slot, now);
            }
            Outcome::Retry { after_s } => {
                if b.attempts >= p.max_attempts {
                    self.counters.events_failed += b.events;
                    self.counters.batches_failed += 1;
                    b.state = SlotState::Free;
                } else {
                    let wait = match after_s {
                        Some(s) => Duration::from_secs(u64::from(s)),
                        None => backoff(b.attempts, b.intended),
                    };
                    b.state = SlotState::Waiting(now + wait);
                }
            }
            Outcome::AuthFailed => {
                self.counters.auth_failures += 1;
                self.counters.events_failed += b.events;
                self.counters.batches_failed += 1;
                b.state = SlotState::Free;
                p.abort.set(AbortReason::Auth(
                    "the target refused the credentials (HTTP 401/403)".into(),
                ));
            }
            Outcome::Failed => {
                self.counters.events_failed += b.events;
                self.counters.batches_failed += 1;
                b.state = SlotState::Free;
            }
        }
    }

    /// The connection broke: count it, resend its batch on another attempt, reconnect.
    fn connection_lost(&mut self, i: usize, now: Instant) {
        self.counters.connection_resets += 1;
        self.close_link(i, now, Duration::from_millis(10));
    }

    fn close_link(&mut self, i: usize, now: Instant, delay: Duration) {
        let registry = self.poll.registry();
        let l = &mut self.links[i];
        l.conn.close(registry);
        l.udp.close(registry);
        l.blocked_since = None;
        l.reconnect_at = now + delay;
        if let Some(b) = l.batch.take() {
            if Some(b) == self.ack_slot {
                // An ack poll is simply asked again later.
                self.ack_pending.append(&mut self.ack_polling);
                self.batches[b].state = SlotState::Free;
            } else {
                self.batches[b].state = SlotState::Waiting(now);
            }
        }
    }

    fn check_timeouts(&mut self, p: &WorkerPlan, now: Instant) {
        for i in 0..self.links.len() {
            if let Some(b) = self.links[i].batch
                && now.duration_since(self.batches[b].attempt_write) > p.request_timeout
            {
                self.counters.timeouts += 1;
                self.close_link(i, now, Duration::ZERO);
            }
        }
    }

    /// At the end: batches never accepted count as failed; unconfirmed acks are reported.
    fn give_up_unfinished(&mut self) {
        self.counters.acks_pending += (self.ack_pending.len() + self.ack_polling.len()) as u64;
        self.ack_pending.clear();
        self.ack_polling.clear();
        let ack_slot = self.ack_slot;
        for (k, b) in self.batches.iter_mut().enumerate() {
            if Some(k) == ack_slot {
                b.state = SlotState::Free;
                continue;
            }
            if b.state != SlotState::Free {
                self.counters.events_failed += b.events;
                self.counters.batches_failed += 1;
                b.state = SlotState::Free;
            }
        }
    }

    fn send_interval(&mut self, p: &WorkerPlan, now: Instant, last: bool) {
        let elapsed = now.duration_since(p.start).as_secs_f64();
        let owed = p.profile.cumulative(elapsed) as u64;
        let owed = p.total.map_or(owed, |t| owed.min(t));
        self.counters.backlog_events = if last {
            0
        } else {
            owed.saturating_sub(self.scheduled)
        };
        let (lat, svc) = match p.back.try_recv() {
            Ok(pair) => pair,
            Err(_) => (new_histogram(), new_histogram()),
        };
        let latency = std::mem::replace(&mut self.latency, lat);
        let service = std::mem::replace(&mut self.service, svc);
        let counters = std::mem::take(&mut self.counters);
        let _ = p.tx.send(Interval {
            worker: p.id,
            counters,
            latency,
            service,
            last,
        });
    }
}

/// The order a UDP batch's datagrams leave in: by size, longest first (runs of one size, each
/// able to end with one shorter datagram, as GSO wants; generation order within a size), or
/// as generated. Sorts in place without allocating.
fn udp_order(ends: &[u32], by_size: bool, order: &mut Vec<u32>) {
    order.clear();
    order.extend(0..ends.len() as u32);
    if by_size {
        let len = |i: u32| ends[i as usize] - if i == 0 { 0 } else { ends[i as usize - 1] };
        order.sort_unstable_by_key(|&i| (std::cmp::Reverse(len(i)), i));
    }
}

/// Exponential backoff with jitter: 100 ms × 2^attempt, at most 5 s, ±25 % (the jitter comes
/// from the batch's schedule, so it needs no random number generator).
fn backoff(attempts: u32, intended: Instant) -> Duration {
    let base = 100u64 << attempts.min(6);
    let base = base.min(5000);
    let h = {
        use std::hash::{Hash, Hasher};
        let mut s = std::collections::hash_map::DefaultHasher::new();
        intended.hash(&mut s);
        attempts.hash(&mut s);
        s.finish()
    };
    let jitter = (h % (base / 2 + 1)) as i64 - (base / 4) as i64;
    Duration::from_millis((base as i64 + jitter).max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_bounded() {
        let t = Instant::now();
        let b1 = backoff(1, t).as_millis();
        let b3 = backoff(3, t).as_millis();
        let b20 = backoff(20, t).as_millis();
        assert!((150..=250).contains(&b1), "{b1}");
        assert!((600..=1000).contains(&b3), "{b3}");
        assert!((3750..=6250).contains(&b20), "{b20}");
    }

    #[test]
    fn udp_order_groups_by_size_longest_first_keeping_generation_order_within_a_size() {
        // Datagram lengths 3, 5, 3, 1, 5, 3 (ends are cumulative).
        let ends = [3, 8, 11, 12, 17, 20];
        let mut order = Vec::with_capacity(ends.len());
        udp_order(&ends, true, &mut order);
        assert_eq!(order, [1, 4, 0, 2, 5, 3]);
        udp_order(&ends, false, &mut order);
        assert_eq!(order, [0, 1, 2, 3, 4, 5]);
        udp_order(&[], true, &mut order);
        assert!(order.is_empty());
    }
}
