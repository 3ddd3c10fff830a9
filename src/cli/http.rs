//! `ingestbench http URL`: plain HTTP load with hey's and rpcload's flags. The flags become a
//! config (`adapter: http`, every value quoted so nothing on the command line can change the
//! document's shape), run through the run library like `run` — pinned threads, mio, the
//! pacer, rustls, HDR histograms, SLOs and exit codes, the status page and /metrics — and the
//! report is printed as hey prints it (`-o text`), as JSON or as the timeline's CSV.

use argh::FromArgs;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::secrets::{self, Store};
use crate::config::units::parse_duration;
use crate::exit::Exit;
use crate::pack::Catalog;
use crate::report;
use crate::run::{self, Overrides, SetupError};
use crate::yaml::quoted as q;

#[derive(FromArgs)]
/// Plain HTTP load (hey's and rpcload's job): concurrent requests for a count or a duration,
/// as fast as answered or at a rate, with each request's phases timed.
#[argh(
    subcommand,
    name = "http",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench http http://127.0.0.1:8080/ -n 10000 -c 50",
    example = "ingestbench http https://lb.example:8443/ingest -z 30s -q 5000 -m POST -D body.json -T application/json",
    example = "ingestbench http http://127.0.0.1:8088/ingest --source aws.cloudtrail -z 10s -c 8 -s 200",
    example = "ingestbench http builtin -n 2000",
    note = "-q is the total rate of requests per second across all connections, on an open-loop schedule (a late request is not skipped, and its latency counts from when it was due): unlike hey's -q, which is per worker. Without -q each connection sends its next request when the last is answered (hey's default). Exit codes: 0 OK, 2 invalid flags, 3 SLO breach or failed requests, 4 authentication failure, 6 aborted (e.g. the target refuses connections)."
)]
pub struct Args {
    /// the URL to load (http:// or https://), or builtin: the built-in sink in process
    #[argh(positional)]
    url: String,
    /// connections, each with one request in flight (default 50)
    #[argh(option, short = 'c', default = "50")]
    connections: usize,
    /// requests to send (default 200 unless -z)
    #[argh(option, short = 'n')]
    requests: Option<u64>,
    /// send for this long instead of a count, e.g. 30s (not with -n)
    #[argh(option, short = 'z')]
    duration: Option<String>,
    /// requests per second in all (open loop, free of coordinated omission); without it,
    /// closed loop
    #[argh(option, short = 'q')]
    rate: Option<f64>,
    /// method: GET (default without a body), POST (default with one), PUT, PATCH, DELETE,
    /// HEAD, OPTIONS
    #[argh(option, short = 'm')]
    method: Option<String>,
    /// a header line, "Name: value" (repeatable)
    #[argh(option, short = 'H')]
    header: Vec<String>,
    /// the request body
    #[argh(option, short = 'd')]
    body: Option<String>,
    /// a file whose bytes are the request body
    #[argh(option, short = 'D')]
    body_file: Option<String>,
    /// the body's Content-Type
    #[argh(option, short = 'T')]
    content_type: Option<String>,
    /// a request unanswered this long is a timeout: seconds, or a duration such as 500ms
    /// (default 30s)
    #[argh(option, short = 't')]
    timeout: Option<String>,
    /// the status that counts as success (repeatable; default any 2xx); others are failures
    #[argh(option, short = 's')]
    status_ok: Vec<u16>,
    /// each request on a new connection (Connection: close)
    #[argh(switch)]
    disable_keepalive: bool,
    /// connect to this Unix socket; the URL then gives only the Host header and the path
    #[argh(option)]
    unix_socket: Option<String>,
    /// same as --http1.1: HTTP/1.1 with keep-alive, what is always sent (taken for command lines
    /// written for other tools)
    #[argh(switch, long = "http11")]
    http11: bool,
    /// do not check the server's certificate
    #[argh(switch)]
    insecure: bool,
    /// CA certificates (PEM) to check the server's certificate with
    #[argh(option)]
    cacert: Option<String>,
    /// client certificate (PEM) for mutual TLS, with --key
    #[argh(option)]
    cert: Option<String>,
    /// client key (PEM) for mutual TLS
    #[argh(option)]
    key: Option<String>,
    /// environment variable holding a token to send (never given on the command line)
    #[argh(option)]
    token_env: Option<String>,
    /// how the token is sent: bearer (default), splunk, basic, x-api-key, header
    #[argh(option)]
    auth: Option<String>,
    /// one event of this source pack per request body (fresh content each, with accounting
    /// tags), instead of -d/-D
    #[argh(option)]
    source: Option<String>,
    /// output: text (default, hey's layout), json (the report) or csv (the timeline)
    #[argh(option, short = 'o', default = "Output::Text")]
    output: Output,
    /// worker threads, one per core and pinned (default: all cores, at most -c)
    #[argh(option)]
    threads: Option<usize>,
    /// the same as --threads (rpcload's name)
    #[argh(option)]
    cpus: Option<usize>,
    /// do not pin worker threads to cores
    #[argh(switch)]
    no_pin: bool,
    /// serve the status page here during the run, e.g. 127.0.0.1:8090
    #[argh(option)]
    status: Option<SocketAddr>,
    /// serve Prometheus /metrics here during the run
    #[argh(option)]
    prometheus: Option<SocketAddr>,
    /// keep the status page and /metrics up this long after the run
    #[argh(option)]
    linger: Option<String>,
    /// directory searched for packs before ./packs and the built-in ones (with --source)
    #[argh(option)]
    packs: Option<PathBuf>,
}

crate::yaml_enum!(
    pub enum Output {
        Text = "text",
        Json = "json",
        Csv = "csv",
    }
);

impl argh::FromArgValue for Output {
    fn from_arg_value(value: &str) -> Result<Self, String> {
        Output::parse(value)
    }
}

pub fn run(a: Args) -> Exit {
    match start(&a) {
        Ok(code) => code,
        Err(e) => super::run::fail(&e),
    }
}

fn start(a: &Args) -> Result<Exit, SetupError> {
    let text = config_text(a)?;
    let catalog = Catalog::discover(a.packs.as_deref()).map_err(SetupError::invalid)?;
    let store = Store::new(secrets::default_dir().map_err(SetupError::invalid)?);
    let loaded = run::load_text(&text, "the http flags", &store, &catalog)?;
    for w in &loaded.warnings {
        super::err(&format!("warning: {w}"));
    }
    let ov = Overrides {
        threads: a.threads.or(a.cpus),
        no_pin: a.no_pin,
        status: a.status,
        prometheus: a.prometheus,
        linger: match &a.linger {
            Some(d) => Some(
                parse_duration(d)
                    .map_err(|e| SetupError::invalid(format!("--linger: {e}")))?
                    .0,
            ),
            None => None,
        },
        ..Overrides::default()
    };
    super::run::run_planned(loaded.config, &ov, &catalog, &store, |o| {
        print(a.output, &o)
    })
}

fn print(output: Output, o: &run::RunOutcome) -> Exit {
    match output {
        Output::Text => super::out(&report::http::text(&o.report)),
        Output::Json => super::out(&serde_json::to_string_pretty(&o.report).unwrap_or_default()),
        Output::Csv => super::out(&report::csv::render(&o.report)),
    }
    super::run::tell(o, output == Output::Json)
}

/// A timeout flag: whole seconds as hey takes them, or a duration.
fn timeout(t: &str) -> Result<String, SetupError> {
    let text = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        format!("{t}s")
    } else {
        t.to_string()
    };
    parse_duration(&text).map_err(|e| SetupError::invalid(format!("-t/--timeout: {e}")))?;
    Ok(text)
}

/// The config the flags say, as YAML text.
pub fn config_text(a: &Args) -> Result<String, SetupError> {
    let bad = |m: &str| Err(SetupError::invalid(m));
    if a.requests.is_some() && a.duration.is_some() {
        return bad("give -n (a count of requests) or -z (a duration), not both");
    }
    if a.connections == 0 {
        return bad("-c: at least one connection");
    }
    if a.source.is_some() && (a.body.is_some() || a.body_file.is_some()) {
        return bad("--source renders each body from a pack: not with -d or -D");
    }
    if a.body.is_some() && a.body_file.is_some() {
        return bad("give the body as -d TEXT or -D FILE, not both");
    }
    if a.cert.is_some() != a.key.is_some() {
        return bad("--cert and --key go together");
    }
    if a.http11 && a.disable_keepalive {
        return bad("--http1.1 keeps connections open: not with --disable-keepalive");
    }
    if a.threads.is_some() && a.cpus.is_some() {
        return bad("give --threads or --cpus (the same thing), not both");
    }
    let mut http = Vec::new();
    if let Some(m) = &a.method {
        http.push(format!("method: {}", q(&m.to_ascii_uppercase())));
    }
    if !a.header.is_empty() {
        let h: Vec<String> = a.header.iter().map(|h| q(h)).collect();
        http.push(format!("headers: [{}]", h.join(", ")));
    }
    if let Some(b) = &a.body {
        http.push(format!("body: {}", q(b)));
    }
    if let Some(f) = &a.body_file {
        http.push(format!("body_file: {}", q(f)));
    }
    if let Some(ct) = &a.content_type {
        http.push(format!("content_type: {}", q(ct)));
    }
    if !a.status_ok.is_empty() {
        let s: Vec<String> = a.status_ok.iter().map(u16::to_string).collect();
        http.push(format!("expect_status: [{}]", s.join(", ")));
    }
    if a.disable_keepalive {
        http.push("keepalive: false".into());
    }
    if let Some(t) = &a.timeout {
        http.push(format!("timeout: {}", q(&timeout(t)?)));
    }
    if let Some(u) = &a.unix_socket {
        http.push(format!("unix_socket: {}", q(u)));
    }
    let mut t = format!("  adapter: http\n  url: {}\n", q(&a.url));
    if !http.is_empty() {
        t.push_str(&format!("  http: {{ {} }}\n", http.join(", ")));
    }
    let mut tls = Vec::new();
    if a.insecure {
        tls.push("verify: false".to_string());
    }
    for (k, v) in [
        ("ca_file", &a.cacert),
        ("client_cert", &a.cert),
        ("client_key", &a.key),
    ] {
        if let Some(v) = v {
            tls.push(format!("{k}: {}", q(v)));
        }
    }
    if !tls.is_empty() {
        t.push_str(&format!("  tls: {{ {} }}\n", tls.join(", ")));
    }
    match (&a.token_env, &a.auth) {
        (Some(var), auth) => {
            let default = crate::probe::setup::default_scheme(crate::config::schema::Adapter::Http);
            let scheme = auth.as_deref().unwrap_or(default.name());
            t.push_str(&format!(
                "  auth: {{ scheme: {}, token_env: {} }}\n",
                q(scheme),
                q(var)
            ));
        }
        (None, Some(_)) => return bad("--auth needs a token: --token-env VAR"),
        (None, None) => {}
    }
    let source = a
        .source
        .as_ref()
        .map(|s| format!("source: {{ id: {} }}\n", q(s)))
        .unwrap_or_default();
    let stop = match (&a.duration, a.requests) {
        (Some(d), _) => format!("after: {}", q(d)),
        (None, n) => format!("total_events: {}", n.unwrap_or(200)),
    };
    let rate = match a.rate {
        Some(r) => format!("profile: steady, eps: {r}"),
        None => "profile: closed".into(),
    };
    Ok(format!(
        "schema_version: \"1.0\"\nname: http\ntarget:\n{t}{source}workload: {{ {rate}, stop: {{ {stop} }}, workers: {} }}\n",
        a.connections
    ))
}
