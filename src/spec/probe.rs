//! What a probe runs: the persisted spec (directory, environment label, profiles, timing).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One fio workload. The first three emulate Cassandra's I/O; the last three are reference
/// 004's file-level tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Leveled compaction: random 4 KiB reads under steady, throttled compaction.
    Lcs,
    /// Size-tiered compaction: random 4 KiB reads under bursts of large sequential writes.
    Stcs,
    /// Commit log: sequential 32 KiB writes with a flush every 8 writes.
    Commitlog,
    /// 64 KiB sequential writes.
    #[serde(rename = "seq_write_64k")]
    SeqWrite64k,
    /// 4 KiB random reads.
    #[serde(rename = "rand_read_4k")]
    RandRead4k,
    /// 4 KiB random reads through a memory mapping (as Cassandra reads SSTables).
    MmapRandRead,
}

impl Profile {
    pub const ALL: [Profile; 6] = [
        Profile::Lcs,
        Profile::Stcs,
        Profile::Commitlog,
        Profile::SeqWrite64k,
        Profile::RandRead4k,
        Profile::MmapRandRead,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Lcs => "lcs",
            Profile::Stcs => "stcs",
            Profile::Commitlog => "commitlog",
            Profile::SeqWrite64k => "seq_write_64k",
            Profile::RandRead4k => "rand_read_4k",
            Profile::MmapRandRead => "mmap_rand_read",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = crate::error::Invalid;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| {
                let names: Vec<_> = Profile::ALL.iter().map(|p| p.name()).collect();
                crate::invalid!("unknown profile '{s}' (accepted: {})", names.join(", "))
            })
    }
}

/// How long and how big: one set for `--quick`, one for the full probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// Measured time of each fio profile.
    pub runtime_s: u64,
    /// Warm-up before measuring, excluded from the figures.
    pub ramp_s: u64,
    /// Time of each sysbench (or built-in) CPU run.
    pub cpu_time_s: u64,
    /// Size of each data file fio lays out.
    pub file_size_mib: u64,
}

impl Timing {
    /// Under a minute for all six profiles and both CPU runs.
    pub const QUICK: Timing = Timing {
        runtime_s: 4,
        ramp_s: 1,
        cpu_time_s: 3,
        file_size_mib: 256,
    };
    /// Under ten minutes for all six profiles and both CPU runs.
    pub const FULL: Timing = Timing {
        runtime_s: 45,
        ramp_s: 5,
        cpu_time_s: 30,
        file_size_mib: 2048,
    };
}

/// A probe to run. Built by the CLI, persisted inside the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeSpec {
    /// Directory whose filesystem is measured; the scratch directory is created inside it.
    pub dir: PathBuf,
    /// Label of the environment (defaults to the hostname).
    pub env: String,
    pub quick: bool,
    pub timing: Timing,
    pub profiles: Vec<Profile>,
    /// Whether to measure the CPU.
    pub cpu: bool,
    pub fio_path: PathBuf,
    pub sysbench_path: PathBuf,
    /// Where to write the rendered fio job files, for running them by hand.
    pub write_jobs_dir: Option<PathBuf>,
    /// Where the result is written (atomically, after each step).
    pub out: PathBuf,
    /// Tags recorded in the result (`--tag`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Probe this host instead of the local one (`--ssh`): fio and sysbench run there, `dir`,
    /// `fio_path` and `sysbench_path` are its paths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<crate::spec::ssh::SshTarget>,
}

/// Checks an environment label: it names result files, so only `[A-Za-z0-9._-]`, 1–64 chars.
pub fn validate_env(env: &str) -> Result<(), crate::error::Invalid> {
    let ok = !env.is_empty()
        && env.len() <= 64
        && !env.starts_with('.')
        && env
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(crate::invalid!(
            "invalid environment name '{env}' (accepted: 1-64 characters from A-Z a-z 0-9 . _ -, not starting with '.')"
        ))
    }
}

/// A run's tag (`--tag`): the same characters as an environment name.
pub fn validate_tag(tag: &str) -> Result<(), crate::error::Invalid> {
    validate_env(tag).map_err(|_| {
        crate::invalid!(
            "invalid tag '{tag}' (accepted: 1-64 characters from A-Z a-z 0-9 . _ -, not starting with '.')"
        )
    })
}

/// [`validate_tag`] as a parser of a flag's value.
pub fn parse_tag(tag: &str) -> Result<String, crate::error::Invalid> {
    validate_tag(tag).map(|()| tag.to_string())
}

/// [`validate_env`] as a parser of a flag's value.
pub fn parse_env(env: &str) -> Result<String, crate::error::Invalid> {
    validate_env(env).map(|()| env.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_round_trip_and_reject_unknown() {
        for p in Profile::ALL {
            assert_eq!(p.name().parse::<Profile>().unwrap(), p);
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{p}\""));
        }
        let err = "leveled".parse::<Profile>().unwrap_err();
        assert!(err.contains("unknown profile 'leveled'"), "{err}");
        assert!(err.contains("lcs, stcs, commitlog"), "{err}");
    }

    #[test]
    fn env_labels() {
        assert!(validate_env("aws-r5.2xlarge_gp2").is_ok());
        for bad in ["", "a/b", "..", "has space", &"x".repeat(65)] {
            assert!(validate_env(bad).is_err(), "{bad:?} accepted");
        }
    }
}
