//! End to end: `sources list|show|scaffold|validate`, `gen` output modes and bad input, and
//! `validate` checking the source pack against the catalog.

use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.env(
        "INGESTBENCH_SECRETS_DIR",
        "/nonexistent/ingestbench-test-secrets",
    );
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn list_shows_every_pack_with_columns() {
    let o = run(&["sources", "list"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("ID "), "{text}");
    for id in [
        "aws.cloudtrail",
        "windows.security",
        "crowdstrike.falcon",
        "paloalto.traffic",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(id)),
            "{id} missing:\n{text}"
        );
    }
    assert_eq!(text.lines().count(), 13);
    assert!(text.contains("json/json") && text.contains("cef/syslog"));
}

#[test]
fn show_has_events_weights_and_a_sample() {
    let o = run(&["sources", "show", "windows.security"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("event types") && t.contains("%") && t.contains("sample:"),
        "{t}"
    );
    assert!(
        t.contains("\"4624\"") || t.contains("\"4688\"") || t.contains("\"4625\""),
        "{t}"
    );
    let o = run(&["sources", "show", "aws.cloudtrial"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        all(&o).contains("did you mean \"aws.cloudtrail\""),
        "{}",
        all(&o)
    );
}

#[test]
fn scaffold_validates_and_never_overwrites() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("acme.vpn.yaml");
    let fs = f.to_str().unwrap();
    let o = run(&["sources", "scaffold", "acme.vpn", "--out", fs]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let o = run(&["sources", "validate", fs]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(!all(&o).contains("warning"), "{}", all(&o));
    let o = run(&["sources", "scaffold", "acme.vpn", "--out", fs]);
    assert_eq!(o.status.code(), Some(2), "must not overwrite");
    let o = run(&["sources", "scaffold", "Bad Id"]);
    assert_eq!(o.status.code(), Some(2));
    // A scaffolded pack in --packs is found by gen.
    let o = run(&[
        "gen",
        "--packs",
        tmp.path().to_str().unwrap(),
        "-s",
        "acme.vpn",
        "-n",
        "3",
        "--format",
        "ndjson",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}

#[test]
fn shipped_packs_validate() {
    let o = run(&["sources", "validate", "packs"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("warning"),
        "{}",
        all(&o)
    );
}

#[test]
fn broken_packs_exit_2_with_file_line() {
    let mut files: Vec<_> = std::fs::read_dir("tests/corpus/bad-packs")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 20);
    let mut failures = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let expect = src
            .lines()
            .next()
            .unwrap()
            .strip_prefix("# expect: ")
            .unwrap()
            .to_string();
        let o = run(&["sources", "validate", f.to_str().unwrap()]);
        let t = all(&o);
        let name = f.display().to_string();
        if o.status.code() != Some(2) || t.contains("panicked") || !t.contains(&expect) {
            failures.push(format!(
                "{name}: exit {:?}, want {expect:?}:\n{t}",
                o.status.code()
            ));
            continue;
        }
        let located = t.lines().filter(|l| l.starts_with("error: ")).all(|l| {
            let rest = &l["error: ".len()..];
            let mut parts = rest.splitn(4, ':');
            parts.next() == Some(name.as_str())
                && parts.next().is_some_and(|n| n.parse::<u32>().is_ok())
                && parts.next().is_some_and(|n| n.parse::<u32>().is_ok())
        });
        if !located {
            failures.push(format!("{name}: an error without file:line:column:\n{t}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn gen_formats_and_closed_pipe() {
    let o = run(&[
        "gen",
        "-s",
        "linux.syslog",
        "-n",
        "5",
        "--format",
        "ndjson",
        "--seed",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0));
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(
            v.as_str().unwrap().starts_with('<'),
            "ndjson of a syslog pack is a JSON string"
        );
    }
    let o = run(&["gen", "-s", "aws.guardduty", "-n", "1", "--seed", "1"]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.starts_with("{\n  \""), "pretty is indented JSON: {t}");

    // An endless gen into a pipe that closes after one line ends quietly with 0.
    let mut child = bin()
        .args([
            "gen",
            "-s",
            "firewall.traffic",
            "-n",
            "0",
            "--format",
            "raw",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.starts_with('{'));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn gen_paces_with_rate() {
    let t = std::time::Instant::now();
    let o = run(&[
        "gen",
        "-s",
        "linux.syslog",
        "-n",
        "21",
        "--rate",
        "40",
        "--format",
        "raw",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let took = t.elapsed().as_secs_f64();
    // 20 intervals at 40/s = 0.5 s; generous bounds, this is not a timing test.
    assert!(took > 0.4 && took < 5.0, "{took}");
}

#[test]
fn gen_bad_input() {
    for (args, want) in [
        (&["gen", "-s", "nope"][..], "no source pack \"nope\""),
        (&["gen", "-s", "linux.syslog", "--rate", "0"], "--rate"),
        (
            &["gen", "-s", "linux.syslog", "--anchor", "soon"],
            "--anchor",
        ),
        (
            &["gen", "-s", "linux.syslog", "--threads", "0"],
            "--threads",
        ),
        (&["gen"], "--source"),
        (&["gen", "-s", "linux.syslog", "--format", "xml"], "xml"),
        (
            &["gen", "-s", "linux.syslog", "--packs", "/nonexistent"],
            "not a directory",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", all(&o));
        assert!(all(&o).contains(want), "{args:?}: {}", all(&o));
    }
}

#[test]
fn gen_with_config_backfills() {
    let o = run(&[
        "gen",
        "-c",
        "examples/timestamps-backfill.yaml",
        "-n",
        "1000",
        "--format",
        "ndjson",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1000);
    let first = lines[0]["@timestamp"].as_str().unwrap();
    let last = lines[999]["@timestamp"].as_str().unwrap();
    // The anchor is 2026-01-05T00:00:00Z and the jitter ±500 ms, so event 0 may fall just
    // before midnight.
    assert!(
        first.starts_with("2026-01-05T00:00:00") || first.starts_with("2026-01-04T23:59:59"),
        "{first}"
    );
    assert!(
        last.starts_with("2026-01-18")
            || last.starts_with("2026-01-16")
            || last.starts_with("2026-01-17"),
        "{last}"
    );
}

#[test]
fn validate_checks_the_source_pack() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("c.yaml");
    let write = |id: &str, ver: &str| {
        std::fs::write(
            &cfg,
            format!("schema_version: \"1.0\"\ntarget: {{ url: builtin }}\nsource: {{ id: {id}, version: \"{ver}\" }}\nworkload: {{ eps: 10, stop: {{ after: 5s }} }}\n"),
        )
        .unwrap();
    };
    write("aws.cloudtrial", "*");
    let o = run(&["validate", "-c", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        all(&o).contains("source.id (3:") && all(&o).contains("did you mean \"aws.cloudtrail\""),
        "{}",
        all(&o)
    );
    write("aws.cloudtrail", ">=2.0");
    let o = run(&["validate", "-c", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        all(&o).contains("source.version") && all(&o).contains("does not satisfy"),
        "{}",
        all(&o)
    );
    write("aws.cloudtrail", "^1");
    let o = run(&["validate", "-c", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}
