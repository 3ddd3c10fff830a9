//! What a config that arrives over the panel may do (docs/panel.md, "What a config sent to the
//! panel may do"). A config given to `ingestbench run` is its user's own; one sent to the
//! panel comes from whoever holds the panel's token, so by default it:
//! - starts no program and signals no process: `observability.target`, a fault that stalls,
//!   kills or restarts a process, or runs a `command`, needs `serve --allow-launch`;
//! - reads no file: `target.http.body_file`, `target.http.unix_socket`, `target.auth.token_file`,
//!   `target.tls.*` files, a replayed recording (`source: {file: …}`), `file:` stores and the
//!   files of `verify.auth` and `verify.tls`, and a cgroup outside the cgroup2 mount, need
//!   `--allow-launch`;
//! - writes only inside `--reports-dir`: `observability.report`, `.csv`, `.hdr_log` and
//!   `.sizing_csv` are taken relative to it (rewritten to the full path in the config the run
//!   keeps), with no `..`, no absolute path elsewhere and no symlink on the way; without
//!   `--reports-dir` it writes none (with `--allow-launch`, anywhere);
//! - reads only the environment variables named by `serve --allow-env NAME`
//!   (`target.auth.token_env`, `verify.auth.token_env`, `observability.dashboard_token_env`);
//!   a `token_secret` from `--secrets-dir` is always allowed.
//!
//! Each refusal names the field and the flag that would allow it. `check` is the one place
//! these rules are applied: before a run is planned (`runner`), and for validation and saving
//! (`texts`), so the panel does not call valid what it will not run.

use std::path::{Component, Path, PathBuf};

use crate::config::schema::{Config, FaultAction};
use crate::yaml::Reader;
use crate::yaml::diag::{Diagnostic, Severity};

/// What the panel was started with that bears on configs.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// `serve --allow-launch`: configs may start programs, signal processes, read and write
    /// files as a config given to `run` may.
    pub allow_launch: bool,
    /// `serve --allow-env NAME`: the environment variables configs may read.
    pub allow_env: Vec<String>,
    /// `--reports-dir`, as a canonical path: where configs may write.
    pub reports: Option<PathBuf>,
}

/// A field the rules refuse, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

const LAUNCH: &str =
    "configs sent to the panel start no program unless `serve --allow-launch` was given";
const SIGNAL: &str =
    "configs sent to the panel signal no process unless `serve --allow-launch` was given";
const READ: &str = "configs sent to the panel read no file unless `serve --allow-launch` was given (a token can come from the secret store: token_secret)";

/// Applies the rules to `c`: output paths are rewritten under `--reports-dir`; everything the
/// rules refuse is returned (empty: the config may run).
pub fn check(c: &mut Config, rules: &Rules) -> Vec<Refused> {
    let mut out = Vec::new();
    let mut refuse = |path: &str, message: String| {
        out.push(Refused {
            path: path.to_string(),
            message,
        })
    };
    if !rules.allow_launch {
        programs(c, &mut refuse);
        reads(c, &mut refuse);
    }
    environment(c, rules, &mut refuse);
    outputs(c, rules, &mut refuse);
    if c.workload.find_ceiling {
        refuse(
            "workload.find_ceiling",
            "a ceiling search is a series of runs; start it with `ingestbench run --config \
             FILE` (the panel runs one schedule)"
                .into(),
        );
    }
    out
}

/// The refusals as errors placed at their fields' lines in `text` (the config they came
/// from), as validation places its own.
pub fn diagnostics(text: &str, refused: &[Refused]) -> Vec<Diagnostic> {
    let mut r = Reader::default();
    if let Some(root) = crate::yaml::parse(text, &mut r.diags) {
        let _ = crate::config::schema::read_config(&mut r, &root);
    }
    refused
        .iter()
        .map(|x| Diagnostic {
            severity: Severity::Error,
            path: x.path.clone(),
            pos: r.pos(&x.path),
            message: x.message.clone(),
        })
        .collect()
}

fn programs(c: &Config, refuse: &mut impl FnMut(&str, String)) {
    if c.observability.target.is_some() {
        refuse("observability.target", LAUNCH.into());
    }
    for (i, f) in c.faults.iter().enumerate() {
        if f.command.is_some() {
            refuse(&format!("faults[{i}].command"), LAUNCH.into());
        }
        if matches!(
            f.action,
            FaultAction::Stall | FaultAction::Kill | FaultAction::Restart
        ) {
            refuse(&format!("faults[{i}].action"), SIGNAL.into());
        }
    }
}

fn reads(c: &Config, refuse: &mut impl FnMut(&str, String)) {
    let t = &c.target;
    let mut file = |path: &str, v: Option<&String>| {
        if let Some(v) = v {
            refuse(path, format!("{v}: {READ}"));
        }
    };
    if let Some(h) = &t.http {
        file("target.http.body_file", h.body_file.as_ref());
        file("target.http.unix_socket", h.unix_socket.as_ref());
    }
    if let Some(a) = &t.auth {
        file("target.auth.token_file", a.token_file.as_ref());
    }
    if let Some(tls) = &t.tls {
        file("target.tls.ca_file", tls.ca_file.as_ref());
        file("target.tls.client_cert", tls.client_cert.as_ref());
        file("target.tls.client_key", tls.client_key.as_ref());
    }
    if let Some(r) = &c.replay {
        file("source.file", Some(&r.file));
    }
    if let Some(v) = &c.verify {
        for (i, s) in v.sources.iter().enumerate() {
            if s.trim_start().starts_with("file:") {
                file(&format!("verify.sources[{i}]"), Some(s));
            }
        }
        if let Some(a) = &v.auth {
            file("verify.auth.token_file", a.token_file.as_ref());
        }
        if let Some(tls) = &v.tls {
            file("verify.tls.ca_file", tls.ca_file.as_ref());
        }
    }
    for (i, g) in c.observability.watch.cgroups.iter().enumerate() {
        if !cgroup_inside_mount(g) {
            refuse(
                &format!("observability.watch.cgroups[{i}]"),
                format!(
                    "{g}: a cgroup is named relative to the cgroup2 mount or under /sys/fs/cgroup, with no `..`; {READ}"
                ),
            );
        }
    }
}

/// Relative to the cgroup2 mount, or under `/sys/fs/cgroup`, and no `..` anywhere.
fn cgroup_inside_mount(g: &str) -> bool {
    let p = Path::new(g);
    let plain = p.components().all(|c| {
        matches!(
            c,
            Component::Normal(_) | Component::CurDir | Component::RootDir
        )
    });
    plain && (p.is_relative() || p.starts_with("/sys/fs/cgroup"))
}

fn environment(c: &Config, rules: &Rules, refuse: &mut impl FnMut(&str, String)) {
    let mut var = |path: &str, v: Option<&String>| {
        if let Some(v) = v
            && !rules.allow_env.iter().any(|a| a == v)
        {
            refuse(
                path,
                format!(
                    "configs sent to the panel read only the environment variables named by \
                     `serve --allow-env NAME`, and {v} is not one (a token can come from the \
                     secret store: token_secret)"
                ),
            );
        }
    };
    var(
        "target.auth.token_env",
        c.target.auth.as_ref().and_then(|a| a.token_env.as_ref()),
    );
    var(
        "verify.auth.token_env",
        c.verify
            .as_ref()
            .and_then(|v| v.auth.as_ref())
            .and_then(|a| a.token_env.as_ref()),
    );
    var(
        "observability.dashboard_token_env",
        c.observability.dashboard_token_env.as_ref(),
    );
}

fn outputs(c: &mut Config, rules: &Rules, refuse: &mut impl FnMut(&str, String)) {
    if rules.allow_launch {
        return;
    }
    let o = &mut c.observability;
    for (key, value) in [
        ("report", &mut o.report),
        ("csv", &mut o.csv),
        ("hdr_log", &mut o.hdr_log),
        ("sizing_csv", &mut o.sizing_csv),
    ] {
        let Some(v) = value.as_mut() else { continue };
        let path = format!("observability.{key}");
        let Some(root) = &rules.reports else {
            refuse(
                &path,
                format!(
                    "{v}: configs sent to the panel write files only in --reports-dir, and the \
                     panel was started without one"
                ),
            );
            continue;
        };
        match inside(root, Path::new(v.as_str())) {
            Ok(full) => *v = full.display().to_string(),
            Err(why) => refuse(
                &path,
                format!(
                    "{v}: {why}; configs sent to the panel write files only in --reports-dir \
                     ({}) unless `serve --allow-launch` was given",
                    root.display()
                ),
            ),
        }
    }
}

/// `p` under `root` (a relative `p` is taken from `root`): plain names only, and no part of it
/// that exists is a symlink, so what is written stays in `root`.
fn inside(root: &Path, p: &Path) -> Result<PathBuf, &'static str> {
    let rel = if p.is_absolute() {
        p.strip_prefix(root).map_err(|_| "outside --reports-dir")?
    } else {
        p
    };
    let plain = rel
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return Err("a path with `..` may leave --reports-dir");
    }
    if rel.file_name().is_none() {
        return Err("not a file name");
    }
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Err("a symlink on the way"),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(root.join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::secrets::Store;

    const BASE: &str = "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: builtin\nsource:\n  id: aws.cloudtrail\nworkload:\n  profile: steady\n  eps: 10\n  stop: { after: 5s }\n";

    fn config(extra: &str) -> Config {
        let store = Store::new("/nonexistent/store".into());
        let l = crate::config::load_str(&format!("{BASE}{extra}"), &store, None);
        l.config
            .unwrap_or_else(|| panic!("{extra}: {:?}", l.diags.items))
    }

    fn refused(extra: &str, rules: &Rules) -> Vec<String> {
        check(&mut config(extra), rules)
            .into_iter()
            .map(|r| r.path)
            .collect()
    }

    #[test]
    fn programs_signals_and_files_need_allow_launch() {
        let strict = Rules::default();
        let launch = Rules {
            allow_launch: true,
            ..Rules::default()
        };
        let cases: &[(&str, &[&str])] = &[
            (
                "observability:\n  target:\n    command: /bin/sh\n    args: [\"-c\", \"id\"]\n",
                &["observability.target"],
            ),
            (
                "faults:\n  - { at: 1s, action: restart, target: \"name:x\", command: /bin/sh }\n",
                &["faults[0].command", "faults[0].action"],
            ),
            (
                "faults:\n  - { at: 1s, action: kill, target: \"pid:4242\" }\n",
                &["faults[0].action"],
            ),
            ("faults:\n  - { at: 1s, action: pause, for: 1s }\n", &[]),
            (
                "verify:\n  sources: [\"file:/etc/*\", \"sink:http://127.0.0.1:9\"]\n",
                &["verify.sources[0]"],
            ),
            (
                "observability:\n  watch:\n    cgroups: [\"/tmp/x\", \"system.slice\", \"/sys/fs/cgroup/a\"]\n",
                &["observability.watch.cgroups[0]"],
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(refused(extra, &strict), *want, "{extra}");
            assert_eq!(refused(extra, &launch), Vec::<String>::new(), "{extra}");
        }
    }

    #[test]
    fn every_file_a_config_reads_needs_allow_launch() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let f = f.display();
        let http = format!(
            "target:\n  adapter: http\n  url: http://127.0.0.1:9/\n  http:\n    body_file: {f}\n    unix_socket: {f}\n"
        );
        let c = format!(
            "{}{http}workload:\n  profile: steady\n  eps: 10\n  stop: {{ after: 5s }}\n",
            "schema_version: \"1.0\"\n"
        );
        let store = Store::new("/nonexistent/store".into());
        let l = crate::config::load_str(&c, &store, None);
        let mut cfg = l.config.unwrap_or_else(|| panic!("{:?}", l.diags.items));
        let paths: Vec<String> = check(&mut cfg, &Rules::default())
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(paths, ["target.http.body_file", "target.http.unix_socket"]);
        let mut cfg = config("");
        cfg.target.auth = Some(crate::config::schema::Auth {
            scheme: None,
            token_env: None,
            token_file: Some(f.to_string()),
            token_secret: None,
            username: None,
            header: None,
        });
        cfg.target.tls = Some(crate::config::schema::Tls {
            verify: true,
            ca_file: Some(f.to_string()),
            client_cert: Some(f.to_string()),
            client_key: Some(f.to_string()),
            server_name: None,
        });
        let paths: Vec<String> = check(&mut cfg, &Rules::default())
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(
            paths,
            [
                "target.auth.token_file",
                "target.tls.ca_file",
                "target.tls.client_cert",
                "target.tls.client_key"
            ]
        );
        let launch = Rules {
            allow_launch: true,
            ..Rules::default()
        };
        assert!(check(&mut cfg, &launch).is_empty());
    }

    /// The panel runs one schedule: a ceiling search is refused by the panel's validate as by
    /// its run, whatever flags the panel was given.
    #[test]
    fn a_ceiling_search_is_refused_by_the_panel() {
        let text = "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: builtin\nsource:\n  id: aws.cloudtrail\nworkload:\n  find_ceiling: true\n  ceiling:\n    start_eps: 100\n    max_steps: 2\n";
        let store = Store::new("/nonexistent/store".into());
        let l = crate::config::load_str(text, &store, None);
        let c = l.config.unwrap_or_else(|| panic!("{:?}", l.diags.items));
        let launch = Rules {
            allow_launch: true,
            ..Rules::default()
        };
        for rules in [&Rules::default(), &launch] {
            let paths: Vec<String> = check(&mut c.clone(), rules)
                .into_iter()
                .map(|r| r.path)
                .collect();
            assert_eq!(paths, ["workload.find_ceiling"]);
        }
    }

    #[test]
    fn environment_variables_need_allow_env() {
        let extra = "observability:\n  dashboard: true\n  dashboard_token_env: PANEL_X\n";
        assert_eq!(
            refused(extra, &Rules::default()),
            ["observability.dashboard_token_env"]
        );
        let allowed = Rules {
            allow_env: vec!["PANEL_X".into()],
            ..Rules::default()
        };
        assert!(refused(extra, &allowed).is_empty());
        // --allow-launch does not open the environment.
        let launch = Rules {
            allow_launch: true,
            ..Rules::default()
        };
        assert_eq!(refused(extra, &launch).len(), 1);
    }

    #[test]
    fn outputs_stay_in_the_reports_dir() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("/tmp", root.join("out")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("r.json")).unwrap();
        let rules = Rules {
            reports: Some(root.clone()),
            ..Rules::default()
        };
        let mut c =
            config("observability:\n  report: a.json\n  csv: sub/t.csv\n  hdr_log: new/h.hlog\n");
        assert!(check(&mut c, &rules).is_empty());
        let o = &c.observability;
        assert_eq!(
            o.report.as_deref(),
            Some(&*root.join("a.json").display().to_string())
        );
        assert_eq!(
            o.csv.as_deref(),
            Some(&*root.join("sub/t.csv").display().to_string())
        );
        assert_eq!(
            o.hdr_log.as_deref(),
            Some(&*root.join("new/h.hlog").display().to_string())
        );
        let inside_abs = format!(
            "observability:\n  report: {}\n",
            root.join("b.json").display()
        );
        assert!(refused(&inside_abs, &rules).is_empty());
        for bad in [
            "/tmp/x.json",
            "../x.json",
            "sub/../../x.json",
            "out/x.json",
            "r.json",
            "/etc/cron.d/x",
        ] {
            let extra = format!("observability:\n  report: \"{bad}\"\n");
            assert_eq!(refused(&extra, &rules), ["observability.report"], "{bad}");
        }
        // Without --reports-dir nothing is written; with --allow-launch, anything is.
        let extra = "observability:\n  sizing_csv: s.csv\n";
        assert_eq!(
            refused(extra, &Rules::default()),
            ["observability.sizing_csv"]
        );
        let launch = Rules {
            allow_launch: true,
            ..Rules::default()
        };
        let mut c = config("observability:\n  report: /tmp/x.json\n");
        assert!(check(&mut c, &launch).is_empty());
        assert_eq!(c.observability.report.as_deref(), Some("/tmp/x.json"));
    }
}
