//! The user pool: first/last name tables, the browser user agents, and the generator that turns
//! them into logins (`pnatarajan`, `pnatarajan2` …), UPNs, SIDs under one domain SID per seed,
//! Linux uids, Entra/Okta/AWS ids, a usual user agent with its parsed parts, and an office or
//! home egress address.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::rng::{Gen, ip4, kind_key, perm48, push_hex, push_ipv4, push_uuid};
use super::{Column, EntityKind, Pool};

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

/// A browser family, spelled the way each source's user-agent parser names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Browser {
    Chrome,
    Edge,
    Firefox,
    Safari,
}

impl Browser {
    /// Okta `client.userAgent.browser`.
    fn okta(self) -> &'static str {
        match self {
            Browser::Chrome => "CHROME",
            Browser::Edge => "EDGE",
            Browser::Firefox => "FIREFOX",
            Browser::Safari => "SAFARI",
        }
    }

    /// Entra / M365 `DeviceProperties` `BrowserType`, SharePoint `BrowserName`.
    fn m365(self) -> &'static str {
        match self {
            Browser::Chrome => "Chrome",
            Browser::Edge => "Edge",
            Browser::Firefox => "Firefox",
            Browser::Safari => "Safari",
        }
    }
}

/// The desktop operating system a user agent names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Os {
    /// `Windows NT 10.0` (Windows 10 and 11 send the same token).
    Windows,
    /// `Macintosh; Intel Mac OS X 10_15_7` (frozen at 10.15.7 by the browsers).
    Mac,
}

impl Os {
    /// Okta `client.userAgent.os`.
    fn okta(self) -> &'static str {
        match self {
            Os::Windows => "Windows 10",
            Os::Mac => "Mac OS X",
        }
    }

    /// Entra / M365 `DeviceProperties` `OS`.
    fn m365(self) -> &'static str {
        match self {
            Os::Windows => "Windows10",
            Os::Mac => "MacOs",
        }
    }

    /// SharePoint `Platform`.
    fn m365_platform(self) -> &'static str {
        match self {
            Os::Windows => "WinDesktop",
            Os::Mac => "MacDesktop",
        }
    }
}

/// One browser user agent with its parsed parts, so a source's parsed fields and the raw
/// string always come from the same row.
struct UserAgent {
    weight: u32,
    browser: Browser,
    os: Os,
    raw: &'static str,
}

const fn ua(weight: u32, browser: Browser, os: Os, raw: &'static str) -> UserAgent {
    UserAgent {
        weight,
        browser,
        os,
        raw,
    }
}

use Browser::{Chrome, Edge, Firefox, Safari};
use Os::{Mac, Windows};

/// Browser user agents of early/mid 2025, with a corporate Windows-heavy mix.
#[rustfmt::skip]
const USER_AGENTS: &[UserAgent] = &[
    ua(14, Chrome, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36"),
    ua(12, Chrome, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/135.0.0.0 Safari/537.36"),
    ua(6, Chrome, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/134.0.0.0 Safari/537.36"),
    ua(14, Edge, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36 Edg/136.0.0.0"),
    ua(11, Edge, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/135.0.0.0 Safari/537.36 Edg/135.0.0.0"),
    ua(5, Edge, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/134.0.0.0 Safari/537.36 Edg/134.0.0.0"),
    ua(4, Firefox, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:138.0) Gecko/20100101 Firefox/138.0"),
    ua(3, Firefox, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:137.0) Gecko/20100101 Firefox/137.0"),
    ua(1, Firefox, Windows, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"),
    ua(7, Chrome, Mac, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36"),
    ua(5, Chrome, Mac, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/135.0.0.0 Safari/537.36"),
    ua(6, Safari, Mac, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Safari/605.1.15"),
    ua(4, Safari, Mac, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.3.1 Safari/605.1.15"),
    ua(2, Firefox, Mac, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:138.0) Gecko/20100101 Firefox/138.0"),
    ua(2, Edge, Mac, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36 Edg/136.0.0.0"),
];

/// Writes a user agent's parsed parts, in `USER_ATTRS` order from `ua_browser` on.
fn push_ua_parts(cols: &mut [Column], agent: &UserAgent) {
    cols[0].push(agent.browser.okta());
    cols[1].push(agent.os.okta());
    cols[2].push(agent.browser.m365());
    cols[3].push(agent.os.m365());
    cols[4].push(agent.os.m365_platform());
}

/// Share of users whose usual egress is an office address (the rest sign in from home).
const OFFICE_PERCENT: u64 = 85;
/// How the office users spread over the 2-4 office egress addresses.
const OFFICE_WEIGHTS: [u32; 4] = [55, 28, 11, 6];

/// What every user of one seed shares: the domain SID, the offices' egress addresses and the
/// key of the PUID bijection. Hosts egress through the same offices.
pub(super) struct Org {
    sid_prefix: String,
    offices: Vec<u32>,
    puid_key: u64,
}

impl Org {
    /// The organisation of `seed`, drawn from the user stream's per-pool RNG.
    pub(super) fn new(seed: u64) -> Org {
        let mut pg = Gen::pool(kind_key(seed, EntityKind::User));
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
        Org {
            sid_prefix,
            offices,
            puid_key: pg.next(),
        }
    }

    /// An office egress address, the busiest offices most often.
    pub(super) fn office(&self, g: &mut Gen) -> u32 {
        self.offices[g.weighted(&OFFICE_WEIGHTS[..self.offices.len()], |w| *w)]
    }
}

/// Salt of the stream a user's AWS IAM user id is drawn from (its own stream, so adding it
/// changed no other attribute).
const AWS_ID_STREAM: u64 = 0x6177_735f_6964_0013;

/// An IAM user's unique id: `AIDA` and 17 characters of the base32 alphabet.
fn push_aws_user_id(s: &mut String, g: &mut Gen) {
    const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    s.push_str("AIDA");
    for _ in 0..17 {
        s.push(*g.pick(BASE32) as char);
    }
}

pub(super) fn gen_users(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::User);
    let org = Org::new(seed);

    let mut pool = Pool::new(
        EntityKind::User,
        n,
        &[
            10, 22, 14, 6, 7, 4, 16, 46, 4, 36, 16, 20, 110, 13, 6, 10, 6, 9, 10, 21,
        ],
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
        let _ = write!(c[7].data, "{}{rid}", org.sid_prefix);
        c[7].end();
        let _ = write!(c[8].data, "{}", 1000 + i as u64);
        c[8].end();
        push_uuid(&mut c[9].data, &mut g);
        c[9].end();
        c[10].data.push_str("1003");
        push_hex(&mut c[10].data, perm48(i as u64, org.puid_key), 12, true);
        c[10].end();
        c[11].data.push_str("00u");
        for _ in 0..17 {
            c[11].data.push(*g.pick(OKTA_ALPHABET) as char);
        }
        c[11].end();
        let agent = &USER_AGENTS[g.weighted(USER_AGENTS, |u| u.weight)];
        c[12].push(agent.raw);
        let egress = if g.percent(OFFICE_PERCENT) {
            org.office(&mut g)
        } else {
            ip4(192, 0, 2, g.range(1, 254) as u8)
        };
        push_ipv4(&mut c[13].data, egress);
        c[13].end();
        push_ua_parts(&mut c[14..], agent);
        push_aws_user_id(&mut c[19].data, &mut Gen::entity(key ^ AWS_ID_STREAM, i));
        c[19].end();
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
    fn name_tables_are_clean() {
        assert!(FIRST_NAMES.len() >= 150 && LAST_NAMES.len() >= 150);
        for n in FIRST_NAMES.iter().chain(LAST_NAMES) {
            assert!(
                n.len() >= 2 && n.bytes().all(|b| b.is_ascii_alphabetic()),
                "{n}"
            );
        }
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
            let aws = u.get_by_name(i, "aws_user_id").unwrap();
            assert!(aws.len() == 21 && aws.starts_with("AIDA"), "{aws}");
            assert!(
                aws.bytes()
                    .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
            );
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

    /// The browser and OS a user agent string names, read from its tokens.
    fn parse_ua(raw: &str) -> (Browser, Os) {
        let browser = if raw.contains(" Edg/") {
            Browser::Edge
        } else if raw.contains(" Firefox/") {
            Browser::Firefox
        } else if raw.contains(" Chrome/") {
            Browser::Chrome
        } else {
            assert!(
                raw.contains(" Version/") && raw.contains(" Safari/"),
                "{raw}"
            );
            Browser::Safari
        };
        let os = if raw.contains("(Windows NT 10.0;") {
            Os::Windows
        } else {
            assert!(raw.contains("(Macintosh; Intel Mac OS X "), "{raw}");
            Os::Mac
        };
        (browser, os)
    }

    #[test]
    fn user_agent_rows_name_their_own_browser_and_os() {
        for a in USER_AGENTS {
            assert!(a.weight > 0);
            assert_eq!(parse_ua(a.raw), (a.browser, a.os), "{}", a.raw);
        }
    }

    #[test]
    fn parsed_user_agent_attributes_follow_the_raw_one() {
        let e = Entities::generate(21, &sizes(3000));
        let u = e.pool(EntityKind::User);
        let attr = |i: usize, name: &str| u.get_by_name(i, name).unwrap();
        for i in 0..u.len() {
            let (browser, os) = parse_ua(attr(i, "ua"));
            assert_eq!(attr(i, "ua_browser"), browser.okta());
            assert_eq!(attr(i, "ua_os"), os.okta());
            assert_eq!(attr(i, "ua_browser_m365"), browser.m365());
            assert_eq!(attr(i, "ua_os_m365"), os.m365());
            assert_eq!(attr(i, "ua_platform_m365"), os.m365_platform());
        }
    }

    #[test]
    fn users_egress_from_documentation_space() {
        let e = Entities::generate(13, &sizes(5000));
        let users = e.pool(EntityKind::User);
        for i in 0..users.len() {
            let ip: Ipv4Addr = users.get(i, 13).parse().unwrap();
            assert!(
                in_net(ip, [198, 51, 100, 0], 24) || in_net(ip, [192, 0, 2, 0], 24),
                "{ip}"
            );
        }
    }
}
