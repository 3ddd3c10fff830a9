//! Whether a worker's target was ever reached, and why not: the run stops (exit 6) when,
//! 3 s into the run or by the end of its schedule, whichever comes first, none of the
//! worker's connections ever got through — "down is down" at any length of run. Why is
//! named: connects refused or failing (`target unreachable`), a TCP connect never answered,
//! a TLS handshake never answered (a TLS mismatch: `TLS handshake failed`, with the time it
//! waited), or — over HTTP — connections the target accepted and then closed or reset, every
//! one, before any answer. A target that answered once and went down later is not down for
//! the whole run: what it then failed is the run's failures (exit 3). Also each link's setup
//! timeout: a connect or TLS handshake unanswered for `SETUP_TIMEOUT` (or the request
//! timeout, if shorter) is a connect error, and the link tries again.

use std::time::{Duration, Instant};

use super::{Proto, Socket, UNREACHABLE_AFTER, Worker, WorkerPlan};
use crate::net::conn::State;
use crate::stats::result::AbortReason;

/// The longest a connection's setup (TCP connect, TLS handshake) may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

#[allow(
    clippy::indexing_slicing,
    reason = "link indices come from 0..links.len()"
)]
impl Worker {
    /// Why this worker's target counts as never reached, if it does.
    /// `gen_done`: the schedule has ended for this worker (else 3 s have passed). Called on
    /// every loop from then on: it allocates only for the reason it returns.
    pub(super) fn never_reached(
        &self,
        p: &WorkerPlan,
        now: Instant,
        gen_done: bool,
    ) -> Option<AbortReason> {
        let http = matches!(self.proto, Proto::Http { .. });
        if self.ever_connected && (self.ever_answered || !http) {
            return None;
        }
        let peer = || match &p.unix {
            Some(path) => format!("unix:{}", path.display()),
            None => p.addr.to_string(),
        };
        if self.ever_connected {
            // After the wait, more connections lost before any answer than there are links;
            // at the end, nothing left to try (every batch settled without an answer).
            let waited = now.saturating_duration_since(p.start) > UNREACHABLE_AFTER;
            let all_closed = (waited && self.closed_unanswered > self.links.len() as u64)
                || (gen_done && !self.busy());
            let never = http && !self.ever_answered && self.closed_unanswered > 0 && all_closed;
            return never.then(|| {
                AbortReason::Unreachable(if self.not_http > 0 {
                    format!(
                        "{} answered with bytes that are not HTTP ({} times) and never \
                         with an HTTP answer: is the url's port and scheme right?",
                        peer(),
                        self.not_http
                    )
                } else {
                    format!(
                        "{} accepted connections and closed or reset every one before \
                         any answer ({} in all)",
                        peer(),
                        self.closed_unanswered
                    )
                })
            });
        }
        // A setup still under way counts once it has waited as long as a run waits for a
        // first connection (`first_setup_pending` keeps a short run's worker until then).
        let waited = |state: State| {
            self.links
                .iter()
                .filter(|l| matches!(&l.sock, Socket::Stream(c) if c.state == state))
                .map(|l| now.saturating_duration_since(l.setup_began))
                .max()
                .filter(|w| *w >= UNREACHABLE_AFTER)
        };
        if let Some(w) = waited(State::Handshaking) {
            return Some(AbortReason::Tls(format!(
                "{}: no answer to the TLS handshake in {:.1} s — the port may speak plain \
                 TCP or HTTP while the url asks for TLS",
                peer(),
                w.as_secs_f64()
            )));
        }
        if let Some(why) = &self.last_connect_error {
            return Some(AbortReason::Unreachable(format!(
                "cannot connect to {}: {why}",
                peer()
            )));
        }
        waited(State::Connecting).map(|w| {
            AbortReason::Unreachable(format!(
                "cannot connect to {}: no answer to the TCP connect in {:.1} s",
                peer(),
                w.as_secs_f64()
            ))
        })
    }

    /// Whether the worker has never connected and a first setup is still under way (for
    /// less than `UNREACHABLE_AFTER`): a run that ends sooner waits for it, so a target
    /// that never answers is named as such at any length of run.
    pub(super) fn first_setup_pending(&self, now: Instant) -> bool {
        !self.ever_connected
            && self.last_connect_error.is_none()
            && self.links.iter().any(|l| {
                l.sock.is_setting_up()
                    && now.saturating_duration_since(l.setup_began) < UNREACHABLE_AFTER
            })
    }

    /// Links whose connect or TLS handshake has gone unanswered too long: a connect error,
    /// and the link tries again after its backoff.
    pub(super) fn setup_timeouts(&mut self, p: &WorkerPlan, now: Instant) {
        let limit = SETUP_TIMEOUT.min(p.timeouts.request);
        for i in 0..self.links.len() {
            let l = &mut self.links[i];
            let Socket::Stream(c) = &mut l.sock else {
                continue;
            };
            let what = match c.state {
                State::Connecting => "the TCP connect",
                State::Handshaking => "the TLS handshake",
                State::Closed | State::Open => continue,
            };
            if now.saturating_duration_since(l.setup_began) <= limit {
                continue;
            }
            c.close(&self.registry);
            self.connect_failed(
                i,
                now,
                format!("no answer to {what} in {:.1} s", limit.as_secs_f64()),
            );
        }
    }
}
