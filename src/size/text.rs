//! A `Sizing` for people: one line per figure — label, value, how it was computed — in
//! sections (inputs, per event, bandwidth, volume, requests, checks, suggested, notes).

use std::fmt::Write;

use super::{Fig, Input, Origin, Sizing, Transport, bits, bytes, num, sig};

const LABEL: usize = 22;
const VALUE: usize = 28;

fn line(out: &mut String, label: &str, value: &str, how: &str) {
    let _ = writeln!(out, "  {label:LABEL$}{value:VALUE$}  {how}");
}

fn from<T>(i: &Input<T>) -> String {
    match i.from {
        Origin::Given => format!("given: {}", i.how),
        Origin::Default => format!("default: {}", i.how),
        Origin::Measured => format!("measured: {}", i.how),
    }
}

fn b(f: &Fig) -> String {
    bytes(f.value)
}

/// The text report of `s`.
pub fn render(s: &Sizing) -> String {
    let p = &s.inputs;
    let mut o = String::new();
    let carrier = match s.transport {
        Some(t) => format!("{}/{}", s.adapter.name(), t.name()),
        None => s.adapter.name().to_string(),
    };
    let batches = if s.adapter.is_http() {
        format!(", batches of {}", num(p.batch.value as f64, 0))
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "sizing: {} events/s of {} over {carrier}{batches}, {} days retained",
        num(p.eps.value, 2),
        bytes(p.event_bytes.value),
        p.days.value
    );

    o.push_str("\ninputs\n");
    line(&mut o, "events/s", &num(p.eps.value, 2), &from(&p.eps));
    let largest = p
        .event_bytes_max
        .map(|m| format!(", largest {}", bytes(m)))
        .unwrap_or_default();
    line(
        &mut o,
        "event (mean)",
        &bytes(p.event_bytes.value),
        &format!("{}{largest}", from(&p.event_bytes)),
    );
    line(
        &mut o,
        "retention",
        &format!("{} days", p.days.value),
        &from(&p.days),
    );
    if s.adapter.is_http() {
        line(
            &mut o,
            "batch",
            &format!("{} events", num(p.batch.value as f64, 0)),
            &from(&p.batch),
        );
        line(
            &mut o,
            "batch byte limit",
            &bytes(p.batch_bytes.value as f64),
            &from(&p.batch_bytes),
        );
    }
    let ratio = if p.compression.value > 1.0 {
        format!("{}:1", sig(p.compression.value))
    } else {
        "none".into()
    };
    line(&mut o, "compression", &ratio, &from(&p.compression));
    if s.adapter.is_http() {
        line(
            &mut o,
            "latency per request",
            &format!("{} ms", sig(p.latency_ms.value)),
            &from(&p.latency_ms),
        );
    }
    match &p.rate_per_core {
        Some(r) => line(
            &mut o,
            "render rate per core",
            &format!("{} events/s", num(r.value, 0)),
            &from(r),
        ),
        None => line(
            &mut o,
            "render rate per core",
            "—",
            "unknown: give --source ID or --report FILE to measure one",
        ),
    }

    o.push_str("\nper event\n");
    let e = &s.per_event;
    line(&mut o, "event", &b(&e.event), "what a licence counts");
    let sign = if e.carrier.value < 0.0 { "" } else { "+" };
    line(
        &mut o,
        "carrier",
        &format!("{sign}{}", b(&e.carrier)),
        &e.carrier.how,
    );
    let _ = writeln!(o, "  {:LABEL$}{:VALUE$}  {}", "", "", p.carrier.sample);
    if s.adapter.is_http() {
        line(
            &mut o,
            "request head share",
            &format!("+{} B", num(e.request_share.value, 2)),
            &e.request_share.how,
        );
    }
    line(&mut o, "on the wire", &b(&e.wire), &e.wire.how);
    if let Some(c) = &e.compressed {
        line(&mut o, "compressed", &b(c), &c.how);
    }

    o.push_str("\nbandwidth\n");
    let rate = |o: &mut String, label: &str, r: &super::Rate| {
        line(
            o,
            label,
            &format!("{} B/s = {}", num(r.bytes_per_s, 0), bits(r.bits_per_s)),
            &r.how,
        );
    };
    rate(&mut o, "raw events", &s.bandwidth.raw);
    rate(&mut o, "on the wire", &s.bandwidth.wire);
    if let Some(c) = &s.bandwidth.compressed {
        rate(&mut o, "compressed", c);
    }

    o.push_str("\nvolume\n");
    let v = &s.volume;
    line(
        &mut o,
        "events a day",
        &num(v.events_per_day.value, 0),
        &v.events_per_day.how,
    );
    let vol = |o: &mut String, label: &str, x: &super::Volume| {
        line(
            o,
            label,
            &format!(
                "{} {} = {} {}",
                sig(x.decimal),
                x.unit,
                sig(x.binary),
                x.binary_unit
            ),
            &x.how,
        );
    };
    vol(&mut o, "licence a day", &v.licence_per_day);
    vol(
        &mut o,
        &format!("licence, {} days", p.days.value),
        &v.licence_retention,
    );
    vol(&mut o, "on the wire a day", &v.wire_per_day);

    let r = &s.requests;
    o.push_str(&format!("\n{}\n", r.kind));
    line(&mut o, "per second", &num(r.per_s.value, 2), &r.per_s.how);
    if s.adapter.is_http() {
        line(
            &mut o,
            "events per request",
            &num(r.events_per_request.value, 0),
            &r.events_per_request.how,
        );
        line(&mut o, "request body", &b(&r.body_bytes), &r.body_bytes.how);
        line(
            &mut o,
            "request on the wire",
            &b(&r.wire_bytes),
            &r.wire_bytes.how,
        );
    } else {
        let label = if s.transport == Some(Transport::Udp) {
            "datagram"
        } else {
            "message, framed"
        };
        line(&mut o, label, &b(&r.body_bytes), &r.body_bytes.how);
    }

    o.push_str("\nchecks\n");
    for c in &s.checks {
        let _ = writeln!(
            o,
            "  {:5} {} {} {} {}: {}",
            if c.ok { "ok" } else { "OVER" },
            c.what,
            bytes(c.value),
            if c.ok { "≤" } else { ">" },
            bytes(c.limit),
            c.how
        );
    }

    o.push_str("\nsuggested\n");
    let sg = &s.suggested;
    line(
        &mut o,
        "connections",
        &num(sg.connections.value, 0),
        &sg.connections.how,
    );
    match &sg.threads {
        Some(t) => line(&mut o, "generator threads", &num(t.value, 0), &t.how),
        None => line(
            &mut o,
            "generator threads",
            "—",
            "give --source ID or --report FILE to measure a render rate",
        ),
    }

    if !s.notes.is_empty() {
        o.push_str("\nnotes\n");
        for n in &s.notes {
            let _ = writeln!(o, "  - {n}");
        }
    }
    o
}
