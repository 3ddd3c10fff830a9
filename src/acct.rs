//! Accounting tags: finding every `(run, agent, seq)` tag in a buffer of events, whatever
//! format the events are in. One vocabulary shared by the generator (which writes the tags,
//! `generate::write_acct`) and every store that reads them back (the built-in sink now,
//! file and search-API verifiers later). The forms, with R a run id and A, S decimals:
//!
//! - JSON member: `"ingestbench":{"run":"R","agent":A,"seq":S,"sent":T}`
//! - RFC 5424 SD element: `[ingestbench@32473 run="R" agent="A" seq="S" sent="T"]`
//! - CEF extensions: `ingestbenchRun=R ingestbenchAgent=A ingestbenchSeq=S ingestbenchSent=T`
//! - key=value: `ingestbench_run=R ingestbench_agent=A ingestbench_seq=S ingestbench_sent=T`,
//!   separated by spaces, or by commas in CSV lines.
//!
//! `sent` (T: ms since the epoch, when the event's batch was due to be sent) is optional:
//! deterministic runs leave it out, and a tag without it is whole. A scenario stage's events
//! add its ATT&CK ids after it: `"tactic":"TA0006","technique":"T1110"` in JSON,
//! `tactic="…" technique="…"` in the SD element, `ingestbenchTactic=… ingestbenchTechnique=…`
//! in CEF, `ingestbench_tactic=… ingestbench_technique=…` in key=value and CSV.
//!
//! Inside an HEC envelope an event may be a JSON *string*, so every `"` may appear as `\"`
//! (or `\\\"` one level deeper): a quote is read as any run of backslashes then `"`. The scan
//! looks for the word `ingestbench` with `memchr::memmem` and parses only what follows it;
//! nothing else of the buffer is parsed. Anything that does not match a form exactly (a
//! truncated tag, an overflowing number, a run id with odd bytes) is skipped, never guessed.

use memchr::memmem::Finder;
use std::sync::LazyLock;

/// One accounting tag. `run` borrows from the scanned buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag<'a> {
    pub run: &'a [u8],
    pub agent: u32,
    pub seq: u64,
    /// When the event's batch was due to be sent, ms since the epoch (when the tag says).
    pub sent_ms: Option<u64>,
    /// A scenario stage's (tactic, technique), when the event is one.
    pub attack: Option<(&'a [u8], &'a [u8])>,
}

/// Longest run id accepted (generated ones are `r-` and 12 hex digits).
pub const MAX_RUN_LEN: usize = 64;

const WORD: &[u8] = b"ingestbench";

static FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(WORD));

/// Calls `f` for every tag in `bytes`, in order.
pub fn find_tags<'a>(bytes: &'a [u8], mut f: impl FnMut(Tag<'a>)) {
    let finder = &*FINDER;
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(i) = bytes.get(pos..).and_then(|rest| finder.find(rest)) else {
            return;
        };
        let after = pos + i + WORD.len();
        match parse_after_word(bytes, after) {
            Some((tag, end)) => {
                f(tag);
                pos = end;
            }
            None => pos = after,
        }
    }
}

/// All tags of `bytes`, collected (for tests and tools; the sink uses `find_tags`).
pub fn collect_tags(bytes: &[u8]) -> Vec<Tag<'_>> {
    let mut v = Vec::new();
    find_tags(bytes, |t| v.push(t));
    v
}

/// Parses the rest of a tag whose leading `ingestbench` ends at `at`; returns the tag and the
/// offset just past it.
fn parse_after_word(b: &[u8], at: usize) -> Option<(Tag<'_>, usize)> {
    let mut c = Cursor { b, i: at };
    let tag = match *b.get(at)? {
        b'"' | b'\\' => json(&mut c)?,
        b'@' => sd(&mut c)?,
        b'R' => cef(&mut c)?,
        b'_' => kv(&mut c)?,
        _ => return None,
    };
    Some((tag, c.i))
}

/// `"ingestbench":{"run":"R","agent":A,"seq":S}` (the cursor is on the quote closing the key).
fn json<'a>(c: &mut Cursor<'a>) -> Option<Tag<'a>> {
    c.quote()?;
    c.ws();
    c.lit(b":")?;
    c.ws();
    c.lit(b"{")?;
    c.ws();
    c.key(b"run")?;
    c.quote()?;
    let run = c.run_id()?;
    c.quote()?;
    c.ws();
    c.lit(b",")?;
    c.ws();
    c.key(b"agent")?;
    let agent = u32::try_from(c.number()?).ok()?;
    c.ws();
    c.lit(b",")?;
    c.ws();
    c.key(b"seq")?;
    let seq = c.number()?;
    c.ws();
    let sent_ms = c.opt(|c| {
        c.lit(b",")?;
        c.ws();
        c.key(b"sent")?;
        let t = c.number()?;
        c.ws();
        Some(t)
    });
    let attack = c.opt(|c| {
        let member = |c: &mut Cursor<'a>, name: &[u8]| {
            c.lit(b",")?;
            c.ws();
            c.key(name)?;
            c.quote()?;
            let v = c.attack_id()?;
            c.quote()?;
            c.ws();
            Some(v)
        };
        Some((member(c, b"tactic")?, member(c, b"technique")?))
    });
    c.lit(b"}")?;
    Some(Tag {
        run,
        agent,
        seq,
        sent_ms,
        attack,
    })
}

/// `[ingestbench@32473 run="R" agent="A" seq="S"]`
fn sd<'a>(c: &mut Cursor<'a>) -> Option<Tag<'a>> {
    c.lit(b"@32473 run=")?;
    c.quote()?;
    let run = c.run_id()?;
    c.quote()?;
    c.lit(b" agent=")?;
    c.quote()?;
    let agent = u32::try_from(c.number()?).ok()?;
    c.quote()?;
    c.lit(b" seq=")?;
    c.quote()?;
    let seq = c.number()?;
    c.quote()?;
    let sent_ms = c.opt(|c| {
        c.lit(b" sent=")?;
        c.quote()?;
        let t = c.number()?;
        c.quote()?;
        Some(t)
    });
    let attack = c.opt(|c| {
        let param = |c: &mut Cursor<'a>, name: &[u8]| {
            c.lit(name)?;
            c.quote()?;
            let v = c.attack_id()?;
            c.quote()?;
            Some(v)
        };
        Some((param(c, b" tactic=")?, param(c, b" technique=")?))
    });
    c.lit(b"]")?;
    Some(Tag {
        run,
        agent,
        seq,
        sent_ms,
        attack,
    })
}

/// `ingestbenchRun=R ingestbenchAgent=A ingestbenchSeq=S`
fn cef<'a>(c: &mut Cursor<'a>) -> Option<Tag<'a>> {
    c.lit(b"Run=")?;
    let run = c.run_id()?;
    c.lit(b" ingestbenchAgent=")?;
    let agent = u32::try_from(c.number()?).ok()?;
    c.lit(b" ingestbenchSeq=")?;
    let seq = c.number()?;
    let sent_ms = c.opt(|c| {
        c.lit(b" ingestbenchSent=")?;
        c.number()
    });
    let attack = c.opt(|c| {
        c.lit(b" ingestbenchTactic=")?;
        let tactic = c.attack_id()?;
        c.lit(b" ingestbenchTechnique=")?;
        Some((tactic, c.attack_id()?))
    });
    c.word_end()?;
    Some(Tag {
        run,
        agent,
        seq,
        sent_ms,
        attack,
    })
}

/// `ingestbench_run=R ingestbench_agent=A ingestbench_seq=S` (or with commas).
fn kv<'a>(c: &mut Cursor<'a>) -> Option<Tag<'a>> {
    c.lit(b"_run=")?;
    let run = c.run_id()?;
    let sep = c.peek()?;
    if sep != b' ' && sep != b',' {
        return None;
    }
    c.i += 1;
    c.lit(b"ingestbench_agent=")?;
    let agent = u32::try_from(c.number()?).ok()?;
    c.lit(&[sep])?;
    c.lit(b"ingestbench_seq=")?;
    let seq = c.number()?;
    let sent_ms = c.opt(|c| {
        c.lit(&[sep])?;
        c.lit(b"ingestbench_sent=")?;
        c.number()
    });
    let attack = c.opt(|c| {
        c.lit(&[sep])?;
        c.lit(b"ingestbench_tactic=")?;
        let tactic = c.attack_id()?;
        c.lit(&[sep])?;
        c.lit(b"ingestbench_technique=")?;
        Some((tactic, c.attack_id()?))
    });
    c.word_end()?;
    Some(Tag {
        run,
        agent,
        seq,
        sent_ms,
        attack,
    })
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    /// Reads what `f` reads if it all matches; else nothing is consumed.
    fn opt<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let at = self.i;
        let v = f(self);
        if v.is_none() {
            self.i = at;
        }
        v
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn lit(&mut self, s: &[u8]) -> Option<()> {
        let end = self.i.checked_add(s.len())?;
        if self.b.get(self.i..end)? == s {
            self.i = end;
            Some(())
        } else {
            None
        }
    }

    /// A quote as it appears at any escaping depth: backslashes, then `"`.
    fn quote(&mut self) -> Option<()> {
        while self.peek()? == b'\\' {
            self.i += 1;
        }
        self.lit(b"\"")
    }

    /// A JSON key (quoted) and its colon.
    fn key(&mut self, name: &[u8]) -> Option<()> {
        self.quote()?;
        self.lit(name)?;
        self.quote()?;
        self.ws();
        self.lit(b":")?;
        self.ws();
        Some(())
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// `[A-Za-z0-9._:-]{1,64}`
    fn run_id(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        while let Some(ch) = self.peek() {
            if ch.is_ascii_alphanumeric() || matches!(ch, b'-' | b'_' | b'.' | b':') {
                self.i += 1;
            } else {
                break;
            }
        }
        let len = self.i - start;
        if len == 0 || len > MAX_RUN_LEN {
            return None;
        }
        self.b.get(start..self.i)
    }

    /// An ATT&CK id: `TA0006`, `T1110`, `T1059.001` (letters, digits and dots, 2 to 16).
    fn attack_id(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        while let Some(ch) = self.peek() {
            if ch.is_ascii_alphanumeric() || ch == b'.' {
                self.i += 1;
            } else {
                break;
            }
        }
        let id = self.b.get(start..self.i)?;
        (id.len() >= 2 && id.len() <= 16 && id.first() == Some(&b'T')).then_some(id)
    }

    /// A decimal u64 (1 to 20 digits, no overflow).
    fn number(&mut self) -> Option<u64> {
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(ch) = self.peek() {
            if !ch.is_ascii_digit() {
                break;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(ch - b'0'))?;
            self.i += 1;
        }
        (self.i > start).then_some(v)
    }

    /// The end of a bare value: end of input or a byte that cannot continue a word.
    fn word_end(&self) -> Option<()> {
        match self.peek() {
            None => Some(()),
            Some(ch) if ch.is_ascii_alphanumeric() || ch == b'_' || ch == b'.' => None,
            Some(_) => Some(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(s: &str) -> Vec<(String, u32, u64)> {
        collect_tags(s.as_bytes())
            .into_iter()
            .map(|t| (String::from_utf8(t.run.to_vec()).unwrap(), t.agent, t.seq))
            .collect()
    }

    fn one(run: &str, agent: u32, seq: u64) -> Vec<(String, u32, u64)> {
        vec![(run.to_string(), agent, seq)]
    }

    /// The send times of the tags in `s`.
    fn sent(s: &str) -> Vec<Option<u64>> {
        collect_tags(s.as_bytes())
            .into_iter()
            .map(|t| t.sent_ms)
            .collect()
    }

    #[test]
    fn every_form_with_its_send_time() {
        let t = Some(1_767_600_000_123);
        for s in [
            r#"{"ingestbench":{"run":"r-1","agent":3,"seq":42,"sent":1767600000123}}"#,
            r#"{"ingestbench": {"run": "r-1", "agent": 3, "seq": 42, "sent": 1767600000123 }}"#,
            r#"{"event":"{\"ingestbench\":{\"run\":\"r-1\",\"agent\":3,\"seq\":42,\"sent\":1767600000123}}"}"#,
            r#"<86>1 - h a 1 - [ingestbench@32473 run="r-1" agent="3" seq="42" sent="1767600000123"] m"#,
            "CEF:0|V|P|1|x|y|3|ingestbenchRun=r-1 ingestbenchAgent=3 ingestbenchSeq=42 ingestbenchSent=1767600000123",
            "a=b ingestbench_run=r-1 ingestbench_agent=3 ingestbench_seq=42 ingestbench_sent=1767600000123 c=d",
            "x,ingestbench_run=r-1,ingestbench_agent=3,ingestbench_seq=42,ingestbench_sent=1767600000123",
        ] {
            assert_eq!(tags(s), one("r-1", 3, 42), "{s}");
            assert_eq!(sent(s), vec![t], "{s}");
        }
        // Without it (deterministic runs), and a CEF or kv tag followed by other keys.
        assert_eq!(
            sent(r#"{"ingestbench":{"run":"r-1","agent":3,"seq":42}}"#),
            vec![None]
        );
        assert_eq!(
            sent("ingestbench_run=r-1 ingestbench_agent=3 ingestbench_seq=42 other=1"),
            vec![None]
        );
        // A broken send time is no tag at all (never guessed).
        assert!(tags(r#"{"ingestbench":{"run":"r-1","agent":3,"seq":42,"sent":x}}"#).is_empty());
        assert!(tags(r#"[ingestbench@32473 run="r-1" agent="3" seq="42" sent="12a"]"#).is_empty());
        assert!(
            tags("ingestbenchRun=r-1 ingestbenchAgent=3 ingestbenchSeq=42 ingestbenchSent=9x")
                .is_empty()
        );
    }

    #[test]
    fn json_form() {
        let s = r#"{"a":1,"ingestbench":{"run":"r-1a2b3c","agent":3,"seq":42}}"#;
        assert_eq!(tags(s), one("r-1a2b3c", 3, 42));
    }

    #[test]
    fn json_form_with_spaces() {
        let s = r#"{"ingestbench": {"run": "r-1", "agent": 3, "seq": 42 }}"#;
        assert_eq!(tags(s), one("r-1", 3, 42));
    }

    #[test]
    fn sd_form() {
        let s = r#"<86>1 2026-01-01T00:00:00Z h sshd 1 - [ingestbench@32473 run="r-9" agent="0" seq="7"] msg"#;
        assert_eq!(tags(s), one("r-9", 0, 7));
    }

    #[test]
    fn cef_form() {
        let s = "CEF:0|V|P|1|x|y|3|src=1.2.3.4 ingestbenchRun=r-abc ingestbenchAgent=12 ingestbenchSeq=99";
        assert_eq!(tags(s), one("r-abc", 12, 99));
        let s2 = "CEF:0|V|P|1|x|y|3| ingestbenchRun=r-abc ingestbenchAgent=12 ingestbenchSeq=99 dst=5.6.7.8\n";
        assert_eq!(tags(s2), one("r-abc", 12, 99));
    }

    #[test]
    fn kv_forms() {
        let s = "a=b ingestbench_run=r-1 ingestbench_agent=2 ingestbench_seq=3";
        assert_eq!(tags(s), one("r-1", 2, 3));
        let csv = "1,2,TRAFFIC,,x,ingestbench_run=r-1,ingestbench_agent=2,ingestbench_seq=3\n";
        assert_eq!(tags(csv), one("r-1", 2, 3));
        // Mixed separators are not one tag.
        assert!(tags("ingestbench_run=r-1 ingestbench_agent=2,ingestbench_seq=3").is_empty());
    }

    #[test]
    fn escaped_forms_inside_json_strings() {
        let json =
            r#"{"event":"{\"x\":1,\"ingestbench\":{\"run\":\"r-e\",\"agent\":1,\"seq\":5}}"}"#;
        assert_eq!(tags(json), one("r-e", 1, 5));
        let sd = r#"{"event":"<14>1 - h a - - [ingestbench@32473 run=\"r-s\" agent=\"4\" seq=\"8\"] m"}"#;
        assert_eq!(tags(sd), one("r-s", 4, 8));
        let cef = r#"{"event":"CEF:0|a|b|1|c|d|1|ingestbenchRun=r-c ingestbenchAgent=0 ingestbenchSeq=1\"q"}"#;
        assert_eq!(tags(cef), one("r-c", 0, 1));
        // Two levels deep: the quotes become \\\".
        let deep = r#"\\\"ingestbench\\\":{\\\"run\\\":\\\"r-d\\\",\\\"agent\\\":2,\\\"seq\\\":9}"#;
        assert_eq!(tags(deep), one("r-d", 2, 9));
    }

    #[test]
    fn several_tags_in_one_buffer() {
        let mut body = String::from("[");
        for i in 0..5 {
            if i > 0 {
                body.push(',');
            }
            body.push_str(&format!(
                r#"{{"n":{i},"ingestbench":{{"run":"r-x","agent":1,"seq":{i}}}}}"#
            ));
        }
        body.push_str(
            "]\nCEF:0|a|b|1|c|d|1|ingestbenchRun=r-y ingestbenchAgent=2 ingestbenchSeq=0\n",
        );
        body.push_str(
            "x ingestbench_run=r-z ingestbench_agent=3 ingestbench_seq=18446744073709551615",
        );
        let got = tags(&body);
        assert_eq!(got.len(), 7);
        assert_eq!(got[4], ("r-x".to_string(), 1, 4));
        assert_eq!(got[5], ("r-y".to_string(), 2, 0));
        assert_eq!(got[6], ("r-z".to_string(), 3, u64::MAX));
    }

    #[test]
    fn truncated_tags_are_not_tags() {
        let full = r#"{"ingestbench":{"run":"r-1","agent":3,"seq":42}}"#;
        for cut in 0..full.len() - 1 {
            assert!(tags(&full[..cut]).is_empty(), "cut at {cut}");
        }
        let sd = r#"[ingestbench@32473 run="r-9" agent="0" seq="7"]"#;
        for cut in 0..sd.len() {
            assert!(tags(&sd[..cut]).is_empty(), "cut at {cut}");
        }
        // A bare form at the very end of a buffer is complete: that is where lines end.
        let kv = "ingestbench_run=r-1 ingestbench_agent=2 ingestbench_seq=3";
        for cut in 0..kv.find("seq=").unwrap() + 4 {
            assert!(tags(&kv[..cut]).is_empty(), "cut at {cut}");
        }
    }

    #[test]
    fn garbage_is_not_a_tag() {
        for s in [
            "ingestbench",
            "ingestbenchingestbenchingestbench",
            r#""source":"ingestbench","event":{}"#,
            r#"{"ingestbench":{"run":"","agent":1,"seq":1}}"#,
            r#"{"ingestbench":{"run":"r 1","agent":1,"seq":1}}"#,
            r#"{"ingestbench":{"run":"r-1","agent":4294967296,"seq":1}}"#,
            r#"{"ingestbench":{"run":"r-1","agent":1,"seq":18446744073709551616}}"#,
            r#"{"ingestbench":{"run":"r-1","agent":-1,"seq":1}}"#,
            r#"{"ingestbench":{"agent":1,"run":"r-1","seq":1}}"#,
            "ingestbenchRun=r-1 ingestbenchAgent=1 ingestbenchSeq=1x",
            "ingestbenchRun=r-1 ingestbenchAgent= ingestbenchSeq=1",
            "[ingestbench@32473 run=\"r-1\" agent=\"1\" seq=\"1\"",
            "[ingestbench@99999 run=\"r-1\" agent=\"1\" seq=\"1\"]",
        ] {
            assert!(tags(s).is_empty(), "{s}");
        }
        let long = format!(
            "ingestbench_run={} ingestbench_agent=1 ingestbench_seq=1",
            "r".repeat(65)
        );
        assert!(tags(&long).is_empty());
    }

    #[test]
    fn a_broken_tag_does_not_hide_the_next_one() {
        let s = r#"ingestbench_run=r-1 ingestbench_agent=x {"ingestbench":{"run":"r-2","agent":1,"seq":2}}"#;
        assert_eq!(tags(s), one("r-2", 1, 2));
    }

    #[test]
    fn random_bytes_never_panic() {
        let alphabet = b"ingestbench_Run=\"\\@32473 []{}:,0123456789r-agentseq";
        for buf in crate::testutil::random_strings(0x1234_5678_9abc_def1, alphabet, 200, 2000) {
            find_tags(&buf, |t| assert!(!t.run.is_empty()));
        }
    }
}
