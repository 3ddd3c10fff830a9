//! `Spool<T>`: an append-only record of a run's seconds that keeps the process's memory flat
//! however long the run: the last `keep` items are held as they are (the live views read
//! them), and older ones are packed, `BLOCK` at a time, as CBOR compressed with deflate at its
//! best level (once per `BLOCK` seconds, so it costs nothing; about a tenth of their size),
//! and written to the spool's `Spill` (a temporary file). `into_vec` gives every item back, in
//! order, when the run ends.
//!
//! Packing cannot lose an item: an item that fails to encode (it cannot, for the plain
//! structs kept here) stays in memory unpacked, and a block the file does not take stays in
//! memory packed (`Spill`).
//!
//! Every spool of the process packs with one compressor, made with the first spool and kept
//! (`PACKER`): its state is a few hundred KB, and making and dropping one per block left the
//! allocator's heap a little larger at every pack of a long run. It is run once over a few
//! hundred KB when made (`warm`), and a spool's buffers (`recent`, `unpacked`) are written
//! once when it is made: what a long run holds is in memory from its first second, not
//! paged in at its first pack or when the live history fills minutes later, so the RSS a
//! soak watches is level from the start.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Mutex, OnceLock};

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::spill::{Block, Spill};

/// Items packed together: large enough to compress well (their keys repeat), small enough
/// that an unpacked block is a few tens of KB.
const BLOCK: usize = 256;

/// The one compressor every spool packs with (see the header); its output is swapped out by
/// `DeflateEncoder::reset`, which ends the stream and starts the next with the same state.
static PACKER: OnceLock<Mutex<DeflateEncoder<Vec<u8>>>> = OnceLock::new();

/// Bytes the compressor is run over when made: enough to touch every table of its state.
const WARM: usize = 256 * 1024;

fn packer() -> &'static Mutex<DeflateEncoder<Vec<u8>>> {
    PACKER.get_or_init(|| {
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::best());
        warm(&mut enc);
        Mutex::new(enc)
    })
}

/// Compresses `WARM` bytes of text with repeats in it (so every match path runs) and drops the
/// output: the compressor's state and code are then in memory. A failure only leaves them cold.
fn warm(enc: &mut DeflateEncoder<Vec<u8>>) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let text: Vec<u8> = (0..WARM)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'a' + (x % 16) as u8
        })
        .collect();
    let _ = enc.write_all(&text).and_then(|()| enc.reset(Vec::new()));
}

pub struct Spool<T> {
    keep: usize,
    /// Packed blocks, oldest first, each `BLOCK` items, in `spill`.
    packed: Vec<Block>,
    spill: Spill,
    /// Items too old to keep as they are, not packed yet (fewer than `BLOCK`), or that did
    /// not pack.
    unpacked: Vec<T>,
    recent: VecDeque<T>,
}

impl<T: Serialize + DeserializeOwned + Default> Spool<T> {
    /// A spool holding its last `keep` items as they are. The compressor, the encoding of
    /// `T` and the spool's own buffers are in memory from now on (see the header).
    pub fn new(keep: usize) -> Spool<T> {
        packer();
        let _ = ciborium::into_writer(&T::default(), std::io::sink());
        let keep = keep.max(1);
        Spool {
            keep,
            packed: Vec::new(),
            spill: Spill::new(),
            unpacked: resident(BLOCK),
            recent: VecDeque::from(resident(keep + 1)),
        }
    }

    pub fn push(&mut self, item: T) {
        self.recent.push_back(item);
        if self.recent.len() > self.keep
            && let Some(old) = self.recent.pop_front()
        {
            self.unpacked.push(old);
            if self.unpacked.len() == BLOCK {
                self.pack();
            }
        }
    }

    /// Items pushed so far.
    pub fn len(&self) -> usize {
        self.packed.len() * BLOCK + self.unpacked.len() + self.recent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }

    pub fn last(&self) -> Option<&T> {
        self.recent.back()
    }

    /// Item `i`, while it is held as it is (one of the last `keep`).
    pub fn get(&self, i: usize) -> Option<&T> {
        let first = self.len() - self.recent.len();
        i.checked_sub(first).and_then(|k| self.recent.get(k))
    }

    /// Item `i` to change, while it is held as it is (one of the last `keep`).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        let first = self.len() - self.recent.len();
        i.checked_sub(first).and_then(|k| self.recent.get_mut(k))
    }

    /// The last `n` items (fewer when fewer are held as they are), oldest first.
    pub fn recent(&self, n: usize) -> impl Iterator<Item = &T> {
        self.recent.iter().skip(self.recent.len().saturating_sub(n))
    }

    /// Every item pushed, in order (a packed block the temporary file cannot give back,
    /// which it has no reason not to, is left out rather than fail the report).
    pub fn into_vec(self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        for block in &self.packed {
            if let Some(bytes) = self.spill.get(block) {
                out.extend(unpack::<T>(&bytes));
            }
        }
        out.extend(self.unpacked);
        out.extend(self.recent);
        out
    }

    /// Packs the unpacked items into one block; if they do not encode they stay as they are.
    fn pack(&mut self) {
        let mut enc = packer().lock().unwrap_or_else(|e| e.into_inner());
        // A stream left by a pack that failed is dropped: each block starts clean.
        let encoded = enc
            .reset(Vec::new())
            .map_err(|_| ())
            .and_then(|_| {
                self.unpacked
                    .iter()
                    .try_for_each(|item| ciborium::into_writer(item, &mut *enc).map_err(|_| ()))
            })
            .and_then(|()| enc.reset(Vec::new()).map_err(|_| ()));
        if let Ok(block) = encoded {
            self.packed.push(self.spill.put(&block));
            self.unpacked.clear();
        }
    }
}

/// An empty vector with room for `n` items, written once so that its pages are resident.
fn resident<T: Default>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    v.resize_with(n, T::default);
    std::hint::black_box(&mut v);
    v.clear();
    v
}

/// The items of one block. Blocks are written by `pack` in this process, so they decode; the
/// loop still stops at the first item that does not rather than panic.
fn unpack<T: DeserializeOwned>(block: &[u8]) -> Vec<T> {
    let mut raw = Vec::new();
    if DeflateDecoder::new(block).read_to_end(&mut raw).is_err() {
        return Vec::new();
    }
    let mut items = Vec::with_capacity(BLOCK);
    let mut rest: &[u8] = &raw;
    while !rest.is_empty() {
        match ciborium::from_reader::<T, _>(&mut rest) {
            Ok(item) => items.push(item),
            Err(_) => break,
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
    struct Row {
        t: u32,
        name: String,
        p99: f64,
        gauge: Option<u64>,
    }

    fn row(t: u32) -> Row {
        Row {
            t,
            name: format!("second {t}"),
            p99: if t.is_multiple_of(7) {
                f64::NAN
            } else {
                t as f64 / 3.0
            },
            gauge: t.is_multiple_of(2).then_some(u64::from(t) << 40),
        }
    }

    fn same(a: &Row, b: &Row) -> bool {
        a.t == b.t && a.name == b.name && a.gauge == b.gauge && a.p99.to_bits() == b.p99.to_bits()
    }

    #[test]
    fn every_item_comes_back_in_order_bit_for_bit() {
        for n in [
            0,
            1,
            10,
            11,
            BLOCK + 10,
            3 * BLOCK + 10,
            3 * BLOCK + 11,
            5000,
        ] {
            let mut s = Spool::new(10);
            for t in 0..n as u32 {
                s.push(row(t));
            }
            assert_eq!(s.len(), n);
            assert_eq!(s.last().map(|r| r.t), n.checked_sub(1).map(|t| t as u32));
            let back = s.into_vec();
            assert_eq!(back.len(), n);
            for (t, r) in back.iter().enumerate() {
                assert!(same(r, &row(t as u32)), "{t}: {r:?}");
            }
        }
    }

    #[test]
    fn packed_blocks_are_on_disk_and_only_their_places_in_memory() {
        let mut s = Spool::new(10);
        for t in 0..(10 + 3 * BLOCK as u32 + 5) {
            s.push(row(t));
        }
        assert_eq!(s.packed.len(), 3);
        assert!(
            s.packed.iter().all(|b| matches!(b, Block::Disk { .. })),
            "{:?}",
            s.packed
        );
        assert!(s.spill.disk_bytes() > 0);
        assert_eq!(s.unpacked.len(), 5);
        let back = s.into_vec();
        assert_eq!(back.len(), 10 + 3 * BLOCK + 5);
        assert!(
            back.iter()
                .enumerate()
                .all(|(t, r)| same(r, &row(t as u32)))
        );
    }

    #[test]
    fn a_spool_has_its_room_from_the_start() {
        let mut s: Spool<Row> = Spool::new(600);
        let (recent, unpacked) = (s.recent.capacity(), s.unpacked.capacity());
        assert!(recent > 600 && unpacked >= BLOCK, "{recent} {unpacked}");
        for t in 0..(600 + BLOCK as u32 - 1) {
            s.push(row(t));
        }
        assert_eq!(s.recent.len(), 600);
        assert_eq!(s.unpacked.len(), BLOCK - 1);
        assert_eq!(
            (s.recent.capacity(), s.unpacked.capacity()),
            (recent, unpacked)
        );
    }

    #[test]
    fn spools_on_several_threads_share_the_packer_and_keep_their_own_items() {
        let threads: Vec<_> = (0..4u32)
            .map(|k| {
                std::thread::spawn(move || {
                    let mut s = Spool::new(3);
                    for t in 0..(4 * BLOCK as u32 + k) {
                        s.push(row(t * 4 + k));
                    }
                    (k, s.into_vec())
                })
            })
            .collect();
        for h in threads {
            let (k, back) = h.join().unwrap();
            assert_eq!(back.len(), 4 * BLOCK + k as usize);
            for (t, r) in back.iter().enumerate() {
                assert!(same(r, &row(t as u32 * 4 + k)), "spool {k}, {t}: {r:?}");
            }
        }
    }

    #[test]
    fn the_recent_items_are_the_last_ones_held_as_they_are() {
        let mut s = Spool::new(600);
        for t in 0..2000 {
            s.push(row(t));
        }
        let last: Vec<u32> = s.recent(5).map(|r| r.t).collect();
        assert_eq!(last, vec![1995, 1996, 1997, 1998, 1999]);
        assert_eq!(s.recent(10_000).count(), 600);
        assert_eq!(s.get(1400).map(|r| r.t), Some(1400));
        assert!(
            s.get(1399).is_none() && s.get(2000).is_none(),
            "packed, or not yet pushed"
        );
        assert_eq!(s.recent.len(), 600);
        assert_eq!(s.packed.len(), (2000 - 600) / BLOCK);
        assert_eq!(s.unpacked.len(), (2000 - 600) % BLOCK);
    }

    #[test]
    fn a_packed_block_is_much_smaller_than_its_items() {
        let mut s = Spool::new(1);
        for t in 0..=BLOCK as u32 {
            s.push(row(t));
        }
        assert_eq!(s.packed.len(), 1);
        let raw = BLOCK * std::mem::size_of::<Row>();
        assert!(
            s.packed[0].len() * 3 < raw,
            "{} of {raw}",
            s.packed[0].len()
        );
    }
}
