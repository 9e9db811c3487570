//! Facts about the machine cqlbench runs on (read from /proc), used by the topology plan
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
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        HostFacts {
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            cpu_model: parse_cpu_model(&cpuinfo),
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            ram_bytes: parse_mem_total_bytes(&meminfo).unwrap_or(0),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        }
    }
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The `model name` of the first CPU in /proc/cpuinfo.
pub fn parse_cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// `MemTotal` of /proc/meminfo, in bytes.
pub fn parse_mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let cpu = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(parse_cpu_model(cpu), "AMD EPYC 7B13");
        let mem = "MemTotal:       24567344 kB\nMemFree:        1 kB\n";
        assert_eq!(parse_mem_total_bytes(mem), Some(24567344 * 1024));
        assert_eq!(parse_mem_total_bytes("nothing"), None);
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
    stat_cpu_seconds("/proc/self/stat").unwrap_or(0.0)
}

/// utime + stime from a `/proc/<pid>/stat` file, in seconds; `None` when it cannot be read
/// (the process is gone).
pub fn stat_cpu_seconds(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of stat are utime and stime; `rest` starts at field 3.
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(ticks as f64 / hz)
}

/// Peak resident set size of this process (VmHWM), in bytes.
pub fn max_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| {
                    v.split_whitespace()
                        .next()
                        .and_then(|n| n.parse::<u64>().ok())
                })
        })
        .map(|kib| kib * 1024)
        .unwrap_or(0)
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
