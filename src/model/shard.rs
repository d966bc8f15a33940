//! Shards: a deterministic share of a scan's work, so that N runs that never talk to each
//! other (a Kubernetes Indexed Job's pods, a CI matrix's jobs) together scan every blob once.
//!
//! A unit of work is owned by the shard its key hashes to: a git blob by its id, an image
//! layer by its digest, an image config by its digest, a file by its path as reported. The
//! hash is SHA-256, so the split is the same on every machine and even across shards.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Shard `index` of `total` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub total: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error("--shard {0:?}: expected K/N (e.g. 0/4), auto/N or auto")]
    Syntax(String),
    #[error("--shard: index {index} is not below the shard count {total} (shards are 0..{total})")]
    Range { index: u64, total: u64 },
    #[error(
        "--shard auto: no shard index in the environment (set one of {}; a GitHub Actions \
         matrix passes its index as LEAKHOUND_SHARD_INDEX: ${{{{ strategy.job-index }}}})",
        INDEX_VARS.iter().map(|(v, _)| *v).collect::<Vec<_>>().join(", ")
    )]
    NoIndex,
    #[error("--shard auto: no shard count given and none in the environment (use auto/N)")]
    NoTotal,
    #[error("--shard auto: {var}={value:?} is not a shard index")]
    BadVar { var: &'static str, value: String },
    #[error("--shard auto/{given}: the scheduler says there are {found} shards ({var})")]
    Mismatch {
        given: u64,
        found: u64,
        var: &'static str,
    },
}

/// Where schedulers put a job's index: (variable, whether it counts from 1).
const INDEX_VARS: &[(&str, bool)] = &[
    ("LEAKHOUND_SHARD_INDEX", false),
    // A Kubernetes Indexed Job's pod.
    ("JOB_COMPLETION_INDEX", false),
    // GitLab CI `parallel: N`.
    ("CI_NODE_INDEX", true),
    ("CIRCLE_NODE_INDEX", false),
    ("BUILDKITE_PARALLEL_JOB", false),
];

/// Where schedulers put the number of jobs, beside the index variable of the same scheduler.
const TOTAL_VARS: &[(&str, &str)] = &[
    ("LEAKHOUND_SHARD_INDEX", "LEAKHOUND_SHARD_TOTAL"),
    ("CI_NODE_INDEX", "CI_NODE_TOTAL"),
    ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL"),
    ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT"),
];

impl Shard {
    /// The whole of the work: what a run without `--shard` does.
    pub const WHOLE: Shard = Shard { index: 0, total: 1 };

    pub fn new(index: u64, total: u64) -> Result<Shard, ShardError> {
        if total == 0 || index >= total {
            return Err(ShardError::Range { index, total });
        }
        Ok(Shard { index, total })
    }

    /// `K/N`, `auto/N` or `auto`, reading the scheduler's variables through `env`.
    pub fn parse(spec: &str, env: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(spec.to_string());
        let (k, n) = match spec.split_once('/') {
            Some((k, n)) => (
                k.trim(),
                Some(n.trim().parse::<u64>().map_err(|_| syntax())?),
            ),
            None if spec.trim() == "auto" => ("auto", None),
            None => return Err(syntax()),
        };
        if k != "auto" {
            let index = k.parse::<u64>().map_err(|_| syntax())?;
            return Shard::new(index, n.ok_or_else(syntax)?);
        }
        let (var, one_based, value) = INDEX_VARS
            .iter()
            .find_map(|&(v, one)| env(v).map(|x| (v, one, x)))
            .ok_or(ShardError::NoIndex)?;
        let number = |var: &'static str, value: &str| {
            value.trim().parse::<u64>().map_err(|_| ShardError::BadVar {
                var,
                value: value.to_string(),
            })
        };
        let mut index = number(var, &value)?;
        if one_based {
            index = index
                .checked_sub(1)
                .ok_or(ShardError::BadVar { var, value })?;
        }
        let scheduler_total = TOTAL_VARS
            .iter()
            .find(|(i, _)| *i == var)
            .and_then(|&(_, t)| env(t).map(|x| (t, x)));
        let total = match (n, scheduler_total) {
            (Some(n), Some((t, found))) => {
                let found = number(t, &found)?;
                if found != n {
                    return Err(ShardError::Mismatch {
                        given: n,
                        found,
                        var: t,
                    });
                }
                n
            }
            (Some(n), None) => n,
            (None, Some((t, found))) => number(t, &found)?,
            (None, None) => return Err(ShardError::NoTotal),
        };
        Shard::new(index, total)
    }

    /// Whether this shard owns the unit of work named `key`. Every key is owned by exactly
    /// one of the shards 0..total.
    pub fn owns(&self, key: &str) -> bool {
        self.total <= 1 || slot(key, self.total) == self.index
    }

    /// Whether this shard reports what belongs to the run as a whole rather than to one unit
    /// (entries ignore files excluded, a repository's own warnings): the first does.
    pub fn first(&self) -> bool {
        self.index == 0
    }

    pub fn is_whole(&self) -> bool {
        self.total <= 1
    }
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::WHOLE
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

/// The shard `key` belongs to, of `total`.
fn slot(key: &str, total: u64) -> u64 {
    let h = Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&h[..8]);
    u64::from_be_bytes(first) % total.max(1)
}

/// A layer's whiteouts: (path, opaque).
pub type Whiteouts = Vec<(String, bool)>;

/// What a shard's report carries beyond its findings, so that merging the shards' reports
/// can finish what only a run over every unit knows: whether a file in an image layer is
/// deleted by a later layer that another shard read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardNotes {
    pub index: u64,
    pub total: u64,
    /// Each image met: its layers' digests, bottom first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageLayers>,
    /// The whiteouts of every layer this shard read, by digest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub whiteouts: BTreeMap<String, Whiteouts>,
}

/// An image's layers, as a finding's provenance names the image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageLayers {
    pub image: String,
    pub manifest: String,
    pub layers: Vec<String>,
}

impl ShardNotes {
    pub fn new(shard: Shard) -> ShardNotes {
        ShardNotes {
            index: shard.index,
            total: shard.total,
            ..ShardNotes::default()
        }
    }
}

/// Is `path` deleted by one of `whiteouts` (paths, opaque flags) of a later layer?
pub fn whited_out(path: &str, whiteouts: &[(String, bool)]) -> bool {
    whiteouts.iter().any(|(w, opaque)| {
        let under = path.len() > w.len()
            && path.starts_with(w.as_str())
            && path.as_bytes()[w.len()] == b'/';
        under || (!opaque && path == w)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn every_key_has_exactly_one_owner_and_the_split_is_even() {
        for total in 1..=9u64 {
            let shards: Vec<Shard> = (0..total).map(|k| Shard::new(k, total).unwrap()).collect();
            let mut per = vec![0u64; total as usize];
            for i in 0..9000 {
                let key = format!("src/dir{}/file{i}.py", i % 37);
                let owners: Vec<&Shard> = shards.iter().filter(|s| s.owns(&key)).collect();
                assert_eq!(owners.len(), 1, "{key} in {total} shards: {owners:?}");
                per[owners[0].index as usize] += 1;
            }
            let even = 9000 / total;
            assert!(
                per.iter().all(|&n| n > even * 8 / 10 && n < even * 12 / 10),
                "{total} shards: {per:?}"
            );
        }
    }

    #[test]
    fn parses_fixed_and_scheduler_indices() {
        let none = env(&[]);
        assert_eq!(Shard::parse("2/5", &none), Ok(Shard { index: 2, total: 5 }));
        assert_eq!(
            Shard::parse("5/5", &none),
            Err(ShardError::Range { index: 5, total: 5 })
        );
        assert!(matches!(
            Shard::parse("x/5", &none),
            Err(ShardError::Syntax(_))
        ));
        assert!(matches!(
            Shard::parse("3", &none),
            Err(ShardError::Syntax(_))
        ));
        assert_eq!(Shard::parse("auto/4", &none), Err(ShardError::NoIndex));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert_eq!(
            Shard::parse("auto/4", &k8s),
            Ok(Shard { index: 3, total: 4 })
        );
        assert_eq!(Shard::parse("auto", &k8s), Err(ShardError::NoTotal));
        // GitLab counts from 1 and says how many there are.
        let gitlab = env(&[("CI_NODE_INDEX", "1"), ("CI_NODE_TOTAL", "3")]);
        assert_eq!(
            Shard::parse("auto", &gitlab),
            Ok(Shard { index: 0, total: 3 })
        );
        assert!(matches!(
            Shard::parse("auto/4", &gitlab),
            Err(ShardError::Mismatch {
                given: 4,
                found: 3,
                ..
            })
        ));
        let bad = env(&[("JOB_COMPLETION_INDEX", "two")]);
        assert!(matches!(
            Shard::parse("auto/4", &bad),
            Err(ShardError::BadVar { .. })
        ));
    }
}
