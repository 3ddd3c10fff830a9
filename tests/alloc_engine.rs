//! The run engine allocates nothing per event or per batch in steady state: a global allocator
//! counts allocations made on worker threads (named `ingestbench-w…`) while a run against the
//! built-in sink is in full swing, between its second and fifth second: over HTTP (lphc),
//! over syslog UDP (datagrams grouped by size into GSO buffers), and over HTTP with the status
//! page and `/metrics` scraped every 50 ms while the run is paused, resumed and re-rated
//! through the control endpoints; `ingestbench http` (adapter http) with a fixed body and
//! with one event of a source per request; and syslog over RELP against the test's RELP
//! server (`support/relp_server.rs`, on threads of its own); and `adapter: elasticsearch`
//! (gzipped `_bulk`) against the strict `_bulk` store (`support/bulk_store.rs`), which answers
//! some items 429 once and some 400, so partial answers are read, compacted and resent.

#[path = "support/bulk_store.rs"]
#[allow(dead_code)]
mod bulk_store;
#[path = "support/counting_alloc.rs"]
mod counting_alloc;
#[path = "support/relp_server.rs"]
mod relp_server;
#[path = "support/search_store.rs"]
#[allow(dead_code)]
mod search_store;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A debug build's generator need not keep 20,000 events/s here: the rate is not what is
/// measured.
const SLO: &str = "slo: { min_eps_ratio: 0 }";

#[global_allocator]
static A: counting_alloc::OnThreads = counting_alloc::OnThreads("ingestbench-w");

#[test]
fn workers_do_not_allocate_in_steady_state() {
    // HTTP (lphc), a mix of sources in mixed batches, and syslog over UDP (by size, GSO) into
    // the built-in sink, one after the other (the counter is global).
    for (what, target, source) in [
        (
            "lphc",
            "url: builtin\n  batch: { max_events: 200 }",
            "{ id: windows.security }",
        ),
        (
            "mix",
            "url: builtin\n  batch: { max_events: 200, mix: true }",
            "[{ id: windows.security, share: 0.6 }, { id: identity.okta, share: 0.4 }]",
        ),
        (
            "syslog udp",
            "adapter: syslog\n  url: builtin\n  syslog: { transport: udp }\n  batch: { max_events: 200 }",
            "{ id: linux.syslog }",
        ),
    ] {
        let during = steady_state_allocations(
            &format!(
                "schema_version: \"1.0\"\nseed: 3\ntarget:\n  {target}\nsource: {source}\nworkload: {{ eps: 20000, workers: 4, stop: {{ after: 5s }} }}\n{SLO}"
            ),
            &[],
            |_| {},
        );
        // 2 s at 20,000 events/s is 40,000 events in 200 batches on 2 workers.
        assert_eq!(
            during, 0,
            "{what}: {during} allocations on worker threads in steady state"
        );
    }
    scrapes_and_control_cost_workers_no_allocation();
    http_adapter_does_not_allocate();
    replay_does_not_allocate();
    relp_does_not_allocate();
    bulk_does_not_allocate();
}

/// Elasticsearch `_bulk`, gzipped: action and document lines rendered into the batch, the
/// answers' items scanned in place, the 429 items compacted to the front, gzipped again and
/// resent, the 400 items given up — at 10,000 events/s over 4 connections (the failed events
/// are the store's doing: the run's verdict is not what is measured).
fn bulk_does_not_allocate() {
    let mut rules = bulk_store::Rules::new("ib-alloc");
    rules.gzip = true;
    rules.reject_first = Some((10, 3));
    rules.refuse = Some((50, 7));
    let store = bulk_store::BulkStore::start(rules);
    let during = steady_state_allocations(
        &format!(
            "schema_version: \"1.0\"\nseed: 3\ntarget:\n  adapter: elasticsearch\n  url: \"http://127.0.0.1:{}\"\n  compression: gzip\n  elasticsearch: {{ index: ib-alloc }}\n  batch: {{ max_events: 200 }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 10000, workers: 4, stop: {{ after: 6s }} }}\nslo: {{ min_eps_ratio: 0, max_failed_events: 1000000000, max_unsent_events: 1000000000 }}\n",
            store.port
        ),
        &[],
        |_| {},
    );
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    let (resent, refused) = store.with_seen(|s| {
        (
            s.item_status.get(&429).copied().unwrap_or(0),
            s.item_status.get(&400).copied().unwrap_or(0),
        )
    });
    assert!(
        resent > 1000 && refused > 200,
        "429 {resent}, 400 {refused}"
    );
    assert!(store.docs().len() > 10_000, "{} stored", store.docs().len());
    assert_eq!(
        during, 0,
        "elasticsearch: {during} allocations on worker threads in steady state"
    );
}

/// A recording replayed from memory (ndjson, timestamps shifted, tags added) into the
/// built-in sink.
fn replay_does_not_allocate() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("rec.ndjson");
    let lines: String = (0..1000)
        .map(|i| {
            format!(
                "{{\"time\":\"2025-03-14T09:{:02}:{:02}.250Z\",\"user\":\"u{i}\",\"n\":{i}}}\n",
                i / 60 % 60,
                i % 60
            )
        })
        .collect();
    std::fs::write(&file, lines).unwrap();
    let during = steady_state_allocations(
        &format!(
            "schema_version: \"1.0\"\nseed: 3\ntarget:\n  url: builtin\n  batch: {{ max_events: 200 }}\nsource: {{ file: \"{}\", format: ndjson, timestamps: shift }}\nworkload: {{ eps: 20000, workers: 4, stop: {{ after: 5s }} }}\n{SLO}",
            file.display()
        ),
        &[],
        |_| {},
    );
    assert_eq!(
        during, 0,
        "replay: {during} allocations on worker threads in steady state"
    );
}

/// Syslog over RELP: frames written into each link's preallocated buffer, answers read and
/// settled in place, at 20,000 events/s over 4 connections (a window of 128 each).
fn relp_does_not_allocate() {
    let server = relp_server::FakeRelp::start(relp_server::Behaviour::default());
    let during = steady_state_allocations(
        &format!(
            "schema_version: \"1.0\"\nseed: 3\ntarget:\n  adapter: syslog\n  url: \"relp://127.0.0.1:{}\"\n  batch: {{ max_events: 200 }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: 20000, workers: 4, stop: {{ after: 5s }} }}\n{SLO}",
            server.port
        ),
        &[],
        |_| {},
    );
    assert!(server.messages() > 10_000, "{} messages", server.messages());
    assert!(server.errors().is_empty(), "{:?}", server.errors());
    assert_eq!(
        during, 0,
        "relp: {during} allocations on worker threads in steady state"
    );
}

/// `ingestbench http` (adapter http) into the built-in sink: a fixed body sent from one shared
/// buffer, then one event of a source per request, both at 5,000 requests/s over 4 keep-alive
/// connections on 2 workers.
fn http_adapter_does_not_allocate() {
    let body = r#"[{"msg":"a fixed body, the same bytes in every request","n":1}]"#;
    for (what, extra) in [
        (
            "http fixed body",
            vec!["-d", body, "-T", "application/json"],
        ),
        (
            "http one event per request",
            vec!["--source", "aws.cloudtrail"],
        ),
    ] {
        let mut args: Vec<String> = [
            "ingestbench",
            "http",
            "builtin",
            "-z",
            "5s",
            "-q",
            "5000",
            "-c",
            "4",
            "-m",
            "POST",
            "-s",
            "200",
            "--threads",
            "2",
            "-o",
            "json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let during = steady_state_allocations_of(args, |_| {});
        // 2 s at 5,000 requests/s is 10,000 requests on 2 workers.
        assert_eq!(
            during, 0,
            "{what}: {during} allocations on worker threads in steady state"
        );
    }
}

/// HTTP again, with both endpoints scraped and the run steered (after the others: the
/// counter is global, so runs must not overlap).
fn scrapes_and_control_cost_workers_no_allocation() {
    let (status, metrics) = (free_port(), free_port());
    let during = steady_state_allocations(
        "schema_version: \"1.0\"\nseed: 3\ntarget:\n  url: builtin\n  batch: { max_events: 200 }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 20000, workers: 4, stop: { after: 5s } }\nslo: { min_eps_ratio: 0 }\n",
        &[
            "--status".into(),
            format!("127.0.0.1:{status}"),
            "--prometheus".into(),
            format!("127.0.0.1:{metrics}"),
        ],
        |window| {
            // Scrape both endpoints every 50 ms; pause, resume and re-rate on the way.
            let end = Instant::now() + window;
            let mut step = 0;
            while Instant::now() < end {
                assert!(http(metrics, "GET /metrics", "").contains("ingestbench_events_total"));
                assert!(http(status, "GET /status.json", "").contains("\"seq\""));
                step += 1;
                let action = match step {
                    8 => Some(("pause", "{}")),
                    16 => Some(("resume", "{}")),
                    24 => Some(("rate", "{\"factor\": 1.2}")),
                    _ => None,
                };
                if let Some((what, body)) = action {
                    let answer = http(status, &format!("POST /control/{what}"), body);
                    assert!(answer.starts_with("HTTP/1.1 200"), "{what}: {answer}");
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(step > 24, "only {step} scrapes");
        },
    );
    assert_eq!(
        during, 0,
        "{during} allocations on worker threads while scraped and steered"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One request on a fresh connection to 127.0.0.1:`port` (`line` is `METHOD PATH`); the
/// whole answer.
fn http(port: u16, line: &str, body: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let req = format!(
        "{line} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// Runs `yaml` on 2 threads (with `extra` flags) and counts allocations on worker threads
/// from second 2 to 4, while `meanwhile` runs for those 2 seconds.
fn steady_state_allocations(yaml: &str, extra: &[String], meanwhile: impl FnOnce(Duration)) -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("c.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let path = cfg.display().to_string();
    let mut args: Vec<String> = [
        "ingestbench",
        "run",
        "--config",
        &path,
        "--threads",
        "2",
        "--output",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend_from_slice(extra);
    steady_state_allocations_of(args, meanwhile)
}

/// Runs the command line `args` and counts allocations on worker threads from second 2 to 4,
/// while `meanwhile` runs for those 2 seconds.
fn steady_state_allocations_of(args: Vec<String>, meanwhile: impl FnOnce(Duration)) -> u64 {
    let start = counting_alloc::allocations();
    let what = args.join(" ");
    let run = std::thread::spawn(move || ingestbench::cli::run(&args));
    std::thread::sleep(Duration::from_secs(2));
    let before = counting_alloc::allocations();
    // The counter does see worker threads: their setup (batch buffers, pollers) allocates.
    assert!(
        before > start,
        "no allocation seen on worker threads at all"
    );
    let window = Duration::from_secs(2);
    let t0 = Instant::now();
    meanwhile(window);
    std::thread::sleep(window.saturating_sub(t0.elapsed()));
    let during = counting_alloc::allocations() - before;
    let code = run.join().unwrap();
    assert_eq!(code, 0, "{what}");
    during
}
