//! Shared entity pools: users, hosts, processes, external IPs and DNS domains, generated once per
//! run from the seed and shared by every source pack, so the same person signs in to Okta and
//! M365 and logs on to Windows, and the same laptop shows up in Windows, Falcon and firewall
//! events. This module owns the public API: the kinds and their attribute lists, pool sizes, the
//! column storage of a pool and `Entities::generate`; each kind's tables and generator live in
//! its own file (`users`, `hosts`, `processes`, `ips`, `domains`), the shared randomness and
//! text helpers in `rng`.
//!
//! Determinism: every kind has its own stream key derived from (seed, kind), and entity `i` of a
//! kind is drawn from an RNG seeded from (stream key, `i`). Changing one pool's size never
//! changes another pool, and growing a pool keeps the entities it already had. The few values
//! that must be unique (user names, host names and addresses, domain names, IPs) are made unique
//! in index order, so an earlier entity always keeps its value. Low indices are the busy ones
//! (the compiler skews draws toward them), so the first process entities are always benign.
//!
//! Address space: user egress IPs use only RFC 5737 documentation space, offices in
//! 198.51.100.0/24 and home connections in 192.0.2.0/24. The external IP pool puts about a fifth
//! of its addresses in 203.0.113.0/24 (documentation space, the "attacker" range used by the
//! reference examples) and the rest in plausible public prefixes of the organisation its geo/ASN
//! row names (never private, loopback, link-local, CGNAT, multicast or reserved space). Host
//! addresses are RFC 1918: workstations 10.20.x.y, servers 10.10.x.y. Domains are under
//! example.com/.net/.org or reserved `.example`/`.test` names.
//!
//! Values never contain `"`, control characters or newlines; `\` appears only in Windows paths
//! and command lines (process `path`, `device_path`, `cmdline`, `parent_path`).
#![allow(
    clippy::indexing_slicing,
    reason = "entity generation sees no input-derived data (only the seed and the configured pool \
              sizes); every index is by construction: column arrays have one entry per attribute \
              of the kind's fixed list, kind.index() < 5, table picks are drawn below the table's \
              length, and Pool::get documents that it panics on an index out of range"
)]

mod domains;
mod hosts;
mod ips;
mod processes;
mod rng;
#[cfg(test)]
mod test_support;
mod users;

use domains::gen_domains;
use hosts::gen_hosts;
use ips::gen_ips;
use processes::gen_processes;
use users::gen_users;

// ---------------------------------------------------------------------------------------------
// Kinds and sizes
// ---------------------------------------------------------------------------------------------

/// A kind of shared entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntityKind {
    User,
    Host,
    Process,
    Ip,
    Domain,
}

const USER_ATTRS: &[&str] = &[
    "name",
    "upn",
    "display",
    "first",
    "last",
    "domain",
    "dns_domain",
    "sid",
    "uid",
    "guid",
    "puid",
    "okta_id",
    "ua",
    "egress_ip",
    "ua_browser",
    "ua_os",
    "ua_browser_m365",
    "ua_os_m365",
    "ua_platform_m365",
    "aws_user_id",
];
const HOST_ATTRS: &[&str] = &[
    "name",
    "lname",
    "fqdn",
    "ip",
    "mac",
    "aid",
    "os",
    "guid",
    "egress_ip",
];
const PROCESS_ATTRS: &[&str] = &[
    "name",
    "path",
    "device_path",
    "cmdline",
    "parent_name",
    "parent_path",
    "sha256",
    "md5",
];
const IP_ATTRS: &[&str] = &[
    "addr",
    "country",
    "country_code",
    "city",
    "lat",
    "lon",
    "asn",
    "org",
];
const DOMAIN_ATTRS: &[&str] = &["name", "tld"];

impl EntityKind {
    pub const ALL: [EntityKind; 5] = [
        EntityKind::User,
        EntityKind::Host,
        EntityKind::Process,
        EntityKind::Ip,
        EntityKind::Domain,
    ];

    /// The kind's name in packs and configs: `user`, `host`, `process`, `ip`, `domain`.
    pub fn name(self) -> &'static str {
        match self {
            EntityKind::User => "user",
            EntityKind::Host => "host",
            EntityKind::Process => "process",
            EntityKind::Ip => "ip",
            EntityKind::Domain => "domain",
        }
    }

    /// The kind named `s` (exactly as [`EntityKind::name`] spells it).
    pub fn parse(s: &str) -> Option<EntityKind> {
        EntityKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Attribute names, in column order; the first is what `{{slot}}` alone renders.
    pub fn attributes(self) -> &'static [&'static str] {
        match self {
            EntityKind::User => USER_ATTRS,
            EntityKind::Host => HOST_ATTRS,
            EntityKind::Process => PROCESS_ATTRS,
            EntityKind::Ip => IP_ATTRS,
            EntityKind::Domain => DOMAIN_ATTRS,
        }
    }

    /// Pool size used when the run config does not set one.
    pub fn default_size(self) -> usize {
        match self {
            EntityKind::User => 100,
            EntityKind::Host => 200,
            EntityKind::Process => 80,
            EntityKind::Ip => 500,
            EntityKind::Domain => 200,
        }
    }

    fn index(self) -> usize {
        match self {
            EntityKind::User => 0,
            EntityKind::Host => 1,
            EntityKind::Process => 2,
            EntityKind::Ip => 3,
            EntityKind::Domain => 4,
        }
    }
}

impl std::fmt::Display for EntityKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Pool sizes per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub user: usize,
    pub host: usize,
    pub process: usize,
    pub ip: usize,
    pub domain: usize,
}

impl Default for Sizes {
    fn default() -> Self {
        Sizes {
            user: EntityKind::User.default_size(),
            host: EntityKind::Host.default_size(),
            process: EntityKind::Process.default_size(),
            ip: EntityKind::Ip.default_size(),
            domain: EntityKind::Domain.default_size(),
        }
    }
}

impl Sizes {
    pub fn get(&self, k: EntityKind) -> usize {
        match k {
            EntityKind::User => self.user,
            EntityKind::Host => self.host,
            EntityKind::Process => self.process,
            EntityKind::Ip => self.ip,
            EntityKind::Domain => self.domain,
        }
    }

    pub fn set(&mut self, k: EntityKind, n: usize) {
        match k {
            EntityKind::User => self.user = n,
            EntityKind::Host => self.host = n,
            EntityKind::Process => self.process = n,
            EntityKind::Ip => self.ip = n,
            EntityKind::Domain => self.domain = n,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pools
// ---------------------------------------------------------------------------------------------

/// One attribute of every entity in a pool: the values back to back, with end offsets.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Column {
    data: String,
    ends: Vec<usize>,
}

impl Column {
    fn with_capacity(n: usize, avg: usize) -> Column {
        Column {
            data: String::with_capacity(n.saturating_mul(avg)),
            ends: Vec::with_capacity(n),
        }
    }

    /// Appends one whole value.
    fn push(&mut self, v: &str) {
        self.data.push_str(v);
        self.end();
    }

    /// Ends the value written so far into `data`.
    fn end(&mut self) {
        self.ends.push(self.data.len());
    }

    fn get(&self, i: usize) -> &str {
        let end = self.ends[i];
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..end]
    }
}

/// One pool: `len()` entities, each with every attribute of its kind as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    kind: EntityKind,
    len: usize,
    cols: Vec<Column>,
}

impl Pool {
    fn new(kind: EntityKind, n: usize, avg: &[usize]) -> Pool {
        debug_assert_eq!(avg.len(), kind.attributes().len());
        Pool {
            kind,
            len: n,
            cols: avg.iter().map(|&a| Column::with_capacity(n, a)).collect(),
        }
    }

    pub fn kind(&self) -> EntityKind {
        self.kind
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Index of attribute `name` in `kind().attributes()`.
    pub fn attr_index(&self, name: &str) -> Option<usize> {
        self.kind.attributes().iter().position(|a| *a == name)
    }

    /// Attribute `attr` of entity `entity`. Panics if either index is out of range.
    pub fn get(&self, entity: usize, attr: usize) -> &str {
        assert!(
            entity < self.len,
            "{} entity {entity} out of range (pool has {})",
            self.kind.name(),
            self.len
        );
        self.cols[attr].get(entity)
    }

    /// Attribute `name` of entity `entity`, if the kind has that attribute.
    pub fn get_by_name(&self, entity: usize, name: &str) -> Option<&str> {
        self.attr_index(name).map(|a| self.get(entity, a))
    }

    fn check_complete(&self) {
        debug_assert!(self.cols.iter().all(|c| c.ends.len() == self.len));
    }
}

/// The five shared pools of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entities {
    pools: [Pool; 5],
}

impl Entities {
    /// Builds every pool from `seed`; the same `(seed, sizes)` always gives the same pools.
    pub fn generate(seed: u64, sizes: &Sizes) -> Entities {
        Entities {
            pools: [
                gen_users(seed, sizes.user),
                gen_hosts(seed, sizes.host),
                gen_processes(seed, sizes.process),
                gen_ips(seed, sizes.ip),
                gen_domains(seed, sizes.domain),
            ],
        }
    }

    pub fn pool(&self, kind: EntityKind) -> &Pool {
        &self.pools[kind.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    #[test]
    fn kinds_names_and_sizes() {
        for k in EntityKind::ALL {
            assert_eq!(EntityKind::parse(k.name()), Some(k));
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(EntityKind::parse("users"), None);
        assert_eq!(EntityKind::parse(""), None);
        let d = Sizes::default();
        assert_eq!(
            (d.user, d.host, d.process, d.ip, d.domain),
            (100, 200, 80, 500, 200)
        );
        let mut s = Sizes::default();
        for (i, k) in EntityKind::ALL.into_iter().enumerate() {
            assert_eq!(s.get(k), k.default_size());
            s.set(k, 7 + i);
            assert_eq!(s.get(k), 7 + i);
        }
        assert_eq!(EntityKind::User.attributes().len(), 20);
        assert_eq!(EntityKind::Host.attributes().len(), 9);
        assert_eq!(EntityKind::Process.attributes().len(), 8);
        assert_eq!(EntityKind::Ip.attributes().len(), 8);
        assert_eq!(EntityKind::Domain.attributes(), &["name", "tld"]);
    }

    #[test]
    fn same_seed_same_pools_different_seed_different() {
        let a = Entities::generate(42, &Sizes::default());
        let b = Entities::generate(42, &Sizes::default());
        assert_eq!(a, b);
        let c = Entities::generate(43, &Sizes::default());
        for k in EntityKind::ALL {
            assert_eq!(a.pool(k).len(), k.default_size());
            assert_eq!(a.pool(k).kind(), k);
            assert_ne!(a.pool(k), c.pool(k), "{k} pool ignores the seed");
        }
        assert_ne!(
            column(a.pool(EntityKind::User), "name"),
            column(c.pool(EntityKind::User), "name")
        );
        assert_ne!(
            column(a.pool(EntityKind::User), "sid"),
            column(c.pool(EntityKind::User), "sid")
        );
        assert_ne!(
            column(a.pool(EntityKind::Host), "aid"),
            column(c.pool(EntityKind::Host), "aid")
        );
    }

    #[test]
    fn growing_a_pool_keeps_its_prefix_and_other_pools() {
        let small = Entities::generate(7, &sizes(150));
        let big = Entities::generate(7, &sizes(4000));
        for k in EntityKind::ALL {
            let (s, b) = (small.pool(k), big.pool(k));
            for i in 0..s.len() {
                for a in 0..k.attributes().len() {
                    assert_eq!(s.get(i, a), b.get(i, a), "{k} entity {i} attr {a}");
                }
            }
        }
        // Changing one pool's size leaves every other pool as it was.
        let mut grown = sizes(150);
        grown.user = 900;
        let g = Entities::generate(7, &grown);
        for k in [
            EntityKind::Host,
            EntityKind::Process,
            EntityKind::Ip,
            EntityKind::Domain,
        ] {
            assert_eq!(g.pool(k), small.pool(k));
        }
    }

    #[test]
    fn uniqueness() {
        let e = Entities::generate(1, &sizes(5000));
        let users = e.pool(EntityKind::User);
        for a in [
            "name",
            "upn",
            "sid",
            "uid",
            "guid",
            "puid",
            "okta_id",
            "aws_user_id",
        ] {
            assert_unique(users, a);
        }
        let hosts = e.pool(EntityKind::Host);
        for a in ["name", "lname", "fqdn", "ip", "mac", "aid", "guid"] {
            assert_unique(hosts, a);
        }
        assert_unique(e.pool(EntityKind::Ip), "addr");
        assert_unique(e.pool(EntityKind::Domain), "name");
    }

    #[test]
    fn attribute_counts_and_attr_index() {
        let e = Entities::generate(9, &Sizes::default());
        for k in EntityKind::ALL {
            let p = e.pool(k);
            for (i, a) in k.attributes().iter().enumerate() {
                assert_eq!(p.attr_index(a), Some(i));
                assert_eq!(p.get_by_name(0, a), Some(p.get(0, i)));
            }
            assert_eq!(p.attr_index("nope"), None);
            assert_eq!(p.attr_index(""), None);
            assert_eq!(p.cols.len(), k.attributes().len());
            for c in &p.cols {
                assert_eq!(c.ends.len(), p.len());
            }
            assert!(!p.is_empty());
        }
        assert_eq!(e.pool(EntityKind::Ip).attr_index("org"), Some(7));
        assert_eq!(e.pool(EntityKind::User).attr_index("egress_ip"), Some(13));
    }

    #[test]
    fn empty_pools() {
        let e = Entities::generate(5, &sizes(0));
        for k in EntityKind::ALL {
            assert!(e.pool(k).is_empty());
            assert_eq!(e.pool(k).len(), 0);
            assert_eq!(e.pool(k).attr_index(k.attributes()[0]), Some(0));
        }
    }

    #[test]
    #[should_panic]
    fn get_out_of_range_entity_panics() {
        let e = Entities::generate(5, &sizes(3));
        e.pool(EntityKind::Host).get(3, 0);
    }

    #[test]
    #[should_panic]
    fn get_out_of_range_attr_panics() {
        let e = Entities::generate(5, &sizes(3));
        e.pool(EntityKind::Domain).get(0, 2);
    }

    #[test]
    fn no_forbidden_characters() {
        let e = Entities::generate(11, &sizes(4000));
        let backslash_ok = ["path", "device_path", "cmdline", "parent_path"];
        for k in EntityKind::ALL {
            let p = e.pool(k);
            for (a, attr) in k.attributes().iter().enumerate() {
                for i in 0..p.len() {
                    let v = p.get(i, a);
                    assert!(!v.is_empty(), "{k}.{attr} empty");
                    assert_eq!(v.trim(), v, "{k}.{attr} padded: {v:?}");
                    assert!(!v.contains('"'), "{k}.{attr} has a quote: {v}");
                    assert!(!v.chars().any(char::is_control), "{k}.{attr}: {v:?}");
                    if k != EntityKind::Process || !backslash_ok.contains(attr) {
                        assert!(!v.contains('\\'), "{k}.{attr} has a backslash: {v}");
                    }
                }
            }
        }
    }
}
