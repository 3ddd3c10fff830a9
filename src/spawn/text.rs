//! The text summary, in edr-loadgen's terms and line shapes ("N events generated.",
//! "PID p[cmdline]: u+s = t seconds / u%+s% = t% percent", "SUM: …"), each process followed
//! by its baseline and the difference, then lateness, ingestbench's own cost and the verdict.

use std::fmt::Write;

use super::report::{Cpu, CpuRow, Overhead, SpawnReport};

/// The run's opening line, as edr-loadgen logs it.
pub fn header(command: &str, delay_s: f64, rate: f64, duration_s: f64) -> String {
    format!(
        "ingestbench spawn: exec '{command}', every {delay_s:.4} seconds ({rate:.0}/s), duration: {duration_s:.4} seconds"
    )
}

fn seconds_and_percent(c: &Cpu) -> String {
    format!(
        "{:.2}+{:.2} = {:.2} seconds / {:.3}+{:.3} = {:.3} percent",
        c.user_s, c.system_s, c.sum_s, c.user_pct, c.system_pct, c.sum_pct
    )
}

fn difference(o: &Overhead) -> String {
    format!(
        "{:+.2} seconds / {:+.3} percent ({:+.3} cores)",
        o.sum_s, o.sum_pct, o.cores
    )
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn phases(out: &mut String, row: &CpuRow) {
    if let Some(b) = &row.baseline {
        let _ = writeln!(out, "    baseline: {}", seconds_and_percent(b));
    }
    if let Some(o) = &row.overhead {
        let _ = writeln!(out, "    difference: {}", difference(o));
    }
}

pub fn render(r: &SpawnReport) -> String {
    let mut out = String::new();
    let s = &r.spawns;
    let _ = writeln!(out, "{} events generated.", s.started);
    let _ = writeln!(
        out,
        "  {} expected, {} failed, {} late (a period or more), {} not started; {:.1}/s achieved over {:.2} s",
        s.scheduled, s.failed, s.late, s.not_started, s.achieved_per_s, s.load_window_s
    );
    let l = &r.lateness_ms;
    let _ = writeln!(
        out,
        "  lateness: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms; a spawn call p50 {:.3} ms, p99 {:.3} ms",
        l.p50, l.p90, l.p99, l.p999, l.max, r.spawn_call_ms.p50, r.spawn_call_ms.p99
    );
    if s.exited_failed > 0 || s.killed > 0 {
        let _ = writeln!(
            out,
            "  children: {} exited 0, {} exited otherwise, {} killed after the grace period",
            s.exited_ok, s.exited_failed, s.killed
        );
    }
    for p in &r.processes {
        let _ = writeln!(
            out,
            "PID {}[{}]: {}; RSS peak {}",
            p.pid,
            p.cmdline,
            seconds_and_percent(&p.cpu.load),
            mb(p.cpu.load.rss_peak_bytes)
        );
        phases(&mut out, &p.cpu);
    }
    if r.processes.len() > 1 {
        let c = &r.sum.load;
        let _ = writeln!(
            out,
            "SUM: {:.2} seconds / {:.3} percent",
            c.sum_s, c.sum_pct
        );
        phases(&mut out, &r.sum);
    }
    if let Some(o) = &r.own {
        let _ = writeln!(out, "ingestbench itself: {}", seconds_and_percent(&o.load));
    }
    if r.verdict.kept {
        let _ = writeln!(out, "PASS: every due spawn started on schedule");
    } else {
        let _ = writeln!(out, "FAIL: {}", r.verdict.reasons.join("; "));
    }
    out
}
