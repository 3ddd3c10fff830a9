//! From config + overrides to the plan of a run (ripgrep's LowArgs → HiArgs): the config read
//! and checked, command-line overrides applied and checked, the token looked up, the pack
//! compiled, the target resolved (DNS here, once), the transport and its TLS client, the
//! syslog framing, the workload as one profile enum with its own parameters, the stop as
//! one of two kinds, batch sizing and timeouts. With `run::source` this is where the config is
//! translated: nothing after it reads YAML or config types on a worker. Failures are typed
//! `SetupError`s.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::adapter::syslog::SyslogFramer;
use crate::config::schema::{Adapter, Config, Mode, Profile as ProfileKind, Workload};
use crate::config::secrets::{self, Store, Token};
use crate::config::units::Dur;
use crate::engine::Stop;
use crate::engine::pacer::Profile;
use crate::engine::worker::Timeouts;
use crate::net::tls::{self, TlsClient, TlsSettings};
use crate::observe::{LaunchSpec, WatchSpec};
use crate::pack::compile::CompiledPack;
use crate::pack::entities::Entities;
use crate::pack::{self, Catalog};
use crate::run::error::SetupError;
use crate::run::shard::{self as shards, Shard};
use crate::run::source::{self, TimeSpec};
use crate::run::target::{self, Destination, Transport};
use crate::sink;
use crate::verify::source::Spec;

/// What the command line (or another caller) changes in a config.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Stop after this long (replaces `workload.stop`).
    pub duration: Option<Duration>,
    /// Stop after this many events (replaces `workload.stop`).
    pub total: Option<u64>,
    /// A steady rate (replaces the workload's profile).
    pub eps: Option<f64>,
    /// Worker threads (default: all cores, at most the connections).
    pub threads: Option<usize>,
    /// Concurrent connections (default: `workload.workers`, else 4).
    pub workers: Option<usize>,
    pub seed: Option<u64>,
    /// Do not pin worker threads to cores.
    pub no_pin: bool,
    /// Serve the status page here (turns `observability.dashboard` on).
    pub status: Option<SocketAddr>,
    /// Let the status page listen beyond loopback.
    pub allow_remote: bool,
    /// The environment variable with the status page's token.
    pub status_token_env: Option<String>,
    /// Serve `/metrics` here (replaces `observability.prometheus`).
    pub prometheus: Option<SocketAddr>,
    /// Keep serving this long after the run ends (replaces `observability.linger`).
    pub linger: Option<Duration>,
    /// More to watch (`--watch pid:N`, `name:NAME`, `cgroup:PATH`), added to
    /// `observability.watch`.
    pub watch: Vec<WatchArg>,
    /// A scenario file to play beside the background load (`--scenario`).
    pub scenario: Option<std::path::PathBuf>,
    /// How fast to play it (`--scenario-speed`, over the file's; default 1x).
    pub scenario_speed: Option<String>,
    /// This process is one shard of the run (`--shard I/N`).
    pub shard: Option<crate::run::shard::Shard>,
    /// The run has this many shards (`--shards N`, over `workload.shards`); the index is
    /// `job_index`.
    pub shards: Option<u32>,
    /// `JOB_COMPLETION_INDEX` as the environment has it (the caller reads it).
    pub job_index: Option<String>,
    /// The run id every shard shares (`--run-id`), instead of one of this process's own.
    pub run_id: Option<String>,
}

/// One `--watch` value.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchArg {
    Pid(u32),
    Name(String),
    Cgroup(String),
}

impl WatchArg {
    /// `pid:1234`, `name:syslog-ng` or `cgroup:/sys/fs/cgroup/…` (a bare number is a PID).
    pub fn parse(v: &str) -> Result<WatchArg, String> {
        let bad = || format!("{v:?}: expected pid:N, name:NAME or cgroup:PATH");
        match v.split_once(':') {
            Some(("pid", n)) => n
                .parse()
                .ok()
                .filter(|p| *p > 0)
                .map(WatchArg::Pid)
                .ok_or_else(bad),
            Some(("name", n)) if !n.is_empty() && !n.contains('/') => Ok(WatchArg::Name(n.into())),
            Some(("cgroup", p)) if !p.is_empty() => Ok(WatchArg::Cgroup(p.into())),
            None => v
                .parse()
                .ok()
                .filter(|p| *p > 0)
                .map(WatchArg::Pid)
                .ok_or_else(bad),
            _ => Err(bad()),
        }
    }
}

/// What the run watches and launches (`observability.watch`, `.target`, `--watch`).
#[derive(Clone, Debug, Default)]
pub struct WatchPlan {
    pub spec: WatchSpec,
    /// A target to launch before the load (its PID joins `spec`) and stop after, with the
    /// time it gets between SIGTERM and SIGKILL.
    pub launch: Option<(LaunchSpec, Duration)>,
}

impl WatchPlan {
    /// Something besides ingestbench itself is watched or launched.
    pub fn any(&self) -> bool {
        self.launch.is_some()
            || !(self.spec.pids.is_empty()
                && self.spec.names.is_empty()
                && self.spec.cgroups.is_empty())
    }
}

/// What to serve while the run goes on (the status page, `/metrics`), from the config's
/// `observability` block and the command line.
#[derive(Clone, Debug, Default)]
pub struct ServePlan {
    pub status: Option<StatusPlan>,
    /// `/metrics`, under the status page's rules (and its token).
    pub metrics: Option<StatusPlan>,
    /// Keep serving this long after the run ends.
    pub linger: Duration,
}

#[derive(Clone, Debug)]
pub struct StatusPlan {
    pub listen: SocketAddr,
    pub allow_remote: bool,
    /// The token a request must carry (a non-loopback page needs one); never printed.
    pub token: Option<String>,
}

/// A config read from a file or text, with its warnings.
pub struct LoadedConfig {
    pub config: Config,
    pub warnings: Vec<String>,
}

/// The plan of one run: everything `Run::start` needs, nothing it has to read again.
pub struct RunPlan {
    /// The config as read, overrides applied and the seed that will be used filled in (the
    /// report carries it, so a run can be repeated).
    pub config: Config,
    pub run_id: String,
    /// This machine's host name (the report, syslog headers).
    pub host: String,
    pub transport: Transport,
    pub destination: Destination,
    pub tls: Option<TlsClient>,
    /// The targets after the first when `target.url` is a list, each resolved with its own
    /// TLS client (its name for SNI and the certificate).
    pub more_targets: Vec<(target::Endpoint, Option<TlsClient>)>,
    pub token: Option<Token>,
    /// The syslog framing, for the syslog adapter.
    pub syslog: Option<SyslogFramer>,
    /// The source packs, one per source of a mix; none for a plain HTTP load without one
    /// (`http` has its body).
    pub packs: Vec<Arc<CompiledPack>>,
    /// Each source's part of the events (one source: `[1.0]`).
    pub shares: Vec<f64>,
    /// A recording replayed instead of a pack (`source: { file: … }`).
    pub replay: Option<ReplayPlan>,
    /// `adapter: http`: the request, and how long resolving the target's name took.
    pub http: Option<crate::run::http::HttpPlan>,
    pub dns: Option<Duration>,
    pub seed: u64,
    pub times: TimeSpec,
    pub jitter_ns: u64,
    pub profile: Profile,
    /// `workload.rate`: the data rate asked, the mean event size measured and the eps it
    /// comes to (`profile` is steady at that eps).
    pub data_rate: Option<crate::run::rate::RatePlan>,
    pub stop: Stop,
    pub threads: usize,
    /// Why `threads` is not what was asked (`--threads` above the connections), or how it
    /// sits on the cores (more threads than cores): said on stderr and in the report.
    pub threads_note: Option<String>,
    pub connections: usize,
    pub batch_events: usize,
    pub batch_bytes: usize,
    pub timeouts: Timeouts,
    pub pin: bool,
    /// The status page and `/metrics` to serve during the run.
    pub serve: ServePlan,
    pub watch: WatchPlan,
    /// The fault timeline (`faults:`), resolved.
    pub faults: Vec<crate::run::fault::Planned>,
    /// Things a person should know before the run starts (validation warnings, TLS off).
    pub warnings: Vec<String>,
    /// The stores to ask what arrived once the run has ended (`verify`).
    pub verify: Option<VerifyPlan>,
    /// The scenario played beside the background load (`--scenario`), resolved.
    pub scenario: Option<ScenarioRun>,
    /// This process's part of a sharded run: its profile and total are already its own.
    pub shard: Option<Shard>,
}

impl RunPlan {
    /// The source pack (the first of a mix).
    pub fn pack(&self) -> Option<&Arc<CompiledPack>> {
        self.packs.first()
    }

    /// The source pack's id (a mix's joined by `+`), or what a plain HTTP load sends
    /// without one.
    pub fn source_id(&self) -> String {
        match self.packs.as_slice() {
            [] => self.config.source_label(),
            packs => packs
                .iter()
                .map(|p| p.def.id.as_str())
                .collect::<Vec<_>>()
                .join("+"),
        }
    }

    pub fn source_version(&self) -> String {
        self.packs
            .iter()
            .map(|p| p.def.version.to_string())
            .collect::<Vec<_>>()
            .join("+")
    }

    /// Pack `k`'s carrier and default sourcetype (a plain HTTP body without a pack is a
    /// line).
    pub fn carrier(&self, k: usize) -> (crate::pack::load::Carrier, &str) {
        if let Some(r) = &self.replay {
            let json = r.recording.format == crate::generate::replay::Format::Ndjson;
            return (
                if json {
                    crate::pack::load::Carrier::Json
                } else {
                    crate::pack::load::Carrier::Line
                },
                "ingestbench:replay",
            );
        }
        match self.packs.get(k) {
            Some(p) => (p.def.carrier, &p.def.sourcetype),
            None => (crate::pack::load::Carrier::Line, ""),
        }
    }

    /// The framing of this run's HTTP requests. Against the built-in sink a plain HTTP
    /// request without a body asks `/health` (its `/ingest` takes bodies).
    pub fn framer(&self, host_port: &str, path: &str, run_id: &str) -> crate::adapter::Framer {
        self.framer_of(0, host_port, path, run_id)
    }

    /// The framing of requests of source `k` of a mix (its carrier and sourcetype).
    pub fn framer_of(
        &self,
        k: usize,
        host_port: &str,
        path: &str,
        run_id: &str,
    ) -> crate::adapter::Framer {
        let bodiless = !self.config.has_events()
            && self
                .http
                .as_ref()
                .is_some_and(|h| h.fixed.as_ref().is_none_or(|f| f.is_empty()));
        let path = if bodiless && self.config.target.url == "builtin" {
            "/health"
        } else {
            path
        };
        let (carrier, sourcetype) = self.carrier(k);
        let f = crate::adapter::Framer::new(
            &self.config.target,
            self.token.as_ref(),
            host_port,
            path,
            carrier,
            sourcetype,
            run_id,
        )
        .untagged(!self.config.tagged());
        match &self.http {
            Some(h) => f.with_http(h),
            None => f,
        }
    }
}

/// A recording to replay: read and indexed at setup, and how its lines go out.
#[derive(Clone)]
pub struct ReplayPlan {
    pub recording: Arc<crate::generate::replay::Recording>,
    pub times: crate::generate::replay::Times,
    pub looped: bool,
}

/// The syslog defaults of a replayed line: facility user, severity info, app `ingestbench`.
fn replay_syslog() -> crate::pack::load::SyslogDefaults {
    crate::pack::load::SyslogDefaults {
        app_name: "ingestbench".into(),
        facility: 1,
        severity: 6,
        msgid: "-".into(),
    }
}

/// The recording `cfg` replays, read and indexed.
fn replay_plan(cfg: &Config) -> Result<Option<ReplayPlan>, SetupError> {
    use crate::config::schema::ReplayTimes;
    use crate::generate::replay::Times;
    let Some(r) = &cfg.replay else {
        return Ok(None);
    };
    let recording =
        load_recording(r).map_err(|e| SetupError::invalid(format!("source.file: {e}")))?;
    Ok(Some(ReplayPlan {
        recording: Arc::new(recording),
        times: match r.timestamps {
            ReplayTimes::Keep => Times::Keep,
            ReplayTimes::Now => Times::Now,
            ReplayTimes::Shift => Times::Shift,
        },
        looped: r.looped,
    }))
}

/// `source: { file: … }` read and indexed as a run reads it (held in memory up to
/// `source.memory`, else its head for a stream): `validate` reads it so too, so a recording
/// a run refuses (no lines, a line that is not JSON, no timestamp found) is refused there.
pub fn load_recording(
    r: &crate::config::schema::Replay,
) -> Result<crate::generate::replay::Recording, String> {
    use crate::config::schema::ReplayFormat;
    use crate::generate::replay::{self, Format, Locate};
    let files = replay::expand(&r.file)?;
    let locate = match &r.timestamp {
        Some(t) => Locate::Given {
            regex: t.regex.clone(),
            format: crate::generate::time::TsFormat::parse(&t.format)
                .ok_or_else(|| format!("source.timestamp.format: {:?} is not one", t.format))?,
        },
        None => Locate::Auto,
    };
    let format = match r.format {
        ReplayFormat::Lines => Format::Lines,
        ReplayFormat::Ndjson => Format::Ndjson,
    };
    replay::Recording::load_within(files, format, &locate, r.memory.0)
}

/// A scenario resolved for a run: against the run's entity pools, its seed the file's or
/// the run's.
pub struct ScenarioRun {
    pub file: String,
    pub scenario: Arc<crate::scenario::plan::Scenario>,
}

/// `verify`, parsed: the stores in order and how long each may take to settle.
#[derive(Clone, Debug)]
pub struct VerifyPlan {
    pub specs: Vec<Spec>,
    pub settle_timeout: Duration,
    /// Credentials and TLS for the search-API stores.
    pub search: crate::verify::source::SearchOptions,
}

/// The config's `verify` block as a plan. Validation has checked it with lines; this holds
/// the same rules for a config made in code: every spec parses, and the events carry tags.
fn verify_plan(cfg: &Config) -> Result<Option<VerifyPlan>, SetupError> {
    let Some(v) = &cfg.verify else {
        return Ok(None);
    };
    if !cfg.tagged() {
        return Err(SetupError::invalid(
            "verify: asks stores about this run's events by their accounting tags, and source.accounting is false",
        ));
    }
    if v.sources.is_empty() {
        return Err(SetupError::invalid(
            "verify.sources: give at least one store",
        ));
    }
    let specs = v
        .sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            crate::verify::check_spec(s)
                .map_err(|e| SetupError::invalid(format!("verify.sources[{i}]: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(VerifyPlan {
        specs,
        settle_timeout: v.settle_timeout.0,
        search: verify_search(v)?,
    }))
}

/// The search-API stores' credentials (looked up now: a secret that is not there stops the
/// run before the load, not after it) and TLS.
fn verify_search(
    v: &crate::config::schema::Verify,
) -> Result<crate::verify::source::SearchOptions, SetupError> {
    use crate::verify::source::{SearchOptions, auth};
    let mut o = SearchOptions::default();
    if let Some(a) = &v.auth {
        o.auth = auth::resolve(&auth::AuthFlags {
            scheme: a.scheme.clone(),
            user: a.username.clone(),
            token_env: a.token_env.clone(),
            token_file: a.token_file.clone(),
            token_secret: a.token_secret.clone(),
        })
        .map_err(|e| SetupError::invalid(format!("verify.auth: {e}")))?;
    }
    if let Some(t) = &v.tls {
        o.tls.verify = t.verify;
        o.tls.ca_file = t.ca_file.as_ref().map(PathBuf::from);
    }
    if let Some(i) = &v.splunk_index {
        o.splunk.index = i.clone();
    }
    o.check()
        .map_err(|e| SetupError::invalid(format!("verify: {e}")))?;
    Ok(o)
}

/// How long an attempt may wait for its answer, and how long the answers in flight are
/// waited for after the schedule ends.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

fn timeouts(cfg: &Config) -> Timeouts {
    Timeouts {
        request: cfg
            .target
            .http
            .as_ref()
            .and_then(|h| h.timeout)
            .map_or(REQUEST_TIMEOUT, |d| d.0),
        drain: DRAIN_TIMEOUT,
        // A plain HTTP request is not retried: a failure is a failure, as in hey.
        max_attempts: if cfg.target.adapter == Adapter::Http {
            1
        } else {
            cfg.target.retry.max_attempts
        },
        max_retry_time: cfg.target.retry.max_time.0,
    }
}

/// Reads and checks a config file: every problem at once, each with its field path and line.
pub fn load_config(
    path: &Path,
    store: &Store,
    catalog: &Catalog,
) -> Result<LoadedConfig, SetupError> {
    if std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(SetupError::invalid(format!(
            "{}: not found",
            path.display()
        )));
    }
    let loaded = crate::config::load(path, store, Some(catalog));
    checked(loaded, &path.display().to_string(), true)
}

/// As `load_config`, with `adjust` applied before the rules judge the config
/// (`config::load_adjusted`: a run's overrides).
pub fn load_config_adjusted(
    path: &Path,
    store: &Store,
    catalog: &Catalog,
    adjust: &mut dyn FnMut(&mut Config),
) -> Result<LoadedConfig, SetupError> {
    if std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(SetupError::invalid(format!(
            "{}: not found",
            path.display()
        )));
    }
    let loaded = crate::config::load_adjusted(path, store, Some(catalog), adjust);
    checked(loaded, &path.display().to_string(), true)
}

/// As `load_config`, from text (`name` says where it came from in messages).
pub fn load_text(
    text: &str,
    name: &str,
    store: &Store,
    catalog: &Catalog,
) -> Result<LoadedConfig, SetupError> {
    checked(
        crate::config::load_str(text, store, Some(catalog)),
        name,
        true,
    )
}

/// As `load_text`, for text a program wrote (`run`'s flags as a config): messages name the
/// field alone, since its lines are no person's.
pub fn load_generated(
    text: &str,
    name: &str,
    store: &Store,
    catalog: &Catalog,
) -> Result<LoadedConfig, SetupError> {
    checked(
        crate::config::load_str(text, store, Some(catalog)),
        name,
        false,
    )
}

fn checked(
    mut loaded: crate::config::Loaded,
    name: &str,
    lines: bool,
) -> Result<LoadedConfig, SetupError> {
    if !lines {
        for d in &mut loaded.diags.items {
            d.pos = None;
        }
    }
    let Some(config) = loaded.config else {
        let mut msgs: Vec<String> = loaded.diags.errors().map(|d| d.to_string()).collect();
        msgs.push(format!("{name}: invalid config"));
        return Err(SetupError::Invalid(msgs));
    };
    let warnings = loaded
        .diags
        .warnings()
        // A token that is not set yet is validate's business; the run resolves it below.
        .filter(|d| !d.path.starts_with("target.auth.token"))
        .map(|d| d.to_string())
        .collect();
    Ok(LoadedConfig { config, warnings })
}

/// The plan of a run of `cfg` with `ov` applied.
pub fn plan(
    mut cfg: Config,
    ov: &Overrides,
    catalog: &Catalog,
    store: &Store,
) -> Result<RunPlan, SetupError> {
    apply_overrides(&mut cfg, ov)?;
    refuse_invalid(&cfg, store, catalog)?;
    let mut warnings = Vec::new();
    let token = match &cfg.target.auth {
        Some(a) => secrets::resolve(a, store).map_err(SetupError::invalid)?,
        None => None,
    };
    let sp = source::source_plan(&cfg);
    let shard = shard_of(&cfg, ov)?;
    // Shards share the entity pools: without a seed given, one from the config.
    let seed = match (cfg.seed, shard) {
        (Some(s), _) => s,
        (None, Some(_)) => config_hash(&cfg),
        (None, None) => source::random_seed(),
    };
    cfg.seed = Some(seed);
    let sizes = sp.as_ref().map(|s| s.sizes).unwrap_or_default();
    let entities = Arc::new(Entities::generate(seed, &sizes));
    let packs = match &sp {
        Some(sp) => sp
            .packs
            .iter()
            .map(|(id, version)| {
                pack::load_compiled(catalog, id, version, &entities, sp.accounting)
                    .map_err(SetupError::Invalid)
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let shares = cfg.shares();
    let replay = replay_plan(&cfg)?;
    let http = crate::run::http::plan(&cfg)?;
    let transport = target::transport(&cfg)?;
    let resolving = std::time::Instant::now();
    let destination = destination(&cfg, transport, token.as_ref())?;
    let dns = matches!(&destination, Destination::Remote(e) if e.unix.is_none())
        .then(|| resolving.elapsed());
    let tls = match (&destination, transport.is_tls()) {
        (Destination::Remote(ep), true) => {
            let settings = tls_settings(&cfg);
            if !settings.verify {
                warnings.push(
                    "target.tls.verify is false: the target's certificate is not checked".into(),
                );
            }
            Some(tls::client(&settings, &ep.host).map_err(SetupError::invalid)?)
        }
        _ => None,
    };
    let more_targets = cfg
        .target
        .urls
        .iter()
        .skip(1)
        .map(|u| {
            let ep = target::resolve(u)?;
            let tls = match transport.is_tls() {
                true => {
                    Some(tls::client(&tls_settings(&cfg), &ep.host).map_err(SetupError::invalid)?)
                }
                false => None,
            };
            Ok((ep, tls))
        })
        .collect::<Result<Vec<_>, SetupError>>()?;
    let host = host_name();
    // Datagrams and RELP frames carry one message each: no octet count or LF.
    let udp = transport.unframed();
    let syslog = match (packs.first(), &replay, cfg.target.adapter) {
        (Some(pack), _, Adapter::Syslog) => Some(SyslogFramer::new(
            cfg.target.syslog.as_ref(),
            &pack.def,
            &host,
            udp,
        )),
        (None, Some(_), Adapter::Syslog) => Some(SyslogFramer::of(
            cfg.target.syslog.as_ref(),
            &replay_syslog(),
            crate::pack::load::Carrier::Line,
            &host,
            udp,
        )),
        _ => None,
    };
    let run_id = match (&ov.run_id, shard) {
        (Some(id), _) => {
            shards::check_run_id(id)?;
            id.clone()
        }
        (None, Some(_)) => {
            let id = derived_run_id(&cfg, seed);
            warnings.push(format!(
                "the shards share run id {id}, derived from the config and seed: give --run-id to tell two runs of one config apart"
            ));
            id
        }
        (None, None) => run_id(&cfg, seed),
    };
    let data_rate = match (cfg.workload.rate, packs.as_slice()) {
        (Some(_), []) => {
            return Err(SetupError::invalid(
                "workload.rate is turned into events per second through the source's mean event size: give source (a pack), or eps",
            ));
        }
        (Some(rate), _) => Some(measured_rate(
            rate,
            &cfg,
            (&packs, &shares),
            (seed, &run_id),
            (syslog.as_ref(), &host, udp),
            http.as_ref(),
        )?),
        (None, _) => None,
    };
    let mut profile = match &data_rate {
        Some(r) => Profile::Steady { eps: r.eps },
        None => profile(&cfg.workload)?,
    };
    let mut stop = stop(&cfg.workload)?;
    if let Some(s) = shard {
        shard_checks(&cfg, &replay)?;
        profile = profile.scaled(s.share());
        if let Stop::Total(n) = stop {
            stop = Stop::Total(s.part(n));
        }
    }
    if let Some(r) = replay.as_ref().filter(|r| !r.looped) {
        // Each line once: the run ends when the recording does, if not before.
        let lines = r.recording.len() as u64;
        stop = match stop {
            Stop::Total(n) => Stop::Total(n.min(lines)),
            Stop::After(d) if profile.cumulative(d.as_secs_f64()) > lines as f64 => {
                Stop::Total(lines)
            }
            s => s,
        };
    }
    let serve = serve_plan(&cfg, ov)?;
    let watch = watch_plan(&cfg);
    let faults = crate::run::fault::plan(&cfg)?;
    let verify = verify_plan(&cfg)?;
    if ov.scenario.is_some() && http.is_some() {
        return Err(SetupError::invalid(
            "--scenario: a scenario plays its stage events through an event adapter (lphc, generic-hec, syslog); adapter http sends one request per event of its own",
        ));
    }
    let mut scenario = scenario_plan(
        ov,
        catalog,
        &entities,
        seed,
        (&profile, stop),
        &mut warnings,
    )?;
    if let Some(s) = shard.filter(|s| s.index > 0 && scenario.is_some()) {
        scenario = None;
        warnings.push(format!(
            "--scenario: shard 0 plays the scenario once for the run; shard {} sends only its part of the background load",
            s.index
        ));
    }
    for (key, set) in [
        (
            "max_watched_cpu_cores",
            cfg.slo.max_watched_cpu_cores.is_some(),
        ),
        ("max_watched_rss", cfg.slo.max_watched_rss.is_some()),
    ] {
        if set && !watch.any() {
            return Err(SetupError::invalid(format!(
                "slo.{key} judges watched processes, and nothing is watched: give observability.watch, observability.target or --watch"
            )));
        }
    }
    let connections = cfg.workload.workers.map_or(4, |w| w as usize);
    let (threads, threads_note) = threads_of(ov.threads, connections);
    warnings.extend(threads_note.clone());
    let mut batch_events = cfg.target.batch.max_events as usize;
    if let Some(rps) = cfg.target.limits.max_requests_per_sec {
        // Batches grow so the event rate holds under the request cap (each shard's part of
        // both, the same ratio), up to the largest batch a config may ask for.
        let rps = shard.map_or(rps, |s| s.rate(rps));
        let need = (profile.peak() / rps)
            .ceil()
            .min(crate::config::validate::MAX_BATCH_EVENTS as f64);
        batch_events = batch_events.max(need as usize);
    }
    Ok(RunPlan {
        run_id,
        data_rate,
        host,
        transport,
        destination,
        tls,
        more_targets,
        token,
        syslog,
        packs,
        shares,
        replay,
        http,
        dns,
        seed,
        times: sp
            .as_ref()
            .map_or(source::TimeSpec::Realtime, |s| s.times.clone()),
        jitter_ns: sp.as_ref().map_or(0, |s| s.jitter_ns),
        profile,
        stop,
        threads,
        threads_note,
        connections,
        batch_events,
        batch_bytes: cfg.target.batch.max_bytes.0 as usize,
        timeouts: timeouts(&cfg),
        pin: !ov.no_pin,
        serve,
        watch,
        faults,
        warnings,
        verify,
        scenario,
        shard,
        config: cfg,
    })
}

/// The worker threads a run has: `--threads` (checked against `MAX_THREADS` with the other
/// overrides), else one per core; at most one per connection, since a thread without a
/// connection has nothing to send. The note says what was run and why when that is not what
/// was asked, or when the threads outnumber the cores.
fn threads_of(asked: Option<usize>, connections: usize) -> (usize, Option<String>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = asked
        .unwrap_or(cores)
        .clamp(1, MAX_THREADS)
        .min(connections);
    let note = match asked {
        Some(t) if t > threads => Some(format!(
            "--threads {t}: {threads} worker threads run, one per connection at most ({connections} connections: give --workers {t} or more for {t} threads)"
        )),
        Some(t) if t > cores => Some(format!(
            "--threads {t}: {t} worker threads on {cores} cores, about {} to a core",
            t.div_ceil(cores)
        )),
        _ => None,
    };
    (threads, note)
}

/// The validator's rules over the config as the run will use it (overrides applied): any
/// error refuses the run with the message `validate` gives.
fn refuse_invalid(cfg: &Config, store: &Store, catalog: &Catalog) -> Result<(), SetupError> {
    let diags = crate::config::validate::check(cfg, store, Some(catalog));
    let msgs: Vec<String> = diags.errors().map(|d| d.to_string()).collect();
    if msgs.is_empty() {
        Ok(())
    } else {
        Err(SetupError::Invalid(msgs))
    }
}

/// The shard this process is: `--shard`, else `--shards` / `workload.shards` with the index
/// Kubernetes gives.
fn shard_of(cfg: &Config, ov: &Overrides) -> Result<Option<Shard>, SetupError> {
    let count = ov
        .shards
        .map(|n| (n, "--shards"))
        .or(cfg.workload.shards.map(|n| (n, "workload.shards")));
    Shard::resolve(ov.shard, count, ov.job_index.as_deref())
}

/// What a shard cannot split: a recording played once (each shard would send it whole) and
/// a ceiling search (its steps judge one process's rate).
fn shard_checks(cfg: &Config, replay: &Option<ReplayPlan>) -> Result<(), SetupError> {
    if replay.is_some() {
        return Err(SetupError::invalid(
            "source.file with shards: each shard would send the whole recording; run a recording from one process",
        ));
    }
    if cfg.workload.find_ceiling {
        return Err(SetupError::invalid(
            "workload.find_ceiling with shards: a ceiling search steps one process's rate; search from one process",
        ));
    }
    Ok(())
}

/// `workload.rate` measured on this run's source, seed and run id, framed as its adapter
/// frames (`run::rate`); a mix source by source, each framed as its own.
fn measured_rate(
    rate: crate::config::units::DataRate,
    cfg: &Config,
    (packs, shares): (&[Arc<CompiledPack>], &[f64]),
    (seed, run_id): (u64, &str),
    (syslog, host, udp): (Option<&SyslogFramer>, &str, bool),
    http: Option<&crate::run::http::HttpPlan>,
) -> Result<crate::run::rate::RatePlan, SetupError> {
    use crate::run::rate::{self, Framing, Sample};
    let measure = |k: usize, pack: &CompiledPack| {
        let sample = Sample {
            pack,
            seed,
            run_id,
            realtime: cfg.mode == Mode::Realtime,
            batch_events: cfg.target.batch.max_events as usize,
        };
        if let Some(s) = syslog {
            let own = match k {
                0 => s.clone(),
                _ => SyslogFramer::new(cfg.target.syslog.as_ref(), &pack.def, host, udp),
            };
            return rate::measured(&sample, Framing::Syslog(own));
        }
        // The request head (host, path, token) is not counted: none of it is needed here.
        let f = crate::adapter::Framer::new(
            &cfg.target,
            None,
            "",
            "",
            pack.def.carrier,
            &pack.def.sourcetype,
            run_id,
        )
        .untagged(!cfg.tagged());
        let f = match http {
            Some(h) => f.with_http(h),
            None => f,
        };
        rate::measured(&sample, Framing::Http(&f))
    };
    let parts = packs
        .iter()
        .zip(shares)
        .enumerate()
        .map(|(k, (pack, &share))| Ok((pack.def.id.clone(), share, measure(k, pack)?)))
        .collect::<Result<Vec<_>, SetupError>>()?;
    rate::plan_mix(rate, parts)
}

/// `--scenario`: the file read and resolved against the run's pools (its seed the file's,
/// else the run's), and refused when it would play longer than the run lasts — its last
/// stages would never be sent.
fn scenario_plan(
    ov: &Overrides,
    catalog: &Catalog,
    entities: &Arc<Entities>,
    run_seed: u64,
    (profile, stop): (&Profile, Stop),
    warnings: &mut Vec<String>,
) -> Result<Option<ScenarioRun>, SetupError> {
    use crate::scenario::file::Speed;
    let Some(path) = &ov.scenario else {
        return Ok(None);
    };
    let speed = ov
        .scenario_speed
        .as_deref()
        .map(Speed::parse)
        .transpose()
        .map_err(|e| SetupError::invalid(format!("--scenario-speed: {e}")))?;
    let opened = crate::scenario::open(path).map_err(SetupError::Invalid)?;
    let seed = Some(opened.def.seed.unwrap_or(run_seed));
    let (s, w) = opened
        .resolve(
            catalog,
            |_| entities.clone(),
            seed,
            speed,
            Speed::Factor(1.0),
        )
        .map_err(SetupError::Invalid)?;
    warnings.extend(w.into_iter().map(|w| format!("--scenario: {w}")));
    let plays = s.speed.wall(s.span());
    let lasts = match stop {
        Stop::After(d) => Some(d),
        Stop::Total(n) => profile.time_for(n as f64).map(crate::clock::secs),
    };
    if lasts.is_none_or(|d| plays > d) {
        let run = lasts.map_or("an unknown time".to_string(), |d| Dur(d).to_string());
        return Err(SetupError::invalid(format!(
            "--scenario {}: plays for {} at speed {}, and the run's schedule lasts {run}: its last stage events would never be sent; give --scenario-speed (e.g. 60x) or a longer run",
            path.display(),
            Dur(plays),
            s.speed
        )));
    }
    Ok(Some(ScenarioRun {
        file: path.display().to_string(),
        scenario: Arc::new(s),
    }))
}

/// What `cfg` watches and launches (`--watch` is in its `observability.watch` already:
/// `apply_overrides`).
fn watch_plan(cfg: &Config) -> WatchPlan {
    let w = &cfg.observability.watch;
    let spec = WatchSpec {
        pids: w.pids.clone(),
        names: w.names.clone(),
        cgroups: w.cgroups.iter().map(std::path::PathBuf::from).collect(),
        children: w.children,
        include_self: w.own,
    };
    let launch = cfg.observability.target.as_ref().map(|t| {
        let mut l = LaunchSpec::new(t.command.clone());
        l.args = t.args.clone();
        l.env = t.env.clone();
        l.ready_port = t.ready_port;
        l.ready_timeout = t.ready_timeout.0;
        l.log = t.log.as_ref().map(std::path::PathBuf::from);
        (l, t.stop_grace.0)
    });
    WatchPlan { spec, launch }
}

/// Most worker threads a run takes (one per core is the most that helps; a shard's agent
/// ids leave room for this many).
pub const MAX_THREADS: usize = 256;

/// Applies command-line overrides: the stop, the rate, the seed and the connections go into
/// the config, where `check` (the validator's rules) judges them as it judges a file's
/// values; `--threads`, which no config key holds, is checked here.
pub fn apply_overrides(c: &mut Config, ov: &Overrides) -> Result<(), SetupError> {
    if let Some(t) = ov.threads
        && !(1..=MAX_THREADS).contains(&t)
    {
        return Err(SetupError::invalid(format!(
            "--threads must be between 1 and {MAX_THREADS} worker threads (one per core is the most that helps), found {t}"
        )));
    }
    if let Some(w) = ov.workers {
        c.workload.workers = Some(u32::try_from(w).unwrap_or(u32::MAX));
    }
    if let Some(d) = ov.duration {
        c.workload.stop.after = Some(crate::config::units::Dur(d));
        c.workload.stop.total_events = None;
    }
    if let Some(n) = ov.total {
        c.workload.stop.total_events = Some(n);
        c.workload.stop.after = None;
    }
    if let Some(e) = ov.eps {
        // A mix given by eps per source keeps its parts, as shares of the new rate.
        let shares = c.shares();
        if c.sources.len() > 1 && c.sources.iter().all(|s| s.eps.is_some()) {
            for (s, share) in c.sources.iter_mut().zip(shares) {
                s.eps = None;
                s.share = Some(share);
            }
        }
        c.workload.profile = ProfileKind::Steady;
        c.workload.eps = Some(e);
        c.workload.rate = None;
        c.workload.burst = None;
        c.workload.ramp = None;
        c.workload.steps = None;
    }
    if let Some(s) = ov.seed {
        c.seed = Some(s);
    }
    // `--watch` joins `observability.watch`, each once however often the overrides are
    // applied (the command line folds them into the config before the plan applies them).
    let w = &mut c.observability.watch;
    for a in &ov.watch {
        match a {
            WatchArg::Pid(p) if !w.pids.contains(p) => w.pids.push(*p),
            WatchArg::Name(n) if !w.names.contains(n) => w.names.push(n.clone()),
            WatchArg::Cgroup(g) if !w.cgroups.contains(g) => w.cgroups.push(g.clone()),
            _ => {}
        }
    }
    Ok(())
}

/// The workload's profile with its own parameters; a kind without its block is an error,
/// never a silent default.
pub fn profile(w: &Workload) -> Result<Profile, SetupError> {
    let missing = |what: &str| {
        SetupError::invalid(format!(
            "workload.{what} is needed for profile {}",
            w.profile
        ))
    };
    Ok(match w.profile {
        ProfileKind::Steady => Profile::Steady {
            eps: w.eps.ok_or_else(|| {
                SetupError::invalid("workload.eps is needed for a steady run; give --eps")
            })?,
        },
        ProfileKind::Closed => Profile::Closed,
        ProfileKind::Burst => {
            let b = w.burst.as_ref().ok_or_else(|| missing("burst"))?;
            Profile::Burst {
                high: b.high_eps,
                low: b.low_eps,
                period: b.period.0.as_secs_f64(),
                duty: b.duty,
            }
        }
        ProfileKind::Ramp => {
            let r = w.ramp.as_ref().ok_or_else(|| missing("ramp"))?;
            Profile::Ramp {
                from: r.from_eps,
                to: r.to_eps,
                over: r.over.0.as_secs_f64(),
            }
        }
        ProfileKind::Steps => {
            let s = w
                .steps
                .as_ref()
                .filter(|s| !s.is_empty())
                .ok_or_else(|| missing("steps"))?;
            Profile::Steps(
                s.iter()
                    .map(|st| (st.eps, st.hold.0.as_secs_f64()))
                    .collect(),
            )
        }
    })
}

fn listen_addr(field: &str, v: &str) -> Result<SocketAddr, SetupError> {
    v.parse().map_err(|_| {
        SetupError::invalid(format!(
            "{field}: {v:?} is not a listen address such as 127.0.0.1:8090"
        ))
    })
}

fn serve_plan(cfg: &Config, ov: &Overrides) -> Result<ServePlan, SetupError> {
    let o = &cfg.observability;
    let listen = match (ov.status, o.dashboard) {
        (Some(a), _) => Some(a),
        (None, true) => Some(match &o.dashboard_listen {
            Some(l) => listen_addr("observability.dashboard_listen", l)?,
            None => SocketAddr::from(([127, 0, 0, 1], 0)),
        }),
        (None, false) => None,
    };
    let metrics = match (ov.prometheus, &o.prometheus) {
        (Some(a), _) => Some(a),
        (None, Some(p)) => Some(listen_addr("observability.prometheus", p)?),
        (None, None) => None,
    };
    let allow_remote = ov.allow_remote || o.allow_remote;
    // One token for both pages, read only when one is served.
    let token = match (&listen, &metrics) {
        (None, None) => None,
        _ => web_token(ov, o)?,
    };
    let page = |what: &str, listen: SocketAddr| -> Result<StatusPlan, SetupError> {
        if !listen.ip().is_loopback() {
            if !allow_remote {
                return Err(SetupError::invalid(format!(
                    "{what} would listen on {listen}, beyond loopback: give --allow-remote (observability.allow_remote) and a token"
                )));
            }
            if token.is_none() {
                return Err(SetupError::invalid(format!(
                    "{what} on {listen} (beyond loopback) needs a token: --status-token-env VAR (observability.dashboard_token_env)"
                )));
            }
        }
        Ok(StatusPlan {
            listen,
            allow_remote,
            token: token.clone(),
        })
    };
    Ok(ServePlan {
        status: listen.map(|l| page("the status page", l)).transpose()?,
        metrics: metrics.map(|l| page("/metrics", l)).transpose()?,
        linger: ov.linger.unwrap_or(o.linger.0),
    })
}

/// The token of the status page and `/metrics`, from the variable the flag or the config
/// names: set, and 16 to 1024 visible characters.
fn web_token(
    ov: &Overrides,
    o: &crate::config::schema::Observability,
) -> Result<Option<String>, SetupError> {
    let Some(v) = ov
        .status_token_env
        .as_ref()
        .or(o.dashboard_token_env.as_ref())
    else {
        return Ok(None);
    };
    let t = std::env::var(v)
        .ok()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            SetupError::invalid(format!("the status page's token variable {v} is not set"))
        })?;
    if !crate::config::secrets::web_token_usable(&t) {
        return Err(SetupError::invalid(format!(
            "the status page's token (in {v}) must be {}",
            crate::config::secrets::WEB_TOKEN_RULE
        )));
    }
    Ok(Some(t))
}

fn stop(w: &Workload) -> Result<Stop, SetupError> {
    match (w.stop.after, w.stop.total_events) {
        (Some(d), None) => Ok(Stop::After(d.0)),
        (None, Some(n)) => Ok(Stop::Total(n)),
        _ => Err(SetupError::invalid(
            "workload.stop: give exactly one of stop.after and stop.total_events",
        )),
    }
}

fn destination(
    cfg: &Config,
    transport: Transport,
    token: Option<&Token>,
) -> Result<Destination, SetupError> {
    if let Some(sock) = cfg
        .target
        .http
        .as_ref()
        .and_then(|h| h.unix_socket.as_ref())
    {
        return target::unix(&cfg.target.url, std::path::Path::new(sock)).map(Destination::Remote);
    }
    if cfg.target.url != "builtin" {
        return target::resolve(&cfg.target.url).map(Destination::Remote);
    }
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    Ok(Destination::Builtin(sink::SinkConfig {
        http: Some(any),
        token: token.map(|t| t.expose().to_string()),
        threads: 1,
        faults: cfg
            .target
            .builtin
            .as_ref()
            .and_then(|b| b.faults)
            .unwrap_or_default(),
        hec_ack: cfg.target.hec.as_ref().is_some_and(|h| h.ack),
        syslog_tcp: (transport == Transport::SyslogTcp).then_some(any),
        syslog_udp: (transport == Transport::SyslogUdp).then_some(any),
        ..sink::SinkConfig::default()
    }))
}

/// The TLS settings of `cfg`'s target (`validate` builds the client from them as the run
/// does, so a CA or key file the run would refuse is refused there).
pub fn tls_settings(cfg: &Config) -> TlsSettings {
    let Some(t) = &cfg.target.tls else {
        return TlsSettings::default();
    };
    TlsSettings {
        verify: t.verify,
        ca_file: t.ca_file.as_ref().map(PathBuf::from),
        client_cert: t
            .client_cert
            .as_ref()
            .zip(t.client_key.as_ref())
            .map(|(c, k)| (PathBuf::from(c), PathBuf::from(k))),
        server_name: t.server_name.clone(),
    }
}

/// The run id every event's accounting tag carries: in `mode: deterministic` it follows from
/// the config and seed, so two runs of one config send the same bytes; otherwise it differs
/// per run (clock and process id).
fn run_id(cfg: &Config, seed: u64) -> String {
    let x = match cfg.mode {
        Mode::Deterministic => return derived_run_id(cfg, seed),
        Mode::Realtime => {
            let t = crate::generate::time::now() as u64;
            t ^ (u64::from(std::process::id()) << 40) ^ 0x9e37_79b9_7f4a_7c15
        }
    };
    format!("r-{:012x}", x & 0xffff_ffff_ffff)
}

/// The run id that follows from the config and seed alone (deterministic runs, shards).
fn derived_run_id(cfg: &Config, seed: u64) -> String {
    let x = config_hash(cfg) ^ seed.rotate_left(17);
    format!("r-{:012x}", x & 0xffff_ffff_ffff)
}

/// A hash of the config as read (the seed left as it is given).
fn config_hash(cfg: &Config) -> u64 {
    fnv1a(serde_json::to_string(cfg).unwrap_or_default().as_bytes())
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// This machine's host name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "schema_version: \"1.0\"\nseed: 3\ntarget: { url: builtin }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 10, stop: { after: 5s } }\n";

    fn plan_of(text: &str, ov: &Overrides) -> Result<RunPlan, SetupError> {
        let store = Store::new("/nonexistent/store".into());
        let catalog = Catalog::discover(None).unwrap();
        let c = load_text(text, "t.yaml", &store, &catalog)?;
        plan(c.config, ov, &catalog, &store)
    }

    #[test]
    fn usage_errors_are_invalid() {
        for ov in [
            Overrides {
                threads: Some(0),
                ..Overrides::default()
            },
            Overrides {
                workers: Some(0),
                ..Overrides::default()
            },
            Overrides {
                eps: Some(-1.0),
                ..Overrides::default()
            },
            Overrides {
                duration: Some(Duration::ZERO),
                ..Overrides::default()
            },
        ] {
            let e = plan_of(BASE, &ov).err().expect("refused");
            assert_eq!(e.exit(), crate::exit::Exit::Invalid, "{e}");
        }
    }

    /// The validator judges the config as the run uses it: overrides applied, `--watch`
    /// included (once, however often the overrides are applied).
    #[test]
    fn overrides_are_judged_by_the_validators_rules() {
        let e = plan_of(
            BASE,
            &Overrides {
                workers: Some(5000),
                ..Overrides::default()
            },
        )
        .err()
        .expect("refused");
        assert_eq!(
            e.messages(),
            vec!["workload.workers: must be between 1 and 4096 connections, found 5000"]
        );
        let e = plan_of(
            BASE,
            &Overrides {
                eps: Some(1e-19),
                ..Overrides::default()
            },
        )
        .err()
        .expect("refused");
        assert!(e.messages()[0].starts_with("workload.eps: "), "{e}");
        let store = Store::new("/nonexistent/store".into());
        let catalog = Catalog::discover(None).unwrap();
        let mut c = load_text(BASE, "t.yaml", &store, &catalog).unwrap().config;
        c.slo.max_watched_rss = Some(crate::config::units::Size(1 << 30));
        let e = plan(c.clone(), &Overrides::default(), &catalog, &store)
            .err()
            .expect("nothing watched");
        assert!(e.messages()[0].starts_with("slo.max_watched_rss: "), "{e}");
        let ov = Overrides {
            watch: vec![WatchArg::Pid(std::process::id())],
            ..Overrides::default()
        };
        apply_overrides(&mut c, &ov).unwrap();
        let p = plan(c, &ov, &catalog, &store).unwrap();
        assert_eq!(p.watch.spec.pids, vec![std::process::id()]);
    }

    #[test]
    fn a_name_that_does_not_resolve_is_a_dns_error() {
        let text = BASE.replace("url: builtin", "url: \"http://no-such-host.invalid:9/x\"");
        let e = plan_of(&text, &Overrides::default())
            .err()
            .expect("refused");
        assert!(matches!(e, SetupError::Dns(_)), "{e}");
        assert_eq!(e.exit(), crate::exit::Exit::Aborted);
    }

    #[test]
    fn overrides_and_defaults_shape_the_plan() {
        let p = plan_of(
            BASE,
            &Overrides {
                eps: Some(500.0),
                total: Some(1000),
                threads: Some(8),
                workers: Some(2),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(p.profile, Profile::Steady { eps: 500.0 });
        assert_eq!(p.stop, Stop::Total(1000));
        assert_eq!(
            (p.threads, p.connections),
            (2, 2),
            "no more threads than connections"
        );
        assert_eq!(p.transport, Transport::Http);
        assert!(matches!(p.destination, Destination::Builtin(_)));
        assert_eq!(p.seed, 3);
        assert_eq!(p.config.seed, Some(3));
        assert!(p.run_id.starts_with("r-") && p.run_id.len() == 14);
    }

    #[test]
    fn deterministic_runs_have_one_run_id() {
        let text = BASE.replace("seed: 3", "seed: 3\nmode: deterministic");
        let a = plan_of(&text, &Overrides::default()).unwrap();
        let b = plan_of(&text, &Overrides::default()).unwrap();
        assert_eq!(a.run_id, b.run_id);
        let c = plan_of(&text.replace("seed: 3", "seed: 4"), &Overrides::default()).unwrap();
        assert_ne!(a.run_id, c.run_id);
    }

    #[test]
    fn verify_is_planned_and_its_rules_hold_for_a_config_made_in_code() {
        let text = format!("{BASE}verify: {{ sources: [\"sink:http://127.0.0.1:9800/\"] }}\n");
        let p = plan_of(&text, &Overrides::default()).unwrap();
        let v = p.verify.expect("planned");
        assert_eq!(v.specs, vec![Spec::Sink("http://127.0.0.1:9800".into())]);
        assert_eq!(v.settle_timeout, Duration::from_secs(60));
        let store = Store::new("/nonexistent/store".into());
        let catalog = Catalog::discover(None).unwrap();
        let made = |f: &dyn Fn(&mut Config)| {
            let mut c = load_text(&text, "t.yaml", &store, &catalog).unwrap().config;
            f(&mut c);
            plan(c, &Overrides::default(), &catalog, &store)
                .err()
                .expect("refused")
        };
        let e = made(&|c| c.sources[0].accounting = false);
        assert!(e.to_string().starts_with("verify: "), "{e}");
        let e = made(&|c| c.verify.as_mut().unwrap().sources = vec!["x".into()]);
        assert!(e.to_string().starts_with("verify.sources[0]: "), "{e}");
        assert_eq!(e.exit(), crate::exit::Exit::Invalid);
    }

    #[test]
    fn profiles_without_their_block_are_refused() {
        let w = Workload {
            profile: ProfileKind::Ramp,
            eps: None,
            rate: None,
            burst: None,
            ramp: None,
            steps: None,
            stop: crate::config::schema::Stop::default(),
            warmup: crate::config::units::Dur::default(),
            step_warmup: None,
            find_ceiling: false,
            ceiling: None,
            workers: None,
            shards: None,
        };
        assert!(profile(&w).is_err());
        assert!(stop(&w).is_err());
    }
}
