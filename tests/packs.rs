//! The 12 source packs as data: golden renders byte for byte, JSON packs parse line by line,
//! CEF output follows the header grammar and escaping rules, RFC 5424 output passes a strict
//! parser, and rendering is identical at 1, 2 and 4 threads.
//!
//! Regenerate the golden files after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test packs`.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use ingestbench::generate::time::parse_rfc3339;
use ingestbench::generate::{EventCtx, Generator};
use ingestbench::pack::compile::CompiledPack;
use ingestbench::pack::entities::{Entities, Sizes};
use ingestbench::pack::load::{Carrier, Format};
use ingestbench::pack::{self, Catalog, PackSource};

const PACKS: [&str; 12] = [
    "aws.cloudtrail",
    "aws.guardduty",
    "crowdstrike.falcon",
    "firewall.cef",
    "firewall.cef.syslog",
    "firewall.traffic",
    "identity.okta",
    "linux.auditd",
    "linux.syslog",
    "m365.audit",
    "paloalto.traffic",
    "windows.security",
];

fn compiled(id: &str, seed: u64) -> Arc<CompiledPack> {
    let cat = Catalog::discover(None).unwrap();
    let entities = Entities::generate(seed, &Sizes::default());
    pack::load_compiled(&cat, id, &semver::VersionReq::STAR, &entities, true)
        .unwrap_or_else(|e| panic!("{id}: {e:?}"))
}

/// `n` events of pack `id`, one per line, with a fixed seed, anchor and run id.
fn render(id: &str, seed: u64, n: u64) -> (Arc<CompiledPack>, Vec<Vec<u8>>) {
    let p = compiled(id, seed);
    let mut g = Generator::new(p.program.clone(), seed, "r-golden");
    let t0 = parse_rfc3339("2026-01-05T09:00:00.125Z").unwrap();
    let events = (0..n)
        .map(|i| {
            let mut out = Vec::new();
            g.render(
                &EventCtx {
                    index: i,
                    time_ns: t0 + i as i64 * 250_000_000,
                    agent: 2,
                    seq: 1000 + i,
                    // A realtime run's tags carry when the batch was due.
                    sent_ms: Some((t0 / 1_000_000) as u64 + i * 250),
                },
                &mut out,
            );
            out
        })
        .collect();
    (p, events)
}

#[test]
fn catalog_has_the_twelve_packs() {
    let cat = Catalog::discover(None).unwrap();
    assert_eq!(
        cat.ids(),
        PACKS.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn golden_renders() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for id in PACKS {
        let (_, events) = render(id, 7, 12);
        let mut got = Vec::new();
        for e in &events {
            got.extend_from_slice(e);
            got.push(b'\n');
        }
        let path = Path::new("tests/golden/packs").join(format!("{id}.txt"));
        if update {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read(&path)
            .unwrap_or_else(|_| panic!("{} missing; run with UPDATE_GOLDEN=1", path.display()));
        if want != got {
            let (w, g) = (
                String::from_utf8_lossy(&want),
                String::from_utf8_lossy(&got),
            );
            let (line, (wl, gl)) = w
                .lines()
                .zip(g.lines())
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .map(|(i, p)| (i + 1, p))
                .unwrap_or((0, ("(length differs)", "")));
            failures.push(format!(
                "{id} line {line}:\n  expected: {wl}\n  got:      {gl}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatch (UPDATE_GOLDEN=1 to accept):\n{}",
        failures.join("\n")
    );
}

#[test]
fn json_packs_parse_line_by_line() {
    for id in PACKS {
        let (p, events) = render(id, 11, 2000);
        if p.def.format != Format::Json {
            continue;
        }
        for (i, e) in events.iter().enumerate() {
            assert!(!e.contains(&b'\n'), "{id} event {i} spans lines");
            let v: serde_json::Value = serde_json::from_slice(e).unwrap_or_else(|err| {
                panic!("{id} event {i}: {err}\n{}", String::from_utf8_lossy(e))
            });
            let tag = &v["ingestbench"];
            assert_eq!(
                tag["run"], "r-golden",
                "{id} event {i} has no accounting tag"
            );
            assert_eq!(tag["seq"], 1000 + i as u64);
        }
    }
}

/// Splits a CEF line into its 7 header fields and extension pairs, enforcing the grammar:
/// `\|` and `\\` are the only escapes in the header, `\=` `\\` `\n` `\r` in extension values,
/// keys are alphanumeric, a raw `=` never appears inside a value.
/// A parsed CEF line: header fields and extension pairs.
type Cef = (Vec<String>, Vec<(String, String)>);

fn parse_cef(line: &str) -> Result<Cef, String> {
    let at = line.find("CEF:").ok_or("no CEF:")?;
    let s = &line[at + 4..];
    let mut header = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while header.len() < 7 {
        let c = chars.next().ok_or("header ends early")?;
        match c {
            '\\' => match chars.next() {
                Some(e @ ('|' | '\\')) => cur.push(e),
                other => return Err(format!("bad header escape \\{other:?}")),
            },
            '|' => header.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    let ext: String = chars.collect();
    // Tokenise on unescaped '=' to find key positions.
    let mut pairs: Vec<(String, String)> = Vec::new();
    let bytes: Vec<char> = ext.chars().collect();
    let mut i = 0;
    let mut key_start = 0;
    let mut vals: Vec<(usize, usize)> = Vec::new(); // (key start, '=' index)
    while i < bytes.len() {
        match bytes[i] {
            '\\' => i += 2,
            '=' => {
                vals.push((key_start, i));
                i += 1;
            }
            ' ' => {
                key_start = i + 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    for (n, (ks, eq)) in vals.iter().enumerate() {
        let key: String = bytes[*ks..*eq].iter().collect();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("bad extension key {key:?}"));
        }
        let end = vals
            .get(n + 1)
            .map_or(bytes.len(), |(next_ks, _)| next_ks.saturating_sub(1));
        let raw: String = bytes[eq + 1..end].iter().collect();
        let mut val = String::new();
        let mut it = raw.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                match it.next() {
                    Some('=') => val.push('='),
                    Some('\\') => val.push('\\'),
                    Some('n') => val.push('\n'),
                    Some('r') => val.push('\r'),
                    other => return Err(format!("bad extension escape \\{other:?} in {key}")),
                }
            } else if c == '\n' || c == '\r' {
                return Err("raw newline in extension".into());
            } else {
                val.push(c);
            }
        }
        pairs.push((key, val));
    }
    Ok((header, pairs))
}

#[test]
fn cef_packs_follow_the_header_grammar() {
    for id in ["firewall.cef", "firewall.cef.syslog"] {
        let (_, events) = render(id, 13, 2000);
        for (i, e) in events.iter().enumerate() {
            let line = std::str::from_utf8(e).unwrap();
            let (h, ext) =
                parse_cef(line).unwrap_or_else(|err| panic!("{id} event {i}: {err}\n{line}"));
            assert_eq!(h[0], "0", "{id}: CEF version");
            let sev: u32 = h[6]
                .parse()
                .unwrap_or_else(|_| panic!("{id}: severity {:?}", h[6]));
            assert!(sev <= 10);
            for k in ["src", "dst", "act", "ingestbenchRun", "ingestbenchSeq"] {
                assert!(
                    ext.iter().any(|(key, _)| key == k),
                    "{id} event {i} lacks {k}: {line}"
                );
            }
        }
    }
}

#[test]
fn cef_escaping_of_awkward_values() {
    let text = r#"
id: test.cef
version: 1.0.0
category: network
description: escaping test
format: cef
carrier: line
sourcetype: cef
events:
  - name: e
    weight: 1
    fields:
      v: { kind: choice, values: ['a|b\c=d' ] }
      nl: { kind: choice, values: ["line1\nline2"] }
    template: 'CEF:0|Vendor {{v}}|P|1|100|Name|5|msg={{v}} cs1={{nl}} cs1Label=x'
"#;
    let src = PackSource {
        file: "inline".into(),
        text: text.into(),
    };
    let open = pack::open(&src).unwrap_or_else(|e| panic!("{e:?}"));
    let (p, _) = open
        .compile(&Entities::generate(1, &Sizes::default()), false)
        .unwrap();
    let mut g = Generator::new(p.program.clone(), 1, "r");
    let mut out = Vec::new();
    g.render(&EventCtx::default(), &mut out);
    let line = String::from_utf8(out).unwrap();
    assert_eq!(
        line,
        "CEF:0|Vendor a\\|b\\\\c=d|P|1|100|Name|5|msg=a|b\\\\c\\=d cs1=line1\\nline2 cs1Label=x"
    );
    let (h, ext) = parse_cef(&line).unwrap();
    assert_eq!(h[1], "Vendor a|b\\c=d");
    assert_eq!(ext[0], ("msg".to_string(), "a|b\\c=d".to_string()));
    assert_eq!(ext[1], ("cs1".to_string(), "line1\nline2".to_string()));
}

/// Strict RFC 5424: the `syslog_rfc5424` parser plus the header limits it does not enforce.
fn check_5424(line: &str) -> Result<syslog_rfc5424::SyslogMessage, String> {
    let m = syslog_rfc5424::parse_message(line).map_err(|e| format!("{e}"))?;
    let pri_end = line.find('>').ok_or("no PRI")?;
    let pri: u32 = line[1..pri_end].parse().map_err(|_| "bad PRI")?;
    if pri > 191 || !line[pri_end + 1..].starts_with("1 ") {
        return Err("bad PRI or VERSION".into());
    }
    let fields: Vec<&str> = line.splitn(8, ' ').collect();
    let ts = fields[1];
    let ok_ts =
        ts.len() >= 20 && ts.as_bytes()[10] == b'T' && (ts.ends_with('Z') || ts.contains('+'));
    if !ok_ts {
        return Err(format!("timestamp {ts:?}"));
    }
    for (name, v, max) in [
        ("HOSTNAME", fields[2], 255),
        ("APP-NAME", fields[3], 48),
        ("PROCID", fields[4], 128),
        ("MSGID", fields[5], 32),
    ] {
        if v.is_empty() || v.len() > max || !v.bytes().all(|b| (33..=126).contains(&b)) {
            return Err(format!("{name} {v:?}"));
        }
    }
    if m.timestamp.is_none() {
        return Err("timestamp not parsed".into());
    }
    Ok(m)
}

#[test]
fn rfc5424_packs_pass_a_strict_parser() {
    for id in ["linux.syslog", "firewall.cef.syslog"] {
        let (_, events) = render(id, 17, 2000);
        for (i, e) in events.iter().enumerate() {
            let line = std::str::from_utf8(e).unwrap();
            let m = check_5424(line).unwrap_or_else(|err| panic!("{id} event {i}: {err}\n{line}"));
            if id == "linux.syslog" {
                let sd =
                    m.sd.find_sdid("ingestbench@32473")
                        .unwrap_or_else(|| panic!("{id}: no accounting SD: {line}"));
                assert_eq!(sd.get("run").map(String::as_str), Some("r-golden"));
                assert_eq!(sd.get("seq").cloned(), Some((1000 + i).to_string()));
                assert!(
                    m.appname
                        .as_deref()
                        .is_some_and(|a| a.starts_with("sshd") || a == "sudo"),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn syslog_carried_packs_start_with_pri_and_line_packs_have_no_newline() {
    for id in PACKS {
        let (p, events) = render(id, 19, 300);
        for e in &events {
            match p.def.carrier {
                Carrier::Syslog => assert!(e.starts_with(b"<"), "{id}"),
                _ => assert!(!e.contains(&b'\n'), "{id}"),
            }
        }
    }
}

fn gen_bytes(args: &[&str]) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .arg("gen")
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

#[test]
fn deterministic_at_1_2_and_4_threads() {
    for id in ["windows.security", "linux.syslog", "paloalto.traffic"] {
        let base = [
            "-s",
            id,
            "-n",
            "30000",
            "--seed",
            "99",
            "--anchor",
            "2026-01-05T09:00:00Z",
            "--format",
            "raw",
            "--tags",
        ];
        let one = gen_bytes(&[&base[..], &["--threads", "1"]].concat());
        assert!(one.iter().filter(|b| **b == b'\n').count() >= 30000);
        for t in ["2", "4"] {
            let many = gen_bytes(&[&base[..], &["--threads", t]].concat());
            assert!(one == many, "{id}: output differs at {t} threads");
        }
        let other_seed = gen_bytes(&[
            "-s",
            id,
            "-n",
            "100",
            "--seed",
            "100",
            "--anchor",
            "2026-01-05T09:00:00Z",
            "--format",
            "raw",
        ]);
        assert_ne!(
            &one[..other_seed.len().min(one.len())],
            &other_seed[..],
            "{id}: seed ignored"
        );
    }
}
