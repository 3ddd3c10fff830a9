//! Config files: read (`schema`), checked (`validate`), with units (`units`) and tokens
//! (`secrets`). `load` is the one entry point: a path in, a `Loaded` out with the config (when
//! it has no errors) and every diagnostic. Nothing after setup reads YAML, and workers never
//! see this module's types.

pub mod redact;
pub mod schema;
pub mod secrets;
pub mod text;
pub mod units;
pub mod validate;

use std::path::Path;

use crate::yaml::{self, Reader, diag::Diags};
pub use schema::Config;
use secrets::Store;
pub use validate::PackIndex;

/// The result of loading one config file.
pub struct Loaded {
    /// Present only when there are no errors.
    pub config: Option<Config>,
    pub diags: Diags,
}

/// Reads, parses and validates the file at `path`; tokens are looked up in `store` only to
/// warn about missing ones; `packs`, when given, checks the source pack exists.
pub fn load(path: &Path, store: &Store, packs: Option<&dyn PackIndex>) -> Loaded {
    match yaml::read_text(path) {
        Ok(text) => load_str(&text, store, packs),
        Err(msg) => {
            let mut diags = Diags::default();
            diags.error("", None, msg);
            Loaded {
                config: None,
                diags,
            }
        }
    }
}

/// As `load`, from text.
pub fn load_str(text: &str, store: &Store, packs: Option<&dyn PackIndex>) -> Loaded {
    load_str_adjusted(text, store, packs, &mut |_| {})
}

/// As `load`, with `adjust` applied to the config as read before the rules judge it (a run's
/// command-line overrides): what is judged is the config the run would use, the file's
/// fields keep their lines, and a problem with a field `adjust` changed has no line (the
/// caller names where its value came from).
pub fn load_adjusted(
    path: &Path,
    store: &Store,
    packs: Option<&dyn PackIndex>,
    adjust: &mut dyn FnMut(&mut Config),
) -> Loaded {
    match yaml::read_text(path) {
        Ok(text) => load_str_adjusted(&text, store, packs, adjust),
        Err(msg) => {
            let mut diags = Diags::default();
            diags.error("", None, msg);
            Loaded {
                config: None,
                diags,
            }
        }
    }
}

/// As `load_adjusted`, from text.
pub fn load_str_adjusted(
    text: &str,
    store: &Store,
    packs: Option<&dyn PackIndex>,
    adjust: &mut dyn FnMut(&mut Config),
) -> Loaded {
    let mut r = Reader::default();
    let mut config =
        yaml::parse(text, &mut r.diags).and_then(|root| schema::read_config(&mut r, &root));
    let mut changed = Vec::new();
    if let Some(c) = config.as_mut() {
        let before = text::value(c);
        adjust(c);
        text::changed_paths(&before, &text::value(c), "", &mut changed);
        validate::validate(c, &mut r, store, packs);
    }
    for d in &mut r.diags.items {
        let under = |p: &String| {
            d.path
                .strip_prefix(p.as_str())
                .is_some_and(|t| t.is_empty() || t.starts_with(['.', '[']))
        };
        if changed.iter().any(under) {
            d.pos = None;
        }
    }
    // Report in file order, whatever order the rules ran in.
    r.diags
        .items
        .sort_by_key(|d| d.pos.map_or((usize::MAX, 0), |p| (p.line, p.column)));
    let ok = !r.diags.has_errors();
    Loaded {
        config: config.filter(|_| ok),
        diags: r.diags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "schema_version: \"1.0\"\ntarget: { url: builtin }\nsource: { id: aws.cloudtrail }\nworkload: { eps: 10, stop: { after: 5s } }\n";

    fn load(text: &str) -> Loaded {
        load_str(text, &Store::new("/nonexistent/store".into()), None)
    }

    fn messages(l: &Loaded) -> Vec<String> {
        l.diags.items.iter().map(|d| d.to_string()).collect()
    }

    #[test]
    fn minimal_config_gets_defaults() {
        let l = load(BASE);
        let c = l.config.expect("valid");
        assert_eq!(c.target.adapter, schema::Adapter::Lphc);
        assert_eq!(c.target.batch.max_events, schema::DEFAULT_BATCH_EVENTS);
        assert_eq!(c.target.compression, schema::Compression::None);
        assert_eq!(c.mode, schema::Mode::Realtime);
        assert_eq!(c.source().unwrap().version, "*");
        assert!(l.diags.items.is_empty());
    }

    #[test]
    fn warnings_do_not_invalidate() {
        let text = BASE.replace(
            "target: { url: builtin }",
            "target:\n  url: https://127.0.0.1:8088/x\n  tls: { verify: false }\n  auth: { scheme: bearer, token_env: INGESTBENCH_TEST_SURELY_UNSET }",
        ) + "slo: { max_p95_ms: 500, max_p99_ms: 100 }\n";
        let l = load(&text);
        assert!(l.config.is_some(), "{:?}", messages(&l));
        let m = messages(&l);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(m.iter().any(|s| s.contains("verification is off")));
        assert!(
            m.iter()
                .any(|s| s.contains("INGESTBENCH_TEST_SURELY_UNSET is not set"))
        );
        assert!(m.iter().any(|s| s.starts_with("slo.max_p95_ms")));
    }

    #[test]
    fn all_errors_at_once_in_file_order() {
        let text = "schema_version: \"1.0\"\nworkload: { eps: -1, stop: { after: 1x } }\ntarget: { url: builtin, batch: { max_events: 0 } }\nsource: { id: AWS }\n";
        let l = load(text);
        assert!(l.config.is_none());
        let lines: Vec<usize> = l.diags.errors().map(|d| d.pos.unwrap().line).collect();
        assert_eq!(lines.len(), 4, "{:?}", messages(&l));
        assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    }

    #[test]
    fn syslog_transport_follows_url_and_builtin_takes_tcp_or_udp() {
        let ok = BASE.replace(
            "target: { url: builtin }",
            "target: { adapter: syslog, url: \"udp://127.0.0.1:514\", syslog: { transport: udp } }",
        );
        assert!(load(&ok).config.is_some());
        let tcp = BASE.replace(
            "target: { url: builtin }",
            "target: { adapter: syslog, url: builtin }",
        );
        assert!(load(&tcp).config.is_some());
        let bad = BASE.replace(
            "target: { url: builtin }",
            "target: { adapter: syslog, url: builtin, syslog: { transport: tls } }",
        );
        assert!(messages(&load(&bad))[0].starts_with("target.url"));
        let noport = BASE.replace(
            "target: { url: builtin }",
            "target: { adapter: syslog, url: \"tcp://127.0.0.1\" }",
        );
        assert!(messages(&load(&noport))[0].contains("needs a port"));
    }

    #[test]
    fn a_status_page_beyond_loopback_needs_allow_remote_and_a_token() {
        let with = |obs: &str| messages(&load(&format!("{BASE}observability: {obs}\n")));
        assert!(with("{ dashboard: true, dashboard_listen: \"127.0.0.1:8090\" }").is_empty());
        let m = with("{ dashboard: true, dashboard_listen: \"0.0.0.0:8090\" }");
        assert!(
            m[0].starts_with("observability.dashboard_listen") && m[0].contains("allow_remote"),
            "{m:?}"
        );
        let m = with("{ dashboard: true, dashboard_listen: \"0.0.0.0:8090\", allow_remote: true }");
        assert!(
            m[0].starts_with("observability.dashboard_token_env"),
            "{m:?}"
        );
        let m = with("{ dashboard_listen: \"localhost\" }");
        assert!(
            m.iter().any(|x| x.contains("not a listen address")),
            "{m:?}"
        );
        let m = with("{ dashboard_listen: \"127.0.0.1:1\" }");
        assert!(m.iter().any(|x| x.contains("dashboard is false")), "{m:?}");
        let m = with("{ linger: 2x }");
        assert!(m[0].starts_with("observability.linger"), "{m:?}");
    }

    #[test]
    fn verify_block_reads_with_defaults_and_bad_specs_name_their_line() {
        let ok = load(&format!(
            "{BASE}verify:\n  sources: [\"file:/var/log/out*.log\", \"sink:http://127.0.0.1:9800\"]\n"
        ));
        let v = ok.config.expect("valid").verify.expect("verify");
        assert_eq!(v.sources.len(), 2);
        assert_eq!(v.settle_timeout.0, schema::DEFAULT_SETTLE_TIMEOUT);
        let bad = load(&format!(
            "{BASE}verify:\n  settle_timeout: 5s\n  sources:\n    - \"sink:http://127.0.0.1:9800\"\n    - \"nfs:/x\"\n    - \"file:/var/*/out.log\"\n"
        ));
        assert!(bad.config.is_none());
        let e: Vec<(String, usize, String)> = bad
            .diags
            .errors()
            .map(|d| (d.path.clone(), d.pos.unwrap().line, d.to_string()))
            .collect();
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!((e[0].0.as_str(), e[0].1), ("verify.sources[1]", 9), "{e:?}");
        assert!(
            e[0].2.contains("unknown kind `nfs`") && !e[0].2.contains("--source"),
            "{e:?}"
        );
        assert_eq!(
            (e[1].0.as_str(), e[1].1),
            ("verify.sources[2]", 10),
            "{e:?}"
        );
        assert!(
            e[1].2.contains("wildcards go in the file name only"),
            "{e:?}"
        );
    }

    #[test]
    fn verify_needs_tags_sources_and_a_single_run() {
        let with = |text: &str| messages(&load(text));
        let untagged = BASE.replace(
            "{ id: aws.cloudtrail }",
            "{ id: aws.cloudtrail, accounting: false }",
        );
        let m = with(&format!(
            "{untagged}verify: {{ sources: [\"sink:http://127.0.0.1:1\"] }}\n"
        ));
        assert!(
            m[0].starts_with("verify") && m[0].contains("source.accounting"),
            "{m:?}"
        );
        let m = with(&format!("{BASE}verify: {{ settle_timeout: 1s }}\n"));
        assert!(
            m[0].starts_with("verify.sources") && m[0].contains("required"),
            "{m:?}"
        );
        let m = with(&format!("{BASE}verify: {{ sources: [] }}\n"));
        assert!(
            m[0].starts_with("verify.sources") && m[0].contains("at least one"),
            "{m:?}"
        );
        let m = with(&format!(
            "{BASE}verify: {{ sources: [\"file:/a\"], settle_timeout: 2h, extra: 1 }}\n"
        ));
        assert!(
            m.iter().any(|x| x.starts_with("verify.settle_timeout")),
            "{m:?}"
        );
        assert!(m.iter().any(|x| x.starts_with("verify.extra")), "{m:?}");
        let ceiling = BASE.replace("{ eps: 10, stop: { after: 5s } }", "{ find_ceiling: true }");
        let m = with(&format!("{ceiling}verify: {{ sources: [\"file:/a\"] }}\n"));
        assert!(
            m.iter()
                .any(|x| x.starts_with("verify") && x.contains("ceiling")),
            "{m:?}"
        );
    }

    #[test]
    fn config_serializes_without_token_values() {
        let text = BASE.replace("target: { url: builtin }", "target: { url: \"http://127.0.0.1:1/x\", auth: { scheme: x-api-key, token_env: MY_TOKEN } }");
        let c = load(&text).config.unwrap();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["target"]["auth"]["token_env"], "MY_TOKEN");
        assert_eq!(v["workload"]["stop"]["after"], "5s");
        assert_eq!(v["target"]["batch"]["max_bytes"], "1MB");
    }

    #[test]
    fn a_data_rate_is_a_steady_workload_of_its_own() {
        let with = |w: &str| BASE.replace("workload: { eps: 10, stop: { after: 5s } }", w);
        let ok = load(&with("workload: { rate: 500GB/day, stop: { after: 5s } }"));
        let c = ok.config.expect("valid");
        assert_eq!(c.workload.rate.unwrap().to_string(), "500GB/day");
        assert_eq!(c.workload.eps, None);
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["workload"]["rate"], "500GB/day");
        for (w, want) in [
            (
                "workload: { rate: 20MB, stop: { after: 5s } }",
                "is not a data rate",
            ),
            (
                "workload: { rate: 0MB/s, stop: { after: 5s } }",
                "must be greater than 0",
            ),
            (
                "workload: { eps: 5, rate: 1MB/s, stop: { after: 5s } }",
                "not both",
            ),
            (
                "workload: { profile: ramp, rate: 1MB/s, ramp: { from_eps: 1, to_eps: 2, over: 1s }, stop: { after: 5s } }",
                "rate applies to profile steady",
            ),
            ("workload: { rate: 1MB/s, find_ceiling: true }", "ceiling"),
            (
                "workload: { stop: { after: 5s } }",
                "needs eps (events per second) or rate",
            ),
        ] {
            let m = messages(&load(&with(w)));
            assert!(
                m.iter()
                    .any(|s| s.contains(want) && s.starts_with("workload.")),
                "{w}: {m:?}"
            );
        }
        let http = "schema_version: \"1.0\"\ntarget: { adapter: http, url: \"http://127.0.0.1:1/\" }\nworkload: { rate: 1MB/s, stop: { after: 5s } }\n";
        let m = messages(&load(http));
        assert!(
            m.iter()
                .any(|s| s.starts_with("workload.rate") && s.contains("give source")),
            "{m:?}"
        );
    }
}
