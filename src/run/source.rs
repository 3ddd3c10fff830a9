//! The generation side of a run's plan (shared with `gen`): from a validated `Config` to which
//! packs (one, or the sources of a mix), entity pool sizes (a mix shares one set of pools,
//! each kind as large as any source asks), accounting on or off, jitter, how event times are
//! chosen (a mix's first source says, for all), and the seed when the config gives none. With `run::plan` it is where the config is translated;
//! nothing after setup reads it.

use crate::config::Config;
use crate::config::schema::{Mode, TimestampMode};
use crate::generate::time::{self, UnixNs};
use crate::generate::timeline::Timeline;
use crate::pack::entities::{EntityKind, Sizes};

#[derive(Clone, Debug)]
pub struct SourcePlan {
    /// Each source's pack id and version requirement, in the config's order.
    pub packs: Vec<(String, semver::VersionReq)>,
    pub sizes: Sizes,
    pub accounting: bool,
    pub jitter_ns: u64,
    pub times: TimeSpec,
    pub seed: Option<u64>,
}

/// How event times are chosen, before the run knows its start time and size.
#[derive(Clone, Debug)]
pub enum TimeSpec {
    /// Stamp events with the clock.
    Realtime,
    /// Event i at `anchor + i / eps` (deterministic mode): the same bytes on any thread count;
    /// the same bytes across runs when an anchor is given.
    Virtual { anchor: Option<UnixNs> },
    /// Spread the run's events over `span` from `anchor` (default: `now - span`).
    Backfill {
        anchor: Option<UnixNs>,
        span_ns: i64,
        business_hours: bool,
    },
}

/// The source side of `c`, or `None` for a plain HTTP load without a source pack.
pub fn source_plan(c: &Config) -> Option<SourcePlan> {
    let s = c.source()?;
    let mut sizes = Sizes::default();
    let mut asked: Vec<(EntityKind, usize)> = Vec::new();
    for (kind, n) in c.sources.iter().flat_map(|s| &s.entities) {
        if let Some(k) = EntityKind::parse(kind) {
            match asked.iter_mut().find(|(a, _)| *a == k) {
                Some((_, m)) => *m = (*m).max(*n as usize),
                None => asked.push((k, *n as usize)),
            }
        }
    }
    for (k, n) in asked {
        sizes.set(k, n);
    }
    let anchor = s.timestamps.anchor.as_deref().and_then(time::parse_rfc3339);
    let times = match (s.timestamps.mode, c.mode) {
        (TimestampMode::Backfill, _) => TimeSpec::Backfill {
            anchor,
            span_ns: s.timestamps.span.map_or(0, |d| d.0.as_nanos() as i64),
            business_hours: s.timestamps.business_hours,
        },
        (TimestampMode::Realtime, Mode::Deterministic) => TimeSpec::Virtual { anchor },
        (TimestampMode::Realtime, Mode::Realtime) => TimeSpec::Realtime,
    };
    Some(SourcePlan {
        packs: c
            .sources
            .iter()
            .map(|s| {
                let v = semver::VersionReq::parse(&s.version).unwrap_or(semver::VersionReq::STAR);
                (s.id.clone(), v)
            })
            .collect(),
        sizes,
        accounting: s.accounting,
        jitter_ns: s.timestamps.jitter.0.as_nanos() as u64,
        times,
        seed: c.seed,
    })
}

impl TimeSpec {
    /// The timeline for a run starting at `now` that will send about `total` events at about
    /// `eps` events per second.
    pub fn timeline(&self, now: UnixNs, total: u64, eps: f64) -> Timeline {
        let step = if eps > 0.0 {
            (1e9 / eps) as i64
        } else {
            1_000_000
        }
        .max(1);
        match self {
            TimeSpec::Realtime => Timeline::Realtime,
            TimeSpec::Virtual { anchor } => Timeline::Fixed {
                start: anchor.unwrap_or(now),
                step,
            },
            TimeSpec::Backfill {
                anchor,
                span_ns,
                business_hours,
            } => Timeline::backfill(
                anchor.unwrap_or(now - span_ns),
                *span_ns,
                total,
                *business_hours,
            ),
        }
    }
}

/// A seed from the clock and the process id: good enough to differ between runs.
pub fn random_seed() -> u64 {
    let t = time::now() as u64;
    t ^ (u64::from(std::process::id()) << 32) ^ 0x5851_f42d_4c95_7f2d
}
