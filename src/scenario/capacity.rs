//! The capacity search (reference 001): raise the rate (open loop) or the requests in flight
//! (closed loop) step by step; before each step wait for
//! pending compactions to settle; after it apply the overload criteria. The result is written
//! after every step, so an interrupted search keeps its completed steps and `--resume`
//! continues it.

use crate::cancel::Cancel;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{NodeCpu, wait_for_pending};
use crate::capacity::Level;
use crate::capacity::criteria::{
    apply, loaders_check, max_node_cpu, node_death_check, step_loaders,
};
use crate::capacity::policy::next_level;
use crate::load::{Event, LoadError, RunPlan};
use crate::metrics::sampler::{NotMeasured, max_pending_of_all, scrape_all};
use crate::result::capacity::{
    CAPACITY_VERSION, CapacityResult, CapacitySpec, CapacityStatus, CriterionCheck as Check,
    SearchStep as CapacityStep,
};
use crate::result::{RunResult, RunStatus};
use crate::shards::exchange::ExchangeError;
use crate::shards::exchange::step::Coordinator;
use crate::shards::launch::{Launch, LaunchError};
use crate::spec::{LoadMode, Stop};

/// How long the reading of pending compactions after a step waits for each node.
const PENDING_SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the search tells its observer besides the steps' own run events.
pub enum Progress<'a> {
    /// Before the first step: how long the search can take.
    Plan(Estimate),
    /// Before the first step: the server-side criteria its metric sources do not give (each
    /// with the nodes that lack it), which the verdict will mark unverified.
    Unmeasurable(Vec<String>),
    /// Waiting before a step: the highest pending compactions and node CPU share (`None`: not
    /// read) at the first reading still above.
    Settling {
        pending: Option<f64>,
        cpu: Option<f64>,
    },
    Settled {
        secs: f64,
        pending: Option<f64>,
        cpu: Option<f64>,
    },
    StepStarted {
        index: usize,
        /// The target rate (open loop; 0 in closed loop).
        rate: f64,
        /// The requests in flight (closed loop).
        concurrency: Option<usize>,
        /// The loader processes that run it together (1: this process alone).
        loaders: u64,
    },
    WaitingAfter {
        secs: f64,
    },
    StepDone {
        step: &'a CapacityStep,
    },
    Run(Event<'a>),
}

/// How long a search can take: each step waits for compactions to settle (up to the settle
/// timeout), runs `step_s` (warmup included), then waits `pending_after_s` before reading
/// pending compactions; the search stops after at most `steps` steps (the first also runs the
/// rampup, whose length depends on the rows and the cluster).
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The most steps still to run (`--max-steps`, less those a resumed search has).
    pub steps: usize,
    pub step_s: f64,
    pub warmup_s: f64,
    /// The longest settle wait before a step (0 without a metrics endpoint to read).
    pub settle_max_s: f64,
    /// The wait after a step before reading pending compactions (0 when not asked for or not
    /// observable).
    pub pending_after_s: f64,
}

impl Estimate {
    /// The search `spec` with `done` steps complete; `observable`: there is a metrics endpoint
    /// to read pending compactions from (else neither wait happens).
    pub fn of(spec: &CapacitySpec, done: usize, observable: bool) -> Estimate {
        Estimate {
            steps: spec.max_steps.saturating_sub(done),
            step_s: spec.step_s,
            warmup_s: spec.warmup_s.min(spec.step_s),
            settle_max_s: if observable {
                spec.settle.timeout_s
            } else {
                0.0
            },
            pending_after_s: if observable && spec.criteria.max_pending_compactions.is_some() {
                spec.criteria.pending_after_s
            } else {
                0.0
            },
        }
    }

    /// A step's shortest length: compactions already settled.
    pub fn step_min_s(&self) -> f64 {
        self.step_s + self.pending_after_s
    }

    /// A step's longest: the settle wait to its timeout.
    pub fn step_max_s(&self) -> f64 {
        self.settle_max_s + self.step_min_s()
    }

    /// The whole search at most (rampup aside).
    pub fn total_max_s(&self) -> f64 {
        self.steps as f64 * self.step_max_s()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Read(#[from] crate::result::ResultError),
    #[error("{0}")]
    Resume(String),
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("step {index}: {source}")]
    Loaders {
        index: usize,
        #[source]
        source: LaunchError,
    },
    /// `--shard I/N`: the machines of the search could not exchange step `index`.
    #[error("step {index}: {source}")]
    Exchange {
        index: usize,
        #[source]
        source: ExchangeError,
    },
}

/// `--loaders N`: each step run by N loader processes (shards 0..N of a `cqlbench run`),
/// whose main phases start together at the barrier in the cluster. This process stays the
/// one coordinator: it settles, merges the loaders' results, applies the criteria to the
/// merged step and picks the next level, so the loaders cannot diverge.
pub struct Loaders<'a> {
    /// The cqlbench executable the loaders run.
    pub exe: PathBuf,
    /// 2 or more.
    pub count: u64,
    /// Step `index` meets under run id `RUN_ID-sINDEX` (each step is a run of its own).
    pub run_id: String,
    /// The run of step `index` at a level (its whole rate or concurrency: each loader takes
    /// its share); each loader gets its own shard, run id and result path.
    pub run: &'a dyn Fn(usize, Level) -> crate::step::RunStep,
    /// `capacity --shard 0/N`: the loaders are on N machines; this one starts only shard 0
    /// of each step and exchanges the step with the others through the cluster.
    pub machines: Option<&'a Coordinator<'a>>,
}

impl Loaders<'_> {
    /// The run id of step `index`'s loaders.
    pub fn step_run_id(&self, index: usize) -> String {
        step_run_id(&self.run_id, index)
    }
}

/// `RUN_ID-s03`: the run id of step 3 of a search whose loaders meet under `run_id`.
pub fn step_run_id(run_id: &str, index: usize) -> String {
    format!("{run_id}-s{index:02}")
}

/// The path of step `index`'s run result next to the capacity result `out`.
pub fn step_path(out: &Path, index: usize) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "capacity".into());
    out.with_file_name(format!("{stem}.step-{index:02}.json"))
}

/// Runs (or, with `resume`, continues) a search. `base` describes the workload, the target and
/// the metrics; its `out` is the capacity result's path and its main phase gives threads,
/// timeout and the open loop's `max_in_flight`.
/// With `loaders`, each step is run by that many loader processes instead of this one; with
/// their `machines`, by one process on each of N machines, this one coordinating (it
/// publishes the `end` row however the search ends, so the others exit).
pub fn run(
    base: &RunPlan,
    spec: &CapacitySpec,
    resume: bool,
    loaders: Option<&Loaders>,
    cancel: &Cancel,
    observer: &mut dyn FnMut(Progress),
) -> Result<CapacityResult, CapacityError> {
    let mut result = begin(base, spec, resume)?;
    let machines = loaders.and_then(|l| l.machines);
    if let Some(c) = machines {
        c.begin(resume)
            .map_err(|e| CapacityError::Resume(e.to_string()))?;
    }
    let searched = search(base, &mut result, loaders, cancel, observer);
    // The followers exit on the end row, however the search ended.
    let ended = match machines {
        Some(c) => c
            .end(result.steps.len() + 1)
            .map_err(|source| CapacityError::Exchange {
                index: result.steps.len() + 1,
                source,
            }),
        None => Ok(()),
    };
    searched?;
    ended?;
    Ok(result)
}

/// The steps of a search from where `result` is, each written into it (and `base.out`) as
/// it is measured.
fn search(
    base: &RunPlan,
    result: &mut CapacityResult,
    loaders: Option<&Loaders>,
    cancel: &Cancel,
    observer: &mut dyn FnMut(Progress),
) -> Result<(), CapacityError> {
    let out = &base.out;
    let io = |source| CapacityError::Io {
        path: out.clone(),
        source,
    };
    // A resumed search keeps its own spec.
    let spec = result.spec.clone();
    result.write(out).map_err(io)?;
    observer(Progress::Plan(Estimate::of(
        &spec,
        result.steps.len(),
        !base.metrics.endpoints.is_empty(),
    )));
    // The server-side criteria the sources cannot give, named before the first step rather
    // than only as unverified in the verdict.
    if !base.metrics.is_empty() {
        let found = crate::metrics::check::check(&base.metrics, PENDING_SCRAPE_TIMEOUT);
        let blind = found.capacity_blind(
            spec.criteria.max_pending_compactions.is_some(),
            spec.criteria.max_node_cpu.is_some(),
        );
        if !blind.is_empty() {
            observer(Progress::Unmeasurable(blind));
        }
    }
    loop {
        let index = result.steps.len() + 1;
        let count = loaders.map_or(1, |l| l.count);
        let Some(level) = next_level(&spec, &result.steps, count) else {
            result.status = CapacityStatus::Completed;
            break;
        };
        let ended = match step(base, &spec, index, level, loaders, cancel, observer) {
            Ok(ended) => ended,
            Err(e) => {
                // The file says how the search ended, not "running".
                result.status = CapacityStatus::Failed {
                    reason: format!("step {index}: {e}"),
                };
                result.finished_unix_s = Some(crate::host::unix_now_s());
                result.write(out).map_err(io)?;
                return Err(e);
            }
        };
        match ended {
            StepEnd::Measured { step, node_died } => {
                result.steps.push(*step);
                result.verdict = Some(CapacityResult::verdict_of(&result.steps));
                result.write(out).map_err(io)?;
                observer(Progress::StepDone {
                    step: result.steps.last().expect("pushed"),
                });
                // The cluster the search measures is gone: no later step would measure it.
                if node_died {
                    result.status = CapacityStatus::Completed;
                    break;
                }
            }
            StepEnd::Stopped(status) => {
                result.status = status;
                break;
            }
        }
    }
    result.verdict = Some(CapacityResult::verdict_of(&result.steps));
    if result.status == CapacityStatus::Completed {
        result.finished_unix_s = Some(crate::host::unix_now_s());
    }
    result.write(out).map_err(io)?;
    Ok(())
}

/// The search's result to start from: the interrupted one in `base.out` when resuming (same
/// workload, not complete), else a new one; running.
fn begin(
    base: &RunPlan,
    spec: &CapacitySpec,
    resume: bool,
) -> Result<CapacityResult, CapacityError> {
    let out = &base.out;
    let mut result = if resume {
        let r = CapacityResult::read(out)?;
        if r.status == CapacityStatus::Completed {
            return Err(CapacityError::Resume(format!(
                "{}: the search is complete; nothing to resume",
                out.display()
            )));
        }
        if r.workload != base.workload {
            return Err(CapacityError::Resume(format!(
                "{}: the search used another workload spec; resume it with the same arguments",
                out.display()
            )));
        }
        r
    } else {
        CapacityResult {
            schema_version: CAPACITY_VERSION,
            kind: "capacity".into(),
            env: base.env.clone(),
            started_unix_s: crate::host::unix_now_s(),
            finished_unix_s: None,
            status: CapacityStatus::Running,
            spec: spec.clone(),
            workload: base.workload.clone(),
            steps: Vec::new(),
            verdict: None,
            tags: base.tags.clone(),
        }
    };
    result.status = CapacityStatus::Running;
    Ok(result)
}

/// How one step of the search ended.
enum StepEnd {
    /// It ran and its criteria were applied; a node died during it.
    Measured {
        step: Box<CapacityStep>,
        node_died: bool,
    },
    /// The search stops here (interrupted, or the step measured nothing).
    Stopped(CapacityStatus),
}

/// The run of step `index` at `level`: the rampup only before the first step, `step_s` long.
fn step_plan(base: &RunPlan, spec: &CapacitySpec, index: usize, level: Level) -> RunPlan {
    let max_in_flight = match base.main.mode {
        LoadMode::Open { max_in_flight, .. } => max_in_flight,
        LoadMode::Closed { concurrency } => concurrency,
    };
    let mut plan = base.clone();
    plan.out = step_path(&base.out, index);
    plan.rampup = if index == 1 {
        base.rampup.clone()
    } else {
        None
    };
    plan.drop_keyspace = base.drop_keyspace && index == 1;
    plan.main.mode = match level {
        Level::Rate(rate_per_s) => LoadMode::Open {
            rate_per_s,
            max_in_flight,
        },
        Level::Concurrency(concurrency) => LoadMode::Closed { concurrency },
    };
    plan.main.stop = Stop::Duration { secs: spec.step_s };
    plan.main.warmup_s = spec.warmup_s;
    plan
}

/// One step: settle, run at `level` (here, or by the loaders), wait and read pending
/// compactions, apply the criteria (to the loaders' merged result, with a check that every
/// loader kept up).
fn step(
    base: &RunPlan,
    spec: &CapacitySpec,
    index: usize,
    level: Level,
    loaders: Option<&Loaders>,
    cancel: &Cancel,
    observer: &mut dyn FnMut(Progress),
) -> Result<StepEnd, CapacityError> {
    let endpoints = &base.metrics.endpoints;
    if cancel.is_cancelled() {
        return Ok(StepEnd::Stopped(CapacityStatus::Interrupted));
    }
    let (settle_s, pending_before, cpu_before) = settle(&base.metrics, spec, cancel, observer);
    if cancel.is_cancelled() {
        return Ok(StepEnd::Stopped(CapacityStatus::Interrupted));
    }
    let (rate, concurrency) = match level {
        Level::Rate(r) => (r, None),
        Level::Concurrency(c) => (0.0, Some(c)),
    };
    observer(Progress::StepStarted {
        index,
        rate,
        concurrency,
        loaders: loaders.map_or(1, |l| l.count),
    });
    let plan = step_plan(base, spec, index, level);
    let run = match loaders {
        None => crate::load::run(&plan, cancel.flag(), &mut |e| observer(Progress::Run(e)))?,
        Some(l) => match run_loaders(l, &plan.out, index, level, cancel) {
            Ok(run) => run,
            // Stopped loaders may leave nothing to merge: the step is not complete.
            Err(_) if cancel.is_cancelled() => {
                return Ok(StepEnd::Stopped(CapacityStatus::Interrupted));
            }
            Err(e) => return Err(e),
        },
    };
    if run.status == RunStatus::Interrupted {
        return Ok(StepEnd::Stopped(CapacityStatus::Interrupted));
    }
    let Some(summary) = run.main_summary().cloned() else {
        return Ok(StepEnd::Stopped(CapacityStatus::Failed {
            reason: format!("step {index} produced no main-phase result"),
        }));
    };
    let pending_after = match spec.criteria.max_pending_compactions {
        None => Err(NotMeasured("not asked for".into())),
        Some(_) if endpoints.is_empty() => Err(NotMeasured(
            "pending compactions not observable: no metrics endpoint (--cluster or --prometheus)"
                .into(),
        )),
        Some(_) => {
            observer(Progress::WaitingAfter {
                secs: spec.criteria.pending_after_s,
            });
            if !cancel.sleep(Duration::from_secs_f64(spec.criteria.pending_after_s)) {
                // Interrupted before the step's checks ran: it is not complete.
                return Ok(StepEnd::Stopped(CapacityStatus::Interrupted));
            }
            max_pending_of_all(&scrape_all(&base.metrics, PENDING_SCRAPE_TIMEOUT))
        }
    };
    let node_cpu = max_node_cpu(&run, &base.metrics.node_cpus);
    let host_cpu = run.metrics.as_ref().and_then(|m| {
        let main = run.main_phase()?;
        crate::result::host_cpu(main, m).map(|(cpu, _, _)| cpu)
    });
    let mut checks = apply(
        &spec.criteria,
        &summary,
        pending_after.clone(),
        node_cpu.ok_or_else(|| {
            NotMeasured("node CPU not observable: no node CPU sample in the step (no local process, metrics endpoint or node exporter answered)"
                .into())
        }),
    );
    // Read through CQL, pending compactions are the tasks running and queued (the JMX figure
    // adds the strategies' estimate of the backlog); from a Prometheus server, its latest
    // scrape: the criterion says which it judged.
    let via = match (&base.metrics.reader, base.metrics.through_cql) {
        (Some(_), true) => " (CQL: compaction tasks running and queued, system_views.thread_pools)",
        (Some(_), false) => " (the Prometheus server's latest samples)",
        (None, _) => "",
    };
    if let Some(c) = checks
        .iter_mut()
        .find(|c| c.criterion.starts_with("pending compactions"))
    {
        c.criterion.push_str(via);
    }
    let died: Vec<&str> = run
        .warnings
        .iter()
        .filter_map(|w| match w {
            crate::result::Warning::NodeDied { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    if base.nodes.as_ref().is_some_and(|n| n.down().is_some()) {
        checks.push(node_death_check(&died));
    }
    let step_loaders = match (loaders, &run.merged) {
        (Some(l), Some(m)) => Some(step_loaders(m, l.count, spec.criteria.min_achieved)),
        _ => None,
    };
    if let Some(l) = &step_loaders {
        checks.push(loaders_check(l));
    }
    let passed = !checks.iter().any(Check::failed);
    let result = plan
        .out
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| plan.out.clone());
    Ok(StepEnd::Measured {
        step: Box::new(CapacityStep {
            index,
            target_rate_per_s: rate,
            concurrency,
            result,
            settle_s,
            pending_before,
            cpu_before,
            pending_after: pending_after.ok(),
            node_cpu,
            host_cpu,
            summary,
            checks,
            passed,
            loaders: step_loaders,
        }),
        node_died: !died.is_empty(),
    })
}

/// Step `index` at `level` run by the loaders (here, or shard 0 here and the others on
/// their machines), merged into `out` (each loader's result beside it, `NAME.shard-I.json`).
fn run_loaders(
    l: &Loaders,
    out: &Path,
    index: usize,
    level: Level,
    cancel: &Cancel,
) -> Result<RunResult, CapacityError> {
    let launch = Launch::all(
        l.exe.clone(),
        crate::step::order::Task::Run(Box::new((l.run)(index, level))),
        l.count,
        l.step_run_id(index),
        out.to_path_buf(),
    );
    match l.machines {
        None => crate::shards::launch::run(&launch, cancel, &mut |_| {})
            .map_err(|source| CapacityError::Loaders { index, source }),
        Some(c) => c
            .step(&launch, index, &level.text(), cancel)
            .map_err(|source| CapacityError::Exchange { index, source }),
    }
}

/// Waits until every node has at most `settle.max_pending` pending compactions and (with
/// `settle.max_cpu`) uses at most that share of its CPUs, or the timeout passes; returns the
/// time waited, the highest pending count at the start and the highest node CPU at the end.
fn settle(
    metrics: &crate::metrics::sampler::MetricsPlan,
    spec: &CapacitySpec,
    cancel: &Cancel,
    observer: &mut dyn FnMut(Progress),
) -> (f64, Option<f64>, Option<f64>) {
    if metrics.endpoints.is_empty() {
        return (0.0, None, None);
    }
    let cpu = spec.settle.max_cpu.map(|max| NodeCpu {
        pids: &metrics.pids,
        node_cpus: &metrics.node_cpus,
        max,
    });
    let mut announced = false;
    let w = wait_for_pending(
        metrics,
        spec.settle.max_pending,
        cpu.as_ref(),
        Duration::from_secs_f64(spec.settle.timeout_s),
        cancel,
        |pending, cpu| {
            if !announced {
                observer(Progress::Settling { pending, cpu });
                announced = true;
            }
        },
    );
    let secs = w.waited.as_secs_f64();
    if announced && !cancel.is_cancelled() {
        observer(Progress::Settled {
            secs,
            pending: w.last,
            cpu: w.cpu,
        });
    }
    (secs, w.first, w.cpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::capacity::Growth;
    use crate::result::capacity::{Criteria, LatencyBound, SearchMode, StepLoaders};
    use crate::result::fixture::search_step;
    use crate::result::fixture::{RunShape, run};
    use crate::result::{Merged, PhaseSummary};
    use crate::spec::OpKind;

    fn criteria() -> Criteria {
        Criteria {
            latency: vec![
                LatencyBound {
                    op: None,
                    percentile: 50.0,
                    max_ms: 20.0,
                },
                LatencyBound {
                    op: Some(OpKind::Range),
                    percentile: 99.0,
                    max_ms: 1.0,
                },
            ],
            max_pending_compactions: Some(20.0),
            pending_after_s: 60.0,
            max_node_cpu: Some(0.9),
            max_error_rate: Some(0.01),
            min_achieved: Some(0.98),
        }
    }

    #[test]
    fn the_estimate_adds_each_steps_waits_and_counts_the_steps_left() {
        let spec = CapacitySpec {
            mode: SearchMode::Rate,
            start_rate_per_s: 1000.0,
            growth: crate::result::capacity::Growth::Factor(1.5),
            step_s: 30.0,
            warmup_s: 5.0,
            max_steps: 10,
            refine: 2,
            settle: crate::result::capacity::Settle {
                max_pending: 5.0,
                max_cpu: None,
                timeout_s: 120.0,
            },
            criteria: criteria(),
        };
        let e = Estimate::of(&spec, 0, true);
        assert_eq!(e.steps, 10);
        assert_eq!((e.step_min_s(), e.step_max_s()), (90.0, 210.0));
        assert_eq!(e.total_max_s(), 2100.0);
        // Resumed after 4 steps: 6 left.
        assert_eq!(Estimate::of(&spec, 4, true).steps, 6);
        // Nothing to read pending compactions from: no waits.
        let blind = Estimate::of(&spec, 0, false);
        assert_eq!((blind.step_min_s(), blind.step_max_s()), (30.0, 30.0));
        // No pending criterion: no wait after the step.
        let mut no_pending = spec.clone();
        no_pending.criteria.max_pending_compactions = None;
        assert_eq!(Estimate::of(&no_pending, 0, true).step_min_s(), 30.0);
    }

    /// A fixture step's figures: 2,000 ops/s at 2 ms.
    fn summary_at_2000() -> PhaseSummary {
        let r = run(
            "a",
            &RunShape {
                latency_ms: 2.0,
                rate_per_s: Some(2000.0),
                ..RunShape::default()
            },
        );
        r.main_summary().unwrap().clone()
    }

    #[test]
    fn a_node_that_died_fails_the_step_and_the_verdict_says_so() {
        let alive = node_death_check(&[]);
        assert!(alive.passed && !alive.failed());
        let died = node_death_check(&["node2"]);
        assert!(died.failed());
        let step = |rate: f64, checks: Vec<Check>| CapacityStep {
            index: 1,
            target_rate_per_s: rate,
            summary: summary_at_2000(),
            passed: !checks.iter().any(Check::failed),
            checks,
            ..search_step(0.0, false)
        };
        let steps = [step(1_000.0, vec![alive]), step(2_000.0, vec![died])];
        let v = CapacityResult::verdict_of(&steps);
        assert_eq!(v.highest_passing_rate_per_s, Some(1_000.0));
        assert_eq!(v.failing_rate_per_s, Some(2_000.0));
        assert_eq!(
            v.failed,
            vec!["no node died (node2 did): 1 died".to_string()]
        );
    }

    #[test]
    fn criteria_pass_and_fail_on_their_limits() {
        let mut s = summary_at_2000();
        s.achieved_ratio = Some(0.995);
        let checks = apply(&criteria(), &s, Ok(3.0), Ok(0.5));
        let by = |name: &str| {
            checks
                .iter()
                .find(|c| c.criterion.starts_with(name))
                .unwrap()
        };
        assert_eq!(checks.len(), 6);
        let p50 = by("all p50 ≤ 20 ms");
        assert!(
            p50.passed && (p50.value.unwrap() - 2.0).abs() < 0.5,
            "{p50:?}"
        );
        // No range operations: not measurable, so neither passed nor failed.
        let range = by("range p99");
        assert!(!range.passed && !range.failed() && range.value.is_none());
        assert_eq!(
            range.unverified.as_deref(),
            Some("no range operations completed in the step")
        );
        assert_eq!(range.outcome(), "unverified");
        assert!(by("pending compactions 60s").passed);
        assert!(by("node CPU ≤ 90%").passed);
        assert!(by("achieved rate").passed);
        assert!(!checks.iter().any(Check::failed));
        assert_eq!(checks.iter().filter(|c| c.passed).count(), 5);

        s.achieved_ratio = Some(0.9);
        let checks = apply(&criteria(), &s, Ok(25.0), Ok(0.95));
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| c.failed())
            .map(|c| c.criterion.as_str())
            .collect();
        assert_eq!(
            failed,
            [
                "pending compactions 60s after the step ≤ 20",
                "node CPU ≤ 90%",
                "achieved rate ≥ 98% of target"
            ]
        );
        let mut tight = criteria();
        tight.latency[0].max_ms = 0.5;
        let nm = |w: &str| Err(NotMeasured(w.into()));
        assert!(apply(&tight, &s, nm("x"), nm("y"))[0].failed());
    }

    #[test]
    fn a_value_that_could_not_be_read_is_unverified_not_passed() {
        let s = summary_at_2000();
        let checks = apply(
            &criteria(),
            &s,
            Err(NotMeasured(
                "node1: 127.0.0.1:7301: no answer within 5.0s".into(),
            )),
            Err(NotMeasured("node CPU not observable".into())),
        );
        let pending = checks
            .iter()
            .find(|c| c.criterion.starts_with("pending compactions"))
            .unwrap();
        assert!(!pending.passed && !pending.failed(), "{pending:?}");
        assert_eq!(pending.outcome(), "unverified");
        let cpu = checks
            .iter()
            .find(|c| c.criterion.starts_with("node CPU"))
            .unwrap();
        assert_eq!(cpu.unverified.as_deref(), Some("node CPU not observable"));
        // The step is not failed by what it could not measure, and the verdict says so.
        let step = CapacityStep {
            index: 4,
            target_rate_per_s: 2000.0,
            result: PathBuf::from("x.json"),
            summary: s,
            passed: !checks.iter().any(Check::failed),
            checks,
            ..search_step(0.0, false)
        };
        assert!(step.passed);
        let v = CapacityResult::verdict_of(std::slice::from_ref(&step));
        assert_eq!(v.highest_passing_rate_per_s, Some(2000.0));
        assert!(
            v.unverified.iter().any(|u| u.starts_with(
                "step 4: pending compactions 60s after the step ≤ 20: node1: 127.0.0.1:7301: no answer"
            )),
            "{:?}",
            v.unverified
        );
        assert_eq!(v.unverified.len(), 3, "{:?}", v.unverified);
    }

    /// A base plan as the capacity command builds it: keyvalue with a rampup, the main phase
    /// open loop with at most 64 in flight (the closed loop's steps replace it).
    fn base_plan() -> RunPlan {
        let load = |mode| crate::spec::LoadSpec {
            mode,
            stop: Stop::Duration { secs: 60.0 },
            warmup_s: 0.0,
            threads: 2,
            timeout_s: 1.0,
            max_errors: 0,
            cycles: crate::spec::load::Cycles { start: 0, end: 100 },
            share: crate::spec::load::Share::WHOLE,
            send_window_s: 0.0,
        };
        RunPlan {
            env: "lab".into(),
            workload: crate::spec::WorkloadSpec::defaults(crate::spec::WorkloadKind::Keyvalue),
            rampup: Some(load(LoadMode::Closed { concurrency: 16 })),
            main: load(LoadMode::Open {
                rate_per_s: 1000.0,
                max_in_flight: 64,
            }),
            connect: crate::load::session::ConnectSpec {
                hosts: vec!["127.0.0.1:1".into()],
                local_dc: Some("dc1".into()),
                timeout: Duration::from_secs(1),
                credentials: None,
                client: Default::default(),
            },
            target: crate::result::TargetRecord {
                hosts: vec!["127.0.0.1:1".into()],
                local_dc: Some("dc1".into()),
                cluster: None,
                netns: None,
                reach: None,
            },
            cluster: None,
            cluster_start: None,
            drop_keyspace: true,
            out: PathBuf::from("/r/cap.json"),
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

    /// Runs a closed-loop search on paper: each step's plan from [`step_plan`], passing while
    /// its concurrency is at most `capacity`; the concurrency of each step's main phase.
    fn closed_search(spec: &CapacitySpec, capacity: usize) -> Vec<usize> {
        let base = base_plan();
        let mut steps: Vec<CapacityStep> = Vec::new();
        let mut seen = Vec::new();
        while let Some(level) = next_level(spec, &steps, 1) {
            let index = steps.len() + 1;
            let plan = step_plan(&base, spec, index, level);
            let LoadMode::Closed { concurrency } = plan.main.mode else {
                panic!("step {index} of a closed-loop search is open loop: {level:?}");
            };
            assert_eq!(level, Level::Concurrency(concurrency));
            assert_eq!(plan.out, step_path(&base.out, index));
            assert_eq!(plan.main.stop, Stop::Duration { secs: spec.step_s });
            assert_eq!(plan.main.warmup_s, spec.warmup_s);
            // Only the first step loads the rows and may drop the keyspace.
            assert_eq!(plan.rampup.is_some(), index == 1, "step {index}");
            assert_eq!(plan.drop_keyspace, index == 1, "step {index}");
            seen.push(concurrency);
            steps.push(CapacityStep {
                index,
                target_rate_per_s: 0.0,
                concurrency: Some(concurrency),
                summary: summary_at_2000(),
                checks: Vec::new(),
                passed: concurrency <= capacity,
                ..search_step(0.0, false)
            });
        }
        seen
    }

    fn closed_spec(start: usize, growth: Growth, max_steps: usize, refine: usize) -> CapacitySpec {
        CapacitySpec {
            mode: SearchMode::Concurrency { start },
            start_rate_per_s: 0.0,
            growth,
            step_s: 30.0,
            warmup_s: 5.0,
            max_steps,
            refine,
            settle: crate::result::capacity::Settle {
                max_pending: 5.0,
                max_cpu: None,
                timeout_s: 120.0,
            },
            criteria: Criteria {
                min_achieved: None,
                ..criteria()
            },
        }
    }

    #[test]
    fn closed_loop_steps_run_whole_concurrencies_each_above_the_last_then_bisect() {
        // Factor 1.2 from 1: 1.2 rounds to 1, so one more; 3.6 rounds to 4; every step is
        // above the last. Nothing fails: --max-steps ends the search.
        let slow = closed_spec(1, Growth::Factor(1.2), 10, 3);
        assert_eq!(
            closed_search(&slow, usize::MAX),
            [1, 2, 3, 4, 5, 6, 7, 8, 10, 12]
        );
        // Factor 1.5 from 4: 4, 6, 9, 13.5 → 14 fails; bisecting 9..14 gives 11, 12, 13,
        // and no whole number is left between 13 and 14, with refinements to spare.
        let grow = closed_spec(4, Growth::Factor(1.5), 20, 5);
        assert_eq!(closed_search(&grow, 13), [4, 6, 9, 14, 11, 12, 13]);
        // Fewer refinements: the search stops after them, wherever the bracket is.
        let two = closed_spec(4, Growth::Factor(1.5), 20, 2);
        assert_eq!(closed_search(&two, 9), [4, 6, 9, 14, 11, 10]);
        // An increment, and a first step that fails: halve down to one, then bisect up.
        let down = closed_spec(16, Growth::Increment(8.0), 20, 4);
        assert_eq!(closed_search(&down, 5), [16, 8, 4, 6, 5]);
        // An open-loop step keeps the base's ceiling of requests in flight.
        let open = step_plan(&base_plan(), &slow, 2, Level::Rate(500.0));
        assert_eq!(
            open.main.mode,
            LoadMode::Open {
                rate_per_s: 500.0,
                max_in_flight: 64
            }
        );
    }

    #[test]
    fn a_published_level_reads_back_as_the_same_level() {
        for l in [
            Level::Rate(1500.0),
            Level::Rate(1234.5678),
            Level::Concurrency(8),
        ] {
            assert_eq!(Level::parse(&l.text()), Some(l), "{}", l.text());
        }
        assert_eq!(Level::Rate(2250.0).text(), "rate:2250");
        for bad in ["", "rate", "rate:x", "rate:-1", "concurrency:0", "speed:3"] {
            assert_eq!(Level::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn step_files_sit_next_to_the_result() {
        assert_eq!(
            step_path(Path::new("/r/cap.json"), 3),
            PathBuf::from("/r/cap.step-03.json")
        );
    }

    /// A step as two loaders ran it: their results merged (histograms added), the criteria
    /// applied to the merged step, each loader's part recorded.
    fn merged_step(
        criteria: &Criteria,
        shard1: impl Fn(u64, u64) -> f64,
    ) -> (CapacityStep, RunResult) {
        use crate::shards::merge::tests::{fast, shard};
        let mut inputs = [shard(0, 900, fast), shard(1, 100, shard1)];
        let (merged, _) = crate::shards::merge::merge(&mut inputs).unwrap();
        let summary = merged.main_summary().unwrap().clone();
        let loaders = step_loaders(merged.merged.as_ref().unwrap(), 2, Some(0.98));
        let mut checks = apply(
            criteria,
            &summary,
            Err(NotMeasured("x".into())),
            Err(NotMeasured("y".into())),
        );
        checks.push(loaders_check(&loaders));
        let step = CapacityStep {
            index: 2,
            target_rate_per_s: 1000.0,
            result: PathBuf::from("cap.step-02.json"),
            summary,
            passed: !checks.iter().any(Check::failed),
            checks,
            loaders: Some(loaders),
            ..search_step(0.0, false)
        };
        (step, merged)
    }

    #[test]
    fn a_sharded_steps_verdict_is_taken_on_the_merged_histograms_and_summed_throughput() {
        let c = Criteria {
            latency: vec![LatencyBound {
                op: None,
                percentile: 99.0,
                max_ms: 10.0,
            }],
            max_pending_compactions: None,
            pending_after_s: 0.0,
            max_node_cpu: None,
            max_error_rate: Some(0.01),
            min_achieved: Some(0.98),
        };
        // Loader 0 sends 900 ops/s at 1-2 ms; loader 1 100 ops/s, a fifth of them at 50 ms:
        // 2% of the step is slow, so its p99 is 50 ms although loader 0's alone is 2 ms.
        let tail = |k: u64, j: u64| {
            if j.is_multiple_of(5) {
                50.0
            } else {
                crate::shards::merge::tests::fast(k, j)
            }
        };
        let (step, merged) = merged_step(&c, tail);
        assert!((step.summary.ops_per_s - 1000.0).abs() < 1.0, "summed");
        let p99 = step
            .checks
            .iter()
            .find(|k| k.criterion == "all p99 ≤ 10 ms")
            .unwrap();
        assert!(p99.failed(), "{p99:?}");
        assert!((p99.value.unwrap() - 50.0).abs() < 1.0, "{p99:?}");
        assert!(
            !step.passed && !step.loader_bound(),
            "the cluster's failure"
        );
        // Each loader's share and achieved rate; both kept up, started 4 ms apart.
        let l = step.loaders.as_ref().unwrap();
        assert_eq!(l.count, 2);
        assert!((l.start_spread_ms - 4.0).abs() < 0.01, "{l:?}");
        let parts: Vec<(u64, Option<f64>, f64)> = l
            .shards
            .iter()
            .map(|s| (s.index, s.target_rate_per_s, s.ops_per_s.round()))
            .collect();
        assert_eq!(parts, [(0, Some(900.0), 900.0), (1, Some(100.0), 100.0)]);
        assert!(l.behind().is_empty());
        let kept = step.checks.last().unwrap();
        assert_eq!(kept.criterion, "every loader kept up (2 loaders)");
        assert!(kept.passed);
        // The verdict counts it as the cluster's failing step.
        let v = CapacityResult::verdict_of(std::slice::from_ref(&step));
        assert_eq!(v.failing_rate_per_s, Some(1000.0));
        assert_eq!(v.loader_bound_step, None);
        assert!(merged.merged.is_some());
    }

    fn figures(index: u64, ops_per_s: f64, achieved: f64) -> crate::result::ShardFigures {
        crate::result::ShardFigures {
            index,
            path: PathBuf::from(format!("s.shard-{index}.json")),
            status: RunStatus::Completed,
            main_started_unix_s: Some(1_000.0 + index as f64 * 0.012),
            ops_per_s,
            target_rate_per_s: Some(1500.0),
            achieved_ratio: Some(achieved),
            client_cpu_s: 1.0,
            client_cpu_util: 0.3,
            max_backlog: 0,
            final_backlog: 0,
            service_p50_ms: 1.0,
        }
    }

    #[test]
    fn a_loader_that_fell_behind_fails_the_step_as_loader_bound_and_ends_the_search() {
        let m = |achieved_1: f64| Merged {
            run_id: "r-s02".into(),
            start_spread_ms: 12.0,
            shards: vec![
                figures(0, 1500.0, 1.0),
                figures(1, 1500.0 * achieved_1, achieved_1),
            ],
        };
        let kept = step_loaders(&m(1.0), 2, Some(0.98));
        assert!(loaders_check(&kept).passed);
        // Short of its schedule by less than the step's own criterion allows: kept up; by
        // more: behind. Without the criterion, 99% is the line.
        assert!(loaders_check(&step_loaders(&m(0.984), 2, Some(0.98))).passed);
        assert!(loaders_check(&step_loaders(&m(0.975), 2, Some(0.98))).failed());
        assert!(loaders_check(&step_loaders(&m(0.984), 2, None)).failed());
        let starved = step_loaders(&m(0.713), 2, Some(0.98));
        assert_eq!(
            starved.behind(),
            ["loader 1 of 2 fell behind: sent 71.3% of its schedule on time"]
        );
        let check = loaders_check(&starved);
        assert!(check.failed());
        assert_eq!(
            check.criterion,
            "every loader kept up (loader 1 of 2 fell behind: sent 71.3% of its schedule on time)"
        );
        assert_eq!(check.measured(), "1 behind");
        let step = |index: usize, rate: f64, loaders: StepLoaders| {
            let checks = vec![loaders_check(&loaders)];
            CapacityStep {
                index,
                target_rate_per_s: rate,
                summary: summary_at_2000(),
                passed: !checks.iter().any(Check::failed),
                checks,
                loaders: Some(loaders),
                ..search_step(0.0, false)
            }
        };
        let steps = vec![step(1, 2000.0, kept), step(2, 3000.0, starved)];
        assert!(!steps[1].passed && steps[1].loader_bound());
        let v = CapacityResult::verdict_of(&steps);
        // Not the cluster's failure: no failing step, the capacity a lower bound …
        assert_eq!(v.highest_passing_rate_per_s, Some(2000.0));
        assert_eq!(v.failing_rate_per_s, None);
        assert!(!v.found_failure());
        assert!(v.failed.is_empty());
        // … and the loaders named as the limit.
        assert_eq!(v.loader_bound_step, Some(2));
        assert_eq!(
            v.loader_bound,
            ["loader 1 of 2 fell behind: sent 71.3% of its schedule on time"]
        );
        // The search stops there, refinements or steps to spare notwithstanding.
        let mut spec = closed_spec(4, Growth::Factor(1.5), 20, 3);
        spec.mode = SearchMode::Rate;
        spec.start_rate_per_s = 2000.0;
        assert_eq!(next_level(&spec, &steps[..1], 2), Some(Level::Rate(3000.0)));
        assert_eq!(next_level(&spec, &steps, 2), None);
        let closed = closed_spec(4, Growth::Factor(1.5), 20, 3);
        let mut c = steps.clone();
        c[0].concurrency = Some(4);
        c[1].concurrency = Some(6);
        assert_eq!(next_level(&closed, &c, 2), None);
    }

    #[test]
    fn a_closed_loop_step_gives_each_loader_at_least_one_request_in_flight() {
        use crate::spec::load::Share;
        // 5 in flight over 2 loaders: 3 and 2; over 4: 2, 1, 1, 1 (the sum is the step's).
        let split = |c: usize, n: u64| -> Vec<usize> {
            (0..n)
                .map(|index| Share { index, count: n }.split(c))
                .collect()
        };
        assert_eq!(split(5, 2), [3, 2]);
        assert_eq!(split(5, 4), [2, 1, 1, 1]);
        // A downward search stops at one request per loader: 16 fails, then 8, then 4 (4
        // loaders), and 2 would be below them: raised to 4, which has run, so it ends.
        let spec = closed_spec(16, Growth::Factor(2.0), 20, 2);
        let mut steps: Vec<CapacityStep> = Vec::new();
        let mut seen = Vec::new();
        while let Some(Level::Concurrency(c)) = next_level(&spec, &steps, 4) {
            seen.push(c);
            steps.push(CapacityStep {
                index: steps.len() + 1,
                target_rate_per_s: 0.0,
                concurrency: Some(c),
                summary: summary_at_2000(),
                checks: Vec::new(),
                passed: false,
                ..search_step(0.0, false)
            });
        }
        assert_eq!(seen, [16, 8, 4]);
        // From 6: halving gives 3, raised to the 4 loaders' one each.
        let six = closed_spec(6, Growth::Factor(2.0), 20, 2);
        steps.truncate(0);
        steps.push(CapacityStep {
            concurrency: Some(6),
            ..closed_step_like(&summary_at_2000())
        });
        assert_eq!(next_level(&six, &steps, 4), Some(Level::Concurrency(4)));
        assert_eq!(next_level(&six, &steps, 1), Some(Level::Concurrency(3)));
        assert_eq!(step_run_id("run-1", 3), "run-1-s03");
    }

    fn closed_step_like(summary: &PhaseSummary) -> CapacityStep {
        CapacityStep {
            index: 1,
            target_rate_per_s: 0.0,
            concurrency: Some(1),
            summary: summary.clone(),
            checks: Vec::new(),
            passed: false,
            ..search_step(0.0, false)
        }
    }
    #[test]
    fn node_cpu_comes_from_node_exporters_when_no_process_is_sampled() {
        use crate::result::series::{HostSample, NodeHost};
        let mut r =
            crate::result::fixture::run_with_metrics("remote", &RunShape::default(), 2, &[]);
        let m = r.metrics.as_mut().unwrap();
        // A remote cluster: no /proc, no JVM CPU; node2's host at 60 % busy, node1's at 30 %.
        // Its series names the nodes by endpoint; the exporters by address.
        m.nodes = vec!["10.0.0.1:7300".into(), "10.0.0.2:7300".into()];
        m.node_hosts = ["10.0.0.1", "10.0.0.2"]
            .iter()
            .map(|n| NodeHost {
                node: n.to_string(),
                exporter: format!("{n}:9100"),
                devices: vec![],
                job: None,
            })
            .collect();
        for s in &mut m.samples {
            s.host = None;
            for n in &mut s.nodes {
                (n.cpu_cores, n.cpu_share) = (None, None);
            }
            let busy = |b: f64| {
                Some(HostSample {
                    cpu_user: b * 0.75,
                    cpu_system: b * 0.25,
                    ..HostSample::default()
                })
            };
            s.node_hosts = vec![busy(0.3), busy(0.6)];
        }
        let got = max_node_cpu(&r, &[]).expect("measured from the exporters");
        assert!((got - 0.6).abs() < 1e-9, "{got}");
        // Exporters alone (no metrics endpoint, so no nodes in the series) still count.
        let m = r.metrics.as_mut().unwrap();
        m.nodes.clear();
        for s in &mut m.samples {
            s.nodes.clear();
        }
        assert!((max_node_cpu(&r, &[]).unwrap() - 0.6).abs() < 1e-9);
        // Without exporters the criterion stays unmeasured.
        let m = r.metrics.as_mut().unwrap();
        m.node_hosts.clear();
        for s in &mut m.samples {
            s.node_hosts.clear();
        }
        assert_eq!(max_node_cpu(&r, &[]), None);
    }
}
