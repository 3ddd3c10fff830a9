//! `/metrics` against real consumers, through the library alone (no load engine): a
//! `MetricsServer` on 127.0.0.1:0 serves a `SnapshotCell` that a test thread feeds with
//! snapshots of growing counters, then a final one that stays.
//!
//! - The reference Python parser (`prometheus_client`) reads two scrapes: every family has
//!   the type we declared, every sample equals the snapshot it came from (no sample more or
//!   less), and counters do not go down from the first scrape to the second.
//! - A real Prometheus server scrapes it every second; its query API must return the final
//!   snapshot's counters, a histogram count and gauges, and see no counter reset.
//! - The HTTP surface: content type, `/`, 404, 405, a garbage request, a huge declared
//!   length, a Host that is not this server's (403), a busy port, shutdown.
//!
//! A missing Prometheus or Python package fails in CI and skips loudly elsewhere
//! (`peers::require`); scripts/install-test-deps.sh installs both.

mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ingestbench::serve::metrics::{CONTENT_TYPE, MetricsOptions, MetricsServer};
use ingestbench::stats::snapshot::{Buckets, RunInfo, RunState, Snapshot, SnapshotCell, Stored};
use support::peers::require;
use support::prometheus::{self as prom, Family, Prometheus, Sample};

/// The step of the final snapshot: above any step the feeder reaches before it.
const FINAL: u64 = 1000;
/// Time between two published snapshots.
const TICK: Duration = Duration::from_millis(20);
const BOUNDS: [f64; 5] = [0.001, 0.005, 0.025, 0.1, 1.0];
/// A run name that needs every escape of a label value.
const NAME: &str = "night \"soak\" \\ eu\nwest";

/// The snapshot after `i` steps: every counter grows with `i`; `FINAL` is finished.
fn snapshot_at(i: u64) -> Snapshot {
    let mut s = Snapshot::empty(run_info());
    s.seq = i;
    s.state = if i >= FINAL {
        RunState::Finished
    } else {
        RunState::Running
    };
    s.elapsed_s = i as f64 * 0.02;
    s.paused_s = i as f64 * 0.001;
    s.rate_eps = 1000.0 + i as f64;
    s.events_due = 1000 * i;
    let c = &mut s.cumulative;
    (c.events_sent, c.events_accepted, c.events_failed) = (990 * i, 980 * i, 10 * i);
    (c.batches_sent, c.batches_accepted) = (11 * i, 9 * i);
    (c.batches_failed, c.batches_retried) = (i, i);
    c.bytes_sent = 123_456 * i;
    s.status = BTreeMap::from([("200".into(), 9 * i), ("503".into(), i), ("400".into(), i)]);
    s.errors = BTreeMap::from([("status_503".into(), i), ("reset".into(), i / 3)]);
    (s.reconnects, s.batches_acked, s.acks_pending) = (i / 3, 8 * i, i % 7);
    s.events_resent = 5 * i;
    s.events_already_stored = 2 * i;
    (s.events_unreadable_2xx, s.batches_unreadable_2xx) = (50 * i, i);
    s.events_unconfirmed_by = BTreeMap::from([("connection reset".into(), 3 * i)]);
    s.events_unconfirmed = 3 * i;
    s.bytes_unsent_at_close = 700 * i;
    (s.lag_ms_max, s.backlog_events, s.connections_open) = (0.25 * i as f64, i % 11, 4);
    s.intended_buckets = buckets(i, [1, 3, 6, 9, 10], 0.0125);
    s.service_buckets = buckets(i, [4, 8, 10, 10, 10], 0.005);
    s.stored = Some(Stored {
        store: "builtin".into(),
        events_received: 980 * i,
        distinct: 980 * i,
        duplicates: i / 5,
        lost_events: i % 2,
        ingest_lag_ms: None,
    });
    s
}

fn run_info() -> RunInfo {
    RunInfo {
        run_id: "0123456789abcdef".into(),
        name: Some(NAME.into()),
        adapter: "lphc".into(),
        source: "linux.auditd".into(),
        ..RunInfo::default()
    }
}

/// Cumulative buckets at `BOUNDS` of `10·i` batches, `per[k]·i` of them at most `BOUNDS[k]`.
fn buckets(i: u64, per: [u64; 5], mean_s: f64) -> Buckets {
    let mut le_s: Vec<(f64, u64)> = BOUNDS.iter().zip(per).map(|(&b, n)| (b, n * i)).collect();
    le_s.push((f64::INFINITY, 10 * i));
    Buckets {
        le_s,
        sum_s: mean_s * (10 * i) as f64,
        count: 10 * i,
    }
}

/// A thread publishing `snapshot_at(1..)` every `TICK` for at most `steps` steps (or until
/// told to finish), then `snapshot_at(FINAL)`, which stays.
struct Feeder {
    finish: Sender<()>,
    thread: JoinHandle<()>,
}

impl Feeder {
    fn start(cell: Arc<SnapshotCell>, steps: u64) -> Feeder {
        let (finish, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            for i in 1..=steps.min(FINAL - 1) {
                cell.publish(Arc::new(snapshot_at(i)));
                match rx.recv_timeout(TICK) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            cell.publish(Arc::new(snapshot_at(FINAL)));
        });
        Feeder { finish, thread }
    }

    /// Publishes the final snapshot now and waits until it is in.
    fn finish(self) {
        let _ = self.finish.send(());
        self.thread.join().unwrap();
    }
}

/// A server on port 0 over a cell that starts at step 0.
fn server() -> (MetricsServer, Arc<SnapshotCell>) {
    let cell = SnapshotCell::new(snapshot_at(0));
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let srv = MetricsServer::start(MetricsOptions::local(addr), cell.clone()).unwrap();
    assert_ne!(srv.addr().port(), 0);
    (srv, cell)
}

/// `GET /metrics`: the body, after checking status and content type.
fn scrape(addr: SocketAddr) -> String {
    let mut resp = prom::http()
        .get(&format!("http://{addr}/metrics"))
        .call()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let ct = resp
        .headers()
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(ct, CONTENT_TYPE);
    resp.body_mut().read_to_string().unwrap()
}

/// Every sample `render` must write for `s`, as `(name, labels, value)`.
fn expected(s: &Snapshot) -> Vec<Sample> {
    let mut v = Vec::new();
    let mut add = |name: &str, labels: &[(&str, &str)], value: f64| {
        v.push(Sample {
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, l)| (k.to_string(), l.to_string()))
                .collect(),
            value,
        })
    };
    let version = env!("CARGO_PKG_VERSION");
    let commit = env!("INGESTBENCH_GIT_COMMIT");
    add(
        "ingestbench_build_info",
        &[("version", version), ("commit", commit)],
        1.0,
    );
    let r = &s.run;
    let name = r.name.as_deref().unwrap_or("");
    let run = [
        ("run_id", r.run_id.as_str()),
        ("name", name),
        ("adapter", &r.adapter),
        ("source", &r.source),
    ];
    add("ingestbench_run_info", &run, 1.0);
    let c = &s.cumulative;
    let ev = "ingestbench_events_total";
    add(ev, &[("outcome", "sent")], c.events_sent as f64);
    add(ev, &[("outcome", "accepted")], c.events_accepted as f64);
    add(ev, &[("outcome", "failed")], c.events_failed as f64);
    for cause in ingestbench::stats::UNCONFIRMED_CAUSES {
        let n = s.events_unconfirmed_by.get(cause).copied().unwrap_or(0);
        add(
            "ingestbench_events_unconfirmed_total",
            &[("cause", cause)],
            n as f64,
        );
    }
    add(
        "ingestbench_bytes_unsent_at_close_total",
        &[],
        s.bytes_unsent_at_close as f64,
    );
    let ba = "ingestbench_batches_total";
    add(ba, &[("outcome", "sent")], c.batches_sent as f64);
    add(ba, &[("outcome", "accepted")], c.batches_accepted as f64);
    add(ba, &[("outcome", "failed")], c.batches_failed as f64);
    add(ba, &[("outcome", "retried")], c.batches_retried as f64);
    add("ingestbench_sent_bytes_total", &[], c.bytes_sent as f64);
    for (k, n) in &s.status {
        add("ingestbench_responses_total", &[("status", k)], *n as f64);
    }
    for (k, n) in &s.errors {
        add("ingestbench_errors_total", &[("kind", k)], *n as f64);
    }
    add(
        "ingestbench_acked_batches_total",
        &[],
        s.batches_acked as f64,
    );
    add(
        "ingestbench_acks_pending_batches",
        &[],
        s.acks_pending as f64,
    );
    add(
        "ingestbench_events_unreadable_2xx_total",
        &[],
        s.events_unreadable_2xx as f64,
    );
    add(
        "ingestbench_batches_unreadable_2xx_total",
        &[],
        s.batches_unreadable_2xx as f64,
    );
    add("ingestbench_reconnects_total", &[], s.reconnects as f64);
    add(
        "ingestbench_events_resent_total",
        &[],
        s.events_resent as f64,
    );
    add(
        "ingestbench_events_already_stored_total",
        &[],
        s.events_already_stored as f64,
    );
    add(
        "ingestbench_connections_open",
        &[],
        s.connections_open as f64,
    );
    add("ingestbench_events_due_total", &[], s.events_due as f64);
    add("ingestbench_target_rate_events_per_second", &[], s.rate_eps);
    add(
        "ingestbench_schedule_lag_seconds",
        &[],
        s.lag_ms_max / 1000.0,
    );
    add("ingestbench_backlog_events", &[], s.backlog_events as f64);
    add("ingestbench_elapsed_seconds", &[], s.elapsed_s);
    add("ingestbench_paused_seconds_total", &[], s.paused_s);
    for (label, st) in [
        ("running", RunState::Running),
        ("paused", RunState::Paused),
        ("draining", RunState::Draining),
        ("finished", RunState::Finished),
    ] {
        let on = if s.state == st { 1.0 } else { 0.0 };
        add("ingestbench_state", &[("state", label)], on);
    }
    for (clock, b) in [
        ("intended", &s.intended_buckets),
        ("service", &s.service_buckets),
    ] {
        let h = "ingestbench_latency_seconds";
        for &(le, n) in &b.le_s {
            let le = if le.is_finite() {
                le.to_string()
            } else {
                "+Inf".into()
            };
            add(
                &format!("{h}_bucket"),
                &[("clock", clock), ("le", &le)],
                n as f64,
            );
        }
        add(&format!("{h}_sum"), &[("clock", clock)], b.sum_s);
        add(&format!("{h}_count"), &[("clock", clock)], b.count as f64);
    }
    if let Some(st) = &s.stored {
        let f = "ingestbench_stored_events";
        add(f, &[("kind", "received")], st.events_received as f64);
        add(f, &[("kind", "distinct")], st.distinct as f64);
        add(f, &[("kind", "duplicates")], st.duplicates as f64);
        add(f, &[("kind", "lost")], st.lost_events as f64);
    }
    v
}

/// The type each family must have, by the name the Python parser gives it (a counter's
/// without `_total`).
fn expected_types() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("ingestbench_build_info", "gauge"),
        ("ingestbench_run_info", "gauge"),
        ("ingestbench_events", "counter"),
        ("ingestbench_events_unconfirmed", "counter"),
        ("ingestbench_bytes_unsent_at_close", "counter"),
        ("ingestbench_batches", "counter"),
        ("ingestbench_sent_bytes", "counter"),
        ("ingestbench_responses", "counter"),
        ("ingestbench_errors", "counter"),
        ("ingestbench_acked_batches", "counter"),
        ("ingestbench_acks_pending_batches", "gauge"),
        ("ingestbench_events_unreadable_2xx", "counter"),
        ("ingestbench_batches_unreadable_2xx", "counter"),
        ("ingestbench_reconnects", "counter"),
        ("ingestbench_events_resent", "counter"),
        ("ingestbench_events_already_stored", "counter"),
        ("ingestbench_connections_open", "gauge"),
        ("ingestbench_events_due", "counter"),
        ("ingestbench_target_rate_events_per_second", "gauge"),
        ("ingestbench_schedule_lag_seconds", "gauge"),
        ("ingestbench_backlog_events", "gauge"),
        ("ingestbench_elapsed_seconds", "gauge"),
        ("ingestbench_paused_seconds", "counter"),
        ("ingestbench_state", "gauge"),
        ("ingestbench_latency_seconds", "histogram"),
        ("ingestbench_stored_events", "gauge"),
    ])
}

type Key = (String, Vec<(String, String)>);

fn key(s: &Sample) -> Key {
    (
        s.name.clone(),
        s.labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

fn by_key(samples: &[Sample]) -> BTreeMap<Key, f64> {
    let mut m = BTreeMap::new();
    for s in samples {
        assert!(m.insert(key(s), s.value).is_none(), "series twice: {s:?}");
    }
    m
}

/// Checks one parsed scrape: the declared types, and every sample equal to the snapshot of
/// the step it shows (read from `events_due_total`). Returns the samples by series.
fn check_scrape(families: &[Family]) -> (u64, BTreeMap<Key, f64>) {
    let types: BTreeMap<&str, &str> = families
        .iter()
        .map(|f| (f.name.as_str(), f.kind.as_str()))
        .collect();
    assert_eq!(types, expected_types(), "families and their types");
    assert!(
        families.iter().all(|f| !f.help.is_empty()),
        "a HELP is empty"
    );
    let samples: Vec<Sample> = families.iter().flat_map(|f| f.samples.clone()).collect();
    let got = by_key(&samples);
    let due_key = ("ingestbench_events_due_total".to_string(), Vec::new());
    let step = got[&due_key] as u64 / 1000;
    let want = by_key(&expected(&snapshot_at(step)));
    assert_eq!(got, want, "scrape of step {step}");
    (step, got)
}

fn is_counter(name: &str) -> bool {
    name.ends_with("_total")
        || name.ends_with("_bucket")
        || name.ends_with("_count")
        || name.ends_with("_sum")
}

#[test]
fn python_parser_reads_two_scrapes() {
    let Some(python) = require(
        "python3 with prometheus_client (PyPI prometheus-client)",
        prom::python_parser(),
    ) else {
        return;
    };
    let (srv, cell) = server();
    let feeder = Feeder::start(cell, 250);
    std::thread::sleep(TICK * 3);
    let (step1, first) = check_scrape(&prom::parse_exposition(&python, &scrape(srv.addr())));
    feeder.finish();
    let (step2, second) = check_scrape(&prom::parse_exposition(&python, &scrape(srv.addr())));
    assert!(step1 < FINAL, "first scrape during the feed");
    assert_eq!(step2, FINAL, "second scrape of the final snapshot");
    for (k, v) in first.iter().filter(|(k, _)| is_counter(&k.0)) {
        let now = second.get(k).unwrap_or_else(|| panic!("{k:?} gone"));
        assert!(now >= v, "{k:?} went down: {v} then {now}");
    }
    let name = &first[&("ingestbench_run_info".to_string(), run_labels())];
    assert_eq!(
        *name, 1.0,
        "run_info with the escaped name read back as written"
    );
    srv.shutdown();
}

fn run_labels() -> Vec<(String, String)> {
    let r = run_info();
    let mut v: Vec<(String, String)> = [
        ("adapter", r.adapter.as_str()),
        ("name", NAME),
        ("run_id", &r.run_id),
        ("source", &r.source),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    v.sort();
    v
}

#[test]
fn prometheus_scrapes_the_final_values() {
    let Some(bin) = require(
        "prometheus (Debian package prometheus)",
        prom::prometheus_bin(),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (srv, cell) = server();
    let feeder = Feeder::start(cell, 100);
    let p = Prometheus::start(&bin, dir.path(), &[srv.addr()]);
    let fin = snapshot_at(FINAL);
    let accepted = fin.cumulative.events_accepted as f64;
    let q = r#"ingestbench_events_total{outcome="accepted"}"#;
    let seen = p.wait_value(q, accepted, Duration::from_secs(20));
    assert_eq!(
        seen,
        Some(accepted),
        "{q}; prometheus log:\n{}",
        p.log_text()
    );
    let c = &fin.cumulative;
    for (outcome, want) in [
        ("sent", c.events_sent),
        ("accepted", c.events_accepted),
        ("failed", c.events_failed),
    ] {
        let q = format!(r#"ingestbench_events_total{{outcome="{outcome}"}}"#);
        assert_eq!(p.value(&q), Some(want as f64), "{q}");
    }
    let q = r#"ingestbench_latency_seconds_count{clock="intended"}"#;
    assert_eq!(p.value(q), Some(fin.intended_buckets.count as f64), "{q}");
    let q = r#"ingestbench_latency_seconds_bucket{clock="service",le="+Inf"}"#;
    assert_eq!(p.value(q), Some(fin.service_buckets.count as f64), "{q}");
    let q = "ingestbench_target_rate_events_per_second";
    assert_eq!(p.value(q), Some(fin.rate_eps), "{q}");
    let q = r#"ingestbench_state{state="finished"}"#;
    assert_eq!(p.value(q), Some(1.0), "{q}");
    let q = r#"up{job="ingestbench"}"#;
    assert_eq!(p.value(q), Some(1.0), "{q}");
    let q = "sum(resets(ingestbench_events_total[5m]))";
    assert_eq!(p.value(q), Some(0.0), "{q}");
    let run = p.query("ingestbench_run_info").unwrap();
    assert_eq!(run.len(), 1, "{run:?}");
    assert_eq!(run[0]["metric"]["name"], NAME, "escaped label read back");
    drop(p);
    feeder.finish();
    srv.shutdown();
}

/// Sends raw bytes and returns what the server answered before closing (bounded).
fn raw(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn http_surface() {
    let (srv, _cell) = server();
    let addr = srv.addr();
    let agent = prom::http();
    let get = |path: &str| {
        let mut r = agent.get(&format!("http://{addr}{path}")).call().unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    };
    let (st, body) = get("/");
    assert_eq!(st, 200);
    assert!(body.contains("/metrics"), "{body}");
    assert_eq!(get("/nothing-here").0, 404);
    let post = agent
        .post(&format!("http://{addr}/metrics"))
        .send("x")
        .unwrap();
    assert_eq!(post.status().as_u16(), 405);
    for odd in [
        &b"\x00\x01 nonsense\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"GET /%ff%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET http://x/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /metrics HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"DELETE /metrics HTTP/1.0\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nX: \xff\xfe\r\n\r\n",
        b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\n",
    ] {
        // Any answer, or a close; what matters is that the server goes on.
        let answer = raw(addr, odd);
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1."),
            "{odd:?} answered {answer}"
        );
    }
    let rebound = raw(
        addr,
        b"GET /metrics HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    );
    assert!(
        rebound.starts_with("HTTP/1.1 403"),
        "any Host answered: {rebound}"
    );
    let head = raw(
        addr,
        format!(
            "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            addr.port()
        )
        .as_bytes(),
    );
    assert!(head.starts_with("HTTP/1.1 200"), "still serving: {head}");
    let t = Instant::now();
    srv.shutdown();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "shutdown took {:?}",
        t.elapsed()
    );
    // The front's thread closes the listener when it ends: allow it a moment.
    let deadline = Instant::now() + Duration::from_secs(2);
    while TcpStream::connect(addr).is_ok() {
        assert!(Instant::now() < deadline, "still listening after shutdown");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn busy_address_is_a_typed_error_naming_it() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let cell = SnapshotCell::new(snapshot_at(0));
    let err = match MetricsServer::start(MetricsOptions::local(addr), cell) {
        Ok(_) => panic!("bound a busy port"),
        Err(e) => e,
    };
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

/// `--prometheus` obeys the status page's rules (issue 33, case 24): beyond loopback only
/// with `--allow-remote` and a token (`--status-token-env`, 16 characters or more), and
/// `validate` refuses the same config `run` refuses. Everything here is refused before a
/// socket is opened.
#[test]
fn metrics_beyond_loopback_need_allow_remote_and_a_token() {
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut c = support::bin();
        c.args([
            "run",
            "--url",
            "builtin",
            "--source",
            "aws.cloudtrail",
            "--eps",
            "10",
            "--duration",
            "1s",
        ])
        .args(extra)
        .env_remove("IB_METRICS_TOKEN");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    // (flags, environment, what stderr says)
    type Refused<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let refused: [Refused; 4] = [
        (&["--prometheus", "0.0.0.0:0"], &[], "beyond loopback"),
        (
            &["--prometheus", "0.0.0.0:0", "--allow-remote"],
            &[],
            "needs a token",
        ),
        (
            &[
                "--prometheus",
                "0.0.0.0:0",
                "--allow-remote",
                "--status-token-env",
                "IB_METRICS_TOKEN",
            ],
            &[("IB_METRICS_TOKEN", "short")],
            "16 to 1024",
        ),
        (
            &[
                "--prometheus",
                "127.0.0.1:0",
                "--status-token-env",
                "IB_METRICS_TOKEN",
            ],
            &[("IB_METRICS_TOKEN", "x")],
            "16 to 1024",
        ),
    ];
    for (args, env, says) in refused {
        let o = run(args, env);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("short"), "the token was printed: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    for (observability, says) in [
        (
            "  prometheus: \"0.0.0.0:9464\"\n",
            "observability.prometheus",
        ),
        (
            "  prometheus: \"0.0.0.0:9464\"\n  allow_remote: true\n",
            "observability.dashboard_token_env",
        ),
    ] {
        let cfg = dir.path().join("c.yaml");
        std::fs::write(
            &cfg,
            format!(
                "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: builtin\nsource:\n  id: aws.cloudtrail\nworkload:\n  profile: steady\n  eps: 10\n  stop: {{ after: 1s }}\nobservability:\n{observability}"
            ),
        )
        .unwrap();
        for cmd in ["validate", "run"] {
            let o = support::bin()
                .args([cmd, "--config"])
                .arg(&cfg)
                .output()
                .unwrap();
            let all = support::all(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd} {observability}: {all}");
            assert!(all.contains(says), "{cmd}: {all}");
        }
    }
}
