#![no_main]
//! cargo-fuzz target `scenario`: `ingestbench::fuzzing::scenario` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::scenario(data));
