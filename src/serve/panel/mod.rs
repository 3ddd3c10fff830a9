//! `ingestbench serve`: the control panel. A tiny_http server with the embedded single-page
//! app (`assets/`: the page, its script and its style) and the JSON API under `/api/`
//! (docs/panel.md): `route` maps requests to routes, `packs` reads the pack catalog and the
//! ATT&CK table, `texts` keeps configs and scenarios in their directories, `reports` reads
//! and compares run reports, `runner` starts one run at a time through the run library and
//! steers it through its `Control`.
//!
//! Every request passes the web-panel rules of `guard` first (Host, token, Fetch Metadata,
//! and for writes Origin and a JSON body); only the page and its two static files need no
//! token, as they hold no data. A few serving threads share the server, so a slow request (a
//! sample being rendered) holds only its own; a request with a body is answered on a short
//! thread of its own (at most `MAX_BODIES_IN_FLIGHT`), so a client that stalls its body holds
//! no serving thread. (No read timeout on the listener: on Linux it would make `accept` give
//! up after it, and tiny_http stops accepting at the first error.) `answer_now` answers a
//! request given as a head and bytes through the same checks, routes and handlers, with no
//! server and a context (`Ctx::detached`) whose runner never launches a run (the
//! `panel_request` fuzz target, `serve::fuzz`).

mod packs;
mod reports;
pub mod route;
mod runner;
mod texts;

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::json;
use tiny_http::{Request, Server};

use super::files::{Dir, FileError};
use super::guard::{self, Body, BodySource, Head, Policy, Refusal, Reply, TokenRule};
use crate::config::secrets::Store;
use crate::pack::Catalog;
use route::{Asset, Kind, NoRoute, Route};

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/panel.js");
const STYLE: &str = include_str!("assets/panel.css");

/// The largest request body taken (a config or scenario with room to spare).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// The largest config or scenario file read or written.
const MAX_TEXT_BYTES: u64 = MAX_BODY_BYTES as u64;

/// The largest report read.
const MAX_REPORT_BYTES: u64 = 8 << 20;

/// Threads answering requests.
const SERVING_THREADS: usize = 6;

/// How long a write to a client may block.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Requests with a body answered at once; more are told to try again (503).
pub const MAX_BODIES_IN_FLIGHT: usize = 8;

const POLL: Duration = Duration::from_millis(100);

/// What the panel is started with.
#[derive(Clone)]
pub struct PanelOptions {
    pub listen: SocketAddr,
    pub allow_remote: bool,
    pub token: Option<String>,
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
                 address, so it listens on 127.0.0.1 unless --allow-remote is given (with --token-env)"
            ),
            PanelError::NoToken(a) => write!(
                f,
                "--listen {a} can be reached from other machines, so it needs a token: \
                 --token-env VAR names the environment variable holding it"
            ),
            PanelError::BadToken => write!(
                f,
                "the token must be 1 to {} visible ASCII characters without spaces",
                guard::MAX_TOKEN_BYTES
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
    bodies: Arc<std::sync::atomic::AtomicUsize>,
}

impl Ctx {
    fn new(
        opts: &PanelOptions,
        policy: Policy,
        dirs: Dirs,
        catalog: Catalog,
        runner: runner::Runner,
    ) -> Ctx {
        Ctx {
            policy,
            dirs,
            catalog,
            packs_dir: opts.packs_dir.clone(),
            store: Store::new(opts.secrets_dir.clone()),
            runner,
            bodies: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
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
            token: checked_token(opts)?,
        };
        let dirs = open_dirs(opts)?;
        let runner = runner::Runner::never_launching();
        Ok(Arc::new(Ctx::new(opts, policy, dirs, catalog, runner)))
    }
}

/// A running panel; `shutdown` (or drop) stops it, stopping a run in progress first.
pub struct PanelServer {
    addr: SocketAddr,
    server: Arc<Server>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    ctx: Arc<Ctx>,
}

impl PanelServer {
    pub fn start(opts: PanelOptions) -> Result<PanelServer, PanelError> {
        let token = checked_token(&opts)?;
        let dirs = open_dirs(&opts)?;
        let catalog = Catalog::discover(opts.packs_dir.as_deref()).map_err(PanelError::Packs)?;
        let listener = guard::bind(opts.listen, IO_TIMEOUT).map_err(|source| PanelError::Bind {
            addr: opts.listen,
            source,
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| PanelError::Start(e.to_string()))?;
        let server = Arc::new(
            Server::from_listener(listener, None).map_err(|e| PanelError::Start(e.to_string()))?,
        );
        let policy = Policy {
            port: addr.port(),
            loopback: addr.ip().is_loopback(),
            token,
        };
        let runner = runner::Runner::default();
        let ctx = Arc::new(Ctx::new(&opts, policy, dirs, catalog, runner));
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for i in 0..SERVING_THREADS {
            let (server, stop, ctx) = (server.clone(), stop.clone(), ctx.clone());
            let t = thread::Builder::new()
                .name(format!("ingestbench-panel-{i}"))
                .spawn(move || serve(&server, &ctx, &stop))
                .map_err(|e| PanelError::Start(e.to_string()))?;
            threads.push(t);
        }
        Ok(PanelServer {
            addr,
            server,
            stop,
            threads,
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

    /// Stops a run in progress and waits (bounded) for its report, then stops serving.
    pub fn shutdown(mut self) {
        self.ctx.runner.stop_and_wait(Duration::from_secs(30));
        self.stop_serving();
    }

    fn stop_serving(&mut self) {
        let threads = std::mem::take(&mut self.threads);
        guard::stop_serving(&self.server, &self.stop, threads, Duration::from_secs(2));
    }
}

impl Drop for PanelServer {
    fn drop(&mut self) {
        self.stop_serving();
    }
}

fn checked_token(opts: &PanelOptions) -> Result<Option<Vec<u8>>, PanelError> {
    let addr = opts.listen;
    guard::listen_token(addr, opts.allow_remote, opts.token.as_deref()).map_err(|r| match r {
        TokenRule::NotLoopback => PanelError::NotLoopback(addr),
        TokenRule::NoToken => PanelError::NoToken(addr),
        TokenRule::BadToken => PanelError::BadToken,
    })
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

fn serve(server: &Server, ctx: &Arc<Ctx>, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        if let Ok(Some(req)) = server.recv_timeout(POLL) {
            // A panic answers that request with 500 (its drop) and the panel goes on.
            let _ = catch_unwind(AssertUnwindSafe(|| handle(ctx, req)));
        }
    }
}

fn handle(ctx: &Arc<Ctx>, mut req: Request) {
    let reply = match decide(&Head::of(&req), &ctx.policy) {
        Err(refusal) => refusal.reply(),
        Ok(route) if route.reads_body() => return answer_aside(ctx, req, route),
        Ok(route) => answer_read(ctx, route, &mut req),
    };
    guard::send(req, reply, guard::SELF_CSP);
}

/// The answer to a request given as its head and the bytes after it, at once and with no
/// server: what `handle` answers (the same checks, route, body reading and handler), for the
/// fuzz target.
pub(in crate::serve) fn answer_now(ctx: &Arc<Ctx>, head: &Head, mut body: &[u8]) -> Reply {
    match decide(head, &ctx.policy) {
        Err(refusal) => refusal.reply(),
        Ok(route) => answer_read(ctx, route, &mut body),
    }
}

/// Answers a request with a body on a thread of its own, so a body that trickles in holds
/// only that thread.
fn answer_aside(ctx: &Arc<Ctx>, req: Request, route: Route) {
    let Some(slot) = guard::Slot::take(&ctx.bodies, MAX_BODIES_IN_FLIGHT) else {
        let reply = Reply::error(503, "too many requests with a body at once; try again");
        return guard::send(req, reply, guard::SELF_CSP);
    };
    let ctx = ctx.clone();
    // If the thread cannot start, the request is dropped unanswered and tiny_http sends 500.
    let _ = thread::Builder::new()
        .name("ingestbench-panel-body".into())
        .spawn(move || {
            let _slot = slot;
            let mut req = req;
            let reply = catch_unwind(AssertUnwindSafe(|| answer_read(&ctx, route, &mut req)))
                .unwrap_or_else(|_| Reply::error(500, "internal error"));
            guard::send(req, reply, guard::SELF_CSP);
        });
}

/// A route's answer, its body (at most `MAX_BODY_BYTES`) read from `src` first when it takes
/// one.
fn answer_read(ctx: &Arc<Ctx>, route: Route, src: &mut impl BodySource) -> Reply {
    if !route.reads_body() {
        return answer(ctx, route, &[]);
    }
    match guard::read_body(src, MAX_BODY_BYTES) {
        Ok(body) => answer(ctx, route, &body),
        Err(reply) => reply,
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
