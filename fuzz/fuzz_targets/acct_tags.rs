#![no_main]
//! cargo-fuzz target `acct_tags`: `ingestbench::fuzzing::acct_tags` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::acct_tags(data));
