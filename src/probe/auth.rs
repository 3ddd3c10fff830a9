//! The auth step: does the target take our credentials? HEC: `GET /services/collector/health`
//! (its `code`/`text` decoded), then one tagged event with the token; lphc: one tagged event
//! with the auth header the adapter sends; syslog: one message in the configured framing on
//! the connection the earlier steps opened (syslog answers nothing, so there is nothing to
//! decode). The event is one of the configured pack, rendered by the generator and framed by
//! the adapter exactly as a run would (headers, envelope, gzip), under a run id of its own
//! (`<run>-auth`) so the framing step's count is not disturbed.

use std::io::Write;
use std::time::Duration;

use serde_json::Value;

use crate::adapter::answer::Judged;
use crate::adapter::gzip::Gzip;
use crate::adapter::{Embed, Outcome, json_escape_into};
use crate::config::schema::Adapter;
use crate::exit::Exit;
use crate::generate::{EventCtx, Generator};
use crate::probe::http::{Answer, Http, header_pairs};
use crate::probe::setup::Stream;
use crate::probe::{Ctx, Step};
use crate::run::RunPlan;
use crate::run::target::Endpoint;

const NAME: &str = "auth";

/// HEC's `{"text": …, "code": …}`, when the body is that: the code as the run reads it
/// (`adapter::answer::hec_code`), the text for a person.
pub fn hec_answer(body: &[u8]) -> (Option<i64>, Option<String>) {
    let text = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("text").and_then(Value::as_str).map(str::to_string));
    (crate::adapter::answer::hec_code(body), text)
}

pub fn auth(ctx: &mut Ctx<'_>, left: Duration) -> Step {
    let (Some(plan), Some(ep)) = (ctx.plan.as_ref(), ctx.endpoint.clone()) else {
        return Step::fail(NAME, "the probe has no plan", Exit::Aborted);
    };
    let event = one_event(plan, &auth_run_id(&ctx.run_id));
    match ctx.config.target.adapter {
        Adapter::Syslog => syslog_message(ctx, &event, left),
        adapter => {
            let http = Http::new(&ep, plan.tls.as_ref(), left);
            let mut step = Step::pass(NAME, "");
            if adapter == Adapter::GenericHec {
                step = hec_health(step, &http);
            }
            tagged_event(step, &http, plan, &ep, &event, &auth_run_id(&ctx.run_id))
        }
    }
}

pub fn auth_run_id(run_id: &str) -> String {
    format!("{run_id}-auth")
}

/// One event of the configured pack, tagged (run `run_id`, agent 0, seq 0); a plain HTTP
/// load without a pack sends its fixed body.
fn one_event(plan: &RunPlan, run_id: &str) -> Vec<u8> {
    let Some(pack) = plan.pack() else {
        return plan
            .http
            .as_ref()
            .and_then(|h| h.fixed.as_deref())
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
    };
    let mut g = Generator::new(pack.program.clone(), plan.seed, run_id);
    let mut out = Vec::new();
    g.render(
        &EventCtx {
            index: 0,
            time_ns: crate::generate::time::now(),
            agent: 0,
            seq: 0,
            sent_ms: None,
        },
        &mut out,
    );
    out
}

fn hec_health(step: Step, http: &Http) -> Step {
    const PATH: &str = "/services/collector/health";
    match http.get(PATH) {
        Err(e) => step
            .line(format!("health: no answer: {e}"))
            .detail("health", serde_json::json!({ "error": e }))
            .warn(format!("GET {PATH}: no answer: {e}")),
        Ok(a) => {
            let (code, text) = hec_answer(&a.body);
            let step = step
                .line(format!(
                    "health: {} {}",
                    a.status,
                    describe_hec(code, text.as_deref(), &a)
                ))
                .detail(
                    "health",
                    serde_json::json!({ "status": a.status, "code": code, "text": text }),
                );
            if a.status == 200 {
                step
            } else {
                step.warn(format!(
                    "GET {PATH} answered {}: {}",
                    a.status,
                    describe_hec(code, text.as_deref(), &a)
                ))
            }
        }
    }
}

fn describe_hec(code: Option<i64>, text: Option<&str>, a: &Answer) -> String {
    match (code, text) {
        (Some(c), Some(t)) => format!("code {c} {t:?}"),
        (Some(c), None) => format!("code {c}"),
        _ if a.body.is_empty() => "(empty body)".into(),
        _ => a.body_text(),
    }
}

fn tagged_event(
    step: Step,
    http: &Http,
    plan: &RunPlan,
    ep: &Endpoint,
    event: &[u8],
    run_id: &str,
) -> Step {
    let framer = plan.framer(&ep.host_port, &ep.path, run_id);
    let mut body = Vec::new();
    framer.begin(&mut body);
    let id = crate::adapter::EventId::default();
    framer.before_event(&mut body, 0, crate::generate::time::now(), &id);
    match framer.embed {
        Embed::Direct => body.extend_from_slice(event),
        Embed::JsonString => json_escape_into(event, &mut body),
    }
    framer.after_event(&mut body, &id);
    framer.finish(&mut body);
    if framer.gzip {
        let mut z = Vec::new();
        Gzip::new().compress(&body, &mut z);
        body = z;
    }
    let headers = header_pairs(&framer.headers);
    let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let step = step
        .detail("path", &framer.path)
        .detail("request_headers", &names)
        .detail("bytes", body.len());
    let a = match http.post(&framer.path, &headers, &body) {
        Ok(a) => a,
        Err(e) => {
            return step.failed(
                format!("POST {}: no answer: {e}", framer.path),
                Exit::Aborted,
            );
        }
    };
    let hec = plan.config.target.adapter == Adapter::GenericHec;
    let text = if hec { hec_answer(&a.body).1 } else { None };
    // The run's own rule (`adapter::answer`, through the run's framer): one classification.
    let (judged, code) = match &a.unreadable {
        Some(_) => (
            match framer.unreadable_outcome(a.status) {
                Outcome::Unreadable => Judged::Unreadable,
                Outcome::Retry { .. } => Judged::Retry,
                Outcome::AuthFailed => Judged::AuthFailed,
                _ => Judged::Failed,
            },
            None,
        ),
        None => framer.judge(a.status, &a.body, a.encoded),
    };
    let answer = if let Some(why) = &a.unreadable {
        format!("unreadable: {why}")
    } else if hec {
        describe_hec(code, text.as_deref(), &a)
    } else if a.body.is_empty() {
        "(empty body)".into()
    } else {
        a.body_text()
    };
    let auth_note = if plan.token.is_some() {
        "with the token"
    } else {
        "without a token (target.auth not set)"
    };
    let mut step = step
        .detail("status", a.status)
        .detail("hec_code", code)
        .detail("hec_text", &text)
        .detail("answer", &answer);
    step.summary = format!(
        "POST {} (one tagged event, {auth_note}) → {} {answer}",
        framer.path, a.status
    );
    verdict(step, judged, a.status, &answer, &a.body)
}

/// The step's verdict from the run's classification of the answer.
fn verdict(step: Step, judged: Judged, status: u16, answer: &str, body: &[u8]) -> Step {
    match judged {
        Judged::Accepted => step,
        Judged::Items => bulk_item(step, body, answer),
        Judged::AuthFailed => step.failed(
            format!("authentication failed: {status} {answer} (a run stops with exit 4)"),
            Exit::AuthFailed,
        ),
        Judged::Retry => step.warn(format!(
            "the target is busy ({status} {answer}): a run would send again; the token is not confirmed"
        )),
        Judged::Failed => step.failed(
            format!(
                "the target refused the event: {status} {answer} (a run counts such events failed, exit 3)"
            ),
            Exit::SloBreach,
        ),
        Judged::Unreadable => step.failed(
            format!(
                "answered {status}, but not a yes the run can read ({answer}): a run counts such events failed (events_unreadable_2xx) and never resends them, exit 3"
            ),
            Exit::SloBreach,
        ),
    }
}

/// A `_bulk` 200: its one item says what became of the event (a 200 is not a store).
fn bulk_item(step: Step, body: &[u8], answer: &str) -> Step {
    use crate::adapter::bulk::{self, Fate};
    let mut first = None;
    let n = bulk::items(body, |it| {
        first.get_or_insert(it);
    });
    // Whatever `errors` says, the item's status is the cluster's word on the event.
    match (first, n) {
        (Some(it), Some(1)) => match it.fate(crate::config::schema::OpType::Create) {
            Fate::Stored | Fate::AlreadyStored => step,
            Fate::Resend => step.warn(format!(
                "the cluster is busy ({}): a run would send the item again; the token is not confirmed",
                bulk::describe(body, &it)
            )),
            Fate::Failed => step.failed(
                format!(
                    "the cluster refused the event: {} (a run counts such events failed, exit 3)",
                    bulk::describe(body, &it)
                ),
                Exit::SloBreach,
            ),
        },
        _ => step.failed(
            format!(
                "a _bulk answer without exactly one item: {answer} (a run counts such a batch failed, exit 3)"
            ),
            Exit::SloBreach,
        ),
    }
}

fn syslog_message(ctx: &mut Ctx<'_>, event: &[u8], left: Duration) -> Step {
    let Some(mut framer) = ctx.plan.as_ref().and_then(|p| p.syslog.clone()) else {
        return Step::fail(NAME, "no syslog framing was planned", Exit::Invalid);
    };
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    let fits = framer.append(
        crate::generate::time::now(),
        &mut out,
        &mut scratch,
        |b: &mut Vec<u8>| b.extend_from_slice(event),
    );
    if !fits {
        return Step::fail(
            NAME,
            format!(
                "one event is over target.syslog.max_message_bytes ({}): a run would leave every such event out",
                framer.max_message
            ),
            Exit::Invalid,
        );
    }
    let framing = match framer.framing {
        crate::adapter::syslog::Framing::OctetCounting => "octet counting",
        crate::adapter::syslog::Framing::Lf => "LF",
        crate::adapter::syslog::Framing::Datagram => "one datagram",
    };
    let written = match ctx.stream.as_mut() {
        Some(Stream::Tcp(s)) => s.set_write_timeout(Some(left)).and_then(|()| {
            s.write_all(&out)?;
            s.flush()
        }),
        Some(Stream::Tls(s)) => s.sock.set_write_timeout(Some(left)).and_then(|()| {
            s.write_all(&out)?;
            s.flush()
        }),
        Some(Stream::Udp(s)) => s.send(&out).and_then(|_| udp_refused(s, left)),
        None => return Step::fail(NAME, "no connection to write on", Exit::Aborted),
    };
    let shown = String::from_utf8_lossy(&out);
    let shown: String = shown.trim_end().chars().take(160).collect();
    let step = Step::pass(
        NAME,
        format!(
            "one message written ({} bytes, {framing}); syslog answers nothing, so there is no answer to decode",
            out.len()
        ),
    )
    .line(format!("message {shown}"))
    .detail("framing", framing)
    .detail("bytes", out.len())
    .detail("answer", Value::Null);
    match written {
        Ok(()) => step,
        Err(e) => step.failed(format!("cannot write the message: {e}"), Exit::Aborted),
    }
}

/// After a datagram: an ICMP port unreachable shows as a refused `recv`; wait a moment (at
/// most 200 ms) for one.
fn udp_refused(s: &std::net::UdpSocket, left: Duration) -> std::io::Result<()> {
    s.set_read_timeout(Some(left.min(Duration::from_millis(200))))?;
    let mut b = [0u8; 512];
    match s.recv(&mut b) {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Err(std::io::Error::new(
            e.kind(),
            "the port is unreachable (ICMP): nothing listens there",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hec_bodies_decode() {
        assert_eq!(
            hec_answer(br#"{"text":"Invalid token","code":4}"#),
            (Some(4), Some("Invalid token".into()))
        );
        assert_eq!(hec_answer(b"<html>"), (None, None));
    }
}
