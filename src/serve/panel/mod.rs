//! `ingestbench serve`: the control panel. The embedded single-page app (`assets/`: the page,
//! its script and its style) and the JSON API under `/api/` (docs/panel.md), behind
//! `serve::front`: `route` maps requests to routes, `packs` reads the pack catalog and the
//! ATT&CK table, `texts` keeps configs and scenarios in their directories, `reports` reads
//! and compares run reports, `runner` starts one run at a time through the run library and
//! steers it through its `Control`, and `policy` says what a config sent to the panel may do
//! (no program, no file read, no write outside `--reports-dir`, no environment variable,
//! unless `serve --allow-launch` / `--allow-env NAME` say otherwise).
//!
//! The panel has a token unless `--no-token` was asked on loopback: the one `--token-env`
//! names, or one generated at start (printed once, in the address to open: `#token=…`, which
//! the page keeps in the tab's sessionStorage and takes out of the address). Every request
//! passes the web-panel rules of `guard` by its head (Host, token, Fetch Metadata, and for
//! writes Origin and a JSON body) before the front reads a byte of its body; only the page
//! and its two static files need no token, as they hold no data. The front reads a body only
//! on a route that takes one, at most `MAX_BODY_BYTES`, at most `MAX_BODIES_IN_FLIGHT` at
//! once, and answers on `SERVING_THREADS` handler threads, so a slow request (a sample being
//! rendered, a run being planned) holds only its own and a stalled client holds none. The
//! `panel_request` fuzz target drives the same `Service` with a context (`Ctx::detached`)
//! whose runner never launches a run (`serve::fuzz`).

mod packs;
pub mod policy;
mod reports;
pub mod route;
mod runner;
mod texts;

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::json;

use super::files::{Dir, FileError};
use super::front::{self, Limits, Server, Service};
use super::guard::{self, Body, Head, Policy, Refusal, Reply, Response, TokenRule};
use crate::config::secrets::Store;
use crate::pack::Catalog;
use route::{Asset, Kind, NoRoute, Route};

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/panel.js");
const STYLE: &str = include_str!("assets/panel.css");

/// The largest request body taken (a config or scenario with room to spare).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// The largest body a write that takes none (DELETE) may carry; read and ignored.
const IGNORED_BODY_BYTES: usize = 1024;

/// The largest config or scenario file read or written.
const MAX_TEXT_BYTES: u64 = MAX_BODY_BYTES as u64;

/// The largest report read.
const MAX_REPORT_BYTES: u64 = 8 << 20;

/// Threads answering requests.
const SERVING_THREADS: usize = 6;

/// Request bodies received at once; more are told to try again (503).
pub const MAX_BODIES_IN_FLIGHT: usize = 8;

/// What the front takes at once.
const LIMITS: Limits = Limits {
    threads: SERVING_THREADS,
    connections: 128,
    bodies: MAX_BODIES_IN_FLIGHT,
};

/// What the panel is started with.
#[derive(Clone)]
pub struct PanelOptions {
    pub listen: SocketAddr,
    pub allow_remote: bool,
    /// The token every API request must carry; `None`: one is generated at start, unless
    /// `no_token`.
    pub token: Option<String>,
    /// Serve without a token (loopback only, and only when asked: `serve --no-token`).
    pub no_token: bool,
    /// Configs sent to the panel may start programs, signal processes, read files and write
    /// outside `reports_dir` (`serve --allow-launch`; `policy`).
    pub allow_launch: bool,
    /// The environment variables configs sent to the panel may read (`serve --allow-env`).
    pub allow_env: Vec<String>,
    pub configs_dir: Option<PathBuf>,
    pub scenarios_dir: Option<PathBuf>,
    pub reports_dir: Option<PathBuf>,
    pub packs_dir: Option<PathBuf>,
    pub secrets_dir: PathBuf,
}

impl fmt::Debug for PanelOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PanelOptions")
            .field("listen", &self.listen)
            .field("allow_remote", &self.allow_remote)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("no_token", &self.no_token)
            .field("allow_launch", &self.allow_launch)
            .field("allow_env", &self.allow_env)
            .field("configs_dir", &self.configs_dir)
            .field("scenarios_dir", &self.scenarios_dir)
            .field("reports_dir", &self.reports_dir)
            .field("packs_dir", &self.packs_dir)
            .finish()
    }
}

/// Why the panel did not start. No message holds the token.
#[derive(Debug)]
pub enum PanelError {
    NotLoopback(SocketAddr),
    NoToken(SocketAddr),
    BadToken,
    /// `--no-token` and a token both given.
    TokenAndNoToken,
    /// No token could be generated (no random bytes from the system).
    NoRandom,
    /// A directory flag that does not name a directory.
    Dir {
        flag: &'static str,
        reason: String,
    },
    Packs(String),
    Bind {
        addr: SocketAddr,
        source: io::Error,
    },
    Start(String),
}

impl fmt::Display for PanelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PanelError::NotLoopback(a) => write!(
                f,
                "--listen {a} is not a loopback address; the panel can start load against any \
                 address, so it listens on 127.0.0.1 unless --allow-remote is given"
            ),
            PanelError::NoToken(a) => write!(
                f,
                "--listen {a} can be reached from other machines, so it needs a token: \
                 --no-token is for loopback only"
            ),
            PanelError::BadToken => write!(f, "the token must be {}", guard::TOKEN_RULE),
            PanelError::TokenAndNoToken => {
                f.write_str("--no-token and --token-env say opposite things: give one")
            }
            PanelError::NoRandom => f.write_str(
                "no token could be generated (the system gave no random bytes): give one with --token-env",
            ),
            PanelError::Dir { flag, reason } => write!(f, "{flag}: {reason}"),
            PanelError::Packs(m) => f.write_str(m),
            PanelError::Bind { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
            PanelError::Start(m) => write!(f, "cannot start the panel: {m}"),
        }
    }
}

impl std::error::Error for PanelError {}

/// The directories the panel may use, each only when its flag was given.
pub struct Dirs {
    pub configs: Option<Dir>,
    pub scenarios: Option<Dir>,
    pub reports: Option<Dir>,
}

impl Dirs {
    fn texts(&self, kind: Kind) -> Option<&Dir> {
        match kind {
            Kind::Configs => self.configs.as_ref(),
            Kind::Scenarios => self.scenarios.as_ref(),
        }
    }
}

/// What the serving threads share.
pub struct Ctx {
    policy: Policy,
    pub dirs: Dirs,
    pub catalog: Catalog,
    pub packs_dir: Option<PathBuf>,
    pub store: Store,
    pub runner: runner::Runner,
    /// What configs sent to the panel may do.
    pub rules: policy::Rules,
}

impl Ctx {
    fn new(
        opts: &PanelOptions,
        policy: Policy,
        dirs: Dirs,
        catalog: Catalog,
        runner: runner::Runner,
    ) -> Ctx {
        let rules = policy::Rules {
            allow_launch: opts.allow_launch,
            allow_env: opts.allow_env.clone(),
            reports: dirs.reports.as_ref().map(|d| d.root().to_path_buf()),
        };
        Ctx {
            policy,
            dirs,
            catalog,
            packs_dir: opts.packs_dir.clone(),
            store: Store::new(opts.secrets_dir.clone()),
            runner,
            rules,
        }
    }

    /// A context that answers requests with no server and starts no run (the fuzz target's):
    /// the token rules, directories and secret store as `PanelServer::start` takes them from
    /// `opts` (its port the one the Host must name), the packs of `catalog`, and a runner that
    /// prepares a run and stops there.
    pub(in crate::serve) fn detached(
        opts: &PanelOptions,
        catalog: Catalog,
    ) -> Result<Arc<Ctx>, PanelError> {
        let policy = Policy {
            port: opts.listen.port(),
            loopback: opts.listen.ip().is_loopback(),
            token: checked_token(opts)?.map(|t| t.into_bytes()),
        };
        let dirs = open_dirs(opts)?;
        let runner = runner::Runner::never_launching();
        Ok(Arc::new(Ctx::new(opts, policy, dirs, catalog, runner)))
    }
}

/// A running panel; `shutdown` (or drop) stops it, stopping a run in progress first.
pub struct PanelServer {
    addr: SocketAddr,
    server: Option<Server>,
    /// The token generated at start, shown once in `open_url`.
    generated: Option<String>,
    ctx: Arc<Ctx>,
}

impl PanelServer {
    pub fn start(opts: PanelOptions) -> Result<PanelServer, PanelError> {
        let token = checked_token(&opts)?;
        let generated = match (&opts.token, &token) {
            (None, Some(t)) => Some(t.clone()),
            _ => None,
        };
        let dirs = open_dirs(&opts)?;
        let catalog = Catalog::discover(opts.packs_dir.as_deref()).map_err(PanelError::Packs)?;
        let listener = front::bind(opts.listen).map_err(|source| PanelError::Bind {
            addr: opts.listen,
            source,
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| PanelError::Start(e.to_string()))?;
        let policy = Policy {
            port: addr.port(),
            loopback: addr.ip().is_loopback(),
            token: token.map(String::into_bytes),
        };
        let runner = runner::Runner::default();
        let ctx = Arc::new(Ctx::new(&opts, policy, dirs, catalog, runner));
        let handler = Arc::new(Handler(ctx.clone()));
        let server = Server::start("ingestbench-panel", listener, handler, LIMITS)
            .map_err(|e| PanelError::Start(e.to_string()))?;
        Ok(PanelServer {
            addr,
            server: Some(server),
            generated,
            ctx,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address (127.0.0.1 when bound to every interface).
    pub fn url(&self) -> String {
        guard::page_url(self.addr)
    }

    /// The address to open: the page's, with the generated token after `#token=` (a
    /// fragment: the browser never sends it, and the page takes it out of the address).
    /// Without a generated token, the page's address.
    pub fn open_url(&self) -> String {
        match &self.generated {
            Some(t) => format!("{}#token={t}", self.url()),
            None => self.url(),
        }
    }

    /// Whether a token guards the API.
    pub fn has_token(&self) -> bool {
        self.ctx.policy.token.is_some()
    }

    /// Stops a run in progress and waits (bounded) for its report, then stops serving.
    pub fn shutdown(mut self) {
        self.ctx.runner.stop_and_wait(Duration::from_secs(30));
        self.stop_serving();
    }

    fn stop_serving(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown(Duration::from_secs(2));
        }
    }
}

impl Drop for PanelServer {
    fn drop(&mut self) {
        self.stop_serving();
    }
}

/// The token the panel asks for: the one given (checked), none when `--no-token` was asked
/// on loopback, else a new one; and where the panel may listen.
fn checked_token(opts: &PanelOptions) -> Result<Option<String>, PanelError> {
    let addr = opts.listen;
    if opts.no_token && opts.token.is_some() {
        return Err(PanelError::TokenAndNoToken);
    }
    let token = match (&opts.token, opts.no_token) {
        (Some(t), _) => Some(t.clone()),
        (None, true) => None,
        (None, false) => Some(guard::generate_token().ok_or(PanelError::NoRandom)?),
    };
    guard::listen_token(addr, opts.allow_remote, token.as_deref()).map_err(|r| match r {
        TokenRule::NotLoopback => PanelError::NotLoopback(addr),
        TokenRule::NoToken => PanelError::NoToken(addr),
        TokenRule::BadToken => PanelError::BadToken,
    })?;
    Ok(token)
}

fn open_dirs(opts: &PanelOptions) -> Result<Dirs, PanelError> {
    Ok(Dirs {
        configs: open_dir("--configs-dir", &opts.configs_dir, texts::EXTS)?,
        scenarios: open_dir("--scenarios-dir", &opts.scenarios_dir, texts::EXTS)?,
        reports: open_dir("--reports-dir", &opts.reports_dir, reports::EXTS)?,
    })
}

fn open_dir(
    flag: &'static str,
    path: &Option<PathBuf>,
    exts: &'static [&'static str],
) -> Result<Option<Dir>, PanelError> {
    let Some(p) = path else { return Ok(None) };
    let max = if flag == "--reports-dir" {
        MAX_REPORT_BYTES
    } else {
        MAX_TEXT_BYTES
    };
    Dir::open(p, exts, max)
        .map(Some)
        .map_err(|e| PanelError::Dir {
            flag,
            reason: e.to_string(),
        })
}

/// The panel as the front serves it (a run's waiting thread holds the context too).
pub struct Handler(pub Arc<Ctx>);

impl Service for Handler {
    type Route = Route;

    /// Every check on the head; a body only on a route that reads one, at most
    /// `MAX_BODY_BYTES`.
    fn admit(&self, head: &Head) -> Result<(Route, usize), Response> {
        match decide(head, &self.0.policy) {
            Ok(route) => {
                // A write that takes no body (DELETE) may still come with a small one, as
                // fetch sends it: read and ignored. A GET takes none.
                let max = match (route.reads_body(), head.verb) {
                    (true, _) => MAX_BODY_BYTES,
                    (false, guard::Verb::Get) => 0,
                    (false, _) => IGNORED_BODY_BYTES,
                };
                Ok((route, max))
            }
            Err(refusal) => Err(guard::response(refusal.reply(), guard::SELF_CSP)),
        }
    }

    fn answer(&self, route: Route, body: Vec<u8>) -> Response {
        guard::response(answer(&self.0, route, &body), guard::SELF_CSP)
    }
}

/// Host first, then the route, then (for all but the static files) the token, Fetch
/// Metadata, and for writes the origin and content type.
fn decide(head: &Head, policy: &Policy) -> Result<Route, Refusal> {
    guard::check_host(head, policy)?;
    let route = route::route(head.verb, head.path).map_err(|e| match e {
        NoRoute::NotFound => Refusal::new(404, "no such page or API endpoint"),
        NoRoute::BadEncoding => Refusal::new(400, "a path segment or query value is malformed"),
        NoRoute::Method(allow) => Refusal {
            status: 405,
            message: "this method is not taken here",
            allow: Some(allow),
        },
    })?;
    if !route.is_asset() {
        guard::check_request(head, policy)?;
    }
    Ok(route)
}

/// A route's answer, given its body (empty for a route that reads none).
fn answer(ctx: &Arc<Ctx>, route: Route, body: &[u8]) -> Reply {
    match route {
        Route::Asset(Asset::Page) => Reply::html(PAGE),
        Route::Asset(Asset::Script) => Reply::of(200, Body::Script, SCRIPT.into()),
        Route::Asset(Asset::Style) => Reply::of(200, Body::Style, STYLE.into()),
        Route::Info => info(ctx),
        Route::Packs => packs::list(ctx),
        Route::Pack(id) => packs::show(ctx, &id),
        Route::PackSample { id, seed, count } => packs::sample(ctx, &id, seed, count),
        Route::Attack => packs::attack(),
        Route::List(kind) => texts::list(ctx, kind),
        Route::Read(kind, name) => texts::read(ctx, kind, &name),
        Route::Validate(kind) => texts::validate(ctx, kind, body),
        Route::Preview => texts::preview(ctx, body),
        Route::Save(kind, name) => texts::save(ctx, kind, &name, body),
        Route::Delete(kind, name) => texts::delete(ctx, kind, &name),
        Route::Reports => reports::list(ctx),
        Route::Report { name, download } => reports::open(ctx, &name, download),
        Route::ReportCsv(name) => reports::csv(ctx, &name),
        Route::Compare { a, b } => reports::compare(ctx, a.as_deref(), b.as_deref()),
        Route::RunStatus => runner::status(ctx),
        Route::RunStart => runner::start(ctx, body),
        Route::Control(action) => runner::control(ctx, action, body),
    }
}

/// `GET /api/info`.
fn info(ctx: &Ctx) -> Reply {
    let dir = |d: &Option<Dir>| {
        d.as_ref()
            .map(|d| json!({"path": d.root().display().to_string(), "writable": true}))
    };
    Reply::value(
        200,
        &json!({
            "version": env!("CARGO_PKG_VERSION"),
            "attack_version": crate::scenario::attack::VERSION,
            "dirs": {
                "configs": dir(&ctx.dirs.configs),
                "scenarios": dir(&ctx.dirs.scenarios),
                "reports": dir(&ctx.dirs.reports),
            },
            "packs_dir": ctx.packs_dir.as_ref().map(|p| p.display().to_string()),
            "token": ctx.policy.token.is_some(),
            "limits": {"max_body_bytes": MAX_BODY_BYTES},
        }),
    )
}

/// A JSON body as `T` (unknown keys refused), or the 400 that says why not.
pub fn parse<T: DeserializeOwned>(body: &[u8], shape: &str) -> Result<T, Reply> {
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(body)
        .map_err(|e| Reply::error(400, &format!("the body must be {shape}: {e}")))
}

/// A file error as an answer.
pub fn file_reply(e: FileError) -> Reply {
    let status = match e {
        FileError::BadName(_) | FileError::Outside(_) => 400,
        FileError::NotFound(_) => 404,
        FileError::TooLarge { .. } => 413,
        FileError::Io(_) => 500,
    };
    Reply::error(status, &e.to_string())
}

/// The 404 for a directory the panel was not given.
pub fn no_dir(flag: &str, what: &str) -> Reply {
    Reply::error(404, &no_dir_reason(flag, what))
}

pub fn no_dir_reason(flag: &str, what: &str) -> String {
    format!(
        "the panel was started without {flag}, so it keeps no {what} (start it with {flag} DIR)"
    )
}

/// The path shown for a directory.
pub fn shown(p: &Path) -> String {
    p.display().to_string()
}
