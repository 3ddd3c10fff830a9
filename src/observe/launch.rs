//! A target we launch ourselves (`observability.target`): started as a child with its
//! stdout and stderr in one log file, waited for until 127.0.0.1:`ready_port` accepts a TCP
//! connection (bounded by `ready_timeout`), and stopped by its PID — SIGTERM, SIGKILL after a
//! grace period, then reaped. Only that PID is signalled, never a group or a name; a command
//! that forks its real server off (a shell wrapper, a daemonising server) leaves that server to
//! the caller.
//!
//! The child gets its own process group, so a Ctrl-C at the terminal reaches ingestbench
//! (which stops the run and reports) and not the target, which is then stopped in order. A
//! port that already accepts before the child starts is refused: readiness would mean nothing.
//! Without `ready_port` the child is given `min(200 ms, ready_timeout)` to fail at once. The
//! log stays where it was written (by default `$TMPDIR/ingestbench-target-<our pid>-<n>.log`)
//! for the reader of the report.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::ObserveError;

/// How much of the log an error or [`Stopped`] carries.
const TAIL_BYTES: u64 = 4096;
const TAIL_LINES: usize = 20;
/// The grace a target gets when it is stopped because it never became ready, or dropped.
const DEFAULT_GRACE: Duration = Duration::from_secs(2);
/// How long a target without `ready_port` is watched for failing at once.
const SETTLE: Duration = Duration::from_millis(200);

/// A target we launch ourselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    pub command: String,
    pub args: Vec<String>,
    /// Added to (or replacing in) our own environment.
    pub env: Vec<(String, String)>,
    /// Ready once 127.0.0.1:port accepts a TCP connection.
    pub ready_port: Option<u16>,
    pub ready_timeout: Duration,
    /// Its stdout+stderr; default a temp file.
    pub log: Option<PathBuf>,
}

impl LaunchSpec {
    /// `command` with no arguments, no extra environment, no port, 30 s to be ready.
    pub fn new(command: impl Into<String>) -> LaunchSpec {
        LaunchSpec {
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            ready_port: None,
            ready_timeout: Duration::from_secs(30),
            log: None,
        }
    }

    fn shown(&self) -> String {
        std::iter::once(self.command.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a stopped target ended.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Stopped {
    /// Its exit code, when it exited.
    pub exit: Option<i32>,
    /// The signal that ended it, when one did (SIGTERM = 15 is the polite end).
    pub signal: Option<i32>,
    /// It ignored SIGTERM for the whole grace and was SIGKILLed.
    pub killed: bool,
    pub log_tail: String,
}

impl Stopped {
    /// How it ended, in a few words.
    pub fn describe(&self) -> String {
        match (self.exit, self.signal) {
            (Some(c), _) => format!("exited with code {c}"),
            (None, Some(s)) if self.killed => format!("killed (signal {s}) after the grace"),
            (None, Some(s)) => format!("ended by signal {s}"),
            _ => "ended".into(),
        }
    }
}

/// A running target; stopped (with a 2 s grace) if dropped without [`Launched::stop`].
pub struct Launched {
    child: Option<Child>,
    log: PathBuf,
}

impl Launched {
    /// Starts it and (with ready_port) waits until 127.0.0.1:port accepts a TCP connection, or
    /// fails with NotReady (the child stopped by PID, the log's tail in the error), or Launch if
    /// it exits first.
    pub fn start(spec: &LaunchSpec) -> Result<Launched, ObserveError> {
        let log = spec.log.clone().unwrap_or_else(default_log);
        Launched::start_logging(spec, log, false)
    }

    /// Starts it again after it was stopped or killed (a fault timeline's restart), its
    /// output appended to the log it had.
    pub fn restart(spec: &LaunchSpec, log: &Path) -> Result<Launched, ObserveError> {
        Launched::start_logging(spec, log.to_path_buf(), true)
    }

    fn start_logging(
        spec: &LaunchSpec,
        log: PathBuf,
        append: bool,
    ) -> Result<Launched, ObserveError> {
        let shown = spec.shown();
        let launch_err = |why: String| ObserveError::Launch {
            command: shown.clone(),
            why,
        };
        if let Some(port) = spec.ready_port
            && accepts(port, Duration::from_millis(200))
        {
            return Err(launch_err(format!(
                "something already accepts on 127.0.0.1:{port} before it started"
            )));
        }
        let out = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&log)
            .map_err(|e| launch_err(format!("cannot create its log {}: {e}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(|e| launch_err(format!("cannot share its log: {e}")))?;
        let child = Command::new(&spec.command)
            .args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| launch_err(format!("cannot start it: {e}")))?;
        let mut l = Launched {
            child: Some(child),
            log,
        };
        let started = Instant::now();
        let deadline = started + spec.ready_timeout;
        let settle = started + SETTLE.min(spec.ready_timeout);
        loop {
            if let Some(status) = l.try_wait() {
                let tail = log_tail(&l.log);
                let what = match spec.ready_port {
                    Some(port) => format!("{} before 127.0.0.1:{port} accepted", describe(status)),
                    None => format!("{} at once", describe(status)),
                };
                return Err(launch_err(if tail.is_empty() {
                    format!("{what} (its log is empty)")
                } else {
                    format!("{what}; its log ends:\n{tail}")
                }));
            }
            let now = Instant::now();
            match spec.ready_port {
                None if now >= settle => return Ok(l),
                Some(port) if accepts(port, Duration::from_millis(200)) => return Ok(l),
                Some(port) if now >= deadline => {
                    let waited = started.elapsed();
                    let stopped = l.stop(DEFAULT_GRACE);
                    return Err(ObserveError::NotReady {
                        command: shown,
                        port,
                        waited,
                        log_tail: stopped.log_tail,
                    });
                }
                _ => {}
            }
            let until = if spec.ready_port.is_some() {
                deadline
            } else {
                settle
            };
            std::thread::sleep(
                Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())),
            );
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Where its stdout and stderr go.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Sends `sig` to it by PID while it is still ours (not reaped); false when it is gone.
    pub fn signal(&mut self, sig: libc::c_int) -> bool {
        if self.try_wait().is_some() {
            return false;
        }
        let Some(pid) = self
            .child
            .as_ref()
            .and_then(|c| libc::pid_t::try_from(c.id()).ok())
        else {
            return false;
        };
        // SAFETY: kill(2) with our own unreaped child's PID and a valid signal.
        unsafe { libc::kill(pid, sig) == 0 }
    }

    /// SIGKILL by PID at once (a crash, for a fault timeline); reaps it; says how it ended.
    pub fn kill(mut self) -> Stopped {
        self.signal(libc::SIGKILL);
        self.stop_child(Duration::from_secs(1))
    }

    /// SIGTERM by PID, SIGKILL after `grace`; reaps it; says how it ended.
    pub fn stop(mut self, grace: Duration) -> Stopped {
        self.stop_child(grace)
    }

    fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    fn stop_child(&mut self, grace: Duration) -> Stopped {
        let Some(mut child) = self.child.take() else {
            return Stopped::default();
        };
        let mut killed = false;
        // Only a child not yet reaped is signalled: its PID is still ours.
        let status = match child.try_wait() {
            Ok(Some(st)) => Some(st),
            _ => {
                if let Ok(pid) = libc::pid_t::try_from(child.id()) {
                    // SAFETY: kill(2) with our own unreaped child's PID and a valid signal.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                }
                let deadline = Instant::now() + grace;
                let mut st = None;
                while st.is_none() {
                    st = child.try_wait().ok().flatten();
                    if st.is_some() || Instant::now() >= deadline {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                if st.is_none() {
                    killed = child.kill().is_ok();
                    st = child.wait().ok();
                }
                st
            }
        };
        Stopped {
            exit: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            killed,
            log_tail: log_tail(&self.log),
        }
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop_child(DEFAULT_GRACE);
        }
    }
}

/// Whether something accepts on 127.0.0.1:`port`. A connection to itself does not count: with
/// nobody listening on a port in the ephemeral range, the kernel can pick that same port as
/// the source and the connect "succeeds" (TCP simultaneous open).
fn accepts(port: u16, within: Duration) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    match TcpStream::connect_timeout(&addr, within) {
        Ok(s) => s.local_addr().map_or(true, |local| local != addr),
        Err(_) => false,
    }
}

fn describe(st: ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(s)) => format!("was ended by signal {s}"),
        _ => "ended".into(),
    }
}

fn default_log() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("ingestbench-target-{}-{n}.log", std::process::id()))
}

/// The last lines of the log (at most 20, from its last 4 KiB); empty when unreadable.
pub fn log_tail(path: &Path) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let from = len.saturating_sub(TAIL_BYTES);
    if f.seek(SeekFrom::Start(from)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    if f.take(TAIL_BYTES).read_to_end(&mut buf).is_err() {
        return String::new();
    }
    tail_text(&buf, from > 0)
}

/// The last lines of `buf`, dropping a first line cut in the middle.
fn tail_text(buf: &[u8], cut: bool) -> String {
    let text = String::from_utf8_lossy(buf);
    let mut lines: Vec<&str> = text.trim_end().lines().collect();
    if cut && lines.len() > 1 {
        lines.remove(0);
    }
    let skip = lines.len().saturating_sub(TAIL_LINES);
    lines.get(skip..).unwrap_or_default().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let t = tail_text(text.as_bytes(), false);
        assert!(t.starts_with("line 11\n") && t.ends_with("line 30"), "{t}");
        assert_eq!(tail_text(b"half of a line\nwhole\n", true), "whole");
        assert_eq!(tail_text(b"", false), "");
        assert_eq!(log_tail(Path::new("/nonexistent/x.log")), "");
    }

    #[test]
    fn spec_shows_command_and_args() {
        let mut s = LaunchSpec::new("python3");
        s.args = vec!["-m".into(), "http.server".into()];
        assert_eq!(s.shown(), "python3 -m http.server");
    }

    #[test]
    fn a_missing_command_is_a_launch_error() {
        let mut s = LaunchSpec::new("/nonexistent/ingestbench-no-such-target");
        s.log = Some(
            std::env::temp_dir().join(format!("ib-launch-missing-{}.log", std::process::id())),
        );
        match Launched::start(&s) {
            Err(ObserveError::Launch { command, why }) => {
                assert!(
                    command.contains("no-such-target") && why.contains("cannot start"),
                    "{why}"
                );
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("started a missing command"),
        }
        let _ = std::fs::remove_file(s.log.unwrap());
    }
}
