//! `ingestbench verify` end to end: a hand-written report (its `accounting` section) and files
//! of tagged lines; lines removed and duplicated after the "run" are reported exactly, a
//! rotated pair is read as one store, unexpected seqs are named, a report without accounting
//! is refused (exit 2), an unreachable store exits 6; a standalone `ingestbench sink` fed
//! tagged events over HTTP is verified from its `/stats`.

mod support;

use serde_json::Value;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Output;

use support::{SinkProc, all, bin};

const RUN: &str = "r-0123456789ab";

fn report(dir: &Path, agents: &str, slo: &str) -> String {
    let p = dir.join("report.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"schema":"ingestbench.report/2","run_id":"{RUN}","config":{{"slo":{{{slo}}}}},
              "accounting":{{"run_id":"{RUN}","agents":[{agents}]}}}}"#
        ),
    )
    .unwrap();
    p.to_string_lossy().into_owned()
}

/// Lines for agent `a`, seqs `seqs`, in the four tag forms in turn.
fn lines(a: u32, seqs: impl Iterator<Item = u64>) -> Vec<String> {
    seqs.map(|s| match s % 4 {
        0 => format!(
            r#"{{"msg":"login","ingestbench":{{"run":"{RUN}","agent":{a},"seq":{s}}}}}"#
        ),
        1 => format!(
            r#"<13>1 2024-01-01T00:00:00Z h app - - [ingestbench@32473 run="{RUN}" agent="{a}" seq="{s}"] m"#
        ),
        2 => format!(
            "CEF:0|v|p|1|1|n|3|ingestbenchRun={RUN} ingestbenchAgent={a} ingestbenchSeq={s}"
        ),
        _ => format!("ts=1 ingestbench_run={RUN} ingestbench_agent={a} ingestbench_seq={s}"),
    })
    .collect()
}

fn write(path: &Path, lines: &[String]) {
    let mut f = std::fs::File::create(path).unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

fn verify(args: &[&str]) -> (Output, Value) {
    let mut a = vec!["verify", "--settle-timeout", "0s", "--output", "json"];
    a.extend_from_slice(args);
    let o = bin().args(&a).output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o, v)
}

fn agent(v: &Value, src: usize, a: usize) -> &Value {
    &v["sources"][src]["agents"][a]
}

#[test]
fn removed_and_duplicated_lines_are_reported_exactly() {
    let d = tempfile::tempdir().unwrap();
    let rep = report(
        d.path(),
        r#"{"agent":0,"events_sent":500,"failed":[[100,110]],"failed_overflow":false},
           {"agent":1,"events_sent":300,"failed":[],"failed_overflow":false}"#,
        "",
    );
    let out = d.path().join("out.log");
    let mut all_lines = lines(0, (0..500).filter(|s| !(100..110).contains(s)));
    all_lines.extend(lines(1, 0..300));
    all_lines.push("ingestbench_run=r-other ingestbench_agent=0 ingestbench_seq=3".to_string());
    write(&out, &all_lines);
    let src = format!("file:{}", out.display());

    // Untouched: exit 0.
    let (o, v) = verify(&["--report", &rep, "--source", &src]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(v["schema"], "ingestbench.verify/1");
    assert_eq!(v["sources"][0]["stored"], 790);
    assert_eq!(v["sources"][0]["lost"], 0);
    assert_eq!(v["sources"][0]["other_runs"], 1);

    // Remove agent 0's seqs 7, 8, 9 and 321, agent 1's 0; duplicate agent 1's 42 twice and
    // agent 0's 499 once.
    let gone = |l: &String, a: u32, s: u64| {
        l.contains(&format!("agent\":{a},\"seq\":{s}}}"))
            || l.contains(&format!("agent=\"{a}\" seq=\"{s}\"]"))
            || l.ends_with(&format!("ingestbenchAgent={a} ingestbenchSeq={s}"))
            || l.ends_with(&format!("ingestbench_agent={a} ingestbench_seq={s}"))
    };
    let mut edited: Vec<String> = all_lines
        .iter()
        .filter(|l| {
            ![(0, 7), (0, 8), (0, 9), (0, 321), (1, 0)]
                .iter()
                .any(|&(a, s)| gone(l, a, s))
        })
        .cloned()
        .collect();
    let dup42 = all_lines.iter().find(|l| gone(l, 1, 42)).unwrap().clone();
    let dup499 = all_lines.iter().find(|l| gone(l, 0, 499)).unwrap().clone();
    edited.insert(10, dup42.clone());
    edited.push(dup42);
    edited.push(dup499);
    assert_eq!(edited.len(), all_lines.len() - 5 + 3);
    write(&out, &edited);
    let (o, v) = verify(&["--report", &rep, "--source", &src]);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    let a0 = agent(&v, 0, 0);
    assert_eq!(
        (a0["expected"].as_u64(), a0["stored"].as_u64()),
        (Some(490), Some(486))
    );
    assert_eq!(a0["lost"], 4);
    assert_eq!(a0["lost_first"], serde_json::json!([[7, 10], [321, 322]]));
    assert_eq!(a0["duplicated"], 1);
    assert_eq!(a0["duplicated_first"], serde_json::json!([499]));
    let a1 = agent(&v, 0, 1);
    assert_eq!(a1["lost"], 1);
    assert_eq!(a1["lost_first"], serde_json::json!([[0, 1]]));
    assert_eq!(a1["duplicated"], 2);
    assert_eq!(a1["duplicated_first"], serde_json::json!([42]));
    assert_eq!(v["sources"][0]["lost"], 5);
    assert_eq!(v["sources"][0]["duplicated"], 3);
    assert_eq!(v["pass"], false);

    // Within limits from the flags: exit 0; the report's slo limit is used otherwise.
    let (o, _) = verify(&[
        "--report",
        &rep,
        "--source",
        &src,
        "--max-lost",
        "5",
        "--max-dup",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));

    // Text output names the seqs.
    let o = bin()
        .args([
            "verify",
            "--settle-timeout",
            "0s",
            "--report",
            &rep,
            "--source",
            &src,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(5));
    assert!(text.contains("missing 7..9,321"), "{text}");
    assert!(text.contains("dup seqs 42"), "{text}");
    assert!(text.contains("FAIL (exit 5)"), "{text}");
}

#[test]
fn a_rotated_pair_is_one_store_and_unexpected_seqs_are_named() {
    let d = tempfile::tempdir().unwrap();
    let rep = report(
        d.path(),
        r#"{"agent":3,"events_sent":1000,"failed":[[400,500]],"failed_overflow":false}"#,
        r#""max_lost_events":0"#,
    );
    let accepted: Vec<u64> = (0..1000).filter(|s| !(400..500).contains(s)).collect();
    let (old, new) = accepted.split_at(450);
    write(&d.path().join("out.log.1"), &lines(3, old.iter().copied()));
    // The current file, gzip-rotated copies are read too.
    let gz = std::fs::File::create(d.path().join("out.log.2.gz")).unwrap();
    let mut enc = flate2::write::GzEncoder::new(gz, flate2::Compression::fast());
    for l in lines(3, new.iter().copied().take(100)) {
        writeln!(enc, "{l}").unwrap();
    }
    enc.finish().unwrap();
    write(
        &d.path().join("out.log"),
        &lines(3, new.iter().copied().skip(100)),
    );
    write(&d.path().join("other.log"), &lines(3, 0..1000));
    let glob = format!("file:{}/out.log*", d.path().display());
    let (o, v) = verify(&["--report", &rep, "--source", &glob]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(agent(&v, 0, 0)["stored"], 900);
    assert_eq!(agent(&v, 0, 0)["unexpected"], 0);

    // A seq in a failed range and one beyond events_sent: unexpected, named.
    let mut extra = lines(3, [450u64, 1005].into_iter());
    extra.extend(lines(7, [0u64].into_iter()));
    write(&d.path().join("out.log.3"), &extra);
    let (o, v) = verify(&["--report", &rep, "--source", &glob]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let a = agent(&v, 0, 0);
    assert_eq!(a["unexpected"], 2);
    assert_eq!(a["unexpected_first"], serde_json::json!([450, 1005]));
    assert_eq!(v["sources"][0]["unknown_agent_events"], 1);
}

#[test]
fn bad_input_unreachable_and_inexact() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("a.log");
    write(&log, &lines(0, 0..10));
    let src = format!("file:{}", log.display());
    let old = d.path().join("old.json");
    std::fs::write(&old, r#"{"schema":"ingestbench.report/1","run_id":"r-1"}"#).unwrap();
    let (o, _) = verify(&["--report", old.to_str().unwrap(), "--source", &src]);
    assert_eq!(o.status.code(), Some(2));
    assert!(all(&o).contains("no `accounting` section"), "{}", all(&o));

    let rep = report(
        d.path(),
        r#"{"agent":0,"events_sent":10,"failed":[[3,4]],"failed_overflow":true}"#,
        "",
    );
    for args in [
        vec!["--report", &rep],
        vec!["--report", &rep, "--source", "nfs:/x"],
        vec!["--report", &rep, "--source", &src, "--bogus"],
        vec![
            "--report",
            &rep,
            "--source",
            &src,
            "--settle-timeout",
            "soon",
        ],
    ] {
        let (o, _) = verify(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", all(&o));
    }
    let missing = format!("file:{}/nothing*.log", d.path().display());
    let (o, _) = verify(&["--report", &rep, "--source", &missing]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    let (o, _) = verify(&["--report", &rep, "--source", "sink:http://127.0.0.1:9"]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));

    // The failed list overflowed: inexact, exit 5 with the reason, even with seq 3 absent.
    let (o, v) = verify(&["--report", &rep, "--source", &src]);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    assert_eq!(v["exact"], false);
    assert!(v["reasons"][0].as_str().unwrap().contains("inexact"));
}

#[test]
fn a_standalone_sink_is_verified_from_its_stats() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let body = |a: u32, seqs: &[u64]| {
        let evs: Vec<String> = seqs
            .iter()
            .map(|s| format!(r#"{{"ingestbench":{{"run":"{RUN}","agent":{a},"seq":{s}}}}}"#))
            .collect();
        format!("[{}]", evs.join(","))
    };
    let post = |b: String| {
        let mut s = TcpStream::connect(("127.0.0.1", sink.port)).unwrap();
        write!(
            s,
            "POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
            b.len()
        )
        .unwrap();
        let mut r = Vec::new();
        std::io::Read::read_to_end(&mut s, &mut r).unwrap();
        assert!(String::from_utf8_lossy(&r).starts_with("HTTP/1.1 200"));
    };
    let s0: Vec<u64> = (0..50).filter(|s| *s != 17 && *s != 18).collect();
    post(body(0, &s0));
    post(body(0, &[5]));
    post(body(1, &(0..20).collect::<Vec<_>>()));
    let d = tempfile::tempdir().unwrap();
    let rep = report(
        d.path(),
        r#"{"agent":0,"events_sent":50,"failed":[],"failed_overflow":false},
           {"agent":1,"events_sent":20,"failed":[],"failed_overflow":false}"#,
        "",
    );
    let src = format!("sink:http://127.0.0.1:{}", sink.port);
    // Settling is on (1 s polls): the sink's counts are stable.
    let o = bin()
        .args(["verify", "--settle-timeout", "5s", "--output", "json"])
        .args(["--report", &rep, "--source", &src])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["sources"][0]["settle"]["settled"], true);
    let a0 = agent(&v, 0, 0);
    assert_eq!(
        (a0["stored"].as_u64(), a0["lost"].as_u64()),
        (Some(48), Some(2))
    );
    assert_eq!(a0["duplicated"], 1);
    assert_eq!(a0["seqs_listed"], false);
    assert_eq!(agent(&v, 0, 1)["lost"], 0);
    assert!(
        v["sources"][0]["notes"][0]
            .as_str()
            .unwrap()
            .contains("cannot be listed")
    );
    let (o, _) = verify(&[
        "--report",
        &rep,
        "--source",
        &src,
        "--max-lost",
        "2",
        "--max-dup",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}

/// A real `ingestbench run` against a standalone sink refusing 30 % of batches (one attempt
/// each), its report saved, then verified against the sink: the given-up ranges are not lost.
#[test]
fn a_real_run_verifies_against_its_sink() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--fault-503", "0.3"]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = support::write_config(
        dir.path(),
        "a.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: \"http://127.0.0.1:{}/ingest\"\n  batch: {{ max_events: 10 }}\n  retry: {{ max_attempts: 1 }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 1000, workers: 4, stop: {{ total_events: 2000 }} }}\nslo: {{ max_failed_events: 100000 }}\n",
            sink.port
        ),
    );
    let o = bin()
        .args([
            "run",
            "--config",
            &cfg,
            "--output",
            "json",
            "--no-pin",
            "--threads",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let rep = dir.path().join("report.json");
    std::fs::write(&rep, &o.stdout).unwrap();
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let accepted = report["summary"]["events_sent"].as_u64().unwrap()
        - report["summary"]["events_failed"].as_u64().unwrap();
    let src = format!("sink:http://127.0.0.1:{}", sink.port);
    let (o, v) = verify(&["--report", rep.to_str().unwrap(), "--source", &src]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &v["sources"][0];
    assert_eq!(v["run_id"], report["run_id"]);
    assert_eq!(s["expected"].as_u64(), Some(accepted));
    assert_eq!(s["stored"].as_u64(), Some(accepted));
    assert_eq!(
        (s["lost"].as_u64(), s["duplicated"].as_u64()),
        (Some(0), Some(0))
    );
}
