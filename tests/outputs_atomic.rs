//! Output files that cannot be written (issue 33, case 3): a run whose report, CSV or HDR log
//! cannot be written fails (exit 6) naming the path, leaves what was at the path untouched,
//! and prints the JSON report on stdout instead; `report merge --save` and `scenario --truth`
//! the same. A full disk is a file-size limit (`ulimit -f`, which binds root too) on a child
//! that ignores SIGXFSZ; an unwritable path is one under a regular file.

mod support;

use std::path::Path;
use std::process::Output;

use support::{all, bin};

/// A 100-event run to the built-in sink with `observability` as given.
fn config(dir: &Path, observability: &str) -> String {
    let p = dir.join("run.yaml");
    std::fs::write(
        &p,
        format!(
            "schema_version: \"1.0\"\n\
             target: {{ adapter: lphc, url: builtin }}\n\
             source: {{ id: aws.cloudtrail }}\n\
             workload: {{ profile: steady, eps: 400, stop: {{ total_events: 100 }} }}\n\
             observability:\n{observability}"
        ),
    )
    .unwrap();
    p.display().to_string()
}

fn run(cfg: &str, extra: &[&str]) -> Output {
    bin()
        .args(["run", "--config", cfg])
        .args(extra)
        .output()
        .unwrap()
}

/// The same, the child limited to files of `blocks` × 512 bytes (SIGXFSZ ignored, so a
/// write past it fails with EFBIG as on a full disk).
fn run_limited(cfg: &str, blocks: u32) -> Output {
    let exe = env!("CARGO_BIN_EXE_ingestbench");
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" run --config \"$1\""
        ))
        .arg(exe)
        .arg(cfg)
        .env(
            "INGESTBENCH_SECRETS_DIR",
            "/nonexistent/ingestbench-test-secrets",
        )
        .output()
        .unwrap()
}

/// The JSON report at the end of stdout (after the text report).
fn json_on_stdout(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    let at = out.find("\n{\n").map_or(0, |i| i + 1);
    serde_json::from_str(&out[at..]).unwrap_or_else(|e| panic!("{e}: {}", all(o)))
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_report_under_a_regular_file_fails_the_run_and_goes_to_stdout() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let path = d.path().join("afile/report.json");
    let cfg = config(d.path(), &format!("  report: {}\n", path.display()));
    let o = run(&cfg, &[]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("the report not written: {}", path.display())),
        "{err}"
    );
    let rep = json_on_stdout(&o);
    assert_eq!(rep["summary"]["events_accepted"], 100);
    assert_eq!(rep["verdict"]["exit_code"], 6);
    assert_eq!(rep["verdict"]["pass"], false);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("PASS  exit 0"), "{text}");
}

#[test]
fn a_full_disk_leaves_the_good_report_there_untouched() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let path = out.join("report.json");
    let good = "{\"a good report\": true}\n";
    std::fs::write(&path, good).unwrap();
    let cfg = config(d.path(), &format!("  report: {}\n", path.display()));
    // 2 KB: the report (~10 KB) does not fit.
    let o = run_limited(&cfg, 4);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), good);
    assert_eq!(names(&out), ["report.json"], "no temporary file is left");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert_eq!(json_on_stdout(&o)["verdict"]["exit_code"], 6);
}

#[test]
fn a_csv_that_cannot_be_written_fails_the_run_and_the_report_says_so() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let report = d.path().join("report.json");
    let csv = d.path().join("afile/timeline.csv");
    let cfg = config(
        d.path(),
        &format!(
            "  report: {}\n  csv: {}\n  hdr_log: {}\n",
            report.display(),
            csv.display(),
            d.path().join("run.hlog").display()
        ),
    );
    let o = run(&cfg, &["--output", "json"]);
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(saved["verdict"]["exit_code"], 6);
    let reasons = saved["verdict"]["reasons"].to_string();
    assert!(
        reasons.contains(&format!("the timeline CSV not written: {}", csv.display())),
        "{reasons}"
    );
    // JSON asked on stdout: printed once.
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed["verdict"]["exit_code"], 6);
    // The HDR log was written whole, under its name.
    let log = std::fs::read_to_string(d.path().join("run.hlog")).unwrap();
    assert!(log.contains("Tag=intended"), "{log}");
}

#[test]
fn a_merged_report_that_cannot_be_saved_exits_6_and_is_printed() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("sh");
    let cfg = config(
        d.path(),
        &format!("  report: {}\n", out.join("report.json").display()),
    );
    for i in 0..2 {
        let o = run(&cfg, &["--shard", &format!("{i}/2"), "--run-id", "r-save"]);
        assert!(
            out.join(format!("report.shard-{i}.json")).is_file(),
            "{}",
            all(&o)
        );
    }
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let save = d.path().join("afile/merged.json");
    let o = bin()
        .args(["report", "merge"])
        .arg(out.join("report.shard-0.json"))
        .arg(out.join("report.shard-1.json"))
        .arg("--save")
        .arg(&save)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        all(&o).contains(&format!("{}: cannot write", save.display())),
        "{}",
        all(&o)
    );
    assert!(json_on_stdout(&o)["summary"]["events_accepted"].as_u64() > Some(0));
}

#[test]
fn scenario_truth_that_cannot_be_written_exits_6_naming_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let truth = d.path().join("afile/truth.json");
    let o = bin()
        .args(["scenario", "--truth"])
        .arg(&truth)
        .arg("--file")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/scenarios/brute-force-valid-account-execution.yaml"
        ))
        .args(["--speed", "max"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        all(&o).contains(&format!("{}: cannot write", truth.display())),
        "{}",
        all(&o)
    );
}

#[test]
fn a_config_or_pack_that_cannot_be_written_exits_6_and_is_printed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let pack = d.path().join("afile/acme.vpn.yaml");
    let o = bin()
        .args(["sources", "scaffold", "acme.vpn", "--out"])
        .arg(&pack)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("acme.vpn"),
        "{}",
        all(&o)
    );
    assert!(
        all(&o).contains("afile/acme.vpn.yaml: cannot write"),
        "{}",
        all(&o)
    );
    let cfg = d.path().join("afile/new.yaml");
    let o = bin()
        .args(["init", "--non-interactive", "--out"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(6), "{}", all(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("schema_version"),
        "{}",
        all(&o)
    );
}
