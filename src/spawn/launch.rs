//! Starting one child with `posix_spawn(3)`. Everything a spawn needs is built once: the
//! program path, argv and envp as C strings, one `/dev/null` descriptor that becomes the
//! child's stdin, stdout and stderr, and the attributes (signal mask cleared, SIGPIPE and the
//! stop signals back to their defaults). A spawn then allocates nothing and makes one call.
//!
//! Why not `std::process::Command`: it also ends in `posix_spawn` on glibc, but builds argv and
//! envp and opens `/dev/null` again for every child. glibc's `posix_spawn` clones with
//! `CLONE_VM | CLONE_VFORK` (no page-table copy; the calling thread waits only until the
//! child's `execve`), which is what keeps 1,000 spawns/s cheap for the spawner.
//!
//! The environment is the marker alone (`INGESTBENCH_SPAWNED=1`), as edr-loadgen passes only
//! `EDR_LOADGEN=1`: the default payload, ingestbench itself, sees it and exits at once.

use std::ffi::{CString, c_char};
use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The environment variable that makes `ingestbench` exit 0 before doing anything else.
pub const MARKER: &str = "INGESTBENCH_SPAWNED";

/// What to start: a program path and its arguments (argv[1..]).
#[derive(Clone, Debug, PartialEq)]
pub struct Payload {
    pub program: PathBuf,
    /// argv[0] as the child sees it.
    pub arg0: String,
    pub args: Vec<String>,
}

impl Payload {
    /// The command line as one string, as edr-loadgen prints it.
    pub fn display(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Why a launcher could not be set up, or a spawn failed.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchError {
    /// A NUL byte in the program, an argument or the environment.
    Nul(String),
    /// `/dev/null` could not be opened, or a spawn attribute could not be set.
    Setup(String),
    /// `posix_spawn` failed with this errno.
    Spawn(i32),
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::Nul(what) => write!(f, "{what} contains a NUL byte"),
            LaunchError::Setup(what) => write!(f, "cannot prepare spawning: {what}"),
            LaunchError::Spawn(errno) => write!(
                f,
                "posix_spawn failed: {}",
                std::io::Error::from_raw_os_error(*errno)
            ),
        }
    }
}

/// A prepared `posix_spawn`: call `spawn` as often as the schedule says.
pub struct Launcher {
    program: CString,
    // The C strings own the bytes the pointer arrays point at; they must outlive them.
    _argv: Vec<CString>,
    _envp: Vec<CString>,
    argv_ptrs: Vec<*mut c_char>,
    envp_ptrs: Vec<*mut c_char>,
    actions: libc::posix_spawn_file_actions_t,
    attr: libc::posix_spawnattr_t,
    _null: OwnedFd,
}

// SAFETY: the raw pointers point into the launcher's own heap-allocated CStrings, which move
// with it; `spawn` only reads through `&self`, and posix_spawn only reads its inputs.
unsafe impl Send for Launcher {}
unsafe impl Sync for Launcher {}

fn cstring(what: &str, s: &str) -> Result<CString, LaunchError> {
    CString::new(s).map_err(|_| LaunchError::Nul(what.to_string()))
}

fn ptrs(strings: &[CString]) -> Vec<*mut c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr() as *mut c_char)
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

fn check(rc: i32, what: &str) -> Result<(), LaunchError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(LaunchError::Setup(format!(
            "{what}: {}",
            std::io::Error::from_raw_os_error(rc)
        )))
    }
}

impl Launcher {
    /// Prepares spawning `payload` with the marker as its whole environment.
    pub fn new(payload: &Payload) -> Result<Launcher, LaunchError> {
        let program = path_cstring(&payload.program)?;
        let mut argv = vec![cstring("argv[0]", &payload.arg0)?];
        for a in &payload.args {
            argv.push(cstring("an argument", a)?);
        }
        let envp = vec![cstring("the environment", &format!("{MARKER}=1"))?];
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(|e| LaunchError::Setup(format!("/dev/null: {e}")))?;
        let null: OwnedFd = null.into();
        let argv_ptrs = ptrs(&argv);
        let envp_ptrs = ptrs(&envp);
        // SAFETY: zeroed storage is what the init functions expect to fill in.
        let mut actions: libc::posix_spawn_file_actions_t = unsafe { std::mem::zeroed() };
        let mut attr: libc::posix_spawnattr_t = unsafe { std::mem::zeroed() };
        unsafe {
            check(
                libc::posix_spawn_file_actions_init(&mut actions),
                "file actions",
            )?;
            check(libc::posix_spawnattr_init(&mut attr), "attributes")?;
        }
        let mut l = Launcher {
            program,
            _argv: argv,
            _envp: envp,
            argv_ptrs,
            envp_ptrs,
            actions,
            attr,
            _null: null,
        };
        l.set_up()?;
        Ok(l)
    }

    fn set_up(&mut self) -> Result<(), LaunchError> {
        let fd = self._null.as_raw_fd();
        // SAFETY: actions and attr were initialised in `new`; the sigsets are local.
        unsafe {
            for target in 0..3 {
                check(
                    libc::posix_spawn_file_actions_adddup2(&mut self.actions, fd, target),
                    "stdio to /dev/null",
                )?;
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            let mut defaults: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut defaults);
            for sig in [libc::SIGPIPE, libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
                libc::sigaddset(&mut defaults, sig);
            }
            check(
                libc::posix_spawnattr_setsigmask(&mut self.attr, &empty),
                "signal mask",
            )?;
            check(
                libc::posix_spawnattr_setsigdefault(&mut self.attr, &defaults),
                "signal defaults",
            )?;
            let flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
            check(
                libc::posix_spawnattr_setflags(&mut self.attr, flags as libc::c_short),
                "flags",
            )?;
        }
        Ok(())
    }

    /// Starts one child and returns its PID. Allocates nothing.
    pub fn spawn(&self) -> Result<u32, LaunchError> {
        let mut pid: libc::pid_t = 0;
        // SAFETY: every pointer points at data owned by `self`, NUL-terminated, with
        // NULL-terminated pointer arrays; posix_spawn does not keep them after it returns.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.program.as_ptr(),
                &self.actions,
                &self.attr,
                self.argv_ptrs.as_ptr(),
                self.envp_ptrs.as_ptr(),
            )
        };
        if rc == 0 {
            Ok(pid as u32)
        } else {
            Err(LaunchError::Spawn(rc))
        }
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `new` and are destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
            libc::posix_spawnattr_destroy(&mut self.attr);
        }
    }
}

fn path_cstring(p: &Path) -> Result<CString, LaunchError> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes()).map_err(|_| LaunchError::Nul("the command".into()))
}

/// Finds `command` as `posix_spawn` needs it: a path with a `/` as given, otherwise the first
/// executable file of that name on `PATH`. Checked once, before any spawn.
pub fn resolve(command: &str) -> Result<PathBuf, String> {
    let is_exec = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if command.is_empty() {
        return Err("--command is empty".into());
    }
    if command.contains('/') {
        let p = PathBuf::from(command);
        return if is_exec(&p) {
            Ok(p)
        } else if command.contains(' ') {
            Err(format!(
                "--command {command:?} is not an executable file (give arguments with --args, one per flag)"
            ))
        } else {
            Err(format!("--command {command:?} is not an executable file"))
        };
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(command))
                .find(|p| is_exec(p))
        })
        .ok_or_else(|| format!("--command {command:?} is not an executable file on PATH"))
}

/// A launcher of `cmd args…` for the spawn tests.
#[cfg(test)]
pub(crate) fn test_launcher(cmd: &str, args: &[&str]) -> Launcher {
    Launcher::new(&Payload {
        program: resolve(cmd).unwrap(),
        arg0: cmd.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
    })
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(pid: u32) -> i32 {
        let mut status = 0;
        // SAFETY: pid is our own child.
        let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        assert_eq!(rc, pid as libc::pid_t);
        status
    }

    #[test]
    fn spawns_and_passes_only_the_marker() {
        let p = Payload {
            program: resolve("sh").unwrap(),
            arg0: "sh".into(),
            args: vec![
                "-c".into(),
                format!("[ \"${MARKER}\" = 1 ] && [ -z \"$HOME\" ] && exit 7"),
            ],
        };
        let l = Launcher::new(&p).unwrap();
        let status = wait(l.spawn().unwrap());
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 7);
    }

    #[test]
    fn a_missing_program_fails_the_spawn_or_the_child() {
        let p = Payload {
            program: "/nonexistent/ingestbench-test".into(),
            arg0: "x".into(),
            args: vec![],
        };
        let l = Launcher::new(&p).unwrap();
        // glibc reports exec failures from posix_spawn itself (ENOENT).
        match l.spawn() {
            Err(LaunchError::Spawn(e)) => assert_eq!(e, libc::ENOENT),
            Ok(pid) => assert_ne!(wait(pid), 0),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn resolves_commands() {
        assert!(resolve("true").unwrap().is_absolute());
        assert!(resolve("/nonexistent/x").is_err());
        assert!(resolve("/bin/echo hi").unwrap_err().contains("--args"));
        assert!(resolve("").is_err());
    }
}
