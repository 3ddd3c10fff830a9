//! The fault timeline (`faults:` in the config): what each action does and to what, resolved
//! from the config once (`plan`), then carried out on its own thread while the run goes on
//! (`runner`). Actions: `stall` (SIGSTOP … SIGCONT after `for`), `kill` (SIGKILL; with `for`,
//! a restart after it), `restart` (stop, then start again: the launched target's command or
//! one given), `storm` (a sink's fault knobs for a while: the built-in sink's directly, a
//! standalone sink's through `POST /_faults`, then what it had before), `cut` (every client
//! connection closed at once) and `pause` (no events due for a while). Every begin and end is
//! a mark on the run's timeline (`Control::note`, or the pause's own marks); what each did and
//! when comes back as `FaultRecord`s, which `report::faults` judges (effects, recovery).

pub mod runner;

use std::time::Duration;

use serde::Serialize;

use crate::config::schema::{Config, Fault, FaultAction};
use crate::observe::LaunchSpec;
use crate::run::error::SetupError;
use crate::sink::Faults;

/// A process a fault acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The run's own target (`observability.target`).
    Launched,
    Pid(u32),
    /// Every process of this name when the action is taken.
    Name(String),
}

/// A sink a storm acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SinkAt {
    Builtin,
    /// A standalone `ingestbench sink`'s base URL.
    Url(String),
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq)]
pub enum Act {
    Stall {
        who: Subject,
        lasts: Duration,
    },
    Kill {
        who: Subject,
        restart_after: Option<Duration>,
        restart: Option<LaunchSpec>,
    },
    Restart {
        who: Subject,
        command: Option<LaunchSpec>,
    },
    Storm {
        sink: SinkAt,
        faults: Faults,
        lasts: Duration,
    },
    Cut,
    Pause {
        lasts: Duration,
    },
}

impl Act {
    /// How long after its begin the fault is lifted (`None`: it is over once taken).
    pub fn lasts(&self) -> Option<Duration> {
        match self {
            Act::Stall { lasts, .. } | Act::Storm { lasts, .. } | Act::Pause { lasts } => {
                Some(*lasts)
            }
            Act::Kill { restart_after, .. } => *restart_after,
            Act::Restart { .. } | Act::Cut => None,
        }
    }
}

/// One fault of the timeline, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// Its place in `faults:`.
    pub index: usize,
    pub at: Duration,
    pub action: FaultAction,
    /// What it acts on, as the report shows it.
    pub target: String,
    pub act: Act,
}

/// What one fault did, as the runner saw it (seconds after the start of the run).
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct FaultRecord {
    pub index: usize,
    pub action: String,
    pub target: String,
    pub at_s: f64,
    pub for_s: Option<f64>,
    /// When it was taken, and when it was lifted (a restart: once the new process was
    /// ready); a fault taken at once ends when it begins.
    pub began_s: Option<f64>,
    pub ended_s: Option<f64>,
    /// The processes it acted on, and the one a restart started.
    pub pids: Vec<u32>,
    pub new_pid: Option<u32>,
    /// Why it could not be carried out (the run then fails: it did not do what was asked).
    pub error: Option<String>,
    pub notes: Vec<String>,
}

/// The fault timeline of `cfg`, resolved (validation has checked it; what it could not
/// check, such as a launch command, is a `SetupError` here).
pub fn plan(cfg: &Config) -> Result<Vec<Planned>, SetupError> {
    let mut out = Vec::with_capacity(cfg.faults.len());
    for (index, f) in cfg.faults.iter().enumerate() {
        let path = format!("faults[{index}]");
        let (target, act) = resolve(cfg, f)
            .map_err(|(field, m)| SetupError::invalid(format!("{path}.{field}: {m}")))?;
        out.push(Planned {
            index,
            at: f.at.0,
            action: f.action,
            target,
            act,
        });
    }
    Ok(out)
}

/// The default target of an action, or the one written.
pub fn target_of(cfg: &Config, f: &Fault) -> Option<String> {
    if let Some(t) = &f.target {
        return Some(t.clone());
    }
    match f.action {
        FaultAction::Stall | FaultAction::Kill | FaultAction::Restart => {
            cfg.observability.target.as_ref().map(|_| "launched".into())
        }
        FaultAction::Storm => (cfg.target.url == "builtin").then(|| "builtin".into()),
        FaultAction::Cut | FaultAction::Pause => None,
    }
}

/// A process target: `launched`, `pid:N`, `name:NAME`.
pub fn parse_subject(s: &str) -> Result<Subject, String> {
    if s == "launched" {
        return Ok(Subject::Launched);
    }
    if let Some(n) = s.strip_prefix("pid:") {
        return match n.parse::<u32>() {
            Ok(p) if p > 1 => Ok(Subject::Pid(p)),
            _ => Err(format!("target {s:?}: pid:N takes a process id above 1")),
        };
    }
    if let Some(n) = s.strip_prefix("name:") {
        if n.is_empty() || n.contains('/') {
            return Err(format!(
                "target {s:?}: name:NAME takes a process name (its comm or argv[0]'s basename)"
            ));
        }
        return Ok(Subject::Name(n.to_string()));
    }
    Err(format!(
        "target {s:?}: a process is launched (observability.target), pid:N or name:NAME"
    ))
}

/// A sink target: `builtin` or `sink:http://HOST:PORT`.
pub fn parse_sink(s: &str) -> Result<SinkAt, String> {
    if s == "builtin" {
        return Ok(SinkAt::Builtin);
    }
    let Some(u) = s.strip_prefix("sink:") else {
        return Err(format!(
            "target {s:?}: a storm acts on builtin (the built-in sink) or sink:http://HOST:PORT (a standalone ingestbench sink)"
        ));
    };
    match url::Url::parse(u) {
        Ok(p) if matches!(p.scheme(), "http" | "https") && p.host().is_some() => {
            Ok(SinkAt::Url(u.trim_end_matches('/').to_string()))
        }
        _ => Err(format!(
            "target {s:?}: sink:URL takes the sink's http:// or https:// base url"
        )),
    }
}

/// A fault's problem: the field it is about and what is wrong.
pub type Problem = (&'static str, String);

/// Checks one fault of `cfg` as validation does (the field at fault and why).
pub fn check(cfg: &Config, f: &Fault) -> Result<(), Problem> {
    resolve(cfg, f).map(|_| ())
}

fn resolve(cfg: &Config, f: &Fault) -> Result<(String, Act), Problem> {
    let target = target_of(cfg, f);
    let lasts = || match f.for_ {
        Some(d) if !d.0.is_zero() => Ok(d.0),
        Some(_) => Err(("for", "must be longer than 0s".to_string())),
        None => Err((
            "for",
            format!("{} needs `for` (how long it lasts)", f.action),
        )),
    };
    let subject = || -> Result<Subject, Problem> {
        let t = target.as_deref().ok_or((
            "target",
            "needs a target (launched, pid:N or name:NAME); launched, the default, needs observability.target".to_string(),
        ))?;
        let s = parse_subject(t).map_err(|m| ("target", m))?;
        if s == Subject::Launched && cfg.observability.target.is_none() {
            return Err((
                "target",
                "launched needs observability.target (the command the run starts)".into(),
            ));
        }
        Ok(s)
    };
    let command = || -> Option<LaunchSpec> {
        f.command.as_ref().map(|c| {
            let mut spec = LaunchSpec::new(c.clone());
            spec.args = f.args.clone();
            spec
        })
    };
    let no = |field: &'static str, present: bool| -> Result<(), Problem> {
        if present {
            Err((field, format!("does not apply to {}", f.action)))
        } else {
            Ok(())
        }
    };
    let takes_command = matches!(f.action, FaultAction::Kill | FaultAction::Restart);
    no("command", f.command.is_some() && !takes_command)?;
    no("args", !f.args.is_empty() && f.command.is_none())?;
    no("storm", f.storm.is_some() && f.action != FaultAction::Storm)?;
    let act = match f.action {
        FaultAction::Stall => Act::Stall {
            who: subject()?,
            lasts: lasts()?,
        },
        FaultAction::Kill => {
            let who = subject()?;
            let restart = command();
            if who == Subject::Launched && restart.is_some() {
                return Err((
                    "command",
                    "the launched target restarts with its own command (observability.target): leave command out".into(),
                ));
            }
            if f.for_.is_some() && who != Subject::Launched && restart.is_none() {
                return Err(("command", "a kill with `for` restarts after it: give command (and args) to start, or act on the launched target".into()));
            }
            Act::Kill {
                who,
                restart_after: f.for_.is_some().then(lasts).transpose()?,
                restart,
            }
        }
        FaultAction::Restart => {
            no("for", f.for_.is_some())?;
            let who = subject()?;
            let command = command();
            if who == Subject::Launched && command.is_some() {
                return Err((
                    "command",
                    "the launched target restarts with its own command (observability.target): leave command out".into(),
                ));
            }
            if who != Subject::Launched && command.is_none() {
                return Err((
                    "command",
                    "restarting a process the run did not launch needs command (and args)".into(),
                ));
            }
            Act::Restart { who, command }
        }
        FaultAction::Storm => {
            let t = target.as_deref().ok_or((
                "target",
                "needs a target: builtin (with target.url: builtin) or sink:http://HOST:PORT"
                    .to_string(),
            ))?;
            let sink = parse_sink(t).map_err(|m| ("target", m))?;
            if sink == SinkAt::Builtin && cfg.target.url != "builtin" {
                return Err(("target", "builtin needs target.url: builtin".into()));
            }
            let faults = f.storm.ok_or((
                "storm",
                "needs storm: {share_429, share_503, retry_after_s, latency_ms, reset_share, stall_share, stall_ms}".to_string(),
            ))?;
            faults.validate().map_err(|e| ("storm", e))?;
            Act::Storm {
                sink,
                faults,
                lasts: lasts()?,
            }
        }
        FaultAction::Cut => {
            no("target", f.target.is_some())?;
            no("for", f.for_.is_some())?;
            Act::Cut
        }
        FaultAction::Pause => {
            no("target", f.target.is_some())?;
            Act::Pause { lasts: lasts()? }
        }
    };
    Ok((target.unwrap_or_else(|| "client".into()), act))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_and_sinks() {
        assert_eq!(parse_subject("launched").unwrap(), Subject::Launched);
        assert_eq!(parse_subject("pid:4242").unwrap(), Subject::Pid(4242));
        assert_eq!(
            parse_subject("name:syslog-ng").unwrap(),
            Subject::Name("syslog-ng".into())
        );
        for bad in ["pid:1", "pid:x", "name:", "name:/usr/bin/x", "syslog-ng"] {
            assert!(parse_subject(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_sink("builtin").unwrap(), SinkAt::Builtin);
        assert_eq!(
            parse_sink("sink:http://127.0.0.1:9800/").unwrap(),
            SinkAt::Url("http://127.0.0.1:9800".into())
        );
        for bad in ["sink:", "sink:ftp://h", "http://127.0.0.1:1", "launched"] {
            assert!(parse_sink(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn how_long_each_act_lasts() {
        let s = Duration::from_secs(3);
        assert_eq!(Act::Cut.lasts(), None);
        assert_eq!(Act::Pause { lasts: s }.lasts(), Some(s));
        let kill = Act::Kill {
            who: Subject::Launched,
            restart_after: Some(s),
            restart: None,
        };
        assert_eq!(kill.lasts(), Some(s));
    }
}
