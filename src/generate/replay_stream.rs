//! A recording too large for memory, streamed: at setup only its head is read (the first
//! lines, checked and used to find the timestamp format; the last line's timestamp, for the
//! span of a loop; the count of lines of one pass), then during the run one reader thread
//! (`ingestbench-replay`) reads the files line by line, finds each line's timestamp, and deals
//! line `j` to worker `j mod workers` in segments sent over a bounded channel; a worker hands
//! each segment back once played, and the reader refills it. Memory stays at a few segments
//! per worker whatever the files' size, and a worker's play copies bytes only: it never
//! allocates or blocks (a line not dealt yet makes its batch shorter, counted as the
//! generator's lag).

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender, TryRecvError};

use super::replay::{Format, Line, Locate, Recording, index_lines};
use super::time::UnixNs;

/// A line's timestamp: offset, length, instant.
pub type Stamp = Option<(u32, u32, UnixNs)>;

/// Bytes of lines in one segment (a segment may hold one longer line).
const SEGMENT_BYTES: usize = 256 * 1024;
/// Segments a worker may have waiting.
const AHEAD: usize = 4;
/// The head read at setup: at most this many bytes of the first file, and of the last.
const HEAD_BYTES: u64 = 256 * 1024;

/// Lines dealt to one worker: their bytes, their places and timestamps, and which pass of
/// the recording they are of.
pub struct Segment {
    data: Vec<u8>,
    lines: Vec<Line>,
    pass: u64,
}

impl Segment {
    fn new() -> Segment {
        Segment {
            data: Vec::with_capacity(SEGMENT_BYTES + 4096),
            lines: Vec::with_capacity(SEGMENT_BYTES / 64),
            pass: 0,
        }
    }
}

/// One worker's end of the stream.
pub struct Feed {
    rx: Receiver<Segment>,
    back: Sender<Segment>,
    cur: Segment,
    /// The next line of `cur` to play.
    pos: usize,
    /// The index of the event last played, and its line (`pos - 1`): asked again, the same.
    last: Option<u64>,
}

impl Feed {
    /// Whether event `index` has a line: the one it had, or a next one dealt already.
    pub fn ready(&mut self, index: u64) -> bool {
        if self.last == Some(index) || self.pos < self.cur.lines.len() {
            return true;
        }
        self.advance()
    }

    /// Takes the next segment when there is one (the played one goes back to the reader).
    fn advance(&mut self) -> bool {
        match self.rx.try_recv() {
            Ok(next) => {
                let done = std::mem::replace(&mut self.cur, next);
                let _ = self.back.try_send(done);
                self.pos = 0;
                !self.cur.lines.is_empty()
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => false,
        }
    }

    /// The line of event `index`: its bytes, timestamp and pass.
    pub fn line(&mut self, index: u64) -> Option<(&[u8], Stamp, u64)> {
        if self.last != Some(index) {
            if self.pos >= self.cur.lines.len() && !self.advance() {
                return None;
            }
            self.pos += 1;
            self.last = Some(index);
        }
        let l = *self.cur.lines.get(self.pos.checked_sub(1)?)?;
        Some((self.cur.data.get(l.start..l.end)?, l.ts, self.cur.pass))
    }
}

/// Every worker's feed, until each takes its own.
pub struct Feeds {
    slots: Mutex<Vec<Option<Feed>>>,
}

impl Feeds {
    pub fn take(&self, worker: usize) -> Option<Box<Feed>> {
        let mut s = self.slots.lock().ok()?;
        s.get_mut(worker)?.take().map(Box::new)
    }
}

/// Reads the head of `files`: the recording to find timestamps with, the line count, and the
/// last timestamp. The files are read through once here to count their lines.
pub fn head(files: Vec<PathBuf>, format: Format, locate: &Locate) -> Result<Recording, String> {
    let Some(first) = files.first() else {
        return Err("no file to replay".to_string());
    };
    let mut data = Vec::new();
    std::fs::File::open(first)
        .and_then(|f| f.take(HEAD_BYTES).read_to_end(&mut data))
        .map_err(|e| format!("{}: {e}", first.display()))?;
    // Only whole lines of the head.
    if let Some(end) = memchr::memrchr(b'\n', &data) {
        data.truncate(end + 1);
    }
    let mut lines = Vec::new();
    index_lines(&data, 0, first, format, &mut lines)?;
    let mut rec = Recording::of_lines(files.clone(), format, data, lines, locate)?;
    let mut count = 0u64;
    for p in &files {
        count += count_lines(p)?;
    }
    let last = match rec.finder() {
        Some(finder) => last_stamp(files.last().unwrap_or(first), format, finder)?,
        None => None,
    };
    rec.set_span(last, count);
    Ok(rec)
}

/// Lines that are not blank: newlines found by `memchr`, and each line looked at only up to
/// its first byte that is not white space (a file of gigabytes is counted at memory speed).
fn count_lines(p: &PathBuf) -> Result<u64, String> {
    let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut n = 0u64;
    // Whether the line that runs on from the previous buffer has shown anything yet.
    let mut blank = true;
    loop {
        let buf = r.fill_buf().map_err(|e| format!("{}: {e}", p.display()))?;
        if buf.is_empty() {
            break;
        }
        let mut from = 0;
        for nl in memchr::memchr_iter(b'\n', buf) {
            blank &= buf
                .get(from..nl)
                .unwrap_or_default()
                .iter()
                .all(u8::is_ascii_whitespace);
            n += u64::from(!blank);
            blank = true;
            from = nl + 1;
        }
        blank &= buf
            .get(from..)
            .unwrap_or_default()
            .iter()
            .all(u8::is_ascii_whitespace);
        let len = buf.len();
        r.consume(len);
    }
    Ok(n + u64::from(!blank))
}

/// The last timestamp in the tail of `p`.
fn last_stamp(
    p: &PathBuf,
    format: Format,
    finder: &super::replay::Finder,
) -> Result<Option<UnixNs>, String> {
    let mut f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(HEAD_BYTES)));
    let mut data = Vec::new();
    f.read_to_end(&mut data)
        .map_err(|e| format!("{}: {e}", p.display()))?;
    // From the first whole line of the tail.
    if len > HEAD_BYTES
        && let Some(i) = memchr::memchr(b'\n', &data)
    {
        data.drain(..=i);
    }
    let mut lines = Vec::new();
    // The tail is only looked at for its timestamps: lines are not checked again.
    let _ = index_lines(&data, 0, p, Format::Lines, &mut lines);
    let _ = format;
    finder.stamp(&data, &mut lines);
    Ok(lines.iter().rev().find_map(|l| l.ts.map(|t| t.2)))
}

/// Starts the reader for `workers` feeds; it stops at the end of the recording (or of the run:
/// when the feeds are gone).
pub fn start(rec: Arc<Recording>, workers: usize, looped: bool) -> Arc<Feeds> {
    let workers = workers.max(1);
    let mut senders = Vec::with_capacity(workers);
    let mut returns = Vec::with_capacity(workers);
    let mut slots = Vec::with_capacity(workers);
    for _ in 0..workers {
        let (tx, rx) = crossbeam_channel::bounded(AHEAD);
        let (btx, brx) = crossbeam_channel::bounded(AHEAD + 2);
        for _ in 0..AHEAD + 1 {
            let _ = btx.send(Segment::new());
        }
        senders.push(tx);
        returns.push(brx);
        slots.push(Some(Feed {
            rx,
            back: btx,
            cur: Segment::new(),
            pos: 0,
            last: None,
        }));
    }
    let _ = std::thread::Builder::new()
        .name("ingestbench-replay".into())
        .spawn(move || read(&rec, senders, returns, looped));
    Arc::new(Feeds {
        slots: Mutex::new(slots),
    })
}

/// The reader: deals the lines out, pass after pass when `looped`.
#[allow(
    clippy::indexing_slicing,
    reason = "w = j % workers < tx.len(); tx and back are made in pairs, one per worker, and segs \
              has one entry per back"
)]
fn read(rec: &Recording, tx: Vec<Sender<Segment>>, back: Vec<Receiver<Segment>>, looped: bool) {
    let workers = tx.len();
    let Some(mut segs) = back
        .iter()
        .map(|b| b.recv().ok())
        .collect::<Option<Vec<Segment>>>()
    else {
        return;
    };
    let mut line = Vec::with_capacity(64 * 1024);
    let mut j = 0usize;
    let mut pass = 0u64;
    loop {
        for s in segs.iter_mut() {
            s.pass = pass;
        }
        for p in &rec.files {
            let Ok(f) = std::fs::File::open(p) else {
                return;
            };
            let mut r = BufReader::with_capacity(1 << 20, f);
            loop {
                line.clear();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let w = j % workers;
                j += 1;
                let s = &mut segs[w];
                let start = s.data.len();
                s.data.extend_from_slice(&line);
                s.lines.push(Line {
                    start,
                    end: s.data.len(),
                    ts: None,
                });
                if s.data.len() >= SEGMENT_BYTES && !deal(rec, &mut segs[w], &tx[w], &back[w], pass)
                {
                    return;
                }
            }
        }
        // A pass ends: every segment goes out, so a segment is of one pass.
        for w in 0..workers {
            if !segs[w].lines.is_empty() && !deal(rec, &mut segs[w], &tx[w], &back[w], pass) {
                return;
            }
        }
        if !looped {
            return;
        }
        pass += 1;
    }
}

/// Stamps `seg`'s lines, sends it, and takes an empty one back (waiting for the worker to
/// hand one back); false when the worker is gone.
fn deal(
    rec: &Recording,
    seg: &mut Segment,
    tx: &Sender<Segment>,
    back: &Receiver<Segment>,
    pass: u64,
) -> bool {
    if let Some(f) = rec.finder() {
        f.stamp(&seg.data, &mut seg.lines);
    }
    let Ok(mut next) = back.recv() else {
        return false;
    };
    next.data.clear();
    next.lines.clear();
    next.pass = pass;
    let full = std::mem::replace(seg, next);
    tx.send(full).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::EventCtx;
    use crate::generate::replay::{Replayer, Times};

    #[test]
    fn blank_lines_are_not_counted_wherever_the_buffers_cut() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.log");
        let count = |text: &str| {
            std::fs::write(&f, text).unwrap();
            count_lines(&f).unwrap()
        };
        assert_eq!(count(""), 0);
        assert_eq!(count("a\n\n  \t\nb c\n   x"), 3);
        assert_eq!(count("\n\n \n"), 0);
        // Lines longer than the 1 MiB read buffer: one of text after white space, one all
        // white space, one that ends without a newline.
        let pad = " ".repeat(1_500_000);
        assert_eq!(count(&format!("{pad}x\n{pad}\n{pad}\ny{pad}")), 2);
    }

    #[test]
    fn two_workers_play_every_line_once_in_order_of_their_turn() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.log");
        let text: String = (0..30_000)
            .map(|i| format!("2025/03/14 09:00:{:02} line {i}\n\n", i % 60))
            .collect();
        std::fs::write(&f, &text).unwrap();
        let rec = Recording::load_within(vec![f], Format::Lines, &Locate::Auto, 1000).unwrap();
        assert_eq!(rec.streamed(), Some(30_000));
        assert_eq!(rec.len(), 30_000);
        let p = Replayer::new(Arc::new(rec), Times::Keep, false, 0, None).streaming(2);
        let mut seen = vec![false; 30_000];
        for w in 0..2u64 {
            let mut r = p.for_worker(w as usize);
            for k in 0..15_000u64 {
                let index = k * 2 + w;
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                while !r.ready(index) {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "line {index} never came"
                    );
                    std::thread::yield_now();
                }
                let ctx = EventCtx {
                    index,
                    time_ns: 0,
                    agent: 0,
                    seq: k,
                    sent_ms: None,
                };
                let mut out = Vec::new();
                r.render(&ctx, &mut out);
                let mut again = Vec::new();
                r.render(&ctx, &mut again);
                assert_eq!(out, again, "the same index plays the same line");
                let text = String::from_utf8(out).unwrap();
                let n: usize = text.rsplit(' ').next().unwrap().parse().unwrap();
                assert_eq!(n as u64, index, "{text}");
                seen[n] = true;
            }
        }
        assert!(seen.iter().all(|s| *s));
    }
}
