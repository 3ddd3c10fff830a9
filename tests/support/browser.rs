//! A real headless Chromium for page tests: Debian's chromium and chromedriver driven by
//! Python's selenium through `status_browser.py`, which loads a status page, reads and clicks
//! it, and prints JSON lines. `Script` starts it (a loud skip, or a failure in CI, when a tool
//! is missing) and stops it by its PID if a test ends early.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::peers::require;

pub struct Browser {
    pub chromium: PathBuf,
    pub chromedriver: PathBuf,
}

/// Chromium, chromedriver and Python's selenium, or what is missing.
pub fn browser_tools() -> Result<Browser, String> {
    let find = |names: &[&str]| names.iter().map(PathBuf::from).find(|p| p.is_file());
    let chromium = find(&["/usr/bin/chromium", "/usr/bin/chromium-browser"]);
    let chromedriver = find(&["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]);
    let selenium = Command::new("python3")
        .args(["-c", "import selenium"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut missing = Vec::new();
    if chromium.is_none() {
        missing.push("chromium");
    }
    if chromedriver.is_none() {
        missing.push("chromedriver (chromium-driver)");
    }
    if !selenium {
        missing.push("python3 selenium");
    }
    match (chromium, chromedriver) {
        (Some(chromium), Some(chromedriver)) if selenium => Ok(Browser {
            chromium,
            chromedriver,
        }),
        _ => Err(missing.join(", ")),
    }
}

/// The script's JSON lines, read on a thread so every wait for one is bounded.
fn lines_of(out: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

pub fn number(v: &Value) -> u64 {
    let s = v.as_str().unwrap_or_default().replace(',', "");
    s.parse()
        .unwrap_or_else(|_| panic!("not a whole number: {v}"))
}

/// Kills the script by its PID (SIGTERM first: it quits the browser) if the test ends early.
struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        super::stop_child(&mut self.0);
    }
}

/// `support/status_browser.py` in one of its modes, and the JSON lines it prints.
pub struct Script {
    child: ChildGuard,
    lines: mpsc::Receiver<String>,
    stderr_log: PathBuf,
    shots: PathBuf,
    _work: tempfile::TempDir,
}

impl Script {
    /// Starts the script on `url`; `None` (a loud skip, or a failure in CI) when the browser
    /// or selenium is missing. Screenshots go to `$INGESTBENCH_SCREENSHOTS` when set.
    pub fn start(mode: &str, url: &str, token: Option<&str>) -> Option<Script> {
        let tools = browser_tools();
        let what = match &tools {
            Ok(_) => String::new(),
            Err(missing) => format!("{missing} (for the status page browser test)"),
        };
        let tools = require(&what, tools.ok())?;
        let work = tempfile::tempdir().unwrap();
        let shots = std::env::var_os("INGESTBENCH_SCREENSHOTS")
            .map(PathBuf::from)
            .unwrap_or_else(|| work.path().to_path_buf());
        let stderr_log = work.path().join("script.stderr");
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/status_browser.py"
        );
        let mut cmd = Command::new("python3");
        cmd.arg(script)
            .arg(mode)
            .arg(url)
            .arg(&shots)
            .arg(work.path())
            .arg(&tools.chromium)
            .arg(&tools.chromedriver)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_log).unwrap());
        if let Some(t) = token {
            cmd.env("STATUS_TOKEN", t);
        }
        let mut child = ChildGuard(cmd.spawn().expect("python3 starts"));
        let lines = lines_of(child.0.stdout.take().unwrap());
        Some(Script {
            child,
            lines,
            stderr_log,
            shots,
            _work: work,
        })
    }

    /// The script's next JSON line, waited for at most `within`; its failure fails the test.
    pub fn next(&self, within: Duration) -> Value {
        let line = self.lines.recv_timeout(within).unwrap_or_else(|e| {
            let stderr = std::fs::read_to_string(&self.stderr_log).unwrap_or_default();
            panic!(
                "no answer from the browser script within {within:?} ({e}); its stderr:\n{stderr}"
            )
        });
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_ne!(v["phase"], "error", "the browser script failed: {v}");
        v
    }

    pub fn say(&mut self, line: &str) {
        let stdin = self.child.0.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn finish(mut self) {
        let st = super::wait_exit(
            &mut self.child.0,
            Duration::from_secs(15),
            "the browser script",
        );
        assert!(st.success(), "the browser script exited {st}");
        eprintln!("status page screenshots: {}", self.shots.display());
    }
}
