//! Runs a scenario: for each environment its local cluster (or hosts) and each typed step,
//! then one report of all results; a local cluster is stopped when its environment is done
//! (the last one is left running with `keep`). `cqlbench scenario` and `cqlbench quickstart`
//! both come here.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, bail};

use super::file::{Matrix, Plan, PlannedStep, make_step, resolve};
use super::steps::{ReportStep, Step};
use crate::cluster::{Cluster, ClusterError, StartOptions, StopOptions};

/// Where a scenario runs.
#[derive(Debug, Clone)]
pub struct Env {
    /// The directory holding local clusters.
    pub clusters: PathBuf,
    /// Leave the last environment's local cluster running at the end.
    pub keep: bool,
    /// Skip steps whose result is already complete in the scenario's directory (and continue
    /// an interrupted capacity search).
    pub resume: bool,
}

/// Checks one environment's plan before anything starts: the cluster section as `cluster
/// create` would (spec, and heap and CPUs per node on this host) and every step's values.
pub fn check(plan: &Plan) -> anyhow::Result<()> {
    if let Some(c) = &plan.cluster {
        c.options
            .validate(&c.name)
            .with_context(|| format!("cluster {}", c.name))?;
    }
    for (i, s) in plan.steps.iter().enumerate() {
        s.step
            .validate()
            .with_context(|| format!("step {} ({})", i + 1, s.name))?;
    }
    Ok(())
}

/// The tools the steps run besides Cassandra (fio for a probe) are there: checked by a real
/// run before any cluster starts (a dry run does not need them).
pub fn check_tools(m: &Matrix) -> anyhow::Result<()> {
    let mut checked = std::collections::BTreeSet::new();
    for p in &m.envs {
        for (i, s) in p.steps.iter().enumerate() {
            if let Step::Probe(probe) = &s.step
                && checked.insert(probe.fio.clone())
            {
                crate::probe::fio::version(&probe.fio)
                    .with_context(|| format!("step {} ({})", i + 1, s.name))?;
            }
        }
    }
    Ok(())
}

/// [`check`] for every environment.
pub fn check_all(m: &Matrix) -> anyhow::Result<()> {
    for p in &m.envs {
        check(p).with_context(|| match &p.steps[0].placement.env {
            Some(env) if m.envs.len() > 1 => format!("environment {env}"),
            _ => "the scenario".into(),
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
                6
            } else {
                p.profiles.len()
            } as f64;
            let per = p.runtime_s.unwrap_or(if p.quick { 4 } else { 60 }) as f64 + 1.0;
            let cpu = if p.skip_cpu { 0.0 } else { 2.0 * per };
            Some(profiles * per + cpu + 3.0)
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
        // Each size: its cluster's start (as for an environment's), then the search.
        Step::Scaling(s) => Some(
            s.nodes
                .iter()
                .map(|n| CLUSTER_START_S * *n as f64 + search_estimate_s(&s.capacity, &rampup))
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

/// Seconds to start (25) and stop (5) a local node here.
const CLUSTER_START_S: f64 = 30.0;

/// The scenario's estimate: its steps, and starting each environment's local cluster (about
/// 25 s a node here); how many steps have no estimate.
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
                None => c.options.nodes,
            };
            total += CLUSTER_START_S * nodes as f64;
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

/// Prints the plan: one line per step, per environment.
pub fn print_matrix(m: &Matrix) {
    let steps: usize = m.envs.iter().map(|p| p.steps.len()).sum();
    println!(
        "scenario {}: {} environment(s), {steps} steps",
        m.name,
        m.envs.len()
    );
    for p in &m.envs {
        if m.envs.len() > 1 {
            println!(
                "environment {}:",
                p.steps[0].placement.env.as_deref().unwrap_or("-")
            );
        }
        print_plan(p);
    }
    let (est, unknown) = estimate_s(m);
    println!(
        "estimate: {:.1} min{}",
        est / 60.0,
        match unknown {
            0 => String::new(),
            n => format!(" plus {n} step(s) that end at a data size (fill)"),
        }
    );
}

/// Prints one environment's steps.
pub fn print_plan(p: &Plan) {
    for (i, s) in p.steps.iter().enumerate() {
        let options = serde_json::to_string(&s.options).unwrap_or_default();
        println!("  {}. {}: {} {options}", i + 1, s.name, s.command);
        println!("     → {}", s.step.describe());
    }
}

/// Opens cluster `name` in `clusters`, or creates it with `options`; says which.
pub fn open_or_create(
    clusters: &Path,
    name: &str,
    options: &super::steps::ClusterOptions,
) -> anyhow::Result<Cluster> {
    if let Ok(existing) = Cluster::open(clusters, name) {
        println!(
            "reusing cluster {name} in {} (its options stay as created)",
            existing.dir.display()
        );
        return Ok(existing);
    }
    let created = Cluster::create(clusters, options.spec_in(name, clusters)?)?;
    println!(
        "created {name}: {} nodes, Cassandra {}, heap {}",
        created.nodes().len(),
        created.state.dist.version,
        created.state.plan.heap_reason
    );
    Ok(created)
}

/// Starts nodes and says how long they took; a start failure prints the node's log tail.
pub fn start(c: &Cluster, opts: StartOptions) -> anyhow::Result<()> {
    let r = c.start(&opts).map_err(with_tail)?;
    println!(
        "{}: {} up (UN) in {:.1}s",
        c.name(),
        r.started.join(", "),
        r.elapsed.as_secs_f64()
    );
    Ok(())
}

/// Turns a cluster error into an error for people, printing a failing node's log tail first.
pub fn with_tail(e: ClusterError) -> anyhow::Error {
    if let Some(tail) = e.log_tail() {
        eprintln!("--- last lines of the node's log ---\n{tail}\n---");
    }
    e.into()
}

/// Runs a scenario: checks it all, then each environment (its cluster created or reused,
/// started, its steps run, stopped unless it is the last and `env.keep`), then one report of
/// every result; prints the actual time beside the estimate and records both.
pub fn run(m: &Matrix, env: &Env) -> anyhow::Result<()> {
    check_all(m)?;
    check_tools(m)?;
    let stop = crate::interrupt::flag();
    let started = Instant::now();
    let (estimate, _) = match env.resume {
        true => estimate_of(m, &complete),
        false => estimate_s(m),
    };
    if env.resume {
        println!("estimate of what is left: {:.1} min", estimate / 60.0);
    }
    std::fs::create_dir_all(&m.dir).with_context(|| format!("creating {}", m.dir.display()))?;
    for (i, p) in m.envs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted; the results so far are kept (--resume continues)");
        }
        let last = i + 1 == m.envs.len();
        if let Some(label) = p.steps[0].placement.env.as_deref()
            && m.envs.len() > 1
        {
            println!("━━ environment {label} ({}/{})", i + 1, m.envs.len());
        }
        // A scenario of scaling steps alone needs no cluster of its own (one left running is
        // stopped: the steps need the host to themselves).
        let cluster = match &p.cluster {
            Some(c) if needs_cluster(p) => {
                Some(open_or_create(&env.clusters, &c.name, &c.options)?)
            }
            Some(c) => Cluster::open(&env.clusters, &c.name).ok(),
            None => None,
        };
        let outcome = run_steps_on(p, env, &stop, cluster.as_ref());
        if let Some(c) = &cluster
            && !(last && env.keep)
        {
            println!("━━ stopping cluster {}", c.name());
            if let Err(e) = c.stop(&StopOptions::default()) {
                eprintln!("warning: stopping {}: {e}", c.name());
            }
        }
        outcome?;
    }
    if m.report {
        let outs: Vec<PathBuf> = m
            .envs
            .iter()
            .flat_map(|p| p.steps.iter().map(|s| s.out.clone()))
            .collect();
        report(&m.dir, outs, &m.deployments)?;
    }
    let took = started.elapsed().as_secs_f64();
    println!(
        "took {:.1} min (estimated {:.1} min); results: {}",
        took / 60.0,
        estimate / 60.0,
        m.dir.display()
    );
    let timing =
        serde_json::json!({"estimate_s": estimate, "actual_s": took, "resumed": env.resume});
    crate::fsutil::write_json(&m.dir.join("timing.json"), &timing)
        .with_context(|| format!("writing {}", m.dir.display()))?;
    Ok(())
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
fn step_to_run(s: &PlannedStep, env: &Env) -> anyhow::Result<Step> {
    let mut step = if s.deferred {
        // Checked with a stand-in when planned: check the real values.
        let step = make_step(
            &s.command,
            &s.options,
            &s.refs,
            &s.placement,
            &s.out,
            &resolve,
        )?;
        step.validate()?;
        step
    } else {
        s.step.clone()
    };
    if env.resume && s.out.exists() {
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
pub fn run_steps(plan: &Plan, env: &Env, stop: &AtomicBool) -> anyhow::Result<()> {
    run_steps_on(plan, env, stop, None)
}

/// Runs one environment's steps with its local `cluster` running for each step, except for
/// a scaling step, which has the host to itself: the cluster is stopped for it.
fn run_steps_on(
    plan: &Plan,
    env: &Env,
    stop: &AtomicBool,
    cluster: Option<&Cluster>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(&plan.dir)
        .with_context(|| format!("creating {}", plan.dir.display()))?;
    let n = plan.steps.len();
    for (i, s) in plan.steps.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            bail!(
                "interrupted before step {} ({}); earlier results are kept",
                i + 1,
                s.name
            );
        }
        if env.resume && complete(s) {
            println!("━━ step {}/{n} {}: done before, kept", i + 1, s.name);
            continue;
        }
        let step = step_to_run(s, env).with_context(|| format!("step {} ({})", i + 1, s.name))?;
        if let Some(c) = cluster {
            let running = c.running_addresses().len();
            match &step {
                Step::Scaling(_) if running > 0 => {
                    println!("━━ stopping cluster {} for the scaling step", c.name());
                    c.stop(&StopOptions::default())
                        .map_err(with_tail)
                        .with_context(|| format!("stopping cluster {}", c.name()))?;
                }
                Step::Scaling(_) => {}
                _ if running < c.nodes().len() => start(c, StartOptions::default())
                    .with_context(|| format!("starting cluster {}", c.name()))?,
                _ => {}
            }
        }
        println!("━━ step {}/{n} {}: {}", i + 1, s.name, step.describe());
        step.run(&env.clusters)
            .with_context(|| format!("step {} ({})", i + 1, s.name))?;
        if stop.load(Ordering::Relaxed) {
            bail!(
                "interrupted in step {} ({}); its result and earlier ones are kept",
                i + 1,
                s.name
            );
        }
    }
    Ok(())
}

/// Writes `report.txt` and `report.html` of the results that exist among `outs`, and prints
/// the text.
pub fn report(
    dir: &Path,
    outs: Vec<PathBuf>,
    deployments: &[crate::report::cost::Deployment],
) -> anyhow::Result<()> {
    let results: Vec<PathBuf> = outs.into_iter().filter(|p| p.exists()).collect();
    if results.is_empty() {
        return Ok(());
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
    };
    println!("━━ report: {} and {}", txt.display(), html.display());
    super::steps::report::run(&r).context("writing the report")?;
    if let Ok(t) = std::fs::read_to_string(&txt) {
        print!("{t}");
    }
    Ok(())
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
