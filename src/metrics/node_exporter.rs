//! Host metrics from Prometheus node exporters: a remote node's host seen as /proc shows the
//! local one. A scrape's counters become the /proc counters ([`CpuTimes`], [`DiskCounters`]),
//! and two scrapes give a [`HostSample`] through the very computation two /proc readings go
//! through ([`host_sample`]) — one host model, two sources. The node exporter's metric names
//! are used as they are (`node_cpu_seconds_total{mode}`, `node_disk_*_total`, `node_load1`,
//! `node_memory_*_bytes`, `node_network_*_bytes_total`).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::procfs::{CpuTimes, DiskCounters, is_sampled_device};
use super::prometheus;
use super::reading::rate;
use super::sampler::host_sample;
use crate::result::series::HostSample;

/// A node's host's exporter: `NODE=URL`, NODE the Cassandra node that lives there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeExporter {
    /// The Cassandra node, as named by the user (`node1`, `10.0.0.5`).
    pub node: String,
    pub host: String,
    pub port: u16,
}

impl NodeExporter {
    /// Parses `NODE=[http://]host:port[/metrics]`.
    pub fn parse(s: &str) -> Result<NodeExporter, crate::error::Invalid> {
        let bad = |why: &str| {
            crate::invalid!(
                "'{s}' is not a node exporter: {why} (expected NODE=host:port, e.g. node1=http://10.0.0.5:9100)"
            )
        };
        let (node, url) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        let node = node.trim();
        if node.is_empty() {
            return Err(bad("no node name"));
        }
        let url = url.trim();
        let url = url.strip_prefix("http://").unwrap_or(url);
        if url.contains("://") {
            return Err(bad("only http:// is supported"));
        }
        let url = url.strip_suffix("/metrics").unwrap_or(url);
        let (host, port) = url.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        let port: u16 = port
            .parse()
            .map_err(|_| bad(&format!("bad port '{port}'")))?;
        if host.is_empty() || host.contains('/') {
            return Err(bad(&format!("bad host '{host}'")));
        }
        Ok(NodeExporter {
            node: node.to_string(),
            host: host.to_string(),
            port,
        })
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// The node exporter's metrics read, by name.
pub const NAMES: &[&str] = &[
    "node_cpu_seconds_total",
    "node_disk_reads_completed_total",
    "node_disk_writes_completed_total",
    "node_disk_read_bytes_total",
    "node_disk_written_bytes_total",
    "node_disk_read_time_seconds_total",
    "node_disk_write_time_seconds_total",
    "node_disk_io_time_seconds_total",
    "node_disk_io_time_weighted_seconds_total",
    "node_load1",
    "node_memory_MemTotal_bytes",
    "node_memory_MemAvailable_bytes",
    "node_memory_Cached_bytes",
    "node_network_receive_bytes_total",
    "node_network_transmit_bytes_total",
];

/// The exporter's collectors those come from (its `collect[]` filter: a scrape then carries
/// them only, not the ~1,000 series of every collector).
const COLLECTORS: &[&str] = &["cpu", "diskstats", "loadavg", "meminfo", "netdev"];

/// /proc's clock ticks per second, which the exporter divided /proc/stat's ticks by.
const USER_HZ: f64 = 100.0;

/// One scrape's counters, as /proc's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub cpu: CpuTimes,
    pub disks: Vec<DiskCounters>,
    pub load1: Option<f64>,
    pub mem_used_bytes: Option<f64>,
    pub page_cache_bytes: Option<f64>,
    /// Bytes received and sent, all interfaces but loopback.
    pub net_rx_bytes: Option<f64>,
    pub net_tx_bytes: Option<f64>,
}

impl Counters {
    /// The devices worth sampling (no loop, ram or zram devices), sorted.
    pub fn devices(&self) -> Vec<String> {
        let mut d: Vec<String> = self
            .disks
            .iter()
            .map(|d| d.name.clone())
            .filter(|n| is_sampled_device(n))
            .collect();
        d.sort();
        d
    }
}

/// The counters of a node exporter's exposition text.
pub fn counters(text: &str) -> Counters {
    counters_of(&prometheus::parse_named(text, NAMES))
}

/// The counters of a node exporter's samples (of one host at one time), however they were
/// read: a scrape's lines, or the values of a Prometheus server's series at one step.
pub fn counters_of(samples: &[prometheus::Sample]) -> Counters {
    let ticks = |s: f64| (s * USER_HZ).round().max(0.0) as u64;
    let ms = |s: f64| (s * 1000.0).round().max(0.0) as u64;
    let mut cpu = [0.0f64; 8];
    let mut disks: Vec<DiskCounters> = Vec::new();
    let (mut total, mut available, mut out) = (None, None, Counters::default());
    for s in samples {
        let v = s.value;
        if !v.is_finite() {
            continue;
        }
        if s.name == "node_cpu_seconds_total" {
            let modes = [
                "user", "nice", "system", "irq", "softirq", "idle", "iowait", "steal",
            ];
            if let Some(m) = modes.iter().position(|m| s.label("mode") == Some(m)) {
                cpu[m] += v;
            }
        } else if let Some(what) = s.name.strip_prefix("node_disk_") {
            let Some(device) = s.label("device") else {
                continue;
            };
            let i = match disks.iter().position(|d| d.name == device) {
                Some(i) => i,
                None => {
                    disks.push(DiskCounters {
                        name: device.to_string(),
                        ..DiskCounters::default()
                    });
                    disks.len() - 1
                }
            };
            let d = &mut disks[i];
            match what {
                "reads_completed_total" => d.reads = v as u64,
                "writes_completed_total" => d.writes = v as u64,
                "read_bytes_total" => d.read_sectors = (v / 512.0) as u64,
                "written_bytes_total" => d.write_sectors = (v / 512.0) as u64,
                "read_time_seconds_total" => d.read_ms = ms(v),
                "write_time_seconds_total" => d.write_ms = ms(v),
                "io_time_seconds_total" => d.busy_ms = ms(v),
                "io_time_weighted_seconds_total" => d.weighted_ms = ms(v),
                _ => {}
            }
        } else if s.name.starts_with("node_network_") && s.label("device") != Some("lo") {
            let sum = if s.name == "node_network_receive_bytes_total" {
                &mut out.net_rx_bytes
            } else {
                &mut out.net_tx_bytes
            };
            *sum = Some(sum.unwrap_or(0.0) + v);
        } else {
            match s.name.as_str() {
                "node_load1" => out.load1 = Some(v),
                "node_memory_MemTotal_bytes" => total = Some(v),
                "node_memory_MemAvailable_bytes" => available = Some(v),
                "node_memory_Cached_bytes" => out.page_cache_bytes = Some(v),
                _ => {}
            }
        }
    }
    // Grouped as /proc/stat's line is (`CpuTimes::from` a `procfs::CpuTime`).
    out.cpu = CpuTimes {
        user: ticks(cpu[0] + cpu[1]),
        system: ticks(cpu[2] + cpu[3] + cpu[4]),
        idle: ticks(cpu[5]),
        iowait: ticks(cpu[6]),
        steal: ticks(cpu[7]),
    };
    out.disks = disks;
    out.mem_used_bytes = total.zip(available).map(|(t, a)| t - a);
    out
}

/// A host's figures over the `secs` from `prev` to `now`, for `devices`.
pub fn sample(now: &Counters, prev: &Counters, devices: &[String], secs: f64) -> HostSample {
    HostSample {
        load1: now.load1,
        mem_used_bytes: now.mem_used_bytes,
        page_cache_bytes: now.page_cache_bytes,
        net_rx_bytes_per_s: rate(now.net_rx_bytes, prev.net_rx_bytes, secs),
        net_tx_bytes_per_s: rate(now.net_tx_bytes, prev.net_tx_bytes, secs),
        ..host_sample(
            (&now.cpu, &prev.cpu),
            (&now.disks, &prev.disks),
            devices,
            secs,
        )
    }
}

/// Why an exporter gave no reading, naming it ("node exporter of node1 (10.0.0.5:9100): …").
#[derive(Debug, Clone, thiserror::Error)]
#[error("node exporter of {node} ({address}): {what}")]
pub struct ScrapeError {
    pub node: String,
    pub address: String,
    pub what: String,
}

impl ScrapeError {
    fn of(e: &NodeExporter, what: impl Into<String>) -> ScrapeError {
        ScrapeError {
            node: e.node.clone(),
            address: e.address(),
            what: what.into(),
        }
    }
}

/// Scrapes one exporter.
pub fn scrape(e: &NodeExporter, timeout: Duration) -> Result<Counters, ScrapeError> {
    let query: Vec<String> = COLLECTORS
        .iter()
        .map(|c| format!("collect[]={c}"))
        .collect();
    let path = format!("/metrics?{}", query.join("&"));
    let text = prometheus::scrape_path(&e.host, e.port, &path, timeout)
        .map_err(|err| ScrapeError::of(e, err.to_string()))?;
    let c = counters(&text);
    if c.cpu.total() == 0 {
        return Err(ScrapeError::of(
            e,
            "no node_cpu_seconds_total in its answer",
        ));
    }
    Ok(c)
}

/// The hosts of a run's node exporters: each one's last reading, to take the next sample's
/// figures against.
pub struct Hosts {
    exporters: Vec<NodeExporter>,
    /// Each exporter's last reading and when it was taken (the middle of its scrape).
    prev: Vec<Option<(Instant, Counters)>>,
    /// Each host's devices, from its first reading (empty before).
    pub devices: Vec<Vec<String>>,
}

impl Hosts {
    pub fn new(exporters: Vec<NodeExporter>) -> Hosts {
        let n = exporters.len();
        Hosts {
            exporters,
            prev: vec![None; n],
            devices: vec![Vec::new(); n],
        }
    }

    /// Scrapes every exporter at once (each within `timeout`): each host's figures since its
    /// last reading (`None` for the first reading or a failed scrape), and the errors.
    pub fn sample(&mut self, timeout: Duration) -> (Vec<Option<HostSample>>, Vec<String>) {
        let readings: Vec<(Instant, Result<Counters, ScrapeError>)> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .exporters
                .iter()
                .map(|e| {
                    s.spawn(move || {
                        let start = Instant::now();
                        let r = scrape(e, timeout);
                        (start + (Instant::now() - start) / 2, r)
                    })
                })
                .collect();
            handles
                .into_iter()
                .zip(&self.exporters)
                .map(|(h, e)| {
                    h.join().unwrap_or_else(|_| {
                        (
                            Instant::now(),
                            Err(ScrapeError::of(e, "its scrape panicked")),
                        )
                    })
                })
                .collect()
        });
        let mut errors = Vec::new();
        let samples = readings
            .into_iter()
            .enumerate()
            .map(|(i, (at, r))| match r {
                Err(e) => {
                    errors.push(e.to_string());
                    None
                }
                Ok(now) => {
                    if self.devices[i].is_empty() {
                        self.devices[i] = now.devices();
                    }
                    let figures = self.prev[i].as_ref().map(|(t, prev)| {
                        sample(&now, prev, &self.devices[i], (at - *t).as_secs_f64())
                    });
                    self.prev[i] = Some((at, now));
                    figures
                }
            })
            .collect();
        (samples, errors)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A node exporter's answer (shaped as 1.x writes it), its counters `k` periods in.
    pub(crate) fn exposition(k: f64) -> String {
        let cpu = |c: u32, mode: &str, v: f64| {
            format!("node_cpu_seconds_total{{cpu=\"{c}\",mode=\"{mode}\"}} {v}\n")
        };
        let mut t = String::from(
            "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n\
             # TYPE node_cpu_seconds_total counter\n",
        );
        // Two CPUs; per period of 2 s (4 CPU-seconds): user 1.0 + nice 0.2, system 0.4 +
        // softirq 0.2, iowait 0.4, steal 0.2, idle 1.6.
        for c in 0..2 {
            for (mode, base, per) in [
                ("idle", 5000.0, 0.8),
                ("iowait", 30.0, 0.2),
                ("irq", 0.0, 0.0),
                ("nice", 1.5, 0.1),
                ("softirq", 2.25, 0.1),
                ("steal", 4.0, 0.1),
                ("system", 300.5, 0.2),
                ("user", 700.0, 0.5),
            ] {
                t += &cpu(c, mode, base + per * k);
            }
        }
        let disk =
            |name: &str, dev: &str, v: f64| format!("node_disk_{name}{{device=\"{dev}\"}} {v:e}\n");
        t += "# TYPE node_disk_reads_completed_total counter\n";
        for (dev, scale) in [("vda", 1.0), ("loop0", 0.0)] {
            t += &disk("reads_completed_total", dev, 1000.0 + 50.0 * k * scale);
            t += &disk("writes_completed_total", dev, 2000.0 + 100.0 * k * scale);
            t += &disk("read_bytes_total", dev, 4096000.0 + 1024000.0 * k * scale);
            t += &disk(
                "written_bytes_total",
                dev,
                8192000.0 + 2048000.0 * k * scale,
            );
            t += &disk("read_time_seconds_total", dev, 5.0 + 0.1 * k * scale);
            t += &disk("write_time_seconds_total", dev, 9.0 + 0.4 * k * scale);
            t += &disk("io_time_seconds_total", dev, 20.0 + 0.5 * k * scale);
            t += &disk(
                "io_time_weighted_seconds_total",
                dev,
                40.0 + 3.0 * k * scale,
            );
        }
        t += &format!(
            "# TYPE node_load1 gauge\nnode_load1 {}\n\
             node_memory_MemTotal_bytes 8.253e+09\n\
             node_memory_MemAvailable_bytes 6.253e+09\n\
             node_memory_Cached_bytes 3.5e+09\n\
             node_network_receive_bytes_total{{device=\"eth0\"}} {}\n\
             node_network_receive_bytes_total{{device=\"lo\"}} {}\n\
             node_network_transmit_bytes_total{{device=\"eth0\"}} {}\n\
             node_scrape_collector_success{{collector=\"cpu\"}} 1\n",
            1.25 + k,
            1e6 + 2e6 * k,
            9e9 * k,
            5e5 + 1e6 * k
        );
        t
    }

    #[test]
    fn two_scrapes_give_the_host_figures_proc_would() {
        let (a, b) = (counters(&exposition(3.0)), counters(&exposition(4.0)));
        assert_eq!(a.devices(), ["vda"], "loop devices are left out");
        let s = sample(&b, &a, &a.devices(), 2.0);
        let close = |x: f64, want: f64| assert!((x - want).abs() < 1e-9, "{x} != {want}");
        // Of 4 CPU-seconds: user + nice 1.2, system + softirq 0.6, iowait 0.4, steal 0.2.
        close(s.cpu_user, 1.2 / 4.0);
        close(s.cpu_system, 0.6 / 4.0);
        close(s.cpu_iowait, 0.4 / 4.0);
        close(s.cpu_steal, 0.2 / 4.0);
        let d = &s.devices[0];
        close(d.read_iops, 25.0);
        close(d.write_iops, 50.0);
        close(d.read_mb_s, 1.024 / 2.0);
        close(d.write_mb_s, 2.048 / 2.0);
        close(d.read_latency_ms, 100.0 / 50.0);
        close(d.write_latency_ms, 400.0 / 100.0);
        close(d.util, 0.25);
        close(d.avg_queue, 1.5);
        assert_eq!(s.load1, Some(5.25));
        assert_eq!(s.mem_used_bytes, Some(2e9));
        assert_eq!(s.page_cache_bytes, Some(3.5e9));
        assert_eq!(s.net_rx_bytes_per_s, Some(1e6), "loopback is left out");
        assert_eq!(s.net_tx_bytes_per_s, Some(5e5));
    }

    #[test]
    fn the_same_counters_from_proc_give_the_same_figures() {
        // /proc/stat and /proc/diskstats holding what exposition(3) and exposition(4) say.
        let stat = |k: f64| {
            let t = |base: f64, per: f64| ((base + per * k) * 2.0 * USER_HZ).round() as u64;
            format!(
                "cpu  {} {} {} {} {} {} {} {} 0 0\nctxt 0\nbtime 0\nprocesses 0\n",
                t(700.0, 0.5),
                t(1.5, 0.1),
                t(300.5, 0.2),
                t(5000.0, 0.8),
                t(30.0, 0.2),
                t(0.0, 0.0),
                t(2.25, 0.1),
                t(4.0, 0.1)
            )
        };
        let diskstats = |k: f64| {
            format!(
                " 254 0 vda {} 0 {} {} {} 0 {} {} 0 {} {}\n",
                1000.0 + 50.0 * k,
                (4096000.0 + 1024000.0 * k) / 512.0,
                (5.0 + 0.1 * k) * 1000.0,
                2000.0 + 100.0 * k,
                (8192000.0 + 2048000.0 * k) / 512.0,
                (9.0 + 0.4 * k) * 1000.0,
                (20.0 + 0.5 * k) * 1000.0,
                (40.0 + 3.0 * k) * 1000.0,
            )
        };
        use super::super::procfs::parse;
        let (c3, c4) = (
            parse::cpu_times(&stat(3.0)).unwrap(),
            parse::cpu_times(&stat(4.0)).unwrap(),
        );
        let (d3, d4) = (
            parse::diskstats(&diskstats(3.0)),
            parse::diskstats(&diskstats(4.0)),
        );
        let devices = ["vda".to_string()];
        let from_proc = host_sample((&c4, &c3), (&d4, &d3), &devices, 2.0);
        let (a, b) = (counters(&exposition(3.0)), counters(&exposition(4.0)));
        let from_exporter = sample(&b, &a, &devices, 2.0);
        assert_eq!(
            HostSample {
                load1: None,
                mem_used_bytes: None,
                page_cache_bytes: None,
                net_rx_bytes_per_s: None,
                net_tx_bytes_per_s: None,
                ..from_exporter
            },
            from_proc
        );
    }

    #[test]
    fn node_exporter_values_parse_or_say_what_is_expected() {
        let e = NodeExporter::parse("node1=http://10.0.0.5:9100/metrics").unwrap();
        assert_eq!(
            (e.node.as_str(), e.address()),
            ("node1", "10.0.0.5:9100".into())
        );
        let e = NodeExporter::parse("10.0.0.5=10.0.0.5:9100").unwrap();
        assert_eq!(e.node, "10.0.0.5");
        for (bad, why) in [
            ("10.0.0.5:9100", "no '='"),
            ("=h:9100", "no node name"),
            ("n=h", "no port"),
            ("n=h:x", "bad port 'x'"),
            ("n=https://h:9100", "only http://"),
            ("n=:9100", "bad host"),
        ] {
            let err = NodeExporter::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains(why) && err.contains("NODE=host:port"),
                "{bad}: {err}"
            );
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn an_unreachable_exporter_is_named_and_the_others_still_sampled() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let mut hosts = Hosts::new(vec![NodeExporter {
            node: "node7".into(),
            host: "127.0.0.1".into(),
            port,
        }]);
        let (samples, errors) = hosts.sample(Duration::from_secs(1));
        assert_eq!(samples, [None]);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].starts_with(&format!("node exporter of node7 (127.0.0.1:{port}): ")),
            "{errors:?}"
        );
    }
}
