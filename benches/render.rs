//! Micro-benchmark of the generator: one core rendering each pack's events into a reused
//! buffer (no I/O). Before the criterion runs it counts heap allocations per event after
//! warm-up with a counting global allocator, and prints them. Run with
//! `cargo bench --bench render` (perf/README.md has the figures).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ingestbench::generate::{EventCtx, Generator};
use ingestbench::pack::entities::{Entities, Sizes};
use ingestbench::pack::{self, Catalog};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static A: counting_alloc::Counting = counting_alloc::Counting;

const BATCH: u64 = 1000;

fn generators() -> Vec<(String, Generator)> {
    let cat = Catalog::discover(None).expect("packs");
    let entities = Entities::generate(1, &Sizes::default());
    cat.ids()
        .into_iter()
        .map(|id| {
            let p = pack::load_compiled(&cat, &id, &semver::VersionReq::STAR, &entities, true)
                .expect("pack compiles");
            (id, Generator::new(p.program.clone(), 1, "r-0123456789ab"))
        })
        .collect()
}

/// Renders `n` events from index `from` into `buf` (cleared per batch of BATCH).
fn render(g: &mut Generator, buf: &mut Vec<u8>, from: u64, n: u64) -> usize {
    let mut bytes = 0;
    let mut ctx = EventCtx {
        index: from,
        time_ns: 1_767_600_000_000_000_000 + from as i64 * 1000,
        agent: 1,
        seq: from,
        sent_ms: Some(1_767_225_600_000),
    };
    for _ in 0..n {
        if buf.len() > (1 << 19) {
            bytes += buf.len();
            buf.clear();
        }
        g.render(&ctx, buf);
        ctx.index += 1;
        ctx.seq += 1;
        ctx.time_ns += 1000;
    }
    bytes + buf.len()
}

fn allocation_report() {
    println!("allocations per event after warm-up (100,000 events per pack):");
    for (id, mut g) in generators() {
        let mut buf = Vec::with_capacity(1 << 21);
        render(&mut g, &mut buf, 0, 10_000);
        buf.clear();
        let before = counting_alloc::allocations();
        let bytes = render(&mut g, &mut buf, 10_000, 100_000);
        let n = counting_alloc::allocations() - before;
        println!(
            "  {id:22} {:.4} allocs/event  ({} bytes/event)",
            n as f64 / 100_000.0,
            bytes / 100_000
        );
    }
}

fn bench(c: &mut Criterion) {
    allocation_report();
    let mut group = c.benchmark_group("render");
    group.throughput(Throughput::Elements(BATCH));
    for (id, mut g) in generators() {
        let mut buf = Vec::with_capacity(1 << 21);
        let mut i = 0u64;
        group.bench_function(&id, |b| {
            b.iter(|| {
                buf.clear();
                let n = render(&mut g, &mut buf, i, BATCH);
                i += BATCH;
                black_box(n)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
