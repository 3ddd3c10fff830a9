//! The run engine allocates nothing per event or per batch in steady state: a global allocator
//! counts allocations made on worker threads (named `ingestbench-w…`) while a run against the
//! built-in sink is in full swing, between its second and fifth second: over HTTP (lphc) and
//! over syslog UDP (datagrams grouped by size into GSO buffers).

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::time::Duration;

#[global_allocator]
static A: counting_alloc::OnThreads = counting_alloc::OnThreads("ingestbench-w");

#[test]
fn workers_do_not_allocate_in_steady_state() {
    // HTTP (lphc) and syslog over UDP (by size, GSO) into the built-in sink, one after the
    // other (the counter is global).
    for (what, target, source) in [
        (
            "lphc",
            "url: builtin\n  batch: { max_events: 200 }",
            "windows.security",
        ),
        (
            "syslog udp",
            "adapter: syslog\n  url: builtin\n  syslog: { transport: udp }\n  batch: { max_events: 200 }",
            "linux.syslog",
        ),
    ] {
        let during = steady_state_allocations(&format!(
            "schema_version: \"1.0\"\nseed: 3\ntarget:\n  {target}\nsource: {{ id: {source} }}\nworkload: {{ eps: 20000, workers: 4, stop: {{ after: 6s }} }}\n"
        ));
        // 3 s at 20,000 events/s is 60,000 events in 300 batches on 2 workers.
        assert_eq!(
            during, 0,
            "{what}: {during} allocations on worker threads in steady state"
        );
    }
}

/// Runs `yaml` on 2 threads and counts allocations on worker threads from second 2 to 5.
fn steady_state_allocations(yaml: &str) -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("c.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let path = cfg.display().to_string();
    let start = counting_alloc::allocations();
    let run = std::thread::spawn(move || {
        ingestbench::cli::run(&[
            "ingestbench".into(),
            "run".into(),
            "--config".into(),
            path,
            "--threads".into(),
            "2".into(),
            "--output".into(),
            "json".into(),
        ])
    });
    std::thread::sleep(Duration::from_secs(2));
    let before = counting_alloc::allocations();
    // The counter does see worker threads: their setup (batch buffers, pollers) allocates.
    assert!(
        before > start,
        "no allocation seen on worker threads at all"
    );
    std::thread::sleep(Duration::from_secs(3));
    let during = counting_alloc::allocations() - before;
    let code = run.join().unwrap();
    assert_eq!(code, 0, "{yaml}");
    during
}
