//! Watched processes in a run, end to end: `--watch pid:N` on a busy child reaches the report
//! (per process, summed, ingestbench's own), the timeline, the CSV and the status JSON; a
//! watched-CPU objective fails the run (exit 3); a launched target (`observability.target`:
//! an `ingestbench sink` process) is started, waited for, watched and stopped by PID; one
//! that never listens fails the run (exit 6); a PID that is not there is a config error
//! (exit 2); and the sizing table of a steps run, against the built-in sink and against a
//! real syslog-ng launched as the target, matches the run's per-second timeline.

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use support::peers::{free_port, require, syslog_ng_bin, syslog_ng_version};
use support::{all, bin, write_config};

/// A child busy `duty` of each 100 ms for `secs`; killed (by PID) when dropped.
struct Busy(Child);

impl Busy {
    fn start(duty: f64, secs: u32) -> Busy {
        let code = format!(
            "import time\nend=time.time()+{secs}\nwhile time.time()<end:\n t=time.time()\n while time.time()-t<{b}: pass\n time.sleep({s})\n",
            b = 0.1 * duty,
            s = 0.1 * (1.0 - duty)
        );
        Busy(
            Command::new("python3")
                .args(["-c", &code])
                .stdout(Stdio::null())
                .spawn()
                .expect("python3"),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run_json(cfg: &str, extra: &[String]) -> (Option<i32>, Value, String) {
    let out = bin()
        .args(["run", "--config", cfg, "--output", "json", "--no-pin"])
        .args(extra)
        .output()
        .unwrap();
    support::assert_reads_back(&out.stdout);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), v, all(&out))
}

fn builtin(workload: &str, more: &str) -> String {
    format!(
        "schema_version: \"1.0\"\ntarget: {{ adapter: lphc, url: builtin, batch: {{ max_events: 20 }} }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {workload}\n{more}"
    )
}

#[test]
fn a_watched_process_reaches_the_report_timeline_csv_and_status() {
    let busy = Busy::start(0.3, 30);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let cfg = write_config(
        dir.path(),
        "w.yaml",
        &builtin(
            "{ eps: 200, stop: { after: 4s } }",
            &format!("observability: {{ csv: {} }}\n", csv.display()),
        ),
    );
    let (code, v, out) = run_json(&cfg, &["--watch".into(), format!("pid:{}", busy.pid())]);
    assert_eq!(code, Some(0), "{out}");
    let w = &v["watched"];
    let p = &w["processes"][0];
    assert_eq!(p["pid"].as_u64(), Some(u64::from(busy.pid())), "{w:#}");
    assert_eq!(p["name"], "python3");
    let cores = p["cores_mean"].as_f64().unwrap();
    // Busy 30 % of wall time; its CPU share is lower when the machine is short of cores
    // (the observe tests measure the accuracy alone, here it only has to be there).
    assert!((0.05..=0.45).contains(&cores), "a 30 % busy loop: {cores}");
    assert!(p["rss_peak_bytes"].as_u64().unwrap() > 1 << 20);
    assert!(w["own"]["cpu_s"].as_f64().unwrap() > 0.0, "{w:#}");
    assert!(w["total"]["cpu_s"].as_f64().unwrap() >= p["cpu_s"].as_f64().unwrap());
    let rows = v["timeline"].as_array().unwrap();
    let with: Vec<f64> = rows
        .iter()
        .filter_map(|r| r["watched_cores"].as_f64())
        .collect();
    assert!(with.len() >= 3, "{rows:?}");
    assert!(with.iter().any(|c| *c > 0.1), "{with:?}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let k = header.iter().position(|h| *h == "watched_cores").unwrap();
    assert!(
        text.lines()
            .skip(1)
            .any(|l| l.split(',').nth(k).is_some_and(|c| !c.is_empty())),
        "{text}"
    );
}

#[test]
fn a_watched_cpu_objective_fails_the_run() {
    let busy = Busy::start(0.5, 30);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "w.yaml",
        &builtin(
            "{ eps: 100, stop: { after: 4s } }",
            "slo: { max_watched_cpu_cores: 0.05, max_watched_rss: 1GiB }\n",
        ),
    );
    let (code, v, out) = run_json(&cfg, &["--watch".into(), format!("pid:{}", busy.pid())]);
    assert_eq!(code, Some(3), "{out}");
    let rows = v["slo"].as_array().unwrap();
    let cpu = rows
        .iter()
        .find(|r| r["name"] == "max_watched_cpu_cores")
        .unwrap();
    assert_eq!(cpu["pass"], false, "{cpu}");
    let rss = rows
        .iter()
        .find(|r| r["name"] == "max_watched_rss")
        .unwrap();
    assert_eq!(rss["pass"], true, "{rss}");
    assert!(out.contains("max_watched_cpu_cores"), "{out}");
}

#[test]
fn a_launched_target_is_started_watched_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let sink = env!("CARGO_BIN_EXE_ingestbench");
    let cfg = write_config(
        dir.path(),
        "l.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget: {{ adapter: lphc, url: \"http://127.0.0.1:{port}/ingest\", batch: {{ max_events: 20 }} }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 200, stop: {{ after: 3s }} }}\nobservability:\n  target:\n    command: {sink}\n    args: [sink, --http, \"127.0.0.1:{port}\", --duration, 60s]\n    ready_port: {port}\n    log: {}\n",
            dir.path().join("sink.log").display()
        ),
    );
    let (code, v, out) = run_json(&cfg, &[]);
    assert_eq!(code, Some(0), "{out}");
    let l = &v["watched"]["launched"];
    let pid = l["pid"].as_u64().unwrap();
    assert_eq!(l["exited_early"], false, "{l}");
    assert_eq!(l["killed"], false, "{l}");
    let p = &v["watched"]["processes"][0];
    assert_eq!(p["pid"].as_u64(), Some(pid));
    // CPU is counted in clock ticks (10 ms): a sink taking 600 events can
    // truly show 0.0, so the proof it was watched is the sampling itself.
    assert!(p["cpu_s"].is_number(), "{p}");
    assert!(p["rss_peak_bytes"].as_u64().unwrap() > 0, "watched: {p}");
    assert!(p["fds_max"].as_u64().unwrap() > 0, "watched: {p}");
    assert!(
        p["last_t"].as_u64().unwrap() >= 2,
        "watched over the run, not once: {p}"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the launched target is gone after the run"
    );
    assert_eq!(v["summary"]["events_accepted"].as_u64(), Some(600), "{out}");
}

#[test]
fn a_launched_target_that_never_listens_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = write_config(
        dir.path(),
        "l.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget: {{ adapter: lphc, url: \"http://127.0.0.1:{port}/ingest\" }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 200, stop: {{ after: 3s }} }}\nobservability:\n  target: {{ command: python3, args: [-c, \"import time; print('up'); time.sleep(30)\"], ready_port: {port}, ready_timeout: 1s }}\n"
        ),
    );
    let (code, _, out) = run_json(&cfg, &[]);
    assert_eq!(code, Some(6), "{out}");
    assert!(out.contains("observability.target"), "{out}");
}

#[test]
fn watching_a_pid_that_is_not_there_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "w.yaml",
        &builtin("{ eps: 100, stop: { after: 2s } }", ""),
    );
    let (code, _, out) = run_json(&cfg, &["--watch".into(), "pid:999999999".into()]);
    assert_eq!(code, Some(2), "{out}");
    let (code, _, out) = run_json(&cfg, &["--watch".into(), "pod:12".into()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("--watch"), "{out}");
}

/// Issue 33 case 10: `--watch cgroup:PATH` for a cgroup the config watches too is one cgroup
/// in the report, and the total CPU is its CPU once (before: listed twice, the total doubled;
/// `--watch` was added to the config's list and then added again).
#[test]
fn a_cgroup_in_the_config_and_in_watch_counts_once() {
    let Some(cg) = require(
        "a cgroup v2 directory for this process (/proc/self/cgroup `0::` under a cgroup2 mount)",
        ingestbench::observe::own_cgroup().filter(|d| d.join("cpu.stat").is_file()),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "w.yaml",
        &builtin(
            "{ eps: 100, stop: { after: 2s } }",
            &format!(
                "observability: {{ watch: {{ cgroups: [{:?}] }} }}\n",
                cg.display().to_string()
            ),
        ),
    );
    let flag = format!("cgroup:{}", cg.display());
    let (code, v, out) = run_json(
        &cfg,
        &["--watch".into(), flag.clone(), "--watch".into(), flag + "/"],
    );
    assert_eq!(code, Some(0), "{out}");
    let w = &v["watched"];
    let rows = w["cgroups"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{w:#}");
    let cpu = rows[0]["cpu_s"].as_f64().unwrap();
    assert!(cpu > 0.0, "{w:#}");
    assert!(
        (w["total"]["cpu_s"].as_f64().unwrap() - cpu).abs() < 1e-9,
        "{w:#}"
    );
}

/// The sizing rows agree with the timeline they were made from.
fn check_rows_against_timeline(v: &Value, steps: &[f64]) {
    let rows = v["sizing"]
        .as_array()
        .unwrap_or_else(|| panic!("no sizing: {v:#}"));
    assert_eq!(rows.len(), steps.len(), "{rows:#?}");
    let timeline = v["timeline"].as_array().unwrap();
    for (r, eps) in rows.iter().zip(steps) {
        assert_eq!(r["target_eps"].as_f64(), Some(*eps));
        let (from, to) = (r["from_s"].as_u64().unwrap(), r["to_s"].as_u64().unwrap());
        assert!(to > from, "{r}");
        let sent: u64 = timeline
            .iter()
            .filter(|t| (from..to).contains(&t["t"].as_u64().unwrap()))
            .map(|t| t["events_sent"].as_u64().unwrap())
            .sum();
        let offered = r["offered_eps"].as_f64().unwrap();
        assert!(
            (offered - sent as f64 / (to - from) as f64).abs() < 1e-6,
            "{r} vs {sent}"
        );
        assert!((offered - eps).abs() <= 0.1 * eps, "{r}");
    }
}

#[test]
fn the_sizing_table_of_a_steps_run_against_the_builtin_sink() {
    let busy = Busy::start(0.3, 30);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sizing.csv");
    let cfg = write_config(
        dir.path(),
        "s.yaml",
        &builtin(
            "\n  profile: steps\n  steps: [ { eps: 200, hold: 3s }, { eps: 400, hold: 3s } ]\n  step_warmup: 1s\n  stop: { after: 6s }",
            &format!("observability: {{ sizing_csv: {} }}\n", csv.display()),
        ),
    );
    let (code, v, out) = run_json(&cfg, &["--watch".into(), format!("pid:{}", busy.pid())]);
    assert_eq!(code, Some(0), "{out}");
    check_rows_against_timeline(&v, &[200.0, 400.0]);
    for r in v["sizing"].as_array().unwrap() {
        assert_eq!(r["busiest"], format!("python3[{}]", busy.pid()), "{r}");
        assert!(r["busiest_cores"].as_f64().unwrap() > 0.03, "{r}");
        assert!(r["stored_eps"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["most_memory_bytes"].as_u64().unwrap() > 1 << 20, "{r}");
    }
    let table = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(table.starts_with("step,target_eps,"), "{table}");
}

#[test]
fn the_sizing_table_against_syslog_ng_launched_as_the_target() {
    let Some(sng) = require("syslog-ng", syslog_ng_bin()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let conf = dir.path().join("syslog-ng.conf");
    std::fs::write(
        &conf,
        format!(
            "@version: {}\noptions {{ use-dns(no); keep-hostname(yes); }};\nsource s {{ syslog(ip(\"127.0.0.1\") port({port}) transport(\"tcp\") max-connections(16)); }};\ndestination d {{ file(\"{}\"); }};\nlog {{ source(s); destination(d); flags(flow-control); }};\n",
            syslog_ng_version(&sng),
            dir.path().join("out.log").display()
        ),
    )
    .unwrap();
    let d = dir.path().display();
    let cfg = write_config(
        dir.path(),
        "s.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: \"tcp://127.0.0.1:{port}\"\n  syslog: {{ framing: octet-counting, format: rfc5424 }}\n  batch: {{ max_events: 50 }}\nsource: {{ id: linux.syslog }}\nworkload:\n  profile: steps\n  steps: [ {{ eps: 500, hold: 3s }}, {{ eps: 1000, hold: 3s }} ]\n  step_warmup: 1s\n  stop: {{ after: 6s }}\nobservability:\n  target:\n    command: {}\n    args: [-F, --no-caps, --stderr, \"--cfgfile={}\", \"--persist-file={d}/p\", \"--pidfile={d}/pid\", \"--control={d}/ctl\"]\n    ready_port: {port}\n    log: {d}/syslog-ng.log\n",
            sng.display(),
            conf.display()
        ),
    );
    let (code, v, out) = run_json(&cfg, &[]);
    assert_eq!(code, Some(0), "{out}");
    check_rows_against_timeline(&v, &[500.0, 1000.0]);
    let pid = v["watched"]["launched"]["pid"].as_u64().unwrap();
    for r in v["sizing"].as_array().unwrap() {
        assert_eq!(r["busiest"], format!("syslog-ng[{pid}]"), "{r}");
        assert!(r["stored_eps"].is_null(), "syslog-ng cannot be asked: {r}");
    }
    let text = std::fs::read_to_string(dir.path().join("out.log")).unwrap_or_default();
    assert!(
        text.lines().count() >= 4000,
        "syslog-ng wrote {} lines",
        text.lines().count()
    );
}

#[test]
fn a_watched_process_is_in_the_status_json_and_metrics_while_the_run_goes_on() {
    let busy = Busy::start(0.3, 30);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "w.yaml",
        &builtin("{ eps: 100, stop: { after: 6s } }", ""),
    );
    let (sp, mp) = (free_port(), free_port());
    let mut run = bin()
        .args(["run", "--config", &cfg, "--no-pin", "--watch"])
        .arg(format!("pid:{}", busy.pid()))
        .args(["--status", &format!("127.0.0.1:{sp}")])
        .args(["--prometheus", &format!("127.0.0.1:{mp}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let get = |url: &str| {
        ureq::get(url)
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (mut status, mut metrics) = (Value::Null, String::new());
    while std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let s: Value = get(&format!("http://127.0.0.1:{sp}/status.json"))
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or(Value::Null);
        if s["watched"]["processes"][0]["cpu_s"]
            .as_f64()
            .unwrap_or(0.0)
            > 0.0
        {
            status = s;
            metrics = get(&format!("http://127.0.0.1:{mp}/metrics")).unwrap_or_default();
            break;
        }
    }
    let _ = run.kill();
    let _ = run.wait();
    let p = &status["watched"]["processes"][0];
    assert_eq!(p["pid"].as_u64(), Some(u64::from(busy.pid())), "{status:#}");
    assert!(status["watched"]["own"]["rss_bytes"].as_u64().unwrap() > 0);
    let series = format!(
        "ingestbench_watched_cpu_seconds_total{{pid=\"{}\",name=\"python3\"}}",
        busy.pid()
    );
    assert!(metrics.contains(&series), "{metrics}");
    assert!(metrics.contains("ingestbench_own_rss_bytes "), "{metrics}");
}
