//! Reading one pack file into a `PackDef`: plain data, every problem collected with its field
//! path and line:column (see docs/packs.md for the format). Templates are checked later, by
//! `compile`, which knows the slots.

use crate::config::schema::Facility;
use crate::generate::time::TsFormat;
use crate::pack::entities::EntityKind;
use crate::yaml::diag::{Pos, did_you_mean};
use crate::yaml::{self, Obj, Reader, YamlNode};
use crate::yaml_enum;

yaml_enum!(
    pub enum Category {
        Cloud = "cloud",
        Identity = "identity",
        Endpoint = "endpoint",
        Network = "network",
        Os = "os",
        Saas = "saas",
    }
);

yaml_enum!(
    /// How slot values are escaped, and where accounting tags go.
    pub enum Format {
        Json = "json",
        Cef = "cef",
        Rfc5424 = "rfc5424",
        Rfc3164 = "rfc3164",
        Kv = "kv",
        Csv = "csv",
        Text = "text",
    }
);

yaml_enum!(
    /// What one rendered event is: a JSON object, a line of text, or a whole syslog message.
    pub enum Carrier {
        Json = "json",
        Line = "line",
        Syslog = "syslog",
    }
);

yaml_enum!(
    pub enum Dist {
        Uniform = "uniform",
        Log = "log",
    }
);

yaml_enum!(
    /// The part an entity slot plays in an attack; a scenario's `correlation.shared` pins the
    /// slots that play a role to one entity for the whole scenario.
    pub enum Role {
        User = "user",
        Host = "host",
        SourceIp = "source_ip",
        DestIp = "dest_ip",
        Domain = "domain",
    }
);

impl Role {
    /// The entity kind a slot playing this role draws from.
    pub fn kind(self) -> EntityKind {
        match self {
            Role::User => EntityKind::User,
            Role::Host => EntityKind::Host,
            Role::SourceIp | Role::DestIp => EntityKind::Ip,
            Role::Domain => EntityKind::Domain,
        }
    }
}

yaml_enum!(
    /// The operating system of the hosts a source's events come from.
    pub enum HostOs {
        Windows = "windows",
        Linux = "linux",
    }
);

/// Defaults for sending this pack's events as syslog messages.
#[derive(Clone, Debug, PartialEq)]
pub struct SyslogDefaults {
    pub app_name: String,
    pub facility: u8,
    pub severity: u8,
    pub msgid: String,
}

#[derive(Clone, Debug)]
pub struct PackDef {
    pub id: String,
    pub version: semver::Version,
    pub category: Category,
    pub description: String,
    pub format: Format,
    pub carrier: Carrier,
    pub sourcetype: String,
    pub syslog: SyslogDefaults,
    pub fields: Vec<FieldDef>,
    pub events: Vec<EventDef>,
    /// Which pack field plays each role in every event type (`roles:`), unless the event
    /// type says otherwise.
    pub roles: Vec<(Role, String)>,
    /// `hosts:` — the OS of the machines this source runs on, when it has one.
    pub host_os: Option<HostOs>,
}

impl PackDef {
    /// The field that plays `role` in event type `event`: the event's own `roles:`, then the
    /// pack's — unless the event gives that field another role (an inbound deny's `remote`
    /// is the source, not the pack's usual destination).
    pub fn role_field(&self, event: usize, role: Role) -> Option<&str> {
        let own: &[(Role, String)] = self.events.get(event).map_or(&[], |e| &e.roles);
        if let Some((_, f)) = own.iter().find(|(r, _)| *r == role) {
            return Some(f);
        }
        self.roles
            .iter()
            .find(|(r, f)| *r == role && !own.iter().any(|(_, g)| g == f))
            .map(|(_, f)| f.as_str())
    }
}

#[derive(Clone, Debug)]
pub struct EventDef {
    pub name: String,
    pub weight: u32,
    pub mitre: Vec<String>,
    pub fields: Vec<FieldDef>,
    pub template: String,
    /// Field path of the template, for messages (`events[2].template`).
    pub template_path: String,
    /// Roles played by this event type's slots, over the pack's (`roles:`).
    pub roles: Vec<(Role, String)>,
}

#[derive(Clone, Debug)]
pub struct FieldDef {
    pub name: String,
    pub slot: SlotDef,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ChoiceValue {
    Scalar(String),
    /// A record: `{{slot.key}}` renders one of its keys.
    Record(Vec<(String, String)>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChoiceItem {
    pub weight: u32,
    pub value: ChoiceValue,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SlotDef {
    Choice(Vec<ChoiceItem>),
    Int {
        min: i64,
        max: i64,
        dist: Dist,
    },
    Float {
        min: f64,
        max: f64,
        decimals: u8,
    },
    Ipv4 {
        base: u32,
        size: u64,
    },
    Ipv6 {
        base: u128,
        host_bits: u8,
    },
    Uuid {
        upper: bool,
    },
    Hex {
        len: u8,
        upper: bool,
    },
    Counter {
        start: i64,
        step: i64,
    },
    Port {
        min: u16,
        max: u16,
    },
    Timestamp {
        format: TsFormat,
        offset_ns: (i64, i64),
    },
    Entity(EntityKind),
    Seq,
}

pub const SLOT_KINDS: &[&str] = &[
    "choice",
    "int",
    "float",
    "ipv4",
    "ipv6",
    "uuid",
    "hex",
    "counter",
    "port",
    "timestamp",
    "user",
    "host",
    "process",
    "ip",
    "domain",
    "seq",
];

/// Reads a pack from YAML text. `None` when anything is wrong; `r.diags` says what.
pub fn read_pack(r: &mut Reader, text: &str) -> Option<PackDef> {
    let root = yaml::parse(text, &mut r.diags)?;
    let mut o = r.obj(&root, "")?;
    let id: Option<String> = o.req(r, "id");
    let version: Option<String> = o.req(r, "version");
    let category = o.req(r, "category");
    let description = o.req(r, "description");
    let format = o.req(r, "format");
    let carrier = o.req(r, "carrier");
    let sourcetype = o.req(r, "sourcetype");
    let syslog = o.sub(r, "syslog", read_syslog_defaults);
    let fields = o
        .sub(r, "fields", |r, f| read_fields(r, f))
        .unwrap_or_default();
    let roles = o
        .node("roles")
        .map(|n| read_roles(r, n, "roles"))
        .unwrap_or_default();
    let host_os: Option<HostOs> = o.get(r, "hosts");
    let events_given = o.node("events").is_some();
    let events = match o.node("events") {
        Some(n) => read_events(r, n),
        None => {
            r.error(
                "events",
                "required field is missing (a list of event types)",
            );
            Vec::new()
        }
    };
    o.finish(r);

    if let Some(id) = &id {
        let ok = !id.is_empty()
            && id.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
            });
        if !ok {
            r.error(
                "id",
                format!("{id:?} is not a pack id (lower-case, dotted, e.g. aws.cloudtrail)"),
            );
        }
    }
    let version = version.and_then(|v| match semver::Version::parse(&v) {
        Ok(v) => Some(v),
        Err(e) => {
            r.error(
                "version",
                format!("{v:?} is not a semver version such as 1.0.0: {e}"),
            );
            None
        }
    });
    if events.is_empty() && events_given && !r.diags.has_errors() {
        r.error("events", "needs at least one event type");
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if names.contains(&e.name.as_str()) {
            r.error(
                &format!("events[{i}].name"),
                format!("duplicate event name {:?}", e.name),
            );
        }
        names.push(&e.name);
    }
    check_roles(r, &fields, &roles, &events);
    let id = id?;
    let syslog = syslog.flatten().unwrap_or_else(|| SyslogDefaults {
        app_name: id.clone(),
        facility: 16,
        severity: 6,
        msgid: "-".into(),
    });
    if r.diags.has_errors() {
        return None;
    }
    Some(PackDef {
        id,
        version: version?,
        category: category?,
        description: description?,
        format: format?,
        carrier: carrier?,
        sourcetype: sourcetype?,
        syslog,
        fields,
        events,
        roles,
        host_os,
    })
}

/// `roles: { user: u, source_ip: attacker }`: role names checked, field names kept for
/// `check_roles`.
fn read_roles(r: &mut Reader, node: &YamlNode, path: &str) -> Vec<(Role, String)> {
    let Some(pairs) = r.value::<yaml::Pairs<String>>(node, path) else {
        return Vec::new();
    };
    let mut out: Vec<(Role, String)> = Vec::new();
    for (k, field) in pairs.0 {
        let kp = format!("{path}.{k}");
        match Role::parse(&k) {
            Ok(role) => out.push((role, field)),
            Err(msg) => r.error(&kp, format!("unknown role: {msg}")),
        }
    }
    out
}

/// Every role names a field of the role's entity kind: a pack role a pack field, an event
/// role one of the event's fields or a pack field.
fn check_roles(r: &mut Reader, pack: &[FieldDef], roles: &[(Role, String)], events: &[EventDef]) {
    let check = |r: &mut Reader, path: String, role: Role, field: &str, own: &[FieldDef]| {
        let found = own.iter().chain(pack).find(|f| f.name == field);
        match found.map(|f| &f.slot) {
            Some(SlotDef::Entity(k)) if *k == role.kind() => {}
            Some(_) => r.error(
                &path,
                format!(
                    "field {field:?} is not a {} entity, so it cannot play {}",
                    role.kind(),
                    role.name()
                ),
            ),
            None => r.error(&path, format!("no field {field:?} to play {}", role.name())),
        }
    };
    for (role, field) in roles {
        check(r, format!("roles.{}", role.name()), *role, field, &[]);
    }
    for (i, e) in events.iter().enumerate() {
        for (role, field) in &e.roles {
            let path = format!("events[{i}].roles.{}", role.name());
            check(r, path, *role, field, &e.fields);
        }
    }
}

fn read_syslog_defaults(r: &mut Reader, mut o: Obj) -> Option<SyslogDefaults> {
    let app_name: String = o.get(r, "app_name").unwrap_or_else(|| "-".into());
    let facility: Facility = o.get(r, "facility").unwrap_or(Facility(16));
    let severity: u8 = o.get(r, "severity").unwrap_or(6);
    let msgid: String = o.get(r, "msgid").unwrap_or_else(|| "-".into());
    let base = o.path().to_string();
    o.finish(r);
    if severity > 7 {
        r.error(
            &format!("{base}.severity"),
            format!("severity {severity} is out of range (0..=7)"),
        );
    }
    if app_name.is_empty()
        || app_name.len() > 48
        || !app_name.bytes().all(|b| (33..=126).contains(&b))
    {
        r.error(
            &format!("{base}.app_name"),
            "must be 1-48 printable ASCII characters without spaces",
        );
    }
    if msgid.is_empty() || msgid.len() > 32 || !msgid.bytes().all(|b| (33..=126).contains(&b)) {
        r.error(
            &format!("{base}.msgid"),
            "must be 1-32 printable ASCII characters without spaces",
        );
    }
    Some(SyslogDefaults {
        app_name,
        facility: facility.0,
        severity,
        msgid,
    })
}

fn read_fields(r: &mut Reader, o: Obj) -> Vec<FieldDef> {
    let base = o.path().to_string();
    let mut out = Vec::new();
    // Field names are free-form, so walk the mapping by hand rather than with `get`.
    for (k, v) in o.into_map().iter() {
        let name = k.as_str().to_string();
        let path = format!("{base}.{name}");
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            let pos = k.span().start().map(|m| Pos {
                line: m.line(),
                column: m.column(),
            });
            r.diags.error(
                &path,
                pos,
                format!("{name:?} is not a slot name (letters, digits, _)"),
            );
            continue;
        }
        if let Some(slot) = read_slot(r, v, &path) {
            out.push(FieldDef { name, slot, path });
        }
    }
    out
}

fn read_events(r: &mut Reader, node: &YamlNode) -> Vec<EventDef> {
    let YamlNode::Sequence(items) = node else {
        let _: Option<Vec<u8>> = r.value(node, "events");
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("events[{i}]");
        let Some(mut o) = r.obj(item, &path) else {
            continue;
        };
        let name: Option<String> = o.req(r, "name");
        let weight: Option<u32> = o.req(r, "weight");
        let mitre: Vec<String> = o.get(r, "mitre").unwrap_or_default();
        let fields = o
            .sub(r, "fields", |r, f| read_fields(r, f))
            .unwrap_or_default();
        let template: Option<String> = o.req(r, "template");
        let roles = o
            .node("roles")
            .map(|n| read_roles(r, n, &format!("{path}.roles")))
            .unwrap_or_default();
        o.finish(r);
        if weight == Some(0) {
            r.error(
                &format!("{path}.weight"),
                "must be at least 1 (leave the event out instead)",
            );
        }
        for (j, t) in mitre.iter().enumerate() {
            if crate::scenario::attack::technique(t).is_none() {
                r.error(
                    &format!("{path}.mitre[{j}]"),
                    crate::scenario::attack::unknown_technique(t),
                );
            }
        }
        if let (Some(name), Some(weight), Some(template)) = (name, weight, template) {
            out.push(EventDef {
                name,
                weight,
                mitre,
                fields,
                template,
                template_path: format!("{path}.template"),
                roles,
            });
        }
    }
    out
}

/// Reads one slot definition `{ kind: …, … }`.
fn read_slot(r: &mut Reader, node: &YamlNode, path: &str) -> Option<SlotDef> {
    let mut o = r.obj(node, path)?;
    let kind: String = o.req(r, "kind")?;
    let kp = format!("{path}.kind");
    let slot = match kind.as_str() {
        "choice" => read_choice(r, &mut o, path),
        "int" => {
            let min: Option<i64> = o.req(r, "min");
            let max: Option<i64> = o.req(r, "max");
            let dist = o.get(r, "dist").unwrap_or(Dist::Uniform);
            let (min, max) = (min?, max?);
            check_range(r, path, min as f64, max as f64)?;
            if dist == Dist::Log && min < 0 {
                r.error(&format!("{path}.min"), "dist log needs min >= 0");
                return None;
            }
            Some(SlotDef::Int { min, max, dist })
        }
        "float" => {
            let min: Option<f64> = o.req(r, "min");
            let max: Option<f64> = o.req(r, "max");
            let decimals: u8 = o.get(r, "decimals").unwrap_or(2);
            let (min, max) = (min?, max?);
            check_range(r, path, min, max)?;
            if decimals > 9 {
                r.error(&format!("{path}.decimals"), "must be 0..=9");
                return None;
            }
            let scale = 10f64.powi(i32::from(decimals));
            if (max * scale).abs() > 9.0e15 || (min * scale).abs() > 9.0e15 {
                r.error(path, "range too large for this many decimals");
                return None;
            }
            Some(SlotDef::Float { min, max, decimals })
        }
        "ipv4" => {
            let cidr: String = o.req(r, "cidr")?;
            match parse_cidr4(&cidr) {
                Ok((base, size)) => Some(SlotDef::Ipv4 { base, size }),
                Err(e) => {
                    r.error(&format!("{path}.cidr"), e);
                    None
                }
            }
        }
        "ipv6" => {
            let cidr: String = o.req(r, "cidr")?;
            match parse_cidr6(&cidr) {
                Ok((base, host_bits)) => Some(SlotDef::Ipv6 { base, host_bits }),
                Err(e) => {
                    r.error(&format!("{path}.cidr"), e);
                    None
                }
            }
        }
        "uuid" => Some(SlotDef::Uuid {
            upper: o.get(r, "upper").unwrap_or(false),
        }),
        "hex" => {
            let len: u8 = o.req(r, "len")?;
            let upper = o.get(r, "upper").unwrap_or(false);
            if len == 0 || len > 64 {
                r.error(
                    &format!("{path}.len"),
                    format!("must be 1..=64 digits, found {len}"),
                );
                return None;
            }
            Some(SlotDef::Hex { len, upper })
        }
        "counter" => Some(SlotDef::Counter {
            start: o.get(r, "start").unwrap_or(1),
            step: o.get(r, "step").unwrap_or(1),
        }),
        "port" => read_port(r, &mut o, path),
        "timestamp" => {
            let f: String = o.req(r, "format")?;
            let off = read_offset(r, &mut o, path);
            match TsFormat::parse(&f) {
                Some(format) => Some(SlotDef::Timestamp {
                    format,
                    offset_ns: off?,
                }),
                None => {
                    let hint = did_you_mean(&f, TsFormat::NAMES)
                        .map(|g| format!("; did you mean {g:?}?"))
                        .unwrap_or_default();
                    r.error(
                        &format!("{path}.format"),
                        format!(
                            "unknown timestamp format {f:?} (known: {}){hint}",
                            TsFormat::NAMES.join(", ")
                        ),
                    );
                    None
                }
            }
        }
        "seq" => Some(SlotDef::Seq),
        other => match EntityKind::parse(other) {
            Some(k) => Some(SlotDef::Entity(k)),
            None => {
                let hint = did_you_mean(other, SLOT_KINDS)
                    .map(|g| format!("; did you mean {g:?}?"))
                    .unwrap_or_default();
                r.error(
                    &kp,
                    format!(
                        "unknown slot kind {other:?} (known: {}){hint}",
                        SLOT_KINDS.join(", ")
                    ),
                );
                // Still finish the mapping, but its keys are not worth reporting.
                return None;
            }
        },
    };
    o.finish(r);
    slot
}

fn check_range(r: &mut Reader, path: &str, min: f64, max: f64) -> Option<()> {
    if min > max {
        r.error(
            &format!("{path}.max"),
            format!("max {max} is below min {min}"),
        );
        return None;
    }
    Some(())
}

fn read_offset(r: &mut Reader, o: &mut Obj, path: &str) -> Option<(i64, i64)> {
    let Some(node) = o.node("offset") else {
        return Some((0, 0));
    };
    let p = format!("{path}.offset");
    let YamlNode::Sequence(items) = node else {
        r.error(&p, "expected [min, max] durations, e.g. [-2h, -5m]");
        return None;
    };
    if items.len() != 2 {
        r.error(&p, "expected exactly two durations [min, max]");
        return None;
    }
    let mut v = [0i64; 2];
    for (i, n) in items.iter().enumerate() {
        let text: String = r.value(n, &format!("{p}[{i}]"))?;
        let (neg, body) = match text.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, text.strip_prefix('+').unwrap_or(&text)),
        };
        match crate::config::units::parse_duration(body) {
            Ok(d) => {
                let ns = i64::try_from(d.0.as_nanos()).unwrap_or(i64::MAX);
                if let Some(x) = v.get_mut(i) {
                    *x = if neg { -ns } else { ns };
                }
            }
            Err(e) => {
                r.error(&format!("{p}[{i}]"), e);
                return None;
            }
        }
    }
    if v[0] > v[1] {
        r.error(&p, "min is after max");
        return None;
    }
    Some((v[0], v[1]))
}

fn read_port(r: &mut Reader, o: &mut Obj, path: &str) -> Option<SlotDef> {
    let range: Option<String> = o.get(r, "range");
    let min: Option<u64> = o.get(r, "min");
    let max: Option<u64> = o.get(r, "max");
    let (lo, hi) = match (range.as_deref(), min, max) {
        (Some("ephemeral"), None, None) => (49152, 65535),
        (Some("registered"), None, None) => (1024, 49151),
        (Some("well_known"), None, None) => (1, 1023),
        (Some(other), None, None) => {
            r.error(
                &format!("{path}.range"),
                format!("{other:?} is not one of ephemeral, registered, well_known"),
            );
            return None;
        }
        (None, Some(a), Some(b)) => (a, b),
        _ => {
            r.error(
                path,
                "give either range (ephemeral | registered | well_known) or both min and max",
            );
            return None;
        }
    };
    if lo > hi || hi > 65535 {
        r.error(
            path,
            format!("port range {lo}..{hi} is not within 0..=65535 with min <= max"),
        );
        return None;
    }
    Some(SlotDef::Port {
        min: lo as u16,
        max: hi as u16,
    })
}

fn read_choice(r: &mut Reader, o: &mut Obj, path: &str) -> Option<SlotDef> {
    let p = format!("{path}.values");
    let Some(node) = o.node("values") else {
        r.error(&p, "required field is missing");
        return None;
    };
    let mut items = Vec::new();
    match node {
        YamlNode::Sequence(list) => {
            for (i, n) in list.iter().enumerate() {
                let ip = format!("{p}[{i}]");
                match n {
                    YamlNode::Scalar(s) => items.push(ChoiceItem {
                        weight: 1,
                        value: ChoiceValue::Scalar(s.as_str().to_string()),
                    }),
                    YamlNode::Mapping(m) => {
                        let mut weight = 1u32;
                        let mut rec = Vec::new();
                        for (k, v) in m.iter() {
                            let kp = format!("{ip}.{}", k.as_str());
                            if k.as_str() == "weight" {
                                weight = r.value(v, &kp).unwrap_or(0);
                                if weight == 0 {
                                    r.error(&kp, "weight must be a whole number of at least 1");
                                }
                                continue;
                            }
                            match v {
                                YamlNode::Scalar(s) => {
                                    rec.push((k.as_str().to_string(), s.as_str().to_string()))
                                }
                                _ => r.error(&kp, "record values must be plain scalars"),
                            }
                        }
                        if rec.is_empty() {
                            r.error(&ip, "a record needs at least one key besides weight");
                        }
                        items.push(ChoiceItem {
                            weight,
                            value: ChoiceValue::Record(rec),
                        });
                    }
                    YamlNode::Sequence(_) => {
                        r.error(&ip, "choice values are scalars or records, not lists")
                    }
                }
            }
        }
        YamlNode::Mapping(m) => {
            for (k, v) in m.iter() {
                let kp = format!("{p}.{}", k.as_str());
                let w: Option<u32> = r.value(v, &kp);
                match w {
                    Some(0) | None => r.error(&kp, "weight must be a whole number of at least 1"),
                    Some(weight) => items.push(ChoiceItem {
                        weight,
                        value: ChoiceValue::Scalar(k.as_str().to_string()),
                    }),
                }
            }
        }
        YamlNode::Scalar(_) => r.error(
            &p,
            "expected a list of values or a mapping of value: weight",
        ),
    }
    if items.is_empty() {
        r.error(&p, "needs at least one value");
        return None;
    }
    let records = items
        .iter()
        .filter(|i| matches!(i.value, ChoiceValue::Record(_)))
        .count();
    if records != 0 && records != items.len() {
        r.error(&p, "mixes plain values and records; use one or the other");
        return None;
    }
    if items.iter().map(|i| u64::from(i.weight)).sum::<u64>() > u64::from(u32::MAX) {
        r.error(&p, "weights add up to more than 4294967295");
        return None;
    }
    Some(SlotDef::Choice(items))
}

pub fn parse_cidr4(s: &str) -> Result<(u32, u64), String> {
    let bad = || format!("{s:?} is not an IPv4 CIDR such as 10.20.0.0/16");
    let (addr, bits) = s.split_once('/').ok_or_else(bad)?;
    let addr: std::net::Ipv4Addr = addr.parse().map_err(|_| bad())?;
    let bits: u32 = bits.parse().map_err(|_| bad())?;
    if bits > 32 {
        return Err(bad());
    }
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    Ok((u32::from(addr) & mask, 1u64 << (32 - bits)))
}

pub fn parse_cidr6(s: &str) -> Result<(u128, u8), String> {
    let bad = || format!("{s:?} is not an IPv6 CIDR such as 2001:db8::/32");
    let (addr, bits) = s.split_once('/').ok_or_else(bad)?;
    let addr: std::net::Ipv6Addr = addr.parse().map_err(|_| bad())?;
    let bits: u32 = bits.parse().map_err(|_| bad())?;
    if bits > 128 {
        return Err(bad());
    }
    let mask = if bits == 0 {
        0
    } else {
        u128::MAX << (128 - bits)
    };
    Ok((u128::from(addr) & mask, (128 - bits) as u8))
}
