//! `mode: deterministic` runs are reproducible: the run id follows from the config and seed,
//! and with the clock anchored two runs of one config send the same events, byte for byte.
//! A small collector in the test (std sockets and httparse on 127.0.0.1) keeps every body it
//! is sent; the events of two runs, ordered by (agent, seq), must be equal. Batches may be cut
//! differently from run to run (they follow the clock), events may not.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use support::{all, run_json, write_config};

/// Keeps the bodies of the requests it answers (200 `{}`), each connection on its thread.
struct Collector {
    port: u16,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Collector {
    fn start() -> Collector {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let keep = bodies.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let keep = keep.clone();
                std::thread::spawn(move || serve(c, &keep));
            }
        });
        Collector { port, bodies }
    }

    fn take(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.bodies.lock().unwrap())
    }
}

fn serve(mut c: TcpStream, keep: &Mutex<Vec<Vec<u8>>>) {
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        if let Ok(httparse::Status::Complete(head)) = req.parse(&buf) {
            let len: usize = req
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= head + len {
                keep.lock().unwrap().push(buf[head..head + len].to_vec());
                buf.drain(..head + len);
                if c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                    .is_err()
                {
                    return;
                }
                continue;
            }
        }
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Every event of every body, as its JSON text, ordered by (agent, seq).
fn events(bodies: &[Vec<u8>]) -> Vec<String> {
    let mut evs: Vec<((u64, u64), String)> = Vec::new();
    for b in bodies {
        let arr: Vec<Value> = serde_json::from_slice(b).expect("a JSON array");
        for e in arr {
            let tag = &e["ingestbench"];
            let key = (tag["agent"].as_u64().unwrap(), tag["seq"].as_u64().unwrap());
            evs.push((key, e.to_string()));
        }
    }
    evs.sort();
    evs.into_iter().map(|(_, e)| e).collect()
}

#[test]
fn two_deterministic_runs_send_the_same_events() {
    let col = Collector::start();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\nseed: 77\nmode: deterministic\ntarget: {{ url: \"http://127.0.0.1:{}/ingest\", batch: {{ max_events: 40 }} }}\nsource: {{ id: crowdstrike.falcon, timestamps: {{ anchor: \"2026-01-05T09:00:00Z\" }} }}\nworkload: {{ eps: 2000, stop: {{ total_events: 3000 }} }}\n",
            col.port
        ),
    );
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (o, v) = run_json(&cfg, 2, 3);
        assert_eq!(o.status.code(), Some(0), "{}", all(&o));
        runs.push((
            v["run_id"].as_str().unwrap().to_string(),
            events(&col.take()),
        ));
    }
    let ((id_a, a), (id_b, b)) = (&runs[0], &runs[1]);
    assert_eq!(id_a, id_b, "the run id follows from the config and seed");
    assert_eq!(a.len(), 3000);
    assert!(
        a.iter().all(|e| e.contains(id_a.as_str())),
        "events carry the run id"
    );
    assert!(a == b, "the two runs' events differ");
    // And a realtime run of the same config differs (its run id, at least).
    let rt = write_config(
        tmp.path(),
        "rt.yaml",
        &std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("mode: deterministic\n", "")
            .replace(", timestamps: { anchor: \"2026-01-05T09:00:00Z\" }", ""),
    );
    let (o, v) = run_json(&rt, 2, 3);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_ne!(v["run_id"].as_str().unwrap(), id_a);
    assert_ne!(events(&col.take()), *a);
}
