//! Helpers shared by the end-to-end tests: the binary under test, output text, an
//! `ingestbench sink` child process (stopped by its PID when dropped), and real peers
//! (syslog-ng, rsyslog, nginx with TLS) in `peers`; a Prometheus server and the Python
//! exposition parser in `prometheus`; a child on a pseudo-terminal in `pty`; a fake OpenSearch or
//! Splunk answering from held documents and recording requests in `search_store`; a Python
//! test server from tests/support (`PyServer`).

#![allow(dead_code)]

pub mod answerer;
pub mod browser;
pub mod bulk_store;
pub mod peers;
pub mod prometheus;
pub mod pty;
pub mod raw_http;
pub mod relp_server;
pub mod search_store;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.env(
        "INGESTBENCH_SECRETS_DIR",
        "/nonexistent/ingestbench-test-secrets",
    );
    c
}

pub fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A sink process; killed (by its PID) when dropped.
pub struct SinkProc {
    child: Child,
    pub port: u16,
    /// With `--syslog-tcp`: the port it listens on for syslog over TCP.
    pub syslog_tcp: Option<u16>,
}

impl SinkProc {
    pub fn start(args: &[&str]) -> SinkProc {
        let mut child = bin()
            .arg("sink")
            .args(args)
            .args(["--duration", "60s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            line.clear();
            if err.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            let l = line.trim();
            if let Some(rest) = l
                .strip_prefix("sink listening on http://127.0.0.1:")
                .or_else(|| l.strip_prefix("sink listening on https://127.0.0.1:"))
            {
                let port = rest
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                // The syslog listener says where it is on the next line.
                let mut syslog_tcp = None;
                if args.contains(&"--syslog-tcp") {
                    line.clear();
                    let _ = err.read_line(&mut line);
                    syslog_tcp = line
                        .trim()
                        .strip_prefix("sink listening on syslog+tcp://127.0.0.1:")
                        .and_then(|p| p.parse().ok());
                }
                // Keep draining stderr so the sink never blocks on a full pipe.
                std::thread::spawn(move || {
                    let mut sink = Vec::new();
                    let _ = err.read_to_end(&mut sink);
                });
                return SinkProc {
                    child,
                    port,
                    syslog_tcp,
                };
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("sink did not report its address: {line}");
    }

    pub fn stats(&self) -> serde_json::Value {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut resp = Vec::new();
        s.read_to_end(&mut resp).unwrap();
        let text = String::from_utf8_lossy(&resp);
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("stats: {e}: {text}"))
    }
}

impl Drop for SinkProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Stops a child by its PID: SIGTERM, a bounded wait (5 s), then SIGKILL. A peer that forks
/// (nginx's workers) needs the SIGTERM: killed outright, its master leaves the workers
/// running with the listening socket.
pub fn stop_child(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with our own child's PID and a valid signal number.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits for a child that is to exit by itself (`--duration`), at most `within`; panics
/// naming `what` if it does not.
pub fn wait_exit(child: &mut Child, within: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(Instant::now() < deadline, "{what} did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn write_config(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

/// Arguments of `ingestbench run` with a JSON report on stdout.
pub fn run_args(cfg: &str, threads: u32, workers: u32) -> Vec<String> {
    [
        "run",
        "--config",
        cfg,
        "--output",
        "json",
        "--threads",
        &threads.to_string(),
        "--workers",
        &workers.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Runs `ingestbench run` to the end; returns the output and the parsed JSON report (null
/// when stdout is not JSON).
pub fn run_json(cfg: &str, threads: u32, workers: u32) -> (Output, serde_json::Value) {
    let o = bin()
        .args(run_args(cfg, threads, workers))
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o, v)
}

/// A Python process with a known CPU duty cycle (`support/duty_cycle.py`: `busy_ms` of its own
/// CPU time in every 100 ms, ending by itself after `lifetime_s`), for the `spawn` tests;
/// stopped by its PID when dropped.
pub struct DutyCycle {
    child: Child,
}

impl DutyCycle {
    pub fn start(busy_ms: u32, lifetime_s: u32) -> DutyCycle {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/duty_cycle.py");
        let child = Command::new("python3")
            .arg(script)
            .args([lifetime_s.to_string(), busy_ms.to_string()])
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs tests/support/duty_cycle.py");
        // Let the interpreter start before anyone measures it.
        std::thread::sleep(Duration::from_millis(300));
        DutyCycle { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for DutyCycle {
    fn drop(&mut self) {
        stop_child(&mut self.child);
    }
}

/// A Python test server from `tests/support/SCRIPT`, started with its port file first and
/// `args` after it; it listens on 127.0.0.1 port 0 and writes the port it got to the file.
/// Stopped by its PID when dropped.
pub struct PyServer {
    pub child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl PyServer {
    pub fn start(script: &str, args: &[&str]) -> PyServer {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/support")
            .join(script);
        let child = Command::new("python3")
            .arg(path)
            .arg(&port_file)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs");
        // Held from here on, so a panic below still stops it (Drop).
        let mut s = PyServer {
            child,
            port: 0,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while s.port == 0 {
            assert!(
                Instant::now() < deadline && s.child.try_wait().unwrap().is_none(),
                "{script} did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
            s.port = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(0);
        }
        s
    }

    /// `GET path` on the server, its body parsed as JSON.
    pub fn get_json(&self, path: &str) -> serde_json::Value {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("null");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"))
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        stop_child(&mut self.child);
    }
}

/// A JSON report a run printed reads back whole (`report show`): read, written again, it is
/// the same JSON. Output that is no report (a failed run's) is left alone.
pub fn assert_reads_back(stdout: &[u8]) {
    let Ok(text) = std::str::from_utf8(stdout) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    if v.get("schema").and_then(|s| s.as_str()) != Some(ingestbench::report::REPORT_SCHEMA) {
        return;
    }
    let back = ingestbench::report::de::read("stdout", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        v,
        "the report reads back as it was"
    );
}
