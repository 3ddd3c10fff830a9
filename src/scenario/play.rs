//! Playing a resolved scenario: every stage event placed in time (count events spread over
//! the stage's window, one in each equal slice of it, at a seeded point in the slice), the
//! whole chain in time order, and event n rendered by its source pack's generator with the
//! shared entities pinned and the stage's tactic and technique in its tag. Event n depends
//! only on (scenario, seed, n), so the same seed gives the same bytes.

use std::sync::Arc;
use std::time::Duration;

use rand_core::Rng;

use super::plan::{self, Scenario};
use crate::generate::time::UnixNs;
use crate::generate::{EventCtx, Generator, Stage};

/// One stage event's place: scenario time after the anchor, its stage, its number in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Planned {
    pub at: Duration,
    pub stage: u16,
    pub k: u32,
}

const TIME_KEY: u64 = 0x5449_4d45; // "TIME"
const PICK_KEY: u64 = 0x5049_434b; // "PICK"

/// Every stage event, in time order (ties by stage, then number).
pub fn order(s: &Scenario) -> Vec<Planned> {
    let mut out = Vec::with_capacity(s.total_events() as usize);
    for (i, st) in s.stages.iter().enumerate() {
        let d = st.duration.as_nanos() as f64;
        for k in 0..st.count {
            let key = TIME_KEY ^ ((i as u64) << 40) ^ (k << 1);
            let u = unit(plan::rng(s.seed, key).next_u64());
            let off = if st.duration.is_zero() {
                0
            } else {
                let ns = (d * ((k as f64 + u) / st.count as f64)) as u64;
                ns.min(st.duration.as_nanos() as u64 - 1)
            };
            out.push(Planned {
                at: st.start + Duration::from_nanos(off),
                stage: i as u16,
                k: k as u32,
            });
        }
    }
    out.sort_unstable();
    out
}

/// A uniform number in [0, 1) from 64 random bits.
fn unit(r: u64) -> f64 {
    (r >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Which of its stage's candidate event types event `p` is.
#[allow(
    clippy::indexing_slicing,
    reason = "a planned event's stage is an index the planner gave into the scenario's stages"
)]
pub fn candidate(s: &Scenario, p: &Planned) -> usize {
    let key = PICK_KEY ^ (u64::from(p.stage) << 40) ^ (u64::from(p.k) << 1);
    s.stages[usize::from(p.stage)]
        .pick
        .sample(plan::rng(s.seed, key).next_u64())
}

/// Renders a scenario's events, one generator per source pack.
pub struct Player {
    scenario: Arc<Scenario>,
    order: Vec<Planned>,
    gens: Vec<Generator>,
    anchor: UnixNs,
}

#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path (scenario lane); n is the lane's event number, < order.len() \
              (the lane plays exactly the planned events); a planned event's stage indexes the \
              scenario's stages, its stage's source indexes gens (one per source), and \
              candidate() samples below the stage's candidate count"
)]
impl Player {
    /// `anchor` is the scenario's time zero (its own, or when the play starts); `run_id` goes
    /// into every tag.
    pub fn new(scenario: Arc<Scenario>, run_id: &str, anchor: UnixNs) -> Player {
        let gens = scenario
            .sources
            .iter()
            .map(|p| Generator::new(p.program.clone(), scenario.seed, run_id))
            .collect();
        Player {
            order: order(&scenario),
            scenario,
            gens,
            anchor,
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    pub fn planned(&self) -> &[Planned] {
        &self.order
    }

    pub fn anchor(&self) -> UnixNs {
        self.anchor
    }

    /// When event `n` is due, after the play's start, at the scenario's speed.
    pub fn due(&self, n: usize) -> Duration {
        self.scenario.speed.wall(self.order[n].at)
    }

    /// The time of event `n` (the anchor plus its scenario time), ns since the epoch.
    pub fn time_ns(&self, n: usize) -> UnixNs {
        self.anchor + self.order[n].at.as_nanos() as i64
    }

    /// The source (index into the scenario's sources) of event `n`.
    pub fn source_of(&self, n: usize) -> usize {
        self.scenario.stages[usize::from(self.order[n].stage)].source
    }

    /// Appends event `n`, tagged with `agent` and `seq` (and the send time, when given).
    pub fn render(
        &mut self,
        n: usize,
        agent: u32,
        seq: u64,
        sent_ms: Option<u64>,
        out: &mut Vec<u8>,
    ) {
        let p = self.order[n];
        let s = &*self.scenario;
        let st = &s.stages[usize::from(p.stage)];
        let c = &st.candidates[candidate(s, &p)];
        let ctx = EventCtx {
            index: n as u64,
            time_ns: self.time_ns(n),
            agent,
            seq,
            sent_ms,
        };
        let stage = Stage {
            pins: &c.pins,
            tactic: st.tactic,
            technique: st.technique.id,
        };
        self.gens[st.source].render_stage(c.event, &ctx, &stage, out);
    }
}
