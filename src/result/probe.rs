//! The persisted probe result (`schema_version` 1). Field names carry their units: `_iops`,
//! `_mb_s` (10^6 bytes per second), `_us` (microseconds), `_s`, `_bytes`.

use serde::{Deserialize, Serialize};

use crate::host::HostFacts;
use crate::spec::probe::{ProbeSpec, Profile};

pub const SCHEMA_VERSION: u32 = 1;

/// What a probe measured on one host. Written after every step; `complete` is false until the
/// last step is done (an interrupted probe leaves a partial result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    pub schema_version: u32,
    pub env: String,
    pub complete: bool,
    pub started_at: String,
    pub started_unix_s: u64,
    pub finished_at: Option<String>,
    pub host: HostFacts,
    /// The directory whose filesystem was measured.
    pub dir: String,
    pub fio_version: String,
    /// Whether fio used O_DIRECT (false when the filesystem refused it).
    pub direct_io: bool,
    /// Headline figures, one per column of the infrastructure table.
    pub summary: Summary,
    pub cpu: Option<CpuFigures>,
    pub profiles: Vec<ProfileFigures>,
    /// Anything that qualifies the figures (fallbacks, buffered I/O, …).
    pub notes: Vec<String>,
    pub spec: ProbeSpec,
}

/// The headline figures. Each disk figure comes from one named profile (see docs/probe.md);
/// null when that profile did not run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// CPU events/s at all cores; compare only results with the same `cpu_source`.
    pub cpu_events_s: Option<f64>,
    pub cpu_source: Option<CpuSource>,
    /// 4 KiB random-read IOPS (profile `rand_read_4k`).
    pub disk_iops: Option<f64>,
    /// 64 KiB sequential-write throughput (profile `seq_write_64k`).
    pub disk_mb_s: Option<f64>,
    /// p99 of 4 KiB random reads under compaction (profile `lcs`, else `stcs`).
    pub disk_read_p99_us: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuSource {
    Sysbench,
    Builtin,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuFigures {
    pub source: CpuSource,
    pub tool_version: String,
    /// Threads of the all-cores run.
    pub threads: usize,
    pub duration_s: f64,
    pub events_s_1_thread: f64,
    pub events_s_all_threads: f64,
}

/// The figures of one fio profile. Totals add every job of the profile (queries and
/// compaction); latencies are those of the profile's query job (`latency_job`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileFigures {
    pub name: Profile,
    pub description: String,
    pub runtime_s: u64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mb_s: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub latency_job: String,
    pub read_lat_mean_us: Option<f64>,
    pub read_p50_us: Option<f64>,
    pub read_p99_us: Option<f64>,
    pub write_lat_mean_us: Option<f64>,
    pub write_p50_us: Option<f64>,
    pub write_p99_us: Option<f64>,
    /// Latency of the fdatasync calls (commit log only).
    pub sync_p50_us: Option<f64>,
    pub sync_p99_us: Option<f64>,
    /// The fio job file that produced these figures.
    pub job_file: String,
}

impl ProbeResult {
    pub fn profile(&self, p: Profile) -> Option<&ProfileFigures> {
        self.profiles.iter().find(|f| f.name == p)
    }

    /// Recomputes [`Summary`] from the CPU figures and profiles measured so far.
    pub fn summarise(&mut self) {
        let p99 = self
            .profile(Profile::Lcs)
            .or_else(|| self.profile(Profile::Stcs))
            .and_then(|f| f.read_p99_us);
        self.summary = Summary {
            cpu_events_s: self.cpu.as_ref().map(|c| c.events_s_all_threads),
            cpu_source: self.cpu.as_ref().map(|c| c.source),
            disk_iops: self.profile(Profile::RandRead4k).map(|f| f.read_iops),
            disk_mb_s: self.profile(Profile::SeqWrite64k).map(|f| f.write_mb_s),
            disk_read_p99_us: p99,
        };
    }
}
