//! The worker's side of HTTP answers it cannot read whole (`net::http::ReadError`): a 2xx
//! (plain HTTP: an expected status) whose head or body is over the cap, whose length lies,
//! or whose connection broke or timed out after its status line is "answered 2xx,
//! unreadable" — the collector said yes, so the batch is never resent (a resend is how a
//! 100 MB Content-Length turned 1,500 events into 6,500 stored copies); it is counted failed
//! and apart (`events_unreadable_2xx`, `batches_unreadable_2xx`), which fails the run by the
//! `max_unreadable_2xx_events` default. A non-2xx answer that cannot be read is judged by its
//! status alone, as if its body were empty. Bytes with no status line at all are a protocol
//! error and the batch goes again as on a broken connection — unless they are a TLS record
//! on a plain connection before any answer came: then the port speaks TLS and the url says
//! `http://`, and the run stops naming that (exit 6).

use std::time::{Duration, Instant};

use super::{Proto, Socket, Worker, WorkerPlan};
use crate::adapter::answer::unreadable_is_success;
use crate::net::http::{ReadError, status_line};
use crate::stats::result::AbortReason;

#[allow(
    clippy::indexing_slicing,
    reason = "link index `i` comes from the read path (an event token checked against \
              links.len()); slots are a link's `batch`, one of the fixed pool"
)]
impl Worker {
    /// Whether link `i`'s batch in flight has had a yes from the collector: the reader
    /// holds the start of an answer whose status line is a 2xx (plain HTTP: an expected
    /// status).
    pub(super) fn answered_yes(&self, i: usize) -> bool {
        let (Proto::Http { framer, .. }, Socket::Stream(conn)) = (&self.proto, &self.links[i].sock)
        else {
            return false;
        };
        self.links[i]
            .batch
            .is_some_and(|b| Some(b) != self.ack_slot)
            && status_line(conn.reader.data())
                .is_some_and(|s| unreadable_is_success(framer.expect.as_deref(), s))
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
            self.not_http += 1;
            self.connection_lost(i, now);
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
