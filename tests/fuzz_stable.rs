//! The fuzz targets (`ingestbench::fuzzing::TARGETS`) on the stable toolchain: every file of
//! each target's seed corpus (`fuzz/corpus/<target>/`: real bodies, frames, configs, packs
//! and scenarios, and the broken ones) run as it is, then mutated — bytes flipped, set,
//! inserted, removed, ranges repeated, two seeds spliced — by `arbtest` for a fixed budget per
//! target (`IB_FUZZ_MS`, default 1500 ms; a failure prints the seed that replays it with
//! `IB_FUZZ_SEED`). A target must return on every input: a panic fails the test with the
//! input's bytes. cargo-fuzz (`fuzz/`) runs the same functions for long runs.

use std::path::{Path, PathBuf};

use arbtest::arbitrary::{self, Unstructured};
use ingestbench::fuzzing::TARGETS;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// One mutation of a seed, as the unstructured bytes choose it.
fn mutate(u: &mut Unstructured, seeds: &[Vec<u8>]) -> arbitrary::Result<Vec<u8>> {
    let mut v = u.choose(seeds)?.clone();
    for _ in 0..u.int_in_range(1..=8)? {
        let at = if v.is_empty() {
            0
        } else {
            u.choose_index(v.len() + 1)?
        };
        match u.int_in_range(0..=6)? {
            0 if at < v.len() => v[at] ^= 1 << u.int_in_range(0..=7)?,
            1 if at < v.len() => v[at] = u.arbitrary()?,
            2 => {
                let n = u.int_in_range(1..=16)?;
                let bytes: Vec<u8> = (0..n).map(|_| u.arbitrary()).collect::<Result<_, _>>()?;
                v.splice(at..at, bytes);
            }
            3 if at < v.len() => {
                let end = (at + u.int_in_range(1..=32)?).min(v.len());
                v.drain(at..end);
            }
            4 if at < v.len() => {
                let end = (at + u.int_in_range(1..=64)?).min(v.len());
                let piece = v[at..end].to_vec();
                for _ in 0..u.int_in_range(1..=4)? {
                    v.splice(at..at, piece.iter().copied());
                }
            }
            5 => {
                let other = u.choose(seeds)?;
                let from = u.choose_index(other.len() + 1)?;
                v.truncate(at);
                v.extend_from_slice(&other[from..]);
            }
            _ => {
                // Interesting bytes where parsers decide.
                let b = *u.choose(b"\r\n{}[]\":,=<>0 9-\\\x00\xff")?;
                v.insert(at, b);
            }
        }
    }
    Ok(v)
}

fn budget_ms() -> u64 {
    std::env::var("IB_FUZZ_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500)
}

#[test]
fn every_target_returns_on_its_corpus_and_mutations() {
    let mut summary = Vec::new();
    for (name, f) in TARGETS {
        let seeds = corpus(name);
        assert!(!seeds.is_empty(), "fuzz/corpus/{name} is empty");
        for s in &seeds {
            f(s);
        }
        let mut execs = 0u64;
        let run = |u: &mut Unstructured| {
            let input = mutate(u, &seeds)?;
            let outcome = std::panic::catch_unwind(|| f(&input));
            if outcome.is_err() {
                panic!(
                    "target {name} panicked on {} bytes: {:?}",
                    input.len(),
                    input
                );
            }
            execs += 1;
            Ok(())
        };
        let test = arbtest::arbtest(run).budget_ms(budget_ms());
        match std::env::var("IB_FUZZ_SEED")
            .ok()
            .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        {
            Some(seed) => test.seed(seed).run(),
            None => test.run(),
        }
        summary.push(format!(
            "{name}: {} seeds, {execs} mutated inputs",
            seeds.len()
        ));
    }
    eprintln!("{}", summary.join("\n"));
}
