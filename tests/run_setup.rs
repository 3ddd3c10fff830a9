//! Setup failures end in their exit codes (a name that does not resolve → 6, a refused port
//! → 6 however short the run, an invalid config or flag → 2), and the live line shows on a
//! terminal even when the report goes to stdout as JSON. Everything on 127.0.0.1, bounded.

mod support;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{all, bin, write_config};

fn config(url: &str, workload: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nseed: 5\ntarget: {{ url: \"{url}\", batch: {{ max_events: 50 }} }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {workload}\n"
    )
}

fn run(yaml: &str, extra: &[&str]) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "c.yaml", yaml);
    bin()
        .args(["run", "--config", &cfg, "--threads", "1"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_name_that_does_not_resolve_exits_6() {
    let o = run(
        &config(
            "http://no-such-host.invalid:9/ingest",
            "{ eps: 10, stop: { after: 2s } }",
        ),
        &[],
    );
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        all(&o).contains("cannot resolve no-such-host.invalid"),
        "{}",
        all(&o)
    );
}

#[test]
fn a_refused_port_exits_6_even_when_the_run_is_short() {
    let port = support::peers::free_port();
    let t0 = Instant::now();
    let o = run(
        &config(
            &format!("http://127.0.0.1:{port}/ingest"),
            "{ eps: 100, stop: { total_events: 20 } }",
        ),
        &[],
    );
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(all(&o).contains("target unreachable"), "{}", all(&o));
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn invalid_configs_and_flags_exit_2() {
    let o = run(&config("builtin", "{ eps: -5, stop: { after: 2s } }"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("workload.eps"), "{}", all(&o));
    let good = config("builtin", "{ eps: 10, stop: { after: 1s } }");
    // A flag's value is judged as the config field it sets: the validator's message, the
    // flag named beside the field.
    for (flags, named) in [
        (
            &["--workers", "0"][..],
            "error: workload.workers (--workers): ",
        ),
        (
            &["--workers", "5000"],
            "error: workload.workers (--workers): ",
        ),
        (&["--eps", "0"], "error: workload.eps (--eps): "),
        (&["--eps", "1e-19"], "error: workload.eps (--eps): "),
        (
            &["--duration", "0"],
            "error: workload.stop.after (--duration): ",
        ),
        (&["--duration", "1x"], "error: --duration: "),
    ] {
        let o = run(&good, flags);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", all(&o));
        assert!(all(&o).contains(named), "{flags:?}: {}", all(&o));
    }
    let o = bin()
        .args([
            "run",
            "--config",
            "examples/steady-smoke.yaml",
            "--threads",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("--threads must be between 1 and 256 worker threads"),
        "{}",
        all(&o)
    );
}

/// A pseudo-terminal: the master side to read, the slave side to hand a child as stderr.
fn pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two fresh descriptors into the two ints; the name, termios and
    // winsize pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened for us and are owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

#[test]
fn the_live_line_shows_on_a_terminal_with_json_output() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &config("builtin", "{ eps: 200, stop: { after: 3s } }"),
    );
    let (master, slave) = pty();
    let child = bin()
        .args([
            "run",
            "--config",
            &cfg,
            "--threads",
            "1",
            "--output",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // Read what the terminal shows on a thread (the child may block on a full pty).
    let reader = std::thread::spawn(move || {
        let mut f = std::fs::File::from(master);
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the child (the last holder of the slave side) has exited.
        while let Ok(n) = f.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&out).into_owned()
    });
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("stdout is the JSON report");
    assert_eq!(v["summary"]["events_accepted"], 600);
    let shown = reader.join().unwrap();
    assert!(shown.contains('\r'), "{shown:?}");
    assert!(
        shown.contains("target") && shown.contains("achieved") && shown.contains("eps"),
        "{shown:?}"
    );
    assert!(
        shown.contains("200 eps"),
        "the target rate is on the line: {shown:?}"
    );
}

#[test]
fn observability_dashboard_serves_the_status_page_on_a_free_port_and_says_where() {
    let yaml = config("builtin", "{ eps: 50, stop: { total_events: 50 } }")
        + "observability: { dashboard: true, prometheus: \"127.0.0.1:0\" }\n";
    let o = run(&yaml, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let url = err
        .lines()
        .find_map(|l| l.strip_prefix("status page: "))
        .unwrap_or_else(|| panic!("no status page line: {err}"));
    assert!(
        url.starts_with("http://127.0.0.1:") && !url.starts_with("http://127.0.0.1:0/"),
        "{url}"
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with("metrics: http://127.0.0.1:") && l.ends_with("/metrics")),
        "{err}"
    );
}

#[test]
fn a_taken_port_for_the_status_page_fails_the_run_before_it_starts() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let o = run(
        &config("builtin", "{ eps: 50, stop: { after: 5s } }"),
        &["--status", &format!("127.0.0.1:{port}")],
    );
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        all(&o).contains(&format!("127.0.0.1:{port}")),
        "{}",
        all(&o)
    );
    assert!(
        !all(&o).contains("\"summary\""),
        "no run happened: {}",
        all(&o)
    );
}
