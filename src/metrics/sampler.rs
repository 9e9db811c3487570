//! The sampler: a thread of its own that, once per period, reads /proc (for local clusters),
//! starts a scrape of every node's Prometheus endpoint, and appends finished [`Sample`]s to
//! the run's [`MetricSeries`]. Counters become rates between two readings, over the time
//! between those readings.
//!
//! Each scrape runs on a thread of its own and its answer fills in the sample of the tick that
//! started it, however late (see [`super::assemble`]): on a saturated two-core machine an
//! exporter can take a second or more to answer, and a slow scrape then neither delays the
//! other nodes or the next tick nor costs the sample its reading. A sample that gets no
//! reading of a node records why ([`NodeSample::missing`]) and the node's liveness from a
//! source that knows it (its process for a local node, a refused connection for a remote
//! one), never "down" for a scrape that was merely slow.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::procfs::{self, CpuTimes, DiskCounters};
use super::prometheus::{self, Sample as PromSample};
use crate::result::series::{DeviceSample, HostSample, MetricSeries, NodeSample, Sample};

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
    pub fn parse(s: &str) -> Result<Endpoint, crate::error::Invalid> {
        let t = s.trim();
        let t = t.strip_prefix("http://").unwrap_or(t);
        let t = t.strip_suffix("/metrics").unwrap_or(t);
        let (host, port) = t.rsplit_once(':').ok_or_else(|| {
            crate::invalid!("'{s}' is not a metrics endpoint: expected host:port")
        })?;
        let port: u16 = port
            .parse()
            .map_err(|_| crate::invalid!("'{s}' is not a metrics endpoint: bad port '{port}'"))?;
        if host.is_empty() {
            return Err(crate::invalid!("'{s}' is not a metrics endpoint: no host"));
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
    /// Nodes with a disk of their own (emulated), sampled beside the host's devices.
    pub node_devices: Vec<crate::result::series::NodeDevice>,
}

impl MetricsPlan {
    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty() && !self.host
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
    /// Local reads served (all tables), and their total latency in microseconds.
    pub local_reads: Option<f64>,
    pub local_read_us: Option<f64>,
}

/// Where a figure is read: a metric name, and a label the sample must carry.
type Source = (&'static str, Option<(&'static str, &'static str)>);

/// Each figure's sources, in the order they are tried (the first with a finite value wins):
/// 1. the Prometheus JMX exporter's names, as configured for local nodes (see
///    `cluster::render::exporter_yaml`);
/// 2. the Management API's metrics endpoint (K8ssandra from operator v1.5 with Management API
///    ≥ 0.1.67, port 9000, `/metrics`): Dropwizard names snake_cased, keyspace, table and
///    message type as labels, all-tables aggregates suffixed `_all`, histograms as quantiles
///    only (so SSTables per read is its median there, not its mean);
/// 3. MCAC's collectd output as served on port 9103 (older K8ssandra), before Prometheus
///    relabelling: the dotted, snake_cased name in the `mcac` label.
///
/// Names of 2 and 3 were read from those projects' sources (naming code, relabel rules,
/// dashboards), not from a live scrape. MCAC has no dropped-message counter in seconds, GC
/// seconds or process CPU seconds under these names: those figures stay empty from it.
mod sources {
    use super::Source;
    pub const PENDING: &[Source] = &[
        (
            "org_apache_cassandra_metrics_compaction_value",
            Some(("name", "PendingTasks")),
        ),
        (
            "org_apache_cassandra_metrics_compaction_pending_tasks",
            None,
        ),
        (
            "collectd_mcac_gauge",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.compaction.pending_tasks",
            )),
        ),
    ];
    pub const COMPLETED: &[Source] = &[
        (
            "org_apache_cassandra_metrics_compaction_value",
            Some(("name", "CompletedTasks")),
        ),
        (
            "org_apache_cassandra_metrics_compaction_completed_tasks",
            None,
        ),
        (
            "collectd_mcac_gauge",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.compaction.completed_tasks",
            )),
        ),
    ];
    pub const COMPACTED_BYTES: &[Source] = &[
        (
            "org_apache_cassandra_metrics_compaction_count",
            Some(("name", "BytesCompacted")),
        ),
        (
            "org_apache_cassandra_metrics_compaction_bytes_compacted",
            None,
        ),
        (
            "collectd_mcac_counter_total",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.compaction.bytes_compacted",
            )),
        ),
    ];
    pub const SSTABLES_PER_READ: &[Source] = &[
        (
            "org_apache_cassandra_metrics_table_mean",
            Some(("name", "SSTablesPerReadHistogram")),
        ),
        (
            "org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all",
            Some(("quantile", "0.5")),
        ),
        (
            "collectd_mcac_histogram_mean",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.table.ss_tables_per_read_histogram.all",
            )),
        ),
    ];
    pub const LIVE_SSTABLES: &[Source] = &[
        (
            "org_apache_cassandra_metrics_table_value",
            Some(("name", "LiveSSTableCount")),
        ),
        (
            "org_apache_cassandra_metrics_table_live_ss_table_count_all",
            None,
        ),
        (
            "collectd_mcac_gauge",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.table.live_ss_table_count.all",
            )),
        ),
    ];
    pub const LOAD: &[Source] = &[
        (
            "org_apache_cassandra_metrics_storage_count",
            Some(("name", "Load")),
        ),
        ("org_apache_cassandra_metrics_storage_load", None),
        (
            "collectd_mcac_counter_total",
            Some(("mcac", "org.apache.cassandra.metrics.storage.load")),
        ),
    ];
    /// Summed over message types.
    pub const DROPPED: &[Source] = &[
        (
            "org_apache_cassandra_metrics_droppedmessage_count",
            Some(("name", "Dropped")),
        ),
        (
            "org_apache_cassandra_metrics_dropped_message_dropped_total",
            None,
        ),
    ];
    /// Summed over collectors; the Prometheus Java client's name, which both the JMX exporter
    /// and the Management API serve.
    pub const GC_SECONDS: &[Source] = &[("jvm_gc_collection_seconds_sum", None)];
    pub const CPU_SECONDS: &[Source] = &[("process_cpu_seconds_total", None)];
    pub const CPU_SHARE: &[Source] = &[("java_lang_operatingsystem_processcpuload", None)];
    /// Local reads of all tables (the JMX exporter's names only).
    pub const LOCAL_READS: &[Source] = &[(
        "org_apache_cassandra_metrics_table_count",
        Some(("name", "ReadLatency")),
    )];
    pub const LOCAL_READ_US: &[Source] = &[(
        "org_apache_cassandra_metrics_table_count",
        Some(("name", "ReadTotalLatency")),
    )];

    /// Every figure's sources.
    #[cfg(test)]
    pub const ALL: &[&[Source]] = &[
        PENDING,
        COMPLETED,
        COMPACTED_BYTES,
        SSTABLES_PER_READ,
        LIVE_SSTABLES,
        LOAD,
        DROPPED,
        GC_SECONDS,
        CPU_SECONDS,
        CPU_SHARE,
        LOCAL_READS,
        LOCAL_READ_US,
    ];
}

/// The metric names [`reading`] uses (every source's).
pub const NAMES: &[&str] = &[
    "org_apache_cassandra_metrics_compaction_value",
    "org_apache_cassandra_metrics_compaction_count",
    "org_apache_cassandra_metrics_table_mean",
    "org_apache_cassandra_metrics_table_value",
    "org_apache_cassandra_metrics_table_count",
    "org_apache_cassandra_metrics_storage_count",
    "org_apache_cassandra_metrics_droppedmessage_count",
    "org_apache_cassandra_metrics_compaction_pending_tasks",
    "org_apache_cassandra_metrics_compaction_completed_tasks",
    "org_apache_cassandra_metrics_compaction_bytes_compacted",
    "org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all",
    "org_apache_cassandra_metrics_table_live_ss_table_count_all",
    "org_apache_cassandra_metrics_storage_load",
    "org_apache_cassandra_metrics_dropped_message_dropped_total",
    "collectd_mcac_gauge",
    "collectd_mcac_counter_total",
    "collectd_mcac_histogram_mean",
    "jvm_gc_collection_seconds_sum",
    "process_cpu_seconds_total",
    "java_lang_operatingsystem_processcpuload",
];

/// Reads the figures cqlbench uses from a scrape, by the names of whichever exporter served
/// it (see [`sources`]).
pub fn reading(samples: &[PromSample]) -> NodeReading {
    // The finite values of the samples a source names, in scrape order.
    let values = |&(name, label): &Source| -> Vec<f64> {
        samples
            .iter()
            .filter(|s| s.name == name && label.is_none_or(|(k, v)| s.label(k) == Some(v)))
            .map(|s| s.value)
            .filter(|v| v.is_finite())
            .collect()
    };
    // The first source with a value: its first value …
    let one = |sources: &[Source]| sources.iter().find_map(|s| values(s).first().copied());
    // … or the sum of its values.
    let sum = |sources: &[Source]| {
        sources.iter().find_map(|s| {
            let v = values(s);
            (!v.is_empty()).then(|| v.iter().sum())
        })
    };
    NodeReading {
        pending_compactions: one(sources::PENDING),
        completed_compactions: one(sources::COMPLETED),
        compacted_bytes: one(sources::COMPACTED_BYTES),
        sstables_per_read: one(sources::SSTABLES_PER_READ),
        live_sstables: one(sources::LIVE_SSTABLES),
        load_bytes: one(sources::LOAD),
        dropped: sum(sources::DROPPED),
        gc_seconds: sum(sources::GC_SECONDS),
        cpu_seconds: one(sources::CPU_SECONDS),
        cpu_share: one(sources::CPU_SHARE).filter(|v| *v >= 0.0),
        local_reads: one(sources::LOCAL_READS),
        local_read_us: one(sources::LOCAL_READ_US),
    }
}

/// Why a scrape gave no reading.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapeError {
    /// e.g. "node2: 127.0.0.2:7302: no answer within 5.0s".
    pub message: String,
    /// The node refused the connection: nothing listens there (the node is down).
    pub refused: bool,
}

impl std::fmt::Display for ScrapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The metric families [`NAMES`] belong to, for the exporter's `name[]` filter: a scrape
/// then carries the dozen series the sampler reads instead of ~1,000 lines. A server that
/// ignores the filter still answers in full.
fn name_filter() -> String {
    let mut families: Vec<&str> = Vec::new();
    for n in NAMES {
        for f in [
            *n,
            n.strip_suffix("_total").unwrap_or(n),
            n.strip_suffix("_sum").unwrap_or(n),
        ] {
            if !families.contains(&f) {
                families.push(f);
            }
        }
    }
    families
        .iter()
        .map(|f| format!("name[]={f}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// Scrapes one endpoint.
pub fn scrape_node(e: &Endpoint, timeout: Duration) -> Result<NodeReading, ScrapeError> {
    let path = format!("/metrics?{}", name_filter());
    let text = prometheus::scrape_path(&e.host, e.port, &path, timeout).map_err(|err| {
        let timed_out = matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        );
        let what = if timed_out {
            format!("no answer within {:.1}s", timeout.as_secs_f64())
        } else {
            err.to_string()
        };
        ScrapeError {
            message: format!("{}: {}:{}: {what}", e.node, e.host, e.port),
            refused: err.kind() == std::io::ErrorKind::ConnectionRefused,
        }
    })?;
    Ok(reading(&prometheus::parse_named(&text, NAMES)))
}

/// Scrapes every endpoint at once (one thread each).
pub fn scrape_all(
    endpoints: &[Endpoint],
    timeout: Duration,
) -> Vec<Result<NodeReading, ScrapeError>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = endpoints
            .iter()
            .map(|e| s.spawn(move || scrape_node(e, timeout)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ScrapeError {
                        message: "scrape panicked".into(),
                        refused: false,
                    })
                })
            })
            .collect()
    })
}

/// Highest pending compactions over the nodes that answered; `None` when none did.
pub fn max_pending(readings: &[Result<NodeReading, ScrapeError>]) -> Option<f64> {
    readings
        .iter()
        .filter_map(|r| r.as_ref().ok().and_then(|r| r.pending_compactions))
        .reduce(f64::max)
}

/// Why a figure could not be measured, e.g. "node1: 127.0.0.1:7301: no answer within 5.0s".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct NotMeasured(pub String);

/// Highest pending compactions over every node, or why it could not be read: a node that did
/// not answer may be the one with the most, so any missing node makes the figure unknown.
pub fn max_pending_of_all(
    readings: &[Result<NodeReading, ScrapeError>],
) -> Result<f64, NotMeasured> {
    let mut max: Option<f64> = None;
    for r in readings {
        let r = r.as_ref().map_err(|e| NotMeasured(e.message.clone()))?;
        let p = r.pending_compactions.ok_or_else(|| {
            NotMeasured("a node's endpoint exports no pending compactions".into())
        })?;
        max = Some(max.map_or(p, |m: f64| m.max(p)));
    }
    max.ok_or_else(|| NotMeasured("no metrics endpoint to read pending compactions from".into()))
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
        up: Some(true),
        missing: None,
        scrape_s: None,
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
        local_reads_per_s: rate(now.local_reads, p(|r| r.local_reads), secs),
        local_read_ms: match (
            now.local_reads.zip(p(|r| r.local_reads)),
            now.local_read_us.zip(p(|r| r.local_read_us)),
        ) {
            (Some((n, pn)), Some((us, pus))) if n > pn && us >= pus => {
                Some((us - pus) / (n - pn) / 1000.0)
            }
            _ => None,
        },
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
            let mut d = procfs::block_devices();
            d.extend(plan.node_devices.iter().map(|n| n.device.clone()));
            d
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
                node_devices: plan.node_devices.clone(),
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

/// Scrapes `e` on a thread of its own and sends the answer, tagged with the sample it is for
/// and when it came, on `tx`.
fn spawn_scrape(
    seq: u64,
    node: usize,
    e: &Endpoint,
    timeout: Duration,
    tx: &mpsc::Sender<(u64, usize, Instant, Result<NodeReading, ScrapeError>)>,
) {
    let (e, tx2) = (e.clone(), tx.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("cqlbench-scrape-{node}"))
        .spawn(move || {
            let r = scrape_node(&e, timeout);
            let _ = tx2.send((seq, node, Instant::now(), r));
        });
    if let Err(err) = spawned {
        let _ = tx.send((
            seq,
            node,
            Instant::now(),
            Err(ScrapeError {
                message: format!("starting a scrape thread: {err}"),
                refused: false,
            }),
        ));
    }
}

/// Whether a local node's process is alive (`None` for a remote node: its liveness comes
/// from its endpoint refusing connections).
fn alive(pid: Option<u32>) -> Option<bool> {
    pid.map(|p| procfs::pid_cpu_seconds(p).is_some())
}

/// Appends finished samples and the first error of each source to the series.
fn publish(shared: &Mutex<State>, samples: Vec<Sample>, errors: Vec<ScrapeError>) -> bool {
    let Ok(mut st) = shared.lock() else {
        return false;
    };
    for e in errors {
        let source = e.message.split(':').next().unwrap_or("").to_string();
        if !st
            .series
            .errors
            .iter()
            .any(|x| x.split(':').next() == Some(&source))
        {
            st.series.errors.push(e.message);
        }
    }
    st.series.samples.extend(samples);
    true
}

/// How long a stopping sampler waits for the scrapes still running.
const FINISH_WAIT: Duration = Duration::from_secs(2);

fn sample_loop(
    plan: MetricsPlan,
    devices: Vec<String>,
    t0_unix: f64,
    shared: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
) {
    let period = Duration::from_secs_f64(plan.interval_s.max(0.05));
    // A scrape may take several periods: its answer still fills its own sample.
    let scrape_timeout = (period * 5).max(Duration::from_secs(2));
    let mut assembler = super::assemble::Assembler::new(plan.endpoints.len(), scrape_timeout);
    let (tx, answers) = mpsc::channel();
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
        // Until the tick: take the answers as they come, and see a stop quickly.
        let mut stopping = false;
        while Instant::now() < next {
            if stop.load(Ordering::Relaxed) {
                stopping = true;
                break;
            }
            let slice = (next - Instant::now()).min(Duration::from_millis(50));
            if let Ok((seq, node, at, r)) = answers.recv_timeout(slice) {
                assembler.answer(seq, node, at, r);
            }
        }
        if stopping {
            let deadline = Instant::now() + FINISH_WAIT;
            while assembler.awaiting() {
                let left = deadline.saturating_duration_since(Instant::now());
                match answers.recv_timeout(left) {
                    Ok((seq, node, at, r)) => assembler.answer(seq, node, at, r),
                    Err(_) => break,
                }
            }
            let (samples, errors) = assembler.ready(Instant::now(), true);
            publish(&shared, samples, errors);
            return;
        }
        let tick = next;
        next += period;
        // A sampler that fell behind skips the ticks it missed rather than bunching samples.
        while next <= Instant::now() {
            next += period;
        }
        let now = Instant::now();
        let secs = (now - prev_t).as_secs_f64();
        prev_t = now;
        let t_s = crate::host::unix_now() - t0_unix;
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
        let alive_now = (0..plan.endpoints.len())
            .map(|i| alive(plan.pids.get(i).copied().flatten()))
            .collect();
        let (seq, ask) = assembler.tick(tick, t_s, host, alive_now);
        for i in ask {
            spawn_scrape(seq, i, &plan.endpoints[i], scrape_timeout, &tx);
        }
        let (samples, errors) = assembler.ready(Instant::now(), false);
        if !publish(&shared, samples, errors) {
            return;
        }
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

    /// K8ssandra's endpoints give the same figures under their names: the Management API's
    /// (with its labels and the `_by_table_name` map gauge that must not be taken for the
    /// pending count) and MCAC's collectd output.
    #[test]
    fn k8ssandra_endpoints_map_to_the_same_figures() {
        let labels =
            "host=\"5d1c\",instance=\"10.0.0.5\",cluster=\"demo\",datacenter=\"dc1\",rack=\"r1\"";
        let mgmt = format!(
            "\
# TYPE org_apache_cassandra_metrics_compaction_pending_tasks gauge
org_apache_cassandra_metrics_compaction_pending_tasks_by_table_name{{{labels}}} 0.0
org_apache_cassandra_metrics_compaction_pending_tasks{{{labels}}} 7.0
org_apache_cassandra_metrics_compaction_completed_tasks{{{labels}}} 51.0
org_apache_cassandra_metrics_compaction_bytes_compacted{{{labels}}} 1000.0
org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all{{{labels},quantile=\"0.5\"}} 2.0
org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all{{{labels},quantile=\"0.99\"}} 6.0
org_apache_cassandra_metrics_table_live_ss_table_count_all{{{labels}}} 18.0
org_apache_cassandra_metrics_storage_load{{{labels}}} 117116.0
org_apache_cassandra_metrics_dropped_message_dropped_total{{{labels},message_type=\"MUTATION\"}} 3.0
org_apache_cassandra_metrics_dropped_message_dropped_total{{{labels},message_type=\"READ\"}} 2.0
jvm_gc_collection_seconds_sum{{{labels},gc=\"G1 Young Generation\"}} 0.3
process_cpu_seconds_total{{{labels}}} 10.0
"
        );
        let r = reading(&prometheus::parse_named(&mgmt, NAMES));
        let want = NodeReading {
            pending_compactions: Some(7.0),
            completed_compactions: Some(51.0),
            compacted_bytes: Some(1000.0),
            sstables_per_read: Some(2.0),
            live_sstables: Some(18.0),
            load_bytes: Some(117116.0),
            dropped: Some(5.0),
            gc_seconds: Some(0.3),
            cpu_seconds: Some(10.0),
            cpu_share: None,
            local_reads: None,
            local_read_us: None,
        };
        assert_eq!(r, want);
        let m = "instance=\"10.0.0.5\",cluster=\"demo\",dc=\"dc1\",rack=\"r1\"";
        let mcac = format!(
            "\
collectd_mcac_gauge{{{m},mcac=\"org.apache.cassandra.metrics.compaction.pending_tasks\"}} 7
collectd_mcac_gauge{{{m},mcac=\"org.apache.cassandra.metrics.compaction.completed_tasks\"}} 51
collectd_mcac_counter_total{{{m},mcac=\"org.apache.cassandra.metrics.compaction.bytes_compacted\"}} 1000
collectd_mcac_histogram_mean{{{m},mcac=\"org.apache.cassandra.metrics.table.ss_tables_per_read_histogram.all\"}} 2
collectd_mcac_gauge{{{m},mcac=\"org.apache.cassandra.metrics.table.live_ss_table_count.all\"}} 18
collectd_mcac_counter_total{{{m},mcac=\"org.apache.cassandra.metrics.storage.load\"}} 117116
"
        );
        let r = reading(&prometheus::parse_named(&mcac, NAMES));
        assert_eq!(
            r,
            NodeReading {
                dropped: None,
                gc_seconds: None,
                cpu_seconds: None,
                ..want
            }
        );
    }

    #[test]
    fn every_source_name_is_parsed() {
        for figure in sources::ALL {
            for (name, _) in *figure {
                assert!(NAMES.contains(name), "{name} is not in NAMES");
            }
        }
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
org_apache_cassandra_metrics_table_count{name=\"ReadLatency\"} 1000.0
org_apache_cassandra_metrics_table_count{name=\"ReadTotalLatency\"} 2000000.0
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
        // 100 more local reads in 0.5 s, taking 450,000 µs: 4.5 ms each.
        later.local_reads = Some(1100.0);
        later.local_read_us = Some(2_450_000.0);
        let s = node_sample(&later, Some(&r), 0.5);
        assert_eq!(s.local_reads_per_s, Some(200.0));
        assert_eq!(s.local_read_ms, Some(4.5));
        assert_eq!(node_sample(&r, Some(&r), 0.5).local_read_ms, None);
        assert_eq!(s.compactions_per_s, Some(4.0));
        assert!((s.gc_pause_ms_per_s.unwrap() - 100.0).abs() < 1e-6);
        assert_eq!(s.cpu_cores, Some(3.0));
        assert_eq!(s.dropped_per_s, Some(0.0));
        assert_eq!(s.load_bytes, Some(117116.0));
        assert_eq!(s.cpu_share, Some(0.25));
        // The first reading has no rates.
        assert_eq!(node_sample(&r, None, 1.0).cpu_cores, None);
        let err = |refused| ScrapeError {
            message: "node2: 127.0.0.2:7302: no answer within 2.0s".into(),
            refused,
        };
        assert_eq!(
            max_pending(&[Ok(r.clone()), Err(err(false)), Ok(later.clone())]),
            Some(7.0)
        );
        assert_eq!(max_pending(&[Err(err(false))]), None);
        // Every node or nothing: the node that did not answer may have the most.
        assert_eq!(max_pending_of_all(&[Ok(r.clone()), Ok(later)]), Ok(7.0));
        assert_eq!(
            max_pending_of_all(&[Ok(r.clone()), Err(err(false))]),
            Err(NotMeasured(
                "node2: 127.0.0.2:7302: no answer within 2.0s".into()
            ))
        );
        let mut blank = r.clone();
        blank.pending_compactions = None;
        assert!(
            max_pending_of_all(&[Ok(blank)])
                .unwrap_err()
                .0
                .contains("exports no")
        );
        assert!(max_pending_of_all(&[]).is_err());
    }

    #[test]
    fn the_name_filter_asks_for_every_family_read() {
        let f = name_filter();
        for n in [
            "name[]=org_apache_cassandra_metrics_compaction_value",
            "name[]=process_cpu_seconds_total",
            "name[]=process_cpu_seconds&",
            "name[]=jvm_gc_collection_seconds&",
        ] {
            assert!(f.contains(n), "{n} in {f}");
        }
        // Each name, and the family of each `_total` and `_sum` one.
        let suffixed = NAMES
            .iter()
            .filter(|n| n.ends_with("_total") || n.ends_with("_sum"))
            .count();
        assert_eq!(f.matches("name[]=").count(), NAMES.len() + suffixed);
    }

    /// A metrics endpoint on loopback whose first answer takes `first_delay`.
    fn slow_endpoint(first_delay: Duration) -> Endpoint {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for (n, conn) in listener.incoming().enumerate() {
                let Ok(mut c) = conn else { return };
                let delay = if n == 0 { first_delay } else { Duration::ZERO };
                std::thread::spawn(move || {
                    // Read the whole request: closing on unread bytes would reset it.
                    let mut req = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                        match c.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => req.extend_from_slice(&buf[..n]),
                        }
                    }
                    std::thread::sleep(delay);
                    let body = "org_apache_cassandra_metrics_compaction_value{name=\"PendingTasks\"} 4.0\n";
                    let _ = write!(c, "HTTP/1.0 200 OK\r\n\r\n{body}");
                });
            }
        });
        Endpoint {
            node: "node1".into(),
            host: "127.0.0.1".into(),
            port,
        }
    }

    #[test]
    fn a_slow_scrape_fills_its_own_sample_while_the_next_one_runs_beside_it() {
        let e = slow_endpoint(Duration::from_millis(600));
        let timeout = Duration::from_secs(5);
        let mut a = super::super::assemble::Assembler::new(1, timeout);
        let (tx, rx) = mpsc::channel();
        let t0 = Instant::now();
        let (s0, ask) = a.tick(t0, 0.0, None, vec![Some(true)]);
        spawn_scrape(s0, ask[0], &e, timeout, &tx);
        std::thread::sleep(Duration::from_millis(200));
        // The next tick does not wait for the slow scrape: a second one runs beside it.
        let (s1, ask) = a.tick(Instant::now(), 0.2, None, vec![Some(true)]);
        assert_eq!(ask, [0]);
        spawn_scrape(s1, 0, &e, timeout, &tx);
        let (q, node, at, r) = rx.recv_timeout(Duration::from_secs(3)).unwrap();
        assert_eq!(q, s1, "the second scrape answers first");
        a.answer(q, node, at, r);
        assert!(
            a.ready(Instant::now(), false).0.is_empty(),
            "sample 0 still waits"
        );
        let (q, node, at, r) = rx.recv_timeout(Duration::from_secs(3)).unwrap();
        a.answer(q, node, at, r);
        let (done, errors) = a.ready(Instant::now(), false);
        assert!(errors.is_empty());
        assert_eq!(done.len(), 2);
        let first = &done[0].nodes[0];
        assert_eq!((first.up, first.missing.as_deref()), (Some(true), None));
        assert_eq!(first.pending_compactions, Some(4.0));
        assert!(first.scrape_s.unwrap() >= 0.59, "{:?}", first.scrape_s);
    }

    #[test]
    fn a_scrape_of_a_closed_port_says_refused() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let e = Endpoint {
            node: "node9".into(),
            host: "127.0.0.1".into(),
            port,
        };
        let err = scrape_node(&e, Duration::from_secs(1)).unwrap_err();
        assert!(err.refused, "{err}");
        assert!(err.message.starts_with("node9: 127.0.0.1:"), "{err}");
    }
}
