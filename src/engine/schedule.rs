//! The schedule a run follows, steerable while it runs. The workload's profile (`pacer`) is
//! the base; every control action (pause, resume, a new rate) starts a new `Segment` at the
//! instant it is taken, continuing from the integral there, so nothing is bunched or lost:
//! events due before the change stay due, later ones follow the new law. Paused time moves no
//! profile time and makes nothing due, so `stop.after` counts schedule time and the end shifts
//! by the pause. Everything here is a pure function of (base, segments, t) except
//! `ScheduleCell`, which holds the segments a run's workers and its `Control` share: workers
//! look at one atomic epoch per loop iteration and take the new segments (two `Arc` clones, no
//! allocation) only when it moved.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::engine::pacer::Profile;
use crate::stats::snapshot::ControlMark;

/// The highest rate a run may be set to, events per second (as in the config).
pub const MAX_EPS: f64 = 100_000_000.0;

/// How events become due within one segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Law {
    /// The base profile, its rate multiplied by `factor`.
    Profile { factor: f64 },
    /// A constant rate.
    Steady { eps: f64 },
    /// Nothing becomes due; profile time stands still. `then` is the law a resume returns to.
    Paused { then: PausedLaw },
}

/// The law in force before a pause (a `Law` that is not itself `Paused`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PausedLaw {
    Profile { factor: f64 },
    Steady { eps: f64 },
}

impl PausedLaw {
    fn law(self) -> Law {
        match self {
            PausedLaw::Profile { factor } => Law::Profile { factor },
            PausedLaw::Steady { eps } => Law::Steady { eps },
        }
    }
}

/// From `t0` seconds after the start, with `n0` events due by then and the profile at its
/// second `p0`, events become due by `law`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub t0: f64,
    pub n0: f64,
    pub p0: f64,
    pub law: Law,
}

/// A schedule: the base profile (global rate) and the segments of control so far.
#[derive(Clone, Debug)]
pub struct Schedule {
    base: Arc<Profile>,
    segs: Arc<Vec<Segment>>,
}

/// What a control action asks for the rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// This many events per second (for the whole run, shared by its workers).
    Eps(f64),
    /// The rate in force now, multiplied.
    Factor(f64),
}

impl Schedule {
    /// A closed loop (no rate: each connection sends when answered).
    pub fn is_closed(&self) -> bool {
        matches!(*self.base, Profile::Closed)
    }

    pub fn new(base: Profile) -> Schedule {
        Schedule {
            base: Arc::new(base),
            segs: Arc::new(vec![Segment {
                t0: 0.0,
                n0: 0.0,
                p0: 0.0,
                law: Law::Profile { factor: 1.0 },
            }]),
        }
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segs
    }

    /// The segment in force at `t`.
    #[allow(
        clippy::indexing_slicing,
        reason = "a schedule has at least one segment, so partition_point(..).max(1) - 1 < \
                  segs.len()"
    )]
    fn at(&self, t: f64) -> &Segment {
        let i = self.segs.partition_point(|s| s.t0 <= t).max(1) - 1;
        &self.segs[i]
    }

    /// Events due by `t` seconds after the start.
    pub fn due(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        let s = self.at(t);
        let dt = t - s.t0;
        match s.law {
            Law::Profile { factor } => {
                s.n0 + factor * (self.base.cumulative(s.p0 + dt) - self.base.cumulative(s.p0))
            }
            Law::Steady { eps } => s.n0 + eps * dt,
            Law::Paused { .. } => s.n0,
        }
    }

    /// Schedule (profile) seconds by `t`: wall seconds less the paused ones.
    pub fn active(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        let s = self.at(t);
        match s.law {
            Law::Paused { .. } => s.p0,
            _ => s.p0 + (t - s.t0),
        }
    }

    /// The rate asked for at `t`, events per second.
    pub fn rate_at(&self, t: f64) -> f64 {
        let s = self.at(t.max(0.0));
        match s.law {
            Law::Profile { factor } => factor * self.base.rate_at(self.active(t)),
            Law::Steady { eps } => eps,
            Law::Paused { .. } => 0.0,
        }
    }

    /// Whether the schedule is paused at `t`.
    pub fn paused_at(&self, t: f64) -> bool {
        matches!(self.at(t.max(0.0)).law, Law::Paused { .. })
    }

    /// The highest rate the schedule can reach from here on (for sizing timelines).
    pub fn peak(&self) -> f64 {
        let mut peak: f64 = 0.0;
        for s in self.segs.iter() {
            peak = peak.max(match s.law {
                Law::Profile { factor } => factor * self.base.peak(),
                Law::Steady { eps } => eps,
                Law::Paused { .. } => 0.0,
            });
        }
        peak
    }

    /// The instant (seconds after the start) by which `n` events are due; `None` when the
    /// schedule never gets there as it stands (paused, or a zero rate forever).
    pub fn time_for(&self, n: f64) -> Option<f64> {
        if n <= 0.0 {
            return Some(0.0);
        }
        for (i, s) in self.segs.iter().enumerate() {
            let next = self.segs.get(i + 1);
            if let Some(nx) = next
                && nx.n0 < n
            {
                continue;
            }
            // `n` is reached within this segment (or never).
            let t = match s.law {
                Law::Profile { factor } => {
                    if factor <= 0.0 {
                        None
                    } else {
                        let goal = self.base.cumulative(s.p0) + (n - s.n0) / factor;
                        self.base.time_for(goal).map(|p| s.t0 + (p - s.p0).max(0.0))
                    }
                }
                Law::Steady { eps } => (eps > 0.0).then(|| s.t0 + (n - s.n0) / eps),
                Law::Paused { .. } => None,
            };
            return match (t, next) {
                (Some(t), Some(nx)) => Some(t.min(nx.t0)),
                (t, None) => t,
                // Paused with a later segment: `n` is first due in the next one.
                (None, Some(_)) => continue,
            };
        }
        None
    }

    /// The instant (seconds after the start) at which `active` seconds of schedule have run;
    /// `None` while paused short of it.
    pub fn time_at_active(&self, active: f64) -> Option<f64> {
        for (i, s) in self.segs.iter().enumerate() {
            let end = self.segs.get(i + 1).map(|nx| nx.p0);
            if let Law::Paused { .. } = s.law {
                continue;
            }
            if end.is_none_or(|e| active <= e) {
                return Some(s.t0 + (active - s.p0).max(0.0));
            }
        }
        None
    }

    /// The schedule with a new segment from `t`.
    fn with(&self, t: f64, law: Law) -> Schedule {
        let mut segs = (*self.segs).clone();
        segs.push(Segment {
            t0: t,
            n0: self.due(t),
            p0: self.active(t),
            law,
        });
        Schedule {
            base: self.base.clone(),
            segs: Arc::new(segs),
        }
    }
}

/// Why a control action was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// The run has ended (or is stopping); nothing can be steered any more.
    Finished,
    /// The action does not fit the run's state (pause while paused, …).
    Conflict(String),
    /// The value asked for is out of range.
    Invalid(String),
}

impl std::fmt::Display for ControlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlError::Finished => f.write_str("the run has ended"),
            ControlError::Conflict(m) | ControlError::Invalid(m) => f.write_str(m),
        }
    }
}

struct Shared {
    schedule: Schedule,
    marks: Vec<ControlMark>,
    finished: bool,
    /// When a stop was asked, seconds after the start.
    stopped_at: Option<f64>,
}

/// The schedule of a run, shared by its workers and its `Control`. It exists before the run
/// starts (so a status page can be bound first); `begin` fixes the start instant.
pub struct ScheduleCell {
    start: OnceLock<Instant>,
    epoch: AtomicU64,
    stop: AtomicBool,
    /// Cuts asked so far: a worker that sees it move closes every connection it has.
    cuts: AtomicU64,
    shared: Mutex<Shared>,
    wakers: Mutex<Vec<Arc<mio::Waker>>>,
}

impl ScheduleCell {
    pub fn new(base: Profile) -> Arc<ScheduleCell> {
        Arc::new(ScheduleCell {
            start: OnceLock::new(),
            epoch: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            cuts: AtomicU64::new(0),
            shared: Mutex::new(Shared {
                schedule: Schedule::new(base),
                marks: Vec::new(),
                finished: false,
                stopped_at: None,
            }),
            wakers: Mutex::new(Vec::new()),
        })
    }

    /// Fixes the instant the schedule counts from (the first call wins).
    pub fn begin(&self, start: Instant) {
        let _ = self.start.set(start);
    }

    /// The start instant, once the run has begun.
    pub fn start(&self) -> Option<Instant> {
        self.start.get().copied()
    }

    /// When a stop was asked, seconds after the start.
    pub fn stopped_at(&self) -> Option<f64> {
        self.lock().stopped_at
    }

    /// Moves every time the schedule changes (or a stop is asked).
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Cuts asked so far (see `cut`).
    #[inline]
    pub fn cuts(&self) -> u64 {
        self.cuts.load(Ordering::Acquire)
    }

    /// Whether a stop was asked (by control or a signal).
    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        match self.shared.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The schedule as it stands (no allocation: two `Arc` clones).
    pub fn schedule(&self) -> Schedule {
        self.lock().schedule.clone()
    }

    /// The control actions taken so far.
    pub fn marks(&self) -> Vec<ControlMark> {
        self.lock().marks.clone()
    }

    /// A worker's poller to wake when the schedule changes.
    pub fn add_waker(&self, w: Arc<mio::Waker>) {
        if let Ok(mut g) = self.wakers.lock() {
            g.push(w);
        }
    }

    fn changed(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        if let Ok(g) = self.wakers.lock() {
            for w in g.iter() {
                let _ = w.wake();
            }
        }
    }

    fn now_s(&self) -> f64 {
        self.start().map_or(0.0, |s| s.elapsed().as_secs_f64())
    }

    /// The run is over: later control actions get `ControlError::Finished`.
    pub fn finish(&self) {
        self.lock().finished = true;
    }

    /// Asks every worker to stop making new batches (what is in flight is still waited for).
    /// `mark` records it as a control action.
    pub fn request_stop(&self, mark: bool) -> Result<(), ControlError> {
        {
            let mut g = self.lock();
            if g.finished {
                return Err(ControlError::Finished);
            }
            if self.stop.swap(true, Ordering::AcqRel) {
                return Err(ControlError::Conflict("the run is already stopping".into()));
            }
            let t_s = self.now_s();
            g.stopped_at = Some(t_s);
            if mark {
                g.marks.push(ControlMark {
                    t_s,
                    action: "stop",
                    rate_eps: None,
                    detail: None,
                });
            }
        }
        self.changed();
        Ok(())
    }

    /// Closes every client connection at once: each worker closes its links when it next
    /// looks at the epoch and reconnects as after a reset (batches in flight are sent again).
    pub fn cut(&self) -> Result<(), ControlError> {
        self.note("cut", None)?;
        self.cuts.fetch_add(1, Ordering::AcqRel);
        self.changed();
        Ok(())
    }

    /// Records an action taken around the run (a fault's begin or end) on its timeline.
    pub fn note(&self, action: &'static str, detail: Option<String>) -> Result<(), ControlError> {
        let mut g = self.lock();
        if g.finished {
            return Err(ControlError::Finished);
        }
        let t_s = self.now_s();
        g.marks.push(ControlMark {
            t_s,
            action,
            rate_eps: None,
            detail,
        });
        Ok(())
    }

    fn apply(
        &self,
        action: &'static str,
        f: impl FnOnce(&Schedule, f64) -> Result<(Law, Option<String>), ControlError>,
    ) -> Result<(), ControlError> {
        {
            let mut g = self.lock();
            if g.finished || self.stop.load(Ordering::Relaxed) {
                return Err(ControlError::Finished);
            }
            if self.start().is_none() {
                return Err(ControlError::Conflict("the run has not started yet".into()));
            }
            let t = self.now_s();
            let (law, detail) = f(&g.schedule, t)?;
            g.schedule = g.schedule.with(t, law);
            let rate_eps = (action == "rate").then(|| g.schedule.rate_at(t));
            g.marks.push(ControlMark {
                t_s: t,
                action,
                rate_eps,
                detail,
            });
        }
        self.changed();
        Ok(())
    }

    pub fn pause(&self) -> Result<(), ControlError> {
        self.apply("pause", |s, t| match s.at(t).law {
            Law::Paused { .. } => Err(ControlError::Conflict("the run is already paused".into())),
            Law::Profile { factor } => Ok((
                Law::Paused {
                    then: PausedLaw::Profile { factor },
                },
                None,
            )),
            Law::Steady { eps } => Ok((
                Law::Paused {
                    then: PausedLaw::Steady { eps },
                },
                None,
            )),
        })
    }

    pub fn resume(&self) -> Result<(), ControlError> {
        self.apply("resume", |s, t| match s.at(t).law {
            Law::Paused { then } => Ok((then.law(), None)),
            _ => Err(ControlError::Conflict("the run is not paused".into())),
        })
    }

    pub fn set_rate(&self, rate: Rate) -> Result<(), ControlError> {
        if self.schedule().is_closed() {
            return Err(ControlError::Invalid(
                "a closed-loop run has no rate: each connection sends as its answers come".into(),
            ));
        }
        self.apply("rate", |s, t| {
            let law = s.at(t).law;
            if let Law::Paused { .. } = law {
                return Err(ControlError::Conflict(
                    "the run is paused: resume it before setting a rate".into(),
                ));
            }
            let (law, detail) = match rate {
                Rate::Eps(eps) => {
                    if !(eps > 0.0 && eps <= MAX_EPS) {
                        return Err(ControlError::Invalid(format!(
                            "a rate must be above 0 and at most {MAX_EPS} events/s, not {eps} (to send nothing for a while, pause)"
                        )));
                    }
                    (Law::Steady { eps }, format!("eps {eps}"))
                }
                Rate::Factor(f) => {
                    let now = s.rate_at(t);
                    if !(f > 0.0 && f.is_finite() && now * f <= MAX_EPS) {
                        return Err(ControlError::Invalid(format!(
                            "a rate factor must be above 0 and keep the rate at most {MAX_EPS} events/s, not {f}"
                        )));
                    }
                    let law = match law {
                        Law::Profile { factor } => Law::Profile { factor: factor * f },
                        Law::Steady { eps } => Law::Steady { eps: eps * f },
                        Law::Paused { .. } => law,
                    };
                    (law, format!("factor {f}"))
                }
            };
            Ok((law, Some(detail)))
        })
    }
}

/// The handle other code steers a run with; cloneable and usable from any thread. Every
/// action taken is a `ControlMark` on the run's timeline and in its report.
#[derive(Clone)]
pub struct Control {
    cell: Arc<ScheduleCell>,
    poke: crossbeam_channel::Sender<()>,
}

impl Control {
    pub fn new(cell: Arc<ScheduleCell>, poke: crossbeam_channel::Sender<()>) -> Control {
        Control { cell, poke }
    }

    /// Stops the run: no new batches; what is in flight is waited for and the report is
    /// still written (the run ends "stopped", exit 6).
    pub fn stop(&self) -> Result<(), ControlError> {
        self.cell.request_stop(true)
    }

    /// Pauses the schedule: no events are due until `resume`; paused time is not lag.
    pub fn pause(&self) -> Result<(), ControlError> {
        self.cell.pause()
    }

    pub fn resume(&self) -> Result<(), ControlError> {
        self.cell.resume()
    }

    /// Sets the rate from now on, continuing from the events due so far.
    pub fn set_rate(&self, rate: Rate) -> Result<(), ControlError> {
        self.cell.set_rate(rate)
    }

    /// Closes every client connection at once (they reconnect; batches in flight are resent).
    pub fn cut(&self) -> Result<(), ControlError> {
        self.cell.cut()
    }

    /// Marks an action taken around the run (a fault's begin or end) on its timeline.
    pub fn note(&self, action: &'static str, detail: Option<String>) -> Result<(), ControlError> {
        self.cell.note(action, detail)
    }

    /// When the run began (its second 0), once it has.
    pub fn started_at(&self) -> Option<Instant> {
        self.cell.start()
    }

    /// Asks the coordinator to publish a snapshot now rather than at the next second.
    pub fn refresh(&self) {
        let _ = self.poke.try_send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    fn steady(eps: f64) -> Schedule {
        Schedule::new(Profile::Steady { eps })
    }

    #[test]
    fn without_control_the_schedule_is_the_profile() {
        let p = Profile::Ramp {
            from: 100.0,
            to: 1000.0,
            over: 10.0,
        };
        let s = Schedule::new(p.clone());
        for t in [0.0, 0.5, 3.0, 10.0, 25.0] {
            assert!(close(s.due(t), p.cumulative(t)), "t={t}");
            assert!(close(s.rate_at(t), p.rate_at(t)), "t={t}");
            assert!(close(s.active(t), t));
        }
        for n in [1.0, 100.0, 5000.0, 20_000.0] {
            assert!(
                close(s.time_for(n).unwrap(), p.time_for(n).unwrap()),
                "n={n}"
            );
        }
        assert_eq!(s.time_at_active(7.0), Some(7.0));
    }

    #[test]
    fn pause_holds_due_and_shifts_the_rest() {
        // 1000 eps; paused from 2 s to 5 s.
        let s = steady(1000.0)
            .with(
                2.0,
                Law::Paused {
                    then: PausedLaw::Profile { factor: 1.0 },
                },
            )
            .with(5.0, Law::Profile { factor: 1.0 });
        assert!(close(s.due(1.0), 1000.0));
        assert!(close(s.due(2.0), 2000.0));
        assert!(close(s.due(4.0), 2000.0));
        assert!(close(s.due(6.0), 3000.0));
        assert!(close(s.active(4.0), 2.0));
        assert!(close(s.active(6.0), 3.0));
        assert_eq!(s.rate_at(3.0), 0.0);
        assert!(s.paused_at(3.0) && !s.paused_at(5.5));
        // The 2000th event is due at 2 s, the 2001st just after the resume.
        assert!(close(s.time_for(2000.0).unwrap(), 2.0));
        assert!(close(s.time_for(2500.0).unwrap(), 5.5));
        // 10 s of schedule end at 13 s of wall time.
        assert!(close(s.time_at_active(10.0).unwrap(), 13.0));
        assert!(close(s.time_at_active(2.0).unwrap(), 2.0));
    }

    #[test]
    fn still_paused_means_never_due() {
        let s = steady(10.0).with(
            1.0,
            Law::Paused {
                then: PausedLaw::Steady { eps: 10.0 },
            },
        );
        assert!(close(s.time_for(10.0).unwrap(), 1.0));
        assert_eq!(s.time_for(11.0), None);
        assert_eq!(s.time_at_active(5.0), None);
        assert!(close(s.time_at_active(0.5).unwrap(), 0.5));
    }

    #[test]
    fn a_new_rate_continues_from_the_integral() {
        // 1000 eps, then 4000 eps from 3 s: nothing bunched, nothing lost.
        let s = steady(1000.0).with(3.0, Law::Steady { eps: 4000.0 });
        assert!(close(s.due(3.0), 3000.0));
        assert!(close(s.due(4.0), 7000.0));
        assert!(close(s.time_for(3000.0).unwrap(), 3.0));
        assert!(close(s.time_for(5000.0).unwrap(), 3.5));
        assert_eq!(s.rate_at(2.0), 1000.0);
        assert_eq!(s.rate_at(3.5), 4000.0);
        assert_eq!(s.peak(), 4000.0);
    }

    #[test]
    fn a_factor_scales_the_profile_from_where_it_is() {
        // A ramp 0 -> 1000 over 10 s, doubled from 5 s.
        let p = Profile::Ramp {
            from: 0.0,
            to: 1000.0,
            over: 10.0,
        };
        let s = Schedule::new(p.clone()).with(5.0, Law::Profile { factor: 2.0 });
        assert!(close(s.rate_at(6.0), 2.0 * p.rate_at(6.0)));
        let want = p.cumulative(5.0) + 2.0 * (p.cumulative(8.0) - p.cumulative(5.0));
        assert!(close(s.due(8.0), want));
        let n = s.due(7.3);
        assert!(close(s.time_for(n).unwrap(), 7.3));
    }

    #[test]
    fn control_actions_are_checked_and_marked() {
        let cell = ScheduleCell::new(Profile::Steady { eps: 100.0 });
        let (tx, _rx) = crossbeam_channel::bounded(1);
        let c = Control::new(cell.clone(), tx);
        assert!(
            matches!(c.pause(), Err(ControlError::Conflict(_))),
            "not started"
        );
        cell.begin(Instant::now());
        let e0 = cell.epoch();
        assert!(matches!(c.resume(), Err(ControlError::Conflict(_))));
        c.pause().unwrap();
        assert!(matches!(c.pause(), Err(ControlError::Conflict(_))));
        assert!(matches!(
            c.set_rate(Rate::Eps(10.0)),
            Err(ControlError::Conflict(_))
        ));
        c.resume().unwrap();
        assert!(matches!(
            c.set_rate(Rate::Eps(0.0)),
            Err(ControlError::Invalid(_))
        ));
        assert!(matches!(
            c.set_rate(Rate::Factor(f64::NAN)),
            Err(ControlError::Invalid(_))
        ));
        c.set_rate(Rate::Factor(3.0)).unwrap();
        let now = cell.start().unwrap().elapsed().as_secs_f64();
        assert!(close(cell.schedule().rate_at(now + 0.001), 300.0));
        c.set_rate(Rate::Eps(50.0)).unwrap();
        c.stop().unwrap();
        assert!(cell.stop_requested());
        assert!(cell.stopped_at().is_some());
        assert_eq!(c.pause(), Err(ControlError::Finished));
        let actions: Vec<_> = cell.marks().iter().map(|m| m.action).collect();
        assert_eq!(actions, ["pause", "resume", "rate", "rate", "stop"]);
        assert_eq!(cell.marks()[3].rate_eps, Some(50.0));
        assert!(cell.epoch() >= e0 + 5);
        cell.finish();
        assert_eq!(c.stop(), Err(ControlError::Finished));
    }
}
