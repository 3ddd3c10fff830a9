//! End to end: `ingestbench run` with `url: relp://…` against the RELP server in
//! `support/relp_server.rs` (its own parser, from the spec): every message answered `200 OK`
//! is accepted and every seq arrives; a server refusing every 10th message with `500` makes
//! exactly those failed, counted by status; a server that drops a connection mid-window gets
//! the unanswered messages again on the next connection (`events_resent`), losing none; a
//! refused open and a refused port abort the run (exit 6); `ingestbench sink --relp` stores
//! every event of a run once. rsyslog's imrelp is in tests/relp_rsyslog.rs.

mod support;

use std::collections::BTreeMap;

use serde_json::Value;
use support::relp_server::{Behaviour, FakeRelp};
use support::{all, run_json, write_config};

fn config(port: u16, total: u64, window: u64) -> String {
    config_at(port, total, window, 5000)
}

fn config_at(port: u16, total: u64, window: u64, eps: u64) -> String {
    format!(
        "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: \"relp://127.0.0.1:{port}\"\n  syslog: {{ format: rfc5424, relp_window: {window} }}\n  batch: {{ max_events: 100 }}\n  retry: {{ max_attempts: 20, max_time: 20s }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: {eps}, stop: {{ total_events: {total} }} }}\n"
    )
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Per agent, how often each seq of `run` is in `bytes`.
fn seqs(bytes: &[u8], run: &str) -> BTreeMap<(u32, u64), u64> {
    let mut m = BTreeMap::new();
    for t in ingestbench::acct::collect_tags(bytes) {
        if t.run == run.as_bytes() {
            *m.entry((t.agent, t.seq)).or_default() += 1;
        }
    }
    m
}

/// The seqs the report says were accepted (sent and not failed), per agent.
fn accepted(r: &Value) -> Vec<(u32, u64)> {
    let mut v = Vec::new();
    for a in r["accounting"]["agents"].as_array().expect("accounting") {
        let agent = u(&a["agent"]) as u32;
        let failed: Vec<(u64, u64)> = a["failed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (u(&p[0]), u(&p[1])))
            .collect();
        for s in 0..u(&a["events_sent"]) {
            if !failed.iter().any(|&(f, t)| s >= f && s < t) {
                v.push((agent, s));
            }
        }
    }
    v
}

#[test]
fn every_message_answered_200_is_accepted_and_arrives() {
    let server = FakeRelp::start(Behaviour {
        keep: true,
        ..Behaviour::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", &config(server.port, 3000, 16));
    let (o, r) = run_json(&cfg, 1, 2);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &r["summary"];
    assert_eq!(u(&s["events_sent"]), 3000, "{s}");
    assert_eq!(u(&s["events_accepted"]), 3000, "{s}");
    assert_eq!(u(&s["events_failed"]), 0, "{s}");
    assert_eq!(u(&s["events_resent"]), 0, "{s}");
    assert_eq!(s["delivery"], "acknowledged");
    assert_eq!(u(&r["status"]["200"]), 3000, "one rsp 200 per message");
    assert_eq!(server.messages(), 3000);
    assert!(server.errors().is_empty(), "{:?}", server.errors());
    // Each connection opened once and closed at the end.
    let st = &server.stats;
    let opens = st.opens.load(std::sync::atomic::Ordering::Relaxed);
    let closes = st.closes.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(opens, 2, "two connections");
    assert_eq!(closes, 2, "both closed with close");
    let got = seqs(&server.kept(), r["run_id"].as_str().unwrap());
    let want = accepted(&r);
    assert_eq!(want.len(), 3000);
    for k in &want {
        assert_eq!(got.get(k), Some(&1), "seq {k:?}");
    }
    // The latency is from the schedule to the last answer of each batch.
    assert!(r["latency_ms"]["intended"]["p50"].as_f64().unwrap() > 0.0);
}

#[test]
fn messages_answered_500_fail_counted_by_status() {
    let server = FakeRelp::start(Behaviour {
        refuse_every: 10,
        ..Behaviour::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", &config(server.port, 2000, 128));
    let (o, r) = run_json(&cfg, 1, 2);
    let s = &r["summary"];
    assert_eq!(u(&s["events_sent"]), 2000, "{}", all(&o));
    assert_eq!(u(&s["events_failed"]), 200, "{s}");
    assert_eq!(u(&s["events_accepted"]), 1800, "{s}");
    assert_eq!(u(&s["events_failed_by_status"]["500"]), 200, "{s}");
    assert_eq!(u(&r["status"]["500"]), 200);
    assert_eq!(u(&r["status"]["200"]), 1800);
    // Refused messages are not sent again: a refusal is the server's answer.
    assert_eq!(server.messages(), 2000);
    assert_eq!(u(&s["events_resent"]), 0);
    // The failed seqs are the accounting's: 200 of them in all.
    let failed: u64 = r["accounting"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["failed"].as_array().unwrap().clone())
        .map(|p| u(&p[1]) - u(&p[0]))
        .sum();
    assert_eq!(failed, 200);
    assert_eq!(
        o.status.code(),
        Some(3),
        "failed events miss the SLO: {}",
        all(&o)
    );
}

#[test]
fn a_connection_dropped_mid_window_resends_what_was_unanswered() {
    let server = FakeRelp::start(Behaviour {
        drop_after: 500,
        keep: true,
        ..Behaviour::default()
    });
    let dir = tempfile::tempdir().unwrap();
    // Slow enough that the reconnect leaves no shortfall behind by the end.
    let cfg = write_config(
        dir.path(),
        "c.yaml",
        &config_at(server.port, 3000, 64, 2000),
    );
    let (o, r) = run_json(&cfg, 1, 1);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &r["summary"];
    assert_eq!(u(&s["events_accepted"]), 3000, "{s}");
    assert_eq!(u(&s["events_failed"]), 0, "{s}");
    let resent = u(&s["events_resent"]);
    assert!((1..=64).contains(&resent), "at most a window resent: {s}");
    assert!(u(&s["reconnects"]) >= 1, "{s}");
    assert!(server.errors().is_empty(), "{:?}", server.errors());
    // Nothing acknowledged is lost; what the server had read but not answered is there twice.
    let got = seqs(&server.kept(), r["run_id"].as_str().unwrap());
    for k in accepted(&r) {
        assert!(got.get(&k).is_some_and(|n| *n >= 1), "seq {k:?} lost");
    }
    // The message the server read and dropped the connection on was stored and never
    // answered: it is the one duplicate (RELP is at least once). Those after it were never
    // read there.
    let twice: u64 = got.values().map(|n| n - 1).sum();
    assert_eq!(twice, 1, "{resent} resent");
    assert_eq!(server.messages(), 3001);
    eprintln!("resent {resent}, stored twice {twice}");
}

#[test]
fn a_refused_open_and_a_refused_port_abort_the_run() {
    let server = FakeRelp::start(Behaviour {
        refuse_open: true,
        ..Behaviour::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", &config(server.port, 1000, 8));
    let (o, r) = run_json(&cfg, 1, 1);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    let why = r["aborted"].as_str().unwrap_or_default();
    assert!(
        why.contains("refused the session") && why.contains("500 required command"),
        "{why}"
    );
    assert_eq!(
        server.messages(),
        0,
        "no syslog frame before an accepted open"
    );
    drop(server);
    let port = support::peers::free_port();
    let cfg = write_config(dir.path(), "d.yaml", &config(port, 1000, 8));
    let (o, r) = run_json(&cfg, 1, 1);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        r["aborted"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot connect"),
        "{}",
        all(&o)
    );
}

#[test]
fn relp_settings_are_checked_with_their_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = config(5514, 10, 0);
    let cfg = write_config(dir.path(), "c.yaml", &bad);
    let o = support::bin()
        .args(["validate", "--config", &cfg])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    let text = all(&o);
    assert!(
        text.contains("target.syslog.relp_window (5:") && text.contains("between 1 and 65536"),
        "the field, its line and the range: {text}"
    );
    // A window on a transport without one is pointed out.
    let tcp = bad
        .replace("relp://", "tcp://")
        .replace("relp_window: 0", "relp_window: 8");
    let cfg = write_config(dir.path(), "d.yaml", &tcp);
    let o = support::bin()
        .args(["validate", "--config", &cfg])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(
        all(&o).contains("warning: target.syslog.relp_window (5:")
            && all(&o).contains("applies to relp:// and relp+tls://"),
        "{}",
        all(&o)
    );
}

/// The built-in sink as a RELP server (`ingestbench sink --relp`, its own parser in
/// src/sink/relp.rs): a run's every event acknowledged and stored once.
#[test]
fn the_sink_takes_relp_and_stores_every_event_once() {
    let port = support::peers::free_port();
    let sink = support::SinkProc::start(&[
        "--http",
        "127.0.0.1:0",
        "--relp",
        &format!("127.0.0.1:{port}"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", &config(port, 3000, 32));
    let (o, r) = run_json(&cfg, 1, 2);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(u(&r["summary"]["events_accepted"]), 3000);
    let st = sink.stats();
    assert_eq!(u(&st["syslog"]["messages_relp"]), 3000, "{st}");
    assert_eq!(u(&st["syslog"]["framing_errors"]), 0, "{st}");
    let run = &st["runs"][r["run_id"].as_str().unwrap()];
    assert_eq!(u(&run["distinct"]), 3000, "{st}");
    assert_eq!(u(&run["duplicates"]), 0, "{st}");
}
