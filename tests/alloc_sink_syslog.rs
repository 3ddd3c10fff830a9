//! The sink's syslog path allocates nothing per message in steady state: a global allocator
//! counts allocations made on the sink's worker threads (named `sink-w…`) while 200,000 TCP
//! messages (both framings) and 5,000 UDP datagrams arrive after a warm-up. The ledger may
//! allocate once per 65,536 new seqs of an agent (its bitset's chunk index grows), so the
//! bound is a handful for the whole test, not zero.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::io::Write;
use std::net::{TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use ingestbench::sink::{self, SinkConfig, SinkHandle, SinkStats};

#[global_allocator]
static A: counting_alloc::OnThreads = counting_alloc::OnThreads("sink-w");

fn msg(agent: u32, seq: u64) -> String {
    format!(
        "<86>1 2026-01-05T09:00:00.000001Z web-02 sshd 4242 - [ingestbench@32473 run=\"r-alloc\" agent=\"{agent}\" seq=\"{seq}\"] Accepted publickey for alice from 10.1.2.3 port 50022 ssh2"
    )
}

/// Octet-counted for even seqs, LF-framed for odd ones.
fn frames(agent: u32, seqs: std::ops::Range<u64>) -> Vec<u8> {
    let mut b = Vec::new();
    for seq in seqs {
        let m = msg(agent, seq);
        if seq % 2 == 0 {
            b.extend_from_slice(format!("{} {m}", m.len()).as_bytes());
        } else {
            b.extend_from_slice(m.as_bytes());
            b.push(b'\n');
        }
    }
    b
}

fn wait_for(s: &SinkHandle, ok: impl Fn(&SinkStats) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok(&s.stats()) {
        assert!(Instant::now() < deadline, "timed out: {:#?}", s.stats());
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn syslog_messages_allocate_nothing_in_steady_state() {
    let local = "127.0.0.1:0".parse().ok();
    let s = sink::start(SinkConfig {
        threads: 1,
        syslog_tcp: local,
        syslog_udp: local,
        ..SinkConfig::default()
    })
    .expect("sink starts");
    let mut c = TcpStream::connect(s.syslog_tcp_addr().unwrap()).unwrap();
    c.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = s.syslog_udp_addr().unwrap();
    // Warm-up: buffers, the tag queue, the ledger entries and their caches.
    c.write_all(&frames(0, 0..20_000)).unwrap();
    // Bursts of 50 datagrams, each counted before the next: no drop even with a small
    // receive buffer.
    let send = |seqs: std::ops::Range<u64>| {
        for seq in seqs {
            u.send_to(msg(1, seq).as_bytes(), to).unwrap();
            if (seq + 1).is_multiple_of(50) {
                wait_for(&s, |st| st.syslog.messages_udp == seq + 1);
            }
        }
    };
    send(0..1000);
    wait_for(&s, |st| {
        st.syslog.messages_tcp == 20_000 && st.syslog.messages_udp == 1000
    });
    let before = counting_alloc::allocations();
    let tcp = frames(0, 20_000..220_000);
    for chunk in tcp.chunks(100_003) {
        c.write_all(chunk).unwrap();
    }
    send(1000..6000);
    wait_for(&s, |st| {
        st.syslog.messages_tcp == 220_000 && st.syslog.messages_udp == 6000
    });
    let allocs = counting_alloc::allocations() - before;
    eprintln!("{allocs} allocations on sink threads for 205,000 messages");
    let st = s.shutdown();
    assert_eq!(st.runs["r-alloc"].distinct, 226_000);
    assert!(
        allocs <= 16,
        "{allocs} allocations on sink threads for 205,000 messages"
    );
}
