//! RELP, the Reliable Event Logging Protocol (rsyslog's librelp, `doc/relp.md`): syslog with
//! an acknowledgement per message. This module owns the protocol and nothing else — no
//! socket, no clock read: the frame writer (`TXNR SP COMMAND SP DATALEN [SP DATA] LF`), the
//! incremental reader of what a server sends (`rsp` frames and the `serverclose` hint, fed in
//! whatever pieces the socket gives), the session of one connection (`open` with its offers,
//! transaction numbers 1..=999,999,999 then 1 again, a window of unacknowledged frames,
//! `close`), and `Frames`, what became of each message of a batch across connections (sent,
//! acknowledged, refused), so the ones not acknowledged when a connection breaks are sent
//! again on the next, with new transaction numbers.
//!
//! A server must answer in the order it received (the spec), and librelp's server checks
//! that each frame's txnr is the one after the last: the session numbers every frame it
//! writes, the open first, from 1 on each connection. Nothing here allocates once a session
//! and its batch's `Frames` exist.

use std::collections::VecDeque;
use std::time::Instant;

use crate::bytes::{Sink, write_u64};

/// The highest transaction number; the one after it is 1 (0 is for hints).
pub const MAX_TXNR: u32 = 999_999_999;
/// rsyslog's (librelp's) default window: frames sent and not yet answered, per connection.
pub const DEFAULT_WINDOW: usize = 128;
/// The largest window a config may ask for.
pub const MAX_WINDOW: usize = 65_536;
/// The largest `rsp` a server may send us (librelp's limit on any frame is 128 KiB).
const MAX_RSP_DATA: usize = 128 * 1024;
/// Written bytes kept at the front of a session's buffer before it is compacted.
const COMPACT_AT: usize = 64 * 1024;
/// What of an `rsp`'s data is kept for a look (the open's offers, a refusal's text).
const KEPT_DATA: usize = 4096;

/// The offers of our `open`: librelp's protocol version (0, what every librelp speaks), who
/// we are, and the one command we use.
pub const OPEN_OFFERS: &[u8] = concat!(
    "relp_version=0\nrelp_software=ingestbench,",
    env!("CARGO_PKG_VERSION"),
    "\ncommands=syslog"
)
.as_bytes();

/// The transaction number after `t`: 1..=999,999,999, then 1 again.
#[inline]
pub fn next_txnr(t: u32) -> u32 {
    if t >= MAX_TXNR { 1 } else { t + 1 }
}

/// Appends one frame: `TXNR SP COMMAND SP DATALEN [SP DATA] LF` (no SP and no data when
/// `data` is empty).
#[inline]
pub fn write_frame(out: &mut Vec<u8>, txnr: u32, command: &[u8], data: &[u8]) {
    write_u64(u64::from(txnr), out);
    out.push(b' ');
    out.put_slice(command);
    out.push(b' ');
    write_u64(data.len() as u64, out);
    if !data.is_empty() {
        out.push(b' ');
        out.put_slice(data);
    }
    out.push(b'\n');
}

/// Bytes a frame adds around its data, at most: a 9-digit txnr, `syslog`, a 9-digit length,
/// three spaces and the LF.
pub const FRAME_OVERHEAD: usize = 9 + 1 + 6 + 1 + 9 + 1 + 1;

/// What the server sent that does not follow RELP; the connection cannot go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelpError {
    /// The frame itself is malformed (where, in words).
    Framing(&'static str),
    /// An answer to a transaction this side has not sent (or already had answered).
    UnknownTxnr(u32),
    /// A command a server may not send a client.
    UnexpectedCommand,
    /// The server's answer to our `open` lacks what a session needs.
    BadOffers(&'static str),
}

impl std::fmt::Display for RelpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelpError::Framing(w) => write!(f, "malformed RELP frame: {w}"),
            RelpError::UnknownTxnr(t) => write!(f, "rsp for txnr {t}, which is not outstanding"),
            RelpError::UnexpectedCommand => {
                f.write_str("the server sent a command other than rsp or serverclose")
            }
            RelpError::BadOffers(w) => write!(f, "the server's open answer {w}"),
        }
    }
}

impl std::error::Error for RelpError {}

/// One frame a server sent, as far as a client cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// `rsp` to transaction `txnr`, with the status its data starts with (0 when the data is
    /// empty, as librelp answers `close`).
    Rsp { txnr: u32, code: u16 },
    /// The `serverclose` hint (txnr 0): the server is closing the connection.
    ServerClose,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Txnr,
    Command,
    DataLen,
    /// After a zero length: an optional SP, then the LF.
    Empty,
    Data,
    Trailer,
}

/// Reads frames from the bytes a server sends, in any pieces. Keeps the first `KEPT_DATA`
/// bytes of each frame's data (`data()`), and nothing else.
pub struct Reader {
    st: St,
    digits: u8,
    txnr: u32,
    command: [u8; 32],
    command_len: usize,
    len: usize,
    seen: usize,
    data: Vec<u8>,
}

impl Default for Reader {
    fn default() -> Self {
        Reader::new()
    }
}

impl Reader {
    pub fn new() -> Reader {
        Reader {
            st: St::Txnr,
            digits: 0,
            txnr: 0,
            command: [0; 32],
            command_len: 0,
            len: 0,
            seen: 0,
            data: Vec::with_capacity(KEPT_DATA),
        }
    }

    /// Forgets a frame begun (a new connection).
    pub fn reset(&mut self) {
        self.st = St::Txnr;
        self.digits = 0;
        self.txnr = 0;
        self.command_len = 0;
        self.len = 0;
        self.seen = 0;
        self.data.clear();
    }

    /// The data of the frame `feed` returned last (at most its first 4 KiB).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Reads from `input` up to the end of one frame: how many bytes it used, and the frame
    /// when one ended there (`None`: every byte was used and the frame goes on).
    pub fn feed(&mut self, input: &[u8]) -> Result<(usize, Option<Incoming>), RelpError> {
        let mut i = 0;
        while let Some(&c) = input.get(i) {
            i += 1;
            match self.st {
                St::Txnr => match c {
                    b'0'..=b'9' if self.digits < 9 => {
                        self.digits += 1;
                        self.txnr = self.txnr * 10 + u32::from(c - b'0');
                    }
                    b' ' if self.digits > 0 => {
                        self.st = St::Command;
                        self.command_len = 0;
                    }
                    b'0'..=b'9' => return Err(RelpError::Framing("txnr longer than 9 digits")),
                    _ => return Err(RelpError::Framing("txnr is not a number")),
                },
                St::Command => match c {
                    b'a'..=b'z' | b'A'..=b'Z' if self.command_len < 32 => {
                        if let Some(slot) = self.command.get_mut(self.command_len) {
                            *slot = c;
                        }
                        self.command_len += 1;
                    }
                    b' ' if self.command_len > 0 => {
                        self.st = St::DataLen;
                        self.digits = 0;
                        self.len = 0;
                    }
                    _ => return Err(RelpError::Framing("command is not 1 to 32 letters")),
                },
                St::DataLen => match c {
                    b'0'..=b'9' if self.digits < 9 => {
                        self.digits += 1;
                        self.len = self.len * 10 + usize::from(c - b'0');
                        if self.len > MAX_RSP_DATA {
                            return Err(RelpError::Framing("data longer than 128 KiB"));
                        }
                    }
                    _ if self.digits == 0 => {
                        return Err(RelpError::Framing("datalen is not a number"));
                    }
                    b'\n' if self.len == 0 => return self.finish(i),
                    b' ' if self.len == 0 => self.st = St::Empty,
                    b' ' => {
                        self.st = St::Data;
                        self.seen = 0;
                        self.data.clear();
                    }
                    _ => return Err(RelpError::Framing("no space after datalen")),
                },
                St::Empty => match c {
                    b'\n' => return self.finish(i),
                    _ => return Err(RelpError::Framing("data after a zero datalen")),
                },
                St::Data => {
                    // Take as much of the data as this input holds at once.
                    let rest = input.get(i - 1..).unwrap_or_default();
                    let take = (self.len - self.seen).min(rest.len());
                    let room = KEPT_DATA.saturating_sub(self.data.len()).min(take);
                    self.data
                        .extend_from_slice(rest.get(..room).unwrap_or_default());
                    self.seen += take;
                    i += take - 1;
                    if self.seen == self.len {
                        self.st = St::Trailer;
                    }
                }
                St::Trailer => match c {
                    b'\n' => return self.finish(i),
                    _ => {
                        return Err(RelpError::Framing(
                            "frame does not end in LF after its data",
                        ));
                    }
                },
            }
        }
        Ok((i, None))
    }

    /// The frame just ended at `used`: what it is; the reader waits for the next one.
    fn finish(&mut self, used: usize) -> Result<(usize, Option<Incoming>), RelpError> {
        let command = self.command.get(..self.command_len).unwrap_or_default();
        let txnr = self.txnr;
        if self.len == 0 {
            self.data.clear();
        }
        self.st = St::Txnr;
        self.digits = 0;
        self.txnr = 0;
        let frame = if command == b"rsp" {
            let d = &self.data;
            let status = d.get(..3).filter(|s| s.iter().all(u8::is_ascii_digit));
            let code = if let Some(status) = status {
                status
                    .iter()
                    .fold(0u16, |n, c| n * 10 + u16::from(c - b'0'))
            } else if d.is_empty() {
                0
            } else {
                return Err(RelpError::Framing("rsp data does not start with a status"));
            };
            Incoming::Rsp { txnr, code }
        } else if command == b"serverclose" && txnr == 0 {
            Incoming::ServerClose
        } else {
            return Err(RelpError::UnexpectedCommand);
        };
        Ok((used, Some(frame)))
    }
}

/// Where a connection's session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No connection (or one whose `open` is not written yet).
    Idle,
    /// `open` written, its answer awaited (since this instant).
    Opening(Instant),
    /// Ready for syslog frames.
    Open,
    /// `close` written, its answer awaited.
    Closing,
}

/// What an answer meant, for the worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The server accepted the open: syslog frames may go.
    Opened,
    /// The server refused the open with this status (the text is in `refusal`).
    OpenRefused(u16),
    /// Frame `frame` of the batch on this connection was answered with `code`.
    Frame { frame: u32, code: u16 },
    /// The close was answered: the connection may be closed.
    Closed,
    /// The server said it is closing the connection.
    ServerClose,
}

/// One connection's RELP session: its transaction numbers, the frames in flight (at most
/// `window`), the bytes written and still to write, and the reader of what comes back.
pub struct Session {
    pub state: State,
    txnr: u32,
    open_txnr: u32,
    close_txnr: u32,
    window: usize,
    /// Frames sent and not answered, in the order sent: (txnr, frame of the batch).
    in_flight: VecDeque<(u32, u32)>,
    /// Frames to write; `out[written..]` is not on the socket yet.
    pub out: Vec<u8>,
    pub written: usize,
    reader: Reader,
    answers: Vec<Answer>,
    /// Why the server refused the open, in its words.
    pub refusal: String,
}

impl Session {
    /// A session for a connection of `window` frames in flight, whose batches hold up to
    /// `batch_bytes` of messages (the batch buffer's capacity) in `batch_events` frames.
    pub fn new(window: usize, batch_events: usize, batch_bytes: usize) -> Session {
        let window = window.clamp(1, MAX_WINDOW);
        Session {
            state: State::Idle,
            txnr: 1,
            open_txnr: 0,
            close_txnr: 0,
            window,
            in_flight: VecDeque::with_capacity(window),
            out: Vec::with_capacity(
                batch_bytes + batch_events * FRAME_OVERHEAD + COMPACT_AT + OPEN_OFFERS.len() + 64,
            ),
            written: 0,
            reader: Reader::new(),
            answers: Vec::with_capacity(window + 4),
            refusal: String::new(),
        }
    }

    /// The connection is gone: nothing is in flight, numbering starts again at 1.
    pub fn reset(&mut self) {
        self.state = State::Idle;
        self.txnr = 1;
        self.in_flight.clear();
        self.out.clear();
        self.written = 0;
        self.reader.reset();
        self.answers.clear();
    }

    fn take_txnr(&mut self) -> u32 {
        let t = self.txnr;
        self.txnr = next_txnr(t);
        t
    }

    /// Writes the `open` (a fresh connection, at `now`).
    pub fn open(&mut self, now: Instant) {
        self.reset();
        let t = self.take_txnr();
        self.open_txnr = t;
        write_frame(&mut self.out, t, b"open", OPEN_OFFERS);
        self.state = State::Opening(now);
    }

    /// Writes the `close`; nothing may follow it.
    pub fn close(&mut self) {
        let t = self.take_txnr();
        self.close_txnr = t;
        write_frame(&mut self.out, t, b"close", b"");
        self.state = State::Closing;
    }

    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }

    /// Room in the window for another frame.
    pub fn has_room(&self) -> bool {
        self.state == State::Open && self.in_flight.len() < self.window
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Writes a `syslog` frame carrying `message`, frame `frame` of the batch; its size.
    pub fn push_syslog(&mut self, frame: u32, message: &[u8]) -> usize {
        self.compact();
        let t = self.take_txnr();
        let before = self.out.len();
        write_frame(&mut self.out, t, b"syslog", message);
        self.in_flight.push_back((t, frame));
        self.out.len() - before
    }

    /// Drops what has been written: at once when all of it has, else once it is 64 KiB
    /// (moving the rest to the front), so the buffer never holds more than the unwritten
    /// frames of one window and 64 KiB besides.
    fn compact(&mut self) {
        if self.written == 0 {
            return;
        }
        if self.written == self.out.len() {
            self.out.clear();
        } else if self.written >= COMPACT_AT {
            self.out.copy_within(self.written.., 0);
            self.out.truncate(self.out.len() - self.written);
        } else {
            return;
        }
        self.written = 0;
    }

    /// Bytes still to write.
    pub fn pending(&self) -> &[u8] {
        self.out.get(self.written..).unwrap_or_default()
    }

    /// `n` more bytes went onto the socket.
    pub fn wrote(&mut self, n: usize) {
        self.written = (self.written + n).min(self.out.len());
        self.compact();
    }

    /// Reads what the server sent; the answers it completes are in `answers()` until
    /// `clear_answers`. An error ends the connection (what was read before it stays).
    pub fn feed(&mut self, mut input: &[u8]) -> Result<(), RelpError> {
        while !input.is_empty() {
            let (used, frame) = self.reader.feed(input)?;
            input = input.get(used..).unwrap_or_default();
            let Some(frame) = frame else { break };
            let answer = match frame {
                Incoming::ServerClose => Answer::ServerClose,
                Incoming::Rsp { txnr, code } => self.answer(txnr, code)?,
            };
            self.answers.push(answer);
            if matches!(answer, Answer::OpenRefused(_) | Answer::ServerClose) {
                break;
            }
        }
        Ok(())
    }

    fn answer(&mut self, txnr: u32, code: u16) -> Result<Answer, RelpError> {
        match self.state {
            State::Opening(_) if txnr == self.open_txnr => {
                if code != 200 {
                    self.refusal = String::from_utf8_lossy(self.reader.data()).into_owned();
                    return Ok(Answer::OpenRefused(code));
                }
                check_offers(self.reader.data())?;
                self.state = State::Open;
                Ok(Answer::Opened)
            }
            State::Closing if txnr == self.close_txnr => {
                self.state = State::Idle;
                Ok(Answer::Closed)
            }
            _ => {
                // Servers answer in order: the oldest frame first, but any will do.
                let at = match self.in_flight.front() {
                    Some(&(t, _)) if t == txnr => 0,
                    _ => self
                        .in_flight
                        .iter()
                        .position(|&(t, _)| t == txnr)
                        .ok_or(RelpError::UnknownTxnr(txnr))?,
                };
                let (_, frame) = self
                    .in_flight
                    .remove(at)
                    .ok_or(RelpError::UnknownTxnr(txnr))?;
                Ok(Answer::Frame { frame, code })
            }
        }
    }

    pub fn answers(&self) -> &[Answer] {
        &self.answers
    }

    pub fn clear_answers(&mut self) {
        self.answers.clear();
    }
}

/// The server's answer to `open` (`200 OK` LF offers): it must give `relp_version` no newer
/// than ours (0) and `commands` with `syslog`.
fn check_offers(data: &[u8]) -> Result<(), RelpError> {
    let mut version = false;
    let mut syslog = false;
    for line in data.split(|&c| c == b'\n').skip(1) {
        let mut halves = line.splitn(2, |&c| c == b'=');
        let name = halves.next().unwrap_or_default();
        let value = halves.next().unwrap_or_default();
        match name {
            b"relp_version" => {
                if value != b"0" {
                    return Err(RelpError::BadOffers("names a relp_version other than 0"));
                }
                version = true;
            }
            b"commands" => syslog = value.split(|&c| c == b',').any(|v| v == b"syslog"),
            _ => {}
        }
    }
    match (version, syslog) {
        (false, _) => Err(RelpError::BadOffers("has no relp_version offer")),
        (_, false) => Err(RelpError::BadOffers("does not offer the syslog command")),
        _ => Ok(()),
    }
}

/// What became of one message of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameState {
    /// Not written on any connection yet.
    New,
    /// Written on a connection and not answered there (sent again on the next one).
    Sent,
    Acked,
    Refused,
}

/// The messages of one batch slot: each one's seq and state, across every connection the
/// batch travels on.
pub struct Frames {
    seq: Vec<u64>,
    state: Vec<FrameState>,
    /// The first frame this attempt has not looked at yet.
    next: usize,
    /// Frames not answered yet, acknowledged, refused.
    pub open: usize,
    pub acked: usize,
    pub refused: usize,
}

impl Frames {
    pub fn new(batch_events: usize) -> Frames {
        Frames {
            seq: Vec::with_capacity(batch_events),
            state: Vec::with_capacity(batch_events),
            next: 0,
            open: 0,
            acked: 0,
            refused: 0,
        }
    }

    /// A new batch: no frames yet.
    pub fn clear(&mut self) {
        self.seq.clear();
        self.state.clear();
        self.next = 0;
        self.open = 0;
        self.acked = 0;
        self.refused = 0;
    }

    /// The batch's next message carries `seq`.
    pub fn push(&mut self, seq: u64) {
        self.seq.push(seq);
        self.state.push(FrameState::New);
        self.open += 1;
    }

    pub fn len(&self) -> usize {
        self.seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    /// The batch goes (again) on a connection: from its first frame not answered.
    pub fn begin_attempt(&mut self) {
        self.next = 0;
    }

    /// The next frame to write on this attempt, and whether it was written before (a
    /// resend after a broken connection).
    pub fn next_to_send(&mut self) -> Option<(u32, bool)> {
        while self.next < self.state.len() {
            let k = self.next;
            self.next += 1;
            match self.state.get_mut(k) {
                Some(st @ FrameState::New) => {
                    *st = FrameState::Sent;
                    return Some((k as u32, false));
                }
                Some(FrameState::Sent) => return Some((k as u32, true)),
                Some(FrameState::Acked | FrameState::Refused) | None => {}
            }
        }
        None
    }

    /// Frame `k` was answered (`ok`: 200): its seq, or `None` if it was already answered.
    pub fn settle(&mut self, k: u32, ok: bool) -> Option<u64> {
        let k = k as usize;
        let st = self.state.get_mut(k).filter(|s| **s == FrameState::Sent)?;
        *st = if ok {
            self.acked += 1;
            FrameState::Acked
        } else {
            self.refused += 1;
            FrameState::Refused
        };
        self.open -= 1;
        self.seq.get(k).copied()
    }

    /// The seqs from the first frame not answered to the last, as (first, count): what the
    /// batch still stands for if it is given up.
    pub fn unsettled_span(&self) -> (u64, u64) {
        let open = |s: &FrameState| matches!(s, FrameState::New | FrameState::Sent);
        match (
            self.state
                .iter()
                .position(open)
                .and_then(|a| self.seq.get(a)),
            self.state
                .iter()
                .rposition(open)
                .and_then(|b| self.seq.get(b)),
        ) {
            (Some(&a), Some(&b)) => (a, b + 1 - a),
            _ => (self.seq.last().map_or(0, |s| s + 1), 0),
        }
    }

    pub fn state(&self, k: usize) -> Option<FrameState> {
        self.state.get(k).copied()
    }
}

/// Message `k` of a batch body whose messages end at `ends` (cumulative offsets).
#[inline]
#[allow(
    clippy::indexing_slicing,
    reason = "per-frame hot path; ends holds the batch's cumulative message ends into body, and k \
              < ends.len()"
)]
pub fn message<'a>(body: &'a [u8], ends: &[u32], k: usize) -> &'a [u8] {
    let start = if k == 0 { 0 } else { ends[k - 1] as usize };
    &body[start..ends[k] as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(txnr: u32, cmd: &str, data: &str) -> Vec<u8> {
        let mut v = Vec::new();
        write_frame(&mut v, txnr, cmd.as_bytes(), data.as_bytes());
        v
    }

    #[test]
    fn frames_are_written_as_the_spec_draws_them() {
        assert_eq!(frame(1, "syslog", "<13>1 - x"), b"1 syslog 9 <13>1 - x\n");
        assert_eq!(frame(999_999_999, "close", ""), b"999999999 close 0\n");
        let open = frame(1, "open", std::str::from_utf8(OPEN_OFFERS).unwrap());
        let text = String::from_utf8(open).unwrap();
        assert!(
            text.starts_with(&format!("1 open {} relp_version=0\n", OPEN_OFFERS.len())),
            "{text}"
        );
        assert!(text.ends_with("\ncommands=syslog\n"), "{text}");
        // What a frame adds to its message stays within FRAME_OVERHEAD.
        let m = "x".repeat(1000);
        let f = frame(MAX_TXNR, "syslog", &m);
        assert!(f.len() - m.len() <= FRAME_OVERHEAD, "{}", f.len() - m.len());
    }

    #[test]
    fn txnr_wraps_from_999_999_999_to_1() {
        assert_eq!(next_txnr(1), 2);
        assert_eq!(next_txnr(999_999_998), 999_999_999);
        assert_eq!(next_txnr(999_999_999), 1);
    }

    /// Feeds `bytes` in pieces of `step`; the frames read and the error, if any.
    fn read_in_steps(bytes: &[u8], step: usize) -> (Vec<(Incoming, Vec<u8>)>, Option<RelpError>) {
        let mut r = Reader::new();
        let mut got = Vec::new();
        for piece in bytes.chunks(step) {
            let mut rest = piece;
            while !rest.is_empty() {
                match r.feed(rest) {
                    Ok((used, f)) => {
                        rest = &rest[used..];
                        if let Some(f) = f {
                            got.push((f, r.data().to_vec()));
                        }
                    }
                    Err(e) => return (got, Some(e)),
                }
            }
        }
        (got, None)
    }

    #[test]
    fn the_reader_takes_answers_in_any_split() {
        let mut wire = Vec::new();
        wire.extend(frame(1, "rsp", "200 OK\nrelp_version=0\ncommands=syslog"));
        wire.extend(frame(2, "rsp", "200 OK"));
        wire.extend(frame(3, "rsp", "500 command disabled"));
        wire.extend(b"4 rsp 0\n");
        wire.extend(b"5 rsp 0 \n");
        wire.extend(b"0 serverclose 0\n");
        for step in 1..=wire.len() {
            let (got, err) = read_in_steps(&wire, step);
            assert_eq!(err, None, "step {step}");
            let frames: Vec<Incoming> = got.iter().map(|(f, _)| *f).collect();
            assert_eq!(
                frames,
                [
                    Incoming::Rsp { txnr: 1, code: 200 },
                    Incoming::Rsp { txnr: 2, code: 200 },
                    Incoming::Rsp { txnr: 3, code: 500 },
                    Incoming::Rsp { txnr: 4, code: 0 },
                    Incoming::Rsp { txnr: 5, code: 0 },
                    Incoming::ServerClose,
                ],
                "step {step}"
            );
            assert_eq!(got[0].1, b"200 OK\nrelp_version=0\ncommands=syslog");
            assert_eq!(got[2].1, b"500 command disabled");
            assert!(got[3].1.is_empty());
        }
    }

    #[test]
    fn the_reader_refuses_what_is_not_relp() {
        let cases: &[(&[u8], &str)] = &[
            (b"x rsp 6 200 OK\n", "txnr is not a number"),
            (b"1234567890 rsp 6 200 OK\n", "txnr longer than 9 digits"),
            (b" rsp 6 200 OK\n", "txnr is not a number"),
            (b"1 r5p 6 200 OK\n", "command is not 1 to 32 letters"),
            (b"1  6 200 OK\n", "command is not 1 to 32 letters"),
            (b"1 rsp x 200 OK\n", "datalen is not a number"),
            (b"1 rsp 6x200 OK\n", "no space after datalen"),
            (
                b"1 rsp 6 200 OKX",
                "frame does not end in LF after its data",
            ),
            (b"1 rsp 0 x\n", "data after a zero datalen"),
            (b"1 rsp 999999 x", "data longer than 128 KiB"),
            (b"1 rsp 2 OK\n", "rsp data does not start with a status"),
        ];
        for &(bad, why) in cases {
            for step in [1, 3, bad.len()] {
                let (_, err) = read_in_steps(bad, step);
                assert_eq!(
                    err,
                    Some(RelpError::Framing(why)),
                    "{:?}",
                    String::from_utf8_lossy(bad)
                );
            }
        }
        let (_, err) = read_in_steps(b"1 syslog 1 x\n", 4);
        assert_eq!(err, Some(RelpError::UnexpectedCommand));
        let (_, err) = read_in_steps(b"3 serverclose 0\n", 4);
        assert_eq!(err, Some(RelpError::UnexpectedCommand));
    }

    #[test]
    fn long_data_is_skipped_past_what_is_kept() {
        let text = format!("200 {}", "x".repeat(10_000));
        let wire = frame(9, "rsp", &text);
        for step in [1, 7, 4096, wire.len()] {
            let (got, err) = read_in_steps(&wire, step);
            assert_eq!(err, None);
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].0, Incoming::Rsp { txnr: 9, code: 200 });
            assert_eq!(got[0].1.len(), KEPT_DATA);
        }
    }

    fn opened(window: usize) -> Session {
        let t = Instant::now();
        let mut s = Session::new(window, 10, 4096);
        s.open(t);
        assert_eq!(s.state, State::Opening(t));
        assert!(s.pending().starts_with(b"1 open "));
        let n = s.pending().len();
        s.wrote(n);
        s.feed(&frame(
            1,
            "rsp",
            "200 OK\nrelp_version=0\nrelp_software=librelp,1.11.0\ncommands=syslog",
        ))
        .unwrap();
        assert_eq!(s.answers(), [Answer::Opened]);
        s.clear_answers();
        assert!(s.is_open());
        s
    }

    #[test]
    fn a_session_opens_numbers_its_frames_and_keeps_to_its_window() {
        let mut s = opened(2);
        assert!(s.has_room());
        s.push_syslog(0, b"a");
        s.push_syslog(1, b"bb");
        assert!(!s.has_room(), "a window of 2");
        assert_eq!(s.pending(), b"2 syslog 1 a\n3 syslog 2 bb\n");
        s.wrote(5);
        assert_eq!(s.pending(), b"log 1 a\n3 syslog 2 bb\n");
        s.wrote(100);
        assert!(s.pending().is_empty());
        // Answers in pieces; the window opens as they come.
        s.feed(b"2 rsp 6 20").unwrap();
        assert!(s.answers().is_empty());
        s.feed(b"0 OK\n3 rsp 20 500 command disabled\n").unwrap();
        assert_eq!(
            s.answers(),
            [
                Answer::Frame {
                    frame: 0,
                    code: 200
                },
                Answer::Frame {
                    frame: 1,
                    code: 500
                }
            ]
        );
        s.clear_answers();
        assert!(s.has_room());
        assert_eq!(s.in_flight(), 0);
        // An answer to nothing outstanding ends the connection.
        assert_eq!(s.feed(b"3 rsp 6 200 OK\n"), Err(RelpError::UnknownTxnr(3)));
        s.close();
        assert_eq!(s.pending(), b"4 close 0\n");
        s.feed(b"4 rsp 0\n").unwrap();
        assert_eq!(s.answers(), [Answer::Closed]);
        assert_eq!(s.state, State::Idle);
    }

    #[test]
    fn the_buffer_is_compacted_and_never_grows() {
        let msg = vec![b'm'; 30_000];
        let mut s = Session::new(4, 4, 4 * msg.len());
        s.open(Instant::now());
        let n = s.pending().len();
        s.wrote(n);
        s.feed(&frame(1, "rsp", "200 OK\nrelp_version=0\ncommands=syslog"))
            .unwrap();
        s.clear_answers();
        let cap = s.out.capacity();
        let mut next = 2u32;
        for round in 0..50u32 {
            while s.has_room() {
                s.push_syslog(round, &msg);
            }
            // All but the last 10 bytes go out; everything in flight is answered.
            let n = s.pending().len() - 10;
            s.wrote(n);
            assert_eq!(s.pending().len(), 10);
            assert_eq!(s.pending(), b"mmmmmmmmm\n");
            for _ in 0..4 {
                s.feed(format!("{next} rsp 6 200 OK\n").as_bytes()).unwrap();
                next += 1;
            }
            assert_eq!(s.answers().len(), 4);
            s.clear_answers();
        }
        assert_eq!(s.out.capacity(), cap, "no growth");
        assert!(s.written < COMPACT_AT);
    }

    #[test]
    fn a_new_connection_numbers_from_1_again() {
        let mut s = opened(8);
        s.push_syslog(0, b"a");
        s.reset();
        assert_eq!(s.in_flight(), 0);
        assert!(s.pending().is_empty());
        s.open(Instant::now());
        assert!(s.pending().starts_with(b"1 open "));
    }

    #[test]
    fn an_open_refused_or_without_syslog_is_said() {
        let mut s = Session::new(4, 4, 1024);
        s.open(Instant::now());
        s.feed(&frame(
            1,
            "rsp",
            "500 required command not supported by client",
        ))
        .unwrap();
        assert_eq!(s.answers(), [Answer::OpenRefused(500)]);
        assert_eq!(s.refusal, "500 required command not supported by client");
        for (offers, why) in [
            ("200 OK\ncommands=syslog", "has no relp_version offer"),
            (
                "200 OK\nrelp_version=1\ncommands=syslog",
                "names a relp_version other than 0",
            ),
            (
                "200 OK\nrelp_version=0\ncommands=eventlog",
                "does not offer the syslog command",
            ),
            (
                "200 OK\nrelp_version=0\ncommands=",
                "does not offer the syslog command",
            ),
        ] {
            let mut s = Session::new(4, 4, 1024);
            s.open(Instant::now());
            assert_eq!(
                s.feed(&frame(1, "rsp", offers)),
                Err(RelpError::BadOffers(why))
            );
            assert!(!s.is_open());
        }
        let mut s = Session::new(4, 4, 1024);
        s.open(Instant::now());
        s.feed(&frame(
            1,
            "rsp",
            "200 OK\nrelp_version=0\ncommands=eventlog,syslog",
        ))
        .unwrap();
        assert!(s.is_open());
    }

    #[test]
    fn out_of_order_answers_find_their_frame() {
        let mut s = opened(8);
        for k in 0..3 {
            s.push_syslog(k, b"m");
        }
        s.feed(b"3 rsp 6 200 OK\n2 rsp 6 200 OK\n4 rsp 6 200 OK\n")
            .unwrap();
        assert_eq!(
            s.answers(),
            [
                Answer::Frame {
                    frame: 1,
                    code: 200
                },
                Answer::Frame {
                    frame: 0,
                    code: 200
                },
                Answer::Frame {
                    frame: 2,
                    code: 200
                }
            ]
        );
    }

    #[test]
    fn frames_resend_only_what_was_not_answered() {
        let mut f = Frames::new(8);
        for seq in [10, 11, 13, 14] {
            // seq 12 was left out (oversize).
            f.push(seq);
        }
        f.begin_attempt();
        assert_eq!(f.next_to_send(), Some((0, false)));
        assert_eq!(f.next_to_send(), Some((1, false)));
        assert_eq!(f.settle(0, true), Some(10));
        assert_eq!(f.settle(0, true), None, "answered once");
        assert_eq!(f.settle(1, false), Some(11));
        assert_eq!(f.unsettled_span(), (13, 2));
        assert_eq!(f.next_to_send(), Some((2, false)));
        // The connection breaks with frame 2 in flight and frame 3 never written.
        f.begin_attempt();
        assert_eq!(f.next_to_send(), Some((2, true)), "a resend");
        assert_eq!(f.next_to_send(), Some((3, false)));
        assert_eq!(f.next_to_send(), None);
        assert_eq!(f.settle(3, true), Some(14));
        assert_eq!(f.unsettled_span(), (13, 1));
        assert_eq!(f.settle(2, true), Some(13));
        assert_eq!((f.open, f.acked, f.refused), (0, 3, 1));
        assert_eq!(f.unsettled_span().1, 0);
    }

    #[test]
    fn messages_are_cut_at_their_ends() {
        let body = b"aaabbc";
        let ends = [3, 5, 6];
        assert_eq!(message(body, &ends, 0), b"aaa");
        assert_eq!(message(body, &ends, 1), b"bb");
        assert_eq!(message(body, &ends, 2), b"c");
    }
}
