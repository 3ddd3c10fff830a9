//! Reading a scenario file (the Go tool's `schema_version: "2.0"` format, unchanged) into a
//! `ScenarioDef`: plain data, every problem with its field path and line:column, unknown keys
//! refused, and stage and event counts bounded (`MAX_STAGES`, `MAX_EVENTS`). What the values mean against the packs and ATT&CK is `plan`'s job.

use std::time::Duration;

use crate::config::units::Dur;
use crate::generate::time::{self, UnixNs};
use crate::pack::load::Role;
use crate::yaml::{self, Obj, Reader};

/// More stages than this are refused: an attack chain has a handful, and every stage is
/// checked against every other for overlaps.
pub const MAX_STAGES: usize = 1_000;
/// More events than this in one stage, or in all stages together, are refused: every event is
/// placed in time up front (`play::order`), so this bounds that list (about 24 MB).
/// `plan::MAX_STAGE_EVENTS` warns well below it.
pub const MAX_EVENTS: u64 = 1_000_000;

/// The schema versions this reader takes.
pub const SCHEMA_VERSIONS: &[&str] = &["2.0", "2"];

/// How fast a scenario plays: its own pace times a factor, or everything at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Speed {
    Factor(f64),
    /// No waiting: every event as soon as it can be written.
    Max,
}

impl Speed {
    /// `60x`, `60`, `0.5x` or `max`.
    pub fn parse(s: &str) -> Result<Speed, String> {
        let t = s.trim();
        if t == "max" {
            return Ok(Speed::Max);
        }
        let num = t.strip_suffix('x').unwrap_or(t);
        match num.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 && v <= 1e9 => Ok(Speed::Factor(v)),
            _ => Err(format!(
                "{s:?} is not a speed (a factor above 0 such as 1x, 60x or 0.5x, or max)"
            )),
        }
    }

    /// Wall time to play `scenario_time` at this speed.
    pub fn wall(self, scenario_time: Duration) -> Duration {
        match self {
            Speed::Factor(f) => crate::clock::secs(scenario_time.as_secs_f64() / f),
            Speed::Max => Duration::ZERO,
        }
    }
}

impl std::fmt::Display for Speed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Speed::Factor(v) => write!(f, "{v}x"),
            Speed::Max => f.write_str("max"),
        }
    }
}

impl yaml::FromYaml for Speed {
    fn from_yaml(node: &yaml::YamlNode, path: &str, r: &mut Reader) -> Result<Self, String> {
        let s: String = String::from_yaml(node, path, r)?;
        Speed::parse(&s)
    }
}

/// One stage as written.
#[derive(Clone, Debug)]
pub struct StageDef {
    pub name: Option<String>,
    pub tactic: String,
    pub technique: String,
    pub source: String,
    pub count: u64,
    pub start_offset: Duration,
    pub duration: Duration,
    /// `stages[i]`, for messages.
    pub path: String,
}

/// A scenario file as written.
#[derive(Clone, Debug)]
pub struct ScenarioDef {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: Option<u64>,
    /// `anchor`: the scenario's time zero; without it, the time the play starts.
    pub anchor: Option<UnixNs>,
    pub speed: Option<Speed>,
    /// `correlation.shared`: the roles drawn once and played in every stage.
    pub shared: Vec<Role>,
    pub stages: Vec<StageDef>,
}

/// Reads `text`; `None` when anything is wrong (`r.diags` says what).
pub fn read(r: &mut Reader, text: &str) -> Option<ScenarioDef> {
    let root = yaml::parse(text, &mut r.diags)?;
    let mut o = r.obj(&root, "")?;
    let version: Option<String> = o.req(r, "schema_version");
    let name = o.get(r, "name");
    let description = o.get(r, "description");
    let seed = o.get(r, "seed");
    let anchor: Option<String> = o.get(r, "anchor");
    let speed = o.get(r, "speed");
    let shared = o
        .sub(r, "correlation", read_correlation)
        .flatten()
        .unwrap_or_default();
    let stages_node = o.node("stages");
    let stages = match stages_node {
        Some(n) => read_stages(r, n),
        None => {
            r.error("stages", "required field is missing (a list of stages)");
            Vec::new()
        }
    };
    o.finish(r);
    let total: u64 = stages.iter().map(|s| s.count).sum();
    if total > MAX_EVENTS {
        r.diags.error(
            "stages",
            stages_node.and_then(yaml::pos_of),
            format!("{total} events in all stages is more than a scenario may have ({MAX_EVENTS})"),
        );
    }
    if let Some(v) = &version
        && !SCHEMA_VERSIONS.contains(&v.as_str())
    {
        r.error(
            "schema_version",
            format!("{v:?} is not a schema version this reads (it reads \"2.0\")"),
        );
    }
    let anchor = anchor.and_then(|a| match time::parse_rfc3339(&a) {
        Some(t) => Some(t),
        None => {
            r.error(
                "anchor",
                format!("{a:?} is not an RFC 3339 time such as 2024-06-03T13:00:00Z"),
            );
            None
        }
    });
    if r.diags.has_errors() {
        return None;
    }
    Some(ScenarioDef {
        name,
        description,
        seed,
        anchor,
        speed,
        shared,
        stages,
    })
}

fn read_correlation(r: &mut Reader, mut o: Obj) -> Option<Vec<Role>> {
    let path = o.child_path("shared");
    let names: Vec<String> = o.get(r, "shared").unwrap_or_default();
    o.finish(r);
    let mut roles: Vec<Role> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let p = format!("{path}[{i}]");
        match Role::parse(n) {
            Ok(role) if roles.contains(&role) => r.error(&p, format!("{n:?} is listed twice")),
            Ok(role) => roles.push(role),
            Err(msg) => r.error(&p, format!("not an entity a scenario can share: {msg}")),
        }
    }
    Some(roles)
}

fn read_stages(r: &mut Reader, node: &yaml::YamlNode) -> Vec<StageDef> {
    let yaml::YamlNode::Sequence(items) = node else {
        let _: Option<Vec<u8>> = r.value(node, "stages");
        return Vec::new();
    };
    if items.is_empty() {
        r.error("stages", "needs at least one stage");
    }
    if items.len() > MAX_STAGES {
        r.diags.error(
            "stages",
            yaml::pos_of(node),
            format!(
                "{} stages is more than a scenario may have ({MAX_STAGES})",
                items.len()
            ),
        );
        return Vec::new();
    }
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| read_stage(r, item, format!("stages[{i}]")))
        .collect()
}

fn read_stage(r: &mut Reader, node: &yaml::YamlNode, path: String) -> Option<StageDef> {
    let mut o = r.obj(node, &path)?;
    let name = o.get(r, "name");
    let tactic = o.req(r, "tactic");
    let technique = o.req(r, "technique");
    let source = o.req(r, "source");
    let count: Option<u64> = o.req(r, "count");
    let start_offset = duration(r, &mut o, "start_offset", false);
    let duration = duration(r, &mut o, "duration", true);
    o.finish(r);
    if count == Some(0) {
        r.error(
            &format!("{path}.count"),
            "must be at least 1 (leave the stage out instead)",
        );
    }
    if let Some(c) = count.filter(|c| *c > MAX_EVENTS) {
        r.error(
            &format!("{path}.count"),
            format!("{c} events is more than a stage may have ({MAX_EVENTS})"),
        );
    }
    Some(StageDef {
        name,
        tactic: tactic?,
        technique: technique?,
        source: source?,
        count: count.filter(|c| (1..=MAX_EVENTS).contains(c))?,
        start_offset: start_offset?,
        duration: duration?,
        path,
    })
}

/// A stage's time field: a duration with units, never negative; `start_offset` defaults to 0.
fn duration(r: &mut Reader, o: &mut Obj, key: &'static str, required: bool) -> Option<Duration> {
    let path = o.child_path(key);
    let text: Option<String> = if required {
        o.req(r, key)
    } else {
        match o.node(key) {
            None => return Some(Duration::ZERO),
            Some(n) => r.value(n, &path),
        }
    };
    let text = text?;
    if text.trim_start().starts_with('-') {
        r.error(
            &path,
            format!("{text:?} is negative; a stage's times count forward from the anchor"),
        );
        return None;
    }
    match crate::config::units::parse_duration(&text) {
        Ok(Dur(d)) => Some(d),
        Err(msg) => {
            r.error(&path, msg);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        let mut r = Reader::default();
        let def = read(&mut r, text);
        assert!(def.is_none() || !r.diags.has_errors());
        r.diags
            .errors()
            .map(|d| format!("{}: {}", d.path, d.message))
            .collect()
    }

    const GOOD: &str = r#"schema_version: "2.0"
seed: 12345
anchor: "2024-06-03T13:00:00Z"
correlation:
  shared: [user, host, source_ip]
stages:
  - { tactic: TA0006, technique: T1110, source: windows.security, count: 40, start_offset: 0s, duration: 4m }
  - { tactic: TA0001, technique: T1078, source: identity.okta, count: 5, start_offset: 4m, duration: 1m }
"#;

    /// Errors with their positions, as `validate` shows them.
    fn located(text: &str) -> Vec<String> {
        let mut r = Reader::default();
        assert!(read(&mut r, text).is_none());
        r.diags.errors().map(ToString::to_string).collect()
    }

    fn stage(count: u64) -> String {
        format!(
            "  - {{ tactic: TA0006, technique: T1110, source: windows.security, count: {count}, duration: 4m }}\n"
        )
    }

    #[test]
    fn stage_and_event_counts_are_bounded() {
        let head = "schema_version: \"2.0\"\nstages:\n";
        let many = format!("{head}{}", stage(1).repeat(MAX_STAGES + 1));
        assert_eq!(
            located(&many),
            ["stages (3:3): 1001 stages is more than a scenario may have (1000)"]
        );
        let at_limit = format!("{head}{}", stage(1).repeat(MAX_STAGES));
        let mut r = Reader::default();
        assert_eq!(
            read(&mut r, &at_limit).map(|d| d.stages.len()),
            Some(MAX_STAGES)
        );
        let big = format!("{head}{}{}", stage(1), stage(MAX_EVENTS + 1));
        assert_eq!(
            located(&big),
            ["stages[1].count (4:74): 1000001 events is more than a stage may have (1000000)"]
        );
        let sum = format!("{head}{}", stage(MAX_EVENTS / 2 + 1).repeat(2));
        assert_eq!(
            located(&sum),
            [
                "stages (3:3): 1000002 events in all stages is more than a scenario may have (1000000)"
            ]
        );
    }

    #[test]
    fn the_go_tools_format_reads_unchanged() {
        let mut r = Reader::default();
        let d = read(&mut r, GOOD).expect("reads");
        assert_eq!(d.seed, Some(12345));
        assert_eq!(d.shared, [Role::User, Role::Host, Role::SourceIp]);
        assert_eq!(d.stages.len(), 2);
        assert_eq!(d.stages[1].start_offset, Duration::from_secs(240));
        assert_eq!(d.stages[0].duration, Duration::from_secs(240));
        assert_eq!(d.anchor, time::parse_rfc3339("2024-06-03T13:00:00Z"));
    }

    #[test]
    fn bad_fields_are_named_by_path() {
        let bad = GOOD.replace("duration: 4m", "duration: -4m");
        assert!(errors(&bad)[0].starts_with("stages[0].duration: \"-4m\" is negative"));
        let bad = GOOD.replace("count: 5,", "count: 5, colour: red,");
        assert!(errors(&bad)[0].starts_with("stages[1].colour: unknown field"));
        let bad = GOOD.replace("source_ip]", "source_ip, printer]");
        assert!(errors(&bad)[0].starts_with("correlation.shared[3]: not an entity"));
        let bad = GOOD.replace("\"2.0\"", "\"1.0\"");
        assert!(errors(&bad)[0].starts_with("schema_version:"));
        let bad = GOOD.replace("count: 40", "count: 0");
        assert!(errors(&bad)[0].starts_with("stages[0].count: must be at least 1"));
    }

    #[test]
    fn speeds() {
        assert_eq!(Speed::parse("60x"), Ok(Speed::Factor(60.0)));
        assert_eq!(Speed::parse("2"), Ok(Speed::Factor(2.0)));
        assert_eq!(Speed::parse("max"), Ok(Speed::Max));
        assert!(Speed::parse("0x").is_err() && Speed::parse("fast").is_err());
        assert_eq!(
            Speed::Factor(60.0).wall(Duration::from_secs(600)),
            Duration::from_secs(10)
        );
    }
}
