//! The /proc and cgroup v2 files the sampler reads: pure parsers over the bytes of one file
//! (`stat`, `status`, `smaps_rollup`, `cpu.stat`, a single number, `cmdline`), name matching,
//! and a [`Reader`] that reads a file into one reused buffer through one reused path string, so
//! a sample allocates nothing here. Also where the cgroup2 mount is and which cgroup we are in.

use std::fmt::Write as _;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The fields of `/proc/PID/stat` we use; `comm` borrows the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat<'a> {
    pub comm: &'a [u8],
    pub state: u8,
    pub utime: u64,
    pub stime: u64,
    pub cutime: u64,
    pub cstime: u64,
    pub threads: u64,
    /// Ticks since boot.
    pub starttime: u64,
}

impl Stat<'_> {
    /// A zombie or a dead task: it has exited, only not been reaped.
    pub fn exited(&self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }
}

/// `pid (comm) S ppid ...`: `comm` is between the first `(` and the *last* `)` (it may hold
/// spaces and parentheses); the fields after it are counted from `state` (field 3).
pub fn parse_stat(buf: &[u8]) -> Option<Stat<'_>> {
    let open = memchr::memchr(b'(', buf)?;
    let close = memchr::memrchr(b')', buf)?;
    if close < open {
        return None;
    }
    let comm = buf.get(open + 1..close)?;
    let rest = buf.get(close + 1..)?;
    let mut fields = rest
        .split(|b| *b == b' ' || *b == b'\n')
        .filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?;
    // After state (field 3): field n is the (n - 4)th of the remaining iterator.
    let mut want = |skip: usize| -> Option<u64> { parse_u64(fields.nth(skip)?) };
    let utime = want(10)?; // field 14
    let stime = want(0)?; // 15
    let cutime = want(0)?; // 16 (signed in the kernel; never negative in practice)
    let cstime = want(0)?; // 17
    let threads = want(2)?; // 20
    let starttime = want(1)?; // 22
    Some(Stat {
        comm,
        state,
        utime,
        stime,
        cutime,
        cstime,
        threads,
        starttime,
    })
}

/// `VmRSS` and `VmHWM` of `/proc/PID/status`, in bytes (the file says kB); `None` each where the
/// line is missing (kernel threads have neither).
pub fn parse_status(buf: &[u8]) -> (Option<u64>, Option<u64>) {
    let mut rss = None;
    let mut hwm = None;
    for line in buf.split(|b| *b == b'\n') {
        if let Some(v) = line.strip_prefix(b"VmRSS:") {
            rss = parse_kb(v);
        } else if let Some(v) = line.strip_prefix(b"VmHWM:") {
            hwm = parse_kb(v);
        }
        if rss.is_some() && hwm.is_some() {
            break;
        }
    }
    (rss, hwm)
}

/// The resident pages of `/proc/PID/statm` (its second field; the same count as `VmRSS`).
pub fn parse_statm(buf: &[u8]) -> Option<u64> {
    let mut f = buf
        .split(|b| *b == b' ' || *b == b'\n')
        .filter(|f| !f.is_empty());
    f.next()?;
    parse_u64(f.next()?)
}

/// The `Pss:` line of `smaps_rollup` (not `Pss_Anon:` and the like), in bytes.
pub fn parse_smaps_rollup(buf: &[u8]) -> Option<u64> {
    buf.split(|b| *b == b'\n')
        .find_map(|l| l.strip_prefix(b"Pss:"))
        .and_then(parse_kb)
}

/// `usage_usec` of a cgroup's `cpu.stat`.
pub fn parse_cpu_stat(buf: &[u8]) -> Option<u64> {
    buf.split(|b| *b == b'\n')
        .find_map(|l| l.strip_prefix(b"usage_usec "))
        .and_then(parse_u64)
}

/// A file holding one number (`memory.current`, `memory.peak`); `max` or garbage → `None`.
pub fn parse_number(buf: &[u8]) -> Option<u64> {
    parse_u64(buf)
}

/// `  1234 kB` → 1234 × 1024.
fn parse_kb(v: &[u8]) -> Option<u64> {
    let v = trim(v);
    let digits = v.strip_suffix(b"kB").unwrap_or(v);
    parse_u64(digits)?.checked_mul(1024)
}

fn trim(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    v.get(start..end.max(start)).unwrap_or_default()
}

fn parse_u64(v: &[u8]) -> Option<u64> {
    let v = trim(v);
    if v.is_empty() || v.len() > 20 {
        return None;
    }
    let mut n: u64 = 0;
    for &b in v {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

/// The basename of argv[0]: `cmdline` up to its first NUL, after its last `/`.
pub fn argv0_basename(cmdline: &[u8]) -> &[u8] {
    let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or(b"");
    match memchr::memrchr(b'/', argv0) {
        Some(i) => argv0.get(i + 1..).unwrap_or_default(),
        None => argv0,
    }
}

/// `cmdline` with its NULs as spaces, for people.
pub fn cmdline_text(cmdline: &[u8]) -> String {
    let trimmed = cmdline.strip_suffix(b"\0").unwrap_or(cmdline);
    String::from_utf8_lossy(trimmed).replace('\0', " ")
}

/// Whether a process named `comm` (the kernel's, ≤ 15 bytes, no newline) with this argv[0]
/// basename is one of `names`.
pub fn name_matches(names: &[String], comm: &[u8], argv0: &[u8]) -> bool {
    names
        .iter()
        .any(|n| !n.is_empty() && (n.as_bytes() == comm || n.as_bytes() == argv0))
}

/// Whether process `pid` is there and has not exited (a zombie is gone, only not reaped).
pub fn alive(pid: u32) -> bool {
    let mut r = Reader::default();
    r.proc_file(pid, "stat")
        .ok()
        .and_then(parse_stat)
        .is_some_and(|st| !st.exited())
}

/// The PIDs of every process named `name` (its `comm`, or argv[0]'s basename), this one
/// left out, in /proc's order.
pub fn pids_named(name: &str) -> Vec<u32> {
    let names = [name.to_string()];
    let own = std::process::id();
    let mut r = Reader::default();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == own {
            continue;
        }
        let comm = match r.proc_file(pid, "comm") {
            Ok(b) => b.strip_suffix(b"\n").unwrap_or(b).to_vec(),
            Err(_) => continue,
        };
        let argv0 = r
            .proc_file(pid, "cmdline")
            .map(|b| argv0_basename(b).to_vec())
            .unwrap_or_default();
        if name_matches(&names, &comm, &argv0) {
            pids.push(pid);
        }
    }
    pids
}

/// Reads small /proc and cgroup files into one reused buffer.
pub struct Reader {
    path: String,
    pub buf: Vec<u8>,
}

impl Default for Reader {
    fn default() -> Self {
        Reader {
            path: String::with_capacity(64),
            buf: Vec::with_capacity(MIN_BUF),
        }
    }
}

impl Reader {
    /// `/proc/{pid}/{file}` into the buffer.
    pub fn proc_file(&mut self, pid: u32, file: &str) -> io::Result<&[u8]> {
        self.path.clear();
        let _ = write!(self.path, "/proc/{pid}/{file}");
        read_into(Path::new(&self.path), &mut self.buf)?;
        Ok(&self.buf)
    }

    /// Any file into the buffer.
    pub fn file(&mut self, path: &Path) -> io::Result<&[u8]> {
        read_into(path, &mut self.buf)?;
        Ok(&self.buf)
    }

    /// Open file descriptors of `pid`: the size of `/proc/PID/fd` (Linux ≥ 6.2), or its entries
    /// counted where that is 0; 0 when unreadable.
    pub fn fd_count(&mut self, pid: u32) -> u32 {
        self.path.clear();
        let _ = write!(self.path, "/proc/{pid}/fd");
        let p = Path::new(&self.path);
        match std::fs::metadata(p) {
            Ok(m) if m.len() > 0 => u32::try_from(m.len()).unwrap_or(u32::MAX),
            Ok(_) => std::fs::read_dir(p).map_or(0, |d| {
                u32::try_from(d.filter(|e| e.is_ok()).count()).unwrap_or(u32::MAX)
            }),
            Err(_) => 0,
        }
    }
}

/// Reads a /proc or cgroup file whole into `buf` (its capacity kept). The files read here
/// (`stat`, `status`, `smaps_rollup`, `comm`, `cmdline`, `cpu.stat`, `memory.*`) are one
/// record each, which procfs and kernfs give whole in one read, so a read that does not fill
/// the buffer is the end: one `read` per file, not the second one `read_to_end` makes to see
/// EOF. (Not for multi-record files such as `maps`, where a short read can stop at a record.)
fn read_into(path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
    let mut f = std::fs::File::open(path)?;
    let cap = buf.capacity().max(MIN_BUF);
    buf.clear();
    buf.resize(cap, 0);
    let mut len = 0;
    loop {
        match f.read(buf.get_mut(len..).unwrap_or_default()) {
            Ok(n) => {
                len += n;
                if n == 0 || len < buf.len() {
                    break;
                }
                let more = buf.len() * 2;
                buf.resize(more, 0);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                buf.clear();
                return Err(e);
            }
        }
    }
    buf.truncate(len);
    Ok(())
}

/// The read buffer's least size: `status` is ~1.5 KiB, `smaps_rollup` under 1 KiB.
const MIN_BUF: usize = 8192;

/// `sysconf(_SC_CLK_TCK)`, 100 when it says nothing sensible.
pub fn clk_tck() -> f64 {
    // SAFETY: sysconf takes a constant and returns a number; no memory is involved.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// `sysconf(_SC_PAGESIZE)`, 4096 when it says nothing sensible.
pub fn page_size() -> u64 {
    // SAFETY: sysconf takes a constant and returns a number; no memory is involved.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).ok().filter(|p| *p > 0).unwrap_or(4096)
}

/// Seconds since boot on CLOCK_BOOTTIME, the clock `stat`'s `starttime` counts on.
pub fn boot_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the struct we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Where the cgroup2 filesystem is mounted, from /proc/self/mountinfo (the first cgroup2
/// entry): `/sys/fs/cgroup` on a pure v2 system, often `/sys/fs/cgroup/unified` on a hybrid one.
pub fn cgroup2_root() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo_cgroup2(&text)
}

fn mountinfo_cgroup2(text: &str) -> Option<PathBuf> {
    text.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        if right.split(' ').next()? != "cgroup2" {
            return None;
        }
        // mount ID, parent ID, major:minor, root, mount point, ...
        let mount_point = left.split(' ').nth(4)?;
        Some(PathBuf::from(unescape_mount(mount_point)))
    })
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut rest = b;
    while let Some((&c, tail)) = rest.split_first() {
        if let (
            b'\\',
            [
                d1 @ b'0'..=b'7',
                d2 @ b'0'..=b'7',
                d3 @ b'0'..=b'7',
                after @ ..,
            ],
        ) = (c, tail)
        {
            let v = u32::from(d1 - b'0') * 64 + u32::from(d2 - b'0') * 8 + u32::from(d3 - b'0');
            out.push(u8::try_from(v).unwrap_or(b'?'));
            rest = after;
        } else {
            out.push(c);
            rest = tail;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's cgroup v2 directory: the `0::` line of /proc/self/cgroup under
/// [`cgroup2_root`]; `None` without cgroup v2.
pub fn own_cgroup() -> Option<PathBuf> {
    let root = cgroup2_root()?;
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cgroup_line(&text)?;
    Some(root.join(rel.trim_start_matches('/')))
}

/// The cgroup v2 path (`0::` line) of a /proc/PID/cgroup text, relative to the cgroup2 mount.
pub fn cgroup_line(text: &str) -> Option<&str> {
    text.lines().find_map(|l| l.strip_prefix("0::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &[u8] = b"4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 1234 0 5 0 \
        150 25 7 3 20 0 4 0 987654 123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 \
        17 1 0 0 0 0 0\n";

    #[test]
    fn stat_fields_after_the_last_paren() {
        let s = parse_stat(STAT).unwrap();
        assert_eq!(s.comm, b"my (odd) prog");
        assert_eq!(s.state, b'S');
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (150, 25, 7, 3));
        assert_eq!(s.threads, 4);
        assert_eq!(s.starttime, 987654);
        assert!(!s.exited());
    }

    #[test]
    fn stat_of_this_process_parses() {
        let buf = std::fs::read("/proc/self/stat").unwrap();
        let s = parse_stat(&buf).unwrap();
        assert!(s.threads >= 1);
        assert!(s.starttime > 0);
    }

    #[test]
    fn stat_zombie_and_garbage() {
        let z = b"7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 55 0 0 0\n";
        let s = parse_stat(z).unwrap();
        assert!(s.exited());
        assert_eq!((s.utime, s.stime, s.starttime), (3, 4, 55));
        assert!(parse_stat(b"").is_none());
        assert!(parse_stat(b"1 (x) S 1 2").is_none());
        assert!(parse_stat(b"1 )x( S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19").is_none());
        assert!(parse_stat(b"1 (x) S 1 1 1 0 -1 0 0 0 0 0 ab 4 0 0 20 0 1 0 55\n").is_none());
    }

    #[test]
    fn status_rss_and_hwm() {
        let buf = b"Name:\tpython3\nVmPeak:\t  30000 kB\nVmHWM:\t   12000 kB\nVmRSS:\t   9000 kB\nThreads:\t1\n";
        assert_eq!(parse_status(buf), (Some(9000 * 1024), Some(12000 * 1024)));
        assert_eq!(
            parse_status(b"Name:\tkthreadd\nThreads:\t1\n"),
            (None, None)
        );
        let own = std::fs::read("/proc/self/status").unwrap();
        let (rss, hwm) = parse_status(&own);
        assert!(rss.unwrap() > 0 && hwm.unwrap() >= rss.unwrap());
    }

    #[test]
    fn statm_resident_pages() {
        assert_eq!(parse_statm(b"5721 3226 1630 1 0 2416 0\n"), Some(3226));
        assert_eq!(parse_statm(b"5721\n"), None);
        assert_eq!(parse_statm(b""), None);
        let own = std::fs::read("/proc/self/statm").unwrap();
        let (rss, _) = parse_status(&std::fs::read("/proc/self/status").unwrap());
        let pages = parse_statm(&own).unwrap();
        // The same counter, read moments apart.
        let bytes = pages * page_size();
        assert!(bytes.abs_diff(rss.unwrap()) < 4 << 20, "{bytes} vs {rss:?}");
    }

    #[test]
    fn smaps_rollup_pss_not_pss_anon() {
        let buf = b"561d7a17d000-7ffee9f99000 ---p 00000000 00:00 0      [rollup]\n\
            Rss:                1596 kB\nPss_Anon:            112 kB\nPss:                 267 kB\nPss_Dirty:  112 kB\n";
        assert_eq!(parse_smaps_rollup(buf), Some(267 * 1024));
        assert_eq!(parse_smaps_rollup(b"Rss: 1 kB\n"), None);
    }

    #[test]
    fn cpu_stat_and_numbers() {
        let buf = b"usage_usec 12077769106\nuser_usec 9932389293\nsystem_usec 2145379813\n";
        assert_eq!(parse_cpu_stat(buf), Some(12077769106));
        assert_eq!(parse_cpu_stat(b"user_usec 5\n"), None);
        assert_eq!(parse_number(b"4096\n"), Some(4096));
        assert_eq!(parse_number(b"max\n"), None);
        assert_eq!(parse_number(b""), None);
        assert_eq!(parse_number(b"99999999999999999999999"), None);
    }

    #[test]
    fn names_match_comm_or_argv0_basename() {
        let names = vec!["nginx".to_string(), "a-very-long-daemon-name".to_string()];
        assert!(name_matches(&names, b"nginx", b"whatever"));
        assert!(name_matches(
            &names,
            b"a-very-long-dae",
            b"a-very-long-daemon-name"
        ));
        assert!(!name_matches(&names, b"a-very-long-dae", b"other"));
        assert!(!name_matches(&names, b"nginx2", b"ngin"));
        assert!(!name_matches(&[String::new()], b"", b""));
        assert_eq!(argv0_basename(b"/usr/sbin/nginx\0-c\0/etc/x\0"), b"nginx");
        assert_eq!(
            argv0_basename(b"nginx: master process\0"),
            b"nginx: master process"
        );
        assert_eq!(argv0_basename(b""), b"");
        assert_eq!(cmdline_text(b"python3\0-c\0pass\0"), "python3 -c pass");
    }

    #[test]
    fn mountinfo_and_cgroup_lines() {
        let mi = "25 30 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw\n\
            35 25 0:30 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(
            mountinfo_cgroup2(mi),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(mountinfo_cgroup2("1 2 0:1 / / rw - ext4 /dev/x rw\n"), None);
        assert_eq!(unescape_mount(r"/a\040b"), "/a b");
        assert_eq!(
            cgroup_line("4:memory:/x\n0::/user.slice/a.scope\n"),
            Some("/user.slice/a.scope")
        );
        assert_eq!(cgroup_line("4:memory:/x\n"), None);
    }

    #[test]
    fn reader_reads_own_files_and_counts_fds() {
        let mut r = Reader::default();
        let pid = std::process::id();
        assert!(parse_stat(r.proc_file(pid, "stat").unwrap()).is_some());
        assert!(r.fd_count(pid) >= 3);
        assert!(r.proc_file(u32::MAX, "stat").is_err());
        assert_eq!(r.fd_count(u32::MAX), 0);
        // Larger than the buffer: read whole all the same.
        let dir = std::env::temp_dir().join(format!("ib-reader-{}", std::process::id()));
        let big: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&dir, &big).unwrap();
        assert_eq!(r.file(&dir).unwrap(), &big[..]);
        std::fs::remove_file(&dir).unwrap();

        assert!(clk_tck() >= 1.0);
        assert!(boot_seconds() > 0.0);
    }
}
