//! Helpers shared by the entity modules' unit tests: sizes, columns, and the shape and
//! address-space predicates the tests assert with.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use super::{Pool, Sizes};

pub(super) fn sizes(n: usize) -> Sizes {
    Sizes {
        user: n,
        host: n,
        process: n,
        ip: n,
        domain: n,
    }
}

pub(super) fn column(p: &Pool, name: &str) -> Vec<String> {
    let a = p.attr_index(name).unwrap();
    (0..p.len()).map(|i| p.get(i, a).to_string()).collect()
}

pub(super) fn assert_unique(p: &Pool, name: &str) {
    let col = column(p, name);
    let set: HashSet<&String> = col.iter().collect();
    assert_eq!(
        set.len(),
        col.len(),
        "{} {name} not unique",
        p.kind().name()
    );
}

pub(super) fn is_hex(s: &str, len: usize, upper: bool) -> bool {
    s.len() == len
        && s.bytes().all(|b| {
            b.is_ascii_digit()
                || if upper {
                    (b'A'..=b'F').contains(&b)
                } else {
                    (b'a'..=b'f').contains(&b)
                }
        })
}

pub(super) fn is_uuid_v4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && [8, 4, 4, 4, 12]
            .iter()
            .zip(&parts)
            .all(|(n, p)| is_hex(p, *n, false))
        && parts[2].starts_with('4')
        && matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b')
}

pub(super) fn in_net(ip: Ipv4Addr, net: [u8; 4], len: u32) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    (u32::from(ip) & mask) == (u32::from_be_bytes(net) & mask)
}

/// Private, loopback, link-local, CGNAT, multicast and other special-purpose space
/// (RFC 5737 documentation ranges are allowed and checked separately).
pub(super) fn is_special(ip: Ipv4Addr) -> bool {
    const NETS: &[([u8; 4], u32)] = &[
        ([0, 0, 0, 0], 8),
        ([10, 0, 0, 0], 8),
        ([100, 64, 0, 0], 10),
        ([127, 0, 0, 0], 8),
        ([169, 254, 0, 0], 16),
        ([172, 16, 0, 0], 12),
        ([192, 0, 0, 0], 24),
        ([192, 88, 99, 0], 24),
        ([192, 168, 0, 0], 16),
        ([198, 18, 0, 0], 15),
        ([224, 0, 0, 0], 4),
        ([240, 0, 0, 0], 4),
    ];
    NETS.iter().any(|(n, l)| in_net(ip, *n, *l))
}

pub(super) fn is_documentation(ip: Ipv4Addr) -> bool {
    in_net(ip, [192, 0, 2, 0], 24)
        || in_net(ip, [198, 51, 100, 0], 24)
        || in_net(ip, [203, 0, 113, 0], 24)
}
