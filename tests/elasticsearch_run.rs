//! End to end: `ingestbench run` with `adapter: elasticsearch` against the strict `_bulk`
//! store in `support/bulk_store.rs` (request checks from the documented Bulk API; recorded
//! answers, not a live cluster). Items answered 429 the first time are resent alone and
//! stored once; items answered 400 `mapper_parsing_exception` fail for good, counted by
//! status and type, their seqs given up, exit 3; a first request stored and then answered 503
//! is resent whole and its stored items meet 409 (`create`): already stored, accepted, not
//! duplicated; gzip, a pipeline, API-key and basic auth (no token in the output), a text
//! source as `message` documents, `op_type: index`, `--adapter elasticsearch` on the command
//! line; then `ingestbench verify` with the OpenSearch source asks the same store and finds
//! nothing lost or duplicated. Config mistakes exit 2 naming the field and its line.

mod support;

use std::collections::BTreeSet;
use std::process::Output;

use base64::Engine;
use serde_json::Value;
use support::bulk_store::{BulkStore, Rules};
use support::{all, bin, run_json, write_config};

const API_KEY: &str = "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==";
const PASSWORD: &str = "pw-Es7q0-not-printed";

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn config(port: u16, es: &str, extra: &str, source: &str, total: u64, eps: u64) -> String {
    format!(
        "schema_version: \"1.0\"\ntarget:\n  adapter: elasticsearch\n  url: \"http://127.0.0.1:{port}\"\n  elasticsearch: {es}\n  batch: {{ max_events: 200 }}\n  retry: {{ max_attempts: 10, max_time: 20s }}\n{extra}source: {{ id: {source} }}\nworkload: {{ eps: {eps}, stop: {{ total_events: {total} }} }}\n"
    )
}

/// The seqs of agent `a` the report gives up (its `failed` ranges).
fn failed_seqs(r: &Value, a: u64) -> BTreeSet<u64> {
    let agents = r["accounting"]["agents"].as_array().expect("accounting");
    let mut out = BTreeSet::new();
    for ag in agents.iter().filter(|g| u(&g["agent"]) == a) {
        for p in ag["failed"].as_array().unwrap() {
            out.extend(u(&p[0])..u(&p[1]));
        }
    }
    out
}

fn no_secret(o: &Output, secrets: &[&str]) {
    let text = all(o);
    for s in secrets {
        assert!(!text.contains(s), "a secret is in the output");
    }
}

#[test]
fn items_answered_429_are_resent_alone_and_400s_fail_with_their_type() {
    let mut rules = Rules::new("logs-ib");
    rules.reject_first = Some((7, 3));
    rules.refuse = Some((10, 5));
    let store = BulkStore::start(rules);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "c.yaml",
        &config(
            store.port,
            "{ index: logs-ib }",
            "",
            "aws.cloudtrail",
            2000,
            2000,
        ),
    );
    let (o, r) = run_json(&cfg, 1, 2);
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    let s = &r["summary"];
    // One agent (one thread), seqs 0..2000.
    let refused: BTreeSet<u64> = (0..2000).filter(|q| q % 10 == 5).collect();
    let rejected = (0..2000).filter(|q| q % 7 == 3 && q % 10 != 5).count() as u64;
    assert_eq!(u(&s["events_sent"]), 2000, "{}", all(&o));
    assert_eq!(u(&s["events_failed"]), 200, "{s}");
    assert_eq!(u(&s["events_accepted"]), 1800, "{s}");
    assert_eq!(u(&s["events_resent"]), rejected, "{s}");
    assert_eq!(u(&s["events_failed_by_status"]["400"]), 200, "{s}");
    assert_eq!(
        u(&s["events_failed_by_type"]["mapper_parsing_exception"]),
        200
    );
    assert_eq!(s["events_failed_by_type"].as_object().unwrap().len(), 1);
    assert!(s.get("events_already_stored").is_none(), "{s}");
    // The first item errors with their reasons: a few, each the store's.
    let first = s["item_errors_first"]
        .as_array()
        .expect("item_errors_first");
    assert!(!first.is_empty() && first.len() <= 3, "{s}");
    for e in first {
        let e = e.as_str().unwrap();
        assert!(
            e.starts_with("400 mapper_parsing_exception: failed to parse field [eventTime]"),
            "{e}"
        );
    }
    assert_eq!(failed_seqs(&r, 0), refused);
    // What the store holds: every accepted event once, nothing else.
    let docs = store.docs();
    assert_eq!(docs.len(), 1800);
    let run = r["run_id"].as_str().unwrap();
    for q in (0..2000).filter(|q| !refused.contains(q)) {
        assert!(
            docs.contains_key(&format!("{run}-0-{q}")),
            "seq {q} not stored"
        );
    }
    store.with_seen(|seen| {
        assert_eq!(seen.item_status.get(&429), Some(&rejected));
        assert_eq!(seen.item_status.get(&400), Some(&200));
        assert!(seen.writes.values().all(|&n| n == 1));
    });
    let text = bin()
        .args(["run", "--config", &cfg, "--threads", "1", "--workers", "1"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("e.g. 400 mapper_parsing_exception"),
        "{}",
        all(&text)
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "failed events miss the SLO: {}",
        all(&o)
    );
}

#[test]
fn a_clean_run_stores_every_event_once_through_resends_and_verify_agrees() {
    let mut rules = Rules::new("ib-clean");
    rules.reject_first = Some((5, 0));
    rules.store_then_503_first = true;
    rules.gzip = true;
    rules.pipeline = Some("ib-ingest".into());
    rules.auth = Some(format!("ApiKey {API_KEY}"));
    let store = BulkStore::start(rules);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "c.yaml",
        &config(
            store.port,
            "{ index: ib-clean, pipeline: ib-ingest, op_type: create }",
            "  compression: gzip\n  auth: { scheme: api-key, token_env: IB_TEST_ES_KEY }\n",
            "aws.cloudtrail",
            2000,
            1000,
        ),
    );
    let o = bin()
        .args(support::run_args(&cfg, 2, 4))
        .env("IB_TEST_ES_KEY", API_KEY)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    no_secret(&o, &[API_KEY]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &r["summary"];
    assert_eq!(u(&s["events_sent"]), 2000);
    assert_eq!(u(&s["events_accepted"]), 2000, "{s}");
    assert_eq!(u(&s["events_failed"]), 0, "{s}");
    let (c409, c429) = store.with_seen(|seen| {
        assert_eq!(seen.auth_values.len(), 1);
        (
            seen.item_status.get(&409).copied().unwrap_or(0),
            seen.item_status.get(&429).copied().unwrap_or(0),
        )
    });
    // The first request was stored and answered 503: its resend met 409 for what it held.
    assert!(c409 > 0, "the lost answer's resend met no 409");
    assert_eq!(u(&s["events_already_stored"]), c409, "{s}");
    assert!(c429 >= 300, "a fifth of the ids are refused once: {c429}");
    assert_eq!(u(&s["events_resent"]), c429, "{s}");
    assert_eq!(u(&r["status"]["503"]), 1);
    let docs = store.docs();
    assert_eq!(docs.len(), 2000, "every event stored once");
    // Close the loop: the OpenSearch verifier asks the same store.
    let report = dir.path().join("r.json");
    std::fs::write(&report, &o.stdout).unwrap();
    let v = bin()
        .args(["verify", "--output", "json", "--report"])
        .arg(&report)
        .args([
            "--source",
            &format!("opensearch:{}/ib-clean", store.url()),
            "--auth-scheme",
            "apikey",
            "--token-env",
            "IB_TEST_ES_KEY",
            "--settle-timeout",
            "0s",
        ])
        .env("IB_TEST_ES_KEY", API_KEY)
        .output()
        .unwrap();
    no_secret(&v, &[API_KEY]);
    let vj: Value = serde_json::from_slice(&v.stdout).unwrap_or(Value::Null);
    assert_eq!(v.status.code(), Some(0), "{}", all(&v));
    let src = &vj["sources"][0];
    assert_eq!(u(&src["lost"]), 0, "{vj}");
    assert_eq!(u(&src["duplicated"]), 0, "{vj}");
    let stored: u64 = src["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| u(&a["stored"]))
        .sum();
    assert_eq!(stored, 2000);
}

#[test]
fn basic_auth_a_text_source_and_op_type_index() {
    let mut rules = Rules::new("syslog-ib");
    rules.op_type = "index".into();
    let user = base64::engine::general_purpose::STANDARD.encode(format!("ib:{PASSWORD}"));
    rules.auth = Some(format!("Basic {user}"));
    rules.prefix = "/es".into();
    let store = BulkStore::start(rules);
    let dir = tempfile::tempdir().unwrap();
    let body = config(
        store.port,
        "{ index: syslog-ib, op_type: index }",
        "  auth: { scheme: basic, username: ib, token_env: IB_TEST_ES_PW }\n",
        "linux.syslog",
        600,
        2000,
    )
    .replace(
        &format!("127.0.0.1:{}\"", store.port),
        &format!("127.0.0.1:{}/es\"", store.port),
    );
    let cfg = write_config(dir.path(), "c.yaml", &body);
    let o = bin()
        .args(support::run_args(&cfg, 1, 1))
        .env("IB_TEST_ES_PW", PASSWORD)
        .output()
        .unwrap();
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    no_secret(&o, &[PASSWORD, &user]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(store.docs().len(), 600);
    // A wrong password: the cluster's 401 is an authentication failure (exit 4).
    let o = bin()
        .args(support::run_args(&cfg, 1, 1))
        .env("IB_TEST_ES_PW", "wrong-pw-Qx")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    no_secret(&o, &["wrong-pw-Qx"]);
}

#[test]
fn a_mix_in_mixed_batches_counts_each_source_through_partial_answers() {
    // JSON and text documents in one request; 429 items resent, 400 items failed: each
    // source's events add up, and the sources' rows add up to the run's.
    let mut rules = Rules::new("ib-mix");
    rules.reject_first = Some((5, 1));
    rules.refuse = Some((15, 7));
    let store = BulkStore::start(rules);
    let dir = tempfile::tempdir().unwrap();
    let body = config(
        store.port,
        "{ index: ib-mix }",
        "",
        "aws.cloudtrail",
        1500,
        2000,
    )
    .replace(
        "batch: { max_events: 200 }",
        "batch: { max_events: 200, mix: true }",
    )
    .replace(
        "source: { id: aws.cloudtrail }",
        "source: [{ id: aws.cloudtrail, share: 0.5 }, { id: linux.syslog, share: 0.5 }]",
    );
    let cfg = write_config(dir.path(), "c.yaml", &body);
    let (o, r) = run_json(&cfg, 1, 2);
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    let s = &r["summary"];
    let refused = (0..1500).filter(|q| q % 15 == 7).count() as u64;
    let rejected = (0..1500).filter(|q| q % 5 == 1 && q % 15 != 7).count() as u64;
    assert_eq!(u(&s["events_sent"]), 1500, "{}", all(&o));
    assert_eq!(u(&s["events_failed"]), refused, "{s}");
    assert_eq!(u(&s["events_accepted"]), 1500 - refused, "{s}");
    assert_eq!(u(&s["events_resent"]), rejected, "{s}");
    let rows = r["by_source"].as_array().expect("by_source");
    assert_eq!(rows.len(), 2);
    let (mut sent, mut acc, mut failed) = (0, 0, 0);
    for row in rows {
        assert!(u(&row["events_sent"]) > 500, "{row}");
        assert_eq!(
            u(&row["events_sent"]),
            u(&row["events_accepted"]) + u(&row["events_failed"]),
            "{row}"
        );
        assert!(u(&row["events_failed"]) > 0, "{row}");
        sent += u(&row["events_sent"]);
        acc += u(&row["events_accepted"]);
        failed += u(&row["events_failed"]);
    }
    assert_eq!((sent, acc, failed), (1500, 1500 - refused, refused));
    let docs = store.docs();
    assert_eq!(docs.len() as u64, 1500 - refused);
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
}

#[test]
fn several_clusters_take_the_resends_wherever_they_go() {
    // Two stores, connections round robin: an item answered 429 by one may be stored by the
    // other; between them every event is stored once and each store saw only valid requests.
    let stores: Vec<BulkStore> = (0..2)
        .map(|_| {
            let mut rules = Rules::new("ib-two");
            rules.reject_first = Some((4, 2));
            BulkStore::start(rules)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let body = config(
        stores[0].port,
        "{ index: ib-two }",
        "",
        "aws.cloudtrail",
        1200,
        2000,
    )
    .replace(
        &format!("url: \"http://127.0.0.1:{}\"", stores[0].port),
        &format!(
            "url: [\"http://127.0.0.1:{}\", \"http://127.0.0.1:{}\"]",
            stores[0].port, stores[1].port
        ),
    );
    let cfg = write_config(dir.path(), "c.yaml", &body);
    let (o, r) = run_json(&cfg, 1, 2);
    for st in &stores {
        assert!(st.violations().is_empty(), "{:?}", st.violations());
        assert!(!st.docs().is_empty(), "both targets take batches");
    }
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &r["summary"];
    assert_eq!(u(&s["events_accepted"]), 1200, "{s}");
    let rejected: u64 = stores
        .iter()
        .map(|st| st.with_seen(|x| x.item_status.get(&429).copied().unwrap_or(0)))
        .sum();
    assert_eq!(u(&s["events_resent"]), rejected, "{s}");
    let mut ids: Vec<String> = stores.iter().flat_map(|st| st.docs().into_keys()).collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    // An id refused 429 by one store and resent to the other is stored there alone.
    assert_eq!((n, ids.len()), (1200, 1200));
}

#[test]
fn the_command_line_takes_adapter_elasticsearch() {
    let store = BulkStore::start(Rules::new("ingestbench"));
    let o = bin()
        .args([
            "run",
            "--url",
            &store.url(),
            "--adapter",
            "elasticsearch",
            "--total",
            "300",
            "--eps",
            "2000",
            "--threads",
            "1",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(store.docs().len(), 300);
}

#[test]
fn probe_reads_the_bulk_item_not_just_the_status() {
    let probe = |store: &BulkStore| {
        bin()
            .args(["probe", "--url", &store.url(), "--adapter", "elasticsearch"])
            .args(["--output", "json"])
            .output()
            .unwrap()
    };
    let store = BulkStore::start(Rules::new("ingestbench"));
    let o = probe(&store);
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(!store.docs().is_empty());
    // Every item refused: a 200 whose item is a 400 is a refusal, not a success.
    let mut rules = Rules::new("ingestbench");
    rules.refuse = Some((1, 0));
    let store = BulkStore::start(rules);
    let o = probe(&store);
    assert!(store.violations().is_empty(), "{:?}", store.violations());
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    assert!(
        all(&o).contains("400 mapper_parsing_exception: failed to parse field"),
        "{}",
        all(&o)
    );
    assert!(store.docs().is_empty());
}

#[test]
fn init_writes_an_elasticsearch_config_that_validates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("es.yaml");
    let o = bin()
        .args(["init", "--non-interactive", "--adapter", "elasticsearch"])
        .args([
            "--url",
            "http://127.0.0.1:9200",
            "--token-env",
            "IB_TEST_ES_KEY",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("adapter: elasticsearch"), "{text}");
    assert!(text.contains("scheme: api-key"), "{text}");
    // The commented block is a valid one once uncommented.
    let open = text.replace("  # elasticsearch:", "  elasticsearch:");
    assert_ne!(open, text);
    std::fs::write(&out, open).unwrap();
    let v = bin()
        .args(["validate", "--config"])
        .arg(&out)
        .env("IB_TEST_ES_KEY", "k")
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(0), "{}", all(&v));
}

#[test]
fn elasticsearch_settings_are_checked_with_their_field_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "  adapter: elasticsearch\n  url: \"http://127.0.0.1:9200\"\n  elasticsearch: { index: Logs }\n",
            "target.elasticsearch.index (6:",
            "lower case",
        ),
        (
            "  adapter: lphc\n  url: \"http://127.0.0.1:9200/ingest\"\n  elasticsearch: { index: logs }\n",
            "target.elasticsearch (6:",
            "apply to adapter elasticsearch",
        ),
        (
            "  adapter: elasticsearch\n  url: \"http://127.0.0.1:9200\"\n  hec: { ack: true }\n",
            "target.hec (6:",
            "apply to adapter generic-hec",
        ),
        (
            "  adapter: elasticsearch\n  url: \"http://127.0.0.1:9200/_bulk\"\n",
            "target.url (5:",
            "base URL",
        ),
        (
            "  adapter: elasticsearch\n  url: builtin\n",
            "target.url (5:",
            "not _bulk",
        ),
        (
            "  adapter: elasticsearch\n  url: \"http://127.0.0.1:9200\"\n  auth: { scheme: splunk, token_env: X }\n",
            "target.auth.scheme (6:",
            "does not fit adapter elasticsearch",
        ),
        (
            "  adapter: elasticsearch\n  url: \"http://127.0.0.1:9200\"\n  elasticsearch: { op_type: upsert }\n",
            "target.elasticsearch.op_type (6:",
            "",
        ),
        (
            "  adapter: elasticsearch\n  url: \"http://127.0.0.1:9200\"\n  elasticsearch: { pipeline: \"a b\" }\n",
            "target.elasticsearch.pipeline (6:",
            "letters, digits",
        ),
        (
            "  adapter: elasticsearch\n  url: \"http://127.0.0.1:9200\"\n  elasticsearch: { indx: logs }\n",
            "target.elasticsearch.indx (6:",
            "index",
        ),
    ];
    for (i, (target, field, words)) in cases.iter().enumerate() {
        let body = format!(
            "schema_version: \"1.0\"\n# a comment line\ntarget:\n{target}source: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 10, stop: {{ after: 5s }} }}\n"
        );
        let cfg = write_config(dir.path(), &format!("c{i}.yaml"), &body);
        let o = bin().args(["validate", "--config", &cfg]).output().unwrap();
        let text = all(&o);
        assert_eq!(o.status.code(), Some(2), "case {i}: {text}");
        assert!(text.contains(field), "case {i}: want {field:?} in {text}");
        assert!(text.contains(words), "case {i}: want {words:?} in {text}");
    }
}
