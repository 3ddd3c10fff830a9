//! Shard reports and their merge (`ingestbench report merge`). A shard's report carries
//! `shard`: its index and count and what the report was built from (counters whole, the
//! seconds, the window and target, the agents' accounts) beside the histograms every report
//! carries (`latency_hdr`). Merging reads N such reports back, refuses what is not one run
//! whole (another run id or config, a shard twice or missing, a report that is not a
//! shard's), then rebuilds the run's `RunResult` and `Context` — histograms added, counters
//! summed, seconds aligned by wall clock, accounts joined — and builds the report from them
//! as a run of one process would, SLOs judged on the merged figures. What is each shard's
//! own (watched processes, faults, sizing, scenario, phases, breakdowns, control) stays in
//! the shard reports and is named in `merged.left_out`.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::schema::Config;
use crate::report::{Context, Report, Verdict, Verification, hdr, slo};
use crate::run::shard::Shard;
use crate::stats::result::{AbortReason, RunResult, Second};
use crate::stats::snapshot::LatencySummary;
use crate::stats::{AgentAccount, Counters, new_histogram};

/// What a shard's report carries for `report merge`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardSection {
    pub index: u32,
    pub count: u32,
    pub started_wall_ns: i64,
    pub duration_ns: u64,
    pub window_ns: u64,
    pub drain_ns: u64,
    pub warmup_ns: u64,
    pub paused_ns: u64,
    pub target_events: f64,
    pub threads: usize,
    pub connections: usize,
    pub abort: Option<AbortReason>,
    pub totals: Counters,
    pub seconds: Vec<Second>,
    pub agents: Vec<AgentAccount>,
    pub item_errors: Vec<String>,
}

impl ShardSection {
    pub fn of(s: Shard, r: &RunResult, started_wall_ns: i64) -> ShardSection {
        let ns = |d: Duration| d.as_nanos() as u64;
        ShardSection {
            index: s.index,
            count: s.count,
            started_wall_ns,
            duration_ns: ns(r.duration),
            window_ns: ns(r.window),
            drain_ns: ns(r.drain),
            warmup_ns: ns(r.warmup),
            paused_ns: ns(r.paused),
            target_events: r.target_events,
            threads: r.threads,
            connections: r.connections,
            abort: r.abort.clone(),
            totals: r.totals.clone(),
            seconds: r.seconds.clone(),
            agents: r
                .agents
                .iter()
                .chain(r.scenario.as_ref().and_then(|l| l.account.as_ref()))
                .cloned()
                .collect(),
            item_errors: r.item_errors.clone(),
        }
    }
}

/// Where a merged report came from.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Merged {
    pub shards: Vec<MergedShard>,
    /// Sections the shards have that a merge does not combine (each shard's report has its
    /// own).
    pub left_out: Vec<String>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct MergedShard {
    pub index: u32,
    pub file: String,
    pub host: String,
    pub started_at: String,
    pub events_accepted: u64,
    /// The shard's own exit code (its SLOs judged on its part alone).
    pub exit_code: i32,
}

/// Why reports cannot be merged.
#[derive(Debug, PartialEq)]
pub struct MergeError(pub String);

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One shard read back: its file's name, its report (read and checked by `de::read`, as
/// `report show` reads one) and its shard section.
struct Part {
    file: String,
    saved: Report,
    shard: ShardSection,
}

/// Sections a merge leaves to the shards' own reports.
const PER_SHARD: &[&str] = &[
    "watched",
    "faults",
    "sizing",
    "scenario",
    "http",
    "by_source",
    "by_target",
    "store_verification",
    "data_rate",
    "control",
];

/// The report of the run the shard reports `(file, text)` are of.
pub fn merge(files: &[(String, String)]) -> Result<Report, MergeError> {
    let mut parts = files
        .iter()
        .map(|(file, text)| read(file, text))
        .collect::<Result<Vec<_>, _>>()?;
    check_one_run(&mut parts)?;
    let Some(first) = parts.first() else {
        return Err(MergeError("no reports to merge".into()));
    };
    let config = read_config(first)?;
    let (result, cx) = rebuild(&parts, &config)?;
    let mut rep = crate::report::build(&result, cx);
    let (exit, reasons) = crate::run::verdict(&rep, &result.abort, &config.slo);
    rep.verdict = Verdict {
        pass: exit == crate::exit::Exit::Ok,
        exit_code: exit.code(),
        reasons,
    };
    shard_failures(&parts, &mut rep.verdict);
    rep.merged = Some(Merged {
        shards: parts.iter().map(merged_shard).collect(),
        left_out: left_out(&parts),
    });
    Ok(rep)
}

fn read(file: &str, text: &str) -> Result<Part, MergeError> {
    let err = |m: String| MergeError(format!("{file}: {m}"));
    let saved = crate::report::de::read(file, text).map_err(MergeError)?;
    if saved.merged.is_some() {
        return Err(err(
            "a merged report: merge the shard reports it came from".into()
        ));
    }
    let Some(shard) = saved.shard.clone() else {
        return Err(err(
            "not a shard's report (no `shard` section): only the reports of `run --shard I/N` (or --shards N) merge".into(),
        ));
    };
    Ok(Part {
        file: file.to_string(),
        saved,
        shard,
    })
}

/// One run, whole: one run id, one shard count, one config, each index once, none missing.
fn check_one_run(parts: &mut [Part]) -> Result<(), MergeError> {
    let Some(first) = parts.first() else {
        return Err(MergeError("no reports to merge".into()));
    };
    let (run_id, count) = (first.saved.run_id.clone(), first.shard.count);
    let (file, config) = (first.file.clone(), first.saved.config.clone());
    for p in parts.iter() {
        if p.saved.run_id != run_id {
            return Err(MergeError(format!(
                "{} is of run {} and {} of run {}: only the shards of one run merge",
                file, run_id, p.file, p.saved.run_id
            )));
        }
        if p.shard.count != count {
            return Err(MergeError(format!(
                "{} is a shard of {count} and {} of {}: one run has one shard count",
                file, p.file, p.shard.count
            )));
        }
        if p.saved.config != config {
            return Err(MergeError(format!(
                "{} and {} were run with different configs: the shards of one run share theirs",
                file, p.file
            )));
        }
    }
    parts.sort_by_key(|p| p.shard.index);
    for w in parts.windows(2) {
        if let [a, b] = w
            && a.shard.index == b.shard.index
        {
            return Err(MergeError(format!(
                "shard {} twice: {} and {}",
                a.shard.index, a.file, b.file
            )));
        }
    }
    let have: Vec<u32> = parts.iter().map(|p| p.shard.index).collect();
    let missing: Vec<String> = (0..count)
        .filter(|i| !have.contains(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(MergeError(format!(
            "run {run_id} has {count} shards and shard {} missing: merge every shard's report",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// The run's config, read back from the report as the loader reads a file (its SLOs, what
/// they need to know).
fn read_config(p: &Part) -> Result<Config, MergeError> {
    let text = crate::config::text::to_yaml(&p.saved.config);
    let store = crate::config::secrets::Store::new(std::path::PathBuf::from("/nonexistent"));
    let loaded = crate::config::load_str(&text, &store, None);
    loaded.config.ok_or_else(|| {
        let errors: Vec<String> = loaded
            .diags
            .items
            .iter()
            .filter(|d| d.severity == crate::yaml::diag::Severity::Error)
            .map(|d| d.to_string())
            .collect();
        MergeError(format!(
            "{}: its config does not read back: {}",
            p.file,
            errors.join("; ")
        ))
    })
}

/// The most the shards of one run may start apart: they are started together (a Job's
/// pods within minutes of each other).
const MAX_START_SPREAD_NS: i64 = 86_400 * 1_000_000_000;

/// The shards' counters add up without overflowing, and they started together.
fn addable(parts: &[Part]) -> Result<(), MergeError> {
    let starts = parts.iter().map(|p| p.shard.started_wall_ns);
    let (lo, hi) = (starts.clone().min().unwrap_or(0), starts.max().unwrap_or(0));
    if hi.saturating_sub(lo) > MAX_START_SPREAD_NS {
        return Err(MergeError(format!(
            "the shards started {} s apart: the shards of one run start together",
            hi.saturating_sub(lo) / 1_000_000_000
        )));
    }
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for p in parts {
        let totals = serde_json::to_value(&p.shard.totals).unwrap_or(Value::Null);
        add_up(&totals, "shard.totals", &mut sums).map_err(|k| {
            MergeError(format!(
                "{}: {k} does not add up with the other shards' (beyond any run)",
                p.file
            ))
        })?;
    }
    Ok(())
}

/// Adds every integer of `v` into `sums` by its path; the path of one that overflows.
fn add_up(v: &Value, at: &str, sums: &mut BTreeMap<String, u64>) -> Result<(), String> {
    match v {
        Value::Number(n) => {
            let sum = sums.entry(at.to_string()).or_default();
            *sum = n
                .as_u64()
                .map_or(Some(*sum), |x| sum.checked_add(x))
                .ok_or_else(|| at.to_string())?;
            Ok(())
        }
        Value::Object(o) => o
            .iter()
            .try_for_each(|(k, x)| add_up(x, &format!("{at}.{k}"), sums)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| add_up(x, &format!("{at}[{i}]"), sums)),
        _ => Ok(()),
    }
}

/// The run's result and context from its shards (in index order).
fn rebuild(parts: &[Part], config: &Config) -> Result<(RunResult, Context), MergeError> {
    addable(parts)?;
    let start = parts
        .iter()
        .map(|p| p.shard.started_wall_ns)
        .min()
        .unwrap_or(0);
    let end = parts
        .iter()
        .map(|p| p.shard.started_wall_ns + p.shard.duration_ns as i64)
        .max()
        .unwrap_or(start);
    let longest = |f: fn(&ShardSection) -> u64| {
        Duration::from_nanos(parts.iter().map(|p| f(&p.shard)).max().unwrap_or(0))
    };
    let mut totals = Counters::default();
    let (mut latency, mut service) = (new_histogram(), new_histogram());
    let mut agents = Vec::new();
    let mut item_errors = Vec::new();
    for p in parts {
        totals.add(&p.shard.totals);
        add(&mut latency, &p.saved.latency_hdr.intended, &p.file)?;
        add(&mut service, &p.saved.latency_hdr.service, &p.file)?;
        agents.extend(p.shard.agents.iter().cloned());
        item_errors.extend(p.shard.item_errors.iter().cloned());
    }
    agents.sort_by_key(|a| a.agent);
    item_errors.truncate(8);
    let result = RunResult {
        duration: Duration::from_nanos((end - start).max(0) as u64),
        threads: parts.iter().map(|p| p.shard.threads).sum(),
        connections: parts.iter().map(|p| p.shard.connections).sum(),
        // A shard's report keeps what it measured; the stores were asked by each shard.
        all_totals: totals.clone(),
        // A shard's section keeps no more; a merge judges no ceiling.
        answered_in_window: totals
            .events_accepted
            .saturating_sub(totals.events_accepted_in_drain),
        totals,
        latency,
        service,
        seconds: seconds(parts, start),
        abort: gravest_abort(parts),
        target_events: parts.iter().map(|p| p.shard.target_events).sum(),
        window: longest(|s| s.window_ns),
        drain: longest(|s| s.drain_ns),
        warmup: longest(|s| s.warmup_ns),
        paused: longest(|s| s.paused_ns),
        control: Vec::new(),
        agents,
        scenario: None,
        phases: None,
        sources: None,
        targets: None,
        item_errors,
    };
    let Some(first) = parts.first().map(|p| &p.saved) else {
        return Err(MergeError("no reports to merge".into()));
    };
    // Each host once, in the order of the first shard that ran there.
    let mut hosts: Vec<&str> = Vec::new();
    for p in parts {
        if !hosts.contains(&p.saved.host.as_str()) {
            hosts.push(&p.saved.host);
        }
    }
    let cx = Context {
        run_id: first.run_id.clone(),
        host: hosts.join(","),
        name: first.name.clone(),
        started_wall_ns: start,
        target: first.target.clone(),
        batch_max_events: first.batch_max_events,
        batch_max_bytes: first.batch_max_bytes,
        config: first.config.clone(),
        slo: config.slo.clone(),
        slo_facts: slo::Facts {
            hec_ack: config.target.hec.as_ref().is_some_and(|h| h.ack),
        },
        verification: verification(parts),
        watched: None,
        tagged: config.tagged(),
        faults: None,
        parts: Default::default(),
        shard: None,
    };
    Ok((result, cx))
}

fn add(into: &mut Histogram<u64>, encoded: &str, file: &str) -> Result<(), MergeError> {
    let h = hdr::decode(encoded)
        .map_err(|e| MergeError(format!("{file}: latency_hdr does not decode: {e}")))?;
    into.add(&h)
        .map_err(|e| MergeError(format!("{file}: latency_hdr does not add: {e}")))
}

/// Every shard's seconds on one clock: second `t` of a shard that started `k` whole seconds
/// (rounded) after the first is the run's second `t + k`. Counts add; a second's latency
/// percentiles are the highest of the shards' (the merged percentile is at most that; the
/// whole run's are exact, from the histograms).
fn seconds(parts: &[Part], start: i64) -> Vec<Second> {
    let mut by_t: BTreeMap<u32, Second> = BTreeMap::new();
    for p in parts {
        let shift = ((p.shard.started_wall_ns - start) as f64 / 1e9).round() as u32;
        for s in &p.shard.seconds {
            let t = s.t.saturating_add(shift);
            let row = by_t.entry(t).or_insert_with(|| Second {
                t,
                ..Default::default()
            });
            row.counts.add(&s.counts);
            row.target_eps += s.target_eps;
            highest(&mut row.latency.intended, &s.latency.intended);
            highest(&mut row.latency.service, &s.latency.service);
        }
    }
    by_t.into_values().collect()
}

fn highest(a: &mut LatencySummary, b: &LatencySummary) {
    let mean = if a.count + b.count > 0 {
        (a.mean * a.count as f64 + b.mean * b.count as f64) / (a.count + b.count) as f64
    } else {
        0.0
    };
    a.count += b.count;
    a.mean = mean;
    a.p50 = a.p50.max(b.p50);
    a.p90 = a.p90.max(b.p90);
    a.p99 = a.p99.max(b.p99);
    a.p99_9 = a.p99_9.max(b.p99_9);
    a.max = a.max.max(b.max);
}

/// The gravest reason a shard stopped early (authentication first, as the exit codes go).
fn gravest_abort(parts: &[Part]) -> Option<AbortReason> {
    let all: Vec<&AbortReason> = parts
        .iter()
        .filter_map(|p| p.shard.abort.as_ref())
        .collect();
    all.iter()
        .find(|a| matches!(a, AbortReason::Auth(_)))
        .or(all.first())
        .map(|a| (*a).clone())
}

/// What each shard's built-in sink stored, summed, when every shard has it.
fn verification(parts: &[Part]) -> Option<Verification> {
    let all: Vec<&Verification> = parts
        .iter()
        .filter_map(|p| p.saved.verification.as_ref())
        .collect();
    let first = all.first()?;
    (all.len() == parts.len()).then(|| Verification {
        store: first.store.clone(),
        events_received: all.iter().map(|v| v.events_received).sum(),
        distinct: all.iter().map(|v| v.distinct).sum(),
        duplicates: all.iter().map(|v| v.duplicates).sum(),
        lost_events: all.iter().map(|v| v.lost_events).sum(),
        ingest_lag_ms: None,
    })
}

/// A shard that failed on its own for something other than its SLOs (an abort, an auth
/// failure, lost events, a store's verification: what its part alone can show) fails the
/// merged run too; the SLOs are the merged figures'.
fn shard_failures(parts: &[Part], v: &mut Verdict) {
    const SLO_BREACH: i32 = 3;
    for p in parts {
        let own = &p.saved.verdict;
        if own.exit_code == 0 || own.exit_code == SLO_BREACH {
            continue;
        }
        if v.pass || v.exit_code == SLO_BREACH {
            v.pass = false;
            v.exit_code = own.exit_code;
        }
        v.reasons.push(format!(
            "shard {} ({}) failed with exit {}: {}",
            p.shard.index,
            p.file,
            own.exit_code,
            own.reasons.join("; ")
        ));
    }
}

fn merged_shard(p: &Part) -> MergedShard {
    MergedShard {
        index: p.shard.index,
        file: p.file.clone(),
        host: p.saved.host.clone(),
        started_at: crate::report::rfc3339(p.shard.started_wall_ns),
        events_accepted: p.shard.totals.events_accepted,
        exit_code: p.saved.verdict.exit_code,
    }
}

fn left_out(parts: &[Part]) -> Vec<String> {
    let raw: Vec<Value> = parts
        .iter()
        .map(|p| serde_json::to_value(&p.saved).unwrap_or(Value::Null))
        .collect();
    PER_SHARD
        .iter()
        .filter(|key| {
            raw.iter().any(|r| match r.get(**key) {
                None | Some(Value::Null) => false,
                Some(Value::Array(a)) => !a.is_empty(),
                Some(_) => true,
            })
        })
        .map(|k| k.to_string())
        .collect()
}
