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
