//! The report's `scenario` section (`run --scenario`): the stage events counted apart from
//! the background load — due, sent, accepted, failed, never sent, and what the built-in sink
//! stored of them — their latency, and the ground truth a detection engineer scores against.

use std::fmt::Write as _;

use serde::Serialize;

use super::text::count;

use crate::scenario::truth::Truth;
use crate::stats::result::LaneResult;

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ScenarioReport {
    pub file: String,
    /// The accounting agent its events carry.
    pub agent: u32,
    /// Stage events in the scenario: its schedule.
    pub events: u64,
    pub events_sent: u64,
    pub events_accepted: u64,
    pub events_failed: u64,
    /// Due but never sent (the run ended or stopped first).
    pub events_not_sent: u64,
    /// HEC `ack: true`: its batches accepted with an ackId never confirmed as indexed.
    pub acks_pending: u64,
    /// What the built-in sink holds of them (absent for other targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<StageStored>,
    /// From each batch's intended send time, as for the background.
    pub latency_ms: super::Percentiles,
    #[serde(deserialize_with = "crate::report::de::owned")]
    pub truth: Truth,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, serde::Deserialize)]
pub struct StageStored {
    pub distinct: u64,
    pub duplicates: u64,
    /// Accepted, and not stored.
    pub lost: u64,
}

impl ScenarioReport {
    pub fn new(file: &str, agent: u32, lane: &LaneResult, truth: Truth) -> ScenarioReport {
        let t = &lane.totals;
        ScenarioReport {
            file: file.to_string(),
            agent,
            events: lane.events,
            events_sent: t.events_sent,
            events_accepted: t.events_accepted,
            events_failed: t.events_failed,
            events_not_sent: lane.events.saturating_sub(t.events_sent),
            acks_pending: t.acks_pending,
            stored: None,
            latency_ms: super::percentiles(&lane.latency),
            truth,
        }
    }

    /// Sets what the sink stored of its agent's events.
    pub fn with_stored(mut self, distinct: u64, duplicates: u64) -> ScenarioReport {
        self.stored = Some(StageStored {
            distinct,
            duplicates,
            lost: self.events_accepted.saturating_sub(distinct),
        });
        self
    }

    /// Why the scenario did not do what it was asked, if it did not: every stage event
    /// accepted (and, where the sink says, stored once).
    pub fn shortfalls(&self) -> Vec<String> {
        let mut v = Vec::new();
        let missing = self.events - self.events_accepted.min(self.events);
        if missing > 0 {
            v.push(format!(
                "scenario: {missing} of {} stage events were not accepted ({} failed, {} never sent)",
                self.events, self.events_failed, self.events_not_sent
            ));
        }
        if self.acks_pending > 0 {
            v.push(format!(
                "scenario: {} stage batches accepted were never acknowledged as indexed",
                self.acks_pending
            ));
        }
        v
    }

    /// Stage events the sink lost or holds twice, if it says.
    pub fn lost_or_duplicated(&self) -> Option<String> {
        let s = self.stored.as_ref()?;
        (s.lost > 0 || s.duplicates > 0).then(|| {
            format!(
                "scenario: the sink lost {} and holds {} twice of {} accepted stage events",
                s.lost, s.duplicates, self.events_accepted
            )
        })
    }
}

/// The text block: the lane's counts, then one line per stage of the ground truth.
pub fn text(o: &mut String, s: &ScenarioReport) {
    let t = &s.truth;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "scenario {} ({}, seed {}, speed {}, agent {}): {} stage events, sent {}, accepted {}, failed {}, not sent {}",
        t.scenario,
        s.file,
        t.seed,
        t.speed,
        s.agent,
        count(s.events),
        count(s.events_sent),
        count(s.events_accepted),
        count(s.events_failed),
        count(s.events_not_sent)
    );
    if let Some(st) = &s.stored {
        let _ = writeln!(
            o,
            "         stored {}, duplicates {}, lost {}",
            count(st.distinct),
            count(st.duplicates),
            count(st.lost)
        );
    }
    for st in &t.stages {
        let _ = writeln!(
            o,
            "  stage {} {} {} / {} {}: {} x {} from {} to {}, seq {}..={}",
            st.index,
            st.tactic.id,
            st.tactic.name,
            st.technique.id,
            st.technique.name,
            count(st.count),
            st.source,
            st.window.start,
            st.window.end,
            st.first.seq,
            st.last.seq
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(events: u64, accepted: u64, sent: u64) -> ScenarioReport {
        ScenarioReport {
            file: "s.yaml".into(),
            agent: 2,
            events,
            events_sent: sent,
            events_accepted: accepted,
            events_failed: sent - accepted,
            events_not_sent: events - sent,
            acks_pending: 0,
            stored: None,
            latency_ms: Default::default(),
            truth: crate::scenario::truth::Truth {
                schema: crate::scenario::truth::SCHEMA,
                scenario: "t".into(),
                description: None,
                attack_version: crate::scenario::attack::VERSION,
                seed: 1,
                anchor: String::new(),
                speed: "1x".into(),
                run_id: "r".into(),
                agent: 2,
                events,
                shared: vec![],
                stages: vec![],
            },
        }
    }

    #[test]
    fn every_stage_event_must_be_accepted_and_stored_once() {
        assert!(report(70, 70, 70).shortfalls().is_empty());
        let short = report(70, 60, 65).shortfalls();
        assert_eq!(
            short,
            ["scenario: 10 of 70 stage events were not accepted (5 failed, 5 never sent)"]
        );
        let mut unacked = report(70, 70, 70);
        unacked.acks_pending = 2;
        assert_eq!(unacked.shortfalls().len(), 1);
        assert!(report(70, 70, 70).lost_or_duplicated().is_none());
        let stored = report(70, 70, 70).with_stored(68, 1);
        assert_eq!(stored.stored.as_ref().map(|s| s.lost), Some(2));
        assert!(
            stored
                .lost_or_duplicated()
                .unwrap()
                .contains("lost 2 and holds 1 twice")
        );
    }
}
