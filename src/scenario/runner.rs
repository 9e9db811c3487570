//! Runs a scenario: for each environment its local cluster (or hosts) and each typed step,
//! then one report of all results; a local cluster is stopped when its environment is done
//! (the last one is left running with `keep`). `cqlbench scenario` and `cqlbench quickstart`
//! both come here. Nothing is printed: every step, cluster and report is an event sent to
//! the context, and the outcome of every step is returned.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::error::Doing;
use super::event::{ClusterEvent, Event, Warning};
use super::file::{Matrix, Plan, PlannedStep};
use super::refs::{self, Ran};
use super::steps::{ClusterOptions, ReportStep, Step};
use super::{Context, Outcome, ScenarioError, StepOutcome};
use crate::cluster::lease::{Lease, LeaseEvent};
use crate::cluster::{Cluster, StopOptions};

/// How a scenario runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Leave the last environment's local cluster running at the end.
    pub keep: bool,
    /// Skip steps whose result is already complete in the scenario's directory (and continue
    /// an interrupted capacity search).
    pub resume: bool,
}

/// What a scenario did.
#[derive(Debug, Clone)]
pub struct ScenarioOutcome {
    pub dir: PathBuf,
    /// Every step of every environment, in the order they ran (or were kept).
    pub steps: Vec<StepOutcome>,
    /// The text report, when one was written.
    pub report: Option<PathBuf>,
    pub took_s: f64,
    pub estimate_s: f64,
}

/// Checks one environment's plan before anything starts: the cluster section as `cluster
/// create` would (spec, and heap and CPUs per node on this host), every step's values, and
/// the files a load step reads to reach its cluster (TLS, credentials).
pub fn check(plan: &Plan) -> Result<(), ScenarioError> {
    if let Some(c) = &plan.cluster {
        c.options
            .validate(&c.name)
            .doing(|| format!("cluster {}", c.name))?;
    }
    for (i, s) in plan.steps.iter().enumerate() {
        s.step.validate().map_err(|e| e.in_step(i + 1, &s.name))?;
        if let Some(r) = s.step.run_spec() {
            r.check_files()
                .map_err(|e| ScenarioError::from(e).in_step(i + 1, &s.name))?;
        }
    }
    Ok(())
}

/// The tools the steps run besides Cassandra (fio for a probe) are there: checked by a real
/// run before any cluster starts (a dry run does not need them).
pub fn check_tools(m: &Matrix, ctx: &Context) -> Result<(), ScenarioError> {
    let mut checked = std::collections::BTreeSet::new();
    for p in &m.envs {
        for (i, s) in p.steps.iter().enumerate() {
            // A probe over ssh runs the remote host's fio, checked when it starts.
            if let Step::Probe(probe) = &s.step
                && probe.ssh.is_none()
            {
                let fio = super::steps::probe::fio(probe, ctx);
                if checked.insert(fio.clone()) {
                    crate::probe::fio::version(&fio)
                        .map_err(|e| ScenarioError::from(e).in_step(i + 1, &s.name))?;
                }
            }
        }
    }
    Ok(())
}

/// [`check`] for every environment.
pub fn check_all(m: &Matrix) -> Result<(), ScenarioError> {
    for p in &m.envs {
        check(p).map_err(|e| match &p.steps[0].placement.env {
            Some(env) if m.envs.len() > 1 => ScenarioError::Environment {
                label: env.clone(),
                source: Box::new(e),
            },
            _ => e,
        })?;
    }
    Ok(())
}

/// Seconds a step should take on its own terms: the measured phase, the rampup (at about
/// 2,000 rows/s, what a small local node writes at 128 in flight), a probe's runs; `None`
/// when it ends at a data size (a fill), which no duration bounds.
pub fn step_estimate_s(step: &Step) -> Option<f64> {
    let rampup = |r: &super::steps::RunStep| {
        if r.skip_rampup {
            0.0
        } else {
            r.rows as f64 / 2_000.0
        }
    };
    match step {
        Step::Probe(p) => {
            let profiles = if p.profiles.is_empty() {
                crate::spec::probe::Profile::ALL.len()
            } else {
                p.profiles.len()
            } as f64;
            let t = p.timing();
            // Each fio run: its ramp and runtime, and about half a second to lay out and start.
            let per = (t.runtime_s + t.ramp_s) as f64 + 0.5;
            let cpu = if p.skip_cpu {
                0.0
            } else {
                2.0 * t.cpu_time_s as f64
            };
            Some(profiles * per + cpu + 1.0)
        }
        Step::Run(r) | Step::Throughput(r) | Step::Latency(r) => {
            let main = match (r.duration, r.ops) {
                (Some(d), _) => d.as_secs_f64(),
                // An operation count: at the rate, else at the rampup's pace.
                (None, Some(n)) => match r.rate {
                    Some(crate::spec::load::RateArg::PerSecond(rate)) => n as f64 / rate,
                    _ => n as f64 / 2_000.0,
                },
                (None, None) => 60.0,
            };
            Some(rampup(r) + main + 2.0)
        }
        Step::Capacity(c) => Some(search_estimate_s(c, &rampup)),
        Step::Fill(_) => None,
        Step::Smoke(_) => Some(5.0),
        // Each size: its cluster's start (as for an environment's), then the search.
        Step::Scaling(s) => Some(
            s.nodes
                .iter()
                .map(|n| cluster_start_s(*n) + search_estimate_s(&s.capacity, &rampup))
                .sum(),
        ),
    }
}

/// Half a capacity search's steps at most is the usual case; each step, then the wait after it.
fn search_estimate_s(
    c: &super::steps::CapacityStep,
    rampup: &dyn Fn(&super::steps::RunStep) -> f64,
) -> f64 {
    let per = c.search.step.as_secs_f64() + c.search.pending_after.as_secs_f64();
    rampup(&c.run) + per * (c.search.max_steps as f64 / 2.0).ceil()
}

/// Seconds to start and stop a local cluster of `nodes` here: its nodes start side by side,
/// each adding a few seconds on a shared host (one node of 1 GB heap: 11-13 s up, 6-11 s to
/// stop; three of 256 MB on two cores: 15.6-23.2 s up, about 16 s to stop).
fn cluster_start_s(nodes: usize) -> f64 {
    15.0 + 7.0 * nodes as f64
}

/// The scenario's estimate: its steps, and starting and stopping each environment's local
/// cluster ([`cluster_start_s`]); how many steps have no estimate.
pub fn estimate_s(m: &Matrix) -> (f64, usize) {
    estimate_of(m, &|_| false)
}

/// [`estimate_s`] of what is left: steps `done` says are done do not count.
fn estimate_of(m: &Matrix, done: &dyn Fn(&PlannedStep) -> bool) -> (f64, usize) {
    let mut total = 0.0;
    let mut unknown = 0;
    for p in &m.envs {
        if let Some(c) = &p.cluster
            && needs_cluster(p)
        {
            let nodes: usize = match &c.options.dcs {
                Some(d) => d.iter().map(|d| d.nodes).sum(),
                None => c.options.node_count(),
            };
            total += cluster_start_s(nodes);
        }
        for s in p.steps.iter().filter(|s| !done(s)) {
            match step_estimate_s(&s.step) {
                Some(t) => total += t,
                None => unknown += 1,
            }
        }
    }
    (total, unknown)
}

/// Opens cluster `name` in the context's clusters directory, or creates it with `options`,
/// and starts the nodes that are not running; the context hears which, and a failing node's
/// log tail.
pub fn lease(ctx: &Context, name: &str, options: &ClusterOptions) -> Result<Lease, ScenarioError> {
    let on = &mut |e: LeaseEvent| lease_event(ctx, &e);
    Lease::acquire(
        &ctx.clusters,
        &ctx.toolchain,
        name,
        || options.spec_in(name, &ctx.clusters),
        true,
        on,
    )
    .map_err(|e| with_tail(ctx, e))
    .doing(|| format!("cluster {name}"))
}

fn lease_event(ctx: &Context, e: &LeaseEvent) {
    ctx.emit(Event::Cluster(match e {
        LeaseEvent::Reused { cluster } => ClusterEvent::Reused {
            name: cluster.name(),
            dir: &cluster.dir,
        },
        LeaseEvent::Created { cluster } => ClusterEvent::Created {
            name: cluster.name(),
            nodes: cluster.nodes().len(),
            software: cluster.state.dist.describe(),
            heap: &cluster.state.plan.heap_reason,
        },
        LeaseEvent::Started {
            cluster,
            nodes,
            secs,
        } => ClusterEvent::Started {
            name: cluster.name(),
            nodes,
            secs: *secs,
        },
    }));
}

/// A cluster error, after the context heard the failing node's log tail.
fn with_tail(ctx: &Context, e: ScenarioError) -> ScenarioError {
    if let ScenarioError::Cluster(c) = &e
        && let Some(tail) = c.log_tail()
    {
        ctx.emit(Event::Cluster(ClusterEvent::LogTail { tail }));
    }
    e
}

/// Stops the leased cluster unless `keep` (a failure is a warning); the cluster.
pub fn release(ctx: &Context, lease: Lease, keep: bool) -> Cluster {
    if !keep {
        ctx.emit(Event::Cluster(ClusterEvent::Stopping {
            name: lease.cluster.name(),
            for_scaling: false,
        }));
    }
    let cluster = lease.cluster.clone();
    if let Err(e) = lease.release(keep) {
        ctx.emit(Event::Warning(Warning::StopFailed {
            cluster: cluster.name(),
            error: e.to_string(),
        }));
    }
    cluster
}

/// Runs a scenario: checks it all, then each environment (its cluster created or reused,
/// started, its steps run, stopped unless it is the last and `opts.keep`), then one report
/// of every result; records the actual time beside the estimate.
pub fn run(m: &Matrix, ctx: &Context, opts: RunOptions) -> Result<ScenarioOutcome, ScenarioError> {
    check_all(m)?;
    check_tools(m, ctx)?;
    let started = Instant::now();
    let (estimate_s, _) = match opts.resume {
        true => estimate_of(m, &complete),
        false => estimate_s(m),
    };
    if opts.resume {
        ctx.emit(Event::Remaining { estimate_s });
    }
    std::fs::create_dir_all(&m.dir).map_err(|e| ScenarioError::io("creating", &m.dir, e))?;
    let mut steps = Vec::new();
    // Earlier steps' outcomes by name; an environment's own names (without `@ENV`) are
    // forgotten when it ends.
    let mut ran = Ran::new();
    let mut held_lease = None;
    for (i, p) in m.envs.iter().enumerate() {
        if ctx.cancel.is_cancelled() {
            return Err(ScenarioError::Interrupted {
                when: "between environments".into(),
                kept: "the results so far are kept (--resume continues)".into(),
            });
        }
        let label = p.steps[0].placement.env.as_deref();
        if let Some(label) = label
            && m.envs.len() > 1
        {
            ctx.emit(Event::Environment {
                label,
                index: i + 1,
                count: m.envs.len(),
            });
        }
        let last = i + 1 == m.envs.len();
        let keep = last && opts.keep;
        // The last environment's cluster is stopped after the report, so that the report
        // comes as soon as the last step ends (a 3-node stop takes 10-20 s).
        let (env_steps, held) =
            run_env(p, ctx, opts, keep, last && m.report, &mut ran).map_err(|e| match label {
                Some(label) if m.envs.len() > 1 => ScenarioError::Environment {
                    label: label.to_string(),
                    source: Box::new(e),
                },
                _ => e,
            })?;
        steps.extend(env_steps);
        ran.retain(|name, _| name.contains('@'));
        held_lease = held;
    }
    let report = match m.report {
        true => {
            let outs = m
                .envs
                .iter()
                .flat_map(|p| p.steps.iter().map(|s| s.out.clone()))
                .collect();
            let written = report(ctx, &m.dir, outs, &m.deployments);
            if let Some(l) = held_lease.take() {
                release(ctx, l, opts.keep);
            }
            written?
        }
        false => None,
    };
    let took_s = started.elapsed().as_secs_f64();
    ctx.emit(Event::Finished {
        took_s,
        estimate_s,
        dir: &m.dir,
    });
    let timing =
        serde_json::json!({"estimate_s": estimate_s, "actual_s": took_s, "resumed": opts.resume});
    let timing_path = m.dir.join("timing.json");
    crate::fsutil::write_json(&timing_path, &timing)
        .map_err(|e| ScenarioError::io("writing", &timing_path, e))?;
    Ok(ScenarioOutcome {
        dir: m.dir.clone(),
        steps,
        report,
        took_s,
        estimate_s,
    })
}

/// One environment: its cluster leased (a scenario of scaling steps alone needs none of its
/// own, and one left running is stopped: the steps need the host to themselves), its steps,
/// its cluster released; or, with `hold` and when the steps succeeded, handed back to be
/// released by the caller.
fn run_env(
    p: &Plan,
    ctx: &Context,
    opts: RunOptions,
    keep: bool,
    hold: bool,
    ran: &mut Ran,
) -> Result<(Vec<StepOutcome>, Option<Lease>), ScenarioError> {
    let lease = match &p.cluster {
        Some(c) if needs_cluster(p) => Some(lease(ctx, &c.name, &c.options)?),
        Some(c) => Cluster::open(&ctx.clusters, &c.name)
            .ok()
            .map(|cluster| Lease { cluster }),
        None => None,
    };
    let outcome = run_steps_on(p, ctx, opts, lease.as_ref().map(|l| &l.cluster), ran);
    match (lease, &outcome) {
        (Some(l), Ok(_)) if hold => return outcome.map(|steps| (steps, Some(l))),
        (Some(l), _) => {
            release(ctx, l, keep);
        }
        (None, _) => {}
    }
    outcome.map(|steps| (steps, None))
}

/// Whether a step's result is already complete (for `--resume`).
fn complete(s: &PlannedStep) -> bool {
    use crate::result::ResultFile;
    match crate::result::read(&s.out) {
        Ok(ResultFile::Run(r)) => run_complete(&s.command, &r),
        Ok(ResultFile::Capacity(r)) => {
            r.status == crate::result::capacity::CapacityStatus::Completed
        }
        Ok(ResultFile::Scaling(r)) => {
            r.status == crate::result::capacity::CapacityStatus::Completed
        }
        Ok(ResultFile::Probe(p)) => p.complete,
        Ok(ResultFile::Verify(_)) | Err(_) => false,
    }
}

/// Whether a run step's result stands on `--resume`. A fill a node death stopped did not
/// write what it was asked to, though its run completed: it runs again.
fn run_complete(command: &str, r: &crate::result::RunResult) -> bool {
    r.status == crate::result::RunStatus::Completed
        && !(command == "fill"
            && r.warnings
                .iter()
                .any(|w| matches!(w, crate::result::Warning::NodeDied { .. })))
}

/// The step as it runs: values of earlier results filled in, and an interrupted capacity
/// search continued when resuming.
fn step_to_run(s: &PlannedStep, ran: &Ran, opts: RunOptions) -> Result<Step, ScenarioError> {
    let mut step = s.step.clone();
    if !s.refs.is_empty() {
        // Checked with stand-ins when planned: the values of the earlier outcomes now.
        for (key, r) in &s.refs {
            step.set(key, &refs::resolve(r, ran)?)?;
        }
        step.validate()?;
    }
    if opts.resume && s.out.exists() {
        match &mut step {
            Step::Capacity(c) => c.search.resume = true,
            // Keeps the sizes searched and continues an interrupted one.
            Step::Scaling(c) => c.capacity.search.resume = true,
            _ => {}
        }
    }
    Ok(step)
}

/// Whether any step runs on the environment's own cluster (a scaling step makes its own).
fn needs_cluster(p: &Plan) -> bool {
    p.steps.iter().any(|s| !matches!(s.step, Step::Scaling(_)))
}

/// Runs one environment's steps; the caller has checked the plan ([`check`]) and started
/// what they run on.
pub fn run_steps(
    plan: &Plan,
    ctx: &Context,
    opts: RunOptions,
) -> Result<Vec<StepOutcome>, ScenarioError> {
    run_steps_on(plan, ctx, opts, None, &mut Ran::new())
}

/// Runs one environment's steps with its local `cluster` running for each step, except for
/// a scaling step, which has the host to itself: the cluster is stopped for it.
fn run_steps_on(
    plan: &Plan,
    ctx: &Context,
    opts: RunOptions,
    cluster: Option<&Cluster>,
    ran: &mut Ran,
) -> Result<Vec<StepOutcome>, ScenarioError> {
    std::fs::create_dir_all(&plan.dir).map_err(|e| ScenarioError::io("creating", &plan.dir, e))?;
    let count = plan.steps.len();
    let mut outcomes = Vec::new();
    for (i, s) in plan.steps.iter().enumerate() {
        let index = i + 1;
        if ctx.cancel.is_cancelled() {
            return Err(ScenarioError::Interrupted {
                when: format!("before step {index} ({})", s.name),
                kept: "earlier results are kept".into(),
            });
        }
        if opts.resume && complete(s) {
            ctx.emit(Event::StepKept {
                index,
                count,
                name: &s.name,
            });
            let outcome = Outcome::read(&s.out)
                .map_err(|e| ScenarioError::from(e).in_step(index, &s.name))?;
            remember(ran, s, &outcome);
            outcomes.push(StepOutcome {
                name: s.name.clone(),
                out: Some(s.out.clone()),
                outcome,
                kept: true,
            });
            continue;
        }
        let step = step_to_run(s, ran, opts).map_err(|e| e.in_step(index, &s.name))?;
        if let Some(c) = cluster {
            ready_for(&step, c, ctx).map_err(|e| e.in_step(index, &s.name))?;
        }
        let command_line = step.describe();
        ctx.emit(Event::StepStarted {
            index,
            count,
            name: &s.name,
            command_line: &command_line,
            quiet: step.run_spec().is_some_and(|r| r.quiet),
        });
        let outcome = step.run(ctx).map_err(|e| e.in_step(index, &s.name))?;
        remember(ran, s, &outcome);
        outcomes.push(StepOutcome {
            name: s.name.clone(),
            out: step.out().map(Path::to_path_buf),
            outcome,
            kept: false,
        });
        if ctx.cancel.is_cancelled() {
            return Err(ScenarioError::Interrupted {
                when: format!("in step {index} ({})", s.name),
                kept: "its result and earlier ones are kept".into(),
            });
        }
    }
    Ok(outcomes)
}

/// Makes a step's outcome known to later steps, under every name they may use for it.
fn remember(ran: &mut Ran, s: &PlannedStep, outcome: &Outcome) {
    for name in &s.known_as {
        ran.entry(name.clone())
            .or_default()
            .push((s.out.clone(), outcome.clone()));
    }
}

/// The environment's cluster as `step` needs it: stopped for a scaling step, every node up
/// for the others.
fn ready_for(step: &Step, c: &Cluster, ctx: &Context) -> Result<(), ScenarioError> {
    let running = c.running_addresses().len();
    match step {
        Step::Scaling(_) if running > 0 => {
            ctx.emit(Event::Cluster(ClusterEvent::Stopping {
                name: c.name(),
                for_scaling: true,
            }));
            c.stop(&StopOptions::default())
                .map_err(|e| with_tail(ctx, e.into()))
                .doing(|| format!("stopping cluster {}", c.name()))?;
        }
        Step::Scaling(_) => {}
        _ if running < c.nodes().len() => {
            let lease = Lease { cluster: c.clone() };
            lease
                .start(&mut |e| lease_event(ctx, &e))
                .map_err(|e| with_tail(ctx, e.into()))
                .doing(|| format!("starting cluster {}", c.name()))?;
        }
        _ => {}
    }
    Ok(())
}

/// Writes `report.txt` and `report.html` of the results that exist among `outs`; the context
/// hears the text. The text report's path, when there was anything to report.
pub fn report(
    ctx: &Context,
    dir: &Path,
    outs: Vec<PathBuf>,
    deployments: &[crate::report::cost::Deployment],
) -> Result<Option<PathBuf>, ScenarioError> {
    let results: Vec<PathBuf> = outs.into_iter().filter(|p| p.exists()).collect();
    if results.is_empty() {
        return Ok(None);
    }
    let (txt, html) = (dir.join("report.txt"), dir.join("report.html"));
    let r = ReportStep {
        results,
        markdown: false,
        csv: false,
        out: Some(txt.clone()),
        html: Some(html.clone()),
        deployment: deployments.to_vec(),
        catalog: None,
        history: None,
    };
    super::steps::report::run(&r, None).doing(|| "writing the report".to_string())?;
    let text = std::fs::read_to_string(&txt).unwrap_or_default();
    ctx.emit(Event::Report {
        txt: &txt,
        html: &html,
        text: &text,
    });
    Ok(Some(txt))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture;
    use crate::result::{RunStatus, Warning};

    #[test]
    fn a_fill_a_node_death_stopped_runs_again_on_resume() {
        let mut r = fixture::run("laptop", &fixture::RunShape::default());
        r.status = RunStatus::Completed;
        assert!(run_complete("fill", &r));
        assert!(run_complete("run", &r));
        r.warnings.push(Warning::NodeDied {
            phase: "main".into(),
            node: "node2".into(),
            at_s: 12.0,
        });
        assert!(!run_complete("fill", &r));
        // A run a node died in measured what it measured: it stands.
        assert!(run_complete("run", &r));
        r.status = RunStatus::Interrupted;
        assert!(!run_complete("run", &r));
    }
}
