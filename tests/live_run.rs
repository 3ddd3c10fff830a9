//! A real `ingestbench run` watched and steered from outside while it runs: its `/metrics`
//! scraped twice (the reference Python parser; counters only grow) and by a real Prometheus
//! every second, whose query API must give the report's final figures; its `/status.json` read
//! twice (it moves); its control endpoints used to pause, resume, set the rate and stop, each
//! visible in the report's timeline; and its status page in a real headless Chromium. Built-in
//! sink, 127.0.0.1, every wait bounded.

mod support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::browser::{Script, number};
use support::peers::{free_port, require};
use support::prometheus::{self as prom, Prometheus};
use support::{bin, stop_child, write_config};

fn config(eps: u32, after: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nname: live-run\nseed: 21\ntarget: {{ url: builtin, batch: {{ max_events: 100 }} }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: {eps}, stop: {{ after: {after} }} }}\n"
    )
}

/// A run started in the background; stopped by its PID if the test ends early.
struct RunProc {
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl RunProc {
    fn start(yaml: &str, extra: &[String]) -> RunProc {
        let dir = tempfile::tempdir().unwrap();
        let cfg = write_config(dir.path(), "c.yaml", yaml);
        let child = bin()
            .args(["run", "--config", &cfg, "--threads", "1", "--workers", "2"])
            .args(["--output", "json"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        RunProc {
            child: Some(child),
            _dir: dir,
        }
    }

    /// Waits for the run to exit (at most `within`): exit code, JSON report, stderr.
    fn finish(mut self, within: Duration) -> (Option<i32>, Value, String) {
        let mut child = self.child.take().unwrap();
        support::wait_exit(&mut child, within, "the run");
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let v = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("no JSON report ({e}): {err}"));
        (o.status.code(), v, err)
    }
}

impl Drop for RunProc {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            stop_child(c);
        }
    }
}

fn get(url: &str) -> Option<String> {
    let mut r = prom::http().get(url).call().ok()?;
    (r.status().as_u16() == 200).then(|| r.body_mut().read_to_string().ok())?
}

/// Waits until `url` answers 200 (bounded) and returns the body.
fn wait_get(url: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(b) = get(url) {
            return b;
        }
        assert!(Instant::now() < deadline, "{url} never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn post(base: &str, path: &str, body: &str) -> (u16, String) {
    let mut r = prom::http()
        .post(&format!("{base}{path}"))
        .header("Content-Type", "application/json")
        .send(body)
        .unwrap();
    (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
}

fn status(base: &str) -> Value {
    serde_json::from_str(&wait_get(&format!("{base}status.json"))).unwrap()
}

/// The value of one sample of a parsed exposition.
fn sample(families: &[prom::Family], name: &str, label: Option<(&str, &str)>) -> f64 {
    families
        .iter()
        .flat_map(|f| f.samples.iter())
        .find(|s| {
            s.name == name
                && label.is_none_or(|(k, v)| s.labels.get(k).map(String::as_str) == Some(v))
        })
        .unwrap_or_else(|| panic!("no sample {name} {label:?}"))
        .value
}

fn actions(report: &Value) -> Vec<String> {
    report["control"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["action"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn metrics_status_and_control_of_a_real_run_agree_with_its_report() {
    let Some(prom_bin) = require(
        "prometheus (Debian package prometheus)",
        prom::prometheus_bin(),
    ) else {
        return;
    };
    let Some(python) = require(
        "python3 with prometheus_client (PyPI prometheus-client)",
        prom::python_parser(),
    ) else {
        return;
    };
    let (sp, mp) = (free_port(), free_port());
    let dir = tempfile::tempdir().unwrap();
    let prometheus = Prometheus::start(
        &prom_bin,
        dir.path(),
        &[format!("127.0.0.1:{mp}").parse().unwrap()],
    );
    let run = RunProc::start(
        &config(2000, "10s"),
        &[
            "--status".into(),
            format!("127.0.0.1:{sp}"),
            "--prometheus".into(),
            format!("127.0.0.1:{mp}"),
            "--linger".into(),
            "4s".into(),
        ],
    );
    let base = format!("http://127.0.0.1:{sp}/");
    let metrics_url = format!("http://127.0.0.1:{mp}/metrics");

    // Two scrapes while it runs (the first once something was accepted): the reference parser
    // reads both, counters only grow.
    let accepted = ("outcome", "accepted");
    let deadline = Instant::now() + Duration::from_secs(15);
    let a = loop {
        let a = prom::parse_exposition(&python, &wait_get(&metrics_url));
        if sample(&a, "ingestbench_events_total", Some(accepted)) > 0.0 {
            break a;
        }
        assert!(Instant::now() < deadline, "nothing accepted in 15 s");
        std::thread::sleep(Duration::from_millis(200));
    };
    // Snapshots come once a second; a loaded CI machine can delay one, so the second scrape
    // waits for a newer snapshot (bounded), and the counter must have grown by then.
    let a_acc = sample(&a, "ingestbench_events_total", Some(accepted));
    let deadline = Instant::now() + Duration::from_secs(10);
    let b = loop {
        std::thread::sleep(Duration::from_millis(600));
        let b = prom::parse_exposition(&python, &wait_get(&metrics_url));
        if sample(&b, "ingestbench_events_total", Some(accepted)) > a_acc
            || Instant::now() >= deadline
        {
            break b;
        }
    };
    let b_acc = sample(&b, "ingestbench_events_total", Some(accepted));
    assert!(b_acc > a_acc && a_acc > 0.0, "{a_acc} then {b_acc}");
    for (name, label) in [
        ("ingestbench_events_total", Some(("outcome", "sent"))),
        ("ingestbench_batches_total", Some(("outcome", "sent"))),
        ("ingestbench_sent_bytes_total", None),
        ("ingestbench_events_due_total", None),
    ] {
        assert!(
            sample(&b, name, label) >= sample(&a, name, label),
            "{name} went down"
        );
    }
    assert_eq!(
        sample(&b, "ingestbench_state", Some(("state", "running"))),
        1.0
    );

    // The status JSON moves between two reads.
    let s1 = status(&base);
    // A snapshot a second: the next one comes within a few (a loaded machine delays it).
    let mut s2 = status(&base);
    for _ in 0..30 {
        if s2["seq"].as_u64() > s1["seq"].as_u64() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        s2 = status(&base);
    }
    assert_eq!(s1["schema"], "ingestbench.status/1");
    assert_eq!(s1["run"]["name"], "live-run");
    assert!(s2["seq"].as_u64() > s1["seq"].as_u64());
    assert!(s2["cumulative"]["events_sent"].as_u64() > s1["cumulative"]["events_sent"].as_u64());

    // Steer it through the control endpoints.
    assert_eq!(post(&base, "control/pause", "{}").0, 200);
    assert_eq!(post(&base, "control/pause", "{}").0, 409);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(status(&base)["state"], "paused");
    assert_eq!(post(&base, "control/resume", "{}").0, 200);
    let (code, body) = post(&base, "control/rate", r#"{"factor": 1.5}"#);
    assert_eq!(code, 200, "{body}");

    let (code, report, err) = run.finish(Duration::from_secs(40));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(actions(&report), ["pause", "resume", "rate"]);
    let marked: Vec<&Value> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["control"].is_array())
        .collect();
    assert!(!marked.is_empty(), "no control mark in the timeline");
    assert!(report["paused_s"].as_f64().unwrap() > 1.0);
    assert!(
        err.contains(&format!("status page: http://127.0.0.1:{sp}/")),
        "{err}"
    );
    assert!(
        err.contains(&format!("metrics: http://127.0.0.1:{mp}/metrics")),
        "{err}"
    );

    // Prometheus scraped the final figures: they are the report's. The run has exited by now,
    // so its series may already be marked stale: ask for the last sample scraped.
    let last = |q: &str| format!("last_over_time({q}[5m])");
    let s = &report["summary"];
    for (outcome, key) in [
        ("sent", "events_sent"),
        ("accepted", "events_accepted"),
        ("failed", "events_failed"),
    ] {
        let q = last(&format!(
            r#"ingestbench_events_total{{outcome="{outcome}"}}"#
        ));
        let want = s[key].as_f64().unwrap();
        assert_eq!(
            prometheus.wait_value(&q, want, Duration::from_secs(10)),
            Some(want),
            "{q}; prometheus log:\n{}",
            prometheus.log_text()
        );
    }
    let q = last(r#"ingestbench_latency_seconds_count{clock="intended"}"#);
    let want = report["latency_ms"]["intended"]["count"].as_f64().unwrap();
    assert_eq!(
        prometheus.wait_value(&q, want, Duration::from_secs(5)),
        Some(want),
        "{q}"
    );
    let q = last(r#"ingestbench_stored_events{kind="distinct"}"#);
    let want = report["verification"]["distinct"].as_f64().unwrap();
    assert_eq!(
        prometheus.wait_value(&q, want, Duration::from_secs(5)),
        Some(want),
        "{q}"
    );
    let q = last(r#"ingestbench_state{state="finished"}"#);
    assert_eq!(
        prometheus.wait_value(&q, 1.0, Duration::from_secs(5)),
        Some(1.0),
        "{q}"
    );
}

#[test]
fn the_status_page_of_a_real_run_in_chromium() {
    let sp = free_port();
    let run = RunProc::start(
        &config(1000, "30s"),
        &["--status".into(), format!("127.0.0.1:{sp}")],
    );
    let base = format!("http://127.0.0.1:{sp}/");
    wait_get(&format!("{base}status.json"));
    let Some(mut script) = Script::start("live", &base, None) else {
        return;
    };
    let live = script.next(Duration::from_secs(45));
    let (first, second) = (&live["first"], &live["second"]);
    assert_eq!(first["name"], "live-run", "{live}");
    assert_eq!(first["state"], "running");
    assert!(
        number(&second["events_sent"]) > number(&first["events_sent"]),
        "{live}"
    );
    assert_eq!(live["after_pause"]["state"], "paused", "{live}");
    // Stop it from outside; the run ends, reports, and its page goes away.
    assert_eq!(post(&base, "control/stop", "{}").0, 200);
    let (code, report, err) = run.finish(Duration::from_secs(30));
    assert_eq!(code, Some(6), "{err}");
    assert!(err.contains("stopped by control"), "{err}");
    assert_eq!(actions(&report), ["pause", "resume", "rate", "stop"]);
    assert_eq!(report["verification"]["lost_events"], 0);
    script.say("the run has ended");
    let ended = script.next(Duration::from_secs(25));
    assert_eq!(ended["banner_kind"], "lost", "{ended}");
    script.finish();
}
