//! The load engine: connect, create the schema, run the rampup and main phases
//! (`phase`, on the [`executor`]), and record the result, HDR interval log and
//! acknowledged-write ledger as the intervals come ([`recorder`]), so an interrupted run keeps
//! what it measured.

pub mod barrier;
mod deadline;
pub mod driven;
pub mod executor;
mod phase;
pub mod recorder;
pub mod server_views;
pub mod session;
pub mod timer;
pub mod window;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use futures::future::LocalBoxFuture;
use scylla::client::session::Session;

use crate::host::HostFacts;
use crate::result::{
    Fingerprint, IntervalRecord, PhaseSummary, RESULT_VERSION, RunResult, RunStatus,
    TargetRecord as Target,
};
use crate::spec::{ClusterSpec, LoadSpec, WorkloadSpec};
use crate::workload::{Prepared, Visit, Workload, WorkloadError};
use executor::StopReason;
use recorder::Recorder;
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
    /// The local cluster's last start, recorded in the result.
    pub cluster_start: Option<crate::result::ClusterStart>,
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
    /// Tags recorded in the result.
    pub tags: Vec<String>,
    /// `main.threads` is a default, not the user's `--threads`: a fixed-rate run without a
    /// rampup then runs on the threads its rate needs ([`threads_for_rate`]), at most those.
    pub threads_by_rate: bool,
}

/// A fixed rate one client thread is given, ops/s: one thread on time at 4,000 ops/s used 29 %
/// of a CPU here (14,010 operations per client CPU-second, `bench/threads.py`), so one per
/// 5,000 leaves it room on a slower host or a busier second.
pub const RATE_PER_THREAD: f64 = 5000.0;

/// The client's threads for this process's fixed rate when `--threads` is not given: one per
/// [`RATE_PER_THREAD`], at least one, at most `cores`. Fewer threads are cheaper at a light
/// rate: tokio's multi-thread runtime wakes its idle workers to share each send and response,
/// and one thread runs the current-thread runtime with none of that (at 1,000 and 4,000 ops/s
/// one thread did 12-21 % more operations per client CPU-second than two, bench/README.md).
pub fn threads_for_rate(rate_per_s: f64, cores: usize) -> usize {
    let needed = (rate_per_s / RATE_PER_THREAD).ceil();
    // A rate is checked finite and positive; a float past usize saturates on the cast.
    (needed as usize).clamp(1, cores.max(1))
}

impl RunPlan {
    /// The plan as it runs: a fixed-rate main phase without a rampup, whose threads were not
    /// given, on [`threads_for_rate`] threads. The rampup (a closed loop writing every row)
    /// shares the run's runtime, so a run with one keeps the threads it was given.
    fn fitted(&self) -> std::borrow::Cow<'_, RunPlan> {
        match self.main.mode {
            crate::spec::load::LoadMode::Open { rate_per_s, .. }
                if self.threads_by_rate && self.rampup.is_none() =>
            {
                let mut plan = self.clone();
                plan.main.threads = threads_for_rate(rate_per_s, self.main.threads);
                std::borrow::Cow::Owned(plan)
            }
            _ => std::borrow::Cow::Borrowed(self),
        }
    }

    /// Refuses a plan no run can carry out, as its flags would be refused: the workload and
    /// each phase's load, checked wherever the plan was built.
    pub fn check(&self) -> Result<(), crate::error::Invalid> {
        crate::workload::check_spec(&self.workload)?;
        self.main.check()?;
        if let Some(r) = &self.rampup {
            r.check()?;
        }
        Ok(())
    }
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
    /// The plan itself is refused (as its flags would be), before anything connects.
    #[error(transparent)]
    Invalid(#[from] crate::error::Invalid),
    #[error(transparent)]
    Connect(#[from] session::ConnectError),
    #[error("{hosts}: could not read the node's data centre from system.local; give --dc")]
    NoLocalDc { hosts: String },
    /// `--start-at` came before this shard was ready for its main phase.
    #[error(
        "--start-at passed {late_s:.1}s before shard {shard} was ready to start its main phase (its rampup took longer): give a later time; the result so far is in {}",
        out.display()
    )]
    StartPassed {
        late_s: f64,
        shard: String,
        out: PathBuf,
    },
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// Shards of the run could not meet.
    #[error(transparent)]
    Barrier(#[from] barrier::BarrierError),
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("starting the client runtime: {0}")]
    Runtime(std::io::Error),
    /// The contact points answered, but none of the nodes at the addresses they report.
    #[error(
        "{reach}: the nodes report addresses this client cannot reach (behind NAT, a load balancer or a port-forward?): give --address-map INTERNAL=EXTERNAL[:PORT],… with each node's reported address and the one it is reached at"
    )]
    NoNodeReached { reach: String },
    /// `--require-all-nodes`, and the client did not reach them all.
    #[error(
        "--require-all-nodes: {reach}; behind NAT or a load balancer give --address-map INTERNAL=EXTERNAL,…"
    )]
    NodesUnreachable { reach: String },
}

/// What the observer is told as the run goes.
pub enum Event<'a> {
    /// The session is up: which nodes of its data centre the client reached.
    Connected {
        reach: &'a crate::result::Reach,
    },
    PhaseStarted {
        name: &'a str,
        load: &'a LoadSpec,
    },
    Interval {
        phase: &'a str,
        record: &'a IntervalRecord,
        /// The latest sample of the server and host metrics (its series' names with one
        /// sample), when the run samples any.
        sample: Option<&'a crate::result::series::MetricSeries>,
        /// The interval's counts and histograms, as measured.
        snapshot: Option<&'a crate::stats::Snapshot>,
    },
    PhaseDone {
        name: &'a str,
        summary: &'a PhaseSummary,
    },
}

/// Runs the plan on a runtime of its own with `main.threads` worker threads (at a fixed rate,
/// when they were not given, the threads the rate needs: [`threads_for_rate`]). The calling
/// thread runs the run's own steps (connecting, each interval's recording, writing the result)
/// and the workers send: a thread that sends never stops for a second's recording.
pub fn run(
    plan: &RunPlan,
    stop: Arc<AtomicBool>,
    observer: &mut dyn FnMut(Event),
) -> Result<RunResult, LoadError> {
    plan.check()?;
    let plan = &*plan.fitted();
    if plan.main.threads > 1 {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(plan.main.threads)
            .enable_all()
            .build()
            .map_err(LoadError::Runtime)?;
        // The multi-thread runtime's workers take the spawned tasks; `block_on` polls the
        // run's own future here.
        return rt.block_on(run_async(plan, stop, observer));
    }
    // One thread: a current-thread runtime avoids cross-thread wake-ups and atomics. Its
    // thread polls the spawned tasks (the senders, the driver's connections) and the timers
    // and sockets; this thread polls the run's own future through the runtime's handle, as
    // `block_on` does on the multi-thread runtime. Recording an interval held the one thread
    // for 1.4-3.8 ms each second (the percentiles, the HDR log's compressed histograms, the
    // result's JSON and its fsync), and the sends due meanwhile went late.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LoadError::Runtime)?;
    let (done, ended) = tokio::sync::oneshot::channel::<()>();
    std::thread::scope(|s| {
        let senders = std::thread::Builder::new()
            .name("cqlbench-load".into())
            .spawn_scoped(s, || {
                rt.block_on(async {
                    let _ = ended.await;
                })
            })
            .map_err(LoadError::Runtime)?;
        let result = rt.handle().block_on(run_async(plan, stop, observer));
        let _ = done.send(());
        if let Err(panic) = senders.join() {
            std::panic::resume_unwind(panic);
        }
        result
    })
}

async fn run_async(
    plan: &RunPlan,
    stop: Arc<AtomicBool>,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<RunResult, LoadError> {
    let counters = Arc::new(session::DriverCounters::default());
    let (session, workload_spec, target) = connect_resolved(plan, &counters).await?;
    if let Some(reach) = &target.reach {
        observer(Event::Connected { reach });
    }
    let started = crate::host::unix_now();
    let result = first_result(plan, &session, workload_spec.clone(), target, started).await;
    let metrics = with_cql_reader(plan).await;
    let sampler =
        (!metrics.is_empty()).then(|| crate::metrics::sampler::Sampler::start(metrics, started));
    let rec = Recorder::start(&plan.out, result, sampler)?;
    let run = Run {
        plan,
        stop,
        observer,
        session,
        counters,
        rec,
        started,
    };
    crate::workload::with(&workload_spec, run)?.await
}

/// The run's metrics plan, its nodes' reader connected when they are read through CQL and the
/// caller has not connected one. A reader that cannot connect (the run itself connected: the
/// nodes then refused a second session) leaves the run without server figures, as a run with
/// no endpoint was before CQL: no sampler of nothing.
async fn with_cql_reader(plan: &RunPlan) -> crate::metrics::sampler::MetricsPlan {
    if !plan.metrics.through_cql || plan.metrics.reader.is_some() {
        return plan.metrics.clone();
    }
    let (metrics, connect) = (plan.metrics.clone(), plan.connect.clone());
    let attached =
        tokio::task::spawn_blocking(move || server_views::attach(&metrics, &connect)).await;
    match attached {
        Ok(Ok(m)) => m,
        _ => crate::metrics::sampler::MetricsPlan {
            through_cql: false,
            ..plan.metrics.clone()
        },
    }
}

/// The result of a run as it starts: what it runs, where, and with what.
async fn first_result(
    plan: &RunPlan,
    session: &Session,
    workload: WorkloadSpec,
    target: Target,
    started: f64,
) -> RunResult {
    let asked = session::asked_node(session).await;
    let server_settings = session::server_settings(session, asked.as_ref()).await;
    let mut nodes = session::cluster_nodes(session, asked.as_ref()).await;
    let mut warnings = Vec::new();
    let build = crate::result::ClientBuild::current();
    if build.unoptimised() {
        warnings.push(crate::result::Warning::UnoptimisedClient {
            profile: build.profile.clone(),
            opt_level: build.opt_level.clone(),
        });
    }
    if let Some(r) = target.reach.as_ref().filter(|r| !r.complete()) {
        warnings.push(crate::result::Warning::NodesUnreachable {
            dc: r.dc.clone(),
            connected: r.connected.len(),
            nodes: r.nodes.len(),
            unreachable: r.unreachable(),
        });
    }
    // Each other node's settings against the asked node's (none to compare before 4.0).
    if !server_settings.is_empty() {
        let asked_at = asked
            .as_ref()
            .map_or_else(String::new, |n| n.address.ip().to_string());
        for (ip, settings) in session::other_nodes_settings(session, asked.as_ref()).await {
            let address = ip.to_string();
            let Some(facts) = nodes.iter_mut().find(|n| n.address == address) else {
                continue;
            };
            match settings {
                None => facts.settings_unread = true,
                Some(settings) => {
                    facts.settings_differ =
                        crate::result::settings_differing(&server_settings, &settings);
                }
            }
            if !facts.settings_differ.is_empty() {
                warnings.push(crate::result::Warning::NodeSettingsDiffer {
                    node: address,
                    asked: asked_at.clone(),
                    differ: facts
                        .settings_differ
                        .iter()
                        .map(|(k, v)| {
                            let theirs = server_settings
                                .get(k)
                                .cloned()
                                .unwrap_or_else(|| crate::result::ABSENT.to_string());
                            (k.clone(), v.clone(), theirs)
                        })
                        .collect(),
                });
            }
        }
    }
    RunResult {
        schema_version: RESULT_VERSION,
        env: plan.env.clone(),
        started_unix_s: started as u64,
        finished_unix_s: None,
        status: RunStatus::Running,
        workload,
        target,
        fingerprint: Fingerprint {
            cqlbench_version: env!("CARGO_PKG_VERSION").into(),
            driver: "scylla-rust-driver 1.9".into(),
            cassandra_version: session::cassandra_version(session).await,
            java_version: session::java_version(session).await,
            server_settings,
            nodes,
            schema: Default::default(),
            host: HostFacts::read(),
            cluster: plan.cluster.clone(),
            probe: plan.probe.clone(),
            client: Some(plan.connect.client.clone()),
            client_build: Some(build),
            cluster_start: plan.cluster_start.clone(),
        },
        phases: Vec::new(),
        warnings,
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
        ledger_id: None,
        tags: plan.tags.clone(),
        fill: None,
        server_latency: Vec::new(),
    }
}

/// A run connected, its result started: what is left to do once its workload is known.
struct Run<'a> {
    plan: &'a RunPlan,
    stop: Arc<AtomicBool>,
    observer: &'a mut dyn FnMut(Event<'_>),
    session: Arc<Session>,
    counters: Arc<session::DriverCounters>,
    rec: Recorder,
    started: f64,
}

impl<'a> Visit for Run<'a> {
    type Output = LocalBoxFuture<'a, Result<RunResult, LoadError>>;

    fn visit<W: Workload>(self, workload: W) -> Self::Output {
        Box::pin(self.go(workload))
    }
}

impl Run<'_> {
    /// The schema, the statements, then the phases in turn until one does not complete.
    async fn go<W: Workload>(self, w: W) -> Result<RunResult, LoadError> {
        let Run {
            plan,
            stop,
            observer,
            session,
            counters,
            mut rec,
            started,
        } = self;
        create_schema(plan, &session, &w).await?;
        let keyspace = w.spec().keyspace.clone();
        rec.set_schema(session::schema_facts(&session, &keyspace).await);
        let statements = crate::workload::StatementSettings {
            listener: Some(counters.clone()),
            page_size: plan.connect.client.driver.page_size,
        };
        let workload = Arc::new(Prepared::new(w, &session, &statements).await?);
        rec.open_hlog(started)?;
        let mut engine = phase::Engine {
            plan,
            stop,
            observer,
            ops: Arc::new(driven::Driven {
                session,
                workload,
                counters,
            }),
            rec,
            started,
        };
        let phases = plan.rampup.iter().map(|l| ("rampup", l, true));
        let mut coordinated = None;
        for (name, load, rampup) in phases.chain([("main", &plan.main, plan.sequential_main)]) {
            if name == "main" {
                coordinated = Some(coordinator_latency(&engine.ops.session, &keyspace).await);
            }
            if engine.phase(name, load, rampup).await? != StopReason::Completed {
                break;
            }
        }
        // The cluster's own view of the main phase, beside the client's.
        if let Some(start) = coordinated {
            let end = coordinator_latency(&engine.ops.session, &keyspace).await;
            engine
                .rec
                .set_server_latency(crate::metrics::cql::over_phase(&start, &end));
        }
        engine.rec.finish()
    }
}

/// Every node's coordinator latency rows for `keyspace`, each node given 2 s.
async fn coordinator_latency(
    session: &Session,
    keyspace: &str,
) -> Vec<crate::metrics::cql::Coordinated> {
    server_views::coordinator_latency(session, keyspace, std::time::Duration::from_secs(2)).await
}

/// Creates the workload's schema; with shards, shard 0 does and the others wait until it has.
async fn create_schema<W: Workload>(
    plan: &RunPlan,
    session: &Session,
    w: &W,
) -> Result<(), LoadError> {
    let meet = LoadError::Barrier;
    let ks = w.spec().keyspace.as_str();
    match &plan.shard {
        Some(sh) if sh.share.index > 0 => {
            barrier::wait_for_table(session, ks, sh.barrier_timeout)
                .await
                .map_err(meet)?;
            barrier::wait(
                session,
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
            crate::workload::create_schema(w, session, plan.drop_keyspace).await?;
            barrier::create_table(session, ks).await.map_err(meet)?;
            barrier::register(session, ks, &sh.run_id, "schema", sh.share)
                .await
                .map_err(meet)?;
        }
        None => crate::workload::create_schema(w, session, plan.drop_keyspace).await?,
    }
    Ok(())
}

/// Connects; without a local DC, reads it from the node first connected to, connects again
/// preferring it, and puts `local_rf` replicas there when the keyspace's replication was left
/// to it. Returns the session, the workload spec as run and the target as reached.
async fn connect_resolved(
    plan: &RunPlan,
    counters: &Arc<session::DriverCounters>,
) -> Result<(Arc<scylla::client::session::Session>, WorkloadSpec, Target), LoadError> {
    let (session, workload, mut target) = connect_in_dc(plan, counters).await?;
    let reach = session::reach(&session, target.local_dc.as_deref(), REACH_WAIT).await;
    if reach.connected.is_empty() {
        return Err(LoadError::NoNodeReached {
            reach: reach.line(),
        });
    }
    if plan.connect.client.driver.require_all_nodes && !reach.complete() {
        return Err(LoadError::NodesUnreachable {
            reach: reach.line(),
        });
    }
    target.reach = Some(reach);
    Ok((session, workload, target))
}

/// How long a run waits for the driver to reach every node of its data centre before it
/// says which it could not (beyond the driver's 5 s connection timeout).
const REACH_WAIT: std::time::Duration = std::time::Duration::from_secs(6);

/// [`connect_resolved`] up to the session in its data centre.
async fn connect_in_dc(
    plan: &RunPlan,
    counters: &Arc<session::DriverCounters>,
) -> Result<(Arc<scylla::client::session::Session>, WorkloadSpec, Target), LoadError> {
    let mut workload = plan.workload.clone();
    let mut target = plan.target.clone();
    let session = session::connect_counted(&plan.connect, counters.clone()).await?;
    if plan.connect.local_dc.is_some() && plan.local_rf.is_none() {
        return Ok((session, workload, target));
    }
    let dc = match &plan.connect.local_dc {
        Some(dc) => dc.clone(),
        None => match session::local_dc(&session).await {
            Some(dc) => dc,
            None => {
                // No node answered: the nodes' own addresses may be out of this client's reach.
                let reach = session::reach(&session, None, REACH_WAIT).await;
                return Err(match reach.connected.is_empty() {
                    true => LoadError::NoNodeReached {
                        reach: reach.line(),
                    },
                    false => LoadError::NoLocalDc {
                        hosts: plan.connect.hosts.join(","),
                    },
                });
            }
        },
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
    let session = session::connect_counted(&spec, counters.clone()).await?;
    Ok((session, workload, target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::load::{Cycles, Share};
    use crate::spec::{LoadMode, Stop, WorkloadKind};

    /// A closed-loop plan on one thread, whose contact point is never listened on.
    fn lab_plan(out: PathBuf) -> RunPlan {
        let mut workload = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
        workload.replication.insert("dc1".into(), 1);
        let main = LoadSpec {
            mode: LoadMode::Closed { concurrency: 8 },
            stop: Stop::Duration { secs: 5.0 },
            warmup_s: 0.0,
            threads: 1,
            timeout_s: 1.0,
            max_errors: 0,
            cycles: Cycles { start: 0, end: 100 },
            share: Share::WHOLE,
            send_window_s: 0.0,
        };
        RunPlan {
            env: "lab".into(),
            workload,
            rampup: None,
            main,
            connect: ConnectSpec {
                hosts: vec!["127.0.0.1:1".into()],
                local_dc: Some("dc1".into()),
                timeout: std::time::Duration::from_secs(1),
                credentials: None,
                client: Default::default(),
            },
            target: Target {
                hosts: vec!["127.0.0.1:1".into()],
                local_dc: Some("dc1".into()),
                cluster: None,
                netns: None,
                reach: None,
            },
            cluster: None,
            cluster_start: None,
            drop_keyspace: false,
            out,
            sequential_main: false,
            until: None,
            metrics: Default::default(),
            local_rf: None,
            rate_share: None,
            faults: Vec::new(),
            nodes: None,
            end_on_node_death: false,
            shard: None,
            probe: None,
            tags: Vec::new(),
            threads_by_rate: false,
        }
    }

    /// A fixed rate without a rampup runs on the threads its rate needs, unless they were
    /// given; a closed loop, or a run with a rampup, keeps them.
    #[test]
    fn a_fixed_rate_runs_on_the_threads_its_rate_needs_unless_they_were_given() {
        assert_eq!(threads_for_rate(0.5, 8), 1);
        assert_eq!(threads_for_rate(1000.0, 8), 1);
        assert_eq!(threads_for_rate(RATE_PER_THREAD, 8), 1);
        assert_eq!(threads_for_rate(RATE_PER_THREAD + 1.0, 8), 2);
        assert_eq!(threads_for_rate(60_000.0, 8), 8);
        assert_eq!(threads_for_rate(60_000.0, 0), 1);
        assert_eq!(threads_for_rate(f64::MAX, 4), 4);

        let mut plan = lab_plan("r.json".into());
        plan.main.threads = 4;
        plan.main.mode = LoadMode::Open {
            rate_per_s: 7000.0,
            max_in_flight: 100,
        };
        let threads = |p: &RunPlan| p.fitted().main.threads;
        assert_eq!(threads(&plan), 4, "given threads are kept");
        plan.threads_by_rate = true;
        assert_eq!(threads(&plan), 2);
        plan.main.mode = LoadMode::Closed { concurrency: 8 };
        assert_eq!(threads(&plan), 4, "a closed loop keeps them");
        plan.main.mode = LoadMode::Open {
            rate_per_s: 300.0,
            max_in_flight: 100,
        };
        assert_eq!(threads(&plan), 1);
        plan.rampup = Some(plan.main.clone());
        assert_eq!(threads(&plan), 4, "the rampup shares the runtime");
    }

    /// A plan built in code meets the rules its flags meet, before anything connects (the
    /// contact point is never listened on).
    #[test]
    fn a_plan_built_in_code_is_refused_like_its_flags() {
        let dir = tempfile::tempdir().unwrap();
        let plan = lab_plan(dir.path().join("r.json"));
        let refused = |p: RunPlan| {
            let e = run(&p, Arc::new(AtomicBool::new(false)), &mut |_| {}).unwrap_err();
            assert!(matches!(e, LoadError::Invalid(_)), "{e}");
            e.to_string()
        };
        let mut p = plan.clone();
        p.main.threads = 0;
        assert_eq!(refused(p), "--threads must be at least 1");
        let mut p = plan.clone();
        p.main.warmup_s = 5.0;
        assert!(refused(p).starts_with("--warmup"));
        let mut p = plan.clone();
        p.workload.rows = 0;
        assert_eq!(refused(p), "--rows must be at least 1");
        let mut p = plan.clone();
        p.workload.ratio = "range=1".parse().unwrap();
        assert!(refused(p).contains("workload keyvalue has no range operation"));
        assert!(!dir.path().join("r.json").exists(), "nothing was written");
    }
}
