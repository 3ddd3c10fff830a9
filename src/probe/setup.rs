//! What a probe works on: a config (from a file, or made from `--url` by `url_config`) turned
//! into a `Ctx` — the run library's plan of a 5-event run (token, TLS client, pack, framing:
//! the load's own), the host and port to look up, and for `url: builtin` the built-in sink
//! started here, in process, so every step probes the same sink. Steps fill in what they find
//! (the address, the open connection) for the steps after them.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};

use crate::config::schema::{Adapter, AuthScheme, Config, Observability};
use crate::config::secrets::Store;
use crate::pack::Catalog;
use crate::probe::TargetInfo;
use crate::run::target::{self, Destination, Endpoint, Transport};
use crate::run::{self, Overrides, RunPlan, SetupError};
use crate::sink::{self, SinkHandle};
use crate::yaml::quoted as q;

/// How a probe runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The whole probe's bound; each step gets what is left.
    pub timeout: Duration,
    /// End with a short ceiling search.
    pub ceiling: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(30),
            ceiling: false,
        }
    }
}

/// Events in the framing step's batch.
pub const BATCH_EVENTS: u64 = 5;

/// A connection the connect and TLS steps opened, for the auth step's syslog message.
pub enum Stream {
    Tcp(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
    Udp(UdpSocket),
}

/// A probe's working state.
pub struct Ctx<'a> {
    pub opts: Options,
    pub catalog: &'a Catalog,
    pub store: &'a Store,
    /// The config as read, `observability` cleared (a probe writes no report, serves nothing).
    pub config: Config,
    pub transport: Transport,
    /// What the resolve step looks up.
    pub host: String,
    pub port: u16,
    /// The plan of the probe's small run; `None` when the target's name did not resolve at
    /// setup (`plan_error` says why; the resolve step reports it).
    pub plan: Option<RunPlan>,
    pub plan_error: Option<String>,
    /// Where the probe sends (the built-in sink's address when it is the target).
    pub endpoint: Option<Endpoint>,
    /// The built-in sink, when the url is `builtin`.
    pub sink: Option<SinkHandle>,
    pub run_id: String,
    pub warnings: Vec<String>,
    /// Filled by the resolve step: the address the load would use (the first).
    pub addr: Option<SocketAddr>,
    /// Filled by the connect and TLS steps.
    pub stream: Option<Stream>,
}

/// The overrides of the probe's run: 5 events, one thread, one connection, at once.
pub fn batch_overrides(seed: Option<u64>) -> Overrides {
    Overrides {
        total: Some(BATCH_EVENTS),
        eps: Some(1000.0),
        threads: Some(1),
        workers: Some(1),
        no_pin: true,
        seed,
        ..Overrides::default()
    }
}

impl<'a> Ctx<'a> {
    /// Plans the probe of `config`; a config, pack or token problem is an error (exit 2), and
    /// so is a built-in sink that cannot start (6). A name that does not resolve is not: the
    /// resolve step reports it.
    pub fn new(
        mut config: Config,
        warnings: Vec<String>,
        opts: Options,
        catalog: &'a Catalog,
        store: &'a Store,
    ) -> Result<Ctx<'a>, SetupError> {
        config.observability = Observability::default();
        config.workload.warmup = Default::default();
        // The probe's own runs are one batch each; a search (`--ceiling`) is its last step,
        // which sets the search again (`probe::ceiling`).
        config.workload.find_ceiling = false;
        let transport = target::transport(&config)?;
        let mut ctx = Ctx {
            opts,
            catalog,
            store,
            transport,
            host: String::new(),
            port: 0,
            plan: None,
            plan_error: None,
            endpoint: None,
            sink: None,
            run_id: String::new(),
            warnings,
            addr: None,
            stream: None,
            config,
        };
        match run::plan(ctx.config.clone(), &batch_overrides(None), catalog, store) {
            Ok(plan) => ctx.take_plan(plan)?,
            Err(SetupError::Dns(m)) => {
                let u = url::Url::parse(&ctx.config.target.url)
                    .map_err(|e| SetupError::invalid(format!("target.url: {e}")))?;
                ctx.host = u.host_str().unwrap_or_default().to_string();
                ctx.port = u.port_or_known_default().unwrap_or(0);
                ctx.plan_error = Some(m);
            }
            Err(e) => return Err(e),
        }
        Ok(ctx)
    }

    fn take_plan(&mut self, plan: RunPlan) -> Result<(), SetupError> {
        self.warnings.extend(plan.warnings.iter().cloned());
        self.run_id = plan.run_id.clone();
        // The seed the plan drew, so the framing step's run renders the same events.
        self.config.seed = plan.config.seed;
        let ep = match &plan.destination {
            Destination::Builtin(sc) => {
                let h = sink::start(sc.clone()).map_err(SetupError::Sink)?;
                let ep = target::builtin_endpoint(&h, plan.transport);
                self.sink = Some(h);
                ep
            }
            Destination::Remote(ep) => ep.clone(),
        };
        self.host = ep.host.trim_matches(['[', ']']).to_string();
        self.port = ep.addr.port();
        self.endpoint = Some(ep);
        self.plan = Some(plan);
        Ok(())
    }

    /// The config of a run aimed at the endpoint this probe talks to: the built-in sink's
    /// address in place of `builtin` (so a run plans to the same sink), else as configured.
    pub fn config_for_run(&self) -> Config {
        let mut c = self.config.clone();
        if let (Some(_), Some(ep)) = (&self.sink, &self.endpoint) {
            c.target.url = match self.transport {
                Transport::SyslogTcp => format!("tcp://{}", ep.addr),
                Transport::SyslogUdp => format!("udp://{}", ep.addr),
                _ => format!("http://{}{}", ep.addr, ep.path),
            };
        }
        c
    }

    pub fn target_info(&self) -> TargetInfo {
        TargetInfo {
            adapter: self.config.target.adapter.to_string(),
            url: crate::config::redact::url(&self.config.target.url).into_owned(),
            address: self
                .endpoint
                .as_ref()
                .map(|e| e.addr.to_string())
                .unwrap_or_else(|| format!("{}:{}", self.host, self.port)),
            transport: transport_name(self.transport).into(),
            source: self.config.source_label(),
        }
    }

    /// Closes what the probe opened (the connection, the built-in sink).
    pub fn finish(&mut self) {
        self.stream = None;
        if let Some(h) = self.sink.take() {
            h.shutdown();
        }
    }
}

pub fn transport_name(t: Transport) -> &'static str {
    match t {
        Transport::Http => "http",
        Transport::Https => "https",
        Transport::SyslogTcp => "syslog+tcp",
        Transport::SyslogUdp => "syslog+udp",
        Transport::SyslogTls => "syslog+tls",
        Transport::Relp => "relp",
        Transport::RelpTls => "relp+tls",
    }
}

/// A target given on the command line (`--url`), probed with defaults.
#[derive(Clone, Debug, Default)]
pub struct UrlTarget {
    pub url: String,
    pub adapter: Option<Adapter>,
    /// The source pack (default: aws.cloudtrail, linux.syslog for syslog).
    pub source: Option<String>,
    pub token_env: Option<String>,
    pub token_secret: Option<String>,
    /// The auth scheme (default: splunk for HEC, x-api-key for lphc).
    pub auth: Option<AuthScheme>,
    pub ca_file: Option<String>,
    pub server_name: Option<String>,
}

/// The adapter a url implies, when it implies one: tcp://, udp://, tls://, relp://, relp+tls://
/// are syslog; a path
/// under /services/collector is HEC; another path is an lphc collector's endpoint. A bare
/// http(s)://host:port could be either.
pub fn guess_adapter(url: &str) -> Result<Adapter, String> {
    let u = url::Url::parse(url).map_err(|e| format!("--url {url:?}: {e}"))?;
    match u.scheme() {
        "tcp" | "udp" | "tls" | "relp" | "relp+tls" => Ok(Adapter::Syslog),
        "http" | "https" if u.path().starts_with("/services/collector") => Ok(Adapter::GenericHec),
        "http" | "https" if u.path() != "/" && !u.path().is_empty() => Ok(Adapter::Lphc),
        "http" | "https" => Err(format!(
            "--url {url}: an lphc collector or a HEC endpoint? give --adapter lphc or --adapter generic-hec"
        )),
        other => Err(format!(
            "--url {url}: scheme {other:?} is not one of http, https, tcp, tls, udp, relp, relp+tls"
        )),
    }
}

/// The auth scheme a token is sent with when none is given (`probe --url`, `run --url`,
/// `http`): HEC's `Splunk`, plain HTTP's `Bearer`, Elasticsearch's `ApiKey`, else lphc's
/// `X-API-Key`.
pub fn default_scheme(adapter: Adapter) -> AuthScheme {
    match adapter {
        Adapter::GenericHec => AuthScheme::Splunk,
        Adapter::Http => AuthScheme::Bearer,
        Adapter::Elasticsearch => AuthScheme::ApiKey,
        _ => AuthScheme::XApiKey,
    }
}

/// The config text of a probe of `u` (JSON-quoted values are YAML double-quoted scalars, so
/// nothing on the command line can change the document's shape).
pub fn url_config(u: &UrlTarget) -> Result<String, SetupError> {
    let adapter = match u.adapter {
        Some(a) => a,
        None => guess_adapter(&u.url).map_err(SetupError::invalid)?,
    };
    let mut url = u.url.clone();
    if adapter == Adapter::GenericHec {
        // HEC endpoints are fixed; the url is the collector's base.
        if let Ok(mut p) = url::Url::parse(&url) {
            p.set_path("");
            p.set_query(None);
            url = p.to_string();
        }
    }
    let mut t = format!("  adapter: {adapter}\n  url: {}\n", q(&url));
    if u.token_env.is_some() && u.token_secret.is_some() {
        return Err(SetupError::invalid(
            "give one of --token-env and --token-secret",
        ));
    }
    let token = match (&u.token_env, &u.token_secret) {
        (Some(v), _) => Some(format!("token_env: {}", q(v))),
        (None, Some(s)) => Some(format!("token_secret: {}", q(s))),
        (None, None) => None,
    };
    if let Some(tok) = token {
        let scheme = u.auth.unwrap_or_else(|| default_scheme(adapter));
        t.push_str(&format!("  auth: {{ scheme: {scheme}, {tok} }}\n"));
    } else if u.auth.is_some() {
        return Err(SetupError::invalid(
            "--auth needs a token: --token-env VAR or --token-secret NAME",
        ));
    }
    if u.ca_file.is_some() || u.server_name.is_some() {
        let mut parts = Vec::new();
        if let Some(c) = &u.ca_file {
            parts.push(format!("ca_file: {}", q(c)));
        }
        if let Some(n) = &u.server_name {
            parts.push(format!("server_name: {}", q(n)));
        }
        t.push_str(&format!("  tls: {{ {} }}\n", parts.join(", ")));
    }
    let source = u.source.clone().unwrap_or_else(|| {
        if adapter == Adapter::Syslog {
            "linux.syslog".into()
        } else {
            "aws.cloudtrail".into()
        }
    });
    Ok(format!(
        "schema_version: \"1.0\"\nname: probe\ntarget:\n{t}source: {{ id: {} }}\nworkload: {{ eps: 1000, stop: {{ total_events: {BATCH_EVENTS} }} }}\n",
        q(&source)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapters_are_guessed_only_when_the_url_says() {
        assert_eq!(guess_adapter("tcp://h:514"), Ok(Adapter::Syslog));
        assert_eq!(guess_adapter("udp://h:514"), Ok(Adapter::Syslog));
        assert_eq!(
            guess_adapter("https://h:8088/services/collector/event"),
            Ok(Adapter::GenericHec)
        );
        assert_eq!(guess_adapter("http://h/ingest"), Ok(Adapter::Lphc));
        let e = guess_adapter("http://h:8088").unwrap_err();
        assert!(e.contains("--adapter"), "{e}");
        assert!(guess_adapter("ftp://h/").is_err());
    }

    #[test]
    fn url_configs_load_and_quote_what_they_are_given() {
        let store = Store::new("/nonexistent/store".into());
        let catalog = Catalog::discover(None).unwrap();
        // A value with quotes, a colon and braces stays one value: the config refuses it as
        // a variable name, and nothing else.
        let odd = url_config(&UrlTarget {
            url: "http://127.0.0.1:8088/ingest".into(),
            token_env: Some("TOK\"EN: {x}".into()),
            ..UrlTarget::default()
        })
        .unwrap();
        let l = crate::config::load_str(&odd, &store, Some(&catalog));
        let errors: Vec<_> = l.diags.errors().collect();
        assert_eq!(errors.len(), 1, "{odd}\n{:?}", l.diags.items);
        assert_eq!(errors[0].path, "target.auth.token_env");
        assert!(
            errors[0].message.contains("TOK\\\"EN: {x}"),
            "{}",
            errors[0].message
        );
        let text = url_config(&UrlTarget {
            url: "http://127.0.0.1:8088/services/collector/event?x=1".into(),
            token_env: Some("HEC_TOKEN".into()),
            ..UrlTarget::default()
        })
        .unwrap();
        assert!(text.contains("url: \"http://127.0.0.1:8088/\""), "{text}");
        let l = crate::config::load_str(&text, &store, Some(&catalog));
        let c = l
            .config
            .unwrap_or_else(|| panic!("{text}\n{:?}", l.diags.items));
        assert_eq!(c.target.adapter, Adapter::GenericHec);
        let a = c.target.auth.unwrap();
        assert_eq!(a.scheme, Some(AuthScheme::Splunk));
        assert_eq!(a.token_env.as_deref(), Some("HEC_TOKEN"));
        let text = url_config(&UrlTarget {
            url: "tls://127.0.0.1:6514".into(),
            ca_file: Some("/tmp/ca.pem".into()),
            server_name: Some("localhost".into()),
            ..UrlTarget::default()
        })
        .unwrap();
        let l = crate::config::load_str(&text, &store, Some(&catalog));
        let c = l
            .config
            .unwrap_or_else(|| panic!("{text}\n{:?}", l.diags.items));
        assert_eq!(c.source().unwrap().id, "linux.syslog");
        assert_eq!(
            c.target.tls.unwrap().server_name.as_deref(),
            Some("localhost")
        );
        assert!(
            url_config(&UrlTarget {
                url: "http://h:1".into(),
                ..UrlTarget::default()
            })
            .is_err()
        );
    }
}
