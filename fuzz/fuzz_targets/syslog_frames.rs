#![no_main]
//! cargo-fuzz target `syslog_frames`: `ingestbench::fuzzing::syslog_frames` (see src/fuzzing.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ingestbench::fuzzing::syslog_frames(data));
