//! Several targets end to end (`target.url` as a list): connections spread over the targets
//! round robin, each request naming its own target's host, each target's share broken down in
//! the report's `by_target`; a target that is down named as such while the others carry the
//! load, and the run not passing for it unless `slo.max_targets_down` allows it. Against two
//! HEC collectors in Python (tests/support/mix_collector.py) and `ingestbench sink`
//! processes; a closed port on 127.0.0.1 is the target that is down. Bounded by each config.

mod support;

use serde_json::Value;
use support::{PyServer, SinkProc, all, bin, run_args, write_config};

fn run(yaml: &str, threads: u32, conns: u32) -> (Option<i32>, Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "targets.yaml", yaml);
    let o = bin().args(run_args(&cfg, threads, conns)).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    (o.status.code(), v, all(&o))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A port on 127.0.0.1 nothing listens on (bound, then closed).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn connections_spread_over_the_targets_each_named_in_its_requests() {
    let a = PyServer::start("mix_collector.py", &[]);
    let b = PyServer::start("mix_collector.py", &[]);
    let (ha, hb) = (
        format!("127.0.0.1:{}", a.port),
        format!("127.0.0.1:{}", b.port),
    );
    let yaml = format!(
        "schema_version: \"1.0\"\nseed: 2\ntarget:\n  adapter: generic-hec\n  url: [\"http://{ha}\", \"http://{hb}\"]\n  batch: {{ max_events: 50 }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 2000, stop: {{ total_events: 6000 }} }}\n"
    );
    let (code, v, out) = run(&yaml, 2, 4);
    assert_eq!(code, Some(0), "{out}");
    let (sa, sb) = (a.get_json("/stats"), b.get_json("/stats"));
    // Every request to a named its host, every one to b its own.
    assert_eq!(
        sa["hosts"].as_object().unwrap().keys().collect::<Vec<_>>(),
        [&ha],
        "{sa}"
    );
    assert_eq!(
        sb["hosts"].as_object().unwrap().keys().collect::<Vec<_>>(),
        [&hb],
        "{sb}"
    );
    let (ea, eb) = (
        u(&sa["events"]["aws:cloudtrail"]),
        u(&sb["events"]["aws:cloudtrail"]),
    );
    assert_eq!(ea + eb, 6000);
    // Two connections each: about half the load each.
    assert!(ea >= 2000 && eb >= 2000, "{ea} / {eb}");
    let rows = v["by_target"].as_array().expect("by_target");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["url"], format!("http://{ha}"));
    assert_eq!(u(&rows[0]["events_accepted"]), ea, "{}", rows[0]);
    assert_eq!(u(&rows[1]["events_accepted"]), eb, "{}", rows[1]);
    assert_eq!(rows[1]["down"], false);
    assert!(u(&rows[0]["connects"]) >= 2, "{}", rows[0]);
}

#[test]
fn a_target_that_is_down_is_named_while_the_others_carry_the_load() {
    let s1 = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let s2 = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let down = closed_port();
    let urls = format!(
        "[\"http://127.0.0.1:{}/ingest\", \"http://127.0.0.1:{down}/ingest\", \"http://127.0.0.1:{}/ingest\"]",
        s1.port, s2.port
    );
    let yaml = |slo: &str| {
        format!(
            "schema_version: \"1.0\"\nseed: 2\ntarget:\n  url: {urls}\n  batch: {{ max_events: 50 }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 1500, stop: {{ total_events: 3000 }} }}\n{slo}"
        )
    };
    // Three connections on one worker: one to each target.
    let (code, v, out) = run(&yaml(""), 1, 3);
    assert_eq!(code, Some(3), "a target down fails the run: {out}");
    let rows = v["by_target"].as_array().unwrap();
    assert_eq!(rows[1]["down"], true, "{}", rows[1]);
    assert!(u(&rows[1]["connect_errors"]) > 0, "{}", rows[1]);
    assert_eq!(u(&rows[1]["events_accepted"]), 0);
    // The others took every event.
    assert_eq!(
        u(&v["summary"]["events_accepted"]),
        3000,
        "{}",
        v["summary"]
    );
    let stored = u(&s1.stats()["events_received"]) + u(&s2.stats()["events_received"]);
    assert!(stored >= 3000, "the sinks hold {stored}");
    let slo = v["slo"].as_array().unwrap();
    let row = slo
        .iter()
        .find(|r| r["name"] == "max_targets_down")
        .unwrap();
    assert_eq!(row["actual"].as_f64(), Some(1.0), "{row}");
    // Allowed one down (a failover test), the same run passes.
    let (code, _, out) = run(&yaml("slo: { max_targets_down: 1 }\n"), 1, 3);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn syslog_has_a_connection_set_per_target() {
    let s1 = SinkProc::start(&["--http", "127.0.0.1:0", "--syslog-tcp", "127.0.0.1:0"]);
    let s2 = SinkProc::start(&["--http", "127.0.0.1:0", "--syslog-tcp", "127.0.0.1:0"]);
    let (p1, p2) = (s1.syslog_tcp.unwrap(), s2.syslog_tcp.unwrap());
    let yaml = format!(
        "schema_version: \"1.0\"\nseed: 2\ntarget:\n  adapter: syslog\n  url: [\"tcp://127.0.0.1:{p1}\", \"tcp://127.0.0.1:{p2}\"]\n  batch: {{ max_events: 50 }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: 2000, stop: {{ total_events: 4000 }} }}\n"
    );
    let (code, v, out) = run(&yaml, 1, 2);
    assert_eq!(code, Some(0), "{out}");
    let rows = v["by_target"].as_array().unwrap();
    let (a, b) = (
        u(&rows[0]["events_accepted"]),
        u(&rows[1]["events_accepted"]),
    );
    assert_eq!(a + b, 4000);
    assert!(a >= 1500 && b >= 1500, "{a} / {b}");
    // What each sink holds is what the report says it took (syslog: written).
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(u(&s1.stats()["events_received"]), a, "{}", s1.stats());
    assert_eq!(u(&s2.stats()["events_received"]), b, "{}", s2.stats());
}

#[test]
fn target_list_rules_name_their_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "url: [\"http://127.0.0.1:1\", builtin]",
            "target.url[1]",
            "in process",
        ),
        (
            "url: [\"http://127.0.0.1:1\", \"https://127.0.0.1:2\"]",
            "target.url[1]",
            "same scheme",
        ),
        (
            "url: [\"http://127.0.0.1:1\", \"http://127.0.0.1:1\"]",
            "target.url[1]",
            "already target.url[0]",
        ),
        ("url: []", "target.url", "empty list"),
        (
            "adapter: generic-hec\n  hec: { ack: true }\n  url: [\"http://127.0.0.1:1\", \"http://127.0.0.1:2\"]",
            "target.hec.ack",
            "one target",
        ),
    ];
    for (target, path, words) in cases {
        let yaml = format!(
            "schema_version: \"1.0\"\ntarget:\n  {target}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 10, stop: {{ after: 1s }} }}\n"
        );
        let cfg = write_config(tmp.path(), "bad.yaml", &yaml);
        let o = bin().args(["validate", "--config", &cfg]).output().unwrap();
        let t = all(&o);
        assert_eq!(o.status.code(), Some(2), "{yaml}\n{t}");
        assert!(
            t.contains(&format!("{path} (")) && t.contains(words),
            "{yaml}\nwanted {path}: {words}\n{t}"
        );
    }
}
