//! Running fio on a rendered job file inside the scratch directory.

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::ProbeError;
use super::fio_json::{self, FioReport};
use super::process::{self, Stopped};
use super::scratch::Scratch;
use crate::spec::probe::Profile;

/// `fio --version`, e.g. `fio-3.33`. A missing binary is [`ProbeError::FioMissing`].
pub fn version(fio: &Path) -> Result<String, ProbeError> {
    let out = Command::new(fio).arg("--version").output();
    match out {
        Ok(out) if out.status.success() => {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        }
        Ok(out) => Err(ProbeError::FioSpawn {
            path: fio.to_path_buf(),
            source: std::io::Error::other(format!("'--version' exited with {}", out.status)),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ProbeError::FioMissing {
            path: fio.to_path_buf(),
        }),
        Err(source) => Err(ProbeError::FioSpawn {
            path: fio.to_path_buf(),
            source,
        }),
    }
}

/// Runs `job` (the text of `<profile>.fio`) with the scratch directory as working directory
/// and returns the parsed report. `limit` bounds the whole run, file layout included.
pub fn run_job(
    fio: &Path,
    profile: Profile,
    job: &str,
    scratch: &Scratch,
    limit: Duration,
    cancel: &crate::cancel::Cancel,
) -> Result<FioReport, ProbeError> {
    let dir = scratch.path();
    let io_err = |what: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ProbeError::Io { what, path, source }
    };
    let job_path = dir.join(format!("{profile}.fio"));
    std::fs::write(&job_path, job).map_err(io_err("writing the fio job file", &job_path))?;
    let json_path = dir.join(format!("{profile}.json"));
    let err_path = dir.join(format!("{profile}.stderr"));
    let stderr = File::create(&err_path).map_err(io_err("creating", &err_path))?;
    let stdout = stderr.try_clone().map_err(io_err("creating", &err_path))?;
    let mut cmd = Command::new(fio);
    cmd.current_dir(dir)
        .arg("--output-format=json")
        .arg(format!("--output={profile}.json"))
        .arg(format!("{profile}.fio"))
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    let status = match process::run(&mut cmd, limit, cancel) {
        Ok(status) => status,
        Err(Stopped::Interrupted) => return Err(ProbeError::Interrupted),
        Err(Stopped::TimedOut) => {
            return Err(ProbeError::Timeout {
                tool: "fio",
                what: format!("profile {profile}"),
                limit_s: limit.as_secs(),
            });
        }
        Err(Stopped::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ProbeError::FioMissing {
                path: fio.to_path_buf(),
            });
        }
        Err(Stopped::Spawn(source)) => {
            return Err(ProbeError::FioSpawn {
                path: fio.to_path_buf(),
                source,
            });
        }
    };
    let diagnostics = std::fs::read_to_string(&err_path).unwrap_or_default();
    if !status.success() {
        return Err(ProbeError::FioFailed {
            profile,
            message: format!("{status}: {}", first_line(&diagnostics)),
        });
    }
    let text = std::fs::read_to_string(&json_path).map_err(io_err("reading", &json_path))?;
    fio_json::parse(&text).map_err(|e| ProbeError::FioOutput {
        profile,
        message: e.0,
    })
}

/// The first line worth showing from fio's diagnostics.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
}
