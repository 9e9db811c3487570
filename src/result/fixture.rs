//! Synthetic results for tests and examples: runs with deterministic (seeded) one-second
//! intervals of recorded latencies, summarised the way the load engine summarises a phase;
//! server and host series; capacity searches. Nothing here claims to be a measurement.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::host::HostFacts;
use crate::result::capacity::{
    CAPACITY_VERSION, CapacityResult, CapacitySpec, CapacityStatus, Criteria, CriterionCheck,
    Growth, LatencyBound, SearchMode, SearchStep, Settle,
};
use crate::result::series::{DeviceSample, HostSample, MetricSeries, NodeHost, NodeSample, Sample};
use crate::result::{
    Fingerprint, IntervalRecord, OpSummary, PhaseResult, PhaseSummary, RESULT_VERSION, RunResult,
    RunStatus, TargetRecord,
};
use crate::spec::{Cycles, LoadMode, LoadSpec, OpKind, Stop, WorkloadKind, WorkloadSpec};
use crate::stats::Snapshot;

/// What a synthetic run looks like.
#[derive(Debug, Clone)]
pub struct RunShape {
    /// Mean and standard deviation of the per-interval throughput.
    pub ops_per_s: f64,
    pub ops_per_s_sd: f64,
    /// Median response time; the distribution is log-normal with σ = 0.5.
    pub latency_ms: f64,
    pub intervals: usize,
    /// The first `warmup` intervals are marked warmup.
    pub warmup: usize,
    /// Open loop at this rate, else closed loop at concurrency 64.
    pub rate_per_s: Option<f64>,
    pub seed: u64,
}

impl Default for RunShape {
    fn default() -> Self {
        RunShape {
            ops_per_s: 2_000.0,
            ops_per_s_sd: 100.0,
            latency_ms: 2.0,
            intervals: 12,
            warmup: 2,
            rate_per_s: None,
            seed: 1,
        }
    }
}

/// A deterministic standard-normal generator (xorshift64 + Box–Muller).
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn next(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The intervals of a run shaped like `shape`, and the snapshot of its measured window; with
/// `kept`, merged as the recorder keeps a long phase's ([`crate::result::kept_width_s`]).
fn intervals(shape: &RunShape, kept: bool) -> (Vec<IntervalRecord>, Snapshot) {
    let mut coarse = crate::result::Coarsening::default();
    let mut rng = Normal(shape.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).max(1));
    let mut intervals = Vec::new();
    let mut measured = Snapshot::default();
    for i in 0..shape.intervals {
        let mut snap = Snapshot::default();
        let ops = (shape.ops_per_s + shape.ops_per_s_sd * rng.next())
            .round()
            .max(1.0) as u64;
        for j in 0..ops {
            let kind = if j % 2 == 0 {
                OpKind::Write
            } else {
                OpKind::Read
            };
            let response_ns = shape.latency_ms * 1e6 * (0.5 * rng.next()).exp();
            snap.record_ok(kind, response_ns as u64, (0.8 * response_ns) as u64);
        }
        let warmup = i < shape.warmup;
        if !warmup {
            measured.add(&snap);
        }
        let start_s = i as f64;
        let rec = IntervalRecord::from_snapshot(start_s, start_s + 1.0, warmup, &snap, 0, 0.1);
        if kept {
            intervals.extend(coarse.take(&snap, rec));
        } else {
            intervals.push(rec);
        }
    }
    intervals.extend(coarse.flush());
    (intervals, measured)
}

/// The main phase's summary over the `measured` window of a run shaped like `shape`.
fn summary(shape: &RunShape, measured: &Snapshot) -> PhaseSummary {
    let secs = (shape.intervals - shape.warmup) as f64;
    let mut s = PhaseSummary {
        measured_s: secs,
        ok: measured.ok(),
        errors: 0,
        ops_per_s: measured.ok() as f64 / secs,
        target_rate_per_s: shape.rate_per_s,
        achieved_ratio: shape.rate_per_s.map(|r| measured.ok() as f64 / secs / r),
        scheduled_ops: None,
        sent_on_schedule: None,
        drain_s: 0.0,
        carried_over_ops: None,
        by_op: measured
            .kinds()
            .into_iter()
            .map(|k| (k, OpSummary::of(measured.op(k), secs)))
            .collect(),
        all: OpSummary::of(&measured.all(), secs),
        errors_by_kind: BTreeMap::new(),
        driver: None,
        client_cpu_s: 0.1 * secs,
        client_cpu_util: 0.05,
        ops_per_client_cpu_s: measured.ok() as f64 / (0.1 * secs),
        client_max_rss_bytes: 50 << 20,
        max_backlog: 0,
        max_send_lag_ms: 0.0,
        send_lag: None,
        send_lag_histogram_ns: None,
    };
    // An open-loop client sends most operations within 60 µs of their intended start.
    if shape.rate_per_s.is_some() {
        let mut lag = hdrhistogram::Histogram::<u64>::new(3).expect("3 significant figures");
        lag.record_n(60_000, 98).expect("in range");
        lag.record_n(250_000, 2).expect("in range");
        s.max_send_lag_ms = 0.25;
        s.set_send_lag(Some(&lag));
    }
    s
}

/// A completed run of `env` shaped like `shape`: a rampup-free main phase of write/read.
pub fn run(env: &str, shape: &RunShape) -> RunResult {
    run_kept(env, shape, false)
}

/// [`run`], its intervals merged after the first hour as the recorder keeps them when `kept`.
fn run_kept(env: &str, shape: &RunShape, kept: bool) -> RunResult {
    let (intervals, measured) = intervals(shape, kept);
    let summary = summary(shape, &measured);
    let mode = match shape.rate_per_s {
        Some(rate_per_s) => LoadMode::Open {
            rate_per_s,
            max_in_flight: 1024,
        },
        None => LoadMode::Closed { concurrency: 64 },
    };
    RunResult {
        schema_version: RESULT_VERSION,
        env: env.into(),
        started_unix_s: 1_795_314_605 + shape.seed,
        finished_unix_s: Some(1_795_314_605 + shape.seed + shape.intervals as u64),
        status: RunStatus::Completed,
        workload: WorkloadSpec::defaults(WorkloadKind::Keyvalue),
        target: TargetRecord {
            hosts: vec!["127.0.0.1".into()],
            local_dc: None,
            cluster: None,
            netns: None,
            reach: None,
        },
        fingerprint: Fingerprint {
            cqlbench_version: "0.1.0".into(),
            driver: "synthetic".into(),
            cassandra_version: None,
            java_version: None,
            server_settings: Default::default(),
            nodes: Vec::new(),
            schema: Default::default(),
            host: HostFacts {
                hostname: "fixture".into(),
                cpu_model: "none".into(),
                cores: 2,
                ram_bytes: 1 << 30,
                kernel: "none".into(),
            },
            cluster: None,
            probe: None,
            client: None,
            client_build: None,
            cluster_start: None,
        },
        events: Vec::new(),
        shard: None,
        merged: None,
        reads_verified: None,
        ledger_id: None,
        tags: Vec::new(),
        fill: None,
        server_latency: Vec::new(),
        phases: vec![PhaseResult {
            name: "main".into(),
            offset_s: 0.0,
            load: LoadSpec {
                mode,
                stop: Stop::Duration {
                    secs: shape.intervals as f64,
                },
                warmup_s: shape.warmup as f64,
                threads: 1,
                timeout_s: 12.0,
                max_errors: 0,
                cycles: Cycles {
                    start: 0,
                    end: 1_000_000,
                },
                share: Default::default(),
                send_window_s: 0.0,
            },
            intervals,
            summary: Some(summary),
        }],
        warnings: Vec::new(),
        metrics: None,
        rate_share: None,
    }
}

/// Server and host series of a run lasting `end_s` seconds, sampled each second from 1 s:
/// `nodes` nodes (`node1`…) whose pending compactions pile up and drain in waves (the second
/// node's endpoint does not answer at 7 s), one block device per name in `devices`.
pub fn metrics(nodes: usize, devices: &[&str], end_s: f64, seed: u64) -> MetricSeries {
    let mut rng = Normal(seed.wrapping_mul(0x2545_F491_4F6C_DD1D).max(1));
    let samples = (1..=end_s.floor() as usize)
        .map(|t| {
            let t_s = t as f64;
            let wave = |j: usize| (t_s / 5.0 + j as f64).sin();
            let node_cpu: Vec<Option<f64>> = (0..nodes)
                .map(|j| {
                    (!(j == 1 && t == 7)).then(|| {
                        (1.1 + 0.2 * j as f64 + 0.3 * wave(j) + 0.05 * rng.next()).max(0.0)
                    })
                })
                .collect();
            let node_samples = (0..nodes)
                .map(|j| match node_cpu[j] {
                    None => NodeSample {
                        up: Some(false),
                        missing: Some("connection refused".into()),
                        ..NodeSample::default()
                    },
                    Some(cpu) => NodeSample {
                        up: Some(true),
                        missing: None,
                        scrape_s: Some(0.01),
                        pending_compactions: Some((6.0 + 5.0 * wave(j)).round().max(0.0)),
                        compactions_per_s: Some(0.5),
                        compacted_bytes_per_s: Some(8e6 * (1.0 + wave(j))),
                        sstables_per_read: Some(1.2),
                        live_sstables: Some(12.0),
                        load_bytes: Some(2e9 + 1e7 * t_s),
                        dropped_per_s: Some(0.0),
                        gc_pause_ms_per_s: Some(4.0),
                        cpu_cores: Some(cpu),
                        cpu_share: Some(cpu / 2.0),
                        local_reads_per_s: Some(150.0),
                        local_read_ms: Some(2.0 + j as f64),
                    },
                })
                .collect();
            let devices = (0..devices.len())
                .map(|d| {
                    let burst = if wave(d) > 0.6 { 45.0 } else { 0.0 };
                    DeviceSample {
                        read_iops: 300.0 + 20.0 * rng.next(),
                        write_iops: 900.0 + 10.0 * burst,
                        read_mb_s: (4.0 + rng.next()).max(0.0) / (d + 1) as f64,
                        write_mb_s: (28.0 + burst + 3.0 * rng.next()).max(0.0) / (d + 1) as f64,
                        read_latency_ms: (0.18 + 0.02 * rng.next()).max(0.01),
                        write_latency_ms: 0.5 + burst / 60.0 + 0.05 * rng.next().abs(),
                        avg_queue: 1.5 + burst / 20.0,
                        util: (0.3 + burst / 100.0).min(1.0),
                    }
                })
                .collect();
            Sample {
                t_s,
                nodes: node_samples,
                host: Some(HostSample {
                    cpu_user: 0.42 + 0.03 * rng.next(),
                    cpu_system: 0.09 + 0.01 * rng.next(),
                    cpu_iowait: 0.02 + 0.01 * rng.next().abs(),
                    devices,
                    node_cpu_cores: node_cpu,
                    client_cpu_cores: 0.6,
                    ..HostSample::default()
                }),
                node_hosts: Vec::new(),
            }
        })
        .collect();
    MetricSeries {
        interval_s: 1.0,
        nodes: (1..=nodes).map(|j| format!("node{j}")).collect(),
        devices: devices.iter().map(|d| d.to_string()).collect(),
        samples,
        errors: vec!["node2: connection refused".into()],
        node_devices: Vec::new(),
        node_hosts: Vec::new(),
        fetched: None,
        dialects: Vec::new(),
    }
}

/// Gives `m` the hosts of `nodes` seen through node exporters (`10.0.0.J:9100`), each with
/// `devices`: node J's host (from 0) has user CPU 30 + 10·J %, system 5 %, iowait J + 1 %,
/// steal 2 %, load 2 + J, 8 GB used, 4 GB page cache, network 12 MB/s in and 3 MB/s out, and
/// each device D (from 0) 100·(J + 1) read and 50·(D + 1) write IOPS, 4 MB/s read and 20 MB/s
/// write, 0.5 ms reads, 1.5 ms writes, queue 0.75, 40 % busy, in every sample but the first
/// (the first of two readings gives no rate).
pub fn with_node_hosts(m: &mut MetricSeries, nodes: &[&str], devices: &[&str]) {
    m.node_hosts = nodes
        .iter()
        .enumerate()
        .map(|(j, n)| NodeHost {
            node: n.to_string(),
            exporter: format!("10.0.0.{}:9100", j + 1),
            devices: devices.iter().map(|d| d.to_string()).collect(),
            job: None,
        })
        .collect();
    for (k, s) in m.samples.iter_mut().enumerate() {
        s.node_hosts = (0..nodes.len())
            .map(|j| {
                let j_f = j as f64;
                (k > 0).then(|| HostSample {
                    cpu_user: 0.3 + 0.1 * j_f,
                    cpu_system: 0.05,
                    cpu_iowait: 0.01 * (j_f + 1.0),
                    cpu_steal: 0.02,
                    devices: (0..devices.len())
                        .map(|d| DeviceSample {
                            read_iops: 100.0 * (j_f + 1.0),
                            write_iops: 50.0 * (d as f64 + 1.0),
                            read_mb_s: 4.0,
                            write_mb_s: 20.0,
                            read_latency_ms: 0.5,
                            write_latency_ms: 1.5,
                            avg_queue: 0.75,
                            util: 0.4,
                        })
                        .collect(),
                    load1: Some(2.0 + j_f),
                    mem_used_bytes: Some(8e9),
                    page_cache_bytes: Some(4e9),
                    net_rx_bytes_per_s: Some(12e6),
                    net_tx_bytes_per_s: Some(3e6),
                    ..HostSample::default()
                })
            })
            .collect();
    }
}

/// [`run`] with a main phase starting 4 s into the run (after schema and rampup) and server
/// and host series from [`metrics`] covering the whole run and 2 s after it.
pub fn run_with_metrics(env: &str, shape: &RunShape, nodes: usize, devices: &[&str]) -> RunResult {
    let mut r = run(env, shape);
    let offset_s = 4.0;
    r.phases[0].offset_s = offset_s;
    r.metrics = Some(Box::new(metrics(
        nodes,
        devices,
        offset_s + shape.intervals as f64 + 2.0,
        shape.seed,
    )));
    r
}

/// A long run of `shape.intervals` seconds with the server and host series of `nodes` nodes
/// and `devices` (as [`run_with_metrics`]), kept as the recorder and the sampler keep a long
/// run's ([`crate::result::kept_width_s`]), or every second as they kept it before when
/// `every_second`.
pub fn long_run(
    env: &str,
    shape: &RunShape,
    nodes: usize,
    devices: &[&str],
    every_second: bool,
) -> RunResult {
    let mut r = run_kept(env, shape, !every_second);
    let mut m = metrics(nodes, devices, shape.intervals as f64, shape.seed);
    if !every_second {
        m.samples.retain(|s| {
            let w = crate::result::kept_width_s(s.t_s);
            w <= 0.0 || s.t_s % w == 0.0
        });
    }
    r.metrics = Some(Box::new(m));
    r
}

/// A search that passed at `ops` ops/s, achieving exactly that, and failed at twice it.
pub fn capacity_at(env: &str, ops: f64) -> CapacityResult {
    let mut r = capacity(env, &[ops / 2.0, ops, ops * 2.0], 3);
    r.steps[1].summary.ops_per_s = ops;
    r.verdict = Some(CapacityResult::verdict_of(&r.steps));
    r
}

/// A completed capacity search of `env`, one step per rate in `rates`; step `failing`
/// (1-based; 0: none) is overloaded: its p99 passes the 20 ms bound, compactions pile up and
/// the achieved rate falls short, and the search ends there.
pub fn capacity(env: &str, rates: &[f64], failing: usize) -> CapacityResult {
    let criteria = Criteria {
        latency: vec![LatencyBound {
            op: None,
            percentile: 99.0,
            max_ms: 20.0,
        }],
        max_pending_compactions: Some(20.0),
        pending_after_s: 60.0,
        max_node_cpu: Some(0.9),
        max_error_rate: Some(0.01),
        min_achieved: Some(0.95),
    };
    let steps: Vec<SearchStep> = rates
        .iter()
        .enumerate()
        .take(if failing == 0 { rates.len() } else { failing })
        .map(|(i, &rate)| {
            let index = i + 1;
            let overloaded = index == failing;
            let achieved = if overloaded { 0.92 } else { 1.0 };
            let shape = RunShape {
                ops_per_s: rate * achieved,
                ops_per_s_sd: rate * 0.01,
                latency_ms: if overloaded {
                    9.0
                } else {
                    1.0 + 0.4 * i as f64
                },
                intervals: 6,
                warmup: 1,
                rate_per_s: Some(rate),
                seed: 100 + index as u64,
            };
            let summary = run(env, &shape)
                .main_summary()
                .expect("a fixture run has a main summary")
                .clone();
            let pending_after = if overloaded {
                34.0
            } else {
                2.0 + 3.0 * i as f64
            };
            let node_cpu = if overloaded {
                0.86
            } else {
                0.25 + 0.15 * i as f64
            };
            let achieved_pct = 100.0 * summary.ops_per_s / rate;
            let check = |criterion: &str, value: f64, limit: f64, passed: bool| CriterionCheck {
                criterion: criterion.into(),
                value: Some(value),
                limit,
                unit: String::new(),
                passed,
                unverified: None,
            };
            let p99 = summary.all.response.p99_ms;
            let checks = vec![
                check("p99 ≤ 20 ms", p99, 20.0, p99 <= 20.0),
                check(
                    "pending compactions ≤ 20 (60 s after)",
                    pending_after,
                    20.0,
                    pending_after <= 20.0,
                ),
                check("node CPU ≤ 90%", 100.0 * node_cpu, 90.0, node_cpu <= 0.9),
                check("error rate ≤ 1%", 0.0, 1.0, true),
                check(
                    "achieved ≥ 95% of target",
                    achieved_pct,
                    95.0,
                    achieved_pct >= 95.0,
                ),
            ];
            SearchStep {
                index,
                target_rate_per_s: rate,
                concurrency: None,
                result: PathBuf::from(format!("step-{index}.json")),
                settle_s: 2.0,
                pending_before: Some(1.0),
                cpu_before: None,
                pending_after: Some(pending_after),
                node_cpu: Some(node_cpu),
                host_cpu: None,
                loaders: None,
                passed: checks.iter().all(|c| c.passed),
                summary,
                checks,
            }
        })
        .collect();
    let growth = match rates {
        [a, b, ..] => Growth::Increment(b - a),
        _ => Growth::Factor(1.5),
    };
    CapacityResult {
        schema_version: CAPACITY_VERSION,
        kind: "capacity".into(),
        env: env.into(),
        started_unix_s: 1_795_400_000,
        finished_unix_s: Some(1_795_400_000 + 90 * steps.len() as u64),
        status: CapacityStatus::Completed,
        spec: CapacitySpec {
            mode: SearchMode::Rate,
            start_rate_per_s: rates.first().copied().unwrap_or(1_000.0),
            growth,
            step_s: 6.0,
            warmup_s: 1.0,
            max_steps: rates.len(),
            refine: 0,
            settle: Settle {
                max_pending: 5.0,
                max_cpu: None,
                timeout_s: 120.0,
            },
            criteria,
        },
        workload: WorkloadSpec::defaults(WorkloadKind::Keyvalue),
        verdict: Some(CapacityResult::verdict_of(&steps)),
        steps,
        tags: Vec::new(),
    }
}

/// A completed closed-loop capacity search of `env`, one step per concurrency in
/// `concurrencies` (each achieving 100 ops/s per request in flight); step `failing` (1-based;
/// 0: none) is overloaded as in [`capacity`]. No achieved-rate criterion: no step has a target.
pub fn capacity_closed(env: &str, concurrencies: &[usize], failing: usize) -> CapacityResult {
    let rates: Vec<f64> = concurrencies.iter().map(|&c| c as f64 * 100.0).collect();
    let mut r = capacity(env, &rates, failing);
    r.spec.mode = SearchMode::Concurrency {
        start: concurrencies.first().copied().unwrap_or(1),
    };
    r.spec.start_rate_per_s = 0.0;
    r.spec.criteria.min_achieved = None;
    for (s, &c) in r.steps.iter_mut().zip(concurrencies) {
        s.target_rate_per_s = 0.0;
        s.concurrency = Some(c);
        s.summary.target_rate_per_s = None;
        s.summary.achieved_ratio = None;
        s.checks.retain(|c| !c.criterion.starts_with("achieved"));
        s.passed = s.checks.iter().all(|c| c.passed);
    }
    r.verdict = Some(CapacityResult::verdict_of(&r.steps));
    r
}

/// Writes synthetic results that exercise every part of the report into `dir`, returning
/// their paths: throughput runs of two environments (one run with server and host series of
/// three nodes and two devices) and a capacity search whose fourth step fails.
pub fn write_showcase(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let shape = |seed, ops_per_s, latency_ms| RunShape {
        ops_per_s,
        latency_ms,
        intervals: 40,
        warmup: 5,
        seed,
        ..RunShape::default()
    };
    let files = [
        (
            "ec2-1.json",
            run_with_metrics("ec2", &shape(1, 2_300.0, 2.0), 3, &["nvme0n1", "nvme1n1"]),
        ),
        ("ec2-2.json", run("ec2", &shape(2, 2_200.0, 2.1))),
        ("k8s-1.json", run("k8s", &shape(3, 1_800.0, 2.8))),
    ];
    let mut paths = Vec::new();
    for (name, result) in files {
        let path = dir.join(name);
        result.write(&path)?;
        paths.push(path);
    }
    let path = dir.join("ec2-capacity.json");
    capacity("ec2", &[1_000.0, 2_000.0, 3_000.0, 4_000.0], 4).write(&path)?;
    paths.push(path);
    Ok(paths)
}

/// A search by two loaders (1,000, 2,000, 3,000 ops/s) whose third step was loader-bound:
/// loader 1 sent 71.3% of its schedule on time.
pub fn capacity_loader_bound(env: &str) -> CapacityResult {
    use crate::result::capacity::{StepLoaders, StepShard};
    let mut r = capacity(env, &[1000.0, 2000.0, 3000.0], 0);
    for s in &mut r.steps {
        let rate = s.target_rate_per_s / 2.0;
        let starved = s.index == 3;
        s.loaders = Some(StepLoaders {
            count: 2,
            start_spread_ms: 3.0 * s.index as f64,
            shards: (0..2)
                .map(|index| StepShard {
                    index,
                    ops_per_s: if starved && index == 1 {
                        rate * 0.713
                    } else {
                        rate
                    },
                    target_rate_per_s: Some(rate),
                    behind: if starved && index == 1 {
                        vec!["sent 71.3% of its schedule on time".into()]
                    } else {
                        vec![]
                    },
                })
                .collect(),
        });
        s.passed = !starved;
    }
    r.verdict = Some(CapacityResult::verdict_of(&r.steps));
    r
}

/// One search step at `rate` whose one check passed or failed (the policy's tests).
pub fn search_step(rate: f64, passed: bool) -> SearchStep {
    let r = crate::result::fixture::run("a", &crate::result::fixture::RunShape::default());
    SearchStep {
        index: 0,
        target_rate_per_s: rate,
        concurrency: None,
        result: PathBuf::new(),
        settle_s: 0.0,
        pending_before: None,
        cpu_before: None,
        pending_after: None,
        node_cpu: None,
        host_cpu: None,
        loaders: None,
        summary: r.main_summary().unwrap().clone(),
        checks: vec![CriterionCheck {
            criterion: "x".into(),
            value: Some(1.0),
            limit: 0.0,
            unit: String::new(),
            passed,
            unverified: None,
        }],
        passed,
    }
}

/// A search from 1,000 ops/s doubling, 10 steps at most, 2 refinements, no criteria.
pub fn search_spec() -> CapacitySpec {
    CapacitySpec {
        mode: SearchMode::Rate,
        start_rate_per_s: 1000.0,
        growth: Growth::Factor(2.0),
        step_s: 1.0,
        warmup_s: 0.0,
        max_steps: 10,
        refine: 2,
        settle: Settle {
            max_pending: 0.0,
            max_cpu: None,
            timeout_s: 1.0,
        },
        criteria: Criteria {
            latency: vec![],
            max_pending_compactions: None,
            pending_after_s: 0.0,
            max_node_cpu: None,
            max_error_rate: None,
            min_achieved: None,
        },
    }
}

/// One closed-loop search step at `c` in flight whose one check passed or failed.
pub fn closed_step(c: usize, passed: bool) -> SearchStep {
    SearchStep {
        target_rate_per_s: 0.0,
        concurrency: Some(c),
        ..search_step(0.0, passed)
    }
}

/// A closed-loop search from `start` in flight, otherwise [`search_spec`].
pub fn closed_spec(start: usize, growth: Growth, refine: usize) -> CapacitySpec {
    CapacitySpec {
        mode: SearchMode::Concurrency { start },
        start_rate_per_s: 0.0,
        growth,
        refine,
        ..search_spec()
    }
}
