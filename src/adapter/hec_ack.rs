//! Splunk HEC indexer acknowledgement, the client side. A batch the target accepted with an
//! `ackId` is not yet indexed; its id waits here until an ack poll (`POST
//! /services/collector/ack?channel=…` with `{"acks":[…]}`) says `"id":true`. The tracker owns
//! the ids, when to poll and how a poll request and its answer look; the worker only hands it
//! a buffer when a poll is due and the answer when it comes. Polls are small JSON and are
//! never compressed, whatever `compression` says for the data. No allocation once the id
//! lists have grown to their working size.

use std::time::{Duration, Instant};

use crate::adapter::Framer;
use crate::bytes::{ArrayBuf, Sink, write_u64};
use crate::net::http::write_request_head;

/// How often a worker asks which batches are indexed.
pub const POLL_EVERY: Duration = Duration::from_millis(500);
/// The most ids one poll asks about.
const MAX_IDS_PER_POLL: usize = 1000;

pub struct AckTracker {
    path: String,
    host: String,
    headers: Vec<u8>,
    pending: Vec<u64>,
    polling: Vec<u64>,
    /// Batches accepted without an ackId: they can never be confirmed.
    without_id: u64,
    next_poll: Instant,
}

impl AckTracker {
    /// A tracker for the framer's channel; `None` when acknowledgement is off.
    pub fn new(f: &Framer, now: Instant) -> Option<AckTracker> {
        let path = f.ack_path.clone()?;
        Some(AckTracker {
            path,
            host: f.host.clone(),
            headers: f.ack_headers.clone(),
            pending: Vec::with_capacity(4096),
            polling: Vec::with_capacity(MAX_IDS_PER_POLL),
            without_id: 0,
            next_poll: now,
        })
    }

    /// A batch was accepted: its ackId waits to be confirmed; without one (the target does
    /// not acknowledge) it never can be.
    pub fn accepted(&mut self, ack_id: Option<u64>) {
        match ack_id {
            Some(id) => self.pending.push(id),
            None => self.without_id += 1,
        }
    }

    /// Whether a poll should go out now (ids waiting, none in flight, its time has come).
    pub fn due(&self, now: Instant) -> bool {
        self.polling.is_empty() && !self.pending.is_empty() && now >= self.next_poll
    }

    /// When the next poll is due, if any id waits.
    pub fn next_poll(&self) -> Option<Instant> {
        (self.polling.is_empty() && !self.pending.is_empty()).then_some(self.next_poll)
    }

    /// Whether ids are still unconfirmed (waiting or being asked about).
    pub fn unconfirmed(&self) -> bool {
        !self.pending.is_empty() || !self.polling.is_empty()
    }

    /// Writes the next poll's request into `head` and `body`, taking up to 1000 waiting ids.
    pub fn write_poll(&mut self, head: &mut Vec<u8>, body: &mut Vec<u8>) {
        let n = self.pending.len().min(MAX_IDS_PER_POLL);
        self.polling.clear();
        self.polling.extend(self.pending.drain(..n));
        poll_body(&self.polling, body);
        write_request_head(
            head,
            "POST",
            &self.path,
            &self.host,
            &self.headers,
            body.len(),
        );
    }

    /// The poll was answered (`ok`: a 2xx): returns how many of the ids asked about are
    /// confirmed; the others wait for the next poll.
    pub fn answered(&mut self, ok: bool, body: &[u8], now: Instant) -> u64 {
        let mut confirmed = 0;
        for id in self.polling.drain(..) {
            if ok && is_acked(body, id) {
                confirmed += 1;
            } else {
                self.pending.push(id);
            }
        }
        self.next_poll = now + POLL_EVERY;
        confirmed
    }

    /// The poll's connection broke: its ids are asked about again.
    pub fn lost(&mut self) {
        self.pending.append(&mut self.polling);
    }

    /// The run is over: how many accepted batches were never confirmed (ids still waiting,
    /// and batches that came without one).
    pub fn give_up(&mut self) -> u64 {
        let n = (self.pending.len() + self.polling.len()) as u64 + self.without_id;
        self.pending.clear();
        self.polling.clear();
        self.without_id = 0;
        n
    }
}

/// Writes the body of an ack poll: `{"acks":[1,2,3]}`.
pub fn poll_body(ids: &[u64], out: &mut Vec<u8>) {
    out.clear();
    out.put_slice(b"{\"acks\":[");
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_u64(*id, out);
    }
    out.put_slice(b"]}");
}

/// Whether an ack-poll answer says `id` is indexed (`"id":true`).
pub fn is_acked(body: &[u8], id: u64) -> bool {
    let mut k = ArrayBuf::<24>::new();
    k.put(b'"');
    write_u64(id, &mut k);
    k.put(b'"');
    let key = k.as_slice();
    let Some(at) = memchr::memmem::find(body, key) else {
        return false;
    };
    let rest = body
        .get(at + key.len()..)
        .unwrap_or_default()
        .iter()
        .skip_while(|b| b.is_ascii_whitespace() || **b == b':');
    rest.take(4).eq(b"true".iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies() {
        let mut b = Vec::new();
        poll_body(&[0, 7, 12], &mut b);
        assert_eq!(b, b"{\"acks\":[0,7,12]}");
        let resp = b"{\"acks\":{\"0\":true,\"7\": false,\"12\" : true}}";
        assert!(is_acked(resp, 0));
        assert!(!is_acked(resp, 7));
        assert!(is_acked(resp, 12));
        assert!(!is_acked(resp, 1));
    }

    fn tracker(now: Instant) -> AckTracker {
        AckTracker {
            path: "/services/collector/ack?channel=c".into(),
            host: "h:1".into(),
            headers: b"Content-Type: application/json\r\n".to_vec(),
            pending: Vec::new(),
            polling: Vec::new(),
            without_id: 0,
            next_poll: now,
        }
    }

    #[test]
    fn ids_wait_until_confirmed_and_polls_are_plain_json() {
        let t0 = Instant::now();
        let mut t = tracker(t0);
        assert!(!t.due(t0) && !t.unconfirmed());
        t.accepted(Some(1));
        t.accepted(Some(2));
        t.accepted(Some(3));
        assert!(t.due(t0));
        let (mut head, mut body) = (Vec::new(), Vec::new());
        t.write_poll(&mut head, &mut body);
        assert_eq!(body, b"{\"acks\":[1,2,3]}");
        let h = String::from_utf8(head).unwrap();
        assert!(
            h.starts_with("POST /services/collector/ack?channel=c HTTP/1.1\r\n"),
            "{h}"
        );
        assert!(!h.contains("gzip"), "{h}");
        assert!(!t.due(t0), "one poll at a time");
        let n = t.answered(true, b"{\"acks\":{\"1\":true,\"2\":false,\"3\":true}}", t0);
        assert_eq!(n, 2);
        assert!(!t.due(t0), "next poll waits POLL_EVERY");
        assert!(t.due(t0 + POLL_EVERY));
        t.write_poll(&mut Vec::new(), &mut body);
        assert_eq!(body, b"{\"acks\":[2]}");
        t.lost();
        assert_eq!(t.answered(false, b"", t0), 0);
        t.accepted(None);
        assert_eq!(
            t.give_up(),
            2,
            "one id unconfirmed, one batch without an id"
        );
        assert!(!t.unconfirmed());
    }
}
