//! Where the probe's tools run: a [`Runner`] is the host being characterised. [`LocalRunner`]
//! runs fio and sysbench as child processes of this one, in a local scratch directory;
//! [`super::remote::SshRunner`] runs them on another host through the system's `ssh` and
//! brings their output back. Either way the output is parsed here by the same code
//! ([`super::fio_json`], [`super::cpu::parse_events_per_s`]), and the scratch directory is
//! removed when the runner is dropped — on success, on error and on interruption.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::ProbeError;
use super::fio_json::FioReport;
use super::process::{self, Stopped};
use super::scratch::{self, Scratch};
use crate::cancel::Cancel;
use crate::host::HostFacts;
use crate::result::probe::{CpuFigures, DiskFacts};
use crate::spec::probe::{ProbeSpec, Profile};

/// What the checks found before anything was measured.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub host: HostFacts,
    pub disk: Option<DiskFacts>,
    pub fio_version: String,
    /// Whether the filesystem takes O_DIRECT.
    pub direct: bool,
}

/// A host the probe measures.
pub trait Runner {
    /// The CPU score (sysbench, or where allowed the built-in loop) at one thread and `threads`.
    fn cpu(
        &mut self,
        threads: usize,
        time: Duration,
        notes: &mut Vec<String>,
        cancel: &Cancel,
    ) -> Result<CpuFigures, ProbeError>;

    /// Runs one fio job (the text of `<profile>.fio`) in the scratch directory, removes the
    /// files it wrote, and returns fio's parsed report.
    fn fio(
        &mut self,
        profile: Profile,
        job: &str,
        limit: Duration,
        cancel: &Cancel,
    ) -> Result<FioReport, ProbeError>;
}

/// The probe's tools as child processes of this one.
pub struct LocalRunner {
    fio: std::path::PathBuf,
    sysbench: std::path::PathBuf,
    scratch: Scratch,
}

impl LocalRunner {
    /// Checks fio, the directory, its free space and O_DIRECT; creates the scratch directory.
    pub fn prepare(
        spec: &ProbeSpec,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(LocalRunner, Prepared), ProbeError> {
        let fio_version = super::fio::version(&spec.fio_path)?;
        for name in Scratch::remove_stale(&spec.dir) {
            progress(&format!("removed {name}, left by a probe that was killed"));
        }
        let scratch = Scratch::create(&spec.dir)?;
        let need = needed_bytes(spec);
        let free = scratch::free_bytes(scratch.path()).map_err(|source| ProbeError::Io {
            what: "statvfs",
            path: spec.dir.clone(),
            source,
        })?;
        if free < need {
            return Err(ProbeError::NoSpace {
                dir: spec.dir.clone(),
                need_mib: need >> 20,
                free_mib: free >> 20,
            });
        }
        let direct =
            scratch::supports_direct_io(scratch.path()).map_err(|source| ProbeError::Io {
                what: "checking O_DIRECT",
                path: scratch.path().to_path_buf(),
                source,
            })?;
        let disk = Command::new("df")
            .args(["-P", "-T", "-k"])
            .arg(&spec.dir)
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| DiskFacts::parse_df(&String::from_utf8_lossy(&o.stdout)));
        let runner = LocalRunner {
            fio: spec.fio_path.clone(),
            sysbench: spec.sysbench_path.clone(),
            scratch,
        };
        let prepared = Prepared {
            host: HostFacts::read(),
            disk,
            fio_version,
            direct,
        };
        Ok((runner, prepared))
    }
}

impl Runner for LocalRunner {
    fn cpu(
        &mut self,
        threads: usize,
        time: Duration,
        notes: &mut Vec<String>,
        cancel: &Cancel,
    ) -> Result<CpuFigures, ProbeError> {
        super::cpu::measure(&self.sysbench, threads, time, &self.scratch, notes, cancel)
    }

    fn fio(
        &mut self,
        profile: Profile,
        job: &str,
        limit: Duration,
        cancel: &Cancel,
    ) -> Result<FioReport, ProbeError> {
        let report = super::fio::run_job(&self.fio, profile, job, &self.scratch, limit, cancel);
        for f in super::jobs::info(profile).written_files {
            self.scratch.remove_file(f);
        }
        report
    }
}

/// Bytes the profiles need in the directory: their files plus 64 MiB of headroom for fio's own
/// files and the filesystem.
pub fn needed_bytes(spec: &ProbeSpec) -> u64 {
    let need = super::jobs::required_bytes(&spec.profiles, spec.timing.file_size_mib);
    need + if need > 0 { 64 << 20 } else { 0 }
}

/// What a child printed, and how it ended.
#[derive(Debug)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with `input` on its standard input, which stays open until the child exits
/// (a remote script stops its tools when it closes), capturing stdout and stderr. Stopped
/// like [`process::run`]: on cancellation or at `limit`, its process group is terminated.
pub fn run_piped(
    cmd: &mut Command,
    input: &[u8],
    limit: Duration,
    cancel: &Cancel,
) -> Result<Captured, Stopped> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(Stopped::Spawn)?;
    let mut stdin = child.stdin.take();
    if let Some(s) = stdin.as_mut() {
        // A script is a few KiB: it fits in the pipe, whether or not the child reads yet. A
        // child that exits without reading it fails on its own.
        let _ = s.write_all(input).and_then(|()| s.flush());
    }
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                process::stop(&mut child);
                return Err(Stopped::Spawn(e));
            }
        }
        if cancel.is_cancelled() {
            drop(stdin.take());
            process::stop(&mut child);
            return Err(Stopped::Interrupted);
        }
        if Instant::now() >= deadline {
            drop(stdin.take());
            process::stop(&mut child);
            return Err(Stopped::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    Ok(Captured {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piped_children_get_their_input_and_their_output_is_captured() {
        let go = Cancel::new();
        let got = run_piped(
            Command::new("sh").args(["-c", "head -n 1; echo oops >&2; exit 3"]),
            b"hello\n",
            Duration::from_secs(10),
            &go,
        )
        .unwrap();
        assert_eq!(got.stdout, "hello\n");
        assert_eq!(got.stderr, "oops\n");
        assert_eq!(got.status.code(), Some(3));
    }

    #[test]
    fn piped_children_stop_at_the_limit_and_on_cancel() {
        let started = Instant::now();
        let err = run_piped(
            Command::new("sleep").arg("30"),
            b"",
            Duration::from_millis(200),
            &Cancel::new(),
        )
        .unwrap_err();
        assert!(matches!(err, Stopped::TimedOut), "{err:?}");
        let cancel = Cancel::new();
        cancel.cancel();
        let err = run_piped(
            Command::new("sleep").arg("30"),
            b"",
            Duration::from_secs(60),
            &cancel,
        )
        .unwrap_err();
        assert!(matches!(err, Stopped::Interrupted), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let err = run_piped(
            &mut Command::new("/nonexistent/tool"),
            b"",
            Duration::from_secs(1),
            &Cancel::new(),
        )
        .unwrap_err();
        assert!(matches!(err, Stopped::Spawn(_)), "{err:?}");
    }
}
