//! Host counters from /proc, read with the `procfs` crate: CPU times (/proc/stat),
//! block-device counters (/proc/diskstats) and a process's CPU time (/proc/PID/stat).

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

impl From<&::procfs::CpuTime> for CpuTimes {
    /// /proc/stat's `cpu` line grouped: irq and softirq count as system time, nice as user.
    fn from(t: &::procfs::CpuTime) -> Self {
        let or0 = |v: Option<u64>| v.unwrap_or(0);
        CpuTimes {
            user: t.user + t.nice,
            system: t.system + or0(t.irq) + or0(t.softirq),
            idle: t.idle,
            iowait: or0(t.iowait),
            steal: or0(t.steal),
        }
    }
}

/// The host's CPU times now (/proc/stat); `None` where it cannot be read.
pub fn cpu_times() -> Option<CpuTimes> {
    use ::procfs::CurrentSI;
    ::procfs::KernelStats::current()
        .ok()
        .map(|k| CpuTimes::from(&k.total))
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

impl From<&::procfs::DiskStat> for DiskCounters {
    fn from(d: &::procfs::DiskStat) -> Self {
        DiskCounters {
            name: d.name.clone(),
            reads: d.reads,
            read_sectors: d.sectors_read,
            read_ms: d.time_reading,
            writes: d.writes,
            write_sectors: d.sectors_written,
            write_ms: d.time_writing,
            busy_ms: d.time_in_progress,
            weighted_ms: d.weighted_time_in_progress,
        }
    }
}

/// Every block device's counters now (/proc/diskstats); none where it cannot be read.
pub fn disk_counters() -> Vec<DiskCounters> {
    ::procfs::diskstats()
        .map(|v| v.iter().map(DiskCounters::from).collect())
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
    crate::host::cpu_seconds(&crate::host::process(pid)?)
}

/// /proc/stat's and /proc/diskstats' text parsed by the crate, for tests that hold them as
/// text.
#[cfg(test)]
pub mod parse {
    use super::{CpuTimes, DiskCounters};
    use ::procfs::{FromBufRead, FromBufReadSI};

    /// The `cpu` line of a /proc/stat text (with the `ctxt`, `btime` and `processes` lines the
    /// crate expects).
    pub fn cpu_times(stat: &str) -> Option<CpuTimes> {
        let si = ::procfs::ExplicitSystemInfo {
            boot_time_secs: 0,
            ticks_per_second: 100,
            page_size: 4096,
            is_little_endian: true,
        };
        let k = ::procfs::KernelStats::from_buf_read(stat.as_bytes(), &si).ok()?;
        Some(CpuTimes::from(&k.total))
    }

    pub fn diskstats(text: &str) -> Vec<DiskCounters> {
        ::procfs::DiskStats::from_buf_read(text.as_bytes())
            .map(|d| d.0.iter().map(DiskCounters::from).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REST: &str = "ctxt 1\nbtime 2\nprocesses 3\n";

    #[test]
    fn cpu_line_is_grouped_into_user_system_iowait() {
        let stat = format!("cpu  100 5 40 800 30 2 3 7 0 0\ncpu0 1 2 3 4\n{REST}");
        let c = parse::cpu_times(&stat).unwrap();
        assert_eq!(
            (c.user, c.system, c.iowait, c.idle, c.steal),
            (105, 45, 30, 800, 7)
        );
        assert_eq!(c.total(), 987);
        assert!(parse::cpu_times(&format!("intr 1 2\n{REST}")).is_none());
    }

    #[test]
    fn this_hosts_counters_are_read() {
        let c = cpu_times().expect("/proc/stat");
        assert!(c.total() > 0);
        // Whatever devices this host has, each parsed line has a name.
        assert!(disk_counters().iter().all(|d| !d.name.is_empty()));
    }

    #[test]
    fn diskstats_deltas_give_iostat_figures() {
        let a = parse::diskstats(" 254 0 vda 100 0 800 50 200 0 1600 400 0 300 1000 0 0 0 0\n");
        assert_eq!(a.len(), 1);
        let b = parse::diskstats(" 254 0 vda 150 0 2800 150 300 0 3600 600 0 800 3000 0 0 0 0\n");
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
