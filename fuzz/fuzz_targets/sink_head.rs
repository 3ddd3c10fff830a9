#![no_main]
//! cargo-fuzz target `sink_head`: `ingestbench::fuzzing::sink_head` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::sink_head(data));
