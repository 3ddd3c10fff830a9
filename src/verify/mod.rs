//! Asking stores what arrived: a saved report's `accounting` (what was accepted, per agent)
//! against what each store holds (`source`: files, a standalone sink, OpenSearch or
//! Elasticsearch, Splunk), after the store has settled (`settle`). The result, `Verification`
//! (schema `ingestbench.verify/1`), gives per store and agent the events stored, lost (with the
//! first missing seqs), duplicated and unexpected, the store's ingest lag where it records
//! arrival (`lag`), and the exit code: 0 within the limits, 5 beyond them or when the expected
//! set is inexact (a report whose failed list overflowed), 2 bad input, 4 a store refusing the
//! credentials, 6 a store that cannot be reached. This module knows reports only as JSON (or
//! as an `Expected` a run builds from its own accounting in memory) and the engine not at all;
//! `check_spec` checks a store spec from a config (`verify.sources`).

pub mod compare;
pub mod expected;
pub mod growth;
pub mod held;
pub mod lag;
pub mod render;
pub mod settle;
pub mod source;

use std::fmt;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::exit::Exit;
use compare::Comparison;
use expected::Expected;
use lag::IngestLag;
use settle::Settled;
use source::{SearchOptions, Spec};

pub const VERIFY_SCHEMA: &str = "ingestbench.verify/1";

/// Why a verification could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyError {
    /// A bad report, flag or spec (exit 2).
    Input(String),
    /// A store that cannot be reached or read (exit 6).
    Unreachable(String),
    /// A store refusing the credentials (HTTP 401/403; exit 4).
    Auth(String),
}

impl VerifyError {
    pub fn exit(&self) -> Exit {
        match self {
            VerifyError::Input(_) => Exit::Invalid,
            VerifyError::Unreachable(_) => Exit::Aborted,
            VerifyError::Auth(_) => Exit::AuthFailed,
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Input(m) | VerifyError::Unreachable(m) | VerifyError::Auth(m) => {
                f.write_str(m)
            }
        }
    }
}

/// How to verify.
#[derive(Clone, Debug)]
pub struct Options {
    /// Longest wait for a store to stop growing (zero: no settling).
    pub settle_timeout: Duration,
    pub poll: Duration,
    /// Bound of each HTTP call.
    pub http_timeout: Duration,
    /// Limits; `None` takes the report's `slo.max_lost_events` / `max_dup_events`, else 0.
    pub max_lost: Option<u64>,
    pub max_dup: Option<u64>,
    /// Credentials, TLS, field names and paging of the search-API stores.
    pub search: SearchOptions,
    /// When the file stores' bytes arrived, sampled while the run went on (a run's own
    /// `verify:`); without it files give no ingest lag.
    pub growth: Option<growth::GrowthHandle>,
}

/// One store's answer.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct SourceResult {
    pub source: String,
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub kind: &'static str,
    pub settle: Settled,
    /// Lines (files) or events (sink) read.
    pub scanned: u64,
    /// Tags of other runs seen and ignored.
    pub other_runs: u64,
    #[serde(flatten)]
    pub comparison: Comparison,
    /// Whether the store's answer lists seqs (files, search APIs) or counts only (sink).
    pub seqs_listed: bool,
    /// Where the store records arrival (OpenSearch, Splunk): the lag's distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingest_lag: Option<IngestLag>,
    /// Store records holding more than one tag of the run (a fail: one record is one
    /// event). Absent when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_with_several_tags: Option<held::SeveralTags>,
    pub notes: Vec<String>,
}

/// The whole verification.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Verification {
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub schema: &'static str,
    pub run_id: String,
    /// False when the report's failed lists overflowed: losses are not exact.
    pub exact: bool,
    pub max_lost: u64,
    pub max_dup: u64,
    pub sources: Vec<SourceResult>,
    pub pass: bool,
    pub exit_code: i32,
    pub reasons: Vec<String>,
}

impl Verification {
    pub fn exit(&self) -> Exit {
        if self.pass {
            Exit::Ok
        } else {
            Exit::VerifyFailed
        }
    }
}

/// Verifies `exp` against every store of `specs`, in order.
pub fn verify(exp: &Expected, specs: &[Spec], o: &Options) -> Result<Verification, VerifyError> {
    o.search.check()?;
    let max_lost = o.max_lost.or(exp.max_lost_events).unwrap_or(0);
    let max_dup = o.max_dup.or(exp.max_dup_events).unwrap_or(0);
    let mut sources = Vec::with_capacity(specs.len());
    let mut reasons = Vec::new();
    let exact = exp.exact();
    if !exact {
        reasons.push(
            "the report's failed list overflowed for some agent: which events were accepted \
             is not known exactly, so losses cannot be counted exactly (inexact)"
                .to_string(),
        );
    }
    for spec in specs {
        let settled = settle::settle(o.settle_timeout, o.poll, || spec.progress(exp, o))?;
        let mut held = spec.read(exp, o, Instant::now() + o.search.search_timeout)?;
        let comparison = compare::compare(exp, &held);
        let seqs_listed = comparison.agents.iter().all(|a| a.seqs_listed);
        let mut notes = std::mem::take(&mut held.notes);
        if !seqs_listed {
            notes.push(
                "this store keeps counts, not seq lists: lost and duplicated are counted, \
                 the missing seqs cannot be listed"
                    .to_string(),
            );
        }
        if !settled.settled {
            notes.push(format!(
                "still growing after {}: counted as it stood",
                humantime::format_duration(o.settle_timeout)
            ));
        }
        if comparison.unknown_agent_events > 0 {
            notes.push(format!(
                "{} tagged events of this run came from agents the report does not name",
                comparison.unknown_agent_events
            ));
        }
        let label = spec.label();
        let merged = std::mem::take(&mut held.merged);
        if merged.records > 0 {
            reasons.push(format!(
                "{label}: {} store records hold more than one accounting tag ({} tags in \
                 them; the first: {}): one record is one event, these were stored merged",
                merged.records,
                merged.tags,
                merged.first.as_deref().unwrap_or("?")
            ));
        }
        if comparison.lost > max_lost {
            reasons.push(format!(
                "{label}: {} events lost (limit {max_lost})",
                comparison.lost
            ));
        }
        if comparison.duplicated > max_dup {
            reasons.push(format!(
                "{label}: {} events duplicated (limit {max_dup})",
                comparison.duplicated
            ));
        }
        sources.push(SourceResult {
            source: label,
            kind: spec.kind(),
            settle: settled,
            scanned: held.scanned,
            other_runs: held.other_runs,
            comparison,
            seqs_listed,
            ingest_lag: held.ingest_lag.take(),
            records_with_several_tags: (merged.records > 0).then_some(merged),
            notes,
        });
    }
    let pass = reasons.is_empty();
    Ok(Verification {
        schema: VERIFY_SCHEMA,
        run_id: exp.run_id.clone(),
        exact,
        max_lost,
        max_dup,
        sources,
        pass,
        exit_code: if pass { 0 } else { Exit::VerifyFailed.code() },
        reasons,
    })
}

/// A store spec from a config (`verify.sources`) rather than the command line: parsed as
/// `--source` is, and its shape checked as far as it can be before the store exists (a file
/// glob's wildcards in the file name only). The message leaves out the flag's name.
pub fn check_spec(s: &str) -> Result<Spec, String> {
    let flagless = |e: VerifyError| {
        let m = e.to_string();
        m.strip_prefix("--source ").map(str::to_string).unwrap_or(m)
    };
    let spec = Spec::parse(s).map_err(flagless)?;
    if let Spec::File(glob) = &spec {
        source::file::parts(glob).map_err(flagless)?;
    }
    Ok(spec)
}
