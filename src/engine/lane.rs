//! The scenario lane: a worker of its own beside the background workers, playing a
//! scenario's stage events through the same target, connections and retries. Its events are
//! due at the scenario's own times (in schedule time, so a pause holds them too), a batch
//! never mixes stages (each stage has its framer: its source's sourcetype and syslog
//! header, its tactic and technique among HEC `fields`), and it is its own accounting
//! agent, counted apart from the background's target.

use crate::engine::mix::Framings;
use crate::scenario::play::Player;

/// What the lane worker plays.
pub struct Lane {
    pub player: Player,
    /// The framing of each stage's batches.
    pub wire: Framings,
    /// When each event is due, seconds of schedule time after the start.
    due: Vec<f64>,
    /// The stage of each event, in play order.
    stages: Vec<u16>,
}

impl Lane {
    pub fn new(player: Player, wire: Framings) -> Lane {
        let due = (0..player.len())
            .map(|n| player.due(n).as_secs_f64())
            .collect();
        let stages = player.planned().iter().map(|p| p.stage).collect();
        Lane {
            player,
            wire,
            due,
            stages,
        }
    }

    pub fn len(&self) -> u64 {
        self.due.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.due.is_empty()
    }

    /// Events due by `active` seconds of schedule time.
    pub fn owed_at(&self, active: f64) -> u64 {
        self.due.partition_point(|d| *d <= active) as u64
    }

    /// Schedule time at which the `n`-th event (1-based) is due.
    pub fn due_of(&self, n: u64) -> Option<f64> {
        match n {
            0 => Some(0.0),
            n => self.due.get(n as usize - 1).copied(),
        }
    }

    /// The stage of event `n` (0-based).
    #[allow(
        clippy::indexing_slicing,
        reason = "n is an event of this lane (< len()), the worker asks about nothing else; end \
                  is clamped to len()"
    )]
    pub fn stage_of(&self, n: u64) -> usize {
        usize::from(self.stages[n as usize])
    }

    /// How many of the events from `n` on, at most `max`, belong to `n`'s stage.
    #[allow(
        clippy::indexing_slicing,
        reason = "n is an event of this lane (< len()), the worker asks about nothing else; end \
                  is clamped to len()"
    )]
    pub fn same_stage(&self, n: u64, max: u64) -> u64 {
        let s = self.stages[n as usize];
        let end = (n + max).min(self.len()) as usize;
        self.stages[n as usize..end]
            .iter()
            .take_while(|x| **x == s)
            .count() as u64
    }
}
