//! The carrier's bytes, taken from the adapters' own framing code rather than from constants:
//! a real `adapter::Framer` (lphc JSON array, HEC event envelopes) or
//! `adapter::syslog::SyslogFramer` (RFC 5424 header, octet counting or datagrams) frames
//! events here exactly as a run's worker does, and the difference is the overhead. What a run
//! would fill in from its config is fixed to values of a typical length, so figures do not
//! depend on the clock: the time (10-digit epoch seconds, true until 2286), the run id (a
//! run's has the same length), the collector's `Host:` and the token. The syslog header is
//! framed with this machine's host name and this process's id, as a run from here sends it.

use crate::adapter::syslog::SyslogFramer;
use crate::adapter::{Body, Embed, Framer, json_escape_into};
use crate::config::schema::{
    self, Adapter as CfgAdapter, Auth, AuthScheme, Batch, Compression, Hec, Limits, Retry, Syslog,
    SyslogFormat, SyslogFraming, SyslogTransport, Target,
};
use crate::config::secrets::Token;
use crate::config::units::Size;
use crate::net::http::write_request_head;
use crate::pack::load::{Carrier as PackCarrier, Category, Format, PackDef, SyslogDefaults};

use super::{Adapter, Carrier, Origin, Transport, num};

/// The time every event is framed with: 2026-01-01T00:00:00Z.
pub const TIME_NS: i64 = 1_767_225_600_000_000_000;
/// The run id framed into HEC envelopes and accounting tags.
pub const RUN_ID: &str = "r-000000000000";
/// The collector's `Host:` header.
pub const HOST: &str = "siem-collector.example.com:8088";
/// A HEC token is a GUID; lphc keys are taken to be as long.
const TOKEN: &str = "00000000-0000-0000-0000-000000000000";
/// lphc's path (the examples' `/ingest`).
const LPHC_PATH: &str = "/ingest";
/// The HEC sourcetype when no pack gives one: Splunk's built-in JSON sourcetype.
pub const DEFAULT_SOURCETYPE: &str = "_json";

/// What an HTTP run fills into its framer from its config and url: the `Host:` header, the
/// path, the auth scheme (its token taken to be a 36-character GUID, as HEC tokens are) and
/// the `hec` block. `placeholder` stands in when there is no run.
#[derive(Clone, Debug)]
pub struct HttpSetup {
    pub host: String,
    pub path: String,
    pub auth: Option<AuthScheme>,
    pub username: Option<String>,
    pub header: Option<String>,
    pub hec: Option<Hec>,
}

impl HttpSetup {
    /// A collector at `HOST`: lphc at `/ingest` with an `X-API-Key`, HEC with `Splunk` auth,
    /// Elasticsearch at the root (`/_bulk`) with an `ApiKey`.
    pub fn placeholder(adapter: Adapter) -> HttpSetup {
        HttpSetup {
            host: HOST.into(),
            path: match adapter {
                Adapter::Elasticsearch => String::new(),
                _ => LPHC_PATH.into(),
            },
            auth: Some(match adapter {
                Adapter::Hec => AuthScheme::Splunk,
                Adapter::Elasticsearch => AuthScheme::ApiKey,
                _ => AuthScheme::XApiKey,
            }),
            username: None,
            header: None,
            hec: None,
        }
    }
}

/// The framer a run's worker would use for `adapter` (lphc or hec), `setup` and a pack of
/// `carrier` with `sourcetype`.
pub fn http_framer(
    adapter: Adapter,
    setup: &HttpSetup,
    carrier: PackCarrier,
    sourcetype: &str,
    gzip: bool,
) -> Framer {
    let hec = adapter == Adapter::Hec;
    let es = adapter == Adapter::Elasticsearch;
    let target = Target {
        urls: Vec::new(),
        adapter: match adapter {
            Adapter::Hec => CfgAdapter::GenericHec,
            Adapter::Elasticsearch => CfgAdapter::Elasticsearch,
            _ => CfgAdapter::Lphc,
        },
        url: format!("http://{}{}", setup.host, setup.path),
        auth: setup.auth.map(|scheme| Auth {
            scheme: Some(scheme),
            token_env: None,
            token_file: None,
            token_secret: None,
            username: setup.username.clone(),
            header: setup.header.clone(),
        }),
        tls: None,
        batch: Batch {
            max_events: schema::DEFAULT_BATCH_EVENTS,
            max_bytes: Size(schema::DEFAULT_BATCH_BYTES),
            mix: false,
        },
        compression: if gzip {
            Compression::Gzip
        } else {
            Compression::None
        },
        limits: Limits::default(),
        retry: Retry::default(),
        hec: if hec { setup.hec.clone() } else { None },
        syslog: None,
        elasticsearch: es.then(schema::Elasticsearch::default),
        http: None,
        builtin: None,
    };
    let token = Token::new(TOKEN.into());
    Framer::new(
        &target,
        Some(&token),
        &setup.host,
        &setup.path,
        carrier,
        sourcetype,
        RUN_ID,
    )
}

/// Appends `ev` to `body` as event number `n` of a batch, the way the worker does.
pub fn frame_http(f: &Framer, body: &mut Vec<u8>, n: usize, ev: &[u8]) {
    let id = crate::adapter::EventId {
        agent: 0,
        seq: n as u64,
        sent_ms: None,
    };
    f.before_event(body, n, TIME_NS, &id);
    match f.embed {
        Embed::Direct => body.extend_from_slice(ev),
        Embed::JsonString => json_escape_into(ev, body),
    }
    f.after_event(body, &id);
}

/// A whole body of `events`.
pub fn http_body(f: &Framer, events: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    f.begin(&mut body);
    for (n, ev) in events.iter().enumerate() {
        frame_http(f, &mut body, n, ev);
    }
    f.finish(&mut body);
    body
}

/// The request head's length for a body of `content_length` bytes.
pub fn head_len(f: &Framer, content_length: usize) -> usize {
    let mut head = Vec::new();
    write_request_head(
        &mut head,
        f.method,
        &f.path,
        &f.host,
        &f.headers,
        content_length,
    );
    head.len()
}

/// The request head's length but for the Content-Length value (`size::head_bytes` adds it).
pub fn head_fixed(f: &Framer) -> f64 {
    (head_len(f, 0) - 1) as f64
}

/// The pack definition syslog framing uses when there is no pack: app `ingestbench`,
/// facility local0, severity 6 (info), so `<134>`, and no MSGID.
pub fn default_def() -> PackDef {
    PackDef {
        id: "ingestbench".into(),
        version: semver::Version::new(0, 0, 0),
        category: Category::Network,
        description: String::new(),
        format: Format::Json,
        carrier: PackCarrier::Json,
        sourcetype: DEFAULT_SOURCETYPE.into(),
        syslog: SyslogDefaults {
            app_name: "ingestbench".into(),
            facility: 16,
            severity: 6,
            msgid: "-".into(),
        },
        fields: vec![],
        events: vec![],
        roles: vec![],
        host_os: None,
    }
}

/// The syslog framer a run would use for `def` over `transport` (RFC 5424, octet counting
/// on streams), with no message-size limit so every event is measured.
pub fn syslog_framer(def: &PackDef, transport: Transport) -> SyslogFramer {
    let cfg = Syslog {
        transport: Some(match transport {
            Transport::Tcp => SyslogTransport::Tcp,
            Transport::Udp => SyslogTransport::Udp,
            Transport::Tls => SyslogTransport::Tls,
        }),
        framing: SyslogFraming::OctetCounting,
        format: SyslogFormat::Rfc5424,
        app_name: None,
        facility: None,
        max_message_bytes: Size(1 << 40),
        udp_order: None,
        relp_window: None,
    };
    SyslogFramer::new(
        Some(&cfg),
        def,
        &crate::run::plan::host_name(),
        transport == Transport::Udp,
    )
}

/// One syslog message of `ev` as framed for `transport`.
pub fn syslog_message(f: &mut SyslogFramer, ev: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    f.append(TIME_NS, &mut out, &mut Vec::new(), |o| {
        o.extend_from_slice(ev)
    });
    out
}

/// The RFC 5424 header the syslog framer writes before an event of `def` (none when the
/// pack's events are whole syslog messages), and its text.
pub fn syslog_header(def: &PackDef) -> (usize, String) {
    let mut f = syslog_framer(def, Transport::Udp);
    let h = syslog_message(&mut f, b"");
    (h.len(), String::from_utf8_lossy(&h).into_owned())
}

/// Digits of `n` (octet counting's length field).
fn digits(n: u64) -> usize {
    n.max(1).ilog10() as usize + 1
}

/// The carrier for events of `event_bytes` B without a pack: JSON events (embedded as they
/// are) for lphc and hec, with the sourcetype `_json`; syslog messages with the header of
/// `default_def`.
pub fn synthetic(
    adapter: Adapter,
    setup: &HttpSetup,
    transport: Transport,
    batch: u64,
    event_bytes: f64,
    gzip: bool,
) -> Carrier {
    let def = default_def();
    let (syslog_header, header_text) = syslog_header(&def);
    match adapter {
        Adapter::Lphc | Adapter::Hec | Adapter::Elasticsearch => {
            let f = http_framer(adapter, setup, PackCarrier::Json, DEFAULT_SOURCETYPE, gzip);
            let one = http_body(&f, &[b""]).len() as f64;
            let two = http_body(&f, &[b"", b""]).len() as f64;
            let per_event = two - one;
            let per_request = one - per_event;
            let batch = batch.max(1) as f64;
            Carrier {
                event_overhead: per_event + per_request / batch,
                head: head_fixed(&f),
                what: http_what(&f, per_event + per_request / batch, "JSON events"),
                sample: http_sample(&f),
                from: Origin::Measured,
                syslog_header: syslog_header as f64,
            }
        }
        Adapter::Syslog => {
            let prefix = if transport == Transport::Udp {
                0
            } else {
                digits((syslog_header as f64 + event_bytes).round() as u64) + 1
            };
            Carrier {
                event_overhead: (syslog_header + prefix) as f64,
                head: 0.0,
                what: syslog_what(transport, syslog_header as f64, prefix as f64),
                sample: syslog_sample(transport, &header_text),
                from: Origin::Measured,
                syslog_header: syslog_header as f64,
            }
        }
    }
}

/// How the HTTP carrier's bytes come about: `overhead` B per event around `events`.
pub fn http_what(f: &Framer, overhead: f64, events: &str) -> String {
    let quoted = if f.embed == Embed::JsonString {
        ", each event a JSON string (quoted, escaped)"
    } else {
        ""
    };
    match f.body {
        Body::HecEnvelopes => format!(
            "HEC event envelope around {events} as the hec adapter writes it{quoted}: {} B (its fields member is the run's tag, 46 B)",
            num(overhead, 1)
        ),
        Body::HecLines => format!(
            "HEC raw endpoint, {events} one per line: {} B per event (the newline)",
            num(overhead, 3)
        ),
        Body::Plain => format!(
            "plain HTTP, {events} one per request, nothing around it: {} B per event",
            num(overhead, 3)
        ),
        Body::Bulk => format!(
            "_bulk NDJSON, {events} each after an action line{quoted}: {} B per event",
            num(overhead, 1)
        ),
        Body::JsonArray => format!(
            "lphc JSON array around {events}{quoted}: {} B per event (a comma between events, brackets around each request)",
            num(overhead, 3)
        ),
    }
}

/// How the syslog carrier's bytes come about.
pub fn syslog_what(transport: Transport, header: f64, prefix: f64) -> String {
    let head = if header > 0.0 {
        format!(
            "RFC 5424 header {} B (PRI, version, timestamp, this host, app, pid, MSGID, no SD)",
            num(header, 0)
        )
    } else {
        "no header (the pack's events are whole syslog messages)".into()
    };
    match transport {
        Transport::Udp => format!("{head}; one datagram per message, unframed"),
        _ => format!(
            "{head} + octet counting's length and space {} B (RFC 6587 3.4.1 / RFC 5425)",
            num(prefix, 1)
        ),
    }
}

/// Two events framed (one HEC envelope), `…` standing for an event.
pub fn http_sample(f: &Framer) -> String {
    let ev = "…".as_bytes();
    let body = match f.body {
        Body::HecEnvelopes => http_body(f, &[ev]),
        _ => http_body(f, &[ev, ev]),
    };
    String::from_utf8_lossy(&body).into_owned()
}

/// A syslog message's shape, `…` standing for the event.
pub fn syslog_sample(transport: Transport, header: &str) -> String {
    match transport {
        Transport::Udp => format!("{header}…"),
        _ => format!("LEN {header}…"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hec_envelope_is_the_framers() {
        let c = synthetic(
            Adapter::Hec,
            &HttpSetup::placeholder(Adapter::Hec),
            Transport::Tcp,
            500,
            500.0,
            false,
        );
        // {"time":1767225600.000,"sourcetype":"_json","event":…,"fields":{"ingestbench_run":"r-000000000000"}}
        let envelope = "{\"time\":1767225600.000,\"sourcetype\":\"_json\",\"event\":,\"fields\":{\"ingestbench_run\":\"r-000000000000\"}}";
        assert_eq!(c.event_overhead, envelope.len() as f64);
        assert_eq!(
            c.sample,
            envelope.replace("\"event\":,", "\"event\":…,"),
            "the sample is the envelope"
        );
        assert_eq!(
            ",\"fields\":{\"ingestbench_run\":\"r-000000000000\"}".len(),
            46,
            "the fields member named in the explanation"
        );
        // POST /services/collector/event HTTP/1.1, Host, Authorization: Splunk GUID,
        // Content-Type, Content-Length: 303500 (500 × 607 B), blank line.
        let head = format!(
            "POST /services/collector/event HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Splunk {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            500 * (500 + envelope.len())
        );
        assert_eq!(
            super::super::head_bytes(&c, (500 * (500 + envelope.len())) as f64),
            head.len() as f64
        );
    }

    #[test]
    fn lphc_array_is_a_comma_and_brackets() {
        let c = synthetic(
            Adapter::Lphc,
            &HttpSetup::placeholder(Adapter::Lphc),
            Transport::Tcp,
            500,
            500.0,
            false,
        );
        // `[` e `,` e … `]`: 1 B per event, less the first comma, plus 2 per request:
        // (500 − 1 + 2) / 500 = 1.002.
        assert_eq!(c.event_overhead, 1.0 + 1.0 / 500.0);
        assert_eq!(c.sample, "[…,…]");
        let gz = synthetic(
            Adapter::Lphc,
            &HttpSetup::placeholder(Adapter::Lphc),
            Transport::Tcp,
            500,
            500.0,
            true,
        );
        assert_eq!(gz.head - c.head, "Content-Encoding: gzip\r\n".len() as f64);
    }

    #[test]
    fn syslog_header_matches_rfc5424_as_framed() {
        let host = crate::run::plan::host_name().to_ascii_lowercase();
        let pid = std::process::id();
        // <134>1 2026-01-01T00:00:00.000Z HOST ingestbench PID - - (then the event)
        let want = format!("<134>1 2026-01-01T00:00:00.000Z {host} ingestbench {pid} - - ");
        let (n, text) = syslog_header(&default_def());
        assert_eq!(text, want);
        assert_eq!(n, want.len());
        let udp = synthetic(
            Adapter::Syslog,
            &HttpSetup::placeholder(Adapter::Syslog),
            Transport::Udp,
            500,
            500.0,
            false,
        );
        assert_eq!(udp.event_overhead, n as f64);
        let tcp = synthetic(
            Adapter::Syslog,
            &HttpSetup::placeholder(Adapter::Syslog),
            Transport::Tcp,
            500,
            500.0,
            false,
        );
        // `LEN SP`: the digits of the message's length and a space.
        let len = n + 500;
        assert_eq!(tcp.event_overhead, (n + len.to_string().len() + 1) as f64);
        // And the real framer agrees on a whole message.
        let mut f = syslog_framer(&default_def(), Transport::Tcp);
        let msg = syslog_message(&mut f, &[b'x'; 500]);
        assert_eq!(msg.len() as f64, 500.0 + tcp.event_overhead);
    }

    #[test]
    fn string_events_are_escaped_by_the_framer() {
        let f = http_framer(
            Adapter::Hec,
            &HttpSetup::placeholder(Adapter::Hec),
            PackCarrier::Line,
            "cef",
            false,
        );
        let body = http_body(&f, &[b"CEF:0|a\"b"]);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["event"], "CEF:0|a\"b");
    }
}
