//! The series `cqlbench compare` compares. Of one run: the main phase's measured intervals
//! (neither warmup nor the drain after the window), their throughput and, per operation kind,
//! response p50 and p99. Of a set of repeated runs: the same figures, one per run, from each
//! run's main-phase summary.

use crate::result::{IntervalOp, RunResult};
use crate::stats::compare::Direction;

/// One metric's values, one per interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub metric: String,
    pub direction: Direction,
    pub values: Vec<f64>,
}

/// The main phase of `run`; `Err` when it has none.
fn main_phase(run: &RunResult) -> Result<&crate::result::PhaseResult, crate::error::Invalid> {
    Ok(run
        .main_phase()
        .ok_or("no main phase (the run stopped before it)")?)
}

const THROUGHPUT: &str = "throughput ops/s";
const P50: &str = "response p50 ms";
const P99: &str = "response p99 ms";

/// One figure per run of a set: the main phase's throughput and, per operation kind any run
/// completed, response p50 and p99 (a kind's series holds the runs that completed it).
/// `Err` names the first run with no summarised main phase, by its index in `runs`.
pub fn per_run(runs: &[&RunResult]) -> Result<Vec<Series>, (usize, crate::error::Invalid)> {
    let mut summaries = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let phase = main_phase(r).map_err(|e| (i, e))?;
        let summary = phase.summary.as_ref().ok_or_else(|| {
            (
                i,
                "its main phase has no summary (the run did not finish it)".into(),
            )
        })?;
        summaries.push(summary);
    }
    let mut out = vec![Series {
        metric: THROUGHPUT.into(),
        direction: Direction::HigherIsBetter,
        values: summaries.iter().map(|s| s.ops_per_s).collect(),
    }];
    let kinds: std::collections::BTreeSet<_> = summaries
        .iter()
        .flat_map(|s| s.by_op.keys().copied())
        .collect();
    for kind in kinds {
        let ops: Vec<_> = summaries
            .iter()
            .filter_map(|s| s.by_op.get(&kind))
            .filter(|o| o.ok > 0)
            .collect();
        for (name, get) in [
            (
                P50,
                (|o| o.response.p50_ms) as fn(&crate::result::OpSummary) -> f64,
            ),
            (P99, |o| o.response.p99_ms),
        ] {
            out.push(Series {
                metric: format!("{kind} {name}"),
                direction: Direction::LowerIsBetter,
                values: ops.iter().map(|o| get(o)).collect(),
            });
        }
    }
    Ok(out)
}

/// The series of `run`'s main phase; `Err` when it has no main phase.
pub fn of(run: &RunResult) -> Result<Vec<Series>, crate::error::Invalid> {
    let phase = main_phase(run)?;
    let measured: Vec<_> = phase.intervals.iter().filter(|i| i.measured()).collect();
    let mut out = vec![Series {
        metric: THROUGHPUT.into(),
        direction: Direction::HigherIsBetter,
        values: measured.iter().map(|i| i.ops_per_s).collect(),
    }];
    for kind in crate::result::kinds_in(measured.iter().copied()) {
        // Only intervals where the kind completed operations have percentiles.
        let ops: Vec<_> = measured
            .iter()
            .filter_map(|i| i.by_op.get(&kind))
            .filter(|o| o.ok > 0)
            .collect();
        if ops.is_empty() {
            continue;
        }
        for (name, get) in [
            (P50, (|o| o.response_p50_ms) as fn(&IntervalOp) -> f64),
            (P99, |o| o.response_p99_ms),
        ] {
            out.push(Series {
                metric: format!("{kind} {name}"),
                direction: Direction::LowerIsBetter,
                values: ops.iter().map(|o| get(o)).collect(),
            });
        }
    }
    Ok(out)
}
