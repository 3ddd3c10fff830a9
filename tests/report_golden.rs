//! Golden report files: one fixed, hand-built run (`RunResult` + `Context`: HTTP statuses and
//! HEC codes, a control action, verification with duplicates, an SLO breach beside a default
//! criterion, a shortfall while the target was down, the loss stages all that comes to, 13
//! seconds of timeline, a failing verdict) rendered to text, JSON and CSV and compared byte for byte with
//! `tests/golden/report.txt`, `report.json` and `report.csv`.
//!
//! What changes per build (`tool.version`, `tool.commit`, `tool.target`) is fixed here, not in
//! the golden files; the serialised histograms (`latency_hdr`) are checked by decoding them
//! against the run's histograms and then written uncompressed (V2 without DEFLATE, which the
//! report reader also reads), so a new deflate backend does not churn the golden and the
//! golden still reads back as a report. The SLO rows and the verdict are set by hand: the golden is of
//! the writers, not of the judging. Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test report_golden`.

use std::path::Path;
use std::time::Duration;

use hdrhistogram::Histogram;
use ingestbench::config::schema::Slo;
use ingestbench::observe::{
    Observed, ProcSecond, ProcSummary, Second as ObservedSecond, TotalSummary, Totals,
};
use ingestbench::report::slo::{Facts, SloResult};
use ingestbench::report::{
    self, Context, LaunchedTarget, Report, TargetInfo, Verdict, Verification, hdr,
};
use ingestbench::stats::result::{RunResult, Second, SecondCounts};
use ingestbench::stats::snapshot::{ControlMark, Latency, LatencySummary};
use ingestbench::stats::{AgentAccount, Counters, new_histogram};

/// Batches of 100 events; 187 accepted, 5 failed after their retries, 2 retried then accepted.
fn totals() -> Counters {
    let mut c = Counters {
        events_sent: 19_200,
        batches_sent: 199,
        bytes_sent: 10_348_000,
        events_accepted: 18_700,
        batches_accepted: 187,
        events_failed: 500,
        batches_failed: 5,
        batches_retried: 7,
        connect_errors: 2,
        connection_resets: 1,
        reconnects: 3,
        lag_ns_sum: 199 * 12_500_000,
        lag_ns_max: 2_400_000_000,
        batches_retries_exhausted: 5,
        events_retries_exhausted: 500,
        events_accepted_in_drain: 300,
        processing_ns: 850_000_000,
        cpu_ns: 1_200_000_000,
        wait_for_target_ns: 400_000_000,
        held_by_cap_ns: 150_000_000,
        target_down_ns: 3_000_000_000,
        ..Counters::default()
    };
    c.status[200] = 187;
    c.status[503] = 12;
    c.hec_codes[0] = 187;
    c.hec_codes[9] = 12;
    c
}

/// 187 answers: most in 2–9 ms, a tail to 180 ms, one at 2.4 s (the target's outage).
fn latencies(extra_us: u64) -> Histogram<u64> {
    let mut h = new_histogram();
    for i in 0..187u64 {
        let us = match i {
            0..=169 => 2_000 + (i * 37) % 7_000,
            170..=185 => 20_000 + (i - 170) * 10_000,
            _ => 2_400_000,
        };
        h.record(us + extra_us).unwrap();
    }
    h
}

fn summary(count: u64, p50: f64, p99: f64) -> LatencySummary {
    LatencySummary {
        count,
        mean: p50 * 1.2,
        p50,
        p90: p50 * 2.0,
        p99,
        p99_9: p99,
        max: p99,
    }
}

/// One second: target eps, events sent, accepted, failed, errors, p50, p99, lag ms, backlog.
type Row = (f64, u64, u64, u64, u64, f64, f64, f64, u64);

const SECONDS: [Row; 13] = [
    (1000.0, 1000, 900, 0, 0, 3.1, 8.2, 0.4, 0),
    (1000.0, 1000, 1000, 0, 0, 3.0, 7.9, 0.3, 0),
    (1000.0, 1000, 1000, 0, 0, 3.2, 8.8, 0.5, 0),
    (1000.0, 1000, 1000, 0, 0, 3.1, 8.1, 0.4, 0),
    (1800.0, 1800, 1700, 0, 0, 3.4, 9.0, 0.6, 0),
    (2000.0, 2000, 2000, 0, 0, 3.6, 9.4, 0.7, 0),
    (2000.0, 2000, 1800, 300, 7, 4.8, 60.2, 1.2, 0),
    (2000.0, 2000, 1900, 200, 5, 4.1, 41.0, 0.9, 0),
    (2000.0, 1400, 1300, 0, 3, 5.0, 180.3, 2400.0, 600),
    (2000.0, 2000, 2000, 0, 0, 3.5, 9.9, 0.8, 600),
    (2000.0, 2000, 2000, 0, 0, 3.4, 9.2, 0.6, 600),
    (2000.0, 2000, 1800, 0, 0, 3.3, 9.0, 0.5, 600),
    (0.0, 0, 300, 0, 0, 3.9, 10.5, 0.0, 0),
];

fn seconds() -> Vec<Second> {
    SECONDS
        .iter()
        .enumerate()
        .map(
            |(t, &(target_eps, sent, acc, failed, errors, p50, p99, lag, backlog))| {
                let counts = SecondCounts {
                    events_sent: sent,
                    events_accepted: acc,
                    events_failed: failed,
                    batches_sent: sent / 100,
                    batches_accepted: acc / 100,
                    batches_failed: failed / 100,
                    bytes_sent: sent * 520,
                    errors,
                    lag_ns_max: (lag * 1e6) as u64,
                    backlog_events: backlog,
                    connections_open: 4,
                    ..SecondCounts::default()
                };
                let n = acc / 100;
                Second {
                    t: t as u32,
                    counts,
                    target_eps,
                    latency: Latency {
                        intended: summary(n, p50, p99),
                        service: summary(n, p50 * 0.8, p99 * 0.7),
                    },
                }
            },
        )
        .collect()
}

fn run_result() -> RunResult {
    RunResult {
        duration: Duration::from_millis(12_350),
        threads: 2,
        connections: 4,
        totals: totals(),
        all_totals: totals(),
        answered_in_window: totals().events_accepted,
        latency: latencies(400),
        service: latencies(0),
        seconds: seconds(),
        abort: None,
        target_events: 19_800.0,
        window: Duration::from_secs(12),
        drain: Duration::from_millis(350),
        warmup: Duration::from_secs(2),
        paused: Duration::ZERO,
        control: vec![ControlMark {
            t_s: 4.2,
            action: "rate",
            rate_eps: Some(2000.0),
            detail: Some("eps 2000".into()),
        }],
        agents: vec![
            AgentAccount {
                agent: 0,
                events_sent: 9_600,
                failed: vec![(1_200, 1_500)],
                failed_overflow: false,
            },
            AgentAccount {
                agent: 1,
                events_sent: 9_600,
                failed: vec![(4_000, 4_200)],
                failed_overflow: false,
            },
        ],
        scenario: None,
        phases: None,
        sources: None,
        targets: None,
        item_errors: Vec::new(),
    }
}

fn context() -> Context {
    Context {
        run_id: "r-0123456789ab".into(),
        host: "loadgen-1".into(),
        name: Some("golden".into()),
        started_wall_ns: 1_700_000_000_250_000_000,
        target: TargetInfo {
            adapter: "generic-hec".into(),
            url: "http://127.0.0.1:8088/services/collector/event".into(),
            address: "127.0.0.1:8088".into(),
            source: "aws.cloudtrail".into(),
            source_version: "1.2.0".into(),
        },
        batch_max_events: 100,
        batch_max_bytes: 524_288,
        config: serde_json::json!({
            "schema_version": "1.0",
            "name": "golden",
            "target": { "adapter": "generic-hec", "url": "http://127.0.0.1:8088/services/collector/event" },
            "workload": { "profile": "steady", "eps": 1000, "stop": { "after": "12s" } },
            "slo": { "min_success_rate": 0.99, "max_p99_ms": 250.0 }
        }),
        slo: Slo::default(),
        slo_facts: Facts::default(),
        verification: Some(Verification {
            store: "built-in sink".into(),
            events_received: 18_750,
            distinct: 18_700,
            duplicates: 50,
            lost_events: 0,
            ingest_lag_ms: Some(ingestbench::sink::LagSummary {
                count: 18_750,
                p50: 3,
                p99: 41,
                max: 212,
            }),
        }),
        watched: Some((observed(), Some(launched()))),
        tagged: true,
        faults: None,
        parts: Default::default(),
        shard: None,
    }
}

/// A watched collector for the first three seconds: 0.5, 0.7, 0.6 cores, 40 MiB resident.
fn observed() -> Observed {
    let proc = |cores: f64| ProcSecond {
        pid: 4242,
        name: "syslog-ng".into(),
        cores,
        rss_bytes: 40 << 20,
        rss_peak_bytes: 42 << 20,
        alive: true,
        ..ProcSecond::default()
    };
    let seconds = [0.5, 0.7, 0.6]
        .iter()
        .enumerate()
        .map(|(k, &c)| ObservedSecond {
            t: k as u32 + 1,
            interval_s: 1.0,
            procs: vec![proc(c)],
            own: Some(ProcSecond {
                cores: 0.25,
                ..proc(0.25)
            }),
            total: Totals {
                cores: c,
                cpu_s: 0.0,
                rss_bytes: 40 << 20,
                busiest_cores: c,
                most_memory_bytes: 42 << 20,
            },
            ..ObservedSecond::default()
        })
        .collect();
    let summary = ProcSummary {
        pid: 4242,
        name: "syslog-ng".into(),
        cmdline: "syslog-ng -F".into(),
        first_t: 1,
        last_t: 3,
        cpu_s: 1.8,
        user_s: 1.2,
        system_s: 0.6,
        cores_mean: 0.6,
        cores_p95: 0.7,
        cores_max: 0.7,
        rss_peak_bytes: 42 << 20,
        pss_peak_bytes: Some(30 << 20),
        threads_max: 4,
        fds_max: 12,
    };
    Observed {
        seconds,
        processes: vec![summary.clone()],
        own: Some(ProcSummary {
            pid: 1000,
            name: "ingestbench".into(),
            cpu_s: 0.75,
            cores_mean: 0.25,
            cores_p95: 0.25,
            cores_max: 0.25,
            pss_peak_bytes: None,
            ..summary
        }),
        total: TotalSummary {
            cpu_s: 1.8,
            cores_mean: 0.6,
            cores_p95: 0.7,
            cores_max: 0.7,
            busiest_cores_max: 0.7,
            rss_peak_bytes: 40 << 20,
            most_memory_bytes: 42 << 20,
        },
        ..Observed::default()
    }
}

fn launched() -> LaunchedTarget {
    LaunchedTarget {
        command: "/usr/sbin/syslog-ng".into(),
        pid: 4242,
        exited_early: false,
        exit_code: Some(0),
        signal: None,
        killed: false,
    }
}

fn slo_rows() -> Vec<SloResult> {
    vec![
        SloResult {
            name: "min_success_rate",
            default: false,
            limit: 0.99,
            actual: Some(18_700.0 / 19_200.0),
            pass: false,
        },
        SloResult {
            name: "max_p99_ms",
            default: false,
            limit: 250.0,
            actual: Some(180.351),
            pass: true,
        },
        SloResult {
            name: "max_failed_events",
            default: true,
            limit: 0.0,
            actual: Some(500.0),
            pass: false,
        },
    ]
}

fn assert_histogram_eq(what: &str, got: &Histogram<u64>, want: &Histogram<u64>) {
    assert_eq!(got.len(), want.len(), "{what}");
    for v in want.iter_recorded() {
        let value = v.value_iterated_to();
        assert_eq!(
            got.count_at(value),
            want.count_at(value),
            "{what} at {value}"
        );
    }
}

/// `h` as HdrHistogram V2 without DEFLATE, in base64: the same bytes whatever compressor.
fn uncompressed(h: &Histogram<u64>) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(h, &mut bytes).unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The report as the goldens hold it: build-specific values fixed, histograms checked.
fn golden_report() -> Report {
    let result = run_result();
    let mut rep = report::build(&result, context());
    rep.tool.version = "0.0.0-golden";
    rep.tool.commit = "0000000";
    rep.tool.target = "x86_64-unknown-linux-gnu";
    rep.slo = slo_rows();
    rep.verdict = Verdict {
        pass: false,
        exit_code: 5,
        reasons: vec![
            "verification: 0 accepted events not stored, 50 stored twice".into(),
            "SLO breached: min_success_rate (limit 0.99, actual 0.9740); max_failed_events (limit 0, actual 500.0000)".into(),
        ],
    };
    let hdr = &mut rep.latency_hdr;
    for (what, text, want) in [
        ("intended", &mut hdr.intended, &result.latency),
        ("service", &mut hdr.service, &result.service),
    ] {
        let got = hdr::decode(text).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_histogram_eq(what, &got, want);
        *text = uncompressed(&got);
    }
    rep
}

fn compare(file: &str, got: &str, failures: &mut Vec<String>) {
    let path = Path::new("tests/golden").join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing; run with UPDATE_GOLDEN=1", path.display()));
    if want == got {
        return;
    }
    let (line, (w, g)) = want
        .lines()
        .zip(got.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, p)| (i + 1, p))
        .unwrap_or((0, ("(length differs)", "")));
    failures.push(format!(
        "{file} line {line}:\n  expected: {w}\n  got:      {g}\n--- got, whole:\n{got}"
    ));
}

#[test]
fn report_formats_match_the_goldens() {
    let rep = golden_report();
    let mut failures = Vec::new();
    compare("report.txt", &report::text::render(&rep), &mut failures);
    let json = serde_json::to_string_pretty(&rep).unwrap() + "\n";
    compare("report.json", &json, &mut failures);
    compare("report.csv", &report::csv::render(&rep), &mut failures);
    assert!(
        failures.is_empty(),
        "golden mismatch (UPDATE_GOLDEN=1 to accept):\n{}",
        failures.join("\n")
    );
}

#[test]
fn text_ends_with_the_verdict_and_full_timeline_has_every_row() {
    let rep = golden_report();
    let text = report::text::render(&rep);
    assert_eq!(
        text.lines().last(),
        Some(
            "FAIL  exit 5: verification: 0 accepted events not stored, 50 stored twice; SLO breached: min_success_rate (limit 0.99, actual 0.9740); max_failed_events (limit 0, actual 500.0000)"
        )
    );
    let full = report::text::render_with(&rep, report::text::Timeline::Full);
    // Timeline rows: a second number, then ten columns.
    let rows = |t: &str| {
        t.lines()
            .filter(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() >= 10 && cols[0].parse::<u32>().is_ok()
            })
            .count()
    };
    assert_eq!((rows(&text), rows(&full)), (8, 13), "{text}\n{full}");
    assert!(!full.contains("rows left out"));
    let mut pass = rep.clone();
    pass.verdict = Verdict {
        pass: true,
        exit_code: 0,
        reasons: Vec::new(),
    };
    assert_eq!(
        report::text::render(&pass).lines().last(),
        Some("PASS  exit 0")
    );
}

/// A saved report reads back whole (`report show`): the golden JSON read and written again is
/// byte for byte the golden, and its text is the golden text.
#[test]
fn a_saved_report_reads_back_whole() {
    let json = std::fs::read_to_string("tests/golden/report.json").unwrap();
    let back = ingestbench::report::de::read("report.json", &json).expect("reads back");
    assert_eq!(serde_json::to_string_pretty(&back).unwrap() + "\n", json);
    let text = std::fs::read_to_string("tests/golden/report.txt").unwrap();
    assert_eq!(report::text::render(&back), text);
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(["report", "show", "tests/golden/report.json"])
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&shown.stdout), text);
    let other = json.replace("ingestbench.report/2", "ingestbench.report/1");
    let e = ingestbench::report::de::read("old.json", &other).unwrap_err();
    assert!(e.contains("report schema \"ingestbench.report/1\""), "{e}");
}
