//! The config file schema, `schema_version: "1.0"`: the plain types a run is planned from, and
//! the code that reads them from YAML (defaults applied, unknown keys refused). Cross-field
//! rules live in `validate.rs`. No token value is ever held here: only where to find it (an
//! environment variable name, a file path, a secret name), so a config can be printed whole.

use crate::config::units::{DataRate, Dur, Size};
use crate::yaml::{FromYaml, Obj, Pairs, Reader, YamlNode};
use crate::yaml_enum;
use serde::Serialize;

pub const SCHEMA_VERSION: &str = "1.0";

yaml_enum!(
    /// `realtime` stamps events with the clock; `deterministic` makes event i depend only on
    /// (seed, i).
    pub enum Mode {
        Realtime = "realtime",
        Deterministic = "deterministic",
    }
);

yaml_enum!(
    pub enum Adapter {
        Lphc = "lphc",
        GenericHec = "generic-hec",
        Syslog = "syslog",
        Http = "http",
        Elasticsearch = "elasticsearch",
    }
);

yaml_enum!(
    /// The request method of `adapter: http`.
    pub enum HttpMethod {
        Get = "GET",
        Post = "POST",
        Put = "PUT",
        Patch = "PATCH",
        Delete = "DELETE",
        Head = "HEAD",
        Options = "OPTIONS",
    }
);

yaml_enum!(
    pub enum AuthScheme {
        XApiKey = "x-api-key",
        Basic = "basic",
        Bearer = "bearer",
        Splunk = "splunk",
        Header = "header",
        /// Elasticsearch/OpenSearch API keys: `Authorization: ApiKey <token>` (the token is
        /// the key's `encoded` form, base64 of `id:api_key`).
        ApiKey = "api-key",
    }
);

yaml_enum!(
    /// The `_bulk` action of `adapter: elasticsearch`: `create` (a document whose id exists is
    /// refused with 409: a resend is never stored twice) or `index` (it is overwritten).
    pub enum OpType {
        Create = "create",
        Index = "index",
    }
);

yaml_enum!(
    pub enum Compression {
        None = "none",
        Gzip = "gzip",
    }
);

yaml_enum!(
    pub enum HecEndpoint {
        Event = "event",
        Raw = "raw",
    }
);

yaml_enum!(
    /// How an event sits in a HEC request: `object` (the event endpoint, `"event": {…}`),
    /// `string` (the event endpoint, `"event": "…"`), `raw` (the raw endpoint, one per line).
    pub enum HecFraming {
        Object = "object",
        String = "string",
        Raw = "raw",
    }
);

yaml_enum!(
    pub enum SyslogTransport {
        Tcp = "tcp",
        Udp = "udp",
        Tls = "tls",
    }
);

yaml_enum!(
    pub enum SyslogFraming {
        OctetCounting = "octet-counting",
        Lf = "lf",
    }
);

yaml_enum!(
    /// The order UDP datagrams of one batch leave in: `by_size` groups datagrams of equal size
    /// so each group goes down the stack as one GSO buffer (UDP promises no order anyway);
    /// `as_generated` keeps the order events were made in.
    pub enum UdpOrder {
        BySize = "by_size",
        AsGenerated = "as_generated",
    }
);

yaml_enum!(
    pub enum SyslogFormat {
        Rfc5424 = "rfc5424",
        Rfc3164 = "rfc3164",
    }
);

yaml_enum!(
    pub enum Profile {
        Steady = "steady",
        Burst = "burst",
        Ramp = "ramp",
        Steps = "steps",
        /// No rate: each connection sends its next request when the last is answered.
        Closed = "closed",
    }
);

yaml_enum!(
    pub enum TimestampMode {
        Realtime = "realtime",
        Backfill = "backfill",
    }
);

yaml_enum!(
    /// What a fault on the run's timeline does (`faults[].action`).
    pub enum FaultAction {
        Stall = "stall",
        Kill = "kill",
        Restart = "restart",
        Storm = "storm",
        Cut = "cut",
        Pause = "pause",
    }
);

/// The whole config file.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    pub schema_version: String,
    pub name: Option<String>,
    pub seed: Option<u64>,
    pub mode: Mode,
    pub target: Target,
    /// The source packs: one, or a mix (`source:` as a list); empty only for `adapter: http`
    /// sending a fixed body (or none).
    #[serde(
        rename = "source",
        serialize_with = "one_or_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub sources: Vec<Source>,
    /// `source: { file: … }`: recorded logs replayed instead of a pack (then `sources` is
    /// empty).
    #[serde(rename = "source", skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
    pub workload: Workload,
    pub observability: Observability,
    pub slo: Slo,
    /// Faults on the run's timeline, in the order written.
    pub faults: Vec<Fault>,
    /// Ask stores what arrived once the run has ended (`verify`).
    pub verify: Option<Verify>,
}

/// `faults[]`: one action on the run's timeline (`src/run/fault` carries it out).
impl Config {
    /// Whether the events carry accounting tags (a run without a source pack sends no events
    /// to tag).
    pub fn tagged(&self) -> bool {
        match &self.replay {
            Some(r) => r.accounting,
            None => self.source().is_some_and(|s| s.accounting),
        }
    }

    /// Whether the run sends events (of packs or of a recording), not a fixed body.
    pub fn has_events(&self) -> bool {
        !self.sources.is_empty() || self.replay.is_some()
    }

    /// The source (the first of a mix, which carries the mix's timestamps and accounting).
    pub fn source(&self) -> Option<&Source> {
        self.sources.first()
    }

    /// Whether `source:` is a mix of several packs.
    pub fn is_mix(&self) -> bool {
        self.sources.len() > 1
    }

    /// What the run sends, for a person: the source pack and its version requirement, or
    /// what a plain HTTP load sends instead.
    pub fn source_label(&self) -> String {
        if let Some(r) = &self.replay {
            return format!("file:{}", r.file);
        }
        match self.sources.as_slice() {
            [s] => format!("{} {}", s.id, s.version),
            [] => match self.target.http.as_ref() {
                Some(h) if h.body.is_some() || h.body_file.is_some() => "a fixed body".into(),
                _ => "no body".into(),
            },
            mix => mix
                .iter()
                .map(|s| format!("{} {}", s.id, s.version))
                .collect::<Vec<_>>()
                .join(" + "),
        }
    }

    /// Each source's part of the events, in `sources` order: its `share`, or its `eps` over
    /// the sum of them, or 1 for a single source (validation has checked they add up).
    pub fn shares(&self) -> Vec<f64> {
        let eps: f64 = self.sources.iter().filter_map(|s| s.eps).sum();
        self.sources
            .iter()
            .map(|s| match (s.share, s.eps) {
                (Some(v), _) => v,
                (None, Some(e)) if eps > 0.0 => e / eps,
                _ => 1.0 / self.sources.len() as f64,
            })
            .collect()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Fault {
    /// When, after the start of the run (wall time).
    #[serde(serialize_with = "as_text")]
    pub at: Dur,
    pub action: FaultAction,
    /// What it acts on: `launched`, `pid:N` or `name:NAME` (stall, kill, restart);
    /// `builtin` or `sink:URL` (storm). Left out: the launched target, the built-in sink.
    pub target: Option<String>,
    /// How long it lasts (stall, storm, pause; a kill with `for` restarts after it).
    #[serde(rename = "for", serialize_with = "opt_text")]
    pub for_: Option<Dur>,
    /// What a restart runs when the target is not the launched one.
    pub command: Option<String>,
    pub args: Vec<String>,
    /// A storm's faults (the sink's fault knobs).
    pub storm: Option<crate::sink::Faults>,
}

/// `target.builtin`: how the built-in sink behaves (`url: builtin` only).
#[derive(Clone, Debug, Default, Serialize)]
pub struct BuiltinSink {
    /// The faults it injects for the whole run, as a standalone sink's `--faults`/`/_faults`.
    pub faults: Option<crate::sink::Faults>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Target {
    pub adapter: Adapter,
    /// Where events go (the first of `urls` when it is a list).
    pub url: String,
    /// `url` as a list: several targets, connections spread over them round robin.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
    pub auth: Option<Auth>,
    pub tls: Option<Tls>,
    pub batch: Batch,
    pub compression: Compression,
    pub limits: Limits,
    pub retry: Retry,
    pub hec: Option<Hec>,
    pub syslog: Option<Syslog>,
    /// `adapter: elasticsearch`: where `_bulk` puts the documents.
    pub elasticsearch: Option<Elasticsearch>,
    /// `adapter: http`: the request every connection sends.
    pub http: Option<HttpSpec>,
    /// The built-in sink's own settings.
    pub builtin: Option<BuiltinSink>,
}

/// `target.http`: plain HTTP load (hey's and rpcload's job). Each request carries the fixed
/// body (`body` or `body_file`), or one event of the source pack, or nothing.
#[derive(Clone, Debug, Serialize)]
pub struct HttpSpec {
    /// Default: POST with a body or a source, else GET.
    pub method: Option<HttpMethod>,
    /// Extra header lines, `Name: value`.
    pub headers: Vec<String>,
    pub body: Option<String>,
    pub body_file: Option<String>,
    pub content_type: Option<String>,
    /// The statuses that count as success; empty: any 2xx.
    pub expect_status: Vec<u16>,
    /// Keep connections open between requests (default); false sends `Connection: close`
    /// and opens a connection per request.
    pub keepalive: bool,
    /// A request unanswered this long is a timeout (default 30s).
    #[serde(serialize_with = "opt_text")]
    pub timeout: Option<Dur>,
    /// Connect to this Unix socket; the url then gives only the `Host` header and the path.
    pub unix_socket: Option<String>,
}

/// Where the token comes from; never the token itself.
#[derive(Clone, Debug, Serialize)]
pub struct Auth {
    pub scheme: Option<AuthScheme>,
    pub token_env: Option<String>,
    pub token_file: Option<String>,
    pub token_secret: Option<String>,
    pub username: Option<String>,
    pub header: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Tls {
    pub verify: bool,
    pub ca_file: Option<String>,
    pub client_cert: Option<String>,
    pub client_key: Option<String>,
    pub server_name: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Batch {
    pub max_events: u64,
    #[serde(serialize_with = "as_text")]
    pub max_bytes: Size,
    /// With a mix of sources over HTTP: a batch may carry events of several sources (in
    /// their shares); by default each batch is of one source.
    pub mix: bool,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Limits {
    pub max_requests_per_sec: Option<f64>,
}

/// How a batch is tried again, whatever made it go again (429/503, a reset, a timeout).
#[derive(Clone, Debug, Serialize)]
pub struct Retry {
    /// Sends of one batch in all, the first included.
    pub max_attempts: u32,
    /// From its first send, how long a batch may keep being retried.
    #[serde(serialize_with = "as_text")]
    pub max_time: Dur,
}

pub const DEFAULT_RETRY_ATTEMPTS: u32 = 10;
pub const DEFAULT_RETRY_TIME: std::time::Duration = std::time::Duration::from_secs(60);

impl Default for Retry {
    fn default() -> Self {
        Retry {
            max_attempts: DEFAULT_RETRY_ATTEMPTS,
            max_time: Dur(DEFAULT_RETRY_TIME),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Hec {
    pub endpoint: HecEndpoint,
    pub index: Option<String>,
    pub sourcetype: Option<String>,
    pub source: Option<String>,
    pub host: Option<String>,
    pub channel: Option<String>,
    pub ack: bool,
    pub framing: Option<HecFraming>,
}

/// `target.elasticsearch`: the `_bulk` requests of `adapter: elasticsearch` (Elasticsearch or
/// OpenSearch; `url` is the cluster's base URL).
#[derive(Clone, Debug, Serialize)]
pub struct Elasticsearch {
    /// The index (or data stream) every document goes to (default `ingestbench`).
    pub index: String,
    /// An ingest pipeline (`?pipeline=`).
    pub pipeline: Option<String>,
    pub op_type: OpType,
}

pub const DEFAULT_ES_INDEX: &str = "ingestbench";

impl Default for Elasticsearch {
    /// What a missing `target.elasticsearch` block means: index `ingestbench`, no pipeline,
    /// `op_type: create`.
    fn default() -> Elasticsearch {
        Elasticsearch {
            index: DEFAULT_ES_INDEX.into(),
            pipeline: None,
            op_type: OpType::Create,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Syslog {
    pub transport: Option<SyslogTransport>,
    pub framing: SyslogFraming,
    pub format: SyslogFormat,
    pub app_name: Option<String>,
    pub facility: Option<Facility>,
    #[serde(serialize_with = "as_text")]
    pub max_message_bytes: Size,
    /// UDP only: see `UdpOrder`.
    pub udp_order: Option<UdpOrder>,
    /// RELP only (`relp://`, `relp+tls://`): frames sent and not yet answered per connection
    /// (default 128, rsyslog's).
    pub relp_window: Option<u64>,
}

/// A syslog facility, 0..=23, written as a number or a name (`local0`, `auth`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Facility(pub u8);

pub const FACILITY_NAMES: &[&str] = &[
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv",
    "ftp", "ntp", "security", "console", "clock", "local0", "local1", "local2", "local3", "local4",
    "local5", "local6", "local7",
];

impl FromYaml for Facility {
    fn from_yaml(node: &YamlNode, path: &str, r: &mut Reader) -> Result<Self, String> {
        let text = String::from_yaml(node, path, r)?;
        if let Ok(n) = text.parse::<u8>() {
            return if n <= 23 {
                Ok(Facility(n))
            } else {
                Err(format!("facility {n} is out of range (0..=23)"))
            };
        }
        match FACILITY_NAMES.iter().position(|f| *f == text) {
            Some(i) => Ok(Facility(i as u8)),
            None => Err(format!(
                "{text:?} is not a syslog facility (0..=23 or a name such as local0, auth, daemon)"
            )),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Source {
    pub id: String,
    /// In a mix: this source's part of the events (a fraction; the shares add up to 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// In a mix: this source's events per second (its share is its eps over their sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eps: Option<f64>,
    pub version: String,
    /// Pool sizes by entity kind, in file order.
    #[serde(serialize_with = "pairs")]
    pub entities: Vec<(String, u64)>,
    pub timestamps: Timestamps,
    /// Tag every event with run id, agent and sequence number (default on).
    pub accounting: bool,
}

/// `source: { file: … }`: recorded logs replayed at the run's rate.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    /// A path or a glob of paths (read in sorted order).
    pub file: String,
    pub format: ReplayFormat,
    /// What becomes of each line's timestamp.
    pub timestamps: ReplayTimes,
    /// Start over at the end of the recording (else each line is sent once).
    #[serde(rename = "loop")]
    pub looped: bool,
    /// Where each line's timestamp is, when not found automatically.
    pub timestamp: Option<ReplayTimestamp>,
    pub accounting: bool,
    /// Files larger than this in all are streamed instead of read into memory.
    #[serde(serialize_with = "as_text")]
    pub memory: Size,
}

/// `source.timestamp`: a regex (its first group, or the whole match, is the timestamp) and
/// the format it is in (one of the pack timestamp formats).
#[derive(Clone, Debug, Serialize)]
pub struct ReplayTimestamp {
    pub regex: String,
    pub format: String,
}

yaml_enum!(
    pub enum ReplayFormat {
        Lines = "lines",
        Ndjson = "ndjson",
    }
);

yaml_enum!(
    pub enum ReplayTimes {
        Keep = "keep",
        Now = "now",
        Shift = "shift",
    }
);

pub const ENTITY_KINDS: &[&str] = &["host", "user", "ip", "process", "domain"];

#[derive(Clone, Debug, Serialize)]
pub struct Timestamps {
    pub mode: TimestampMode,
    /// RFC 3339 start of a backfill; defaults to `now - span` at run time.
    pub anchor: Option<String>,
    #[serde(serialize_with = "opt_text")]
    pub span: Option<Dur>,
    #[serde(serialize_with = "as_text")]
    pub jitter: Dur,
    pub business_hours: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Workload {
    pub profile: Profile,
    pub eps: Option<f64>,
    /// A steady data rate instead of `eps` (`20MB/s`, `500GB/day`): the run's events per
    /// second are this over the mean event size measured at setup (`run::rate`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_text")]
    pub rate: Option<DataRate>,
    pub burst: Option<Burst>,
    pub ramp: Option<Ramp>,
    pub steps: Option<Vec<Step>>,
    pub stop: Stop,
    /// The first stretch of the run: sent and in the timeline, left out of the summary and
    /// the objectives (caches, JITs and connection pools settle).
    #[serde(serialize_with = "as_text")]
    pub warmup: Dur,
    /// The first stretch of each step of a `steps` profile, left out of its sizing row
    /// (default: 2s, or a quarter of a shorter step).
    #[serde(serialize_with = "opt_text")]
    pub step_warmup: Option<Dur>,
    pub find_ceiling: bool,
    /// How the ceiling search steps (`find_ceiling: true`); unset fields take its defaults.
    pub ceiling: Option<CeilingSettings>,
    /// Concurrent connections, spread over the worker threads (`--workers`).
    pub workers: Option<u32>,
    /// The run is spread over this many processes (a Kubernetes Indexed Job's completions):
    /// each offers its part, its index from `JOB_COMPLETION_INDEX` (`run --shard` gives both).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
}

/// `workload.ceiling`: the ceiling search's steps (defaults in `run::ceiling`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CeilingSettings {
    /// The first step's rate (default: `workload.eps`, else 1000).
    pub start_eps: Option<f64>,
    /// No step above this rate.
    pub max_eps: Option<f64>,
    /// No step below this rate (when even the first step fails).
    pub min_eps: Option<f64>,
    /// Each step up multiplies the rate by this.
    pub growth: Option<f64>,
    /// Bisect until the first failing rate is within this share of the last good one.
    pub precision: Option<f64>,
    /// How long each step is judged over, after its warm-up.
    #[serde(serialize_with = "opt_text")]
    pub hold: Option<Dur>,
    #[serde(serialize_with = "opt_text")]
    pub warmup: Option<Dur>,
    /// Most steps in all.
    pub max_steps: Option<u32>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Burst {
    pub high_eps: f64,
    pub low_eps: f64,
    #[serde(serialize_with = "as_text")]
    pub period: Dur,
    pub duty: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Ramp {
    pub from_eps: f64,
    pub to_eps: f64,
    #[serde(serialize_with = "as_text")]
    pub over: Dur,
}

#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub eps: f64,
    #[serde(serialize_with = "as_text")]
    pub hold: Dur,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Stop {
    #[serde(serialize_with = "opt_text")]
    pub after: Option<Dur>,
    pub total_events: Option<u64>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Observability {
    /// Serve the status page during the run (at `dashboard_listen`).
    pub dashboard: bool,
    /// Where the status page listens (default 127.0.0.1:0: a free port, printed at start).
    pub dashboard_listen: Option<String>,
    /// Let the status page listen on an address other than loopback (needs `dashboard_token_env`).
    pub allow_remote: bool,
    /// The environment variable holding the token a non-loopback status page asks for.
    pub dashboard_token_env: Option<String>,
    pub report: Option<String>,
    /// Write the per-second timeline as CSV here when the run ends.
    pub csv: Option<String>,
    /// Write the latency histograms here as an HdrHistogram interval log (one interval per
    /// second, tagged `intended` and `service`) while the run goes on.
    pub hdr_log: Option<String>,
    /// Write the sizing table (one row per step of a `steps` run) as CSV here.
    pub sizing_csv: Option<String>,
    /// Serve `/metrics` (Prometheus text format) at this address during the run.
    pub prometheus: Option<String>,
    /// Keep the status page and `/metrics` up this long after the run ends, so the last
    /// scrape and a person watching see the final figures.
    #[serde(serialize_with = "as_text")]
    pub linger: Dur,
    /// Processes and cgroups to sample once a second during the run (`--watch` adds to it).
    pub watch: Watch,
    /// A target this run launches itself before the load and stops after it.
    pub target: Option<LaunchTarget>,
}

/// `observability.watch`: what the collector costs, sampled from /proc and cgroup v2.
#[derive(Clone, Debug, Serialize)]
pub struct Watch {
    pub pids: Vec<u32>,
    /// Process names (`comm`, or argv[0]'s basename); processes that start during the run join.
    pub names: Vec<String>,
    /// cgroup v2 directories (absolute, or under /sys/fs/cgroup).
    pub cgroups: Vec<String>,
    /// Add the CPU of a process's waited-for children to its own.
    pub children: bool,
    /// Sample ingestbench itself too (reported apart).
    #[serde(rename = "self")]
    pub own: bool,
}

impl Default for Watch {
    fn default() -> Watch {
        Watch {
            pids: Vec::new(),
            names: Vec::new(),
            cgroups: Vec::new(),
            children: false,
            own: true,
        }
    }
}

impl Watch {
    /// Something other than ingestbench itself is watched.
    pub fn any(&self) -> bool {
        !(self.pids.is_empty() && self.names.is_empty() && self.cgroups.is_empty())
    }
}

/// `observability.target`: a collector launched by the run (and watched): started before the
/// load, waited for until `ready_port` on 127.0.0.1 accepts, stopped by PID after.
#[derive(Clone, Debug, Serialize)]
pub struct LaunchTarget {
    pub command: String,
    pub args: Vec<String>,
    /// Environment added to ingestbench's own for the command.
    #[serde(serialize_with = "pairs")]
    pub env: Vec<(String, String)>,
    pub ready_port: Option<u16>,
    #[serde(serialize_with = "as_text")]
    pub ready_timeout: Dur,
    /// Where its stdout and stderr go (default: a temporary file, its tail shown on failure).
    pub log: Option<String>,
    /// How long it gets to stop after SIGTERM before SIGKILL.
    #[serde(serialize_with = "as_text")]
    pub stop_grace: Dur,
}

/// `verify`: the stores to ask what arrived once the run has ended, as
/// `ingestbench verify --source` takes them (`file:GLOB`, `sink:URL`), judged against the
/// run's own accounting with `slo.max_lost_events` / `slo.max_dup_events`.
#[derive(Clone, Debug, Serialize)]
pub struct Verify {
    pub sources: Vec<String>,
    /// Longest wait for each store to stop growing before it is read.
    #[serde(serialize_with = "as_text")]
    pub settle_timeout: Dur,
    /// Credentials for the search-API stores (where the secret is, never the secret).
    pub auth: Option<VerifyAuth>,
    /// TLS for the search-API stores.
    pub tls: Option<VerifyTls>,
    /// The Splunk index searched (default `main`).
    pub splunk_index: Option<String>,
}

/// `verify.auth`, as `ingestbench verify`'s flags: `basic` with a username (the secret is its
/// password), `bearer` (the default with a secret alone), `apikey`, `splunk` (a session key).
#[derive(Clone, Debug, Serialize)]
pub struct VerifyAuth {
    pub scheme: Option<String>,
    pub username: Option<String>,
    pub token_env: Option<String>,
    pub token_file: Option<String>,
    pub token_secret: Option<String>,
}

/// `verify.tls`: a CA file, or no verification (self-signed management ports).
#[derive(Clone, Debug, Serialize)]
pub struct VerifyTls {
    pub verify: bool,
    pub ca_file: Option<String>,
}

pub const DEFAULT_SETTLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

fn pairs<V: Serialize, S: serde::Serializer>(v: &[(String, V)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, val) in v {
        m.serialize_entry(k, val)?;
    }
    m.end()
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Slo {
    pub min_success_rate: Option<f64>,
    pub max_p95_ms: Option<f64>,
    pub max_p99_ms: Option<f64>,
    pub max_error_rate: Option<f64>,
    pub min_eps_ratio: Option<f64>,
    pub max_lost_events: Option<u64>,
    /// Events the store holds more than once (default 0).
    pub max_dup_events: Option<u64>,
    /// The fail-closed defaults' own keys (each replaces its default): events failed for good
    /// (default 0; `min_success_rate`/`max_error_rate` replace it too), due events never sent
    /// (default 0; `min_eps_ratio` replaces it too), events accepted (default at least 1),
    /// HEC ackIds never confirmed (default 0 with `hec.ack`).
    pub max_failed_events: Option<u64>,
    pub max_unsent_events: Option<u64>,
    pub min_events_accepted: Option<u64>,
    pub max_acks_pending: Option<u64>,
    /// Events answered 2xx in words the engine cannot read (`events_unreadable_2xx`);
    /// default 0.
    pub max_unreadable_2xx_events: Option<u64>,
    /// Syslog over TCP, TLS or UDP: events written and never confirmed (the peer reset or
    /// closed the connection, or its send queue had not drained); default 0.
    pub max_unconfirmed_events: Option<u64>,
    /// Several targets: how many may be down (never connected); default 0.
    pub max_targets_down: Option<u64>,
    /// The watched processes' CPU, summed, in cores: judged on the p95 of the per-second
    /// values after the warm-up.
    pub max_watched_cpu_cores: Option<f64>,
    /// The watched processes' resident memory, summed, at its peak.
    #[serde(serialize_with = "opt_text")]
    pub max_watched_rss: Option<Size>,
    /// Longest recovery from a fault: from its end until a second achieves 99 % of its
    /// target with the backlog back where it was before the fault.
    #[serde(serialize_with = "opt_text")]
    pub max_recovery: Option<Dur>,
}

/// One source as a mapping (the form most configs have), a mix as a list whose first source
/// carries the mix's timestamps and accounting, as a mix is written (the others' would be
/// refused: a mix has one of each).
fn one_or_list<S: serde::Serializer>(v: &[Source], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    match v {
        [one] => one.serialize(s),
        [] => s.serialize_none(),
        [first, rest @ ..] => {
            let mut seq = s.serialize_seq(Some(v.len()))?;
            seq.serialize_element(first)?;
            for part in rest {
                seq.serialize_element(&MixPart(part))?;
            }
            seq.end()
        }
    }
}

/// A source of a mix after the first: its own keys, without the mix's timestamps and
/// accounting.
struct MixPart<'a>(&'a Source);

impl Serialize for MixPart<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let p = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &p.id)?;
        if let Some(v) = p.share {
            m.serialize_entry("share", &v)?;
        }
        if let Some(v) = p.eps {
            m.serialize_entry("eps", &v)?;
        }
        m.serialize_entry("version", &p.version)?;
        m.serialize_entry("entities", &Entities(&p.entities))?;
        m.end()
    }
}

/// Entity pool sizes as a mapping, in file order.
struct Entities<'a>(&'a [(String, u64)]);

impl Serialize for Entities<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        pairs(self.0, s)
    }
}

fn as_text<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn opt_text<T: std::fmt::Display, S: serde::Serializer>(
    v: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

pub const DEFAULT_BATCH_EVENTS: u64 = 500;
pub const DEFAULT_BATCH_BYTES: u64 = 1_000_000;
pub const DEFAULT_SYSLOG_MESSAGE_BYTES: u64 = 8192;

/// The most entries each list of a config takes. A longer list is refused whole, before any
/// of its entries is read, so what a config costs to read and check stays small however
/// long a list it holds (10,000 sources took 25 s to refuse one by one).
pub const MAX_STEPS: usize = 1000;
pub const MAX_FAULTS: usize = 256;
pub const MAX_HEADERS: usize = 64;
pub const MAX_EXPECT_STATUS: usize = 64;
pub const MAX_WATCH: usize = 64;
pub const MAX_ARGS: usize = 256;
pub const MAX_ENV: usize = 256;
pub const MAX_VERIFY_SOURCES: usize = 16;
pub const MAX_ENTITY_KINDS: usize = 16;

/// The length of the list (or mapping) `node`, when it is over `max`: then refused at `path`,
/// naming `what` the entries are. True when the list may be read.
pub fn list_fits(r: &mut Reader, node: &YamlNode, path: &str, max: usize, what: &str) -> bool {
    let n = match node {
        YamlNode::Sequence(items) => items.len(),
        YamlNode::Mapping(m) => m.len(),
        _ => return true,
    };
    if n <= max {
        return true;
    }
    let pos = crate::yaml::pos_of(node);
    if let Some(p) = pos {
        r.positions.entry(path.to_string()).or_insert(p);
    }
    r.diags.error(
        path,
        pos,
        format!("{n} {what}: at most {max} (the list was not read further)"),
    );
    false
}

/// The list field `key` of `o`, read only when it has at most `max` entries (`list_fits`).
fn bounded<T: FromYaml>(
    o: &mut Obj,
    r: &mut Reader,
    key: &'static str,
    (max, what): (usize, &str),
) -> Option<T> {
    let node = o.node(key)?;
    let path = o.child_path(key);
    if !list_fits(r, node, &path, max, what) {
        return None;
    }
    r.value(node, &path)
}

/// Reads the top-level mapping. Missing required parts give errors and placeholder values, so
/// that every other problem in the file is still found; the caller discards the result when
/// there are errors.
pub fn read_config(r: &mut Reader, root: &YamlNode) -> Option<Config> {
    let mut o = r.obj(root, "")?;
    let schema_version = read_schema_version(r, &mut o);
    let name = o.get(r, "name");
    let seed = o.get(r, "seed");
    let mode = o.get(r, "mode").unwrap_or(Mode::Realtime);
    let target = match o.node("target") {
        Some(n) => read_target(r, n),
        None => {
            r.error(
                "target",
                "required section is missing (it says where events go)",
            );
            None
        }
    };
    let http = target.as_ref().is_some_and(|t| t.adapter == Adapter::Http);
    let mut replay = None;
    let sources = match o.node("source") {
        Some(n @ YamlNode::Sequence(items)) => read_mix(r, n, items),
        Some(n @ YamlNode::Mapping(m)) if m.get_node("file").is_some() => {
            replay = read_replay(r, n);
            replay.as_ref().map(|_| Vec::new())
        }
        Some(n) => read_source(r, n, "source").map(|s| vec![s]),
        // A plain HTTP load sends its fixed body (or none) and needs no pack.
        None if http => Some(Vec::new()),
        None => {
            r.error(
                "source",
                "required section is missing (it names the source pack)",
            );
            None
        }
    };
    let workload = match o.node("workload") {
        Some(n) => read_workload(r, n),
        None => {
            r.error(
                "workload",
                "required section is missing (it sets the rate and when to stop)",
            );
            None
        }
    };
    let observability = o
        .sub(r, "observability", read_observability)
        .unwrap_or_default();
    let slo = o.sub(r, "slo", read_slo).unwrap_or_default();
    let faults = o
        .node("faults")
        .map(|n| read_faults(r, n))
        .unwrap_or_default();
    let verify = o.sub(r, "verify", read_verify);
    o.finish(r);
    let mut workload = workload;
    if let (Some(w), Some(s)) = (workload.as_mut(), sources.as_ref()) {
        // A mix given by eps per source: a steady run's rate is their sum.
        if s.len() > 1 && s.iter().all(|s| s.eps.is_some()) && w.eps.is_none() {
            w.eps = Some(s.iter().filter_map(|s| s.eps).sum());
        }
    }
    Some(Config {
        schema_version: schema_version?,
        name,
        seed,
        mode,
        target: target?,
        sources: sources?,
        replay,
        workload: workload?,
        observability,
        slo,
        faults,
        verify,
    })
}

fn read_faults(r: &mut Reader, node: &YamlNode) -> Vec<Fault> {
    let items = match node {
        YamlNode::Sequence(items) => items,
        _ => {
            let _: Option<Vec<u64>> = r.value(node, "faults");
            return Vec::new();
        }
    };
    if !list_fits(r, node, "faults", MAX_FAULTS, "faults") {
        return Vec::new();
    }
    let mut faults = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("faults[{i}]");
        let Some(mut f) = r.obj(item, &path) else {
            continue;
        };
        let v = (f.req(r, "at"), f.req(r, "action"));
        let fault = Fault {
            at: v.0.unwrap_or_default(),
            action: v.1.unwrap_or(FaultAction::Cut),
            target: f.get(r, "target"),
            for_: f.get(r, "for"),
            command: f.get(r, "command"),
            args: bounded(&mut f, r, "args", (MAX_ARGS, "arguments")).unwrap_or_default(),
            storm: f.sub(r, "storm", read_sink_faults),
        };
        f.finish(r);
        if v.0.is_some() && v.1.is_some() {
            faults.push(fault);
        }
    }
    faults
}

/// The sink's fault knobs, by the names a standalone sink's `/_faults` takes.
fn read_sink_faults(r: &mut Reader, mut o: Obj) -> crate::sink::Faults {
    let d = crate::sink::Faults::default();
    let v = crate::sink::Faults {
        share_429: o.get(r, "share_429").unwrap_or(d.share_429),
        share_503: o.get(r, "share_503").unwrap_or(d.share_503),
        retry_after_s: o.get(r, "retry_after_s").unwrap_or(d.retry_after_s),
        latency_ms: o.get(r, "latency_ms").unwrap_or(d.latency_ms),
        stall_share: o.get(r, "stall_share").unwrap_or(d.stall_share),
        stall_ms: o.get(r, "stall_ms").unwrap_or(d.stall_ms),
        reset_share: o.get(r, "reset_share").unwrap_or(d.reset_share),
    };
    o.finish(r);
    v
}

fn read_schema_version(r: &mut Reader, o: &mut Obj) -> Option<String> {
    let v: String = match o.node("schema_version") {
        Some(_) => o.get(r, "schema_version")?,
        None => {
            r.error(
                "schema_version",
                format!("required field is missing (write schema_version: \"{SCHEMA_VERSION}\")"),
            );
            return None;
        }
    };
    if v != SCHEMA_VERSION {
        r.error(
            "schema_version",
            format!("{v:?} is not a supported schema version; this ingestbench reads \"{SCHEMA_VERSION}\""),
        );
    }
    Some(v)
}

fn read_target(r: &mut Reader, node: &YamlNode) -> Option<Target> {
    let mut o = r.obj(node, "target")?;
    let adapter = o.get(r, "adapter").unwrap_or(Adapter::Lphc);
    let (url, urls) = match o.node("url") {
        Some(n @ YamlNode::Sequence(_))
            if !list_fits(
                r,
                n,
                "target.url",
                crate::config::validate::MAX_TARGETS,
                "targets",
            ) =>
        {
            (None, Vec::new())
        }
        Some(YamlNode::Sequence(items)) => {
            let urls: Vec<String> = items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| r.value(n, &format!("target.url[{i}]")))
                .collect();
            if urls.len() != items.len() {
                (None, Vec::new())
            } else if urls.is_empty() {
                r.error("target.url", "an empty list: name at least one target");
                (None, Vec::new())
            } else {
                (urls.first().cloned(), urls)
            }
        }
        _ => (o.req(r, "url"), Vec::new()),
    };
    let auth = o.sub(r, "auth", |r, mut a| {
        let auth = Auth {
            scheme: a.req(r, "scheme"),
            token_env: a.get(r, "token_env"),
            token_file: a.get(r, "token_file"),
            token_secret: a.get(r, "token_secret"),
            username: a.get(r, "username"),
            header: a.get(r, "header"),
        };
        a.finish(r);
        auth
    });
    let tls = o.sub(r, "tls", |r, mut t| {
        let tls = Tls {
            verify: t.get(r, "verify").unwrap_or(true),
            ca_file: t.get(r, "ca_file"),
            client_cert: t.get(r, "client_cert"),
            client_key: t.get(r, "client_key"),
            server_name: t.get(r, "server_name"),
        };
        t.finish(r);
        tls
    });
    let batch = o
        .sub(r, "batch", |r, mut b| {
            let batch = Batch {
                max_events: b.get(r, "max_events").unwrap_or(DEFAULT_BATCH_EVENTS),
                max_bytes: b.get(r, "max_bytes").unwrap_or(Size(DEFAULT_BATCH_BYTES)),
                mix: b.get(r, "mix").unwrap_or(false),
            };
            b.finish(r);
            batch
        })
        .unwrap_or(Batch {
            // Plain HTTP load sends one event (or one fixed body) per request.
            max_events: if adapter == Adapter::Http {
                1
            } else {
                DEFAULT_BATCH_EVENTS
            },
            max_bytes: Size(DEFAULT_BATCH_BYTES),
            mix: false,
        });
    let compression = o.get(r, "compression").unwrap_or(Compression::None);
    let limits = o
        .sub(r, "limits", |r, mut l| {
            let limits = Limits {
                max_requests_per_sec: l.get(r, "max_requests_per_sec"),
            };
            l.finish(r);
            limits
        })
        .unwrap_or_default();
    let retry = o
        .sub(r, "retry", |r, mut x| {
            let retry = Retry {
                max_attempts: x.get(r, "max_attempts").unwrap_or(DEFAULT_RETRY_ATTEMPTS),
                max_time: x.get(r, "max_time").unwrap_or(Dur(DEFAULT_RETRY_TIME)),
            };
            x.finish(r);
            retry
        })
        .unwrap_or_default();
    let hec = o.sub(r, "hec", |r, mut h| {
        let hec = Hec {
            endpoint: h.get(r, "endpoint").unwrap_or(HecEndpoint::Event),
            index: h.get(r, "index"),
            sourcetype: h.get(r, "sourcetype"),
            source: h.get(r, "source"),
            host: h.get(r, "host"),
            channel: h.get(r, "channel"),
            ack: h.get(r, "ack").unwrap_or(false),
            framing: h.get(r, "framing"),
        };
        h.finish(r);
        hec
    });
    let syslog = o.sub(r, "syslog", |r, mut s| {
        let syslog = Syslog {
            transport: s.get(r, "transport"),
            framing: s.get(r, "framing").unwrap_or(SyslogFraming::OctetCounting),
            format: s.get(r, "format").unwrap_or(SyslogFormat::Rfc5424),
            app_name: s.get(r, "app_name"),
            facility: s.get(r, "facility"),
            max_message_bytes: s
                .get(r, "max_message_bytes")
                .unwrap_or(Size(DEFAULT_SYSLOG_MESSAGE_BYTES)),
            udp_order: s.get(r, "udp_order"),
            relp_window: s.get(r, "relp_window"),
        };
        s.finish(r);
        syslog
    });
    let elasticsearch = o.sub(r, "elasticsearch", |r, mut e| {
        let d = Elasticsearch::default();
        let v = Elasticsearch {
            index: e.get(r, "index").unwrap_or(d.index),
            pipeline: e.get(r, "pipeline"),
            op_type: e.get(r, "op_type").unwrap_or(d.op_type),
        };
        e.finish(r);
        v
    });
    let http = o.sub(r, "http", |r, mut h| {
        let v = HttpSpec {
            method: h.get(r, "method"),
            headers: bounded(&mut h, r, "headers", (MAX_HEADERS, "header lines"))
                .unwrap_or_default(),
            body: h.get(r, "body"),
            body_file: h.get(r, "body_file"),
            content_type: h.get(r, "content_type"),
            expect_status: bounded(&mut h, r, "expect_status", (MAX_EXPECT_STATUS, "statuses"))
                .unwrap_or_default(),
            keepalive: h.get(r, "keepalive").unwrap_or(true),
            timeout: h.get(r, "timeout"),
            unix_socket: h.get(r, "unix_socket"),
        };
        h.finish(r);
        v
    });
    let builtin = o.sub(r, "builtin", |r, mut b| {
        let v = BuiltinSink {
            faults: b.sub(r, "faults", read_sink_faults),
        };
        b.finish(r);
        v
    });
    o.finish(r);
    Some(Target {
        adapter,
        url: url?,
        urls: if urls.len() > 1 { urls } else { Vec::new() },
        auth,
        tls,
        batch,
        compression,
        limits,
        retry,
        hec,
        syslog,
        elasticsearch,
        http,
        builtin,
    })
}

/// `source: { file: … }`: a recording to replay.
fn read_replay(r: &mut Reader, node: &YamlNode) -> Option<Replay> {
    let mut o = r.obj(node, "source")?;
    let file = o.req(r, "file");
    let format = o.get(r, "format").unwrap_or(ReplayFormat::Lines);
    let timestamps = o.get(r, "timestamps").unwrap_or(ReplayTimes::Now);
    let looped = o.get(r, "loop").unwrap_or(true);
    let timestamp = o.sub(r, "timestamp", |r, mut t| {
        let v = (t.req(r, "regex"), t.req(r, "format"));
        t.finish(r);
        match v {
            (Some(regex), Some(format)) => Some(ReplayTimestamp { regex, format }),
            _ => None,
        }
    });
    let accounting = o.get(r, "accounting").unwrap_or(true);
    let memory = o.get(r, "memory").unwrap_or(Size(256 << 20));
    o.finish(r);
    Some(Replay {
        memory,
        file: file?,
        format,
        timestamps,
        looped,
        timestamp: timestamp.flatten(),
        accounting,
    })
}

/// `source:` as a list: a mix of packs, each `source[i]` read as a single source is.
fn read_mix(r: &mut Reader, node: &YamlNode, items: &[YamlNode]) -> Option<Vec<Source>> {
    let max = crate::config::validate::MAX_MIX;
    if !list_fits(r, node, "source", max, "sources (a mix)") {
        return None;
    }
    if items.is_empty() {
        r.error("source", "an empty list: name at least one source pack");
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match read_source(r, item, &format!("source[{i}]")) {
            Some(s) => out.push(s),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn read_source(r: &mut Reader, node: &YamlNode, path: &str) -> Option<Source> {
    let mut o = r.obj(node, path)?;
    let id = o.req(r, "id");
    let share = o.get(r, "share");
    let eps = o.get(r, "eps");
    let version = o.get(r, "version").unwrap_or_else(|| "*".to_string());
    let entities: Pairs<u64> =
        bounded(&mut o, r, "entities", (MAX_ENTITY_KINDS, "entity kinds")).unwrap_or_default();
    let timestamps = o
        .sub(r, "timestamps", |r, mut t| {
            let ts = Timestamps {
                mode: t.get(r, "mode").unwrap_or(TimestampMode::Realtime),
                anchor: t.get(r, "anchor"),
                span: t.get(r, "span"),
                jitter: t.get(r, "jitter").unwrap_or_default(),
                business_hours: t.get(r, "business_hours").unwrap_or(false),
            };
            t.finish(r);
            ts
        })
        .unwrap_or(Timestamps {
            mode: TimestampMode::Realtime,
            anchor: None,
            span: None,
            jitter: Dur::default(),
            business_hours: false,
        });
    let accounting = o.get(r, "accounting").unwrap_or(true);
    o.finish(r);
    Some(Source {
        id: id?,
        share,
        eps,
        version,
        entities: entities.0,
        timestamps,
        accounting,
    })
}

fn read_workload(r: &mut Reader, node: &YamlNode) -> Option<Workload> {
    let mut o = r.obj(node, "workload")?;
    let profile = o.get(r, "profile").unwrap_or(Profile::Steady);
    let eps = o.get(r, "eps");
    let rate = o.get(r, "rate");
    let burst = o.sub(r, "burst", |r, mut b| {
        let v = (
            b.req(r, "high_eps"),
            b.req(r, "low_eps"),
            b.req(r, "period"),
            b.req(r, "duty"),
        );
        b.finish(r);
        match v {
            (Some(high_eps), Some(low_eps), Some(period), Some(duty)) => Some(Burst {
                high_eps,
                low_eps,
                period,
                duty,
            }),
            _ => None,
        }
    });
    let ramp = o.sub(r, "ramp", |r, mut b| {
        let v = (b.req(r, "from_eps"), b.req(r, "to_eps"), b.req(r, "over"));
        b.finish(r);
        match v {
            (Some(from_eps), Some(to_eps), Some(over)) => Some(Ramp {
                from_eps,
                to_eps,
                over,
            }),
            _ => None,
        }
    });
    let steps = o.node("steps").and_then(|n| read_steps(r, n));
    let find_ceiling = o.get(r, "find_ceiling").unwrap_or(false);
    let ceiling = o.sub(r, "ceiling", |r, mut c| {
        let v = CeilingSettings {
            start_eps: c.get(r, "start_eps"),
            max_eps: c.get(r, "max_eps"),
            min_eps: c.get(r, "min_eps"),
            growth: c.get(r, "growth"),
            precision: c.get(r, "precision"),
            hold: c.get(r, "hold"),
            warmup: c.get(r, "warmup"),
            max_steps: c.get(r, "max_steps"),
        };
        c.finish(r);
        v
    });
    let stop = match o.node("stop") {
        Some(_) => o.sub(r, "stop", |r, mut s| {
            let stop = Stop {
                after: s.get(r, "after"),
                total_events: s.get(r, "total_events"),
            };
            s.finish(r);
            stop
        }),
        // A ceiling search runs its own steps; it needs no stop.
        None if find_ceiling => Some(Stop::default()),
        None => {
            r.error(
                "workload.stop",
                "required section is missing (give stop.after: 60s or stop.total_events: 100000)",
            );
            Some(Stop::default())
        }
    };
    let warmup = o.get(r, "warmup").unwrap_or_default();
    let step_warmup = o.get(r, "step_warmup");
    let workers = o.get(r, "workers");
    let shards = o.get(r, "shards");
    o.finish(r);
    Some(Workload {
        workers,
        shards,
        profile,
        eps,
        rate,
        burst: burst.flatten(),
        ramp: ramp.flatten(),
        steps,
        stop: stop.unwrap_or_default(),
        warmup,
        step_warmup,
        find_ceiling,
        ceiling,
    })
}

fn read_steps(r: &mut Reader, node: &YamlNode) -> Option<Vec<Step>> {
    let items = match node {
        YamlNode::Sequence(items) => items,
        _ => {
            let _: Option<Vec<u64>> = r.value(node, "workload.steps");
            return None;
        }
    };
    if !list_fits(
        r,
        node,
        "workload.steps",
        MAX_STEPS,
        "steps (a smooth change is a ramp)",
    ) {
        return None;
    }
    let mut steps = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("workload.steps[{i}]");
        if let Some(mut s) = r.obj(item, &path) {
            let v = (s.req(r, "eps"), s.req(r, "hold"));
            s.finish(r);
            if let (Some(eps), Some(hold)) = v {
                steps.push(Step { eps, hold });
            }
        }
    }
    Some(steps)
}

fn read_observability(r: &mut Reader, mut o: Obj) -> Observability {
    let v = Observability {
        dashboard: o.get(r, "dashboard").unwrap_or(false),
        dashboard_listen: o.get(r, "dashboard_listen"),
        allow_remote: o.get(r, "allow_remote").unwrap_or(false),
        dashboard_token_env: o.get(r, "dashboard_token_env"),
        report: o.get(r, "report"),
        csv: o.get(r, "csv"),
        hdr_log: o.get(r, "hdr_log"),
        sizing_csv: o.get(r, "sizing_csv"),
        prometheus: o.get(r, "prometheus"),
        linger: o.get(r, "linger").unwrap_or_default(),
        watch: o
            .sub(r, "watch", |r, mut w| {
                let d = Watch::default();
                let v = Watch {
                    pids: bounded(&mut w, r, "pids", (MAX_WATCH, "pids")).unwrap_or_default(),
                    names: bounded(&mut w, r, "names", (MAX_WATCH, "names")).unwrap_or_default(),
                    cgroups: bounded(&mut w, r, "cgroups", (MAX_WATCH, "cgroups"))
                        .unwrap_or_default(),
                    children: w.get(r, "children").unwrap_or(d.children),
                    own: w.get(r, "self").unwrap_or(d.own),
                };
                w.finish(r);
                v
            })
            .unwrap_or_default(),
        target: o.sub(r, "target", |r, mut t| {
            let env: Pairs<String> =
                bounded(&mut t, r, "env", (MAX_ENV, "variables")).unwrap_or_default();
            let v = LaunchTarget {
                command: t.req(r, "command").unwrap_or_default(),
                args: bounded(&mut t, r, "args", (MAX_ARGS, "arguments")).unwrap_or_default(),
                env: env.0,
                ready_port: t.get(r, "ready_port"),
                ready_timeout: t
                    .get(r, "ready_timeout")
                    .unwrap_or(Dur(std::time::Duration::from_secs(10))),
                log: t.get(r, "log"),
                stop_grace: t
                    .get(r, "stop_grace")
                    .unwrap_or(Dur(std::time::Duration::from_secs(5))),
            };
            t.finish(r);
            v
        }),
    };
    o.finish(r);
    v
}

fn read_verify(r: &mut Reader, mut o: Obj) -> Verify {
    let v = Verify {
        sources: match o.node("sources") {
            Some(n) if !list_fits(r, n, "verify.sources", MAX_VERIFY_SOURCES, "stores") => {
                Vec::new()
            }
            _ => o.req(r, "sources").unwrap_or_default(),
        },
        settle_timeout: o
            .get(r, "settle_timeout")
            .unwrap_or(Dur(DEFAULT_SETTLE_TIMEOUT)),
        auth: o.sub(r, "auth", |r, mut a| {
            let v = VerifyAuth {
                scheme: a.get(r, "scheme"),
                username: a.get(r, "username"),
                token_env: a.get(r, "token_env"),
                token_file: a.get(r, "token_file"),
                token_secret: a.get(r, "token_secret"),
            };
            a.finish(r);
            v
        }),
        tls: o.sub(r, "tls", |r, mut t| {
            let v = VerifyTls {
                verify: t.get(r, "verify").unwrap_or(true),
                ca_file: t.get(r, "ca_file"),
            };
            t.finish(r);
            v
        }),
        splunk_index: o.get(r, "splunk_index"),
    };
    o.finish(r);
    v
}

fn read_slo(r: &mut Reader, mut o: Obj) -> Slo {
    let v = Slo {
        min_success_rate: o.get(r, "min_success_rate"),
        max_p95_ms: o.get(r, "max_p95_ms"),
        max_p99_ms: o.get(r, "max_p99_ms"),
        max_error_rate: o.get(r, "max_error_rate"),
        min_eps_ratio: o.get(r, "min_eps_ratio"),
        max_lost_events: o.get(r, "max_lost_events"),
        max_dup_events: o.get(r, "max_dup_events"),
        max_failed_events: o.get(r, "max_failed_events"),
        max_unsent_events: o.get(r, "max_unsent_events"),
        min_events_accepted: o.get(r, "min_events_accepted"),
        max_acks_pending: o.get(r, "max_acks_pending"),
        max_unreadable_2xx_events: o.get(r, "max_unreadable_2xx_events"),
        max_unconfirmed_events: o.get(r, "max_unconfirmed_events"),
        max_targets_down: o.get(r, "max_targets_down"),
        max_watched_cpu_cores: o.get(r, "max_watched_cpu_cores"),
        max_watched_rss: o.get(r, "max_watched_rss"),
        max_recovery: o.get(r, "max_recovery"),
    };
    o.finish(r);
    v
}
