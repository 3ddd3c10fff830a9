//! `ingestbench size`: sizing from a rate and an event size, a pack measured here, or a saved
//! run report. Flags become a `size::Plan` (every input with where it came from), the
//! library computes the `Sizing`, and this prints it as text or JSON. Bad input exits 2 with
//! the flag named; nothing here panics on input.

use argh::FromArgs;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::schema::{DEFAULT_BATCH_BYTES, DEFAULT_BATCH_EVENTS};
use crate::config::units::parse_size;
use crate::config::validate::{MAX_BATCH_BYTES, MAX_BATCH_EVENTS, MAX_EPS, MIN_BATCH_BYTES};
use crate::exit::Exit;
use crate::pack::Catalog;
use crate::pack::entities::{EntityKind, Sizes};
use crate::size::carrier::HttpSetup;
use crate::size::from_report;
use crate::size::from_report::RunFacts;
use crate::size::measure::{self, PackSizes, RATE_BUDGET, Recipe};
use crate::size::{
    self, Adapter, DEFAULT_DAYS, DEFAULT_LATENCY_MS, Input, MeasuredBody, Origin, Plan, Transport,
    carrier, num, sig,
};

use super::run::Output;

#[derive(FromArgs)]
/// Size an ingestion tier: bandwidth, daily and retention volume, requests, limits, connections and threads, each figure with how it was computed.
#[argh(
    subcommand,
    name = "size",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench size --eps 10000 --event-bytes 500",
    example = "ingestbench size --eps 50000 --source windows.security --adapter hec --compression gzip",
    example = "ingestbench size --eps 20000 --event-bytes 1.2KB --adapter syslog --transport udp --days 365",
    example = "ingestbench size --report report.json --eps 100000 --output json",
    note = "Defaults: --adapter hec, --days 90, --batch 500 and --batch-bytes 1MB (the engine's), no compression, 50 ms per request for Little's law. GB, TB are 10^9, 10^12 bytes (as licences count), GiB, TiB 2^30, 2^40. --source renders the pack here for about a second to measure it. Exit 0, or 2 on bad input."
)]
pub struct Args {
    /// events per second to plan for (with --report: instead of the rate its run achieved)
    #[argh(option)]
    eps: Option<f64>,
    /// mean event size as rendered, e.g. 500, 512B, 1.2KB, 2KiB (default: measured from --source or the report's pack)
    #[argh(option)]
    event_bytes: Option<String>,
    /// days of retention (default 90)
    #[argh(option)]
    days: Option<u32>,
    /// events per request (default 500, the engine's target.batch.max_events; with --report, the run's)
    #[argh(option)]
    batch: Option<u64>,
    /// the engine's request byte limit, target.batch.max_bytes (default 1MB; with --report, the run's)
    #[argh(option)]
    batch_bytes: Option<String>,
    /// compression of request bodies: a ratio R meaning R:1 (e.g. 8), gzip (measured on the pack's batches) or none (default)
    #[argh(option)]
    compression: Option<String>,
    /// lphc, hec (default; generic-hec), elasticsearch or syslog
    #[argh(option)]
    adapter: Option<String>,
    /// syslog transport: tcp (default), udp or tls
    #[argh(option)]
    transport: Option<String>,
    /// source pack id: measure its events and its render rate per core here (about 1 s)
    #[argh(option, short = 's')]
    source: Option<String>,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
    /// a saved run report (run --output json, observability.report): size from what it measured
    #[argh(option)]
    report: Option<PathBuf>,
    /// per-request latency for Little's law in ms (default 50, or the report's mean service latency)
    #[argh(option)]
    latency_ms: Option<f64>,
    /// text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
}

/// The largest mean event size taken: 100 MB (SIEMs refuse events far smaller).
const MAX_EVENT_BYTES: f64 = 100e6;
const MAX_DAYS: u32 = 36_500;
const MAX_LATENCY_MS: f64 = 600_000.0;
const MAX_RATIO: f64 = 1_000.0;

fn fail(msg: &str) -> Exit {
    super::err(&format!("error: {msg}"));
    Exit::Invalid
}

pub fn run(a: Args) -> Exit {
    match plan(&a) {
        Ok(p) => {
            let s = size::compute(&p);
            match a.output {
                Output::Json => {
                    super::out(&serde_json::to_string_pretty(&s).unwrap_or_default());
                }
                Output::Text => super::out(&size::text::render(&s)),
            }
            Exit::Ok
        }
        Err(msg) => fail(&msg),
    }
}

fn in_range(flag: &str, v: f64, max: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(v)
    } else {
        Err(format!(
            "{flag} must be above 0 and at most {}",
            num(max, 0)
        ))
    }
}

/// `500`, `512.5`, `512B`, `1.2KB`, `2KiB`: bytes, fractions allowed for a mean.
fn event_bytes(text: &str) -> Result<f64, String> {
    let v = match text.trim().parse::<f64>() {
        Ok(v) => v,
        Err(_) => parse_size(text)
            .map(|s| s.0 as f64)
            .map_err(|e| format!("--event-bytes {e}"))?,
    };
    in_range("--event-bytes", v, MAX_EVENT_BYTES)
}

/// What `--compression` asks for.
enum Compress {
    Ratio(f64),
    Gzip,
}

fn compression(text: &str) -> Result<Compress, String> {
    let t = text.trim();
    match t {
        "none" => return Ok(Compress::Ratio(1.0)),
        "gzip" => return Ok(Compress::Gzip),
        _ => {}
    }
    let r = t
        .strip_suffix(":1")
        .unwrap_or(t)
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= 1.0 && *r <= MAX_RATIO);
    r.map(Compress::Ratio).ok_or_else(|| {
        format!(
            "--compression {text:?}: give a ratio from 1 to {MAX_RATIO} (8 means 8:1), gzip or none"
        )
    })
}

fn plan(a: &Args) -> Result<Plan, String> {
    // Flags first, each checked on its own.
    let adapter_flag = a
        .adapter
        .as_deref()
        .map(Adapter::parse)
        .transpose()
        .map_err(|e| format!("--adapter {e}"))?;
    let transport_flag = a
        .transport
        .as_deref()
        .map(Transport::parse)
        .transpose()
        .map_err(|e| format!("--transport {e}"))?;
    let eps_flag = a.eps.map(|e| in_range("--eps", e, MAX_EPS)).transpose()?;
    let event_flag = a.event_bytes.as_deref().map(event_bytes).transpose()?;
    if let Some(d) = a.days
        && !(1..=MAX_DAYS).contains(&d)
    {
        return Err(format!("--days must be between 1 and {MAX_DAYS}"));
    }
    if let Some(b) = a.batch
        && !(1..=MAX_BATCH_EVENTS).contains(&b)
    {
        return Err(format!("--batch must be between 1 and {MAX_BATCH_EVENTS}"));
    }
    let batch_bytes_flag = match &a.batch_bytes {
        Some(t) => {
            let v = parse_size(t).map_err(|e| format!("--batch-bytes {e}"))?.0;
            if !(MIN_BATCH_BYTES..=MAX_BATCH_BYTES).contains(&v) {
                return Err(format!(
                    "--batch-bytes must be between {MIN_BATCH_BYTES}B and 256MiB"
                ));
            }
            Some(v)
        }
        None => None,
    };
    let compress_flag = a.compression.as_deref().map(compression).transpose()?;
    let latency_flag = a
        .latency_ms
        .map(|l| in_range("--latency-ms", l, MAX_LATENCY_MS))
        .transpose()?;

    // The report, and how it fits the flags.
    let facts = a.report.as_deref().map(from_report::read).transpose()?;
    let adapter = match (&facts, adapter_flag) {
        (Some(f), Some(ad)) if ad != f.adapter => {
            return Err(format!(
                "--adapter {} differs from the report's adapter ({}): its bytes were measured for {}",
                ad.name(),
                f.adapter.name(),
                f.adapter.name()
            ));
        }
        (Some(f), _) => f.adapter,
        (None, Some(ad)) => ad,
        (None, None) => Adapter::Hec,
    };
    if transport_flag.is_some() && adapter != Adapter::Syslog {
        return Err("--transport applies to --adapter syslog only".into());
    }
    if let (Some(f), Some(t)) = (&facts, transport_flag)
        && f.transport != Some(t)
    {
        return Err(format!(
            "--transport {} differs from the report's ({})",
            t.name(),
            f.transport.map_or("none", Transport::name)
        ));
    }
    let transport = (adapter == Adapter::Syslog).then(|| {
        transport_flag
            .or(facts.as_ref().and_then(|f| f.transport))
            .unwrap_or(Transport::Tcp)
    });
    if let (Some(f), Some(s)) = (&facts, &a.source)
        && *s != f.source
    {
        return Err(format!(
            "--source {s} differs from the report's source ({}): its bytes were measured for that pack",
            f.source
        ));
    }
    let compress_flag = match (compress_flag, &facts) {
        (Some(Compress::Ratio(r)), _) if r > 1.0 && adapter == Adapter::Syslog => {
            return Err(
                "--compression applies to HTTP request bodies (lphc, hec); the syslog adapter sends uncompressed".into(),
            );
        }
        (Some(Compress::Gzip), _) if adapter == Adapter::Syslog => {
            return Err(
                "--compression applies to HTTP request bodies (lphc, hec); the syslog adapter sends uncompressed".into(),
            );
        }
        (Some(_), Some(f)) if f.gzip => {
            return Err(
                "--compression: the report's run used gzip already; its bytes as sent are compressed".into(),
            );
        }
        (c, _) => c,
    };

    let Some(eps) = eps_flag
        .map(|e| Input::new(e, Origin::Given, "--eps"))
        .or_else(|| {
            facts.as_ref().map(|f| {
                Input::new(
                    f.achieved_eps,
                    Origin::Measured,
                    format!("achieved by run {} (summary.achieved_eps)", f.run_id),
                )
            })
        })
    else {
        return Err("give --eps N (events per second to plan for) or --report FILE".into());
    };
    let batch = match (a.batch, &facts) {
        (Some(b), _) => Input::new(b, Origin::Given, "--batch"),
        (None, Some(f)) => Input::new(
            f.batch_max_events,
            Origin::Measured,
            format!("run {}'s batch_max_events", f.run_id),
        ),
        (None, None) => Input::new(
            DEFAULT_BATCH_EVENTS,
            Origin::Default,
            "the engine's target.batch.max_events",
        ),
    };
    let batch_bytes = match (batch_bytes_flag, &facts) {
        (Some(b), _) => Input::new(b, Origin::Given, "--batch-bytes"),
        (None, Some(f)) => Input::new(
            f.batch_max_bytes,
            Origin::Measured,
            format!("run {}'s batch_max_bytes", f.run_id),
        ),
        (None, None) => Input::new(
            DEFAULT_BATCH_BYTES,
            Origin::Default,
            "the engine's target.batch.max_bytes",
        ),
    };
    let gzip_planned = matches!(compress_flag, Some(Compress::Gzip))
        || matches!(compress_flag, Some(Compress::Ratio(r)) if r > 1.0);

    // What the framer is built with: the run's url and config, or placeholders.
    let setup = facts
        .as_ref()
        .and_then(|f| f.http.clone())
        .unwrap_or_else(|| HttpSetup::placeholder(adapter));

    // The pack: --source, or the report's when one is needed or there to be had.
    let catalog = Catalog::discover(a.packs.as_deref())?;
    let pack_id = a
        .source
        .clone()
        .or_else(|| facts.as_ref().map(|f| f.source.clone()));
    let rate_known = facts.as_ref().is_some_and(|f| f.processing_eps.is_some());
    let pack: Option<PackSizes> = match &pack_id {
        None => None,
        Some(id) => {
            let budget = if rate_known {
                Duration::ZERO
            } else {
                RATE_BUDGET
            };
            let recipe = facts.as_ref().map_or_else(Recipe::default, recipe);
            match measure::measure(
                &catalog,
                id,
                adapter,
                &setup,
                transport.unwrap_or(Transport::Tcp),
                batch.value,
                gzip_planned,
                &recipe,
                budget,
            ) {
                Ok(p) => Some(p),
                // The report's pack is a convenience when the flags give what it would.
                Err(_)
                    if a.source.is_none()
                        && event_flag.is_some()
                        && !matches!(compress_flag, Some(Compress::Gzip)) =>
                {
                    None
                }
                Err(errs) => {
                    let why = errs.join("; ");
                    return Err(if a.source.is_some() {
                        format!("--source: {why}")
                    } else {
                        format!(
                            "--report: its source pack cannot be measured ({why}); give --event-bytes (or --packs DIR)"
                        )
                    });
                }
            }
        }
    };

    let mut notes = Vec::new();
    let (event, event_max) = match (event_flag, &pack) {
        (Some(e), _) => (Input::new(e, Origin::Given, "--event-bytes"), None),
        (None, Some(p)) => (
            Input::new(
                p.mean,
                Origin::Measured,
                match &facts {
                    Some(f) => format!(
                        "mean of run {}'s first {} {} events rendered again here (its seed {}, entity pools and accounting)",
                        f.run_id,
                        num(p.events as f64, 0),
                        p.id,
                        p.seed
                    ),
                    None => format!(
                        "mean of {} {} {} events rendered here (seed 1, accounting tag included, as a run renders them)",
                        num(p.events as f64, 0),
                        p.id,
                        p.version
                    ),
                },
            ),
            Some(p.max as f64),
        ),
        (None, None) => {
            return Err(
                "give --event-bytes B (the mean event size), --source ID (a pack to measure) or --report FILE".into(),
            );
        }
    };
    let carrier = match &pack {
        Some(p) => p.carrier.clone(),
        None => carrier::synthetic(
            adapter,
            &setup,
            transport.unwrap_or(Transport::Tcp),
            batch.value,
            event.value,
            gzip_planned,
        ),
    };

    // What the report measured of the bytes.
    let measured_body = facts.as_ref().map(|f| {
        let head_share = if adapter.is_http() {
            let body = f.events_per_request * f.wire_per_event;
            size::head_bytes(&carrier, body) / f.events_per_request
        } else {
            0.0
        };
        MeasuredBody {
            bytes: (f.wire_per_event - head_share).max(0.0),
            compressed: f.gzip,
            how: format!(
                "run {}: {} B per event as sent, {} events per request",
                f.run_id,
                num(f.wire_per_event, 1),
                num(f.events_per_request, 1)
            ),
        }
    });

    let compression = match (compress_flag, &pack, &measured_body) {
        (Some(Compress::Ratio(r)), _, _) if r <= 1.0 => {
            Input::new(1.0, Origin::Given, "--compression none")
        }
        (Some(Compress::Ratio(r)), _, _) => {
            Input::new(r, Origin::Given, format!("--compression {}", sig(r)))
        }
        (Some(Compress::Gzip), Some(p), _) => Input::new(
            p.gzip_ratio,
            Origin::Measured,
            format!(
                "gzip (the adapter's, level fast) on {} {} batches of {} rendered here",
                p.id,
                adapter.name(),
                num(batch.value as f64, 0)
            ),
        ),
        (Some(Compress::Gzip), None, _) => {
            return Err(
                "--compression gzip measures gzip on a pack's batches: give --source ID, or a ratio (e.g. --compression 8)".into(),
            );
        }
        (None, _, Some(m)) if m.compressed => {
            let modelled = event.value + carrier.event_overhead;
            Input::new(
                modelled / m.bytes.max(1e-9),
                Origin::Measured,
                format!(
                    "the run's gzip: {} B of body per event before, {} B after",
                    num(modelled, 1),
                    num(m.bytes, 1)
                ),
            )
        }
        (None, _, _) => Input::new(
            1.0,
            Origin::Default,
            "none (the engine's target.compression)",
        ),
    };

    let days = match a.days {
        Some(d) => Input::new(d, Origin::Given, "--days"),
        None => Input::new(
            DEFAULT_DAYS,
            Origin::Default,
            "90 days, a common searchable retention",
        ),
    };
    let latency_ms = match (
        latency_flag,
        facts.as_ref().and_then(|f| f.service_ms.map(|m| (f, m))),
    ) {
        (Some(l), _) => Input::new(l, Origin::Given, "--latency-ms"),
        (None, Some((f, m))) => Input::new(
            m,
            Origin::Measured,
            format!("mean service latency of run {}", f.run_id),
        ),
        (None, None) => Input::new(
            DEFAULT_LATENCY_MS,
            Origin::Default,
            "assumed (HEC on a LAN: 5–20 ms; across a WAN: 50–150 ms)",
        ),
    };
    let rate_per_core = match (
        facts
            .as_ref()
            .and_then(|f| f.processing_eps.map(|r| (f, r))),
        &pack,
    ) {
        (Some((f, r)), _) => Some(Input::new(
            r,
            Origin::Measured,
            format!(
                "run {}'s events over its processing time (render, frame, gzip; summed over {} threads)",
                f.run_id, f.threads
            ),
        )),
        (None, Some(p)) => Some(Input::new(
            p.processing_eps,
            Origin::Measured,
            format!(
                "{} rendered into {} batches{} on one thread here for {} s (the generator alone: {} events/s)",
                p.id,
                adapter.name(),
                if gzip_planned { ", gzipped" } else { "" },
                num((RATE_BUDGET * 3 / 4).as_secs_f64(), 2),
                num(p.render_eps, 0)
            ),
        )),
        (None, None) => None,
    };

    // Notes: what the inputs include and what they leave out.
    if let Some(m) = &measured_body
        && !m.compressed
        && m.bytes < event.value
    {
        notes.push(format!(
            "the run sent {} B of body per event, less than the {} B event: its events were not these (another pack version or entity pools, or a report made by hand); the wire figures follow the run, the licence the event size",
            num(m.bytes, 1),
            num(event.value, 1)
        ));
    }
    if let Some(p) = &pack
        && event_flag.is_none()
    {
        let without = (event.value - p.tag_bytes) * eps.value * 86_400.0 / 1e9;
        notes.push(format!(
            "{} B of each event is ingestbench's accounting tag (source.accounting); events without it make {} GB a day of licence volume",
            num(p.tag_bytes, 1),
            sig(without)
        ));
    }
    if let Some(p) = &pack
        && adapter.is_http()
        && !gzip_planned
        && measured_body.as_ref().is_none_or(|m| !m.compressed)
    {
        notes.push(format!(
            "gzip (--compression gzip) would compress {}'s batches of {} {}:1, measured here",
            p.id,
            num(batch.value as f64, 0),
            sig(p.gzip_ratio)
        ));
    }
    if adapter == Adapter::Hec {
        notes.push(
            "HEC's host, source and index members, when a config sets them, add 10 B plus their length each to every envelope".into(),
        );
    }
    if adapter == Adapter::Syslog && carrier.syslog_header > 0.0 {
        let with = (event.value + carrier.syslog_header) * eps.value * 86_400.0 / 1e9;
        notes.push(format!(
            "a syslog input that stores the whole message (Splunk's _raw does) counts the {} B header too: {} GB a day",
            num(carrier.syslog_header, 0),
            sig(with)
        ));
    }
    if let Some(f) = &facts {
        notes.push(format!(
            "run {} used {} threads and {} connections; sizes come from its bytes as sent (the pack's sizes only for the licence), at this rate",
            f.run_id, f.threads, f.connections
        ));
    }
    if pack.is_none() && adapter.is_http() {
        notes.push(
            "events are taken to be JSON objects (embedded as they are); text events travel as JSON strings, quoted and escaped: give --source ID to measure a pack's".into(),
        );
    }

    Ok(Plan {
        eps,
        event_bytes: event,
        event_bytes_max: event_max,
        days,
        batch,
        batch_bytes,
        adapter,
        transport,
        carrier,
        compression,
        measured_body,
        latency_ms,
        rate_per_core,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        notes,
    })
}

/// How to render a report's run's events again: its seed, entity pools and accounting, and as
/// many events as it sent.
fn recipe(f: &RunFacts) -> Recipe {
    let mut sizes = Sizes::default();
    for (kind, n) in &f.entities {
        if let Some(k) = EntityKind::parse(kind) {
            sizes.set(k, *n as usize);
        }
    }
    Recipe {
        seed: f.seed.unwrap_or(1),
        sizes,
        accounting: f.accounting,
        events: Some(f.events_sent.max(1) as usize),
    }
}
