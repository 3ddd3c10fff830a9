#![no_main]
//! cargo-fuzz target `sink_chunked`: `ingestbench::fuzzing::sink_chunked` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::sink_chunked(data));
