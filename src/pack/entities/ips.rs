//! The external IP pool: the geo/ASN table with each organisation's public prefixes, and the
//! generator of unique public addresses (a share from 203.0.113.0/24) with their country,
//! city, coordinates, ASN and organisation.

use std::collections::HashSet;

use super::rng::{Gen, ip4, kind_key, push_ipv4};
use super::{EntityKind, Pool};

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

pub(super) fn gen_ips(seed: u64, n: usize) -> Pool {
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

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::super::Entities;
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn geo_table_is_clean() {
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
    }
}
