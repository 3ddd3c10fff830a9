//! Helpers for unit tests only: cheap deterministic random byte strings over an alphabet, for
//! the "never panics on any input" tests of the parsers (acct, sink framing, JSON scanning),
//! and a plain report `Context` for tests that build reports from a made-up `RunResult`.

/// `count` strings of 0..`max_len` bytes drawn from `alphabet` with a xorshift generator
/// seeded by `seed`, so a failure reproduces.
pub(crate) fn random_strings(
    seed: u64,
    alphabet: &'static [u8],
    max_len: usize,
    count: usize,
) -> impl Iterator<Item = Vec<u8>> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..count).map(move |_| {
        let len = (next() % (max_len as u64 + 1)) as usize;
        (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect()
    })
}

/// A report context with placeholder facts: run `run_id` to an lphc target, judged by `slo`.
pub(crate) fn context(run_id: &str, slo: crate::config::schema::Slo) -> crate::report::Context {
    crate::report::Context {
        run_id: run_id.into(),
        host: "h".into(),
        name: None,
        started_wall_ns: 0,
        target: crate::report::TargetInfo {
            adapter: "lphc".into(),
            url: "http://127.0.0.1:1/".into(),
            address: "127.0.0.1:1".into(),
            source: "s".into(),
            source_version: "1".into(),
        },
        batch_max_events: 100,
        batch_max_bytes: 1 << 20,
        config: serde_json::Value::Null,
        slo,
        slo_facts: Default::default(),
        verification: None,
        watched: None,
        tagged: false,
        faults: None,
        parts: Default::default(),
        shard: None,
    }
}
