//! `--source ID`: a pack measured here. Its events are rendered by the real generator (seed 1,
//! default entity pools, accounting on, as a run renders them) and framed by the real
//! adapter for the planned batch size, which gives the mean and largest event, the carrier's
//! bytes (escaping included) and what gzip makes of a batch. Then, for a bounded time on one
//! thread, events are rendered alone and rendered into batches as a run's worker does
//! (framing, and gzip when compression is planned): the render rate per core. Sizes are
//! deterministic; rates are this machine's.

use std::time::{Duration, Instant};

use crate::adapter::gzip::Gzip;
use crate::adapter::{Embed, json_escape_into};
use crate::generate::{EventCtx, Generator};
use crate::pack::entities::{Entities, Sizes};
use crate::pack::load::Carrier as PackCarrier;
use crate::pack::{self, Catalog};

use super::carrier::{self, HttpSetup, RUN_ID, TIME_NS};
use super::{Adapter, Carrier, Origin, Transport};

/// Events rendered for the sizes: at least this many, and two batches' worth.
pub const MIN_SAMPLE: usize = 2_000;
pub const MAX_SAMPLE: usize = 20_000;

/// How long rates are measured for: a quarter rendering alone, the rest as the worker does.
pub const RATE_BUDGET: Duration = Duration::from_secs(1);

/// The largest batch timed: per-event costs no longer change with size, and a batch of a
/// million events would outlast the budget.
const RATE_BATCH: usize = 10_000;

/// Events rendered before each clock starts.
const WARM_UP: u64 = 2_000;

/// How the sample is rendered: a run's seed, entity pools and accounting, and how many
/// events (indices 0..n, so a run's own events come out again).
#[derive(Clone, Debug)]
pub struct Recipe {
    pub seed: u64,
    pub sizes: Sizes,
    pub accounting: bool,
    /// Events to render; `None`: at least `MIN_SAMPLE` and two batches, at most `MAX_SAMPLE`.
    pub events: Option<usize>,
}

impl Default for Recipe {
    /// Seed 1, default pools, accounting on (as a run renders by default).
    fn default() -> Self {
        Recipe {
            seed: 1,
            sizes: Sizes::default(),
            accounting: true,
            events: None,
        }
    }
}

/// What a pack measured.
#[derive(Clone, Debug)]
pub struct PackSizes {
    pub id: String,
    pub seed: u64,
    pub version: String,
    pub carrier_kind: PackCarrier,
    /// Events rendered for the sizes.
    pub events: usize,
    pub mean: f64,
    pub max: usize,
    /// Mean bytes of the accounting tag in each event (a run's `source.accounting: true`).
    pub tag_bytes: f64,
    pub carrier: Carrier,
    /// Body bytes over gzip's bytes, over the sample's batches.
    pub gzip_ratio: f64,
    /// Events per second the generator alone renders on one core.
    pub render_eps: f64,
    /// Events per second rendered into framed batches (and gzipped when planned) on one core.
    pub processing_eps: f64,
}

fn ctx(i: u64) -> EventCtx {
    EventCtx {
        index: i,
        // 10 µs apart, as at 100,000 events/s.
        time_ns: TIME_NS + i as i64 * 10_000,
        agent: 0,
        seq: i,
        // A realtime run's tags carry their send time: 13 digits of ms.
        sent_ms: Some((TIME_NS / 1_000_000) as u64),
    }
}

/// Measures pack `id` for `adapter` over `transport` in batches of `batch`, gzip planned or
/// not, taking `budget` for the rates.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    catalog: &Catalog,
    id: &str,
    adapter: Adapter,
    setup: &HttpSetup,
    transport: Transport,
    batch: u64,
    gzip: bool,
    recipe: &Recipe,
    budget: Duration,
) -> Result<PackSizes, Vec<String>> {
    let Some(src) = catalog.find(id) else {
        return Err(vec![pack::unknown_id(catalog, id)]);
    };
    let open = pack::open(src)?;
    let entities = Entities::generate(recipe.seed, &recipe.sizes);
    let (tagged, _) = open.compile(&entities, recipe.accounting)?;
    let (plain, _) = open.compile(&entities, false)?;
    let def = &open.def;
    let n = match recipe.events {
        Some(n) => n.clamp(1, MAX_SAMPLE),
        None => (batch as usize)
            .saturating_mul(2)
            .clamp(MIN_SAMPLE, MAX_SAMPLE),
    };

    // Sizes: n events as a run renders them, and the same events without the tag.
    let mut g = Generator::new(tagged.program.clone(), recipe.seed, RUN_ID);
    let mut bare = Generator::new(plain.program.clone(), recipe.seed, RUN_ID);
    let mut events: Vec<Vec<u8>> = Vec::with_capacity(n);
    let mut untagged = 0usize;
    let mut scratch = Vec::new();
    for i in 0..n as u64 {
        let mut ev = Vec::new();
        g.render(&ctx(i), &mut ev);
        events.push(ev);
        scratch.clear();
        bare.render(&ctx(i), &mut scratch);
        untagged += scratch.len();
    }
    let total: usize = events.iter().map(Vec::len).sum();
    let mean = total as f64 / n as f64;
    let max = events.iter().map(Vec::len).max().unwrap_or(0);
    let (syslog_header, header_text) = carrier::syslog_header(def);
    let syslog_header = if def.carrier == PackCarrier::Syslog {
        0
    } else {
        syslog_header
    };

    // The carrier over the sample, and gzip over its batches.
    let mut gz = Gzip::new();
    let mut gz_out = Vec::new();
    let (mut body_total, mut zipped_body, mut zipped) = (0usize, 0usize, 0usize);
    let chunk = (batch as usize).max(1);
    let carrier = match adapter {
        Adapter::Lphc | Adapter::Hec | Adapter::Elasticsearch => {
            let f = carrier::http_framer(adapter, setup, def.carrier, &def.sourcetype, gzip);
            for c in events.chunks(chunk) {
                let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
                let body = carrier::http_body(&f, &refs);
                body_total += body.len();
                gz.compress(&body, &mut gz_out);
                zipped_body += body.len();
                zipped += gz_out.len();
            }
            let overhead = body_total as f64 / n as f64 - mean;
            let kind = format!("{id}'s {} events", def.carrier);
            Carrier {
                event_overhead: overhead,
                head: carrier::head_fixed(&f),
                what: carrier::http_what(&f, overhead, &kind),
                sample: carrier::http_sample(&f),
                from: Origin::Measured,
                syslog_header: syslog_header as f64,
            }
        }
        Adapter::Syslog => {
            let mut f = carrier::syslog_framer(def, transport);
            let mut out = Vec::new();
            for c in events.chunks(chunk) {
                out.clear();
                for ev in c {
                    f.append(TIME_NS, &mut out, &mut scratch, |o| o.extend_from_slice(ev));
                }
                body_total += out.len();
                gz.compress(&out, &mut gz_out);
                zipped_body += out.len();
                zipped += gz_out.len();
            }
            let overhead = body_total as f64 / n as f64 - mean;
            let header = if syslog_header > 0 { &header_text } else { "" };
            Carrier {
                event_overhead: overhead,
                head: 0.0,
                what: carrier::syslog_what(
                    transport,
                    syslog_header as f64,
                    overhead - syslog_header as f64,
                ),
                sample: carrier::syslog_sample(transport, header),
                from: Origin::Measured,
                syslog_header: syslog_header as f64,
            }
        }
    };

    let (render_eps, processing_eps) = rates(
        &tagged.program,
        def,
        adapter,
        setup,
        transport,
        chunk.min(RATE_BATCH),
        gzip,
        budget,
    );
    Ok(PackSizes {
        id: def.id.clone(),
        seed: recipe.seed,
        version: def.version.to_string(),
        carrier_kind: def.carrier,
        events: n,
        mean,
        max,
        tag_bytes: (total as f64 - untagged as f64) / n as f64,
        carrier,
        gzip_ratio: zipped_body as f64 / zipped.max(1) as f64,
        render_eps,
        processing_eps,
    })
}

/// Events per second on this thread: the generator alone for a quarter of `budget`, then
/// rendering into framed batches (gzipped when `gzip`) as the worker does for the rest.
#[allow(clippy::too_many_arguments)]
fn rates(
    program: &std::sync::Arc<crate::generate::program::Program>,
    def: &crate::pack::load::PackDef,
    adapter: Adapter,
    setup: &HttpSetup,
    transport: Transport,
    batch: usize,
    gzip: bool,
    budget: Duration,
) -> (f64, f64) {
    let mut g = Generator::new(program.clone(), 7, RUN_ID);
    let mut buf = Vec::with_capacity(1 << 16);
    // Warm the caches (string tables, timestamp caches) before the clock starts.
    for i in 0..WARM_UP {
        buf.clear();
        g.render(&ctx(1_000_000_000 + i), &mut buf);
    }
    let mut i = 0u64;
    let quarter = budget / 4;
    let start = Instant::now();
    while start.elapsed() < quarter || i == 0 {
        for _ in 0..64 {
            buf.clear();
            g.render(&ctx(i), &mut buf);
            i += 1;
        }
    }
    let render_eps = i as f64 / start.elapsed().as_secs_f64();

    let mut body = Vec::with_capacity(1 << 20);
    let mut scratch = Vec::with_capacity(1 << 16);
    let mut zipped = Vec::with_capacity(1 << 20);
    let mut gz = Gzip::new();
    let rest = budget - quarter;
    // One batch as the worker renders it; the first one, which grows the buffers, is not
    // timed.
    let http = adapter
        .is_http()
        .then(|| carrier::http_framer(adapter, setup, def.carrier, &def.sourcetype, gzip));
    let mut syslog = (!adapter.is_http()).then(|| carrier::syslog_framer(def, transport));
    let mut one_batch = |i: &mut u64| {
        if let Some(f) = &http {
            f.begin(&mut body);
            for n in 0..batch {
                let c = ctx(*i);
                let id = crate::adapter::EventId {
                    agent: c.agent,
                    seq: c.seq,
                    sent_ms: c.sent_ms,
                };
                f.before_event(&mut body, n, c.time_ns, &id);
                match f.embed {
                    Embed::Direct => {
                        g.render(&c, &mut body);
                    }
                    Embed::JsonString => {
                        scratch.clear();
                        g.render(&c, &mut scratch);
                        json_escape_into(&scratch, &mut body);
                    }
                }
                f.after_event(&mut body, &id);
                *i += 1;
            }
            f.finish(&mut body);
            if gzip {
                gz.compress(&body, &mut zipped);
            }
        } else if let Some(f) = &mut syslog {
            body.clear();
            for _ in 0..batch {
                let c = ctx(*i);
                f.append(c.time_ns, &mut body, &mut scratch, |o| {
                    g.render(&c, o);
                });
                *i += 1;
            }
        }
    };
    one_batch(&mut i);
    let mut done = 0u64;
    let start = Instant::now();
    while start.elapsed() < rest || done == 0 {
        one_batch(&mut i);
        done += batch as u64;
    }
    (render_eps, done as f64 / start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pack_measures_plausibly_and_the_same_each_time() {
        let cat = Catalog::discover(None).unwrap();
        let budget = Duration::from_millis(40);
        let a = measure(
            &cat,
            "aws.cloudtrail",
            Adapter::Hec,
            &HttpSetup::placeholder(Adapter::Hec),
            Transport::Tcp,
            500,
            false,
            &Recipe::default(),
            budget,
        )
        .unwrap();
        let b = measure(
            &cat,
            "aws.cloudtrail",
            Adapter::Hec,
            &HttpSetup::placeholder(Adapter::Hec),
            Transport::Tcp,
            500,
            false,
            &Recipe::default(),
            budget,
        )
        .unwrap();
        assert_eq!(a.events, 2_000);
        assert!(a.mean > 300.0 && a.mean < 5_000.0, "{}", a.mean);
        assert!(a.max as f64 >= a.mean);
        assert_eq!(
            (a.mean, a.max, a.carrier.event_overhead),
            (b.mean, b.max, b.carrier.event_overhead)
        );
        // The index's own mean (200 events, the same renderer) is close.
        let idx = <Catalog as crate::config::PackIndex>::mean_event_bytes(&cat, "aws.cloudtrail")
            .unwrap();
        assert!((idx - a.mean).abs() / a.mean < 0.1, "{idx} vs {}", a.mean);
        // A JSON pack over HEC is embedded as it is: the envelope is the synthetic one.
        let syn = carrier::synthetic(
            Adapter::Hec,
            &HttpSetup::placeholder(Adapter::Hec),
            Transport::Tcp,
            500,
            a.mean,
            false,
        );
        let st_extra = "aws:cloudtrail".len() as f64 - "_json".len() as f64;
        assert!((a.carrier.event_overhead - syn.event_overhead - st_extra).abs() < 1e-9);
        assert!(a.tag_bytes > 10.0 && a.tag_bytes < 200.0, "{}", a.tag_bytes);
        assert!(a.gzip_ratio > 2.0, "{}", a.gzip_ratio);
        assert!(a.render_eps > 0.0 && a.processing_eps > 0.0);
        // The datagram header is the pack's (its app name and MSGID), not the default's.
        let open = pack::open(cat.find("aws.cloudtrail").unwrap()).unwrap();
        assert_eq!(
            a.carrier.syslog_header,
            carrier::syslog_header(&open.def).0 as f64
        );
    }

    #[test]
    fn a_runs_recipe_renders_its_events_again() {
        let cat = Catalog::discover(None).unwrap();
        let sizes = Sizes {
            host: 50,
            ..Sizes::default()
        };
        let r = Recipe {
            seed: 42,
            sizes,
            accounting: false,
            events: Some(200),
        };
        let m = measure(
            &cat,
            "aws.cloudtrail",
            Adapter::Lphc,
            &HttpSetup::placeholder(Adapter::Lphc),
            Transport::Tcp,
            20,
            false,
            &r,
            Duration::ZERO,
        )
        .unwrap();
        assert_eq!((m.events, m.seed, m.tag_bytes), (200, 42, 0.0));
        // The same events as the generator gives for seed 42, indices 0..200.
        let open = pack::open(cat.find("aws.cloudtrail").unwrap()).unwrap();
        let (p, _) = open
            .compile(&Entities::generate(42, &sizes), false)
            .unwrap();
        let mut g = Generator::new(p.program.clone(), 42, RUN_ID);
        let mut total = 0;
        for i in 0..200 {
            let mut ev = Vec::new();
            g.render(&ctx(i), &mut ev);
            total += ev.len();
        }
        assert_eq!(m.mean, total as f64 / 200.0);
    }

    #[test]
    fn syslog_native_packs_get_no_header() {
        let cat = Catalog::discover(None).unwrap();
        let s = measure(
            &cat,
            "linux.syslog",
            Adapter::Syslog,
            &HttpSetup::placeholder(Adapter::Syslog),
            Transport::Udp,
            100,
            false,
            &Recipe::default(),
            Duration::from_millis(20),
        )
        .unwrap();
        assert_eq!(s.carrier.syslog_header, 0.0);
        assert!(
            s.carrier.event_overhead.abs() < 1e-9,
            "unframed datagrams: {}",
            s.carrier.event_overhead
        );
        let t = measure(
            &cat,
            "linux.syslog",
            Adapter::Syslog,
            &HttpSetup::placeholder(Adapter::Syslog),
            Transport::Tcp,
            100,
            false,
            &Recipe::default(),
            Duration::from_millis(20),
        )
        .unwrap();
        // Octet counting: the length's digits and a space, 4 or 5 B for messages of 100–9,999 B.
        assert!(
            t.carrier.event_overhead >= 3.0 && t.carrier.event_overhead <= 6.0,
            "{}",
            t.carrier.event_overhead
        );
    }

    #[test]
    fn unknown_packs_say_so() {
        let cat = Catalog::discover(None).unwrap();
        let e = measure(
            &cat,
            "aws.cloudtrial",
            Adapter::Hec,
            &HttpSetup::placeholder(Adapter::Hec),
            Transport::Tcp,
            500,
            false,
            &Recipe::default(),
            Duration::ZERO,
        )
        .unwrap_err();
        assert!(e[0].contains("did you mean"), "{e:?}");
    }
}
