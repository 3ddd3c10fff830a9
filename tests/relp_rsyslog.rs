//! RELP into a real rsyslog: imrelp (Debian's rsyslog-relp, unpacked with rsyslog by
//! scripts/install-test-deps.sh) writing every message to a file (omfile), launched by the run
//! (`observability.target`) and broken on the fault timeline: stalled (SIGSTOP) so a window of
//! messages waits unanswered, killed (SIGKILL) during the stall and started again. rsyslog
//! answers `rsp 200` once a message is queued; with its main queue `Direct` that is once the
//! action has written it, so a SIGKILL loses nothing it acknowledged (with the default
//! in-memory queue it could: see README, RELP). The run must resend what the kill left
//! unanswered (`events_resent` > 0), and the file must hold every accepted event — the run's
//! own `verify:` and a count of the file's tags here both say none is lost; a message rsyslog
//! wrote but could not answer before the kill is there twice, which RELP allows (at least
//! once). A polite restart (SIGTERM) with rsyslog's default queue loses nothing either, and
//! RELP over TLS (`relp+tls://`, client certificates checked by imrelp) stores every event.

mod support;

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::Value;
use support::peers::{free_port, require, rsyslog_command, rsyslog_dir, rsyslog_relp_root};
use support::{all, bin, write_config};

/// One run against a launched rsyslog at a time (each launches its own).
static TURN: Mutex<()> = Mutex::new(());

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn yaml_list(v: &[String]) -> String {
    let quoted: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(", "))
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

/// rsyslog with imrelp on a free port of 127.0.0.1 writing every message to `relp.log` in
/// `tmp`: `main_queue` is a config line before the input (or nothing), `input` more of the
/// input's attributes. `None` (the test passes by) when the peer is missing outside CI.
struct Peer {
    tmp: tempfile::TempDir,
    port: u16,
    out: std::path::PathBuf,
    /// The `observability.target` block that launches it.
    launch: String,
}

fn peer(tmp: tempfile::TempDir, main_queue: &str, input: &str) -> Option<Peer> {
    let root = require(
        &format!(
            "rsyslog with imrelp (rsyslog-relp, unpacked into {})",
            rsyslog_dir().display()
        ),
        rsyslog_relp_root(),
    )?;
    let dir = tmp.path();
    let port = free_port();
    let out = dir.join("relp.log");
    let conf = dir.join("rsyslog.conf");
    std::fs::write(
        &conf,
        format!(
            "global(workDirectory=\"{d}\" maxMessageSize=\"64k\")\n\
             {main_queue}\
             module(load=\"imrelp\")\n\
             input(type=\"imrelp\" address=\"127.0.0.1\" port=\"{port}\"{input})\n\
             template(name=\"out\" type=\"string\" string=\"%structured-data% %msg%\\n\")\n\
             action(type=\"omfile\" file=\"{out}\" template=\"out\")\n",
            d = dir.display(),
            out = out.display()
        ),
    )
    .unwrap();
    let c = rsyslog_command(&root, dir, &conf);
    let env: Vec<String> = c.env.iter().map(|(k, v)| format!("{k}: {v:?}")).collect();
    let launch = format!(
        "  target:\n    command: {cmd:?}\n    args: {args}\n    env: {{ {env} }}\n    ready_port: {port}\n    ready_timeout: 10s\n    log: {d}/collector.log\n",
        cmd = c.program,
        args = yaml_list(&c.args),
        env = env.join(", "),
        d = dir.display(),
    );
    Some(Peer {
        tmp,
        port,
        out,
        launch,
    })
}

/// Runs `yaml` (written in `dir`) on one thread and two connections: its output and report.
fn run(dir: &std::path::Path, yaml: &str) -> (std::process::Output, Value) {
    let cfg = write_config(dir, "run.yaml", yaml);
    let o = bin()
        .args(["run", "--config", &cfg, "--output", "json", "--no-pin"])
        .args(["--threads", "1", "--workers", "2"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", all(&o)));
    (o, r)
}

#[test]
fn relp_into_rsyslog_loses_nothing_acknowledged_through_a_stall_and_a_kill() {
    let _t = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let Some(p) = peer(
        tempfile::tempdir().unwrap(),
        "main_queue(queue.type=\"Direct\")\n",
        "",
    ) else {
        return;
    };
    let (dir, port, out) = (p.tmp.path(), p.port, &p.out);
    let report = dir.join("report.json");
    let (o, r) = run(
        dir,
        &format!(
            "schema_version: \"1.0\"\n\
             target:\n  adapter: syslog\n  url: \"relp://127.0.0.1:{port}\"\n  syslog: {{ format: rfc5424, relp_window: 32 }}\n  batch: {{ max_events: 50 }}\n  retry: {{ max_attempts: 30, max_time: 30s }}\n\
             source: {{ id: linux.syslog }}\n\
             workload: {{ eps: 1000, stop: {{ after: 12s }} }}\n\
             observability:\n  report: {report}\n{launch}\
             slo: {{ max_recovery: 10s, max_dup_events: 200 }}\n\
             verify: {{ sources: [\"file:{out}\"], settle_timeout: 3s }}\n\
             faults:\n\
             \x20 - {{ at: 2s, action: stall, for: 3s }}\n\
             \x20 - {{ at: 3s, action: kill, for: 1s }}\n",
            report = report.display(),
            launch = p.launch,
            out = out.display(),
        ),
    );
    let s = &r["summary"];
    eprintln!(
        "rsyslog over RELP: sent {}, accepted {}, failed {}, resent {}, reconnects {}",
        s["events_sent"],
        s["events_accepted"],
        s["events_failed"],
        s["events_resent"],
        s["reconnects"]
    );
    let marks: Vec<&str> = r["control"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["action"].as_str())
        .collect();
    assert!(
        marks.starts_with(&["stall", "kill", "restart"]),
        "{marks:?}: {}",
        all(&o)
    );
    assert_eq!(s["delivery"], "acknowledged");
    assert_eq!(u(&s["events_failed"]), 0, "{s}");
    assert_eq!(u(&s["events_accepted"]), u(&s["events_sent"]), "{s}");
    assert!(
        u(&s["events_resent"]) > 0,
        "the kill left a window unanswered: {s}"
    );
    assert!(u(&s["reconnects"]) >= 2, "{s}");
    // The run's own verify: nothing accepted is missing from the file.
    let src = &r["store_verification"]["result"]["sources"][0];
    let lost: u64 = src["agents"]
        .as_array()
        .unwrap_or_else(|| panic!("no verification: {}", r["store_verification"]))
        .iter()
        .map(|a| u(&a["lost"]))
        .sum();
    assert_eq!(lost, 0, "{src}");
    // And the file's own tags, counted here.
    let bytes = std::fs::read(out).unwrap();
    let run = r["run_id"].as_str().unwrap();
    let mut held: BTreeMap<(u32, u64), u64> = BTreeMap::new();
    for t in ingestbench::acct::collect_tags(&bytes) {
        if t.run == run.as_bytes() {
            *held.entry((t.agent, t.seq)).or_default() += 1;
        }
    }
    let want = accepted(&r);
    let missing: Vec<_> = want.iter().filter(|k| !held.contains_key(k)).collect();
    assert!(
        missing.is_empty(),
        "{} accepted and not stored: {:?}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
    let twice: u64 = held.values().map(|n| n - 1).sum();
    assert!(
        twice <= u(&s["events_resent"]),
        "duplicates only from resends"
    );
    eprintln!("{} events stored, {twice} twice", want.len());
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}

/// A polite restart (SIGTERM: rsyslog drains its queue and closes its sessions, then the
/// same command again) must lose nothing either, with the default in-memory queue.
#[test]
fn relp_into_rsyslog_restarted_politely_loses_nothing() {
    let _t = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let Some(p) = peer(tempfile::tempdir().unwrap(), "", "") else {
        return;
    };
    let (dir, port, out) = (p.tmp.path(), p.port, &p.out);
    let (o, r) = run(
        dir,
        &format!(
            "schema_version: \"1.0\"\n\
             target:\n  adapter: syslog\n  url: \"relp://127.0.0.1:{port}\"\n  batch: {{ max_events: 50 }}\n  retry: {{ max_attempts: 30, max_time: 30s }}\n\
             source: {{ id: linux.syslog }}\n\
             workload: {{ eps: 1000, stop: {{ after: 8s }} }}\n\
             observability:\n{launch}\
             slo: {{ max_recovery: 8s, max_dup_events: 200 }}\n\
             verify: {{ sources: [\"file:{out}\"], settle_timeout: 3s }}\n\
             faults:\n\
             \x20 - {{ at: 3s, action: restart }}\n",
            launch = p.launch,
            out = out.display(),
        ),
    );
    let s = &r["summary"];
    eprintln!(
        "rsyslog restarted: sent {}, accepted {}, resent {}, reconnects {}",
        s["events_sent"], s["events_accepted"], s["events_resent"], s["reconnects"]
    );
    assert_eq!(u(&s["events_failed"]), 0, "{s}");
    assert!(u(&s["reconnects"]) >= 1, "{s}");
    let src = &r["store_verification"]["result"]["sources"][0];
    let lost: u64 = src["agents"]
        .as_array()
        .unwrap_or_else(|| panic!("no verification: {}", r["store_verification"]))
        .iter()
        .map(|a| u(&a["lost"]))
        .sum();
    assert_eq!(lost, 0, "{src}");
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}

/// RELP over TLS (`relp+tls://`) into imrelp with `tls="on"`: rsyslog presents the lab
/// server certificate and takes only clients whose certificate the lab CA signed
/// (`tls.authMode="certvalid"`); the run presents the lab client certificate
/// (`target.tls.client_cert`). Every event is stored.
#[test]
fn relp_over_tls_into_rsyslog_with_client_certificates() {
    let _t = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let certs = support::peers::Certs::make(tmp.path());
    let input = format!(
        " tls=\"on\" tls.caCert=\"{ca}\" tls.myCert=\"{cert}\" tls.myPrivKey=\"{key}\" tls.authMode=\"certvalid\"",
        ca = certs.ca().display(),
        cert = certs.pem("server").display(),
        key = certs.key("server").display(),
    );
    let Some(p) = peer(tmp, "", &input) else {
        return;
    };
    let (dir, port, out) = (p.tmp.path(), p.port, &p.out);
    let (o, r) = run(
        dir,
        &format!(
            "schema_version: \"1.0\"\n\
             target:\n  adapter: syslog\n  url: \"relp+tls://127.0.0.1:{port}\"\n  tls: {{ ca_file: {ca:?}, client_cert: {cc:?}, client_key: {ck:?} }}\n  batch: {{ max_events: 50 }}\n\
             source: {{ id: linux.syslog }}\n\
             workload: {{ eps: 1000, stop: {{ total_events: 2000 }} }}\n\
             observability:\n{launch}\
             verify: {{ sources: [\"file:{out}\"], settle_timeout: 3s }}\n",
            ca = certs.ca().display().to_string(),
            cc = certs.pem("client").display().to_string(),
            ck = certs.key("client").display().to_string(),
            launch = p.launch,
            out = out.display(),
        ),
    );
    let s = &r["summary"];
    assert_eq!(u(&s["events_accepted"]), 2000, "{}", all(&o));
    assert_eq!(u(&r["status"]["200"]), 2000);
    let src = &r["store_verification"]["result"]["sources"][0];
    let lost: u64 = src["agents"]
        .as_array()
        .unwrap_or_else(|| panic!("no verification: {}", r["store_verification"]))
        .iter()
        .map(|a| u(&a["lost"]))
        .sum();
    assert_eq!(lost, 0, "{src}");
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}
