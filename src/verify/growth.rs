//! When a file store's bytes arrived: a sampling thread ("ingestbench-growth") that, while a
//! run goes on and its stores settle, notes every `every` the size of each file its `file:`
//! globs match, by file identity (device and inode, so a rotation by rename keeps its
//! history). A line's position in the file then says when it was on disk: the first sample
//! whose size reaches the line's end. With the send time an accounting tag carries, that is
//! the line's send → stored lag, to the sampling interval. Bytes a file held when sampling
//! began are not dated; a file that shrinks (truncated, rewritten in place) stops being dated
//! from then on, since its offsets no longer name the same bytes. Samples are kept as deltas
//! in LEB128 (about 4 bytes each, not 16) with a checkpoint every `BLOCK`, so a soak's hours
//! of sampling stay small.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::source::file;

/// Most samples kept per file (at 100 ms, more than a day of growth).
const MAX_SAMPLES: usize = 1 << 20;
/// Samples between checkpoints: a lookup decodes at most this many.
const BLOCK: usize = 128;

/// A file's identity: device and inode.
pub type FileId = (u64, u64);

/// One file's growth.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileGrowth {
    /// Its size when first seen, if sampling was already going on it was created after.
    pub undated_below: u64,
    /// `(ms since the epoch, size)`, each a size larger than the one before.
    pub samples: Samples,
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
        g.samples.first_reaching(end)
    }

    /// Notes one sample of file `id` of `size` at `now_ms`; `first` when it is the sampler's
    /// first look (what a file holds then is not dated).
    pub fn note(&mut self, id: FileId, size: u64, now_ms: u64, first: bool) {
        let g = self.files.entry(id).or_insert_with(|| FileGrowth {
            undated_below: if first { size } else { 0 },
            ..FileGrowth::default()
        });
        let last = g.samples.last().map_or(g.undated_below, |(_, s)| s);
        if size < last {
            g.shrank = true;
        } else if size > last && g.samples.len() < MAX_SAMPLES {
            g.samples.push(now_ms, size);
        }
    }
}

/// `(ms, size)` samples, each time and size at least the one before: a checkpoint (the
/// sample itself, and where its block's deltas begin) every `BLOCK` samples, the others as
/// LEB128 deltas from the sample before.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Samples {
    checkpoints: Vec<(u64, u64, usize)>,
    deltas: Vec<u8>,
    last: Option<(u64, u64)>,
    len: usize,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn last(&self) -> Option<(u64, u64)> {
        self.last
    }

    /// Adds a sample; one that goes back in time or size (it cannot: sizes only grow here,
    /// and the clock is read in order) is stored as no change.
    pub fn push(&mut self, t: u64, size: u64) {
        match self.last {
            Some((lt, ls)) if !self.len.is_multiple_of(BLOCK) => {
                put_varint(&mut self.deltas, t.saturating_sub(lt));
                put_varint(&mut self.deltas, size.saturating_sub(ls));
                self.last = Some((t.max(lt), size.max(ls)));
            }
            _ => {
                self.checkpoints.push((t, size, self.deltas.len()));
                self.last = Some((t, size));
            }
        }
        self.len += 1;
    }

    /// The time of the first sample whose size reaches `end`.
    pub fn first_reaching(&self, end: u64) -> Option<u64> {
        let i = self.checkpoints.partition_point(|&(_, size, _)| size < end);
        let Some(&(mut t, mut size, at)) = i.checked_sub(1).and_then(|k| self.checkpoints.get(k))
        else {
            return self.checkpoints.first().map(|&(t, _, _)| t);
        };
        let stop = self.checkpoints.get(i).map_or(self.deltas.len(), |c| c.2);
        let mut rest = self.deltas.get(at..stop).unwrap_or_default();
        while let (Some(dt), Some(ds)) = (take_varint(&mut rest), take_varint(&mut rest)) {
            t += dt;
            size += ds;
            if size >= end {
                return Some(t);
            }
        }
        self.checkpoints.get(i).map(|&(t, _, _)| t)
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn take_varint(rest: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, tail) = rest.split_first()?;
        *rest = tail;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
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
    fn packed_samples_date_as_a_plain_list_would_in_a_few_bytes_each() {
        let mut plain = Vec::new();
        let mut packed = Samples::default();
        let (mut t, mut size) = (1_764_000_000_000u64, 0u64);
        for k in 0..(3 * BLOCK + 17) as u64 {
            t += 100 + k % 3;
            size += 40_000 + (k * 7919) % 5_000;
            plain.push((t, size));
            packed.push(t, size);
        }
        assert_eq!(packed.len(), plain.len());
        assert_eq!(packed.last(), plain.last().copied());
        for end in (0..size + 2).step_by(997).chain([1, size, size + 1]) {
            let want = plain
                .get(plain.partition_point(|&(_, s)| s < end))
                .map(|&(t, _)| t);
            assert_eq!(packed.first_reaching(end), want, "end {end}");
        }
        for &(t, s) in &plain {
            assert_eq!(packed.first_reaching(s), Some(t));
        }
        let bytes = packed.deltas.len() + packed.checkpoints.len() * 24;
        assert!(bytes < plain.len() * 6, "{bytes} bytes for {}", plain.len());
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
