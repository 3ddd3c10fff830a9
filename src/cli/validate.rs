//! `ingestbench validate --config FILE`: reads and checks a config, printing every problem with
//! its field path and line:column (text, or `--output json` as data). Exit 0 when valid, 2 when
//! not. Warnings (a token variable unset now, say) do not fail validation.

use argh::FromArgs;
use serde::Serialize;
use std::path::PathBuf;

use crate::config::{self, secrets};
use crate::exit::Exit;
use crate::yaml::diag::Diagnostic;

#[derive(FromArgs)]
/// Check a config file and report every problem with its field path and line:column.
#[argh(
    subcommand,
    name = "validate",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench validate --config examples/steady-smoke.yaml",
    example = "ingestbench validate --config my.yaml --output json",
    note = "Exits 0 when the config is valid and 2 when it is not."
)]
pub struct Args {
    /// the config file (YAML, schema_version "1.0")
    #[argh(option, short = 'c')]
    config: PathBuf,
    /// output format: text (default) or json
    #[argh(option, default = "Output::Text")]
    output: Output,
    /// secret store directory, for checking token_secret names (default: the per-user store)
    #[argh(option)]
    secrets_dir: Option<PathBuf>,
    /// directory searched for packs before ./packs and the built-in ones
    #[argh(option)]
    packs: Option<PathBuf>,
}

crate::yaml_enum!(
    pub enum Output {
        Text = "text",
        Json = "json",
    }
);

impl argh::FromArgValue for Output {
    fn from_arg_value(value: &str) -> Result<Self, String> {
        Output::parse(value)
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    file: String,
    valid: bool,
    errors: Vec<&'a Diagnostic>,
    warnings: Vec<&'a Diagnostic>,
}

pub fn run(a: Args) -> Exit {
    let dir = match a.secrets_dir.map(Ok).unwrap_or_else(secrets::default_dir) {
        Ok(d) => d,
        Err(e) => {
            super::err(&format!("error: {e}"));
            return Exit::Invalid;
        }
    };
    let catalog = match crate::pack::Catalog::discover(a.packs.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            super::err(&format!("error: {e}"));
            return Exit::Invalid;
        }
    };
    if a.output == Output::Text
        && std::fs::metadata(&a.config).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        super::err(&format!("error: {}: not found", a.config.display()));
        return Exit::Invalid;
    }
    let loaded = config::load(&a.config, &secrets::Store::new(dir), Some(&catalog));
    let file = a.config.display().to_string();
    let valid = loaded.config.is_some();
    match a.output {
        Output::Json => {
            let rep = JsonReport {
                file,
                valid,
                errors: loaded.diags.errors().collect(),
                warnings: loaded.diags.warnings().collect(),
            };
            super::out(&serde_json::to_string_pretty(&rep).unwrap_or_default());
        }
        Output::Text => {
            for d in loaded.diags.errors() {
                super::err(&format!("error: {d}"));
            }
            for d in loaded.diags.warnings() {
                super::err(&format!("warning: {d}"));
            }
            let n_err = loaded.diags.errors().count();
            let n_warn = loaded.diags.warnings().count();
            match &loaded.config {
                Some(c) => super::out(&format!("{file}: valid ({})", summary(c))),
                None => super::err(&format!("{file}: invalid: {}", counts(n_err, n_warn))),
            }
        }
    }
    if valid { Exit::Ok } else { Exit::Invalid }
}

fn counts(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if warnings == 0 {
        plural(errors, "error")
    } else {
        format!(
            "{}, {}",
            plural(errors, "error"),
            plural(warnings, "warning")
        )
    }
}

/// One line saying what the config would do.
fn summary(c: &config::Config) -> String {
    use config::schema::Profile;
    let w = &c.workload;
    if w.find_ceiling {
        let p = crate::run::ceiling::Params::of(w);
        return format!(
            "source {}, adapter {} -> {}, ceiling search from {} eps (x{} up, {} % precision, at most {} steps of {} + {})",
            c.source_label(),
            c.target.adapter,
            c.target.url,
            p.start_eps,
            p.growth,
            p.precision * 100.0,
            p.max_steps,
            config::units::Dur(p.warmup),
            config::units::Dur(p.hold)
        );
    }
    let rate = match w.profile {
        Profile::Closed => "closed loop (as fast as answered)".into(),
        Profile::Steady => match w.eps {
            Some(e) => format!("steady {e} eps"),
            None => "steady".into(),
        },
        Profile::Burst => w
            .burst
            .as_ref()
            .map(|b| format!("burst {}/{} eps every {}", b.high_eps, b.low_eps, b.period))
            .unwrap_or_default(),
        Profile::Ramp => w
            .ramp
            .as_ref()
            .map(|r| format!("ramp {} -> {} eps over {}", r.from_eps, r.to_eps, r.over))
            .unwrap_or_default(),
        Profile::Steps => format!("{} steps", w.steps.as_ref().map_or(0, Vec::len)),
    };
    let stop = match (w.stop.after, w.stop.total_events) {
        (Some(d), _) => format!("stop after {d}"),
        (_, Some(n)) => format!("stop after {n} events"),
        _ => String::new(),
    };
    format!(
        "source {}, adapter {} -> {}, {rate}, {stop}",
        c.source_label(),
        c.target.adapter,
        c.target.url
    )
}
