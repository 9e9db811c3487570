//! `cqlbench scenario FILE`: runs a methodology described in YAML (see
//! [`crate::scenario::file`]): the local cluster, each step as a cqlbench command, a report of
//! all results; the cluster is stopped at the end unless `--keep`.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use anyhow::{Context, bail};
use clap::Parser;

use super::Cli;
use crate::scenario::file::{self, Plan};

#[derive(Debug, clap::Args)]
pub struct ScenarioArgs {
    /// The scenario file (YAML); `scenarios/` holds one per reference article.
    pub file: PathBuf,
    /// Directory for the results [default: <cqlbench home>/scenarios/<name>-<time>].
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Leave the scenario's local cluster running at the end.
    #[arg(long)]
    pub keep: bool,
    /// Print the command lines and stop.
    #[arg(long)]
    pub dry_run: bool,
}

/// Parses one cqlbench command line; the error is clap's first line.
fn parse_line(args: &[String]) -> anyhow::Result<Cli> {
    Cli::try_parse_from(std::iter::once("cqlbench".to_string()).chain(args.iter().cloned()))
        .map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            anyhow::anyhow!("{}", first.trim_start_matches("error: "))
        })
}

/// Parses and runs one cqlbench command line.
fn run_line(args: &[String]) -> anyhow::Result<()> {
    super::run(parse_line(args)?)
}

pub fn run(a: ScenarioArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&a.file)
        .with_context(|| format!("reading {}", a.file.display()))?;
    let f = file::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    let dir = a.dir.clone().unwrap_or_else(|| {
        crate::fsutil::cqlbench_home()
            .join("scenarios")
            .join(format!("{}-{}", f.name, crate::host::unix_now_s()))
    });
    let plan = file::plan(&f, &dir).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    print_plan(&plan);
    check(&plan).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    if a.dry_run {
        return Ok(());
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("scenario.yaml"), &text)
        .with_context(|| format!("writing {}", dir.display()))?;
    let stop = crate::host::stop_on_signals();
    if let Some(c) = &plan.cluster {
        let root = crate::cluster::clusters_root(None);
        let line: Vec<String> = if crate::cluster::Cluster::open(&root, &c.name).is_ok() {
            vec!["cluster".into(), "start".into(), c.name.clone()]
        } else {
            ["cluster", "create", &c.name]
                .iter()
                .map(|s| s.to_string())
                .chain(c.create_args.iter().cloned())
                .chain(["--start".to_string()])
                .collect()
        };
        println!("━━ cluster: cqlbench {}", line.join(" "));
        run_line(&line).context("starting the scenario's cluster")?;
    }
    let outcome = run_steps(&plan, &stop);
    if let Some(c) = &plan.cluster
        && !a.keep
    {
        println!("━━ stopping cluster {}", c.name);
        if let Err(e) = run_line(&["cluster".into(), "stop".into(), c.name.clone()]) {
            eprintln!("warning: stopping {}: {e}", c.name);
        }
    }
    outcome?;
    println!("results: {}", dir.display());
    Ok(())
}

/// Checks every step's arguments, before anything starts.
pub fn check(plan: &Plan) -> anyhow::Result<()> {
    for (i, s) in plan.steps.iter().enumerate() {
        parse_line(&s.line()).map_err(|e| anyhow::anyhow!("step {} ({}): {e}", i + 1, s.name))?;
    }
    Ok(())
}

pub fn print_plan(p: &Plan) {
    println!("scenario {}: {} steps", p.name, p.steps.len());
    for (i, s) in p.steps.iter().enumerate() {
        println!(
            "  {}. {}: cqlbench {} {}",
            i + 1,
            s.name,
            s.command,
            s.args.join(" ")
        );
    }
}

/// Runs the steps (checked by [`check`] first), then the report of their results.
pub fn run_steps(plan: &Plan, stop: &std::sync::atomic::AtomicBool) -> anyhow::Result<()> {
    let n = plan.steps.len();
    for (i, s) in plan.steps.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            bail!(
                "interrupted before step {} ({}); earlier results are kept",
                i + 1,
                s.name
            );
        }
        println!(
            "━━ step {}/{n} {}: cqlbench {} {}",
            i + 1,
            s.name,
            s.command,
            s.args.join(" ")
        );
        run_line(&s.line()).map_err(|e| anyhow::anyhow!("step {} ({}): {e}", i + 1, s.name))?;
        if stop.load(Ordering::Relaxed) {
            bail!(
                "interrupted in step {} ({}); its result and earlier ones are kept",
                i + 1,
                s.name
            );
        }
    }
    if plan.report {
        let results: Vec<String> = plan
            .steps
            .iter()
            .filter(|s| s.out.exists())
            .map(|s| s.out.to_string_lossy().to_string())
            .collect();
        let dir = plan.steps[0]
            .out
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        let mut line = vec!["report".to_string()];
        line.extend(results);
        let (txt, html) = (dir.join("report.txt"), dir.join("report.html"));
        for (flag, path) in [("--out", &txt), ("--html", &html)] {
            line.extend([flag.to_string(), path.to_string_lossy().to_string()]);
        }
        println!("━━ report: {} and {}", txt.display(), html.display());
        run_line(&line).context("writing the report")?;
        if let Ok(t) = std::fs::read_to_string(&txt) {
            print!("{t}");
        }
    }
    Ok(())
}
