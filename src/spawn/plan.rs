//! From the command's values to a checked `Plan`, and every refusal (each exits 2 with its
//! reason). edr-loadgen's rules first — a zero delay, and a delay over a tenth of the duration
//! ("delay must be much smaller than duration") — then ours: a rate above `MAX_RATE` unless
//! forced (a spawn storm can make a machine unusable), durations within a day, a command that
//! exists and is executable.

use std::path::PathBuf;
use std::time::Duration;

use super::launch::{self, Payload};
use super::schedule::Schedule;
use crate::observe::WatchSpec;

/// The highest rate taken without `--force`: about what one core spawns `/bin/true` at, and
/// well under what a kernel's PID space and process table take.
pub const MAX_RATE: f64 = 2_000.0;
/// The highest rate taken at all, even with `--force`.
pub const MAX_FORCED_RATE: f64 = 100_000.0;
/// Children started and not yet exited, at most; past it the spawner waits (and is late).
pub const MAX_IN_FLIGHT: u64 = 1_024;
/// The longest load or baseline phase.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);
/// A schedule is kept when no more than this share of spawns was a period or more late.
pub const MAX_LATE_SHARE: f64 = 0.01;

/// The pace, as given: a rate (`200/s`) or a delay between spawns (`5ms`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    Rate(f64),
    Delay(Duration),
}

/// What the command line asked for, parsed but not yet checked.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// `None`: ingestbench itself, with the marker.
    pub command: Option<String>,
    pub args: Vec<String>,
    pub pace: Option<Pace>,
    pub duration: Option<Duration>,
    /// `None`: as long as the load. `Some(ZERO)` or `no_baseline`: none.
    pub baseline: Option<Duration>,
    pub no_baseline: bool,
    pub pids: Vec<u32>,
    pub names: Vec<String>,
    pub force: bool,
}

/// A run that can start.
#[derive(Clone, Debug)]
pub struct Plan {
    pub payload: Payload,
    pub schedule: Schedule,
    pub duration: Duration,
    pub baseline: Option<Duration>,
    pub watch: WatchSpec,
    pub max_in_flight: u64,
    pub forced: bool,
}

impl Plan {
    /// The time between spawns.
    pub fn delay(&self) -> Duration {
        self.schedule.period()
    }

    /// No spawn starts later than this after the load's start: the duration plus a tenth
    /// of it plus a second.
    pub fn deadline(&self) -> Duration {
        self.duration + self.duration / 10 + Duration::from_secs(1)
    }
}

/// `200/s`, `200`, `12.5/s`: spawns per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let num = t.strip_suffix("/s").unwrap_or(t);
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!(
            "--rate {text:?} is not a rate (spawns per second: 200/s or 200)"
        )),
    }
}

/// Checks `r` and builds the plan, or says what is refused.
pub fn plan(r: &Request) -> Result<Plan, String> {
    let duration = r
        .duration
        .ok_or("--duration is required (e.g. --duration 30s)")?;
    if duration.is_zero() {
        return Err("--duration must be above 0".into());
    }
    if duration > MAX_DURATION {
        return Err("--duration is at most 24h".into());
    }
    let rate = rate_of(r.pace, duration, r.force)?;
    let baseline = baseline_of(r, duration)?;
    Ok(Plan {
        payload: payload_of(r)?,
        schedule: Schedule::new(rate, duration),
        duration,
        baseline,
        watch: WatchSpec {
            pids: r.pids.clone(),
            names: r.names.clone(),
            cgroups: Vec::new(),
            children: false,
            include_self: true,
        },
        max_in_flight: MAX_IN_FLIGHT,
        forced: r.force,
    })
}

/// The rate, with edr-loadgen's refusals and the ceiling.
fn rate_of(pace: Option<Pace>, duration: Duration, force: bool) -> Result<f64, String> {
    let delay_s = match pace {
        None => return Err("give one of --rate (e.g. 200/s) or --delay (e.g. 5ms)".into()),
        Some(Pace::Delay(d)) if d.is_zero() => return Err("--delay cannot be 0".into()),
        Some(Pace::Delay(d)) => d.as_secs_f64(),
        Some(Pace::Rate(r)) if r <= 0.0 => return Err("--rate must be above 0".into()),
        Some(Pace::Rate(r)) => 1.0 / r,
    };
    if delay_s > duration.as_secs_f64() / 10.0 + 1e-12 {
        return Err(format!(
            "the delay between spawns ({}) must be much smaller than --duration ({}): at most a tenth of it",
            secs(delay_s),
            secs(duration.as_secs_f64())
        ));
    }
    let rate = 1.0 / delay_s;
    if rate > MAX_FORCED_RATE + 1e-9 {
        return Err(format!(
            "{rate:.0} spawns/s is above the hard limit of {MAX_FORCED_RATE:.0}/s"
        ));
    }
    if rate > MAX_RATE + 1e-9 && !force {
        return Err(format!(
            "{rate:.0} spawns/s is above the ceiling of {MAX_RATE:.0}/s, which keeps a spawn storm from taking the machine down; add --force if this machine can take it"
        ));
    }
    Ok(rate)
}

fn baseline_of(r: &Request, duration: Duration) -> Result<Option<Duration>, String> {
    if r.no_baseline {
        if r.baseline.is_some() {
            return Err("give --baseline or --no-baseline, not both".into());
        }
        return Ok(None);
    }
    match r.baseline {
        None => Ok(Some(duration)),
        Some(d) if d.is_zero() => Ok(None),
        Some(d) if d > MAX_DURATION => Err("--baseline is at most 24h".into()),
        Some(d) => Ok(Some(d)),
    }
}

fn payload_of(r: &Request) -> Result<Payload, String> {
    match &r.command {
        None => {
            if !r.args.is_empty() {
                return Err("--args needs --command".into());
            }
            let exe = std::env::current_exe()
                .map_err(|e| format!("cannot find this executable to re-run it: {e}"))?;
            Ok(Payload {
                program: exe,
                arg0: "ingestbench".into(),
                args: Vec::new(),
            })
        }
        Some(c) => {
            let program: PathBuf = launch::resolve(c)?;
            Ok(Payload {
                arg0: c.clone(),
                program,
                args: r.args.clone(),
            })
        }
    }
}

/// Seconds in the shortest exact form: `5ms`, `1.5s`.
fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{}ms", (s * 1e6).round() / 1e3)
    } else {
        format!("{}s", (s * 1e3).round() / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(pace: Pace, secs: u64) -> Request {
        Request {
            command: Some("/bin/true".into()),
            pace: Some(pace),
            duration: Some(Duration::from_secs(secs)),
            ..Request::default()
        }
    }

    #[test]
    fn rates_parse() {
        assert_eq!(parse_rate("200/s"), Ok(200.0));
        assert_eq!(parse_rate("200"), Ok(200.0));
        assert_eq!(parse_rate(" 12.5/s"), Ok(12.5));
        assert!(parse_rate("200/m").is_err());
        assert!(parse_rate("inf").is_err());
        assert!(parse_rate("").is_err());
    }

    #[test]
    fn delay_and_rate_give_the_same_schedule() {
        let a = plan(&req(Pace::Rate(200.0), 3)).unwrap();
        let b = plan(&req(Pace::Delay(Duration::from_millis(5)), 3)).unwrap();
        assert_eq!(a.schedule, b.schedule);
        assert_eq!(a.schedule.count, 600);
        assert_eq!(a.delay(), Duration::from_millis(5));
        assert_eq!(a.baseline, Some(Duration::from_secs(3)));
        assert!(a.watch.include_self && !a.watch.children);
    }

    #[test]
    fn refuses_what_edr_loadgen_refuses() {
        let e = plan(&req(Pace::Delay(Duration::ZERO), 3)).unwrap_err();
        assert!(e.contains("cannot be 0"), "{e}");
        let e = plan(&req(Pace::Delay(Duration::from_millis(301)), 3)).unwrap_err();
        assert!(e.contains("much smaller than --duration"), "{e}");
        assert!(plan(&req(Pace::Delay(Duration::from_millis(300)), 3)).is_ok());
        let e = plan(&req(Pace::Rate(3.0), 3)).unwrap_err();
        assert!(e.contains("much smaller"), "{e}");
    }

    #[test]
    fn refuses_a_spawn_storm_unless_forced() {
        let e = plan(&req(Pace::Rate(5000.0), 3)).unwrap_err();
        assert!(e.contains("ceiling") && e.contains("--force"), "{e}");
        let mut r = req(Pace::Rate(5000.0), 3);
        r.force = true;
        assert!(plan(&r).is_ok());
        r.pace = Some(Pace::Rate(1e6));
        assert!(plan(&r).unwrap_err().contains("hard limit"));
        assert!(plan(&req(Pace::Rate(2000.0), 3)).is_ok());
        assert!(plan(&req(Pace::Rate(0.0), 3)).is_err());
        assert!(plan(&req(Pace::Rate(-1.0), 3)).is_err());
    }

    #[test]
    fn other_refusals() {
        let mut r = req(Pace::Rate(200.0), 3);
        r.duration = None;
        assert!(plan(&r).unwrap_err().contains("--duration is required"));
        let mut r = req(Pace::Rate(200.0), 3);
        r.pace = None;
        assert!(plan(&r).unwrap_err().contains("--rate"));
        let mut r = req(Pace::Rate(200.0), 3);
        r.command = Some("/nonexistent/x".into());
        assert!(plan(&r).is_err());
        let mut r = req(Pace::Rate(200.0), 3);
        r.no_baseline = true;
        assert_eq!(plan(&r).unwrap().baseline, None);
        r.baseline = Some(Duration::from_secs(1));
        assert!(plan(&r).is_err());
        let mut r = req(Pace::Rate(200.0), 3);
        r.command = None;
        r.args = vec!["x".into()];
        assert!(plan(&r).is_err());
        r.args.clear();
        let p = plan(&r).unwrap();
        assert_eq!(p.payload.arg0, "ingestbench");
    }
}
