//! Micro-benchmark of `/metrics` rendering: `serve::metrics::render` of a realistic snapshot
//! (20 HTTP statuses and 20 error kinds, both latency histograms with 30 bounds, the sink's
//! stored counts) into a reused `String`, no I/O. Before the criterion run it counts heap
//! allocations per render after warm-up (expected: 0) and prints the size of the text. Run
//! with `cargo bench --bench metrics` (perf/README.md has the figures).

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ingestbench::serve::metrics::render;
use ingestbench::stats::snapshot::{Buckets, RunInfo, RunState, Snapshot, Stored};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static A: counting_alloc::Counting = counting_alloc::Counting;

/// Latency bounds from 100 µs to 60 s, about three per decade.
fn bounds() -> Vec<f64> {
    let mut v = Vec::new();
    let mut decade = 0.0001;
    while v.len() < 30 {
        for m in [1.0, 2.5, 5.0] {
            v.push(decade * m);
        }
        decade *= 10.0;
    }
    v.truncate(30);
    v
}

fn histogram(batches: u64) -> Buckets {
    let b = bounds();
    let n = b.len() as u64;
    let mut le_s: Vec<(f64, u64)> = b
        .iter()
        .enumerate()
        .map(|(k, &le)| (le, batches * (k as u64 + 1) / n))
        .collect();
    le_s.push((f64::INFINITY, batches));
    Buckets {
        le_s,
        sum_s: batches as f64 * 0.0042,
        count: batches,
    }
}

fn snapshot() -> Snapshot {
    let run = RunInfo {
        run_id: "0123456789abcdef".into(),
        name: Some("nightly soak eu-west".into()),
        adapter: "generic-hec".into(),
        source: "windows.security".into(),
        ..RunInfo::default()
    };
    let mut s = Snapshot::empty(run);
    s.state = RunState::Running;
    s.elapsed_s = 3600.25;
    s.rate_eps = 250_000.0;
    s.events_due = 900_000_000;
    s.cumulative.events_sent = 899_990_000;
    s.cumulative.events_accepted = 899_900_000;
    s.cumulative.batches_sent = 1_800_000;
    s.cumulative.bytes_sent = 512_000_000_000;
    let codes = [
        200, 201, 202, 204, 301, 302, 400, 401, 403, 404, 405, 408, 409, 413, 429, 500, 502, 503,
        504, 507,
    ];
    s.status = codes
        .iter()
        .map(|c| (c.to_string(), 1000 + *c as u64))
        .collect();
    let mut errors: BTreeMap<String, u64> = [
        "connect", "reset", "timeout", "protocol", "auth", "oversize",
    ]
    .iter()
    .map(|k| (k.to_string(), 17))
    .collect();
    errors.extend(codes[6..].iter().map(|c| (format!("status_{c}"), 3)));
    s.errors = errors;
    s.lag_ms_max = 0.75;
    s.backlog_events = 120;
    s.connections_open = 64;
    s.intended_buckets = histogram(1_799_000);
    s.service_buckets = histogram(1_799_000);
    s.stored = Some(Stored {
        store: "builtin".into(),
        events_received: 899_900_000,
        distinct: 899_900_000,
        duplicates: 0,
        lost_events: 0,
        ingest_lag_ms: None,
    });
    s
}

fn allocation_report(s: &Snapshot) {
    let mut out = String::new();
    render(s, &mut out);
    let before = counting_alloc::allocations();
    for _ in 0..1000 {
        out.clear();
        render(s, &mut out);
    }
    let n = counting_alloc::allocations() - before;
    println!(
        "metrics render: {} bytes, {} lines, {:.3} allocations per render after warm-up (status {}, errors {})",
        out.len(),
        out.lines().count(),
        n as f64 / 1000.0,
        s.status.len(),
        s.errors.len()
    );
}

fn bench(c: &mut Criterion) {
    let s = snapshot();
    allocation_report(&s);
    let mut out = String::with_capacity(64 * 1024);
    c.bench_function("metrics_render", |b| {
        b.iter(|| {
            out.clear();
            render(black_box(&s), &mut out);
            black_box(out.len())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
