//! Scenarios: the methodologies of the reference articles as single commands — throughput,
//! latency, capacity search with overload criteria, fill — and scenario files chaining them.

pub mod capacity;
pub mod file;
pub mod fill;
pub mod overrides;
pub mod runner;
pub mod steps;

pub use runner::{Env, check, run};

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::metrics::sampler::{Endpoint, max_pending, scrape_all};

/// Sleeps `d` unless `stop` is set first; true when the whole time passed.
pub fn sleep_unless(stop: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
    }
    !stop.load(Ordering::Relaxed)
}

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
/// `timeout` passes or `stop` is set; `unsettled` sees each reading that is still above `max`.
/// A node that does not answer is not settled (it may be the busiest); endpoints that answer
/// but export no pending compactions cannot be waited for and count as settled.
pub fn wait_for_pending(
    endpoints: &[Endpoint],
    max: f64,
    timeout: Duration,
    stop: &AtomicBool,
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
        if settled || t0.elapsed() >= timeout || stop.load(Ordering::Relaxed) {
            return PendingWait {
                waited: t0.elapsed(),
                first: first_reading,
                last: pending,
            };
        }
        unsettled(pending);
        sleep_unless(stop, Duration::from_secs(1));
    }
}
