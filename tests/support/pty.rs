//! A child process on a real pseudo-terminal (`libc::openpty`): its stdin, stdout and stderr
//! are the terminal, a thread collects everything the terminal shows (the typed answers echoed
//! too), and `expect` waits — bounded — until some text appears. The child is killed by its PID
//! if it outlives the test.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long any one wait may take.
const WAIT: Duration = Duration::from_secs(20);

/// The master and slave sides of a new pseudo-terminal.
pub fn openpty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two fresh descriptors into the two ints; the name, termios and
    // winsize pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    for fd in [master, slave] {
        // Close-on-exec, so children that other tests start meanwhile do not inherit them
        // (a stray holder of the slave side would keep the reader from seeing the end).
        // SAFETY: fcntl on a descriptor we own, with an int argument.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors were just opened for us and are owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

pub struct PtySession {
    child: Option<Child>,
    input: std::fs::File,
    shown: Arc<Mutex<Vec<u8>>>,
    /// Signalled when the reader has seen the end of the terminal's output.
    ended: mpsc::Receiver<()>,
    /// How much of `shown` the expectations so far have consumed.
    seen: usize,
}

impl PtySession {
    /// Starts `cmd` with the terminal as its stdin, stdout and stderr.
    pub fn spawn(mut cmd: Command) -> PtySession {
        let (master, slave) = openpty();
        let stdio = || Stdio::from(slave.try_clone().unwrap());
        let child = cmd
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio())
            .spawn()
            .unwrap();
        // Our copies of the slave side close here, so the reader sees EIO once the child exits.
        drop(cmd);
        drop(slave);
        let input = std::fs::File::from(master.try_clone().unwrap());
        let shown = Arc::new(Mutex::new(Vec::new()));
        let sink = shown.clone();
        let (done, ended) = mpsc::channel();
        std::thread::spawn(move || {
            let mut f = std::fs::File::from(master);
            let mut buf = [0u8; 4096];
            while let Ok(n) = f.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            let _ = done.send(());
        });
        PtySession {
            child: Some(child),
            input,
            shown,
            ended,
            seen: 0,
        }
    }

    /// Everything the terminal has shown.
    pub fn transcript(&self) -> String {
        String::from_utf8_lossy(&self.shown.lock().unwrap()).into_owned()
    }

    /// Waits until `text` appears after what earlier expectations consumed, and consumes it.
    pub fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            {
                let shown = self.shown.lock().unwrap();
                let rest = String::from_utf8_lossy(&shown[self.seen..]).into_owned();
                if let Some(i) = rest.find(text) {
                    self.seen += rest[..i + text.len()].len();
                    return;
                }
            }
            if Instant::now() > deadline {
                panic!(
                    "{text:?} did not appear within {WAIT:?}; the terminal showed:\n{}",
                    self.transcript()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Types `line` and Enter.
    pub fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).unwrap();
        self.input.write_all(b"\n").unwrap();
    }

    /// Types raw bytes (Ctrl-D is `\x04`).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).unwrap();
    }

    /// Waits for the child to exit (killing it by its PID after the bound) and returns its
    /// status with the whole transcript.
    pub fn finish(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().unwrap();
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the child did not exit; the terminal showed:\n{}",
                    self.transcript()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // The reader drains what is left once the child's side is closed.
        let _ = self.ended.recv_timeout(Duration::from_secs(5));
        (status, self.transcript())
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
