#![no_main]
//! cargo-fuzz target `pack`: `ingestbench::fuzzing::pack` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::pack(data));
