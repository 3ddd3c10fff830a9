//! `ingestbench serve`: the control panel (`serve::panel`) until Ctrl-C or SIGTERM, a run in
//! progress stopped first and its report kept. Prints the address to open on stderr, once:
//! with the token generated at start in it (`#token=…`), as Jupyter does, unless a token was
//! given (`--token-env`, never printed) or `--no-token` asked on loopback.

use argh::FromArgs;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::secrets;
use crate::exit::Exit;
use crate::serve::panel::{PanelError, PanelOptions, PanelServer};

#[derive(FromArgs)]
/// Serve the control panel: run load tests, build configs, browse packs and reports, and author
/// attack scenarios from a browser.
#[argh(
    subcommand,
    name = "serve",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench serve",
    example = "ingestbench serve --configs-dir examples --reports-dir reports --scenarios-dir examples/scenarios",
    example = "PANEL_TOKEN=$(openssl rand -hex 16) ingestbench serve --listen 0.0.0.0:8080 --allow-remote --token-env PANEL_TOKEN",
    note = "A token is generated at start and printed once in the address to open, unless --token-env names one (16 or more characters) or --no-token is asked (loopback only). Loopback only unless --allow-remote. Configs sent to the panel start no program, read no file and write only in --reports-dir unless --allow-launch, and read only the environment variables named by --allow-env. Without a directory flag its tab is read-only and says so. The API is documented in docs/panel.md."
)]
pub struct Args {
    /// address to listen on (default 127.0.0.1:8080; port 0: any free port)
    #[argh(option, default = "SocketAddr::from(([127, 0, 0, 1], 8080))")]
    listen: SocketAddr,
    /// directory of config files the panel lists, saves and deletes
    #[argh(option)]
    configs_dir: Option<PathBuf>,
    /// directory of scenario files the panel lists, saves and deletes
    #[argh(option)]
    scenarios_dir: Option<PathBuf>,
    /// directory of JSON run reports the panel lists, and where it writes its runs' reports
    #[argh(option)]
    reports_dir: Option<PathBuf>,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
    /// secret store directory for token_secret (default: the per-user store)
    #[argh(option)]
    secrets_dir: Option<PathBuf>,
    /// let the panel listen beyond loopback
    #[argh(switch)]
    allow_remote: bool,
    /// environment variable holding the token every API request must carry (Authorization: Bearer; 16 to 1024 characters); default: one generated at start
    #[argh(option)]
    token_env: Option<String>,
    /// serve without a token (loopback only): any local process can then use the panel
    #[argh(switch)]
    no_token: bool,
    /// let configs sent to the panel start programs, signal processes, read files and write outside --reports-dir, as configs given to `run` do
    #[argh(switch)]
    allow_launch: bool,
    /// an environment variable configs sent to the panel may read (token_env); repeatable
    #[argh(option)]
    allow_env: Vec<String>,
}

pub fn run(a: Args) -> Exit {
    match start(a) {
        Ok(server) => {
            super::err(&format!("control panel: {}", server.open_url()));
            if !server.has_token() {
                super::err("no token (--no-token): any process on this machine can use the panel");
            }
            crate::serve::until_signal(None);
            super::err("stopping (a run in progress is stopped and its report kept)");
            server.shutdown();
            Exit::Ok
        }
        Err((code, m)) => {
            super::err(&format!("error: {m}"));
            code
        }
    }
}

fn start(a: Args) -> Result<PanelServer, (Exit, String)> {
    let invalid = |m: String| (Exit::Invalid, m);
    let token = match &a.token_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(t) if !t.is_empty() => Some(t),
            _ => {
                return Err(invalid(format!(
                    "--token-env {var}: the environment variable is not set or empty"
                )));
            }
        },
    };
    let secrets_dir = match a.secrets_dir {
        Some(d) => d,
        None => secrets::default_dir().map_err(invalid)?,
    };
    let opts = PanelOptions {
        listen: a.listen,
        allow_remote: a.allow_remote,
        token,
        no_token: a.no_token,
        allow_launch: a.allow_launch,
        allow_env: a.allow_env,
        configs_dir: a.configs_dir,
        scenarios_dir: a.scenarios_dir,
        reports_dir: a.reports_dir,
        packs_dir: a.packs,
        secrets_dir,
    };
    PanelServer::start(opts).map_err(|e| {
        let code = match e {
            PanelError::Bind { .. } | PanelError::Start(_) => Exit::Aborted,
            _ => Exit::Invalid,
        };
        (code, e.to_string())
    })
}
