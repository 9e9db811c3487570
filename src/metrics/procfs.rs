//! Host counters from /proc: CPU times (/proc/stat), block-device counters (/proc/diskstats)
//! and a process's CPU time (/proc/PID/stat).

use crate::result::series::DeviceSample;

/// Aggregate CPU times, in clock ticks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes {
    /// user + nice.
    pub user: u64,
    /// system + irq + softirq.
    pub system: u64,
    pub iowait: u64,
    pub idle: u64,
    pub steal: u64,
}

impl CpuTimes {
    pub fn total(&self) -> u64 {
        self.user + self.system + self.iowait + self.idle + self.steal
    }
}

/// The `cpu` line of /proc/stat.
pub fn parse_cpu_times(stat: &str) -> Option<CpuTimes> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTimes {
        user: at(0) + at(1),
        system: at(2) + at(5) + at(6),
        idle: at(3),
        iowait: at(4),
        steal: at(7),
    })
}

pub fn cpu_times() -> Option<CpuTimes> {
    parse_cpu_times(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// One device's cumulative counters from /proc/diskstats.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskCounters {
    pub name: String,
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    /// Milliseconds the device was busy (had I/O in flight).
    pub busy_ms: u64,
    /// Weighted milliseconds doing I/O (the integral of the queue length).
    pub weighted_ms: u64,
}

impl DiskCounters {
    /// The figures of the period from `prev` to `self`, `secs` long.
    pub fn delta(&self, prev: &DiskCounters, secs: f64) -> DeviceSample {
        let d = |a: u64, b: u64| a.saturating_sub(b) as f64;
        let reads = d(self.reads, prev.reads);
        let writes = d(self.writes, prev.writes);
        let per = |ms: f64, n: f64| if n > 0.0 { ms / n } else { 0.0 };
        let secs = secs.max(1e-9);
        DeviceSample {
            read_iops: reads / secs,
            write_iops: writes / secs,
            read_mb_s: d(self.read_sectors, prev.read_sectors) * 512.0 / 1e6 / secs,
            write_mb_s: d(self.write_sectors, prev.write_sectors) * 512.0 / 1e6 / secs,
            read_latency_ms: per(d(self.read_ms, prev.read_ms), reads),
            write_latency_ms: per(d(self.write_ms, prev.write_ms), writes),
            avg_queue: d(self.weighted_ms, prev.weighted_ms) / (secs * 1000.0),
            util: (d(self.busy_ms, prev.busy_ms) / (secs * 1000.0)).min(1.0),
        }
    }
}

pub fn parse_diskstats(text: &str) -> Vec<DiskCounters> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 14 {
                return None;
            }
            let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
            Some(DiskCounters {
                name: f[2].to_string(),
                reads: n(3),
                read_sectors: n(5),
                read_ms: n(6),
                writes: n(7),
                write_sectors: n(9),
                write_ms: n(10),
                busy_ms: n(12),
                weighted_ms: n(13),
            })
        })
        .collect()
}

pub fn disk_counters() -> Vec<DiskCounters> {
    std::fs::read_to_string("/proc/diskstats")
        .map(|t| parse_diskstats(&t))
        .unwrap_or_default()
}

/// Whether a block device is worth sampling: not a loop, ram or zram device.
pub fn is_sampled_device(name: &str) -> bool {
    !["loop", "ram", "zram"].iter().any(|p| name.starts_with(p))
}

/// Whole block devices worth sampling: those in /sys/block, without loop, ram and zram
/// devices.
pub fn block_devices() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| is_sampled_device(n))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// CPU time (user + system) of process `pid`, in seconds; `None` when it is gone.
pub fn pid_cpu_seconds(pid: u32) -> Option<f64> {
    crate::host::stat_cpu_seconds(&format!("/proc/{pid}/stat"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_line_is_grouped_into_user_system_iowait() {
        let c = parse_cpu_times("cpu  100 5 40 800 30 2 3 7 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!(
            (c.user, c.system, c.iowait, c.idle, c.steal),
            (105, 45, 30, 800, 7)
        );
        assert_eq!(c.total(), 987);
        assert!(parse_cpu_times("intr 1 2").is_none());
    }

    #[test]
    fn diskstats_deltas_give_iostat_figures() {
        let a = parse_diskstats(
            " 254 0 vda 100 0 800 50 200 0 1600 400 0 300 1000 0 0 0 0\n 7 0 loop0 0 0 0 0 0 0 0 0\n",
        );
        assert_eq!(a.len(), 1, "short lines are skipped");
        let b = parse_diskstats(" 254 0 vda 150 0 2800 150 300 0 3600 600 0 800 3000 0 0 0 0\n");
        let s = b[0].delta(&a[0], 2.0);
        assert_eq!(s.read_iops, 25.0);
        assert_eq!(s.write_iops, 50.0);
        assert!((s.read_mb_s - 2000.0 * 512.0 / 1e6 / 2.0).abs() < 1e-9);
        assert_eq!(s.read_latency_ms, 2.0);
        assert_eq!(s.write_latency_ms, 2.0);
        assert_eq!(s.avg_queue, 1.0);
        assert_eq!(s.util, 0.25);
    }

    #[test]
    fn this_process_has_cpu_time_and_a_dead_pid_has_none() {
        assert!(pid_cpu_seconds(std::process::id()).is_some());
        assert!(pid_cpu_seconds(u32::MAX - 1).is_none());
    }
}
