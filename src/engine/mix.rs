//! A mix of sources in one run: which source each event of a worker is, so that every source
//! gets its share exactly, and the framing of each source (its HEC `sourcetype`, its syslog
//! envelope). A worker walks its events in order. When a batch may mix sources, a smooth
//! weighted round robin over the shares picks the source of each event. When each batch is
//! of one source, the events go in cycles (about a batch window of the worker's events), and
//! in each cycle each source has one block, its share of the cycle: every batch window then
//! carries every source in its share, however slow the rate. Either way each source is within
//! a pick or two of its share at every cycle's end. `Framings` is also how the scenario lane
//! frames each stage's batches.

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

/// Picks the source of each event in order: one at a time by smooth weighted round robin
/// (every pick adds each source's share to its credit and takes the source with the most,
/// which then pays 1), or in blocks of a cycle.
#[derive(Clone, Debug)]
pub struct Picker {
    shares: [f64; MAX_PARTS],
    credit: [f64; MAX_PARTS],
    /// The shares summed up to each source (the last exactly 1).
    upto: [f64; MAX_PARTS],
    n: usize,
    /// Events per cycle; 1 when each event is picked on its own.
    cycle: u64,
    /// The block of the last event asked about: its source and `[start, end)`.
    part: usize,
    block: (u64, u64),
    /// The seq after the last one asked about (an event left for the next batch is asked
    /// about again, and keeps its source).
    next: u64,
}

#[allow(
    clippy::indexing_slicing,
    reason = "n is clamped to 1..=MAX_PARTS, every array has MAX_PARTS entries, and k and best are < n"
)]
impl Picker {
    /// `shares` add up to 1 (at most `MAX_PARTS` of them). `cycle` 1 picks each event on its
    /// own; more puts the events in cycles of about that many (at least two events of the
    /// smallest share each), one block per source in each.
    pub fn new(shares: &[f64], cycle: u64) -> Picker {
        let n = shares.len().clamp(1, MAX_PARTS);
        let (mut s, mut upto) = ([0.0; MAX_PARTS], [0.0; MAX_PARTS]);
        let mut sum = 0.0;
        for k in 0..n {
            s[k] = shares.get(k).copied().unwrap_or(1.0);
            sum += s[k];
            upto[k] = sum;
        }
        upto[n - 1] = 1.0;
        let smallest = s[..n].iter().copied().fold(1.0, f64::min);
        let cycle = match cycle {
            0 | 1 => 1,
            c if n == 1 => c,
            // A source's block may come out one short or long of its share of a cycle: two
            // events of the smallest share keep every block from going negative.
            c => c.max((2.0 / smallest).ceil() as u64).max(n as u64),
        };
        Picker {
            shares: s,
            credit: [0.0; MAX_PARTS],
            upto,
            n,
            cycle,
            part: 0,
            block: (0, 0),
            next: 0,
        }
    }

    /// The source of event `seq`; called for every seq of the worker in order from 0 (the
    /// same seq again gives the same source).
    #[inline]
    pub fn part_at(&mut self, seq: u64) -> usize {
        if self.cycle == 1 {
            if seq >= self.next {
                self.part = self.pick();
                self.next = seq + 1;
            }
        } else if !(self.block.0..self.block.1).contains(&seq) {
            (self.part, self.block) = self.block_of(seq);
        }
        self.part
    }

    /// How many events from `seq` on are of the same source (the most a one-source batch
    /// may take there), or `None` when each event is picked on its own.
    #[inline]
    pub fn left_in_run(&self, seq: u64) -> Option<u64> {
        (self.cycle > 1).then(|| self.block_of(seq).1.1 - seq)
    }

    /// The source whose block holds `seq`, and the block. In cycle `c`, the sources up to
    /// `k` end `floor(upto[k]·(c+1)·C) − floor(upto[k]·c·C)` events into it, so after every
    /// cycle each source has its share of all events to within one.
    fn block_of(&self, seq: u64) -> (usize, (u64, u64)) {
        let c = seq / self.cycle;
        let start = c * self.cycle;
        let (from, to) = (start as f64, (start + self.cycle) as f64);
        let mut begin = start;
        for k in 0..self.n {
            let end = match k + 1 == self.n {
                true => start + self.cycle,
                false => {
                    start + ((self.upto[k] * to).floor() - (self.upto[k] * from).floor()) as u64
                }
            };
            let end = end.max(begin);
            if seq < end {
                return (k, (begin, end));
            }
            begin = end;
        }
        (self.n - 1, (begin, start + self.cycle))
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
    fn one_source_batches_come_in_one_block_per_source_and_cycle() {
        let mut p = Picker::new(&[0.75, 0.25], 100);
        assert_eq!(p.left_in_run(0), Some(75));
        assert_eq!(p.left_in_run(60), Some(15));
        assert_eq!(p.left_in_run(80), Some(20));
        assert_eq!((p.part_at(74), p.part_at(75)), (0, 1));
        // Each cycle of 100 is one block of 75 and one of 25: the source changes twice a
        // cycle, at its start and three quarters in.
        let mut last = p.part_at(0);
        for seq in 1..10_000u64 {
            let k = p.part_at(seq);
            if k != last {
                assert!(seq % 100 == 0 || seq % 100 == 75, "changed at {seq}");
            }
            last = k;
        }
        let mut q = Picker::new(&[0.75, 0.25], 100);
        assert_eq!(counts(&mut q, 100_000), vec![75_000, 25_000]);
        assert_eq!(Picker::new(&[1.0], 1).left_in_run(5), None);
    }

    #[test]
    fn shares_that_do_not_divide_a_cycle_stay_within_one_event_at_every_cycle_end() {
        let shares = [0.5, 0.3, 0.15, 0.05];
        // 7 events a cycle would give 0.35 of an event to the smallest share: the cycle grows
        // to two events of it (40).
        let mut p = Picker::new(&shares, 7);
        assert_eq!(p.cycle, 40);
        let odd = [0.61, 0.27, 0.12];
        let mut q = Picker::new(&odd, 37);
        for (p, shares) in [(&mut p, &shares[..]), (&mut q, &odd[..])] {
            let mut c = [0u64; 4];
            for seq in 0..200_000u64 {
                c[p.part_at(seq)] += 1;
                if (seq + 1) % p.cycle == 0 {
                    let n = (seq + 1) as f64;
                    for (k, share) in shares.iter().enumerate() {
                        assert!(
                            (c[k] as f64 - n * share).abs() <= 1.0,
                            "after {n} events source {k} has {} (share {share})",
                            c[k]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn an_event_asked_about_again_keeps_its_source() {
        for cycle in [1, 100] {
            let mut p = Picker::new(&[0.5, 0.5], cycle);
            let first = p.part_at(0);
            assert_eq!(p.part_at(0), first);
            let at = if cycle == 1 { 1 } else { 50 };
            assert_ne!(p.part_at(at), first);
            assert_eq!(p.part_at(at), p.part_at(at));
        }
    }
}
