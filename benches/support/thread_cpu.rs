//! CPU time of this process's threads by name, read from /proc: the benches use it to report
//! what the sink's own threads cost, apart from the client threads sharing the machine.
//! Shared by `benches/sink.rs` and `benches/sink_syslog.rs` via `#[path]`.

/// CPU seconds used so far by this process's threads whose name starts with `prefix`.
pub fn thread_cpu_s(prefix: &str) -> f64 {
    let ticks = 100.0; // USER_HZ on Linux
    let mut total = 0u64;
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return f64::NAN;
    };
    for t in dir.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if !comm.starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        // Fields after the ")" that closes the name: state is field 3, utime 14, stime 15.
        if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ut: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0);
            let st: u64 = f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
            total += ut + st;
        }
    }
    total as f64 / ticks
}
