//! `ingestbench run --config FILE | --url URL`: the main job. Reads the flags into
//! `run::Overrides` and the target, source and rate flags into a config (`run_config`: one of
//! its own without `--config`, else over the file's), asks the run library for a plan, starts the run with the terminal line as an observer (on
//! stderr when it is a terminal, whatever `--output` says), prints the report and the reasons
//! for a non-zero exit, and returns the exit code the run library chose.

use argh::FromArgs;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::secrets::{self, Store};
use crate::config::units::parse_duration;
use crate::exit::Exit;
use crate::pack::Catalog;
use crate::report;
use crate::report::text::Timeline;
use crate::run::{self, Observer, Overrides, Run, SetupError, Snapshot, ceiling};
use crate::serve;
use crate::stats::snapshot::RunState;

use super::run_config::{self, Flags, Given};

#[derive(FromArgs)]
/// Run a load test: generate events from the config's source pack and send them to its target
/// (a config file, or the target, source and rate flags alone).
#[argh(
    subcommand,
    name = "run",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench run --config examples/steady-smoke.yaml",
    example = "ingestbench run --url builtin --eps 500 --duration 10s",
    example = "ingestbench run --url https://hec.example:8088 --token-env HEC_TOKEN --source aws.cloudtrail --rate 500GB/day --duration 5m",
    example = "ingestbench run --url tcp://127.0.0.1:5514 --rate 2MB/s --total 100000 --print-config > syslog.yaml",
    example = "ingestbench run --config examples/lphc.yaml --duration 30s --eps 20000 --threads 2 --workers 8",
    example = "ingestbench run --config my.yaml --output json > report.json",
    example = "ingestbench run --config examples/ramp.yaml --timeline full",
    note = "Without --config: --url is needed; the adapter follows the url (tcp/udp/tls:// syslog, /services/collector HEC, else lphc), the source is aws.cloudtrail (linux.syslog for syslog), 1000 eps for 1m unless --eps/--rate and --duration/--total say. With --config the flags replace the file's values. --rate converts through the mean event size of the run's source as framed (measured at setup) and the report states both. Exit codes: 0 OK, 2 invalid config, 3 SLO breach, 4 authentication failure, 5 lost or duplicated events, 6 aborted (e.g. target unreachable)."
)]
pub struct Args {
    /// the config file (without it, --url and the other flags make the config)
    #[argh(option, short = 'c')]
    config: Option<PathBuf>,
    /// where events go (overrides target.url): http(s)://HOST:PORT/PATH, tcp://, udp://,
    /// tls:// (syslog) or builtin (the built-in sink, in process)
    #[argh(option)]
    url: Option<String>,
    /// lphc, generic-hec, syslog, http or elasticsearch (overrides target.adapter; default
    /// from the url)
    #[argh(option)]
    adapter: Option<String>,
    /// source pack(s) ID[:SHARE],… (overrides source), e.g. aws.cloudtrail or
    /// aws.cloudtrail:0.7,linux.syslog:0.3
    #[argh(option)]
    source: Option<String>,
    /// a steady data rate instead of --eps, e.g. 20MB/s, 1.5GB/h, 500GB/day (overrides the
    /// workload; converted to eps through the source's mean event size)
    #[argh(option)]
    rate: Option<String>,
    /// environment variable holding the target's token (overrides target.auth's source)
    #[argh(option)]
    token_env: Option<String>,
    /// file (mode 0600) holding the target's token
    #[argh(option)]
    token_file: Option<PathBuf>,
    /// name of the target's token in the secret store (`ingestbench secret set`)
    #[argh(option)]
    token_secret: Option<String>,
    /// how the token is sent: x-api-key (lphc's default), splunk (HEC's), api-key
    /// (elasticsearch's), bearer, basic, header
    #[argh(option)]
    auth: Option<String>,
    /// print the config this command line comes to (YAML, defaults left out) and exit
    #[argh(switch)]
    print_config: bool,
    /// stop after this long (overrides workload.stop), e.g. 30s
    #[argh(option)]
    duration: Option<String>,
    /// stop after this many events (overrides workload.stop)
    #[argh(option)]
    total: Option<u64>,
    /// events per second (overrides the workload with a steady profile)
    #[argh(option)]
    eps: Option<f64>,
    /// worker threads, one per core and pinned (default: all cores; 1 to 256, and at most
    /// one per connection: what runs is said when it is fewer)
    #[argh(option)]
    threads: Option<usize>,
    /// concurrent connections, spread over the threads (default: workload.workers, else 4)
    #[argh(option)]
    workers: Option<usize>,
    /// report on stdout: text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
    /// per-second timeline in the text report: condensed (default: every 10th second and
    /// every second with errors, control actions or rate steps) or full (JSON has every row)
    #[argh(option, default = "Timeline::Condensed")]
    timeline: Timeline,
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
    /// serve the status page here during the run, e.g. 127.0.0.1:8090 (port 0: any free port)
    #[argh(option)]
    status: Option<SocketAddr>,
    /// let the status page listen beyond loopback (needs --status-token-env)
    #[argh(switch)]
    allow_remote: bool,
    /// environment variable holding the token the status page asks for (Authorization: Bearer)
    #[argh(option)]
    status_token_env: Option<String>,
    /// serve Prometheus /metrics here during the run (overrides observability.prometheus)
    #[argh(option)]
    prometheus: Option<SocketAddr>,
    /// keep the status page and /metrics up this long after the run ends, e.g. 15s
    #[argh(option)]
    linger: Option<String>,
    /// watch a process or cgroup during the run (CPU, memory): pid:N, name:NAME (every match,
    /// also ones that start later) or cgroup:PATH; repeatable, added to observability.watch
    #[argh(option)]
    watch: Vec<String>,
    /// play this attack scenario (YAML, see `ingestbench scenario`) beside the background
    /// load: its stage events are extra, counted apart, and its ground truth is in the report
    #[argh(option)]
    scenario: Option<PathBuf>,
    /// how fast to play the scenario: a factor such as 60x (default: the file's speed, else 1x)
    #[argh(option)]
    scenario_speed: Option<String>,
    /// run as shard I of N (I from 0): offer 1/N of the profile with agents and seqs of its
    /// own, sharing the run id; the report goes to observability.report with the index
    #[argh(option)]
    shard: Option<String>,
    /// the run has N shards, this one's index in JOB_COMPLETION_INDEX (a Kubernetes Indexed
    /// Job; overrides workload.shards)
    #[argh(option)]
    shards: Option<u32>,
    /// the run id every shard's events carry (e.g. the Job's name); default: one derived
    /// from the config when sharded, else a new one per run
    #[argh(option)]
    run_id: Option<String>,
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

impl argh::FromArgValue for Timeline {
    fn from_arg_value(value: &str) -> Result<Self, String> {
        Timeline::parse(value)
    }
}

fn duration_flag(
    name: &str,
    v: &Option<String>,
) -> Result<Option<std::time::Duration>, SetupError> {
    match v {
        Some(d) => Ok(Some(
            parse_duration(d)
                .map_err(|e| SetupError::invalid(format!("{name}: {e}")))?
                .0,
        )),
        None => Ok(None),
    }
}

fn overrides(a: &Args) -> Result<Overrides, SetupError> {
    Ok(Overrides {
        duration: duration_flag("--duration", &a.duration)?,
        total: a.total,
        eps: a.eps,
        threads: a.threads,
        workers: a.workers,
        seed: a.seed,
        no_pin: a.no_pin,
        status: a.status,
        allow_remote: a.allow_remote,
        status_token_env: a.status_token_env.clone(),
        prometheus: a.prometheus,
        linger: duration_flag("--linger", &a.linger)?,
        watch: a
            .watch
            .iter()
            .map(|w| {
                run::plan::WatchArg::parse(w)
                    .map_err(|e| SetupError::invalid(format!("--watch {e}")))
            })
            .collect::<Result<_, _>>()?,
        scenario: a.scenario.clone(),
        scenario_speed: a.scenario_speed.clone(),
        shard: a
            .shard
            .as_deref()
            .map(|v| {
                run::shard::Shard::parse(v).map_err(|e| SetupError::invalid(format!("--shard {e}")))
            })
            .transpose()?,
        shards: a.shards,
        job_index: std::env::var(run::shard::INDEX_ENV).ok(),
        run_id: a.run_id.clone(),
    })
}

pub(super) fn fail(e: &SetupError) -> Exit {
    for m in e.messages() {
        super::err(&format!("error: {m}"));
    }
    e.exit()
}

pub fn run(a: Args) -> Exit {
    match start(&a) {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

fn start(a: &Args) -> Result<Exit, SetupError> {
    let ov = overrides(a)?;
    let flags = Flags::parse(&Given {
        url: a.url.as_deref(),
        adapter: a.adapter.as_deref(),
        source: a.source.as_deref(),
        rate: a.rate.as_deref(),
        token_env: a.token_env.as_deref(),
        token_file: a.token_file.as_deref().and_then(std::path::Path::to_str),
        token_secret: a.token_secret.as_deref(),
        auth: a.auth.as_deref(),
        eps: a.eps.is_some(),
    })?;
    if a.token_file.as_ref().is_some_and(|p| p.to_str().is_none()) {
        return Err(SetupError::invalid("--token-file: the path is not UTF-8"));
    }
    let catalog = Catalog::discover(a.packs.as_deref()).map_err(SetupError::invalid)?;
    let dir = match a.secrets_dir.clone() {
        Some(d) => d,
        None => secrets::default_dir().map_err(SetupError::invalid)?,
    };
    let store = Store::new(dir);
    let (loaded, origin) = load(a, (&flags, &ov), &store, &catalog)?;
    // The overrides a config can hold go into it (so the report's config, and
    // `--print-config`, say them), and the result is read back through the validator: what
    // `validate` refuses in a file, the flags cannot make a run take.
    let loaded = run_config::folded(loaded, &ov, &origin, &store, &catalog)?;
    for w in &loaded.warnings {
        super::err(&format!("warning: {w}"));
    }
    if a.print_config {
        super::out(&run_config::print(
            &loaded.config,
            &origin,
            &unkept(a),
            (&store, &catalog),
        )?);
        return Ok(Exit::Ok);
    }
    let config = loaded.config;
    if config.workload.find_ceiling {
        let mut p = ceiling::Params::of(&config.workload);
        if let Some(eps) = a.eps {
            p.start_eps = eps;
            p.max_eps = p.max_eps.max(eps);
            p.min_eps = p.min_eps.min(eps);
        }
        let outcome = find_ceiling(config, &p, &ov, &catalog, &store)?;
        return Ok(print(a, outcome));
    }
    run_planned(config, &ov, &catalog, &store, |o| print(a, o))
}

/// The config: the file's, the flags' own (no `--config`), or the flags over the file's —
/// the last two read back through the loader and validator as text; and where it came from.
fn load(
    a: &Args,
    (flags, ov): (&Flags, &Overrides),
    store: &Store,
    catalog: &Catalog,
) -> Result<(run::LoadedConfig, String), SetupError> {
    let given = [
        ("target.url", "--url", flags.url.is_some()),
        ("target.adapter", "--adapter", flags.adapter.is_some()),
        (
            "target.auth",
            "--token-env/--token-file/--token-secret",
            flags.token.is_some(),
        ),
        ("source", "--source", flags.sources.is_some()),
        ("workload.rate", "--rate", flags.rate.is_some()),
    ];
    let read = |text: &str, origin: &str| {
        run::load_generated(text, origin, store, catalog)
            .map_err(|e| run_config::name_flags(e, &given))
    };
    let Some(path) = &a.config else {
        let v = flags.own_config()?;
        let origin = "the command line".to_string();
        let text = crate::config::text::to_yaml(&v);
        return Ok((read(&text, &origin)?, origin));
    };
    // The file is judged with the overrides it will run with (`--watch` for an objective on
    // watched processes, say), its own fields keeping their lines.
    let mut fold = |c: &mut crate::config::schema::Config| {
        // A refused `--threads` is refused by the plan, with its words.
        let _ = run_config::fold(c, ov);
    };
    let file = run::load_config_adjusted(path, store, catalog, &mut fold)
        .map_err(|e| run_config::name_flags(e, &run_config::override_fields(ov)))?;
    let origin = format!("{} with the command line", path.display());
    if flags.is_empty() {
        return Ok((file, origin));
    }
    // The file's warnings come again (by field) from the config read back below.
    let mut v = crate::config::text::value(&file.config);
    flags.apply(&mut v)?;
    let text = crate::config::text::to_yaml(&v);
    Ok((read(&text, &origin)?, origin))
}

/// The flags given that no config key holds, as they were written (for `--print-config`).
fn unkept(a: &Args) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(t) = a.threads {
        v.push(format!("--threads {t}"));
    }
    if a.no_pin {
        v.push("--no-pin".into());
    }
    if let Some(s) = &a.scenario {
        v.push(format!("--scenario {}", s.display()));
    }
    if let Some(s) = &a.scenario_speed {
        v.push(format!("--scenario-speed {s}"));
    }
    if let Some(s) = &a.shard {
        v.push(format!("--shard {s}"));
    }
    if let Some(n) = a.shards {
        v.push(format!("--shards {n}"));
    }
    if let Some(id) = &a.run_id {
        v.push(format!("--run-id {id}"));
    }
    if let Some(p) = &a.packs {
        v.push(format!("--packs {}", p.display()));
    }
    if let Some(d) = &a.secrets_dir {
        v.push(format!("--secrets-dir {}", d.display()));
    }
    if a.output != Output::Text {
        v.push(format!("--output {}", a.output));
    }
    if a.timeline == Timeline::Full {
        v.push("--timeline full".into());
    }
    v
}

/// Plans and runs `config` with `ov` — warnings and what is served where on stderr, the live
/// line on a terminal — then `report` prints the outcome and gives the exit code, and the
/// status page and /metrics linger if asked. `run` and `http` both run this way.
pub(super) fn run_planned(
    config: crate::config::schema::Config,
    ov: &Overrides,
    catalog: &Catalog,
    store: &Store,
    report: impl FnOnce(run::RunOutcome) -> Exit,
) -> Result<Exit, SetupError> {
    let plan = run::plan(config, ov, catalog, store)?;
    for w in &plan.warnings {
        super::err(&format!("warning: {w}"));
    }
    let run = Run::new(plan);
    let live = serve::Live::start(&run.plan().serve, run.snapshots(), run.control())?;
    for (what, url) in live.urls() {
        super::err(&format!("{what}: {url}"));
    }
    let mut observers: Vec<Box<dyn Observer>> = Vec::new();
    if std::io::stderr().is_terminal() {
        observers.push(Box::new(LiveLine::default()));
    }
    let handle = run.start(observers)?;
    let outcome = handle.wait()?;
    let exit = report(outcome);
    if let Some(l) = live.lingering() {
        super::err(&format!(
            "note: serving the final figures for {} more",
            crate::config::units::Dur(l)
        ));
    }
    live.finish();
    Ok(exit)
}

/// A ceiling search: each step's live line on a terminal, a line per step as it is judged.
fn find_ceiling(
    cfg: crate::config::schema::Config,
    p: &ceiling::Params,
    ov: &Overrides,
    catalog: &Catalog,
    store: &Store,
) -> Result<run::RunOutcome, SetupError> {
    super::err(&format!(
        "ceiling search: from {:.0} eps, x{} per step up, to {:.0} % precision; each step {} warm-up + {} judged, at most {} steps",
        p.start_eps,
        p.growth,
        p.precision * 100.0,
        crate::config::units::Dur(p.warmup),
        crate::config::units::Dur(p.hold),
        p.max_steps
    ));
    let terminal = std::io::stderr().is_terminal();
    let mut observers = || -> Vec<Box<dyn Observer>> {
        if terminal {
            vec![Box::new(LiveLine::default())]
        } else {
            Vec::new()
        }
    };
    let mut on_step =
        |s: &crate::report::ceiling::StepRow| super::err(&crate::report::ceiling::step_line(s));
    ceiling::find(cfg, p, ov, catalog, store, &mut observers, &mut on_step)
}

/// Prints the report and the reasons for a non-zero exit; gives the exit code.
fn print(a: &Args, outcome: run::RunOutcome) -> Exit {
    match a.output {
        Output::Text => super::out(&report::text::render_with(&outcome.report, a.timeline)),
        Output::Json => {
            super::out(&serde_json::to_string_pretty(&outcome.report).unwrap_or_default())
        }
    }
    tell(&outcome, a.output == Output::Json)
}

/// The notes and the reasons for a non-zero exit, on stderr, and the JSON report on stdout
/// when an output file could not be written and stdout does not have it yet; gives the exit
/// code.
pub(super) fn tell(outcome: &run::RunOutcome, json_printed: bool) -> Exit {
    if !outcome.unwritten.is_empty() && !json_printed {
        super::out(crate::run::outputs::report_json(&outcome.report).trim_end());
    }
    for n in &outcome.notes {
        super::err(&format!("error: {n}"));
    }
    for r in &outcome.reasons {
        super::err(&format!("error: {r}"));
    }
    if !outcome.unwritten.is_empty() {
        super::err(&format!(
            "error: not written: {}; the JSON report is on stdout instead",
            outcome.unwritten.join(", ")
        ));
    }
    outcome.exit
}

/// The one-line live view on a terminal, rewritten in place every second.
#[derive(Default)]
struct LiveLine {
    shown: bool,
}

impl Observer for LiveLine {
    fn on_snapshot(&mut self, s: &Snapshot) {
        let mut e = std::io::stderr().lock();
        if s.state == RunState::Finished {
            if self.shown {
                let _ = writeln!(e);
            }
            return;
        }
        let i = &s.interval;
        let state = match s.state {
            RunState::Paused => "  PAUSED",
            RunState::Draining => "  draining",
            _ => "",
        };
        // Syslog events written and never confirmed (a peer that resets or closes).
        let unconfirmed = if s.events_unconfirmed > 0 {
            format!("  unconfirmed {}", s.events_unconfirmed)
        } else {
            String::new()
        };
        let line = format!(
            "\r{:>5.0}s  target {:>9.0} eps  achieved {:>9.0} eps  p50 {:>8.2} ms  p99 {:>8.2} ms  errors {}{unconfirmed}  lag max {:.1} ms{state}   ",
            s.elapsed_s,
            i.target_eps,
            i.achieved_eps,
            i.latency_ms.intended.p50,
            i.latency_ms.intended.p99,
            s.cumulative.batches_failed
                + s.connect_errors
                + s.connection_resets
                + s.timeouts
                + s.protocol_errors,
            s.lag_ms_max,
        );
        let _ = e.write_all(line.as_bytes());
        let _ = e.flush();
        self.shown = true;
    }
}
