//! `ingestbench probe --config FILE | --url URL`: reads the flags, asks the probe library to
//! check the target step by step (resolve, connect, TLS, auth, framing), prints the steps as
//! text or JSON (`ingestbench.probe/1`), and returns the exit code the probe chose.

use argh::FromArgs;
use std::path::PathBuf;

use super::run::Output;
use crate::config::schema::{Adapter, AuthScheme};
use crate::config::secrets::{self, Store};
use crate::config::units::parse_duration;
use crate::exit::Exit;
use crate::pack::Catalog;
use crate::probe::{self, Ctx, Options, UrlTarget};
use crate::run::{self, SetupError};

#[derive(FromArgs)]
/// Check a target before a run: resolve, connect, TLS, auth and one small batch, each step
/// timed and described, stopping at the first failure.
#[argh(
    subcommand,
    name = "probe",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench probe --config examples/generic-hec.yaml",
    example = "ingestbench probe --url https://hec.example:8088 --adapter generic-hec --token-env HEC_TOKEN",
    example = "ingestbench probe --url tls://127.0.0.1:6514 --ca-file certs/ca.pem --output json",
    example = "ingestbench probe --config my-collector.yaml --ceiling",
    note = "Exit codes: 0 every step passed (warnings allowed), 2 invalid config or flag, 3 the target refuses the events, 4 authentication failure, 5 the batch was not stored, 6 unreachable, TLS failure or out of time."
)]
pub struct Args {
    /// the config file: adapter, url, TLS, token, pack, framing all come from it
    #[argh(option, short = 'c')]
    config: Option<PathBuf>,
    /// the target url, probed with defaults (instead of --config)
    #[argh(option)]
    url: Option<String>,
    /// with --url: lphc, generic-hec, syslog or elasticsearch (guessed from the url when it
    /// says)
    #[argh(option)]
    adapter: Option<String>,
    /// with --url: the environment variable holding the token
    #[argh(option)]
    token_env: Option<String>,
    /// with --url: the name of the token in the secret store (`ingestbench secret set`)
    #[argh(option)]
    token_secret: Option<String>,
    /// with --url: the auth scheme, x-api-key, bearer, splunk, basic or header (default:
    /// splunk for HEC, x-api-key for lphc)
    #[argh(option)]
    auth: Option<String>,
    /// with --url: the source pack of the events sent (default aws.cloudtrail; linux.syslog
    /// for syslog)
    #[argh(option)]
    source: Option<String>,
    /// with --url: a CA file to trust besides the public roots
    #[argh(option)]
    ca_file: Option<String>,
    /// with --url: the TLS name to send (SNI) and check, when not the url's host
    #[argh(option)]
    server_name: Option<String>,
    /// the whole probe's bound, e.g. 10s (default 30s; 3m with --ceiling)
    #[argh(option)]
    timeout: Option<String>,
    /// end with a short ceiling search (1 s warm-up + 3 s per step, 10 % precision; as many
    /// steps as fit in the time left, at most 10)
    #[argh(switch)]
    ceiling: bool,
    /// output: text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
    /// secret store directory for token_secret (default: the per-user store)
    #[argh(option)]
    secrets_dir: Option<PathBuf>,
}

pub fn run(a: Args) -> Exit {
    match start(&a) {
        Ok(code) => code,
        Err(e) => {
            for m in e.messages() {
                super::err(&format!("error: {m}"));
            }
            e.exit()
        }
    }
}

fn start(a: &Args) -> Result<Exit, SetupError> {
    let default = if a.ceiling { "3m" } else { "30s" };
    let timeout = parse_duration(a.timeout.as_deref().unwrap_or(default))
        .map_err(|e| SetupError::invalid(format!("--timeout: {e}")))?
        .0;
    if timeout.is_zero() {
        return Err(SetupError::invalid("--timeout must be greater than 0"));
    }
    let catalog = Catalog::discover(a.packs.as_deref()).map_err(SetupError::invalid)?;
    let dir = match a.secrets_dir.clone() {
        Some(d) => d,
        None => secrets::default_dir().map_err(SetupError::invalid)?,
    };
    let store = Store::new(dir);
    let loaded = match (&a.config, &a.url) {
        (Some(path), None) => {
            refuse_url_flags(a)?;
            run::load_config(path, &store, &catalog)?
        }
        (None, Some(url)) => {
            let text = probe::setup::url_config(&url_target(a, url)?)?;
            run::load_text(&text, "--url", &store, &catalog)?
        }
        _ => {
            return Err(SetupError::invalid(
                "give one of --config FILE and --url URL",
            ));
        }
    };
    let ctx = Ctx::new(
        loaded.config,
        loaded.warnings,
        Options {
            timeout,
            ceiling: a.ceiling,
        },
        &catalog,
        &store,
    )?;
    let p = probe::run(ctx);
    match a.output {
        Output::Text => super::out(&probe::render_text(&p)),
        Output::Json => super::out(&serde_json::to_string_pretty(&p).unwrap_or_default()),
    }
    Ok(p.exit())
}

fn url_target(a: &Args, url: &str) -> Result<UrlTarget, SetupError> {
    let adapter = match &a.adapter {
        Some(s) => {
            Some(Adapter::parse(s).map_err(|e| SetupError::invalid(format!("--adapter: {e}")))?)
        }
        None => None,
    };
    let auth = match &a.auth {
        Some(s) => {
            Some(AuthScheme::parse(s).map_err(|e| SetupError::invalid(format!("--auth: {e}")))?)
        }
        None => None,
    };
    Ok(UrlTarget {
        url: url.to_string(),
        adapter,
        source: a.source.clone(),
        token_env: a.token_env.clone(),
        token_secret: a.token_secret.clone(),
        auth,
        ca_file: a.ca_file.clone(),
        server_name: a.server_name.clone(),
    })
}

/// With --config the config says everything: the --url flags would be ignored, so they are
/// refused.
fn refuse_url_flags(a: &Args) -> Result<(), SetupError> {
    let given: Vec<&str> = [
        ("--adapter", a.adapter.is_some()),
        ("--token-env", a.token_env.is_some()),
        ("--token-secret", a.token_secret.is_some()),
        ("--auth", a.auth.is_some()),
        ("--source", a.source.is_some()),
        ("--ca-file", a.ca_file.is_some()),
        ("--server-name", a.server_name.is_some()),
    ]
    .into_iter()
    .filter(|(_, g)| *g)
    .map(|(n, _)| n)
    .collect();
    if given.is_empty() {
        Ok(())
    } else {
        Err(SetupError::invalid(format!(
            "{} go with --url; with --config the config's target says it",
            given.join(", ")
        )))
    }
}
