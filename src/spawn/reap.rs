//! Reaping the spawned children on a thread of its own, so the spawner never waits for one.
//! The spawner hands over each PID; the reaper keeps the ones still running and sweeps them
//! with `waitpid(pid, WNOHANG)` — by PID, so it never takes the exit status of a child it was
//! not given. It blocks on the channel when nothing is outstanding, and sweeps every
//! millisecond otherwise. `finish` stops it: children still running after a grace period are
//! killed (SIGKILL, by their own PID) and reaped, so nothing outlives the command.

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const SWEEP: Duration = Duration::from_millis(1);

/// How the children ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reaped {
    /// Exited with status 0.
    pub exited_ok: u64,
    /// Exited with another status, or ended by a signal we did not send.
    pub exited_failed: u64,
    /// Still running after the grace period: killed by us.
    pub killed: u64,
}

/// The reaper thread and its inbox.
pub struct Reaper {
    tx: Option<Sender<u32>>,
    /// Children handed over and not yet reaped (the spawner bounds its spawns by it).
    in_flight: Arc<AtomicU64>,
    thread: Option<JoinHandle<Reaped>>,
    grace: Arc<AtomicU64>,
}

impl Reaper {
    pub fn start() -> std::io::Result<Reaper> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let in_flight = Arc::new(AtomicU64::new(0));
        let grace = Arc::new(AtomicU64::new(0));
        let (f, g) = (in_flight.clone(), grace.clone());
        let thread = std::thread::Builder::new()
            .name("spawn-reaper".into())
            .spawn(move || reap_loop(rx, f, g))?;
        Ok(Reaper {
            tx: Some(tx),
            in_flight,
            thread: Some(thread),
            grace,
        })
    }

    /// A counter of children started and not yet reaped.
    pub fn in_flight(&self) -> Arc<AtomicU64> {
        self.in_flight.clone()
    }

    /// Takes a new child, already counted in flight by the spawner (which takes a place
    /// before it spawns); the reaper gives the place back when it reaps it.
    pub fn hand_over(&self, pid: u32) {
        if let Some(tx) = &self.tx {
            // The reaper only stops once `tx` is dropped, so this cannot fail while we hold it.
            let _ = tx.send(pid);
        }
    }

    /// Waits up to `grace` for the children to exit, kills the rest, and says how they ended.
    pub fn finish(mut self, grace: Duration) -> Reaped {
        self.grace.store(
            grace.as_nanos().min(u64::MAX as u128) as u64,
            Ordering::Release,
        );
        self.tx = None;
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

fn reap_loop(rx: Receiver<u32>, in_flight: Arc<AtomicU64>, grace: Arc<AtomicU64>) -> Reaped {
    let mut pending: Vec<u32> = Vec::with_capacity(1024);
    let mut out = Reaped::default();
    loop {
        let got = if pending.is_empty() {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(SWEEP)
        };
        match got {
            Ok(pid) => {
                pending.push(pid);
                pending.extend(rx.try_iter());
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        sweep(&mut pending, &mut out, &in_flight);
    }
    let grace = Duration::from_nanos(grace.load(Ordering::Acquire));
    drain(pending, out, &in_flight, grace)
}

/// Reaps whatever has exited among `pending`, keeping the rest.
fn sweep(pending: &mut Vec<u32>, out: &mut Reaped, in_flight: &AtomicU64) {
    pending.retain(|&pid| match try_wait(pid) {
        Some(ok) => {
            if ok {
                out.exited_ok += 1;
            } else {
                out.exited_failed += 1;
            }
            in_flight.fetch_sub(1, Ordering::AcqRel);
            false
        }
        None => true,
    });
}

/// After the last spawn: sweeps until `grace` is over, then kills and reaps what is left.
fn drain(mut pending: Vec<u32>, mut out: Reaped, in_flight: &AtomicU64, grace: Duration) -> Reaped {
    let deadline = Instant::now() + grace;
    while !pending.is_empty() && Instant::now() < deadline {
        sweep(&mut pending, &mut out, in_flight);
        if !pending.is_empty() {
            std::thread::sleep(SWEEP);
        }
    }
    for pid in pending {
        // SAFETY: `pid` is our own child, not yet reaped, so the PID cannot have been reused.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        let mut status = 0;
        // SAFETY: as above; SIGKILL cannot be caught, so this wait ends.
        unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        out.killed += 1;
        in_flight.fetch_sub(1, Ordering::AcqRel);
    }
    out
}

/// `Some(exited with 0)` once `pid` has ended (or cannot be waited for), `None` while it runs.
fn try_wait(pid: u32) -> Option<bool> {
    let mut status = 0;
    // SAFETY: waitpid on our own child's PID with a valid status pointer.
    let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
    match rc {
        0 => None,
        r if r < 0 => Some(false),
        _ => Some(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn::launch::{Launcher, test_launcher as launcher};

    #[test]
    fn reaps_exits_and_kills_the_slow() {
        let r = Reaper::start().unwrap();
        let ok = launcher("true", &[]);
        let bad = launcher("false", &[]);
        let slow = launcher("sleep", &["30"]);
        let in_flight = r.in_flight();
        let give = |l: &Launcher| {
            in_flight.fetch_add(1, Ordering::AcqRel);
            r.hand_over(l.spawn().unwrap());
        };
        for _ in 0..5 {
            give(&ok);
        }
        give(&bad);
        give(&slow);
        let t = Instant::now();
        let got = r.finish(Duration::from_millis(300));
        assert!(t.elapsed() < Duration::from_secs(5));
        assert_eq!(
            got,
            Reaped {
                exited_ok: 5,
                exited_failed: 1,
                killed: 1
            }
        );
        assert_eq!(in_flight.load(Ordering::Acquire), 0);
    }
}
