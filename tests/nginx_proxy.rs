//! End to end through a real HTTP/1.1 reverse proxy: nginx (installed by scripts/test.sh) in
//! front of `ingestbench sink`, started on 127.0.0.1 with a generated config in a temp dir and
//! stopped by PID. A low `keepalive_requests` closes connections under the client, which must
//! reconnect and lose nothing; a small `client_max_body_size` answers 413, which must be
//! reported as failed batches by status.

mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{SinkProc, all, run_json, write_config};

fn nginx_path() -> Option<String> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .find(|p| std::path::Path::new(p).exists())
        .map(|s| s.to_string())
}

struct Nginx {
    child: Child,
    port: u16,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM first: a SIGKILLed nginx master leaves its worker running.
        support::stop_child(&mut self.child);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_nginx(dir: &std::path::Path, upstream: u16, extra: &str) -> Option<Nginx> {
    let Some(nginx) = nginx_path() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "nginx is missing in CI: scripts/install-test-deps.sh installs it"
        );
        eprintln!("skipping: nginx is not installed (scripts/install-test-deps.sh installs it)");
        return None;
    };
    let port = free_port();
    let d = dir.display();
    let conf = format!(
        "worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\nevents {{ worker_connections 256; }}\nhttp {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  upstream sink {{ server 127.0.0.1:{upstream}; keepalive 16; }}\n  server {{\n    listen 127.0.0.1:{port};\n    {extra}\n    location / {{ proxy_pass http://sink; proxy_http_version 1.1; proxy_set_header Connection \"\"; proxy_request_buffering on; }}\n  }}\n}}\n"
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let child = Command::new(nginx)
        .args(["-p", &d.to_string(), "-c", conf_path.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ng = Nginx { child, port };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nginx did not start: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(ng)
}

#[test]
fn connections_closed_by_keepalive_requests_are_reopened_without_loss() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let tmp = tempfile::tempdir().unwrap();
    let Some(ng) = start_nginx(
        tmp.path(),
        sink.port,
        "keepalive_requests 3; client_max_body_size 16m;",
    ) else {
        return;
    };
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  url: \"http://127.0.0.1:{}/ingest\"\n  batch: {{ max_events: 100 }}\nsource: {{ id: firewall.traffic }}\nworkload: {{ eps: 3000, stop: {{ total_events: 6000 }} }}\n",
            ng.port
        ),
    );
    // nginx answers each proxied request in about 44 ms here (its upstream connection and
    // the sink's delayed ACK): 4 connections of 100-event batches carry 3,000 events/s.
    let (o, v) = run_json(&cfg, 1, 4);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let s = &v["summary"];
    assert_eq!(s["events_accepted"], 6000, "{s}");
    assert!(
        s["reconnects"].as_u64().unwrap() >= 10,
        "nginx closed every 3rd request: {s}"
    );
    let st = sink.stats();
    let run = &st["runs"][v["run_id"].as_str().unwrap()];
    assert_eq!(run["distinct"], 6000, "{st}");
    assert_eq!(run["duplicates"], 0, "{st}");
}

#[test]
fn body_too_large_is_reported_as_413() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0"]);
    let tmp = tempfile::tempdir().unwrap();
    let Some(ng) = start_nginx(tmp.path(), sink.port, "client_max_body_size 32k;") else {
        return;
    };
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  url: \"http://127.0.0.1:{}/ingest\"\n  batch: {{ max_events: 200, max_bytes: 512KB }}\nsource: {{ id: windows.security }}\nworkload: {{ eps: 1000, stop: {{ total_events: 1000 }} }}\n",
            ng.port
        ),
    );
    let (o, v) = run_json(&cfg, 1, 1);
    assert!(!v.is_null(), "{}", all(&o));
    assert!(
        v["status"]["413"].as_u64().unwrap_or(0) > 0,
        "{}",
        v["status"]
    );
    assert!(
        v["summary"]["events_failed"].as_u64().unwrap() > 0,
        "{}",
        v["summary"]
    );
    // Events failed for good: without an `slo` block the run is held to the default of none.
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    assert!(all(&o).contains("max_failed_events"), "{}", all(&o));
}
