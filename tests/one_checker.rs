//! End to end: one checker. Whatever `run` refuses in a config, `validate` refuses with the
//! same message and line (every broken config of `tests/corpus/bad`, among them the ones
//! `run` alone used to refuse: a ceiling search with an HDR log, `/metrics` or a status page,
//! a stop or shards; rates and durations out of range; an objective on watched processes with
//! nothing watched), and what `run --print-config` prints for a command line `validate` takes
//! — or `--print-config` refuses it with the words `run` refuses it with. Nothing here sends
//! a byte: every `run` is refused before it starts, or only prints its config.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{all, bin};

/// The `error:` lines of a command's stderr, less the line that only says which file was
/// invalid (`run`'s "X: invalid config"; `validate`'s summary has no `error:`).
fn errors(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("error: ") && !l.ends_with(": invalid config"))
        .map(str::to_string)
        .collect()
}

fn validate(path: &Path) -> Output {
    bin()
        .env_remove("RUST_BACKTRACE")
        .args(["validate", "--config"])
        .arg(path)
        .output()
        .unwrap()
}

fn run(args: &[&str]) -> Output {
    bin()
        .env_remove("RUST_BACKTRACE")
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

/// `run` with `args`, killed (by its PID) if it has not ended within 10 s: a run that is
/// refused ends at once, and one that is not must not go on.
fn run_bounded(args: &[&str]) -> Output {
    let child = bin()
        .env_remove("RUST_BACKTRACE")
        .arg("run")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(10)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
            rx.recv().unwrap().unwrap()
        }
    }
}

#[test]
fn run_refuses_every_broken_config_with_the_words_and_line_validate_gives() {
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/corpus/bad")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 70, "corpus too small: {}", files.len());
    let mut differ = Vec::new();
    for f in &files {
        let v = validate(f);
        let r = run_bounded(&["--config", f.to_str().unwrap()]);
        assert_eq!(v.status.code(), Some(2), "{}: {}", f.display(), all(&v));
        assert_eq!(r.status.code(), Some(2), "{}: {}", f.display(), all(&r));
        let (ve, re) = (errors(&v), errors(&r));
        assert!(!ve.is_empty(), "{}: {}", f.display(), all(&v));
        if ve != re {
            differ.push(format!(
                "{}:\n  validate: {ve:?}\n  run:      {re:?}",
                f.display()
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The command lines of `--print-config`: a config of the flags' own, or an example with the
/// flags over it.
fn command_lines() -> Vec<Vec<String>> {
    let own: &[&[&str]] = &[
        &["--url", "builtin"],
        &[
            "--url",
            "builtin",
            "--source",
            "aws.cloudtrail:0.7,linux.syslog:0.3",
        ],
        &[
            "--url",
            "builtin",
            "--source",
            "aws.cloudtrail,linux.syslog,identity.okta",
        ],
        &[
            "--url",
            "builtin",
            "--source",
            "aws.cloudtrail:0.5,linux.syslog",
            "--rate",
            "2MB/s",
        ],
        &["--url", "builtin", "--eps", "0.001", "--duration", "30d"],
        &["--url", "builtin", "--total", "1000", "--workers", "4096"],
        &["--url", "builtin", "--workers", "5000"],
        &["--url", "builtin", "--eps", "1e-19"],
        &["--url", "builtin", "--duration", "0"],
        &["--url", "builtin", "--rate", "1B/day"],
        &[
            "--url",
            "builtin",
            "--status",
            "127.0.0.1:0",
            "--linger",
            "2s",
        ],
        &[
            "--url",
            "builtin",
            "--prometheus",
            "127.0.0.1:0",
            "--linger",
            "2h",
        ],
        &[
            "--url",
            "builtin",
            "--watch",
            "pid:1",
            "--watch",
            "name:init",
        ],
        &[
            "--url",
            "tcp://127.0.0.1:5514",
            "--source",
            "linux.syslog,aws.cloudtrail",
        ],
        &["--url", "udp://127.0.0.1:5514", "--total", "10"],
        &[
            "--url",
            "https://127.0.0.1:8088/services/collector",
            "--token-env",
            "HEC_TOKEN",
        ],
        &[
            "--url",
            "http://127.0.0.1:9200",
            "--adapter",
            "elasticsearch",
        ],
        &["--url", "http://127.0.0.1:9/", "--adapter", "http"],
    ];
    let over: &[&[&str]] = &[
        &[],
        &["--source", "aws.cloudtrail:0.7,linux.syslog:0.3"],
        &["--eps", "250", "--total", "500"],
        &["--workers", "5000"],
        &["--duration", "5s"],
        &["--url", "builtin", "--source", "linux.syslog"],
    ];
    let mut lines: Vec<Vec<String>> = own
        .iter()
        .map(|l| l.iter().map(|s| s.to_string()).collect())
        .collect();
    // A file that is whole only with its flags: judged with them.
    lines.push(
        [
            "--config",
            "tests/corpus/bad/slo-watched-nothing.yaml",
            "--watch",
            "pid:1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    );
    for example in [
        "steady-smoke",
        "ceiling",
        "burst",
        "ramp",
        "generic-hec",
        "lphc-syslog",
    ] {
        for flags in over {
            let mut l = vec!["--config".to_string(), format!("examples/{example}.yaml")];
            l.extend(flags.iter().map(|s| s.to_string()));
            lines.push(l);
        }
    }
    lines
}

#[test]
fn print_config_always_validates_or_is_refused_as_the_run_is() {
    let dir = tempfile::tempdir().unwrap();
    let mut printed = 0;
    let mut problems = Vec::new();
    for (i, line) in command_lines().iter().enumerate() {
        let args: Vec<&str> = line.iter().map(String::as_str).collect();
        let p = run(&[&args[..], &["--print-config"]].concat());
        match p.status.code() {
            Some(0) => {
                printed += 1;
                let f = dir.path().join(format!("printed{i}.yaml"));
                std::fs::write(&f, &p.stdout).unwrap();
                let v = validate(&f);
                if v.status.code() != Some(0) {
                    problems.push(format!(
                        "{line:?}: printed\n{}\nvalidate: {}",
                        String::from_utf8_lossy(&p.stdout),
                        all(&v)
                    ));
                }
            }
            Some(2) => {
                // Refused: the run of the same command line is refused with the same words
                // (and sends nothing: it never starts).
                let r = run_bounded(&args);
                if r.status.code() != Some(2) || errors(&r) != errors(&p) {
                    problems.push(format!(
                        "{line:?}: print-config: {}\nrun: {}",
                        all(&p),
                        all(&r)
                    ));
                }
            }
            other => problems.push(format!("{line:?}: exit {other:?}: {}", all(&p))),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(
        printed >= 30,
        "only {printed} command lines printed a config"
    );
}

/// A packs directory `sources validate` refuses for a pack's id (none, or one two files
/// share) is refused by `run` and `validate` too, with the same words, before anything runs.
#[test]
fn a_packs_directory_is_read_alike_by_run_validate_and_sources_validate() {
    let root = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string("packs/linux.syslog.yaml").unwrap();
    let cases = [
        (
            "noid",
            std::fs::read_to_string("tests/corpus/bad-packs/missing-id.yaml").unwrap(),
            "id: required field is missing",
        ),
        ("dup", good.clone(), "pack id linux.syslog is also"),
    ];
    for (name, second, want) in cases {
        let dir = root.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("a.yaml"), &good).unwrap();
        std::fs::write(dir.join("b.yaml"), &second).unwrap();
        let d = dir.to_str().unwrap();
        let sv = bin().args(["sources", "validate", d]).output().unwrap();
        let v = bin()
            .args([
                "validate",
                "--config",
                "examples/steady-smoke.yaml",
                "--packs",
                d,
            ])
            .output()
            .unwrap();
        let r = run_bounded(&[
            "--url",
            "builtin",
            "--source",
            "linux.syslog",
            "--duration",
            "1s",
            "--packs",
            d,
        ]);
        for (what, o) in [("sources validate", &sv), ("validate", &v), ("run", &r)] {
            assert_eq!(o.status.code(), Some(2), "{name}: {what}: {}", all(o));
            assert!(all(o).contains(want), "{name}: {what}: {}", all(o));
        }
        let sv_line = errors(&sv).into_iter().find(|l| l.contains(want)).unwrap();
        assert!(
            errors(&r).iter().any(|l| l.starts_with(&sv_line)),
            "{name}: run {:?} does not say {sv_line:?}",
            errors(&r)
        );
        assert_eq!(errors(&r), errors(&v), "{name}");
    }
}
