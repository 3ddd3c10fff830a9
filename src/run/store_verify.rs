//! The config's `verify`, carried out once the run has ended: the run's own accounting, in
//! memory, becomes the `Expected` its saved report would give `ingestbench verify`; every store
//! of `verify.sources` is settled and read in order (`verify::verify`), judged with the config's
//! `slo.max_lost_events` / `slo.max_dup_events`; and the answer, or why there is none, becomes
//! the report's `store_verification`. `execute::verdict` reads it: lost or duplicated beyond
//! the limits exits 5, a store that cannot be reached 6 — a run that did not verify what it
//! was asked to never exits 0.

use std::sync::Arc;
use std::time::Duration;

use crate::config::schema::Slo;
use crate::report::{Accounting, StoreStatus, StoreVerification};
use crate::run::plan::VerifyPlan;
use crate::verify::expected::{Expected, ExpectedAgent};
use crate::verify::growth::{Growth, GrowthHandle};
use crate::verify::source::Spec;
use crate::verify::{self, Options, VerifyError};

/// How often a store's progress is polled while it settles.
const POLL: Duration = Duration::from_secs(1);
/// Bound of each HTTP call to a store.
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// What the stores should hold: the accounting the run reported, with the config's limits.
pub fn expected(acc: &Accounting, slo: &Slo) -> Result<Expected, VerifyError> {
    let agents = acc
        .agents
        .iter()
        .map(|a| {
            ExpectedAgent::new(
                a.agent,
                a.events_sent,
                a.failed.iter().copied(),
                a.failed_overflow,
            )
        })
        .collect();
    Expected::new(
        acc.run_id.clone(),
        agents,
        slo.max_lost_events,
        slo.max_dup_events,
    )
}

/// How often the file stores' sizes are sampled while the run goes on (their ingest lag's
/// resolution).
pub const GROWTH_EVERY: Duration = Duration::from_millis(100);

/// Starts dating the file stores' bytes, when `plan` has any: to be started before the load
/// and handed to `verify_stores` after it.
pub fn start_growth(plan: &VerifyPlan) -> Option<GrowthHandle> {
    let globs: Vec<String> = plan
        .specs
        .iter()
        .filter_map(|s| match s {
            Spec::File(g) => Some(g.clone()),
            _ => None,
        })
        .collect();
    (!globs.is_empty()).then(|| GrowthHandle(Arc::new(Growth::start(globs, GROWTH_EVERY))))
}

/// Asks every store of `plan` about the run whose accounting is `acc` (none: the run's events
/// carried no tags, which planning refuses); nothing is asked when the run aborted. `growth`
/// dates the file stores' lines (their ingest lag).
pub fn verify_stores(
    plan: &VerifyPlan,
    acc: Option<&Accounting>,
    slo: &Slo,
    aborted: bool,
    growth: Option<GrowthHandle>,
) -> StoreVerification {
    let mut sv = StoreVerification {
        sources: plan.specs.iter().map(|s| s.label()).collect(),
        settle_timeout_s: plan.settle_timeout.as_secs_f64(),
        status: StoreStatus::NotAsked,
        error: None,
        result: None,
    };
    if aborted {
        sv.error = Some("the run aborted: no store was asked".into());
        return sv;
    }
    let answer = acc
        .ok_or_else(|| VerifyError::Input("the run's events carried no accounting tags".into()))
        .and_then(|a| expected(a, slo))
        .and_then(|exp| {
            verify::verify(
                &exp,
                &plan.specs,
                &Options {
                    settle_timeout: plan.settle_timeout,
                    poll: POLL,
                    http_timeout: HTTP_TIMEOUT,
                    max_lost: slo.max_lost_events,
                    max_dup: slo.max_dup_events,
                    search: plan.search.clone(),
                    growth,
                },
            )
        });
    match answer {
        Ok(v) => {
            sv.status = StoreStatus::Verified;
            sv.result = Some(v);
        }
        Err(e) => {
            sv.status = match e {
                VerifyError::Input(_) => StoreStatus::Invalid,
                VerifyError::Unreachable(_) => StoreStatus::Unreachable,
                VerifyError::Auth(_) => StoreStatus::AuthFailed,
            };
            sv.error = Some(e.to_string());
        }
    }
    sv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::AgentAccounting;
    use crate::verify::source::Spec;

    fn accounting() -> Accounting {
        Accounting {
            run_id: "r-000000000001".into(),
            agents: vec![
                AgentAccounting {
                    agent: 1,
                    events_sent: 10,
                    failed: vec![(6, 8), (2, 3)],
                    failed_overflow: false,
                },
                AgentAccounting {
                    agent: 0,
                    events_sent: 4,
                    failed: vec![],
                    failed_overflow: false,
                },
            ],
        }
    }

    #[test]
    fn the_accounting_in_memory_is_what_a_saved_report_says() {
        let slo = Slo {
            max_lost_events: Some(2),
            ..Slo::default()
        };
        let acc = accounting();
        let mem = expected(&acc, &slo).unwrap();
        let json = format!(
            r#"{{"config":{{"slo":{{"max_lost_events":2}}}},"accounting":{}}}"#,
            serde_json::to_string(&acc).unwrap()
        );
        assert_eq!(mem, Expected::from_report(&json).unwrap());
        assert_eq!(mem.agent(1).unwrap().accepted_count(), 7);
    }

    #[test]
    fn unreachable_and_skipped_stores_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let plan = VerifyPlan {
            search: crate::verify::source::SearchOptions::default(),
            specs: vec![Spec::File(format!("{}/none*.log", dir.path().display()))],
            settle_timeout: Duration::ZERO,
        };
        let acc = accounting();
        let sv = verify_stores(&plan, Some(&acc), &Slo::default(), false, None);
        assert_eq!(sv.status, StoreStatus::Unreachable);
        assert!(sv.error.unwrap().contains("no file matches"));
        let sv = verify_stores(&plan, Some(&acc), &Slo::default(), true, None);
        assert_eq!(sv.status, StoreStatus::NotAsked);
        assert!(sv.result.is_none());
        let sv = verify_stores(&plan, None, &Slo::default(), false, None);
        assert_eq!(sv.status, StoreStatus::Invalid);
    }

    /// A report of a clean 1,000-event run of `accounting()`'s run id, with `sv` in it.
    fn report_with(sv: Option<StoreVerification>) -> crate::report::Report {
        use crate::stats::result::RunResult;
        use crate::stats::{Counters, new_histogram};
        let mut lat = new_histogram();
        lat.record(1_000).unwrap();
        let r = RunResult {
            duration: Duration::from_secs(1),
            threads: 1,
            connections: 1,
            totals: Counters {
                events_sent: 1_000,
                events_accepted: 1_000,
                batches_sent: 10,
                batches_accepted: 10,
                ..Counters::default()
            },
            all_totals: Counters::default(),
            answered_in_window: 1_000,
            latency: lat.clone(),
            service: lat,
            seconds: Vec::new(),
            abort: None,
            target_events: 1_000.0,
            window: Duration::from_secs(1),
            drain: Duration::ZERO,
            warmup: Duration::ZERO,
            paused: Duration::ZERO,
            control: Vec::new(),
            agents: Vec::new(),
            scenario: None,
            phases: None,
            sources: None,
            targets: None,
            item_errors: Vec::new(),
        };
        let mut rep = crate::report::build(
            &r,
            crate::testutil::context("r-000000000001", Slo::default()),
        );
        rep.store_verification = sv;
        rep
    }

    fn verdict_of(sv: Option<StoreVerification>) -> (crate::exit::Exit, Vec<String>) {
        super::super::execute::verdict(&report_with(sv), &None, &Slo::default())
    }

    #[test]
    fn the_verdict_fails_closed_on_what_the_stores_said() {
        use crate::exit::Exit;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("out.log");
        let acc = accounting();
        let mut lines = String::new();
        for a in &acc.agents {
            let e = ExpectedAgent::new(a.agent, a.events_sent, a.failed.iter().copied(), false);
            for (from, to) in e.accepted() {
                for seq in from..to {
                    lines.push_str(&format!(
                        "ingestbench_run={} ingestbench_agent={} ingestbench_seq={seq}\n",
                        acc.run_id, a.agent
                    ));
                }
            }
        }
        std::fs::write(&log, &lines).unwrap();
        let plan = VerifyPlan {
            search: crate::verify::source::SearchOptions::default(),
            specs: vec![Spec::File(log.display().to_string())],
            settle_timeout: Duration::ZERO,
        };
        let ask = || verify_stores(&plan, Some(&acc), &Slo::default(), false, None);
        assert_eq!(verdict_of(None).0, Exit::Ok, "{:?}", verdict_of(None));
        assert_eq!(verdict_of(Some(ask())).0, Exit::Ok);

        // One accepted event gone from the file: exit 5, naming the store.
        std::fs::write(&log, lines.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
        let (exit, reasons) = verdict_of(Some(ask()));
        assert_eq!(exit, Exit::VerifyFailed);
        assert!(
            reasons[0].contains(&format!("file:{}: 1 events lost", log.display())),
            "{reasons:?}"
        );

        // A store that cannot be read: 6; a spec that cannot be used: 2.
        std::fs::remove_file(&log).unwrap();
        let (exit, reasons) = verdict_of(Some(ask()));
        assert_eq!(exit, Exit::Aborted, "{reasons:?}");
        assert!(reasons[0].contains("unreachable"), "{reasons:?}");
        let (exit, _) = verdict_of(Some(verify_stores(
            &plan,
            None,
            &Slo::default(),
            false,
            None,
        )));
        assert_eq!(exit, Exit::Invalid);
    }

    #[test]
    fn a_file_without_the_run_s_events_is_all_lost() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("out.log");
        std::fs::write(
            &log,
            "ingestbench_run=r-other ingestbench_agent=0 ingestbench_seq=0\n",
        )
        .unwrap();
        let plan = VerifyPlan {
            search: crate::verify::source::SearchOptions::default(),
            specs: vec![Spec::File(log.display().to_string())],
            settle_timeout: Duration::ZERO,
        };
        let sv = verify_stores(&plan, Some(&accounting()), &Slo::default(), false, None);
        let v = sv.result.expect("verified");
        assert_eq!(sv.status, StoreStatus::Verified);
        assert_eq!((v.sources[0].comparison.lost, v.pass), (11, false));
        assert!(
            v.reasons[0].starts_with(&format!("file:{}", log.display())),
            "{:?}",
            v.reasons
        );
    }
}
