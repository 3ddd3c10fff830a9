//! A probe for a person: a header naming the target, one line per step (`PASS  resolve
//! 127.0.0.1:8088 (1 address)  0.1 ms`), its details indented under it, and last the verdict
//! line in the report's words (`PASS  exit 0` or `FAIL  exit N: reasons`). A function from a
//! `Probe` to a `String`.

use std::fmt::Write;

use crate::probe::{Probe, Verdict};

pub fn render(p: &Probe) -> String {
    let mut o = String::new();
    let t = &p.target;
    let run = if p.run_id.is_empty() {
        String::new()
    } else {
        format!(", run {}", p.run_id)
    };
    let _ = writeln!(
        o,
        "ingestbench probe — {} {} ({}, {}), source {}{run}",
        t.adapter, t.url, t.address, t.transport, t.source
    );
    for w in &p.warnings {
        let _ = writeln!(o, "warning  {w}");
    }
    let width = p.steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &p.steps {
        let time = if s.verdict == Verdict::Skipped {
            String::new()
        } else {
            format!("  {:.1} ms", s.elapsed_ms)
        };
        let _ = writeln!(
            o,
            "{}  {:<width$}  {}{time}",
            s.verdict.word(),
            s.name,
            s.summary
        );
        for l in &s.lines {
            let _ = writeln!(o, "        {l}");
        }
        if let (Some(e), Verdict::Warn | Verdict::Fail) = (&s.error, s.verdict)
            && *e != s.summary
        {
            let what = if s.verdict == Verdict::Fail {
                "error"
            } else {
                "warning"
            };
            let _ = writeln!(o, "        {what}: {e}");
        }
    }
    let v = &p.verdict;
    let _ = writeln!(o);
    if v.pass {
        let _ = writeln!(o, "PASS  exit {}", v.exit_code);
    } else {
        let _ = writeln!(o, "FAIL  exit {}: {}", v.exit_code, v.reasons.join("; "));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Exit;
    use crate::probe::{ProbeVerdict, SCHEMA, Step, TargetInfo};

    #[test]
    fn one_line_per_step_and_the_verdict_last() {
        let mut resolve = Step::pass("resolve", "127.0.0.1:8088 (1 address)");
        resolve.elapsed_ms = 0.12;
        let p = Probe {
            schema: SCHEMA,
            run_id: "r-1".into(),
            target: TargetInfo {
                adapter: "generic-hec".into(),
                url: "http://127.0.0.1:8088".into(),
                address: "127.0.0.1:8088".into(),
                transport: "http".into(),
                source: "aws.cloudtrail".into(),
            },
            timeout_s: 30.0,
            elapsed_ms: 1.0,
            warnings: vec![],
            steps: vec![
                resolve,
                Step::fail("auth", "authentication failed: 403", Exit::AuthFailed)
                    .line("health: 200 code 17"),
                Step::skipped("framing", "not run: an earlier step failed"),
            ],
            verdict: ProbeVerdict {
                pass: false,
                exit_code: 4,
                reasons: vec!["auth: authentication failed: 403".into()],
            },
        };
        let text = render(&p);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "PASS  resolve  127.0.0.1:8088 (1 address)  0.1 ms"
        );
        assert!(lines[2].starts_with("FAIL  auth     authentication failed"));
        assert_eq!(lines[3], "        health: 200 code 17");
        assert_eq!(lines[4], "SKIP  framing  not run: an earlier step failed");
        assert_eq!(
            *lines.last().unwrap(),
            "FAIL  exit 4: auth: authentication failed: 403"
        );
    }
}
