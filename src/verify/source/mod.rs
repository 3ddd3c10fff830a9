//! The stores a verification asks, one file per kind: `file` (text or NDJSON files written by
//! real collectors, a glob following rotation) and `sink` (a standalone `ingestbench sink`'s
//! `GET /stats`). Each parses its `--source` spec, gives a cheap `progress` figure for settling
//! (bytes on disk, events received) and then reads what it holds for the run (`Held`).

pub mod file;
pub mod sink;

use std::time::Duration;

use super::VerifyError;
use super::expected::Expected;
use super::held::Held;

/// A `--source` spec, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// `file:GLOB`
    File(String),
    /// `sink:http://HOST:PORT`
    Sink(String),
}

impl Spec {
    pub fn parse(s: &str) -> Result<Spec, VerifyError> {
        let (kind, rest) = s.split_once(':').ok_or_else(|| {
            VerifyError::Input(format!(
                "--source {s:?}: give KIND:WHERE, e.g. file:/var/log/out*.log or \
                 sink:http://127.0.0.1:9800"
            ))
        })?;
        if rest.is_empty() {
            return Err(VerifyError::Input(format!(
                "--source {s:?}: nothing after `{kind}:`"
            )));
        }
        match kind {
            "file" => Ok(Spec::File(rest.to_string())),
            "sink" => {
                let u = url::Url::parse(rest)
                    .map_err(|e| VerifyError::Input(format!("--source {s:?}: {e}")))?;
                if u.scheme() != "http" && u.scheme() != "https" {
                    return Err(VerifyError::Input(format!(
                        "--source {s:?}: the sink's url is http:// or https://"
                    )));
                }
                Ok(Spec::Sink(rest.trim_end_matches('/').to_string()))
            }
            _ => Err(VerifyError::Input(format!(
                "--source {s:?}: unknown kind `{kind}` (file, sink)"
            ))),
        }
    }

    /// The spec as shown in results (no secrets live in specs).
    pub fn label(&self) -> String {
        match self {
            Spec::File(g) => format!("file:{g}"),
            Spec::Sink(u) => format!("sink:{u}"),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Spec::File(_) => "file",
            Spec::Sink(_) => "sink",
        }
    }

    /// A cheap figure that grows while the store is still taking events in.
    pub fn progress(&self, timeout: Duration) -> Result<u64, VerifyError> {
        match self {
            Spec::File(g) => file::progress(g),
            Spec::Sink(u) => sink::progress(u, timeout),
        }
    }

    /// What the store holds for the run.
    pub fn read(&self, exp: &Expected, timeout: Duration) -> Result<Held, VerifyError> {
        match self {
            Spec::File(g) => file::read(g, exp),
            Spec::Sink(u) => sink::read(u, exp, timeout),
        }
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
        for bad in [
            "x",
            "file:",
            "nfs:/a",
            "sink:ftp://h",
            "sink:not a url",
            "splunk:https://h:8089",
        ] {
            assert!(Spec::parse(bad).is_err(), "{bad}");
        }
    }
}
