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

/// Reads back what `encode` wrote (or any HdrHistogram V2 payload, compressed or not, in
/// base64); surrounding whitespace is ignored.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("not an HdrHistogram V2 payload: {e}"))
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

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode("not base64 !").is_err());
        assert!(decode("aGVsbG8gd29ybGQ=").is_err());
        assert!(decode("").is_err());
    }
}
