//! The built-in sink end to end: started in-process on 127.0.0.1 port 0 and driven with
//! plain `TcpStream`s (a client written separately from the engine's, so a framing bug
//! cannot hide on both sides). Every socket has a timeout; every test stops its sink.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use ingestbench::sink::{self, Faults, SinkConfig, SinkHandle, SinkStats};

const TIMEOUT: Duration = Duration::from_secs(10);

fn start(cfg: SinkConfig) -> SinkHandle {
    sink::start(SinkConfig {
        threads: if cfg.threads == 0 { 2 } else { cfg.threads },
        ..cfg
    })
    .expect("sink starts")
}

fn start_default() -> SinkHandle {
    start(SinkConfig::default())
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
}

/// A keep-alive HTTP/1.1 client on one connection.
struct Client {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let s = TcpStream::connect_timeout(&addr, TIMEOUT).expect("connect");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        Client { s, buf: Vec::new() }
    }

    fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.s.write_all(bytes)
    }

    /// Reads one response (skipping a 100 Continue).
    fn read(&mut self) -> std::io::Result<Resp> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut r = httparse::Response::new(&mut headers);
            if let Ok(httparse::Status::Complete(n)) = r.parse(&self.buf) {
                let status = r.code.unwrap_or(0);
                let hs: Vec<(String, String)> = r
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_string(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect();
                let len: usize = hs
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .map_or(0, |(_, v)| v.parse().unwrap());
                if self.buf.len() >= n + len {
                    let body = String::from_utf8_lossy(&self.buf[n..n + len]).into_owned();
                    self.buf.drain(..n + len);
                    if status == 100 {
                        continue;
                    }
                    return Ok(Resp {
                        status,
                        headers: hs,
                        body,
                    });
                }
            }
            let mut chunk = [0u8; 65536];
            let k = self.s.read(&mut chunk)?;
            if k == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed",
                ));
            }
            self.buf.extend_from_slice(&chunk[..k]);
        }
    }

    fn request(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        self.try_request(method, path, headers, body)
            .expect("response")
    }

    fn try_request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<Resp> {
        self.send_raw(&request_bytes(method, path, headers, body))?;
        self.read()
    }
}

fn request_bytes(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut r = format!("{method} {path} HTTP/1.1\r\nHost: test\r\n");
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut b = r.into_bytes();
    b.extend_from_slice(body);
    b
}

/// A JSON-array batch of tagged events for (run, agent) with these seqs.
fn batch(run: &str, agent: u32, seqs: impl IntoIterator<Item = u64>) -> Vec<u8> {
    let events: Vec<String> = seqs
        .into_iter()
        .map(|s| {
            format!(
                r#"{{"eventName":"GetObject","n":[1,{{"x":"a,b]"}}],"ingestbench":{{"run":"{run}","agent":{agent},"seq":{s}}}}}"#
            )
        })
        .collect();
    format!("[{}]", events.join(",")).into_bytes()
}

fn stats_over_http(addr: SocketAddr) -> SinkStats {
    let r = Client::connect(addr).request("GET", "/stats", &[], b"");
    assert_eq!(r.status, 200);
    serde_json::from_str(&r.body).expect("stats JSON")
}

#[test]
fn lphc_batch_is_accepted_and_counted_per_run_and_agent() {
    let s = start_default();
    let mut c = Client::connect(s.addr());
    let r = c.request("POST", "/ingest", &[], &batch("r-aaa", 1, 0..500));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["accepted"], 500);
    let r = c.request("POST", "/api/v1/logs", &[], &batch("r-aaa", 2, 0..10));
    assert_eq!(r.json()["accepted"], 10);
    // NDJSON, untagged: counted in totals only.
    let r = c.request("POST", "/ingest", &[], b"{\"a\":1}\n{\"b\":[2,3]}\n");
    assert_eq!(r.json()["accepted"], 2);
    let st = s.stats();
    assert_eq!(st.events_received, 512);
    let run = &st.runs["r-aaa"];
    assert_eq!(
        (run.received, run.distinct, run.duplicates, run.gaps),
        (510, 510, 0, 0)
    );
    assert_eq!(run.agents["1"].max_seq, 499);
    assert_eq!(run.agents["2"].received, 10);
    assert_eq!(st.status_count(200), 3);
    assert_eq!(st.requests, 3);
    assert!(st.bytes_received > 500 * 80);
    assert_eq!(st.connections_opened, 1);
    let fin = s.shutdown();
    assert_eq!(fin.events_received, 512);
}

#[test]
fn duplicates_and_gaps_are_detected_across_connections() {
    let s = start_default();
    let mut a = Client::connect(s.addr());
    let mut b = Client::connect(s.addr());
    assert_eq!(
        a.request("POST", "/ingest", &[], &batch("r-dup", 0, 0..100))
            .status,
        200
    );
    // A resend of 90..100 on another connection (another thread), then 105..110: 100..105 lost.
    assert_eq!(
        b.request("POST", "/ingest", &[], &batch("r-dup", 0, 90..110))
            .status,
        200
    );
    assert_eq!(
        a.request("POST", "/ingest", &[], &batch("r-dup", 0, [100, 101]))
            .status,
        200
    );
    let st = s.stats();
    let ag = &st.runs["r-dup"].agents["0"];
    assert_eq!(ag.received, 122);
    assert_eq!(ag.distinct, 110);
    assert_eq!(ag.duplicates, 12);
    assert_eq!(ag.max_seq, 109);
    assert_eq!(ag.gaps, 0);
    assert_eq!(
        b.request("POST", "/ingest", &[], &batch("r-dup", 0, [120]))
            .status,
        200
    );
    let ag2 = s.stats().runs["r-dup"].agents["0"].clone();
    assert_eq!(ag2.gaps, 10);
    assert_eq!(s.stats().runs["r-dup"].gaps, 10);
}

#[test]
fn hec_event_raw_ack_and_health() {
    let s = start(SinkConfig {
        token: Some("hec-tok".into()),
        hec_ack: true,
        ..SinkConfig::default()
    });
    let mut c = Client::connect(s.addr());
    let auth = ("Authorization", "Splunk hec-tok");
    let chan = (
        "X-Splunk-Request-Channel",
        "0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba",
    );

    let r = c.request("GET", "/services/collector/health", &[], b"");
    assert_eq!((r.status, r.json()["code"].as_i64()), (200, Some(17)));

    let envelopes = concat!(
        r#"{"time":1,"host":"h","event":{"a":1,"ingestbench":{"run":"r-hec","agent":0,"seq":0}}}"#,
        "\n",
        r#"{"time":1,"event":"CEF:0|a|b|1|c|d|1|ingestbenchRun=r-hec ingestbenchAgent=0 ingestbenchSeq=1"}"#,
        r#"{"event":"{\"x\":{},\"ingestbench\":{\"run\":\"r-hec\",\"agent\":0,\"seq\":2}}"}"#
    );
    let r = c.request(
        "POST",
        "/services/collector/event",
        &[auth, chan],
        envelopes.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["text"], "Success");
    assert_eq!(r.json()["ackId"], 0);

    let raw = "<14>1 - h a - - [ingestbench@32473 run=\"r-hec\" agent=\"1\" seq=\"0\"] m\n\nline two ingestbench_run=r-hec ingestbench_agent=1 ingestbench_seq=1\n";
    let r = c.request(
        "POST",
        "/services/collector/raw?channel=0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba",
        &[auth],
        raw.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["ackId"], 1);

    // Without a channel while acks are on.
    let r = c.request("POST", "/services/collector", &[auth], envelopes.as_bytes());
    assert_eq!((r.status, r.json()["code"].as_i64()), (400, Some(10)));

    let r = c.request(
        "POST",
        "/services/collector/ack",
        &[auth, chan],
        br#"{"acks":[0,1,7]}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.json(),
        serde_json::json!({"acks":{"0":true,"1":true,"7":false}})
    );

    // Tokens: missing 401 code 2, wrong 403 code 4; Bearer accepted too.
    let r = c.request(
        "POST",
        "/services/collector/event",
        &[chan],
        envelopes.as_bytes(),
    );
    assert_eq!((r.status, r.json()["code"].as_i64()), (401, Some(2)));
    let r = c.request(
        "POST",
        "/services/collector/event",
        &[("Authorization", "Splunk nope"), chan],
        envelopes.as_bytes(),
    );
    assert_eq!((r.status, r.json()["code"].as_i64()), (403, Some(4)));
    let r = c.request(
        "POST",
        "/services/collector/event",
        &[("Authorization", "Bearer hec-tok"), chan],
        b"{\"event\":1}",
    );
    assert_eq!(r.status, 200);

    let st = s.stats();
    assert_eq!(st.events_received, 3 + 2 + 1);
    let run = &st.runs["r-hec"];
    assert_eq!(run.agents["0"].distinct, 3);
    assert_eq!(run.agents["1"].distinct, 2);
    assert_eq!(st.status_count(401), 1);
    assert_eq!(st.status_count(403), 1);
}

#[test]
fn gzip_and_chunked_bodies() {
    use flate2::{Compression, write::GzEncoder};
    let s = start_default();
    let mut c = Client::connect(s.addr());
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(&batch("r-gz", 0, 0..300)).unwrap();
    let gz = e.finish().unwrap();
    let r = c.request("POST", "/ingest", &[("Content-Encoding", "gzip")], &gz);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["accepted"], 300);
    let r = c.request(
        "POST",
        "/ingest",
        &[("Content-Encoding", "gzip")],
        b"not gzip at all",
    );
    assert_eq!(r.status, 400);
    let r = c.request("POST", "/ingest", &[("Content-Encoding", "br")], b"[]");
    assert_eq!(r.status, 415);

    // Chunked, sent in small pieces with pauses.
    let body = batch("r-gz", 1, 0..3);
    let (a, b) = body.split_at(body.len() / 2);
    let mut req =
        b"POST /ingest HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    req.extend_from_slice(format!("{:x}\r\n", a.len()).as_bytes());
    req.extend_from_slice(a);
    req.extend_from_slice(format!("\r\n{:x}\r\n", b.len()).as_bytes());
    req.extend_from_slice(b);
    req.extend_from_slice(b"\r\n0\r\n\r\n");
    for piece in req.chunks(37) {
        c.send_raw(piece).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let r = c.read().unwrap();
    assert_eq!(r.json()["accepted"], 3);
    assert_eq!(s.stats().runs["r-gz"].distinct, 303);
}

#[test]
fn pipelined_requests_in_one_write() {
    let s = start_default();
    let mut c = Client::connect(s.addr());
    let mut all = Vec::new();
    for i in 0..20u64 {
        all.extend(request_bytes(
            "POST",
            "/ingest",
            &[],
            &batch("r-pipe", 0, [i]),
        ));
    }
    all.extend(request_bytes("GET", "/health", &[], b""));
    c.send_raw(&all).unwrap();
    for _ in 0..20 {
        assert_eq!(c.read().unwrap().json()["accepted"], 1);
    }
    assert_eq!(c.read().unwrap().status, 200);
    assert_eq!(s.stats().runs["r-pipe"].distinct, 20);
}

#[test]
fn lphc_auth_schemes() {
    let s = start(SinkConfig {
        token: Some("s3cret".into()),
        ..SinkConfig::default()
    });
    let mut c = Client::connect(s.addr());
    let body = batch("r-auth", 0, [0]);
    for h in [
        ("X-API-Key", "s3cret"),
        ("Authorization", "Bearer s3cret"),
        ("Authorization", "Basic c3ZjOnMzY3JldA=="), // svc:s3cret
    ] {
        assert_eq!(
            c.request("POST", "/ingest", &[h], &body).status,
            200,
            "{h:?}"
        );
    }
    for h in [
        ("X-API-Key", "wrong"),
        ("Authorization", "Bearer wrong"),
        ("Authorization", "Basic c3ZjOndyb25n"),
    ] {
        let r = c.request("POST", "/ingest", &[h], &body);
        assert_eq!(r.status, 401, "{h:?}");
        assert!(!r.body.contains("s3cret"));
    }
    assert_eq!(c.request("POST", "/ingest", &[], &body).status, 401);
    let st = s.stats();
    assert_eq!(st.runs["r-auth"].received, 3);
    assert_eq!(st.events_received, 3);
}

#[test]
fn refusals_carry_retry_after_and_count_nothing() {
    let s = start(SinkConfig {
        faults: Faults {
            share_429: 0.5,
            share_503: 0.2,
            retry_after_s: 3,
            ..Faults::default()
        },
        ..SinkConfig::default()
    });
    let mut c = Client::connect(s.addr());
    let (mut ok, mut r429, mut r503) = (0u64, 0u64, 0u64);
    for i in 0..400u64 {
        let r = c.request("POST", "/ingest", &[], &batch("r-429", 0, [i]));
        match r.status {
            200 => ok += 1,
            429 => {
                r429 += 1;
                assert_eq!(r.header("Retry-After"), Some("3"));
            }
            503 => {
                r503 += 1;
                assert_eq!(r.header("Retry-After"), Some("3"));
            }
            other => panic!("status {other}"),
        }
    }
    assert!((150..=250).contains(&r429), "{r429}");
    assert!((40..=130).contains(&r503), "{r503}");
    let st = s.stats();
    assert_eq!(st.events_received, ok);
    assert_eq!(st.runs["r-429"].distinct, ok);
    assert_eq!(st.status_count(429), r429);
    assert_eq!(st.status_count(503), r503);
    // HEC's busy body.
    s.set_faults(Faults {
        share_503: 1.0,
        retry_after_s: 1,
        ..Faults::default()
    });
    let r = c.request("POST", "/services/collector", &[], b"{\"event\":1}");
    assert_eq!((r.status, r.json()["code"].as_i64()), (503, Some(9)));
}

#[test]
fn resets_are_connection_errors_and_count_nothing() {
    let s = start(SinkConfig {
        faults: Faults {
            reset_share: 1.0,
            ..Faults::default()
        },
        ..SinkConfig::default()
    });
    let mut c = Client::connect(s.addr());
    let e = c
        .try_request("POST", "/ingest", &[], &batch("r-reset", 0, [0]))
        .expect_err("the connection is reset");
    assert!(
        matches!(
            e.kind(),
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof
        ),
        "{e:?}"
    );
    // Control endpoints are never faulted.
    let st = stats_over_http(s.addr());
    assert_eq!(st.resets, 1);
    assert_eq!(st.events_received, 0);
    assert!(!st.runs.contains_key("r-reset"));
}

#[test]
fn latency_is_added_without_blocking_other_connections() {
    let s = start(SinkConfig {
        threads: 1,
        faults: Faults {
            latency_ms: 1000,
            ..Faults::default()
        },
        ..SinkConfig::default()
    });
    let mut slow = Client::connect(s.addr());
    slow.send_raw(&request_bytes(
        "POST",
        "/ingest",
        &[],
        &batch("r-lat", 0, [0]),
    ))
    .unwrap();
    // The same (single) thread still answers others at once.
    let t = Instant::now();
    let st = stats_over_http(s.addr());
    assert!(
        t.elapsed() < Duration::from_millis(250),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(st.requests, 1);
    let r = slow.read().unwrap();
    assert_eq!(r.status, 200);
    assert!(
        t.elapsed() >= Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn faults_can_be_set_over_http() {
    let s = start_default();
    let mut c = Client::connect(s.addr());
    let r = c.request(
        "POST",
        "/_faults",
        &[],
        br#"{"share_429":1.0,"retry_after_s":2}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(s.faults().share_429, 1.0);
    let r = c.request("POST", "/ingest", &[], &batch("r-f", 0, [0]));
    assert_eq!((r.status, r.header("Retry-After")), (429, Some("2")));
    let r = c.request("GET", "/_faults", &[], b"");
    assert_eq!(r.json()["retry_after_s"], 2);
    let r = c.request("POST", "/_faults", &[], br#"{"share_429":2}"#);
    assert_eq!(r.status, 400);
    let r = c.request("POST", "/_faults", &[], br#"{"bogus":1}"#);
    assert_eq!(r.status, 400);
    let r = c.request("POST", "/_faults", &[], b"{}");
    assert_eq!(r.status, 200);
    let r = c.request("POST", "/ingest", &[], &batch("r-f", 0, [0]));
    assert_eq!(r.status, 200);
}

#[test]
fn bad_requests_get_errors_not_panics() {
    let s = start_default();
    let mut c = Client::connect(s.addr());
    for (body, want) in [
        (&b"[{\"a\":1}"[..], 400),
        (b"hello", 400),
        (b"", 400),
        (b"[]", 200),
    ] {
        assert_eq!(
            c.request("POST", "/ingest", &[], body).status,
            want,
            "{body:?}"
        );
    }
    assert_eq!(c.request("GET", "/nope", &[], b"").status, 404);
    assert_eq!(c.request("DELETE", "/ingest", &[], b"").status, 405);
    // Garbage on the wire: 400 and the connection closes.
    let mut g = Client::connect(s.addr());
    g.send_raw(b"\x00\x01\x02 nonsense\r\n\r\n").unwrap();
    let r = g.read().unwrap();
    assert_eq!(r.status, 400);
    assert_eq!(r.header("Connection"), Some("close"));
    // A declared body over the cap: 413 before reading it.
    let mut big = Client::connect(s.addr());
    big.send_raw(b"POST /ingest HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n")
        .unwrap();
    assert_eq!(big.read().unwrap().status, 413);
    // Connection: close is honoured.
    let mut cl = Client::connect(s.addr());
    let r = cl.request("GET", "/health", &[("Connection", "close")], b"");
    assert_eq!(r.header("Connection"), Some("close"));
    assert!(cl.read().is_err());
}

#[test]
fn oversize_heads_and_bodies_are_refused_not_decoded() {
    use flate2::{Compression, write::GzEncoder};
    let s = start_default();
    // A gzip bomb: about 64 KB inflating past MAX_BODY. 413, and nothing counted.
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    let block = vec![0u8; 1 << 20];
    for _ in 0..sink::MAX_BODY / block.len() {
        e.write_all(&block).unwrap();
    }
    e.write_all(&[0]).unwrap();
    let bomb = e.finish().unwrap();
    let mut c = Client::connect(s.addr());
    let gz = [("Content-Encoding", "gzip")];
    let r = c.request("POST", "/ingest", &gz, &bomb);
    assert_eq!(
        (r.status, r.body.as_str()),
        (413, r#"{"error":"body too large"}"#)
    );
    let hec = [("Content-Encoding", "gzip"), ("Authorization", "Splunk t")];
    let r = c.request("POST", "/services/collector", &hec, &bomb);
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(r.json()["code"], 27);
    // The connection is still good for a normal request.
    let r = c.request("POST", "/ingest", &[], &batch("r-lim", 0, [0]));
    assert_eq!(r.status, 200);
    // One header field over MAX_HEADERS, and a head over MAX_HEAD: 431.
    let many: Vec<(String, String)> = (0..=sink::MAX_HEADERS)
        .map(|i| (format!("X-{i}"), "v".into()))
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = Client::connect(s.addr()).request("GET", "/health", &many, b"");
    assert_eq!(r.status, 431);
    let long = "a".repeat(sink::MAX_HEAD);
    let r = Client::connect(s.addr()).request("GET", "/health", &[("X-Long", &long)], b"");
    assert_eq!((r.status, r.header("Connection")), (431, Some("close")));
    // A chunk over MAX_BODY: 413 from its size line, before any data.
    let mut ch = Client::connect(s.addr());
    ch.send_raw(
        format!(
            "POST /ingest HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
            sink::MAX_BODY + 1
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(ch.read().unwrap().status, 413);
    let st = s.shutdown();
    assert_eq!(st.events_received, 1);
    assert_eq!(st.status.get("413"), Some(&3));
    assert_eq!(st.status.get("431"), Some(&2));
}

#[test]
fn shutdown_is_prompt_with_open_connections() {
    let s = start_default();
    let _idle = Client::connect(s.addr());
    let mut busy = Client::connect(s.addr());
    busy.send_raw(b"POST /ingest HTTP/1.1\r\nContent-Length: 100\r\n\r\n[")
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    let st = s.shutdown();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(st.connections_opened, 2);
}

#[test]
fn the_sink_command_serves_and_prints_stats() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args([
            "sink",
            "--http",
            "127.0.0.1:0",
            "--threads",
            "1",
            "--duration",
            "2s",
            "--token",
            "tok-secret-xyz",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ingestbench sink");
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("sink listening on http://")
        .unwrap_or_else(|| panic!("first stderr line: {line:?}"))
        .to_string();
    let addr: SocketAddr = url.parse().unwrap();
    let mut c = Client::connect(addr);
    let r = c.request(
        "POST",
        "/ingest",
        &[("X-API-Key", "tok-secret-xyz")],
        &batch("r-cli", 4, 0..7),
    );
    assert_eq!(r.json()["accepted"], 7);
    drop(c);
    let status = support::wait_exit(&mut child, Duration::from_secs(15), "sink --duration 2s");
    assert!(status.success());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert!(!out.contains("tok-secret-xyz") && !rest.contains("tok-secret-xyz"));
    let st: SinkStats = serde_json::from_str(&out).expect("stats JSON on stdout");
    assert_eq!(st.runs["r-cli"].agents["4"].distinct, 7);
}

#[test]
fn the_sink_command_refuses_remote_binds() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(["sink", "--http", "0.0.0.0:0", "--duration", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
}

#[test]
fn large_bodies_in_odd_sized_writes() {
    let s = start(SinkConfig {
        threads: 1,
        ..SinkConfig::default()
    });
    let mut c = Client::connect(s.addr());
    let body = batch("r-big", 0, 0..12_000); // about 1.3 MB: many times the first read buffer
    assert!(body.len() > 1_000_000);
    let req = request_bytes("POST", "/ingest", &[], &body);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut at = 0;
    while at < req.len() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = (1 + (x % 70_000) as usize).min(req.len() - at);
        c.send_raw(&req[at..at + n]).unwrap();
        at += n;
    }
    assert_eq!(c.read().unwrap().json()["accepted"], 12_000);
    // The same body chunked in 1000-byte chunks, then a small request on the same connection.
    let mut chunked =
        b"POST /ingest HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in body.chunks(1000) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    for piece in chunked.chunks(65_000) {
        c.send_raw(piece).unwrap();
    }
    assert_eq!(c.read().unwrap().json()["accepted"], 12_000);
    assert_eq!(
        c.request("POST", "/ingest", &[], &batch("r-big", 1, [0]))
            .json()["accepted"],
        1
    );
    let ag = &s.stats().runs["r-big"].agents["0"];
    assert_eq!((ag.distinct, ag.duplicates, ag.gaps), (12_000, 12_000, 0));
}

#[test]
fn expect_100_continue_is_answered() {
    let s = start_default();
    let mut c = Client::connect(s.addr());
    let body = batch("r-exp", 0, 0..5);
    c.send_raw(
        format!(
            "POST /ingest HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let mut first = [0u8; 25];
    c.s.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 100 Continue\r\n\r\n");
    c.send_raw(&body).unwrap();
    assert_eq!(c.read().unwrap().json()["accepted"], 5);
}

#[test]
fn stalls_hold_a_share_of_responses() {
    let s = start_default();
    s.set_faults(Faults {
        stall_share: 1.0,
        stall_ms: 800,
        ..Faults::default()
    });
    let mut c = Client::connect(s.addr());
    let t = Instant::now();
    let r = c.request("POST", "/ingest", &[], &batch("r-stall", 0, [0]));
    assert_eq!(r.status, 200);
    assert!(
        t.elapsed() >= Duration::from_millis(240),
        "{:?}",
        t.elapsed()
    );
    s.set_faults(Faults::default());
    let t = Instant::now();
    c.request("POST", "/ingest", &[], &batch("r-stall", 0, [1]));
    assert!(
        t.elapsed() < Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn the_handle_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SinkHandle>();
    send_sync::<SinkStats>();
}

#[test]
fn random_bytes_on_the_wire_do_not_hurt_the_sink() {
    let s = start_default();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let pieces: [&[u8]; 10] = [
        b"POST /ingest HTTP/1.1\r\n",
        b"Content-Length: 7\r\n",
        b"Transfer-Encoding: chunked\r\n",
        b"\r\n",
        b"[1,2,3]",
        b"ffff\r\n",
        b"0\r\n\r\n",
        b"\x00\xff\x80",
        b"GET /stats HTTP/1.1\r\n\r\n",
        b"Content-Encoding: gzip\r\n",
    ];
    for _ in 0..40 {
        let mut c = Client::connect(s.addr());
        c.s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut bytes = Vec::new();
        for _ in 0..(next() % 12) {
            bytes.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
        }
        let _ = c.send_raw(&bytes);
        // Read whatever comes (responses, or nothing while the sink waits for more).
        let mut sink_out = [0u8; 4096];
        let _ = c.s.read(&mut sink_out);
    }
    let mut c = Client::connect(s.addr());
    let r = c.request("POST", "/ingest", &[], &batch("r-after", 0, 0..3));
    assert_eq!(r.json()["accepted"], 3);
    assert_eq!(s.stats().runs["r-after"].distinct, 3);
    let t = Instant::now();
    s.shutdown();
    assert!(t.elapsed() < Duration::from_secs(2));
}
