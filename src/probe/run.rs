//! The probe as an ordered list of steps: checks (directory, fio, space, O_DIRECT), CPU, then
//! one fio profile at a time. The result is written after each step, so an interrupted probe
//! still leaves what it measured (with `complete: false`).

use std::time::Duration;

use super::fio;
use super::jobs::{self, JobParams};
use super::scratch::{self, Scratch};
use super::{ProbeError, cpu};
use crate::cancel::Cancel;
use crate::fsutil::write_atomic;
use crate::host::HostFacts;
use crate::result::probe::{ProbeResult, SCHEMA_VERSION, Summary};
use crate::spec::probe::{ProbeSpec, Profile};

/// Runs the probe described by `spec` until done or `cancel`led; `progress` receives one line
/// per step.
pub fn run(
    spec: &ProbeSpec,
    cancel: &Cancel,
    progress: &mut dyn FnMut(&str),
) -> Result<ProbeResult, ProbeError> {
    // Checks first, before anything is written or measured.
    let fio_version = fio::version(&spec.fio_path)?;
    for name in Scratch::remove_stale(&spec.dir) {
        progress(&format!("removed {name}, left by a probe that was killed"));
    }
    let scratch = Scratch::create(&spec.dir)?;
    let direct = check_dir(spec, &scratch)?;
    let host = HostFacts::read();
    let started = crate::host::unix_now_s();
    let mut result = ProbeResult {
        schema_version: SCHEMA_VERSION,
        env: spec.env.clone(),
        complete: false,
        started_at: crate::format::rfc3339_utc(started),
        started_unix_s: started,
        finished_at: None,
        host: host.clone(),
        dir: spec.dir.display().to_string(),
        fio_version,
        direct_io: direct,
        summary: Summary::default(),
        cpu: None,
        profiles: Vec::new(),
        notes: Vec::new(),
        spec: spec.clone(),
    };
    if !direct {
        result.notes.push(format!(
            "the filesystem of {} refuses O_DIRECT: fio ran with buffered I/O and the page cache may answer some reads",
            spec.dir.display()
        ));
    }
    save(spec, &result)?;
    if spec.cpu {
        progress(&format!(
            "cpu: 1 thread and {} threads, {} s each",
            host.cores, spec.timing.cpu_time_s
        ));
        let figures = cpu::measure(
            &spec.sysbench_path,
            host.cores,
            Duration::from_secs(spec.timing.cpu_time_s),
            &scratch,
            &mut result.notes,
            cancel,
        )?;
        result.notes.extend(cpu::contention_note(&figures));
        result.cpu = Some(figures);
        result.summarise();
        save(spec, &result)?;
    }
    let params = JobParams {
        runtime_s: spec.timing.runtime_s,
        ramp_s: spec.timing.ramp_s,
        file_size_mib: spec.timing.file_size_mib,
        direct,
    };
    for &profile in &spec.profiles {
        if cancel.is_cancelled() {
            return Err(ProbeError::Interrupted);
        }
        let figures = profile_figures(spec, profile, &params, &scratch, cancel, progress)?;
        result.profiles.push(figures);
        result.summarise();
        save(spec, &result)?;
    }
    result.complete = true;
    result.finished_at = Some(crate::format::rfc3339_utc(crate::host::unix_now_s()));
    save(spec, &result)?;
    drop(scratch);
    Ok(result)
}

/// Checks that the directory has room for the profiles' files; whether it takes O_DIRECT.
fn check_dir(spec: &ProbeSpec, scratch: &Scratch) -> Result<bool, ProbeError> {
    let need = jobs::required_bytes(&spec.profiles, spec.timing.file_size_mib);
    // 64 MiB of headroom for fio's own files and the filesystem.
    let need_with_margin = need + if need > 0 { 64 << 20 } else { 0 };
    let free = scratch::free_bytes(scratch.path()).map_err(|source| ProbeError::Io {
        what: "statvfs",
        path: spec.dir.clone(),
        source,
    })?;
    if free < need_with_margin {
        return Err(ProbeError::NoSpace {
            dir: spec.dir.clone(),
            need_mib: need_with_margin >> 20,
            free_mib: free >> 20,
        });
    }
    scratch::supports_direct_io(scratch.path()).map_err(|source| ProbeError::Io {
        what: "checking O_DIRECT",
        path: scratch.path().to_path_buf(),
        source,
    })
}

/// One fio profile run in the scratch directory (its job file also written where asked),
/// folded into its figures.
fn profile_figures(
    spec: &ProbeSpec,
    profile: Profile,
    params: &JobParams,
    scratch: &Scratch,
    cancel: &Cancel,
    progress: &mut dyn FnMut(&str),
) -> Result<crate::result::probe::ProfileFigures, ProbeError> {
    let job = jobs::render(profile, params);
    if let Some(dir) = &spec.write_jobs_dir {
        let path = dir.join(format!("{profile}.fio"));
        write_atomic(&path, job.as_bytes()).map_err(|source| ProbeError::Io {
            what: "writing the job file",
            path,
            source,
        })?;
    }
    let duration = if profile == Profile::MmapRandRead {
        format!("one pass, at most {} s", params.runtime_s)
    } else {
        format!("{} s (+{} s ramp)", params.runtime_s, params.ramp_s)
    };
    progress(&format!(
        "{profile}: {duration} — {}",
        jobs::info(profile).description
    ));
    let report = fio::run_job(
        &spec.fio_path,
        profile,
        &job,
        scratch,
        time_limit(params),
        cancel,
    )?;
    for f in jobs::info(profile).written_files {
        scratch.remove_file(f);
    }
    super::fio_json::figures(profile, params.runtime_s, &job, &report).map_err(|e| {
        ProbeError::FioOutput {
            profile,
            message: e.0,
        }
    })
}

/// How long one fio run may take: its runtime and ramp, plus time to lay out the data file at
/// no less than 10 MiB/s, plus a minute.
fn time_limit(p: &JobParams) -> Duration {
    Duration::from_secs(p.runtime_s + p.ramp_s + p.file_size_mib / 10 + 60)
}

fn save(spec: &ProbeSpec, result: &ProbeResult) -> Result<(), ProbeError> {
    let mut json = serde_json::to_vec_pretty(result).expect("a probe result always serialises");
    json.push(b'\n');
    write_atomic(&spec.out, &json).map_err(|source| ProbeError::WriteResult {
        path: spec.out.clone(),
        source,
    })
}
