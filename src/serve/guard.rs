//! The web-panel security rules every page this binary serves obeys (the status page now, the
//! control panel next; measurement-and-ops.md §8): the Host header must name this server (DNS
//! rebinding), a token where one is set (bearer, compared in constant time, never printed),
//! no cross-site request (Fetch Metadata), and for writes no other origin and a JSON body (so
//! neither a cross-site form nor a simple request can act); no CORS header is ever sent;
//! every answer is `no-store`, `nosniff`, unframeable, and a page runs under a CSP that allows
//! only its own inline script and style (by hash) and fetches to itself.
//!
//! A request's `Head` is built from its parts (`Head::from_parts`: the front's parser and the
//! fuzz targets alike), and an answer is built (`response`) apart from writing it (the
//! front's `wire::write`), so these rules run the same with and without a socket.

use std::net::SocketAddr;

use base64::Engine;

pub use crate::config::secrets::{
    MAX_WEB_TOKEN_BYTES as MAX_TOKEN_BYTES, MIN_WEB_TOKEN_BYTES as MIN_TOKEN_BYTES,
    WEB_TOKEN_RULE as TOKEN_RULE, web_token_usable as token_is_usable,
};

/// A new random token: 24 bytes from the system's random source, as 48 hex digits; `None`
/// when the system has no random bytes to give.
pub fn generate_token() -> Option<String> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 24];
    ring::rand::SystemRandom::new().fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Why a page may not listen where asked, by the token rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenRule {
    /// Not a loopback address, and remote access was not allowed.
    NotLoopback,
    /// Reachable from other machines, and no token was given.
    NoToken,
    /// The token cannot be sent in an `Authorization` header.
    BadToken,
}

/// The token as bytes, after the rules on where a token is needed and what it may hold: a
/// page listens on loopback unless remote access is allowed, and then only with a token.
pub fn listen_token(
    listen: SocketAddr,
    allow_remote: bool,
    token: Option<&str>,
) -> Result<Option<Vec<u8>>, TokenRule> {
    let remote = !listen.ip().is_loopback();
    if remote && !allow_remote {
        return Err(TokenRule::NotLoopback);
    }
    match token {
        None if remote => Err(TokenRule::NoToken),
        None => Ok(None),
        Some(t) if token_is_usable(t) => Ok(Some(t.as_bytes().to_vec())),
        Some(_) => Err(TokenRule::BadToken),
    }
}

/// A page's address for a person (127.0.0.1 when bound to every interface).
pub fn page_url(addr: SocketAddr) -> String {
    let shown = if addr.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], addr.port()))
    } else {
        addr
    };
    format!("http://{shown}/")
}

/// One of a limited number of places (a request body being received); given back when
/// dropped.
pub struct Slot(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Slot {
    /// A place, if fewer than `most` are taken.
    pub fn take(
        count: &std::sync::Arc<std::sync::atomic::AtomicUsize>,
        most: usize,
    ) -> Option<Slot> {
        use std::sync::atomic::Ordering;
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < most).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(count.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// What the checks need to know about this server.
pub struct Policy {
    pub port: u16,
    pub loopback: bool,
    pub token: Option<Vec<u8>>,
}

/// What an answer holds, which decides its `Content-Type` and its CSP: a page runs under the
/// page's policy, anything else under one that loads nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    Html,
    Json,
    Script,
    Style,
    Csv,
    Text,
    /// Prometheus's text exposition format 0.0.4.
    Exposition,
}

impl Body {
    pub fn content_type(self) -> &'static str {
        match self {
            Body::Html => "text/html; charset=utf-8",
            Body::Json => "application/json",
            Body::Script => "text/javascript; charset=utf-8",
            Body::Style => "text/css; charset=utf-8",
            Body::Csv => "text/csv; charset=utf-8",
            Body::Text => "text/plain; charset=utf-8",
            // Semicolons: Prometheus 3 refuses `version=0.0.4, charset`.
            Body::Exposition => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// An answer before the common headers are added.
pub struct Reply {
    pub status: u16,
    pub body_kind: Body,
    pub body: Vec<u8>,
    pub extra: Vec<(&'static str, String)>,
}

impl Reply {
    pub fn html(page: &str) -> Reply {
        Reply::of(200, Body::Html, page.as_bytes().to_vec())
    }

    pub fn json(status: u16, body: Vec<u8>) -> Reply {
        Reply::of(status, Body::Json, body)
    }

    pub fn of(status: u16, body_kind: Body, body: Vec<u8>) -> Reply {
        Reply {
            status,
            body_kind,
            body,
            extra: Vec::new(),
        }
    }

    /// A JSON value as the body.
    pub fn value(status: u16, v: &serde_json::Value) -> Reply {
        Reply::json(status, v.to_string().into_bytes())
    }

    pub fn error(status: u16, message: &str) -> Reply {
        Reply::value(status, &serde_json::json!({ "error": message }))
    }

    /// Asks the browser to save the body as `file_name` (a name `files::Dir` took, so it needs
    /// no quoting beyond the quotes).
    pub fn attachment(mut self, file_name: &str) -> Reply {
        self.extra.push((
            "Content-Disposition",
            format!("attachment; filename=\"{file_name}\""),
        ));
        self
    }
}

/// The policy for everything but the page: it loads nothing and cannot be framed.
const JSON_CSP: &str =
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// An answer as it goes out: status, every header, body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// The answer with the headers every answer carries (never a CORS header): what `send`
/// writes, built without a request.
pub fn response(reply: Reply, page_csp: &str) -> Response {
    let csp = if reply.body_kind == Body::Html {
        page_csp
    } else {
        JSON_CSP
    };
    let common = [
        ("Content-Type", reply.body_kind.content_type()),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", csp),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
    ];
    let mut headers: Vec<(&'static str, String)> = common
        .into_iter()
        .map(|(n, v)| (n, v.to_string()))
        .collect();
    headers.extend(reply.extra);
    Response {
        status: reply.status,
        headers,
        body: reply.body,
    }
}

/// The policy of a page whose script and style are files of this server (the panel).
pub const SELF_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src data: blob:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The page's policy: its own inline script and style by hash, fetches to itself only.
pub fn page_csp(html: &str) -> String {
    let scripts = hashes(inline_blocks(html, "script"));
    let styles = hashes(inline_blocks(html, "style"));
    format!(
        "default-src 'none'; script-src {scripts}; style-src {styles}; connect-src 'self'; \
         img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

/// The text of every `<tag>…</tag>` element written without attributes.
pub fn inline_blocks<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        found.push(&after[..j]);
        rest = &after[j + close.len()..];
    }
    found
}

/// CSP source expressions for the blocks, or `'none'`.
pub fn hashes(blocks: Vec<&str>) -> String {
    if blocks.is_empty() {
        return "'none'".into();
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    blocks
        .iter()
        .map(|b| {
            let digest = ring::digest::digest(&ring::digest::SHA256, b.as_bytes());
            format!("'sha256-{}'", b64.encode(digest.as_ref()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A request header: absent, given once, or given more than once (refused where it matters).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Field<'a> {
    Absent,
    One(&'a str),
    Many,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verb {
    Get,
    Post,
    Put,
    Delete,
    Other,
}

impl Verb {
    /// The verb of a request line's method (case matters, as in HTTP).
    pub fn named(method: &str) -> Verb {
        match method {
            "GET" => Verb::Get,
            "POST" => Verb::Post,
            "PUT" => Verb::Put,
            "DELETE" => Verb::Delete,
            _ => Verb::Other,
        }
    }

    /// A request that may change something: it must come from this origin, as JSON.
    pub fn writes(self) -> bool {
        matches!(self, Verb::Post | Verb::Put | Verb::Delete)
    }

    pub fn name(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Delete => "DELETE",
            Verb::Other => "other",
        }
    }
}

/// What the checks read from a request.
#[derive(Clone, Copy, Debug)]
pub struct Head<'a> {
    pub verb: Verb,
    pub path: &'a str,
    pub host: Field<'a>,
    pub origin: Field<'a>,
    pub fetch_site: Field<'a>,
    pub content_type: Field<'a>,
    pub authorization: Field<'a>,
}

impl<'a> Head<'a> {
    /// The head of a request given as its verb, its target (path and query) and its headers
    /// as (name, value) pairs; names are matched without regard to case.
    pub fn from_parts(
        verb: Verb,
        path: &'a str,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Head<'a> {
        let mut head = Head {
            verb,
            path,
            host: Field::Absent,
            origin: Field::Absent,
            fetch_site: Field::Absent,
            content_type: Field::Absent,
            authorization: Field::Absent,
        };
        for (name, value) in headers {
            let field = match name {
                n if n.eq_ignore_ascii_case("Host") => &mut head.host,
                n if n.eq_ignore_ascii_case("Origin") => &mut head.origin,
                n if n.eq_ignore_ascii_case("Sec-Fetch-Site") => &mut head.fetch_site,
                n if n.eq_ignore_ascii_case("Content-Type") => &mut head.content_type,
                n if n.eq_ignore_ascii_case("Authorization") => &mut head.authorization,
                _ => continue,
            };
            *field = match field {
                Field::Absent => Field::One(value),
                _ => Field::Many,
            };
        }
        head
    }
}

/// A byte count for a person: `4 KiB`, `1 MiB`, or `N bytes`.
pub fn shown(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n.is_multiple_of(1 << 20) => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n.is_multiple_of(1 << 10) => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// A request turned away before anything was read or done.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Refusal {
    pub status: u16,
    pub message: &'static str,
    pub allow: Option<&'static str>,
}

impl Refusal {
    pub fn new(status: u16, message: &'static str) -> Refusal {
        Refusal {
            status,
            message,
            allow: None,
        }
    }

    pub fn reply(self) -> Reply {
        let mut r = Reply::error(self.status, self.message);
        if let Some(allow) = self.allow {
            r.extra.push(("Allow", allow.to_string()));
        }
        if self.status == 401 {
            r.extra.push((
                "WWW-Authenticate",
                "Bearer realm=\"ingestbench\"".to_string(),
            ));
        }
        r
    }
}

/// Host first: a request that does not name this server is refused before anything else.
pub fn check_host(head: &Head, policy: &Policy) -> Result<(), Refusal> {
    if host_allowed(head.host, policy) {
        Ok(())
    } else {
        Err(Refusal::new(
            403,
            "this server answers only to its own address (Host refused)",
        ))
    }
}

/// The checks for everything but a page itself: the token where one is set, Fetch Metadata,
/// and for a write (POST, PUT, DELETE) the origin and the content type.
pub fn check_request(head: &Head, policy: &Policy) -> Result<(), Refusal> {
    if let Some(token) = &policy.token
        && !token_matches(head.authorization, token)
    {
        return Err(Refusal::new(
            401,
            "a token is needed: Authorization: Bearer <token>",
        ));
    }
    if !fetch_site_allowed(head.fetch_site) {
        return Err(Refusal::new(403, "cross-site requests are refused"));
    }
    if head.verb.writes() {
        if !origin_allowed(head.origin, head.host) {
            return Err(Refusal::new(
                403,
                "requests from another origin are refused",
            ));
        }
        if !is_json(head.content_type) {
            return Err(Refusal::new(
                415,
                "writes must be Content-Type: application/json",
            ));
        }
    }
    Ok(())
}

/// The names this server answers to: on loopback only its loopback names with its port; off
/// loopback any well-formed name with its port (the token is the defence there).
pub fn host_allowed(host: Field, policy: &Policy) -> bool {
    let Field::One(host) = host else { return false };
    let Some((name, port)) = split_host(host) else {
        return false;
    };
    // Browsers leave the default port out.
    if port.unwrap_or(80) != policy.port {
        return false;
    }
    let name = name.to_ascii_lowercase();
    if ["127.0.0.1", "localhost", "[::1]"].contains(&name.as_str()) {
        return true;
    }
    !policy.loopback && is_host_name(&name)
}

/// `name[:port]`, with IPv6 literals in brackets; `None` when malformed.
pub fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')? + 1;
        let rest = &host[end..];
        match rest.strip_prefix(':') {
            Some(p) => (&host[..end], Some(p)),
            None if rest.is_empty() => (&host[..end], None),
            None => return None,
        }
    } else {
        match host.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, None),
        }
    };
    let port = match port {
        Some(p) if is_canonical_port(p) => Some(p.parse::<u16>().ok()?),
        Some(_) => return None,
        None => None,
    };
    (!name.is_empty()).then_some((name, port))
}

/// 1 to 5 digits, no sign, no leading zero.
pub fn is_canonical_port(p: &str) -> bool {
    (1..=5).contains(&p.len())
        && p.bytes().all(|b| b.is_ascii_digit())
        && (p == "0" || !p.starts_with('0'))
}

pub fn is_host_name(name: &str) -> bool {
    let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.';
    let v6 = |b: u8| b.is_ascii_hexdigit() || b == b':' || b == b'.';
    match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        Some(inner) => !inner.is_empty() && inner.bytes().all(v6),
        None => name.len() <= 253 && name.bytes().all(ok),
    }
}

/// No Origin (curl, scripts) passes; one must be exactly `http://` + the Host.
pub fn origin_allowed(origin: Field, host: Field) -> bool {
    match (origin, host) {
        (Field::Absent, _) => true,
        (Field::One(o), Field::One(h)) => o
            .strip_prefix("http://")
            .is_some_and(|rest| rest.eq_ignore_ascii_case(h)),
        _ => false,
    }
}

/// Browsers say where a request comes from; only this origin (or the user, `none`) passes.
pub fn fetch_site_allowed(site: Field) -> bool {
    match site {
        Field::Absent => true,
        Field::One(s) => {
            let s = s.trim();
            s.eq_ignore_ascii_case("same-origin") || s.eq_ignore_ascii_case("none")
        }
        Field::Many => false,
    }
}

/// `application/json`, with or without parameters such as a charset.
pub fn is_json(content_type: Field) -> bool {
    let Field::One(ct) = content_type else {
        return false;
    };
    let media = ct.split_once(';').map_or(ct, |(m, _)| m);
    media.trim().eq_ignore_ascii_case("application/json")
}

pub fn token_matches(authorization: Field, token: &[u8]) -> bool {
    let Field::One(auth) = authorization else {
        return false;
    };
    let Some((scheme, given)) = auth.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && constant_time_eq(given.trim().as_bytes(), token)
}

/// Equality whose time depends only on the expected length, not on where bytes differ.
pub fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    let mut diff = u8::from(given.len() != expected.len());
    for (i, e) in expected.iter().enumerate() {
        diff |= e ^ given.get(i).copied().unwrap_or(0);
    }
    std::hint::black_box(diff) == 0
}

/// A loopback policy without a token, for tests of the pages built on these rules.
#[cfg(test)]
pub fn local(port: u16) -> Policy {
    Policy {
        port,
        loopback: true,
        token: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_allowlist() {
        use Field::*;
        let lo = local(8080);
        let remote = Policy {
            port: 8080,
            loopback: false,
            token: Some(b"t".to_vec()),
        };
        let table: &[(Field, bool, bool)] = &[
            // (Host, on loopback, off loopback)
            (One("127.0.0.1:8080"), true, true),
            (One("localhost:8080"), true, true),
            (One("LocalHost:8080"), true, true),
            (One("[::1]:8080"), true, true),
            (One("127.0.0.1:8081"), false, false),
            (One("127.0.0.1"), false, false),
            (One("evil.example:8080"), false, true),
            (One("localhost.evil.example:8080"), false, true),
            (One("10.1.2.3:8080"), false, true),
            (One("[fe80::1]:8080"), false, true),
            (One("127.0.0.2:8080"), false, true),
            (One("localhost:+8080"), false, false),
            (One("localhost:08080"), false, false),
            (One("localhost:"), false, false),
            (One(":8080"), false, false),
            (One("[::1]x:8080"), false, false),
            (One("ev il:8080"), false, false),
            (One("a/b:8080"), false, false),
            (One(""), false, false),
            (Absent, false, false),
            (Many, false, false),
        ];
        for (host, on_lo, off_lo) in table {
            assert_eq!(host_allowed(*host, &lo), *on_lo, "{host:?} on loopback");
            assert_eq!(
                host_allowed(*host, &remote),
                *off_lo,
                "{host:?} off loopback"
            );
        }
        // Port 80: browsers leave the port out.
        assert!(host_allowed(One("localhost"), &local(80)));
        assert!(host_allowed(One("127.0.0.1:80"), &local(80)));
    }

    #[test]
    fn origin_must_be_exactly_this_server() {
        use Field::*;
        let h = One("127.0.0.1:8080");
        let table: &[(Field, bool)] = &[
            (Absent, true),
            (One("http://127.0.0.1:8080"), true),
            (One("https://127.0.0.1:8080"), false),
            (One("http://127.0.0.1:8081"), false),
            (One("http://localhost:8080"), false),
            (One("http://127.0.0.1:8080.evil.example"), false),
            (One("http://127.0.0.1:8080/"), false),
            (One("null"), false),
            (One(""), false),
            (Many, false),
        ];
        for (origin, want) in table {
            assert_eq!(origin_allowed(*origin, h), *want, "{origin:?}");
        }
        assert!(!origin_allowed(One("http://x:1"), Absent));
    }

    #[test]
    fn fetch_site_and_content_type() {
        use Field::*;
        for (site, want) in [
            (Absent, true),
            (One("same-origin"), true),
            (One("none"), true),
            (One("same-site"), false),
            (One("cross-site"), false),
            (One("Cross-Site"), false),
            (Many, false),
        ] {
            assert_eq!(fetch_site_allowed(site), want, "{site:?}");
        }
        for (ct, want) in [
            (One("application/json"), true),
            (One("Application/JSON; charset=utf-8"), true),
            (One(" application/json ;charset=UTF-8"), true),
            (One("text/plain"), false),
            (One("application/x-www-form-urlencoded"), false),
            (One("multipart/form-data; boundary=x"), false),
            (One("application/jsonp"), false),
            (One("application/json-seq"), false),
            (One(""), false),
            (Absent, false),
            (Many, false),
        ] {
            assert_eq!(is_json(ct), want, "{ct:?}");
        }
    }

    #[test]
    fn heads_from_parts() {
        use Field::*;
        let h = Head::from_parts(
            Verb::named("POST"),
            "/control/stop?x=1",
            [
                ("host", "127.0.0.1:8080"),
                ("CONTENT-TYPE", "application/json"),
                ("Origin", "http://a"),
                ("origin", "http://b"),
                ("X-Other", "ignored"),
            ],
        );
        assert_eq!((h.verb, h.path), (Verb::Post, "/control/stop?x=1"));
        assert_eq!(h.host, One("127.0.0.1:8080"));
        assert_eq!(h.content_type, One("application/json"));
        assert_eq!(h.origin, Many);
        assert_eq!((h.fetch_site, h.authorization), (Absent, Absent));
        for (m, v) in [
            ("GET", Verb::Get),
            ("PUT", Verb::Put),
            ("DELETE", Verb::Delete),
            ("get", Verb::Other),
            ("HEAD", Verb::Other),
            ("", Verb::Other),
        ] {
            assert_eq!(Verb::named(m), v, "{m:?}");
        }
    }

    #[test]
    fn sizes_for_a_person() {
        assert_eq!(shown(4096), "4 KiB");
        assert_eq!(shown(1 << 20), "1 MiB");
        assert_eq!(shown(1000), "1000 bytes");
    }

    #[test]
    fn tokens_are_long_enough_and_generated_ones_are() {
        assert!(!token_is_usable("x"));
        assert!(!token_is_usable("0123456789abcde"));
        assert!(token_is_usable("0123456789abcdef"));
        assert!(!token_is_usable("0123456789abcde f"));
        assert!(!token_is_usable(&"a".repeat(MAX_TOKEN_BYTES + 1)));
        let (a, b) = (generate_token().unwrap(), generate_token().unwrap());
        assert!(token_is_usable(&a) && a.len() == 48 && a != b);
    }

    #[test]
    fn responses_carry_the_common_headers() {
        let page = response(Reply::html("<p>"), "page-policy");
        let get = |r: &Response, name: &str| {
            r.headers
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(page.status, 200);
        assert_eq!(page.body, b"<p>");
        assert_eq!(
            get(&page, "Content-Security-Policy").as_deref(),
            Some("page-policy")
        );
        assert_eq!(get(&page, "Cache-Control").as_deref(), Some("no-store"));
        let refused = response(Refusal::new(401, "token").reply(), "page-policy");
        assert_eq!(refused.status, 401);
        assert_eq!(
            get(&refused, "Content-Security-Policy").as_deref(),
            Some(JSON_CSP)
        );
        assert_eq!(
            get(&refused, "Content-Type").as_deref(),
            Some("application/json")
        );
        assert!(get(&refused, "WWW-Authenticate").is_some());
        let names: Vec<&str> = refused.headers.iter().map(|(n, _)| *n).collect();
        assert!(
            !names.iter().any(|n| n.starts_with("Access-Control")),
            "{names:?}"
        );
    }

    #[test]
    fn token_compare() {
        use Field::*;
        let t = b"s3cret-token";
        for (auth, want) in [
            (One("Bearer s3cret-token"), true),
            (One("bearer s3cret-token"), true),
            (One("Bearer  s3cret-token "), true),
            (One("Bearer s3cret-tokex"), false),
            (One("Bearer s3cret-token2"), false),
            (One("Bearer s3cret-toke"), false),
            (One("Bearer "), false),
            (One("Basic s3cret-token"), false),
            (One("s3cret-token"), false),
            (Absent, false),
            (Many, false),
        ] {
            assert_eq!(token_matches(auth, t), want, "{auth:?}");
        }
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"a\0", b"a"));
        assert!(!constant_time_eq(b"a", b"a\0"));
    }
}
