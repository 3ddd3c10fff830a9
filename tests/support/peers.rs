//! Real peers for the end-to-end tests: syslog-ng and rsyslog as syslog receivers (TCP with
//! octet counting or LF framing, UDP, TLS) and nginx as a TLS front for HTTP, each started as a
//! child process on 127.0.0.1 with a generated config in the test's temp dir and killed by its
//! PID when dropped. scripts/install-test-deps.sh installs syslog-ng and nginx from Debian and
//! unpacks rsyslog (which conflicts with syslog-ng as a package) into
//! `${INGESTBENCH_PEERS_DIR:-$HOME/.cache/ingestbench-peers}/rsyslog`.
//!
//! The syslog peers write one JSON object per received message to `out.jsonl`: the fields as
//! the peer parsed them (`Record`). A message the peer could not parse as RFC 5424 is marked
//! (`Record::parse_error`), so a test can assert that none was. Every wait is bounded; a peer
//! that exits early or never listens fails the test with its own log.
//!
//! A missing peer fails the test when `CI` is set and skips it loudly otherwise (`require`).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::stop_child;

/// How long a peer may take to start, and messages to show up in its output.
pub const WAIT: Duration = Duration::from_secs(20);

/// `Some(found)`, or — when the peer is missing — a panic in CI (which must have every peer)
/// and a loud skip elsewhere.
pub fn require<T>(what: &str, found: Option<T>) -> Option<T> {
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is missing in CI: scripts/install-test-deps.sh installs it (scripts/test.sh runs it)"
        );
        eprintln!(
            "\n!!! SKIPPING: {what} is not installed here; run scripts/install-test-deps.sh (in CI this fails) !!!\n"
        );
    }
    found
}

fn first_existing(paths: &[&str]) -> Option<PathBuf> {
    paths.iter().map(PathBuf::from).find(|p| p.exists())
}

fn in_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

/// The `kubernetes-validate` command (PyPI's kubernetes-validate: the Kubernetes OpenAPI
/// schemas, offline).
pub fn kubernetes_validate_bin() -> Option<PathBuf> {
    in_path("kubernetes-validate")
        .or_else(|| first_existing(&["/usr/local/bin/kubernetes-validate"]))
}

pub fn syslog_ng_bin() -> Option<PathBuf> {
    in_path("syslog-ng").or_else(|| first_existing(&["/usr/sbin/syslog-ng", "/sbin/syslog-ng"]))
}

pub fn nginx_bin() -> Option<PathBuf> {
    first_existing(&["/usr/sbin/nginx", "/usr/bin/nginx"]).or_else(|| in_path("nginx"))
}

/// Where scripts/install-test-deps.sh unpacks rsyslog:
/// `${INGESTBENCH_PEERS_DIR:-${HOME:-/root}/.cache/ingestbench-peers}/rsyslog`.
pub fn rsyslog_dir() -> PathBuf {
    let base = match std::env::var_os("INGESTBENCH_PEERS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/ingestbench-peers"),
    };
    base.join("rsyslog")
}

/// `rsyslog_dir()` when rsyslogd is unpacked there.
pub fn rsyslog_root() -> Option<PathBuf> {
    let root = rsyslog_dir();
    root.join("usr/sbin/rsyslogd").is_file().then_some(root)
}

/// `rsyslog_root()` when rsyslog's RELP input (imrelp.so, from rsyslog-relp) is unpacked too.
pub fn rsyslog_relp_root() -> Option<PathBuf> {
    rsyslog_root().filter(|r| {
        r.join("usr/lib/x86_64-linux-gnu/rsyslog/imrelp.so")
            .is_file()
    })
}

/// rsyslogd from the unpacked tree `root` as a run launches it (`observability.target`): the
/// program, its arguments for config `conf` (in the foreground, its PID file in `dir`) and
/// the library path it needs.
pub struct RsyslogCommand {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

pub fn rsyslog_command(root: &Path, dir: &Path, conf: &Path) -> RsyslogCommand {
    let libs = format!(
        "{}:{}",
        root.join("usr/lib/x86_64-linux-gnu").display(),
        root.join("lib/x86_64-linux-gnu").display()
    );
    RsyslogCommand {
        program: root.join("usr/sbin/rsyslogd").display().to_string(),
        args: vec![
            "-n".into(),
            "-M".into(),
            root.join("usr/lib/x86_64-linux-gnu/rsyslog")
                .display()
                .to_string(),
            "-f".into(),
            conf.display().to_string(),
            "-i".into(),
            dir.join("rsyslogd.pid").display().to_string(),
        ],
        env: vec![("LD_LIBRARY_PATH".into(), libs)],
    }
}

/// The `major.minor` of the installed syslog-ng, for the config's `@version`.
pub fn syslog_ng_version(bin: &Path) -> String {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        let o = Command::new(bin).arg("--version").output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        // First line: "syslog-ng 3 (3.38.1)"; later ones also carry "Installer-Version: 3.38.1".
        let full = text
            .lines()
            .find_map(|l| l.strip_prefix("Installer-Version:"))
            .map(|s| s.trim().to_string())
            .or_else(|| {
                let l = text.lines().next()?;
                Some(l[l.find('(')? + 1..l.find(')')?].to_string())
            })
            .unwrap_or_else(|| panic!("cannot read the syslog-ng version from: {text}"));
        let mut parts = full.split('.');
        format!("{}.{}", parts.next().unwrap(), parts.next().unwrap_or("0"))
    })
    .clone()
}

static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// A port nobody listens on (TCP and UDP), picked by binding port 0 and releasing it; never
/// the same one twice in this process, so tests running in parallel do not collide.
pub fn free_port() -> u16 {
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if UdpSocket::bind(("127.0.0.1", port)).is_err() {
            continue;
        }
        let mut g = HANDED_OUT.lock().unwrap();
        if g.get_or_insert_with(HashSet::new).insert(port) {
            return port;
        }
    }
}

/// The throwaway CA and certificates of scripts/make-test-certs.sh, made in `dir/certs`.
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    pub fn make(dir: &Path) -> Certs {
        let certs = dir.join("certs");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-test-certs.sh");
        let o = Command::new("bash")
            .arg(&script)
            .arg(&certs)
            .output()
            .expect("running scripts/make-test-certs.sh (needs bash and openssl)");
        assert!(
            o.status.success(),
            "make-test-certs.sh failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        Certs { dir: certs }
    }
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    pub fn pem(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.pem"))
    }
    pub fn key(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.key"))
    }
    /// A listener identity: `name.pem` + `name.key`, and the CA.
    pub fn tls(&self, name: &str) -> TlsFiles {
        TlsFiles {
            cert: self.pem(name),
            key: self.key(name),
            ca: self.ca(),
        }
    }
}

/// What a TLS listener presents (cert, key) and trusts for client certificates (ca).
#[derive(Clone, Debug)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: PathBuf,
}

/// Which listeners a syslog peer opens.
#[derive(Clone, Debug, Default)]
pub struct Listen {
    /// TCP with octet-counting framing (RFC 6587 3.4.1 / RFC 5425).
    pub tcp: bool,
    /// TCP with LF (non-transparent) framing. syslog-ng: a separate source; rsyslog's imtcp
    /// takes both framings on one port, so this is the `tcp` port there.
    pub tcp_lf: bool,
    pub udp: bool,
    /// TLS with octet-counting framing.
    pub tls: Option<TlsFiles>,
}

/// The ports a peer listens on, one per `Listen` choice.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ports {
    pub tcp: Option<u16>,
    pub tcp_lf: Option<u16>,
    pub udp: Option<u16>,
    pub tls: Option<u16>,
}

/// One received message as the peer parsed it. Nil values (`-`) read as empty.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct Record {
    /// The listener it came in on (`tcp`, `tcp_lf`, `udp`, `tls`).
    pub input: String,
    pub pri: String,
    pub date: String,
    pub host: String,
    pub program: String,
    pub pid: String,
    pub msgid: String,
    pub sdata: String,
    pub msg: String,
    /// syslog-ng: its tags (newer versions tag parse errors); rsyslog: empty.
    pub tags: String,
    /// rsyslog: the syslog protocol version it parsed (`1` = RFC 5424, `0` = it fell back to
    /// its RFC 3164 parser); syslog-ng: empty.
    pub proto: String,
    #[serde(skip)]
    pub peer: &'static str,
}

impl Record {
    fn normalise(mut self, peer: &'static str) -> Record {
        for f in [
            &mut self.host,
            &mut self.program,
            &mut self.pid,
            &mut self.msgid,
            &mut self.sdata,
        ] {
            if f == "-" {
                f.clear();
            }
        }
        self.peer = peer;
        self
    }

    /// True when the peer could not parse the message as RFC 5424: syslog-ng replaces it with
    /// "Error processing log message: …" from program `syslog-ng` (and, in newer versions,
    /// tags it `syslog.invalid` / `message.parse_error`); rsyslog falls back to its RFC 3164
    /// parser (protocol version 0).
    pub fn parse_error(&self) -> bool {
        match self.peer {
            "rsyslog" => self.proto != "1",
            _ => {
                (self.program == "syslog-ng"
                    && self.msg.starts_with("Error processing log message"))
                    || self.tags.contains("syslog.invalid")
                    || self.tags.contains("message.parse_error")
            }
        }
    }

    pub fn pri(&self) -> Option<u8> {
        self.pri.parse().ok()
    }

    /// The accounting tags (run, agent, seq) in the SD and the MSG, without repeats (a JSON
    /// event may carry its tag both in the SD element and in the JSON).
    pub fn acct_tags(&self) -> BTreeSet<(String, u32, u64)> {
        let mut set = BTreeSet::new();
        for part in [&self.sdata, &self.msg] {
            ingestbench::acct::find_tags(part.as_bytes(), |t| {
                set.insert((String::from_utf8_lossy(t.run).into_owned(), t.agent, t.seq));
            });
        }
        set
    }
}

/// A peer process: killed by its PID on drop. Its stdout and stderr go to `log`.
pub struct PeerProc {
    name: &'static str,
    child: Child,
    pub dir: PathBuf,
    pub out: PathBuf,
    pub log: PathBuf,
}

impl Drop for PeerProc {
    fn drop(&mut self) {
        stop_child(&mut self.child);
    }
}

impl PeerProc {
    fn spawn(name: &'static str, mut cmd: Command, dir: &Path, out: PathBuf) -> PeerProc {
        let log = dir.join(format!("{name}.log"));
        let f = File::create(&log).unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        PeerProc {
            name,
            child,
            dir: dir.to_path_buf(),
            out,
            log,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (bounded by `WAIT`) until every TCP port accepts, every UDP port is bound and
    /// the log shows `marker`; panics with the peer's log when it exits or times out.
    fn wait_ready(&mut self, tcp: &[u16], udp: &[u16], marker: Option<&str>) {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "{} exited during start-up ({status}):\n{}",
                    self.name,
                    self.log_text()
                );
            }
            let tcp_ok = tcp.iter().all(|&p| {
                TcpStream::connect_timeout(&([127, 0, 0, 1], p).into(), Duration::from_secs(1))
                    .is_ok()
            });
            // A UDP port is bound by the peer once we can no longer bind it ourselves.
            let udp_ok = udp
                .iter()
                .all(|&p| UdpSocket::bind(("127.0.0.1", p)).is_err());
            let marker_ok = marker.is_none_or(|m| self.log_text().contains(m));
            if tcp_ok && udp_ok && marker_ok {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not start listening within {WAIT:?} (tcp {tcp:?} udp {udp:?}):\n{}",
                self.name,
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every message the peer wrote so far.
    pub fn records(&self) -> Vec<Record> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        // A line the peer is still writing (no newline yet) is read next time.
        let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
        complete
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<Record>(l)
                    .unwrap_or_else(|e| panic!("{} output line is not JSON ({e}): {l}", self.name))
                    .normalise(self.name)
            })
            // rsyslog's own messages (input "rsyslogd") are not received ones.
            .filter(|r| r.input != "rsyslogd")
            .collect()
    }

    /// Waits until the peer wrote at least `n` messages, then a little longer to catch any
    /// extra ones (duplicates), and returns all. Gives up after `timeout`, or once nothing new
    /// arrived for 5 s (call it after the sender is done: the rest is not coming).
    pub fn wait_records(&self, n: usize, timeout: Duration) -> Vec<Record> {
        let deadline = Instant::now() + timeout;
        let (mut seen, mut changed) = (usize::MAX, Instant::now());
        loop {
            let r = self.records();
            if r.len() >= n {
                std::thread::sleep(Duration::from_millis(300));
                return self.records();
            }
            if r.len() != seen {
                (seen, changed) = (r.len(), Instant::now());
            }
            if Instant::now() >= deadline || changed.elapsed() > Duration::from_secs(5) {
                return r;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Lines of the peer's own log that say a frame or a message was refused: a framing
    /// mismatch shows only there (syslog-ng drops the connection at a bad frame header).
    pub fn framing_errors(&self) -> Vec<String> {
        self.log_text()
            .lines()
            .filter(|l| {
                l.contains("Invalid frame header")
                    || l.contains("Error processing log message")
                    || l.contains("Framing error")
                    || l.contains("invalid octet count")
                    || l.contains("frame too large")
            })
            .map(str::to_string)
            .collect()
    }
}

fn q(p: &Path) -> String {
    // Paths go into configs in double quotes; temp dirs hold no quotes or backslashes.
    let s = p.display().to_string();
    assert!(!s.contains(['"', '\\']), "unexpected path {s}");
    s
}

// ---------------------------------------------------------------------------------------
// syslog-ng

/// syslog-ng receiving on 127.0.0.1. TCP and TLS use the `syslog()` source driver (RFC 5424
/// with octet-counting framing, the only framing it accepts there in 3.x: an LF-framed message
/// is an "Invalid frame header" and the connection is closed); `tcp_lf` and UDP use
/// `network(flags(syslog-protocol))` (RFC 5424, one message per line or datagram).
pub struct SyslogNg {
    pub ports: Ports,
    pub proc: PeerProc,
}

impl std::ops::Deref for SyslogNg {
    type Target = PeerProc;
    fn deref(&self) -> &PeerProc {
        &self.proc
    }
}

/// The syslog-ng output template: one JSON object per message.
const SNG_TEMPLATE: &str = "$(format-json --scope none input=${SOURCE} pri=${PRI} date=${ISODATE} host=${HOST} program=${PROGRAM} pid=${PID} msgid=${MSGID} sdata=${SDATA} msg=${MSG} tags=${TAGS})\\n";

impl SyslogNg {
    /// Starts syslog-ng in `dir`; `None` (after a loud message) when it is not installed
    /// and `CI` is unset.
    pub fn start(dir: &Path, listen: Listen) -> Option<SyslogNg> {
        let bin = require("syslog-ng", syslog_ng_bin())?;
        let version = syslog_ng_version(&bin);
        let out = dir.join("out.jsonl");
        let mut ports = Ports::default();
        let mut sources = String::new();
        // Large windows and flow control: a slow disk must slow the sender, not drop messages.
        let tcp_opts = "max-connections(64) log-iw-size(64000) keep-alive(yes)";
        if listen.tcp {
            let p = free_port();
            ports.tcp = Some(p);
            sources += &format!(
                "source tcp {{ syslog(ip(\"127.0.0.1\") port({p}) transport(\"tcp\") {tcp_opts}); }};\n"
            );
        }
        if listen.tcp_lf {
            let p = free_port();
            ports.tcp_lf = Some(p);
            sources += &format!(
                "source tcp_lf {{ network(ip(\"127.0.0.1\") port({p}) transport(\"tcp\") flags(syslog-protocol) {tcp_opts}); }};\n"
            );
        }
        if listen.udp {
            let p = free_port();
            ports.udp = Some(p);
            sources += &format!(
                "source udp {{ network(ip(\"127.0.0.1\") port({p}) transport(\"udp\") flags(syslog-protocol) so-rcvbuf(8388608)); }};\n"
            );
        }
        if let Some(t) = &listen.tls {
            let p = free_port();
            ports.tls = Some(p);
            sources += &format!(
                "source tls {{ syslog(ip(\"127.0.0.1\") port({p}) transport(\"tls\") tls(key-file(\"{}\") cert-file(\"{}\") ca-file(\"{}\") peer-verify(optional-untrusted)) {tcp_opts}); }};\n",
                q(&t.key),
                q(&t.cert),
                q(&t.ca)
            );
        }
        let names: Vec<&str> = [
            (ports.tcp, "tcp"),
            (ports.tcp_lf, "tcp_lf"),
            (ports.udp, "udp"),
            (ports.tls, "tls"),
        ]
        .iter()
        .filter(|(p, _)| p.is_some())
        .map(|(_, n)| *n)
        .collect();
        assert!(!names.is_empty(), "Listen opens nothing");
        let log_sources: String = names.iter().map(|n| format!("source({n}); ")).collect();
        let conf = format!(
            "@version: {version}\n\
             # Generated by tests/support/peers.rs: no system sources, files only in this dir.\n\
             options {{ chain-hostnames(no); keep-hostname(yes); keep-timestamp(yes); use-dns(no); dns-cache(no); use-fqdn(no); log-msg-size(65536); log-fifo-size(200000); flush-lines(0); time-reopen(1); }};\n\
             {sources}\
             destination out {{ file(\"{out}\" template(\"{SNG_TEMPLATE}\") log-fifo-size(200000)); }};\n\
             log {{ {log_sources}destination(out); flags(flow-control); }};\n",
            out = q(&out),
        );
        let conf_path = dir.join("syslog-ng.conf");
        std::fs::write(&conf_path, &conf).unwrap();
        let mut cmd = Command::new(&bin);
        cmd.arg("-F")
            .arg("--no-caps")
            .arg("--stderr")
            .arg(format!("--cfgfile={}", conf_path.display()))
            .arg(format!(
                "--persist-file={}",
                dir.join("syslog-ng.persist").display()
            ))
            .arg(format!("--pidfile={}", dir.join("syslog-ng.pid").display()))
            .arg(format!("--control={}", dir.join("syslog-ng.ctl").display()));
        let mut proc = PeerProc::spawn("syslog-ng", cmd, dir, out);
        let tcp: Vec<u16> = [ports.tcp, ports.tcp_lf, ports.tls]
            .into_iter()
            .flatten()
            .collect();
        let udp: Vec<u16> = ports.udp.into_iter().collect();
        proc.wait_ready(&tcp, &udp, Some("syslog-ng starting up"));
        Some(SyslogNg { ports, proc })
    }
}

// ---------------------------------------------------------------------------------------
// rsyslog

/// rsyslog (unpacked by scripts/install-test-deps.sh) receiving on 127.0.0.1: imtcp (octet
/// counting and LF framing auto-detected on one port), imudp, and imtcp with the gtls stream
/// driver for TLS (anonymous client auth: the server presents its certificate).
pub struct Rsyslog {
    pub ports: Ports,
    pub proc: PeerProc,
}

impl std::ops::Deref for Rsyslog {
    type Target = PeerProc;
    fn deref(&self) -> &PeerProc {
        &self.proc
    }
}

impl Rsyslog {
    /// Starts rsyslogd in `dir`; `None` (after a loud message) when it is not unpacked, or TLS
    /// is asked for and its gtls driver is missing, and `CI` is unset.
    pub fn start(dir: &Path, listen: Listen) -> Option<Rsyslog> {
        let root = require(
            &format!("rsyslog (unpacked into {})", rsyslog_dir().display()),
            rsyslog_root(),
        )?;
        let moddir = root.join("usr/lib/x86_64-linux-gnu/rsyslog");
        if listen.tls.is_some() {
            require(
                "rsyslog's gtls stream driver (lmnsd_gtls.so, from rsyslog-gnutls)",
                moddir.join("lmnsd_gtls.so").is_file().then_some(()),
            )?;
        }
        let out = dir.join("out.jsonl");
        let mut ports = Ports::default();
        let mut global = format!("global(workDirectory=\"{}\" maxMessageSize=\"64k\"", q(dir));
        let mut inputs = String::new();
        if listen.tcp || listen.tcp_lf {
            let p = free_port();
            ports.tcp = Some(p);
            if listen.tcp_lf {
                ports.tcp_lf = Some(p);
            }
            inputs += &format!(
                "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"{p}\" name=\"tcp\" streamDriver.mode=\"0\")\n"
            );
        }
        if listen.udp {
            let p = free_port();
            ports.udp = Some(p);
            inputs += &format!(
                "module(load=\"imudp\")\ninput(type=\"imudp\" address=\"127.0.0.1\" port=\"{p}\" name=\"udp\" rcvbufSize=\"8m\")\n"
            );
        }
        let mut imtcp = "module(load=\"imtcp\" maxSessions=\"64\"".to_string();
        if let Some(t) = &listen.tls {
            let p = free_port();
            ports.tls = Some(p);
            global += &format!(
                " defaultNetstreamDriverCAFile=\"{}\" defaultNetstreamDriverCertFile=\"{}\" defaultNetstreamDriverKeyFile=\"{}\"",
                q(&t.ca),
                q(&t.cert),
                q(&t.key)
            );
            imtcp += " streamDriver.name=\"gtls\" streamDriver.mode=\"1\" streamDriver.authMode=\"anon\"";
            inputs +=
                &format!("input(type=\"imtcp\" address=\"127.0.0.1\" port=\"{p}\" name=\"tls\")\n");
        }
        global += ")\n";
        imtcp += ")\n";
        assert!(!inputs.is_empty(), "Listen opens nothing");
        let props = [
            ("input", "inputname"),
            ("pri", "pri"),
            ("date", "timestamp"),
            ("host", "hostname"),
            ("program", "app-name"),
            ("pid", "procid"),
            ("msgid", "msgid"),
            ("sdata", "structured-data"),
            ("msg", "msg"),
            ("proto", "protocol-version"),
        ];
        let mut template =
            "template(name=\"out\" type=\"list\" option.jsonf=\"on\") {\n".to_string();
        for (out_name, prop) in props {
            let fmt = if prop == "timestamp" {
                " dateFormat=\"rfc3339\""
            } else {
                ""
            };
            template += &format!(
                "  property(outname=\"{out_name}\" name=\"{prop}\" format=\"jsonf\"{fmt})\n"
            );
        }
        template += "}\n";
        let conf = format!(
            "# Generated by tests/support/peers.rs: no system inputs, files only in this dir.\n\
             {global}{imtcp}{inputs}{template}\
             action(type=\"omfile\" file=\"{}\" template=\"out\")\n",
            q(&out)
        );
        let conf_path = dir.join("rsyslog.conf");
        std::fs::write(&conf_path, &conf).unwrap();
        let libs = format!(
            "{}:{}",
            root.join("usr/lib/x86_64-linux-gnu").display(),
            root.join("lib/x86_64-linux-gnu").display()
        );
        let mut cmd = Command::new(root.join("usr/sbin/rsyslogd"));
        cmd.env("LD_LIBRARY_PATH", libs)
            .arg("-n")
            .arg("-M")
            .arg(&moddir)
            .arg("-f")
            .arg(&conf_path)
            .arg("-i")
            .arg(dir.join("rsyslogd.pid"));
        let mut proc = PeerProc::spawn("rsyslog", cmd, dir, out);
        let tcp: Vec<u16> = [ports.tcp, ports.tls].into_iter().flatten().collect();
        let udp: Vec<u16> = ports.udp.into_iter().collect();
        proc.wait_ready(&tcp, &udp, None);
        Some(Rsyslog { ports, proc })
    }
}

// ---------------------------------------------------------------------------------------
// nginx as a TLS front

/// nginx terminating TLS on 127.0.0.1 and proxying HTTP/1.1 keep-alive to an upstream.
pub struct NginxTls {
    pub port: u16,
    pub proc: PeerProc,
}

impl std::ops::Deref for NginxTls {
    type Target = PeerProc;
    fn deref(&self) -> &PeerProc {
        &self.proc
    }
}

impl NginxTls {
    /// Starts nginx presenting `cert`/`key` and proxying to `127.0.0.1:upstream_port`.
    pub fn start(dir: &Path, cert: &Path, key: &Path, upstream_port: u16) -> Option<NginxTls> {
        let bin = require("nginx", nginx_bin())?;
        let port = free_port();
        let d = q(dir);
        let conf = format!(
            "worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log warn;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
             \x20 upstream sink {{ server 127.0.0.1:{upstream_port}; keepalive 16; }}\n\
             \x20 server {{\n    listen 127.0.0.1:{port} ssl;\n    ssl_certificate {cert};\n    ssl_certificate_key {key};\n    ssl_protocols TLSv1.2 TLSv1.3;\n    keepalive_requests 100000;\n    client_max_body_size 64m;\n\
             \x20   location / {{ proxy_pass http://sink; proxy_http_version 1.1; proxy_set_header Connection \"\"; }}\n  }}\n}}\n",
            cert = q(cert),
            key = q(key),
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let mut cmd = Command::new(bin);
        cmd.arg("-p").arg(dir).arg("-c").arg(&conf_path);
        let mut proc = PeerProc::spawn("nginx", cmd, dir, dir.join("unused"));
        proc.log = dir.join("nginx-error.log");
        proc.wait_ready(&[port], &[], None);
        Some(NginxTls { port, proc })
    }
}

/// `ingestbench sink --http` behind nginx terminating TLS with the lab certificate `cert` (of
/// a fresh CA in a temp dir of its own). Fields drop in order: nginx, the sink, the files.
pub struct HttpsFront {
    pub nginx: NginxTls,
    pub sink: super::SinkProc,
    pub certs: Certs,
    pub tmp: tempfile::TempDir,
}

impl HttpsFront {
    /// `None` when nginx is not installed (outside CI).
    pub fn start(cert: &str) -> Option<HttpsFront> {
        let sink = super::SinkProc::start(&["--http", "127.0.0.1:0"]);
        let tmp = tempfile::tempdir().unwrap();
        let certs = Certs::make(tmp.path());
        let nginx = NginxTls::start(tmp.path(), &certs.pem(cert), &certs.key(cert), sink.port)?;
        Some(HttpsFront {
            nginx,
            sink,
            certs,
            tmp,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Hand-made messages, for the harness's own tests

/// An RFC 5424 message with a fixed timestamp; empty fields are written as NILVALUE `-`.
pub fn rfc5424(
    pri: u8,
    host: &str,
    app: &str,
    procid: &str,
    msgid: &str,
    sd: &str,
    msg: &str,
) -> String {
    let nil = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    format!(
        "<{pri}>1 2026-01-02T03:04:05.678901Z {} {} {} {} {} {msg}",
        nil(host),
        nil(app),
        nil(procid),
        nil(msgid),
        nil(sd)
    )
}

/// Octet-counting framing: `LEN SP MSG`.
pub fn octet_counted(msgs: &[String]) -> Vec<u8> {
    let mut v = Vec::new();
    for m in msgs {
        v.extend_from_slice(format!("{} {m}", m.len()).as_bytes());
    }
    v
}

/// LF framing: `MSG LF`.
pub fn lf_framed(msgs: &[String]) -> Vec<u8> {
    let mut v = Vec::new();
    for m in msgs {
        v.extend_from_slice(m.as_bytes());
        v.push(b'\n');
    }
    v
}

pub fn send_tcp(port: u16, bytes: &[u8]) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(bytes).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    // Wait for the peer to close (bounded), so it has read everything.
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let _ = s.read(&mut [0u8; 64]);
}

pub fn send_udp(port: u16, msgs: &[String]) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    for m in msgs {
        s.send_to(m.as_bytes(), ("127.0.0.1", port)).unwrap();
    }
}

/// A rustls client config trusting only `ca`.
pub fn tls_client_config(ca: &Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    Arc::new(cfg)
}

/// Opens a TLS connection to 127.0.0.1:port verifying the peer as `server_name` against `ca`.
pub fn tls_connect(
    port: u16,
    ca: &Path,
    server_name: &str,
) -> Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>, String> {
    let name = rustls::pki_types::ServerName::try_from(server_name.to_string())
        .map_err(|e| e.to_string())?;
    let conn =
        rustls::ClientConnection::new(tls_client_config(ca), name).map_err(|e| e.to_string())?;
    let sock = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut tls = rustls::StreamOwned::new(conn, sock);
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .map_err(|e| e.to_string())?;
    }
    Ok(tls)
}

/// Sends `bytes` over TLS and closes with close_notify. Err carries the TLS error text.
pub fn send_tls(port: u16, ca: &Path, server_name: &str, bytes: &[u8]) -> Result<(), String> {
    let mut tls = tls_connect(port, ca, server_name)?;
    tls.write_all(bytes).map_err(|e| e.to_string())?;
    tls.flush().map_err(|e| e.to_string())?;
    tls.conn.send_close_notify();
    while tls.conn.wants_write() {
        tls.conn
            .complete_io(&mut tls.sock)
            .map_err(|e| e.to_string())?;
    }
    let _ = tls.sock.shutdown(std::net::Shutdown::Write);
    let _ = tls.sock.read(&mut [0u8; 64]);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// What arrived

/// Checks that the records hold exactly one copy of each event of `run`: every agent's seqs
/// are 0..n without a gap or a repeat, the n add up to `expected`, each record carries one
/// tag of the run, and none was a parse error. Err describes everything that is off.
pub fn check_delivery(records: &[Record], run: &str, expected: u64) -> Result<(), String> {
    let mut problems = Vec::new();
    let errors: Vec<&Record> = records.iter().filter(|r| r.parse_error()).collect();
    if !errors.is_empty() {
        problems.push(format!(
            "{} messages the peer could not parse, e.g. {:?}",
            errors.len(),
            errors[0]
        ));
    }
    let mut per_agent: BTreeMap<u32, BTreeMap<u64, u32>> = BTreeMap::new();
    let mut untagged = 0usize;
    let mut multi = 0usize;
    for r in records {
        let tags: Vec<_> = r.acct_tags().into_iter().filter(|t| t.0 == run).collect();
        match tags.len() {
            0 => untagged += 1,
            1 => {}
            _ => multi += 1,
        }
        for (_, agent, seq) in tags {
            *per_agent.entry(agent).or_default().entry(seq).or_default() += 1;
        }
    }
    if untagged > 0 {
        problems.push(format!("{untagged} records carry no tag of run {run}"));
    }
    if multi > 0 {
        problems.push(format!("{multi} records carry more than one event's tag"));
    }
    let mut distinct = 0u64;
    for (agent, seqs) in &per_agent {
        distinct += seqs.len() as u64;
        let dups: Vec<_> = seqs.iter().filter(|(_, c)| **c > 1).take(5).collect();
        if !dups.is_empty() {
            problems.push(format!(
                "agent {agent}: {} seqs stored more than once, e.g. {dups:?}",
                seqs.values().filter(|c| **c > 1).count()
            ));
        }
        let max = *seqs.keys().next_back().unwrap();
        if max + 1 != seqs.len() as u64 {
            let missing: Vec<u64> = (0..=max)
                .filter(|s| !seqs.contains_key(s))
                .take(10)
                .collect();
            problems.push(format!(
                "agent {agent}: {} seqs missing below {max}, e.g. {missing:?}",
                max + 1 - seqs.len() as u64
            ));
        }
    }
    if distinct != expected {
        problems.push(format!(
            "{distinct} distinct events of run {run} arrived, expected {expected} (records: {}, agents: {:?})",
            records.len(),
            per_agent.iter().map(|(a, s)| (*a, s.len())).collect::<Vec<_>>()
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}
