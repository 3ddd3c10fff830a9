//! The report's `data_rate`: a run asked for in bytes (`workload.rate`, `--rate`), stated in
//! both units — the data rate asked (as written, per second in MB and per day in GB) and the
//! events per second it came to — with the mean event size that converted one into the
//! other, how it was framed and how many events were sampled; and its line in the text report.

use serde::Serialize;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct DataRate {
    /// As asked, e.g. `20MB/s`, `500GB/day` (decimal units: MB = 10^6 bytes).
    pub asked: String,
    pub bytes_per_s: f64,
    pub mb_per_s: f64,
    pub gb_per_day: f64,
    /// The steady target it came to: `bytes_per_s / mean_event_bytes`.
    pub target_eps: f64,
    /// Bytes per event as framed for the adapter (before compression, request heads not
    /// counted): the divisor.
    pub mean_event_bytes: f64,
    /// Bytes per event as rendered, before framing.
    pub raw_event_bytes: f64,
    /// Events of the run's source rendered with the run's seed for the means.
    pub sample_events: usize,
    /// What the framed size counts: `lphc JSON array`, `HEC event envelopes`, `HEC raw
    /// lines`, `plain HTTP bodies`, `syslog octet-counting`, `syslog lf`, `syslog datagrams`
    /// (a mix framed more than one way lists each).
    pub framing: String,
    /// A mix of sources: each one's share and mean sizes; `mean_event_bytes` is their
    /// share-weighted mean. Absent for one source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceRate>,
}

/// One source of a mix in `data_rate.sources`.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SourceRate {
    pub source: String,
    pub share: f64,
    pub mean_event_bytes: f64,
    pub raw_event_bytes: f64,
}

/// `data     asked 20MB/s (20.00 MB/s, 1728.0 GB/day) = 26838 eps at 745.2 bytes per event …`,
/// and for a mix the sources' means it was weighted from.
pub fn text(o: &mut String, d: &DataRate) {
    let whose = match d.sources.len() {
        0 => "the mean of".to_string(),
        n => format!("the share-weighted mean of {n} sources,"),
    };
    let _ = writeln!(
        o,
        "data     asked {} ({:.2} MB/s, {:.1} GB/day) = {:.0} eps at {:.1} bytes per event as framed ({}; {:.1} as rendered), {whose} {} events of this run's source{}",
        d.asked,
        d.mb_per_s,
        d.gb_per_day,
        d.target_eps,
        d.mean_event_bytes,
        d.framing,
        d.raw_event_bytes,
        d.sample_events,
        if d.sources.is_empty() { "" } else { "s" }
    );
    for s in &d.sources {
        let _ = writeln!(
            o,
            "           {} {:.1} % at {:.1} bytes per event as framed ({:.1} as rendered)",
            s.source,
            s.share * 100.0,
            s.mean_event_bytes,
            s.raw_event_bytes
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_states_both_units_and_the_mean() {
        let mut o = String::new();
        text(
            &mut o,
            &DataRate {
                asked: "20MB/s".into(),
                bytes_per_s: 20e6,
                mb_per_s: 20.0,
                gb_per_day: 1728.0,
                target_eps: 26_838.4,
                mean_event_bytes: 745.2,
                raw_event_bytes: 744.2,
                sample_events: 4000,
                framing: "lphc JSON array".into(),
                sources: Vec::new(),
            },
        );
        assert_eq!(
            o,
            "data     asked 20MB/s (20.00 MB/s, 1728.0 GB/day) = 26838 eps at 745.2 bytes per event as framed (lphc JSON array; 744.2 as rendered), the mean of 4000 events of this run's source\n"
        );
    }

    #[test]
    fn a_mix_states_each_sources_share_and_mean() {
        let mut o = String::new();
        let source = |id: &str, share, mean| SourceRate {
            source: id.into(),
            share,
            mean_event_bytes: mean,
            raw_event_bytes: mean - 1.0,
        };
        text(
            &mut o,
            &DataRate {
                asked: "1MB/s".into(),
                bytes_per_s: 1e6,
                mb_per_s: 1.0,
                gb_per_day: 86.4,
                target_eps: 1000.0,
                mean_event_bytes: 1000.0,
                raw_event_bytes: 999.0,
                sample_events: 8000,
                framing: "HEC event envelopes".into(),
                sources: vec![
                    source("windows.security", 0.75, 1200.0),
                    source("identity.okta", 0.25, 400.0),
                ],
            },
        );
        let lines: Vec<&str> = o.lines().collect();
        assert!(
            lines[0].ends_with(
                "(HEC event envelopes; 999.0 as rendered), the share-weighted mean of 2 sources, 8000 events of this run's sources"
            ),
            "{o}"
        );
        assert_eq!(
            &lines[1..],
            [
                "           windows.security 75.0 % at 1200.0 bytes per event as framed (1199.0 as rendered)",
                "           identity.okta 25.0 % at 400.0 bytes per event as framed (399.0 as rendered)",
            ]
        );
    }
}
