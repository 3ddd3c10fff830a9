//! Trial rendering at compile time: every event type is rendered a few times with different
//! draws and the result checked against its format (JSON parses to an object; CEF has its
//! seven header fields; an RFC 5424 message has its header). A template that renders broken
//! events is a pack error with its field path, not bad traffic discovered later.

use crate::generate::{EventCtx, Generator};
use crate::pack::compile::{CompiledPack, snippet};
use crate::pack::load::{Carrier, Format};

const TRIALS: u64 = 24;

/// Problems as (field path, message); empty when every event type renders well.
pub fn trial_render(pack: &CompiledPack) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let mut g = Generator::new(pack.program.clone(), 0x5eed, "r-trial");
    let mut out = Vec::new();
    for (e, ev) in pack.program.events.iter().enumerate() {
        let path = pack
            .def
            .events
            .iter()
            .find(|d| d.name == ev.name)
            .map(|d| d.template_path.clone())
            .unwrap_or_default();
        for i in 0..TRIALS {
            out.clear();
            let ctx = EventCtx {
                index: i * 7919,
                time_ns: 1_741_944_067_123_456_789,
                agent: 1,
                seq: i,
                sent_ms: None,
            };
            g.render_event(e, &ctx, &mut out);
            if let Err(msg) = check_event(pack.def.format, pack.def.carrier, &out) {
                problems.push((
                    path.clone(),
                    format!(
                        "event {:?} renders badly: {msg}\n  rendered: {}",
                        ev.name,
                        snippet(&out)
                    ),
                ));
                break;
            }
        }
    }
    problems
}

/// Checks one rendered event against its pack's format.
pub fn check_event(format: Format, carrier: Carrier, ev: &[u8]) -> Result<(), String> {
    if ev.is_empty() {
        return Err("empty event".into());
    }
    if std::str::from_utf8(ev).is_err() {
        return Err("not UTF-8".into());
    }
    match (format, carrier) {
        (Format::Json, _) => match serde_json::from_slice::<serde_json::Value>(ev) {
            Ok(v) if v.is_object() => Ok(()),
            Ok(_) => Err("JSON but not an object".into()),
            Err(e) => Err(format!("not valid JSON: {e}")),
        },
        (Format::Cef, _) => {
            let s = std::str::from_utf8(ev).unwrap_or("");
            let at = s.find("CEF:").ok_or("no CEF: header")?;
            let mut pipes = 0;
            let mut esc = false;
            for c in s[at..].chars() {
                if esc {
                    esc = false;
                } else if c == '\\' {
                    esc = true;
                } else if c == '|' {
                    pipes += 1;
                }
            }
            if pipes < 7 {
                return Err(format!("CEF header has {pipes} unescaped '|', needs 7"));
            }
            Ok(())
        }
        _ => {
            if carrier == Carrier::Syslog && !ev.starts_with(b"<") {
                return Err("a syslog message must start with <PRI>".into());
            }
            if carrier != Carrier::Syslog && ev.contains(&b'\n') && format != Format::Text {
                return Err("a line event contains a newline".into());
            }
            Ok(())
        }
    }
}
