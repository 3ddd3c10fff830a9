//! End to end against real syslog servers: `ingestbench run` with the syslog adapter sends to
//! syslog-ng (TCP with octet counting and with LF framing, UDP, TLS) and rsyslog (TCP, TLS),
//! started by tests/support/peers.rs on 127.0.0.1. From what the server wrote, per message,
//! as it parsed it: every event of the run arrived exactly once (the accounting tags cover
//! seq 0..N-1), none was a parse error, and the fields are the ones the generator renders for
//! that seq (`ingestbench gen --config` with the same seed), so nothing was cut, shifted or
//! mis-escaped on the way. Bad input: a TLS server presenting a wrong-name, expired or
//! unknown-issuer certificate, or a port nobody listens on, ends the run with exit 6 and a
//! message naming the problem.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::peers::{
    Certs, Listen, PeerProc, Record, Rsyslog, SyslogNg, WAIT, check_delivery, free_port,
};
use support::{all, bin, write_config};

const TOTAL: u64 = 3000;
const EPS: u64 = 2000;
const APP: &str = "ingestbench";

/// A run config for the syslog adapter; `ca` adds `target.tls` (for tls:// urls).
fn config(
    dir: &Path,
    url: &str,
    framing: &str,
    source: &str,
    total: u64,
    ca: Option<&Path>,
) -> String {
    let tls = ca.map_or(String::new(), |ca| {
        format!(
            "  tls: {{ ca_file: \"{}\", server_name: localhost }}\n",
            ca.display()
        )
    });
    write_config(
        dir,
        "run.yaml",
        &format!(
            "schema_version: \"1.0\"\nseed: 42\ntarget:\n  adapter: syslog\n  url: \"{url}\"\n  syslog: {{ framing: {framing}, format: rfc5424, app_name: {APP} }}\n{tls}source: {{ id: {source} }}\nworkload: {{ eps: {EPS}, stop: {{ total_events: {total} }} }}\n"
        ),
    )
}

/// `ingestbench run --config FILE --output json --threads 1`.
fn run(cfg: &str) -> (Output, Value) {
    let o = bin()
        .args(["run", "--config", cfg, "--output", "json", "--threads", "1"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o, v)
}

/// The events the run renders, by seq: `ingestbench gen` with the run's config (same seed,
/// same pack), tagged as run `r-gen`, agent 0 (one thread: event index = seq).
fn expected_events(cfg: &str, n: u64) -> Vec<String> {
    let o = bin()
        .args([
            "gen",
            "--config",
            cfg,
            "-n",
            &n.to_string(),
            "--format",
            "raw",
            "--tags",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let v: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(v.len() as u64, n);
    v
}

/// An RFC 5424 line split into its fields: (pri, host, app, procid, msgid, sd, msg), nil
/// values as empty strings. Enough for the generator's own lines.
fn split_5424(line: &str) -> (u8, String, String, String, String, String, String) {
    let rest = line
        .strip_prefix('<')
        .unwrap_or_else(|| panic!("no PRI: {line}"));
    let (pri, rest) = rest.split_once(">1 ").unwrap();
    let mut it = rest.splitn(6, ' ');
    let _ts = it.next().unwrap();
    let nil = |s: &str| {
        if s == "-" {
            String::new()
        } else {
            s.to_string()
        }
    };
    let host = nil(it.next().unwrap());
    let app = nil(it.next().unwrap());
    let procid = nil(it.next().unwrap());
    let msgid = nil(it.next().unwrap());
    let rest = it.next().unwrap_or("");
    // SD: `-` or one or more `[...]` with `\"`, `\\` and `\]` escaped inside.
    let (sd, msg) = if let Some(r) = rest.strip_prefix('-') {
        (String::new(), r)
    } else {
        let b = rest.as_bytes();
        let mut i = 0;
        while i < b.len() && b[i] == b'[' {
            let mut in_quotes = false;
            i += 1;
            while i < b.len() {
                match b[i] {
                    b'\\' if in_quotes => i += 1,
                    b'"' => in_quotes = !in_quotes,
                    b']' if !in_quotes => break,
                    _ => {}
                }
                i += 1;
            }
            i += 1;
        }
        (rest[..i].to_string(), &rest[i..])
    };
    let msg = msg.strip_prefix(' ').unwrap_or(msg).to_string();
    (pri.parse().unwrap(), host, app, procid, msgid, sd, msg)
}

/// The seq of a record's (single) tag of `run`.
fn seq_of(r: &Record, run: &str) -> u64 {
    r.acct_tags()
        .into_iter()
        .find(|t| t.0 == run)
        .map(|t| t.2)
        .unwrap_or_else(|| panic!("no tag of {run}: {r:?}"))
}

/// A JSON event with its time and the run id taken out, for comparing a received event with
/// the generator's.
fn comparable_json(text: &str, what: &str) -> Value {
    let mut v: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{what}: MSG is not JSON ({e}): {text}"));
    let o = v
        .as_object_mut()
        .unwrap_or_else(|| panic!("{what}: not an object: {text}"));
    o.remove("@timestamp");
    if let Some(acct) = o.get_mut("ingestbench").and_then(Value::as_object_mut) {
        acct.remove("run");
        // A run's tags carry their send time; `gen` (deterministic) writes none.
        if let Some(sent) = acct.remove("sent") {
            assert!(sent.as_u64().is_some_and(recent_ms), "{what}: sent {sent}");
        }
    }
    v
}

/// Whether `ms` (since the epoch) is within a day of now: a send time this run could have.
fn recent_ms(ms: u64) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    now.abs_diff(ms) < 86_400_000
}

/// An SD element with its tag's ` sent="MS"` taken out (checked to be a recent time), so it
/// compares with `gen`'s.
fn without_sent(sd: &str, what: &str) -> String {
    let Some(i) = sd.find(" sent=\"") else {
        return sd.to_string();
    };
    let rest = &sd[i + 7..];
    let end = rest
        .find('"')
        .unwrap_or_else(|| panic!("{what}: unterminated sent"));
    let ms: u64 = rest[..end]
        .parse()
        .unwrap_or_else(|e| panic!("{what}: sent {:?}: {e}", &rest[..end]));
    assert!(recent_ms(ms), "{what}: sent {ms}");
    format!("{}{}", &sd[..i], &rest[end + 1..])
}

/// Runs to `peer`, then checks the report, the delivery and every message's fields.
/// Runs `cfg`, checks every record the peer wrote, and returns the run's JSON report.
fn run_and_check(peer: &PeerProc, cfg: &str, source: &str) -> serde_json::Value {
    let (o, v) = run(cfg);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\npeer log:\n{}",
        all(&o),
        peer.log_text()
    );
    let s = &v["summary"];
    assert_eq!(s["events_accepted"], TOTAL, "{s}");
    assert_eq!(s["events_failed"], 0, "{s}");
    let run_id = v["run_id"]
        .as_str()
        .expect("run_id in the report")
        .to_string();

    let records = peer.wait_records(TOTAL as usize, WAIT);
    check_delivery(&records, &run_id, TOTAL).unwrap_or_else(|e| {
        panic!(
            "{source} via {cfg}: {e}\nfirst records: {:#?}\npeer log:\n{}",
            &records[..records.len().min(3)],
            peer.log_text()
        )
    });
    let errs = peer.framing_errors();
    assert!(errs.is_empty(), "peer reported: {errs:#?}");

    let expected = expected_events(cfg, TOTAL);
    let mut programs: BTreeMap<String, usize> = BTreeMap::new();
    for r in &records {
        let seq = seq_of(r, &run_id);
        let want = &expected[seq as usize];
        let what = format!("{source} seq {seq}: got {r:?}\nwant {want}");
        assert!(!r.date.is_empty(), "{what}");
        assert!(!r.host.is_empty() && !r.host.contains(' '), "{what}");
        *programs.entry(r.program.clone()).or_default() += 1;
        if want.starts_with('<') {
            // A syslog-native pack: the message is the pack's own RFC 5424 line.
            let (pri, host, app, procid, msgid, sd, msg) = split_5424(want);
            assert_eq!(r.pri(), Some(pri), "PRI: {what}");
            assert_eq!(r.host, host, "HOSTNAME: {what}");
            assert_eq!(r.program, app, "APP-NAME: {what}");
            assert_eq!(r.pid, procid, "PROCID: {what}");
            assert_eq!(r.msgid, msgid, "MSGID: {what}");
            assert_eq!(
                without_sent(&r.sdata, &what),
                sd.replace("r-gen", &run_id),
                "SD: {what}"
            );
            assert_eq!(r.msg, msg, "MSG: {what}");
        } else {
            // Any other pack: the event is the MSG of a header from the config.
            assert_eq!(r.program, APP, "APP-NAME: {what}");
            assert!(
                !r.pid.is_empty() && r.pid.bytes().all(|b| b.is_ascii_graphic()),
                "PROCID: {what}"
            );
            assert!(!r.msgid.contains(' '), "MSGID: {what}");
            assert!(r.pri().is_some_and(|p| p <= 191), "PRI: {what}");
            assert_eq!(
                comparable_json(&r.msg, &what),
                comparable_json(want, "generator"),
                "MSG: {what}"
            );
        }
    }
    eprintln!(
        "{source}: {} messages, programs {programs:?}",
        records.len()
    );
    v
}

/// Which real server receives.
#[derive(Clone, Copy)]
enum Server {
    SyslogNg,
    Rsyslog,
}

/// Which of its listeners the run sends to.
#[derive(Clone, Copy, PartialEq)]
enum Via {
    /// TCP, octet counting.
    Tcp,
    /// TCP, LF framing.
    TcpLf,
    Udp,
    /// TLS, octet counting, verified against the lab CA.
    Tls,
}

/// Starts `server` with the one listener `via` in a temp dir, sends TOTAL events of `source`
/// to it and checks every record (`run_and_check`); returns the run's report, or `None` when
/// the server is not installed (outside CI).
fn deliver(server: Server, via: Via, source: &str) -> Option<Value> {
    let tmp = tempfile::tempdir().unwrap();
    let certs = (via == Via::Tls).then(|| Certs::make(tmp.path()));
    let listen = Listen {
        tcp: via == Via::Tcp,
        tcp_lf: via == Via::TcpLf,
        udp: via == Via::Udp,
        tls: certs.as_ref().map(|c| c.tls("server")),
    };
    let (ports, peer) = match server {
        Server::SyslogNg => SyslogNg::start(tmp.path(), listen).map(|p| (p.ports, p.proc))?,
        Server::Rsyslog => Rsyslog::start(tmp.path(), listen).map(|p| (p.ports, p.proc))?,
    };
    let (scheme, port, framing) = match via {
        Via::Tcp => ("tcp", ports.tcp, "octet-counting"),
        Via::TcpLf => ("tcp", ports.tcp_lf, "lf"),
        Via::Udp => ("udp", ports.udp, "octet-counting"),
        Via::Tls => ("tls", ports.tls, "octet-counting"),
    };
    let url = format!("{scheme}://127.0.0.1:{}", port.unwrap());
    let ca = certs.as_ref().map(|c| c.ca());
    let cfg = config(tmp.path(), &url, framing, source, TOTAL, ca.as_deref());
    Some(run_and_check(&peer, &cfg, source))
}

#[test]
fn syslog_ng_tcp_octet_counting() {
    deliver(Server::SyslogNg, Via::Tcp, "linux.syslog");
}

#[test]
fn syslog_ng_tcp_octet_counting_json_pack() {
    deliver(Server::SyslogNg, Via::Tcp, "firewall.traffic");
}

#[test]
fn syslog_ng_tcp_lf_framing() {
    deliver(Server::SyslogNg, Via::TcpLf, "firewall.traffic");
}

#[test]
fn syslog_ng_udp() {
    let Some(v) = deliver(Server::SyslogNg, Via::Udp, "linux.syslog") else {
        return;
    };
    // Sent grouped by size in GSO buffers (the default udp_order), cut apart by the kernel:
    // syslog-ng parsed each datagram as its own message above.
    if cfg!(target_os = "linux") {
        let s = &v["summary"];
        assert!(s["udp_gso_sends"].as_u64().unwrap() > 0, "{s}");
    }
}

#[test]
fn syslog_ng_tls() {
    deliver(Server::SyslogNg, Via::Tls, "linux.syslog");
}

#[test]
fn rsyslog_tcp_octet_counting_json_pack() {
    deliver(Server::Rsyslog, Via::Tcp, "firewall.traffic");
}

#[test]
fn rsyslog_tcp_lf_framing() {
    deliver(Server::Rsyslog, Via::TcpLf, "linux.syslog");
}

#[test]
fn rsyslog_tls() {
    deliver(Server::Rsyslog, Via::Tls, "linux.syslog");
}

/// A TLS syslog server presenting a bad certificate: the run ends with exit 6 and names why.
#[test]
fn tls_server_with_bad_certificate_aborts_with_exit_6() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    for (cert, words) in [
        ("wrong-name", "name mismatch"),
        ("expired", "expired"),
        ("rogue", "unknown issuer"),
    ] {
        let dir = tmp.path().join(cert);
        std::fs::create_dir(&dir).unwrap();
        let Some(ng) = SyslogNg::start(
            &dir,
            Listen {
                tls: Some(certs.tls(cert)),
                ..Listen::default()
            },
        ) else {
            return;
        };
        let url = format!("tls://127.0.0.1:{}", ng.ports.tls.unwrap());
        let cfg = config(
            &dir,
            &url,
            "octet-counting",
            "linux.syslog",
            100,
            Some(&certs.ca()),
        );
        let (o, _) = run(&cfg);
        let text = all(&o);
        assert_eq!(o.status.code(), Some(6), "{cert}: {text}");
        assert!(
            text.to_lowercase().contains(words),
            "{cert}: stderr should say {words:?}: {text}"
        );
        assert!(ng.records().is_empty(), "{cert}: nothing may arrive");
    }
}

/// Nothing listens: exit 6, and the message says the connection was refused.
#[test]
fn refused_port_aborts_with_exit_6() {
    let tmp = tempfile::tempdir().unwrap();
    for scheme in ["tcp", "tls"] {
        let url = format!("{scheme}://127.0.0.1:{}", free_port());
        let cfg = config(
            tmp.path(),
            &url,
            "octet-counting",
            "linux.syslog",
            100,
            None,
        );
        let (o, _) = run(&cfg);
        let text = all(&o);
        assert_eq!(o.status.code(), Some(6), "{url}: {text}");
        assert!(text.to_lowercase().contains("refused"), "{url}: {text}");
    }
}
