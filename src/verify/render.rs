//! The text form of a `Verification`: per store a line of totals, then per agent one line,
//! with the first missing, duplicated and unexpected seqs, the ingest lag where the store
//! records arrival, and the verdict.

use std::fmt::Write;

use super::Verification;

pub fn render_text(v: &Verification) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "verify run {}{}  (limits: lost {}, duplicated {})",
        v.run_id,
        if v.exact { "" } else { "  [INEXACT]" },
        v.max_lost,
        v.max_dup
    );
    for src in &v.sources {
        let c = &src.comparison;
        let _ = writeln!(
            s,
            "\n{}  settled {} (drain {} ms, {} polls), {} scanned",
            src.source,
            if src.settle.settled { "yes" } else { "no" },
            src.settle.drain_ms,
            src.settle.polls,
            src.scanned
        );
        let _ = writeln!(
            s,
            "  expected {}  stored {}  lost {}  duplicated {}  unexpected {}",
            c.expected, c.stored, c.lost, c.duplicated, c.unexpected
        );
        for a in &c.agents {
            let _ = write!(
                s,
                "  agent {:>4}: expected {} stored {} lost {} dup {} unexpected {}",
                a.agent, a.expected, a.stored, a.lost, a.duplicated, a.unexpected
            );
            if !a.lost_first.is_empty() {
                let r: Vec<String> = a
                    .lost_first
                    .iter()
                    .map(|[f, t]| {
                        if t - f == 1 {
                            f.to_string()
                        } else {
                            format!("{f}..{}", t - 1)
                        }
                    })
                    .collect();
                let _ = write!(s, "; missing {}", r.join(","));
            }
            if !a.duplicated_first.is_empty() {
                let d: Vec<String> = a.duplicated_first.iter().map(u64::to_string).collect();
                let _ = write!(s, "; dup seqs {}", d.join(","));
            }
            if !a.unexpected_first.is_empty() {
                let d: Vec<String> = a.unexpected_first.iter().map(u64::to_string).collect();
                let _ = write!(s, "; unexpected seqs {}", d.join(","));
            }
            s.push('\n');
        }
        if let Some(l) = &src.ingest_lag {
            let _ = writeln!(
                s,
                "  ingest lag ({}): p50 {} ms  p99 {} ms  max {} ms  over {} events{}{}",
                l.measure,
                l.p50_ms,
                l.p99_ms,
                l.max_ms,
                l.count,
                if l.negative > 0 {
                    format!(", {} below zero counted as 0", l.negative)
                } else {
                    String::new()
                },
                if l.resolution_ms > 1 {
                    format!(", resolution {} ms", l.resolution_ms)
                } else {
                    String::new()
                }
            );
        }
        if let Some(m) = &src.records_with_several_tags {
            let _ = writeln!(
                s,
                "  records with several tags: {} ({} tags in them; the first: {})",
                m.records,
                m.tags,
                m.first.as_deref().unwrap_or("?")
            );
        }
        for n in &src.notes {
            let _ = writeln!(s, "  note: {n}");
        }
    }
    let _ = writeln!(s);
    if v.pass {
        let _ = writeln!(s, "PASS");
    } else {
        let _ = writeln!(s, "FAIL (exit {})", v.exit_code);
        for r in &v.reasons {
            let _ = writeln!(s, "  - {r}");
        }
    }
    s
}
