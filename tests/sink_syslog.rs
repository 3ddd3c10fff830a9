//! The built-in sink's syslog listeners (TCP, UDP, TLS) and HTTPS, end to end: started
//! in-process on 127.0.0.1 port 0 and driven with plain std sockets and a rustls client
//! written here (not the engine's), with certificates made by scripts/make-test-certs.sh in a
//! temporary directory. Syslog has no responses, so every test waits for the counts it
//! expects with a deadline; every socket has a timeout; every sink is stopped.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ingestbench::sink::{self, SinkConfig, SinkHandle, SinkStats, SinkTls};

const TIMEOUT: Duration = Duration::from_secs(10);

fn local0() -> Option<SocketAddr> {
    Some("127.0.0.1:0".parse().unwrap())
}

fn start(cfg: SinkConfig) -> SinkHandle {
    sink::start(SinkConfig {
        threads: if cfg.threads == 0 { 2 } else { cfg.threads },
        ..cfg
    })
    .expect("sink starts")
}

fn syslog_sink() -> SinkHandle {
    start(SinkConfig {
        syslog_tcp: local0(),
        syslog_udp: local0(),
        ..SinkConfig::default()
    })
}

/// Waits until `ok(stats)` holds; panics with the last stats after the deadline.
fn wait_for(s: &SinkHandle, what: &str, ok: impl Fn(&SinkStats) -> bool) -> SinkStats {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let st = s.stats();
        if ok(&st) {
            return st;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {st:#?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// An RFC 5424 message with an accounting tag in its SD.
fn msg(run: &str, agent: u32, seq: u64) -> String {
    format!(
        "<86>1 2026-01-05T09:00:00.000001Z web-02 sshd 4242 - [ingestbench@32473 run=\"{run}\" agent=\"{agent}\" seq=\"{seq}\"] Accepted publickey for alice from 10.1.2.3 port 50022 ssh2"
    )
}

fn octet(m: &str) -> Vec<u8> {
    format!("{} {m}", m.len()).into_bytes()
}

fn lf(m: &str) -> Vec<u8> {
    format!("{m}\n").into_bytes()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, TIMEOUT).expect("connect");
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.set_write_timeout(Some(TIMEOUT)).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

fn agent(st: &SinkStats, run: &str, agent: u32) -> (u64, u64, u64, u64) {
    let a = st
        .runs
        .get(run)
        .and_then(|r| r.agents.get(&agent.to_string()))
        .cloned()
        .unwrap_or_default();
    (a.received, a.distinct, a.duplicates, a.gaps)
}

#[test]
fn tcp_octet_counted_in_one_byte_writes_and_in_bulk() {
    let s = syslog_sink();
    let addr = s.syslog_tcp_addr().expect("syslog tcp bound");
    assert_ne!(addr.port(), 0);
    let mut stream = Vec::new();
    for seq in 0..20 {
        stream.extend(octet(&msg("r-oct", 1, seq)));
    }
    let mut c = connect(addr);
    for b in &stream {
        c.write_all(std::slice::from_ref(b)).unwrap();
    }
    // Many messages per write, on the same connection.
    let mut bulk = Vec::new();
    for seq in 20..2020 {
        bulk.extend(octet(&msg("r-oct", 1, seq)));
    }
    c.write_all(&bulk).unwrap();
    let st = wait_for(&s, "2020 octet-counted messages", |st| {
        st.syslog.messages_tcp == 2020 && agent(st, "r-oct", 1).0 == 2020
    });
    assert_eq!(st.syslog.octet_counted_frames, 2020);
    assert_eq!(st.syslog.lf_frames, 0);
    assert_eq!(st.syslog.framing_errors, 0);
    assert_eq!(st.syslog.bytes, (stream.len() + bulk.len()) as u64);
    assert_eq!(agent(&st, "r-oct", 1), (2020, 2020, 0, 0));
    let fin = s.shutdown();
    assert_eq!(fin.events_received, 2020);
    assert_eq!(fin.requests, 0);
}

/// A sender counts a syslog message as sent once written: what it wrote before closing is
/// stored even when the sink is stopped at once after (it reads each connection to its end
/// first), not dropped with the socket.
#[test]
fn what_senders_wrote_before_closing_is_counted_when_the_sink_stops_at_once() {
    // One sink thread for sixteen senders: it is behind when they close.
    let s = start(SinkConfig {
        syslog_tcp: local0(),
        threads: 1,
        ..SinkConfig::default()
    });
    let addr = s.syslog_tcp_addr().expect("syslog tcp bound");
    let senders: Vec<_> = (0..16u32)
        .map(|a| {
            std::thread::spawn(move || {
                let mut bulk = Vec::new();
                for seq in 0..20_000 {
                    bulk.extend(octet(&msg("r-drain", a, seq)));
                }
                let mut c = connect(addr);
                c.write_all(&bulk).unwrap();
            })
        })
        .collect();
    for t in senders {
        t.join().unwrap();
    }
    // Several MB per connection may still wait in the socket buffers here.
    let fin = s.shutdown();
    assert_eq!(fin.events_received, 320_000, "{:#?}", fin.syslog);
    for a in 0..16 {
        assert_eq!(agent(&fin, "r-drain", a), (20_000, 20_000, 0, 0));
    }
}

#[test]
fn tcp_lf_frames_in_odd_splits() {
    let s = syslog_sink();
    let mut stream = Vec::new();
    for seq in 0..500 {
        stream.extend(lf(&msg("r-lf", 2, seq)));
    }
    let mut c = connect(s.syslog_tcp_addr().unwrap());
    // Pieces of 1, 2, 3, ... 97 bytes, cutting messages anywhere.
    let (mut at, mut k) = (0, 1);
    while at < stream.len() {
        let end = (at + k).min(stream.len());
        c.write_all(&stream[at..end]).unwrap();
        at = end;
        k = k % 97 + 1;
    }
    // The last message without its LF, then close: still a message.
    c.write_all(msg("r-lf", 2, 500).as_bytes()).unwrap();
    drop(c);
    let st = wait_for(&s, "501 LF messages", |st| {
        st.syslog.lf_frames == 501 && agent(st, "r-lf", 2).0 == 501
    });
    assert_eq!(st.syslog.messages_tcp, 501);
    assert_eq!(st.syslog.framing_errors, 0);
    assert_eq!(agent(&st, "r-lf", 2), (501, 501, 0, 0));
    assert_eq!(st.events_received, 501);
}

#[test]
fn mixed_framings_on_separate_connections_concurrently() {
    let s = syslog_sink();
    let addr = s.syslog_tcp_addr().unwrap();
    std::thread::scope(|sc| {
        for (agent_id, octet_framing) in [(10u32, true), (11, false), (12, true), (13, false)] {
            sc.spawn(move || {
                let mut c = connect(addr);
                let mut buf = Vec::new();
                for seq in 0..3000 {
                    let m = msg("r-mix", agent_id, seq);
                    buf.extend(if octet_framing { octet(&m) } else { lf(&m) });
                    if buf.len() > 7000 {
                        c.write_all(&buf).unwrap();
                        buf.clear();
                    }
                }
                c.write_all(&buf).unwrap();
            });
        }
    });
    let st = wait_for(&s, "12000 mixed messages", |st| {
        st.syslog.messages_tcp == 12_000 && st.runs.get("r-mix").map(|r| r.received) == Some(12_000)
    });
    assert_eq!(st.syslog.octet_counted_frames, 6000);
    assert_eq!(st.syslog.lf_frames, 6000);
    let r = &st.runs["r-mix"];
    assert_eq!((r.distinct, r.duplicates, r.gaps), (12_000, 0, 0));
    assert_eq!(r.agents.len(), 4);
    assert_eq!(st.connections_opened, 4);
}

#[test]
fn duplicates_and_gaps_share_one_ledger_across_tcp_udp_and_http() {
    let s = syslog_sink();
    // seqs 0..100 over TCP; 90..110 again over UDP (10 duplicates); 115..120 over HTTP:
    // 110..115 never arrive (5 gaps).
    let mut c = connect(s.syslog_tcp_addr().unwrap());
    for seq in 0..100 {
        c.write_all(&octet(&msg("r-led", 7, seq))).unwrap();
    }
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    for seq in 90..110 {
        u.send_to(
            lf(&msg("r-led", 7, seq)).as_slice(),
            s.syslog_udp_addr().unwrap(),
        )
        .unwrap();
    }
    let body: Vec<String> = (115..120)
        .map(|seq| format!(r#"{{"ingestbench":{{"run":"r-led","agent":7,"seq":{seq}}}}}"#))
        .collect();
    let body = format!("[{}]", body.join(","));
    let mut h = connect(s.addr());
    h.write_all(
        format!(
            "POST /ingest HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let mut resp = [0u8; 512];
    let n = h.read(&mut resp).unwrap();
    assert!(resp[..n].starts_with(b"HTTP/1.1 200"));
    // The ledger counts each message as it is parsed; the listeners' totals are added at the
    // end of a worker's round, so wait for both.
    let st = wait_for(&s, "125 tagged events, counted", |st| {
        agent(st, "r-led", 7).0 == 125 && st.events_received == 125
    });
    assert_eq!(agent(&st, "r-led", 7), (125, 115, 10, 5));
    assert_eq!(st.syslog.messages_tcp, 100);
    assert_eq!(st.syslog.messages_udp, 20);
    assert_eq!(st.events_received, 125);
}

#[test]
fn udp_datagrams_are_counted_and_truncation_and_empties_too() {
    let s = start(SinkConfig {
        syslog_udp: local0(),
        threads: 2,
        ..SinkConfig::default()
    });
    let to = s.syslog_udp_addr().unwrap();
    assert_ne!(to.port(), 0);
    // Several senders: the SO_REUSEPORT group spreads them over both workers. Bursts of 50,
    // each counted before the next, so that even a small receive buffer (no privilege to
    // force 8 MiB) never drops one: this test is about counting.
    let mut sent_bytes = 0u64;
    let mut sent = 0u64;
    for agent_id in 0..4u32 {
        let u = UdpSocket::bind("127.0.0.1:0").unwrap();
        for seq in 0..250 {
            let m = msg("r-udp", agent_id, seq);
            sent_bytes += m.len() as u64;
            u.send_to(m.as_bytes(), to).unwrap();
            sent += 1;
            if sent.is_multiple_of(50) {
                wait_for(&s, "a burst of datagrams", |st| {
                    st.syslog.messages_udp == sent
                });
            }
        }
    }
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut big = msg("r-udp", 9, 0).into_bytes();
    big.resize(40_000, b'x');
    u.send_to(&big, to).unwrap();
    u.send_to(b"", to).unwrap();
    u.send_to(b"\n", to).unwrap();
    let st = wait_for(&s, "1001 datagrams and 2 empties", |st| {
        st.syslog.messages_udp == 1001 && st.syslog.framing_errors == 2
    });
    assert_eq!(st.syslog.udp_truncated, 1);
    // The truncated one counts with what fit (32 KiB), its tag at the front.
    assert_eq!(agent(&st, "r-udp", 9), (1, 1, 0, 0));
    assert_eq!(st.syslog.bytes, sent_bytes + 32 * 1024 + 1);
    let r = &st.runs["r-udp"];
    assert_eq!(
        (r.received, r.distinct, r.duplicates, r.gaps),
        (1001, 1001, 0, 0)
    );
    assert_eq!(st.events_received, 1001);
    assert_eq!(st.syslog.messages_tcp + st.syslog.messages_tls, 0);
}

#[test]
fn garbage_is_counted_as_framing_errors_and_the_stream_recovers() {
    let s = syslog_sink();
    let addr = s.syslog_tcp_addr().unwrap();
    let mut c = connect(addr);
    let mut stream = Vec::new();
    stream.extend(lf(&msg("r-gb", 0, 0)));
    stream.extend(b"this is not syslog\n"); // garbage: skipped to its LF
    stream.extend(b"12x <13>bad length\n"); // bad MSG-LEN: skipped to its LF
    stream.extend(b"2000000 "); // oversize: skipped by its length
    stream.extend(std::iter::repeat_n(b'z', 2_000_000));
    stream.extend(octet(&msg("r-gb", 0, 1)));
    stream.extend(lf(&msg("r-gb", 0, 2)));
    c.write_all(&stream).unwrap();
    let st = wait_for(&s, "3 messages and 3 framing errors", |st| {
        st.syslog.messages_tcp == 3 && st.syslog.framing_errors == 3
    });
    assert_eq!(agent(&st, "r-gb", 0), (3, 3, 0, 0));
    // Random bytes on other connections: no panic, the sink goes on.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..8 {
        let mut junk = Vec::with_capacity(50_000);
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            junk.push(b"<>0123456789 \n\r\0ab\xff"[(x % 17) as usize]);
        }
        let mut g = connect(addr);
        let _ = g.write_all(&junk);
    }
    let mut c2 = connect(addr);
    c2.write_all(&octet(&msg("r-gb", 0, 3))).unwrap();
    // Every connection counted: the junk ones may be accepted after the last one's message.
    let st = wait_for(&s, "the message after the junk, every connection", |st| {
        agent(st, "r-gb", 0).1 == 4 && st.connections_opened == 10
    });
    assert!(st.syslog.framing_errors > 3);
    assert_eq!(st.connections_opened, 10);
}

#[test]
fn syslog_tls_needs_a_certificate() {
    let e = sink::start(SinkConfig {
        syslog_tls: local0(),
        ..SinkConfig::default()
    })
    .err()
    .expect("refused");
    assert!(e.contains("TLS"), "{e}");
}

// ---- TLS ----

struct Certs {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Certs {
    fn make() -> Certs {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-test-certs.sh");
        let out = Command::new("bash")
            .arg(script)
            .arg(dir.path())
            .output()
            .expect("run make-test-certs.sh");
        assert!(out.status.success(), "{:?}", out);
        let path = dir.path().to_path_buf();
        Certs { _dir: dir, path }
    }

    fn p(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    fn server(&self, client_ca: bool) -> SinkTls {
        SinkTls {
            cert: self.p("server.pem"),
            key: self.p("server.key"),
            client_ca: client_ca.then(|| self.p("ca.pem")),
        }
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client config trusting `ca`, optionally presenting `client` (name of .pem/.key).
fn client_config(certs: &Certs, ca: &str, client: Option<&str>) -> Arc<rustls::ClientConfig> {
    client_config_with(
        certs,
        ca,
        client,
        &[&rustls::version::TLS13, &rustls::version::TLS12],
    )
}

fn client_config_with(
    certs: &Certs,
    ca: &str,
    client: Option<&str>,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(certs.p(ca)).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let b = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    let cfg = match client {
        None => b.with_no_client_auth(),
        Some(name) => {
            let chain: Vec<CertificateDer<'static>> =
                CertificateDer::pem_file_iter(certs.p(&format!("{name}.pem")))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
            let key = PrivateKeyDer::from_pem_file(certs.p(&format!("{name}.key"))).unwrap();
            b.with_client_auth_cert(chain, key).unwrap()
        }
    };
    Arc::new(cfg)
}

type TlsStream = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// Connects and completes the handshake (or returns its error).
fn tls_connect(addr: SocketAddr, cfg: Arc<rustls::ClientConfig>) -> std::io::Result<TlsStream> {
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(cfg, name).unwrap();
    let mut s = rustls::StreamOwned::new(conn, connect(addr));
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock)?;
    }
    Ok(s)
}

#[test]
fn syslog_over_tls_both_framings_and_odd_writes() {
    let certs = Certs::make();
    let s = start(SinkConfig {
        syslog_tls: local0(),
        tls: Some(certs.server(false)),
        ..SinkConfig::default()
    });
    let addr = s.syslog_tls_addr().expect("syslog tls bound");
    assert!(s.url().starts_with("https://"));
    let mut a = tls_connect(addr, client_config(&certs, "ca.pem", None)).expect("handshake");
    let mut stream = Vec::new();
    for seq in 0..300 {
        stream.extend(octet(&msg("r-tls", 1, seq)));
    }
    // Odd writes: each becomes its own TLS record.
    let (mut at, mut k) = (0, 1);
    while at < stream.len() {
        let end = (at + k).min(stream.len());
        a.write_all(&stream[at..end]).unwrap();
        at = end;
        k = k * 3 % 1000 + 1;
    }
    a.flush().unwrap();
    // LF framing, many messages per record, on a second connection (TLS 1.2 this time).
    let tls12 = client_config_with(&certs, "ca.pem", None, &[&rustls::version::TLS12]);
    let mut b = tls_connect(addr, tls12).expect("TLS 1.2 handshake");
    assert_eq!(
        b.conn.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_2)
    );
    let mut lines = Vec::new();
    for seq in 0..700 {
        lines.extend(lf(&msg("r-tls", 2, seq)));
    }
    b.write_all(&lines).unwrap();
    b.conn.send_close_notify();
    b.flush().unwrap();
    let st = wait_for(&s, "1000 TLS messages", |st| {
        st.syslog.messages_tls == 1000 && st.runs.get("r-tls").map(|r| r.received) == Some(1000)
    });
    assert_eq!(st.syslog.octet_counted_frames, 300);
    assert_eq!(st.syslog.lf_frames, 700);
    assert_eq!(st.syslog.messages_tcp, 0);
    assert_eq!(st.syslog.bytes, (stream.len() + lines.len()) as u64);
    assert_eq!(agent(&st, "r-tls", 1), (300, 300, 0, 0));
    assert_eq!(agent(&st, "r-tls", 2), (700, 700, 0, 0));
    assert_eq!(st.tls_handshake_errors, 0);
    drop(a);
    s.shutdown();
}

#[test]
fn a_tls_sender_that_never_reads_and_closes_at_once_loses_nothing() {
    // A syslog client never reads. Anything the sink sent it after the handshake (TLS 1.3
    // session tickets) would sit unread, its close would be a reset, and the sink's kernel
    // would drop the last messages the sink had not read yet.
    let certs = Certs::make();
    let s = start(SinkConfig {
        syslog_tls: local0(),
        tls: Some(certs.server(false)),
        threads: 1,
        ..SinkConfig::default()
    });
    let mut stream = Vec::new();
    for seq in 0..60_000 {
        stream.extend(octet(&msg("r-rst", 5, seq)));
    }
    for _ in 0..2 {
        let mut c = tls_connect(
            s.syslog_tls_addr().unwrap(),
            client_config(&certs, "ca.pem", None),
        )
        .expect("handshake");
        assert_eq!(
            c.conn.protocol_version(),
            Some(rustls::ProtocolVersion::TLSv1_3)
        );
        c.write_all(&stream).unwrap();
        c.flush().unwrap();
        // Dropped: no close_notify, nothing read.
    }
    let st = wait_for(&s, "120000 TLS messages", |st| {
        st.syslog.messages_tls == 120_000
    });
    assert_eq!(agent(&st, "r-rst", 5), (120_000, 60_000, 60_000, 0));
}

/// Reads one HTTP response (Content-Length bodies only): (status, body). `buf` keeps what was
/// read past it (a pipelined response).
fn read_response(r: &mut impl Read, buf: &mut Vec<u8>) -> (u16, String) {
    let mut chunk = [0u8; 4096];
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut resp = httparse::Response::new(&mut headers);
        if let Ok(httparse::Status::Complete(n)) = resp.parse(buf) {
            let len: usize = resp
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .map_or(0, |h| {
                    std::str::from_utf8(h.value).unwrap().parse().unwrap()
                });
            if buf.len() >= n + len {
                let code = resp.code.unwrap();
                let body = String::from_utf8_lossy(&buf[n..n + len]).into_owned();
                buf.drain(..n + len);
                return (code, body);
            }
        }
        let k = r.read(&mut chunk).expect("read response");
        assert!(k > 0, "connection closed before a response");
        buf.extend_from_slice(&chunk[..k]);
    }
}

#[test]
fn https_ingest_and_stats_over_tls_and_plain_http_is_refused() {
    let certs = Certs::make();
    let s = start(SinkConfig {
        tls: Some(certs.server(false)),
        ..SinkConfig::default()
    });
    assert_eq!(s.url(), format!("https://{}", s.addr()));
    let mut c = tls_connect(s.addr(), client_config(&certs, "ca.pem", None)).expect("handshake");
    let mut rbuf = Vec::new();
    assert_eq!(c.conn.alpn_protocol(), None);
    let body: Vec<String> = (0..50)
        .map(|seq| {
            format!(r#"{{"n":{seq},"ingestbench":{{"run":"r-https","agent":3,"seq":{seq}}}}}"#)
        })
        .collect();
    let body = format!("[{}]", body.join(","));
    // Two keep-alive requests, the second pipelined with the first.
    let req = format!(
        "POST /ingest HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    c.write_all(format!("{req}GET /stats HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
        .unwrap();
    let (code, text) = read_response(&mut c, &mut rbuf);
    assert_eq!((code, text.as_str()), (200, r#"{"accepted":50}"#));
    let (code, text) = read_response(&mut c, &mut rbuf);
    assert_eq!(code, 200);
    let st: SinkStats = serde_json::from_str(&text).unwrap();
    assert_eq!(agent(&st, "r-https", 3), (50, 50, 0, 0));
    // A large body in many records.
    let big: Vec<String> = (50..20_050)
        .map(|seq| format!(r#"{{"ingestbench":{{"run":"r-https","agent":3,"seq":{seq}}}}}"#))
        .collect();
    let big = format!("[{}]", big.join(","));
    c.write_all(
        format!(
            "POST /ingest HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{big}",
            big.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let (code, text) = read_response(&mut c, &mut rbuf);
    assert_eq!((code, text.as_str()), (200, r#"{"accepted":20000}"#));
    // Plain HTTP on the HTTPS port: a failed handshake, counted, not an answer.
    let mut p = connect(s.addr());
    p.write_all(b"GET /stats HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut junk = Vec::new();
    let _ = p.read_to_end(&mut junk);
    assert!(!junk.starts_with(b"HTTP/"));
    let st = wait_for(&s, "the plain-HTTP handshake error", |st| {
        st.tls_handshake_errors == 1
    });
    assert_eq!(agent(&st, "r-https", 3), (20_050, 20_050, 0, 0));
    assert_eq!(st.status_count(200), 3);
}

#[test]
fn wrong_ca_and_missing_client_certificates_fail_the_handshake_and_are_counted() {
    let certs = Certs::make();
    // Mutual TLS: clients need a certificate from the test CA.
    let s = start(SinkConfig {
        syslog_tls: local0(),
        tls: Some(certs.server(true)),
        ..SinkConfig::default()
    });
    let tls_addr = s.syslog_tls_addr().unwrap();
    // 1. The client trusts another CA (rogue.pem): it rejects the sink's certificate.
    let e = tls_connect(tls_addr, client_config(&certs, "rogue.pem", Some("client")))
        .expect_err("the handshake fails");
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
    wait_for(&s, "1 handshake error", |st| st.tls_handshake_errors == 1);
    // 2. No client certificate: the sink refuses it.
    let r = tls_connect(tls_addr, client_config(&certs, "ca.pem", None)).and_then(|mut c| {
        // TLS 1.3: the client learns of the refusal on its next read.
        c.write_all(&octet(&msg("r-mtls", 0, 99)))?;
        c.flush()?;
        let mut b = [0u8; 16];
        c.read(&mut b)
    });
    assert!(r.is_err(), "{r:?}");
    wait_for(&s, "2 handshake errors", |st| st.tls_handshake_errors == 2);
    // 3. A client certificate from the CA: accepted, on syslog and on HTTPS alike.
    let mut ok = tls_connect(tls_addr, client_config(&certs, "ca.pem", Some("client")))
        .expect("mutual TLS handshake");
    ok.write_all(&octet(&msg("r-mtls", 0, 0))).unwrap();
    ok.flush().unwrap();
    let mut h = tls_connect(s.addr(), client_config(&certs, "ca.pem", Some("client")))
        .expect("HTTPS with a client certificate");
    h.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut h, &mut Vec::new()).0, 200);
    let st = wait_for(&s, "the mTLS message", |st| st.syslog.messages_tls == 1);
    assert_eq!(agent(&st, "r-mtls", 0), (1, 1, 0, 0));
    assert_eq!(st.tls_handshake_errors, 2);
    // A connect-and-close without a byte is not a handshake error.
    drop(connect(tls_addr));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(s.shutdown().tls_handshake_errors, 2);
}

#[test]
fn bad_certificate_files_are_refused_at_start() {
    let certs = Certs::make();
    let mut t = certs.server(false);
    t.key = certs.p("missing.key");
    let e = sink::start(SinkConfig {
        tls: Some(t),
        ..SinkConfig::default()
    })
    .err()
    .expect("refused");
    assert!(e.contains("missing.key"), "{e}");
    let mut t = certs.server(false);
    t.key = certs.p("client.key");
    let e = sink::start(SinkConfig {
        tls: Some(t),
        ..SinkConfig::default()
    })
    .err()
    .expect("a key that does not match");
    assert!(e.contains("--tls-cert"), "{e}");
}

// ---- the sink command ----

/// A child process, killed by its PID if the test fails before it exits.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        support::stop_child(&mut self.0);
    }
}

#[test]
fn the_sink_command_prints_its_listeners_and_counts_syslog() {
    let certs = Certs::make();
    let mut p = Proc(
        Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .args([
                "sink",
                "--http",
                "127.0.0.1:0",
                "--syslog-tcp",
                "127.0.0.1:0",
                "--syslog-udp",
                "127.0.0.1:0",
                "--syslog-tls",
                "127.0.0.1:0",
                "--threads",
                "1",
                "--duration",
                "2s",
            ])
            .arg("--tls-cert")
            .arg(certs.p("server.pem"))
            .arg("--tls-key")
            .arg(certs.p("server.key"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ingestbench sink"),
    );
    let mut err = BufReader::new(p.0.stderr.take().unwrap());
    let mut addrs = Vec::new();
    for scheme in ["https", "syslog+tcp", "syslog+udp", "syslog+tls"] {
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        let rest = line
            .trim()
            .strip_prefix(&format!("sink listening on {scheme}://"))
            .unwrap_or_else(|| panic!("expected {scheme}: {line:?}"));
        let a: SocketAddr = rest.parse().unwrap();
        assert!(a.ip().is_loopback() && a.port() != 0);
        addrs.push(a);
    }
    connect(addrs[1])
        .write_all(&octet(&msg("r-cmd", 0, 0)))
        .unwrap();
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .send_to(msg("r-cmd", 0, 1).as_bytes(), addrs[2])
        .unwrap();
    let mut t = tls_connect(addrs[3], client_config(&certs, "ca.pem", None)).unwrap();
    t.write_all(&lf(&msg("r-cmd", 0, 2))).unwrap();
    t.flush().unwrap();
    let status = support::wait_exit(&mut p.0, Duration::from_secs(15), "sink --duration 2s");
    assert!(status.success());
    let mut out = String::new();
    p.0.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let st: SinkStats = serde_json::from_str(&out).expect("stats JSON on stdout");
    assert_eq!(
        (
            st.syslog.messages_tcp,
            st.syslog.messages_udp,
            st.syslog.messages_tls
        ),
        (1, 1, 1)
    );
    assert_eq!(agent(&st, "r-cmd", 0), (3, 3, 0, 0));
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    for k in [
        "messages_tcp",
        "messages_udp",
        "messages_tls",
        "bytes",
        "framing_errors",
        "octet_counted_frames",
        "lf_frames",
        "udp_truncated",
    ] {
        assert!(json["syslog"][k].is_u64(), "syslog.{k} in {out}");
    }
    assert!(json["tls_handshake_errors"].is_u64());
}

#[test]
fn the_sink_command_with_syslog_tcp_prints_http_first_and_exits_with_stats() {
    let mut p = Proc(
        Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .args([
                "sink",
                "--http",
                "127.0.0.1:0",
                "--syslog-tcp",
                "127.0.0.1:0",
            ])
            .args(["--duration", "2s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ingestbench sink"),
    );
    let mut err = BufReader::new(p.0.stderr.take().unwrap());
    let mut first = String::new();
    let mut second = String::new();
    err.read_line(&mut first).unwrap();
    err.read_line(&mut second).unwrap();
    assert!(
        first.starts_with("sink listening on http://127.0.0.1:"),
        "{first:?}"
    );
    let at: SocketAddr = second
        .trim()
        .strip_prefix("sink listening on syslog+tcp://")
        .unwrap_or_else(|| panic!("{second:?}"))
        .parse()
        .unwrap();
    let mut c = connect(at);
    for seq in 0..10 {
        c.write_all(&lf(&msg("r-cmd2", 1, seq))).unwrap();
    }
    drop(c);
    let status = support::wait_exit(&mut p.0, Duration::from_secs(15), "sink --duration 2s");
    assert!(status.success());
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("(10 syslog messages)"), "{rest}");
    let mut out = String::new();
    p.0.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let st: SinkStats = serde_json::from_str(&out).expect("stats JSON on stdout");
    assert_eq!((st.syslog.messages_tcp, st.syslog.lf_frames), (10, 10));
    assert_eq!(agent(&st, "r-cmd2", 1), (10, 10, 0, 0));
}

#[test]
fn the_sink_command_checks_its_syslog_and_tls_flags() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .arg("sink")
            .args(args)
            .args(["--duration", "1s"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--syslog-udp", "0.0.0.0:0"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--syslog-udp") && err.contains("--allow-remote"),
        "{err}"
    );
    let (code, err) = run(&["--syslog-tls", "127.0.0.1:0"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--tls-cert"), "{err}");
    let (code, err) = run(&["--tls-cert", "/nonexistent.pem"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--tls-key"), "{err}");
    let (code, err) = run(&["--syslog-tcp", "nope"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--syslog-tcp"), "{err}");
}
