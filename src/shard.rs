//! Sharding a batch across machines: shard I of N takes the tasks whose id hashes to
//! I (a stable FNV-1a hash, the same on every machine and version), so N machines
//! together run every task exactly once.

use std::fmt;

use crate::task::TaskId;

/// One shard of N (`index` is 0-based; shown 1-based as `I/N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Shard {
    /// 0-based index.
    pub(crate) index: u32,
    /// Number of shards.
    pub(crate) count: u32,
}

/// A shard that cannot be taken as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShardError {
    /// `--shard` is not `I/N` with 1 <= I <= N.
    #[error("--shard {0:?}: write I/N with 1 <= I <= N, e.g. 2/4")]
    Syntax(String),
    /// `--shards N` and no scheduler's index in the environment.
    #[error(
        "--shards {0}: set --shard I/N, or run where JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm) is set"
    )]
    NoIndex(u32),
    /// The scheduler's variable is not a number.
    #[error("{name}={value:?} is not a shard index")]
    NotAnIndex {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// The scheduler's index is past the shards.
    #[error(
        "{name}={index} is not a shard of --shards {count} (indexes run from 0 to {})",
        count.saturating_sub(1)
    )]
    OutOfRange {
        /// The variable.
        name: &'static str,
        /// Its index.
        index: u32,
        /// The shards.
        count: u32,
    },
}

impl Shard {
    /// `I/N` with I counted from 1.
    pub(crate) fn parse(text: &str) -> Result<Self, ShardError> {
        let err = || ShardError::Syntax(text.to_string());
        let (i, n) = text.trim().split_once('/').ok_or_else(err)?;
        let (i, n): (u32, u32) = (
            i.trim().parse().map_err(|_| err())?,
            n.trim().parse().map_err(|_| err())?,
        );
        if n == 0 || i == 0 || i > n {
            return Err(err());
        }
        Ok(Self {
            index: i - 1,
            count: n,
        })
    }

    /// The shard a scheduler gives this machine: `JOB_COMPLETION_INDEX` (Kubernetes
    /// Indexed Job) or `SLURM_ARRAY_TASK_ID`, both counted from 0, out of `count`.
    pub(crate) fn from_env(
        count: u32,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ShardError> {
        let found = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"]
            .iter()
            .find_map(|name| var(name).map(|v| (*name, v)));
        let Some((name, value)) = found else {
            return Err(ShardError::NoIndex(count));
        };
        let index: u32 = value
            .trim()
            .parse()
            .map_err(|_| ShardError::NotAnIndex { name, value })?;
        if count == 0 || index >= count {
            return Err(ShardError::OutOfRange { name, index, count });
        }
        Ok(Self { index, count })
    }

    /// The shard of `count` that `id` belongs to (none when `count` is 0).
    pub(crate) fn of(id: &TaskId, count: u32) -> Option<Self> {
        let hash = crate::hash::fnv1a64(id.as_str().as_bytes());
        let index = hash.checked_rem(u64::from(count))?;
        Some(Self {
            index: u32::try_from(index).ok()?,
            count,
        })
    }

    /// True when `id` belongs to this shard.
    pub(crate) fn contains(&self, id: &TaskId) -> bool {
        Self::of(id, self.count) == Some(*self)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_lands_in_exactly_one_shard() {
        let ids: Vec<TaskId> = (0..500)
            .map(|i| TaskId::parse(&format!("group{}/task_{i}", i % 7)).unwrap())
            .collect();
        for n in 1..=7 {
            let shards: Vec<Shard> = (1..=n)
                .map(|i| Shard::parse(&format!("{i}/{n}")).unwrap())
                .collect();
            for id in &ids {
                assert_eq!(
                    shards.iter().filter(|s| s.contains(id)).count(),
                    1,
                    "{id} in {n} shards"
                );
            }
            if n > 1 {
                // Not all in one shard: the hash spreads.
                assert!(
                    shards.iter().all(|s| ids.iter().any(|id| s.contains(id))),
                    "an empty shard of {n}"
                );
            }
        }
    }

    #[test]
    fn parses_and_reads_the_environment() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 1, count: 4 });
        assert_eq!(Shard::parse("2/4").unwrap().to_string(), "2/4");
        for bad in ["0/4", "5/4", "x/2", "3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let k8s = |name: &str| (name == "JOB_COMPLETION_INDEX").then(|| "3".to_string());
        assert_eq!(
            Shard::from_env(4, k8s).unwrap(),
            Shard { index: 3, count: 4 }
        );
        let slurm = |name: &str| (name == "SLURM_ARRAY_TASK_ID").then(|| "4".to_string());
        assert!(
            Shard::from_env(4, slurm)
                .unwrap_err()
                .to_string()
                .contains("is not a shard of --shards 4")
        );
        assert!(
            Shard::from_env(4, |_| None)
                .unwrap_err()
                .to_string()
                .contains("JOB_COMPLETION_INDEX")
        );
    }
}
