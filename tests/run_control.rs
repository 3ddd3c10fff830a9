//! The run as a library call, steered while it runs: pause/resume shift the schedule (paused
//! time is neither due nor lag), a new rate continues from the integral, stop ends the run
//! with exit 6 and a report; each action is a mark in the timeline and the report, and the
//! snapshots follow. Runs go to the built-in sink on 127.0.0.1 and last a few seconds.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ingestbench::config::secrets::Store;
use ingestbench::exit::Exit;
use ingestbench::pack::Catalog;
use ingestbench::run::{self, Observer, Overrides, Rate, Run, RunOutcome, Snapshot};
use ingestbench::stats::snapshot::RunState;

fn run_of(yaml: &str) -> Run {
    let store = Store::new("/nonexistent/ingestbench-test-secrets".into());
    let catalog = Catalog::discover(None).unwrap();
    let c = run::load_text(yaml, "test.yaml", &store, &catalog).unwrap();
    let ov = Overrides {
        threads: Some(1),
        workers: Some(2),
        ..Overrides::default()
    };
    Run::new(run::plan(c.config, &ov, &catalog, &store).unwrap())
}

fn config(eps: u32, stop: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nseed: 9\ntarget: {{ url: builtin, batch: {{ max_events: 50 }} }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: {eps}, stop: {{ {stop} }} }}\n"
    )
}

/// Keeps every snapshot it is given.
#[derive(Clone, Default)]
struct Keep(Arc<Mutex<Vec<Snapshot>>>);

impl Observer for Keep {
    fn on_snapshot(&mut self, s: &Snapshot) {
        self.0.lock().unwrap().push(s.clone());
    }
}

fn wait_until(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn actions(o: &RunOutcome) -> Vec<&str> {
    o.report.control.iter().map(|m| m.action).collect()
}

#[test]
fn pause_and_resume_shift_the_schedule_and_lose_nothing() {
    let run = run_of(&config(1000, "after: 3s"));
    let (control, snaps) = (run.control(), run.snapshots());
    let keep = Keep::default();
    let h = run.start(vec![Box::new(keep.clone())]).unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    control.pause().unwrap();
    assert!(control.pause().is_err(), "pausing twice is refused");
    wait_until("a paused snapshot", Duration::from_secs(5), || {
        control.refresh();
        snaps.latest().state == RunState::Paused
    });
    let due_at_pause = snaps.latest().events_due;
    assert!((1100..1400).contains(&due_at_pause), "{due_at_pause}");
    std::thread::sleep(Duration::from_millis(1500));
    control.refresh();
    std::thread::sleep(Duration::from_millis(50));
    let s = snaps.latest();
    assert_eq!(s.rate_eps, 0.0);
    assert!(s.paused_s > 1.0, "{}", s.paused_s);
    // Nothing new is due while paused, and nothing beyond what was due is sent.
    assert_eq!(s.events_due, due_at_pause);
    assert!(
        s.cumulative.events_sent <= due_at_pause,
        "{} vs {due_at_pause}",
        s.cumulative.events_sent
    );
    control.resume().unwrap();
    let o = h.wait().unwrap();
    assert_eq!(o.exit, Exit::Ok, "{:?}", o.reasons);
    let r = &o.report;
    assert_eq!(actions(&o), ["pause", "resume"]);
    // 3 s of schedule at 1000 eps, whatever the pause: every event due, sent, stored once.
    assert_eq!(r.summary.events_sent, 3000);
    assert_eq!(r.summary.events_accepted, 3000);
    let v = r.verification.as_ref().unwrap();
    assert_eq!((v.distinct, v.duplicates, v.lost_events), (3000, 0, 0));
    assert!(
        r.paused_s > 1.4 && r.paused_s < 2.5,
        "paused {}",
        r.paused_s
    );
    assert!(
        r.duration_s > 4.4,
        "the end moved by the pause: {}",
        r.duration_s
    );
    // Paused time is not lag: batches left on time after the resume.
    assert!(r.summary.lag_ms_max < 200.0, "lag {}", r.summary.lag_ms_max);
    let marked: Vec<_> = r
        .timeline
        .iter()
        .filter(|row| !row.control.is_empty())
        .collect();
    assert_eq!(
        marked.len(),
        2,
        "{:?}",
        r.timeline
            .iter()
            .map(|x| (x.t, &x.control))
            .collect::<Vec<_>>()
    );
    // The observer saw the pause, and the last snapshot says finished.
    let seen = keep.0.lock().unwrap();
    assert!(seen.iter().any(|s| s.state == RunState::Paused));
    assert_eq!(seen.last().unwrap().state, RunState::Finished);
    assert_eq!(seen.last().unwrap().cumulative.events_accepted, 3000);
    assert_eq!(seen.last().unwrap().stored.as_ref().unwrap().distinct, 3000);
    assert!(seen.windows(2).all(|w| w[0].seq < w[1].seq));
}

#[test]
fn a_new_rate_continues_from_the_integral() {
    let run = run_of(&config(500, "after: 4s"));
    let control = run.control();
    let h = run.start(Vec::new()).unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    assert!(control.set_rate(Rate::Eps(0.0)).is_err());
    control.set_rate(Rate::Factor(4.0)).unwrap();
    let o = h.wait().unwrap();
    assert_eq!(o.exit, Exit::Ok, "{:?}", o.reasons);
    let r = &o.report;
    assert_eq!(actions(&o), ["rate"]);
    let mark = &r.control[0];
    assert_eq!(mark.rate_eps, Some(2000.0));
    // ~2 s at 500 then ~2 s at 2000: 1000 + 4000, give or take the instant of the change.
    let t = mark.t_s;
    let want = 500.0 * t + 2000.0 * (4.0 - t);
    let sent = r.summary.events_sent as f64;
    assert!((sent - want).abs() <= 2.0, "sent {sent}, schedule {want}");
    let v = r.verification.as_ref().unwrap();
    assert_eq!(v.distinct, r.summary.events_sent);
    // The timeline's target follows the new rate.
    let last_full = &r.timeline[3];
    assert!(
        (last_full.target_eps - 2000.0).abs() < 1.0,
        "{}",
        last_full.target_eps
    );
    assert!(r.timeline[0].target_eps < 501.0);
}

#[test]
fn stop_ends_the_run_with_a_report_and_exit_6() {
    let run = run_of(&config(2000, "after: 30s"));
    let control = run.control();
    let started = Instant::now();
    let h = run.start(Vec::new()).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    control.stop().unwrap();
    let o = h.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(o.exit, Exit::Aborted);
    assert!(
        o.reasons.iter().any(|r| r.contains("stopped")),
        "{:?}",
        o.reasons
    );
    assert_eq!(actions(&o), ["stop"]);
    let r = &o.report;
    assert!(r.aborted.as_deref().unwrap_or("").contains("stopped"));
    // Only what was due before the stop is the target.
    assert!(
        r.summary.shortfall_events < 200,
        "{}",
        r.summary.shortfall_events
    );
    let v = r.verification.as_ref().unwrap();
    assert_eq!(v.distinct, r.summary.events_accepted);
    assert!(control.pause().is_err(), "a finished run cannot be steered");
}

fn config_eps(eps: f64, stop: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nseed: 9\ntarget: {{ url: builtin, batch: {{ max_events: 50 }} }}\nsource: {{ id: linux.syslog }}\nworkload: {{ eps: {eps}, stop: {{ {stop} }} }}\n"
    )
}

#[test]
fn a_rate_lowered_to_almost_nothing_still_runs_its_length_and_can_rise_again() {
    // Issue 33 case 4: `{"eps":0.01}` at 1.5 s of a 12 s run ended it at 1.54 s with PASS.
    let run = run_of(&config(500, "after: 4s"));
    let control = run.control();
    let started = Instant::now();
    let h = run.start(Vec::new()).unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    control.set_rate(Rate::Eps(0.01)).unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    control.set_rate(Rate::Eps(1000.0)).unwrap();
    let o = h.wait().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(3900),
        "the run ended after {:?} of its 4 s",
        started.elapsed()
    );
    assert_eq!(o.exit, Exit::Ok, "{:?}", o.reasons);
    let r = &o.report;
    assert_eq!(actions(&o), ["rate", "rate"]);
    assert!(r.summary.window_s > 3.9, "window {}", r.summary.window_s);
    // ~1 s at 500, ~1 s at 0.01, ~2 s at 1000: the rise after the low is sent too.
    let (t1, t2) = (r.control[0].t_s, r.control[1].t_s);
    let want = 500.0 * t1 + 0.01 * (t2 - t1) + 1000.0 * (4.0 - t2);
    let sent = r.summary.events_sent as f64;
    assert!((sent - want).abs() <= 2.0, "sent {sent}, schedule {want}");
    assert_eq!(r.summary.shortfall_events, 0);
    assert_eq!(
        r.verification.as_ref().unwrap().distinct,
        r.summary.events_sent
    );
}

#[test]
fn a_rate_too_low_for_any_event_is_still_a_run_of_its_length() {
    // Issue 33 case 4: `--eps 0.05 --duration 12s` ended after 20 ms.
    let run = run_of(&config_eps(0.05, "after: 3s"));
    let started = Instant::now();
    let o = run.start(Vec::new()).unwrap().wait().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(2900),
        "the run ended after {:?} of its 3 s",
        started.elapsed()
    );
    let r = &o.report;
    assert!(r.summary.window_s > 2.9, "window {}", r.summary.window_s);
    assert_eq!(r.summary.events_sent, 0, "0.15 events due: none whole");
    // Nothing was due, nothing accepted: the default `min_events_accepted` fails it.
    assert_eq!(o.exit, Exit::SloBreach, "{:?}", o.reasons);
}

#[test]
fn a_low_rate_dealt_over_workers_sends_every_whole_event_due() {
    // 0.5 eps over 3 s is 1.5 events: one is due, whichever of the two workers sends it.
    let store = Store::new("/nonexistent/ingestbench-test-secrets".into());
    let catalog = Catalog::discover(None).unwrap();
    let c = run::load_text(&config_eps(0.5, "after: 3s"), "test.yaml", &store, &catalog).unwrap();
    let ov = Overrides {
        threads: Some(2),
        workers: Some(2),
        ..Overrides::default()
    };
    let run = Run::new(run::plan(c.config, &ov, &catalog, &store).unwrap());
    let o = run.start(Vec::new()).unwrap().wait().unwrap();
    assert_eq!(o.exit, Exit::Ok, "{:?}", o.reasons);
    let r = &o.report;
    assert_eq!(r.summary.events_sent, 1);
    assert_eq!(r.loss.scheduled, 1);
    assert_eq!(r.summary.shortfall_events, 0);
    // No second sent more than its target, counted in whole events as they are sent.
    for row in &r.timeline {
        assert!(
            row.events_sent as f64 <= row.target_eps,
            "second {}: {} sent at {}",
            row.t,
            row.events_sent,
            row.target_eps
        );
    }
}

#[test]
fn a_rate_of_zero_is_refused_and_named_a_pause() {
    let run = run_of(&config(100, "after: 2s"));
    let control = run.control();
    let h = run.start(Vec::new()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let e = control.set_rate(Rate::Eps(0.0)).unwrap_err().to_string();
    assert!(e.contains("pause"), "{e}");
    assert!(control.set_rate(Rate::Eps(f64::NAN)).is_err());
    assert!(control.set_rate(Rate::Eps(-1.0)).is_err());
    let o = h.wait().unwrap();
    assert_eq!(o.exit, Exit::Ok, "{:?}", o.reasons);
    assert!(o.report.control.is_empty());
}
