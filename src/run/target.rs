//! Where a run sends: the target's url resolved once at setup (DNS here, never on a worker),
//! the transport it implies, and — for `url: builtin` — the built-in sink to start instead.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::config::schema::{Adapter, Config, SyslogTransport};
use crate::run::error::SetupError;
use crate::sink;

/// How batches travel to the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Http,
    Https,
    SyslogTcp,
    SyslogTls,
    SyslogUdp,
    /// Syslog over RELP (`relp://`), each message acknowledged.
    Relp,
    /// RELP over TLS (`relp+tls://`).
    RelpTls,
}

impl Transport {
    pub fn is_tls(self) -> bool {
        matches!(
            self,
            Transport::Https | Transport::SyslogTls | Transport::RelpTls
        )
    }

    pub fn is_syslog(self) -> bool {
        matches!(
            self,
            Transport::SyslogTcp | Transport::SyslogTls | Transport::SyslogUdp
        ) || self.is_relp()
    }

    pub fn is_relp(self) -> bool {
        matches!(self, Transport::Relp | Transport::RelpTls)
    }

    /// Messages go without syslog framing: one per datagram (UDP) or one per RELP frame.
    pub fn unframed(self) -> bool {
        matches!(self, Transport::SyslogUdp) || self.is_relp()
    }
}

/// A resolved url: the host as written (for SNI and `Host:`), `host:port`, the address, and
/// the path with its query (HTTP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub host_port: String,
    pub addr: SocketAddr,
    pub path: String,
    /// Connect to this Unix socket instead of `addr` (plain HTTP's `--unix-socket`); the
    /// url then names only the `Host` header and the path.
    pub unix: Option<std::path::PathBuf>,
}

impl Endpoint {
    /// Where connections go, for a person: `127.0.0.1:8088` or `unix:/run/app.sock`.
    pub fn address(&self) -> String {
        match &self.unix {
            Some(p) => format!("unix:{}", p.display()),
            None => self.addr.to_string(),
        }
    }
}

/// Where events go.
pub enum Destination {
    /// Start the built-in sink in process and send to it.
    Builtin(sink::SinkConfig),
    Remote(Endpoint),
}

/// The transport a config asks for: the url's scheme, or for the built-in sink the adapter
/// (syslog over TCP unless `syslog.transport: udp`).
pub fn transport(c: &Config) -> Result<Transport, SetupError> {
    let t = &c.target;
    if t.url == "builtin" {
        let udp = t.syslog.as_ref().and_then(|s| s.transport) == Some(SyslogTransport::Udp);
        return Ok(match (t.adapter, udp) {
            (Adapter::Syslog, true) => Transport::SyslogUdp,
            (Adapter::Syslog, false) => Transport::SyslogTcp,
            _ => Transport::Http,
        });
    }
    let u = parse(&t.url)?;
    match u.scheme() {
        "http" => Ok(Transport::Http),
        "https" => Ok(Transport::Https),
        "tcp" => Ok(Transport::SyslogTcp),
        "tls" => Ok(Transport::SyslogTls),
        "udp" => Ok(Transport::SyslogUdp),
        "relp" => Ok(Transport::Relp),
        "relp+tls" => Ok(Transport::RelpTls),
        other => Err(SetupError::invalid(format!(
            "target.url: scheme {other:?} is not one of http, https, tcp, tls, udp, relp, relp+tls"
        ))),
    }
}

fn parse(url: &str) -> Result<url::Url, SetupError> {
    url::Url::parse(url).map_err(|e| {
        let shown = crate::config::redact::url(url);
        SetupError::invalid(format!("target.url {shown:?}: {e}"))
    })
}

/// Resolves a url's host (the first address it has).
pub fn resolve(url: &str) -> Result<Endpoint, SetupError> {
    let (u, host, port) = host_port(url)?;
    let addr = (host.trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(|e| SetupError::Dns(format!("cannot resolve {host}: {e}")))?
        .next()
        .ok_or_else(|| SetupError::Dns(format!("{host} resolves to no address")))?;
    Ok(endpoint(&u, host, port, addr, None))
}

/// A url whose connections go to the Unix socket `socket`: nothing is resolved; the url's
/// host and port are the `Host` header.
pub fn unix(url: &str, socket: &std::path::Path) -> Result<Endpoint, SetupError> {
    let (u, host, port) = host_port(url)?;
    let unused = SocketAddr::from(([127, 0, 0, 1], port));
    Ok(endpoint(&u, host, port, unused, Some(socket.to_path_buf())))
}

fn host_port(url: &str) -> Result<(url::Url, String, u16), SetupError> {
    let u = parse(url)?;
    let host = u
        .host_str()
        .ok_or_else(|| SetupError::invalid("target.url has no host"))?
        .to_string();
    let port = u
        .port_or_known_default()
        .ok_or_else(|| SetupError::invalid("target.url has no port"))?;
    Ok((u, host, port))
}

fn endpoint(
    u: &url::Url,
    host: String,
    port: u16,
    addr: SocketAddr,
    unix: Option<std::path::PathBuf>,
) -> Endpoint {
    let mut path = u.path().to_string();
    if let Some(q) = u.query() {
        path.push('?');
        path.push_str(q);
    }
    Endpoint {
        host_port: format!("{host}:{port}"),
        host,
        addr,
        path,
        unix,
    }
}

/// The endpoint of a started built-in sink for `transport`.
pub fn builtin_endpoint(h: &sink::SinkHandle, transport: Transport) -> Endpoint {
    let addr = match transport {
        Transport::SyslogTcp => h.syslog_tcp_addr(),
        Transport::SyslogUdp => h.syslog_udp_addr(),
        _ => None,
    }
    .unwrap_or_else(|| h.addr());
    Endpoint {
        host: "127.0.0.1".into(),
        host_port: addr.to_string(),
        addr,
        path: "/ingest".into(),
        unix: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_resolve_and_bad_names_are_dns_errors() {
        let e = resolve("http://127.0.0.1:8088/ingest?x=1").unwrap();
        assert_eq!(e.addr, "127.0.0.1:8088".parse().unwrap());
        assert_eq!(e.path, "/ingest?x=1");
        assert_eq!(e.host_port, "127.0.0.1:8088");
        let e = resolve("https://[::1]/x").unwrap();
        assert_eq!(e.addr.port(), 443);
        assert!(matches!(
            resolve("http://no-such-host.invalid:1/"),
            Err(SetupError::Dns(_))
        ));
        assert!(matches!(resolve("not a url"), Err(SetupError::Invalid(_))));
    }
}
