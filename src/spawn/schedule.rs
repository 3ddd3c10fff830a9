//! The open-loop spawn schedule as a pure function of time: spawn k is due at
//! `t0 + k / rate`, whatever happened to spawn k − 1. `count` spawns are due in the window
//! `[0, duration)`, the same number edr-loadgen calls "events expected" (`duration / delay`,
//! truncated). Nothing here reads a clock.

use std::time::Duration;

/// Spawns due at a fixed rate over a window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Spawns per second.
    pub rate_per_s: f64,
    /// How many spawns are due: those with a due time inside `[0, duration)`.
    pub count: u64,
}

impl Schedule {
    /// The schedule for `rate_per_s` over `duration`. The caller has checked the rate is
    /// finite and positive.
    pub fn new(rate_per_s: f64, duration: Duration) -> Schedule {
        // Rounded to 1e-9 so 200/s for 3 s is 600, not 599.999… truncated.
        let exact = rate_per_s * duration.as_secs_f64();
        let count = (exact + 1e-9).floor().max(0.0) as u64;
        Schedule { rate_per_s, count }
    }

    /// The time between two spawns.
    pub fn period(&self) -> Duration {
        crate::clock::secs(1.0 / self.rate_per_s)
    }

    /// When spawn `k` (from 0) is due, from the start of the window.
    pub fn due(&self, k: u64) -> Duration {
        Duration::from_nanos((k as f64 * 1e9 / self.rate_per_s).round() as u64)
    }

    /// How many spawns are due by `elapsed` (those with `due(k) <= elapsed`), at most `count`.
    pub fn due_by(&self, elapsed: Duration) -> u64 {
        let n = (elapsed.as_secs_f64() * self.rate_per_s + 1e-9).floor() as u64 + 1;
        n.min(self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_edr_loadgens_events_expected() {
        // (rate, duration s, count): duration / delay, truncated.
        for (rate, secs, count) in [
            (200.0, 3.0, 600),
            (1000.0, 10.0, 10_000),
            (200.0, 30.0, 6000),
            (3.0, 1.0, 3),
            (0.5, 3.0, 1),
            (333.0, 0.1, 33),
        ] {
            let s = Schedule::new(rate, Duration::from_secs_f64(secs));
            assert_eq!(s.count, count, "{rate}/s for {secs} s");
        }
    }

    #[test]
    fn due_times_are_k_over_rate() {
        let s = Schedule::new(200.0, Duration::from_secs(3));
        assert_eq!(s.due(0), Duration::ZERO);
        assert_eq!(s.due(1), Duration::from_millis(5));
        assert_eq!(s.due(599), Duration::from_millis(2995));
        assert_eq!(s.period(), Duration::from_millis(5));
        let t = Schedule::new(3.0, Duration::from_secs(1));
        assert_eq!(t.due(1), Duration::from_nanos(333_333_333));
        assert_eq!(t.due(2), Duration::from_nanos(666_666_667));
    }

    #[test]
    fn due_by_is_the_inverse_and_capped() {
        let s = Schedule::new(200.0, Duration::from_secs(3));
        assert_eq!(s.due_by(Duration::ZERO), 1);
        assert_eq!(s.due_by(Duration::from_micros(4999)), 1);
        assert_eq!(s.due_by(Duration::from_millis(5)), 2);
        assert_eq!(s.due_by(Duration::from_secs(60)), 600);
        for k in [0, 1, 17, 599] {
            assert_eq!(s.due_by(s.due(k)), k + 1);
        }
    }
}
