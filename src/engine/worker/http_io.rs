//! The worker's side of HTTP answers it cannot read whole (`net::http::ReadError`): a 2xx
//! (plain HTTP: an expected status) whose head or body is over the cap, whose length lies,
//! or whose connection broke or timed out after its status line is "answered 2xx,
//! unreadable" — the collector said yes, so the batch is never resent (a resend is how a
//! 100 MB Content-Length turned 1,500 events into 6,500 stored copies); it is counted failed
//! and apart (`events_unreadable_2xx`, `batches_unreadable_2xx`), which fails the run by the
//! `max_unreadable_2xx_events` default. A non-2xx answer that cannot be read is judged by its
//! status alone, as if its body were empty. Bytes with no status line at all are a protocol
//! error that fails the batch, never resent (the collector answered something) — and when
//! they are a TLS record on a plain connection before any answer came, the port speaks TLS
//! and the url says `http://`: the run stops naming that (exit 6). Only a connection that
//! breaks before any byte of its answer sends the batch again.

use std::time::{Duration, Instant};

use super::{Proto, Socket, Worker, WorkerPlan};
use crate::adapter::Outcome;
use crate::net::http::{ReadError, status_line};
use crate::stats::result::AbortReason;

#[allow(
    clippy::indexing_slicing,
    reason = "link index `i` comes from the read path (an event token checked against \
              links.len()); slots are a link's `batch`, one of the fixed pool"
)]
impl Worker {
    /// Whether an answer to link `i`'s batch in flight had begun (bytes other than stray
    /// line ends are in its reader): `Some` with the status its first line gave, if it gave
    /// one. Read before the link closes.
    pub(super) fn answer_started(&self, i: usize) -> Option<Option<u16>> {
        let (Proto::Http { .. }, Socket::Stream(conn)) = (&self.proto, &self.links[i].sock) else {
            return None;
        };
        let data = conn.reader.data();
        let begun = data.iter().any(|b| !matches!(b, b'\r' | b'\n'));
        (self.links[i]
            .batch
            .is_some_and(|b| Some(b) != self.ack_slot)
            && begun)
            .then(|| status_line(data))
    }

    /// Batch `slot`'s connection broke (a reset, a close, a timeout) after its answer had
    /// begun: a 2xx (plain HTTP: an expected status) is unreadable, never resent; another
    /// status decides as if the body were empty (a 503 is resent, a 400 fails; a 401/403
    /// fails here, and the next answer stops the run); no status line at all fails the
    /// batch as a protocol error — the collector answered something, so a resend could
    /// store it twice.
    pub(super) fn broken_answer(&mut self, slot: usize, status: Option<u16>, now: Instant) {
        self.counters.protocol_errors += 1;
        let Proto::Http { framer, .. } = &self.proto else {
            return;
        };
        let outcome = status.map(|s| framer.unreadable_outcome(s));
        match (outcome, status) {
            (Some(Outcome::Unreadable), _) => self.unreadable_2xx(slot),
            (Some(Outcome::Retry { .. }), Some(s)) => {
                self.batches[slot].last_cause = s;
                self.retry_or_give_up(slot, now, None);
            }
            (_, s) => {
                let b = &self.batches[slot];
                self.counters.refused_for_good(s.unwrap_or(0), b.events);
                self.failed_for_good(slot);
            }
        }
    }

    /// Batch `slot` was answered 2xx in words the engine cannot read: counted apart and
    /// failed (its seqs given up: the store may or may not hold them), never resent.
    pub(super) fn unreadable_2xx(&mut self, slot: usize) {
        let b = &self.batches[slot];
        self.counters.events_unreadable_2xx += b.events;
        self.counters.batches_unreadable_2xx += 1;
        self.failed_for_good(slot);
    }

    /// Link `i`'s answer could not be read (`e`): settle its batch by what its status line
    /// said, if it said one, and close the connection (the stream is out of step).
    pub(super) fn unreadable_answer(
        &mut self,
        p: &mut WorkerPlan,
        i: usize,
        e: &ReadError,
        now: Instant,
    ) {
        let Socket::Stream(conn) = &self.links[i].sock else {
            return;
        };
        if e.status().is_none()
            && !conn.has_tls()
            && !self.ever_answered
            && crate::net::tls::looks_like_tls(conn.reader.data())
        {
            let peer = p
                .targets
                .get(self.links[i].target)
                .map_or(p.addr, |t| t.addr);
            p.abort.set(AbortReason::Tls(format!(
                "{peer}: the target answered in TLS — the port speaks TLS and the url says \
                 http:// (use https://)"
            )));
            self.close_link(i, now, Duration::ZERO);
            return;
        }
        let Some(status) = e.status() else {
            // Bytes that are no HTTP answer: a protocol error (counted by the caller), and
            // the batch fails, never resent — the collector answered something, so it may
            // hold the events.
            self.not_http += 1;
            if !self.ever_answered {
                self.closed_unanswered += 1;
            }
            if let Some(b) = self.links[i].batch.filter(|b| Some(*b) != self.ack_slot) {
                self.links[i].batch = None;
                self.batches[b].last_cause = 0;
                self.failed_for_good(b);
            }
            self.close_link(i, now, Duration::from_millis(10));
            return;
        };
        self.ever_answered = true;
        if let Some(n) = self.counters.status.get_mut(usize::from(status)) {
            *n += 1;
        }
        match self.links[i].batch {
            Some(b) if Some(b) != self.ack_slot => {
                self.batches[b].last_cause = status;
                let Proto::Http { framer, .. } = &self.proto else {
                    return;
                };
                let outcome = framer.unreadable_outcome(status);
                self.finish_batch(p, i, outcome, now);
            }
            // An ack poll's unreadable answer: the ids are asked about again (close_link).
            _ => {}
        }
        self.close_link(i, now, Duration::ZERO);
    }
}
