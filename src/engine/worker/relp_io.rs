//! The worker's RELP link: what `Proto::Relp` does where the other protocols write a batch
//! and read an answer. A link's connection opens a session (`open`, and nothing else until
//! its answer), then carries one batch at a time as one `syslog` frame per message, at most
//! the window unanswered; each `rsp` settles its message (200: accepted, anything else:
//! failed, counted by its status), and the batch is done when every message is settled —
//! accepted if none was refused, its latency from its intended time to its last answer. A
//! connection that breaks sends the batch's unanswered messages again on the next one (the
//! same bytes, new txnrs), each counted in `events_resent`; the shared retry rules (attempts,
//! retry time, give-up) see a batch of only its unsettled events. At the end every idle open
//! session is closed (`close`, its answer awaited for a second at most).

use std::time::{Duration, Instant};

use mio::Events;

use super::{Proto, SlotState, Socket, Worker, WorkerPlan};
use crate::adapter::relp::{self, Answer, State};
use crate::stats::MAX_LATENCY_US;
use crate::stats::result::AbortReason;

/// How long the end of a run waits for the answers to its `close` frames.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

#[allow(
    clippy::indexing_slicing,
    reason = "link indices i are < links.len() and RELP sessions has one entry per link; slot \
              indices are a link batch of the fixed pool and frames has one entry per slot; \
              answer indices go through answers().get()"
)]
impl Worker {
    /// Fills link `i`'s window with its batch's next messages and writes what the socket
    /// takes (the open, the close, frames).
    pub(super) fn relp_write(&mut self, i: usize, now: Instant) {
        let Proto::Relp {
            sessions, frames, ..
        } = &mut self.proto
        else {
            return;
        };
        let s = &mut sessions[i];
        let l = &mut self.links[i];
        let Socket::Stream(conn) = &mut l.sock else {
            return;
        };
        if !conn.is_open() {
            return;
        }
        if let Some(slot) = l.batch
            && s.is_open()
        {
            let b = &self.batches[slot];
            let f = &mut frames[slot];
            while s.has_room() {
                let Some((k, again)) = f.next_to_send() else {
                    break;
                };
                let msg = relp::message(&b.body, &b.ends, k as usize);
                self.counters.bytes_sent += s.push_syslog(k, msg) as u64;
                if again {
                    self.counters.events_resent += 1;
                }
            }
        }
        let result = if s.pending().is_empty() {
            conn.flush().map(|_| 0)
        } else {
            conn.write_from([s.pending(), &[]], 0)
        };
        match result {
            Ok(n) => {
                s.wrote(n);
                if !s.pending().is_empty() || conn.pending_tls() {
                    l.blocked_since.get_or_insert(now);
                } else if let Some(since) = l.blocked_since.take() {
                    self.counters.send_blocked_ns +=
                        now.saturating_duration_since(since).as_nanos() as u64;
                }
            }
            Err(_) => self.connection_lost(i, now),
        }
    }

    /// Reads link `i`'s answers and settles what they answer.
    pub(super) fn relp_read(&mut self, p: &mut WorkerPlan, i: usize, now: Instant) {
        let Proto::Relp { sessions, .. } = &mut self.proto else {
            return;
        };
        let Socket::Stream(conn) = &mut self.links[i].sock else {
            return;
        };
        if !conn.is_open() {
            // Closed earlier in this round (a failed write): nothing to read.
            return;
        }
        let status = match conn.read_available() {
            Ok(s) => s,
            Err(_) => {
                self.connection_lost(i, now);
                return;
            }
        };
        let fed = sessions[i].feed(conn.reader.data());
        conn.reader.clear();
        let mut lost = status == crate::net::conn::ReadStatus::Eof;
        let mut closed = false;
        let mut opened = false;
        let mut k = 0;
        loop {
            let answer = match &self.proto {
                Proto::Relp { sessions, .. } => sessions[i].answers().get(k).copied(),
                _ => None,
            };
            let Some(answer) = answer else { break };
            k += 1;
            match answer {
                Answer::Opened => opened = true,
                Answer::OpenRefused(code) => {
                    let why = match &self.proto {
                        Proto::Relp { sessions, .. } => sessions[i].refusal.clone(),
                        _ => String::new(),
                    };
                    self.counters.connect_errors += 1;
                    p.abort.set(AbortReason::Unreachable(format!(
                        "relp://{}: the server refused the session (open answered {code}): {why}",
                        p.addr
                    )));
                    self.close_link(i, now, Duration::from_secs(1));
                    return;
                }
                Answer::Frame { frame, code } => {
                    // Counted in the second its batch was scheduled in.
                    let began = match self.links[i].batch {
                        Some(b) => self.enter(self.batches[b].second),
                        None => false,
                    };
                    let settled = self.relp_settle(i, frame, code, now);
                    self.leave(began);
                    if !settled {
                        self.counters.protocol_errors += 1;
                        lost = true;
                        break;
                    }
                }
                Answer::Closed => closed = true,
                // After the answer to our close, the hint only confirms it.
                Answer::ServerClose => lost |= !closed,
            }
        }
        if let Proto::Relp { sessions, .. } = &mut self.proto {
            sessions[i].clear_answers();
        }
        if fed.is_err() && !closed {
            self.counters.protocol_errors += 1;
            lost = true;
        }
        if closed {
            self.close_link(i, now, Duration::ZERO);
            return;
        }
        if lost {
            self.connection_lost(i, now);
            return;
        }
        self.relp_write(i, now);
        if opened || self.idle(i) {
            let done = self.generation_done(p, now);
            self.dispatch(p, now, done);
        }
    }

    /// Frame `frame` of link `i`'s batch was answered `code`: count it, and finish the batch
    /// when it was its last open frame. False when the answer fits nothing sent (the
    /// session is out of step).
    fn relp_settle(&mut self, i: usize, frame: u32, code: u16, now: Instant) -> bool {
        let Some(slot) = self.links[i].batch else {
            return false;
        };
        let Proto::Relp { frames, .. } = &mut self.proto else {
            return false;
        };
        let f = &mut frames[slot];
        let ok = code == 200;
        let Some(seq) = f.settle(frame, ok) else {
            return false;
        };
        if let Some(n) = self.counters.status.get_mut(usize::from(code))
            && code > 0
        {
            *n += 1;
        }
        let b = &mut self.batches[slot];
        b.events -= 1;
        if ok {
            self.counters.events_accepted += 1;
            if self.draining {
                self.counters.events_accepted_in_drain += 1;
            }
        } else {
            self.counters.events_failed += 1;
            self.counters.refused_for_good(code, 1);
            self.account.fail(seq, seq + 1);
            b.last_cause = code;
        }
        // What the batch still stands for, should it be given up.
        (b.first_seq, b.seqs) = f.unsettled_span();
        if f.open > 0 {
            return true;
        }
        if f.refused == 0 {
            self.counters.batches_accepted += 1;
        } else {
            self.counters.batches_failed += 1;
        }
        if f.acked > 0 {
            let lat = now.saturating_duration_since(b.intended).as_micros() as u64;
            let svc = now.saturating_duration_since(b.attempt_write).as_micros() as u64;
            self.latency.saturating_record(lat.clamp(1, MAX_LATENCY_US));
            self.service.saturating_record(svc.clamp(1, MAX_LATENCY_US));
        }
        b.state = SlotState::Free;
        let l = &mut self.links[i];
        l.batch = None;
        l.offset = 0;
        true
    }

    /// A session whose open has waited longer than the request timeout: the connection goes
    /// and another is made.
    pub(super) fn relp_open_timeouts(&mut self, p: &WorkerPlan, now: Instant) {
        let Proto::Relp { sessions, .. } = &self.proto else {
            return;
        };
        for i in 0..sessions.len() {
            let waited = match &self.proto {
                Proto::Relp { sessions, .. } => match sessions[i].state {
                    State::Opening(since) => now.saturating_duration_since(since),
                    _ => Duration::ZERO,
                },
                _ => Duration::ZERO,
            };
            if waited > p.timeouts.request {
                self.counters.timeouts += 1;
                self.close_link(i, now, Duration::ZERO);
            }
        }
    }

    /// The end of the run: every open session with nothing in flight is closed, and its
    /// answer waited for (a second at most); then the connections close.
    pub(super) fn relp_close_all(&mut self, p: &mut WorkerPlan) {
        if p.abort.is_set() {
            return;
        }
        let now = Instant::now();
        let mut any = false;
        for i in 0..self.links.len() {
            let idle = self.idle(i);
            if let Proto::Relp { sessions, .. } = &mut self.proto
                && idle
            {
                sessions[i].close();
                any = true;
                self.relp_write(i, now);
            }
        }
        if !any {
            return;
        }
        let deadline = now + CLOSE_WAIT;
        let mut events = Events::with_capacity(64);
        loop {
            let closing = match &self.proto {
                Proto::Relp { sessions, .. } => sessions.iter().any(|s| s.state == State::Closing),
                _ => false,
            };
            let now = Instant::now();
            if !closing || now >= deadline {
                break;
            }
            if p.poll.poll(&mut events, Some(deadline - now)).is_err() {
                continue;
            }
            let now = Instant::now();
            for ev in events.iter() {
                let i = ev.token().0;
                if i >= self.links.len() {
                    continue;
                }
                if ev.is_writable() {
                    self.relp_write(i, now);
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.relp_read(p, i, now);
                }
            }
        }
    }
}
