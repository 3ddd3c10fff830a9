//! Rules that look at more than one field, or at the world (files, environment, the secret
//! store): ranges with sane maxima, adapter/knob compatibility, token sources, stop conditions,
//! workload profiles. Every rule reports through the `Reader` so its message carries the field
//! path and the line of the field it is about.

use std::path::Path;

use crate::config::schema::*;
use crate::config::secrets::{self, Store};
use crate::config::units::Dur;
use crate::yaml::Reader;

pub const MAX_EPS: f64 = 100_000_000.0;
/// The lowest rate a schedule takes (one event every 1,000 s): below it the next event's time
/// is beyond any run (a run at this rate still lasts its `stop.after`).
pub const MIN_EPS: f64 = 0.001;
/// Events per second, as every rate field takes them.
const EPS: (f64, f64) = (MIN_EPS, MAX_EPS);
pub const MAX_BATCH_EVENTS: u64 = 1_000_000;
pub const MIN_BATCH_BYTES: u64 = 64;
pub const MAX_BATCH_BYTES: u64 = 256 << 20;
pub const MAX_REQUESTS_PER_SEC: f64 = 10_000_000.0;
/// The lowest request cap: one request every 100 s.
pub const MIN_REQUESTS_PER_SEC: f64 = 0.01;
/// The longest a run, a step, a ramp or a fault may last (30 days), and the latest a fault
/// may come: a schedule stays within what every clock holds.
pub const MAX_RUN: std::time::Duration = std::time::Duration::from_secs(30 * 86_400);
/// Most events a run may be asked for (`stop.total_events`).
pub const MAX_TOTAL_EVENTS: u64 = 1_000_000_000_000_000;
/// Longest `target.retry.max_time`.
pub const MAX_RETRY_TIME: std::time::Duration = std::time::Duration::from_secs(86_400);
/// Longest `observability.linger`.
pub const MAX_LINGER: std::time::Duration = std::time::Duration::from_secs(3600);
/// Longest backfill `timestamps.span` (about ten years).
pub const MAX_SPAN: std::time::Duration = std::time::Duration::from_secs(3650 * 86_400);
/// Most of `source.memory` (a replay held in memory; a larger recording is streamed).
pub const MAX_REPLAY_MEMORY: u64 = 16 << 30;
/// Highest latency objective: the latency histograms end at 60 s, so a bound above it could
/// never fail.
pub const MAX_LATENCY_MS: f64 = (crate::stats::MAX_LATENCY_US / 1000) as f64;
/// Highest `slo.max_watched_cpu_cores`.
pub const MAX_CPU_CORES: f64 = 4096.0;
/// Highest process id Linux gives (`PID_MAX_LIMIT`).
pub const MAX_PID: u32 = 4_194_304;
pub const MAX_ENTITY_POOL: u64 = 10_000_000;
pub const MAX_SYSLOG_MESSAGE: u64 = 1 << 20;
pub const MAX_UDP_PAYLOAD: u64 = 65_507;

/// What validation may look up beyond the file: the source pack catalog.
pub trait PackIndex {
    /// The version of pack `id`, or why it cannot be used (unknown id, broken pack).
    fn version_of(&self, id: &str) -> Result<semver::Version, String>;
    /// About how many bytes one event of pack `id` renders to, when that can be told.
    fn mean_event_bytes(&self, _id: &str) -> Option<f64> {
        None
    }
}

/// Every rule of `validate`, for a config made or changed in code (a run's command-line
/// overrides applied, a ceiling step, a config the panel builds): the same messages, naming
/// the field, with no line (there is no file). `run::plan` plans nothing with an error here,
/// so what `validate` refuses a run refuses with the same words.
pub fn check(c: &Config, store: &Store, packs: Option<&dyn PackIndex>) -> crate::yaml::diag::Diags {
    let mut r = Reader::default();
    rules(c, &mut r, store, packs, false);
    r.diags
}

/// Runs every rule. `store` is where `token_secret` names are looked up; `packs`, when given,
/// is where `source.id` and `source.version` are checked.
pub fn validate(c: &Config, r: &mut Reader, store: &Store, packs: Option<&dyn PackIndex>) {
    rules(c, r, store, packs, true);
}

/// Every rule; `read_recording`: read a replayed recording as the run will (`check` leaves
/// that to the run's plan, which reads it next and refuses it in the same words).
fn rules(
    c: &Config,
    r: &mut Reader,
    store: &Store,
    packs: Option<&dyn PackIndex>,
    read_recording: bool,
) {
    if !list_lengths(c, r) {
        // Nothing more is checked of a config with a list over its bound: the checks below
        // go over every entry.
        return;
    }
    top(c, r);
    if let Some(p) = packs {
        request_cap(c, p, r);
        data_rate_eps(c, p, r);
    }
    target(&c.target, r, store);
    tls_client(c, r);
    if c.workload.profile == Profile::Closed && c.target.adapter != Adapter::Http {
        r.error(
            "workload.profile",
            "closed (no rate: each connection sends when answered) is for adapter http; an event run keeps a schedule (find the most it takes with find_ceiling)",
        );
    }
    for (i, s) in c.sources.iter().enumerate() {
        let at = if c.is_mix() {
            format!("source[{i}]")
        } else {
            "source".to_string()
        };
        source(s, &at, c.mode, r, packs);
    }
    mix(c, r);
    if let Some(rp) = &c.replay {
        replay(rp, r, read_recording);
    }
    if c.has_events()
        && c.target
            .http
            .as_ref()
            .is_some_and(|h| h.body.is_some() || h.body_file.is_some())
    {
        r.error(
            "source",
            "each request carries one event of the source, or the fixed body of target.http: not both",
        );
    }
    workload(&c.workload, r);
    if c.workload.find_ceiling {
        for (path, m) in ceiling_outputs(&c.observability) {
            r.error(path, m);
        }
    }
    shards(c, r);
    data_rate(c, r);
    observability(&c.observability, r);
    watch(&c.observability, &c.slo, r);
    slo(&c.slo, r);
    faults(c, r);
    if let Some(v) = &c.verify {
        verify(v, c, r);
    }
}

/// Every list within its bound (`schema::MAX_*`): the reader refuses a longer one in a file
/// before reading it; this holds for a config made in code. False when one is over.
fn list_lengths(c: &Config, r: &mut Reader) -> bool {
    let w = &c.observability.watch;
    let http = c.target.http.as_ref();
    let launch = c.observability.target.as_ref();
    let lists = [
        ("target.url", c.target.urls.len(), MAX_TARGETS),
        ("source", c.sources.len(), MAX_MIX),
        (
            "workload.steps",
            c.workload.steps.as_ref().map_or(0, Vec::len),
            MAX_STEPS,
        ),
        ("faults", c.faults.len(), MAX_FAULTS),
        ("observability.watch.pids", w.pids.len(), MAX_WATCH),
        ("observability.watch.names", w.names.len(), MAX_WATCH),
        ("observability.watch.cgroups", w.cgroups.len(), MAX_WATCH),
        (
            "observability.target.args",
            launch.map_or(0, |t| t.args.len()),
            MAX_ARGS,
        ),
        (
            "observability.target.env",
            launch.map_or(0, |t| t.env.len()),
            MAX_ENV,
        ),
        (
            "target.http.headers",
            http.map_or(0, |h| h.headers.len()),
            MAX_HEADERS,
        ),
        (
            "target.http.expect_status",
            http.map_or(0, |h| h.expect_status.len()),
            MAX_EXPECT_STATUS,
        ),
        (
            "verify.sources",
            c.verify.as_ref().map_or(0, |v| v.sources.len()),
            MAX_VERIFY_SOURCES,
        ),
    ];
    let mut ok = true;
    for (path, n, max) in lists {
        if n > max {
            r.error(path, format!("{n} entries: at most {max}"));
            ok = false;
        }
    }
    for (i, f) in c.faults.iter().enumerate() {
        if f.args.len() > MAX_ARGS {
            r.error(
                &format!("faults[{i}].args"),
                format!("{} entries: at most {MAX_ARGS}", f.args.len()),
            );
            ok = false;
        }
    }
    ok
}

/// `faults:`, `target.builtin` and `slo.max_recovery`: each fault fits its action and its
/// target exists in this config; it comes within the run; a ceiling search takes none.
fn faults(c: &Config, r: &mut Reader) {
    if let Some(b) = &c.target.builtin {
        if c.target.url != "builtin" {
            r.error(
                "target.builtin",
                "settings of the built-in sink apply with target.url: builtin",
            );
        }
        if let Some(Err(e)) = b.faults.map(|f| f.validate()) {
            r.error("target.builtin.faults", e);
        }
    }
    if c.slo.max_recovery.is_some() && c.faults.is_empty() {
        r.error(
            "slo.max_recovery",
            "judges recovery from faults: give faults (a timeline of stall, kill, restart, storm, cut, pause)",
        );
    }
    if c.faults.is_empty() {
        return;
    }
    if c.workload.find_ceiling {
        r.error(
            "faults",
            "a ceiling search runs steps of its own: it takes no fault timeline",
        );
        return;
    }
    let ends = c.workload.stop.after.map(|d| d.0);
    for (i, f) in c.faults.iter().enumerate() {
        if let Err((field, m)) = crate::run::fault::check(c, f) {
            r.error(&format!("faults[{i}].{field}"), m);
        }
        if f.at.0 > MAX_RUN {
            r.error(
                &format!("faults[{i}].at"),
                format!("{} is above the maximum of {}", f.at, Dur(MAX_RUN)),
            );
        }
        if let Some(d) = f.for_.filter(|d| d.0 > MAX_RUN) {
            r.error(
                &format!("faults[{i}].for"),
                format!("{d} is above the maximum of {}", Dur(MAX_RUN)),
            );
        }
        if let Some(end) = ends {
            if f.at.0 >= end {
                r.error(
                    &format!("faults[{i}].at"),
                    format!(
                        "{} is not before the run ends (workload.stop.after {})",
                        f.at,
                        Dur(end)
                    ),
                );
            } else if let Some(d) = f.for_.filter(|d| f.at.0 + d.0 > end) {
                r.warning(
                    &format!("faults[{i}].for"),
                    format!(
                        "{} from {} goes past the run's end: it is lifted then",
                        d, f.at
                    ),
                );
            }
        }
    }
}

fn top(c: &Config, r: &mut Reader) {
    if let Some(name) = &c.name
        && (name.is_empty() || name.len() > 128 || name.chars().any(char::is_control))
    {
        r.error("name", "must be 1-128 printable characters");
    }
    if c.mode == Mode::Deterministic && c.seed.is_none() {
        r.error(
            "seed",
            "deterministic mode needs a seed, so that the same seed gives the same events",
        );
    }
}

/// A rate between `min` (above 0) and `max`.
fn rate(r: &mut Reader, path: &str, v: f64, (min, max): (f64, f64)) {
    if v <= 0.0 {
        r.error(path, format!("must be greater than 0, found {v}"));
    } else if v < min {
        r.error(
            path,
            format!(
                "{v} is below the minimum of {min} (one every {} s)",
                1.0 / min
            ),
        );
    } else if v > max {
        r.error(path, format!("{v} is above the maximum of {max}"));
    }
}

/// A rate that may be 0 (a burst's low, a ramp's end), else as `rate`.
fn rate_or_zero(r: &mut Reader, path: &str, v: f64) {
    if !(0.0..=MAX_EPS).contains(&v) {
        r.error(path, format!("must be between 0 and {MAX_EPS}, found {v}"));
    } else if v != 0.0 {
        rate(r, path, v, EPS);
    }
}

/// A duration from above 0 to `max`.
fn span(r: &mut Reader, path: &str, d: Dur, max: std::time::Duration) {
    if d.0.is_zero() {
        r.error(path, "must be greater than 0");
    } else if d.0 > max {
        r.error(path, format!("{d} is above the maximum of {}", Dur(max)));
    }
}

fn fraction(r: &mut Reader, path: &str, v: Option<f64>) {
    if let Some(v) = v
        && !(0.0..=1.0).contains(&v)
    {
        r.error(
            path,
            format!("{v} is not a fraction between 0 and 1 (0.999 means 99.9%)"),
        );
    }
}

fn target(t: &Target, r: &mut Reader, store: &Store) {
    let http = matches!(
        t.adapter,
        Adapter::Lphc | Adapter::GenericHec | Adapter::Elasticsearch
    );
    url(t, r);
    http_target(t, r);

    if t.batch.max_events == 0 || t.batch.max_events > MAX_BATCH_EVENTS {
        r.error(
            "target.batch.max_events",
            format!(
                "must be between 1 and {MAX_BATCH_EVENTS}, found {}",
                t.batch.max_events
            ),
        );
    }
    let mb = t.batch.max_bytes.0;
    if !(MIN_BATCH_BYTES..=MAX_BATCH_BYTES).contains(&mb) {
        r.error(
            "target.batch.max_bytes",
            format!(
                "must be between {MIN_BATCH_BYTES}B and 256MiB, found {}",
                t.batch.max_bytes
            ),
        );
    }
    if let Some(v) = t.limits.max_requests_per_sec {
        rate(
            r,
            "target.limits.max_requests_per_sec",
            v,
            (MIN_REQUESTS_PER_SEC, MAX_REQUESTS_PER_SEC),
        );
    }
    if !(1..=1000).contains(&t.retry.max_attempts) {
        r.error(
            "target.retry.max_attempts",
            format!("must be between 1 and 1000, found {}", t.retry.max_attempts),
        );
    }
    span(r, "target.retry.max_time", t.retry.max_time, MAX_RETRY_TIME);
    if t.compression == Compression::Gzip && !http {
        r.error(
            "target.compression",
            format!(
                "gzip applies to the HTTP adapters (lphc, generic-hec, elasticsearch), not {}",
                t.adapter
            ),
        );
    }
    if t.hec.is_some() && t.adapter != Adapter::GenericHec {
        r.error(
            "target.hec",
            format!(
                "hec settings apply to adapter generic-hec; this target uses {}",
                t.adapter
            ),
        );
    }
    if t.syslog.is_some() && t.adapter != Adapter::Syslog {
        r.error(
            "target.syslog",
            format!(
                "syslog settings apply to adapter syslog; this target uses {}",
                t.adapter
            ),
        );
    }
    if t.elasticsearch.is_some() && t.adapter != Adapter::Elasticsearch {
        r.error(
            "target.elasticsearch",
            format!(
                "elasticsearch settings apply to adapter elasticsearch; this target uses {}",
                t.adapter
            ),
        );
    }
    if let Some(h) = &t.hec {
        hec(h, r);
    }
    if let Some(e) = &t.elasticsearch {
        elasticsearch(e, r);
    }
    if let Some(s) = &t.syslog {
        syslog(s, t, r);
    }
    if let Some(a) = &t.auth {
        auth(a, t.adapter, r, store);
    }
    if let Some(tls) = &t.tls {
        tls_rules(tls, t, r);
    }
}

/// The TLS client built for each target as the run builds it, once the files it names are
/// there (until then `tls_rules` warns): a CA, certificate or key the run would refuse is
/// refused here, with the run's words.
fn tls_client(c: &Config, r: &mut Reader) {
    let Some(tls) = &c.target.tls else { return };
    let files = [&tls.ca_file, &tls.client_cert, &tls.client_key];
    if files
        .iter()
        .any(|f| f.as_ref().is_some_and(|f| !Path::new(f).is_file()))
        || !matches!(
            scheme_of(&c.target.url).as_deref(),
            Some("https" | "tls" | "relp+tls")
        )
    {
        return;
    }
    let settings = crate::run::plan::tls_settings(c);
    let urls = if c.target.urls.is_empty() {
        std::slice::from_ref(&c.target.url)
    } else {
        c.target.urls.as_slice()
    };
    for u in urls {
        let Some(host) = url::Url::parse(u)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_string()))
        else {
            continue;
        };
        if let Err(e) = crate::net::tls::client(&settings, &host) {
            match e
                .split_once(": ")
                .filter(|(p, _)| p.starts_with("target.tls."))
            {
                Some((path, rest)) => r.error(path, rest),
                None => r.error("target.tls", e),
            }
            return;
        }
    }
}

/// The scheme a URL starts with, lower-cased, when it has one.
fn scheme_of(url: &str) -> Option<String> {
    url.split_once("://").map(|(s, _)| s.to_ascii_lowercase())
}

fn url(t: &Target, r: &mut Reader) {
    if t.urls.is_empty() {
        return url_at(t, &t.url, "target.url", r);
    }
    for (i, u) in t.urls.iter().enumerate() {
        let path = format!("target.url[{i}]");
        if u == "builtin" {
            r.error(
                &path,
                "the built-in sink is one target in process: a list names remote collectors",
            );
            continue;
        }
        url_at(t, u, &path, r);
        if scheme_of(u) != scheme_of(&t.url) {
            r.error(
                &path,
                "every target of a list takes the same scheme as the first",
            );
        }
        if let Some(j) = t.urls.iter().take(i).position(|o| o == u) {
            r.error(
                &path,
                format!("already target.url[{j}]: list each target once"),
            );
        }
    }
    if t.urls.len() > MAX_TARGETS {
        r.error(
            "target.url",
            format!(
                "{} targets: a run takes at most {MAX_TARGETS}",
                t.urls.len()
            ),
        );
    }
    if t.http.as_ref().is_some_and(|h| h.unix_socket.is_some()) {
        r.error(
            "target.http.unix_socket",
            "connects to one socket: not with several targets",
        );
    }
    if t.hec.as_ref().is_some_and(|h| h.ack) {
        r.error(
            "target.hec.ack",
            "an ackId is good only at the server that gave it: indexer acknowledgement needs one target (a load balancer with sticky channels in front of several)",
        );
    }
}

/// Most targets one run spreads its connections over.
pub const MAX_TARGETS: usize = crate::stats::parts::MAX_PARTS;

fn url_at(t: &Target, url: &str, path: &str, r: &mut Reader) {
    if url == "builtin" {
        let tls = t.syslog.as_ref().and_then(|s| s.transport) == Some(SyslogTransport::Tls);
        if tls {
            r.error(path, "the built-in sink takes syslog over TCP or UDP in process; for TLS run `ingestbench sink --syslog-tls` and give its tls:// url");
        }
        if t.adapter == Adapter::Elasticsearch {
            r.error(path, "the built-in sink speaks lphc, HEC and syslog, not _bulk: give the cluster's url (http(s)://host:9200)");
        }
        return;
    }
    let allowed: &[&str] = match t.adapter {
        Adapter::Lphc | Adapter::GenericHec | Adapter::Http | Adapter::Elasticsearch => {
            &["http", "https"]
        }
        Adapter::Syslog => &["tcp", "udp", "tls", "relp", "relp+tls"],
    };
    let Some(scheme) = scheme_of(url) else {
        r.error(
            path,
            format!(
                "{:?} is not a URL; use {}://host:port or builtin",
                url,
                allowed.join("|")
            ),
        );
        return;
    };
    if !allowed.contains(&scheme.as_str()) {
        r.error(
            path,
            format!(
                "scheme {scheme}:// does not fit adapter {}; use {}",
                t.adapter,
                allowed
                    .iter()
                    .map(|s| format!("{s}://"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        );
        return;
    }
    match url::Url::parse(url) {
        Err(e) => r.error(path, format!("{:?} is not a valid URL: {e}", url)),
        Ok(u) => {
            if u.host_str().is_none_or(str::is_empty) {
                r.error(path, format!("{:?} has no host", url));
            }
            if t.adapter == Adapter::Syslog {
                if u.port().is_none() {
                    r.error(
                        path,
                        format!("{:?} needs a port (syslog has no default one here)", url),
                    );
                }
                if !matches!(u.path(), "" | "/") || u.query().is_some() {
                    r.error(
                        path,
                        "a syslog url is scheme://host:port with no path or query",
                    );
                }
            }
            if t.adapter == Adapter::Elasticsearch
                && (u.path().trim_end_matches('/').ends_with("/_bulk") || u.query().is_some())
            {
                r.error(
                    path,
                    "give the cluster's base URL (http(s)://host:9200, or a path prefix before it); requests go to its /_bulk, and index and pipeline go in target.elasticsearch",
                );
            }
            if !u.username().is_empty() || u.password().is_some() {
                r.error(
                    path,
                    "credentials do not belong in the url; use target.auth",
                );
            }
        }
    }
}

/// Headers the engine writes itself, so `target.http.headers` may not give them.
const MANAGED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "content-type",
];

/// `adapter: http` and `target.http`: the section only with the adapter; one request per event
/// (or per fixed body); a body from one place; header lines well formed and not ones the
/// engine writes; expected statuses real ones; no retries (a failed request is a failure).
fn http_target(t: &Target, r: &mut Reader) {
    let is_http = t.adapter == Adapter::Http;
    if t.http.is_some() && !is_http {
        r.error(
            "target.http",
            format!(
                "http settings apply to adapter http; this target uses {}",
                t.adapter
            ),
        );
        return;
    }
    if !is_http {
        return;
    }
    if t.batch.max_events != 1 {
        r.error(
            "target.batch.max_events",
            format!(
                "adapter http sends one event per request: max_events must be 1, found {}",
                t.batch.max_events
            ),
        );
    }
    let d = Retry::default();
    if r.present("target.retry")
        && (t.retry.max_attempts != d.max_attempts || t.retry.max_time != d.max_time)
    {
        r.error(
            "target.retry",
            "adapter http does not retry: a failed request counts as failed, as in hey",
        );
    }
    if t.compression == Compression::Gzip {
        r.error(
            "target.compression",
            "adapter http sends its body as given; compress the body file instead",
        );
    }
    let Some(h) = &t.http else { return };
    if h.body.is_some() && h.body_file.is_some() {
        r.error(
            "target.http.body_file",
            "give the body as text (body) or as a file (body_file), not both",
        );
    }
    if let Some(f) = &h.body_file
        && let Err(e) =
            crate::fsio::check_size(std::path::Path::new(f), crate::fsio::MAX_BODY_FILE_BYTES)
    {
        r.error("target.http.body_file", e.to_string());
    }
    for (i, line) in h.headers.iter().enumerate() {
        let path = format!("target.http.headers[{i}]");
        let Some((name, value)) = line.split_once(':') else {
            let shown = crate::config::redact::header_line(line, &[]);
            r.error(
                &path,
                format!("{shown:?} is not a header line (Name: value)"),
            );
            continue;
        };
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            r.error(&path, format!("{name:?} is not a header name"));
        } else if MANAGED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            r.error(
                &path,
                format!(
                    "{name} is written by ingestbench (Content-Type: use target.http.content_type; Connection: target.http.keepalive)"
                ),
            );
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            r.error(&path, "a header value may not hold a line break");
        }
    }
    if h.unix_socket.is_some() && t.url == "builtin" {
        r.error(
            "target.http.unix_socket",
            "the built-in sink listens on TCP; give the url of the server behind the socket",
        );
    }
    if let Some(ct) = &h.content_type
        && ct.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0)
    {
        r.error(
            "target.http.content_type",
            "a header value may not hold a line break",
        );
    }
    if let Some(t) = h.timeout
        && (t.0.is_zero() || t.0 > std::time::Duration::from_secs(3600))
    {
        r.error(
            "target.http.timeout",
            format!("must be above 0 and at most 1h, found {t}"),
        );
    }
    for (i, st) in h.expect_status.iter().enumerate() {
        if !(100..=599).contains(st) {
            r.error(
                &format!("target.http.expect_status[{i}]"),
                format!("{st} is not an HTTP status (100 to 599)"),
            );
        }
    }
}

fn hec(h: &Hec, r: &mut Reader) {
    match (h.endpoint, h.framing) {
        (HecEndpoint::Raw, Some(f)) if f != HecFraming::Raw => r.error(
            "target.hec.framing",
            format!("framing {f} needs endpoint event; the raw endpoint takes framing raw"),
        ),
        (HecEndpoint::Event, Some(HecFraming::Raw)) => r.error(
            "target.hec.framing",
            "framing raw needs endpoint raw (/services/collector/raw)",
        ),
        _ => {}
    }
    if let Some(ch) = &h.channel
        && !is_guid(ch)
    {
        r.error(
            "target.hec.channel",
            format!("{ch:?} is not a GUID (e.g. 0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba)"),
        );
    }
    for (key, v) in [
        ("index", &h.index),
        ("sourcetype", &h.sourcetype),
        ("source", &h.source),
        ("host", &h.host),
    ] {
        if let Some(v) = v
            && (v.is_empty() || v.chars().any(char::is_control))
        {
            r.error(
                &format!("target.hec.{key}"),
                "must be a non-empty single-line string",
            );
        }
    }
}

fn is_guid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && [8, 4, 4, 4, 12]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && p.chars().all(|c| c.is_ascii_hexdigit()))
}

fn syslog(s: &Syslog, t: &Target, r: &mut Reader) {
    let scheme = scheme_of(&t.url);
    if let (Some(tr), Some(sc)) = (s.transport, scheme.as_deref())
        && tr.name() != sc
    {
        r.error(
                "target.syslog.transport",
                format!("transport {tr} contradicts the url scheme {sc}://; leave transport out to follow the url"),
            );
    }
    if let Some(app) = &s.app_name
        && (app.is_empty() || app.len() > 48 || !app.bytes().all(|b| (33..=126).contains(&b)))
    {
        r.error(
            "target.syslog.app_name",
            "must be 1-48 printable ASCII characters without spaces (RFC 5424 APP-NAME)",
        );
    }
    let max = s.max_message_bytes.0;
    let udp = scheme.as_deref() == Some("udp") || s.transport == Some(SyslogTransport::Udp);
    if !(64..=MAX_SYSLOG_MESSAGE).contains(&max) {
        r.error(
            "target.syslog.max_message_bytes",
            format!(
                "must be between 64B and 1MiB, found {}",
                s.max_message_bytes
            ),
        );
    } else if udp && max > MAX_UDP_PAYLOAD {
        r.error(
            "target.syslog.max_message_bytes",
            format!(
                "{} does not fit one UDP datagram (at most {MAX_UDP_PAYLOAD} bytes)",
                s.max_message_bytes
            ),
        );
    }
    if s.udp_order.is_some() && !udp {
        r.warning(
            "target.syslog.udp_order",
            "applies to udp:// targets only; ignored for this transport",
        );
    }
    let relp = matches!(scheme.as_deref(), Some("relp" | "relp+tls"));
    match s.relp_window {
        Some(w) if !relp => r.warning(
            "target.syslog.relp_window",
            format!("applies to relp:// and relp+tls:// targets only; ignored for this transport (window {w})"),
        ),
        Some(w) if !(1..=crate::adapter::relp::MAX_WINDOW as u64).contains(&w) => r.error(
            "target.syslog.relp_window",
            format!(
                "must be between 1 and {} frames, found {w}",
                crate::adapter::relp::MAX_WINDOW
            ),
        ),
        _ => {}
    }
    if s.format == SyslogFormat::Rfc3164 && max > 1024 {
        r.warning(
            "target.syslog.max_message_bytes",
            "RFC 3164 messages are limited to 1024 bytes; many receivers truncate longer ones",
        );
    }
}

fn auth(a: &Auth, adapter: Adapter, r: &mut Reader, store: &Store) {
    let Some(scheme) = a.scheme else { return };
    let fits = match adapter {
        Adapter::Lphc => matches!(
            scheme,
            AuthScheme::XApiKey | AuthScheme::Basic | AuthScheme::Bearer | AuthScheme::Header
        ),
        Adapter::GenericHec => matches!(
            scheme,
            AuthScheme::Splunk | AuthScheme::Bearer | AuthScheme::Basic | AuthScheme::Header
        ),
        Adapter::Elasticsearch => matches!(
            scheme,
            AuthScheme::Basic | AuthScheme::Bearer | AuthScheme::ApiKey | AuthScheme::Header
        ),
        // Plain HTTP load sends whatever header the endpoint wants.
        Adapter::Http => true,
        Adapter::Syslog => {
            r.error(
                "target.auth",
                "syslog has no authentication; use tls.client_cert for mutual TLS instead",
            );
            return;
        }
    };
    if !fits {
        let hint = match scheme {
            AuthScheme::Splunk => "the splunk scheme is for adapter generic-hec",
            AuthScheme::XApiKey if adapter == Adapter::Elasticsearch => {
                "an Elasticsearch API key is scheme api-key (Authorization: ApiKey …)"
            }
            AuthScheme::XApiKey => "for a HEC target use scheme header with header: X-API-Key",
            AuthScheme::ApiKey => "scheme api-key is for adapter elasticsearch",
            _ => "",
        };
        r.error(
            "target.auth.scheme",
            format!("scheme {scheme} does not fit adapter {adapter}; {hint}"),
        );
    }
    let sources: Vec<&str> = [
        ("token_env", a.token_env.is_some()),
        ("token_file", a.token_file.is_some()),
        ("token_secret", a.token_secret.is_some()),
    ]
    .iter()
    .filter(|(_, set)| *set)
    .map(|(k, _)| *k)
    .collect();
    match sources.len() {
        0 => r.error(
            "target.auth",
            format!(
                "scheme {scheme} needs a token: give one of token_env, token_file, token_secret"
            ),
        ),
        1 => {}
        _ => r.error(
            &format!(
                "target.auth.{}",
                sources.get(1).copied().unwrap_or_default()
            ),
            format!(
                "give only one token source; found {}",
                sources.join(" and ")
            ),
        ),
    }
    if let Some(var) = &a.token_env {
        if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            r.error(
                "target.auth.token_env",
                format!("{var:?} is not an environment variable name"),
            );
        } else if std::env::var_os(var).is_none_or(|v| v.is_empty()) {
            r.warning(
                "target.auth.token_env",
                format!("environment variable {var} is not set now; a run will need it"),
            );
        }
    }
    if let Some(file) = &a.token_file {
        let p = Path::new(file);
        if !p.exists() {
            r.warning(
                "target.auth.token_file",
                format!("{file} does not exist now; a run will need it"),
            );
        } else if let Err(e) = secrets::check_private_mode(p) {
            r.error("target.auth.token_file", e);
        }
    }
    if let Some(name) = &a.token_secret {
        if let Err(e) = secrets::check_name(name) {
            r.error("target.auth.token_secret", e);
        } else if !store.contains(name) {
            r.warning(
                "target.auth.token_secret",
                format!(
                    "no secret named {name:?} in {} now; a run will need it",
                    store.dir().display()
                ),
            );
        }
    }
    match (scheme, &a.username) {
        (AuthScheme::Basic, None) => r.error(
            "target.auth.username",
            "scheme basic needs a username (the token is the password)",
        ),
        (AuthScheme::Basic, Some(u)) if u.contains(':') || u.is_empty() => r.error(
            "target.auth.username",
            "a basic-auth username must be non-empty and contain no ':'",
        ),
        (s, Some(_)) if s != AuthScheme::Basic => r.error(
            "target.auth.username",
            format!("username applies to scheme basic, not {s}"),
        ),
        _ => {}
    }
    match (scheme, &a.header) {
        (AuthScheme::Header, None) => r.error(
            "target.auth.header",
            "scheme header needs the header name, e.g. header: X-Auth-Token",
        ),
        (AuthScheme::Header, Some(h)) if !is_header_name(h) => r.error(
            "target.auth.header",
            format!("{h:?} is not a valid HTTP header name"),
        ),
        (s, Some(_)) if s != AuthScheme::Header => r.error(
            "target.auth.header",
            format!("header applies to scheme header, not {s}"),
        ),
        _ => {}
    }
}

/// `target.elasticsearch`: an index name Elasticsearch and OpenSearch take (lower case, none
/// of `\\ / * ? " < > | , #` or a space or `:`, not starting with `-`, `_` or `+`, not `.` or
/// `..`, at most 255 bytes) and a pipeline name that is a plain word.
fn elasticsearch(e: &Elasticsearch, r: &mut Reader) {
    let i = &e.index;
    let bad = i
        .bytes()
        .find(|b| b.is_ascii_uppercase() || b" \\/*?\"<>|,#:".contains(b) || b.is_ascii_control());
    let why = if i.is_empty() {
        Some("is empty".to_string())
    } else if let Some(b) = bad {
        Some(format!(
            "may not contain {:?} (lower case, no spaces, none of \\ / * ? \" < > | , # :)",
            b as char
        ))
    } else if i.starts_with(['-', '_', '+']) {
        Some("may not start with -, _ or +".into())
    } else if i == "." || i == ".." {
        Some("may not be . or ..".into())
    } else if i.len() > 255 {
        Some(format!(
            "is {} bytes; an index name takes at most 255",
            i.len()
        ))
    } else {
        None
    };
    if let Some(why) = why {
        r.error(
            "target.elasticsearch.index",
            format!("index name {i:?} {why}"),
        );
    }
    if let Some(p) = &e.pipeline
        && (p.is_empty()
            || !p
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)))
    {
        r.error(
            "target.elasticsearch.pipeline",
            format!("pipeline {p:?}: letters, digits and - _ . only"),
        );
    }
}

/// RFC 9110 token characters.
fn is_header_name(h: &str) -> bool {
    !h.is_empty()
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn tls_rules(tls: &Tls, t: &Target, r: &mut Reader) {
    let secure = matches!(
        scheme_of(&t.url).as_deref(),
        Some("https" | "tls" | "relp+tls")
    );
    if !secure {
        r.error(
            "target.tls",
            "tls settings need an https://, tls:// or relp+tls:// url",
        );
    }
    if !tls.verify {
        r.warning(
            "target.tls.verify",
            "certificate verification is off: the target's identity is not checked",
        );
    }
    match (&tls.client_cert, &tls.client_key) {
        (Some(_), None) => r.error("target.tls.client_key", "client_cert needs client_key"),
        (None, Some(_)) => r.error("target.tls.client_cert", "client_key needs client_cert"),
        _ => {}
    }
    for (key, v) in [
        ("ca_file", &tls.ca_file),
        ("client_cert", &tls.client_cert),
        ("client_key", &tls.client_key),
    ] {
        if let Some(f) = v
            && !Path::new(f).is_file()
        {
            r.warning(
                &format!("target.tls.{key}"),
                format!("{f} does not exist now; a run will need it"),
            );
        }
    }
    if let Some(sn) = &tls.server_name
        && (sn.is_empty() || sn.len() > 253 || sn.contains(char::is_whitespace))
    {
        r.error(
            "target.tls.server_name",
            format!("{sn:?} is not a host name"),
        );
    }
}

fn source(s: &Source, at: &str, mode: Mode, r: &mut Reader, packs: Option<&dyn PackIndex>) {
    if s.id.is_empty()
        || !s
            .id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
    {
        r.error(
            &format!("{at}.id"),
            format!(
                "{:?} is not a source id (lower-case, dotted, e.g. aws.cloudtrail)",
                s.id
            ),
        );
    }
    let req = semver::VersionReq::parse(&s.version);
    if let Err(e) = &req {
        r.error(
            &format!("{at}.version"),
            format!(
                "{:?} is not a version requirement such as \">=1.0\": {e}",
                s.version
            ),
        );
    }
    if let Some(packs) = packs {
        match (packs.version_of(&s.id), req) {
            (Err(msg), _) => r.error(&format!("{at}.id"), msg),
            (Ok(v), Ok(req)) if !req.matches(&v) => r.error(
                &format!("{at}.version"),
                format!("pack {} is version {v}, which does not satisfy {req}", s.id),
            ),
            _ => {}
        }
    }
    for (kind, size) in &s.entities {
        let path = format!("{at}.entities.{kind}");
        if !ENTITY_KINDS.contains(&kind.as_str()) {
            let hint = crate::yaml::diag::did_you_mean(kind, ENTITY_KINDS)
                .map(|g| format!("; did you mean {g:?}?"))
                .unwrap_or_default();
            r.error(
                &path,
                format!(
                    "unknown entity kind {kind:?} (known: {}){hint}",
                    ENTITY_KINDS.join(", ")
                ),
            );
        } else if *size == 0 || *size > MAX_ENTITY_POOL {
            r.error(
                &path,
                format!("pool size must be between 1 and {MAX_ENTITY_POOL}, found {size}"),
            );
        }
    }
    let ts = &s.timestamps;
    if let Some(a) = &ts.anchor
        && humantime::parse_rfc3339_weak(a).is_err()
    {
        r.error(
            &format!("{at}.timestamps.anchor"),
            format!("{a:?} is not an RFC 3339 time such as 2026-01-05T00:00:00Z"),
        );
    }
    match ts.mode {
        TimestampMode::Realtime => {
            // A deterministic run's clock may start at an anchor: then two runs send the same
            // bytes, timestamps included.
            let anchor_ok = mode == Mode::Deterministic;
            for (k, set) in [("anchor", ts.anchor.is_some()), ("span", ts.span.is_some())] {
                let p = format!("{at}.timestamps.{k}");
                if set && !(k == "anchor" && anchor_ok) {
                    r.error(
                        &p,
                        format!("{k} applies to mode backfill (anchor also to a deterministic run's clock); this block uses mode realtime"),
                    );
                }
            }
        }
        TimestampMode::Backfill => match ts.span {
            None => r.error(
                &format!("{at}.timestamps.span"),
                "mode backfill needs a span, e.g. span: 14d",
            ),
            Some(s) => span(r, &format!("{at}.timestamps.span"), s, MAX_SPAN),
        },
    }
    if ts.jitter.0 > std::time::Duration::from_secs(86_400) {
        r.error(
            &format!("{at}.timestamps.jitter"),
            "jitter above 1d is not plausible for event timestamps",
        );
    }
}

/// `source: { file: … }`: the files are there, a given timestamp regex compiles and its
/// format is one the packs write.
fn replay(rp: &Replay, r: &mut Reader, read: bool) {
    let errors = r.diags.errors().count();
    if rp.memory.0 > MAX_REPLAY_MEMORY {
        r.error(
            "source.memory",
            format!(
                "{} is above the maximum of 16GiB (larger recordings are streamed)",
                rp.memory
            ),
        );
    }
    if let Err(e) = crate::generate::replay::expand(&rp.file) {
        r.error("source.file", e);
    }
    if let Some(t) = &rp.timestamp {
        if let Err(e) = regex::bytes::Regex::new(&t.regex) {
            r.error("source.timestamp.regex", format!("not a regex: {e}"));
        }
        if crate::generate::time::TsFormat::parse(&t.format).is_none() {
            r.error(
                "source.timestamp.format",
                format!(
                    "{:?} is not a timestamp format (known: {})",
                    t.format,
                    crate::generate::time::TsFormat::NAMES.join(", ")
                ),
            );
        }
    }
    // The recording read as the run reads it, once nothing above is wrong with its settings.
    if read
        && r.diags.errors().count() == errors
        && let Err(e) = crate::run::plan::load_recording(rp)
    {
        r.error("source.file", e);
    }
}

/// Most packs one mix sends (the per-source counts of a batch are a fixed array).
pub const MAX_MIX: usize = crate::stats::parts::MAX_PARTS;

/// `source:` as a list: how the parts are given (all by `share`, adding up to 1, or all by
/// `eps`, which then give a steady run its rate), one timeline and accounting for the mix
/// (on its first source), no pack twice, `batch.mix` only where a batch can carry it.
fn mix(c: &Config, r: &mut Reader) {
    let one = !c.is_mix();
    for (i, s) in c.sources.iter().enumerate() {
        let at = if one {
            "source".to_string()
        } else {
            format!("source[{i}]")
        };
        if one {
            for (key, set) in [("share", s.share.is_some()), ("eps", s.eps.is_some())] {
                if set {
                    r.error(
                        &format!("source.{key}"),
                        "applies to a mix of sources (source: as a list); a single source sends every event",
                    );
                }
            }
            continue;
        }
        match (s.share, s.eps) {
            (Some(_), Some(_)) => r.error(&at, "give its share or its eps, not both"),
            (None, None) => r.error(
                &at,
                "a source in a mix needs its share (a fraction of the events) or its eps",
            ),
            (Some(v), None) if !(v > 0.0 && v <= 1.0) => r.error(
                &format!("{at}.share"),
                format!("must be more than 0 and at most 1, found {v}"),
            ),
            (None, Some(e)) => rate(r, &format!("{at}.eps"), e, EPS),
            _ => {}
        }
        if i > 0 {
            for key in ["timestamps", "accounting"] {
                let p = format!("{at}.{key}");
                if r.present(&p) {
                    r.error(
                        &p,
                        format!(
                            "a mix has one {key} setting for all its sources: set it on source[0]"
                        ),
                    );
                }
            }
        }
        if let Some(j) = c.sources.iter().take(i).position(|o| o.id == s.id) {
            r.error(
                &format!("{at}.id"),
                format!("{} is already source[{j}]: list each pack once", s.id),
            );
        }
    }
    if c.sources.len() > MAX_MIX {
        r.error(
            "source",
            format!("{} sources: a mix takes at most {MAX_MIX}", c.sources.len()),
        );
    }
    if !one {
        let by_share = c.sources.iter().filter(|s| s.share.is_some()).count();
        let by_eps = c.sources.iter().filter(|s| s.eps.is_some()).count();
        if by_share > 0 && by_eps > 0 {
            r.error(
                "source",
                "give every source its share, or every source its eps: not some of each",
            );
        } else if by_share == c.sources.len() {
            let sum: f64 = c.sources.iter().filter_map(|s| s.share).sum();
            if (sum - 1.0).abs() > 1e-6 {
                r.error("source", format!("the shares add up to {sum}, not 1"));
            }
        } else if by_eps == c.sources.len() {
            if c.workload.profile != Profile::Steady {
                r.error(
                    "source",
                    format!(
                        "eps per source sets a steady rate; this workload uses profile {}: give each source a share instead",
                        c.workload.profile
                    ),
                );
            } else if r.present("workload.eps")
                && c.workload.eps != Some(c.sources.iter().filter_map(|s| s.eps).sum::<f64>())
            {
                r.error(
                    "workload.eps",
                    "the sources' eps give the rate already: leave workload.eps out, or give each source a share",
                );
            }
        }
    }
    if c.target.batch.mix {
        if one {
            r.error(
                "target.batch.mix",
                "mixes the sources of a mix in a batch: this config has one source",
            );
        } else if c.target.adapter == Adapter::Syslog {
            r.error(
                "target.batch.mix",
                "syslog sends each message with its source's own envelope, interleaved message by message already: leave batch.mix out",
            );
        } else if c.target.adapter == Adapter::GenericHec
            && c.target
                .hec
                .as_ref()
                .is_some_and(|h| h.endpoint == HecEndpoint::Raw)
        {
            r.error(
                "target.batch.mix",
                "the HEC raw endpoint takes one sourcetype per request (in its URL): a batch stays of one source",
            );
        }
    }
}

fn workload(w: &Workload, r: &mut Reader) {
    ceiling(w, r);
    step_warmup(w, r);
    if let Some(n) = w.workers
        && (n == 0 || n > 4096)
    {
        r.error(
            "workload.workers",
            format!("must be between 1 and 4096 connections, found {n}"),
        );
    }
    if let Some(n) = w.shards
        && (n == 0 || n > crate::run::shard::MAX_SHARDS)
    {
        r.error(
            "workload.shards",
            format!(
                "must be between 1 and {} processes, found {n}",
                crate::run::shard::MAX_SHARDS
            ),
        );
    }
    if let Some(eps) = w.eps {
        rate(r, "workload.eps", eps, EPS);
    }
    let blocks = [
        (
            Profile::Burst,
            "burst",
            w.burst.is_some() || r.present("workload.burst"),
        ),
        (
            Profile::Ramp,
            "ramp",
            w.ramp.is_some() || r.present("workload.ramp"),
        ),
        (
            Profile::Steps,
            "steps",
            w.steps.is_some() || r.present("workload.steps"),
        ),
    ];
    for (p, key, present) in blocks {
        if present && w.profile != p {
            r.error(
                &format!("workload.{key}"),
                format!(
                    "{key} settings apply to profile {key}; this workload uses profile {}",
                    w.profile
                ),
            );
        }
        if !present && w.profile == p {
            r.error(
                &format!("workload.{key}"),
                format!("profile {key} needs a {key} block"),
            );
        }
    }
    match w.profile {
        Profile::Steady => {
            if w.eps.is_none()
                && w.rate.is_none()
                && !w.find_ceiling
                && !r.present("workload.eps")
                && !r.present("workload.rate")
            {
                r.error(
                    "workload.eps",
                    "profile steady needs eps (events per second) or rate (bytes per second, e.g. 20MB/s)",
                );
            }
        }
        p => {
            if w.eps.is_some() {
                r.error(
                    "workload.eps",
                    format!(
                        "eps applies to profile steady; profile {p} sets its rates in its own block"
                    ),
                );
            }
        }
    }
    if let Some(b) = &w.burst {
        rate(r, "workload.burst.high_eps", b.high_eps, EPS);
        rate_or_zero(r, "workload.burst.low_eps", b.low_eps);
        if b.low_eps > b.high_eps {
            r.error(
                "workload.burst.low_eps",
                format!("low_eps {} is above high_eps {}", b.low_eps, b.high_eps),
            );
        }
        if b.period.0 < std::time::Duration::from_millis(100) {
            r.error(
                "workload.burst.period",
                format!("must be at least 100ms, found {}", b.period),
            );
        } else {
            span(r, "workload.burst.period", b.period, MAX_RUN);
        }
        if !(b.duty > 0.0 && b.duty < 1.0) {
            r.error(
                "workload.burst.duty",
                format!(
                    "is the share of each period at high_eps, strictly between 0 and 1; found {}",
                    b.duty
                ),
            );
        }
    }
    if let Some(rp) = &w.ramp {
        for (k, v) in [("from_eps", rp.from_eps), ("to_eps", rp.to_eps)] {
            rate_or_zero(r, &format!("workload.ramp.{k}"), v);
        }
        if rp.from_eps == 0.0 && rp.to_eps == 0.0 {
            r.error("workload.ramp.to_eps", "a ramp from 0 to 0 sends nothing");
        }
        span(r, "workload.ramp.over", rp.over, MAX_RUN);
    }
    if let Some(steps) = &w.steps {
        if steps.is_empty() && !r.present("workload.steps[0]") {
            r.error("workload.steps", "needs at least one {eps, hold} step");
        }
        for (i, s) in steps.iter().enumerate() {
            rate(r, &format!("workload.steps[{i}].eps"), s.eps, EPS);
            span(r, &format!("workload.steps[{i}].hold"), s.hold, MAX_RUN);
        }
    }
    if let Some(after) = w.stop.after
        && !w.warmup.0.is_zero()
        && w.warmup.0 >= after.0
    {
        r.error(
            "workload.warmup",
            format!(
                "{} leaves nothing to measure: stop.after is {after}",
                w.warmup
            ),
        );
    }
    let stop_given = r.present("workload.stop");
    match (w.stop.after, w.stop.total_events) {
        (Some(_), Some(_)) => r.error(
            "workload.stop.total_events",
            "give exactly one of stop.after and stop.total_events, not both",
        ),
        (None, None)
            if stop_given
                && !r.present("workload.stop.after")
                && !r.present("workload.stop.total_events") =>
        {
            r.error(
                "workload.stop",
                "give exactly one of stop.after (a duration) and stop.total_events (a count)",
            )
        }
        (Some(d), None) => span(r, "workload.stop.after", d, MAX_RUN),
        (None, Some(0)) => r.error("workload.stop.total_events", "must be greater than 0"),
        (None, Some(n)) if n > MAX_TOTAL_EVENTS => r.error(
            "workload.stop.total_events",
            format!("{n} is above the maximum of {MAX_TOTAL_EVENTS}"),
        ),
        _ => {}
    }
    if let Some(n) = w.stop.total_events.filter(|n| *n <= MAX_TOTAL_EVENTS)
        && w.profile != Profile::Closed
        && !w.find_ceiling
        && peak_eps(w) > 0.0
        && n as f64 / peak_eps(w) > MAX_RUN.as_secs_f64()
    {
        r.error(
            "workload.stop.total_events",
            format!(
                "{n} events at most {} events/s take longer than {}, the longest run",
                peak_eps(w),
                Dur(MAX_RUN)
            ),
        );
    }
    if w.warmup.0 > MAX_RUN {
        r.error(
            "workload.warmup",
            format!("{} is above the maximum of {}", w.warmup, Dur(MAX_RUN)),
        );
    }
}

/// `workload.step_warmup` leaves some of every step for its sizing row.
fn step_warmup(w: &Workload, r: &mut Reader) {
    if w.profile != Profile::Steps {
        if r.present("workload.step_warmup") {
            r.warning(
                "workload.step_warmup",
                format!(
                    "applies to profile steps (its sizing table); this workload uses profile {}",
                    w.profile
                ),
            );
        }
        return;
    }
    let Some(warm) = w.step_warmup else { return };
    for (i, s) in w.steps.iter().flatten().enumerate() {
        if warm.0 + std::time::Duration::from_secs(1) > s.hold.0 {
            r.error(
                "workload.step_warmup",
                format!(
                    "{warm} leaves less than 1s of steps[{i}] (hold {}) for its sizing row",
                    s.hold
                ),
            );
            return;
        }
    }
}

/// The outputs of one run that a ceiling search (many runs, one report) cannot have, with why
/// (`run::ceiling` refuses the same for a config made in code).
pub fn ceiling_outputs(o: &Observability) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if o.hdr_log.is_some() {
        out.push(("observability.hdr_log", "a ceiling search is many runs; the HDR log records one (leave it out, or run a steady profile at the ceiling)".to_string()));
    }
    for (path, on) in [
        ("observability.dashboard", o.dashboard),
        ("observability.prometheus", o.prometheus.is_some()),
    ] {
        if on {
            out.push((path, "the status page and /metrics follow one run; a ceiling search prints each step as it is judged instead (leave dashboard and prometheus out)".to_string()));
        }
    }
    out
}

/// `workload.shards`: what a shard cannot split (a recording each shard would send whole),
/// and the index each shard needs (`JOB_COMPLETION_INDEX`, or `run --shard I/N`).
fn shards(c: &Config, r: &mut Reader) {
    let Some(n) = c.workload.shards else { return };
    if c.replay.is_some() {
        r.error(
            "workload.shards",
            "source.file with shards: each shard would send the whole recording; run a recording from one process",
        );
    }
    let env = crate::run::shard::INDEX_ENV;
    if std::env::var_os(env).is_none() {
        r.warning(
            "workload.shards",
            format!("{env} is not set now: each of the {n} shards needs its index there (a Kubernetes Indexed Job sets it), or run --shard I/{n}"),
        );
    }
}

/// `find_ceiling` and `workload.ceiling`: a search runs steady steps of its own, so it takes
/// no other profile and no stop; its numbers must make a search that ends.
fn ceiling(w: &Workload, r: &mut Reader) {
    if !w.find_ceiling {
        if r.present("workload.ceiling") {
            r.error(
                "workload.ceiling",
                "ceiling settings apply to a ceiling search: set workload.find_ceiling: true",
            );
        }
        return;
    }
    if w.profile != Profile::Steady {
        r.error(
            "workload.profile",
            format!(
                "a ceiling search runs steady steps of its own; profile {} does not apply (leave it out or say steady)",
                w.profile
            ),
        );
    }
    if w.stop.after.is_some() || w.stop.total_events.is_some() {
        r.error(
            "workload.stop",
            "a ceiling search runs each step for workload.ceiling.warmup + hold: leave stop (and --duration, --total) out",
        );
    }
    if w.shards.is_some() {
        r.error(
            "workload.shards",
            "a ceiling search steps one process's rate: search from one process (leave shards out)",
        );
    }
    let Some(c) = &w.ceiling else { return };
    for (key, v) in [
        ("start_eps", c.start_eps),
        ("max_eps", c.max_eps),
        ("min_eps", c.min_eps),
    ] {
        if let Some(v) = v {
            rate(r, &format!("workload.ceiling.{key}"), v, EPS);
        }
    }
    if let (Some(lo), Some(hi)) = (c.start_eps.or(w.eps), c.max_eps)
        && lo > hi
    {
        r.error(
            "workload.ceiling.max_eps",
            format!("{hi} is below the first step's rate {lo}"),
        );
    }
    if let (Some(lo), Some(start)) = (c.min_eps, c.start_eps.or(w.eps))
        && lo > start
    {
        r.error(
            "workload.ceiling.min_eps",
            format!("{lo} is above the first step's rate {start}"),
        );
    }
    if let Some(g) = c.growth
        && !(1.1..=10.0).contains(&g)
    {
        r.error(
            "workload.ceiling.growth",
            format!("must be between 1.1 and 10 (each step up multiplies the rate), found {g}"),
        );
    }
    if let Some(p) = c.precision
        && !(0.005..=0.5).contains(&p)
    {
        r.error(
            "workload.ceiling.precision",
            format!("must be between 0.005 and 0.5 (a share of the rate: 0.05 is 5 %), found {p}"),
        );
    }
    if let Some(h) = c.hold
        && h.0 < std::time::Duration::from_secs(1)
    {
        r.error(
            "workload.ceiling.hold",
            format!("a step needs at least 1s to be judged, found {h}"),
        );
    }
    if let Some(h) = c.hold
        && h.0 > std::time::Duration::from_secs(3600)
    {
        r.error("workload.ceiling.hold", format!("at most 1h, found {h}"));
    }
    if let Some(h) = c.warmup
        && h.0 > std::time::Duration::from_secs(600)
    {
        r.error("workload.ceiling.warmup", format!("at most 10m, found {h}"));
    }
    if let Some(n) = c.max_steps
        && !(2..=100).contains(&n)
    {
        r.error(
            "workload.ceiling.max_steps",
            format!("must be between 2 and 100, found {n}"),
        );
    }
}

/// `workload.rate`: a steady data rate, turned into events per second at setup through the
/// source's mean event size — so it needs a steady profile, no `eps` beside it, a source
/// pack to measure, and no ceiling search (which picks its own rates).
fn data_rate(c: &Config, r: &mut Reader) {
    let w = &c.workload;
    let Some(rate) = w.rate else { return };
    let at = "workload.rate";
    if rate.bytes.0 == 0 {
        r.error(at, format!("must be greater than 0, found {rate}"));
    } else if rate.bytes_per_s() > MAX_DATA_RATE {
        r.error(at, format!("{rate} is above the maximum of 100GB/s"));
    }
    if w.profile != Profile::Steady {
        r.error(
            at,
            format!(
                "rate applies to profile steady; profile {} sets its rates in events per second in its own block",
                w.profile
            ),
        );
    }
    if c.sources.iter().any(|s| s.eps.is_some()) {
        r.error(
            at,
            "the sources' eps give the rate already: leave rate out, or give each source a share",
        );
    } else if w.eps.is_some() {
        r.error(
            at,
            "give eps (events per second) or rate (bytes per second), not both",
        );
    }
    if w.find_ceiling {
        r.error(at, "a ceiling search picks its own rates: leave rate out");
    }
    if c.source().is_none() {
        r.error(
            at,
            "a data rate is turned into events per second through the source's mean event size: give source (a pack), or eps",
        );
    }
}

/// Highest `workload.rate`, bytes per second (100 GB/s).
pub const MAX_DATA_RATE: f64 = 1e11;

/// `workload.rate` over the sources' mean event size (as the packs render it, before
/// framing; the run measures it framed and refuses the same range) comes to a rate in events
/// per second a schedule takes.
fn data_rate_eps(c: &Config, packs: &dyn PackIndex, r: &mut Reader) {
    let Some(rate) = c.workload.rate.filter(|d| d.bytes.0 > 0) else {
        return;
    };
    let shares = c.shares();
    let mut mean = 0.0;
    for (s, share) in c.sources.iter().zip(&shares) {
        match packs.mean_event_bytes(&s.id) {
            Some(b) if b > 0.0 => mean += share * b,
            _ => return,
        }
    }
    let eps = rate.bytes_per_s() / mean;
    if !(MIN_EPS..=MAX_EPS).contains(&eps) {
        r.error(
            "workload.rate",
            format!(
                "{rate} over a mean event of about {mean:.0} bytes is {eps:.6} events/s; it must come to between {MIN_EPS} and {MAX_EPS}"
            ),
        );
    }
}

/// The highest rate a workload asks for.
pub fn peak_eps(w: &Workload) -> f64 {
    let peak = match w.profile {
        Profile::Steady => w.eps.unwrap_or(0.0),
        Profile::Closed => crate::engine::pacer::CLOSED_EPS,
        Profile::Burst => w.burst.as_ref().map_or(0.0, |b| b.high_eps.max(b.low_eps)),
        Profile::Ramp => w.ramp.as_ref().map_or(0.0, |r| r.from_eps.max(r.to_eps)),
        Profile::Steps => w.steps.iter().flatten().map(|s| s.eps).fold(0.0, f64::max),
    };
    peak.max(0.0)
}

/// A request cap the batches cannot carry the rate under: batches grow to keep the event rate
/// under `limits.max_requests_per_sec`, but no further than `batch.max_bytes` holds.
fn request_cap(c: &Config, packs: &dyn PackIndex, r: &mut Reader) {
    let Some(rps) = c
        .target
        .limits
        .max_requests_per_sec
        .filter(|v| (MIN_REQUESTS_PER_SEC..=MAX_REQUESTS_PER_SEC).contains(v))
    else {
        return;
    };
    let Some(src) = c.source() else { return };
    let Some(event) = packs.mean_event_bytes(&src.id).filter(|b| *b > 0.0) else {
        return;
    };
    let peak = peak_eps(&c.workload);
    let per_batch = (c.target.batch.max_bytes.0 as f64 / event).floor().max(1.0);
    let most = rps * per_batch;
    if most < peak {
        r.warning(
            "target.limits.max_requests_per_sec",
            format!(
                "{rps} requests/s of at most {per_batch:.0} events each (batch.max_bytes {} / about {event:.0} bytes per {} event) carry at most about {most:.0} events/s, below the workload's {peak} events/s: the run will fall short, and say so",
                c.target.batch.max_bytes, src.id
            ),
        );
    }
}

/// `observability.watch`, `observability.target` and the SLOs on what they measure.
fn watch(o: &Observability, s: &Slo, r: &mut Reader) {
    let w = &o.watch;
    for (i, pid) in w.pids.iter().enumerate() {
        if *pid == 0 || *pid > MAX_PID {
            r.error(
                &format!("observability.watch.pids[{i}]"),
                format!("{pid} is not a process id (1 to {MAX_PID})"),
            );
        } else if !Path::new(&format!("/proc/{pid}")).exists() {
            r.warning(
                &format!("observability.watch.pids[{i}]"),
                format!("no process with PID {pid} now; a run refuses one that is not there"),
            );
        }
    }
    for (i, n) in w.names.iter().enumerate() {
        if n.trim().is_empty() || n.contains('/') {
            r.error(
                &format!("observability.watch.names[{i}]"),
                format!("{n:?} is not a process name (its comm, or its program's file name)"),
            );
        }
    }
    for (i, c) in w.cgroups.iter().enumerate() {
        if c.trim().is_empty() || c.split('/').any(|p| p == "..") {
            r.error(
                &format!("observability.watch.cgroups[{i}]"),
                format!("{c:?} is not a cgroup v2 directory (absolute, or under /sys/fs/cgroup)"),
            );
        } else if !Path::new("/sys/fs/cgroup").join(c).is_dir() {
            r.warning(
                &format!("observability.watch.cgroups[{i}]"),
                format!("{c:?} is not a directory now; a run refuses a cgroup that is not there"),
            );
        }
    }
    if let Some(t) = &o.target {
        if t.command.trim().is_empty() {
            r.error(
                "observability.target.command",
                "must name the program to launch",
            );
        }
        if t.ready_port == Some(0) {
            r.error("observability.target.ready_port", "0 is not a port");
        }
        if t.ready_timeout.0.is_zero() || t.ready_timeout.0 > std::time::Duration::from_secs(600) {
            r.error(
                "observability.target.ready_timeout",
                format!(
                    "must be more than 0 and at most 10m, found {}",
                    t.ready_timeout
                ),
            );
        }
        if t.stop_grace.0 > std::time::Duration::from_secs(120) {
            r.error(
                "observability.target.stop_grace",
                format!("at most 2m, found {}", t.stop_grace),
            );
        }
    }
    let watched = w.any() || o.target.is_some();
    if let Some(c) = s.max_watched_cpu_cores
        && !(c > 0.0 && c <= MAX_CPU_CORES)
    {
        r.error(
            "slo.max_watched_cpu_cores",
            format!("must be greater than 0 and at most {MAX_CPU_CORES}, found {c}"),
        );
    }
    for (key, set) in [
        ("max_watched_cpu_cores", s.max_watched_cpu_cores.is_some()),
        ("max_watched_rss", s.max_watched_rss.is_some()),
    ] {
        if set && !watched {
            r.error(
                &format!("slo.{key}"),
                "judges watched processes, and nothing is watched: give observability.watch (pids, names, cgroups), observability.target or run --watch",
            );
        }
    }
}

fn observability(o: &Observability, r: &mut Reader) {
    if o.linger.0 > MAX_LINGER {
        r.error(
            "observability.linger",
            format!("{} is above the maximum of 1h", o.linger),
        );
    }
    if let Some(p) = &o.prometheus {
        match p.parse::<std::net::SocketAddr>() {
            Err(_) => r.error(
                "observability.prometheus",
                format!("{p:?} is not a listen address such as 127.0.0.1:9464"),
            ),
            // The status page's rules: beyond loopback only when allowed, and with a token.
            Ok(a) if !a.ip().is_loopback() && !o.allow_remote => r.error(
                "observability.prometheus",
                format!("{a} is beyond loopback: /metrics tells anyone who asks what this run does, so set allow_remote: true (and dashboard_token_env) to serve it there"),
            ),
            Ok(a) if !a.ip().is_loopback() && o.dashboard_token_env.is_none() => r.error(
                "observability.dashboard_token_env",
                format!("/metrics on {a} (beyond loopback) needs a token: name the environment variable that holds it"),
            ),
            Ok(_) => {}
        }
    }
    if let Some(l) = &o.dashboard_listen {
        match l.parse::<std::net::SocketAddr>() {
            Err(_) => r.error(
                "observability.dashboard_listen",
                format!("{l:?} is not a listen address such as 127.0.0.1:8090"),
            ),
            Ok(a) if !a.ip().is_loopback() && !o.allow_remote => r.error(
                "observability.dashboard_listen",
                format!("{a} is not a loopback address; the status page can steer the run, so set allow_remote: true (and dashboard_token_env) to serve it beyond this machine"),
            ),
            Ok(a) if !a.ip().is_loopback() && o.dashboard_token_env.is_none() => r.error(
                "observability.dashboard_token_env",
                format!("a status page on {a} (beyond loopback) needs a token: name the environment variable that holds it"),
            ),
            Ok(_) => {}
        }
        if !o.dashboard {
            r.warning(
                "observability.dashboard_listen",
                "dashboard is false, so nothing listens there (set dashboard: true or use run --status)",
            );
        }
    }
    if let Some(v) = &o.dashboard_token_env
        && std::env::var_os(v).is_none_or(|x| x.is_empty())
    {
        r.warning(
            "observability.dashboard_token_env",
            format!("{v} is not set; the run will need it"),
        );
    }
    let outputs = [
        ("observability.report", &o.report),
        ("observability.csv", &o.csv),
        ("observability.hdr_log", &o.hdr_log),
    ];
    for (i, (key, path)) in outputs.iter().enumerate() {
        let Some(p) = path else { continue };
        output_file(key, p, r);
        if let Some((other, _)) = outputs.iter().take(i).find(|(_, q)| q.as_ref() == Some(p)) {
            r.error(
                key,
                format!("{p} is also {other}; give each output its own file"),
            );
        }
    }
}

/// A file the run writes: a path, not a directory.
fn output_file(key: &str, p: &str, r: &mut Reader) {
    if p.is_empty() {
        r.error(key, "must be a file path");
    } else if Path::new(p).is_dir() {
        r.error(key, format!("{p} is a directory; give a file path"));
    }
}

fn slo(s: &Slo, r: &mut Reader) {
    fraction(r, "slo.min_success_rate", s.min_success_rate);
    fraction(r, "slo.max_error_rate", s.max_error_rate);
    fraction(r, "slo.min_eps_ratio", s.min_eps_ratio);
    for (k, v) in [("max_p95_ms", s.max_p95_ms), ("max_p99_ms", s.max_p99_ms)] {
        if let Some(v) = v
            && v <= 0.0
        {
            r.error(
                &format!("slo.{k}"),
                format!("must be greater than 0, found {v}"),
            );
        } else if let Some(v) = v.filter(|v| *v > MAX_LATENCY_MS) {
            r.error(
                &format!("slo.{k}"),
                format!("{v} is above the maximum of {MAX_LATENCY_MS} (latency is measured up to 60 s, so a higher bound could never fail)"),
            );
        }
    }
    if let Some(m) = s.max_watched_rss
        && m.0 == 0
    {
        r.error("slo.max_watched_rss", "must be greater than 0");
    }
    if let Some(d) = s.max_recovery {
        span(r, "slo.max_recovery", d, MAX_RUN);
    }
    if let (Some(p95), Some(p99)) = (s.max_p95_ms, s.max_p99_ms)
        && p95 > p99
    {
        r.warning("slo.max_p95_ms", format!("{p95} ms is above max_p99_ms {p99} ms; p95 can never exceed p99, so this bound is never the one that fails"));
    }
}

/// Longest `verify.settle_timeout`: a store still growing after an hour is not settling.
pub const MAX_SETTLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

/// `verify`: each store spec parses as `ingestbench verify --source` would take it, and the
/// events carry the accounting tags a store is asked about.
fn verify(v: &Verify, c: &Config, r: &mut Reader) {
    if !c.tagged() {
        r.error(
            "verify",
            "asks stores about this run's events by their accounting tags, and source.accounting is false: turn it on or leave verify out",
        );
    }
    if c.workload.find_ceiling {
        r.error(
            "verify",
            "applies to one run; a ceiling search's steps are judged on their own criteria: verify a run at the rate it found instead",
        );
    }
    if v.sources.is_empty() && !r.present("verify.sources[0]") {
        r.error(
            "verify.sources",
            "give at least one store, e.g. [\"file:/var/log/out*.log\", \"sink:http://127.0.0.1:9800\"]",
        );
    }
    for (i, spec) in v.sources.iter().enumerate() {
        if let Err(e) = crate::verify::check_spec(spec) {
            r.error(&format!("verify.sources[{i}]"), e);
        }
    }
    if v.settle_timeout.0 > MAX_SETTLE_TIMEOUT {
        r.error(
            "verify.settle_timeout",
            format!("{} is above the maximum of 1h", v.settle_timeout),
        );
    }
    if let Some(a) = &v.auth {
        verify_auth(a, r);
    }
    if let Some(i) = &v.splunk_index {
        let mut o = crate::verify::source::SearchOptions::default();
        o.splunk.index = i.clone();
        if let Err(e) = o.check() {
            r.error("verify.splunk_index", e.to_string());
        }
    }
}

/// `verify.auth`: one secret source, a scheme the stores know, a username with basic only.
fn verify_auth(a: &VerifyAuth, r: &mut Reader) {
    let sources = [&a.token_env, &a.token_file, &a.token_secret]
        .iter()
        .filter(|s| s.is_some())
        .count();
    if sources != 1 {
        r.error(
            "verify.auth",
            "give exactly one of token_env, token_file, token_secret (where the secret is)",
        );
    }
    let scheme = a.scheme.as_deref().unwrap_or(if a.username.is_some() {
        "basic"
    } else {
        "bearer"
    });
    if !["basic", "bearer", "apikey", "splunk"].contains(&scheme) {
        r.error(
            "verify.auth.scheme",
            format!("{scheme:?} is not one of basic, bearer, apikey, splunk"),
        );
    }
    match (scheme, &a.username) {
        ("basic", None) => r.error(
            "verify.auth.username",
            "basic needs a username (the secret is its password)",
        ),
        ("basic", Some(u)) if u.is_empty() || u.contains(':') => r.error(
            "verify.auth.username",
            "a user name, not empty and without `:`",
        ),
        ("basic", Some(_)) | (_, None) => {}
        (_, Some(_)) => r.error("verify.auth.username", "goes with scheme basic only"),
    }
}
