//! Building a `Snapshot` from what the coordinator has merged so far and the schedule as it
//! stands: the last complete second as the interval, the whole run as the cumulative window
//! (over schedule time: paused time is left out), errors by kind, latency percentiles and
//! Prometheus-style buckets from the HDR histograms, and the recent history for charts. Pure:
//! the time and the state are arguments.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::engine::merge::{Merger, summary};
use crate::engine::schedule::Schedule;
use crate::spool::Spool;
use crate::stats::Counters;
use crate::stats::result::{Second, SecondCounts};
use crate::stats::snapshot::{
    Buckets, ControlMark, HISTORY_SECONDS, Latency, Point, RunInfo, RunState, STATUS_SCHEMA,
    Snapshot, Window,
};

/// Bucket bounds of the latency histogram, seconds (Prometheus `le`), before `+Inf`.
pub const BUCKETS_S: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// Everything a snapshot is built from besides the merged figures.
pub struct LiveState<'a> {
    pub info: &'a RunInfo,
    pub seq: u64,
    pub state: RunState,
    /// Wall seconds since the start.
    pub now_s: f64,
    /// Where the schedule's window ends so far (`now_s`, or earlier once a stop was asked or
    /// the schedule ran out): what is due is counted up to here.
    pub window_end_s: f64,
    pub schedule: &'a Schedule,
    /// `stop.after` in schedule seconds, or `stop.total_events`.
    pub stop_after_s: Option<f64>,
    pub total_events: Option<u64>,
    pub control: Vec<ControlMark>,
    pub aborted: Option<String>,
}

pub fn snapshot(m: &Merger, cx: LiveState) -> Snapshot {
    let sched = cx.schedule;
    let now = cx.now_s;
    let end = cx.window_end_s.min(now);
    let c = &m.totals;
    let active = sched.active(end);
    let closed = sched.is_closed();
    let mut due = if closed {
        c.events_sent as f64
    } else {
        sched.due(end)
    };
    if let Some(total) = cx.total_events {
        due = due.min(total as f64);
    }
    let last = m.seconds.last();
    let interval = last.map_or_else(Window::default, second_window);
    let gauges = last.map(|s| &s.counts);
    let lat = Latency {
        intended: summary(&m.latency),
        service: summary(&m.service),
    };
    let cumulative = window(&SecondCounts::of(c), active, due, lat);
    Snapshot {
        schema: STATUS_SCHEMA,
        seq: cx.seq,
        run: cx.info.clone(),
        state: cx.state,
        elapsed_s: now,
        remaining_s: if closed && cx.stop_after_s.is_none() {
            None
        } else {
            remaining(sched, now, cx.stop_after_s, cx.total_events)
        },
        paused_s: (now - sched.active(now)).max(0.0),
        rate_eps: match cx.state {
            // A closed loop asks no rate: it shows what the last second sent.
            RunState::Running if closed => last.map_or(0.0, |s| s.target_eps),
            RunState::Running | RunState::Paused if !closed => sched.rate_at(now),
            _ => 0.0,
        },
        events_due: due as u64,
        interval,
        cumulative,
        errors: errors(c),
        status: c
            .statuses()
            .into_iter()
            .map(|(s, n)| (s.to_string(), n))
            .collect(),
        auth_failures: c.auth_failures,
        connect_errors: c.connect_errors,
        connection_resets: c.connection_resets,
        timeouts: c.timeouts,
        protocol_errors: c.protocol_errors,
        reconnects: c.reconnects,
        events_resent: c.events_resent,
        events_already_stored: c.events_already_stored,
        batches_acked: c.batches_acked,
        acks_pending: c.acks_pending,
        events_unreadable_2xx: c.events_unreadable_2xx,
        batches_unreadable_2xx: c.batches_unreadable_2xx,
        oversize_events: c.oversize_events,
        events_unconfirmed: c.events_unconfirmed(),
        events_unconfirmed_by: c.unconfirmed_by_name(),
        bytes_unsent_at_close: c.bytes_unsent_at_close,
        lag_ms_max: gauges.map_or(0.0, |g| g.lag_ns_max as f64 / 1e6),
        lag_ms_max_cumulative: c.lag_ns_max as f64 / 1e6,
        backlog_events: gauges.map_or(0, |g| g.backlog_events),
        connections_open: gauges.map_or(0, |g| g.connections_open),
        intended_buckets: buckets(&m.latency),
        service_buckets: buckets(&m.service),
        stored: None,
        watched: None,
        scenario: None,
        control: cx.control,
        history: history(&m.seconds),
        aborted: cx.aborted,
    }
}

/// Seconds left: of the schedule (stop by time), or until the last event is due (by count).
fn remaining(s: &Schedule, now: f64, after: Option<f64>, total: Option<u64>) -> Option<f64> {
    if let Some(a) = after {
        return Some((a - s.active(now)).max(0.0));
    }
    let end = s.time_for(total? as f64)?;
    Some((end - now).max(0.0))
}

/// The counts of a stretch of `seconds` in which `due` events were due.
fn window(c: &SecondCounts, seconds: f64, due: f64, latency: Latency) -> Window {
    let per_s = |n: f64| if seconds > 0.0 { n / seconds } else { 0.0 };
    Window {
        seconds,
        target_eps: per_s(due),
        achieved_eps: per_s(c.events_accepted as f64),
        events_sent: c.events_sent,
        events_accepted: c.events_accepted,
        events_failed: c.events_failed,
        batches_sent: c.batches_sent,
        batches_accepted: c.batches_accepted,
        batches_failed: c.batches_failed,
        batches_retried: c.batches_retried,
        bytes_sent: c.bytes_sent,
        latency_ms: latency,
    }
}

fn second_window(s: &Second) -> Window {
    window(&s.counts, 1.0, s.target_eps, s.latency.clone())
}

/// Problems by kind, in the status page's and Prometheus' vocabulary.
pub fn errors(c: &Counters) -> BTreeMap<String, u64> {
    let mut e = BTreeMap::new();
    for (k, v) in [
        ("connect", c.connect_errors),
        ("reset", c.connection_resets),
        ("timeout", c.timeouts),
        ("protocol", c.protocol_errors),
        ("auth", c.auth_failures),
        ("oversize", c.oversize_events),
        ("retries_exhausted", c.batches_retries_exhausted),
        ("ack_poll", c.ack_poll_failures),
        ("unreadable_2xx", c.batches_unreadable_2xx),
    ] {
        if v > 0 {
            e.insert(k.to_string(), v);
        }
    }
    for (status, n) in c.statuses() {
        if !(200..300).contains(&status) {
            e.insert(format!("status_{status}"), n);
        }
    }
    for (code, n) in c.hec_codes.iter().enumerate().skip(1) {
        if *n > 0 {
            e.insert(format!("hec_code_{code}"), *n);
        }
    }
    e
}

/// Cumulative counts at each bound of `BUCKETS_S`, then `+Inf`; the sum from the mean.
pub fn buckets(h: &Histogram<u64>) -> Buckets {
    let mut le_s = Vec::with_capacity(BUCKETS_S.len() + 1);
    for &b in BUCKETS_S {
        let us = (b * 1e6) as u64;
        let n = if h.is_empty() {
            0
        } else {
            h.count_between(0, us)
        };
        le_s.push((b, n));
    }
    le_s.push((f64::INFINITY, h.len()));
    Buckets {
        le_s,
        sum_s: if h.is_empty() {
            0.0
        } else {
            h.mean() * h.len() as f64 / 1e6
        },
        count: h.len(),
    }
}

fn history(seconds: &Spool<Second>) -> Vec<Point> {
    seconds
        .recent(HISTORY_SECONDS)
        .map(|s| Point {
            t: s.t,
            target_eps: s.target_eps,
            achieved_eps: s.counts.events_accepted as f64,
            p99_ms: s.latency.intended.p99,
            service_p99_ms: s.latency.service.p99,
            errors: s.counts.errors,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pacer::Profile;
    use crate::stats::{Interval, new_histogram};

    fn merged() -> Merger {
        let mut m = Merger::new(1, 0);
        for k in 0..3u64 {
            let mut latency = new_histogram();
            latency.record(2000 * (k + 1)).unwrap();
            let mut counters = Counters {
                events_sent: 100,
                events_accepted: 90,
                events_failed: 10,
                batches_sent: 2,
                connect_errors: k,
                lag_ns_max: 1_000_000 * k,
                backlog_events: 5 * k,
                connections_open: 2,
                ..Counters::default()
            };
            counters.status[200] = 1;
            counters.status[503] = 1;
            counters.hec_codes[9] = 1;
            m.add(
                Interval {
                    worker: 0,
                    by_second: vec![(k as u32, crate::stats::Scheduled::of(&counters))],
                    settled_before: k as u32 + 1,
                    warm_tail: None,
                    counters,
                    latency,
                    service: new_histogram(),
                    last: false,
                    account: None,
                    phases: None,
                    parts: None,
                    by_target: None,
                    item_errors: Vec::new(),
                },
                |_| Some(100.0),
            );
        }
        m
    }

    #[test]
    fn snapshot_from_merged_seconds() {
        let m = merged();
        let sched = Schedule::new(Profile::Steady { eps: 100.0 });
        let info = RunInfo {
            run_id: "r-1".into(),
            ..RunInfo::default()
        };
        let s = snapshot(
            &m,
            LiveState {
                info: &info,
                seq: 7,
                state: RunState::Running,
                now_s: 3.0,
                window_end_s: 3.0,
                schedule: &sched,
                stop_after_s: Some(10.0),
                total_events: None,
                control: Vec::new(),
                aborted: None,
            },
        );
        assert_eq!(s.seq, 7);
        assert_eq!(s.run.run_id, "r-1");
        assert_eq!(s.events_due, 300);
        assert_eq!(s.remaining_s, Some(7.0));
        assert_eq!(s.rate_eps, 100.0);
        assert_eq!(s.cumulative.events_sent, 300);
        assert_eq!(s.cumulative.events_accepted, 270);
        assert!((s.cumulative.achieved_eps - 90.0).abs() < 1e-9);
        assert!((s.cumulative.target_eps - 100.0).abs() < 1e-9);
        assert_eq!(s.interval.events_accepted, 90);
        assert_eq!(s.interval.target_eps, 100.0);
        assert!((s.interval.latency_ms.intended.p50 - 6.0).abs() < 0.01);
        assert_eq!(s.cumulative.latency_ms.intended.count, 3);
        assert_eq!(s.lag_ms_max, 2.0, "the last second's gauge");
        assert_eq!(s.backlog_events, 10);
        assert_eq!(s.connections_open, 2);
        assert_eq!(s.errors["connect"], 3);
        assert_eq!(s.errors["status_503"], 3);
        assert_eq!(s.errors["hec_code_9"], 3);
        assert!(!s.errors.contains_key("status_200"));
        assert_eq!(s.status["200"], 3);
        assert_eq!(s.history.len(), 3);
        assert_eq!(s.history[2].achieved_eps, 90.0);
        let b = &s.intended_buckets;
        assert_eq!(b.count, 3);
        assert_eq!(b.le_s.last().unwrap(), &(f64::INFINITY, 3));
        assert!(
            b.le_s
                .windows(2)
                .all(|w| w[0].1 <= w[1].1 && w[0].0 < w[1].0)
        );
        assert_eq!(
            b.le_s[2],
            (0.0025, 1),
            "2 ms is under 2.5 ms, 4 and 6 ms are not"
        );
        assert!((b.sum_s - 0.012).abs() < 0.0001, "{}", b.sum_s);
    }

    #[test]
    fn paused_time_is_left_out_of_the_cumulative_window() {
        let m = merged();
        let cell = crate::engine::schedule::ScheduleCell::new(Profile::Steady { eps: 100.0 });
        cell.begin(std::time::Instant::now());
        cell.pause().unwrap();
        let sched = cell.schedule();
        let t_pause = sched.segments()[1].t0;
        let info = RunInfo::default();
        let s = snapshot(
            &m,
            LiveState {
                info: &info,
                seq: 1,
                state: RunState::Paused,
                now_s: t_pause + 5.0,
                window_end_s: t_pause + 5.0,
                schedule: &sched,
                stop_after_s: None,
                total_events: Some(1000),
                control: cell.marks(),
                aborted: None,
            },
        );
        assert!((s.paused_s - 5.0).abs() < 1e-9);
        assert!((s.cumulative.seconds - t_pause).abs() < 1e-9);
        assert_eq!(s.rate_eps, 0.0);
        assert_eq!(s.remaining_s, None, "paused: the end is not known");
        assert_eq!(s.control.len(), 1);
    }
}
