//! The sampler: a thread of its own that, once per period, scrapes every node's Prometheus
//! endpoint and (for local clusters) reads /proc, and appends one [`Sample`] to the run's
//! [`MetricSeries`]. Counters become rates over the period since the previous reading.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::procfs::{self, CpuTimes, DiskCounters};
use super::prometheus::{self, Sample as PromSample};
use super::series::{DeviceSample, HostSample, MetricSeries, NodeSample, Sample};

/// A node's metrics endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// Name shown in results, e.g. `node1` or `10.0.0.5:9103`.
    pub node: String,
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// Parses `host:port` (a `http://` prefix and `/metrics` suffix are accepted).
    pub fn parse(s: &str) -> Result<Endpoint, String> {
        let t = s.trim();
        let t = t.strip_prefix("http://").unwrap_or(t);
        let t = t.strip_suffix("/metrics").unwrap_or(t);
        let (host, port) = t
            .rsplit_once(':')
            .ok_or_else(|| format!("'{s}' is not a metrics endpoint: expected host:port"))?;
        let port: u16 = port
            .parse()
            .map_err(|_| format!("'{s}' is not a metrics endpoint: bad port '{port}'"))?;
        if host.is_empty() {
            return Err(format!("'{s}' is not a metrics endpoint: no host"));
        }
        Ok(Endpoint {
            node: t.to_string(),
            host: host.to_string(),
            port,
        })
    }
}

/// What to sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricsPlan {
    pub endpoints: Vec<Endpoint>,
    /// PIDs of local node processes, aligned with `endpoints` (`None`: not local / not running).
    pub pids: Vec<Option<u32>>,
    /// CPUs available to each node (for CPU shares), aligned with `endpoints`.
    pub node_cpus: Vec<f64>,
    /// Sample host CPU and disks from /proc (local clusters).
    pub host: bool,
    pub interval_s: f64,
}

impl MetricsPlan {
    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty() && !self.host
    }
}

/// A local cluster's plan: every node's exporter and process, and the host's /proc.
pub fn local_plan(c: &crate::cluster::Cluster, interval_s: f64) -> MetricsPlan {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64;
    MetricsPlan {
        endpoints: c
            .nodes()
            .iter()
            .map(|n| Endpoint {
                node: n.name.clone(),
                host: n.address.clone(),
                port: n.metrics_port,
            })
            .collect(),
        pids: c.nodes().iter().map(|n| c.pid(n)).collect(),
        node_cpus: c
            .nodes()
            .iter()
            .map(|n| {
                if n.cpus.is_empty() {
                    cores
                } else {
                    n.cpus.len() as f64
                }
            })
            .collect(),
        host: true,
        interval_s,
    }
}

/// Cumulative server counters and gauges read from one scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeReading {
    pub pending_compactions: Option<f64>,
    pub completed_compactions: Option<f64>,
    pub compacted_bytes: Option<f64>,
    pub sstables_per_read: Option<f64>,
    pub live_sstables: Option<f64>,
    pub load_bytes: Option<f64>,
    pub dropped: Option<f64>,
    pub gc_seconds: Option<f64>,
    pub cpu_seconds: Option<f64>,
    pub cpu_share: Option<f64>,
}

const C: &str = "org_apache_cassandra_metrics_";

/// The metric names [`reading`] uses.
pub const NAMES: &[&str] = &[
    "org_apache_cassandra_metrics_compaction_value",
    "org_apache_cassandra_metrics_compaction_count",
    "org_apache_cassandra_metrics_table_mean",
    "org_apache_cassandra_metrics_table_value",
    "org_apache_cassandra_metrics_storage_count",
    "org_apache_cassandra_metrics_droppedmessage_count",
    "jvm_gc_collection_seconds_sum",
    "process_cpu_seconds_total",
    "java_lang_operatingsystem_processcpuload",
];

/// Reads the figures cqlbench uses from a scrape, by the names the Prometheus JMX exporter
/// gives Cassandra's MBeans (lowercased, see `cluster::render::exporter_yaml`).
pub fn reading(samples: &[PromSample]) -> NodeReading {
    // Values of the samples named `name` (with the label, if given), in scrape order.
    let values = |name: &str, label: Option<(&str, &str)>| -> Vec<f64> {
        samples
            .iter()
            .filter(|s| s.name == name && label.is_none_or(|(k, v)| s.label(k) == Some(v)))
            .map(|s| s.value)
            .collect()
    };
    // The first such sample, if its value is finite.
    let one = |name: &str, label| {
        values(name, label)
            .first()
            .copied()
            .filter(|v| v.is_finite())
    };
    // The sum of the finite ones.
    let sum = |name: &str, label| {
        let vals: Vec<f64> = values(name, label)
            .into_iter()
            .filter(|v| v.is_finite())
            .collect();
        (!vals.is_empty()).then(|| vals.iter().sum())
    };
    NodeReading {
        pending_compactions: one(
            &format!("{C}compaction_value"),
            Some(("name", "PendingTasks")),
        ),
        completed_compactions: one(
            &format!("{C}compaction_value"),
            Some(("name", "CompletedTasks")),
        ),
        compacted_bytes: one(
            &format!("{C}compaction_count"),
            Some(("name", "BytesCompacted")),
        ),
        sstables_per_read: one(
            &format!("{C}table_mean"),
            Some(("name", "SSTablesPerReadHistogram")),
        ),
        live_sstables: one(
            &format!("{C}table_value"),
            Some(("name", "LiveSSTableCount")),
        ),
        load_bytes: one(&format!("{C}storage_count"), Some(("name", "Load"))),
        dropped: sum(
            &format!("{C}droppedmessage_count"),
            Some(("name", "Dropped")),
        ),
        gc_seconds: sum("jvm_gc_collection_seconds_sum", None),
        cpu_seconds: one("process_cpu_seconds_total", None),
        cpu_share: one("java_lang_operatingsystem_processcpuload", None).filter(|v| *v >= 0.0),
    }
}

/// Scrapes one endpoint.
pub fn scrape_node(e: &Endpoint, timeout: Duration) -> Result<NodeReading, String> {
    let text = prometheus::scrape(&e.host, e.port, timeout)
        .map_err(|err| format!("{}: {}:{}: {err}", e.node, e.host, e.port))?;
    Ok(reading(&prometheus::parse_named(&text, NAMES)))
}

/// Scrapes every endpoint at once (one thread each).
pub fn scrape_all(endpoints: &[Endpoint], timeout: Duration) -> Vec<Result<NodeReading, String>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = endpoints
            .iter()
            .map(|e| s.spawn(move || scrape_node(e, timeout)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("scrape panicked".into())))
            .collect()
    })
}

/// Highest pending compactions over the nodes that answered; `None` when none did.
pub fn max_pending(readings: &[Result<NodeReading, String>]) -> Option<f64> {
    readings
        .iter()
        .filter_map(|r| r.as_ref().ok().and_then(|r| r.pending_compactions))
        .reduce(f64::max)
}

fn rate(now: Option<f64>, prev: Option<f64>, secs: f64) -> Option<f64> {
    match (now, prev) {
        (Some(n), Some(p)) if secs > 0.0 => Some(((n - p) / secs).max(0.0)),
        _ => None,
    }
}

/// Turns two consecutive readings into one node sample.
pub fn node_sample(now: &NodeReading, prev: Option<&NodeReading>, secs: f64) -> NodeSample {
    let p = |f: fn(&NodeReading) -> Option<f64>| prev.and_then(f);
    NodeSample {
        up: true,
        pending_compactions: now.pending_compactions,
        compactions_per_s: rate(
            now.completed_compactions,
            p(|r| r.completed_compactions),
            secs,
        ),
        compacted_bytes_per_s: rate(now.compacted_bytes, p(|r| r.compacted_bytes), secs),
        sstables_per_read: now.sstables_per_read,
        live_sstables: now.live_sstables,
        load_bytes: now.load_bytes,
        dropped_per_s: rate(now.dropped, p(|r| r.dropped), secs),
        gc_pause_ms_per_s: rate(now.gc_seconds, p(|r| r.gc_seconds), secs).map(|v| v * 1000.0),
        cpu_cores: rate(now.cpu_seconds, p(|r| r.cpu_seconds), secs),
        cpu_share: now.cpu_share,
    }
}

/// Host figures over one period from two /proc readings.
pub fn host_sample(
    cpu: (&CpuTimes, &CpuTimes),
    disks: (&[DiskCounters], &[DiskCounters]),
    devices: &[String],
    secs: f64,
) -> (f64, f64, f64, Vec<DeviceSample>) {
    let (now, prev) = cpu;
    let total = (now.total() - prev.total()).max(1) as f64;
    let share = |n: u64, p: u64| n.saturating_sub(p) as f64 / total;
    let devs = devices
        .iter()
        .map(|d| {
            let n = disks.0.iter().find(|c| &c.name == d);
            let p = disks.1.iter().find(|c| &c.name == d);
            match (n, p) {
                (Some(n), Some(p)) => n.delta(p, secs),
                _ => DeviceSample::default(),
            }
        })
        .collect();
    (
        share(now.user, prev.user),
        share(now.system, prev.system),
        share(now.iowait, prev.iowait),
        devs,
    )
}

struct State {
    series: MetricSeries,
}

/// A running sampler; stop it with [`Sampler::finish`].
pub struct Sampler {
    shared: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling; `t0_unix` is the run's start (the origin of `t_s`).
    pub fn start(plan: MetricsPlan, t0_unix: f64) -> Sampler {
        let devices = if plan.host {
            procfs::block_devices()
        } else {
            Vec::new()
        };
        let shared = Arc::new(Mutex::new(State {
            series: MetricSeries {
                interval_s: plan.interval_s,
                nodes: plan.endpoints.iter().map(|e| e.node.clone()).collect(),
                devices: devices.clone(),
                samples: Vec::new(),
                errors: Vec::new(),
            },
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (s2, stop2) = (shared.clone(), stop.clone());
        let handle = std::thread::Builder::new()
            .name("cqlbench-metrics".into())
            .spawn(move || sample_loop(plan, devices, t0_unix, s2, stop2))
            .ok();
        Sampler {
            shared,
            stop,
            handle,
        }
    }

    /// The series so far.
    pub fn series(&self) -> MetricSeries {
        self.shared
            .lock()
            .map(|s| s.series.clone())
            .unwrap_or_default()
    }

    /// Stops the thread and returns the whole series.
    pub fn finish(mut self) -> MetricSeries {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.series()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn sample_loop(
    plan: MetricsPlan,
    devices: Vec<String>,
    t0_unix: f64,
    shared: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
) {
    let period = Duration::from_secs_f64(plan.interval_s.max(0.05));
    let timeout = period.mul_f64(0.8).max(Duration::from_millis(200));
    let mut prev_nodes: Vec<Option<NodeReading>> = vec![None; plan.endpoints.len()];
    let mut prev_pid_cpu: Vec<Option<f64>> = vec![None; plan.endpoints.len()];
    let mut prev_cpu = plan.host.then(procfs::cpu_times).flatten();
    let mut prev_disks = if plan.host {
        procfs::disk_counters()
    } else {
        Vec::new()
    };
    let mut prev_client = crate::host::process_cpu_seconds();
    for (i, pid) in plan.pids.iter().enumerate() {
        prev_pid_cpu[i] = pid.and_then(procfs::pid_cpu_seconds);
    }
    let mut prev_t = Instant::now();
    let mut next = prev_t + period;
    loop {
        // Sleep in short slices so a stop is seen quickly.
        while Instant::now() < next {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
        }
        next += period;
        let readings = scrape_all(&plan.endpoints, timeout);
        let now = Instant::now();
        let secs = (now - prev_t).as_secs_f64();
        prev_t = now;
        let t_s = crate::host::unix_now() - t0_unix;
        let mut errors = Vec::new();
        let nodes: Vec<NodeSample> = readings
            .into_iter()
            .enumerate()
            .map(|(i, r)| match r {
                Ok(r) => {
                    let s = node_sample(&r, prev_nodes[i].as_ref(), secs);
                    prev_nodes[i] = Some(r);
                    s
                }
                Err(e) => {
                    errors.push(e);
                    prev_nodes[i] = None;
                    NodeSample::default()
                }
            })
            .collect();
        let host = if plan.host {
            let cpu = procfs::cpu_times();
            let disks = procfs::disk_counters();
            let (user, system, iowait, devs) = match (&cpu, &prev_cpu) {
                (Some(c), Some(p)) => host_sample((c, p), (&disks, &prev_disks), &devices, secs),
                _ => (0.0, 0.0, 0.0, vec![DeviceSample::default(); devices.len()]),
            };
            prev_cpu = cpu;
            prev_disks = disks;
            let node_cpu_cores = plan
                .pids
                .iter()
                .enumerate()
                .map(|(i, pid)| {
                    let now = pid.and_then(procfs::pid_cpu_seconds);
                    let r = rate(now, prev_pid_cpu[i], secs);
                    prev_pid_cpu[i] = now;
                    r
                })
                .collect();
            let client = crate::host::process_cpu_seconds();
            let client_cpu_cores = ((client - prev_client) / secs).max(0.0);
            prev_client = client;
            Some(HostSample {
                cpu_user: user,
                cpu_system: system,
                cpu_iowait: iowait,
                devices: devs,
                node_cpu_cores,
                client_cpu_cores,
            })
        } else {
            None
        };
        let Ok(mut st) = shared.lock() else {
            return;
        };
        for e in errors {
            let source = e.split(':').next().unwrap_or("").to_string();
            if !st
                .series
                .errors
                .iter()
                .any(|x| x.split(':').next() == Some(&source))
            {
                st.series.errors.push(e);
            }
        }
        st.series.samples.push(Sample { t_s, nodes, host });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_with_or_without_scheme() {
        let e = Endpoint::parse("http://10.0.0.5:9103/metrics").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("10.0.0.5", 9103));
        assert_eq!(e.node, "10.0.0.5:9103");
        assert!(
            Endpoint::parse("10.0.0.5")
                .unwrap_err()
                .contains("host:port")
        );
        assert!(Endpoint::parse("h:x").unwrap_err().contains("bad port"));
    }

    #[test]
    fn readings_come_from_exporter_names_and_rates_from_two_readings() {
        let text = "\
org_apache_cassandra_metrics_compaction_value{name=\"PendingTasks\"} 7.0
org_apache_cassandra_metrics_compaction_value{name=\"CompletedTasks\"} 51.0
org_apache_cassandra_metrics_compaction_count{name=\"BytesCompacted\"} 1000.0
org_apache_cassandra_metrics_table_mean{name=\"SSTablesPerReadHistogram\"} 2.16
org_apache_cassandra_metrics_table_value{name=\"LiveSSTableCount\"} 18.0
org_apache_cassandra_metrics_storage_count{name=\"Load\"} 117116.0
org_apache_cassandra_metrics_droppedmessage_count{name=\"Dropped\",scope=\"MUTATION\"} 3.0
org_apache_cassandra_metrics_droppedmessage_count{name=\"Dropped\",scope=\"READ\"} 2.0
org_apache_cassandra_metrics_droppedmessage_count{name=\"CrossNodeDroppedLatency\",scope=\"READ\"} 99.0
jvm_gc_collection_seconds_sum{gc=\"G1 Young Generation\"} 0.2
jvm_gc_collection_seconds_sum{gc=\"G1 Old Generation\"} 0.1
process_cpu_seconds_total 10.0
java_lang_operatingsystem_processcpuload 0.25
";
        let r = reading(&prometheus::parse(text));
        assert_eq!(r, reading(&prometheus::parse_named(text, NAMES)));
        assert_eq!(r.pending_compactions, Some(7.0));
        assert_eq!(r.dropped, Some(5.0));
        assert!((r.gc_seconds.unwrap() - 0.3).abs() < 1e-9);
        let mut later = r.clone();
        later.completed_compactions = Some(53.0);
        later.gc_seconds = Some(0.35);
        later.cpu_seconds = Some(11.5);
        later.dropped = Some(5.0);
        let s = node_sample(&later, Some(&r), 0.5);
        assert_eq!(s.compactions_per_s, Some(4.0));
        assert!((s.gc_pause_ms_per_s.unwrap() - 100.0).abs() < 1e-6);
        assert_eq!(s.cpu_cores, Some(3.0));
        assert_eq!(s.dropped_per_s, Some(0.0));
        assert_eq!(s.load_bytes, Some(117116.0));
        assert_eq!(s.cpu_share, Some(0.25));
        // The first reading has no rates.
        assert_eq!(node_sample(&r, None, 1.0).cpu_cores, None);
        assert_eq!(
            max_pending(&[Ok(r.clone()), Err("x".into()), Ok(later)]),
            Some(7.0)
        );
        assert_eq!(max_pending(&[Err("x".into())]), None);
    }
}
