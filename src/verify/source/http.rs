//! HTTP for the search-API stores, through ureq with the same TLS as targets
//! (`net::tls::client`: web roots plus a CA file, verification off only on request;
//! `net::ureq_tls` carries it). Every call is bounded: connecting by `Options::http_timeout`,
//! the whole call by `SearchOptions::search_timeout`, every body by a byte cap. Status codes
//! become typed errors in one place (401/403: `VerifyError::Auth`; others: `Unreachable` with a
//! piece of the body); no redirect is followed (credentials stay with the host named). Every
//! message that leaves this module has the credentials' strings masked.

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use serde_json::Value;

use super::SearchOptions;
use crate::config::secrets::Token;
use crate::net::{tls, ureq_tls};
use crate::verify::VerifyError;

/// An answer read whole.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Longest error body quoted in a message, in characters.
const QUOTE_CHARS: usize = 300;

/// Calls to one store.
pub struct Client {
    agent: ureq::Agent,
    base: String,
    label: String,
    auth: Option<Token>,
    secrets: Vec<String>,
}

impl Client {
    /// For the store at `base` (`http://` or `https://`, no trailing `/`), named `label` in
    /// errors.
    pub fn new(
        label: &str,
        base: &str,
        o: &SearchOptions,
        connect_timeout: Duration,
    ) -> Result<Client, VerifyError> {
        let url = url::Url::parse(base).map_err(|e| VerifyError::Input(format!("{label}: {e}")))?;
        let tls = if url.scheme() == "https" {
            let host = url.host_str().unwrap_or_default();
            Some(tls::client(&o.tls, host).map_err(|e| {
                VerifyError::Input(format!(
                    "{label}: {}",
                    e.replace("target.tls.ca_file", "--ca-file")
                ))
            })?)
        } else {
            None
        };
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(connect_timeout))
            .timeout_global(Some(o.search_timeout))
            .build();
        Ok(Client {
            agent: ureq_tls::agent(config, tls.as_ref()),
            base: base.to_string(),
            label: label.to_string(),
            auth: o.auth.as_ref().map(|c| c.header_value()),
            secrets: o.auth.as_ref().map(|c| c.secrets()).unwrap_or_default(),
        })
    }

    /// `POST base+path` with a JSON body; the answer read whole, at most `max` bytes.
    pub fn post_json(
        &self,
        what: &str,
        path: &str,
        body: &Value,
        max: u64,
    ) -> Result<Answer, VerifyError> {
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if let Some(a) = &self.auth {
            req = req.header("Authorization", a.expose());
        }
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let resp = req.send(&bytes[..]).map_err(|e| self.transport(what, e))?;
        let status = resp.status().as_u16();
        let mut out = Vec::new();
        resp.into_body()
            .into_with_config()
            .limit(max)
            .reader()
            .read_to_end(&mut out)
            .map_err(|e| self.unreachable(format!("{what}: reading the answer: {e}")))?;
        Ok(Answer { status, body: out })
    }

    /// `POST base+path` with a form body; on a 2xx the body as a buffered reader (at most
    /// `max` bytes), else the refusal as an error.
    pub fn post_form_stream(
        &self,
        what: &str,
        path: &str,
        form: &[(&str, String)],
        max: u64,
    ) -> Result<Box<dyn BufRead>, VerifyError> {
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Accept", "application/json");
        if let Some(a) = &self.auth {
            req = req.header("Authorization", a.expose());
        }
        let resp = req
            .send_form(form.iter().map(|(k, v)| (*k, v.as_str())))
            .map_err(|e| self.transport(what, e))?;
        let status = resp.status().as_u16();
        let reader = resp.into_body().into_with_config().limit(max).reader();
        if (200..300).contains(&status) {
            return Ok(Box::new(BufReader::with_capacity(1 << 16, reader)));
        }
        let mut body = Vec::new();
        let _ = reader.take(64 << 10).read_to_end(&mut body);
        Err(self.refused(what, &Answer { status, body }))
    }

    /// A non-2xx answer as an error: 401/403 are auth failures.
    pub fn refused(&self, what: &str, a: &Answer) -> VerifyError {
        let quote = quote(&a.body);
        let m = if quote.is_empty() {
            format!("{}: {what} answered HTTP {}", self.label, a.status)
        } else {
            format!("{}: {what} answered HTTP {}: {quote}", self.label, a.status)
        };
        match a.status {
            401 => VerifyError::Auth(self.mask(format!(
                "{m} (not authenticated: check --user, --auth-scheme and the token flags)"
            ))),
            403 => VerifyError::Auth(self.mask(format!(
                "{m} (authenticated but not allowed: the user needs read access to the index)"
            ))),
            _ => VerifyError::Unreachable(self.mask(m)),
        }
    }

    /// A 2xx answer's JSON body, or the refusal.
    pub fn json(&self, what: &str, a: &Answer) -> Result<Value, VerifyError> {
        if !a.ok() {
            return Err(self.refused(what, a));
        }
        serde_json::from_slice(&a.body).map_err(|e| {
            self.unreachable(format!(
                "{what}: the answer is not JSON ({e}): {}",
                quote(&a.body)
            ))
        })
    }

    /// An error about the store's answer (exit 6), the label in front, secrets masked.
    pub fn unreachable(&self, m: String) -> VerifyError {
        VerifyError::Unreachable(self.mask(format!("{}: {m}", self.label)))
    }

    fn transport(&self, what: &str, e: ureq::Error) -> VerifyError {
        let why = match &e {
            ureq::Error::Timeout(t) => format!("no answer in time ({t})"),
            ureq::Error::Rustls(r) => tls::describe(r),
            ureq::Error::Io(io) => {
                match io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                    Some(r) => tls::describe(r),
                    None => io.to_string(),
                }
            }
            other => other.to_string(),
        };
        self.unreachable(format!("{what}: {why}"))
    }

    fn mask(&self, mut m: String) -> String {
        for s in self.secrets.iter().filter(|s| s.len() >= 3) {
            m = m.replace(s.as_str(), "<redacted>");
        }
        m
    }
}

/// A body for a message: whitespace folded, at most `QUOTE_CHARS` characters.
pub fn quote(body: &[u8]) -> String {
    let t = String::from_utf8_lossy(body);
    let folded: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    match folded.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("{}…", &folded[..i]),
        None => folded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_short_and_refusals_typed() {
        assert_eq!(quote(b"  a\n\n b  "), "a b");
        let long = "x".repeat(1000);
        assert_eq!(quote(long.as_bytes()).chars().count(), QUOTE_CHARS + 1);
        assert_eq!(quote(&[0xff, b'a']), "\u{fffd}a");
        let c = Client::new(
            "os:x",
            "http://127.0.0.1:9",
            &SearchOptions::default(),
            Duration::from_secs(1),
        )
        .unwrap();
        let a = |status: u16, body: &str| Answer {
            status,
            body: body.as_bytes().to_vec(),
        };
        assert!(matches!(c.refused("q", &a(401, "")), VerifyError::Auth(_)));
        assert!(matches!(
            c.refused("q", &a(403, "no")),
            VerifyError::Auth(_)
        ));
        let e = c.refused("q", &a(500, "boom")).to_string();
        assert_eq!(e, "os:x: q answered HTTP 500: boom");
        assert!(c.json("q", &a(200, "{nope")).is_err());
        assert_eq!(c.json("q", &a(200, r#"{"a":1}"#)).unwrap()["a"], 1);
    }

    #[test]
    fn secrets_are_masked_in_messages() {
        use crate::verify::source::auth::{Credentials, Scheme};
        let o = SearchOptions {
            auth: Some(Credentials::new(
                Scheme::Basic,
                Some("svc".into()),
                Token::new("s3cr3t".into()),
            )),
            ..SearchOptions::default()
        };
        let c = Client::new("s", "http://127.0.0.1:9", &o, Duration::from_secs(1)).unwrap();
        let echo = Answer {
            status: 401,
            body: b"bad credentials s3cr3t in Basic c3ZjOnMzY3IzdA==".to_vec(),
        };
        let e = c.refused("q", &echo).to_string();
        assert!(
            !e.contains("s3cr3t") && !e.contains("c3ZjOnMzY3IzdA=="),
            "{e}"
        );
        assert!(e.contains("<redacted>"), "{e}");
    }

    #[test]
    fn a_bad_ca_file_names_the_flag() {
        let mut o = SearchOptions::default();
        o.tls.ca_file = Some("/nonexistent/ca.pem".into());
        let e = Client::new("s", "https://127.0.0.1:1", &o, Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(
            matches!(&e, VerifyError::Input(m) if m.contains("--ca-file")),
            "{e}"
        );
        assert!(Client::new("s", "http://127.0.0.1:1", &o, Duration::from_secs(1)).is_ok());
    }
}
