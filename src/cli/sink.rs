//! `ingestbench sink`: the built-in collector as a standalone process. Listens for HTTP at
//! `--http` (127.0.0.1:8088 when no listener at all is given; none when only syslog ones
//! are), prints one line per listener on stderr first, the HTTP one first (`sink listening on http://ADDR` or
//! `https://ADDR`, then `syslog+tcp://`, `syslog+udp://`, `syslog+tls://`), serves until
//! Ctrl-C, SIGTERM or `--duration`, then prints the final `SinkStats` as JSON on stdout. Binds
//! to loopback only unless `--allow-remote`. The token is never printed.

use argh::FromArgs;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::config::units::parse_duration;
use crate::exit::Exit;
use crate::sink::{self, Faults, SinkConfig, SinkTls};

#[derive(FromArgs)]
/// Run the built-in collector (lphc JSON batches and Splunk HEC over HTTP or HTTPS; syslog
/// over TCP, UDP and TLS), count what arrives per run and agent, and optionally inject faults.
#[argh(
    subcommand,
    name = "sink",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench sink --http 127.0.0.1:8088",
    example = "SINK_TOKEN=s3cret ingestbench sink --http 127.0.0.1:8088 --token-env SINK_TOKEN --hec-ack",
    example = "ingestbench sink --fault-429 0.1 --retry-after 2 --latency-ms 20 --duration 5m > sink-stats.json",
    example = "curl -s http://127.0.0.1:8088/stats",
    example = "ingestbench sink --syslog-tcp 127.0.0.1:6601 --syslog-udp 127.0.0.1:6514 --duration 1m",
    example = "ingestbench sink --http 127.0.0.1:8088 --syslog-udp 127.0.0.1:5514",
    example = "ingestbench sink --tls-cert server.pem --tls-key server.key --syslog-tls 127.0.0.1:6514",
    note = "Endpoints: POST /ingest (or any POST path outside /services/: a JSON array or NDJSON, answered {{\"accepted\":N}}); Splunk HEC POST /services/collector[/event|/raw|/ack], GET /services/collector/health; GET /stats; GET|POST /_faults to read or change the faults while running. Faults apply to HTTP data requests only; faulted requests count no events. Syslog over TCP and TLS takes octet-counted (RFC 5425) and LF-framed messages, told apart per frame; over UDP one message per datagram. With --tls-cert and --tls-key the HTTP listener serves HTTPS only. HTTP is served at 127.0.0.1:8088 when no listener is given at all; with --syslog-* or --relp listeners only when --http is given too (for /stats and /_faults while it runs)."
)]
pub struct Args {
    /// where HTTP is taken (default 127.0.0.1:8088 when no --syslog-* listener is given, else
    /// no HTTP listener; port 0 picks a free one)
    #[argh(option)]
    http: Option<String>,
    /// token clients must present (X-API-Key, Bearer, Splunk, or Basic password); visible in `ps`, prefer --token-env
    #[argh(option)]
    token: Option<String>,
    /// read the token from this environment variable
    #[argh(option)]
    token_env: Option<String>,
    /// worker threads (default: one per core)
    #[argh(option, default = "0")]
    threads: usize,
    /// HEC indexer acknowledgement: require a channel and return ackIds
    #[argh(switch)]
    hec_ack: bool,
    /// share of data requests answered 429 (0..1)
    #[argh(option, default = "0.0")]
    fault_429: f64,
    /// share of data requests answered 503 (0..1)
    #[argh(option, default = "0.0")]
    fault_503: f64,
    /// seconds of Retry-After sent with 429 and 503 (default 1)
    #[argh(option, default = "1")]
    retry_after: u32,
    /// milliseconds added to every data response
    #[argh(option, default = "0")]
    latency_ms: u64,
    /// share of data responses held a further --stall-ms (0..1)
    #[argh(option, default = "0.0")]
    stall_share: f64,
    /// milliseconds a stalled response is held
    #[argh(option, default = "0")]
    stall_ms: u64,
    /// share of data requests answered by resetting the connection (0..1)
    #[argh(option, default = "0.0")]
    reset_share: f64,
    /// stop after this long (e.g. 30s, 5m); default: until Ctrl-C or SIGTERM
    #[argh(option)]
    duration: Option<String>,
    /// allow binding to a non-loopback address
    #[argh(switch)]
    allow_remote: bool,
    /// also take syslog over TCP here (octet counting and LF framing)
    #[argh(option)]
    syslog_tcp: Option<String>,
    /// also take syslog over UDP here (one message per datagram)
    #[argh(option)]
    syslog_udp: Option<String>,
    /// also take syslog over TLS here (RFC 5425; needs --tls-cert and --tls-key)
    #[argh(option)]
    syslog_tls: Option<String>,
    /// also take syslog over RELP here (each message answered rsp 200 once recorded)
    #[argh(option)]
    relp: Option<String>,
    /// PEM certificate chain: the HTTP listener serves HTTPS, and --syslog-tls can be used
    #[argh(option)]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert
    #[argh(option)]
    tls_key: Option<PathBuf>,
    /// PEM CA certificates: TLS clients must present a certificate issued by one
    #[argh(option)]
    tls_client_ca: Option<PathBuf>,
}

/// Parses a listener address and applies the loopback rule.
fn listen_addr(flag: &str, v: &str, allow_remote: bool) -> Result<SocketAddr, String> {
    let addr: SocketAddr = v
        .parse()
        .map_err(|_| format!("{flag} {v:?} is not an address such as 127.0.0.1:8088"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(format!(
            "{flag} {addr} is not a loopback address; add --allow-remote to listen there"
        ));
    }
    Ok(addr)
}

fn opt_addr(
    flag: &str,
    v: &Option<String>,
    allow_remote: bool,
) -> Result<Option<SocketAddr>, String> {
    v.as_deref()
        .map(|v| listen_addr(flag, v, allow_remote))
        .transpose()
}

/// The HTTP listener: `--http`, else the default when no syslog listener is asked for.
fn http_addr(a: &Args) -> Result<Option<SocketAddr>, String> {
    let syslog = a.syslog_tcp.is_some()
        || a.syslog_udp.is_some()
        || a.syslog_tls.is_some()
        || a.relp.is_some();
    match (&a.http, syslog) {
        (Some(v), _) => listen_addr("--http", v, a.allow_remote).map(Some),
        (None, false) => listen_addr("--http", DEFAULT_HTTP, a.allow_remote).map(Some),
        (None, true) => Ok(None),
    }
}

/// Where HTTP is taken when no listener is given.
pub const DEFAULT_HTTP: &str = "127.0.0.1:8088";

fn fail(msg: &str) -> Exit {
    super::err(&format!("error: {msg}"));
    Exit::Invalid
}

pub fn run(a: Args) -> Exit {
    let addrs = (|| {
        Ok::<_, String>((
            http_addr(&a)?,
            opt_addr("--syslog-tcp", &a.syslog_tcp, a.allow_remote)?,
            opt_addr("--syslog-udp", &a.syslog_udp, a.allow_remote)?,
            opt_addr("--syslog-tls", &a.syslog_tls, a.allow_remote)?,
            opt_addr("--relp", &a.relp, a.allow_remote)?,
        ))
    })();
    let (addr, syslog_tcp, syslog_udp, syslog_tls, relp) = match addrs {
        Ok(x) => x,
        Err(e) => return fail(&e),
    };
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(cert), Some(key)) => Some(SinkTls {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: a.tls_client_ca.clone(),
        }),
        (None, None) if a.tls_client_ca.is_some() => {
            return fail("--tls-client-ca needs --tls-cert and --tls-key");
        }
        (None, None) => None,
        _ => return fail("give --tls-cert and --tls-key together"),
    };
    if syslog_tls.is_some() && tls.is_none() {
        return fail("--syslog-tls needs --tls-cert and --tls-key");
    }
    let duration = match a.duration.as_deref().map(parse_duration) {
        None => None,
        Some(Ok(d)) if d.0.is_zero() => return fail("--duration must be above 0"),
        Some(Ok(d)) => Some(d.0),
        Some(Err(e)) => return fail(&format!("--duration: {e}")),
    };
    if a.threads > sink::MAX_THREADS {
        return fail(&format!("--threads must be at most {}", sink::MAX_THREADS));
    }
    let token = match (&a.token, &a.token_env) {
        (Some(_), Some(_)) => return fail("give --token or --token-env, not both"),
        (Some(t), None) => Some(t.clone()),
        (None, Some(var)) => match std::env::var(var) {
            Ok(t) if !t.is_empty() => Some(t),
            _ => {
                return fail(&format!(
                    "--token-env: environment variable {var} is not set"
                ));
            }
        },
        (None, None) => None,
    };
    if token.as_deref() == Some("") {
        return fail("--token must not be empty");
    }
    let faults = Faults {
        share_429: a.fault_429,
        share_503: a.fault_503,
        retry_after_s: a.retry_after,
        latency_ms: a.latency_ms,
        stall_share: a.stall_share,
        stall_ms: a.stall_ms,
        reset_share: a.reset_share,
    };
    if let Err(e) = faults.validate() {
        return fail(&format!("faults: {e}"));
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
            return fail(&format!("cannot handle signals: {e}"));
        }
    }
    let handle = match sink::start(SinkConfig {
        http: addr,
        token,
        threads: a.threads,
        faults,
        hec_ack: a.hec_ack,
        syslog_tcp,
        syslog_udp,
        syslog_tls,
        relp,
        tls,
    }) {
        Ok(h) => h,
        Err(e) => return fail(&e),
    };
    if handle.http_addr().is_some() {
        super::err(&format!("sink listening on {}", handle.url()));
    }
    for (scheme, at) in [
        ("syslog+tcp", handle.syslog_tcp_addr()),
        ("syslog+udp", handle.syslog_udp_addr()),
        ("syslog+tls", handle.syslog_tls_addr()),
        ("relp", handle.relp_addr()),
    ] {
        if let Some(at) = at {
            super::err(&format!("sink listening on {scheme}://{at}"));
        }
    }
    let started = Instant::now();
    while !stop.load(Ordering::Relaxed) && duration.is_none_or(|d| started.elapsed() < d) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stats = handle.shutdown();
    super::err(&format!(
        "sink stopped after {:.1}s: {} requests, {} events ({} syslog messages)",
        started.elapsed().as_secs_f64(),
        stats.requests,
        stats.events_received,
        stats.syslog.messages()
    ));
    super::out(&serde_json::to_string_pretty(&stats).unwrap_or_else(|_| "{}".into()));
    Exit::Ok
}
