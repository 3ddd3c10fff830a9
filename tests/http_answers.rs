//! What counts as "accepted" over HTTP, end to end (issue 33, cases 1, 6, 19 and 7): the real
//! binary against a scripted collector on 127.0.0.1 (`support::answerer`). An HEC 2xx counts
//! only with code 0 (8 and 9 are resent under the retry limits, any other code fails, counted
//! by code); a `_bulk` answer is read item by item whatever `errors` says; a 2xx the engine
//! cannot read (a length that lies, a broken chunked body, a close mid-body, a body over the
//! cap, an HEC answer without a code) is never resent, counted apart and fails the run; a
//! response read never takes more memory than its cap; a target that never answers, or speaks
//! TLS where the url says http:// (or the reverse), ends the run with exit 6 naming why, at any
//! run length. `probe` says what the run does. Every run stops by itself within seconds.

mod support;

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::answerer::{Answerer, Reply};
use support::{all, bin, run_json, write_config};

/// 200 events in batches of 50 (4 batches) at 400 eps, one thread and one connection.
fn config(url: &str, adapter: &str, extra: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nseed: 5\ntarget:\n  url: \"{url}\"\n  adapter: {adapter}\n  batch: {{ max_events: 50 }}\n  retry: {{ max_attempts: 3, max_time: 20s }}\n{extra}source: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 400, stop: {{ total_events: 200 }} }}\n"
    )
}

fn run(yaml: &str) -> (Option<i32>, Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "c.yaml", yaml);
    let (o, v) = run_json(&cfg, 1, 1);
    assert!(!v.is_null(), "no JSON report: {}", all(&o));
    (o.status.code(), v, all(&o))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The SLO rows that failed, by name.
fn failed_slo(v: &Value) -> Vec<String> {
    v["slo"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["pass"] == false)
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

fn hec(body: &'static str) -> Answerer {
    Answerer::start(move |_, _| Reply::json(200, body))
}

fn hec_url(a: &Answerer) -> String {
    format!("http://{}", a.addr)
}

#[test]
fn an_hec_200_with_a_non_zero_code_is_failed_for_good_and_counted_by_code() {
    let a = hec(r#"{"text":"Invalid data format","code":6}"#);
    let (code, v, out) = run(&config(&hec_url(&a), "generic-hec", ""));
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert_eq!(u(&s["events_accepted"]), 0, "{s}");
    assert_eq!(u(&s["events_failed"]), 200, "{s}");
    assert_eq!(s["events_failed_by_hec_code"]["6"], 200, "{s}");
    assert_eq!(v["hec_codes"]["6"], 4);
    assert_eq!(a.posts(), 4, "failed for good: never resent");
    assert!(failed_slo(&v).contains(&"max_failed_events".into()));
    assert_eq!(
        v["loss"]["refused"]["by_hec_code"]["6"], 200,
        "{}",
        v["loss"]
    );
}

#[test]
fn hec_busy_and_internal_error_codes_on_a_200_are_resent_under_the_retry_limits() {
    for code in [8, 9] {
        let body: &'static str = if code == 8 {
            r#"{"text":"Internal server error","code":8}"#
        } else {
            r#"{"text":"Server is busy","code":9}"#
        };
        let a = hec(body);
        let (exit, v, out) = run(&config(&hec_url(&a), "generic-hec", ""));
        assert_eq!(exit, Some(3), "{out}");
        let s = &v["summary"];
        assert_eq!(u(&s["events_accepted"]), 0, "{s}");
        let failed = u(&s["events_failed"]);
        assert!(failed >= 50, "{s}");
        assert_eq!(u(&s["events_retries_exhausted"]), failed, "{s}");
        assert_eq!(u(&s["events_given_up_after"]["busy"]), failed, "{s}");
        // Each batch sent 3 times: resent unchanged, and no more.
        let batches = u(&s["batches_retries_exhausted"]);
        assert_eq!(a.posts(), 3 * batches, "code {code}");
        assert_eq!(u(&s["batches_retried"]), 2 * batches, "{s}");
    }
}

#[test]
fn an_hec_2xx_that_does_not_say_code_0_is_unreadable_never_resent() {
    let answers: [(&str, Reply); 4] = [
        ("no code", Reply::json(200, r#"{"text":"Success"}"#)),
        ("not JSON", Reply::json(200, "OK")),
        (
            "a string code",
            Reply::json(200, r#"{"text":"Success","code":"0"}"#),
        ),
        ("no body", Reply::json(204, "")),
    ];
    for (what, reply) in answers {
        let bytes = reply.bytes;
        let a = Answerer::start(move |_, _| Reply {
            bytes: bytes.clone(),
            close: false,
            filler: 0,
        });
        let (code, v, out) = run(&config(&hec_url(&a), "generic-hec", ""));
        assert_eq!(code, Some(3), "{what}: {out}");
        let s = &v["summary"];
        assert_eq!(u(&s["events_accepted"]), 0, "{what}: {s}");
        assert_eq!(u(&s["events_unreadable_2xx"]), 200, "{what}: {s}");
        assert_eq!(u(&s["batches_unreadable_2xx"]), 4, "{what}: {s}");
        assert_eq!(a.posts(), 4, "{what}: never resent");
        assert!(
            failed_slo(&v).contains(&"max_unreadable_2xx_events".into()),
            "{what}: {:?}",
            failed_slo(&v)
        );
        assert!(out.contains("unreadable"), "{what}: {out}");
    }
}

#[test]
fn hec_with_ack_and_gzip_still_reads_the_code_first() {
    let a = Answerer::start(|path, _| {
        if path.starts_with("/services/collector/ack") {
            Reply::json(200, r#"{"acks":{"0":true}}"#)
        } else {
            Reply::json(200, r#"{"text":"Invalid data format","code":6,"ackId":0}"#)
        }
    });
    let (code, v, out) = run(&config(
        &hec_url(&a),
        "generic-hec",
        "  compression: gzip\n  hec: { ack: true }\n",
    ));
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert_eq!(u(&s["events_accepted"]), 0, "{s}");
    assert_eq!(s["events_failed_by_hec_code"]["6"], 200, "{s}");
    assert_eq!(
        u(&s["batches_acked"]),
        0,
        "a refused batch has nothing to confirm: {s}"
    );
    // An ack endpoint that answers in other words than `acks`: the polls fail, ids stay open.
    let a = Answerer::start(|path, _| {
        if path.starts_with("/services/collector/ack") {
            Reply::json(200, r#"{"text":"ACK is disabled","code":14}"#)
        } else {
            Reply::json(200, r#"{"text":"Success","code":0,"ackId":3}"#)
        }
    });
    let (code, v, out) = run(&config(
        &hec_url(&a),
        "generic-hec",
        "  hec: { ack: true }\n",
    ));
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert!(u(&s["ack_poll_failures"]) > 0, "{s}");
    assert_eq!(u(&s["batches_acked"]), 0, "{s}");
    assert!(failed_slo(&v).contains(&"max_acks_pending".into()));
}

/// A named way to answer.
type Case = (&'static str, fn() -> Reply);

/// Answers that say 2xx and then cannot be read: each one's name and reply.
fn unreadable_2xx() -> Vec<Case> {
    vec![
        ("a Content-Length of 100 MB", || {
            Reply::raw_then_close(
                b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n{\"text\":\"Success\",\"code\":0}",
            )
        }),
        ("a lying chunked encoding", || {
            Reply::raw_then_close(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
            )
        }),
        ("a close in the middle of the body", || {
            Reply::raw_then_close(
                b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"text\":\"Success\"",
            )
        }),
        ("a close in the middle of the head", || {
            Reply::raw_then_close(b"HTTP/1.1 200 OK\r\nContent-Le")
        }),
        ("a body over the cap until the close", || {
            Reply::until_close(17 << 20)
        }),
    ]
}

#[test]
fn a_2xx_that_cannot_be_read_is_never_resent_and_fails_the_run() {
    for adapter in ["generic-hec", "lphc"] {
        for (what, reply) in unreadable_2xx() {
            let a = Answerer::start(move |_, _| reply());
            let url = if adapter == "lphc" {
                format!("http://{}/ingest", a.addr)
            } else {
                hec_url(&a)
            };
            let t0 = Instant::now();
            let (code, v, out) = run(&config(&url, adapter, ""));
            assert_eq!(code, Some(3), "{adapter}, {what}: {out}");
            let s = &v["summary"];
            // Every batch sent was answered 2xx unreadable, and sent once.
            let n = u(&s["events_unreadable_2xx"]);
            assert!(n >= 50, "{adapter}, {what}: {s}");
            assert_eq!(n, u(&s["events_failed"]), "{adapter}, {what}: {s}");
            assert_eq!(
                u(&s["batches_unreadable_2xx"]),
                u(&s["batches_sent"]),
                "{s}"
            );
            assert_eq!(u(&s["batches_retried"]), 0, "{adapter}, {what}: {s}");
            assert_eq!(
                a.posts(),
                u(&s["batches_sent"]),
                "{adapter}, {what}: one send per batch"
            );
            assert_eq!(u(&s["events_accepted"]), 0, "{adapter}, {what}");
            assert!(
                failed_slo(&v).contains(&"max_unreadable_2xx_events".into()),
                "{adapter}, {what}"
            );
            assert!(t0.elapsed() < Duration::from_secs(20), "{adapter}, {what}");
        }
    }
}

#[test]
fn a_refusal_that_cannot_be_read_is_judged_by_its_status() {
    // A 503 whose body lies: resent under the limits; a 400 whose body lies: failed.
    let a = Answerer::start(|_, _| {
        Reply::raw_then_close(b"HTTP/1.1 503 Busy\r\nContent-Length: 100000000\r\n\r\nx")
    });
    let (code, v, out) = run(&config(&format!("http://{}/i", a.addr), "lphc", ""));
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert!(u(&s["events_failed"]) >= 50, "{s}");
    assert_eq!(
        u(&s["events_given_up_after"]["503"]),
        u(&s["events_failed"]),
        "{s}"
    );
    assert_eq!(a.posts(), 3 * u(&s["batches_retries_exhausted"]), "{s}");
    assert_eq!(u(&s["events_unreadable_2xx"]), 0);
    let a = Answerer::start(|_, _| {
        Reply::raw_then_close(b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    });
    let (code, v, out) = run(&config(&format!("http://{}/i", a.addr), "lphc", ""));
    assert_eq!(code, Some(3), "{out}");
    assert_eq!(v["summary"]["events_failed_by_status"]["400"], 200);
    assert_eq!(a.posts(), 4);
}

#[test]
fn a_bulk_item_refused_under_errors_false_is_failed() {
    let a = Answerer::start(|_, body| {
        let n = body
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
            / 2;
        let item =
            r#"{"create":{"status":400,"error":{"type":"mapper_parsing_exception","reason":"x"}}}"#;
        let items = vec![item; n].join(",");
        Reply::json(
            200,
            &format!(r#"{{"took":1,"errors":false,"items":[{items}]}}"#),
        )
    });
    let (code, v, out) = run(&config(&format!("http://{}", a.addr), "elasticsearch", ""));
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert_eq!(u(&s["events_accepted"]), 0, "{s}");
    assert_eq!(s["events_failed_by_status"]["400"], 200, "{s}");
    assert_eq!(
        s["events_failed_by_type"]["mapper_parsing_exception"], 200,
        "{s}"
    );
}

/// The highest resident set size (`VmHWM`) a child reached, sampled until it exits.
fn peak_rss_kb(child: &mut std::process::Child) -> u64 {
    let path = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if let Ok(s) = std::fs::read_to_string(&path)
            && let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the run did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    peak
}

#[test]
fn a_200_without_a_length_is_read_no_further_than_the_cap() {
    // 200 MB until the close, streamed: the reader stops at its cap (16 MiB and the head).
    let a = Answerer::start(|_, _| Reply::until_close(200 << 20));
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(&format!("http://{}/i", a.addr), "lphc", "")
            .replace("total_events: 200", "total_events: 50"),
    );
    let mut child = bin()
        .args(support::run_args(&cfg, 1, 1))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let peak = peak_rss_kb(&mut child);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        u(&v["summary"]["events_unreadable_2xx"]),
        50,
        "{}",
        v["summary"]
    );
    assert!(peak < 120 * 1024, "peak RSS {peak} kB for a 200 MB answer");
}

#[test]
fn probe_judges_an_answer_as_the_run_does() {
    let cases: [(Case, &str); 3] = [
        (
            ("code 6", || {
                Reply::json(200, r#"{"text":"Invalid data format","code":6}"#)
            }),
            "refused",
        ),
        (
            ("no code", || Reply::json(200, r#"{"text":"Success"}"#)),
            "unreadable",
        ),
        (
            ("a lying length", || {
                Reply::raw_then_close(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n{}")
            }),
            "unreadable",
        ),
    ];
    for ((what, reply), word) in cases {
        let a = Answerer::start(move |path, _| {
            if path.ends_with("/health") {
                Reply::json(200, r#"{"text":"HEC is healthy","code":17}"#)
            } else {
                reply()
            }
        });
        let o = bin()
            .args(["probe", "--url", &hec_url(&a), "--adapter", "generic-hec"])
            .args(["--timeout", "15s"])
            .output()
            .unwrap();
        let text = all(&o);
        assert_eq!(o.status.code(), Some(3), "{what}: {text}");
        assert!(text.contains(word), "{what}: {text}");
    }
}

/// Runs `run` on a url for `duration` with the given adapter and source: exit code and output.
fn run_for(
    url: &str,
    adapter: &str,
    source: &str,
    duration: &str,
) -> (Option<i32>, String, Duration) {
    let t0 = Instant::now();
    let o = bin()
        .args([
            "run",
            "--url",
            url,
            "--adapter",
            adapter,
            "--source",
            source,
        ])
        .args([
            "--eps",
            "100",
            "--duration",
            duration,
            "--threads",
            "1",
            "--workers",
            "1",
        ])
        .output()
        .unwrap();
    (o.status.code(), all(&o), t0.elapsed())
}

#[test]
fn a_target_down_for_the_whole_run_is_unreachable_at_any_length() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for d in ["1s", "2s"] {
        let (code, out, took) = run_for(
            &format!("http://127.0.0.1:{port}/i"),
            "lphc",
            "aws.cloudtrail",
            d,
        );
        assert_eq!(code, Some(6), "{d}: {out}");
        assert!(out.contains("target unreachable"), "{d}: {out}");
        assert!(took < Duration::from_secs(10), "{d}: {took:?}");
    }
}

/// A listener that accepts and then, by `mode`, closes at once or reads and never answers.
fn listener(mode: &'static str) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    l.set_nonblocking(true).unwrap();
    let h = std::thread::spawn(move || {
        let t0 = Instant::now();
        let mut held = Vec::new();
        while t0.elapsed() < Duration::from_secs(12) {
            match l.accept() {
                Ok((mut c, _)) => {
                    if mode == "silent" {
                        c.set_nonblocking(true).unwrap();
                        held.push(c);
                    } else {
                        let mut b = [0u8; 4096];
                        c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
                        let _ = c.read(&mut b);
                        drop(c);
                    }
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
            for c in &mut held {
                let mut b = [0u8; 4096];
                let _ = c.read(&mut b);
            }
        }
    });
    (addr, h)
}

#[test]
fn a_handshake_never_answered_is_named_as_tls_at_any_length() {
    let (addr, _h) = listener("silent");
    for (url, adapter, source) in [
        (format!("tls://{addr}"), "syslog", "linux.syslog"),
        (format!("https://{addr}/i"), "lphc", "aws.cloudtrail"),
    ] {
        let (code, out, took) = run_for(&url, adapter, source, "1s");
        assert_eq!(code, Some(6), "{url}: {out}");
        assert!(out.contains("TLS handshake"), "{url}: {out}");
        assert!(took < Duration::from_secs(10), "{url}: {took:?}");
    }
}

#[test]
fn a_port_that_closes_every_connection_at_once_is_unreachable() {
    let (addr, _h) = listener("close");
    let (code, out, _) = run_for(&format!("http://{addr}/i"), "lphc", "aws.cloudtrail", "1s");
    assert_eq!(code, Some(6), "{out}");
    assert!(out.contains("target unreachable"), "{out}");
    assert!(out.contains("before any answer"), "{out}");
}

#[test]
fn an_answer_with_no_readable_status_line_is_never_resent() {
    // From the first answer on, and after good answers: the collector answered something, so
    // the batch fails (a protocol error) instead of going again.
    for good_first in [0u64, 1] {
        let n = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = n.clone();
        let a = Answerer::start(move |_, _| {
            if seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < good_first {
                Reply::json(200, "")
            } else {
                Reply::raw_then_close(b"HTTP/1.1 2\x00\x01garbage\r\n\r\n")
            }
        });
        let (code, v, out) = run(&config(&format!("http://{}/i", a.addr), "lphc", ""));
        let s = &v["summary"];
        assert_eq!(u(&s["batches_retried"]), 0, "{s}");
        assert_eq!(a.posts(), u(&s["batches_sent"]), "{s}");
        assert!(u(&s["protocol_errors"]) > 0, "{s}");
        assert_eq!(
            u(&s["events_failed"]) + u(&s["events_accepted"]),
            u(&s["events_sent"]),
            "{s}"
        );
        if good_first == 0 {
            assert_eq!(code, Some(6), "{out}");
            assert!(out.contains("not HTTP"), "{out}");
        } else {
            assert_eq!(code, Some(3), "{out}");
            assert_eq!(u(&s["events_accepted"]), 50, "{s}");
        }
    }
}

#[test]
fn probe_names_a_tls_port_behind_http_and_a_silent_one_behind_tls() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = support::peers::Certs::make(tmp.path());
    let (cert, key) = (certs.pem("server"), certs.key("server"));
    let sink = support::SinkProc::start(&[
        "--http",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    let probe = |url: &str, adapter: &str| {
        let o = bin()
            .args([
                "probe",
                "--url",
                url,
                "--adapter",
                adapter,
                "--timeout",
                "15s",
            ])
            .output()
            .unwrap();
        (o.status.code(), all(&o))
    };
    let (code, out) = probe(&format!("http://127.0.0.1:{}/ingest", sink.port), "lphc");
    assert_eq!(code, Some(6), "{out}");
    assert!(out.contains("speaks TLS"), "{out}");
    let (addr, _h) = listener("silent");
    let (code, out) = probe(&format!("https://{addr}/ingest"), "lphc");
    assert_eq!(code, Some(6), "{out}");
    assert!(out.contains("no answer to the TLS handshake"), "{out}");
}
