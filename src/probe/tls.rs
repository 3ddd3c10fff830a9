//! The TLS step: a handshake on the connect step's socket with the run's own client config
//! (`net::tls`, so `target.tls` — ca_file, verify, server_name, client certificate — means
//! what it means for the load), described: protocol version, cipher suite, ALPN, the SNI
//! sent, and the chain (subject, issuer, validity, days left) parsed with x509-parser. A
//! certificate that expires within 14 days is a warning. When verification refuses the
//! server, the step fails with the reason in words and still shows the chain, fetched by a
//! second handshake that does not verify and is used only for display.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConnection, StreamOwned};
use serde::Serialize;
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

use crate::exit::Exit;
use crate::net::tls::{self, TlsClient};
use crate::probe::setup::{Stream, transport_name};
use crate::probe::{Ctx, Step, cut_off};

const NAME: &str = "tls";

/// A certificate expiring within this many days is a warning.
pub const WARN_DAYS: i64 = 14;

/// One certificate of the chain the server presented.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CertInfo {
    pub subject: String,
    pub issuer: String,
    pub not_before: String,
    pub not_after: String,
    /// Whole days from now to `not_after` (negative once expired).
    pub days_left: i64,
    /// DNS names and IP addresses in the subject alternative name.
    pub names: Vec<String>,
}

/// What the handshake agreed.
#[derive(Clone, Debug, Serialize)]
struct Session {
    version: Option<String>,
    cipher: Option<String>,
    alpn: Option<String>,
    sni: Option<String>,
    verified: bool,
}

pub fn handshake(ctx: &mut Ctx<'_>, left: Duration) -> Step {
    if !ctx.transport.is_tls() {
        let why = if ctx.sink.is_some() {
            "not applicable: the built-in sink of a run speaks plain TCP".to_string()
        } else {
            format!(
                "not applicable: {} is not TLS",
                transport_name(ctx.transport)
            )
        };
        return Step::skipped(NAME, why);
    }
    let Some(client) = ctx.plan.as_ref().and_then(|p| p.tls.clone()) else {
        return Step::fail(NAME, "no TLS client was planned", Exit::Aborted);
    };
    let verify = ctx.config.target.tls.as_ref().is_none_or(|t| t.verify);
    let Some(Stream::Tcp(mut tcp)) = ctx.stream.take() else {
        return Step::fail(NAME, "no connection to start TLS on", Exit::Aborted);
    };
    let t0 = Instant::now();
    let mut conn = match ClientConnection::new(client.config.clone(), client.server_name.clone()) {
        Ok(c) => c,
        Err(e) => return Step::fail(NAME, tls::describe(&e), Exit::Aborted),
    };
    // The run's wait for a first handshake: a port that never answers one is named as such.
    let wait = left.min(crate::net::conn::FIRST_SETUP_WAIT);
    if let Err(e) = drive(&mut conn, &mut tcp, wait) {
        let why = if wait < left
            && matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) {
            format!(
                "no answer to the TLS handshake in {:.1} s — the port may speak plain TCP or HTTP while the url asks for TLS",
                wait.as_secs_f64()
            )
        } else {
            words(&e, ctx.opts.timeout)
        };
        let left = left.saturating_sub(t0.elapsed());
        let checked = checked_name(&client);
        let step = Step::fail(NAME, why, Exit::Aborted)
            .line(format!(
                "name checked {checked}, SNI {}",
                sni(&client)
                    .as_deref()
                    .unwrap_or("not sent (an IP address)")
            ))
            .detail("server_name", &checked)
            .detail("sni", sni(&client));
        return match (ctx.addr, left.is_zero()) {
            (Some(addr), false) => with_display_chain(step, addr, &client, left),
            _ => step,
        };
    }
    let session = Session {
        version: conn.protocol_version().map(version_name),
        cipher: conn
            .negotiated_cipher_suite()
            .map(|s| s.suite())
            .map(|s| s.as_str().map_or_else(|| format!("{s:?}"), str::to_string)),
        alpn: conn
            .alpn_protocol()
            .map(|a| String::from_utf8_lossy(a).into_owned()),
        sni: sni(&client),
        verified: verify,
    };
    let chain = chain_of(conn.peer_certificates().unwrap_or(&[]));
    let mut step = Step::pass(
        NAME,
        format!(
            "{}, {}",
            session.version.as_deref().unwrap_or("?"),
            session.cipher.as_deref().unwrap_or("?")
        ),
    )
    .line(format!(
        "SNI {}, ALPN {}, certificate {}",
        session.sni.as_deref().unwrap_or("not sent (an IP address)"),
        session
            .alpn
            .as_deref()
            .unwrap_or("none (the client offers none)"),
        if verify {
            "verified"
        } else {
            "NOT verified (target.tls.verify: false)"
        }
    ));
    step = describe_chain(step, &chain);
    step = step
        .detail("version", &session.version)
        .detail("cipher", &session.cipher)
        .detail("alpn", &session.alpn)
        .detail("sni", &session.sni)
        .detail("server_name", checked_name(&client))
        .detail("verified", session.verified)
        .detail("chain", &chain);
    if !verify {
        step = step.warn("the certificate is not verified (target.tls.verify: false)");
    }
    if let Some(w) = expiry_warning(&chain) {
        step = step.warn(w);
    }
    ctx.stream = Some(Stream::Tls(Box::new(StreamOwned::new(conn, tcp))));
    step
}

/// Runs the handshake to its end on a blocking socket bounded by `left`.
fn drive(conn: &mut ClientConnection, tcp: &mut TcpStream, left: Duration) -> io::Result<()> {
    tcp.set_read_timeout(Some(left))?;
    tcp.set_write_timeout(Some(left))?;
    while conn.is_handshaking() {
        conn.complete_io(tcp)?;
    }
    Ok(())
}

/// A failed handshake in an operator's words.
fn words(e: &io::Error, timeout: Duration) -> String {
    if let Some(re) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return tls::describe(re);
    }
    match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => cut_off(timeout),
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => {
            "the server closed the connection during the handshake (does it speak TLS on this port?)".into()
        }
        _ => format!("TLS handshake: {e}"),
    }
}

/// The failed step with the chain a non-verifying handshake sees.
fn with_display_chain(step: Step, addr: SocketAddr, client: &TlsClient, left: Duration) -> Step {
    let fetched = (|| -> io::Result<Vec<CertInfo>> {
        let mut tcp = TcpStream::connect_timeout(&addr, left)?;
        let shown = tls::without_verification(client);
        let mut conn =
            ClientConnection::new(shown.config, shown.server_name).map_err(io::Error::other)?;
        drive(&mut conn, &mut tcp, left)?;
        Ok(chain_of(conn.peer_certificates().unwrap_or(&[])))
    })();
    match fetched {
        Ok(chain) => describe_chain(
            step.line(
                "the chain the server presents (fetched without verification, for display only):",
            ),
            &chain,
        )
        .detail("chain", &chain),
        Err(e) => step.line(format!(
            "chain not shown: a second handshake failed too: {e}"
        )),
    }
}

fn describe_chain(mut step: Step, chain: &[CertInfo]) -> Step {
    for (i, c) in chain.iter().enumerate() {
        step = step.line(format!(
            "[{i}] subject {}; issuer {}; not after {} ({} days left){}",
            c.subject,
            c.issuer,
            c.not_after,
            c.days_left,
            if c.names.is_empty() {
                String::new()
            } else {
                format!("; names {}", c.names.join(", "))
            }
        ));
    }
    step
}

/// The warning for the certificate of the chain that expires first, when within 14 days.
pub fn expiry_warning(chain: &[CertInfo]) -> Option<String> {
    let c = chain.iter().min_by_key(|c| c.days_left)?;
    if c.days_left >= WARN_DAYS {
        return None;
    }
    Some(if c.days_left < 0 {
        format!(
            "the certificate of {} expired on {}",
            c.subject, c.not_after
        )
    } else {
        format!(
            "the certificate of {} expires in {} days ({}), within {WARN_DAYS}",
            c.subject, c.days_left, c.not_after
        )
    })
}

/// The name the certificate is checked against.
fn checked_name(c: &TlsClient) -> String {
    match &c.server_name {
        ServerName::DnsName(n) => n.as_ref().to_string(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => format!("{other:?}"),
    }
}

fn sni(c: &TlsClient) -> Option<String> {
    match &c.server_name {
        ServerName::DnsName(n) if c.config.enable_sni => Some(n.as_ref().to_string()),
        _ => None,
    }
}

fn version_name(v: rustls::ProtocolVersion) -> String {
    match v {
        rustls::ProtocolVersion::TLSv1_3 => "TLS 1.3".into(),
        rustls::ProtocolVersion::TLSv1_2 => "TLS 1.2".into(),
        other => format!("{other:?}"),
    }
}

fn chain_of(certs: &[CertificateDer<'_>]) -> Vec<CertInfo> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    certs.iter().map(|c| cert_info(c, now)).collect()
}

/// One certificate, described; `now` in seconds since the epoch.
pub fn cert_info(der: &[u8], now: i64) -> CertInfo {
    let c = match X509Certificate::from_der(der) {
        Ok((_, c)) => c,
        Err(e) => {
            return CertInfo {
                subject: format!("(cannot be parsed: {e})"),
                issuer: String::new(),
                not_before: String::new(),
                not_after: String::new(),
                days_left: 0,
                names: Vec::new(),
            };
        }
    };
    let v = c.validity();
    let not_after = v.not_after.timestamp();
    let mut names = Vec::new();
    if let Ok(Some(san)) = c.subject_alternative_name() {
        for n in &san.value.general_names {
            match n {
                GeneralName::DNSName(d) => names.push((*d).to_string()),
                GeneralName::IPAddress(b) => names.push(ip_text(b)),
                _ => {}
            }
        }
    }
    CertInfo {
        subject: c.subject().to_string(),
        issuer: c.issuer().to_string(),
        not_before: time_text(v.not_before.timestamp()),
        not_after: time_text(not_after),
        days_left: (not_after - now).div_euclid(86_400),
        names,
    }
}

fn ip_text(b: &[u8]) -> String {
    match b.len() {
        4 => match *b {
            [a, b, c, d] => std::net::Ipv4Addr::new(a, b, c, d).to_string(),
            _ => String::new(),
        },
        16 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            std::net::Ipv6Addr::from(a).to_string()
        }
        _ => format!("{b:02x?}"),
    }
}

/// RFC 3339 UTC, seconds.
fn time_text(secs: i64) -> String {
    match u64::try_from(secs) {
        Ok(s) => humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(s)).to_string(),
        Err(_) => format!("{secs} s before 1970"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(days_left: i64) -> CertInfo {
        CertInfo {
            subject: "CN=x".into(),
            issuer: "CN=ca".into(),
            not_before: String::new(),
            not_after: "2030-01-01T00:00:00Z".into(),
            days_left,
            names: vec![],
        }
    }

    #[test]
    fn expiry_within_14_days_warns() {
        assert_eq!(expiry_warning(&[cert(400), cert(3000)]), None);
        assert_eq!(expiry_warning(&[cert(14)]), None);
        assert!(
            expiry_warning(&[cert(400), cert(13)])
                .unwrap()
                .contains("13 days")
        );
        assert!(expiry_warning(&[cert(-2)]).unwrap().contains("expired"));
        assert_eq!(expiry_warning(&[]), None);
    }

    #[test]
    fn garbage_is_described_not_a_panic() {
        let c = cert_info(b"not a certificate", 0);
        assert!(c.subject.contains("cannot be parsed"), "{}", c.subject);
        assert_eq!(time_text(0), "1970-01-01T00:00:00Z");
        assert_eq!(ip_text(&[127, 0, 0, 1]), "127.0.0.1");
    }
}
