//! `ingestbench scenario --file F`: plays a correlated attack scenario to stdout in time order
//! (at its speed, or at once), and writes its ground truth with `--truth FILE`. `--check`
//! only validates it and says what each stage will draw.

use argh::FromArgs;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::r#gen::{Format, emit};
use crate::config::units::Dur;
use crate::exit::Exit;
use crate::generate::time;
use crate::pack::Catalog;
use crate::pack::entities::{Entities, Sizes};
use crate::pack::load::Carrier;
use crate::scenario::file::Speed;
use crate::scenario::plan::Scenario;
use crate::scenario::play::Player;
use crate::scenario::{self, attack, truth};

/// The run id in the tags of events played to stdout.
pub const RUN_ID: &str = "r-scenario";

#[derive(FromArgs)]
/// Play a correlated attack scenario (MITRE ATT&CK stages) to stdout, with its ground truth.
#[argh(
    subcommand,
    name = "scenario",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench scenario --file examples/scenarios/brute-force-valid-account-execution.yaml --format ndjson --truth truth.json",
    example = "ingestbench scenario --file examples/scenarios/brute-force-valid-account-execution.yaml --speed 60x",
    example = "ingestbench scenario --file my-chain.yaml --check",
    note = "Events come out in time order with the scenario's own timestamps (anchor + offsets). --speed Nx plays the chain N times faster than its timestamps say (60x plays 10 minutes in 10 s); max (the default without a speed in the file) writes it at once. Exit 2 for an invalid scenario, naming the field and line."
)]
pub struct Args {
    /// the scenario file (YAML, schema_version "2.0")
    #[argh(option, short = 'f')]
    file: PathBuf,
    /// output: pretty (default; indented JSON for JSON packs), ndjson, raw
    #[argh(option, default = "Format::Pretty")]
    format: Format,
    /// how fast to play: a factor such as 60x, or max (default: the file's speed, else max)
    #[argh(option)]
    speed: Option<String>,
    /// write the ground truth (JSON) to this file
    #[argh(option)]
    truth: Option<PathBuf>,
    /// seed for every draw (default: the file's, else random)
    #[argh(option)]
    seed: Option<u64>,
    /// the scenario's time zero (RFC 3339), over the file's anchor (default: the file's, else now)
    #[argh(option)]
    anchor: Option<String>,
    /// only check the scenario and print what each stage draws
    #[argh(switch)]
    check: bool,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
}

fn fail(lines: &[String]) -> Exit {
    for l in lines {
        super::err(&format!("error: {l}"));
    }
    Exit::Invalid
}

pub fn run(a: Args) -> Exit {
    let speed = match a.speed.as_deref().map(Speed::parse) {
        Some(Err(e)) => return fail(&[format!("--speed: {e}")]),
        Some(Ok(s)) => Some(s),
        None => None,
    };
    let anchor = match a.anchor.as_deref() {
        None => None,
        Some(s) => match time::parse_rfc3339(s) {
            Some(t) => Some(t),
            None => return fail(&[format!("--anchor {s:?} is not an RFC 3339 time")]),
        },
    };
    let catalog = match Catalog::discover(a.packs.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(&[e]),
    };
    let opened = match scenario::open(&a.file) {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    let pools = |seed| Arc::new(Entities::generate(seed, &Sizes::default()));
    let (s, warnings) = match opened.resolve(&catalog, pools, a.seed, speed, Speed::Max) {
        Ok(x) => x,
        Err(e) => return fail(&e),
    };
    for w in &warnings {
        super::err(&format!("warning: {w}"));
    }
    if a.check {
        super::out(&describe(&s));
        return Exit::Ok;
    }
    let anchor = anchor.or(s.anchor).unwrap_or_else(time::now);
    let mut player = Player::new(Arc::new(s), RUN_ID, anchor);
    if let Some(path) = &a.truth {
        let t = truth::build(player.scenario(), player.planned(), anchor, RUN_ID, 0);
        let text = serde_json::to_string_pretty(&t).unwrap_or_default();
        let o = crate::fsio::WriteOptions::default();
        if let Err(e) = crate::fsio::write_atomic(path, (text + "\n").as_bytes(), o) {
            super::err(&format!(
                "error: --truth: the ground truth not written: {e} (what was at that path is \
                 untouched)"
            ));
            return Exit::Aborted;
        }
    }
    play(&mut player, a.format)
}

/// Writes every event in time order, waiting for each one's time when the speed is a factor.
#[allow(
    clippy::indexing_slicing,
    reason = "st.source and player.source_of(n) are indices the planner resolved into the \
              scenario's sources, and json has one entry per source"
)]
fn play(player: &mut Player, format: Format) -> Exit {
    let json: Vec<bool> = player
        .scenario()
        .sources
        .iter()
        .map(|p| p.def.carrier == Carrier::Json)
        .collect();
    let paced = player.scenario().speed != Speed::Max;
    let start = Instant::now();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut ev, mut buf) = (Vec::new(), Vec::new());
    for n in 0..player.len() {
        if paced {
            let wait = player.due(n).saturating_sub(start.elapsed());
            if !wait.is_zero() {
                if out.flush().is_err() {
                    return Exit::Ok;
                }
                std::thread::sleep(wait);
            }
        }
        ev.clear();
        buf.clear();
        player.render(n, 0, n as u64, None, &mut ev);
        emit(format, json[player.source_of(n)], &ev, &mut buf);
        if out.write_all(&buf).is_err() {
            // A closed pipe ends the play quietly, as `head` expects.
            return Exit::Ok;
        }
    }
    let _ = out.flush();
    Exit::Ok
}

/// What `--check` prints: the chain, stage by stage.
#[allow(
    clippy::indexing_slicing,
    reason = "st.source and player.source_of(n) are indices the planner resolved into the \
              scenario's sources, and json has one entry per source"
)]
fn describe(s: &Scenario) -> String {
    let mut lines = vec![format!(
        "{}: {} stages, {} events over {} (speed {}, seed {}), checked against {}",
        s.name,
        s.stages.len(),
        s.total_events(),
        Dur(s.span()),
        s.speed,
        s.seed,
        attack::VERSION
    )];
    for (i, st) in s.stages.iter().enumerate() {
        let types: Vec<String> = st
            .candidates
            .iter()
            .map(|c| format!("{} (weight {})", c.name, c.weight))
            .collect();
        let plays: Vec<&str> = st.shows().iter().map(|r| r.name()).collect();
        lines.push(format!(
            "  stages[{i}] {} / {} {}: {} events of {} from {} to {}; draws {}; shows {}",
            attack::tactic_label(st.tactic),
            st.technique.id,
            st.technique.name,
            st.count,
            s.sources[st.source].def.id,
            Dur(st.start),
            Dur(st.end()),
            types.join(", "),
            if plays.is_empty() {
                "no shared entity".to_string()
            } else {
                plays.join(", ")
            }
        ));
    }
    lines.join("\n")
}
