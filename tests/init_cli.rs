//! `ingestbench init` end to end: answers typed at a real pseudo-terminal (refused answers asked
//! again, defaults taken with Enter, the end of input writing nothing) and the same answers as
//! `--non-interactive` flags both give configs that `ingestbench validate` accepts; an existing
//! file is never replaced without `--force`; no token value reaches the file or the terminal;
//! without a terminal and without `--non-interactive`, exit 2.

mod support;

use std::path::Path;
use std::process::{Output, Stdio};

use support::pty::PtySession;
use support::{all, bin};

/// A token value the tests put in the environment; it must never show anywhere.
const TOKEN: &str = "tok-3f9c1e-never-shown";

fn validate(path: &Path) -> Output {
    bin()
        .args(["validate", "--config"])
        .arg(path)
        .output()
        .unwrap()
}

fn assert_valid(path: &Path) -> String {
    let o = validate(path);
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}\n{text}", all(&o));
    assert!(all(&o).contains(": valid ("), "{}", all(&o));
    text
}

fn init(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .env("LPHC_TOKEN", TOKEN)
        .env("HEC_TOKEN", TOKEN)
        .arg("init")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn answers_typed_at_a_terminal_make_a_config_that_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = bin();
    cmd.current_dir(tmp.path())
        .env("LPHC_TOKEN", TOKEN)
        .args(["init", "--out", "lab.yaml"]);
    let mut t = PtySession::spawn(cmd);
    t.expect("name of the run [lab]: ");
    t.send("");
    t.expect("adapter [lphc]: ");
    t.send("lphx");
    t.expect("did you mean \"lphc\"?; try again");
    t.expect("adapter [lphc]: ");
    t.send("");
    t.expect("target url [builtin]: ");
    t.send("http//127.0.0.1:9/ingest");
    t.expect("is not a URL");
    t.expect("target url [builtin]: ");
    t.send("http://127.0.0.1:9/ingest");
    t.expect("auth scheme [x-api-key]: ");
    t.send("");
    t.expect("The token itself is never asked for or written.");
    t.expect("where the token lives [env]: ");
    t.send("");
    t.expect("environment variable holding the token [LPHC_TOKEN]: ");
    t.send("");
    t.expect("compress request bodies [none]: ");
    t.send("gzip");
    t.expect("source pack [aws.cloudtrail]: ");
    t.send("aws.cloudtrial");
    t.expect("did you mean aws.cloudtrail?");
    t.expect("source pack [aws.cloudtrail]: ");
    t.send("windows.security");
    t.expect("load profile [steady]: ");
    t.send("");
    t.expect("events per second [1000]: ");
    t.send("fast");
    t.expect("\"fast\" is not a positive number");
    t.expect("events per second [1000]: ");
    t.send("250");
    t.expect("stop after a time or a count of events [time]: ");
    t.send("");
    t.expect("run for [1m]: ");
    t.send("30");
    t.expect("is not a duration");
    t.expect("run for [1m]: ");
    t.send("30s");
    t.expect("highest p95 latency in ms [none]: ");
    t.send("");
    t.expect("highest p99 latency in ms [none]: ");
    t.send("300");
    t.expect("lowest share of events accepted (0..1) [none]: ");
    t.send("1.5");
    t.expect("not a fraction");
    t.expect("lowest share of events accepted (0..1) [none]: ");
    t.send("0.999");
    t.expect("lowest achieved/target rate (0..1) [none]: ");
    t.send("");
    t.expect("wrote lab.yaml");
    let (status, transcript) = t.finish();
    assert_eq!(status.code(), Some(0), "{transcript}");
    assert!(
        transcript.contains("ingestbench run --config lab.yaml"),
        "{transcript}"
    );
    // No HEC, syslog or TLS questions for an lphc http:// target.
    for absent in [
        "HEC endpoint",
        "syslog framing",
        "check the server's certificate",
    ] {
        assert!(!transcript.contains(absent), "{absent}:\n{transcript}");
    }
    assert!(!transcript.contains(TOKEN), "{transcript}");
    let text = assert_valid(&tmp.path().join("lab.yaml"));
    assert!(!text.contains(TOKEN), "{text}");
    for want in [
        "name: lab",
        "url: http://127.0.0.1:9/ingest",
        "scheme: x-api-key",
        "token_env: LPHC_TOKEN",
        "compression: gzip",
        "id: windows.security",
        "eps: 250",
        "after: 30s",
        "max_p99_ms: 300",
        "min_success_rate: 0.999",
    ] {
        assert!(text.contains(want), "{want} missing from\n{text}");
    }
    assert!(
        text.lines().any(|l| l.starts_with('#')),
        "no comments:\n{text}"
    );
}

#[test]
fn defaults_taken_at_a_terminal_ask_nothing_about_tokens_for_builtin() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = bin();
    cmd.current_dir(tmp.path())
        .args(["init", "--adapter", "syslog"]);
    let mut t = PtySession::spawn(cmd);
    // --adapter is taken from the flag, not asked; Enter takes every default after it.
    let prompts = [
        "name of the run [ingestbench]: ",
        "target url [builtin]: ",
        "syslog transport to the built-in sink [tcp]: ",
        "syslog framing [octet-counting]: ",
        "syslog header format [rfc5424]: ",
        "source pack [linux.syslog]: ",
        "load profile [steady]: ",
        "events per second [1000]: ",
        "stop after a time or a count of events [time]: ",
        "run for [1m]: ",
        "highest p95 latency in ms [none]: ",
        "highest p99 latency in ms [none]: ",
        "lowest share of events accepted (0..1) [none]: ",
        "lowest achieved/target rate (0..1) [none]: ",
    ];
    for p in prompts {
        t.expect(p);
        t.send("");
    }
    let (status, transcript) = t.finish();
    assert_eq!(status.code(), Some(0), "{transcript}");
    for absent in [
        "adapter [",
        "auth scheme",
        "where the token lives",
        "HEC endpoint",
    ] {
        assert!(!transcript.contains(absent), "{absent}:\n{transcript}");
    }
    let text = assert_valid(&tmp.path().join("ingestbench.yaml"));
    assert!(text.contains("adapter: syslog"), "{text}");
    assert!(text.contains("transport: tcp"), "{text}");
}

#[test]
fn the_end_of_input_at_the_terminal_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = bin();
    cmd.current_dir(tmp.path()).arg("init");
    let mut t = PtySession::spawn(cmd);
    t.expect("name of the run [ingestbench]: ");
    t.send("");
    t.expect("adapter [lphc]: ");
    t.send_raw(b"\x04");
    let (status, transcript) = t.finish();
    assert_eq!(status.code(), Some(6), "{transcript}");
    assert!(
        transcript.contains("end of input; nothing written"),
        "{transcript}"
    );
    assert!(!tmp.path().join("ingestbench.yaml").exists());
}

#[test]
fn without_a_terminal_init_needs_non_interactive() {
    let tmp = tempfile::tempdir().unwrap();
    let o = init(tmp.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("--non-interactive"), "{}", all(&o));
    assert!(!tmp.path().join("ingestbench.yaml").exists());
}

#[test]
fn non_interactive_flags_make_configs_that_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "lphc.yaml",
            &[
                "--adapter",
                "lphc",
                "--url",
                "builtin",
                "--eps",
                "500",
                "--total",
                "2000",
            ],
            &["url: builtin", "eps: 500", "total_events: 2000"],
        ),
        (
            "hec.yaml",
            &[
                "--adapter",
                "hec",
                "--url",
                "http://127.0.0.1:8088",
                "--token-env",
                "HEC_TOKEN",
                "--hec-index",
                "main",
                "--source",
                "identity.okta",
                "--profile",
                "ramp",
                "--ramp-from",
                "100",
                "--ramp-to",
                "2000",
                "--ramp-over",
                "2m",
                "--slo-max-p95-ms",
                "200",
            ],
            &[
                "adapter: generic-hec",
                "scheme: splunk",
                "token_env: HEC_TOKEN",
                "index: main",
                "sourcetype: OktaIM2:log",
                "to_eps: 2000",
                "after: 3m",
                "max_p95_ms: 200",
            ],
        ),
        (
            "syslog.yaml",
            &[
                "--adapter",
                "syslog",
                "--url",
                "tcp://127.0.0.1:5514",
                "--syslog-framing",
                "lf",
                "--source",
                "firewall.cef.syslog",
                "--duration",
                "45s",
            ],
            &["url: tcp://127.0.0.1:5514", "framing: lf", "after: 45s"],
        ),
    ];
    for (file, flags, wants) in cases {
        let mut args = vec!["--non-interactive", "--out", file];
        args.extend(*flags);
        let o = init(tmp.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", all(&o));
        assert!(all(&o).contains(&format!("ingestbench validate --config {file}")));
        assert!(!all(&o).contains(TOKEN), "{}", all(&o));
        let text = assert_valid(&tmp.path().join(file));
        assert!(!text.contains(TOKEN), "{text}");
        for w in *wants {
            assert!(text.contains(w), "{file}: {w} missing from\n{text}");
        }
    }
}

#[test]
fn stdout_output_validates_too() {
    let tmp = tempfile::tempdir().unwrap();
    let o = init(
        tmp.path(),
        &["--non-interactive", "--out", "-", "--profile", "steps"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let path = tmp.path().join("from-stdout.yaml");
    std::fs::write(&path, &o.stdout).unwrap();
    let text = assert_valid(&path);
    assert!(text.contains("- { eps: 1000, hold: 30s }"), "{text}");
    assert!(text.contains("--config FILE"), "{text}");
}

#[test]
fn warnings_are_shown_without_a_terminal_and_do_not_stop_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let o = init(
        tmp.path(),
        &[
            "--non-interactive",
            "--url",
            "http://127.0.0.1:1/x",
            "--token-env",
            "INGESTBENCH_TEST_UNSET_T",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(
        all(&o).contains("warning: target.auth.token_env (")
            && all(&o).contains("INGESTBENCH_TEST_UNSET_T is not set now"),
        "{}",
        all(&o)
    );
    assert!(
        all(&o).contains("before a run, set INGESTBENCH_TEST_UNSET_T to the token"),
        "{}",
        all(&o)
    );
    assert_valid(&tmp.path().join("ingestbench.yaml"));
}

#[test]
fn a_bad_flag_is_named_and_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--eps", "0"],
            "error: --eps: \"0\" is not a positive number",
        ),
        (&["--adapter", "splunkish"], "error: --adapter: "),
        (
            &["--source", "aws.cloudtrial"],
            "did you mean aws.cloudtrail?",
        ),
        (
            &["--duration", "30"],
            "error: --duration: \"30\" is not a duration",
        ),
        (&["--token-env", "X"], "error: --token-env: applies only to"),
        (
            &["--url", "http://127.0.0.1:1/", "--auth", "basic"],
            "error: --auth-username: needs a value",
        ),
        (
            &["--duration", "1m", "--total", "10"],
            "give only one of --duration and --total",
        ),
        (
            &["--no-such-flag", "1"],
            "Unrecognized argument: --no-such-flag",
        ),
    ];
    for (flags, want) in cases {
        let mut args = vec!["--non-interactive"];
        args.extend(*flags);
        let o = init(tmp.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", all(&o));
        assert!(all(&o).contains(want), "{flags:?}: {}", all(&o));
    }
    assert!(!tmp.path().join("ingestbench.yaml").exists());
}

#[test]
fn an_existing_file_is_replaced_only_with_force() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("ingestbench.yaml");
    std::fs::write(&path, "keep me\n").unwrap();
    let o = init(tmp.path(), &["--non-interactive"]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("exists; pass --force"), "{}", all(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me\n");
    // Refused before anything is asked, on a terminal or not.
    let o = init(tmp.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("exists; pass --force"), "{}", all(&o));
    let o = init(tmp.path(), &["--non-interactive", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_valid(&path);
}
