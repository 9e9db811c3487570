//! The probe as an ordered list of steps: checks (directory, fio, space, O_DIRECT — here or on
//! the remote host), CPU, then one fio profile at a time. The result is written after each step, so an interrupted probe
//! still leaves what it measured (with `complete: false`).

use std::time::Duration;

use super::jobs::{self, JobParams};
use super::remote::SshRunner;
use super::runner::{LocalRunner, Prepared, Runner};
use super::{ProbeError, cpu};
use crate::cancel::Cancel;
use crate::fsutil::write_atomic;
use crate::result::probe::{ProbeResult, SCHEMA_VERSION, Summary};
use crate::spec::probe::{ProbeSpec, Profile};

/// Runs the probe described by `spec` until done or `cancel`led, on this host or on
/// `spec.remote`; `progress` receives one line per step.
pub fn run(
    spec: &ProbeSpec,
    cancel: &Cancel,
    progress: &mut dyn FnMut(&str),
) -> Result<ProbeResult, ProbeError> {
    // Checks first, before anything is written or measured.
    match &spec.remote {
        None => {
            let (mut runner, prepared) = LocalRunner::prepare(spec, progress)?;
            measure(spec, &mut runner, prepared, cancel, progress)
        }
        Some(target) => {
            progress(&format!(
                "checking {} over ssh (fio, {}the directory {})",
                target.dest,
                if spec.cpu { "sysbench, " } else { "" },
                spec.dir.display()
            ));
            let (mut runner, prepared) = SshRunner::prepare(spec, target, cancel)?;
            progress(&format!(
                "remote host {} is {} ({} cores, {})",
                target.dest.host_port(),
                prepared.host.hostname,
                prepared.host.cores,
                prepared.fio_version
            ));
            // The runner removes the scratch directory there when dropped, also on an error.
            measure(spec, &mut runner, prepared, cancel, progress)
        }
    }
}

/// The steps after the checks: CPU, then one fio profile at a time, the result saved after
/// each.
fn measure(
    spec: &ProbeSpec,
    runner: &mut dyn Runner,
    prepared: Prepared,
    cancel: &Cancel,
    progress: &mut dyn FnMut(&str),
) -> Result<ProbeResult, ProbeError> {
    let Prepared {
        host,
        disk,
        fio_version,
        direct,
    } = prepared;
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
        disk,
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
        let figures = runner.cpu(
            host.cores,
            Duration::from_secs(spec.timing.cpu_time_s),
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
        let figures = profile_figures(spec, profile, &params, runner, cancel, progress)?;
        result.profiles.push(figures);
        result.summarise();
        save(spec, &result)?;
    }
    result.complete = true;
    result.finished_at = Some(crate::format::rfc3339_utc(crate::host::unix_now_s()));
    save(spec, &result)?;
    Ok(result)
}

/// One fio profile run in the runner's scratch directory (its job file also written where
/// asked, on this machine), folded into its figures.
fn profile_figures(
    spec: &ProbeSpec,
    profile: Profile,
    params: &JobParams,
    runner: &mut dyn Runner,
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
    let report = runner.fio(profile, &job, time_limit(params), cancel)?;
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
