//! The syslog adapter's framing: each event becomes one syslog message, framed for its
//! transport. Syslog-native packs (carrier `syslog`: linux.syslog, firewall.cef.syslog,
//! paloalto.traffic) are carried as they are; other events become the MSG of an RFC 5424
//! (`<PRI>1 TIMESTAMP HOST APP PROCID MSGID - MSG`) or RFC 3164 (`<PRI>Mmm dd hh:mm:ss HOST
//! APP[PROCID]: MSG`) message. Framing is octet counting (`LEN SP MSG`, RFC 6587 3.4.1 and
//! RFC 5425) or LF; UDP carries one message per datagram without framing. The header's fixed
//! parts are rendered once; per event only the timestamp and the event are written.

use crate::bytes::{Sink, write_u64};
use crate::config::schema::{Syslog, SyslogFormat, SyslogFraming};
use crate::generate::time::{TsFormat, TsWriter};
use crate::pack::load::{Carrier, PackDef};

/// How messages are cut apart on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `LEN SP MSG` (RFC 6587 3.4.1, RFC 5425).
    OctetCounting,
    /// One message per line.
    Lf,
    /// One message per UDP datagram, unframed.
    Datagram,
}

/// A target's syslog framing, built from the config at setup; the worker sees only this.
#[derive(Clone)]
pub struct SyslogFramer {
    pub framing: Framing,
    native: bool,
    /// `<PRI>1 ` or `<PRI>`.
    pri: Vec<u8>,
    /// After the timestamp: ` HOST APP PROCID MSGID - ` or ` HOST APP[PROCID]: `.
    rest: Vec<u8>,
    ts: TsWriter,
    pub max_message: usize,
}

impl SyslogFramer {
    /// `cfg` is the target's `syslog` block (defaults when absent); `udp` drops framing.
    pub fn new(cfg: Option<&Syslog>, pack: &PackDef, hostname: &str, udp: bool) -> SyslogFramer {
        Self::of(cfg, &pack.syslog, pack.carrier, hostname, udp)
    }

    /// The framing of events carried as `carrier` with these syslog defaults (a pack's, or
    /// a replayed recording's).
    pub fn of(
        cfg: Option<&Syslog>,
        defaults: &crate::pack::load::SyslogDefaults,
        carrier: Carrier,
        hostname: &str,
        udp: bool,
    ) -> SyslogFramer {
        let format = cfg.map_or(SyslogFormat::Rfc5424, |c| c.format);
        let facility = cfg
            .and_then(|c| c.facility)
            .map_or(defaults.facility, |f| f.0);
        let pri = u32::from(facility) * 8 + u32::from(defaults.severity);
        let app = cfg
            .and_then(|c| c.app_name.clone())
            .unwrap_or_else(|| defaults.app_name.clone());
        let host: String = hostname
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .take(255)
            .collect::<String>()
            .to_ascii_lowercase();
        let host = if host.is_empty() {
            "-".to_string()
        } else {
            host
        };
        let procid = std::process::id().to_string();
        let (pri_text, rest, ts) = match format {
            SyslogFormat::Rfc5424 => (
                format!("<{pri}>1 "),
                format!(" {host} {app} {procid} {} - ", defaults.msgid),
                TsWriter::new(TsFormat::Rfc5424),
            ),
            SyslogFormat::Rfc3164 => (
                format!("<{pri}>"),
                format!(" {host} {app}[{procid}]: "),
                TsWriter::new(TsFormat::Rfc3164),
            ),
        };
        SyslogFramer {
            framing: match (udp, cfg.map_or(SyslogFraming::OctetCounting, |c| c.framing)) {
                (true, _) => Framing::Datagram,
                (false, SyslogFraming::OctetCounting) => Framing::OctetCounting,
                (false, SyslogFraming::Lf) => Framing::Lf,
            },
            native: carrier == Carrier::Syslog,
            pri: pri_text.into_bytes(),
            rest: rest.into_bytes(),
            ts,
            max_message: cfg.map_or(
                crate::config::schema::DEFAULT_SYSLOG_MESSAGE_BYTES as usize,
                |c| c.max_message_bytes.0 as usize,
            ),
        }
    }

    /// Appends one event's message to `out`, framed for the transport: the header (PRI,
    /// timestamp, host, app, …; none for syslog-native packs), then the event `render` writes.
    /// LF and datagram messages are built in place; octet counting needs the length first, so
    /// the message is built in `scratch` and copied after its length. Returns false, with
    /// nothing appended, when the message is over `max_message` (never cut).
    #[inline]
    pub fn append(
        &mut self,
        time_ns: i64,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
        render: impl FnOnce(&mut Vec<u8>),
    ) -> bool {
        if self.framing == Framing::OctetCounting {
            scratch.clear();
            self.header(time_ns, scratch);
            render(scratch);
            if scratch.len() > self.max_message {
                return false;
            }
            write_u64(scratch.len() as u64, out);
            out.push(b' ');
            out.put_slice(scratch);
            return true;
        }
        let start = out.len();
        self.header(time_ns, out);
        render(out);
        if out.len() - start > self.max_message {
            out.truncate(start);
            return false;
        }
        if self.framing == Framing::Lf {
            out.push(b'\n');
        }
        true
    }

    #[inline]
    fn header(&mut self, time_ns: i64, out: &mut Vec<u8>) {
        if self.native {
            return;
        }
        out.put_slice(&self.pri);
        self.ts.write(time_ns, out);
        out.put_slice(&self.rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::schema::Facility;
    use crate::config::units::Size;
    use crate::pack::load::{Category, Format, SyslogDefaults};

    fn pack(carrier: Carrier) -> PackDef {
        PackDef {
            id: "t".into(),
            version: semver::Version::new(1, 0, 0),
            category: Category::Network,
            description: "d".into(),
            format: Format::Json,
            carrier,
            sourcetype: "st".into(),
            syslog: SyslogDefaults {
                app_name: "fw".into(),
                facility: 16,
                severity: 6,
                msgid: "TRAFFIC".into(),
            },
            fields: vec![],
            events: vec![],
            roles: vec![],
            host_os: None,
        }
    }

    fn cfg(format: SyslogFormat, framing: SyslogFraming) -> Syslog {
        Syslog {
            transport: None,
            framing,
            format,
            app_name: Some("ingestbench".into()),
            facility: Some(Facility(1)),
            max_message_bytes: Size(100),
            udp_order: None,
            relp_window: None,
        }
    }

    const T: i64 = 1_741_944_067_123_456_789;

    fn framed(f: &mut SyslogFramer, ev: &[u8]) -> (bool, String) {
        let mut out = b"before|".to_vec();
        let ok = f.append(T, &mut out, &mut Vec::new(), |o| o.extend_from_slice(ev));
        let out = String::from_utf8(out).unwrap();
        let rest = out.strip_prefix("before|").expect("what was there stays");
        (ok, rest.to_string())
    }

    #[test]
    fn rfc5424_octet_counted() {
        let c = cfg(SyslogFormat::Rfc5424, SyslogFraming::OctetCounting);
        let mut f = SyslogFramer::new(Some(&c), &pack(Carrier::Json), "Loadgen-01", false);
        let (ok, s) = framed(&mut f, b"{\"a\":1}");
        assert!(ok);
        let pid = std::process::id();
        let msg = format!(
            "<14>1 2025-03-14T09:21:07.123Z loadgen-01 ingestbench {pid} TRAFFIC - {{\"a\":1}}"
        );
        assert_eq!(s, format!("{} {msg}", msg.len()));
    }

    #[test]
    fn rfc3164_lf_and_defaults_from_pack() {
        let c = Syslog {
            app_name: None,
            facility: None,
            ..cfg(SyslogFormat::Rfc3164, SyslogFraming::Lf)
        };
        let mut f = SyslogFramer::new(Some(&c), &pack(Carrier::Line), "h", false);
        let (_, s) = framed(&mut f, b"CEF:0|x");
        let pid = std::process::id();
        assert_eq!(s, format!("<134>Mar 14 09:21:07 h fw[{pid}]: CEF:0|x\n"));
    }

    #[test]
    fn native_messages_pass_through_and_udp_is_unframed() {
        let mut f = SyslogFramer::new(None, &pack(Carrier::Syslog), "h", true);
        assert_eq!(
            framed(&mut f, b"<86>1 x y z - - - m"),
            (true, "<86>1 x y z - - - m".into())
        );
    }

    #[test]
    fn oversize_is_refused_not_cut() {
        for framing in [SyslogFraming::Lf, SyslogFraming::OctetCounting] {
            let c = cfg(SyslogFormat::Rfc5424, framing);
            let mut f = SyslogFramer::new(Some(&c), &pack(Carrier::Json), "h", false);
            let big = vec![b'x'; 200];
            assert_eq!(framed(&mut f, &big), (false, String::new()), "{framing:?}");
        }
    }
}
