//! Recording accounting tags in the ledger, for HTTP bodies and syslog messages alike. Tags
//! are queued with their place in a buffer (`acct::find_tags` borrows from it), then recorded
//! in runs of consecutive tags from the same (run, agent): one ledger lock per run of tags,
//! which for a generated batch, or a read of one connection's syslog stream, is one lock for
//! hundreds of events. Each thread keeps its own cache of ledger entries, so the shared maps
//! are read once per (run, agent), not per event. A tag that carries its send time adds the
//! send → receive lag (the clock read at most once per record) to its agent's histogram. Nothing here
//! allocates in steady state.

use std::collections::HashMap;

use super::stats::{AgentRef, Ledger};
use crate::acct;

/// A tag found in a buffer: where its run id is, and its numbers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TagAt {
    pub run_at: usize,
    pub run_len: usize,
    pub agent: u32,
    pub seq: u64,
    pub sent_ms: Option<u64>,
}

impl TagAt {
    /// The run id, in the buffer the tag was queued from.
    pub fn run<'a>(&self, base: &'a [u8]) -> &'a [u8] {
        base.get(self.run_at..self.run_at + self.run_len)
            .unwrap_or_default()
    }
}

/// One thread's queue of tags and cache of ledger entries.
pub(crate) struct Recorder {
    tags: Vec<TagAt>,
    agents: HashMap<Box<[u8]>, HashMap<u32, AgentRef>>,
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            tags: Vec::with_capacity(1024),
            agents: HashMap::new(),
        }
    }

    /// Queues every tag in `part`, which lies inside `base`.
    pub fn queue_all(&mut self, base: &[u8], part: &[u8]) {
        let at = base.as_ptr() as usize;
        let tags = &mut self.tags;
        acct::find_tags(part, |t| {
            tags.push(TagAt {
                run_at: t.run.as_ptr() as usize - at,
                run_len: t.run.len(),
                agent: t.agent,
                seq: t.seq,
                sent_ms: t.sent_ms,
            });
        });
    }

    /// Queues the first tag of `msg`, which lies inside `base`: one syslog message is one
    /// event and carries one tag. False when it has none.
    #[inline]
    pub fn queue_first(&mut self, base: &[u8], msg: &[u8]) -> bool {
        let at = base.as_ptr() as usize;
        let mut found = false;
        let tags = &mut self.tags;
        acct::find_tags(msg, |t| {
            if !found {
                found = true;
                tags.push(TagAt {
                    run_at: t.run.as_ptr() as usize - at,
                    run_len: t.run.len(),
                    agent: t.agent,
                    seq: t.seq,
                    sent_ms: t.sent_ms,
                });
            }
        });
        found
    }

    /// Tags queued and not yet recorded.
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.tags.len()
    }

    /// Records the queued tags (whose run ids are in `base`) and empties the queue; returns
    /// the first of them.
    #[allow(
        clippy::indexing_slicing,
        reason = "i < j <= tags.len() by the loop conditions"
    )]
    pub fn record(&mut self, ledger: &Ledger, base: &[u8]) -> Option<TagAt> {
        // The clock is read once, and only when a tag carries its send time.
        let mut now_ms = None;
        let mut i = 0;
        while i < self.tags.len() {
            let first = self.tags[i];
            let run = first.run(base);
            let mut j = i + 1;
            while j < self.tags.len()
                && self.tags[j].agent == first.agent
                && self.tags[j].run(base) == run
            {
                j += 1;
            }
            if let Some(a) = self.agent_ref(ledger, run, first.agent)
                && let Ok(mut a) = a.lock()
            {
                for t in &self.tags[i..j] {
                    if a.record(t.seq)
                        && let Some(sent) = t.sent_ms
                    {
                        let now = *now_ms.get_or_insert_with(|| {
                            (crate::generate::time::now() / 1_000_000).max(0) as u64
                        });
                        a.lag(now.saturating_sub(sent));
                    }
                }
            }
            i = j;
        }
        let first = self.tags.first().copied();
        self.tags.clear();
        if self.tags.capacity() > 1 << 20 {
            self.tags = Vec::with_capacity(1024);
        }
        first
    }

    fn agent_ref(&mut self, ledger: &Ledger, run: &[u8], agent: u32) -> Option<AgentRef> {
        if run.is_empty() {
            return None;
        }
        if let Some(a) = self.agents.get(run).and_then(|m| m.get(&agent)) {
            return Some(a.clone());
        }
        let a = ledger.agent(run, agent)?;
        self.agents
            .entry(run.into())
            .or_default()
            .insert(agent, a.clone());
        Some(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_run_and_agent_and_counts_duplicates() {
        let ledger = Ledger::default();
        let mut r = Recorder::new();
        let buf = br#"<1>1 - - - - - [ingestbench@32473 run="r-a" agent="1" seq="0"] x
<1>1 - - - - - [ingestbench@32473 run="r-a" agent="1" seq="1"] [ingestbench@32473 run="r-a" agent="1" seq="9"]
<1>1 - - - - - [ingestbench@32473 run="r-b" agent="2" seq="0"] y
<1>1 - - - - - [ingestbench@32473 run="r-a" agent="1" seq="1"] z"#;
        for line in buf.split(|&b| b == b'\n') {
            assert!(r.queue_first(buf, line));
        }
        assert!(!r.queue_first(buf, &buf[..5]));
        assert_eq!(r.queued(), 4);
        let first = r.record(&ledger, buf).unwrap();
        assert_eq!(
            (first.run(buf), first.agent, first.seq),
            (&b"r-a"[..], 1, 0)
        );
        assert_eq!(r.queued(), 0);
        let snap = ledger.snapshot();
        let a = &snap["r-a"].agents["1"];
        // seq 9 was a second tag in one message: not recorded.
        assert_eq!(
            (a.received, a.distinct, a.duplicates, a.max_seq),
            (3, 2, 1, 1)
        );
        assert_eq!(snap["r-b"].agents["2"].received, 1);
        r.queue_all(buf, buf);
        assert_eq!(r.queued(), 5);
    }

    #[test]
    fn a_tag_with_its_send_time_adds_its_lag() {
        let ledger = Ledger::default();
        let mut r = Recorder::new();
        let now_ms = (crate::generate::time::now() / 1_000_000) as u64;
        let buf = format!(
            "[ingestbench@32473 run=\"r-l\" agent=\"0\" seq=\"0\" sent=\"{}\"]\n\
             [ingestbench@32473 run=\"r-l\" agent=\"0\" seq=\"1\" sent=\"{}\"]\n\
             [ingestbench@32473 run=\"r-l\" agent=\"0\" seq=\"2\"]",
            now_ms - 5_000,
            now_ms - 1_000
        );
        let b = buf.as_bytes();
        for line in b.split(|&c| c == b'\n') {
            r.queue_first(b, line);
        }
        r.record(&ledger, b);
        let run = &ledger.snapshot()["r-l"];
        assert_eq!(run.received, 3);
        let lag = run.ingest_lag_ms.as_ref().expect("lag");
        // Two of the three carried a send time; 1% precision at 2 significant digits.
        assert_eq!(lag.count, 2);
        assert!((990..=1_100).contains(&lag.p50), "{lag:?}");
        assert!((4_950..=5_100).contains(&lag.max), "{lag:?}");
        // A run whose tags carry none has no lag.
        let mut r = Recorder::new();
        let plain = br#"[ingestbench@32473 run="r-n" agent="0" seq="0"]"#;
        r.queue_first(plain, plain);
        r.record(&ledger, plain);
        assert!(ledger.snapshot()["r-n"].ingest_lag_ms.is_none());
    }
}
