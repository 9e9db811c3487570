//! Node processes: spawning a detached JVM, checking it is alive (by PID and command line,
//! so a reused PID is not mistaken for a node), signalling it.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Spawns `java args…` in its own session (it outlives cqlbench), with stdout and stderr to
/// `out_file`, pinned to `cpus` when not empty, in the cgroup whose `cgroup.procs` file is
/// `cgroup` when given (joined before exec, so all its memory is charged there), in network
/// namespace `netns` when given. Returns the PID. A thread reaps the child if
/// this process lives long enough to see it exit, so no zombie is left behind.
pub fn spawn_detached(
    java: &Path,
    args: &[String],
    cwd: &Path,
    out_file: &Path,
    cpus: &[usize],
    cgroup: Option<&Path>,
    netns: Option<&str>,
) -> std::io::Result<u32> {
    let procs = cgroup
        .map(|p| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()))
        .transpose()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let out = File::options().create(true).append(true).open(out_file)?;
    let err = out.try_clone()?;
    let mut cmd = Command::new(java);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let cpus = cpus.to_vec();
    // SAFETY: only async-signal-safe libc calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if !cpus.is_empty() {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &c in &cpus {
                    libc::CPU_SET(c, &mut set);
                }
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(procs) = &procs {
                // Writing 0 to a cgroup v1 `cgroup.procs` moves the writer: open, write and
                // close are async-signal-safe.
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                let error = std::io::Error::last_os_error();
                libc::close(fd);
                if written != 1 {
                    return Err(error);
                }
            }
            Ok(())
        });
    }
    if let Some(ns) = netns {
        crate::netns::in_child(&mut cmd, ns).map_err(std::io::Error::other)?;
    }
    let mut child = cmd.spawn()?;
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(pid)
}

/// True if `pid` is a live process whose command line contains `marker`. A process counts as
/// live while any of its threads runs: a JVM's main thread exits (and shows as a zombie)
/// before the shutdown hooks on other threads have finished and released the node's ports.
pub fn is_alive(pid: u32, marker: &str) -> bool {
    let Some(process) = crate::host::process(pid) else {
        return false;
    };
    let Ok(tasks) = process.tasks() else {
        return false;
    };
    // The command line is read through a running thread: a zombie leader's own is empty.
    let running = tasks
        .flatten()
        .find(|t| t.stat().is_ok_and(|s| !matches!(s.state, 'Z' | 'X')));
    let Some(task) = running else {
        return false;
    };
    std::fs::read(format!("/proc/{pid}/task/{}/cmdline", task.tid))
        .map(|c| String::from_utf8_lossy(&c).contains(marker))
        .unwrap_or(false)
}

/// True if the process is stopped (SIGSTOP).
pub fn is_paused(pid: u32) -> bool {
    crate::host::process(pid)
        .and_then(|p| p.stat().ok())
        .is_some_and(|s| s.state == 'T')
}

/// Sends `sig` to `pid`; a process that is already gone is not an error.
pub fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// Process CPU affinity of `pid`, as /proc lists it (`Cpus_allowed_list`: `0-3,6`).
pub fn cpus_allowed(pid: u32) -> Option<String> {
    let list = crate::host::process(pid)?
        .status()
        .ok()?
        .cpus_allowed_list?;
    let ranges: Vec<String> = list
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    Some(ranges.join(","))
}

/// Is `addr:port` free to listen on?
pub fn port_free(addr: &str, port: u16) -> bool {
    std::net::TcpListener::bind((addr, port)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_bogus_pid_is_not() {
        let me = std::process::id();
        assert!(is_alive(me, ""));
        assert!(!is_alive(me, "definitely-not-in-the-command-line-xyz"));
        assert!(!is_alive(u32::MAX - 1, ""));
        assert!(cpus_allowed(me).is_some());
    }

    #[test]
    fn spawned_child_is_pinned_and_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.log");
        let pid = spawn_detached(
            Path::new("sleep"),
            &["30".into()],
            dir.path(),
            &out,
            &[0],
            None,
            None,
        )
        .unwrap();
        assert!(is_alive(pid, "sleep"));
        assert_eq!(cpus_allowed(pid).as_deref(), Some("0"));
        signal(pid, libc::SIGKILL);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while is_alive(pid, "sleep") && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            !is_alive(pid, "sleep"),
            "killed child still alive (or a zombie not reaped)"
        );
    }
}
