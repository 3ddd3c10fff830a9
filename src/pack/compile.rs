//! Compiling a `PackDef` once into what the generator runs (a `generate::program::Program`,
//! held in `CompiledPack` beside the definition): per event type, a list of ops
//! (literal byte ranges, slot sites, the accounting tag) and the slot draws; per pack, string
//! tables of choice values and entity attributes already escaped for the context of each site
//! (inside a JSON string, a CEF header or extension, an RFC 5424 SD value). Rendering is then
//! copies and number formatting only. Compiling also trial-renders every event type and checks
//! the result parses in its format, so a broken template is a load error, not bad traffic.

use std::collections::HashMap;
use std::sync::Arc;

use crate::generate::alias::Alias;
use crate::generate::program::{AcctStyle, CompiledEvent, Draw, NumFmt, Op, Program, StrTable};
use crate::generate::time::TsFormat;
use crate::pack::entities::Entities;
use crate::pack::load::{Carrier, ChoiceValue, Dist, FieldDef, Format, PackDef, SlotDef};
use crate::yaml::diag::did_you_mean;

/// How a string value is escaped where it lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ctx {
    Raw,
    JsonStr,
    CefHeader,
    CefExt,
    SdValue,
}

/// A pack compiled: its definition (for messages, formats, `sources show`) and the program
/// its generators run.
#[derive(Clone, Debug)]
pub struct CompiledPack {
    pub def: PackDef,
    pub program: Arc<Program>,
}

/// A template broken into literal text and slot markers, each with its escaping context.
#[derive(Debug, PartialEq)]
enum Piece {
    Lit(Vec<u8>),
    Slot {
        name: String,
        attr: Option<String>,
        ctx: Ctx,
    },
    Acct(AcctStyle),
}

/// Problems as (field path, message).
pub type Problems = Vec<(String, String)>;

/// Compiles `def` against `entities`. Errors and warnings are `(field path, message)`.
pub fn compile(
    def: &PackDef,
    entities: &Entities,
    accounting: bool,
) -> Result<(CompiledPack, Problems), Problems> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut tables: Vec<StrTable> = Vec::new();
    let mut table_index: HashMap<(String, Option<String>, Ctx), u32> = HashMap::new();
    let mut events = Vec::new();
    let mut used_pack_fields: Vec<&str> = Vec::new();
    let mut ts_sites: Vec<TsFormat> = Vec::new();

    for e in &def.events {
        let pieces = match scan(&e.template, def.format, def.carrier, accounting) {
            Ok(p) => p,
            Err(msg) => {
                errors.push((e.template_path.clone(), msg));
                continue;
            }
        };
        let mut ev = CompiledEvent {
            name: e.name.clone(),
            weight: e.weight,
            mitre: e.mitre.clone(),
            lit: Vec::new(),
            ops: Vec::new(),
            draws: Vec::new(),
            slot_names: Vec::new(),
        };
        // slot name → (draw index, definition, key for tables)
        let mut slot_ids: HashMap<String, u16> = HashMap::new();
        let mut ok = true;
        for piece in pieces {
            match piece {
                Piece::Lit(bytes) => {
                    let start = ev.lit.len() as u32;
                    ev.lit.extend_from_slice(&bytes);
                    // Merge with a preceding literal.
                    if let Some(Op::Lit { end, .. }) = ev.ops.last_mut()
                        && *end == start
                    {
                        *end = ev.lit.len() as u32;
                        continue;
                    }
                    ev.ops.push(Op::Lit {
                        start,
                        end: ev.lit.len() as u32,
                    });
                }
                Piece::Acct(style) => ev.ops.push(Op::Acct(style)),
                Piece::Slot { name, attr, ctx } => {
                    let Some((field, key)) =
                        find_field(&name, e.fields.iter(), def.fields.iter(), &e.name)
                    else {
                        let known: Vec<&str> = e
                            .fields
                            .iter()
                            .chain(&def.fields)
                            .map(|f| f.name.as_str())
                            .collect();
                        let hint = did_you_mean(&name, &known)
                            .map(|g| format!("; did you mean {{{{{g}}}}}?"))
                            .unwrap_or_default();
                        errors.push((e.template_path.clone(), format!("slot {{{{{name}}}}} is not defined in this event's fields or the pack's fields{hint}")));
                        ok = false;
                        continue;
                    };
                    if !e.fields.iter().any(|f| f.name == name) {
                        used_pack_fields.push(field.name.as_str());
                    }
                    let id = match slot_ids.get(&name) {
                        Some(id) => *id,
                        None => {
                            let id = ev.draws.len() as u16;
                            ev.draws.push(draw_for(&field.slot, entities));
                            ev.slot_names.push(name.clone());
                            slot_ids.insert(name.clone(), id);
                            id
                        }
                    };
                    match site(
                        &field.slot,
                        attr.as_deref(),
                        ctx,
                        entities,
                        &key,
                        &mut tables,
                        &mut table_index,
                    ) {
                        Ok(op) => ev.ops.push(match op {
                            SiteOp::Str(table) => Op::Str { slot: id, table },
                            SiteOp::Ts(format) => {
                                ts_sites.push(format);
                                Op::Num {
                                    slot: id,
                                    how: NumFmt::Ts((ts_sites.len() - 1) as u16),
                                }
                            }
                            SiteOp::Num(how) => Op::Num { slot: id, how },
                        }),
                        Err(msg) => {
                            errors.push((e.template_path.clone(), msg));
                            ok = false;
                        }
                    }
                }
            }
        }
        for f in &e.fields {
            if !slot_ids.contains_key(&f.name) {
                warnings.push((
                    f.path.clone(),
                    format!(
                        "field {:?} is defined but the template never uses it",
                        f.name
                    ),
                ));
            }
        }
        if ok {
            fuse(&mut ev, &mut tables);
            events.push(ev);
        }
    }
    for f in &def.fields {
        if !used_pack_fields.contains(&f.name.as_str()) {
            warnings.push((
                f.path.clone(),
                format!("pack field {:?} is not used by any event", f.name),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let weights: Vec<u32> = events.iter().map(|e| e.weight).collect();
    let max_slots = events.iter().map(|e| e.draws.len()).max().unwrap_or(0);
    let pack = CompiledPack {
        def: def.clone(),
        program: Arc::new(Program {
            pick: Alias::new(&weights),
            events,
            tables,
            max_slots,
            accounting,
            ts_sites,
            salt: Program::salt_of(&def.id),
        }),
    };
    let trial = crate::pack::check::trial_render(&pack);
    if !trial.is_empty() {
        return Err(trial);
    }
    Ok((pack, warnings))
}

/// Tables with more entries than this are never copied for fusion (entity pools can be large).
const FUSE_MAX_ENTRIES: usize = 4096;
/// Longest literal folded into a table's entries.
const FUSE_MAX_LITERAL: usize = 64;

/// Fewer, larger ops: rendering cost is mostly per op. Two string sites of the same slot with
/// a short literal between them (`{{app.name}},{{app.port}}`) become one table of joined
/// entries, and a short literal right after a string site is folded into its entries. Only
/// small tables (choice values, small pools) are copied; the bytes rendered do not change.
#[allow(
    clippy::indexing_slicing,
    reason = "the ops' table indices are tables this compiler pushed (< tables.len()), their \
              literal ranges lie within ev.lit, and i < tables[a].len() == tables[b].len()"
)]
fn fuse(ev: &mut CompiledEvent, tables: &mut Vec<StrTable>) {
    let small = |tables: &Vec<StrTable>, t: u32| tables[t as usize].len() <= FUSE_MAX_ENTRIES;
    let mut out: Vec<Op> = Vec::with_capacity(ev.ops.len());
    for op in ev.ops.drain(..) {
        // Str(s, a) [Lit l] + Str(s, b) → Str(s, a + l + b)
        if let Op::Str { slot, table: b } = op {
            let n = out.len();
            let (prev, lit) = match out.as_slice() {
                [.., Op::Str { slot: s, table: a }, Op::Lit { start, end }] if *s == slot => {
                    (Some((n - 2, *a)), (*start as usize, *end as usize))
                }
                [.., Op::Str { slot: s, table: a }] if *s == slot => (Some((n - 1, *a)), (0, 0)),
                _ => (None, (0, 0)),
            };
            if let Some((at, a)) = prev
                && lit.1 - lit.0 <= FUSE_MAX_LITERAL
                && small(tables, a)
                && small(tables, b)
                && tables[a as usize].len() == tables[b as usize].len()
            {
                let mut t = StrTable::default();
                let mut joined = Vec::new();
                for i in 0..tables[a as usize].len() {
                    joined.clear();
                    joined.extend_from_slice(tables[a as usize].get(i));
                    joined.extend_from_slice(&ev.lit[lit.0..lit.1]);
                    joined.extend_from_slice(tables[b as usize].get(i));
                    t.push(&joined);
                }
                tables.push(t);
                out.truncate(at);
                out.push(Op::Str {
                    slot,
                    table: (tables.len() - 1) as u32,
                });
                continue;
            }
        }
        // Str(s, a) + Lit l → Str(s, a + l)
        if let Op::Lit { start, end } = op
            && let Some(Op::Str { slot, table: a }) = out.last().cloned()
            && (end - start) as usize <= FUSE_MAX_LITERAL
            && small(tables, a)
        {
            let mut t = StrTable::default();
            let mut joined = Vec::new();
            for i in 0..tables[a as usize].len() {
                joined.clear();
                joined.extend_from_slice(tables[a as usize].get(i));
                joined.extend_from_slice(&ev.lit[start as usize..end as usize]);
                t.push(&joined);
            }
            tables.push(t);
            out.pop();
            out.push(Op::Str {
                slot,
                table: (tables.len() - 1) as u32,
            });
            continue;
        }
        out.push(op);
    }
    ev.ops = out;
}

/// Looks `name` up among the event's fields, then the pack's; returns the definition and a key
/// that identifies it across events (so pack fields share tables).
fn find_field<'a>(
    name: &str,
    mut local: impl Iterator<Item = &'a FieldDef>,
    mut pack: impl Iterator<Item = &'a FieldDef>,
    event: &str,
) -> Option<(&'a FieldDef, String)> {
    if let Some(f) = local.find(|f| f.name == name) {
        return Some((f, format!("event:{event}:{name}")));
    }
    pack.find(|f| f.name == name)
        .map(|f| (f, format!("pack:{name}")))
}

fn draw_for(slot: &SlotDef, entities: &Entities) -> Draw {
    match slot {
        SlotDef::Choice(items) => Draw::Choice(Alias::new(
            &items.iter().map(|i| i.weight).collect::<Vec<_>>(),
        )),
        SlotDef::Entity(k) => Draw::Entity {
            n: entities.pool(*k).len().max(1) as u64,
        },
        SlotDef::Int {
            min,
            max,
            dist: Dist::Uniform,
        } => Draw::Int {
            min: *min,
            span: max.abs_diff(*min).saturating_add(1),
        },
        SlotDef::Int {
            min,
            max,
            dist: Dist::Log,
        } => Draw::IntLog {
            ln_lo: ((*min + 1) as f64).ln(),
            ln_hi: ((*max + 1) as f64).ln(),
            shift: 1,
            max: *max,
        },
        SlotDef::Float { min, max, decimals } => {
            let scale = 10f64.powi(i32::from(*decimals));
            let lo = (min * scale).round() as i64;
            let hi = (max * scale).round() as i64;
            Draw::Int {
                min: lo,
                span: hi.abs_diff(lo).saturating_add(1),
            }
        }
        SlotDef::Ipv4 { base, size } => Draw::Ipv4 {
            base: *base,
            size: *size,
        },
        SlotDef::Ipv6 { base, host_bits } => Draw::Ipv6 {
            base: *base,
            host_bits: *host_bits,
        },
        SlotDef::Uuid { .. } | SlotDef::Hex { .. } => Draw::Random,
        SlotDef::Counter { start, step } => Draw::Counter {
            start: *start,
            step: *step,
        },
        SlotDef::Port { min, max } => Draw::Int {
            min: i64::from(*min),
            span: u64::from(max - min) + 1,
        },
        SlotDef::Timestamp {
            offset_ns: (lo, hi),
            ..
        } => Draw::Time {
            lo: *lo,
            span: hi.abs_diff(*lo).saturating_add(1),
        },
        SlotDef::Seq => Draw::Seq,
    }
}

enum SiteOp {
    Str(u32),
    Ts(TsFormat),
    Num(NumFmt),
}

/// Decides how one `{{name.attr}}` site renders, building (or reusing) its string table.
fn site(
    slot: &SlotDef,
    attr: Option<&str>,
    ctx: Ctx,
    entities: &Entities,
    key: &str,
    tables: &mut Vec<StrTable>,
    index: &mut HashMap<(String, Option<String>, Ctx), u32>,
) -> Result<SiteOp, String> {
    let shown = match attr {
        Some(a) => format!("{{{{{}.{a}}}}}", key.rsplit(':').next().unwrap_or(key)),
        None => format!("{{{{{}}}}}", key.rsplit(':').next().unwrap_or(key)),
    };
    let no_attr = |how: NumFmt| match attr {
        None => Ok(SiteOp::Num(how)),
        Some(a) => Err(format!("{shown}: this slot kind has no attribute {a:?}")),
    };
    let mut table = |build: &dyn Fn(&mut StrTable)| -> u32 {
        let k = (key.to_string(), attr.map(str::to_string), ctx);
        *index.entry(k).or_insert_with(|| {
            let mut t = StrTable::default();
            build(&mut t);
            tables.push(t);
            (tables.len() - 1) as u32
        })
    };
    match slot {
        SlotDef::Choice(items) => {
            let record = items
                .first()
                .is_some_and(|it| matches!(it.value, ChoiceValue::Record(_)));
            match (record, attr) {
                (false, Some(a)) => Err(format!(
                    "{shown}: plain choice values have no attribute {a:?}"
                )),
                (true, None) => Err(format!(
                    "{shown}: this choice holds records; name a key, e.g. {{{{{}.{}}}}}",
                    key.rsplit(':').next().unwrap_or(key),
                    record_keys(items)
                        .first()
                        .map(String::as_str)
                        .unwrap_or("key")
                )),
                (false, None) => Ok(SiteOp::Str(table(&|t| {
                    for i in items {
                        if let ChoiceValue::Scalar(s) = &i.value {
                            t.push(&escape(s, ctx));
                        }
                    }
                }))),
                (true, Some(a)) => {
                    for (n, i) in items.iter().enumerate() {
                        if let ChoiceValue::Record(rec) = &i.value
                            && !rec.iter().any(|(k, _)| k == a)
                        {
                            return Err(format!(
                                "{shown}: record {n} has no key {a:?} (every record must have every key used)"
                            ));
                        }
                    }
                    Ok(SiteOp::Str(table(&|t| {
                        for i in items {
                            if let ChoiceValue::Record(rec) = &i.value {
                                let v = rec
                                    .iter()
                                    .find(|(k, _)| k == a)
                                    .map(|(_, v)| v.as_str())
                                    .unwrap_or("");
                                t.push(&escape(v, ctx));
                            }
                        }
                    })))
                }
            }
        }
        SlotDef::Entity(kind) => {
            let pool = entities.pool(*kind);
            let ai = match attr {
                None => 0,
                Some(a) => pool.attr_index(a).ok_or_else(|| {
                    let hint = did_you_mean(a, kind.attributes())
                        .map(|g| format!("; did you mean {g:?}?"))
                        .unwrap_or_default();
                    format!(
                        "{shown}: {} entities have no attribute {a:?} (known: {}){hint}",
                        kind.name(),
                        kind.attributes().join(", ")
                    )
                })?,
            };
            Ok(SiteOp::Str(table(&|t| {
                for i in 0..pool.len() {
                    t.push(&escape(pool.get(i, ai), ctx));
                }
            })))
        }
        SlotDef::Int { .. } | SlotDef::Counter { .. } => match attr {
            None => Ok(SiteOp::Num(NumFmt::SignedDec)),
            Some("hex") => Ok(SiteOp::Num(NumFmt::HexPrefixed)),
            Some("HEX") => Ok(SiteOp::Num(NumFmt::HexUpper)),
            Some(a) => Err(format!(
                "{shown}: integers have attributes hex and HEX, not {a:?}"
            )),
        },
        SlotDef::Float { decimals, .. } => no_attr(NumFmt::Float {
            decimals: *decimals,
        }),
        SlotDef::Ipv4 { .. } => no_attr(NumFmt::Ipv4),
        SlotDef::Ipv6 { .. } => no_attr(NumFmt::Ipv6),
        SlotDef::Uuid { upper } => no_attr(NumFmt::Uuid { upper: *upper }),
        SlotDef::Hex { len, upper } => no_attr(NumFmt::Hex {
            len: *len,
            upper: *upper,
        }),
        SlotDef::Port { .. } | SlotDef::Seq => no_attr(NumFmt::Dec),
        SlotDef::Timestamp { format, .. } => match attr {
            None => Ok(SiteOp::Ts(*format)),
            Some(a) => Err(format!("{shown}: timestamps have no attribute {a:?}")),
        },
    }
}

fn record_keys(items: &[crate::pack::load::ChoiceItem]) -> Vec<String> {
    match items.first().map(|it| &it.value) {
        Some(ChoiceValue::Record(r)) => r.iter().map(|(k, _)| k.clone()).collect(),
        Some(ChoiceValue::Scalar(_)) | None => Vec::new(),
    }
}

/// `s` escaped for `ctx` (docs/packs.md, "Formats and carriers").
pub fn escape(s: &str, ctx: Ctx) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match (ctx, c) {
            (Ctx::JsonStr, '"') => out.extend_from_slice(b"\\\""),
            (Ctx::JsonStr, '\\') => out.extend_from_slice(b"\\\\"),
            (Ctx::JsonStr, '\n') => out.extend_from_slice(b"\\n"),
            (Ctx::JsonStr, '\r') => out.extend_from_slice(b"\\r"),
            (Ctx::JsonStr, '\t') => out.extend_from_slice(b"\\t"),
            (Ctx::JsonStr, c) if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            (Ctx::CefHeader, '|') => out.extend_from_slice(b"\\|"),
            (Ctx::CefHeader, '\\') | (Ctx::CefExt, '\\') => out.extend_from_slice(b"\\\\"),
            (Ctx::CefExt, '=') => out.extend_from_slice(b"\\="),
            (Ctx::CefExt | Ctx::CefHeader, '\n') => out.extend_from_slice(b"\\n"),
            (Ctx::CefExt | Ctx::CefHeader, '\r') => out.extend_from_slice(b"\\r"),
            (Ctx::SdValue, '"') => out.extend_from_slice(b"\\\""),
            (Ctx::SdValue, '\\') => out.extend_from_slice(b"\\\\"),
            (Ctx::SdValue, ']') => out.extend_from_slice(b"\\]"),
            (_, c) => {
                let mut b = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out
}

/// Splits a template into pieces, minifying JSON and deciding each slot's context.
fn scan(
    tpl: &str,
    format: Format,
    carrier: Carrier,
    accounting: bool,
) -> Result<Vec<Piece>, String> {
    let b = tpl.as_bytes();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut lit: Vec<u8> = Vec::new();
    let mut st = CtxState::new(format, carrier);
    let mut explicit_acct = false;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let rest = b.get(i..).unwrap_or_default();
        if rest.starts_with(b"{{{{") {
            st.feed_lit(b"{{", pieces.len(), lit.len());
            lit.extend_from_slice(b"{{");
            i += 4;
            continue;
        }
        if rest.starts_with(b"{{{") {
            // `{{{x}}}`: a literal brace, then the slot.
            st.feed_lit(b"{", pieces.len(), lit.len());
            lit.push(b'{');
            i += 1;
            continue;
        }
        if rest.starts_with(b"{{") {
            let close = tpl[i + 2..]
                .find("}}")
                .ok_or_else(|| format!("unclosed {{{{ at byte {i}"))?;
            let inner = tpl[i + 2..i + 2 + close].trim();
            i += 2 + close + 2;
            if !lit.is_empty() {
                pieces.push(Piece::Lit(std::mem::take(&mut lit)));
            }
            if inner == "@acct" {
                if explicit_acct {
                    return Err("{{@acct}} appears twice".into());
                }
                explicit_acct = true;
                if accounting {
                    pieces.push(Piece::Acct(default_style(format, false)));
                }
                continue;
            }
            let (name, attr) = match inner.split_once('.') {
                Some((n, a)) => (n, Some(a.to_string())),
                None => (inner, None),
            };
            let valid =
                |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid(name) || attr.as_deref().is_some_and(|a| !valid(a)) {
                return Err(format!(
                    "{{{{{inner}}}}} is not a slot reference (write {{{{name}}}} or {{{{name.attribute}}}})"
                ));
            }
            pieces.push(Piece::Slot {
                name: name.to_string(),
                attr,
                ctx: st.ctx(),
            });
            st.feed_slot();
            continue;
        }
        if format == Format::Json && !st.in_string && c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        st.feed_lit(&[c], pieces.len(), lit.len());
        lit.push(c);
        i += 1;
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    if format == Format::Json && st.in_string {
        return Err("a JSON string is not closed".into());
    }
    if accounting && !explicit_acct {
        insert_default_acct(&mut pieces, format, &st)?;
    }
    Ok(pieces)
}

fn default_style(format: Format, leading_comma: bool) -> AcctStyle {
    match format {
        Format::Json => AcctStyle::Json { leading_comma },
        Format::Rfc5424 => AcctStyle::Sd,
        Format::Cef => AcctStyle::Cef,
        Format::Csv => AcctStyle::Csv,
        Format::Kv | Format::Text | Format::Rfc3164 => AcctStyle::Kv,
    }
}

/// Puts the accounting tag where the format wants it when the template did not place it.
fn insert_default_acct(
    pieces: &mut Vec<Piece>,
    format: Format,
    st: &CtxState,
) -> Result<(), String> {
    match format {
        Format::Json => {
            // Before the closing brace of the top-level object.
            let Some(Piece::Lit(last)) = pieces.last_mut() else {
                return Err("a JSON template must end with the literal } of its object".into());
            };
            if last.last() != Some(&b'}') {
                return Err("a JSON template must end with the literal } of its object".into());
            }
            last.pop();
            pieces.push(Piece::Acct(AcctStyle::Json {
                leading_comma: true,
            }));
            pieces.push(Piece::Lit(b"}".to_vec()));
        }
        Format::Rfc5424 => {
            let Some((piece, offset, nil)) = st.sd_at else {
                return Err("could not find the STRUCTURED-DATA field of this RFC 5424 template (<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD MSG)".into());
            };
            // Split the literal holding the SD start and put the element there.
            let Some(Piece::Lit(bytes)) = pieces.get(piece) else {
                unreachable!("sd_at points at a literal")
            };
            let before = bytes.get(..offset).unwrap_or_default().to_vec();
            let after = bytes
                .get(offset + usize::from(nil)..)
                .unwrap_or_default()
                .to_vec();
            pieces.splice(
                piece..=piece,
                [
                    Piece::Lit(before),
                    Piece::Acct(AcctStyle::Sd),
                    Piece::Lit(after),
                ],
            );
        }
        _ => {
            // End of the line (before a trailing newline, if any).
            let trailing_nl =
                matches!(pieces.last(), Some(Piece::Lit(l)) if l.last() == Some(&b'\n'));
            if trailing_nl && let Some(Piece::Lit(l)) = pieces.last_mut() {
                l.pop();
            }
            pieces.push(Piece::Acct(default_style(format, false)));
            if trailing_nl {
                pieces.push(Piece::Lit(b"\n".to_vec()));
            }
        }
    }
    Ok(())
}

/// Tracks where in the format the scan is, to give each slot its escaping context.
struct CtxState {
    format: Format,
    carrier: Carrier,
    in_string: bool,
    escaped: bool,
    // CEF
    cef_started: bool,
    cef_pipes: u32,
    tail: Vec<u8>,
    // RFC 5424
    spaces: u32,
    sd: SdState,
    /// (piece index, byte offset in it, whether it is the NILVALUE `-`) of the SD field.
    sd_at: Option<(usize, usize, bool)>,
    /// The next literal byte is the first of the SD field.
    sd_next: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum SdState {
    Before,
    /// At the start of the SD or right after an element's `]`.
    Element,
    InElement,
    Value,
    After,
}

impl CtxState {
    fn new(format: Format, carrier: Carrier) -> Self {
        CtxState {
            format,
            carrier,
            in_string: false,
            escaped: false,
            cef_started: carrier != Carrier::Syslog,
            cef_pipes: 0,
            tail: Vec::new(),
            spaces: 0,
            sd: SdState::Before,
            sd_at: None,
            sd_next: false,
        }
    }

    fn ctx(&self) -> Ctx {
        match self.format {
            Format::Json if self.in_string => Ctx::JsonStr,
            Format::Cef if self.cef_started && self.cef_pipes < 7 => Ctx::CefHeader,
            Format::Cef if self.cef_started => Ctx::CefExt,
            Format::Rfc5424 if self.sd == SdState::Value => Ctx::SdValue,
            _ => Ctx::Raw,
        }
    }

    /// A slot's value stands in the text like a run of non-space characters.
    fn feed_slot(&mut self) {
        self.escaped = false;
        self.sd_next = false;
    }

    /// Feeds literal bytes that will sit at `offset` in the literal that becomes piece `piece`.
    fn feed_lit(&mut self, bytes: &[u8], piece: usize, offset: usize) {
        for (k, &c) in bytes.iter().enumerate() {
            match self.format {
                Format::Json => {
                    if self.in_string {
                        if self.escaped {
                            self.escaped = false;
                        } else if c == b'\\' {
                            self.escaped = true;
                        } else if c == b'"' {
                            self.in_string = false;
                        }
                    } else if c == b'"' {
                        self.in_string = true;
                    }
                }
                Format::Cef => {
                    if !self.cef_started {
                        self.tail.push(c);
                        if self.tail.ends_with(b"CEF:") {
                            self.cef_started = true;
                        }
                    } else if self.escaped {
                        self.escaped = false;
                    } else if c == b'\\' {
                        self.escaped = true;
                    } else if c == b'|' {
                        self.cef_pipes += 1;
                    }
                }
                Format::Rfc5424 if self.carrier == Carrier::Syslog => {
                    self.feed_5424(c, piece, offset + k)
                }
                _ => {}
            }
        }
    }

    fn feed_5424(&mut self, c: u8, piece: usize, offset: usize) {
        match self.sd {
            SdState::Before => {
                if c == b' ' {
                    self.spaces += 1;
                    if self.spaces == 6 {
                        self.sd = SdState::Element;
                        self.escaped = false;
                        self.sd_next = true;
                    }
                }
            }
            SdState::Element => {
                if self.sd_next {
                    self.sd_next = false;
                    let nil = c == b'-';
                    self.sd_at = Some((piece, offset, nil));
                    if nil {
                        self.sd = SdState::After;
                        return;
                    }
                }
                if c == b'[' {
                    self.sd = SdState::InElement;
                } else {
                    self.sd = SdState::After;
                }
            }
            SdState::InElement => {
                if c == b'"' {
                    self.sd = SdState::Value;
                } else if c == b']' {
                    self.sd = SdState::Element;
                }
            }
            SdState::Value => {
                if self.escaped {
                    self.escaped = false;
                } else if c == b'\\' {
                    self.escaped = true;
                } else if c == b'"' {
                    self.sd = SdState::InElement;
                }
            }
            SdState::After => {}
        }
    }
}

/// Renders a wrong-looking value for messages: the first 200 bytes.
pub fn snippet(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b.get(..200).unwrap_or(b)).into_owned();
    if b.len() > 200 { format!("{s}…") } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(tpl: &str, f: Format, c: Carrier, acct: bool) -> Vec<Piece> {
        scan(tpl, f, c, acct).unwrap()
    }

    fn ctxs(p: &[Piece]) -> Vec<Ctx> {
        p.iter()
            .filter_map(|x| match x {
                Piece::Slot { ctx, .. } => Some(*ctx),
                _ => None,
            })
            .collect()
    }

    fn slot(name: &str, ctx: Ctx) -> Piece {
        Piece::Slot {
            name: name.into(),
            attr: None,
            ctx,
        }
    }

    #[test]
    fn json_is_minified_and_contexts_found() {
        let p = pieces(
            "{ \"a\" : \"x {{s}} y\",\n  \"n\": {{n}} }",
            Format::Json,
            Carrier::Json,
            false,
        );
        assert_eq!(
            p,
            vec![
                Piece::Lit(b"{\"a\":\"x ".to_vec()),
                slot("s", Ctx::JsonStr),
                Piece::Lit(b" y\",\"n\":".to_vec()),
                slot("n", Ctx::Raw),
                Piece::Lit(b"}".to_vec()),
            ]
        );
    }

    #[test]
    fn json_accounting_goes_last() {
        let p = pieces("{\"a\":1}", Format::Json, Carrier::Json, true);
        assert_eq!(
            p,
            vec![
                Piece::Lit(b"{\"a\":1".to_vec()),
                Piece::Acct(AcctStyle::Json {
                    leading_comma: true
                }),
                Piece::Lit(b"}".to_vec())
            ]
        );
    }

    #[test]
    fn cef_header_and_extension() {
        let p = pieces(
            "<14>1 {{ts}} h a - - - CEF:0|V|{{p}}|1|100|n|5|src={{ip}} act=x",
            Format::Cef,
            Carrier::Syslog,
            false,
        );
        assert_eq!(ctxs(&p), vec![Ctx::Raw, Ctx::CefHeader, Ctx::CefExt]);
    }

    #[test]
    fn rfc5424_sd_values_and_acct_in_place_of_nil() {
        let p = pieces(
            "<34>1 {{ts}} host app 1 ID47 [ex@1 a=\"{{v}}\"] msg {{m}}",
            Format::Rfc5424,
            Carrier::Syslog,
            false,
        );
        assert_eq!(ctxs(&p), vec![Ctx::Raw, Ctx::SdValue, Ctx::Raw]);

        let p = pieces(
            "<34>1 {{ts}} host app 1 - - msg",
            Format::Rfc5424,
            Carrier::Syslog,
            true,
        );
        assert_eq!(p[2], Piece::Lit(b" host app 1 - ".to_vec()));
        assert_eq!(p[3], Piece::Acct(AcctStyle::Sd));
        assert_eq!(p[4], Piece::Lit(b" msg".to_vec()));
        let p = pieces(
            "<34>1 {{ts}} host app 1 - [x@1 a=\"b\"] msg",
            Format::Rfc5424,
            Carrier::Syslog,
            true,
        );
        assert_eq!(p[3], Piece::Acct(AcctStyle::Sd));
        assert_eq!(p[4], Piece::Lit(b"[x@1 a=\"b\"] msg".to_vec()));
    }

    #[test]
    fn kv_acct_at_end_before_newline() {
        let p = pieces("a=1 b=2\n", Format::Kv, Carrier::Line, true);
        assert_eq!(
            p,
            vec![
                Piece::Lit(b"a=1 b=2".to_vec()),
                Piece::Acct(AcctStyle::Kv),
                Piece::Lit(b"\n".to_vec())
            ]
        );
    }

    #[test]
    fn escapes() {
        assert_eq!(escape("C:\\x \"q\"", Ctx::JsonStr), b"C:\\\\x \\\"q\\\"");
        assert_eq!(escape("a|b\\c", Ctx::CefHeader), b"a\\|b\\\\c");
        assert_eq!(escape("a=b|c\nd", Ctx::CefExt), b"a\\=b|c\\nd");
        assert_eq!(escape("a\"b]c", Ctx::SdValue), b"a\\\"b\\]c");
        assert_eq!(escape("a\"b", Ctx::Raw), b"a\"b");
    }

    #[test]
    fn bad_markers() {
        assert!(scan("{{a b}}", Format::Text, Carrier::Line, false).is_err());
        assert!(scan("x {{a", Format::Text, Carrier::Line, false).is_err());
        assert!(scan("{\"a\":\"b}", Format::Json, Carrier::Json, false).is_err());
        assert_eq!(
            pieces("{{{{x", Format::Text, Carrier::Line, false),
            vec![Piece::Lit(b"{{x".to_vec())]
        );
        assert_eq!(
            pieces("a{{{g}}}", Format::Text, Carrier::Line, false),
            vec![
                Piece::Lit(b"a{".to_vec()),
                slot("g", Ctx::Raw),
                Piece::Lit(b"}".to_vec())
            ]
        );
    }
}
