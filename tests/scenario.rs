//! Attack scenarios end to end through the real binary: the issue's three-stage chain played
//! to stdout (per-stage counts exact, timestamps inside each stage's window, the shared user,
//! host and source IP the same in every stage that can show them, the tactic and technique in
//! every event's tag, byte-identical for a seed, paced by `--speed`), its ground truth, every
//! example scenario checked and played, bad scenario files refused with field paths and
//! lines (exit 2), and `run --scenario` into the built-in sink beside a background load
//! (stage events stored and counted apart, their progress on the status page while it runs).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ingestbench");

/// The chain from the issue, in the Go tool's format.
const CHAIN: &str = r#"schema_version: "2.0"
seed: 12345
anchor: "2024-06-03T13:00:00Z"
correlation:
  shared: [user, host, source_ip]
stages:
  - { tactic: TA0006, technique: T1110, source: windows.security, count: 40, start_offset: 0s, duration: 4m }
  - { tactic: TA0001, technique: T1078, source: identity.okta, count: 5, start_offset: 4m, duration: 1m }
  - { tactic: TA0002, technique: T1059, source: windows.security, count: 25, start_offset: 5m, duration: 6m }
"#;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ib-scenario-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(d: &Path, name: &str, text: &str) -> PathBuf {
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn ib(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run ingestbench")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_lines(o: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A port free on loopback a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET /status.json` from the run's status page, if it answers yet.
fn status_json(port: u16) -> Option<Value> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let req =
        format!("GET /status.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    c.write_all(req.as_bytes()).ok()?;
    let mut text = String::new();
    c.read_to_string(&mut text).ok()?;
    let body = text.split_once("\r\n\r\n")?.1;
    serde_json::from_str(body).ok()
}

fn ms(rfc3339: &str) -> i64 {
    let t = humantime::parse_rfc3339_weak(rfc3339.trim_end_matches('Z'))
        .unwrap_or_else(|e| panic!("{rfc3339}: {e}"));
    t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// The event's own time: Winlogbeat `@timestamp`, Okta `published`.
fn event_time(e: &Value) -> i64 {
    let t = e["@timestamp"].as_str().or(e["published"].as_str());
    ms(t.unwrap_or_else(|| panic!("no time in {e}")))
}

#[test]
fn the_issue_chain_plays_exactly_with_its_ground_truth() {
    let d = dir("chain");
    let f = write(&d, "chain.yaml", CHAIN);
    let truth_path = d.join("truth.json");
    let f_s = f.to_str().unwrap();
    let out = ib(&[
        "scenario",
        "--file",
        f_s,
        "--format",
        "ndjson",
        "--truth",
        truth_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let events = json_lines(&out);
    let truth: Value = serde_json::from_slice(&std::fs::read(&truth_path).unwrap()).unwrap();
    assert_eq!(truth["schema"], "ingestbench.truth/1");
    assert_eq!(truth["attack_version"], "ATT&CK Enterprise v18.1");
    assert_eq!(truth["events"], 70);
    assert_eq!(events.len(), 70);

    let shared: Vec<(String, String)> = truth["shared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let a = &s["attributes"];
            let key = match s["role"].as_str().unwrap() {
                "user" => a["name"].as_str(),
                "host" => a["name"].as_str(),
                _ => a["addr"].as_str(),
            };
            (
                s["role"].as_str().unwrap().to_string(),
                key.unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(shared.len(), 3);

    let stages = truth["stages"].as_array().unwrap();
    let want = [
        (40, "TA0006", "T1110", "windows.security"),
        (5, "TA0001", "T1078", "identity.okta"),
        (25, "TA0002", "T1059", "windows.security"),
    ];
    let mut last_time = i64::MIN;
    for (i, (count, tactic, technique, source)) in want.iter().enumerate() {
        let st = &stages[i];
        assert_eq!(st["count"], *count);
        assert_eq!(st["tactic"]["id"], *tactic);
        assert_eq!(st["technique"]["id"], *technique);
        assert_eq!(st["source"], *source);
        let (from, to) = (
            ms(st["window"]["start"].as_str().unwrap()),
            ms(st["window"]["end"].as_str().unwrap()),
        );
        let (first, last) = (
            st["first"]["seq"].as_u64().unwrap(),
            st["last"]["seq"].as_u64().unwrap(),
        );
        let mine: Vec<&Value> = events
            .iter()
            .filter(|e| e["ingestbench"]["technique"] == *technique)
            .collect();
        assert_eq!(
            mine.len(),
            *count as usize,
            "stage {i}: events tagged {technique}"
        );
        let shows: Vec<&str> = st["shared"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        for e in &mine {
            let tag = &e["ingestbench"];
            assert_eq!(tag["tactic"], *tactic, "{e}");
            assert_eq!(tag["run"], "r-scenario");
            let seq = tag["seq"].as_u64().unwrap();
            assert!(seq >= first && seq <= last, "stage {i}: seq {seq}");
            let t = event_time(e);
            assert!(t >= from && t < to, "stage {i}: {t} outside [{from}, {to})");
            let text = e.to_string();
            for (role, key) in &shared {
                if shows.contains(&role.as_str()) {
                    assert!(
                        text.contains(key.as_str()),
                        "stage {i}: shared {role} {key} missing in {text}"
                    );
                }
            }
        }
        // Stages follow one another here, so time order keeps them apart.
        let times: Vec<i64> = mine.iter().map(|e| event_time(e)).collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "stage {i} in time order"
        );
        assert!(times[0] >= last_time);
        last_time = *times.last().unwrap();
    }
    // The brute force and the execution show all three; Okta has no host.
    assert_eq!(
        stages[0]["shared"],
        serde_json::json!(["user", "host", "source_ip"])
    );
    assert_eq!(
        stages[1]["shared"],
        serde_json::json!(["user", "source_ip"])
    );
    assert_eq!(
        stages[2]["shared"],
        serde_json::json!(["user", "host", "source_ip"]),
        "the PowerShell downloads from the attacker"
    );
    // Sequence numbers are the play order.
    let seqs: Vec<u64> = events
        .iter()
        .map(|e| e["ingestbench"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..70).collect::<Vec<u64>>());
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_other_ones() {
    let d = dir("seed");
    let f = write(&d, "chain.yaml", CHAIN);
    let f = f.to_str().unwrap();
    let a = ib(&["scenario", "--file", f, "--format", "raw"]);
    let b = ib(&["scenario", "--file", f, "--format", "raw"]);
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
    let c = ib(&["scenario", "--file", f, "--format", "raw", "--seed", "7"]);
    assert!(c.status.success());
    assert_ne!(a.stdout, c.stdout);
    // Without an anchor in the file, --anchor fixes the times as well.
    let moved = CHAIN.replace("anchor: \"2024-06-03T13:00:00Z\"\n", "");
    let g = write(&d, "unanchored.yaml", &moved);
    let g = g.to_str().unwrap();
    let args = [
        "scenario",
        "--file",
        g,
        "--format",
        "raw",
        "--anchor",
        "2024-06-03T13:00:00Z",
    ];
    assert_eq!(ib(&args).stdout, a.stdout);
}

#[test]
fn speed_compresses_the_play_and_keeps_the_scenarios_timestamps() {
    let d = dir("speed");
    let text = r#"schema_version: "2.0"
seed: 3
anchor: "2025-01-01T00:00:00Z"
stages:
  - { tactic: TA0006, technique: T1110, source: linux.syslog, count: 6, start_offset: 30s, duration: 1m }
"#;
    let f = write(&d, "short.yaml", text);
    let t0 = Instant::now();
    let out = ib(&[
        "scenario",
        "--file",
        f.to_str().unwrap(),
        "--format",
        "raw",
        "--speed",
        "60x",
    ]);
    let took = t0.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    // 1m30s of scenario time at 60x: its last event is due after 0.5 s at the earliest.
    assert!(took >= Duration::from_millis(500), "played in {took:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 6);
    assert!(
        text.lines().all(|l| l.contains("2025-01-01T00:0")),
        "{text}"
    );
}

#[test]
fn every_example_scenario_checks_and_plays() {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    let d = dir("examples");
    for f in &files {
        let fs = f.to_str().unwrap();
        let check = ib(&["scenario", "--file", fs, "--check"]);
        assert!(check.status.success(), "{fs}: {}", stderr(&check));
        let truth = d.join("t.json");
        let play = ib(&[
            "scenario",
            "--file",
            fs,
            "--format",
            "raw",
            "--speed",
            "max",
            "--truth",
            truth.to_str().unwrap(),
        ]);
        assert!(play.status.success(), "{fs}: {}", stderr(&play));
        let t: Value = serde_json::from_slice(&std::fs::read(&truth).unwrap()).unwrap();
        let lines = String::from_utf8_lossy(&play.stdout).lines().count() as u64;
        assert_eq!(lines, t["events"].as_u64().unwrap(), "{fs}");
        assert!(t["stages"].as_array().unwrap().len() >= 3, "{fs}: a chain");
        // Every event carries its stage's technique in its tag, whatever the format.
        let out = String::from_utf8_lossy(&play.stdout);
        for st in t["stages"].as_array().unwrap() {
            let tech = st["technique"]["id"].as_str().unwrap();
            let tagged = out.lines().filter(|l| l.contains(tech)).count() as u64;
            assert!(tagged >= st["count"].as_u64().unwrap(), "{fs}: {tech}");
        }
    }
}

#[test]
fn bad_scenario_files_exit_2_naming_the_field_and_line() {
    let d = dir("bad");
    let cases = [
        (
            "T1110, source: windows",
            "T1110.999, source: windows",
            "stages[0].technique",
            "T1110.999 is not a technique in ATT&CK Enterprise v18.1",
        ),
        (
            "tactic: TA0001, technique: T1078, source: identity.okta",
            "tactic: TA0002, technique: T1059, source: identity.okta",
            "stages[1].technique",
            "identity.okta has no event type carrying T1059",
        ),
        (
            "tactic: TA0001, technique: T1078",
            "tactic: TA0006, technique: T1078",
            "stages[1].tactic",
            "is a technique of",
        ),
        (
            "count: 5, start_offset: 4m, duration: 1m",
            "count: 5, start_offset: 4m, duration: -1m",
            "stages[1].duration",
            "is negative",
        ),
        (
            "count: 40,",
            "count: 1000001,",
            "stages[0].count",
            "1000001 events is more than a stage may have (1000000)",
        ),
        (
            "count: 40,",
            "count: 40, colour: red,",
            "stages[0].colour",
            "unknown field",
        ),
        (
            "source: identity.okta",
            "source: identity.okat",
            "stages[1].source",
            "did you mean \"identity.okta\"",
        ),
        (
            "shared: [user, host, source_ip]",
            "shared: [user, printer]",
            "correlation.shared[1]",
            "not an entity a scenario can share",
        ),
    ];
    for (from, to, path, msg) in cases {
        assert!(CHAIN.contains(from), "{from}");
        let f = write(&d, "bad.yaml", &CHAIN.replacen(from, to, 1));
        let out = ib(&["scenario", "--file", f.to_str().unwrap(), "--check"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        let line = err
            .lines()
            .find(|l| l.contains(path))
            .unwrap_or_else(|| panic!("{path} not named: {err}"));
        assert!(line.contains("bad.yaml:") && line.contains(msg), "{line}");
        // file:line:column before the path
        let after = line.split("bad.yaml:").nth(1).unwrap();
        let mut parts = after.split(':');
        assert!(parts.next().unwrap().parse::<u32>().is_ok(), "{line}");
        assert!(parts.next().unwrap().parse::<u32>().is_ok(), "{line}");
    }
}

#[test]
fn run_scenario_sends_stage_events_beside_the_background_and_counts_them_apart() {
    let d = dir("run");
    let f = write(&d, "chain.yaml", CHAIN);
    let cfg = write(
        &d,
        "run.yaml",
        "schema_version: \"1.0\"\nseed: 9\ntarget: { adapter: lphc, url: builtin, batch: { max_events: 50 } }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 300, workers: 2, stop: { after: 13s } }\n",
    );
    let report = d.join("report.json");
    let port = free_port();
    let status = format!("127.0.0.1:{port}");
    let child = Command::new(BIN)
        .args([
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--scenario",
            f.to_str().unwrap(),
            "--scenario-speed",
            "60x",
            "--threads",
            "2",
            "--status",
            &status,
            "--output",
            "json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // While it runs, the status page's snapshot shows the lane's progress apart.
    let mut live = None;
    let deadline = Instant::now() + Duration::from_secs(12);
    while Instant::now() < deadline {
        if let Some(v) = status_json(port)
            && v["scenario"]["events_accepted"].as_u64().unwrap_or(0) > 0
        {
            live = Some(v);
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let live = live.expect("a snapshot with the scenario's progress");
    assert_eq!(live["scenario"]["events"], 70);
    assert!(
        live["cumulative"]["events_sent"].as_u64().unwrap() > 0,
        "the background's own counts beside it"
    );
    let _ = std::fs::write(&report, &out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    support::assert_reads_back(&out.stdout);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sc = &r["scenario"];
    assert_eq!(sc["events"], 70);
    assert_eq!(sc["events_sent"], 70);
    assert_eq!(sc["events_accepted"], 70);
    assert_eq!(sc["events_not_sent"], 0);
    assert_eq!(sc["stored"]["distinct"], 70);
    assert_eq!(sc["stored"]["lost"], 0);
    assert_eq!(sc["agent"], 2, "the agent after the two background workers");
    assert_eq!(sc["truth"]["stages"].as_array().unwrap().len(), 3);
    assert_eq!(sc["truth"]["agent"], 2);
    // The background keeps its own count: its target, accepted and stored leave the stage
    // events out.
    let s = &r["summary"];
    let accepted = s["events_accepted"].as_u64().unwrap();
    assert_eq!(r["verification"]["distinct"].as_u64().unwrap(), accepted);
    assert_eq!(s["events_sent"].as_u64().unwrap(), 300 * 13);
    // The store's expected set has the lane's agent too.
    let agents = r["accounting"]["agents"].as_array().unwrap();
    let lane = agents.iter().find(|a| a["agent"] == 2).expect("lane agent");
    assert_eq!(lane["events_sent"], 70);
    assert_eq!(
        agents
            .iter()
            .map(|a| a["events_sent"].as_u64().unwrap())
            .sum::<u64>(),
        accepted + 70
    );

    // A run shorter than the scenario at its speed is refused before it starts.
    let short = ib(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--scenario",
        f.to_str().unwrap(),
    ]);
    assert_eq!(short.status.code(), Some(2));
    assert!(
        stderr(&short).contains("plays for 11m at speed 1x"),
        "{}",
        stderr(&short)
    );
}
