//! `ingestbench init`: writes a new commented config. On a terminal it asks `init`'s questions
//! one at a time on stderr (the default in brackets, a refused answer asked again with the
//! reason); `--non-interactive` takes the same answers as flags, with the same defaults and
//! checks. The interview, the rendering and the validation are `crate::init`'s; this file reads
//! flags, talks to the terminal and writes the file (never over one without `--force`).

use argh::FromArgs;
use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use crate::config::secrets::{self, Store};
use crate::exit::Exit;
use crate::init::{self, Asker, Ctx, Given, Prompt, TokenFrom};
use crate::pack::Catalog;

#[derive(FromArgs)]
/// Write a new commented config: asked on a terminal, or from flags with --non-interactive.
#[argh(
    subcommand,
    name = "init",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench init",
    example = "ingestbench init --non-interactive --adapter lphc --url builtin --eps 500 --duration 30s --out smoke.yaml",
    example = "ingestbench init --non-interactive --adapter hec --url https://splunk.lab:8088 --token-env HEC_TOKEN --source identity.okta",
    note = "Answers given as flags are not asked again. The token itself is never asked for or written: only where it lives (--token-env, --token-file or --token-secret). The config is checked with the validator before it is written. Exits 0 when written, 2 on a refused flag, an existing file without --force or no terminal without --non-interactive, 6 when the input ends before the last answer."
)]
pub struct Args {
    /// where to write the config (default ingestbench.yaml; - for stdout)
    #[argh(option, short = 'o', default = "String::from(\"ingestbench.yaml\")")]
    out: String,
    /// replace the file if it exists
    #[argh(switch)]
    force: bool,
    /// ask nothing: take the answers from flags, defaults for the rest
    #[argh(switch)]
    non_interactive: bool,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
    /// secret store directory, for checking --token-secret (default: the per-user store)
    #[argh(option)]
    secrets_dir: Option<PathBuf>,

    /// run name (default: the file's stem)
    #[argh(option)]
    name: Option<String>,
    /// lphc (default), generic-hec (or hec), syslog or elasticsearch
    #[argh(option)]
    adapter: Option<String>,
    /// http(s):// for lphc, hec and elasticsearch, tcp|udp|tls:// for syslog, or builtin
    /// (default; not for elasticsearch)
    #[argh(option)]
    url: Option<String>,
    /// syslog to the built-in sink: tcp (default) or udp
    #[argh(option)]
    syslog_transport: Option<String>,
    /// syslog framing: octet-counting (default) or lf
    #[argh(option)]
    syslog_framing: Option<String>,
    /// syslog header: rfc5424 (default) or rfc3164
    #[argh(option)]
    syslog_format: Option<String>,
    /// https/tls: check the server's certificate, yes (default) or no
    #[argh(option)]
    tls_verify: Option<String>,
    /// https/tls: a CA file to trust besides the public roots
    #[argh(option)]
    tls_ca_file: Option<String>,
    /// https/tls: client certificate for mutual TLS
    #[argh(option)]
    tls_client_cert: Option<String>,
    /// https/tls: the client certificate's key
    #[argh(option)]
    tls_client_key: Option<String>,
    /// auth scheme: x-api-key (lphc default), splunk (hec default), bearer, basic, header, none
    #[argh(option)]
    auth: Option<String>,
    /// username for --auth basic (the token is the password)
    #[argh(option)]
    auth_username: Option<String>,
    /// header name for --auth header
    #[argh(option)]
    auth_header: Option<String>,
    /// environment variable holding the token (default LPHC_TOKEN or HEC_TOKEN)
    #[argh(option)]
    token_env: Option<String>,
    /// file holding the token (mode 0600)
    #[argh(option)]
    token_file: Option<String>,
    /// stored secret holding the token (`ingestbench secret set NAME`)
    #[argh(option)]
    token_secret: Option<String>,
    /// hec: event (default) or raw
    #[argh(option)]
    hec_endpoint: Option<String>,
    /// hec: the index (default: the token's)
    #[argh(option)]
    hec_index: Option<String>,
    /// hec: wait for indexer acknowledgement, yes or no (default)
    #[argh(option)]
    hec_ack: Option<String>,
    /// HTTP adapters: none (default) or gzip
    #[argh(option)]
    compression: Option<String>,
    /// source pack id (`ingestbench sources list`)
    #[argh(option)]
    source: Option<String>,
    /// steady (default), ramp, burst or steps
    #[argh(option)]
    profile: Option<String>,
    /// steady: events per second (default 1000)
    #[argh(option)]
    eps: Option<String>,
    /// ramp: events per second at the start
    #[argh(option)]
    ramp_from: Option<String>,
    /// ramp: events per second at the end
    #[argh(option)]
    ramp_to: Option<String>,
    /// ramp: over how long, e.g. 5m
    #[argh(option)]
    ramp_over: Option<String>,
    /// burst: events per second during a burst
    #[argh(option)]
    burst_high: Option<String>,
    /// burst: events per second between bursts
    #[argh(option)]
    burst_low: Option<String>,
    /// burst: the period, e.g. 10s
    #[argh(option)]
    burst_period: Option<String>,
    /// burst: share of each period bursting, between 0 and 1
    #[argh(option)]
    burst_duty: Option<String>,
    /// steps: EPS@HOLD, comma separated, e.g. 1000@30s,5000@1m
    #[argh(option)]
    steps: Option<String>,
    /// stop after this long, e.g. 5m (default 1m)
    #[argh(option)]
    duration: Option<String>,
    /// stop after this many events (instead of --duration)
    #[argh(option)]
    total: Option<String>,
    /// objective: highest p95 latency in ms
    #[argh(option)]
    slo_max_p95_ms: Option<String>,
    /// objective: highest p99 latency in ms
    #[argh(option)]
    slo_max_p99_ms: Option<String>,
    /// objective: lowest share of events accepted, 0..1
    #[argh(option)]
    slo_min_success_rate: Option<String>,
    /// objective: lowest achieved/target rate, 0..1
    #[argh(option)]
    slo_min_eps_ratio: Option<String>,
}

impl Args {
    /// The answer flags given, as `(flag, value)` in the order of the questions.
    fn given(&self) -> Given {
        let flags = [
            ("--name", &self.name),
            ("--adapter", &self.adapter),
            ("--url", &self.url),
            ("--syslog-transport", &self.syslog_transport),
            ("--syslog-framing", &self.syslog_framing),
            ("--syslog-format", &self.syslog_format),
            ("--tls-verify", &self.tls_verify),
            ("--tls-ca-file", &self.tls_ca_file),
            ("--tls-client-cert", &self.tls_client_cert),
            ("--tls-client-key", &self.tls_client_key),
            ("--auth", &self.auth),
            ("--auth-username", &self.auth_username),
            ("--auth-header", &self.auth_header),
            ("--token-env", &self.token_env),
            ("--token-file", &self.token_file),
            ("--token-secret", &self.token_secret),
            ("--hec-endpoint", &self.hec_endpoint),
            ("--hec-index", &self.hec_index),
            ("--hec-ack", &self.hec_ack),
            ("--compression", &self.compression),
            ("--source", &self.source),
            ("--profile", &self.profile),
            ("--eps", &self.eps),
            ("--ramp-from", &self.ramp_from),
            ("--ramp-to", &self.ramp_to),
            ("--ramp-over", &self.ramp_over),
            ("--burst-high", &self.burst_high),
            ("--burst-low", &self.burst_low),
            ("--burst-period", &self.burst_period),
            ("--burst-duty", &self.burst_duty),
            ("--steps", &self.steps),
            ("--duration", &self.duration),
            ("--total", &self.total),
            ("--slo-max-p95-ms", &self.slo_max_p95_ms),
            ("--slo-max-p99-ms", &self.slo_max_p99_ms),
            ("--slo-min-success-rate", &self.slo_min_success_rate),
            ("--slo-min-eps-ratio", &self.slo_min_eps_ratio),
        ];
        flags
            .into_iter()
            .filter_map(|(f, v)| v.as_ref().map(|v| (f.to_string(), v.clone())))
            .collect()
    }
}

pub fn run(a: Args) -> Exit {
    match init(a) {
        Ok(()) => Exit::Ok,
        Err((exit, msg)) => {
            super::err(&format!("error: {msg}"));
            exit
        }
    }
}

fn init(a: Args) -> Result<(), (Exit, String)> {
    let invalid = |m: String| (Exit::Invalid, m);
    let catalog = Catalog::discover(a.packs.as_deref()).map_err(invalid)?;
    let dir = a
        .secrets_dir
        .clone()
        .map(Ok)
        .unwrap_or_else(secrets::default_dir)
        .map_err(invalid)?;
    let store = Store::new(dir);
    let ctx = Ctx::new(&catalog, &store);
    let out = (a.out != "-").then(|| PathBuf::from(&a.out));
    if let Some(p) = &out {
        writable(p, a.force).map_err(invalid)?;
    }
    if !a.non_interactive && !std::io::stdin().is_terminal() {
        return Err(invalid("init asks its questions on a terminal, and stdin is not one; give the answers as flags with --non-interactive (see `ingestbench init --help`)".into()));
    }
    let given = a.given();
    let name = init::default_name(&a.out);
    let mut term = Terminal::default();
    let asker: Option<&mut dyn Asker> = (!a.non_interactive).then_some(&mut term as _);
    let iv = init::interview(&name, &given, asker, &ctx).map_err(|e| (e.exit(), e.to_string()))?;
    let label = if out.is_some() {
        a.out.as_str()
    } else {
        "FILE"
    };
    let done = init::finish(&iv, label, &ctx).map_err(|e| (e.exit(), e.to_string()))?;
    for w in &done.warnings {
        super::err(&format!("warning: {w}"));
    }
    match &out {
        None => super::out(&done.text),
        Some(p) => {
            if let Err((exit, msg)) = write(p, &done.text, a.force) {
                // The answers are not lost: the config goes to stdout instead.
                if exit == Exit::Aborted {
                    super::out(&done.text);
                }
                return Err((exit, msg));
            }
            next_steps(&a.out, &iv.answers);
        }
    }
    Ok(())
}

/// Refuses a file that exists (without `force`) and a directory, before anything is asked.
fn writable(p: &Path, force: bool) -> Result<(), String> {
    if p.is_dir() {
        return Err(format!("{} is a directory; give a file path", p.display()));
    }
    if p.exists() && !force {
        return Err(format!(
            "{} exists; pass --force to replace it (or --out another file)",
            p.display()
        ));
    }
    Ok(())
}

/// Writes the config (`fsio`: whole or not at all); a file that exists without `force` is
/// refused (2), one that cannot be written fails (6, the config printed instead).
fn write(p: &Path, text: &str, force: bool) -> Result<(), (Exit, String)> {
    if !force && std::fs::symlink_metadata(p).is_ok() {
        return Err((
            Exit::Invalid,
            format!("{} exists; pass --force to replace it", p.display()),
        ));
    }
    let o = crate::fsio::WriteOptions {
        mode: None,
        create_dirs: false,
    };
    crate::fsio::write_atomic(p, text.as_bytes(), o).map_err(|e| {
        (
            Exit::Aborted,
            format!("the config not written: {e} (what was at that path is untouched); it is on stdout instead"),
        )
    })
}

fn next_steps(file: &str, a: &init::Answers) {
    super::err(&format!("wrote {file}"));
    if a.token_applies() {
        let hint = match a.token_from {
            TokenFrom::Env => a
                .token_env
                .as_ref()
                .map(|v| format!("set {v} to the token in the run's environment")),
            TokenFrom::File => a
                .token_file
                .as_ref()
                .map(|f| format!("put the token in {f} (chmod 600)")),
            TokenFrom::Secret => a
                .token_secret
                .as_ref()
                .map(|s| format!("store the token with `ingestbench secret set {s}`")),
        };
        if let Some(h) = hint {
            super::err(&format!("before a run, {h}; the file holds no token"));
        }
    }
    super::err("next:");
    super::err(&format!("  ingestbench validate --config {file}"));
    super::err(&format!("  ingestbench run --config {file}"));
}

/// Questions on stderr, answers from stdin (a terminal).
#[derive(Default)]
struct Terminal {
    /// The question asked last, so a re-ask does not repeat its hint.
    last: String,
}

/// The longest answer read; the rest of a longer line is left for the next question.
const MAX_ANSWER_BYTES: u64 = 4096;

impl Asker for Terminal {
    fn ask(&mut self, p: &Prompt) -> std::io::Result<Option<String>> {
        let mut e = std::io::stderr().lock();
        if self.last != p.text {
            if let Some(h) = &p.hint {
                writeln!(e, "\n  {h}")?;
            }
            self.last = p.text.to_string();
        }
        match p.default {
            Some(d) => write!(e, "{} [{d}]: ", p.text)?,
            None => write!(e, "{}: ", p.text)?,
        }
        e.flush()?;
        let mut line = String::new();
        let n = std::io::stdin()
            .lock()
            .take(MAX_ANSWER_BYTES)
            .read_line(&mut line)?;
        if n == 0 {
            // Ctrl-D: end the prompt's line before the error below it.
            let _ = writeln!(e);
            return Ok(None);
        }
        Ok(Some(line.trim_end_matches(['\r', '\n']).to_string()))
    }

    fn tell(&mut self, text: &str) {
        super::err(&format!("  {text}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_flag_is_a_question_of_init() {
        let flags: Vec<&str> = crate::init::questions::QUESTIONS
            .iter()
            .map(|q| q.flag)
            .collect();
        let mut argv: Vec<String> = Vec::new();
        for f in &flags {
            // Two answers only the library derives (from the token and stop flags).
            if *f != "--token-from" && *f != "--stop-by" {
                argv.extend([f.to_string(), "v".into()]);
            }
        }
        let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
        let args = Args::from_args(&["init"], &refs).expect("every question has its flag");
        let given = args.given();
        assert_eq!(given.len(), flags.len() - 2);
        assert!(given.iter().all(|(f, _)| flags.contains(&f.as_str())));
    }
}
