//! The `fill` step (`cqlbench fill WORKLOAD`): write rows in order until the nodes hold
//! `--times-ram N` × their RAM or `--bytes SIZE` each, then wait for compactions (reference
//! 001's first two steps).

use std::path::Path;
use std::time::Duration;

use anyhow::bail;
use clap::Args;
use serde::Deserialize;

use super::de;
use super::run::{RunStep, print_final};
use crate::load::Event;
use crate::result::{RunResult, Warning};
use crate::scenario::fill::Watcher;
use crate::scenario::wait_for_pending;
use crate::spec::{MiB, Ratio, Stop, parse_duration};

/// A fill step: the run (workload, target) and how full to make the nodes.
#[derive(Debug, Clone, Args)]
pub struct FillStep {
    #[command(flatten)]
    pub run: RunStep,
    #[command(flatten)]
    pub fill: FillOptions,
}

impl<'de> Deserialize<'de> for FillStep {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (fill, run) = de::split(d)?;
        Ok(FillStep { run, fill })
    }
}

fn default_compaction_timeout() -> Duration {
    Duration::from_secs(30 * 60)
}

#[derive(Debug, Clone, Args, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FillOptions {
    /// Fill until each node holds this many times its RAM (reference 001: 5).
    #[arg(long, conflicts_with = "bytes", required_unless_present = "bytes")]
    #[serde(default)]
    pub times_ram: Option<f64>,
    /// A node's RAM for --times-ram [default: local nodes share the host's RAM equally].
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub node_ram: Option<MiB>,
    /// Fill until each node holds this much data, e.g. 200M or 10G.
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub bytes: Option<MiB>,
    /// Then wait at most this long for pending compactions to reach zero.
    #[arg(long, value_parser = parse_duration, default_value = "30m")]
    #[serde(
        default = "default_compaction_timeout",
        deserialize_with = "de::duration"
    )]
    pub compaction_timeout: Duration,
}

/// Rows in the fill's key space: far more than any fill writes, so every write is a new row.
const FILL_ROWS: u64 = 1 << 40;

impl FillStep {
    /// The run the fill is: writes only, new rows, until the target (a day at most unless
    /// --duration says).
    fn fill_run(&self) -> anyhow::Result<RunStep> {
        let a = self;
        if a.run.ratio.is_some() {
            bail!("fill writes only: drop --ratio");
        }
        if !a.run.fault.is_empty() {
            bail!("--fault is for run, throughput and latency, not a fill");
        }
        if a.run.shard.is_some() || a.run.loaders.is_some() {
            bail!("--shard and --loaders are for run, throughput and latency, not a fill");
        }
        if a.run.ops.is_some() {
            bail!("fill stops at a data size: drop --ops (--duration bounds it in time)");
        }
        match (a.fill.times_ram, a.fill.bytes) {
            (Some(_), Some(_)) => bail!("give --times-ram or --bytes, not both"),
            (None, None) => bail!("give --times-ram N (× a node's RAM) or --bytes SIZE"),
            (Some(t), None) if !(t > 0.0 && t.is_finite()) => {
                bail!("--times-ram must be above zero")
            }
            (None, Some(b)) if b.0 == 0 => bail!("--bytes must be above zero"),
            _ => {}
        }
        let mut run = a.run.clone();
        run.ratio = Some("write=1".parse::<Ratio>().map_err(anyhow::Error::msg)?);
        run.skip_rampup = true;
        run.rows = FILL_ROWS;
        // The fill ends at the target; --duration (default: a day) only bounds it.
        run.duration.get_or_insert(Duration::from_secs(86_400));
        run.validate()?;
        Ok(run)
    }

    /// Checks every value that can be checked without the cluster.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.fill_run().map(|_| ())
    }
}

pub fn run(a: &FillStep, clusters: &Path) -> anyhow::Result<RunResult> {
    let mut run = a.fill_run()?;
    let target = target_bytes(a, clusters)?;
    if run.out.is_none() {
        run.out = Some(run.default_out("fill"));
    }
    let mut plan = run.to_plan(clusters)?;
    let endpoints = plan.metrics.endpoints.clone();
    if endpoints.is_empty() {
        bail!(
            "fill needs the nodes' metrics to see how much they hold: use --cluster, or --prometheus host:port,…"
        );
    }
    plan.sequential_main = true;
    plan.end_on_node_death = true;
    if let Some(dir) = plan.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mib = |b: f64| b / 1_048_576.0;
    println!(
        "filling until the nodes hold {:.0} MiB each (mean load); result: {}",
        mib(target),
        plan.out.display()
    );
    let watcher = Watcher::start(endpoints.clone(), target, move |load| {
        println!(
            "  mean node load {:.1} MiB of {:.0} MiB",
            mib(load),
            mib(target)
        );
    });
    plan.until = Some(watcher.until.clone());
    let stop = crate::interrupt::flag();
    let quiet = run.quiet;
    let result = crate::load::run(&plan, stop.clone(), &mut |e| {
        if let Event::Interval { record, .. } = e
            && !quiet
            && (record.end_s as u64).is_multiple_of(5)
        {
            println!(
                "  {:>6.0}s {:>9.0} writes/s",
                record.end_s, record.ops_per_s
            );
        }
    });
    let reached = watcher.until.load(std::sync::atomic::Ordering::Relaxed);
    let last = watcher.finish();
    let result = result?;
    print_final(&result);
    if let Some(w) = result
        .warnings
        .iter()
        .find(|w| matches!(w, Warning::NodeDied { .. }))
    {
        bail!("the fill stopped: {w} (result: {})", plan.out.display());
    }
    let written = result
        .phases
        .iter()
        .map(|p| p.summary.as_ref().map_or(0, |s| s.ok))
        .sum::<u64>();
    println!(
        "wrote {written} rows (cycles 0..{written}: later runs read them with --rows {written} --skip-rampup); mean node load {:.1} MiB",
        mib(last.unwrap_or(0.0))
    );
    if !reached {
        if let Stop::Duration { secs } = plan.main.stop
            && !stop.load(std::sync::atomic::Ordering::Relaxed)
        {
            println!("the target was not reached within {secs:.0}s");
        }
        println!("result: {}", plan.out.display());
        return Ok(result);
    }
    println!(
        "waiting for compactions to finish (at most {:?})",
        a.fill.compaction_timeout
    );
    // Progress every 10 s.
    let mut next_report = std::time::Instant::now();
    let w = wait_for_pending(&endpoints, 0.0, a.fill.compaction_timeout, &stop, |p| {
        if std::time::Instant::now() >= next_report {
            println!("  pending compactions: {:.0}", p.unwrap_or(0.0));
            next_report = std::time::Instant::now() + Duration::from_secs(10);
        }
    });
    let (waited, pending) = (w.waited, w.last);
    match pending {
        Some(p) if p > 0.0 => println!(
            "compactions not finished after {:.0}s: {p:.0} pending",
            waited.as_secs_f64()
        ),
        _ => println!("compactions finished after {:.0}s", waited.as_secs_f64()),
    }
    println!("result: {}", plan.out.display());
    Ok(result)
}

/// The per-node data size to reach, bytes.
fn target_bytes(a: &FillStep, clusters: &Path) -> anyhow::Result<f64> {
    if let Some(b) = a.fill.bytes {
        return Ok(b.0 as f64 * 1_048_576.0);
    }
    let times = a.fill.times_ram.unwrap_or(0.0);
    let ram = match (a.fill.node_ram, &a.run.cluster) {
        (Some(r), _) => r.0 as f64 * 1_048_576.0,
        (None, Some(name)) => {
            let c = crate::cluster::Cluster::open(clusters, name)?;
            let host = crate::host::HostFacts::read().ram_bytes as f64;
            host / c.nodes().len().max(1) as f64
        }
        (None, None) => bail!("--times-ram needs --node-ram for a remote cluster"),
    };
    Ok(times * ram)
}
