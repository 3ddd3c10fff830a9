//! Event times: which instant event i is stamped with. Realtime events take the clock; fixed
//! timelines (deterministic runs, `gen --anchor`) step from an anchor; a backfill spreads a
//! known number of events over a span in the past, optionally weighted toward business hours
//! (weekdays 08:00–18:00 UTC) so a SIEM's dashboards look like a working week. A pure function
//! of (i, now): the same index gives the same time on any thread.

use crate::generate::time::{NS_PER_SEC, UnixNs, weekday};

const NS_PER_HOUR: i64 = 3600 * NS_PER_SEC;

#[derive(Clone, Debug)]
pub enum Timeline {
    /// The caller's clock.
    Realtime,
    /// `start + i * step`.
    Fixed { start: UnixNs, step: i64 },
    /// `total` events spread over `[start, start + span)`.
    Backfill {
        start: UnixNs,
        span: i64,
        total: u64,
        /// Cumulative weight at the end of each hour of the span (business hours), or empty
        /// for an even spread.
        cumulative: Vec<u64>,
    },
}

/// Relative activity for an hour of the week (UTC): busy weekday office hours, a shoulder
/// around them, quiet nights and weekends.
pub fn business_weight(day_of_week: u32, hour: u32) -> u64 {
    let weekend = day_of_week >= 5;
    match (weekend, hour) {
        (false, 8..=17) => 20,
        (false, 7 | 18) => 10,
        (false, 19..=21) => 5,
        (true, 9..=18) => 3,
        _ => 1,
    }
}

impl Timeline {
    /// A backfill of `total` events over `span` ns from `start`.
    pub fn backfill(start: UnixNs, span: i64, total: u64, business_hours: bool) -> Timeline {
        let cumulative = if business_hours {
            let hours = (span + NS_PER_HOUR - 1) / NS_PER_HOUR;
            let mut acc = 0u64;
            (0..hours.max(1))
                .map(|h| {
                    let t = start + h * NS_PER_HOUR;
                    let days = t.div_euclid(86_400 * NS_PER_SEC);
                    let hour = (t.rem_euclid(86_400 * NS_PER_SEC) / NS_PER_HOUR) as u32;
                    acc += business_weight(weekday(days), hour);
                    acc
                })
                .collect()
        } else {
            Vec::new()
        };
        Timeline::Backfill {
            start,
            span: span.max(1),
            total: total.max(1),
            cumulative,
        }
    }

    /// The time of event `i`; `now` is used only by `Realtime`.
    #[inline]
    #[allow(
        clippy::indexing_slicing,
        reason = "per-event hot path; cumulative is not empty here and h is clamped to \
                  cumulative.len() - 1, h - 1 taken only for h > 0"
    )]
    pub fn time_of(&self, i: u64, now: UnixNs) -> UnixNs {
        match self {
            Timeline::Realtime => now,
            Timeline::Fixed { start, step } => {
                start.saturating_add((i as i64).saturating_mul(*step))
            }
            Timeline::Backfill {
                start,
                span,
                total,
                cumulative,
            } => {
                let i = i.min(total - 1);
                if cumulative.is_empty() {
                    let off = (i128::from(i) * i128::from(*span) / i128::from(*total)) as i64;
                    return start + off;
                }
                // Place event i at quantile i/total of the weighted hours.
                let whole = *cumulative.last().unwrap_or(&1);
                let w = (u128::from(i) * u128::from(whole) / u128::from(*total)) as u64;
                let h = cumulative.partition_point(|c| *c <= w);
                let h = h.min(cumulative.len() - 1);
                let before = if h == 0 { 0 } else { cumulative[h - 1] };
                let in_hour = cumulative[h] - before;
                let frac =
                    (w - before) as i128 * i128::from(NS_PER_HOUR) / i128::from(in_hour.max(1));
                (start + h as i64 * NS_PER_HOUR + frac as i64).min(start + span - 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::time::{days_from_civil, parse_rfc3339};

    #[test]
    fn fixed_and_even_backfill() {
        let t = Timeline::Fixed {
            start: 1000,
            step: 10,
        };
        assert_eq!(t.time_of(3, 0), 1030);
        let b = Timeline::backfill(0, 1000, 10, false);
        let times: Vec<i64> = (0..10).map(|i| b.time_of(i, 0)).collect();
        assert_eq!(times, vec![0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
        assert_eq!(
            b.time_of(99, 0),
            900,
            "indices past the total stay in the span"
        );
    }

    #[test]
    fn business_hours_concentrate_on_weekdays() {
        // Monday 2026-01-05 00:00 UTC, two weeks.
        let start = parse_rfc3339("2026-01-05T00:00:00Z").unwrap();
        assert_eq!(weekday(days_from_civil(2026, 1, 5)), 0);
        let span = 14 * 86_400 * NS_PER_SEC;
        let total = 100_000;
        let b = Timeline::backfill(start, span, total, true);
        let mut office = 0;
        let mut weekend = 0;
        let mut last = i64::MIN;
        for i in 0..total {
            let t = b.time_of(i, 0);
            assert!(t >= last, "times must not go backwards");
            assert!(t >= start && t < start + span);
            last = t;
            let days = t.div_euclid(86_400 * NS_PER_SEC);
            let hour = (t.rem_euclid(86_400 * NS_PER_SEC) / NS_PER_HOUR) as u32;
            let wd = weekday(days);
            if wd < 5 && (8..18).contains(&hour) {
                office += 1;
            }
            if wd >= 5 {
                weekend += 1;
            }
        }
        // Office hours are 10/168 of the week's hours per weekday but should carry most events.
        assert!(office as f64 / total as f64 > 0.6, "office share {office}");
        assert!(
            (weekend as f64 / total as f64) < 0.15,
            "weekend share {weekend}"
        );
    }
}
