//! The persisted probe result (`schema_version` 1). Field names carry their units: `_iops`,
//! `_mb_s` (10^6 bytes per second), `_us` (microseconds), `_s`, `_bytes`.

use serde::{Deserialize, Serialize};

use super::fio_json::{DirFigures, FioReport};
use super::jobs;
use super::spec::{ProbeSpec, Profile};
use crate::host::HostFacts;

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

impl ProfileFigures {
    /// Folds a parsed fio report into the profile's figures.
    pub fn from_report(
        profile: Profile,
        runtime_s: u64,
        job_file: &str,
        report: &FioReport,
    ) -> Result<ProfileFigures, crate::error::Invalid> {
        let info = jobs::info(profile);
        let lat = report
            .job(info.latency_job)
            .ok_or_else(|| crate::invalid!("fio reported no job named {}", info.latency_job))?;
        let sum = |f: fn(&DirFigures) -> f64| -> f64 {
            report.jobs.iter().map(|j| f(&j.read) + f(&j.write)).sum()
        };
        let sum_dir = |read: bool, f: fn(&DirFigures) -> f64| -> f64 {
            report
                .jobs
                .iter()
                .map(|j| f(if read { &j.read } else { &j.write }))
                .sum()
        };
        Ok(ProfileFigures {
            name: profile,
            description: info.description.to_string(),
            runtime_s,
            iops: sum(|d| d.iops),
            read_iops: sum_dir(true, |d| d.iops),
            write_iops: sum_dir(false, |d| d.iops),
            mb_s: sum(|d| d.bytes_per_s) / 1e6,
            read_mb_s: sum_dir(true, |d| d.bytes_per_s) / 1e6,
            write_mb_s: sum_dir(false, |d| d.bytes_per_s) / 1e6,
            latency_job: info.latency_job.to_string(),
            read_lat_mean_us: lat.read.lat_mean_us,
            read_p50_us: lat.read.lat_p50_us,
            read_p99_us: lat.read.lat_p99_us,
            write_lat_mean_us: lat.write.lat_mean_us,
            write_p50_us: lat.write.lat_p50_us,
            write_p99_us: lat.write.lat_p99_us,
            sync_p50_us: lat.sync_p50_us,
            sync_p99_us: lat.sync_p99_us,
            job_file: job_file.to_string(),
        })
    }
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

/// `2026-11-22T02:30:05Z` for a Unix time in seconds (UTC, proleptic Gregorian calendar).
pub fn rfc3339_utc(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let rem = unix_s % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Compact form for file names: `20261122T023005Z`.
pub fn compact_utc(unix_s: u64) -> String {
    rfc3339_utc(unix_s).replace(['-', ':'], "")
}

/// Days since 1970-01-01 → (year, month, day), after Howard Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fio_json;

    #[test]
    fn formats_utc_timestamps() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_314_605), "2026-11-22T02:30:05Z");
        assert_eq!(compact_utc(1_795_314_605), "20261122T023005Z");
    }

    #[test]
    fn profile_totals_add_jobs_and_latency_comes_from_the_query_job() {
        let report = fio_json::parse(include_str!("testdata/fio-lcs.json")).unwrap();
        let f = ProfileFigures::from_report(Profile::Lcs, 4, "job", &report).unwrap();
        let reads = report.job("reads").unwrap();
        let compaction = report.job("compaction").unwrap();
        let want_read_iops = reads.read.iops + compaction.read.iops;
        assert!((f.read_iops - want_read_iops).abs() < 1e-9);
        assert!((f.iops - (want_read_iops + compaction.write.iops)).abs() < 1e-9);
        assert!((f.write_mb_s - compaction.write.bytes_per_s / 1e6).abs() < 1e-9);
        assert_eq!(f.read_p99_us, reads.read.lat_p99_us);
        assert_eq!(f.write_p99_us, None, "the query job does not write");
        let err = ProfileFigures::from_report(Profile::RandRead4k, 4, "", &report).unwrap_err();
        assert!(err.contains("rand_read_4k"), "{err}");
    }
}
