//! `report::merge` against the one-process truth: one run's samples (30,000 latencies, a
//! failed range, 429s and HEC codes, 10 seconds of timeline) taken once in one process and
//! once split over 3 shards, each shard's report built, saved as JSON and read back. The
//! merged report must be the one-process report — every count, percentile, bucket, the
//! accounting, the loss stages, the SLO rows and the verdict — save the seconds' p50/p99,
//! which a merge can only bound (each is the highest shard's, never under the truth). A shard
//! that started 2 s after the others has its seconds 2 s later. Merging is byte-stable.

use std::time::Duration;

use hdrhistogram::Histogram;
use ingestbench::config::secrets::Store;
use ingestbench::report::slo::Facts;
use ingestbench::report::{self, Context, TargetInfo, merge::merge};
use ingestbench::run::shard::Shard;
use ingestbench::stats::result::{RunResult, Second, SecondCounts};
use ingestbench::stats::snapshot::{Latency, LatencySummary};
use ingestbench::stats::{AgentAccount, Counters, new_histogram};
use serde_json::Value;

const SHARDS: u32 = 3;
const START_NS: i64 = 1_767_600_000_000_000_000;

const CONFIG: &str = "schema_version: \"1.0\"\nname: merge-truth\nseed: 9\ntarget: { url: \"http://127.0.0.1:9/ingest\" }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 3000, shards: 3, stop: { after: 10s } }\nslo: { max_p99_ms: 30, max_failed_events: 1000 }\n";

/// One sample: which shard took it, its second, its latency (µs), and its service time.
struct Sample {
    shard: u32,
    t: u32,
    latency_us: u64,
    service_us: u64,
}

/// 30,000 answers over 10 seconds, a long tail, spread over the shards as workers interleave.
fn samples() -> Vec<Sample> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..30_000u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let base = 800 + x % 4_000;
            let latency_us = if x.is_multiple_of(97) {
                base * 40
            } else {
                base
            };
            Sample {
                shard: (i % u64::from(SHARDS)) as u32,
                t: (i / 3_000) as u32,
                latency_us,
                service_us: latency_us * 3 / 4,
            }
        })
        .collect()
}

fn summary(h: &Histogram<u64>) -> LatencySummary {
    let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    LatencySummary {
        count: h.len(),
        mean: h.mean() / 1000.0,
        p50: ms(0.5),
        p90: ms(0.9),
        p99: ms(0.99),
        p99_9: ms(0.999),
        max: h.max() as f64 / 1000.0,
    }
}

/// The result of the samples `keep` selects (`shards` of them, each shard one agent).
fn result(all: &[Sample], keep: impl Fn(&Sample) -> bool, agents: &[u32]) -> RunResult {
    let picked: Vec<&Sample> = all.iter().filter(|s| keep(s)).collect();
    let (mut latency, mut service) = (new_histogram(), new_histogram());
    let mut seconds = Vec::new();
    for t in 0..10u32 {
        let (mut l, mut s) = (new_histogram(), new_histogram());
        let in_t: Vec<&&Sample> = picked.iter().filter(|x| x.t == t).collect();
        for x in &in_t {
            l.record(x.latency_us).unwrap();
            s.record(x.service_us).unwrap();
        }
        latency.add(&l).unwrap();
        service.add(&s).unwrap();
        let n = in_t.len() as u64;
        seconds.push(Second {
            t,
            counts: SecondCounts {
                events_sent: n,
                events_accepted: n,
                batches_sent: n,
                batches_accepted: n,
                bytes_sent: n * 700,
                lag_ns_max: 1_000_000 + u64::from(t) * 1000,
                connections_open: agents.len() as u64 * 2,
                ..Default::default()
            },
            target_eps: 1_000.0 * agents.len() as f64,
            latency: Latency {
                intended: summary(&l),
                service: summary(&s),
            },
        });
    }
    let n = picked.len() as u64;
    let per = agents.len() as u64;
    let mut totals = Counters {
        events_sent: n + 30 * per,
        events_accepted: n,
        events_failed: 30 * per,
        batches_sent: n + per,
        batches_accepted: n,
        batches_failed: per,
        bytes_sent: n * 700,
        lag_ns_sum: n * 400_000,
        lag_ns_max: 1_009_000,
        processing_ns: n * 2_000,
        cpu_ns: n * 9_000,
        batches_retries_exhausted: per,
        events_retries_exhausted: 30 * per,
        events_given_up_429: 30 * per,
        ..Counters::default()
    };
    totals.status[200] = n;
    totals.status[429] = 3 * per;
    totals.hec_codes[0] = n;
    RunResult {
        duration: Duration::from_millis(10_040),
        threads: agents.len(),
        connections: agents.len() * 2,
        all_totals: totals.clone(),
        answered_in_window: totals.events_accepted,
        totals,
        latency,
        service,
        seconds,
        abort: None,
        target_events: 1_000.0 * agents.len() as f64 * 10.0 + 30.0 * per as f64,
        window: Duration::from_secs(10),
        drain: Duration::from_millis(40),
        warmup: Duration::ZERO,
        paused: Duration::ZERO,
        control: Vec::new(),
        agents: agents
            .iter()
            .map(|a| AgentAccount {
                agent: *a,
                events_sent: 10_030,
                failed: vec![(500, 530)],
                failed_overflow: false,
            })
            .collect(),
        scenario: None,
        phases: None,
        sources: None,
        targets: None,
        item_errors: Vec::new(),
    }
}

fn context(shard: Option<Shard>, started_wall_ns: i64) -> Context {
    let loaded = ingestbench::config::load_str(CONFIG, &Store::new("/nonexistent".into()), None);
    let config = loaded.config.expect("a valid config");
    Context {
        run_id: "job-merge".into(),
        host: "loadgen".into(),
        name: config.name.clone(),
        started_wall_ns,
        target: TargetInfo {
            adapter: "lphc".into(),
            url: "http://127.0.0.1:9/ingest".into(),
            address: "127.0.0.1:9".into(),
            source: "aws.cloudtrail".into(),
            source_version: "1.1.0".into(),
        },
        batch_max_events: 1,
        batch_max_bytes: 1 << 20,
        config: serde_json::to_value(&config).unwrap(),
        slo: config.slo.clone(),
        slo_facts: Facts::default(),
        verification: None,
        watched: None,
        tagged: true,
        faults: None,
        parts: Default::default(),
        shard,
    }
}

/// A report as a run writes it: built, judged, saved as JSON.
fn saved(r: &RunResult, cx: Context) -> String {
    let slo = cx.slo.clone();
    let mut rep = report::build(r, cx);
    let (exit, reasons) = ingestbench::run::verdict(&rep, &r.abort, &slo);
    rep.verdict = report::Verdict {
        pass: exit.code() == 0,
        exit_code: exit.code(),
        reasons,
    };
    serde_json::to_string_pretty(&rep).unwrap()
}

fn shard_files(all: &[Sample], starts: [i64; 3]) -> Vec<(String, String)> {
    (0..SHARDS)
        .map(|i| {
            let r = result(all, |s| s.shard == i, &[i * 1000]);
            let shard = Shard {
                index: i,
                count: SHARDS,
            };
            (
                format!("shard-{i}.json"),
                saved(&r, context(Some(shard), starts[i as usize])),
            )
        })
        .collect()
}

/// The report with what only a merge has, or can only bound, left out.
fn comparable(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    o.remove("merged");
    for row in o["timeline"].as_array_mut().unwrap() {
        let row = row.as_object_mut().unwrap();
        row.remove("p50_ms");
        row.remove("p99_ms");
    }
    v
}

#[test]
fn merged_shards_are_the_one_process_truth() {
    let all = samples();
    let truth = result(&all, |_| true, &[0, 1000, 2000]);
    let one: Value = serde_json::from_str(&saved(&truth, context(None, START_NS))).unwrap();
    let files = shard_files(&all, [START_NS; 3]);
    let merged = merge(&files).expect("the shards merge");
    let m: Value = serde_json::from_str(&serde_json::to_string(&merged).unwrap()).unwrap();
    let (cm, co) = (comparable(m.clone()), comparable(one.clone()));
    for (key, want) in co.as_object().unwrap() {
        assert_eq!(&cm[key], want, "{key} differs from the one-process report");
    }
    assert_eq!(cm.as_object().unwrap().len(), co.as_object().unwrap().len());
    // The exact parts, spelled out: counts, percentiles from the added histograms, verdict.
    assert_eq!(m["summary"]["events_accepted"], 30_000);
    assert_eq!(m["latency_ms"], one["latency_ms"]);
    assert_eq!(m["verdict"], one["verdict"]);
    assert_eq!(
        m["verdict"]["exit_code"], 3,
        "the p99 SLO judged on the merged figures"
    );
    // A second's percentiles: the highest shard's, never under the truth.
    for (mr, tr) in m["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .zip(one["timeline"].as_array().unwrap())
    {
        for key in ["p50_ms", "p99_ms"] {
            assert!(mr[key].as_f64() >= tr[key].as_f64(), "{key}: {mr} vs {tr}");
        }
    }
    let ms: Vec<u64> = m["merged"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["events_accepted"].as_u64().unwrap())
        .collect();
    assert_eq!(ms, [10_000, 10_000, 10_000]);
    // Byte-stable.
    let again = serde_json::to_string(&merge(&files).unwrap()).unwrap();
    assert_eq!(serde_json::to_string(&merged).unwrap(), again);
}

#[test]
fn seconds_are_aligned_by_wall_clock() {
    let all = samples();
    let late = START_NS + 2_000_000_000;
    let files = shard_files(&all, [START_NS, START_NS, late]);
    let m = serde_json::to_value(merge(&files).unwrap()).unwrap();
    let rows = m["timeline"].as_array().unwrap();
    assert_eq!(rows.len(), 12, "10 seconds, the last shard's 2 s later");
    let sent: Vec<u64> = rows
        .iter()
        .map(|r| r["events_sent"].as_u64().unwrap())
        .collect();
    assert_eq!(
        &sent[..2],
        [2_000, 2_000],
        "two shards in the first seconds"
    );
    assert_eq!(sent[2], 3_000);
    assert_eq!(&sent[10..], [1_000, 1_000]);
    assert!((m["duration_s"].as_f64().unwrap() - 12.04).abs() < 1e-9);
}

#[test]
fn a_report_that_is_not_a_shard_or_of_another_config_is_refused() {
    let all = samples();
    let mut files = shard_files(&all, [START_NS; 3]);
    let plain = saved(&result(&all, |_| true, &[0]), context(None, START_NS));
    let e = merge(&[("plain.json".into(), plain)]).unwrap_err();
    assert!(e.0.contains("not a shard's report"), "{e}");
    files[1].1 = files[1]
        .1
        .replace("\"max_p99_ms\": 30.0", "\"max_p99_ms\": 31.0");
    let e = merge(&files).unwrap_err();
    assert!(e.0.contains("different configs"), "{e}");
    let e = merge(&[("x.json".into(), "{".into())]).unwrap_err();
    assert!(e.0.starts_with("x.json: not JSON"), "{e}");
}
