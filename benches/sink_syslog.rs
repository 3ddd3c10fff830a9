//! Syslog throughput of the built-in sink: starts it in-process on 127.0.0.1 port 0 with a
//! syslog TCP listener (or TLS, or UDP), then blasts ~200-byte RFC 5424 messages (the real
//! `linux.syslog` pack, accounting tags on) from client threads, octet-counted (or LF-framed),
//! for a bounded number of messages. Each client keeps one cycle of 65,536 pre-rendered
//! messages and rewrites their fixed-width seqs in place before sending the cycle again, so
//! every message of the run has its own seq (the ledger's "new" path, not its duplicate one).
//! Reports messages/s on the wall clock and messages per second of sink CPU time (the
//! workers' utime+stime from /proc), the per-core figure. perf/sink-throughput.md has the
//! command and the numbers.
//!
//! Under `cargo test --all-targets` (no `--bench` argument) it only does a small smoke run.
//!
//! `cargo bench --bench sink_syslog -- [--messages N] [--conns C] [--sink-threads T] [--lf]
//!  [--tls] [--udp]`

#[path = "support/thread_cpu.rs"]
mod thread_cpu;
use thread_cpu::thread_cpu_s;

use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ingestbench::generate::{EventCtx, Generator};
use ingestbench::pack::entities::{Entities, Sizes};
use ingestbench::pack::{self, Catalog};
use ingestbench::sink::{self, SinkConfig, SinkTls};

/// Messages per pre-rendered cycle.
const CYCLE: usize = 65_536;
/// Width of the seq field (zero-padded), so it can be rewritten in place.
const SEQ_WIDTH: usize = 10;

#[derive(Clone, Copy)]
struct Opts {
    messages: u64,
    conns: usize,
    sink_threads: usize,
    lf: bool,
    tls: bool,
    udp: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        messages: 20_000_000,
        conns: 2,
        sink_threads: 1,
        lf: false,
        tls: false,
        udp: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets`: a smoke run that proves the bench works.
        o.messages = 3000;
        o.conns = 1;
        return o;
    }
    let mut i = 0;
    while i < args.len() {
        let val = || args.get(i + 1).and_then(|v| v.parse::<u64>().ok());
        match args[i].as_str() {
            "--messages" => o.messages = val().unwrap_or(o.messages).max(1),
            "--conns" => o.conns = val().map_or(o.conns, |v| v as usize).max(1),
            "--sink-threads" => o.sink_threads = val().map_or(o.sink_threads, |v| v as usize),
            "--lf" => o.lf = true,
            "--tls" => o.tls = true,
            "--udp" => o.udp = true,
            _ => {}
        }
        i += 1;
    }
    o
}

/// One cycle of framed messages for `agent`, and where each seq field starts.
fn cycle(agent: u32, n: usize, lf: bool, udp: bool) -> (Vec<u8>, Vec<(usize, usize)>) {
    let cat = Catalog::discover(None).expect("packs");
    let entities = Entities::generate(1, &Sizes::default());
    let p = pack::load_compiled(
        &cat,
        "linux.syslog",
        &semver::VersionReq::STAR,
        &entities,
        true,
    )
    .expect("linux.syslog compiles");
    let mut g = Generator::new(p.program.clone(), 11, "r-sysbench01");
    let mut ev = Vec::with_capacity(1024);
    let mut buf = Vec::with_capacity(n * 230);
    // (start of the message in buf, offset of its seq digits in buf)
    let mut seqs = Vec::with_capacity(n);
    for i in 0..n {
        ev.clear();
        g.render(
            &EventCtx {
                index: i as u64,
                time_ns: 1_767_600_000_000_000_000 + i as i64 * 1000,
                agent,
                seq: i as u64,
                sent_ms: Some(1_767_225_600_000),
            },
            &mut ev,
        );
        // Make the seq fixed-width: seq="123"] → seq="0000000123"].
        let at = memchr::memmem::find(&ev, b" seq=\"").expect("a tag") + 6;
        let end = at + ev[at..].iter().position(|&b| b == b'"').unwrap();
        let mut m = ev[..at].to_vec();
        m.extend_from_slice(format!("{:0w$}", i, w = SEQ_WIDTH).as_bytes());
        m.extend_from_slice(&ev[end..]);
        let start = buf.len();
        if !lf && !udp {
            buf.extend_from_slice(format!("{} ", m.len()).as_bytes());
        }
        let seq_at = buf.len() + at;
        buf.extend_from_slice(&m);
        if lf {
            buf.push(b'\n');
        }
        seqs.push((start, seq_at));
    }
    (buf, seqs)
}

/// Writes `seq` zero-padded into its field.
fn put_seq(buf: &mut [u8], at: usize, mut seq: u64) {
    for k in (0..SEQ_WIDTH).rev() {
        buf[at + k] = b'0' + (seq % 10) as u8;
        seq /= 10;
    }
}

/// Test certificates from scripts/make-test-certs.sh in a temporary directory.
fn certs() -> (tempfile::TempDir, SinkTls, Arc<rustls::ClientConfig>) {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let dir = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/make-test-certs.sh"
        ))
        .arg(dir.path())
        .output()
        .expect("make-test-certs.sh")
        .status
        .success();
    assert!(ok, "make-test-certs.sh failed");
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(dir.path().join("ca.pem")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let client = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tls = SinkTls {
        cert: dir.path().join("server.pem"),
        key: dir.path().join("server.key"),
        client_ca: None,
    };
    (dir, tls, Arc::new(client))
}

/// Sends `count` messages for one connection, cycling through `buf` with fresh seqs.
fn blast(
    o: Opts,
    to: SocketAddr,
    client_tls: Option<Arc<rustls::ClientConfig>>,
    mut buf: Vec<u8>,
    seqs: &[(usize, usize)],
    count: u64,
) {
    let mut w: Box<dyn Write> = if o.udp {
        let u = UdpSocket::bind("127.0.0.1:0").unwrap();
        u.connect(to).unwrap();
        Box::new(Datagrams(u, seqs.to_vec()))
    } else {
        let s = TcpStream::connect(to).expect("connect");
        s.set_nodelay(true).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
        match client_tls {
            None => Box::new(s),
            Some(cfg) => {
                let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
                let c = rustls::ClientConnection::new(cfg, name).unwrap();
                Box::new(rustls::StreamOwned::new(c, s))
            }
        }
    };
    let mut sent = 0u64;
    let mut round = 0u64;
    while sent < count {
        let n = ((count - sent) as usize).min(seqs.len());
        if round > 0 {
            for (i, &(_, at)) in seqs.iter().take(n).enumerate() {
                put_seq(&mut buf, at, round * CYCLE as u64 + i as u64);
            }
        }
        let end = seqs.get(n).map_or(buf.len(), |&(start, _)| start);
        w.write_all(&buf[..end]).expect("write");
        sent += n as u64;
        round += 1;
    }
    w.flush().unwrap();
}

/// Writes a buffer of messages as one datagram each (message starts are known).
struct Datagrams(UdpSocket, Vec<(usize, usize)>);

impl Write for Datagrams {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let starts = &self.1;
        for (i, &(start, _)) in starts.iter().enumerate() {
            if start >= buf.len() {
                break;
            }
            let end = starts
                .get(i + 1)
                .map_or(buf.len(), |&(s, _)| s)
                .min(buf.len());
            loop {
                match self.0.send(&buf[start..end]) {
                    Ok(_) => break,
                    // The loopback queue is full (ENOBUFS): give the sink a moment.
                    Err(e) if e.raw_os_error() == Some(105) => std::thread::yield_now(),
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {
    let o = opts();
    let mode = match (o.udp, o.tls, o.lf) {
        (true, _, _) => "UDP datagrams",
        (_, true, false) => "TLS, octet-counted",
        (_, true, true) => "TLS, LF-framed",
        (_, false, false) => "TCP, octet-counted",
        (_, false, true) => "TCP, LF-framed",
    };
    let per_conn = o.messages.div_ceil(o.conns as u64);
    let n = (per_conn as usize).min(CYCLE);
    eprintln!(
        "rendering {} linux.syslog messages per connection ({mode})",
        n
    );
    let cycles: Vec<_> = (0..o.conns)
        .map(|c| cycle(c as u32, n, o.lf, o.udp))
        .collect();
    let avg = cycles[0].0.len() as f64 / n as f64;
    let (_dir, tls, client_tls) = if o.tls {
        let (d, t, c) = certs();
        (Some(d), Some(t), Some(c))
    } else {
        (None, None, None)
    };
    let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let h = sink::start(SinkConfig {
        threads: o.sink_threads,
        syslog_tcp: (!o.tls && !o.udp).then_some(local),
        syslog_tls: (o.tls && !o.udp).then_some(local),
        syslog_udp: o.udp.then_some(local),
        tls,
        ..SinkConfig::default()
    })
    .expect("sink starts");
    let to = h
        .syslog_tcp_addr()
        .or(h.syslog_tls_addr())
        .or(h.syslog_udp_addr())
        .unwrap();
    let total = per_conn * o.conns as u64;
    let cpu0 = thread_cpu_s("sink-w");
    let t0 = Instant::now();
    let mut done = (0.0, 0.0);
    std::thread::scope(|s| {
        for (buf, seqs) in cycles {
            let client_tls = client_tls.clone();
            s.spawn(move || blast(o, to, client_tls, buf, &seqs, per_conn));
        }
        // Meanwhile: wait for the sink to have counted everything (or stop growing).
        let mut last = (0, Instant::now());
        loop {
            let got = h.stats().syslog.messages();
            done = (t0.elapsed().as_secs_f64(), thread_cpu_s("sink-w") - cpu0);
            if got >= total {
                break;
            }
            if got != last.0 {
                last = (got, Instant::now());
            } else if last.1.elapsed() > Duration::from_secs(3) {
                eprintln!("the count stopped at {got} of {total}");
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let (wall, cpu) = done;
    let st = h.shutdown();
    let got = st.syslog.messages();
    println!(
        "syslog {mode}: sink threads {}, {} connections, {} messages of {:.0} bytes on the wire",
        o.sink_threads, o.conns, total, avg
    );
    println!(
        "wall {:.2}s: {:.0} messages/s, {:.2} GB/s",
        wall,
        got as f64 / wall,
        st.syslog.bytes as f64 / wall / 1e9
    );
    println!(
        "sink CPU {:.2}s: {:.0} messages per CPU-second (per core)",
        cpu,
        got as f64 / cpu
    );
    let r = st.runs.values().next().cloned().unwrap_or_default();
    println!(
        "counted {got} of {total}; accounted {} distinct, {} duplicates, {} gaps; {} framing errors, {} truncated",
        r.distinct, r.duplicates, r.gaps, st.syslog.framing_errors, st.syslog.udp_truncated
    );
}
