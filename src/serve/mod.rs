//! Serving a running load test over HTTP (behind `front`, the one HTTP/1.1 front of every
//! page this binary serves), reading only the snapshots the
//! coordinator publishes and steering only through `run::Control`: `metrics` is the
//! Prometheus `/metrics` endpoint, `status` the status page, `panel` the control panel of
//! `ingestbench serve` (which starts runs itself); `guard` holds the security rules they all
//! obey, `files` the panel's directories, and `fuzz` answers requests given as bytes through
//! the status page's and the panel's handlers with no server (fuzz targets). `Live` starts
//! what a run's `ServePlan` asks for before the run starts (so a port that is taken fails the
//! run at once) and stops it after the run, lingering if asked so the last scrape sees the
//! final figures.

pub mod files;
pub mod front;
pub mod fuzz;
pub mod guard;
pub mod metrics;
pub mod panel;
pub mod status;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::run::{Control, ServePlan, SetupError, SnapshotCell};

/// The servers of one run.
pub struct Live {
    status: Option<status::StatusServer>,
    metrics: Option<metrics::MetricsServer>,
    linger: Duration,
}

impl Live {
    pub fn start(
        plan: &ServePlan,
        snapshots: Arc<SnapshotCell>,
        control: Control,
    ) -> Result<Live, SetupError> {
        let status = match &plan.status {
            Some(sp) => Some(
                status::StatusServer::start(
                    status::StatusOptions {
                        listen: sp.listen,
                        allow_remote: sp.allow_remote,
                        token: sp.token.clone(),
                    },
                    snapshots.clone(),
                    control,
                )
                .map_err(|e| SetupError::Io(format!("status page: {e}")))?,
            ),
            None => None,
        };
        let metrics = match &plan.metrics {
            Some(mp) => Some(
                metrics::MetricsServer::start(
                    metrics::MetricsOptions {
                        listen: mp.listen,
                        allow_remote: mp.allow_remote,
                        token: mp.token.clone(),
                    },
                    snapshots.clone(),
                )
                .map_err(|e| SetupError::Io(format!("metrics: {e}")))?,
            ),
            None => None,
        };
        Ok(Live {
            status,
            metrics,
            linger: plan.linger,
        })
    }

    /// What is served where, for a person: `("metrics", "http://127.0.0.1:9464/metrics")`.
    pub fn urls(&self) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        if let Some(s) = &self.status {
            v.push(("status page", s.url()));
        }
        if let Some(m) = &self.metrics {
            v.push(("metrics", format!("http://{}/metrics", m.addr())));
        }
        v
    }

    /// How long `finish` will keep serving, when it will.
    pub fn lingering(&self) -> Option<Duration> {
        let serving = self.metrics.is_some() || self.status.is_some();
        (serving && !self.linger.is_zero()).then_some(self.linger)
    }

    /// Keeps serving for the linger time (Ctrl-C or SIGTERM cut it short), then stops every
    /// server.
    pub fn finish(self) {
        if let Some(l) = self.lingering() {
            until_signal(Some(l));
        }
        if let Some(m) = self.metrics {
            m.shutdown();
        }
        if let Some(s) = self.status {
            s.shutdown();
        }
    }
}

/// Sleeps until SIGINT or SIGTERM, or for `d` at most when given.
pub fn until_signal(d: Option<Duration>) {
    let flag = Arc::new(AtomicBool::new(false));
    let ids: Vec<_> = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
        .into_iter()
        .filter_map(|sig| signal_hook::flag::register(sig, flag.clone()).ok())
        .collect();
    let until = d.and_then(|d| Instant::now().checked_add(d));
    let left = || {
        until.map_or(Duration::MAX, |u| {
            u.saturating_duration_since(Instant::now())
        })
    };
    while !left().is_zero() && !flag.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50).min(left()));
    }
    for id in ids {
        signal_hook::low_level::unregister(id);
    }
}
