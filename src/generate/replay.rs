//! Replay of recorded logs (`source: { file: PATH|GLOB }`): the files read once into memory at
//! setup, split into lines, each line's timestamp found (auto-detected among the formats the
//! packs write, or by a given regex and format) and kept as an offset, a length and an
//! instant; then, per event, line `index mod lines` written out with its timestamp kept,
//! set to the event's time (`now`), or shifted so the recording starts when the run does
//! (`shift`, each loop one recording's span later), and the accounting tag added where the
//! format allows it (a JSON member for ndjson, key=value pairs at the end of a plain line).
//! Rendering copies bytes and writes digits into the caller's buffer: no allocation.
//!
//! Files larger than the memory limit are streamed (`replay_stream`): the recording here is
//! then only their head (the first lines, to find the timestamp format, the first and last
//! timestamps and the line count), and a reader thread deals the lines out to the workers in
//! recycled segments.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::bytes::Regex;

use super::time::{TsFormat, TsWriter, UnixNs, days_from_civil};
use super::{EventCtx, SentDigits, acct_close, write_acct};
use crate::generate::program::AcctStyle;

/// How a recording's lines are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One event per line, any text.
    Lines,
    /// One JSON object per line.
    Ndjson,
}

/// What becomes of each line's timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Times {
    /// As recorded.
    Keep,
    /// The event's time in the run (its send time in a realtime run).
    Now,
    /// As recorded, moved so the first line falls at the start of the run.
    Shift,
}

/// Where each line's timestamp is: found automatically, or by a regex (its first group, or
/// the whole match) in a given format.
#[derive(Clone, Debug)]
pub enum Locate {
    Auto,
    Given { regex: String, format: TsFormat },
}

/// One line of a recording: its bytes and, when found, its timestamp's place and instant.
#[derive(Clone, Copy, Debug)]
pub(super) struct Line {
    pub(super) start: usize,
    pub(super) end: usize,
    /// (offset in the line, length, instant)
    pub(super) ts: Option<(u32, u32, UnixNs)>,
}

/// The files, read and indexed.
pub struct Recording {
    pub(super) data: Vec<u8>,
    pub(super) lines: Vec<Line>,
    pub format: Format,
    /// The timestamp format found (or given); `None` when no line has one.
    pub ts_format: Option<TsFormat>,
    /// The first and last timestamps, and the span a loop adds (last − first plus one mean gap).
    first_ns: UnixNs,
    span_ns: i64,
    pub files: Vec<PathBuf>,
    /// How timestamps are found (for a stream's reader to find them the same way).
    pub(super) finder: Option<Finder>,
    /// Streamed: the lines of one pass (this recording holds only the head).
    pub(super) streamed: Option<u64>,
}

/// The pattern a recording's timestamps were found with, and the given regex around it.
#[derive(Clone)]
pub(super) struct Finder {
    pattern: Pattern,
    outer: Option<Regex>,
    year: i64,
}

impl Finder {
    /// Finds the timestamp of each of `lines` in `data`.
    pub(super) fn stamp(&self, data: &[u8], lines: &mut [Line]) {
        stamp_lines(&self.pattern, self.outer.as_ref(), self.year, data, lines);
    }
}

/// A detector: a format, the pattern that finds it, and how to read its fields.
#[derive(Clone)]
struct Pattern {
    format: TsFormat,
    re: Regex,
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

#[allow(
    clippy::expect_used,
    reason = "the patterns are literals in this function, compiled by every replay test"
)]
fn patterns() -> Vec<Pattern> {
    let mon = "(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
    let hms = r"(?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})";
    let list: [(TsFormat, String); 6] = [
        // RFC 3339 with a zone; the writer's variant is chosen by the fraction's digits.
        (
            TsFormat::Rfc3339,
            format!(
                r"(?P<y>\d{{4}})-(?P<mo>\d{{2}})-(?P<d>\d{{2}})T{hms}(?:\.(?P<f>\d{{1,9}}))?(?P<z>Z|[+-]\d{{2}}:?\d{{2}})"
            ),
        ),
        (
            TsFormat::IsoLocal,
            format!(r"(?P<y>\d{{4}})-(?P<mo>\d{{2}})-(?P<d>\d{{2}})T{hms}"),
        ),
        (
            TsFormat::Panos,
            format!(r"(?P<y>\d{{4}})/(?P<mo>\d{{2}})/(?P<d>\d{{2}}) {hms}"),
        ),
        (
            TsFormat::Cef,
            format!(r"\b{mon} (?P<d>\d{{2}}) (?P<y>\d{{4}}) {hms}"),
        ),
        (
            TsFormat::Rfc3164,
            format!(r"\b{mon} (?P<d>[ \d]\d) {hms}"),
        ),
        // Epoch seconds (with or without milliseconds) or milliseconds, as a JSON time value.
        (
            TsFormat::EpochS,
            r#""(?:time|timestamp|ts|@timestamp|_time|eventTime|event_time)"\s*:\s*"?(?P<e>\d{10}(?:\.\d{3})?|\d{13})\b"#
                .to_string(),
        ),
    ];
    list.into_iter()
        .map(|(format, p)| Pattern {
            format,
            re: Regex::new(&p).expect("the built-in timestamp patterns compile"),
        })
        .collect()
}

/// The pattern a given format is read with.
fn pattern_of(format: TsFormat) -> Pattern {
    let family = match format {
        TsFormat::Rfc3339Ms | TsFormat::Rfc3339Us | TsFormat::Windows | TsFormat::Rfc5424 => {
            TsFormat::Rfc3339
        }
        TsFormat::EpochMs | TsFormat::EpochSMs => TsFormat::EpochS,
        f => f,
    };
    patterns()
        .into_iter()
        .find(|p| p.format == family)
        .unwrap_or_else(|| patterns().remove(0))
}

fn num(c: &regex::bytes::Captures, name: &str) -> Option<i64> {
    let m = c.name(name)?;
    std::str::from_utf8(m.as_bytes()).ok()?.trim().parse().ok()
}

/// The instant `c` names, and the writer format that writes it back as it was written.
/// `year` fills in formats without one (RFC 3164).
fn instant(p: &Pattern, c: &regex::bytes::Captures, year: i64) -> Option<(UnixNs, TsFormat)> {
    if let Some(e) = c.name("e") {
        let t = std::str::from_utf8(e.as_bytes()).ok()?;
        return Some(match t.split_once('.') {
            Some((s, ms)) => (
                s.parse::<i64>().ok()? * 1_000_000_000 + ms.parse::<i64>().ok()? * 1_000_000,
                TsFormat::EpochSMs,
            ),
            None if t.len() == 13 => (t.parse::<i64>().ok()? * 1_000_000, TsFormat::EpochMs),
            None => (t.parse::<i64>().ok()? * 1_000_000_000, TsFormat::EpochS),
        });
    }
    let y = num(c, "y").unwrap_or(year);
    let mo = match c.name("mon") {
        Some(m) => MONTHS.iter().position(|x| x.as_bytes() == m.as_bytes())? as i64 + 1,
        None => num(c, "mo")?,
    };
    let d = num(c, "d")?;
    let (h, mi, s) = (num(c, "h")?, num(c, "mi")?, num(c, "s")?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo as u32, d as u32);
    let mut ns = (days * 86_400 + h * 3600 + mi * 60 + s) * 1_000_000_000;
    let mut format = p.format;
    if let Some(f) = c.name("f") {
        let digits = f.as_bytes();
        let mut frac: i64 = 0;
        for (i, b) in digits.iter().take(9).enumerate() {
            frac += i64::from(b - b'0') * 10i64.pow(8 - i as u32);
        }
        ns += frac;
        format = match digits.len() {
            1..=3 => TsFormat::Rfc3339Ms,
            4..=6 => TsFormat::Rfc3339Us,
            _ => TsFormat::Windows,
        };
    }
    if let Some(z) = c.name("z").map(|z| z.as_bytes()).filter(|z| *z != b"Z") {
        // +hh:mm / -hhmm: the instant is the local time less the offset.
        let digits: Vec<i64> = z
            .get(1..)
            .unwrap_or_default()
            .iter()
            .filter(|b| b.is_ascii_digit())
            .map(|b| i64::from(b - b'0'))
            .collect();
        if let [h1, h2, m1, m2] = *digits.as_slice() {
            let off = (h1 * 10 + h2) * 3600 + (m1 * 10 + m2) * 60;
            let sign = if z.first() == Some(&b'-') { -1 } else { 1 };
            ns -= sign * off * 1_000_000_000;
        }
    }
    Some((ns, format))
}

/// The paths `file` names: a path, or a glob of them (sorted).
pub fn expand(file: &str) -> Result<Vec<PathBuf>, String> {
    // A recording is regular files only (`fsio::open_regular`): never a device, a FIFO or a
    // file under /proc, whose reads do not end.
    let regular = |p: &Path| {
        crate::fsio::open_regular(p)
            .map(drop)
            .map_err(|e| e.to_string())
    };
    if !file.contains(['*', '?', '[']) {
        let p = PathBuf::from(file);
        if !p.exists() {
            return Err(format!("{file}: not found"));
        }
        regular(&p)?;
        return Ok(vec![p]);
    }
    let mut out: Vec<PathBuf> = glob::glob(file)
        .map_err(|e| format!("{file}: not a glob pattern: {e}"))?
        .filter_map(Result::ok)
        .filter(|p| !p.is_dir())
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(format!("{file}: no file matches"));
    }
    for p in &out {
        regular(p)?;
    }
    Ok(out)
}

impl Recording {
    /// Reads and indexes `files`. Empty lines are skipped; an ndjson line that is not one JSON
    /// object is an error naming its file and line.
    pub fn load(files: Vec<PathBuf>, format: Format, locate: &Locate) -> Result<Recording, String> {
        Self::load_within(files, format, locate, u64::MAX)
    }

    /// As `load` when the files hold at most `memory` bytes; else only their head, for a
    /// stream (`streamed()`): the first lines (checked as `load` checks every line), the
    /// last one's timestamp, and the count of lines.
    pub fn load_within(
        files: Vec<PathBuf>,
        format: Format,
        locate: &Locate,
        memory: u64,
    ) -> Result<Recording, String> {
        let size: u64 = files
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .sum();
        if size > memory {
            return super::replay_stream::head(files, format, locate);
        }
        let mut data = Vec::new();
        let mut lines = Vec::new();
        for path in &files {
            let text = crate::fsio::read_bytes(path, memory).map_err(|e| e.to_string())?;
            let base = data.len();
            data.extend_from_slice(&text);
            index_lines(&data, base, path, format, &mut lines)?;
        }
        Self::of_lines(files, format, data, lines, locate)
    }

    /// A recording of `lines` in `data`, its timestamps found.
    pub(super) fn of_lines(
        files: Vec<PathBuf>,
        format: Format,
        data: Vec<u8>,
        lines: Vec<Line>,
        locate: &Locate,
    ) -> Result<Recording, String> {
        if lines.is_empty() {
            return Err(format!("{}: no lines to replay", show(&files)));
        }
        let mut rec = Recording {
            data,
            lines,
            format,
            ts_format: None,
            first_ns: 0,
            span_ns: 0,
            files,
            finder: None,
            streamed: None,
        };
        rec.find_timestamps(locate)?;
        Ok(rec)
    }

    /// Streamed: the lines of one pass (this recording holds only their head).
    pub fn streamed(&self) -> Option<u64> {
        self.streamed
    }

    /// The first timestamp (ns) and the span of one pass, for a stream's head to set.
    pub(super) fn set_span(&mut self, last_ns: Option<UnixNs>, lines: u64) {
        if let (Some(last), Some(_)) = (last_ns, self.ts_format) {
            let gap = (last - self.first_ns) / (lines.max(2) as i64 - 1);
            self.span_ns = (last - self.first_ns + gap).max(1);
        }
        self.streamed = Some(lines);
    }

    pub(super) fn finder(&self) -> Option<&Finder> {
        self.finder.as_ref()
    }

    /// Lines in one pass.
    pub fn len(&self) -> usize {
        self.streamed.map_or(self.lines.len(), |n| n as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Lines whose timestamp was found.
    pub fn stamped(&self) -> usize {
        self.lines.iter().filter(|l| l.ts.is_some()).count()
    }

    /// The mean size of a line, bytes.
    pub fn mean_line_bytes(&self) -> f64 {
        let total: usize = self.lines.iter().map(|l| l.end - l.start).sum();
        total as f64 / self.lines.len().max(1) as f64
    }

    fn find_timestamps(&mut self, locate: &Locate) -> Result<(), String> {
        let year =
            super::time::civil_from_days(super::time::now().div_euclid(86_400 * 1_000_000_000)).0;
        let pattern = match locate {
            Locate::Given { regex, format } => {
                let re = Regex::new(regex).map_err(|e| format!("not a regex: {e}"))?;
                let p = pattern_of(*format);
                self.stamp(&p, Some(&re), year);
                if self.stamped() == 0 {
                    return Err(format!(
                        "no line has a timestamp the regex finds in format {}",
                        format.name()
                    ));
                }
                self.finder = Some(Finder {
                    pattern: p.clone(),
                    outer: Some(re),
                    year,
                });
                Some(p)
            }
            Locate::Auto => {
                // The format that the most of the first 200 lines carry (ties: the more
                // specific, listed first).
                let sample: Vec<Line> = self.lines.iter().take(200).copied().collect();
                let mut best: Option<(usize, Pattern)> = None;
                for p in patterns() {
                    let n = sample
                        .iter()
                        .filter(|l| {
                            self.data
                                .get(l.start..l.end)
                                .is_some_and(|text| p.re.is_match(text))
                        })
                        .count();
                    if n > 0 && best.as_ref().is_none_or(|(m, _)| n > *m) {
                        best = Some((n, p));
                    }
                }
                best.map(|(_, p)| {
                    self.stamp(&p, None, year);
                    self.finder = Some(Finder {
                        pattern: p.clone(),
                        outer: None,
                        year,
                    });
                    p
                })
            }
        };
        let Some(p) = pattern else {
            return Ok(());
        };
        let stamps: Vec<UnixNs> = self
            .lines
            .iter()
            .filter_map(|l| l.ts.map(|t| t.2))
            .collect();
        let (Some(&first), Some(&last)) = (stamps.first(), stamps.last()) else {
            // The pattern matched lines but no instant could be read from them: as if no
            // pattern had been found.
            self.finder = None;
            return Ok(());
        };
        let gap = if stamps.len() > 1 {
            (last - first) / (stamps.len() as i64 - 1)
        } else {
            1_000_000_000
        };
        self.first_ns = first;
        self.span_ns = (last - first + gap).max(1);
        // The writer format: the pattern's own, made precise by the first line read.
        self.ts_format = Some(self.written_format(&p, year));
        Ok(())
    }

    fn written_format(&self, p: &Pattern, year: i64) -> TsFormat {
        for l in &self.lines {
            if let Some((off, len, _)) = l.ts {
                let text = self
                    .data
                    .get(l.start + off as usize..l.start + (off + len) as usize);
                if let Some(c) = text.and_then(|text| p.re.captures(text))
                    && let Some((_, f)) = instant(p, &c, year)
                {
                    return f;
                }
            }
        }
        p.format
    }

    /// Finds each line's timestamp with `p` (inside `outer`'s first group or match, when
    /// given).
    fn stamp(&mut self, p: &Pattern, outer: Option<&Regex>, year: i64) {
        stamp_lines(p, outer, year, &self.data, &mut self.lines);
    }
}

/// Finds each line's timestamp with `p` (inside `outer`'s first group or match, when given).
fn stamp_lines(p: &Pattern, outer: Option<&Regex>, year: i64, data: &[u8], lines: &mut [Line]) {
    {
        for l in lines.iter_mut() {
            let Some(line) = data.get(l.start..l.end) else {
                continue;
            };
            let (base, hay) = match outer {
                Some(re) => match re
                    .captures(line)
                    .and_then(|c| c.get(1).or_else(|| c.get(0)))
                {
                    Some(m) => (m.start(), m.as_bytes()),
                    None => continue,
                },
                None => (0, line),
            };
            let Some(c) = p.re.captures(hay) else {
                continue;
            };
            // The epoch pattern matches the key too; its value is group `e`.
            let Some(m) = c.name("e").or_else(|| c.get(0)) else {
                continue;
            };
            if let Some((ns, _)) = instant(p, &c, year) {
                l.ts = Some(((base + m.start()) as u32, (m.end() - m.start()) as u32, ns));
            }
        }
    }
}

fn show(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn index_lines(
    data: &[u8],
    base: usize,
    path: &Path,
    format: Format,
    lines: &mut Vec<Line>,
) -> Result<(), String> {
    let mut start = base;
    let from = data.get(base..).unwrap_or_default();
    for (n, piece) in from.split(|b| *b == b'\n').enumerate() {
        let mut end = start + piece.len();
        let next = end + 1;
        if end > start && data.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        let text = data.get(start..end).unwrap_or_default();
        if !text.iter().all(u8::is_ascii_whitespace) {
            if format == Format::Ndjson {
                let ok = serde_json::from_slice::<serde_json::Value>(text)
                    .map(|v| v.is_object())
                    .unwrap_or(false);
                if !ok {
                    return Err(format!(
                        "{}:{}: not one JSON object on the line (format: ndjson)",
                        path.display(),
                        n + 1
                    ));
                }
            }
            lines.push(Line {
                start,
                end,
                ts: None,
            });
        }
        start = next;
    }
    Ok(())
}

/// One worker's player of a recording.
pub struct Replayer {
    rec: Arc<Recording>,
    times: Times,
    looped: bool,
    writer: Option<TsWriter>,
    /// Added to a recorded instant under `shift` (the run's start less the first line's).
    shift_ns: i64,
    acct: Option<(AcctStyle, Arc<[u8]>)>,
    sent: SentDigits,
    /// Streamed: every worker's feed, until each takes its own, and this worker's.
    feeds: Option<Arc<super::replay_stream::Feeds>>,
    feed: Option<Box<super::replay_stream::Feed>>,
}

/// A clone plays the same recording; a stream's feed stays with its worker (`for_worker`
/// gives each its own).
impl Clone for Replayer {
    fn clone(&self) -> Replayer {
        Replayer {
            rec: self.rec.clone(),
            times: self.times,
            looped: self.looped,
            writer: self.writer.clone(),
            shift_ns: self.shift_ns,
            acct: self.acct.clone(),
            sent: self.sent.clone(),
            feeds: self.feeds.clone(),
            feed: None,
        }
    }
}

impl Replayer {
    /// `start_ns` is when the run starts (where `shift` puts the first line); `run_id` goes
    /// into the tags when `accounting`.
    pub fn new(
        rec: Arc<Recording>,
        times: Times,
        looped: bool,
        start_ns: UnixNs,
        accounting: Option<&str>,
    ) -> Replayer {
        let style = match rec.format {
            Format::Ndjson => AcctStyle::Json {
                leading_comma: true,
            },
            Format::Lines => AcctStyle::Kv,
        };
        Replayer {
            writer: rec.ts_format.map(TsWriter::new),
            shift_ns: start_ns - rec.first_ns,
            rec,
            times,
            looped,
            acct: accounting.map(|r| (style, Arc::from(r.as_bytes()))),
            sent: SentDigits::default(),
            feeds: None,
            feed: None,
        }
    }

    /// A streamed recording: starts the reader that deals its lines out to `workers` feeds
    /// (each worker takes its own with `for_worker`). Nothing for one held in memory.
    pub fn streaming(mut self, workers: usize) -> Replayer {
        if self.rec.streamed().is_some() {
            self.feeds = Some(super::replay_stream::start(
                self.rec.clone(),
                workers,
                self.looped,
            ));
        }
        self
    }

    /// This player for worker `id` (of a stream: with that worker's feed).
    pub fn for_worker(&self, id: usize) -> Replayer {
        let mut r = self.clone();
        r.feed = self.feeds.as_ref().and_then(|f| f.take(id));
        r.feeds = None;
        r
    }

    /// Lines in one pass of the recording.
    pub fn len(&self) -> u64 {
        self.rec.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.rec.is_empty()
    }

    /// Whether the recording starts over at its end (else a run sends each line once).
    pub fn looped(&self) -> bool {
        self.looped
    }

    /// Whether event `index` can be written now (a stream's reader may not have dealt it yet;
    /// a recording in memory always can).
    #[inline]
    pub fn ready(&mut self, index: u64) -> bool {
        match &mut self.feed {
            Some(f) => f.ready(index),
            None => true,
        }
    }

    /// Writes event `ctx.index`: its line, timestamp and tag (of a stream: this worker's next
    /// line, or the same one again for the same index).
    #[allow(
        clippy::indexing_slicing,
        reason = "per-event hot path; k = index % lines.len(), and index_lines made every line's \
                  range lie within data"
    )]
    pub fn render(&mut self, ctx: &EventCtx, out: &mut Vec<u8>) {
        let w = Write {
            format: self.rec.format,
            times: self.times,
            writer: self.writer.as_mut(),
            shift_ns: self.shift_ns,
            span_ns: self.rec.span_ns,
            acct: self.acct.as_ref(),
            sent: &mut self.sent,
        };
        if let Some(f) = &mut self.feed {
            if let Some((line, ts, pass)) = f.line(ctx.index) {
                w.line(line, ts, pass, ctx, out);
            }
            return;
        }
        let n = self.rec.lines.len() as u64;
        let (pass, k) = (ctx.index / n, (ctx.index % n) as usize);
        let l = self.rec.lines[k];
        w.line(&self.rec.data[l.start..l.end], l.ts, pass, ctx, out);
    }
}

/// What writing a line takes, borrowed from its player.
struct Write<'a> {
    format: Format,
    times: Times,
    writer: Option<&'a mut TsWriter>,
    shift_ns: i64,
    span_ns: i64,
    acct: Option<&'a (AcctStyle, Arc<[u8]>)>,
    sent: &'a mut SentDigits,
}

impl Write<'_> {
    #[allow(
        clippy::indexing_slicing,
        reason = "per-event hot path; stamp_lines found (off, len) inside this line, and body_end \
                  is the line's length or (ndjson, each line checked to be one object) its \
                  closing brace, after any value in it"
    )]
    fn line(
        self,
        line: &[u8],
        ts: Option<(u32, u32, UnixNs)>,
        pass: u64,
        ctx: &EventCtx,
        out: &mut Vec<u8>,
    ) {
        // Where the tag goes: before a JSON object's closing brace, or at the end.
        let body_end = match (self.acct.is_some(), self.format) {
            (true, Format::Ndjson) => line.iter().rposition(|b| *b == b'}').unwrap_or(line.len()),
            _ => line.len(),
        };
        match (ts, self.times, self.writer) {
            (Some((off, len, ns)), times, Some(w)) if times != Times::Keep => {
                let (off, len) = (off as usize, len as usize);
                let t = match times {
                    Times::Now => ctx.time_ns,
                    _ => ns + self.shift_ns + pass as i64 * self.span_ns,
                };
                out.extend_from_slice(&line[..off]);
                w.write(t, out);
                out.extend_from_slice(&line[off + len..body_end]);
            }
            _ => out.extend_from_slice(&line[..body_end]),
        }
        if let Some((style, run)) = self.acct {
            write_acct(*style, run, ctx, self.sent, out);
            out.extend_from_slice(acct_close(*style));
            out.extend_from_slice(&line[body_end..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(text: &str, format: Format) -> (tempfile::TempDir, Recording) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.log");
        std::fs::write(&p, text).unwrap();
        let r = Recording::load(vec![p], format, &Locate::Auto).unwrap();
        (dir, r)
    }

    fn ctx(index: u64, time_ns: i64) -> EventCtx {
        EventCtx {
            index,
            time_ns,
            agent: 2,
            seq: index,
            sent_ms: None,
        }
    }

    fn play(r: Replayer, indexes: &[u64], t: i64) -> Vec<String> {
        let mut r = r;
        indexes
            .iter()
            .map(|i| {
                let mut out = Vec::new();
                r.render(&ctx(*i, t), &mut out);
                String::from_utf8(out).unwrap()
            })
            .collect()
    }

    const T0: i64 = 1_767_607_200_000_000_000; // 2026-01-05T10:00:00Z

    #[test]
    fn ndjson_lines_get_the_run_time_and_a_tag_inside_the_object() {
        let (_d, r) = rec(
            "{\"ts\":\"2025-03-14T09:21:07.123Z\",\"msg\":\"a\"}\n\n{\"ts\":\"2025-03-14T09:21:08.500Z\",\"msg\":\"b\"}\n",
            Format::Ndjson,
        );
        assert_eq!(r.len(), 2);
        assert_eq!(r.ts_format, Some(TsFormat::Rfc3339Ms));
        let p = Replayer::new(Arc::new(r), Times::Now, true, T0, Some("r-1"));
        let out = play(p, &[0, 3], T0);
        assert_eq!(
            out[0],
            "{\"ts\":\"2026-01-05T10:00:00.000Z\",\"msg\":\"a\",\"ingestbench\":{\"run\":\"r-1\",\"agent\":2,\"seq\":0}}"
        );
        assert!(out[1].contains("\"msg\":\"b\""), "{}", out[1]);
        for o in &out {
            serde_json::from_str::<serde_json::Value>(o).unwrap();
        }
    }

    #[test]
    fn shift_keeps_the_spacing_and_a_loop_moves_on_by_the_span() {
        let (_d, r) = rec(
            "Mar 14 09:21:07 host sshd[1]: one\nMar 14 09:21:09 host sshd[1]: two\n",
            Format::Lines,
        );
        assert_eq!(r.ts_format, Some(TsFormat::Rfc3164));
        let p = Replayer::new(Arc::new(r), Times::Shift, true, T0, None);
        let out = play(p, &[0, 1, 2], 0);
        assert_eq!(out[0], "Jan  5 10:00:00 host sshd[1]: one");
        assert_eq!(out[1], "Jan  5 10:00:02 host sshd[1]: two");
        // Span: 2 s between them plus one mean gap (2 s).
        assert_eq!(out[2], "Jan  5 10:00:04 host sshd[1]: one");
    }

    #[test]
    fn keep_leaves_lines_as_recorded_and_plain_lines_take_key_value_tags() {
        let (_d, r) = rec("2025/03/14 09:21:07 allow tcp\n", Format::Lines);
        assert_eq!(r.ts_format, Some(TsFormat::Panos));
        let p = Replayer::new(Arc::new(r), Times::Keep, true, T0, Some("r-9"));
        assert_eq!(
            play(p, &[5], T0)[0],
            "2025/03/14 09:21:07 allow tcp ingestbench_run=r-9 ingestbench_agent=2 ingestbench_seq=5"
        );
    }

    #[test]
    fn zones_epochs_and_a_given_regex() {
        let (_d, r) = rec("{\"time\": 1741944067, \"x\": 1}\n", Format::Ndjson);
        assert_eq!(r.ts_format, Some(TsFormat::EpochS));
        let p = Replayer::new(Arc::new(r), Times::Now, true, T0, None);
        assert_eq!(play(p, &[0], T0)[0], "{\"time\": 1767607200, \"x\": 1}");
        let (_d, r) = rec("at 2025-03-14T11:21:07+02:00 x\n", Format::Lines);
        let p = Replayer::new(Arc::new(r), Times::Shift, true, T0, None);
        assert_eq!(play(p, &[0], 0)[0], "at 2026-01-05T10:00:00Z x");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("g.log");
        std::fs::write(&f, "a=2025-03-14T09:21:07Z b=2025-03-14T09:00:00Z\n").unwrap();
        let r = Recording::load(
            vec![f],
            Format::Lines,
            &Locate::Given {
                regex: "b=(\\S+)".into(),
                format: TsFormat::Rfc3339,
            },
        )
        .unwrap();
        let p = Replayer::new(Arc::new(r), Times::Now, true, T0, None);
        assert_eq!(
            play(p, &[0], T0)[0],
            "a=2025-03-14T09:21:07Z b=2026-01-05T10:00:00Z"
        );
    }

    #[test]
    fn bad_input_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.ndjson");
        std::fs::write(&f, "{\"a\":1}\nnot json\n").unwrap();
        let e = Recording::load(vec![f.clone()], Format::Ndjson, &Locate::Auto)
            .err()
            .unwrap();
        assert!(
            e.ends_with("bad.ndjson:2: not one JSON object on the line (format: ndjson)"),
            "{e}"
        );
        let e = expand(&dir.path().join("*.nothing").display().to_string()).unwrap_err();
        assert!(e.contains("no file matches"), "{e}");
        assert!(
            expand("/no/such/file.log")
                .unwrap_err()
                .contains("not found")
        );
        std::fs::write(&f, "\n\n").unwrap();
        let e = Recording::load(vec![f], Format::Lines, &Locate::Auto)
            .err()
            .unwrap();
        assert!(e.contains("no lines to replay"), "{e}");
    }
}
