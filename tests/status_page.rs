//! The status page server (`serve::status`) as a library, with no load engine: a test thread
//! publishes changing snapshots into a `SnapshotCell` every 200 ms and the schedule is a real
//! `ScheduleCell`, so what the page's controls do shows in `cell.marks()`. Checked over plain
//! HTTP on 127.0.0.1 (a raw `TcpStream`, so every header is exactly what the test wrote):
//! `/status.json`, the control endpoints and their answers, every refusal, the token, the
//! start-up rules; and in a real headless Chromium driven by Python's selenium
//! (`support/status_browser.py`): the page shows live figures, its chart moves, its Pause,
//! Resume and rate controls pass the security checks, it says so when the server stops
//! answering, and with a token it asks for one and keeps it out of the URL. Everything stops
//! by itself within about 30 s.

mod support;

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use ingestbench::engine::pacer::Profile;
use ingestbench::engine::schedule::{Control, ScheduleCell};
use ingestbench::serve::status::{StatusError, StatusOptions, StatusServer};
use ingestbench::stats::snapshot::{
    Latency, LatencySummary, Point, RunInfo, RunState, Snapshot, SnapshotCell, Stored, Window,
};
use serde_json::Value;
use support::browser::{Script, number};
use support::raw_http::{Answer, assert_safe_headers, http};

/// How long a feeder publishes at most, whatever the test does.
const FEED_AT_MOST: Duration = Duration::from_secs(40);

/// How long the fake run has been going when a fixture starts.
const PRE_RUN: Duration = Duration::from_secs(300);

const RUN_ID: &str = "r-20260514-7f3a9c";

// ---- the fixture: a server, a schedule and a feeder thread --------------------------------

struct Fixture {
    server: Option<StatusServer>,
    cell: Arc<ScheduleCell>,
    stop: Arc<AtomicBool>,
    feeder: Option<JoinHandle<()>>,
}

impl Fixture {
    fn start(token: Option<&str>) -> Fixture {
        let started = Instant::now()
            .checked_sub(PRE_RUN)
            .unwrap_or_else(Instant::now);
        let cell = ScheduleCell::new(Profile::Steady { eps: 5000.0 });
        cell.begin(started);
        let (poke, _) = crossbeam_channel::bounded(1);
        let control = Control::new(cell.clone(), poke);
        let snapshots = SnapshotCell::new(Snapshot::empty(run_info()));
        let stop = Arc::new(AtomicBool::new(false));
        let feeder = {
            let (snapshots, cell, stop) = (snapshots.clone(), cell.clone(), stop.clone());
            thread::spawn(move || feed(&snapshots, &cell, &stop))
        };
        let opts = StatusOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            allow_remote: false,
            token: token.map(String::from),
        };
        let server = StatusServer::start(opts, snapshots, control).expect("status server starts");
        Fixture {
            server: Some(server),
            cell,
            stop,
            feeder: Some(feeder),
        }
    }

    fn server(&self) -> &StatusServer {
        self.server.as_ref().unwrap()
    }

    fn addr(&self) -> SocketAddr {
        self.server().addr()
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr().port())
    }

    fn actions(&self) -> Vec<&'static str> {
        self.cell.marks().iter().map(|m| m.action).collect()
    }

    fn shutdown_server(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown();
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.shutdown_server();
        self.stop.store(true, Ordering::Release);
        if let Some(f) = self.feeder.take() {
            let _ = f.join();
        }
    }
}

fn run_info() -> RunInfo {
    RunInfo {
        run_id: RUN_ID.into(),
        name: Some("soak: lphc at 5k eps".into()),
        adapter: "lphc".into(),
        url: "builtin".into(),
        address: "127.0.0.1:40123".into(),
        source: "windows-security".into(),
        threads: 2,
        connections: 8,
        duration_s: Some(43_200.0),
        total_events: None,
    }
}

/// Publishes a new snapshot every 200 ms until told to stop (at most `FEED_AT_MOST`): a fake
/// run that follows the real schedule (so a pause or a new rate shows), its counters growing
/// and a history point added for every second that completes.
fn feed(snapshots: &SnapshotCell, cell: &ScheduleCell, stop: &AtomicBool) {
    let deadline = Instant::now() + FEED_AT_MOST;
    let mut run = FakeRun::new(cell);
    while !stop.load(Ordering::Acquire) && Instant::now() < deadline {
        snapshots.publish(Arc::new(run.next(cell)));
        thread::sleep(Duration::from_millis(200));
    }
}

/// The run so far, as the fake remembers it.
struct FakeRun {
    seq: u64,
    at: f64,
    sent: f64,
    history: Vec<Point>,
}

impl FakeRun {
    /// The schedule started `PRE_RUN` ago: that much history is there from the first snapshot.
    fn new(cell: &ScheduleCell) -> FakeRun {
        let at = cell.start().unwrap().elapsed().as_secs_f64();
        let mut run = FakeRun {
            seq: 0,
            at,
            sent: 0.0,
            history: Vec::new(),
        };
        run.complete_seconds(cell, at);
        run.sent = 5000.0 * at * 0.999;
        run
    }

    fn complete_seconds(&mut self, cell: &ScheduleCell, now: f64) {
        let schedule = cell.schedule();
        let next = self.history.last().map_or(0, |p| p.t + 1);
        for t in next..now.floor() as u32 {
            let target = schedule.rate_at(f64::from(t) + 0.5);
            let w = wave(f64::from(t));
            self.history.push(Point {
                t,
                target_eps: target,
                achieved_eps: target * (0.985 + 0.015 * w),
                p99_ms: 18.0 + 6.0 * w,
                service_p99_ms: 11.0 + 3.0 * w,
                errors: u64::from(t % 37 == 0),
            });
        }
        let keep = self.history.len().saturating_sub(600);
        self.history.drain(..keep);
    }

    fn next(&mut self, cell: &ScheduleCell) -> Snapshot {
        let now = cell.start().unwrap().elapsed().as_secs_f64();
        let schedule = cell.schedule();
        let rate = schedule.rate_at(now);
        self.sent += rate * 0.999 * (now - self.at);
        self.at = now;
        self.seq += 1;
        self.complete_seconds(cell, now);
        let last = self.history.last().cloned().unwrap_or_default();
        let sent = self.sent as u64;
        let failed = (now / 10.0) as u64;
        let interval = Window {
            seconds: 1.0,
            target_eps: last.target_eps,
            achieved_eps: last.achieved_eps,
            events_sent: last.achieved_eps as u64,
            events_accepted: last.achieved_eps as u64,
            batches_sent: (last.achieved_eps / 500.0) as u64,
            batches_accepted: (last.achieved_eps / 500.0) as u64,
            latency_ms: Latency {
                intended: summary(10, 4.2, last.p99_ms),
                service: summary(10, 2.9, last.service_p99_ms),
            },
            ..Window::default()
        };
        let cumulative = Window {
            seconds: schedule.active(now),
            target_eps: 5000.0,
            achieved_eps: 4987.3,
            events_sent: sent,
            events_accepted: sent - failed,
            events_failed: failed,
            batches_sent: sent / 500,
            batches_accepted: sent / 500 - failed / 500,
            batches_failed: failed / 500,
            batches_retried: 3,
            bytes_sent: sent * 612,
            latency_ms: Latency {
                intended: summary(sent / 500, 4.0, 21.3),
                service: summary(sent / 500, 2.8, 12.6),
            },
        };
        let mut s = Snapshot::empty(run_info());
        s.seq = self.seq;
        s.state = if cell.stop_requested() {
            RunState::Draining
        } else if schedule.paused_at(now) {
            RunState::Paused
        } else {
            RunState::Running
        };
        s.elapsed_s = now;
        s.remaining_s = Some(43_200.0 - schedule.active(now));
        s.paused_s = now - schedule.active(now);
        s.rate_eps = rate;
        s.events_due = schedule.due(now) as u64;
        s.interval = interval;
        s.cumulative = cumulative;
        s.errors = BTreeMap::from([("timeout".into(), failed), ("status_503".into(), 3)]);
        s.status = BTreeMap::from([("200".into(), sent / 500), ("503".into(), 3)]);
        s.timeouts = failed;
        s.reconnects = 2;
        s.connections_open = 8;
        s.lag_ms_max = 0.8;
        s.lag_ms_max_cumulative = 14.2;
        s.backlog_events = 40;
        s.stored = Some(Stored {
            store: "builtin".into(),
            events_received: sent - failed - 25,
            distinct: sent - failed - 25,
            duplicates: 0,
            lost_events: 25,
            ingest_lag_ms: None,
        });
        s.control = cell.marks();
        s.history = self.history.clone();
        s
    }
}

fn summary(count: u64, p50: f64, p99: f64) -> LatencySummary {
    LatencySummary {
        count,
        mean: p50 * 1.1,
        p50,
        p90: (p50 + p99) / 2.0,
        p99,
        p99_9: p99 * 1.6,
        max: p99 * 2.5,
    }
}

fn wave(t: f64) -> f64 {
    (t / 9.0).sin() * 0.5 + (t / 31.0).sin() * 0.5
}

// ---- a raw HTTP/1.1 client ------------------------------------------------------------------

const JSON: (&str, &str) = ("Content-Type", "application/json");

/// A request the server must refuse: (status, method, path, headers, body).
type Case<'a> = (u16, &'a str, &'a str, &'a [(&'a str, &'a str)], &'a str);

fn get(fx: &Fixture, path: &str) -> Answer {
    http(fx.addr(), "GET", path, &[], "")
}

fn post(fx: &Fixture, path: &str, body: &str) -> Answer {
    http(fx.addr(), "POST", path, &[JSON], body)
}

// ---- plain HTTP -----------------------------------------------------------------------------

#[test]
fn status_json_is_the_latest_snapshot_and_moves() {
    let fx = Fixture::start(None);
    assert_ne!(fx.addr().port(), 0);
    assert_eq!(fx.server().url(), format!("http://{}/", fx.host()));
    thread::sleep(Duration::from_millis(300));
    let a = get(&fx, "/status.json");
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("Content-Type"), Some("application/json"));
    assert_safe_headers(&a);
    let first = a.json();
    assert_eq!(first["schema"], "ingestbench.status/1");
    assert_eq!(first["run"]["run_id"], RUN_ID);
    assert_eq!(first["state"], "running");
    assert!(first["history"].as_array().unwrap().len() >= 299);
    thread::sleep(Duration::from_millis(700));
    let second = get(&fx, "/status.json?t=1").json();
    assert!(second["seq"].as_u64() > first["seq"].as_u64());
    let sent = |v: &Value| v["cumulative"]["events_sent"].as_u64().unwrap();
    assert!(sent(&second) > sent(&first));
    let a = get(&fx, "/");
    assert_eq!(a.status, 200);
    assert_eq!(a.header("Content-Type"), Some("text/html; charset=utf-8"));
    assert_safe_headers(&a);
    let csp = a.header("Content-Security-Policy").unwrap();
    for part in [
        "default-src 'none'",
        "script-src 'sha256-",
        "style-src 'sha256-",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(part), "{part} not in {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    for id in [
        "run_id",
        "state",
        "events_sent",
        "achieved_eps",
        "chart_eps",
        "chart_p99",
    ] {
        assert!(a.body.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    assert!(fx.actions().is_empty(), "a GET changed the run");
}

#[test]
fn control_endpoints_answer_and_mark_only_what_was_taken() {
    let fx = Fixture::start(None);
    let origin = format!("http://{}", fx.host());
    // As a browser on the page sends it.
    let a = http(
        fx.addr(),
        "POST",
        "/control/pause",
        &[JSON, ("Origin", &origin), ("Sec-Fetch-Site", "same-origin")],
        "{}",
    );
    assert_eq!((a.status, a.json()), (200, serde_json::json!({"ok": true})));
    assert_safe_headers(&a);
    let a = post(&fx, "/control/pause", "");
    assert_eq!(a.status, 409, "{}", a.body);
    assert!(a.error().contains("already paused"), "{}", a.body);
    let a = post(&fx, "/control/rate", r#"{"eps": 2500}"#);
    assert_eq!(a.status, 409, "rate while paused: {}", a.body);
    assert_eq!(post(&fx, "/control/resume", "").status, 200);
    assert_eq!(post(&fx, "/control/resume", "").status, 409);
    assert_eq!(post(&fx, "/control/rate", r#"{"eps": 2500}"#).status, 200);
    assert_eq!(post(&fx, "/control/rate", r#"{"factor": 2}"#).status, 200);
    for bad in [
        r#"{"eps": 0}"#,
        r#"{"eps": -5}"#,
        r#"{"factor": 0}"#,
        r#"{"eps": 1e12}"#,
    ] {
        let a = post(&fx, "/control/rate", bad);
        assert_eq!(a.status, 400, "{bad}: {}", a.body);
        assert!(!a.error().is_empty());
    }
    for bad in [
        "",
        "{}",
        "eps=5",
        r#"{"eps": "5"}"#,
        r#"{"eps": 5, "factor": 2}"#,
        r#"{"rate": 5}"#,
        "[5]",
    ] {
        let a = post(&fx, "/control/rate", bad);
        assert_eq!(a.status, 400, "{bad:?}: {}", a.body);
    }
    assert_eq!(post(&fx, "/control/pause", r#"{"now": true}"#).status, 400);
    let big = format!(r#"{{"eps": 5, "pad": "{}"}}"#, "x".repeat(5000));
    assert_eq!(post(&fx, "/control/rate", &big).status, 413);
    assert_eq!(post(&fx, "/control/stop", "").status, 200);
    let a = post(&fx, "/control/stop", "");
    assert_eq!(a.status, 409, "{}", a.body);
    for path in ["/control/pause", "/control/resume"] {
        let a = post(&fx, path, "");
        assert_eq!(a.status, 410, "{path}: {}", a.body);
        assert_eq!(a.error(), "the run has ended");
    }
    assert_eq!(post(&fx, "/control/rate", r#"{"eps": 100}"#).status, 410);

    assert_eq!(fx.actions(), ["pause", "resume", "rate", "rate", "stop"]);
    let marks = fx.cell.marks();
    assert_eq!(marks[2].detail.as_deref(), Some("eps 2500"));
    assert_eq!(marks[2].rate_eps, Some(2500.0));
    assert_eq!(marks[3].detail.as_deref(), Some("factor 2"));
    assert_eq!(marks[3].rate_eps, Some(5000.0));
    // The feeder shows the run draining, with the marks.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let s = get(&fx, "/status.json").json();
        if s["state"] == "draining" && s["control"].as_array().map(Vec::len) == Some(5) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the snapshot never showed the stop: {}",
            s["state"]
        );
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn every_refusal_changes_nothing() {
    let fx = Fixture::start(None);
    let port = fx.addr().port();
    let own = fx.host();
    let evil_host = format!("evil.example:{port}");
    let other_port = format!("localhost:{}", port.wrapping_add(1));
    let own_suffixed = format!("http://{own}.evil.example");
    let own_by_name = format!("http://localhost:{port}");
    let ct = |v| ("Content-Type", v);
    let json = ct("application/json");
    #[rustfmt::skip]
    let cases: &[Case] = &[
        // DNS rebinding: the name in Host is not this server's (empty: no Host at all).
        (403, "GET", "/status.json", &[("Host", &evil_host)], ""),
        (403, "GET", "/", &[("Host", &evil_host)], ""),
        (403, "POST", "/control/pause", &[("Host", &evil_host), json], ""),
        (403, "GET", "/status.json", &[("Host", &other_port)], ""),
        (403, "GET", "/status.json", &[("Host", "127.0.0.1")], ""),
        (403, "GET", "/status.json", &[("Host", "")], ""),
        (403, "GET", "/status.json", &[("Host", &own), ("Host", "evil.example")], ""),
        // Another origin, or one that cannot be trusted.
        (403, "POST", "/control/pause", &[json, ("Origin", "http://evil.example")], ""),
        (403, "POST", "/control/pause", &[json, ("Origin", &own_suffixed)], ""),
        (403, "POST", "/control/pause", &[json, ("Origin", &own_by_name)], ""),
        (403, "POST", "/control/pause", &[json, ("Origin", "null")], ""),
        // Fetch Metadata.
        (403, "POST", "/control/pause", &[json, ("Sec-Fetch-Site", "cross-site")], ""),
        (403, "POST", "/control/stop", &[json, ("Sec-Fetch-Site", "same-site")], ""),
        (403, "GET", "/status.json", &[("Sec-Fetch-Site", "cross-site")], ""),
        // What a cross-site form or simple request can send.
        (415, "POST", "/control/pause", &[ct("text/plain")], "{}"),
        (415, "POST", "/control/stop", &[ct("application/x-www-form-urlencoded")], "a=b"),
        (415, "POST", "/control/stop", &[ct("multipart/form-data; boundary=x")], ""),
        (415, "POST", "/control/stop", &[], ""),
        // Wrong method or path.
        (405, "GET", "/control/stop", &[], ""),
        (405, "GET", "/control/pause", &[], ""),
        (405, "GET", "/control/rate?eps=5", &[], ""),
        (405, "POST", "/status.json", &[json], ""),
        (405, "OPTIONS", "/control/stop", &[("Origin", "http://evil.example")], ""),
        (405, "DELETE", "/", &[], ""),
        (404, "GET", "/nope", &[], ""),
        (404, "GET", "/control/../status.json", &[], ""),
        (404, "POST", "/control/teleport", &[json], "{}"),
    ];
    for (want, method, path, headers, body) in cases {
        let a = http(fx.addr(), method, path, headers, body);
        assert_eq!(a.status, *want, "{method} {path} {headers:?}: {}", a.body);
        assert_safe_headers(&a);
        assert!(!a.error().is_empty(), "{method} {path}: {}", a.body);
        if *want == 405 {
            assert!(a.header("Allow").is_some(), "{method} {path}: no Allow");
        }
    }
    assert!(
        fx.actions().is_empty(),
        "a refused request changed the run: {:?}",
        fx.actions()
    );
}

#[test]
fn a_token_guards_everything_but_the_page() {
    let token = "k9-Tq2vX7pL0sW4nR8yB";
    let fx = Fixture::start(Some(token));
    let page = get(&fx, "/");
    assert_eq!(page.status, 200);
    assert!(!page.body.contains(token));
    let a = get(&fx, "/status.json");
    assert_eq!(a.status, 401, "{}", a.body);
    assert!(
        a.header("WWW-Authenticate")
            .is_some_and(|v| v.starts_with("Bearer"))
    );
    assert!(!a.body.contains(token));
    let wrong = format!("Bearer {}x", &token[..token.len() - 1]);
    let right = format!("Bearer {token}");
    let a = http(
        fx.addr(),
        "GET",
        "/status.json",
        &[("Authorization", &wrong)],
        "",
    );
    assert_eq!(a.status, 401);
    let a = http(
        fx.addr(),
        "GET",
        "/status.json",
        &[("Authorization", &right)],
        "",
    );
    assert_eq!(a.status, 200);
    assert!(!a.body.contains(token));
    assert_eq!(post(&fx, "/control/pause", "").status, 401);
    let a = http(
        fx.addr(),
        "POST",
        "/control/pause",
        &[JSON, ("Authorization", &wrong)],
        "",
    );
    assert_eq!(a.status, 401);
    assert!(fx.actions().is_empty());
    let a = http(
        fx.addr(),
        "POST",
        "/control/pause",
        &[JSON, ("Authorization", &right)],
        "",
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(fx.actions(), ["pause"]);
}

#[test]
fn start_refuses_unsafe_or_impossible_addresses() {
    let start = |listen: &str, allow_remote: bool, token: Option<&str>| {
        let cell = ScheduleCell::new(Profile::Steady { eps: 1.0 });
        cell.begin(Instant::now());
        let (poke, _) = crossbeam_channel::bounded(1);
        let opts = StatusOptions {
            listen: listen.parse().unwrap(),
            allow_remote,
            token: token.map(String::from),
        };
        StatusServer::start(
            opts,
            SnapshotCell::new(Snapshot::empty(run_info())),
            Control::new(cell, poke),
        )
    };
    // Refused before anything is bound: no socket beyond loopback is ever opened here.
    let e = start("0.0.0.0:0", false, Some("tok"))
        .err()
        .expect("refused");
    assert!(matches!(e, StatusError::NotLoopback { .. }), "{e}");
    assert!(e.to_string().contains("0.0.0.0:0"), "{e}");
    let e = start("0.0.0.0:0", true, None).err().expect("refused");
    assert!(matches!(e, StatusError::NoToken { .. }), "{e}");
    assert!(
        e.to_string().contains("0.0.0.0:0") && e.to_string().contains("token"),
        "{e}"
    );
    let e = start("127.0.0.1:0", false, Some("a b"))
        .err()
        .expect("refused");
    assert!(matches!(e, StatusError::BadToken { .. }), "{e}");
    assert!(!e.to_string().contains("a b"), "{e}");
    // Shorter than 16 characters: guessed in no time, refused on loopback too.
    for short in ["x", "tok", "0123456789abcde"] {
        let e = start("127.0.0.1:0", false, Some(short))
            .err()
            .expect("refused");
        assert!(matches!(e, StatusError::BadToken { .. }), "{short}: {e}");
        assert!(e.to_string().contains("16 to 1024"), "{e}");
    }
    // A port in use is named.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = taken.local_addr().unwrap().to_string();
    let e = start(&at, false, None).err().expect("refused");
    assert!(matches!(e, StatusError::Bind { .. }), "{e}");
    assert!(e.to_string().contains(&at), "{e}");
    // Shutdown is prompt and closes the port.
    let s = start("127.0.0.1:0", false, None).expect("starts");
    let addr = s.addr();
    let t0 = Instant::now();
    s.shutdown();
    assert!(t0.elapsed() < Duration::from_secs(3));
    let deadline = Instant::now() + Duration::from_secs(3);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
        assert!(Instant::now() < deadline, "still listening after shutdown");
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_stalled_post_does_not_stop_the_page() {
    let fx = Fixture::start(None);
    let mut stalled = TcpStream::connect(fx.addr()).unwrap();
    let head = format!(
        "POST /control/pause HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        fx.host()
    );
    stalled.write_all(head.as_bytes()).unwrap();
    thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let a = get(&fx, "/status.json");
    assert_eq!(a.status, 200);
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "took {:?}",
        t0.elapsed()
    );
    // Other control requests still go through.
    assert_eq!(post(&fx, "/control/pause", "").status, 200);
    drop(stalled);
    assert_eq!(fx.actions(), ["pause"]);
}

// ---- a real browser ---------------------------------------------------------------------------

/// Nothing in the browser console but what the page cannot help.
fn assert_quiet_console(v: &Value) {
    let problems: Vec<&Value> = v["console"].as_array().unwrap().iter().collect();
    assert!(
        problems.is_empty(),
        "the browser console complained: {problems:?}"
    );
}

#[test]
fn the_page_works_in_headless_chromium() {
    let mut fx = Fixture::start(None);
    let Some(mut script) = Script::start("live", &fx.server().url(), None) else {
        return;
    };
    let live = script.next(Duration::from_secs(40));
    let (first, second) = (&live["first"], &live["second"]);
    assert_eq!(first["run_id"], RUN_ID, "{live}");
    assert_eq!(first["name"], "soak: lphc at 5k eps");
    assert_eq!(first["adapter"], "lphc");
    assert_eq!(first["state"], "running");
    for k in [
        "events_sent",
        "events_accepted",
        "achieved_eps",
        "rate_eps",
        "intended_p99",
    ] {
        let shown = first[k].as_str().unwrap_or_default();
        assert!(!shown.is_empty() && shown != "—", "#{k} shows {shown:?}");
    }
    assert!(
        first["events_sent"].as_str().unwrap().contains(','),
        "no thousands separator: {first}"
    );
    assert!(
        number(&second["events_sent"]) > number(&first["events_sent"]),
        "{first} {second}"
    );
    assert_ne!(
        first["chart_eps_last_t"], second["chart_eps_last_t"],
        "the chart did not move"
    );
    assert_ne!(first["chart_eps_achieved"], second["chart_eps_achieved"]);
    assert!(number(&first["chart_eps_points"]) > 100, "{first}");
    let after = &live["after_pause"];
    assert_eq!(after["state"], "paused", "{live}");
    assert_eq!(live["resume_enabled"], true);
    assert!(
        live["control_message"]
            .as_str()
            .unwrap()
            .starts_with("pause: done"),
        "{live}"
    );
    assert_quiet_console(&live);
    // The page's POSTs passed every check and reached the schedule.
    assert_eq!(fx.actions(), ["pause", "resume", "rate"]);
    assert_eq!(fx.cell.marks()[2].detail.as_deref(), Some("factor 2"));
    assert_eq!(live["rate_eps_after_factor"], "10,000", "{live}");

    fx.shutdown_server();
    script.say("server stopped");
    let ended = script.next(Duration::from_secs(25));
    assert_eq!(ended["banner_kind"], "lost", "{ended}");
    assert!(
        ended["banner"]
            .as_str()
            .unwrap()
            .contains("stopped answering"),
        "{ended}"
    );
    assert_eq!(ended["pause_enabled"], false);
    script.finish();
}

#[test]
fn the_page_asks_for_the_token_and_keeps_it_out_of_the_url() {
    let token = "Zt4-browser-token-91c";
    let fx = Fixture::start(Some(token));
    let Some(script) = Script::start("token", &fx.server().url(), Some(token)) else {
        return;
    };
    let v = script.next(Duration::from_secs(40));
    assert_eq!(
        v["run_id_before"], "—",
        "figures shown before the token: {v}"
    );
    assert_eq!(v["run_id"], RUN_ID, "{v}");
    assert_eq!(v["form_hidden"], true);
    assert_eq!(v["url"], fx.server().url(), "the URL changed");
    assert!(!v["url"].as_str().unwrap().contains(token));
    assert_eq!(v["stored"], token);
    // The page's own fetch of /status.json before the token is a 401 the console reports.
    let problems: Vec<&Value> = v["console"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m.as_str().unwrap_or_default().contains("401"))
        .collect();
    assert!(
        problems.is_empty(),
        "the browser console complained: {problems:?}"
    );
    assert_eq!(fx.actions(), ["pause"]);
    script.finish();
}
