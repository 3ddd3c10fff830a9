//! `ingestbench gen --source ID`: events to stdout, no network. For looking at a pack's
//! output, feeding files, or timing the generator end to end (`-n 10000000 --format raw >
//! /dev/null`). A closed pipe ends it quietly.

use argh::FromArgs;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::exit::Exit;
use crate::generate::time::{self, NS_PER_SEC};
use crate::generate::{EventCtx, Generator};
use crate::pack::entities::{Entities, Sizes};
use crate::pack::load::Carrier;
use crate::pack::{self, Catalog};

#[derive(FromArgs)]
/// Generate events from a source pack to stdout (no network).
#[argh(
    subcommand,
    name = "gen",
    example = "ingestbench gen --source aws.cloudtrail -n 3",
    example = "ingestbench gen --source linux.syslog -n 1000 --format raw --seed 7 --anchor 2026-01-05T09:00:00Z",
    example = "ingestbench gen --source firewall.traffic -n 0 --rate 200 --format ndjson | head",
    note = "With --seed the same events come out every time; with --anchor their times are fixed too (event i at anchor + i/rate, or 1 ms apart without --rate)."
)]
pub struct Args {
    /// source pack id (see `ingestbench sources list`)
    #[argh(option, short = 's')]
    source: String,
    /// number of events (default 10; 0 = until the output is closed)
    #[argh(option, short = 'n', default = "10")]
    count: u64,
    /// output: pretty (default; indented JSON for JSON packs), ndjson (one JSON value per line), raw (events as rendered, one per line)
    #[argh(option, default = "Format::Pretty")]
    format: Format,
    /// seed for every random choice (default: random)
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
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
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

pub fn run(a: Args) -> Exit {
    if let Some(r) = a.rate
        && !(r > 0.0 && r <= 100_000_000.0)
    {
        super::err("error: --rate must be above 0 and at most 100000000");
        return Exit::Invalid;
    }
    let anchor = match a.anchor.as_deref().map(time::parse_rfc3339) {
        Some(None) => {
            super::err(&format!(
                "error: --anchor {:?} is not an RFC 3339 time such as 2026-01-05T09:00:00Z",
                a.anchor.unwrap_or_default()
            ));
            return Exit::Invalid;
        }
        Some(Some(t)) => Some(t),
        None => None,
    };
    let catalog = match Catalog::discover(a.packs.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            super::err(&format!("error: {e}"));
            return Exit::Invalid;
        }
    };
    let seed = a.seed.unwrap_or_else(random_seed);
    let entities = Entities::generate(seed, &Sizes::default());
    let pack = match pack::load_compiled(
        &catalog,
        &a.source,
        &semver::VersionReq::STAR,
        &entities,
        a.tags,
    ) {
        Ok(p) => p,
        Err(errs) => {
            for e in errs {
                super::err(&format!("error: {e}"));
            }
            return Exit::Invalid;
        }
    };
    let json = pack.def.carrier == Carrier::Json;
    let mut g = Generator::new(pack, seed, "r-gen");
    let step_ns = a
        .rate
        .map_or(1_000_000, |r| (NS_PER_SEC as f64 / r) as i64)
        .max(1);
    let start = Instant::now();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut ev = Vec::with_capacity(1 << 14);
    let mut i: u64 = 0;
    while a.count == 0 || i < a.count {
        if let Some(r) = a.rate {
            let due = Duration::from_secs_f64(i as f64 / r);
            let now = start.elapsed();
            if due > now {
                if out.flush().is_err() {
                    return Exit::Ok;
                }
                std::thread::sleep(due - now);
            }
        }
        let t = match anchor {
            Some(t0) => t0 + i as i64 * step_ns,
            None => time::now(),
        };
        ev.clear();
        g.render(
            &EventCtx {
                index: i,
                time_ns: t,
                agent: 0,
                seq: i,
            },
            &mut ev,
        );
        let res = match a.format {
            Format::Raw => out.write_all(&ev).and_then(|_| out.write_all(b"\n")),
            Format::Ndjson if json => out.write_all(&ev).and_then(|_| out.write_all(b"\n")),
            Format::Ndjson => {
                let s = serde_json::to_string(&String::from_utf8_lossy(&ev)).unwrap_or_default();
                out.write_all(s.as_bytes())
                    .and_then(|_| out.write_all(b"\n"))
            }
            Format::Pretty => {
                let text = pretty(&ev, json);
                out.write_all(text.as_bytes())
                    .and_then(|_| out.write_all(b"\n"))
            }
        };
        if res.is_err() {
            // Closed pipe (or full disk): stop quietly, as `head` expects.
            return Exit::Ok;
        }
        i += 1;
    }
    let _ = out.flush();
    Exit::Ok
}

/// Indented JSON for JSON events; anything else as it is.
pub fn pretty(ev: &[u8], json: bool) -> String {
    if json && let Ok(v) = serde_json::from_slice::<serde_json::Value>(ev) {
        return serde_json::to_string_pretty(&v).unwrap_or_default();
    }
    String::from_utf8_lossy(ev).into_owned()
}

/// A seed from the clock and the process id: good enough to differ between runs.
pub fn random_seed() -> u64 {
    let t = time::now() as u64;
    t ^ (u64::from(std::process::id()) << 32) ^ 0x5851_f42d_4c95_7f2d
}
