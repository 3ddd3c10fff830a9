//! `ingestbench version`: the crate version, the git commit it was built from (when built from
//! a checkout) and the target triple.

use argh::FromArgs;

use crate::exit::Exit;

#[derive(FromArgs)]
/// Print the version, the git commit it was built from and the target triple.
#[argh(
    subcommand,
    name = "version",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench version"
)]
pub struct Args {}

/// `ingestbench 0.1.0 (commit 1a2b3c4d5e6f, x86_64-unknown-linux-gnu)`
pub fn line() -> String {
    let commit = env!("INGESTBENCH_GIT_COMMIT");
    let commit = if commit.is_empty() {
        "unknown commit".to_string()
    } else {
        format!("commit {commit}")
    };
    format!(
        "ingestbench {} ({commit}, {})",
        env!("CARGO_PKG_VERSION"),
        env!("INGESTBENCH_TARGET")
    )
}

pub fn run(_: Args) -> Exit {
    super::out(&line());
    Exit::Ok
}
