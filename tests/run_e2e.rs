//! End to end: the real binary's `run` against the built-in sink (in process) and against
//! `ingestbench sink` started as a separate process on 127.0.0.1. Every run is bounded by its
//! config (a few seconds) and every process started here is stopped by PID.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{SinkProc, all, bin, run_args, run_json, write_config};

fn config(url: &str, extra_target: &str, workload: &str, slo: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nseed: 5\ntarget:\n  url: \"{url}\"\n  batch: {{ max_events: 50 }}\n{extra_target}source: {{ id: aws.cloudtrail, entities: {{ user: 50, host: 50 }} }}\nworkload: {workload}\n{slo}"
    )
}

/// Runs `yaml` (a whole config) with 1 thread and 2 connections, expects exit 0, returns the
/// JSON report.
fn run_ok(yaml: &str) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "c.yaml", yaml);
    let (o, v) = run_json(&cfg, 1, 2);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    v
}

#[test]
fn steady_smoke_example_against_the_builtin_sink() {
    let o = bin()
        .args(["run", "--config", "examples/steady-smoke.yaml"])
        .output()
        .unwrap();
    let t = all(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("accepted 200"), "{t}");
    assert!(
        t.contains("stored   built-in sink: received 200, distinct 200, duplicates 0, lost 0"),
        "{t}"
    );
    // The text report ends with its verdict.
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().last(), Some("PASS  exit 0"), "{out}");
}

#[test]
fn builtin_run_stores_exactly_what_it_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(
            "builtin",
            "",
            "{ eps: 4000, stop: { total_events: 8000 } }",
            "",
        ),
    );
    let (o, v) = run_json(&cfg, 2, 4);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(v["schema"], "ingestbench.report/2");
    let s = &v["summary"];
    assert_eq!(s["events_sent"], 8000);
    assert_eq!(s["events_accepted"], 8000);
    let ver = &v["verification"];
    assert_eq!(ver["distinct"], 8000, "{ver}");
    assert_eq!(ver["duplicates"], 0);
    assert_eq!(ver["lost_events"], 0);
    assert!(v["timeline"].as_array().unwrap().len() >= 2);
    assert!(v["latency_ms"]["intended"]["p99"].as_f64().unwrap() > 0.0);
    // 160 batches: too few for a p99.99, which is null rather than a vanity figure.
    assert_eq!(v["latency_ms"]["intended"]["count"], 160);
    assert!(
        v["latency_ms"]["intended"]["p99_99"].is_null(),
        "{}",
        v["latency_ms"]
    );
    // The report carries the config, and nothing secret.
    assert_eq!(v["config"]["source"]["id"], "aws.cloudtrail");
}

#[test]
fn storm_of_429_and_503_is_retried_without_loss_or_duplicates() {
    let sink = SinkProc::start(&[
        "--http",
        "127.0.0.1:0",
        "--fault-429",
        "0.25",
        "--fault-503",
        "0.1",
        "--retry-after",
        "0",
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/ingest", sink.port);
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(&url, "", "{ eps: 2000, stop: { total_events: 4000 } }", ""),
    );
    let (o, v) = run_json(&cfg, 2, 4);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &v["summary"];
    assert_eq!(s["events_accepted"], 4000, "{s}");
    assert!(
        s["batches_retried"].as_u64().unwrap() > 0,
        "no retries: {s}"
    );
    assert!(
        v["status"]["429"].as_u64().unwrap_or(0) > 0,
        "{}",
        v["status"]
    );
    let st = sink.stats();
    let run = &st["runs"][v["run_id"].as_str().unwrap()];
    assert_eq!(run["distinct"], 4000, "{st}");
    assert_eq!(run["duplicates"], 0, "{st}");
    // Every retried request was the same bytes as the one refused.
    assert!(st["resent_identical"].as_u64().unwrap_or(0) > 0, "{st}");
    assert_eq!(st["resent_different"].as_u64().unwrap_or(0), 0, "{st}");
}

#[test]
fn wrong_token_exits_4() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--token", "right-token"]);
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/ingest", sink.port);
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(
            &url,
            "  auth: { scheme: x-api-key, token_env: IB_TEST_TOKEN }\n",
            "{ eps: 500, stop: { after: 5s } }",
            "",
        ),
    );
    let o = bin()
        .args(["run", "--config", &cfg, "--threads", "1"])
        .env("IB_TEST_TOKEN", "wrong-token")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    assert!(all(&o).contains("authentication failed"), "{}", all(&o));
    assert!(
        !all(&o).contains("wrong-token") && !all(&o).contains("right-token"),
        "a token was printed"
    );
    let o = bin()
        .args([
            "run",
            "--config",
            &cfg,
            "--threads",
            "1",
            "--duration",
            "1s",
        ])
        .env("IB_TEST_TOKEN", "right-token")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}

#[test]
fn slo_breach_exits_3_and_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(
            "builtin",
            "",
            "{ eps: 500, stop: { total_events: 500 } }",
            "slo: { max_p99_ms: 0.001, min_success_rate: 0.5 }\n",
        ),
    );
    let o = bin()
        .args(["run", "--config", &cfg, "--threads", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    let t = all(&o);
    assert!(t.contains("SLO breached: max_p99_ms"), "{t}");
    // 10 batches: the text shows no p99, yet the SLO on it is judged and the verdict is last.
    let out = String::from_utf8_lossy(&o.stdout);
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("FAIL  exit 3: SLO breached: max_p99_ms"),
        "{out}"
    );
    assert!(
        !t.contains("min_success_rate (limit"),
        "only the breached SLO is named: {t}"
    );
}

#[test]
fn unreachable_target_exits_6_with_a_clear_message() {
    let port = support::peers::free_port();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(
            &format!("http://127.0.0.1:{port}/x"),
            "",
            "{ eps: 100, stop: { after: 20s } }",
            "",
        ),
    );
    let t0 = Instant::now();
    let o = bin()
        .args(["run", "--config", &cfg, "--threads", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        all(&o).contains("target unreachable") && all(&o).contains("Connection refused"),
        "{}",
        all(&o)
    );
    assert!(t0.elapsed() < Duration::from_secs(15), "gave up too slowly");
}

#[test]
fn sink_killed_and_restarted_is_reconnected_to() {
    let first = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let port = first.port;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config(
            &format!("http://127.0.0.1:{port}/ingest"),
            "",
            "{ eps: 1000, stop: { after: 6s } }",
            "",
        ),
    );
    let runner = bin()
        .args(run_args(&cfg, 1, 2))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    drop(first);
    std::thread::sleep(Duration::from_millis(1000));
    let second = SinkProc::start(&["--http", &format!("127.0.0.1:{port}")]);
    let o = runner.wait_with_output().unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    let s = &v["summary"];
    assert!(s["reconnects"].as_u64().unwrap() >= 1, "{s}");
    assert!(
        s["connection_resets"].as_u64().unwrap() + s["connect_errors"].as_u64().unwrap() >= 1,
        "{s}"
    );
    let after = second.stats();
    assert!(
        after["events_received"].as_u64().unwrap() > 0,
        "nothing reached the restarted sink: {after}"
    );
    assert!(s["events_accepted"].as_u64().unwrap() > 3000, "{s}");
}

#[test]
fn hec_with_gzip_against_the_sink() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--token", "hec-tok"]);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: generic-hec\n  url: \"http://127.0.0.1:{}\"\n  compression: gzip\n  auth: {{ scheme: splunk, token_env: IB_HEC }}\n  hec: {{ index: main, sourcetype: \"linux:audit\" }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: 2000, stop: {{ total_events: 3000 }} }}\n",
            sink.port
        ),
    );
    let o = bin()
        .args([
            "run",
            "--config",
            &cfg,
            "--output",
            "json",
            "--threads",
            "1",
        ])
        .env("IB_HEC", "hec-tok")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["events_accepted"], 3000);
    assert_eq!(
        v["hec_codes"]["0"].as_u64().unwrap(),
        v["summary"]["batches_accepted"].as_u64().unwrap()
    );
    let st = sink.stats();
    assert_eq!(
        st["runs"][v["run_id"].as_str().unwrap()]["distinct"],
        3000,
        "{st}"
    );
}

#[test]
fn hec_indexer_acknowledgement_is_polled_and_counted() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--hec-ack"]);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: generic-hec\n  url: \"http://127.0.0.1:{}\"\n  batch: {{ max_events: 100 }}\n  hec: {{ ack: true }}\nsource: {{ id: identity.okta }}\nworkload: {{ eps: 1000, stop: {{ total_events: 2000 }} }}\n",
            sink.port
        ),
    );
    let (o, v) = run_json(&cfg, 2, 4);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &v["summary"];
    assert_eq!(s["events_accepted"], 2000, "{s}");
    assert!(s["batches_accepted"].as_u64().unwrap() >= 20, "{s}");
    assert_eq!(s["batches_acked"], s["batches_accepted"], "{s}");
    assert_eq!(s["acks_pending"], 0, "{s}");
}

#[test]
fn sigterm_stops_the_run_and_still_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config("builtin", "", "{ eps: 1000, stop: { after: 60s } }", ""),
    );
    let child = bin()
        .args(run_args(&cfg, 1, 2))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: kill(2) on the PID of the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let t0 = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "did not stop promptly"
    );
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    assert!(
        v["aborted"].as_str().unwrap().contains("interrupted"),
        "{}",
        v["aborted"]
    );
    let accepted = v["summary"]["events_accepted"].as_u64().unwrap();
    assert!((1000..=4000).contains(&accepted), "{accepted}");
    assert_eq!(v["verification"]["lost_events"], 0);
    // Only what was due before the signal is judged: the target stays the schedule's rate,
    // and what was due and not yet sent at the signal is at most one batch.
    let s = &v["summary"];
    assert!((s["window_s"].as_f64().unwrap() - 2.5).abs() < 0.3, "{s}");
    assert!(
        (s["target_eps"].as_f64().unwrap() - 1000.0).abs() < 1.0,
        "{s}"
    );
    assert!(s["shortfall_events"].as_u64().unwrap() <= 50, "{s}");
    assert!((s["eps_ratio"].as_f64().unwrap() - 1.0).abs() < 0.05, "{s}");
}

#[test]
fn hec_raw_endpoint_into_the_builtin_sink() {
    let v = run_ok(
        "schema_version: \"1.0\"\ntarget:\n  adapter: generic-hec\n  url: builtin\n  hec: { endpoint: raw, sourcetype: \"linux:syslog\" }\nsource: { id: linux.syslog }\nworkload: { eps: 2000, stop: { total_events: 2000 } }\n",
    );
    assert_eq!(v["verification"]["distinct"], 2000, "{}", v["verification"]);
    assert_eq!(v["hec_codes"]["0"], v["summary"]["batches_accepted"]);
}

#[test]
fn request_cap_grows_batches_to_keep_the_event_rate() {
    let v = run_ok(
        "schema_version: \"1.0\"\ntarget:\n  url: builtin\n  batch: { max_events: 10 }\n  limits: { max_requests_per_sec: 20 }\nsource: { id: firewall.traffic }\nworkload: { eps: 2000, stop: { after: 3s } }\n",
    );
    // 2,000 eps under 20 requests/s: batches of 100, about 60 requests in 3 s.
    assert_eq!(v["batch_max_events"], 100);
    let s = &v["summary"];
    assert_eq!(s["events_accepted"], 6000, "{s}");
    let batches = s["batches_sent"].as_u64().unwrap();
    assert!((58..=66).contains(&batches), "{batches} requests");
}

/// The report's timeline asks for `want` events/s in its first seconds, one per second.
fn assert_target_eps(v: &serde_json::Value, want: &[f64]) {
    let target: Vec<f64> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .take(want.len())
        .map(|r| r["target_eps"].as_f64().unwrap())
        .collect();
    assert_eq!(target.len(), want.len(), "{target:?}");
    for (got, want) in target.iter().zip(want) {
        assert!((got - want).abs() < 1.0, "{target:?}");
    }
}

#[test]
fn ramp_profile_raises_the_rate_second_by_second() {
    let v = run_ok(
        "schema_version: \"1.0\"\ntarget: { url: builtin, batch: { max_events: 50 } }\nsource: { id: firewall.traffic }\nworkload:\n  profile: ramp\n  ramp: { from_eps: 500, to_eps: 4500, over: 4s }\n  stop: { after: 5s }\n",
    );
    // Seconds 0..4 of a 500 → 4,500 ramp over 4 s, then held: 1000, 2000, 3000, 4000, 4500.
    assert_target_eps(&v, &[1000.0, 2000.0, 3000.0, 4000.0, 4500.0]);
    // Area: (500 + 4500) / 2 * 4 + 4500 = 14,500 events.
    assert_eq!(v["summary"]["events_sent"], 14500, "{}", v["summary"]);
}

#[test]
fn hec_string_framing_keeps_tags_findable() {
    // A JSON pack sent as HEC string events: the tags sit inside escaped JSON strings.
    let v = run_ok(
        "schema_version: \"1.0\"\ntarget:\n  adapter: generic-hec\n  url: builtin\n  hec: { framing: string }\nsource: { id: identity.okta }\nworkload: { eps: 2000, stop: { total_events: 1500 } }\n",
    );
    assert_eq!(v["verification"]["distinct"], 1500, "{}", v["verification"]);
}

#[test]
fn burst_profile_alternates_high_and_low() {
    let v = run_ok(
        "schema_version: \"1.0\"\ntarget: { url: builtin, batch: { max_events: 50 } }\nsource: { id: firewall.traffic }\nworkload:\n  profile: burst\n  burst: { high_eps: 4000, low_eps: 500, period: 2s, duty: 0.5 }\n  stop: { after: 4s }\n",
    );
    assert_target_eps(&v, &[4000.0, 500.0, 4000.0, 500.0]);
    assert_eq!(v["summary"]["events_sent"], 9000, "{}", v["summary"]);
}

/// Two runs' JSON reports merged (their `latency_hdr` histograms decoded and added) hold both
/// runs' samples exactly; `observability.csv` has the JSON timeline row for row.
#[test]
fn reports_merge_exactly_and_the_csv_is_the_timeline() {
    use ingestbench::report::hdr;
    let tmp = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for i in 0..2 {
        let csv = tmp.path().join(format!("out/timeline-{i}.csv"));
        let cfg = write_config(
            tmp.path(),
            &format!("c{i}.yaml"),
            &config(
                "builtin",
                "",
                "{ eps: 2000, stop: { total_events: 3000 } }",
                &format!("observability: {{ csv: \"{}\" }}\n", csv.display()),
            ),
        );
        let (o, v) = run_json(&cfg, 1, 2);
        assert_eq!(o.status.code(), Some(0), "{}", all(&o));
        let text = std::fs::read_to_string(&csv).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(
                "t,target_eps,events_sent,events_accepted,events_failed,errors,reconnects,refused,p50_ms,p99_ms,lag_ms_max,backlog_events,watched_cores,watched_rss_bytes,own_cores,control"
            )
        );
        let timeline = v["timeline"].as_array().unwrap();
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), timeline.len(), "{text}");
        for (row, t) in rows.iter().zip(timeline) {
            let cols: Vec<&str> = row.split(',').collect();
            assert_eq!(cols[0], t["t"].to_string());
            assert_eq!(cols[3], t["events_accepted"].to_string());
        }
        reports.push(v);
    }
    let decoded = |v: &serde_json::Value| {
        hdr::decode(v["latency_hdr"]["intended"].as_str().unwrap()).unwrap()
    };
    let (a, b) = (decoded(&reports[0]), decoded(&reports[1]));
    for (h, v) in [(&a, &reports[0]), (&b, &reports[1])] {
        assert_eq!(
            h.len(),
            v["latency_ms"]["intended"]["count"].as_u64().unwrap()
        );
        let max_ms = v["latency_ms"]["intended"]["max"].as_f64().unwrap();
        assert_eq!(h.max() as f64 / 1000.0, max_ms);
    }
    let mut merged = a.clone();
    merged.add(&b).unwrap();
    assert_eq!(merged.len(), a.len() + b.len());
    assert_eq!(merged.max(), a.max().max(b.max()));
    for v in a.iter_recorded().chain(b.iter_recorded()) {
        let x = v.value_iterated_to();
        assert_eq!(
            merged.count_at(x),
            a.count_at(x) + b.count_at(x),
            "at {x} µs"
        );
    }
}
