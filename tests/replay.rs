//! Replay of recorded logs end to end (`source: { file: … }`): a recording sent at the
//! configured rate into the built-in sink, each line once (`loop: false`: the run ends with
//! the recording) or over and over, over HTTP (ndjson, tags inside each object) and syslog
//! (plain lines, key=value tags), every accepted event stored; `gen --file` shows the lines
//! with their timestamps moved; bad input named with its field. Bounded by each config.

mod support;

use serde_json::Value;
use support::{all, bin, run_args, write_config};

/// `n` ndjson lines one second apart from 2025-03-14T09:00:00Z.
fn ndjson(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"@timestamp\":\"2025-03-14T09:{:02}:{:02}.000Z\",\"user\":\"u{}\",\"action\":\"login\"}}\n",
                i / 60 % 60,
                i % 60,
                i % 7
            )
        })
        .collect()
}

fn run(dir: &std::path::Path, yaml: &str) -> (Option<i32>, Value, String) {
    let cfg = write_config(dir, "replay.yaml", yaml);
    let o = bin().args(run_args(&cfg, 1, 2)).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    (o.status.code(), v, all(&o))
}

#[test]
fn each_line_once_then_the_run_ends_every_one_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("rec.ndjson");
    std::fs::write(&file, ndjson(500)).unwrap();
    let yaml = format!(
        "schema_version: \"1.0\"\ntarget: {{ url: builtin }}\nsource: {{ file: \"{}\", format: ndjson, timestamps: shift, loop: false }}\nworkload: {{ eps: 1000, stop: {{ after: 10s }} }}\n",
        file.display()
    );
    let (code, v, out) = run(tmp.path(), &yaml);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["summary"]["events_sent"], 500, "{}", v["summary"]);
    assert_eq!(v["verification"]["distinct"], 500, "{}", v["verification"]);
    assert!(
        v["duration_s"].as_f64().unwrap() < 3.0,
        "ended with the recording: {}",
        v["duration_s"]
    );
    assert_eq!(v["target"]["source"], format!("file:{}", file.display()));
}

#[test]
fn a_loop_goes_round_the_recording_and_syslog_lines_carry_key_value_tags() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("auth.log");
    let lines: String = (0..40)
        .map(|i| {
            format!(
                "Mar 14 09:21:{:02} web1 sshd[42]: Accepted publickey for u{i}\n",
                i % 60
            )
        })
        .collect();
    std::fs::write(&file, lines).unwrap();
    let yaml = format!(
        "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: builtin\n  syslog: {{ transport: tcp }}\nsource: {{ file: \"{}\" }}\nworkload: {{ eps: 1000, stop: {{ total_events: 1000 }} }}\n",
        file.display()
    );
    let (code, v, out) = run(tmp.path(), &yaml);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["summary"]["events_sent"], 1000);
    assert_eq!(v["verification"]["distinct"], 1000, "{}", v["verification"]);
    assert_eq!(v["verification"]["duplicates"], 0);
}

#[test]
fn a_recording_larger_than_memory_is_streamed_each_line_once() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("big.ndjson");
    // 20,000 lines (about 1.7 MB) against a 64 KB memory limit: streamed in segments.
    std::fs::write(&file, ndjson(20_000)).unwrap();
    let yaml = format!(
        "schema_version: \"1.0\"\ntarget: {{ url: builtin, batch: {{ max_events: 200 }} }}\nsource: {{ file: \"{}\", format: ndjson, timestamps: shift, loop: false, memory: 64KB }}\nworkload: {{ eps: 10000, stop: {{ after: 10s }} }}\n",
        file.display()
    );
    let cfg = write_config(tmp.path(), "stream.yaml", &yaml);
    let o = bin().args(run_args(&cfg, 2, 4)).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(v["summary"]["events_sent"], 20_000, "{}", v["summary"]);
    assert_eq!(
        v["verification"]["distinct"], 20_000,
        "{}",
        v["verification"]
    );
    assert_eq!(v["verification"]["duplicates"], 0);
}

/// 1 GB of 16 KB lines, streamed under an 8 MB limit to the built-in sink over syslog TCP,
/// each line once: every line stored once, and the run's own peak RSS stays far below the
/// file (read into memory it would be above it), at 15,000 lines (240 MB) a second with
/// nothing left unsent. The sink reads to the end of each connection before it is asked what
/// it stored.
#[test]
fn a_gigabyte_recording_is_streamed_whole_with_flat_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("huge.log");
    let lines = 65_000u32;
    {
        use std::io::Write;
        let mut w =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&file).unwrap());
        let pad = "x".repeat(16_384);
        for i in 0..lines {
            writeln!(
                w,
                "2025-03-14T09:{:02}:{:02}Z web01 app[{i}]: event {i} {pad}",
                i / 60 % 60,
                i % 60
            )
            .unwrap();
        }
    }
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 1_000_000_000, "{size}");
    let yaml = format!(
        "schema_version: \"1.0\"\ntarget: {{ adapter: syslog, url: builtin, batch: {{ max_events: 50 }}, syslog: {{ max_message_bytes: 32KB }} }}\nsource: {{ file: \"{}\", memory: 8MB, loop: false }}\nworkload: {{ eps: 15000, stop: {{ total_events: {lines} }} }}\nobservability: {{ watch: {{ pids: [1], self: true }} }}\n",
        file.display()
    );
    let cfg = write_config(tmp.path(), "huge.yaml", &yaml);
    let o = bin().args(run_args(&cfg, 2, 4)).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(v["summary"]["events_sent"], lines, "{}", v["summary"]);
    assert!(
        v["summary"]["bytes_sent"].as_u64().unwrap() > size,
        "{}",
        v["summary"]
    );
    let ver = &v["verification"];
    assert_eq!(ver["distinct"], lines, "{ver}");
    assert_eq!(ver["duplicates"], 0, "{ver}");
    assert_eq!(ver["lost_events"], 0, "{ver}");
    let rss = v["watched"]["own"]["rss_peak_bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("{}", v["watched"]));
    assert!(
        rss < 120_000_000,
        "peak RSS {rss} B for a {size} B recording"
    );
}

#[test]
fn gen_file_shows_the_lines_as_a_run_sends_them() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("rec.ndjson");
    std::fs::write(&file, ndjson(3)).unwrap();
    let o = bin()
        .args(["gen", "--file"])
        .arg(&file)
        .args([
            "--lines",
            "ndjson",
            "--timestamps",
            "shift",
            "--anchor",
            "2026-01-05T10:00:00Z",
        ])
        .args(["-n", "4", "--format", "raw", "--tags"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ts: Vec<&str> = lines
        .iter()
        .map(|l| l["@timestamp"].as_str().unwrap())
        .collect();
    // Shifted to the anchor, one second apart; the fourth is the first again, one span on.
    assert_eq!(
        ts,
        [
            "2026-01-05T10:00:00.000Z",
            "2026-01-05T10:00:01.000Z",
            "2026-01-05T10:00:02.000Z",
            "2026-01-05T10:00:03.000Z"
        ]
    );
    assert_eq!(lines[3]["user"], "u0");
    assert_eq!(lines[2]["ingestbench"]["seq"], 2, "{}", lines[2]);
}

#[test]
fn bad_recordings_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            format!("{{ file: \"{}/nothing.log\" }}", tmp.path().display()),
            "source.file",
            "not found",
        ),
        (
            format!(
                "{{ file: \"{}/*.log\", timestamp: {{ regex: \"(\", format: rfc3339 }} }}",
                tmp.path().display()
            ),
            "source.timestamp.regex",
            "not a regex",
        ),
        (
            "{ file: x.log, timestamps: later }".to_string(),
            "source.timestamps",
            "later",
        ),
    ];
    std::fs::write(tmp.path().join("a.log"), "one line\n").unwrap();
    for (source, path, words) in cases {
        let yaml = format!(
            "schema_version: \"1.0\"\ntarget: {{ url: builtin }}\nsource: {source}\nworkload: {{ eps: 10, stop: {{ after: 1s }} }}\n"
        );
        let cfg = write_config(tmp.path(), "bad.yaml", &yaml);
        let o = bin().args(["validate", "--config", &cfg]).output().unwrap();
        let t = all(&o);
        assert_eq!(o.status.code(), Some(2), "{yaml}\n{t}");
        assert!(
            t.contains(&format!("{path} (")) && t.contains(words),
            "{yaml}\nwanted {path}: {words}\n{t}"
        );
    }
    // An ndjson line that is not an object fails the run's setup, naming file and line.
    let file = tmp.path().join("bad.ndjson");
    std::fs::write(&file, "{\"a\":1}\n[1,2]\n").unwrap();
    let yaml = format!(
        "schema_version: \"1.0\"\ntarget: {{ url: builtin }}\nsource: {{ file: \"{}\", format: ndjson }}\nworkload: {{ eps: 10, stop: {{ after: 1s }} }}\n",
        file.display()
    );
    let cfg = write_config(tmp.path(), "bad2.yaml", &yaml);
    let o = bin().args(["run", "--config", &cfg]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("bad.ndjson:2: not one JSON object"),
        "{}",
        all(&o)
    );
}
