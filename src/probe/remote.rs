//! The probe on another host over SSH (`cqlbench probe --ssh`): fio and sysbench run there,
//! started by the system's OpenSSH client (`ssh`, never a prompt: BatchMode), and their output
//! comes back to be parsed here by the same code as a local probe's.
//!
//! Each step is one `ssh HOST sh -s` session whose POSIX shell script arrives on standard
//! input (so the remote login shell never parses it). The standard input stays open while
//! the step runs: when this side stops the session (Ctrl-C, a time limit) or the connection
//! drops, the script sees it close and stops its fio or sysbench ([`GUARD`]).
//!
//! The first session checks everything the probe needs, in one line if anything is missing
//! (fio, sysbench unless `--skip-cpu`, a writable directory with the free space), reads the
//! host's facts (hostname, kernel, CPUs, memory, the filesystem of the directory) and creates
//! the scratch directory; the last one removes it, whatever happened in between.

use std::process::Command;
use std::time::Duration;

use super::fio_json::{self, FioReport};
use super::process::Stopped;
use super::runner::{Captured, Prepared, Runner, needed_bytes, run_piped};
use super::{ProbeError, jobs};
use crate::cancel::Cancel;
use crate::host::HostFacts;
use crate::result::probe::{CpuFigures, CpuSource, DiskFacts};
use crate::spec::probe::{ProbeSpec, Profile};
use crate::spec::ssh::SshTarget;

/// Exit status of a script whose scratch directory is gone.
const NO_SCRATCH: i32 = 96;

/// Runs `"$@"` in the background and waits for it, stopping it (SIGTERM) when the session's
/// standard input closes; its status is the command's.
const GUARD: &str = r#"guard() {
  "$@" </dev/null &
  guard_pid=$!
  (cat <&3 >/dev/null 2>&1; kill -TERM "$guard_pid" 2>/dev/null) >/dev/null 2>&1 &
  guard_watch=$!
  wait "$guard_pid"
  guard_status=$?
  kill "$guard_watch" 2>/dev/null
  return "$guard_status"
}
"#;

/// `s` as one word of a POSIX shell.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A whole script: one `{ … }` group, which the shell reads entirely before running it (so
/// nothing after it is left on standard input for [`GUARD`]'s watcher), ending in `exit`.
pub fn script(body: &str) -> String {
    format!("{{\nexec 3<&0\n{GUARD}{body}\nexit 0\n}}\n")
}

/// The script of the checks: facts as `key=value` lines (the memory and CPU model taken from
/// /proc by the remote shell), and the scratch directory created when the directory is usable.
pub fn preflight_script(dir: &str, scratch: &str, fio: &str, sysbench: Option<&str>) -> String {
    let body = format!(
        r#"dir={dir}
scratch={scratch}
fio={fio}
sysbench={sysbench}
printf 'hostname=%s\n' "$(cat /proc/sys/kernel/hostname 2>/dev/null || hostname)"
printf 'kernel=%s\n' "$(uname -r)"
printf 'cores=%s\n' "$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
printf 'ram_kib=%s\n' "$(awk '/^MemTotal:/ {{print $2; exit}}' /proc/meminfo 2>/dev/null)"
printf 'cpu_model=%s\n' "$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)"
if command -v "$fio" >/dev/null 2>&1; then printf 'fio=%s\n' "$("$fio" --version 2>&1 | head -n 1)"; fi
if [ -n "$sysbench" ] && command -v "$sysbench" >/dev/null 2>&1; then printf 'sysbench=%s\n' "$("$sysbench" --version 2>&1 | head -n 1)"; fi
if [ ! -e "$dir" ]; then echo 'dir=missing'
elif [ ! -d "$dir" ]; then echo 'dir=not-a-dir'
elif ! e=$(mkdir "$scratch" 2>&1 && echo cqlbench 2>&1 >"$scratch/write-check"); then
  rm -rf "$scratch" 2>/dev/null
  printf 'dir=unwritable %s\n' "$(printf '%s' "$e" | head -n 1)"
else
  echo 'dir=ok'
  rm -f "$scratch/write-check"
  printf 'avail_kib=%s\n' "$(df -P -k "$dir" | tail -n 1 | awk '{{print $4}}')"
  printf 'df=%s\n' "$(df -P -T -k "$dir" 2>/dev/null | tail -n 1)"
  if dd if=/dev/zero of="$scratch/direct-check" bs=4096 count=1 oflag=direct >/dev/null 2>&1; then echo 'direct=1'; else echo 'direct=0'; fi
  rm -f "$scratch/direct-check"
fi"#,
        dir = sh_quote(dir),
        scratch = sh_quote(scratch),
        fio = sh_quote(fio),
        sysbench = sh_quote(sysbench.unwrap_or("")),
    );
    script(&body)
}

/// The script of one fio profile: writes the job file into the scratch directory, runs fio on
/// it, prints its JSON report (or, when it failed, its diagnostics on stderr) and removes what
/// it wrote.
pub fn fio_script(scratch: &str, fio: &str, profile: Profile, job: &str) -> String {
    let written: Vec<String> = jobs::info(profile)
        .written_files
        .iter()
        .map(|f| sh_quote(f))
        .collect();
    let body = format!(
        r#"cd {scratch} || exit {NO_SCRATCH}
printf '%s' {job} > {profile}.fio
guard {fio} --output-format=json --output={profile}.json {profile}.fio >{profile}.log 2>&1
s=$?
if [ "$s" -eq 0 ]; then cat {profile}.json; else cat {profile}.log >&2; fi
rm -f {profile}.json {profile}.log {written}
exit "$s""#,
        scratch = sh_quote(scratch),
        job = sh_quote(job),
        fio = sh_quote(fio),
        written = written.join(" "),
    );
    script(&body)
}

/// The script of one `sysbench cpu` run, its output on stdout.
pub fn sysbench_script(sysbench: &str, threads: usize, time_s: u64) -> String {
    let body = format!(
        "guard {} cpu --threads={threads} --time={time_s} run 2>&1\nexit \"$?\"",
        sh_quote(sysbench)
    );
    script(&body)
}

/// The script removing the scratch directory (again after a second, should a stopped fio
/// still have been writing into it).
pub fn cleanup_script(scratch: &str) -> String {
    let q = sh_quote(scratch);
    script(&format!(
        "rm -rf {q} 2>/dev/null || {{ sleep 1; rm -rf {q}; }}"
    ))
}

/// The state of the directory, as the checks found it.
#[derive(Debug, Clone, PartialEq)]
pub enum DirState {
    Ok,
    Missing,
    NotADir,
    Unwritable(String),
}

/// What the checks printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Preflight {
    pub host: HostFacts,
    pub fio_version: Option<String>,
    pub sysbench_version: Option<String>,
    pub dir: DirState,
    pub avail_bytes: Option<u64>,
    pub disk: Option<DiskFacts>,
    pub direct: bool,
}

impl Preflight {
    /// Parses the output of [`preflight_script`]; `None` when it is not that output (a
    /// script cut short).
    pub fn parse(out: &str) -> Option<Preflight> {
        let value = |key: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(|v| v.trim().to_string())
        };
        let dir = match value("dir")?.as_str() {
            "ok" => DirState::Ok,
            "missing" => DirState::Missing,
            "not-a-dir" => DirState::NotADir,
            other => DirState::Unwritable(
                other
                    .strip_prefix("unwritable")
                    .unwrap_or(other)
                    .trim()
                    .to_string(),
            ),
        };
        Some(Preflight {
            host: HostFacts {
                hostname: value("hostname").unwrap_or_default(),
                cpu_model: value("cpu_model").unwrap_or_default(),
                cores: value("cores").and_then(|c| c.parse().ok()).unwrap_or(1),
                ram_bytes: value("ram_kib")
                    .and_then(|k| k.parse::<u64>().ok())
                    .map_or(0, |k| k * 1024),
                kernel: value("kernel").unwrap_or_default(),
            },
            fio_version: value("fio").filter(|v| !v.is_empty()),
            sysbench_version: value("sysbench").filter(|v| !v.is_empty()),
            dir,
            avail_bytes: value("avail_kib")
                .and_then(|k| k.parse::<u64>().ok())
                .map(|k| k * 1024),
            disk: value("df").and_then(|l| DiskFacts::parse_df(&l)),
            direct: value("direct").as_deref() == Some("1"),
        })
    }

    /// Everything the probe lacks there, as one phrase about the host (empty when nothing):
    /// `has no fio (looked for 'fio' on its PATH): install it there (…)`.
    pub fn problems(&self, spec: &ProbeSpec) -> Vec<String> {
        let mut out = Vec::new();
        let looked = |path: &std::path::Path| match path.to_string_lossy().contains('/') {
            true => format!("looked for '{}'", path.display()),
            false => format!("looked for '{}' on its PATH", path.display()),
        };
        if self.fio_version.is_none() {
            out.push(format!(
                "has no fio ({}): install it there (apt-get install -y fio) or give its path with --fio",
                looked(&spec.fio_path)
            ));
        }
        if spec.cpu && self.sysbench_version.is_none() {
            out.push(format!(
                "has no sysbench ({}): install it there (apt-get install -y sysbench), give its path with --sysbench, or skip the CPU score with --skip-cpu",
                looked(&spec.sysbench_path)
            ));
        }
        let dir = spec.dir.display();
        match &self.dir {
            DirState::Ok => {}
            DirState::Missing => out.push(format!(
                "has no directory '{dir}' (give an existing directory of that host with --dir)"
            )),
            DirState::NotADir => out.push(format!(
                "has a file, not a directory, at '{dir}' (give a directory with --dir)"
            )),
            DirState::Unwritable(why) => out.push(format!(
                "does not let this user write in '{dir}': {}",
                if why.is_empty() {
                    "no reason given"
                } else {
                    why
                }
            )),
        }
        let need = needed_bytes(spec);
        if let (DirState::Ok, Some(free)) = (&self.dir, self.avail_bytes)
            && free < need
        {
            out.push(format!(
                "has {} MiB free in '{dir}', the probe needs {} MiB (use --quick or --size-mib)",
                free >> 20,
                need >> 20
            ));
        }
        out
    }
}

/// Why an `ssh` session failed (it exits 255 for its own errors), as a phrase about the host.
pub fn ssh_failure(stderr: &str, connect_timeout_s: u64) -> String {
    let last = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("ssh exited with status 255 and no message");
    if stderr.contains("Permission denied") {
        format!("refused the ssh login (check the user and --ssh-identity): {last}")
    } else if stderr.contains("Host key verification failed")
        || stderr.contains("IDENTIFICATION HAS CHANGED")
    {
        format!(
            "failed ssh's host key check (its key is not the one known_hosts holds for it; see docs/probe.md): {last}"
        )
    } else if stderr.contains("timed out") || stderr.contains("Timeout") {
        format!("did not answer within {connect_timeout_s} s: {last}")
    } else {
        format!("could not be reached over ssh: {last}")
    }
}

/// The probe's tools on a remote host.
pub struct SshRunner {
    target: SshTarget,
    fio: String,
    sysbench: String,
    sysbench_version: Option<String>,
    /// The scratch directory there.
    scratch: String,
    /// Whether the scratch directory may exist there (and must be removed).
    created: bool,
}

impl SshRunner {
    /// Connects, checks and reads the facts; creates the scratch directory there.
    pub fn prepare(
        spec: &ProbeSpec,
        target: &SshTarget,
        cancel: &Cancel,
    ) -> Result<(SshRunner, Prepared), ProbeError> {
        let dir = spec.dir.to_string_lossy().into_owned();
        let name = format!(
            "{}remote-{}-{}",
            super::scratch::SCRATCH_PREFIX,
            std::process::id(),
            crate::host::unix_now_s()
        );
        let mut runner = SshRunner {
            target: target.clone(),
            fio: spec.fio_path.to_string_lossy().into_owned(),
            sysbench: spec.sysbench_path.to_string_lossy().into_owned(),
            sysbench_version: None,
            scratch: format!("{}/{name}", dir.trim_end_matches('/')),
            created: false,
        };
        let sysbench = spec.cpu.then_some(runner.sysbench.as_str());
        let check = preflight_script(&dir, &runner.scratch, &runner.fio, sysbench);
        let limit = Duration::from_secs(target.connect_timeout_s + 60);
        let out = match runner.session(&check, limit, cancel, "the checks") {
            Ok(out) => out,
            Err(e) => {
                // Interrupted or timed out while the directory was being created.
                runner.created = matches!(e, ProbeError::Interrupted | ProbeError::Timeout { .. });
                return Err(e);
            }
        };
        let pre = Preflight::parse(&out.stdout).ok_or_else(|| {
            runner.remote(format!(
                "did not complete the checks: {}",
                first_line(&out.stderr)
            ))
        })?;
        runner.created = pre.dir == DirState::Ok;
        let problems = pre.problems(spec);
        if !problems.is_empty() {
            return Err(runner.remote(problems.join("; it ")));
        }
        runner.sysbench_version = pre.sysbench_version.clone();
        let prepared = Prepared {
            host: pre.host,
            disk: pre.disk,
            fio_version: pre.fio_version.unwrap_or_default(),
            direct: pre.direct,
        };
        Ok((runner, prepared))
    }

    fn remote(&self, problem: String) -> ProbeError {
        ProbeError::Remote {
            host: self.target.dest.host_port(),
            problem,
        }
    }

    /// One `ssh HOST sh -s` session running `script`. A failure of ssh itself (status 255)
    /// is an error naming the host; the script's own status is the caller's to judge.
    fn session(
        &self,
        script: &str,
        limit: Duration,
        cancel: &Cancel,
        what: &str,
    ) -> Result<Captured, ProbeError> {
        let mut cmd = Command::new("ssh");
        cmd.args(self.target.ssh_args()).arg("sh -s");
        let out = match run_piped(&mut cmd, script.as_bytes(), limit, cancel) {
            Ok(out) => out,
            Err(Stopped::Interrupted) => return Err(ProbeError::Interrupted),
            Err(Stopped::TimedOut) => {
                return Err(ProbeError::Timeout {
                    tool: "ssh",
                    what: format!("{what} on {}", self.target.dest.host_port()),
                    limit_s: limit.as_secs(),
                });
            }
            Err(Stopped::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ProbeError::SshMissing);
            }
            Err(Stopped::Spawn(e)) => {
                return Err(self.remote(format!("could not be reached: running ssh: {e}")));
            }
        };
        if out.status.code() == Some(255) {
            return Err(self.remote(ssh_failure(&out.stderr, self.target.connect_timeout_s)));
        }
        Ok(out)
    }

    fn sysbench_run(
        &self,
        threads: usize,
        time: Duration,
        cancel: &Cancel,
    ) -> Result<f64, ProbeError> {
        let time_s = time.as_secs().max(1);
        let script = sysbench_script(&self.sysbench, threads, time_s);
        let limit = Duration::from_secs(time_s + 30 + self.target.connect_timeout_s);
        let out = self.session(&script, limit, cancel, "sysbench")?;
        if !out.status.success() {
            return Err(self.remote(format!(
                "could not run sysbench ({}): {}",
                out.status,
                first_line(&out.stdout)
            )));
        }
        super::cpu::parse_events_per_s(&out.stdout).ok_or_else(|| {
            self.remote("ran sysbench, which printed no 'events per second'".to_string())
        })
    }
}

impl Runner for SshRunner {
    fn cpu(
        &mut self,
        threads: usize,
        time: Duration,
        _notes: &mut Vec<String>,
        cancel: &Cancel,
    ) -> Result<CpuFigures, ProbeError> {
        let one = self.sysbench_run(1, time, cancel)?;
        let all = self.sysbench_run(threads, time, cancel)?;
        Ok(CpuFigures {
            source: CpuSource::Sysbench,
            tool_version: self.sysbench_version.clone().unwrap_or_default(),
            threads,
            duration_s: time.as_secs_f64(),
            events_s_1_thread: one,
            events_s_all_threads: all,
        })
    }

    fn fio(
        &mut self,
        profile: Profile,
        job: &str,
        limit: Duration,
        cancel: &Cancel,
    ) -> Result<FioReport, ProbeError> {
        let script = fio_script(&self.scratch, &self.fio, profile, job);
        let limit = limit + Duration::from_secs(self.target.connect_timeout_s);
        let out = self.session(&script, limit, cancel, &format!("fio profile {profile}"))?;
        match out.status.code() {
            Some(0) => {}
            Some(NO_SCRATCH) => {
                return Err(self.remote(format!(
                    "lost the scratch directory '{}' during the probe",
                    self.scratch
                )));
            }
            _ => {
                return Err(ProbeError::FioFailed {
                    profile,
                    message: format!("{}: {}", out.status, first_line(&out.stderr)),
                });
            }
        }
        fio_json::parse(&out.stdout).map_err(|e| ProbeError::FioOutput {
            profile,
            message: e.0,
        })
    }
}

impl Drop for SshRunner {
    /// Removes the scratch directory there, even after Ctrl-C (with a cancellation of its own).
    fn drop(&mut self) {
        if self.created {
            let limit = Duration::from_secs(self.target.connect_timeout_s + 20);
            let _ = self.session(
                &cleanup_script(&self.scratch),
                limit,
                &Cancel::new(),
                "removing the scratch directory",
            );
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
        .unwrap_or("no message")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::probe::Timing;

    fn spec(cpu: bool) -> ProbeSpec {
        ProbeSpec {
            dir: "/data".into(),
            env: "db1".into(),
            quick: true,
            timing: Timing::QUICK,
            profiles: vec![Profile::RandRead4k],
            cpu,
            fio_path: "fio".into(),
            sysbench_path: "/opt/sysbench".into(),
            write_jobs_dir: None,
            out: "/r.json".into(),
            tags: Vec::new(),
            remote: None,
        }
    }

    /// Runs a script with the local `sh -s`, as the remote side does.
    fn sh(script: &str) -> Captured {
        run_piped(
            Command::new("sh").arg("-s"),
            script.as_bytes(),
            Duration::from_secs(30),
            &Cancel::new(),
        )
        .unwrap()
    }

    const SAMPLE: &str = "hostname=db1\nkernel=6.1.0-18-amd64\ncores=8\n\
        ram_kib=32768000\ncpu_model=AMD EPYC 7B13\n\
        fio=fio-3.33\nsysbench=sysbench 1.0.20\ndir=ok\navail_kib=10485760\n\
        df=/dev/nvme1n1 xfs 104857600 1024 104856576 1% /data\ndirect=1\n";

    #[test]
    fn preflight_output_parses_into_facts() {
        let p = Preflight::parse(SAMPLE).unwrap();
        assert_eq!(p.host.hostname, "db1");
        assert_eq!(p.host.cores, 8);
        assert_eq!(p.host.ram_bytes, 32768000 * 1024);
        assert_eq!(p.host.cpu_model, "AMD EPYC 7B13");
        assert_eq!(p.host.kernel, "6.1.0-18-amd64");
        assert_eq!(p.fio_version.as_deref(), Some("fio-3.33"));
        assert_eq!(p.dir, DirState::Ok);
        assert_eq!(p.avail_bytes, Some(10 << 30));
        assert_eq!(p.disk.as_ref().unwrap().fs_type, "xfs");
        assert!(p.direct);
        assert!(p.problems(&spec(true)).is_empty());
        assert_eq!(Preflight::parse("hostname=x\n"), None);
    }

    #[test]
    fn every_missing_thing_is_named_in_one_list() {
        let text = SAMPLE
            .replace("fio=fio-3.33\n", "")
            .replace("sysbench=sysbench 1.0.20\n", "")
            .replace("avail_kib=10485760", "avail_kib=1024");
        let p = Preflight::parse(&text).unwrap();
        let problems = p.problems(&spec(true));
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with(
            "has no fio (looked for 'fio' on its PATH): install it there (apt-get install -y fio)"
        ));
        assert!(problems[1].contains("has no sysbench (looked for '/opt/sysbench')"));
        assert!(problems[1].contains("--skip-cpu"));
        assert!(problems[2].contains("has 1 MiB free in '/data', the probe needs 320 MiB"));
        // Without the CPU score, sysbench is not needed.
        assert_eq!(p.problems(&spec(false)).len(), 2);
        let p =
            Preflight::parse(&SAMPLE.replace("dir=ok", "dir=unwritable mkdir: Permission denied"))
                .unwrap();
        assert_eq!(
            p.problems(&spec(true)),
            ["does not let this user write in '/data': mkdir: Permission denied"]
        );
        let p = Preflight::parse(&SAMPLE.replace("dir=ok", "dir=missing")).unwrap();
        assert!(p.problems(&spec(true))[0].starts_with("has no directory '/data'"));
    }

    #[test]
    fn ssh_failures_are_told_apart() {
        let refused = "ssh: connect to host 127.0.0.1 port 1: Connection refused\n";
        assert_eq!(
            ssh_failure(refused, 10),
            "could not be reached over ssh: ssh: connect to host 127.0.0.1 port 1: Connection refused"
        );
        let auth = "Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts.\r\nroot@127.0.0.1: Permission denied (publickey).\n";
        assert!(ssh_failure(auth, 10).starts_with("refused the ssh login"));
        let slow = "ssh: connect to host 10.255.255.1 port 22: Connection timed out\n";
        assert!(ssh_failure(slow, 7).starts_with("did not answer within 7 s"));
        assert!(ssh_failure("Host key verification failed.\n", 10).contains("host key"));
        assert!(ssh_failure("", 10).contains("no message"));
    }

    #[test]
    fn quoting_survives_the_shell() {
        for s in ["plain", "it's", "a b", "$(rm -rf /)", "'\"\\"] {
            let out = sh(&script(&format!("printf '%s' {}", sh_quote(s))));
            assert_eq!(out.stdout, s);
        }
    }

    /// The checks, run by the local shell on a temporary directory: what they find, and the
    /// scratch directory they create.
    #[test]
    fn preflight_script_runs_in_a_posix_shell() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let scratch = format!("{d}/.cqlbench-probe-remote-1-2");
        let out = sh(&preflight_script(
            d,
            &scratch,
            "sh",
            Some("no-such-sysbench-x"),
        ));
        assert!(out.status.success(), "{out:?}");
        let p = Preflight::parse(&out.stdout).unwrap_or_else(|| panic!("{out:?}"));
        assert_eq!(p.dir, DirState::Ok);
        assert!(p.host.cores >= 1 && p.host.ram_bytes > 0, "{p:?}");
        assert!(p.fio_version.is_some(), "sh counts as the fio here: {p:?}");
        assert_eq!(p.sysbench_version, None);
        assert!(p.avail_bytes.unwrap() > 0);
        assert!(p.disk.is_some(), "{out:?}");
        assert!(std::path::Path::new(&scratch).is_dir());
        assert!(sh(&cleanup_script(&scratch)).status.success());
        assert!(!std::path::Path::new(&scratch).exists());
        let missing = format!("{d}/nope");
        let out = sh(&preflight_script(
            &missing,
            &format!("{missing}/s"),
            "/no/fio",
            None,
        ));
        let p = Preflight::parse(&out.stdout).unwrap();
        assert_eq!((p.dir, p.fio_version), (DirState::Missing, None));
    }

    #[test]
    fn guarded_commands_report_their_status() {
        let out = sh(&script("guard sh -c 'echo hi; exit 4'\nexit \"$?\""));
        assert_eq!((out.stdout.as_str(), out.status.code()), ("hi\n", Some(4)));
    }

    /// A guarded command stops when the session's standard input closes (a dropped
    /// connection, a stopped `ssh`): here it closes right after the script.
    #[test]
    fn guarded_commands_stop_when_the_input_closes() {
        use std::io::Write;
        let started = std::time::Instant::now();
        let mut child = Command::new("sh")
            .arg("-s")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(script("guard sleep 30\nexit \"$?\"").as_bytes())
            .unwrap();
        drop(stdin);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(128 + 15), "sleep ended by SIGTERM");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn fio_script_writes_the_job_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        // A stand-in fio that writes the JSON file it was asked for.
        let fake = dir.path().join("fake-fio");
        std::fs::write(
            &fake,
            "#!/bin/sh\nout=${2#--output=}\ncat \"$3\" > \"$out\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let out = sh(&fio_script(
            d,
            fake.to_str().unwrap(),
            Profile::Lcs,
            "[job]\nit's\n",
        ));
        assert!(out.status.success(), "{out:?}");
        assert_eq!(out.stdout, "[job]\nit's\n");
        assert!(!dir.path().join("lcs.json").exists());
        let out = sh(&fio_script(&format!("{d}/gone"), "fio", Profile::Lcs, "x"));
        assert_eq!(out.status.code(), Some(NO_SCRATCH));
    }
}
