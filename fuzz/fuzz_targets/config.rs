#![no_main]
//! cargo-fuzz target `config`: `ingestbench::fuzzing::config` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::config(data));
