//! Scenarios: the methodologies of the reference articles as single commands — throughput,
//! latency, capacity search with overload criteria, fill — and scenario files chaining them.

pub mod capacity;
pub mod context;
pub mod error;
pub mod event;
pub mod file;
pub mod fill;
pub mod outcome;
pub mod overrides;
pub mod refs;
pub mod runner;
pub mod steps;

pub use context::{Context, Sink};
pub use error::ScenarioError;
pub use event::Event;
pub use outcome::{Outcome, StepOutcome};
pub use runner::{RunOptions, ScenarioOutcome, check, run};

use std::time::{Duration, Instant};

use crate::cancel::Cancel;

use crate::metrics::sampler::{Endpoint, max_pending, scrape_all};

/// How a wait for compactions ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PendingWait {
    pub waited: Duration,
    /// Highest pending compactions of any node at the first and the last reading (`None`: no
    /// node answered).
    pub first: Option<f64>,
    pub last: Option<f64>,
}

/// Reads the nodes' pending compactions once a second until every node has at most `max`,
/// `timeout` passes or `cancel` is set; `unsettled` sees each reading that is still above `max`.
/// A node that does not answer is not settled (it may be the busiest); endpoints that answer
/// but export no pending compactions cannot be waited for and count as settled.
pub fn wait_for_pending(
    endpoints: &[Endpoint],
    max: f64,
    timeout: Duration,
    cancel: &Cancel,
    mut unsettled: impl FnMut(Option<f64>),
) -> PendingWait {
    let t0 = Instant::now();
    let mut first = None;
    loop {
        let readings = scrape_all(endpoints, Duration::from_secs(5));
        let pending = max_pending(&readings);
        let first_reading = *first.get_or_insert(pending);
        let all_answered = readings.iter().all(Result::is_ok);
        let settled = all_answered && pending.is_none_or(|p| p <= max);
        if settled || t0.elapsed() >= timeout || cancel.is_cancelled() {
            return PendingWait {
                waited: t0.elapsed(),
                first: first_reading,
                last: pending,
            };
        }
        unsettled(pending);
        cancel.sleep(Duration::from_secs(1));
    }
}
