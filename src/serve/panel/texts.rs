//! The panel's Configs and Scenarios tabs: the YAML files of `--configs-dir` and
//! `--scenarios-dir` listed, read, validated (every problem with its field path, line and
//! column, as `validate` and `scenario --check` give them), previewed (a scenario's first
//! events per stage), saved only when valid, and deleted. Without its directory a kind can
//! still be validated and previewed; listing, reading, saving and deleting say which flag is
//! missing.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use super::route::Kind;
use super::{Ctx, file_reply, no_dir, no_dir_reason, parse, shown};
use crate::config::units::Dur;
use crate::pack::entities::{Entities, Sizes};
use crate::scenario::file::Speed;
use crate::scenario::plan::Scenario;
use crate::scenario::play::Player;
use crate::scenario::{self, attack, truth};
use crate::serve::files::Dir;
use crate::serve::guard::Reply;
use crate::yaml::diag::{Diagnostic, Severity};

/// The names configs and scenarios take.
pub const EXTS: &[&str] = &[".yaml", ".yml"];

/// The most preview events per stage.
const MAX_PREVIEW: usize = 20;

fn what(kind: Kind) -> &'static str {
    match kind {
        Kind::Configs => "config files",
        Kind::Scenarios => "scenario files",
    }
}

fn dir(ctx: &Ctx, kind: Kind) -> Result<&Dir, Reply> {
    ctx.dirs
        .texts(kind)
        .ok_or_else(|| no_dir(kind.flag(), what(kind)))
}

/// `GET /api/configs`, `GET /api/scenarios`.
pub fn list(ctx: &Ctx, kind: Kind) -> Reply {
    let Some(d) = ctx.dirs.texts(kind) else {
        let reason = no_dir_reason(kind.flag(), what(kind));
        let key = kind_key(kind);
        return Reply::value(
            200,
            &json!({"dir": null, "writable": false, "reason": reason, key: []}),
        );
    };
    match d.list() {
        Ok(entries) => Reply::value(
            200,
            &json!({"dir": shown(d.root()), "writable": true, "reason": null, kind_key(kind): entries}),
        ),
        Err(e) => file_reply(e),
    }
}

fn kind_key(kind: Kind) -> &'static str {
    match kind {
        Kind::Configs => "configs",
        Kind::Scenarios => "scenarios",
    }
}

/// `GET /api/configs/{name}`, `GET /api/scenarios/{name}`.
pub fn read(ctx: &Ctx, kind: Kind, name: &str) -> Reply {
    let d = match dir(ctx, kind) {
        Ok(d) => d,
        Err(r) => return r,
    };
    match d.read(name) {
        Ok(text) => Reply::value(200, &json!({"name": name, "text": text})),
        Err(e) => file_reply(e),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextBody {
    text: String,
    seed: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreviewBody {
    text: String,
    seed: Option<u64>,
    per_stage: Option<usize>,
}

const TEXT_SHAPE: &str = r#"{"text": "<YAML>"}"#;

/// What validating a text came to.
struct Checked {
    errors: Vec<Value>,
    warnings: Vec<Value>,
    summary: Option<Value>,
}

impl Checked {
    fn reply(self) -> Reply {
        Reply::value(
            200,
            &json!({
                "valid": self.errors.is_empty(),
                "errors": self.errors,
                "warnings": self.warnings,
                "summary": self.summary,
            }),
        )
    }
}

/// `POST /api/configs/validate`, `POST /api/scenarios/validate`.
pub fn validate(ctx: &Ctx, kind: Kind, body: &[u8]) -> Reply {
    let b: TextBody = match parse(body, TEXT_SHAPE) {
        Ok(b) => b,
        Err(r) => return r,
    };
    check(ctx, kind, &b.text, b.seed).reply()
}

fn check(ctx: &Ctx, kind: Kind, text: &str, seed: Option<u64>) -> Checked {
    match kind {
        Kind::Configs => check_config(ctx, text),
        Kind::Scenarios => match resolve_scenario(ctx, text, seed) {
            Ok((s, warnings)) => Checked {
                errors: Vec::new(),
                warnings: located_diags(&warnings, Severity::Warning),
                summary: Some(scenario_summary(&s)),
            },
            Err(errors) => Checked {
                errors: located_diags(&errors, Severity::Error),
                warnings: Vec::new(),
                summary: None,
            },
        },
    }
}

/// A config as `run` would check it, and then as the panel would run it (`policy`): what the
/// panel will not run, it does not call valid.
fn check_config(ctx: &Ctx, text: &str) -> Checked {
    let mut loaded = crate::config::load_str(text, &ctx.store, Some(&ctx.catalog));
    let diags = |it: &mut dyn Iterator<Item = &Diagnostic>| -> Vec<Value> {
        it.map(|d| serde_json::to_value(d).unwrap_or(Value::Null))
            .collect()
    };
    let refused = match loaded.config.as_mut() {
        Some(c) => super::policy::check(c, &ctx.rules),
        None => Vec::new(),
    };
    let mut errors = diags(&mut loaded.diags.errors());
    errors.extend(diags(
        &mut super::policy::diagnostics(text, &refused).iter(),
    ));
    Checked {
        summary: loaded.config.as_ref().map(config_summary),
        errors,
        warnings: diags(&mut loaded.diags.warnings()),
    }
}

/// The common keys of a valid config, for the page (token sources by name only: a config
/// never holds a token).
fn config_summary(c: &crate::config::schema::Config) -> Value {
    let w = &c.workload;
    json!({
        "name": c.name,
        "adapter": c.target.adapter.to_string(),
        "url": c.target.url,
        "source": c.source().map(|s| s.id.clone()),
        "mode": c.mode.to_string(),
        "profile": w.profile.to_string(),
        "eps": w.eps,
        "stop": {
            "after": w.stop.after.map(|d| Dur(d.0).to_string()),
            "total_events": w.stop.total_events,
        },
        "workers": w.workers,
        "auth": c.target.auth.as_ref().and_then(auth_source),
    })
}

fn auth_source(a: &crate::config::schema::Auth) -> Option<String> {
    [
        ("token_env", &a.token_env),
        ("token_file", &a.token_file),
        ("token_secret", &a.token_secret),
    ]
    .into_iter()
    .find_map(|(k, v)| v.as_ref().map(|v| format!("{k}: {v}")))
}

/// The file name scenario messages carry, stripped again when they are placed at lines.
const SCENARIO_FILE: &str = "scenario.yaml";

fn resolve_scenario(
    ctx: &Ctx,
    text: &str,
    seed: Option<u64>,
) -> Result<(Scenario, Vec<String>), Vec<String>> {
    let opened = scenario::open_text(SCENARIO_FILE, text)?;
    let pools = |seed| Arc::new(Entities::generate(seed, &Sizes::default()));
    opened.resolve(&ctx.catalog, pools, seed, None, Speed::Factor(1.0))
}

/// `scenario.yaml:3:5: stages[0].technique: message` as a diagnostic the page can place.
#[allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value's IndexMut on the object built here with json! never panics"
)]
fn located_diags(lines: &[String], severity: Severity) -> Vec<Value> {
    lines
        .iter()
        .map(|l| {
            let rest = l
                .strip_prefix(SCENARIO_FILE)
                .and_then(|r| r.strip_prefix(':'))
                .unwrap_or(l);
            let (line, column, rest) = split_position(rest);
            let (path, message) = match rest.split_once(": ") {
                Some((p, m)) if !p.is_empty() && !p.contains(' ') => (p, m),
                _ => ("", rest),
            };
            let mut d = json!({"severity": severity, "path": path, "message": message});
            if let (Some(l), Some(c)) = (line, column) {
                d["line"] = json!(l);
                d["column"] = json!(c);
            }
            d
        })
        .collect()
}

/// `3:5: rest` → (3, 5, rest); anything else has no position.
fn split_position(s: &str) -> (Option<usize>, Option<usize>, &str) {
    let mut parts = s.splitn(3, ':');
    let (Some(l), Some(c), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return (None, None, s.trim_start());
    };
    match (l.trim().parse(), c.parse()) {
        (Ok(l), Ok(c)) => (Some(l), Some(c), rest.trim_start()),
        _ => (None, None, s.trim_start()),
    }
}

#[allow(
    clippy::indexing_slicing,
    reason = "st.source is the index the scenario planner resolved into the scenario's sources"
)]
fn scenario_summary(s: &Scenario) -> Value {
    let stages: Vec<Value> = s
        .stages
        .iter()
        .enumerate()
        .map(|(i, st)| {
            json!({
                "index": i,
                "name": st.name,
                "tactic": st.tactic,
                "tactic_name": attack::tactic_name(st.tactic),
                "technique": st.technique.id,
                "technique_name": st.technique.name,
                "source": s.sources[st.source].def.id,
                "count": st.count,
                "start_s": st.start.as_secs_f64(),
                "end_s": st.end().as_secs_f64(),
                "draws": st.candidates.iter().map(|c| json!({"name": c.name, "weight": c.weight})).collect::<Vec<_>>(),
                "shows": st.shows().iter().map(|r| r.name()).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "name": s.name,
        "seed": s.seed,
        "speed": s.speed.to_string(),
        "events": s.total_events(),
        "span_s": s.span().as_secs_f64(),
        "attack_version": attack::VERSION,
        "stages": stages,
    })
}

/// `POST /api/scenarios/preview`.
#[allow(
    clippy::indexing_slicing,
    reason = "st.source is the index the scenario planner resolved into the scenario's sources"
)]
pub fn preview(ctx: &Ctx, body: &[u8]) -> Reply {
    let b: PreviewBody = match parse(body, r#"{"text": "<YAML>", "per_stage": N}"#) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let per_stage = b.per_stage.unwrap_or(3);
    if !(1..=MAX_PREVIEW).contains(&per_stage) {
        return Reply::error(400, &format!("per_stage is 1 to {MAX_PREVIEW}"));
    }
    let s = match resolve_scenario(ctx, &b.text, b.seed) {
        Ok((s, _)) => s,
        Err(errors) => return invalid(errors.len(), located_diags(&errors, Severity::Error)),
    };
    let anchor = s.anchor.unwrap_or_else(crate::generate::time::now);
    let mut player = Player::new(Arc::new(s), "r-preview", anchor);
    let sc = player.scenario();
    let mut stages: Vec<Value> = sc
        .stages
        .iter()
        .enumerate()
        .map(|(i, st)| {
            json!({"index": i, "technique": st.technique.id,
                   "source": sc.sources[st.source].def.id, "events": []})
        })
        .collect();
    let mut ev = Vec::new();
    let order: Vec<usize> = player
        .planned()
        .iter()
        .map(|p| usize::from(p.stage))
        .collect();
    for (n, stage) in order.into_iter().enumerate() {
        let Some(events) = stages
            .get_mut(stage)
            .and_then(|s| s["events"].as_array_mut())
        else {
            continue;
        };
        if events.len() >= per_stage {
            continue;
        }
        ev.clear();
        player.render(n, 0, n as u64, None, &mut ev);
        let text = String::from_utf8_lossy(&ev);
        events.push(json!({"time": truth::rfc3339(player.time_ns(n)), "text": text.trim_end()}));
    }
    Reply::value(200, &json!({"stages": stages}))
}

fn invalid(n: usize, errors: Vec<Value>) -> Reply {
    let plural = if n == 1 { "" } else { "s" };
    Reply::value(
        422,
        &json!({"error": format!("not valid: {n} problem{plural}"), "errors": errors}),
    )
}

/// `PUT /api/configs/{name}`, `PUT /api/scenarios/{name}`: only a text that validates.
pub fn save(ctx: &Ctx, kind: Kind, name: &str, body: &[u8]) -> Reply {
    let d = match dir(ctx, kind) {
        Ok(d) => d,
        Err(r) => return r,
    };
    if let Err(e) = d.check_name(name) {
        return file_reply(e);
    }
    let b: TextBody = match parse(body, TEXT_SHAPE) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let checked = check(ctx, kind, &b.text, b.seed);
    if !checked.errors.is_empty() {
        return invalid(checked.errors.len(), checked.errors);
    }
    match d.write(name, &b.text) {
        Ok(()) => Reply::value(200, &json!({"ok": true, "name": name})),
        Err(e) => file_reply(e),
    }
}

/// `DELETE /api/configs/{name}`, `DELETE /api/scenarios/{name}`.
pub fn delete(ctx: &Ctx, kind: Kind, name: &str) -> Reply {
    let d = match dir(ctx, kind) {
        Ok(d) => d,
        Err(r) => return r,
    };
    match d.delete(name) {
        Ok(()) => Reply::value(200, &json!({"ok": true})),
        Err(e) => file_reply(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_messages_are_placed_at_their_lines() {
        let d = located_diags(
            &[
                "scenario.yaml:3:5: stages[0].technique: T9999 is not a technique".into(),
                "scenario.yaml: stages: at least one stage".into(),
                "scenario.yaml: the file is empty".into(),
            ],
            Severity::Error,
        );
        assert_eq!(d[0]["line"], 3);
        assert_eq!(d[0]["column"], 5);
        assert_eq!(d[0]["path"], "stages[0].technique");
        assert_eq!(d[0]["message"], "T9999 is not a technique");
        assert!(d[1].get("line").is_none());
        assert_eq!(d[1]["path"], "stages");
        assert_eq!(d[2]["path"], "");
        assert_eq!(d[2]["message"], "the file is empty");
    }
}
