//! HTTPS for the ureq calls that are not the load (the probe's HEC health and auth steps, the
//! verifier's search APIs): a ureq connector that wraps ureq's TCP transport in the run's own
//! rustls `ClientConfig` and server name (`net::tls::TlsClient`), because ureq's own TLS
//! options cannot say everything `target.tls` can (public roots *and* a CA file, a
//! `server_name` other than the url's host). The connector API is ureq's `unversioned` one:
//! Cargo.lock pins ureq, and a ureq update that changes it fails to build here, not at run time.

use std::io::{Read, Write};

use rustls::{ClientConnection, StreamOwned};
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, TcpConnector,
    Transport, TransportAdapter,
};

use crate::net::tls::TlsClient;

/// An agent with `config`, over TLS with `tls` when given (plain HTTP otherwise).
pub fn agent(config: ureq::config::Config, tls: Option<&TlsClient>) -> ureq::Agent {
    match tls {
        Some(t) => ureq::Agent::with_parts(
            config,
            ().chain(TcpConnector::default())
                .chain(SharedTls(t.clone())),
            DefaultResolver::default(),
        ),
        None => ureq::Agent::new_with_config(config),
    }
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
        let output = self.buffers.output();
        let output = output.get(..amount).unwrap_or(output);
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
