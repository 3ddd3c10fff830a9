//! `observability.hdr_log` read by HdrHistogram's own Python port: a log of a few intervals
//! (two tags a second, as the run writes them, one second with nothing recorded) written by
//! `report::hdr_log::HdrLog`, read back with `hdrh.log.HistogramLogReader` through
//! `support/hdr_log_read.py`. Every interval's tag, timestamps, total, max, count at every
//! recorded value and percentiles must be what was written, and the intervals of a tag added
//! up on the Python side must equal the Rust histogram of all their samples. Python with
//! `hdrh` (PyPI `hdrhistogram`, installed by scripts/install-test-deps.sh) missing: a failure
//! in CI, a loud skip elsewhere.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hdrhistogram::Histogram;
use ingestbench::report::hdr_log::HdrLog;
use ingestbench::stats::new_histogram;
use serde_json::Value;
use support::peers::require;

const START: f64 = 1_700_000_000.5;

/// `python3` when it can import `hdrh`.
fn python_hdrh() -> Option<PathBuf> {
    let ok = Command::new("python3")
        .args(["-c", "import hdrh.log"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| PathBuf::from("python3"))
}

fn read_with_python(python: &Path, log: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/hdr_log_read.py");
    let out = Command::new(python).arg(script).arg(log).output().unwrap();
    assert!(
        out.status.success(),
        "hdrh refused the log: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(log).unwrap_or_default()
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `n` latencies in µs from 50 µs to tens of ms, a few repeated, from `seed`.
fn samples(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            50 + (x % 400) * (1 + (x >> 32) % 100)
        })
        .collect()
}

fn hist(values: &[u64]) -> Histogram<u64> {
    let mut h = new_histogram();
    for &v in values {
        h.record(v).unwrap();
    }
    h
}

/// The value at a percentile as HdrHistogram's Java and Python ports pick it: the first value
/// whose cumulative count reaches `percent` of the total, rounded half up.
fn java_percentile(h: &Histogram<u64>, percent: f64) -> u64 {
    let target = ((percent.min(100.0) * h.len() as f64 / 100.0) + 0.5) as u64;
    let target = target.max(1);
    let mut seen = 0;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen >= target {
            return h.highest_equivalent(v.value_iterated_to());
        }
    }
    0
}

/// What Python saw of one histogram equals `h`.
fn assert_same(what: &str, py: &Value, h: &Histogram<u64>) {
    assert_eq!(py["total"].as_u64(), Some(h.len()), "{what}: total");
    let values = py["values"].as_array().unwrap();
    assert_eq!(
        values.len(),
        h.iter_recorded().count(),
        "{what}: recorded values"
    );
    let mut sum = 0;
    for pair in values {
        let (v, c) = (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap());
        assert_eq!(h.count_at(v), c, "{what}: count at {v} µs");
        sum += c;
    }
    assert_eq!(sum, h.len(), "{what}: counts add up");
    if h.is_empty() {
        return;
    }
    let max = py["max"].as_u64().unwrap();
    assert!(
        h.equivalent(max, h.max()),
        "{what}: max {max} vs {}",
        h.max()
    );
    for (p, v) in py["percentiles"].as_object().unwrap() {
        let percent: f64 = p.parse().unwrap();
        assert_eq!(
            v.as_u64(),
            Some(java_percentile(h, percent)),
            "{what}: p{percent}"
        );
    }
}

#[test]
fn hdrh_python_reader_reads_our_hdr_log() {
    let Some(python) = require("python3 with hdrh (PyPI hdrhistogram)", python_hdrh()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.hlog");
    let mut log = HdrLog::create(&path, START).unwrap();
    let mut written = Vec::new();
    for sec in 0..4u64 {
        // Second 2 had no answers: an empty interval is still written.
        let n = if sec == 2 {
            0
        } else {
            300 + 250 * sec as usize
        };
        let intended = hist(&samples(10 + sec, n));
        let service = hist(&samples(20 + sec, n));
        for (tag, h) in [("intended", intended), ("service", service)] {
            log.interval(sec as f64, 1.0, tag, &h).unwrap();
            written.push((sec, tag, h));
        }
    }
    log.finish().unwrap();

    let py = read_with_python(&python, &path);
    assert_eq!(py["start_time_sec"].as_f64(), Some(START));
    let intervals = py["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), written.len());
    for (got, (sec, tag, h)) in intervals.iter().zip(&written) {
        let what = format!("second {sec} {tag}");
        assert_eq!(got["tag"].as_str(), Some(*tag), "{what}");
        let start_ms = got["start_ms"].as_f64().unwrap();
        let want_ms = (START + *sec as f64) * 1000.0;
        assert!((start_ms - want_ms).abs() < 1.0, "{what}: start {start_ms}");
        let len_ms = got["end_ms"].as_f64().unwrap() - start_ms;
        assert!((len_ms - 1000.0).abs() < 1.0, "{what}: length {len_ms}");
        assert_same(&what, got, h);
    }
    for tag in ["intended", "service"] {
        let mut all = new_histogram();
        for (_, _, h) in written.iter().filter(|(_, t, _)| *t == tag) {
            all.add(h).unwrap();
        }
        assert_same(
            &format!("{tag}, all intervals added"),
            &py["merged"][tag],
            &all,
        );
    }
}

/// A real run writes its HDR log as it goes: one interval per second and clock, whose sum is
/// the report's own histogram (decoded from `latency_hdr`), read by the Python reader.
#[test]
fn a_runs_hdr_log_adds_up_to_its_report() {
    let Some(python) = require("python3 with hdrh (PyPI hdrhistogram)", python_hdrh()) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("out/run.hlog");
    let cfg = support::write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\nseed: 2\ntarget: {{ url: builtin, batch: {{ max_events: 20 }} }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: 2000, stop: {{ after: 3s }} }}\nobservability: {{ hdr_log: \"{}\" }}\n",
            log.display()
        ),
    );
    let (o, v) = support::run_json(&cfg, 1, 2);
    assert_eq!(o.status.code(), Some(0), "{}", support::all(&o));
    let read = read_with_python(&python, &log);
    let intervals = read["intervals"].as_array().unwrap();
    let tags = |t: &str| intervals.iter().filter(|i| i["tag"] == t).count();
    assert!(
        tags("intended") >= 3 && tags("intended") == tags("service"),
        "{}",
        intervals.len()
    );
    let mine =
        ingestbench::report::hdr::decode(v["latency_hdr"]["intended"].as_str().unwrap()).unwrap();
    assert_same(
        "the run's intended clock",
        &read["merged"]["intended"],
        &mine,
    );
    assert_eq!(
        read["merged"]["service"]["total"],
        v["latency_ms"]["service"]["count"]
    );
}
