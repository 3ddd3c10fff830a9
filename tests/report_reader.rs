//! Saved reports read one way (issue 33, cases 5 and 21): `report merge`, `compare`, `show`
//! and `list` share one reader with one set of checks, so a shard `show` refuses (a negative
//! count, "NaN", 2^62 accepted of 100 sent) is refused by `merge` in the same words, and a
//! forged HDR header (a 1 GB payload length in an 8 KB report) is refused from its header;
//! `compare --gate` fails (exit 3, naming why) when a gated metric cannot be compared or a
//! replicate's own verdict is a failure.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::{all, bin};

/// A run of `events` events to the built-in sink, one per batch (so the latency percentiles
/// have their samples), its report at `report` (`extra` flags: a shard, a run id).
fn run(dir: &Path, report: &Path, url: &str, events: u32, extra: &[&str]) -> Output {
    let cfg = dir.join(format!("run-{}.yaml", std::process::id()));
    std::fs::write(
        &cfg,
        format!(
            "schema_version: \"1.0\"\n\
             target: {{ adapter: lphc, url: \"{url}\", batch: {{ max_events: 1 }} }}\n\
             source: {{ id: aws.cloudtrail }}\n\
             workload: {{ profile: steady, eps: 500, stop: {{ total_events: {events} }} }}\n\
             observability: {{ report: \"{}\" }}\n",
            report.display()
        ),
    )
    .unwrap();
    bin()
        .args(["run", "--config"])
        .arg(&cfg)
        .args(extra)
        .output()
        .unwrap()
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn write(p: &Path, v: &Value) -> String {
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p.display().to_string()
}

fn ib(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// Two shard reports of one run.
fn shards(dir: &Path) -> [PathBuf; 2] {
    let out = dir.join("sh");
    for i in 0..2 {
        let o = run(
            dir,
            &out.join("report.json"),
            "builtin",
            100,
            &["--shard", &format!("{i}/2"), "--run-id", "r-reader"],
        );
        assert!(
            out.join(format!("report.shard-{i}.json")).is_file(),
            "{}",
            all(&o)
        );
    }
    [0, 1].map(|i| out.join(format!("report.shard-{i}.json")))
}

/// An HdrHistogram V2 header (in DEFLATE, base64) claiming `payload_len` bytes of counts.
fn forged_hdr(low: u64, high: u64, digits: u32, payload_len: u32) -> String {
    use base64::Engine;
    use std::io::Write;
    let mut p = Vec::new();
    p.extend(0x1c84_9313u32.to_be_bytes());
    p.extend(payload_len.to_be_bytes());
    p.extend(0u32.to_be_bytes());
    p.extend(digits.to_be_bytes());
    p.extend(low.to_be_bytes());
    p.extend(high.to_be_bytes());
    p.extend(1.0f64.to_be_bytes());
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&p).unwrap();
    let z = z.finish().unwrap();
    let mut out = Vec::new();
    out.extend(0x1c84_9314u32.to_be_bytes());
    out.extend((z.len() as u32).to_be_bytes());
    out.extend(z);
    base64::engine::general_purpose::STANDARD.encode(out)
}

#[test]
fn merge_show_and_compare_refuse_the_same_shards_in_the_same_words() {
    let d = tempfile::tempdir().unwrap();
    let [s0, s1] = shards(d.path());
    let good = ib(&[
        "report",
        "merge",
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
    ]);
    assert!(matches!(good.status.code(), Some(0 | 3)), "{}", all(&good));
    type Tamper = fn(&mut Value);
    let cases: Vec<(&str, Tamper, &str)> = vec![
        (
            "neg",
            |v| v["summary"]["events_sent"] = json!(-5),
            "summary.events_sent is -5: a count, rate or time is never negative",
        ),
        (
            "nan",
            |v| v["summary"]["achieved_eps"] = json!("NaN"),
            "invalid type: string \"NaN\", expected f64",
        ),
        (
            "big",
            |v| v["shard"]["totals"]["events_accepted"] = json!(1u64 << 62),
            "shard.totals.events_accepted is 4611686018427387904: beyond any run",
        ),
        (
            "more-accepted",
            |v| v["shard"]["totals"]["events_accepted"] = json!(1000),
            "shard.totals: 1000 events accepted and 0 failed of 50 sent",
        ),
        (
            "second",
            |v| v["shard"]["seconds"][0]["t"] = json!(1u64 << 31),
            "shard.seconds: second 2147483648 is beyond any run",
        ),
        (
            "wall",
            |v| v["shard"]["started_wall_ns"] = json!(9_000_000_000_000_000_000u64),
            "shard.started_wall_ns 9000000000000000000 is not a time between 2000 and 2200",
        ),
        (
            "index",
            |v| v["shard"]["index"] = json!(7),
            "shard 7/2: not a shard of a run",
        ),
        (
            "verdict",
            |v| v["verdict"] = json!({"pass": true, "exit_code": 9, "reasons": []}),
            "not a verdict ingestbench gives",
        ),
        (
            "hdr-bomb",
            |v| v["latency_hdr"]["intended"] = json!(forged_hdr(1, 1 << 62, 5, 1 << 30)),
            "latency_hdr.intended: the header says 1073741824 bytes of counts",
        ),
        (
            "hdr-config",
            |v| v["latency_hdr"]["intended"] = json!(forged_hdr(1, 1 << 62, 5, 0)),
            "latency_hdr.intended: recorded with values 1..4611686018427387904 at 5 significant digits",
        ),
        (
            "hdr-count",
            |v| v["latency_ms"]["service"]["count"] = json!(3),
            "values and latency_ms.service.count says 3",
        ),
    ];
    for (name, tamper, want) in cases {
        let mut parts = Vec::new();
        for (i, s) in [&s0, &s1].iter().enumerate() {
            let mut v = read(s);
            tamper(&mut v);
            parts.push(write(&d.path().join(format!("{name}-{i}.json")), &v));
        }
        let show = ib(&["report", "show", &parts[0]]);
        // Under 200 MB of address space: a 1 GB allocation would abort the process.
        let merge = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 400000; exec \"$0\" report merge \"$1\" \"$2\"")
            .arg(env!("CARGO_BIN_EXE_ingestbench"))
            .args(&parts)
            .output()
            .unwrap();
        let compare = ib(&["report", "compare", &parts[0], &parts[1]]);
        for (cmd, o) in [("show", &show), ("merge", &merge), ("compare", &compare)] {
            assert_eq!(o.status.code(), Some(2), "{name}: {cmd}: {}", all(o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(&parts[0]) && err.contains(want),
                "{name}: {cmd} should say {want:?}: {err}"
            );
        }
    }
}

#[test]
fn a_gated_metric_that_cannot_be_compared_fails_the_gate() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("base.json");
    let o = run(d.path(), &base, "builtin", 300, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let b = base.display().to_string();
    assert!(read(&base)["latency_ms"]["intended"]["p99"].is_number());

    // A candidate that reached nothing: its own verdict fails, its latency is null.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cand = d.path().join("cand.json");
    let o = run(
        d.path(),
        &cand,
        &format!("http://127.0.0.1:{port}/"),
        100,
        &["--duration", "1s"],
    );
    assert_ne!(o.status.code(), Some(0), "{}", all(&o));
    let c = cand.display().to_string();
    let o = ib(&[
        "report",
        "compare",
        &b,
        &c,
        "--gate",
        "intended_p99_ms,service_p50_ms",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "intended_p99_ms: gated and cannot be compared: not in candidate {c}"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("candidate {c}: its own verdict is FAIL")),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAIL  exit 3"));

    // Both sides the aborted run: nothing worse, and still no pass.
    let o = ib(&["report", "compare", &c, &c, "--gate", "achieved_eps"]);
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));

    // A passing candidate whose p99 is missing (null): the gate on it fails; a gate that
    // leaves it out passes.
    let mut v = read(&base);
    v["latency_ms"]["intended"]["p99"] = Value::Null;
    let np = write(&d.path().join("no-p99.json"), &v);
    let o = ib(&["report", "compare", &b, &np, "--gate", "intended_p99_ms"]);
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    let o = ib(&["report", "compare", &b, &np]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "all gated by default: {}",
        all(&o)
    );
    let o = ib(&["report", "compare", &b, &np, "--gate", "achieved_eps"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let o = ib(&["report", "compare", &b, &b, "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["gate_failures"], json!([]));

    // A file that is only a schema is no report at all.
    let only = write(
        &d.path().join("only.json"),
        &json!({"schema": "ingestbench.report/2"}),
    );
    let o = ib(&["report", "compare", &only, &only, "--gate", "achieved_eps"]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("not a whole report"), "{}", all(&o));
}
