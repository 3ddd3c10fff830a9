//! The peer harness (tests/support/peers.rs) tested on its own, without ingestbench's syslog
//! adapter or TLS client: hand-made RFC 5424 messages sent over plain sockets, `logger` and a
//! small rustls client must reach syslog-ng, rsyslog and nginx and come back parsed with their
//! fields intact; a wrong framing or a message that is not RFC 5424 must show up as such, so
//! that the real tests (syslog_peers.rs, https_nginx.rs) cannot pass on a peer that quietly
//! mangles what it receives.

mod support;

use std::io::{Read, Write};
use std::time::Duration;

use support::peers::{
    Certs, HttpsFront, Listen, Record, Rsyslog, SyslogNg, WAIT, check_delivery, lf_framed,
    octet_counted, rfc5424, send_tcp, send_tls, send_udp, tls_connect,
};

/// Three messages of run `run` with agent 7, seqs 0..3: odd characters in the SD value
/// (escaped quote, backslash and bracket), a nil MSGID, a UTF-8 MSG.
fn messages(run: &str) -> Vec<String> {
    (0..3)
        .map(|i| {
            let sd = format!(
                "[ingestbench@32473 run=\"{run}\" agent=\"7\" seq=\"{i}\"][x@32473 v=\"a\\\"b\\\\c\\]d\"]"
            );
            let msgid = if i == 1 { "" } else { "ID47" };
            rfc5424(134, "web-01", "ingestbench", "4242", msgid, &sd, &format!("hello {i} – ünïcode"))
        })
        .collect()
}

fn check_fields(records: &[Record], run: &str) {
    check_delivery(records, run, 3).unwrap_or_else(|e| panic!("{e}\n{records:#?}"));
    for r in records {
        assert_eq!(r.pri(), Some(134), "{r:?}");
        assert_eq!(r.host, "web-01", "{r:?}");
        assert_eq!(r.program, "ingestbench", "{r:?}");
        assert_eq!(r.pid, "4242", "{r:?}");
        assert!(r.msgid == "ID47" || r.msgid.is_empty(), "{r:?}");
        assert!(
            r.msg.starts_with("hello ") && r.msg.ends_with("ünïcode"),
            "{r:?}"
        );
        assert!(r.date.starts_with("2026-01-02T03:04:05"), "{r:?}");
        assert!(
            r.sdata.contains(r#"[x@32473 v="a\"b\\c\]d"]"#),
            "SD escapes kept: {}",
            r.sdata
        );
    }
    assert_eq!(records.iter().filter(|r| r.msgid.is_empty()).count(), 1);
}

#[test]
fn syslog_ng_parses_octet_counted_tcp_lf_tcp_and_udp() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(ng) = SyslogNg::start(
        tmp.path(),
        Listen {
            tcp: true,
            tcp_lf: true,
            udp: true,
            ..Listen::default()
        },
    ) else {
        return;
    };
    send_tcp(ng.ports.tcp.unwrap(), &octet_counted(&messages("r-octet")));
    send_tcp(ng.ports.tcp_lf.unwrap(), &lf_framed(&messages("r-lf")));
    send_udp(ng.ports.udp.unwrap(), &messages("r-udp"));
    let all = ng.wait_records(9, WAIT);
    for (run, input) in [("r-octet", "tcp"), ("r-lf", "tcp_lf"), ("r-udp", "udp")] {
        let recs: Vec<Record> = all.iter().filter(|r| r.input == input).cloned().collect();
        check_fields(&recs, run);
    }
    assert!(ng.framing_errors().is_empty(), "{}", ng.log_text());
}

#[test]
fn syslog_ng_takes_logger_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(ng) = SyslogNg::start(
        tmp.path(),
        Listen {
            tcp: true,
            udp: true,
            ..Listen::default()
        },
    ) else {
        return;
    };
    if std::process::Command::new("logger")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipping: no logger (util-linux) here");
        return;
    }
    for (transport, port) in [
        ("--tcp", ng.ports.tcp.unwrap()),
        ("--udp", ng.ports.udp.unwrap()),
    ] {
        let mut args = vec![
            "--rfc5424",
            transport,
            "--server",
            "127.0.0.1",
            "-t",
            "loggerapp",
            "-p",
            "local0.warning",
            "--msgid",
            "LM1",
            "--sd-id",
            "ingestbench@32473",
            "--sd-param",
            "run=\"r-logger\"",
            "--sd-param",
            "agent=\"0\"",
        ];
        let seq = if transport == "--tcp" {
            args.push("--octet-count");
            "seq=\"0\""
        } else {
            "seq=\"1\""
        };
        let port = port.to_string();
        args.extend(["--sd-param", seq, "--port", &port, "from logger"]);
        let o = std::process::Command::new("logger")
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "logger {args:?}: {o:?}");
    }
    let recs = ng.wait_records(2, WAIT);
    check_delivery(&recs, "r-logger", 2).unwrap_or_else(|e| panic!("{e}\n{recs:#?}"));
    for r in &recs {
        assert_eq!(r.pri(), Some(16 * 8 + 4), "{r:?}");
        assert_eq!(r.program, "loggerapp", "{r:?}");
        assert_eq!(r.msgid, "LM1", "{r:?}");
        assert_eq!(r.msg, "from logger", "{r:?}");
    }
}

#[test]
fn syslog_ng_shows_wrong_framing_and_unparsable_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(ng) = SyslogNg::start(
        tmp.path(),
        Listen {
            tcp: true,
            tcp_lf: true,
            ..Listen::default()
        },
    ) else {
        return;
    };
    // LF framing into the octet-counting listener: refused at the frame header, nothing stored.
    send_tcp(ng.ports.tcp.unwrap(), &lf_framed(&messages("r-wrong")));
    // A bad timestamp on the LF listener: stored as a parse error.
    send_tcp(
        ng.ports.tcp_lf.unwrap(),
        b"<134>1 yesterday web-01 app - - - broken\n",
    );
    let recs = ng.wait_records(1, WAIT);
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert!(recs[0].parse_error(), "{:?}", recs[0]);
    assert!(check_delivery(&recs, "r-wrong", 3).is_err());
    let errs = ng.framing_errors();
    assert!(
        errs.iter().any(|l| l.contains("Invalid frame header")),
        "{}",
        ng.log_text()
    );
}

#[test]
fn syslog_ng_tls_takes_a_verified_client() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    let Some(ng) = SyslogNg::start(
        tmp.path(),
        Listen {
            tls: Some(certs.tls("server")),
            ..Listen::default()
        },
    ) else {
        return;
    };
    let port = ng.ports.tls.unwrap();
    send_tls(
        port,
        &certs.ca(),
        "localhost",
        &octet_counted(&messages("r-tls")),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", ng.log_text()));
    let recs = ng.wait_records(3, WAIT);
    assert!(recs.iter().all(|r| r.input == "tls"), "{recs:#?}");
    check_fields(&recs, "r-tls");
}

/// The certificates the bad-input tests hand to a TLS peer are refused by a plain rustls
/// client for the reason the test expects (so the run's exit-6 tests test the run).
#[test]
fn tls_peer_with_bad_certificates_is_refused_by_rustls() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    for (name, expect) in [
        ("wrong-name", "NotValidForName"),
        ("expired", "Expired"),
        ("rogue", "UnknownIssuer"),
    ] {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let Some(ng) = SyslogNg::start(
            &dir,
            Listen {
                tls: Some(certs.tls(name)),
                ..Listen::default()
            },
        ) else {
            return;
        };
        let err = match tls_connect(ng.ports.tls.unwrap(), &certs.ca(), "localhost") {
            Ok(_) => panic!("{name}: the handshake succeeded"),
            Err(e) => e,
        };
        assert!(
            err.replace([' ', '_'], "")
                .to_lowercase()
                .contains(&expect.to_lowercase()),
            "{name}: {err}"
        );
    }
}

#[test]
fn rsyslog_parses_tcp_both_framings_udp_and_tls() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    let Some(rs) = Rsyslog::start(
        tmp.path(),
        Listen {
            tcp: true,
            udp: true,
            tls: Some(certs.tls("server")),
            ..Listen::default()
        },
    ) else {
        return;
    };
    send_tcp(rs.ports.tcp.unwrap(), &octet_counted(&messages("r-octet")));
    send_tcp(rs.ports.tcp.unwrap(), &lf_framed(&messages("r-lf")));
    send_udp(rs.ports.udp.unwrap(), &messages("r-udp"));
    send_tls(
        rs.ports.tls.unwrap(),
        &certs.ca(),
        "localhost",
        &octet_counted(&messages("r-tls")),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", rs.log_text()));
    let all = rs.wait_records(12, WAIT);
    for run in ["r-octet", "r-lf", "r-udp", "r-tls"] {
        let recs: Vec<Record> = all
            .iter()
            .filter(|r| r.acct_tags().iter().any(|t| t.0 == run))
            .cloned()
            .collect();
        check_fields(&recs, run);
    }
    let tls_in: Vec<&Record> = all.iter().filter(|r| r.input == "tls").collect();
    assert_eq!(tls_in.len(), 3, "{all:#?}");
}

#[test]
fn rsyslog_shows_messages_that_are_not_rfc5424() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(rs) = Rsyslog::start(
        tmp.path(),
        Listen {
            tcp: true,
            ..Listen::default()
        },
    ) else {
        return;
    };
    send_tcp(
        rs.ports.tcp.unwrap(),
        b"<134>Jan  2 03:04:05 web-01 app[1]: a BSD message\n",
    );
    let recs = rs.wait_records(1, WAIT);
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert!(recs[0].parse_error(), "{:?}", recs[0]);
}

#[test]
fn nginx_tls_front_proxies_to_the_sink() {
    let Some(front) = HttpsFront::start("server") else {
        return;
    };
    let (ng, sink, certs) = (&front.nginx, &front.sink, &front.certs);
    let mut tls = tls_connect(ng.port, &certs.ca(), "localhost")
        .unwrap_or_else(|e| panic!("{e}\n{}", ng.log_text()));
    // Two requests on one keep-alive connection.
    for batch in 0..2u64 {
        let body: Vec<String> = (0..5u64)
            .map(|i| {
                format!(
                    r#"{{"n":{i},"ingestbench":{{"run":"r-https","agent":0,"seq":{}}}}}"#,
                    batch * 5 + i
                )
            })
            .collect();
        let body = format!("[{}]", body.join(","));
        let req = format!(
            "POST /ingest HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        tls.write_all(req.as_bytes()).unwrap();
        let mut resp = Vec::new();
        let mut buf = [0u8; 4096];
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !String::from_utf8_lossy(&resp).contains("\"accepted\"") {
            assert!(
                std::time::Instant::now() < deadline,
                "no response: {resp:?}"
            );
            let n = tls.read(&mut buf).unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&resp));
            resp.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&resp);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    }
    let st = sink.stats();
    assert_eq!(st["runs"]["r-https"]["distinct"], 10, "{st}");
}
