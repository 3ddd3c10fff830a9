//! `ingestbench init` as a library: the answers a new config is made of (`Answers`), the
//! questions that fill them (`questions`: one table, each with its default, when it applies and
//! the check of its answer), the interview that walks them — asking a person through an
//! `Asker`, or taking `--flag` values and defaults — and `finish`, which renders the commented
//! YAML (`render`) and runs it through the real config loader before anyone may write it. No
//! question asks for a token: only where it lives.

pub mod questions;
pub mod render;

use crate::config::schema::{
    Adapter, AuthScheme, Compression, HecEndpoint, Profile, SyslogFormat, SyslogFraming,
    SyslogTransport,
};
use crate::config::secrets::Store;
use crate::config::units::Dur;
use crate::exit::Exit;
use crate::pack::Catalog;
use questions::{QUESTIONS, Question};
use std::time::Duration;

/// What the checks may look at beyond the answers: the pack catalog and the secret store.
pub struct Ctx<'a> {
    pub catalog: &'a Catalog,
    pub store: &'a Store,
    /// Every pack id in the catalog, sorted.
    pub ids: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub fn new(catalog: &'a Catalog, store: &'a Store) -> Self {
        Ctx {
            catalog,
            store,
            ids: catalog.ids(),
        }
    }
}

/// Where the token lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenFrom {
    Env,
    File,
    Secret,
}

/// How the run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopBy {
    Time,
    Count,
}

/// Every answer, each holding its default until its question is answered. What is written
/// depends on what applies (`render` asks the same predicates as the questions).
#[derive(Clone, Debug)]
pub struct Answers {
    pub name: String,
    pub adapter: Adapter,
    pub url: String,
    /// Only for syslog to the built-in sink; otherwise the url's scheme says it.
    pub syslog_transport: SyslogTransport,
    pub syslog_framing: SyslogFraming,
    pub syslog_format: SyslogFormat,
    pub tls_verify: bool,
    pub tls_ca_file: Option<String>,
    pub tls_client_cert: Option<String>,
    pub tls_client_key: Option<String>,
    /// `None`: the target takes requests without authentication.
    pub auth: Option<AuthScheme>,
    pub auth_username: Option<String>,
    pub auth_header: Option<String>,
    pub token_from: TokenFrom,
    pub token_env: Option<String>,
    pub token_file: Option<String>,
    pub token_secret: Option<String>,
    pub hec_endpoint: HecEndpoint,
    pub hec_index: Option<String>,
    pub hec_ack: bool,
    pub compression: Compression,
    pub source: String,
    /// The source pack's own sourcetype (what HEC events carry unless told otherwise).
    pub pack_sourcetype: Option<String>,
    pub profile: Profile,
    pub eps: f64,
    pub ramp_from: f64,
    pub ramp_to: f64,
    pub ramp_over: Dur,
    pub burst_high: f64,
    pub burst_low: f64,
    pub burst_period: Dur,
    pub burst_duty: f64,
    pub steps: Vec<(f64, Dur)>,
    pub stop_by: StopBy,
    pub stop_after: Dur,
    pub stop_total: u64,
    pub slo_max_p95_ms: Option<f64>,
    pub slo_max_p99_ms: Option<f64>,
    pub slo_min_success_rate: Option<f64>,
    pub slo_min_eps_ratio: Option<f64>,
}

impl Answers {
    /// The defaults: a steady 1,000 events/s of CloudTrail for a minute to the built-in sink.
    pub fn new(name: &str) -> Self {
        let secs = |s| Dur(Duration::from_secs(s));
        Answers {
            name: name.to_string(),
            adapter: Adapter::Lphc,
            url: "builtin".into(),
            syslog_transport: SyslogTransport::Tcp,
            syslog_framing: SyslogFraming::OctetCounting,
            syslog_format: SyslogFormat::Rfc5424,
            tls_verify: true,
            tls_ca_file: None,
            tls_client_cert: None,
            tls_client_key: None,
            auth: None,
            auth_username: None,
            auth_header: None,
            token_from: TokenFrom::Env,
            token_env: None,
            token_file: None,
            token_secret: None,
            hec_endpoint: HecEndpoint::Event,
            hec_index: None,
            hec_ack: false,
            compression: Compression::None,
            source: "aws.cloudtrail".into(),
            pack_sourcetype: None,
            profile: Profile::Steady,
            eps: 1000.0,
            ramp_from: 100.0,
            ramp_to: 10_000.0,
            ramp_over: secs(300),
            burst_high: 10_000.0,
            burst_low: 1000.0,
            burst_period: secs(10),
            burst_duty: 0.25,
            steps: vec![(1000.0, secs(30)), (5000.0, secs(30)), (20_000.0, secs(60))],
            stop_by: StopBy::Time,
            stop_after: secs(60),
            stop_total: 100_000,
            slo_max_p95_ms: None,
            slo_max_p99_ms: None,
            slo_min_success_rate: None,
            slo_min_eps_ratio: None,
        }
    }

    pub fn builtin(&self) -> bool {
        self.url == "builtin"
    }

    pub fn http(&self) -> bool {
        matches!(
            self.adapter,
            Adapter::Lphc | Adapter::GenericHec | Adapter::Elasticsearch
        )
    }

    pub fn hec(&self) -> bool {
        self.adapter == Adapter::GenericHec
    }

    pub fn syslog(&self) -> bool {
        self.adapter == Adapter::Syslog
    }

    /// The url's scheme, lower-cased (`None` for `builtin` or text without `://`).
    pub fn scheme(&self) -> Option<String> {
        self.url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase())
    }

    /// An https:// or tls:// target: TLS settings apply.
    pub fn secure(&self) -> bool {
        matches!(self.scheme().as_deref(), Some("https" | "tls"))
    }

    /// Syslog datagrams: to a udp:// url, or the built-in sink over UDP.
    pub fn udp(&self) -> bool {
        self.syslog()
            && (self.scheme().as_deref() == Some("udp")
                || (self.builtin() && self.syslog_transport == SyslogTransport::Udp))
    }

    /// Authentication applies: an HTTP adapter to a collector of one's own.
    pub fn auth_applies(&self) -> bool {
        self.http() && !self.builtin()
    }

    /// A token is needed: authentication applies and a scheme was chosen.
    pub fn token_applies(&self) -> bool {
        self.auth_applies() && self.auth.is_some()
    }
}

/// Why an interview or its result came to nothing.
#[derive(Debug, PartialEq)]
pub enum InitError {
    /// A `--flag` value was refused, did not apply, or was needed and missing.
    Flag { flag: String, message: String },
    /// The input ended (or failed) before every question was answered; nothing written.
    Aborted(String),
    /// The config as rendered did not validate (a defect here, never written).
    Invalid(Vec<String>),
}

impl InitError {
    pub fn exit(&self) -> Exit {
        match self {
            InitError::Flag { .. } | InitError::Invalid(_) => Exit::Invalid,
            InitError::Aborted(_) => Exit::Aborted,
        }
    }
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitError::Flag { flag, message } => write!(f, "{flag}: {message}"),
            InitError::Aborted(why) => write!(f, "{why}; nothing written"),
            InitError::Invalid(msgs) => write!(
                f,
                "the generated config does not validate, so it was not written:\n  {}",
                msgs.join("\n  ")
            ),
        }
    }
}

/// One question as a person sees it.
pub struct Prompt<'a> {
    pub text: &'a str,
    /// Shown in brackets; Enter takes it.
    pub default: Option<&'a str>,
    /// A line of help shown before the question (the choices, what a value means).
    pub hint: Option<String>,
}

/// A person answering questions (a terminal; a script in tests).
pub trait Asker {
    /// Shows `p` and returns the line typed, `Ok(None)` at the end of input.
    fn ask(&mut self, p: &Prompt) -> std::io::Result<Option<String>>;
    /// Says why the last answer was refused, or notes something about it.
    fn tell(&mut self, text: &str);
}

/// The answers given on the command line: `(flag, value)` pairs such as `("--eps", "500")`.
pub type Given = Vec<(String, String)>;

/// The answers, and the notes already told to a person (so `finish` does not repeat them).
pub struct Interview {
    pub answers: Answers,
    pub told: Vec<String>,
}

/// Walks the questions in order, skipping those that do not apply. A question whose flag is
/// in `given` takes that value (refused → `InitError::Flag`); the others are asked of `asker`,
/// again until the answer passes, or — without one — take their default.
pub fn interview(
    name: &str,
    given: &Given,
    mut asker: Option<&mut dyn Asker>,
    ctx: &Ctx,
) -> Result<Interview, InitError> {
    let given = by_question(given)?;
    let mut a = Answers::new(name);
    let mut told = Vec::new();
    for q in QUESTIONS {
        let flag_value = given.iter().find(|(key, _, _)| *key == q.key);
        if !q.applies(&a) {
            if let Some((_, flag, _)) = flag_value {
                return Err(InitError::Flag {
                    flag: flag.clone(),
                    message: format!("applies only to {}", q.when),
                });
            }
            continue;
        }
        let notes = match (flag_value, asker.as_deref_mut()) {
            (Some((_, flag, value)), _) => {
                q.answer(&mut a, value, ctx)
                    .map_err(|message| InitError::Flag {
                        flag: flag.clone(),
                        message,
                    })?
            }
            (None, Some(asker)) => ask_until_valid(q, &mut a, asker, ctx)?,
            (None, None) => {
                let Some(d) = q.default(&a, ctx) else {
                    return Err(InitError::Flag {
                        flag: q.flag.to_string(),
                        message: format!("needs a value: {}", q.prompt),
                    });
                };
                q.answer(&mut a, &d, ctx)
                    .map_err(|message| InitError::Flag {
                        flag: q.flag.to_string(),
                        message,
                    })?
            }
        };
        // Notes are told as they come to a person; without one, `finish` gives them all.
        if let Some(asker) = asker.as_deref_mut() {
            for n in &notes {
                asker.tell(&format!("note: {n}"));
            }
            told.extend(notes);
        }
    }
    Ok(Interview { answers: a, told })
}

fn ask_until_valid(
    q: &Question,
    a: &mut Answers,
    asker: &mut dyn Asker,
    ctx: &Ctx,
) -> Result<Vec<String>, InitError> {
    let default = q.default(a, ctx);
    let prompt = Prompt {
        text: q.prompt,
        default: default.as_deref(),
        hint: q.hint(a, ctx),
    };
    loop {
        let line = match asker.ask(&prompt) {
            Ok(Some(l)) => l,
            Ok(None) => return Err(InitError::Aborted("end of input".into())),
            Err(e) => return Err(InitError::Aborted(format!("cannot read the answer: {e}"))),
        };
        let text = line.trim();
        let text = match (text.is_empty(), default.as_deref()) {
            (false, _) => text,
            (true, Some(d)) => d,
            (true, None) => {
                asker.tell("an answer is needed here");
                continue;
            }
        };
        match q.answer(a, text, ctx) {
            Ok(notes) => return Ok(notes),
            Err(why) => asker.tell(&format!("{why}; try again")),
        }
    }
}

/// Maps `(flag, value)` pairs to `(question key, flag, value)`. The token flags also answer
/// "where the token lives", `--duration`/`--total` also "stop by"; each pair of those is
/// exclusive, and every flag may be given once.
fn by_question(given: &Given) -> Result<Vec<(&'static str, String, String)>, InitError> {
    let mut out: Vec<(&'static str, String, String)> = Vec::new();
    let flag_err = |flag: &str, message: String| InitError::Flag {
        flag: flag.to_string(),
        message,
    };
    for (flag, value) in given {
        let Some(q) = QUESTIONS.iter().find(|q| q.flag == flag) else {
            return Err(flag_err(flag, "is not an init flag".into()));
        };
        let derived = match q.key {
            "token_env" => Some(("token_from", "env")),
            "token_file" => Some(("token_from", "file")),
            "token_secret" => Some(("token_from", "secret")),
            "stop_after" => Some(("stop_by", "time")),
            "stop_total" => Some(("stop_by", "count")),
            _ => None,
        };
        if let Some((key, v)) = derived {
            if let Some((_, other, _)) = out.iter().find(|(k, _, _)| *k == key) {
                return Err(flag_err(
                    flag,
                    format!("give only one of {other} and {flag}"),
                ));
            }
            out.push((key, flag.clone(), v.to_string()));
        }
        if out.iter().any(|(k, _, _)| *k == q.key) {
            return Err(flag_err(flag, "is given twice".into()));
        }
        out.push((q.key, flag.clone(), value.clone()));
    }
    Ok(out)
}

/// The config file, checked: the answers rendered as commented YAML and read back by the real
/// config loader (schema, every rule, the pack catalog). Never a text that does not validate.
pub struct Finished {
    pub text: String,
    /// The loader's warnings not already told during the interview (a token variable not set
    /// now, say).
    pub warnings: Vec<String>,
}

/// Renders `iv`'s answers for the file `file` (named in the header comment) and validates them.
pub fn finish(iv: &Interview, file: &str, ctx: &Ctx) -> Result<Finished, InitError> {
    let text = render::render(&iv.answers, file);
    let loaded = crate::config::load_str(&text, ctx.store, Some(ctx.catalog));
    if loaded.config.is_none() {
        return Err(InitError::Invalid(
            loaded.diags.errors().map(|d| d.to_string()).collect(),
        ));
    }
    let warnings = loaded
        .diags
        .warnings()
        .filter(|d| !iv.told.contains(&d.message))
        .map(|d| d.to_string())
        .collect();
    Ok(Finished { text, warnings })
}

/// The default run name for a config written to `out`: its file stem, when that is a usable
/// name, else `ingestbench`.
pub fn default_name(out: &str) -> String {
    std::path::Path::new(out)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| out != "-" && !s.is_empty() && s.len() <= 128)
        .filter(|s| s.chars().all(|c| c.is_ascii_graphic()))
        .unwrap_or("ingestbench")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A person who types the given lines, then ends the input.
    struct Script {
        lines: VecDeque<&'static str>,
        asked: Vec<String>,
        told: Vec<String>,
    }

    impl Script {
        fn new(lines: &[&'static str]) -> Self {
            Script {
                lines: lines.iter().copied().collect(),
                asked: Vec::new(),
                told: Vec::new(),
            }
        }
    }

    impl Asker for Script {
        fn ask(&mut self, p: &Prompt) -> std::io::Result<Option<String>> {
            self.asked.push(p.text.to_string());
            Ok(self.lines.pop_front().map(String::from))
        }
        fn tell(&mut self, text: &str) {
            self.told.push(text.to_string());
        }
    }

    fn with_ctx<T>(f: impl FnOnce(&Ctx) -> T) -> T {
        let catalog = Catalog::discover(None).unwrap();
        let store = Store::new("/nonexistent/ingestbench-init-test".into());
        f(&Ctx::new(&catalog, &store))
    }

    fn given(pairs: &[(&str, &str)]) -> Given {
        pairs
            .iter()
            .map(|(f, v)| (f.to_string(), v.to_string()))
            .collect()
    }

    fn from_flags(pairs: &[(&str, &str)]) -> Result<String, InitError> {
        with_ctx(|ctx| {
            let iv = interview("t", &given(pairs), None, ctx)?;
            finish(&iv, "t.yaml", ctx).map(|f| f.text)
        })
    }

    fn flag_error(pairs: &[(&str, &str)]) -> (String, String) {
        match from_flags(pairs) {
            Err(InitError::Flag { flag, message }) => (flag, message),
            other => panic!("{pairs:?}: expected a flag error, got {other:?}"),
        }
    }

    #[test]
    fn every_default_taken_gives_a_valid_config() {
        let text = from_flags(&[]).unwrap();
        assert!(text.contains("url: builtin"), "{text}");
        assert!(text.contains("eps: 1000"), "{text}");
        assert!(text.contains("after: 1m"), "{text}");
    }

    #[test]
    fn the_answers_that_steer_give_valid_configs_in_every_combination() {
        let urls: &[(&str, &[&str])] = &[
            (
                "lphc",
                &[
                    "builtin",
                    "http://127.0.0.1:9/ingest",
                    "https://collector.test:8443/x",
                ],
            ),
            ("hec", &["builtin", "https://127.0.0.1:8088"]),
            (
                "syslog",
                &[
                    "builtin",
                    "tcp://127.0.0.1:514",
                    "udp://127.0.0.1:514",
                    "tls://127.0.0.1:6514",
                ],
            ),
        ];
        let mut n = 0;
        for (adapter, urls) in urls {
            for url in *urls {
                for profile in ["steady", "ramp", "burst", "steps"] {
                    let stop = if n % 2 == 0 {
                        ("--duration", "2m")
                    } else {
                        ("--total", "5000")
                    };
                    let pairs = [
                        ("--adapter", *adapter),
                        ("--url", url),
                        ("--profile", profile),
                        stop,
                    ];
                    if let Err(e) = from_flags(&pairs) {
                        panic!("{pairs:?}: {e}");
                    }
                    n += 1;
                }
            }
        }
        for (auth, extra) in [
            ("bearer", None),
            ("basic", Some(("--auth-username", "svc"))),
            ("header", Some(("--auth-header", "X-Token"))),
            ("none", None),
        ] {
            for token in [
                ("--token-env", "MY_TOKEN"),
                ("--token-file", "/nonexistent/t"),
                ("--token-secret", "lab"),
            ] {
                let mut pairs = vec![("--url", "http://127.0.0.1:9/x"), ("--auth", auth)];
                pairs.extend(extra);
                if auth != "none" {
                    pairs.push(token);
                }
                let text = from_flags(&pairs).unwrap_or_else(|e| panic!("{pairs:?}: {e}"));
                if auth != "none" {
                    assert!(
                        text.contains(&format!("{}: {}", &token.0[2..].replace('-', "_"), token.1)),
                        "{text}"
                    );
                }
            }
        }
    }

    #[test]
    fn hec_with_a_token_variable() {
        let text = from_flags(&[
            ("--adapter", "generic-hec"),
            ("--url", "http://127.0.0.1:8088"),
            ("--token-env", "HEC_LAB_TOKEN"),
            ("--hec-index", "main"),
            ("--hec-ack", "yes"),
            ("--source", "identity.okta"),
        ])
        .unwrap();
        for want in [
            "scheme: splunk",
            "token_env: HEC_LAB_TOKEN",
            "index: main",
            "ack: true",
            "id: identity.okta",
        ] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
    }

    #[test]
    fn a_bad_flag_is_named_with_the_reason() {
        assert_eq!(
            flag_error(&[("--eps", "0")]),
            ("--eps".into(), "\"0\" is not a positive number".into())
        );
        let (f, m) = flag_error(&[("--duration", "30")]);
        assert_eq!(f, "--duration");
        assert!(m.contains("not a duration"), "{m}");
        let (f, m) = flag_error(&[("--adapter", "lphx")]);
        assert_eq!(f, "--adapter");
        assert!(m.contains("did you mean \"lphc\""), "{m}");
        let (f, m) = flag_error(&[("--source", "aws.cloudtrial")]);
        assert_eq!(f, "--source");
        assert!(m.contains("did you mean aws.cloudtrail"), "{m}");
        let (f, m) = flag_error(&[("--url", "ftp://x:1")]);
        assert_eq!(f, "--url");
        assert!(m.contains("does not fit adapter lphc"), "{m}");
        let (f, m) = flag_error(&[("--adapter", "syslog"), ("--url", "tcp://127.0.0.1")]);
        assert_eq!(f, "--url");
        assert!(m.contains("needs a port"), "{m}");
        let (f, m) = flag_error(&[("--slo-min-success-rate", "99.9")]);
        assert_eq!(f, "--slo-min-success-rate");
        assert!(m.contains("fraction"), "{m}");
        let (f, m) = flag_error(&[("--profile", "burst"), ("--burst-duty", "1")]);
        assert_eq!(f, "--burst-duty");
        assert!(m.contains("strictly between 0 and 1"), "{m}");
    }

    #[test]
    fn flags_that_do_not_apply_or_clash_are_refused() {
        let (f, m) = flag_error(&[("--token-env", "X")]);
        assert_eq!(f, "--token-env");
        assert!(m.contains("applies only to an auth scheme"), "{m}");
        let (f, m) = flag_error(&[("--adapter", "syslog"), ("--hec-index", "main")]);
        assert_eq!(
            (f.as_str(), m.as_str()),
            ("--hec-index", "applies only to adapter generic-hec")
        );
        let (f, m) = flag_error(&[("--duration", "1m"), ("--total", "5")]);
        assert_eq!(f, "--total");
        assert!(m.contains("only one of --duration and --total"), "{m}");
        let (f, _) = flag_error(&[
            ("--url", "http://127.0.0.1:1/"),
            ("--token-env", "A"),
            ("--token-secret", "b"),
        ]);
        assert_eq!(f, "--token-secret");
        let (f, m) = flag_error(&[("--url", "http://127.0.0.1:1/"), ("--auth", "basic")]);
        assert_eq!(
            (f.as_str(), m.as_str()),
            (
                "--auth-username",
                "needs a value: basic-auth username (the token is the password)"
            )
        );
        let (f, m) = flag_error(&[("--url", "http://127.0.0.1:1/"), ("--auth", "splunk")]);
        assert_eq!(f, "--auth");
        assert!(m.contains("does not fit adapter lphc"), "{m}");
    }

    #[test]
    fn a_person_is_asked_again_until_the_answer_passes() {
        with_ctx(|ctx| {
            // name, adapter (a typo, then syslog), url (no port, then one), framing, format,
            // source (a typo, then right), profile, eps (zero, then 50), stop by, run for
            // (no unit, then 10s), and four objectives left out.
            let mut s = Script::new(&[
                "",
                "sislog",
                "syslog",
                "tcp://127.0.0.1",
                "tcp://127.0.0.1:5514",
                "lf",
                "",
                "linux.syslg",
                "linux.syslog",
                "",
                "0",
                "50",
                "",
                "10",
                "10s",
                "",
                "250",
                "",
                "",
            ]);
            let iv = interview("lab", &Given::new(), Some(&mut s), ctx).unwrap();
            assert!(s.lines.is_empty(), "left over: {:?}", s.lines);
            let text = finish(&iv, "lab.yaml", ctx).unwrap().text;
            for want in [
                "name: lab",
                "adapter: syslog",
                "url: tcp://127.0.0.1:5514",
                "framing: lf",
                "id: linux.syslog",
                "eps: 50",
                "after: 10s",
                "max_p99_ms: 250",
            ] {
                assert!(text.contains(want), "{want} missing from\n{text}");
            }
            let told = s.told.join("\n");
            for want in [
                "did you mean \"syslog\"",
                "needs a port",
                "did you mean linux.syslog",
                "not a positive number",
                "not a duration",
            ] {
                assert!(told.contains(want), "{want} not told:\n{told}");
            }
            // No HEC, TLS or token questions for a syslog tcp target.
            assert!(
                !s.asked
                    .iter()
                    .any(|q| q.contains("HEC") || q.contains("token") || q.contains("certificate")),
                "{:?}",
                s.asked
            );
        });
    }

    #[test]
    fn preset_flags_are_not_asked_and_the_end_of_input_aborts() {
        with_ctx(|ctx| {
            let mut s = Script::new(&["", ""]);
            let e = interview("x", &given(&[("--adapter", "syslog")]), Some(&mut s), ctx)
                .err()
                .unwrap();
            assert_eq!(e, InitError::Aborted("end of input".into()));
            assert_eq!(e.exit(), Exit::Aborted);
            assert_eq!(
                s.asked,
                [
                    "name of the run",
                    "target url",
                    "syslog transport to the built-in sink"
                ]
            );
        });
    }

    #[test]
    fn token_name_answers_are_not_echoed() {
        with_ctx(|ctx| {
            let mut s = Script::new(&[
                "",
                "",
                "http://127.0.0.1:1/x",
                "",
                "",
                "s3cr3t-t0ken-value!",
            ]);
            let _ = interview("x", &Given::new(), Some(&mut s), ctx);
            assert!(
                s.told
                    .iter()
                    .any(|t| t.contains("not an environment variable name")),
                "{:?}",
                s.told
            );
            assert!(!s.told.iter().any(|t| t.contains("s3cr3t")), "{:?}", s.told);
        });
    }

    #[test]
    fn a_token_file_others_can_read_is_refused_at_its_flag() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("token");
        std::fs::write(&f, "x").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let path = f.to_str().unwrap();
        let (flag, m) = flag_error(&[("--url", "http://127.0.0.1:1/"), ("--token-file", path)]);
        assert_eq!(flag, "--token-file");
        assert!(m.contains("chmod 600"), "{m}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let text = from_flags(&[("--url", "http://127.0.0.1:1/"), ("--token-file", path)]).unwrap();
        assert!(text.contains(&format!("token_file: {path}")), "{text}");
    }

    #[test]
    fn default_names_come_from_the_file() {
        assert_eq!(default_name("configs/lab-run.yaml"), "lab-run");
        assert_eq!(default_name("-"), "ingestbench");
        assert_eq!(default_name("a b.yaml"), "ingestbench");
    }
}
