//! The live status page of a run: a small server (behind `serve::front`) that shows the latest `Snapshot`
//! as a self-contained page (`status.html`, no external assets) and as JSON, and takes the
//! run's `Control` actions (stop, pause, resume, rate) as JSON POSTs. It only reads snapshots
//! and calls `Control`; it never talks to workers, and no GET changes anything.
//!
//! It also owns the web-panel security rules (measurement-and-ops.md §8): it listens on
//! loopback unless remote access is allowed, and then only with a bearer token (compared in
//! constant time, never printed); the Host header must name this server (DNS rebinding); a
//! POST must be `application/json`, from no other origin and not cross-site (so neither a
//! cross-site form nor a simple request can drive the run); no CORS header is ever sent; every
//! answer is `no-store`, `nosniff`, unframeable, and the page runs under a CSP that allows
//! only its own inline script and style (by hash) and fetches to itself.
//!
//! The front judges each request by its head (`decide`: Host, route and method, token, Fetch
//! Metadata, origin and content type) before it reads a byte of its body, takes a body only
//! on a control route and only up to `MAX_BODY_BYTES`, and answers on two handler threads; a
//! client that stalls holds no thread. The `status_request` fuzz target drives the same
//! `Service` through the front's connection machine with no socket (`serve::fuzz`).

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::front::{self, Limits, Server, Service};
use super::guard::{self, Head, Policy, Refusal, Reply, Response, Verb, page_csp};

use crate::engine::schedule::{Control, ControlError, Rate};
use crate::stats::snapshot::SnapshotCell;

/// The page, served as it is: it holds no data and fetches `/status.json` every second.
const PAGE: &str = include_str!("status.html");

pub use guard::MAX_TOKEN_BYTES;

/// The largest POST body taken.
pub const MAX_BODY_BYTES: usize = 4096;

/// POST bodies received at once; more are told to try again (503).
pub const MAX_POSTS_IN_FLIGHT: usize = 4;

/// What the front takes at once.
const LIMITS: Limits = Limits {
    threads: 2,
    connections: 256,
    bodies: MAX_POSTS_IN_FLIGHT,
};

/// How long `shutdown` waits for the serving threads.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// Where and how to serve the page.
#[derive(Clone)]
pub struct StatusOptions {
    pub listen: SocketAddr,
    /// Allow a non-loopback `listen` (then a token is required).
    pub allow_remote: bool,
    /// When set, every request but `GET /` must carry `Authorization: Bearer <token>`.
    pub token: Option<String>,
}

impl fmt::Debug for StatusOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatusOptions")
            .field("listen", &self.listen)
            .field("allow_remote", &self.allow_remote)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Why the status page did not start. No message ever holds the token.
#[derive(Debug)]
pub enum StatusError {
    /// `listen` is not a loopback address and remote access was not allowed.
    NotLoopback { addr: SocketAddr },
    /// `listen` is not a loopback address and no token was given.
    NoToken { addr: SocketAddr },
    /// The token cannot be sent in an `Authorization` header.
    BadToken { addr: SocketAddr },
    /// The address could not be bound.
    Bind { addr: SocketAddr, source: io::Error },
    /// The server or its thread could not be started.
    Start { addr: SocketAddr, reason: String },
}

impl fmt::Display for StatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatusError::NotLoopback { addr } => write!(
                f,
                "status page: {addr} is not a loopback address; the page can steer the run, so it \
                 listens on 127.0.0.1 unless remote access is allowed (with a token)"
            ),
            StatusError::NoToken { addr } => write!(
                f,
                "status page: {addr} can be reached from other machines, so it needs a token \
                 (every request but the page itself must then carry `Authorization: Bearer <token>`)"
            ),
            StatusError::BadToken { addr } => write!(
                f,
                "status page on {addr}: the token must be {}",
                guard::TOKEN_RULE
            ),
            StatusError::Bind { addr, source } => {
                write!(f, "status page: cannot listen on {addr}: {source}")
            }
            StatusError::Start { addr, reason } => {
                write!(f, "status page on {addr}: cannot start: {reason}")
            }
        }
    }
}

impl std::error::Error for StatusError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StatusError::Bind { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A running status page; `shutdown` (or drop) stops it.
pub struct StatusServer {
    addr: SocketAddr,
    server: Option<Server>,
}

impl StatusServer {
    /// Checks the options, binds `opts.listen` (port 0 picks a free port) and starts serving
    /// on a thread of its own.
    pub fn start(
        opts: StatusOptions,
        snapshots: Arc<SnapshotCell>,
        control: Control,
    ) -> Result<StatusServer, StatusError> {
        let token = checked_token(&opts)?;
        let listener = front::bind(opts.listen).map_err(|source| StatusError::Bind {
            addr: opts.listen,
            source,
        })?;
        let addr = listener.local_addr().map_err(|source| StatusError::Bind {
            addr: opts.listen,
            source,
        })?;
        let policy = Policy {
            port: addr.port(),
            loopback: addr.ip().is_loopback(),
            token,
        };
        let ctx = Arc::new(Ctx::new(policy, snapshots, control));
        let server = Server::start("ingestbench-status", listener, ctx, LIMITS).map_err(|e| {
            StatusError::Start {
                addr,
                reason: e.to_string(),
            }
        })?;
        Ok(StatusServer {
            addr,
            server: Some(server),
        })
    }

    /// The address actually bound (the real port when 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address, e.g. `http://127.0.0.1:8080/` (127.0.0.1 when bound to every
    /// interface).
    pub fn url(&self) -> String {
        guard::page_url(self.addr)
    }

    /// Stops serving: unblocks the serving thread and joins it (waiting at most a couple of
    /// seconds), then closes the listener.
    pub fn shutdown(mut self) {
        self.stop_serving();
    }

    fn stop_serving(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown(SHUTDOWN_WAIT);
        }
    }
}

impl Drop for StatusServer {
    fn drop(&mut self) {
        self.stop_serving();
    }
}

/// The token as bytes, after the rules on where a token is needed and what it may hold.
fn checked_token(opts: &StatusOptions) -> Result<Option<Vec<u8>>, StatusError> {
    let addr = opts.listen;
    guard::listen_token(addr, opts.allow_remote, opts.token.as_deref()).map_err(|r| match r {
        guard::TokenRule::NotLoopback => StatusError::NotLoopback { addr },
        guard::TokenRule::NoToken => StatusError::NoToken { addr },
        guard::TokenRule::BadToken => StatusError::BadToken { addr },
    })
}

/// What the serving threads share.
pub(super) struct Ctx {
    policy: Policy,
    snapshots: Arc<SnapshotCell>,
    control: Control,
    page_csp: String,
}

impl Ctx {
    pub(super) fn new(policy: Policy, snapshots: Arc<SnapshotCell>, control: Control) -> Ctx {
        Ctx {
            policy,
            snapshots,
            control,
            page_csp: page_csp(PAGE),
        }
    }
}

impl Service for Ctx {
    type Route = Route;

    /// Every check on the head; a body only on a control route, at most `MAX_BODY_BYTES`.
    fn admit(&self, head: &Head) -> Result<(Route, usize), Response> {
        match decide(head, &self.policy) {
            Ok(route @ Route::Control(_)) => Ok((route, MAX_BODY_BYTES)),
            Ok(route) => Ok((route, 0)),
            Err(refusal) => Err(guard::response(refusal.reply(), &self.page_csp)),
        }
    }

    fn answer(&self, route: Route, body: Vec<u8>) -> Response {
        guard::response(answer(self, route, &body), &self.page_csp)
    }
}

/// A route's answer; a control action is taken on `Control` with its body, which answers at
/// once (nothing waits on the run).
fn answer(ctx: &Ctx, route: Route, body: &[u8]) -> Reply {
    match route {
        Route::Page => Reply::html(PAGE),
        Route::Status => status_reply(ctx),
        Route::Control(action) => act(&ctx.control, action, body),
    }
}

/// The latest snapshot as JSON.
fn status_reply(ctx: &Ctx) -> Reply {
    match serde_json::to_vec(&*ctx.snapshots.latest()) {
        Ok(body) => Reply::json(200, body),
        Err(_) => Reply::error(500, "the snapshot could not be written as JSON"),
    }
}

/// Takes a control action with its JSON body (the rate's, or none) and says how it went:
/// the status page's and the panel's answer alike.
pub(crate) fn act(c: &Control, action: Action, body: &[u8]) -> Reply {
    let outcome = match action {
        Action::Rate => match parse_rate(body) {
            Ok(rate) => c.set_rate(rate),
            Err(m) => return Reply::error(400, &m),
        },
        other => {
            if let Err(m) = parse_no_arguments(body) {
                return Reply::error(400, &m);
            }
            match other {
                Action::Stop => c.stop(),
                Action::Pause => c.pause(),
                _ => c.resume(),
            }
        }
    };
    if outcome.is_ok() {
        c.refresh();
    }
    outcome_reply(outcome)
}

fn outcome_reply(outcome: Result<(), ControlError>) -> Reply {
    match outcome {
        Ok(()) => Reply::json(200, br#"{"ok":true}"#.to_vec()),
        Err(ControlError::Invalid(m)) => Reply::error(400, &m),
        Err(ControlError::Conflict(m)) => Reply::error(409, &m),
        Err(e @ ControlError::Finished) => Reply::error(410, &e.to_string()),
    }
}

/// The run's control actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Stop,
    Pause,
    Resume,
    Rate,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Route {
    Page,
    Status,
    Control(Action),
}

/// Every check, in order: Host, route and method, token, Fetch Metadata, and for POSTs the
/// origin and content type. Only the page itself needs no token.
fn decide(head: &Head, policy: &Policy) -> Result<Route, Refusal> {
    guard::check_host(head, policy)?;
    let route = route(head.verb, head.path)?;
    if route == Route::Page {
        return Ok(route);
    }
    guard::check_request(head, policy)?;
    Ok(route)
}

/// The route of a path (its query, if any, left out) and whether the method fits it.
fn route(verb: Verb, path: &str) -> Result<Route, Refusal> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let (route, wants) = match path {
        "/" => (Route::Page, Verb::Get),
        "/status.json" => (Route::Status, Verb::Get),
        "/control/stop" => (Route::Control(Action::Stop), Verb::Post),
        "/control/pause" => (Route::Control(Action::Pause), Verb::Post),
        "/control/resume" => (Route::Control(Action::Resume), Verb::Post),
        "/control/rate" => (Route::Control(Action::Rate), Verb::Post),
        _ => return Err(Refusal::new(404, "no such page")),
    };
    if verb != wants {
        let (message, allow) = match wants {
            Verb::Post => ("control actions are POSTs", "POST"),
            _ => ("this page is read with GET", "GET"),
        };
        return Err(Refusal {
            status: 405,
            message,
            allow: Some(allow),
        });
    }
    Ok(route)
}

/// A rate body: exactly one of `eps` and `factor`, a JSON number.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RateBody {
    eps: Option<f64>,
    factor: Option<f64>,
}

fn parse_rate(body: &[u8]) -> Result<Rate, String> {
    let b: RateBody = serde_json::from_slice(body)
        .map_err(|e| format!(r#"the body must be {{"eps": N}} or {{"factor": F}}: {e}"#))?;
    match (b.eps, b.factor) {
        (Some(eps), None) => Ok(Rate::Eps(eps)),
        (None, Some(f)) => Ok(Rate::Factor(f)),
        (Some(_), Some(_)) => Err("give eps or factor, not both".into()),
        (None, None) => Err(r#"give a rate: {"eps": N} or {"factor": F}"#.into()),
    }
}

/// Stop, pause and resume take nothing: an empty body or `{}`.
fn parse_no_arguments(body: &[u8]) -> Result<(), String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    match serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(body) {
        Ok(m) if m.is_empty() => Ok(()),
        _ => Err("this action takes no arguments: send {} or nothing".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::guard::{Field, hashes, inline_blocks, local};

    #[test]
    fn rate_bodies() {
        let table: &[(&str, Option<Rate>)] = &[
            (r#"{"eps": 5000}"#, Some(Rate::Eps(5000.0))),
            (r#"{"eps": 12.5}"#, Some(Rate::Eps(12.5))),
            (r#"{"factor": 1.5}"#, Some(Rate::Factor(1.5))),
            // Range is for Control to judge (it answers Invalid: 400).
            (r#"{"eps": -1}"#, Some(Rate::Eps(-1.0))),
            (r#"{"eps": 1, "factor": 2}"#, None),
            (r#"{}"#, None),
            (r#"{"eps": null}"#, None),
            (r#"{"eps": "100"}"#, None),
            (r#"{"eps": 1e999}"#, None),
            (r#"{"rate": 100}"#, None),
            (r#"[100]"#, None),
            ("100", None),
            ("", None),
            ("{\"eps\": 1", None),
            ("\u{0}", None),
        ];
        for (body, want) in table {
            assert_eq!(parse_rate(body.as_bytes()).ok(), *want, "{body:?}");
        }
        for (body, ok) in [
            ("", true),
            (" \n", true),
            ("{}", true),
            (" { } ", true),
            (r#"{"now": true}"#, false),
            ("[]", false),
            ("null", false),
            ("x", false),
        ] {
            assert_eq!(parse_no_arguments(body.as_bytes()).is_ok(), ok, "{body:?}");
        }
    }

    fn head(verb: Verb, path: &str) -> Head<'_> {
        Head {
            verb,
            path,
            host: Field::One("127.0.0.1:8080"),
            origin: Field::Absent,
            fetch_site: Field::Absent,
            content_type: Field::One("application/json"),
            authorization: Field::Absent,
        }
    }

    #[test]
    fn decisions() {
        use Verb::*;
        let lo = local(8080);
        let code = |h: Head, p: &Policy| decide(&h, p).err().map(|r| r.status);
        assert_eq!(decide(&head(Get, "/"), &lo), Ok(Route::Page));
        assert_eq!(decide(&head(Get, "/status.json"), &lo), Ok(Route::Status));
        assert_eq!(
            decide(&head(Post, "/control/rate"), &lo),
            Ok(Route::Control(Action::Rate))
        );
        assert_eq!(code(head(Get, "/control/stop"), &lo), Some(405));
        assert_eq!(code(head(Post, "/status.json"), &lo), Some(405));
        assert_eq!(code(head(Other, "/"), &lo), Some(405));
        assert_eq!(code(head(Get, "/nope"), &lo), Some(404));
        assert_eq!(code(head(Get, "/status.json/"), &lo), Some(404));
        assert_eq!(code(head(Get, "/../status.json"), &lo), Some(404));
        let rebound = Head {
            host: Field::One("evil.example:8080"),
            ..head(Get, "/")
        };
        assert_eq!(code(rebound, &lo), Some(403));
        let cross = Head {
            fetch_site: Field::One("cross-site"),
            ..head(Get, "/status.json")
        };
        assert_eq!(code(cross, &lo), Some(403));
        let form = Head {
            content_type: Field::One("text/plain"),
            ..head(Post, "/control/stop")
        };
        assert_eq!(code(form, &lo), Some(415));
        let foreign = Head {
            origin: Field::One("http://evil.example"),
            ..head(Post, "/control/stop")
        };
        assert_eq!(code(foreign, &lo), Some(403));
        let with_token = Policy {
            token: Some(b"tok".to_vec()),
            ..local(8080)
        };
        assert_eq!(decide(&head(Get, "/"), &with_token), Ok(Route::Page));
        assert_eq!(code(head(Get, "/status.json"), &with_token), Some(401));
        let authed = Head {
            authorization: Field::One("Bearer tok"),
            ..head(Get, "/status.json?x=1")
        };
        assert_eq!(decide(&authed, &with_token), Ok(Route::Status));
    }

    #[test]
    fn options_rules() {
        let opts = |listen: &str, allow_remote: bool, token: Option<&str>| StatusOptions {
            listen: listen.parse().unwrap(),
            allow_remote,
            token: token.map(String::from),
        };
        assert!(matches!(
            checked_token(&opts("127.0.0.1:0", false, None)),
            Ok(None)
        ));
        assert!(matches!(
            checked_token(&opts("[::1]:0", false, Some("0123456789abcdef"))),
            Ok(Some(_))
        ));
        assert!(matches!(
            checked_token(&opts("0.0.0.0:0", false, Some("0123456789abcdef"))),
            Err(StatusError::NotLoopback { .. })
        ));
        assert!(matches!(
            checked_token(&opts("0.0.0.0:0", true, None)),
            Err(StatusError::NoToken { .. })
        ));
        assert!(matches!(
            checked_token(&opts("0.0.0.0:0", true, Some("0123456789abcdef"))),
            Ok(Some(_))
        ));
        for bad in [
            "",
            "x",
            "0123456789abcde",
            "two words and more",
            "tab\there-and-more-bytes",
            "é0123456789abcdef",
        ] {
            let e = checked_token(&opts("127.0.0.1:0", false, Some(bad)));
            assert!(matches!(e, Err(StatusError::BadToken { .. })), "{bad:?}");
        }
        let secret = opts("0.0.0.0:0", true, Some("hunter2-hunter2-hunter2"));
        assert!(!format!("{secret:?}").contains("hunter2"));
    }

    #[test]
    fn the_page_is_self_contained_and_its_csp_hashes_its_own_code() {
        assert_eq!(inline_blocks(PAGE, "script").len(), 1);
        assert_eq!(inline_blocks(PAGE, "style").len(), 1);
        let csp = page_csp(PAGE);
        assert_eq!(csp.matches("'sha256-").count(), 2, "{csp}");
        assert!(!csp.contains("unsafe"), "{csp}");
        for external in ["src=\"http", "href=\"http", "@import", "url(http", "//cdn"] {
            assert!(!PAGE.contains(external), "the page loads {external}");
        }
        assert!(
            !PAGE.contains("style=\""),
            "inline style attributes are blocked by the CSP"
        );
        assert_eq!(
            inline_blocks(
                "<p><script>a</script><script>bc</script><script>x",
                "script"
            ),
            ["a", "bc"]
        );
        assert_eq!(hashes(vec![]), "'none'");
        // Known vector: SHA-256 of "abc".
        assert_eq!(
            hashes(vec!["abc"]),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
    }
}
