//! `ingestbench verify` against the search-API stores, tested against recorded answers, not
//! live servers: a real run against a standalone sink (30 % of batches refused, one attempt)
//! gives a saved report; a fake OpenSearch or Splunk (`support::search_store`, 127.0.0.1 port 0)
//! then holds that report's accepted seqs minus some removed, plus some duplicated, a stray
//! and another run's events, and answers in the APIs' documented shapes. The verifier's counts
//! must be exact (lost, duplicated, the missing seqs listed, the ingest lag's percentiles), its
//! requests the documented ones (paths, methods, JSON bodies with `after` paging and the `min`
//! sub-aggregations, form fields, the listing's `eval`, the auth header), and its exits
//! 0 / 2 / 4 / 5 / 6 as documented, never printing a secret. The held events are dated a second
//! before their tags' `sent` (as a backfill would date them) and a fifth of the tags carry no
//! `sent`: the lag must be measured from `sent` where it is there and from the event's time
//! only where it is not, each counted.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Output;
use std::sync::OnceLock;

use base64::Engine;
use serde_json::{Value, json};

use support::search_store::{Doc, FakeStore, Kind, Recorded, Setup};
use support::{SinkProc, all, bin};

const PASSWORD: &str = "pw-Zk8q0f3a-not-printed";
const SPLUNK_TOKEN: &str = "tok-9Qe1Lm4x-not-printed";
const BASE_MS: u64 = 1_700_000_000_000;
const OTHER_RUN: &str = "r-otherrun0000";

/// The saved report of one real run, shared by the tests of this file.
struct RealRun {
    report: PathBuf,
    run_id: String,
    /// Per agent: events_sent and the failed ranges.
    agents: BTreeMap<u32, (u64, Vec<(u64, u64)>)>,
}

impl RealRun {
    fn accepted(&self, agent: u32) -> Vec<u64> {
        let (sent, failed) = &self.agents[&agent];
        (0..*sent)
            .filter(|s| !failed.iter().any(|(f, t)| f <= s && s < t))
            .collect()
    }

    fn first_failed(&self) -> Option<(u32, u64)> {
        self.agents
            .iter()
            .find_map(|(a, (_, failed))| failed.first().map(|(f, _)| (*a, *f)))
    }
}

fn real_run() -> &'static RealRun {
    static RUN: OnceLock<RealRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--fault-503", "0.3"]);
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let cfg = support::write_config(
            &dir,
            &format!("verify_search-{}.yaml", std::process::id()),
            &format!(
                "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: \"http://127.0.0.1:{}/ingest\"\n  batch: {{ max_events: 10 }}\n  retry: {{ max_attempts: 1 }}\nsource: {{ id: firewall.traffic }}\nworkload: {{ eps: 2000, workers: 2, stop: {{ total_events: 1600 }} }}\nslo: {{ max_failed_events: 100000 }}\n",
                sink.port
            ),
        );
        let o = bin()
            .args(["run", "--config", &cfg, "--output", "json", "--no-pin", "--threads", "2"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", all(&o));
        let report = dir.join(format!("verify_search-{}.json", std::process::id()));
        std::fs::write(&report, &o.stdout).unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut agents = BTreeMap::new();
        for a in v["accounting"]["agents"].as_array().unwrap() {
            let failed = a["failed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap()))
                .collect();
            agents.insert(
                a["agent"].as_u64().unwrap() as u32,
                (a["events_sent"].as_u64().unwrap(), failed),
            );
        }
        assert!(agents.len() >= 2, "two agents: {agents:?}");
        RealRun {
            report,
            run_id: v["run_id"].as_str().unwrap().to_string(),
            agents,
        }
    })
}

/// What the fake store holds, and what the verifier must find.
struct Held {
    docs: Vec<Doc>,
    /// Per agent: removed seqs, sorted.
    removed: BTreeMap<u32, Vec<u64>>,
    /// Per agent: duplicated seq and its extra copies.
    dups: BTreeMap<u32, (u64, u64)>,
    stray: Option<(u32, u64)>,
}

fn lag_ms(seq: u64) -> u64 {
    100 + (seq * 37) % 900
}

/// How long before its send an event is dated.
const DATED_BEFORE_SENT_MS: u64 = 1000;

/// A document whose tag carries `sent` unless its seq is 2 modulo 5.
fn doc(run: &str, agent: u32, seq: u64, copies: u64) -> Doc {
    let sent = BASE_MS + seq * 10 + u64::from(agent) * 3;
    Doc {
        run: run.to_string(),
        agent,
        seq,
        copies,
        time_ms: sent - DATED_BEFORE_SENT_MS,
        sent_ms: (seq % 5 != 2).then_some(sent),
        ingested_ms: sent + lag_ms(seq),
    }
}

/// The documents with every tag carrying `sent` (`true`) or none (`false`).
fn all_sent(docs: &[Doc], sent: bool) -> Vec<Doc> {
    docs.iter()
        .map(|d| Doc {
            sent_ms: sent.then_some(d.time_ms + DATED_BEFORE_SENT_MS),
            ..d.clone()
        })
        .collect()
}

/// The lag OpenSearch must give a document (its first copy): ingested − sent, else − time.
fn os_lag(d: &Doc) -> i64 {
    d.ingested_ms as i64 - d.sent_ms.unwrap_or(d.time_ms) as i64
}

/// The lag Splunk must give each copy: `_indextime` (whole seconds) − sent, else − `_time`.
fn splunk_lag(d: &Doc) -> i64 {
    (d.ingested_ms / 1000 * 1000) as i64 - d.sent_ms.unwrap_or(d.time_ms) as i64
}

/// `ingest_lag` against the lags expected (signed ms): count, percentiles, max, negatives.
fn check_lag(lag: &Value, expected: &[i64], measure: &str, resolution_ms: u64) {
    let negative = expected.iter().filter(|l| **l < 0).count() as u64;
    let mut lags: Vec<u64> = expected.iter().map(|l| (*l).max(0) as u64).collect();
    lags.sort_unstable();
    let max = *lags.last().unwrap();
    assert!(max < 2048, "HDR is exact under 2,048 only: {max}");
    assert_eq!(lag["measure"], measure, "{lag}");
    assert_eq!(lag["count"], lags.len() as u64, "{lag}");
    assert_eq!(lag["p50_ms"], quantile(&lags, 0.5), "{lag}");
    assert_eq!(lag["p99_ms"], quantile(&lags, 0.99), "{lag}");
    assert_eq!(lag["max_ms"], max, "{lag}");
    assert_eq!(lag["negative"], negative, "{lag}");
    assert_eq!(lag["resolution_ms"], resolution_ms, "{lag}");
}

/// The report's accepted seqs, with agent A's accepted[5..8] and B's accepted[100] and last
/// removed, A's accepted[10] held three times and B's accepted[20] twice, one seq of a failed
/// range held (unexpected, when the run failed any), and three events of another run.
fn held(r: &RealRun) -> Held {
    let ids: Vec<u32> = r.agents.keys().copied().collect();
    let (a, b) = (ids[0], ids[1]);
    let (acc_a, acc_b) = (r.accepted(a), r.accepted(b));
    let mut removed = BTreeMap::new();
    removed.insert(a, acc_a[5..8].to_vec());
    removed.insert(b, vec![acc_b[100], *acc_b.last().unwrap()]);
    let mut dups = BTreeMap::new();
    dups.insert(a, (acc_a[10], 2));
    dups.insert(b, (acc_b[20], 1));
    let mut docs = Vec::new();
    for &agent in r.agents.keys() {
        for s in r.accepted(agent) {
            if removed.get(&agent).is_some_and(|v| v.contains(&s)) {
                continue;
            }
            let extra = dups.get(&agent).filter(|d| d.0 == s).map_or(0, |d| d.1);
            docs.push(doc(&r.run_id, agent, s, 1 + extra));
        }
    }
    let stray = r.first_failed();
    if let Some((agent, seq)) = stray {
        docs.push(doc(&r.run_id, agent, seq, 1));
    }
    for s in 0..3 {
        docs.push(doc(OTHER_RUN, a, s, 1));
    }
    Held {
        docs,
        removed,
        dups,
        stray,
    }
}

fn ranges(seqs: &[u64]) -> Value {
    let mut out: Vec<[u64; 2]> = Vec::new();
    for &s in seqs {
        match out.last_mut() {
            Some(r) if r[1] == s => r[1] = s + 1,
            _ => out.push([s, s + 1]),
        }
    }
    json!(out)
}

/// HDR's nearest rank (`value_at_quantile`): values under 2,048 are exact.
fn quantile(sorted: &[u64], q: f64) -> u64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank - 1]
}

fn verify(extra: &[&str], envs: &[(&str, &str)]) -> (Output, Value) {
    let r = real_run();
    let mut c = bin();
    c.args(["verify", "--output", "json", "--report"])
        .arg(&r.report)
        .args(extra);
    for (k, v) in envs {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o, v)
}

fn no_secret(o: &Output) {
    let text = all(o);
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("verifier:{PASSWORD}"));
    for s in [PASSWORD, SPLUNK_TOKEN, basic.as_str()] {
        assert!(!text.contains(s), "a secret was printed: {text}");
    }
}

fn basic_header() -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("verifier:{PASSWORD}"));
    format!("Basic {b64}")
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = l.local_addr().unwrap().port();
    drop(l);
    p
}

/// Per agent (in the report's order): expected lost, lost_first, duplicated, duplicated_first.
fn check_agents(v: &Value, r: &RealRun, h: &Held) {
    let src = &v["sources"][0];
    for (i, (&agent, _)) in r.agents.iter().enumerate() {
        let a = &src["agents"][i];
        assert_eq!(a["agent"], agent);
        let removed = h.removed.get(&agent).cloned().unwrap_or_default();
        let expected = r.accepted(agent).len() as u64;
        assert_eq!(a["expected"], expected, "agent {agent}");
        assert_eq!(a["lost"], removed.len() as u64, "agent {agent}: {a}");
        assert_eq!(a["stored"], expected - removed.len() as u64);
        assert_eq!(a["lost_first"], ranges(&removed), "agent {agent}");
        let (dseq, extra) = h.dups[&agent];
        assert_eq!(a["duplicated"], extra, "agent {agent}");
        assert_eq!(a["duplicated_first"], json!([dseq]));
        let unexpected = h.stray.filter(|s| s.0 == agent).map(|s| s.1);
        assert_eq!(a["unexpected"], u64::from(unexpected.is_some()));
        assert_eq!(
            a["unexpected_first"],
            json!(unexpected.into_iter().collect::<Vec<_>>())
        );
        assert_eq!(a["seqs_listed"], true);
    }
    let lost: usize = h.removed.values().map(Vec::len).sum();
    let dup: u64 = h.dups.values().map(|d| d.1).sum();
    assert_eq!(src["lost"], lost as u64);
    assert_eq!(src["duplicated"], dup);
    assert_eq!(src["unknown_agent_events"], 0);
}

fn searches(reqs: &[Recorded]) -> Vec<&Recorded> {
    reqs.iter()
        .filter(|r| r.path.ends_with("/_search"))
        .collect()
}

#[test]
fn opensearch_counts_exactly_pages_with_after_and_measures_lag() {
    let r = real_run();
    let h = held(r);
    let mut setup = Setup::new(Kind::OpenSearch, h.docs.clone());
    setup.auth = Some(basic_header());
    let store = FakeStore::start(setup);
    let src = format!("opensearch:{}/ib-*", store.url());
    let args = [
        "--source",
        &src,
        "--settle-timeout",
        "0s",
        "--page-size",
        "500",
        "--user",
        "verifier",
        "--token-env",
        "IB_TEST_OS_PASSWORD",
    ];
    let env = [("IB_TEST_OS_PASSWORD", PASSWORD)];
    let (o, v) = verify(&args, &env);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    no_secret(&o);
    let s = &v["sources"][0];
    assert_eq!(s["kind"], "opensearch");
    assert_eq!(s["seqs_listed"], true);
    check_agents(&v, r, &h);
    let run_docs: Vec<&Doc> = h.docs.iter().filter(|d| d.run == r.run_id).collect();
    assert_eq!(s["scanned"], run_docs.iter().map(|d| d.copies).sum::<u64>());
    assert_eq!(v["pass"], false);
    assert!(v["reasons"][0].as_str().unwrap().contains("events lost"));

    // The lag: one per (agent, seq) bucket, its first copy's, from sent where the tag has it.
    let lags: Vec<i64> = run_docs.iter().map(|d| os_lag(d)).collect();
    check_lag(
        &s["ingest_lag"],
        &lags,
        "event.ingested - ingestbench.sent, else event.ingested - @timestamp",
        1,
    );
    let by_sent = run_docs.iter().filter(|d| d.sent_ms.is_some()).count();
    assert!(by_sent > 0 && by_sent < run_docs.len(), "both kinds held");
    assert_eq!(
        s["notes"],
        json!([format!(
            "ingest lag: {by_sent} events measured as event.ingested - ingestbench.sent, {} \
             whose tags carry no send time as event.ingested - @timestamp",
            run_docs.len() - by_sent
        )])
    );

    // The requests: refresh, count, then composite pages, each with the auth header.
    let reqs = store.requests();
    assert!(reqs.iter().all(|q| q.method == "POST"), "{reqs:?}");
    assert!(
        reqs.iter()
            .all(|q| q.header("Authorization") == Some(basic_header().as_str()))
    );
    assert_eq!(reqs[0].path, "/ib-*/_refresh");
    assert_eq!(reqs[1].path, "/ib-*/_count");
    let run_terms = json!([{"term": {"ingestbench.run": r.run_id}},
                           {"term": {"ingestbench.run.keyword": r.run_id}}]);
    assert_eq!(
        reqs[1].json()["query"]["bool"]["filter"][0]["bool"]["should"],
        run_terms
    );
    let keys: BTreeSet<(u32, u64)> = run_docs.iter().map(|d| (d.agent, d.seq)).collect();
    let keys: Vec<(u32, u64)> = keys.into_iter().collect();
    let pages = searches(&reqs);
    assert_eq!(
        pages.len(),
        keys.len().div_ceil(500) + 1,
        "the last page is empty"
    );
    for (i, p) in pages.iter().enumerate() {
        assert_eq!(p.path, "/ib-*/_search");
        assert_eq!(p.header("Content-Type"), Some("application/json"));
        let b = p.json();
        assert_eq!(b["size"], 0);
        assert_eq!(b["query"]["bool"]["filter"][0]["bool"]["should"], run_terms);
        let comp = &b["aggs"]["acct"]["composite"];
        assert_eq!(comp["size"], 500);
        assert_eq!(
            comp["sources"],
            json!([{"agent": {"terms": {"field": "ingestbench.agent"}}},
                   {"seq": {"terms": {"field": "ingestbench.seq"}}}])
        );
        assert_eq!(
            b["aggs"]["acct"]["aggs"],
            json!({"ingested": {"min": {"field": "event.ingested"}},
                   "sent": {"min": {"field": "ingestbench.sent"}},
                   "event_time": {"min": {"field": "@timestamp"}}})
        );
        // Page i asks after the last key of page i-1.
        match i {
            0 => assert!(comp.get("after").is_none(), "{comp}"),
            _ => {
                let (a, s) = keys[(i * 500).min(keys.len()) - 1];
                assert_eq!(comp["after"], json!({"agent": a, "seq": s}), "page {i}");
            }
        }
    }
    assert!(!reqs.iter().any(|q| q.body.contains("cardinality")));

    // Text output: the missing seqs and the lag.
    store.clear();
    let o = bin()
        .args(["verify", "--report"])
        .arg(&r.report)
        .args(args)
        .env("IB_TEST_OS_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    no_secret(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    let a = *r.agents.keys().next().unwrap();
    let shown: Vec<String> = ranges(&h.removed[&a])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let (f, t) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
            if t - f == 1 {
                f.to_string()
            } else {
                format!("{f}..{}", t - 1)
            }
        })
        .collect();
    let want = format!("lost {} dup 2", h.removed[&a].len());
    assert!(text.contains(&want), "{want}: {text}");
    let want = format!("; missing {};", shown.join(","));
    assert!(text.contains(&want), "{want}: {text}");
    assert!(
        text.contains(
            "ingest lag (event.ingested - ingestbench.sent, else event.ingested - @timestamp): \
             p50 "
        ),
        "{text}"
    );
    assert!(text.contains("FAIL (exit 5)"), "{text}");

    // Within limits set by flags: exit 0.
    let lost: usize = h.removed.values().map(Vec::len).sum();
    let dup: u64 = h.dups.values().map(|d| d.1).sum();
    let (lost, dup) = (lost.to_string(), dup.to_string());
    let mut within = args.to_vec();
    within.extend(["--max-lost", &lost, "--max-dup", &dup]);
    let (o, v) = verify(&within, &env);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(v["pass"], true);
}

#[test]
fn opensearch_refusals_read_only_users_and_bad_input() {
    let r = real_run();
    let h = held(r);
    let mut setup = Setup::new(Kind::OpenSearch, h.docs.clone());
    setup.auth = Some(basic_header());
    setup.refresh_status = 403;
    setup.refuse_min = vec!["@timestamp".into(), "ingestbench.sent".into()];
    let store = FakeStore::start(setup);
    let src = format!("elasticsearch:{}/ib", store.url());
    let base = [
        "--source",
        src.as_str(),
        "--settle-timeout",
        "0s",
        "--user",
        "verifier",
    ];

    // A wrong password: HTTP 401, exit 4, neither password printed.
    let mut a = base.to_vec();
    a.extend(["--token-env", "IB_TEST_OS_PASSWORD"]);
    let (o, _) = verify(&a, &[("IB_TEST_OS_PASSWORD", "wrong-pw-also-secret")]);
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("HTTP 401") && err.contains("not authenticated"),
        "{err}"
    );
    assert!(!all(&o).contains("wrong-pw-also-secret"));
    no_secret(&o);

    // A read-only user (refresh refused) and time and sent fields that cannot be aggregated
    // (mapped as text): the counts are still exact, the lag is absent, both said in notes.
    store.clear();
    let (o, v) = verify(&a, &[("IB_TEST_OS_PASSWORD", PASSWORD)]);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    no_secret(&o);
    let s = &v["sources"][0];
    assert_eq!(s["kind"], "elasticsearch");
    assert!(s.get("ingest_lag").is_none(), "{s}");
    check_agents(&v, r, &h);
    let notes = s["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0]
            .as_str()
            .unwrap()
            .contains("_refresh was refused (HTTP 403"),
        "{notes:?}"
    );
    let n = notes[1].as_str().unwrap();
    assert!(
        n.starts_with(
            "ingest lag not measured: the store refused `min` on event.ingested / \
             ingestbench.sent / @timestamp (HTTP 400: "
        ) && n.contains("Field [@timestamp] of type [text]"),
        "{n}"
    );
    // The first page asked with all three, then without @timestamp, then without sent, then
    // without any; the next pages without any.
    let reqs = store.requests();
    let pages = searches(&reqs);
    let subs: Vec<Value> = pages[..4]
        .iter()
        .map(|p| p.json()["aggs"]["acct"]["aggs"].clone())
        .collect();
    let ing = json!({"min": {"field": "event.ingested"}});
    let sent = json!({"min": {"field": "ingestbench.sent"}});
    let time = json!({"min": {"field": "@timestamp"}});
    assert_eq!(
        subs,
        vec![
            json!({"ingested": ing, "sent": sent, "event_time": time}),
            json!({"ingested": ing, "sent": sent}),
            json!({"ingested": ing, "event_time": time}),
            Value::Null
        ]
    );
    assert!(
        pages[..4]
            .iter()
            .all(|p| p.json()["aggs"]["acct"]["composite"].get("after").is_none())
    );
    assert!(
        pages[4..]
            .iter()
            .all(|p| p.json()["aggs"]["acct"].get("aggs").is_none())
    );

    // Unreachable: exit 6. Bad specs and flags: exit 2, before any request.
    let dead = format!("opensearch:http://127.0.0.1:{}/ib", closed_port());
    let (o, _) = verify(&["--source", &dead, "--settle-timeout", "0s"], &[]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    store.clear();
    for bad in [
        vec!["--source", "opensearch:http://127.0.0.1:1"],
        vec!["--source", "opensearch:http://u:p@127.0.0.1:1/ib"],
        vec!["--source", &src, "--page-size", "0"],
        vec!["--source", &src, "--seq-field", "seq | x"],
        vec!["--source", &src, "--user", "verifier"],
        vec![
            "--source",
            &src,
            "--auth-scheme",
            "digest",
            "--token-env",
            "X",
        ],
        vec!["--source", &src, "--token-env", "IB_TEST_SURELY_UNSET"],
        vec!["--source", "splunk:ftp://127.0.0.1:8089"],
        vec![
            "--source",
            "splunk:http://127.0.0.1:1",
            "--splunk-index",
            "a b",
        ],
    ] {
        let (o, _) = verify(&bad, &[]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", all(&o));
    }
    // The https CA file is read when an https store is named: a missing one is exit 2.
    let (o, _) = verify(
        &[
            "--source",
            "opensearch:https://127.0.0.1:1/ib",
            "--ca-file",
            "/nonexistent/ca.pem",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("--ca-file"), "{}", all(&o));
    assert!(store.requests().is_empty());
}

#[test]
fn splunk_counts_lists_and_measures_lag() {
    let r = real_run();
    let h = held(r);
    let mut setup = Setup::new(Kind::Splunk, h.docs.clone());
    setup.auth = Some(format!("Bearer {SPLUNK_TOKEN}"));
    setup.splunk_index = "ib".into();
    let store = FakeStore::start(setup);
    let src = format!("splunk:{}", store.url());
    let env = [("IB_TEST_SPLUNK_TOKEN", SPLUNK_TOKEN)];
    let base = [
        "--source",
        src.as_str(),
        "--splunk-index",
        "ib",
        "--token-env",
        "IB_TEST_SPLUNK_TOKEN",
    ];
    let mut a = base.to_vec();
    a.extend(["--settle-timeout", "5s"]);
    let (o, v) = verify(&a, &env);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    no_secret(&o);
    let s = &v["sources"][0];
    assert_eq!(s["kind"], "splunk");
    assert_eq!(s["settle"]["settled"], true);
    check_agents(&v, r, &h);
    let run_docs: Vec<&Doc> = h.docs.iter().filter(|d| d.run == r.run_id).collect();
    assert_eq!(s["scanned"], run_docs.iter().map(|d| d.copies).sum::<u64>());

    // The lag: every copy's, `_indextime` (whole seconds) minus sent where the tag has it,
    // else minus `_time` (ms).
    let copies = |sent: bool| -> Vec<i64> {
        run_docs
            .iter()
            .filter(|d| d.sent_ms.is_some() == sent)
            .flat_map(|d| std::iter::repeat_n(splunk_lag(d), d.copies as usize))
            .collect()
    };
    let (by_sent, by_time) = (copies(true), copies(false));
    assert!(
        !by_sent.is_empty() && !by_time.is_empty(),
        "both kinds held"
    );
    assert!(
        by_sent.iter().any(|l| *l < 0),
        "whole seconds make some negative"
    );
    check_lag(
        &s["ingest_lag"],
        &[by_sent.clone(), by_time.clone()].concat(),
        "_indextime - ingestbench.sent, else _indextime - _time",
        1000,
    );
    assert_eq!(
        s["notes"],
        json!([format!(
            "ingest lag: {} events measured as _indextime - ingestbench.sent, {} whose tags \
             carry no send time as _indextime - _time",
            by_sent.len(),
            by_time.len()
        )])
    );

    // The requests: settling counts, then the stats search, then the listing; every one a
    // form POST to the v2 export with the bearer token.
    let reqs = store.requests();
    assert!(reqs.len() >= 4, "{reqs:?}");
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let run = &r.run_id;
    let base_search = format!("search index=ib ingestbench.run=\"{run}\"");
    for q in &reqs {
        assert_eq!(
            (q.method.as_str(), q.path.as_str()),
            ("POST", "/services/search/v2/jobs/export")
        );
        assert_eq!(
            q.header("Authorization"),
            Some(format!("Bearer {SPLUNK_TOKEN}").as_str())
        );
        assert!(
            q.header("Content-Type")
                .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded")),
            "{q:?}"
        );
        let names: Vec<String> = q.form().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            names,
            ["search", "output_mode", "earliest_time", "latest_time"]
        );
        assert_eq!(q.form_field("output_mode").as_deref(), Some("json"));
        assert_eq!(q.form_field("earliest_time").as_deref(), Some("0"));
        let latest: u64 = q.form_field("latest_time").unwrap().parse().unwrap();
        assert!(latest > now_s && latest <= now_s + 86_400 + 60, "{latest}");
        assert!(q.form_field("search").unwrap().starts_with(&base_search));
    }
    let n = reqs.len();
    for q in &reqs[..n - 2] {
        assert_eq!(
            q.form_field("search").unwrap(),
            format!("{base_search} | stats count")
        );
    }
    assert_eq!(
        reqs[n - 2].form_field("search").unwrap(),
        format!(
            "{base_search} | stats count AS copies dc(ingestbench.seq) AS distinct \
             min(ingestbench.seq) AS min_seq max(ingestbench.seq) AS max_seq by ingestbench.agent"
        )
    );
    assert_eq!(
        reqs[n - 1].form_field("search").unwrap(),
        format!(
            "{base_search} | eval ib_lag_ms=if(isnotnull('ingestbench.sent'), \
             _indextime*1000-'ingestbench.sent', (_indextime-_time)*1000), \
             ib_by_sent=if(isnotnull('ingestbench.sent'), 1, 0) | fields ingestbench.agent \
             ingestbench.seq ib_lag_ms ib_by_sent | fields - _*"
        )
    );

    // Counts only: the stats search alone, lost and duplicated counted, seqs not listed.
    store.clear();
    let mut a = base.to_vec();
    a.extend(["--settle-timeout", "0s", "--splunk-counts-only"]);
    let (o, v) = verify(&a, &env);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    let s = &v["sources"][0];
    let lost: usize = h.removed.values().map(Vec::len).sum();
    let dup: u64 = h.dups.values().map(|d| d.1).sum();
    // The stray (a seq in a failed range) shows in the counts as one distinct seq too many:
    // counts cannot tell it from a stored one, so a stored seq below it looks present.
    let stray_hides = u64::from(h.stray.is_some());
    assert_eq!(s["seqs_listed"], false);
    assert_eq!(s["lost"], lost as u64 - stray_hides.min(lost as u64));
    assert_eq!(s["duplicated"], dup);
    assert!(s["agents"][0]["lost_first"].as_array().unwrap().is_empty());
    assert!(s.get("ingest_lag").is_none());
    assert_eq!(store.requests().len(), 1);

    // A session key (`Authorization: Splunk KEY`) is refused here: exit 4, nothing printed.
    let mut a = base.to_vec();
    a.extend(["--settle-timeout", "0s", "--auth-scheme", "splunk"]);
    store.clear();
    let (o, _) = verify(&a, &env);
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    no_secret(&o);
    assert_eq!(
        store.requests()[0].header("Authorization"),
        Some(format!("Splunk {SPLUNK_TOKEN}").as_str())
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("HTTP 401"));

    // The wrong index holds nothing: everything lost, exit 5.
    let mut a = base.to_vec();
    a[3] = "main";
    a.extend(["--settle-timeout", "0s"]);
    let (o, v) = verify(&a, &env);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    assert_eq!(v["sources"][0]["stored"], 0);

    // Unreachable: exit 6.
    let dead = format!("splunk:http://127.0.0.1:{}", closed_port());
    let (o, _) = verify(&["--source", &dead, "--settle-timeout", "0s"], &[]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
}

#[test]
fn splunk_search_failing_midway_is_no_count() {
    let r = real_run();
    let mut setup = Setup::new(Kind::Splunk, held(r).docs);
    setup.fatal_listing = true;
    let store = FakeStore::start(setup);
    let src = format!("splunk:{}", store.url());
    let (o, v) = verify(&["--source", &src, "--settle-timeout", "0s"], &[]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert_eq!(v, Value::Null, "no verdict is printed");
    assert!(all(&o).contains("the search failed: FATAL"), "{}", all(&o));
}

/// Reads `docs` from a fresh fake store of `kind`, `refuse_min` refused: the source's result.
fn read_lag(kind: Kind, docs: Vec<Doc>, refuse_min: &[&str]) -> Value {
    let mut setup = Setup::new(kind, docs);
    setup.refuse_min = refuse_min.iter().map(|f| f.to_string()).collect();
    let store = FakeStore::start(setup);
    let src = match kind {
        Kind::OpenSearch => format!("opensearch:{}/ib", store.url()),
        Kind::Splunk => format!("splunk:{}", store.url()),
    };
    let (o, v) = verify(&["--source", &src, "--settle-timeout", "0s"], &[]);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    v["sources"][0].clone()
}

fn lag_notes(s: &Value) -> Vec<String> {
    s["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.contains("ingest lag"))
        .map(str::to_string)
        .collect()
}

#[test]
fn one_measure_when_every_tag_has_sent_or_none_does() {
    let r = real_run();
    let docs = held(r).docs;
    for sent in [true, false] {
        let docs = all_sent(&docs, sent);
        let run_docs: Vec<&Doc> = docs.iter().filter(|d| d.run == r.run_id).collect();

        let s = read_lag(Kind::OpenSearch, docs.clone(), &[]);
        let lags: Vec<i64> = run_docs.iter().map(|d| os_lag(d)).collect();
        let measure = if sent {
            "event.ingested - ingestbench.sent"
        } else {
            "event.ingested - @timestamp"
        };
        check_lag(&s["ingest_lag"], &lags, measure, 1);
        assert!(lag_notes(&s).is_empty(), "{s}");

        let s = read_lag(Kind::Splunk, docs.clone(), &[]);
        let lags: Vec<i64> = run_docs
            .iter()
            .flat_map(|d| std::iter::repeat_n(splunk_lag(d), d.copies as usize))
            .collect();
        let measure = if sent {
            "_indextime - ingestbench.sent"
        } else {
            "_indextime - _time"
        };
        check_lag(&s["ingest_lag"], &lags, measure, 1000);
        assert!(lag_notes(&s).is_empty(), "{s}");
    }
}

#[test]
fn opensearch_steps_down_when_min_is_refused() {
    let r = real_run();
    let docs = held(r).docs;
    let run_docs: Vec<&Doc> = docs.iter().filter(|d| d.run == r.run_id).collect();

    // A send time mapped as text: every document measured from its own time, said in a note.
    let s = read_lag(Kind::OpenSearch, docs.clone(), &["ingestbench.sent"]);
    let lags: Vec<i64> = run_docs
        .iter()
        .map(|d| d.ingested_ms as i64 - d.time_ms as i64)
        .collect();
    check_lag(&s["ingest_lag"], &lags, "event.ingested - @timestamp", 1);
    let notes = lag_notes(&s);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "ingest lag from @timestamp only, not the tags' send time: the store refused `min` \
             on ingestbench.sent (HTTP 400: "
        ) && notes[0].contains("Field [ingestbench.sent] of type [text]"),
        "{notes:?}"
    );

    // An event time mapped as text: only the documents whose tags carry sent are measured.
    let s = read_lag(Kind::OpenSearch, docs.clone(), &["@timestamp"]);
    let lags: Vec<i64> = run_docs
        .iter()
        .filter(|d| d.sent_ms.is_some())
        .map(|d| os_lag(d))
        .collect();
    assert!(lags.len() < run_docs.len());
    check_lag(
        &s["ingest_lag"],
        &lags,
        "event.ingested - ingestbench.sent",
        1,
    );
    let notes = lag_notes(&s);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "ingest lag from ingestbench.sent only: the store refused `min` on @timestamp \
             beside it (HTTP 400: "
        ),
        "{notes:?}"
    );
}
