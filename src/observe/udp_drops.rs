//! The kernel's receive-buffer drops of a UDP target's sockets. `/proc/net/udp` and
//! `/proc/net/udp6` list every UDP socket of this network namespace, one line each, ending in a
//! `drops` column: the socket's `sk_drops`, datagrams that reached it and were thrown away,
//! almost always because its receive buffer was full (the same events `RcvbufErrors` in
//! `/proc/net/snmp` counts for the whole host). For a target on this host (a loopback
//! address: a collector on 127.0.0.1, the built-in sink's UDP port) a [`Probe`] reads the drops
//! of every socket bound to the target's port before the run and again after it; the
//! difference is what the receiver lost inside the kernel while the run went on. A remote
//! target's sockets, or ones in another network namespace (a container), cannot be read here,
//! and [`RcvbufDrops`] says so rather than give a number.
//!
//! The line format, from the kernel's `udp4_format_sock` (net/ipv4/udp.c) and
//! `__ip6_dgram_sock_seq_show` (net/ipv6/datagram.c):
//! `sl: local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
//! ref pointer drops`. An address is the stored (network-order) address printed as host-order
//! 32-bit words (`%08X`; four of them for IPv6), so the word's native-endian bytes are the
//! address; the port follows in host order (`%04X`). `drops` is printed `%u`: a 32-bit count,
//! so a difference is taken modulo 2^32.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde::Serialize;

/// One socket's line: where it is bound, its inode (which tells sockets apart across two
/// readings) and its drops so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpSocketLine {
    pub local: SocketAddr,
    pub inode: u64,
    pub drops: u32,
}

/// The columns of a line, counted from 0 after splitting on whitespace.
const LOCAL: usize = 1;
const INODE: usize = 9;
const DROPS: usize = 12;

/// One line of either file; `None` for the header and anything that is not a socket line.
pub fn parse_line(line: &str) -> Option<UdpSocketLine> {
    let cols: Vec<&str> = line.split_whitespace().collect();
    if cols.len() <= DROPS || !cols.first()?.ends_with(':') {
        return None;
    }
    let (addr, port) = cols.get(LOCAL)?.split_once(':')?;
    Some(UdpSocketLine {
        local: SocketAddr::new(parse_addr(addr)?, u16::from_str_radix(port, 16).ok()?),
        inode: cols.get(INODE)?.parse().ok()?,
        drops: cols.get(DROPS)?.parse().ok()?,
    })
}

/// An address as the kernel prints it: one (IPv4) or four (IPv6) host-order hex words of the
/// network-order address.
fn parse_addr(hex: &str) -> Option<IpAddr> {
    let word = |i: usize| {
        hex.get(i * 8..i * 8 + 8)
            .and_then(|w| u32::from_str_radix(w, 16).ok())
            .map(u32::to_ne_bytes)
    };
    match hex.len() {
        8 => Some(IpAddr::V4(Ipv4Addr::from(word(0)?))),
        32 => {
            let mut b = [0u8; 16];
            for (i, quad) in b.chunks_exact_mut(4).enumerate() {
                quad.copy_from_slice(&word(i)?);
            }
            Some(IpAddr::V6(Ipv6Addr::from(b)))
        }
        _ => None,
    }
}

/// Every socket line of a file's text.
pub fn parse_table(text: &str) -> Vec<UdpSocketLine> {
    text.lines().filter_map(parse_line).collect()
}

/// Whether a socket bound at `local` takes datagrams sent to `target`: the same port, and
/// the same address, the wildcard, or the same IPv4 address mapped into IPv6.
pub fn receives(local: SocketAddr, target: SocketAddr) -> bool {
    let canonical = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    local.port() == target.port()
        && (local.ip().is_unspecified() || canonical(local.ip()) == canonical(target.ip()))
}

/// The drops of each socket (by inode) that takes datagrams sent to `target`.
pub fn drops_for(lines: &[UdpSocketLine], target: SocketAddr) -> BTreeMap<u64, u32> {
    lines
        .iter()
        .filter(|l| receives(l.local, target))
        .map(|l| (l.inode, l.drops))
        .collect()
}

/// Both files of this host; a missing `udp6` (IPv6 off) is no socket, a missing `udp` is no
/// reading at all.
fn read_tables() -> Result<Vec<UdpSocketLine>, String> {
    let v4 = std::fs::read_to_string("/proc/net/udp")
        .map_err(|e| format!("/proc/net/udp cannot be read: {e}"))?;
    let mut lines = parse_table(&v4);
    if let Ok(v6) = std::fs::read_to_string("/proc/net/udp6") {
        lines.extend(parse_table(&v6));
    }
    Ok(lines)
}

/// What the report says of the target's receive-buffer drops (the `loss` section's
/// `udp_rcvbuf_drops`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RcvbufDrops {
    /// The target's address: the sockets bound to its port were read.
    pub address: String,
    /// Datagrams (one syslog event each) those sockets dropped during the run, from any
    /// sender; null when they could not be read.
    pub datagrams: Option<u64>,
    /// Sockets read (each member of a SO_REUSEPORT group is one).
    pub sockets: usize,
    /// Why `datagrams` is null, or what to know about it.
    pub note: Option<String>,
}

/// The difference between two readings: drops of sockets in both (modulo 2^32), plus all of
/// the drops of sockets that appeared in between (their drops all fell in the run); a socket
/// gone in between makes the figure a lower bound, said in the note.
pub fn difference(
    before: &BTreeMap<u64, u32>,
    after: &BTreeMap<u64, u32>,
) -> (u64, Option<String>) {
    let mut sum = 0u64;
    for (inode, now) in after {
        let then = before.get(inode).copied().unwrap_or(0);
        sum += u64::from(now.wrapping_sub(then));
    }
    let gone = before.keys().filter(|k| !after.contains_key(k)).count();
    let note = (gone > 0).then(|| {
        format!(
            "{gone} socket(s) on the port closed during the run: their drops after the first reading are not counted, so this is a lower bound"
        )
    });
    (sum, note)
}

/// A reading taken before the run, to be finished after it.
pub struct Probe {
    target: SocketAddr,
    before: Result<BTreeMap<u64, u32>, String>,
}

impl Probe {
    /// Reads the drops of the sockets taking datagrams sent to `target`, when it is on this
    /// host.
    pub fn start(target: SocketAddr) -> Probe {
        let before = if target.ip().is_loopback() {
            read_tables().map(|l| drops_for(&l, target))
        } else {
            Err(format!(
                "not read: the target {target} is not a loopback address, so its socket may be on another host, whose /proc/net/udp this one does not show"
            ))
        };
        Probe { target, before }
    }

    /// Reads again and gives the difference, or why there is none.
    pub fn finish(self) -> RcvbufDrops {
        let address = self.target.to_string();
        let unread = |note: String| RcvbufDrops {
            address: address.clone(),
            datagrams: None,
            sockets: 0,
            note: Some(note),
        };
        let before = match self.before {
            Ok(b) => b,
            Err(e) => return unread(e),
        };
        let after = match read_tables() {
            Ok(l) => drops_for(&l, self.target),
            Err(e) => return unread(e),
        };
        if before.is_empty() && after.is_empty() {
            return unread(format!(
                "no socket bound to port {} is listed in /proc/net/udp or udp6 (the receiver may be in another network namespace, e.g. a container)",
                self.target.port()
            ));
        }
        let (datagrams, note) = difference(&before, &after);
        RcvbufDrops {
            address,
            datagrams: Some(datagrams),
            sockets: after.len().max(before.len()),
            note,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as this kernel (6.18) printed them: a socket bound to 127.0.0.1:37623 whose
    // 1 KiB receive buffer overflowed (199 drops), a client socket bound to 0.0.0.0:54343,
    // and an IPv6 socket bound to [::1]:52711.
    const UDP: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops            \n 6736: 0100007F:92F7 00000000:0000 07 00000000:00000500 00:00000000 00000000     0        0 468238 2 0000000082979963 199      \n 7072: 00000000:D447 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 468240 2 00000000e42e1e16 0        \n";
    const UDP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n 5440: 00000000000000000000000001000000:CDE7 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 468239 2 00000000989486f8 0\n";

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_real_lines_of_both_files() {
        let v4 = parse_table(UDP);
        assert_eq!(
            v4,
            vec![
                UdpSocketLine {
                    local: addr("127.0.0.1:37623"),
                    inode: 468238,
                    drops: 199
                },
                UdpSocketLine {
                    local: addr("0.0.0.0:54343"),
                    inode: 468240,
                    drops: 0
                },
            ]
        );
        let v6 = parse_table(UDP6);
        assert_eq!(
            v6,
            vec![UdpSocketLine {
                local: addr("[::1]:52711"),
                inode: 468239,
                drops: 0
            }]
        );
        for bad in [
            "",
            "garbage",
            " 1: 0100007F:ZZZZ 00000000:0000 07 0:0 0:0 0 0 0 9 2 p 1",
        ] {
            assert_eq!(parse_line(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_target_port_selects_its_sockets() {
        let lines = parse_table(UDP);
        let at = |s: &str| drops_for(&lines, addr(s));
        assert_eq!(at("127.0.0.1:37623"), BTreeMap::from([(468238, 199)]));
        assert_eq!(
            at("127.0.0.1:54343"),
            BTreeMap::from([(468240, 0)]),
            "wildcard"
        );
        assert!(at("127.0.0.2:37623").is_empty(), "another address");
        assert!(at("127.0.0.1:1").is_empty());
        assert!(
            receives(addr("[::]:514"), addr("127.0.0.1:514")),
            "dual stack"
        );
        assert!(receives(
            addr("[::ffff:127.0.0.1]:514"),
            addr("127.0.0.1:514")
        ));
        assert!(!receives(addr("[::1]:514"), addr("127.0.0.1:514")));
    }

    #[test]
    fn differences_count_new_sockets_whole_wrap_and_say_when_one_closed() {
        let before = BTreeMap::from([(1, 10u32), (2, u32::MAX - 1), (3, 5)]);
        let after = BTreeMap::from([(1, 15u32), (2, 3), (4, 7)]);
        let (n, note) = difference(&before, &after);
        assert_eq!(n, 5 + 5 + 7);
        assert!(note.unwrap().contains("lower bound"));
        let (n, note) = difference(&BTreeMap::from([(1, 4)]), &BTreeMap::from([(1, 4)]));
        assert_eq!((n, note), (0, None));
    }

    #[test]
    fn a_remote_target_is_said_to_be_unreadable() {
        let d = Probe::start(addr("192.0.2.1:514")).finish();
        assert_eq!(d.datagrams, None);
        assert!(d.note.unwrap().contains("not a loopback address"));
    }
}
