//! Live metrics (`--metrics-listen ADDR`): what a run measures, served while it runs as
//! OpenMetrics text at `http://ADDR/metrics` for a Prometheus server to scrape, beside the
//! cluster's own dashboards (docs/live.md; the shipped Grafana dashboard and scrape
//! configuration are in `monitoring/`).
//!
//! [`Live`] listens to the same events the console renders — a command's or a scenario's —
//! and keeps the latest of each figure in a `prometheus-client` registry: the client's
//! operations and errors (counters), each interval's throughput, target rate, backlog, send
//! lag and response and service time quantiles per operation (gauges), and the latest sample
//! of the node and host series the run's sampler takes. Labels are bounded: run, environment,
//! step, phase, operation, error kind, quantile, node, device, CPU mode — never a key or an
//! interval. A gauge of a step or phase that has ended is taken away when the next begins.

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use crate::load::Event as LoadEvent;
use crate::result::IntervalRecord;
use crate::result::series::MetricSeries;
use crate::scenario::Sink;
use crate::scenario::event::{Event, FillEvent};
use crate::spec::load::LoadMode;

/// The content type of OpenMetrics text.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type G = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    run: String,
    env: String,
    step: String,
    phase: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpLabels {
    run: String,
    env: String,
    step: String,
    phase: String,
    op: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QuantileLabels {
    run: String,
    env: String,
    step: String,
    phase: String,
    op: String,
    quantile: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    run: String,
    env: String,
    step: String,
    phase: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabels {
    run: String,
    env: String,
    node: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModeLabels {
    run: String,
    env: String,
    mode: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeviceLabels {
    run: String,
    env: String,
    device: String,
    direction: String,
}

/// The metric families, each a cheap handle onto the registry's copy.
#[derive(Default)]
struct Families {
    operations: Family<OpLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    client_cpu: Family<RunLabels, Counter<f64, AtomicU64>>,
    throughput: Family<RunLabels, G>,
    target: Family<RunLabels, G>,
    in_flight_limit: Family<RunLabels, G>,
    backlog: Family<RunLabels, G>,
    send_lag: Family<QuantileLabels, G>,
    response: Family<QuantileLabels, G>,
    service: Family<QuantileLabels, G>,
    window_response: Family<QuantileLabels, G>,
    capacity_step: Family<RunLabels, G>,
    node_up: Family<NodeLabels, G>,
    node_cpu: Family<NodeLabels, G>,
    node_pending: Family<NodeLabels, G>,
    node_compactions: Family<NodeLabels, G>,
    node_load: Family<NodeLabels, G>,
    node_dropped: Family<NodeLabels, G>,
    node_gc: Family<NodeLabels, G>,
    node_local_read: Family<NodeLabels, G>,
    host_cpu: Family<ModeLabels, G>,
    disk_iops: Family<DeviceLabels, G>,
    disk_bytes: Family<DeviceLabels, G>,
    disk_await: Family<DeviceLabels, G>,
    disk_queue: Family<DeviceLabels, G>,
}

impl Families {
    fn register(&self, r: &mut Registry) {
        let s = Unit::Seconds;
        r.register(
            "cqlbench_operations",
            "Operations completed without error",
            self.operations.clone(),
        );
        r.register(
            "cqlbench_errors",
            "Operations that failed, by kind",
            self.errors.clone(),
        );
        r.register_with_unit(
            "cqlbench_client_cpu",
            "CPU time (user + system) the client used",
            s.clone(),
            self.client_cpu.clone(),
        );
        r.register(
            "cqlbench_throughput_ops_per_second",
            "Operations completed per second in the latest interval",
            self.throughput.clone(),
        );
        r.register(
            "cqlbench_target_ops_per_second",
            "The phase's target rate (open loop; a capacity step's rate)",
            self.target.clone(),
        );
        r.register(
            "cqlbench_in_flight_limit",
            "Requests the phase keeps in flight at most (closed loop: its concurrency)",
            self.in_flight_limit.clone(),
        );
        r.register(
            "cqlbench_backlog_operations",
            "Open loop: operations whose intended start has passed, not yet sent",
            self.backlog.clone(),
        );
        r.register_with_unit(
            "cqlbench_send_lag",
            "Open loop: actual send minus intended start in the latest interval (quantile 1 is the maximum)",
            s.clone(),
            self.send_lag.clone(),
        );
        r.register_with_unit(
            "cqlbench_response_time",
            "Completion minus intended start (coordinated omission corrected) in the latest interval (quantile 1 is the maximum)",
            s.clone(),
            self.response.clone(),
        );
        r.register_with_unit(
            "cqlbench_window_response_time",
            "Response time over the phase's measured window so far (warmup left out), from its merged HDR histograms: at the window's end, the result's figure (op \"all\": every operation)",
            s.clone(),
            self.window_response.clone(),
        );
        r.register_with_unit(
            "cqlbench_service_time",
            "Completion minus actual send in the latest interval",
            s.clone(),
            self.service.clone(),
        );
        r.register(
            "cqlbench_capacity_step",
            "The capacity search's step running (1 = the first)",
            self.capacity_step.clone(),
        );
        r.register(
            "cqlbench_node_up",
            "Whether the node is up (1) or down (0), where known",
            self.node_up.clone(),
        );
        r.register(
            "cqlbench_node_cpu_cores",
            "CPU the node's JVM used, in cores",
            self.node_cpu.clone(),
        );
        r.register(
            "cqlbench_node_pending_compactions",
            "Compactions pending on the node",
            self.node_pending.clone(),
        );
        r.register(
            "cqlbench_node_compactions_per_second",
            "Compactions the node completed per second",
            self.node_compactions.clone(),
        );
        r.register_with_unit(
            "cqlbench_node_load",
            "Live data on the node's disk",
            Unit::Bytes,
            self.node_load.clone(),
        );
        r.register(
            "cqlbench_node_dropped_messages_per_second",
            "Messages the node dropped per second, all verbs",
            self.node_dropped.clone(),
        );
        r.register(
            "cqlbench_node_gc_pause_ratio",
            "Share of time the node's JVM spent in GC pauses",
            self.node_gc.clone(),
        );
        r.register_with_unit(
            "cqlbench_node_local_read_latency",
            "Mean time of the node's reads from its own tables",
            s.clone(),
            self.node_local_read.clone(),
        );
        r.register(
            "cqlbench_host_cpu_ratio",
            "Share of the host's CPU time by mode (local clusters)",
            self.host_cpu.clone(),
        );
        r.register(
            "cqlbench_disk_iops",
            "Requests per second the device completed, by direction",
            self.disk_iops.clone(),
        );
        r.register(
            "cqlbench_disk_bytes_per_second",
            "Bytes per second the device moved, by direction",
            self.disk_bytes.clone(),
        );
        r.register_with_unit(
            "cqlbench_disk_await",
            "Mean time per completed request, by direction",
            s,
            self.disk_await.clone(),
        );
        r.register(
            "cqlbench_disk_queue_depth",
            "Mean requests in flight on the device (direction \"all\")",
            self.disk_queue.clone(),
        );
    }

    /// Takes away every gauge (a step, phase or environment ended; counters stay).
    fn clear_gauges(&self) {
        self.throughput.clear();
        self.target.clear();
        self.in_flight_limit.clear();
        self.backlog.clear();
        self.send_lag.clear();
        self.response.clear();
        self.service.clear();
        self.window_response.clear();
        self.capacity_step.clear();
        self.clear_samples();
    }

    fn clear_samples(&self) {
        self.node_up.clear();
        self.node_cpu.clear();
        self.node_pending.clear();
        self.node_compactions.clear();
        self.node_load.clear();
        self.node_dropped.clear();
        self.node_gc.clear();
        self.node_local_read.clear();
        self.host_cpu.clear();
        self.disk_iops.clear();
        self.disk_bytes.clear();
        self.disk_await.clear();
        self.disk_queue.clear();
    }
}

/// The labels of what runs now.
#[derive(Debug, Clone)]
struct Current {
    run: String,
    /// The run label is fixed (a scenario's); else each result's file name gives it.
    run_fixed: bool,
    env: String,
    step: String,
    phase: String,
    /// The capacity step under way (its number from 1, and its rate): served again with each
    /// of its phases.
    capacity: Option<(f64, f64)>,
    /// The phase's measured intervals merged (warmup left out).
    window: crate::stats::Snapshot,
}

impl Current {
    fn run(&self) -> RunLabels {
        RunLabels {
            run: self.run.clone(),
            env: self.env.clone(),
            step: self.step.clone(),
            phase: self.phase.clone(),
        }
    }
    fn op(&self, op: &str) -> OpLabels {
        OpLabels {
            run: self.run.clone(),
            env: self.env.clone(),
            step: self.step.clone(),
            phase: self.phase.clone(),
            op: op.to_string(),
        }
    }
    fn quantile(&self, op: &str, q: &str) -> QuantileLabels {
        QuantileLabels {
            run: self.run.clone(),
            env: self.env.clone(),
            step: self.step.clone(),
            phase: self.phase.clone(),
            op: op.to_string(),
            quantile: q.to_string(),
        }
    }
    fn error(&self, kind: crate::stats::ErrorKind) -> ErrorLabels {
        ErrorLabels {
            run: self.run.clone(),
            env: self.env.clone(),
            step: self.step.clone(),
            phase: self.phase.clone(),
            kind: kind.name().to_string(),
        }
    }
    fn node(&self, node: &str) -> NodeLabels {
        NodeLabels {
            run: self.run.clone(),
            env: self.env.clone(),
            node: node.to_string(),
        }
    }
    fn device(&self, device: &str, direction: &str) -> DeviceLabels {
        DeviceLabels {
            run: self.run.clone(),
            env: self.env.clone(),
            device: device.to_string(),
            direction: direction.to_string(),
        }
    }
}

/// What the labels start as: the run's name (None: each result's file name) and the
/// environment and step of a single command.
#[derive(Debug, Clone)]
pub struct Labels {
    pub run: Option<String>,
    pub env: String,
    pub step: String,
}

/// Why the endpoint could not listen.
#[derive(Debug, thiserror::Error)]
#[error("--metrics-listen {addr}: {error}")]
pub struct ListenError {
    addr: SocketAddr,
    error: String,
}

/// The live metrics of a command: its registry, the labels of what runs now, and the HTTP
/// server that serves them until it is dropped.
pub struct Live {
    families: Families,
    current: Mutex<Current>,
    registry: Arc<Registry>,
    server: Arc<tiny_http::Server>,
    thread: Mutex<Option<JoinHandle<()>>>,
    addr: SocketAddr,
}

impl Live {
    /// Listens on `addr` (port 0: any free port; [`Live::addr`] says which) and serves
    /// `/metrics` on a thread of its own.
    pub fn listen(addr: SocketAddr, labels: Labels) -> Result<Arc<Live>, ListenError> {
        let families = Families::default();
        let mut registry = Registry::default();
        families.register(&mut registry);
        let registry = Arc::new(registry);
        let server = tiny_http::Server::http(addr).map_err(|e| ListenError {
            addr,
            error: e.to_string(),
        })?;
        let bound = server.server_addr().to_ip().ok_or_else(|| ListenError {
            addr,
            error: "not an IP address".into(),
        })?;
        let server = Arc::new(server);
        let (s2, r2) = (server.clone(), registry.clone());
        let thread = std::thread::Builder::new()
            .name("cqlbench-live".into())
            .spawn(move || serve(&s2, &r2))
            .map_err(|e| ListenError {
                addr,
                error: e.to_string(),
            })?;
        Ok(Arc::new(Live {
            families,
            current: Mutex::new(Current {
                run_fixed: labels.run.is_some(),
                run: labels.run.unwrap_or_default(),
                env: labels.env,
                step: labels.step,
                phase: String::new(),
                capacity: None,
                window: crate::stats::Snapshot::default(),
            }),
            registry,
            server,
            thread: Mutex::new(Some(thread)),
            addr: bound,
        }))
    }

    /// The address the endpoint listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The metrics as served now (OpenMetrics text).
    pub fn text(&self) -> String {
        encode(&self.registry)
    }

    /// A sink that hands every event to `inner` and to this endpoint.
    pub fn tee(self: &Arc<Live>, inner: Sink) -> Sink {
        let live = self.clone();
        Arc::new(move |e: &Event| {
            inner(e);
            live.event(e);
        })
    }

    /// Takes in one event.
    pub fn event(&self, e: &Event) {
        let mut cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        match e {
            Event::Environment { label, .. } => {
                cur.env = label.to_string();
                cur.capacity = None;
                self.families.clear_gauges();
            }
            Event::StepStarted { name, .. } => {
                cur.step = name.to_string();
                cur.phase.clear();
                cur.capacity = None;
                self.families.clear_gauges();
            }
            Event::ResultAt { path, .. } if !cur.run_fixed => {
                if let Some(stem) = path.file_stem() {
                    cur.run = stem.to_string_lossy().into_owned();
                }
            }
            Event::Load(l) | Event::Fill(FillEvent::Run(l)) => self.load(&mut cur, l),
            Event::Capacity(p) => {
                use crate::scenario::capacity::Progress;
                match p {
                    Progress::StepStarted {
                        index,
                        rate,
                        concurrency,
                        ..
                    } => {
                        cur.phase.clear();
                        cur.capacity = Some((*index as f64 + 1.0, *rate));
                        self.families.clear_gauges();
                        let labels = cur.run();
                        self.families
                            .capacity_step
                            .get_or_create(&labels)
                            .set(*index as f64 + 1.0);
                        // A closed-loop step has no target rate (its phase reports its
                        // concurrency).
                        if concurrency.is_none() {
                            self.families.target.get_or_create(&labels).set(*rate);
                        }
                    }
                    Progress::Run(l) => self.load(&mut cur, l),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn load(&self, cur: &mut Current, e: &LoadEvent) {
        let f = &self.families;
        match e {
            LoadEvent::PhaseStarted { name, load } => {
                // A capacity step's number and rate stay with it through its phases.
                let step = cur.capacity.map(|(n, _)| n);
                let step_rate = cur.capacity.map(|(_, r)| r);
                f.clear_gauges();
                cur.phase = name.to_string();
                cur.window.reset();
                let labels = cur.run();
                // Every kind of error at 0 from the start: "no errors" is a figure, not a
                // missing series.
                for kind in crate::stats::ErrorKind::ALL {
                    f.errors.get_or_create(&cur.error(kind)).inc_by(0);
                }
                if let Some(s) = step {
                    f.capacity_step.get_or_create(&labels).set(s);
                }
                match load.mode {
                    LoadMode::Open {
                        rate_per_s,
                        max_in_flight,
                    } => {
                        f.target.get_or_create(&labels).set(rate_per_s);
                        f.in_flight_limit
                            .get_or_create(&labels)
                            .set(max_in_flight as f64);
                    }
                    LoadMode::Closed { concurrency } => {
                        if let Some(r) = step_rate {
                            f.target.get_or_create(&labels).set(r);
                        }
                        f.in_flight_limit
                            .get_or_create(&labels)
                            .set(concurrency as f64);
                    }
                }
            }
            LoadEvent::Interval {
                phase,
                record,
                sample,
                snapshot,
            } => {
                if cur.phase != *phase {
                    cur.phase = phase.to_string();
                    cur.window.reset();
                }
                self.interval(cur, record);
                if let Some(s) = snapshot
                    && !record.warmup
                {
                    cur.window.add_stats(s);
                    self.window(cur);
                }
                if let Some(s) = sample {
                    self.sample(cur, s);
                }
            }
            LoadEvent::PhaseDone { .. } | LoadEvent::Connected { .. } => {}
        }
    }

    fn interval(&self, cur: &Current, r: &IntervalRecord) {
        let f = &self.families;
        let labels = cur.run();
        f.throughput.get_or_create(&labels).set(r.ops_per_s);
        f.backlog.get_or_create(&labels).set(r.backlog as f64);
        f.client_cpu.get_or_create(&labels).inc_by(r.client_cpu_s);
        let ms = |v: f64| v / 1000.0;
        for (q, v) in [
            ("0.5", r.send_lag_p50_ms),
            ("0.99", r.send_lag_p99_ms),
            ("1", r.max_send_lag_ms),
        ] {
            f.send_lag.get_or_create(&cur.quantile("all", q)).set(ms(v));
        }
        for (kind, o) in &r.by_op {
            let op = kind.name();
            f.operations.get_or_create(&cur.op(op)).inc_by(o.ok);
            // Quantiles of an interval without operations of this kind are not figures.
            if o.ok + o.errors == 0 {
                continue;
            }
            for (q, v) in [
                ("0.5", o.response_p50_ms),
                ("0.99", o.response_p99_ms),
                ("1", o.response_max_ms),
            ] {
                f.response.get_or_create(&cur.quantile(op, q)).set(ms(v));
            }
            for (q, v) in [("0.5", o.service_p50_ms), ("0.99", o.service_p99_ms)] {
                f.service.get_or_create(&cur.quantile(op, q)).set(ms(v));
            }
        }
        for (kind, n) in &r.errors_by_kind {
            f.errors.get_or_create(&cur.error(*kind)).inc_by(*n);
        }
    }

    /// The window's quantiles per operation kind and of all kinds together.
    fn window(&self, cur: &Current) {
        let f = &self.families;
        let kinds = cur.window.kinds();
        let all = cur.window.all();
        let ops = kinds
            .iter()
            .map(|k| (k.name(), cur.window.op(*k)))
            .chain(std::iter::once(("all", &all)));
        for (op, stats) in ops {
            let h = &stats.response;
            if h.is_empty() {
                continue;
            }
            for (label, q) in [
                ("0.5", 0.5),
                ("0.9", 0.9),
                ("0.99", 0.99),
                ("0.999", 0.999),
                ("1", 1.0),
            ] {
                let ns = if q >= 1.0 {
                    h.max()
                } else {
                    h.value_at_quantile(q)
                };
                f.window_response
                    .get_or_create(&cur.quantile(op, label))
                    .set(ns as f64 / 1e9);
            }
        }
    }

    fn sample(&self, cur: &Current, series: &MetricSeries) {
        let f = &self.families;
        let Some(s) = series.samples.last() else {
            return;
        };
        f.clear_samples();
        for (i, name) in series.nodes.iter().enumerate() {
            let l = cur.node(name);
            let set = |fam: &Family<NodeLabels, G>, v: Option<f64>| {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    fam.get_or_create(&l).set(v);
                }
            };
            let host_cpu = s
                .host
                .as_ref()
                .and_then(|h| h.node_cpu_cores.get(i).copied().flatten());
            let Some(n) = s.nodes.get(i) else {
                set(&f.node_cpu, host_cpu);
                continue;
            };
            set(&f.node_up, n.up.map(|u| if u { 1.0 } else { 0.0 }));
            set(&f.node_cpu, host_cpu.or(n.cpu_cores));
            set(&f.node_pending, n.pending_compactions);
            set(&f.node_compactions, n.compactions_per_s);
            set(&f.node_load, n.load_bytes);
            set(&f.node_dropped, n.dropped_per_s);
            set(&f.node_gc, n.gc_pause_ms_per_s.map(|v| v / 1000.0));
            set(&f.node_local_read, n.local_read_ms.map(|v| v / 1000.0));
        }
        let Some(h) = &s.host else {
            return;
        };
        for (mode, v) in [
            ("user", h.cpu_user),
            ("system", h.cpu_system),
            ("iowait", h.cpu_iowait),
        ] {
            f.host_cpu
                .get_or_create(&ModeLabels {
                    run: cur.run.clone(),
                    env: cur.env.clone(),
                    mode: mode.to_string(),
                })
                .set(v);
        }
        for (name, d) in series.devices.iter().zip(&h.devices) {
            let mb = 1_000_000.0;
            for (dir, iops, mbs, lat) in [
                ("read", d.read_iops, d.read_mb_s, d.read_latency_ms),
                ("write", d.write_iops, d.write_mb_s, d.write_latency_ms),
            ] {
                let l = cur.device(name, dir);
                f.disk_iops.get_or_create(&l).set(iops);
                f.disk_bytes.get_or_create(&l).set(mbs * mb);
                f.disk_await.get_or_create(&l).set(lat / 1000.0);
            }
            f.disk_queue
                .get_or_create(&cur.device(name, "all"))
                .set(d.avg_queue);
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.server.unblock();
        let thread = self.thread.get_mut().ok().and_then(Option::take);
        if let Some(t) = thread {
            let _ = t.join();
        }
    }
}

fn encode(registry: &Registry) -> String {
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, registry);
    text
}

/// Answers requests until the server is unblocked: `/metrics` (and `/`) with the registry's
/// text, anything else 404.
fn serve(server: &tiny_http::Server, registry: &Registry) {
    let content_type = tiny_http::Header::from_bytes(&b"Content-Type"[..], CONTENT_TYPE.as_bytes())
        .expect("a valid header");
    while let Ok(req) = server.recv() {
        let path = req.url().split('?').next().unwrap_or("").to_string();
        let resp = match path.as_str() {
            "/metrics" | "/" => {
                tiny_http::Response::from_string(encode(registry)).with_header(content_type.clone())
            }
            _ => tiny_http::Response::from_string("not found: the metrics are at /metrics\n")
                .with_status_code(404),
        };
        let _ = req.respond(resp);
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::result::IntervalOp;
    use crate::result::series::{DeviceSample, HostSample, NodeSample, Sample};
    use crate::spec::OpKind;
    use crate::stats::ErrorKind;

    fn live() -> Arc<Live> {
        Live::listen(
            "127.0.0.1:0".parse().unwrap(),
            Labels {
                run: None,
                env: "lab".into(),
                step: "run".into(),
            },
        )
        .unwrap()
    }

    fn record(ok: u64) -> IntervalRecord {
        let mut by_op = crate::result::ByOp::new();
        by_op.insert(
            OpKind::Read,
            IntervalOp {
                ok,
                errors: 2,
                response_p50_ms: 1.5,
                response_p99_ms: 12.0,
                response_max_ms: 40.0,
                service_p50_ms: 1.0,
                service_p99_ms: 9.0,
            },
        );
        by_op.insert(OpKind::Write, IntervalOp::default());
        IntervalRecord {
            start_s: 0.0,
            end_s: 1.0,
            warmup: false,
            drain: false,
            ok,
            errors: 2,
            ops_per_s: ok as f64,
            by_op,
            backlog: 7,
            max_send_lag_ms: 3.0,
            send_lag_p50_ms: 0.1,
            send_lag_p99_ms: 2.0,
            client_cpu_s: 0.25,
            errors_by_kind: [(ErrorKind::ReadTimeout, 2)].into_iter().collect(),
        }
    }

    /// A 10-second phase of one thread under `mode`.
    fn load_spec(mode: LoadMode) -> crate::spec::LoadSpec {
        crate::spec::LoadSpec {
            mode,
            stop: crate::spec::Stop::Duration { secs: 10.0 },
            warmup_s: 0.0,
            threads: 1,
            timeout_s: 10.0,
            max_errors: 0,
            cycles: crate::spec::Cycles { start: 0, end: 10 },
            share: crate::spec::load::Share::WHOLE,
            send_window_s: 0.0,
        }
    }

    fn line<'a>(text: &'a str, starts: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(starts))
    }

    #[test]
    fn intervals_become_counters_and_gauges_with_bounded_labels() {
        let live = live();
        let path = std::path::PathBuf::from("/r/20261126T000000Z-lab-read.json");
        live.event(&Event::ResultAt {
            what: "result",
            path: &path,
        });
        let load = load_spec(LoadMode::Open {
            rate_per_s: 500.0,
            max_in_flight: 64,
        });
        live.event(&Event::Load(LoadEvent::PhaseStarted {
            name: "main",
            load: &load,
        }));
        for ok in [100, 300] {
            live.event(&Event::Load(LoadEvent::Interval {
                phase: "main",
                record: &record(ok),
                sample: None,
                snapshot: None,
            }));
        }
        let t = live.text();
        let l = r#"{run="20261126T000000Z-lab-read",env="lab",step="run",phase="main""#;
        // Counters add up; gauges hold the latest interval.
        assert_eq!(
            line(&t, &format!("cqlbench_operations_total{l},op=\"read\"}}")),
            Some(format!("cqlbench_operations_total{l},op=\"read\"}} 400").as_str()),
            "{t}"
        );
        assert!(
            t.contains(&format!(
                "cqlbench_errors_total{l},kind=\"read_timeout\"}} 4"
            )),
            "{t}"
        );
        assert!(
            t.contains(&format!("cqlbench_throughput_ops_per_second{l}}} 300.0")),
            "{t}"
        );
        assert!(
            t.contains(&format!("cqlbench_target_ops_per_second{l}}} 500.0")),
            "{t}"
        );
        assert!(
            t.contains(&format!("cqlbench_in_flight_limit{l}}} 64.0")),
            "{t}"
        );
        assert!(
            t.contains(&format!("cqlbench_backlog_operations{l}}} 7.0")),
            "{t}"
        );
        assert!(
            t.contains(&format!(
                "cqlbench_response_time_seconds{l},op=\"read\",quantile=\"0.99\"}} 0.012"
            )),
            "{t}"
        );
        assert!(t.contains("cqlbench_client_cpu_seconds_total"), "{t}");
        // Kinds that did not happen are there at 0.
        assert!(
            t.contains(&format!(
                "cqlbench_errors_total{l},kind=\"unavailable\"}} 0"
            )),
            "{t}"
        );
        // An operation kind with no operations in the interval has no quantiles.
        assert!(!t.contains("op=\"write\",quantile"), "{t}");
        assert!(t.ends_with("# EOF\n"), "{t}");

        // A new step takes the old step's gauges away and keeps its counters.
        live.event(&Event::StepStarted {
            index: 1,
            count: 2,
            name: "latency",
            command_line: "cqlbench latency",
            quiet: false,
        });
        let t = live.text();
        assert!(!t.contains("cqlbench_throughput_ops_per_second{"), "{t}");
        assert!(t.contains(&format!("cqlbench_operations_total{l},op=\"read\"}} 400")));
    }

    /// A capacity step's number and rate are served with each of its phases (a closed-loop
    /// step's target is the step's), and go with the scenario step.
    #[test]
    fn a_capacity_step_keeps_its_number_and_rate_through_its_phases() {
        use crate::scenario::capacity::Progress;
        let live = live();
        let closed = load_spec(LoadMode::Closed { concurrency: 32 });
        live.event(&Event::Capacity(Progress::StepStarted {
            index: 2,
            rate: 4000.0,
            concurrency: None,
            loaders: 1,
        }));
        for phase in ["warmup", "main"] {
            live.event(&Event::Capacity(Progress::Run(LoadEvent::PhaseStarted {
                name: phase,
                load: &closed,
            })));
            let t = live.text();
            let l = format!(r#"{{run="",env="lab",step="run",phase="{phase}"}}"#);
            assert!(t.contains(&format!("cqlbench_capacity_step{l} 3.0")), "{t}");
            assert!(
                t.contains(&format!("cqlbench_target_ops_per_second{l} 4000.0")),
                "{t}"
            );
            assert!(
                t.contains(&format!("cqlbench_in_flight_limit{l} 32.0")),
                "{t}"
            );
        }
        // The next scenario step is no capacity step: a closed-loop phase has no target.
        live.event(&Event::StepStarted {
            index: 1,
            count: 2,
            name: "latency",
            command_line: "cqlbench latency",
            quiet: false,
        });
        live.event(&Event::Load(LoadEvent::PhaseStarted {
            name: "main",
            load: &closed,
        }));
        let t = live.text();
        assert!(!t.contains("cqlbench_capacity_step{"), "{t}");
        assert!(!t.contains("cqlbench_target_ops_per_second{"), "{t}");
        assert!(t.contains("cqlbench_in_flight_limit{"), "{t}");
    }

    #[test]
    fn the_window_quantiles_are_those_of_the_merged_histograms_without_the_warmup() {
        let live = live();
        let mut warm = crate::stats::Snapshot::default();
        // A warmup interval of very slow reads: left out of the window.
        for _ in 0..100 {
            warm.record_ok(OpKind::Read, 900_000_000, 900_000_000);
        }
        let mut first = crate::stats::Snapshot::default();
        let mut second = crate::stats::Snapshot::default();
        for i in 0..1000u64 {
            first.record_ok(OpKind::Read, 1_000_000 + i * 1_000, 500_000);
            second.record_ok(OpKind::Write, 2_000_000 + i * 2_000, 500_000);
        }
        let mut warm_rec = record(100);
        warm_rec.warmup = true;
        for (r, s) in [
            (&warm_rec, &warm),
            (&record(1000), &first),
            (&record(1000), &second),
        ] {
            live.event(&Event::Load(LoadEvent::Interval {
                phase: "main",
                record: r,
                sample: None,
                snapshot: Some(s),
            }));
        }
        let mut merged = first.clone();
        merged.add_stats(&second);
        let want = |k: OpKind| merged.op(k).response.value_at_quantile(0.99) as f64 / 1e9;
        let all = merged.all().response.value_at_quantile(0.99) as f64 / 1e9;
        let t = live.text();
        let got = |op: &str| -> f64 {
            let l = line(
                &t,
                &format!(
                    r#"cqlbench_window_response_time_seconds{{run="",env="lab",step="run",phase="main",op="{op}",quantile="0.99"}}"#
                ),
            )
            .unwrap_or_else(|| panic!("no {op} window p99 in {t}"));
            l.rsplit(' ').next().unwrap().parse().unwrap()
        };
        assert_eq!(got("read"), want(OpKind::Read));
        assert_eq!(got("write"), want(OpKind::Write));
        assert_eq!(got("all"), all);
        assert!(got("all") < 0.9, "the warmup's slow reads are left out");
    }

    #[test]
    fn samples_become_node_host_and_disk_gauges() {
        let live = live();
        let series = MetricSeries {
            interval_s: 1.0,
            nodes: vec!["node1".into()],
            devices: vec!["loop9".into()],
            samples: vec![Sample {
                t_s: 3.0,
                nodes: vec![NodeSample {
                    up: Some(true),
                    pending_compactions: Some(4.0),
                    cpu_cores: Some(0.5),
                    gc_pause_ms_per_s: Some(20.0),
                    ..NodeSample::default()
                }],
                host: Some(HostSample {
                    cpu_user: 0.5,
                    cpu_system: 0.125,
                    cpu_iowait: 0.0,
                    devices: vec![DeviceSample {
                        read_iops: 300.0,
                        write_mb_s: 2.0,
                        read_latency_ms: 4.0,
                        avg_queue: 1.5,
                        ..DeviceSample::default()
                    }],
                    node_cpu_cores: vec![Some(0.75)],
                    client_cpu_cores: 0.1,
                    ..HostSample::default()
                }),
                node_hosts: Vec::new(),
            }],
            errors: Vec::new(),
            node_devices: Vec::new(),
            node_hosts: Vec::new(),
            fetched: None,
            dialects: Vec::new(),
        };
        live.event(&Event::Load(LoadEvent::Interval {
            phase: "main",
            record: &record(10),
            sample: Some(&series),
            snapshot: None,
        }));
        let t = live.text();
        let n = r#"{run="",env="lab",node="node1"}"#;
        assert!(t.contains(&format!("cqlbench_node_up{n} 1.0")), "{t}");
        // The process's own CPU (from /proc) is preferred to the JVM's figure.
        assert!(
            t.contains(&format!("cqlbench_node_cpu_cores{n} 0.75")),
            "{t}"
        );
        assert!(
            t.contains(&format!("cqlbench_node_pending_compactions{n} 4.0")),
            "{t}"
        );
        assert!(
            t.contains(&format!("cqlbench_node_gc_pause_ratio{n} 0.02")),
            "{t}"
        );
        assert!(
            t.contains(r#"cqlbench_host_cpu_ratio{run="",env="lab",mode="system"} 0.125"#),
            "{t}"
        );
        let d = r#"run="",env="lab",device="loop9""#;
        assert!(
            t.contains(&format!(
                "cqlbench_disk_iops{{{d},direction=\"read\"}} 300.0"
            )),
            "{t}"
        );
        assert!(
            t.contains(&format!(
                "cqlbench_disk_bytes_per_second{{{d},direction=\"write\"}} 2000000.0"
            )),
            "{t}"
        );
        assert!(
            t.contains(&format!(
                "cqlbench_disk_await_seconds{{{d},direction=\"read\"}} 0.004"
            )),
            "{t}"
        );
        // A node missing from the next sample loses its gauges, not keeps stale ones.
        let mut later = series.clone();
        later.samples[0].nodes[0] = NodeSample::default();
        later.samples[0].host = None;
        live.event(&Event::Load(LoadEvent::Interval {
            phase: "main",
            record: &record(10),
            sample: Some(&later),
            snapshot: None,
        }));
        let t = live.text();
        assert!(!t.contains("cqlbench_node_pending_compactions{"), "{t}");
        assert!(!t.contains("cqlbench_disk_iops{"), "{t}");
    }

    #[test]
    fn the_endpoint_serves_metrics_over_http_and_refuses_other_paths() {
        use std::io::{Read, Write};
        let live = live();
        live.event(&Event::Load(LoadEvent::Interval {
            phase: "main",
            record: &record(10),
            sample: None,
            snapshot: None,
        }));
        let get = |path: &str| {
            let mut s = std::net::TcpStream::connect(live.addr()).unwrap();
            write!(
                s,
                "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        };
        let ok = get("/metrics");
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(
            ok.to_ascii_lowercase()
                .contains("content-type: application/openmetrics-text"),
            "{ok}"
        );
        assert!(ok.contains("# TYPE cqlbench_operations counter"), "{ok}");
        let missing = get("/nothing");
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
        // A busy address is refused with the flag and the system's reason.
        let err = Live::listen(
            live.addr(),
            Labels {
                run: None,
                env: "lab".into(),
                step: "run".into(),
            },
        )
        .err()
        .expect("the address is taken");
        assert!(
            err.to_string()
                .starts_with(&format!("--metrics-listen {}: ", live.addr())),
            "{err}"
        );
        // Dropping it stops the server (its accepting thread lets the port go a moment later).
        let addr = live.addr();
        drop(live);
        let closed = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::net::TcpStream::connect(addr).is_err()
        });
        assert!(
            closed,
            "{addr} still accepts connections 2 s after the drop"
        );
    }
}
