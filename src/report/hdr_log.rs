//! `observability.hdr_log`: the run's latency as an HdrHistogram interval log (format 1.3, as
//! HdrHistogram's Java `HistogramLogWriter` and its ports write it), so that
//! `HistogramLogProcessor`, HdrHistogram's Python `HistogramLogReader` or the Rust
//! `IntervalLogIterator` can rebuild the histogram of any stretch of the run by adding its
//! intervals — exactly, where stored percentiles cannot be combined. The file is:
//!
//! ```text
//! #[Histogram log format version 1.3]
//! #[ingestbench: latency in microseconds (Interval_Max in milliseconds); …]
//! #[StartTime: 1700000000.250 (seconds since epoch), 2023-11-14T22:13:20.250Z]
//! #[BaseTime: 1700000000.250 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=intended,0.000,1.000,12.415,HISTFAAAA…
//! Tag=service,0.000,1.000,3.071,HISTFAAAA…
//! ```
//!
//! Interval timestamps are seconds since BaseTime (the run's start), three decimals; each
//! payload is V2 + DEFLATE + base64 (`report::hdr`). The log is written to a temporary file
//! beside its path (`.NAME.*.tmp`, flushed after every interval, so it can be followed while
//! the run goes on) and renamed over the path when the run ends (`fsio::AtomicFile`): a log
//! that cannot be written whole leaves the file that was there untouched.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;

use crate::fsio::{AtomicFile, FileError, WriteOptions};
use crate::report::hdr::Encoder;

/// The version of the log format written: 1.3 is the first with `Tag=` on interval lines.
pub const LOG_FORMAT_VERSION: &str = "1.3";

/// Values are recorded in µs; the log's `Interval_Max` column is in ms.
const MAX_VALUE_UNIT_RATIO: f64 = 1000.0;

/// An HdrHistogram interval log being written.
pub struct HdrLog {
    path: PathBuf,
    out: BufWriter<AtomicFile>,
    encoder: Encoder,
    line: String,
}

impl HdrLog {
    /// Starts the log for `path` (its temporary file made beside it, its directory created)
    /// and writes the header: format version, units, StartTime and BaseTime (both
    /// `start_unix_s`, the run's start in seconds since the Unix epoch) and the legend.
    pub fn create(path: impl AsRef<Path>, start_unix_s: f64) -> Result<HdrLog, FileError> {
        let path = path.as_ref();
        let werr = |err| FileError::Io {
            path: path.to_path_buf(),
            op: "write",
            err,
        };
        if !start_unix_s.is_finite() || start_unix_s < 0.0 {
            return Err(werr(invalid(format!(
                "start time {start_unix_s} is not seconds since the epoch"
            ))));
        }
        let mut log = HdrLog {
            path: path.to_path_buf(),
            out: BufWriter::new(AtomicFile::create(path, WriteOptions::default())?),
            encoder: Encoder::default(),
            line: String::new(),
        };
        log.out
            .write_all(header(start_unix_s).as_bytes())
            .and_then(|()| log.out.flush())
            .map_err(werr)?;
        Ok(log)
    }

    /// Writes one interval: `start_s` seconds after the run's start, `len_s` long, tagged
    /// `tag` (`intended` or `service` for the two clocks; a tag has no commas, spaces or
    /// control characters), with `h` the histogram of what was recorded in it.
    pub fn interval(
        &mut self,
        start_s: f64,
        len_s: f64,
        tag: &str,
        h: &Histogram<u64>,
    ) -> io::Result<()> {
        check_tag(tag)?;
        for (what, v) in [("start", start_s), ("length", len_s)] {
            if !v.is_finite() || v < 0.0 {
                return Err(invalid(format!("interval {what} {v} s is not a time")));
            }
        }
        self.line.clear();
        self.line.push_str(&interval_prefix(start_s, len_s, tag, h));
        self.encoder
            .encode_into(h, &mut self.line)
            .map_err(io::Error::other)?;
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())?;
        self.out.flush()
    }

    /// Flushes what is left and renames the log into place; a write error surfaces here.
    pub fn finish(self) -> Result<(), FileError> {
        let path = self.path;
        let file = self.out.into_inner().map_err(|e| FileError::Io {
            path: path.clone(),
            op: "write",
            err: e.into_error(),
        })?;
        file.commit()
    }
}

/// An `HdrLog` the engine's coordinator can be handed (it is `Send + Clone`) to feed once a
/// second, and the run finishes at the end: `second(t, intended, service)` writes second `t`
/// as two intervals, tagged `intended` and `service`; the first write error is kept (later
/// seconds are then skipped) and returned by `finish` (the run then fails: exit 6, the log
/// not written).
#[derive(Clone)]
pub struct SharedHdrLog(Arc<Mutex<Shared>>);

struct Shared {
    log: Option<HdrLog>,
    error: Option<FileError>,
}

impl SharedHdrLog {
    /// `HdrLog::create`, shared.
    pub fn create(path: impl AsRef<Path>, start_unix_s: f64) -> Result<SharedHdrLog, FileError> {
        let log = HdrLog::create(path, start_unix_s)?;
        Ok(SharedHdrLog(Arc::new(Mutex::new(Shared {
            log: Some(log),
            error: None,
        }))))
    }

    /// Writes second `t` of the run (from `t` s, 1 s long): both clocks' histograms.
    pub fn second(&self, t: u32, intended: &Histogram<u64>, service: &Histogram<u64>) {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Shared { log, error } = &mut *s;
        let (Some(log), None) = (log.as_mut(), error.as_ref()) else {
            return;
        };
        let start = f64::from(t);
        let written = log
            .interval(start, 1.0, "intended", intended)
            .and_then(|_| log.interval(start, 1.0, "service", service));
        if let Err(err) = written {
            *error = Some(FileError::Io {
                path: log.path.clone(),
                op: "write",
                err,
            });
        }
    }

    /// Renames the log into place; the first error while writing it, if any (the log is
    /// then dropped unrenamed: what was at its path stays).
    pub fn finish(self) -> Result<(), FileError> {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let log = s.log.take();
        match s.error.take() {
            Some(e) => Err(e),
            None => log.map_or(Ok(()), HdrLog::finish),
        }
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn check_tag(tag: &str) -> io::Result<()> {
    let bad = |c: char| c == ',' || c.is_whitespace() || c.is_control();
    if tag.is_empty() || tag.chars().any(bad) {
        return Err(invalid(format!(
            "HDR log tag {tag:?}: a tag is one word without commas or spaces"
        )));
    }
    Ok(())
}

fn header(start_unix_s: f64) -> String {
    let date = crate::report::rfc3339((start_unix_s * 1e3).round() as i64 * 1_000_000);
    format!(
        "#[Histogram log format version {LOG_FORMAT_VERSION}]\n\
         #[ingestbench: latency in microseconds (Interval_Max in milliseconds); Tag=intended from the scheduled send time, Tag=service from the actual write]\n\
         #[StartTime: {start_unix_s:.3} (seconds since epoch), {date}]\n\
         #[BaseTime: {start_unix_s:.3} (seconds since epoch)]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
    )
}

/// `Tag=…,start,length,max,` — everything before the payload.
fn interval_prefix(start_s: f64, len_s: f64, tag: &str, h: &Histogram<u64>) -> String {
    let max = if h.is_empty() {
        0.0
    } else {
        h.max() as f64 / MAX_VALUE_UNIT_RATIO
    };
    format!("Tag={tag},{start_s:.3},{len_s:.3},{max:.3},")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn header_and_lines_have_the_java_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/run.hlog");
        let mut log = HdrLog::create(&path, 1_700_000_000.25).unwrap();
        log.interval(0.0, 1.0, "intended", &hist(&[1000, 2000, 12_415]))
            .unwrap();
        log.interval(0.0, 1.0, "service", &new_histogram()).unwrap();
        log.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "#[Histogram log format version 1.3]");
        assert_eq!(
            lines[2],
            "#[StartTime: 1700000000.250 (seconds since epoch), 2023-11-14T22:13:20.250Z]"
        );
        assert_eq!(
            lines[3],
            "#[BaseTime: 1700000000.250 (seconds since epoch)]"
        );
        assert_eq!(
            lines[4],
            r#""StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram""#
        );
        assert!(
            lines[5].starts_with("Tag=intended,0.000,1.000,12.415,HISTF"),
            "{}",
            lines[5]
        );
        assert!(lines[6].starts_with("Tag=service,0.000,1.000,0.000,HISTF"));
        assert_eq!(lines.len(), 7);
    }

    /// The Rust port's own reader (nom parser) reads the file back, timestamps and payloads.
    #[test]
    fn the_rust_interval_log_reader_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.hlog");
        let mut log = HdrLog::create(&path, 1_700_000_000.0).unwrap();
        let hs = [hist(&[5, 6, 7]), hist(&[100, 200]), hist(&[59_000_000])];
        for (i, h) in hs.iter().enumerate() {
            log.interval(i as f64, 1.0, "intended", h).unwrap();
        }
        log.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut intervals = Vec::new();
        for e in IntervalLogIterator::new(&bytes) {
            match e.unwrap() {
                LogEntry::StartTime(d) | LogEntry::BaseTime(d) => {
                    assert_eq!(d.as_secs(), 1_700_000_000)
                }
                LogEntry::Interval(i) => intervals.push((
                    i.tag().map(|t| t.as_str().to_string()),
                    i.start_timestamp().as_secs_f64(),
                    crate::report::hdr::decode(i.encoded_histogram()).unwrap(),
                )),
            }
        }
        assert_eq!(intervals.len(), 3);
        for (i, (tag, start, h)) in intervals.iter().enumerate() {
            assert_eq!(tag.as_deref(), Some("intended"));
            assert_eq!(*start, i as f64);
            assert_eq!(h.len(), hs[i].len());
            assert_eq!(h.max(), hs[i].max());
        }
    }

    #[test]
    fn shared_log_writes_each_second_as_two_tagged_intervals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.hlog");
        let log = SharedHdrLog::create(&path, 1_700_000_000.0).unwrap();
        let feed = log.clone();
        let coordinator = std::thread::spawn(move || {
            for t in 0..3 {
                feed.second(t, &hist(&[1000, 2000]), &hist(&[500]));
            }
        });
        coordinator.join().unwrap();
        log.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("Tag=")).collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert!(lines[4].starts_with("Tag=intended,2.000,1.000,2.000,HISTF"));
        assert!(lines[5].starts_with("Tag=service,2.000,1.000,0.500,HISTF"));
    }

    #[test]
    fn the_old_log_stays_until_the_new_one_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.hlog");
        std::fs::write(&path, "old log\n").unwrap();
        let log = SharedHdrLog::create(&path, 1_700_000_000.0).unwrap();
        log.second(0, &hist(&[1000]), &hist(&[500]));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old log\n");
        drop(log);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old log\n");
        let log = SharedHdrLog::create(&path, 1_700_000_000.0).unwrap();
        log.second(0, &hist(&[1000]), &hist(&[500]));
        log.finish().unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("Tag=service,0.000")
        );
    }

    #[test]
    fn bad_tags_and_times_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = HdrLog::create(dir.path().join("x.hlog"), 1.0).unwrap();
        let h = new_histogram();
        for tag in ["", "a,b", "a b", "a\nb"] {
            assert!(log.interval(0.0, 1.0, tag, &h).is_err(), "{tag:?}");
        }
        assert!(log.interval(-1.0, 1.0, "intended", &h).is_err());
        assert!(log.interval(0.0, f64::NAN, "intended", &h).is_err());
        assert!(HdrLog::create(dir.path().join("y.hlog"), -5.0).is_err());
        assert!(HdrLog::create(dir.path(), 1.0).is_err(), "a directory");
    }
}
