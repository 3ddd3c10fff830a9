//! The control panel of `ingestbench serve` in a real headless Chromium (Debian's chromium
//! and chromedriver, driven by Python's selenium through `tests/browser/panel.py`), against
//! the real binary: `serve --listen 127.0.0.1:<free port>` with `--configs-dir`,
//! `--scenarios-dir` and `--reports-dir` in a temporary directory holding a copy of
//! examples/steady-smoke.yaml (built-in sink, 200 eps for 15 s, watching a `sleep` the test
//! started). Through the page alone, the script:
//! - opens the address `serve` printed, with the token it generated (`#token=…`), which the
//!   page keeps and takes out of the address bar; reads the header's version;
//! - Source packs: the catalog lists aws.cloudtrail; its event types, ATT&CK ids and a
//!   sample render, and "New sample" renders another seed;
//! - Scenarios: two stages authored with the ATT&CK pickers (T1110 under TA0006), validated
//!   (per-stage summary) and previewed; an unknown technique's error listed and marked at its
//!   line; saved into `--scenarios-dir`;
//! - Configs: one built in the form, saved, broken (the error listed and marked at its line,
//!   a click selects the line), fixed and saved again, reopened, deleted;
//! - Run: the copy validated and started; its figures grow; the watched process charted;
//!   paused and resumed; a second start refused (409); the rate set to 400 eps and the
//!   target following; stopped; its report opens in Reports by itself;
//! - Reports: a second, short run of the config pasted, at 100 eps, with the saved scenario
//!   (its stage events shown);
//!   the two compared (differences highlighted); JSON and CSV downloaded through the page.
//!
//! This side checks the files the UI wrote and removed, both reports on disk (the pause,
//! resume, rate and stop in the first; the scenario's events in the second) and the five
//! tabs' screenshots in `target/panel-screenshots/`. Then a second panel with a token
//! (`--token-env`, no `--configs-dir`): the page asks for the token, keeps it in
//! sessionStorage and out of the URL, lists and downloads a report with it (fetched with the
//! header), and Configs is read-only and says why. Last, 11 s after the first browser quit,
//! the first panel must still accept a new connection. Both serve processes and the `sleep`
//! are stopped by their PIDs; chromedriver ends with the script's `driver.quit()`. ~55 s.

mod support;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::browser::{Browser, browser_tools};
use support::peers::{free_port, require};
use support::{bin, stop_child};

/// The whole browser script, at most (it also ends itself: SIGALRM at 150 s).
const SCRIPT_AT_MOST: Duration = Duration::from_secs(170);

/// `ingestbench serve`, stopped by its PID when dropped.
struct Serve {
    child: Child,
    port: u16,
    log: PathBuf,
    /// The address it printed to open (with its generated token, `#token=…`, when it made one).
    open_url: String,
    /// The token its API asks for: the one given, or the one it generated and printed.
    token: Option<String>,
}

impl Serve {
    /// `serve` on a free 127.0.0.1 port with `args`, and `PANEL_TOKEN` set when `token` is
    /// (else the panel generates its own and prints it in the address to open).
    fn start(root: &Path, args: &[String], token: Option<&str>) -> Serve {
        let port = free_port();
        let log = root.join("serve.log");
        let mut cmd = bin();
        cmd.arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .stdin(Stdio::null())
            .stdout(File::create(root.join("serve.stdout")).unwrap())
            .stderr(File::create(&log).unwrap());
        if let Some(t) = token {
            cmd.env("PANEL_TOKEN", t)
                .args(["--token-env", "PANEL_TOKEN"]);
        }
        let child = cmd.spawn().expect("ingestbench serve starts");
        let mut serve = Serve {
            child,
            port,
            log,
            open_url: String::new(),
            token: token.map(String::from),
        };
        serve.wait_ready();
        serve
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (at most 20 s) for the address to open on stderr and for `GET /api/info` to
    /// answer 200 with the token (and 401 without it).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("ingestbench serve exited {st}: {}", self.stderr());
            }
            let printed = self
                .stderr()
                .lines()
                .find_map(|l| l.strip_prefix("control panel: ").map(str::to_string));
            if let Some(url) = printed {
                if let Some((_, t)) = url.split_once("#token=") {
                    self.token = Some(t.to_string());
                }
                self.open_url = url;
                let token = self.token.take();
                let without = self.get("/api/info");
                self.token = token;
                if matches!(without, Some((401, _)))
                    && matches!(self.get("/api/info"), Some((200, _)))
                {
                    return;
                }
            }
            thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "ingestbench serve did not answer within 20 s: {}",
            self.stderr()
        );
    }

    /// One GET over a fresh connection: the status and the body, or None if it did not answer.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let auth = self
            .token
            .as_ref()
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}Connection: close\r\n\r\n",
            self.port
        );
        s.write_all(req.as_bytes()).ok()?;
        let mut resp = Vec::new();
        s.read_to_end(&mut resp).ok()?;
        let text = String::from_utf8_lossy(&resp).into_owned();
        let status = text.split(' ').nth(1)?.parse().ok()?;
        let body = text.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
        Some((status, body.to_string()))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        stop_child(&mut self.child);
    }
}

/// The browser script, stopped by its PID (SIGTERM: it quits the browser) if the test ends early.
struct Script {
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: PathBuf,
}

impl Drop for Script {
    fn drop(&mut self) {
        stop_child(&mut self.child);
    }
}

impl Script {
    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

/// examples/steady-smoke.yaml with 200 eps for 15 s instead of 200 events at 40 eps, watching
/// the process `watched` (and ingestbench itself).
fn smoke_config(watched: u32) -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/steady-smoke.yaml"
    ))
    .unwrap();
    let out = text
        .replace("  eps: 40\n", "  eps: 200\n")
        .replace("    total_events: 200\n", "    after: 15s\n")
        .replace("name: steady-smoke", "name: panel-smoke");
    assert!(
        out.contains("eps: 200") && out.contains("after: 15s") && out.contains("panel-smoke"),
        "examples/steady-smoke.yaml changed shape:\n{text}"
    );
    assert!(!out.contains("observability:"), "{text}");
    format!("{out}observability:\n  watch:\n    pids: [{watched}]\n    self: true\n")
}

/// A process for the run to watch, killed by its PID when dropped.
struct Watched(Child);

impl Drop for Watched {
    fn drop(&mut self) {
        stop_child(&mut self.0);
    }
}

fn shots_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target")));
    target.join("panel-screenshots")
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

fn figure(v: &Value, key: &str) -> f64 {
    let t = s(v, key).replace(',', "");
    t.parse()
        .unwrap_or_else(|_| panic!("{key} is not a number on the page: {v}"))
}

#[test]
fn the_control_panel_in_a_real_browser() {
    let tools = browser_tools();
    let what = match &tools {
        Ok(_) => String::new(),
        Err(missing) => format!("{missing} (for the control panel browser test)"),
    };
    let Some(tools) = require(&what, tools.ok()) else {
        return;
    };
    let started = Instant::now();
    let root = tempfile::tempdir().unwrap();
    for d in ["configs", "scenarios", "reports", "work"] {
        std::fs::create_dir(root.path().join(d)).unwrap();
    }
    let configs = root.path().join("configs");
    let scenarios = root.path().join("scenarios");
    let reports = root.path().join("reports");
    let watched = Watched(
        Command::new("sleep")
            .arg("120")
            .stdin(Stdio::null())
            .spawn()
            .expect("sleep starts"),
    );
    std::fs::write(
        configs.join("panel-smoke.yaml"),
        smoke_config(watched.0.id()),
    )
    .unwrap();
    let shots = shots_dir();
    std::fs::create_dir_all(&shots).unwrap();
    for tab in ["run", "configs", "packs", "reports", "scenarios"] {
        let _ = std::fs::remove_file(shots.join(format!("panel-{tab}.png")));
    }

    let dirs = [
        ("--configs-dir", &configs),
        ("--scenarios-dir", &scenarios),
        ("--reports-dir", &reports),
    ];
    let args: Vec<String> = dirs
        .iter()
        .flat_map(|(flag, d)| [flag.to_string(), d.display().to_string()])
        .collect();
    let serve = Serve::start(root.path(), &args, None);

    let dirs = [&configs, &scenarios, &reports].map(|d| d.display().to_string());
    let phases = run_script(
        &tools,
        "full",
        &serve,
        &shots,
        &root.path().join("work"),
        &dirs,
        None,
        started,
    );
    let browser_quit = Instant::now();

    // The header, read after opening the address `serve` printed: the token it generated
    // taken from it into the tab and out of the address bar.
    let header = &phases["header"];
    assert!(s(header, "version").starts_with('v'), "{header}");
    assert!(serve.open_url.contains("#token="), "{}", serve.open_url);
    assert!(!s(header, "opened_url").is_empty(), "{header}");
    assert!(
        !s(header, "opened_url").contains("token"),
        "the token stays in the address bar: {header}"
    );
    assert_eq!(
        Some(s(header, "stored")),
        serve.token.as_deref(),
        "{header}"
    );

    // Source packs.
    let packs = &phases["packs"];
    let ids: Vec<&str> = packs["ids"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(ids.contains(&"aws.cloudtrail"), "{packs}");
    assert!(ids.contains(&"windows.security"), "{packs}");
    assert!(packs["event_types"].as_u64().unwrap() > 1, "{packs}");
    assert!(!packs["mitre"].as_array().unwrap().is_empty(), "{packs}");
    assert!(!s(packs, "sample1").is_empty(), "{packs}");
    assert_ne!(s(packs, "seed1"), s(packs, "seed2"), "{packs}");
    assert_eq!(
        packs["sample_changed"], true,
        "a new seed renders other events: {packs}"
    );

    // Scenarios: authored through the UI, saved in --scenarios-dir.
    let scn = &phases["scenarios"];
    assert_eq!(scn["has_T1110"], true, "{scn}");
    let saved = std::fs::read_to_string(scenarios.join("ui-brute-force.yaml"))
        .expect("the scenario saved through the UI is in --scenarios-dir");
    assert_eq!(saved, s(scn, "yaml"), "the file is the builder's YAML");
    for want in [
        "technique: T1110",
        "tactic: TA0006",
        "technique: T1059.001",
        "source: windows.security",
        "shared: [user, host]",
    ] {
        assert!(saved.contains(want), "{want} not in\n{saved}");
    }
    assert!(s(scn, "summary").contains("T1110"), "{scn}");
    assert!(s(scn, "preview").contains("stage"), "{scn}");
    assert_eq!(
        s(scn, "bad_line"),
        s(scn, "want_line"),
        "the error is at the stage's line: {scn}"
    );
    assert!(s(scn, "bad").contains("T9999"), "{scn}");
    assert_eq!(
        scn["bad_marked"],
        serde_json::json!([s(scn, "want_line")]),
        "{scn}"
    );

    // Configs: built, saved, broken, fixed, deleted.
    let cfg = &phases["configs"];
    assert_eq!(cfg["readonly_shown"], false, "{cfg}");
    assert_eq!(
        s(cfg, "diag_line"),
        "3",
        "the unknown key is on line 3: {cfg}"
    );
    assert!(s(cfg, "diag").starts_with("3:"), "{cfg}");
    assert!(s(cfg, "diag").contains("bogus_key"), "{cfg}");
    assert_eq!(cfg["marked_lines"], serde_json::json!(["3"]), "{cfg}");
    assert_eq!(
        cfg["selection_line"], 3,
        "a click on the error jumps to its line: {cfg}"
    );
    assert_eq!(s(cfg, "builder_eps_after_reopen"), "150", "{cfg}");
    assert!(
        !configs.join("ui-made.yaml").exists(),
        "deleted through the UI"
    );
    assert!(configs.join("panel-smoke.yaml").exists());

    // The run: live figures, the refusal, the rate, the stop, its report.
    let run = &phases["run"];
    let (first, second, after) = (&run["first"], &run["second"], &run["after_rate"]);
    assert!(
        figure(second, "run_events_sent") > figure(first, "run_events_sent"),
        "{run}"
    );
    assert!(figure(second, "run_achieved_eps") > 0.0, "{run}");
    assert_eq!(figure(first, "run_rate_eps"), 200.0, "{run}");
    assert_eq!(figure(after, "run_target_eps"), 400.0, "{run}");
    assert!(s(run, "refused").contains("one run at a time"), "{run}");
    assert_eq!(run["resume_enabled_when_paused"], true, "{run}");
    let sleep = format!("sleep[{}]", watched.0.id());
    assert!(s(run, "watched").contains(&sleep), "{run}");
    assert!(
        s(run, "watched").contains("ingestbench (this run)"),
        "{run}"
    );
    let report_name = s(run, "report");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join(report_name))
            .expect("the report the page opened is in --reports-dir"),
    )
    .unwrap();
    assert_eq!(report["name"], "panel-smoke");
    let actions: Vec<(&str, Option<f64>)> = report["control"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (s(c, "action"), c["rate_eps"].as_f64()))
        .collect();
    assert!(
        actions.contains(&("rate", Some(400.0))),
        "the rate change is in the report: {actions:?}"
    );
    for action in ["pause", "resume", "stop"] {
        assert!(
            actions.iter().any(|a| a.0 == action),
            "the {action} is in the report: {actions:?}"
        );
    }
    assert!(
        report["duration_s"].as_f64().unwrap() < 14.5,
        "stopped before its 15 s"
    );

    // Reports: the second run, the comparison, the downloads.
    let rep = &phases["reports"];
    assert_eq!(s(rep, "first"), report_name);
    assert_ne!(s(rep, "second"), report_name);
    let second: Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join(s(rep, "second"))).expect("the second report"),
    )
    .unwrap();
    assert_eq!(second["summary"]["target_eps"], 100.0, "{rep}");
    assert_eq!(
        second["scenario"]["events"], 9,
        "the saved scenario's 6 + 3 stage events went with the second run"
    );
    assert_eq!(s(rep, "scenario_events"), "9", "{rep}");
    let rows = rep["compare_rows"].as_array().unwrap();
    let target = rows
        .iter()
        .find(|r| r[0].as_str().unwrap_or_default().contains("target_eps"))
        .unwrap_or_else(|| panic!("no target_eps row in the comparison: {rep}"));
    assert_eq!(
        target[1], "1",
        "target eps differ and are highlighted: {rep}"
    );
    assert!(rep["highlighted"].as_u64().unwrap() >= 1, "{rep}");
    assert!(s(rep, "csv_head").starts_with("t,target_eps"), "{rep}");
    assert_eq!(s(rep, "downloaded_schema"), "ingestbench.report/2", "{rep}");
    assert_ne!(s(&rep["opened"], "hist_bars"), "0", "{rep}");

    for tab in ["run", "configs", "packs", "reports", "scenarios"] {
        let p = shots.join(format!("panel-{tab}.png"));
        let len = std::fs::metadata(&p)
            .unwrap_or_else(|_| panic!("no screenshot {}", p.display()))
            .len();
        assert!(len > 10_000, "{} is too small to be the tab", p.display());
    }
    // No script error and no CSP violation: the console holds only the refusal the test asked for.
    let console: Vec<&str> = phases["done"]["console"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        console.iter().all(|m| m.contains("409 (Conflict)")),
        "the browser console: {console:#?}"
    );

    token_phase(&tools, &shots, started);

    // A user who comes back to the panel after a pause opens new connections: the panel must
    // still accept them after more than its 10 s I/O timeout without any (its browser has
    // quit, so nothing else connected meanwhile).
    let idle = Duration::from_secs(11);
    thread::sleep(idle.saturating_sub(browser_quit.elapsed()));
    let again = serve.get("/api/info");
    assert!(
        matches!(again, Some((200, _))),
        "after 11 s without a new connection the panel no longer accepts one ({again:?}); \
         serve's stderr:\n{}",
        serve.stderr()
    );

    eprintln!(
        "control panel browser test: {:.1} s (script {}s); screenshots in {}",
        started.elapsed().as_secs_f64(),
        phases["done"]["seconds"],
        shots.display()
    );
    drop(serve);
}

/// Runs `tests/browser/panel.py` in `mode` against `serve` (at most `SCRIPT_AT_MOST`): every
/// step's JSON line by its phase, until "done"; its first "error" fails the test.
#[allow(clippy::too_many_arguments)]
fn run_script(
    tools: &Browser,
    mode: &str,
    serve: &Serve,
    shots: &Path,
    work: &Path,
    extra: &[String],
    token: Option<&str>,
    started: Instant,
) -> BTreeMap<String, Value> {
    std::fs::create_dir_all(work).unwrap();
    let stderr = work.join("script.stderr");
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/browser/panel.py"
    ))
    .arg(mode)
    .arg(format!("http://127.0.0.1:{}/", serve.port))
    .arg(shots)
    .arg(work)
    .arg(&tools.chromium)
    .arg(&tools.chromedriver)
    .args(extra)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(File::create(&stderr).unwrap());
    if let Some(t) = token {
        cmd.env("PANEL_TOKEN", t);
    }
    if mode == "full" {
        cmd.env("PANEL_OPEN_URL", &serve.open_url);
    }
    let mut child = cmd.spawn().expect("python3 starts");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let script = Script {
        child,
        lines: rx,
        stderr,
    };
    let mut phases: BTreeMap<String, Value> = BTreeMap::new();
    let deadline = Instant::now() + SCRIPT_AT_MOST;
    while !phases.contains_key("done") {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = script.lines.recv_timeout(left).unwrap_or_else(|e| {
            panic!(
                "no answer from the browser script ({e}); it said {phases:?}\nits stderr:\n{}\nserve's stderr:\n{}",
                script.stderr(),
                serve.stderr()
            )
        });
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let phase = s(&v, "phase").to_string();
        eprintln!(
            "browser ({mode}): {phase} at {:.1} s",
            started.elapsed().as_secs_f64()
        );
        assert_ne!(
            phase,
            "error",
            "the browser script failed: {v:#}\nits stderr:\n{}\nserve's stderr:\n{}",
            script.stderr(),
            serve.stderr()
        );
        phases.insert(phase, v);
    }
    phases
}

/// The panel with a token (loopback, no `--configs-dir`): the page asks for it, keeps it in
/// sessionStorage (never in the URL), reads the reports with it and downloads one as JSON
/// through the page (fetched with the header); Configs is read-only and says why.
fn token_phase(tools: &Browser, shots: &Path, started: Instant) {
    const TOKEN: &str = "panel-test-token-5f2c9a";
    let root = tempfile::tempdir().unwrap();
    let reports = root.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/report.json"),
        reports.join("golden.json"),
    )
    .unwrap();
    let args = ["--reports-dir".to_string(), reports.display().to_string()];
    let serve = Serve::start(root.path(), &args, Some(TOKEN));
    let phases = run_script(
        tools,
        "token",
        &serve,
        shots,
        &root.path().join("work"),
        &[],
        Some(TOKEN),
        started,
    );
    let t = &phases["token"];
    assert!(
        s(t, "version_before").contains("token"),
        "nothing is read before the token: {t}"
    );
    assert!(s(t, "version").starts_with('v'), "{t}");
    assert_eq!(t["form_hidden"], true, "{t}");
    assert_eq!(s(t, "stored"), TOKEN, "{t}");
    assert!(
        !s(t, "url").contains(TOKEN),
        "the token is never in the URL: {t}"
    );
    assert_eq!(s(t, "report"), "golden.json", "{t}");
    assert_eq!(s(t, "downloaded_schema"), "ingestbench.report/2", "{t}");
    assert!(
        s(t, "readonly").contains("--configs-dir"),
        "the panel says why: {t}"
    );
    assert_eq!(t["save_enabled"], false, "{t}");
    let console: Vec<&str> = phases["done"]["console"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        console.iter().all(|m| m.contains("401 (Unauthorized)")),
        "the browser console: {console:#?}"
    );
}
