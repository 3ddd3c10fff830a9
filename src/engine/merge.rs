//! The coordinator's bookkeeping: it folds the `Interval`s workers send into run totals, the
//! two run-long histograms and a per-second series. Second k is complete once every worker
//! has sent its k-th interval (workers send one per second from the same start), so a row
//! never mixes seconds; workers that stopped early leave partial seconds that `finish` closes.
//! A row counts the batches scheduled in its second (the window rule: sent, accepted and
//! failed events and batches, whenever they were sent or answered; each interval carries them
//! by second); the rest of a row — errors, reconnects, refusals, gauges, the latency of the
//! answers — is what happened in it. A row closes once every worker says its second is
//! settled (nothing scheduled in it unsent or unanswered), or `HOLD_S` seconds later; what
//! its batches bring after that is added to it as it comes (to the row in the spool while it
//! is held as it is, else when the run ends). The warm-up's batches answered after it are
//! kept out of what is measured. Only open seconds hold histograms (a closed row keeps its
//! percentiles), and those are recycled, so memory does not grow with the length of a soak.
//! Histograms go back to the worker they came from, cleared, so steady state allocates
//! nothing. Pure: no clocks, no channels, no threads.

use std::collections::{BTreeMap, VecDeque};

use hdrhistogram::Histogram;

use crate::spool::Spool;
use crate::stats::result::{Second, SecondCounts};
use crate::stats::snapshot::{HISTORY_SECONDS, Latency, LatencySummary};
use crate::stats::{AgentAccount, Counters, Interval, Recycled, Scheduled, new_histogram};

struct Pending {
    counters: Counters,
    /// The batches scheduled in this second, whenever their figures came.
    sched: Scheduled,
    latency: Histogram<u64>,
    service: Histogram<u64>,
}

/// Seconds a row waits for the answers to its batches after every worker has sent it; later
/// answers are added to the closed row.
pub const HOLD_S: usize = 5;

pub struct Merger {
    threads: usize,
    /// Everything since the start (the live view).
    pub totals: Counters,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    /// Seconds of warm-up: kept in the timeline, left out of what is measured.
    warmup_s: usize,
    /// What is measured: everything after the warm-up (the report's summary).
    pub measured: Counters,
    /// Accepted events whose answers came after the warm-up and before the drain, whichever
    /// second their batch was due in: the target's completion rate over the window.
    pub answered_in_window: u64,
    pub measured_latency: Histogram<u64>,
    pub measured_service: Histogram<u64>,
    /// Seconds not closed yet: `pending[0]` is second `seconds.len()`.
    pending: VecDeque<Pending>,
    /// Cleared histograms of closed seconds, for the next ones.
    spare: Vec<Histogram<u64>>,
    /// Closed seconds: the last `HISTORY_SECONDS` as they are, older ones packed.
    pub seconds: Spool<Second>,
    per_worker: Vec<usize>,
    done: Vec<bool>,
    /// Each worker's last `settled_before`.
    settled: Vec<u32>,
    /// Per-batch figures for rows no longer held as they are, added when the run ends.
    pub late: BTreeMap<u32, Scheduled>,
    /// Told each closed second's two histograms (intended, service), e.g. an HDR log.
    log: Option<SecondLog>,
    /// Each worker's account of its seqs, as its last interval brings it.
    pub agents: Vec<AgentAccount>,
    /// A plain HTTP load's request phases, from every worker's last interval.
    pub phases: Option<crate::stats::phases::Phases>,
    /// A mix's figures by source, from every worker's last interval (the whole run).
    pub sources: Option<crate::stats::parts::Parts>,
    /// Several targets: the figures by target, likewise.
    pub targets: Option<crate::stats::parts::Parts>,
    /// `_bulk`: the workers' first item errors, `MAX_ITEM_ERRORS` at most.
    pub item_errors: Vec<String>,
}

/// Item errors a run's report lists at most.
pub const MAX_ITEM_ERRORS: usize = 8;

/// Adds a worker's breakdown into the run's.
fn fold(
    into: &mut Option<crate::stats::parts::Parts>,
    from: Option<Box<crate::stats::parts::Parts>>,
) {
    if let Some(p) = from {
        match into {
            Some(s) => s.add(&p),
            None => *into = Some(*p),
        }
    }
}

/// What hears of each second as it closes: `(t, intended, service)`.
pub type SecondLog = Box<dyn FnMut(u32, &Histogram<u64>, &Histogram<u64>) + Send>;

#[allow(
    clippy::indexing_slicing,
    reason = "per_worker and done have one entry per thread (threads >= 1) and w is clamped to \
              threads - 1 or ranges over 0..threads; pending is grown until it has an entry at \
              `at`"
)]
impl Merger {
    pub fn new(threads: usize, warmup_s: usize) -> Merger {
        Merger {
            threads,
            totals: Counters::default(),
            latency: new_histogram(),
            service: new_histogram(),
            warmup_s,
            measured: Counters::default(),
            answered_in_window: 0,
            measured_latency: new_histogram(),
            measured_service: new_histogram(),
            pending: VecDeque::new(),
            spare: Vec::new(),
            seconds: Spool::new(HISTORY_SECONDS),
            per_worker: vec![0; threads],
            done: vec![false; threads],
            settled: vec![0; threads],
            late: BTreeMap::new(),
            log: None,
            agents: Vec::new(),
            phases: None,
            sources: None,
            targets: None,
            item_errors: Vec::new(),
        }
    }

    /// Has `log` told of every second as it closes, with its histograms.
    pub fn with_log(mut self, log: Option<SecondLog>) -> Merger {
        self.log = log;
        self
    }

    /// Folds one interval in and returns what the worker reuses (its histograms, cleared,
    /// and its by-second list, emptied). `target_of(t)` is the schedule's events due in
    /// second t, for rows completed now (`None` in a closed loop: a second's target is what
    /// it sent).
    pub fn add(
        &mut self,
        iv: Interval,
        target_of: impl Fn(u32) -> Option<f64>,
    ) -> (usize, Recycled) {
        let w = iv.worker.min(self.threads.saturating_sub(1));
        let k = self.per_worker[w];
        self.per_worker[w] += 1;
        self.settled[w] = self.settled[w].max(iv.settled_before);
        if iv.last {
            self.done[w] = true;
        }
        if let Some(a) = iv.account {
            self.agents.push(a);
            self.agents.sort_by_key(|a| a.agent);
        }
        if let Some(ph) = &iv.phases {
            self.phases.get_or_insert_with(Default::default).add(ph);
        }
        for e in iv.item_errors {
            if self.item_errors.len() < MAX_ITEM_ERRORS {
                self.item_errors.push(e);
            }
        }
        fold(&mut self.sources, iv.parts);
        fold(&mut self.targets, iv.by_target);
        self.totals.add(&iv.counters);
        let _ = self.latency.add(&iv.latency);
        let _ = self.service.add(&iv.service);
        if let Some(tail) = iv.warm_tail {
            // The warm-up's batches answered after it: the whole run's, never measured
            // (though the window's answers, which the ceiling search's throughput counts).
            self.answered_in_window += answered(&tail.counters);
            self.totals.add(&tail.counters);
            let _ = self.latency.add(&tail.latency);
            let _ = self.service.add(&tail.service);
        }
        // A worker's k-th interval is its second k; its last may run past a second's end.
        // Its figures of warm-up batches came apart (`warm_tail`), so a measured second holds
        // none of them.
        if k >= self.warmup_s {
            self.answered_in_window += answered(&iv.counters);
            self.measured.add(&iv.counters);
            let _ = self.measured_latency.add(&iv.latency);
            let _ = self.measured_service.add(&iv.service);
        }
        // A worker is never behind the closed seconds: each closes only once all have sent it.
        let newest = iv
            .by_second
            .iter()
            .map(|(t, _)| *t as usize)
            .fold(k, usize::max);
        self.open_until(newest);
        let at = k.saturating_sub(self.seconds.len());
        let p = &mut self.pending[at];
        p.counters.add(&iv.counters);
        let _ = p.latency.add(&iv.latency);
        let _ = p.service.add(&iv.service);
        let mut by_second = iv.by_second;
        for (t, d) in by_second.drain(..) {
            self.add_scheduled(t, &d);
        }
        while !self.pending.is_empty() && self.front_complete() {
            self.close_second(&target_of);
        }
        let (mut latency, mut service) = (iv.latency, iv.service);
        latency.reset();
        service.reset();
        (
            w,
            Recycled {
                latency,
                service,
                by_second,
            },
        )
    }

    /// Makes second `t` a pending row if it is not one yet (nor closed).
    fn open_until(&mut self, t: usize) {
        let at = t.saturating_sub(self.seconds.len());
        while self.pending.len() <= at {
            let p = Pending {
                counters: Counters::default(),
                sched: Scheduled::default(),
                latency: self.spare.pop().unwrap_or_else(new_histogram),
                service: self.spare.pop().unwrap_or_else(new_histogram),
            };
            self.pending.push_back(p);
        }
    }

    /// Per-batch figures of second `t`: into its row, pending or closed (the closed row's
    /// counts grow; one no longer held as it is gets them when the run ends).
    fn add_scheduled(&mut self, t: u32, d: &Scheduled) {
        let closed = self.seconds.len();
        if let Some(p) = (t as usize)
            .checked_sub(closed)
            .and_then(|at| self.pending.get_mut(at))
        {
            p.sched.add(d);
        } else if let Some(row) = self.seconds.get_mut(t as usize) {
            amend(&mut row.counts, d);
        } else {
            self.late.entry(t).or_default().add(d);
        }
    }

    /// Whether the oldest open second has all it will get: every worker has sent it, or has
    /// stopped for good before it; and every worker has settled it (or sent `HOLD_S` more
    /// seconds since: later answers are added to the closed row).
    fn front_complete(&self) -> bool {
        let k = self.seconds.len();
        (0..self.threads).all(|w| {
            self.done[w]
                || (self.per_worker[w] > k
                    && (self.settled[w] as usize > k || self.per_worker[w] > k + HOLD_S))
        })
    }

    fn close_second(&mut self, target_of: &impl Fn(u32) -> Option<f64>) {
        let Some(mut p) = self.pending.pop_front() else {
            return;
        };
        let t = self.seconds.len() as u32;
        if let Some(log) = &mut self.log {
            log(t, &p.latency, &p.service);
        }
        let mut counts = SecondCounts::of(&p.counters);
        // The batches scheduled in this second, not those that happened to be sent or
        // answered in it.
        counts.events_sent = 0;
        counts.events_accepted = 0;
        counts.events_failed = 0;
        counts.batches_accepted = 0;
        counts.errors = p.counters.connection_errors();
        counts.batches_failed = 0;
        amend(&mut counts, &p.sched);
        self.seconds.push(Second {
            t,
            target_eps: target_of(t).unwrap_or(counts.events_sent as f64),
            counts,
            latency: Latency {
                intended: summary(&p.latency),
                service: summary(&p.service),
            },
        });
        p.latency.reset();
        p.service.reset();
        self.spare.push(p.latency);
        self.spare.push(p.service);
    }

    /// Whether every worker has sent its last interval.
    pub fn all_done(&self) -> bool {
        self.done.iter().all(|d| *d)
    }

    /// Closes the seconds some workers never reported (they stopped early).
    pub fn finish(&mut self, target_of: impl Fn(u32) -> Option<f64>) {
        while !self.pending.is_empty() {
            self.close_second(&target_of);
        }
    }
}

/// Every row of `seconds`, in order, with the figures that came for rows no longer held as
/// they were (`Merger::late`).
pub fn rows(seconds: Spool<Second>, late: &BTreeMap<u32, Scheduled>) -> Vec<Second> {
    let mut rows = seconds.into_vec();
    for (t, d) in late {
        if let Some(row) = rows.get_mut(*t as usize) {
            amend(&mut row.counts, d);
        }
    }
    rows
}

/// Events accepted by answers that came before the drain.
fn answered(c: &Counters) -> u64 {
    c.events_accepted.saturating_sub(c.events_accepted_in_drain)
}

/// Adds per-batch figures to a row's counts (a failed batch is one of its errors).
fn amend(c: &mut SecondCounts, d: &Scheduled) {
    c.events_sent += d.events_sent;
    c.events_accepted += d.events_accepted;
    c.events_failed += d.events_failed;
    c.batches_accepted += d.batches_accepted;
    c.batches_failed += d.batches_failed;
    c.errors += d.batches_failed;
}

/// Percentiles of a histogram of microseconds, in milliseconds.
pub fn summary(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    LatencySummary {
        count: h.len(),
        mean: h.mean() / 1000.0,
        p50: ms(h.value_at_quantile(0.50)),
        p90: ms(h.value_at_quantile(0.90)),
        p99: ms(h.value_at_quantile(0.99)),
        p99_9: ms(h.value_at_quantile(0.999)),
        max: ms(h.max()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worker `worker`'s interval of second `t`: `accepted` events of batches scheduled in it,
    /// answered in it (the second settled), with these latencies.
    fn interval(worker: usize, t: u32, accepted: u64, lat_us: &[u64], last: bool) -> Interval {
        let mut latency = new_histogram();
        for v in lat_us {
            latency.record(*v).unwrap();
        }
        let d = Scheduled {
            events_accepted: accepted,
            ..Scheduled::default()
        };
        Interval {
            worker,
            counters: Counters {
                events_accepted: accepted,
                lag_ns_max: accepted,
                ..Counters::default()
            },
            latency,
            service: new_histogram(),
            by_second: if accepted > 0 {
                vec![(t, d)]
            } else {
                Vec::new()
            },
            settled_before: t + 1,
            warm_tail: None,
            last,
            account: None,
            phases: None,
            parts: None,
            by_target: None,
            item_errors: Vec::new(),
        }
    }

    /// An interval of second `t` counting `by` (second, sent, accepted) of batches scheduled
    /// in earlier or this second, with every second before `settled` settled.
    fn counted(t: u32, by: &[(u32, u64, u64)], settled: u32) -> Interval {
        let mut iv = interval(0, t, 0, &[], false);
        for &(s, sent, accepted) in by {
            iv.counters.events_sent += sent;
            iv.counters.events_accepted += accepted;
            iv.by_second.push((
                s,
                Scheduled {
                    events_sent: sent,
                    events_accepted: accepted,
                    ..Scheduled::default()
                },
            ));
        }
        iv.settled_before = settled;
        iv
    }

    #[test]
    fn a_second_closes_when_every_worker_has_sent_it() {
        let mut m = Merger::new(2, 0);
        let target = |t: u32| Some(100.0 * f64::from(t + 1));
        m.add(interval(0, 0, 10, &[1000], false), target);
        m.add(interval(0, 1, 20, &[2000], false), target);
        assert!(m.seconds.is_empty(), "worker 1 has not sent second 0");
        let (w, back) = m.add(interval(1, 0, 5, &[3000, 3000], false), target);
        assert_eq!(w, 1);
        assert!(back.latency.is_empty(), "histograms go back cleared");
        assert!(back.by_second.is_empty(), "and the list emptied");
        assert_eq!(m.seconds.len(), 1);
        let s0 = m.seconds.get(0).unwrap();
        assert_eq!(s0.counts.events_accepted, 15);
        assert_eq!(s0.counts.lag_ns_max, 10, "a gauge takes the max");
        assert_eq!(s0.target_eps, 100.0);
        assert_eq!(s0.latency.intended.count, 3);
        assert!((s0.latency.intended.p50 - 3.0).abs() < 0.01);
        // Worker 1 stops after two seconds: the seconds after close with worker 0 alone.
        m.add(interval(1, 1, 7, &[], true), target);
        assert_eq!(m.seconds.len(), 2);
        assert_eq!(m.seconds.get(1).unwrap().counts.events_accepted, 27);
        assert!(!m.all_done());
        m.add(interval(0, 2, 1, &[500], false), target);
        assert_eq!(
            m.seconds.len(),
            3,
            "worker 1 has stopped: second 2 is complete"
        );
        assert_eq!(m.seconds.get(2).unwrap().target_eps, 300.0);
        m.add(interval(0, 3, 0, &[], true), target);
        assert!(m.all_done());
        m.finish(target);
        assert_eq!(m.seconds.len(), 4);
        assert_eq!(m.totals.events_accepted, 43);
        assert_eq!(m.latency.len(), 5);
        assert_eq!(m.measured, m.totals, "no warm-up: everything is measured");
    }

    #[test]
    fn answers_count_in_the_second_their_batch_was_scheduled_in() {
        let mut m = Merger::new(1, 0);
        let target = |_| Some(100.0);
        // Second 0 sends 100 whose answers come in second 1: the row waits for them.
        m.add(counted(0, &[(0, 100, 0)], 0), target);
        assert!(m.seconds.is_empty(), "second 0 is not settled yet");
        m.add(counted(1, &[(0, 0, 100), (1, 100, 0)], 1), target);
        assert_eq!(m.seconds.len(), 1);
        let s0 = &m.seconds.get(0).unwrap().counts;
        assert_eq!((s0.events_sent, s0.events_accepted), (100, 100));
        m.add(counted(2, &[(1, 0, 100)], 3), target);
        m.finish(target);
        let rows: Vec<_> = (0..3)
            .map(|t| m.seconds.get(t).unwrap().counts.clone())
            .collect();
        assert_eq!(
            rows.iter()
                .map(|c| (c.events_sent, c.events_accepted))
                .collect::<Vec<_>>(),
            [(100, 100), (100, 100), (0, 0)],
            "no second accepted more than it sent"
        );
        // The whole run's counts are the intervals', whenever they happened.
        assert_eq!(m.totals.events_accepted, 200);
    }

    #[test]
    fn a_row_waits_at_most_hold_seconds_and_later_answers_join_it() {
        let mut m = Merger::new(1, 0);
        let target = |_| Some(10.0);
        m.add(counted(0, &[(0, 10, 0)], 0), target);
        for t in 1..HOLD_S as u32 {
            m.add(counted(t, &[], 0), target);
            assert!(m.seconds.is_empty(), "held at second {t}");
        }
        m.add(counted(HOLD_S as u32, &[], 0), target);
        assert_eq!(m.seconds.len(), 1, "closed after {HOLD_S} more seconds");
        assert_eq!(m.seconds.get(0).unwrap().counts.events_accepted, 0);
        // Its answers come later still: they join the closed row.
        m.add(counted(HOLD_S as u32 + 1, &[(0, 0, 10)], 99), target);
        let s0 = &m.seconds.get(0).unwrap().counts;
        assert_eq!((s0.events_sent, s0.events_accepted), (10, 10));
    }

    #[test]
    fn answers_for_rows_no_longer_held_are_added_at_the_end() {
        let mut m = Merger::new(1, 0);
        let target = |_| Some(1.0);
        m.add(counted(0, &[(0, 1, 0)], 1), target);
        let n = HISTORY_SECONDS as u32 + 10;
        for t in 1..n {
            m.add(counted(t, &[], t + 1), target);
        }
        assert!(m.seconds.get(0).is_none(), "row 0 is packed");
        m.add(counted(n, &[(0, 0, 1)], n + 1), target);
        m.finish(target);
        let rows = rows(std::mem::replace(&mut m.seconds, Spool::new(1)), &m.late);
        assert_eq!(rows.len() as u32, n + 1);
        assert_eq!(
            (rows[0].counts.events_sent, rows[0].counts.events_accepted),
            (1, 1)
        );
    }

    #[test]
    fn the_log_hears_of_every_second_with_its_histograms() {
        let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let h = heard.clone();
        let mut m = Merger::new(1, 0).with_log(Some(Box::new(move |t, l, _| {
            h.lock().unwrap().push((t, l.len()));
        })));
        m.add(interval(0, 0, 1, &[5, 6], false), |_| Some(0.0));
        m.add(interval(0, 1, 1, &[7], true), |_| Some(0.0));
        m.finish(|_| Some(0.0));
        assert_eq!(*heard.lock().unwrap(), [(0, 2), (1, 1)]);
    }

    #[test]
    fn the_warm_up_is_in_the_timeline_and_not_measured() {
        let mut m = Merger::new(1, 2);
        for (k, n) in [10, 20, 30, 40].into_iter().enumerate() {
            m.add(
                interval(0, k as u32, n, &[1000 * (k as u64 + 1)], k == 3),
                |_| Some(0.0),
            );
        }
        assert_eq!(m.seconds.len(), 4);
        assert_eq!(m.totals.events_accepted, 100);
        assert_eq!(m.measured.events_accepted, 70);
        assert_eq!(m.measured_latency.len(), 2);
        assert_eq!(m.measured_latency.min(), 3000);
    }

    #[test]
    fn the_warm_ups_late_answers_are_the_whole_runs_and_never_measured() {
        let mut m = Merger::new(1, 1);
        let target = |_| Some(100.0);
        m.add(counted(0, &[(0, 100, 0)], 0), target);
        // Second 1 (measured) sends its own 100; the warm-up's answers came in it too, and
        // the worker kept them apart (its tail, sent with its last interval).
        let mut iv = counted(1, &[(1, 100, 100)], 2);
        iv.by_second.push((
            0,
            Scheduled {
                events_accepted: 100,
                ..Scheduled::default()
            },
        ));
        let mut tail = WarmTail {
            counters: Counters {
                events_accepted: 100,
                ..Counters::default()
            },
            latency: new_histogram(),
            service: new_histogram(),
        };
        tail.latency.record(900_000).unwrap();
        iv.warm_tail = Some(Box::new(tail));
        iv.latency.record(2_000).unwrap();
        iv.last = true;
        m.add(iv, target);
        m.finish(target);
        assert_eq!(m.measured.events_sent, 100);
        assert_eq!(
            m.measured.events_accepted, 100,
            "not 200: achieved ≤ offered"
        );
        assert_eq!(
            m.measured_latency.max(),
            2_000,
            "no warm-up latency measured"
        );
        assert_eq!(m.totals.events_accepted, 200);
        assert_eq!(m.latency.len(), 2);
        let s0 = &m.seconds.get(0).unwrap().counts;
        assert_eq!((s0.events_sent, s0.events_accepted), (100, 100));
    }

    use crate::stats::WarmTail;

    #[test]
    fn summary_of_nothing_is_zero() {
        assert_eq!(summary(&new_histogram()), LatencySummary::default());
        let mut h = new_histogram();
        for v in 1..=1000 {
            h.record(v * 1000).unwrap();
        }
        let s = summary(&h);
        assert_eq!(s.count, 1000);
        assert!((s.p99 - 990.0).abs() < 1.0, "{s:?}");
        assert!((s.max - 1000.0).abs() < 1.0, "{s:?}");
    }
}
