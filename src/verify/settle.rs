//! Settling: a store may still be taking events in when verification starts (a collector's
//! queue draining, an index refreshing). `settle` polls a cheap progress figure every `poll`
//! until it stops growing (two polls in a row equal) or `timeout` has passed, and reports the
//! drain time: how long the figure kept growing after the first poll.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::VerifyError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Settled {
    /// Time from the first poll to the last one that saw growth, milliseconds.
    pub drain_ms: u64,
    /// False when the figure was still growing at the timeout.
    pub settled: bool,
    pub polls: u32,
}

/// Polls `progress` until it is stable; a zero `timeout` polls nothing.
pub fn settle(
    timeout: Duration,
    poll: Duration,
    mut progress: impl FnMut() -> Result<u64, VerifyError>,
) -> Result<Settled, VerifyError> {
    if timeout.is_zero() {
        return Ok(Settled {
            drain_ms: 0,
            settled: true,
            polls: 0,
        });
    }
    let start = Instant::now();
    let mut last = progress()?;
    let mut polls = 1;
    let mut grew_at = start;
    loop {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Ok(Settled {
                drain_ms: grew_at.duration_since(start).as_millis() as u64,
                settled: false,
                polls,
            });
        }
        std::thread::sleep(poll.min(left));
        let now = progress()?;
        polls += 1;
        if now == last {
            return Ok(Settled {
                drain_ms: grew_at.duration_since(start).as_millis() as u64,
                settled: true,
                polls,
            });
        }
        last = now;
        grew_at = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_when_stable_and_at_the_timeout() {
        let mut figures = [1u64, 2, 3, 3].into_iter();
        let s = settle(Duration::from_secs(5), Duration::from_millis(5), || {
            Ok(figures.next().unwrap_or(3))
        })
        .unwrap();
        assert!(s.settled);
        assert_eq!(s.polls, 4);
        let mut n = 0;
        let s = settle(Duration::from_millis(40), Duration::from_millis(5), || {
            n += 1;
            Ok(n)
        })
        .unwrap();
        assert!(!s.settled);
        let s = settle(Duration::ZERO, Duration::from_secs(1), || panic!()).unwrap();
        assert_eq!(s.polls, 0);
    }
}
