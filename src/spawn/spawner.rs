//! The spawner loop, on threads of its own (`LANES` of them, lane i taking spawns k ≡ i mod
//! LANES): sleep to spawn k's due time (absolute
//! `clock_nanosleep` on CLOCK_MONOTONIC, timer slack 1 ns), spawn, hand the child to the
//! reaper, repeat. A due spawn is never skipped: when the loop is behind it spawns at once
//! and records how late (an HDR histogram of nanoseconds from due to the `posix_spawn` call),
//! so falling behind shows as lateness, never as a quietly lower rate. A spawn at least one
//! period late counts as `late` — the tick a ticker loop would have dropped.
//!
//! Lanes, because a vfork-style `posix_spawn` holds its calling thread until the child has
//! exec'd: when the machine is busy and the child waits for a CPU, so does that thread, and
//! with one thread every spawn behind it would be late. Measured at 1,000/s on this shared
//! 2-core machine (perf/README.md): one lane fell behind by hundreds of ms, four kept it.
//!
//! Bounded: at most `max_in_flight` children unreaped (past it the loop waits, and is late),
//! nothing started after `deadline`, and a stop flag (SIGINT/SIGTERM) checked at least every
//! 50 ms. What was due and never started is `not_started`.

use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::launch::Launcher;
use super::reap::Reaper;
use super::schedule::Schedule;

/// The longest single sleep, so a stop is seen promptly.
const MAX_NAP: Duration = Duration::from_millis(50);
/// How long to wait before looking at the in-flight count again.
const IN_FLIGHT_NAP: Duration = Duration::from_micros(100);

/// Spawner threads, each taking every LANES-th spawn.
pub const LANES: u64 = 4;

/// How far the loop may go.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Children started and not yet reaped, at most.
    pub max_in_flight: u64,
    /// No spawn starts later than this after the window's start.
    pub deadline: Duration,
}

/// What the loop did.
pub struct Spawned {
    pub scheduled: u64,
    pub started: u64,
    pub failed: u64,
    /// Started at least one period after it was due.
    pub late: u64,
    /// Due, and never started (stopped, past the deadline, or waiting on in-flight children).
    pub not_started: u64,
    /// The first spawn error, as text.
    pub first_error: Option<String>,
    /// From each spawn's due time to its `posix_spawn` call.
    pub lateness_ns: Histogram<u64>,
    /// How long each `posix_spawn` call took (the parent waits until the child's exec).
    pub call_ns: Histogram<u64>,
    /// From the window's start to the loop's end.
    pub elapsed: Duration,
    /// Why the loop ended early, if it did.
    pub stopped: Option<&'static str>,
}

/// A monotonic clock reading in nanoseconds (CLOCK_MONOTONIC, the clock `Instant` uses).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the monotonic clock reads `at_ns` (returns at once when it is past).
fn sleep_until(at_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; an EINTR just returns early and the caller loops.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Asks for precise wake-ups on this thread (the default slack is 50 µs).
fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

fn histogram() -> Histogram<u64> {
    // 1 ns to an hour at 3 significant digits; the bounds are constants, so this cannot fail.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap_or_else(|_| {
        Histogram::new(3).unwrap_or_else(|_| unreachable!("3 significant digits are valid"))
    })
}

/// Runs the schedule from `t0_ns` (a `now_ns` reading) on `LANES` threads of its own and
/// merges what they did.
pub fn run(
    schedule: &Schedule,
    launcher: &Launcher,
    reaper: &Reaper,
    stop: &AtomicBool,
    limits: Limits,
    t0_ns: u64,
) -> std::io::Result<Spawned> {
    let lanes = LANES.min(schedule.count.max(1));
    let done: Vec<std::io::Result<Spawned>> = std::thread::scope(|sc| {
        let threads: Vec<_> = (0..lanes)
            .map(|lane| {
                std::thread::Builder::new()
                    .name(format!("spawner-{lane}"))
                    .spawn_scoped(sc, move || {
                        run_lane(schedule, lane, lanes, launcher, reaper, stop, limits, t0_ns)
                    })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t?.join()
                    .map_err(|_| std::io::Error::other("a spawner thread panicked"))
            })
            .collect()
    });
    let mut total: Option<Spawned> = None;
    for lane in done {
        let lane = lane?;
        match &mut total {
            None => total = Some(lane),
            Some(t) => t.absorb(lane),
        }
    }
    total.ok_or_else(|| std::io::Error::other("no spawner lane ran"))
}

impl Spawned {
    /// Adds another lane's figures.
    fn absorb(&mut self, o: Spawned) {
        self.scheduled += o.scheduled;
        self.started += o.started;
        self.failed += o.failed;
        self.late += o.late;
        self.not_started += o.not_started;
        if self.first_error.is_none() {
            self.first_error = o.first_error;
        }
        // Same bounds on every lane, so adding cannot fail.
        let _ = self.lateness_ns.add(&o.lateness_ns);
        let _ = self.call_ns.add(&o.call_ns);
        self.elapsed = self.elapsed.max(o.elapsed);
        self.stopped = self.stopped.or(o.stopped);
    }
}

/// One lane: spawns `lane`, `lane + lanes`, … of the schedule.
#[allow(clippy::too_many_arguments)]
fn run_lane(
    schedule: &Schedule,
    lane: u64,
    lanes: u64,
    launcher: &Launcher,
    reaper: &Reaper,
    stop: &AtomicBool,
    limits: Limits,
    t0_ns: u64,
) -> Spawned {
    tighten_timer_slack();
    // Late means a period of the whole schedule behind: the tick a ticker would drop.
    let period_ns = schedule.period().as_nanos() as u64;
    let deadline_ns = t0_ns + limits.deadline.as_nanos() as u64;
    let in_flight = reaper.in_flight();
    let mut s = Spawned {
        scheduled: 0,
        started: 0,
        failed: 0,
        late: 0,
        not_started: 0,
        first_error: None,
        lateness_ns: histogram(),
        call_ns: histogram(),
        elapsed: Duration::ZERO,
        stopped: None,
    };
    let mine = (lane..schedule.count).step_by(lanes as usize);
    s.scheduled = (schedule.count.saturating_sub(lane)).div_ceil(lanes);
    for (i, k) in mine.enumerate() {
        let left = s.scheduled - i as u64;
        let due_ns = t0_ns + schedule.due(k).as_nanos() as u64;
        if let Err(why) = wait_due(due_ns, stop) {
            s.stopped = Some(why);
        } else if let Err(why) = wait_in_flight(&in_flight, limits.max_in_flight, deadline_ns, stop)
        {
            s.stopped = Some(why);
        }
        if s.stopped.is_some() {
            s.not_started = left;
            break;
        }
        let at = now_ns();
        if at > deadline_ns {
            in_flight.fetch_sub(1, Ordering::AcqRel);
            s.stopped = Some("past the deadline");
            s.not_started = left;
            break;
        }
        let late = at.saturating_sub(due_ns);
        s.lateness_ns.saturating_record(late.max(1));
        if late >= period_ns {
            s.late += 1;
        }
        match launcher.spawn() {
            Ok(pid) => {
                s.started += 1;
                reaper.hand_over(pid);
            }
            Err(e) => {
                in_flight.fetch_sub(1, Ordering::AcqRel);
                s.failed += 1;
                if s.first_error.is_none() {
                    s.first_error = Some(e.to_string());
                }
            }
        }
        s.call_ns
            .saturating_record(now_ns().saturating_sub(at).max(1));
    }
    s.elapsed = Duration::from_nanos(now_ns().saturating_sub(t0_ns));
    s
}

/// Sleeps until `due_ns` in naps of at most `MAX_NAP`, watching the stop flag.
fn wait_due(due_ns: u64, stop: &AtomicBool) -> Result<(), &'static str> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err("stopped by a signal");
        }
        let now = now_ns();
        if now >= due_ns {
            return Ok(());
        }
        sleep_until(due_ns.min(now + MAX_NAP.as_nanos() as u64));
    }
}

/// Takes one of `max` in-flight places (given back by the reaper, or on a failed spawn);
/// waits while none is free, and gives up at the deadline or on a stop.
fn wait_in_flight(
    in_flight: &std::sync::atomic::AtomicU64,
    max: u64,
    deadline_ns: u64,
    stop: &AtomicBool,
) -> Result<(), &'static str> {
    loop {
        let n = in_flight.load(Ordering::Acquire);
        if n < max {
            if in_flight
                .compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Ok(());
            }
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            return Err("stopped by a signal");
        }
        if now_ns() > deadline_ns {
            return Err("children did not exit: too many in flight until the deadline");
        }
        std::thread::sleep(IN_FLIGHT_NAP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn::launch::test_launcher as launcher;

    #[test]
    fn keeps_a_short_schedule() {
        let sched = Schedule::new(100.0, Duration::from_millis(300));
        let l = launcher("true", &[]);
        let r = Reaper::start().unwrap();
        let stop = AtomicBool::new(false);
        let limits = Limits {
            max_in_flight: 64,
            deadline: Duration::from_secs(5),
        };
        let s = run(&sched, &l, &r, &stop, limits, now_ns()).unwrap();
        let reaped = r.finish(Duration::from_secs(2));
        assert_eq!(
            (s.scheduled, s.started, s.failed, s.not_started),
            (30, 30, 0, 0)
        );
        assert_eq!(s.lateness_ns.len(), 30);
        assert_eq!(reaped.exited_ok, 30);
        assert!(s.elapsed >= Duration::from_millis(290), "{:?}", s.elapsed);
    }

    #[test]
    fn a_stuck_child_count_stops_at_the_deadline() {
        let sched = Schedule::new(100.0, Duration::from_secs(1));
        let l = launcher("sleep", &["30"]);
        let r = Reaper::start().unwrap();
        let stop = AtomicBool::new(false);
        let limits = Limits {
            max_in_flight: 3,
            deadline: Duration::from_millis(200),
        };
        let s = run(&sched, &l, &r, &stop, limits, now_ns()).unwrap();
        let reaped = r.finish(Duration::from_millis(10));
        assert_eq!(s.started, 3);
        assert_eq!(s.not_started, 97);
        assert!(s.stopped.is_some());
        assert_eq!(reaped.killed, 3);
    }

    #[test]
    fn a_stop_ends_the_loop() {
        let sched = Schedule::new(10.0, Duration::from_secs(10));
        let l = launcher("true", &[]);
        let r = Reaper::start().unwrap();
        let stop = AtomicBool::new(true);
        let limits = Limits {
            max_in_flight: 3,
            deadline: Duration::from_secs(20),
        };
        let s = run(&sched, &l, &r, &stop, limits, now_ns()).unwrap();
        r.finish(Duration::from_millis(10));
        assert_eq!((s.started, s.not_started), (0, 100));
        assert_eq!(s.stopped, Some("stopped by a signal"));
    }
}
