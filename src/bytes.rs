//! Writing bytes without allocation, for anyone who fills output buffers (the generator, the
//! adapters, the HTTP writer): decimals with `itoa`, zero-padded fixed widths (timestamps),
//! hex digits and UUIDs from random bits, and short copies inline. `Sink` lets the same
//! writers fill a growable `Vec<u8>` or a small fixed array. `resident` makes the empty
//! buffers a worker preallocates resident from the start. Nobody's event format.

/// An empty buffer of `cap` bytes whose first `touched` bytes are written once, so those
/// pages are resident from the start: the first fault storm that fills every batch slot then
/// finds its memory in place (no page faults in the hot loop, and the process's RSS is its
/// level from the first second, not a high-water mark that steps up whenever more slots are
/// in use at once). The rest of `cap`, a cap batches rarely reach, is touched only if used.
pub fn resident(cap: usize, touched: usize) -> Vec<u8> {
    /// Written a block at a time (a `memcpy` each, fast in a debug build too, where a
    /// byte-by-byte `resize` of a worker's slots outlasted a short run's schedule).
    static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
    let mut v = Vec::with_capacity(cap);
    let n = touched.min(cap);
    while v.len() < n {
        let k = (n - v.len()).min(ZEROS.len());
        v.extend_from_slice(ZEROS.get(..k).unwrap_or_default());
    }
    std::hint::black_box(&mut v);
    v.clear();
    v
}

/// Somewhere bytes can be appended.
pub trait Sink {
    fn put(&mut self, b: u8);
    fn put_slice(&mut self, s: &[u8]);
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, b: u8) {
        self.push(b);
    }
    #[inline]
    fn put_slice(&mut self, s: &[u8]) {
        append(self, s);
    }
}

/// Appends `s` to `out`. Templates are mostly short pieces (`","`, `"\":\""`), and a call
/// into the C library's memcpy per piece costs more than the copy, so slices of up to 256 bytes
/// are copied inline with overlapping unaligned moves.
#[inline(always)]
pub fn append(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n > 256 {
        out.extend_from_slice(s);
        return;
    }
    out.reserve(256);
    let len = out.len();
    // SAFETY: `reserve(256)` leaves at least 256 writable bytes after `len`; every move below
    // writes within the first `n <= 256` of them and reads within `s`.
    unsafe {
        let dst = out.as_mut_ptr().add(len);
        let src = s.as_ptr();
        if n >= 16 {
            let mut i = 0;
            while i + 16 < n {
                let a = std::ptr::read_unaligned(src.add(i) as *const u128);
                std::ptr::write_unaligned(dst.add(i) as *mut u128, a);
                i += 16;
            }
            let b = std::ptr::read_unaligned(src.add(n - 16) as *const u128);
            std::ptr::write_unaligned(dst.add(n - 16) as *mut u128, b);
        } else if n >= 8 {
            let a = std::ptr::read_unaligned(src as *const u64);
            let b = std::ptr::read_unaligned(src.add(n - 8) as *const u64);
            std::ptr::write_unaligned(dst as *mut u64, a);
            std::ptr::write_unaligned(dst.add(n - 8) as *mut u64, b);
        } else if n >= 4 {
            let a = std::ptr::read_unaligned(src as *const u32);
            let b = std::ptr::read_unaligned(src.add(n - 4) as *const u32);
            std::ptr::write_unaligned(dst as *mut u32, a);
            std::ptr::write_unaligned(dst.add(n - 4) as *mut u32, b);
        } else {
            for i in 0..n {
                *dst.add(i) = *src.add(i);
            }
        }
        out.set_len(len + n);
    }
}

/// A fixed-capacity byte array; writes past its end are dropped (callers size it).
pub struct ArrayBuf<const N: usize> {
    pub buf: [u8; N],
    pub len: usize,
}

impl<const N: usize> ArrayBuf<N> {
    pub fn new() -> Self {
        ArrayBuf {
            buf: [0; N],
            len: 0,
        }
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> Default for ArrayBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; len <= N always (put checks len < N, put_slice takes at most N \
              - len bytes) and buf has N bytes"
)]
impl<const N: usize> Sink for ArrayBuf<N> {
    fn put(&mut self, b: u8) {
        if self.len < N {
            self.buf[self.len] = b;
            self.len += 1;
        }
    }
    fn put_slice(&mut self, s: &[u8]) {
        let n = s.len().min(N - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
    }
}

#[inline]
pub fn write_u64(v: u64, out: &mut impl Sink) {
    let mut b = itoa::Buffer::new();
    out.put_slice(b.format(v).as_bytes());
}

#[inline]
pub fn write_i64(v: i64, out: &mut impl Sink) {
    let mut b = itoa::Buffer::new();
    out.put_slice(b.format(v).as_bytes());
}

/// `v` in exactly `width` decimal digits (leading zeros; higher digits dropped).
#[inline]
#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; w is clamped to 20, the size of tmp, and i < w"
)]
pub fn write_u64_padded(mut v: u64, width: usize, out: &mut impl Sink) {
    let mut tmp = [b'0'; 20];
    let w = width.min(20);
    for i in (0..w).rev() {
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.put_slice(&tmp[..w]);
}

const LOWER: &[u8; 16] = b"0123456789abcdef";
const UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// The low `digits` hex digits of `v` (at most 16), most significant first.
#[inline]
#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; d is clamped to 16, the size of tmp, and a nibble (& 0xf) \
              indexes a 16-entry table"
)]
pub fn write_hex(v: u64, digits: usize, upper: bool, out: &mut impl Sink) {
    let table = if upper { UPPER } else { LOWER };
    let mut tmp = [0u8; 16];
    let d = digits.min(16);
    for (i, slot) in tmp[..d].iter_mut().enumerate() {
        let shift = 4 * (d - 1 - i);
        *slot = table[((v >> shift) & 0xf) as usize];
    }
    out.put_slice(&tmp[..d]);
}

/// `v` in hex without leading zeros (`0` for zero).
#[inline]
pub fn write_hex_min(v: u64, upper: bool, out: &mut impl Sink) {
    let digits = if v == 0 {
        1
    } else {
        (64 - v.leading_zeros() as usize).div_ceil(4)
    };
    write_hex(v, digits, upper, out);
}

/// A version-4 UUID from 128 random bits: `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`.
#[inline]
pub fn write_uuid(hi: u64, lo: u64, upper: bool, out: &mut impl Sink) {
    let hi = (hi & !0xf000) | 0x4000; // version 4
    let lo = (lo & !(0xc << 60)) | (0x8 << 60); // variant 10xx
    write_hex(hi >> 32, 8, upper, out);
    out.put(b'-');
    write_hex((hi >> 16) & 0xffff, 4, upper, out);
    out.put(b'-');
    write_hex(hi & 0xffff, 4, upper, out);
    out.put(b'-');
    write_hex(lo >> 48, 4, upper, out);
    out.put(b'-');
    write_hex(lo & 0xffff_ffff_ffff, 12, upper, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resident_buffer_is_empty_with_its_capacity_and_in_memory() {
        let rss = || {
            let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
            let pages: u64 = statm.split(' ').nth(1).unwrap().parse().unwrap();
            pages * 4096
        };
        let before = rss();
        let v = resident(80 << 20, 64 << 20);
        let after = rss();
        assert!(v.is_empty());
        assert!(v.capacity() >= 80 << 20);
        assert!(
            after >= before + (60 << 20),
            "RSS {before} -> {after}: the pages were not written"
        );
    }

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut v = Vec::new();
        f(&mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn decimal_and_padded() {
        assert_eq!(s(|o| write_u64(0, o)), "0");
        assert_eq!(s(|o| write_u64(u64::MAX, o)), "18446744073709551615");
        assert_eq!(s(|o| write_i64(-42, o)), "-42");
        assert_eq!(s(|o| write_u64_padded(7, 3, o)), "007");
        assert_eq!(s(|o| write_u64_padded(1234, 2, o)), "34");
    }

    #[test]
    fn hex_and_uuid() {
        assert_eq!(s(|o| write_hex(0x1a2b3c4, 8, false, o)), "01a2b3c4");
        assert_eq!(s(|o| write_hex_min(0x1a2b3c4, false, o)), "1a2b3c4");
        assert_eq!(s(|o| write_hex_min(0, true, o)), "0");
        assert_eq!(s(|o| write_hex(0xdeadbeef, 8, true, o)), "DEADBEEF");
        let u = s(|o| write_uuid(u64::MAX, 0, false, o));
        assert_eq!(u, "ffffffff-ffff-4fff-8000-000000000000");
        let u = s(|o| write_uuid(0x0123456789abcdef, 0xfedcba9876543210, false, o));
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
    }

    #[test]
    fn append_copies_every_length_exactly() {
        let src: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
        for n in 0..=300 {
            let mut out = b"xy".to_vec();
            append(&mut out, &src[..n]);
            assert_eq!(&out[..2], b"xy");
            assert_eq!(&out[2..], &src[..n], "n={n}");
        }
    }

    #[test]
    fn array_buf_truncates() {
        let mut a = ArrayBuf::<4>::new();
        a.put_slice(b"abcdef");
        a.put(b'g');
        assert_eq!(a.as_slice(), b"abcd");
    }
}
