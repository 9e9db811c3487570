//! The hosts a run sampled, summarised over its main phase's measured window: the local host
//! (where cqlbench ran, from /proc), each node's host seen through its node exporter
//! ([`crate::result::series::MetricSeries::node_hosts`]) and each node's host fetched after
//! the run from a Prometheus server ([`crate::result::series::MetricSeries::fetched`]). All
//! sources give the same [`HostSample`]s, so one model ([`HostSummary`]) and one pair of
//! tables serve them all: one row
//! per host (CPU, load, memory, network) and one per host and device (IOPS, MB/s, await,
//! queue, utilisation).

use crate::format::Table;
use crate::report::capacity::{Cell, Column, rows_table};
use crate::result::PhaseResult;
use crate::result::series::{DeviceSample, HostSample, MetricSeries};

/// The title of the table of hosts.
pub const HOSTS_TITLE: &str = "Hosts over the main phase (means of the samples)";
/// The title of the table of the hosts' devices.
pub const DEVICES_TITLE: &str = "Host disks over the main phase (means of the samples)";
/// What the local host is called in the tables.
pub const LOCAL_HOST: &str = "local";

/// Where a host's figures came from.
#[derive(Debug, Clone, PartialEq)]
pub enum HostSource {
    /// The host cqlbench ran on, from its /proc.
    Local,
    /// A node's host, from its Prometheus node exporter at `exporter` (`host:port`).
    Exporter { exporter: String },
    /// A node's host, its exporter's series (labelled `instance`) fetched from the
    /// Prometheus server at `server` after the run.
    Prometheus { server: String, instance: String },
}

impl HostSource {
    /// `/proc`, `node exporter 10.0.0.5:9100`.
    pub fn describe(&self) -> String {
        match self {
            HostSource::Local => "/proc".into(),
            HostSource::Exporter { exporter } => format!("node exporter {exporter}"),
            HostSource::Prometheus { server, instance } => {
                format!("Prometheus {server} ({instance})")
            }
        }
    }
}

/// One host's means over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSummary {
    /// [`LOCAL_HOST`], or the node that lives on the host (`node1`, `10.0.0.5`).
    pub host: String,
    pub source: HostSource,
    /// Samples with a reading in the window.
    pub samples: usize,
    /// Shares of all CPUs' time, 0–1.
    pub cpu_user: f64,
    pub cpu_system: f64,
    pub cpu_iowait: f64,
    pub cpu_steal: f64,
    /// Means over the samples that had the figure (None: none had it).
    pub load1: Option<f64>,
    pub mem_used_bytes: Option<f64>,
    pub page_cache_bytes: Option<f64>,
    pub net_rx_bytes_per_s: Option<f64>,
    pub net_tx_bytes_per_s: Option<f64>,
    /// Each device's means: (name, figures); a local device holding a node's data is named
    /// `loop3 (node1)`.
    pub devices: Vec<(String, DeviceSample)>,
}

/// The hosts `metrics` sampled over `main`'s measured window: the local host first, then the
/// nodes' hosts in their order, then those fetched from a Prometheus server; a host without a
/// sample in the window is left out.
pub fn summaries(main: &PhaseResult, metrics: &MetricSeries) -> Vec<HostSummary> {
    let Some((start, end)) = crate::result::measured_window(main) else {
        return Vec::new();
    };
    let window: Vec<&crate::result::series::Sample> = metrics
        .samples
        .iter()
        .filter(|s| s.t_s >= start && s.t_s <= end)
        .collect();
    let local_devices: Vec<String> = metrics
        .devices
        .iter()
        .map(
            |d| match metrics.node_devices.iter().find(|n| &n.device == d) {
                Some(n) => format!("{d} ({})", n.node),
                None => d.clone(),
            },
        )
        .collect();
    let local: Vec<&HostSample> = window.iter().filter_map(|s| s.host.as_ref()).collect();
    let mut out: Vec<HostSummary> = summary(LOCAL_HOST, HostSource::Local, &local, &local_devices)
        .into_iter()
        .collect();
    for (j, h) in metrics.node_hosts.iter().enumerate() {
        let samples: Vec<&HostSample> = window
            .iter()
            .filter_map(|s| s.node_hosts.get(j).and_then(Option::as_ref))
            .collect();
        let source = HostSource::Exporter {
            exporter: h.exporter.clone(),
        };
        out.extend(summary(&h.node, source, &samples, &h.devices));
    }
    if let Some(f) = &metrics.fetched {
        for (j, h) in f.hosts.iter().enumerate() {
            let samples: Vec<&HostSample> = f
                .samples
                .iter()
                .filter(|s| s.t_s >= start && s.t_s <= end)
                .filter_map(|s| s.node_hosts.get(j).and_then(Option::as_ref))
                .collect();
            let source = HostSource::Prometheus {
                server: f.server.clone(),
                instance: h.exporter.clone(),
            };
            out.extend(summary(&h.node, source, &samples, &h.devices));
        }
    }
    out
}

/// The means of `samples` (none without a sample); `devices` names the samples' devices.
fn summary(
    host: &str,
    source: HostSource,
    samples: &[&HostSample],
    devices: &[String],
) -> Option<HostSummary> {
    if samples.is_empty() {
        return None;
    }
    let n = samples.len() as f64;
    let mean = |f: fn(&HostSample) -> f64| samples.iter().map(|s| f(s)).sum::<f64>() / n;
    let mean_of_some = |f: fn(&HostSample) -> Option<f64>| {
        let v: Vec<f64> = samples.iter().filter_map(|s| f(s)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let devices = devices
        .iter()
        .enumerate()
        .filter_map(|(d, name)| {
            let picked: Vec<&DeviceSample> =
                samples.iter().filter_map(|s| s.devices.get(d)).collect();
            DeviceSample::mean(&picked).map(|m| (name.clone(), m))
        })
        .collect();
    Some(HostSummary {
        host: host.to_string(),
        source,
        samples: samples.len(),
        cpu_user: mean(|s| s.cpu_user),
        cpu_system: mean(|s| s.cpu_system),
        cpu_iowait: mean(|s| s.cpu_iowait),
        cpu_steal: mean(|s| s.cpu_steal),
        load1: mean_of_some(|s| s.load1),
        mem_used_bytes: mean_of_some(|s| s.mem_used_bytes),
        page_cache_bytes: mean_of_some(|s| s.page_cache_bytes),
        net_rx_bytes_per_s: mean_of_some(|s| s.net_rx_bytes_per_s),
        net_tx_bytes_per_s: mean_of_some(|s| s.net_tx_bytes_per_s),
        devices,
    })
}

/// A host of a run, as a row of the hosts table.
#[derive(Debug, Clone, PartialEq)]
pub struct HostLine {
    /// The run's number in the report and its environment.
    pub run: usize,
    pub env: String,
    pub summary: HostSummary,
}

/// A device of a host of a run, as a row of the devices table.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceLine {
    pub run: usize,
    pub env: String,
    pub host: String,
    pub device: String,
    pub figures: DeviceSample,
}

impl HostLine {
    /// One row per device of the host.
    pub fn devices(&self) -> Vec<DeviceLine> {
        self.summary
            .devices
            .iter()
            .map(|(device, figures)| DeviceLine {
                run: self.run,
                env: self.env.clone(),
                host: self.summary.host.clone(),
                device: device.clone(),
                figures: figures.clone(),
            })
            .collect()
    }
}

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

fn pct(v: f64) -> Cell {
    Cell::Num(Some(100.0 * v))
}

/// The hosts table's columns, after the run's number.
pub const HOST_COLUMNS: [Column<HostLine>; 14] = [
    Column {
        key: "env",
        label: "env",
        decimals: 0,
        get: |h| text(&h.env),
    },
    Column {
        key: "host",
        label: "host",
        decimals: 0,
        get: |h| text(&h.summary.host),
    },
    Column {
        key: "host_source",
        label: "source",
        decimals: 0,
        get: |h| text(h.summary.source.describe()),
    },
    Column {
        key: "host_samples",
        label: "samples",
        decimals: 0,
        get: |h| Cell::Num(Some(h.summary.samples as f64)),
    },
    Column {
        key: "cpu_user_pct",
        label: "user %",
        decimals: 1,
        get: |h| pct(h.summary.cpu_user),
    },
    Column {
        key: "cpu_system_pct",
        label: "system %",
        decimals: 1,
        get: |h| pct(h.summary.cpu_system),
    },
    Column {
        key: "cpu_iowait_pct",
        label: "iowait %",
        decimals: 1,
        get: |h| pct(h.summary.cpu_iowait),
    },
    Column {
        key: "cpu_steal_pct",
        label: "steal %",
        decimals: 1,
        get: |h| pct(h.summary.cpu_steal),
    },
    Column {
        key: "load1",
        label: "load 1m",
        decimals: 2,
        get: |h| Cell::Num(h.summary.load1),
    },
    Column {
        key: "mem_used_gb",
        label: "mem used GB",
        decimals: 1,
        get: |h| Cell::Num(h.summary.mem_used_bytes.map(|b| b / 1e9)),
    },
    Column {
        key: "page_cache_gb",
        label: "page cache GB",
        decimals: 1,
        get: |h| Cell::Num(h.summary.page_cache_bytes.map(|b| b / 1e9)),
    },
    Column {
        key: "net_rx_mb_s",
        label: "net rx MB/s",
        decimals: 2,
        get: |h| Cell::Num(h.summary.net_rx_bytes_per_s.map(|b| b / 1e6)),
    },
    Column {
        key: "net_tx_mb_s",
        label: "net tx MB/s",
        decimals: 2,
        get: |h| Cell::Num(h.summary.net_tx_bytes_per_s.map(|b| b / 1e6)),
    },
    Column {
        key: "devices",
        label: "devices",
        decimals: 0,
        get: |h| Cell::Num(Some(h.summary.devices.len() as f64)),
    },
];

/// The devices table's columns, after the run's number.
pub const DEVICE_COLUMNS: [Column<DeviceLine>; 11] = [
    Column {
        key: "env",
        label: "env",
        decimals: 0,
        get: |d| text(&d.env),
    },
    Column {
        key: "host",
        label: "host",
        decimals: 0,
        get: |d| text(&d.host),
    },
    Column {
        key: "device",
        label: "device",
        decimals: 0,
        get: |d| text(&d.device),
    },
    Column {
        key: "read_iops",
        label: "read IOPS",
        decimals: 0,
        get: |d| Cell::Num(Some(d.figures.read_iops)),
    },
    Column {
        key: "write_iops",
        label: "write IOPS",
        decimals: 0,
        get: |d| Cell::Num(Some(d.figures.write_iops)),
    },
    Column {
        key: "read_mb_s",
        label: "read MB/s",
        decimals: 1,
        get: |d| Cell::Num(Some(d.figures.read_mb_s)),
    },
    Column {
        key: "write_mb_s",
        label: "write MB/s",
        decimals: 1,
        get: |d| Cell::Num(Some(d.figures.write_mb_s)),
    },
    Column {
        key: "read_await_ms",
        label: "read ms",
        decimals: 2,
        get: |d| Cell::Num(Some(d.figures.read_latency_ms)),
    },
    Column {
        key: "write_await_ms",
        label: "write ms",
        decimals: 2,
        get: |d| Cell::Num(Some(d.figures.write_latency_ms)),
    },
    Column {
        key: "queue",
        label: "queue",
        decimals: 2,
        get: |d| Cell::Num(Some(d.figures.avg_queue)),
    },
    Column {
        key: "util_pct",
        label: "util %",
        decimals: 0,
        get: |d| pct(d.figures.util),
    },
];

/// The hosts table and the devices table of `lines` (the hosts of the report's runs); each
/// left out when it would have no row.
pub fn tables(lines: &[HostLine]) -> Vec<Table> {
    let mut out = Vec::new();
    if lines.is_empty() {
        return out;
    }
    let items: Vec<(String, &HostLine)> =
        lines.iter().map(|h| (format!("#{}", h.run), h)).collect();
    out.push(rows_table(HOSTS_TITLE.into(), "#", &HOST_COLUMNS, &items));
    let devices: Vec<DeviceLine> = lines.iter().flat_map(HostLine::devices).collect();
    if !devices.is_empty() {
        let items: Vec<(String, &DeviceLine)> =
            devices.iter().map(|d| (format!("#{}", d.run), d)).collect();
        out.push(rows_table(
            DEVICES_TITLE.into(),
            "#",
            &DEVICE_COLUMNS,
            &items,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::{RunShape, run_with_metrics, with_node_hosts};
    use crate::result::series::NodeDevice;

    /// A run with the local host (one device, node1's disk) and two nodes' hosts through their
    /// exporters, one device each.
    fn remote_run() -> crate::result::RunResult {
        let mut r = run_with_metrics("remote", &RunShape::default(), 2, &["loop3"]);
        let m = r.metrics.as_mut().unwrap();
        m.node_devices = vec![NodeDevice {
            node: "node1".into(),
            dc: "dc1".into(),
            device: "loop3".into(),
            class: "local".into(),
            monthly_usd: None,
        }];
        with_node_hosts(m, &["node1", "node2"], &["nvme0n1"]);
        r
    }

    #[test]
    fn both_sources_give_one_summary_each_over_the_measured_window() {
        let mut r = remote_run();
        let main = r.phases[0].clone();
        let (start, end) = crate::result::measured_window(&main).unwrap();
        let m = r.metrics.as_mut().unwrap();
        // Outside the window: would move every mean if it were counted.
        for s in m
            .samples
            .iter_mut()
            .filter(|s| s.t_s < start || s.t_s > end)
        {
            for h in s.node_hosts.iter_mut().flatten() {
                h.cpu_user = 1.0;
                h.devices[0].read_iops = 1e6;
            }
        }
        let in_window = m
            .samples
            .iter()
            .filter(|s| s.t_s >= start && s.t_s <= end)
            .count();
        let hosts = summaries(&main, m);
        let names: Vec<(&str, String)> = hosts
            .iter()
            .map(|h| (h.host.as_str(), h.source.describe()))
            .collect();
        assert_eq!(
            names,
            [
                ("local", "/proc".to_string()),
                ("node1", "node exporter 10.0.0.1:9100".to_string()),
                ("node2", "node exporter 10.0.0.2:9100".to_string()),
            ]
        );
        assert_eq!(hosts[0].samples, in_window);
        assert_eq!(hosts[0].devices[0].0, "loop3 (node1)");
        assert!(hosts[0].cpu_user > 0.3 && hosts[0].cpu_user < 0.55);
        assert_eq!(hosts[0].load1, None);
        let node2 = &hosts[2];
        assert_eq!(node2.samples, in_window);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(node2.cpu_user, 0.4), "{node2:?}");
        assert!(close(node2.cpu_system, 0.05));
        assert!(close(node2.cpu_iowait, 0.02));
        assert!(close(node2.cpu_steal, 0.02));
        assert_eq!(node2.load1, Some(3.0));
        assert_eq!(node2.net_rx_bytes_per_s, Some(12e6));
        let (device, figures) = &node2.devices[0];
        assert_eq!(device, "nvme0n1");
        assert!(close(figures.read_iops, 200.0) && close(figures.write_iops, 50.0));
        assert!(close(figures.util, 0.4) && close(figures.avg_queue, 0.75));
    }

    #[test]
    fn hosts_fetched_from_prometheus_get_rows_after_the_exporters() {
        use crate::result::series::Fetched;
        let mut r = remote_run();
        let main = r.phases[0].clone();
        let (start, end) = crate::result::measured_window(&main).unwrap();
        let m = r.metrics.as_mut().unwrap();
        // The server's copy of node2's host, each step half a second later, twice as busy; a
        // step outside the window would move the mean.
        let mut samples = m.samples.clone();
        for s in &mut samples {
            s.t_s += 0.5;
            s.host = None;
            s.nodes.clear();
            let mut h = s.node_hosts[1].clone();
            if let Some(h) = h.as_mut() {
                h.cpu_user = if s.t_s < start || s.t_s > end {
                    1.0
                } else {
                    0.8
                };
            }
            s.node_hosts = vec![h];
        }
        let in_window = samples
            .iter()
            .filter(|s| s.t_s >= start && s.t_s <= end)
            .count();
        let mut host = m.node_hosts[1].clone();
        host.exporter = "10.0.0.2:9100".into();
        m.fetched = Some(Box::new(Fetched {
            server: "http://10.0.0.9:9090".into(),
            hosts: vec![host],
            samples,
            ..Fetched::default()
        }));
        let hosts = summaries(&main, m);
        assert_eq!(hosts.len(), 4);
        let fetched = &hosts[3];
        assert_eq!(
            (fetched.host.as_str(), fetched.source.describe()),
            (
                "node2",
                "Prometheus http://10.0.0.9:9090 (10.0.0.2:9100)".to_string()
            )
        );
        assert_eq!(fetched.samples, in_window);
        assert!((fetched.cpu_user - 0.8).abs() < 1e-9, "{fetched:?}");
        assert_eq!(fetched.devices, hosts[2].devices, "the same device figures");
    }

    #[test]
    fn a_host_without_a_reading_in_the_window_is_left_out() {
        let mut r = remote_run();
        let m = r.metrics.as_mut().unwrap();
        for s in &mut m.samples {
            s.host = None;
            s.node_hosts[0] = None;
        }
        let hosts = summaries(&r.phases[0], r.metrics.as_ref().unwrap());
        let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(names, ["node2"]);
        // No measured interval: no window, no host.
        let mut main = r.phases[0].clone();
        main.intervals.clear();
        assert!(summaries(&main, r.metrics.as_ref().unwrap()).is_empty());
    }

    #[test]
    fn tables_have_a_row_per_host_and_per_device_naming_node_and_exporter() {
        let r = remote_run();
        let lines: Vec<HostLine> = summaries(&r.phases[0], r.metrics.as_ref().unwrap())
            .into_iter()
            .map(|summary| HostLine {
                run: 1,
                env: "remote".into(),
                summary,
            })
            .collect();
        let t = tables(&lines);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].title, HOSTS_TITLE);
        assert_eq!(
            t[0].header,
            [
                "#",
                "env",
                "host",
                "source",
                "samples",
                "user %",
                "system %",
                "iowait %",
                "steal %",
                "load 1m",
                "mem used GB",
                "page cache GB",
                "net rx MB/s",
                "net tx MB/s",
                "devices"
            ]
        );
        assert_eq!(t[0].rows.len(), 3);
        assert_eq!(
            t[0].rows[2][1..],
            [
                "remote",
                "node2",
                "node exporter 10.0.0.2:9100",
                "11",
                "40.0",
                "5.0",
                "2.0",
                "2.0",
                "3.00",
                "8.0",
                "4.0",
                "12.00",
                "3.00",
                "1"
            ]
        );
        // The local host has no load, memory or network figures in the fixture.
        assert_eq!(t[0].rows[0][9], "-");
        assert_eq!(t[1].title, DEVICES_TITLE);
        assert_eq!(t[1].rows.len(), 3);
        assert_eq!(
            t[1].rows[1],
            [
                "#1", "remote", "node1", "nvme0n1", "100", "50", "4.0", "20.0", "0.50", "1.50",
                "0.75", "40"
            ]
        );
        assert_eq!(t[1].rows[0][3], "loop3 (node1)");
        // Text columns align left.
        assert_eq!(t[0].text_columns, [1, 2, 3]);
        assert!(tables(&[]).is_empty());
    }
}
