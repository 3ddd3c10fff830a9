//! The sink's HTTP connections hand their read buffers on: a client that opens a new
//! connection for every large request (as a storm of resets makes a real client do) costs the
//! sink's worker a few KB per connection, not a new read buffer the size of the request. A
//! global allocator counts the bytes the sink's worker threads (`sink-w…`) ask for while 30
//! connections each send one request of ~600 KB, after a warm-up of 3 such connections. The
//! requests say `Connection: close`, so the sink has closed each connection (and kept its
//! buffer) before the client reads the end of the answer and opens the next.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use ingestbench::sink::{self, SinkConfig};

#[global_allocator]
static A: counting_alloc::OnThreads = counting_alloc::OnThreads("sink-w");

/// One POST of a JSON array of 2,000 events (~600 KB) on a new connection, read to its end.
fn one_request_on_a_new_connection(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(request).unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn reconnects_reuse_the_read_buffers_of_closed_connections() {
    let s = sink::start(SinkConfig {
        threads: 1,
        http: "127.0.0.1:0".parse().ok(),
        ..SinkConfig::default()
    })
    .expect("sink starts");
    let addr = s.http_addr().unwrap();
    let event = format!(r#"{{"msg":"{}"}}"#, "x".repeat(290));
    let body = format!("[{}]", vec![event; 2000].join(","));
    let request = format!(
        "POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    for _ in 0..3 {
        let a = one_request_on_a_new_connection(addr, request.as_bytes());
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    let before = counting_alloc::allocated_bytes();
    for _ in 0..30 {
        let a = one_request_on_a_new_connection(addr, request.as_bytes());
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
