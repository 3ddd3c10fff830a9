//! Syslog has no acknowledgement, so "accepted" must be earned (issue 33, cases 2 and 11):
//! `ingestbench run` over syslog TCP, TLS and UDP against peers on 127.0.0.1 that take the
//! bytes and do not keep them — plain TCP into the built-in sink's TLS listener, a listener
//! that reads one chunk and closes, one that resets (SO_LINGER 0), one that never reads and
//! closes, TLS into a peer that reads a chunk and closes, a UDP port nobody listens on — ends
//! non-zero with every event `events_unconfirmed` (by cause) and none accepted, and the
//! default `max_unconfirmed_events: 0` row in `slo` breached; a peer that reads everything
//! passes with every event accepted. A receiver that reads nothing leaves the writes blocked
//! (`send_blocked_ms`, blamed on the target) and, at the end, the send queue undrained:
//! unconfirmed (`not drained`), with the bytes the kernel still held (`bytes_unsent_at_close`).
//! Every peer here is bounded in time and stops with the test.

mod support;

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::peers::{Certs, free_port};
use support::{all, bin, run_json, write_config};

/// What a test peer does with each connection.
#[derive(Clone, Copy, Debug)]
enum Peer {
    /// Reads until the sender closes: a receiver that keeps what it is sent.
    ReadAll,
    /// Reads one chunk and closes.
    OneChunk,
    /// Reads one chunk and resets the connection (SO_LINGER 0).
    Reset,
    /// Never reads; closes after this long.
    NeverReadClose(Duration),
    /// Never reads, keeps the connection until the test ends.
    NeverRead,
}

/// A TCP listener on 127.0.0.1 running `Peer` on every connection, stopped when dropped.
struct Listener {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Listens with `peer`; `rcvbuf` sets the accepted sockets' receive buffer (a small one
/// fills at once).
fn listen(peer: Peer, rcvbuf: Option<usize>) -> Listener {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    if let Some(n) = rcvbuf {
        s.set_recv_buffer_size(n).unwrap();
    }
    s.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    s.listen(64).unwrap();
    let l: TcpListener = s.into();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let thread = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut conns = Vec::new();
        while !st.load(Ordering::Relaxed) && Instant::now() < deadline {
            match l.accept() {
                Ok((c, _)) => {
                    let st = st.clone();
                    conns.push(std::thread::spawn(move || serve(c, peer, &st, deadline)));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        for c in conns {
            let _ = c.join();
        }
    });
    Listener {
        port,
        stop,
        thread: Some(thread),
    }
}

/// One connection, as `peer` treats it, until the test stops it or the deadline.
fn serve(mut c: TcpStream, peer: Peer, stop: &AtomicBool, deadline: Instant) {
    c.set_nonblocking(false).unwrap();
    let live = || !stop.load(Ordering::Relaxed) && Instant::now() < deadline;
    let mut buf = vec![0u8; 64 * 1024];
    match peer {
        Peer::ReadAll => {
            c.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            while live() {
                match c.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                    Err(_) => break,
                }
            }
        }
        Peer::OneChunk | Peer::Reset => {
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = c.read(&mut buf);
            if matches!(peer, Peer::Reset) {
                socket2::SockRef::from(&c)
                    .set_linger(Some(Duration::ZERO))
                    .unwrap();
            }
        }
        Peer::NeverReadClose(after) => {
            let until = Instant::now() + after;
            while live() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Peer::NeverRead => {
            while live() {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// A syslog run config to `url` at `eps` for `secs` seconds (`more`: extra top-level YAML).
fn config(dir: &std::path::Path, url: &str, eps: u32, secs: u32, more: &str) -> String {
    write_config(
        dir,
        "run.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: \"{url}\"\n  syslog: {{ framing: octet-counting, format: rfc5424 }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: {eps}, stop: {{ after: {secs}s }} }}\n{more}"
        ),
    )
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The `slo` row named `name`.
fn slo<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["slo"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["name"] == name))
        .unwrap_or(&Value::Null)
}

/// A run none of whose events the peer kept: exit 3, nothing accepted, every event sent
/// unconfirmed (by the causes given), the default objective breached.
fn assert_unconfirmed(o: &std::process::Output, v: &Value, causes: &[&str]) {
    let s = &v["summary"];
    assert_eq!(o.status.code(), Some(3), "{}", all(o));
    assert!(n(&s["events_sent"]) > 0, "{s}");
    assert_eq!(n(&s["events_accepted"]), 0, "{s}");
    assert_eq!(
        n(&s["events_unconfirmed"]) + n(&s["events_failed"]),
        n(&s["events_sent"]),
        "{s}"
    );
    let by = s["events_unconfirmed_by"].as_object().expect("by cause");
    assert!(
        by.keys().all(|k| causes.contains(&k.as_str())),
        "causes {by:?}, expected among {causes:?}"
    );
    let row = slo(v, "max_unconfirmed_events");
    assert_eq!(row["default"], true, "{row}");
    assert_eq!(row["pass"], false, "{row}");
    assert_eq!(n(&v["loss"]["unconfirmed"]), n(&s["events_unconfirmed"]));
    assert!(all(o).contains("max_unconfirmed_events"), "{}", all(o));
}

const PEER_CLOSED: &[&str] = &["connection reset", "connection closed"];

#[test]
fn a_listener_that_reads_one_chunk_and_closes_confirms_nothing() {
    let l = listen(Peer::OneChunk, None);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &format!("tcp://127.0.0.1:{}", l.port),
        500,
        2,
        "",
    );
    let (o, v) = run_json(&cfg, 1, 2);
    assert_unconfirmed(&o, &v, PEER_CLOSED);
}

#[test]
fn a_listener_that_resets_confirms_nothing() {
    let l = listen(Peer::Reset, None);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &format!("tcp://127.0.0.1:{}", l.port),
        500,
        2,
        "",
    );
    let (o, v) = run_json(&cfg, 1, 2);
    assert_unconfirmed(&o, &v, &["connection reset"]);
}

/// Its kernel takes the bytes (they are acknowledged) but its application never reads them:
/// its receive window never opens again, and the close (a reset: unread data) comes after
/// the confirmation time.
#[test]
fn a_listener_that_never_reads_and_closes_confirms_nothing() {
    let l = listen(Peer::NeverReadClose(Duration::from_millis(1200)), None);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &format!("tcp://127.0.0.1:{}", l.port),
        500,
        3,
        "",
    );
    let (o, v) = run_json(&cfg, 1, 2);
    assert_unconfirmed(&o, &v, PEER_CLOSED);
}

/// The control: a peer that reads everything confirms every event, and the run passes.
#[test]
fn a_listener_that_reads_everything_confirms_every_event() {
    let l = listen(Peer::ReadAll, None);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &format!("tcp://127.0.0.1:{}", l.port),
        1000,
        2,
        "",
    );
    let (o, v) = run_json(&cfg, 1, 2);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &v["summary"];
    assert_eq!(n(&s["events_accepted"]), n(&s["events_sent"]), "{s}");
    assert!(n(&s["events_accepted"]) >= 2000, "{s}");
    assert!(s.get("events_unconfirmed").is_none(), "{s}");
    let row = slo(&v, "max_unconfirmed_events");
    assert_eq!(
        (&row["default"], &row["pass"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
}

/// `ingestbench sink --syslog-tls` with its address and the child, stopped when dropped.
struct Sink(Child, SocketAddr);

impl Drop for Sink {
    fn drop(&mut self) {
        support::stop_child(&mut self.0);
    }
}

fn tls_sink(certs: &Certs) -> Sink {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(["sink", "--syslog-tls", "127.0.0.1:0", "--threads", "1"])
        .args(["--duration", "30s"])
        .arg("--tls-cert")
        .arg(certs.pem("server"))
        .arg("--tls-key")
        .arg(certs.key("server"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ingestbench sink");
    let mut err = BufReader::new(c.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("sink listening on syslog+tls://")
        .unwrap_or_else(|| panic!("{line:?}"))
        .parse()
        .unwrap();
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    Sink(c, addr)
}

/// The issue's first example: plain syslog over TCP into a TLS listener. The sink reads the
/// bytes as a TLS record, fails and drops the connection, every time.
#[test]
fn plain_tcp_into_the_sinks_tls_listener_confirms_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let sink = tls_sink(&certs);
    let cfg = config(dir.path(), &format!("tcp://{}", sink.1), 500, 2, "");
    let (o, v) = run_json(&cfg, 1, 2);
    assert_unconfirmed(&o, &v, PEER_CLOSED);
    assert!(n(&v["summary"]["connection_resets"]) > 0, "{}", all(&o));
}

/// A TLS peer (Python's ssl) that completes the handshake, reads one chunk and closes; the
/// port it listens on is its first line. It serves connections for `life` seconds.
const TLS_PEER: &str = r#"
import socket, ssl, sys, threading, time
cert, key, life = sys.argv[1], sys.argv[2], float(sys.argv[3])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(64); s.settimeout(0.1)
print(s.getsockname()[1], flush=True)
end = time.time() + life
def serve(c):
    try:
        c.settimeout(5)
        t = ctx.wrap_socket(c, server_side=True)
        t.recv(65536)
        t.close()
    except Exception:
        c.close()
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"#;

#[test]
fn tls_into_a_peer_that_reads_a_chunk_and_closes_confirms_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let mut py = Command::new("python3")
        .args(["-c", TLS_PEER])
        .arg(certs.pem("server"))
        .arg(certs.key("server"))
        .arg("20")
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(py.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    let cfg = config(dir.path(), &format!("tls://127.0.0.1:{port}"), 500, 2, "");
    let cfg = {
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            "  syslog:",
            &format!(
                "  tls: {{ ca_file: \"{}\", server_name: localhost }}\n  syslog:",
                certs.ca().display()
            ),
        );
        write_config(dir.path(), "tls.yaml", &text)
    };
    let (o, v) = run_json(&cfg, 1, 2);
    support::stop_child(&mut py);
    assert_unconfirmed(&o, &v, PEER_CLOSED);
}

/// Case 11 and the end of the run: a receiver that reads nothing (a small receive buffer,
/// full at once) holds the writes back for the whole run — `send_blocked_ms` measures it
/// and the shortfall is the target's — and when the drain time is over its send queue has
/// not drained: what was written is unconfirmed (`not drained`), with the bytes the kernel
/// still held. (Before: `send_blocked_ms` 0.0 and every written event accepted.)
#[test]
fn a_receiver_that_reads_nothing_blocks_the_writes_and_nothing_is_confirmed() {
    let l = listen(Peer::NeverRead, Some(4096));
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &format!("tcp://127.0.0.1:{}", l.port),
        50_000,
        2,
        "",
    );
    let (o, v) = run_json(&cfg, 1, 1);
    drop(l);
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    let s = &v["summary"];
    assert_eq!(n(&s["events_accepted"]), 0, "{s}");
    assert!(n(&s["events_unconfirmed_by"]["not drained"]) > 0, "{s}");
    assert!(n(&s["bytes_unsent_at_close"]) > 0, "{s}");
    // Blocked from the first second to the end of the drain (2 s + 5 s).
    let blocked = s["send_blocked_ms"].as_f64().unwrap();
    assert!(blocked > 4000.0, "send_blocked_ms {blocked}: {s}");
    assert_eq!(s["shortfall_by"], "target", "{s}");
    assert!(all(&o).contains("unconfirmed"), "{}", all(&o));
}

/// UDP has no acknowledgement either; what it can say is ICMP's port unreachable. The
/// datagrams sent before it came back are not accepted: unconfirmed (`port unreachable`),
/// and the run stops (6). (Before: the first batch counted accepted.)
#[test]
fn udp_to_a_closed_port_accepts_nothing() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &format!("udp://127.0.0.1:{port}"), 500, 3, "");
    let (o, v) = run_json(&cfg, 1, 1);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    let s = &v["summary"];
    assert_eq!(n(&s["events_accepted"]), 0, "{s}");
    assert!(
        n(&s["events_unconfirmed_by"]["port unreachable"]) > 0,
        "{s}"
    );
}

/// The objective is a config key like the others: `validate` takes it, and a limit above
/// what was unconfirmed passes its row.
#[test]
fn max_unconfirmed_events_is_a_config_key() {
    let l = listen(Peer::OneChunk, None);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &format!("tcp://127.0.0.1:{}", l.port),
        500,
        1,
        "slo: { max_unconfirmed_events: 100000000, min_events_accepted: 0 }\n",
    );
    let val = bin().args(["validate", "-c", &cfg]).output().unwrap();
    assert_eq!(val.status.code(), Some(0), "{}", all(&val));
    let (o, v) = run_json(&cfg, 1, 1);
    let row = slo(&v, "max_unconfirmed_events");
    assert_eq!(row["default"], false, "{row}");
    assert_eq!(row["pass"], true, "{row}");
    assert!(n(&v["summary"]["events_unconfirmed"]) > 0, "{}", all(&o));
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}

/// `probe` sends its batch through the same engine and says the same: against a listener
/// that reads one chunk and closes, the framing step fails (exit 3) with the events not
/// confirmed. (Before: "5 of 5 events written", PASS.)
#[test]
fn probe_agrees_that_nothing_was_confirmed() {
    let l = listen(Peer::OneChunk, None);
    let o = bin()
        .args(["probe", "--url", &format!("tcp://127.0.0.1:{}", l.port)])
        .args(["--adapter", "syslog"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    assert!(all(&o).contains("not confirmed"), "{}", all(&o));
}
