//! The run engine. The coordinator (`run`) spawns one pinned worker thread per core
//! (`worker`), each with its own poller, its part of the connections and the total, and its
//! share of the schedule (`schedule`, over the workload's `pacer` profile), which control can
//! steer while the run goes on. It folds the `Interval`s workers send every second (`merge`),
//! publishes a `Snapshot` every second and on demand (`live`), turns Ctrl-C/SIGTERM into a
//! stop, and returns a `RunResult` when every worker has stopped. It prints nothing and
//! writes no files: observers and the report do that.

pub mod lane;
pub mod live;
pub mod merge;
pub mod mix;
pub mod pacer;
pub mod schedule;
pub mod worker;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use crate::generate::Generator;
use crate::generate::timeline::Timeline;
use crate::pack::compile::CompiledPack;
use crate::scenario::plan::Scenario;
use crate::scenario::play::Player;
use crate::stats::Interval;
use crate::stats::result::LaneResult;
pub use crate::stats::result::{AbortReason, RunResult, Second};
use crate::stats::snapshot::{RunInfo, RunState, ScenarioNow, Snapshot};
use lane::Lane;
use merge::Merger;
use mix::{Framings, Mix, Picker};
use schedule::{Schedule, ScheduleCell};
use worker::{Timeouts, WirePlan};

/// A stop signal shared by every worker; the first reason given is kept.
#[derive(Default)]
pub struct Abort {
    flag: AtomicBool,
    reason: Mutex<Option<AbortReason>>,
}

impl Abort {
    pub fn set(&self, r: AbortReason) {
        if let Ok(mut g) = self.reason.lock()
            && g.is_none()
        {
            *g = Some(r);
        }
        self.flag.store(true, Ordering::Relaxed);
    }

    #[inline]
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    pub fn reason(&self) -> Option<AbortReason> {
        self.reason.lock().ok().and_then(|g| g.clone())
    }
}

/// When a run stops making new batches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// After this much schedule time (paused time not counted).
    After(Duration),
    /// After this many events.
    Total(u64),
}

/// Everything the coordinator needs for one run.
pub struct EnginePlan {
    /// Stamp each event's accounting tag with its batch's intended send time (realtime runs;
    /// deterministic ones keep their bytes a function of (seed, index)).
    pub stamp_sent: bool,
    pub wire: WirePlan,
    pub addr: SocketAddr,
    /// Connect to this Unix socket instead of `addr`.
    pub unix: Option<std::sync::Arc<std::path::Path>>,
    /// Several targets (`target.url` as a list, the first is `addr`); empty for one.
    pub targets: Vec<worker::TargetAddr>,
    pub threads: usize,
    pub connections: usize,
    pub stop: Stop,
    pub batch_events: usize,
    pub batch_bytes: usize,
    /// The source packs, one per source of a mix; none for a plain HTTP load sending a
    /// fixed body.
    pub packs: Vec<Arc<CompiledPack>>,
    /// A mix of sources: each one's share, how many events share a pick, its framing.
    pub mix: Option<MixPlan>,
    /// A recording replayed instead of packs (each worker plays a clone).
    pub replay: Option<crate::generate::replay::Replayer>,
    pub seed: u64,
    /// The first accounting agent: worker `id` is agent `agent_base + id` (a shard's own
    /// range; 0 for a run of one process).
    pub agent_base: u32,
    pub run_id: String,
    pub timeline: Timeline,
    pub jitter_ns: u64,
    pub timeouts: Timeouts,
    /// `workload.warmup`: the first seconds are in the timeline and out of the measurement.
    pub warmup: Duration,
    /// `limits.max_requests_per_sec`: a cap on requests, split between the workers.
    pub max_requests_per_sec: Option<f64>,
    pub pin: bool,
    /// What snapshots say the run is.
    pub info: RunInfo,
    /// Told every second's histograms as it closes (the HDR log).
    pub second_log: Option<merge::SecondLog>,
    /// A scenario to play beside the background load, on a worker of its own.
    pub scenario: Option<ScenarioPlan>,
}

/// A mix of sources: each one's part of the events (in `packs` order), the cycle of a
/// worker's events in which each source has one block (when a batch is of one source; 1 when
/// each event is picked on its own), and each source's framing.
pub struct MixPlan {
    pub shares: Vec<f64>,
    pub cycle: u64,
    pub wire: Framings,
}

impl EnginePlan {
    /// A generator for each source pack.
    fn generators(&self, jitter: bool) -> Vec<Generator> {
        self.packs
            .iter()
            .map(|p| {
                let g = Generator::new(p.program.clone(), self.seed, &self.run_id);
                if jitter {
                    g.with_jitter(self.jitter_ns)
                } else {
                    g
                }
            })
            .collect()
    }
}

/// What the scenario lane plays: the scenario, its time zero (ns since the epoch: its own
/// anchor, else the run's start) and each stage's framing.
pub struct ScenarioPlan {
    pub scenario: Arc<Scenario>,
    pub anchor: i64,
    pub wire: Framings,
}

/// How long past the drain workers may take to end once the run is ending (a stop, an abort
/// or the schedule's end) before the coordinator gives up on them.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// How often the coordinator publishes a snapshot.
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(1);

/// The coordinator's live side: the schedule workers and control share, and the channel on
/// which control asks for a snapshot now.
pub struct Steering {
    pub cell: Arc<ScheduleCell>,
    pub poke: Receiver<()>,
}

/// What goes back and forth between a worker and the coordinator: its two histograms
/// (intended, service) and its by-second list.
type Pair = crate::stats::Recycled;

struct Workers {
    /// The id of the scenario lane's worker, when there is one (`threads`), and its events.
    lane: Option<usize>,
    lane_events: u64,
    /// Each worker thread with its worker id.
    handles: Vec<(usize, std::thread::JoinHandle<()>)>,
    backs: Vec<crossbeam_channel::Sender<Pair>>,
    rx: Receiver<Interval>,
    tx: crossbeam_channel::Sender<Interval>,
}

/// What a worker thread runs: `worker::run` (a test may give a worker that fails).
pub type WorkerBody = fn(worker::WorkerPlan);

/// Runs the plan to the end, publishing snapshots as it goes, and returns what was measured.
pub fn run(plan: EnginePlan, steer: Steering, publish: &mut dyn FnMut(Snapshot)) -> RunResult {
    run_with(plan, steer, publish, worker::run)
}

/// As `run`, each worker thread running `body`. A worker that panics ends the run: the
/// others stop, the abort reason says which worker failed and why (`AbortReason::WorkerFailed`),
/// and the result holds what was measured until then (see `supervised`).
pub fn run_with(
    mut plan: EnginePlan,
    steer: Steering,
    publish: &mut dyn FnMut(Snapshot),
    body: WorkerBody,
) -> RunResult {
    let second_log = plan.second_log.take();
    let threads = plan.threads.max(1);
    let connections = plan.connections.max(threads);
    let abort = Arc::new(Abort::default());
    // Ctrl-C or SIGTERM: stop sending, wait for what is in flight, and still report.
    let signalled = Arc::new(AtomicBool::new(false));
    let signals: Vec<_> = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
        .into_iter()
        .filter_map(|sig| signal_hook::flag::register(sig, signalled.clone()).ok())
        .collect();
    let start = Instant::now();
    let start_wall_ns = crate::generate::time::now();
    steer.cell.begin(start);
    let starts = (start, plan.stamp_sent.then_some(start_wall_ns));
    let mut workers = spawn_workers(
        &plan,
        (threads, connections),
        starts,
        (&steer.cell, &abort),
        body,
    );
    if let Some(sp) = plan.scenario.take() {
        spawn_lane(&plan, sp, starts, (&steer.cell, &abort), &mut workers, body);
    }
    let mut co = Coordinator {
        plan: &plan,
        cell: &steer.cell,
        abort: &abort,
        merger: Merger::new(threads, plan.warmup.as_secs_f64().ceil() as usize)
            .with_log(second_log),
        sched: steer.cell.schedule(),
        seq: 0,
        start,
        lane: workers.lane.map(|_| Merger::new(1, 0)),
        lane_events: workers.lane_events,
        last_seen: Vec::with_capacity(threads + 1),
    };
    let mut interrupted = false;
    let mut last_publish = start;
    let (mut last_check, mut ending) = (start, None::<Instant>);
    let mut gave_up = false;
    loop {
        let mut poked = false;
        crossbeam_channel::select! {
            recv(workers.rx) -> iv => match iv {
                Ok(iv) => co.add(iv, &workers),
                Err(_) => break,
            },
            recv(steer.poke) -> _ => poked = true,
            default(Duration::from_millis(200)) => {}
        }
        if signalled.load(Ordering::Relaxed) && !interrupted {
            interrupted = true;
            let _ = steer.cell.request_stop(false);
        }
        if co.merger.all_done() && co.lane.as_ref().is_none_or(Merger::all_done) {
            break;
        }
        if last_check.elapsed() >= Duration::from_millis(200) {
            last_check = Instant::now();
            if co.lost_workers(&workers) {
                break;
            }
            // Workers get the drain and `STOP_GRACE` to end once the run is ending.
            let now_s = start.elapsed().as_secs_f64();
            if ending.is_none() && co.state(now_s, false) == RunState::Draining {
                ending = Some(last_check);
            }
            if ending.is_some_and(|t| t.elapsed() > plan.timeouts.drain + STOP_GRACE) {
                co.give_up_on(&workers);
                gave_up = true;
                break;
            }
        }
        if poked || last_publish.elapsed() >= SNAPSHOT_EVERY {
            last_publish = Instant::now();
            publish(co.snapshot(false));
        }
    }
    for (_, h) in workers.handles {
        // A worker given up on is left behind (the process ends with the command).
        if !gave_up || h.is_finished() {
            let _ = h.join();
        }
    }
    for id in signals {
        signal_hook::low_level::unregister(id);
    }
    steer.cell.finish();
    if interrupted {
        abort.set(AbortReason::Interrupted);
    } else if steer.cell.stop_requested() {
        abort.set(AbortReason::Stopped);
    }
    co.sched = steer.cell.schedule();
    let sched = co.sched.clone();
    let end = co.window_end(f64::INFINITY);
    co.merger.finish(|t| second_target(&sched, t, end));
    publish(co.snapshot(true));
    co.result(connections)
}

fn spawn_workers(
    plan: &EnginePlan,
    (threads, connections): (usize, usize),
    (start, start_wall_ns): (Instant, Option<i64>),
    (cell, abort): (&Arc<ScheduleCell>, &Arc<Abort>),
    body: WorkerBody,
) -> Workers {
    let cores = if plan.pin {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    let (tx, rx) = crossbeam_channel::bounded::<Interval>(threads * 8);
    let mut backs = Vec::new();
    let mut handles = Vec::new();
    for id in 0..threads {
        let (btx, brx) = recycled();
        backs.push(btx);
        let Some(poll) = poller(cell, abort) else {
            continue;
        };
        let wp = worker::WorkerPlan {
            wire: plan.wire.clone(),
            id,
            agent: plan.agent_base + id as u32,
            threads,
            core: cores.get(id % cores.len().max(1)).cloned(),
            addr: plan.addr,
            unix: plan.unix.clone(),
            targets: plan.targets.clone(),
            conns: connections / threads + usize::from(id < connections % threads),
            share: 1.0 / threads as f64,
            schedule: cell.clone(),
            stop_after: match plan.stop {
                Stop::After(d) => Some(d),
                Stop::Total(_) => None,
            },
            total: match plan.stop {
                Stop::Total(t) => {
                    Some(t / threads as u64 + u64::from((id as u64) < t % threads as u64))
                }
                Stop::After(_) => None,
            },
            batch_events: plan.batch_events,
            batch_bytes: plan.batch_bytes,
            generators: plan.generators(true),
            mix: plan.mix.as_ref().map(|m| Mix {
                picker: Picker::new(&m.shares, m.cycle),
                wire: m.wire.clone(),
            }),
            replay: plan.replay.as_ref().map(|r| r.for_worker(id)),
            timeline: plan.timeline.clone(),
            start,
            start_wall_ns,
            poll,
            tx: tx.clone(),
            back: brx,
            abort: abort.clone(),
            timeouts: plan.timeouts,
            warmup_s: plan.warmup.as_secs_f64().ceil() as u32,
            request_every: plan
                .max_requests_per_sec
                .filter(|r| *r > 0.0)
                .map(|r| crate::clock::secs(threads as f64 / r)),
            lane: None,
        };
        let h = std::thread::Builder::new()
            .name(format!("ingestbench-w{id}"))
            .spawn(move || supervised(body, wp));
        match h {
            Ok(h) => handles.push((id, h)),
            Err(e) => abort.set(AbortReason::Io(format!("cannot start worker thread: {e}"))),
        }
    }
    Workers {
        lane: None,
        lane_events: 0,
        handles,
        backs,
        rx,
        tx,
    }
}

/// Runs `body(wp)` on this worker thread. If it panics, the run ends: the abort reason names
/// the worker and the panic, which stops the other workers (they send their last intervals as
/// at any abort), and this worker's last interval is sent for it — empty: what it measured
/// since its last interval is lost with it — so the coordinator does not wait for it. A
/// process never outlives a dead worker, and the report keeps what was measured.
fn supervised(body: WorkerBody, wp: worker::WorkerPlan) {
    let (id, tx, abort) = (wp.id, wp.tx.clone(), wp.abort.clone());
    let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || body(wp))) else {
        return;
    };
    let why = e
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    abort.set(AbortReason::WorkerFailed(format!(
        "worker thread {id} panicked: {why}"
    )));
    let _ = tx.send(Interval::lost(id));
}

/// The channel on which a worker gets its histograms back, primed with a pair to swap.
fn recycled() -> (crossbeam_channel::Sender<Pair>, Receiver<Pair>) {
    let (tx, rx) = crossbeam_channel::bounded(4);
    for _ in 0..2 {
        let _ = tx.send(Pair::new());
    }
    (tx, rx)
}

/// A worker's poller, with a waker the schedule cell rings; none (and the run aborted) when
/// the system refuses either.
fn poller(cell: &ScheduleCell, abort: &Abort) -> Option<mio::Poll> {
    let poll = match mio::Poll::new() {
        Ok(p) => p,
        Err(e) => {
            abort.set(AbortReason::Io(format!("cannot create a poller: {e}")));
            return None;
        }
    };
    match mio::Waker::new(poll.registry(), worker::WAKE) {
        Ok(w) => cell.add_waker(Arc::new(w)),
        Err(e) => {
            abort.set(AbortReason::Io(format!("cannot create a waker: {e}")));
            return None;
        }
    }
    Some(poll)
}

/// Starts the scenario lane: one more worker (id `threads`, its own accounting agent) with
/// one connection, playing the scenario's events at their times.
fn spawn_lane(
    plan: &EnginePlan,
    sp: ScenarioPlan,
    (start, start_wall_ns): (Instant, Option<i64>),
    (cell, abort): (&Arc<ScheduleCell>, &Arc<Abort>),
    workers: &mut Workers,
    body: WorkerBody,
) {
    let id = plan.threads.max(1);
    let player = Player::new(sp.scenario, &plan.run_id, sp.anchor);
    let lane = Lane::new(player, sp.wire);
    let events = lane.len();
    let Some(poll) = poller(cell, abort) else {
        return;
    };
    let (btx, brx) = recycled();
    let wp = worker::WorkerPlan {
        wire: plan.wire.clone(),
        id,
        agent: plan.agent_base + id as u32,
        threads: plan.threads.max(1),
        core: None,
        addr: plan.addr,
        unix: plan.unix.clone(),
        targets: plan.targets.clone(),
        conns: 1,
        share: 0.0,
        schedule: cell.clone(),
        stop_after: None,
        total: Some(events),
        batch_events: plan.batch_events,
        batch_bytes: plan.batch_bytes,
        generators: plan.generators(false),
        mix: None,
        replay: None,
        timeline: plan.timeline.clone(),
        start,
        start_wall_ns,
        poll,
        tx: workers.tx.clone(),
        back: brx,
        abort: abort.clone(),
        timeouts: plan.timeouts,
        // The scenario lane is counted apart, warm-up and all.
        warmup_s: 0,
        request_every: None,
        lane: Some(lane),
    };
    match std::thread::Builder::new()
        .name("ingestbench-scenario".into())
        .spawn(move || supervised(body, wp))
    {
        Ok(h) => {
            workers.handles.push((id, h));
            workers.backs.push(btx);
            workers.lane = Some(id);
            workers.lane_events = events;
        }
        Err(e) => abort.set(AbortReason::Io(format!(
            "cannot start the scenario thread: {e}"
        ))),
    }
}

/// Events due in second `t` of the window ending at `end`, counted whole as the workers send
/// them (a row never sends more than its target); `None` in a closed loop.
fn second_target(s: &Schedule, t: u32, end: f64) -> Option<f64> {
    if s.is_closed() {
        return None;
    }
    let (a, b) = (f64::from(t).min(end), (f64::from(t) + 1.0).min(end));
    Some(pacer::whole_events(s.due(b)) - pacer::whole_events(s.due(a)))
}

struct Coordinator<'a> {
    plan: &'a EnginePlan,
    cell: &'a ScheduleCell,
    abort: &'a Abort,
    merger: Merger,
    sched: Schedule,
    seq: u64,
    start: Instant,
    /// The scenario lane's intervals, folded apart from the background's, and its events.
    lane: Option<Merger>,
    lane_events: u64,
    /// The workers whose last interval has come.
    last_seen: Vec<usize>,
}

impl Coordinator<'_> {
    /// A worker thread that has ended without sending its last interval (one that died some
    /// other way than a panic `supervised` caught) aborts the run, naming it, and its last
    /// interval is taken as empty so the coordinator does not wait for it. True once every
    /// worker thread has ended.
    fn lost_workers(&mut self, workers: &Workers) -> bool {
        let ended: Vec<usize> = workers
            .handles
            .iter()
            .filter(|(id, h)| h.is_finished() && !self.last_seen.contains(id))
            .map(|(id, _)| *id)
            .collect();
        if ended.is_empty() {
            return workers.handles.iter().all(|(_, h)| h.is_finished());
        }
        // What they sent before they ended is still in the channel.
        while let Ok(iv) = workers.rx.try_recv() {
            self.add(iv, workers);
        }
        for id in ended {
            if !self.last_seen.contains(&id) {
                self.abort.set(AbortReason::WorkerFailed(format!(
                    "worker thread {id} ended without its last interval"
                )));
                self.add(Interval::lost(id), workers);
            }
        }
        workers.handles.iter().all(|(_, h)| h.is_finished())
    }

    /// The workers that have not sent their last interval long after the run should have
    /// ended: the run is aborted naming them and their last intervals are taken as empty.
    fn give_up_on(&mut self, workers: &Workers) {
        while let Ok(iv) = workers.rx.try_recv() {
            self.add(iv, workers);
        }
        let late: Vec<usize> = workers
            .handles
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| !self.last_seen.contains(id))
            .collect();
        for id in late {
            self.abort.set(AbortReason::WorkerFailed(format!(
                "worker thread {id} did not stop within {:.0} s of the run's end",
                (self.plan.timeouts.drain + STOP_GRACE).as_secs_f64()
            )));
            self.add(Interval::lost(id), workers);
        }
    }

    fn add(&mut self, iv: Interval, workers: &Workers) {
        if iv.last {
            self.last_seen.push(iv.worker);
        }
        if let (Some(id), Some(m)) = (workers.lane, self.lane.as_mut())
            && iv.worker == id
        {
            let (_, back) = m.add(iv, |_| Some(0.0));
            if let Some(b) = workers.backs.get(id) {
                let _ = b.try_send(back);
            }
            return;
        }
        self.sched = self.cell.schedule();
        let end = self.window_end(f64::INFINITY);
        let sched = &self.sched;
        let (w, back) = self.merger.add(iv, |t| second_target(sched, t, end));
        if let Some(b) = workers.backs.get(w) {
            let _ = b.try_send(back);
        }
    }

    fn stop_after_s(&self) -> Option<f64> {
        match self.plan.stop {
            Stop::After(d) => Some(d.as_secs_f64()),
            Stop::Total(_) => None,
        }
    }

    fn total(&self) -> Option<u64> {
        match self.plan.stop {
            Stop::Total(t) => Some(t),
            Stop::After(_) => None,
        }
    }

    fn state(&self, now_s: f64, finished: bool) -> RunState {
        let sched_over = match self.plan.stop {
            Stop::After(d) => self.sched.active(now_s) >= d.as_secs_f64(),
            Stop::Total(t) => self.merger.totals.events_sent >= t,
        };
        if finished {
            RunState::Finished
        } else if self.cell.stop_requested() || self.abort.is_set() || sched_over {
            RunState::Draining
        } else if self.sched.paused_at(now_s) {
            RunState::Paused
        } else {
            RunState::Running
        }
    }

    fn snapshot(&mut self, finished: bool) -> Snapshot {
        self.sched = self.cell.schedule();
        self.seq += 1;
        let now_s = self.start.elapsed().as_secs_f64();
        let mut snap = live::snapshot(
            &self.merger,
            live::LiveState {
                info: &self.plan.info,
                seq: self.seq,
                state: self.state(now_s, finished),
                now_s,
                window_end_s: self.window_end(now_s),
                schedule: &self.sched,
                stop_after_s: self.stop_after_s(),
                total_events: self.total(),
                control: self.cell.marks(),
                aborted: self.abort.reason().map(|a| a.to_string()),
            },
        );
        snap.scenario = self.lane.as_ref().map(|m| ScenarioNow {
            events: self.lane_events,
            events_sent: m.totals.events_sent,
            events_accepted: m.totals.events_accepted,
            events_failed: m.totals.events_failed,
        });
        snap
    }

    /// Where the schedule's window ends, seconds after the start: at a stop request, or when
    /// the schedule ran out, or now.
    fn window_end(&self, now_s: f64) -> f64 {
        let mut end = now_s;
        if let Some(t) = self.cell.stopped_at() {
            end = end.min(t);
        }
        let sched_end = match self.plan.stop {
            Stop::After(d) => self.sched.time_at_active(d.as_secs_f64()),
            // A closed loop's count is done when it is answered, not at a scheduled instant.
            Stop::Total(_) if self.sched.is_closed() => None,
            Stop::Total(n) => self.sched.time_for(n as f64),
        };
        if let Some(t) = sched_end {
            end = end.min(t);
        }
        end
    }

    /// Events the schedule asks of the workers in all by `t`: the whole events due (the
    /// workers deal them out in turn, `pacer::dealt`), capped by the total.
    fn due_by(&self, t: f64) -> f64 {
        let due = pacer::whole_events(self.sched.due(t));
        match self.plan.stop {
            Stop::Total(n) => due.min(n as f64),
            Stop::After(_) => due,
        }
    }

    fn result(self, connections: usize) -> RunResult {
        let duration = self.start.elapsed();
        let secs = duration.as_secs_f64();
        let end = self.window_end(secs);
        // The measured window starts after the warm-up (whole seconds, as the rows are).
        let warm = (self.plan.warmup.as_secs_f64().ceil()).min(end);
        // A closed loop asks for nothing beyond what it sends: its target is what it sent.
        let target_events = if self.sched.is_closed() {
            self.merger.measured.events_sent as f64
        } else {
            self.due_by(end) - self.due_by(warm)
        };
        let paused = (secs - self.sched.active(secs)).max(0.0);
        let window = crate::clock::secs(self.sched.active(end) - self.sched.active(warm));
        let drain = crate::clock::secs(secs - end);
        let lane_events = self.lane_events;
        let scenario = self.lane.map(|mut l| LaneResult {
            events: lane_events,
            totals: l.totals,
            latency: l.latency,
            service: l.service,
            account: l.agents.pop(),
        });
        let m = self.merger;
        RunResult {
            duration,
            threads: self.plan.threads.max(1),
            connections,
            totals: m.measured,
            all_totals: m.totals,
            answered_in_window: m.answered_in_window,
            latency: m.measured_latency,
            service: m.measured_service,
            warmup: crate::clock::secs(warm),
            seconds: merge::rows(m.seconds, &m.late),
            abort: self.abort.reason(),
            target_events,
            window,
            drain,
            paused: crate::clock::secs(paused),
            control: self.cell.marks(),
            agents: m.agents,
            phases: m.phases,
            sources: m.sources,
            targets: m.targets,
            item_errors: m.item_errors,
            scenario,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine plan of `threads` workers for a run of 30 s to a port nothing listens on:
    /// the worker bodies below never connect, so only the coordinator is under test.
    fn plan(threads: usize) -> EnginePlan {
        let store = crate::config::secrets::Store::new("/nonexistent/store".into());
        let text = "schema_version: \"1.0\"\ntarget: { adapter: http, url: \"http://127.0.0.1:9/\" }\nworkload: { eps: 10, stop: { after: 30s } }\n";
        let cfg = crate::config::load_str(text, &store, None)
            .config
            .expect("valid");
        let framer = crate::adapter::Framer::new(
            &cfg.target,
            None,
            "127.0.0.1:9",
            "/",
            crate::pack::load::Carrier::Line,
            "",
            "r-000000000001",
        );
        EnginePlan {
            stamp_sent: false,
            wire: WirePlan::Http {
                framer: Arc::new(framer),
                tls: None,
            },
            addr: SocketAddr::from(([127, 0, 0, 1], 9)),
            unix: None,
            targets: Vec::new(),
            threads,
            connections: threads,
            stop: Stop::After(Duration::from_secs(30)),
            batch_events: 1,
            batch_bytes: 1024,
            packs: Vec::new(),
            mix: None,
            replay: None,
            seed: 1,
            agent_base: 0,
            run_id: "r-000000000001".into(),
            timeline: Timeline::Realtime,
            jitter_ns: 0,
            timeouts: Timeouts {
                request: Duration::from_secs(1),
                drain: Duration::from_secs(1),
                max_attempts: 1,
                max_retry_time: Duration::from_secs(1),
            },
            warmup: Duration::ZERO,
            max_requests_per_sec: None,
            pin: false,
            info: RunInfo::default(),
            second_log: None,
            scenario: None,
        }
    }

    /// A worker that sends one interval of 7 events, then waits for the run to end (as a
    /// real worker does at an abort or a stop) and sends its last.
    fn steady(wp: worker::WorkerPlan) {
        let mut iv = Interval::lost(wp.id);
        iv.last = false;
        iv.counters.events_sent = 7;
        let _ = wp.tx.send(iv);
        let until = Instant::now() + Duration::from_secs(60);
        while !wp.abort.is_set() && !wp.schedule.stop_requested() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = wp.tx.send(Interval::lost(wp.id));
    }

    /// Worker 0 panics at once; the others are steady.
    fn first_panics(wp: worker::WorkerPlan) {
        #[allow(clippy::panic)]
        if wp.id == 0 {
            panic!("injected failure");
        }
        steady(wp);
    }

    /// Worker 0's thread ends without a word; the others are steady.
    fn first_vanishes(wp: worker::WorkerPlan) {
        if wp.id != 0 {
            steady(wp);
        }
    }

    /// Runs `plan(3)` with `body` on a thread of its own; the result, or `None` when the run
    /// has not ended within 20 s (the hang the coordinator must never fall into).
    fn run_bounded(body: WorkerBody) -> Option<RunResult> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            let p = plan(3);
            let cell = ScheduleCell::new(pacer::Profile::Steady { eps: 10.0 });
            let (_poke_tx, poke) = crossbeam_channel::bounded(1);
            let r = run_with(p, Steering { cell, poke }, &mut |_| {}, body);
            let _ = tx.send(r);
        });
        rx.recv_timeout(Duration::from_secs(20)).ok()
    }

    #[test]
    fn a_worker_that_panics_ends_the_run_with_what_was_measured() {
        let t0 = Instant::now();
        let r = run_bounded(first_panics).expect("the run ended instead of hanging");
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        match &r.abort {
            Some(AbortReason::WorkerFailed(m)) => {
                assert!(
                    m.contains("worker thread 0 panicked: injected failure"),
                    "{m}"
                );
            }
            other => panic!("abort reason {other:?}"),
        }
        assert_eq!(
            r.totals.events_sent, 14,
            "the two live workers' 7 events each"
        );
        assert_eq!(
            r.abort.as_ref().map(ToString::to_string).as_deref(),
            Some("worker failed: worker thread 0 panicked: injected failure")
        );
    }

    /// Lets `never_stops` workers go at the end of the test that holds them.
    static RELEASE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// Worker 0 never stops (nor answers a stop); the others are steady.
    fn first_never_stops(wp: worker::WorkerPlan) {
        if wp.id != 0 {
            return steady(wp);
        }
        while !RELEASE.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_worker_that_never_stops_is_given_up_on_after_the_drain() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let t0 = Instant::now();
        std::thread::spawn(move || {
            let p = plan(3);
            let cell = ScheduleCell::new(pacer::Profile::Steady { eps: 10.0 });
            let stopper = cell.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                let _ = stopper.request_stop(false);
            });
            let (_poke_tx, poke) = crossbeam_channel::bounded(1);
            let r = run_with(p, Steering { cell, poke }, &mut |_| {}, first_never_stops);
            let _ = tx.send(r);
        });
        let r = rx.recv_timeout(Duration::from_secs(20));
        RELEASE.store(true, Ordering::Relaxed);
        let r = r.expect("the run ended instead of hanging");
        // A stop at 0.3 s, the plan's 1 s drain and STOP_GRACE.
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert!(
            matches!(&r.abort, Some(AbortReason::WorkerFailed(m)) if m.contains("worker thread 0 did not stop within 6 s")),
            "{:?}",
            r.abort
        );
        assert_eq!(r.totals.events_sent, 14);
    }

    #[test]
    fn a_worker_thread_that_ends_without_its_last_interval_ends_the_run() {
        let r = run_bounded(first_vanishes).expect("the run ended instead of hanging");
        assert!(
            matches!(&r.abort, Some(AbortReason::WorkerFailed(m)) if m.contains("without its last interval")),
            "{:?}",
            r.abort
        );
    }
}
