//! The report's `loss` section end to end over syslog UDP on 127.0.0.1: against the built-in
//! sink every scheduled event is in exactly one stage and the sink's verification splits the
//! accepted ones; against a socket of the test's own with a tiny receive buffer, read only
//! after the run, the kernel's drops (`udp_rcvbuf_drops`, from /proc/net/udp) and the
//! datagrams queued add up to exactly the datagrams written.

mod support;

use std::net::UdpSocket;

use serde_json::Value;
use support::{all, run_json, write_config};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn staged(l: &Value) -> u64 {
    u(&l["not_sent"]) + u(&l["refused"]["events"]) + u(&l["accepted"])
}

#[test]
fn a_udp_run_to_the_builtin_sink_puts_every_event_in_one_stage() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: builtin\n  syslog: { transport: udp }\nsource: { id: linux.syslog }\nworkload: { eps: 4000, stop: { total_events: 3000 } }\n",
    );
    let (o, v) = run_json(&cfg, 1, 2);
    let l = &v["loss"];
    assert!(l.is_object(), "{}", all(&o));
    assert_eq!(u(&l["scheduled"]), 3000, "{l:#}");
    assert_eq!(l["unattributed"], 0, "{l:#}");
    assert_eq!(staged(l), 3000, "{l:#}");
    // The built-in sink said what it holds: it splits the accepted.
    let ver = &v["verification"];
    assert_eq!(l["store"], "built-in sink", "{l:#}");
    assert_eq!(l["accepted_not_stored"], ver["lost_events"], "{l:#} {ver}");
    assert_eq!(
        u(&l["stored"]) + u(&l["accepted_not_stored"]),
        u(&l["accepted"])
    );
    assert_eq!(l["duplicated"], ver["duplicates"]);
    // The sink's socket is on this host: its drops were read, and they are part of the loss.
    let d = &l["udp_rcvbuf_drops"];
    assert_eq!(d["address"], v["target"]["address"], "{d:#}");
    assert!(u(&d["sockets"]) >= 1, "{d:#}");
    assert!(
        u(&d["datagrams"]) <= u(&l["accepted_not_stored"]),
        "{d:#} {l:#}"
    );
    let code = o.status.code();
    let lost = u(&l["accepted_not_stored"]);
    assert_eq!(code, Some(if lost == 0 { 0 } else { 5 }), "{}", all(&o));
}

/// A UDP socket bound to 127.0.0.1 with the smallest receive buffer the kernel grants.
fn tiny_receiver() -> UdpSocket {
    let s = socket2::Socket::new(
        socket2::Domain::IPV4,
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )
    .unwrap();
    s.set_recv_buffer_size(1).unwrap();
    s.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    s.into()
}

#[test]
fn a_full_receive_buffer_s_drops_are_read_from_the_kernel() {
    let rx = tiny_receiver();
    let port = rx.local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "c.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  adapter: syslog\n  url: \"udp://127.0.0.1:{port}\"\n  syslog: {{ udp_order: as_generated }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: 20000, stop: {{ total_events: 2000 }} }}\n"
        ),
    );
    let (o, v) = run_json(&cfg, 1, 1);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    // What the socket kept, read only now.
    rx.set_nonblocking(true).unwrap();
    let mut queued = 0u64;
    let mut buf = [0u8; 65536];
    while rx.recv(&mut buf).is_ok() {
        queued += 1;
    }
    let l = &v["loss"];
    assert_eq!(staged(l), 2000, "{l:#}");
    let written = u(&l["accepted"]);
    assert_eq!(written, 2000, "{l:#}");
    let d = &l["udp_rcvbuf_drops"];
    assert_eq!(d["address"], format!("127.0.0.1:{port}").as_str(), "{d:#}");
    assert_eq!(d["sockets"], 1, "{d:#}");
    let drops = u(&d["datagrams"]);
    assert!(
        drops > 0,
        "a tiny buffer never read during the run dropped nothing: {d:#}"
    );
    assert_eq!(
        drops + queued,
        written,
        "drops {drops} + queued {queued}: {d:#}"
    );
    // No store was asked: the drops are a known part of a loss whose whole is not known.
    assert!(l["accepted_not_stored"].is_null(), "{l:#}");
}
