//! The status page's and the panel's request handling as fuzz targets (`crate::fuzzing` lists
//! them). The input is what a client sends on one connection: one request or several
//! (pipelined), true or lying about its body's length. It goes through the front's own
//! connection machine (`front::conn::Conn`: the head parsed and judged before any body is
//! read, the body read up to the route's limit, the clock run out at the end of the input)
//! to the real checks, routes and handlers (the `Service` of the status page and of the
//! panel), and every answer written is parsed back. What must hold, whatever the bytes:
//! every answer is well formed and carries the common rules (`check`); a handler never sees
//! more body than its route's limit, and the connection never holds more than a head and
//! that limit; the machine always ends; and the statuses answered do not depend on how the
//! bytes arrive (all at once, or in pieces whose size the first byte picks). No socket, no
//! server, no thread: the status page steers a fresh schedule of its own that no run
//! follows, and the panel keeps its files in a directory of its own under the temporary
//! directory (removed after each input) and never launches a run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::front::conn::{Bodies, Conn};
use super::front::{Service, wire};
use super::guard::{self, Body, Head, Response};
use super::{panel, status};
use crate::engine::pacer::Profile;
use crate::engine::schedule::{Control, ScheduleCell};
use crate::pack::Catalog;
use crate::stats::snapshot::{RunInfo, Snapshot, SnapshotCell};

/// The port the Host must name (`Host: 127.0.0.1:8080`, as the seeds say).
pub const PORT: u16 = 8080;

/// The status page's handling of a connection's bytes, its answers checked.
pub fn status_request(data: &[u8]) {
    let whole = drive(&Watched::new(status_ctx()), data, usize::MAX);
    let pieces = drive(&Watched::new(status_ctx()), data, piece(data));
    assert_eq!(whole, pieces, "the answers depend on how the bytes arrived");
}

/// The panel's handling of a connection's bytes, its answers checked.
pub fn panel_request(data: &[u8]) {
    let run = |piece: usize| {
        let scratch = Scratch::new()?;
        let ctx = panel::Ctx::detached(&scratch.options(), Catalog::embedded()).ok()?;
        Some(drive(&Watched::new(panel::Handler(ctx)), data, piece))
    };
    if let (Some(whole), Some(pieces)) = (run(usize::MAX), run(piece(data))) {
        assert_eq!(whole, pieces, "the answers depend on how the bytes arrived");
    }
}

/// The size of the pieces the bytes arrive in: 1 to 64, from the first byte.
fn piece(data: &[u8]) -> usize {
    data.first().map_or(1, |b| usize::from(*b % 64) + 1)
}

/// A service whose every answer is checked, and whose handler is never given more body than
/// the limit its `admit` gave.
struct Watched<S> {
    inner: S,
    limit: AtomicUsize,
}

impl<S: Service> Watched<S> {
    fn new(inner: S) -> Watched<S> {
        Watched {
            inner,
            limit: AtomicUsize::new(0),
        }
    }
}

impl<S: Service> Service for Watched<S> {
    type Route = S::Route;

    fn admit(&self, head: &Head) -> Result<(S::Route, usize), Response> {
        let judged = self.inner.admit(head);
        match &judged {
            Ok((_, max)) => self.limit.store(*max, Ordering::Relaxed),
            Err(r) => check(r),
        }
        judged
    }

    fn answer(&self, route: S::Route, body: Vec<u8>) -> Response {
        let max = self.limit.load(Ordering::Relaxed);
        assert!(
            body.len() <= max,
            "a body of {} over its limit {max}",
            body.len()
        );
        let r = self.inner.answer(route, body);
        check(&r);
        r
    }
}

/// Feeds `data` to one connection in pieces of `piece` bytes (as much as it takes), answers
/// each request at once, runs the clock out at the end, and gives the final statuses of the
/// answers written, parsed back from the bytes.
fn drive<S: Service>(svc: &S, data: &[u8], piece: usize) -> Vec<u16> {
    let now = Instant::now();
    let bodies = Bodies {
        count: Arc::new(AtomicUsize::new(0)),
        most: 8,
    };
    let most_held = wire::MAX_HEAD_BYTES + 1 + panel::MAX_BODY_BYTES;
    let mut c: Conn<S::Route> = Conn::new(now);
    let (mut at, mut out) = (0, Vec::new());
    for _ in 0..data.len() + 64 {
        let n = c.room().min(piece).min(data.len() - at);
        c.received(data.get(at..at + n).unwrap_or_default());
        at += n;
        assert!(c.buffered() <= most_held, "{} bytes held", c.buffered());
        let ready = c.advance(svc, &bodies, now);
        let answered = ready.is_some();
        if let Some(r) = ready {
            let resp = svc.answer(r.route, r.body);
            c.answered(&resp, now);
        }
        let written = c.pending().len();
        out.extend_from_slice(c.pending());
        c.wrote(written, now);
        if c.closed() || c.lingering() {
            break;
        }
        if n == 0 && !answered && written == 0 {
            // Nothing more comes: the clock runs out.
            c.expire(now + Duration::from_secs(3600));
            out.extend_from_slice(c.pending());
            break;
        }
    }
    assert!(c.closed() || c.lingering() || at == data.len() || c.room() > 0);
    assert_eq!(
        bodies.count.load(Ordering::Relaxed),
        usize::from(c.receiving_body())
    );
    statuses(&out)
}

/// The final statuses of the answers in `out`, each parsed as a client would.
fn statuses(mut out: &[u8]) -> Vec<u16> {
    let mut found = Vec::new();
    while !out.is_empty() {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut r = httparse::Response::new(&mut headers);
        let parsed = r.parse(out);
        assert!(
            matches!(parsed, Ok(httparse::Status::Complete(_))),
            "an answer that does not parse: {:?}",
            String::from_utf8_lossy(out)
        );
        let Ok(httparse::Status::Complete(n)) = parsed else {
            return found;
        };
        let status = r.code.unwrap_or(0);
        let len = r
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("Content-Length"))
            .and_then(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
            .or((status == 100).then_some(0));
        assert!(len.is_some(), "a {status} without Content-Length");
        let len = len.unwrap_or(0);
        assert!(
            out.len() >= n + len,
            "an answer shorter than its Content-Length"
        );
        out = out.get(n + len..).unwrap_or_default();
        if status != 100 {
            found.push(status);
        }
    }
    found
}

/// The status page's context: a loopback policy without a token on `PORT`, an empty
/// snapshot, and a schedule begun a minute ago that no run follows (so every control action
/// is taken and answered at once).
fn status_ctx() -> status::Ctx {
    let policy = guard::Policy {
        port: PORT,
        loopback: true,
        token: None,
    };
    let cell = ScheduleCell::new(Profile::Steady { eps: 1000.0 });
    let begun = Instant::now().checked_sub(Duration::from_secs(60));
    cell.begin(begun.unwrap_or_else(Instant::now));
    let (poke, _) = crossbeam_channel::bounded(1);
    let snapshots = SnapshotCell::new(Snapshot::empty(RunInfo::default()));
    status::Ctx::new(policy, snapshots, Control::new(cell, poke))
}

/// A directory of its own under the temporary directory, with `configs/`, `scenarios/` and
/// `reports/` in it; removed with everything in it when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Option<Scratch> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let pid = std::process::id();
        // A name left by an earlier process with this pid is not ours: take the next one.
        let root = (0..8).find_map(|_| {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let p = base.join(format!("ingestbench-fuzz-panel-{pid}-{n}"));
            std::fs::create_dir(&p).ok().map(|()| p)
        })?;
        let scratch = Scratch(root);
        for d in ["configs", "scenarios", "reports"] {
            std::fs::create_dir(scratch.0.join(d)).ok()?;
        }
        Some(scratch)
    }

    /// The panel's options: listening on 127.0.0.1:`PORT` without a token (as asked), configs
    /// held to the panel's default rules, the directories
    /// here, a secret store that does not exist.
    fn options(&self) -> panel::PanelOptions {
        let dir = |d: &str| Some(self.0.join(d));
        panel::PanelOptions {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], PORT)),
            allow_remote: false,
            token: None,
            no_token: true,
            allow_launch: false,
            allow_env: Vec::new(),
            configs_dir: dir("configs"),
            scenarios_dir: dir("scenarios"),
            reports_dir: dir("reports"),
            packs_dir: None,
            secrets_dir: self.0.join("no-secrets"),
        }
    }

    #[cfg(test)]
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What every answer holds, whatever was asked: a real status, headers a client can be sent
/// (visible ASCII), no CORS header, `no-store`, `nosniff`, unframeable, and a JSON answer
/// that parses. A failure here is a finding.
fn check(r: &Response) {
    assert!((100..=599).contains(&r.status), "status {}", r.status);
    for (name, value) in &r.headers {
        assert!(
            value.bytes().all(|b| b == b' ' || b.is_ascii_graphic()),
            "{name}: {value:?} cannot be sent"
        );
        assert!(
            !name.to_ascii_lowercase().starts_with("access-control-"),
            "a CORS header: {name}"
        );
    }
    for (name, want) in [
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
    ] {
        assert!(
            r.headers.iter().any(|(n, v)| *n == name && v == want),
            "no {name}: {want}"
        );
    }
    let json = Body::Json.content_type();
    if r.headers
        .iter()
        .any(|(n, v)| *n == "Content-Type" && v == json)
    {
        let parsed = serde_json::from_slice::<serde::de::IgnoredAny>(&r.body);
        assert!(parsed.is_ok(), "a JSON answer that does not parse");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/corpus")
            .join(target);
        let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        seeds.sort();
        seeds
    }

    /// The final statuses a connection sending `data` is answered with.
    fn status_answers(data: &[u8]) -> Vec<u16> {
        drive(&Watched::new(status_ctx()), data, usize::MAX)
    }

    fn panel_answers(data: &[u8]) -> Vec<u16> {
        let scratch = Scratch::new().unwrap();
        let ctx = panel::Ctx::detached(&scratch.options(), Catalog::embedded()).unwrap();
        drive(&Watched::new(panel::Handler(ctx)), data, usize::MAX)
    }

    /// Every seed gets the answer its name promises: the number it starts with is the first
    /// status answered (`000` when nothing is). Each is run as the fuzz target runs it too.
    fn seeds_answer(target: &str, answers: fn(&[u8]) -> Vec<u16>, run: fn(&[u8])) {
        let seeds = corpus(target);
        assert!(seeds.len() >= 10, "{target}: {} seeds", seeds.len());
        for (name, bytes) in seeds {
            let want: u16 = name[..3].parse().unwrap();
            let got = answers(&bytes).first().copied().unwrap_or(0);
            assert_eq!(got, want, "{target}/{name}");
            run(&bytes);
        }
    }

    #[test]
    fn status_seeds_reach_the_handlers() {
        seeds_answer("status_request", status_answers, status_request);
    }

    #[test]
    fn panel_seeds_reach_the_handlers() {
        seeds_answer("panel_request", panel_answers, panel_request);
    }

    fn request(head: &str, body: &str) -> Vec<u8> {
        let head = head.replace('\n', "\r\n");
        format!("{head}Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    /// A request answered by the service itself, head parsed by the front's parser and the
    /// rest of `data` as its body: the whole response, for what a status cannot show.
    fn answer<S: Service>(svc: &S, data: &[u8]) -> Response {
        let mut headers = [httparse::EMPTY_HEADER; wire::MAX_HEADERS];
        let wire::Parsed::Done(req) = wire::parse(data, &mut headers) else {
            panic!("not a request")
        };
        match svc.admit(&req.head) {
            Ok((route, _)) => svc.answer(route, data[req.head_len..].to_vec()),
            Err(r) => r,
        }
    }

    #[test]
    fn status_answers_as_the_server_does() {
        let get = |path: &str, host: &str| {
            let r = request(&format!("GET {path} HTTP/1.1\nHost: {host}\n"), "");
            status_answers(&r)
        };
        let page = answer(
            &status_ctx(),
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
        );
        assert_eq!(page.status, 200);
        let csp = page
            .headers
            .iter()
            .find(|(n, _)| *n == "Content-Security-Policy");
        assert!(csp.unwrap().1.contains("'sha256-"));
        assert_eq!(get("/status.json", "localhost:8080"), [200]);
        assert_eq!(get("/", "evil.example:8080"), [403]);
        assert_eq!(get("/", "127.0.0.1:8081"), [403]);
        // A GET takes no body: one declared is refused unread.
        let big = "x".repeat(status::MAX_BODY_BYTES + 1);
        let r = request("GET /status.json HTTP/1.1\nHost: 127.0.0.1:8080\n", &big);
        assert_eq!(status_answers(&r), [413]);
        let post = |path: &str, body: &str| {
            let head = format!(
                "POST {path} HTTP/1.1\nHost: 127.0.0.1:8080\nContent-Type: application/json\n"
            );
            status_answers(&request(&head, body))
        };
        assert_eq!(post("/control/rate", &big), [413]);
        assert_eq!(post("/control/rate", r#"{"eps": 0}"#), [400]);
        // One connection, pipelined: pause, pause again (409), resume, stop.
        let ctl = |path: &str| {
            request(
                &format!(
                    "POST {path} HTTP/1.1\nHost: 127.0.0.1:8080\nContent-Type: application/json\n"
                ),
                "{}",
            )
        };
        let piped = [
            ctl("/control/pause"),
            ctl("/control/pause"),
            ctl("/control/resume"),
            ctl("/control/stop"),
        ]
        .concat();
        assert_eq!(status_answers(&piped), [200, 409, 200, 200]);
        // Not a request yet: nothing until the clock runs out.
        assert_eq!(
            status_answers(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"),
            [408]
        );
        assert_eq!(
            status_answers(b"GET / HTTP/1.1\r\nX: \xc3\xa9\r\n\r\n"),
            [400]
        );
    }

    #[test]
    fn declared_lengths_that_lie_are_refused_before_a_body_is_read() {
        let post = |lengths: &[&str], body: &str| {
            let mut head = String::from(
                "POST /control/rate HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n",
            );
            for l in lengths {
                head += &format!("Content-Length: {l}\r\n");
            }
            status_answers(format!("{head}\r\n{body}").as_bytes())
        };
        let body = r#"{"eps": 5}"#;
        assert_eq!(post(&["10"], body), [200]);
        for huge in [
            "1000000000000",
            "18446744073709551615",
            "99999999999999999999999999",
        ] {
            assert_eq!(post(&[huge], body), [413], "{huge}");
        }
        assert_eq!(post(&["4097"], body), [413]);
        assert_eq!(post(&["10", "10"], body), [400]);
        assert_eq!(post(&["-1"], body), [400]);
        assert_eq!(post(&["0x0a"], body), [400]);
        // Longer than sent: the body never completes, 408 when the clock runs out.
        assert_eq!(post(&["11"], body), [408]);
        // Shorter than sent: the rest is the next request, which never ends (408).
        assert_eq!(post(&["9"], body), [400, 408]);
        let chunked = "POST /control/rate HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n";
        assert_eq!(status_answers(chunked.as_bytes()), [411]);
        let expect = "POST /control/rate HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n";
        assert_eq!(status_answers(expect.as_bytes()), [413]);
        // Refused by its head (the Host) before its length is even looked at.
        let rebound = "POST /control/rate HTTP/1.1\r\nHost: evil.example:8080\r\nContent-Length: 1000000000000\r\n\r\n";
        assert_eq!(status_answers(rebound.as_bytes()), [403]);
    }

    #[test]
    fn the_panel_keeps_to_its_scratch_directory_and_launches_nothing() {
        let scratch = Scratch::new().unwrap();
        let root = scratch.path().to_path_buf();
        let ctx = panel::Ctx::detached(&scratch.options(), Catalog::embedded()).unwrap();
        let handler = panel::Handler(ctx.clone());
        let send = |method: &str, path: &str, body: &str| {
            let head = format!(
                "{method} {path} HTTP/1.1\nHost: 127.0.0.1:8080\nContent-Type: application/json\n"
            );
            answer(&handler, &request(&head, body))
        };
        let config = "schema_version: \"1.0\"\nname: fz\ntarget:\n  adapter: lphc\n  url: \
                      http://127.0.0.1:9/\nsource:\n  id: aws.cloudtrail\nworkload:\n  \
                      profile: steady\n  eps: 10\n  stop: { after: 1s }\n";
        let text = serde_json::json!({ "text": config }).to_string();
        let saved = send("PUT", "/api/configs/fz.yaml", &text);
        assert_eq!(
            saved.status,
            200,
            "{}",
            String::from_utf8_lossy(&saved.body)
        );
        assert!(root.join("configs/fz.yaml").is_file());
        let by_name = send("POST", "/api/run", r#"{"config": "fz.yaml"}"#);
        assert_eq!(
            by_name.status,
            200,
            "{}",
            String::from_utf8_lossy(&by_name.body)
        );
        let body: serde_json::Value = serde_json::from_slice(&by_name.body).unwrap();
        assert_eq!(body["launched"], false);
        let status = send("GET", "/api/run", "");
        let body: serde_json::Value = serde_json::from_slice(&status.body).unwrap();
        assert_eq!(body["active"], false);
        assert_eq!(send("POST", "/api/run/stop", "{}").status, 409);
        let out = send("GET", "/api/configs/..%2f..%2fetc%2fpasswd", "");
        assert_eq!(out.status, 400);
        // Over 1 MiB: refused (a seed this long would be cut short by libFuzzer's length cap).
        let big = "x".repeat(panel::MAX_BODY_BYTES + 1);
        let head = "POST /api/configs/validate HTTP/1.1\nHost: 127.0.0.1:8080\nContent-Type: application/json\n";
        assert_eq!(
            drive(
                &Watched::new(panel::Handler(ctx.clone())),
                &request(head, &big),
                usize::MAX
            ),
            [413]
        );
        // A DELETE takes no body, but one as small as fetch sends is read and ignored.
        let del = "DELETE /api/configs/fz.yaml HTTP/1.1\nHost: 127.0.0.1:8080\nContent-Type: application/json\n";
        let watched = Watched::new(panel::Handler(ctx.clone()));
        assert_eq!(drive(&watched, &request(del, "{}"), usize::MAX), [200]);
        assert!(!root.join("configs/fz.yaml").exists());
        assert_eq!(
            drive(&watched, &request(del, &"x".repeat(2000)), usize::MAX),
            [413]
        );
        drop(watched);
        drop(handler);
        drop(ctx);
        drop(scratch);
        assert!(!root.exists());
    }
}
