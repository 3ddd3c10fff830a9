//! End to end: `ingestbench run` with the syslog adapter against listeners in this test
//! (TCP with octet counting and with LF framing, UDP), checking that every event arrives once,
//! framed as configured, and that a closed UDP port aborts the run (exit 6). Real syslog
//! servers are in tests/syslog_peers.rs.

mod support;

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::time::Duration;

use support::{all, run_json, write_config};

fn syslog_config(url: &str, framing: &str, source: &str, total: u32) -> String {
    format!(
        "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: \"{url}\"\n  syslog: {{ framing: {framing}, format: rfc5424, app_name: ibtest, facility: local3 }}\n  batch: {{ max_events: 100 }}\nsource: {{ id: {source} }}\nworkload: {{ eps: 4000, stop: {{ total_events: {total} }} }}\n"
    )
}

/// Splits a TCP byte stream into messages by its framing.
fn split(stream: &[u8], octet: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        if octet {
            let sp = rest.iter().position(|b| *b == b' ').expect("length prefix");
            let n: usize = std::str::from_utf8(&rest[..sp])
                .unwrap()
                .parse()
                .expect("decimal length");
            out.push(String::from_utf8(rest[sp + 1..sp + 1 + n].to_vec()).unwrap());
            rest = &rest[sp + 1 + n..];
        } else {
            let nl = rest.iter().position(|b| *b == b'\n').expect("LF");
            out.push(String::from_utf8(rest[..nl].to_vec()).unwrap());
            rest = &rest[nl + 1..];
        }
    }
    out
}

/// Accepts connections until the listener times out, collecting every byte.
fn collect_tcp(l: TcpListener) -> std::thread::JoinHandle<Vec<Vec<u8>>> {
    l.set_nonblocking(false).unwrap();
    std::thread::spawn(move || {
        let mut streams = Vec::new();
        let mut handles = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        l.set_nonblocking(true).unwrap();
        while std::time::Instant::now() < deadline {
            match l.accept() {
                Ok((mut c, _)) => handles.push(std::thread::spawn(move || {
                    c.set_nonblocking(false).unwrap();
                    c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
                    let mut v = Vec::new();
                    let _ = c.read_to_end(&mut v);
                    v
                })),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
            if handles.len() >= 4 {
                break;
            }
        }
        for h in handles {
            streams.push(h.join().unwrap());
        }
        streams
    })
}

fn seqs(messages: &[String]) -> Vec<u64> {
    let mut v: Vec<u64> = messages
        .iter()
        .map(|m| {
            let at = m.find("seq").unwrap_or_else(|| panic!("no tag in {m}"));
            m[at..]
                .chars()
                .skip_while(|c| !c.is_ascii_digit())
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>()
                .parse()
                .unwrap()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn tcp_octet_counting_and_lf_deliver_every_event_once() {
    for (framing, octet, source) in [
        ("octet-counting", true, "linux.syslog"),
        ("lf", false, "firewall.traffic"),
    ] {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let got = collect_tcp(l);
        let tmp = tempfile::tempdir().unwrap();
        let cfg = write_config(
            tmp.path(),
            "c.yaml",
            &syslog_config(&format!("tcp://127.0.0.1:{port}"), framing, source, 3000),
        );
        let (o, v) = run_json(&cfg, 1, 4);
        assert_eq!(o.status.code(), Some(0), "{}", all(&o));
        assert_eq!(v["summary"]["events_accepted"], 3000);
        assert_eq!(v["summary"]["delivery"], "written");
        let streams = got.join().unwrap();
        let messages: Vec<String> = streams.iter().flat_map(|s| split(s, octet)).collect();
        assert_eq!(messages.len(), 3000, "{framing}");
        assert_eq!(
            seqs(&messages),
            (0..3000).collect::<Vec<u64>>(),
            "{framing}: every seq once"
        );
        for m in &messages {
            assert!(m.starts_with('<'), "{m}");
            if source == "firewall.traffic" {
                // A JSON pack: the event is the MSG of an RFC 5424 message from this config.
                assert!(m.starts_with("<158>1 "), "facility local3 (19*8+6): {m}");
                assert!(m.contains(" ibtest "), "{m}");
                let json = &m[m.find(" - {").unwrap() + 3..];
                serde_json::from_str::<serde_json::Value>(json)
                    .unwrap_or_else(|e| panic!("{e}: {json}"));
            }
        }
    }
}

/// An 8 MiB receive buffer (SO_RCVBUFFORCE as root, else as much as rmem_max allows), so a
/// receiver thread descheduled for a moment on a busy CI machine does not drop datagrams.
fn big_receive_buffer(s: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let size: libc::c_int = 8 << 20;
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: setsockopt on a socket this test owns, with a pointer to a local int.
        let r = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                &size as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            return;
        }
    }
}

/// Sends `total` linux.syslog events over UDP with `udp_order` and returns the datagrams as
/// received, in arrival order, and the JSON report.
fn udp_run(order: &str, total: u32) -> (Vec<String>, serde_json::Value) {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    big_receive_buffer(&rx);
    let port = rx.local_addr().unwrap().port();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        while let Ok(n) = rx.recv(&mut buf) {
            got.push(String::from_utf8(buf[..n].to_vec()).unwrap());
        }
        got
    });
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\nseed: 7\ntarget:\n  adapter: syslog\n  url: \"udp://127.0.0.1:{port}\"\n  syslog: {{ udp_order: {order} }}\n  batch: {{ max_events: 500 }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: 8000, stop: {{ total_events: {total} }} }}\n"
        ),
    );
    let (o, v) = run_json(&cfg, 1, 1);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(v["summary"]["events_accepted"], total);
    (reader.join().unwrap(), v)
}

/// The tag's seq of each message, in the order given.
fn seq_order(messages: &[String]) -> Vec<u64> {
    messages
        .iter()
        .map(|m| seqs(std::slice::from_ref(m))[0])
        .collect()
}

#[test]
fn udp_one_datagram_per_event_in_generation_order() {
    let (got, v) = udp_run("as_generated", 2000);
    // Loopback UDP with a large receive buffer at 8,000/s: nothing should be dropped.
    assert_eq!(got.len(), 2000);
    assert!(
        got.iter().all(|m| m.starts_with('<') && !m.ends_with('\n')),
        "datagrams carry bare messages"
    );
    assert_eq!(seq_order(&got), (0..2000).collect::<Vec<u64>>());
    assert!(v["summary"]["udp_send_calls"].as_u64().unwrap() > 0, "{v}");
}

/// `udp_order: by_size` (the default): each batch leaves grouped by size, longest first, in
/// GSO buffers the kernel cuts back into the very same datagrams.
#[test]
fn udp_by_size_sends_the_same_datagrams_grouped_by_size() {
    let (got, v) = udp_run("by_size", 2000);
    assert_eq!(got.len(), 2000);
    let mut seq = seq_order(&got);
    assert_ne!(
        seq,
        (0..2000).collect::<Vec<u64>>(),
        "grouped, not generation order"
    );
    seq.sort();
    assert_eq!(seq, (0..2000).collect::<Vec<u64>>(), "every event once");
    // Same seed, same events: the datagrams are exactly the ones as_generated sends, apart
    // from each event's own clock reading, the run id and the tag's send time.
    let (plain, _) = udp_run("as_generated", 2000);
    let strip = |m: &String| {
        let rest = m.split_once("Z ").map(|x| x.1).unwrap();
        let (head, tail) = rest.split_once(" run=\"").unwrap();
        let rest = format!("{head}{}", tail.split_once('"').unwrap().1);
        match rest.split_once(" sent=\"") {
            Some((a, b)) => format!("{a}{}", b.split_once('"').unwrap().1),
            None => rest,
        }
    };
    let mut a: Vec<String> = got.iter().map(strip).collect();
    let mut b: Vec<String> = plain.iter().map(strip).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let s = &v["summary"];
    if cfg!(target_os = "linux") {
        assert!(s["udp_gso_sends"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["udp_gso_refused"], 0, "{s}");
    }
}

#[test]
fn oversize_messages_are_counted_not_cut() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = rx.local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: \"udp://127.0.0.1:{port}\"\n  syslog: {{ max_message_bytes: 1KB }}\nsource: {{ id: windows.security }}\nworkload: {{ eps: 1000, stop: {{ total_events: 200 }} }}\n"
        ),
    );
    let (o, v) = run_json(&cfg, 1, 1);
    // Every event failed and none was written: the default objectives fail the run.
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    assert!(
        all(&o).contains("max_failed_events") && all(&o).contains("min_events_accepted"),
        "{}",
        all(&o)
    );
    // Windows Security events are ~4 KB: every one is over 1 KB and left out, and said so.
    let s = &v["summary"];
    assert_eq!(s["oversize_events"], 200, "{s}");
    assert_eq!(s["events_accepted"], 0, "nothing oversize is written: {s}");
    assert_eq!(s["events_failed"], 200, "{s}");
    drop(rx);
}

#[test]
fn closed_udp_port_aborts_with_exit_6() {
    let port = support::peers::free_port();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &syslog_config(
            &format!("udp://127.0.0.1:{port}"),
            "octet-counting",
            "linux.syslog",
            100_000,
        ),
    );
    let (o, _) = run_json(&cfg, 1, 1);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(all(&o).contains("port unreachable"), "{}", all(&o));
}

#[test]
fn builtin_sink_over_syslog_tcp_and_udp_verifies_delivery() {
    for transport in ["tcp", "udp"] {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = write_config(
            tmp.path(),
            "c.yaml",
            &format!(
                "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: builtin\n  syslog: {{ transport: {transport} }}\nsource: {{ id: firewall.cef.syslog }}\nworkload: {{ eps: 3000, stop: {{ total_events: 3000 }} }}\n"
            ),
        );
        let (o, v) = run_json(&cfg, 1, 2);
        assert_eq!(o.status.code(), Some(0), "{transport}: {}", all(&o));
        let ver = &v["verification"];
        assert_eq!(ver["distinct"], 3000, "{transport}: {ver}");
        assert_eq!(ver["lost_events"], 0, "{transport}: {ver}");
        assert_eq!(ver["duplicates"], 0, "{transport}: {ver}");
    }
}

#[test]
fn mutual_tls_with_a_client_certificate() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = tmp.path().join("certs");
    let ok = std::process::Command::new("scripts/make-test-certs.sh")
        .arg(&certs)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let sink = ingestbench::sink::start(ingestbench::sink::SinkConfig {
        threads: 1,
        syslog_tls: Some(any),
        tls: Some(ingestbench::sink::SinkTls {
            cert: certs.join("server.pem"),
            key: certs.join("server.key"),
            client_ca: Some(certs.join("ca.pem")),
        }),
        ..Default::default()
    })
    .unwrap();
    let port = sink.syslog_tls_addr().unwrap().port();
    let c = |f: &str| certs.join(f).display().to_string();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: \"tls://127.0.0.1:{port}\"\n  tls: {{ ca_file: \"{}\", server_name: localhost, client_cert: \"{}\", client_key: \"{}\" }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: 3000, stop: {{ total_events: 3000 }} }}\n",
            c("ca.pem"),
            c("client.pem"),
            c("client.key")
        ),
    );
    let (o, v) = run_json(&cfg, 1, 2);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let stats = sink.shutdown();
    let run = &stats.runs[v["run_id"].as_str().unwrap()];
    assert_eq!(run.distinct, 3000, "{stats:?}");
    assert_eq!(run.duplicates, 0);
    assert_eq!(stats.tls_handshake_errors, 0);
}
