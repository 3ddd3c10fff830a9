//! Time arithmetic that cannot panic: seconds held as `f64` (the pacer's, the schedule's)
//! turned into a `Duration`, and an `Instant` moved on by a `Duration`. `Duration::from_secs_f64`
//! panics on a negative, NaN or too large value and `Instant + Duration` panics past what the
//! clock can hold; a rate of 1e-19 events or requests a second makes both. Here a value no
//! clock can hold saturates instead: to zero below, to `FAR` (a century: never, for a run)
//! above. Every duration computed from input goes through these.

use std::time::{Duration, Instant};

/// "Never" for a run: later than any run ends, small enough for every clock to add.
pub const FAR: Duration = Duration::from_secs(100 * 365 * 86_400);

/// `s` seconds as a `Duration`: zero for a negative or NaN value, at most `FAR`.
pub fn secs(s: f64) -> Duration {
    if s.is_nan() || s <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(s).map_or(FAR, |d| d.min(FAR))
}

/// `t + d`, or as late as the clock can go on from `t` (`FAR`, else `t` itself) when `d` is
/// beyond it.
pub fn later(t: Instant, d: Duration) -> Instant {
    t.checked_add(d).or_else(|| t.checked_add(FAR)).unwrap_or(t)
}

/// `t + s` seconds, saturating as `secs` and `later` do.
pub fn at(t: Instant, s: f64) -> Instant {
    later(t, secs(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extreme_values_saturate_instead_of_panicking() {
        assert_eq!(secs(-1.0), Duration::ZERO);
        assert_eq!(secs(f64::NAN), Duration::ZERO);
        assert_eq!(secs(f64::INFINITY), FAR);
        assert_eq!(secs(1e20), FAR);
        assert_eq!(secs(1.5), Duration::from_millis(1500));
        let now = Instant::now();
        assert_eq!(later(now, Duration::MAX), now + FAR);
        assert_eq!(at(now, 1e19), now + FAR);
        assert_eq!(at(now, 2.0), now + Duration::from_secs(2));
    }
}
