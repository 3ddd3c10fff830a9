//! Counting JSON values in a request body without parsing it: how many elements a top-level
//! array has (lphc batches), how many values sit at the top level (NDJSON lines, HEC's
//! concatenated envelopes), and whether brackets and strings balance.
//!
//! It works 64 bytes at a time, the way simdjson's first stage does: bit masks of quotes,
//! backslashes, brackets and commas; the escaped characters found with carry arithmetic on the
//! backslash mask; the bytes inside strings found as a prefix XOR of the unescaped quotes;
//! then only the brackets outside strings are visited one by one (to follow the depth) and the
//! commas between two of them are counted with `popcount`. A CloudTrail-sized event has a few
//! dozen brackets in 1.7 KB, so the cost is a handful of operations per 64 bytes.
//! `count_scalar` is the plain state machine the block version is tested against.

/// What a body holds, structurally.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Objects and arrays opened at depth 0.
    pub top_values: u64,
    /// Commas at depth 1 (between the elements of a top-level array).
    pub depth1_commas: u64,
}

/// Why a body is not balanced JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanError {
    UnterminatedString,
    Unbalanced,
}

impl ScanError {
    pub fn message(self) -> &'static str {
        match self {
            ScanError::UnterminatedString => "unterminated JSON string",
            ScanError::Unbalanced => "unbalanced JSON brackets",
        }
    }
}

const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

#[derive(Default)]
struct Masks {
    quote: u64,
    backslash: u64,
    open: u64,
    close: u64,
    comma: u64,
}

/// Bit i of each mask is set when byte i of the block is that character. `{`/`[` and
/// `}`/`]` differ only in bit 0x20, so one compare each after OR-ing it in.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn masks(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut m = Masks::default();
    // SAFETY: SSE2 is part of the x86_64 baseline, and each unaligned load reads bytes
    // 16k..16k+16 of a 64-byte array.
    unsafe {
        let bit = |x: __m128i, c: u8| -> u64 {
            u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8))) as u16)
        };
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let shift = 16 * k as u32;
            m.quote |= bit(v, b'"') << shift;
            m.backslash |= bit(v, b'\\') << shift;
            m.open |= bit(folded, b'{') << shift;
            m.close |= bit(folded, b'}') << shift;
            m.comma |= bit(v, b',') << shift;
        }
    }
    m
}

/// The portable form of the x86_64 `masks`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn masks(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &b) in block.iter().enumerate() {
        let folded = b | 0x20;
        m.quote |= u64::from(b == b'"') << i;
        m.backslash |= u64::from(b == b'\\') << i;
        m.open |= u64::from(folded == b'{') << i;
        m.close |= u64::from(folded == b'}') << i;
        m.comma |= u64::from(b == b',') << i;
    }
    m
}

/// The characters escaped by a backslash (simdjson's `find_escaped`): a backslash run of odd
/// length escapes the byte after it. `prev` carries an escape over the block boundary.
#[inline(always)]
fn escaped(backslash: u64, prev: &mut u64) -> u64 {
    let backslash = backslash & !*prev;
    let follows_escape = (backslash << 1) | *prev;
    let odd_starts = backslash & !EVEN_BITS & !follows_escape;
    let (even_seq, overflow) = odd_starts.overflowing_add(backslash);
    *prev = u64::from(overflow);
    let invert = even_seq << 1;
    (EVEN_BITS ^ invert) & follows_escape
}

#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[inline(always)]
fn bits_from(i: u32) -> u64 {
    if i >= 64 { 0 } else { !0u64 << i }
}

#[inline(always)]
fn bits_below(i: u32) -> u64 {
    if i >= 64 { !0 } else { (1u64 << i) - 1 }
}

struct State {
    prev_escaped: u64,
    in_string: u64,
    depth: u64,
    counts: Counts,
    underflow: bool,
}

impl State {
    fn new() -> Self {
        State {
            prev_escaped: 0,
            in_string: 0,
            depth: 0,
            counts: Counts::default(),
            underflow: false,
        }
    }

    /// The unescaped quotes of a block, and its escaped characters.
    #[inline(always)]
    fn quotes(&mut self, m: &Masks) -> (u64, u64) {
        let esc = escaped(m.backslash, &mut self.prev_escaped);
        (m.quote & !esc, esc)
    }

    /// Follows the depth through a block, given the prefix XOR of its unescaped quotes.
    #[inline(always)]
    fn step(&mut self, m: &Masks, quotes_xor: u64, esc: u64) {
        let inside = quotes_xor ^ self.in_string;
        self.in_string = ((inside as i64) >> 63) as u64;
        let outside = !(inside | esc);
        let open = m.open & outside;
        let close = m.close & outside;
        let commas = m.comma & outside;
        let mut brackets = open | close;
        let mut from = 0u32;
        while brackets != 0 {
            let at = brackets.trailing_zeros();
            if self.depth == 1 {
                let range = bits_from(from) & bits_below(at);
                self.counts.depth1_commas += u64::from((commas & range).count_ones());
            }
            if open & (1u64 << at) != 0 {
                if self.depth == 0 {
                    self.counts.top_values += 1;
                }
                self.depth += 1;
            } else if self.depth == 0 {
                self.underflow = true;
            } else {
                self.depth -= 1;
            }
            from = at + 1;
            brackets &= brackets - 1;
        }
        if self.depth == 1 {
            self.counts.depth1_commas += u64::from((commas & bits_from(from)).count_ones());
        }
    }

    fn finish(self) -> Result<Counts, ScanError> {
        if self.in_string != 0 {
            return Err(ScanError::UnterminatedString);
        }
        if self.underflow || self.depth != 0 {
            return Err(ScanError::Unbalanced);
        }
        Ok(self.counts)
    }
}

/// The block loop, written once and expanded per instruction set (a `#[target_feature]`
/// function cannot be passed as a closure, so the loop is a macro).
macro_rules! scan_blocks {
    ($body:expr, $masks:expr, $prefix_xor:expr) => {{
        let body: &[u8] = $body;
        let mut st = State::new();
        let mut chunks = body.chunks_exact(64);
        for c in &mut chunks {
            let block: &[u8; 64] = c.try_into().unwrap_or(&[b' '; 64]);
            let m = $masks(block);
            let (q, esc) = st.quotes(&m);
            st.step(&m, $prefix_xor(q), esc);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [b' '; 64];
            for (to, from) in last.iter_mut().zip(rest) {
                *to = *from;
            }
            let m = $masks(&last);
            let (q, esc) = st.quotes(&m);
            st.step(&m, $prefix_xor(q), esc);
        }
        st.finish()
    }};
}

/// Counts the values of `body` (see `Counts`), or says why it is not balanced JSON.
pub fn count(body: &[u8]) -> Result<Counts, ScanError> {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 and PCLMULQDQ (checked just above).
        return unsafe { avx2::count(body) };
    }
    count_baseline(body)
}

/// `count` with the baseline instruction set (SSE2 on x86_64).
pub fn count_baseline(body: &[u8]) -> Result<Counts, ScanError> {
    scan_blocks!(body, masks, prefix_xor)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Counts, Masks, ScanError, State};
    use std::arch::x86_64::{
        __m256i, _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_set1_epi8,
        _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };
    use std::sync::OnceLock;

    pub(super) fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("pclmulqdq")
        })
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn eq(x: __m256i, c: u8) -> u64 {
        u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_set1_epi8(c as i8))) as u32)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn masks(block: &[u8; 64]) -> Masks {
        // SAFETY: two unaligned 32-byte loads of the two halves of a 64-byte array.
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(block.as_ptr().add(32).cast::<__m256i>()),
            )
        };
        let fold = _mm256_set1_epi8(0x20);
        let (flo, fhi) = (_mm256_or_si256(lo, fold), _mm256_or_si256(hi, fold));
        Masks {
            quote: eq(lo, b'"') | eq(hi, b'"') << 32,
            backslash: eq(lo, b'\\') | eq(hi, b'\\') << 32,
            open: eq(flo, b'{') | eq(fhi, b'{') << 32,
            close: eq(flo, b'}') | eq(fhi, b'}') << 32,
            comma: eq(lo, b',') | eq(hi, b',') << 32,
        }
    }

    /// Prefix XOR as one carry-less multiplication by all ones.
    #[target_feature(enable = "pclmulqdq")]
    #[inline]
    fn prefix_xor(x: u64) -> u64 {
        let v = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
        _mm_cvtsi128_si64(v) as u64
    }

    #[target_feature(enable = "avx2,pclmulqdq")]
    pub(super) fn count(body: &[u8]) -> Result<Counts, ScanError> {
        scan_blocks!(body, masks, prefix_xor)
    }
}

/// The same as `count`, one byte at a time: the reference for tests.
pub fn count_scalar(body: &[u8]) -> Result<Counts, ScanError> {
    let mut c = Counts::default();
    let (mut in_str, mut esc, mut depth, mut underflow) = (false, false, 0u64, false);
    for &b in body {
        if esc {
            esc = false;
            continue;
        }
        if b == b'\\' {
            // Outside a string a backslash is invalid JSON; like the block version, let it
            // escape the next byte there too.
            esc = true;
            continue;
        }
        if in_str {
            in_str = b != b'"';
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                if depth == 0 {
                    c.top_values += 1;
                }
                depth += 1;
            }
            b'}' | b']' => {
                if depth == 0 {
                    underflow = true;
                } else {
                    depth -= 1;
                }
            }
            b',' if depth == 1 => c.depth1_commas += 1,
            _ => {}
        }
    }
    if in_str {
        return Err(ScanError::UnterminatedString);
    }
    if underflow || depth != 0 {
        return Err(ScanError::Unbalanced);
    }
    Ok(c)
}

/// The number of elements of a body that is one JSON array (`None` when it is not).
pub fn array_len(body: &[u8]) -> Result<Option<u64>, ScanError> {
    let trimmed = body.trim_ascii();
    if trimmed.first() != Some(&b'[') {
        return Ok(None);
    }
    let c = count(trimmed)?;
    if c.top_values != 1 || trimmed.last() != Some(&b']') {
        return Ok(None);
    }
    let inner = trimmed
        .strip_prefix(b"[")
        .and_then(|t| t.strip_suffix(b"]"))
        .unwrap_or_default()
        .trim_ascii();
    Ok(Some(if inner.is_empty() {
        0
    } else {
        c.depth1_commas + 1
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(s: &[u8]) -> Result<Counts, ScanError> {
        let a = count(s);
        let b = count_scalar(s);
        assert_eq!(count_baseline(s), b, "baseline differs");
        assert_eq!(
            a,
            b,
            "block and scalar differ on {:?}",
            String::from_utf8_lossy(s)
        );
        a
    }

    #[test]
    fn arrays_and_objects() {
        assert_eq!(array_len(b"[]"), Ok(Some(0)));
        assert_eq!(array_len(b" [ \n ] "), Ok(Some(0)));
        assert_eq!(array_len(b"[{}]"), Ok(Some(1)));
        assert_eq!(
            array_len(br#"[{"a":[1,2,3],"b":{"c":","}},{"d":"]"}, 7]"#),
            Ok(Some(3))
        );
        assert_eq!(array_len(br#"{"a":1}"#), Ok(None));
        assert_eq!(array_len(b"[1][2]"), Ok(None));
        assert_eq!(array_len(b"[1,"), Err(ScanError::Unbalanced));
        let c = both(b"{\"a\":1}\n{\"b\":[1,2]}\n\n{\"c\":\"}\"}").unwrap();
        assert_eq!(c.top_values, 3);
    }

    #[test]
    fn escapes_inside_strings() {
        let c = both(br#"[{"a":"x\"],[{\\"},{"b":"\\\\"},{"c":"\\\"{"}]"#).unwrap();
        assert_eq!(c.depth1_commas + 1, 3);
        assert_eq!(both(br#"["\"]"#), Err(ScanError::UnterminatedString));
        assert_eq!(both(b"]["), Err(ScanError::Unbalanced));
    }

    #[test]
    fn block_boundaries() {
        // Strings, escapes and brackets placed across every offset of a 64-byte block.
        for pad in 0..130 {
            let mut s = vec![b' '; pad];
            s.extend_from_slice(br#"[{"k":"a\\\"b,]"},{"k":"\\"},["x",{"y":"\"\\"}]]"#);
            let c = both(&s).unwrap();
            assert_eq!(c.depth1_commas, 2, "pad {pad}");
            let mut long = vec![b'['];
            long.extend(std::iter::repeat_n(b'\\', pad));
            long.extend_from_slice(b"\"]");
            let _ = both(&long);
        }
    }

    #[test]
    fn random_inputs_agree_with_the_scalar_reference() {
        let alphabet = b"{}[],\"\\\\ax:";
        for buf in crate::testutil::random_strings(0x9e37_79b9_7f4a_7c15, alphabet, 300, 20_000) {
            let _ = both(&buf);
        }
    }
}
