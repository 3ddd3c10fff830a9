//! Ground truth: what a detection engineer scores alerts against — per stage the technique
//! and tactic (ids and names), the time window, the count, the event types drawn, the shared
//! entities it shows, and its first and last events (time, accounting id and sequence
//! number); the shared entities with their attributes. Written by `scenario --truth` and as
//! the run report's `scenario` section.

use std::collections::BTreeMap;

use serde::Serialize;

use super::attack;
use super::plan::Scenario;
use super::play::{self, Planned};
use crate::generate::time::UnixNs;
use crate::pack::entities::EntityKind;

pub const SCHEMA: &str = "ingestbench.truth/1";

#[derive(Clone, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct Truth {
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub schema: &'static str,
    pub scenario: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub attack_version: &'static str,
    pub seed: u64,
    pub anchor: String,
    pub speed: String,
    pub run_id: String,
    pub agent: u32,
    pub events: u64,
    pub shared: Vec<SharedTruth>,
    pub stages: Vec<StageTruth>,
}

#[derive(Clone, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct Named {
    pub id: String,
    pub name: String,
}

#[derive(Clone, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct SharedTruth {
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub role: &'static str,
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub kind: &'static str,
    pub attributes: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct Window {
    pub start: String,
    pub end: String,
}

#[derive(Clone, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct EventRef {
    /// `run:agent:seq`, the event's accounting identity.
    pub id: String,
    pub seq: u64,
    pub time: String,
}

#[derive(Clone, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct StageTruth {
    pub index: usize,
    pub name: String,
    pub tactic: Named,
    pub technique: Named,
    pub source: String,
    pub count: u64,
    pub window: Window,
    pub event_types: BTreeMap<String, u64>,
    /// The shared roles its events show (each by at least one of its event types).
    #[serde(deserialize_with = "crate::report::de::leak_vec")]
    pub shared: Vec<&'static str>,
    pub first: EventRef,
    pub last: EventRef,
}

/// Attributes shown for a shared entity of each kind.
fn shown(kind: EntityKind) -> &'static [&'static str] {
    match kind {
        EntityKind::User => &["name", "upn", "display", "domain", "sid"],
        EntityKind::Host => &["name", "fqdn", "ip", "os"],
        EntityKind::Ip => &["addr", "country", "city", "asn", "org"],
        EntityKind::Domain => &["name"],
        EntityKind::Process => &["name", "path"],
    }
}

/// The ground truth of `s` played from `anchor` as `run_id`/`agent`, where event n of
/// `order` carries sequence number n.
#[allow(
    clippy::indexing_slicing,
    reason = "n ranges over order's indices; stages and candidates are indexed as the planner \
              made them; every stage has count >= 1 (scenario::file checks it) so mine is not \
              empty"
)]
pub fn build(s: &Scenario, order: &[Planned], anchor: UnixNs, run_id: &str, agent: u32) -> Truth {
    let at = |p: &Planned| anchor + p.at.as_nanos() as i64;
    let event_ref = |n: usize| EventRef {
        id: format!("{run_id}:{agent}:{n}"),
        seq: n as u64,
        time: rfc3339(at(&order[n])),
    };
    let stages = s
        .stages
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let mine: Vec<usize> = (0..order.len())
                .filter(|&n| usize::from(order[n].stage) == i)
                .collect();
            let mut event_types: BTreeMap<String, u64> = BTreeMap::new();
            for &n in &mine {
                let c = &st.candidates[play::candidate(s, &order[n])];
                *event_types.entry(c.name.clone()).or_default() += 1;
            }
            let start = anchor + st.start.as_nanos() as i64;
            StageTruth {
                index: i,
                name: st.name.clone(),
                tactic: Named {
                    id: st.tactic.into(),
                    name: attack::tactic_name(st.tactic).unwrap_or_default().into(),
                },
                technique: Named {
                    id: st.technique.id.into(),
                    name: st.technique.name.into(),
                },
                source: s.sources[st.source].def.id.clone(),
                count: st.count,
                window: Window {
                    start: rfc3339(start),
                    end: rfc3339(start + st.duration.as_nanos() as i64),
                },
                event_types,
                shared: st.shows().iter().map(|r| r.name()).collect(),
                first: event_ref(mine[0]),
                last: event_ref(mine[mine.len() - 1]),
            }
        })
        .collect();
    let shared = s
        .shared
        .iter()
        .map(|sh| {
            let kind = sh.role.kind();
            let pool = s.entities.pool(kind);
            let attributes = shown(kind)
                .iter()
                .filter_map(|a| {
                    let v = pool.get_by_name(sh.entity as usize, a)?;
                    Some((a.to_string(), v.to_string()))
                })
                .collect();
            SharedTruth {
                role: sh.role.name(),
                kind: kind.name(),
                attributes,
            }
        })
        .collect();
    Truth {
        schema: SCHEMA,
        scenario: s.name.clone(),
        description: s.description.clone(),
        attack_version: attack::VERSION,
        seed: s.seed,
        anchor: rfc3339(anchor),
        speed: s.speed.to_string(),
        run_id: run_id.into(),
        agent,
        events: order.len() as u64,
        shared,
        stages,
    }
}

/// `2024-06-03T13:00:00.000Z`
pub fn rfc3339(ns: UnixNs) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.max(0) as u64);
    humantime::format_rfc3339_millis(t).to_string()
}
