#![no_main]
//! cargo-fuzz target `panel_request`: `ingestbench::fuzzing::panel_request` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::panel_request(data));
