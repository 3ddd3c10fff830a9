//! The randomness and text helpers every entity generator shares: the per-entity and per-pool
//! RNG (`Gen`), SplitMix64, the per-kind stream key, a seed-independent text hash (FNV-1a), a
//! 48-bit bijection for unique ids, and hex / UUID / IPv4 writers.

use std::fmt::Write as _;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::EntityKind;

pub(super) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream key of one kind under one seed.
pub(super) fn kind_key(seed: u64, kind: EntityKind) -> u64 {
    const SALT: [u64; 5] = [
        0x7573_6572_0000_0001, // user
        0x686f_7374_0000_0002, // host
        0x7072_6f63_0000_0003, // process
        0x6970_7634_0000_0004, // ip
        0x646f_6d61_0000_0005, // domain
    ];
    splitmix64(seed ^ splitmix64(SALT[kind.index()]))
}

pub(super) struct Gen(Xoshiro256PlusPlus);

impl Gen {
    /// The RNG of entity `i` of the stream `key`.
    pub(super) fn entity(key: u64, i: usize) -> Gen {
        Gen(Xoshiro256PlusPlus::seed_from_u64(splitmix64(
            key ^ splitmix64(i as u64),
        )))
    }

    /// The RNG for per-pool (not per-entity) choices of the stream `key`.
    pub(super) fn pool(key: u64) -> Gen {
        Gen(Xoshiro256PlusPlus::seed_from_u64(
            splitmix64(key).rotate_left(29) ^ 0xA076_1D64_78BD_642F,
        ))
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub(super) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    pub(super) fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    pub(super) fn pick<'a, T>(&mut self, s: &'a [T]) -> &'a T {
        &s[self.index(s.len())]
    }

    pub(super) fn pick_str(&mut self, s: &[&'static str]) -> &'static str {
        s[self.index(s.len())]
    }

    pub(super) fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// Index into `items` drawn by the weights `w` (at least one weight must be non-zero).
    pub(super) fn weighted<T>(&mut self, items: &[T], w: impl Fn(&T) -> u32) -> usize {
        let total: u64 = items.iter().map(|t| u64::from(w(t))).sum();
        let mut r = self.below(total);
        for (i, t) in items.iter().enumerate() {
            let wi = u64::from(w(t));
            if r < wi {
                return i;
            }
            r -= wi;
        }
        items.len() - 1
    }
}

/// Stable 64-bit hash of text (FNV-1a), independent of the seed.
pub(super) fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A bijection on 48-bit integers keyed by `k`: distinct inputs give distinct outputs.
pub(super) fn perm48(x: u64, k: u64) -> u64 {
    const M: u64 = (1 << 48) - 1;
    let mut x = (x ^ k) & M;
    x = x.wrapping_mul(0x9E37_79B9_7F4B) & M;
    x ^= x >> 24;
    x = x.wrapping_mul(0xD6E8_FEB8_6659) & M;
    x ^= x >> 21;
    x = x.wrapping_mul(0x2545_F491_4F6D) & M;
    x ^= x >> 19;
    (x + (k >> 16)) & M
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Appends the low `digits` hex digits of `v`.
pub(super) fn push_hex(s: &mut String, v: u64, digits: u32, upper: bool) {
    let table = if upper { HEX_UPPER } else { HEX_LOWER };
    for d in (0..digits).rev() {
        s.push(table[((v >> (d * 4)) & 0xf) as usize] as char);
    }
}

/// Appends a random version-4 UUID in lower case.
pub(super) fn push_uuid(s: &mut String, g: &mut Gen) {
    let a = (g.next() & !0xF000) | 0x4000;
    let b = (g.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    push_hex(s, a >> 32, 8, false);
    s.push('-');
    push_hex(s, a >> 16, 4, false);
    s.push('-');
    push_hex(s, a, 4, false);
    s.push('-');
    push_hex(s, b >> 48, 4, false);
    s.push('-');
    push_hex(s, b, 12, false);
}

pub(super) fn push_ipv4(s: &mut String, ip: u32) {
    let [a, b, c, d] = ip.to_be_bytes();
    let _ = write!(s, "{a}.{b}.{c}.{d}");
}

pub(super) const fn ip4(a: u8, b: u8, c: u8, d: u8) -> u32 {
    u32::from_be_bytes([a, b, c, d])
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn perm48_is_injective_on_a_sample() {
        let mut seen = HashSet::new();
        for i in 0..200_000u64 {
            assert!(seen.insert(perm48(i, 0x1234_5678_9abc_def0)));
            assert!(perm48(i, 99) < 1 << 48);
        }
    }
}
