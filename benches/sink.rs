//! Throughput of the built-in sink: starts it in-process on 127.0.0.1 port 0, then blasts
//! pre-built lphc batches (500 aws.cloudtrail events, about 850 KB each, accounting tags on)
//! from client threads over keep-alive connections, for a bounded number of requests.
//! Reports events/s on the wall clock and events per second of sink CPU time (the workers'
//! utime+stime from /proc), which is the per-core figure. perf/sink-throughput.md has the
//! command and the numbers.
//!
//! Under `cargo test --all-targets` (no `--bench` argument) it only does a small smoke run.
//!
//! `cargo bench --bench sink -- [--requests N] [--sink-threads T] [--clients C]
//!  [--conns-per-client K] [--batch E] [--gzip]`

#[path = "support/thread_cpu.rs"]
mod thread_cpu;
use thread_cpu::thread_cpu_s;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use ingestbench::generate::{EventCtx, Generator};
use ingestbench::pack::entities::{Entities, Sizes};
use ingestbench::pack::{self, Catalog};
use ingestbench::sink::{self, SinkConfig};

struct Opts {
    requests: usize,
    sink_threads: usize,
    clients: usize,
    conns: usize,
    batch: u64,
    gzip: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        requests: 4000,
        sink_threads: 1,
        clients: 2,
        conns: 2,
        batch: 500,
        gzip: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs this binary without `--bench` (and unoptimised):
        // a smoke run that proves the bench works, not a measurement.
        o.requests = 8;
        o.batch = 20;
        return o;
    }
    let mut i = 0;
    while i < args.len() {
        let val = || args.get(i + 1).and_then(|v| v.parse::<usize>().ok());
        match args[i].as_str() {
            "--requests" => o.requests = val().unwrap_or(o.requests),
            "--sink-threads" => o.sink_threads = val().unwrap_or(o.sink_threads),
            "--clients" => o.clients = val().unwrap_or(o.clients).max(1),
            "--conns-per-client" => o.conns = val().unwrap_or(o.conns).max(1),
            "--batch" => o.batch = val().map_or(o.batch, |v| v as u64).max(1),
            "--gzip" => o.gzip = true,
            _ => {}
        }
        i += 1;
    }
    o
}

/// `n` request byte strings, each a batch of `batch` events for `agent`.
fn requests(agent: u32, n: usize, batch: u64, gzip: bool) -> Vec<Vec<u8>> {
    let cat = Catalog::discover(None).expect("packs");
    let entities = Entities::generate(1, &Sizes::default());
    let p = pack::load_compiled(
        &cat,
        "aws.cloudtrail",
        &semver::VersionReq::STAR,
        &entities,
        true,
    )
    .expect("aws.cloudtrail compiles");
    let mut g = Generator::new(p.program.clone(), 7, "r-bench0000001");
    let mut ev = Vec::with_capacity(8192);
    let mut seq = 0u64;
    (0..n)
        .map(|_| {
            let mut body = Vec::with_capacity(batch as usize * 1800);
            body.push(b'[');
            for k in 0..batch {
                if k > 0 {
                    body.push(b',');
                }
                ev.clear();
                g.render(
                    &EventCtx {
                        index: seq,
                        time_ns: 1_767_600_000_000_000_000 + seq as i64 * 1_000_000,
                        agent,
                        seq,
                        sent_ms: Some(1_767_225_600_000),
                    },
                    &mut ev,
                );
                body.extend_from_slice(&ev);
                seq += 1;
            }
            body.push(b']');
            let mut head = format!(
                "POST /ingest HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                0
            );
            if gzip {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(&body).unwrap();
                body = e.finish().unwrap();
                head.push_str("Content-Encoding: gzip\r\n");
            }
            let head = head.replace("Content-Length: 0", &format!("Content-Length: {}", body.len()));
            let mut r = head.into_bytes();
            r.extend_from_slice(b"\r\n");
            r.extend_from_slice(&body);
            r
        })
        .collect()
}

/// Reads one response; returns its status.
fn read_response(s: &mut TcpStream, buf: &mut Vec<u8>) -> u16 {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut r = httparse::Response::new(&mut headers);
        if let Ok(httparse::Status::Complete(n)) = r.parse(buf) {
            let code = r.code.unwrap_or(0);
            let len: usize = r
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .and_then(|h| std::str::from_utf8(h.value).ok()?.parse().ok())
                .unwrap_or(0);
            if buf.len() >= n + len {
                buf.drain(..n + len);
                return code;
            }
        }
        let mut chunk = [0u8; 4096];
        let k = s.read(&mut chunk).expect("read response");
        assert!(k > 0, "sink closed the connection");
        buf.extend_from_slice(&chunk[..k]);
    }
}

fn main() {
    let o = opts();
    let per_client = o.requests.div_ceil(o.clients);
    let distinct = per_client.min(64);
    eprintln!(
        "building {} distinct requests per client ({} aws.cloudtrail events each, gzip {})",
        distinct, o.batch, o.gzip
    );
    let sets: Vec<Vec<Vec<u8>>> = (0..o.clients)
        .map(|c| requests(c as u32, distinct, o.batch, o.gzip))
        .collect();
    let req_bytes = sets[0][0].len();
    let h = sink::start(SinkConfig {
        threads: o.sink_threads,
        ..SinkConfig::default()
    })
    .expect("sink starts");
    let addr: SocketAddr = h.addr();
    let cpu0 = thread_cpu_s("sink-w");
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for set in &sets {
            s.spawn(move || {
                let mut conns: Vec<(TcpStream, Vec<u8>)> = (0..o.conns)
                    .map(|_| {
                        let c = TcpStream::connect(addr).expect("connect");
                        c.set_nodelay(true).unwrap();
                        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                        (c, Vec::new())
                    })
                    .collect();
                let mut sent = 0usize;
                while sent < per_client {
                    let round = (per_client - sent).min(conns.len());
                    for (k, (c, _)) in conns.iter_mut().take(round).enumerate() {
                        c.write_all(&set[(sent + k) % set.len()]).expect("write");
                    }
                    for (c, buf) in conns.iter_mut().take(round) {
                        assert_eq!(read_response(c, buf), 200);
                    }
                    sent += round;
                }
            });
        }
    });
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_s("sink-w") - cpu0;
    let st = h.shutdown();
    let events = st.events_received as f64;
    println!(
        "sink threads {}, clients {} x {} conns, {} requests of {} events ({} KB on the wire{})",
        o.sink_threads,
        o.clients,
        o.conns,
        st.requests,
        o.batch,
        req_bytes / 1000,
        if o.gzip { ", gzip" } else { "" }
    );
    println!(
        "wall {:.2}s: {:.0} events/s, {:.2} GB/s of bodies",
        wall,
        events / wall,
        st.bytes_received as f64 / wall / 1e9
    );
    println!(
        "sink CPU {:.2}s: {:.0} events per CPU-second (per core)",
        cpu,
        events / cpu
    );
    let runs: u64 = st.runs.values().map(|r| r.distinct).sum();
    println!(
        "accounted: {} distinct, {} duplicates (batches are resent in a cycle)",
        runs,
        st.runs.values().map(|r| r.duplicates).sum::<u64>()
    );
}
