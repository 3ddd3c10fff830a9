//! The thread ("ingestbench-faults") that carries a fault timeline out: it waits for the
//! run's second 0, then takes each begin and end at its time (ends before begins at the same
//! instant), records what it did (`FaultRecord`) and marks it on the run's timeline. When
//! the run ends first, every fault still in force is lifted at once (a stalled process is
//! continued, a storm's faults restored) and what never came is an error: the run did not do
//! what it was asked. It owns the launched target while it runs (a kill or restart replaces
//! it) and gives it back, as it is then, in `Finished`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::{Act, FaultRecord, Planned, SinkAt, Subject};
use crate::engine::schedule::Control;
use crate::observe::{self, Follower, LaunchSpec, Launched, Stopped};
use crate::sink::{FaultKnob, Faults};

/// How long a process the run did not start gets between SIGTERM and SIGKILL on a restart.
const FOREIGN_GRACE: Duration = Duration::from_secs(5);
/// Bound of each call to a standalone sink's `/_faults`.
const SINK_TIMEOUT: Duration = Duration::from_secs(5);

/// The run's launched target and how to start it again.
pub struct TargetProcess {
    /// `None` while a kill has left it dead.
    pub current: Option<Launched>,
    pub spec: LaunchSpec,
    pub grace: Duration,
}

/// What the runner acts through.
pub struct Tools {
    pub control: Control,
    pub launched: Option<TargetProcess>,
    /// The built-in sink's faults, when it is the target.
    pub sink: Option<FaultKnob>,
    /// Adds a restarted process to what the run watches.
    pub follower: Option<Follower>,
}

/// What the runner gives back when the run is over.
pub struct Finished {
    pub records: Vec<FaultRecord>,
    /// The launched target as it is now (a restarted one has a new PID); `None` when a kill
    /// left it dead: then `killed` says how it ended.
    pub launched: Option<Launched>,
    pub killed: Option<(u32, Stopped)>,
    /// Processes restarts started from a command given in the fault (stopped with the run).
    pub started: Vec<Launched>,
}

/// A fault timeline being carried out (or, when its thread could not start, the records
/// saying so: every fault then fails the run).
pub struct Runner {
    running: Result<(Sender<()>, std::thread::JoinHandle<Finished>), Vec<FaultRecord>>,
}

impl Runner {
    pub fn start(plan: Vec<Planned>, tools: Tools) -> Runner {
        let (stop, rx) = crossbeam_channel::bounded(1);
        let state = State::new(plan.clone(), tools);
        let running = std::thread::Builder::new()
            .name("ingestbench-faults".into())
            .spawn(move || state.run(&rx))
            .map(|t| (stop, t))
            .map_err(|e| State::untaken(&plan, &format!("cannot start the fault timeline: {e}")));
        Runner { running }
    }

    /// The run is over: lifts what is still in force and gives everything back.
    pub fn finish(self) -> Finished {
        let failed = |records| Finished {
            records,
            launched: None,
            killed: None,
            started: Vec::new(),
        };
        match self.running {
            Ok((stop, thread)) => {
                let _ = stop.try_send(());
                thread.join().unwrap_or_else(|_| {
                    failed(vec![FaultRecord {
                        error: Some("the fault timeline's thread panicked".into()),
                        ..FaultRecord::default()
                    }])
                })
            }
            Err(records) => failed(records),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    End,
    Begin,
}

/// What a fault in force needs to be lifted.
enum Lift {
    None,
    Continue(Vec<u32>),
    Restore(Faults),
}

struct State {
    plan: Vec<Planned>,
    records: Vec<FaultRecord>,
    lifts: Vec<Lift>,
    tools: Tools,
    killed: Option<(u32, Stopped)>,
    /// The launched target's log: a restart appends to it.
    log: Option<PathBuf>,
    started: Vec<Launched>,
    start: Instant,
}

#[allow(
    clippy::indexing_slicing,
    reason = "a fault index i comes from steps() or 0..plan.len(), and records and lifts are \
              built with one entry per planned fault (State::new) and never resized"
)]
impl State {
    /// The records of faults not taken yet.
    fn records(plan: &[Planned]) -> Vec<FaultRecord> {
        plan.iter()
            .map(|p| FaultRecord {
                index: p.index,
                action: p.action.name().to_string(),
                target: p.target.clone(),
                at_s: p.at.as_secs_f64(),
                for_s: p.act.lasts().map(|d| d.as_secs_f64()),
                ..FaultRecord::default()
            })
            .collect()
    }

    /// Every fault of `plan`, never taken, for `why`.
    fn untaken(plan: &[Planned], why: &str) -> Vec<FaultRecord> {
        let mut records = State::records(plan);
        for r in &mut records {
            r.error = Some(why.to_string());
        }
        records
    }

    fn new(plan: Vec<Planned>, tools: Tools) -> State {
        let records = State::records(&plan);
        let lifts = plan.iter().map(|_| Lift::None).collect();
        let log = tools
            .launched
            .as_ref()
            .and_then(|l| l.current.as_ref())
            .map(|l| l.log_path().to_path_buf());
        State {
            plan,
            records,
            lifts,
            tools,
            killed: None,
            log,
            started: Vec::new(),
            start: Instant::now(),
        }
    }

    /// Every begin and end, in the order they are due.
    fn steps(&self) -> Vec<(Duration, Phase, usize)> {
        let mut steps = Vec::with_capacity(self.plan.len() * 2);
        for (i, p) in self.plan.iter().enumerate() {
            steps.push((p.at, Phase::Begin, i));
            if let Some(d) = p.act.lasts() {
                steps.push((p.at + d, Phase::End, i));
            }
        }
        steps.sort();
        steps
    }

    fn run(mut self, stop: &Receiver<()>) -> Finished {
        if self.wait_for_start(stop) {
            for (t, phase, i) in self.steps() {
                let wait = (self.start + t).saturating_duration_since(Instant::now());
                match stop.recv_timeout(wait) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                }
                match phase {
                    Phase::Begin => self.begin(i),
                    Phase::End => self.end(i),
                }
            }
        }
        self.lift_all();
        Finished {
            records: self.records,
            launched: self.tools.launched.and_then(|l| l.current),
            killed: self.killed,
            started: self.started,
        }
    }

    /// Waits for the run's second 0; false when the run ended first.
    fn wait_for_start(&mut self, stop: &Receiver<()>) -> bool {
        loop {
            if let Some(s) = self.tools.control.started_at() {
                self.start = s;
                return true;
            }
            match stop.recv_timeout(Duration::from_millis(1)) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The run is over: faults in force are lifted now, those never taken are errors.
    fn lift_all(&mut self) {
        for i in 0..self.plan.len() {
            let r = &self.records[i];
            if r.began_s.is_none() && r.error.is_none() {
                self.records[i].error = Some(format!(
                    "never taken: the run ended before {}s",
                    self.records[i].at_s
                ));
            } else if r.began_s.is_some() && r.ended_s.is_none() && r.error.is_none() {
                self.end(i);
                self.records[i]
                    .notes
                    .push("lifted early: the run ended while it was in force".into());
            }
        }
    }

    fn fail(&mut self, i: usize, why: impl Into<String>) {
        let r = &mut self.records[i];
        if r.error.is_none() {
            r.error = Some(why.into());
        }
    }

    fn mark(&mut self, i: usize, action: &'static str, detail: Option<String>) {
        if self.tools.control.note(action, detail).is_err() {
            self.records[i]
                .notes
                .push(format!("{action}: the run had ended, not marked"));
        }
    }

    fn begin(&mut self, i: usize) {
        self.records[i].began_s = Some(self.now_s());
        let act = self.plan[i].act.clone();
        let done = match &act {
            Act::Stall { who, .. } => self.stall(i, who),
            Act::Kill { who, .. } => self.kill(i, who),
            Act::Restart { who, command } => self.restart(i, who, command.as_ref()),
            Act::Storm { sink, faults, .. } => self.storm(i, sink, *faults),
            Act::Cut => self
                .tools
                .control
                .cut()
                .map_err(|e| format!("cannot cut: {e}")),
            Act::Pause { .. } => self
                .tools
                .control
                .pause()
                .map_err(|e| format!("cannot pause: {e}")),
        };
        match done {
            Err(e) => self.fail(i, e),
            Ok(()) if act.lasts().is_none() && self.records[i].ended_s.is_none() => {
                self.records[i].ended_s = self.records[i].began_s;
            }
            Ok(()) => {}
        }
    }

    fn end(&mut self, i: usize) {
        if self.records[i].began_s.is_none() || self.records[i].error.is_some() {
            return;
        }
        let act = self.plan[i].act.clone();
        let done = match (&act, std::mem::replace(&mut self.lifts[i], Lift::None)) {
            (Act::Stall { .. }, Lift::Continue(pids)) => {
                self.signal_all(i, &pids, libc::SIGCONT);
                self.mark(i, "stall-end", None);
                Ok(())
            }
            (Act::Storm { sink, .. }, Lift::Restore(prev)) => self.set_sink(sink, prev).map(|()| {
                self.mark(i, "storm-end", None);
            }),
            (
                Act::Kill {
                    who, restart: cmd, ..
                },
                _,
            ) => self.restart(i, who, cmd.as_ref()),
            (Act::Pause { .. }, _) => match self.tools.control.resume() {
                Ok(()) => Ok(()),
                Err(e) => {
                    self.records[i].notes.push(format!("resume: {e}"));
                    Ok(())
                }
            },
            _ => Ok(()),
        };
        if let Err(e) = done {
            self.fail(i, e);
        }
        if self.records[i].ended_s.is_none() {
            self.records[i].ended_s = Some(self.now_s());
        }
    }

    /// The PIDs a process target stands for now.
    fn pids(&self, who: &Subject) -> Result<Vec<u32>, String> {
        match who {
            Subject::Launched => match self
                .tools
                .launched
                .as_ref()
                .and_then(|l| l.current.as_ref())
            {
                Some(l) => Ok(vec![l.pid()]),
                None => Err("the launched target is not running (killed earlier)".into()),
            },
            Subject::Pid(p) => {
                if observe::alive(*p) {
                    Ok(vec![*p])
                } else {
                    Err(format!("no process {p}"))
                }
            }
            Subject::Name(n) => {
                let pids = observe::pids_named(n);
                if pids.is_empty() {
                    Err(format!("no process named {n}"))
                } else {
                    Ok(pids)
                }
            }
        }
    }

    /// Sends `sig` to each PID (the launched target: to its process group); notes failures.
    fn signal_all(&mut self, i: usize, pids: &[u32], sig: libc::c_int) -> bool {
        let mut all = true;
        for &pid in pids {
            let ours = self
                .tools
                .launched
                .as_mut()
                .and_then(|l| l.current.as_mut())
                .filter(|l| l.pid() == pid);
            let ok = match ours {
                Some(l) => l.signal(sig),
                None => send(pid, sig),
            };
            if !ok {
                all = false;
                self.records[i]
                    .notes
                    .push(format!("signal {sig} to pid {pid} failed (gone?)"));
            }
        }
        all
    }

    fn stall(&mut self, i: usize, who: &Subject) -> Result<(), String> {
        let pids = self.pids(who)?;
        if !self.signal_all(i, &pids, libc::SIGSTOP) {
            self.signal_all(i, &pids, libc::SIGCONT);
            return Err(format!("cannot stop {}", pid_list(&pids)));
        }
        self.records[i].pids = pids.clone();
        self.mark(i, "stall", Some(pid_list(&pids)));
        self.lifts[i] = Lift::Continue(pids);
        Ok(())
    }

    fn kill(&mut self, i: usize, who: &Subject) -> Result<(), String> {
        let pids = self.pids(who)?;
        self.records[i].pids = pids.clone();
        let ours = (*who == Subject::Launched)
            .then(|| self.tools.launched.as_mut().and_then(|l| l.current.take()))
            .flatten();
        if let Some(l) = ours {
            let pid = l.pid();
            self.killed = Some((pid, l.kill()));
        } else if !pids.iter().all(|&p| send(p, libc::SIGKILL)) {
            return Err(format!("cannot kill {}", pid_list(&pids)));
        }
        self.mark(i, "kill", Some(pid_list(&pids)));
        Ok(())
    }

    /// Stops what is running (gracefully) and starts it again: the launched target from its
    /// own spec, anything else from the command the fault gives.
    fn restart(
        &mut self,
        i: usize,
        who: &Subject,
        command: Option<&LaunchSpec>,
    ) -> Result<(), String> {
        let new = match (who, command) {
            (Subject::Launched, None) => self.restart_launched(i)?,
            (_, Some(cmd)) => {
                if let Ok(pids) = self.pids(who) {
                    self.records[i].pids = pids.clone();
                    self.stop_foreign(i, &pids);
                }
                let l = Launched::start(cmd).map_err(|e| format!("cannot restart: {e}"))?;
                let pid = l.pid();
                self.started.push(l);
                pid
            }
            (_, None) => return Err("no command to restart it with".into()),
        };
        if let Some(f) = &self.tools.follower {
            f.follow(new);
        }
        self.records[i].new_pid = Some(new);
        self.records[i].ended_s = Some(self.now_s());
        self.mark(i, "restart", Some(format!("pid {new}")));
        Ok(())
    }

    /// The launched target again, its output appended to its log; its new PID.
    fn restart_launched(&mut self, i: usize) -> Result<u32, String> {
        let log = self.log.clone();
        let Some(t) = self.tools.launched.as_mut() else {
            return Err("there is no launched target".into());
        };
        if let Some(old) = t.current.take() {
            let pid = old.pid();
            let st = old.stop(t.grace);
            self.records[i].pids = vec![pid];
            self.records[i]
                .notes
                .push(format!("stopped pid {pid}: {}", st.describe()));
        }
        let new = match &log {
            Some(path) => Launched::restart(&t.spec, path),
            None => Launched::start(&t.spec),
        }
        .map_err(|e| format!("cannot restart the launched target: {e}"))?;
        let pid = new.pid();
        t.current = Some(new);
        self.killed = None;
        Ok(pid)
    }

    /// SIGTERM to processes the run did not start, SIGKILL to those still there after
    /// `FOREIGN_GRACE`.
    fn stop_foreign(&mut self, i: usize, pids: &[u32]) {
        for &pid in pids {
            send(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + FOREIGN_GRACE;
        while pids.iter().any(|&p| observe::alive(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for &pid in pids.iter().filter(|&&p| observe::alive(p)) {
            send(pid, libc::SIGKILL);
            self.records[i]
                .notes
                .push(format!("pid {pid} did not stop on SIGTERM: killed"));
        }
    }

    fn storm(&mut self, i: usize, sink: &SinkAt, faults: Faults) -> Result<(), String> {
        let prev = self.get_sink(sink)?;
        self.set_sink(sink, faults)?;
        self.lifts[i] = Lift::Restore(prev);
        self.mark(i, "storm", Some(storm_text(&faults)));
        Ok(())
    }

    fn get_sink(&self, sink: &SinkAt) -> Result<Faults, String> {
        match sink {
            SinkAt::Builtin => self
                .tools
                .sink
                .as_ref()
                .map(FaultKnob::get)
                .ok_or_else(|| "the built-in sink is not running".to_string()),
            SinkAt::Url(base) => sink_faults(base, None),
        }
    }

    fn set_sink(&self, sink: &SinkAt, f: Faults) -> Result<(), String> {
        match sink {
            SinkAt::Builtin => match &self.tools.sink {
                Some(k) => {
                    k.set(f);
                    Ok(())
                }
                None => Err("the built-in sink is not running".into()),
            },
            SinkAt::Url(base) => sink_faults(base, Some(f)).map(|_| ()),
        }
    }
}

/// kill(2) by PID.
fn send(pid: u32, sig: libc::c_int) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) with a PID the config named and a valid signal.
    unsafe { libc::kill(p, sig) == 0 }
}

fn pid_list(pids: &[u32]) -> String {
    let v: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!("pid {}", v.join(","))
}

/// A storm's faults in a few words, for its timeline mark.
pub fn storm_text(f: &Faults) -> String {
    let mut parts = Vec::new();
    if f.share_429 > 0.0 {
        parts.push(format!("429 {:.0}%", f.share_429 * 100.0));
    }
    if f.share_503 > 0.0 {
        parts.push(format!("503 {:.0}%", f.share_503 * 100.0));
    }
    if (f.share_429 > 0.0 || f.share_503 > 0.0) && f.retry_after_s > 0 {
        parts.push(format!("Retry-After {}s", f.retry_after_s));
    }
    if f.reset_share > 0.0 {
        parts.push(format!("resets {:.0}%", f.reset_share * 100.0));
    }
    if f.latency_ms > 0 {
        parts.push(format!("+{} ms", f.latency_ms));
    }
    if f.stall_share > 0.0 && f.stall_ms > 0 {
        parts.push(format!(
            "{:.0}% held {} ms",
            f.stall_share * 100.0,
            f.stall_ms
        ));
    }
    if parts.is_empty() {
        "no faults".into()
    } else {
        parts.join(", ")
    }
}

/// A standalone sink's faults: read them (`set` None) or set them and read back.
fn sink_faults(base: &str, set: Option<Faults>) -> Result<Faults, String> {
    let url = format!("{base}/_faults");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(SINK_TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let resp = match set {
        None => agent.get(&url).call(),
        Some(f) => agent
            .post(&url)
            .header("content-type", "application/json")
            .send(serde_json::to_string(&f).unwrap_or_default()),
    };
    let mut resp = resp.map_err(|e| format!("sink:{base}: {e}"))?;
    let status = resp.status().as_u16();
    let body = resp
        .body_mut()
        .with_config()
        .limit(1 << 16)
        .read_to_string()
        .map_err(|e| format!("sink:{base}: reading /_faults: {e}"))?;
    if status != 200 {
        return Err(format!("sink:{base}: /_faults answered {status}: {body}"));
    }
    serde_json::from_str(&body)
        .map_err(|e| format!("sink:{base}: /_faults is not an ingestbench sink's answer: {e}"))
}
