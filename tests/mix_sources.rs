//! A mix of sources end to end (`source:` as a list): one run sends several packs in their
//! shares — exactly, over 100,000 events — each with its own HEC sourcetype, a batch of one
//! source unless `batch.mix` lets it carry several, the same people across the packs (one set
//! of entity pools), and the report broken down by source. Against a HEC collector in Python
//! that counts what arrived (tests/support/mix_collector.py) and the built-in sink (every
//! event stored). Every run is bounded by its config.

mod support;

use serde_json::Value;
use support::{PyServer, all, bin, run_args, write_config};

const OKTA: &str = "OktaIM2:log";
const WINDOWS: &str = "WinEventLog:Security";
const M365: &str = "o365:management:activity";

/// Three packs in shares 0.5 / 0.3 / 0.2 to `url`; `target_extra` is more of the target
/// section (indented lines), `batch` its batch block.
fn mix_config(url: &str, target_extra: &str, batch: &str, workload: &str) -> String {
    format!(
        r#"schema_version: "1.0"
seed: 11
target:
  url: "{url}"
  batch: {batch}
{target_extra}source:
  - {{ id: identity.okta, share: 0.5, entities: {{ user: 40 }} }}
  - {{ id: windows.security, share: 0.3 }}
  - {{ id: m365.audit, share: 0.2 }}
workload: {workload}
"#
    )
}

/// The runs here keep rates on a small machine: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(yaml: &str, threads: u32, conns: u32) -> (Option<i32>, Value, String) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "mix.yaml", yaml);
    let o = bin().args(run_args(&cfg, threads, conns)).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    (o.status.code(), v, all(&o))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Each source's events within ±1 % of its share of `total`, by the collector and by the
/// report's `by_source`, which adds up to the run's totals.
fn assert_shares(stats: &Value, report: &Value, total: u64) {
    let rows = report["by_source"].as_array().expect("by_source");
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (row, (st, share)) in rows.iter().zip([(OKTA, 0.5), (WINDOWS, 0.3), (M365, 0.2)]) {
        let want = total as f64 * share;
        let got = u(&stats["events"][st]) as f64;
        assert!(
            (got - want).abs() <= total as f64 * 0.01,
            "{st}: {got} events, share {share} of {total} is {want}"
        );
        assert_eq!(u(&row["events_sent"]) as f64, got, "{row}");
        assert_eq!(row["events_sent"], row["events_accepted"], "{row}");
        assert_eq!(u(&row["events_failed"]), 0, "{row}");
        assert!(row["latency_ms"]["p50"].as_f64().unwrap() > 0.0, "{row}");
    }
    let sent: u64 = rows.iter().map(|r| u(&r["events_sent"])).sum();
    assert_eq!(sent, total);
}

#[test]
fn a_mix_sends_each_source_its_share_in_batches_of_one_source() {
    let hec = PyServer::start("mix_collector.py", &[]);
    let (code, v, out) = run(
        &mix_config(
            &format!("http://127.0.0.1:{}", hec.port),
            "  adapter: generic-hec\n",
            "{ max_events: 500 }",
            "{ eps: 12500, stop: { total_events: 100000 } }",
        ),
        2,
        4,
    );
    assert_eq!(code, Some(0), "{out}");
    let stats = hec.get_json("/stats");
    assert_eq!(stats["bad"], serde_json::json!([]), "{stats}");
    assert_shares(&stats, &v, 100_000);
    assert_eq!(
        u(&stats["mixed_requests"]),
        0,
        "batches stay of one source: {stats}"
    );
    // One set of entity pools: the people in Okta's events are those in M365's.
    let ids = |st: &str| -> std::collections::BTreeSet<String> {
        stats["identities"][st]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let (okta, m365) = (ids(OKTA), ids(M365));
    let both = okta.intersection(&m365).count();
    assert!(
        both >= 10,
        "only {both} identities in both Okta ({}) and M365 ({})",
        okta.len(),
        m365.len()
    );
    // The text report shows the breakdown too.
    assert_eq!(v["config"]["source"].as_array().unwrap().len(), 3);
}

#[test]
fn batch_mix_puts_several_sources_in_a_batch_each_with_its_envelope() {
    let hec = PyServer::start("mix_collector.py", &[]);
    let (code, v, out) = run(
        &mix_config(
            &format!("http://127.0.0.1:{}", hec.port),
            "  adapter: generic-hec\n",
            "{ max_events: 100, mix: true }",
            "{ eps: 2500, stop: { total_events: 10000 } }",
        ),
        1,
        2,
    );
    assert_eq!(code, Some(0), "{out}");
    let stats = hec.get_json("/stats");
    assert_eq!(stats["bad"], serde_json::json!([]), "{stats}");
    assert_shares(&stats, &v, 10_000);
    // Every 100-event batch of a 0.5/0.3/0.2 mix carries all three.
    assert_eq!(stats["mixed_requests"], stats["requests"], "{stats}");
}

#[test]
fn a_mix_into_the_builtin_sink_is_stored_whole_and_reported_by_source() {
    let (code, v, out) = run(
        &mix_config(
            "builtin",
            "",
            "{ max_events: 100 }",
            "{ eps: 4000, stop: { total_events: 8000 } }",
        ),
        2,
        4,
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["verification"]["distinct"], 8000, "{}", v["verification"]);
    assert_eq!(v["verification"]["lost_events"], 0);
    let rows = v["by_source"].as_array().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["source"].as_str().unwrap()).collect();
    assert_eq!(ids, ["identity.okta", "windows.security", "m365.audit"]);
    assert_eq!(
        v["target"]["source"], "identity.okta+windows.security+m365.audit",
        "{}",
        v["target"]
    );
    // The text report has the table.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "mix.yaml",
        &mix_config(
            "builtin",
            "",
            "{ max_events: 100 }",
            "{ eps: 2000, stop: { total_events: 2000 } }",
        ),
    );
    let o = bin()
        .args(["run", "--config", &cfg, "--threads", "1", "--workers", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("By source (whole run):"), "{text}");
    assert!(text.contains("windows.security"), "{text}");
}

#[test]
fn eps_per_source_gives_the_rate_and_the_shares() {
    let tmp = tempfile::tempdir().unwrap();
    let yaml = r#"schema_version: "1.0"
seed: 3
target: { url: builtin }
source:
  - { id: aws.cloudtrail, eps: 3000 }
  - { id: identity.okta, eps: 1000 }
workload: { stop: { after: 2s } }
"#;
    let cfg = write_config(tmp.path(), "eps.yaml", yaml);
    let o = bin().args(run_args(&cfg, 1, 2)).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(
        v["summary"]["target_eps"].as_f64(),
        Some(4000.0),
        "{}",
        v["summary"]
    );
    let rows = v["by_source"].as_array().unwrap();
    assert_eq!(rows[0]["share"].as_f64(), Some(0.75));
    let sent0 = rows[0]["sent_share"].as_f64().unwrap();
    assert!((sent0 - 0.75).abs() < 0.01, "{sent0}");
}

#[test]
fn mix_rules_name_their_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "source:\n  - { id: aws.cloudtrail, share: 0.5 }\n  - { id: identity.okta, share: 0.4 }\n",
            "source",
            "add up to 0.9",
        ),
        (
            "source:\n  - { id: aws.cloudtrail, share: 0.5 }\n  - { id: identity.okta }\n",
            "source[1]",
            "needs its share",
        ),
        (
            "source:\n  - { id: aws.cloudtrail, share: 0.5 }\n  - { id: identity.okta, share: 0.5, accounting: false }\n",
            "source[1].accounting",
            "set it on source[0]",
        ),
        (
            "source:\n  - { id: aws.cloudtrail, share: 0.5 }\n  - { id: aws.cloudtrail, share: 0.5 }\n",
            "source[1].id",
            "already source[0]",
        ),
        (
            "source:\n  - { id: aws.cloudtrail, share: 0.5 }\n  - { id: identity.okta, eps: 10 }\n",
            "source",
            "not some of each",
        ),
        (
            "source: { id: aws.cloudtrail, share: 0.5 }\n",
            "source.share",
            "applies to a mix",
        ),
        ("source: []\n", "source", "empty list"),
        (
            "source:\n  - { id: aws.cloudtrail, share: 0.5 }\n  - { id: nosuch.pack, share: 0.5 }\n",
            "source[1].id",
            "nosuch.pack",
        ),
    ];
    for (source, path, words) in cases {
        let yaml = format!(
            "schema_version: \"1.0\"\ntarget: {{ url: builtin }}\n{source}workload: {{ eps: 100, stop: {{ after: 1s }} }}\n"
        );
        let cfg = write_config(tmp.path(), "bad.yaml", &yaml);
        let o = bin().args(["validate", "--config", &cfg]).output().unwrap();
        let t = all(&o);
        assert_eq!(o.status.code(), Some(2), "{yaml}\n{t}");
        assert!(t.contains(words), "{yaml}\nwanted {path}: {words}\n{t}");
        // `path (line:column): …`
        assert!(
            t.contains(&format!("{path} (")),
            "names {path} and its line: {t}"
        );
    }
    // batch.mix needs a mix, and a batch that can carry one.
    let yaml = "schema_version: \"1.0\"\ntarget: { url: builtin, batch: { mix: true } }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 100, stop: { after: 1s } }\n";
    let cfg = write_config(tmp.path(), "bad.yaml", yaml);
    let o = bin().args(["validate", "--config", &cfg]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(all(&o).contains("target.batch.mix"), "{}", all(&o));
}
