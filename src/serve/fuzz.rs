//! The status page's and the panel's request handlers as fuzz targets (`crate::fuzzing` lists
//! them). The input is a request as a client sends it: an HTTP/1.1 head, parsed with httparse
//! into the `guard::Head` tiny_http's requests give, and the bytes after it as the body. It is
//! answered by the real checks, routes and handlers (`status::answer_now`,
//! `panel::answer_now`) and built into the response that would go out (`guard::response`),
//! whose headers must then be sendable and carry the common rules. No socket, no server, no
//! thread: the status page steers a fresh schedule of its own that no run follows, and the
//! panel keeps its files in a directory of its own under the temporary directory (removed
//! after each input) and never launches a run.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::guard::{self, Body, Head, Response, Verb};
use super::{panel, status};
use crate::engine::pacer::Profile;
use crate::engine::schedule::{Control, ScheduleCell};
use crate::pack::Catalog;
use crate::stats::snapshot::{RunInfo, Snapshot, SnapshotCell};

/// The port the Host must name (`Host: 127.0.0.1:8080`, as the seeds say).
pub const PORT: u16 = 8080;

/// The most headers a request is parsed with.
const MAX_HEADERS: usize = 64;

/// `status::answer_now` on the request, its response checked.
pub fn status_request(data: &[u8]) {
    if let Some(r) = status_response(data) {
        check(&r);
    }
}

/// `panel::answer_now` on the request, its response checked.
pub fn panel_request(data: &[u8]) {
    if let Some(r) = panel_response(data) {
        check(&r);
    }
}

/// What the status page would send, or `None` when no handler would see the request.
fn status_response(data: &[u8]) -> Option<Response> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let (head, body) = parse(data, &mut headers)?;
    let ctx = status_ctx();
    let reply = status::answer_now(&ctx, &head, body);
    Some(guard::response(reply, ctx.csp()))
}

/// What the panel would send, or `None` when no handler would see the request (or its
/// directory could not be made).
fn panel_response(data: &[u8]) -> Option<Response> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let (head, body) = parse(data, &mut headers)?;
    let scratch = Scratch::new()?;
    let ctx = panel::Ctx::detached(&scratch.options(), Catalog::embedded()).ok()?;
    let reply = panel::answer_now(&ctx, &head, body);
    Some(guard::response(reply, guard::SELF_CSP))
}

/// The head and the bytes after it, as tiny_http hands a request on; `None` for what it
/// answers itself or never passes on: an incomplete or malformed head, more headers than
/// `MAX_HEADERS`, a header value that is not ASCII.
fn parse<'b>(
    data: &'b [u8],
    headers: &'b mut [httparse::Header<'b>],
) -> Option<(Head<'b>, &'b [u8])> {
    let mut req = httparse::Request::new(headers);
    let httparse::Status::Complete(used) = req.parse(data).ok()? else {
        return None;
    };
    let (method, path) = (req.method?, req.path?);
    let mut pairs = Vec::with_capacity(req.headers.len());
    for h in req.headers.iter() {
        let value = std::str::from_utf8(h.value).ok().filter(|v| v.is_ascii())?;
        pairs.push((h.name, value.trim()));
    }
    let head = Head::from_parts(Verb::named(method), path, pairs);
    Some((head, data.get(used..).unwrap_or_default()))
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

    /// The panel's options: listening on 127.0.0.1:`PORT` without a token, the directories
    /// here, a secret store that does not exist.
    fn options(&self) -> panel::PanelOptions {
        let dir = |d: &str| Some(self.0.join(d));
        panel::PanelOptions {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], PORT)),
            allow_remote: false,
            token: None,
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

    /// Every seed reaches a handler and gets the answer its name promises: the number it
    /// starts with is the status (`000` when no handler sees it).
    fn seeds_answer(target: &str, answer: fn(&[u8]) -> Option<Response>) {
        let seeds = corpus(target);
        assert!(seeds.len() >= 10, "{target}: {} seeds", seeds.len());
        for (name, bytes) in seeds {
            let want: u16 = name[..3].parse().unwrap();
            let got = answer(&bytes);
            if let Some(r) = &got {
                check(r);
            }
            let status = got.map_or(0, |r| r.status);
            assert_eq!(status, want, "{target}/{name}");
        }
    }

    #[test]
    fn status_seeds_reach_the_handlers() {
        seeds_answer("status_request", status_response);
    }

    #[test]
    fn panel_seeds_reach_the_handlers() {
        seeds_answer("panel_request", panel_response);
    }

    fn request(head: &str, body: &str) -> Vec<u8> {
        let head = head.replace('\n', "\r\n");
        format!("{head}Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn status_answers_as_the_server_does() {
        let get = |path: &str, host: &str| {
            let r = request(&format!("GET {path} HTTP/1.1\nHost: {host}\n"), "");
            status_response(&r).unwrap()
        };
        let page = get("/", "127.0.0.1:8080");
        assert_eq!(page.status, 200);
        let csp = page
            .headers
            .iter()
            .find(|(n, _)| *n == "Content-Security-Policy");
        assert!(csp.unwrap().1.contains("'sha256-"));
        assert_eq!(get("/status.json", "localhost:8080").status, 200);
        assert_eq!(get("/", "evil.example:8080").status, 403);
        assert_eq!(get("/", "127.0.0.1:8081").status, 403);
        // A body is read only for a control action: a GET's trailing bytes change nothing.
        let big = "x".repeat(status::MAX_BODY_BYTES + 1);
        let r = request("GET /status.json HTTP/1.1\nHost: 127.0.0.1:8080\n", &big);
        assert_eq!(status_response(&r).unwrap().status, 200);
        let post = |path: &str, body: &str| {
            let head = format!(
                "POST {path} HTTP/1.1\nHost: 127.0.0.1:8080\nContent-Type: application/json\n"
            );
            status_response(&request(&head, body)).unwrap()
        };
        assert_eq!(post("/control/rate", &big).status, 413);
        assert_eq!(post("/control/pause", "{}").status, 200);
        assert_eq!(post("/control/rate", r#"{"eps": 0}"#).status, 400);
        assert_eq!(post("/control/resume", "").status, 409);
        assert_eq!(post("/control/stop", "{}").status, 200);
        // Not passed on by tiny_http: no answer here either.
        assert!(status_response(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n").is_none());
        assert!(status_response(b"GET / HTTP/1.1\r\nX: \xc3\xa9\r\n\r\n").is_none());
    }

    #[test]
    fn the_panel_keeps_to_its_scratch_directory_and_launches_nothing() {
        let scratch = Scratch::new().unwrap();
        let root = scratch.path().to_path_buf();
        let ctx = panel::Ctx::detached(&scratch.options(), Catalog::embedded()).unwrap();
        let send = |method: &str, path: &str, body: &str| {
            let head = format!(
                "{method} {path} HTTP/1.1\nHost: 127.0.0.1:8080\nContent-Type: application/json\n"
            );
            let data = request(&head, body);
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let (head, body) = parse(&data, &mut headers).unwrap();
            panel::answer_now(&ctx, &head, body)
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
        assert_eq!(send("POST", "/api/configs/validate", &big).status, 413);
        drop(ctx);
        drop(scratch);
        assert!(!root.exists());
    }
}
