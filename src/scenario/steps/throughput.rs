//! The `throughput` and `latency` steps (`cqlbench throughput|latency`): the two tests of
//! reference 000 over the run step — unthrottled at a fixed concurrency, and at a fixed rate
//! (in ops/s or as a share of a throughput result). Both take a [`RunStep`].

use super::run::{RunStep, execute};
use crate::error::Invalid;
use crate::result::RunResult;
use crate::scenario::event::Event;
use crate::scenario::{Context, ScenarioError};

/// Reference 000's throughput test: 300 requests in flight unless `--concurrency` says.
pub const THROUGHPUT_CONCURRENCY: usize = 300;

/// A throughput step's checks beyond [`RunStep::validate`].
pub fn validate_throughput(a: &RunStep) -> Result<(), Invalid> {
    if a.rate.is_some() {
        return Err(crate::invalid!(
            "throughput runs unthrottled: give --concurrency, or use `cqlbench latency --rate`"
        ));
    }
    a.validate()
}

/// A latency step's checks beyond [`RunStep::validate`].
pub fn validate_latency(a: &RunStep) -> Result<(), Invalid> {
    if a.rate.is_none() {
        return Err(crate::invalid!(
            "latency runs at a fixed rate: give --rate OPS (e.g. 2000) or --rate 35% --of RESULT.json"
        ));
    }
    a.validate()
}

pub fn throughput(a: &RunStep, ctx: &Context) -> Result<RunResult, ScenarioError> {
    validate_throughput(a)?;
    let r = execute(&throughput_run(a), ctx)?;
    if let Some(t) = interval_throughput(&r) {
        ctx.emit(Event::IntervalThroughput(&t));
    }
    Ok(r)
}

/// The run a throughput step is: [`THROUGHPUT_CONCURRENCY`] in flight unless it says.
pub fn throughput_run(a: &RunStep) -> RunStep {
    let mut a = a.clone();
    a.concurrency.get_or_insert(THROUGHPUT_CONCURRENCY);
    a
}

pub fn latency(a: &RunStep, ctx: &Context) -> Result<RunResult, ScenarioError> {
    validate_latency(a)?;
    execute(a, ctx)
}

/// Per-interval throughput of the main phase's measured intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalThroughput {
    pub intervals: usize,
    pub mean: f64,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Coefficient of variation (stddev ÷ mean).
    pub cv: f64,
}

pub fn interval_throughput(r: &RunResult) -> Option<IntervalThroughput> {
    let main = r.main_phase()?;
    // The last interval is usually partial; full intervals of the window only.
    let mut v: Vec<f64> = main
        .intervals
        .iter()
        .filter(|i| i.measured() && (i.end_s - i.start_s) > 0.99)
        .map(|i| i.ops_per_s)
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    let median = crate::stats::median_of_sorted(&v);
    Some(IntervalThroughput {
        intervals: v.len(),
        mean,
        min: v[0],
        median,
        max: v[v.len() - 1],
        cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::{RunShape, run};

    #[test]
    fn interval_throughput_summarises_full_measured_intervals() {
        let r = run("a", &RunShape::default());
        let t = interval_throughput(&r).unwrap();
        let main = &r.phases[0];
        let full: Vec<f64> = main
            .intervals
            .iter()
            .filter(|i| i.measured() && i.end_s - i.start_s > 0.99)
            .map(|i| i.ops_per_s)
            .collect();
        assert_eq!(t.intervals, full.len());
        assert!(t.min <= t.median && t.median <= t.max);
        let mean = full.iter().sum::<f64>() / full.len() as f64;
        assert!((t.mean - mean).abs() < 1e-9);
        assert!(t.cv > 0.0, "the fixture's intervals vary");
    }
}
