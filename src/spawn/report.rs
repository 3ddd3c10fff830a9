//! A spawn run as plain data (`ingestbench.spawn/1`): the schedule and what it achieved, the
//! lateness distribution, each watched process's CPU under load and at baseline and the
//! difference, ingestbench's own cost, and the verdict. `build` is pure over what the phases
//! returned; the writers (`text`, `csv`, JSON via serde) only format it.
//!
//! Percent is of the phase's own wall time (the sampled window), so a baseline of another
//! length still compares: overhead = load % − baseline %, and in seconds, load seconds −
//! baseline % × the load window.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::Load;
use super::plan::{MAX_LATE_SHARE, Plan};
use crate::exit::Exit;
use crate::observe::{Observed, ProcSummary};

pub const SCHEMA: &str = "ingestbench.spawn/1";

#[derive(Clone, Debug, Serialize)]
pub struct SpawnReport {
    pub schema: &'static str,
    /// UNIX seconds at the end of the run (edr-loadgen's first CSV column).
    pub timestamp: u64,
    /// The program and its arguments, as spawned.
    pub command: String,
    pub rate_per_s: f64,
    pub delay_s: f64,
    pub duration_s: f64,
    pub baseline_s: Option<f64>,
    pub spawns: Spawns,
    /// From each spawn's due time to its start (ms).
    pub lateness_ms: Distribution,
    /// How long each `posix_spawn` call took (ms).
    pub spawn_call_ms: Distribution,
    /// One row per watched process.
    pub processes: Vec<ProcRow>,
    /// The watched processes together.
    pub sum: CpuRow,
    /// ingestbench itself: the spawner, the reaper and the sampler.
    pub own: Option<CpuRow>,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Spawns {
    /// Due in the window (edr-loadgen's "events expected").
    pub scheduled: u64,
    /// `posix_spawn` returned a child (edr-loadgen's "events generated").
    pub started: u64,
    pub failed: u64,
    /// Started one period or more after they were due: the ticks a ticker loop drops.
    pub late: u64,
    /// Due and never started (stopped, or past the deadline).
    pub not_started: u64,
    pub exited_ok: u64,
    pub exited_failed: u64,
    /// Still running after the grace period, killed by PID.
    pub killed: u64,
    pub first_error: Option<String>,
    /// started ÷ the load window.
    pub achieved_per_s: f64,
    /// The load phase's wall time: the duration, or longer when the spawner ran late.
    pub load_window_s: f64,
    /// From the first due time to the last spawn.
    pub spawning_s: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Distribution {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// CPU of a process (or the sum) in one phase, in edr-loadgen's terms and ours.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Cpu {
    pub user_s: f64,
    pub system_s: f64,
    pub sum_s: f64,
    pub user_pct: f64,
    pub system_pct: f64,
    pub sum_pct: f64,
    pub cores_mean: f64,
    pub cores_p95: f64,
    pub cores_max: f64,
    pub rss_peak_bytes: u64,
    /// The sampled wall time of the phase.
    pub window_s: f64,
}

/// load − baseline.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Overhead {
    /// Load seconds minus what the baseline rate would have used over the load window.
    pub sum_s: f64,
    pub sum_pct: f64,
    pub cores: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct CpuRow {
    pub load: Cpu,
    pub baseline: Option<Cpu>,
    pub overhead: Option<Overhead>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ProcRow {
    pub pid: u32,
    pub name: String,
    pub cmdline: String,
    /// Alive at the end of both phases.
    pub alive: bool,
    #[serde(flatten)]
    pub cpu: CpuRow,
}

#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// Every due spawn started, none failed, at most 1 % late, nothing cut short.
    pub kept: bool,
    pub exit: i32,
    pub reasons: Vec<String>,
}

/// The report from the phases. `stopped`: a signal ended the run early.
pub fn build(plan: &Plan, baseline: Option<Observed>, load: Load, stopped: bool) -> SpawnReport {
    let window = window_s(&load.observed);
    let processes = rows(plan, baseline.as_ref(), &load.observed);
    let sum = sum_row(&processes, baseline.is_some());
    let own = load.observed.own.as_ref().map(|o| {
        let base = baseline
            .as_ref()
            .and_then(|b| b.own.as_ref().map(|bo| cpu(bo, window_s(b))));
        row(cpu(o, window), base)
    });
    let s = &load.spawned;
    let spawns = Spawns {
        scheduled: s.scheduled,
        started: s.started,
        failed: s.failed,
        late: s.late,
        not_started: s.not_started,
        exited_ok: load.reaped.exited_ok,
        exited_failed: load.reaped.exited_failed,
        killed: load.reaped.killed,
        first_error: s.first_error.clone(),
        achieved_per_s: s.started as f64 / load.window.as_secs_f64().max(1e-9),
        load_window_s: load.window.as_secs_f64(),
        spawning_s: s.elapsed.as_secs_f64(),
    };
    let lateness_ms = distribution(&s.lateness_ns);
    let verdict = verdict(&spawns, &processes, s.stopped, stopped);
    SpawnReport {
        schema: SCHEMA,
        timestamp: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        command: plan.payload.display(),
        rate_per_s: plan.schedule.rate_per_s,
        delay_s: plan.delay().as_secs_f64(),
        duration_s: plan.duration.as_secs_f64(),
        baseline_s: plan.baseline.map(|d| d.as_secs_f64()),
        spawns,
        lateness_ms,
        spawn_call_ms: distribution(&s.call_ns),
        processes,
        sum,
        own,
        verdict,
    }
}

/// Fail closed: exit 0 only when the schedule was kept and every watched PID lived.
fn verdict(s: &Spawns, procs: &[ProcRow], cut: Option<&'static str>, signalled: bool) -> Verdict {
    let mut reasons = Vec::new();
    if signalled {
        reasons.push("stopped by a signal before the end".to_string());
    } else if let Some(why) = cut {
        reasons.push(format!("the spawner stopped early: {why}"));
    }
    if s.failed > 0 {
        reasons.push(format!(
            "{} of {} spawns failed (first: {})",
            s.failed,
            s.scheduled,
            s.first_error.as_deref().unwrap_or("unknown")
        ));
    }
    if s.not_started > 0 {
        reasons.push(format!(
            "{} of {} due spawns never started",
            s.not_started, s.scheduled
        ));
    }
    if s.late as f64 > MAX_LATE_SHARE * s.scheduled as f64 {
        reasons.push(format!(
            "the schedule was not kept: {} of {} spawns ({:.1} %) started a period or more late (at most {:.0} % may)",
            s.late,
            s.scheduled,
            100.0 * s.late as f64 / s.scheduled.max(1) as f64,
            100.0 * MAX_LATE_SHARE
        ));
    }
    for p in procs.iter().filter(|p| !p.alive) {
        reasons.push(format!(
            "watched PID {} ({}) exited during the run: its CPU covers only part of it",
            p.pid, p.name
        ));
    }
    let kept = reasons.is_empty();
    Verdict {
        kept,
        exit: if kept { Exit::Ok } else { Exit::Aborted }.code(),
        reasons,
    }
}

/// The sampled wall time of a phase.
fn window_s(o: &Observed) -> f64 {
    o.seconds.iter().map(|s| s.interval_s).sum()
}

fn pct(s: f64, window: f64) -> f64 {
    if window > 0.0 {
        100.0 * s / window
    } else {
        0.0
    }
}

fn cpu(p: &ProcSummary, window: f64) -> Cpu {
    Cpu {
        user_s: p.user_s,
        system_s: p.system_s,
        sum_s: p.user_s + p.system_s,
        user_pct: pct(p.user_s, window),
        system_pct: pct(p.system_s, window),
        sum_pct: pct(p.user_s + p.system_s, window),
        cores_mean: p.cores_mean,
        cores_p95: p.cores_p95,
        cores_max: p.cores_max,
        rss_peak_bytes: p.rss_peak_bytes,
        window_s: window,
    }
}

fn overhead(load: &Cpu, base: &Cpu) -> Overhead {
    Overhead {
        sum_s: load.sum_s - base.sum_pct / 100.0 * load.window_s,
        sum_pct: load.sum_pct - base.sum_pct,
        cores: (load.sum_pct - base.sum_pct) / 100.0,
    }
}

fn row(load: Cpu, baseline: Option<Cpu>) -> CpuRow {
    let overhead = baseline.as_ref().map(|b| overhead(&load, b));
    CpuRow {
        load,
        baseline,
        overhead,
    }
}

/// Whether `pid` was alive in the last interval of `o`.
fn alive_at_end(o: &Observed, pid: u32) -> bool {
    o.seconds
        .last()
        .is_some_and(|s| s.procs.iter().any(|p| p.pid == pid && p.alive))
}

/// One row per process seen under load (then those seen only at baseline), matched by PID.
fn rows(plan: &Plan, baseline: Option<&Observed>, load: &Observed) -> Vec<ProcRow> {
    let lw = window_s(load);
    let bw = baseline.map(window_s).unwrap_or(0.0);
    let mut out: Vec<ProcRow> = load
        .processes
        .iter()
        .map(|p| {
            let base = baseline
                .and_then(|b| b.processes.iter().find(|q| q.pid == p.pid))
                .map(|q| cpu(q, bw));
            ProcRow {
                pid: p.pid,
                name: p.name.clone(),
                cmdline: p.cmdline.clone(),
                alive: true,
                cpu: row(cpu(p, lw), base),
            }
        })
        .collect();
    if let Some(b) = baseline {
        for q in &b.processes {
            if !out.iter().any(|r| r.pid == q.pid) {
                out.push(ProcRow {
                    pid: q.pid,
                    name: q.name.clone(),
                    cmdline: q.cmdline.clone(),
                    alive: false,
                    cpu: row(Cpu::default(), Some(cpu(q, bw))),
                });
            }
        }
    }
    // Only PIDs asked for by number must live throughout; names come and go.
    for r in &mut out {
        if plan.watch.pids.contains(&r.pid) {
            r.alive = alive_at_end(load, r.pid) && baseline.is_none_or(|b| alive_at_end(b, r.pid));
        } else {
            r.alive = true;
        }
    }
    out
}

fn add(a: &mut Cpu, b: &Cpu) {
    a.user_s += b.user_s;
    a.system_s += b.system_s;
    a.sum_s += b.sum_s;
    a.user_pct += b.user_pct;
    a.system_pct += b.system_pct;
    a.sum_pct += b.sum_pct;
    a.cores_mean += b.cores_mean;
    a.cores_p95 += b.cores_p95;
    a.cores_max += b.cores_max;
    a.rss_peak_bytes += b.rss_peak_bytes;
    a.window_s = a.window_s.max(b.window_s);
}

fn sum_row(rows: &[ProcRow], with_baseline: bool) -> CpuRow {
    let mut load = Cpu::default();
    let mut base = Cpu::default();
    for r in rows {
        add(&mut load, &r.cpu.load);
        if let Some(b) = &r.cpu.baseline {
            add(&mut base, b);
        }
    }
    row(load, with_baseline.then_some(base))
}

fn distribution(h: &Histogram<u64>) -> Distribution {
    let ms = |ns: u64| ns as f64 / 1e6;
    if h.is_empty() {
        return Distribution::default();
    }
    Distribution {
        count: h.len(),
        mean: h.mean() / 1e6,
        p50: ms(h.value_at_quantile(0.5)),
        p90: ms(h.value_at_quantile(0.9)),
        p99: ms(h.value_at_quantile(0.99)),
        p999: ms(h.value_at_quantile(0.999)),
        max: ms(h.max()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawns(scheduled: u64, started: u64, late: u64) -> Spawns {
        Spawns {
            scheduled,
            started,
            late,
            not_started: scheduled - started,
            ..Spawns::default()
        }
    }

    #[test]
    fn the_verdict_fails_closed() {
        assert!(verdict(&spawns(600, 600, 6), &[], None, false).kept);
        let v = verdict(&spawns(600, 600, 7), &[], None, false);
        assert_eq!((v.kept, v.exit), (false, 6));
        assert!(v.reasons[0].contains("not kept"), "{:?}", v.reasons);
        let v = verdict(&spawns(600, 590, 0), &[], Some("past the deadline"), false);
        assert_eq!(v.reasons.len(), 2, "{:?}", v.reasons);
        let mut s = spawns(10, 10, 0);
        s.failed = 1;
        s.first_error = Some("posix_spawn failed: EAGAIN".into());
        assert!(verdict(&s, &[], None, false).reasons[0].contains("EAGAIN"));
        assert!(!verdict(&spawns(10, 10, 0), &[], None, true).kept);
        let dead = ProcRow {
            pid: 7,
            alive: false,
            ..ProcRow::default()
        };
        assert!(!verdict(&spawns(10, 10, 0), &[dead], None, false).kept);
    }

    #[test]
    fn overhead_is_load_minus_baseline_by_percent() {
        let load = Cpu {
            sum_s: 4.0,
            sum_pct: 40.0,
            window_s: 10.0,
            ..Cpu::default()
        };
        let base = Cpu {
            sum_s: 1.5,
            sum_pct: 30.0,
            window_s: 5.0,
            ..Cpu::default()
        };
        let o = overhead(&load, &base);
        assert!((o.sum_s - 1.0).abs() < 1e-9);
        assert!((o.sum_pct - 10.0).abs() < 1e-9);
        assert!((o.cores - 0.1).abs() < 1e-9);
    }
}
