//! A run broken down by part: each source of a mix, or each of several targets (with its
//! connections' fortunes beside). A worker keeps one `Parts` for its whole
//! run (counters and two latency histograms per part, allocated before the first event) and
//! hands it over with its last interval; the coordinator adds the workers' together. A batch
//! knows how many of its events are of each part (`PartCounts`), so whatever becomes of the
//! batch — accepted, failed for good, never finished — is counted for its parts as for the run.

use hdrhistogram::Histogram;

use super::{MAX_LATENCY_US, new_histogram};

/// Most parts a breakdown has (the parts of a batch are a fixed array).
pub const MAX_PARTS: usize = 16;

/// How many events of a batch are of each part.
pub type PartCounts = [u32; MAX_PARTS];

/// One part's counters, named as the run's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartCounters {
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    pub batches_sent: u64,
    pub batches_accepted: u64,
    pub batches_failed: u64,
    /// Syslog over TCP, TLS or UDP: events written and never confirmed (see
    /// `Counters::events_unconfirmed_by`).
    pub events_unconfirmed: u64,
    /// Targets only: connections opened, attempts refused or failing, connections broken,
    /// answers that never came.
    pub connects: u64,
    pub connect_errors: u64,
    pub connection_resets: u64,
    pub timeouts: u64,
}

/// What befell one of a target's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    Connected,
    ConnectError,
    Reset,
    Timeout,
}

/// Every part's counters and latencies (intended and service, µs as the run's histograms).
pub struct Parts {
    pub counters: Vec<PartCounters>,
    pub latency: Vec<Histogram<u64>>,
    pub service: Vec<Histogram<u64>>,
}

#[allow(
    clippy::indexing_slicing,
    reason = "counters, latency and service are built with the same n entries (Parts::new) and \
              never resized; k is checked or bounded by counters.len() before each use, and o is \
              another Parts built alike"
)]
impl Parts {
    pub fn new(n: usize) -> Parts {
        Parts {
            counters: vec![PartCounters::default(); n],
            latency: (0..n).map(|_| new_histogram()).collect(),
            service: (0..n).map(|_| new_histogram()).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.counters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }

    /// A batch of `counts` went out.
    #[inline]
    pub fn sent(&mut self, counts: &PartCounts) {
        for (c, &n) in self.counters.iter_mut().zip(counts) {
            if n > 0 {
                c.events_sent += u64::from(n);
                c.batches_sent += 1;
            }
        }
    }

    /// A batch of `counts` was accepted after `latency_us` (intended) and `service_us`.
    #[inline]
    pub fn accepted(&mut self, counts: &PartCounts, latency_us: u64, service_us: u64) {
        for (k, &n) in counts.iter().enumerate().take(self.counters.len()) {
            if n > 0 {
                let c = &mut self.counters[k];
                c.events_accepted += u64::from(n);
                c.batches_accepted += 1;
                self.latency[k].saturating_record(latency_us.clamp(1, MAX_LATENCY_US));
                self.service[k].saturating_record(service_us.clamp(1, MAX_LATENCY_US));
            }
        }
    }

    /// A batch of `counts` failed for good.
    #[inline]
    pub fn failed(&mut self, counts: &PartCounts) {
        for (c, &n) in self.counters.iter_mut().zip(counts) {
            if n > 0 {
                c.events_failed += u64::from(n);
                c.batches_failed += 1;
            }
        }
    }

    /// A written batch of `counts` was never confirmed (syslog over TCP, TLS or UDP).
    #[inline]
    pub fn unconfirmed(&mut self, counts: &PartCounts) {
        for (c, &n) in self.counters.iter_mut().zip(counts) {
            c.events_unconfirmed += u64::from(n);
        }
    }

    /// A written batch of `events`, sent to part `k`, was never confirmed.
    #[inline]
    pub fn unconfirmed_at(&mut self, k: usize, events: u64) {
        if let Some(c) = self.counters.get_mut(k) {
            c.events_unconfirmed += events;
        }
    }

    /// One event of part `k` failed on its own (left out of its batch: oversize).
    #[inline]
    pub fn event_failed(&mut self, k: usize) {
        if let Some(c) = self.counters.get_mut(k) {
            c.events_sent += 1;
            c.events_failed += 1;
        }
    }

    /// A batch of `events` went to part `k` (a target) the first time.
    #[inline]
    pub fn sent_to(&mut self, k: usize, events: u64) {
        if let Some(c) = self.counters.get_mut(k) {
            c.events_sent += events;
            c.batches_sent += 1;
        }
    }

    /// A batch of `events` was accepted by part `k` after `latency_us` and `service_us`.
    #[inline]
    pub fn accepted_at(&mut self, k: usize, events: u64, latency_us: u64, service_us: u64) {
        if let Some(c) = self.counters.get_mut(k) {
            c.events_accepted += events;
            c.batches_accepted += 1;
            self.latency[k].saturating_record(latency_us.clamp(1, MAX_LATENCY_US));
            self.service[k].saturating_record(service_us.clamp(1, MAX_LATENCY_US));
        }
    }

    /// A batch of `events`, last sent to part `k`, failed for good.
    #[inline]
    pub fn failed_at(&mut self, k: usize, events: u64) {
        if let Some(c) = self.counters.get_mut(k) {
            c.events_failed += events;
            c.batches_failed += 1;
        }
    }

    /// One of part `k`'s connections met `e`.
    #[inline]
    pub fn note(&mut self, k: usize, e: LinkEvent) {
        if let Some(c) = self.counters.get_mut(k) {
            match e {
                LinkEvent::Connected => c.connects += 1,
                LinkEvent::ConnectError => c.connect_errors += 1,
                LinkEvent::Reset => c.connection_resets += 1,
                LinkEvent::Timeout => c.timeouts += 1,
            }
        }
    }

    /// Adds another worker's parts into these.
    pub fn add(&mut self, o: &Parts) {
        for (k, c) in o.counters.iter().enumerate().take(self.counters.len()) {
            let m = &mut self.counters[k];
            m.events_sent += c.events_sent;
            m.events_accepted += c.events_accepted;
            m.events_failed += c.events_failed;
            m.batches_sent += c.batches_sent;
            m.batches_accepted += c.batches_accepted;
            m.batches_failed += c.batches_failed;
            m.events_unconfirmed += c.events_unconfirmed;
            m.connects += c.connects;
            m.connect_errors += c.connect_errors;
            m.connection_resets += c.connection_resets;
            m.timeouts += c.timeouts;
            let _ = self.latency[k].add(&o.latency[k]);
            let _ = self.service[k].add(&o.service[k]);
        }
    }
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_counts_for_each_of_its_parts_and_workers_add_up() {
        let mut a = Parts::new(3);
        let mut counts = [0u32; MAX_PARTS];
        counts[0] = 7;
        counts[2] = 3;
        a.sent(&counts);
        a.accepted(&counts, 1500, 900);
        a.sent(&counts);
        a.failed(&counts);
        a.event_failed(1);
        assert_eq!(a.counters[0].events_sent, 14);
        assert_eq!(a.counters[0].events_accepted, 7);
        assert_eq!(a.counters[0].events_failed, 7);
        assert_eq!(a.counters[0].batches_sent, 2);
        assert_eq!(a.counters[1].events_sent, 1);
        assert_eq!(a.counters[1].batches_sent, 0);
        assert_eq!(a.counters[2].batches_failed, 1);
        assert_eq!(a.latency[2].len(), 1);
        assert_eq!(a.latency[1].len(), 0);
        let mut b = Parts::new(3);
        b.sent(&counts);
        b.add(&a);
        assert_eq!(b.counters[0].events_sent, 21);
        assert_eq!(b.latency[0].len(), 1);
        assert_eq!(b.latency[0].max(), a.latency[0].max());
    }
}
