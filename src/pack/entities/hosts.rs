//! The host pool: workstation and server roles with their operating systems, vendor MAC
//! prefixes, the RFC 1918 address allocator, and the generator of names (`WS-0417`, `DC-01` …),
//! FQDNs, addresses, MACs, Falcon agent ids, GUIDs and the office address each host's traffic
//! leaves from (the users' offices: a host at an office egresses where its users do).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::rng::{Gen, ip4, kind_key, push_hex, push_ipv4, push_uuid};
use super::users::Org;
use super::{EntityKind, Pool};

const WS_PERCENT_MILLE: u64 = 700;
const JUMP_PERCENT_MILLE: u64 = 20;

struct Role {
    prefix: &'static str,
    weight: u32,
    os: &'static [(u32, &'static str)],
}

const WIN11: &str = "Windows 11 Enterprise";
const WIN10: &str = "Windows 10 Enterprise";
const WS2022: &str = "Windows Server 2022";
const WS2019: &str = "Windows Server 2019";
const WS2016: &str = "Windows Server 2016";
const UBUNTU22: &str = "Ubuntu 22.04 LTS";
const UBUNTU24: &str = "Ubuntu 24.04 LTS";
const RHEL9: &str = "RHEL 9";
const RHEL8: &str = "RHEL 8";

const WORKSTATION_OS: &[(u32, &str)] = &[(65, WIN11), (35, WIN10)];

#[rustfmt::skip]
const SERVER_ROLES: &[Role] = &[
    Role { prefix: "DC", weight: 5, os: &[(60, WS2022), (40, WS2019)] },
    Role { prefix: "FS", weight: 6, os: &[(50, WS2022), (35, WS2019), (15, WS2016)] },
    Role { prefix: "SRV-APP", weight: 14, os: &[(60, WS2022), (40, WS2019)] },
    Role { prefix: "WEB", weight: 10, os: &[(35, WS2022), (40, UBUNTU22), (10, UBUNTU24), (15, RHEL9)] },
    Role { prefix: "DB", weight: 8, os: &[(45, WS2022), (35, RHEL9), (20, UBUNTU22)] },
    Role { prefix: "SQL", weight: 5, os: &[(55, WS2022), (45, WS2019)] },
    Role { prefix: "EXCH", weight: 2, os: &[(100, WS2019)] },
    Role { prefix: "PRN", weight: 2, os: &[(60, WS2019), (40, WS2016)] },
    Role { prefix: "RDS", weight: 3, os: &[(100, WS2022)] },
    Role { prefix: "APP", weight: 8, os: &[(50, UBUNTU22), (25, UBUNTU24), (25, RHEL9)] },
    Role { prefix: "K8S-NODE", weight: 6, os: &[(70, UBUNTU22), (30, UBUNTU24)] },
    Role { prefix: "SCCM", weight: 2, os: &[(100, WS2022)] },
    Role { prefix: "CA", weight: 1, os: &[(100, WS2022)] },
    Role { prefix: "LOG", weight: 2, os: &[(60, RHEL9), (40, RHEL8)] },
    Role { prefix: "CI", weight: 3, os: &[(100, UBUNTU22)] },
];

#[rustfmt::skip]
const JUMP_ROLES: &[Role] = &[
    Role { prefix: "JUMP", weight: 2, os: &[(100, WS2022)] },
    Role { prefix: "BASTION", weight: 1, os: &[(100, UBUNTU22)] },
];

/// Vendor OUIs seen on corporate laptops/desktops (HP, Dell, Lenovo/LCFC, Intel wireless).
#[rustfmt::skip]
const WORKSTATION_OUIS: &[(u32, [u8; 3])] = &[
    (6, [0x3c, 0x52, 0x82]),
    (4, [0x9c, 0x8e, 0x99]),
    (4, [0xec, 0xb1, 0xd7]),
    (5, [0xb8, 0xca, 0x3a]),
    (5, [0xf8, 0xbc, 0x12]),
    (4, [0xd4, 0x81, 0xd7]),
    (4, [0x18, 0xdb, 0xf2]),
    (5, [0x8c, 0x16, 0x45]),
    (4, [0xe8, 0x6a, 0x64]),
    (3, [0x54, 0xe1, 0xad]),
    (3, [0x98, 0xfa, 0x9b]),
    (4, [0xa4, 0x34, 0xd9]),
    (3, [0x7c, 0xb2, 0x7d]),
    (3, [0x3c, 0xa9, 0xf4]),
];

/// Server NICs: mostly VMware and Hyper-V virtual adapters, some Dell/HP physical.
#[rustfmt::skip]
const SERVER_OUIS: &[(u32, [u8; 3])] = &[
    (55, [0x00, 0x50, 0x56]),
    (15, [0x00, 0x15, 0x5d]),
    (6, [0x00, 0x0c, 0x29]),
    (8, [0x24, 0x6e, 0x96]),
    (6, [0xd0, 0x94, 0x66]),
    (5, [0xb0, 0x83, 0xfe]),
    (5, [0x3c, 0x52, 0x82]),
];

/// Usable addresses per /16 block (third octet 0..=255, last octet 10..=250), and how full a
/// block gets before the allocator moves on to the next one.
const BLOCK_CAPACITY: usize = 256 * 241;
const BLOCK_FILL: usize = BLOCK_CAPACITY * 6 / 10;

/// Unique internal addresses: workstations in 10.20.0.0/16 (then 10.21 …), servers in
/// 10.10.0.0/16 (then 10.11 …).
struct HostIps {
    used: HashSet<u32>,
    per_block: Vec<usize>,
    cursor: u32,
}

impl HostIps {
    fn new() -> HostIps {
        HostIps {
            used: HashSet::new(),
            per_block: vec![0; 256],
            cursor: ip4(10, 0, 0, 10),
        }
    }

    fn alloc(&mut self, g: &mut Gen, workstation: bool) -> u32 {
        let order: Box<dyn Iterator<Item = u8>> = if workstation {
            Box::new((20..=255).chain(0..20))
        } else {
            Box::new((10..20).chain(0..10).chain(20..=255))
        };
        for block in order {
            if self.per_block[block as usize] >= BLOCK_FILL {
                continue;
            }
            // At most 60% full: a handful of draws finds a free address.
            loop {
                let ip = ip4(10, block, g.below(256) as u8, g.range(10, 250) as u8);
                if self.used.insert(ip) {
                    self.per_block[block as usize] += 1;
                    return ip;
                }
            }
        }
        // Pools of many millions of hosts only: walk 10/8 for the next free address.
        for _ in 0..(1u32 << 24) {
            let ip = self.cursor;
            self.cursor = ip4(10, 0, 0, 0) | ((ip.wrapping_add(1)) & 0x00FF_FFFF);
            if (ip & 0xFF) >= 10 && (ip & 0xFF) <= 250 && self.used.insert(ip) {
                return ip;
            }
        }
        self.cursor
    }
}

/// Salt of the stream a host's egress office is drawn from.
const EGRESS_STREAM: u64 = 0x6567_7265_7373_0008;

pub(super) fn gen_hosts(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::Host);
    let org = Org::new(seed);
    let mut pool = Pool::new(EntityKind::Host, n, &[8, 8, 26, 11, 17, 32, 20, 36, 13]);
    let mut ws_numbers: HashSet<u64> = HashSet::new();
    let (mut ws_lo, mut ws_hi, mut ws_in_level) = (1u64, 9_999u64, 0u64);
    let mut role_counts: HashMap<&'static str, u32> = HashMap::new();
    let mut ips = HostIps::new();
    let mut macs: HashSet<u64> = HashSet::new();
    let mut name = String::new();

    for i in 0..n {
        let mut g = Gen::entity(key, i);
        let class = g.below(1000);
        let workstation = class < WS_PERCENT_MILLE;
        name.clear();
        let os = if workstation {
            // WS-0417: four digits while they last (kept at most 60% full), then five, six …
            if ws_in_level >= (ws_hi - ws_lo + 1) * 6 / 10 {
                ws_lo = ws_hi + 1;
                ws_hi = ws_hi * 10 + 9;
                ws_in_level = 0;
            }
            let num = loop {
                let v = g.range(ws_lo, ws_hi);
                if ws_numbers.insert(v) {
                    break v;
                }
            };
            ws_in_level += 1;
            let _ = write!(name, "WS-{num:04}");
            WORKSTATION_OS[g.weighted(WORKSTATION_OS, |o| o.0)].1
        } else {
            let roles = if class >= 1000 - JUMP_PERCENT_MILLE {
                JUMP_ROLES
            } else {
                SERVER_ROLES
            };
            let role = &roles[g.weighted(roles, |r| r.weight)];
            let count = role_counts.entry(role.prefix).or_insert(0);
            *count += 1;
            let _ = write!(name, "{}-{:02}", role.prefix, count);
            role.os[g.weighted(role.os, |o| o.0)].1
        };
        let ip = ips.alloc(&mut g, workstation);
        let mac = loop {
            let ouis = if workstation {
                WORKSTATION_OUIS
            } else {
                SERVER_OUIS
            };
            let oui = ouis[g.weighted(ouis, |o| o.0)].1;
            let mut nic = g.next() & 0xFF_FFFF;
            if oui == [0x00, 0x50, 0x56] {
                // vCenter-assigned VMware addresses: 00:50:56:80:00:00 - 00:50:56:bf:ff:ff.
                nic = 0x80_0000 | (nic & 0x3F_FFFF);
            }
            let v = (u64::from(oui[0]) << 40)
                | (u64::from(oui[1]) << 32)
                | (u64::from(oui[2]) << 24)
                | nic;
            if macs.insert(v) {
                break v;
            }
        };

        let c = &mut pool.cols;
        c[0].push(&name);
        let lname = name.to_ascii_lowercase();
        c[1].push(&lname);
        let _ = write!(c[2].data, "{lname}.corp.example.com");
        c[2].end();
        push_ipv4(&mut c[3].data, ip);
        c[3].end();
        for b in (0..6).rev() {
            push_hex(&mut c[4].data, mac >> (b * 8), 2, false);
            if b > 0 {
                c[4].data.push('-');
            }
        }
        c[4].end();
        push_hex(&mut c[5].data, g.next(), 16, false);
        push_hex(&mut c[5].data, g.next(), 16, false);
        c[5].end();
        c[6].push(os);
        push_uuid(&mut c[7].data, &mut g);
        c[7].end();
        // From a stream of its own, so the attributes above stay as they were without it.
        let egress = org.office(&mut Gen::entity(key ^ EGRESS_STREAM, i));
        push_ipv4(&mut c[8].data, egress);
        c[8].end();
    }
    pool.check_complete();
    pool
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::net::Ipv4Addr;

    use super::super::test_support::*;
    use super::super::{Entities, Sizes};
    use super::*;

    #[test]
    fn host_formats() {
        let e = Entities::generate(19, &sizes(3000));
        let h = e.pool(EntityKind::Host);
        let mut ws = 0;
        let mut jump = 0;
        let mut linux = 0;
        for i in 0..h.len() {
            let name = h.get(i, 0);
            assert_eq!(h.get(i, 1), name.to_ascii_lowercase());
            assert_eq!(h.get(i, 2), format!("{}.corp.example.com", h.get(i, 1)));
            let ip: Ipv4Addr = h.get(i, 3).parse().unwrap();
            let os = h.get(i, 6);
            if let Some(num) = name.strip_prefix("WS-") {
                assert_eq!(num.len(), 4, "{name}");
                assert!(num.bytes().all(|b| b.is_ascii_digit()));
                assert!(in_net(ip, [10, 20, 0, 0], 16), "{name} {ip}");
                assert!(os.starts_with("Windows 1"), "{os}");
                ws += 1;
            } else {
                assert!(in_net(ip, [10, 10, 0, 0], 16), "{name} {ip}");
                assert!(!os.starts_with("Windows 1"), "{name} {os}");
                let (_, num) = name.rsplit_once('-').unwrap();
                assert!(
                    num.len() >= 2 && num.bytes().all(|b| b.is_ascii_digit()),
                    "{name}"
                );
                if name.starts_with("JUMP-") || name.starts_with("BASTION-") {
                    jump += 1;
                }
            }
            if os.starts_with("Ubuntu") || os.starts_with("RHEL") {
                linux += 1;
            }
            let mac = h.get(i, 4);
            assert_eq!(mac.len(), 17, "{mac}");
            for (j, part) in mac.split('-').enumerate() {
                assert!(j < 6 && is_hex(part, 2, false), "{mac}");
            }
            assert!(is_hex(h.get(i, 5), 32, false));
            assert!(is_uuid_v4(h.get(i, 7)));
        }
        let share = ws as f64 / h.len() as f64;
        assert!((0.65..0.75).contains(&share), "{share}");
        assert!(jump > 0 && jump < h.len() / 20, "{jump}");
        assert!(linux > 0 && linux < h.len() / 5, "{linux}");
        let names = column(h, "name");
        assert!(names.contains(&"DC-01".to_string()));
    }

    #[test]
    fn workstation_numbers_widen_when_crowded() {
        let e = Entities::generate(
            23,
            &Sizes {
                host: 20_000,
                ..Sizes::default()
            },
        );
        let h = e.pool(EntityKind::Host);
        assert_unique(h, "name");
        assert_unique(h, "ip");
        let five = column(h, "name")
            .iter()
            .filter(|n| n.starts_with("WS-") && n.len() == 8)
            .count();
        assert!(five > 0);
    }

    #[test]
    fn hosts_egress_through_the_users_offices() {
        let e = Entities::generate(13, &sizes(3000));
        let users = e.pool(EntityKind::User);
        let offices: HashSet<&str> = (0..users.len())
            .map(|i| users.get_by_name(i, "egress_ip").unwrap())
            .filter(|ip| ip.starts_with("198.51.100."))
            .collect();
        let hosts = e.pool(EntityKind::Host);
        let used: HashSet<&str> = (0..hosts.len())
            .map(|i| hosts.get_by_name(i, "egress_ip").unwrap())
            .collect();
        assert_eq!(used, offices);
    }

    #[test]
    fn hosts_live_in_private_space() {
        let e = Entities::generate(13, &sizes(5000));
        let hosts = e.pool(EntityKind::Host);
        for i in 0..hosts.len() {
            let ip: Ipv4Addr = hosts.get(i, 3).parse().unwrap();
            assert!(ip.is_private() && ip.octets()[0] == 10, "{ip}");
        }
    }
}
