//! Server and host metrics sampled once per second during a run, stored in the run result on
//! the same time axis as the client's intervals: `t_s` is seconds since the run started (the
//! same origin as [`crate::result::PhaseResult::offset_s`]).

use serde::{Deserialize, Serialize};

/// Everything sampled during a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricSeries {
    /// Sampling period asked for; after a run's first hour samples come at least 10 s apart,
    /// after 12 hours at least a minute ([`crate::result::kept_width_s`]).
    pub interval_s: f64,
    /// Server nodes, in the order of [`Sample::nodes`].
    pub nodes: Vec<String>,
    /// Block devices sampled, in the order of [`HostSample::devices`].
    pub devices: Vec<String>,
    pub samples: Vec<Sample>,
    /// First error per source (a node's endpoint, /proc), e.g. "node2: connection refused".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Nodes with a disk of their own (a local cluster's emulated disks): which of
    /// [`Self::devices`] holds each node's data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_devices: Vec<NodeDevice>,
    /// Hosts sampled through their Prometheus node exporters (remote clusters), each
    /// attributed to the Cassandra node it runs: the order of [`Sample::node_hosts`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_hosts: Vec<NodeHost>,
    /// The nodes' and their hosts' series fetched after the run from a Prometheus server
    /// (another source of the same server and host figures), when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched: Option<Box<Fetched>>,
    /// The naming each node's server figures came in, in the order of [`Self::nodes`]: its
    /// endpoint's dialect (cqlbench's JMX exporter rules; the Management API's or MCAC's,
    /// marked unverified) or CQL's `system_views`; `None` for a node that served none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dialects: Vec<Option<String>>,
}

/// The figures fetched after a run from a Prometheus server that scraped the nodes' hosts'
/// node exporters and the nodes' own metrics endpoints: range queries of the raw counters
/// over the run's window, turned into [`HostSample`]s and [`NodeSample`]s by the computation
/// direct scrapes go through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fetched {
    /// The Prometheus server's URL.
    pub server: String,
    /// The range queries' step (the run's sampling period), s.
    pub step_s: f64,
    /// The window queried, Unix seconds.
    pub start_unix_s: f64,
    pub end_unix_s: f64,
    /// Each node's host: [`NodeHost::exporter`] is the exporter's `instance` label, and
    /// [`NodeHost::job`] its `job`. The order of [`Sample::node_hosts`] in [`Self::samples`].
    pub hosts: Vec<NodeHost>,
    /// Each node's metrics endpoint as the server labels it: the order of [`Sample::nodes`]
    /// in [`Self::samples`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<FetchedNode>,
    /// One sample per step, `t_s` on the run's axis; a host's `None`, a node's
    /// [`NodeSample::missing`], where Prometheus held no new scrape of it since the previous
    /// step (or none at all).
    pub samples: Vec<Sample>,
    /// What was not found: nodes no instance was mapped to, the series a host's instance did
    /// not have (`node2 (10.0.0.6:9100): node_disk_*`) and the figures a node's did not
    /// (`node2 (10.0.0.6:7070): local reads`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// A Cassandra node's metrics endpoint, as a Prometheus server labels its series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FetchedNode {
    /// The node (`node1`, `10.0.0.5`).
    pub node: String,
    /// The endpoint's `instance` label (`10.0.0.5:7070`).
    pub instance: String,
    /// Its `job` label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// A node's host, seen through its node exporter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeHost {
    /// The Cassandra node that lives on the host, as given (`node1`, `10.0.0.5`).
    pub node: String,
    /// The exporter's endpoint, `host:port`.
    pub exporter: String,
    /// Its block devices, in the order of this host's [`HostSample::devices`] (empty until
    /// the exporter first answered).
    pub devices: Vec<String>,
    /// The exporter's `job` label, for hosts fetched from a Prometheus server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// A node's own disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeDevice {
    pub node: String,
    pub dc: String,
    /// The block device, as in [`MetricSeries::devices`] (`loop3`).
    pub device: String,
    /// Its storage class (`gp3 500 GiB: 3000 IOPS, 125 MB/s`).
    pub class: String,
    /// The class's monthly price per volume (the catalogue's), USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_usd: Option<f64>,
}

/// One sampling instant. Rates are over the period since the previous sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the run started.
    pub t_s: f64,
    /// Per node, aligned with [`MetricSeries::nodes`].
    pub nodes: Vec<NodeSample>,
    /// Host metrics from /proc (local clusters only).
    pub host: Option<HostSample>,
    /// Node exporters' hosts, aligned with [`MetricSeries::node_hosts`]; `None` where the
    /// exporter gave no reading (unreachable, or the first of two readings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_hosts: Vec<Option<HostSample>>,
}

/// One node's server metrics. `None`: not available (endpoint down, metric not exported, or
/// no previous sample to take a rate from).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSample {
    /// Whether the node is up, from a source that knows: a local node's process, a remote
    /// node's endpoint refusing connections (`None`: not known, e.g. a remote endpoint that
    /// did not answer in time). A slow scrape is not a node that is down.
    pub up: Option<bool>,
    /// Why this sample has no reading of the node's server metrics (a scrape still running,
    /// an error), if it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    /// How long the scrape took: the reading was taken up to this long after `t_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_s: Option<f64>,
    pub pending_compactions: Option<f64>,
    /// Compactions completed per second.
    pub compactions_per_s: Option<f64>,
    /// Bytes compacted per second.
    pub compacted_bytes_per_s: Option<f64>,
    /// SSTables touched per read (the server's decaying mean).
    pub sstables_per_read: Option<f64>,
    pub live_sstables: Option<f64>,
    /// Live data on disk (the node's load), bytes.
    pub load_bytes: Option<f64>,
    /// Messages dropped per second, all verbs.
    pub dropped_per_s: Option<f64>,
    /// Milliseconds of GC pause per second.
    pub gc_pause_ms_per_s: Option<f64>,
    /// CPU used by the node's JVM, in cores (1.0 = one core busy).
    pub cpu_cores: Option<f64>,
    /// The JVM's own figure of its CPU use as a share of its host's CPUs, 0–1 (what a
    /// remote node's CPU criterion uses).
    #[serde(default)]
    pub cpu_share: Option<f64>,
    /// Reads the node served from its own tables per second (all tables) …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_reads_per_s: Option<f64>,
    /// … and their mean latency over the period, ms: the node's time to read from its disk
    /// (and caches), whatever held the I/O back — an emulated disk's throttle included, which
    /// the device's own latency in /proc does not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_read_ms: Option<f64>,
}

/// Host metrics over one period: from /proc (the local host) or from a node exporter (a
/// remote node's host), computed alike from two readings of the same counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    /// Share of all CPUs' time, 0–1.
    pub cpu_user: f64,
    pub cpu_system: f64,
    pub cpu_iowait: f64,
    /// Time the hypervisor gave another guest, share of all CPUs' time.
    #[serde(default)]
    pub cpu_steal: f64,
    /// Aligned with [`MetricSeries::devices`] (the local host) or [`NodeHost::devices`].
    pub devices: Vec<DeviceSample>,
    /// CPU of each local node's process (from /proc/PID/stat), in cores; aligned with
    /// [`MetricSeries::nodes`]; `None` when the process is gone.
    #[serde(default)]
    pub node_cpu_cores: Vec<Option<f64>>,
    /// CPU of cqlbench itself, in cores (0 for a node exporter's host).
    #[serde(default)]
    pub client_cpu_cores: f64,
    /// One-minute load average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load1: Option<f64>,
    /// Memory in use (total − available), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_used_bytes: Option<f64>,
    /// The page cache, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache_bytes: Option<f64>,
    /// Network bytes received and sent per second, all interfaces but loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_rx_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_tx_bytes_per_s: Option<f64>,
}

impl HostSample {
    /// Busy CPU (user + system) as a share of all CPUs, 0–1.
    pub fn cpu_busy(&self) -> f64 {
        self.cpu_user + self.cpu_system
    }
}

/// One block device over one period (what `iostat -x` shows).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSample {
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    /// Average time per completed read / write, ms.
    pub read_latency_ms: f64,
    pub write_latency_ms: f64,
    /// Average number of requests in flight (iostat's aqu-sz).
    pub avg_queue: f64,
    /// Share of the period the device was busy (iostat's %util / 100), 0–1.
    #[serde(default)]
    pub util: f64,
}

impl DeviceSample {
    /// The field-by-field mean of `picked` (none when empty).
    pub fn mean(picked: &[&DeviceSample]) -> Option<DeviceSample> {
        if picked.is_empty() {
            return None;
        }
        let n = picked.len() as f64;
        let mean = |f: fn(&DeviceSample) -> f64| picked.iter().map(|x| f(x)).sum::<f64>() / n;
        Some(DeviceSample {
            read_iops: mean(|x| x.read_iops),
            write_iops: mean(|x| x.write_iops),
            read_mb_s: mean(|x| x.read_mb_s),
            write_mb_s: mean(|x| x.write_mb_s),
            read_latency_ms: mean(|x| x.read_latency_ms),
            write_latency_ms: mean(|x| x.write_latency_ms),
            avg_queue: mean(|x| x.avg_queue),
            util: mean(|x| x.util),
        })
    }
}

impl MetricSeries {
    /// Device `device`'s figures averaged over the samples from `from_s` on (None: no sample).
    pub fn device_mean(&self, device: &str, from_s: f64) -> Option<DeviceSample> {
        let d = self.devices.iter().position(|x| x == device)?;
        let picked: Vec<&DeviceSample> = self
            .samples
            .iter()
            .filter(|s| s.t_s >= from_s)
            .filter_map(|s| s.host.as_ref().and_then(|h| h.devices.get(d)))
            .collect();
        DeviceSample::mean(&picked)
    }

    /// Node `node`'s mean local read latency (ms) over the samples from `from_s` on, weighted
    /// by its local reads (None: no reads sampled).
    pub fn local_read_ms(&self, node: &str, from_s: f64) -> Option<f64> {
        let i = self.nodes.iter().position(|n| n == node)?;
        let (mut ms, mut reads) = (0.0, 0.0);
        for s in self.samples.iter().filter(|s| s.t_s >= from_s) {
            if let Some(NodeSample {
                local_reads_per_s: Some(r),
                local_read_ms: Some(l),
                ..
            }) = s.nodes.get(i)
            {
                ms += l * r;
                reads += r;
            }
        }
        (reads > 0.0).then(|| ms / reads)
    }

    /// Per node: how many samples have no reading of its server metrics, of how many.
    pub fn missing_by_node(&self) -> Vec<(String, usize, usize)> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let missing = self
                    .samples
                    .iter()
                    .filter(|s| s.nodes.get(i).is_none_or(|x| x.missing.is_some()))
                    .count();
                (n.clone(), missing, self.samples.len())
            })
            .collect()
    }

    /// Sum over nodes of a per-node value, per sample; `None` where no node had it.
    pub fn node_sum(&self, get: impl Fn(&NodeSample) -> Option<f64>) -> Vec<(f64, Option<f64>)> {
        self.samples
            .iter()
            .map(|s| {
                let vals: Vec<f64> = s.nodes.iter().filter_map(&get).collect();
                (s.t_s, (!vals.is_empty()).then(|| vals.iter().sum()))
            })
            .collect()
    }

    /// Maximum over nodes of a per-node value, per sample.
    pub fn node_max(&self, get: impl Fn(&NodeSample) -> Option<f64>) -> Vec<(f64, Option<f64>)> {
        node_max(&self.samples, get)
    }
}

/// Maximum over nodes of a per-node value, per sample of `samples` (any source's).
pub fn node_max(
    samples: &[Sample],
    get: impl Fn(&NodeSample) -> Option<f64>,
) -> Vec<(f64, Option<f64>)> {
    samples
        .iter()
        .map(|s| (s.t_s, s.nodes.iter().filter_map(&get).reduce(f64::max)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_read_latency_is_weighted_by_reads() {
        let mut m = crate::result::fixture::metrics(2, &["sda"], 10.0, 1);
        for (k, s) in m.samples.iter_mut().enumerate() {
            // node1: 100 reads/s at 2 ms, then 300 reads/s at 6 ms.
            let (r, l) = if k % 2 == 0 {
                (100.0, 2.0)
            } else {
                (300.0, 6.0)
            };
            s.nodes[0].local_reads_per_s = Some(r);
            s.nodes[0].local_read_ms = Some(l);
            s.nodes[1].local_reads_per_s = None;
        }
        let n = m.samples.len();
        let (even, odd) = (n.div_ceil(2) as f64, (n / 2) as f64);
        let want = (even * 100.0 * 2.0 + odd * 300.0 * 6.0) / (even * 100.0 + odd * 300.0);
        assert!((m.local_read_ms("node1", 0.0).unwrap() - want).abs() < 1e-9);
        assert_eq!(m.local_read_ms("node2", 0.0), None);
        assert_eq!(m.local_read_ms("node9", 0.0), None);
    }

    #[test]
    fn sums_and_maxima_over_nodes_skip_missing_values() {
        let node = |p: Option<f64>| NodeSample {
            up: Some(true),
            missing: p.is_none().then(|| "no answer".into()),
            pending_compactions: p,
            ..Default::default()
        };
        let m = MetricSeries {
            node_devices: vec![],
            interval_s: 1.0,
            nodes: vec!["node1".into(), "node2".into()],
            devices: vec![],
            samples: vec![
                Sample {
                    t_s: 1.0,
                    nodes: vec![node(Some(3.0)), node(Some(5.0))],
                    host: None,
                    node_hosts: vec![],
                },
                Sample {
                    t_s: 2.0,
                    nodes: vec![node(None), node(Some(2.0))],
                    host: None,
                    node_hosts: vec![],
                },
                Sample {
                    t_s: 3.0,
                    nodes: vec![node(None), node(None)],
                    host: None,
                    node_hosts: vec![],
                },
            ],
            errors: vec![],
            node_hosts: vec![],
            fetched: None,
            dialects: Vec::new(),
        };
        let sum = m.node_sum(|n| n.pending_compactions);
        assert_eq!(sum, vec![(1.0, Some(8.0)), (2.0, Some(2.0)), (3.0, None)]);
        let max = m.node_max(|n| n.pending_compactions);
        assert_eq!(max, vec![(1.0, Some(5.0)), (2.0, Some(2.0)), (3.0, None)]);
        assert_eq!(
            m.missing_by_node(),
            vec![("node1".into(), 2, 3), ("node2".into(), 1, 3)]
        );
    }
}
