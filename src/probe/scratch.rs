//! The scratch directory the test files live in, and checks on its filesystem: free space
//! (statvfs) and O_DIRECT support.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::ProbeError;

/// Prefix of scratch directories: `<dir>/.cqlbench-probe-<pid>`.
pub const SCRATCH_PREFIX: &str = ".cqlbench-probe-";

/// A directory removed with everything in it when dropped — on success, on error and on
/// interruption (the probe turns SIGINT/SIGTERM into an error that unwinds through here).
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Creates `<dir>/.cqlbench-probe-<pid>`. A failure means `dir` is not writable.
    pub fn create(dir: &Path) -> Result<Scratch, ProbeError> {
        if dir.exists() && !dir.is_dir() {
            return Err(ProbeError::NotADir {
                dir: dir.to_path_buf(),
            });
        }
        if !dir.is_dir() {
            return Err(ProbeError::DirMissing {
                dir: dir.to_path_buf(),
            });
        }
        let path = dir.join(format!("{SCRATCH_PREFIX}{}", std::process::id()));
        std::fs::create_dir(&path).map_err(|source| ProbeError::NotWritable {
            dir: dir.to_path_buf(),
            source,
        })?;
        // Being able to create a directory is not always being able to write a file in it.
        let scratch = Scratch { path };
        let probe_file = scratch.path.join("write-check");
        std::fs::write(&probe_file, b"cqlbench").map_err(|source| ProbeError::NotWritable {
            dir: dir.to_path_buf(),
            source,
        })?;
        let _ = std::fs::remove_file(&probe_file);
        Ok(scratch)
    }

    /// Removes scratch directories left in `dir` by probes that were killed outright (SIGKILL,
    /// power loss): those whose pid is no longer running. Returns the names removed.
    pub fn remove_stale(dir: &Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(SCRATCH_PREFIX)
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let alive = Path::new("/proc").join(pid.to_string()).exists();
            if !alive && entry.path().is_dir() && std::fs::remove_dir_all(entry.path()).is_ok() {
                removed.push(name);
            }
        }
        removed
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes one file of the scratch directory if present.
    pub fn remove_file(&self, name: &str) {
        let _ = std::fs::remove_file(self.path.join(name));
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Bytes available to an unprivileged user on the filesystem of `dir`.
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    let c_path = CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: statvfs writes into a zeroed struct we own; the path is NUL-terminated.
    let stat = unsafe {
        let mut stat: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c_path.as_ptr(), &mut stat) != 0 {
            return Err(io::Error::last_os_error());
        }
        stat
    };
    #[allow(clippy::unnecessary_cast)] // the field types differ between targets
    Ok(stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// Whether files in `dir` can be opened with O_DIRECT and written with an aligned 4 KiB block.
/// Filesystems that refuse O_DIRECT fail with EINVAL; any other error is returned.
pub fn supports_direct_io(dir: &Path) -> io::Result<bool> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;

    let path = dir.join("direct-check");
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path);
    let result = match opened {
        Ok(mut file) => {
            let block = AlignedBlock::new();
            match file.write_all(block.bytes()) {
                Ok(()) => Ok(true),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(false),
                Err(e) => Err(e),
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(false),
        Err(e) => Err(e),
    };
    let _ = std::fs::remove_file(&path);
    result
}

/// A zeroed 4 KiB buffer aligned to 4 KiB, as O_DIRECT requires.
struct AlignedBlock {
    ptr: *mut u8,
}

impl AlignedBlock {
    const LAYOUT: std::alloc::Layout = match std::alloc::Layout::from_size_align(4096, 4096) {
        Ok(l) => l,
        Err(_) => panic!("bad layout"),
    };

    fn new() -> AlignedBlock {
        // SAFETY: non-zero size layout; a null result is handled.
        let ptr = unsafe { std::alloc::alloc_zeroed(Self::LAYOUT) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(Self::LAYOUT);
        }
        AlignedBlock { ptr }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: ptr points to 4096 initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, Self::LAYOUT.size()) }
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with the same layout.
        unsafe { std::alloc::dealloc(self.ptr, Self::LAYOUT) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_is_removed_with_its_files_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(dir.path()).unwrap();
        let p = scratch.path().to_path_buf();
        std::fs::write(p.join("data.0"), vec![0u8; 8192]).unwrap();
        assert!(p.is_dir());
        drop(scratch);
        assert!(!p.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn stale_scratch_dirs_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // pid_max is at most 2^22, so this pid cannot be running.
        let dead = dir.path().join(format!("{SCRATCH_PREFIX}99999999"));
        let alive = dir
            .path()
            .join(format!("{SCRATCH_PREFIX}{}", std::process::id()));
        let other = dir.path().join(".cqlbench-probe-notapid");
        for d in [&dead, &alive, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("data.0"), b"x").unwrap();
        }
        let removed = Scratch::remove_stale(dir.path());
        assert_eq!(removed, vec![format!("{SCRATCH_PREFIX}99999999")]);
        assert!(!dead.exists() && alive.exists() && other.exists());
    }

    #[test]
    fn scratch_errors_name_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let err = Scratch::create(&missing).unwrap_err();
        assert!(matches!(err, ProbeError::DirMissing { .. }), "{err}");
        assert!(err.to_string().contains("nope"));
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let err = Scratch::create(&file).unwrap_err();
        assert!(matches!(err, ProbeError::NotADir { .. }), "{err}");
        // sysfs refuses new directories even to root.
        let err = Scratch::create(Path::new("/sys")).unwrap_err();
        assert!(matches!(err, ProbeError::NotWritable { .. }), "{err}");
    }

    #[test]
    fn statvfs_and_direct_io_checks_run_on_a_real_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(dir.path()).unwrap();
        assert!(free > 0);
        // The answer depends on the filesystem; the check must not error or leave files.
        supports_direct_io(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(free_bytes(&dir.path().join("missing")).is_err());
    }
}
