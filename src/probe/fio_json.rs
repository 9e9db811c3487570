//! Parsing fio's `--output-format=json` output. Pure: text in, figures out.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::jobs;
use crate::result::probe::ProfileFigures;
use crate::spec::probe::Profile;

/// The figures of one fio job (or one group, with `group_reporting`).
#[derive(Debug, Clone, PartialEq)]
pub struct JobFigures {
    pub name: String,
    pub read: DirFigures,
    pub write: DirFigures,
    /// Latency of fsync/fdatasync calls (fio's `sync` section), when the job made any.
    pub sync_p50_us: Option<f64>,
    pub sync_p99_us: Option<f64>,
}

/// One direction (read or write) of a job. Latencies are completion latencies (fio's `clat`,
/// submission to completion), as fio prints them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DirFigures {
    pub ios: u64,
    pub iops: f64,
    pub bytes_per_s: f64,
    pub lat_mean_us: Option<f64>,
    pub lat_p50_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
}

/// The parsed report: fio's version and one entry per job.
#[derive(Debug, Clone, PartialEq)]
pub struct FioReport {
    pub fio_version: String,
    pub jobs: Vec<JobFigures>,
}

impl FioReport {
    pub fn job(&self, name: &str) -> Option<&JobFigures> {
        self.jobs.iter().find(|j| j.name == name)
    }
}

#[derive(Deserialize)]
struct RawReport {
    #[serde(rename = "fio version")]
    fio_version: String,
    jobs: Vec<RawJob>,
}

#[derive(Deserialize)]
struct RawJob {
    jobname: String,
    #[serde(default)]
    error: i64,
    read: RawDir,
    write: RawDir,
    #[serde(default)]
    sync: Option<RawSync>,
}

#[derive(Deserialize)]
struct RawSync {
    lat_ns: RawLat,
}

#[derive(Deserialize)]
struct RawDir {
    total_ios: u64,
    iops: f64,
    bw_bytes: f64,
    clat_ns: RawLat,
}

#[derive(Deserialize)]
struct RawLat {
    mean: f64,
    #[serde(default)]
    percentile: Option<BTreeMap<String, f64>>,
}

/// Parses fio's JSON output. fio sometimes prints notes before the JSON document, so parsing
/// starts at the first `{`. A job that reports a non-zero `error` is an error.
pub fn parse(text: &str) -> Result<FioReport, crate::error::Invalid> {
    let start = text
        .find('{')
        .ok_or_else(|| crate::invalid!("no JSON object in fio's output"))?;
    let raw: RawReport = serde_json::from_str(&text[start..]).map_err(|e| e.to_string())?;
    if raw.jobs.is_empty() {
        return Err(crate::invalid!("fio reported no jobs"));
    }
    let mut jobs = Vec::with_capacity(raw.jobs.len());
    for j in raw.jobs {
        if j.error != 0 {
            return Err(crate::invalid!(
                "job {} ended with error {}",
                j.jobname,
                j.error
            ));
        }
        let sync = j.sync.as_ref().map(|s| &s.lat_ns);
        jobs.push(JobFigures {
            name: j.jobname,
            read: dir_figures(&j.read),
            write: dir_figures(&j.write),
            sync_p50_us: sync.and_then(|l| percentile_us(l, 50.0)),
            sync_p99_us: sync.and_then(|l| percentile_us(l, 99.0)),
        });
    }
    Ok(FioReport {
        fio_version: raw.fio_version,
        jobs,
    })
}

fn dir_figures(d: &RawDir) -> DirFigures {
    let has_ios = d.total_ios > 0;
    DirFigures {
        ios: d.total_ios,
        iops: d.iops,
        bytes_per_s: d.bw_bytes,
        lat_mean_us: has_ios.then_some(d.clat_ns.mean / 1000.0),
        lat_p50_us: percentile_us(&d.clat_ns, 50.0).filter(|_| has_ios),
        lat_p99_us: percentile_us(&d.clat_ns, 99.0).filter(|_| has_ios),
    }
}

/// fio keys percentiles as strings such as `"99.000000"`.
fn percentile_us(lat: &RawLat, pct: f64) -> Option<f64> {
    lat.percentile.as_ref()?.iter().find_map(|(k, v)| {
        let key: f64 = k.parse().ok()?;
        ((key - pct).abs() < 1e-9).then_some(*v / 1000.0)
    })
}

/// Folds a parsed fio report into a profile's figures.
pub fn figures(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Output of a real fio 3.33 run of the `lcs` profile (two groups), captured on the
    /// development machine with `fio --output-format=json lcs.fio`.
    const LCS_SAMPLE: &str = include_str!("testdata/fio-lcs.json");

    #[test]
    fn parses_a_captured_two_group_run() {
        let r = parse(LCS_SAMPLE).unwrap();
        assert_eq!(r.fio_version, "fio-3.33");
        assert_eq!(r.jobs.len(), 2);
        let reads = r.job("reads").unwrap();
        // Figures below are the sample's own values (see testdata/fio-lcs.json).
        assert_eq!(reads.read.ios, 384013);
        assert!((reads.read.iops - 95979.255186).abs() < 1e-6);
        assert_eq!(reads.read.bytes_per_s, 393147409.0);
        assert_eq!(reads.read.lat_p50_us, Some(123.392));
        assert_eq!(reads.read.lat_p99_us, Some(234.496));
        assert_eq!(reads.write.ios, 0);
        assert_eq!(reads.write.lat_p99_us, None);
        assert_eq!(reads.write.lat_mean_us, None);
        assert_eq!(reads.sync_p99_us, None, "no fsync in this profile");
        let compaction = r.job("compaction").unwrap();
        assert!(compaction.read.ios > 0 && compaction.write.ios > 0);
        // Throttled to 32 MiB/s each way by the job file.
        let mib_s = compaction.write.bytes_per_s / (1024.0 * 1024.0);
        assert!((mib_s - 32.0).abs() < 3.0, "{mib_s}");
    }

    #[test]
    fn skips_notes_before_the_json_and_reports_job_errors() {
        let noisy = format!("fio: note: something\n{LCS_SAMPLE}");
        assert_eq!(parse(&noisy).unwrap(), parse(LCS_SAMPLE).unwrap());
        let failed = LCS_SAMPLE.replacen("\"error\" : 0", "\"error\" : 5", 1);
        assert!(parse(&failed).unwrap_err().contains("error 5"));
        assert!(parse("fio: engine libaio not loadable").is_err());
        assert!(parse("{\"fio version\": \"x\", \"jobs\": []}").is_err());
    }

    #[test]
    fn profile_totals_add_jobs_and_latency_comes_from_the_query_job() {
        let report = parse(include_str!("testdata/fio-lcs.json")).unwrap();
        let f = figures(Profile::Lcs, 4, "job", &report).unwrap();
        let reads = report.job("reads").unwrap();
        let compaction = report.job("compaction").unwrap();
        let want_read_iops = reads.read.iops + compaction.read.iops;
        assert!((f.read_iops - want_read_iops).abs() < 1e-9);
        assert!((f.iops - (want_read_iops + compaction.write.iops)).abs() < 1e-9);
        assert!((f.write_mb_s - compaction.write.bytes_per_s / 1e6).abs() < 1e-9);
        assert_eq!(f.read_p99_us, reads.read.lat_p99_us);
        assert_eq!(f.write_p99_us, None, "the query job does not write");
        let err = figures(Profile::RandRead4k, 4, "", &report).unwrap_err();
        assert!(err.contains("rand_read_4k"), "{err}");
    }
}
