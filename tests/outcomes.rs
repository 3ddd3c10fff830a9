//! Every way a run can go wrong ends in the right figure and the right exit code, with no
//! `slo` block to help: refused requests, HEC errors, plain HTTP to a TLS port (exit 6, TLS
//! named), a collector that resets every connection (retries are bounded; never one answer is
//! unreachable, exit 6), one that holds at a capacity below the
//! target (the target stays the schedule, the shortfall is the target's), a request cap, a
//! collector killed mid-run (HTTP and syslog over TCP), SIGTERM, and the window the rates are
//! measured over. Targets are `ingestbench sink` processes with faults or listeners in the
//! test, all on 127.0.0.1; every run stops by itself within seconds.

mod support;

use std::io::Read;
use std::net::TcpListener;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::peers::Certs;
use support::{SinkProc, all, bin, run_args, run_json, write_config};

fn config(url: &str, target_extra: &str, workload: &str, rest: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nseed: 5\ntarget:\n  url: \"{url}\"\n  batch: {{ max_events: 50 }}\n{target_extra}source: {{ id: aws.cloudtrail }}\nworkload: {workload}\n{rest}"
    )
}

/// Runs a config on 1 thread and `conns` connections: exit code, JSON report, all output.
fn run(yaml: &str, conns: u32) -> (Option<i32>, Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "c.yaml", yaml);
    let (o, v) = run_json(&cfg, 1, conns);
    assert!(!v.is_null(), "no JSON report: {}", all(&o));
    (o.status.code(), v, all(&o))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The default objectives the report applied and failed, by name.
fn failed_defaults(v: &Value) -> Vec<String> {
    v["slo"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["default"] == true && r["pass"] == false)
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

fn sink_url(s: &SinkProc, scheme: &str) -> String {
    format!("{scheme}://127.0.0.1:{}/ingest", s.port)
}

#[test]
fn a_503_on_every_request_fails_the_run_without_an_slo() {
    let sink = SinkProc::start(&[
        "--http",
        "127.0.0.1:0",
        "--fault-503",
        "1",
        "--retry-after",
        "0",
    ]);
    let (code, v, out) = run(
        &config(
            &sink_url(&sink, "http"),
            "  retry: { max_attempts: 3 }\n",
            "{ eps: 400, stop: { total_events: 200 } }",
            "",
        ),
        2,
    );
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert_eq!(u(&s["events_failed"]), 200, "{s}");
    assert_eq!(u(&s["events_accepted"]), 0);
    assert_eq!(u(&s["batches_retries_exhausted"]), 4, "{s}");
    assert_eq!(
        u(&v["status"]["503"]),
        12,
        "4 batches x 3 attempts: {}",
        v["status"]
    );
    let d = failed_defaults(&v);
    assert!(
        d.contains(&"max_failed_events".into()) && d.contains(&"min_events_accepted".into()),
        "{d:?}"
    );
    assert!(out.contains("SLO breached"), "{out}");
}

#[test]
fn hec_code_10_on_every_batch_fails_the_run() {
    // The sink wants a channel (indexer acknowledgement on); the run sends none.
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--hec-ack"]);
    let (code, v, out) = run(
        &config(
            &format!("http://127.0.0.1:{}", sink.port),
            "  adapter: generic-hec\n",
            "{ eps: 400, stop: { total_events: 200 } }",
            "",
        ),
        1,
    );
    assert_eq!(code, Some(3), "{out}");
    assert_eq!(u(&v["hec_codes"]["10"]), 4, "{}", v["hec_codes"]);
    assert_eq!(u(&v["status"]["400"]), 4);
    assert_eq!(u(&v["summary"]["events_failed"]), 200);
}

#[test]
fn plain_http_to_a_tls_port_aborts_the_run_naming_tls() {
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
    let (code, v, out) = run(
        &config(
            &sink_url(&sink, "http"),
            "  retry: { max_attempts: 3 }\n",
            "{ eps: 200, stop: { total_events: 100 } }",
            "",
        ),
        1,
    );
    // A TLS mismatch is named as one and aborts the run (issue 33, case 7).
    assert_eq!(code, Some(6), "{out}");
    assert!(
        out.contains("TLS handshake failed") && out.contains("use https://"),
        "{out}"
    );
    let s = &v["summary"];
    assert_eq!(u(&s["events_accepted"]), 0, "{s}");
    assert!(
        u(&s["connection_resets"]) + u(&s["protocol_errors"]) > 0,
        "{s}"
    );
    assert!(t0.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_reset_on_every_request_is_retried_a_bounded_number_of_times_then_unreachable() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--reset-share", "1"]);
    let t0 = Instant::now();
    let (code, v, out) = run(
        &config(
            &sink_url(&sink, "http"),
            "  retry: { max_attempts: 4, max_time: 20s }\n",
            "{ eps: 400, stop: { total_events: 200 } }",
            "",
        ),
        2,
    );
    // Never one answer: the target is unreachable (issue 33, case 7), named once the
    // batches have had their bounded retries.
    assert_eq!(code, Some(6), "{out}");
    assert!(out.contains("before any answer"), "{out}");
    let s = &v["summary"];
    // 4 batches, 4 sends each at most: no storm.
    assert!(u(&s["batches_sent"]) <= 16, "{s}");
    assert_eq!(u(&s["batches_retries_exhausted"]), 4, "{s}");
    assert_eq!(u(&s["events_retries_exhausted"]), 200, "{s}");
    assert_eq!(u(&s["events_failed"]), 200);
    assert!(u(&s["bytes_sent"]) < 16 * 100_000, "{s}");
    assert!(t0.elapsed() < Duration::from_secs(20), "backoff is bounded");
}

#[test]
fn a_collector_below_the_rate_shows_as_a_shortfall_that_is_the_targets() {
    // 100 ms per answer, 2 connections, 100-event batches: about 2,000 events/s at most.
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--latency-ms", "100"]);
    let (code, v, out) = run(
        &config(
            &sink_url(&sink, "http"),
            "  batch: { max_events: 100 }\n",
            "{ eps: 8000, stop: { total_events: 32000 } }",
            "slo: { min_eps_ratio: 0.9 }\n",
        )
        .replace("  batch: { max_events: 50 }\n", ""),
        2,
    );
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    // The target is the schedule: 32,000 events over its 4 s window.
    assert!((f(&s["window_s"]) - 4.0).abs() < 0.05, "{s}");
    assert!((f(&s["target_eps"]) - 8000.0).abs() < 50.0, "{s}");
    assert!(f(&s["achieved_eps"]) < 3000.0, "{s}");
    assert!(f(&s["eps_ratio"]) < 0.4, "{s}");
    assert!(u(&s["shortfall_events"]) > 15_000, "{s}");
    assert_eq!(s["shortfall_by"], "target", "{s}");
    assert!(f(&s["wait_for_target_ms"]) > 1000.0, "{s}");
    // min_eps_ratio is judged on a total_events run, and replaces the unsent default.
    let breached: Vec<&str> = v["slo"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["pass"] == false)
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(breached, ["min_eps_ratio"], "{}", v["slo"]);
    // Seconds after the schedule's window ask for nothing.
    let rows = v["timeline"].as_array().unwrap();
    for r in rows.iter().filter(|r| u(&r["t"]) >= 4) {
        assert_eq!(f(&r["target_eps"]), 0.0, "{r}");
    }
}

#[test]
fn the_request_cap_is_a_cap_and_the_shortfall_says_so() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    // ~1.8 KB events in 20 KB batches: ~11 events a request; 1,000 events/s would need ~90
    // requests/s, and the cap is 20.
    let yaml = config(
        &sink_url(&sink, "http"),
        "  limits: { max_requests_per_sec: 20 }\n",
        "{ eps: 1000, stop: { after: 3s } }",
        "",
    )
    .replace("max_events: 50 }", "max_events: 500, max_bytes: 20KB }");
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "c.yaml", &yaml);
    let o = bin().args(["validate", "--config", &cfg]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(
        all(&o).contains("target.limits.max_requests_per_sec") && all(&o).contains("fall short"),
        "{}",
        all(&o)
    );
    let (code, v, out) = run(&yaml, 2);
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    let requests = u(&s["batches_sent"]) as f64;
    assert!(
        requests <= 20.0 * f(&s["window_s"]) + 3.0,
        "{requests} requests in {}",
        s["window_s"]
    );
    assert_eq!(s["shortfall_by"], "request cap", "{s}");
    assert!(out.contains("fall short"), "the run warns too: {out}");
}

#[test]
fn a_collector_killed_mid_run_fails_the_run() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let url = sink_url(&sink, "http");
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(&url, "", "{ eps: 1000, stop: { after: 4s } }", ""),
    );
    let child = bin()
        .args(run_args(&cfg, 1, 2))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    drop(sink);
    let o = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    let s = &v["summary"];
    assert!(
        u(&s["reconnects"]) > 0,
        "reconnect attempts are counted: {s}"
    );
    assert!(u(&s["connect_errors"]) > 0, "{s}");
    assert!(u(&s["shortfall_events"]) > 1000, "{s}");
    assert_eq!(s["shortfall_by"], "target down", "{s}");
    assert!(failed_defaults(&v).contains(&"max_unsent_events".into()));
}

#[test]
fn a_syslog_receiver_killed_mid_run_fails_the_run() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let stopper = stop.clone();
    // Reads whatever comes for 1.5 s, then closes everything and stops listening.
    let receiver = std::thread::spawn(move || {
        listener.set_nonblocking(true).unwrap();
        let until = Instant::now() + Duration::from_millis(1500);
        let mut conns = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        while Instant::now() < until && !stopper.load(Ordering::Relaxed) {
            if let Ok((c, _)) = listener.accept() {
                c.set_nonblocking(true).unwrap();
                conns.push(c);
            }
            for c in &mut conns {
                while c.read(&mut buf).is_ok_and(|n| n > 0) {}
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let (code, v, out) = run(
        &config(
            &format!("tcp://127.0.0.1:{port}"),
            "  adapter: syslog\n",
            "{ eps: 1000, stop: { after: 4s } }",
            "",
        )
        .replace("aws.cloudtrail", "linux.syslog"),
        1,
    );
    stop.store(true, Ordering::Relaxed);
    receiver.join().unwrap();
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert!(u(&s["reconnects"]) > 0, "{s}");
    assert!(u(&s["shortfall_events"]) > 1000, "{s}");
    assert_eq!(s["shortfall_by"], "target down", "{s}");
}

/// `support/hec_checker.py`: a strict HEC collector started in a mode; stopped by its PID.
struct HecChecker {
    server: support::PyServer,
    port: u16,
}

const HEC_TOKEN: &str = "0f6e2b3c-hec-test-token";

impl HecChecker {
    fn start(mode: &str) -> HecChecker {
        let server = support::PyServer::start("hec_checker.py", &[mode, HEC_TOKEN]);
        HecChecker {
            port: server.port,
            server,
        }
    }

    fn config(&self, workload: &str) -> String {
        config(
            &format!("http://127.0.0.1:{}", self.port),
            "  adapter: generic-hec\n  compression: gzip\n  hec: { ack: true }\n  auth: { scheme: splunk, token_env: HEC_CHECKER_TOKEN }\n",
            workload,
            "",
        )
    }

    fn run(&self, workload: &str) -> (Option<i32>, Value, String) {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = write_config(tmp.path(), "c.yaml", &self.config(workload));
        let o = bin()
            .args(run_args(&cfg, 1, 2))
            .env("HEC_CHECKER_TOKEN", HEC_TOKEN)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
        (o.status.code(), v, all(&o))
    }

    fn violations(&self) -> Vec<String> {
        serde_json::from_value(self.server.get_json("/violations")).unwrap()
    }
}

#[test]
fn hec_ack_with_gzip_passes_a_strict_hec_checker() {
    let hec = HecChecker::start("confirm");
    let (code, v, out) = hec.run("{ eps: 2000, stop: { total_events: 4000 } }");
    assert_eq!(code, Some(0), "{out}");
    let s = &v["summary"];
    assert_eq!(u(&s["batches_acked"]), u(&s["batches_accepted"]), "{s}");
    assert_eq!(
        (u(&s["acks_pending"]), u(&s["ack_poll_failures"])),
        (0, 0),
        "{s}"
    );
    assert_eq!(hec.violations(), Vec::<String>::new());
}

#[test]
fn unconfirmed_acks_fail_the_run_and_do_not_dilute_the_target() {
    let hec = HecChecker::start("never");
    let (code, v, out) = hec.run("{ eps: 2000, stop: { after: 2s } }");
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert_eq!(u(&s["acks_pending"]), u(&s["batches_accepted"]), "{s}");
    assert!(
        (f(&s["target_eps"]) - 2000.0).abs() < 1.0,
        "the drain is not in the target: {s}"
    );
    assert!(f(&s["drain_s"]) > 4.0, "the acks were waited for: {s}");
    assert!(
        failed_defaults(&v).contains(&"max_acks_pending".into()),
        "{}",
        v["slo"]
    );
    assert_eq!(hec.violations(), Vec::<String>::new());
}

#[test]
fn refused_ack_polls_are_counted_and_fail_the_run() {
    let hec = HecChecker::start("refuse-polls");
    let (code, v, out) = hec.run("{ eps: 2000, stop: { after: 1s } }");
    assert_eq!(code, Some(3), "{out}");
    let s = &v["summary"];
    assert!(u(&s["ack_poll_failures"]) > 0, "{s}");
    assert!(u(&s["acks_pending"]) > 0, "{s}");
}

#[test]
fn a_target_that_gives_no_ackid_leaves_every_batch_unconfirmed() {
    // A sink without --hec-ack accepts HEC events and hands out no ackId.
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let (code, v, out) = run(
        &config(
            &format!("http://127.0.0.1:{}", sink.port),
            "  adapter: generic-hec\n  hec: { ack: true }\n",
            "{ eps: 2000, stop: { total_events: 1000 } }",
            "",
        ),
        1,
    );
    assert_eq!(code, Some(3), "{out}");
    assert_eq!(
        u(&v["summary"]["acks_pending"]),
        u(&v["summary"]["batches_accepted"])
    );
}

#[test]
fn hec_ack_with_gzip_is_confirmed_by_the_builtin_sink() {
    let (code, v, out) = run(
        &config(
            "builtin",
            "  adapter: generic-hec\n  compression: gzip\n  hec: { ack: true }\n",
            "{ eps: 2000, stop: { total_events: 4000 } }",
            "",
        ),
        2,
    );
    assert_eq!(code, Some(0), "{out}");
    let s = &v["summary"];
    assert_eq!(u(&s["batches_acked"]), u(&s["batches_accepted"]), "{s}");
    assert_eq!(u(&s["acks_pending"]), 0, "{s}");
    assert_eq!(u(&s["ack_poll_failures"]), 0, "{s}");
    assert_eq!(v["verification"]["distinct"], 4000);
}

#[test]
fn the_warm_up_is_in_the_timeline_and_out_of_the_summary() {
    let (code, v, out) = run(
        &config(
            "builtin",
            "",
            "{ eps: 1000, warmup: 2s, stop: { after: 4s } }",
            "",
        ),
        2,
    );
    assert_eq!(code, Some(0), "{out}");
    let s = &v["summary"];
    assert_eq!(f(&s["warmup_s"]), 2.0);
    assert!((f(&s["window_s"]) - 2.0).abs() < 0.01, "{s}");
    assert!((f(&s["target_eps"]) - 1000.0).abs() < 1.0, "{s}");
    // About the last two seconds' events; the timeline has all four.
    let sent = u(&s["events_sent"]);
    assert!((1800..=2200).contains(&sent), "{s}");
    let rows = v["timeline"].as_array().unwrap();
    let in_rows: u64 = rows.iter().map(|r| u(&r["events_sent"])).sum();
    assert_eq!(in_rows, 4000, "the timeline keeps the warm-up");
    assert_eq!(
        u(&v["latency_ms"]["intended"]["count"]),
        u(&s["batches_accepted"])
    );
}
