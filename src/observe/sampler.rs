//! The sampling thread ("ingestbench-observe") and its state: the processes seen (each a PID
//! and a `starttime`), the name rescan, the cgroups, ingestbench itself, the intervals
//! recorded, and the summaries at the end. The module header (`observe/mod.rs`) says what is
//! read and how it is counted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::procfs::{self, Reader};
use super::summary;
use super::{
    CgroupSecond, CgroupSummary, ObserveError, Observed, ProcSecond, ProcSummary, Second, Totals,
    WatchSpec,
};
use crate::spool::Spool;

/// The shortest interval we sample at.
const MIN_INTERVAL: Duration = Duration::from_millis(10);
/// statfs magic of cgroup2.
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

/// A running watch: the sampling thread and the last interval it completed.
pub struct Watcher {
    latest: Arc<Mutex<Arc<Second>>>,
    /// PIDs to start following at the next sample (`follow`).
    joining: Arc<Mutex<Vec<u32>>>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Observed>>,
}

impl Watcher {
    /// Starts the sampling thread ("ingestbench-observe"); takes a first reading at once.
    /// A PID that does not exist or a cgroup dir that is missing/not v2 → ObserveError naming it.
    /// An interval under 10 ms is taken as 10 ms.
    pub fn start(spec: WatchSpec, interval: Duration) -> Result<Watcher, ObserveError> {
        let mut state = State::new(spec, interval.max(MIN_INTERVAL))?;
        let joining = state.joining.clone();
        let first = Arc::new(state.first_reading());
        let latest = Arc::new(Mutex::new(first));
        let (tx, rx) = mpsc::channel();
        let shared = Arc::clone(&latest);
        let thread = std::thread::Builder::new()
            .name("ingestbench-observe".into())
            .spawn(move || state.run(&rx, &shared))
            .map_err(|e| ObserveError::Io(format!("cannot start the sampling thread: {e}")))?;
        Ok(Watcher {
            latest,
            joining,
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    /// The last complete interval (t = 0 before the first one completes: then the first
    /// readings, with no cores yet).
    pub fn latest(&self) -> Arc<Second> {
        match self.latest.lock() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// A handle that adds PIDs to follow from another thread.
    pub fn follower(&self) -> Follower {
        Follower(self.joining.clone())
    }

    /// Stops the thread (bounded, within ~1 interval) and gives the whole record.
    pub fn finish(mut self) -> Observed {
        self.stop_thread().unwrap_or_default()
    }

    fn stop_thread(&mut self) -> Option<Observed> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        self.thread.take().and_then(|h| h.join().ok())
    }
}

/// Adds PIDs to a running `Watcher` from any thread.
#[derive(Clone)]
pub struct Follower(Arc<Mutex<Vec<u32>>>);

impl Follower {
    /// Starts following `pid` too from the next sample (a target restarted during the run),
    /// counted from its birth.
    pub fn follow(&self, pid: u32) {
        match self.0.lock() {
            Ok(mut g) => g.push(pid),
            Err(poisoned) => poisoned.into_inner().push(pid),
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.stop_thread();
    }
}

/// One process: its identity, baseline, last reading and what its summary needs.
struct Proc {
    pid: u32,
    starttime: u64,
    cmdline: String,
    /// Ticks at the baseline and at the last reading (user, system).
    base: (u64, u64),
    last: (u64, u64),
    last_at: Instant,
    cur: ProcSecond,
    alive: bool,
    /// The interval in which it was found gone.
    died_t: Option<u32>,
    first_t: u32,
    last_t: u32,
    watched_s: f64,
    full: Vec<f64>,
    rss_peak: u64,
    pss_peak: Option<u64>,
    threads_max: u32,
    fds_max: u32,
    /// It lies inside a watched cgroup (read once, when first followed): its CPU is in that
    /// cgroup's already, so the totals leave it out.
    in_cgroup: bool,
}

/// One reading of one process.
struct Raw {
    comm: [u8; 32],
    comm_len: usize,
    exited: bool,
    user: u64,
    system: u64,
    threads: u32,
    starttime: u64,
    rss: Option<u64>,
    hwm: Option<u64>,
    pss: Option<u64>,
    fds: u32,
}

impl Raw {
    #[allow(
        clippy::indexing_slicing,
        reason = "comm is a 32-byte array and comm_len is at most its length (the copy takes at \
                  most that many bytes); i < procs.len() is the loop bound"
    )]
    fn comm(&self) -> &[u8] {
        &self.comm[..self.comm_len]
    }
}

/// `status` (for VmHWM) is read in one sample of this many, and at a process's first and last
/// readings; VmHWM only grows, so a late read loses nothing but its timing. RSS comes from
/// `statm` every sample: the same counter, a third of the cost.
const STATUS_EVERY: u32 = 5;

/// Reads one process; `None` when its `stat` is gone or unparsable. A zombie's memory and fds
/// are not read (it has none). `detail`: read `status` too (VmHWM).
fn read_proc(r: &mut Reader, pid: u32, children: bool, detail: bool, page: u64) -> Option<Raw> {
    let (mut raw, exited) = {
        let st = procfs::parse_stat(r.proc_file(pid, "stat").ok()?)?;
        let mut comm = [0u8; 32];
        for (to, from) in comm.iter_mut().zip(st.comm) {
            *to = *from;
        }
        let comm_len = st.comm.len().min(comm.len());
        let (cu, cs) = if children {
            (st.cutime, st.cstime)
        } else {
            (0, 0)
        };
        let raw = Raw {
            comm,
            comm_len,
            exited: st.exited(),
            user: st.utime.saturating_add(cu),
            system: st.stime.saturating_add(cs),
            threads: u32::try_from(st.threads).unwrap_or(u32::MAX),
            starttime: st.starttime,
            rss: None,
            hwm: None,
            pss: None,
            fds: 0,
        };
        (raw, st.exited())
    };
    if !exited {
        if detail {
            if let Ok(b) = r.proc_file(pid, "status") {
                (raw.rss, raw.hwm) = procfs::parse_status(b);
            }
        } else {
            raw.rss = r
                .proc_file(pid, "statm")
                .ok()
                .and_then(procfs::parse_statm)
                .map(|p| p.saturating_mul(page));
        }
        raw.pss = r
            .proc_file(pid, "smaps_rollup")
            .ok()
            .and_then(procfs::parse_smaps_rollup);
        raw.fds = r.fd_count(pid);
    }
    Some(raw)
}

impl Proc {
    /// A process first read at `now`. `born_since`: it started after the previous sample (at
    /// `prev_at`), so its baseline is zero and this interval counts all its CPU.
    fn new(
        pid: u32,
        raw: &Raw,
        cmdline: String,
        t: u32,
        now: Instant,
        born: Option<Instant>,
    ) -> Proc {
        let (base, last_at) = match born {
            Some(prev_at) => ((0, 0), prev_at),
            None => ((raw.user, raw.system), now),
        };
        Proc {
            pid,
            starttime: raw.starttime,
            cmdline,
            base,
            last: base,
            last_at,
            cur: ProcSecond {
                pid,
                name: String::from_utf8_lossy(raw.comm()).into_owned(),
                alive: true,
                ..ProcSecond::default()
            },
            alive: true,
            died_t: None,
            first_t: t,
            last_t: t,
            watched_s: 0.0,
            full: Vec::new(),
            rss_peak: 0,
            pss_peak: None,
            threads_max: 0,
            fds_max: 0,
            in_cgroup: false,
        }
    }

    /// Applies a reading taken at `now` in interval `t`; `full`: the interval counts for p95
    /// and max. `None` (gone) or another `starttime` (a reused PID) ends it.
    fn update(&mut self, raw: Option<&Raw>, t: u32, now: Instant, tck: f64, full: bool) {
        let Some(raw) = raw.filter(|r| r.starttime == self.starttime) else {
            // Gone, or its PID is another process's now: no CPU seen in this interval.
            self.cur.cores = 0.0;
            self.end(t);
            return;
        };
        let dt = now.saturating_duration_since(self.last_at).as_secs_f64();
        let ticks = raw.user.saturating_sub(self.last.0) + raw.system.saturating_sub(self.last.1);
        let cores = if dt > 0.0 {
            ticks as f64 / tck / dt
        } else {
            0.0
        };
        if dt > 0.0 {
            self.watched_s += dt;
            if full {
                self.full.push(cores);
            }
        }
        self.last = (raw.user.max(self.last.0), raw.system.max(self.last.1));
        self.last_at = now;
        let user_s = self.last.0.saturating_sub(self.base.0) as f64 / tck;
        let system_s = self.last.1.saturating_sub(self.base.1) as f64 / tck;
        let c = &mut self.cur;
        c.cores = cores;
        c.user_s = user_s;
        c.system_s = system_s;
        c.cpu_s = user_s + system_s;
        if c.name.as_bytes() != raw.comm() {
            c.name = String::from_utf8_lossy(raw.comm()).into_owned();
        }
        if raw.exited {
            // A zombie: its final CPU is in, its memory is gone; keep the last memory readings.
            self.end(t);
            return;
        }
        c.rss_bytes = raw.rss.unwrap_or(0);
        // VmHWM when read this time; otherwise the last one (it only grows), and never under RSS.
        c.rss_peak_bytes = raw.hwm.unwrap_or(c.rss_peak_bytes).max(c.rss_bytes);
        c.pss_bytes = raw.pss;
        c.threads = raw.threads;
        c.fds = raw.fds;
        self.last_t = t;
        self.rss_peak = self.rss_peak.max(c.rss_peak_bytes);
        if let Some(p) = raw.pss {
            self.pss_peak = Some(self.pss_peak.map_or(p, |q| q.max(p)));
        }
        self.threads_max = self.threads_max.max(c.threads);
        self.fds_max = self.fds_max.max(c.fds);
    }

    fn end(&mut self, t: u32) {
        if self.alive {
            self.alive = false;
            self.died_t = Some(t);
            self.cur.alive = false;
        }
    }

    fn summary(&self) -> ProcSummary {
        let c = &self.cur;
        let (cores_mean, cores_p95, cores_max) =
            summary::core_stats(c.cpu_s, self.watched_s, &self.full);
        ProcSummary {
            pid: self.pid,
            name: c.name.clone(),
            cmdline: self.cmdline.clone(),
            first_t: self.first_t,
            last_t: self.last_t,
            cpu_s: c.cpu_s,
            user_s: c.user_s,
            system_s: c.system_s,
            cores_mean,
            cores_p95,
            cores_max,
            rss_peak_bytes: self.rss_peak,
            pss_peak_bytes: self.pss_peak,
            threads_max: self.threads_max,
            fds_max: self.fds_max,
        }
    }
}

/// One cgroup v2 directory.
struct Cgroup {
    /// The directory, canonical (symlinks, `..` and a trailing `/` resolved): the same
    /// directory however it was named.
    dir: PathBuf,
    /// It lies inside another watched cgroup, whose CPU covers its subtree: listed, and left
    /// out of the totals.
    nested: bool,
    cpu_stat: PathBuf,
    memory_current: PathBuf,
    memory_peak: PathBuf,
    base_usec: u64,
    last_usec: u64,
    last_at: Instant,
    cur: CgroupSecond,
    watched_s: f64,
    full: Vec<f64>,
    peak: u64,
}

/// `path` made absolute (under the cgroup2 mount when relative) and checked: a directory on a
/// cgroup2 filesystem whose `cpu.stat` we can read.
fn open_cgroup(path: &Path, r: &mut Reader) -> Result<Cgroup, ObserveError> {
    let err = |why: String| ObserveError::Cgroup {
        path: path.display().to_string(),
        why,
    };
    let dir = if path.is_absolute() {
        path.to_path_buf()
    } else {
        procfs::cgroup2_root()
            .ok_or_else(|| err("no cgroup v2 filesystem is mounted here".into()))?
            .join(path)
    };
    let shown = dir.display().to_string();
    let err = |why: String| ObserveError::Cgroup {
        path: shown.clone(),
        why,
    };
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(err("not a directory".into())),
        Err(e) => return Err(err(format!("cannot read it: {e}"))),
    }
    if !on_cgroup2(&dir) {
        return Err(err(
            "not a cgroup v2 directory (its filesystem is not cgroup2)".into(),
        ));
    }
    let cpu_stat = dir.join("cpu.stat");
    let usec = match r.file(&cpu_stat) {
        Ok(b) => {
            procfs::parse_cpu_stat(b).ok_or_else(|| err("cpu.stat has no usage_usec".into()))?
        }
        Err(e) => return Err(err(format!("cannot read cpu.stat: {e}"))),
    };
    Ok(Cgroup {
        dir: std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone()),
        nested: false,
        memory_current: dir.join("memory.current"),
        memory_peak: dir.join("memory.peak"),
        cpu_stat,
        base_usec: usec,
        last_usec: usec,
        last_at: Instant::now(),
        cur: CgroupSecond {
            path: shown.clone(),
            ..CgroupSecond::default()
        },
        watched_s: 0.0,
        full: Vec::new(),
        peak: 0,
    })
}

/// The watched cgroups, each directory once however often or however it was named (a config
/// and `--watch`, a relative and an absolute path, a trailing `/`), the first naming kept;
/// each marked `nested` when it lies inside another one.
fn unique_cgroups(paths: &[PathBuf], r: &mut Reader) -> Result<Vec<Cgroup>, ObserveError> {
    let mut out: Vec<Cgroup> = Vec::with_capacity(paths.len());
    for p in paths {
        let c = open_cgroup(p, r)?;
        if out.iter().all(|o| o.dir != c.dir) {
            out.push(c);
        }
    }
    let dirs: Vec<PathBuf> = out.iter().map(|c| c.dir.clone()).collect();
    for c in &mut out {
        c.nested = dirs.iter().any(|d| *d != c.dir && c.dir.starts_with(d));
    }
    Ok(out)
}

fn on_cgroup2(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs reads a NUL-terminated path we own and writes one struct we own.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    #[allow(clippy::unnecessary_cast)]
    let magic = st.f_type as i64;
    rc == 0 && magic == CGROUP2_SUPER_MAGIC
}

impl Cgroup {
    fn update(&mut self, r: &mut Reader, now: Instant, full: bool) {
        let usec = r.file(&self.cpu_stat).ok().and_then(procfs::parse_cpu_stat);
        let dt = now.saturating_duration_since(self.last_at).as_secs_f64();
        match usec {
            Some(u) => {
                let d = u.saturating_sub(self.last_usec);
                let cores = if dt > 0.0 { d as f64 / 1e6 / dt } else { 0.0 };
                if dt > 0.0 {
                    self.watched_s += dt;
                    if full {
                        self.full.push(cores);
                    }
                }
                self.last_usec = u.max(self.last_usec);
                self.cur.cores = cores;
                self.cur.cpu_s = self.last_usec.saturating_sub(self.base_usec) as f64 / 1e6;
            }
            // Gone (removed mid-run): no CPU this interval, the last readings kept.
            None => self.cur.cores = 0.0,
        }
        self.last_at = now;
        if usec.is_some() {
            self.cur.memory_bytes = r
                .file(&self.memory_current)
                .ok()
                .and_then(procfs::parse_number)
                .unwrap_or(0);
            self.cur.memory_peak_bytes = r
                .file(&self.memory_peak)
                .ok()
                .and_then(procfs::parse_number);
        }
        self.peak = self
            .peak
            .max(self.cur.memory_bytes)
            .max(self.cur.memory_peak_bytes.unwrap_or(0));
    }

    fn summary(&self) -> CgroupSummary {
        let (cores_mean, cores_p95, cores_max) =
            summary::core_stats(self.cur.cpu_s, self.watched_s, &self.full);
        CgroupSummary {
            path: self.cur.path.clone(),
            cpu_s: self.cur.cpu_s,
            cores_mean,
            cores_p95,
            cores_max,
            memory_peak_bytes: self.peak,
        }
    }
}

/// What the name rescan remembers of a PID that it has looked at: its `comm` and the verdict.
struct Seen {
    comm: [u8; 32],
    comm_len: usize,
    matched: bool,
    /// The scan that last listed it, and the one that first did.
    generation: u64,
    first: u64,
}

/// A PID that did not match is looked at again in the two scans after it appeared (a fork
/// execs within moments) and then in one scan of every `RECHECK` (an exec later in life).
const RECHECK: u64 = 8;

/// Whether the scan `generation` reads the `comm` of a PID it remembers.
fn recheck(pid: u32, seen: &Seen, generation: u64) -> bool {
    generation.saturating_sub(seen.first) <= 2
        || (u64::from(pid) + generation).is_multiple_of(RECHECK)
}

/// Everything the thread owns.
struct State {
    names: Vec<String>,
    joining: Arc<Mutex<Vec<u32>>>,
    children: bool,
    nominal: Duration,
    tck: f64,
    page: u64,
    reader: Reader,
    own_pid: u32,
    /// Every process seen, in the order first seen.
    procs: Vec<Proc>,
    /// PID → index in `procs` of the live process with that PID.
    live: HashMap<u32, usize>,
    seen: HashMap<u32, Seen>,
    generation: u64,
    own: Option<Proc>,
    cgroups: Vec<Cgroup>,
    /// The cgroup2 mount (canonical) when cgroups are watched: where a process's `0::` line of
    /// /proc/PID/cgroup is taken from.
    cgroup_root: Option<PathBuf>,
    t: u32,
    last_sample: Instant,
    last_sample_boot: f64,
    /// Every interval: the last minute as it is, older ones packed (flat memory however long).
    seconds: Spool<Second>,
}

impl State {
    fn new(spec: WatchSpec, nominal: Duration) -> Result<State, ObserveError> {
        let mut reader = Reader::default();
        let cgroups = unique_cgroups(&spec.cgroups, &mut reader)?;
        let cgroup_root = if cgroups.is_empty() {
            None
        } else {
            procfs::cgroup2_root().map(|r| std::fs::canonicalize(&r).unwrap_or(r))
        };
        let mut s = State {
            names: spec.names.into_iter().filter(|n| !n.is_empty()).collect(),
            joining: Arc::new(Mutex::new(Vec::new())),
            children: spec.children,
            nominal,
            tck: procfs::clk_tck(),
            page: procfs::page_size(),
            reader,
            own_pid: std::process::id(),
            procs: Vec::new(),
            live: HashMap::new(),
            seen: HashMap::new(),
            generation: 0,
            own: None,
            cgroups,
            cgroup_root,
            t: 0,
            last_sample: Instant::now(),
            last_sample_boot: procfs::boot_seconds(),
            seconds: Spool::new(60),
        };
        let now = Instant::now();
        for &pid in &spec.pids {
            if s.live.contains_key(&pid) {
                continue;
            }
            match read_proc(&mut s.reader, pid, s.children, true, s.page) {
                Some(raw) if !raw.exited => s.add(pid, &raw, now, None),
                _ => return Err(ObserveError::NoSuchPid(pid)),
            }
        }
        if spec.include_self {
            let pid = s.own_pid;
            let raw = read_proc(&mut s.reader, pid, s.children, true, s.page)
                .ok_or_else(|| ObserveError::Io("cannot read /proc/self/stat".into()))?;
            let cmdline = s.cmdline(pid);
            let mut own = Proc::new(pid, &raw, cmdline, 0, now, None);
            own.update(Some(&raw), 0, now, s.tck, false);
            s.own = Some(own);
        }
        Ok(s)
    }

    fn cmdline(&mut self, pid: u32) -> String {
        self.reader
            .proc_file(pid, "cmdline")
            .map(procfs::cmdline_text)
            .unwrap_or_default()
    }

    /// Starts following `pid` from this reading.
    fn add(&mut self, pid: u32, raw: &Raw, now: Instant, born: Option<Instant>) {
        let cmdline = self.cmdline(pid);
        let mut p = Proc::new(pid, raw, cmdline, self.t, now, born);
        p.in_cgroup = self.in_watched_cgroup(pid);
        let full = born.is_some() && self.t > 0;
        p.update(Some(raw), self.t, now, self.tck, full);
        if !p.alive {
            return;
        }
        self.live.insert(pid, self.procs.len());
        self.procs.push(p);
    }

    /// Whether `pid`'s cgroup v2 directory (its `0::` line of /proc/PID/cgroup) is a watched
    /// cgroup or lies inside one.
    fn in_watched_cgroup(&mut self, pid: u32) -> bool {
        let Some(root) = &self.cgroup_root else {
            return false;
        };
        let Some(rel) = self
            .reader
            .proc_file(pid, "cgroup")
            .ok()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(procfs::cgroup_line)
        else {
            return false;
        };
        let dir = root.join(rel.trim_start_matches('/'));
        self.cgroups.iter().any(|c| dir.starts_with(&c.dir))
    }

    /// Starts following the PIDs `Watcher::follow` gave, each counted from its birth.
    fn join_followed(&mut self) {
        let pids: Vec<u32> = match self.joining.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        let now = Instant::now();
        for pid in pids {
            if self.live.contains_key(&pid) {
                continue;
            }
            if let Some(raw) = read_proc(&mut self.reader, pid, self.children, true, self.page)
                && !raw.exited
            {
                self.add(pid, &raw, now, Some(now));
            }
        }
    }

    /// The readings at start: the name scan, the baselines; the interval t = 0.
    fn first_reading(&mut self) -> Second {
        let now = Instant::now();
        self.scan(now);
        for c in &mut self.cgroups {
            c.last_at = now;
            c.update(&mut self.reader, now, false);
        }
        self.last_sample = now;
        self.last_sample_boot = procfs::boot_seconds();
        self.second(0.0)
    }

    /// Lists /proc and starts following every process that newly matches a name. A process
    /// born since the previous sample is counted from zero.
    #[allow(
        clippy::indexing_slicing,
        reason = "comm is a 32-byte array and comm_len is at most its length (the copy takes at \
                  most that many bytes); i < procs.len() is the loop bound"
    )]
    fn scan(&mut self, now: Instant) {
        if self.names.is_empty() {
            return;
        }
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        self.generation += 1;
        let generation = self.generation;
        let born_after_ticks = (self.last_sample_boot * self.tck).floor() as u64;
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == self.own_pid || self.live.contains_key(&pid) {
                continue;
            }
            if let Some(seen) = self.seen.get_mut(&pid)
                && !recheck(pid, seen, generation)
            {
                seen.generation = generation;
                if !seen.matched {
                    continue;
                }
            }
            let mut comm = [0u8; 32];
            let comm_len = match self.reader.proc_file(pid, "comm") {
                Ok(b) => {
                    let b = b.strip_suffix(b"\n").unwrap_or(b);
                    for (to, from) in comm.iter_mut().zip(b) {
                        *to = *from;
                    }
                    b.len().min(comm.len())
                }
                Err(_) => continue,
            };
            let first = self.seen.get(&pid).map_or(generation, |s| s.first);
            let cached = self
                .seen
                .get_mut(&pid)
                .filter(|s| s.comm[..s.comm_len] == comm[..comm_len]);
            let matched = match cached {
                Some(s) => {
                    s.generation = generation;
                    s.matched
                }
                None => {
                    let matched = match self.reader.proc_file(pid, "cmdline") {
                        Ok(b) => procfs::name_matches(
                            &self.names,
                            &comm[..comm_len],
                            procfs::argv0_basename(b),
                        ),
                        Err(_) => procfs::name_matches(&self.names, &comm[..comm_len], b""),
                    };
                    self.seen.insert(
                        pid,
                        Seen {
                            comm,
                            comm_len,
                            matched,
                            generation,
                            first,
                        },
                    );
                    matched
                }
            };
            if !matched {
                continue;
            }
            let Some(raw) = read_proc(&mut self.reader, pid, self.children, true, self.page) else {
                continue;
            };
            if raw.exited {
                continue;
            }
            let born =
                (self.t > 0 && raw.starttime >= born_after_ticks).then_some(self.last_sample);
            self.add(pid, &raw, now, born);
        }
        self.seen.retain(|_, s| s.generation == generation);
    }

    /// One sample: every followed process, new matches, ingestbench, the cgroups. `last`: the
    /// final one, which reads everything.
    #[allow(
        clippy::indexing_slicing,
        reason = "comm is a 32-byte array and comm_len is at most its length (the copy takes at \
                  most that many bytes); i < procs.len() is the loop bound"
    )]
    fn sample(&mut self, last: bool) -> Second {
        let now = Instant::now();
        let interval_s = now
            .saturating_duration_since(self.last_sample)
            .as_secs_f64();
        let full = summary::is_full(interval_s, self.nominal.as_secs_f64());
        self.t = self.t.saturating_add(1);
        let t = self.t;
        let detail = last || t.is_multiple_of(STATUS_EVERY);
        for i in 0..self.procs.len() {
            if !self.procs[i].alive {
                continue;
            }
            let pid = self.procs[i].pid;
            let raw = read_proc(&mut self.reader, pid, self.children, detail, self.page);
            let p = &mut self.procs[i];
            p.update(raw.as_ref(), t, Instant::now(), self.tck, full);
            if !p.alive {
                self.live.remove(&pid);
            }
        }
        self.scan(Instant::now());
        if let Some(own) = self.own.as_mut() {
            let raw = read_proc(&mut self.reader, own.pid, self.children, detail, self.page);
            own.update(raw.as_ref(), t, Instant::now(), self.tck, full);
        }
        for c in &mut self.cgroups {
            c.update(&mut self.reader, Instant::now(), full);
        }
        self.last_sample = now;
        self.last_sample_boot = procfs::boot_seconds();
        self.second(interval_s)
    }

    /// The interval just read, as a [`Second`]: live processes and those found gone in it.
    fn second(&self, interval_s: f64) -> Second {
        let t = self.t;
        let mut total = Totals::default();
        let mut procs = Vec::new();
        // Each CPU second once: a process inside a watched cgroup, and a cgroup inside
        // another, are already in the enclosing cgroup's figures.
        for p in &self.procs {
            if !p.in_cgroup {
                total.cpu_s += p.cur.cpu_s;
            }
            if p.alive || p.died_t == Some(t) {
                if !p.in_cgroup {
                    total.cores += p.cur.cores;
                }
                total.busiest_cores = total.busiest_cores.max(p.cur.cores);
                if p.alive {
                    total.rss_bytes += p.cur.rss_bytes;
                    total.most_memory_bytes = total.most_memory_bytes.max(p.cur.rss_bytes);
                }
                procs.push(p.cur.clone());
            }
        }
        let mut cgroups = Vec::with_capacity(self.cgroups.len());
        for c in &self.cgroups {
            if !c.nested {
                total.cpu_s += c.cur.cpu_s;
                total.cores += c.cur.cores;
            }
            total.busiest_cores = total.busiest_cores.max(c.cur.cores);
            total.most_memory_bytes = total.most_memory_bytes.max(c.cur.memory_bytes);
            cgroups.push(c.cur.clone());
        }
        Second {
            t,
            interval_s,
            procs,
            cgroups,
            own: self.own.as_ref().map(|o| o.cur.clone()),
            total,
        }
    }

    /// The thread: a sample at start + k × interval until told to stop (or the Watcher is
    /// gone), then a last partial one when at least a quarter interval has passed.
    fn run(mut self, stop: &mpsc::Receiver<()>, latest: &Mutex<Arc<Second>>) -> Observed {
        let start = self.last_sample;
        let nominal = self.nominal;
        let mut k: u32 = 1;
        loop {
            let deadline = nominal
                .checked_mul(k)
                .and_then(|d| start.checked_add(d))
                .unwrap_or_else(|| Instant::now() + nominal);
            let wait = deadline.saturating_duration_since(Instant::now());
            let stopping = match stop.recv_timeout(wait) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                Err(RecvTimeoutError::Timeout) => false,
            };
            if stopping && self.last_sample.elapsed() < nominal / 4 {
                break;
            }
            self.join_followed();
            let second = self.sample(stopping);
            let shared = Arc::new(second.clone());
            self.seconds.push(second);
            match latest.lock() {
                Ok(mut g) => *g = shared,
                Err(poisoned) => *poisoned.into_inner() = shared,
            }
            if stopping {
                break;
            }
            let behind = (start.elapsed().as_secs_f64() / nominal.as_secs_f64()).floor();
            k = k.saturating_add(1).max((behind as u32).saturating_add(1));
        }
        self.observed()
    }

    fn observed(self) -> Observed {
        let seconds = self.seconds.into_vec();
        let processes: Vec<ProcSummary> = self.procs.iter().map(Proc::summary).collect();
        let cgroups: Vec<CgroupSummary> = self.cgroups.iter().map(Cgroup::summary).collect();
        let total =
            summary::total_summary(&seconds, self.nominal.as_secs_f64(), &processes, &cgroups);
        Observed {
            own: self.own.as_ref().map(Proc::summary),
            seconds,
            processes,
            cgroups,
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(user: u64, system: u64, starttime: u64, exited: bool) -> Raw {
        let mut comm = [0u8; 32];
        comm[..4].copy_from_slice(b"prog");
        Raw {
            comm,
            comm_len: 4,
            exited,
            user,
            system,
            threads: 3,
            starttime,
            rss: Some(4096),
            hwm: Some(8192),
            pss: Some(2048),
            fds: 7,
        }
    }

    #[test]
    fn cores_are_ticks_over_the_interval() {
        let t0 = Instant::now();
        let mut p = Proc::new(9, &raw(100, 50, 77, false), "prog -x".into(), 0, t0, None);
        p.update(Some(&raw(100, 50, 77, false)), 0, t0, 100.0, false);
        assert_eq!((p.cur.cores, p.cur.cpu_s, p.watched_s), (0.0, 0.0, 0.0));
        let t1 = t0 + Duration::from_secs(2);
        p.update(Some(&raw(160, 70, 77, false)), 1, t1, 100.0, true);
        assert!((p.cur.cores - 0.4).abs() < 1e-12, "{}", p.cur.cores);
        assert!((p.cur.user_s - 0.6).abs() < 1e-12 && (p.cur.system_s - 0.2).abs() < 1e-12);
        assert_eq!(
            (p.cur.rss_bytes, p.cur.rss_peak_bytes, p.cur.fds),
            (4096, 8192, 7)
        );
        assert_eq!(p.full.len(), 1);
        let s = p.summary();
        assert!((s.cores_mean - 0.4).abs() < 1e-12 && s.cores_max == s.cores_p95);
        assert_eq!(
            (s.first_t, s.last_t, s.threads_max, s.pss_peak_bytes),
            (0, 1, 3, Some(2048))
        );
    }

    #[test]
    fn a_reused_pid_or_a_vanished_one_ends_the_process() {
        let t0 = Instant::now();
        let mut p = Proc::new(9, &raw(10, 0, 77, false), String::new(), 0, t0, None);
        let t1 = t0 + Duration::from_secs(1);
        p.update(Some(&raw(60, 0, 77, false)), 1, t1, 100.0, true);
        p.update(
            Some(&raw(1, 0, 999, false)),
            2,
            t1 + Duration::from_secs(1),
            100.0,
            true,
        );
        assert!(!p.alive && !p.cur.alive && p.died_t == Some(2));
        assert_eq!(p.cur.cores, 0.0);
        assert!((p.cur.cpu_s - 0.5).abs() < 1e-12, "last reading kept");
        assert_eq!(p.cur.rss_bytes, 4096);
        assert_eq!(p.summary().last_t, 1);
        let mut q = Proc::new(9, &raw(10, 0, 77, false), String::new(), 0, t0, None);
        q.update(None, 1, t1, 100.0, true);
        assert!(!q.alive && q.died_t == Some(1));
    }

    #[test]
    fn a_zombie_brings_its_final_cpu() {
        let t0 = Instant::now();
        let mut p = Proc::new(9, &raw(0, 0, 77, false), String::new(), 0, t0, None);
        let mut z = raw(30, 10, 77, true);
        z.rss = None;
        p.update(Some(&z), 1, t0 + Duration::from_secs(1), 100.0, true);
        assert!(!p.alive && p.died_t == Some(1));
        assert!((p.cur.cpu_s - 0.4).abs() < 1e-12 && (p.cur.cores - 0.4).abs() < 1e-12);
        assert_eq!(p.cur.rss_bytes, 0, "never had a live reading");
    }

    #[test]
    fn a_process_born_in_the_interval_counts_from_zero() {
        let prev = Instant::now();
        let now = prev + Duration::from_millis(500);
        let r = raw(20, 5, 500, false);
        let mut p = Proc::new(9, &r, String::new(), 3, now, Some(prev));
        p.update(Some(&r), 3, now, 100.0, true);
        assert!((p.cur.cpu_s - 0.25).abs() < 1e-12);
        assert!((p.cur.cores - 0.5).abs() < 1e-12);
        assert_eq!(p.first_t, 3);
    }

    #[test]
    fn rechecks_young_pids_then_one_in_eight() {
        let seen = |first| Seen {
            comm: [0; 32],
            comm_len: 0,
            matched: false,
            generation: 0,
            first,
        };
        assert!(recheck(5, &seen(10), 11) && recheck(5, &seen(10), 12));
        let later: Vec<u64> = (13..29).filter(|g| recheck(5, &seen(10), *g)).collect();
        assert_eq!(later, vec![19, 27]);
    }
}
