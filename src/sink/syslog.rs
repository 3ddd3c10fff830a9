//! Syslog framing on a byte stream (TCP and TLS), as a pure state machine over buffers: both
//! framings of RFC 6587, told apart by the first byte of each frame as receivers do.
//!
//! - **Octet counting** (RFC 6587 3.4.1, RFC 5425): `MSG-LEN SP SYSLOG-MSG`, where `MSG-LEN`
//!   is a decimal without a leading zero. A frame starting with `1`..`9` is read this way.
//! - **Non-transparent framing** (RFC 6587 3.4.2): `SYSLOG-MSG LF`. A frame starting with `<`
//!   (a PRI) is read up to the next LF; a CR before the LF is dropped.
//!
//! LF, CR and NUL between frames are skipped silently (some senders put an LF after an
//! octet-counted frame). Anything else is a framing error, and so is a length that is not a
//! number (skip to the next LF, then go on) or a message over `MAX_MSG` (an oversize
//! octet-counted frame is skipped by its length, exactly; an LF frame with no LF within
//! `MAX_MSG` is skipped to the next LF). Nothing here allocates or panics, and every function
//! gives the same answer whatever way the stream was cut into reads.

/// Largest message accepted (1 MiB); larger frames are framing errors and skipped.
pub const MAX_MSG: usize = 1 << 20;
/// Most digits read for a MSG-LEN (more is a bad length, not a number).
const MAX_DIGITS: usize = 10;
/// The most bytes a frame may need in the buffer at once: the header and the message.
pub const MAX_FRAME: usize = MAX_MSG + MAX_DIGITS + 1;

/// What `Deframer::feed` finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// An octet-counted message (the bytes after `MSG-LEN SP`).
    Octet(&'a [u8]),
    /// An LF-framed message (without the LF, or a CR before it).
    Lf(&'a [u8]),
    Error(FrameError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// A MSG-LEN that is not `NONZERO-DIGIT *DIGIT SP` within `MAX_DIGITS` digits.
    BadLength,
    /// A message over `MAX_MSG`.
    Oversize,
    /// A frame starting with neither a digit nor `<`.
    Garbage,
    /// The stream ended inside an octet-counted frame.
    Truncated,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the start of a frame (or between frames).
    Frame,
    /// Skipping an oversize octet-counted message: this many bytes still to skip.
    Skip(u64),
    /// Skipping to the next LF after a framing error.
    SkipLine,
}

/// One connection's framing state. `feed` is called with everything buffered and not yet
/// consumed; it reports the complete frames and says how many bytes it consumed (the rest is
/// an incomplete frame, to be fed again with more bytes after it).
#[derive(Clone, Copy, Debug)]
pub struct Deframer {
    state: State,
}

impl Default for Deframer {
    fn default() -> Self {
        Deframer {
            state: State::Frame,
        }
    }
}

impl Deframer {
    /// Reports every complete frame of `buf` to `on`, in order; returns the bytes consumed.
    pub fn feed<'a>(&mut self, buf: &'a [u8], on: &mut impl FnMut(Item<'a>)) -> usize {
        let mut p = 0;
        while p < buf.len() {
            let at = buf.get(p..).unwrap_or_default();
            match self.state {
                State::Skip(left) => {
                    let n = (buf.len() - p).min(usize::try_from(left).unwrap_or(usize::MAX));
                    p += n;
                    let left = left - n as u64;
                    if left == 0 {
                        self.state = State::Frame;
                    } else {
                        self.state = State::Skip(left);
                    }
                }
                State::SkipLine => match memchr::memchr(b'\n', at) {
                    Some(i) => {
                        p += i + 1;
                        self.state = State::Frame;
                    }
                    None => p = buf.len(),
                },
                State::Frame => match at.first() {
                    Some(b'\n' | b'\r' | 0) => p += 1,
                    Some(b'1'..=b'9') => match octet_header(at) {
                        Header::Partial => return p,
                        Header::Bad => {
                            on(Item::Error(FrameError::BadLength));
                            self.state = State::SkipLine;
                        }
                        Header::Len { hdr, len } if len > MAX_MSG as u64 => {
                            on(Item::Error(FrameError::Oversize));
                            p += hdr;
                            self.state = State::Skip(len);
                        }
                        Header::Len { hdr, len } => {
                            let Some(msg) = at.get(hdr..hdr + len as usize) else {
                                return p;
                            };
                            on(Item::Octet(msg));
                            p += hdr + msg.len();
                        }
                    },
                    // Looks for the LF within MAX_MSG + 1 bytes only, so that a frame is
                    // judged the same whatever the reads were.
                    Some(b'<') => {
                        match memchr::memchr(b'\n', at.get(..MAX_MSG + 1).unwrap_or(at)) {
                            Some(i) => {
                                let msg = at.get(..i).unwrap_or_default();
                                on(Item::Lf(msg.strip_suffix(b"\r").unwrap_or(msg)));
                                p += i + 1;
                            }
                            None if at.len() > MAX_MSG => {
                                on(Item::Error(FrameError::Oversize));
                                self.state = State::SkipLine;
                            }
                            None => return p,
                        }
                    }
                    _ => {
                        on(Item::Error(FrameError::Garbage));
                        self.state = State::SkipLine;
                    }
                },
            }
        }
        p
    }

    /// The stream ended: `rest` is what `feed` left unconsumed. An LF frame missing only its
    /// LF is a message (many senders close without one); a partial octet-counted frame is
    /// an error. Returns to the initial state.
    pub fn finish<'a>(&mut self, rest: &'a [u8], on: &mut impl FnMut(Item<'a>)) {
        let state = std::mem::take(self).state;
        if state != State::Frame {
            return;
        }
        let rest = trim_separators(rest);
        match rest.first() {
            None => {}
            Some(b'<') => on(Item::Lf(rest.strip_suffix(b"\r").unwrap_or(rest))),
            Some(_) => on(Item::Error(FrameError::Truncated)),
        }
    }
}

fn trim_separators(mut b: &[u8]) -> &[u8] {
    while let [b'\n' | b'\r' | 0, rest @ ..] = b {
        b = rest;
    }
    b
}

enum Header {
    Partial,
    Bad,
    /// `hdr` bytes of `MSG-LEN SP`, then `len` bytes of message.
    Len {
        hdr: usize,
        len: u64,
    },
}

/// Reads `MSG-LEN SP` at the start of `b` (which starts with a non-zero digit).
fn octet_header(b: &[u8]) -> Header {
    let mut len: u64 = 0;
    for (i, &ch) in b.iter().enumerate() {
        match ch {
            b'0'..=b'9' if i < MAX_DIGITS => len = len * 10 + u64::from(ch - b'0'),
            b' ' => return Header::Len { hdr: i + 1, len },
            _ => return Header::Bad,
        }
    }
    Header::Partial
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Eq)]
    enum Got {
        Octet(Vec<u8>),
        Lf(Vec<u8>),
        Err(FrameError),
    }

    /// Feeds `stream` cut at `cuts` (offsets), as a connection would: the unconsumed rest
    /// is kept and fed again with the next piece; `finish` at the end.
    fn run(stream: &[u8], cuts: &[usize]) -> Vec<Got> {
        let mut d = Deframer::default();
        let mut out = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut at = 0;
        for &c in cuts.iter().chain([stream.len()].iter()) {
            buf.extend_from_slice(&stream[at..c]);
            at = c;
            let mut got = Vec::new();
            let n = d.feed(&buf, &mut |it| got.push(conv(it)));
            out.extend(got);
            buf.drain(..n);
        }
        d.finish(&buf, &mut |it| out.push(conv(it)));
        out
    }

    fn conv(it: Item<'_>) -> Got {
        match it {
            Item::Octet(m) => Got::Octet(m.to_vec()),
            Item::Lf(m) => Got::Lf(m.to_vec()),
            Item::Error(e) => Got::Err(e),
        }
    }

    fn oct(s: &str) -> Got {
        Got::Octet(s.as_bytes().to_vec())
    }

    fn lf(s: &str) -> Got {
        Got::Lf(s.as_bytes().to_vec())
    }

    const M1: &str = "<14>1 2026-01-01T00:00:00Z h app 1 - [ingestbench@32473 run=\"r-1\" agent=\"0\" seq=\"0\"] hello";
    const M2: &str = "<14>1 - - - - - - line with\nnewline";

    fn octet_stream() -> Vec<u8> {
        format!("{} {M1}{} {M2}", M1.len(), M2.len()).into_bytes()
    }

    #[test]
    fn octet_counting_in_every_split() {
        let s = octet_stream();
        let want = vec![oct(M1), oct(M2)];
        assert_eq!(run(&s, &[]), want);
        for cut in 0..s.len() {
            assert_eq!(run(&s, &[cut]), want, "cut {cut}");
        }
        let every: Vec<usize> = (1..s.len()).collect();
        assert_eq!(run(&s, &every), want);
    }

    #[test]
    fn lf_framing_in_every_split() {
        let s = b"<13>one\n<13>two\r\n\n<13>three\n";
        let want = vec![lf("<13>one"), lf("<13>two"), lf("<13>three")];
        for cut in 0..s.len() {
            assert_eq!(run(s, &[cut]), want, "cut {cut}");
        }
        let every: Vec<usize> = (1..s.len()).collect();
        assert_eq!(run(s, &every), want);
    }

    #[test]
    fn framings_mix_per_frame_and_separators_are_skipped() {
        let s = format!("{} {M1}\n<13>lf\n\0{} {M1}\r\n", M1.len(), M1.len());
        assert_eq!(run(s.as_bytes(), &[]), vec![oct(M1), lf("<13>lf"), oct(M1)]);
    }

    #[test]
    fn last_lf_frame_without_lf_counts_at_eof() {
        assert_eq!(run(b"<13>a\n<13>b", &[3]), vec![lf("<13>a"), lf("<13>b")]);
        assert_eq!(run(b"10 <13>a", &[]), vec![Got::Err(FrameError::Truncated)]);
        assert_eq!(run(b"\n\n", &[1]), vec![]);
    }

    #[test]
    fn bad_lengths_skip_to_the_next_line() {
        assert_eq!(
            run(b"12x <13>junk\n<13>ok\n", &[]),
            vec![Got::Err(FrameError::BadLength), lf("<13>ok")]
        );
        assert_eq!(
            run(b"12345678901 <13>x\n<13>ok\n", &[4]),
            vec![Got::Err(FrameError::BadLength), lf("<13>ok")]
        );
        // A leading zero is not a MSG-LEN: garbage.
        assert_eq!(
            run(b"05 <13>x\n<13>ok\n", &[]),
            vec![Got::Err(FrameError::Garbage), lf("<13>ok")]
        );
        assert_eq!(
            run(b"hello\nworld\n<13>ok\n", &[2, 8]),
            vec![
                Got::Err(FrameError::Garbage),
                Got::Err(FrameError::Garbage),
                lf("<13>ok")
            ]
        );
    }

    #[test]
    fn oversize_octet_frame_is_skipped_by_its_length() {
        let big = MAX_MSG + 5;
        let mut s = format!("{big} ").into_bytes();
        s.resize(s.len() + big, b'x');
        s.extend_from_slice(format!("{} {M1}", M1.len()).as_bytes());
        let want = vec![Got::Err(FrameError::Oversize), oct(M1)];
        assert_eq!(run(&s, &[]), want);
        assert_eq!(run(&s, &[3, 100, 70_000, MAX_MSG, MAX_MSG + 9]), want);
    }

    #[test]
    fn oversize_lf_frame_is_skipped_to_its_lf() {
        let mut s = b"<13>".to_vec();
        s.resize(MAX_MSG + 100, b'y');
        s.extend_from_slice(b"\n<13>ok\n");
        let want = vec![Got::Err(FrameError::Oversize), lf("<13>ok")];
        assert_eq!(run(&s, &[]), want);
        assert_eq!(run(&s, &[10, MAX_MSG / 2, MAX_MSG + 1]), want);
    }

    #[test]
    fn a_frame_of_max_msg_fits() {
        let mut s = format!("{MAX_MSG} ").into_bytes();
        s.resize(s.len() + MAX_MSG, b'z');
        let got = run(&s, &[]);
        assert_eq!(got.len(), 1);
        assert!(matches!(&got[0], Got::Octet(m) if m.len() == MAX_MSG));
        assert!(s.len() <= MAX_FRAME);
    }

    #[test]
    fn random_bytes_never_panic_and_consume_sanely() {
        let alphabet = b"<>0123456789 \n\r\0abc";
        for (i, buf) in
            crate::testutil::random_strings(0x9e37_79b9_7f4a_7c15, alphabet, 300, 3000).enumerate()
        {
            let len = buf.len();
            let cut = if len == 0 { 0 } else { (i * 7919) % len };
            let a = run(&buf, &[]);
            let b = run(&buf, &[cut]);
            assert_eq!(a, b, "{:?}", String::from_utf8_lossy(&buf));
        }
    }
}
