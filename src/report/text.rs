//! The human report: a summary, latency percentiles for both clocks, a latency histogram with
//! bars, the status distribution, what the store received, SLO verdicts and the per-second
//! timeline. A function from a `Report` to a `String`.

use std::fmt::Write;

use crate::report::{Percentiles, Report, slo};

fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn pct_row(out: &mut String, label: &str, p: &Percentiles) {
    let _ = writeln!(
        out,
        "  {label:<9} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        p.p10, p.p50, p.p75, p.p90, p.p95, p.p99, p.p99_9, p.p99_99, p.max, p.mean
    );
}

pub fn render(r: &Report) -> String {
    let s = &r.summary;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "ingestbench {} — run {}{}",
        r.tool.version,
        r.run_id,
        r.name
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "target   {} {} ({}), source {} {}",
        r.target.adapter, r.target.url, r.target.address, r.target.source, r.target.source_version
    );
    let _ = writeln!(
        o,
        "ran      {:.2} s from {} on {}, {} threads, {} connections, batches of up to {} events / {} bytes",
        r.duration_s,
        r.started_at,
        r.host,
        r.threads,
        r.connections,
        r.batch_max_events,
        r.batch_max_bytes
    );
    if let Some(a) = &r.aborted {
        let _ = writeln!(o, "ABORTED  {a}");
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "rate     target {:.0} eps, achieved {:.0} eps ({:.1}% of target)",
        s.target_eps,
        s.achieved_eps,
        s.eps_ratio * 100.0
    );
    let accepted = if s.delivery == "written" {
        "written"
    } else {
        "accepted"
    };
    let _ = writeln!(
        o,
        "events   sent {}, {accepted} {}, failed {} (success {:.3}%){}",
        count(s.events_sent),
        count(s.events_accepted),
        count(s.events_failed),
        s.success_rate * 100.0,
        if s.delivery == "written" {
            " — syslog has no acknowledgement: written means handed to the kernel"
        } else {
            ""
        }
    );
    if s.send_blocked_ms > 0.0 || s.oversize_events > 0 {
        let _ = writeln!(
            o,
            "socket   blocked on a full send buffer {:.1} ms; oversize messages left out {}",
            s.send_blocked_ms,
            count(s.oversize_events)
        );
    }
    if s.udp_send_calls > 0 {
        let _ = writeln!(
            o,
            "udp      {} datagrams in {} send calls ({:.1} per call), {} GSO buffers{}",
            count(s.events_accepted),
            count(s.udp_send_calls),
            s.events_accepted as f64 / s.udp_send_calls as f64,
            count(s.udp_gso_sends),
            if s.udp_gso_refused > 0 {
                "; the kernel refused GSO, so datagrams went one by one"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        o,
        "batches  sent {}, accepted {}, failed {}, retried {}; {} bytes",
        count(s.batches_sent),
        count(s.batches_accepted),
        count(s.batches_failed),
        count(s.batches_retried),
        count(s.bytes_sent)
    );
    if s.batches_acked + s.acks_pending > 0 {
        let _ = writeln!(
            o,
            "acks     indexed {}, unconfirmed at the end {}",
            count(s.batches_acked),
            count(s.acks_pending)
        );
    }
    let _ = writeln!(
        o,
        "errors   auth {}, connect {}, resets {}, timeouts {}, protocol {}; reconnects {}",
        s.auth_failures,
        s.connect_errors,
        s.connection_resets,
        s.timeouts,
        s.protocol_errors,
        s.reconnects
    );
    let _ = writeln!(
        o,
        "schedule lag max {:.2} ms, mean {:.3} ms; shortfall {} events{}",
        s.lag_ms_max,
        s.lag_ms_mean,
        count(s.shortfall_events),
        if s.shortfall_events > 0 {
            " (the generator or the target could not keep up)"
        } else {
            ""
        }
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "latency (ms)    p10       p50       p75       p90       p95       p99     p99.9    p99.99       max      mean"
    );
    pct_row(&mut o, "intended", &r.latency_ms.intended);
    pct_row(&mut o, "service", &r.latency_ms.service);
    let _ = writeln!(
        o,
        "  (intended: from the scheduled send time, free of coordinated omission; service: from the actual write)"
    );
    if !r.latency_histogram.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "latency histogram (intended)");
        let max = r
            .latency_histogram
            .iter()
            .map(|b| b.count)
            .max()
            .unwrap_or(1)
            .max(1);
        for b in &r.latency_histogram {
            let bar = "#".repeat(((b.count as f64 / max as f64) * 50.0).ceil() as usize);
            let _ = writeln!(o, "  <= {:>10.3} ms {:>10}  {bar}", b.le_ms, count(b.count));
        }
    }
    if !r.status.is_empty() {
        let _ = writeln!(o);
        let _ = write!(o, "status  ");
        for (k, v) in &r.status {
            let _ = write!(o, " {k}: {}", count(*v));
        }
        let _ = writeln!(o);
    }
    if !r.hec_codes.is_empty() {
        let _ = write!(o, "hec codes");
        for (k, v) in &r.hec_codes {
            let _ = write!(o, " {k}: {}", count(*v));
        }
        let _ = writeln!(o);
    }
    if let Some(v) = &r.verification {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "stored   {}: received {}, distinct {}, duplicates {}, lost {} (accepted {})",
            v.store,
            count(v.events_received),
            count(v.distinct),
            count(v.duplicates),
            count(v.lost_events),
            count(s.events_accepted)
        );
    }
    if !r.slo.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "SLO");
        for x in &r.slo {
            let verdict = match (x.actual, x.pass) {
                (None, _) => "not judged (no data)",
                (Some(_), true) => "pass",
                (Some(_), false) => "BREACH",
            };
            let actual = x
                .actual
                .map(|a| format!("{a:.4}"))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                o,
                "  {:<18} limit {:<10} actual {:<12} {verdict}",
                x.name, x.limit, actual
            );
        }
        let b = slo::breaches(&r.slo);
        if !b.is_empty() {
            let names: Vec<&str> = b.iter().map(|x| x.name).collect();
            let _ = writeln!(o, "  breached: {}", names.join(", "));
        }
    }
    if !r.timeline.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "   t   target_eps       sent   accepted   failed  errors    p50 ms    p99 ms   lag ms  backlog"
        );
        for row in &r.timeline {
            let _ = writeln!(
                o,
                "{:>4} {:>12.0} {:>10} {:>10} {:>8} {:>7} {:>9.3} {:>9.3} {:>8.2} {:>8}",
                row.t,
                row.target_eps,
                row.events_sent,
                row.events_accepted,
                row.events_failed,
                row.errors,
                row.p50_ms,
                row.p99_ms,
                row.lag_ms_max,
                row.backlog_events
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
    }
}
