//! Carrying a plan out: `prepare` starts the built-in sink when it is the target and builds
//! the engine's plan (framers for the final endpoint, the timeline for the run's start);
//! `execute` runs the engine, adds what the sink has stored to each snapshot before handing it
//! to the `SnapshotCell` and the observers, verifies against the sink, builds the report,
//! asks the config's `verify` stores (`store_verify`), puts every event in its loss stage
//! (with a UDP target's receive-buffer drops, read around the run), writes the report to
//! `observability.report` (and the timeline to `observability.csv`), and decides the exit code
//! (`verdict`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;

use crate::adapter::Framer;
use crate::adapter::relp::DEFAULT_WINDOW;
use crate::adapter::syslog::SyslogFramer;
use crate::config::redact;
use crate::config::schema::Slo;
use crate::config::schema::UdpOrder;
use crate::engine::merge::SecondLog;
use crate::engine::mix::Framings;
use crate::engine::pacer::Profile;
use crate::engine::schedule::Control;
use crate::engine::worker::WirePlan;
use crate::engine::{self, EnginePlan, Steering, Stop};
use crate::engine::{MixPlan, ScenarioPlan};
use crate::exit::Exit;
use crate::generate::time;
use crate::observe::{self, Launched, ObserveError, Watcher, udp_drops};
use crate::report::LaunchedTarget;
use crate::report::faults::OutsideLatency;
use crate::report::hdr_log::SharedHdrLog;
use crate::report::{self, Context, Report, StoreStatus, TargetInfo, Verification, sizing, slo};
use crate::run::error::SetupError;
use crate::run::fault::runner::{self, Runner, Tools};
use crate::run::plan::RunPlan;
use crate::run::plan::ScenarioRun;
use crate::run::target::{self, Destination, Endpoint, Transport};
use crate::run::{Observer, RunOutcome};
use crate::run::{outputs, store_verify};
use crate::sink::{self, SinkHandle, SinkStats};
use crate::stats::new_histogram;
use crate::stats::result::AbortReason;
use crate::stats::snapshot::{RunInfo, Snapshot, SnapshotCell, Stored};
use crate::stats::snapshot::{WatchedNow, WatchedProcess};
use std::time::Duration;

/// A run whose target is up and whose engine plan is built.
pub struct Started {
    pub info: RunInfo,
    hdr_log: Option<SharedHdrLog>,
    sizing: Option<SizingGather>,
    /// The latency outside fault windows, gathered per second (with a fault timeline).
    outside: Option<Arc<Mutex<OutsideLatency>>>,
    /// The target the run launched (`observability.target`), with its stop grace.
    launched: Launch,
    watcher: Option<Watcher>,
    engine: EnginePlan,
    sink: Option<SinkHandle>,
    endpoint: Endpoint,
    started_wall_ns: i64,
    plan: RunPlan,
}

/// What snapshots say the run is (`address` once the endpoint is known).
pub fn run_info(p: &RunPlan, address: Option<&Endpoint>) -> RunInfo {
    RunInfo {
        run_id: p.run_id.clone(),
        name: p.config.name.clone(),
        adapter: p.config.target.adapter.to_string(),
        url: redact::url(&p.config.target.url).into_owned(),
        address: address.map(|e| e.address()).unwrap_or_default(),
        source: p.source_id(),
        threads: p.threads,
        connections: p.connections.max(p.threads),
        duration_s: match p.stop {
            Stop::After(d) => Some(d.as_secs_f64()),
            Stop::Total(_) => None,
        },
        total_events: match p.stop {
            Stop::Total(n) => Some(n),
            Stop::After(_) => None,
        },
    }
}

pub fn prepare(plan: RunPlan) -> Result<Started, SetupError> {
    let (launched, watcher) = watch(&plan)?;
    let (sink, endpoint) = match &plan.destination {
        Destination::Builtin(sc) => {
            let h = sink::start(sc.clone()).map_err(SetupError::Sink)?;
            let ep = target::builtin_endpoint(&h, plan.transport);
            (Some(h), ep)
        }
        Destination::Remote(ep) => (None, ep.clone()),
    };
    let wire = wire(&plan, &endpoint)?;
    let started_wall_ns = time::now();
    let scenario = plan
        .scenario
        .as_ref()
        .map(|sr| scenario_plan(&plan, sr, &endpoint, started_wall_ns));
    let expected_events = match plan.stop {
        Stop::Total(n) => n,
        Stop::After(d) => plan.profile.cumulative(d.as_secs_f64()) as u64,
    };
    let info = run_info(&plan, Some(&endpoint));
    let hdr_log = match output(&plan, &plan.config.observability.hdr_log) {
        Some(path) => Some(open_hdr_log(Path::new(&path), started_wall_ns)?),
        None => None,
    };
    let sizing = SizingGather::of(&plan);
    let outside = outside_latency(&plan);
    let second_log = second_log(hdr_log.clone(), sizing.as_ref(), outside.clone());
    let engine = EnginePlan {
        stamp_sent: plan.config.mode == crate::config::schema::Mode::Realtime,
        wire,
        addr: endpoint.addr,
        unix: endpoint.unix.as_deref().map(std::sync::Arc::from),
        targets: targets_of(&plan, &endpoint),
        threads: plan.threads,
        connections: plan.connections,
        stop: plan.stop,
        batch_events: plan.batch_events,
        batch_bytes: plan.batch_bytes,
        packs: plan.packs.clone(),
        mix: mix_plan(&plan, &endpoint),
        replay: plan.replay.as_ref().map(|r| {
            crate::generate::replay::Replayer::new(
                r.recording.clone(),
                r.times,
                r.looped,
                started_wall_ns,
                plan.config.tagged().then_some(plan.run_id.as_str()),
            )
            .streaming(plan.threads.max(1))
        }),
        seed: plan
            .shard
            .map_or(plan.seed, |s| s.generator_seed(plan.seed)),
        agent_base: agent_base(&plan),
        run_id: plan.run_id.clone(),
        timeline: plan
            .times
            .timeline(started_wall_ns, expected_events, plan.profile.peak()),
        jitter_ns: plan.jitter_ns,
        timeouts: plan.timeouts,
        warmup: plan.config.workload.warmup.0,
        max_requests_per_sec: plan
            .config
            .target
            .limits
            .max_requests_per_sec
            .map(|r| plan.shard.map_or(r, |s| s.rate(r))),
        pin: plan.pin,
        info: info.clone(),
        second_log,
        scenario,
    };
    Ok(Started {
        info,
        hdr_log,
        sizing,
        outside,
        launched,
        watcher,
        engine,
        sink,
        endpoint,
        started_wall_ns,
        plan,
    })
}

/// A launched target and the time it gets between SIGTERM and SIGKILL.
type Launch = Option<(Launched, Duration)>;

/// Launches the target (waiting until its port accepts) and starts watching: the launched
/// target's PID joins what the config and `--watch` name. With nothing named, nothing is
/// watched (ingestbench's own figures come with watched ones, to compare).
fn watch(p: &RunPlan) -> Result<(Launch, Option<Watcher>), SetupError> {
    let launched = match &p.watch.launch {
        Some((spec, grace)) => Some((Launched::start(spec).map_err(observe_error)?, *grace)),
        None => None,
    };
    let mut spec = p.watch.spec.clone();
    if let Some((l, _)) = &launched {
        spec.pids.push(l.pid());
    }
    let nothing = spec.pids.is_empty() && spec.names.is_empty() && spec.cgroups.is_empty();
    if nothing {
        return Ok((launched, None));
    }
    let watcher = Watcher::start(spec, Duration::from_secs(1)).map_err(observe_error)?;
    Ok((launched, Some(watcher)))
}

/// A PID or cgroup that is not there is the config's (2); a target that would not start, the
/// run's (6).
fn observe_error(e: ObserveError) -> SetupError {
    match e {
        ObserveError::NoSuchPid(_) | ObserveError::Cgroup { .. } => {
            SetupError::invalid(format!("observability.watch: {e}"))
        }
        _ => SetupError::Io(format!("observability.target: {e}")),
    }
}

/// The watcher's last interval as the live view shows it.
fn watched_now(s: &observe::Second) -> WatchedNow {
    let proc = |p: &observe::ProcSecond| WatchedProcess {
        pid: p.pid,
        name: p.name.clone(),
        cpu_cores: p.cores,
        cpu_s: p.cpu_s,
        rss_bytes: p.rss_bytes,
        alive: p.alive,
    };
    WatchedNow {
        cpu_cores: s.total.cores,
        rss_bytes: s.total.rss_bytes,
        cpu_s: s.total.cpu_s,
        processes: s.procs.iter().map(proc).collect(),
        own: s.own.as_ref().map(proc),
    }
}

/// The watched seconds as the sizing table takes them: each process and cgroup by name, in
/// the run's seconds (a watcher's interval `t` is the run's second `t - 1`).
fn sizing_seconds(o: &observe::Observed) -> Vec<sizing::WatchedSecond> {
    o.seconds
        .iter()
        .filter(|s| s.t > 0)
        .map(|s| sizing::WatchedSecond {
            t: s.t - 1,
            each: s
                .procs
                .iter()
                .map(|p| (format!("{}[{}]", p.name, p.pid), p.cores, p.rss_bytes))
                .chain(
                    s.cgroups
                        .iter()
                        .map(|c| (c.path.clone(), c.cores, c.memory_bytes)),
                )
                .collect(),
        })
        .collect()
}

/// With a fault timeline, starts carrying it out: the runner takes the launched target (a
/// kill or restart replaces it) and gives it back when the run is over.
fn start_faults(
    p: &RunPlan,
    control: Control,
    launched: Launch,
    sink: Option<&SinkHandle>,
    watcher: Option<&Watcher>,
) -> (Option<Runner>, Launch) {
    if p.faults.is_empty() {
        return (None, launched);
    }
    let spec = p.watch.launch.as_ref().map(|(spec, _)| spec.clone());
    let tools = Tools {
        control,
        launched: launched
            .zip(spec)
            .map(|((l, grace), spec)| runner::TargetProcess {
                current: Some(l),
                spec,
                grace,
            }),
        sink: sink.map(SinkHandle::fault_knob),
        follower: watcher.map(Watcher::follower),
    };
    (Some(Runner::start(p.faults.clone(), tools)), None)
}

/// Stops the launched target by PID and says how it ended; `exited_early` when the watcher
/// saw it gone before the stop (a kill the fault timeline made is not that: `killed` then
/// says how it ended, and nothing is left to stop).
fn stop_launched(
    launched: Launch,
    killed: Option<(u32, observe::Stopped)>,
    observed: Option<&observe::Observed>,
    command: &str,
) -> Option<LaunchedTarget> {
    if launched.is_none()
        && let Some((pid, st)) = killed
    {
        return Some(LaunchedTarget {
            command: command.to_string(),
            pid,
            exited_early: false,
            exit_code: st.exit,
            signal: st.signal,
            killed: true,
        });
    }
    let (l, grace) = launched?;
    let pid = l.pid();
    let exited_early = observed.is_some_and(|o| {
        o.seconds
            .iter()
            .flat_map(|s| &s.procs)
            .any(|p| p.pid == pid && !p.alive)
    });
    let st = l.stop(grace);
    Some(LaunchedTarget {
        command: command.to_string(),
        pid,
        exited_early,
        exit_code: st.exit,
        signal: st.signal,
        killed: st.killed,
    })
}

/// What a `steps` run gathers beside the engine for its sizing table: each step's span, the
/// intended latency of the answers in it (merged from the engine's per-second histograms),
/// and the built-in sink's stored counts as the snapshots bring them.
struct SizingGather {
    spans: Vec<sizing::StepSpan>,
    latency: Arc<Mutex<StepLatency>>,
    stored: Vec<(f64, u64)>,
}

/// The intended latency of each step's answers: the seconds of the step they are coming in
/// for are merged into one histogram, and a step is reduced to its p99 when a later step's
/// seconds begin (seconds come in order), so a run holds one histogram however many steps it
/// has — a step costs a few words, not a histogram of its own (20,000 steps took 2.7 GB).
struct StepLatency {
    open: Option<usize>,
    merged: Histogram<u64>,
    p99: Vec<Option<f64>>,
}

impl StepLatency {
    fn new(steps: usize) -> StepLatency {
        StepLatency {
            open: None,
            merged: new_histogram(),
            p99: vec![None; steps],
        }
    }

    /// Second `h` of step `k`.
    fn add(&mut self, k: usize, h: &Histogram<u64>) {
        if self.open != Some(k) {
            self.close();
            self.open = Some(k);
        }
        let _ = self.merged.add(h);
    }

    /// The open step's p99, kept; its histogram cleared for the next.
    fn close(&mut self) {
        if let Some(k) = self.open.take() {
            let p = report::percentiles(&self.merged);
            if let Some(slot) = self.p99.get_mut(k) {
                *slot = p.shown(99.0, p.p99);
            }
            self.merged.reset();
        }
    }
}

impl SizingGather {
    fn of(p: &RunPlan) -> Option<SizingGather> {
        let Profile::Steps(steps) = &p.profile else {
            return None;
        };
        let warm = p.config.workload.step_warmup.map(|d| d.0.as_secs_f64());
        let spans = sizing::spans(steps, warm);
        let latency = Arc::new(Mutex::new(StepLatency::new(spans.len())));
        Some(SizingGather {
            spans,
            latency,
            stored: Vec::new(),
        })
    }

    /// The table, once the run has ended.
    fn rows(
        &self,
        rep: &Report,
        watched: Option<&[sizing::WatchedSecond]>,
    ) -> Vec<sizing::SizingRow> {
        let p99: Vec<Option<f64>> = self
            .latency
            .lock()
            .map(|mut l| {
                l.close();
                l.p99.clone()
            })
            .unwrap_or_default();
        sizing::build(&sizing::Input {
            spans: &self.spans,
            timeline: &rep.timeline,
            p99_ms: &p99,
            stored: rep.verification.as_ref().map(|_| self.stored.as_slice()),
            watched,
        })
    }
}

/// The latency gathered outside fault windows, taken out of its shared cell.
fn take_outside(o: Option<Arc<Mutex<OutsideLatency>>>) -> OutsideLatency {
    let empty = || OutsideLatency::new(&[], None);
    let Some(o) = o else { return empty() };
    match o.lock() {
        Ok(mut g) => std::mem::replace(&mut *g, empty()),
        Err(p) => std::mem::replace(&mut *p.into_inner(), empty()),
    }
}

/// With a fault timeline: where the latency outside its windows is gathered.
fn outside_latency(p: &RunPlan) -> Option<Arc<Mutex<OutsideLatency>>> {
    if p.faults.is_empty() {
        return None;
    }
    let spans: Vec<(f64, f64)> = p
        .faults
        .iter()
        .map(|f| {
            let b = f.at.as_secs_f64();
            (b, b + f.act.lasts().map_or(0.0, |d| d.as_secs_f64()))
        })
        .collect();
    let allow = p.config.slo.max_recovery.map(|d| d.0.as_secs_f64());
    Some(Arc::new(Mutex::new(OutsideLatency::new(&spans, allow))))
}

/// The engine's per-second histograms go to the HDR log, to the step they fall in and to
/// the latency outside fault windows.
fn second_log(
    log: Option<SharedHdrLog>,
    sizing: Option<&SizingGather>,
    outside: Option<Arc<Mutex<OutsideLatency>>>,
) -> Option<SecondLog> {
    let steps = sizing.map(|g| (g.spans.clone(), g.latency.clone()));
    if log.is_none() && steps.is_none() && outside.is_none() {
        return None;
    }
    Some(Box::new(
        move |t, i: &Histogram<u64>, s: &Histogram<u64>| {
            if let Some(l) = &log {
                l.second(t, i, s);
            }
            if let Some((spans, steps)) = &steps {
                // The spans are in time order: the first that ends after t, if t is in it.
                let k = spans.partition_point(|x| x.to_t <= t);
                if spans.get(k).is_some_and(|x| t >= x.from_t)
                    && let Ok(mut l) = steps.lock()
                {
                    l.add(k, i);
                }
            }
            if let Some(o) = &outside
                && let Ok(mut o) = o.lock()
            {
                o.add(t, i);
            }
        },
    ))
}

/// The HDR histogram log (`observability.hdr_log`), created before the run starts so a path
/// that cannot be written stops it at once.
fn open_hdr_log(path: &Path, started_wall_ns: i64) -> Result<SharedHdrLog, SetupError> {
    SharedHdrLog::create(path, started_wall_ns as f64 / 1e9)
        .map_err(|e| SetupError::Io(format!("observability.hdr_log: {e}")))
}

/// The scenario lane's accounting agent: the worker after the background's.
fn lane_agent(p: &RunPlan) -> u32 {
    agent_base(p) + p.threads.max(1) as u32
}

/// The first accounting agent of this process: 0, or its shard's first.
fn agent_base(p: &RunPlan) -> u32 {
    p.shard.map_or(0, |s| s.agent_base())
}

/// The scenario's time zero: its anchor, else the run's start.
fn scenario_anchor(sr: &ScenarioRun, started_wall_ns: i64) -> i64 {
    sr.scenario.anchor.unwrap_or(started_wall_ns)
}

/// The report's `scenario` section: the lane's counts, what the sink stored of its agent,
/// and the ground truth of the play.
fn scenario_report(
    sr: &ScenarioRun,
    lane: &crate::stats::result::LaneResult,
    agent: u32,
    (run_id, started_wall_ns): (&str, i64),
    sink: Option<&SinkStats>,
) -> report::scenario::ScenarioReport {
    let s = &sr.scenario;
    let order = crate::scenario::play::order(s);
    let anchor = scenario_anchor(sr, started_wall_ns);
    let truth = crate::scenario::truth::build(s, &order, anchor, run_id, agent);
    let rep = report::scenario::ScenarioReport::new(&sr.file, agent, lane, truth);
    match sink {
        Some(st) => {
            let a = st
                .runs
                .get(run_id)
                .and_then(|r| r.agents.get(&agent.to_string()));
            rep.with_stored(a.map_or(0, |a| a.distinct), a.map_or(0, |a| a.duplicates))
        }
        None => rep,
    }
}

/// The scenario lane's framing: per stage, its source's framer (sourcetype, carrier, syslog
/// header) with the stage's tactic and technique.
#[allow(
    clippy::indexing_slicing,
    reason = "st.source is the index the scenario planner resolved into s.sources"
)]
fn scenario_plan(
    p: &RunPlan,
    sr: &ScenarioRun,
    ep: &Endpoint,
    started_wall_ns: i64,
) -> ScenarioPlan {
    let s = &sr.scenario;
    let wire = match p.transport {
        Transport::Http | Transport::Https => Framings::Http(
            s.stages
                .iter()
                .map(|st| {
                    let def = &s.sources[st.source].def;
                    let f = Framer::new(
                        &p.config.target,
                        p.token.as_ref(),
                        &ep.host_port,
                        &ep.path,
                        def.carrier,
                        &def.sourcetype,
                        &p.run_id,
                    )
                    .untagged(!p.config.tagged());
                    Arc::new(f.with_attack(st.tactic, st.technique.id))
                })
                .collect(),
        ),
        Transport::SyslogTcp
        | Transport::SyslogTls
        | Transport::SyslogUdp
        | Transport::Relp
        | Transport::RelpTls => Framings::Syslog(
            s.stages
                .iter()
                .map(|st| {
                    SyslogFramer::new(
                        p.config.target.syslog.as_ref(),
                        &s.sources[st.source].def,
                        &p.host,
                        p.transport.unframed(),
                    )
                })
                .collect(),
        ),
    };
    ScenarioPlan {
        scenario: s.clone(),
        anchor: scenario_anchor(sr, started_wall_ns),
        wire,
    }
}

/// What the report's breakdowns name: each source of a mix with its share, each of several
/// targets with its address.
fn part_names(p: &RunPlan, endpoint: &Endpoint) -> report::PartNames {
    let sources = p
        .packs
        .iter()
        .map(|k| k.def.id.clone())
        .zip(p.shares.iter().copied())
        .collect();
    let targets = match p.config.target.urls.get(1..) {
        Some(rest) if !p.more_targets.is_empty() => std::iter::once((
            redact::url(&p.config.target.url).into_owned(),
            endpoint.address(),
        ))
        .chain(
            rest.iter()
                .zip(&p.more_targets)
                .map(|(u, (ep, _))| (redact::url(u).into_owned(), ep.address())),
        )
        .collect(),
        _ => Vec::new(),
    };
    report::PartNames { sources, targets }
}

/// Several targets: the first (`endpoint`) and the rest, each with its TLS client and the
/// `Host` its requests carry; none for one target.
fn targets_of(p: &RunPlan, endpoint: &Endpoint) -> Vec<crate::engine::worker::TargetAddr> {
    if p.more_targets.is_empty() {
        return Vec::new();
    }
    let first = (endpoint.clone(), p.tls.clone());
    std::iter::once(&first)
        .chain(&p.more_targets)
        .map(|(ep, tls)| crate::engine::worker::TargetAddr {
            addr: ep.addr,
            tls: tls.clone(),
            host_port: ep.host_port.clone(),
        })
        .collect()
}

/// A mix of sources: the shares, how many events in a row are of one source, and each
/// source's framing (its carrier and sourcetype over HTTP, its envelope over syslog).
fn mix_plan(p: &RunPlan, ep: &Endpoint) -> Option<MixPlan> {
    if p.packs.len() < 2 {
        return None;
    }
    let wire = match p.transport {
        Transport::Http | Transport::Https => Framings::Http(
            (0..p.packs.len())
                .map(|k| Arc::new(p.framer_of(k, &ep.host_port, &ep.path, &p.run_id)))
                .collect(),
        ),
        Transport::SyslogTcp
        | Transport::SyslogTls
        | Transport::SyslogUdp
        | Transport::Relp
        | Transport::RelpTls => Framings::Syslog(
            p.packs
                .iter()
                .map(|pack| {
                    SyslogFramer::new(
                        p.config.target.syslog.as_ref(),
                        &pack.def,
                        &p.host,
                        p.transport.unframed(),
                    )
                })
                .collect(),
        ),
    };
    // Syslog interleaves message by message; HTTP batches are of one source unless mixed.
    let per_event = p.config.target.batch.mix || matches!(wire, Framings::Syslog(_));
    Some(MixPlan {
        shares: p.shares.clone(),
        cycle: if per_event { 1 } else { mix_cycle(p) },
        wire,
    })
}

/// The cycle of a worker's events in which each source of a mix has one block: what the
/// worker sends in one batch window (`LINGER`) at the peak rate, so every second of a steady
/// run carries each source in its share, however slow the rate. A closed loop has no rate:
/// each source's block there is a batch for the smallest share.
fn mix_cycle(p: &RunPlan) -> u64 {
    let window = match p.profile {
        crate::engine::pacer::Profile::Closed => {
            let smallest = p.shares.iter().copied().fold(1.0, f64::min).max(1e-6);
            p.batch_events as f64 / smallest
        }
        _ => {
            p.profile.peak() / p.threads.max(1) as f64 * crate::engine::worker::LINGER.as_secs_f64()
        }
    };
    window.ceil().clamp(2.0, 1e12) as u64
}

/// How batches travel to `ep`.
fn wire(p: &RunPlan, ep: &Endpoint) -> Result<WirePlan, SetupError> {
    let syslog = || {
        p.syslog.clone().ok_or_else(|| {
            SetupError::invalid(
                "target.url: a syslog url (tcp://, udp://, tls://, relp://, relp+tls://) needs adapter: syslog",
            )
        })
    };
    Ok(match p.transport {
        Transport::Http | Transport::Https => {
            if p.syslog.is_some() {
                return Err(SetupError::invalid(
                    "target.url: the syslog adapter sends to tcp://, udp:// or tls:// urls",
                ));
            }
            WirePlan::Http {
                framer: Arc::new(p.framer(&ep.host_port, &ep.path, &p.run_id)),
                tls: p.tls.clone(),
            }
        }
        Transport::SyslogTcp | Transport::SyslogTls => WirePlan::SyslogStream {
            framer: syslog()?,
            tls: p.tls.clone(),
        },
        Transport::Relp | Transport::RelpTls => WirePlan::Relp {
            framer: syslog()?,
            tls: p.tls.clone(),
            window: p
                .config
                .target
                .syslog
                .as_ref()
                .and_then(|s| s.relp_window)
                .map_or(DEFAULT_WINDOW, |w| w as usize),
        },
        Transport::SyslogUdp => WirePlan::SyslogDatagram {
            framer: syslog()?,
            by_size: p
                .config
                .target
                .syslog
                .as_ref()
                .and_then(|s| s.udp_order)
                .unwrap_or(UdpOrder::BySize)
                == UdpOrder::BySize,
        },
    })
}

pub fn execute(
    s: Started,
    steer: Steering,
    control: Control,
    snapshots: Arc<SnapshotCell>,
    mut observers: Vec<Box<dyn Observer>>,
) -> RunOutcome {
    let run_id = s.plan.run_id.clone();
    let sink = s.sink;
    let mut sizing = s.sizing;
    let watcher = s.watcher;
    let tagged = s.plan.config.tagged();
    let lane_agent = s.plan.scenario.as_ref().map(|_| lane_agent(&s.plan));
    let (faults, launched) = start_faults(
        &s.plan,
        control,
        s.launched,
        sink.as_ref(),
        watcher.as_ref(),
    );
    let mut notes = Vec::new();
    let mut publish = |mut snap: Snapshot| {
        if let Some(w) = &watcher {
            snap.watched = Some(watched_now(&w.latest()));
        }
        if let Some(h) = sink.as_ref().filter(|_| tagged) {
            let stored = stored_of(
                &h.stats(),
                &run_id,
                snap.cumulative.events_accepted,
                lane_agent,
            );
            if let Some(g) = sizing.as_mut() {
                g.stored.push((snap.elapsed_s, stored.distinct));
            }
            snap.stored = Some(stored);
        }
        let snap = Arc::new(snap);
        snapshots.publish(snap.clone());
        for o in observers.iter_mut() {
            o.on_snapshot(&snap);
        }
    };
    // A UDP target's receive-buffer drops are read around the run (before the built-in
    // sink, when it is the target, closes its sockets).
    let udp_probe = (s.plan.transport == Transport::SyslogUdp)
        .then(|| udp_drops::Probe::start(s.endpoint.addr));
    let growth = s.plan.verify.as_ref().and_then(store_verify::start_growth);
    let mut result = engine::run(s.engine, steer, &mut publish);
    name_a_tls_port(&mut result.abort, s.plan.transport, &s.endpoint);
    let faults = faults.map(Runner::finish);
    let udp_rcvbuf_drops = udp_probe.map(udp_drops::Probe::finish);
    let hdr_log_failed = s
        .hdr_log
        .and_then(|log| log.finish().err())
        .map(|e| ("the HDR log", e));
    // Without accounting tags the sink cannot tell this run's events apart: nothing to verify.
    let sink_stats = sink.map(|h| h.shutdown());
    let verification: Option<Verification> = sink_stats
        .as_ref()
        .filter(|_| tagged)
        // The sink counts everything it received, the warm-up's events too: it is held
        // against everything accepted.
        .map(|st| stored_of(st, &run_id, result.all_totals.events_accepted, lane_agent));
    // The stores are asked while a launched target still runs (it may be the store).
    let store_verification = s.plan.verify.as_ref().map(|vp| {
        let acc = tagged.then(|| report::accounting(&result, &run_id));
        store_verify::verify_stores(
            vp,
            acc.as_ref(),
            &s.plan.config.slo,
            result.abort.is_some(),
            growth.clone(),
        )
    });
    let observed = watcher.map(Watcher::finish);
    let command = s
        .plan
        .watch
        .launch
        .as_ref()
        .map(|(l, _)| l.command.clone())
        .unwrap_or_default();
    let (launched, killed, records) = match faults {
        Some(f) => {
            for l in f.started {
                l.stop(Duration::from_secs(5));
            }
            let grace = s.plan.watch.launch.as_ref().map(|(_, g)| *g);
            (f.launched.zip(grace), f.killed, Some(f.records))
        }
        None => (launched, None, None),
    };
    let launched = stop_launched(launched, killed, observed.as_ref(), &command);
    let watched_seconds = observed.as_ref().map(sizing_seconds);
    if let Some(l) = launched.as_ref().filter(|l| l.exited_early) {
        notes.push(format!(
            "the launched target ({}, pid {}) exited during the run",
            l.command, l.pid
        ));
    }
    // The fault records always reach the report (an error among them fails the run), with
    // the latency gathered outside their windows.
    let faults = records.map(|r| (r, take_outside(s.outside)));
    let p = s.plan;
    let cfg = &p.config;
    let mut rep = report::build(
        &result,
        Context {
            run_id: p.run_id.clone(),
            host: p.host.clone(),
            name: cfg.name.clone(),
            started_wall_ns: s.started_wall_ns,
            target: TargetInfo {
                adapter: cfg.target.adapter.to_string(),
                url: redact::url(&cfg.target.url).into_owned(),
                address: s.endpoint.address(),
                source: p.source_id(),
                source_version: p.source_version(),
            },
            batch_max_events: p.batch_events,
            batch_max_bytes: p.batch_bytes,
            config: redacted(cfg),
            slo: cfg.slo.clone(),
            slo_facts: slo::Facts {
                hec_ack: cfg.target.hec.as_ref().is_some_and(|h| h.ack),
            },
            verification,
            watched: observed.map(|o| (o, launched)),
            tagged: cfg.tagged(),
            faults,
            parts: part_names(&p, &s.endpoint),
            shard: p.shard,
        },
    );
    if let Some(g) = &sizing {
        rep.sizing = g.rows(&rep, watched_seconds.as_deref());
    }
    rep.store_verification = store_verification;
    rep.data_rate = p.data_rate.as_ref().map(crate::run::rate::RatePlan::report);
    rep.threads_note = p.threads_note.clone();
    if let Some(h) = &p.http {
        let t = &result.totals;
        rep.http = Some(report::http::build(
            h,
            result.phases.as_ref(),
            p.dns,
            result.duration.as_secs_f64(),
            t.bytes_sent,
            t.batches_sent,
        ));
    }
    if let (Some(sr), Some(lane), Some(agent)) = (&p.scenario, &result.scenario, lane_agent) {
        rep.scenario = Some(scenario_report(
            sr,
            lane,
            agent,
            (&run_id, s.started_wall_ns),
            sink_stats.as_ref(),
        ));
    }
    rep.loss = report::loss::of(&rep, rep.loss.scheduled, udp_rcvbuf_drops);
    let (exit, reasons) = verdict(&rep, &result.abort, &cfg.slo);
    rep.verdict = report::Verdict {
        pass: exit == Exit::Ok,
        exit_code: exit.code(),
        reasons: reasons.clone(),
    };
    let mut out = RunOutcome {
        report: rep,
        exit,
        reasons,
        notes,
        unwritten: Vec::new(),
    };
    let o = &cfg.observability;
    let mut files = Vec::new();
    if let Some(path) = output(&p, &o.csv) {
        let text = report::csv::render(&out.report);
        files.push(outputs::File {
            what: "the timeline CSV",
            path,
            text,
        });
    }
    if let Some(path) = output(&p, &o.sizing_csv) {
        let text = sizing::csv(&out.report.sizing);
        files.push(outputs::File {
            what: "the sizing CSV",
            path,
            text,
        });
    }
    outputs::write(&mut out, hdr_log_failed, files, output(&p, &o.report));
    out
}

/// What the sink has of this run, beside the `accepted` events the run counted.
fn stored_of(st: &SinkStats, run_id: &str, accepted: u64, lane: Option<u32>) -> Stored {
    let run = st.runs.get(run_id);
    // The scenario lane's events are the run's too, and counted apart.
    let apart = lane
        .and_then(|a| run?.agents.get(&a.to_string()))
        .map_or((0, 0, 0), |a| (a.received, a.distinct, a.duplicates));
    let distinct = run.map_or(0, |r| r.distinct).saturating_sub(apart.1);
    Stored {
        store: "built-in sink".into(),
        events_received: run.map_or(0, |r| r.received).saturating_sub(apart.0),
        distinct,
        duplicates: run.map_or(0, |r| r.duplicates).saturating_sub(apart.2),
        lost_events: accepted.saturating_sub(distinct),
        ingest_lag_ms: run.and_then(|r| r.ingest_lag_ms.clone()),
    }
}

/// The config as a report holds it: sensitive header values and URL credentials redacted.
pub(crate) fn redacted(cfg: &crate::config::schema::Config) -> serde_json::Value {
    let mut v = serde_json::to_value(cfg).unwrap_or(serde_json::Value::Null);
    redact::config(&mut v);
    v
}

/// Where an output file goes: its configured path, with the shard's index in it when this
/// process is a shard (the shards of a run share one config).
fn output(p: &RunPlan, path: &Option<String>) -> Option<String> {
    let path = path.as_ref()?;
    Some(p.shard.map_or_else(|| path.clone(), |s| s.path(path)))
}

/// A plain `http://` target found unreachable that answers a TLS handshake: the port speaks
/// TLS, and the abort says so (a TLS mismatch, not a target that is down).
fn name_a_tls_port(abort: &mut Option<AbortReason>, transport: Transport, ep: &Endpoint) {
    if transport != Transport::Http || ep.unix.is_some() {
        return;
    }
    let Some(AbortReason::Unreachable(why)) = abort else {
        return;
    };
    if crate::net::tls::answers_tls(ep.addr, Duration::from_secs(1)) {
        *abort = Some(AbortReason::Tls(format!(
            "{}: the port speaks TLS and the url says http:// (use https://); {why}",
            ep.addr
        )));
    }
}

/// One exit code per run, in order of gravity, with the reasons.
pub fn verdict(rep: &Report, abort: &Option<AbortReason>, slo: &Slo) -> (Exit, Vec<String>) {
    match abort {
        Some(AbortReason::Auth(m)) => {
            return (
                Exit::AuthFailed,
                vec![format!("authentication failed: {m}")],
            );
        }
        Some(other) => return (Exit::Aborted, vec![format!("run aborted: {other}")]),
        None => {}
    }
    if let Some(l) = rep
        .watched
        .as_ref()
        .and_then(|w| w.launched.as_ref())
        .filter(|l| l.exited_early)
    {
        return (
            Exit::Aborted,
            vec![format!(
                "the launched target ({}, pid {}) exited during the run",
                l.command, l.pid
            )],
        );
    }
    let faults: Vec<String> = rep
        .faults
        .iter()
        .flat_map(|f| &f.actions)
        .filter_map(|a| {
            let r = &a.record;
            r.error
                .as_ref()
                .map(|e| format!("fault {} ({} {}): {e}", r.index, r.action, r.target))
        })
        .collect();
    if !faults.is_empty() {
        return (Exit::Aborted, faults);
    }
    if let Some(sv) = rep
        .store_verification
        .as_ref()
        .filter(|sv| sv.result.is_none())
    {
        let exit = match sv.status {
            StoreStatus::Invalid => Exit::Invalid,
            StoreStatus::AuthFailed => Exit::AuthFailed,
            _ => Exit::Aborted,
        };
        return (
            exit,
            vec![format!(
                "store verification {}: {}",
                sv.status.name(),
                sv.error.as_deref().unwrap_or("")
            )],
        );
    }
    if let Some(v) = &rep.verification
        && (v.lost_events > slo.max_lost_events.unwrap_or(0)
            || v.duplicates > slo.max_dup_events.unwrap_or(0))
    {
        return (
            Exit::VerifyFailed,
            vec![format!(
                "verification: {} accepted events not stored, {} stored twice",
                v.lost_events, v.duplicates
            )],
        );
    }
    if let Some(why) = rep.scenario.as_ref().and_then(|s| s.lost_or_duplicated()) {
        return (Exit::VerifyFailed, vec![why]);
    }
    if let Some(v) = rep
        .store_verification
        .as_ref()
        .and_then(|sv| sv.result.as_ref())
        .filter(|v| !v.pass)
    {
        return (
            Exit::VerifyFailed,
            v.reasons
                .iter()
                .map(|r| format!("store verification: {r}"))
                .collect(),
        );
    }
    let short = rep
        .scenario
        .as_ref()
        .map(|s| s.shortfalls())
        .unwrap_or_default();
    if !short.is_empty() {
        return (Exit::SloBreach, short);
    }
    let b = slo::breaches(&rep.slo);
    if !b.is_empty() {
        let names: Vec<String> = b
            .iter()
            .map(|x| {
                format!(
                    "{} (limit {}, actual {:.4})",
                    x.name,
                    x.limit,
                    x.actual.unwrap_or(0.0)
                )
            })
            .collect();
        return (
            Exit::SloBreach,
            vec![format!("SLO breached: {}", names.join("; "))],
        );
    }
    (Exit::Ok, Vec::new())
}
