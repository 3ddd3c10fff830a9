//! `--report FILE`: what a saved run report (`ingestbench.report/2`, from `run --output json`
//! or `observability.report`; `/1` reads the same) measured, for sizing from it: the rate
//! achieved, the bytes sent per event, the batch, the adapter and transport, the threads, the
//! processing time per thread and the service latency.
//!
//! Bytes per event count first attempts only: `bytes_sent` covers every attempt (heads and
//! bodies, after gzip), `batches_sent` every attempt and `batches_retried` the attempts after
//! the first, so one attempt averages `bytes_sent / batches_sent` and the events went out in
//! `batches_sent − batches_retried` first attempts.

use serde_json::Value;

use super::carrier::HttpSetup;
use super::{Adapter, Transport};
use crate::config::schema::{AuthScheme, Hec, HecEndpoint, HecFraming};

/// What a report says about its run.
#[derive(Clone, Debug)]
pub struct RunFacts {
    pub run_id: String,
    pub adapter: Adapter,
    /// Syslog only.
    pub transport: Option<Transport>,
    pub source: String,
    pub achieved_eps: f64,
    pub threads: u64,
    pub connections: u64,
    pub batch_max_events: u64,
    pub batch_max_bytes: u64,
    /// Events per first attempt, as sent.
    pub events_per_request: f64,
    /// Bytes on the wire per event: head share and body, after gzip when `gzip`.
    pub wire_per_event: f64,
    pub gzip: bool,
    /// Events rendered and framed per second of a worker thread's processing time.
    pub processing_eps: Option<f64>,
    /// Mean service latency (write to response) of accepted batches, ms.
    pub service_ms: Option<f64>,
    /// Events the run rendered (indices 0..events_sent).
    pub events_sent: u64,
    /// The run's seed, entity pools and accounting (`config`), to render its events again.
    pub seed: Option<u64>,
    pub entities: Vec<(String, u64)>,
    pub accounting: bool,
    /// What the run's HTTP framer was built with (lphc, hec).
    pub http: Option<HttpSetup>,
}

fn field<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

fn number(v: &Value, path: &str) -> Result<f64, String> {
    field(v, path)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("it has no number at {path}"))
}

fn opt_text(v: &Value, path: &str) -> Option<String> {
    field(v, path).and_then(Value::as_str).map(str::to_string)
}

/// The `Host:`, path, auth and `hec` block the run's framer had: from the url (the built-in
/// sink's address for `builtin`) and the config.
fn http_setup(v: &Value, url: &str) -> HttpSetup {
    let (host, path) = if url == "builtin" {
        (
            opt_text(v, "target.address").unwrap_or_else(|| "127.0.0.1:8088".into()),
            "/ingest".to_string(),
        )
    } else {
        match url::Url::parse(url) {
            Ok(u) => {
                let mut path = u.path().to_string();
                if let Some(q) = u.query() {
                    path.push('?');
                    path.push_str(q);
                }
                (
                    format!(
                        "{}:{}",
                        u.host_str().unwrap_or(""),
                        u.port_or_known_default().unwrap_or(80)
                    ),
                    path,
                )
            }
            Err(_) => (url.to_string(), "/".to_string()),
        }
    };
    let auth = field(v, "config.target.auth.scheme")
        .and_then(Value::as_str)
        .and_then(|s| AuthScheme::parse(s).ok());
    let hec = field(v, "config.target.hec")
        .filter(|h| h.is_object())
        .map(|_| Hec {
            endpoint: field(v, "config.target.hec.endpoint")
                .and_then(Value::as_str)
                .and_then(|e| HecEndpoint::parse(e).ok())
                .unwrap_or(HecEndpoint::Event),
            index: opt_text(v, "config.target.hec.index"),
            sourcetype: opt_text(v, "config.target.hec.sourcetype"),
            source: opt_text(v, "config.target.hec.source"),
            host: opt_text(v, "config.target.hec.host"),
            channel: opt_text(v, "config.target.hec.channel"),
            ack: field(v, "config.target.hec.ack").and_then(Value::as_bool) == Some(true),
            framing: field(v, "config.target.hec.framing")
                .and_then(Value::as_str)
                .and_then(|f| HecFraming::parse(f).ok()),
        });
    HttpSetup {
        host,
        path,
        auth,
        username: opt_text(v, "config.target.auth.username"),
        header: opt_text(v, "config.target.auth.header"),
        hec,
    }
}

fn text<'a>(v: &'a Value, path: &str) -> Result<&'a str, String> {
    field(v, path)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("it has no text at {path}"))
}

/// Reads the report in `text` (named `file` in messages).
pub fn parse(file: &str, text_in: &str) -> Result<RunFacts, String> {
    let bad = |why: String| format!("--report {file}: {why}");
    let v: Value =
        serde_json::from_str(text_in).map_err(|e| bad(format!("not a JSON run report ({e})")))?;
    let schema = v.get("schema").and_then(Value::as_str).unwrap_or("");
    if !matches!(schema, "ingestbench.report/1" | "ingestbench.report/2") {
        return Err(bad(format!(
            "schema {schema:?} is not ingestbench.report/2 (save one with `ingestbench run --output json` or observability.report)"
        )));
    }
    if v.get("by_source")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        return Err(bad(
            "it is a run of a mix of sources: sizing works from a run of one source (its event size and cost)".into(),
        ));
    }
    let get = |path: &str| number(&v, path).map_err(&bad);
    let adapter = match text(&v, "target.adapter").map_err(&bad)? {
        "lphc" => Adapter::Lphc,
        "generic-hec" => Adapter::Hec,
        "elasticsearch" => Adapter::Elasticsearch,
        "syslog" => Adapter::Syslog,
        other => return Err(bad(format!("target.adapter {other:?} is not known here"))),
    };
    let url = field(&v, "config.target.url")
        .and_then(Value::as_str)
        .or_else(|| field(&v, "target.url").and_then(Value::as_str))
        .unwrap_or("");
    let transport = (adapter == Adapter::Syslog).then(|| {
        let configured = field(&v, "config.target.syslog.transport").and_then(Value::as_str);
        if url.starts_with("udp://") || (url == "builtin" && configured == Some("udp")) {
            Transport::Udp
        } else if url.starts_with("tls://") {
            Transport::Tls
        } else {
            Transport::Tcp
        }
    });
    let gzip = field(&v, "config.target.compression").and_then(Value::as_str) == Some("gzip");

    let achieved_eps = get("summary.achieved_eps")?;
    let events_sent = get("summary.events_sent")?;
    let oversize = number(&v, "summary.oversize_events").unwrap_or(0.0);
    let batches_sent = get("summary.batches_sent")?;
    let retried = number(&v, "summary.batches_retried").unwrap_or(0.0);
    let bytes_sent = get("summary.bytes_sent")?;
    let framed = events_sent - oversize;
    let first = batches_sent - retried;
    if !(achieved_eps > 0.0 && framed > 0.0 && first > 0.0 && bytes_sent > 0.0) {
        return Err(bad(
            "its run accepted no events, so it measured nothing to size from".into(),
        ));
    }
    let wire_per_event = bytes_sent / batches_sent * first / framed;
    let processing_ms = number(&v, "summary.processing_ms").unwrap_or(0.0);
    let service_ms = field(&v, "latency_ms.service.mean")
        .and_then(Value::as_f64)
        .filter(|m| *m > 0.0 && m.is_finite());
    Ok(RunFacts {
        run_id: text(&v, "run_id").unwrap_or("?").to_string(),
        adapter,
        transport,
        source: text(&v, "target.source").map_err(&bad)?.to_string(),
        achieved_eps,
        threads: get("threads")?.max(1.0) as u64,
        connections: get("connections")?.max(1.0) as u64,
        batch_max_events: get("batch_max_events")?.max(1.0) as u64,
        batch_max_bytes: get("batch_max_bytes")?.max(1.0) as u64,
        events_per_request: framed / first,
        wire_per_event,
        gzip,
        processing_eps: (processing_ms > 0.0).then(|| events_sent / (processing_ms / 1000.0)),
        service_ms,
        events_sent: events_sent as u64,
        seed: field(&v, "config.seed").and_then(Value::as_u64),
        entities: field(&v, "config.source.entities")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|e| Some((e.get(0)?.as_str()?.to_string(), e.get(1)?.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default(),
        accounting: field(&v, "config.source.accounting")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        http: adapter.is_http().then(|| http_setup(&v, url)),
    })
}

/// Reads the report at `path`.
pub fn read(path: &std::path::Path) -> Result<RunFacts, String> {
    let file = path.display().to_string();
    let text = crate::fsio::read_text(path, crate::report::de::MAX_REPORT_BYTES)
        .map_err(|e| format!("--report {e}"))?;
    parse(&file, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_golden_report() {
        let text = include_str!("../../tests/golden/report.json");
        let f = parse("golden", text).unwrap();
        assert_eq!(f.adapter, Adapter::Hec);
        assert_eq!(f.transport, None);
        assert_eq!(f.source, "aws.cloudtrail");
        assert_eq!((f.threads, f.connections, f.batch_max_events), (2, 4, 100));
        // 199 attempts, 7 of them retries: 192 first attempts of 19,200 events = 100 each.
        assert_eq!(f.events_per_request, 100.0);
        // 10,348,000 B / 199 attempts × 192 first attempts / 19,200 events = 520 B.
        assert!((f.wire_per_event - 10_348_000.0 / 199.0 * 192.0 / 19_200.0).abs() < 1e-9);
        assert!(
            (f.wire_per_event - 520.0).abs() < 0.01,
            "{}",
            f.wire_per_event
        );
        // 19,200 events in 850 ms of processing.
        assert!((f.processing_eps.unwrap() - 19_200.0 / 0.85).abs() < 1e-6);
        assert!((f.service_ms.unwrap() - 25.62013903743315).abs() < 1e-12);
        assert!(!f.gzip);
        let h = f.http.unwrap();
        assert_eq!(h.host, "127.0.0.1:8088");
        assert_eq!(h.auth, None);
        assert!(h.hec.is_none());
    }

    #[test]
    fn refusals_name_the_flag_and_the_problem() {
        for (text, want) in [
            ("not json", "not a JSON run report"),
            (
                "{\"schema\":\"ingestbench.status/1\"}",
                "is not ingestbench.report/2",
            ),
            (
                "{\"schema\":\"ingestbench.report/2\",\"target\":{\"adapter\":\"lphc\",\"source\":\"x\"}}",
                "no number at summary.achieved_eps",
            ),
        ] {
            let e = parse("r.json", text).unwrap_err();
            assert!(
                e.starts_with("--report r.json: ") && e.contains(want),
                "{e}"
            );
        }
        let mut v: Value =
            serde_json::from_str(include_str!("../../tests/golden/report.json")).unwrap();
        v["summary"]["achieved_eps"] = 0.0.into();
        let e = parse("r.json", &v.to_string()).unwrap_err();
        assert!(e.contains("accepted no events"), "{e}");
    }
}
