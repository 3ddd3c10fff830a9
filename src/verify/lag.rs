//! Ingest lag: how long after an event's own time a store recorded its arrival, where the store
//! keeps both (OpenSearch: an ingest timestamp field minus the event time field; Splunk:
//! `_indextime - _time`). `LagRecorder` takes one lag per event measured, in milliseconds, into
//! an HDR histogram (3 significant digits, bounded memory whatever the count); `IngestLag` is
//! its summary in a `SourceResult`. A negative lag (the event's time after its arrival: clocks
//! apart, or an event dated ahead) counts as 0 in the distribution and is counted apart.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Longest lag told apart (ten years, in ms); a longer one is recorded as this.
pub const MAX_LAG_MS: u64 = 10 * 365 * 86_400_000;

/// The distribution of one store's ingest lag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngestLag {
    /// What was measured, e.g. `event.ingested - @timestamp`.
    pub measure: String,
    /// Events measured (those with both times).
    pub count: u64,
    pub p50_ms: u64,
    pub p99_ms: u64,
    pub max_ms: u64,
    /// Lags below zero, counted as 0 above.
    pub negative: u64,
    /// The coarsest step of the store's times (Splunk's `_indextime` is whole seconds).
    pub resolution_ms: u64,
}

/// Lags of one store, as they are read.
pub struct LagRecorder {
    hist: Option<Histogram<u64>>,
    negative: u64,
    measure: String,
    resolution_ms: u64,
}

impl LagRecorder {
    pub fn new(measure: String, resolution_ms: u64) -> LagRecorder {
        LagRecorder {
            hist: Histogram::new_with_bounds(1, MAX_LAG_MS, 3).ok(),
            negative: 0,
            measure,
            resolution_ms,
        }
    }

    /// Records one lag in milliseconds; non-finite values are skipped.
    pub fn record_ms(&mut self, lag_ms: f64) {
        if !lag_ms.is_finite() {
            return;
        }
        let v = if lag_ms < 0.0 {
            self.negative += 1;
            0
        } else {
            (lag_ms.round().min(MAX_LAG_MS as f64)) as u64
        };
        if let Some(h) = self.hist.as_mut() {
            h.saturating_record(v);
        }
    }

    /// The summary, or `None` when no event was measured.
    pub fn finish(&self) -> Option<IngestLag> {
        let h = self.hist.as_ref()?;
        if h.is_empty() {
            return None;
        }
        Some(IngestLag {
            measure: self.measure.clone(),
            count: h.len(),
            p50_ms: h.value_at_quantile(0.5),
            p99_ms: h.value_at_quantile(0.99),
            max_ms: h.max(),
            negative: self.negative,
            resolution_ms: self.resolution_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_negatives_and_nothing() {
        let mut r = LagRecorder::new("a - b".into(), 1);
        assert_eq!(r.finish(), None);
        for ms in 1..=100 {
            r.record_ms(ms as f64);
        }
        r.record_ms(-5.0);
        r.record_ms(f64::NAN);
        r.record_ms(f64::INFINITY);
        let l = r.finish().unwrap();
        assert_eq!(l.count, 101);
        assert_eq!(l.negative, 1);
        assert_eq!((l.p50_ms, l.p99_ms, l.max_ms), (50, 99, 100));
        assert_eq!(l.measure, "a - b");
    }

    #[test]
    fn huge_lags_do_not_panic() {
        let mut r = LagRecorder::new("x".into(), 1000);
        r.record_ms(1e300);
        r.record_ms(3_600_000.0);
        let l = r.finish().unwrap();
        assert_eq!(l.count, 2);
        assert!(l.max_ms >= MAX_LAG_MS && l.max_ms < MAX_LAG_MS + MAX_LAG_MS / 500);
        assert!(
            l.p50_ms >= 3_600_000 && l.p50_ms < 3_610_000,
            "{}",
            l.p50_ms
        );
    }
}
