//! `run`'s target, source and rate flags (`--url`, `--adapter`, `--source ID[:SHARE],…`,
//! `--rate`, `--token-env|--token-file|--token-secret`, `--auth`) as a config. Without
//! `--config` they fill in a config of their own (the adapter from the url, the source `init`
//! defaults to, 1,000 events/s for a minute unless `--eps`/`--rate` and `--duration`/`--total`
//! say otherwise); with it they replace the file's values. Either way the result is written
//! as YAML (`config::text`, every value quoted) and read back through the loader and the
//! validator a file goes through, so a bad value is refused naming its field. `--print-config`
//! prints the config a command line comes to, overrides folded in, defaults left out.

use serde_json::{Map, Value, json};

use crate::config::schema::{Adapter, AuthScheme, Config};
use crate::config::secrets::Store;
use crate::config::text;
use crate::config::units::{DataRate, parse_data_rate};
use crate::pack::Catalog;
use crate::run::{LoadedConfig, Overrides, SetupError};

/// The source a run without a config sends (as `init` and `probe` default to it).
pub const DEFAULT_SOURCE: &str = "aws.cloudtrail";
/// The source of a syslog run without a config: syslog already.
pub const DEFAULT_SYSLOG_SOURCE: &str = "linux.syslog";
/// A run without a config: this rate for this long, unless the flags say.
pub const DEFAULT_EPS: f64 = 1000.0;
pub const DEFAULT_DURATION: &str = "1m";

/// The flags that say what a config says: where events go, what they are, how fast.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flags {
    pub url: Option<String>,
    pub adapter: Option<Adapter>,
    /// `--source ID[:SHARE],…`: pack ids, each with its share of the events when given.
    pub sources: Option<Vec<(String, Option<f64>)>>,
    pub rate: Option<DataRate>,
    /// The token's place: (`token_env` | `token_file` | `token_secret`, the name).
    pub token: Option<(&'static str, String)>,
    pub auth: Option<AuthScheme>,
}

/// The flags as given (each value checked on its own; the config they make is checked whole).
pub struct Given<'a> {
    pub url: Option<&'a str>,
    pub adapter: Option<&'a str>,
    pub source: Option<&'a str>,
    pub rate: Option<&'a str>,
    pub token_env: Option<&'a str>,
    pub token_file: Option<&'a str>,
    pub token_secret: Option<&'a str>,
    pub auth: Option<&'a str>,
    /// `--eps` was given too.
    pub eps: bool,
}

impl Flags {
    pub fn parse(g: &Given) -> Result<Flags, SetupError> {
        let bad = |m: String| SetupError::invalid(m);
        if g.eps && g.rate.is_some() {
            return Err(bad(
                "give --eps (events per second) or --rate (bytes per second, e.g. 20MB/s), not both"
                    .into(),
            ));
        }
        let tokens: Vec<(&'static str, &str)> = [
            ("token_env", g.token_env),
            ("token_file", g.token_file),
            ("token_secret", g.token_secret),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
        if tokens.len() > 1 {
            return Err(bad(
                "give one of --token-env, --token-file and --token-secret".into(),
            ));
        }
        Ok(Flags {
            url: g.url.map(str::to_string),
            adapter: g
                .adapter
                .map(|a| Adapter::parse(a).map_err(|e| bad(format!("--adapter: {e}"))))
                .transpose()?,
            sources: g.source.map(parse_sources).transpose()?,
            rate: g
                .rate
                .map(|r| parse_data_rate(r).map_err(|e| bad(format!("--rate: {e}"))))
                .transpose()?,
            token: tokens.first().map(|(k, v)| (*k, v.to_string())),
            auth: g
                .auth
                .map(|a| AuthScheme::parse(a).map_err(|e| bad(format!("--auth: {e}"))))
                .transpose()?,
        })
    }

    /// None of these flags was given: a config file says it all.
    pub fn is_empty(&self) -> bool {
        *self == Flags::default()
    }

    /// The form of a config made from these flags alone (`--url` is required then).
    pub fn own_config(&self) -> Result<Value, SetupError> {
        let Some(url) = &self.url else {
            return Err(SetupError::invalid(
                "give --config FILE, or --url URL for a run without a config file (`ingestbench run --help`)",
            ));
        };
        let adapter = self.adapter.unwrap_or_else(|| adapter_of(url));
        let source = if adapter == Adapter::Syslog {
            DEFAULT_SYSLOG_SOURCE
        } else {
            DEFAULT_SOURCE
        };
        let mut v = json!({
            "schema_version": crate::config::schema::SCHEMA_VERSION,
            "target": { "adapter": adapter.name(), "url": url },
            "source": { "id": source },
            "workload": { "eps": DEFAULT_EPS, "stop": { "after": DEFAULT_DURATION } },
        });
        self.apply(&mut v)?;
        Ok(v)
    }

    /// Writes these flags over `v`, a config's form: each given flag replaces what the config
    /// says there, and nothing else changes.
    pub fn apply(&self, v: &mut Value) -> Result<(), SetupError> {
        let root = obj(v);
        let target = obj(root.entry("target").or_insert_with(|| json!({})));
        if let Some(u) = &self.url {
            target.insert("url".into(), json!(u));
        }
        if let Some(a) = self.adapter {
            target.insert("adapter".into(), json!(a.name()));
        }
        let adapter = target
            .get("adapter")
            .and_then(Value::as_str)
            .and_then(|a| Adapter::parse(a).ok())
            .unwrap_or(Adapter::Lphc);
        match (&self.token, self.auth, target.get_mut("auth")) {
            (None, None, _) => {}
            (Some((key, name)), scheme, existing) => {
                let mut auth = match existing {
                    Some(Value::Object(m)) => m.clone(),
                    _ => Map::new(),
                };
                for k in ["token_env", "token_file", "token_secret"] {
                    auth.remove(k);
                }
                auth.insert((*key).into(), json!(name));
                match scheme {
                    Some(s) => {
                        auth.insert("scheme".into(), json!(s.name()));
                    }
                    None => {
                        auth.entry("scheme").or_insert_with(|| {
                            json!(crate::probe::setup::default_scheme(adapter).name())
                        });
                    }
                }
                target.insert("auth".into(), Value::Object(auth));
            }
            (None, Some(s), Some(Value::Object(auth))) => {
                auth.insert("scheme".into(), json!(s.name()));
            }
            (None, Some(_), _) => {
                return Err(SetupError::invalid(
                    "--auth needs a token: --token-env VAR, --token-file FILE or --token-secret NAME",
                ));
            }
        }
        if let Some(list) = &self.sources {
            let old = root.get("source").cloned();
            root.insert("source".into(), sources(list, old)?);
        }
        if let Some(r) = &self.rate {
            let w = obj(root.entry("workload").or_insert_with(|| json!({})));
            for k in ["eps", "burst", "ramp", "steps"] {
                w.remove(k);
            }
            w.insert("profile".into(), json!("steady"));
            w.insert("rate".into(), json!(r.to_string()));
        }
        Ok(())
    }
}

/// The object `v` is, made one if it is not.
fn obj(v: &mut Value) -> &mut Map<String, Value> {
    if !v.is_object() {
        *v = Value::Object(Map::new());
    }
    match v {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

/// The adapter a url implies (`probe`'s reading: tcp/udp/tls:// syslog, a path under
/// /services/collector HEC), else lphc: the built-in sink and JSON-batch collectors.
pub fn adapter_of(url: &str) -> Adapter {
    crate::probe::setup::guess_adapter(url).unwrap_or(Adapter::Lphc)
}

/// `aws.cloudtrail`, `a:0.7,b:0.3`, `a,b` (equal shares), `a:0.5,b,c` (the rest shared).
pub fn parse_sources(text: &str) -> Result<Vec<(String, Option<f64>)>, SetupError> {
    let bad = |m: String| Err(SetupError::invalid(format!("--source {text:?}: {m}")));
    let mut out = Vec::new();
    for part in text.split(',') {
        let (id, share) = match part.split_once(':') {
            Some((id, s)) => match s.trim().parse::<f64>() {
                Ok(v) if v > 0.0 && v <= 1.0 => (id.trim(), Some(v)),
                _ => return bad(format!("{s:?} is not a share between 0 and 1, e.g. 0.25")),
            },
            None => (part.trim(), None),
        };
        if id.is_empty() {
            return bad("expected ID[:SHARE],… e.g. aws.cloudtrail:0.7,linux.syslog:0.3".into());
        }
        out.push((id.to_string(), share));
    }
    if let [(_, Some(s))] = out.as_slice()
        && *s != 1.0
    {
        return bad("a single source sends every event: leave its share out".into());
    }
    Ok(out)
}

/// `source:` for `list`: one pack as today's mapping (the config's other source keys kept,
/// its version requirement dropped: it was the old pack's), several as a list of
/// `{id, share}` with the shares the flags give (those left out share what is left equally)
/// and the config's other source keys on the first, which carries a mix's timestamps and
/// accounting.
fn sources(list: &[(String, Option<f64>)], old: Option<Value>) -> Result<Value, SetupError> {
    let mut keep = match old {
        Some(Value::Object(m)) => m,
        Some(Value::Array(items)) => match items.into_iter().next() {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    for k in ["id", "version", "share", "eps"] {
        keep.remove(k);
    }
    if let [(id, _)] = list {
        keep.insert("id".into(), json!(id));
        return Ok(Value::Object(keep));
    }
    let given: f64 = list.iter().filter_map(|(_, s)| *s).sum();
    let open = list.iter().filter(|(_, s)| s.is_none()).count();
    if open > 0 && given >= 1.0 {
        return Err(SetupError::invalid(format!(
            "--source: the shares given add up to {given}, leaving nothing for the {open} without one"
        )));
    }
    let rest = if open > 0 {
        (1.0 - given) / open as f64
    } else {
        0.0
    };
    let items = list
        .iter()
        .enumerate()
        .map(|(i, (id, share))| {
            let mut m = if i == 0 { keep.clone() } else { Map::new() };
            m.insert("id".into(), json!(id));
            m.insert("share".into(), json!(share.unwrap_or(rest)));
            Value::Object(m)
        })
        .collect();
    Ok(Value::Array(items))
}

/// What `ov` says that a config can say too, written into `c`: the stop, the rate and the
/// seed (as the run applies them), the connections, the status page and `/metrics`, the
/// linger and what is watched. The run plans `c` alone as it plans the config with `ov`.
pub fn fold(c: &mut Config, ov: &Overrides) -> Result<(), SetupError> {
    crate::run::plan::apply_overrides(c, ov)?;
    let o = &mut c.observability;
    if let Some(a) = ov.status {
        o.dashboard = true;
        o.dashboard_listen = Some(a.to_string());
    }
    if ov.allow_remote {
        o.allow_remote = true;
    }
    if let Some(v) = &ov.status_token_env {
        o.dashboard_token_env = Some(v.clone());
    }
    if let Some(a) = ov.prometheus {
        o.prometheus = Some(a.to_string());
    }
    if let Some(l) = ov.linger {
        o.linger = crate::config::units::Dur(l);
    }
    Ok(())
}

/// `loaded` with what `ov` says that a config can say written into it (`fold`), read back
/// through the loader and the validator when that changed anything: the config a run of
/// these flags plans, refused with the validator's messages when the overrides make it one
/// `validate` would refuse. Unchanged, it is given back as it was (its warnings with lines).
pub fn folded(
    loaded: LoadedConfig,
    ov: &Overrides,
    origin: &str,
    store: &Store,
    catalog: &Catalog,
) -> Result<LoadedConfig, SetupError> {
    let mut c = loaded.config.clone();
    fold(&mut c, ov)?;
    let v = text::value(&c);
    if v == text::value(&loaded.config) {
        return Ok(loaded);
    }
    crate::run::load_generated(&text::to_yaml(&v), origin, store, catalog)
        .map_err(|e| name_flags(e, &override_fields(ov)))
}

/// The config fields `ov` sets, each with its flag (for `name_flags`).
pub fn override_fields(ov: &Overrides) -> [(&'static str, &'static str, bool); 8] {
    [
        ("workload.workers", "--workers", ov.workers.is_some()),
        ("workload.eps", "--eps", ov.eps.is_some()),
        ("workload.stop.after", "--duration", ov.duration.is_some()),
        ("workload.stop.total_events", "--total", ov.total.is_some()),
        (
            "observability.dashboard_listen",
            "--status",
            ov.status.is_some(),
        ),
        (
            "observability.prometheus",
            "--prometheus",
            ov.prometheus.is_some(),
        ),
        ("observability.linger", "--linger", ov.linger.is_some()),
        ("observability.watch", "--watch", !ov.watch.is_empty()),
    ]
}

/// The messages of `e` about a field a flag set, with the flag named after the field:
/// `workload.workers (--workers): must be between …` — the message `validate` gives for the
/// field in a file, where the line stands.
pub fn name_flags(e: SetupError, given: &[(&str, &str, bool)]) -> SetupError {
    let SetupError::Invalid(msgs) = e else {
        return e;
    };
    let named = msgs
        .into_iter()
        .map(|m| {
            let Some((path, rest)) = m.split_once(": ") else {
                return m;
            };
            let flag = given.iter().find(|(field, _, set)| {
                *set && path
                    .strip_prefix(field)
                    .is_some_and(|t| t.is_empty() || t.starts_with(['.', '[']))
            });
            match flag {
                Some((_, flag, _)) => format!("{path} ({flag}): {rest}"),
                None => m,
            }
        })
        .collect();
    SetupError::Invalid(named)
}

/// The YAML `--print-config` prints: `c` (overrides folded in already) with its defaults
/// left out, after a comment naming what no config key holds (`unkept`: `--threads 2`, …).
/// The text is read back through the loader and the validator before it is given: what it
/// prints, `validate` takes.
pub fn print(
    c: &Config,
    origin: &str,
    unkept: &[String],
    (store, catalog): (&Store, &Catalog),
) -> Result<String, SetupError> {
    // Header values and URL credentials are never printed: a config that needs them takes
    // its token from target.auth (token_env, token_file, token_secret). What is printed is
    // what is checked, so the printed config validates.
    let mut v = text::value(c);
    crate::config::redact::config(&mut v);
    let redacted = v != text::value(c);
    let body = text::to_yaml(&text::minimal(&v));
    crate::run::load_generated(&body, origin, store, catalog)?;
    let mut out = format!(
        "# {origin}, as a config (ingestbench {}): run it with `ingestbench run --config FILE`.\n",
        env!("CARGO_PKG_VERSION")
    );
    if !unkept.is_empty() {
        out.push_str(&format!(
            "# Not in a config, give them again: {}\n",
            unkept.join(" ")
        ));
    }
    if redacted {
        out.push_str(
            "# Sensitive header values and URL credentials are shown as <redacted>: give a \
             token through target.auth (token_env, token_file or token_secret).\n",
        );
    }
    out.push_str(&body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(url: Option<&'static str>) -> Given<'static> {
        Given {
            url,
            adapter: None,
            source: None,
            rate: None,
            token_env: None,
            token_file: None,
            token_secret: None,
            auth: None,
            eps: false,
        }
    }

    fn read(v: &Value) -> Config {
        let t = text::to_yaml(v);
        let store = crate::config::secrets::Store::new("/nonexistent/store".into());
        let l = crate::config::load_str(&t, &store, None);
        let e: Vec<String> = l.diags.errors().map(|d| d.to_string()).collect();
        l.config.unwrap_or_else(|| panic!("{e:?}\n{t}"))
    }

    #[test]
    fn a_url_alone_is_a_whole_config() {
        let f = Flags::parse(&given(Some("builtin"))).unwrap();
        let c = read(&f.own_config().unwrap());
        assert_eq!(c.target.adapter, Adapter::Lphc);
        assert_eq!(c.target.url, "builtin");
        assert_eq!(c.source().unwrap().id, DEFAULT_SOURCE);
        assert_eq!(c.workload.eps, Some(DEFAULT_EPS));
        assert_eq!(c.workload.stop.after.unwrap().to_string(), "1m");
        let syslog = Flags::parse(&given(Some("tcp://127.0.0.1:5514"))).unwrap();
        let c = read(&syslog.own_config().unwrap());
        assert_eq!(c.target.adapter, Adapter::Syslog);
        assert_eq!(c.source().unwrap().id, DEFAULT_SYSLOG_SOURCE);
        let hec = Flags::parse(&given(Some("https://h:8088/services/collector"))).unwrap();
        assert_eq!(
            hec.own_config().unwrap()["target"]["adapter"],
            "generic-hec"
        );
        let e = Flags::parse(&given(None))
            .unwrap()
            .own_config()
            .unwrap_err();
        assert!(e.messages()[0].contains("--url URL"), "{:?}", e.messages());
    }

    #[test]
    fn flags_replace_what_a_config_says_and_nothing_else() {
        let store = crate::config::secrets::Store::new("/nonexistent/store".into());
        let file = "schema_version: \"1.0\"\ntarget: { url: \"http://127.0.0.1:9/ingest\", auth: { scheme: bearer, token_env: OLD } }\nsource: { id: aws.cloudtrail, version: \"^1\", entities: { user: 40 } }\nworkload: { profile: ramp, ramp: { from_eps: 1, to_eps: 9, over: 5s }, stop: { after: 9s } }\n";
        let c = crate::config::load_str(file, &store, None).config.unwrap();
        let mut v = text::value(&c);
        let f = Flags::parse(&Given {
            url: Some("builtin"),
            source: Some("linux.syslog"),
            rate: Some("2MB/s"),
            token_file: Some("/run/tok"),
            ..given(None)
        })
        .unwrap();
        f.apply(&mut v).unwrap();
        let c = read(&v);
        assert_eq!(c.target.url, "builtin");
        let a = c.target.auth.as_ref().unwrap();
        assert_eq!(a.scheme, Some(AuthScheme::Bearer));
        assert_eq!(
            (a.token_env.as_deref(), a.token_file.as_deref()),
            (None, Some("/run/tok"))
        );
        let s = c.source().unwrap();
        assert_eq!((s.id.as_str(), s.version.as_str()), ("linux.syslog", "*"));
        assert_eq!(s.entities, vec![("user".to_string(), 40)]);
        assert_eq!(c.workload.rate.unwrap().to_string(), "2MB/s");
        assert!(c.workload.ramp.is_none() && c.workload.eps.is_none());
        assert_eq!(c.workload.stop.after.unwrap().to_string(), "9s");
    }

    /// Several sources are a list of `{id, share}` (the form the mixed-source config takes),
    /// the config's other source keys on the first.
    #[test]
    fn several_sources_are_a_list_with_shares() {
        let mut v = json!({ "source": { "id": "x", "version": "^1", "accounting": false } });
        let f = Flags::parse(&Given {
            source: Some("aws.cloudtrail:0.5,linux.syslog,identity.okta"),
            ..given(None)
        })
        .unwrap();
        f.apply(&mut v).unwrap();
        assert_eq!(
            v["source"],
            json!([
                { "id": "aws.cloudtrail", "share": 0.5, "accounting": false },
                { "id": "linux.syslog", "share": 0.25 },
                { "id": "identity.okta", "share": 0.25 },
            ])
        );
        assert_eq!(
            text::to_yaml(&json!({ "source": v["source"].clone() })),
            "source:\n  - id: \"aws.cloudtrail\"\n    share: 0.5\n    accounting: false\n  - id: \"linux.syslog\"\n    share: 0.25\n  - id: \"identity.okta\"\n    share: 0.25\n"
        );
        let equal = parse_sources("a,b").unwrap();
        assert_eq!(equal, vec![("a".into(), None), ("b".into(), None)]);
        for bad in ["a:0", "a:1.5", "a:x", "a:0.5", ",a", "a:0.7,b:0.3,c"] {
            let r = parse_sources(bad).and_then(|l| sources(&l, None));
            assert!(r.is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_take_the_adapters_scheme_and_auth_needs_one() {
        let f = Flags::parse(&Given {
            token_env: Some("HEC_TOKEN"),
            ..given(Some("https://h:8088/services/collector"))
        })
        .unwrap();
        let v = f.own_config().unwrap();
        assert_eq!(
            v["target"]["auth"],
            json!({ "scheme": "splunk", "token_env": "HEC_TOKEN" })
        );
        let only_auth = Flags::parse(&Given {
            auth: Some("bearer"),
            ..given(Some("builtin"))
        })
        .unwrap();
        assert!(only_auth.own_config().is_err());
        let two = Flags::parse(&Given {
            token_env: Some("A"),
            token_secret: Some("b"),
            ..given(Some("builtin"))
        });
        assert!(two.is_err());
        let both = Flags::parse(&Given {
            rate: Some("1MB/s"),
            eps: true,
            ..given(Some("builtin"))
        });
        assert!(both.is_err());
        let rate = Flags::parse(&Given {
            rate: Some("1MB"),
            ..given(Some("builtin"))
        });
        assert!(rate.unwrap_err().messages()[0].starts_with("--rate: "));
    }
}
