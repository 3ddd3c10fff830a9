//! `verify:` in a run's config, end to end with the real binary and a standalone
//! `ingestbench sink` on 127.0.0.1: the stores are asked once the run has ended, the answer is
//! the report's `store_verification` and the verdict follows it. A sink that refuses a share
//! of batches (503, one attempt each) holds exactly the accepted events: exit 0, the refused
//! ones are not called lost, and the loss stages add up; a file that holds none of the run's
//! events beside it: exit 5 naming that store and the lost count; an unreachable store exits
//! 6; a bad spec or an untagged run with `verify` exits 2 naming the field and its line.

mod support;

use serde_json::Value;
use support::{SinkProc, all, bin, write_config};

/// A run of `total` events to the sink at `port` (batches of 10, one attempt each), with
/// `verify` as given; the JSON report is written to `report.json` beside the config and the
/// text report is what the run prints.
fn config(dir: &std::path::Path, port: u16, total: u32, verify: &str) -> String {
    let report = dir.join("report.json");
    write_config(
        dir,
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: \"http://127.0.0.1:{port}/ingest\"\n  batch: {{ max_events: 10 }}\n  retry: {{ max_attempts: 1 }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 2000, stop: {{ total_events: {total} }} }}\nobservability: {{ report: \"{}\" }}\nslo: {{ max_failed_events: 100000 }}\n{verify}",
            report.display()
        ),
    )
}

/// Runs `cfg`; gives the exit code, the text output and the JSON report the run wrote.
fn run(cfg: &str, dir: &std::path::Path) -> (Option<i32>, String, Value) {
    let o = bin()
        .args(["run", "--config", cfg, "--no-pin", "--threads", "2"])
        .output()
        .unwrap();
    let rep = std::fs::read_to_string(dir.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (o.status.code(), all(&o), rep)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Every scheduled event in one stage: not sent + refused + accepted (+ unattributed).
fn assert_stages_add_up(v: &Value) {
    let l = &v["loss"];
    let staged = u(&l["not_sent"]) + u(&l["refused"]["events"]) + u(&l["accepted"]);
    assert_eq!(l["unattributed"], 0, "{l:#}");
    assert_eq!(staged, u(&l["scheduled"]), "{l:#}");
    let r = &l["refused"];
    assert_eq!(
        u(&r["retries_exhausted"]) + u(&r["oversize"]) + u(&r["other"]),
        u(&r["events"]),
        "{r:#}"
    );
    if !l["stored"].is_null() {
        assert_eq!(
            u(&l["stored"]) + u(&l["accepted_not_stored"]),
            u(&l["accepted"]),
            "{l:#}"
        );
    }
}

#[test]
fn a_sink_that_holds_the_accepted_events_passes() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--fault-503", "0.2"]);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sink:http://127.0.0.1:{}", sink.port);
    let cfg = config(
        dir.path(),
        sink.port,
        2000,
        &format!("verify:\n  sources: [\"{url}\"]\n  settle_timeout: 5s\n"),
    );
    let (code, text, v) = run(&cfg, dir.path());
    assert_eq!(code, Some(0), "{text}");
    let s = &v["summary"];
    let failed = u(&s["events_failed"]);
    assert!(failed > 0, "a 20 % refusal share failed nothing: {s}");

    let sv = &v["store_verification"];
    assert_eq!(sv["status"], "verified", "{sv:#}");
    assert_eq!(sv["sources"], serde_json::json!([url]));
    assert_eq!(sv["settle_timeout_s"], 5.0);
    let res = &sv["result"];
    assert_eq!(res["schema"], "ingestbench.verify/1");
    assert_eq!(res["run_id"], v["run_id"]);
    assert_eq!(res["pass"], true, "{res:#}");
    let src = &res["sources"][0];
    assert_eq!(src["source"], url.as_str());
    assert_eq!(src["settle"]["settled"], true, "{src:#}");
    // The refused events are not expected, so not lost: the sink holds every accepted one.
    assert_eq!(src["expected"], s["events_accepted"], "{src:#}");
    assert_eq!(src["stored"], s["events_accepted"], "{src:#}");
    assert_eq!(
        (src["lost"].as_u64(), src["duplicated"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v["verdict"]["exit_code"], 0);

    // Loss by stage: the refusals by cause, the store's split of the accepted.
    let l = &v["loss"];
    assert_stages_add_up(&v);
    assert_eq!(u(&l["scheduled"]), 2000);
    assert_eq!(u(&l["refused"]["events"]), failed);
    assert_eq!(u(&l["refused"]["retries_exhausted"]), failed, "{l:#}");
    assert!(u(&l["refused"]["causes"]["status_503"]) > 0, "{l:#}");
    // Each refused event once, by what its last attempt met: all of them a 503.
    assert_eq!(u(&l["refused"]["given_up_after"]["503"]), failed, "{l:#}");
    assert_eq!(l["refused"]["by_status"], serde_json::json!({}), "{l:#}");
    assert_eq!(u(&l["refused"]["unfinished"]), 0, "{l:#}");
    assert_eq!(l["store"], url.as_str());
    assert_eq!(
        (l["stored"].clone(), l["accepted_not_stored"].clone()),
        (s["events_accepted"].clone(), Value::from(0))
    );
    assert!(l.get("udp_rcvbuf_drops").is_none(), "HTTP target: {l:#}");

    assert!(
        text.contains("store verification (verify.sources"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{url}  expected {}",
            count(u(&s["events_accepted"]))
        )),
        "{text}"
    );
    assert!(
        text.contains("loss by stage (of 2,000 events scheduled)"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("PASS  exit 0"), "{text}");
}

fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn a_store_without_the_run_s_events_fails_with_exit_5_and_the_lost_count() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let dir = tempfile::tempdir().unwrap();
    // A collector's file that holds another run's events, none of this one's.
    let log = dir.path().join("out.log");
    std::fs::write(
        &log,
        "ingestbench_run=r-000000000000 ingestbench_agent=0 ingestbench_seq=0\n",
    )
    .unwrap();
    let sink_src = format!("sink:http://127.0.0.1:{}", sink.port);
    let file_src = format!("file:{}", log.display());
    let cfg = config(
        dir.path(),
        sink.port,
        600,
        &format!("verify: {{ sources: [\"{sink_src}\", \"{file_src}\"], settle_timeout: 5s }}\n"),
    );
    let (code, text, v) = run(&cfg, dir.path());
    assert_eq!(code, Some(5), "{text}");
    let accepted = u(&v["summary"]["events_accepted"]);
    assert_eq!(accepted, 600, "{}", v["summary"]);
    let res = &v["store_verification"]["result"];
    assert_eq!(res["pass"], false);
    assert_eq!(
        res["sources"][0]["lost"], 0,
        "the sink holds them all: {res:#}"
    );
    assert_eq!(u(&res["sources"][1]["lost"]), accepted, "{res:#}");
    assert_eq!(res["sources"][1]["other_runs"], 1, "{res:#}");
    let reasons = v["verdict"]["reasons"].as_array().unwrap();
    assert_eq!(
        reasons.len(),
        1,
        "only the file is beyond the limit: {reasons:?}"
    );
    let want = format!("store verification: {file_src}: {accepted} events lost (limit 0)");
    assert_eq!(reasons[0], want.as_str());
    assert_eq!(v["verdict"]["exit_code"], 5);
    // The stage is the store that found the most missing.
    let l = &v["loss"];
    assert_stages_add_up(&v);
    assert_eq!(l["store"], file_src.as_str());
    assert_eq!(
        (u(&l["stored"]), u(&l["accepted_not_stored"])),
        (0, accepted)
    );
    assert_eq!(l["stores"].as_array().unwrap().len(), 2, "{l:#}");
    assert!(text.contains(&format!("FAIL  exit 5: {want}")), "{text}");
    assert!(
        text.contains(&format!("{file_src}  expected 600, stored 0, lost 600")),
        "{text}"
    );
}

#[test]
fn an_unreachable_store_aborts_with_exit_6() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let dir = tempfile::tempdir().unwrap();
    let closed = support::peers::free_port();
    let cfg = config(
        dir.path(),
        sink.port,
        200,
        &format!(
            "verify: {{ sources: [\"sink:http://127.0.0.1:{closed}\"], settle_timeout: 2s }}\n"
        ),
    );
    let (code, text, v) = run(&cfg, dir.path());
    assert_eq!(code, Some(6), "{text}");
    let sv = &v["store_verification"];
    assert_eq!(sv["status"], "unreachable", "{sv:#}");
    assert!(sv["result"].is_null());
    assert!(
        sv["error"]
            .as_str()
            .unwrap()
            .contains(&format!("127.0.0.1:{closed}")),
        "{sv:#}"
    );
    assert!(
        text.contains("FAIL  exit 6: store verification unreachable"),
        "{text}"
    );
}

#[test]
fn bad_specs_and_untagged_runs_are_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let base = "schema_version: \"1.0\"\ntarget: { url: builtin }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 100, stop: { total_events: 10 } }\n";
    let bad = write_config(
        dir.path(),
        "bad.yaml",
        &format!(
            "{base}verify:\n  sources:\n    - \"opensearch-but-misspelt:http://127.0.0.1:9200\"\n"
        ),
    );
    let o = bin().args(["run", "--config", &bad]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("verify.sources[0] (7:") && all(&o).contains("unknown kind"),
        "{}",
        all(&o)
    );
    let untagged = write_config(
        dir.path(),
        "untagged.yaml",
        &format!(
            "{}verify: {{ sources: [\"sink:http://127.0.0.1:9800\"] }}\n",
            base.replace(
                "{ id: aws.cloudtrail }",
                "{ id: aws.cloudtrail, accounting: false }"
            )
        ),
    );
    let o = bin().args(["run", "--config", &untagged]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("verify (5:") && all(&o).contains("source.accounting"),
        "{}",
        all(&o)
    );
}

/// `verify.auth` and `verify.tls` reach a search store after the run: a fake OpenSearch that
/// requires Basic auth and holds none of the run's events is asked with the credentials from
/// the environment (never printed) and every accepted event is lost (exit 5); the wrong
/// password is an authentication failure (exit 4); an unset variable stops the run before
/// the load (exit 2, `verify.auth`).
#[test]
fn a_search_store_is_asked_with_the_configs_credentials() {
    use support::search_store::{FakeStore, Kind, Setup};
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let mut setup = Setup::new(Kind::OpenSearch, Vec::new());
    // base64("verifier:s3cret-pass")
    setup.auth = Some("Basic dmVyaWZpZXI6czNjcmV0LXBhc3M=".into());
    let store = FakeStore::start(setup);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        sink.port,
        200,
        &format!(
            "verify:\n  sources: [\"opensearch:{}/logs-*\"]\n  settle_timeout: 0s\n  auth: {{ username: verifier, token_env: IB_TEST_OS_PASS }}\n  tls: {{ verify: true }}\n",
            store.url()
        ),
    );
    let go = |pass: Option<&str>| {
        let mut c = bin();
        c.args(["run", "--config", &cfg, "--no-pin", "--threads", "1"]);
        if let Some(p) = pass {
            c.env("IB_TEST_OS_PASS", p);
        }
        let o = c.output().unwrap();
        let rep = std::fs::read_to_string(dir.path().join("report.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .unwrap_or(Value::Null);
        (o.status.code(), all(&o), rep)
    };
    let (code, text, rep) = go(Some("s3cret-pass"));
    assert_eq!(code, Some(5), "{text}");
    assert!(!text.contains("s3cret-pass"), "{text}");
    let src = &rep["store_verification"]["result"]["sources"][0];
    assert_eq!(src["kind"], "opensearch", "{src}");
    assert_eq!(
        u(&src["lost"]),
        u(&rep["summary"]["events_accepted"]),
        "{src}"
    );
    let reqs = store.requests();
    assert!(!reqs.is_empty());
    assert!(
        reqs.iter()
            .all(|r| r.header("authorization") == Some("Basic dmVyaWZpZXI6czNjcmV0LXBhc3M=")),
        "every request carries the credentials"
    );
    let (code, text, rep) = go(Some("wrong"));
    assert_eq!(code, Some(4), "{text}");
    assert_eq!(
        rep["store_verification"]["status"], "auth_failed",
        "{}",
        rep["store_verification"]
    );
    let (code, text, _) = go(None);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("verify.auth"), "{text}");
}
