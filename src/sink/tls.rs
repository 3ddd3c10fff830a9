//! TLS for the sink's listeners (HTTPS and syslog over TLS, RFC 5425) with rustls and the
//! ring provider, and `Io`: one accepted TCP connection, plain or TLS, read and written
//! without ever blocking.
//!
//! The server configs are built once at start from PEM files (certificate chain, private key,
//! and optionally a CA whose client certificates are then required); TLS 1.2 and 1.3.
//!
//! A TLS `Io` reads ciphertext off the socket in 64 KiB reads into its own buffer and feeds
//! rustls from there (rustls alone would read 4 KiB per syscall), decrypts, and hands out
//! plaintext; handshake records are written as soon as rustls has them, and whatever the
//! socket would not take is written on the next writable event. A handshake that fails is an
//! error for this connection only; the worker counts it (`tls_handshake_errors`) and closes it.

use std::io::{self, ErrorKind, Read, Write};
use std::path::Path;
use std::sync::Arc;

use mio::net::TcpStream;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};

/// Where the sink's certificate and key are, and whether clients must present one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkTls {
    /// PEM certificate chain, leaf first.
    pub cert: std::path::PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key: std::path::PathBuf,
    /// PEM CA certificates; when set, clients must present a certificate issued by one.
    pub client_ca: Option<std::path::PathBuf>,
}

/// Ciphertext read per syscall.
const CIPHER_READ: usize = 64 * 1024;

/// Builds a server config; `alpn` is offered as given (HTTPS says `http/1.1`). `tickets`:
/// whether to send TLS 1.3 session tickets after the handshake. Syslog says no: a syslog
/// client never reads, so tickets would sit unread in its receive buffer, and closing a
/// socket with unread data sends a reset, which makes the sink's kernel drop whatever of the
/// client's last messages the sink had not read yet.
pub(crate) fn server_config(
    t: &SinkTls,
    alpn: &[&[u8]],
    tickets: bool,
) -> Result<Arc<ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = read_certs(&t.cert, "--tls-cert")?;
    let key = PrivateKeyDer::from_pem_file(&t.key)
        .map_err(|e| format!("--tls-key {}: no private key read ({e})", t.key.display()))?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = match &t.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for c in read_certs(ca, "--tls-client-ca")? {
                roots.add(c).map_err(|e| {
                    format!(
                        "--tls-client-ca {}: not a CA certificate ({e})",
                        ca.display()
                    )
                })?;
            }
            let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| format!("--tls-client-ca {}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(v)
        }
    };
    let mut cfg = builder.with_single_cert(certs, key).map_err(|e| {
        format!(
            "--tls-cert {} / --tls-key {}: {e}",
            t.cert.display(),
            t.key.display()
        )
    })?;
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    if !tickets {
        cfg.send_tls13_tickets = 0;
    }
    Ok(Arc::new(cfg))
}

fn read_certs(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{flag} {}: no PEM certificate in it",
            path.display()
        ));
    }
    Ok(certs)
}

/// A connection's TLS state.
pub(crate) struct Tls {
    conn: ServerConnection,
    /// Ciphertext read off the socket and not yet given to rustls: `cin[cpos..cend]`.
    cin: Box<[u8]>,
    cpos: usize,
    cend: usize,
    /// The socket said end of file.
    eof: bool,
    /// Ciphertext bytes received in all (a connect-and-close is not a failed handshake).
    bytes_in: u64,
    /// rustls refused what the peer sent.
    failed: bool,
}

/// One accepted connection: the socket, and TLS when the listener has it.
pub(crate) struct Io {
    pub sock: TcpStream,
    tls: Option<Box<Tls>>,
}

impl Io {
    pub fn plain(sock: TcpStream) -> Io {
        Io { sock, tls: None }
    }

    pub fn tls(sock: TcpStream, cfg: &Arc<ServerConfig>) -> io::Result<Io> {
        let conn = ServerConnection::new(cfg.clone()).map_err(io::Error::other)?;
        Ok(Io {
            sock,
            tls: Some(Box::new(Tls {
                conn,
                cin: vec![0; CIPHER_READ].into_boxed_slice(),
                cpos: 0,
                cend: 0,
                eof: false,
                bytes_in: 0,
                failed: false,
            })),
        })
    }

    /// Reads plaintext: `Ok(0)` at the end of the stream (TCP EOF, or TLS close_notify),
    /// `WouldBlock` when nothing more can be had now.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.tls {
            None => self.sock.read(buf),
            Some(t) => t.read(&mut self.sock, buf),
        }
    }

    /// Writes plaintext; for TLS the bytes are taken into rustls (bounded by its buffer
    /// limit) and as much ciphertext as the socket takes is written.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.tls {
            None => self.sock.write(buf),
            Some(t) => t.write(&mut self.sock, buf),
        }
    }

    /// Writes ciphertext rustls holds (handshake records, or the rest of a response):
    /// `Ok(())` once none is left, `WouldBlock` while the socket is full.
    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.tls {
            None => Ok(()),
            Some(t) => t.flush(&mut self.sock),
        }
    }

    /// Output is still waiting in rustls.
    pub fn wants_write(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.conn.wants_write())
    }

    /// The connection is TLS and its handshake failed or was cut short: the peer sent
    /// something and the handshake did not complete.
    pub fn handshake_failed(&self) -> bool {
        self.tls
            .as_ref()
            .is_some_and(|t| t.conn.is_handshaking() && (t.failed || t.bytes_in > 0))
    }

    /// A graceful close: TLS sends close_notify (best effort, never waits).
    pub fn close_notify(&mut self) {
        if let Some(t) = &mut self.tls
            && !t.conn.is_handshaking()
        {
            t.conn.send_close_notify();
            let _ = t.flush(&mut self.sock);
        }
    }
}

impl Tls {
    fn read(&mut self, sock: &mut TcpStream, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if self.cpos < self.cend {
                let mut pending = self.cin.get(self.cpos..self.cend).unwrap_or_default();
                let n = self.conn.read_tls(&mut pending)?;
                self.cpos += n;
                self.process(sock)?;
                continue;
            }
            if self.eof {
                // Let rustls see the end (an empty reader reads 0), then report it.
                let _ = self.conn.read_tls(&mut io::empty());
                self.process(sock)?;
                return match self.conn.reader().read(buf) {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Ok(0),
                };
            }
            match sock.read(&mut self.cin) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.cpos = 0;
                    self.cend = n;
                    self.bytes_in += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Decrypts what rustls has read and writes what it wants to say (handshake records,
    /// alerts). A protocol error is returned after the alert is sent, best effort.
    fn process(&mut self, sock: &mut TcpStream) -> io::Result<()> {
        if let Err(e) = self.conn.process_new_packets() {
            self.failed = true;
            let _ = self.conn.write_tls(sock);
            return Err(io::Error::new(ErrorKind::InvalidData, e));
        }
        match self.flush(sock) {
            Err(e) if e.kind() != ErrorKind::WouldBlock => Err(e),
            _ => Ok(()),
        }
    }

    fn write(&mut self, sock: &mut TcpStream, buf: &[u8]) -> io::Result<usize> {
        // Older ciphertext first, so rustls's buffer stays bounded.
        self.flush(sock)?;
        let n = self.conn.writer().write(buf)?;
        if n == 0 && !buf.is_empty() {
            return Err(ErrorKind::WouldBlock.into());
        }
        match self.flush(sock) {
            Err(e) if e.kind() != ErrorKind::WouldBlock => Err(e),
            _ => Ok(n),
        }
    }

    fn flush(&mut self, sock: &mut TcpStream) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(sock) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
