//! The scaling result (a scenario's `scaling` step, reference 004): the same capacity search on
//! clusters of 1, 2, 3… nodes, each search's capacity, the capacity per node, and the scaling
//! efficiency — capacity at N ÷ (N × capacity at the smallest size, per node). Each search is
//! its own capacity result next to this file; this one names them and is rewritten after each
//! size, so an interrupted run keeps the sizes it finished.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::capacity::{CapacityResult, CapacityStatus};

pub const SCALING_VERSION: u32 = 1;

/// One cluster size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    pub nodes: u32,
    /// Its capacity-search result, relative to this file's directory.
    pub result: String,
    /// The search's highest passing step's achieved throughput; `None` when no step passed.
    pub capacity_ops_per_s: Option<f64>,
    /// No step of the search failed: the capacity is at least this much.
    pub lower_bound: bool,
    pub ops_per_s_per_node: Option<f64>,
    /// Capacity per node ÷ the smallest size's capacity per node (1.0 = linear).
    pub efficiency: Option<f64>,
    /// The verdict in words, e.g. "12,400 ops/s passed; 18,600 failed: read p50 ≤ 20 ms: 31.2".
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingResult {
    pub schema_version: u32,
    /// Always "scaling": tells this file from the other results.
    pub kind: String,
    pub env: String,
    /// The workload's label, as in the capacity results.
    pub workload: String,
    pub started_unix_s: u64,
    pub finished_unix_s: Option<u64>,
    /// Completed when every size's search completed.
    pub status: CapacityStatus,
    /// The sizes asked for, in order.
    pub sizes: Vec<u32>,
    /// The sizes searched so far.
    pub points: Vec<ScalingPoint>,
}

impl ScalingResult {
    pub fn new(env: &str, workload: &str, sizes: &[u32]) -> ScalingResult {
        ScalingResult {
            schema_version: SCALING_VERSION,
            kind: "scaling".into(),
            env: env.to_string(),
            workload: workload.to_string(),
            started_unix_s: crate::host::unix_now_s(),
            finished_unix_s: None,
            status: CapacityStatus::Running,
            sizes: sizes.to_vec(),
            points: vec![],
        }
    }

    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::write_json(path, self)
    }

    /// Adds (or replaces) the point of `nodes` from its search, and recomputes every
    /// efficiency against the smallest size with a capacity.
    pub fn record(&mut self, nodes: u32, result_file: &str, search: &CapacityResult) {
        let verdict = Some(verdict_of(search));
        let verdict = verdict.as_ref();
        let capacity = verdict
            .and_then(|v| v.highest_passing_ops_per_s)
            .filter(|c| c.is_finite() && *c > 0.0);
        let point = ScalingPoint {
            nodes,
            result: result_file.to_string(),
            capacity_ops_per_s: capacity,
            lower_bound: capacity.is_some() && verdict.is_some_and(|v| !v.found_failure()),
            ops_per_s_per_node: capacity.map(|c| c / f64::from(nodes)),
            efficiency: None,
            verdict: verdict_words(search),
        };
        self.points.retain(|p| p.nodes != nodes);
        self.points.push(point);
        self.points.sort_by_key(|p| p.nodes);
        let base = self.points.iter().find_map(|p| p.ops_per_s_per_node);
        for p in &mut self.points {
            p.efficiency = match (p.ops_per_s_per_node, base) {
                (Some(per), Some(b)) if b > 0.0 => Some(per / b),
                _ => None,
            };
        }
    }

    /// The size the efficiencies are relative to (the smallest with a capacity).
    pub fn base_nodes(&self) -> Option<u32> {
        self.points
            .iter()
            .find(|p| p.ops_per_s_per_node.is_some())
            .map(|p| p.nodes)
    }

    /// The largest size with a measured capacity: what a plan extrapolates from (its per-node
    /// capacity already carries the loss from scaling up to it).
    pub fn largest_measured(&self) -> Option<&ScalingPoint> {
        self.points
            .iter()
            .rev()
            .find(|p| p.capacity_ops_per_s.is_some())
    }
}

/// A search's verdict; one that did not finish gets the verdict of its steps so far.
fn verdict_of(r: &CapacityResult) -> super::capacity::Verdict {
    r.verdict
        .clone()
        .unwrap_or_else(|| CapacityResult::verdict_of(&r.steps))
}

/// A capacity search's verdict in one line.
pub fn verdict_words(r: &CapacityResult) -> String {
    let n = |v: f64| crate::format::thousands(v);
    let v = verdict_of(r);
    if let (Some(p), f) = (v.highest_passing_concurrency, v.failing_concurrency) {
        let ops = n(v.highest_passing_ops_per_s.unwrap_or(0.0));
        return match f {
            Some(f) => format!(
                "{ops} ops/s with {p} in flight passed; {f} in flight failed: {}",
                v.failed.join("; ")
            ),
            None => format!("at least {ops} ops/s with {p} in flight: no step failed"),
        };
    }
    if let (None, Some(f)) = (v.highest_passing_concurrency, v.failing_concurrency) {
        return format!("every step failed, down to {f} in flight");
    }
    match (v.highest_passing_rate_per_s, v.failing_rate_per_s) {
        (Some(p), Some(f)) => format!(
            "{} ops/s passed; {} failed: {}",
            n(p),
            n(f),
            v.failed.join("; ")
        ),
        (Some(p), None) => format!("at least {} ops/s: no step failed", n(p)),
        (None, Some(f)) => format!("every step failed, down to {} ops/s", n(f)),
        (None, None) => "no step completed".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture;

    /// A search whose highest passing step achieved `ops` (and whose next step failed).
    fn search(ops: f64) -> CapacityResult {
        fixture::capacity_at("lab", ops)
    }

    #[test]
    fn efficiency_is_per_node_capacity_over_the_smallest_sizes() {
        let mut s = ScalingResult::new("lab", "stress", &[1, 2, 3]);
        // Recorded out of order: the points stay sorted by size.
        s.record(2, "s.n2.json", &search(1_800.0));
        s.record(1, "s.n1.json", &search(1_000.0));
        s.record(3, "s.n3.json", &search(2_400.0));
        let e: Vec<(u32, Option<f64>, Option<f64>)> = s
            .points
            .iter()
            .map(|p| (p.nodes, p.ops_per_s_per_node, p.efficiency))
            .collect();
        assert_eq!(
            e,
            [
                (1, Some(1_000.0), Some(1.0)),
                (2, Some(900.0), Some(0.9)),
                (3, Some(800.0), Some(0.8))
            ]
        );
        assert_eq!(s.base_nodes(), Some(1));
        assert_eq!(s.largest_measured().unwrap().nodes, 3);
        assert!(s.points[0].verdict.contains("passed"), "{:?}", s.points[0]);
        // A size searched again replaces its point.
        s.record(3, "s.n3.json", &search(3_000.0));
        assert_eq!(s.points.len(), 3);
        assert_eq!(s.points[2].efficiency, Some(1.0));
    }

    #[test]
    fn a_size_without_capacity_has_no_efficiency_and_the_next_becomes_the_base() {
        let mut s = ScalingResult::new("lab", "stress", &[1, 2]);
        let mut failed = search(1_000.0);
        for st in &mut failed.steps {
            st.passed = false;
            st.checks[0].passed = false;
        }
        failed.verdict = Some(CapacityResult::verdict_of(&failed.steps));
        s.record(1, "n1.json", &failed);
        s.record(2, "n2.json", &search(1_000.0));
        assert_eq!(s.points[0].efficiency, None);
        assert!(
            s.points[0].verdict.starts_with("every step failed"),
            "{}",
            s.points[0].verdict
        );
        assert_eq!(s.base_nodes(), Some(2));
        assert_eq!(s.points[1].efficiency, Some(1.0));
    }
}
