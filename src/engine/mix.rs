//! A mix of sources in one run: which source each event of a worker is, so that every source
//! gets its share exactly, and the framing of each source (its HEC `sourcetype`, its syslog
//! envelope). A worker walks its events in order; a smooth weighted round robin over the
//! shares picks the source of each event (a batch may mix sources) or of each run of
//! `batch_events` events (a batch is of one source), so over any stretch of the run each
//! source is within one pick of its share. `Framings` is also how the scenario lane frames
//! each stage's batches.

use std::sync::Arc;

use crate::adapter::Framer;
use crate::adapter::syslog::SyslogFramer;
use crate::stats::parts::MAX_PARTS;

/// One framing per part (a scenario stage, a source of a mix), as the run's wire needs it.
#[derive(Clone)]
pub enum Framings {
    Http(Vec<Arc<Framer>>),
    Syslog(Vec<SyslogFramer>),
}

/// A worker's mix: the picker and each source's framing.
#[derive(Clone)]
pub struct Mix {
    pub picker: Picker,
    pub wire: Framings,
}

/// Picks the source of each event in order (smooth weighted round robin: every pick adds
/// each source's share to its credit and takes the source with the most, which then pays 1).
#[derive(Clone, Debug)]
pub struct Picker {
    shares: [f64; MAX_PARTS],
    credit: [f64; MAX_PARTS],
    n: usize,
    /// Events per pick: 1 when a batch mixes sources, else the batch size.
    run: u64,
    part: usize,
    /// The seq after the last one asked about (an event left for the next batch is asked
    /// about again, and keeps its source).
    next: u64,
}

impl Picker {
    /// `shares` add up to 1 (at most `MAX_PARTS` of them); `run` events share each pick.
    pub fn new(shares: &[f64], run: u64) -> Picker {
        let mut s = [0.0; MAX_PARTS];
        for (d, v) in s.iter_mut().zip(shares) {
            *d = *v;
        }
        Picker {
            shares: s,
            credit: [0.0; MAX_PARTS],
            n: shares.len().min(MAX_PARTS),
            run: run.max(1),
            part: 0,
            next: 0,
        }
    }

    /// The source of event `seq`; called for every seq of the worker in order from 0 (the
    /// same seq again gives the same source).
    #[inline]
    pub fn part_at(&mut self, seq: u64) -> usize {
        if seq >= self.next {
            if seq.is_multiple_of(self.run) {
                self.part = self.pick();
            }
            self.next = seq + 1;
        }
        self.part
    }

    /// How many events from `seq` on are of the same pick (the most a one-source batch may
    /// take there), or `None` when each event is picked on its own.
    #[inline]
    pub fn left_in_run(&self, seq: u64) -> Option<u64> {
        (self.run > 1).then(|| self.run - seq % self.run)
    }

    fn pick(&mut self) -> usize {
        let mut best = 0;
        for k in 0..self.n {
            self.credit[k] += self.shares[k];
            if self.credit[k] > self.credit[best] {
                best = k;
            }
        }
        self.credit[best] -= 1.0;
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(p: &mut Picker, events: u64) -> Vec<u64> {
        let mut c = vec![0; p.n];
        for seq in 0..events {
            c[p.part_at(seq)] += 1;
        }
        c
    }

    #[test]
    fn every_stretch_holds_the_shares_within_one_pick() {
        let shares = [0.5, 0.3, 0.15, 0.05];
        let mut p = Picker::new(&shares, 1);
        let mut c = [0u64; 4];
        for seq in 0..100_000u64 {
            c[p.part_at(seq)] += 1;
            let n = (seq + 1) as f64;
            for k in 0..4 {
                assert!(
                    (c[k] as f64 - n * shares[k]).abs() <= 1.0,
                    "after {n} events source {k} has {} (share {})",
                    c[k],
                    shares[k]
                );
            }
        }
    }

    #[test]
    fn one_source_batches_come_in_runs_of_the_batch_size() {
        let mut p = Picker::new(&[0.75, 0.25], 100);
        assert_eq!(p.left_in_run(0), Some(100));
        assert_eq!(p.left_in_run(130), Some(70));
        let mut last = p.part_at(0);
        for seq in 1..10_000u64 {
            let k = p.part_at(seq);
            if seq % 100 != 0 {
                assert_eq!(k, last, "a run changed source at {seq}");
            }
            last = k;
        }
        let mut again = Picker::new(&[0.5, 0.5], 1);
        let first = again.part_at(0);
        assert_eq!(
            again.part_at(0),
            first,
            "asked again, the same event keeps its source"
        );
        assert_ne!(again.part_at(1), first);
        let mut q = Picker::new(&[0.75, 0.25], 100);
        assert_eq!(counts(&mut q, 100_000), vec![75_000, 25_000]);
        assert_eq!(Picker::new(&[1.0], 1).left_in_run(5), None);
    }
}
