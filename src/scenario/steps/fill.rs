//! The `fill` step (`cqlbench fill WORKLOAD`): write rows in order until the nodes hold
//! `--times-ram N` × their RAM or `--bytes SIZE` each, then wait for compactions (reference
//! 001's first two steps).

use std::time::Duration;

use super::run::RunStep;
use crate::error::Invalid;
use crate::result::{FillRecord, RunResult, Warning};
use crate::scenario::error::refuse;
use crate::scenario::event::{Event, FillEvent};
use crate::scenario::fill::Watcher;
use crate::scenario::wait_for_pending;
use crate::scenario::{Context, ScenarioError};
use crate::spec::{Ratio, Stop};
pub use crate::step::fill::{FillOptions, FillStep};

/// Rows in the fill's key space: far more than any fill writes, so every write is a new row.
const FILL_ROWS: u64 = 1 << 40;

impl FillStep {
    /// The run the fill is: writes only, new rows, until the target (a day at most unless
    /// --duration says).
    fn fill_run(&self) -> Result<RunStep, Invalid> {
        let a = self;
        if a.run.ratio.is_some() {
            return Err(crate::invalid!("fill writes only: drop --ratio"));
        }
        if !a.run.fault.is_empty() {
            return Err(crate::invalid!(
                "--fault is for run, throughput and latency, not a fill"
            ));
        }
        if a.run.duration.is_some() && a.run.ops.is_some() {
            return Err(crate::invalid!(
                "give --duration or --ops to bound the fill, not both"
            ));
        }
        match (a.fill.times_ram, a.fill.bytes) {
            (Some(_), Some(_)) => {
                return Err(crate::invalid!("give --times-ram or --bytes, not both"));
            }
            (None, None) => {
                return Err(crate::invalid!(
                    "give --times-ram N (× a node's RAM) or --bytes SIZE"
                ));
            }
            (Some(t), None) if !(t > 0.0 && t.is_finite()) => {
                return Err(crate::invalid!("--times-ram must be above zero"));
            }
            (None, Some(b)) if b.0 == 0 => {
                return Err(crate::invalid!("--bytes must be above zero"));
            }
            _ => {}
        }
        let mut run = a.run.clone();
        run.ratio = Some("write=1".parse::<Ratio>()?);
        run.skip_rampup = true;
        run.rows = FILL_ROWS;
        // The fill ends at the target; --duration (default: a day) or --ops (rows, all
        // loaders together) only bounds it.
        if run.ops.is_none() {
            run.duration.get_or_insert(Duration::from_secs(86_400));
        }
        run.validate()?;
        Ok(run)
    }

    /// Checks every value that can be checked without the cluster.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.fill_run().map(|_| ())
    }
}

pub fn run(a: &FillStep, ctx: &Context) -> Result<RunResult, ScenarioError> {
    let mut run = a.fill_run()?;
    let target = target_bytes(a, ctx)?;
    if run.out.is_none() {
        run.out = Some(run.default_out(ctx, "fill"));
    }
    let mut plan = run.to_plan(ctx)?;
    run.live_reader(ctx, &mut plan)?;
    let metrics = plan.metrics.clone();
    if metrics.endpoints.is_empty() {
        refuse!(
            "fill needs the nodes' metrics to see how much they hold: use --cluster, --hosts (read through CQL), --prometheus host:port,… or --prometheus-server URL"
        );
    }
    check_load_readable(&metrics)?;
    if let Some(n) = run.loaders {
        super::prepare_out(&plan.out)?;
        return loaders(a, n, (&plan.out, target, &metrics), ctx);
    }
    plan.sequential_main = true;
    plan.end_on_node_death = true;
    super::prepare_out(&plan.out)?;
    ctx.emit(Event::Fill(FillEvent::Started {
        target_mib: mib(target),
        out: &plan.out,
    }));
    let sink = ctx.clone();
    // A fill that drops its keyspace judges the load once the drop is done, not by the data
    // it is about to drop.
    let judge = if run.drop {
        crate::scenario::fill::Judge::AfterDrop
    } else {
        crate::scenario::fill::Judge::AtOnce
    };
    let watcher = Watcher::start(metrics.clone(), target, judge, move |load| {
        sink.emit(Event::Fill(FillEvent::NodeLoad {
            mib: mib(load),
            target_mib: mib(target),
        }));
    });
    plan.until = Some(watcher.until.clone());
    let armed = watcher.armed.clone();
    let result = crate::load::run(&plan, ctx.cancel.flag(), &mut |e| {
        if let crate::load::Event::PhaseStarted { .. } = &e {
            armed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if let crate::load::Event::Interval { record, .. } = &e
            && (record.end_s as u64).is_multiple_of(5)
        {
            ctx.emit(Event::Fill(FillEvent::Writing {
                at_s: record.end_s,
                ops_per_s: record.ops_per_s,
            }));
        }
        ctx.emit(Event::Fill(FillEvent::Run(e)));
    });
    let reached = watcher.until.load(std::sync::atomic::Ordering::Relaxed);
    let last = watcher.finish();
    let result = result?;
    ctx.emit(Event::RunDone { result: &result });
    if let Some(w) = result
        .warnings
        .iter()
        .find(|w| matches!(w, Warning::NodeDied { .. }))
    {
        return Err(ScenarioError::RunEnded(format!(
            "the fill stopped: {w} (result: {})",
            plan.out.display()
        )));
    }
    let rows = rows_written(&result);
    ctx.emit(Event::Fill(FillEvent::Wrote {
        rows,
        mean_mib: mib(last.unwrap_or(0.0)),
    }));
    let result = record(
        result,
        &plan.out,
        FillRecord {
            rows_written: rows,
            target_mib: mib(target),
            reached,
            node_load_mib: last.map(mib),
        },
    )?;
    if reached {
        wait_for_compactions(a, ctx, &metrics);
    } else if let Stop::Duration { secs } = plan.main.stop
        && !ctx.cancel.is_cancelled()
    {
        ctx.emit(Event::Fill(FillEvent::NotReached { within_s: secs }));
    }
    ctx.emit(Event::ResultAt {
        what: "result",
        path: &plan.out,
    });
    Ok(result)
}

/// `--loaders N`: the fill as N `fill --shard I/N` processes, each writing every N-th row
/// (together exactly the rows one process would have written, `--ops` of them at most) until
/// the nodes hold the target, then waiting for compactions; their results merged into `out`.
/// `to` is where: the result, the target in bytes, and the metrics plan the nodes' load is
/// read by.
fn loaders(
    a: &FillStep,
    n: u64,
    to: (&std::path::Path, f64, &crate::metrics::sampler::MetricsPlan),
    ctx: &Context,
) -> Result<RunResult, ScenarioError> {
    let (out, target, metrics) = to;
    let each = FillStep {
        run: RunStep {
            loaders: None,
            out: None,
            quiet: false,
            ..a.run.clone()
        },
        fill: a.fill.clone(),
    };
    let result = super::run::launch_loaders(
        crate::step::order::Task::Fill(Box::new(each)),
        n,
        a.run.run_id.clone(),
        out,
        ctx,
    )?;
    if let Some(w) = result
        .warnings
        .iter()
        .find(|w| matches!(w, Warning::NodeDied { .. }))
    {
        return Err(ScenarioError::RunEnded(format!(
            "the fill stopped: {w} (result: {})",
            out.display()
        )));
    }
    let load = crate::scenario::fill::mean_load(metrics);
    let rows = rows_written(&result);
    ctx.emit(Event::Fill(FillEvent::Wrote {
        rows,
        mean_mib: load.map_or(0.0, mib),
    }));
    let result = record(
        result,
        out,
        FillRecord {
            rows_written: rows,
            target_mib: mib(target),
            reached: load.is_some_and(|l| l >= target),
            node_load_mib: load.map(mib),
        },
    )?;
    ctx.emit(Event::ResultAt {
        what: "result",
        path: out,
    });
    Ok(result)
}

/// Bytes in MiB.
fn mib(bytes: f64) -> f64 {
    bytes / 1_048_576.0
}

/// Never blind: a fill ends at a data size read from the nodes' load, so endpoints that do not
/// answer, or answer in a dialect without the nodes' load, are refused before anything is
/// written (the fill would write on to its --duration bound, a day by default). The check is
/// `metrics check`'s, each source given 5 s.
fn check_load_readable(
    metrics: &crate::metrics::sampler::MetricsPlan,
) -> Result<(), ScenarioError> {
    let found = crate::metrics::check::check(metrics, Duration::from_secs(5));
    if let Some(why) = found.fill_blind() {
        refuse!(
            "fill: {why}: the fill reads the nodes' load to know when to stop (see `cqlbench metrics check`)"
        );
    }
    Ok(())
}

/// Records what the fill wrote and reached in its result file (and in `result`).
fn record(
    mut result: RunResult,
    out: &std::path::Path,
    fill: FillRecord,
) -> Result<RunResult, ScenarioError> {
    crate::result::file::set_run_field(out, "fill", &fill)?;
    result.fill = Some(fill);
    Ok(result)
}

/// Rows written: the writes that succeeded, every phase's.
fn rows_written(result: &RunResult) -> u64 {
    result
        .phases
        .iter()
        .map(|p| p.summary.as_ref().map_or(0, |s| s.ok))
        .sum()
}

/// Waits for pending compactions to reach zero (at most `--compaction-timeout`), telling the
/// context every 10 s.
fn wait_for_compactions(
    a: &FillStep,
    ctx: &Context,
    metrics: &crate::metrics::sampler::MetricsPlan,
) {
    ctx.emit(Event::Fill(FillEvent::WaitingForCompactions {
        timeout_s: a.fill.compaction_timeout.as_secs_f64(),
    }));
    let mut next_report = std::time::Instant::now();
    let w = wait_for_pending(
        metrics,
        0.0,
        None,
        a.fill.compaction_timeout,
        &ctx.cancel,
        |p, _| {
            if std::time::Instant::now() >= next_report {
                ctx.emit(Event::Fill(FillEvent::Pending {
                    compactions: p.unwrap_or(0.0),
                }));
                next_report = std::time::Instant::now() + Duration::from_secs(10);
            }
        },
    );
    ctx.emit(Event::Fill(FillEvent::Compacted {
        after_s: w.waited.as_secs_f64(),
        pending: w.last,
    }));
}

/// The per-node data size to reach, bytes.
fn target_bytes(a: &FillStep, ctx: &Context) -> Result<f64, ScenarioError> {
    if let Some(b) = a.fill.bytes {
        return Ok(b.0 as f64 * 1_048_576.0);
    }
    let times = a.fill.times_ram.unwrap_or(0.0);
    let ram = match (a.fill.node_ram, &a.run.cluster) {
        (Some(r), _) => r.0 as f64 * 1_048_576.0,
        (None, Some(name)) => {
            let c = crate::cluster::Cluster::open(&ctx.clusters, name)?;
            let host = crate::host::HostFacts::read().ram_bytes as f64;
            host / c.nodes().len().max(1) as f64
        }
        (None, None) => refuse!("--times-ram needs --node-ram for a remote cluster"),
    };
    Ok(times * ram)
}
