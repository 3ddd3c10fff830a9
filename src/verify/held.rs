//! What a store holds for one run: per agent either the seqs themselves (`Seqs`: a bitmap
//! sized by the agent's `events_sent`, the count of extra copies and a small map of which seqs
//! were duplicated, and a count plus a sample of seqs beyond `events_sent`) or only counts
//! (`Counts`, from a store that keeps no seq list, e.g. the sink's `/stats`). Memory is one bit
//! per expected event plus bounded samples, whatever the store holds. A store may add notes
//! (what it could not read) and its ingest lag.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use super::lag::IngestLag;

/// Most duplicated seqs remembered by value (their count stays exact beyond it).
pub const MAX_DUP_SEQS: usize = 10_000;
/// Most seqs beyond `events_sent` remembered by value.
pub const MAX_BEYOND_SEQS: usize = 1_000;

/// One agent's seqs as a store holds them.
#[derive(Clone, Debug, Default)]
pub struct SeqHold {
    /// Bit `s` set: seq `s` (below `size`) seen at least once.
    bits: Vec<u64>,
    size: u64,
    /// Copies seen: every tag counted.
    pub copies: u64,
    /// Copies beyond the first of a seq (any seq, beyond `size` too).
    pub extra_copies: u64,
    /// Duplicated seqs and their number of copies (bounded by `MAX_DUP_SEQS`).
    pub dup_seqs: BTreeMap<u64, u64>,
    /// Seqs at or beyond `size`: distinct ones seen and a few by value.
    pub beyond: BTreeMap<u64, u64>,
    pub beyond_distinct: u64,
}

#[allow(
    clippy::indexing_slicing,
    reason = "bits has size.div_ceil(64) words and every word index is of a seq < size (each use \
              checks or clamps to size first)"
)]
impl SeqHold {
    /// Room for seqs `0..size`.
    pub fn new(size: u64) -> SeqHold {
        let words = usize::try_from(size.div_ceil(64)).unwrap_or(usize::MAX);
        SeqHold {
            bits: vec![0; words],
            size,
            ..SeqHold::default()
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Records one copy of `seq`.
    pub fn add(&mut self, seq: u64) {
        self.copies += 1;
        if seq < self.size {
            let (w, b) = ((seq / 64) as usize, seq % 64);
            if self.bits[w] & (1 << b) == 0 {
                self.bits[w] |= 1 << b;
                return;
            }
        } else if !self.beyond.contains_key(&seq) {
            // Seqs beyond are remembered while there is room; past it each one seen counts
            // as distinct (a store holding millions of stray seqs is broken either way).
            self.beyond_distinct += 1;
            if self.beyond.len() < MAX_BEYOND_SEQS {
                self.beyond.insert(seq, 1);
            }
            return;
        } else if let Some(n) = self.beyond.get_mut(&seq) {
            *n += 1;
        }
        self.extra_copies += 1;
        if let Some(n) = self.dup_seqs.get_mut(&seq) {
            *n += 1;
        } else if self.dup_seqs.len() < MAX_DUP_SEQS {
            self.dup_seqs.insert(seq, 2);
        }
    }

    /// Records `n` copies of `seq` at once (a store that answers with a count per seq): the
    /// same as `n` calls of `add`, in constant time.
    pub fn add_copies(&mut self, seq: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.add(seq);
        let more = n - 1;
        if more == 0 {
            return;
        }
        self.copies += more;
        self.extra_copies += more;
        if let Some(c) = self.beyond.get_mut(&seq) {
            *c += more;
        }
        if let Some(c) = self.dup_seqs.get_mut(&seq) {
            *c += more;
        } else if self.dup_seqs.len() < MAX_DUP_SEQS {
            self.dup_seqs.insert(seq, n);
        }
    }

    pub fn has(&self, seq: u64) -> bool {
        seq < self.size && self.bits[(seq / 64) as usize] & (1 << (seq % 64)) != 0
    }

    /// Seqs of `[from, to)` (within `size`) seen.
    pub fn count_in(&self, from: u64, to: u64) -> u64 {
        let to = to.min(self.size);
        if from >= to {
            return 0;
        }
        let (fw, lw) = ((from / 64) as usize, ((to - 1) / 64) as usize);
        let mut n = 0u64;
        for w in fw..=lw {
            let mut word = self.bits[w];
            if w == fw {
                word &= u64::MAX << (from % 64);
            }
            if w == lw {
                let top = to - (lw as u64) * 64;
                if top < 64 {
                    word &= (1u64 << top) - 1;
                }
            }
            n += u64::from(word.count_ones());
        }
        n
    }

    /// The first seqs of `[from, to)` not seen, at most `limit`, pushed onto `out`.
    pub fn missing_in(&self, from: u64, to: u64, limit: usize, out: &mut Vec<u64>) {
        let mut s = from;
        while s < to && out.len() < limit {
            if s < self.size {
                let w = self.bits[(s / 64) as usize];
                if s.is_multiple_of(64) && w == u64::MAX {
                    s += 64;
                    continue;
                }
            }
            if !self.has(s) {
                out.push(s);
            }
            s += 1;
        }
    }
}

/// One agent's counts from a store that keeps no seq list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountHold {
    /// Tagged events held (every copy).
    pub received: u64,
    /// Different seqs held.
    pub distinct: u64,
    /// The highest seq held.
    pub max_seq: u64,
}

/// One agent as held.
#[derive(Clone, Debug)]
pub enum AgentHold {
    Seqs(SeqHold),
    Counts(CountHold),
}

/// Store records (a file's line, a search API's document or event) that hold more than one
/// accounting tag of the run: several events stored as one record by a collector (merged
/// lines, a multi-line message). Each is counted and the first named; any fails the
/// verification, whatever the tags inside say.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeveralTags {
    /// Records holding more than one tag.
    pub records: u64,
    /// The tags those records hold, together.
    pub tags: u64,
    /// The first such record: a file and line, or a document or event.
    pub first: Option<String>,
}

impl SeveralTags {
    /// One record held `tags` tags (more than one); `name` names it when it is the first.
    pub fn add(&mut self, tags: u64, name: impl FnOnce() -> String) {
        self.records += 1;
        self.tags += tags;
        if self.first.is_none() {
            self.first = Some(name());
        }
    }
}

/// What one store holds for the run.
#[derive(Clone, Debug, Default)]
pub struct Held {
    pub agents: BTreeMap<u32, AgentHold>,
    /// Tags of other runs seen (ignored).
    pub other_runs: u64,
    /// Lines or documents read (for the report).
    pub scanned: u64,
    /// What the store could not say, for the result's notes.
    pub notes: Vec<String>,
    /// Where the store records arrival (search APIs), its ingest lag.
    pub ingest_lag: Option<IngestLag>,
    /// Records that hold several tags of the run (see `SeveralTags`).
    pub merged: SeveralTags,
}

impl Held {
    /// Records `copies` of `(agent, seq)`; a new agent's bitmap is sized `size` (its
    /// `events_sent`, 0 for an agent the report does not name).
    pub fn record(&mut self, agent: u32, size: u64, seq: u64, copies: u64) {
        let hold = match self.agents.entry(agent) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(AgentHold::Seqs(SeqHold::new(size))),
        };
        if let AgentHold::Seqs(h) = hold {
            h.add_copies(seq, copies);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_copies_duplicates_and_strays() {
        let mut h = SeqHold::new(130);
        for s in [0, 1, 1, 64, 129, 129, 129, 200, 200, 300] {
            h.add(s);
        }
        assert_eq!(h.copies, 10);
        assert_eq!(h.extra_copies, 4);
        assert_eq!(h.dup_seqs, BTreeMap::from([(1, 2), (129, 3), (200, 2)]));
        assert_eq!(h.beyond_distinct, 2);
        assert_eq!(h.count_in(0, 130), 4);
        assert_eq!(h.count_in(1, 65), 2);
        assert_eq!(h.count_in(2, 64), 0);
        assert_eq!(h.count_in(129, 500), 1);
        let mut m = Vec::new();
        h.missing_in(0, 130, 3, &mut m);
        assert_eq!(m, vec![2, 3, 4]);
    }

    #[test]
    fn copies_at_once_match_one_by_one() {
        let seqs = [
            (0u64, 1u64),
            (1, 3),
            (5, 1),
            (5, 2),
            (140, 4),
            (140, 1),
            (7, 0),
        ];
        let (mut one, mut many) = (SeqHold::new(100), SeqHold::new(100));
        for &(s, n) in &seqs {
            (0..n).for_each(|_| one.add(s));
            many.add_copies(s, n);
        }
        assert_eq!(one.copies, many.copies);
        assert_eq!(one.extra_copies, many.extra_copies);
        assert_eq!(one.dup_seqs, many.dup_seqs);
        assert_eq!(one.beyond, many.beyond);
        assert_eq!(one.beyond_distinct, many.beyond_distinct);
        assert_eq!(many.dup_seqs, BTreeMap::from([(1, 3), (5, 3), (140, 5)]));
        assert_eq!(many.count_in(0, 100), 3);
        let mut h = Held::default();
        h.record(2, 10, 3, 2);
        h.record(2, 999, 4, 1);
        let Some(AgentHold::Seqs(s)) = h.agents.get(&2) else {
            panic!()
        };
        assert_eq!((s.size(), s.copies, s.extra_copies), (10, 3, 1));
    }

    #[test]
    fn full_words_are_skipped() {
        let mut h = SeqHold::new(256);
        (0..256).filter(|&s| s != 200).for_each(|s| h.add(s));
        let mut m = Vec::new();
        h.missing_in(0, 256, 20, &mut m);
        assert_eq!(m, vec![200]);
        assert_eq!(h.count_in(0, 256), 255);
    }
}
