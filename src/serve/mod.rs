//! Web endpoints served while a run goes on: the live status page (`status`). Everything
//! here only reads `Snapshot`s and steers the run through `Control`; nothing talks to workers.

pub mod status;
