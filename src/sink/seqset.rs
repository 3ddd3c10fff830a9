//! The set of sequence numbers one agent's events arrived with: a growable bitset cut into
//! chunks of 65,536 seqs (8 KiB each). A chunk is allocated on its first seq and freed again
//! once it is full (every seq in it seen), so a long soak without losses holds only the few
//! chunks near the front: memory follows the out-of-order window and the losses, not the
//! length of the run. Seqs at or above `MAX_SEQ` are refused (a garbage tag must not make the
//! sink allocate terabytes).

/// Bits per chunk.
const CHUNK_BITS: u64 = 1 << 16;
const WORDS: usize = (CHUNK_BITS / 64) as usize;
/// The first seq not tracked: 2^36 (68 billion events per agent).
pub const MAX_SEQ: u64 = 1 << 36;

const EMPTY: u32 = 0;
const FULL: u32 = u32::MAX;

#[derive(Default)]
pub struct SeqSet {
    /// Per chunk: EMPTY, FULL, or 1 + an index into `partial`.
    chunks: Vec<u32>,
    partial: Vec<Partial>,
    /// Indices of `partial` entries free for reuse.
    free: Vec<u32>,
}

struct Partial {
    count: u32,
    bits: Box<[u64; WORDS]>,
}

/// What `insert` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    New,
    Duplicate,
    OutOfRange,
}

impl SeqSet {
    #[allow(
        clippy::indexing_slicing,
        reason = "per-event on the sink; chunks is resized to hold c before it is read, slot \
                  indices are entries this set pushed to partial (free holds only those), and w = \
                  bit / 64 < WORDS since bit < CHUNK_BITS = 64 * WORDS"
    )]
    pub fn insert(&mut self, seq: u64) -> Insert {
        if seq >= MAX_SEQ {
            return Insert::OutOfRange;
        }
        let c = (seq / CHUNK_BITS) as usize;
        if c >= self.chunks.len() {
            self.chunks.resize(c + 1, EMPTY);
        }
        let slot = match self.chunks[c] {
            FULL => return Insert::Duplicate,
            EMPTY => {
                let p = match self.free.pop() {
                    Some(i) => {
                        let p = &mut self.partial[i as usize];
                        p.bits.fill(0);
                        p.count = 0;
                        i
                    }
                    None => {
                        self.partial.push(Partial {
                            count: 0,
                            bits: Box::new([0; WORDS]),
                        });
                        (self.partial.len() - 1) as u32
                    }
                };
                self.chunks[c] = p + 1;
                p
            }
            i => i - 1,
        };
        let p = &mut self.partial[slot as usize];
        let bit = seq % CHUNK_BITS;
        let (w, m) = ((bit / 64) as usize, 1u64 << (bit % 64));
        if p.bits[w] & m != 0 {
            return Insert::Duplicate;
        }
        p.bits[w] |= m;
        p.count += 1;
        if u64::from(p.count) == CHUNK_BITS {
            self.chunks[c] = FULL;
            self.free.push(slot);
        }
        Insert::New
    }

    #[cfg(test)]
    pub fn contains(&self, seq: u64) -> bool {
        let c = (seq / CHUNK_BITS) as usize;
        match self.chunks.get(c).copied() {
            None | Some(EMPTY) => false,
            Some(FULL) => true,
            Some(i) => {
                let bit = seq % CHUNK_BITS;
                self.partial[(i - 1) as usize].bits[(bit / 64) as usize] & (1 << (bit % 64)) != 0
            }
        }
    }

    /// Chunks holding memory now.
    #[cfg(test)]
    pub fn partial_chunks(&self) -> usize {
        self.partial.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_then_duplicate() {
        let mut s = SeqSet::default();
        assert_eq!(s.insert(5), Insert::New);
        assert_eq!(s.insert(5), Insert::Duplicate);
        assert_eq!(s.insert(70_000), Insert::New);
        assert!(s.contains(5) && s.contains(70_000) && !s.contains(6));
        assert_eq!(s.insert(MAX_SEQ), Insert::OutOfRange);
        assert_eq!(s.insert(u64::MAX), Insert::OutOfRange);
    }

    #[test]
    fn full_chunks_are_released() {
        let mut s = SeqSet::default();
        for seq in 0..3 * CHUNK_BITS + 10 {
            assert_eq!(s.insert(seq), Insert::New);
        }
        assert_eq!(s.partial_chunks(), 1);
        assert_eq!(s.insert(100), Insert::Duplicate);
        assert_eq!(s.insert(3 * CHUNK_BITS + 5), Insert::Duplicate);
        assert!(s.contains(2 * CHUNK_BITS + 7));
        // The released chunk's memory is reused, cleared.
        assert_eq!(s.partial.len(), 1);
        assert!(!s.contains(3 * CHUNK_BITS + 11));
    }
}
