//! What a saved report says was accepted: its `accounting` section (schema
//! `ingestbench.report/2`) read into, per agent, the accepted seqs as ranges. Events of agent
//! `a` carry seqs `0..events_sent`; the seqs of each `failed` range `[from, to)` were given up;
//! every other seq was accepted. `failed_overflow` means the failed list is incomplete, so the
//! expected set is not exact (`Expected::exact` is false). The SLO limits `slo.max_lost_events`
//! and `slo.max_dup_events` are read from the report's `config` when present. A run that
//! verifies its own report in memory builds the same `Expected` with `Expected::new` and
//! `ExpectedAgent::new` (the same normalisation of the failed ranges), without JSON.

use serde_json::Value;

use super::VerifyError;

/// Most events per agent accepted in a report (the sink's seq limit): the verifier holds one
/// bit per expected event.
pub const MAX_EVENTS_PER_AGENT: u64 = 1 << 36;

/// One agent's expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedAgent {
    pub agent: u32,
    pub events_sent: u64,
    /// Failed ranges `[from, to)`, sorted, merged, clipped to `0..events_sent`.
    pub failed: Vec<(u64, u64)>,
    pub failed_overflow: bool,
}

impl ExpectedAgent {
    /// An agent that sent seqs `0..events_sent` and gave up the `failed` ranges `[from, to)`
    /// (in any order, overlapping or not): kept sorted, merged and clipped to `events_sent`.
    pub fn new(
        agent: u32,
        events_sent: u64,
        failed: impl IntoIterator<Item = (u64, u64)>,
        failed_overflow: bool,
    ) -> ExpectedAgent {
        let mut ranges: Vec<(u64, u64)> = failed
            .into_iter()
            .map(|(f, t)| (f, t.min(events_sent)))
            .filter(|(f, t)| f < t)
            .collect();
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (f, t) in ranges {
            match merged.last_mut() {
                Some(last) if f <= last.1 => last.1 = last.1.max(t),
                _ => merged.push((f, t)),
            }
        }
        ExpectedAgent {
            agent,
            events_sent,
            failed: merged,
            failed_overflow,
        }
    }

    /// The accepted seqs as sorted, disjoint ranges `[from, to)`.
    pub fn accepted(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(self.failed.len() + 1);
        let mut at = 0;
        for &(f, t) in &self.failed {
            if f > at {
                out.push((at, f));
            }
            at = at.max(t);
        }
        if at < self.events_sent {
            out.push((at, self.events_sent));
        }
        out
    }

    pub fn accepted_count(&self) -> u64 {
        self.accepted().iter().map(|(f, t)| t - f).sum()
    }

    /// Whether `seq` is in a failed range.
    pub fn is_failed(&self, seq: u64) -> bool {
        let i = self.failed.partition_point(|&(_, t)| t <= seq);
        self.failed.get(i).is_some_and(|&(f, _)| f <= seq)
    }
}

/// The whole expectation of one report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub run_id: String,
    pub agents: Vec<ExpectedAgent>,
    pub max_lost_events: Option<u64>,
    pub max_dup_events: Option<u64>,
}

impl Expected {
    /// False when some agent's failed list overflowed: losses cannot be counted exactly.
    pub fn exact(&self) -> bool {
        !self.agents.iter().any(|a| a.failed_overflow)
    }

    pub fn agent(&self, id: u32) -> Option<&ExpectedAgent> {
        self.agents.iter().find(|a| a.agent == id)
    }

    /// The expectation of run `run_id` from its agents (any order; each agent once) and the
    /// limits the run was judged with. A report in memory comes here without JSON.
    pub fn new(
        run_id: String,
        mut agents: Vec<ExpectedAgent>,
        max_lost_events: Option<u64>,
        max_dup_events: Option<u64>,
    ) -> Result<Expected, VerifyError> {
        agents.sort_by_key(|a| a.agent);
        if agents
            .windows(2)
            .any(|w| matches!(w, [a, b] if a.agent == b.agent))
        {
            return Err(VerifyError::Input(
                "accounting.agents names an agent twice".into(),
            ));
        }
        Ok(Expected {
            run_id,
            agents,
            max_lost_events,
            max_dup_events,
        })
    }

    /// Reads a report's JSON text.
    pub fn from_report(text: &str) -> Result<Expected, VerifyError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| VerifyError::Input(format!("the report is not JSON: {e}")))?;
        let acc = v
            .get("accounting")
            .filter(|a| !a.is_null())
            .ok_or_else(|| {
                VerifyError::Input(
                    "the report has no `accounting` section (made by an older ingestbench, or not \
                 a run report): nothing says which events were accepted"
                        .into(),
                )
            })?;
        let run_id = acc
            .get("run_id")
            .or_else(|| v.get("run_id"))
            .and_then(Value::as_str)
            .ok_or_else(|| VerifyError::Input("accounting.run_id is missing".into()))?
            .to_string();
        let list = acc
            .get("agents")
            .and_then(Value::as_array)
            .ok_or_else(|| VerifyError::Input("accounting.agents is not a list".into()))?;
        let mut agents = Vec::with_capacity(list.len());
        for (i, a) in list.iter().enumerate() {
            agents.push(
                agent(a).map_err(|e| VerifyError::Input(format!("accounting.agents[{i}]: {e}")))?,
            );
        }
        let slo = v.get("config").and_then(|c| c.get("slo"));
        let limit = |k: &str| slo.and_then(|s| s.get(k)).and_then(Value::as_u64);
        Expected::new(
            run_id,
            agents,
            limit("max_lost_events"),
            limit("max_dup_events"),
        )
    }
}

fn agent(a: &Value) -> Result<ExpectedAgent, String> {
    let agent = a
        .get("agent")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or("`agent` is not an agent number")?;
    let events_sent = a
        .get("events_sent")
        .and_then(Value::as_u64)
        .ok_or("`events_sent` is not a count")?;
    if events_sent > MAX_EVENTS_PER_AGENT {
        return Err(format!(
            "`events_sent` {events_sent} is beyond what one agent can send (2^36)"
        ));
    }
    let mut failed = Vec::new();
    if let Some(list) = a.get("failed") {
        let list = list.as_array().ok_or("`failed` is not a list")?;
        for r in list {
            let pair = r.as_array().and_then(|p| match p.as_slice() {
                [f, t] => Some((f.as_u64(), t.as_u64())),
                _ => None,
            });
            let (f, t) = match pair {
                Some((Some(f), Some(t))) if f <= t => (f, t),
                _ => return Err(format!("`failed` holds {r}, not a range [from, to)")),
            };
            failed.push((f, t));
        }
    }
    let failed_overflow = a
        .get("failed_overflow")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(ExpectedAgent::new(
        agent,
        events_sent,
        failed,
        failed_overflow,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_accounting_and_limits() {
        let e = Expected::from_report(
            r#"{"run_id":"r-1","config":{"slo":{"max_lost_events":3}},
                "accounting":{"run_id":"r-1","agents":[
                  {"agent":1,"events_sent":10,"failed":[[5,7],[2,3],[6,8]],"failed_overflow":false},
                  {"agent":0,"events_sent":4,"failed":[],"failed_overflow":true}]}}"#,
        )
        .unwrap();
        assert_eq!(e.run_id, "r-1");
        assert_eq!(e.max_lost_events, Some(3));
        assert_eq!(e.max_dup_events, None);
        assert!(!e.exact());
        let a1 = e.agent(1).unwrap();
        assert_eq!(a1.failed, vec![(2, 3), (5, 8)]);
        assert_eq!(a1.accepted(), vec![(0, 2), (3, 5), (8, 10)]);
        assert_eq!(a1.accepted_count(), 6);
        assert!(a1.is_failed(2) && a1.is_failed(7) && !a1.is_failed(3) && !a1.is_failed(8));
    }

    #[test]
    fn agents_made_in_memory_are_normalised_as_read_ones() {
        let a = ExpectedAgent::new(2, 10, [(8, 14), (1, 3), (2, 5), (9, 9)], false);
        assert_eq!(a.failed, vec![(1, 5), (8, 10)]);
        assert_eq!(a.accepted(), vec![(0, 1), (5, 8)]);
        let e = Expected::new(
            "r-1".into(),
            vec![a.clone(), ExpectedAgent::new(0, 3, [], false)],
            Some(1),
            None,
        )
        .unwrap();
        assert_eq!(e.agents.iter().map(|a| a.agent).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(e.max_lost_events, Some(1));
        assert!(Expected::new("r-1".into(), vec![a.clone(), a], None, None).is_err());
    }

    #[test]
    fn refuses_reports_without_accounting() {
        for text in ["{}", r#"{"accounting":null}"#, "nope"] {
            assert!(matches!(
                Expected::from_report(text),
                Err(VerifyError::Input(_))
            ));
        }
        let bad = r#"{"accounting":{"run_id":"r","agents":[{"agent":0,"events_sent":3,"failed":[[2,1]]}]}}"#;
        assert!(Expected::from_report(bad).is_err());
    }
}
