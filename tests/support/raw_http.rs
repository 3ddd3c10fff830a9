//! Plain HTTP/1.1 on a raw `TcpStream` for the tests of the pages this binary serves (the status
//! page, the control panel): every header is exactly what the test wrote, one request per
//! connection, bounded by timeouts.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn error(&self) -> String {
        self.json()["error"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// One request on its own connection. `Host: 127.0.0.1:PORT` is sent unless `headers` holds a
/// Host (an empty value sends none); a POST always carries its Content-Length.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req += &format!("Host: 127.0.0.1:{}\r\n", addr.port());
    }
    for (k, v) in headers {
        if !v.is_empty() {
            req += &format!("{k}: {v}\r\n");
        }
    }
    if method == "POST" || !body.is_empty() {
        req += &format!("Content-Length: {}\r\n", body.len());
    }
    req += "Connection: close\r\n\r\n";
    req += body;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the answer");
    parse_answer(&String::from_utf8_lossy(&raw))
}

pub fn parse_answer(raw: &str) -> Answer {
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

/// The headers every answer of a page of this binary carries, and no CORS header.
pub fn assert_safe_headers(a: &Answer) {
    assert_eq!(a.header("Cache-Control"), Some("no-store"));
    assert_eq!(a.header("X-Content-Type-Options"), Some("nosniff"));
    let csp = a.header("Content-Security-Policy").expect("a CSP");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(a.header("Access-Control-Allow-Origin").is_none());
}
