//! `ingestbench report compare` and `report list` on saved reports: identical replicates are
//! no significant change (exit 0); a candidate whose latency is 20 % higher in every
//! replicate is worse (exit 3, naming the metrics); `--gate` limits what fails; bad input
//! exits 2; `list` shows a directory's reports, oldest first.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{all, bin};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/report.json");

/// The golden report with its latency percentiles times `factor`, its start at `started`
/// and a passing verdict (a replicate that failed on its own fails a gate).
fn replicate(dir: &Path, name: &str, factor: f64, started: &str) -> String {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(GOLDEN).unwrap()).unwrap();
    v["verdict"] = serde_json::json!({"pass": true, "exit_code": 0, "reasons": []});
    for clock in ["intended", "service"] {
        for p in ["p50", "p99"] {
            let x = v["latency_ms"][clock][p].as_f64().unwrap();
            v["latency_ms"][clock][p] = Value::from(x * factor);
        }
    }
    v["started_at"] = Value::from(started);
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path.display().to_string()
}

fn compare(args: &[&str]) -> std::process::Output {
    bin()
        .args(["report", "compare"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn identical_replicates_are_no_change_and_twenty_percent_more_latency_is_worse() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (i, jitter) in [1.0, 1.01, 0.99].iter().enumerate() {
        replicate(
            d,
            &format!("base/r{i}.json"),
            *jitter,
            "2026-01-01T00:00:00.000Z",
        );
        replicate(
            d,
            &format!("same/r{i}.json"),
            *jitter,
            "2026-01-02T00:00:00.000Z",
        );
        replicate(
            d,
            &format!("slow/r{i}.json"),
            1.2 * jitter,
            "2026-01-03T00:00:00.000Z",
        );
    }
    let (base, same, slow) = (d.join("base"), d.join("same"), d.join("slow"));
    let (base, same, slow) = (
        base.to_str().unwrap(),
        same.to_str().unwrap(),
        slow.to_str().unwrap(),
    );

    let o = compare(&[base, same]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("3 replicate(s), candidate 3"), "{text}");
    let rows: Vec<&str> = text.lines().skip(2).filter(|l| l.contains('%')).collect();
    assert_eq!(rows.len(), 8, "every metric of the report: {text}");
    assert!(
        rows.iter().all(|r| r.ends_with("no significant change")),
        "{text}"
    );
    assert!(text.contains("PASS  no gated metric worse"), "{text}");

    let o = compare(&[base, slow, "--output", "json"]);
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let worse: Vec<&str> = v["regressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(
        worse,
        [
            "intended_p50_ms",
            "intended_p99_ms",
            "service_p50_ms",
            "service_p99_ms"
        ]
    );
    let p99 = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "intended_p99_ms")
        .unwrap();
    assert!(
        (p99["change_pct"].as_f64().unwrap() - 20.0).abs() < 0.01,
        "{p99}"
    );
    assert!(
        p99["change_low_pct"].as_f64().unwrap() > 5.0,
        "the interval clears the threshold: {p99}"
    );
    assert_eq!(v["metrics"][0]["metric"], "achieved_eps");
    assert_eq!(v["metrics"][0]["verdict"], "no significant change");

    // One replicate a side, as a pair of files; a gate on throughput alone passes.
    let (b0, s0) = (format!("{base}/r0.json"), format!("{slow}/r0.json"));
    let o = compare(&[&b0, &s0]);
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    assert!(
        all(&o).contains("worse beyond 5% at 90% confidence"),
        "{}",
        all(&o)
    );
    let o = compare(&[&b0, &s0, "--gate", "achieved_eps,error_rate"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let o = compare(&[&b0, &s0, "--threshold", "25%"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "20 % is under a 25 % threshold: {}",
        all(&o)
    );

    let empty = d.join("empty").display().to_string();
    std::fs::create_dir_all(&empty).unwrap();
    for bad in [
        vec![b0.as_str()],
        vec![&b0, &s0, "--gate", "p99"],
        vec![&b0, &s0, "--confidence", "150%"],
        vec![&b0, empty.as_str()],
        vec![&b0, GOLDEN.strip_suffix("report.json").unwrap(), &b0],
    ] {
        let o = compare(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", all(&o));
    }

    // list: every report of a directory, oldest first; a file that is no report is skipped.
    std::fs::write(d.join("base/notes.json"), "{\"x\": 1}").unwrap();
    let o = bin().args(["report", "list", base]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("3 report(s)") && text.contains("r-0123456789ab"),
        "{text}"
    );
    assert!(
        all(&o).contains("skipped") && all(&o).contains("notes.json"),
        "{}",
        all(&o)
    );
    let o = bin().args(["report", "list", GOLDEN]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "a file is not a directory");
}
