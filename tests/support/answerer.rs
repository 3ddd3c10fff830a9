//! A scripted HTTP collector on 127.0.0.1 for the tests of what counts as an answer: each
//! request is read whole (head, then its Content-Length), counted, and answered with the
//! bytes a test's script gives for it — well-formed or not — after which the connection is
//! kept or closed as the script says. One thread per connection, every read bounded by a
//! timeout; the listener stops when the `Answerer` is dropped.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// What to write back to one request, and whether to close after it.
pub struct Reply {
    pub bytes: Vec<u8>,
    pub close: bool,
    /// Then this many bytes of filler, written 64 KiB at a time (a large body is never
    /// built in memory).
    pub filler: usize,
}

impl Reply {
    /// A complete answer with a Content-Length, the connection kept.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply {
            bytes: format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
            close: false,
            filler: 0,
        }
    }

    /// These bytes exactly, then the close.
    pub fn raw_then_close(bytes: &[u8]) -> Reply {
        Reply {
            bytes: bytes.to_vec(),
            close: true,
            filler: 0,
        }
    }

    /// A 200 head without a length, then `n` bytes of body, then the close.
    pub fn until_close(n: usize) -> Reply {
        Reply {
            bytes: b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec(),
            close: true,
            filler: n,
        }
    }
}

type Script = dyn Fn(&str, &[u8]) -> Reply + Send + Sync;

pub struct Answerer {
    pub addr: SocketAddr,
    /// POSTs read (every attempt of every batch).
    posts: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Answerer {
    /// Answers each request (`path`, `body`) with `script`'s reply.
    pub fn start(script: impl Fn(&str, &[u8]) -> Reply + Send + Sync + 'static) -> Answerer {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let posts = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let (p, s) = (posts.clone(), stop.clone());
        std::thread::spawn(move || {
            for c in l.incoming() {
                if s.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(c) = c else { continue };
                let (p, script) = (p.clone(), script.clone());
                std::thread::spawn(move || serve(c, &*script, &p));
            }
        });
        Answerer { addr, posts, stop }
    }

    pub fn posts(&self) -> u64 {
        self.posts.load(Ordering::Relaxed)
    }
}

impl Drop for Answerer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn serve(mut c: TcpStream, script: &Script, posts: &AtomicU64) {
    let _ = c.set_nodelay(true);
    let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = c.set_write_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    loop {
        let Some((path, body)) = request(&mut c, &mut buf) else {
            return;
        };
        posts.fetch_add(1, Ordering::Relaxed);
        let r = script(&path, &body);
        let mut ok = c.write_all(&r.bytes).is_ok();
        let chunk = [b'x'; 65536];
        let mut left = r.filler;
        while ok && left > 0 {
            let n = left.min(chunk.len());
            ok = c.write_all(&chunk[..n]).is_ok();
            left -= n;
        }
        if !ok || r.close {
            let _ = c.shutdown(std::net::Shutdown::Write);
            // Read what is left so the close is a FIN, not a reset.
            let mut sink = [0u8; 4096];
            while matches!(c.read(&mut sink), Ok(n) if n > 0) {}
            return;
        }
    }
}

/// One request: its path and body (by Content-Length).
fn request(c: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = c.read(&mut chunk).ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let path = head.split(' ').nth(1).unwrap_or("").to_string();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = c.read(&mut chunk).ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end..head_end + len].to_vec();
    buf.drain(..head_end + len);
    Some((path, body))
}
