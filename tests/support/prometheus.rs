//! Real consumers of our `/metrics`: a Prometheus server (Debian's `prometheus`, binary
//! `/usr/bin/prometheus`) and the reference Python text parser (PyPI `prometheus-client`, run
//! through `prom_parse.py` beside this file). scripts/install-test-deps.sh installs both.
//!
//! `Prometheus::start` writes a config scraping the given targets every second into the
//! test's temp dir, starts the server on a free 127.0.0.1 port with its TSDB in that dir, and
//! waits (bounded) for `/-/ready`; `query`/`wait_value` ask its HTTP API; dropping it stops
//! it by its PID (SIGTERM, bounded wait, SIGKILL). `parse_exposition` runs the Python parser
//! on a scraped text. A missing program is for `peers::require`: a failure in CI, a loud skip
//! elsewhere. Nothing here listens or connects beyond 127.0.0.1.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::peers::{WAIT, free_port};
use super::stop_child;

/// The Prometheus binary: Debian's `/usr/bin/prometheus`, or one on `PATH`.
pub fn prometheus_bin() -> Option<PathBuf> {
    let debian = PathBuf::from("/usr/bin/prometheus");
    if debian.is_file() {
        return Some(debian);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("prometheus"))
            .find(|f| f.is_file())
    })
}

/// `python3` when it can import `prometheus_client`.
pub fn python_parser() -> Option<PathBuf> {
    let ok = Command::new("python3")
        .args(["-c", "import prometheus_client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| PathBuf::from("python3"))
}

/// An HTTP client for 127.0.0.1: no proxy from the environment, every call bounded, any
/// status returned rather than turned into an error.
pub fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(5)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// One sample as the Python parser read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// `+Inf`, `-Inf` and `NaN` as the floats they are.
    pub value: f64,
}

/// One metric family as the Python parser read it. The parser names a counter family
/// without its `_total`; its samples keep the name as written.
#[derive(Clone, Debug)]
pub struct Family {
    pub name: String,
    pub kind: String,
    pub help: String,
    pub samples: Vec<Sample>,
}

/// Parses an exposition with `prometheus_client.parser.text_string_to_metric_families`;
/// panics with the parser's message if it refuses the text.
pub fn parse_exposition(python: &Path, text: &str) -> Vec<Family> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/prom_parse.py");
    let mut child = Command::new(python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the Python parser refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array().unwrap().iter().map(family).collect()
}

fn family(v: &serde_json::Value) -> Family {
    let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    Family {
        name: text("name"),
        kind: text("type"),
        help: text("help"),
        samples: v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(sample)
            .collect(),
    }
}

fn sample(v: &serde_json::Value) -> Sample {
    let labels = v["labels"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, l)| (k.clone(), l.as_str().unwrap_or_default().to_string()))
        .collect();
    Sample {
        name: v["name"].as_str().unwrap().to_string(),
        labels,
        value: number(&v["value"]),
    }
}

/// A JSON number, or one of Prometheus's spellings (`+Inf`, `-Inf`, `NaN`, `"12.5"`).
fn number(v: &serde_json::Value) -> f64 {
    match v {
        serde_json::Value::Number(n) => n.as_f64().unwrap(),
        serde_json::Value::String(s) => match s.as_str() {
            "+Inf" | "Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            other => other.parse().unwrap(),
        },
        other => panic!("not a number: {other}"),
    }
}

/// A Prometheus server started by the test; stopped by its PID when dropped.
pub struct Prometheus {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl Prometheus {
    /// Starts `bin` scraping `targets` every second (job `ingestbench`), its config, TSDB and
    /// log in `dir`, and waits until it is ready (at most `WAIT`).
    pub fn start(bin: &Path, dir: &Path, targets: &[SocketAddr]) -> Prometheus {
        let config = dir.join("prometheus.yml");
        std::fs::write(&config, config_text(targets)).unwrap();
        let port = free_port();
        let log = dir.join("prometheus.log");
        let out = File::create(&log).unwrap();
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        let mut p = Prometheus { child, port, log };
        p.wait_ready();
        p
    }

    fn wait_ready(&mut self) {
        let url = format!("http://127.0.0.1:{}/-/ready", self.port);
        let agent = http();
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!(
                    "prometheus exited ({st}) before ready:\n{}",
                    self.log_text()
                );
            }
            if agent
                .get(&url)
                .call()
                .is_ok_and(|r| r.status().as_u16() == 200)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("prometheus not ready in {WAIT:?}:\n{}", self.log_text());
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// An instant query: the result vector of `/api/v1/query` (`[{metric, value: [t, "v"]}]`);
    /// `None` when the API did not answer with success.
    pub fn query(&self, q: &str) -> Option<Vec<serde_json::Value>> {
        let url = format!("http://127.0.0.1:{}/api/v1/query", self.port);
        let mut resp = http().get(&url).query("query", q).call().ok()?;
        let body = resp.body_mut().read_to_string().ok()?;
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        if v["status"] != "success" {
            return None;
        }
        v["data"]["result"].as_array().cloned()
    }

    /// The value of a query that yields one series, if it yields exactly one.
    pub fn value(&self, q: &str) -> Option<f64> {
        match self.query(q)?.as_slice() {
            [one] => one["value"][1].as_str()?.parse().ok(),
            _ => None,
        }
    }

    /// Queries `q` until it yields `want` (at most `within`); returns the last value seen.
    pub fn wait_value(&self, q: &str, want: f64, within: Duration) -> Option<f64> {
        let deadline = Instant::now() + within;
        let mut last = None;
        while Instant::now() < deadline {
            last = self.value(q);
            if last == Some(want) {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        last
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        stop_child(&mut self.child);
    }
}

/// A scrape every second of each target's `/metrics`, in job `ingestbench`.
fn config_text(targets: &[SocketAddr]) -> String {
    let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
    format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
         scrape_configs:\n  - job_name: ingestbench\n    metrics_path: /metrics\n    \
         static_configs:\n      - targets: [{}]\n",
        list.join(", ")
    )
}
