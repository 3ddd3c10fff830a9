//! ingestbench: a vendor-agnostic SIEM ingestion load engine. The library holds everything;
//! `main.rs` only parses the command line, calls `cli::run` and exits with its code.
//! ARCHITECTURE.md has the map.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

pub mod acct;
pub mod adapter;
pub mod bytes;
pub mod cli;
pub mod clock;
pub mod config;
pub mod engine;
pub mod exit;
pub mod fsio;
pub mod fuzzing;
pub mod generate;
pub mod init;
pub mod net;
pub mod observe;
pub mod pack;
pub mod probe;
pub mod report;
pub mod run;
pub mod scenario;
pub mod serve;
pub mod sink;
pub mod size;
pub mod spawn;
pub mod spill;
pub mod spool;
pub mod stats;
#[cfg(test)]
mod testutil;
pub mod verify;
pub mod yaml;
