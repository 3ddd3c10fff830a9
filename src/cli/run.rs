//! `ingestbench run --config FILE`: the main job. Loads and checks the config, applies the
//! command-line overrides, looks up the token, compiles the pack, starts the built-in sink when
//! the url is `builtin`, runs the engine, prints and writes the report, and chooses the exit
//! code: 4 auth failure, 6 aborted (unreachable), 5 lost or duplicated events, 3 SLO breach.

use argh::FromArgs;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::adapter::Framer;
use crate::adapter::syslog::SyslogFramer;
use crate::config::schema::{Adapter, Config, Profile, UdpOrder};
use crate::config::secrets::{self, Store};
use crate::config::units::parse_duration;
use crate::engine::worker::Mode;
use crate::engine::{self, AbortReason, RunPlan};
use crate::exit::Exit;
use crate::generate::time;
use crate::net;
use crate::pack::entities::Entities;
use crate::pack::{self, Catalog};
use crate::plan;
use crate::report::{self, Context, TargetInfo, Verification, slo};
use crate::sink;

#[derive(FromArgs)]
/// Run a load test: generate events from the config's source pack and send them to its target.
#[argh(
    subcommand,
    name = "run",
    example = "ingestbench run --config examples/steady-smoke.yaml",
    example = "ingestbench run --config examples/lphc.yaml --duration 30s --eps 20000 --threads 2 --workers 8",
    example = "ingestbench run --config my.yaml --output json > report.json",
    note = "Exit codes: 0 OK, 2 invalid config, 3 SLO breach, 4 authentication failure, 5 lost or duplicated events, 6 aborted (e.g. target unreachable)."
)]
pub struct Args {
    /// the config file
    #[argh(option, short = 'c')]
    config: PathBuf,
    /// stop after this long (overrides workload.stop), e.g. 30s
    #[argh(option)]
    duration: Option<String>,
    /// stop after this many events (overrides workload.stop)
    #[argh(option)]
    total: Option<u64>,
    /// events per second (overrides the workload with a steady profile)
    #[argh(option)]
    eps: Option<f64>,
    /// worker threads, one per core and pinned (default: all cores)
    #[argh(option)]
    threads: Option<usize>,
    /// concurrent connections, spread over the threads (default: workload.workers, else 4)
    #[argh(option)]
    workers: Option<usize>,
    /// report on stdout: text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
    /// seed for every random choice (overrides the config's)
    #[argh(option)]
    seed: Option<u64>,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
    /// secret store directory for token_secret (default: the per-user store)
    #[argh(option)]
    secrets_dir: Option<PathBuf>,
    /// do not pin worker threads to cores
    #[argh(switch)]
    no_pin: bool,
}

crate::yaml_enum!(
    pub enum Output {
        Text = "text",
        Json = "json",
    }
);

impl argh::FromArgValue for Output {
    fn from_arg_value(value: &str) -> Result<Self, String> {
        Output::parse(value)
    }
}

fn fail(msg: &str) -> Exit {
    super::err(&format!("error: {msg}"));
    Exit::Invalid
}

/// Applies command-line overrides to the config.
fn apply_overrides(c: &mut Config, a: &Args) -> Result<(), String> {
    if let Some(d) = &a.duration {
        let d = parse_duration(d).map_err(|e| format!("--duration: {e}"))?;
        if d.0.is_zero() {
            return Err("--duration must be greater than 0".into());
        }
        c.workload.stop.after = Some(d);
        c.workload.stop.total_events = None;
    }
    if let Some(n) = a.total {
        if n == 0 {
            return Err("--total must be greater than 0".into());
        }
        c.workload.stop.total_events = Some(n);
        c.workload.stop.after = None;
    }
    if let Some(e) = a.eps {
        if !(e > 0.0 && e <= crate::config::validate::MAX_EPS) {
            return Err("--eps must be above 0 and at most 100000000".into());
        }
        c.workload.profile = Profile::Steady;
        c.workload.eps = Some(e);
        c.workload.burst = None;
        c.workload.ramp = None;
        c.workload.steps = None;
    }
    if c.workload.find_ceiling {
        return Err("workload.find_ceiling: searching for the ceiling is not available in this version; run a ramp profile and read the timeline instead".into());
    }
    if c.workload.profile == Profile::Steady && c.workload.eps.is_none() {
        return Err("workload.eps is needed for a steady run; give --eps".into());
    }
    if let Some(s) = a.seed {
        c.seed = Some(s);
    }
    Ok(())
}

fn run_id() -> String {
    let t = time::now() as u64;
    let x = t ^ (u64::from(std::process::id()) << 40) ^ 0x9e37_79b9_7f4a_7c15;
    format!("r-{:012x}", x & 0xffff_ffff_ffff)
}

/// Where a url points: the host as written, the socket address, the path (HTTP) and the
/// scheme (`http`, `https`, `tcp`, `udp`, `tls`).
struct Endpoint {
    host: String,
    host_port: String,
    addr: SocketAddr,
    path: String,
    scheme: String,
}

fn endpoint(url: &str) -> Result<Endpoint, String> {
    let u = url::Url::parse(url).map_err(|e| format!("target.url {url:?}: {e}"))?;
    let host = u.host_str().ok_or("target.url has no host")?.to_string();
    let port = u.port_or_known_default().ok_or("target.url has no port")?;
    let addr = (host.trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host} resolves to no address"))?;
    let mut path = u.path().to_string();
    if let Some(q) = u.query() {
        path.push('?');
        path.push_str(q);
    }
    Ok(Endpoint {
        host_port: format!("{host}:{port}"),
        host,
        addr,
        path,
        scheme: u.scheme().to_string(),
    })
}

pub fn run(a: Args) -> Exit {
    let catalog = match Catalog::discover(a.packs.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let store = Store::new(
        match a
            .secrets_dir
            .clone()
            .map(Ok)
            .unwrap_or_else(secrets::default_dir)
        {
            Ok(d) => d,
            Err(e) => return fail(&e),
        },
    );
    let loaded = crate::config::load(&a.config, &store, Some(&catalog));
    let Some(mut cfg) = loaded.config else {
        for d in loaded.diags.errors() {
            super::err(&format!("error: {d}"));
        }
        super::err(&format!("{}: invalid config", a.config.display()));
        return Exit::Invalid;
    };
    for d in loaded.diags.warnings() {
        if !d.path.starts_with("target.auth.token") {
            super::err(&format!("warning: {d}"));
        }
    }
    if let Err(e) = apply_overrides(&mut cfg, &a) {
        return fail(&e);
    }
    if cfg.observability.dashboard || cfg.observability.prometheus.is_some() {
        super::err(
            "warning: observability.dashboard and observability.prometheus are not served by this version; the live line and the report are",
        );
    }
    let token = match cfg
        .target
        .auth
        .as_ref()
        .map(|au| secrets::resolve(au, &store))
    {
        Some(Ok(t)) => t,
        Some(Err(e)) => return fail(&e),
        None => None,
    };
    let sp = plan::source_plan(&cfg);
    let seed = cfg.seed.unwrap_or_else(super::r#gen::random_seed);
    // The report's config carries the seed actually used, so a run can be repeated.
    cfg.seed = Some(seed);
    let entities = Entities::generate(seed, &sp.sizes);
    let pack = match pack::load_compiled(&catalog, &sp.id, &sp.version, &entities, sp.accounting) {
        Ok(p) => p,
        Err(errs) => {
            for e in errs {
                super::err(&format!("error: {e}"));
            }
            return Exit::Invalid;
        }
    };

    // The target: the built-in sink, or a url.
    let mut builtin: Option<sink::SinkHandle> = None;
    let ep = if cfg.target.url == "builtin" {
        use crate::config::schema::SyslogTransport;
        let any: std::net::SocketAddr = "127.0.0.1:0".parse().expect("literal address");
        let syslog_udp = cfg.target.adapter == Adapter::Syslog
            && cfg.target.syslog.as_ref().and_then(|s| s.transport) == Some(SyslogTransport::Udp);
        let sc = sink::SinkConfig {
            http: any,
            token: token.as_ref().map(|t| t.expose().to_string()),
            threads: 1,
            faults: sink::Faults::default(),
            hec_ack: cfg.target.hec.as_ref().is_some_and(|h| h.ack),
            syslog_tcp: (cfg.target.adapter == Adapter::Syslog && !syslog_udp).then_some(any),
            syslog_udp: syslog_udp.then_some(any),
            ..sink::SinkConfig::default()
        };
        match sink::start(sc) {
            Ok(h) => {
                let (addr, scheme) = match (h.syslog_tcp_addr(), h.syslog_udp_addr()) {
                    (Some(a), _) => (a, "tcp"),
                    (_, Some(a)) => (a, "udp"),
                    _ => (h.addr(), "http"),
                };
                builtin = Some(h);
                Endpoint {
                    host: "127.0.0.1".into(),
                    host_port: addr.to_string(),
                    addr,
                    path: "/ingest".into(),
                    scheme: scheme.into(),
                }
            }
            Err(e) => return fail(&format!("cannot start the built-in sink: {e}")),
        }
    } else {
        match endpoint(&cfg.target.url) {
            Ok(x) => x,
            Err(e) => return fail(&e),
        }
    };
    let (addr, host, path) = (ep.addr, ep.host_port.clone(), ep.path.clone());
    let mode = match ep.scheme.as_str() {
        "tcp" | "tls" => Mode::SyslogStream,
        "udp" => Mode::SyslogUdp,
        _ => Mode::Http,
    };
    let tls = if matches!(ep.scheme.as_str(), "https" | "tls") {
        if cfg.target.tls.as_ref().is_some_and(|t| !t.verify) {
            super::err(
                "warning: target.tls.verify is false: the target's certificate is not checked",
            );
        }
        match net::tls::client(cfg.target.tls.as_ref(), &ep.host) {
            Ok(t) => Some(t),
            Err(e) => return fail(&e),
        }
    } else {
        None
    };
    let syslog = (cfg.target.adapter == Adapter::Syslog).then(|| {
        SyslogFramer::new(
            cfg.target.syslog.as_ref(),
            &pack.def,
            &report::hostname(),
            mode == Mode::SyslogUdp,
        )
    });

    let run_id = run_id();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = a
        .workers
        .or(cfg.workload.workers.map(|w| w as usize))
        .unwrap_or(4)
        .max(1);
    let threads = a.threads.unwrap_or(cores).clamp(1, 256).min(workers);
    let profile = engine::pacer::Profile::from_workload(&cfg.workload, 1.0);
    let mut batch_events = cfg.target.batch.max_events as usize;
    if let Some(rps) = cfg.target.limits.max_requests_per_sec {
        // Batches grow so the event rate holds under the request cap.
        batch_events = batch_events.max((profile.peak() / rps).ceil() as usize);
    }
    let total = cfg.workload.stop.total_events;
    let stop_after = cfg.workload.stop.after.map(|d| d.0);
    let expected_events = total
        .unwrap_or_else(|| profile.cumulative(stop_after.map_or(60.0, |d| d.as_secs_f64())) as u64);
    let started_wall = time::now();
    let framer = Framer::new(
        &cfg.target,
        token.as_ref(),
        &host,
        &path,
        pack.def.carrier,
        &pack.def.sourcetype,
        &run_id,
    );
    let plan = RunPlan {
        mode,
        tls,
        syslog,
        udp_by_size: cfg
            .target
            .syslog
            .as_ref()
            .and_then(|s| s.udp_order)
            .unwrap_or(UdpOrder::BySize)
            == UdpOrder::BySize,
        addr,
        threads,
        connections: workers,
        workload: cfg.workload.clone(),
        batch_events,
        batch_bytes: cfg.target.batch.max_bytes.0 as usize,
        pack: pack.clone(),
        seed,
        run_id: run_id.clone(),
        timeline: sp
            .times
            .timeline(started_wall, expected_events, profile.peak()),
        jitter_ns: sp.jitter_ns,
        framer: Arc::new(framer),
        stop_after,
        total,
        request_timeout: Duration::from_secs(30),
        drain_timeout: Duration::from_secs(5),
        max_attempts: 10,
        pin: !a.no_pin,
        live: a.output == Output::Text,
    };
    let result = engine::run(plan);

    let verification = builtin.map(|h| {
        let stats = h.shutdown();
        let run = stats.runs.get(&run_id);
        let distinct = run.map_or(0, |r| r.distinct);
        Verification {
            store: "built-in sink".into(),
            events_received: run.map_or(0, |r| r.received),
            distinct,
            duplicates: run.map_or(0, |r| r.duplicates),
            lost_events: result.totals.events_accepted.saturating_sub(distinct),
        }
    });
    let config_json = serde_json::to_value(&cfg).unwrap_or(serde_json::Value::Null);
    let rep = report::build(
        &result,
        Context {
            run_id,
            name: cfg.name.clone(),
            started_wall_ns: started_wall,
            target: TargetInfo {
                adapter: cfg.target.adapter.to_string(),
                url: cfg.target.url.clone(),
                address: addr.to_string(),
                source: pack.def.id.clone(),
                source_version: pack.def.version.to_string(),
            },
            batch_max_events: batch_events,
            batch_max_bytes: cfg.target.batch.max_bytes.0 as usize,
            config: config_json,
            slo: cfg.slo.clone(),
            verification,
        },
    );
    let json = serde_json::to_string_pretty(&rep).unwrap_or_default();
    match a.output {
        Output::Text => super::out(&report::text::render(&rep)),
        Output::Json => super::out(&json),
    }
    if let Some(path) = &cfg.observability.report
        && let Err(e) = write_report(Path::new(path), &json)
    {
        super::err(&format!("error: cannot write the report to {path}: {e}"));
    }
    exit_code(&rep, &result.abort)
}

fn write_report(path: &Path, json: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, format!("{json}\n"))
}

/// One exit code per run, in order of gravity.
fn exit_code(rep: &report::Report, abort: &Option<AbortReason>) -> Exit {
    match abort {
        Some(AbortReason::Auth(m)) => {
            super::err(&format!("error: authentication failed: {m}"));
            return Exit::AuthFailed;
        }
        Some(other) => {
            super::err(&format!("error: run aborted: {other}"));
            return Exit::Aborted;
        }
        None => {}
    }
    if let Some(v) = &rep.verification
        && (v.lost_events > 0 || v.duplicates > 0)
    {
        super::err(&format!(
            "error: verification: {} accepted events not stored, {} stored twice",
            v.lost_events, v.duplicates
        ));
        return Exit::VerifyFailed;
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
        super::err(&format!("error: SLO breached: {}", names.join("; ")));
        return Exit::SloBreach;
    }
    Exit::Ok
}
