//! End to end: `ingestbench run` from the command line — a run without a config file, flags
//! over a config, `--print-config` read back as the same run, a data rate (`--rate`) reported
//! in both units — and the small things a newcomer meets first: `-V`/`--version`, `-h`,
//! `run FILE`, a missing config file, and `sink --syslog-tcp` alone opening no HTTP port.
//! Every run is against the built-in sink in process (127.0.0.1, port 0), 2–3 s at small
//! rates; the one sink process started here ends by itself (`--duration`).

mod support;

use std::io::{BufReader, Read};
use std::process::{Output, Stdio};
use std::time::Duration;

use support::{all, bin, write_config};

fn run(args: &[&str]) -> Output {
    bin().arg("run").args(args).output().unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}): {}", all(o)))
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_run_without_a_config_file_by_its_flags() {
    let o = run(&[
        "--url",
        "builtin",
        "--eps",
        "300",
        "--duration",
        "2s",
        "--seed",
        "3",
        "--threads",
        "1",
        "--workers",
        "2",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let v = json(&o);
    assert_eq!(v["target"]["url"], "builtin");
    assert_eq!(v["target"]["adapter"], "lphc");
    assert_eq!(v["target"]["source"], "aws.cloudtrail");
    assert_eq!(v["connections"], 2);
    assert_eq!(v["summary"]["target_eps"], 300.0);
    assert_eq!(v["summary"]["events_accepted"], 600);
    assert_eq!(v["verification"]["lost_events"], 0);
    assert_eq!(v["config"]["seed"], 3);
    assert!(v.get("data_rate").is_none(), "an eps run has no data_rate");
}

#[test]
fn flags_override_a_config_file() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        "schema_version: \"1.0\"\nseed: 8\ntarget: { url: \"http://127.0.0.1:9/ingest\", batch: { max_events: 50 } }\nsource: { id: linux.syslog, entities: { user: 30 } }\nworkload: { eps: 100, stop: { total_events: 50 } }\n",
    );
    let o = bin()
        .env("IB_RUN_CLI_TOKEN", "s3cret-token-value")
        .args([
            "run",
            "--config",
            &cfg,
            "--url",
            "builtin",
            "--source",
            "aws.cloudtrail",
            "--token-env",
            "IB_RUN_CLI_TOKEN",
            "--eps",
            "250",
            "--duration",
            "2s",
            "--threads",
            "1",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(!all(&o).contains("s3cret-token-value"));
    let v = json(&o);
    let c = &v["config"];
    assert_eq!(c["target"]["url"], "builtin");
    assert_eq!(c["target"]["auth"]["token_env"], "IB_RUN_CLI_TOKEN");
    assert_eq!(c["target"]["auth"]["scheme"], "x-api-key");
    // What the flags leave alone stays as the file has it.
    assert_eq!(c["target"]["batch"]["max_events"], 50);
    assert_eq!(c["source"]["id"], "aws.cloudtrail");
    assert_eq!(c["source"]["entities"]["user"], 30);
    assert_eq!(c["seed"], 8);
    assert_eq!(c["workload"]["eps"], 250.0);
    assert_eq!(c["workload"]["stop"]["after"], "2s");
    assert!(c["workload"]["stop"]["total_events"].is_null());
    assert_eq!(v["summary"]["events_accepted"], 500);
    // The built-in sink asked for the token, and got it.
    assert_eq!(v["summary"]["auth_failures"], 0);
}

/// The printed config, run with `--config`, is the same run: the same config (as the report
/// carries it), rate, stop, connections and batches.
#[test]
fn print_config_reads_back_as_the_same_run() {
    let tmp = tempfile::tempdir().unwrap();
    let flags = [
        "--url",
        "builtin",
        "--rate",
        "0.3MB/s",
        "--duration",
        "2s",
        "--seed",
        "11",
        "--workers",
        "3",
        "--token-env",
        "IB_RUN_CLI_TOKEN2",
    ];
    let with = |args: &[&str]| {
        bin()
            .env("IB_RUN_CLI_TOKEN2", "another-s3cret")
            .arg("run")
            .args(args)
            .output()
            .unwrap()
    };
    let printed = with(&[&flags[..], &["--threads", "1", "--print-config"]].concat());
    assert_eq!(printed.status.code(), Some(0), "{}", all(&printed));
    let text = String::from_utf8(printed.stdout.clone()).unwrap();
    assert!(!all(&printed).contains("another-s3cret"), "{text}");
    assert!(text.contains("token_env: \"IB_RUN_CLI_TOKEN2\""), "{text}");
    assert!(text.contains("rate: \"300KB/s\""), "{text}");
    assert!(text.contains("workers: 3"), "{text}");
    assert!(
        text.contains("# Not in a config, give them again: --threads 1"),
        "{text}"
    );
    let file = write_config(tmp.path(), "printed.yaml", &text);

    let a = with(&[&flags[..], &["--threads", "1", "--output", "json"]].concat());
    assert_eq!(a.status.code(), Some(0), "{}", all(&a));
    let b = with(&["--config", &file, "--threads", "1", "--output", "json"]);
    assert_eq!(b.status.code(), Some(0), "{}", all(&b));
    let (a, b) = (json(&a), json(&b));
    assert_eq!(a["config"], b["config"]);
    for k in [
        "threads",
        "connections",
        "batch_max_events",
        "batch_max_bytes",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert_eq!(a["target"]["source"], b["target"]["source"]);
    assert_eq!(a["data_rate"], b["data_rate"]);
    assert_eq!(a["summary"]["target_eps"], b["summary"]["target_eps"]);
    assert_eq!(a["summary"]["window_s"], b["summary"]["window_s"]);

    // And the printed file printed again is the same text.
    let again = with(&["--config", &file, "--threads", "1", "--print-config"]);
    let again = String::from_utf8(again.stdout).unwrap();
    let body = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&again), body(&text));
}

#[test]
fn a_data_rate_is_reported_in_both_units() {
    let o = run(&[
        "--url",
        "builtin",
        "--rate",
        "0.5MB/s",
        "--duration",
        "3s",
        "--seed",
        "4",
        "--threads",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let v = json(&o);
    let d = &v["data_rate"];
    assert_eq!(d["asked"], "500KB/s");
    assert_eq!(f(&d["bytes_per_s"]), 500_000.0);
    assert_eq!(f(&d["mb_per_s"]), 0.5);
    assert!((f(&d["gb_per_day"]) - 43.2).abs() < 1e-9, "{d}");
    assert_eq!(d["framing"], "lphc JSON array");
    assert!(d["sample_events"].as_u64().unwrap() >= 1000, "{d}");
    let mean = f(&d["mean_event_bytes"]);
    // CloudTrail events as JSON, framed one to a comma: several hundred bytes to a few KB.
    assert!(mean > 200.0 && mean < 5000.0, "{d}");
    assert!(mean >= f(&d["raw_event_bytes"]), "{d}");
    let eps = f(&d["target_eps"]);
    assert!((eps - 500_000.0 / mean).abs() / eps < 0.01, "{d}");
    // The schedule keeps that rate, and the events sent carry about the bytes asked.
    let s = &v["summary"];
    assert!((f(&s["target_eps"]) - eps).abs() / eps < 0.01, "{s}");
    assert_eq!(v["config"]["workload"]["rate"], "500KB/s");

    let t = run(&[
        "--url",
        "builtin",
        "--rate",
        "0.5MB/s",
        "--duration",
        "2s",
        "--seed",
        "4",
        "--threads",
        "1",
    ]);
    assert_eq!(t.status.code(), Some(0), "{}", all(&t));
    let out = String::from_utf8_lossy(&t.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("data     asked 500KB/s (0.50 MB/s, 43.2 GB/day) = "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("bytes per event as framed (lphc JSON array;"),
        "{line}"
    );
}

#[test]
fn version_and_help_flags() {
    for flag in ["-V", "--version"] {
        let o = bin().arg(flag).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", all(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.starts_with(&format!("ingestbench {} (", env!("CARGO_PKG_VERSION"))),
            "{out}"
        );
    }
    for args in [
        &["-h"][..],
        &["run", "-h"],
        &["sink", "-h"],
        &["sources", "list", "-h"],
    ] {
        let o = bin().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", all(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("Usage: "),
            "{args:?}"
        );
    }
}

#[test]
fn run_with_a_file_as_an_argument_says_to_use_config() {
    let o = run(&["examples/steady-smoke.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("run --config examples/steady-smoke.yaml"), "{e}");
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("give --config FILE, or --url URL"),
        "{}",
        all(&o)
    );
}

#[test]
fn a_missing_config_file_is_not_found_not_invalid() {
    let o = run(&["--config", "/nonexistent/ingestbench/nope.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("/nonexistent/ingestbench/nope.yaml: not found"),
        "{e}"
    );
    assert!(!e.contains("invalid"), "{e}");
}

#[test]
fn flags_that_make_no_sense_are_refused_naming_them() {
    for (args, want) in [
        (
            &["--url", "builtin", "--eps", "5", "--rate", "1MB/s"][..],
            "not both",
        ),
        (&["--url", "builtin", "--rate", "20MB"], "--rate: "),
        (&["--url", "builtin", "--adapter", "lphx"], "--adapter: "),
        (
            &["--url", "builtin", "--auth", "bearer"],
            "--auth needs a token",
        ),
        (&["--url", "ftp://x:1/"], "target.url"),
        (
            &["--url", "builtin", "--source", "nope.nothing"],
            "nope.nothing",
        ),
    ] {
        let o = run(&[args, &["--duration", "1s"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", all(&o));
        assert!(
            all(&o).contains(want),
            "{args:?}: want {want:?} in {}",
            all(&o)
        );
    }
}

/// `sink --syslog-tcp ADDR` alone takes syslog and opens no HTTP listener (the README's
/// example next to a sink already on 8088 no longer fails to bind it).
#[test]
fn sink_with_a_syslog_listener_alone_opens_no_http() {
    let mut child = bin()
        .args(["sink", "--syslog-tcp", "127.0.0.1:0", "--duration", "1s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let status = support::wait_exit(&mut child, Duration::from_secs(15), "sink --duration 1s");
    assert!(status.success());
    let mut text = String::new();
    err.read_to_string(&mut text).unwrap();
    let listening: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("sink listening on "))
        .collect();
    assert_eq!(listening.len(), 1, "{text}");
    assert!(
        listening[0].starts_with("sink listening on syslog+tcp://127.0.0.1:"),
        "{text}"
    );
}

#[test]
fn a_mix_from_the_command_line() {
    let o = run(&[
        "--url",
        "builtin",
        "--source",
        "aws.cloudtrail:0.75,identity.okta",
        "--eps",
        "2000",
        "--total",
        "4000",
        "--threads",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let v = json(&o);
    let rows = v["by_source"].as_array().expect("by_source");
    assert_eq!(rows[0]["source"], "aws.cloudtrail");
    assert_eq!(rows[1]["source"], "identity.okta");
    assert_eq!(f(&rows[1]["share"]), 0.25);
    assert_eq!(v["verification"]["distinct"], 4000, "{}", v["verification"]);
}

/// Batches of one source each, at a rate that fills no batch: each second still carries every
/// source in its share (one block of each a second), not one source for many seconds.
#[test]
fn a_slow_short_mix_carries_every_source_in_its_share() {
    let o = run(&[
        "--url",
        "builtin",
        "--source",
        "windows.security:0.75,identity.okta",
        "--eps",
        "200",
        "--duration",
        "2s",
        "--threads",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let v = json(&o);
    let rows = v["by_source"].as_array().expect("by_source");
    let sent: Vec<u64> = rows
        .iter()
        .map(|r| r["events_sent"].as_u64().unwrap())
        .collect();
    assert_eq!(sent, [300, 100], "{rows:#?}");
    // Each batch is of one source: at least one of each source a second.
    assert!(
        rows.iter().all(|r| r["batches_sent"].as_u64() >= Some(2)),
        "{rows:#?}"
    );
}

/// `--rate` over a mix: each source measured framed as its own, the rate divided by the
/// share-weighted mean, and the bytes sent about the bytes asked.
#[test]
fn a_data_rate_over_a_mix_divides_by_the_share_weighted_mean() {
    let o = run(&[
        "--url",
        "builtin",
        "--source",
        "windows.security:0.75,identity.okta",
        "--rate",
        "1MB/s",
        "--duration",
        "3s",
        "--seed",
        "4",
        "--threads",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let v = json(&o);
    let d = &v["data_rate"];
    let parts = d["sources"].as_array().expect("data_rate.sources");
    assert_eq!(parts.len(), 2, "{d}");
    assert_eq!(parts[0]["source"], "windows.security");
    assert_eq!(f(&parts[0]["share"]), 0.75);
    assert_eq!(parts[1]["source"], "identity.okta");
    let (m0, m1) = (
        f(&parts[0]["mean_event_bytes"]),
        f(&parts[1]["mean_event_bytes"]),
    );
    // Windows events (ECS from winlogbeat) are larger than Okta's: a real difference to weigh.
    assert!(m0 > 1.3 * m1, "{d}");
    let mean = f(&d["mean_event_bytes"]);
    assert!((mean - (0.75 * m0 + 0.25 * m1)).abs() < 1e-6, "{d}");
    let eps = f(&d["target_eps"]);
    assert!((eps - 1e6 / mean).abs() < 1e-6, "{d}");
    // What went out: within 5 % of 1 MB/s (request heads and the sample's spread).
    let s = &v["summary"];
    let per_s = f(&s["bytes_sent"]) / 3.0;
    assert!((per_s - 1e6).abs() < 0.05e6, "{per_s} bytes/s: {s}");
    let rows = v["by_source"].as_array().expect("by_source");
    let sent = f(&rows[0]["events_sent"]) / f(&s["events_sent"]);
    assert!((sent - 0.75).abs() < 0.01, "{rows:#?}");

    // The sources' own eps and a data rate contradict each other.
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "eps-and-rate.yaml",
        "schema_version: \"1.0\"\ntarget: { url: builtin }\nsource:\n  - { id: windows.security, eps: 30 }\n  - { id: identity.okta, eps: 10 }\nworkload: { rate: 1MB/s, stop: { after: 1s } }\n",
    );
    let o = run(&["--config", &cfg]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("workload.rate")
            && all(&o).contains("the sources' eps give the rate already"),
        "{}",
        all(&o)
    );
}
