//! The report's `accounting` section end to end: per agent, the seqs its events carried
//! (0 .. events_sent) and the ranges given up. Against a standalone `ingestbench sink` that
//! refuses a share of batches (503, one attempt each): the given-up ranges add up to the
//! failed events, and per agent the sink holds exactly the seqs not given up — what
//! `ingestbench verify` compares a store with. Untagged events give no accounting, and the
//! built-in sink does not call them all lost.

mod support;

use serde_json::Value;
use support::{SinkProc, all, bin, write_config};

fn run(cfg: &str) -> (Option<i32>, Value, String) {
    let out = bin()
        .args([
            "run",
            "--config",
            cfg,
            "--output",
            "json",
            "--no-pin",
            "--threads",
            "2",
        ])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), v, all(&out))
}

fn sum(v: &Value, f: impl Fn(&Value) -> u64) -> u64 {
    v["accounting"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .sum()
}

fn failed_of(a: &Value) -> u64 {
    a["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1].as_u64().unwrap() - r[0].as_u64().unwrap())
        .sum()
}

#[test]
fn accounting_names_what_a_store_should_hold() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--fault-503", "0.3"]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "a.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: \"http://127.0.0.1:{}/ingest\"\n  batch: {{ max_events: 10 }}\n  retry: {{ max_attempts: 1 }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 1000, workers: 4, stop: {{ total_events: 2000 }} }}\nslo: {{ max_failed_events: 100000 }}\n",
            sink.port
        ),
    );
    let (code, v, out) = run(&cfg);
    assert_eq!(code, Some(0), "{out}");
    let s = &v["summary"];
    let acct = &v["accounting"];
    assert_eq!(acct["run_id"], v["run_id"]);
    let agents = acct["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2, "one agent per worker thread: {acct:#}");
    assert_eq!(
        sum(&v, |a| a["events_sent"].as_u64().unwrap()),
        s["events_sent"].as_u64().unwrap()
    );
    let failed = sum(&v, failed_of);
    assert_eq!(failed, s["events_failed"].as_u64().unwrap(), "{acct:#}");
    assert!(failed > 0, "a 30 % refusal share failed nothing: {acct:#}");
    // The sink holds, per agent, exactly the seqs that were not given up.
    let stats: Value = serde_json::from_str(
        &ureq::get(&format!("http://127.0.0.1:{}/stats", sink.port))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    let run_id = v["run_id"].as_str().unwrap();
    for a in agents {
        let id = a["agent"].to_string();
        let held = &stats["runs"][run_id]["agents"][&id];
        let want = a["events_sent"].as_u64().unwrap() - failed_of(a);
        assert_eq!(
            held["distinct"].as_u64(),
            Some(want),
            "agent {id}: {held} vs {a}"
        );
        assert_eq!(held["duplicates"].as_u64(), Some(0), "agent {id}: {held}");
    }
}

#[test]
fn without_tags_there_is_no_accounting() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "a.yaml",
        "schema_version: \"1.0\"\ntarget: { adapter: lphc, url: builtin }\nsource: { id: aws.cloudtrail, accounting: false }\nworkload: { eps: 500, stop: { total_events: 200 } }\nslo: { min_events_accepted: 1 }\n",
    );
    let (code, v, out) = run(&cfg);
    assert_eq!(
        code,
        Some(0),
        "untagged events are not verified, so not all lost: {out}"
    );
    assert!(v.get("accounting").is_none(), "{v:#}");
}
