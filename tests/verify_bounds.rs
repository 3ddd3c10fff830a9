//! `verify` and the files a user names, bounded (issue 33, cases 12 and 19): a file store's
//! line holding several tags is a merged record that fails verification (exit 5) named by
//! its file and line; a store is regular files only, so a link to `/dev/zero` among the logs
//! or `file:/proc/…` makes it unreadable (exit 6) at once instead of a read without end;
//! `verify --report`, `http -D` and `validate` refuse a device or FIFO unread (exit 2).
//! Every command runs under `timeout 30`: a hang is a failure (124), not a stuck suite.

mod support;

use std::path::Path;
use std::process::Output;

use support::all;

const RUN: &str = "r-0123456789ab";

fn ib(args: &[&str]) -> Output {
    std::process::Command::new("timeout")
        .arg("30")
        .arg(env!("CARGO_BIN_EXE_ingestbench"))
        .args(args)
        .env(
            "INGESTBENCH_SECRETS_DIR",
            "/nonexistent/ingestbench-test-secrets",
        )
        .output()
        .unwrap()
}

fn report(dir: &Path, events: u64) -> String {
    let p = dir.join("report.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"schema":"ingestbench.report/2","run_id":"{RUN}",
              "accounting":{{"run_id":"{RUN}","agents":[
                {{"agent":0,"events_sent":{events},"failed":[],"failed_overflow":false}}]}}}}"#
        ),
    )
    .unwrap();
    p.display().to_string()
}

fn tag(seq: u64) -> String {
    format!(r#"{{"msg":"m","ingestbench":{{"run":"{RUN}","agent":0,"seq":{seq}}}}}"#)
}

#[test]
fn a_line_holding_several_tags_fails_verification_named() {
    let d = tempfile::tempdir().unwrap();
    let rep = report(d.path(), 6000);
    // 6,000 messages stored as 2 lines.
    let line = |from: u64| (from..from + 3000).map(tag).collect::<Vec<_>>().join(" ");
    let log = d.path().join("out.log");
    std::fs::write(&log, format!("{}\n{}\n", line(0), line(3000))).unwrap();
    let glob = format!("file:{}/*.log", d.path().display());
    let o = ib(&[
        "verify",
        "--report",
        &rep,
        "--source",
        &glob,
        "--settle-timeout",
        "0s",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", all(&o));
    let text = all(&o);
    assert!(
        text.contains(
            "2 store records hold more than one accounting tag (6000 tags in them; the first: "
        ) && text.contains("out.log line 1"),
        "{text}"
    );
    let o = ib(&[
        "verify",
        "--report",
        &rep,
        "--source",
        &glob,
        "--settle-timeout",
        "0s",
        "--output",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["sources"][0]["records_with_several_tags"]["records"], 2);
    assert_eq!(v["pass"], false);

    // One tag a line: the same 6,000 events verify.
    let lines: Vec<String> = (0..6000).map(tag).collect();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let o = ib(&[
        "verify",
        "--report",
        &rep,
        "--source",
        &glob,
        "--settle-timeout",
        "0s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}

#[test]
fn a_store_is_regular_files_and_its_reads_end() {
    let d = tempfile::tempdir().unwrap();
    let rep = report(d.path(), 2);
    std::fs::write(d.path().join("a.log"), format!("{}\n{}\n", tag(0), tag(1))).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.path().join("b.log")).unwrap();
    let glob = format!("file:{}/*.log", d.path().display());
    let started = std::time::Instant::now();
    let o = ib(&[
        "verify",
        "--report",
        &rep,
        "--source",
        &glob,
        "--settle-timeout",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        all(&o).contains("b.log: is a character device"),
        "{}",
        all(&o)
    );
    let o = ib(&[
        "verify",
        "--report",
        &rep,
        "--source",
        "file:/proc/*",
        "--settle-timeout",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(all(&o).contains("is on procfs"), "{}", all(&o));
    assert!(started.elapsed().as_secs() < 25, "{:?}", started.elapsed());
}

#[test]
fn devices_and_fifos_given_as_files_are_refused_unread() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("report.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let fifo = fifo.display().to_string();
    for (report, want) in [
        ("/dev/zero", "/dev/zero: is a character device"),
        (fifo.as_str(), "is a FIFO"),
    ] {
        let o = ib(&[
            "verify",
            "--report",
            report,
            "--source",
            "file:/tmp/none.log",
        ]);
        assert_eq!(o.status.code(), Some(2), "{report}: {}", all(&o));
        assert!(all(&o).contains(want), "{report}: {}", all(&o));
        let o = ib(&["report", "show", report]);
        assert_eq!(o.status.code(), Some(2), "{report}: {}", all(&o));
    }
    let o = ib(&["http", "http://127.0.0.1:9/", "-D", "/dev/zero", "-n", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("target.http.body_file")
            && all(&o).contains("/dev/zero: is a character device"),
        "{}",
        all(&o)
    );
    let cfg = d.path().join("http.yaml");
    std::fs::write(
        &cfg,
        "schema_version: \"1.0\"\n\
         target:\n  adapter: http\n  url: \"http://127.0.0.1:9/\"\n  batch: { max_events: 1 }\n  http: { body_file: /dev/zero }\n\
         workload: { profile: closed, stop: { total_events: 1 } }\n",
    )
    .unwrap();
    let o = ib(&["validate", "--config", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("/dev/zero: is a character device"),
        "{}",
        all(&o)
    );
}
