//! `ingestbench gen --source ID`: events to stdout, no network. For looking at a pack's
//! output, feeding files, or timing the generator end to end (`-n 10000000 --format raw >
//! /dev/null`); `gen --file` shows what a replay of recorded logs sends. A closed pipe ends
//! it quietly.

use argh::FromArgs;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::exit::Exit;
use crate::generate::time::{self, NS_PER_SEC};
use crate::generate::timeline::Timeline;
use crate::generate::{EventCtx, Generator};
use crate::pack::entities::{Entities, Sizes};
use crate::pack::load::Carrier;
use crate::pack::{self, Catalog};
use crate::run::source as plan;
use crate::run::source::random_seed;

#[derive(FromArgs)]
/// Generate events from a source pack to stdout (no network).
#[argh(
    subcommand,
    name = "gen",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench gen --source aws.cloudtrail -n 3",
    example = "ingestbench gen --source linux.syslog -n 1000 --format raw --seed 7 --anchor 2026-01-05T09:00:00Z",
    example = "ingestbench gen --config examples/timestamps-backfill.yaml -n 100000 --format ndjson > backfill.ndjson",
    example = "ingestbench gen --source firewall.traffic -n 0 --rate 200 --format ndjson | head",
    example = "ingestbench gen --file 'logs/*.ndjson' --lines ndjson --timestamps shift -n 5",
    note = "With --seed the same events come out every time and for any --threads; with --anchor their times are fixed too (event i at anchor + i/rate, or 1 ms apart without --rate). --config takes the source, entity pools, seed, timestamps and accounting from a run config; flags override it."
)]
pub struct Args {
    /// source pack id (see `ingestbench sources list`); required unless --config gives one
    #[argh(option, short = 's')]
    source: Option<String>,
    /// take source, entities, seed, timestamps and accounting from this config
    #[argh(option, short = 'c')]
    config: Option<PathBuf>,
    /// number of events (default 10; 0 = until the output is closed)
    #[argh(option, short = 'n', default = "10")]
    count: u64,
    /// output: pretty (default; indented JSON for JSON packs), ndjson (one JSON value per line), raw (events as rendered, one per line)
    #[argh(option, default = "Format::Pretty")]
    format: Format,
    /// seed for every random choice (default: the config's, else random)
    #[argh(option)]
    seed: Option<u64>,
    /// events per second to pace output at (default: as fast as possible)
    #[argh(option)]
    rate: Option<f64>,
    /// fixed start time (RFC 3339) instead of the clock
    #[argh(option)]
    anchor: Option<String>,
    /// add accounting tags (run id, agent, sequence number) as a run would
    #[argh(switch)]
    tags: bool,
    /// render on this many threads (output order and bytes do not change; default 1)
    #[argh(option, default = "1")]
    threads: usize,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
    /// replay this recorded log file (a path or a glob) instead of a pack, as a run with
    /// source.file would send it
    #[argh(option)]
    file: Option<String>,
    /// with --file: how its lines are read, lines (default) or ndjson
    #[argh(option)]
    lines: Option<String>,
    /// with --file: keep, now (default) or shift each line's timestamp
    #[argh(option)]
    timestamps: Option<String>,
}

crate::yaml_enum!(
    pub enum Format {
        Pretty = "pretty",
        Ndjson = "ndjson",
        Raw = "raw",
    }
);

impl argh::FromArgValue for Format {
    fn from_arg_value(value: &str) -> Result<Self, String> {
        Format::parse(value)
    }
}

/// Events rendered per thread per round when not pacing.
const CHUNK: u64 = 4096;

fn fail(msg: &str) -> Exit {
    super::err(&format!("error: {msg}"));
    Exit::Invalid
}

pub fn run(a: Args) -> Exit {
    if let Some(r) = a.rate
        && !(crate::config::validate::MIN_EPS..=crate::config::validate::MAX_EPS).contains(&r)
    {
        return fail(&format!(
            "--rate must be between {} and {} events per second",
            crate::config::validate::MIN_EPS,
            crate::config::validate::MAX_EPS
        ));
    }
    if a.threads == 0 || a.threads > 256 {
        return fail("--threads must be between 1 and 256");
    }
    let anchor = match a.anchor.as_deref().map(time::parse_rfc3339) {
        Some(None) => {
            return fail(&format!(
                "--anchor {:?} is not an RFC 3339 time such as 2026-01-05T09:00:00Z",
                a.anchor.clone().unwrap_or_default()
            ));
        }
        Some(Some(t)) => Some(t),
        None => None,
    };
    if a.file.is_some() || a.lines.is_some() || a.timestamps.is_some() {
        return replay(&a, anchor);
    }
    let catalog = match Catalog::discover(a.packs.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let plan = match &a.config {
        None => None,
        Some(path) => {
            let store =
                crate::config::secrets::Store::new(std::path::PathBuf::from("/nonexistent"));
            let loaded = crate::config::load(path, &store, Some(&catalog));
            match loaded.config {
                Some(c) if c.replay.is_some() => {
                    let r = c
                        .replay
                        .as_ref()
                        .map(|r| r.file.clone())
                        .unwrap_or_default();
                    return fail(&format!(
                        "the config replays a recording: see what it sends with gen --file {r:?} (and --lines, --timestamps)"
                    ));
                }
                Some(c) => plan::source_plan(&c),
                None => {
                    for d in loaded.diags.errors() {
                        super::err(&format!("error: {d}"));
                    }
                    return Exit::Invalid;
                }
            }
        }
    };
    let packs = plan.as_ref().map_or(&[][..], |p| p.packs.as_slice());
    if a.source.is_none() && packs.len() > 1 {
        let ids: Vec<&str> = packs.iter().map(|(id, _)| id.as_str()).collect();
        return fail(&format!(
            "the config mixes {} sources: name one with --source ID ({})",
            ids.len(),
            ids.join(", ")
        ));
    }
    let Some(source) = a
        .source
        .clone()
        .or_else(|| packs.first().map(|p| p.0.clone()))
    else {
        return fail("give --source ID or --config FILE (see `ingestbench sources list`)");
    };
    let seed = a
        .seed
        .or(plan.as_ref().and_then(|p| p.seed))
        .unwrap_or_else(random_seed);
    let sizes = plan.as_ref().map_or_else(Sizes::default, |p| p.sizes);
    let accounting = a.tags;
    // The config's version requirement for this pack, if it names it.
    let req = packs
        .iter()
        .find(|(id, _)| *id == source)
        .map_or(semver::VersionReq::STAR, |(_, v)| v.clone());
    let entities = Entities::generate(seed, &sizes);
    let pack = match pack::load_compiled(&catalog, &source, &req, &entities, accounting) {
        Ok(p) => p,
        Err(errs) => {
            for e in errs {
                super::err(&format!("error: {e}"));
            }
            return Exit::Invalid;
        }
    };
    let now = time::now();
    let eps = a.rate.unwrap_or(1000.0);
    let timeline = match (anchor, &plan) {
        (Some(t0), _) => Timeline::Fixed {
            start: t0,
            step: a
                .rate
                .map_or(1_000_000, |r| (NS_PER_SEC as f64 / r) as i64)
                .max(1),
        },
        (None, Some(p)) => {
            p.times
                .timeline(now, if a.count == 0 { u64::MAX } else { a.count }, eps)
        }
        (None, None) => Timeline::Realtime,
    };
    let jitter = plan.as_ref().map_or(0, |p| p.jitter_ns);
    let json = pack.def.carrier == Carrier::Json;
    let threads = if a.rate.is_some() { 1 } else { a.threads };
    let mut workers: Vec<(Generator, Vec<u8>, Vec<u8>)> = (0..threads)
        .map(|_| {
            let g = Generator::new(pack.program.clone(), seed, "r-gen").with_jitter(jitter);
            (g, Vec::with_capacity(1 << 16), Vec::with_capacity(1 << 20))
        })
        .collect();
    let chunk = if a.rate.is_some() { 1 } else { CHUNK };
    let start = Instant::now();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut next: u64 = 0;
    let limit = if a.count == 0 { u64::MAX } else { a.count };
    while next < limit {
        if let Some(r) = a.rate {
            let due = crate::clock::secs(next as f64 / r);
            let elapsed = start.elapsed();
            if due > elapsed {
                std::thread::sleep(due - elapsed);
            }
        }
        let now = time::now();
        let round_start = next;
        let render = |(g, ev, buf): &mut (Generator, Vec<u8>, Vec<u8>), from: u64| {
            buf.clear();
            for i in from..(from + chunk).min(limit) {
                ev.clear();
                let t = timeline.time_of(i, now);
                g.render(
                    &EventCtx {
                        index: i,
                        time_ns: t,
                        agent: 0,
                        seq: i,
                        sent_ms: None,
                    },
                    ev,
                );
                emit(a.format, json, ev, buf);
            }
        };
        if threads == 1 {
            if let Some(w) = workers.first_mut() {
                render(w, round_start);
            }
        } else {
            std::thread::scope(|s| {
                for (t, w) in workers.iter_mut().enumerate() {
                    let from = round_start + t as u64 * chunk;
                    if from < limit {
                        s.spawn(move || render(w, from));
                    } else {
                        w.2.clear();
                    }
                }
            });
        }
        for w in &workers {
            if out.write_all(&w.2).is_err() {
                // Closed pipe (or full disk): stop quietly, as `head` expects.
                return Exit::Ok;
            }
        }
        if a.rate.is_some() && out.flush().is_err() {
            return Exit::Ok;
        }
        next = round_start.saturating_add(chunk * threads as u64);
    }
    let _ = out.flush();
    Exit::Ok
}

/// `gen --file`: the recording's lines as a replay sends them (event i at the clock, or at
/// `anchor + i / rate`).
fn replay(a: &Args, anchor: Option<i64>) -> Exit {
    use crate::generate::replay::{self, Format as Lines, Locate, Recording, Replayer, Times};
    let Some(file) = &a.file else {
        return fail("--lines and --timestamps go with --file");
    };
    if a.source.is_some() || a.config.is_some() {
        return fail("--file replays a recording: not with --source or --config");
    }
    let format = match a.lines.as_deref() {
        None | Some("lines") => Lines::Lines,
        Some("ndjson") => Lines::Ndjson,
        Some(o) => return fail(&format!("--lines {o:?}: expected lines or ndjson")),
    };
    let times = match a.timestamps.as_deref() {
        None | Some("now") => Times::Now,
        Some("keep") => Times::Keep,
        Some("shift") => Times::Shift,
        Some(o) => return fail(&format!("--timestamps {o:?}: expected keep, now or shift")),
    };
    let rec = match replay::expand(file).and_then(|f| Recording::load(f, format, &Locate::Auto)) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let now = time::now();
    let step = a
        .rate
        .map_or(1_000_000, |r| (NS_PER_SEC as f64 / r) as i64)
        .max(1);
    let timeline = match anchor {
        Some(t0) => Timeline::Fixed { start: t0, step },
        None => Timeline::Realtime,
    };
    let json = format == Lines::Ndjson;
    let mut player = Replayer::new(
        std::sync::Arc::new(rec),
        times,
        true,
        anchor.unwrap_or(now),
        a.tags.then_some("r-gen"),
    );
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut ev, mut buf) = (Vec::new(), Vec::new());
    let limit = if a.count == 0 { u64::MAX } else { a.count };
    let start = Instant::now();
    for i in 0..limit {
        if let Some(r) = a.rate {
            let due = crate::clock::secs(i as f64 / r);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        ev.clear();
        buf.clear();
        let ctx = EventCtx {
            index: i,
            time_ns: timeline.time_of(i, time::now()),
            agent: 0,
            seq: i,
            sent_ms: None,
        };
        player.render(&ctx, &mut ev);
        emit(a.format, json, &ev, &mut buf);
        if out.write_all(&buf).is_err() {
            return Exit::Ok;
        }
    }
    let _ = out.flush();
    Exit::Ok
}

/// Appends one event to `buf` in the output format, with its newline.
pub(crate) fn emit(format: Format, json: bool, ev: &[u8], buf: &mut Vec<u8>) {
    match format {
        Format::Raw => buf.extend_from_slice(ev),
        Format::Ndjson if json => buf.extend_from_slice(ev),
        Format::Ndjson => {
            let s = serde_json::to_string(&String::from_utf8_lossy(ev)).unwrap_or_default();
            buf.extend_from_slice(s.as_bytes());
        }
        Format::Pretty => buf.extend_from_slice(crate::generate::pretty(ev, json).as_bytes()),
    }
    buf.push(b'\n');
}
