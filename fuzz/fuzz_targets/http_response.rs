#![no_main]
//! cargo-fuzz target `http_response`: `ingestbench::fuzzing::http_response` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::http_response(data));
