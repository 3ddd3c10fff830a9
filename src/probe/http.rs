//! HTTP calls of a probe that are not the load (HEC health, the auth step's one event, the
//! sink's `/stats`), with ureq. ureq's own TLS settings cannot say everything `target.tls`
//! can (public roots *and* a CA file, a `server_name` other than the url's host), so HTTPS
//! goes through `SharedTls`, a ureq connector that wraps ureq's TCP transport in the run's own
//! rustls `ClientConfig` and server name (`net::tls::TlsClient`). The connector API is ureq's
//! `unversioned` one: Cargo.lock pins ureq, and a ureq update that changes it fails to build
//! here, not at run time.

use std::io::{Read, Write};
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, TcpConnector,
    Transport, TransportAdapter,
};

use crate::net::tls::TlsClient;
use crate::run::target::Endpoint;

/// An answer: status, a few headers, and the body (at most 64 KiB of it).
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
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
}

const MAX_BODY: u64 = 64 * 1024;

impl Http {
    /// For `ep`, over TLS with `tls` when given; every call is bounded by `timeout`.
    pub fn new(ep: &Endpoint, tls: Option<&TlsClient>, timeout: Duration) -> Http {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .build();
        let (scheme, agent) = match tls {
            Some(t) => (
                "https",
                ureq::Agent::with_parts(
                    config,
                    ().chain(TcpConnector::default())
                        .chain(SharedTls(t.clone())),
                    DefaultResolver::default(),
                ),
            ),
            None => ("http", ureq::Agent::new_with_config(config)),
        };
        // The address, not the name: the probe's resolve step chose it, as a run does.
        Http {
            agent,
            base: format!("{scheme}://{}", ep.host_port),
        }
    }

    pub fn get(&self, path: &str) -> Result<Answer, String> {
        let r = self.agent.get(format!("{}{path}", self.base)).call();
        answer(r)
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
        answer(req.send(body))
    }
}

fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<Answer, String> {
    let mut resp = r.map_err(|e| match e {
        ureq::Error::Timeout(_) => "no answer in time".to_string(),
        ureq::Error::Io(e) => e.to_string(),
        other => other.to_string(),
    })?;
    let status = resp.status().as_u16();
    let mut body = Vec::new();
    resp.body_mut()
        .as_reader()
        .take(MAX_BODY)
        .read_to_end(&mut body)
        .map_err(|e| format!("reading the answer: {e}"))?;
    Ok(Answer { status, body })
}

/// The header lines an adapter renders (`Name: value\r\n`…) as pairs.
pub fn header_pairs(lines: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(lines)
        .split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// ureq's TCP transport wrapped in the run's rustls client.
#[derive(Debug)]
struct SharedTls(TlsClient);

impl<In: Transport> Connector<In> for SharedTls {
    type Out = Either<In, TlsTransport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        let mut conn = ClientConnection::new(self.0.config.clone(), self.0.server_name.clone())?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(details.timeout);
        conn.complete_io(&mut sock)?;
        Ok(Some(Either::B(TlsTransport {
            buffers: LazyBuffers::new(
                details.config.input_buffer_size(),
                details.config.output_buffer_size(),
            ),
            stream: StreamOwned::new(conn, sock),
        })))
    }
}

struct TlsTransport {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl std::fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsTransport")
    }
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let n = self.stream.read(input)?;
        self.buffers.input_appended(n);
        Ok(n > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
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
