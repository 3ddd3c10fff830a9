//! One RELP connection of the sink (`--relp`): the server side of rsyslog's RELP, written
//! apart from the client's (`adapter::relp`) so a misreading of the spec cannot hide on both
//! ends. Frames are `TXNR SP COMMAND SP DATALEN [SP DATA] LF`; each connection's txnrs must run
//! 1, 2, 3 … (as librelp's server demands). `open` is answered `200 OK` with our offers
//! (`relp_version=0`, `commands=syslog`), each `syslog` frame is counted as one message
//! (`messages_relp`), its tag recorded, and answered `200 OK` *after* it is recorded (so an
//! acknowledged message is in `stats()`), `close` is answered with an empty `rsp` and the
//! connection closed once that is written. A malformed frame, a txnr out of sequence, a
//! message before the open or over 1 MiB counts a framing error and closes the connection.
//!
//! The read buffer starts at 64 KiB and grows only to hold one frame larger than itself; the
//! answers wait in a write buffer reused for the life of the connection. After
//! `READS_PER_TURN` reads the connection yields, as syslog streams do.

use std::io::ErrorKind;

use super::record::Recorder;
use super::stats::{Ledger, SyslogStats};
use super::stream::Step;
use super::syslog::MAX_MSG;
use super::tls::Io;

const INITIAL_READ: usize = 64 * 1024;
const MIN_READ: usize = 4096;
/// The longest header: 9-digit txnr, a 32-letter command, a 9-digit datalen, two spaces.
const MAX_HEADER: usize = 9 + 1 + 32 + 1 + 9 + 1;
const MAX_FRAME: usize = MAX_HEADER + MAX_MSG + 1;
const READS_PER_TURN: usize = 32;
/// Stop reading while this much of the answers waits for the client.
const MAX_PENDING_OUT: usize = 256 * 1024;

const OFFERS: &str = "200 OK\nrelp_version=0\nrelp_software=ingestbench-sink\ncommands=syslog";

pub(crate) struct RelpConn {
    pub io: Io,
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    /// The txnr the next frame must carry.
    expect: u64,
    open: bool,
    /// The close is answered: close once the answer is written.
    closing: bool,
}

/// A frame read from the buffer.
enum Frame<'a> {
    /// Not all of it is here yet.
    Partial,
    Bad,
    Whole {
        txnr: u64,
        command: &'a [u8],
        data: &'a [u8],
        len: usize,
    },
}

fn digits(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, c| n * 10 + u64::from(c - b'0')))
}

/// `b` cut at its first `c`: what is before it and what is after it.
fn cut(b: &[u8], c: u8) -> Option<(&[u8], &[u8])> {
    let at = b.iter().position(|&x| x == c)?;
    let (before, from) = b.split_at_checked(at)?;
    Some((before, from.get(1..).unwrap_or_default()))
}

/// The frame at the start of `b`.
fn frame(b: &[u8]) -> Frame<'_> {
    let head = b.get(..MAX_HEADER).unwrap_or(b);
    let Some((txnr_text, rest)) = cut(head, b' ') else {
        return if head.len() == MAX_HEADER || head.iter().any(|c| !c.is_ascii_digit()) {
            Frame::Bad
        } else {
            Frame::Partial
        };
    };
    let Some(txnr) = digits(txnr_text) else {
        return Frame::Bad;
    };
    let Some((command, after)) = cut(rest, b' ') else {
        return if rest.len() > 32 || rest.iter().any(|c| !c.is_ascii_alphabetic()) {
            Frame::Bad
        } else {
            Frame::Partial
        };
    };
    if command.is_empty() || command.len() > 32 || !command.iter().all(u8::is_ascii_alphabetic) {
        return Frame::Bad;
    }
    let Some(end) = after.iter().position(|&c| c == b' ' || c == b'\n') else {
        return if after.len() > 9 || after.iter().any(|c| !c.is_ascii_digit()) {
            Frame::Bad
        } else {
            Frame::Partial
        };
    };
    let Some((len_text, sep)) = after.split_at_checked(end) else {
        return Frame::Bad;
    };
    let Some(n) = digits(len_text) else {
        return Frame::Bad;
    };
    let n = n as usize;
    if n > MAX_MSG {
        return Frame::Bad;
    }
    let data_at = txnr_text.len() + 1 + command.len() + 1 + end + 1;
    if sep.first() == Some(&b'\n') {
        return if n == 0 {
            Frame::Whole {
                txnr,
                command,
                data: &[],
                len: data_at,
            }
        } else {
            Frame::Bad
        };
    }
    // `n` bytes of data after the space, then the LF (none of each when `n` is 0).
    let total = data_at + n + 1;
    if b.len() < total {
        return Frame::Partial;
    }
    if b.get(total - 1) != Some(&b'\n') {
        return Frame::Bad;
    }
    Frame::Whole {
        txnr,
        command,
        data: b.get(data_at..data_at + n).unwrap_or_default(),
        len: total,
    }
}

fn answer(out: &mut Vec<u8>, txnr: u64, text: &str) {
    use std::io::Write;
    if text.is_empty() {
        let _ = writeln!(out, "{txnr} rsp 0");
    } else {
        let _ = writeln!(out, "{txnr} rsp {} {text}", text.len());
    }
}

impl RelpConn {
    pub fn new(io: Io) -> Self {
        RelpConn {
            io,
            rbuf: vec![0; INITIAL_READ],
            start: 0,
            end: 0,
            wbuf: Vec::with_capacity(16 * 1024),
            wpos: 0,
            expect: 1,
            open: false,
            closing: false,
        }
    }

    /// Writes the answers waiting, reads and answers what arrived.
    pub fn drive(&mut self, rec: &mut Recorder, ledger: &Ledger, t: &mut SyslogStats) -> Step {
        if !self.write_out() {
            return Step::Close;
        }
        if self.closing {
            return if self.wpos == self.wbuf.len() && !self.io.wants_write() {
                Step::Close
            } else {
                Step::Keep
            };
        }
        for _ in 0..READS_PER_TURN {
            if self.wbuf.len() - self.wpos > MAX_PENDING_OUT {
                // The client does not read its answers: wait for it to (writable).
                return Step::Keep;
            }
            self.make_room();
            match self
                .io
                .read(self.rbuf.get_mut(self.end..).unwrap_or_default())
            {
                Ok(0) => return Step::Close,
                Ok(n) => {
                    self.end += n;
                    t.bytes += n as u64;
                    let ok = self.frames(rec, t);
                    rec.record(ledger, &self.rbuf);
                    if !self.write_out() || !ok {
                        return Step::Close;
                    }
                    if self.closing {
                        return self.drive(rec, ledger, t);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Step::Keep,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Step::Close,
            }
        }
        Step::Again
    }

    /// Answers every whole frame buffered; false when the connection must close.
    fn frames(&mut self, rec: &mut Recorder, t: &mut SyslogStats) -> bool {
        while self.start < self.end && !self.closing {
            let base = &self.rbuf[..];
            let whole = base.get(self.start..self.end).unwrap_or_default();
            let (txnr, command, data, len) = match frame(whole) {
                Frame::Partial => return true,
                Frame::Bad => {
                    t.framing_errors += 1;
                    return false;
                }
                Frame::Whole {
                    txnr,
                    command,
                    data,
                    len,
                } => (txnr, command, data, len),
            };
            if txnr != self.expect {
                t.framing_errors += 1;
                return false;
            }
            self.expect = if txnr >= 999_999_999 { 1 } else { txnr + 1 };
            match command {
                b"open" if !self.open => {
                    self.open = true;
                    answer(&mut self.wbuf, txnr, OFFERS);
                }
                b"syslog" if self.open => {
                    t.messages_relp += 1;
                    rec.queue_first(base, data);
                    answer(&mut self.wbuf, txnr, "200 OK");
                }
                b"close" => {
                    answer(&mut self.wbuf, txnr, "");
                    self.closing = true;
                }
                _ => {
                    t.framing_errors += 1;
                    return false;
                }
            }
            self.start += len;
        }
        true
    }

    /// Writes what waits; false on a broken connection.
    fn write_out(&mut self) -> bool {
        while self.wpos < self.wbuf.len() {
            match self
                .io
                .write(self.wbuf.get(self.wpos..).unwrap_or_default())
            {
                Ok(0) => return false,
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        }
        !matches!(self.io.flush(), Err(e) if e.kind() != ErrorKind::WouldBlock)
    }

    /// Leaves at least `MIN_READ` bytes to read into (an incomplete frame moved to the
    /// front; the buffer grown only for a frame larger than itself).
    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(b: &[u8]) -> (u64, Vec<u8>, Vec<u8>, usize) {
        match frame(b) {
            Frame::Whole {
                txnr,
                command,
                data,
                len,
            } => (txnr, command.to_vec(), data.to_vec(), len),
            Frame::Partial => panic!("partial: {:?}", String::from_utf8_lossy(b)),
            Frame::Bad => panic!("bad: {:?}", String::from_utf8_lossy(b)),
        }
    }

    #[test]
    fn frames_are_read_whole_partial_or_bad() {
        let f = b"12 syslog 5 hello\n3 close 0\n";
        assert_eq!(whole(f), (12, b"syslog".to_vec(), b"hello".to_vec(), 18));
        assert_eq!(whole(&f[18..]), (3, b"close".to_vec(), Vec::new(), 10));
        for cut in 0..18 {
            assert!(matches!(frame(&f[..cut]), Frame::Partial), "cut {cut}");
        }
        for bad in [
            &b"x syslog 1 a\n"[..],
            b"1 sys1og 1 a\n",
            b"1 syslog x a\n",
            b"1 syslog 1 ab\n",
            b"1 syslog 2\n",
            b"1234567890 syslog 1 a\n",
            b"1 syslog 9999999 a",
        ] {
            assert!(
                matches!(frame(bad), Frame::Bad),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
