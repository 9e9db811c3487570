//! Running fio and sysbench as child processes that can be stopped: each child gets its own
//! process group; on cancellation ([`Cancel`]) or a time limit the whole group
//! gets SIGTERM, then SIGKILL if it lingers, and is reaped before the caller goes on to remove
//! the scratch directory.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::cancel::Cancel;

/// Why a child did not finish on its own.
#[derive(Debug)]
pub enum Stopped {
    Spawn(std::io::Error),
    Interrupted,
    TimedOut,
}

/// Runs `cmd` to completion, polling for interruption; stdout/stderr must already be set up
/// by the caller (to files, so a full pipe can never block the child).
pub fn run(cmd: &mut Command, limit: Duration, cancel: &Cancel) -> Result<ExitStatus, Stopped> {
    let mut child = cmd.process_group(0).spawn().map_err(Stopped::Spawn)?;
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {}
            Err(e) => {
                stop(&mut child);
                return Err(Stopped::Spawn(e));
            }
        }
        if cancel.is_cancelled() {
            stop(&mut child);
            return Err(Stopped::Interrupted);
        }
        if Instant::now() >= deadline {
            stop(&mut child);
            return Err(Stopped::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGTERM to the child's process group, up to 5 s to exit, then SIGKILL; always reaped.
pub(super) fn stop(child: &mut Child) {
    let group = -(child.id() as libc::pid_t);
    // SAFETY: signalling the process group we created for this child.
    unsafe {
        libc::kill(group, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(group, libc::SIGKILL);
    }
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_to_completion_and_stops_at_the_time_limit() {
        let go = Cancel::new();
        let status = run(Command::new("true").arg(""), Duration::from_secs(10), &go).unwrap();
        assert!(status.success());
        let started = Instant::now();
        let err = run(
            Command::new("sleep").arg("30"),
            Duration::from_millis(200),
            &go,
        )
        .unwrap_err();
        assert!(matches!(err, Stopped::TimedOut), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let err = run(
            &mut Command::new("/nonexistent/tool"),
            Duration::from_secs(1),
            &go,
        )
        .unwrap_err();
        assert!(matches!(err, Stopped::Spawn(_)), "{err:?}");
    }

    #[test]
    fn a_cancel_stops_the_child_and_its_group() {
        let cancel = Cancel::new();
        let c = cancel.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            c.cancel();
        });
        let started = Instant::now();
        let err = run(
            Command::new("sleep").arg("30"),
            Duration::from_secs(60),
            &cancel,
        )
        .unwrap_err();
        assert!(matches!(err, Stopped::Interrupted), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        t.join().unwrap();
    }
}
