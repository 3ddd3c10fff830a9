//! The worker's side of syslog over TCP, TLS and UDP, which has no answers: what makes a
//! written batch accepted, and what leaves it unconfirmed (issue 33). A batch fully handed
//! to the kernel is not accepted yet: it waits in the worker's `Pending` list, with the
//! connection's byte count after its last byte (`Conn::wire_bytes`).
//!
//! - **Accepted** at a check that finds (1) every byte of it acknowledged by the peer's TCP
//!   (the connection's bytes written less SIOCOUTQ, its unacknowledged bytes, reach the
//!   batch's end), (2) the connection up — no FIN, no RST read from it — for `CONFIRM_AFTER`
//!   since a check first saw it acknowledged, and (3) the peer's receive window open
//!   (TCP_INFO `tcpi_snd_wnd` at least half the widest it advertised): its buffer is not
//!   half full of bytes its application left unread. A receiver that rejects what it reads (a
//!   TLS port fed plain TCP, one that reads a chunk and drops the connection, one that
//!   resets) closes within moments of taking the bytes, and one that never reads closes its
//!   window as the bytes pile up: their batches never get there. Where the kernel does not
//!   give the window (before Linux 6.2), (1) and (2) alone. UDP: once sent, with no ICMP
//!   port unreachable reported on the socket for `CONFIRM_AFTER`.
//! - **Unconfirmed** (`Counters::events_unconfirmed_by`, neither accepted nor failed; their
//!   seqs are given up in the accounting, so a store that holds them calls them unexpected,
//!   not lost) when the connection ends first: `connection reset` (RST, or the socket
//!   failed), `connection closed` (the peer's FIN), `not drained` (closed from this side: the
//!   end of the run once the drain time has passed, a cut, a timeout, an abort), `port
//!   unreachable` (UDP). What the kernel still held unsent on the connection then (SIOCOUTQ)
//!   is added to `bytes_unsent_at_close`.
//! - **The end of the run** waits (within the drain time) for every send queue to drain and
//!   every batch to be confirmed before it counts the last writes accepted.
//!
//! What TCP cannot tell: what the application did with what it read (a receiver that reads,
//! keeps the connection and drops the events), and bytes a receiver holds unread while its
//! window is still open (up to half its buffer: some 50 KB with Linux's defaults, about 200
//! events of 220 bytes — a receiver that stops reading at a low rate and then resets loses
//! them unseen). A reader's window at rest is not quite its widest (86 % was measured), so
//! nothing much stricter is safe.
//! `verify` against the store, or
//! RELP, tells those apart.
//!
//! No allocation: `Pending` holds its records in a list reserved at start; a link takes no
//! new batch while the list is full (the target has not confirmed what it was given: a
//! receiver that reads slower than it is sent gets its buffer drained before more comes).

use std::time::{Duration, Instant};

use super::{Proto, SlotState, Socket, Worker, WorkerPlan};
use crate::stats::MAX_LATENCY_US;
use crate::stats::parts::PartCounts;
use crate::stats::result::AbortReason;

/// How long a batch's bytes must have been acknowledged by the peer's TCP, the connection up
/// all along, before the batch counts accepted.
pub const CONFIRM_AFTER: Duration = Duration::from_millis(250);
/// A syslog connection idle this long has its peer probed (TCP keepalive), whose answer
/// carries the window as it is: one the peer opened by reading without announcing it.
pub const PROBE_IDLE: Duration = Duration::from_secs(1);
/// How often the links' send queues are looked at while batches wait to be confirmed (two
/// system calls per connection with batches waiting): every 10 ms, 10 ms more for every 64
/// connections a worker has, at most every 250 ms.
const CHECK_EVERY: Duration = Duration::from_millis(10);
const CHECK_EVERY_MAX: Duration = Duration::from_millis(250);
/// Batches one worker keeps waiting per connection (at least `MIN_PENDING` in all): a
/// connection writes a new batch while fewer than these wait.
const PENDING_PER_LINK: usize = 64;
const MIN_PENDING: usize = 2048;
const MAX_PENDING: usize = 16_384;

/// Why written events were never confirmed: the index of `Counters::events_unconfirmed_by`
/// (`stats::UNCONFIRMED_CAUSES` names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unconfirmed {
    Reset = 0,
    Closed = 1,
    NotDrained = 2,
    Refused = 3,
}

/// A batch written and waiting to be confirmed.
#[derive(Clone, Copy)]
struct Written {
    link: usize,
    /// Its connection's `wire_bytes` after its last byte (0 for UDP).
    end: u64,
    first_seq: u64,
    seqs: u64,
    events: u64,
    target: usize,
    parts: PartCounts,
    /// From its intended time and from its attempt's write to when it was written, µs.
    latency_us: u64,
    service_us: u64,
    /// When a check first saw all of it acknowledged (UDP: when it was sent), and whether
    /// that was after the worker's schedule ended: the acknowledgement is syslog's answer, so
    /// it says whether the batch counts in `events_accepted_in_drain`, not the confirmation
    /// time after it.
    acked_at: Option<Instant>,
    acked_in_drain: bool,
    /// The second its events were scheduled in: where its outcome counts.
    second: u32,
}

/// The worker's written batches waiting to be confirmed, oldest first.
pub(super) struct Pending {
    items: Vec<Written>,
    /// Most batches waiting at once; 0 where batches are answered (HTTP, RELP).
    cap: usize,
    /// Most waiting on one connection (twice its share): a receiver that stops reading holds
    /// up its own connection, not the others (several targets).
    per_link: u32,
    next_check: Instant,
    check_every: Duration,
}

impl Pending {
    /// For `links` connections of a syslog stream or datagram proto (`used`); empty otherwise.
    pub(super) fn new(used: bool, links: usize, now: Instant) -> Pending {
        let cap = if used {
            (links * PENDING_PER_LINK).clamp(MIN_PENDING, MAX_PENDING)
        } else {
            0
        };
        Pending {
            // Room for one more batch per link: each may finish the one it is writing.
            items: Vec::with_capacity(if used { cap + links } else { 0 }),
            cap,
            per_link: u32::try_from((cap * 2 / links.max(1)).min(cap)).unwrap_or(u32::MAX),
            next_check: now,
            check_every: CHECK_EVERY
                .saturating_mul(1 + u32::try_from(links / 64).unwrap_or(u32::MAX))
                .min(CHECK_EVERY_MAX),
        }
    }

    /// A link with `waiting` batches waiting may start a new one: there is room for it to
    /// wait once written.
    pub(super) fn room(&self, waiting: u32) -> bool {
        self.cap == 0 || (self.items.len() < self.cap && waiting < self.per_link)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// When the next check is due, while batches wait.
    pub(super) fn next_check(&self) -> Option<Instant> {
        (!self.items.is_empty()).then_some(self.next_check)
    }
}

#[allow(
    clippy::indexing_slicing,
    reason = "link indices are < links.len() (a record's link is the one it was written on); \
              slot indices are of the fixed pool; the cause is an index of the fixed \
              events_unconfirmed_by array"
)]
impl Worker {
    /// Batch `slot` is all handed to the kernel on link `i`: it waits to be confirmed; the
    /// link is free for the next one.
    pub(super) fn written(&mut self, i: usize, slot: usize, now: Instant) {
        let b = &mut self.batches[slot];
        let (end, acked_at) = match &self.links[i].sock {
            Socket::Stream(c) => (c.wire_bytes, None),
            Socket::Datagram(_) => (0, Some(now)),
        };
        let us = |since: Instant| now.saturating_duration_since(since).as_micros() as u64;
        self.pending.items.push(Written {
            link: i,
            end,
            first_seq: b.first_seq,
            seqs: b.seqs,
            events: b.events,
            target: b.target,
            parts: b.parts,
            latency_us: us(b.intended),
            service_us: us(b.attempt_write),
            acked_at,
            acked_in_drain: self.draining,
            second: b.second,
        });
        b.state = SlotState::Free;
        let l = &mut self.links[i];
        l.waiting += 1;
        l.batch = None;
        l.offset = 0;
        if self.pending.next_check < now {
            self.pending.next_check = now + self.pending.check_every;
        }
    }

    /// Every `check_every` while batches wait: how far each link's peer has acknowledged
    /// (UDP: whether ICMP refused), and every batch acknowledged `CONFIRM_AFTER` ago accepted.
    pub(super) fn confirm(&mut self, p: &WorkerPlan, now: Instant) {
        if self.pending.items.is_empty() || now < self.pending.next_check {
            return;
        }
        self.pending.next_check = now + self.pending.check_every;
        for i in 0..self.links.len() {
            if self.links[i].waiting == 0 {
                continue;
            }
            let l = &mut self.links[i];
            let error = match &mut l.sock {
                Socket::Stream(c) => {
                    let peer = c.peer();
                    l.acked = peer.acked;
                    // Where the kernel cannot tell, the acknowledgement and the time alone.
                    l.reading = peer.window_open.unwrap_or(true);
                    None
                }
                Socket::Datagram(u) => u.take_error(),
            };
            if let Some(e) = error {
                self.udp_error(p, i, &e, now);
            }
        }
        let mut items = std::mem::take(&mut self.pending.items);
        items.retain_mut(|w| {
            let l = &self.links[w.link];
            if w.acked_at.is_none() && l.acked >= w.end {
                w.acked_at = Some(now);
                w.acked_in_drain = self.draining;
            }
            let done = l.reading
                && w.acked_at
                    .is_some_and(|t| now.saturating_duration_since(t) >= CONFIRM_AFTER);
            if done {
                self.confirmed(w);
            }
            !done
        });
        self.pending.items = items;
    }

    /// The peer ended link `i`'s connection (`cause`: reset or closed): the link goes as any
    /// broken connection does, and what waits on it is unconfirmed for that cause.
    pub(super) fn peer_closed(&mut self, i: usize, now: Instant, cause: Unconfirmed) {
        self.links[i].end_cause = cause;
        self.connection_lost(i, now);
    }

    /// An error on UDP link `i`'s socket (from a send, or left there by ICMP). A port
    /// unreachable is about datagrams sent before: what waits on the link is unconfirmed
    /// (`port unreachable`) and the run stops (nothing listens there). Anything else breaks
    /// the link, as a broken connection does.
    pub(super) fn udp_error(&mut self, p: &WorkerPlan, i: usize, e: &std::io::Error, now: Instant) {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            self.unconfirm_link(i, Unconfirmed::Refused);
            p.abort.set(AbortReason::Unreachable(format!(
                "udp://{}: port unreachable (ICMP): nothing listens there",
                p.addr
            )));
        } else {
            self.connection_lost(i, now);
        }
    }

    /// Link `i`'s connection ends (`close_link`, before its socket goes): the bytes its
    /// kernel still holds unsent are counted, and each batch waiting on it is unconfirmed for
    /// `cause` (the peer's, `peer_closed` said which; else this side's: not drained).
    pub(super) fn unconfirm_link(&mut self, i: usize, cause: Unconfirmed) {
        if !matches!(self.proto, Proto::Stream { .. } | Proto::Datagram { .. }) {
            return;
        }
        if let Socket::Stream(c) = &self.links[i].sock
            && c.is_open()
        {
            self.counters.bytes_unsent_at_close += c.unsent().unwrap_or(0);
        }
        if self.links[i].waiting == 0 {
            return;
        }
        let mut items = std::mem::take(&mut self.pending.items);
        items.retain(|w| {
            let here = w.link == i;
            if here {
                self.unconfirmed(w, cause);
            }
            !here
        });
        self.pending.items = items;
        self.links[i].waiting = 0;
    }

    /// At the end: whatever still waits is unconfirmed (not drained).
    pub(super) fn unconfirm_all(&mut self) {
        for i in 0..self.links.len() {
            if self.links[i].waiting > 0 {
                self.unconfirm_link(i, Unconfirmed::NotDrained);
            }
        }
    }

    fn confirmed(&mut self, w: &Written) {
        let began = self.enter(w.second);
        self.counters.events_accepted += w.events;
        if w.acked_in_drain {
            self.counters.events_accepted_in_drain += w.events;
        }
        self.counters.batches_accepted += 1;
        let (lat, svc) = (
            w.latency_us.clamp(1, MAX_LATENCY_US),
            w.service_us.clamp(1, MAX_LATENCY_US),
        );
        self.latency.saturating_record(lat);
        self.service.saturating_record(svc);
        if let Some(t) = self.parts.as_deref_mut() {
            t.accepted(&w.parts, lat, svc);
        }
        if let Some(t) = self.by_target.as_deref_mut() {
            t.accepted_at(w.target, w.events, lat, svc);
        }
        let l = &mut self.links[w.link];
        l.waiting = l.waiting.saturating_sub(1);
        self.leave(began);
    }

    fn unconfirmed(&mut self, w: &Written, cause: Unconfirmed) {
        let began = self.enter(w.second);
        self.counters.events_unconfirmed_by[cause as usize] += w.events;
        self.counters.batches_unconfirmed += 1;
        self.account.fail(w.first_seq, w.first_seq + w.seqs);
        if let Some(t) = self.parts.as_deref_mut() {
            t.unconfirmed(&w.parts);
        }
        if let Some(t) = self.by_target.as_deref_mut() {
            t.unconfirmed_at(w.target, w.events);
        }
        self.leave(began);
    }

    /// The oldest second a batch waiting to be confirmed was scheduled in.
    pub(super) fn oldest_waiting(&self) -> Option<u32> {
        self.pending.items.iter().map(|w| w.second).min()
    }
}
