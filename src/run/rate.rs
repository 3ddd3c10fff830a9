//! `workload.rate` (`--rate`): a steady data rate such as `20MB/s` or `500GB/day` turned into
//! events per second at setup. The mean event size is measured here by rendering a sample of
//! the run's own source — its compiled pack, the run's seed and run id, accounting tags as the
//! run writes them — and framing it as the run's adapter will send it: the lphc JSON array,
//! HEC event envelopes or raw lines, plain HTTP's bare event, syslog's header and framing.
//! Compression and the HTTP request head are not counted: the rate is of event data as framed.
//! Then `eps = bytes per second / mean framed bytes`; the report states both units
//! (`data_rate`). A mix of sources is measured source by source, each framed as its own
//! (carrier, HEC sourcetype, syslog envelope), and divides by the share-weighted mean.
//! Nothing here runs on a worker.

use crate::adapter::syslog::SyslogFramer;
use crate::adapter::{Body, Embed, Framer, json_escape_into};
use crate::config::units::DataRate;
use crate::config::validate::MAX_EPS;
use crate::generate::{EventCtx, Generator};
use crate::pack::compile::CompiledPack;
use crate::run::error::SetupError;

/// Events rendered for the mean: a few thousand, and at least two batches' worth.
pub const SAMPLE_EVENTS: usize = 4_000;
/// No more than this, however large the batches.
pub const MAX_SAMPLE_EVENTS: usize = 20_000;

/// A data rate, measured and converted.
#[derive(Clone, Debug, PartialEq)]
pub struct RatePlan {
    /// What was asked (`workload.rate`).
    pub asked: DataRate,
    /// The steady rate the run keeps: `asked` over `mean_event_bytes`.
    pub eps: f64,
    /// Bytes per event as framed for the adapter (the divisor).
    pub mean_event_bytes: f64,
    /// Bytes per event as rendered, before framing (the tag included, as the run sends it).
    pub raw_event_bytes: f64,
    /// Events rendered for the means.
    pub sample_events: usize,
    /// What the framed size counts, for a person: `lphc JSON array`, `HEC event envelopes`,
    /// `HEC raw lines`, `plain HTTP bodies`, `syslog octet-counting` (`lf`, `datagrams`).
    pub framing: String,
    /// A mix's sources, each measured on its own (empty for one source).
    pub sources: Vec<SourceSize>,
}

/// One source of a mix as measured: its share of the events and its mean sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceSize {
    pub source: String,
    pub share: f64,
    pub mean_event_bytes: f64,
    pub raw_event_bytes: f64,
}

/// One source's sample, measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Framed bytes per event kept.
    pub mean: f64,
    /// Rendered bytes per event.
    pub raw: f64,
    pub events: usize,
    pub framing: String,
}

impl RatePlan {
    /// The report's `data_rate`.
    pub fn report(&self) -> crate::report::rate::DataRate {
        let b = self.asked.bytes_per_s();
        crate::report::rate::DataRate {
            asked: self.asked.to_string(),
            bytes_per_s: b,
            mb_per_s: b / 1e6,
            gb_per_day: b * 86_400.0 / 1e9,
            target_eps: self.eps,
            mean_event_bytes: self.mean_event_bytes,
            raw_event_bytes: self.raw_event_bytes,
            sample_events: self.sample_events,
            framing: self.framing.clone(),
            sources: self
                .sources
                .iter()
                .map(|p| crate::report::rate::SourceRate {
                    source: p.source.clone(),
                    share: p.share,
                    mean_event_bytes: p.mean_event_bytes,
                    raw_event_bytes: p.raw_event_bytes,
                })
                .collect(),
        }
    }
}

/// How the sample is framed: the run's HTTP framer, or its syslog framer.
pub enum Framing<'a> {
    Http(&'a Framer),
    Syslog(SyslogFramer),
}

/// Everything the sample is rendered with, as the run renders its events.
pub struct Sample<'a> {
    pub pack: &'a CompiledPack,
    pub seed: u64,
    pub run_id: &'a str,
    /// Realtime runs' tags carry their batch's send time; deterministic ones do not.
    pub realtime: bool,
    pub batch_events: usize,
}

/// Each source's `(id, share, measurement)`: `asked` over the share-weighted mean (one
/// source's share is 1, and it is not listed apart). A rate that comes to more events per
/// second than a run can be asked for, or to none, is refused naming `workload.rate`.
pub fn plan_mix(
    asked: DataRate,
    parts: Vec<(String, f64, Measured)>,
) -> Result<RatePlan, SetupError> {
    let weighted = |f: fn(&Measured) -> f64| parts.iter().map(|(_, w, m)| w * f(m)).sum::<f64>();
    let mut framings: Vec<&str> = Vec::new();
    for (_, _, m) in &parts {
        if !framings.contains(&m.framing.as_str()) {
            framings.push(&m.framing);
        }
    }
    let mix = Measured {
        mean: weighted(|m| m.mean),
        raw: weighted(|m| m.raw),
        events: parts.iter().map(|(_, _, m)| m.events).sum(),
        framing: framings.join(", "),
    };
    let sources = parts
        .iter()
        .filter(|_| parts.len() > 1)
        .map(|(id, share, m)| SourceSize {
            source: id.clone(),
            share: *share,
            mean_event_bytes: m.mean,
            raw_event_bytes: m.raw,
        })
        .collect();
    convert(asked, mix, sources)
}

/// Renders and frames a sample of `s`; refused when no event of it can be sent.
pub fn measured(s: &Sample, framing: Framing) -> Result<Measured, SetupError> {
    let n = s
        .batch_events
        .saturating_mul(2)
        .clamp(SAMPLE_EVENTS, MAX_SAMPLE_EVENTS);
    let (raw, framed, kept, what) = measure(s, framing, n);
    if kept == 0 {
        return Err(SetupError::invalid(format!(
            "workload.rate: none of {n} sampled events fits target.syslog.max_message_bytes, so no event size can be measured"
        )));
    }
    Ok(Measured {
        mean: framed as f64 / kept as f64,
        raw: raw as f64 / n as f64,
        events: n,
        framing: what,
    })
}

fn convert(asked: DataRate, m: Measured, sources: Vec<SourceSize>) -> Result<RatePlan, SetupError> {
    let eps = asked.bytes_per_s() / m.mean;
    if !(crate::config::validate::MIN_EPS..=MAX_EPS).contains(&eps) {
        return Err(SetupError::invalid(format!(
            "workload.rate: {asked} over a mean event of {:.1} bytes ({}) is {eps:.6} events/s; it must come to between {} and {MAX_EPS}",
            m.mean,
            m.framing,
            crate::config::validate::MIN_EPS
        )));
    }
    Ok(RatePlan {
        asked,
        eps,
        mean_event_bytes: m.mean,
        raw_event_bytes: m.raw,
        sample_events: m.events,
        framing: m.framing,
        sources,
    })
}

/// Renders `n` events and frames them in batches: (raw bytes of all, framed bytes of those
/// kept, how many were kept, what the framing is). Syslog leaves out messages over its
/// limit, as the run does (they are counted as oversize there, never sent).
fn measure(s: &Sample, framing: Framing, n: usize) -> (usize, usize, usize, String) {
    let mut g = Generator::new(s.pack.program.clone(), s.seed, s.run_id);
    let now = crate::generate::time::now();
    let sent_ms = s.realtime.then_some((now / 1_000_000) as u64);
    let ctx = |i: usize| EventCtx {
        index: i as u64,
        time_ns: now,
        agent: 0,
        seq: i as u64,
        sent_ms,
    };
    let batch = s.batch_events.clamp(1, n);
    let (mut ev, mut body, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    let (mut raw, mut framed, mut kept) = (0usize, 0usize, 0usize);
    match framing {
        Framing::Http(f) => {
            let what = match f.body {
                Body::JsonArray => "lphc JSON array",
                Body::HecEnvelopes => "HEC event envelopes",
                Body::HecLines => "HEC raw lines",
                Body::Plain => "plain HTTP bodies",
                Body::Bulk => "_bulk NDJSON",
            };
            for start in (0..n).step_by(batch) {
                f.begin(&mut body);
                for (k, i) in (start..(start + batch).min(n)).enumerate() {
                    ev.clear();
                    g.render(&ctx(i), &mut ev);
                    raw += ev.len();
                    let id = crate::adapter::EventId {
                        agent: 0,
                        seq: i as u64,
                        sent_ms,
                    };
                    f.before_event(&mut body, k, now, &id);
                    match f.embed {
                        Embed::Direct => body.extend_from_slice(&ev),
                        Embed::JsonString => json_escape_into(&ev, &mut body),
                    }
                    f.after_event(&mut body, &id);
                    kept += 1;
                }
                f.finish(&mut body);
                framed += body.len();
            }
            (raw, framed, kept, what.to_string())
        }
        Framing::Syslog(mut f) => {
            let what = match f.framing {
                crate::adapter::syslog::Framing::OctetCounting => "syslog octet-counting",
                crate::adapter::syslog::Framing::Lf => "syslog lf",
                crate::adapter::syslog::Framing::Datagram => "syslog datagrams",
            };
            for i in 0..n {
                ev.clear();
                g.render(&ctx(i), &mut ev);
                raw += ev.len();
                body.clear();
                if f.append(now, &mut body, &mut scratch, |o| o.extend_from_slice(&ev)) {
                    framed += body.len();
                    kept += 1;
                }
            }
            (raw, framed, kept, what.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::units::parse_data_rate;
    use crate::pack::entities::{Entities, Sizes};
    use crate::pack::{self, Catalog};

    /// One source measured and converted, as a run of one pack does.
    fn plan(asked: DataRate, s: &Sample, framing: Framing) -> Result<RatePlan, SetupError> {
        plan_mix(asked, vec![("one".into(), 1.0, measured(s, framing)?)])
    }

    fn compiled(id: &str) -> std::sync::Arc<CompiledPack> {
        let cat = Catalog::discover(None).unwrap();
        let open = pack::open(cat.find(id).unwrap()).unwrap();
        open.compile(&Entities::generate(7, &Sizes::default()), true)
            .unwrap()
            .0
    }

    fn lphc_framer() -> Framer {
        let yaml = "schema_version: \"1.0\"\ntarget: { url: builtin }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 10, stop: { after: 5s } }\n";
        let store = crate::config::secrets::Store::new("/nonexistent/store".into());
        let cfg = crate::config::load_str(yaml, &store, None).config.unwrap();
        Framer::new(
            &cfg.target,
            None,
            "127.0.0.1:1",
            "/ingest",
            crate::pack::load::Carrier::Json,
            "aws:cloudtrail",
            "r-000000000000",
        )
    }

    #[test]
    fn eps_is_the_rate_over_the_framed_mean() {
        let p = compiled("aws.cloudtrail");
        let s = Sample {
            pack: &p,
            seed: 7,
            run_id: "r-000000000000",
            realtime: false,
            batch_events: 100,
        };
        let f = lphc_framer();
        let r = plan(parse_data_rate("20MB/s").unwrap(), &s, Framing::Http(&f)).unwrap();
        assert_eq!(r.sample_events, SAMPLE_EVENTS);
        assert_eq!(r.framing, "lphc JSON array");
        // JSON objects go into the array as they are: a comma each, and `[`/`]` a batch.
        let per_event = r.mean_event_bytes - r.raw_event_bytes;
        assert!((per_event - (1.0 + 1.0 / 100.0)).abs() < 1e-9, "{r:?}");
        assert!((r.eps * r.mean_event_bytes - 20e6).abs() < 1e-3, "{r:?}");
        // The same seed gives the same sample, so the same rate.
        let again = plan(parse_data_rate("20MB/s").unwrap(), &s, Framing::Http(&f)).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn syslog_counts_its_header_and_framing() {
        let p = compiled("aws.cloudtrail");
        let s = Sample {
            pack: &p,
            seed: 7,
            run_id: "r-000000000000",
            realtime: true,
            batch_events: 500,
        };
        let framer = SyslogFramer::new(None, &p.def, "host", false);
        let r = plan(
            parse_data_rate("1GB/h").unwrap(),
            &s,
            Framing::Syslog(framer),
        )
        .unwrap();
        assert_eq!(r.framing, "syslog octet-counting");
        // An RFC 5424 header of some 60 bytes and a length prefix in front of each event.
        let over = r.mean_event_bytes - r.raw_event_bytes;
        assert!(over > 40.0 && over < 200.0, "{r:?}");
        assert!((r.eps - 1e9 / 3600.0 / r.mean_event_bytes).abs() < 1e-6);
    }

    #[test]
    fn a_rate_beyond_the_maximum_is_refused_naming_the_key() {
        let p = compiled("aws.cloudtrail");
        let s = Sample {
            pack: &p,
            seed: 7,
            run_id: "r-000000000000",
            realtime: false,
            batch_events: 500,
        };
        let f = lphc_framer();
        let e = plan(parse_data_rate("900GB/s").unwrap(), &s, Framing::Http(&f)).unwrap_err();
        let m = e.messages().join("\n");
        assert!(
            m.starts_with("workload.rate: 900GB/s over a mean event of"),
            "{m}"
        );
    }
}
