//! `ingestbench sources list|show|scaffold|validate`: the pack catalog for people. `validate`
//! checks pack files the way a run would (read, compile, trial-render) and exits 2 with
//! `file:line:column` on any problem.

use argh::FromArgs;
use std::path::{Path, PathBuf};

use crate::exit::Exit;
use crate::generate::{EventCtx, Generator};
use crate::pack::entities::{Entities, Sizes};
use crate::pack::load::{Carrier, Role};
use crate::pack::{self, Catalog};

#[derive(FromArgs)]
/// List, inspect, start and check source packs.
#[argh(
    subcommand,
    name = "sources",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench sources list",
    example = "ingestbench sources show windows.security",
    example = "ingestbench sources scaffold acme.vpn > packs/acme.vpn.yaml",
    example = "ingestbench sources validate packs/"
)]
pub struct Args {
    #[argh(subcommand)]
    cmd: Cmd,
}

#[derive(FromArgs)]
#[argh(subcommand)]
enum Cmd {
    List(ListArgs),
    Show(ShowArgs),
    Scaffold(ScaffoldArgs),
    Validate(ValidateArgs),
}

#[derive(FromArgs)]
/// List every available pack: id, version, category, format, description.
#[argh(
    subcommand,
    name = "list",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench sources list --packs my-packs/"
)]
struct ListArgs {
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
}

#[derive(FromArgs)]
/// Show a pack's event types, weights, fields and one sample event.
#[argh(
    subcommand,
    name = "show",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench sources show aws.cloudtrail"
)]
struct ShowArgs {
    /// pack id
    #[argh(positional)]
    id: String,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
}

#[derive(FromArgs)]
/// Print a commented starter pack for NEW_ID (or write it with --out).
#[argh(
    subcommand,
    name = "scaffold",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench sources scaffold acme.vpn --out packs/acme.vpn.yaml"
)]
struct ScaffoldArgs {
    /// the new pack's id (lower-case, dotted)
    #[argh(positional)]
    id: String,
    /// write to this file instead of stdout (never overwrites)
    #[argh(option)]
    out: Option<PathBuf>,
}

#[derive(FromArgs)]
/// Check pack files (a file or every *.yaml in a directory); exit 2 with file:line on problems.
#[argh(
    subcommand,
    name = "validate",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench sources validate packs/aws.cloudtrail.yaml"
)]
struct ValidateArgs {
    /// a pack file or a directory of them
    #[argh(positional)]
    path: PathBuf,
}

pub fn run(a: Args) -> Exit {
    match a.cmd {
        Cmd::List(l) => list(l),
        Cmd::Show(s) => show(s),
        Cmd::Scaffold(s) => scaffold(s),
        Cmd::Validate(v) => validate(v),
    }
}

fn catalog(dir: Option<&Path>) -> Result<Catalog, Exit> {
    Catalog::discover(dir).map_err(|e| {
        super::err(&format!("error: {e}"));
        Exit::Invalid
    })
}

fn list(a: ListArgs) -> Exit {
    let cat = match catalog(a.packs.as_deref()) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let mut rows = Vec::new();
    let mut bad = false;
    for src in &cat.sources {
        match pack::open(src) {
            Ok(p) => rows.push([
                p.def.id.clone(),
                p.def.version.to_string(),
                p.def.category.to_string(),
                format!("{}/{}", p.def.format, p.def.carrier),
                p.def.description.clone(),
            ]),
            Err(errs) => {
                bad = true;
                for e in errs {
                    super::err(&format!("error: {e}"));
                }
            }
        }
    }
    rows.sort();
    let header = ["ID", "VERSION", "CATEGORY", "FORMAT", "DESCRIPTION"].map(String::from);
    let widths: [usize; 4] = std::array::from_fn(|c| {
        rows.iter()
            .chain([&header])
            .map(|r| r.get(c).map_or(0, String::len))
            .max()
            .unwrap_or(0)
    });
    for r in [&header].into_iter().chain(&rows) {
        super::out(&format!(
            "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        ));
    }
    if bad { Exit::Invalid } else { Exit::Ok }
}

fn show(a: ShowArgs) -> Exit {
    let cat = match catalog(a.packs.as_deref()) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let Some(src) = cat.find(&a.id) else {
        super::err(&format!("error: {}", pack::unknown_id(&cat, &a.id)));
        return Exit::Invalid;
    };
    let open = match pack::open(src) {
        Ok(o) => o,
        Err(errs) => return report(&errs),
    };
    let entities = Entities::generate(1, &Sizes::default());
    let compiled = match open.compile(&entities, false) {
        Ok((p, _)) => p,
        Err(errs) => return report(&errs),
    };
    let d = &open.def;
    super::out(&format!("{} {} ({})", d.id, d.version, src.file));
    super::out(&format!("  {}", d.description));
    super::out(&format!(
        "  category {}, format {}, carrier {}, sourcetype {}",
        d.category, d.format, d.carrier, d.sourcetype
    ));
    super::out(&format!(
        "  syslog: app_name {}, facility {}, severity {}, msgid {}",
        d.syslog.app_name, d.syslog.facility, d.syslog.severity, d.syslog.msgid
    ));
    let events = &compiled.program.events;
    let total: u64 = events.iter().map(|e| u64::from(e.weight)).sum();
    if let Some(os) = d.host_os {
        super::out(&format!("  hosts: {os}"));
    }
    super::out("\nevent types (weight, share, ATT&CK, fields, scenario roles):");
    for (i, e) in events.iter().enumerate() {
        let share = 100.0 * f64::from(e.weight) / total.max(1) as f64;
        let mitre = if e.mitre.is_empty() {
            "-".to_string()
        } else {
            e.mitre.join(",")
        };
        super::out(&format!(
            "  {:28} {:>6} {:>6.2}%  {mitre}",
            e.name, e.weight, share
        ));
        super::out(&format!("      {}", e.slot_names.join(" ")));
        let roles: Vec<String> = Role::NAMES
            .iter()
            .filter_map(|n| {
                let role = Role::parse(n).ok()?;
                let f = d.role_field(i, role)?;
                e.slot_names
                    .iter()
                    .any(|s| s == f)
                    .then(|| format!("{n}={f}"))
            })
            .collect();
        if !roles.is_empty() {
            super::out(&format!("      roles: {}", roles.join(" ")));
        }
    }
    let json = d.carrier == Carrier::Json;
    let mut g = Generator::new(compiled.program.clone(), 1, "r-sample");
    let mut buf = Vec::new();
    g.render(
        &EventCtx {
            index: 0,
            time_ns: crate::generate::time::now(),
            agent: 0,
            seq: 0,
            sent_ms: None,
        },
        &mut buf,
    );
    super::out("\nsample:");
    super::out(&crate::generate::pretty(&buf, json));
    Exit::Ok
}

fn report(errs: &[String]) -> Exit {
    for e in errs {
        super::err(&format!("error: {e}"));
    }
    Exit::Invalid
}

fn scaffold(a: ScaffoldArgs) -> Exit {
    let ok = !a.id.is_empty()
        && a.id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if !ok {
        super::err(&format!(
            "error: {:?} is not a pack id (lower-case, dotted, e.g. acme.vpn)",
            a.id
        ));
        return Exit::Invalid;
    }
    let text = SCAFFOLD.replace("NEW_ID", &a.id);
    match a.out {
        None => {
            super::out(&text);
            Exit::Ok
        }
        Some(p) => {
            let o = crate::fsio::WriteOptions {
                mode: None,
                create_dirs: false,
            };
            if std::fs::symlink_metadata(&p).is_ok() {
                super::err(&format!("error: {}: File exists", p.display()));
                return Exit::Invalid;
            }
            match crate::fsio::write_atomic(&p, text.as_bytes(), o) {
                Ok(()) => {
                    super::err(&format!("wrote {}", p.display()));
                    Exit::Ok
                }
                Err(e) => {
                    // The scaffold is not lost: it goes to stdout instead.
                    super::out(&text);
                    super::err(&format!(
                        "error: the pack not written: {e} (what was at that path is \
                         untouched); it is on stdout instead"
                    ));
                    Exit::Aborted
                }
            }
        }
    }
}

fn validate(a: ValidateArgs) -> Exit {
    let files: Vec<PathBuf> = if a.path.is_dir() {
        let mut v: Vec<PathBuf> = match std::fs::read_dir(&a.path) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect(),
            Err(e) => {
                super::err(&format!("error: {}: {e}", a.path.display()));
                return Exit::Invalid;
            }
        };
        v.sort();
        if v.is_empty() {
            super::err(&format!(
                "error: {}: no *.yaml pack files",
                a.path.display()
            ));
            return Exit::Invalid;
        }
        v
    } else {
        vec![a.path.clone()]
    };
    let entities = Entities::generate(1, &Sizes::default());
    let mut failed = 0;
    // A run refuses a directory with two packs of one id; so does this.
    let mut ids: Vec<(String, String)> = Vec::new();
    for f in &files {
        let src = match crate::pack::read_file(f) {
            Ok(src) => src,
            Err(e) => {
                super::err(&format!("error: {e}"));
                failed += 1;
                continue;
            }
        };
        let result = pack::open(&src).and_then(|o| o.compile(&entities, true).map(|(_, w)| (o, w)));
        match result {
            Ok((o, _)) if ids.iter().any(|(i, _)| *i == o.def.id) => {
                failed += 1;
                let other = ids
                    .iter()
                    .find(|(i, _)| *i == o.def.id)
                    .map(|(_, f)| f.as_str())
                    .unwrap_or_default();
                super::err(&format!(
                    "error: {}: pack id {} is also {other}'s: give each pack its own id",
                    src.file, o.def.id
                ));
            }
            Ok((o, warnings)) => {
                ids.push((o.def.id.clone(), src.file.clone()));
                for w in warnings {
                    super::err(&format!("warning: {w}"));
                }
                super::out(&format!(
                    "{}: ok ({} {}, {} event types)",
                    src.file,
                    o.def.id,
                    o.def.version,
                    o.def.events.len()
                ));
            }
            Err(errs) => {
                failed += 1;
                for e in errs {
                    super::err(&format!("error: {e}"));
                }
            }
        }
    }
    if failed > 0 {
        super::err(&format!("{failed} of {} pack files invalid", files.len()));
        Exit::Invalid
    } else {
        Exit::Ok
    }
}

const SCAFFOLD: &str = r#"# NEW_ID: a starter source pack. See docs/packs.md for every slot kind and format.
# Check it with: ingestbench sources validate packs/NEW_ID.yaml
id: NEW_ID
version: 0.1.0
category: network              # cloud | identity | endpoint | network | os | saas
description: What this source is, in one line
format: json                   # json | cef | rfc5424 | rfc3164 | kv | csv | text
carrier: json                  # json (one JSON object) | line (one text line) | syslog (a whole syslog message)
sourcetype: NEW_ID             # default HEC sourcetype
syslog:                        # used when a json/line event travels as a syslog MSG
  app_name: NEW_ID
  facility: local0
  severity: 6
  msgid: "-"

fields:                        # slots shared by every event type
  ts: { kind: timestamp, format: rfc3339_ms }
  user: { kind: user }         # an entity: {{user.name}}, {{user.upn}}, ...
  src: { kind: host }

events:
  - name: login_success
    weight: 90                 # relative share of this event type
    mitre: [T1078]
    fields:
      method: { kind: choice, values: { password: 6, sso: 3, token: 1 } }
      session: { kind: uuid }
    template: >-
      {"time": "{{ts}}", "action": "login", "outcome": "success",
       "user": "{{user.upn}}", "source_ip": "{{src.ip}}", "host": "{{src.fqdn}}",
       "method": "{{method}}", "session_id": "{{session}}"}

  - name: login_failure
    weight: 10
    mitre: [T1110]
    fields:
      reason: { kind: choice, values: [{ code: 401, text: bad password, weight: 8 }, { code: 423, text: locked, weight: 2 }] }
      attacker: { kind: ip }
    template: >-
      {"time": "{{ts}}", "action": "login", "outcome": "failure",
       "user": "{{user.upn}}", "source_ip": "{{attacker.addr}}", "country": "{{attacker.country}}",
       "code": {{reason.code}}, "reason": "{{reason.text}}"}
"#;
