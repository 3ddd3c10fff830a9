//! The generator allocates nothing per event once warmed up: a counting global allocator
//! watches every pack render 20,000 events into a reused buffer. (Counts, not timings: this is
//! a correctness property, so it lives in the test suite; throughput lives in perf/.)

use ingestbench::generate::{EventCtx, Generator};
use ingestbench::pack::entities::{Entities, Sizes};
use ingestbench::pack::{self, Catalog};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static A: counting_alloc::Counting = counting_alloc::Counting;

#[test]
fn rendering_allocates_nothing_per_event() {
    let cat = Catalog::discover(None).unwrap();
    let entities = Entities::generate(9, &Sizes::default());
    let ids = cat.ids();
    assert!(ids.len() >= 12, "expected the 12 packs, found {ids:?}");
    for id in ids {
        let p = pack::load_compiled(&cat, &id, &semver::VersionReq::STAR, &entities, true)
            .unwrap_or_else(|e| panic!("{id}: {e:?}"));
        let mut g = Generator::new(p.program.clone(), 9, "r-0123456789ab");
        let mut buf = Vec::with_capacity(1 << 20);
        let mut ctx = EventCtx {
            index: 0,
            time_ns: 1_767_600_000_000_000_000,
            agent: 3,
            seq: 0,
            sent_ms: None,
        };
        // Warm up: timestamp caches and nothing else.
        for i in 0..1000 {
            ctx.index = i;
            buf.clear();
            g.render(&ctx, &mut buf);
        }
        let before = counting_alloc::allocations();
        for i in 1000..21_000u64 {
            ctx.index = i;
            ctx.seq = i;
            ctx.time_ns += 1_000_000;
            buf.clear();
            g.render(&ctx, &mut buf);
        }
        let n = counting_alloc::allocations() - before;
        assert_eq!(n, 0, "{id}: {n} allocations in 20000 events");
    }
}
