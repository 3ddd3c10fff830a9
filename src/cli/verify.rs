//! `ingestbench verify --report FILE --source SPEC…`: reads the saved report's accounting,
//! turns the flags into `verify::Options` (limits, settling, and for the search-API stores
//! credentials, TLS, field names and paging), asks every store what it holds (`verify`
//! library), prints the result as text or JSON (`ingestbench.verify/1`) and returns the exit
//! code the verification chose.

use argh::FromArgs;
use std::path::PathBuf;
use std::time::Duration;

use super::run::Output;
use crate::config::units::parse_duration;
use crate::exit::Exit;
use crate::net::tls::TlsSettings;
use crate::verify::source::auth::{self, AuthFlags};
use crate::verify::source::{Fields, SearchOptions, SplunkOptions};
use crate::verify::{self, Options, VerifyError, expected::Expected, source::Spec};

#[derive(FromArgs)]
/// Ask stores what arrived: the events a saved report says were accepted, against what files,
/// a standalone sink, OpenSearch/Elasticsearch or Splunk hold, per agent: stored, lost,
/// duplicated, unexpected, and the ingest lag where the store records arrival.
#[argh(
    subcommand,
    name = "verify",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench verify --report report.json --source 'file:/var/log/ingest/out*.log'",
    example = "ingestbench verify --report report.json --source sink:http://127.0.0.1:9800 --output json",
    example = "ingestbench verify --report report.json --source 'opensearch:https://os:9200/logs-*' --user verifier --token-env OS_PASSWORD --ca-file ca.pem",
    example = "ingestbench verify --report report.json --source splunk:https://splunk:8089 --splunk-index ib --token-secret splunk-search --insecure",
    note = "SPEC: file:GLOB (every matching file, rotated and .gz ones included; wildcards in the file name only); sink:URL (a standalone `ingestbench sink`, its GET /stats: counts only, the missing seqs cannot be listed); opensearch:URL/INDEX or elasticsearch:URL/INDEX (INDEX a name, a pattern like logs-* or a list: _refresh, _count on the run, then every (agent, seq) by a paged composite aggregation: exact, missing seqs listed; ingest lag = --ingested-field minus --sent-field, the tag's send time, or minus --time-field for events without one); splunk:URL (the management port, e.g. https://HOST:8089: search/v2/jobs/export on --splunk-index, stats per agent and a listing of every seq; ingest lag = _indextime minus --sent-field, or - _time for events without it, whole seconds).",
    note = "Auth for the search APIs (one set for every search source): --user with a password from --token-env/--token-file/--token-secret is Basic; a token alone is Bearer; --auth-scheme apikey (Elasticsearch API key) or splunk (a session key). Secrets are never printed. TLS: the public web roots plus --ca-file; --insecure skips verification (self-signed management ports).",
    note = "Exit codes: 0 nothing lost or duplicated beyond the limits, 2 bad report, flag or spec, 4 a store refused the credentials (HTTP 401/403), 5 lost or duplicated beyond the limits, or the report's failed list overflowed (inexact), 6 a store cannot be reached or read."
)]
pub struct Args {
    /// the saved report (`ingestbench run --output json`, with its accounting section)
    #[argh(option)]
    report: PathBuf,
    /// a store to ask, repeatable: file:GLOB, sink:URL, opensearch:URL/INDEX,
    /// elasticsearch:URL/INDEX or splunk:URL
    #[argh(option)]
    source: Vec<String>,
    /// longest wait for a store to stop growing, polled every second (default 60s; 0s: none)
    #[argh(option)]
    settle_timeout: Option<String>,
    /// events lost allowed (default: the report's slo.max_lost_events, else 0)
    #[argh(option)]
    max_lost: Option<u64>,
    /// events duplicated allowed (default: the report's slo.max_dup_events, else 0)
    #[argh(option)]
    max_dup: Option<u64>,
    /// output: text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
    /// search APIs: the user for Basic auth (its password from a --token-* flag)
    #[argh(option)]
    user: Option<String>,
    /// search APIs: the secret (password or token) from this environment variable
    #[argh(option)]
    token_env: Option<String>,
    /// search APIs: the secret from this file (mode 0600 or stricter)
    #[argh(option)]
    token_file: Option<String>,
    /// search APIs: the secret from the secret store (`ingestbench secret set NAME`)
    #[argh(option)]
    token_secret: Option<String>,
    /// search APIs: basic, bearer, apikey or splunk (default: basic with --user, else bearer)
    #[argh(option)]
    auth_scheme: Option<String>,
    /// search APIs over https: more trusted roots (PEM), beside the public web ones
    #[argh(option)]
    ca_file: Option<PathBuf>,
    /// search APIs over https: do not verify the store's certificate
    #[argh(switch)]
    insecure: bool,
    /// the run id field (default ingestbench.run; OpenSearch also tries FIELD.keyword)
    #[argh(option, default = "Fields::default().run")]
    run_field: String,
    /// the agent field (default ingestbench.agent)
    #[argh(option, default = "Fields::default().agent")]
    agent_field: String,
    /// the seq field (default ingestbench.seq)
    #[argh(option, default = "Fields::default().seq")]
    seq_field: String,
    /// the tag's send-time field (ms since the epoch), the ingest lag's start where events
    /// carry it (default ingestbench.sent)
    #[argh(option, default = "Fields::default().sent")]
    sent_field: String,
    /// opensearch: the event time field, for the ingest lag of events without a send time
    /// (default @timestamp)
    #[argh(option, default = "Fields::default().time")]
    time_field: String,
    /// opensearch: the ingest time field, for the ingest lag (default event.ingested)
    #[argh(option, default = "Fields::default().ingested")]
    ingested_field: String,
    /// opensearch: composite buckets per page (default 10000, at most 65535)
    #[argh(option, default = "10_000")]
    page_size: u32,
    /// bound of reading a store: each search call (a page, an export), a file store's whole
    /// scan (default 5m)
    #[argh(option)]
    search_timeout: Option<String>,
    /// splunk: the index searched (default main)
    #[argh(option, default = "SplunkOptions::default().index")]
    splunk_index: String,
    /// splunk: earliest_time (default 0: all time; it filters _time, the event's time)
    #[argh(option, default = "SplunkOptions::default().earliest")]
    splunk_earliest: String,
    /// splunk: latest_time (default a day from now, as epoch seconds)
    #[argh(option)]
    splunk_latest: Option<String>,
    /// splunk: the stats search only (counts per agent; the missing seqs cannot be listed)
    #[argh(switch)]
    splunk_counts_only: bool,
}

pub fn run(a: Args) -> Exit {
    match start(&a) {
        Ok(code) => code,
        Err(e) => {
            super::err(&format!("error: {e}"));
            e.exit()
        }
    }
}

fn duration(flag: &str, v: &Option<String>, default: Duration) -> Result<Duration, VerifyError> {
    match v {
        Some(s) => Ok(parse_duration(s)
            .map_err(|e| VerifyError::Input(format!("{flag}: {e}")))?
            .0),
        None => Ok(default),
    }
}

/// The search-API settings the flags give; credentials are looked up now.
fn search_options(a: &Args) -> Result<SearchOptions, VerifyError> {
    let search_timeout = duration(
        "--search-timeout",
        &a.search_timeout,
        Duration::from_secs(300),
    )?;
    if search_timeout.is_zero() {
        return Err(VerifyError::Input("--search-timeout: more than 0s".into()));
    }
    let auth = auth::resolve(&AuthFlags {
        scheme: a.auth_scheme.clone(),
        user: a.user.clone(),
        token_env: a.token_env.clone(),
        token_file: a.token_file.clone(),
        token_secret: a.token_secret.clone(),
    })?;
    Ok(SearchOptions {
        auth,
        tls: TlsSettings {
            verify: !a.insecure,
            ca_file: a.ca_file.clone(),
            ..TlsSettings::default()
        },
        fields: Fields {
            run: a.run_field.clone(),
            agent: a.agent_field.clone(),
            seq: a.seq_field.clone(),
            sent: a.sent_field.clone(),
            time: a.time_field.clone(),
            ingested: a.ingested_field.clone(),
        },
        page_size: a.page_size,
        search_timeout,
        splunk: SplunkOptions {
            index: a.splunk_index.clone(),
            earliest: a.splunk_earliest.clone(),
            latest: a.splunk_latest.clone(),
            counts_only: a.splunk_counts_only,
        },
    })
}

fn start(a: &Args) -> Result<Exit, VerifyError> {
    if a.source.is_empty() {
        return Err(VerifyError::Input(
            "give at least one --source (file:GLOB, sink:URL, opensearch:URL/INDEX or \
             splunk:URL)"
                .into(),
        ));
    }
    let specs = a
        .source
        .iter()
        .map(|s| Spec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let settle_timeout = duration(
        "--settle-timeout",
        &a.settle_timeout,
        Duration::from_secs(60),
    )?;
    let search = search_options(a)?;
    search.check()?;
    let text = crate::fsio::read_text(&a.report, crate::report::de::MAX_REPORT_BYTES)
        .map_err(|e| VerifyError::Input(e.to_string()))?;
    let exp = Expected::from_report(&text)
        .map_err(|e| VerifyError::Input(format!("{}: {e}", a.report.display())))?;
    if a.insecure {
        super::err("warning: --insecure: the search stores' certificates are not verified");
    }
    let v = verify::verify(
        &exp,
        &specs,
        &Options {
            settle_timeout,
            poll: Duration::from_secs(1),
            http_timeout: Duration::from_secs(10),
            max_lost: a.max_lost,
            max_dup: a.max_dup,
            search,
            growth: None,
        },
    )?;
    match a.output {
        Output::Text => super::out(&verify::render::render_text(&v)),
        Output::Json => super::out(&serde_json::to_string_pretty(&v).unwrap_or_default()),
    }
    Ok(v.exit())
}
