//! The questions `init` asks, in order, as one table: each has its flag, prompt, default, the
//! predicate saying when it applies, and a setter that parses its answer into `Answers`.
//! `Question::answer` is the one check, for a terminal and for flags alike: the setter's own
//! reading, then the answers so far rendered and put through the real config validator, keeping
//! only what it says about this question's field. The token-name answers are checked by their
//! setters with messages that do not repeat what was typed (it could be the token itself).

use super::{Answers, Ctx, StopBy, TokenFrom};
use crate::config::schema::{
    Adapter, AuthScheme, Compression, HecEndpoint, Profile, SyslogFormat, SyslogFraming,
    SyslogTransport,
};
use crate::config::secrets;
use crate::config::units::{Dur, parse_duration};
use crate::yaml::diag::Diagnostic;

type Applies = fn(&Answers) -> bool;
type Default = fn(&Answers, &Ctx) -> Option<String>;
type Hint = fn(&Answers, &Ctx) -> Option<String>;
type Set = fn(&mut Answers, &str, &Ctx) -> Result<(), String>;

pub struct Question {
    /// The answer's name, used to match a flag to its question.
    pub key: &'static str,
    /// The command-line flag that gives this answer without asking.
    pub flag: &'static str,
    pub prompt: &'static str,
    /// When it applies, in words (for a flag given where it does not).
    pub when: &'static str,
    /// The config field the validator reports this answer's problems under.
    field: &'static str,
    applies: Applies,
    default: Default,
    hint: Hint,
    set: Set,
}

impl Question {
    pub fn applies(&self, a: &Answers) -> bool {
        (self.applies)(a)
    }

    pub fn default(&self, a: &Answers, ctx: &Ctx) -> Option<String> {
        (self.default)(a, ctx)
    }

    pub fn hint(&self, a: &Answers, ctx: &Ctx) -> Option<String> {
        (self.hint)(a, ctx)
    }

    /// Takes `text` as this question's answer when it passes: parsed by the setter, then the
    /// draft config validated. Returns the validator's warnings about the field (notes), or
    /// why the answer was refused, leaving `a` as it was.
    pub fn answer(&self, a: &mut Answers, text: &str, ctx: &Ctx) -> Result<Vec<String>, String> {
        let mut next = a.clone();
        (self.set)(&mut next, text.trim(), ctx)?;
        let draft = super::render::render(&next, "draft");
        // Only the source answers need the catalog (reading a pack is the slow part).
        let packs: Option<&dyn crate::config::PackIndex> =
            self.field.starts_with("source.").then_some(ctx.catalog);
        let loaded = crate::config::load_str(&draft, ctx.store, packs);
        let mine = |d: &&Diagnostic| {
            d.path == self.field
                || d.path
                    .strip_prefix(self.field)
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        };
        let errors: Vec<&str> = loaded
            .diags
            .errors()
            .filter(mine)
            .map(|d| d.message.as_str())
            .collect();
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        let notes = loaded
            .diags
            .warnings()
            .filter(mine)
            .map(|d| d.message.clone())
            .collect();
        *a = next;
        Ok(notes)
    }
}

fn always(_: &Answers) -> bool {
    true
}

fn no_hint(_: &Answers, _: &Ctx) -> Option<String> {
    None
}

fn none(_: &Answers, _: &Ctx) -> Option<String> {
    Some("none".into())
}

fn required(_: &Answers, _: &Ctx) -> Option<String> {
    None
}

fn text(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// `none` (or `-`) for an optional answer left out.
fn optional(t: &str) -> Option<String> {
    match t {
        "none" | "-" => None,
        _ => Some(t.to_string()),
    }
}

fn yes_no(t: &str) -> Result<bool, String> {
    match t.to_ascii_lowercase().as_str() {
        "y" | "yes" | "true" => Ok(true),
        "n" | "no" | "false" => Ok(false),
        _ => Err(format!("{t:?} is not yes or no")),
    }
}

fn yes_no_text(b: bool) -> Option<String> {
    text(if b { "yes" } else { "no" })
}

/// A rate: a number above 0.
fn positive(t: &str) -> Result<f64, String> {
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{t:?} is not a positive number")),
    }
}

/// A rate that may be 0 (the low side of a burst, the start of a ramp).
fn non_negative(t: &str) -> Result<f64, String> {
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{t:?} is not a number of 0 or more")),
    }
}

fn optional_number(t: &str, check: fn(&str) -> Result<f64, String>) -> Result<Option<f64>, String> {
    optional(t).map(|v| check(&v)).transpose()
}

fn fraction(t: &str) -> Result<f64, String> {
    match t.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{t:?} is not a fraction between 0 and 1 (0.999 means 99.9%)"
        )),
    }
}

fn duration(t: &str) -> Result<Dur, String> {
    parse_duration(t)
}

fn number(v: f64) -> Option<String> {
    Some(v.to_string())
}

fn opt_number(v: Option<f64>) -> Option<String> {
    Some(v.map_or("none".into(), |v| v.to_string()))
}

/// The enum spelled `t`, with the macro's did-you-mean.
fn one_of<T>(t: &str, parse: fn(&str) -> Result<T, String>) -> Result<T, String> {
    parse(&t.to_ascii_lowercase())
}

/// Pack ids close to `id`: those containing it, else the likely typos (as close as the best
/// within a little), best first, at most three.
fn close_matches<'a>(id: &str, ids: &'a [String]) -> Vec<&'a str> {
    let containing: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|c| !id.is_empty() && c.contains(id))
        .take(3)
        .collect();
    if !containing.is_empty() {
        return containing;
    }
    let mut scored: Vec<(f64, &str)> = ids
        .iter()
        .map(|c| (strsim::jaro_winkler(id, c), c.as_str()))
        .filter(|(s, _)| *s >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .filter(|(s, _)| *s >= best - 0.05)
        .take(3)
        .map(|(_, c)| c)
        .collect()
}

fn set_source(a: &mut Answers, t: &str, ctx: &Ctx) -> Result<(), String> {
    if !ctx.ids.iter().any(|i| i == t) {
        let close = close_matches(t, &ctx.ids);
        let hint = match close.as_slice() {
            [] => "; `ingestbench sources list` lists the packs".to_string(),
            [one] => format!("; did you mean {one}?"),
            many => format!("; did you mean one of {}?", many.join(", ")),
        };
        return Err(format!("no source pack {t:?}{hint}"));
    }
    a.source = t.to_string();
    a.pack_sourcetype = ctx
        .catalog
        .find(t)
        .and_then(|src| crate::pack::open(src).ok())
        .map(|p| p.def.sourcetype);
    Ok(())
}

fn set_adapter(a: &mut Answers, t: &str, _: &Ctx) -> Result<(), String> {
    a.adapter = match t.to_ascii_lowercase().as_str() {
        "hec" | "splunk" => Adapter::GenericHec,
        _ => one_of(t, Adapter::parse)?,
    };
    Ok(())
}

fn set_url(a: &mut Answers, t: &str, _: &Ctx) -> Result<(), String> {
    if t.is_empty() || t.contains(char::is_whitespace) {
        return Err("a url has no spaces".into());
    }
    a.url = t.to_string();
    Ok(())
}

fn set_steps(a: &mut Answers, t: &str, _: &Ctx) -> Result<(), String> {
    let bad = |s: &str| format!("{s:?} is not EPS@HOLD, e.g. 1000@30s");
    let mut steps = Vec::new();
    for s in t.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (eps, hold) = s.split_once('@').ok_or_else(|| bad(s))?;
        steps.push((positive(eps.trim())?, duration(hold.trim())?));
    }
    if steps.is_empty() {
        return Err("give at least one step, e.g. 1000@30s, 5000@1m".into());
    }
    a.steps = steps;
    Ok(())
}

fn steps_text(a: &Answers) -> String {
    a.steps
        .iter()
        .map(|(eps, hold)| format!("{eps}@{hold}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An environment variable name, checked here so that a token pasted by mistake is not echoed.
fn set_token_env(a: &mut Answers, t: &str, _: &Ctx) -> Result<(), String> {
    let ok = !t.is_empty()
        && !t.starts_with(|c: char| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err("that is not an environment variable name (letters, digits and _)".into());
    }
    a.token_env = Some(t.to_string());
    Ok(())
}

fn set_token_secret(a: &mut Answers, t: &str, _: &Ctx) -> Result<(), String> {
    if secrets::check_name(t).is_err() {
        return Err(
            "that is not a secret name (1-64 of A-Z a-z 0-9 _ . -, not starting with . or -)"
                .into(),
        );
    }
    a.token_secret = Some(t.to_string());
    Ok(())
}

/// Every question, in the order asked.
pub static QUESTIONS: &[Question] = &[
    Question {
        key: "name",
        flag: "--name",
        prompt: "name of the run",
        when: "every config",
        field: "name",
        applies: always,
        default: |a, _| text(&a.name),
        hint: no_hint,
        set: |a, t, _| {
            a.name = t.to_string();
            Ok(())
        },
    },
    Question {
        key: "adapter",
        flag: "--adapter",
        prompt: "adapter",
        when: "every config",
        field: "target.adapter",
        applies: always,
        default: |_, _| text("lphc"),
        hint: |_, _| {
            text(
                "lphc: JSON-batch HTTP collector · generic-hec (or hec): Splunk HTTP Event Collector · syslog: syslog over TCP, UDP or TLS · elasticsearch: Elasticsearch / OpenSearch _bulk",
            )
        },
        set: set_adapter,
    },
    Question {
        key: "url",
        flag: "--url",
        prompt: "target url",
        when: "every config",
        field: "target.url",
        applies: always,
        default: |_, _| text("builtin"),
        hint: |a, _| {
            text(match a.adapter {
                Adapter::Lphc => {
                    "http(s)://host:port/path of the collector, or builtin: the built-in sink, in process on 127.0.0.1"
                }
                Adapter::GenericHec => {
                    "http(s)://host:8088 of the HEC (the /services/collector paths are added), or builtin"
                }
                Adapter::Syslog => "tcp://, udp:// or tls://host:port of the receiver, or builtin",
                Adapter::Http => "http(s)://host:port/path the requests go to, or builtin",
                Adapter::Elasticsearch => {
                    "http(s)://host:9200 of the Elasticsearch or OpenSearch cluster (requests go to its /_bulk)"
                }
            })
        },
        set: set_url,
    },
    Question {
        key: "syslog_transport",
        flag: "--syslog-transport",
        prompt: "syslog transport to the built-in sink",
        when: "adapter syslog with url builtin",
        field: "target.syslog.transport",
        applies: |a| a.syslog() && a.builtin(),
        default: |_, _| text("tcp"),
        hint: |_, _| {
            text(
                "tcp or udp (for TLS start `ingestbench sink --syslog-tls` and give its tls:// url)",
            )
        },
        set: |a, t, _| {
            match one_of(t, SyslogTransport::parse)? {
                SyslogTransport::Tls => Err("the built-in sink takes syslog over tcp or udp in process; for TLS run `ingestbench sink --syslog-tls` and give its tls:// url".into()),
                tr => {
                    a.syslog_transport = tr;
                    Ok(())
                }
            }
        },
    },
    Question {
        key: "syslog_framing",
        flag: "--syslog-framing",
        prompt: "syslog framing",
        when: "adapter syslog over tcp or tls",
        field: "target.syslog.framing",
        applies: |a| a.syslog() && !a.udp(),
        default: |_, _| text("octet-counting"),
        hint: |_, _| {
            text(
                "octet-counting: length-prefixed (RFC 6587, required over TLS) · lf: one message per line",
            )
        },
        set: |a, t, _| {
            a.syslog_framing = one_of(t, SyslogFraming::parse)?;
            Ok(())
        },
    },
    Question {
        key: "syslog_format",
        flag: "--syslog-format",
        prompt: "syslog header format",
        when: "adapter syslog",
        field: "target.syslog.format",
        applies: Answers::syslog,
        default: |_, _| text("rfc5424"),
        hint: |_, _| {
            text(
                "rfc5424 or rfc3164: the header put on events of packs that are not syslog already",
            )
        },
        set: |a, t, _| {
            a.syslog_format = one_of(t, SyslogFormat::parse)?;
            Ok(())
        },
    },
    Question {
        key: "tls_verify",
        flag: "--tls-verify",
        prompt: "check the server's certificate",
        when: "an https:// or tls:// url",
        field: "target.tls.verify",
        applies: Answers::secure,
        default: |a, _| yes_no_text(a.tls_verify),
        hint: no_hint,
        set: |a, t, _| {
            a.tls_verify = yes_no(t)?;
            Ok(())
        },
    },
    Question {
        key: "tls_ca_file",
        flag: "--tls-ca-file",
        prompt: "CA file to trust besides the public roots",
        when: "an https:// or tls:// url",
        field: "target.tls.ca_file",
        applies: |a| a.secure() && a.tls_verify,
        default: none,
        hint: no_hint,
        set: |a, t, _| {
            a.tls_ca_file = optional(t);
            Ok(())
        },
    },
    Question {
        key: "tls_client_cert",
        flag: "--tls-client-cert",
        prompt: "client certificate for mutual TLS",
        when: "an https:// or tls:// url",
        field: "target.tls.client_cert",
        applies: Answers::secure,
        default: none,
        hint: no_hint,
        set: |a, t, _| {
            a.tls_client_cert = optional(t);
            Ok(())
        },
    },
    Question {
        key: "tls_client_key",
        flag: "--tls-client-key",
        prompt: "client certificate's private key",
        when: "a client certificate (--tls-client-cert)",
        field: "target.tls.client_key",
        applies: |a| a.secure() && a.tls_client_cert.is_some(),
        default: required,
        hint: no_hint,
        set: |a, t, _| {
            a.tls_client_key = Some(t.to_string());
            Ok(())
        },
    },
    Question {
        key: "auth",
        flag: "--auth",
        prompt: "auth scheme",
        when: "an HTTP adapter to a url other than builtin",
        field: "target.auth.scheme",
        applies: Answers::auth_applies,
        default: |a, _| {
            text(match a.adapter {
                Adapter::GenericHec => "splunk",
                Adapter::Elasticsearch => "api-key",
                _ => "x-api-key",
            })
        },
        hint: |a, _| {
            text(if a.hec() {
                "splunk (Authorization: Splunk TOKEN), bearer, basic, header (a header of your choice) or none"
            } else if a.adapter == Adapter::Elasticsearch {
                "api-key (Authorization: ApiKey TOKEN, the key's encoded form), basic, bearer, header or none"
            } else {
                "x-api-key (X-API-Key: TOKEN), bearer, basic, header (a header of your choice) or none"
            })
        },
        set: |a, t, _| {
            a.auth = match optional(t) {
                None => None,
                Some(s) => Some(one_of(&s, AuthScheme::parse)?),
            };
            Ok(())
        },
    },
    Question {
        key: "auth_username",
        flag: "--auth-username",
        prompt: "basic-auth username (the token is the password)",
        when: "--auth basic",
        field: "target.auth.username",
        applies: |a| a.token_applies() && a.auth == Some(AuthScheme::Basic),
        default: required,
        hint: no_hint,
        set: |a, t, _| {
            a.auth_username = Some(t.to_string());
            Ok(())
        },
    },
    Question {
        key: "auth_header",
        flag: "--auth-header",
        prompt: "header the token goes in",
        when: "--auth header",
        field: "target.auth.header",
        applies: |a| a.token_applies() && a.auth == Some(AuthScheme::Header),
        default: |_, _| text("X-Auth-Token"),
        hint: no_hint,
        set: |a, t, _| {
            a.auth_header = Some(t.to_string());
            Ok(())
        },
    },
    Question {
        key: "token_from",
        flag: "--token-from",
        prompt: "where the token lives",
        when: "an auth scheme other than none",
        // Checked by its setter alone: the draft has no token reference until the next answer.
        field: "target.auth.token_from",
        applies: Answers::token_applies,
        default: |_, _| text("env"),
        hint: |_, _| {
            text(
                "env: an environment variable · file: a file of mode 0600 · secret: the store (`ingestbench secret set NAME`). The token itself is never asked for or written.",
            )
        },
        set: |a, t, _| {
            a.token_from = match t.to_ascii_lowercase().as_str() {
                "env" | "environment" => TokenFrom::Env,
                "file" => TokenFrom::File,
                "secret" | "store" => TokenFrom::Secret,
                _ => return Err(format!("{t:?} is not one of env, file, secret")),
            };
            Ok(())
        },
    },
    Question {
        key: "token_env",
        flag: "--token-env",
        prompt: "environment variable holding the token",
        when: "an auth scheme other than none",
        field: "target.auth.token_env",
        applies: |a| a.token_applies() && a.token_from == TokenFrom::Env,
        default: |a, _| text(if a.hec() { "HEC_TOKEN" } else { "LPHC_TOKEN" }),
        hint: no_hint,
        set: set_token_env,
    },
    Question {
        key: "token_file",
        flag: "--token-file",
        prompt: "file holding the token",
        when: "an auth scheme other than none",
        field: "target.auth.token_file",
        applies: |a| a.token_applies() && a.token_from == TokenFrom::File,
        default: required,
        hint: |_, _| text("read at run time; it must be mode 0600 or stricter"),
        set: |a, t, _| {
            a.token_file = Some(t.to_string());
            Ok(())
        },
    },
    Question {
        key: "token_secret",
        flag: "--token-secret",
        prompt: "stored secret holding the token",
        when: "an auth scheme other than none",
        field: "target.auth.token_secret",
        applies: |a| a.token_applies() && a.token_from == TokenFrom::Secret,
        default: |a, _| text(if a.hec() { "hec" } else { "lphc" }),
        hint: |_, _| {
            text("store it with `ingestbench secret set NAME` (it reads the token without echo)")
        },
        set: set_token_secret,
    },
    Question {
        key: "hec_endpoint",
        flag: "--hec-endpoint",
        prompt: "HEC endpoint",
        when: "adapter generic-hec",
        field: "target.hec.endpoint",
        applies: Answers::hec,
        default: |_, _| text("event"),
        hint: |_, _| {
            text(
                "event: JSON envelopes to /services/collector/event · raw: lines to /services/collector/raw",
            )
        },
        set: |a, t, _| {
            a.hec_endpoint = one_of(t, HecEndpoint::parse)?;
            Ok(())
        },
    },
    Question {
        key: "hec_index",
        flag: "--hec-index",
        prompt: "HEC index (none: the token's default index)",
        when: "adapter generic-hec",
        field: "target.hec.index",
        applies: Answers::hec,
        default: none,
        hint: no_hint,
        set: |a, t, _| {
            a.hec_index = optional(t);
            Ok(())
        },
    },
    Question {
        key: "hec_ack",
        flag: "--hec-ack",
        prompt: "wait for indexer acknowledgement",
        when: "adapter generic-hec",
        field: "target.hec.ack",
        applies: Answers::hec,
        default: |a, _| yes_no_text(a.hec_ack),
        hint: |_, _| text("yes needs useACK on the HEC token; every ackId must then be confirmed"),
        set: |a, t, _| {
            a.hec_ack = yes_no(t)?;
            Ok(())
        },
    },
    Question {
        key: "compression",
        flag: "--compression",
        prompt: "compress request bodies",
        when: "an HTTP adapter (lphc, generic-hec)",
        field: "target.compression",
        applies: Answers::http,
        default: |_, _| text("none"),
        hint: |_, _| text("none or gzip"),
        set: |a, t, _| {
            a.compression = one_of(t, Compression::parse)?;
            Ok(())
        },
    },
    Question {
        key: "source",
        flag: "--source",
        prompt: "source pack",
        when: "every config",
        field: "source.id",
        applies: always,
        default: |a, ctx| {
            let want = if a.syslog() {
                "linux.syslog"
            } else {
                "aws.cloudtrail"
            };
            ctx.ids
                .iter()
                .find(|i| *i == want)
                .or(ctx.ids.first())
                .cloned()
        },
        hint: |_, ctx| {
            Some(format!(
                "one of: {} (`ingestbench sources show ID` shows one)",
                ctx.ids.join(", ")
            ))
        },
        set: set_source,
    },
    Question {
        key: "profile",
        flag: "--profile",
        prompt: "load profile",
        when: "every config",
        field: "workload.profile",
        applies: always,
        default: |_, _| text("steady"),
        hint: |_, _| {
            text(
                "steady: one rate · ramp: from one rate to another · burst: a square wave · steps: rates held in turn",
            )
        },
        set: |a, t, _| {
            let p = one_of(t, Profile::parse)?;
            if p == Profile::Closed {
                return Err(
                    "closed (no rate, as fast as answered) is for plain HTTP load: ingestbench http"
                        .into(),
                );
            }
            a.profile = p;
            Ok(())
        },
    },
    Question {
        key: "eps",
        flag: "--eps",
        prompt: "events per second",
        when: "--profile steady",
        field: "workload.eps",
        applies: |a| a.profile == Profile::Steady,
        default: |a, _| number(a.eps),
        hint: no_hint,
        set: |a, t, _| {
            a.eps = positive(t)?;
            Ok(())
        },
    },
    Question {
        key: "ramp_from",
        flag: "--ramp-from",
        prompt: "ramp: events per second at the start",
        when: "--profile ramp",
        field: "workload.ramp.from_eps",
        applies: |a| a.profile == Profile::Ramp,
        default: |a, _| number(a.ramp_from),
        hint: no_hint,
        set: |a, t, _| {
            a.ramp_from = non_negative(t)?;
            Ok(())
        },
    },
    Question {
        key: "ramp_to",
        flag: "--ramp-to",
        prompt: "ramp: events per second at the end",
        when: "--profile ramp",
        field: "workload.ramp.to_eps",
        applies: |a| a.profile == Profile::Ramp,
        default: |a, _| number(a.ramp_to),
        hint: no_hint,
        set: |a, t, _| {
            a.ramp_to = non_negative(t)?;
            Ok(())
        },
    },
    Question {
        key: "ramp_over",
        flag: "--ramp-over",
        prompt: "ramp: over how long",
        when: "--profile ramp",
        field: "workload.ramp.over",
        applies: |a| a.profile == Profile::Ramp,
        default: |a, _| Some(a.ramp_over.to_string()),
        hint: no_hint,
        set: |a, t, _| {
            a.ramp_over = duration(t)?;
            Ok(())
        },
    },
    Question {
        key: "burst_high",
        flag: "--burst-high",
        prompt: "burst: events per second during a burst",
        when: "--profile burst",
        field: "workload.burst.high_eps",
        applies: |a| a.profile == Profile::Burst,
        default: |a, _| number(a.burst_high),
        hint: no_hint,
        set: |a, t, _| {
            a.burst_high = positive(t)?;
            Ok(())
        },
    },
    Question {
        key: "burst_low",
        flag: "--burst-low",
        prompt: "burst: events per second between bursts",
        when: "--profile burst",
        field: "workload.burst.low_eps",
        applies: |a| a.profile == Profile::Burst,
        default: |a, _| number(a.burst_low.min(a.burst_high)),
        hint: no_hint,
        set: |a, t, _| {
            a.burst_low = non_negative(t)?;
            Ok(())
        },
    },
    Question {
        key: "burst_period",
        flag: "--burst-period",
        prompt: "burst: period (a burst and the lull after it)",
        when: "--profile burst",
        field: "workload.burst.period",
        applies: |a| a.profile == Profile::Burst,
        default: |a, _| Some(a.burst_period.to_string()),
        hint: no_hint,
        set: |a, t, _| {
            a.burst_period = duration(t)?;
            Ok(())
        },
    },
    Question {
        key: "burst_duty",
        flag: "--burst-duty",
        prompt: "burst: share of each period spent bursting",
        when: "--profile burst",
        field: "workload.burst.duty",
        applies: |a| a.profile == Profile::Burst,
        default: |a, _| number(a.burst_duty),
        hint: |_, _| text("strictly between 0 and 1"),
        set: |a, t, _| {
            a.burst_duty = positive(t)?;
            Ok(())
        },
    },
    Question {
        key: "steps",
        flag: "--steps",
        prompt: "steps as EPS@HOLD, comma separated",
        when: "--profile steps",
        field: "workload.steps",
        applies: |a| a.profile == Profile::Steps,
        default: |a, _| Some(steps_text(a)),
        hint: no_hint,
        set: set_steps,
    },
    Question {
        key: "stop_by",
        flag: "--stop-by",
        prompt: "stop after a time or a count of events",
        when: "every config",
        field: "workload.stop",
        applies: always,
        default: |_, _| text("time"),
        hint: |_, _| text("time or count"),
        set: |a, t, _| {
            a.stop_by = match t.to_ascii_lowercase().as_str() {
                "time" | "duration" | "after" => StopBy::Time,
                "count" | "total" | "events" => StopBy::Count,
                _ => return Err(format!("{t:?} is not time or count")),
            };
            Ok(())
        },
    },
    Question {
        key: "stop_after",
        flag: "--duration",
        prompt: "run for",
        when: "a run that stops after a time",
        field: "workload.stop.after",
        applies: |a| a.stop_by == StopBy::Time,
        default: |a, _| Some(default_run_time(a).to_string()),
        hint: |_, _| text("a duration with its unit: 90s, 5m, 1h30m"),
        set: |a, t, _| {
            a.stop_after = duration(t)?;
            Ok(())
        },
    },
    Question {
        key: "stop_total",
        flag: "--total",
        prompt: "events to send in all",
        when: "a run that stops after a count",
        field: "workload.stop.total_events",
        applies: |a| a.stop_by == StopBy::Count,
        default: |a, _| Some(a.stop_total.to_string()),
        hint: no_hint,
        set: |a, t, _| {
            a.stop_total = t
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{t:?} is not a whole number above 0"))?;
            Ok(())
        },
    },
    Question {
        key: "slo_max_p95_ms",
        flag: "--slo-max-p95-ms",
        prompt: "objective: highest p95 latency in ms",
        when: "every config",
        field: "slo.max_p95_ms",
        applies: always,
        default: |a, _| opt_number(a.slo_max_p95_ms),
        hint: |_, _| {
            text(
                "objectives are judged at the end (a breach exits 3); none leaves one out. Without any, failed or unsent events still fail the run",
            )
        },
        set: |a, t, _| {
            a.slo_max_p95_ms = optional_number(t, positive)?;
            Ok(())
        },
    },
    Question {
        key: "slo_max_p99_ms",
        flag: "--slo-max-p99-ms",
        prompt: "objective: highest p99 latency in ms",
        when: "every config",
        field: "slo.max_p99_ms",
        applies: always,
        default: |a, _| opt_number(a.slo_max_p99_ms),
        hint: no_hint,
        set: |a, t, _| {
            a.slo_max_p99_ms = optional_number(t, positive)?;
            Ok(())
        },
    },
    Question {
        key: "slo_min_success_rate",
        flag: "--slo-min-success-rate",
        prompt: "objective: lowest share of events accepted (0..1)",
        when: "every config",
        field: "slo.min_success_rate",
        applies: always,
        default: |a, _| opt_number(a.slo_min_success_rate),
        hint: no_hint,
        set: |a, t, _| {
            a.slo_min_success_rate = optional_number(t, fraction)?;
            Ok(())
        },
    },
    Question {
        key: "slo_min_eps_ratio",
        flag: "--slo-min-eps-ratio",
        prompt: "objective: lowest achieved/target rate (0..1)",
        when: "every config",
        field: "slo.min_eps_ratio",
        applies: always,
        default: |a, _| opt_number(a.slo_min_eps_ratio),
        hint: no_hint,
        set: |a, t, _| {
            a.slo_min_eps_ratio = optional_number(t, fraction)?;
            Ok(())
        },
    },
];

/// The default run time: a minute, or long enough for a ramp or every step to play out.
fn default_run_time(a: &Answers) -> Dur {
    let minute = std::time::Duration::from_secs(60);
    match a.profile {
        Profile::Ramp => Dur(a.ramp_over.0 + minute),
        Profile::Steps => Dur(a.steps.iter().map(|(_, h)| h.0).sum()),
        Profile::Burst => Dur((a.burst_period.0 * 6).max(minute)),
        Profile::Steady | Profile::Closed => Dur(minute),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_matches_suggest_near_ids_best_first() {
        let ids: Vec<String> = ["aws.cloudtrail", "aws.guardduty", "linux.syslog"]
            .map(String::from)
            .to_vec();
        assert_eq!(close_matches("aws.cloudtrial", &ids)[0], "aws.cloudtrail");
        assert!(close_matches("zzz", &ids).is_empty());
        assert_eq!(close_matches("syslog", &ids), ["linux.syslog"]);
    }

    #[test]
    fn steps_read_as_eps_at_hold() {
        let mut a = Answers::new("x");
        let cat = crate::pack::Catalog::discover(None).unwrap();
        let store = secrets::Store::new("/nonexistent".into());
        let ctx = Ctx::new(&cat, &store);
        set_steps(&mut a, "10@1s, 20@2m", &ctx).unwrap();
        assert_eq!(a.steps.len(), 2);
        assert_eq!(steps_text(&a), "10@1s, 20@2m");
        assert!(
            set_steps(&mut a, "10", &ctx)
                .unwrap_err()
                .contains("EPS@HOLD")
        );
        assert!(
            set_steps(&mut a, "10@30", &ctx)
                .unwrap_err()
                .contains("not a duration")
        );
        assert!(
            set_steps(&mut a, "0@1s", &ctx)
                .unwrap_err()
                .contains("positive")
        );
    }

    #[test]
    fn every_flag_and_key_is_unique() {
        for (i, q) in QUESTIONS.iter().enumerate() {
            assert!(q.flag.starts_with("--"), "{}", q.flag);
            for p in &QUESTIONS[..i] {
                assert_ne!(p.key, q.key);
                assert_ne!(p.flag, q.flag);
            }
        }
    }
}
