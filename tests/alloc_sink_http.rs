//! The sink's read buffers belong to its worker, not to the HTTP connections: a client that
//! opens a new connection for every large request (as a storm of resets makes a real client
//! do) costs the sink's worker a few KB per connection, not a new read buffer the size of the
//! request, and connections kept open between requests hold none. A global allocator counts
//! the bytes the sink's worker threads (`sink-w…`) ask for.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use ingestbench::sink::{self, SinkConfig};

#[global_allocator]
static A: counting_alloc::OnThreads = counting_alloc::OnThreads("sink-w");

/// A sink with one worker thread, listening for HTTP on a free port.
fn one_thread_sink() -> (sink::SinkHandle, std::net::SocketAddr) {
    let s = sink::start(SinkConfig {
        threads: 1,
        http: "127.0.0.1:0".parse().ok(),
        ..SinkConfig::default()
    })
    .expect("sink starts");
    let addr = s.http_addr().unwrap();
    (s, addr)
}

/// One POST of a JSON array of 2,000 events (~600 KB) on a new connection, read to its end.
fn one_request_on_a_new_connection(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(request).unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).unwrap();
    answer
}

/// A POST of a JSON array of 2,000 events (~600 KB), `Connection: close` or keep-alive.
fn big_request(close: bool) -> Vec<u8> {
    let event = format!(r#"{{"msg":"{}"}}"#, "x".repeat(290));
    let body = format!("[{}]", vec![event; 2000].join(","));
    let connection = if close { "close" } else { "keep-alive" };
    format!(
        "POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: {connection}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// 30 connections each send one request, after a warm-up of 3. The requests say
/// `Connection: close`, so the sink has closed each connection (and kept its buffer) before the
/// client reads the end of the answer and opens the next.
#[test]
fn reconnects_reuse_the_read_buffers_of_closed_connections() {
    let (s, addr) = one_thread_sink();
    let request = big_request(true);
    for _ in 0..3 {
        let a = one_request_on_a_new_connection(addr, &request);
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    let before = counting_alloc::allocated_bytes();
    for _ in 0..30 {
        let a = one_request_on_a_new_connection(addr, &request);
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    let per_connection = (counting_alloc::allocated_bytes() - before) / 30;
    let st = s.shutdown();
    assert_eq!(st.events_received, 33 * 2000);
    eprintln!(
        "{per_connection} bytes allocated on sink threads per connection of one {} B request",
        request.len()
    );
    assert!(
        per_connection < 64 * 1024,
        "{per_connection} bytes allocated per connection (a request is {} B)",
        request.len()
    );
}

/// 40 keep-alive connections, opened first, then each sends one request in turn and reads its
/// answer: one read buffer serves them all, so the sink allocates about one request's worth,
/// not forty.
#[test]
fn connections_between_requests_hold_no_read_buffer() {
    let (s, addr) = one_thread_sink();
    let request = big_request(false);
    let mut conns: Vec<TcpStream> = (0..40).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let before = counting_alloc::allocated_bytes();
    for c in &mut conns {
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        c.write_all(&request).unwrap();
        let mut answer = [0u8; 512];
        let n = c.read(&mut answer).unwrap();
        let a = String::from_utf8_lossy(&answer[..n]);
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    let bytes = counting_alloc::allocated_bytes() - before;
    drop(conns);
    let st = s.shutdown();
    assert_eq!(st.events_received, 40 * 2000);
    eprintln!(
        "{bytes} bytes allocated on sink threads for 40 connections of one {} B request each",
        request.len()
    );
    assert!(
        bytes < 3 * request.len() as u64,
        "{bytes} bytes allocated for 40 connections (a request is {} B)",
        request.len()
    );
}
