//! Files written by real collectors (syslog-ng or rsyslog file outputs, any text or NDJSON
//! file): every file matching a glob, rotated ones included, scanned in full line by line for
//! accounting tags with `acct::find_tags`. Files ending in `.gz` are read through gzip. The
//! glob's wildcards (`*`, `?`) are matched in the last path component only
//! (`/var/log/out*.log`, `/var/log/app.log*`); the directory part is taken literally. With a
//! growth log (`verify::growth`, sampled while the run went on), each line's position dates
//! it, and a tag's send time gives its send → stored lag.
//!
//! A store is regular files only (`fsio::open_regular`): a match that is a device, a FIFO or a
//! file under `/proc` (a link to `/dev/zero`, `file:/proc/*`) makes the store unreadable
//! (exit 6) instead of a read without end; a plain file is read up to the size it had when
//! opened, and every scan stops at its deadline (`--search-timeout` from the read's start).
//! A line is one stored record: a line holding more than one tag of the run (a collector
//! that stored several messages as one) is counted and named (`Held::merged`), and fails
//! the verification.

use std::collections::btree_map::Entry;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::acct;
use crate::verify::VerifyError;
use crate::verify::expected::Expected;
use crate::verify::growth::{self, FileId, GrowthLog};
#[cfg(test)]
use crate::verify::held::SeveralTags;
use crate::verify::held::{AgentHold, Held, SeqHold};
use crate::verify::lag::LagRecorder;

/// Longest line kept whole: a longer one is scanned in pieces of this size (a tag cut at a
/// piece's edge would be missed, and no collector writes such lines).
const MAX_LINE: usize = 1 << 20;

/// `glob` as the directory to list and the file-name pattern to match there; a glob without
/// a file name, or with wildcards in a directory, is bad input.
pub fn parts(glob: &str) -> Result<(PathBuf, &str), VerifyError> {
    let path = Path::new(glob);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| VerifyError::Input(format!("file:{glob}: no file name to match")))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if dir.to_string_lossy().contains(['*', '?']) {
        return Err(VerifyError::Input(format!(
            "file:{glob}: wildcards go in the file name only, not in directories"
        )));
    }
    Ok((dir, name))
}

/// The files matching `glob`, sorted; none is an unreachable store.
pub fn matches(glob: &str) -> Result<Vec<PathBuf>, VerifyError> {
    let (dir, name) = parts(glob)?;
    let rd = std::fs::read_dir(&dir)
        .map_err(|e| VerifyError::Unreachable(format!("file:{glob}: {}: {e}", dir.display())))?;
    let mut out = Vec::new();
    for entry in rd.flatten() {
        let n = entry.file_name();
        let Some(n) = n.to_str() else { continue };
        if !wildcard(name.as_bytes(), n.as_bytes()) {
            continue;
        }
        let path = dir.join(n);
        // Directories (and links to them) are not files of the store; anything else that
        // is not a regular file on a real filesystem cannot be read as one.
        if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        crate::fsio::open_regular(&path)
            .map_err(|e| VerifyError::Unreachable(format!("file:{glob}: {e}")))?;
        out.push(path);
    }
    out.sort();
    if out.is_empty() {
        return Err(VerifyError::Unreachable(format!(
            "file:{glob}: no file matches"
        )));
    }
    Ok(out)
}

/// `*` any run, `?` one byte, anything else itself.
fn wildcard(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while let Some(&c) = s.get(i) {
        let at = pat.get(p).copied();
        if at.is_some_and(|a| a == b'?' || a == c) {
            p += 1;
            i += 1;
        } else if at == Some(b'*') {
            star = Some(p);
            mark = i;
            p += 1;
        } else if let Some(sp) = star {
            p = sp + 1;
            mark += 1;
            i = mark;
        } else {
            return false;
        }
    }
    pat.get(p..).unwrap_or_default().iter().all(|&c| c == b'*')
}

/// The bytes of all matching files and their number (grows while a collector writes).
pub fn progress(glob: &str) -> Result<u64, VerifyError> {
    let files = matches(glob)?;
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    Ok(bytes + files.len() as u64)
}

/// Scans every matching file by `deadline`; with `growth`, dates the lines for the ingest
/// lag.
pub fn read(
    glob: &str,
    exp: &Expected,
    growth: Option<&GrowthLog>,
    deadline: Instant,
) -> Result<Held, VerifyError> {
    let mut held = Held::default();
    let mut lag = growth.map(|g| {
        LagRecorder::new(
            "file line on disk (sampled) - tag sent".into(),
            g.every_ms.max(1),
        )
    });
    for f in matches(glob)? {
        let (file, meta) = crate::fsio::open_regular(&f)
            .map_err(|e| VerifyError::Unreachable(format!("file:{glob}: {e}")))?;
        let gz = f.extension().is_some_and(|e| e == "gz");
        // Offsets date only the plain file they are offsets of.
        let dating = match (growth, gz) {
            (Some(g), false) => Some((g, growth::file_id(&meta))),
            _ => None,
        };
        // A plain file is read up to the size it had when opened; gzip to its end.
        let reader: Box<dyn Read> = if gz {
            Box::new(flate2::read::MultiGzDecoder::new(file))
        } else {
            Box::new(file.take(meta.len()))
        };
        let dated = dating.zip(lag.as_mut());
        let name = f.display().to_string();
        let timed = Timed {
            inner: reader,
            deadline,
        };
        scan_dated(
            BufReader::with_capacity(1 << 16, timed),
            exp,
            &mut held,
            (&name, dated),
        )
        .map_err(|e| VerifyError::Unreachable(format!("{}: {e}", f.display())))?;
    }
    held.ingest_lag = lag.and_then(|l| l.finish());
    Ok(held)
}

/// A read that fails once its deadline has passed: a scan of a store is bounded in time.
struct Timed<R> {
    inner: R,
    deadline: Instant,
}

impl<R: Read> Read for Timed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if Instant::now() > self.deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "still reading at the deadline (--search-timeout): the store was not read whole",
            ));
        }
        self.inner.read(buf)
    }
}

/// Scans one stream's lines into `held` (`name` names it in `held.merged`).
pub fn scan(r: impl BufRead, name: &str, exp: &Expected, held: &mut Held) -> std::io::Result<()> {
    scan_dated(r, exp, held, (name, None))
}

/// A file's growth log and identity, and where its lines' lags go.
type Dating<'a> = ((&'a GrowthLog, FileId), &'a mut LagRecorder);

/// Scans one stream's lines into `held`, each tag with a send time on a dated line giving
/// its lag.
fn scan_dated(
    mut r: impl BufRead,
    exp: &Expected,
    held: &mut Held,
    (name, mut dating): (&str, Option<Dating<'_>>),
) -> std::io::Result<()> {
    let run = exp.run_id.as_bytes();
    let mut line = Vec::with_capacity(4096);
    let mut end: u64 = 0;
    // The line a piece is of (a line over MAX_LINE is read in pieces), and its tags so far.
    let (mut number, mut tags, mut whole) = (0u64, 0u64, true);
    loop {
        line.clear();
        let n = r
            .by_ref()
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            if !whole && tags > 1 {
                held.merged.add(tags, || format!("{name} line {number}"));
            }
            return Ok(());
        }
        end += n as u64;
        held.scanned += 1;
        if whole {
            number += 1;
            tags = 0;
        }
        whole = line.ends_with(b"\n") || n < MAX_LINE;
        let arrival = dating
            .as_ref()
            .and_then(|((g, id), _)| g.arrival_ms(*id, end));
        acct::find_tags(&line, |t| {
            if t.run != run {
                held.other_runs += 1;
                return;
            }
            tags += 1;
            record(held, exp, t.agent, t.seq);
            if let (Some(at), Some(sent), Some((_, lag))) = (arrival, t.sent_ms, dating.as_mut()) {
                lag.record_ms(at as f64 - sent as f64);
            }
        });
        if whole && tags > 1 {
            held.merged.add(tags, || format!("{name} line {number}"));
        }
    }
}

/// Records one tag of the run.
pub fn record(held: &mut Held, exp: &Expected, agent: u32, seq: u64) {
    let hold = match held.agents.entry(agent) {
        Entry::Occupied(o) => o.into_mut(),
        Entry::Vacant(v) => {
            let size = exp.agent(agent).map_or(0, |a| a.events_sent);
            v.insert(AgentHold::Seqs(SeqHold::new(size)))
        }
    };
    if let AgentHold::Seqs(h) = hold {
        h.add(seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard(b"out*.log", b"out.log"));
        assert!(wildcard(b"out*.log", b"out-2.log"));
        assert!(!wildcard(b"out*.log", b"out.log.1"));
        assert!(wildcard(b"app.log*", b"app.log.1.gz"));
        assert!(wildcard(b"a?c", b"abc") && !wildcard(b"a?c", b"ac"));
        assert!(wildcard(b"*", b"x") && wildcard(b"x", b"x") && !wildcard(b"x", b"y"));
    }

    #[test]
    fn scans_lines_of_every_form() {
        let exp = Expected::from_report(
            r#"{"accounting":{"run_id":"r-a","agents":[{"agent":0,"events_sent":5,"failed":[]}]}}"#,
        )
        .unwrap();
        let text = "x ingestbench_run=r-a ingestbench_agent=0 ingestbench_seq=0\n\
            {\"ingestbench\":{\"run\":\"r-a\",\"agent\":0,\"seq\":1}}\n\
            <13>1 - h a - - [ingestbench@32473 run=\"r-a\" agent=\"0\" seq=\"2\"] m\n\
            ingestbench_run=r-b ingestbench_agent=0 ingestbench_seq=3\n\
            ingestbench_run=r-a ingestbench_agent=4 ingestbench_seq=3";
        let mut held = Held::default();
        scan(text.as_bytes(), "t", &exp, &mut held).unwrap();
        assert_eq!(held.scanned, 5);
        assert_eq!(held.other_runs, 1);
        let Some(AgentHold::Seqs(h)) = held.agents.get(&0) else {
            panic!()
        };
        assert_eq!(h.count_in(0, 5), 3);
        assert!(held.agents.contains_key(&4));
        assert_eq!(held.merged, SeveralTags::default(), "one tag a line");
    }

    #[test]
    fn a_line_holding_several_tags_is_a_merged_record_named_by_its_line() {
        let exp = Expected::from_report(
            r#"{"accounting":{"run_id":"r-a","agents":[{"agent":0,"events_sent":6,"failed":[]}]}}"#,
        )
        .unwrap();
        let tag =
            |s: u64| format!("{{\"ingestbench\":{{\"run\":\"r-a\",\"agent\":0,\"seq\":{s}}}}}");
        let text = format!(
            "{}\n{} {} {}\nother ingestbench_run=r-b ingestbench_agent=0 ingestbench_seq=1 {}\n{} {}",
            tag(0),
            tag(1),
            tag(2),
            tag(3),
            tag(4),
            tag(5),
            tag(5)
        );
        let mut held = Held::default();
        scan(text.as_bytes(), "out.log", &exp, &mut held).unwrap();
        assert_eq!(
            held.merged,
            SeveralTags {
                records: 2,
                tags: 5,
                first: Some("out.log line 2".into())
            }
        );
        // The tags are still counted: what the store holds, merged or not.
        let Some(AgentHold::Seqs(h)) = held.agents.get(&0) else {
            panic!()
        };
        assert_eq!(h.count_in(0, 6), 6);
        // One line of several MiB read in pieces is still one line.
        let long = format!("{} {}{}\n", tag(0), "x".repeat(3 * MAX_LINE), tag(1));
        let mut held = Held::default();
        scan(long.as_bytes(), "big.log", &exp, &mut held).unwrap();
        assert_eq!(held.merged.records, 1);
        assert_eq!(held.merged.first.as_deref(), Some("big.log line 1"));
    }

    #[test]
    fn only_regular_files_are_a_store_and_a_scan_has_a_deadline() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.log"), "x\n").unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.path().join("b.log")).unwrap();
        let glob = format!("{}/*.log", d.path().display());
        let e = matches(&glob).unwrap_err();
        assert!(
            matches!(&e, VerifyError::Unreachable(m) if m.contains("b.log: is a character device")),
            "{e:?}"
        );
        let e = matches("/proc/self/*").unwrap_err();
        assert!(
            matches!(&e, VerifyError::Unreachable(m) if m.contains("is on procfs")),
            "{e:?}"
        );
        std::fs::remove_file(d.path().join("b.log")).unwrap();
        let exp = Expected::from_report(
            r#"{"accounting":{"run_id":"r-a","agents":[{"agent":0,"events_sent":1,"failed":[]}]}}"#,
        )
        .unwrap();
        let past = Instant::now() - std::time::Duration::from_secs(1);
        let e = read(&glob, &exp, None, past).unwrap_err();
        assert!(
            matches!(&e, VerifyError::Unreachable(m) if m.contains("deadline")),
            "{e:?}"
        );
        assert!(
            read(
                &glob,
                &exp,
                None,
                Instant::now() + std::time::Duration::from_secs(9)
            )
            .is_ok()
        );
    }
}
