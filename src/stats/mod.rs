//! Measurement: plain per-worker counters (no atomics, no sharing), two HDR histograms per
//! worker (latency from the intended send time, and service time from the actual write), the
//! `Interval` a worker sends its coordinator every second, and merging them. Histograms
//! ping-pong: the coordinator sends a cleared one back, so steady state allocates nothing.

pub mod parts;
pub mod phases;
pub mod result;
pub mod snapshot;

use hdrhistogram::Histogram;

/// Highest latency recorded exactly (60 s in µs); longer ones are clamped to it.
pub const MAX_LATENCY_US: u64 = 60_000_000;

#[allow(
    clippy::expect_used,
    reason = "the bounds are constants (1 <= MAX_LATENCY_US, 3 significant digits), which \
              new_with_bounds accepts; every test builds one"
)]
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds")
}

/// A counter array as saved (`report merge` reads it back): its non-zero entries as
/// `{"index": count}`, the rest zero.
mod sparse {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer, const N: usize>(a: &[u64; N], s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(a.iter().enumerate().filter(|(_, n)| **n > 0))
    }

    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<[u64; N], D::Error> {
        let mut a = [0; N];
        for (i, n) in BTreeMap::<usize, u64>::deserialize(d)? {
            *a.get_mut(i).ok_or_else(|| {
                serde::de::Error::custom(format!("index {i} is past the counter's {N}"))
            })? = n;
        }
        Ok(a)
    }
}

/// Why syslog events written over TCP, TLS or UDP were never confirmed (the index of
/// `Counters::events_unconfirmed_by`), in the report's words: the peer reset the connection
/// (or the socket failed), the peer closed it, it was closed from this side (the run's end
/// after the drain, a cut, a timeout, an abort) before the peer's TCP had taken the bytes and
/// kept the connection for the confirmation time, or ICMP said nothing listens (UDP).
pub const UNCONFIRMED_CAUSES: [&str; 4] = [
    "connection reset",
    "connection closed",
    "not drained",
    "port unreachable",
];

/// Counters one worker keeps; all plain integers, summed by the coordinator.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Counters {
    pub events_sent: u64,
    pub batches_sent: u64,
    pub bytes_sent: u64,
    pub events_accepted: u64,
    pub batches_accepted: u64,
    pub events_failed: u64,
    pub batches_failed: u64,
    /// Sends of a batch after the first (429/503, dropped connection).
    pub batches_retried: u64,
    pub auth_failures: u64,
    pub connect_errors: u64,
    pub connection_resets: u64,
    pub timeouts: u64,
    pub protocol_errors: u64,
    pub reconnects: u64,
    /// Connections closed by a `cut` (control or a fault).
    pub connections_cut: u64,
    /// Batches acknowledged as indexed (HEC `ack: true`).
    pub batches_acked: u64,
    /// Batches accepted with an ackId but not (yet) acknowledged when the worker stopped.
    pub acks_pending: u64,
    /// Sum and maximum of how late batches left compared to their schedule, ns.
    pub lag_ns_sum: u64,
    pub lag_ns_max: u64,
    /// Events the schedule wanted by now that the worker has not sent yet (end of interval).
    pub backlog_events: u64,
    /// Connections open at the end of the interval (a gauge, summed over workers).
    pub connections_open: u64,
    /// Time batches spent waiting for room in a full socket buffer, ns.
    pub send_blocked_ns: u64,
    /// Syslog messages over `max_message_bytes`, left out (never cut).
    pub oversize_events: u64,
    /// Batches (and their events) given up after `retry.max_attempts` sends or
    /// `retry.max_time` of retrying, whatever the cause (refusals, resets, timeouts).
    pub batches_retries_exhausted: u64,
    pub events_retries_exhausted: u64,
    /// HEC ack polls answered with something other than 2xx.
    pub ack_poll_failures: u64,
    /// Events accepted after the worker's schedule ended (answers that came in the drain).
    pub events_accepted_in_drain: u64,
    /// Time spent rendering and framing batches (the generator's processing time), ns.
    pub processing_ns: u64,
    /// CPU time the worker thread used (user and system), ns.
    pub cpu_ns: u64,
    /// Time a due batch waited because every open connection had a request in flight (the
    /// target holds the run back), ns.
    pub wait_for_target_ns: u64,
    /// Time a due batch waited because no connection was open (the target is down), ns.
    pub target_down_ns: u64,
    /// Time a due batch waited for the request cap (`limits.max_requests_per_sec`), ns.
    pub held_by_cap_ns: u64,
    /// UDP: send system calls, GSO buffers among what they sent (each many datagrams), and
    /// sockets on which the kernel refused GSO.
    pub udp_send_calls: u64,
    pub udp_gso_sends: u64,
    pub udp_gso_refused: u64,
    /// Events failed for good by the answer that refused them (index = status - 400: 4xx/5xx
    /// other than 429/503, and 401/403).
    #[serde(with = "sparse")]
    pub events_refused_status: [u64; 200],
    /// Events given up after their retries, by what the last attempt met: 429, 503, another
    /// answer worth retrying (HEC busy codes), a broken connection or a timeout.
    pub events_given_up_429: u64,
    pub events_given_up_503: u64,
    pub events_given_up_busy: u64,
    pub events_given_up_transport: u64,
    /// Events still unanswered when the run ended (counted failed).
    pub events_unfinished: u64,
    /// Syslog over TCP, TLS or UDP: events written and never confirmed (neither accepted nor
    /// failed: the collector may or may not hold them), by cause (`UNCONFIRMED_CAUSES`), and
    /// their batches.
    pub events_unconfirmed_by: [u64; UNCONFIRMED_CAUSES.len()],
    pub batches_unconfirmed: u64,
    /// Syslog over TCP or TLS: bytes the kernel still held unsent (SIOCOUTQ: not
    /// acknowledged by the peer's TCP) when connections ended — reset or closed by the peer,
    /// or closed from this side (a cut, a timeout, the end of the run).
    pub bytes_unsent_at_close: u64,
    /// RELP: messages written again on a new connection because the one they went on broke
    /// before answering them (each resend once; the same bytes, a new txnr).
    pub events_resent: u64,
    /// `_bulk` items answered 409 to a `create`: stored by an earlier attempt (accepted).
    pub events_already_stored: u64,
    /// `_bulk` items failed for good, by `adapter::bulk::ERROR_TYPES` index.
    #[serde(with = "sparse")]
    pub events_failed_by_type: [u64; crate::adapter::bulk::ERROR_TYPES.len()],
    /// Responses by HTTP status (index = status code).
    #[serde(with = "sparse")]
    pub status: [u64; 600],
    /// HEC response codes 0..=31.
    #[serde(with = "sparse")]
    pub hec_codes: [u64; 32],
    /// Events (and batches) answered 2xx in words the engine cannot read — an answer over
    /// the cap, a length that lies, a connection closed mid-body, an HEC body without a
    /// `code`: never resent (the collector said yes), counted failed and here apart.
    pub events_unreadable_2xx: u64,
    pub batches_unreadable_2xx: u64,
    /// Events failed for good by an HEC code (index = code, 0..=31: 6 invalid data format…),
    /// whatever the status that came with it.
    #[serde(with = "sparse")]
    pub events_failed_by_hec_code: [u64; 32],
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            events_sent: 0,
            batches_sent: 0,
            bytes_sent: 0,
            events_accepted: 0,
            batches_accepted: 0,
            events_failed: 0,
            batches_failed: 0,
            batches_retried: 0,
            auth_failures: 0,
            connect_errors: 0,
            connection_resets: 0,
            timeouts: 0,
            protocol_errors: 0,
            reconnects: 0,
            connections_cut: 0,
            batches_acked: 0,
            acks_pending: 0,
            lag_ns_sum: 0,
            lag_ns_max: 0,
            backlog_events: 0,
            connections_open: 0,
            send_blocked_ns: 0,
            oversize_events: 0,
            batches_retries_exhausted: 0,
            events_retries_exhausted: 0,
            ack_poll_failures: 0,
            events_accepted_in_drain: 0,
            processing_ns: 0,
            cpu_ns: 0,
            wait_for_target_ns: 0,
            target_down_ns: 0,
            held_by_cap_ns: 0,
            udp_send_calls: 0,
            udp_gso_sends: 0,
            udp_gso_refused: 0,
            events_refused_status: [0; 200],
            events_given_up_429: 0,
            events_given_up_503: 0,
            events_given_up_busy: 0,
            events_given_up_transport: 0,
            events_unfinished: 0,
            events_unconfirmed_by: [0; UNCONFIRMED_CAUSES.len()],
            batches_unconfirmed: 0,
            bytes_unsent_at_close: 0,
            events_resent: 0,
            events_already_stored: 0,
            events_failed_by_type: [0; crate::adapter::bulk::ERROR_TYPES.len()],
            status: [0; 600],
            hec_codes: [0; 32],
            events_unreadable_2xx: 0,
            batches_unreadable_2xx: 0,
            events_failed_by_hec_code: [0; 32],
        }
    }
}

impl Counters {
    /// Adds `o` into `self` (gauges: `lag_ns_max` takes the max, `backlog_events` and
    /// `connections_open` the sum: add the workers' same second, not seconds of one worker).
    pub fn add(&mut self, o: &Counters) {
        self.events_sent += o.events_sent;
        self.batches_sent += o.batches_sent;
        self.bytes_sent += o.bytes_sent;
        self.events_accepted += o.events_accepted;
        self.batches_accepted += o.batches_accepted;
        self.events_failed += o.events_failed;
        self.batches_failed += o.batches_failed;
        self.batches_retried += o.batches_retried;
        self.auth_failures += o.auth_failures;
        self.connect_errors += o.connect_errors;
        self.connection_resets += o.connection_resets;
        self.timeouts += o.timeouts;
        self.protocol_errors += o.protocol_errors;
        self.reconnects += o.reconnects;
        self.connections_cut += o.connections_cut;
        self.batches_acked += o.batches_acked;
        self.acks_pending += o.acks_pending;
        self.lag_ns_sum += o.lag_ns_sum;
        self.lag_ns_max = self.lag_ns_max.max(o.lag_ns_max);
        self.backlog_events += o.backlog_events;
        self.connections_open += o.connections_open;
        self.send_blocked_ns += o.send_blocked_ns;
        self.oversize_events += o.oversize_events;
        self.batches_retries_exhausted += o.batches_retries_exhausted;
        self.events_retries_exhausted += o.events_retries_exhausted;
        self.ack_poll_failures += o.ack_poll_failures;
        self.events_accepted_in_drain += o.events_accepted_in_drain;
        self.processing_ns += o.processing_ns;
        self.cpu_ns += o.cpu_ns;
        self.wait_for_target_ns += o.wait_for_target_ns;
        self.target_down_ns += o.target_down_ns;
        self.held_by_cap_ns += o.held_by_cap_ns;
        self.udp_send_calls += o.udp_send_calls;
        for (a, b) in self
            .events_refused_status
            .iter_mut()
            .zip(&o.events_refused_status)
        {
            *a += b;
        }
        self.events_given_up_429 += o.events_given_up_429;
        self.events_given_up_503 += o.events_given_up_503;
        self.events_given_up_busy += o.events_given_up_busy;
        self.events_given_up_transport += o.events_given_up_transport;
        self.events_unfinished += o.events_unfinished;
        for (a, b) in self
            .events_unconfirmed_by
            .iter_mut()
            .zip(&o.events_unconfirmed_by)
        {
            *a += b;
        }
        self.batches_unconfirmed += o.batches_unconfirmed;
        self.bytes_unsent_at_close += o.bytes_unsent_at_close;
        self.events_resent += o.events_resent;
        self.events_already_stored += o.events_already_stored;
        for (a, b) in self
            .events_failed_by_type
            .iter_mut()
            .zip(&o.events_failed_by_type)
        {
            *a += b;
        }
        self.udp_gso_sends += o.udp_gso_sends;
        self.udp_gso_refused += o.udp_gso_refused;
        for (a, b) in self.status.iter_mut().zip(o.status.iter()) {
            *a += b;
        }
        for (a, b) in self.hec_codes.iter_mut().zip(o.hec_codes.iter()) {
            *a += b;
        }
        self.events_unreadable_2xx += o.events_unreadable_2xx;
        self.batches_unreadable_2xx += o.batches_unreadable_2xx;
        for (a, b) in self
            .events_failed_by_hec_code
            .iter_mut()
            .zip(&o.events_failed_by_hec_code)
        {
            *a += b;
        }
    }

    /// Resets every counter to zero (no allocation: the struct is plain data).
    pub fn clear(&mut self) {
        *self = Counters::default();
    }

    /// Syslog events written and never confirmed, whatever the cause.
    pub fn events_unconfirmed(&self) -> u64 {
        self.events_unconfirmed_by.iter().sum()
    }

    /// `(cause, events)` for every cause that left events unconfirmed.
    pub fn unconfirmed_causes(&self) -> Vec<(&'static str, u64)> {
        UNCONFIRMED_CAUSES
            .iter()
            .zip(self.events_unconfirmed_by)
            .filter(|(_, n)| *n > 0)
            .map(|(c, n)| (*c, n))
            .collect()
    }

    /// `unconfirmed_causes` keyed by name, as reports and snapshots carry it.
    pub fn unconfirmed_by_name(&self) -> std::collections::BTreeMap<String, u64> {
        self.unconfirmed_causes()
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect()
    }

    /// Transport-level errors: connects, resets, timeouts, protocol errors.
    pub fn connection_errors(&self) -> u64 {
        self.connect_errors + self.connection_resets + self.timeouts + self.protocol_errors
    }

    /// `(status, count)` for every status seen.
    /// `events` failed for good by an answer of `status` (one not retried).
    #[inline]
    pub fn refused_for_good(&mut self, status: u16, events: u64) {
        if let Some(n) = status
            .checked_sub(400)
            .and_then(|i| self.events_refused_status.get_mut(usize::from(i)))
        {
            *n += events;
        }
    }

    /// `events` given up after their retries; `last` is what the last attempt met (a status,
    /// or 0 for a broken connection or a timeout).
    #[inline]
    pub fn given_up_after(&mut self, last: u16, events: u64) {
        match last {
            0 => self.events_given_up_transport += events,
            429 => self.events_given_up_429 += events,
            503 => self.events_given_up_503 += events,
            _ => self.events_given_up_busy += events,
        }
    }

    /// Events failed for good by each refusing status, as `(status, events)`.
    pub fn refused_statuses(&self) -> Vec<(u16, u64)> {
        self.events_refused_status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| (400 + i as u16, *n))
            .collect()
    }

    /// Responses that refused for now (429 and 503: the collector asks to be retried).
    pub fn refusals(&self) -> u64 {
        self.status[429] + self.status[503]
    }

    pub fn statuses(&self) -> Vec<(u16, u64)> {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(s, n)| (s as u16, *n))
            .collect()
    }
}

/// A batch's figures counted by the second its batch was scheduled in (its intended send
/// time), whenever it was sent or answered: what a row of the timeline, and so every window
/// made of rows (a sizing step, a fault), counts. Plain integers, no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Scheduled {
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    pub batches_accepted: u64,
    pub batches_failed: u64,
}

impl Scheduled {
    /// These figures of `c`.
    pub fn of(c: &Counters) -> Scheduled {
        Scheduled {
            events_sent: c.events_sent,
            events_accepted: c.events_accepted,
            events_failed: c.events_failed,
            batches_accepted: c.batches_accepted,
            batches_failed: c.batches_failed,
        }
    }

    /// What was added since `before` (figures only grow; a smaller one counts 0).
    pub fn since(self, before: Scheduled) -> Scheduled {
        Scheduled {
            events_sent: self.events_sent.saturating_sub(before.events_sent),
            events_accepted: self.events_accepted.saturating_sub(before.events_accepted),
            events_failed: self.events_failed.saturating_sub(before.events_failed),
            batches_accepted: self
                .batches_accepted
                .saturating_sub(before.batches_accepted),
            batches_failed: self.batches_failed.saturating_sub(before.batches_failed),
        }
    }

    pub fn add(&mut self, o: &Scheduled) {
        self.events_sent += o.events_sent;
        self.events_accepted += o.events_accepted;
        self.events_failed += o.events_failed;
        self.batches_accepted += o.batches_accepted;
        self.batches_failed += o.batches_failed;
    }

    pub fn is_empty(&self) -> bool {
        *self == Scheduled::default()
    }
}

/// Per-batch figures by the second their batches were scheduled in: `(second, figures)`,
/// each second once. A worker fills one per interval (reserved, sent back by the coordinator
/// with the histograms, so steady state allocates nothing).
pub type BySecond = Vec<(u32, Scheduled)>;

/// Seconds a worker's `BySecond` holds without growing.
pub const BY_SECOND_CAP: usize = 64;

/// Adds `d` to second `t` of `v` (usually its last entry: answers come roughly in order).
pub fn add_by_second(v: &mut BySecond, t: u32, d: &Scheduled) {
    if d.is_empty() {
        return;
    }
    match v.iter_mut().rev().find(|(s, _)| *s == t) {
        Some((_, x)) => x.add(d),
        None => v.push((t, *d)),
    }
}

/// The figures of the warm-up's batches that were counted after it (their answers came
/// late): kept apart by the worker and sent with its last interval, so they are in the whole
/// run's totals and out of what is measured.
pub struct WarmTail {
    pub counters: Counters,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
}

/// What the coordinator gives a worker back for its next interval: the histograms, cleared,
/// and the by-second list, emptied.
pub struct Recycled {
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub by_second: BySecond,
}

impl Recycled {
    pub fn new() -> Recycled {
        Recycled {
            latency: new_histogram(),
            service: new_histogram(),
            by_second: Vec::with_capacity(BY_SECOND_CAP),
        }
    }
}

impl Default for Recycled {
    fn default() -> Self {
        Recycled::new()
    }
}

/// One worker's second: the counters since its last interval and its histograms.
pub struct Interval {
    pub worker: usize,
    pub counters: Counters,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    /// This interval's per-batch figures by the second their batches were scheduled in
    /// (`counters` holds them too, by when they happened — but for the warm-up's batches
    /// counted after it, which go to the worker's `WarmTail`).
    pub by_second: BySecond,
    /// Every second before this one is settled for this worker: no batch scheduled in it is
    /// still unsent or unanswered.
    pub settled_before: u32,
    /// With the last interval: the warm-up's figures counted after it.
    pub warm_tail: Option<Box<WarmTail>>,
    /// The worker has stopped for good; this is its last interval.
    pub last: bool,
    /// With the last interval: which of the worker's sequence numbers were given up.
    pub account: Option<AgentAccount>,
    /// With the last interval of a plain HTTP load: its requests' phases.
    pub phases: Option<Box<phases::Phases>>,
    /// With the last interval of a mix of sources: the worker's figures by source.
    pub parts: Option<Box<parts::Parts>>,
    /// With the last interval of a run to several targets: the worker's figures by target.
    pub by_target: Option<Box<parts::Parts>>,
    /// With the last interval of `_bulk` runs: the first item errors the worker met
    /// (`STATUS TYPE: REASON`, a few at most).
    pub item_errors: Vec<String>,
}

impl Interval {
    /// The last interval of worker `worker` when it has nothing to send (its thread failed,
    /// or it could not set up): nothing counted, so the coordinator stops waiting for it.
    pub fn lost(worker: usize) -> Interval {
        Interval {
            worker,
            counters: Counters::default(),
            latency: new_histogram(),
            service: new_histogram(),
            last: true,
            account: None,
            phases: None,
            parts: None,
            by_target: None,
            item_errors: Vec::new(),
            by_second: BySecond::default(),
            settled_before: u32::MAX,
            warm_tail: None,
        }
    }
}

/// Most failed ranges one agent keeps; beyond them the list is marked incomplete.
pub const MAX_FAILED_RANGES: usize = 4096;

/// What one agent (a worker: the `agent` of its accounting tags) sent: its events carry seq
/// 0 .. `events_sent`, contiguous; the seqs in `failed` (`[from, to)`, in order, merged) were
/// given up, every other one accepted (or, for syslog, written).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentAccount {
    pub agent: u32,
    pub events_sent: u64,
    pub failed: Vec<(u64, u64)>,
    /// More than `MAX_FAILED_RANGES` ranges failed: `failed` is incomplete.
    pub failed_overflow: bool,
}

impl AgentAccount {
    /// An empty account with room for every range it may keep (64 KiB; no allocation later,
    /// on the worker).
    pub fn new(agent: u32) -> AgentAccount {
        AgentAccount {
            agent,
            events_sent: 0,
            failed: Vec::with_capacity(MAX_FAILED_RANGES),
            failed_overflow: false,
        }
    }

    /// Seqs `[from, to)` were given up. Ranges come roughly in order; one that touches the
    /// last is merged into it, others are kept for `settle` to sort and merge.
    pub fn fail(&mut self, from: u64, to: u64) {
        if from >= to {
            return;
        }
        if let Some(last) = self.failed.last_mut()
            && from <= last.1
            && to >= last.0
        {
            *last = (last.0.min(from), last.1.max(to));
            return;
        }
        if self.failed.len() >= MAX_FAILED_RANGES {
            self.failed_overflow = true;
            return;
        }
        self.failed.push((from, to));
    }

    /// Sorts and merges the ranges (once, when the worker stops).
    pub fn settle(&mut self) {
        self.failed.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.failed.len());
        for &(a, b) in &self.failed {
            match out.last_mut() {
                Some(l) if a <= l.1 => l.1 = l.1.max(b),
                _ => out.push((a, b)),
            }
        }
        self.failed = out;
    }

    /// Seqs given up, counted.
    pub fn failed_events(&self) -> u64 {
        self.failed.iter().map(|(a, b)| b - a).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_events_are_counted_once_by_what_failed_them() {
        let mut c = Counters::default();
        c.refused_for_good(400, 10);
        c.refused_for_good(413, 5);
        c.refused_for_good(401, 2);
        c.refused_for_good(200, 7); // no refusing status: not counted by status
        c.given_up_after(429, 3);
        c.given_up_after(503, 4);
        c.given_up_after(200, 6); // an HEC busy code on a 200
        c.given_up_after(0, 8);
        let mut sum = Counters::default();
        sum.add(&c);
        sum.add(&c);
        assert_eq!(sum.refused_statuses(), [(400, 20), (401, 4), (413, 10)]);
        assert_eq!(
            (
                sum.events_given_up_429,
                sum.events_given_up_503,
                sum.events_given_up_busy,
                sum.events_given_up_transport
            ),
            (6, 8, 12, 16)
        );
    }

    #[test]
    fn failed_ranges_merge_and_settle() {
        let mut a = AgentAccount::new(3);
        a.fail(10, 20);
        a.fail(20, 25);
        a.fail(5, 6);
        a.fail(40, 40);
        a.fail(30, 35);
        a.fail(33, 36);
        assert_eq!(a.failed, [(10, 25), (5, 6), (30, 36)]);
        a.settle();
        assert_eq!(a.failed, [(5, 6), (10, 25), (30, 36)]);
        assert_eq!(a.failed_events(), 1 + 15 + 6);
        let mut b = AgentAccount::new(0);
        for k in 0..(MAX_FAILED_RANGES as u64 + 5) {
            b.fail(k * 10, k * 10 + 1);
        }
        assert!(b.failed_overflow);
        assert_eq!(b.failed.len(), MAX_FAILED_RANGES);
    }

    #[test]
    fn add_and_clear() {
        let mut a = Counters::default();
        let mut b = Counters {
            events_sent: 5,
            lag_ns_max: 7,
            ..Default::default()
        };
        b.status[200] = 3;
        b.hec_codes[9] = 1;
        a.add(&b);
        a.add(&b);
        assert_eq!(a.events_sent, 10);
        assert_eq!(a.lag_ns_max, 7);
        assert_eq!(a.statuses(), vec![(200, 6)]);
        assert_eq!(a.hec_codes[9], 2);
        a.clear();
        assert_eq!(a, Counters::default());
    }

    #[test]
    fn histogram_merge() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=1000 {
            a.record(v).unwrap();
            b.record(v * 1000).unwrap();
        }
        a.add(&b).unwrap();
        assert_eq!(a.len(), 2000);
        let p50 = a.value_at_quantile(0.5);
        assert!((990..=1010).contains(&p50), "{p50}");
        assert!(a.value_at_quantile(0.99) > 900_000);
        b.reset();
        assert_eq!(b.len(), 0);
    }
}
