//! The report's latency histograms in HdrHistogram's interchange form: the V2 binary format,
//! DEFLATE-compressed (zlib wrapper, cookie `0x1c849304`) and base64 — the same payload the
//! HdrHistogram log carries after its timestamps, readable by every HdrHistogram port.
//!
//! A histogram decoded from a report has the configuration it was recorded with (lowest
//! discernible value, highest trackable value, significant digits: all in the header), so
//! adding two decoded histograms of the same configuration adds count to count at every
//! index: merging reports this way is exact, where averaging their percentiles is not.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Reusable state for encoding many histograms (the HDR log writes two a second).
#[derive(Default)]
pub struct Encoder {
    serializer: V2DeflateSerializer,
    bytes: Vec<u8>,
}

impl Encoder {
    /// Appends `h` to `out`, compressed and base64-encoded (the text starts `HISTF`).
    pub fn encode_into(&mut self, h: &Histogram<u64>, out: &mut String) -> Result<(), String> {
        self.bytes.clear();
        self.serializer
            .serialize(h, &mut self.bytes)
            .map_err(|e| format!("cannot serialise the histogram: {e}"))?;
        STANDARD.encode_string(&self.bytes, out);
        Ok(())
    }
}

/// `h` as V2 + DEFLATE + base64.
pub fn encode(h: &Histogram<u64>) -> Result<String, String> {
    let mut out = String::new();
    Encoder::default().encode_into(h, &mut out)?;
    Ok(out)
}

/// The most base64 text a report's histogram may be: one of the run's configuration
/// (`stats::new_histogram`, about 17,000 counts) is a few KB, 157 KB at the very worst.
pub const MAX_ENCODED_BYTES: usize = 1 << 20;
/// Most a recorded count (one bucket's, or the whole histogram's) may be: 2^53, the largest
/// integer a JSON reader holds exactly; a run records far fewer.
pub const MAX_COUNT: u64 = 1 << 53;

/// The cookies with the word size bits (0x10) HdrHistogram sets.
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// cookie, payload length, normalizing offset, significant digits, lowest, highest, ratio.
const V2_HEADER_BYTES: usize = 40;

/// Reads back what `encode` wrote (or any HdrHistogram V2 payload, compressed or not, in
/// base64); surrounding whitespace is ignored. Only a histogram of the run's configuration
/// (`stats::new_histogram`: its lowest and highest trackable values, its significant digits)
/// is read, so the header of a saved report cannot make this allocate more than that one
/// histogram: the text, the inflated payload and every count are checked before the
/// histogram is built.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let text = text.trim();
    if text.len() > MAX_ENCODED_BYTES {
        return Err(format!(
            "{} bytes of base64, over the {MAX_ENCODED_BYTES}-byte limit of a histogram",
            text.len()
        ));
    }
    let bytes = STANDARD
        .decode(text)
        .map_err(|e| format!("not base64: {e}"))?;
    let want = crate::stats::new_histogram();
    let payload = v2_payload(&bytes, want.distinct_values())?;
    check_header(&payload, &want)?;
    check_counts(
        payload.get(V2_HEADER_BYTES..).unwrap_or_default(),
        want.distinct_values(),
    )?;
    Deserializer::new()
        .deserialize(&mut payload.as_slice())
        .map_err(|e| format!("not an HdrHistogram V2 payload: {e}"))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)?.try_into().ok().map(u32::from_be_bytes)
}

fn be64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8)?.try_into().ok().map(u64::from_be_bytes)
}

/// The uncompressed V2 bytes (header and counts), inflated when compressed, never more than
/// a histogram of `counts` counts can take.
fn v2_payload(bytes: &[u8], counts: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    // Each count takes at most 9 bytes of LEB128.
    let cap = V2_HEADER_BYTES + counts * 9;
    match be32(bytes, 0) {
        Some(V2_COOKIE) => Ok(bytes.to_vec()),
        Some(V2_COMPRESSED_COOKIE) => {
            let len = be32(bytes, 4).ok_or("a compressed payload without its length")? as usize;
            let zlib = bytes
                .get(8..8 + len)
                .ok_or("the compressed payload is shorter than its header says")?;
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(zlib)
                .take(cap as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("the compressed payload does not inflate: {e}"))?;
            if out.len() > cap {
                return Err(format!(
                    "the payload inflates beyond the {cap} bytes a run's histogram can take"
                ));
            }
            Ok(out)
        }
        _ => Err("not an HdrHistogram V2 payload (no V2 cookie)".into()),
    }
}

/// The header says the run's configuration and a payload length that is the rest.
fn check_header(p: &[u8], want: &Histogram<u64>) -> Result<(), String> {
    let short = || "the payload is shorter than a V2 header".to_string();
    if be32(p, 0) != Some(V2_COOKIE) {
        return Err("the inflated payload has no V2 cookie".into());
    }
    let len = be32(p, 4).ok_or_else(short)? as usize;
    let digits = be32(p, 12).ok_or_else(short)?;
    let (low, high) = (
        be64(p, 16).ok_or_else(short)?,
        be64(p, 24).ok_or_else(short)?,
    );
    if len != p.len().saturating_sub(V2_HEADER_BYTES) {
        return Err(format!(
            "the header says {len} bytes of counts; {} follow it",
            p.len().saturating_sub(V2_HEADER_BYTES)
        ));
    }
    if (low, high, digits) != (want.low(), want.high(), u32::from(want.sigfig())) {
        return Err(format!(
            "recorded with values {low}..{high} at {digits} significant digits; a run's \
             histograms are {}..{} at {}",
            want.low(),
            want.high(),
            want.sigfig()
        ));
    }
    Ok(())
}

/// Walks the counts as the V2 decoder will (LEB128-64b9B, zig-zag; a negative number is a
/// run of zeros): every index within the histogram's `len` counts, every count and their
/// sum at most `MAX_COUNT`.
fn check_counts(mut b: &[u8], len: usize) -> Result<(), String> {
    let (mut index, mut total) = (0u64, 0u64);
    while !b.is_empty() {
        let mut v = 0u64;
        let mut used = 0;
        for (i, &byte) in b.iter().take(9).enumerate() {
            used = i + 1;
            if i == 8 {
                v |= u64::from(byte) << 56;
                break;
            }
            v |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                break;
            }
        }
        b = b.get(used..).unwrap_or_default();
        let n = ((v >> 1) as i64) ^ -((v & 1) as i64);
        if n < 0 {
            index = index.saturating_add(n.unsigned_abs());
        } else {
            let c = n.unsigned_abs();
            total = total.saturating_add(c);
            if c > 0 && index >= len as u64 {
                return Err(format!("a count beyond the histogram's {len} buckets"));
            }
            index = index.saturating_add(1);
        }
        if index > len as u64 {
            return Err(format!("counts beyond the histogram's {len} buckets"));
        }
        if total > MAX_COUNT {
            return Err(format!("more than {MAX_COUNT} values recorded"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    fn recorded(values: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    /// Values spread over the whole range, some repeated.
    fn samples(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                1 + (x % 1000) * (1 + x % 997) * (1 + (x >> 20) % 50)
            })
            .map(|v| v.min(crate::stats::MAX_LATENCY_US))
            .collect()
    }

    fn assert_same(a: &Histogram<u64>, b: &Histogram<u64>) {
        assert_eq!(a.len(), b.len());
        assert_eq!(a.max(), b.max());
        assert_eq!(a.min(), b.min());
        for v in a.iter_recorded() {
            let value = v.value_iterated_to();
            assert_eq!(a.count_at(value), b.count_at(value), "count at {value}");
        }
        assert_eq!(
            a.iter_recorded().count(),
            b.iter_recorded().count(),
            "recorded values"
        );
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(a.value_at_quantile(q), b.value_at_quantile(q), "q {q}");
        }
    }

    #[test]
    fn encode_then_decode_keeps_every_count() {
        let h = recorded(&samples(1, 20_000));
        let text = encode(&h).unwrap();
        assert!(text.starts_with("HISTF"), "{}", &text[..10]);
        let back = decode(&text).unwrap();
        assert_same(&h, &back);
        assert_eq!(back.sigfig(), h.sigfig());
        assert_eq!(back.high(), h.high());
        assert_eq!(back.low(), h.low());
    }

    #[test]
    fn empty_histogram_round_trips() {
        let back = decode(&encode(&new_histogram()).unwrap()).unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn two_reports_decoded_and_added_equal_both_sample_sets_in_one() {
        let (a, b) = (samples(2, 5_000), samples(3, 7_000));
        let mut merged = decode(&encode(&recorded(&a)).unwrap()).unwrap();
        merged
            .add(decode(&encode(&recorded(&b)).unwrap()).unwrap())
            .unwrap();
        let both: Vec<u64> = a.iter().chain(&b).copied().collect();
        let one = recorded(&both);
        assert_eq!(merged.len(), 12_000);
        assert_same(&one, &merged);
    }

    /// A V2 payload with this header (and these count bytes), compressed and in base64.
    fn forged(low: u64, high: u64, digits: u32, len: Option<u32>, counts: &[u8]) -> String {
        use std::io::Write;
        let mut p = Vec::new();
        p.extend(V2_COOKIE.to_be_bytes());
        p.extend(len.unwrap_or(counts.len() as u32).to_be_bytes());
        p.extend(0u32.to_be_bytes());
        p.extend(digits.to_be_bytes());
        p.extend(low.to_be_bytes());
        p.extend(high.to_be_bytes());
        p.extend(1.0f64.to_be_bytes());
        p.extend(counts);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&p).unwrap();
        let z = z.finish().unwrap();
        let mut out = Vec::new();
        out.extend(V2_COMPRESSED_COOKIE.to_be_bytes());
        out.extend((z.len() as u32).to_be_bytes());
        out.extend(z);
        STANDARD.encode(out)
    }

    #[test]
    fn a_forged_header_allocates_nothing_and_is_refused() {
        // 1..2^62 at 5 digits would be a histogram of ~10^8 counts (a GB): refused from the
        // header, before anything is built.
        let e = decode(&forged(1, 1 << 62, 5, None, &[])).unwrap_err();
        assert!(e.contains("a run's histograms are 1..60000000 at 3"), "{e}");
        // A payload length of 4 GB with nothing behind it.
        let e = decode(&forged(1, 60_000_000, 3, Some(u32::MAX), &[])).unwrap_err();
        assert!(e.contains("the header says 4294967295 bytes"), "{e}");
        // 100 MB of zeros compress to a few KB: inflating stops at what a histogram takes.
        let e = decode(&forged(1, 60_000_000, 3, None, &vec![0u8; 100 << 20])).unwrap_err();
        assert!(e.contains("inflates beyond"), "{e}");
        // i64::MIN zig-zagged (a zero run the decoder cannot negate), a count of 2^62.
        let min = [0xff; 9];
        let e = decode(&forged(1, 60_000_000, 3, None, &min)).unwrap_err();
        assert!(e.contains("beyond the histogram"), "{e}");
        let mut big = vec![0x80u8; 8];
        big.push(0x80); // 2^63 zig-zagged: the count 2^62.
        let e = decode(&forged(1, 60_000_000, 3, None, &big)).unwrap_err();
        assert!(e.contains("more than 9007199254740992 values"), "{e}");
        // A zero run past the end, then a count.
        let e = decode(&forged(1, 60_000_000, 3, None, &[0xff, 0xff, 0x07, 0x02])).unwrap_err();
        assert!(e.contains("beyond the histogram"), "{e}");
        assert!(decode(&"A".repeat(MAX_ENCODED_BYTES + 4)).is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode("not base64 !").is_err());
        assert!(decode("aGVsbG8gd29ybGQ=").is_err());
        assert!(decode("").is_err());
    }
}
