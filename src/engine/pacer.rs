//! The open-loop schedule as pure functions of time: a workload profile's rate at t, the
//! number of events due by t (the integral), and its inverse, the instant by which the n-th
//! event is due. Batch k of a worker is due when its last event is due, whatever happened to
//! earlier batches; lateness shows up as schedule lag, never as a lower offered load. The run
//! plan builds a `Profile` from the workload; control steers it through `schedule`.

#[derive(Clone, Debug, PartialEq)]
pub enum Profile {
    Steady {
        eps: f64,
    },
    /// `high` for `duty × period` seconds, then `low` for the rest of each period.
    Burst {
        high: f64,
        low: f64,
        period: f64,
        duty: f64,
    },
    /// Linear from `from` to `to` over `over` seconds, then `to`.
    Ramp {
        from: f64,
        to: f64,
        over: f64,
    },
    /// Each (eps, hold seconds) in turn; the last rate holds after the last step.
    Steps(Vec<(f64, f64)>),
    /// Closed loop (hey without `-q`): no schedule; each connection sends its next request
    /// when the last is answered. As a schedule it is a rate no sender reaches
    /// (`CLOSED_EPS`), so something is always due; the workers and the coordinator read it
    /// as "no target": intended latency is service latency, nothing is late or short.
    Closed,
}

/// The rate a closed-loop schedule stands for: always something due.
pub const CLOSED_EPS: f64 = 1e9;

impl Profile {
    /// Events per second at `t` seconds into the run.
    pub fn rate_at(&self, t: f64) -> f64 {
        match self {
            Profile::Steady { eps } => *eps,
            Profile::Closed => CLOSED_EPS,
            Profile::Burst {
                high,
                low,
                period,
                duty,
            } => {
                if t.rem_euclid(*period) < duty * period {
                    *high
                } else {
                    *low
                }
            }
            Profile::Ramp { from, to, over } => {
                if t >= *over {
                    *to
                } else {
                    from + (to - from) * t / over
                }
            }
            Profile::Steps(steps) => {
                let mut start = 0.0;
                for (eps, hold) in steps {
                    if t < start + hold {
                        return *eps;
                    }
                    start += hold;
                }
                steps.last().map_or(0.0, |s| s.0)
            }
        }
    }

    /// The profile with every rate times `f` (a shard's part: `1/N`); a closed loop stays
    /// closed.
    pub fn scaled(&self, f: f64) -> Profile {
        match self {
            Profile::Steady { eps } => Profile::Steady { eps: eps * f },
            Profile::Closed => Profile::Closed,
            Profile::Burst {
                high,
                low,
                period,
                duty,
            } => Profile::Burst {
                high: high * f,
                low: low * f,
                period: *period,
                duty: *duty,
            },
            Profile::Ramp { from, to, over } => Profile::Ramp {
                from: from * f,
                to: to * f,
                over: *over,
            },
            Profile::Steps(s) => Profile::Steps(s.iter().map(|(e, h)| (e * f, *h)).collect()),
        }
    }

    /// The highest rate the profile reaches.
    pub fn peak(&self) -> f64 {
        match self {
            Profile::Steady { eps } => *eps,
            Profile::Closed => CLOSED_EPS,
            Profile::Burst { high, low, .. } => high.max(*low),
            Profile::Ramp { from, to, .. } => from.max(*to),
            Profile::Steps(s) => s.iter().map(|x| x.0).fold(0.0, f64::max),
        }
    }

    /// Events due by `t` seconds (the integral of the rate from 0).
    pub fn cumulative(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        match self {
            Profile::Steady { eps } => eps * t,
            Profile::Closed => CLOSED_EPS * t,
            Profile::Burst {
                high,
                low,
                period,
                duty,
            } => {
                let per_period = high * duty * period + low * (1.0 - duty) * period;
                let whole = (t / period).floor();
                let r = t - whole * period;
                let hi_time = duty * period;
                let part = if r < hi_time {
                    high * r
                } else {
                    high * hi_time + low * (r - hi_time)
                };
                whole * per_period + part
            }
            Profile::Ramp { from, to, over } => {
                let in_ramp = t.min(*over);
                let ramp = from * in_ramp + (to - from) * in_ramp * in_ramp / (2.0 * over);
                ramp + to * (t - over).max(0.0)
            }
            Profile::Steps(steps) => {
                let mut acc = 0.0;
                let mut start = 0.0;
                for (eps, hold) in steps {
                    if t < start + hold {
                        return acc + eps * (t - start);
                    }
                    acc += eps * hold;
                    start += hold;
                }
                acc + steps.last().map_or(0.0, |s| s.0) * (t - start)
            }
        }
    }

    /// The instant (seconds) at which `n` events are due: the least t with cumulative(t) >= n.
    /// `None` when the profile never gets there (a zero rate forever).
    pub fn time_for(&self, n: f64) -> Option<f64> {
        if n <= 0.0 {
            return Some(0.0);
        }
        match self {
            Profile::Steady { eps } => return (*eps > 0.0).then(|| n / eps),
            Profile::Closed => return Some(n / CLOSED_EPS),
            Profile::Steps(steps) => return steps_time_for(steps, n),
            _ => {}
        }
        let mut hi = 1.0;
        while self.cumulative(hi) < n {
            hi *= 2.0;
            if hi > 1e9 {
                return None;
            }
        }
        let mut lo = 0.0;
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            if self.cumulative(mid) >= n {
                hi = mid;
            } else {
                lo = mid;
            }
            if hi - lo < 1e-9 {
                break;
            }
        }
        Some(hi)
    }
}

/// `time_for` of a steps profile in one pass over the steps (a bisection over `cumulative`
/// walks them 64 times, on every batch a worker makes).
fn steps_time_for(steps: &[(f64, f64)], n: f64) -> Option<f64> {
    let (mut acc, mut start) = (0.0, 0.0);
    for &(eps, hold) in steps {
        if eps > 0.0 && acc + eps * hold >= n {
            return Some(start + (n - acc) / eps);
        }
        acc += eps * hold;
        start += hold;
    }
    let last = steps.last().map_or(0.0, |s| s.0);
    (last > 0.0).then(|| start + (n - acc) / last)
}

/// Events due, counted whole. The schedule's integral across rate and pause segments can
/// land a hair under an integer (2999.9999999 for 3,000); that counts as the integer.
pub fn whole_events(x: f64) -> f64 {
    (x + 1e-6).floor()
}

/// Of the first `due` events of the whole schedule, dealt in turn to `n` workers (event `j`,
/// from 0, to worker `j mod n`), how many are worker `id`'s. The workers' parts add up to the
/// whole events due, so a rate too low to give every worker an event still sends what is due
/// (0.1 eps over 12 s with two workers: one event, not none).
pub fn dealt(due: f64, n: usize, id: usize) -> u64 {
    let (n, id) = (n.max(1) as u64, id as u64);
    let d = whole_events(due);
    if d.is_nan() || d <= id as f64 {
        return 0;
    }
    // `as` saturates: a schedule past u64 events is as good as endless.
    let d = d as u64;
    (d - id - 1) / n + 1
}

/// How many events of the whole schedule are due when worker `id`'s `k`-th event (from 1) is,
/// as `dealt` deals them; 0 for `k` 0.
pub fn dealt_index(k: u64, n: usize, id: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    (k - 1) as f64 * n.max(1) as f64 + id as f64 + 1.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_scaled_profile_is_that_part_at_every_instant() {
        use super::Profile;
        let all = [
            Profile::Steady { eps: 300.0 },
            Profile::Burst {
                high: 900.0,
                low: 30.0,
                period: 10.0,
                duty: 0.3,
            },
            Profile::Ramp {
                from: 30.0,
                to: 3000.0,
                over: 20.0,
            },
            Profile::Steps(vec![(300.0, 5.0), (600.0, 5.0)]),
        ];
        for p in all {
            let third = p.scaled(1.0 / 3.0);
            for t in [0.0, 0.5, 2.9, 3.0, 7.5, 12.0, 40.0] {
                let (a, b) = (p.cumulative(t), 3.0 * third.cumulative(t));
                assert!((a - b).abs() < 1e-6, "{p:?} at {t}: {a} vs {b}");
                assert!((p.rate_at(t) - 3.0 * third.rate_at(t)).abs() < 1e-9);
            }
        }
        assert_eq!(Profile::Closed.scaled(0.5), Profile::Closed);
    }

    use super::*;

    #[test]
    fn dealt_events_add_up_to_the_whole_schedule() {
        for n in 1..=5 {
            for due in [0.0, 0.6, 1.2, 2.0, 7.0, 2_999.999_999_9, 12_345.0] {
                let sum: u64 = (0..n).map(|id| dealt(due, n, id)).sum();
                assert_eq!(sum as f64, whole_events(due), "n={n} due={due}");
            }
        }
        // 0.1 eps over 12 s with two workers: the one event due is worker 0's.
        assert_eq!((dealt(1.2, 2, 0), dealt(1.2, 2, 1)), (1, 0));
        // Worker id's k-th event is due when event (k-1)·n + id + 1 of the whole is.
        for (n, id) in [(1, 0), (2, 0), (2, 1), (3, 2)] {
            for k in 1..20u64 {
                let at = dealt_index(k, n, id);
                assert_eq!(dealt(at, n, id), k, "n={n} id={id} k={k}");
                assert_eq!(dealt(at - 1.0, n, id), k - 1, "n={n} id={id} k={k}");
            }
        }
        assert_eq!(dealt_index(0, 3, 1), 0.0);
        assert_eq!(dealt(f64::INFINITY, 2, 1), u64::MAX / 2);
        assert_eq!(dealt(f64::NAN, 2, 0), 0);
    }

    #[test]
    fn a_hair_under_an_integer_counts_as_it() {
        assert_eq!(whole_events(2_999.999_999_9), 3000.0);
        assert_eq!(whole_events(2999.5), 2999.0);
        assert_eq!(whole_events(0.0), 0.0);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn steady_table() {
        let p = Profile::Steady { eps: 1000.0 };
        for (t, n) in [(0.0, 0.0), (0.5, 500.0), (10.0, 10_000.0)] {
            assert!(close(p.cumulative(t), n));
            assert!(close(p.time_for(n).unwrap(), t));
        }
        assert_eq!(Profile::Steady { eps: 0.0 }.time_for(1.0), None);
    }

    #[test]
    fn burst_table() {
        let p = Profile::Burst {
            high: 100.0,
            low: 10.0,
            period: 10.0,
            duty: 0.2,
        };
        // Per period: 100*2 + 10*8 = 280 events.
        for (t, n) in [
            (1.0, 100.0),
            (2.0, 200.0),
            (5.0, 230.0),
            (10.0, 280.0),
            (11.0, 380.0),
            (25.0, 280.0 * 2.0 + 200.0 + 30.0),
        ] {
            assert!(
                close(p.cumulative(t), n),
                "t={t}: {} != {n}",
                p.cumulative(t)
            );
            assert!(close(p.time_for(n).unwrap(), t), "n={n}");
        }
        assert_eq!(p.rate_at(1.9), 100.0);
        assert_eq!(p.rate_at(2.1), 10.0);
        assert_eq!(p.rate_at(12.0), 10.0);
        assert_eq!(p.rate_at(10.5), 100.0);
    }

    #[test]
    fn ramp_table() {
        // 500 -> 10,000 over 300 s: area = (500 + 10000) / 2 * 300 = 1,575,000.
        let p = Profile::Ramp {
            from: 500.0,
            to: 10_000.0,
            over: 300.0,
        };
        assert!(close(p.cumulative(300.0), 1_575_000.0));
        assert!(close(p.cumulative(360.0), 1_575_000.0 + 600_000.0));
        assert!(close(p.rate_at(150.0), 5250.0));
        for n in [1.0, 1000.0, 1_000_000.0, 2_000_000.0] {
            let t = p.time_for(n).unwrap();
            assert!(close(p.cumulative(t), n), "n={n}");
        }
    }

    #[test]
    fn steps_table() {
        let p = Profile::Steps(vec![(1000.0, 30.0), (5000.0, 30.0), (20000.0, 60.0)]);
        for (t, n) in [
            (30.0, 30_000.0),
            (60.0, 180_000.0),
            (120.0, 1_380_000.0),
            (130.0, 1_580_000.0),
        ] {
            assert!(close(p.cumulative(t), n), "t={t}");
            assert!(close(p.time_for(n).unwrap(), t), "n={n}");
        }
        assert_eq!(p.peak(), 20000.0);
    }

    /// The one-pass `time_for` of steps is the least t whose integral reaches n, as the
    /// bisection over `cumulative` finds it, and it stays cheap for many steps.
    #[test]
    fn steps_time_for_is_the_integrals_inverse() {
        let steps: Vec<(f64, f64)> = (0..1000)
            .map(|i| (f64::from(1 + i % 7) * 10.0, 1.0 + f64::from(i % 3)))
            .collect();
        let p = Profile::Steps(steps);
        let total = p.cumulative(2000.0);
        for k in 0..200 {
            let n = total * f64::from(k) / 199.0 + 0.5;
            let t = p.time_for(n).unwrap();
            assert!(p.cumulative(t) >= n - 1e-6, "n={n} t={t}");
            assert!(p.cumulative(t - 1e-6) < n, "n={n} t={t}: not the least");
        }
        let zero = Profile::Steps(vec![(5.0, 1.0), (0.0, 1.0)]);
        assert_eq!(zero.time_for(6.0), None);
        assert!(close(zero.time_for(5.0).unwrap(), 1.0));
        let pause = Profile::Steps(vec![(5.0, 1.0), (0.0, 1.0), (5.0, 1.0)]);
        assert!(close(pause.time_for(6.0).unwrap(), 2.2));
    }

    #[test]
    fn zero_low_burst_still_progresses() {
        let p = Profile::Burst {
            high: 10.0,
            low: 0.0,
            period: 1.0,
            duty: 0.5,
        };
        // 5 events in the first half of each period: the 10th is due at 1.5 s.
        assert!(close(p.time_for(10.0).unwrap(), 1.5));
    }
}
