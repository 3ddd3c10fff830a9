//! The `http` section of a plain HTTP load's report (`adapter: http`, `ingestbench http`):
//! hey's and rpcload's summary — requests, fastest, slowest, average, requests/s, bytes sent
//! and received per request — with each phase of the transaction (connect, TLS handshake,
//! request write, wait for the first byte, response read, and the whole) as percentiles
//! and exact means, fastest and slowest, the time the name took to resolve (once, at the
//! start), and hey's linear response-time histogram of the whole transaction.

use serde::Serialize;

use super::{Percentiles, percentiles};
use crate::run::http::HttpPlan;
use crate::stats::phases::{Phase, Phases};

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct HttpReport {
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub method: &'static str,
    pub keepalive: bool,
    /// The statuses counted as success; empty: any 2xx.
    pub expect_status: Vec<u16>,
    /// Requests answered (whatever the status), over the whole run.
    pub requests: u64,
    pub requests_per_s: f64,
    pub fastest_ms: Option<f64>,
    pub slowest_ms: Option<f64>,
    pub average_ms: Option<f64>,
    /// Bytes of one request on the wire (head and body), on average.
    pub request_bytes: Option<f64>,
    /// Bytes of response bodies, in all and per answered request.
    pub response_bytes: u64,
    pub response_bytes_per_request: Option<f64>,
    /// Resolving the target's name, once before the start (null for a loopback address or
    /// the built-in sink, which need none).
    pub dns_ms: Option<f64>,
    pub connections_opened: u64,
    pub phases_ms: PhasesMs,
    /// hey's response-time histogram: 10 equal steps from the fastest to the slowest
    /// transaction, each with the requests at or under it.
    pub histogram: Vec<Step>,
}

/// Each phase, in milliseconds: `mean`, `fastest` and `slowest` exact, percentiles from the
/// HDR histogram (microsecond resolution).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PhasesMs {
    pub connect: PhaseMs,
    pub tls: PhaseMs,
    pub write: PhaseMs,
    pub wait: PhaseMs,
    pub read: PhaseMs,
    pub total: PhaseMs,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PhaseMs {
    pub mean: Option<f64>,
    pub fastest: Option<f64>,
    pub slowest: Option<f64>,
    pub percentiles: Percentiles,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Step {
    pub le_ms: f64,
    pub count: u64,
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn phase(p: &Phase) -> PhaseMs {
    let any = p.count > 0;
    PhaseMs {
        mean: p.mean_ns().map(ms),
        fastest: any.then(|| ms(p.min_ns as f64)),
        slowest: any.then(|| ms(p.max_ns as f64)),
        percentiles: percentiles(&p.hist),
    }
}

/// The section, from the run's phases. `duration_s` is the run's wall time; `bytes_sent` and
/// `requests_sent` are its counters (retries none: plain HTTP does not retry).
pub fn build(
    plan: &HttpPlan,
    phases: Option<&Phases>,
    dns: Option<std::time::Duration>,
    duration_s: f64,
    bytes_sent: u64,
    requests_sent: u64,
) -> HttpReport {
    let empty = Phases::default();
    let ph = phases.unwrap_or(&empty);
    let t = &ph.total;
    let requests = t.count;
    let per = |x: u64, n: u64| (n > 0).then(|| x as f64 / n as f64);
    HttpReport {
        method: plan.method.name(),
        keepalive: plan.keepalive,
        expect_status: plan.expect.clone(),
        requests,
        requests_per_s: if duration_s > 0.0 {
            requests as f64 / duration_s
        } else {
            0.0
        },
        fastest_ms: (requests > 0).then(|| ms(t.min_ns as f64)),
        slowest_ms: (requests > 0).then(|| ms(t.max_ns as f64)),
        average_ms: t.mean_ns().map(ms),
        request_bytes: per(bytes_sent, requests_sent),
        response_bytes: ph.body_bytes,
        response_bytes_per_request: per(ph.body_bytes, requests),
        dns_ms: dns.map(|d| d.as_secs_f64() * 1000.0),
        connections_opened: ph.connections,
        phases_ms: PhasesMs {
            connect: phase(&ph.connect),
            tls: phase(&ph.tls),
            write: phase(&ph.write),
            wait: phase(&ph.wait),
            read: phase(&ph.read),
            total: phase(t),
        },
        histogram: steps(t),
    }
}

/// hey's 11 marks: fastest, then 10 equal steps to the slowest; each counts the requests
/// above the previous mark and at or under its own.
fn steps(t: &Phase) -> Vec<Step> {
    if t.count == 0 {
        return Vec::new();
    }
    let (lo, hi) = (t.min_ns / 1000, t.max_ns / 1000);
    let width = (hi - lo) as f64 / 10.0;
    let mut out = Vec::with_capacity(11);
    let mut below = 0;
    for k in 0..=10 {
        let mark = if k == 10 {
            hi
        } else {
            lo + (width * k as f64) as u64
        };
        let upto = t.hist.count_between(0, mark);
        out.push(Step {
            le_ms: mark as f64 / 1000.0,
            count: upto - below,
        });
        below = upto;
    }
    out
}

/// The text report of `ingestbench http`, laid out as hey's and rpcload's (seconds, as they
/// print them) with what they lack: the intended (CO-free) latency beside the service latency
/// when a rate was asked, errors by kind, the SLOs, and the verdict line.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's Index returns Null for a missing key or a non-object and never \
              panics"
)]
pub fn text(r: &super::Report) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let Some(h) = &r.http else {
        return super::text::render(r);
    };
    let s = &r.summary;
    let secs =
        |ms: Option<f64>| ms.map_or_else(|| "-".to_string(), |v| format!("{:.4} secs", v / 1000.0));
    let _ = writeln!(o, "Summary:");
    let _ = writeln!(o, "  Total:\t{:.4} secs", r.duration_s);
    let _ = writeln!(o, "  Slowest:\t{}", secs(h.slowest_ms));
    let _ = writeln!(o, "  Fastest:\t{}", secs(h.fastest_ms));
    let _ = writeln!(o, "  Average:\t{}", secs(h.average_ms));
    let _ = writeln!(o, "  Requests/sec:\t{:.4}", h.requests_per_s);
    let _ = writeln!(o);
    let _ = writeln!(o, "  Total data:\t{} bytes", h.response_bytes);
    let _ = writeln!(
        o,
        "  Size/request:\t{} bytes",
        h.response_bytes_per_request.map_or(0, |v| v.round() as u64)
    );
    let _ = writeln!(
        o,
        "  Sent:\t\t{} bytes ({} per request)",
        s.bytes_sent,
        h.request_bytes.map_or(0, |v| v.round() as u64)
    );
    let target = if r.config["workload"]["profile"] == "closed" {
        "none (closed loop: each connection sends when answered)".to_string()
    } else {
        format!(
            "{:.1} requests/s (achieved {:.1})",
            s.target_eps, s.achieved_eps
        )
    };
    let _ = writeln!(o, "  Rate:\t\t{target}");
    histogram(&mut o, h);
    latency(&mut o, r);
    details(&mut o, h);
    let _ = writeln!(o, "\nStatus code distribution:");
    for (code, n) in &r.status {
        let ok = code.parse::<u16>().is_ok_and(|c| {
            if h.expect_status.is_empty() {
                (200..300).contains(&c)
            } else {
                h.expect_status.contains(&c)
            }
        });
        let _ = writeln!(
            o,
            "  [{code}]\t{n} responses{}",
            if ok { "" } else { "  (failed)" }
        );
    }
    let errors = [
        ("connect", s.connect_errors),
        ("reset", s.connection_resets),
        ("timeout", s.timeouts),
        ("protocol", s.protocol_errors),
        (
            "tls",
            u64::from(r.aborted.as_deref().is_some_and(|a| a.contains("TLS"))),
        ),
    ];
    if errors.iter().any(|(_, n)| *n > 0) {
        let _ = writeln!(o, "\nError distribution:");
        for (kind, n) in errors.iter().filter(|(_, n)| *n > 0) {
            let _ = writeln!(o, "  [{n}]\t{kind}");
        }
    }
    if !r.slo.is_empty() {
        super::text::slo_table(&mut o, &r.slo);
    }
    super::text::verdict(&mut o, r);
    o
}

fn histogram(o: &mut String, h: &HttpReport) {
    use std::fmt::Write;
    let _ = writeln!(o, "\nResponse time histogram:");
    let most = h
        .histogram
        .iter()
        .map(|s| s.count)
        .max()
        .unwrap_or(0)
        .max(1);
    for s in &h.histogram {
        let bar = "■".repeat(((s.count * 40).div_ceil(most)) as usize);
        let _ = writeln!(o, "  {:.3} [{}]\t|{bar}", s.le_ms / 1000.0, s.count);
    }
}

#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's Index returns Null for a missing key or a non-object and never \
              panics"
)]
fn latency(o: &mut String, r: &super::Report) {
    use std::fmt::Write;
    let open_loop = r.config["workload"]["profile"] != "closed";
    let total = &r
        .http
        .as_ref()
        .map(|h| h.phases_ms.total.percentiles.clone())
        .unwrap_or_default();
    if open_loop {
        let _ = writeln!(
            o,
            "\nLatency distribution (intended: from each request's scheduled time, free of coordinated omission | service: from its write):"
        );
    } else {
        let _ = writeln!(o, "\nLatency distribution:");
    }
    let intended = &r.latency_ms.intended;
    for (key, pct, v) in total.fields() {
        if key == "max" {
            continue;
        }
        let Some(v) = total.shown(pct, v) else {
            continue;
        };
        if open_loop {
            let i = intended
                .fields()
                .iter()
                .find(|f| f.0 == key)
                .and_then(|f| intended.shown(f.1, f.2));
            let i = i.map_or_else(|| "-".into(), |x| format!("{:.4} secs", x / 1000.0));
            let _ = writeln!(o, "  {pct}% in {i} | {:.4} secs", v / 1000.0);
        } else {
            let _ = writeln!(o, "  {pct}% in {:.4} secs", v / 1000.0);
        }
    }
}

fn details(o: &mut String, h: &HttpReport) {
    use std::fmt::Write;
    let _ = writeln!(o, "\nDetails (average, fastest, slowest, p99):");
    let dns = h.dns_ms.map_or_else(
        || "none (an address or the built-in sink)".to_string(),
        |v| format!("{:.4} secs, once at the start", v / 1000.0),
    );
    let _ = writeln!(o, "  DNS lookup:\t{dns}");
    let p = &h.phases_ms;
    for (name, ph) in [
        ("connect", &p.connect),
        ("TLS handshake", &p.tls),
        ("req write", &p.write),
        ("resp wait", &p.wait),
        ("resp read", &p.read),
    ] {
        let f = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{:.4}", x / 1000.0));
        let p99 = ph.percentiles.shown(99.0, ph.percentiles.p99);
        let _ = writeln!(
            o,
            "  {name}:\t{} secs, {} secs, {} secs, {} secs",
            f(ph.mean),
            f(ph.fastest),
            f(ph.slowest),
            f(p99)
        );
    }
    let _ = writeln!(o, "  connections opened:\t{}", h.connections_opened);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::phases::Request;

    #[test]
    fn the_section_adds_up() {
        let mut ph = Phases::default();
        for i in 0..100u64 {
            ph.record(
                &Request {
                    connect: if i == 0 { 50_000 } else { 0 },
                    tls: 0,
                    write: 2_000,
                    wait: 100_000 + i * 1_000,
                    read: 3_000,
                },
                i == 0,
            );
        }
        ph.body_bytes = 1500;
        let plan = HttpPlan {
            method: crate::config::schema::HttpMethod::Get,
            headers: Vec::new(),
            fixed: None,
            expect: vec![],
            keepalive: true,
        };
        let r = build(&plan, Some(&ph), None, 2.0, 10_000, 100);
        assert_eq!(r.requests, 100);
        assert_eq!(r.requests_per_s, 50.0);
        assert_eq!(r.request_bytes, Some(100.0));
        assert_eq!(r.response_bytes_per_request, Some(15.0));
        assert_eq!(r.connections_opened, 1);
        let p = &r.phases_ms;
        let sum: f64 = [&p.connect, &p.tls, &p.write, &p.wait, &p.read]
            .iter()
            .map(|x| x.mean.unwrap())
            .sum();
        assert!((sum - p.total.mean.unwrap()).abs() < 1e-9);
        assert_eq!(r.histogram.len(), 11);
        assert_eq!(r.histogram.iter().map(|s| s.count).sum::<u64>(), 100);
        assert_eq!(r.fastest_ms, Some(0.106));
        assert_eq!(r.slowest_ms, Some(0.204));
    }
}
