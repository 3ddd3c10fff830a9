//! Watched and launched processes: what a target costs while it is loaded. A [`Watcher`]
//! samples processes (by PID, by name, ingestbench itself) and cgroup v2 directories from /proc
//! and /sys/fs/cgroup on its own thread ("ingestbench-observe"), never on a worker; a
//! [`Launched`] target is one we start ourselves, wait for until its port accepts, and stop by
//! its PID afterwards (lading's observer works this way).
//!
//! Files: `procfs` reads and parses the /proc and cgroup files (pure parsers, reused buffers),
//! `sampler` is the thread and its per-process state, `summary` turns the per-second values
//! into summaries (pure), `launch` is the launched target, `udp_drops` reads a UDP target's
//! receive-buffer drops from /proc/net/udp before and after a run.
//!
//! Decisions, each checked against `../shared/reference/measurement-and-ops.md` §3:
//! - **Hand parsing, not `procfs`.** Per process and interval we read `stat`, `statm`,
//!   `smaps_rollup` and stat `fd/` (and `status` one interval in five), each into one reused
//!   buffer in one `read` through a reused path string (`File::open` on a short path does not
//!   allocate), and parse the few fields we need in place. The `procfs` crate parses every field of every file into owned structs (a
//!   `String` per `status` line, a `HashMap` for `smaps_rollup`) and would be a large new
//!   dependency for five numbers. The parsers are small and unit-tested on real file text.
//! - **CPU** is `utime + stime` (fields 14, 15 of `stat`, parsed after the *last* `)` so a
//!   `comm` with spaces or parentheses cannot shift them), plus `cutime + cstime` (16, 17: the
//!   waited-for children) when [`WatchSpec::children`] is set, in ticks of `sysconf(_SC_CLK_TCK)`.
//!   `cores` of one interval = Δticks ÷ CLK_TCK ÷ the wall time between that process's two
//!   readings. A process's first reading is its baseline (`cpu_s` counts from there), except a
//!   process born since the previous sample (its `starttime` says so): its baseline is zero, so
//!   a short-lived process found by name is counted whole.
//! - **Memory**: RSS is `statm`'s resident pages × the page size each interval (the counter
//!   `VmRSS` prints, at a third of the cost of `status`); `VmHWM` (the peak RSS since the
//!   process started, not since we first saw it) comes from `status` at a process's first
//!   reading, every fifth interval and the last one — it only grows, so reading it late loses
//!   nothing but when; a peak between two reads of a process that then exits is seen only as
//!   far as its sampled RSS went. PSS is the `Pss:` line of `smaps_rollup`,
//!   `None` where that file is unreadable (another user's process without privilege, a kernel
//!   older than 4.14). RSS is "inaccurate" by the kernel's own account (delayed counters); PSS
//!   is exact but costs a walk of the VMAs, which is why it is read once a second, not more.
//! - **Threads** from `stat` field 20; **fds** from the size of `/proc/PID/fd` (Linux ≥ 6.2
//!   reports the number of open files there), counting its entries only where that size is 0
//!   (older kernels); 0 when the directory is unreadable.
//! - **A process that exits** (its `stat` is gone, it is a zombie, or its PID now belongs to a
//!   process with another `starttime` — a reused PID is a new process) is reported once more,
//!   in the interval in which it was found gone, with `alive: false`, `cores: 0` and its last
//!   readings, and then no longer appears in [`Second::procs`]; its [`ProcSummary`] is kept and
//!   its CPU stays in the totals. A watched PID is not followed to the new process of a reused
//!   PID; a name is (the rescan finds it).
//! - **Names** match `/proc/PID/comm` exactly (the kernel truncates it to 15 bytes) or the
//!   basename of argv[0] (`cmdline` up to its first NUL), so longer names match through argv[0].
//!   Each interval /proc is listed; a new PID's `comm` (and, when that does not match, its
//!   `cmdline`) is read, and read again in the next two scans (a fork execs within moments);
//!   after that a remembered non-matching PID's `comm` is read in one scan of eight (an exec
//!   late in a process's life is caught within 8 intervals), `cmdline` only when `comm`
//!   changed. So a rescan costs about one small read per eight processes plus the new ones.
//!   ingestbench itself never matches (it is `own`).
//! - **cgroups**: `usage_usec` of `cpu.stat` (the whole subtree, µs, present even with the cpu
//!   controller off), `memory.current` (0 where the memory controller is not enabled for that
//!   cgroup, e.g. the root) and `memory.peak` (`None` before Linux 5.19). These include page
//!   cache and kernel memory: not RSS. A relative path is taken under the cgroup2 mount
//!   ([`cgroup2_root`]: `/sys/fs/cgroup` on a pure v2 system, `/sys/fs/cgroup/unified` on a
//!   hybrid one). A directory must be on a cgroup2 filesystem (statfs magic) with `cpu.stat`.
//! - **Totals** sum the watched processes and cgroups, not `own`, each CPU second once: a
//!   subject named twice is one subject (a PID given twice or matched by name too; a cgroup
//!   named twice in any spelling — config and `--watch`, relative or absolute, a trailing `/`,
//!   a symlink — is one directory, listed once), and the CPU of a cgroup inside another watched
//!   one, or of a process inside a watched cgroup (its `0::` line of /proc/PID/cgroup when
//!   first followed), is listed but left out of the totals, which have it in the enclosing
//!   cgroup's. `cpu_s` includes processes that exited.
//! - **Summaries**: `cores_mean` is CPU seconds ÷ the wall time watched (the time-weighted mean
//!   of the per-interval values); `cores_p95` (nearest rank) and `cores_max` are over the
//!   intervals at least half the nominal length — the short last one that [`Watcher::finish`]
//!   reads (when at least a quarter interval has passed) counts in `cpu_s` and the mean only.
//!   A pre-existing process found mid-run contributes no per-interval value for the interval
//!   it was found in (it has no baseline yet). [`TotalSummary::rss_peak_bytes`] is the highest
//!   summed RSS of one interval; `most_memory_bytes` the highest peak (VmHWM, RSS, cgroup peak
//!   or memory) of any one process or cgroup.
//! - The thread samples on a fixed schedule (start + k × interval, no drift; a late sample
//!   skips missed ticks and its `interval_s` says how long it covered), wakes at once on
//!   `finish`, and every file read is bounded (procfs reads do not block).

mod launch;
mod procfs;
mod sampler;
mod summary;
pub mod udp_drops;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use launch::{LaunchSpec, Launched, Stopped};
pub use procfs::{alive, cgroup2_root, own_cgroup, pids_named};
pub use sampler::{Follower, Watcher};

/// What to watch.
#[derive(Clone, Debug, Default)]
pub struct WatchSpec {
    pub pids: Vec<u32>,
    /// Process names: match /proc/PID/comm exactly, or the basename of argv[0]; every match, and
    /// processes that start matching while watching join (rescan once a second, cheaply).
    pub names: Vec<String>,
    /// cgroup v2 directories (absolute, or relative to the cgroup2 mount, normally
    /// /sys/fs/cgroup).
    pub cgroups: Vec<PathBuf>,
    /// Add cutime+cstime (waited-for children) to a process's CPU.
    pub children: bool,
    /// Sample this process (ingestbench) too; reported apart as `own`.
    pub include_self: bool,
}

/// One interval (normally a second).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Second {
    /// Intervals completed (1 for the first); 0 only in [`Watcher::latest`] before then.
    pub t: u32,
    /// The wall time this interval covered.
    pub interval_s: f64,
    pub procs: Vec<ProcSecond>,
    pub cgroups: Vec<CgroupSecond>,
    pub own: Option<ProcSecond>,
    pub total: Totals,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ProcSecond {
    pub pid: u32,
    /// `comm`, as `stat` gives it.
    pub name: String,
    /// CPU over this interval ÷ its length.
    pub cores: f64,
    /// CPU seconds since first seen.
    pub cpu_s: f64,
    pub user_s: f64,
    pub system_s: f64,
    pub rss_bytes: u64,
    /// VmHWM: the peak RSS since the process started.
    pub rss_peak_bytes: u64,
    pub pss_bytes: Option<u64>,
    pub threads: u32,
    pub fds: u32,
    pub alive: bool,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CgroupSecond {
    pub path: String,
    pub cores: f64,
    /// CPU seconds since watching began.
    pub cpu_s: f64,
    pub memory_bytes: u64,
    pub memory_peak_bytes: Option<u64>,
}

/// Summed over the watched processes and cgroups (not `own`).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Totals {
    pub cores: f64,
    pub cpu_s: f64,
    pub rss_bytes: u64,
    /// The max of one process or cgroup.
    pub busiest_cores: f64,
    /// The max RSS of one process or memory of one cgroup.
    pub most_memory_bytes: u64,
}

/// The whole record: every second, and per process / cgroup / own / total summaries.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Observed {
    pub seconds: Vec<Second>,
    pub processes: Vec<ProcSummary>,
    pub cgroups: Vec<CgroupSummary>,
    pub own: Option<ProcSummary>,
    pub total: TotalSummary,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ProcSummary {
    pub pid: u32,
    pub name: String,
    /// argv joined by spaces, as first seen.
    pub cmdline: String,
    /// The interval it was first read in (0: at start).
    pub first_t: u32,
    /// The last interval in which it was seen alive.
    pub last_t: u32,
    pub cpu_s: f64,
    pub user_s: f64,
    pub system_s: f64,
    pub cores_mean: f64,
    pub cores_p95: f64,
    pub cores_max: f64,
    pub rss_peak_bytes: u64,
    pub pss_peak_bytes: Option<u64>,
    pub threads_max: u32,
    pub fds_max: u32,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CgroupSummary {
    pub path: String,
    pub cpu_s: f64,
    pub cores_mean: f64,
    pub cores_p95: f64,
    pub cores_max: f64,
    pub memory_peak_bytes: u64,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TotalSummary {
    pub cpu_s: f64,
    pub cores_mean: f64,
    pub cores_p95: f64,
    pub cores_max: f64,
    pub busiest_cores_max: f64,
    pub rss_peak_bytes: u64,
    pub most_memory_bytes: u64,
}

#[derive(Debug)]
pub enum ObserveError {
    /// A watched PID that does not exist (or cannot be read) when watching starts.
    NoSuchPid(u32),
    Cgroup {
        path: String,
        why: String,
    },
    /// The target could not be started, or exited before it was ready.
    Launch {
        command: String,
        why: String,
    },
    /// The target never accepted on its port; it has been stopped.
    NotReady {
        command: String,
        port: u16,
        waited: Duration,
        log_tail: String,
    },
    Io(String),
}

impl fmt::Display for ObserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObserveError::NoSuchPid(pid) => write!(f, "no process with PID {pid} to watch"),
            ObserveError::Cgroup { path, why } => write!(f, "cgroup {path}: {why}"),
            ObserveError::Launch { command, why } => write!(f, "target `{command}`: {why}"),
            ObserveError::NotReady {
                command,
                port,
                waited,
                log_tail,
            } => {
                write!(
                    f,
                    "target `{command}` did not accept on 127.0.0.1:{port} within {:.1}s; stopped it",
                    waited.as_secs_f64()
                )?;
                if log_tail.is_empty() {
                    write!(f, " (its log is empty)")
                } else {
                    write!(f, "; its log ends:\n{log_tail}")
                }
            }
            ObserveError::Io(why) => write!(f, "observing: {why}"),
        }
    }
}

impl std::error::Error for ObserveError {}
