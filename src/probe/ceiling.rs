//! The probe's optional last step (`--ceiling`): a short ceiling search (`run::ceiling` with
//! `Params::short`: 1 s warm-up + 3 s judged per step, 10 % precision) at the target the other
//! steps checked, fitted into the probe's time left — fewer steps when less time is left,
//! refused when not even three fit. The step passes when the search found the target's
//! ceiling, and fails with the search's exit code otherwise (3 when the limit found is ours or
//! no rate held, 4, 5, 6 as a run would).

use std::time::Duration;

use crate::exit::Exit;
use crate::probe::{Ctx, Step};
use crate::report::ceiling::{StepRow, headline, step_line};
use crate::run::Overrides;
use crate::run::ceiling::{self, Params};

const NAME: &str = "ceiling";

/// Time a step takes beyond its warm-up and hold: planning, connecting, the drain.
const STEP_OVERHEAD: Duration = Duration::from_secs(2);

pub fn search(ctx: &mut Ctx<'_>, left: Duration) -> Step {
    let mut cfg = ctx.config_for_run();
    cfg.workload.find_ceiling = true;
    // The search runs each step for its warm-up and hold: the probe's stop is not its.
    cfg.workload.stop = crate::config::schema::Stop::default();
    let mut p = Params::short(&cfg.workload);
    let per_step = p.warmup + p.hold + STEP_OVERHEAD;
    let fit = (left.as_secs_f64() / per_step.as_secs_f64()).floor() as u32;
    if fit < 3 {
        return Step::fail(
            NAME,
            format!(
                "a ceiling search needs at least {:.0} s (3 steps of {:.0} s); {:.0} s of --timeout are left",
                3.0 * per_step.as_secs_f64(),
                per_step.as_secs_f64(),
                left.as_secs_f64()
            ),
            Exit::Invalid,
        );
    }
    if fit < p.max_steps {
        // Running out of these steps is running out of time.
        p.max_steps = fit;
        p.steps_fit_time = true;
    }
    let ov = Overrides {
        seed: ctx.config.seed,
        ..Overrides::default()
    };
    let mut no_observers = Vec::new;
    let mut rows: Vec<String> = Vec::new();
    let mut on_step = |s: &StepRow| rows.push(step_line(s));
    let outcome = match ceiling::find(
        cfg,
        &p,
        &ov,
        ctx.catalog,
        ctx.store,
        &mut no_observers,
        &mut on_step,
    ) {
        Ok(o) => o,
        Err(e) => return Step::fail(NAME, e.to_string(), e.exit()),
    };
    let Some(c) = outcome.report.ceiling.clone() else {
        return Step::fail(NAME, "the search gave no result", Exit::Aborted);
    };
    let mut step = Step::pass(NAME, headline(&c)).detail("ceiling", &c);
    for r in rows {
        step = step.line(r);
    }
    match outcome.exit {
        Exit::Ok => step,
        exit => step.failed(outcome.reasons.join("; "), exit),
    }
}
