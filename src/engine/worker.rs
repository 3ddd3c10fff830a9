//! One worker: a pinned OS thread that owns a `mio::Poll`, its links to the target, its share
//! of the schedule, its generator, a pool of preallocated batch buffers and two latency
//! histograms. Each loop iteration reads the clock once, looks whether the schedule changed
//! (one atomic load), hands due batches (retries first) to idle links, writes until
//! `WouldBlock`, reads and judges answers, and polls with a timeout to the next deadline.
//! How batches travel is one `Proto` (HTTP with optional HEC acknowledgement, a syslog stream,
//! syslog datagrams, syslog over RELP: `relp_io.rs`) and each link one `Socket` (a TCP/TLS
//! stream or a UDP socket), so no branch asks "which mode" twice. Per-link failures are
//! counters and a reconnect, never a crash. Every second it sends an `Interval` to the
//! coordinator and takes back cleared histograms.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use hdrhistogram::Histogram;
use mio::{Events, Poll, Token};

use crate::adapter::gzip::Gzip;
use crate::adapter::hec_ack::AckTracker;
use crate::adapter::relp::{Frames, Session};
use crate::adapter::syslog::SyslogFramer;
use crate::adapter::{Embed, EventId, Framer, Outcome, json_escape_into};
use crate::engine::Abort;
use crate::engine::lane::Lane;
use crate::engine::mix::{Framings, Mix};
use crate::engine::schedule::{Schedule, ScheduleCell};
use crate::generate::timeline::Timeline;
use crate::generate::{EventCtx, Generator, time};
use crate::net::conn::{Conn, ConnectError, Peer, ReadStatus, State};
use crate::net::http::{rehost, write_request_head};
use crate::net::tls::TlsClient;
use crate::net::udp::{SendCost, UdpLink};
use crate::stats::parts::{LinkEvent, PartCounts, Parts};
use crate::stats::phases::{self, Phases};
use crate::stats::result::AbortReason;
use crate::stats::{
    AgentAccount, BySecond, Counters, Interval, MAX_LATENCY_US, Recycled, Scheduled, WarmTail,
    add_by_second, new_histogram,
};

mod bulk_io;
mod confirm;
mod http_io;
mod reach;
mod relp_io;

use confirm::{Pending, Unconfirmed};

/// How batches travel, as the coordinator hands it to each worker.
#[derive(Clone)]
pub enum WirePlan {
    /// HTTP/1.1 requests (TLS for https), one answer per batch.
    Http {
        framer: Arc<Framer>,
        tls: Option<TlsClient>,
    },
    /// Syslog over TCP or TLS: there are no answers; a written batch is accepted once the
    /// peer's TCP has taken it and kept the connection (`confirm.rs`).
    SyslogStream {
        framer: SyslogFramer,
        tls: Option<TlsClient>,
    },
    /// Syslog over UDP: one datagram per event; `by_size` sends each batch's datagrams
    /// grouped by size (GSO), not in generation order.
    SyslogDatagram { framer: SyslogFramer, by_size: bool },
    /// Syslog over RELP (TLS for relp+tls): one frame per message, each answered; at most
    /// `window` frames unanswered per connection.
    Relp {
        framer: SyslogFramer,
        tls: Option<TlsClient>,
        window: usize,
    },
}

/// One of several targets (`target.url` as a list): where its connections go, its TLS client
/// (its name), and the `Host` its requests carry.
#[derive(Clone)]
pub struct TargetAddr {
    pub addr: SocketAddr,
    pub tls: Option<TlsClient>,
    pub host_port: String,
}

/// Limits on waiting and trying again.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// An attempt without an answer for this long is a timeout (the link reconnects).
    pub request: Duration,
    /// After the schedule ends, answers in flight are waited for this long.
    pub drain: Duration,
    /// Sends of one batch in all, first included, whatever made it go again (a refusal
    /// asking for a retry, a reset, a timeout).
    pub max_attempts: u32,
    /// From a batch's first send, how long it may keep being retried.
    pub max_retry_time: Duration,
}

/// Everything a worker needs, built by the coordinator.
pub struct WorkerPlan {
    pub wire: WirePlan,
    pub id: usize,
    /// The accounting agent this worker's tags carry (its shard's first plus `id`).
    pub agent: u32,
    pub threads: usize,
    pub core: Option<core_affinity::CoreId>,
    pub addr: SocketAddr,
    /// Connect to this Unix socket instead of `addr` (plain HTTP's `--unix-socket`).
    pub unix: Option<Arc<std::path::Path>>,
    /// Several targets: link `i` of worker `id` connects to target `(id + i) % n` (each
    /// worker's links round robin over the targets, each worker starting one further on);
    /// empty for one target (`addr`).
    pub targets: Vec<TargetAddr>,
    pub conns: usize,
    /// This worker's part of the global schedule.
    pub share: f64,
    pub schedule: Arc<ScheduleCell>,
    /// `stop.after` in schedule seconds.
    pub stop_after: Option<Duration>,
    /// This worker's share of `stop.total_events`.
    pub total: Option<u64>,
    pub batch_events: usize,
    pub batch_bytes: usize,
    /// The source packs' generators, one per source of a mix; none for a plain HTTP load
    /// with a fixed body.
    pub generators: Vec<Generator>,
    /// A mix of sources: which source each event is, and each source's framing.
    pub mix: Option<Mix>,
    /// A recording replayed line by line instead of packs.
    pub replay: Option<crate::generate::replay::Replayer>,
    pub timeline: Timeline,
    pub start: Instant,
    /// The wall clock at `start`, ns since the epoch, when tags carry their send time.
    pub start_wall_ns: Option<i64>,
    pub poll: Poll,
    pub tx: Sender<Interval>,
    pub back: Receiver<Recycled>,
    pub abort: Arc<Abort>,
    pub timeouts: Timeouts,
    /// `workload.warmup` in whole seconds: the figures of its batches counted after it go
    /// apart from what is measured (0: none).
    pub warmup_s: u32,
    /// This worker's share of `limits.max_requests_per_sec`: at most one request per this.
    pub request_every: Option<Duration>,
    /// The scenario lane: this worker plays a scenario's events instead of its share of the
    /// background schedule.
    pub lane: Option<Lane>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Free,
    /// Waiting to be (re)sent at this instant.
    Waiting(Instant),
    /// On link `usize`.
    InFlight(usize),
}

struct Batch {
    head: Vec<u8>,
    body: Vec<u8>,
    /// A plain HTTP load's fixed body, sent from the one shared buffer instead of `body`.
    shared: Option<Arc<[u8]>>,
    gz: Vec<u8>,
    /// UDP: where each datagram ends in `body`, and the order to send them in. RELP: where
    /// each message ends, and in `order` each one's seq less `first_seq` at render.
    ends: Vec<u32>,
    order: Vec<u32>,
    events: u64,
    /// In a mix: how many of its events are of each source.
    parts: PartCounts,
    /// Several targets: the target its head names (`Host`), and the one its last attempt
    /// went to.
    host_of: usize,
    target: usize,
    /// The seq of its first event and how many seqs it spans (events left out as oversize
    /// among them).
    first_seq: u64,
    seqs: u64,
    /// Send the body as it is even when the data is gzipped (HEC ack polls).
    plain: bool,
    /// `_bulk`: the seq of event 0 at render (`order` holds each event's seq less it), each
    /// event's source in a mix, whether the next send resends items an answer asked for again
    /// (`events_resent`), and how many of its items failed for good so far.
    base_seq: u64,
    part_of: Vec<u8>,
    resend: bool,
    items_failed: u64,
    intended: Instant,
    /// The second its events are due in (from the start): where its figures count.
    second: u32,
    /// The first send of this batch (retry time counts from it).
    first_write: Instant,
    attempt_write: Instant,
    attempts: u32,
    /// What its last attempt met: the answer's status, or 0 for a broken connection or a
    /// timeout (what a batch given up after its retries is counted by).
    last_cause: u16,
    state: SlotState,
}

impl Batch {
    fn wire(&self, gzip: bool) -> [&[u8]; 2] {
        if let Some(fixed) = &self.shared {
            return [&self.head, fixed];
        }
        [
            &self.head,
            if gzip && !self.plain {
                &self.gz
            } else {
                &self.body
            },
        ]
    }

    fn wire_len(&self, gzip: bool) -> usize {
        let w = self.wire(gzip);
        w[0].len() + w[1].len()
    }

    /// The body is complete: compressed when `f` says gzip, and the request head written for
    /// what goes on the wire.
    fn seal(&mut self, f: &Framer, gzip: &mut Gzip) {
        let len = if f.gzip {
            gzip.compress(&self.body, &mut self.gz);
            self.gz.len()
        } else {
            self.body.len()
        };
        write_request_head(&mut self.head, f.method, &f.path, &f.host, &f.headers, len);
    }
}

/// How batches travel, with the state that needs.
enum Proto {
    Http {
        framer: Arc<Framer>,
        acks: Option<AckTracker>,
        gzip: Gzip,
    },
    Stream {
        framer: SyslogFramer,
    },
    Datagram {
        framer: SyslogFramer,
        by_size: bool,
    },
    /// A RELP session per link and the fate of each message per batch slot.
    Relp {
        framer: SyslogFramer,
        sessions: Vec<Session>,
        frames: Vec<Frames>,
    },
}

#[allow(
    clippy::indexing_slicing,
    reason = "`i` is a link index (< links.len()) and RELP `sessions` has one entry per link"
)]
impl Proto {
    fn gzip(&self) -> bool {
        matches!(self, Proto::Http { framer, .. } if framer.gzip)
    }

    /// Whether link `i`'s connection may take a batch (a RELP session must be open first).
    fn ready(&self, i: usize) -> bool {
        match self {
            Proto::Relp { sessions, .. } => sessions[i].is_open(),
            _ => true,
        }
    }
}

/// A link's socket.
enum Socket {
    Stream(Box<Conn>),
    Datagram(UdpLink),
}

impl Socket {
    fn is_open(&self) -> bool {
        match self {
            Socket::Stream(c) => c.is_open(),
            Socket::Datagram(u) => u.is_open(),
        }
    }

    fn is_closed(&self) -> bool {
        match self {
            Socket::Stream(c) => c.state == State::Closed,
            Socket::Datagram(u) => !u.is_open(),
        }
    }

    fn is_setting_up(&self) -> bool {
        matches!(self, Socket::Stream(c) if c.is_setting_up())
    }

    fn close(&mut self, registry: &mio::Registry) {
        match self {
            Socket::Stream(c) => c.close(registry),
            Socket::Datagram(u) => u.close(registry),
        }
    }
}

struct Link {
    sock: Socket,
    batch: Option<usize>,
    /// Bytes written (TCP/TLS) or datagrams sent (UDP) of the batch in flight.
    offset: usize,
    /// Since when the batch in flight has been held by a full socket buffer (moved on as the
    /// time is counted into `send_blocked_ns`).
    blocked_since: Option<Instant>,
    /// Syslog: batches written on this connection and waiting to be confirmed, how far its
    /// peer's TCP has acknowledged its bytes and whether its application reads (its window
    /// open again) at the last check, and why its connection ends when it does (`confirm.rs`).
    waiting: u32,
    acked: u64,
    reading: bool,
    end_cause: Unconfirmed,
    reconnect_at: Instant,
    backoff: Duration,
    /// Connection attempts made on this link so far (every one after the first is a
    /// reconnect attempt).
    connects: u64,
    /// Plain HTTP phases: when this link's connection setup began, the setup's connect and
    /// TLS time until a request carries them, and the marks of the request in flight.
    setup_began: Instant,
    setup: Option<(u64, u64)>,
    marks: Marks,
    /// Its target (an index into `WorkerPlan::targets`; 0 with one target).
    target: usize,
}

/// When the request in flight on a link started, was written, and met its answer's first byte.
#[derive(Clone, Copy)]
struct Marks {
    start: Instant,
    written: Option<Instant>,
    first_byte: Option<Instant>,
}

impl Marks {
    /// The phases of the request answered at `done`, after `setup` (connect, TLS) if it
    /// opened its connection.
    fn phases(&self, setup: Option<(u64, u64)>, done: Instant) -> phases::Request {
        let ns = |a: Instant, b: Instant| b.saturating_duration_since(a).as_nanos() as u64;
        let first = self.first_byte.unwrap_or(done);
        let written = self.written.unwrap_or(first).min(first);
        let (connect, tls) = setup.unwrap_or((0, 0));
        phases::Request {
            connect,
            tls,
            write: ns(self.start, written),
            wait: ns(written, first),
            read: ns(first, done),
        }
    }
}

/// Why a due batch could not leave (measured from one loop iteration to the next).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// Every open connection has a request in flight, or every slot waits for a retry.
    Target,
    /// No connection is open.
    TargetDown,
    /// The request cap says not yet.
    Cap,
}

const INTERVAL: Duration = Duration::from_secs(1);
/// `_bulk` item errors a worker keeps as text for the report.
const MAX_ITEM_ERRORS: usize = 3;
/// A batch leaves at most this long after its first event is due, full or not.
pub const LINGER: Duration = Duration::from_secs(1);
/// After `stop.after`, a worker may still send what was due by then for this long.
const FINAL_FLUSH: Duration = Duration::from_millis(250);
const UNREACHABLE_AFTER: Duration = crate::net::conn::FIRST_SETUP_WAIT;
/// The poller token of the waker that tells a worker the schedule changed.
pub const WAKE: Token = Token(usize::MAX);
/// Batch slots made resident at the start, in bytes a run, shared by its workers
/// (`bytes::resident`): the slots a run keeps in use (a soak's, a fault storm's) are in place
/// from the first second, and many idle connections do not each hold two full slots (1,024
/// connections held 2.2 GB).
pub const RESIDENT_SLOT_BYTES: usize = 128 << 20;
/// However large its batches or many its fellow workers, a worker has this many slots
/// resident (256 workers of a 4,096-connection run hold one each).
const MIN_RESIDENT_SLOTS: usize = 1;

pub fn run(mut p: WorkerPlan) {
    if let Some(core) = p.core {
        core_affinity::set_for_current(core);
    }
    let registry = match p.poll.registry().try_clone() {
        Ok(r) => r,
        Err(e) => {
            p.abort.set(AbortReason::Io(format!(
                "worker {}: cannot use its poller: {e}",
                p.id
            )));
            let _ = p.tx.send(Interval::lost(p.id));
            return;
        }
    };
    let mut w = Worker::new(&mut p, registry);
    w.run(&mut p);
}

struct Worker {
    registry: mio::Registry,
    timeouts: Timeouts,
    proto: Proto,
    tls: Option<TlsClient>,
    links: Vec<Link>,
    batches: Vec<Batch>,
    scratch: Vec<u8>,
    /// `_bulk`: the items of the answer being read (reserved for a batch's events), and the
    /// first few item errors as text (allocated on that error path only, `MAX_ITEM_ERRORS`).
    items: Vec<crate::adapter::bulk::Item>,
    item_errors: Vec<String>,
    counters: Counters,
    latency: Histogram<u64>,
    service: Histogram<u64>,
    /// This interval's per-batch figures by the second their batches were scheduled in.
    by_second: BySecond,
    /// Intervals sent so far (the one being counted is second `intervals`), and when the
    /// next is due.
    intervals: u32,
    next_interval: Instant,
    /// The warm-up in whole seconds, and the figures of its batches counted after it.
    warm_s: u32,
    warm_tail: Option<Box<WarmTail>>,
    /// The batch whose figures are being counted (`enter`): its second, the figures before,
    /// whether they go to the warm-up's tail.
    counting: Option<(u32, Scheduled, bool)>,
    /// The schedule as last seen, and its epoch.
    sched: Schedule,
    epoch: u64,
    /// The schedule cell's cuts as last seen.
    cuts: u64,
    /// Events rendered into batches so far (this worker's agent sequence).
    scheduled: u64,
    /// Events this worker will send in all: its share of the total, or what the schedule
    /// asks for up to `stop.after` (unknown while paused short of it: `u64::MAX`).
    limit: u64,
    /// When the schedule ends (stop by time), once known.
    ends_at: Option<Instant>,
    ever_connected: bool,
    /// Some answer (an HTTP status line) has come on one of this worker's connections.
    ever_answered: bool,
    /// Connections the peer closed or reset before any answer had ever come (HTTP), and of
    /// them those it first sent bytes on that are no HTTP answer.
    closed_unanswered: u64,
    not_http: u64,
    last_connect_error: Option<String>,
    /// The batch slot reserved for HEC ack polls.
    ack_slot: Option<usize>,
    /// Since when, and why, a due batch has been held back.
    held: Option<(Instant, Held)>,
    /// The schedule has ended for this worker: answers now come in the drain.
    draining: bool,
    /// The request cap: no request before this instant.
    next_request: Instant,
    /// This thread's CPU time when the last interval was sent, ns.
    cpu_mark: u64,
    /// Which of this agent's seqs were given up.
    account: AgentAccount,
    /// Syslog over TCP, TLS or UDP: written batches waiting to be confirmed.
    pending: Pending,
    /// A plain HTTP load's request phases (sent with the last interval).
    phases: Option<Box<Phases>>,
    /// A mix's figures by source (sent with the last interval).
    parts: Option<Box<Parts>>,
    /// Several targets: the figures by target (sent with the last interval), and the link
    /// that dispatch looks at first.
    by_target: Option<Box<Parts>>,
    next_link: usize,
    /// A closed loop: no schedule, so a request's intended time is when it is sent, and
    /// nothing is late or owed.
    closed: bool,
    /// A batch slot's capacity, and whether it has a gzip buffer too: what a slot beyond the
    /// resident ones gets when first used.
    slot_cap: (usize, bool),
}

#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; every index is by construction: link indices `i` come from \
              0..links.len() or an event token checked against links.len(), slot indices from \
              0..batches.len() (the pool is fixed at construction) or a link's `batch`; RELP \
              `sessions` has one entry per link and `frames` one per slot; a part index is < the \
              mix's part count, which sizes `parts` and the framings; `ends`/`order`/`part_of` \
              hold one entry per event the batch rendered"
)]
impl Worker {
    fn new(p: &mut WorkerPlan, registry: mio::Registry) -> Worker {
        let (mut proto, tls) = match &p.wire {
            WirePlan::Http { framer, tls } => (
                Proto::Http {
                    acks: AckTracker::new(framer, p.start),
                    framer: framer.clone(),
                    gzip: Gzip::new(),
                },
                tls.clone(),
            ),
            WirePlan::SyslogStream { framer, tls } => (
                Proto::Stream {
                    framer: framer.clone(),
                },
                tls.clone(),
            ),
            WirePlan::SyslogDatagram { framer, by_size } => (
                Proto::Datagram {
                    framer: framer.clone(),
                    by_size: *by_size,
                },
                None,
            ),
            WirePlan::Relp { framer, tls, .. } => (
                Proto::Relp {
                    framer: framer.clone(),
                    sessions: Vec::new(),
                    frames: Vec::new(),
                },
                tls.clone(),
            ),
        };
        let datagrams = matches!(proto, Proto::Datagram { .. });
        let relp = matches!(proto, Proto::Relp { .. });
        let (plain, bodiless) = match &proto {
            Proto::Http { framer, .. } => (framer.expect.is_some(), framer.bodiless_answers),
            _ => (false, false),
        };
        let links = (0..p.conns)
            .map(|i| Link {
                target: if p.targets.is_empty() {
                    0
                } else {
                    (p.id + i) % p.targets.len()
                },
                sock: if datagrams {
                    Socket::Datagram(UdpLink::new(Token(i)))
                } else {
                    Socket::Stream(Box::new(Conn::new(Token(i))))
                },
                batch: None,
                offset: 0,
                blocked_since: None,
                waiting: 0,
                acked: 0,
                reading: true,
                end_cause: Unconfirmed::NotDrained,
                reconnect_at: p.start,
                backoff: Duration::from_millis(50),
                connects: 0,
                setup_began: p.start,
                setup: None,
                marks: Marks {
                    start: p.start,
                    written: None,
                    first_byte: None,
                },
            })
            .collect();
        // One batch per link in flight plus as many waiting for a retry, and one for polls.
        let acks = matches!(&proto, Proto::Http { acks: Some(_), .. });
        let gzip = proto.gzip();
        let cap = p.batch_bytes + p.batch_bytes / 4 + 64 * 1024;
        // What a batch of the larger packs' events (about 2 KiB each) fills: resident from the
        // start in every slot; the rest of `cap` only when a batch gets there.
        let touched = cap.min(p.batch_events * 2048 + 64 * 1024);
        let slots = p.conns * 2 + usize::from(acks);
        // Slots are taken lowest first, so the first ones are the ones in use; those are
        // made resident, up to this worker's part of `RESIDENT_SLOT_BYTES` (and the ack
        // poll's slot). The
        // others get their buffers the first time they are used (`render`): an idle
        // connection costs neither resident nor reserved memory.
        let resident_slots =
            (RESIDENT_SLOT_BYTES / p.threads.max(1) / touched.max(1)).max(MIN_RESIDENT_SLOTS);
        let warm = |k: usize| k < resident_slots || (acks && k + 1 == slots);
        let slot_cap = |k: usize| if warm(k) { cap } else { 0 };
        let bulk = matches!(&proto, Proto::Http { framer, .. } if framer.bulk.is_some());
        let udp_events = if datagrams || relp || bulk {
            p.batch_events
        } else {
            0
        };
        if let (
            Proto::Relp {
                sessions, frames, ..
            },
            WirePlan::Relp { window, .. },
        ) = (&mut proto, &p.wire)
        {
            *sessions = (0..p.conns)
                .map(|_| Session::new(*window, p.batch_events, cap))
                .collect();
            *frames = (0..slots).map(|_| Frames::new(p.batch_events)).collect();
        }
        let batches = (0..slots)
            .map(|k| Batch {
                head: Vec::with_capacity(1024),
                body: crate::bytes::resident(slot_cap(k), touched),
                shared: None,
                gz: crate::bytes::resident(if gzip { slot_cap(k) } else { 0 }, touched),
                ends: Vec::with_capacity(udp_events),
                order: Vec::with_capacity(udp_events),
                events: 0,
                parts: [0; crate::stats::parts::MAX_PARTS],
                host_of: 0,
                target: 0,
                first_seq: 0,
                seqs: 0,
                plain: false,
                base_seq: 0,
                part_of: Vec::with_capacity(if bulk && p.mix.is_some() {
                    p.batch_events
                } else {
                    0
                }),
                resend: false,
                items_failed: 0,
                intended: p.start,
                second: 0,
                first_write: p.start,
                attempt_write: p.start,
                attempts: 0,
                last_cause: 0,
                state: SlotState::Free,
            })
            .collect();
        let mut w = Worker {
            slot_cap: (cap, gzip),
            registry,
            timeouts: p.timeouts,
            proto,
            tls,
            links,
            batches,
            scratch: Vec::with_capacity(64 * 1024),
            items: Vec::with_capacity(if bulk { p.batch_events } else { 0 }),
            item_errors: Vec::new(),
            counters: Counters::default(),
            latency: new_histogram(),
            service: new_histogram(),
            by_second: Vec::with_capacity(crate::stats::BY_SECOND_CAP),
            intervals: 0,
            next_interval: p.start + INTERVAL,
            warm_s: p.warmup_s,
            warm_tail: (p.warmup_s > 0).then(|| {
                Box::new(WarmTail {
                    counters: Counters::default(),
                    latency: new_histogram(),
                    service: new_histogram(),
                })
            }),
            counting: None,
            sched: p.schedule.schedule(),
            epoch: p.schedule.epoch(),
            cuts: p.schedule.cuts(),
            scheduled: 0,
            limit: 0,
            ends_at: None,
            ever_connected: false,
            ever_answered: false,
            closed_unanswered: 0,
            not_http: 0,
            last_connect_error: None,
            ack_slot: acks.then_some(slots - 1),
            held: None,
            draining: false,
            next_request: p.start,
            cpu_mark: thread_cpu_ns(),
            account: AgentAccount::new(p.agent),
            pending: Pending::new(
                matches!(
                    p.wire,
                    WirePlan::SyslogStream { .. } | WirePlan::SyslogDatagram { .. }
                ),
                p.conns,
                p.start,
            ),
            phases: plain.then(Box::default),
            parts: p
                .mix
                .as_ref()
                .map(|_| Box::new(Parts::new(p.generators.len()))),
            by_target: (!p.targets.is_empty()).then(|| Box::new(Parts::new(p.targets.len()))),
            next_link: 0,
            closed: p.schedule.schedule().is_closed(),
        };
        for l in &mut w.links {
            if let Socket::Stream(c) = &mut l.sock {
                c.reader.bodiless = bodiless;
                if bulk {
                    // A `_bulk` answer has an item per event (a failed one a few hundred
                    // bytes): its cap grows with the batch.
                    c.reader.set_max_body(p.batch_events.saturating_mul(1024));
                }
            }
        }
        w.plan_limit(p);
        w
    }

    /// Takes the schedule again when control changed it, and closes every link when a cut
    /// was asked.
    fn follow_schedule(&mut self, p: &WorkerPlan, now: Instant) {
        let e = p.schedule.epoch();
        if e != self.epoch {
            self.epoch = e;
            self.sched = p.schedule.schedule();
            self.plan_limit(p);
            let cuts = p.schedule.cuts();
            if cuts != self.cuts {
                self.cuts = cuts;
                self.cut_links(now);
            }
        }
    }

    /// Closes every open link at once; each reconnects as after a reset.
    fn cut_links(&mut self, now: Instant) {
        for i in 0..self.links.len() {
            if !self.links[i].sock.is_closed() {
                self.counters.connections_cut += 1;
                self.close_link(i, now, Duration::ZERO);
            }
        }
    }

    /// How many events this worker sends in all, and when its schedule ends: at `stop.after`
    /// of schedule time, or when its last event of `stop.total_events` is due. A worker that
    /// has fallen behind stops there too (the report shows the shortfall): the target is the
    /// schedule, not a count to be sent however long it takes.
    fn plan_limit(&mut self, p: &WorkerPlan) {
        let end = match (p.stop_after, p.total) {
            (Some(d), _) => self.sched.time_at_active(d.as_secs_f64()),
            // A closed loop's last request goes when the one before is answered.
            (None, Some(_)) if self.closed => None,
            (None, Some(n)) => self.time_of(p, n),
            (None, None) => None,
        };
        self.ends_at = end.and_then(|t| {
            Duration::try_from_secs_f64(t)
                .ok()
                .and_then(|d| p.start.checked_add(d))
        });
        let by_time = match (p.stop_after, end) {
            (Some(_), Some(t)) => self.owed_at(p, t),
            _ => u64::MAX,
        };
        self.limit = p.total.unwrap_or(u64::MAX).min(by_time);
    }

    /// This worker's events due by `t` seconds after the start.
    fn owed_at(&self, p: &WorkerPlan, t: f64) -> u64 {
        match &p.lane {
            Some(l) => l.owed_at(self.sched.active(t)),
            None => crate::engine::pacer::dealt(self.sched.due(t), p.threads, p.id),
        }
    }

    /// The instant this worker's `n`-th event is due.
    fn time_of(&self, p: &WorkerPlan, n: u64) -> Option<f64> {
        match &p.lane {
            Some(l) => l.due_of(n).and_then(|a| self.sched.time_at_active(a)),
            None => self
                .sched
                .time_for(crate::engine::pacer::dealt_index(n, p.threads, p.id)),
        }
    }

    /// The most events the batch starting at this worker's next event may carry: a full
    /// batch, or in the scenario lane what is left of the next event's stage.
    fn batch_cap(&self, p: &WorkerPlan) -> u64 {
        let left = self.limit.saturating_sub(self.scheduled);
        let mut full = (p.batch_events as u64).min(left);
        // A batch holds the events due in one second (the one its first is due in), so
        // everything about it counts in that second (the window rule).
        if let Some(s) = self.event_second(p, self.scheduled + 1)
            && !self.closed
        {
            let in_second = self
                .owed_at(p, f64::from(s) + 1.0)
                .saturating_sub(self.scheduled)
                .max(1);
            full = full.min(in_second);
        }
        match (&p.lane, &p.mix) {
            (Some(l), _) if left > 0 => l.same_stage(self.scheduled, full),
            (_, Some(m)) => m
                .picker
                .left_in_run(self.scheduled)
                .map_or(full, |run| full.min(run)),
            _ => full,
        }
    }

    fn generation_done(&self, p: &WorkerPlan, now: Instant) -> bool {
        if p.abort.is_set() || p.schedule.stop_requested() {
            return true;
        }
        // A worker that fell behind stops at the deadline; the report shows the shortfall.
        // A closed loop has no schedule to catch up on: it stops at the deadline itself.
        let past_deadline = self
            .ends_at
            .is_some_and(|e| now >= e.checked_add(self.final_flush()).unwrap_or(e));
        let all_sent = self.scheduled >= self.limit;
        match p.stop_after {
            // A run by time lasts its `stop.after` however few events are due in it (a rate
            // so low that none is due in a second, or none at all, is still a run of that
            // length: control may raise the rate again); while paused short of it, the end
            // is not known yet.
            Some(_) => past_deadline || (all_sent && self.ends_at.is_some_and(|e| now >= e)),
            None => all_sent || past_deadline,
        }
    }

    fn final_flush(&self) -> Duration {
        if self.closed {
            Duration::ZERO
        } else {
            FINAL_FLUSH
        }
    }

    /// The instant the next batch is due: when its last event is due, or `LINGER` after its
    /// first event is due, whichever comes first (so slow rates still send regularly).
    fn next_due(&self, p: &WorkerPlan) -> Option<Instant> {
        if self.scheduled >= self.limit {
            return None;
        }
        let full = self.scheduled.saturating_add(self.batch_cap(p));
        let t_first = self.time_of(p, self.scheduled + 1)?;
        let t = match self.time_of(p, full) {
            Some(t_full) => t_full.min(t_first + LINGER.as_secs_f64()),
            None => t_first + LINGER.as_secs_f64(),
        };
        // A rate so low that the next batch is due beyond what a clock can say: never.
        Duration::try_from_secs_f64(t)
            .ok()
            .and_then(|d| p.start.checked_add(d))
    }

    /// The second this worker's `k`-th event (from 1) is due in: the `s` with `owed_at(s) <
    /// k <= owed_at(s + 1)` (an event due on the dot of a second belongs to the one it ends,
    /// as `due` counts it); the current interval in a closed loop; `None` when it is never
    /// due as the schedule stands.
    fn event_second(&self, p: &WorkerPlan, k: u64) -> Option<u32> {
        if self.closed {
            return Some(self.intervals);
        }
        let t = self.time_of(p, k)?;
        if !t.is_finite() || t >= f64::from(u32::MAX) {
            return None;
        }
        let mut s = t.max(0.0).floor() as u32;
        for _ in 0..3 {
            if s > 0 && self.owed_at(p, f64::from(s)) >= k {
                s -= 1;
            } else if self.owed_at(p, f64::from(s) + 1.0) < k {
                s += 1;
            } else {
                break;
            }
        }
        Some(s)
    }

    /// How many events the batch sent at `now` carries: those due by now, at least one, at
    /// most a full batch.
    fn batch_size(&self, p: &WorkerPlan, now: Instant) -> u64 {
        let owed = self.owed_at(p, now.duration_since(p.start).as_secs_f64());
        owed.saturating_sub(self.scheduled)
            .max(1)
            .min(self.batch_cap(p))
    }

    fn busy(&self) -> bool {
        !self.pending.is_empty()
            || self.batches.iter().any(|b| b.state != SlotState::Free)
            || matches!(&self.proto, Proto::Http { acks: Some(a), .. } if a.unconfirmed())
    }

    fn run(&mut self, p: &mut WorkerPlan) {
        let mut events = Events::with_capacity(256);
        let mut drain_deadline: Option<Instant> = None;
        loop {
            let now = Instant::now();
            self.count_held(now);
            // One interval per second that has ended (its k-th is second k, even after a
            // stall), before anything of the new second is counted.
            while now >= self.next_interval {
                self.send_interval(p, now, false);
                self.next_interval += INTERVAL;
            }
            self.confirm(p, now);
            let gen_done = self.generation_done(p, now);
            if gen_done && drain_deadline.is_none() {
                drain_deadline = Some(now + p.timeouts.drain);
                self.draining = true;
            }
            self.reconnect(p, now);
            self.check_timeouts(p, now);
            self.dispatch(p, now, gen_done);
            self.note_held(p, now, gen_done);
            self.check_reachable(p, now, gen_done);
            // Control is followed once the second that has ended is closed (above), so what
            // it brings (a cut's reconnects) counts in the second it happens in.
            self.follow_schedule(p, now);
            if gen_done
                && (!self.busy() || p.abort.is_set() || drain_deadline.is_some_and(|d| now >= d))
                && (p.abort.is_set()
                    || p.schedule.stop_requested()
                    || !self.first_setup_pending(now))
            {
                self.give_up_unfinished();
                break;
            }
            let timeout = self.next_wakeup(p, now, gen_done, self.next_interval, drain_deadline);
            if let Err(e) = p.poll.poll(&mut events, Some(timeout)) {
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
                if self.links[i].sock.is_setting_up() {
                    self.finish_connect(p, i, now);
                    if !self.links[i].sock.is_open() {
                        continue;
                    }
                }
                if ev.is_writable() {
                    self.write(p, i, now);
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.read(p, i, now, !(ev.is_read_closed() || ev.is_error()));
                }
            }
        }
        self.relp_close_all(p);
        let now = Instant::now();
        self.send_interval(p, now, true);
        for l in &mut self.links {
            l.sock.close(&self.registry);
        }
    }

    /// A target never reached — for 3 s, or by the time the schedule ends — aborts the run
    /// (`reach.rs` says why). With several targets, only a worker whose links reach every one
    /// of them can tell that none answers; a worker that sees fewer keeps trying (what it
    /// could not send is its shortfall, and the down target is named in `by_target`).
    fn check_reachable(&self, p: &WorkerPlan, now: Instant, gen_done: bool) {
        if self.links.len() < p.targets.len() {
            return;
        }
        let late = gen_done || now.duration_since(p.start) > UNREACHABLE_AFTER;
        if let Some(why) = late.then(|| self.never_reached(p, now, gen_done)).flatten() {
            p.abort.set(why);
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
        let idle_open = (0..self.links.len()).any(|i| self.idle(i));
        // Under a request cap nothing leaves before the cap allows it.
        let not_before = if p.request_every.is_some() {
            self.next_request
        } else {
            now
        };
        if idle_open {
            for b in &self.batches {
                if let SlotState::Waiting(t) = b.state {
                    at = at.min(t.max(not_before));
                }
            }
            if let Proto::Http { acks: Some(a), .. } = &self.proto
                && let Some(t) = a.next_poll()
            {
                at = at.min(t.max(not_before));
            }
            if !gen_done && self.batches.iter().any(|b| b.state == SlotState::Free) {
                if let Some(due) = self.next_due(p) {
                    at = at.min(due.max(not_before));
                }
                if let Some(e) = self.ends_at {
                    at = at.min(e);
                }
            }
        }
        for l in &self.links {
            if l.sock.is_closed() {
                at = at.min(l.reconnect_at);
            }
            if let Some(b) = l.batch {
                at = at.min(self.batches[b].attempt_write + p.timeouts.request);
            }
        }
        if let Some(d) = drain {
            at = at.min(d);
        }
        if let Some(t) = self.pending.next_check() {
            at = at.min(t);
        }
        at.saturating_duration_since(now)
            .min(Duration::from_millis(250))
    }

    fn reconnect(&mut self, p: &WorkerPlan, now: Instant) {
        for i in 0..self.links.len() {
            let l = &mut self.links[i];
            if !l.sock.is_closed() || now < l.reconnect_at {
                continue;
            }
            if l.connects > 0 {
                self.counters.reconnects += 1;
            }
            l.connects += 1;
            // Also what the setup timeout counts from.
            l.setup_began = Instant::now();
            if self.phases.is_some() {
                l.setup = None;
            }
            let registry = &self.registry;
            let (addr, tls) = match p.targets.get(l.target) {
                Some(t) => (t.addr, t.tls.as_ref()),
                None => (p.addr, self.tls.as_ref()),
            };
            let result = match &mut l.sock {
                Socket::Datagram(u) => u.open(addr, true, registry).map(|()| {
                    self.ever_connected = true;
                    if let Some(t) = self.by_target.as_deref_mut() {
                        t.note(l.target, LinkEvent::Connected);
                    }
                }),
                Socket::Stream(c) => {
                    let peer = match &p.unix {
                        Some(path) => Peer::Unix(path),
                        None => Peer::Tcp(addr),
                    };
                    let r = c.connect_to(peer, tls, registry);
                    if r.is_ok() && matches!(self.proto, Proto::Stream { .. }) {
                        // Syslog confirmation reads the peer's window (`confirm.rs`).
                        let _ = c.probe_when_idle(confirm::PROBE_IDLE);
                    }
                    r
                }
            };
            if let Err(e) = result {
                self.connect_failed(i, now, e.to_string());
            }
        }
    }

    fn finish_connect(&mut self, p: &mut WorkerPlan, i: usize, now: Instant) {
        let Socket::Stream(conn) = &mut self.links[i].sock else {
            return;
        };
        match conn.progress() {
            Ok(true) => {
                // TCP until connected, TLS from then until open (none without TLS).
                let open = Instant::now();
                let tcp = if conn.has_tls() {
                    conn.connected_at.unwrap_or(open).min(open)
                } else {
                    open
                };
                let l = &mut self.links[i];
                if self.phases.is_some() {
                    let ns =
                        |a: Instant, b: Instant| b.saturating_duration_since(a).as_nanos() as u64;
                    l.setup = Some((ns(l.setup_began, tcp), ns(tcp, open)));
                }
                l.backoff = Duration::from_millis(50);
                self.ever_connected = true;
                self.note(i, LinkEvent::Connected);
                if let Proto::Relp { sessions, .. } = &mut self.proto {
                    // Batches wait for the answer to the open.
                    sessions[i].open(now);
                    self.relp_write(i, now);
                    return;
                }
                self.dispatch(p, now, self.generation_done(p, now));
            }
            Ok(false) => {}
            Err(ConnectError::Tls(why)) => {
                // A certificate problem does not fix itself: stop the run and say why.
                conn.close(&self.registry);
                self.counters.connect_errors += 1;
                p.abort.set(AbortReason::Tls(format!("{}: {why}", p.addr)));
            }
            Err(e) => {
                conn.close(&self.registry);
                self.connect_failed(i, now, e.to_string());
            }
        }
    }

    /// Several targets: what befell link `i`, counted for its target.
    fn note(&mut self, i: usize, e: LinkEvent) {
        if let Some(t) = self.by_target.as_deref_mut() {
            t.note(self.links[i].target, e);
        }
    }

    fn connect_failed(&mut self, i: usize, now: Instant, why: String) {
        self.counters.connect_errors += 1;
        self.note(i, LinkEvent::ConnectError);
        self.last_connect_error = Some(why);
        let l = &mut self.links[i];
        l.reconnect_at = now + l.backoff;
        l.backoff = (l.backoff * 2).min(Duration::from_secs(1));
        if let Some(b) = l.batch.take() {
            self.batches[b].state = SlotState::Waiting(now);
        }
    }

    /// Hands work to every idle open link: an ack poll when one is due, retries whose time
    /// has come, then new batches that are due.
    fn dispatch(&mut self, p: &mut WorkerPlan, now: Instant, gen_done: bool) {
        let links = self.links.len();
        for n in 0..links {
            // Several targets: the links take turns (from the one after the last that sent),
            // so the load spreads over the targets as the connections do.
            let i = (self.next_link + n) % links;
            if !self.idle(i) {
                continue;
            }
            if self.capped(p, now) {
                break;
            }
            if self.start_ack_poll(p, i, now) {
                self.took_request(p, now);
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
            // Everything about a batch, its sends included, counts in its second.
            let (slot, began) = match retry {
                Some((_, k)) => {
                    let began = self.enter(self.batches[k].second);
                    self.counters.batches_retried += 1;
                    (k, began)
                }
                None => {
                    if gen_done {
                        continue;
                    }
                    if p.schedule.epoch() != self.epoch {
                        // Control changed the schedule (a pause, a new rate) since this
                        // iteration took it: nothing new goes by the old one.
                        break;
                    }
                    let Some(due) = self.next_due(p) else {
                        continue;
                    };
                    // Never before its second's interval: a batch's figures count in the
                    // intervals of its second or later, never in an earlier one.
                    let second = self.event_second(p, self.scheduled + 1).unwrap_or(u32::MAX);
                    if due > now || second > self.intervals {
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
                    let t0 = Instant::now();
                    let began = self.enter(second);
                    self.render(p, k, due, now);
                    self.batches[k].second = second;
                    self.counters.processing_ns += t0.elapsed().as_nanos() as u64;
                    let events = self.batches[k].events;
                    if events > 0 {
                        if !self.closed {
                            let lag = now.saturating_duration_since(due).as_nanos() as u64;
                            self.counters.lag_ns_sum += lag;
                            self.counters.lag_ns_max = self.counters.lag_ns_max.max(lag);
                        }
                        self.counters.events_sent += events;
                        if let Some(t) = self.parts.as_deref_mut() {
                            t.sent(&self.batches[k].parts);
                        }
                    }
                    if events == 0 {
                        self.leave(began);
                        continue;
                    }
                    (k, began)
                }
            };
            if !p.targets.is_empty() {
                self.next_link = i + 1;
            }
            self.send_slot(p, i, slot, now);
            self.counters.batches_sent += 1;
            self.leave(began);
            self.took_request(p, now);
        }
    }

    /// Link `i` is open, ready and has nothing in flight: a batch may go on it.
    fn idle(&self, i: usize) -> bool {
        let l = &self.links[i];
        l.sock.is_open() && l.batch.is_none() && self.proto.ready(i) && self.pending.room(l.waiting)
    }

    /// Whether the request cap holds the next request back.
    fn capped(&self, p: &WorkerPlan, now: Instant) -> bool {
        p.request_every.is_some() && now < self.next_request
    }

    /// A request went out: the cap's next one is `request_every` later.
    fn took_request(&mut self, p: &WorkerPlan, now: Instant) {
        if let Some(every) = p.request_every {
            self.next_request = crate::clock::later(self.next_request.max(now), every);
        }
    }

    /// After the loop's dispatch: if a batch is still due, why it could not leave (counted
    /// until the next iteration looks again).
    fn note_held(&mut self, p: &WorkerPlan, now: Instant, gen_done: bool) {
        let due_now = !gen_done && self.next_due(p).is_some_and(|d| d <= now);
        let retry_due = self
            .batches
            .iter()
            .any(|b| matches!(b.state, SlotState::Waiting(t) if t <= now));
        let why = if !(due_now || retry_due) {
            None
        } else if self.capped(p, now) {
            Some(Held::Cap)
        } else if !self.links.iter().any(|l| l.sock.is_open()) {
            Some(Held::TargetDown)
        } else if self.room_to_send() {
            // A connection and a batch slot are free: the batch waits for this thread to
            // render it (the generator's time, not the target's).
            None
        } else {
            Some(Held::Target)
        };
        self.held = why.map(|w| (now, w));
    }

    /// An open connection with nothing in flight and a free batch slot: a due batch could go.
    fn room_to_send(&self) -> bool {
        let link = (0..self.links.len()).any(|i| self.idle(i));
        let slot = self
            .batches
            .iter()
            .enumerate()
            .any(|(k, b)| b.state == SlotState::Free && Some(k) != self.ack_slot);
        link && slot
    }

    /// Adds the time since the last iteration to what held a due batch back, if anything did.
    fn count_held(&mut self, now: Instant) {
        if let Some((since, why)) = self.held.take() {
            let ns = now.saturating_duration_since(since).as_nanos() as u64;
            match why {
                Held::Target => self.counters.wait_for_target_ns += ns,
                Held::TargetDown => self.counters.target_down_ns += ns,
                Held::Cap => self.counters.held_by_cap_ns += ns,
            }
        }
    }

    /// Puts batch `slot` on link `i` and writes what the socket takes.
    fn send_slot(&mut self, p: &WorkerPlan, i: usize, slot: usize, now: Instant) {
        let gzip = self.proto.gzip();
        let b = &mut self.batches[slot];
        let t = self.links[i].target;
        if let Some(target) = p.targets.get(t) {
            // Several targets: the request names the host it goes to.
            if b.host_of != t && !b.head.is_empty() {
                rehost(&mut b.head, &mut self.scratch, &target.host_port);
                b.host_of = t;
            }
            if b.attempts == 0
                && let Some(tally) = self.by_target.as_deref_mut()
            {
                tally.sent_to(t, b.events);
            }
            b.target = t;
        }
        if b.attempts == 0 {
            b.first_write = now;
        }
        if b.resend {
            self.counters.events_resent += b.events;
            b.resend = false;
        }
        b.attempts += 1;
        b.attempt_write = now;
        b.state = SlotState::InFlight(i);
        match &mut self.proto {
            // RELP counts each frame's bytes as it is written, resends included.
            Proto::Relp { frames, .. } => frames[slot].begin_attempt(),
            _ => self.counters.bytes_sent += b.wire_len(gzip) as u64,
        }
        self.links[i].batch = Some(slot);
        self.links[i].offset = 0;
        if self.phases.is_some() {
            self.links[i].marks = Marks {
                start: Instant::now(),
                written: None,
                first_byte: None,
            };
        }
        self.write(p, i, now);
    }

    /// Sends an ack poll on link `i` when one is due; true if it did.
    fn start_ack_poll(&mut self, p: &WorkerPlan, i: usize, now: Instant) -> bool {
        let (
            Proto::Http {
                acks: Some(acks), ..
            },
            Some(a),
        ) = (&mut self.proto, self.ack_slot)
        else {
            return false;
        };
        if self.batches[a].state != SlotState::Free || !acks.due(now) {
            return false;
        }
        let b = &mut self.batches[a];
        acks.write_poll(&mut b.head, &mut b.body);
        b.plain = true;
        b.events = 0;
        b.intended = now;
        b.attempts = 0;
        self.send_slot(p, i, a, now);
        true
    }

    /// Renders the next batch into slot `k`.
    fn render(&mut self, p: &mut WorkerPlan, k: usize, due: Instant, now: Instant) {
        let limit = self.batch_size(p, now);
        let wall = time::now();
        let sent_ms = p.start_wall_ns.map(|w| {
            let at = w + due.saturating_duration_since(p.start).as_nanos() as i64;
            (at / 1_000_000).max(0) as u64
        });
        let agent = p.agent;
        let (cap, gzip) = self.slot_cap;
        let b = &mut self.batches[k];
        if b.body.capacity() < cap {
            // A slot beyond the resident ones, used for the first time.
            b.body.reserve_exact(cap);
            if gzip {
                b.gz.reserve_exact(cap);
            }
        }
        b.ends.clear();
        b.order.clear();
        b.part_of.clear();
        b.resend = false;
        b.items_failed = 0;
        b.plain = false;
        b.parts = [0; crate::stats::parts::MAX_PARTS];
        // The framer's head names the first target.
        b.host_of = 0;
        let mut parts = self.parts.as_deref_mut();
        let mut n = 0u64;
        let mut skipped = 0u64;
        let datagrams = matches!(self.proto, Proto::Datagram { .. });
        let relp = matches!(self.proto, Proto::Relp { .. });
        match &mut self.proto {
            Proto::Http { framer, .. } if framer.fixed.is_some() => {
                // A fixed body: one request, the body sent from its shared buffer.
                b.body.clear();
                b.shared = framer.fixed.clone();
                let len = b.shared.as_ref().map_or(0, |f| f.len());
                write_request_head(
                    &mut b.head,
                    framer.method,
                    &framer.path,
                    &framer.host,
                    &framer.headers,
                    len,
                );
                n = limit.min(1);
            }
            Proto::Http { framer, gzip, .. } => {
                let batch_bytes = p.batch_bytes;
                b.shared = None;
                let Some((mut src, framing)) = Source::of(p, self.scheduled, wall, sent_ms) else {
                    b.events = 0;
                    return;
                };
                let (base, each): (&Framer, Option<&[Arc<Framer>]>) = match &framing {
                    Framing::Stage(Framings::Http(v), stage) => (&v[*stage], None),
                    Framing::Parts(Framings::Http(v)) => (&v[0], Some(v)),
                    _ => (framer, None),
                };
                // Every framing of one adapter begins and ends a body alike; the request head
                // is that of the batch's first event's source (in a mix, each event has its
                // own source's envelope).
                base.begin(&mut b.body);
                let mut head = base;
                let bulk = base.bulk.is_some();
                while n < limit {
                    let seq = self.scheduled + n;
                    let before = b.body.len();
                    let t = src.next(seq);
                    if !src.ready() {
                        break;
                    }
                    let f: &Framer = each.map_or(base, |v| &v[src.part()]);
                    if n == 0 {
                        head = f;
                    }
                    let id = EventId {
                        agent,
                        seq,
                        sent_ms,
                    };
                    f.before_event(&mut b.body, n as usize, t, &id);
                    match f.embed {
                        Embed::Direct => src.render(&mut b.body),
                        Embed::JsonString => {
                            self.scratch.clear();
                            src.render(&mut self.scratch);
                            json_escape_into(&self.scratch, &mut b.body);
                        }
                    }
                    f.after_event(&mut b.body, &id);
                    if b.body.len() + 2 > batch_bytes && n > 0 {
                        // Over the byte limit: this event starts the next batch.
                        b.body.truncate(before);
                        break;
                    }
                    if each.is_some() {
                        b.parts[src.part()] += 1;
                    }
                    if bulk {
                        // Where each pair ends and whose it is: a partial answer resends some.
                        b.ends.push(b.body.len() as u32);
                        b.order.push(n as u32);
                        if each.is_some() {
                            b.part_of.push(src.part() as u8);
                        }
                    }
                    n += 1;
                }
                base.finish(&mut b.body);
                // Every source's framer comes from the one target: the same gzip setting.
                b.seal(head, gzip);
            }
            Proto::Stream { framer }
            | Proto::Datagram { framer, .. }
            | Proto::Relp { framer, .. } => {
                b.body.clear();
                // Syslog has no request head: the batch is the framed messages.
                b.head.clear();
                let batch_bytes = p.batch_bytes;
                let Some((mut src, mut framing)) = Source::of(p, self.scheduled, wall, sent_ms)
                else {
                    b.events = 0;
                    return;
                };
                while n < limit {
                    let seq = self.scheduled + n;
                    let before = b.body.len();
                    let t = src.next(seq);
                    if !src.ready() {
                        break;
                    }
                    let part = src.part();
                    let framer: &mut SyslogFramer = match &mut framing {
                        Framing::Stage(Framings::Syslog(v), stage) => &mut v[*stage],
                        Framing::Parts(Framings::Syslog(v)) => &mut v[part],
                        _ => &mut *framer,
                    };
                    let fits = framer.append(t, &mut b.body, &mut self.scratch, |out| {
                        src.render(out);
                    });
                    if !fits {
                        // Never cut a message to fit: count it (sent and failed), leave it out.
                        self.counters.oversize_events += 1;
                        self.counters.events_sent += 1;
                        self.counters.events_failed += 1;
                        if let Some(t) = parts.as_deref_mut() {
                            t.event_failed(part);
                        }
                        let seq = self.scheduled + n;
                        self.account.fail(seq, seq + 1);
                        skipped += 1;
                        n += 1;
                        continue;
                    } else if b.body.len() > batch_bytes && n > 0 {
                        b.body.truncate(before);
                        break;
                    } else if datagrams || relp {
                        b.ends.push(b.body.len() as u32);
                        if relp {
                            b.order.push(n as u32);
                        }
                    }
                    if parts.is_some() {
                        b.parts[part] += 1;
                    }
                    n += 1;
                }
                match &mut self.proto {
                    Proto::Datagram { by_size, .. } => udp_order(&b.ends, *by_size, &mut b.order),
                    Proto::Relp { frames, .. } => {
                        let f = &mut frames[k];
                        f.clear();
                        for &off in &b.order {
                            f.push(self.scheduled + u64::from(off));
                        }
                    }
                    _ => {}
                }
            }
        }
        b.first_seq = self.scheduled;
        b.base_seq = self.scheduled;
        b.seqs = n;
        self.scheduled += n;
        b.events = n - skipped;
        b.intended = if self.closed { now } else { due };
        b.attempts = 0;
        b.last_cause = 0;
    }

    fn write(&mut self, p: &WorkerPlan, i: usize, now: Instant) {
        if matches!(self.proto, Proto::Relp { .. }) {
            self.relp_write(i, now);
            return;
        }
        let gzip = self.proto.gzip();
        let Some(slot) = self.links[i].batch else {
            if let Socket::Stream(c) = &mut self.links[i].sock
                && c.pending_tls()
                && c.flush().is_err()
            {
                self.peer_closed(i, now, Unconfirmed::Reset);
            }
            return;
        };
        let off = self.links[i].offset;
        match &mut self.links[i].sock {
            Socket::Datagram(udp) => {
                let b = &self.batches[slot];
                let mut cost = SendCost::default();
                let sent = udp.send_batch(&b.body, &b.ends, &b.order, off, &mut cost);
                self.counters.udp_send_calls += cost.calls;
                self.counters.udp_gso_sends += cost.gso_sends;
                if cost.gso_refused > 0 {
                    self.counters.udp_gso_refused += cost.gso_refused;
                    if let Some(why) = udp.gso_refused() {
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
                            self.unblocked(i, now);
                            self.written(i, slot, now);
                        } else {
                            self.links[i].blocked_since.get_or_insert(now);
                        }
                    }
                    // A port unreachable (ICMP) is about datagrams sent before: `udp_error`.
                    Err(e) => self.udp_error(p, i, &e, now),
                }
            }
            Socket::Stream(conn) => {
                let b = &self.batches[slot];
                let wire = b.wire(gzip);
                let total = wire[0].len() + wire[1].len();
                let result = if off >= total {
                    conn.flush().map(|_| off)
                } else {
                    conn.write_from(wire, off)
                };
                let pending_tls = conn.pending_tls();
                match result {
                    Ok(n) => {
                        self.links[i].offset = n;
                        if n < total || pending_tls {
                            self.links[i].blocked_since.get_or_insert(now);
                            return;
                        }
                        self.unblocked(i, now);
                        if self.phases.is_some() {
                            self.links[i].marks.written.get_or_insert_with(Instant::now);
                        } else if matches!(self.proto, Proto::Stream { .. }) {
                            self.written(i, slot, now);
                        }
                    }
                    Err(_) if matches!(self.proto, Proto::Stream { .. }) => {
                        self.peer_closed(i, now, Unconfirmed::Reset);
                    }
                    Err(_) => self.connection_lost(i, now),
                }
            }
        }
    }

    /// Batch `slot` is done (accepted, or written for syslog): count it, record both latencies
    /// (from the schedule and from the write of this attempt), free the slot.
    fn accepted(&mut self, slot: usize, now: Instant) {
        let began = self.enter(self.batches[slot].second);
        let b = &mut self.batches[slot];
        self.counters.events_accepted += b.events;
        if self.draining {
            self.counters.events_accepted_in_drain += b.events;
        }
        if b.items_failed > 0 {
            // The rest of a `_bulk` batch some of whose items failed for good earlier.
            self.counters.batches_failed += 1;
        } else {
            self.counters.batches_accepted += 1;
        }
        let lat = now.saturating_duration_since(b.intended).as_micros() as u64;
        let svc = now.saturating_duration_since(b.attempt_write).as_micros() as u64;
        self.latency.saturating_record(lat.clamp(1, MAX_LATENCY_US));
        self.service.saturating_record(svc.clamp(1, MAX_LATENCY_US));
        if let Some(t) = self.parts.as_deref_mut() {
            t.accepted(&b.parts, lat, svc);
        }
        if let Some(t) = self.by_target.as_deref_mut() {
            t.accepted_at(b.target, b.events, lat, svc);
        }
        b.state = SlotState::Free;
        self.leave(began);
    }

    /// Batch `slot` failed for good (refused, given up after its retries, never finished):
    /// its events are counted failed and their seqs given up.
    fn failed_for_good(&mut self, slot: usize) {
        let began = self.enter(self.batches[slot].second);
        let b = &mut self.batches[slot];
        self.counters.events_failed += b.events;
        self.counters.batches_failed += 1;
        if b.ends.is_empty() || !matches!(&self.proto, Proto::Http { .. }) {
            self.account.fail(b.first_seq, b.first_seq + b.seqs);
        } else {
            // `_bulk`: the events still in the batch, which after a partial answer need not
            // be one run of seqs.
            for &o in &b.order {
                let seq = b.base_seq + u64::from(o);
                self.account.fail(seq, seq + 1);
            }
        }
        if let Some(t) = self.parts.as_deref_mut() {
            t.failed(&b.parts);
        }
        if let Some(t) = self.by_target.as_deref_mut() {
            t.failed_at(b.target, b.events);
        }
        b.state = SlotState::Free;
        self.leave(began);
    }

    /// Link `i`'s batch is no longer held by a full socket buffer: the time it was is counted.
    fn unblocked(&mut self, i: usize, now: Instant) {
        if let Some(since) = self.links[i].blocked_since.take() {
            self.counters.send_blocked_ns += now.saturating_duration_since(since).as_nanos() as u64;
        }
    }

    /// The time batches are being held by full socket buffers so far counts in this interval
    /// (a receiver that reads nothing shows in every second, not only when it reads again).
    fn count_blocked(&mut self, now: Instant) {
        for l in &mut self.links {
            if let Some(since) = l.blocked_since.as_mut() {
                self.counters.send_blocked_ns +=
                    now.saturating_duration_since(*since).as_nanos() as u64;
                *since = now;
            }
        }
    }

    /// Reads link `i`'s answers; `short_is_all` unless the event said the peer closed.
    fn read(&mut self, p: &mut WorkerPlan, i: usize, now: Instant, short_is_all: bool) {
        if matches!(self.proto, Proto::Relp { .. }) {
            self.relp_read(p, i, now);
            return;
        }
        let conn = match &mut self.links[i].sock {
            Socket::Stream(conn) => conn,
            Socket::Datagram(u) => {
                // An error event: what ICMP reported about datagrams sent before.
                if let Some(e) = u.take_error() {
                    self.udp_error(p, i, &e, now);
                }
                return;
            }
        };
        if !matches!(self.proto, Proto::Http { .. }) {
            // Syslog receivers send nothing; reading shows when they close (FIN) or reset.
            match conn.discard_input() {
                Ok(ReadStatus::Drained) => {}
                Ok(ReadStatus::Eof) => self.peer_closed(i, now, Unconfirmed::Closed),
                Err(_) => self.peer_closed(i, now, Unconfirmed::Reset),
            }
            return;
        }
        let status = match conn.read_ready(short_is_all) {
            Ok(s) => s,
            Err(_) => {
                self.connection_lost(i, now);
                return;
            }
        };
        let eof = status == ReadStatus::Eof;
        if self.phases.is_some() && self.links[i].batch.is_some() {
            let Socket::Stream(conn) = &self.links[i].sock else {
                return;
            };
            if !conn.reader.is_empty() {
                self.links[i]
                    .marks
                    .first_byte
                    .get_or_insert_with(Instant::now);
            }
        }
        loop {
            let slot = self.links[i].batch;
            let offset = self.links[i].offset;
            let Socket::Stream(conn) = &mut self.links[i].sock else {
                return;
            };
            match conn.reader.poll(eof) {
                Ok(Some((resp, used))) => {
                    let Proto::Http { framer, acks, .. } = &mut self.proto else {
                        return;
                    };
                    let body = conn.reader.body(&resp);
                    let body_len = body.len() as u64;
                    let mut outcome = framer.outcome(&resp, body);
                    if let (Outcome::Items { .. }, Some(b)) = (outcome, slot) {
                        // Each item in request order: as many as the batch has events, or
                        // the answer is out of step with the request.
                        self.items.clear();
                        let items = &mut self.items;
                        let n = crate::adapter::bulk::items(body, |it| {
                            if items.len() < items.capacity() {
                                items.push(it);
                            }
                        });
                        if n != Some(self.batches[b].events as usize) || n != Some(items.len()) {
                            self.counters.protocol_errors += 1;
                            outcome = Outcome::Failed;
                        } else if self.item_errors.len() < MAX_ITEM_ERRORS {
                            let op = framer.bulk.as_ref().map(|b| b.op_type);
                            for it in self.items.iter() {
                                if self.item_errors.len() < MAX_ITEM_ERRORS
                                    && op.is_some_and(|op| {
                                        it.fate(op) == crate::adapter::bulk::Fate::Failed
                                    })
                                {
                                    self.item_errors
                                        .push(crate::adapter::bulk::describe(body, it));
                                }
                            }
                        }
                    }
                    self.ever_answered = true;
                    if slot.is_some() && slot == self.ack_slot {
                        // An ack poll: confirmed ids are counted, the others asked about again.
                        if let Some(a) = acks {
                            let ok = crate::adapter::answer::hec_ack_poll(
                                resp.status,
                                body,
                                resp.encoded,
                            );
                            if !ok {
                                self.counters.ack_poll_failures += 1;
                            }
                            self.counters.batches_acked += a.answered(ok, body, now);
                        }
                        conn.reader.consume(used);
                        if let Some(a) = self.links[i].batch.take() {
                            self.batches[a].state = SlotState::Free;
                        }
                        if resp.close {
                            self.close_link(i, now, Duration::ZERO);
                            return;
                        }
                        continue;
                    }
                    if let Some(code) = framer
                        .hec_code(body)
                        .and_then(|code| usize::try_from(code).ok())
                    {
                        if let Some(n) = self.counters.hec_codes.get_mut(code) {
                            *n += 1;
                        }
                        if let (Outcome::Failed, Some(b), Some(n)) = (
                            outcome,
                            slot,
                            self.counters.events_failed_by_hec_code.get_mut(code),
                        ) {
                            *n += self.batches[b].events;
                        }
                    }
                    if let Some(n) = self.counters.status.get_mut(usize::from(resp.status)) {
                        *n += 1;
                    }
                    conn.reader.consume(used);
                    let gzip = framer.gzip;
                    let written_all =
                        slot.is_some_and(|b| offset >= self.batches[b].wire_len(gzip));
                    if let Some(b) = slot {
                        self.batches[b].last_cause = resp.status;
                    }
                    let close_after = framer.close_after;
                    if let (Some(ph), Some(_)) = (self.phases.as_mut(), slot) {
                        let l = &mut self.links[i];
                        ph.body_bytes += body_len;
                        let opened = l.setup.is_some();
                        ph.record(&l.marks.phases(l.setup.take(), Instant::now()), opened);
                    }
                    self.finish_batch(p, i, outcome, now);
                    if resp.close || !written_all || close_after {
                        // An answer before the whole request went out leaves the stream out
                        // of step: start over on a fresh connection.
                        self.close_link(i, now, Duration::ZERO);
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    self.counters.protocol_errors += 1;
                    self.unreadable_answer(p, i, &e, now);
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
            // An answer nobody asked for.
            self.counters.protocol_errors += 1;
            return;
        };
        let began = self.enter(self.batches[slot].second);
        let b = &mut self.batches[slot];
        match outcome {
            Outcome::Accepted { ack_id } => {
                if let Proto::Http { acks: Some(a), .. } = &mut self.proto {
                    a.accepted(ack_id);
                }
                self.accepted(slot, now);
            }
            Outcome::Retry { after_s } => {
                let wait = after_s.map(|s| Duration::from_secs(u64::from(s)));
                self.retry_or_give_up(slot, now, wait);
            }
            Outcome::Items { after_s } => {
                let wait = after_s.map(|s| Duration::from_secs(u64::from(s)));
                self.bulk_settle(slot, now, wait);
            }
            Outcome::AuthFailed => {
                self.counters.auth_failures += 1;
                self.counters.refused_for_good(b.last_cause, b.events);
                self.failed_for_good(slot);
                p.abort.set(AbortReason::Auth(
                    "the target refused the credentials (HTTP 401/403)".into(),
                ));
            }
            Outcome::Failed => {
                self.counters.refused_for_good(b.last_cause, b.events);
                self.failed_for_good(slot);
            }
            Outcome::Unreadable => self.unreadable_2xx(slot),
        }
        self.leave(began);
    }

    /// Batch `slot` goes again after `wait` (a jittered backoff when the target gave no
    /// Retry-After), unless it has had its attempts or its retry time: then it fails, counted.
    fn retry_or_give_up(&mut self, slot: usize, now: Instant, wait: Option<Duration>) {
        let began = self.enter(self.batches[slot].second);
        let t = self.timeouts;
        let b = &mut self.batches[slot];
        let wait = wait.unwrap_or_else(|| backoff(b.attempts, b.intended));
        let retried_for = crate::clock::later(now, wait).saturating_duration_since(b.first_write);
        if b.attempts >= t.max_attempts || retried_for > t.max_retry_time {
            self.counters.events_retries_exhausted += b.events;
            self.counters.batches_retries_exhausted += 1;
            self.counters.given_up_after(b.last_cause, b.events);
            self.failed_for_good(slot);
        } else {
            b.state = SlotState::Waiting(crate::clock::later(now, wait));
        }
        self.leave(began);
    }

    /// The connection broke: count it, resend its batch on another attempt, reconnect.
    fn connection_lost(&mut self, i: usize, now: Instant) {
        self.counters.connection_resets += 1;
        if !self.ever_answered && matches!(self.proto, Proto::Http { .. }) {
            self.closed_unanswered += 1;
        }
        self.note(i, LinkEvent::Reset);
        self.close_link(i, now, Duration::from_millis(10));
    }

    fn close_link(&mut self, i: usize, now: Instant, delay: Duration) {
        if let Proto::Relp { sessions, .. } = &mut self.proto {
            sessions[i].reset();
        }
        // Read before the close empties the reader.
        let started = self.answer_started(i);
        let cause = std::mem::replace(&mut self.links[i].end_cause, Unconfirmed::NotDrained);
        self.unconfirm_link(i, cause);
        self.unblocked(i, now);
        let l = &mut self.links[i];
        l.sock.close(&self.registry);
        l.reconnect_at = crate::clock::later(now, delay);
        if let Some(b) = l.batch.take() {
            self.batches[b].last_cause = 0;
            if Some(b) == self.ack_slot {
                // An ack poll is simply asked again later.
                if let Proto::Http { acks: Some(a), .. } = &mut self.proto {
                    a.lost();
                }
                self.batches[b].state = SlotState::Free;
            } else if let Some(status) = started {
                // An answer had begun before the break: judged by what it said (http_io.rs).
                self.broken_answer(b, status, now);
            } else {
                self.retry_or_give_up(b, now, None);
            }
        }
    }

    fn check_timeouts(&mut self, p: &WorkerPlan, now: Instant) {
        for i in 0..self.links.len() {
            if let Some(b) = self.links[i].batch
                && now.duration_since(self.batches[b].attempt_write) > p.timeouts.request
            {
                self.counters.timeouts += 1;
                self.note(i, LinkEvent::Timeout);
                self.close_link(i, now, Duration::ZERO);
            }
        }
        self.setup_timeouts(p, now);
        self.relp_open_timeouts(p, now);
    }

    /// At the end: batches never accepted count as failed; unconfirmed acks are reported;
    /// syslog batches still waiting to be confirmed are unconfirmed (not drained).
    fn give_up_unfinished(&mut self) {
        self.unconfirm_all();
        if let Proto::Http { acks: Some(a), .. } = &mut self.proto {
            self.counters.acks_pending += a.give_up();
        }
        for k in 0..self.batches.len() {
            if Some(k) == self.ack_slot {
                self.batches[k].state = SlotState::Free;
            } else if self.batches[k].state != SlotState::Free {
                let began = self.enter(self.batches[k].second);
                self.counters.events_unfinished += self.batches[k].events;
                self.failed_for_good(k);
                self.leave(began);
            }
        }
    }

    /// The figures of a batch of second `t` (its events are due in it) are about to be
    /// counted (until `leave`): they go to that second (`by_second`), and a warm-up
    /// batch's, once the warm-up's intervals are sent, to the warm-up's tail instead of this
    /// interval (so a measured second holds none of them). True when this call began the
    /// counting; a call inside another's joins it.
    fn enter(&mut self, t: u32) -> bool {
        if self.counting.is_some() {
            return false;
        }
        let tail = t < self.warm_s && self.intervals >= self.warm_s && self.warm_tail.is_some();
        if tail {
            self.swap_tail();
        }
        self.counting = Some((t, Scheduled::of(&self.counters), tail));
        true
    }

    /// The counting `enter` began is over: what it added goes to its batch's second.
    fn leave(&mut self, began: bool) {
        if !began {
            return;
        }
        if let Some((t, before, tail)) = self.counting.take() {
            let added = Scheduled::of(&self.counters).since(before);
            add_by_second(&mut self.by_second, t, &added);
            if tail {
                self.swap_tail();
            }
        }
    }

    /// Trades this interval's figures for the warm-up's tail (and back).
    fn swap_tail(&mut self) {
        if let Some(w) = self.warm_tail.as_deref_mut() {
            std::mem::swap(&mut self.counters, &mut w.counters);
            std::mem::swap(&mut self.latency, &mut w.latency);
            std::mem::swap(&mut self.service, &mut w.service);
        }
    }

    /// The first second that may still get figures from this worker: that of its oldest
    /// batch not yet answered, or of the next batch when it is already due (behind
    /// schedule); else the next second.
    fn settled_before(&self, p: &WorkerPlan) -> u32 {
        let mut first = self.intervals.saturating_add(1);
        for (k, b) in self.batches.iter().enumerate() {
            if b.state != SlotState::Free && Some(k) != self.ack_slot {
                first = first.min(b.second);
            }
        }
        if let Some(s) = self.oldest_waiting() {
            first = first.min(s);
        }
        if !self.draining
            && self.scheduled < self.limit
            && let Some(s) = self.event_second(p, self.scheduled + 1)
        {
            first = first.min(s);
        }
        first
    }

    fn send_interval(&mut self, p: &WorkerPlan, now: Instant, last: bool) {
        let owed = self
            .owed_at(p, now.duration_since(p.start).as_secs_f64())
            .min(self.limit);
        self.counters.backlog_events = if last || self.closed {
            0
        } else {
            owed.saturating_sub(self.scheduled)
        };
        self.counters.connections_open = if last {
            0
        } else {
            self.links.iter().filter(|l| l.sock.is_open()).count() as u64
        };
        self.count_blocked(now);
        let cpu = thread_cpu_ns();
        self.counters.cpu_ns = cpu.saturating_sub(self.cpu_mark);
        self.cpu_mark = cpu;
        let back = p.back.try_recv().unwrap_or_default();
        let latency = std::mem::replace(&mut self.latency, back.latency);
        let service = std::mem::replace(&mut self.service, back.service);
        let by_second = std::mem::replace(&mut self.by_second, back.by_second);
        let settled_before = self.settled_before(p);
        self.intervals = self.intervals.saturating_add(1);
        let counters = std::mem::take(&mut self.counters);
        let account = last.then(|| {
            let mut a = std::mem::take(&mut self.account);
            a.agent = p.agent;
            a.events_sent = self.scheduled;
            a.settle();
            a
        });
        let phases = if last { self.phases.take() } else { None };
        let parts = if last { self.parts.take() } else { None };
        let by_target = if last { self.by_target.take() } else { None };
        let _ = p.tx.send(Interval {
            worker: p.id,
            counters,
            latency,
            service,
            by_second,
            settled_before,
            warm_tail: if last { self.warm_tail.take() } else { None },
            last,
            account,
            phases,
            parts,
            by_target,
            item_errors: if last {
                std::mem::take(&mut self.item_errors)
            } else {
                Vec::new()
            },
        });
    }
}

/// CPU time this thread has used (user and system), ns: one vDSO call, no allocation.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the struct we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Where a batch's events come from: the background packs' generators (one, or each source
/// of a mix, as its picker says), or the scenario lane's player. `next` prepares an event
/// and says its time; `render` writes it; `part` is the source of the prepared event.
enum Source<'a> {
    Pack {
        generators: &'a mut [Generator],
        picker: Option<&'a mut crate::engine::mix::Picker>,
        part: usize,
        timeline: &'a Timeline,
        threads: usize,
        id: usize,
        agent: u32,
        wall: i64,
        sent_ms: Option<u64>,
        ctx: EventCtx,
    },
    Lane {
        player: &'a mut crate::scenario::play::Player,
        agent: u32,
        sent_ms: Option<u64>,
        seq: u64,
    },
    Replay {
        player: &'a mut crate::generate::replay::Replayer,
        timeline: &'a Timeline,
        threads: usize,
        id: usize,
        agent: u32,
        wall: i64,
        sent_ms: Option<u64>,
        ctx: EventCtx,
    },
}

/// How a batch's events are framed, when not by the worker's own framer: with the framing
/// of the scenario stage the batch is of, or each event with its source's in a mix.
enum Framing<'a> {
    Own,
    Stage(&'a mut Framings, usize),
    Parts(&'a mut Framings),
}

#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; `part` is the mix picker's part, < its part count == generators.len()"
)]
impl<'a> Source<'a> {
    /// The source of the batch whose first event is this worker's `first`, with how its
    /// events are framed; `None` when the worker has no source (a plain HTTP load with a
    /// fixed body never asks).
    fn of(
        p: &'a mut WorkerPlan,
        first: u64,
        wall: i64,
        sent_ms: Option<u64>,
    ) -> Option<(Source<'a>, Framing<'a>)> {
        let (agent, threads, id) = (p.agent, p.threads, p.id);
        if let Some(lane) = p.lane.as_mut() {
            let stage = lane.stage_of(first);
            let src = Source::Lane {
                player: &mut lane.player,
                agent,
                sent_ms,
                seq: first,
            };
            return Some((src, Framing::Stage(&mut lane.wire, stage)));
        }
        if let Some(player) = p.replay.as_mut() {
            let src = Source::Replay {
                player,
                timeline: &p.timeline,
                threads,
                id,
                agent,
                wall,
                sent_ms,
                ctx: EventCtx::default(),
            };
            return Some((src, Framing::Own));
        }
        if p.generators.is_empty() {
            return None;
        }
        let (picker, framing) = match p.mix.as_mut() {
            Some(Mix { picker, wire }) => (Some(picker), Framing::Parts(wire)),
            None => (None, Framing::Own),
        };
        let src = Source::Pack {
            generators: &mut p.generators,
            picker,
            part: 0,
            timeline: &p.timeline,
            threads,
            id,
            agent,
            wall,
            sent_ms,
            ctx: EventCtx::default(),
        };
        Some((src, framing))
    }

    /// Whether the prepared event can be written now (a streamed recording's line may not
    /// have been read yet: the batch then ends short).
    #[inline]
    fn ready(&mut self) -> bool {
        match self {
            Source::Replay { player, ctx, .. } => player.ready(ctx.index),
            _ => true,
        }
    }

    /// The source (in a mix) of the prepared event; 0 otherwise.
    #[inline]
    fn part(&self) -> usize {
        match self {
            Source::Pack { part, .. } => *part,
            Source::Lane { .. } | Source::Replay { .. } => 0,
        }
    }

    /// Prepares this worker's event `seq` and returns its time (ns since the epoch).
    #[inline]
    fn next(&mut self, seq: u64) -> i64 {
        match self {
            Source::Pack {
                picker,
                part,
                timeline,
                threads,
                id,
                agent,
                wall,
                sent_ms,
                ctx,
                ..
            } => {
                if let Some(pk) = picker {
                    *part = pk.part_at(seq);
                }
                *ctx = event_ctx(timeline, (*threads, *id, *agent), seq, *wall, *sent_ms);
                ctx.time_ns
            }
            Source::Lane {
                player, seq: at, ..
            } => {
                *at = seq;
                player.time_ns(seq as usize)
            }
            Source::Replay {
                timeline,
                threads,
                id,
                agent,
                wall,
                sent_ms,
                ctx,
                ..
            } => {
                *ctx = event_ctx(timeline, (*threads, *id, *agent), seq, *wall, *sent_ms);
                ctx.time_ns
            }
        }
    }

    /// Writes the prepared event.
    #[inline]
    fn render(&mut self, out: &mut Vec<u8>) {
        match self {
            Source::Pack {
                generators,
                part,
                ctx,
                ..
            } => {
                generators[*part].render(ctx, out);
            }
            Source::Lane {
                player,
                agent,
                sent_ms,
                seq,
                ..
            } => player.render(*seq as usize, *agent, *seq, *sent_ms, out),
            Source::Replay { player, ctx, .. } => player.render(ctx, out),
        }
    }
}

/// The context of worker `id`'s (agent `agent`'s) event `seq`: its global index (workers
/// interleave), its time.
#[inline]
fn event_ctx(
    timeline: &Timeline,
    (threads, id, agent): (usize, usize, u32),
    seq: u64,
    wall: i64,
    sent_ms: Option<u64>,
) -> EventCtx {
    let index = seq * threads as u64 + id as u64;
    EventCtx {
        index,
        time_ns: timeline.time_of(index, wall),
        agent,
        seq,
        sent_ms,
    }
}

/// The order a UDP batch's datagrams leave in: by size, longest first (runs of one size, each
/// able to end with one shorter datagram, as GSO wants; generation order within a size), or
/// as generated. Sorts in place without allocating.
#[allow(
    clippy::indexing_slicing,
    reason = "`i` ranges over 0..ends.len(), and `i - 1` is taken only for i > 0"
)]
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
