//! The plan of a plain HTTP load (`adapter: http`): the method, the extra header lines, the
//! fixed body read once (from `body` or `body_file`), the statuses that count as success and
//! whether connections are kept. The engine sends the fixed body from one shared buffer, never
//! copied per request.

use std::sync::Arc;

use crate::config::Config;
use crate::config::schema::HttpMethod;
use crate::run::SetupError;

#[derive(Clone, Debug)]
pub struct HttpPlan {
    pub method: HttpMethod,
    /// Header lines, each ending `\r\n` (the extra headers and the content type).
    pub headers: Vec<u8>,
    /// The body every request carries when there is no source pack (empty: none).
    pub fixed: Option<Arc<[u8]>>,
    /// Success: these statuses, or any 2xx when empty.
    pub expect: Vec<u16>,
    pub keepalive: bool,
}

impl HttpPlan {
    /// Whether `status` counts as success.
    pub fn expected(&self, status: u16) -> bool {
        if self.expect.is_empty() {
            (200..300).contains(&status)
        } else {
            self.expect.contains(&status)
        }
    }
}

/// The largest fixed body taken (as `target.batch.max_bytes` allows at most).
pub const MAX_BODY: u64 = crate::fsio::MAX_BODY_FILE_BYTES;

/// The plan of `cfg`'s plain HTTP load, or `None` for the other adapters.
pub fn plan(cfg: &Config) -> Result<Option<HttpPlan>, SetupError> {
    if cfg.target.adapter != crate::config::schema::Adapter::Http {
        return Ok(None);
    }
    let spec = cfg
        .target
        .http
        .clone()
        .unwrap_or(crate::config::schema::HttpSpec {
            method: None,
            headers: Vec::new(),
            body: None,
            body_file: None,
            content_type: None,
            expect_status: Vec::new(),
            keepalive: true,
            timeout: None,
            unix_socket: None,
        });
    let body: Option<Vec<u8>> = match (&spec.body, &spec.body_file) {
        (Some(b), _) => Some(b.as_bytes().to_vec()),
        (None, Some(f)) => Some(read_body(f)?),
        (None, None) => None,
    };
    let carries = body.is_some() || cfg.has_events();
    let method = spec.method.unwrap_or(if carries {
        HttpMethod::Post
    } else {
        HttpMethod::Get
    });
    let mut headers = Vec::new();
    for h in &spec.headers {
        let (name, value) = h.split_once(':').unwrap_or((h, ""));
        headers.extend_from_slice(format!("{}: {}\r\n", name.trim(), value.trim()).as_bytes());
    }
    let content_type = spec.content_type.clone().or_else(|| {
        // An event of a JSON pack is JSON, a replayed plain line text; a fixed body says
        // nothing about itself.
        let lines = cfg
            .replay
            .as_ref()
            .is_some_and(|r| r.format == crate::config::schema::ReplayFormat::Lines);
        match (cfg.has_events(), lines) {
            (true, true) => Some("text/plain".to_string()),
            (true, false) => Some("application/json".to_string()),
            _ => None,
        }
    });
    if let Some(ct) = content_type {
        headers.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
    }
    if !spec.keepalive {
        headers.extend_from_slice(b"Connection: close\r\n");
    }
    // Without a source the body is the fixed one, or none at all.
    let fixed = if cfg.has_events() {
        None
    } else {
        Some(Arc::from(body.unwrap_or_default()))
    };
    Ok(Some(HttpPlan {
        method,
        headers,
        fixed,
        expect: spec.expect_status,
        keepalive: spec.keepalive,
    }))
}

/// The body file, a regular file of at most `MAX_BODY` bytes (`fsio`: `/dev/zero`, a FIFO
/// or a file under `/proc` is refused unread).
fn read_body(path: &str) -> Result<Vec<u8>, SetupError> {
    crate::fsio::read_bytes(std::path::Path::new(path), MAX_BODY)
        .map_err(|e| SetupError::invalid(format!("target.http.body_file: {e}")))
}
