#![no_main]
//! cargo-fuzz target `status_request`: `ingestbench::fuzzing::status_request` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::status_request(data));
