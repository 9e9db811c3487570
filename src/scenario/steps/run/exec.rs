//! Running a run step: its plan on the load engine (or as `--loaders` processes), with its
//! events sent to the context and its result returned.

use super::RunStep;
use crate::result::{RunResult, RunStatus};
use crate::scenario::event::{Event, LoadersEvent};
use crate::scenario::{Context, ScenarioError};
use crate::shards::launch::{self, Launch, LaunchEvent};

/// Runs the step; an error for a run that did not complete (an interrupted run keeps its
/// result and is returned).
pub fn execute(a: &RunStep, ctx: &Context) -> Result<RunResult, ScenarioError> {
    let plan = a.to_plan(ctx)?;
    crate::scenario::steps::prepare_out(&plan.out)?;
    if let Some(n) = a.loaders {
        return loaders(a, n, &plan.out, ctx);
    }
    ctx.emit(Event::ResultAt {
        what: "result",
        path: &plan.out,
    });
    let result = crate::load::run(&plan, ctx.cancel.flag(), &mut |e| ctx.emit(Event::Load(e)))?;
    ctx.emit(Event::RunDone { result: &result });
    ctx.emit(Event::ResultAt {
        what: "result",
        path: &plan.out,
    });
    match &result.status {
        RunStatus::Completed | RunStatus::Interrupted => Ok(result),
        RunStatus::TooManyErrors => Err(ScenarioError::RunEnded(format!(
            "stopped: more than --max-errors {} errors",
            a.max_errors
        ))),
        other => Err(ScenarioError::RunEnded(format!("run ended as {other:?}"))),
    }
}

/// `--loaders N`: this step run as shards 0..N by N child processes of the cqlbench the
/// context names, merged into `out`.
fn loaders(
    a: &RunStep,
    n: u64,
    out: &std::path::Path,
    ctx: &Context,
) -> Result<RunResult, ScenarioError> {
    let each = RunStep {
        loaders: None,
        out: None,
        quiet: false,
        ..a.clone()
    };
    launch_loaders(each.args("run"), n, a.run_id.clone(), out, ctx)
}

/// `args` (a command and its arguments, without `--shard`, `--run-id`, `--out` and `-q`,
/// which each loader gets of its own) run by `n` child processes of the cqlbench the context
/// names, as shards 0..n of run `run_id` (a new one when none is given), their results
/// merged into `out`.
pub fn launch_loaders(
    args: Vec<String>,
    n: u64,
    run_id: Option<String>,
    out: &std::path::Path,
    ctx: &Context,
) -> Result<RunResult, ScenarioError> {
    let Some(exe) = &ctx.exe else {
        crate::scenario::error::refuse!(
            "--loaders starts cqlbench processes: this caller gave no cqlbench executable"
        );
    };
    let run_id = run_id.unwrap_or_else(launch::default_run_id);
    let l = Launch::all(exe.clone(), args, n, run_id.clone(), out.to_path_buf());
    ctx.emit(Event::Loaders(LoadersEvent::Started {
        count: n,
        run_id: &run_id,
    }));
    let merged = launch::run(&l, &ctx.cancel, &mut |e| match e {
        LaunchEvent::Started {
            index,
            count,
            out,
            log,
        } => ctx.emit(Event::Loaders(LoadersEvent::Shard {
            index,
            count,
            out,
            log,
        })),
    })?;
    ctx.emit(Event::RunDone { result: &merged });
    if let Some(m) = &merged.merged {
        ctx.emit(Event::Loaders(LoadersEvent::Merged {
            count: n,
            start_spread_ms: m.start_spread_ms,
            out,
        }));
    }
    Ok(merged)
}
