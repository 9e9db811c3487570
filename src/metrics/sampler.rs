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
//!
//! [`NodeSample::missing`]: crate::result::series::NodeSample::missing

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::assemble::Assembler;
use super::node_exporter::{self, NodeExporter};
use super::procfs::{self, CpuTimes, DiskCounters};
use super::reading::{NodeReading, rate};
use super::scrape::{NodeSource, ScrapeError, read_node};
use crate::result::series::{DeviceSample, HostSample, MetricSeries, NodeHost, Sample};
use crate::spill::Spill;

// Scraping, as the scenarios call it beside a run.
pub use super::scrape::{NotMeasured, max_pending, max_pending_of_all, scrape_all};

/// A scrape's answer: the sample it is for, the node, when it came, and the reading.
type Answer = (u64, usize, Instant, Result<NodeReading, ScrapeError>);

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
        // `node1=http://…` took the whole of `node1=http://10.0.0.5` for a host name.
        if host.contains(['/', '=', ' ']) || t.contains("://") {
            return Err(crate::invalid!(
                "'{s}' is not a metrics endpoint: bad host '{host}' (expected [http://]host:port; the node is named by its address)"
            ));
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
    /// The node exporters of the nodes' hosts (remote clusters), sampled beside the rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_exporters: Vec<NodeExporter>,
    /// The nodes' server figures are read through CQL ([`super::cql`]): no metrics endpoint
    /// was given for them. The load layer connects the reader ([`Self::reader`]) and lists the
    /// nodes it finds as [`Self::endpoints`] (their addresses and CQL port).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub through_cql: bool,
    /// The reader the nodes are read through instead of their endpoints (CQL, once connected;
    /// a Prometheus server): every endpoint is then read through it.
    #[serde(skip)]
    pub reader: Option<super::scrape::NodeSource>,
}

impl MetricsPlan {
    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty()
            && !self.host
            && self.node_exporters.is_empty()
            && !self.through_cql
    }
}

/// Host figures over one period from two readings of the host's counters — /proc's, or a
/// node exporter's turned into the same counters: CPU shares, and each of `devices`' iostat
/// figures (zero for a device missing from either reading). The caller fills the rest.
pub fn host_sample(
    cpu: (&CpuTimes, &CpuTimes),
    disks: (&[DiskCounters], &[DiskCounters]),
    devices: &[String],
    secs: f64,
) -> HostSample {
    let (now, prev) = cpu;
    let total = now.total().saturating_sub(prev.total()).max(1) as f64;
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
    HostSample {
        cpu_user: share(now.user, prev.user),
        cpu_system: share(now.system, prev.system),
        cpu_iowait: share(now.iowait, prev.iowait),
        cpu_steal: share(now.steal, prev.steal),
        devices: devs,
        ..HostSample::default()
    }
}

struct State {
    /// The series, its samples those not spilled.
    series: MetricSeries,
    /// The samples taken so far, once the run gives them a file ([`Sampler::spill_in`]).
    spill: Option<Spill<Sample>>,
    /// The newest sample spilled (for [`Sampler::latest`]).
    last: Option<Sample>,
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
                node_hosts: plan
                    .node_exporters
                    .iter()
                    .map(|e| NodeHost {
                        node: e.node.clone(),
                        exporter: e.address(),
                        devices: Vec::new(),
                        job: None,
                    })
                    .collect(),
                fetched: None,
                dialects: Vec::new(),
            },
            spill: None,
            last: None,
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

    /// Keeps the samples in an anonymous file in `dir` from now on, those taken so far
    /// included, instead of in memory: a long run's series then costs the client no memory
    /// ([`crate::spill`]). Samples the file does not take stay in memory.
    pub fn spill_in(&self, dir: &std::path::Path) {
        let Ok(mut st) = self.shared.lock() else {
            return;
        };
        let Ok(spill) = Spill::create_in(dir) else {
            return;
        };
        let st = &mut *st;
        st.spill = Some(spill);
        let kept = std::mem::take(&mut st.series.samples);
        keep(st, kept);
    }

    /// Calls `f` with the series so far, the sampler's own (it publishes new samples once `f`
    /// returns), and the spill its earlier samples are in (before the series' own samples): a
    /// result written with them streams the series, and costs no copy of it. `None` if the
    /// sampler's thread panicked holding it.
    pub fn with_series<R>(
        &self,
        f: impl FnOnce(&mut MetricSeries, Option<&Spill<Sample>>) -> R,
    ) -> Option<R> {
        let mut s = self.shared.lock().ok()?;
        let s = &mut *s;
        Some(f(&mut s.series, s.spill.as_ref()))
    }

    /// The series' names with only its latest sample (None before the first): what a live
    /// view needs each interval, without copying the whole series.
    pub fn latest(&self) -> Option<MetricSeries> {
        let s = self.shared.lock().ok()?;
        // The samples in memory are newer than those spilled.
        let last = s.series.samples.last().or(s.last.as_ref())?.clone();
        Some(MetricSeries {
            interval_s: s.series.interval_s,
            nodes: s.series.nodes.clone(),
            devices: s.series.devices.clone(),
            samples: vec![last],
            errors: Vec::new(),
            node_devices: s.series.node_devices.clone(),
            node_hosts: s.series.node_hosts.clone(),
            fetched: None,
            dialects: Vec::new(),
        })
    }

    /// Stops the thread and returns the whole series, its spilled samples read back.
    pub fn finish(mut self) -> MetricSeries {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        // The thread has stopped: the series is taken, not copied.
        let Ok(mut st) = self.shared.lock() else {
            return MetricSeries::default();
        };
        let mut series = std::mem::take(&mut st.series);
        if let Some(spill) = st.spill.take() {
            match spill.read_all() {
                Ok(mut samples) => {
                    samples.append(&mut series.samples);
                    series.samples = samples;
                }
                Err(e) => series.errors.push(format!(
                    "spill: {} samples kept in a file could not be read back: {e}",
                    spill.len()
                )),
            }
        }
        series
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
    (e, cql): (&Endpoint, Option<&NodeSource>),
    timeout: Duration,
    tx: &mpsc::Sender<Answer>,
) {
    let (e, cql, tx2) = (e.clone(), cql.cloned(), tx.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("cqlbench-scrape-{node}"))
        .spawn(move || {
            let r = read_node(&e, cql.as_ref(), timeout);
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

/// Appends finished samples and the first error of each source to the series, and the node
/// exporters' hosts' devices once known.
fn publish(
    shared: &Mutex<State>,
    samples: Vec<Sample>,
    errors: Vec<ScrapeError>,
    host_devices: &[Vec<String>],
    dialects: &[Option<&'static str>],
) -> bool {
    let Ok(mut st) = shared.lock() else {
        return false;
    };
    if dialects.iter().any(Option::is_some) {
        st.series.dialects = dialects.iter().map(|d| d.map(str::to_string)).collect();
    }
    for (h, d) in st.series.node_hosts.iter_mut().zip(host_devices) {
        if h.devices.is_empty() && !d.is_empty() {
            h.devices = d.clone();
        }
    }
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
    keep(&mut st, samples);
    true
}

/// Keeps `samples` after those kept before: in the spill while it takes them, else in memory.
fn keep(st: &mut State, samples: Vec<Sample>) {
    for s in samples {
        let spilled = st.series.samples.is_empty()
            && st
                .spill
                .as_mut()
                .is_some_and(|spill| spill.push(&s).is_ok());
        if spilled {
            st.last = Some(s);
        } else {
            st.series.samples.push(s);
        }
    }
}

/// The sampling period `run_time_s` into a run sampled every `base`: samples thin out as the
/// run's kept intervals do ([`crate::result::kept_width_s`]), so a day-long run's series stays
/// small. Rates and CPU shares are taken over the whole longer period, so they are its means.
fn period_at(base: Duration, run_time_s: f64) -> Duration {
    base.max(Duration::from_secs_f64(crate::result::kept_width_s(
        run_time_s,
    )))
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
    let mut assembler = Assembler::new(plan.endpoints.len(), scrape_timeout);
    let (tx, answers) = mpsc::channel();
    let mut host = HostReader::new(&plan, devices);
    // Node exporters are scraped together at each tick, within half a period (at most 2 s):
    // their first scrape is the readings the first sample's figures are taken against.
    let exporter_timeout = (period / 2).clamp(Duration::from_millis(100), Duration::from_secs(2));
    let mut hosts = node_exporter::Hosts::new(plan.node_exporters.clone());
    let first_errors = exporter_errors(hosts.sample(exporter_timeout).1);
    if !publish(&shared, Vec::new(), first_errors, &hosts.devices, &[]) {
        return;
    }
    let mut prev_t = Instant::now();
    let mut next = prev_t + period;
    loop {
        if !wait_for_tick(next, &stop, &answers, &mut assembler) {
            finish(&mut assembler, &answers, &shared);
            return;
        }
        let tick = next;
        let period = period_at(period, crate::host::unix_now() - t0_unix);
        next += period;
        // A sampler that fell behind skips the ticks it missed rather than bunching samples.
        while next <= Instant::now() {
            next += period;
        }
        let now = Instant::now();
        let secs = (now - prev_t).as_secs_f64();
        prev_t = now;
        let t_s = crate::host::unix_now() - t0_unix;
        let host = plan.host.then(|| host.sample(secs));
        let alive_now = (0..plan.endpoints.len())
            .map(|i| alive(plan.pids.get(i).copied().flatten()))
            .collect();
        let (seq, ask) = assembler.tick(tick, t_s, host, alive_now);
        for i in ask {
            let node = (&plan.endpoints[i], plan.reader.as_ref());
            spawn_scrape(seq, i, node, scrape_timeout, &tx);
        }
        let mut errors = Vec::new();
        if !plan.node_exporters.is_empty() {
            let (node_hosts, e) = hosts.sample(exporter_timeout);
            assembler.node_hosts(seq, node_hosts);
            errors = exporter_errors(e);
        }
        let (samples, scrape_errors) = assembler.ready(Instant::now(), false);
        errors.extend(scrape_errors);
        if !publish(
            &shared,
            samples,
            errors,
            &hosts.devices,
            assembler.dialects(),
        ) {
            return;
        }
    }
}

/// Takes the scrapes' answers as they come until the tick at `next`; false when asked to stop
/// first (seen within 50 ms).
fn wait_for_tick(
    next: Instant,
    stop: &AtomicBool,
    answers: &mpsc::Receiver<Answer>,
    assembler: &mut Assembler,
) -> bool {
    while Instant::now() < next {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let slice = (next - Instant::now()).min(Duration::from_millis(50));
        if let Ok((seq, node, at, r)) = answers.recv_timeout(slice) {
            assembler.answer(seq, node, at, r);
        }
    }
    true
}

/// Waits up to [`FINISH_WAIT`] for the scrapes still running, and publishes every sample.
fn finish(assembler: &mut Assembler, answers: &mpsc::Receiver<Answer>, shared: &Mutex<State>) {
    let deadline = Instant::now() + FINISH_WAIT;
    while assembler.awaiting() {
        let left = deadline.saturating_duration_since(Instant::now());
        match answers.recv_timeout(left) {
            Ok((seq, node, at, r)) => assembler.answer(seq, node, at, r),
            Err(_) => break,
        }
    }
    let (samples, errors) = assembler.ready(Instant::now(), true);
    publish(shared, samples, errors, &[], assembler.dialects());
}

/// A node exporter's errors as a scrape's (the exporter's name is their source).
fn exporter_errors(errors: Vec<String>) -> Vec<ScrapeError> {
    errors
        .into_iter()
        .map(|message| ScrapeError {
            message,
            refused: false,
        })
        .collect()
}

/// The host's /proc counters and the nodes' and the client's CPU time at the last sample, to
/// take the next one's rates against.
struct HostReader {
    devices: Vec<String>,
    pids: Vec<Option<u32>>,
    prev_cpu: Option<CpuTimes>,
    prev_disks: Vec<DiskCounters>,
    prev_pid_cpu: Vec<Option<f64>>,
    prev_client: f64,
}

impl HostReader {
    fn new(plan: &MetricsPlan, devices: Vec<String>) -> HostReader {
        let mut prev_pid_cpu: Vec<Option<f64>> = vec![None; plan.endpoints.len()];
        let prev_cpu = plan.host.then(procfs::cpu_times).flatten();
        let prev_disks = if plan.host {
            procfs::disk_counters()
        } else {
            Vec::new()
        };
        let prev_client = crate::host::process_cpu_seconds();
        for (i, pid) in plan.pids.iter().enumerate() {
            prev_pid_cpu[i] = pid.and_then(procfs::pid_cpu_seconds);
        }
        HostReader {
            devices,
            pids: plan.pids.clone(),
            prev_cpu,
            prev_disks,
            prev_pid_cpu,
            prev_client,
        }
    }

    /// The host's figures over the `secs` since the last sample.
    fn sample(&mut self, secs: f64) -> HostSample {
        let cpu = procfs::cpu_times();
        let disks = procfs::disk_counters();
        let figures = match (&cpu, &self.prev_cpu) {
            (Some(c), Some(p)) => {
                host_sample((c, p), (&disks, &self.prev_disks), &self.devices, secs)
            }
            _ => HostSample {
                devices: vec![DeviceSample::default(); self.devices.len()],
                ..HostSample::default()
            },
        };
        self.prev_cpu = cpu;
        self.prev_disks = disks;
        let node_cpu_cores = self
            .pids
            .iter()
            .enumerate()
            .map(|(i, pid)| {
                let now = pid.and_then(procfs::pid_cpu_seconds);
                let r = rate(now, self.prev_pid_cpu[i], secs);
                self.prev_pid_cpu[i] = now;
                r
            })
            .collect();
        let client = crate::host::process_cpu_seconds();
        let client_cpu_cores = ((client - self.prev_client) / secs).max(0.0);
        self.prev_client = client;
        HostSample {
            node_cpu_cores,
            client_cpu_cores,
            ..figures
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_thin_out_after_the_first_hour() {
        let s = Duration::from_secs;
        assert_eq!(period_at(s(1), 3599.0), s(1));
        assert_eq!(period_at(s(1), 3600.0), s(10));
        assert_eq!(period_at(s(30), 7200.0), s(30));
        assert_eq!(period_at(s(1), 13.0 * 3600.0), s(60));
    }

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
        let mut a = Assembler::new(1, timeout);
        let (tx, rx) = mpsc::channel();
        let t0 = Instant::now();
        let (s0, ask) = a.tick(t0, 0.0, None, vec![Some(true)]);
        spawn_scrape(s0, ask[0], (&e, None), timeout, &tx);
        std::thread::sleep(Duration::from_millis(200));
        // The next tick does not wait for the slow scrape: a second one runs beside it.
        let (s1, ask) = a.tick(Instant::now(), 0.2, None, vec![Some(true)]);
        assert_eq!(ask, [0]);
        spawn_scrape(s1, 0, (&e, None), timeout, &tx);
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
}
