//! ingestbench: a vendor-agnostic SIEM ingestion load engine. The library holds everything;
//! `main.rs` only parses the command line, calls `cli::run` and exits with its code.
//! ARCHITECTURE.md has the map.

pub mod acct;
pub mod cli;
pub mod config;
pub mod exit;
pub mod generate;
pub mod pack;
pub mod plan;
pub mod sink;
pub mod yaml;
