//! The human report: a summary (rates with MB/s and GB/day, the window and the drain, every
//! failure class that occurred), latency percentiles for both clocks (`—` where the sample
//! count does not support one), a latency histogram with bars, the status distribution, what
//! the store received, what the config's `verify` stores hold, loss by stage, the per-second
//! timeline (condensed unless asked for in full), the SLO
//! table, and last the verdict: one line, `PASS  exit 0` or `FAIL  exit N: reasons`, so the
//! last line a person or a CI log shows is the outcome. A function from a `Report` to a
//! `String`.

use std::fmt::Write;

use crate::report::{Percentiles, Report, SecondRow, Summary, slo};

/// How much of the per-second timeline the text shows (JSON and CSV always have every row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timeline {
    /// Every 10th second, every second with errors, failed events, a control action or a
    /// step in the target rate, and the first and last seconds.
    #[default]
    Condensed,
    /// Every second.
    Full,
}

impl Timeline {
    pub fn parse(s: &str) -> Result<Timeline, String> {
        match s {
            "condensed" => Ok(Timeline::Condensed),
            "full" => Ok(Timeline::Full),
            _ => Err(format!("{s:?}: expected condensed or full")),
        }
    }
}

/// `n` with thousands separated by commas.
pub(crate) fn count(n: u64) -> String {
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

/// The report with the timeline condensed.
pub fn render(r: &Report) -> String {
    render_with(r, Timeline::Condensed)
}

pub fn render_with(r: &Report, timeline: Timeline) -> String {
    let mut o = String::new();
    header(&mut o, r);
    let _ = writeln!(o);
    rates(&mut o, r);
    if let Some(d) = &r.data_rate {
        crate::report::rate::text(&mut o, d);
    }
    counts(&mut o, &r.summary);
    problems(&mut o, &r.summary);
    latency(&mut o, r);
    histogram(&mut o, r);
    statuses(&mut o, r);
    crate::report::sources::text(&mut o, &r.by_source);
    crate::report::targets::text(&mut o, &r.by_target);
    stored(&mut o, r);
    store_verification(&mut o, r);
    crate::report::loss::text(&mut o, &r.loss);
    watched(&mut o, r);
    timeline_rows(&mut o, &r.timeline, timeline);
    if let Some(f) = &r.faults {
        crate::report::faults::text(&mut o, f);
    }
    crate::report::sizing::text(&mut o, &r.sizing);
    if let Some(sc) = &r.scenario {
        crate::report::scenario::text(&mut o, sc);
    }
    if let Some(c) = &r.ceiling {
        crate::report::ceiling::text(&mut o, c);
    }
    slo_table(&mut o, &r.slo);
    verdict(&mut o, r);
    o
}

fn header(o: &mut String, r: &Report) {
    let name = r
        .name
        .as_deref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    let _ = writeln!(o, "ingestbench {} — run {}{name}", r.tool.version, r.run_id);
    let t = &r.target;
    let _ = writeln!(
        o,
        "target   {} {} ({}), source {} {}",
        t.adapter, t.url, t.address, t.source, t.source_version
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
    if let Some(n) = &r.threads_note {
        let _ = writeln!(o, "threads  {n}");
    }
    if let Some(s) = &r.shard {
        let _ = writeln!(
            o,
            "shard    {} of {} (from 0): this process's part of the run; `report merge` joins the shards' reports",
            s.index, s.count
        );
    }
    if let Some(m) = &r.merged {
        let _ = writeln!(
            o,
            "merged   {} shards; seconds' p50/p99 are the highest shard's (the run's percentiles are exact)",
            m.shards.len()
        );
        if !m.left_out.is_empty() {
            let _ = writeln!(
                o,
                "         in the shards' own reports only: {}",
                m.left_out.join(", ")
            );
        }
    }
    if let Some(a) = &r.aborted {
        let _ = writeln!(o, "ABORTED  {a}");
    }
}

fn rates(o: &mut String, r: &Report) {
    let s = &r.summary;
    let _ = writeln!(
        o,
        "rate     target {:.0} eps, achieved {:.0} eps ({:.1}% of target); {:.2} MB/s, {:.1} GB/day",
        s.target_eps,
        s.achieved_eps,
        s.eps_ratio * 100.0,
        s.mb_per_s,
        s.gb_per_day
    );
    let paused = if r.paused_s > 0.0 {
        format!("; paused {:.2} s (not in the window)", r.paused_s)
    } else {
        String::new()
    };
    let warmup = if s.warmup_s > 0.0 {
        format!(
            " after a warm-up of {:.2} s (in the timeline, not in these figures)",
            s.warmup_s
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "window   {:.2} s{warmup}, drain {:.2} s ({} events accepted in the drain){paused}",
        s.window_s,
        s.drain_s,
        count(s.events_accepted_in_drain)
    );
}

fn counts(o: &mut String, s: &Summary) {
    let written = s.delivery == "written";
    let _ = writeln!(
        o,
        "events   sent {}, accepted {}, {}failed {} (success {:.3}%){}",
        count(s.events_sent),
        count(s.events_accepted),
        if written || s.events_unconfirmed > 0 {
            format!("unconfirmed {}, ", count(s.events_unconfirmed))
        } else {
            String::new()
        },
        count(s.events_failed),
        s.success_rate * 100.0,
        if written {
            " — syslog has no acknowledgement: accepted means the peer's TCP took them and kept \
             the connection, its window open (UDP: sent, no ICMP refusal)"
        } else {
            ""
        }
    );
    if s.events_unconfirmed > 0 || s.bytes_unsent_at_close > 0 {
        let by: Vec<String> = s
            .events_unconfirmed_by
            .iter()
            .map(|(k, n)| format!("{k} {}", count(*n)))
            .collect();
        let _ = writeln!(
            o,
            "unconfirmed {} events ({}); {} bytes the kernel still held unsent when connections ended",
            count(s.events_unconfirmed),
            if by.is_empty() {
                "none".to_string()
            } else {
                by.join(", ")
            },
            count(s.bytes_unsent_at_close)
        );
    }
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
    let exhausted = if s.batches_retries_exhausted > 0 || s.events_retries_exhausted > 0 {
        format!(
            "; retries exhausted {} batches ({} events)",
            count(s.batches_retries_exhausted),
            count(s.events_retries_exhausted)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "batches  sent {}, accepted {}, failed {}, retried {}; {} bytes{exhausted}",
        count(s.batches_sent),
        count(s.batches_accepted),
        count(s.batches_failed),
        count(s.batches_retried),
        count(s.bytes_sent)
    );
    if s.batches_unreadable_2xx > 0 {
        let _ = writeln!(
            o,
            "unreadable answered 2xx but unreadable: {} batches ({} events), counted failed and never resent — the collector said yes, so the store may hold them",
            count(s.batches_unreadable_2xx),
            count(s.events_unreadable_2xx)
        );
    }
    if !s.events_failed_by_hec_code.is_empty() {
        let codes: Vec<String> = s
            .events_failed_by_hec_code
            .iter()
            .map(|(c, n)| format!("code {c}: {}", count(*n)))
            .collect();
        let _ = writeln!(o, "hec      events failed by code: {}", codes.join(", "));
    }
    if s.batches_acked + s.acks_pending + s.ack_poll_failures > 0 {
        let polls = if s.ack_poll_failures > 0 {
            format!("; ack polls failed {}", count(s.ack_poll_failures))
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "acks     indexed {}, unconfirmed at the end {}{polls}",
            count(s.batches_acked),
            count(s.acks_pending)
        );
    }
}

/// Whose a shortfall is, in words.
fn shortfall_words(by: &str) -> String {
    crate::report::Blame::named(by).map_or_else(String::new, |b| format!(" ({})", b.words()))
}

fn problems(o: &mut String, s: &Summary) {
    let _ = writeln!(
        o,
        "errors   auth {}, connect {}, resets {}, timeouts {}, protocol {}; reconnects {}{}",
        s.auth_failures,
        s.connect_errors,
        s.connection_resets,
        s.timeouts,
        s.protocol_errors,
        s.reconnects,
        if s.events_resent > 0 {
            format!(", resent {} events", count(s.events_resent))
        } else {
            String::new()
        }
    );
    if !s.events_failed_by_type.is_empty() || s.events_already_stored > 0 {
        let types: Vec<String> = s
            .events_failed_by_type
            .iter()
            .map(|(t, n)| format!("{t} {}", count(*n)))
            .collect();
        let _ = writeln!(
            o,
            "_bulk    items failed by type: {}; already stored (409 on create) {}",
            if types.is_empty() {
                "none".to_string()
            } else {
                types.join(", ")
            },
            count(s.events_already_stored)
        );
        for e in &s.item_errors_first {
            let _ = writeln!(o, "         e.g. {e}");
        }
    }
    let _ = writeln!(
        o,
        "schedule lag max {:.2} ms, mean {:.3} ms; shortfall {} events{}",
        s.lag_ms_max,
        s.lag_ms_mean,
        count(s.shortfall_events),
        if s.shortfall_events > 0 {
            shortfall_words(s.shortfall_by)
        } else {
            String::new()
        }
    );
    let waits = [
        (
            "processing",
            s.processing_ms,
            " (rendering and framing, all threads)",
        ),
        ("waiting for a free connection", s.wait_for_target_ms, ""),
        ("with no connection open", s.target_down_ms, ""),
        ("held by the request cap", s.held_by_cap_ms, ""),
    ];
    let parts: Vec<String> = waits
        .iter()
        .filter(|(_, ms, _)| *ms > 0.0)
        .map(|(what, ms, note)| format!("{what} {ms:.1} ms{note}"))
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(o, "time     {}", parts.join(", "));
    }
    if s.worker_cpu_ms > 0.0 {
        let _ = writeln!(
            o,
            "cpu      workers {:.1} ms, {:.0} % of their time",
            s.worker_cpu_ms,
            s.worker_cpu_share * 100.0
        );
    }
}

fn pct_row(o: &mut String, label: &str, p: &Percentiles) {
    let cell = |percent: f64, v: f64| match p.shown(percent, v) {
        Some(v) => format!("{v:>9.3}"),
        None => format!("{:>9}", "—"),
    };
    let cols = [
        cell(10.0, p.p10),
        cell(50.0, p.p50),
        cell(75.0, p.p75),
        cell(90.0, p.p90),
        cell(95.0, p.p95),
        cell(99.0, p.p99),
        cell(99.9, p.p99_9),
        cell(99.99, p.p99_99),
        cell(100.0, p.max),
        if p.count > 0 {
            format!("{:>9.3}", p.mean)
        } else {
            format!("{:>9}", "—")
        },
    ];
    let _ = writeln!(o, "  {label:<9} {}  {}", cols.join(" "), count(p.count));
}

fn latency(o: &mut String, r: &Report) {
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "latency (ms)    p10       p50       p75       p90       p95       p99     p99.9    p99.99       max      mean  samples"
    );
    pct_row(o, "intended", &r.latency_ms.intended);
    pct_row(o, "service", &r.latency_ms.service);
    let _ = writeln!(
        o,
        "  (intended: from the scheduled send time, free of coordinated omission; service: from the actual write;"
    );
    let _ = writeln!(
        o,
        "   — : too few samples for that percentile: p90 needs 10, p99 100, p99.9 1,000, p99.99 10,000)"
    );
}

fn histogram(o: &mut String, r: &Report) {
    if r.latency_histogram.is_empty() {
        return;
    }
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
        let line = format!("  <= {:>10.3} ms {:>10}  {bar}", b.le_ms, count(b.count));
        let _ = writeln!(o, "{}", line.trim_end());
    }
}

fn statuses(o: &mut String, r: &Report) {
    if !r.status.is_empty() {
        let _ = writeln!(o);
        let _ = write!(o, "status  ");
        for (k, v) in &r.status {
            let _ = write!(o, " {k}: {}", count(*v));
        }
        let _ = writeln!(o);
    }
    if !r.hec_codes.is_empty() {
        if r.status.is_empty() {
            let _ = writeln!(o);
        }
        let _ = write!(o, "hec codes");
        for (k, v) in &r.hec_codes {
            let _ = write!(o, " {k}: {}", count(*v));
        }
        let _ = writeln!(o);
    }
}

fn stored(o: &mut String, r: &Report) {
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
            count(r.summary.events_accepted)
        );
        if let Some(l) = &v.ingest_lag_ms {
            let _ = writeln!(
                o,
                "         send -> stored lag: p50 {} ms, p99 {} ms, max {} ms ({} events)",
                l.p50,
                l.p99,
                l.max,
                count(l.count)
            );
        }
    }
}

/// The config's `verify` stores: one line per store, its notes, and the outcome.
fn store_verification(o: &mut String, r: &Report) {
    let Some(sv) = &r.store_verification else {
        return;
    };
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "store verification (verify.sources, each settled for up to {:.0} s)",
        sv.settle_timeout_s
    );
    let Some(v) = &sv.result else {
        let why = sv.error.as_deref().unwrap_or("");
        let _ = writeln!(o, "  {}: {why}", sv.status.name().to_uppercase());
        return;
    };
    for src in &v.sources {
        let c = &src.comparison;
        let _ = writeln!(
            o,
            "  {}  expected {}, stored {}, lost {}, duplicated {}, unexpected {}; {} (drain {} ms)",
            src.source,
            count(c.expected),
            count(c.stored),
            count(c.lost),
            count(c.duplicated),
            count(c.unexpected),
            if src.settle.settled {
                "settled"
            } else {
                "NOT settled"
            },
            src.settle.drain_ms
        );
        for n in &src.notes {
            let _ = writeln!(o, "    note: {n}");
        }
    }
    if v.pass {
        let _ = writeln!(
            o,
            "  pass (limits: lost {}, duplicated {})",
            v.max_lost, v.max_dup
        );
    } else {
        let _ = writeln!(o, "  FAIL: {}", v.reasons.join("; "));
    }
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / 1_048_576.0)
}

/// What the watched processes used: one line each, the sum, ingestbench's own.
fn watched(o: &mut String, r: &Report) {
    let Some(w) = &r.watched else { return };
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "watched  cores mean / p95 / max, CPU seconds, peak RSS (PSS)"
    );
    let line = |o: &mut String, who: &str, p: &crate::observe::ProcSummary| {
        let pss = p
            .pss_peak_bytes
            .map(|b| format!(" ({})", mib(b)))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "  {who:<28} {:>6.2} / {:>6.2} / {:>6.2}  {:>9.2} s  {}{pss}",
            p.cores_mean,
            p.cores_p95,
            p.cores_max,
            p.cpu_s,
            mib(p.rss_peak_bytes)
        );
    };
    for p in &w.processes {
        line(o, &format!("{}[{}]", p.name, p.pid), p);
    }
    for c in &w.cgroups {
        let _ = writeln!(
            o,
            "  {:<28} {:>6.2} / {:>6.2} / {:>6.2}  {:>9.2} s  {} (memory.peak)",
            c.path,
            c.cores_mean,
            c.cores_p95,
            c.cores_max,
            c.cpu_s,
            mib(c.memory_peak_bytes)
        );
    }
    let t = &w.total;
    let p95 = w
        .cores_p95_measured
        .map(|v| format!(" (p95 after the warm-up {v:.2})"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "  {:<28} {:>6.2} / {:>6.2} / {:>6.2}  {:>9.2} s  {} summed{p95}",
        "total",
        t.cores_mean,
        t.cores_p95,
        t.cores_max,
        t.cpu_s,
        mib(t.rss_peak_bytes)
    );
    if let Some(p) = &w.own {
        line(o, "ingestbench (this run)", p);
    }
    if let Some(l) = &w.launched {
        let how = match (l.exited_early, l.killed, l.exit_code, l.signal) {
            (true, _, _, _) => "exited during the run".to_string(),
            (_, true, _, _) => "killed after ignoring SIGTERM".to_string(),
            (_, _, Some(c), _) => format!("stopped, exit {c}"),
            (_, _, _, Some(s)) => format!("stopped by signal {s}"),
            _ => "stopped".to_string(),
        };
        let _ = writeln!(o, "  launched {} (pid {}): {how}", l.command, l.pid);
    }
}

/// Whether two target rates are the same (up to float noise in the schedule's integral).
fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// The rows a condensed timeline keeps: the first and the last, every 10th second, every
/// second with errors, failed events or a control action, and every step in the target rate
/// (a change that is not the same change as the second before, so a linear ramp shows where
/// it starts, not each of its seconds).
#[allow(
    clippy::indexing_slicing,
    reason = "i ranges over 0..rows.len(); step(i) runs only for i >= 1 (after the i == 0 test) \
              and d(i - 1) only for i >= 2"
)]
pub fn condensed(rows: &[SecondRow]) -> Vec<bool> {
    let step = |i: usize| {
        let d = |j: usize| rows[j].target_eps - rows[j - 1].target_eps;
        let changed = !same_rate(rows[i].target_eps, rows[i - 1].target_eps);
        changed && (i < 2 || !same_rate(d(i), d(i - 1)))
    };
    (0..rows.len())
        .map(|i| {
            let r = &rows[i];
            i == 0
                || i + 1 == rows.len()
                || r.t.is_multiple_of(10)
                || r.errors > 0
                || r.events_failed > 0
                || r.refused > 0
                || r.reconnects > 0
                || !r.control.is_empty()
                || step(i)
        })
        .collect()
}

fn timeline_rows(o: &mut String, rows: &[SecondRow], how: Timeline) {
    if rows.is_empty() {
        return;
    }
    let keep = match how {
        Timeline::Full => vec![true; rows.len()],
        Timeline::Condensed => condensed(rows),
    };
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "   t   target_eps       sent   accepted   failed  errors reconn refused    p50 ms    p99 ms   lag ms  backlog  control"
    );
    for (row, _) in rows.iter().zip(&keep).filter(|(_, k)| **k) {
        let line = format!(
            "{:>4} {:>12.0} {:>10} {:>10} {:>8} {:>7} {:>6} {:>7} {:>9.3} {:>9.3} {:>8.2} {:>8}  {}",
            row.t,
            row.target_eps,
            row.events_sent,
            row.events_accepted,
            row.events_failed,
            row.errors,
            row.reconnects,
            row.refused,
            row.p50_ms,
            row.p99_ms,
            row.lag_ms_max,
            row.backlog_events,
            row.control.join(",")
        );
        o.push_str(line.trim_end());
        o.push('\n');
    }
    let left_out = keep.iter().filter(|k| !**k).count();
    if left_out > 0 {
        let _ = writeln!(
            o,
            "  ({left_out} of {} rows left out: shown are every 10th second and seconds with errors, failures, refusals, reconnects, control actions or rate steps; --timeline full shows all)",
            rows.len()
        );
    }
}

pub fn slo_table(o: &mut String, rows: &[slo::SloResult]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "SLO");
    for x in rows {
        let verdict = match (x.actual, x.pass) {
            (None, _) => "not judged (no data)",
            (Some(_), true) => "pass",
            (Some(_), false) => "BREACH",
        };
        let actual = x
            .actual
            .map(|a| format!("{a:.4}"))
            .unwrap_or_else(|| "-".into());
        let default = if x.default { "  (default)" } else { "" };
        let _ = writeln!(
            o,
            "  {:<22} limit {:<10} actual {:<12} {verdict}{default}",
            x.name, x.limit, actual
        );
    }
    let b = slo::breaches(rows);
    if !b.is_empty() {
        let names: Vec<&str> = b.iter().map(|x| x.name).collect();
        let _ = writeln!(o, "  breached: {}", names.join(", "));
    }
}

/// The last line: `PASS  exit 0`, or `FAIL  exit N: reason; reason`.
pub fn verdict(o: &mut String, r: &Report) {
    let v = &r.verdict;
    let _ = writeln!(o);
    if v.pass {
        let _ = writeln!(o, "PASS  exit {}", v.exit_code);
    } else if v.reasons.is_empty() {
        let _ = writeln!(o, "FAIL  exit {}", v.exit_code);
    } else {
        let _ = writeln!(o, "FAIL  exit {}: {}", v.exit_code, v.reasons.join("; "));
    }
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

    fn row(t: u32, target_eps: f64) -> SecondRow {
        SecondRow {
            t,
            target_eps,
            events_sent: 0,
            events_accepted: 0,
            events_failed: 0,
            errors: 0,
            reconnects: 0,
            refused: 0,
            p50_ms: 0.0,
            p99_ms: 0.0,
            lag_ms_max: 0.0,
            backlog_events: 0,
            watched_cores: None,
            watched_rss_bytes: None,
            own_cores: None,
            control: Vec::new(),
        }
    }

    fn kept(rows: &[SecondRow]) -> Vec<u32> {
        rows.iter()
            .zip(condensed(rows))
            .filter(|(_, k)| *k)
            .map(|(r, _)| r.t)
            .collect()
    }

    #[test]
    fn steady_run_keeps_every_10th_second_and_the_ends() {
        let rows: Vec<SecondRow> = (0..35).map(|t| row(t, 1000.0)).collect();
        assert_eq!(kept(&rows), [0, 10, 20, 30, 34]);
    }

    #[test]
    fn errors_failures_control_and_steps_are_kept() {
        let mut rows: Vec<SecondRow> = (0..30).map(|t| row(t, 1000.0)).collect();
        rows[3].errors = 1;
        rows[5].events_failed = 20;
        rows[7].control = vec!["pause"];
        for r in &mut rows[14..] {
            r.target_eps = 2000.0;
        }
        assert_eq!(kept(&rows), [0, 3, 5, 7, 10, 14, 20, 29]);
    }

    #[test]
    fn a_linear_ramp_shows_where_it_starts_not_every_second() {
        let mut rows: Vec<SecondRow> = (0..25).map(|t| row(t, 100.0)).collect();
        for (i, r) in rows.iter_mut().enumerate().skip(4) {
            r.target_eps = 100.0 + 50.0 * (i - 3) as f64;
        }
        assert_eq!(kept(&rows), [0, 4, 10, 20, 24]);
    }

    #[test]
    fn full_timeline_and_the_left_out_line() {
        let rows: Vec<SecondRow> = (0..12).map(|t| row(t, 10.0)).collect();
        let mut o = String::new();
        timeline_rows(&mut o, &rows, Timeline::Condensed);
        assert!(
            o.contains("(9 of 12 rows left out:") && o.contains("--timeline full shows all"),
            "{o}"
        );
        let mut full = String::new();
        timeline_rows(&mut full, &rows, Timeline::Full);
        assert_eq!(full.lines().count(), 2 + 12, "{full}");
        assert!(!full.contains("left out"));
        assert!(full.lines().all(|l| !l.ends_with(' ')), "{full}");
    }

    #[test]
    fn timeline_flag_values() {
        assert_eq!(Timeline::parse("full"), Ok(Timeline::Full));
        assert_eq!(Timeline::parse("condensed"), Ok(Timeline::Condensed));
        assert!(Timeline::parse("all").is_err());
    }
}
