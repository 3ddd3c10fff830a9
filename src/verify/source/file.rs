//! Files written by real collectors (syslog-ng or rsyslog file outputs, any text or NDJSON
//! file): every file matching a glob, rotated ones included, scanned in full line by line for
//! accounting tags with `acct::find_tags`. Files ending in `.gz` are read through gzip. The
//! glob's wildcards (`*`, `?`) are matched in the last path component only
//! (`/var/log/out*.log`, `/var/log/app.log*`); the directory part is taken literally. With a
//! growth log (`verify::growth`, sampled while the run went on), each line's position dates
//! it, and a tag's send time gives its send → stored lag.

use std::collections::btree_map::Entry;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::acct;
use crate::verify::VerifyError;
use crate::verify::expected::Expected;
use crate::verify::growth::{self, FileId, GrowthLog};
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
        if wildcard(name.as_bytes(), n.as_bytes())
            && entry
                .file_type()
                .is_ok_and(|t| t.is_file() || t.is_symlink())
        {
            out.push(dir.join(n));
        }
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

/// Scans every matching file; with `growth`, dates the lines for the ingest lag.
pub fn read(glob: &str, exp: &Expected, growth: Option<&GrowthLog>) -> Result<Held, VerifyError> {
    let mut held = Held::default();
    let mut lag = growth.map(|g| {
        LagRecorder::new(
            "file line on disk (sampled) - tag sent".into(),
            g.every_ms.max(1),
        )
    });
    for f in matches(glob)? {
        let file = File::open(&f)
            .map_err(|e| VerifyError::Unreachable(format!("{}: {e}", f.display())))?;
        let gz = f.extension().is_some_and(|e| e == "gz");
        // Offsets date only the plain file they are offsets of.
        let dating = match (growth, gz) {
            (Some(g), false) => file.metadata().ok().map(|m| (g, growth::file_id(&m))),
            _ => None,
        };
        let reader: Box<dyn Read> = if gz {
            Box::new(flate2::read::MultiGzDecoder::new(file))
        } else {
            Box::new(file)
        };
        let dated = dating.zip(lag.as_mut());
        scan_dated(
            BufReader::with_capacity(1 << 16, reader),
            exp,
            &mut held,
            dated,
        )
        .map_err(|e| VerifyError::Unreachable(format!("{}: {e}", f.display())))?;
    }
    held.ingest_lag = lag.and_then(|l| l.finish());
    Ok(held)
}

/// Scans one stream's lines into `held`.
pub fn scan(r: impl BufRead, exp: &Expected, held: &mut Held) -> std::io::Result<()> {
    scan_dated(r, exp, held, None)
}

/// A file's growth log and identity, and where its lines' lags go.
type Dating<'a> = ((&'a GrowthLog, FileId), &'a mut LagRecorder);

/// Scans one stream's lines into `held`, each tag with a send time on a dated line giving
/// its lag.
fn scan_dated(
    mut r: impl BufRead,
    exp: &Expected,
    held: &mut Held,
    mut dating: Option<Dating<'_>>,
) -> std::io::Result<()> {
    let run = exp.run_id.as_bytes();
    let mut line = Vec::with_capacity(4096);
    let mut end: u64 = 0;
    loop {
        line.clear();
        let n = r
            .by_ref()
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        end += n as u64;
        held.scanned += 1;
        let arrival = dating
            .as_ref()
            .and_then(|((g, id), _)| g.arrival_ms(*id, end));
        acct::find_tags(&line, |t| {
            if t.run != run {
                held.other_runs += 1;
                return;
            }
            record(held, exp, t.agent, t.seq);
            if let (Some(at), Some(sent), Some((_, lag))) = (arrival, t.sent_ms, dating.as_mut()) {
                lag.record_ms(at as f64 - sent as f64);
            }
        });
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
        scan(text.as_bytes(), &exp, &mut held).unwrap();
        assert_eq!(held.scanned, 5);
        assert_eq!(held.other_runs, 1);
        let Some(AgentHold::Seqs(h)) = held.agents.get(&0) else {
            panic!()
        };
        assert_eq!(h.count_in(0, 5), 3);
        assert!(held.agents.contains_key(&4));
    }
}
