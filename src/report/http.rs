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

#[derive(Clone, Debug, Serialize)]
pub struct HttpReport {
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
#[derive(Clone, Debug, Serialize)]
pub struct PhasesMs {
    pub connect: PhaseMs,
    pub tls: PhaseMs,
    pub write: PhaseMs,
    pub wait: PhaseMs,
    pub read: PhaseMs,
    pub total: PhaseMs,
}

#[derive(Clone, Debug, Serialize)]
pub struct PhaseMs {
    pub mean: Option<f64>,
    pub fastest: Option<f64>,
    pub slowest: Option<f64>,
    pub percentiles: Percentiles,
}

#[derive(Clone, Debug, Serialize)]
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
