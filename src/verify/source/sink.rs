//! A standalone `ingestbench sink`: `GET /stats` (`SinkStats` JSON) gives per run and agent
//! the tagged events received, the distinct seqs and the duplicates, and the highest seq.
//! Counts, not seq lists: lost and duplicated are counted per agent, but which seqs are
//! missing cannot be listed from it (`seqs_listed` false in the result). Where the run's tags
//! carried their send time, the sink's send → receive lag is the store's ingest lag.

use std::time::Duration;

use crate::sink::SinkStats;
use crate::verify::VerifyError;
use crate::verify::expected::Expected;
use crate::verify::held::{AgentHold, CountHold, Held};
use crate::verify::lag::IngestLag;

/// Largest `/stats` body read.
const MAX_BODY: u64 = 64 << 20;

fn stats(base: &str, timeout: Duration) -> Result<SinkStats, VerifyError> {
    let url = format!("{base}/stats");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .get(&url)
        .call()
        .map_err(|e| VerifyError::Unreachable(format!("sink:{base}: {e}")))?;
    let status = resp.status().as_u16();
    if status != 200 {
        return Err(VerifyError::Unreachable(format!(
            "sink:{base}: GET /stats answered {status}"
        )));
    }
    let body = resp
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_string()
        .map_err(|e| VerifyError::Unreachable(format!("sink:{base}: reading /stats: {e}")))?;
    serde_json::from_str(&body).map_err(|e| {
        VerifyError::Unreachable(format!(
            "sink:{base}: /stats is not an ingestbench sink's answer: {e}"
        ))
    })
}

/// Tagged events received for every run, plus all events: grows while events arrive.
pub fn progress(base: &str, timeout: Duration) -> Result<u64, VerifyError> {
    Ok(stats(base, timeout)?.events_received)
}

pub fn read(base: &str, exp: &Expected, timeout: Duration) -> Result<Held, VerifyError> {
    let s = stats(base, timeout)?;
    let mut held = Held {
        scanned: s.events_received,
        ..Held::default()
    };
    for (run, rs) in &s.runs {
        if *run != exp.run_id {
            held.other_runs += rs.received;
            continue;
        }
        held.ingest_lag = rs.ingest_lag_ms.as_ref().map(|l| IngestLag {
            measure: "sink receive time - tag sent".into(),
            count: l.count,
            p50_ms: l.p50,
            p99_ms: l.p99,
            max_ms: l.max,
            negative: 0,
            resolution_ms: 1,
        });
        for (id, a) in &rs.agents {
            let Ok(id) = id.parse::<u32>() else { continue };
            held.agents.insert(
                id,
                AgentHold::Counts(CountHold {
                    received: a.received,
                    distinct: a.distinct,
                    max_seq: a.max_seq,
                }),
            );
        }
    }
    Ok(held)
}
