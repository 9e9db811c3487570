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
    /// The directory whose filesystem was measured (on the remote host with `spec.remote`).
    pub dir: String,
    /// The filesystem holding `dir`, as `df` shows it; none when `df` could not tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskFacts>,
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

/// The filesystem a probe measured: `df -P -T -k DIR`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskFacts {
    /// The device or source (`/dev/nvme0n1p1`, `overlay`, `tmpfs`).
    pub device: String,
    pub fs_type: String,
    pub size_bytes: u64,
    pub mount: String,
}

impl DiskFacts {
    /// The last line of `df -P -T -k` output (a mount point may hold spaces).
    pub fn parse_df(output: &str) -> Option<DiskFacts> {
        let line = output.lines().rev().find(|l| !l.trim().is_empty())?;
        let mut words = line.split_whitespace();
        let device = words.next()?.to_string();
        let fs_type = words.next()?.to_string();
        let size_kib: u64 = words.next()?.parse().ok()?;
        // Used, available, capacity; the rest is the mount point.
        let rest: Vec<&str> = words.skip(3).collect();
        (!rest.is_empty()).then(|| DiskFacts {
            device,
            fs_type,
            size_bytes: size_kib * 1024,
            mount: rest.join(" "),
        })
    }

    /// `/dev/vda (ext4, 251.0 GiB, mounted on /)`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}, {:.1} GiB, mounted on {})",
            self.device,
            self.fs_type,
            self.size_bytes as f64 / (1u64 << 30) as f64,
            self.mount
        )
    }
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
    /// The host measured, as the report names it: its hostname, and how it was reached when
    /// it was not the machine cqlbench ran on (`db1 (ssh root@10.0.0.5:22)`).
    pub fn host_label(&self) -> String {
        let name = match self.host.hostname.is_empty() {
            true => "unknown host",
            false => self.host.hostname.as_str(),
        };
        match &self.spec.remote {
            Some(t) => format!("{name} (ssh {})", t.dest),
            None => name.to_string(),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_lines_parse_with_spaces_in_the_mount_point() {
        let out = "Filesystem     Type 1024-blocks     Used Available Capacity Mounted on\n\
                   /dev/vda       ext4   263174212 60000000 190000000      25% /mnt/my disk\n";
        let d = DiskFacts::parse_df(out).unwrap();
        assert_eq!(d.device, "/dev/vda");
        assert_eq!(d.fs_type, "ext4");
        assert_eq!(d.size_bytes, 263174212 * 1024);
        assert_eq!(d.mount, "/mnt/my disk");
        assert_eq!(
            d.describe(),
            "/dev/vda (ext4, 251.0 GiB, mounted on /mnt/my disk)"
        );
        assert_eq!(DiskFacts::parse_df("Filesystem Type\n"), None);
        assert_eq!(DiskFacts::parse_df(""), None);
    }
}
