//! The load engine: connect, create the schema, run the rampup and main phases, and write the
//! result (JSON, HDR interval log and acknowledged-write ledger) after every interval, so an
//! interrupted run keeps what it measured.

pub mod barrier;
pub mod executor;
pub mod session;
pub mod window;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::host::HostFacts;
use crate::result::{
    Fingerprint, IntervalRecord, OpSummary, PhaseResult, PhaseSummary, RESULT_VERSION, RunResult,
    RunStatus, Target, Warning, phase_warnings,
};
use crate::spec::{ClusterSpec, LoadMode, LoadSpec, WorkloadSpec};
use crate::workload::{Prepared, Visit, Workload, WorkloadError};
use executor::{PhaseOutcome, StopReason, run_phase};
use futures::future::LocalBoxFuture;
use scylla::client::session::Session;
use session::ConnectSpec;

/// A whole run, as the CLI (or a scenario) describes it.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub env: String,
    pub workload: WorkloadSpec,
    /// Writes of every row of the key space before the main phase.
    pub rampup: Option<LoadSpec>,
    pub main: LoadSpec,
    pub connect: ConnectSpec,
    pub target: Target,
    pub cluster: Option<ClusterSpec>,
    pub drop_keyspace: bool,
    /// The JSON result; the HDR log goes next to it with the extension `.hlog`.
    pub out: PathBuf,
    /// The main phase writes rows in cycle order, like rampup (a fill), instead of the mix.
    pub sequential_main: bool,
    /// Set by someone watching the cluster (a fill's data-size target): ends the main phase
    /// as completed.
    pub until: Option<Arc<AtomicBool>>,
    /// Server and host metrics to sample during the run (empty: none).
    pub metrics: crate::metrics::sampler::MetricsPlan,
    /// Replicas in the local data centre, when it is not known before connecting (`--hosts`
    /// without `--dc`): the run reads the DC from the node it connects to, routes to it and
    /// creates the keyspace there (the workload's replication is then empty).
    pub local_rf: Option<u32>,
    /// The rate as a share of a throughput result, recorded in the result.
    pub rate_share: Option<crate::result::RateShare>,
    /// Faults applied at their offsets into the main phase, by `nodes`.
    pub faults: Vec<crate::fault::Fault>,
    /// The target's nodes: faults are applied to them, and a node that goes down without a
    /// fault naming it is a warning (a local cluster; hooks only for other targets).
    pub nodes: Option<Arc<dyn crate::fault::Inject>>,
    /// A node going down ends the main phase (as completed; a fill stops there).
    pub end_on_node_death: bool,
    /// This process is one shard of a run.
    pub shard: Option<ShardPlan>,
    /// The host probe recorded in the result's fingerprint (the latest of this environment).
    pub probe: Option<crate::result::ProbeRef>,
}

/// One shard of a run split across processes: its share, and how the shards agree on when
/// their main phases start.
#[derive(Debug, Clone)]
pub struct ShardPlan {
    pub run_id: String,
    pub share: crate::spec::load::Share,
    /// A wall-clock start (Unix seconds); None: meet at a barrier in the cluster under test.
    pub start_at: Option<f64>,
    pub barrier_timeout: std::time::Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Connect(String),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("starting the client runtime: {0}")]
    Runtime(std::io::Error),
}

/// What the observer is told as the run goes.
pub enum Event<'a> {
    PhaseStarted {
        name: &'a str,
        load: &'a LoadSpec,
    },
    Interval {
        phase: &'a str,
        record: &'a IntervalRecord,
    },
    PhaseDone {
        name: &'a str,
        summary: &'a PhaseSummary,
    },
}

/// Runs the plan on a runtime of its own with `main.threads` worker threads.
pub fn run(
    plan: &RunPlan,
    stop: Arc<AtomicBool>,
    observer: &mut dyn FnMut(Event),
) -> Result<RunResult, LoadError> {
    // One thread: a current-thread runtime avoids cross-thread wake-ups and atomics.
    let mut builder = if plan.main.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(plan.main.threads);
        b
    };
    let rt = builder.enable_all().build().map_err(LoadError::Runtime)?;
    rt.block_on(run_async(plan, stop, observer))
}

async fn run_async(
    plan: &RunPlan,
    stop: Arc<AtomicBool>,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<RunResult, LoadError> {
    let (session, workload_spec, target) = connect_resolved(plan).await?;
    let started = crate::host::unix_now();
    let io = |source| LoadError::Io {
        path: plan.out.clone(),
        source,
    };
    let result = RunResult {
        schema_version: RESULT_VERSION,
        env: plan.env.clone(),
        started_unix_s: started as u64,
        finished_unix_s: None,
        status: RunStatus::Running,
        workload: workload_spec.clone(),
        target,
        fingerprint: Fingerprint {
            cqlbench_version: env!("CARGO_PKG_VERSION").into(),
            driver: "scylla-rust-driver 1.9".into(),
            cassandra_version: session::cassandra_version(&session).await,
            host: HostFacts::read(),
            cluster: plan.cluster.clone(),
            probe: plan.probe.clone(),
        },
        phases: Vec::new(),
        warnings: Vec::new(),
        metrics: None,
        rate_share: plan.rate_share.clone(),
        events: Vec::new(),
        shard: plan.shard.as_ref().map(|s| crate::result::ShardOf {
            run_id: s.run_id.clone(),
            index: s.share.index,
            count: s.share.count,
            start: if s.start_at.is_some() {
                "start-at".into()
            } else {
                "barrier".into()
            },
            main_started_unix_s: None,
        }),
        merged: None,
        reads_verified: None,
    };
    let sampler = (!plan.metrics.is_empty())
        .then(|| crate::metrics::sampler::Sampler::start(plan.metrics.clone(), started));
    // Created (truncated) before the result is first written: a ledger left by an earlier run
    // at the same path never stands beside this run's result.
    let ledger_path = plan.out.with_extension("ledger");
    let ledger = crate::result::ledger::LedgerWriter::create(&ledger_path).map_err(|source| {
        LoadError::Io {
            path: ledger_path.clone(),
            source,
        }
    })?;
    // Once an append fails the ledger stops growing (a warning says so); the run goes on.
    let ledger = Some(ledger);
    result.write(&plan.out).map_err(io)?;
    let run = Run {
        plan,
        stop,
        observer,
        session,
        result,
        sampler,
        ledger,
        ledger_path,
        started,
    };
    crate::workload::with(&workload_spec, run)?.await
}

/// A run connected, its result started: what is left to do once its workload is known.
struct Run<'a> {
    plan: &'a RunPlan,
    stop: Arc<AtomicBool>,
    observer: &'a mut dyn FnMut(Event<'_>),
    session: Arc<Session>,
    result: RunResult,
    sampler: Option<crate::metrics::sampler::Sampler>,
    ledger: Option<crate::result::ledger::LedgerWriter>,
    ledger_path: PathBuf,
    started: f64,
}

impl<'a> Visit for Run<'a> {
    type Output = LocalBoxFuture<'a, Result<RunResult, LoadError>>;

    fn visit<W: Workload>(self, workload: W) -> Self::Output {
        Box::pin(self.go(workload))
    }
}

impl Run<'_> {
    async fn go<W: Workload>(self, w: W) -> Result<RunResult, LoadError> {
        let Run {
            plan,
            stop,
            observer,
            session,
            mut result,
            sampler,
            mut ledger,
            ledger_path,
            started,
        } = self;
        let workload_spec = w.spec().clone();
        let io = |source| LoadError::Io {
            path: plan.out.clone(),
            source,
        };
        // Shard 0 (or the only process) creates the schema; other shards wait until it has.
        let meet = |e: String| LoadError::Connect(e);
        let ks = workload_spec.keyspace.as_str();
        match &plan.shard {
            Some(sh) if sh.share.index > 0 => {
                barrier::wait_for_table(&session, ks, sh.barrier_timeout)
                    .await
                    .map_err(meet)?;
                barrier::wait(
                    &session,
                    ks,
                    &sh.run_id,
                    "schema",
                    sh.barrier_timeout,
                    |a| Ok(!a.is_empty()),
                    "shard 0 to create the schema",
                )
                .await
                .map_err(meet)?;
            }
            Some(sh) => {
                crate::workload::create_schema(&w, &session, plan.drop_keyspace).await?;
                barrier::create_table(&session, ks).await.map_err(meet)?;
                barrier::register(&session, ks, &sh.run_id, "schema", sh.share)
                    .await
                    .map_err(meet)?;
            }
            None => crate::workload::create_schema(&w, &session, plan.drop_keyspace).await?,
        }
        let workload = Arc::new(Prepared::new(w, &session).await?);
        let ops = Arc::new(executor::Driven {
            session: session.clone(),
            workload,
        });
        let hlog_path = plan.out.with_extension("hlog");
        let mut hlog =
            crate::result::hlog::IntervalLog::create(&hlog_path, started).map_err(|source| {
                LoadError::Io {
                    path: hlog_path.clone(),
                    source,
                }
            })?;

        let phases: Vec<(&str, &LoadSpec, bool)> = plan
            .rampup
            .iter()
            .map(|l| ("rampup", l, true))
            .chain([("main", &plan.main, plan.sequential_main)])
            .collect();
        for (name, load, rampup) in phases {
            if name == "main"
                && let Some(sh) = &plan.shard
            {
                let at = match sh.start_at {
                    Some(at) => at,
                    None => {
                        barrier::register(&session, ks, &sh.run_id, "main", sh.share)
                            .await
                            .map_err(meet)?;
                        let arrived = barrier::wait(
                            &session,
                            ks,
                            &sh.run_id,
                            "main",
                            sh.barrier_timeout,
                            |a| barrier::complete(a, sh.share, &sh.run_id),
                            "every shard to finish its rampup",
                        )
                        .await
                        .map_err(meet)?;
                        barrier::start_of(&arrived)
                    }
                };
                let wait_s = at - crate::host::unix_now();
                if sh.start_at.is_some() && wait_s < -1.0 {
                    return Err(LoadError::Connect(format!(
                        "--start-at passed {:.1}s before shard {} was ready to start its main phase                      (its rampup took longer): give a later time; the result so far is in {}",
                        -wait_s,
                        sh.share,
                        plan.out.display()
                    )));
                }
                if wait_s > 0.0 {
                    tokio::time::sleep(std::time::Duration::from_secs_f64(wait_s)).await;
                }
                if let Some(s) = &mut result.shard {
                    s.main_started_unix_s = Some(crate::host::unix_now());
                }
            }
            observer(Event::PhaseStarted { name, load });
            let offset = crate::host::unix_now() - started;
            result.phases.push(PhaseResult {
                name: name.into(),
                offset_s: offset,
                load: load.clone(),
                intervals: Vec::new(),
                summary: None,
            });
            let mut cpu_prev = crate::host::process_cpu_seconds();
            let mut cpu_measured = 0.0;
            let mut write_error: Option<std::io::Error> = None;
            let mut last_write = std::time::Instant::now();
            // The main phase also ends when `until` is set; a phase-local flag carries both.
            let (phase_stop, forward) = match (&plan.until, name) {
                (Some(until), "main") => {
                    let flag = Arc::new(AtomicBool::new(false));
                    let (f, u, s) = (flag.clone(), until.clone(), stop.clone());
                    let task = tokio::spawn(async move {
                        while !u.load(Ordering::Relaxed) && !s.load(Ordering::Relaxed) {
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        }
                        f.store(true, Ordering::Relaxed);
                    });
                    (flag, Some(task))
                }
                _ => (stop.clone(), None),
            };
            // The fault schedule runs beside the main phase, from its start.
            let down_at_start: Vec<String> = plan
                .nodes
                .as_ref()
                .and_then(|n| n.down())
                .unwrap_or_default();
            let mut reported: Vec<String> = Vec::new();
            let faults = match (&plan.nodes, name) {
                (Some(inj), "main") if !plan.faults.is_empty() => Some(
                    crate::fault::Running::start(&plan.faults, inj.clone(), move || {
                        crate::host::unix_now() - started
                    }),
                ),
                _ => None,
            };
            let mut outcome = run_phase(ops.clone(), load, rampup, phase_stop, |rep| {
                let cpu = crate::host::process_cpu_seconds();
                let cpu_d = cpu - cpu_prev;
                cpu_prev = cpu;
                if !rep.warmup {
                    cpu_measured += cpu_d;
                }
                let mut rec = IntervalRecord::from_snapshot(
                    rep.start_s,
                    rep.end_s,
                    rep.warmup,
                    &rep.snapshot,
                    rep.backlog,
                    cpu_d,
                );
                rec.drain = rep.drain;
                for k in rep.snapshot.kinds() {
                    let o = rep.snapshot.op(k);
                    let len = rep.end_s - rep.start_s;
                    let _ = hlog.append(
                        &format!("{name}/{k}/response"),
                        offset + rep.start_s,
                        len,
                        &o.response,
                    );
                    let _ = hlog.append(
                        &format!("{name}/{k}/service"),
                        offset + rep.start_s,
                        len,
                        &o.service,
                    );
                }
                let _ = hlog.flush();
                let mapping = if rampup {
                    crate::result::ledger::Mapping::Sequential
                } else {
                    crate::result::ledger::Mapping::Hashed
                };
                // `--verify`: rows acknowledged in this interval are known written from now on.
                if let Some(v) = &ops.workload.verify {
                    let mut rows = Vec::new();
                    for ((op, outcome), cycles) in &rep.snapshot.writes.by {
                        if *outcome == crate::stats::writes::Outcome::Acked {
                            for c in cycles.iter() {
                                ops.workload
                                    .workload
                                    .written_rows(*op, c, rampup, &mut rows);
                            }
                        }
                    }
                    v.learn(rows);
                    result.reads_verified = Some(v.summary());
                }
                if let Some(l) = &mut ledger
                    && let Err(e) = l.append(name, mapping, &rep.snapshot.writes)
                {
                    result.warnings.push(Warning::LedgerFailed {
                        phase: name.to_string(),
                        error: format!("{}: {e}", ledger_path.display()),
                    });
                    ledger = None;
                }
                result
                    .phases
                    .last_mut()
                    .expect("phase pushed")
                    .intervals
                    .push(rec);
                // Every interval for the first minute, then every 10 s: a long run's result
                // grows, and rewriting it each second would cost the client more and more.
                let n = result.phases.last().map_or(0, |p| p.intervals.len());
                if let Some(f) = &faults {
                    result.events = f.snapshot();
                }
                // A node that went down without a fault naming it.
                if let Some(down) = plan.nodes.as_ref().and_then(|n| n.down()) {
                    let scheduled = crate::result::fault::taken_down(&result.events);
                    for node in down {
                        let scheduled = scheduled.contains(&node);
                        if down_at_start.contains(&node) || reported.contains(&node) || scheduled {
                            continue;
                        }
                        result.warnings.push(Warning::NodeDied {
                            phase: name.to_string(),
                            node: node.clone(),
                            at_s: crate::host::unix_now() - started,
                        });
                        reported.push(node);
                        if plan.end_on_node_death
                            && let Some(u) = &plan.until
                        {
                            u.store(true, Ordering::Relaxed);
                        }
                    }
                }
                if n <= 60 || last_write.elapsed() >= std::time::Duration::from_secs(10) {
                    if let Some(s) = &sampler {
                        result.metrics = Some(Box::new(s.series()));
                    }
                    if let Err(e) = result.write(&plan.out) {
                        write_error.get_or_insert(e);
                    }
                    last_write = std::time::Instant::now();
                }
                observer(Event::Interval {
                    phase: name,
                    record: result.phases.last().unwrap().intervals.last().unwrap(),
                });
            })
            .await;
            if let Some(f) = faults {
                result.events = f.finish();
            }
            if let Some(task) = forward {
                task.abort();
                if outcome.reason == StopReason::Interrupted && !stop.load(Ordering::Relaxed) {
                    outcome.reason = StopReason::Completed;
                }
            }
            if let Some(e) = write_error {
                return Err(io(e));
            }
            let phase = result.phases.last_mut().expect("phase pushed");
            let summary = summarize(&outcome, load, cpu_measured, &phase.intervals);
            result.warnings.extend(phase_warnings(name, &summary));
            observer(Event::PhaseDone {
                name,
                summary: &summary,
            });
            phase.summary = Some(summary);
            match outcome.reason {
                StopReason::Completed => {}
                StopReason::Interrupted => {
                    result.status = RunStatus::Interrupted;
                    result.warnings.push(Warning::Interrupted);
                    break;
                }
                StopReason::TooManyErrors => {
                    result.status = RunStatus::TooManyErrors;
                    break;
                }
            }
        }
        if result.status == RunStatus::Running {
            result.status = RunStatus::Completed;
        }
        result.finished_unix_s = Some(crate::host::unix_now() as u64);
        if let Some(s) = sampler {
            let series = s.finish();
            if let Some(main) = result.phases.iter().rev().find(|p| p.name == "main")
                && let Some(w) = crate::result::compaction_warning(main, &series)
            {
                result.warnings.push(w);
            }
            result.metrics = Some(Box::new(series));
        }
        result.write(&plan.out).map_err(io)?;
        Ok(result)
    }
}

/// Connects; without a local DC, reads it from the node first connected to, connects again
/// preferring it, and puts `local_rf` replicas there when the keyspace's replication was left
/// to it. Returns the session, the workload spec as run and the target as reached.
async fn connect_resolved(
    plan: &RunPlan,
) -> Result<(Arc<scylla::client::session::Session>, WorkloadSpec, Target), LoadError> {
    let mut workload = plan.workload.clone();
    let mut target = plan.target.clone();
    let session = session::connect(&plan.connect)
        .await
        .map_err(|e| LoadError::Connect(e.to_string()))?;
    if plan.connect.local_dc.is_some() && plan.local_rf.is_none() {
        return Ok((session, workload, target));
    }
    let dc = match &plan.connect.local_dc {
        Some(dc) => dc.clone(),
        None => session::local_dc(&session).await.ok_or_else(|| {
            LoadError::Connect(format!(
                "{}: could not read the node's data centre from system.local; give --dc",
                plan.connect.hosts.join(",")
            ))
        })?,
    };
    if let Some(rf) = plan.local_rf
        && workload.replication.is_empty()
    {
        workload.replication.insert(dc.clone(), rf);
    }
    target.local_dc = Some(dc.clone());
    if plan.connect.local_dc.is_some() {
        return Ok((session, workload, target));
    }
    let spec = session::ConnectSpec {
        local_dc: Some(dc),
        ..plan.connect.clone()
    };
    drop(session);
    let session = session::connect(&spec)
        .await
        .map_err(|e| LoadError::Connect(e.to_string()))?;
    Ok((session, workload, target))
}

fn summarize(
    o: &PhaseOutcome,
    load: &LoadSpec,
    cpu_s: f64,
    intervals: &[IntervalRecord],
) -> PhaseSummary {
    let w = &o.window;
    let secs = w.secs();
    let all = o.measured.all();
    // Throughput counts what completed inside the window, not the drain after it.
    let in_window =
        |m: &crate::stats::OpStats, d: &crate::stats::OpStats| w.rate_of(m.ok.saturating_sub(d.ok));
    let by_op = o
        .measured
        .kinds()
        .into_iter()
        .map(|k| {
            let m = o.measured.op(k);
            (k, OpSummary::with_rate(m, in_window(m, o.drain.op(k))))
        })
        .collect();
    let target = match load.mode {
        LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
        LoadMode::Closed { .. } => None,
    };
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let threads = load.threads.clamp(1, cores) as f64;
    let measured: Vec<&IntervalRecord> = intervals.iter().filter(|i| !i.warmup).collect();
    let all_ops_per_s = in_window(&all, &o.drain.all());
    PhaseSummary {
        measured_s: secs,
        ok: all.ok,
        errors: all.error_count(),
        ops_per_s: all_ops_per_s,
        target_rate_per_s: target,
        achieved_ratio: w.achieved_ratio(o.on_schedule),
        scheduled_ops: w.scheduled,
        sent_on_schedule: w.scheduled.map(|_| o.on_schedule),
        carried_over_ops: w.scheduled.map(|_| o.carried_over),
        drain_s: w.drain_s,
        by_op,
        errors_by_kind: all.errors.clone(),
        all: OpSummary::with_rate(&all, all_ops_per_s),
        client_cpu_s: cpu_s,
        // The CPU was measured over the window and its drain.
        client_cpu_util: if secs + w.drain_s > 0.0 {
            cpu_s / ((secs + w.drain_s) * threads)
        } else {
            0.0
        },
        ops_per_client_cpu_s: if cpu_s > 0.0 {
            all.ok as f64 / cpu_s
        } else {
            0.0
        },
        client_max_rss_bytes: crate::host::max_rss_bytes(),
        max_backlog: measured.iter().map(|i| i.backlog).max().unwrap_or(0),
        max_send_lag_ms: measured
            .iter()
            .map(|i| i.max_send_lag_ms)
            .fold(0.0, f64::max),
    }
}
