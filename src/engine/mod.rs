//! The run engine: the coordinator spawns one pinned worker thread per core (`worker`), splits
//! the global rate and the total between them (`pacer` holds the schedule math), merges the
//! `Interval`s they send every second into totals and a per-second series, prints a live line
//! when stderr is a terminal, and stops everything on an abort (auth failure, unreachable
//! target). It returns a `RunResult`: plain data for `report`.

pub mod pacer;
pub mod schedule;
pub mod worker;

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::adapter::Framer;
use crate::config::schema::Workload;
use crate::generate::Generator;
use crate::generate::timeline::Timeline;
use crate::pack::compile::CompiledPack;
use crate::stats::{Counters, Interval, new_histogram};
use pacer::Profile;

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbortReason {
    Auth(String),
    Unreachable(String),
    /// The TLS handshake failed: the certificate problem, named.
    Tls(String),
    /// Ctrl-C or SIGTERM: the run stopped early but still reports what it did.
    Interrupted,
    Io(String),
}

impl std::fmt::Display for AbortReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AbortReason::Auth(m) => write!(f, "authentication failed: {m}"),
            AbortReason::Unreachable(m) => write!(f, "target unreachable: {m}"),
            AbortReason::Tls(m) => write!(f, "TLS handshake failed: {m}"),
            AbortReason::Interrupted => {
                f.write_str("interrupted (SIGINT or SIGTERM); the report covers the run until then")
            }
            AbortReason::Io(m) => write!(f, "I/O error: {m}"),
        }
    }
}

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

/// Everything the coordinator needs for one run.
pub struct RunPlan {
    pub mode: worker::Mode,
    pub tls: Option<crate::net::tls::TlsClient>,
    pub syslog: Option<crate::adapter::syslog::SyslogFramer>,
    /// UDP: send each batch's datagrams grouped by size (`target.syslog.udp_order`).
    pub udp_by_size: bool,
    pub addr: SocketAddr,
    pub threads: usize,
    pub connections: usize,
    pub workload: Workload,
    pub batch_events: usize,
    pub batch_bytes: usize,
    pub pack: Arc<CompiledPack>,
    pub seed: u64,
    pub run_id: String,
    pub timeline: Timeline,
    pub jitter_ns: u64,
    pub framer: Arc<Framer>,
    pub stop_after: Option<Duration>,
    pub total: Option<u64>,
    pub request_timeout: Duration,
    pub drain_timeout: Duration,
    pub max_attempts: u32,
    pub pin: bool,
    /// Print a live line on stderr (only when it is a terminal).
    pub live: bool,
}

/// One second of the run, all workers merged.
#[derive(Clone, Debug, Default)]
pub struct Second {
    pub t: u32,
    pub counters: Counters,
    pub target_eps: f64,
    pub p50_us: u64,
    pub p99_us: u64,
}

/// What a run measured.
pub struct RunResult {
    pub started: Instant,
    pub duration: Duration,
    pub threads: usize,
    pub connections: usize,
    pub totals: Counters,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub seconds: Vec<Second>,
    pub abort: Option<AbortReason>,
    /// Events the schedule asked for over the run (target).
    pub target_events: f64,
}

struct Pending {
    counters: Counters,
    hist: Histogram<u64>,
    reported: usize,
}

/// Runs the plan to the end and returns what was measured.
pub fn run(plan: RunPlan) -> RunResult {
    let threads = plan.threads.max(1);
    let connections = plan.connections.max(threads);
    let share = 1.0 / threads as f64;
    let cores = if plan.pin {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    let (tx, rx) = crossbeam_channel::bounded::<Interval>(threads * 8);
    let abort = Arc::new(Abort::default());
    // Ctrl-C or SIGTERM: stop sending, wait for what is in flight, and still report.
    let stopping = Arc::new(AtomicBool::new(false));
    let mut signals = Vec::new();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Ok(id) = signal_hook::flag::register(sig, stopping.clone()) {
            signals.push(id);
        }
    }
    let start = Instant::now();
    let mut backs = Vec::new();
    let mut handles = Vec::new();
    for id in 0..threads {
        let (btx, brx) = crossbeam_channel::bounded(4);
        for _ in 0..2 {
            let _ = btx.send((new_histogram(), new_histogram()));
        }
        backs.push(btx);
        let conns = connections / threads + usize::from(id < connections % threads);
        let total = plan
            .total
            .map(|t| t / threads as u64 + u64::from((id as u64) < t % threads as u64));
        let wp = worker::WorkerPlan {
            mode: plan.mode,
            tls: plan.tls.clone(),
            syslog: plan.syslog.clone(),
            udp_by_size: plan.udp_by_size,
            id,
            threads,
            core: (!cores.is_empty()).then(|| cores[id % cores.len()]),
            addr: plan.addr,
            conns,
            profile: Profile::from_workload(&plan.workload, share),
            stop_after: plan.stop_after,
            total,
            batch_events: plan.batch_events,
            batch_bytes: plan.batch_bytes,
            generator: Generator::new(plan.pack.clone(), plan.seed, &plan.run_id)
                .with_jitter(plan.jitter_ns),
            timeline: plan.timeline.clone(),
            framer: plan.framer.clone(),
            start,
            tx: tx.clone(),
            back: brx,
            abort: abort.clone(),
            stopping: stopping.clone(),
            max_attempts: plan.max_attempts,
            request_timeout: plan.request_timeout,
            drain_timeout: plan.drain_timeout,
        };
        let h = std::thread::Builder::new()
            .name(format!("ingestbench-w{id}"))
            .spawn(move || worker::run(wp));
        match h {
            Ok(h) => handles.push(h),
            Err(e) => abort.set(AbortReason::Io(format!("cannot start worker thread: {e}"))),
        }
    }
    drop(tx);

    let profile = Profile::from_workload(&plan.workload, 1.0);
    let mut totals = Counters::default();
    let mut latency = new_histogram();
    let mut service = new_histogram();
    let mut per_worker_seq = vec![0usize; threads];
    let mut pending: Vec<Pending> = Vec::new();
    let mut seconds: Vec<Second> = Vec::new();
    let mut done = vec![false; threads];
    let live = plan.live && std::io::stderr().is_terminal();
    let mut last_live = start;

    while done.iter().any(|d| !d) {
        let Ok(iv) = rx.recv_timeout(Duration::from_millis(200)) else {
            if handles.iter().all(|h| h.is_finished()) && rx.is_empty() {
                break;
            }
            continue;
        };
        let w = iv.worker;
        let k = per_worker_seq[w];
        per_worker_seq[w] += 1;
        if iv.last {
            done[w] = true;
        }
        totals.add(&iv.counters);
        let _ = latency.add(&iv.latency);
        let _ = service.add(&iv.service);
        while pending.len() <= k {
            pending.push(Pending {
                counters: Counters::default(),
                hist: new_histogram(),
                reported: 0,
            });
        }
        let p = &mut pending[k];
        p.counters.add(&iv.counters);
        let _ = p.hist.add(&iv.latency);
        p.reported += 1;
        let (mut l, mut s) = (iv.latency, iv.service);
        l.reset();
        s.reset();
        let _ = backs[w].try_send((l, s));
        // A second is complete when every worker has reported it.
        while seconds.len() < pending.len() && pending[seconds.len()].reported >= threads {
            let t = seconds.len() as u32;
            seconds.push(finish_second(t, &mut pending[t as usize], &profile));
        }
        if live && last_live.elapsed() >= Duration::from_secs(1) {
            last_live = Instant::now();
            live_line(start, &seconds, &totals, &profile);
        }
    }
    for h in handles {
        let _ = h.join();
    }
    for id in signals {
        signal_hook::low_level::unregister(id);
    }
    if stopping.load(Ordering::Relaxed) {
        abort.set(AbortReason::Interrupted);
    }
    // Partial seconds at the end (workers that stopped early reported fewer).
    while seconds.len() < pending.len() {
        let t = seconds.len() as u32;
        seconds.push(finish_second(t, &mut pending[t as usize], &profile));
    }
    if live {
        let _ = writeln!(std::io::stderr());
    }
    let duration = start.elapsed();
    let target_events = match plan.total {
        Some(t) => (t as f64).min(profile.cumulative(duration.as_secs_f64())),
        None => profile.cumulative(plan.stop_after.unwrap_or(duration).as_secs_f64()),
    };
    RunResult {
        started: start,
        duration,
        threads,
        connections,
        totals,
        latency,
        service,
        seconds,
        abort: abort.reason(),
        target_events,
    }
}

fn finish_second(t: u32, p: &mut Pending, profile: &Profile) -> Second {
    let s = Second {
        t,
        counters: std::mem::take(&mut p.counters),
        target_eps: profile.cumulative(f64::from(t) + 1.0) - profile.cumulative(f64::from(t)),
        p50_us: if p.hist.is_empty() {
            0
        } else {
            p.hist.value_at_quantile(0.5)
        },
        p99_us: if p.hist.is_empty() {
            0
        } else {
            p.hist.value_at_quantile(0.99)
        },
    };
    p.hist.reset();
    s
}

fn live_line(start: Instant, seconds: &[Second], totals: &Counters, profile: &Profile) {
    let Some(last) = seconds.last() else { return };
    let c = &last.counters;
    let line = format!(
        "\r{:>5}s  target {:>9.0} eps  achieved {:>9} eps  p50 {:>8.2} ms  p99 {:>8.2} ms  errors {}  lag max {:.1} ms   ",
        start.elapsed().as_secs(),
        profile.rate_at(f64::from(last.t)),
        c.events_accepted,
        last.p50_us as f64 / 1000.0,
        last.p99_us as f64 / 1000.0,
        totals.batches_failed + totals.connection_errors(),
        c.lag_ns_max as f64 / 1e6,
    );
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(line.as_bytes());
    let _ = e.flush();
}
