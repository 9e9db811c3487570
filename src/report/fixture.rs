//! Synthetic run results for tests and examples: deterministic (seeded) one-second intervals
//! with recorded latencies, summarised the way the load engine summarises a phase. Nothing
//! here claims to be a measurement.

use std::collections::BTreeMap;

use crate::host::HostFacts;
use crate::result::{
    Fingerprint, IntervalRecord, OpSummary, PhaseResult, PhaseSummary, RESULT_VERSION, RunResult,
    RunStatus, Target,
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

/// A completed run of `env` shaped like `shape`: a rampup-free main phase of write/read.
pub fn run(env: &str, shape: &RunShape) -> RunResult {
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
        intervals.push(IntervalRecord::from_snapshot(
            start_s,
            start_s + 1.0,
            warmup,
            &snap,
            0,
            0.1,
        ));
    }
    let secs = (shape.intervals - shape.warmup) as f64;
    let mode = match shape.rate_per_s {
        Some(rate_per_s) => LoadMode::Open {
            rate_per_s,
            max_in_flight: 1024,
        },
        None => LoadMode::Closed { concurrency: 64 },
    };
    let summary = PhaseSummary {
        measured_s: secs,
        ok: measured.ok(),
        errors: 0,
        ops_per_s: measured.ok() as f64 / secs,
        target_rate_per_s: shape.rate_per_s,
        achieved_ratio: shape.rate_per_s.map(|r| measured.ok() as f64 / secs / r),
        by_op: measured
            .kinds()
            .into_iter()
            .map(|k| (k, OpSummary::of(measured.op(k), secs)))
            .collect(),
        all: OpSummary::of(&measured.all(), secs),
        errors_by_kind: BTreeMap::new(),
        client_cpu_s: 0.1 * secs,
        client_cpu_util: 0.05,
        ops_per_client_cpu_s: measured.ok() as f64 / (0.1 * secs),
        client_max_rss_bytes: 50 << 20,
        max_backlog: 0,
        max_send_lag_ms: 0.0,
    };
    RunResult {
        schema_version: RESULT_VERSION,
        env: env.into(),
        started_unix_s: 1_795_314_605 + shape.seed,
        finished_unix_s: Some(1_795_314_605 + shape.seed + shape.intervals as u64),
        status: RunStatus::Completed,
        workload: WorkloadSpec::defaults(WorkloadKind::Keyvalue),
        target: Target {
            hosts: vec!["127.0.0.1".into()],
            local_dc: None,
            cluster: None,
        },
        fingerprint: Fingerprint {
            cqlbench_version: "0.1.0".into(),
            driver: "synthetic".into(),
            cassandra_version: None,
            host: HostFacts {
                hostname: "fixture".into(),
                cpu_model: "none".into(),
                cores: 2,
                ram_bytes: 1 << 30,
                kernel: "none".into(),
            },
            cluster: None,
            probe: None,
        },
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
            },
            intervals,
            summary: Some(summary),
        }],
        warnings: Vec::new(),
        metrics: None,
    }
}
