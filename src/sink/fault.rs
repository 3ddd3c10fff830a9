//! Fault injection: which share of data requests get a 429 or 503 (with Retry-After), a
//! delayed or stalled response, or a connection reset. Decided per request with a cheap
//! per-thread rng (xorshift64*), so a fault costs no lock and no syscall. A delay is never a
//! sleep: the worker holds the response until a deadline in its poll loop.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The faults to inject. All zero (the default) is a well-behaved collector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Share of data requests answered 429 (0..1).
    pub share_429: f64,
    /// Share of data requests answered 503 (0..1).
    pub share_503: f64,
    /// `Retry-After` seconds sent with 429 and 503.
    pub retry_after_s: u32,
    /// Added to every data response.
    pub latency_ms: u64,
    /// Share of data requests whose response is held a further `stall_ms`.
    pub stall_share: f64,
    pub stall_ms: u64,
    /// Share of data requests answered by resetting the connection (no response).
    pub reset_share: f64,
}

impl Faults {
    /// Checks ranges: every share in 0..=1, the three outcome shares summing to at most 1,
    /// delays at most 10 minutes.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("share_429", self.share_429),
            ("share_503", self.share_503),
            ("stall_share", self.stall_share),
            ("reset_share", self.reset_share),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{name} must be between 0 and 1 (got {v})"));
            }
        }
        if self.share_429 + self.share_503 + self.reset_share > 1.0 + 1e-9 {
            return Err("share_429 + share_503 + reset_share must be at most 1".into());
        }
        if self.retry_after_s > 3600 {
            return Err(format!(
                "retry_after_s must be at most 3600 (an hour), got {}",
                self.retry_after_s
            ));
        }
        for (name, v) in [("latency_ms", self.latency_ms), ("stall_ms", self.stall_ms)] {
            if v > 600_000 {
                return Err(format!("{name} must be at most 600000 (10 minutes)"));
            }
        }
        Ok(())
    }
}

/// What happens to one data request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Handle it normally.
    Serve,
    /// Answer with this status (429 or 503) and Retry-After.
    Refuse(u16),
    /// Close the connection with a reset, answer nothing.
    Reset,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub outcome: Outcome,
    /// Hold the response this long (latency plus any stall).
    pub hold: Duration,
}

/// xorshift64*: a few instructions per draw, good enough to pick shares.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Decides the fate of one data request.
pub fn decide(f: &Faults, rng: &mut Rng) -> Decision {
    let none = f.share_429 <= 0.0
        && f.share_503 <= 0.0
        && f.reset_share <= 0.0
        && f.latency_ms == 0
        && (f.stall_share <= 0.0 || f.stall_ms == 0);
    if none {
        return Decision {
            outcome: Outcome::Serve,
            hold: Duration::ZERO,
        };
    }
    let u = rng.unit();
    let outcome = if u < f.reset_share {
        Outcome::Reset
    } else if u < f.reset_share + f.share_429 {
        Outcome::Refuse(429)
    } else if u < f.reset_share + f.share_429 + f.share_503 {
        Outcome::Refuse(503)
    } else {
        Outcome::Serve
    };
    let mut hold = f.latency_ms;
    if f.stall_share > 0.0 && rng.unit() < f.stall_share {
        hold += f.stall_ms;
    }
    Decision {
        outcome,
        hold: if outcome == Outcome::Reset {
            Duration::ZERO
        } else {
            Duration::from_millis(hold)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_faults_means_serve_now() {
        let mut r = Rng::new(1);
        for _ in 0..1000 {
            assert_eq!(
                decide(&Faults::default(), &mut r),
                Decision {
                    outcome: Outcome::Serve,
                    hold: Duration::ZERO
                }
            );
        }
    }

    #[test]
    fn shares_are_respected() {
        let f = Faults {
            share_429: 0.1,
            share_503: 0.2,
            reset_share: 0.05,
            stall_share: 0.5,
            stall_ms: 100,
            latency_ms: 10,
            retry_after_s: 1,
        };
        let mut r = Rng::new(42);
        let n = 100_000;
        let (mut c429, mut c503, mut reset, mut stalled) = (0, 0, 0, 0);
        for _ in 0..n {
            let d = decide(&f, &mut r);
            match d.outcome {
                Outcome::Refuse(429) => c429 += 1,
                Outcome::Refuse(503) => c503 += 1,
                Outcome::Reset => {
                    reset += 1;
                    assert_eq!(d.hold, Duration::ZERO);
                }
                _ => {}
            }
            if d.hold == Duration::from_millis(110) {
                stalled += 1;
            } else if d.outcome != Outcome::Reset {
                assert_eq!(d.hold, Duration::from_millis(10));
            }
        }
        let near = |got: i32, share: f64| (f64::from(got) / f64::from(n) - share).abs() < 0.01;
        assert!(near(c429, 0.1), "{c429}");
        assert!(near(c503, 0.2), "{c503}");
        assert!(near(reset, 0.05), "{reset}");
        assert!(near(stalled, 0.5 * 0.95), "{stalled}");
    }

    #[test]
    fn validation() {
        assert!(Faults::default().validate().is_ok());
        let bad = Faults {
            share_429: 1.5,
            ..Faults::default()
        };
        assert!(bad.validate().unwrap_err().contains("share_429"));
        let sum = Faults {
            share_429: 0.6,
            share_503: 0.6,
            ..Faults::default()
        };
        assert!(sum.validate().is_err());
        let nan = Faults {
            stall_share: f64::NAN,
            ..Faults::default()
        };
        assert!(nan.validate().is_err());
    }

    #[test]
    fn faults_from_json() {
        let f: Faults = serde_json::from_str(r#"{"share_429":0.5,"retry_after_s":3}"#).unwrap();
        assert_eq!(f.share_429, 0.5);
        assert_eq!(f.retry_after_s, 3);
        assert!(serde_json::from_str::<Faults>(r#"{"share_428":0.5}"#).is_err());
    }
}
