//! TLS for client connections (syslog over TLS, HTTPS) with rustls and the ring provider:
//! building the client configuration once per run from `TlsSettings` (webpki roots plus a CA
//! file, client certificate, SNI name, verification off only on request), and naming a
//! handshake failure the way an operator thinks of it (expired, unknown issuer, name mismatch).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme,
};

/// How to check the target and present ourselves; the run layer fills it from `target.tls`.
#[derive(Clone, Debug)]
pub struct TlsSettings {
    /// Check the target's certificate (off only on request).
    pub verify: bool,
    /// More trusted roots, beside the public web ones.
    pub ca_file: Option<PathBuf>,
    /// Certificate chain and key for mutual TLS.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// The name sent (SNI) and checked; the url's host when `None`.
    pub server_name: Option<String>,
}

impl Default for TlsSettings {
    fn default() -> Self {
        TlsSettings {
            verify: true,
            ca_file: None,
            client_cert: None,
            server_name: None,
        }
    }
}

/// What a connection needs to start a TLS session.
#[derive(Clone, Debug)]
pub struct TlsClient {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Builds the client side for `host` (the url's host). Errors name the file or setting
/// (`target.tls.ca_file: …`).
pub fn client(tls: &TlsSettings, host: &str) -> Result<TlsClient, String> {
    let verify = tls.verify;
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("TLS setup: {e}"))?;
    let builder = if verify {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        if let Some(ca) = &tls.ca_file {
            let certs = read_certs(ca).map_err(|e| format!("target.tls.ca_file: {e}"))?;
            for c in certs {
                roots
                    .add(c)
                    .map_err(|e| format!("target.tls.ca_file {}: {e}", ca.display()))?;
            }
        }
        builder.with_root_certificates(roots)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider())))
    };
    let config = match &tls.client_cert {
        Some((cert, key)) => {
            let chain = read_certs(cert).map_err(|e| format!("target.tls.client_cert: {e}"))?;
            let pem = crate::fsio::read_bytes(key, MAX_PEM_BYTES)
                .map_err(|e| format!("target.tls.client_key {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(&pem)
                .map_err(|e| format!("target.tls.client_key {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("target.tls client certificate: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    let name = tls
        .server_name
        .clone()
        .unwrap_or_else(|| host.trim_matches(['[', ']']).to_string());
    let server_name = ServerName::try_from(name.clone())
        .map_err(|_| format!("{name:?} is not a valid TLS server name"))?;
    Ok(TlsClient {
        config: Arc::new(config),
        server_name,
    })
}

/// The same client with certificate verification off: for showing a chain the real
/// handshake refused (the probe's second handshake), never for sending.
pub fn without_verification(c: &TlsClient) -> TlsClient {
    let mut config = (*c.config).clone();
    config
        .dangerous()
        .set_certificate_verifier(Arc::new(NoVerify(provider())));
    TlsClient {
        config: Arc::new(config),
        server_name: c.server_name.clone(),
    }
}

/// The most a PEM file (CA bundle, certificate chain, key) may be: a system CA bundle is
/// about 200 KB.
pub const MAX_PEM_BYTES: u64 = 4 << 20;

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = crate::fsio::read_bytes(path, MAX_PEM_BYTES).map_err(|e| e.to_string())?;
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&pem)
        .map(|c| c.map(|c| c.into_owned()))
        .collect();
    let certs = certs.map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no PEM certificate in it", path.display()));
    }
    Ok(certs)
}

/// A handshake failure in an operator's words.
pub fn describe(e: &Error) -> String {
    match e {
        Error::InvalidCertificate(c) => match c {
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the server's certificate has expired".into()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet".into()
            }
            CertificateError::UnknownIssuer => {
                "the server's certificate has an unknown issuer (not signed by a trusted CA; see target.tls.ca_file)".into()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "certificate name mismatch: the server's certificate is not valid for the name asked for (see target.tls.server_name)".into()
            }
            CertificateError::Revoked => "the server's certificate is revoked".into(),
            other => format!("invalid server certificate: {other:?}"),
        },
        Error::AlertReceived(a) => format!("the server refused the handshake (TLS alert {a:?})"),
        Error::InvalidMessage(m) => format!(
            "the server's answer to the TLS handshake is not TLS ({m:?}): the port speaks plain \
             TCP or HTTP and the url asks for TLS (use http:// or tcp://)"
        ),
        Error::NoCertificatesPresented => "the server presented no certificate".into(),
        other => format!("TLS error: {other}"),
    }
}

/// Whether `data` starts like a TLS record (an alert or a handshake, TLS 1.0–1.3): what a
/// TLS port answers a plain-text request with.
pub fn looks_like_tls(data: &[u8]) -> bool {
    matches!(data, [0x15 | 0x16, 0x03, 0x00..=0x04, ..])
}

/// Whether `addr` answers a TLS ClientHello as a TLS server does (a handshake record or an
/// alert), within `wait` for the connect and the answer: asked once, after the fact, of a
/// plain `http://` target that closed every connection before any answer, to name a TLS port
/// (its alert to a plain request can be lost to the reset that follows it). Blocking; never
/// on a worker's loop.
pub fn answers_tls(addr: std::net::SocketAddr, wait: std::time::Duration) -> bool {
    use std::io::Read;
    let Ok(c) = client(
        &TlsSettings {
            verify: false,
            ..TlsSettings::default()
        },
        "localhost",
    ) else {
        return false;
    };
    let Ok(mut conn) = rustls::ClientConnection::new(c.config, c.server_name) else {
        return false;
    };
    let Ok(mut tcp) = std::net::TcpStream::connect_timeout(&addr, wait) else {
        return false;
    };
    let mut got = [0u8; 5];
    let answered = tcp
        .set_read_timeout(Some(wait))
        .and_then(|()| tcp.set_write_timeout(Some(wait)))
        .and_then(|()| conn.write_tls(&mut tcp))
        .and_then(|_| tcp.read(&mut got));
    answered.is_ok_and(|n| looks_like_tls(got.get(..n).unwrap_or_default()))
}

/// `tls.verify: false`: accept any certificate (the run prints a warning).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_operator_words() {
        assert!(
            describe(&Error::InvalidCertificate(CertificateError::Expired)).contains("expired")
        );
        assert!(
            describe(&Error::InvalidCertificate(CertificateError::UnknownIssuer))
                .contains("unknown issuer")
        );
        assert!(
            describe(&Error::InvalidCertificate(
                CertificateError::NotValidForName
            ))
            .contains("name mismatch")
        );
    }

    #[test]
    fn plain_text_and_tls_records_are_told_apart() {
        assert!(looks_like_tls(b"\x15\x03\x03\x00\x02\x02\x46"));
        assert!(looks_like_tls(b"\x16\x03\x01\x02\x00"));
        assert!(!looks_like_tls(b"HTTP/1.1 400 Bad Request\r\n"));
        assert!(!looks_like_tls(b"\x15\x03"));
        assert!(
            describe(&Error::InvalidMessage(
                rustls::InvalidMessage::InvalidContentType
            ))
            .contains("not TLS")
        );
    }

    #[test]
    fn bad_ca_file_is_named() {
        let t = TlsSettings {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..TlsSettings::default()
        };
        let e = client(&t, "localhost").unwrap_err();
        assert!(e.contains("target.tls.ca_file"), "{e}");
        assert!(client(&TlsSettings::default(), "127.0.0.1").is_ok());
    }
}
