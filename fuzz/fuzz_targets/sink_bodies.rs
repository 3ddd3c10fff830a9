#![no_main]
//! cargo-fuzz target `sink_bodies`: `ingestbench::fuzzing::sink_bodies` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::sink_bodies(data));
