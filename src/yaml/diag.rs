//! Diagnostics for config and pack files: one `Diagnostic` per problem, each with the field
//! path (`target.batch.max_bytes`), the position in the file, a message, and a severity. Readers
//! collect all of them instead of stopping at the first, so a user fixes a file in one pass.

use serde::Serialize;
use std::fmt;

/// Where a value sits in its file: 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Dotted field path; empty for the file as a whole.
    pub path: String,
    /// Position, when the problem has one (a missing field has its parent's).
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub pos: Option<Pos>,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    /// `target.batch.max_bytes (14:14): "12XB" is not a size …`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(file)"
        } else {
            &self.path
        };
        match self.pos {
            Some(p) => write!(f, "{path} ({}:{}): {}", p.line, p.column, self.message),
            None => write!(f, "{path}: {}", self.message),
        }
    }
}

/// The problems found in one file, in the order they were found.
#[derive(Clone, Debug, Default)]
pub struct Diags {
    pub items: Vec<Diagnostic>,
}

impl Diags {
    pub fn error(&mut self, path: &str, pos: Option<Pos>, message: impl Into<String>) {
        self.push(Severity::Error, path, pos, message.into());
    }

    pub fn warning(&mut self, path: &str, pos: Option<Pos>, message: impl Into<String>) {
        self.push(Severity::Warning, path, pos, message.into());
    }

    fn push(&mut self, severity: Severity, path: &str, pos: Option<Pos>, message: String) {
        self.items.push(Diagnostic {
            severity,
            path: path.to_string(),
            pos,
            message,
        });
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items
            .iter()
            .filter(|d| d.severity == Severity::Warning)
    }
}

/// The closest of `candidates` to `word`, when it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_has_path_and_position() {
        let mut d = Diags::default();
        d.error(
            "target.batch.max_bytes",
            Some(Pos {
                line: 14,
                column: 14,
            }),
            "bad",
        );
        d.warning("", None, "whole file");
        assert_eq!(
            d.items[0].to_string(),
            "target.batch.max_bytes (14:14): bad"
        );
        assert_eq!(d.items[1].to_string(), "(file): whole file");
        assert!(d.has_errors());
        assert_eq!(d.warnings().count(), 1);
    }

    #[test]
    fn suggestions() {
        let keys = ["max_events", "max_bytes"];
        assert_eq!(did_you_mean("max_byte", &keys), Some("max_bytes"));
        assert_eq!(did_you_mean("max_evnets", &keys), Some("max_events"));
        assert_eq!(did_you_mean("colour", &keys), None);
    }

    #[test]
    fn json_shape() {
        let mut d = Diags::default();
        d.error("a.b", Some(Pos { line: 2, column: 3 }), "m");
        let v = serde_json::to_value(&d.items[0]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"severity":"error","path":"a.b","line":2,"column":3,"message":"m"})
        );
    }
}
