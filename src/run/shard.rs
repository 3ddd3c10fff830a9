//! Shards: one process's part of a run spread over N processes (`run --shard I/N`, or
//! Kubernetes' `JOB_COMPLETION_INDEX` with `--shards N` / `workload.shards`). A shard offers
//! 1/N of the profile at every instant (the rates are divided, not the duration; a total is
//! split with the remainder on the first shards), numbers its agents from `I × 1000` so no two
//! shards share an (agent, seq), draws its events from its own generator seed over the same
//! entity pools, and shares the run id with the others: `--run-id`, else one derived from
//! the config and seed (which, sharded, default to one derived from the config). Its report
//! carries what `report merge` needs and goes to a path with its index in it.

use serde::{Deserialize, Serialize};

use crate::run::error::SetupError;

/// Agent ids per shard: shard I's workers are agents `I × 1000 ..`; a shard has at most
/// 256 worker threads and a scenario lane, so the ranges never meet.
pub const AGENTS_PER_SHARD: u32 = 1000;

/// The most shards a run may have (agent ids stay well inside `u32`).
pub const MAX_SHARDS: u32 = 4096;

/// The environment variable Kubernetes sets in each pod of an Indexed Job.
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// Shard `index` (from 0, as `JOB_COMPLETION_INDEX` counts) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    pub fn new(index: u32, count: u32) -> Result<Shard, String> {
        if count == 0 || count > MAX_SHARDS {
            return Err(format!("{count} shards: between 1 and {MAX_SHARDS} shards"));
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count}: the index counts from 0 (as {INDEX_ENV} does), so it is at most {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// `I/N`, e.g. `0/3` (the first of three).
    pub fn parse(v: &str) -> Result<Shard, String> {
        let bad = || format!("{v:?}: expected I/N, e.g. 0/3 (shard I of N, counting from 0)");
        let (i, n) = v.split_once('/').ok_or_else(bad)?;
        let (i, n) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        Shard::new(i, n)
    }

    /// The shard this process is, from `--shard`, else the shard count (`--shards`, else
    /// `workload.shards`) with the index in `JOB_COMPLETION_INDEX` (`index_env`); none when
    /// neither is given. A count without an index, or an index that disagrees with a
    /// `--shard`, is an error.
    pub fn resolve(
        flag: Option<Shard>,
        count: Option<(u32, &str)>,
        index_env: Option<&str>,
    ) -> Result<Option<Shard>, SetupError> {
        let invalid = |m: String| SetupError::invalid(m);
        if let Some(s) = flag {
            if let Some((n, from)) = count.filter(|(n, _)| *n != s.count) {
                return Err(invalid(format!(
                    "--shard {}/{} disagrees with {from} ({n} shards)",
                    s.index, s.count
                )));
            }
            return Ok(Some(s));
        }
        let Some((n, from)) = count else {
            return Ok(None);
        };
        let Some(raw) = index_env else {
            return Err(invalid(format!(
                "{from} is {n}: give --shard I/{n}, or set {INDEX_ENV} (a Kubernetes Indexed Job does)"
            )));
        };
        let index = raw.trim().parse::<u32>().map_err(|_| {
            invalid(format!(
                "{INDEX_ENV}={raw:?}: expected a whole number from 0"
            ))
        })?;
        Shard::new(index, n)
            .map(Some)
            .map_err(|e| invalid(format!("{INDEX_ENV} with {from}: {e}")))
    }

    /// The first agent id of this shard.
    pub fn agent_base(self) -> u32 {
        self.index * AGENTS_PER_SHARD
    }

    /// This shard's part of `total` events: `total / N`, one more on the first `total % N`.
    pub fn part(self, total: u64) -> u64 {
        let n = u64::from(self.count);
        total / n + u64::from(u64::from(self.index) < total % n)
    }

    /// This shard's part of the run: `1/N`.
    pub fn share(self) -> f64 {
        1.0 / f64::from(self.count)
    }

    /// This shard's part of a rate.
    pub fn rate(self, eps: f64) -> f64 {
        eps * self.share()
    }

    /// The seed of this shard's event generators: the run's for shard 0, another for each
    /// further shard (the entity pools stay the run seed's).
    pub fn generator_seed(self, seed: u64) -> u64 {
        seed ^ u64::from(self.index).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// `path` with the shard's index before its extension: `out/report.json` →
    /// `out/report.shard-1.json` (a path without one gets `.shard-1` appended).
    pub fn path(self, path: &str) -> String {
        let p = std::path::Path::new(path);
        let tag = format!("shard-{}", self.index);
        match (p.file_stem(), p.extension()) {
            (Some(stem), Some(ext)) => p
                .with_file_name(format!(
                    "{}.{tag}.{}",
                    stem.to_string_lossy(),
                    ext.to_string_lossy()
                ))
                .to_string_lossy()
                .into_owned(),
            _ => format!("{path}.{tag}"),
        }
    }
}

/// `--run-id`: the characters an accounting tag carries, 1 to 64 of them.
pub fn check_run_id(id: &str) -> Result<(), SetupError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b':'));
    if ok {
        Ok(())
    } else {
        Err(SetupError::invalid(format!(
            "--run-id {id:?}: 1 to 64 of A-Z a-z 0-9 . _ : -"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_index_of_count() {
        assert_eq!(Shard::parse("0/3"), Ok(Shard { index: 0, count: 3 }));
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["3/3", "1", "a/3", "1/0", "-1/3", "1/5000"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert!(Shard::parse("3/3").unwrap_err().contains("counts from 0"));
    }

    #[test]
    fn index_from_the_job_with_a_count() {
        let from = (3, "--shards");
        assert_eq!(
            Shard::resolve(None, Some(from), Some("2")).unwrap(),
            Some(Shard { index: 2, count: 3 })
        );
        assert_eq!(Shard::resolve(None, None, Some("2")).unwrap(), None);
        let no_index = Shard::resolve(None, Some(from), None).unwrap_err();
        assert!(no_index.to_string().contains(INDEX_ENV), "{no_index}");
        assert!(Shard::resolve(None, Some(from), Some("3")).is_err());
        assert!(Shard::resolve(None, Some(from), Some("x")).is_err());
        let flag = Shard::parse("1/2").ok();
        assert!(Shard::resolve(flag, Some(from), None).is_err(), "2 vs 3");
        assert_eq!(Shard::resolve(flag, None, Some("0")).unwrap(), flag);
    }

    #[test]
    fn parts_add_up_to_the_whole() {
        for (total, n) in [(100u64, 3u32), (2, 3), (0, 4), (30_000, 3), (7, 1)] {
            let sum: u64 = (0..n)
                .map(|i| Shard { index: i, count: n }.part(total))
                .sum();
            assert_eq!(sum, total, "{total} over {n}");
        }
        assert_eq!(Shard { index: 0, count: 3 }.part(100), 34);
        assert_eq!(Shard { index: 2, count: 3 }.part(100), 33);
    }

    #[test]
    fn agents_and_seeds_differ_by_shard() {
        let s = |i| Shard { index: i, count: 3 };
        assert_eq!(s(0).agent_base(), 0);
        assert_eq!(s(2).agent_base(), 2000);
        assert_eq!(s(0).generator_seed(7), 7);
        assert_ne!(s(1).generator_seed(7), s(2).generator_seed(7));
    }

    #[test]
    fn report_paths_carry_the_index() {
        let s = Shard { index: 1, count: 3 };
        assert_eq!(s.path("out/report.json"), "out/report.shard-1.json");
        assert_eq!(s.path("report"), "report.shard-1");
        assert!(check_run_id("job-7:a.b_c").is_ok());
        assert!(check_run_id("bad id").is_err());
        assert!(check_run_id("").is_err());
    }
}
