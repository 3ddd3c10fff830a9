//! End to end: `ingestbench size`. A table of worked examples whose figures are computed by
//! hand in the comments, checked in `--output json` and in the text; the syslog header
//! against RFC 5424 with this host's name and the process's id; `--source` with a real pack;
//! `--report` with a fixed report of a real run (tests/golden/size-report.json, saved from
//! `run --config examples/steady-smoke.yaml --output json`) and with a run made here; and bad
//! input, which exits 2 naming the flag.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ingestbench"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `size ARGS --output json`, exit 0, parsed.
fn json(args: &[&str]) -> Value {
    let mut a = vec!["size"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--output", "json"]);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", all(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", all(&o)))
}

/// `size ARGS` as text, exit 0.
fn text(args: &[&str]) -> String {
    let mut a = vec!["size"];
    a.extend_from_slice(args);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", all(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The number at `path` (dots) in `v`.
fn at(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("no number at {path}"))
}

fn check(v: &Value, name: &str) -> Value {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}"))
        .clone()
}

/// A worked example: flags, figures (JSON path, value worked out by hand) and lines the text
/// must contain.
struct Example {
    args: &'static [&'static str],
    figures: &'static [(&'static str, f64)],
    ok: &'static [&'static str],
    over: &'static [&'static str],
    text: &'static [&'static str],
}

const EXAMPLES: &[Example] = &[
    // 10,000 eps × 500 B over HEC (the default), batches of 500, 90 days.
    Example {
        args: &["--eps", "10000", "--event-bytes", "500"],
        figures: &[
            // 10,000 × 500 = 5,000,000 B/s; × 8 = 40,000,000 bit/s.
            ("bandwidth.raw.bytes_per_s", 5_000_000.0),
            ("bandwidth.raw.bits_per_s", 40_000_000.0),
            // 10,000 × 86,400 = 864,000,000 events a day.
            ("volume.events_per_day.value", 864_000_000.0),
            // 5,000,000 × 86,400 = 432,000,000,000 B = 432 GB = 432e9 / 2^30 = 402.331 GiB.
            ("volume.licence_per_day.decimal", 432.0),
            ("volume.licence_per_day.binary", 402.331_352_233_886_7),
            // × 90 days = 38,880,000,000,000 B = 38.88 TB = 35.3612 TiB.
            ("volume.licence_retention.decimal", 38.88),
            ("volume.licence_retention.binary", 35.361_154_004_931_45),
            // The envelope {"time":1767225600.000,"sourcetype":"_json","event": (52 B) and
            // ,"fields":{"ingestbench_run":"r-000000000000"}} (47 B): 99 B.
            ("per_event.carrier.value", 99.0),
            // The head: "POST /services/collector/event HTTP/1.1\r\n" 41, "Host:
            // siem-collector.example.com:8088\r\n" 39, "Authorization: Splunk <GUID>\r\n" 60,
            // "Content-Type: application/json\r\n" 32, "Content-Length: 299500\r\n" 24,
            // "\r\n" 2 = 198 B; ÷ 500 = 0.396 B per event.
            ("per_event.request_share.value", 0.396),
            // 500 + 99 + 0.396 = 599.396 B; × 10,000 = 5,993,960 B/s.
            ("per_event.wire.value", 599.396),
            ("bandwidth.wire.bytes_per_s", 5_993_960.0),
            // 10,000 ÷ 500 = 20 requests/s of 500 × 599 = 299,500 B (299,698 with the head).
            ("requests.per_s.value", 20.0),
            ("requests.body_bytes.value", 299_500.0),
            ("requests.wire_bytes.value", 299_698.0),
            // Little's law: 20/s × 0.050 s = 1 in flight; × 2 = 2 connections.
            ("suggested.connections.value", 2.0),
        ],
        // 299,500 B ≤ 838,860,800 and ≤ 1,000,000; 299,502 ≤ 1,000,000 (engine); one event
        // and a ~60 B header as a datagram is ≤ 1,472 but > 480.
        ok: &[
            "hec_max_content_length",
            "hec_max_content_length_before_6_5",
            "engine_batch_bytes",
            "udp_max_payload_ipv4",
            "udp_unfragmented_1500_mtu",
            "rfc5426_should_2048",
        ],
        over: &["rfc5426_must_480"],
        text: &[
            "5,000,000 B/s = 40 Mbit/s",
            "5,993,960 B/s = 47.95 Mbit/s",
            "432 GB = 402.3 GiB",
            "38.88 TB = 35.36 TiB",
            "864,000,000",
            "{\"time\":1767225600.000,\"sourcetype\":\"_json\",\"event\":…,\"fields\":{\"ingestbench_run\":\"r-000000000000\"}}",
            "HTTP request head 198 B per request ÷ 500 events",
        ],
    },
    // 2,500 eps × 2 KiB over lphc, batches of 1,000, 8:1 compression, 20 ms, 30 days.
    Example {
        args: &[
            "--eps",
            "2500",
            "--event-bytes",
            "2KiB",
            "--adapter",
            "lphc",
            "--batch",
            "1000",
            "--compression",
            "8",
            "--latency-ms",
            "20",
            "--days",
            "30",
        ],
        figures: &[
            // 2 KiB = 2,048 B; × 2,500 = 5,120,000 B/s = 40.96 Mbit/s.
            ("inputs.event_bytes.value", 2_048.0),
            ("bandwidth.raw.bytes_per_s", 5_120_000.0),
            ("bandwidth.raw.bits_per_s", 40_960_000.0),
            // × 86,400 = 442,368,000,000 B = 442.368 GB; × 30 = 13.27104 TB.
            ("volume.licence_per_day.decimal", 442.368),
            ("volume.licence_retention.decimal", 13.271_04),
            // The array: 999 commas and 2 brackets per 1,000 events = 1.001 B per event.
            ("per_event.carrier.value", 1.001),
            // 1,000 × 2,049.001 = 2,049,001 B passes the engine's 1,000,000 B: it stops at
            // floor(999,998 / 2,049.001) = 488 events; 2,500 ÷ 488 = 5.122950819672131/s.
            ("requests.events_per_request.value", 488.0),
            ("requests.per_s.value", 5.122_950_819_672_131),
            // Compressed: 488 × 2,049.001 = 999,912.488 B, / 8 = 124,989.061 B (6 digits), so the head is
            // "POST /ingest HTTP/1.1\r\n" 23 + Host 39 + "X-API-Key: <36>\r\n" 49 +
            // "Content-Encoding: gzip\r\n" 24 + "Content-Type: …\r\n" 32 +
            // "Content-Length: 124984\r\n" 24 + "\r\n" 2 = 193 B.
            ("requests.wire_bytes.value", 124_989.061 + 193.0),
            // A event: 2,049.001 / 8 + 193 / 488 = 256.125125 + 0.395492 = 256.520617 B;
            // × 2,500 = 641,301.54 B/s.
            ("per_event.compressed.value", 256.125_125 + 193.0 / 488.0),
            (
                "bandwidth.compressed.bytes_per_s",
                2_500.0 * (256.125_125 + 193.0 / 488.0),
            ),
            // Uncompressed on the wire: 2,049.001 + 0.395492 = 2,049.396492 B.
            ("per_event.wire.value", 2_049.001 + 193.0 / 488.0),
            // A day on the wire: 641,301.54 × 86,400 = 55.4084 GB.
            (
                "volume.wire_per_day.decimal",
                2_500.0 * (256.125_125 + 193.0 / 488.0) * 86_400.0 / 1e9,
            ),
            // 5.123/s × 0.020 s × 2 = 0.205 → 1 connection.
            ("suggested.connections.value", 1.0),
        ],
        ok: &["udp_max_payload_ipv4"],
        over: &["engine_batch_bytes", "udp_unfragmented_1500_mtu"],
        text: &[
            "5,120,000 B/s = 40.96 Mbit/s",
            "442.4 GB = 412 GiB",
            "13.27 TB = 12.07 TiB",
            "641,302 B/s = 5.13 Mbit/s",
            "cut from the batch of 1,000",
            "it cuts requests at 488 events",
            "[…,…]",
        ],
    },
    // The fixed report of a real run (steady-smoke: 200 CloudTrail events in 10 requests of
    // 350,735 B in all, lphc to the built-in sink at 127.0.0.1:42673, 4.4489 ms mean service
    // latency, 4.750364 ms of processing), planned at 5,000 eps with 1,748 B events.
    Example {
        args: &[
            "--report",
            "tests/golden/size-report.json",
            "--eps",
            "5000",
            "--event-bytes",
            "1748",
        ],
        figures: &[
            // 5,000 × 1,748 = 8,740,000 B/s = 69.92 Mbit/s; × 86,400 = 755.136 GB a day.
            ("bandwidth.raw.bytes_per_s", 8_740_000.0),
            ("volume.licence_per_day.decimal", 755.136),
            // Measured: 350,735 B / 200 events = 1,753.675 B per event as sent, 20 per request;
            // the run's head "POST /ingest HTTP/1.1\r\n" 23 + "Host: 127.0.0.1:42673\r\n" 23 +
            // "Content-Type: …\r\n" 32 + "Content-Length: 35074\r\n" 23 + "\r\n" 2 = 103 B,
            // 5.15 B per event; so 1,748.525 B of body, 0.525 B of it the array.
            ("per_event.request_share.value", 5.15),
            ("per_event.carrier.value", 0.525),
            ("per_event.wire.value", 1_753.675),
            // 5,000 × 1,753.675 = 8,768,375 B/s.
            ("bandwidth.wire.bytes_per_s", 8_768_375.0),
            // The run's batch of 20: 250 requests/s; × 4.4489 ms = 1.112 in flight; × 2 →
            // 3 connections.
            ("inputs.batch.value", 20.0),
            ("requests.per_s.value", 250.0),
            ("inputs.latency_ms.value", 4.4489),
            ("suggested.connections.value", 3.0),
            // 200 events in 4.750364 ms = 42,102.0 events/s of a thread; 5,000 ÷ (42,102 ×
            // 0.5) = 0.24 → 1 thread.
            ("inputs.rate_per_core.value", 200.0 / 0.004_750_364),
            ("suggested.threads.value", 1.0),
        ],
        ok: &["engine_batch_bytes"],
        over: &[],
        text: &[
            "8,740,000 B/s = 69.92 Mbit/s",
            "8,768,375 B/s = 70.15 Mbit/s",
            "755.1 GB",
            "measured: mean service latency of run r-ce3b9eb57df8",
            "HTTP request head 103 B per request ÷ 20 events",
        ],
    },
];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn worked_examples() {
    for ex in EXAMPLES {
        let v = json(ex.args);
        assert_eq!(v["schema"], "ingestbench.size/1");
        for (path, want) in ex.figures {
            let got = at(&v, path);
            assert!(close(got, *want), "{:?} {path}: {got} != {want}", ex.args);
        }
        for name in ex.ok {
            assert_eq!(check(&v, name)["ok"], true, "{:?} {name}", ex.args);
        }
        for name in ex.over {
            assert_eq!(check(&v, name)["ok"], false, "{:?} {name}", ex.args);
        }
        // Every figure says how it was computed.
        for section in ["per_event", "bandwidth", "volume", "requests", "suggested"] {
            for (k, f) in v[section].as_object().unwrap() {
                if f.is_object() {
                    assert!(
                        f["how"].as_str().is_some_and(|h| !h.is_empty()),
                        "{section}.{k} has no how"
                    );
                }
            }
        }
        let t = text(ex.args);
        for want in ex.text {
            assert!(
                t.contains(want),
                "{:?}: {want:?} missing from\n{t}",
                ex.args
            );
        }
        assert!(t.contains("licence volume"), "{t}");
    }
}

#[test]
fn syslog_header_is_rfc5424_from_this_host_and_process() {
    // 1,000 eps × 300 B over syslog/TCP: `LEN SP <134>1 TIMESTAMP HOST ingestbench PID - - `.
    let child = bin()
        .args([
            "size",
            "--eps",
            "1000",
            "--event-bytes",
            "300",
            "--adapter",
            "syslog",
            "--output",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_ascii_lowercase();
    // "<134>1 " 7 + "2026-01-01T00:00:00.000Z " 25 + host + " " + "ingestbench " 12 + pid +
    // " " + "- - " 4 = 50 + host + pid digits.
    let header = 50 + host.len() + pid.to_string().len();
    assert_eq!(at(&v, "inputs.carrier.syslog_header"), header as f64);
    // Octet counting: "LEN " for a message of 300 + header (3 digits) = 4 B more.
    assert_eq!(at(&v, "per_event.carrier.value"), (header + 4) as f64);
    assert_eq!(at(&v, "per_event.wire.value"), (300 + header + 4) as f64);
    assert_eq!(at(&v, "bandwidth.raw.bytes_per_s"), 300_000.0);
    // 300,000 × 86,400 = 25,920,000,000 B = 25.92 GB of licence a day.
    assert!(close(at(&v, "volume.licence_per_day.decimal"), 25.92));
    assert_eq!(v["requests"]["kind"], "tcp messages");
    assert_eq!(at(&v, "requests.per_s.value"), 1_000.0);
    assert_eq!(at(&v, "suggested.connections.value"), 1.0);
    assert_eq!(check(&v, "syslog_max_message_bytes")["ok"], true);
    assert_eq!(check(&v, "rfc5426_must_480")["ok"], true, "300 + ~60 B");
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| !c["name"].as_str().unwrap().starts_with("hec"))
    );
    // The header the whole-message licence note adds.
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(&format!("counts the {header} B header too")),
        "{notes}"
    );
}

#[test]
fn a_real_pack_is_measured_here() {
    let v = json(&["--eps", "20000", "--source", "windows.security"]);
    let ev = &v["inputs"]["event_bytes"];
    assert_eq!(ev["from"], "measured");
    let mean = at(&v, "inputs.event_bytes.value");
    assert!((200.0..5_000.0).contains(&mean), "{mean}");
    assert!(at(&v, "inputs.event_bytes_max") >= mean);
    assert!(ev["how"].as_str().unwrap().contains("windows.security"));
    assert!(at(&v, "inputs.rate_per_core.value") > 0.0);
    assert_eq!(v["inputs"]["rate_per_core"]["from"], "measured");
    let threads = at(&v, "suggested.threads.value");
    assert!(threads >= 1.0 && threads.fract() == 0.0, "{threads}");
    assert!(at(&v, "suggested.connections.value") >= threads);
    assert!(close(at(&v, "bandwidth.raw.bytes_per_s"), 20_000.0 * mean));
    // The envelope carries the pack's sourcetype.
    let sample = v["inputs"]["carrier"]["sample"].as_str().unwrap();
    assert!(
        sample.contains("\"sourcetype\":\"WinEventLog:Security\""),
        "{sample}"
    );
    // gzip measured on the pack's own batches.
    let g = json(&[
        "--eps",
        "20000",
        "--source",
        "windows.security",
        "--compression",
        "gzip",
    ]);
    assert_eq!(g["inputs"]["compression"]["from"], "measured");
    let ratio = at(&g, "inputs.compression.value");
    assert!(ratio > 2.0 && ratio < 100.0, "{ratio}");
    assert!(at(&g, "bandwidth.compressed.bytes_per_s") < at(&g, "bandwidth.wire.bytes_per_s"));
    let t = text(&["--eps", "20000", "--source", "windows.security"]);
    assert!(
        t.contains("generator threads") && t.contains("events/s"),
        "{t}"
    );
}

#[test]
fn a_report_of_a_run_made_here() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&[
        "run",
        "--config",
        "examples/steady-smoke.yaml",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let file = tmp.path().join("report.json");
    std::fs::write(&file, &o.stdout).unwrap();
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = json(&["--report", file.to_str().unwrap()]);
    // The rate is the run's.
    assert_eq!(v["inputs"]["eps"]["from"], "measured");
    assert!(close(
        at(&v, "inputs.eps.value"),
        at(&report, "summary.achieved_eps")
    ));
    // The run's own events rendered again (its seed and pools) account for its bytes: what
    // is left for the lphc array is about its 1.05 B per event.
    assert_eq!(v["inputs"]["event_bytes"]["from"], "measured");
    let carrier = at(&v, "per_event.carrier.value");
    assert!((-0.5..3.0).contains(&carrier), "{carrier}");
    // Bytes per event on the wire are the run's: bytes_sent / events_sent.
    let sent = at(&report, "summary.bytes_sent") / at(&report, "summary.events_sent");
    assert!(close(at(&v, "per_event.wire.value"), sent), "{sent}");
    assert!(at(&v, "suggested.threads.value") >= 1.0);
    assert!(at(&v, "suggested.connections.value") >= 1.0);
    assert_eq!(v["inputs"]["latency_ms"]["from"], "measured");
    // The fixed report alone: its run's 40 eps.
    let f = json(&["--report", "tests/golden/size-report.json"]);
    assert!(close(at(&f, "inputs.eps.value"), 40.0));
    assert!(close(at(&f, "per_event.wire.value"), 1_753.675));
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    let table: &[(&[&str], &str)] = &[
        (&["--eps", "-5", "--event-bytes", "500"], "--eps"),
        (&["--eps", "0", "--event-bytes", "500"], "--eps"),
        (&["--eps", "NaN", "--event-bytes", "500"], "--eps"),
        (&["--eps", "inf", "--event-bytes", "500"], "--eps"),
        (&["--eps", "1e12", "--event-bytes", "500"], "--eps"),
        (&["--eps", "ten", "--event-bytes", "500"], "--eps"),
        (&["--eps", "100", "--event-bytes", "0"], "--event-bytes"),
        (&["--eps", "100", "--event-bytes", "-1"], "--event-bytes"),
        (&["--eps", "100", "--event-bytes", "1.2XB"], "--event-bytes"),
        (&["--eps", "100", "--event-bytes", "1e300"], "--event-bytes"),
        (&["--eps", "100", "--event-bytes", "NaN"], "--event-bytes"),
        (
            &["--eps", "100", "--event-bytes", "500", "--days", "0"],
            "--days",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--days", "-1"],
            "--days",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--days", "99999"],
            "--days",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--batch", "0"],
            "--batch",
        ),
        (
            &[
                "--eps",
                "100",
                "--event-bytes",
                "500",
                "--batch",
                "9999999999",
            ],
            "--batch",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--batch-bytes", "1"],
            "--batch-bytes",
        ),
        (
            &[
                "--eps",
                "100",
                "--event-bytes",
                "500",
                "--compression",
                "0.5",
            ],
            "--compression",
        ),
        (
            &[
                "--eps",
                "100",
                "--event-bytes",
                "500",
                "--compression",
                "NaN",
            ],
            "--compression",
        ),
        (
            &[
                "--eps",
                "100",
                "--event-bytes",
                "500",
                "--compression",
                "gzip",
            ],
            "--compression gzip",
        ),
        (
            &[
                "--eps",
                "100",
                "--event-bytes",
                "500",
                "--adapter",
                "syslog",
                "--compression",
                "4",
            ],
            "--compression",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--latency-ms", "0"],
            "--latency-ms",
        ),
        (
            &[
                "--eps",
                "100",
                "--event-bytes",
                "500",
                "--latency-ms",
                "NaN",
            ],
            "--latency-ms",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--adapter", "kafka"],
            "--adapter",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--transport", "udp"],
            "--transport",
        ),
        (
            &[
                "--eps",
                "100",
                "--event-bytes",
                "500",
                "--adapter",
                "syslog",
                "--transport",
                "quic",
            ],
            "--transport",
        ),
        (
            &["--eps", "100", "--event-bytes", "500", "--output", "xml"],
            "--output",
        ),
        (
            &["--eps", "100", "--source", "aws.cloudtrial"],
            "did you mean \"aws.cloudtrail\"",
        ),
        (&["--event-bytes", "500"], "--eps"),
        (&["--eps", "100"], "--event-bytes"),
        (&["--report", "/nonexistent/r.json"], "--report"),
        (&["--report", "Cargo.toml"], "--report"),
        (
            &[
                "--report",
                "tests/golden/size-report.json",
                "--adapter",
                "hec",
            ],
            "--adapter",
        ),
        (
            &[
                "--report",
                "tests/golden/size-report.json",
                "--source",
                "linux.syslog",
            ],
            "--source",
        ),
        (
            &[
                "--report",
                "tests/golden/size-report.json",
                "--compression",
                "nope",
            ],
            "--compression",
        ),
    ];
    for (args, flag) in table {
        let mut a = vec!["size"];
        a.extend_from_slice(args);
        let o = run(&a);
        let out = all(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}");
        assert!(out.contains(flag), "{args:?} should name {flag}: {out}");
        assert!(!out.contains("panicked"), "{args:?}: {out}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    let o = run(&["size", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--event-bytes"));
}

/// `--adapter elasticsearch`: the `_bulk` carrier (an action line and two newlines per
/// event) and Elasticsearch's and OpenSearch's 100mb `http.max_content_length`, which a batch
/// of 200,000 events of 1 KB goes over.
#[test]
fn elasticsearch_bulk_is_sized_with_its_action_lines_and_content_length() {
    let v = json(&[
        "--adapter",
        "elasticsearch",
        "--eps",
        "10000",
        "--event-bytes",
        "1KB",
    ]);
    assert_eq!(v["adapter"], "elasticsearch");
    // {"create":{"_index":"ingestbench","_id":"r-000000000000-0-0"}} is 62 B, its newline
    // and the document's: 64 B.
    assert_eq!(at(&v, "per_event.carrier.value"), 64.0);
    let c = check(&v, "es_max_content_length");
    assert_eq!(c["ok"], true, "{c}");
    assert_eq!(at(&c, "limit"), 104_857_600.0);
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != "hec_max_content_length")
    );
    let t = text(&[
        "--adapter",
        "elasticsearch",
        "--eps",
        "10000",
        "--event-bytes",
        "1KB",
    ]);
    assert!(
        t.contains("{\"create\":{\"_index\":\"ingestbench\",\"_id\":\"r-000000000000-0-0\"}}"),
        "{t}"
    );
    let big = json(&[
        "--adapter",
        "elasticsearch",
        "--eps",
        "200000",
        "--event-bytes",
        "1KB",
        "--batch",
        "200000",
        "--batch-bytes",
        "256MiB",
    ]);
    let c = check(&big, "es_max_content_length");
    assert_eq!(c["ok"], false, "{c}");
}
