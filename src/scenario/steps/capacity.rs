//! The `capacity` step (`cqlbench capacity WORKLOAD`): the step-by-step capacity search of
//! reference 001, with each overload criterion as a key (or flag). It steps the target rate
//! (open loop, `--start-rate`) or the requests in flight (closed loop, `--start-concurrency`).

use super::run::RunStep;
use crate::capacity::Level;
use crate::error::Invalid;
use crate::result::capacity::{CapacityResult, CapacitySpec, CapacityStatus, SearchMode};
use crate::scenario::capacity;
use crate::scenario::event::{Event, LoadersEvent};
use crate::scenario::{Context, ScenarioError};
use crate::shards::exchange::cql::CqlExchange;
use crate::shards::exchange::step::{Coordinator, FollowEvent, Follower};
use crate::shards::exchange::{ExchangeError, StepRow};
use crate::shards::launch::Launch;
pub use crate::step::capacity::{CapacitySearch, CapacityStep};
use crate::step::order::Task;

impl CapacityStep {
    /// The run step each search step runs: the start rate or concurrency (each step sets its
    /// own), `--step` long with `--step-warmup`.
    fn step_run(&self) -> Result<(RunStep, CapacitySpec), Invalid> {
        let a = self;
        if a.run.rate.is_some() || a.run.concurrency.is_some() {
            return Err(crate::invalid!(
                "capacity sets each step's rate (--start-rate) or concurrency (--start-concurrency), with --factor or --increment: not --rate or --concurrency"
            ));
        }
        if a.run.duration.is_some() || a.run.ops.is_some() {
            return Err(crate::invalid!(
                "capacity steps last --step each (not --duration / --ops)"
            ));
        }
        if !a.run.fault.is_empty() {
            return Err(crate::invalid!(
                "--fault is for run, throughput and latency (a capacity search's steps are short)"
            ));
        }
        if let Some(share) = a.run.shard {
            if a.run.start_at.is_some() {
                return Err(crate::invalid!(
                    "--start-at with capacity --shard {share}: each step's shards meet at the barrier in the cluster; leave --start-at out"
                ));
            }
            if share.index > 0 && a.search.resume {
                return Err(crate::invalid!(
                    "--resume with --shard {share}: only shard 0 (the coordinator) resumes a search; a follower joins the step it publishes: leave --resume out"
                ));
            }
        }
        if a.search.resume && a.run.out.is_none() {
            return Err(crate::invalid!(
                "--resume continues the search in --out: give --out"
            ));
        }
        let spec = a.search.spec()?;
        let loaders = a
            .run
            .loaders
            .map(|n| (n, format!("--loaders {n}")))
            .or(a.run.shard.map(|s| (s.count, format!("--shard {s}"))));
        if let (Some((n, flag)), SearchMode::Concurrency { start }) = (&loaders, spec.mode)
            && (start as u64) < *n
        {
            return Err(crate::invalid!(
                "--start-concurrency {start} with {flag}: each loader keeps at least one request in flight; give --start-concurrency {n} or more"
            ));
        }
        if let Some(id) = &a.run.run_id
            && a.run.loaders.is_some()
        {
            // Each step meets under RUN_ID-sNN.
            crate::spec::load::parse_run_id(&capacity::step_run_id(id, 99))
                .map_err(|_| crate::invalid!("--run-id '{id}': at most 59 characters with --loaders (each step's loaders meet under RUN_ID-sNN)"))?;
        }
        if let Some(id) = &a.run.run_id
            && a.run.shard.is_some()
        {
            // Each step meets under RUN_ID-sNN, a step run again under RUN_ID-sNN-aA.
            crate::spec::load::parse_run_id(&format!("{id}-s99-a99"))
                .map_err(|_| crate::invalid!("--run-id '{id}': at most 55 characters with capacity --shard (each step's shards meet under RUN_ID-sNN-aA)"))?;
        }
        let mut run = a.run.clone();
        match spec.mode {
            SearchMode::Rate => {
                run.rate = Some(crate::spec::load::RateArg::PerSecond(spec.start_rate_per_s))
            }
            SearchMode::Concurrency { start } => run.concurrency = Some(start),
        }
        run.duration = Some(a.search.step);
        run.warmup = a.search.step_warmup;
        run.validate()?;
        Ok((run, spec))
    }

    /// Checks every value that can be checked without the cluster.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.step_run().map(|_| ())
    }
}

pub fn run(a: &CapacityStep, ctx: &Context) -> Result<CapacityResult, ScenarioError> {
    let (mut run, spec) = a.step_run()?;
    if run.out.is_none() {
        run.out = Some(run.default_out(ctx, "capacity"));
    }
    let mut plan = run.to_plan(ctx)?;
    // No endpoint given: one reader for the whole search, its settles, its reads after each
    // step and each step's sampler — a --prometheus-server's latest samples (refused here when
    // it gives nothing), else the nodes' virtual tables through CQL (a cluster that cannot be
    // reached fails the first step, which says so in the result; the check before it names
    // what cannot be measured).
    let read = run.live_reader(ctx, &mut plan);
    if run.prometheus_server.is_some() {
        read?;
    }
    if a.search.resume {
        plan.rampup = None;
        plan.drop_keyspace = false;
    }
    // `--shard 0/N`: this machine coordinates; the exchange with the others is in the cluster.
    let exchange = match run.shard {
        Some(share) if share.index == 0 => Some(CqlExchange::connect(
            &plan.connect,
            &plan.workload.keyspace,
            run.barrier_timeout,
        )?),
        Some(share) => crate::scenario::error::refuse!(
            "--shard {share}: shard 0 runs the search; a follower runs through capacity::follow"
        ),
        None => None,
    };
    super::prepare_out(&plan.out)?;
    if plan.metrics.endpoints.is_empty() {
        ctx.emit(Event::CapacityWithoutMetrics {
            node_exporters: !plan.metrics.node_exporters.is_empty(),
        });
    }
    let at = Event::ResultAt {
        what: "capacity result",
        path: &plan.out,
    };
    ctx.emit(at);
    let step_run = |index: usize, level: Level| loader_run(&run, a, index, level);

    let coordinator = match (&exchange, run.shard, &run.run_id) {
        (Some(ex), Some(share), Some(run_id)) => Some(Coordinator {
            ex,
            run: run_id,
            count: share.count,
            upload_wait: run.barrier_timeout,
        }),
        _ => None,
    };
    // `--shard 0/1` too: its one step process meets under each step's own run id.
    let count = run
        .loaders
        .filter(|n| *n > 1)
        .or(run.shard.map(|s| s.count));
    let loaders = match count {
        None => None,
        Some(count) => {
            let Some(exe) = &ctx.exe else {
                crate::scenario::error::refuse!(
                    "--loaders and --shard start cqlbench processes: this caller gave no cqlbench executable"
                );
            };
            Some(capacity::Loaders {
                exe: exe.clone(),
                count,
                run_id: run.run_id.clone().unwrap_or_else(|| {
                    crate::spec::load::default_run_id(
                        crate::host::unix_now_s(),
                        Some(std::process::id()),
                    )
                }),
                run: &step_run,
                machines: coordinator.as_ref(),
            })
        }
    };
    let result = capacity::run(
        &plan,
        &spec,
        a.search.resume,
        loaders.as_ref(),
        &ctx.cancel,
        &mut |p| ctx.emit(Event::Capacity(p)),
    )?;
    ctx.emit(Event::CapacityDone { result: &result });
    ctx.emit(Event::ResultAt {
        what: "capacity result",
        path: &plan.out,
    });
    match &result.status {
        CapacityStatus::Failed { reason } => Err(ScenarioError::RunEnded(format!(
            "the search failed: {reason}"
        ))),
        _ => Ok(result),
    }
}

/// `capacity --shard I/N` with I > 0: this machine follows the search shard 0 coordinates,
/// running its shard of each step shard 0 publishes and uploading its results, until the
/// search ends. Returns the steps it ran; the capacity result is shard 0's.
pub fn follow(a: &CapacityStep, ctx: &Context) -> Result<usize, ScenarioError> {
    let (mut run, spec) = a.step_run()?;
    let (Some(share), Some(run_id)) = (run.shard, run.run_id.clone()) else {
        crate::scenario::error::refuse!("following a search needs --shard I/N and --run-id");
    };
    if share.index == 0 {
        crate::scenario::error::refuse!(
            "--shard {share}: shard 0 coordinates the search (capacity::run)"
        );
    }
    let Some(exe) = &ctx.exe else {
        crate::scenario::error::refuse!(
            "--shard starts a cqlbench process for each step: this caller gave no cqlbench executable"
        );
    };
    if run.out.is_none() {
        run.out = Some(run.default_out(ctx, "capacity"));
    }
    let plan = run.to_plan(ctx)?;
    super::prepare_out(&plan.out)?;
    let ex = CqlExchange::connect(&plan.connect, &plan.workload.keyspace, run.barrier_timeout)?;
    // From its upload to the next step: the coordinator's wait for the others' uploads,
    // its wait after the step, its settling, and a step's length to spare.
    let step_wait = run.barrier_timeout
        + std::time::Duration::from_secs_f64(
            spec.criteria.pending_after_s + spec.settle.timeout_s + spec.step_s,
        );
    let f = Follower {
        ex: &ex,
        run: &run_id,
        index: share.index,
        count: share.count,
        step_wait,
    };
    ctx.emit(Event::Loaders(LoadersEvent::Following {
        share,
        run_id: &run_id,
    }));
    let launch_of = |row: &StepRow| -> Result<Launch, ExchangeError> {
        let level = Level::parse(&row.level).ok_or_else(|| ExchangeError::BadLevel {
            run: run_id.clone(),
            step: row.step,
            level: row.level.clone(),
        })?;
        Ok(Launch::all(
            exe.clone(),
            Task::Run(Box::new(loader_run(&run, a, row.step, level))),
            share.count,
            row.step_run.clone(),
            capacity::step_path(&plan.out, row.step),
        ))
    };
    let steps = f.follow(&launch_of, &ctx.cancel, &mut |e| match e {
        FollowEvent::StepStarted { row } => ctx.emit(Event::Loaders(LoadersEvent::FollowStep {
            step: row.step,
            level: &row.level,
            step_run: &row.step_run,
        })),
        FollowEvent::StepUploaded { result, .. } => ctx.emit(Event::Loaders(LoadersEvent::Shard {
            index: share.index,
            count: share.count,
            out: result,
            log: &result.with_extension("log"),
        })),
    });
    let steps = match steps {
        Err(ExchangeError::Interrupted) => {
            return Err(ScenarioError::Interrupted {
                when: format!("following capacity search {run_id}"),
                kept: format!(
                    "this shard's step results are beside {}",
                    plan.out.display()
                ),
            });
        }
        r => r?,
    };
    ctx.emit(Event::Loaders(LoadersEvent::Followed {
        share,
        run_id: &run_id,
        steps,
    }));
    Ok(steps)
}

impl CapacityStep {
    /// The run of step `index` at `level` its loaders are sent (each takes its shard).
    pub fn loader_run(&self, index: usize, level: Level) -> Result<RunStep, Invalid> {
        let (run, _) = self.step_run()?;
        Ok(loader_run(&run, self, index, level))
    }
}

/// The run of step `index` at `level` its loaders are sent: the search's run (`run`,
/// as [`CapacityStep::step_run`] made it) at the step's whole rate or concurrency (each loader
/// takes its share), `--step` long, the rampup only in the first step of a new search.
fn loader_run(run: &RunStep, a: &CapacityStep, index: usize, level: Level) -> RunStep {
    let mut r = RunStep {
        loaders: None,
        out: None,
        quiet: false,
        shard: None,
        run_id: None,
        start_at: None,
        ..run.clone()
    };
    match level {
        Level::Rate(rate) => {
            r.rate = Some(crate::spec::load::RateArg::PerSecond(rate));
            r.concurrency = None;
        }
        Level::Concurrency(c) => {
            r.concurrency = Some(c);
            r.rate = None;
        }
    }
    r.duration = Some(a.search.step);
    r.warmup = a.search.step_warmup;
    r.skip_rampup = r.skip_rampup || index > 1 || a.search.resume;
    r
}
