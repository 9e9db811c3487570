//! A node's memory, bounded as an instance's RAM would bound it (`cluster create
//! --node-memory`): each node runs in a cgroup v1 memory group of its own whose limit covers
//! what the kernel charges to it — the JVM's heap and off-heap memory and the page cache of
//! the files it reads and writes (data files, mmapped indexes, commitlog). When the node's
//! working set exceeds the limit, the kernel reclaims its cached pages first, so reads that
//! no longer fit come from its disk (an emulated one with `--storage`) as on an instance
//! whose RAM is smaller than its data. Anonymous memory is not reclaimed without swap: a JVM
//! that outgrows the limit is killed by the kernel's OOM killer, which shows as a node death.
//!
//! The group is `/sys/fs/cgroup/memory/cqlbench/<cluster>-<node>-<inode of the node's
//! directory>`: unique per node directory, so clusters of the same name in other directories
//! do not share it. It is made and limited before the JVM starts, the JVM joins it between
//! fork and exec, and it is removed when the node stops.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where cgroup v1's memory controller is mounted.
const MEMORY: &str = "/sys/fs/cgroup/memory";

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error(
        "node memory limits need root and cgroup v1's memory controller ({MEMORY}): {0}; create the cluster without --node-memory"
    )]
    Unsupported(String),
    #[error("{}: {detail}", path.display())]
    Io { path: PathBuf, detail: String },
}

fn io(path: &Path, e: std::io::Error) -> MemoryError {
    MemoryError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Whether this host can bound a node's memory.
pub fn check_supported() -> Result<(), MemoryError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(MemoryError::Unsupported("not running as root".into()));
    }
    if !Path::new(MEMORY).join("memory.limit_in_bytes").exists() {
        return Err(MemoryError::Unsupported(format!(
            "{MEMORY}/memory.limit_in_bytes does not exist"
        )));
    }
    Ok(())
}

/// The memory group of the node whose directory is `node_dir`.
pub fn group(cluster: &str, node: &str, node_dir: &Path) -> Result<PathBuf, MemoryError> {
    let ino = std::fs::metadata(node_dir)
        .map_err(|e| io(node_dir, e))?
        .ino();
    Ok(Path::new(MEMORY)
        .join("cqlbench")
        .join(format!("{cluster}-{node}-{ino}")))
}

/// Makes the group (or keeps it) with `limit_mib` as its limit; returns the file a process
/// writes `0` to, to join it.
pub fn prepare(group: &Path, limit_mib: u64) -> Result<PathBuf, MemoryError> {
    check_supported()?;
    std::fs::create_dir_all(group).map_err(|e| io(group, e))?;
    let limit = group.join("memory.limit_in_bytes");
    let bytes = limit_mib
        .checked_mul(1024 * 1024)
        .ok_or_else(|| MemoryError::Unsupported(format!("{limit_mib} MiB is too large a limit")))?;
    std::fs::write(&limit, bytes.to_string()).map_err(|e| io(&limit, e))?;
    Ok(group.join("cgroup.procs"))
}

/// Removes the group of a node that has stopped; a group gone already is left as it is. The
/// kernel refuses (busy) while the node's last threads are still exiting, which on a loaded
/// host can outlast the process's own exit: retried for up to 10 s, then left (a group still
/// holding a live process is never removed).
pub fn remove(group: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match std::fs::remove_dir(group) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(_) => return,
        }
    }
}

/// The group's limit and what is charged to it now: (limit, usage, page cache) in bytes.
pub fn usage(group: &Path) -> Option<(u64, u64, u64)> {
    let read = |f: &str| -> Option<u64> {
        std::fs::read_to_string(group.join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let cache = std::fs::read_to_string(group.join("memory.stat"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("cache ")?.trim().parse().ok())?;
    Some((
        read("memory.limit_in_bytes")?,
        read("memory.usage_in_bytes")?,
        cache,
    ))
}
