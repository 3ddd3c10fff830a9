//! The domain pool: registered bases with the kinds of host names under them, cloud regions,
//! DGA-looking and look-alike names, and the generator of unique lower-case DNS names and TLDs.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::rng::{Gen, kind_key};
use super::{EntityKind, Pool};

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

pub(super) fn gen_domains(seed: u64, n: usize) -> Pool {
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
    use super::super::Entities;
    use super::super::test_support::*;
    use super::*;

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
}
