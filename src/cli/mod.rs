//! The command line: one file per subcommand (flags with argh, printing), all dispatched from
//! `run`, which returns the process exit code. Usage errors exit 2; `--help`, `-h` and `help`
//! exit 0, and so do `--version`/`-V` before a subcommand.

mod r#gen;
mod http;
mod init;
mod probe;
mod report;
mod run;
mod run_config;
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
    help_triggers("-h", "--help", "help"),
    example = "ingestbench run --url builtin --eps 500 --duration 10s",
    example = "ingestbench validate --config examples/steady-smoke.yaml",
    note = "--version (-V) prints the version. Exit codes: 0 OK, 2 invalid config or usage, 3 SLO breach, 4 auth failure, 5 lost or duplicated events, 6 run aborted."
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
    Http(http::Args),
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
    Report(report::Args),
    Version(version::Args),
}

/// Runs the command line `args` (program name first) and returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let name = args
        .first()
        .map(|s| program_name(s))
        .unwrap_or("ingestbench");
    let mut rest: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    // argh has no version flag: `ingestbench --version` and `-V` are taken here.
    if let [flag] = rest.as_slice()
        && (*flag == "--version" || *flag == "-V")
    {
        out(&version::line());
        return Exit::Ok.code();
    }
    // argh's long names cannot hold a dot: `http --http1.1` is spelled `--http11` for it.
    if rest.first() == Some(&"http") {
        for a in rest.iter_mut().filter(|a| **a == "--http1.1") {
            *a = "--http11";
        }
    }
    let top = match Top::from_args(&[name], &rest) {
        Ok(t) => t,
        Err(early) => {
            return match early.status {
                Ok(()) => {
                    out(&early.output);
                    Exit::Ok.code()
                }
                Err(()) => {
                    match positional_config(&rest, &early.output) {
                        Some(file) => err(&format!(
                            "error: `{name} run` takes its config as an option: {name} run --config {file}\nRun `{name} run --help` for usage."
                        )),
                        None => err(&format!(
                            "{}\nRun `{name} --help` for usage.",
                            early.output.trim_end()
                        )),
                    }
                    Exit::Invalid.code()
                }
            };
        }
    };
    let code = match top.command {
        Command::Run(a) => run::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Http(a) => http::run(a),
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
        Command::Report(a) => report::run(a),
        Command::Version(a) => version::run(a),
    };
    code.code()
}

/// `run FILE`: argh refuses the file as an unrecognized argument; the refused word, when it is
/// `run`'s and no option.
fn positional_config<'a>(rest: &[&'a str], refusal: &str) -> Option<&'a str> {
    let word = refusal
        .lines()
        .next()?
        .strip_prefix("Unrecognized argument: ")?
        .trim()
        .trim_matches('"');
    (rest.first() == Some(&"run") && !word.starts_with('-'))
        .then(|| rest.iter().find(|a| **a == word).copied())
        .flatten()
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
