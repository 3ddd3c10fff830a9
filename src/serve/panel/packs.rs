//! The panel's Source packs tab and ATT&CK pickers: the catalog (every pack this process can
//! use: `--packs`, `./packs`, the built-in ones), one pack's event types with their weights,
//! ATT&CK ids, fields and scenario roles, samples rendered with a given seed, and the shipped
//! ATT&CK table.

use serde_json::{Value, json};

use super::Ctx;
use crate::generate::{EventCtx, Generator};
use crate::pack::entities::{Entities, Sizes};
use crate::pack::load::{Carrier, PackDef, Role};
use crate::pack::{self, OpenPack};
use crate::scenario::attack;
use crate::serve::guard::Reply;

/// The most samples one request renders.
const MAX_SAMPLES: usize = 20;

/// What the list and the detail both show of a pack.
fn summary(open: &OpenPack) -> serde_json::Map<String, Value> {
    let d = &open.def;
    let mut mitre: Vec<&str> = d
        .events
        .iter()
        .flat_map(|e| e.mitre.iter().map(String::as_str))
        .collect();
    mitre.sort_unstable();
    mitre.dedup();
    let v = json!({
        "id": d.id,
        "version": d.version.to_string(),
        "category": d.category.to_string(),
        "format": d.format.to_string(),
        "carrier": d.carrier.to_string(),
        "sourcetype": d.sourcetype,
        "description": d.description,
        "file": open.source.file,
        "user": !open.source.file.starts_with("<embedded>"),
        "event_types": d.events.len(),
        "mitre": mitre,
    });
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// `GET /api/packs`.
pub fn list(ctx: &Ctx) -> Reply {
    let mut packs = Vec::new();
    let mut errors = Vec::new();
    for src in &ctx.catalog.sources {
        match pack::open(src) {
            Ok(o) => packs.push(Value::Object(summary(&o))),
            Err(e) => errors.extend(e),
        }
    }
    packs.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    Reply::value(200, &json!({"packs": packs, "errors": errors}))
}

fn opened(ctx: &Ctx, id: &str) -> Result<OpenPack, Reply> {
    let Some(src) = ctx.catalog.find(id) else {
        return Err(Reply::error(404, &pack::unknown_id(&ctx.catalog, id)));
    };
    pack::open(src).map_err(|e| Reply::error(500, &e.join("; ")))
}

/// `GET /api/packs/{id}`.
pub fn show(ctx: &Ctx, id: &str) -> Reply {
    let open = match opened(ctx, id) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let entities = Entities::generate(1, &Sizes::default());
    let compiled = match open.compile(&entities, false) {
        Ok((p, _)) => p,
        Err(e) => return Reply::error(500, &e.join("; ")),
    };
    let d = &open.def;
    let events = &compiled.program.events;
    let total: u64 = events.iter().map(|e| u64::from(e.weight)).sum();
    let events: Vec<Value> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({
                "name": e.name,
                "weight": e.weight,
                "share": 100.0 * f64::from(e.weight) / total.max(1) as f64,
                "mitre": e.mitre,
                "fields": e.slot_names,
                "roles": roles(d, i, &e.slot_names),
            })
        })
        .collect();
    let mut m = summary(&open);
    m.insert("hosts".into(), json!(d.host_os.map(|o| o.to_string())));
    m.insert(
        "syslog".into(),
        json!({
            "app_name": d.syslog.app_name,
            "facility": d.syslog.facility.to_string(),
            "severity": d.syslog.severity,
            "msgid": d.syslog.msgid,
        }),
    );
    m.insert("events".into(), Value::Array(events));
    Reply::value(200, &Value::Object(m))
}

/// The shared-entity roles event type `i` plays, with the field that plays each.
fn roles(d: &PackDef, i: usize, slots: &[String]) -> Value {
    let mut m = serde_json::Map::new();
    for n in Role::NAMES {
        let Ok(role) = Role::parse(n) else { continue };
        if let Some(f) = d.role_field(i, role)
            && slots.iter().any(|s| s == f)
        {
            m.insert((*n).to_string(), json!(f));
        }
    }
    Value::Object(m)
}

/// `GET /api/packs/{id}/sample?seed=N&count=K`.
pub fn sample(ctx: &Ctx, id: &str, seed: Option<u64>, count: Option<usize>) -> Reply {
    let count = count.unwrap_or(3);
    if !(1..=MAX_SAMPLES).contains(&count) {
        return Reply::error(400, &format!("count is 1 to {MAX_SAMPLES}"));
    }
    let open = match opened(ctx, id) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let seed = seed.unwrap_or_else(crate::run::source::random_seed);
    let entities = Entities::generate(seed, &Sizes::default());
    let compiled = match open.compile(&entities, false) {
        Ok((p, _)) => p,
        Err(e) => return Reply::error(500, &e.join("; ")),
    };
    let json_carrier = open.def.carrier == Carrier::Json;
    let mut g = Generator::new(compiled.program.clone(), seed, "r-sample");
    let now = crate::generate::time::now();
    let mut buf = Vec::new();
    let events: Vec<Value> = (0..count as u64)
        .map(|i| {
            buf.clear();
            g.render(
                &EventCtx {
                    index: i,
                    time_ns: now,
                    agent: 0,
                    seq: i,
                    sent_ms: None,
                },
                &mut buf,
            );
            json!({
                "text": String::from_utf8_lossy(&buf),
                "pretty": crate::generate::pretty(&buf, json_carrier),
            })
        })
        .collect();
    Reply::value(200, &json!({"seed": seed, "events": events}))
}

/// `GET /api/attack`.
pub fn attack() -> Reply {
    let tactics: Vec<Value> = attack::TACTICS
        .iter()
        .map(|(id, name)| json!({"id": id, "name": name}))
        .collect();
    let techniques: Vec<Value> = attack::all()
        .iter()
        .map(|t| json!({"id": t.id, "name": t.name, "tactics": t.tactics}))
        .collect();
    Reply::value(
        200,
        &json!({"version": attack::VERSION, "tactics": tactics, "techniques": techniques}),
    )
}
