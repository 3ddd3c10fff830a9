//! A RELP server for tests, written from the spec (rsyslog's librelp `doc/relp.md`) and
//! sharing no code with the client under test: a thread per connection on 127.0.0.1 reads
//! frames (`TXNR SP COMMAND SP DATALEN [SP DATA] LF`) with blocking reads, answers `open`
//! with the offers librelp gives (`200 OK` LF `relp_version=0` …), each `syslog` with
//! `200 OK` (or `500 …` when told to refuse some), `close` with an empty `rsp`, and checks
//! that the txnrs of a connection run 1, 2, 3 …. It can refuse the open, refuse every n-th
//! message, or drop the first connection that reaches n messages without answering it (a
//! server gone mid-window). Included by `#[path]` where needed; its threads are named
//! `relp-fake…`, so a counting allocator watching the client's workers never counts them.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server behaves.
#[derive(Clone, Copy, Debug, Default)]
pub struct Behaviour {
    /// Answer `open` with a 500.
    pub refuse_open: bool,
    /// Answer every n-th message (counted over the server) with `500 refused`; 0: none.
    pub refuse_every: u64,
    /// Drop the first connection on which this many messages arrived, leaving the last one
    /// unanswered; 0: never.
    pub drop_after: u64,
    /// Keep every message received (an LF after each) for the test to read.
    pub keep: bool,
}

#[derive(Default)]
pub struct Stats {
    pub connections: AtomicU64,
    pub opens: AtomicU64,
    pub messages: AtomicU64,
    pub refused: AtomicU64,
    pub closes: AtomicU64,
    pub dropped: AtomicU64,
    /// Frames that broke the rules (bad framing, a txnr out of sequence), with what.
    pub errors: Mutex<Vec<String>>,
    pub kept: Mutex<Vec<u8>>,
}

pub struct FakeRelp {
    pub port: u16,
    pub stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
}

impl FakeRelp {
    pub fn start(b: Behaviour) -> FakeRelp {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        l.set_nonblocking(true).unwrap();
        let stats = Arc::new(Stats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let dropped_once = Arc::new(AtomicBool::new(false));
        let (st, sp) = (stats.clone(), stop.clone());
        std::thread::Builder::new()
            .name("relp-fake-accept".into())
            .spawn(move || {
                while !sp.load(Ordering::Relaxed) {
                    match l.accept() {
                        Ok((s, _)) => {
                            st.connections.fetch_add(1, Ordering::Relaxed);
                            let (st, sp, d) = (st.clone(), sp.clone(), dropped_once.clone());
                            std::thread::Builder::new()
                                .name("relp-fake-conn".into())
                                .spawn(move || serve(s, b, &st, &sp, &d))
                                .unwrap();
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
            .unwrap();
        FakeRelp { port, stats, stop }
    }

    pub fn messages(&self) -> u64 {
        self.stats.messages.load(Ordering::Relaxed)
    }

    pub fn errors(&self) -> Vec<String> {
        self.stats.errors.lock().unwrap().clone()
    }

    pub fn kept(&self) -> Vec<u8> {
        self.stats.kept.lock().unwrap().clone()
    }
}

impl Drop for FakeRelp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Reads bytes up to `end` (not kept); `None` at EOF.
fn until(r: &mut impl BufRead, end: u8, max: usize) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    r.take(max as u64 + 1).read_until(end, &mut v).ok()?;
    if v.last() != Some(&end) {
        return None;
    }
    v.pop();
    Some(v)
}

fn number(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

fn rsp(w: &mut TcpStream, txnr: u64, data: &str) -> bool {
    let frame = if data.is_empty() {
        format!("{txnr} rsp 0\n")
    } else {
        format!("{txnr} rsp {} {data}\n", data.len())
    };
    w.write_all(frame.as_bytes()).is_ok()
}

fn serve(s: TcpStream, b: Behaviour, st: &Stats, stop: &AtomicBool, dropped_once: &AtomicBool) {
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let mut expect = 1u64;
    let mut here = 0u64;
    let err = |what: String| st.errors.lock().unwrap().push(what);
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // Wait for a frame to begin (the read timeout lets `stop` be seen).
        match r.fill_buf() {
            Ok([]) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(_) => return,
        }
        r.get_ref()
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let Some(txnr) = until(&mut r, b' ', 9).as_deref().and_then(number) else {
            return err("bad txnr".into());
        };
        let Some(cmd) = until(&mut r, b' ', 32) else {
            return err(format!("txnr {txnr}: bad command"));
        };
        // DATALEN ends in SP (data follows) or LF (no data).
        let mut len = Vec::new();
        let mut end = [0u8];
        loop {
            if r.read_exact(&mut end).is_err() {
                return err(format!("txnr {txnr}: no datalen"));
            }
            if end[0] == b' ' || end[0] == b'\n' {
                break;
            }
            len.push(end[0]);
        }
        let Some(n) = number(&len) else {
            return err(format!("txnr {txnr}: bad datalen {len:?}"));
        };
        let mut data = vec![0u8; n as usize];
        if end[0] == b' ' {
            if r.read_exact(&mut data).is_err() || r.read_exact(&mut end).is_err() {
                return err(format!("txnr {txnr}: data cut short"));
            }
            if end[0] != b'\n' {
                return err(format!("txnr {txnr}: no LF after the data"));
            }
        } else if n != 0 {
            return err(format!("txnr {txnr}: datalen {n} and no data"));
        }
        r.get_ref()
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        if txnr != expect {
            return err(format!("txnr {txnr} where {expect} was due"));
        }
        expect = if expect == 999_999_999 { 1 } else { expect + 1 };
        let ok = match cmd.as_slice() {
            b"open" => {
                st.opens.fetch_add(1, Ordering::Relaxed);
                let offers = String::from_utf8_lossy(&data);
                if !offers.lines().any(|l| l == "relp_version=0")
                    || !offers.lines().any(|l| l == "commands=syslog")
                {
                    err(format!("open offers {offers:?}"));
                }
                if b.refuse_open {
                    rsp(&mut w, txnr, "500 required command not supported by client")
                } else {
                    rsp(
                        &mut w,
                        txnr,
                        "200 OK\nrelp_version=0\nrelp_software=relp-fake,1\ncommands=syslog",
                    )
                }
            }
            b"syslog" => {
                let seen = st.messages.fetch_add(1, Ordering::Relaxed) + 1;
                here += 1;
                if b.keep {
                    let mut k = st.kept.lock().unwrap();
                    k.extend_from_slice(&data);
                    k.push(b'\n');
                }
                if b.drop_after > 0
                    && here >= b.drop_after
                    && !dropped_once.swap(true, Ordering::Relaxed)
                {
                    st.dropped.fetch_add(1, Ordering::Relaxed);
                    let _ = w.shutdown(Shutdown::Both);
                    return;
                }
                if b.refuse_every > 0 && seen.is_multiple_of(b.refuse_every) {
                    st.refused.fetch_add(1, Ordering::Relaxed);
                    rsp(&mut w, txnr, "500 refused")
                } else {
                    rsp(&mut w, txnr, "200 OK")
                }
            }
            b"close" => {
                st.closes.fetch_add(1, Ordering::Relaxed);
                let _ = rsp(&mut w, txnr, "");
                let _ = w.write_all(b"0 serverclose 0\n");
                return;
            }
            other => {
                err(format!(
                    "txnr {txnr}: unknown command {:?}",
                    String::from_utf8_lossy(other)
                ));
                return;
            }
        };
        if !ok {
            return;
        }
    }
}
