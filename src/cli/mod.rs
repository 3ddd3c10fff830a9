//! The command line: one file per subcommand (flags with argh, printing), all dispatched from
//! `run`, which returns the process exit code. Usage errors exit 2, `--help` exits 0.

mod r#gen;
mod init;
mod probe;
mod run;
mod scenario;
mod secret;
mod serve;
mod sink;
mod size;
mod sources;
mod spawn;
mod validate;
mod verify;
mod version;

use argh::FromArgs;
use std::io::Write;

use crate::exit::Exit;

#[derive(FromArgs)]
/// ingestbench: SIEM ingestion load engine. Generates realistic security telemetry, pushes it to
/// a collector at a controlled rate and measures throughput, latency and errors honestly.
#[argh(
    example = "ingestbench validate --config examples/steady-smoke.yaml",
    note = "Exit codes: 0 OK, 2 invalid config or usage, 3 SLO breach, 4 auth failure, 5 lost or duplicated events, 6 run aborted."
)]
struct Top {
    #[argh(subcommand)]
    command: Command,
}

#[derive(FromArgs)]
#[argh(subcommand)]
// Built once per process; `init`'s answer flags make it large, and argh cannot box a variant.
#[allow(clippy::large_enum_variant)]
enum Command {
    Run(run::Args),
    Probe(probe::Args),
    Validate(validate::Args),
    Init(init::Args),
    Gen(r#gen::Args),
    Scenario(scenario::Args),
    Sources(sources::Args),
    Sink(sink::Args),
    Serve(serve::Args),
    Size(size::Args),
    Spawn(spawn::Args),
    Secret(secret::Args),
    Verify(verify::Args),
    Version(version::Args),
}

/// Runs the command line `args` (program name first) and returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let name = args
        .first()
        .map(|s| program_name(s))
        .unwrap_or("ingestbench");
    let rest: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    let top = match Top::from_args(&[name], &rest) {
        Ok(t) => t,
        Err(early) => {
            return match early.status {
                Ok(()) => {
                    out(&early.output);
                    Exit::Ok.code()
                }
                Err(()) => {
                    err(&format!(
                        "{}\nRun `{name} --help` for usage.",
                        early.output.trim_end()
                    ));
                    Exit::Invalid.code()
                }
            };
        }
    };
    let code = match top.command {
        Command::Run(a) => run::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Validate(a) => validate::run(a),
        Command::Init(a) => init::run(a),
        Command::Gen(a) => r#gen::run(a),
        Command::Scenario(a) => scenario::run(a),
        Command::Sources(a) => sources::run(a),
        Command::Sink(a) => sink::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Size(a) => size::run(a),
        Command::Spawn(a) => spawn::run(a),
        Command::Secret(a) => secret::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Version(a) => version::run(a),
    };
    code.code()
}

fn program_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Writes a line to stdout; a closed pipe is not an error worth a panic.
pub(crate) fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{}", text.trim_end_matches('\n'));
}

/// Writes a line to stderr.
pub(crate) fn err(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{}", text.trim_end_matches('\n'));
}
