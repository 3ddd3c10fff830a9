//! End to end: `ingestbench validate` on the examples (valid, exit 0) and on a corpus of broken
//! configs (exit 2, a message naming the field or the file, never a panic). Each corpus file
//! states what its output must contain on its first line: `# expect: <text>`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    // A store that exists nowhere, so the machine's own secrets never matter.
    c.env(
        "INGESTBENCH_SECRETS_DIR",
        "/nonexistent/ingestbench-test-secrets",
    );
    c.env_remove("RUST_BACKTRACE");
    c
}

fn validate(path: &Path, extra: &[&str]) -> Output {
    bin()
        .arg("validate")
        .arg("--config")
        .arg(path)
        .args(extra)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_clean_failure(o: &Output, what: &str) {
    let t = text(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{what}: want exit 2, got {:?}\n{t}",
        o.status.code()
    );
    assert!(
        !t.contains("panicked") && !t.contains("RUST_BACKTRACE"),
        "{what}: panic\n{t}"
    );
}

#[test]
fn a_config_over_4_mib_exits_2_naming_the_file_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.yaml");
    let mut body = String::from("schema_version: \"1.0\"\n");
    while body.len() <= 4 << 20 {
        body.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&p, &body).unwrap();
    let o = validate(&p, &[]);
    assert_clean_failure(&o, "huge config");
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "huge.yaml: file is {} bytes; the limit is 4194304 bytes (4MiB)",
            body.len()
        )),
        "{t}"
    );
}

#[test]
fn examples_validate() {
    let mut n = 0;
    for entry in std::fs::read_dir("examples").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let o = validate(&path, &[]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}:\n{}",
                path.display(),
                text(&o)
            );
            assert!(
                String::from_utf8_lossy(&o.stdout).contains("valid"),
                "{}",
                text(&o)
            );
            n += 1;
        }
    }
    assert!(n >= 5, "only {n} examples found");
}

#[test]
fn broken_corpus_fails_with_field_paths() {
    let mut dir: Vec<PathBuf> = std::fs::read_dir("tests/corpus/bad")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dir.sort();
    assert!(dir.len() >= 40, "corpus too small: {}", dir.len());
    let mut failures = Vec::new();
    for path in dir {
        let src = std::fs::read_to_string(&path).unwrap();
        let expect = src
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{}: first line must be '# expect: ...'", path.display()))
            .to_string();
        let o = validate(&path, &[]);
        assert_clean_failure(&o, &path.display().to_string());
        let t = text(&o);
        if !t.contains(&expect) {
            failures.push(format!("{}: want {expect:?} in:\n{t}", path.display()));
        }
        // Every error line carries a path and a line:column, except whole-file problems.
        for line in String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.starts_with("error: "))
        {
            let has_pos = line.contains(" (") && line.contains("): ");
            assert!(
                has_pos,
                "{}: error without position: {line}",
                path.display()
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn json_output_is_data() {
    let o = validate(
        Path::new("tests/corpus/bad/bad-size-unit.yaml"),
        &["--output", "json"],
    );
    assert_clean_failure(&o, "json");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], false);
    let e = &v["errors"][0];
    assert_eq!(e["path"], "target.batch.max_bytes");
    assert_eq!(e["line"], 8);
    assert_eq!(e["column"], 40);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("\"12XB\" is not a size")
    );

    let o = validate(
        Path::new("examples/steady-smoke.yaml"),
        &["--output", "json"],
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["errors"].as_array().unwrap().len(), 0);
}

#[test]
fn files_that_are_not_configs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.yaml", vec![], "empty"),
        ("blank.yaml", b"  \n\n   \n".to_vec(), "empty"),
        (
            "garbage.bin",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
                .collect(),
            "binary",
        ),
        ("latin1.yaml", b"name: caf\xe9\n".to_vec(), "not UTF-8"),
        ("nul.yaml", b"name: a\0b\n".to_vec(), "NUL"),
        (
            "huge.yaml",
            {
                let mut v = b"schema_version: \"1.0\"\n".to_vec();
                while v.len() < 10 << 20 {
                    v.extend_from_slice(
                        b"# padding padding padding padding padding padding padding\n",
                    );
                }
                v
            },
            "limit is",
        ),
        (
            "deep.yaml",
            format!("a: {}1{}\n", "[".repeat(5000), "]".repeat(5000)).into_bytes(),
            "(file)",
        ),
        ("scalar.yaml", b"just a string\n".to_vec(), "mapping"),
    ];
    for (name, bytes, want) in cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = validate(&p, &[]);
        assert_clean_failure(&o, name);
        let t = text(&o);
        assert!(t.contains(want), "{name}: want {want:?} in {t}");
        assert!(
            t.contains(name) || t.contains("(file)"),
            "{name}: file not named: {t}"
        );
    }
    let o = validate(d, &[]);
    assert_clean_failure(&o, "directory");
    assert!(text(&o).contains("is a directory"), "{}", text(&o));
    let missing = d.join("missing.yaml");
    let o = validate(&missing, &[]);
    assert_clean_failure(&o, "missing");
    assert!(
        text(&o).contains("missing.yaml: not found") && !text(&o).contains("invalid"),
        "{}",
        text(&o)
    );
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let o = bin().arg("validate").output().unwrap();
    assert_clean_failure(&o, "no --config");
    assert!(text(&o).contains("--config"));
    let o = bin().arg("frobnicate").output().unwrap();
    assert_clean_failure(&o, "unknown command");
    let o = bin()
        .args(["validate", "--config", "x", "--output", "xml"])
        .output()
        .unwrap();
    assert_clean_failure(&o, "bad output");
    for args in [
        &["--help"][..],
        &["validate", "--help"],
        &["secret", "--help"],
        &["secret", "set", "--help"],
        &["version", "--help"],
    ] {
        let o = bin().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(
            text(&o).contains("Examples:"),
            "{args:?} has no example:\n{}",
            text(&o)
        );
    }
}

#[test]
fn version_names_crate_and_target() {
    let o = bin().arg("version").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.starts_with(&format!("ingestbench {} (", env!("CARGO_PKG_VERSION"))),
        "{t}"
    );
    assert!(t.contains("linux"), "{t}");
}

/// A setting that does nothing for this target is valid but said so, with its position.
#[test]
fn udp_order_on_a_tcp_target_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("c.yaml");
    std::fs::write(
        &p,
        "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: tcp://127.0.0.1:5514\n  syslog: { udp_order: as_generated }\nsource: { id: linux.syslog }\nworkload: { eps: 100, stop: { after: 10s } }\n",
    )
    .unwrap();
    let o = validate(&p, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("warning: target.syslog.udp_order (5:24): applies to udp:// targets only"),
        "{}",
        text(&o)
    );
    // On a udp:// target it is simply taken.
    std::fs::write(
        &p,
        std::fs::read_to_string(&p)
            .unwrap()
            .replace("tcp://", "udp://"),
    )
    .unwrap();
    let o = validate(&p, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("warning"), "{}", text(&o));
}
