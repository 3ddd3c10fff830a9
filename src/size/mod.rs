//! `ingestbench size`: the sizing arithmetic a SIEM engineer does on a napkin, done once and
//! explained. A `Plan` holds every input already resolved — given by a flag, a stated default,
//! or measured (`measure`: a pack rendered and framed by the real generator and adapters;
//! `from_report`: a saved run report) — and `compute` turns it into a `Sizing`: bandwidth,
//! daily and retention volume, requests, limit checks and suggested connections and threads,
//! each figure with the one line that says how it was computed. `compute` is pure: no clock,
//! no files, no packs; `text` writes a `Sizing` for people, serde writes it as JSON.
//!
//! Units: decimal prefixes are powers of 1000 (GB = 10^9 B, as licences count), binary ones
//! powers of 1024 (GiB = 2^30 B); bits/s are 8 × bytes/s with decimal prefixes (Mbit/s =
//! 10^6 bit/s), as links are sold.

pub mod carrier;
pub mod from_report;
pub mod measure;
pub mod text;

use serde::Serialize;

pub const SIZE_SCHEMA: &str = "ingestbench.size/1";

/// Retention when `--days` is not given: 90 days, a common "hot, searchable" retention for
/// SIEM data (many policies keep a year, often in cheaper storage).
pub const DEFAULT_DAYS: u32 = 90;

/// The per-request latency assumed for Little's law when neither `--latency-ms` nor a report
/// gives one: 50 ms, a collector across a data centre or a busy one (HEC on a quiet LAN
/// answers in 5–20 ms; a cloud endpoint across a WAN 50–150 ms).
pub const DEFAULT_LATENCY_MS: f64 = 50.0;

/// Connections suggested are twice the requests Little's law says are in flight, so the
/// rate holds when latency doubles.
pub const CONNECTION_HEADROOM: f64 = 2.0;

/// Threads suggested keep each core at half its measured render rate: a worker thread also
/// writes to sockets, reads responses and does TLS, and the rate may peak above the plan.
pub const THREAD_UTILISATION: f64 = 0.5;

/// Splunk HEC's request limit: `limits.conf [http_input] max_content_length`, 838,860,800
/// bytes (800 MiB) by default since Splunk 6.5 — checked on the decompressed body, and a
/// request over it is answered 413. Sources: shared/reference/measurement-and-ops.md ("HEC
/// size limits", citing splunk/fluent-plugin-splunk-hec's README and fuyufjh/splunk-hec-go
/// issue 7); Splunk 10.4 ships the same value (a probe of a real Splunk, found by search).
pub const HEC_MAX_CONTENT_LENGTH: u64 = 838_860_800;
/// The same setting's default before 6.5, 1,000,000 bytes: the limit older clients (e.g.
/// splunk-hec-go) still size batches for, and a safe ceiling for an unknown HEC receiver.
pub const HEC_MAX_CONTENT_LENGTH_OLD: u64 = 1_000_000;
/// Elasticsearch's and OpenSearch's `http.max_content_length` default, 100mb: a larger
/// request is refused with 413.
pub const ES_MAX_CONTENT_LENGTH: u64 = 104_857_600;

/// The largest UDP payload over IPv4: 65,535 (IP total length) − 20 (IP header) − 8 (UDP).
pub const UDP_MAX_PAYLOAD_IPV4: u64 = 65_507;
/// The largest UDP payload that crosses a 1,500-byte MTU unfragmented: 1,500 − 20 − 8.
pub const UDP_UNFRAGMENTED_1500: u64 = 1_472;
/// RFC 5426 §3.2: IPv4 syslog receivers MUST take messages of up to 480 octets (IPv6: 1,180)
/// and all SHOULD take at least 2,048. (protocols.md summarises RFC 5426 as one message per
/// datagram; the sizes are the RFC's text, quoted in the IETF transport directorate's review.)
pub const RFC5426_MUST_IPV4: u64 = 480;
pub const RFC5426_SHOULD: u64 = 2_048;

/// Where an input came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// A flag gave it.
    Given,
    /// A stated default.
    Default,
    /// Measured: a pack rendered here, or a run's report.
    Measured,
}

/// One input with where it came from and a few words on how.
#[derive(Clone, Debug, Serialize)]
pub struct Input<T> {
    pub value: T,
    pub from: Origin,
    pub how: String,
}

impl<T> Input<T> {
    pub fn new(value: T, from: Origin, how: impl Into<String>) -> Self {
        Input {
            value,
            from,
            how: how.into(),
        }
    }
}

/// The adapter events would travel with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Adapter {
    Lphc,
    Hec,
    Elasticsearch,
    Syslog,
}

impl Adapter {
    pub fn parse(s: &str) -> Result<Adapter, String> {
        match s {
            "lphc" => Ok(Adapter::Lphc),
            "hec" | "generic-hec" => Ok(Adapter::Hec),
            "elasticsearch" => Ok(Adapter::Elasticsearch),
            "syslog" => Ok(Adapter::Syslog),
            _ => Err(format!(
                "{s:?} is not an adapter (lphc, hec, elasticsearch or syslog; generic-hec is hec)"
            )),
        }
    }

    pub fn is_http(self) -> bool {
        self != Adapter::Syslog
    }

    pub fn name(self) -> &'static str {
        match self {
            Adapter::Lphc => "lphc",
            Adapter::Hec => "hec",
            Adapter::Elasticsearch => "elasticsearch",
            Adapter::Syslog => "syslog",
        }
    }
}

/// How syslog travels (the syslog adapter only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Udp,
    Tls,
}

impl Transport {
    pub fn parse(s: &str) -> Result<Transport, String> {
        match s {
            "tcp" => Ok(Transport::Tcp),
            "udp" => Ok(Transport::Udp),
            "tls" => Ok(Transport::Tls),
            _ => Err(format!("{s:?} is not a syslog transport (tcp, udp or tls)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
            Transport::Tls => "tls",
        }
    }
}

/// What the carrier adds to events, as the adapter's framing code writes it.
#[derive(Clone, Debug, Serialize)]
pub struct Carrier {
    /// Body bytes the carrier adds per event: envelope, separators, syslog header and octet
    /// count; a request's own body bytes (`[`, `]`) shared over its events are included.
    pub event_overhead: f64,
    /// The HTTP request head (request line and headers) per request, but for the digits of
    /// its Content-Length, which follow the body (`head_bytes`); 0 for syslog.
    pub head: f64,
    /// What the overhead is, in a few words.
    pub what: String,
    /// One event as the carrier frames it, `…` standing for the event.
    pub sample: String,
    pub from: Origin,
    /// The RFC 5424 header a syslog message of this event carries (0 for packs whose events
    /// are whole syslog messages already), for the datagram checks whatever the adapter.
    pub syslog_header: f64,
}

/// A run's own measurement of the bytes it sent.
#[derive(Clone, Debug, Serialize)]
pub struct MeasuredBody {
    /// Body bytes per event as sent (the request head's share taken off): after gzip when
    /// `compressed`.
    pub bytes: f64,
    pub compressed: bool,
    pub how: String,
}

/// Every input of the arithmetic, resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub eps: Input<f64>,
    /// Mean event bytes as rendered (licence bytes).
    pub event_bytes: Input<f64>,
    /// The largest event seen when sizes were measured.
    pub event_bytes_max: Option<f64>,
    pub days: Input<u32>,
    pub batch: Input<u64>,
    /// The engine's `target.batch.max_bytes`.
    pub batch_bytes: Input<u64>,
    pub adapter: Adapter,
    pub transport: Option<Transport>,
    pub carrier: Carrier,
    /// Compression ratio of request bodies (`R` means R:1); 1 is none.
    pub compression: Input<f64>,
    pub measured_body: Option<MeasuredBody>,
    /// Per-request latency for Little's law.
    pub latency_ms: Input<f64>,
    /// Events per second one core renders and frames (gzip included when on).
    pub rate_per_core: Option<Input<f64>>,
    /// Cores on this machine (threads suggested beyond it are noted).
    pub cores: usize,
    /// Notes the inputs bring (assumptions, what a measurement included); serialised with
    /// the sizing's own.
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// A figure and how it was computed.
#[derive(Clone, Debug, Serialize)]
pub struct Fig {
    pub value: f64,
    pub how: String,
}

fn fig(value: f64, how: String) -> Fig {
    Fig { value, how }
}

/// A rate of bytes, with its bits.
#[derive(Clone, Debug, Serialize)]
pub struct Rate {
    pub bytes_per_s: f64,
    pub bits_per_s: f64,
    pub how: String,
}

fn rate(bytes_per_s: f64, how: String) -> Rate {
    Rate {
        bytes_per_s,
        bits_per_s: bytes_per_s * 8.0,
        how,
    }
}

/// A volume in bytes with its decimal and binary forms.
#[derive(Clone, Debug, Serialize)]
pub struct Volume {
    pub bytes: f64,
    /// 10^9 B (per day) or 10^12 B (retention).
    pub decimal: f64,
    /// 2^30 B (per day) or 2^40 B (retention).
    pub binary: f64,
    /// `GB`/`GiB` or `TB`/`TiB`.
    pub unit: &'static str,
    pub binary_unit: &'static str,
    pub how: String,
}

fn per_day(bytes: f64, how: String) -> Volume {
    Volume {
        bytes,
        decimal: bytes / 1e9,
        binary: bytes / GIB,
        unit: "GB",
        binary_unit: "GiB",
        how,
    }
}

fn retention(bytes: f64, how: String) -> Volume {
    Volume {
        bytes,
        decimal: bytes / 1e12,
        binary: bytes / TIB,
        unit: "TB",
        binary_unit: "TiB",
        how,
    }
}

const GIB: f64 = (1u64 << 30) as f64;
const TIB: f64 = (1u64 << 40) as f64;
const DAY_S: f64 = 86_400.0;

#[derive(Clone, Debug, Serialize)]
pub struct PerEvent {
    /// The event as rendered: what a licence counts.
    pub event: Fig,
    /// Envelope, separators, syslog header and framing.
    pub carrier: Fig,
    /// The HTTP request head's share (0 for syslog).
    pub request_share: Fig,
    /// On the wire before compression.
    pub wire: Fig,
    /// On the wire after compression (absent when there is none).
    pub compressed: Option<Fig>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Bandwidth {
    pub raw: Rate,
    pub wire: Rate,
    pub compressed: Option<Rate>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Volumes {
    pub events_per_day: Fig,
    /// Licence volume: raw event bytes a day.
    pub licence_per_day: Volume,
    pub licence_retention: Volume,
    /// What crosses the network a day (after compression when there is any).
    pub wire_per_day: Volume,
}

/// Requests (HTTP), or messages (syslog: one per event).
#[derive(Clone, Debug, Serialize)]
pub struct Requests {
    /// `http requests`, `tcp messages` or `udp datagrams`.
    pub kind: &'static str,
    pub per_s: Fig,
    /// Events per request as the engine would send them (the batch, unless its byte limit
    /// cuts requests shorter).
    pub events_per_request: Fig,
    /// A request's body before compression (syslog: one message, framing included).
    pub body_bytes: Fig,
    /// A request on the wire: head and body after compression.
    pub wire_bytes: Fig,
}

/// A limit and whether the plan stays within it.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    /// What is compared, in a few words.
    pub what: String,
    /// The figure compared: the largest when known, else the mean.
    pub value: f64,
    pub limit: f64,
    pub ok: bool,
    /// The limit and its source.
    pub how: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Suggested {
    pub connections: Fig,
    /// Absent without a measured render rate.
    pub threads: Option<Fig>,
}

/// The result: serialised as JSON (`SIZE_SCHEMA`) or written by `text`.
#[derive(Clone, Debug, Serialize)]
pub struct Sizing {
    pub schema: &'static str,
    pub adapter: Adapter,
    pub transport: Option<Transport>,
    pub inputs: Plan,
    pub per_event: PerEvent,
    pub bandwidth: Bandwidth,
    pub volume: Volumes,
    pub requests: Requests,
    pub checks: Vec<Check>,
    pub suggested: Suggested,
    pub notes: Vec<String>,
}

/// `n` with thousands separators and up to `dp` decimals (trailing zeros dropped).
pub fn num(v: f64, dp: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let s = format!("{:.*}", dp, v.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i.to_string(), f.trim_end_matches('0').to_string()),
        None => (s.clone(), String::new()),
    };
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(&frac);
    }
    if v < 0.0 && out.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.insert(0, '-');
    }
    out
}

/// `v` to four significant digits (whole numbers from 1,000 up), with separators.
pub fn sig(v: f64) -> String {
    let a = v.abs();
    let dp = if a == 0.0 || a >= 1000.0 {
        0
    } else {
        (3 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    num(v, dp)
}

/// Bits per second in the largest decimal unit under which the figure is at least 1.
pub fn bits(bps: f64) -> String {
    let (v, u) = if bps >= 1e9 {
        (bps / 1e9, "Gbit/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbit/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kbit/s")
    } else {
        (bps, "bit/s")
    };
    format!("{} {u}", sig(v))
}

/// Bytes as `1,234 B`, with a decimal multiple beside large ones: `5,000,000 B (5 MB)`.
pub fn bytes(b: f64) -> String {
    let whole = if b.fract() == 0.0 || b >= 1e4 {
        num(b, 0)
    } else {
        num(b, 1)
    };
    let (v, u) = if b >= 1e12 {
        (b / 1e12, "TB")
    } else if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else if b >= 1e4 {
        (b / 1e3, "KB")
    } else {
        return format!("{whole} B");
    };
    format!("{whole} B ({} {u})", sig(v))
}

/// The digits of `n` (a Content-Length, an octet count).
pub fn digits(n: f64) -> f64 {
    let n = n.round().max(1.0) as u64;
    f64::from(n.ilog10() + 1)
}

/// A request head's bytes for a body of `content` bytes.
pub fn head_bytes(c: &Carrier, content: f64) -> f64 {
    if c.head > 0.0 {
        c.head + digits(content)
    } else {
        0.0
    }
}

/// The figures of `p`.
pub fn compute(p: &Plan) -> Sizing {
    let eps = p.eps.value;
    let ev = p.event_bytes.value;
    let http = p.adapter.is_http();
    let ratio = p.compression.value.max(1.0);
    // Body bytes per event before compression: the model, or a run's measurement.
    let body = match &p.measured_body {
        Some(m) if !m.compressed => m.bytes,
        _ => ev + p.carrier.event_overhead,
    };
    // Threads first: the engine splits the schedule between them, which sets how full its
    // requests are at low rates.
    let threads = p.rate_per_core.as_ref().map(|r| {
        let per = r.value * THREAD_UTILISATION;
        let n = (eps / per).ceil().max(1.0);
        let beyond = if n as usize > p.cores {
            format!(
                "; more than this machine's {} cores: run shards on several machines",
                p.cores
            )
        } else {
            String::new()
        };
        fig(
            n,
            format!(
                "{} eps ÷ ({} eps per core × {THREAD_UTILISATION} utilisation, leaving room for I/O and peaks), rounded up{beyond}",
                num(eps, 2),
                num(r.value, 0)
            ),
        )
    });
    let nthreads = threads.as_ref().map_or(1.0, |t| t.value);
    // The request the engine sends: `batch` events, unless its byte limit cuts it shorter
    // (it stops a batch before the body would pass max_bytes − 2), or the rate fills less
    // than a batch in LINGER (a batch leaves full, or 1 s after its first event is due).
    let batch = p.batch.value.max(1);
    let requested_body = batch as f64 * body;
    let cut = if http && requested_body + 2.0 > p.batch_bytes.value as f64 {
        (((p.batch_bytes.value as f64 - 2.0) / body).floor() as u64).clamp(1, batch)
    } else {
        batch
    };
    let linger_s = crate::engine::worker::LINGER.as_secs_f64();
    let filled = (eps / nthreads * linger_s).max(1.0);
    let per_request = if http { (cut as f64).min(filled) } else { 1.0 };
    let body_wire = match &p.measured_body {
        Some(m) if m.compressed => m.bytes,
        _ => body / ratio,
    };
    let head = if http {
        head_bytes(&p.carrier, per_request * body_wire)
    } else {
        0.0
    };
    let head_share = head / per_request.max(1.0);
    let compressed = ratio > 1.0 || p.measured_body.as_ref().is_some_and(|m| m.compressed);
    let wire = body + head_share;
    let wire_c = body_wire + head_share;

    let carrier_how = match &p.measured_body {
        Some(m) if !m.compressed => format!(
            "measured: {} B per event on the wire less the {} B event ({})",
            num(m.bytes, 1),
            num(ev, 1),
            m.how
        ),
        _ => p.carrier.what.clone(),
    };
    let per_event = PerEvent {
        event: fig(ev, p.event_bytes.how.clone()),
        carrier: fig(body - ev, carrier_how),
        request_share: fig(
            head_share,
            if http {
                format!(
                    "HTTP request head {} B per request ÷ {} events",
                    num(head, 0),
                    num(per_request, 0)
                )
            } else {
                "syslog has no requests".into()
            },
        ),
        wire: fig(
            wire,
            if http {
                format!(
                    "{} + {} + {}",
                    num(ev, 1),
                    num(body - ev, 1),
                    num(head_share, 2)
                )
            } else {
                format!("{} + {}", num(ev, 1), num(body - ev, 1))
            },
        ),
        compressed: compressed.then(|| {
            fig(
                wire_c,
                match &p.measured_body {
                    Some(m) if m.compressed => format!(
                        "measured: {} B body per event after the run's gzip ({}) + {} head",
                        num(m.bytes, 1),
                        m.how,
                        num(head_share, 2)
                    ),
                    _ => format!(
                        "{} B body ÷ {} + {} B head share (heads are not compressed)",
                        num(body, 1),
                        sig(ratio),
                        num(head_share, 2)
                    ),
                },
            )
        }),
    };

    let e = num(eps, 2);
    let bandwidth = Bandwidth {
        raw: rate(eps * ev, format!("{e} eps × {} B", num(ev, 1))),
        wire: rate(
            eps * wire,
            format!(
                "{e} eps × {} B ({})",
                num(wire, 1),
                if http {
                    "event + carrier + request head share"
                } else {
                    "event + carrier"
                }
            ),
        ),
        compressed: compressed.then(|| {
            rate(
                eps * wire_c,
                format!("{e} eps × {} B after compression", num(wire_c, 1)),
            )
        }),
    };

    let days = f64::from(p.days.value);
    let raw_day = eps * ev * DAY_S;
    let wire_day = eps * wire_c * DAY_S;
    let volume = Volumes {
        events_per_day: fig(eps * DAY_S, format!("{e} eps × 86,400 s")),
        licence_per_day: per_day(
            raw_day,
            format!(
                "licence volume: {} B/s of raw events × 86,400 s (licences count event bytes as indexed, not envelopes or framing)",
                num(eps * ev, 0)
            ),
        ),
        licence_retention: retention(
            raw_day * days,
            format!(
                "{} GB a day × {} days of raw events (index and compression on disk vary by SIEM)",
                sig(raw_day / 1e9),
                p.days.value
            ),
        ),
        wire_per_day: per_day(
            wire_day,
            format!(
                "{} B/s on the wire{} × 86,400 s",
                num(eps * wire_c, 0),
                if compressed { " after compression" } else { "" }
            ),
        ),
    };

    let requests = if http {
        let cut_note = if per_request < cut as f64 {
            format!(
                "fewer than the batch: {} eps over {} thread(s) fill {} events in the {} s a batch may wait for more",
                num(eps, 2),
                num(nthreads, 0),
                num(filled, 1),
                num(linger_s, 0)
            )
        } else if cut < batch {
            format!(
                "cut from the batch of {}: {} B per request would pass the byte limit {}",
                num(batch as f64, 0),
                num(requested_body, 0),
                num(p.batch_bytes.value as f64, 0)
            )
        } else {
            "the batch".into()
        };
        Requests {
            kind: "http requests",
            per_s: fig(
                eps / per_request,
                format!("{e} eps ÷ {} events per request", num(per_request, 0)),
            ),
            events_per_request: fig(per_request, cut_note),
            body_bytes: fig(
                per_request * body,
                format!("{} events × {} B", num(per_request, 0), num(body, 1)),
            ),
            wire_bytes: fig(
                per_request * body_wire + head,
                format!(
                    "{} B head + {} events × {} B{}",
                    num(head, 0),
                    num(per_request, 0),
                    num(body_wire, 1),
                    if compressed { " compressed" } else { "" }
                ),
            ),
        }
    } else {
        let udp = p.transport == Some(Transport::Udp);
        Requests {
            kind: if udp { "udp datagrams" } else { "tcp messages" },
            per_s: fig(
                eps,
                if udp {
                    "one datagram per event".into()
                } else {
                    "one message per event on a stream: no requests, no responses".into()
                },
            ),
            events_per_request: fig(1.0, "one event per message".into()),
            body_bytes: fig(
                body,
                if udp {
                    "the message (a datagram needs no framing)".into()
                } else {
                    "the message with its octet count".into()
                },
            ),
            wire_bytes: fig(body, "syslog is not compressed".into()),
        }
    };

    let checks = checks(p, requested_body, batch, cut);

    let floor = threads.as_ref().map_or(1.0, |t| t.value);
    let connections = if http {
        let w = p.latency_ms.value / 1000.0;
        let rps = eps / per_request;
        let in_flight = rps * w;
        let n = (in_flight * CONNECTION_HEADROOM).ceil().max(floor).max(1.0);
        fig(
            n,
            format!(
                "Little's law: {} requests/s × {} s per request ({}) = {} in flight; × {CONNECTION_HEADROOM} headroom, rounded up, at least one per thread",
                num(rps, 2),
                num(w, 4),
                match p.latency_ms.from {
                    Origin::Given => "given",
                    Origin::Default => "assumed",
                    Origin::Measured => "measured",
                },
                num(in_flight, 2)
            ),
        )
    } else {
        fig(
            floor,
            "one per worker thread: syslog waits for no responses, so a stream carries whatever one thread writes".into(),
        )
    };

    let mut notes = p.notes.clone();
    notes.push(
        "bits/s count payload bytes; TCP/IP headers add about 3% on a 1,500-byte MTU, TLS records about 0.2%".into(),
    );
    Sizing {
        schema: SIZE_SCHEMA,
        adapter: p.adapter,
        transport: p.transport,
        inputs: p.clone(),
        per_event,
        bandwidth,
        volume,
        requests,
        checks,
        suggested: Suggested {
            connections,
            threads,
        },
        notes,
    }
}

fn check(name: &'static str, what: String, value: f64, limit: u64, how: &str) -> Check {
    Check {
        name,
        what,
        value,
        limit: limit as f64,
        ok: value <= limit as f64,
        how: how.to_string(),
    }
}

fn checks(p: &Plan, requested_body: f64, batch: u64, cut: u64) -> Vec<Check> {
    let mut v = Vec::new();
    let request = format!("a request of {} events", num(batch as f64, 0));
    if p.adapter == Adapter::Hec {
        v.push(check(
            "hec_max_content_length",
            request.clone(),
            requested_body,
            HEC_MAX_CONTENT_LENGTH,
            "Splunk HEC limits.conf [http_input] max_content_length, default since 6.5 (checked decompressed; over it: 413)",
        ));
        v.push(check(
            "hec_max_content_length_before_6_5",
            request.clone(),
            requested_body,
            HEC_MAX_CONTENT_LENGTH_OLD,
            "the same setting's default before Splunk 6.5, which older HEC clients size batches for",
        ));
    }
    if p.adapter == Adapter::Elasticsearch {
        v.push(check(
            "es_max_content_length",
            request.clone(),
            requested_body,
            ES_MAX_CONTENT_LENGTH,
            "Elasticsearch and OpenSearch http.max_content_length, default 100mb (checked decompressed; over it: 413)",
        ));
    }
    if p.adapter.is_http() {
        let mut c = check(
            "engine_batch_bytes",
            request,
            requested_body + 2.0,
            p.batch_bytes.value,
            "target.batch.max_bytes (the engine keeps a body 2 B under it)",
        );
        if !c.ok {
            c.how = format!(
                "{}: it cuts requests at {} events",
                c.how,
                num(cut as f64, 0)
            );
        }
        v.push(c);
    }
    // A syslog message of this event: the header and the event (no framing in a datagram).
    let header = p.carrier.syslog_header;
    let largest = p.event_bytes_max.unwrap_or(p.event_bytes.value) + header;
    let which = match (p.event_bytes_max.is_some(), p.transport) {
        (true, Some(Transport::Udp)) => "the largest event's datagram",
        (false, Some(Transport::Udp)) => "an event's datagram",
        (true, _) => "the largest event as a syslog datagram",
        (false, _) => "an event as a syslog datagram",
    };
    let what = || {
        if header > 0.0 {
            format!("{which} (RFC 5424 header {} B + event)", num(header, 0))
        } else {
            which.to_string()
        }
    };
    if p.adapter == Adapter::Syslog {
        // The limit is on the message: octet counting's `LEN SP` is outside it.
        v.push(check(
            "syslog_max_message_bytes",
            what(),
            largest,
            crate::config::schema::DEFAULT_SYSLOG_MESSAGE_BYTES,
            "syslog.max_message_bytes default: the adapter leaves larger messages out and counts them (RFC 5425 receivers MUST take 2,048 B, SHOULD 8,192 B)",
        ));
    }
    v.push(check(
        "udp_max_payload_ipv4",
        what(),
        largest,
        UDP_MAX_PAYLOAD_IPV4,
        "the largest IPv4 UDP payload: 65,535 − 20 (IP) − 8 (UDP)",
    ));
    v.push(check(
        "udp_unfragmented_1500_mtu",
        what(),
        largest,
        UDP_UNFRAGMENTED_1500,
        "a 1,500-byte MTU less IP and UDP headers: larger datagrams are fragmented, and a lost fragment loses the message",
    ));
    v.push(check(
        "rfc5426_must_480",
        what(),
        largest,
        RFC5426_MUST_IPV4,
        "RFC 5426 §3.2: every IPv4 syslog receiver MUST take 480 octets (IPv6: 1,180)",
    ));
    v.push(check(
        "rfc5426_should_2048",
        what(),
        largest,
        RFC5426_SHOULD,
        "RFC 5426 §3.2: all syslog receivers SHOULD take 2,048 octets",
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan with a carrier of `overhead` B per event and a `head` B request head, no
    /// measured rate, batch 500, 90 days, 50 ms.
    pub(crate) fn plan(eps: f64, ev: f64, overhead: f64, head: f64) -> Plan {
        Plan {
            eps: Input::new(eps, Origin::Given, "--eps"),
            event_bytes: Input::new(ev, Origin::Given, "--event-bytes"),
            event_bytes_max: None,
            days: Input::new(90, Origin::Default, "default"),
            batch: Input::new(500, Origin::Default, "default"),
            batch_bytes: Input::new(1_000_000, Origin::Default, "default"),
            adapter: Adapter::Hec,
            transport: None,
            carrier: Carrier {
                event_overhead: overhead,
                head,
                what: "test".into(),
                sample: "…".into(),
                from: Origin::Measured,
                syslog_header: 60.0,
            },
            compression: Input::new(1.0, Origin::Default, "none"),
            measured_body: None,
            latency_ms: Input::new(50.0, Origin::Default, "assumed"),
            rate_per_core: None,
            cores: 8,
            notes: vec![],
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn worked_example_10k_eps_500_bytes() {
        // 10,000 eps × 500 B = 5,000,000 B/s = 40 Mbit/s; × 86,400 = 432,000,000,000 B =
        // 432 GB a day = 402.33 GiB; × 90 days = 38.88 TB = 35.36 TiB.
        // A head of 194 B + 6 digits (a 300,000 B body) = 200 B.
        let s = compute(&plan(10_000.0, 500.0, 100.0, 194.0));
        assert!(close(s.bandwidth.raw.bytes_per_s, 5_000_000.0));
        assert!(close(s.bandwidth.raw.bits_per_s, 40_000_000.0));
        assert!(close(s.volume.licence_per_day.decimal, 432.0));
        assert!(close(
            s.volume.licence_per_day.binary,
            432e9 / 1_073_741_824.0
        ));
        assert!(close(s.volume.licence_retention.decimal, 38.88));
        assert!(close(s.volume.events_per_day.value, 864_000_000.0));
        // Wire: 500 + 100 + 200/500 = 600.4 B; × 10,000 = 6,004,000 B/s.
        assert!(close(s.per_event.wire.value, 600.4));
        assert!(close(s.bandwidth.wire.bytes_per_s, 6_004_000.0));
        assert!(s.bandwidth.compressed.is_none());
        // 20 requests/s of 500 × 600 = 300,000 B (+200 head on the wire).
        assert!(close(s.requests.per_s.value, 20.0));
        assert!(close(s.requests.body_bytes.value, 300_000.0));
        assert!(close(s.requests.wire_bytes.value, 300_200.0));
        // Little: 20 × 0.05 = 1 in flight, × 2 = 2.
        assert!(close(s.suggested.connections.value, 2.0));
        assert!(s.suggested.threads.is_none());
        assert!(
            s.checks
                .iter()
                .all(|c| c.ok || c.name.starts_with("rfc5426_must"))
        );
    }

    #[test]
    fn compression_leaves_heads_alone() {
        // 245 B + 5 digits (a 50,000 B compressed body) = 250 B.
        let mut p = plan(1_000.0, 900.0, 100.0, 245.0);
        p.compression = Input::new(10.0, Origin::Given, "--compression 10");
        let s = compute(&p);
        // Body 1,000 B ÷ 10 = 100 B, + 250/500 = 0.5 B of head: 100.5 B per event.
        let c = s.per_event.compressed.as_ref().unwrap();
        assert!(close(c.value, 100.5));
        assert!(close(
            s.bandwidth.compressed.as_ref().unwrap().bytes_per_s,
            100_500.0
        ));
        // The licence counts raw bytes whatever the wire: 900 × 1,000 × 86,400.
        assert!(close(s.volume.licence_per_day.bytes, 77_760_000_000.0));
        assert!(close(s.volume.wire_per_day.bytes, 100_500.0 * 86_400.0));
        // A request: 250 + 500 × 100.
        assert!(close(s.requests.wire_bytes.value, 50_250.0));
    }

    #[test]
    fn batches_over_the_engine_limit_are_cut() {
        let mut p = plan(100_000.0, 2_900.0, 100.0, 200.0);
        p.batch = Input::new(1_000, Origin::Given, "--batch");
        let s = compute(&p);
        // 1,000 × 3,000 B = 3,000,000 B > 1,000,000: (1,000,000 − 2) / 3,000 = 333 events.
        assert!(close(s.requests.events_per_request.value, 333.0));
        assert!(close(s.requests.per_s.value, 100_000.0 / 333.0));
        let engine = s
            .checks
            .iter()
            .find(|c| c.name == "engine_batch_bytes")
            .unwrap();
        assert!(!engine.ok && engine.how.contains("at 333 events"));
        let old = s
            .checks
            .iter()
            .find(|c| c.name == "hec_max_content_length_before_6_5")
            .unwrap();
        assert!(!old.ok && close(old.value, 3_000_000.0));
        let hec = s
            .checks
            .iter()
            .find(|c| c.name == "hec_max_content_length")
            .unwrap();
        assert!(hec.ok);
    }

    #[test]
    fn threads_from_the_rate_with_headroom_and_connections_at_least_threads() {
        let mut p = plan(300_000.0, 500.0, 0.0, 0.0);
        p.rate_per_core = Some(Input::new(100_000.0, Origin::Measured, "m"));
        p.latency_ms = Input::new(1.0, Origin::Given, "--latency-ms");
        let s = compute(&p);
        // 300,000 ÷ (100,000 × 0.5) = 6 threads; 600 req/s × 1 ms = 0.6 → 2, but ≥ 6.
        assert!(close(s.suggested.threads.as_ref().unwrap().value, 6.0));
        assert!(close(s.suggested.connections.value, 6.0));
        p.cores = 4;
        let s = compute(&p);
        assert!(s.suggested.threads.unwrap().how.contains("4 cores"));
    }

    #[test]
    fn syslog_udp_datagram_checks() {
        let mut p = plan(5_000.0, 1_500.0, 60.0, 0.0);
        p.adapter = Adapter::Syslog;
        p.transport = Some(Transport::Udp);
        p.event_bytes_max = Some(9_000.0);
        let s = compute(&p);
        assert_eq!(s.requests.kind, "udp datagrams");
        assert!(close(s.requests.per_s.value, 5_000.0));
        assert!(close(s.per_event.wire.value, 1_560.0));
        let by = |n: &str| s.checks.iter().find(|c| c.name == n).unwrap().clone();
        // The largest: 9,000 + 60 = 9,060 B.
        assert!(by("udp_max_payload_ipv4").ok);
        assert!(close(by("udp_max_payload_ipv4").value, 9_060.0));
        assert!(!by("udp_unfragmented_1500_mtu").ok);
        assert!(!by("syslog_max_message_bytes").ok);
        assert!(!by("rfc5426_should_2048").ok);
        assert!(s.checks.iter().all(|c| !c.name.starts_with("hec")));
        // Connections: one per thread (1 without a rate).
        assert!(close(s.suggested.connections.value, 1.0));
    }

    #[test]
    fn measured_bodies_replace_the_model() {
        // 194 B + 6 digits (500 × 950 = 475,000 B; 500 × 120 = 60,000 B is 5 digits: 199).
        let mut p = plan(2_000.0, 800.0, 100.0, 194.0);
        p.measured_body = Some(MeasuredBody {
            bytes: 120.0,
            compressed: true,
            how: "report".into(),
        });
        let s = compute(&p);
        // The limit checks still use the modelled 900 B body; the wire uses 120 + 199/500.
        assert!(close(s.requests.body_bytes.value, 450_000.0));
        assert!(close(s.per_event.compressed.unwrap().value, 120.398));
        p.measured_body = Some(MeasuredBody {
            bytes: 950.0,
            compressed: false,
            how: "report".into(),
        });
        let s = compute(&p);
        assert!(close(s.per_event.carrier.value, 150.0));
        assert!(close(s.per_event.wire.value, 950.4));
        assert_eq!(digits(475_000.0), 6.0);
        assert_eq!(digits(0.0), 1.0);
    }

    #[test]
    fn number_formats() {
        assert_eq!(num(5_000_000.0, 0), "5,000,000");
        assert_eq!(num(1234.5, 2), "1,234.5");
        assert_eq!(num(0.0, 2), "0");
        assert_eq!(num(999.999, 2), "1,000");
        assert_eq!(sig(432.0), "432");
        assert_eq!(sig(38.88), "38.88");
        assert_eq!(sig(402.331), "402.3");
        assert_eq!(sig(0.0432), "0.0432");
        assert_eq!(sig(12_345.6), "12,346");
        assert_eq!(bits(40e6), "40 Mbit/s");
        assert_eq!(bits(1.25e9), "1.25 Gbit/s");
        assert_eq!(bits(800.0), "800 bit/s");
        assert_eq!(bytes(5e6), "5,000,000 B (5 MB)");
        assert_eq!(bytes(600.4), "600.4 B");
        assert_eq!(bytes(600.0), "600 B");
        assert_eq!(bytes(60.4), "60.4 B");
    }
}
