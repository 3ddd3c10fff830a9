//! The built-in sink: a collector that speaks lphc (JSON batches) and Splunk HEC over HTTP or
//! HTTPS, and syslog over TCP, UDP and TLS; counts what it receives per run and agent from
//! the accounting tags (lost and duplicated events), and injects faults on demand (HTTP). It
//! is the default target of a run (`target.url: builtin` starts it in-process on port 0) and
//! the `ingestbench sink` command.
//!
//! Threads: one acceptor thread owns the TCP listeners and hands each new connection to the
//! next worker, round robin (a channel plus the worker's `mio::Waker`). Each of the N workers
//! owns a `mio::Poll`, its connections and their buffers, and serves them to completion: reads
//! until `WouldBlock`, parses and answers every complete request, writes until `WouldBlock`.
//! Round robin rather than SO_REUSEPORT because a load generator often opens few
//! connections, and the kernel's hash would pile them on one thread. Syslog UDP is the
//! exception: there is no connection to deal, so each worker owns one socket of a
//! SO_REUSEPORT group.
//!
//! Module map: `http` (request heads, chunked bodies, response bytes), `scan` (counting JSON
//! values 64 bytes at a time), `route` (endpoints, auth, faults, accounting), `fault` (shares
//! and the rng), `syslog` (RFC 6587 framing), `stream` (a syslog TCP/TLS connection), `udp`
//! (datagrams, recvmmsg), `tls` (rustls configs, the plain-or-TLS `Io`), `record` (tags into
//! the ledger), `seqset` + `stats` (the ledger and `SinkStats`), `worker` (sockets, timers).

mod fault;
pub mod fuzz;
mod http;
mod record;
mod relp;
mod resend;
mod route;
pub mod scan;
mod seqset;
mod stats;
mod stream;
mod syslog;
mod tls;
mod udp;
mod worker;

pub use fault::Faults;
pub use http::{MAX_BODY, MAX_HEAD, MAX_HEADERS};
pub use stats::{AgentStats, LagSummary, RunStats, SinkStats, SyslogStats};
pub use tls::SinkTls;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use mio::{Poll, Token, Waker};

/// How to run the sink.
#[derive(Clone, Debug)]
pub struct SinkConfig {
    /// Where HTTP is taken; port 0 picks a free port (see `SinkHandle::addr`). `None`: no
    /// HTTP listener (a syslog-only sink; its stats only through the handle).
    pub http: Option<SocketAddr>,
    /// When set, data requests must present it (X-API-Key, Bearer, Splunk, or Basic password).
    pub token: Option<String>,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    pub faults: Faults,
    /// HEC indexer acknowledgement: a channel is required and each success carries an ackId.
    pub hec_ack: bool,
    /// Syslog over TCP (octet counting or LF framing, per frame).
    pub syslog_tcp: Option<SocketAddr>,
    /// Syslog over UDP (one message per datagram).
    pub syslog_udp: Option<SocketAddr>,
    /// Syslog over TLS (RFC 5425); needs `tls`.
    pub syslog_tls: Option<SocketAddr>,
    /// Syslog over RELP (each message answered `rsp 200` once recorded).
    pub relp: Option<SocketAddr>,
    /// Certificate and key: the HTTP listener then serves HTTPS only, and `syslog_tls` can
    /// be used. With `client_ca`, clients must present a certificate issued by it.
    pub tls: Option<SinkTls>,
}

impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig {
            http: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            token: None,
            threads: 0,
            faults: Faults::default(),
            hec_ack: false,
            syslog_tcp: None,
            syslog_udp: None,
            syslog_tls: None,
            relp: None,
            tls: None,
        }
    }
}

/// Most worker threads.
pub const MAX_THREADS: usize = 1024;

/// A value alone on its cache lines (workers lock their own totals once per request).
#[repr(align(128))]
pub(crate) struct Padded<T>(pub T);

/// State shared by the acceptor, the workers and the handle.
pub(crate) struct Shared {
    stop: AtomicBool,
    token: Option<Box<[u8]>>,
    hec_ack: bool,
    faults: Mutex<Faults>,
    faults_gen: Padded<AtomicU64>,
    connections: Padded<AtomicU64>,
    totals: Vec<Padded<Mutex<stats::Totals>>>,
    ledger: stats::Ledger,
    /// Per HEC channel: the next ackId.
    channels: Mutex<HashMap<Box<[u8]>, u64>>,
    /// Requests refused with 429/503, by their first tag: the hash of their wire body, so a
    /// resend can be checked byte for byte.
    pub(crate) refused: resend::Refused,
    /// TLS server configs: HTTPS (ALPN http/1.1) and syslog over TLS.
    http_tls: Option<Arc<rustls::ServerConfig>>,
    syslog_tls: Option<Arc<rustls::ServerConfig>>,
}

impl Shared {
    pub(crate) fn stats(&self) -> SinkStats {
        let totals: Vec<&Mutex<stats::Totals>> = self.totals.iter().map(|p| &p.0).collect();
        let mut s = stats::merge(
            &totals,
            &self.ledger,
            self.connections.0.load(Ordering::Relaxed),
        );
        (s.resent_identical, s.resent_different) = self.refused.counts();
        s
    }

    pub(crate) fn faults(&self) -> Faults {
        self.faults.lock().map(|f| *f).unwrap_or_default()
    }

    pub(crate) fn faults_gen(&self) -> u64 {
        self.faults_gen.0.load(Ordering::Acquire)
    }

    pub(crate) fn set_faults(&self, f: Faults) {
        if let Ok(mut g) = self.faults.lock() {
            *g = f;
        }
        self.faults_gen.0.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn next_ack_id(&self, channel: &[u8]) -> u64 {
        let Ok(mut m) = self.channels.lock() else {
            return 0;
        };
        if let Some(n) = m.get_mut(channel) {
            *n += 1;
            return *n - 1;
        }
        if m.len() >= 65_536 {
            return 0;
        }
        m.insert(channel.into(), 1);
        0
    }

    pub(crate) fn acks_issued(&self, channel: &[u8]) -> u64 {
        self.channels
            .lock()
            .ok()
            .and_then(|m| m.get(channel).copied())
            .unwrap_or(0)
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// A running sink. Dropping it stops it too; `shutdown` also returns the final stats.
pub struct SinkHandle {
    addr: Option<SocketAddr>,
    https: bool,
    syslog_tcp: Option<SocketAddr>,
    syslog_udp: Option<SocketAddr>,
    syslog_tls: Option<SocketAddr>,
    relp: Option<SocketAddr>,
    shared: Arc<Shared>,
    wakers: Vec<Arc<Waker>>,
    threads: Vec<JoinHandle<()>>,
}

impl SinkHandle {
    /// The address HTTP is taken at (the real port when 0 was asked for); for a sink without
    /// an HTTP listener (`http_addr` is `None`), the unspecified address 0.0.0.0:0.
    pub fn addr(&self) -> SocketAddr {
        self.addr
            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// The HTTP listener's address, when the sink has one.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// `http://ADDR`, or `https://ADDR` with TLS: the base URL to point a client at.
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr())
    }

    /// The HTTP listener serves HTTPS.
    pub fn is_https(&self) -> bool {
        self.https
    }

    /// The syslog TCP listener's address (the real port when 0 was asked for).
    pub fn syslog_tcp_addr(&self) -> Option<SocketAddr> {
        self.syslog_tcp
    }

    /// The syslog UDP socket's address.
    pub fn syslog_udp_addr(&self) -> Option<SocketAddr> {
        self.syslog_udp
    }

    /// The syslog TLS listener's address.
    pub fn syslog_tls_addr(&self) -> Option<SocketAddr> {
        self.syslog_tls
    }

    /// The RELP listener's address.
    pub fn relp_addr(&self) -> Option<SocketAddr> {
        self.relp
    }

    /// Everything counted so far.
    pub fn stats(&self) -> SinkStats {
        self.shared.stats()
    }

    pub fn faults(&self) -> Faults {
        self.shared.faults()
    }

    /// Replaces the faults; workers pick them up on their next request.
    pub fn set_faults(&self, f: Faults) {
        self.shared.set_faults(f);
    }

    /// A handle on the faults alone, for another thread (a run's fault timeline).
    pub fn fault_knob(&self) -> FaultKnob {
        FaultKnob(self.shared.clone())
    }

    /// Stops every thread, waits for them, and returns the final stats.
    pub fn shutdown(mut self) -> SinkStats {
        self.stop_and_join();
        self.shared.stats()
    }

    fn stop_and_join(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        for w in &self.wakers {
            let _ = w.wake();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The faults of a running sink, readable and settable from any thread.
#[derive(Clone)]
pub struct FaultKnob(Arc<Shared>);

impl FaultKnob {
    pub fn get(&self) -> Faults {
        self.0.faults()
    }

    pub fn set(&self, f: Faults) {
        self.0.set_faults(f);
    }
}

impl Drop for SinkHandle {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

const WAKE: Token = Token(0);

/// Starts the sink: binds, spawns the acceptor and the workers, and returns at once.
pub fn start(cfg: SinkConfig) -> Result<SinkHandle, String> {
    let threads = if cfg.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        cfg.threads
    };
    if threads > MAX_THREADS {
        return Err(format!("threads must be at most {MAX_THREADS}"));
    }
    cfg.faults.validate()?;
    if cfg.http.is_none()
        && cfg.syslog_tcp.is_none()
        && cfg.syslog_udp.is_none()
        && cfg.syslog_tls.is_none()
    {
        return Err("nothing to listen on: give an HTTP or a syslog listener".into());
    }
    if cfg.syslog_tls.is_some() && cfg.tls.is_none() {
        return Err("syslog over TLS needs a certificate and key (tls)".into());
    }
    let (http_tls, syslog_tls) = match &cfg.tls {
        None => (None, None),
        Some(t) => (
            Some(tls::server_config(t, &[b"http/1.1"], true)?),
            Some(tls::server_config(t, &[], false)?),
        ),
    };
    let mut listeners = Vec::new();
    let addr = match cfg.http {
        Some(at) => {
            let listener = bind(at)?;
            let bound = local_addr(&listener)?;
            listeners.push((listener, worker::Kind::Http));
            Some(bound)
        }
        None => None,
    };
    let mut stream_addr = |at: Option<SocketAddr>, kind| -> Result<Option<SocketAddr>, String> {
        let Some(at) = at else { return Ok(None) };
        let l = bind(at)?;
        let bound = local_addr(&l)?;
        listeners.push((l, kind));
        Ok(Some(bound))
    };
    let syslog_tcp = stream_addr(cfg.syslog_tcp, worker::Kind::SyslogTcp)?;
    let syslog_tls_addr = stream_addr(cfg.syslog_tls, worker::Kind::SyslogTls)?;
    let relp = stream_addr(cfg.relp, worker::Kind::Relp)?;
    let mut udp_socks = match cfg.syslog_udp {
        None => Vec::new(),
        Some(at) => udp::bind_group(at, threads)?,
    };
    let syslog_udp = match udp_socks.first() {
        None => None,
        Some(s) => Some(
            s.local_addr()
                .map_err(|e| format!("cannot read the bound address: {e}"))?,
        ),
    };
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        token: cfg.token.map(|t| t.into_bytes().into_boxed_slice()),
        hec_ack: cfg.hec_ack,
        faults: Mutex::new(cfg.faults),
        faults_gen: Padded(AtomicU64::new(0)),
        connections: Padded(AtomicU64::new(0)),
        totals: (0..threads)
            .map(|_| Padded(Mutex::new(stats::Totals::default())))
            .collect(),
        ledger: stats::Ledger::default(),
        channels: Mutex::new(HashMap::new()),
        refused: resend::Refused::default(),
        http_tls,
        syslog_tls,
    });
    let mut handle = SinkHandle {
        addr,
        https: cfg.tls.is_some(),
        syslog_tcp,
        syslog_udp,
        syslog_tls: syslog_tls_addr,
        relp,
        shared: shared.clone(),
        wakers: Vec::new(),
        threads: Vec::new(),
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9, |d| d.as_nanos() as u64);
    let mut inboxes = Vec::with_capacity(threads);
    for i in 0..threads {
        let poll = Poll::new().map_err(|e| format!("cannot create a poll: {e}"))?;
        let waker = Arc::new(
            Waker::new(poll.registry(), WAKE).map_err(|e| format!("cannot create a waker: {e}"))?,
        );
        let (tx, rx) = crossbeam_channel::unbounded();
        let w = worker::Worker::new(
            i,
            poll,
            rx,
            shared.clone(),
            seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            udp_socks.pop(),
        )
        .map_err(|e| format!("cannot register the syslog UDP socket: {e}"))?;
        let t = std::thread::Builder::new()
            .name(format!("sink-w{i}"))
            .spawn(move || w.run())
            .map_err(|e| format!("cannot start a sink thread: {e}"))?;
        handle.threads.push(t);
        handle.wakers.push(waker.clone());
        inboxes.push((tx, waker));
    }
    let poll = Poll::new().map_err(|e| format!("cannot create a poll: {e}"))?;
    let waker = Arc::new(
        Waker::new(poll.registry(), WAKE).map_err(|e| format!("cannot create a waker: {e}"))?,
    );
    handle.wakers.push(waker);
    let sh = shared.clone();
    let t = std::thread::Builder::new()
        .name("sink-accept".into())
        .spawn(move || worker::accept_loop(poll, listeners, sh, inboxes))
        .map_err(|e| format!("cannot start the sink acceptor: {e}"))?;
    handle.threads.push(t);
    Ok(handle)
}

fn local_addr(l: &mio::net::TcpListener) -> Result<SocketAddr, String> {
    l.local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))
}

fn bind(addr: SocketAddr) -> Result<mio::net::TcpListener, String> {
    use socket2::{Domain, Socket, Type};
    let err = |what: &str, e: std::io::Error| format!("cannot {what} {addr}: {e}");
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)
        .map_err(|e| err("open a socket for", e))?;
    s.set_reuse_address(true)
        .map_err(|e| err("set SO_REUSEADDR on", e))?;
    s.bind(&addr.into()).map_err(|e| err("bind", e))?;
    s.listen(1024).map_err(|e| err("listen on", e))?;
    s.set_nonblocking(true)
        .map_err(|e| err("set non-blocking on", e))?;
    Ok(mio::net::TcpListener::from_std(s.into()))
}
