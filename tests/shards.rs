//! Shards and the Kubernetes Indexed Job, end to end with the real binary on 127.0.0.1: the
//! Job's contract played by 3 local processes — examples/k8s/config.yaml (the ConfigMap's
//! text) pointed at one standalone sink, each process started as job.yaml starts a pod
//! (`--shards 3 --run-id $(JOB_NAME)`, `JOB_COMPLETION_INDEX=i`, the token from the
//! environment) — then merge-job.yaml's merge. The sink sees one run, three disjoint agents,
//! no duplicate and no gap, 30,000 eps ± 0.5 % in all; the merged report adds up to the
//! shards' and the sink's counts, is byte-stable whatever the order of its inputs, and
//! `verify` finds every accepted event in the sink. A shard twice, one missing or a report of
//! another run is refused (exit 2); shard flags that do not add up exit 2 naming what. The
//! manifests pass the Kubernetes schemas (kubernetes-validate, offline) and agree with the
//! config: completions = parallelism = workload.shards.

mod support;

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use support::peers::{kubernetes_validate_bin, require};
use support::{SinkProc, all, bin, wait_exit, write_config};

const K8S: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/k8s");
const TOKEN: &str = "k8s-test-token";
const JOB_NAME: &str = "ingestbench-run-1";

/// The tests of this file one at a time: on a 2-core machine, kubernetes-validate's schema
/// loading beside the three shards at 30,000 eps starves a shard for a second (its due
/// events go unsent and it rightly fails its SLO).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn k8s(file: &str) -> String {
    std::fs::read_to_string(Path::new(K8S).join(file)).unwrap()
}

/// examples/k8s/config.yaml with its collector and its report volume here.
fn local_config(dir: &Path, port: u16) -> String {
    let text = k8s("config.yaml")
        .replace(
            "http://hec.siem.svc.cluster.local:8088",
            &format!("http://127.0.0.1:{port}"),
        )
        .replace("/reports/", &format!("{}/", dir.display()));
    assert!(text.contains("127.0.0.1") && !text.contains("/reports/"));
    write_config(dir, "config.yaml", &text)
}

/// One pod of the Indexed Job: job.yaml's arguments, its index in JOB_COMPLETION_INDEX.
fn start_shard(cfg: &str, index: u32) -> Child {
    bin()
        .args([
            "run", "--config", cfg, "--shards", "3", "--run-id", JOB_NAME,
        ])
        .args(["--output", "json", "--duration", "4s"])
        .args(["--threads", "1", "--no-pin"])
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .env("HEC_TOKEN", TOKEN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn merge(files: &[String], extra: &[&str]) -> std::process::Output {
    bin()
        .args(["report", "merge"])
        .args(files)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn three_shards_of_the_indexed_job_are_one_run() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--token", TOKEN]);
    let cfg = local_config(dir.path(), sink.port);
    let mut shards: Vec<Child> = (0..3).map(|i| start_shard(&cfg, i)).collect();
    for (i, s) in shards.iter_mut().enumerate() {
        let st = wait_exit(s, Duration::from_secs(60), "a shard");
        let mut err = String::new();
        std::io::Read::read_to_string(s.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(st.code(), Some(0), "shard {i}: {err}");
    }

    // The store's view: one run, the shards' agents apart, every event once.
    let stats = sink.stats();
    let runs = stats["runs"].as_object().unwrap();
    assert_eq!(runs.keys().collect::<Vec<_>>(), [JOB_NAME], "{stats:#}");
    let run = &runs[JOB_NAME];
    let agents = run["agents"].as_object().unwrap();
    assert_eq!(
        agents.keys().collect::<Vec<_>>(),
        ["0", "1000", "2000"],
        "one worker per shard, numbered from its index × 1000"
    );
    for (a, v) in agents {
        assert_eq!(
            (u(&v["duplicates"]), u(&v["gaps"])),
            (0, 0),
            "agent {a}: {v}"
        );
    }
    assert_eq!(u(&run["duplicates"]), 0);
    let received = u(&run["distinct"]);
    let eps = received as f64 / 4.0;
    assert!(
        (eps - 30_000.0).abs() <= 150.0,
        "30,000 eps ± 0.5 % in all: {eps} ({received} events in 4 s)"
    );

    // The shards' reports, named by index, merged as merge-job.yaml merges them.
    let files: Vec<String> = (0..3)
        .map(|i| {
            dir.path()
                .join(format!("report.shard-{i}.json"))
                .display()
                .to_string()
        })
        .collect();
    let merged_path = dir.path().join("merged.json");
    let o = merge(&files, &["--save", merged_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(all(&o).contains("merged   3 shards"), "{}", all(&o));
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    let shard_reports: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let sum = |key: &str| -> u64 { shard_reports.iter().map(|r| u(&r["summary"][key])).sum() };
    let m = &merged["summary"];
    for key in [
        "events_sent",
        "events_accepted",
        "batches_sent",
        "bytes_sent",
    ] {
        assert_eq!(u(&m[key]), sum(key), "{key}");
    }
    assert_eq!(
        u(&m["events_accepted"]),
        received,
        "the sink holds what was accepted"
    );
    assert!(
        (m["target_eps"].as_f64().unwrap() - 30_000.0).abs() <= 150.0,
        "{m}"
    );
    assert_eq!(merged["verdict"]["exit_code"], 0);
    assert_eq!(merged["run_id"], JOB_NAME);
    let samples: u64 = shard_reports
        .iter()
        .map(|r| u(&r["latency_ms"]["intended"]["count"]))
        .sum();
    assert_eq!(u(&merged["latency_ms"]["intended"]["count"]), samples);
    let accounted: Vec<u64> = merged["accounting"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| u(&a["agent"]))
        .collect();
    assert_eq!(accounted, [0, 1000, 2000]);

    // Saved reports read back as text: a shard's and the merged one.
    for (file, says) in [
        (&files[1], "shard    1 of 3"),
        (&merged_path.display().to_string(), "merged   3 shards"),
    ] {
        let o = bin().args(["report", "show", file]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", all(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains(says) && text.contains("PASS  exit 0"),
            "{text}"
        );
    }

    // Byte-stable, whatever the order the shards are given in.
    let a = merge(&files, &["--output", "json"]);
    let mut reversed = files.clone();
    reversed.reverse();
    let b = merge(&reversed, &["--output", "json"]);
    let strip_files = |o: &std::process::Output| {
        let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["merged"]["shards"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .for_each(|s| s["file"] = Value::Null);
        v
    };
    assert_eq!(
        a.stdout,
        merge(&files, &["--output", "json"]).stdout,
        "byte-stable"
    );
    assert_eq!(
        strip_files(&a),
        strip_files(&b),
        "the order of the inputs does not matter"
    );

    // The merged accounting is the run's: the sink holds every accepted event of it.
    let v = bin()
        .args(["verify", "--report", merged_path.to_str().unwrap()])
        .args(["--source", &format!("sink:http://127.0.0.1:{}", sink.port)])
        .args(["--settle-timeout", "0s"])
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(0), "{}", all(&v));

    // Refused: a shard twice, a shard missing, a report of another run.
    let twice = merge(&[files[0].clone(), files[0].clone(), files[1].clone()], &[]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(all(&twice).contains("shard 0 twice"), "{}", all(&twice));
    let missing = merge(&files[..2], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        all(&missing).contains("shard 2 missing"),
        "{}",
        all(&missing)
    );
    let other = other_run(dir.path(), sink.port);
    let mixed = merge(&[files[0].clone(), files[1].clone(), other], &[]);
    assert_eq!(mixed.status.code(), Some(2));
    assert!(
        all(&mixed).contains("only the shards of one run merge"),
        "{}",
        all(&mixed)
    );
    let not_shard = merge(&[merged_path.display().to_string()], &[]);
    assert_eq!(not_shard.status.code(), Some(2));
    assert!(
        all(&not_shard).contains("a merged report"),
        "{}",
        all(&not_shard)
    );
}

/// Shard 2 of 3 of another run (its own run id), as a report file.
fn other_run(dir: &Path, port: u16) -> String {
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let cfg = local_config(&other, port);
    let o = bin()
        .args([
            "run",
            "--config",
            &cfg,
            "--shard",
            "2/3",
            "--run-id",
            "another-run",
        ])
        .args([
            "--total",
            "300",
            "--threads",
            "1",
            "--no-pin",
            "--output",
            "json",
        ])
        .env("HEC_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    other.join("report.shard-2.json").display().to_string()
}

#[test]
fn shard_flags_that_do_not_add_up_are_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let base = "schema_version: \"1.0\"\ntarget: { url: builtin }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 100, stop: { total_events: 10 } }\n";
    let cfg = write_config(dir.path(), "c.yaml", base);
    let run = |args: &[&str], index: Option<&str>| {
        let mut c = bin();
        c.args(["run", "--config", &cfg, "--no-pin"]).args(args);
        c.env_remove("JOB_COMPLETION_INDEX");
        if let Some(i) = index {
            c.env("JOB_COMPLETION_INDEX", i);
        }
        c.output().unwrap()
    };
    let cases: [(&[&str], Option<&str>, &str); 5] = [
        (&["--shards", "3"], None, "set JOB_COMPLETION_INDEX"),
        (&["--shards", "3"], Some("3"), "counts from 0"),
        (&["--shards", "3"], Some("one"), "expected a whole number"),
        (&["--shard", "3/3"], None, "counts from 0"),
        (&["--shard", "1/2", "--run-id", "bad id"], None, "--run-id"),
    ];
    for (args, index, says) in cases {
        let o = run(args, index);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", all(&o));
        assert!(
            all(&o).contains(says),
            "{args:?} should say {says:?}: {}",
            all(&o)
        );
    }
    let zero = write_config(
        dir.path(),
        "z.yaml",
        &base.replace("eps: 100,", "eps: 100, shards: 0,"),
    );
    let o = bin().args(["run", "--config", &zero]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(all(&o).contains("workload.shards"), "{}", all(&o));
    // A shard of one is a run of one process with a shard report: it merges alone.
    let o = run(&["--shard", "0/1", "--output", "json"], None);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let one = write_config(dir.path(), "one.json", &String::from_utf8_lossy(&o.stdout));
    let m = merge(&[one], &["--output", "json"]);
    assert_eq!(m.status.code(), Some(0), "{}", all(&m));
    let v: Value = serde_json::from_slice(&m.stdout).unwrap();
    assert_eq!(u(&v["summary"]["events_accepted"]), 10);
}

#[test]
fn the_k8s_manifests_pass_the_kubernetes_schemas_and_agree_with_the_config() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The ConfigMap holds config.yaml's text, indented under its key.
    let cm = k8s("configmap.yaml");
    let (_, body) = cm
        .split_once("  config.yaml: |\n")
        .expect("the config.yaml key");
    let embedded: String = body
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        embedded,
        k8s("config.yaml"),
        "configmap.yaml holds config.yaml"
    );
    let o = bin()
        .args(["validate", "--config", &format!("{K8S}/config.yaml")])
        .env("HEC_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(k8s("config.yaml").contains("  shards: 3\n"));
    let job = k8s("job.yaml");
    for line in [
        "completionMode: Indexed",
        "completions: 3",
        "parallelism: 3",
        "- --shards\n            - \"3\"",
        "- $(JOB_NAME)",
        "fieldPath: metadata.labels['batch.kubernetes.io/job-name']",
        "secretKeyRef:",
        "name: HEC_TOKEN",
    ] {
        assert!(job.contains(line), "job.yaml lacks {line:?}");
    }
    let merge_job = k8s("merge-job.yaml");
    for i in 0..3 {
        assert!(merge_job.contains(&format!("/reports/report.shard-{i}.json")));
    }
    let Some(validate) = require("kubernetes-validate", kubernetes_validate_bin()) else {
        return;
    };
    let manifests = [
        "configmap.yaml",
        "secret.yaml",
        "reports-pvc.yaml",
        "job.yaml",
        "merge-job.yaml",
    ];
    let o = std::process::Command::new(validate)
        .arg("--strict")
        .args(manifests.iter().map(|m| format!("{K8S}/{m}")))
        .output()
        .unwrap();
    let text = all(&o);
    assert!(o.status.success(), "{text}");
    for m in manifests {
        assert!(text.contains(&format!("{m} passed")), "{m}: {text}");
    }
}
