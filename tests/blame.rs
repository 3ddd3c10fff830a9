//! Whose a shortfall is (issue 33 case 9): an aborted run's is the abort's (auth, TLS, an
//! unreachable target), a stopped run's the stop's (a signal, control) — never the
//! generator's for events that were not due to leave yet. Targets are `ingestbench sink`
//! processes, the built-in sink, or a closed UDP port, all on 127.0.0.1; every run ends
//! within seconds.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::peers::Certs;
use support::{SinkProc, bin, run_json, wait_exit, write_config};

fn config(url: &str, target_extra: &str, workload: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nseed: 5\ntarget:\n  url: \"{url}\"\n  batch: {{ max_events: 10 }}\n{target_extra}source: {{ id: aws.cloudtrail }}\nworkload: {workload}\n"
    )
}

/// Runs `yaml` on one thread and two connections: its exit code and JSON report.
fn run(yaml: &str) -> (Option<i32>, Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "c.yaml", yaml);
    let (o, v) = run_json(&cfg, 1, 2);
    (o.status.code(), v, support::all(&o))
}

fn shortfall(v: &Value) -> (u64, String) {
    let s = &v["summary"];
    (
        s["shortfall_events"].as_u64().unwrap_or(0),
        s["shortfall_by"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn after_sigterm_the_shortfall_is_the_stops() {
    // 427890a: "shortfall 104 events (the generator's …)" with a lag of 1 ms.
    let mut child = bin()
        .args([
            "run",
            "--url",
            "builtin",
            "--eps",
            "1000",
            "--duration",
            "20s",
            "--threads",
            "1",
            "--output",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1700));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with our own live child's PID and a valid signal number.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = wait_exit(&mut child, Duration::from_secs(15), "the run after SIGTERM");
    assert_eq!(status.code(), Some(6));
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let (n, by) = shortfall(&v);
    assert!(
        n > 0,
        "the batch filling at the stop was never sent: {}",
        v["summary"]
    );
    assert_eq!(by, "stop: signal", "{}", v["summary"]);
    assert_eq!(v["loss"]["not_sent_by"], "stop: signal");
}

#[test]
fn after_an_auth_failure_the_shortfall_is_the_aborts() {
    // 427890a: exit 4 and "shortfall 5 events (the generator's …)".
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--token", "right-token"]);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(
            &format!("http://127.0.0.1:{}/ingest", sink.port),
            "  adapter: lphc\n  auth: { scheme: x-api-key, token_env: BLAME_TEST_TOKEN }\n",
            "{ eps: 5000, stop: { after: 3s } }",
        ),
    );
    let o = bin()
        .args(support::run_args(&cfg, 1, 2))
        .env("BLAME_TEST_TOKEN", "wrong-token")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", support::all(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (n, by) = shortfall(&v);
    assert!(n > 0, "{}", v["summary"]);
    assert_eq!(by, "abort: auth", "{}", v["summary"]);
}

#[test]
fn after_a_tls_abort_the_shortfall_is_the_aborts() {
    // 427890a: exit 6 (TLS) and "shortfall 58 events (the generator's …)".
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    let (cert, key) = (certs.pem("server"), certs.dir.join("server.key"));
    let sink = SinkProc::start(&[
        "--http",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    let t0 = Instant::now();
    let (code, v, out) = run(&config(
        &format!("https://127.0.0.1:{}/ingest", sink.port),
        "  adapter: lphc\n",
        "{ eps: 5000, stop: { after: 3s } }",
    ));
    assert_eq!(code, Some(6), "{out}");
    let (n, by) = shortfall(&v);
    assert!(n > 0, "{}", v["summary"]);
    assert_eq!(by, "abort: tls", "{}", v["summary"]);
    assert!(t0.elapsed() < Duration::from_secs(20));
}

#[test]
fn udp_to_a_closed_port_is_the_aborts_not_the_connections() {
    // 427890a: "every connection was waiting for an answer" (or the generator's).
    let port = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let (code, v, out) = run(&config(
        &format!("udp://127.0.0.1:{port}"),
        "  adapter: syslog\n",
        "{ eps: 5000, stop: { after: 3s } }",
    ));
    assert_eq!(code, Some(6), "{out}");
    let (n, by) = shortfall(&v);
    assert!(n > 0, "{}", v["summary"]);
    assert_eq!(by, "abort: unreachable", "{}", v["summary"]);
}
