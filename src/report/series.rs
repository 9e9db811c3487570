//! Per-interval series of a run for `cqlbench compare`: the main phase's measured
//! intervals (neither warmup nor the drain after the window), their throughput and, per operation kind, response p50 and p99.

use crate::result::{IntervalOp, RunResult};
use crate::stats::compare::Direction;

/// One metric's values, one per interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub metric: String,
    pub direction: Direction,
    pub values: Vec<f64>,
}

/// The series of `run`'s main phase; `Err` when it has no main phase.
pub fn of(run: &RunResult) -> Result<Vec<Series>, crate::error::Invalid> {
    let phase = run
        .phases
        .iter()
        .rev()
        .find(|p| p.name == "main")
        .ok_or("no main phase (the run stopped before it)")?;
    let measured: Vec<_> = phase.intervals.iter().filter(|i| i.measured()).collect();
    let mut out = vec![Series {
        metric: "throughput ops/s".into(),
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
            (
                "response p50 ms",
                (|o| o.response_p50_ms) as fn(&IntervalOp) -> f64,
            ),
            ("response p99 ms", |o| o.response_p99_ms),
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
