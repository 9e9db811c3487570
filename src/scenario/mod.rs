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

use crate::metrics::reading::NodeReading;
use crate::metrics::sampler::{MetricsPlan, max_pending, scrape_all};
use crate::metrics::scrape::ScrapeError;

/// How a wait for compactions ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PendingWait {
    pub waited: Duration,
    /// Highest pending compactions of any node at the first and the last reading (`None`: no
    /// node answered).
    pub first: Option<f64>,
    pub last: Option<f64>,
    /// Highest CPU share of any node over the last second of the wait (`None`: not read).
    pub cpu: Option<f64>,
}

/// What a node's CPU is read from while waiting: its process by PID (local nodes), else its
/// own process CPU metric, both over the CPUs it has; else its JVM's share of its host.
pub struct NodeCpu<'a> {
    pub pids: &'a [Option<u32>],
    pub node_cpus: &'a [f64],
    /// Wait until no node uses more than this share of its CPUs.
    pub max: f64,
}

impl NodeCpu<'_> {
    /// The highest share of its CPUs any node used between two readings `secs` apart.
    fn highest(
        &self,
        now: (&[Option<f64>], &[Result<NodeReading, ScrapeError>]),
        prev: &[Option<f64>],
        secs: f64,
    ) -> Option<f64> {
        (0..now.0.len())
            .filter_map(|i| {
                let cpus = self.node_cpus.get(i).copied().filter(|c| *c > 0.0);
                match (now.0[i], prev.get(i).copied().flatten(), cpus) {
                    (Some(n), Some(p), Some(c)) if secs > 0.0 => Some((n - p).max(0.0) / secs / c),
                    _ => now.1[i].as_ref().ok().and_then(|r| r.cpu_share),
                }
            })
            .reduce(f64::max)
    }
}

/// Reads the nodes' pending compactions once a second until every node has at most `max`
/// (and, with `cpu`, uses at most its share of its CPUs over the last second), `timeout`
/// passes or `cancel` is set; `unsettled` sees each unsettled reading (pending, CPU).
/// A node that does not answer is not settled (it may be the busiest); endpoints that answer
/// but export no pending compactions, or nodes whose CPU cannot be read, cannot be waited
/// for and count as settled.
pub fn wait_for_pending(
    metrics: &MetricsPlan,
    max: f64,
    cpu: Option<&NodeCpu>,
    timeout: Duration,
    cancel: &Cancel,
    mut unsettled: impl FnMut(Option<f64>, Option<f64>),
) -> PendingWait {
    let t0 = Instant::now();
    let mut first = None;
    let mut prev: Option<(Instant, Vec<Option<f64>>)> = None;
    loop {
        let readings = scrape_all(metrics, Duration::from_secs(5));
        let now = Instant::now();
        let pending = max_pending(&readings);
        let first_reading = *first.get_or_insert(pending);
        let all_answered = readings.iter().all(Result::is_ok);
        let (share, cpu_settled) = match cpu {
            None => (None, true),
            Some(c) => {
                let secs = crate::metrics::check::cpu_seconds(c.pids, &readings);
                let share = prev.as_ref().and_then(|(t, p)| {
                    c.highest((&secs, &readings), p, now.duration_since(*t).as_secs_f64())
                });
                // The first reading has no second to measure over: one more is needed,
                // unless no node's CPU can be read at all.
                let readable = secs.iter().any(Option::is_some)
                    || readings.iter().flatten().any(|r| r.cpu_share.is_some());
                let settled = match share {
                    Some(s) => s <= c.max,
                    None => prev.is_some() || !readable,
                };
                prev = Some((now, secs));
                (share, settled)
            }
        };
        let settled = all_answered && pending.is_none_or(|p| p <= max) && cpu_settled;
        if settled || t0.elapsed() >= timeout || cancel.is_cancelled() {
            return PendingWait {
                waited: t0.elapsed(),
                first: first_reading,
                last: pending,
                cpu: share,
            };
        }
        unsettled(pending, share);
        cancel.sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::NodeCpu;
    use crate::metrics::reading::NodeReading;
    use crate::metrics::scrape::ScrapeError;

    fn reading(share: Option<f64>) -> Result<NodeReading, ScrapeError> {
        Ok(NodeReading {
            cpu_share: share,
            ..NodeReading::default()
        })
    }

    #[test]
    fn node_cpu_is_the_busiest_nodes_share_of_its_own_cpus() {
        let c = NodeCpu {
            pids: &[None, None, None],
            node_cpus: &[2.0, 1.0, 0.0],
            max: 0.3,
        };
        let readings = [reading(None), reading(None), reading(Some(0.1))];
        // Node 1: 0.4 CPU-seconds over 2 s on 2 CPUs = 10%; node 2: 0.5 s on 1 CPU = 25%;
        // node 3 has no CPU count: its JVM's share of its host, 10%.
        let now = [Some(10.4), Some(5.5), Some(1.0)];
        let prev = [Some(10.0), Some(5.0), Some(0.0)];
        let h = c.highest((&now, &readings), &prev, 2.0).unwrap();
        assert!((h - 0.25).abs() < 1e-9, "{h}");
        // A node without a reading before (it restarted, or the first reading) falls back to
        // its share; with none, nothing is known.
        assert_eq!(c.highest((&now[..1], &readings[..1]), &[None], 1.0), None);
        // Counters that went backwards (a restarted process) count as idle, not negative.
        let h = c.highest((&[Some(1.0)], &readings[..1]), &[Some(9.0)], 1.0);
        assert_eq!(h, Some(0.0));
    }
}
