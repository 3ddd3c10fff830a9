//! What the sink counts, and the `SinkStats` it reports (`GET /stats`, `SinkHandle::stats`).
//!
//! Two kinds of state, both written once per request, never per event behind a shared lock:
//! - `Totals`, one per worker thread behind its own (uncontended) mutex: requests, bytes,
//!   events, responses by status, syslog counters (added once per poll round, not per message).
//! - the `Ledger`, shared: one `AgentLedger` per (run, agent) behind its own mutex, holding the
//!   set of seqs seen. It is shared rather than per thread because a resend may arrive on
//!   another connection, and so on another thread, than the first copy: a duplicate is a
//!   duplicate whichever thread sees it. A batch comes from one agent, so a request takes that
//!   agent's lock once for all its tags.
//!
//! `SinkStats` is the merged, serialisable snapshot. Field names are the project's vocabulary:
//! `events_received`, `duplicates`, `gaps` (= max_seq + 1 − distinct: seqs start at 0).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use super::seqset::{Insert, SeqSet};

/// A snapshot of everything the sink has counted since it started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SinkStats {
    /// Requests parsed (every method and path, faulted ones too).
    pub requests: u64,
    /// Events in accepted data requests: array elements or NDJSON values (lphc), envelopes
    /// (HEC event), non-empty lines (HEC raw), and syslog messages (`syslog.messages_*`).
    /// Untagged events count here only.
    pub events_received: u64,
    /// HTTP request bytes read off the wire (heads and bodies, before decompression; for
    /// HTTPS, after decryption). Syslog bytes are in `syslog.bytes`.
    pub bytes_received: u64,
    /// TCP connections accepted on every listener (HTTP, syslog TCP and TLS).
    pub connections_opened: u64,
    /// Connections closed with a reset by the fault injector.
    pub resets: u64,
    /// Responses by status code (`"200"`, `"429"`, …).
    pub status: BTreeMap<String, u64>,
    /// Per run id: what its tags say.
    pub runs: BTreeMap<String, RunStats>,
    /// Accepted requests that resent a body refused earlier with 429/503 (recognised by their
    /// first tag): byte for byte the same, or not.
    pub resent_identical: u64,
    pub resent_different: u64,
    /// The syslog listeners (TCP, UDP, TLS).
    pub syslog: SyslogStats,
    /// TLS connections (HTTPS or syslog over TLS) that ended before their handshake
    /// completed: a failed handshake (an alert either way, no or a bad client certificate,
    /// not TLS at all), or a close in the middle of one.
    pub tls_handshake_errors: u64,
}

/// What the syslog listeners received. Every message also counts in `events_received`, and
/// its tag (the first in the message, if any) in `runs`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyslogStats {
    /// Messages received on the syslog TCP listener (octet-counted and LF-framed).
    pub messages_tcp: u64,
    /// Datagrams received on the syslog UDP listener (one message each; empty ones are
    /// framing errors).
    pub messages_udp: u64,
    /// Messages received on the syslog TLS listener.
    pub messages_tls: u64,
    /// Messages received on the RELP listener (`syslog` frames, each answered).
    pub messages_relp: u64,
    /// Bytes received on the syslog listeners: the TCP and TLS streams (framing included,
    /// decrypted) and the UDP datagrams.
    pub bytes: u64,
    /// Bad MSG-LENs, oversize messages (over 1 MiB), frames starting with neither a digit
    /// nor `<`, streams ending inside an octet-counted frame, empty datagrams.
    pub framing_errors: u64,
    /// Stream messages framed by octet counting (RFC 6587 3.4.1, RFC 5425).
    pub octet_counted_frames: u64,
    /// Stream messages framed by a trailing LF (RFC 6587 3.4.2).
    pub lf_frames: u64,
    /// Datagrams larger than the receive slot (32 KiB), counted as messages, truncated.
    pub udp_truncated: u64,
}

impl SyslogStats {
    pub fn messages(&self) -> u64 {
        self.messages_tcp + self.messages_udp + self.messages_tls + self.messages_relp
    }

    pub(crate) fn add(&mut self, o: &SyslogStats) {
        self.messages_tcp += o.messages_tcp;
        self.messages_udp += o.messages_udp;
        self.messages_tls += o.messages_tls;
        self.messages_relp += o.messages_relp;
        self.bytes += o.bytes;
        self.framing_errors += o.framing_errors;
        self.octet_counted_frames += o.octet_counted_frames;
        self.lf_frames += o.lf_frames;
        self.udp_truncated += o.udp_truncated;
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunStats {
    pub agents: BTreeMap<String, AgentStats>,
    pub received: u64,
    pub distinct: u64,
    pub duplicates: u64,
    pub gaps: u64,
    /// Send → receive lag of the tagged events that carried their send time, over every
    /// agent (null when none did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingest_lag_ms: Option<LagSummary>,
}

/// A lag distribution in milliseconds (the sink's clock minus the tag's send time).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LagSummary {
    pub count: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// Longest lag told apart by the sink (a day, in ms): longer ones count as a day.
const MAX_LAG_MS: u64 = 86_400_000;

fn lag_histogram() -> Option<Histogram<u64>> {
    Histogram::new_with_bounds(1, MAX_LAG_MS, 2).ok()
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentStats {
    /// Tagged events received (distinct + duplicates).
    pub received: u64,
    /// Different seqs seen.
    pub distinct: u64,
    /// Events whose seq had been seen before.
    pub duplicates: u64,
    /// The highest seq seen.
    pub max_seq: u64,
    /// Seqs below `max_seq` never seen.
    pub gaps: u64,
}

impl SinkStats {
    /// Responses sent with `code`.
    pub fn status_count(&self, code: u16) -> u64 {
        self.status.get(&code.to_string()).copied().unwrap_or(0)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// Status codes are counted in an array indexed by code.
const STATUS_SLOTS: usize = 600;

/// One worker thread's counters.
pub(crate) struct Totals {
    pub requests: u64,
    pub events_received: u64,
    pub bytes_received: u64,
    pub resets: u64,
    pub status: Box<[u64; STATUS_SLOTS]>,
    pub syslog: SyslogStats,
    pub tls_handshake_errors: u64,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            requests: 0,
            events_received: 0,
            bytes_received: 0,
            resets: 0,
            status: Box::new([0; STATUS_SLOTS]),
            syslog: SyslogStats::default(),
            tls_handshake_errors: 0,
        }
    }
}

impl Totals {
    pub fn count_status(&mut self, code: u16) {
        if let Some(n) = self.status.get_mut(usize::from(code)) {
            *n += 1;
        }
    }
}

/// One (run, agent)'s seqs.
#[derive(Default)]
pub(crate) struct AgentLedger {
    received: u64,
    distinct: u64,
    duplicates: u64,
    max_seq: u64,
    seqs: SeqSet,
    /// Send → receive lags, ms (made at the first tag with a send time).
    lag: Option<Histogram<u64>>,
}

impl AgentLedger {
    /// Records one event's send → receive lag.
    #[inline]
    pub fn lag(&mut self, ms: u64) {
        if self.lag.is_none() {
            self.lag = lag_histogram();
        }
        if let Some(h) = self.lag.as_mut() {
            h.saturating_record(ms.clamp(1, MAX_LAG_MS));
        }
    }

    /// Records one tagged event; false when the seq is out of range (not counted).
    #[inline]
    pub fn record(&mut self, seq: u64) -> bool {
        match self.seqs.insert(seq) {
            Insert::New => {
                self.received += 1;
                self.distinct += 1;
                if seq > self.max_seq || self.distinct == 1 {
                    self.max_seq = seq;
                }
                true
            }
            Insert::Duplicate => {
                self.received += 1;
                self.duplicates += 1;
                true
            }
            Insert::OutOfRange => false,
        }
    }

    fn stats(&self) -> AgentStats {
        let gaps = if self.distinct == 0 {
            0
        } else {
            (self.max_seq + 1).saturating_sub(self.distinct)
        };
        AgentStats {
            received: self.received,
            distinct: self.distinct,
            duplicates: self.duplicates,
            max_seq: self.max_seq,
            gaps,
        }
    }
}

pub(crate) type AgentRef = Arc<Mutex<AgentLedger>>;
/// One run's agents.
type RunAgents = Arc<RwLock<HashMap<u32, AgentRef>>>;

/// Most run ids tracked (further runs count in totals only).
const MAX_RUNS: usize = 4096;
/// Most agents tracked per run.
const MAX_AGENTS: usize = 1 << 16;

/// Every (run, agent) seen, shared by all worker threads.
#[derive(Default)]
pub(crate) struct Ledger {
    runs: RwLock<HashMap<Box<[u8]>, RunAgents>>,
}

impl Ledger {
    /// The ledger of (run, agent), created on first use; `None` past the limits.
    pub fn agent(&self, run: &[u8], agent: u32) -> Option<AgentRef> {
        let existing = self.runs.read().ok()?.get(run).cloned();
        let agents = match existing {
            Some(a) => a,
            None => {
                let mut runs = self.runs.write().ok()?;
                if !runs.contains_key(run) && runs.len() >= MAX_RUNS {
                    return None;
                }
                runs.entry(run.into()).or_default().clone()
            }
        };
        if let Some(a) = agents.read().ok()?.get(&agent) {
            return Some(a.clone());
        }
        let mut w = agents.write().ok()?;
        if !w.contains_key(&agent) && w.len() >= MAX_AGENTS {
            return None;
        }
        Some(w.entry(agent).or_default().clone())
    }

    /// Per-run stats, merged over agents.
    pub fn snapshot(&self) -> BTreeMap<String, RunStats> {
        let mut out = BTreeMap::new();
        let Ok(runs) = self.runs.read() else {
            return out;
        };
        for (run, agents) in runs.iter() {
            let mut rs = RunStats::default();
            let mut lag: Option<Histogram<u64>> = None;
            if let Ok(agents) = agents.read() {
                for (id, a) in agents.iter() {
                    let Ok(a) = a.lock() else { continue };
                    let s = a.stats();
                    rs.received += s.received;
                    rs.distinct += s.distinct;
                    rs.duplicates += s.duplicates;
                    rs.gaps += s.gaps;
                    rs.agents.insert(id.to_string(), s);
                    if let Some(h) = &a.lag {
                        if let Some(all) = lag.as_mut() {
                            let _ = all.add(h);
                        } else {
                            lag = Some(h.clone());
                        }
                    }
                }
            }
            rs.ingest_lag_ms = lag.filter(|h| !h.is_empty()).map(|h| LagSummary {
                count: h.len(),
                p50: h.value_at_quantile(0.5),
                p99: h.value_at_quantile(0.99),
                max: h.max(),
            });
            out.insert(String::from_utf8_lossy(run).into_owned(), rs);
        }
        out
    }
}

/// Merges per-thread totals and the ledger into one snapshot.
pub(crate) fn merge(threads: &[&Mutex<Totals>], ledger: &Ledger, connections: u64) -> SinkStats {
    let mut s = SinkStats {
        connections_opened: connections,
        ..SinkStats::default()
    };
    let mut status = [0u64; STATUS_SLOTS];
    for t in threads {
        let Ok(t) = t.lock() else { continue };
        s.requests += t.requests;
        s.events_received += t.events_received;
        s.bytes_received += t.bytes_received;
        s.resets += t.resets;
        s.syslog.add(&t.syslog);
        s.tls_handshake_errors += t.tls_handshake_errors;
        for (to, n) in status.iter_mut().zip(t.status.iter()) {
            *to += n;
        }
    }
    for (code, n) in status.iter().enumerate() {
        if *n > 0 {
            s.status.insert(code.to_string(), *n);
        }
    }
    s.runs = ledger.snapshot();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_counts_duplicates_and_gaps() {
        let l = Ledger::default();
        let a = l.agent(b"r-1", 3).unwrap();
        {
            let mut a = a.lock().unwrap();
            for seq in [0, 1, 2, 2, 5, 1] {
                assert!(a.record(seq));
            }
            assert!(!a.record(u64::MAX));
        }
        let b = l.agent(b"r-1", 3).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let snap = l.snapshot();
        let r = &snap["r-1"];
        let ag = &r.agents["3"];
        assert_eq!(
            (ag.received, ag.distinct, ag.duplicates, ag.max_seq, ag.gaps),
            (6, 4, 2, 5, 2)
        );
        assert_eq!((r.received, r.distinct, r.duplicates, r.gaps), (6, 4, 2, 2));
    }

    #[test]
    fn stats_round_trip_through_json() {
        let threads = [Mutex::new(Totals::default()), Mutex::new(Totals::default())];
        threads[0].lock().unwrap().count_status(200);
        threads[1].lock().unwrap().count_status(200);
        threads[1].lock().unwrap().count_status(429);
        threads[1].lock().unwrap().requests = 3;
        let l = Ledger::default();
        l.agent(b"r-x", 0).unwrap().lock().unwrap().record(0);
        let refs: Vec<&Mutex<Totals>> = threads.iter().collect();
        let s = merge(&refs, &l, 2);
        assert_eq!(s.status_count(200), 2);
        assert_eq!(s.status_count(429), 1);
        let back: SinkStats = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(back, s);
        assert!(s.to_json().contains(r#""status":{"200":2,"429":1}"#));
    }
}
