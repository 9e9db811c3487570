//! Facts about the machine cqlbench runs on (read from /proc with the `procfs` crate), used by the topology plan
//! (default heap), the environment fingerprint of results, and the probe.

use serde::{Deserialize, Serialize};

/// What a result records about the host it ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: usize,
    pub ram_bytes: u64,
    pub kernel: String,
}

impl HostFacts {
    /// Reads the facts of this machine. Missing files give empty or zero fields, never an error.
    pub fn read() -> HostFacts {
        use procfs::Current;
        HostFacts {
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            cpu_model: procfs::CpuInfo::current()
                .ok()
                .and_then(|c| c.model_name(0).map(str::to_string))
                .unwrap_or_default(),
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            ram_bytes: procfs::Meminfo::current().map_or(0, |m| m.mem_total),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        }
    }
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_hosts_facts_are_read() {
        let h = HostFacts::read();
        assert!(h.ram_bytes > 0, "{h:?}");
        assert!(!h.kernel.is_empty(), "{h:?}");
        if cfg!(target_arch = "x86_64") {
            // x86's /proc/cpuinfo names the model on every processor's first lines.
            assert!(!h.cpu_model.is_empty(), "{h:?}");
        }
    }
}

/// Seconds since the Unix epoch, now (fractional).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Whole seconds since the Unix epoch, now.
pub fn unix_now_s() -> u64 {
    unix_now() as u64
}

/// CPU time (user + system) this process has used, in seconds.
pub fn process_cpu_seconds() -> f64 {
    procfs::process::Process::myself()
        .ok()
        .and_then(|p| cpu_seconds(&p))
        .unwrap_or(0.0)
}

/// Process `pid` of /proc, if it exists.
pub fn process(pid: u32) -> Option<procfs::process::Process> {
    procfs::process::Process::new(i32::try_from(pid).ok()?).ok()
}

/// utime + stime of `process` (/proc/PID/stat), in seconds; `None` when it cannot be read
/// (the process is gone).
pub fn cpu_seconds(process: &procfs::process::Process) -> Option<f64> {
    let stat = process.stat().ok()?;
    Some((stat.utime + stat.stime) as f64 / procfs::ticks_per_second().max(1) as f64)
}

/// Peak resident set size of this process (VmHWM of /proc/self/status), in bytes.
pub fn max_rss_bytes() -> u64 {
    procfs::process::Process::myself()
        .and_then(|p| p.status())
        .ok()
        .and_then(|s| s.vmhwm)
        .map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
mod usage_tests {
    #[test]
    fn cpu_and_rss_of_this_process_are_read() {
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(300) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        assert!(
            super::process_cpu_seconds() >= 0.1,
            "{}",
            super::process_cpu_seconds()
        );
        assert!(super::max_rss_bytes() > 1 << 20);
    }
}

/// The calling thread confined to some CPUs until dropped: what it starts (and what
/// `available_parallelism` sees) uses only those, e.g. a probe of a local cluster emulating a
/// smaller host (`--host-cpus`).
pub struct Pinned {
    previous: libc::cpu_set_t,
}

impl Pinned {
    /// Confines the calling thread to `cpus` (not empty).
    pub fn to(cpus: &[usize]) -> std::io::Result<Pinned> {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: cpu_set_t is plain data; the calls read and write only the sets given.
        unsafe {
            let mut previous: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size, &mut previous) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            if libc::sched_setaffinity(0, size, &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Pinned { previous })
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: restores the set read in `to`.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.previous);
        }
    }
}

#[cfg(test)]
mod pin_tests {
    use super::*;

    #[test]
    fn a_pinned_thread_sees_only_its_cpus_until_dropped() {
        // On its own thread: the test harness's threads keep their masks.
        std::thread::spawn(|| {
            let before = HostFacts::read().cores;
            {
                let _pin = Pinned::to(&[0]).unwrap();
                assert_eq!(HostFacts::read().cores, 1);
                // What it starts inherits the set.
                let out = std::process::Command::new("grep")
                    .args(["Cpus_allowed_list", "/proc/self/status"])
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout).to_string();
                assert!(text.trim().ends_with("\t0"), "{text}");
            }
            assert_eq!(HostFacts::read().cores, before);
        })
        .join()
        .unwrap();
    }
}
