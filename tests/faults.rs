//! The fault timeline end to end: a storm, a cut and a pause against the built-in sink; a
//! launched `ingestbench sink` process stalled (SIGSTOP … SIGCONT) and then killed and
//! restarted; a storm set and lifted through a standalone sink's `/_faults`. Every action is
//! on the timeline, in the report's `control` marks and in its `faults` section with the
//! effect the timeline showed and the recovery time measured; what cannot be carried out
//! fails the run (exit 6); a timeline that does not fit its config is refused with the field
//! path and line (exit 2).

mod support;

use std::sync::Mutex;

use serde_json::Value;
use support::peers::free_port;
use support::{SinkProc, all, bin, write_config};

/// The runs here measure time: one at a time.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

fn run(cfg: &str) -> (Option<i32>, Value, String) {
    let out = bin()
        .args(["run", "--config", cfg, "--output", "json", "--no-pin"])
        .args(["--threads", "1", "--workers", "2"])
        .output()
        .unwrap();
    support::assert_reads_back(&out.stdout);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), v, all(&out))
}

fn actions(r: &Value) -> &Vec<Value> {
    r["faults"]["actions"].as_array().expect("faults.actions")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The `control` marks' actions, with their times.
fn marks(r: &Value) -> Vec<(String, f64)> {
    r["control"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["action"].as_str().unwrap().to_string(), f(&m["t_s"])))
        .collect()
}

fn mark_at(r: &Value, action: &str, near: f64) {
    let m = marks(r);
    assert!(
        m.iter().any(|(a, t)| a == action && (t - near).abs() < 0.5),
        "no {action} mark near {near}s: {m:?}"
    );
    let second = near.floor() as u64;
    let row = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["t"].as_u64() == Some(second))
        .unwrap_or_else(|| panic!("no timeline row {second}"));
    let ctl: Vec<&str> = row["control"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        ctl.contains(&action),
        "timeline second {second} lacks {action}: {ctl:?}"
    );
}

/// Sums a timeline column over seconds `from..to`.
fn sum(r: &Value, key: &str, from: u64, to: u64) -> u64 {
    r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| (from..to).contains(&row["t"].as_u64().unwrap()))
        .map(|row| row[key].as_u64().unwrap())
        .sum()
}

/// Began and ended within a few hundred ms of the plan, recovered within `max` seconds.
fn taken_and_recovered(a: &Value, max: f64) {
    let at = f(&a["at_s"]);
    assert!(a["error"].is_null(), "{a}");
    assert!((f(&a["began_s"]) - at).abs() < 0.3, "{a}");
    let end = at + a["for_s"].as_f64().unwrap_or(0.0);
    assert!(f(&a["ended_s"]) >= end - 0.05, "{a}");
    assert_eq!(a["recovered"], true, "{a}");
    let rec = f(&a["recovery_s"]);
    assert!((0.0..=max).contains(&rec), "{a}");
}

#[test]
fn a_storm_a_cut_and_a_pause_against_the_builtin_sink() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "faults.yaml",
        "schema_version: \"1.0\"\n\
         target:\n  url: builtin\n  batch: { max_events: 100 }\n  retry: { max_attempts: 30, max_time: 30s }\n\
         source: { id: aws.cloudtrail }\n\
         workload: { eps: 1000, stop: { after: 10s } }\n\
         slo: { max_recovery: 5s, max_dup_events: 1000 }\n\
         faults:\n\
         \x20 - { at: 2s, action: storm, for: 2s, storm: { share_503: 0.5, retry_after_s: 1 } }\n\
         \x20 - { at: 5s, action: cut }\n\
         \x20 - { at: 7s, action: pause, for: 1s }\n",
    );
    let (code, r, text) = run(&cfg);
    assert_eq!(code, Some(0), "{text}");
    let a = actions(&r);
    assert_eq!(a.len(), 3, "{}", r["faults"]);
    let (storm, cut, pause) = (&a[0], &a[1], &a[2]);
    assert_eq!(storm["action"], "storm");
    assert_eq!(storm["target"], "builtin");
    taken_and_recovered(storm, 5.0);
    taken_and_recovered(cut, 5.0);
    taken_and_recovered(pause, 5.0);
    // The storm refused while it lasted, and only then.
    assert!(storm["effect"]["refused"].as_u64().unwrap() > 0, "{storm}");
    assert!(sum(&r, "refused", 2, 4) > 0);
    assert_eq!(sum(&r, "refused", 0, 2) + sum(&r, "refused", 5, 12), 0);
    // The cut closed both connections; they came back.
    assert!(
        r["summary"]["connections_cut"].as_u64().unwrap() >= 2,
        "{}",
        r["summary"]
    );
    assert!(cut["effect"]["reconnects"].as_u64().unwrap() >= 2, "{cut}");
    // The pause made nothing due for its second.
    let row7 = &r["timeline"][7];
    assert!(f(&row7["target_eps"]) < 50.0, "{row7}");
    for (action, at) in [
        ("storm", 2.0),
        ("storm-end", 4.0),
        ("cut", 5.0),
        ("pause", 7.0),
        ("resume", 8.0),
    ] {
        mark_at(&r, action, at);
    }
    // Nothing accepted was lost; a resend after the cut may be stored twice, never more
    // than what was in flight (two connections of 100 events).
    let v = &r["verification"];
    assert_eq!(v["lost_events"], 0, "{v}");
    assert!(v["duplicates"].as_u64().unwrap() <= 200, "{v}");
    let slo = r["slo"].as_array().unwrap();
    let rec = slo
        .iter()
        .find(|s| s["name"] == "max_recovery_s")
        .expect("max_recovery_s row");
    assert_eq!(rec["pass"], true, "{rec}");
    assert!(r["faults"]["latency_outside_ms"]["count"].as_u64().unwrap() > 0);
}

#[test]
fn a_launched_sink_is_stalled_then_killed_and_restarted() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let log = dir.path().join("sink.log");
    let cfg = write_config(
        dir.path(),
        "stall-kill.yaml",
        &format!(
            "schema_version: \"1.0\"\n\
             target:\n  url: \"http://127.0.0.1:{port}/ingest\"\n  batch: {{ max_events: 50 }}\n  retry: {{ max_attempts: 50, max_time: 60s }}\n\
             source: {{ id: aws.cloudtrail }}\n\
             workload: {{ eps: 500, stop: {{ after: 10s }} }}\n\
             observability:\n  target:\n    command: {bin}\n    args: [sink, --http, \"127.0.0.1:{port}\", --duration, 60s]\n    ready_port: {port}\n    log: {log}\n\
             slo: {{ max_recovery: 5s }}\n\
             faults:\n\
             \x20 - {{ at: 2s, action: stall, for: 2s }}\n\
             \x20 - {{ at: 6s, action: kill, for: 1s }}\n",
            bin = env!("CARGO_BIN_EXE_ingestbench"),
            log = log.display(),
        ),
    );
    let (code, r, text) = run(&cfg);
    assert_eq!(code, Some(0), "{text}");
    let a = actions(&r);
    let (stall, kill) = (&a[0], &a[1]);
    taken_and_recovered(stall, 5.0);
    taken_and_recovered(kill, 5.0);
    let first = stall["pids"][0].as_u64().unwrap();
    assert_eq!(stall["target"], "launched");
    assert_eq!(kill["pids"][0].as_u64().unwrap(), first, "{kill}");
    let second = kill["new_pid"].as_u64().expect("new_pid");
    assert_ne!(second, first);
    // The run stopped the restarted sink (by PID) and says so; the kill was not an early exit.
    let launched = &r["watched"]["launched"];
    assert_eq!(launched["pid"].as_u64(), Some(second), "{launched}");
    assert_eq!(launched["exited_early"], false);
    assert!(
        !ingestbench::observe::alive(second as u32),
        "the restarted sink is still running"
    );
    // Stalled: the events due in its two seconds were answered only after it — counted in
    // their own seconds (every window counts the events scheduled in it), late — and the
    // batches due meanwhile waited for a connection.
    assert_eq!(
        sum(&r, "events_accepted", 2, 4),
        sum(&r, "events_sent", 2, 4),
        "{}",
        r["timeline"]
    );
    assert!(f(&stall["effect"]["p99_ms_max"]) >= 1000.0, "{stall}");
    assert!(
        stall["effect"]["backlog_events_max"].as_u64().unwrap() >= 400,
        "{stall}"
    );
    // Killed: the connections broke and came back to the new process.
    assert!(
        kill["effect"]["reconnects"].as_u64().unwrap() >= 1,
        "{kill}"
    );
    for (action, at) in [
        ("stall", 2.0),
        ("stall-end", 4.0),
        ("kill", 6.0),
        ("restart", 7.0),
    ] {
        mark_at(&r, action, at);
    }
    // Every due event was accepted in the end: retries kept the same bytes across the kill.
    assert_eq!(r["summary"]["events_failed"], 0, "{}", r["summary"]);
    assert_eq!(r["summary"]["shortfall_events"], 0, "{}", r["summary"]);
    // Both processes wrote to the one log.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.matches("sink listening on").count() >= 2,
        "the restart did not append to the log: {text}"
    );
}

#[test]
fn a_storm_through_a_standalone_sinks_control_endpoint_is_lifted_after() {
    let _t = turn();
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--latency-ms", "1"]);
    let base = format!("http://127.0.0.1:{}", sink.port);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "storm.yaml",
        &format!(
            "schema_version: \"1.0\"\n\
             target:\n  url: \"{base}/ingest\"\n  batch: {{ max_events: 50 }}\n  retry: {{ max_attempts: 30, max_time: 30s }}\n\
             source: {{ id: aws.cloudtrail }}\n\
             workload: {{ eps: 400, stop: {{ after: 5s }} }}\n\
             faults:\n\
             \x20 - {{ at: 1s, action: storm, target: \"sink:{base}\", for: 2s, storm: {{ share_429: 0.6, retry_after_s: 1 }} }}\n"
        ),
    );
    let (code, r, text) = run(&cfg);
    assert_eq!(code, Some(0), "{text}");
    let storm = &actions(&r)[0];
    taken_and_recovered(storm, 3.0);
    assert!(sum(&r, "refused", 1, 3) > 0, "{}", r["timeline"]);
    assert_eq!(
        r["status"]["429"].as_u64().unwrap_or(0),
        sum(&r, "refused", 0, 99)
    );
    // The sink has what it had before the storm again.
    let faults: Value = ureq_get(&format!("{base}/_faults"));
    assert_eq!(faults["share_429"], 0.0, "{faults}");
    assert_eq!(faults["latency_ms"], 1, "{faults}");
}

fn ureq_get(url: &str) -> Value {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())",
            url,
        ])
        .output()
        .unwrap();
    support::assert_reads_back(&out.stdout);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn a_fault_that_cannot_be_carried_out_fails_the_run() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "gone.yaml",
        "schema_version: \"1.0\"\ntarget: { url: builtin }\nsource: { id: aws.cloudtrail }\n\
         workload: { eps: 100, stop: { after: 2s } }\n\
         faults:\n  - { at: 1s, action: stall, target: \"name:no-such-process-ib\", for: 1s }\n",
    );
    let (code, r, text) = run(&cfg);
    assert_eq!(code, Some(6), "{text}");
    let a = &actions(&r)[0];
    assert!(
        a["error"]
            .as_str()
            .unwrap()
            .contains("no process named no-such-process-ib"),
        "{a}"
    );
    let reasons = r["verdict"]["reasons"].to_string();
    assert!(
        reasons.contains("fault 0 (stall name:no-such-process-ib)"),
        "{reasons}"
    );
}

#[test]
fn a_timeline_that_does_not_fit_its_config_names_the_field_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let head = "schema_version: \"1.0\"\ntarget: { url: builtin }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 100, stop: { after: 10s } }\n";
    for (faults, path, words) in [
        (
            "faults:\n  - { at: 1s, action: stall, target: \"name:x\" }\n",
            "faults[0].for",
            "needs `for`",
        ),
        (
            "faults:\n  - { at: 1s, action: stall, for: 1s }\n",
            "faults[0].target",
            "observability.target",
        ),
        (
            "faults:\n  - { at: 20s, action: cut }\n",
            "faults[0].at",
            "before the run ends",
        ),
        (
            "faults:\n  - { at: 1s, action: cut, for: 1s }\n",
            "faults[0].for",
            "does not apply to cut",
        ),
        (
            "faults:\n  - { at: 1s, action: storm, for: 1s }\n",
            "faults[0].storm",
            "needs storm",
        ),
        (
            "faults:\n  - { at: 1s, action: storm, for: 1s, storm: { share_503: 2 } }\n",
            "faults[0].storm",
            "share_503",
        ),
        (
            "faults:\n  - { at: 1s, action: storm, target: \"sink:ftp://x\", for: 1s, storm: { share_503: 0.5 } }\n",
            "faults[0].target",
            "sink:URL",
        ),
        (
            "faults:\n  - { at: 1s, action: cut, durtion: 1s }\n",
            "faults[0].durtion",
            "unknown",
        ),
        (
            "faults:\n  - { at: 1s, action: melt }\n",
            "faults[0].action",
            "not one of",
        ),
        (
            "slo: { max_recovery: 5s }\n",
            "slo.max_recovery",
            "give faults",
        ),
        (
            "faults:\n  - { at: 1s, action: kill, target: \"pid:4242\", for: 1s }\n",
            "faults[0].command",
            "restarts after it",
        ),
    ] {
        let cfg = write_config(dir.path(), "bad.yaml", &format!("{head}{faults}"));
        let out = bin()
            .args(["run", "--config", &cfg, "--no-pin"])
            .output()
            .unwrap();
        let text = all(&out);
        assert_eq!(out.status.code(), Some(2), "{faults}: {text}");
        assert!(text.contains(path), "{faults}: want {path}: {text}");
        assert!(text.contains(words), "{faults}: want {words:?}: {text}");
        // Each fault is on line 6 (slo on line 5): the message gives line and column.
        assert!(
            text.contains(&format!("{path} (6:")) || text.contains(&format!("{path} (5:")),
            "{faults}: no line: {text}"
        );
    }
    // The built-in sink's own faults apply to the built-in sink only.
    let cfg = write_config(
        dir.path(),
        "bad.yaml",
        "schema_version: \"1.0\"\ntarget: { url: \"http://127.0.0.1:9/x\", builtin: { faults: { share_429: 0.5 } } }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 100, stop: { after: 1s } }\n",
    );
    let out = bin().args(["validate", "--config", &cfg]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(all(&out).contains("target.builtin"), "{}", all(&out));
}

/// The send → stored lag through a stalled collector: a launched sink stopped for 2 s holds
/// what arrived in that time until it is continued, so the lag its tags' send times give (the
/// run's own `verify:` asks it while it still runs) reaches the stall, while nothing is lost.
#[test]
fn the_ingest_lag_through_a_stall_reaches_the_stall() {
    let _t = turn();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = write_config(
        dir.path(),
        "stall-lag.yaml",
        &format!(
            "schema_version: \"1.0\"\n\
             target:\n  url: \"http://127.0.0.1:{port}/ingest\"\n  batch: {{ max_events: 50 }}\n  retry: {{ max_attempts: 50, max_time: 60s }}\n\
             source: {{ id: aws.cloudtrail }}\n\
             workload: {{ eps: 500, stop: {{ after: 6s }} }}\n\
             observability:\n  target:\n    command: {bin}\n    args: [sink, --http, \"127.0.0.1:{port}\", --duration, 60s]\n    ready_port: {port}\n\
             verify: {{ sources: [\"sink:http://127.0.0.1:{port}\"], settle_timeout: 2s }}\n\
             faults:\n\
             \x20 - {{ at: 2s, action: stall, for: 2s }}\n",
            bin = env!("CARGO_BIN_EXE_ingestbench"),
        ),
    );
    let (code, r, text) = run(&cfg);
    assert_eq!(code, Some(0), "{text}");
    let src = &r["store_verification"]["result"]["sources"][0];
    assert_eq!(src["lost"], 0, "{src}");
    let lag = &src["ingest_lag"];
    assert_eq!(
        lag["count"].as_u64(),
        r["summary"]["events_accepted"].as_u64(),
        "every event carried its send time: {lag}"
    );
    // Events sent at the stall's start waited for all of it; most waited for none.
    assert!(f(&lag["max_ms"]) >= 1800.0, "{lag}");
    assert!(f(&lag["p50_ms"]) < 1000.0, "{lag}");
}

/// A process the run did not start, named by PID: `stall` stops and continues it, and
/// `restart` with a command of its own ends it (SIGTERM) and starts that command, which the
/// run then owns and stops by PID when it ends.
#[test]
fn a_process_named_by_pid_is_stalled_and_restarted_from_a_given_command() {
    let _t = turn();
    let mut child = std::process::Command::new("python3")
        .args(["-c", "import time; time.sleep(60)"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("restarted");
    let cfg = write_config(
        dir.path(),
        "pid.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget: {{ url: builtin }}\nsource: {{ id: aws.cloudtrail }}\n\
             workload: {{ eps: 200, stop: {{ after: 4s }} }}\n\
             faults:\n\
             \x20 - {{ at: 1s, action: stall, target: \"pid:{pid}\", for: 1s }}\n\
             \x20 - {{ at: 2500ms, action: restart, target: \"pid:{pid}\", command: python3,\n\
             \x20     args: [-c, \"import pathlib, time; pathlib.Path('{m}').touch(); time.sleep(60)\"] }}\n",
            m = marker.display()
        ),
    );
    let (code, r, text) = run(&cfg);
    // The old process ended on SIGTERM (reaped here: it is this test's child).
    let status = support::wait_exit(&mut child, std::time::Duration::from_secs(5), "sleeper");
    assert_eq!(code, Some(0), "{text}");
    assert!(!status.success(), "the process was not ended: {status:?}");
    let a = actions(&r);
    assert_eq!(a[0]["pids"][0].as_u64(), Some(u64::from(pid)), "{}", a[0]);
    taken_and_recovered(&a[0], 5.0);
    let restart = &a[1];
    assert!(restart["error"].is_null(), "{restart}");
    let new = restart["new_pid"].as_u64().expect("new_pid");
    assert_ne!(new, u64::from(pid));
    assert!(marker.exists(), "the given command did not run");
    // The run stopped what it started.
    assert!(
        !ingestbench::observe::alive(new as u32),
        "the restarted process still runs"
    );
    for (action, at) in [("stall", 1.0), ("stall-end", 2.0), ("restart", 2.5)] {
        mark_at(&r, action, at);
    }
}
