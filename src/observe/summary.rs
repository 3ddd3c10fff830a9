//! Summaries of the per-interval values (pure): nearest-rank percentiles, a process's or
//! cgroup's mean / p95 / max cores, and the totals over a whole watch.

use super::{CgroupSummary, ProcSummary, Second, TotalSummary};

/// Whether an interval of `interval_s` counts for p95 and max: at least half the nominal.
pub fn is_full(interval_s: f64, nominal_s: f64) -> bool {
    interval_s >= nominal_s * 0.5
}

/// The nearest-rank percentile `p` (0..=100) of `values` (any order); 0 when empty. NaNs sort
/// last and so only show up when everything is NaN.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let rank = ((p.clamp(0.0, 100.0) / 100.0) * n as f64).ceil() as usize;
    v.get(rank.clamp(1, n) - 1).copied().unwrap_or(0.0)
}

/// (mean, p95, max) cores: the mean is `cpu_s ÷ watched_s` (time-weighted), p95 and max are
/// over the full intervals' values.
pub fn core_stats(cpu_s: f64, watched_s: f64, full: &[f64]) -> (f64, f64, f64) {
    let mean = if watched_s > 0.0 {
        cpu_s / watched_s
    } else {
        0.0
    };
    let max = full.iter().copied().fold(0.0, f64::max);
    (mean, percentile(full, 95.0), max)
}

/// The totals over every interval: CPU and mean from the last and summed intervals, p95 and
/// max over the full ones, the highest summed RSS, and the highest memory of any one process
/// or cgroup (their peaks included).
pub fn total_summary(
    seconds: &[Second],
    nominal_s: f64,
    procs: &[ProcSummary],
    cgroups: &[CgroupSummary],
) -> TotalSummary {
    let cpu_s = seconds.last().map_or(0.0, |s| s.total.cpu_s);
    let watched: f64 = seconds.iter().map(|s| s.interval_s).sum();
    let full: Vec<&Second> = seconds
        .iter()
        .filter(|s| is_full(s.interval_s, nominal_s))
        .collect();
    let cores: Vec<f64> = full.iter().map(|s| s.total.cores).collect();
    let (cores_mean, cores_p95, cores_max) = core_stats(cpu_s, watched, &cores);
    let busiest_cores_max = full
        .iter()
        .map(|s| s.total.busiest_cores)
        .fold(0.0, f64::max);
    let rss_peak_bytes = seconds.iter().map(|s| s.total.rss_bytes).max().unwrap_or(0);
    let most_memory_bytes = seconds
        .iter()
        .map(|s| s.total.most_memory_bytes)
        .chain(procs.iter().map(|p| p.rss_peak_bytes))
        .chain(cgroups.iter().map(|c| c.memory_peak_bytes))
        .max()
        .unwrap_or(0);
    TotalSummary {
        cpu_s,
        cores_mean,
        cores_p95,
        cores_max,
        busiest_cores_max,
        rss_peak_bytes,
        most_memory_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Totals;
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 95.0), 95.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 50.0), 2.0);
        assert_eq!(percentile(&[0.5], 95.0), 0.5);
        assert_eq!(percentile(&[], 95.0), 0.0);
        // 20 values: rank ceil(0.95 × 20) = 19.
        let v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(percentile(&v, 95.0), 19.0);
    }

    #[test]
    fn core_stats_mean_is_time_weighted() {
        let (mean, p95, max) = core_stats(3.0, 4.0, &[0.5, 1.0, 1.0]);
        assert_eq!(mean, 0.75);
        assert_eq!(p95, 1.0);
        assert_eq!(max, 1.0);
        assert_eq!(core_stats(0.0, 0.0, &[]), (0.0, 0.0, 0.0));
    }

    fn sec(t: u32, interval_s: f64, cores: f64, cpu_s: f64, rss: u64) -> Second {
        Second {
            t,
            interval_s,
            total: Totals {
                cores,
                cpu_s,
                rss_bytes: rss,
                busiest_cores: cores / 2.0,
                most_memory_bytes: rss / 2,
            },
            ..Second::default()
        }
    }

    #[test]
    fn totals_skip_the_short_last_interval_for_p95_and_max() {
        let s = vec![
            sec(1, 1.0, 1.0, 1.0, 100),
            sec(2, 1.0, 2.0, 3.0, 300),
            sec(3, 0.3, 9.0, 5.7, 200),
        ];
        let procs = vec![ProcSummary {
            rss_peak_bytes: 1000,
            ..ProcSummary::default()
        }];
        let t = total_summary(&s, 1.0, &procs, &[]);
        assert_eq!(t.cpu_s, 5.7);
        assert!((t.cores_mean - 5.7 / 2.3).abs() < 1e-12);
        assert_eq!(t.cores_max, 2.0);
        assert_eq!(t.cores_p95, 2.0);
        assert_eq!(t.busiest_cores_max, 1.0);
        assert_eq!(t.rss_peak_bytes, 300);
        assert_eq!(t.most_memory_bytes, 1000);
        let empty = total_summary(&[], 1.0, &[], &[]);
        assert_eq!(empty.cpu_s, 0.0);
        assert!(is_full(0.5, 1.0) && !is_full(0.49, 1.0));
    }
}
