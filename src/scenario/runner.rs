//! Runs a scenario: its local cluster, each typed step, a report of all results; the cluster is
//! stopped at the end unless kept. `cqlbench scenario` and `cqlbench quickstart` both come here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};

use super::file::Plan;
use super::steps::ReportStep;
use crate::cluster::{Cluster, StartOptions, StopOptions};

/// Where a scenario runs.
#[derive(Debug, Clone)]
pub struct Env {
    /// The directory holding local clusters.
    pub clusters: PathBuf,
    /// Leave the scenario's local cluster running at the end.
    pub keep: bool,
}

/// Checks the whole scenario before anything starts: the cluster section as `cluster create`
/// would (spec, and heap and CPUs per node on this host) and every step's values.
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

/// Prints the plan: one line per step.
pub fn print_plan(p: &Plan) {
    println!("scenario {}: {} steps", p.name, p.steps.len());
    for (i, s) in p.steps.iter().enumerate() {
        let options = serde_json::to_string(&s.options).unwrap_or_default();
        println!("  {}. {}: {} {options}", i + 1, s.name, s.step.command());
        println!("     → {}", s.step.describe());
    }
}

/// Opens cluster `name` in `clusters`, or creates it with `options`; says which.
pub fn open_or_create(
    clusters: &std::path::Path,
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
    let created = Cluster::create(clusters, options.to_spec(name)?)?;
    println!(
        "created {name}: {} nodes, Cassandra {}, heap {}",
        created.nodes().len(),
        created.state.dist.version,
        created.state.plan.heap_reason
    );
    Ok(created)
}

/// Runs a checked plan: creates (or reuses) and starts its cluster, runs the steps and the
/// report, and stops the cluster unless `env.keep`.
pub fn run(plan: &Plan, env: &Env) -> anyhow::Result<()> {
    check(plan)?;
    let stop = crate::interrupt::flag();
    let cluster = match &plan.cluster {
        Some(c) => {
            let cluster = open_or_create(&env.clusters, &c.name, &c.options)?;
            if cluster.running_addresses().len() < cluster.nodes().len() {
                let started = cluster.start(&StartOptions::default()).map_err(|e| {
                    if let Some(tail) = e.log_tail() {
                        eprintln!("--- last lines of the node's log ---\n{tail}\n---");
                    }
                    anyhow::Error::new(e).context("starting the scenario's cluster")
                })?;
                println!(
                    "{}: {} up (UN) in {:.1}s",
                    cluster.name(),
                    started.started.join(", "),
                    started.elapsed.as_secs_f64()
                );
            }
            Some(cluster)
        }
        None => None,
    };
    let outcome = run_steps(plan, env, &stop);
    if let Some(c) = &cluster
        && !env.keep
    {
        println!("━━ stopping cluster {}", c.name());
        if let Err(e) = c.stop(&StopOptions::default()) {
            eprintln!("warning: stopping {}: {e}", c.name());
        }
    }
    outcome?;
    println!("results: {}", plan.dir.display());
    Ok(())
}

/// Runs the steps (checked by [`check`] first), then the report of their results.
pub fn run_steps(plan: &Plan, env: &Env, stop: &AtomicBool) -> anyhow::Result<()> {
    check(plan)?;
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
        println!("━━ step {}/{n} {}: {}", i + 1, s.name, s.step.describe());
        s.step
            .run(&env.clusters)
            .with_context(|| format!("step {} ({})", i + 1, s.name))?;
        if stop.load(Ordering::Relaxed) {
            bail!(
                "interrupted in step {} ({}); its result and earlier ones are kept",
                i + 1,
                s.name
            );
        }
    }
    if plan.report {
        let results: Vec<PathBuf> = plan
            .steps
            .iter()
            .filter(|s| s.out.exists())
            .map(|s| s.out.clone())
            .collect();
        let (txt, html) = (plan.dir.join("report.txt"), plan.dir.join("report.html"));
        let report = ReportStep {
            results,
            markdown: false,
            csv: false,
            out: Some(txt.clone()),
            html: Some(html.clone()),
            deployment: plan.deployments.clone(),
            catalog: None,
        };
        println!("━━ report: {} and {}", txt.display(), html.display());
        super::steps::report::run(&report).context("writing the report")?;
        if let Ok(t) = std::fs::read_to_string(&txt) {
            print!("{t}");
        }
    }
    Ok(())
}
