//! The stores a verification asks, one file per kind: `file` (text or NDJSON files written by
//! real collectors, a glob following rotation), `sink` (a standalone `ingestbench sink`'s
//! `GET /stats`), `opensearch` (OpenSearch or Elasticsearch: `_refresh`, `_count`, a paged
//! `composite` aggregation over agent and seq) and `splunk` (Splunk's search REST API,
//! `search/v2/jobs/export`). Each parses its `--source` spec, gives a cheap `progress` figure
//! for settling (bytes on disk, events received, documents counted) and then reads what it
//! holds for the run (`Held`). The search APIs share `SearchOptions` (credentials, TLS, field
//! names, paging), `auth` (credentials from flags) and `http` (ureq calls, bounded, redacted).

pub mod auth;
pub mod file;
pub mod http;
pub mod opensearch;
pub mod sink;
pub mod splunk;

use std::time::Duration;

use super::expected::Expected;
use super::held::Held;
use super::{Options, VerifyError};
use crate::net::tls::TlsSettings;
use auth::Credentials;

/// Which flavour of the same API an `opensearch:` spec was given as (they are one kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    OpenSearch,
    Elasticsearch,
}

/// A `--source` spec, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// `file:GLOB`
    File(String),
    /// `sink:http://HOST:PORT`
    Sink(String),
    /// `opensearch:URL/INDEX` or `elasticsearch:URL/INDEX` (INDEX may be a pattern, a list).
    OpenSearch {
        flavor: Flavor,
        base: String,
        index: String,
    },
    /// `splunk:https://HOST:8089`
    Splunk(String),
}

const KINDS: &str = "file, sink, opensearch, elasticsearch, splunk";

impl Spec {
    pub fn parse(s: &str) -> Result<Spec, VerifyError> {
        let (kind, rest) = s.split_once(':').ok_or_else(|| {
            VerifyError::Input(format!(
                "--source {s:?}: give KIND:WHERE, e.g. file:/var/log/out*.log, \
                 sink:http://127.0.0.1:9800, opensearch:https://127.0.0.1:9200/logs-* or \
                 splunk:https://127.0.0.1:8089"
            ))
        })?;
        if rest.is_empty() {
            return Err(VerifyError::Input(format!(
                "--source {s:?}: nothing after `{kind}:`"
            )));
        }
        let bad = |m: String| VerifyError::Input(format!("--source {s:?}: {m}"));
        match kind {
            "file" => Ok(Spec::File(rest.to_string())),
            "sink" => {
                let base = http_base(rest).map_err(bad)?;
                no_userinfo(&base).map_err(bad)?;
                Ok(Spec::Sink(base))
            }
            "opensearch" | "elasticsearch" => {
                let flavor = if kind == "opensearch" {
                    Flavor::OpenSearch
                } else {
                    Flavor::Elasticsearch
                };
                let (base, index) = opensearch::split_spec(rest).map_err(bad)?;
                let base = http_base(&base).map_err(bad)?;
                no_userinfo(&base).map_err(bad)?;
                Ok(Spec::OpenSearch {
                    flavor,
                    base,
                    index,
                })
            }
            "splunk" => {
                let base = http_base(rest).map_err(bad)?;
                no_userinfo(&base).map_err(bad)?;
                Ok(Spec::Splunk(base))
            }
            _ => Err(VerifyError::Input(format!(
                "--source {s:?}: unknown kind `{kind}` ({KINDS})"
            ))),
        }
    }

    /// The spec as shown in results (no secrets live in specs: userinfo is refused).
    pub fn label(&self) -> String {
        match self {
            Spec::File(g) => format!("file:{g}"),
            Spec::Sink(u) => format!("sink:{u}"),
            Spec::OpenSearch { base, index, .. } => format!("{}:{base}/{index}", self.kind()),
            Spec::Splunk(u) => format!("splunk:{u}"),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Spec::File(_) => "file",
            Spec::Sink(_) => "sink",
            Spec::OpenSearch {
                flavor: Flavor::OpenSearch,
                ..
            } => "opensearch",
            Spec::OpenSearch {
                flavor: Flavor::Elasticsearch,
                ..
            } => "elasticsearch",
            Spec::Splunk(_) => "splunk",
        }
    }

    /// A cheap figure that grows while the store is still taking events in.
    pub fn progress(&self, exp: &Expected, o: &Options) -> Result<u64, VerifyError> {
        match self {
            Spec::File(g) => file::progress(g),
            Spec::Sink(u) => sink::progress(u, o.http_timeout),
            Spec::OpenSearch { base, index, .. } => {
                opensearch::progress(&self.label(), base, index, exp, o)
            }
            Spec::Splunk(u) => splunk::progress(&self.label(), u, exp, o),
        }
    }

    /// What the store holds for the run, read by `deadline` (files; the search APIs' calls
    /// are each bounded by `search_timeout`).
    pub fn read(
        &self,
        exp: &Expected,
        o: &Options,
        deadline: std::time::Instant,
    ) -> Result<Held, VerifyError> {
        match self {
            Spec::File(g) => file::read(
                g,
                exp,
                o.growth.as_ref().map(|h| h.0.log()).as_ref(),
                deadline,
            ),
            Spec::Sink(u) => sink::read(u, exp, o.http_timeout),
            Spec::OpenSearch { base, index, .. } => {
                opensearch::read(&self.label(), base, index, exp, o)
            }
            Spec::Splunk(u) => splunk::read(&self.label(), u, exp, o),
        }
    }
}

/// An `http://` or `https://` url without a query or fragment, its trailing `/` trimmed.
fn http_base(u: &str) -> Result<String, String> {
    let parsed = url::Url::parse(u).map_err(|e| format!("{e}"))?;
    if parsed.scheme() != "http" && parsed.scheme() != "https" {
        return Err("the url is http:// or https://".into());
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err("the url takes no ?query or #fragment".into());
    }
    Ok(u.trim_end_matches('/').to_string())
}

fn no_userinfo(u: &str) -> Result<(), String> {
    let parsed = url::Url::parse(u).map_err(|e| format!("{e}"))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(
            "credentials do not go in the url (it is printed): use --user and --token-env, \
             --token-file or --token-secret"
                .into(),
        );
    }
    Ok(())
}

/// The fields the search-API stores read: the accounting tag's members and the times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields {
    pub run: String,
    pub agent: String,
    pub seq: String,
    /// The tag's `sent` (ms since the epoch, realtime runs only): the ingest lag's start
    /// where an event has it.
    pub sent: String,
    /// The event's own time: the lag's start for events without `sent` (OpenSearch; Splunk
    /// uses `_time`).
    pub time: String,
    /// When the store took the event in (OpenSearch; Splunk uses `_indextime`).
    pub ingested: String,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            run: "ingestbench.run".into(),
            agent: "ingestbench.agent".into(),
            seq: "ingestbench.seq".into(),
            sent: "ingestbench.sent".into(),
            time: "@timestamp".into(),
            ingested: "event.ingested".into(),
        }
    }
}

/// Splunk's own settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplunkOptions {
    pub index: String,
    /// `earliest_time`: `0` (all time) unless given.
    pub earliest: String,
    /// `latest_time`: a day from now (as epoch seconds) unless given; both filter `_time`.
    pub latest: Option<String>,
    /// Skip the listing search: counts per agent only (missing seqs cannot be listed).
    pub counts_only: bool,
}

impl Default for SplunkOptions {
    fn default() -> Self {
        SplunkOptions {
            index: "main".into(),
            earliest: "0".into(),
            latest: None,
            counts_only: false,
        }
    }
}

/// What the search-API stores share.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub auth: Option<Credentials>,
    pub tls: TlsSettings,
    pub fields: Fields,
    /// Buckets per composite page (OpenSearch).
    pub page_size: u32,
    /// Bound of each search call (a page, an export stream); connecting is bounded by
    /// `Options::http_timeout`.
    pub search_timeout: Duration,
    pub splunk: SplunkOptions,
}

/// Largest composite page asked for (OpenSearch's `search.max_buckets` default is 65,535).
pub const MAX_PAGE_SIZE: u32 = 65_535;

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            auth: None,
            tls: TlsSettings::default(),
            fields: Fields::default(),
            page_size: 10_000,
            search_timeout: Duration::from_secs(300),
            splunk: SplunkOptions::default(),
        }
    }
}

impl SearchOptions {
    /// Field names, index and page size as the stores' query languages can take them.
    pub fn check(&self) -> Result<(), VerifyError> {
        let f = &self.fields;
        for (flag, v) in [
            ("--run-field", &f.run),
            ("--agent-field", &f.agent),
            ("--seq-field", &f.seq),
            ("--sent-field", &f.sent),
            ("--time-field", &f.time),
            ("--ingested-field", &f.ingested),
        ] {
            check_field(flag, v)?;
        }
        let idx = &self.splunk.index;
        if idx.is_empty()
            || idx.len() > 256
            || !idx
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'*'))
        {
            return Err(VerifyError::Input(format!(
                "--splunk-index {idx:?}: letters, digits, `_`, `-` and `*` only"
            )));
        }
        for (flag, v) in [
            ("--splunk-earliest", Some(&self.splunk.earliest)),
            ("--splunk-latest", self.splunk.latest.as_ref()),
        ] {
            if let Some(v) = v
                && (v.is_empty()
                    || v.len() > 64
                    || !v
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'@' | b'-' | b'+')))
            {
                return Err(VerifyError::Input(format!(
                    "{flag} {v:?}: a Splunk time modifier (`0`, an epoch, `-7d@d`, `now`)"
                )));
            }
        }
        if self.page_size == 0 || self.page_size > MAX_PAGE_SIZE {
            return Err(VerifyError::Input(format!(
                "--page-size {}: 1 to {MAX_PAGE_SIZE}",
                self.page_size
            )));
        }
        Ok(())
    }
}

/// A field name both query languages take unquoted: letters, digits, `_`, `.`, `@`.
fn check_field(flag: &str, v: &str) -> Result<(), VerifyError> {
    let ok = !v.is_empty()
        && v.len() <= 128
        && !v.starts_with('.')
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'@'));
    if ok {
        Ok(())
    } else {
        Err(VerifyError::Input(format!(
            "{flag} {v:?}: a field name of letters, digits, `_`, `.` and `@`"
        )))
    }
}

/// A run id as it may appear in a query: the accounting tag's bytes only (`acct`).
pub fn check_run_id(run: &str) -> Result<(), VerifyError> {
    let ok = !run.is_empty()
        && run.len() <= crate::acct::MAX_RUN_LEN
        && run
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
    if ok {
        Ok(())
    } else {
        Err(VerifyError::Input(format!(
            "the report's run id {run:?} is not one an accounting tag carries"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        assert_eq!(
            Spec::parse("file:/var/log/out*.log").unwrap(),
            Spec::File("/var/log/out*.log".into())
        );
        assert_eq!(
            Spec::parse("sink:http://127.0.0.1:9800/").unwrap(),
            Spec::Sink("http://127.0.0.1:9800".into())
        );
        let os = Spec::parse("opensearch:https://os.local:9200/logs-*").unwrap();
        assert_eq!(
            os,
            Spec::OpenSearch {
                flavor: Flavor::OpenSearch,
                base: "https://os.local:9200".into(),
                index: "logs-*".into()
            }
        );
        assert_eq!(os.label(), "opensearch:https://os.local:9200/logs-*");
        let es = Spec::parse("elasticsearch:http://h/proxy/es/a,b/").unwrap();
        assert_eq!(es.kind(), "elasticsearch");
        assert_eq!(es.label(), "elasticsearch:http://h/proxy/es/a,b");
        assert_eq!(
            Spec::parse("splunk:https://splunk.local:8089/").unwrap(),
            Spec::Splunk("https://splunk.local:8089".into())
        );
        for bad in [
            "x",
            "file:",
            "nfs:/a",
            "sink:ftp://h",
            "sink:not a url",
            "opensearch:https://h:9200",
            "opensearch:https://h:9200/",
            "opensearch:https://h:9200/a b",
            "opensearch:https://h:9200/logs?q=1",
            "opensearch:https://u:p@h:9200/logs",
            "elasticsearch:h:9200/logs",
            "splunk:ftp://h:8089",
            "splunk:https://admin:changeme@h:8089",
            "splunk:https://h:8089/?x",
        ] {
            assert!(Spec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn options_are_checked() {
        assert!(SearchOptions::default().check().is_ok());
        let with = |f: &dyn Fn(&mut SearchOptions)| {
            let mut o = SearchOptions::default();
            f(&mut o);
            o.check()
        };
        assert!(with(&|o| o.fields.seq = "a b".into()).is_err());
        assert!(with(&|o| o.fields.run = "x\"|delete".into()).is_err());
        assert!(with(&|o| o.fields.agent = String::new()).is_err());
        assert!(with(&|o| o.fields.sent = "x'+1".into()).is_err());
        assert!(with(&|o| o.fields.sent = ".sent".into()).is_err());
        assert!(with(&|o| o.fields.sent = "tag.sent_ms".into()).is_ok());
        assert!(with(&|o| o.splunk.index = "main | delete".into()).is_err());
        assert!(with(&|o| o.splunk.latest = Some("now\" OR".into())).is_err());
        assert!(with(&|o| o.splunk.earliest = "-7d@d".into()).is_ok());
        assert!(with(&|o| o.page_size = 0).is_err());
        assert!(with(&|o| o.page_size = 70_000).is_err());
        assert!(check_run_id("r-0123456789ab").is_ok());
        assert!(check_run_id("r\" OR 1").is_err());
    }
}
