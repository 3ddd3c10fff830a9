//! `Answers` as a commented config file: the schema's sections in the order of the examples,
//! each written key with a comment saying what the choice means, and the knobs left at their
//! defaults as commented-out lines to uncomment. Only what applies is written (the same
//! predicates the questions use); only where a token lives, never a token.

use super::{Answers, StopBy, TokenFrom};
use crate::config::schema::{Adapter, AuthScheme, HecEndpoint, Profile, SyslogFraming};
use std::fmt::Write;

/// The column comments start at, as in examples/*.yaml (16 further for longer lines).
const COMMENT_COLUMN: usize = 32;

/// The config text for `a`; `file` is where it will be written (named in the header).
pub fn render(a: &Answers, file: &str) -> String {
    let mut y = Yaml::default();
    header(&mut y, a, file);
    y.line(0, "schema_version: \"1.0\"", "");
    y.line(0, &format!("name: {}", scalar(&a.name)), "");
    y.line(
        0,
        "# seed: 42",
        "fix every random choice: the same seed sends the same events",
    );
    y.blank();
    target(&mut y, a);
    y.blank();
    source(&mut y, a);
    y.blank();
    workload(&mut y, a);
    y.blank();
    slo(&mut y, a);
    y.out
}

#[derive(Default)]
struct Yaml {
    out: String,
}

impl Yaml {
    /// One line at `indent` levels, with `comment` after it when not empty.
    fn line(&mut self, indent: usize, text: &str, comment: &str) {
        let start = self.out.len();
        let _ = write!(self.out, "{:w$}{text}", "", w = indent * 2);
        if !comment.is_empty() {
            let width = self.out.len() - start;
            let column = [COMMENT_COLUMN, COMMENT_COLUMN + 16]
                .into_iter()
                .find(|c| *c > width)
                .unwrap_or(width + 1);
            let pad = column - width;
            let _ = write!(self.out, "{:pad$}# {comment}", "");
        }
        self.out.push('\n');
    }

    /// A knob left at its default: `# key: value` with its comment in the comment column.
    fn knob(&mut self, indent: usize, text: &str, comment: &str) {
        self.line(indent, &format!("# {text}"), comment);
    }

    fn comment(&mut self, indent: usize, text: &str) {
        self.line(indent, &format!("# {text}"), "");
    }

    fn blank(&mut self) {
        self.out.push('\n');
    }
}

/// A string as YAML: plain when it cannot be read as anything else, else double-quoted (a
/// JSON string is a valid YAML double-quoted scalar).
fn scalar(s: &str) -> String {
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | ':' | '@'))
        && !s.ends_with(':')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
    }
}

fn header(y: &mut Yaml, a: &Answers, file: &str) {
    let dest = if a.builtin() {
        "the built-in sink".to_string()
    } else {
        a.url.clone()
    };
    y.comment(0, &format!("{}: {} events to {dest},", a.name, a.source));
    y.comment(0, &format!("{}, {}.", rate_summary(a), stop_summary(a)));
    y.comment(
        0,
        "Written by `ingestbench init`; README.md (\"Config files\") explains every key.",
    );
    y.comment(0, &format!("  ingestbench validate --config {file}"));
    y.comment(0, &format!("  ingestbench run --config {file}"));
}

fn rate_summary(a: &Answers) -> String {
    match a.profile {
        Profile::Steady => format!("a steady {} events/s", a.eps),
        Profile::Ramp => format!(
            "a ramp from {} to {} events/s over {}",
            a.ramp_from, a.ramp_to, a.ramp_over
        ),
        Profile::Burst => format!(
            "bursts of {} events/s over {} events/s every {}",
            a.burst_high, a.burst_low, a.burst_period
        ),
        Profile::Steps => format!("{} steps of rate", a.steps.len()),
        Profile::Closed => "no rate: as fast as the target answers".into(),
    }
}

fn stop_summary(a: &Answers) -> String {
    match a.stop_by {
        StopBy::Time => format!("stopping after {}", a.stop_after),
        StopBy::Count => format!("stopping after {} events", a.stop_total),
    }
}

fn target(y: &mut Yaml, a: &Answers) {
    y.line(0, "target:", "");
    let what = match a.adapter {
        Adapter::Lphc => "JSON-batch HTTP collector",
        Adapter::GenericHec => "Splunk HTTP Event Collector",
        Adapter::Syslog => "syslog: one message per event",
        Adapter::Http => "plain HTTP requests: one event or a fixed body each",
        Adapter::Elasticsearch => {
            "Elasticsearch / OpenSearch _bulk: an action and a document per event"
        }
    };
    y.line(1, &format!("adapter: {}", a.adapter), what);
    let where_ = if a.builtin() {
        "the built-in sink, in process on 127.0.0.1"
    } else if a.syslog() {
        "the transport follows the scheme"
    } else {
        "where the events go"
    };
    y.line(1, &format!("url: {}", scalar(&a.url)), where_);
    if a.auth_applies() {
        auth(y, a);
    }
    if a.secure() {
        tls(y, a);
    }
    batch(y, a);
    if a.http() {
        let c = if a.compression == crate::config::schema::Compression::Gzip {
            "request bodies gzipped"
        } else {
            "or gzip"
        };
        y.line(1, &format!("compression: {}", a.compression), c);
    }
    if a.adapter == Adapter::Elasticsearch {
        y.comment(
            1,
            "elasticsearch: { index: ingestbench, op_type: create }  # defaults; pipeline: NAME adds ?pipeline=",
        );
    }
    if a.hec() {
        hec(y, a);
    }
    if a.syslog() {
        syslog(y, a);
    }
}

fn auth(y: &mut Yaml, a: &Answers) {
    let Some(scheme) = a.auth else {
        y.comment(1, "auth: the target takes requests without a token");
        return;
    };
    y.line(1, "auth:", "");
    let how = match scheme {
        AuthScheme::XApiKey => "X-API-Key: TOKEN",
        AuthScheme::Bearer => "Authorization: Bearer TOKEN",
        AuthScheme::Basic => "Authorization: Basic (username, TOKEN)",
        AuthScheme::Splunk => "Authorization: Splunk TOKEN",
        AuthScheme::Header => "the token as the value of the header below",
        AuthScheme::ApiKey => "Authorization: ApiKey TOKEN (the key's encoded form)",
    };
    y.line(2, &format!("scheme: {scheme}"), how);
    if let Some(u) = &a.auth_username {
        y.line(
            2,
            &format!("username: {}", scalar(u)),
            "the token is the password",
        );
    }
    if let Some(h) = &a.auth_header {
        y.line(2, &format!("header: {}", scalar(h)), "");
    }
    let (key, value, comment) = match a.token_from {
        TokenFrom::Env => (
            "token_env",
            a.token_env.as_deref(),
            "the token is read from this variable at run time",
        ),
        TokenFrom::File => (
            "token_file",
            a.token_file.as_deref(),
            "read at run time; must be mode 0600",
        ),
        TokenFrom::Secret => (
            "token_secret",
            a.token_secret.as_deref(),
            "`ingestbench secret set NAME` stores it",
        ),
    };
    if let Some(v) = value {
        y.line(2, &format!("{key}: {}", scalar(v)), comment);
    }
}

fn tls(y: &mut Yaml, a: &Answers) {
    y.line(1, "tls:", "");
    let v = if a.tls_verify {
        "the server's certificate is checked"
    } else {
        "NOT checked: anyone in the middle is trusted"
    };
    y.line(2, &format!("verify: {}", a.tls_verify), v);
    match &a.tls_ca_file {
        Some(f) => y.line(
            2,
            &format!("ca_file: {}", scalar(f)),
            "trusted besides the public web roots",
        ),
        None if a.tls_verify => y.knob(2, "ca_file: ca.pem", "a private CA to trust"),
        None => {}
    }
    match (&a.tls_client_cert, &a.tls_client_key) {
        (Some(c), Some(k)) => {
            y.line(2, &format!("client_cert: {}", scalar(c)), "mutual TLS");
            y.line(2, &format!("client_key: {}", scalar(k)), "");
        }
        _ => y.knob(2, "client_cert: client.pem", "mutual TLS, with client_key"),
    }
    y.knob(
        2,
        "server_name: host.example",
        "SNI and the name checked, when not the url's host",
    );
}

fn batch(y: &mut Yaml, a: &Answers) {
    if a.syslog() {
        y.knob(
            1,
            "batch: { max_events: 500 }",
            "messages per write (default)",
        );
    } else {
        y.knob(
            1,
            "batch: { max_events: 500, max_bytes: 1MB }",
            "per request (defaults)",
        );
        y.knob(
            1,
            "limits: { max_requests_per_sec: 200 }",
            "a request cap; batches grow under it",
        );
    }
    y.knob(
        1,
        "retry: { max_attempts: 10, max_time: 60s }",
        "429/503, resets, timeouts (defaults)",
    );
}

fn hec(y: &mut Yaml, a: &Answers) {
    y.line(1, "hec:", "");
    let e = match a.hec_endpoint {
        HecEndpoint::Event => "JSON envelopes to /services/collector/event",
        HecEndpoint::Raw => "lines to /services/collector/raw",
    };
    y.line(2, &format!("endpoint: {}", a.hec_endpoint), e);
    match &a.hec_index {
        Some(i) => y.line(2, &format!("index: {}", scalar(i)), ""),
        None => y.knob(2, "index: main", "default: the token's index"),
    }
    let st = a.pack_sourcetype.as_deref().unwrap_or("NAME");
    y.knob(
        2,
        &format!("sourcetype: {}", scalar(st)),
        "default: the pack's sourcetype",
    );
    let ack = if a.hec_ack {
        "every ackId must be confirmed (useACK on the token)"
    } else {
        "indexer acknowledgement off"
    };
    y.line(2, &format!("ack: {}", a.hec_ack), ack);
}

fn syslog(y: &mut Yaml, a: &Answers) {
    y.line(1, "syslog:", "");
    if a.builtin() {
        y.line(
            2,
            &format!("transport: {}", a.syslog_transport),
            "to the built-in sink: tcp or udp",
        );
    }
    if !a.udp() {
        let f = match a.syslog_framing {
            SyslogFraming::OctetCounting => "length-prefixed (RFC 6587)",
            SyslogFraming::Lf => "one message per line",
        };
        y.line(2, &format!("framing: {}", a.syslog_framing), f);
    }
    y.line(
        2,
        &format!("format: {}", a.syslog_format),
        "header for packs that are not syslog already",
    );
    y.comment(2, "app_name: ingestbench");
    y.knob(2, "facility: local0", "0..23 or a name");
    y.knob(
        2,
        "max_message_bytes: 8KiB",
        "longer messages are counted and left out",
    );
}

fn source(y: &mut Yaml, a: &Answers) {
    y.line(0, "source:", "");
    y.line(
        1,
        &format!("id: {}", scalar(&a.source)),
        &format!("`ingestbench sources show {}`", a.source),
    );
    y.knob(
        1,
        "entities: { host: 500, user: 100 }",
        "pool sizes: host, user, ip, process, domain",
    );
}

fn workload(y: &mut Yaml, a: &Answers) {
    y.line(0, "workload:", "");
    y.line(
        1,
        &format!("profile: {}", a.profile),
        "steady | ramp | burst | steps",
    );
    match a.profile {
        Profile::Closed => {}
        Profile::Steady => y.line(
            1,
            &format!("eps: {}", a.eps),
            "events per second, on an open-loop schedule",
        ),
        Profile::Ramp => {
            y.line(1, "ramp:", "");
            y.line(2, &format!("from_eps: {}", a.ramp_from), "");
            y.line(2, &format!("to_eps: {}", a.ramp_to), "");
            y.line(
                2,
                &format!("over: {}", a.ramp_over),
                "then held at to_eps until the stop",
            );
        }
        Profile::Burst => {
            y.line(1, "burst:", "");
            y.line(2, &format!("high_eps: {}", a.burst_high), "");
            y.line(2, &format!("low_eps: {}", a.burst_low), "");
            y.line(2, &format!("period: {}", a.burst_period), "");
            y.line(
                2,
                &format!("duty: {}", a.burst_duty),
                "share of each period at high_eps",
            );
        }
        Profile::Steps => {
            y.line(1, "steps:", "each rate held in turn");
            for (eps, hold) in &a.steps {
                y.line(2, &format!("- {{ eps: {eps}, hold: {hold} }}"), "");
            }
        }
    }
    y.knob(
        1,
        "workers: 4",
        "connections, spread over the threads (default 4)",
    );
    y.knob(
        1,
        "warmup: 30s",
        "sent, but left out of the summary and the objectives",
    );
    y.line(1, "stop:", "");
    match a.stop_by {
        StopBy::Time => y.line(2, &format!("after: {}", a.stop_after), "schedule time"),
        StopBy::Count => y.line(
            2,
            &format!("total_events: {}", a.stop_total),
            "events in all",
        ),
    }
}

fn slo(y: &mut Yaml, a: &Answers) {
    let rows = [
        (
            "max_p95_ms",
            a.slo_max_p95_ms,
            "95% of batches answered within",
        ),
        (
            "max_p99_ms",
            a.slo_max_p99_ms,
            "99% of batches answered within",
        ),
        (
            "min_success_rate",
            a.slo_min_success_rate,
            "share of events accepted",
        ),
        (
            "min_eps_ratio",
            a.slo_min_eps_ratio,
            "achieved / target rate",
        ),
    ];
    let given: Vec<_> = rows.iter().filter(|(_, v, _)| v.is_some()).collect();
    let note = [
        "Without objectives a run still fails (exit 3) on failed or unsent events,",
        "on no event accepted, and on events the built-in sink lost.",
    ];
    if given.is_empty() {
        y.knob(0, "slo:", "judged at the end; a breach exits 3");
        y.comment(0, "  max_p99_ms: 500");
        y.comment(0, "  min_success_rate: 0.999");
        note.iter().for_each(|n| y.comment(0, n));
        return;
    }
    y.line(0, "slo:", "judged at the end; a breach exits 3");
    for (key, v, comment) in given {
        if let Some(v) = v {
            y.line(1, &format!("{key}: {v}"), comment);
        }
    }
    note.iter().for_each(|n| y.comment(1, n));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_quote_what_yaml_would_read_otherwise() {
        assert_eq!(scalar("aws.cloudtrail"), "aws.cloudtrail");
        assert_eq!(
            scalar("http://127.0.0.1:8088/ingest"),
            "http://127.0.0.1:8088/ingest"
        );
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("123"), "\"123\"");
        assert_eq!(scalar("a b # c"), "\"a b # c\"");
        assert_eq!(scalar("x:"), "\"x:\"");
        assert_eq!(scalar("say \"hi\""), "\"say \\\"hi\\\"\"");
    }

    #[test]
    fn comments_line_up_and_only_what_applies_is_written() {
        let a = Answers::new("smoke");
        let text = render(&a, "smoke.yaml");
        let adapter = text.lines().find(|l| l.contains("adapter: lphc")).unwrap();
        assert_eq!(adapter.find('#'), Some(COMMENT_COLUMN), "{adapter}");
        for absent in ["auth:", "tls:", "hec:", "syslog:", "\nslo:"] {
            assert!(!text.contains(absent), "{absent} in\n{text}");
        }
        assert!(text.contains("ingestbench run --config smoke.yaml"));
    }
}
