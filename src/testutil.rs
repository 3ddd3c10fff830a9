//! Helpers for unit tests only: cheap deterministic random byte strings over an alphabet, for
//! the "never panics on any input" tests of the parsers (acct, sink framing, JSON scanning).

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
