//! Expected against held, pure: per agent stored, lost (with the first missing seqs as
//! ranges), duplicated and unexpected (seqs beyond `events_sent` or in failed ranges), and
//! agents the report does not name. For a store that keeps counts only, lost is the accepted
//! count minus the distinct seqs held, and the missing seqs cannot be listed.

use serde::Serialize;

use super::expected::{Expected, ExpectedAgent};
use super::held::{AgentHold, CountHold, Held, SeqHold};

/// Missing (or duplicated) seqs listed per agent.
pub const LIST_SEQS: usize = 20;

/// One agent's verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct AgentResult {
    pub agent: u32,
    /// Events the report says were accepted.
    pub expected: u64,
    /// Accepted seqs the store holds (at least once).
    pub stored: u64,
    /// Accepted seqs the store does not hold.
    pub lost: u64,
    /// The first lost seqs (at most 20), as ranges `[from, to)`; empty when the store keeps no
    /// seq list (`seqs_listed` false).
    pub lost_first: Vec<[u64; 2]>,
    /// Copies beyond the first of any seq.
    pub duplicated: u64,
    /// The first duplicated seqs (at most 20).
    pub duplicated_first: Vec<u64>,
    /// Seqs held that were never accepted: beyond `events_sent` or in a failed range.
    pub unexpected: u64,
    pub unexpected_first: Vec<u64>,
    /// Whether the store's answer lists seqs (false: counts only).
    pub seqs_listed: bool,
}

/// The comparison of one store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Comparison {
    pub agents: Vec<AgentResult>,
    pub expected: u64,
    pub stored: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub unexpected: u64,
    /// Tagged events of this run from agents the report does not name.
    pub unknown_agent_events: u64,
}

pub fn compare(exp: &Expected, held: &Held) -> Comparison {
    let mut c = Comparison::default();
    for ea in &exp.agents {
        let r = match held.agents.get(&ea.agent) {
            Some(AgentHold::Seqs(h)) => seqs(ea, h),
            Some(AgentHold::Counts(h)) => counts(ea, h),
            None => seqs(ea, &SeqHold::new(0)),
        };
        c.expected += r.expected;
        c.stored += r.stored;
        c.lost += r.lost;
        c.duplicated += r.duplicated;
        c.unexpected += r.unexpected;
        c.agents.push(r);
    }
    for (id, h) in &held.agents {
        if exp.agent(*id).is_none() {
            c.unknown_agent_events += match h {
                AgentHold::Seqs(s) => s.copies,
                AgentHold::Counts(n) => n.received,
            };
        }
    }
    c
}

fn seqs(ea: &ExpectedAgent, h: &SeqHold) -> AgentResult {
    let accepted = ea.accepted();
    let expected: u64 = accepted.iter().map(|(f, t)| t - f).sum();
    let stored: u64 = accepted.iter().map(|&(f, t)| h.count_in(f, t)).sum();
    let mut missing = Vec::new();
    for &(f, t) in &accepted {
        if missing.len() >= LIST_SEQS {
            break;
        }
        h.missing_in(f, t, LIST_SEQS, &mut missing);
    }
    let in_failed: u64 = ea.failed.iter().map(|&(f, t)| h.count_in(f, t)).sum();
    let mut unexpected_first: Vec<u64> = Vec::new();
    for &(f, t) in &ea.failed {
        let mut s = f;
        while s < t && unexpected_first.len() < LIST_SEQS {
            if h.has(s) {
                unexpected_first.push(s);
            }
            s += 1;
        }
    }
    unexpected_first.extend(
        h.beyond
            .keys()
            .take(LIST_SEQS.saturating_sub(unexpected_first.len())),
    );
    AgentResult {
        agent: ea.agent,
        expected,
        stored,
        lost: expected - stored,
        lost_first: ranges(&missing),
        duplicated: h.extra_copies,
        duplicated_first: h.dup_seqs.keys().take(LIST_SEQS).copied().collect(),
        unexpected: in_failed + h.beyond_distinct,
        unexpected_first,
        seqs_listed: true,
    }
}

fn counts(ea: &ExpectedAgent, h: &CountHold) -> AgentResult {
    let expected = ea.accepted_count();
    // Seqs at or beyond events_sent show in max_seq; how many cannot be told from counts.
    let unexpected = u64::from(h.distinct > 0 && h.max_seq >= ea.events_sent);
    let stored = h.distinct.saturating_sub(unexpected).min(expected);
    AgentResult {
        agent: ea.agent,
        expected,
        stored,
        lost: expected - stored,
        duplicated: h.received.saturating_sub(h.distinct),
        unexpected,
        seqs_listed: false,
        ..AgentResult::default()
    }
}

/// Sorted seqs folded into ranges `[from, to)`.
pub fn ranges(seqs: &[u64]) -> Vec<[u64; 2]> {
    let mut out: Vec<[u64; 2]> = Vec::new();
    for &s in seqs {
        match out.last_mut() {
            Some(r) if r[1] == s => r[1] = s + 1,
            _ => out.push([s, s + 1]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn exp(agents: Vec<ExpectedAgent>) -> Expected {
        Expected {
            run_id: "r-1".into(),
            agents,
            max_lost_events: None,
            max_dup_events: None,
        }
    }

    #[test]
    fn lost_duplicated_unexpected_exactly() {
        let ea = ExpectedAgent {
            agent: 0,
            events_sent: 100,
            failed: vec![(10, 20)],
            failed_overflow: false,
        };
        let mut h = SeqHold::new(100);
        for s in 0..100u64 {
            if [3, 4, 5, 50].contains(&s) || (10..20).contains(&s) && s != 12 {
                continue;
            }
            h.add(s);
        }
        h.add(7);
        h.add(7);
        h.add(150);
        let mut held = Held::default();
        held.agents.insert(0, AgentHold::Seqs(h));
        let mut other = SeqHold::new(0);
        other.add(1);
        held.agents.insert(9, AgentHold::Seqs(other));
        let c = compare(&exp(vec![ea]), &held);
        let a = &c.agents[0];
        assert_eq!((a.expected, a.stored, a.lost), (90, 86, 4));
        assert_eq!(a.lost_first, vec![[3, 6], [50, 51]]);
        assert_eq!((a.duplicated, a.duplicated_first.clone()), (2, vec![7]));
        assert_eq!(
            (a.unexpected, a.unexpected_first.clone()),
            (2, vec![12, 150])
        );
        assert_eq!(c.unknown_agent_events, 1);
    }

    #[test]
    fn absent_agent_is_all_lost_and_counts_cannot_list() {
        let ea = |agent| ExpectedAgent {
            agent,
            events_sent: 30,
            failed: vec![],
            failed_overflow: false,
        };
        let mut held = Held {
            agents: BTreeMap::new(),
            ..Held::default()
        };
        held.agents.insert(
            1,
            AgentHold::Counts(CountHold {
                received: 30,
                distinct: 28,
                max_seq: 29,
            }),
        );
        let c = compare(&exp(vec![ea(0), ea(1)]), &held);
        assert_eq!(c.agents[0].lost, 30);
        assert_eq!(c.agents[0].lost_first, vec![[0, 20]]);
        let b = &c.agents[1];
        assert_eq!(
            (b.stored, b.lost, b.duplicated, b.seqs_listed),
            (28, 2, 2, false)
        );
        assert!(b.lost_first.is_empty());
    }
}
