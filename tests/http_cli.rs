//! `ingestbench http` (plain HTTP load, hey's and rpcload's job) end to end against the
//! built-in sink in process and a standalone `ingestbench sink` over HTTPS: a count run and a
//! duration run at a rate, each request's phases present and adding up to the transaction, TLS
//! phases with a connection per request, one event of a pack per request with every one
//! stored, statuses other than `-s` counted as failures (exit 3), a refused port (exit 6), -n
//! with -z (exit 2), and the config rules of `adapter: http` with their field paths. Every run
//! is bounded by a count or a few seconds.

mod support;

use std::process::Output;

use serde_json::Value;
use support::peers::{Certs, free_port};
use support::{SinkProc, all, bin};

fn http(args: &[&str]) -> (Option<i32>, Value, String) {
    let o: Output = bin().arg("http").args(args).output().unwrap();
    let text = all(&o);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, text)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The phases' means add up to the transaction's mean (within 1 %).
fn assert_phases_add_up(h: &Value) {
    let p = &h["phases_ms"];
    let sum: f64 = ["connect", "tls", "write", "wait", "read"]
        .iter()
        .map(|k| f(&p[*k]["mean"]))
        .sum();
    let total = f(&p["total"]["mean"]);
    assert!(total > 0.0, "{p}");
    assert!((sum - total).abs() <= 0.01 * total, "{sum} vs {total}: {p}");
    for k in ["connect", "tls", "write", "wait", "read", "total"] {
        assert_eq!(
            u(&p[k]["percentiles"]["count"]),
            u(&h["requests"]),
            "{k}: every answered request has every phase"
        );
        assert!(f(&p[k]["fastest"]) <= f(&p[k]["slowest"]), "{k}");
    }
    assert!(f(&p["wait"]["mean"]) > 0.0, "time to first byte: {p}");
}

#[test]
fn a_count_run_times_every_phase_of_every_request() {
    let (code, v, out) = http(&["builtin", "-n", "3000", "-c", "4", "-o", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let h = &v["http"];
    assert_eq!(u(&h["requests"]), 3000, "{h}");
    assert_eq!(u(&v["status"]["200"]), 3000);
    assert_eq!(h["method"], "GET");
    assert_eq!(u(&h["connections_opened"]), 4, "kept connections: {h}");
    assert_eq!(u(&v["summary"]["shortfall_events"]), 0);
    assert_eq!(v["config"]["workload"]["profile"], "closed");
    // A closed loop has no schedule: intended latency is service latency.
    assert_eq!(
        v["latency_ms"]["intended"]["p50"],
        v["latency_ms"]["service"]["p50"]
    );
    assert_phases_add_up(h);
    assert_eq!(
        h["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| u(&s["count"]))
            .sum::<u64>(),
        3000
    );
    // hey's text layout.
    let o = bin()
        .args(["http", "builtin", "-n", "200", "-c", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for line in [
        "Summary:",
        "Requests/sec:",
        "Response time histogram:",
        "Latency distribution:",
        "resp wait:",
        "[200]\t200 responses",
        "PASS  exit 0",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
}

#[test]
fn a_duration_run_at_a_rate_holds_it_and_shows_both_latencies() {
    let (code, v, out) = http(&[
        "builtin",
        "-z",
        "3s",
        "-q",
        "400",
        "-c",
        "4",
        "-m",
        "POST",
        "-d",
        "[{\"a\":1}]",
        "-T",
        "application/json",
        "-o",
        "json",
    ]);
    assert_eq!(code, Some(0), "{out}");
    let s = &v["summary"];
    assert!(
        (f(&s["target_eps"]) - 400.0).abs() < 1.0,
        "target {}",
        s["target_eps"]
    );
    let achieved = f(&s["achieved_eps"]);
    assert!((achieved - 400.0).abs() < 20.0, "achieved {achieved}");
    let h = &v["http"];
    assert_eq!(h["method"], "POST");
    assert_eq!(u(&v["status"]["200"]), u(&h["requests"]));
    assert!(u(&h["requests"]) >= 1150, "{h}");
    assert_phases_add_up(h);
    // The body went as it was given: head and 9 bytes.
    assert!(
        f(&h["request_bytes"]) > 9.0 && f(&h["request_bytes"]) < 200.0,
        "{h}"
    );
    let text = bin()
        .args(["http", "builtin", "-z", "1s", "-q", "200", "-c", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("free of coordinated omission"), "{text}");
}

#[test]
fn a_closed_loop_stops_at_its_duration_and_counts_requests_per_second_of_it() {
    let (code, v, out) = http(&["builtin", "-z", "2s", "-c", "2", "-o", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let d = f(&v["duration_s"]);
    // No schedule to catch up on: it stops at 2 s, and only answers in flight come after.
    assert!((2.0..2.15).contains(&d), "duration {d}");
    let h = &v["http"];
    let rps = f(&h["requests_per_s"]);
    let want = u(&h["requests"]) as f64 / d;
    assert!((rps - want).abs() <= want * 0.001, "{rps} vs {want}");
}

#[test]
fn tls_phases_with_a_connection_per_request() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    let (cert, key) = (certs.pem("server"), certs.key("server"));
    let sink = SinkProc::start(&[
        "--http",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    let url = format!("https://localhost:{}/ingest", sink.port);
    let ca = certs.ca();
    let (code, v, out) = http(&[
        &url,
        "-n",
        "200",
        "-c",
        "2",
        "--disable-keepalive",
        "-d",
        "[{\"a\":1}]",
        "--cacert",
        ca.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(code, Some(0), "{out}");
    let h = &v["http"];
    assert_eq!(u(&h["requests"]), 200, "{h}");
    assert_eq!(
        u(&h["connections_opened"]),
        200,
        "one connection per request"
    );
    assert!(f(&h["phases_ms"]["tls"]["fastest"]) > 0.0, "{h}");
    assert!(f(&h["phases_ms"]["connect"]["fastest"]) > 0.0, "{h}");
    assert!(f(&h["dns_ms"]) >= 0.0, "localhost was resolved: {h}");
    assert_phases_add_up(h);
    assert_eq!(u(&v["summary"]["connection_resets"]), 0);
    // Without the CA the certificate is refused: the run aborts (6), never a pass.
    let (code, _, out) = http(&[&url, "-n", "10", "-d", "[{}]"]);
    assert_eq!(code, Some(6), "{out}");
}

#[test]
fn one_event_of_a_pack_per_request_every_one_stored() {
    let (code, v, out) = http(&[
        "builtin",
        "--source",
        "aws.cloudtrail",
        "-n",
        "1500",
        "-c",
        "3",
        "-o",
        "json",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["http"]["method"], "POST");
    let ver = &v["verification"];
    assert_eq!(u(&ver["events_received"]), 1500, "{ver}");
    assert_eq!(u(&ver["distinct"]), 1500);
    assert_eq!(u(&ver["lost_events"]), 0);
    assert!(
        f(&v["http"]["request_bytes"]) > 500.0,
        "a CloudTrail record each"
    );
}

#[test]
fn statuses_other_than_the_expected_one_fail_the_run() {
    let (code, v, out) = http(&["builtin", "-n", "300", "-c", "2", "-s", "201", "-o", "json"]);
    assert_eq!(code, Some(3), "{out}");
    assert_eq!(u(&v["status"]["200"]), 300);
    assert_eq!(u(&v["summary"]["events_failed"]), 300);
    assert_eq!(u(&v["summary"]["batches_retried"]), 0, "nothing is retried");
    let (code, _, out) = http(&["builtin", "-n", "300", "-c", "2", "-s", "200", "-s", "201"]);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn a_unix_socket_target() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("app.sock");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/unix_http.py");
    let mut server = std::process::Command::new("python3")
        .arg(&script)
        .arg(&sock)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(server.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line.trim(), "listening");
    let (code, v, text) = http(&[
        "http://localhost/app",
        "--unix-socket",
        sock.to_str().unwrap(),
        "-n",
        "400",
        "-c",
        "2",
        "-o",
        "json",
    ]);
    support::stop_child(&mut server);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(u(&v["status"]["200"]), 400);
    assert_eq!(
        v["target"]["address"],
        format!("unix:{}", sock.display()).as_str()
    );
    let h = &v["http"];
    assert_eq!(h["dns_ms"], Value::Null, "nothing to resolve");
    assert_eq!(u(&h["response_bytes"]), 400 * 8);
    assert_phases_add_up(h);
    // Nothing listening there: unreachable, exit 6.
    let (code, _, text) = http(&[
        "http://localhost/",
        "--unix-socket",
        dir.path().join("none.sock").to_str().unwrap(),
        "-n",
        "5",
    ]);
    assert_eq!(code, Some(6), "{text}");
    assert!(text.contains("unix:"), "{text}");
}

#[test]
fn refusals_and_usage_errors() {
    let port = free_port();
    let (code, _, out) = http(&[&format!("http://127.0.0.1:{port}/"), "-n", "10"]);
    assert_eq!(code, Some(6), "{out}");
    assert!(out.contains("Connection refused"), "{out}");
    for (args, says) in [
        (vec!["builtin", "-n", "10", "-z", "1s"], "not both"),
        (
            vec!["builtin", "-d", "x", "--source", "aws.cloudtrail"],
            "--source",
        ),
        (vec!["builtin", "-m", "FETCH"], "target.http.method"),
        (
            vec!["builtin", "-H", "Host: evil"],
            "target.http.headers[0]",
        ),
        (vec!["builtin", "-H", "no colon"], "target.http.headers[0]"),
        (vec!["builtin", "-s", "999"], "target.http.expect_status[0]"),
        (vec!["builtin", "-t", "soon"], "--timeout"),
        (
            vec!["builtin", "-D", "/nonexistent/body"],
            "target.http.body_file",
        ),
        (vec!["builtin", "--http1.1", "--disable-keepalive"], "keep"),
    ] {
        let (code, _, out) = http(&args);
        assert_eq!(code, Some(2), "{args:?}: {out}");
        assert!(out.contains(says), "{args:?}: {out}");
    }
    // The token comes from the environment, never the command line, and is never printed.
    let o = bin()
        .args([
            "http",
            "builtin",
            "-n",
            "20",
            "--token-env",
            "HTTP_TEST_TOKEN",
        ])
        .env("HTTP_TEST_TOKEN", "s3cret-http-token")
        .output()
        .unwrap();
    assert!(!all(&o).contains("s3cret-http-token"));
}

#[test]
fn adapter_http_config_rules_name_their_fields() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "target: { adapter: http, url: builtin, batch: { max_events: 5 } }\nworkload: { profile: closed, stop: { total_events: 5 } }\n",
            "target.batch.max_events",
        ),
        (
            "target: { adapter: http, url: builtin, http: { body: x } }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 5, stop: { total_events: 5 } }\n",
            "source",
        ),
        (
            "target: { adapter: lphc, url: builtin, http: { body: x } }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 5, stop: { total_events: 5 } }\n",
            "target.http",
        ),
        (
            "target: { adapter: lphc, url: builtin }\nsource: { id: aws.cloudtrail }\nworkload: { profile: closed, stop: { total_events: 5 } }\n",
            "workload.profile",
        ),
        (
            "target: { adapter: http, url: builtin, retry: { max_attempts: 3 } }\nworkload: { eps: 5, stop: { total_events: 5 } }\n",
            "target.retry",
        ),
        (
            "target: { adapter: lphc, url: builtin }\nworkload: { eps: 5, stop: { total_events: 5 } }\n",
            "source",
        ),
    ];
    for (i, (body, path)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("c{i}.yaml"));
        std::fs::write(&p, format!("schema_version: \"1.0\"\n{body}")).unwrap();
        let o = bin()
            .args(["validate", "--config", p.to_str().unwrap()])
            .output()
            .unwrap();
        let out = all(&o);
        assert_eq!(o.status.code(), Some(2), "{body}: {out}");
        assert!(out.contains(path), "{path} in {out}");
    }
    // And a plain HTTP config with no source is valid.
    let p = dir.path().join("ok.yaml");
    std::fs::write(
        &p,
        "schema_version: \"1.0\"\ntarget: { adapter: http, url: builtin }\nworkload: { profile: closed, stop: { total_events: 5 } }\n",
    )
    .unwrap();
    let o = bin()
        .args(["validate", "--config", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}
