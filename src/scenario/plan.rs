//! A scenario resolved against the packs and ATT&CK: each stage's tactic and technique checked
//! against the shipped table, its source pack compiled, the event types that carry the
//! technique found (and among them those that play the most shared roles), the shared
//! entities drawn once, and the warnings a detection engineer should see (overlapping stages,
//! shared entities a stage cannot show, stages beyond sensible limits).

use std::sync::Arc;
use std::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::attack::{self, Technique};
use super::file::{ScenarioDef, Speed, StageDef};
use crate::config::units::Dur;
use crate::generate::alias::Alias;
use crate::generate::time::UnixNs;
use crate::pack::compile::CompiledPack;
use crate::pack::entities::Entities;
use crate::pack::load::{HostOs, Role};
use crate::pack::{self, Catalog};

/// A problem or warning: (field path, message).
pub type Problem = (String, String);

/// A stage's event count above which it is warned about.
pub const MAX_STAGE_EVENTS: u64 = 100_000;
/// A played rate (events per second of wall time) above which a stage is warned about.
pub const MAX_STAGE_EPS: f64 = 10_000.0;
/// How far after the anchor a stage may end before it is warned about.
pub const MAX_SPAN: Duration = Duration::from_secs(24 * 3600);

/// An entity drawn once for the scenario.
#[derive(Clone, Debug)]
pub struct Shared {
    pub role: Role,
    /// Its index in the pool of the role's kind.
    pub entity: u64,
}

/// An event type a stage draws from.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub event: usize,
    pub name: String,
    pub weight: u32,
    /// (slot, entity) for every shared role the event type plays.
    pub pins: Vec<(u16, u64)>,
    pub plays: Vec<Role>,
}

#[derive(Debug)]
pub struct Stage {
    pub name: String,
    pub tactic: &'static str,
    pub technique: &'static Technique,
    /// Index into `Scenario::sources`.
    pub source: usize,
    pub count: u64,
    pub start: Duration,
    pub duration: Duration,
    pub candidates: Vec<Candidate>,
    pub pick: Alias,
    pub path: String,
}

impl Stage {
    pub fn end(&self) -> Duration {
        self.start + self.duration
    }

    /// The shared roles at least one of its event types plays, in the scenario's order.
    pub fn shows(&self) -> Vec<Role> {
        let mut out: Vec<Role> = Vec::new();
        for c in &self.candidates {
            for r in &c.plays {
                if !out.contains(r) {
                    out.push(*r);
                }
            }
        }
        out
    }
}

/// A scenario ready to play.
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    pub anchor: Option<UnixNs>,
    pub speed: Speed,
    pub shared: Vec<Shared>,
    /// The source packs, each compiled once with accounting tags.
    pub sources: Vec<Arc<CompiledPack>>,
    pub stages: Vec<Stage>,
    pub entities: Arc<Entities>,
}

impl Scenario {
    pub fn total_events(&self) -> u64 {
        self.stages.iter().map(|s| s.count).sum()
    }

    /// Scenario time from the anchor to the end of the last stage.
    pub fn span(&self) -> Duration {
        self.stages.iter().map(Stage::end).max().unwrap_or_default()
    }
}

/// Resolves `def` with entity pools `entities` and `seed` (the file's, or what overrides it);
/// `speed` over the file's (default `default_speed`). Errors and warnings name the field at
/// fault.
#[allow(
    clippy::indexing_slicing,
    reason = "st.source and source are indices the planner resolved into sources; e ranges over \
              the pack's events; h comes from position(), the pick is modulo matching.len() \
              (checked non-empty), and j comes from enumerate()"
)]
pub fn resolve(
    def: &ScenarioDef,
    catalog: &Catalog,
    entities: Arc<Entities>,
    seed: u64,
    speed: Option<Speed>,
    default_speed: Speed,
) -> Result<(Scenario, Vec<Problem>), Vec<Problem>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let speed = speed.or(def.speed).unwrap_or(default_speed);
    let shared = draw_shared(&def.shared, seed, &entities);
    let mut sources: Vec<Arc<CompiledPack>> = Vec::new();
    let mut stages = Vec::new();
    for sd in &def.stages {
        match resolve_stage(sd, catalog, &entities, &shared, &mut sources) {
            Ok((st, w)) => {
                warnings.extend(w);
                stages.push(st);
            }
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let shared = match place_host(shared, &stages, &sources, seed, &entities) {
        Ok(s) => s,
        Err(e) => return Err(vec![e]),
    };
    // The host may have moved: pin again with the final entities.
    for st in &mut stages {
        for c in &mut st.candidates {
            let pack = &sources[st.source];
            c.pins = pins_for(pack, c.event, &shared).0;
        }
    }
    warnings.extend(timing_warnings(&stages, speed));
    let name = def.name.clone().unwrap_or_else(|| "scenario".into());
    Ok((
        Scenario {
            name,
            description: def.description.clone(),
            seed,
            anchor: def.anchor,
            speed,
            shared,
            sources,
            stages,
            entities,
        },
        warnings,
    ))
}

#[allow(
    clippy::indexing_slicing,
    reason = "st.source and source are indices the planner resolved into sources; e ranges over \
              the pack's events; h comes from position(), the pick is modulo matching.len() \
              (checked non-empty), and j comes from enumerate()"
)]
fn resolve_stage(
    sd: &StageDef,
    catalog: &Catalog,
    entities: &Arc<Entities>,
    shared: &[Shared],
    sources: &mut Vec<Arc<CompiledPack>>,
) -> Result<(Stage, Vec<Problem>), Vec<Problem>> {
    let at = |field: &str| format!("{}.{field}", sd.path);
    let mut errors = Vec::new();
    let tactic = attack::TACTICS
        .iter()
        .find(|(t, _)| *t == sd.tactic)
        .map(|(t, _)| *t);
    if tactic.is_none() {
        errors.push((at("tactic"), attack::unknown_tactic(&sd.tactic)));
    }
    let technique = attack::technique(&sd.technique);
    match (technique, tactic) {
        (None, _) => errors.push((at("technique"), attack::unknown_technique(&sd.technique))),
        (Some(t), Some(tac)) if !t.serves(tac) => {
            let serves: Vec<String> = t.tactics.iter().map(|x| attack::tactic_label(x)).collect();
            errors.push((
                at("tactic"),
                format!(
                    "{} {} is a technique of {}, not of {}",
                    t.id,
                    t.name,
                    serves.join(", "),
                    attack::tactic_label(tac)
                ),
            ));
        }
        _ => {}
    }
    let source = match source_index(sd, catalog, entities, sources) {
        Ok(i) => Some(i),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let (Some(technique), Some(tactic), Some(source), true) =
        (technique, tactic, source, errors.is_empty())
    else {
        return Err(errors);
    };
    let pack = &sources[source];
    let carried: Vec<usize> = (0..pack.def.events.len())
        .filter(|&e| pack.def.events[e].mitre.iter().any(|m| technique.covers(m)))
        .collect();
    if carried.is_empty() {
        return Err(vec![(at("technique"), not_carried(pack, technique))]);
    }
    let all: Vec<Candidate> = carried
        .into_iter()
        .map(|e| {
            let (pins, plays) = pins_for(pack, e, shared);
            Candidate {
                event: e,
                name: pack.def.events[e].name.clone(),
                weight: pack.def.events[e].weight,
                pins,
                plays,
            }
        })
        .collect();
    let most = all.iter().map(|c| c.plays.len()).max().unwrap_or(0);
    let candidates: Vec<Candidate> = all.into_iter().filter(|c| c.plays.len() == most).collect();
    let mut warnings = Vec::new();
    for s in shared {
        if !candidates.iter().any(|c| c.plays.contains(&s.role)) {
            warnings.push((
                at("source"),
                format!(
                    "{}'s {} events carry no {}: the shared {} does not appear in this stage",
                    pack.def.id,
                    technique.id,
                    s.role.name(),
                    s.role.name()
                ),
            ));
        }
    }
    let weights: Vec<u32> = candidates.iter().map(|c| c.weight).collect();
    let stage = Stage {
        name: sd
            .name
            .clone()
            .unwrap_or_else(|| format!("{} {}", technique.id, technique.name)),
        tactic,
        technique,
        source,
        count: sd.count,
        start: sd.start_offset,
        duration: sd.duration,
        pick: Alias::new(&weights),
        candidates,
        path: sd.path.clone(),
    };
    Ok((stage, warnings))
}

/// The stage's source pack, compiled once per scenario (with accounting tags).
fn source_index(
    sd: &StageDef,
    catalog: &Catalog,
    entities: &Entities,
    sources: &mut Vec<Arc<CompiledPack>>,
) -> Result<usize, Problem> {
    if let Some(i) = sources.iter().position(|p| p.def.id == sd.source) {
        return Ok(i);
    }
    let path = format!("{}.source", sd.path);
    if catalog.find(&sd.source).is_none() {
        return Err((path, pack::unknown_id(catalog, &sd.source)));
    }
    let p = pack::load_compiled(
        catalog,
        &sd.source,
        &semver::VersionReq::STAR,
        entities,
        true,
    )
    .map_err(|e| (path, e.join("; ")))?;
    sources.push(p);
    Ok(sources.len() - 1)
}

/// "windows.security has no event type carrying T1021.002 …; it carries: …".
fn not_carried(pack: &CompiledPack, technique: &Technique) -> String {
    let mut tags: Vec<(&str, Vec<&str>)> = Vec::new();
    for e in &pack.def.events {
        for m in &e.mitre {
            match tags.iter_mut().find(|(t, _)| t == m) {
                Some((_, names)) => names.push(&e.name),
                None => tags.push((m, vec![&e.name])),
            }
        }
    }
    tags.sort();
    let list: Vec<String> = tags
        .iter()
        .map(|(t, names)| {
            let name = attack::technique(t).map_or("", |x| x.name);
            format!("{t} {name} ({})", names.join(", "))
        })
        .collect();
    let carried = if list.is_empty() {
        "none".to_string()
    } else {
        list.join("; ")
    };
    format!(
        "{} has no event type carrying {} {}; it carries: {carried}",
        pack.def.id, technique.id, technique.name
    )
}

/// The slots of event type `event` that play a shared role, pinned to its entity.
fn pins_for(pack: &CompiledPack, event: usize, shared: &[Shared]) -> (Vec<(u16, u64)>, Vec<Role>) {
    let mut pins = Vec::new();
    let mut plays = Vec::new();
    let Some(compiled) = pack.program.events.get(event) else {
        return (pins, plays);
    };
    for s in shared {
        let slot = pack
            .def
            .role_field(event, s.role)
            .and_then(|f| compiled.slot_names.iter().position(|n| n == f));
        if let Some(slot) = slot {
            pins.push((slot as u16, s.entity));
            plays.push(s.role);
        }
    }
    (pins, plays)
}

/// A random generator for scenario draws that do not depend on a rendered event.
pub fn rng(seed: u64, key: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed ^ key.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

const SHARED_KEY: u64 = 0x5348_4152_4544; // "SHARED"

fn draw_shared(roles: &[Role], seed: u64, entities: &Entities) -> Vec<Shared> {
    roles
        .iter()
        .enumerate()
        .map(|(i, role)| {
            let n = entities.pool(role.kind()).len().max(1) as u64;
            let mut g = rng(seed, SHARED_KEY + i as u64);
            Shared {
                role: *role,
                entity: g.next_u64() % n,
            }
        })
        .collect()
}

/// Moves the shared host to one whose OS every stage showing it runs on; an error when the
/// stages need hosts of different systems.
#[allow(
    clippy::indexing_slicing,
    reason = "st.source and source are indices the planner resolved into sources; e ranges over \
              the pack's events; h comes from position(), the pick is modulo matching.len() \
              (checked non-empty), and j comes from enumerate()"
)]
fn place_host(
    mut shared: Vec<Shared>,
    stages: &[Stage],
    sources: &[Arc<CompiledPack>],
    seed: u64,
    entities: &Entities,
) -> Result<Vec<Shared>, Problem> {
    let Some(h) = shared.iter().position(|s| s.role == Role::Host) else {
        return Ok(shared);
    };
    let mut need: Option<(HostOs, &Stage)> = None;
    for st in stages {
        let Some(os) = sources[st.source].def.host_os else {
            continue;
        };
        if !st.candidates.iter().any(|c| c.plays.contains(&Role::Host)) {
            continue;
        }
        match need {
            Some((o, first)) if o != os => {
                return Err((
                    format!("{}.source", st.path),
                    format!(
                        "the shared host cannot be both a {} host ({} in {}) and a {} host ({} here); share it only between stages of one system",
                        o.name(),
                        sources[first.source].def.id,
                        first.path,
                        os.name(),
                        sources[st.source].def.id
                    ),
                ));
            }
            None => need = Some((os, st)),
            _ => {}
        }
    }
    let Some((os, _)) = need else {
        return Ok(shared);
    };
    let pool = entities.pool(crate::pack::entities::EntityKind::Host);
    let fits = |i: usize| {
        let windows = pool
            .get_by_name(i, "os")
            .is_some_and(|o| o.starts_with("Windows"));
        windows == (os == HostOs::Windows)
    };
    let matching: Vec<usize> = (0..pool.len()).filter(|&i| fits(i)).collect();
    if matching.is_empty() {
        return Err((
            "correlation.shared".into(),
            format!("the host pool has no {} host to share", os.name()),
        ));
    }
    let mut g = rng(seed, SHARED_KEY + 0x100);
    shared[h].entity = matching[(g.next_u64() % matching.len() as u64) as usize] as u64;
    Ok(shared)
}

/// Overlapping stages and stages beyond the limits, as warnings.
#[allow(
    clippy::indexing_slicing,
    reason = "st.source and source are indices the planner resolved into sources; e ranges over \
              the pack's events; h comes from position(), the pick is modulo matching.len() \
              (checked non-empty), and j comes from enumerate()"
)]
fn timing_warnings(stages: &[Stage], speed: Speed) -> Vec<Problem> {
    let mut w = Vec::new();
    for (j, b) in stages.iter().enumerate() {
        for a in &stages[..j] {
            if a.start < b.end()
                && b.start < a.end()
                && !(a.duration.is_zero() && b.duration.is_zero())
            {
                w.push((
                    format!("{}.start_offset", b.path),
                    format!(
                        "overlaps {} ({} to {}): their events interleave in time",
                        a.path,
                        Dur(a.start),
                        Dur(a.end())
                    ),
                ));
            }
        }
        if b.count > MAX_STAGE_EVENTS {
            w.push((
                format!("{}.count", b.path),
                format!(
                    "{} events is more than {MAX_STAGE_EVENTS}: a chain this large reads as background load, not an attack",
                    b.count
                ),
            ));
        }
        let wall = speed.wall(b.duration).as_secs_f64();
        let eps = if wall > 0.0 {
            b.count as f64 / wall
        } else {
            f64::INFINITY
        };
        if b.count > 1 && eps > MAX_STAGE_EPS && speed != Speed::Max {
            w.push((
                format!("{}.duration", b.path),
                format!(
                    "{} events in {} at speed {speed} play at {} events/s, above {MAX_STAGE_EPS}",
                    b.count,
                    Dur(b.duration),
                    if eps.is_finite() {
                        format!("{eps:.0}")
                    } else {
                        "one instant's".into()
                    }
                ),
            ));
        }
        if b.end() > MAX_SPAN {
            w.push((
                format!("{}.start_offset", b.path),
                format!("ends {} after the anchor, beyond 24h", Dur(b.end())),
            ));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_short() {
        // Stage times in messages are written as configs write durations.
        assert_eq!(Dur(Duration::from_secs(240)).to_string(), "4m");
        assert_eq!(Dur(Duration::from_secs(5400)).to_string(), "1h30m");
        assert_eq!(Dur(Duration::from_millis(90)).to_string(), "90ms");
        assert_eq!(Dur(Duration::ZERO).to_string(), "0s");
    }
}
