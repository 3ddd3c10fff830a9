//! The Prometheus `/metrics` endpoint of a running load test. `render` writes one `Snapshot`
//! in the text exposition format 0.0.4: one family per quantity, prefixed `ingestbench_`, in
//! base units (`_seconds`, `_bytes`), counters ending `_total`, build metadata as `_info`,
//! HELP and TYPE once before each family's samples, label values escaped, latency as
//! cumulative `le` buckets ending in `+Inf` equal to `_count`. `MetricsServer` serves it
//! behind `serve::front` and reads nothing but the latest snapshot of a `SnapshotCell`,
//! under the status page's rules (`guard`): loopback unless remote access is allowed, and
//! then only with a token (`Authorization: Bearer`, which Prometheus's `authorization`
//! scrape setting sends); the Host must name this server; no cross-site request; GET only.
//! docs/report.md ("Prometheus metrics") lists every family.
//!
//! Rendering appends to a caller's reused `String` with `std::fmt::Write`: no serde, no
//! allocation per sample beyond the string growing.

use std::error::Error;
use std::fmt::{self, Write as _};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::front::{self, Limits, Server, Service};
use super::guard::{self, Body, Head, Policy, Refusal, Reply, Response, Verb};

use crate::stats::snapshot::{
    Buckets, RunState, ScenarioNow, Snapshot, SnapshotCell, Stored, WatchedNow, WatchedProcess,
};

/// The exposition's content type. Semicolons: Prometheus 3 refuses `version=0.0.4, charset`.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What `GET /` answers.
const INDEX: &str = "ingestbench: Prometheus metrics of this run are at /metrics\n";

/// How long `shutdown` waits for the serving threads to end.
const JOIN_WAIT: Duration = Duration::from_secs(2);

/// What the front takes at once: one handler (a scrape renders in well under a millisecond),
/// no request bodies.
const LIMITS: Limits = Limits {
    threads: 1,
    connections: 256,
    bodies: 1,
};

/// Which build renders the `ingestbench_build_info` sample.
struct Build<'a> {
    version: &'a str,
    commit: &'a str,
}

const BUILD: Build<'static> = Build {
    version: env!("CARGO_PKG_VERSION"),
    commit: env!("INGESTBENCH_GIT_COMMIT"),
};

/// Appends the text exposition (0.0.4) of `s` to `out`.
pub fn render(s: &Snapshot, out: &mut String) {
    render_build(s, &BUILD, out);
}

fn render_build(s: &Snapshot, build: &Build, out: &mut String) {
    let mut e = Expo { out };
    info(&mut e, s, build);
    events(&mut e, s);
    answers(&mut e, s);
    connections(&mut e, s);
    schedule(&mut e, s);
    state(&mut e, s.state);
    latency(&mut e, s);
    if let Some(st) = &s.stored {
        stored(&mut e, st);
    }
    if let Some(w) = &s.watched {
        watched(&mut e, w);
    }
    if let Some(sc) = &s.scenario {
        scenario(&mut e, sc);
    }
}

/// A scenario lane's stage events (`run --scenario`), apart from `ingestbench_events_total`.
fn scenario(e: &mut Expo, sc: &ScenarioNow) {
    let name = "ingestbench_scenario_stage_events";
    e.family(
        name,
        Kind::Gauge,
        "Stage events in the attack scenario played beside the load.",
    );
    e.int(name, &[], sc.events);
    let name = "ingestbench_scenario_events_total";
    e.family(
        name,
        Kind::Counter,
        "The scenario's stage events since the start, apart from ingestbench_events_total: sent, accepted, failed for good.",
    );
    e.int(name, &[("outcome", "sent")], sc.events_sent);
    e.int(name, &[("outcome", "accepted")], sc.events_accepted);
    e.int(name, &[("outcome", "failed")], sc.events_failed);
}

/// The watched processes (by pid and name), their sum, and ingestbench's own.
fn watched(e: &mut Expo, w: &WatchedNow) {
    let each = |e: &mut Expo, name: &str, v: &dyn Fn(&WatchedProcess) -> f64| {
        for p in &w.processes {
            let pid = p.pid.to_string();
            e.float(name, &[("pid", &pid), ("name", &p.name)], v(p));
        }
    };
    let name = "ingestbench_watched_cpu_cores";
    e.family(
        name,
        Kind::Gauge,
        "CPU a watched process used in the last interval, in cores (1 = one core busy).",
    );
    each(e, name, &|p| p.cpu_cores);
    let name = "ingestbench_watched_cpu_seconds_total";
    e.family(
        name,
        Kind::Counter,
        "CPU seconds (user + system) a watched process used since the run started watching it.",
    );
    each(e, name, &|p| p.cpu_s);
    let name = "ingestbench_watched_rss_bytes";
    e.family(name, Kind::Gauge, "Resident memory of a watched process.");
    each(e, name, &|p| p.rss_bytes as f64);
    let name = "ingestbench_watched_total_cpu_cores";
    e.family(
        name,
        Kind::Gauge,
        "CPU of all watched processes and cgroups in the last interval, summed, in cores.",
    );
    e.float(name, &[], w.cpu_cores);
    let name = "ingestbench_watched_total_rss_bytes";
    e.family(
        name,
        Kind::Gauge,
        "Resident memory of all watched processes (and memory of watched cgroups), summed.",
    );
    e.int(name, &[], w.rss_bytes);
    if let Some(own) = &w.own {
        let name = "ingestbench_own_cpu_cores";
        e.family(
            name,
            Kind::Gauge,
            "CPU ingestbench itself used in the last interval, in cores.",
        );
        e.float(name, &[], own.cpu_cores);
        let name = "ingestbench_own_rss_bytes";
        e.family(name, Kind::Gauge, "Resident memory of ingestbench itself.");
        e.int(name, &[], own.rss_bytes);
    }
}

fn info(e: &mut Expo, s: &Snapshot, build: &Build) {
    let name = "ingestbench_build_info";
    e.family(
        name,
        Kind::Gauge,
        "The ingestbench build: version and git commit; always 1.",
    );
    e.int(
        name,
        &[("version", build.version), ("commit", build.commit)],
        1,
    );
    let name = "ingestbench_run_info";
    e.family(
        name,
        Kind::Gauge,
        "The run: its id, name, adapter and source pack; always 1.",
    );
    let r = &s.run;
    let labels = [
        ("run_id", r.run_id.as_str()),
        ("name", r.name.as_deref().unwrap_or("")),
        ("adapter", r.adapter.as_str()),
        ("source", r.source.as_str()),
    ];
    e.int(name, &labels, 1);
}

fn events(e: &mut Expo, s: &Snapshot) {
    let c = &s.cumulative;
    let name = "ingestbench_events_total";
    e.family(
        name,
        Kind::Counter,
        "Events since the start: put in batches (sent), in batches the target accepted, in batches that failed for good.",
    );
    e.int(name, &[("outcome", "sent")], c.events_sent);
    e.int(name, &[("outcome", "accepted")], c.events_accepted);
    e.int(name, &[("outcome", "failed")], c.events_failed);
    let name = "ingestbench_events_unconfirmed_total";
    e.family(
        name,
        Kind::Counter,
        "Syslog over TCP, TLS or UDP: events written and never confirmed since the start (neither accepted nor failed), by cause.",
    );
    for cause in crate::stats::UNCONFIRMED_CAUSES {
        let n = s.events_unconfirmed_by.get(cause).copied().unwrap_or(0);
        e.int(name, &[("cause", cause)], n);
    }
    let name = "ingestbench_bytes_unsent_at_close_total";
    e.family(
        name,
        Kind::Counter,
        "Syslog over TCP or TLS: bytes the kernel still held unsent (SIOCOUTQ) when connections ended, since the start.",
    );
    e.int(name, &[], s.bytes_unsent_at_close);
    let name = "ingestbench_batches_total";
    e.family(
        name,
        Kind::Counter,
        "Batches since the start: every attempt sent, accepted, failed for good, and attempts after the first (retried).",
    );
    e.int(name, &[("outcome", "sent")], c.batches_sent);
    e.int(name, &[("outcome", "accepted")], c.batches_accepted);
    e.int(name, &[("outcome", "failed")], c.batches_failed);
    e.int(name, &[("outcome", "retried")], c.batches_retried);
    let name = "ingestbench_sent_bytes_total";
    e.family(
        name,
        Kind::Counter,
        "Request bytes written since the start (heads and bodies, after gzip, every attempt).",
    );
    e.int(name, &[], c.bytes_sent);
}

fn answers(e: &mut Expo, s: &Snapshot) {
    let name = "ingestbench_responses_total";
    e.family(
        name,
        Kind::Counter,
        "Responses since the start, by HTTP status.",
    );
    for (status, n) in &s.status {
        e.int(name, &[("status", status)], *n);
    }
    let name = "ingestbench_errors_total";
    e.family(
        name,
        Kind::Counter,
        "Problems since the start, by kind (connect, reset, timeout, protocol, auth, oversize, unreadable_2xx, status_<code>, hec_code_<n>).",
    );
    for (kind, n) in &s.errors {
        e.int(name, &[("kind", kind)], *n);
    }
    let name = "ingestbench_acked_batches_total";
    e.family(
        name,
        Kind::Counter,
        "Batches acknowledged as indexed (HEC indexer acknowledgement) since the start.",
    );
    e.int(name, &[], s.batches_acked);
    let name = "ingestbench_acks_pending_batches";
    e.family(
        name,
        Kind::Gauge,
        "Batches accepted with an ackId and not acknowledged yet.",
    );
    e.int(name, &[], s.acks_pending);
    let name = "ingestbench_events_unreadable_2xx_total";
    e.family(
        name,
        Kind::Counter,
        "Events answered 2xx in words the engine cannot read (an answer over the cap, a lying length, a close mid-body, an HEC answer without a code): never resent, counted failed, since the start.",
    );
    e.int(name, &[], s.events_unreadable_2xx);
    let name = "ingestbench_batches_unreadable_2xx_total";
    e.family(
        name,
        Kind::Counter,
        "Batches answered 2xx in words the engine cannot read, since the start.",
    );
    e.int(name, &[], s.batches_unreadable_2xx);
}

fn connections(e: &mut Expo, s: &Snapshot) {
    let name = "ingestbench_reconnects_total";
    e.family(
        name,
        Kind::Counter,
        "Connections opened again after one was lost, since the start.",
    );
    e.int(name, &[], s.reconnects);
    let name = "ingestbench_events_resent_total";
    e.family(
        name,
        Kind::Counter,
        "Events written again: RELP messages after the connection they went on broke unanswered, elasticsearch _bulk items answered 429/502/503/504, since the start.",
    );
    e.int(name, &[], s.events_resent);
    let name = "ingestbench_events_already_stored_total";
    e.family(
        name,
        Kind::Counter,
        "Elasticsearch _bulk create items answered 409: stored by an earlier attempt, counted accepted, since the start.",
    );
    e.int(name, &[], s.events_already_stored);
    let name = "ingestbench_connections_open";
    e.family(name, Kind::Gauge, "Connections to the target open now.");
    e.int(name, &[], s.connections_open);
}

fn schedule(e: &mut Expo, s: &Snapshot) {
    let name = "ingestbench_events_due_total";
    e.family(
        name,
        Kind::Counter,
        "Events the schedule asked for since the start.",
    );
    e.int(name, &[], s.events_due);
    let name = "ingestbench_target_rate_events_per_second";
    e.family(
        name,
        Kind::Gauge,
        "The rate the schedule asks for now, events per second.",
    );
    e.float(name, &[], s.rate_eps);
    let name = "ingestbench_schedule_lag_seconds";
    e.family(
        name,
        Kind::Gauge,
        "How late batches left compared with their schedule: the worst in the last second.",
    );
    e.float(name, &[], s.lag_ms_max / 1000.0);
    let name = "ingestbench_backlog_events";
    e.family(
        name,
        Kind::Gauge,
        "Events due and not yet sent, at the end of the last second.",
    );
    e.int(name, &[], s.backlog_events);
    let name = "ingestbench_elapsed_seconds";
    e.family(
        name,
        Kind::Gauge,
        "Wall seconds since the start of the run.",
    );
    e.float(name, &[], s.elapsed_s);
    let name = "ingestbench_paused_seconds_total";
    e.family(name, Kind::Counter, "Seconds spent paused since the start.");
    e.float(name, &[], s.paused_s);
}

fn state(e: &mut Expo, now: RunState) {
    let name = "ingestbench_state";
    e.family(
        name,
        Kind::Gauge,
        "Where the run is: 1 for the current state, 0 for the others.",
    );
    for (label, st) in [
        ("running", RunState::Running),
        ("paused", RunState::Paused),
        ("draining", RunState::Draining),
        ("finished", RunState::Finished),
    ] {
        e.int(name, &[("state", label)], u64::from(st == now));
    }
}

fn latency(e: &mut Expo, s: &Snapshot) {
    let name = "ingestbench_latency_seconds";
    e.family(
        name,
        Kind::Histogram,
        "Latency of accepted batches: from the time the schedule set (intended) or from the write (service) to the response.",
    );
    e.histogram(name, ("clock", "intended"), &s.intended_buckets);
    e.histogram(name, ("clock", "service"), &s.service_buckets);
}

fn stored(e: &mut Expo, st: &Stored) {
    let name = "ingestbench_stored_events";
    e.family(
        name,
        Kind::Gauge,
        "What the built-in sink holds of this run: events received, distinct, duplicates, and accepted but not found (lost, settles at the end).",
    );
    e.int(name, &[("kind", "received")], st.events_received);
    e.int(name, &[("kind", "distinct")], st.distinct);
    e.int(name, &[("kind", "duplicates")], st.duplicates);
    e.int(name, &[("kind", "lost")], st.lost_events);
}

#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// Writes exposition lines into the output string. Writing to a `String` cannot fail, so
/// the `fmt::Result`s are dropped.
struct Expo<'a> {
    out: &'a mut String,
}

impl Expo<'_> {
    /// The `# HELP` and `# TYPE` lines that open a family.
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        self.out.push_str("# HELP ");
        self.out.push_str(name);
        self.out.push(' ');
        escape(self.out, help, &['\\', '\n']);
        self.out.push_str("\n# TYPE ");
        self.out.push_str(name);
        self.out.push(' ');
        self.out.push_str(kind.word());
        self.out.push('\n');
    }

    fn int(&mut self, name: &str, labels: &[(&str, &str)], v: u64) {
        self.series(name, "", labels);
        let _ = writeln!(self.out, " {v}");
    }

    fn float(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        self.series(name, "", labels);
        self.out.push(' ');
        float(self.out, v);
        self.out.push('\n');
    }

    /// `_bucket` lines (finite bounds in increasing order, then `+Inf` = count), `_sum` and
    /// `_count` of one labelled histogram. A bound that is not finite or not above the one
    /// before is left out: a repeated `le` would make the series ambiguous.
    fn histogram(&mut self, name: &str, label: (&str, &str), b: &Buckets) {
        let mut last = f64::NEG_INFINITY;
        for &(le, n) in &b.le_s {
            if le.is_finite() && le > last {
                self.bucket(name, label, le, n);
                last = le;
            }
        }
        self.bucket(name, label, f64::INFINITY, b.count);
        self.series(name, "_sum", &[label]);
        self.out.push(' ');
        float(self.out, b.sum_s);
        self.out.push('\n');
        self.series(name, "_count", &[label]);
        let _ = writeln!(self.out, " {}", b.count);
    }

    fn bucket(&mut self, name: &str, (k, v): (&str, &str), le: f64, n: u64) {
        self.out.push_str(name);
        self.out.push_str("_bucket{");
        self.label(k, v);
        self.out.push_str(",le=\"");
        float(self.out, le);
        let _ = writeln!(self.out, "\"}} {n}");
    }

    /// `name{k="v",...}` (no braces without labels), label values escaped.
    fn series(&mut self, name: &str, suffix: &str, labels: &[(&str, &str)]) {
        self.out.push_str(name);
        self.out.push_str(suffix);
        if labels.is_empty() {
            return;
        }
        self.out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.label(k, v);
        }
        self.out.push('}');
    }

    fn label(&mut self, k: &str, v: &str) {
        self.out.push_str(k);
        self.out.push_str("=\"");
        escape(self.out, v, &['\\', '"', '\n']);
        self.out.push('"');
    }
}

/// Appends `s` with each of `special` escaped: `\` → `\\`, `"` → `\"`, line feed → `\n`.
fn escape(out: &mut String, s: &str, special: &[char]) {
    let mut rest = s;
    while let Some(i) = rest.find(special) {
        out.push_str(&rest[..i]);
        let c = rest[i..].chars().next().unwrap_or('\\');
        out.push_str(match c {
            '\n' => "\\n",
            '"' => "\\\"",
            _ => "\\\\",
        });
        rest = &rest[i + c.len_utf8()..];
    }
    out.push_str(rest);
}

/// A float as Prometheus reads it (Go's `ParseFloat`, plus `+Inf`, `-Inf`, `NaN`).
fn float(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v == f64::INFINITY {
        out.push_str("+Inf");
    } else if v == f64::NEG_INFINITY {
        out.push_str("-Inf");
    } else {
        let _ = write!(out, "{v}");
    }
}

/// Where and how to serve `/metrics`: the status page's rules.
#[derive(Clone)]
pub struct MetricsOptions {
    pub listen: SocketAddr,
    /// Allow a non-loopback `listen` (then a token is required).
    pub allow_remote: bool,
    /// When set, `/metrics` must be asked for with `Authorization: Bearer <token>`.
    pub token: Option<String>,
}

impl MetricsOptions {
    /// Loopback rules without a token, on `listen`.
    pub fn local(listen: SocketAddr) -> MetricsOptions {
        MetricsOptions {
            listen,
            allow_remote: false,
            token: None,
        }
    }
}

impl fmt::Debug for MetricsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsOptions")
            .field("listen", &self.listen)
            .field("allow_remote", &self.allow_remote)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Why the metrics server could not start. No message holds the token.
#[derive(Debug)]
pub enum MetricsError {
    /// Not a loopback address, and remote access was not allowed.
    NotLoopback { addr: SocketAddr },
    /// Reachable from other machines, and no token was given.
    NoToken { addr: SocketAddr },
    /// The token is too short, too long or holds a character a header cannot carry.
    BadToken { addr: SocketAddr },
    /// The address could not be bound (in use, not on this host, no permission).
    Bind {
        addr: SocketAddr,
        source: Box<dyn Error + Send + Sync + 'static>,
    },
    /// The serving threads could not be started.
    Thread { addr: SocketAddr, source: io::Error },
}

impl fmt::Display for MetricsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricsError::NotLoopback { addr } => write!(
                f,
                "/metrics on {addr}: not a loopback address; it tells anyone who asks what this \
                 run does, so it listens on 127.0.0.1 unless remote access is allowed \
                 (--allow-remote, observability.allow_remote) with a token"
            ),
            MetricsError::NoToken { addr } => write!(
                f,
                "/metrics on {addr} can be reached from other machines, so it needs a token \
                 (--status-token-env VAR, observability.dashboard_token_env; Prometheus sends \
                 it with `authorization: {{credentials_file: …}}`)"
            ),
            MetricsError::BadToken { addr } => write!(
                f,
                "/metrics on {addr}: the token must be {}",
                guard::TOKEN_RULE
            ),
            MetricsError::Bind { addr, source } => {
                write!(f, "cannot serve /metrics on {addr}: {source}")
            }
            MetricsError::Thread { addr, source } => {
                write!(f, "cannot start the /metrics server on {addr}: {source}")
            }
        }
    }
}

impl Error for MetricsError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            MetricsError::Bind { source, .. } => Some(source.as_ref()),
            MetricsError::Thread { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `/metrics` (and a pointer to it at `/`) served behind the front.
pub struct MetricsServer {
    addr: SocketAddr,
    server: Option<Server>,
}

impl MetricsServer {
    /// Checks the options, listens on `opts.listen` (port 0 picks a free port) and serves
    /// the latest of `snapshots`.
    pub fn start(
        opts: MetricsOptions,
        snapshots: Arc<SnapshotCell>,
    ) -> Result<MetricsServer, MetricsError> {
        let addr = opts.listen;
        let token = guard::listen_token(addr, opts.allow_remote, opts.token.as_deref()).map_err(
            |r| match r {
                guard::TokenRule::NotLoopback => MetricsError::NotLoopback { addr },
                guard::TokenRule::NoToken => MetricsError::NoToken { addr },
                guard::TokenRule::BadToken => MetricsError::BadToken { addr },
            },
        )?;
        let bind_error = |e: io::Error| MetricsError::Bind {
            addr,
            source: Box::new(e),
        };
        let listener = front::bind(addr).map_err(bind_error)?;
        let bound = listener.local_addr().map_err(bind_error)?;
        let policy = Policy {
            port: bound.port(),
            loopback: bound.ip().is_loopback(),
            token,
        };
        let svc = Arc::new(Scrapes { policy, snapshots });
        let server =
            Server::start("ingestbench-metrics", listener, svc, LIMITS).map_err(|source| {
                MetricsError::Thread {
                    addr: bound,
                    source,
                }
            })?;
        Ok(MetricsServer {
            addr: bound,
            server: Some(server),
        })
    }

    /// The address it listens on (with the port chosen when asked for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving: waits for the threads (at most 2 s) and closes the listener.
    pub fn shutdown(mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown(JOIN_WAIT);
        }
    }
}

/// What the handler reads: the rules and the snapshots.
struct Scrapes {
    policy: Policy,
    snapshots: Arc<SnapshotCell>,
}

/// What a request asks, decided from its method and path alone.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Route {
    Metrics,
    Index,
}

impl Service for Scrapes {
    type Route = Route;

    /// Host first, then the route and method, then (for `/metrics`) the token and Fetch
    /// Metadata. No route takes a body.
    fn admit(&self, head: &Head) -> Result<(Route, usize), Response> {
        let refused = |r: Refusal| guard::response(r.reply(), "");
        guard::check_host(head, &self.policy).map_err(refused)?;
        let route = route(head.verb, head.path).map_err(refused)?;
        if route == Route::Metrics {
            guard::check_request(head, &self.policy).map_err(refused)?;
        }
        Ok((route, 0))
    }

    fn answer(&self, route: Route, _body: Vec<u8>) -> Response {
        let reply = match route {
            Route::Metrics => {
                let mut body = String::with_capacity(16 * 1024);
                render(&self.snapshots.latest(), &mut body);
                Reply::of(200, Body::Exposition, body.into_bytes())
            }
            Route::Index => Reply::of(200, Body::Text, INDEX.as_bytes().to_vec()),
        };
        guard::response(reply, "")
    }
}

fn route(verb: Verb, url: &str) -> Result<Route, Refusal> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let route = match path {
        "/metrics" => Route::Metrics,
        "/" => Route::Index,
        _ => return Err(Refusal::new(404, "not found")),
    };
    if verb != Verb::Get {
        return Err(Refusal {
            status: 405,
            message: "method not allowed",
            allow: Some("GET"),
        });
    }
    Ok(route)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    use super::*;
    use crate::stats::snapshot::{RunInfo, Window};

    const GOLDEN: &str = "tests/golden/metrics.txt";

    fn buckets(bounds: &[(f64, u64)], sum_s: f64) -> Buckets {
        let count = bounds.last().map_or(0, |b| b.1);
        let mut le_s = bounds.to_vec();
        le_s.push((f64::INFINITY, count));
        Buckets { le_s, sum_s, count }
    }

    /// A snapshot with every field set, and a run name that needs escaping.
    fn fixed() -> Snapshot {
        let run = RunInfo {
            run_id: "r-0001".into(),
            name: Some("soak \"night\" \\ eu\nwest".into()),
            adapter: "lphc".into(),
            url: "http://127.0.0.1:9/ingest".into(),
            address: "127.0.0.1:9".into(),
            source: "linux.auditd".into(),
            threads: 2,
            connections: 4,
            duration_s: Some(60.0),
            total_events: None,
        };
        let mut s = Snapshot::empty(run);
        s.seq = 42;
        s.state = RunState::Paused;
        s.elapsed_s = 42.5;
        s.paused_s = 3.25;
        s.rate_eps = 1000.0;
        s.events_due = 39_000;
        s.cumulative = Window {
            seconds: 39.25,
            events_sent: 38_900,
            events_accepted: 38_700,
            events_failed: 100,
            batches_sent: 400,
            batches_accepted: 387,
            batches_failed: 1,
            batches_retried: 12,
            bytes_sent: 12_345_678,
            ..Window::default()
        };
        s.status = BTreeMap::from([("200".into(), 387), ("503".into(), 12), ("400".into(), 1)]);
        s.errors = BTreeMap::from([
            ("status_503".into(), 12),
            ("status_400".into(), 1),
            ("reset".into(), 2),
        ]);
        s.reconnects = 2;
        s.batches_acked = 380;
        s.acks_pending = 7;
        s.events_unreadable_2xx = 50;
        s.batches_unreadable_2xx = 1;
        s.lag_ms_max = 1.5;
        s.backlog_events = 100;
        s.connections_open = 4;
        s.intended_buckets = buckets(&[(0.001, 10), (0.005, 200), (0.025, 380), (1.0, 387)], 2.75);
        s.service_buckets = buckets(&[(0.001, 50), (0.005, 300), (0.025, 387), (1.0, 387)], 1.5);
        s.stored = Some(Stored {
            store: "builtin".into(),
            events_received: 38_710,
            distinct: 38_700,
            duplicates: 10,
            lost_events: 0,
            ingest_lag_ms: None,
        });
        let proc = |pid, name: &str, cores, rss| WatchedProcess {
            pid,
            name: name.into(),
            cpu_cores: cores,
            cpu_s: cores * 12.0,
            rss_bytes: rss,
            alive: true,
        };
        s.scenario = Some(ScenarioNow {
            events: 70,
            events_sent: 45,
            events_accepted: 44,
            events_failed: 1,
        });
        s.watched = Some(WatchedNow {
            cpu_cores: 0.75,
            rss_bytes: 50 << 20,
            cpu_s: 9.0,
            processes: vec![
                proc(4242, "syslog-ng", 0.5, 40 << 20),
                proc(4243, "my \"agent\"", 0.25, 10 << 20),
            ],
            own: Some(proc(1000, "ingestbench", 0.9, 30 << 20)),
        });
        s
    }

    fn rendered(s: &Snapshot) -> String {
        let mut out = String::new();
        render_build(
            s,
            &Build {
                version: "0.0.0-test",
                commit: "abcdef012345",
            },
            &mut out,
        );
        out
    }

    /// The family a sample line belongs to: its name less a histogram suffix.
    fn family_of<'a>(sample: &'a str, families: &BTreeMap<String, String>) -> &'a str {
        let name = sample.split(['{', ' ']).next().unwrap_or("");
        for suffix in ["_bucket", "_sum", "_count"] {
            if let Some(base) = name.strip_suffix(suffix)
                && families.get(base).is_some_and(|k| k == "histogram")
            {
                return base;
            }
        }
        name
    }

    #[test]
    fn each_family_has_one_help_and_one_type_before_its_samples() {
        let text = rendered(&fixed());
        let mut helps = BTreeSet::new();
        let mut types: BTreeMap<String, String> = BTreeMap::new();
        let mut done = BTreeSet::new();
        let mut current = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let name = rest.split(' ').next().unwrap().to_string();
                assert!(helps.insert(name.clone()), "second HELP for {name}");
                done.insert(std::mem::replace(&mut current, name));
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let mut it = rest.split(' ');
                let (name, kind) = (it.next().unwrap(), it.next().unwrap());
                assert_eq!(name, current, "TYPE right after its HELP");
                assert!(
                    types.insert(name.into(), kind.into()).is_none(),
                    "second TYPE for {name}"
                );
            } else {
                let fam = family_of(line, &types);
                assert_eq!(fam, current, "sample outside its family: {line}");
                assert!(types.contains_key(fam), "sample before TYPE: {line}");
                assert!(!done.contains(fam), "family split in two: {line}");
            }
        }
        assert!(text.ends_with('\n'));
        assert_eq!(types.len(), 35, "families: {types:?}");
    }

    #[test]
    fn names_follow_the_conventions() {
        let text = rendered(&fixed());
        for line in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
            let mut it = line.split(' ');
            let (name, kind) = (it.next().unwrap(), it.next().unwrap());
            assert!(name.starts_with("ingestbench_"), "{name}");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{name}"
            );
            assert_eq!(
                kind == "counter",
                name.ends_with("_total"),
                "{name} is a {kind}"
            );
            assert!(
                !name.contains("_ms") && !name.contains("millis"),
                "{name}: base units"
            );
        }
    }

    #[test]
    fn buckets_are_cumulative_and_inf_equals_count() {
        let text = rendered(&fixed());
        for clock in ["intended", "service"] {
            let tag = format!("{{clock=\"{clock}\"");
            let of = |suffix: &str| -> Vec<(String, u64)> {
                text.lines()
                    .filter(|l| l.starts_with(&format!("ingestbench_latency_seconds{suffix}{tag}")))
                    .map(|l| {
                        let (head, v) = l.rsplit_once(' ').unwrap();
                        (head.to_string(), v.parse().unwrap())
                    })
                    .collect()
            };
            let bucket = of("_bucket");
            let count = of("_count")[0].1;
            assert_eq!(bucket.len(), 5, "{bucket:?}");
            assert!(bucket.windows(2).all(|w| w[0].1 <= w[1].1), "{bucket:?}");
            let (last, inf) = bucket.last().unwrap();
            assert!(last.ends_with(",le=\"+Inf\"}"), "{last}");
            assert_eq!(*inf, count);
        }
    }

    #[test]
    fn an_empty_histogram_still_has_inf() {
        let text = rendered(&Snapshot::empty(RunInfo::default()));
        for clock in ["intended", "service"] {
            assert!(text.contains(&format!(
                "ingestbench_latency_seconds_bucket{{clock=\"{clock}\",le=\"+Inf\"}} 0\n"
            )));
            assert!(text.contains(&format!(
                "ingestbench_latency_seconds_count{{clock=\"{clock}\"}} 0\n"
            )));
        }
        assert!(!text.contains("ingestbench_stored_events"));
    }

    #[test]
    fn label_values_are_escaped() {
        let text = rendered(&fixed());
        assert!(
            text.contains(r#"name="soak \"night\" \\ eu\nwest""#),
            "{text}"
        );
        let mut out = String::new();
        escape(&mut out, "a\"b\\c\nd\u{e9}\"", &['\\', '"', '\n']);
        assert_eq!(out, r#"a\"b\\c\nd"#.to_string() + "\u{e9}\\\"");
    }

    #[test]
    fn floats_are_go_floats() {
        let mut out = String::new();
        for v in [
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.0025,
            1000.0,
            1e-7,
        ] {
            float(&mut out, v);
            out.push(' ');
        }
        assert_eq!(out, "+Inf -Inf NaN 0.0025 1000 0.0000001 ");
    }

    #[test]
    fn values_come_from_the_snapshot() {
        let text = rendered(&fixed());
        for want in [
            "ingestbench_build_info{version=\"0.0.0-test\",commit=\"abcdef012345\"} 1",
            "ingestbench_events_total{outcome=\"accepted\"} 38700",
            "ingestbench_batches_total{outcome=\"retried\"} 12",
            "ingestbench_responses_total{status=\"503\"} 12",
            "ingestbench_errors_total{kind=\"reset\"} 2",
            "ingestbench_schedule_lag_seconds 0.0015",
            "ingestbench_state{state=\"paused\"} 1",
            "ingestbench_state{state=\"running\"} 0",
            "ingestbench_stored_events{kind=\"duplicates\"} 10",
        ] {
            assert!(text.lines().any(|l| l == want), "missing {want}\n{text}");
        }
    }

    #[test]
    fn routes() {
        let status = |v, p| route(v, p).map_err(|r| r.status);
        assert_eq!(status(Verb::Get, "/metrics"), Ok(Route::Metrics));
        assert_eq!(status(Verb::Get, "/metrics?x=1"), Ok(Route::Metrics));
        assert_eq!(status(Verb::Get, "/"), Ok(Route::Index));
        assert_eq!(status(Verb::Get, "/metricsx"), Err(404));
        assert_eq!(status(Verb::Post, "/metrics"), Err(405));
        assert_eq!(status(Verb::Other, "/metrics"), Err(405));
    }

    #[test]
    fn scrapes_obey_the_status_page_rules() {
        let cell = SnapshotCell::new(fixed());
        let local = Scrapes {
            policy: guard::local(9464),
            snapshots: cell.clone(),
        };
        let head = |host, auth| Head {
            verb: Verb::Get,
            path: "/metrics",
            host: guard::Field::One(host),
            origin: guard::Field::Absent,
            fetch_site: guard::Field::Absent,
            content_type: guard::Field::Absent,
            authorization: auth,
        };
        let status = |s: &Scrapes, h| s.admit(&h).map(|r| r.1).map_err(|r| r.status);
        assert_eq!(
            status(&local, head("127.0.0.1:9464", guard::Field::Absent)),
            Ok(0)
        );
        assert_eq!(
            status(&local, head("evil.example:9464", guard::Field::Absent)),
            Err(403)
        );
        let tokened = Scrapes {
            policy: Policy {
                port: 9464,
                loopback: false,
                token: Some(b"0123456789abcdef".to_vec()),
            },
            snapshots: cell,
        };
        assert_eq!(
            status(&tokened, head("10.0.0.1:9464", guard::Field::Absent)),
            Err(401)
        );
        let auth = guard::Field::One("Bearer 0123456789abcdef");
        assert_eq!(status(&tokened, head("10.0.0.1:9464", auth)), Ok(0));
        let r = tokened.answer(Route::Metrics, Vec::new());
        assert_eq!(r.status, 200);
        assert!(
            r.headers
                .iter()
                .any(|(n, v)| *n == "Content-Type" && v == CONTENT_TYPE)
        );
    }

    #[test]
    fn remote_listening_needs_allow_remote_and_a_long_token() {
        let cell = SnapshotCell::new(fixed());
        let opts = |listen: &str, allow_remote, token: Option<&str>| MetricsOptions {
            listen: listen.parse().unwrap(),
            allow_remote,
            token: token.map(String::from),
        };
        let err = |o| {
            MetricsServer::start(o, cell.clone())
                .err()
                .map(|e| e.to_string())
        };
        assert!(
            err(opts("0.0.0.0:0", false, None))
                .unwrap()
                .contains("not a loopback")
        );
        assert!(
            err(opts("0.0.0.0:0", true, None))
                .unwrap()
                .contains("needs a token")
        );
        assert!(
            err(opts("0.0.0.0:0", true, Some("short")))
                .unwrap()
                .contains("16 to 1024")
        );
        assert!(
            err(opts("127.0.0.1:0", false, Some("short")))
                .unwrap()
                .contains("16 to 1024")
        );
    }

    #[test]
    fn golden_rendering() {
        let got = rendered(&fixed());
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &got).unwrap();
            return;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("{GOLDEN} missing; run with UPDATE_GOLDEN=1"));
        if want != got {
            let (line, (w, g)) = want
                .lines()
                .zip(got.lines())
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .map(|(i, p)| (i + 1, p))
                .unwrap_or((0, ("(length differs)", "")));
            panic!(
                "{GOLDEN} mismatch (UPDATE_GOLDEN=1 to accept) at line {line}:\n  expected: {w}\n  got:      {g}\n--- got in full:\n{got}"
            );
        }
    }
}
