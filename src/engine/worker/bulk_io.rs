//! The worker's side of a `_bulk` answer with `"errors":true` (`Outcome::Items`): each item,
//! in request order, settles its event — 2xx stored, 409 on `create` already stored (an
//! earlier attempt landed it: accepted, counted in `events_already_stored`), 429/502/503/504
//! kept to go again, anything else failed for good, counted by status and by error type
//! (`events_failed_by_type`) and its seq given up. What is kept is compacted in place in the
//! batch's slot (its action/document pairs moved to the front, the same bytes; gzipped and
//! given a new head), and the shared retry rules (attempts, retry time, Retry-After) send the
//! smaller batch again, its events counted in `events_resent` when it goes. The ids make the
//! resend idempotent. No allocation: the slot's buffers and the worker's item list are
//! reserved at start. The run's `batches_accepted`/`batches_failed` count a batch once, when
//! its last item is settled (failed if any item failed); a mix's and several targets' rows
//! count each answer that stored (or failed) some of a part's events as one of its batches.

use std::time::{Duration, Instant};

use super::{Proto, SlotState, Worker};
use crate::adapter::bulk::Fate;
use crate::config::schema::OpType;
use crate::stats::MAX_LATENCY_US;
use crate::stats::parts::{MAX_PARTS, PartCounts};

#[allow(
    clippy::indexing_slicing,
    reason = "slot is one of the fixed pool; the read path (Worker::read) settles only answers \
              with exactly as many items as the batch has events, and a bulk batch holds one \
              ends/order (and in a mix part_of) entry per event; parts are < MAX_PARTS"
)]
impl Worker {
    /// Settles batch `slot`'s events by the items read into `self.items`; what is to go again
    /// waits `wait` (or the backoff).
    pub(super) fn bulk_settle(&mut self, slot: usize, now: Instant, wait: Option<Duration>) {
        let Proto::Http { framer, gzip, .. } = &mut self.proto else {
            return;
        };
        let op = framer.bulk.as_ref().map_or(OpType::Create, |b| b.op_type);
        let b = &mut self.batches[slot];
        let mixed = !b.part_of.is_empty();
        let (mut stored, mut failed) = (0u64, 0u64);
        let mut stored_parts: PartCounts = [0; MAX_PARTS];
        let mut failed_parts: PartCounts = [0; MAX_PARTS];
        let (mut keep, mut write_at, mut start) = (0usize, 0usize, 0usize);
        for (k, item) in self.items.iter().enumerate() {
            let end = b.ends[k] as usize;
            let part = if mixed { usize::from(b.part_of[k]) } else { 0 };
            match item.fate(op) {
                Fate::Stored | Fate::AlreadyStored => {
                    if item.fate(op) == Fate::AlreadyStored {
                        self.counters.events_already_stored += 1;
                    }
                    stored += 1;
                    stored_parts[part] += 1;
                }
                Fate::Failed => {
                    let seq = b.base_seq + u64::from(b.order[k]);
                    self.counters.refused_for_good(item.status, 1);
                    if let Some(n) = self
                        .counters
                        .events_failed_by_type
                        .get_mut(usize::from(item.error_type))
                    {
                        *n += 1;
                    }
                    self.account.fail(seq, seq + 1);
                    failed += 1;
                    failed_parts[part] += 1;
                }
                Fate::Resend => {
                    b.body.copy_within(start..end, write_at);
                    write_at += end - start;
                    b.ends[keep] = write_at as u32;
                    b.order[keep] = b.order[k];
                    if mixed {
                        b.part_of[keep] = b.part_of[k];
                    }
                    keep += 1;
                    b.last_cause = item.status;
                }
            }
            start = end;
        }
        b.body.truncate(write_at);
        b.ends.truncate(keep);
        b.order.truncate(keep);
        b.part_of.truncate(if mixed { keep } else { 0 });
        b.events = keep as u64;
        b.items_failed += failed;
        self.counters.events_accepted += stored;
        if self.draining {
            self.counters.events_accepted_in_drain += stored;
        }
        self.counters.events_failed += failed;
        if stored > 0 {
            let lat = now.saturating_duration_since(b.intended).as_micros() as u64;
            let svc = now.saturating_duration_since(b.attempt_write).as_micros() as u64;
            self.latency.saturating_record(lat.clamp(1, MAX_LATENCY_US));
            self.service.saturating_record(svc.clamp(1, MAX_LATENCY_US));
            if let Some(t) = self.parts.as_deref_mut() {
                t.accepted(&stored_parts, lat, svc);
            }
            if let Some(t) = self.by_target.as_deref_mut() {
                t.accepted_at(b.target, stored, lat, svc);
            }
        }
        if failed > 0 {
            if let Some(t) = self.parts.as_deref_mut() {
                t.failed(&failed_parts);
            }
            if let Some(t) = self.by_target.as_deref_mut() {
                t.failed_at(b.target, failed);
            }
        }
        if keep == 0 {
            if b.items_failed == 0 {
                self.counters.batches_accepted += 1;
            } else {
                self.counters.batches_failed += 1;
            }
            b.state = SlotState::Free;
            return;
        }
        // The smaller batch: the kept pairs, framed and headed again.
        if mixed {
            b.parts = [0; MAX_PARTS];
            for &p in &b.part_of {
                b.parts[usize::from(p)] += 1;
            }
        }
        b.seqs = b.order.last().map_or(0, |&o| u64::from(o) + 1) - u64::from(b.order[0]);
        b.first_seq = b.base_seq + u64::from(b.order[0]);
        b.seal(framer, gzip);
        b.host_of = 0;
        b.resend = true;
        self.retry_or_give_up(slot, now, wait);
    }
}
