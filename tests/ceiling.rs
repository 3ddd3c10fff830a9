//! The ceiling search end to end: `run` with `workload.find_ceiling: true` against collectors
//! whose capacity is known — one that answers 429 beyond X events/s, one that slows down
//! instead — finds X within ±10 % and names the target as the limit; a run whose generator
//! is the limit (one thread against a target that takes anything) says so and does not exit
//! 0; the step table reaches the JSON report, the text report and the CSV. The searches run
//! one at a time: each judges rates, and two at once on a small machine would judge each
//! other.

mod support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use support::{all, bin};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `tests/support/capacity_sink.py` answering at most `capacity_eps` events/s by `mode`,
/// stopped by its PID when dropped.
/// A sink of `capacity_eps` whose token bucket (`refuse`) holds a quarter second of events: a
/// busy 2-core machine sends in bursts that a tenth of a second would refuse below capacity
/// (and each refusal adds the second of its Retry-After to a step's p99).
fn capacity_sink(capacity_eps: u32, mode: &str) -> support::PyServer {
    support::PyServer::start(
        "capacity_sink.py",
        &[
            &capacity_eps.to_string(),
            mode,
            "240",
            &(capacity_eps / 4).to_string(),
        ],
    )
}

fn search_config(url: &str, extra_target: &str, source: &str, workers: u32, start: u32) -> String {
    format!(
        r#"schema_version: "1.0"
name: ceiling-test
seed: 7
target:
  adapter: {adapter}
  url: {url}
{extra_target}
source:
  id: {source}
workload:
  find_ceiling: true
  workers: {workers}
  ceiling: {{ start_eps: {start}, hold: 2s, warmup: 1s, precision: 0.05, max_steps: 12 }}
"#,
        adapter = if url.starts_with("http") {
            "lphc"
        } else {
            "syslog"
        },
    )
}

/// Runs the search and gives (exit code, the JSON report, stderr).
fn search(dir: &Path, yaml: &str, args: &[&str]) -> (i32, Value, String) {
    let cfg = dir.join("ceiling.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let out = bin()
        .args(["run", "--config"])
        .arg(&cfg)
        .args(["--output", "json", "--no-pin"])
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let text = String::from_utf8_lossy(&out.stdout);
    let rep: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{}", all(&out)));
    (code, rep, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn steps(rep: &Value) -> &Vec<Value> {
    rep["ceiling"]["steps"].as_array().expect("ceiling.steps")
}

fn within(found: f64, x: f64) -> bool {
    (found - x).abs() <= 0.10 * x
}

#[test]
fn a_collector_that_refuses_beyond_its_capacity() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let sink = capacity_sink(3000, "refuse");
    let csv = dir.path().join("steps.csv");
    let yaml = format!(
        "{}observability:\n  csv: {}\n",
        search_config(
            &format!("http://127.0.0.1:{}/ingest", sink.port),
            "  batch: { max_events: 100 }",
            "aws.cloudtrail",
            8,
            1000,
        ),
        csv.display()
    );
    let (code, rep, err) = search(dir.path(), &yaml, &["--threads", "1"]);
    let c = &rep["ceiling"];
    let found = c["ceiling_eps"]
        .as_f64()
        .unwrap_or_else(|| panic!("{c:#}\n{err}"));
    assert!(
        within(found, 3000.0),
        "ceiling {found}, capacity 3000:\n{err}"
    );
    assert_eq!(c["limited_by"], "target", "{c:#}");
    assert_eq!(code, 0, "{err}");
    assert_eq!(rep["summary"]["ceiling_eps"].as_f64(), Some(found));
    assert_eq!(rep["verdict"]["exit_code"], 0);
    // The first failing step above the ceiling was refused, and says so.
    let bad = c["first_failed_eps"].as_f64().unwrap();
    assert!(
        bad > found && (bad - found) <= 0.05 * found + 1.0,
        "{bad} {found}"
    );
    let failed: Vec<&Value> = steps(&rep)
        .iter()
        .filter(|s| s["sustained"] == false)
        .collect();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().any(|s| s["refused"].as_u64().unwrap() > 0),
        "no failed step saw a 429: {c:#}"
    );
    // The first steps go up geometrically; the rest bisect.
    let st = steps(&rep);
    assert_eq!(st[0]["target_eps"].as_f64(), Some(1000.0));
    assert_eq!(st[1]["target_eps"].as_f64(), Some(2000.0));
    assert_eq!(st[0]["phase"], "up");
    assert_eq!(st.last().unwrap()["phase"], "bisect");
    // Progress on stderr, one line per step.
    assert_eq!(
        err.matches("\nstep ").count() + usize::from(err.starts_with("step ")),
        st.len(),
        "{err}"
    );
    // The CSV: the step table, one row per step.
    let table = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("step,phase,target_eps,achieved_eps"),
        "{table}"
    );
    assert_eq!(lines.len(), st.len() + 1, "{table}");
}

#[test]
fn a_collector_that_slows_down_beyond_its_capacity() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let sink = capacity_sink(3000, "slow");
    // Steps of 3 s judged: beyond its capacity the queue grows by the excess, and 8
    // connections all wait once it is a quarter second deep — after 3 s of a step at 3,300
    // eps (+10 %), not always after 2.
    let yaml = search_config(
        &format!("http://127.0.0.1:{}/ingest", sink.port),
        "  batch: { max_events: 100 }",
        "aws.cloudtrail",
        8,
        1000,
    )
    .replace("hold: 2s", "hold: 3s");
    let cfg = dir.path().join("slow.yaml");
    std::fs::write(&cfg, &yaml).unwrap();
    let out = bin()
        .args(["run", "--config"])
        .arg(&cfg)
        .args(["--threads", "1", "--no-pin"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    // The text report: the step table and the result line, the verdict last.
    assert!(text.contains("Ceiling search ("), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("ceiling  "))
        .unwrap_or_else(|| panic!("{text}"));
    let found: f64 = line
        .trim_start_matches("ceiling  ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{line}"));
    assert!(within(found, 3000.0), "{line}");
    assert!(line.contains("limited by the target"), "{line}");
    assert!(
        !text.contains("429/503)"),
        "a slow collector refuses nothing:\n{text}"
    );
    assert!(text.trim_end().ends_with("PASS  exit 0"), "{text}");
}

/// A syslog TCP target that reads and drops everything as fast as the kernel hands it over,
/// so only the generator can be the limit.
fn discard_listener() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let _ = c.set_read_timeout(Some(Duration::from_secs(120)));
            std::thread::spawn(move || {
                let mut c = c;
                let mut buf = vec![0u8; 1 << 20];
                while matches!(c.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    port
}

#[test]
fn a_generator_that_cannot_keep_up_is_not_called_the_targets_limit() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let port = discard_listener();
    let yaml = search_config(
        &format!("tcp://127.0.0.1:{port}"),
        "  syslog: { framing: octet-counting, format: rfc5424 }\n  batch: { max_events: 20 }",
        "linux.syslog",
        2,
        100_000,
    )
    .replace(
        "precision: 0.05, max_steps: 12",
        "precision: 0.2, max_steps: 8",
    );
    let (code, rep, err) = search(dir.path(), &yaml, &["--threads", "1"]);
    let c = &rep["ceiling"];
    assert_eq!(c["limited_by"], "generator", "{c:#}\n{err}");
    assert_eq!(code, 3, "a ceiling that is ours is not a pass:\n{err}");
    let reasons = rep["verdict"]["reasons"].to_string();
    assert!(
        reasons.contains("the generator, not the target"),
        "{reasons}"
    );
    let failing: Vec<&Value> = steps(&rep)
        .iter()
        .filter(|s| s["sustained"] == false)
        .collect();
    assert!(
        failing.iter().all(|s| s["limited_by"] == "generator"),
        "{c:#}"
    );
    assert!(
        c["detail"].as_str().unwrap().starts_with("the generator"),
        "{c:#}"
    );
}

#[test]
fn settings_that_do_not_fit_a_search_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "workload:\n  profile: ramp\n  find_ceiling: true\n  ramp: { from_eps: 1, to_eps: 2, over: 1s }\n",
            "workload.profile",
        ),
        (
            "workload:\n  eps: 10\n  stop: { after: 1s }\n  ceiling: { hold: 2s }\n",
            "workload.ceiling",
        ),
        (
            "workload:\n  find_ceiling: true\n  ceiling: { growth: 1.0 }\n",
            "workload.ceiling.growth",
        ),
        (
            "workload:\n  find_ceiling: true\n  ceiling: { hold: 1s, colour: blue }\n",
            "workload.ceiling.colour",
        ),
        (
            "workload:\n  find_ceiling: true\n  ceiling: { start_eps: 500, max_eps: 100 }\n",
            "workload.ceiling.max_eps",
        ),
        (
            "workload:\n  find_ceiling: true\nobservability:\n  hdr_log: x.hlog\n",
            "observability.hdr_log",
        ),
    ];
    for (i, (workload, path)) in cases.iter().enumerate() {
        let cfg = dir.path().join(format!("bad{i}.yaml"));
        std::fs::write(
            &cfg,
            format!(
                "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: builtin\nsource:\n  id: aws.cloudtrail\n{workload}"
            ),
        )
        .unwrap();
        let out = bin().args(["run", "--config"]).arg(&cfg).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "case {i}: {}", all(&out));
        assert!(
            all(&out).contains(path),
            "case {i} names {path}: {}",
            all(&out)
        );
    }
}

#[test]
fn a_request_cap_is_named_as_the_limit_and_is_not_the_targets_ceiling() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // 20 requests/s of at most 20 KB (~11 CloudTrail events): about 230 events/s, whatever the
    // built-in sink could take.
    let yaml = search_config(
        "builtin",
        "  batch: { max_events: 10, max_bytes: 20KB }\n  limits: { max_requests_per_sec: 20 }",
        "aws.cloudtrail",
        2,
        100,
    )
    .replace("adapter: syslog", "adapter: lphc")
    .replace(
        "precision: 0.05, max_steps: 12",
        "precision: 0.2, max_steps: 8",
    );
    let (code, rep, err) = search(dir.path(), &yaml, &["--threads", "1"]);
    let c = &rep["ceiling"];
    assert_eq!(c["limited_by"], "request cap", "{c:#}\n{err}");
    assert_eq!(code, 3, "{err}");
    let found = c["ceiling_eps"].as_f64().unwrap();
    assert!((100.0..=300.0).contains(&found), "{c:#}");
    assert!(
        rep["verdict"]["reasons"]
            .to_string()
            .contains("not the target's ceiling"),
        "{}",
        rep["verdict"]
    );
}

#[test]
fn a_search_out_of_steps_with_every_step_held_says_so_with_the_rate_held() {
    // Issue 33 case 14: 427890a said "FAIL … limited by the max_steps" (exit 3). The search
    // found a floor, not a ceiling: its own verdict, the highest rate held, still not 0.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let yaml = "schema_version: \"1.0\"\nname: out-of-steps\nseed: 7\ntarget: { url: builtin }\nsource: { id: linux.syslog }\nworkload:\n  find_ceiling: true\n  ceiling: { start_eps: 100, hold: 1s, warmup: 1s, max_steps: 2 }\n";
    let (code, rep, err) = search(dir.path(), yaml, &["--threads", "1"]);
    let c = &rep["ceiling"];
    assert_eq!(code, 3, "{c:#}\n{err}");
    assert_eq!(c["limited_by"], "out of steps", "{c:#}");
    assert_eq!(c["ceiling_eps"].as_f64(), Some(200.0), "{c:#}");
    assert!(c["first_failed_eps"].is_null(), "{c:#}");
    let reasons = rep["verdict"]["reasons"].to_string();
    assert!(reasons.contains("out of steps: held 200 eps"), "{reasons}");
    assert!(!reasons.contains("limited by"), "{reasons}");
}

#[test]
fn probe_ceiling_out_of_time_with_every_step_held_says_so() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let sink = support::SinkProc::start(&["--http", "127.0.0.1:0"]);
    let out = bin()
        .args([
            "probe",
            "--url",
            &format!("http://127.0.0.1:{}/", sink.port),
            "--adapter",
            "lphc",
            "--ceiling",
            "--timeout",
            "20s",
        ])
        .output()
        .unwrap();
    let text = all(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("out of time: held"), "{text}");
    assert!(!text.contains("limited by the max_steps"), "{text}");
}
