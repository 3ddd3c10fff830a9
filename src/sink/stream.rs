//! One syslog stream connection (TCP, or TLS per RFC 5425): read into a buffer, cut it into
//! frames (`syslog::Deframer`), count each message and queue its tag, then record the tags of
//! the whole read in the ledger at once. Nothing is ever written back (syslog has no
//! responses) except TLS handshake records.
//!
//! The read buffer starts at 64 KiB, is reused for the life of the connection, grows only to
//! hold one frame larger than itself (at most `syslog::MAX_FRAME` plus a read), and shrinks
//! back when idle. After `READS_PER_TURN` reads the connection yields (`Step::Again`), so one
//! fast sender cannot starve the other connections of its thread; the worker comes back to
//! it before it next waits.

use std::io::ErrorKind;

use super::record::Recorder;
use super::stats::{Ledger, SyslogStats};
use super::syslog::{Deframer, Item, MAX_FRAME};
use super::tls::Io;

const INITIAL_READ: usize = 64 * 1024;
/// Room always left for a read.
const MIN_READ: usize = 4096;
/// An idle connection's buffer is shrunk back when larger than this.
const KEEP_READ: usize = 256 * 1024;
/// Reads before yielding to the other connections of the thread.
const READS_PER_TURN: usize = 32;

pub(crate) struct StreamConn {
    pub io: Io,
    /// Messages count as `messages_tls` rather than `messages_tcp`.
    tls: bool,
    /// `rbuf[start..end]`: read and not yet framed (the start of an incomplete frame).
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    deframer: Deframer,
}

/// What the worker does with the connection next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Everything available was read: wait for readiness.
    Keep,
    /// More may be waiting: come back before polling again.
    Again,
    Close,
}

impl StreamConn {
    pub fn new(io: Io, tls: bool) -> Self {
        StreamConn {
            io,
            tls,
            rbuf: vec![0; INITIAL_READ],
            start: 0,
            end: 0,
            deframer: Deframer::default(),
        }
    }

    /// Reads and counts what has arrived, up to `READS_PER_TURN` reads.
    pub fn drive(&mut self, rec: &mut Recorder, ledger: &Ledger, t: &mut SyslogStats) -> Step {
        match self.io.flush() {
            Err(e) if e.kind() != ErrorKind::WouldBlock => return Step::Close,
            _ => {}
        }
        for _ in 0..READS_PER_TURN {
            self.make_room();
            match self
                .io
                .read(self.rbuf.get_mut(self.end..).unwrap_or_default())
            {
                Ok(0) => {
                    let base = &self.rbuf[..];
                    let mut on = |it: Item<'_>| count(it, self.tls, base, rec, t);
                    let rest = self.rbuf.get(self.start..self.end).unwrap_or_default();
                    self.deframer.finish(rest, &mut on);
                    rec.record(ledger, &self.rbuf);
                    self.start = self.end;
                    return Step::Close;
                }
                Ok(n) => {
                    self.end += n;
                    t.bytes += n as u64;
                    let base = &self.rbuf[..];
                    let mut on = |it: Item<'_>| count(it, self.tls, base, rec, t);
                    let fresh = self.rbuf.get(self.start..self.end).unwrap_or_default();
                    let used = self.deframer.feed(fresh, &mut on);
                    self.start += used;
                    rec.record(ledger, &self.rbuf);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Step::Keep,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Step::Close,
            }
        }
        Step::Again
    }

    /// Leaves at least `MIN_READ` bytes to read into: moves an incomplete frame to the
    /// front, grows the buffer when that frame fills it. Never past `MAX_FRAME + MIN_READ`,
    /// which is always enough: the deframer never leaves more than `MAX_FRAME` unconsumed.
    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.rbuf.len() > KEEP_READ {
                self.rbuf = vec![0; INITIAL_READ];
            }
        }
        if self.rbuf.len() - self.end >= MIN_READ {
            return;
        }
        self.rbuf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.rbuf.len() - self.end < MIN_READ {
            let grown = (self.rbuf.len() * 2).min(MAX_FRAME + MIN_READ);
            let grown = grown.max(self.end + MIN_READ);
            self.rbuf.resize(grown, 0);
        }
    }
}

#[inline]
fn count(it: Item<'_>, tls: bool, base: &[u8], rec: &mut Recorder, t: &mut SyslogStats) {
    let msg = match it {
        Item::Octet(m) => {
            t.octet_counted_frames += 1;
            m
        }
        Item::Lf(m) => {
            t.lf_frames += 1;
            m
        }
        Item::Error(_) => {
            t.framing_errors += 1;
            return;
        }
    };
    if tls {
        t.messages_tls += 1;
    } else {
        t.messages_tcp += 1;
    }
    rec.queue_first(base, msg);
}
