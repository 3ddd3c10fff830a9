//! The resolve and connect steps, by hand so they can be timed and described: the name looked
//! up with std (every address, the first being the one a run uses), then a TCP connect with
//! `TcpStream::connect_timeout`; syslog over UDP has no connection, so there the step is
//! skipped (a connected UDP socket is opened for the auth step's message).

use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::time::{Duration, Instant};

use crate::exit::Exit;
use crate::probe::setup::Stream;
use crate::probe::{Ctx, Step, cut_off, ms};
use crate::run::target::Transport;

const NAME: &str = "resolve";

pub fn resolve(ctx: &mut Ctx<'_>, left: Duration) -> Step {
    let (host, port) = (ctx.host.clone(), ctx.port);
    let t0 = Instant::now();
    // getaddrinfo cannot be given a timeout: it runs on a thread of its own, waited for as long
    // as the probe has left.
    let (tx, rx) = crossbeam_channel::bounded(1);
    let lookup = host.clone();
    let spawned = std::thread::Builder::new()
        .name("probe-resolve".into())
        .spawn(move || {
            let r = (lookup.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<SocketAddr>>());
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        return Step::fail(NAME, format!("cannot start a thread: {e}"), Exit::Aborted);
    }
    let found = match rx.recv_timeout(left) {
        Ok(r) => r,
        Err(_) => return Step::fail(NAME, cut_off(ctx.opts.timeout), Exit::Aborted),
    };
    let took = t0.elapsed();
    let addrs = match found {
        Ok(a) if !a.is_empty() => a,
        Ok(_) => {
            return Step::fail(
                NAME,
                format!("{host} resolves to no address"),
                Exit::Aborted,
            );
        }
        Err(e) => {
            return Step::fail(NAME, format!("cannot resolve {host}: {e}"), Exit::Aborted)
                .detail("host", &host)
                .detail("port", port);
        }
    };
    if let Some(m) = &ctx.plan_error {
        return Step::fail(NAME, format!("at setup: {m}"), Exit::Aborted);
    }
    let Some(used) = ctx
        .endpoint
        .as_ref()
        .map(|e| e.addr)
        .or_else(|| addrs.first().copied())
    else {
        return Step::fail(
            NAME,
            format!("{host} resolves to no address"),
            Exit::Aborted,
        );
    };
    ctx.addr = Some(used);
    let n = addrs.len();
    let mut s = Step::pass(
        NAME,
        format!(
            "{} ({n} address{})",
            if used.ip().to_string() == host {
                used.to_string()
            } else {
                format!("{host}:{port} → {used}")
            },
            if n == 1 { "" } else { "es" },
        ),
    )
    .detail("host", &host)
    .detail("port", port)
    .detail(
        "addresses",
        addrs.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
    )
    .detail("used", used.to_string())
    .detail("resolve_ms", ms(took));
    if n > 1 {
        s = s.line(format!(
            "addresses {} (a run uses the first)",
            addrs
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    s
}

pub fn connect(ctx: &mut Ctx<'_>, left: Duration) -> Step {
    const NAME: &str = "connect";
    let Some(addr) = ctx.addr else {
        return Step::fail(NAME, "no address to connect to", Exit::Aborted);
    };
    if ctx.transport == Transport::SyslogUdp {
        return match udp_socket(addr) {
            Ok(s) => {
                ctx.stream = Some(Stream::Udp(s));
                Step::skipped(
                    NAME,
                    "not applicable: syslog over UDP has no connection (nothing answers a datagram)",
                )
                .detail("address", addr.to_string())
            }
            Err(e) => Step::fail(
                NAME,
                format!("cannot open a UDP socket to {addr}: {e}"),
                Exit::Aborted,
            ),
        };
    }
    let t0 = Instant::now();
    match TcpStream::connect_timeout(&addr, left) {
        Ok(s) => {
            let took = t0.elapsed();
            let _ = s.set_nodelay(true);
            let local = s.local_addr().map(|a| a.to_string()).unwrap_or_default();
            ctx.stream = Some(Stream::Tcp(s));
            Step::pass(NAME, format!("{addr} (TCP)"))
                .detail("address", addr.to_string())
                .detail("local", local)
                .detail("connect_ms", ms(took))
        }
        Err(e) => {
            let why = match e.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    format!("connection refused by {addr}: nothing listens on that port")
                }
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                    format!("no answer from {addr} within {} ms", ms(left))
                }
                _ => format!("cannot connect to {addr}: {e}"),
            };
            Step::fail(NAME, why, Exit::Aborted).detail("address", addr.to_string())
        }
    }
}

fn udp_socket(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    let any = if addr.is_ipv4() {
        SocketAddr::from(([0u8; 4], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let s = UdpSocket::bind(any)?;
    s.connect(addr)?;
    Ok(s)
}
