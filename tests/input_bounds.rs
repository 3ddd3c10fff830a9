//! End to end: what an input may cost. Idle connections cost no resident memory (1,024 of
//! them held 2.2 GB); a `steps` profile costs a few words a step, not a histogram (20,000
//! steps held 2.7 GB) and takes at most `MAX_STEPS`; a list over its bound is refused at
//! once, before its entries are read (10,000 sources took 25 s to refuse). The peak RSS of
//! each child comes from `wait4`, the child's own. Every run is against the built-in sink on
//! 127.0.0.1, 2 s long.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{bin, write_config};

/// Runs `ingestbench args` to its end: (exit code, peak RSS in KiB, stdout).
fn run_measured(args: &[&str]) -> (Option<i32>, u64, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = bin()
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child's PID, with valid pointers to a status and a rusage.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    // The child is reaped already: this only drops the handle.
    let _ = child.try_wait();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let text = std::fs::read_to_string(&out).unwrap();
    (code, usage.ru_maxrss as u64, text)
}

#[test]
fn a_thousand_idle_connections_cost_no_slots_of_their_own() {
    let (code, rss_kb, out) = run_measured(&[
        "run",
        "--url",
        "builtin",
        "--eps",
        "200",
        "--duration",
        "2s",
        "--workers",
        "1024",
        "--threads",
        "2",
        "--no-pin",
        "--output",
        "json",
    ]);
    assert_eq!(code, Some(0), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["connections"], 1024);
    assert_eq!(v["summary"]["events_accepted"], 400, "{out}");
    // 128 MiB of resident slots a run, the rest untouched: was 2.2 GB.
    assert!(rss_kb < 400 << 10, "peak RSS {rss_kb} KiB");
}

#[test]
fn a_step_costs_a_few_words_not_a_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let config = |n: usize| {
        let mut steps = String::new();
        for i in 0..n {
            steps.push_str(&format!("    - {{ eps: {}, hold: 1s }}\n", 20 + i % 5));
        }
        write_config(
            dir.path(),
            &format!("steps{n}.yaml"),
            &format!(
                "schema_version: \"1.0\"\ntarget: {{ url: builtin }}\nsource: {{ id: aws.cloudtrail }}\nworkload:\n  profile: steps\n  stop: {{ after: 2s }}\n  steps:\n{steps}slo: {{ min_eps_ratio: 0 }}\n"
            ),
        )
    };
    let (one, many) = (config(1), config(1000));
    let run = |cfg: &str| {
        run_measured(&[
            "run",
            "--config",
            cfg,
            "--threads",
            "1",
            "--workers",
            "2",
            "--no-pin",
        ])
    };
    let (c1, rss1, out1) = run(&one);
    let (c2, rss2, out2) = run(&many);
    assert_eq!(c1, Some(0), "{out1}");
    assert_eq!(c2, Some(0), "{out2}");
    // A histogram a step was 1,000 × about 140 KB more.
    assert!(
        rss2 < rss1 + (40 << 10),
        "1 step: {rss1} KiB, 1,000 steps: {rss2} KiB"
    );
    let over = config(1001);
    let o = bin()
        .args(["validate", "--config", &over])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: workload.steps (")
            && err.contains("): 1001 steps (a smooth change is a ramp): at most 1000"),
        "{err}"
    );
    assert_eq!(err.matches("error: ").count(), 1, "{err}");
}

#[test]
fn long_lists_are_refused_at_once_naming_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let head = "schema_version: \"1.0\"\ntarget: { url: builtin }\nworkload: { eps: 10, stop: { after: 1s } }\n";
    let item = |s: &str, n: usize| s.repeat(n);
    let cases = [
        (
            "sources",
            format!(
                "{head}source:\n{}",
                item("  - { id: aws.cloudtrail, share: 0.0001 }\n", 10_000)
            ),
            ("source", "10000 sources (a mix): at most 16"),
        ),
        (
            "faults",
            format!(
                "{head}source: {{ id: aws.cloudtrail }}\nfaults:\n{}",
                item("  - { at: 0s, action: pause, for: 1s }\n", 2_000)
            ),
            ("faults", "2000 faults: at most 256"),
        ),
        (
            "watch",
            format!(
                "{head}source: {{ id: aws.cloudtrail }}\nobservability:\n  watch:\n    pids: [{}1]\n",
                item("1, ", 5_000)
            ),
            ("observability.watch.pids", "5001 pids: at most 64"),
        ),
        (
            "headers",
            format!(
                "schema_version: \"1.0\"\ntarget:\n  adapter: http\n  url: \"http://127.0.0.1:9/\"\n  http:\n    headers:\n{}workload: {{ eps: 10, stop: {{ after: 1s }} }}\n",
                item("      - \"X-A: b\"\n", 2_000)
            ),
            ("target.http.headers", "2000 header lines: at most 64"),
        ),
        (
            "targets",
            format!(
                "{}source: {{ id: aws.cloudtrail }}\n",
                head.replace(
                    "url: builtin",
                    &format!(
                        "url: [{}\"http://127.0.0.1:9/\"]",
                        item("\"http://127.0.0.1:9/\", ", 3_000)
                    )
                )
            ),
            ("target.url", "3001 targets: at most 16"),
        ),
    ];
    for (name, text, (path, want)) in cases {
        let cfg = write_config(dir.path(), &format!("{name}.yaml"), &text);
        let t0 = Instant::now();
        let o = bin().args(["validate", "--config", &cfg]).output().unwrap();
        let took = t0.elapsed();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("error: {path} (")) && err.contains(&format!("): {want}")),
            "{name}: want {path} … {want:?} in {err}"
        );
        assert!(
            err.lines().filter(|l| l.starts_with("error: ")).count() == 1,
            "{name}: one error, not one per entry: {err}"
        );
        // The original took 25 s for 10,000 sources (release build).
        assert!(took < Duration::from_secs(10), "{name}: {took:?}");
    }
}

/// `--threads` beyond the most a run takes is refused; beyond the connections, the run
/// says what it ran and why, on stderr and in the report (it was cut silently).
#[test]
fn threads_beyond_what_runs_are_refused_or_said() {
    let o = bin()
        .args([
            "run",
            "--url",
            "builtin",
            "--duration",
            "1s",
            "--threads",
            "100000",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: --threads must be between 1 and 256 worker threads"),
        "{err}"
    );
    let o = bin()
        .args([
            "run",
            "--url",
            "builtin",
            "--eps",
            "50",
            "--duration",
            "1s",
            "--threads",
            "8",
            "--workers",
            "2",
            "--no-pin",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let said = "--threads 8: 2 worker threads run, one per connection at most (2 connections: give --workers 8 or more for 8 threads)";
    assert!(err.contains(&format!("warning: {said}")), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["threads"], 2);
    assert_eq!(v["threads_note"], said);
}
