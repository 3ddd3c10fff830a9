//! Checking that retries resend the same bytes. When the sink refuses a data request with
//! 429/503 it remembers the request's first accounting tag and a hash of its wire body; when a
//! later request with the same first tag is accepted, its body hash says whether the client
//! resent the refused bytes exactly. Only refused requests pay for this: an accepted request
//! looks at the table only while it is non-empty.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::acct;

/// (run, agent, seq) of a body's first tag.
type Key = (Box<[u8]>, u32, u64);

#[derive(Default)]
pub(crate) struct Refused {
    table: Mutex<HashMap<Key, u64>>,
    /// Entries in `table`, readable without the lock.
    len: AtomicU64,
    identical: AtomicU64,
    different: AtomicU64,
}

/// Most refused bodies remembered at once (a storm that never retries cannot grow it forever).
const MAX_ENTRIES: usize = 100_000;

fn body_hash(wire: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    wire.hash(&mut h);
    h.finish()
}

fn first_tag(payload: &[u8]) -> Option<Key> {
    let mut first = None;
    acct::find_tags(payload, |t| {
        if first.is_none() {
            first = Some((Box::from(t.run), t.agent, t.seq));
        }
    });
    first
}

impl Refused {
    /// A request was refused: remember it. `payload` is the decoded body, `wire` the body as
    /// it arrived.
    pub(crate) fn refused(&self, payload: &[u8], wire: &[u8]) {
        let Some(key) = first_tag(payload) else {
            return;
        };
        if let Ok(mut t) = self.table.lock()
            && (t.len() < MAX_ENTRIES || t.contains_key(&key))
        {
            t.insert(key, body_hash(wire));
            self.len.store(t.len() as u64, Ordering::Relaxed);
        }
    }

    /// A request was accepted: if it resends a refused one, count whether the bytes match.
    pub(crate) fn accepted(&self, first: Option<(&[u8], u32, u64)>, wire: &[u8]) {
        if self.len.load(Ordering::Relaxed) == 0 {
            return;
        }
        let Some((run, agent, seq)) = first else {
            return;
        };
        let Ok(mut t) = self.table.lock() else { return };
        let key: Key = (Box::from(run), agent, seq);
        if let Some(h) = t.remove(&key) {
            self.len.store(t.len() as u64, Ordering::Relaxed);
            let counter = if h == body_hash(wire) {
                &self.identical
            } else {
                &self.different
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// (identical, different) resends seen so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.identical.load(Ordering::Relaxed),
            self.different.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &[u8] = br#"[{"x":1,"ingestbench":{"run":"r-1","agent":0,"seq":7}}]"#;
    const B: &[u8] = br#"[{"x":2,"ingestbench":{"run":"r-1","agent":0,"seq":7}}]"#;

    #[test]
    fn identical_and_different_resends() {
        let r = Refused::default();
        r.accepted(Some((b"r-1", 0, 7)), A);
        assert_eq!(r.counts(), (0, 0), "nothing refused yet");
        r.refused(A, A);
        r.accepted(Some((b"r-1", 0, 7)), A);
        assert_eq!(r.counts(), (1, 0));
        r.refused(A, A);
        r.accepted(Some((b"r-1", 0, 7)), B);
        assert_eq!(r.counts(), (1, 1));
        r.accepted(Some((b"r-1", 0, 7)), A);
        assert_eq!(r.counts(), (1, 1), "each refusal matches one resend");
    }
}
