//! HTTP calls of a probe that are not the load (HEC health, the auth step's one event, the
//! sink's `/stats`), with ureq. HTTPS goes through `net::ureq_tls`, a ureq connector carrying
//! the run's own rustls `ClientConfig` and server name (`net::tls::TlsClient`).

use std::io::Read;
use std::time::Duration;

use crate::net::tls::TlsClient;
use crate::net::ureq_tls;
use crate::run::target::Endpoint;

/// An answer: status, whether its body carries a content coding, and the body (at most
/// the run's body cap, `net::http::MAX_BODY`) — or, when the body could not be read whole
/// (over the cap, a length that lies, the connection closed mid-body), why not: for a 2xx
/// that is "answered 2xx, unreadable", as the run counts it.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub encoded: bool,
    pub body: Vec<u8>,
    pub unreadable: Option<String>,
}

impl Answer {
    /// The body as text for a person: trimmed, at most 200 characters.
    pub fn body_text(&self) -> String {
        let t = String::from_utf8_lossy(&self.body);
        let t = t.trim();
        match t.char_indices().nth(200) {
            Some((i, _)) => format!("{}…", &t[..i]),
            None => t.to_string(),
        }
    }
}

/// Requests to one endpoint.
pub struct Http {
    agent: ureq::Agent,
    base: String,
    /// Plain HTTP: the address, asked again when an answer is no HTTP at all (is it TLS?).
    plain: Option<std::net::SocketAddr>,
}

/// The body cap: the run's.
const MAX_BODY: u64 = crate::net::http::MAX_BODY as u64;

impl Http {
    /// For `ep`, over TLS with `tls` when given; every call is bounded by `timeout`.
    pub fn new(ep: &Endpoint, tls: Option<&TlsClient>, timeout: Duration) -> Http {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .build();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let agent = ureq_tls::agent(config, tls);
        // The address, not the name: the probe's resolve step chose it, as a run does.
        Http {
            agent,
            base: format!("{scheme}://{}", ep.host_port),
            plain: if tls.is_some() {
                None
            } else {
                ep.host_port.parse().ok()
            },
        }
    }

    /// An answer, or why there is none — named as a TLS port when a plain request got TLS
    /// bytes back, as the run names it.
    fn answer(
        &self,
        r: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Answer, String> {
        match r {
            Err(e)
                if !matches!(e, ureq::Error::Timeout(_))
                    && self.plain.is_some_and(|a| {
                        crate::net::tls::answers_tls(a, Duration::from_secs(1))
                    }) =>
            {
                Err(format!(
                    "the target answered in TLS — the port speaks TLS and the url says http:// (use https://); {e}"
                ))
            }
            r => answer(r),
        }
    }

    pub fn get(&self, path: &str) -> Result<Answer, String> {
        let r = self.agent.get(format!("{}{path}", self.base)).call();
        self.answer(r)
    }

    pub fn post(
        &self,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<Answer, String> {
        let mut req = self.agent.post(format!("{}{path}", self.base));
        for (k, v) in headers {
            req = req.header(k.as_str(), v.as_str());
        }
        self.answer(req.send(body))
    }
}

fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<Answer, String> {
    let mut resp = r.map_err(|e| match e {
        ureq::Error::Timeout(_) => "no answer in time".to_string(),
        ureq::Error::Io(e) => e.to_string(),
        other => other.to_string(),
    })?;
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let encoded = header("content-encoding")
        .is_some_and(|v| !(v.is_empty() || v.eq_ignore_ascii_case("identity")));
    let declared = header("content-length").and_then(|v| v.parse::<u64>().ok());
    let mut a = Answer {
        status,
        encoded,
        body: Vec::new(),
        unreadable: None,
    };
    if declared.is_some_and(|n| n > MAX_BODY) {
        a.unreadable = Some("its Content-Length is over the body cap".into());
        return Ok(a);
    }
    let read = resp
        .body_mut()
        .as_reader()
        .take(MAX_BODY + 1)
        .read_to_end(&mut a.body);
    a.unreadable = match read {
        Err(e) => Some(format!("reading its body: {e}")),
        Ok(_) if a.body.len() as u64 > MAX_BODY => Some("its body is over the body cap".into()),
        Ok(_) => None,
    };
    Ok(a)
}

/// The header lines an adapter renders (`Name: value\r\n`…) as pairs.
pub fn header_pairs(lines: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(lines)
        .split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapter_header_lines_become_pairs() {
        assert_eq!(
            header_pairs(b"Authorization: Splunk t\r\nContent-Type: application/json\r\n"),
            vec![
                ("Authorization".to_string(), "Splunk t".to_string()),
                ("Content-Type".to_string(), "application/json".to_string())
            ]
        );
        assert!(header_pairs(b"").is_empty());
    }
}
