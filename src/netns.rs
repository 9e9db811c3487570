//! Linux network namespaces by name (`/run/netns/NAME`, as `ip netns` keeps them): joining one
//! on the calling thread for a while ([`Entered`]), running a closure on a thread inside one
//! ([`run_in`]), and a child process started inside one ([`in_child`]).
//!
//! A namespace belongs to a thread: threads created by a thread that has joined one are born
//! in it (a runtime built after [`enter`] has all its workers there), threads created before
//! stay where they were.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

/// Where `ip netns` keeps the namespaces it names.
pub const NETNS_DIR: &str = "/run/netns";

/// Why a namespace could not be joined.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    #[error(
        "network namespace '{name}' does not exist ({path}: {cause}); `ip netns list` shows those that do"
    )]
    Open {
        name: String,
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("joining network namespace '{name}': {cause} (it needs root)")]
    Join { name: String, cause: std::io::Error },
}

/// The path of namespace `name`.
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(NETNS_DIR).join(name)
}

/// True if a namespace named `name` exists.
pub fn exists(name: &str) -> bool {
    valid_name(name) && path(name).exists()
}

/// A name `ip netns` takes and that cannot leave its directory.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.')
}

/// The name `ip netns` gives the namespace the calling thread is in; None when it has none
/// (this host's own network, or a namespace made another way).
pub fn current() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &std::path::Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let mine = id(std::path::Path::new("/proc/thread-self/ns/net"))?;
    std::fs::read_dir(NETNS_DIR)
        .ok()?
        .flatten()
        .find(|e| id(&e.path()) == Some(mine))
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// Opens namespace `name` (a handle to join it with, from this process or a child).
pub fn open(name: &str) -> Result<File, NetnsError> {
    let p = path(name);
    if !valid_name(name) {
        return Err(NetnsError::Open {
            name: name.into(),
            path: p,
            cause: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a namespace name"),
        });
    }
    File::open(&p).map_err(|cause| NetnsError::Open {
        name: name.into(),
        path: p,
        cause,
    })
}

fn setns(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: setns has no memory-safety preconditions; it changes this thread's namespace.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The calling thread inside a namespace until dropped, when it returns to the one it was in.
#[derive(Debug)]
pub struct Entered {
    back: Option<File>,
    pub name: String,
}

/// Moves the calling thread into namespace `name` (threads it creates from now on are born
/// there) until the guard is dropped.
pub fn enter(name: &str) -> Result<Entered, NetnsError> {
    let target = open(name)?;
    let back = File::open("/proc/thread-self/ns/net").ok();
    setns(target.as_raw_fd()).map_err(|cause| NetnsError::Join {
        name: name.into(),
        cause,
    })?;
    Ok(Entered {
        back,
        name: name.into(),
    })
}

impl Entered {
    /// Stays in the namespace for the rest of this thread's life (a command that runs there
    /// as a whole).
    pub fn keep(mut self) {
        self.back = None;
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some(back) = self.back.take() {
            let _ = setns(back.as_raw_fd());
        }
    }
}

/// Runs `f` on a thread of its own inside namespace `name` (sockets it opens stay there).
pub fn run_in<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> Result<T, NetnsError> {
    let target = open(name)?;
    std::thread::scope(|s| {
        s.spawn(|| {
            setns(target.as_raw_fd()).map_err(|cause| NetnsError::Join {
                name: name.into(),
                cause,
            })?;
            Ok(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// Makes `cmd` start inside namespace `name` (joined between fork and exec).
pub fn in_child(cmd: &mut std::process::Command, name: &str) -> Result<(), NetnsError> {
    let ns = open(name)?;
    // SAFETY: setns is async-signal-safe; `ns` is moved into the closure and outlives the fork.
    unsafe {
        cmd.pre_exec(move || setns(ns.as_raw_fd()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_the_directory_are_refused() {
        for bad in ["", "..", "a/b", ".hidden", "a b", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
            assert!(matches!(open(bad), Err(NetnsError::Open { .. })), "{bad:?}");
        }
        assert!(valid_name("cqb-lab1-c1"));
    }

    #[test]
    fn a_missing_namespace_is_named_in_one_line() {
        let e = enter("cqlbench-test-no-such-namespace").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("'cqlbench-test-no-such-namespace' does not exist"));
        assert!(!text.contains('\n'));
        assert!(run_in("cqlbench-test-no-such-namespace", || ()).is_err());
        assert!(!exists("cqlbench-test-no-such-namespace"));
    }
}
