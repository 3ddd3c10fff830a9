//! When a file store's bytes arrived: a sampling thread ("ingestbench-growth") that, while a
//! run goes on and its stores settle, notes every `every` the size of each file its `file:`
//! globs match, by file identity (device and inode, so a rotation by rename keeps its
//! history). A line's position in the file then says when it was on disk: the first sample
//! whose size reaches the line's end. With the send time an accounting tag carries, that is
//! the line's send → stored lag, to the sampling interval. Bytes a file held when sampling
//! began are not dated; a file that shrinks (truncated, rewritten in place) stops being dated
//! from then on, since its offsets no longer name the same bytes.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::source::file;

/// Most samples kept per file (at 100 ms, more than a day of growth).
const MAX_SAMPLES: usize = 1 << 20;

/// A file's identity: device and inode.
pub type FileId = (u64, u64);

/// One file's growth.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileGrowth {
    /// Its size when first seen, if sampling was already going on it was created after.
    pub undated_below: u64,
    /// `(ms since the epoch, size)`, each a size larger than the one before.
    pub samples: Vec<(u64, u64)>,
    /// It shrank: nothing in it is dated.
    pub shrank: bool,
}

/// What the sampler saw of every file.
#[derive(Clone, Debug, Default)]
pub struct GrowthLog {
    pub files: HashMap<FileId, FileGrowth>,
    /// The sampling interval: the dating's resolution.
    pub every_ms: u64,
}

impl GrowthLog {
    /// When the bytes up to `end` of file `id` were first seen on disk, ms since the epoch;
    /// `None` when not dated (held before sampling began, beyond the last sample, shrunk).
    pub fn arrival_ms(&self, id: FileId, end: u64) -> Option<u64> {
        let g = self.files.get(&id)?;
        if g.shrank || end <= g.undated_below {
            return None;
        }
        let i = g.samples.partition_point(|&(_, size)| size < end);
        g.samples.get(i).map(|&(t, _)| t)
    }

    /// Notes one sample of file `id` of `size` at `now_ms`; `first` when it is the sampler's
    /// first look (what a file holds then is not dated).
    pub fn note(&mut self, id: FileId, size: u64, now_ms: u64, first: bool) {
        let g = self.files.entry(id).or_insert_with(|| FileGrowth {
            undated_below: if first { size } else { 0 },
            ..FileGrowth::default()
        });
        let last = g.samples.last().map_or(g.undated_below, |&(_, s)| s);
        if size < last {
            g.shrank = true;
        } else if size > last && g.samples.len() < MAX_SAMPLES {
            g.samples.push((now_ms, size));
        }
    }
}

/// The identity of an open or named file.
pub fn file_id(m: &std::fs::Metadata) -> FileId {
    (m.dev(), m.ino())
}

/// The sampling thread and the log it keeps.
pub struct Growth {
    log: Arc<Mutex<GrowthLog>>,
    stop: Option<Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Growth {
    /// Starts sampling the files `globs` match every `every` (taking the first look now).
    pub fn start(globs: Vec<String>, every: Duration) -> Growth {
        let log = Arc::new(Mutex::new(GrowthLog {
            every_ms: every.as_millis() as u64,
            ..GrowthLog::default()
        }));
        sample(&globs, &log, true);
        let (tx, rx) = crossbeam_channel::bounded(1);
        let shared = log.clone();
        let thread = std::thread::Builder::new()
            .name("ingestbench-growth".into())
            .spawn(move || run(&globs, &shared, every, &rx))
            .ok();
        Growth {
            log,
            stop: Some(tx),
            thread,
        }
    }

    /// What has been seen so far (a copy; sampling goes on).
    pub fn log(&self) -> GrowthLog {
        match self.log.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

/// A running `Growth`, as verification options carry it.
#[derive(Clone)]
pub struct GrowthHandle(pub Arc<Growth>);

impl std::fmt::Debug for GrowthHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GrowthHandle")
    }
}

impl Drop for Growth {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(globs: &[String], log: &Mutex<GrowthLog>, every: Duration, stop: &Receiver<()>) {
    loop {
        match stop.recv_timeout(every) {
            Err(RecvTimeoutError::Timeout) => sample(globs, log, false),
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// One look at every file the globs match (a glob matching nothing yet is no error here).
fn sample(globs: &[String], log: &Mutex<GrowthLog>, first: bool) {
    let now_ms = (crate::generate::time::now() / 1_000_000).max(0) as u64;
    let mut seen = Vec::new();
    for g in globs {
        for path in file::matches(g).unwrap_or_default() {
            if let Ok(m) = std::fs::metadata(&path) {
                seen.push((file_id(&m), m.len()));
            }
        }
    }
    let Ok(mut l) = log.lock() else { return };
    for (id, size) in seen {
        l.note(id, size, now_ms, first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_dated_by_the_first_sample_that_holds_them() {
        let mut l = GrowthLog::default();
        let f = (1, 2);
        l.note(f, 100, 1_000, true);
        l.note(f, 100, 1_100, false);
        l.note(f, 250, 1_200, false);
        l.note(f, 400, 1_300, false);
        // Held before sampling began: not dated.
        assert_eq!(l.arrival_ms(f, 80), None);
        assert_eq!(l.arrival_ms(f, 100), None);
        assert_eq!(l.arrival_ms(f, 101), Some(1_200));
        assert_eq!(l.arrival_ms(f, 250), Some(1_200));
        assert_eq!(l.arrival_ms(f, 251), Some(1_300));
        assert_eq!(l.arrival_ms(f, 401), None);
        // A file born while sampling is dated from its first byte.
        let g = (1, 3);
        l.note(g, 50, 1_250, false);
        assert_eq!(l.arrival_ms(g, 10), Some(1_250));
        // A file that shrinks is not dated any more.
        l.note(f, 10, 1_400, false);
        assert_eq!(l.arrival_ms(f, 251), None);
    }

    #[test]
    fn the_sampler_follows_a_growing_file() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        std::fs::write(&path, b"old line\n").unwrap();
        let g = Growth::start(
            vec![format!("{}/out*.log", dir.path().display())],
            Duration::from_millis(10),
        );
        std::thread::sleep(Duration::from_millis(30));
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"new line\n").unwrap();
        std::thread::sleep(Duration::from_millis(60));
        let log = g.log();
        let id = file_id(&std::fs::metadata(&path).unwrap());
        assert_eq!(log.arrival_ms(id, 9), None, "{log:?}");
        assert!(log.arrival_ms(id, 18).is_some(), "{log:?}");
    }
}
