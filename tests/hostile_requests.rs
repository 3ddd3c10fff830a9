//! Hostile requests against every web surface of the real binary, over raw TCP to 127.0.0.1
//! (issue 33, case 16 and its class): the status page and `/metrics` (`--prometheus`) of a
//! running `ingestbench run`, and the control panel of `ingestbench serve`. Each gets, on
//! fresh connections: declared lengths over any limit (10^12, more than a u64), lying lengths
//! (longer than sent, shorter than sent, two of them, negative), chunked bodies with huge
//! chunk sizes, `Expect: 100-continue` with a huge length, a head over the limit, garbage,
//! a Host that is not the server's, a foreign Origin, cross-site Fetch Metadata, wrong and
//! unknown methods, requests dropped unanswered, 20 pipelined requests; then 200 idle
//! connections holding half a head (slowloris) and a few holding half a body. Through all
//! of it the process stays up and keeps answering, and the run ends when its schedule says,
//! with its normal report and exit code (nothing steered it); the panel still runs a test
//! and stops on SIGTERM with exit 0. Each test is bounded (about 15 s).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{bin, stop_child};

/// The process under attack, stopped by its PID (SIGTERM, then SIGKILL) if a test fails.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        stop_child(&mut self.0);
    }
}

/// A surface under attack: where, and the token its API asks for.
#[derive(Clone)]
struct Surface {
    addr: SocketAddr,
    token: Option<String>,
}

impl Surface {
    fn host(&self) -> String {
        format!("Host: 127.0.0.1:{}\r\n", self.addr.port())
    }

    fn auth(&self) -> String {
        self.token
            .as_ref()
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default()
    }
}

/// Writes `bytes` on a fresh connection and reads what comes back until the server closes
/// or 3 s pass; a write the server cut short is fine (it answered and closed).
fn exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(3)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The statuses of the answers in `raw`, in order (an interim 100 included), each answer
/// walked by its Content-Length.
fn statuses(mut raw: &str) -> Vec<u16> {
    let mut found = Vec::new();
    while let Some(rest) = raw.strip_prefix("HTTP/1.1 ") {
        let Some(status) = rest.get(..3).and_then(|s| s.parse().ok()) else {
            break;
        };
        found.push(status);
        let Some((head, after)) = rest.split_once("\r\n\r\n") else {
            break;
        };
        let len = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        raw = after.get(len..).unwrap_or_default();
    }
    found
}

fn expect(surface: &Surface, what: &str, bytes: &[u8], want: &[u16]) {
    let answer = exchange(surface.addr, bytes);
    assert_eq!(
        statuses(&answer),
        want,
        "{what} on {}: {}",
        surface.addr,
        answer.chars().take(300).collect::<String>()
    );
}

/// The attacks every surface gets, with the statuses each must answer. `get` is a route that
/// takes no body; `post` one that takes a body, and `good_post` a body it refuses without
/// acting (nothing may steer the run) — or, where `post_refused` gives the status, a route
/// that refuses every POST by its head.
fn battery(s: &Surface, get: &str, post: &str, good_post: &str, post_refused: Option<u16>) {
    let by_head = |st: u16| vec![post_refused.unwrap_or(st)];
    let (host, auth) = (s.host(), s.auth());
    let json = "Content-Type: application/json\r\n";
    let head = |method: &str, path: &str, extra: &str| {
        format!("{method} {path} HTTP/1.1\r\n{host}{auth}{extra}")
    };
    let p = |extra: &str| head("POST", post, &format!("{json}{extra}"));
    let cases: Vec<(&str, String, Vec<u16>)> = vec![
        (
            "a declared length of 10^12",
            p("Content-Length: 1000000000000\r\n\r\n"),
            by_head(413),
        ),
        (
            "a declared length over a u64",
            p("Content-Length: 99999999999999999999999\r\n\r\n{}"),
            by_head(413),
        ),
        (
            "a length shorter than sent",
            p(&format!(
                "Content-Length: {}\r\n\r\n{good_post}\u{1}\u{2} junk\r\n\r\n",
                good_post.len()
            )),
            post_refused.map_or(vec![400, 400], |st| vec![st]),
        ),
        (
            "two lengths",
            p("Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
            vec![400],
        ),
        (
            "a negative length",
            p("Content-Length: -1\r\n\r\n{}"),
            vec![400],
        ),
        (
            "a chunked body with a huge chunk",
            p("Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nxx\r\n"),
            vec![411],
        ),
        (
            "100-continue with a huge length",
            p("Expect: 100-continue\r\nContent-Length: 50000000\r\n\r\n"),
            by_head(413),
        ),
        (
            "a head over the limit",
            head(
                "GET",
                get,
                &format!("X-Big: {}\r\n\r\n", "a".repeat(40 * 1024)),
            ),
            vec![431],
        ),
        (
            "a Host that is not this server's",
            format!(
                "POST {post} HTTP/1.1\r\nHost: evil.example:{}\r\n{auth}{json}Content-Length: 1000000000000\r\n\r\n",
                s.addr.port()
            ),
            vec![403],
        ),
        (
            "a foreign Origin",
            p(&format!(
                "Origin: http://evil.example\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{good_post}",
                good_post.len()
            )),
            by_head(403),
        ),
        (
            "cross-site",
            head(
                "GET",
                get,
                "Sec-Fetch-Site: cross-site\r\nConnection: close\r\n\r\n",
            ),
            vec![403],
        ),
        (
            "DELETE",
            head("DELETE", get, "Connection: close\r\n\r\n"),
            vec![405],
        ),
        ("HEAD", head("HEAD", get, "\r\n"), vec![405]),
        ("an unknown method", head("BREW", get, "\r\n"), vec![405]),
        (
            "a GET with a body",
            head("GET", get, "Content-Length: 1000000000000\r\n\r\n"),
            vec![413],
        ),
        (
            "garbage",
            "\u{1}\u{2} nonsense\r\n\r\n".to_string(),
            vec![400],
        ),
        (
            "a non-ASCII header",
            head("GET", get, "X: caf\u{e9}\r\n\r\n"),
            vec![400],
        ),
        (
            "HTTP/1.0",
            format!("GET {get} HTTP/1.0\r\n{host}{auth}\r\n"),
            vec![200],
        ),
    ];
    for (what, bytes, want) in cases {
        let bytes = bytes.chars().map(|c| c as u32 as u8).collect::<Vec<u8>>();
        expect(s, what, &bytes, &want);
    }
    // 20 pipelined requests in one write: 20 answers, in order.
    let mut piped = head("GET", get, "\r\n").repeat(19);
    piped += &head("GET", get, "Connection: close\r\n\r\n");
    expect(s, "20 pipelined requests", piped.as_bytes(), &[200; 20]);
    // Requests dropped unanswered: the huge length and a plain GET, the socket closed at once.
    for bytes in [
        p("Content-Length: 1000000000000\r\n\r\n"),
        head("GET", get, "\r\n"),
    ] {
        let mut c = TcpStream::connect(s.addr).unwrap();
        let _ = c.write_all(bytes.as_bytes());
        drop(c);
    }
}

/// 200 connections holding half a head, and `bodies` holding half of an admitted body:
/// kept open by the caller while it checks the surface still answers.
fn slowloris(s: &Surface, post: &str, bodies: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for i in 0..200 {
        let mut c = TcpStream::connect(s.addr).expect("connect");
        let half = format!("GET / HTTP/1.1\r\n{}X-Slow-{i}: ", s.host());
        c.write_all(half.as_bytes()).unwrap();
        held.push(c);
    }
    for _ in 0..bodies {
        let mut c = TcpStream::connect(s.addr).expect("connect");
        let head = format!(
            "POST {post} HTTP/1.1\r\n{}{}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"eps\"",
            s.host(),
            s.auth()
        );
        c.write_all(head.as_bytes()).unwrap();
        held.push(c);
    }
    held
}

/// A child's stderr lines, as they come.
fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits (at most 20 s) for a line starting with `prefix` and gives the rest of it.
fn line_after(rx: &mpsc::Receiver<String>, prefix: &str, seen: &mut Vec<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(rest) = seen.iter().find_map(|l| l.strip_prefix(prefix)) {
            return rest.to_string();
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => seen.push(l),
            Err(_) => panic!("no {prefix:?} line within 20 s: {seen:?}"),
        }
    }
}

fn addr_in(url: &str) -> SocketAddr {
    url.trim_start_matches("http://")
        .split(['/', '#'])
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn get_ok(s: &Surface, path: &str) {
    let req = format!(
        "GET {path} HTTP/1.1\r\n{}{}Connection: close\r\n\r\n",
        s.host(),
        s.auth()
    );
    let t = Instant::now();
    let answer = exchange(s.addr, req.as_bytes());
    assert_eq!(statuses(&answer), [200], "GET {path}: {answer}");
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "GET {path} took {:?}",
        t.elapsed()
    );
}

#[test]
fn a_running_test_keeps_its_report_through_hostile_requests_to_its_status_page_and_metrics() {
    let child = bin()
        .args([
            "run",
            "--url",
            "builtin",
            "--source",
            "aws.cloudtrail",
            "--eps",
            "200",
            "--duration",
            "10s",
            "--status",
            "127.0.0.1:0",
            "--prometheus",
            "127.0.0.1:0",
            "--output",
            "json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ingestbench run starts");
    let mut proc = Proc(child);
    let child = &mut proc.0;
    let started = Instant::now();
    let rx = lines(child);
    let mut seen = Vec::new();
    let status = Surface {
        addr: addr_in(&line_after(&rx, "status page: ", &mut seen)),
        token: None,
    };
    let metrics = Surface {
        addr: addr_in(&line_after(&rx, "metrics: ", &mut seen)),
        token: None,
    };
    get_ok(&status, "/status.json");
    get_ok(&metrics, "/metrics");

    battery(&status, "/status.json", "/control/rate", "{}", None);
    battery(&metrics, "/metrics", "/metrics", "{}", Some(405));
    let held = [
        slowloris(&status, "/control/rate", 3),
        slowloris(&metrics, "/metrics", 0),
    ];
    for _ in 0..3 {
        get_ok(&status, "/status.json");
        get_ok(&status, "/");
        get_ok(&metrics, "/metrics");
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run died under hostile requests"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the attacks outlasted the run ({:?}): the test proves nothing",
        started.elapsed()
    );

    // The run ends on its schedule, with its report and its exit code, the attackers still
    // connected.
    let deadline = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        assert!(Instant::now() < deadline, "the run did not end: {seen:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(held);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    while let Ok(l) = rx.try_recv() {
        seen.push(l);
    }
    assert_eq!(code, Some(0), "stderr: {seen:#?}");
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["schema"], "ingestbench.report/2");
    assert!(
        report["summary"]["events_accepted"].as_u64().unwrap() > 1000,
        "{report}"
    );
    assert_eq!(
        report["control"],
        serde_json::json!([]),
        "nothing steered the run"
    );
    assert!(
        report["duration_s"].as_f64().unwrap() >= 9.5,
        "{}",
        report["duration_s"]
    );
}

#[test]
fn the_panel_stays_up_and_runs_a_test_through_hostile_requests() {
    let root = tempfile::tempdir().unwrap();
    let reports = root.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let child = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--reports-dir"])
        .arg(&reports)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ingestbench serve starts");
    let mut proc = Proc(child);
    let child = &mut proc.0;
    let rx = lines(child);
    let mut seen = Vec::new();
    let url = line_after(&rx, "control panel: ", &mut seen);
    let token = url.split_once("#token=").map(|(_, t)| t.to_string());
    assert!(token.is_some(), "a token is generated: {url}");
    let panel = Surface {
        addr: addr_in(&url),
        token,
    };
    let anonymous = Surface {
        token: None,
        ..panel.clone()
    };
    get_ok(&panel, "/api/info");
    // Without the token: refused by its head, before a byte of its declared body is read
    // (this killed the process after the 401 before).
    expect(
        &anonymous,
        "a declared length of 10^12 without the token",
        format!(
            "POST /api/run HTTP/1.1\r\n{}Content-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n",
            panel.host()
        )
        .as_bytes(),
        &[401],
    );
    battery(&panel, "/api/info", "/api/configs/validate", "{}", None);
    let held = slowloris(&panel, "/api/configs/validate", 3);
    for _ in 0..3 {
        get_ok(&panel, "/api/info");
        get_ok(&panel, "/");
    }

    // A short run, started and finished through the panel, the attackers still connected.
    let config = "schema_version: \"1.0\"\nname: hostile\ntarget:\n  adapter: lphc\n  url: builtin\nsource:\n  id: aws.cloudtrail\nworkload:\n  profile: steady\n  eps: 100\n  stop: { after: 2s }\n";
    let body = serde_json::json!({ "text": config }).to_string();
    let start = format!(
        "POST /api/run HTTP/1.1\r\n{}{}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        panel.host(),
        panel.auth(),
        body.len()
    );
    expect(&panel, "a run started", start.as_bytes(), &[202]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let last = loop {
        let req = format!(
            "GET /api/run HTTP/1.1\r\n{}{}Connection: close\r\n\r\n",
            panel.host(),
            panel.auth()
        );
        let answer = exchange(panel.addr, req.as_bytes());
        let json: Value = answer
            .split_once("\r\n\r\n")
            .and_then(|(_, b)| serde_json::from_str(b).ok())
            .unwrap_or(Value::Null);
        if json["active"] == false && !json["last"].is_null() {
            break json["last"].clone();
        }
        assert!(Instant::now() < deadline, "the run did not end: {answer}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(last["exit_code"], 0, "{last}");
    let name = last["report"].as_str().unwrap();
    assert!(reports.join(name).is_file(), "{name}");
    drop(held);

    assert!(child.try_wait().unwrap().is_none(), "the panel died");
    stop_child(child);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
