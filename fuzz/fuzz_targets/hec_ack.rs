#![no_main]
//! cargo-fuzz target `hec_ack`: `ingestbench::fuzzing::hec_ack` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::hec_ack(data));
