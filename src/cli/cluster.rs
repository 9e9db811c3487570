//! `cqlbench cluster …`: arguments → [`ClusterSpec`] and calls into [`crate::cluster`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use super::clusters_dir as clusters_root;
use crate::cluster::{Cluster, ClusterError, StartOptions, StopOptions};
use crate::console;
pub use crate::scenario::steps::cluster::ClusterOptions;
use crate::spec::parse_duration;

/// Where clusters live; every cluster subcommand takes it.
#[derive(Debug, Clone, Args)]
pub struct DirArg {
    /// Directory holding the clusters [default: $CQLBENCH_CLUSTERS_DIR, else <data dir>/cqlbench/clusters]
    #[arg(long, global = true)]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Create a cluster directory (and fetch Cassandra if needed); `--start` also starts it.
    Create(Box<CreateArgs>),
    /// Start every stopped node (or `--node N`) and wait until all are ready.
    Start(StartArgs),
    /// Stop every node (or `--node N`); no JVM is left behind.
    Stop(StopArgs),
    /// Per node: address, DC/rack, state (UN/DN), PID, heap, load, CPUs.
    Status(NameArg),
    /// Stop the cluster and remove its directory.
    Destroy(NameArg),
    /// List the clusters.
    List(DirArg),
    /// Print the end of a node's system.log.
    Logs(LogsArgs),
    /// Run nodetool against a node: `cqlbench cluster nodetool NAME NODE -- ARGS`.
    Nodetool(NodetoolArgs),
    /// Freeze a node (SIGSTOP), e.g. to test how clients ride out a stalled replica.
    Pause(NodeArg),
    /// Resume a paused node (SIGCONT).
    Resume(NodeArg),
    /// Print the cluster's spec and topology plan as JSON.
    Show(NameArg),
}

#[derive(Debug, Args)]
pub struct NameArg {
    pub name: String,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct NodeArg {
    pub name: String,
    /// Node number (1-based).
    pub node: usize,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    pub name: String,
    #[command(flatten)]
    pub options: ClusterOptions,
    /// Start the cluster once created.
    #[arg(long)]
    pub start: bool,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct StartArgs {
    pub name: String,
    /// Only these nodes (repeatable).
    #[arg(long = "node")]
    pub nodes: Vec<usize>,
    /// Give up after this long, e.g. 180s or 3m.
    #[arg(long, default_value = "180s", value_parser = parse_duration)]
    pub timeout: Duration,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct StopArgs {
    pub name: String,
    /// Only these nodes (repeatable).
    #[arg(long = "node")]
    pub nodes: Vec<usize>,
    /// SIGKILL instead of a clean shutdown.
    #[arg(long)]
    pub kill: bool,
    /// SIGKILL nodes still running after this long.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub timeout: Duration,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    pub name: String,
    /// Node number (1-based).
    #[arg(default_value_t = 1)]
    pub node: usize,
    /// How many lines.
    #[arg(long, short = 'n', default_value_t = 50)]
    pub lines: usize,
    /// Only ERROR lines (of the whole log).
    #[arg(long)]
    pub errors: bool,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct NodetoolArgs {
    pub name: String,
    /// Node number (1-based).
    pub node: usize,
    /// Arguments for nodetool (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
    #[command(flatten)]
    pub dir: DirArg,
}

/// Runs one cluster subcommand.
pub fn run(cmd: ClusterCommand) -> anyhow::Result<()> {
    match cmd {
        ClusterCommand::Create(a) => create(*a),
        ClusterCommand::Start(a) => {
            let c = open(&a.dir, &a.name)?;
            start(
                &c,
                StartOptions {
                    nodes: a.nodes,
                    timeout: a.timeout,
                },
            )
        }
        ClusterCommand::Stop(a) => {
            let c = open(&a.dir, &a.name)?;
            let t0 = std::time::Instant::now();
            let stopped = c.stop(&StopOptions {
                nodes: a.nodes,
                kill: a.kill,
                timeout: a.timeout,
            })?;
            let secs = t0.elapsed().as_secs_f64();
            println!("{}", console::stopped_line(c.name(), &stopped, secs));
            Ok(())
        }
        ClusterCommand::Status(a) => {
            let c = open(&a.dir, &a.name)?;
            print_status(&c)
        }
        ClusterCommand::Destroy(a) => {
            let c = open(&a.dir, &a.name)?;
            let dir = c.dir.clone();
            c.destroy()?;
            println!("destroyed {} ({} removed)", a.name, dir.display());
            Ok(())
        }
        ClusterCommand::List(d) => {
            let root = clusters_root(d.dir.as_deref());
            for name in crate::cluster::state::list(&root) {
                let c = Cluster::open(&root, &name)?;
                let up = c.running_addresses().len();
                println!("{}", console::list_line(&name, c.nodes().len(), up, &c.dir));
            }
            Ok(())
        }
        ClusterCommand::Logs(a) => {
            let c = open(&a.dir, &a.name)?;
            let n = c.node(a.node)?;
            let log = c.node_dirs(n).system_log();
            if a.errors {
                for e in crate::cluster::readiness::read_from(&log, 0).errors {
                    println!("{e}");
                }
            } else {
                println!("{}", crate::cluster::readiness::tail(&log, a.lines));
            }
            Ok(())
        }
        ClusterCommand::Nodetool(a) => {
            let c = open(&a.dir, &a.name)?;
            let status = c
                .nodetool_command(a.node, &a.args)?
                .status()
                .context("running nodetool")?;
            if !status.success() {
                bail!(
                    "nodetool exited with {}",
                    status
                        .code()
                        .map(|c| c.to_string())
                        .unwrap_or("a signal".into())
                );
            }
            Ok(())
        }
        ClusterCommand::Pause(a) => {
            let c = open(&a.dir, &a.name)?;
            c.pause(a.node)?;
            println!("{}: node{} paused", c.name(), a.node);
            Ok(())
        }
        ClusterCommand::Resume(a) => {
            let c = open(&a.dir, &a.name)?;
            c.resume(a.node)?;
            println!("{}: node{} resumed", c.name(), a.node);
            Ok(())
        }
        ClusterCommand::Show(a) => {
            let c = open(&a.dir, &a.name)?;
            println!("{}", serde_json::to_string_pretty(&c.state)?);
            Ok(())
        }
    }
}

/// Opens a cluster; a lab's is managed from inside its gateway namespace, which this
/// process enters.
fn open(dir: &DirArg, name: &str) -> anyhow::Result<Cluster> {
    let c = Cluster::open(&clusters_root(dir.dir.as_deref()), name)?;
    enter_admin(&c)?;
    Ok(c)
}

fn enter_admin(c: &Cluster) -> anyhow::Result<()> {
    match c.admin_netns() {
        // A lab half gone (its namespaces deleted by hand): what needs no network still works.
        Some(ns) if crate::netns::exists(&ns) => super::enter_netns(&ns),
        _ => Ok(()),
    }
}

fn create(a: CreateArgs) -> anyhow::Result<()> {
    let root = clusters_root(a.dir.dir.as_deref());
    let spec = a.options.spec_in(&a.name, &root)?;
    let c = Cluster::create(&root, spec, &super::toolchain())?;
    print!("{}", console::created_text(&c));
    if a.start {
        enter_admin(&c)?;
        start(&c, StartOptions::default())?;
    }
    Ok(())
}

/// Starts nodes and says how long they took; a start failure prints the node's log tail.
pub fn start(c: &Cluster, opts: StartOptions) -> anyhow::Result<()> {
    let r = c.start(&opts).map_err(with_tail)?;
    println!("{}", console::started_line(c.name(), &r));
    Ok(())
}

/// A cluster error, after the failing node's log tail was printed.
fn with_tail(e: ClusterError) -> anyhow::Error {
    if let Some(tail) = e.log_tail() {
        eprintln!("{}", console::log_tail_block(tail));
    }
    e.into()
}

/// Prints the status table.
pub fn print_status(c: &Cluster) -> anyhow::Result<()> {
    let rows = c.status()?;
    print!("{}", crate::console::cluster_status(c, &rows));
    if let Some(lab) = c.lab() {
        print!("{}", crate::console::lab_summary(&lab));
    }
    Ok(())
}
