//! Ingest lag: how long after an event was sent a store recorded its arrival, where the store
//! keeps its arrival time. The start is the accounting tag's `sent` (the batch's intended send
//! time, realtime runs) where the event carries it, else the event's own time (wrong for
//! backfilled events, whose times are in the past): OpenSearch an ingest timestamp field minus
//! the sent field or the event time field; Splunk `_indextime` minus either. `LagRecorder`
//! takes one lag per event measured, in milliseconds, into an HDR histogram (3 significant
//! digits, bounded memory whatever the count); `SentLag` wraps it for the two starts, counting
//! each, so the summary names the measure used (both, and a note, when events differed).
//! `IngestLag` is the summary in a `SourceResult`. A negative lag (the start after the arrival:
//! clocks apart, or an event dated ahead) counts as 0 in the distribution and is counted apart.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Longest lag told apart (ten years, in ms); a longer one is recorded as this.
pub const MAX_LAG_MS: u64 = 10 * 365 * 86_400_000;

/// The distribution of one store's ingest lag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct IngestLag {
    /// What was measured, e.g. `event.ingested - ingestbench.sent` (both measures, joined by
    /// `, else `, when some events had `sent` and some did not).
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

    /// Records one lag in milliseconds; non-finite values are skipped (false).
    pub fn record_ms(&mut self, lag_ms: f64) -> bool {
        if !lag_ms.is_finite() {
            return false;
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
        true
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

/// Where one event's lag starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// The tag's `sent`.
    Sent,
    /// The event's own time (no `sent` in its tag).
    EventTime,
}

/// Lags from the tag's `sent` where events have it, else from their own time: one
/// distribution, each start counted.
pub struct SentLag {
    rec: LagRecorder,
    sent_measure: String,
    time_measure: String,
    by_sent: u64,
    by_time: u64,
}

impl SentLag {
    /// `sent_measure` and `time_measure` name the two, e.g. `_indextime - ingestbench.sent`
    /// and `_indextime - _time`.
    pub fn new(sent_measure: String, time_measure: String, resolution_ms: u64) -> SentLag {
        SentLag {
            rec: LagRecorder::new(String::new(), resolution_ms),
            sent_measure,
            time_measure,
            by_sent: 0,
            by_time: 0,
        }
    }

    /// Records one lag in milliseconds from `start`; non-finite values are skipped.
    pub fn record_ms(&mut self, lag_ms: f64, start: Start) {
        if self.rec.record_ms(lag_ms) {
            match start {
                Start::Sent => self.by_sent += 1,
                Start::EventTime => self.by_time += 1,
            }
        }
    }

    /// The measure used: one of the two, or both when events differed.
    pub fn measure(&self) -> String {
        match (self.by_sent, self.by_time) {
            (_, 0) => self.sent_measure.clone(),
            (0, _) => self.time_measure.clone(),
            _ => format!("{}, else {}", self.sent_measure, self.time_measure),
        }
    }

    /// A note counting each measure, when both were used.
    pub fn note(&self) -> Option<String> {
        (self.by_sent > 0 && self.by_time > 0).then(|| {
            format!(
                "ingest lag: {} events measured as {}, {} whose tags carry no send time as {}",
                self.by_sent, self.sent_measure, self.by_time, self.time_measure
            )
        })
    }

    /// The summary under `measure()`, or `None` when no event was measured.
    pub fn finish(&self) -> Option<IngestLag> {
        let l = self.rec.finish()?;
        Some(IngestLag {
            measure: self.measure(),
            ..l
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

    #[test]
    fn sent_lag_names_the_measures_used_and_counts_each() {
        let mut only_sent = SentLag::new("a - sent".into(), "a - time".into(), 1);
        assert_eq!(only_sent.finish(), None);
        only_sent.record_ms(10.0, Start::Sent);
        only_sent.record_ms(f64::NAN, Start::EventTime);
        let l = only_sent.finish().unwrap();
        assert_eq!((l.measure.as_str(), l.count), ("a - sent", 1));
        assert_eq!(only_sent.note(), None);

        let mut only_time = SentLag::new("a - sent".into(), "a - time".into(), 1000);
        only_time.record_ms(-3.0, Start::EventTime);
        only_time.record_ms(f64::INFINITY, Start::Sent);
        let l = only_time.finish().unwrap();
        assert_eq!(
            (l.measure.as_str(), l.count, l.negative, l.resolution_ms),
            ("a - time", 1, 1, 1000)
        );
        assert_eq!(only_time.note(), None);

        let mut both = SentLag::new("a - sent".into(), "a - time".into(), 1);
        for ms in [100.0, 200.0, 300.0] {
            both.record_ms(ms, Start::Sent);
        }
        both.record_ms(1_500.0, Start::EventTime);
        let l = both.finish().unwrap();
        assert_eq!(l.measure, "a - sent, else a - time");
        assert_eq!((l.count, l.p50_ms, l.max_ms), (4, 200, 1_500));
        assert_eq!(
            both.note().unwrap(),
            "ingest lag: 3 events measured as a - sent, 1 whose tags carry no send time as \
             a - time"
        );
    }
}
