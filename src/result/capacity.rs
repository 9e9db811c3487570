//! The capacity search's result: its spec, every step (written before the next step starts)
//! and the verdict. Each step's full run result (client intervals, server and host series) is
//! a file of its own next to this one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::result::PhaseSummary;
use crate::spec::{OpKind, WorkloadSpec};

/// Version of the [`CapacityResult`] layout.
pub const CAPACITY_VERSION: u32 = 1;

/// How the rate grows from step to step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    /// rate × factor.
    Factor(f64),
    /// rate + increment (ops/s).
    Increment(f64),
}

impl Growth {
    pub fn next(self, rate: f64) -> f64 {
        match self {
            Growth::Factor(f) => rate * f,
            Growth::Increment(i) => rate + i,
        }
    }
}

/// What the search raises from step to step.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Open loop: each step's target rate (`start_rate_per_s`, grown by `growth`).
    #[default]
    Rate,
    /// Closed loop: each step's requests in flight, from `start`, grown by `growth` and
    /// rounded to a whole number above the previous step's (reference 001's client threads).
    Concurrency { start: usize },
}

impl SearchMode {
    /// "rate" or "concurrency".
    pub fn name(self) -> &'static str {
        match self {
            SearchMode::Rate => "rate",
            SearchMode::Concurrency { .. } => "concurrency",
        }
    }
}

/// A response-time bound: `op`'s (all operations' when `None`) percentile must stay at or
/// below `max_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyBound {
    pub op: Option<OpKind>,
    /// e.g. 50.0 or 99.0.
    pub percentile: f64,
    pub max_ms: f64,
}

impl std::fmt::Display for LatencyBound {
    /// `read:p50:20ms`: what `--max-latency` reads back.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = self.op.as_ref().map_or("all", |k| k.name());
        write!(f, "{op}:p{}:{}ms", self.percentile, self.max_ms)
    }
}

/// The overload criteria applied after each step. `None` disables one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Criteria {
    pub latency: Vec<LatencyBound>,
    /// Fail when a node has more than this many pending compactions …
    pub max_pending_compactions: Option<f64>,
    /// … this long after the step ended (reference 001: 20, one minute).
    pub pending_after_s: f64,
    /// Fail when a node's mean CPU over the step is above this share of its CPUs (0–1).
    pub max_node_cpu: Option<f64>,
    /// Fail when errors ÷ operations is above this.
    pub max_error_rate: Option<f64>,
    /// Fail when the achieved rate is below this share of the target (0–1).
    pub min_achieved: Option<f64>,
}

/// Waiting for compactions to settle before a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settle {
    /// Start the step once every node has at most this many pending compactions …
    pub max_pending: f64,
    /// … and no node uses more than this share of its CPUs (`None`: not waited for; a
    /// result from before this setting) …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cpu: Option<f64>,
    /// … or after this long, whichever comes first.
    pub timeout_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacitySpec {
    /// Open loop or closed loop (a result from before closed-loop searches: open loop).
    #[serde(default, skip_serializing_if = "is_rate")]
    pub mode: SearchMode,
    /// The first step's rate (open loop; unused in closed loop).
    pub start_rate_per_s: f64,
    pub growth: Growth,
    /// Each step's length, warmup included.
    pub step_s: f64,
    /// Leading part of each step left out of its figures.
    pub warmup_s: f64,
    pub max_steps: usize,
    /// After the first failing step, this many bisection steps between the highest passing
    /// and the lowest failing rate.
    #[serde(default)]
    pub refine: usize,
    pub settle: Settle,
    pub criteria: Criteria,
}

fn is_rate(m: &SearchMode) -> bool {
    *m == SearchMode::Rate
}

/// One criterion applied to one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionCheck {
    /// e.g. "read p50 ≤ 20 ms".
    pub criterion: String,
    /// What was measured (`None`: it could not be, see `unverified`).
    pub value: Option<f64>,
    pub limit: f64,
    /// The unit of `value` and `limit` as shown after a number: " ms", "%", " pending"
    /// (empty in results written before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
    /// Measured and within the limit.
    pub passed: bool,
    /// Why the value could not be measured (e.g. "node1: no answer within 2.0s"): the check
    /// neither passed nor failed, and the verdict says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<String>,
}

impl CriterionCheck {
    /// What was measured, with its unit (`35.20 ms`, `42.4%`), or why it was not.
    pub fn measured(&self) -> String {
        match (self.value, &self.unverified) {
            (Some(v), _) if self.unit == "%" => format!("{v:.1}%"),
            // A count (pending compactions, nodes died) whole; a result without units as it
            // was always shown.
            (Some(v), _) if !self.unit.is_empty() && self.unit != " ms" && v.fract() == 0.0 => {
                format!("{v:.0}{}", self.unit)
            }
            (Some(v), _) => format!("{v:.2}{}", self.unit),
            (None, Some(why)) => why.clone(),
            (None, None) => "n/a".into(),
        }
    }

    /// Measured and over the limit.
    pub fn failed(&self) -> bool {
        !self.passed && self.unverified.is_none()
    }

    /// "ok", "FAIL" or "unverified".
    pub fn outcome(&self) -> &'static str {
        match (self.passed, &self.unverified) {
            (true, _) => "ok",
            (false, None) => "FAIL",
            (false, Some(_)) => "unverified",
        }
    }
}

/// One step of a capacity search: its rate, its run, the cluster around it and its checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    /// 1-based.
    pub index: usize,
    /// The open-loop step's target rate (0 in a closed-loop step, which has none).
    pub target_rate_per_s: f64,
    /// The closed-loop step's requests in flight (`None`: an open-loop step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// The step's run result (relative to the capacity result's directory).
    pub result: PathBuf,
    /// Seconds spent waiting for compactions to settle before the step.
    pub settle_s: f64,
    /// Highest pending compactions on any node when the step started.
    pub pending_before: Option<f64>,
    /// Highest CPU share of any node over the second before the step started (read when the
    /// search waits for the nodes' CPU to settle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_before: Option<f64>,
    /// Highest pending compactions on any node `pending_after_s` after the step.
    pub pending_after: Option<f64>,
    /// Highest mean CPU of any node over the step, as a share of its CPUs.
    pub node_cpu: Option<f64>,
    /// Mean CPU of the whole host over the step, a share of all its CPUs (where cqlbench
    /// samples the host: local clusters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<f64>,
    /// The step's main-phase figures (merged over the loaders when several ran it).
    pub summary: PhaseSummary,
    pub checks: Vec<CriterionCheck>,
    /// No check failed (some may be unverified).
    pub passed: bool,
    /// The loader processes that ran the step together (`--loaders N`, N > 1); none: one
    /// client ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaders: Option<StepLoaders>,
}

/// A step run by several loader processes at once: how far apart their main phases started,
/// what each achieved, and which fell behind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepLoaders {
    pub count: u64,
    /// Latest minus earliest main-phase start of the loaders (0 unless each recorded its own).
    pub start_spread_ms: f64,
    /// Each loader's own figures, in shard order.
    pub shards: Vec<StepShard>,
}

/// One loader's part of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepShard {
    /// 0-based, as in `--shard I/N`.
    pub index: u64,
    /// What it achieved over the step's measured window.
    pub ops_per_s: f64,
    /// Its share of the step's target rate (open loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate_per_s: Option<f64>,
    /// Why it fell behind (empty: it kept up), e.g. "sent 71.3% of its schedule on time".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behind: Vec<String>,
}

impl StepLoaders {
    /// "loader 1 of 2 fell behind: sent 71.3% of its schedule on time; …", one for each loader
    /// that fell behind.
    pub fn behind(&self) -> Vec<String> {
        self.shards
            .iter()
            .filter(|s| !s.behind.is_empty())
            .map(|s| {
                format!(
                    "loader {} of {} fell behind: {}",
                    s.index,
                    self.count,
                    s.behind.join("; ")
                )
            })
            .collect()
    }

    /// The loaders' achieved rates summed.
    pub fn ops_per_s(&self) -> f64 {
        self.shards.iter().map(|s| s.ops_per_s).sum()
    }
}

impl SearchStep {
    /// What the search raised to reach this step: its concurrency in closed loop, else its
    /// target rate.
    pub fn level(&self) -> f64 {
        self.concurrency
            .map_or(self.target_rate_per_s, |c| c as f64)
    }

    /// A loader fell behind during the step: it measured the loaders' limit, not the cluster's
    /// (the step fails, the search stops there, and the verdict says so).
    pub fn loader_bound(&self) -> bool {
        self.loaders
            .as_ref()
            .is_some_and(|l| l.shards.iter().any(|s| !s.behind.is_empty()))
    }

    /// How many loader processes ran the step (1: one client).
    pub fn loader_count(&self) -> u64 {
        self.loaders.as_ref().map_or(1, |l| l.count)
    }

    /// The host's CPUs were saturated during the step ([`crate::result::warning::HOST_SATURATED`]).
    pub fn host_saturated(&self) -> bool {
        self.host_cpu
            .is_some_and(|c| c >= crate::result::warning::HOST_SATURATED)
    }

    /// The criteria the step failed, each with its measured value, e.g. "read p50 ≤ 20 ms: 35.20".
    pub fn failed_checks(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| c.failed())
            .map(|c| format!("{}: {}", c.criterion, c.measured()))
            .collect()
    }

    /// The criteria the step could not verify, each with why, e.g. "pending compactions 60s
    /// after the step ≤ 20: node1: no answer within 2.0s".
    pub fn unverified_checks(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter_map(|c| {
                c.unverified
                    .as_ref()
                    .map(|why| format!("{}: {why}", c.criterion))
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityStatus {
    Running,
    /// A step failed (or `max_steps` passed): the verdict is final.
    Completed,
    /// Stopped by Ctrl-C; `--resume` continues after the last complete step.
    Interrupted,
    Failed {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Target rate of the highest step that passed every criterion (open loop).
    pub highest_passing_rate_per_s: Option<f64>,
    /// Its achieved throughput: the capacity, in either mode.
    pub highest_passing_ops_per_s: Option<f64>,
    /// Target rate of the lowest failing step (open loop).
    pub failing_rate_per_s: Option<f64>,
    /// Concurrency of the highest step that passed every criterion (closed loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_passing_concurrency: Option<usize>,
    /// Concurrency of the lowest failing step (closed loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_concurrency: Option<usize>,
    /// The criteria the failing step failed, e.g. "read p50 ≤ 20 ms: 35.2".
    pub failed: Vec<String>,
    /// Criteria the verdict's steps (the highest passing and the failing one) could not
    /// verify, e.g. "step 3: pending compactions 60s after the step ≤ 20: node1: no answer".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<String>,
    /// The step where a loader fell behind, which ended the search: the loaders, not the
    /// cluster, were the limit there (the capacity is at least the highest passing step's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loader_bound_step: Option<usize>,
    /// Each loader that fell behind in that step and why, e.g. "loader 1 of 2 fell behind:
    /// sent 71.3% of its schedule on time".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loader_bound: Vec<String>,
}

impl Verdict {
    /// A step failed: the capacity is bracketed, not a lower bound.
    pub fn found_failure(&self) -> bool {
        self.failing_rate_per_s.is_some() || self.failing_concurrency.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    pub schema_version: u32,
    /// Always "capacity": tells this file from run and probe results.
    pub kind: String,
    pub env: String,
    pub started_unix_s: u64,
    pub finished_unix_s: Option<u64>,
    pub status: CapacityStatus,
    pub spec: CapacitySpec,
    pub workload: WorkloadSpec,
    pub steps: Vec<SearchStep>,
    pub verdict: Option<Verdict>,
    /// Tags (`--tag`), for `cqlbench runs --tag`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl CapacityResult {
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::write_json(path, self)
    }

    /// Reads a capacity-search result file, checking its kind and version.
    pub fn read(path: &Path) -> Result<CapacityResult, crate::result::ResultError> {
        crate::result::file::read_capacity(path)
    }

    /// The verdict from the steps so far: the lowest failing step, and the highest passing
    /// step below it (by rate in open loop, by concurrency in closed loop). A step where a
    /// loader fell behind is no failure of the cluster's: it is named apart
    /// ([`Verdict::loader_bound`]).
    pub fn verdict_of(steps: &[SearchStep]) -> Verdict {
        let loader_bound = steps.iter().find(|s| s.loader_bound());
        let failing = steps
            .iter()
            .filter(|s| !s.passed && !s.loader_bound())
            .min_by(|a, b| a.level().total_cmp(&b.level()));
        let limit = failing.map_or(f64::INFINITY, SearchStep::level);
        let passing = steps
            .iter()
            .filter(|s| s.passed && s.level() < limit)
            .max_by(|a, b| a.level().total_cmp(&b.level()));
        let unverified = passing
            .into_iter()
            .chain(failing)
            .flat_map(|s| {
                s.unverified_checks()
                    .into_iter()
                    .map(move |c| format!("step {}: {c}", s.index))
            })
            .collect();
        let rate = |s: &SearchStep| s.concurrency.is_none().then_some(s.target_rate_per_s);
        Verdict {
            highest_passing_rate_per_s: passing.and_then(rate),
            highest_passing_ops_per_s: passing.map(|s| s.summary.ops_per_s),
            failing_rate_per_s: failing.and_then(rate),
            highest_passing_concurrency: passing.and_then(|s| s.concurrency),
            failing_concurrency: failing.and_then(|s| s.concurrency),
            failed: failing.map(SearchStep::failed_checks).unwrap_or_default(),
            unverified,
            loader_bound_step: loader_bound.map(|s| s.index),
            loader_bound: loader_bound
                .and_then(|s| s.loaders.as_ref())
                .map(StepLoaders::behind)
                .unwrap_or_default(),
        }
    }

    /// The step the verdict's capacity comes from: the highest passing one.
    pub fn highest_passing_step(&self) -> Option<&SearchStep> {
        let v = self
            .verdict
            .clone()
            .unwrap_or_else(|| Self::verdict_of(&self.steps));
        let level = v
            .highest_passing_concurrency
            .map(|c| c as f64)
            .or(v.highest_passing_rate_per_s)?;
        self.steps.iter().find(|s| s.passed && s.level() == level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::{
        closed_spec, closed_step as closed, search_spec, search_step as step,
    };

    #[test]
    fn the_highest_passing_step_is_found_in_either_mode() {
        let r = |steps: Vec<SearchStep>| CapacityResult {
            schema_version: CAPACITY_VERSION,
            kind: "capacity".into(),
            env: "e".into(),
            started_unix_s: 0,
            finished_unix_s: None,
            status: CapacityStatus::Completed,
            spec: search_spec(),
            workload: crate::result::fixture::run("a", &Default::default()).workload,
            steps,
            verdict: None,
            tags: vec![],
        };
        let closed_search = r(vec![closed(4, true), closed(8, true), closed(16, false)]);
        assert_eq!(
            closed_search
                .highest_passing_step()
                .and_then(|s| s.concurrency),
            Some(8)
        );
        let open = r(vec![step(1000.0, true), step(2000.0, false)]);
        assert_eq!(
            open.highest_passing_step().map(|s| s.target_rate_per_s),
            Some(1000.0)
        );
    }

    /// A result written before closed-loop searches (no mode, no step concurrency, no
    /// verdict concurrencies) reads as an open-loop search.
    #[test]
    fn an_old_result_without_the_closed_loop_fields_reads_as_open_loop() {
        let mut spec = serde_json::to_value(search_spec()).unwrap();
        assert!(spec.get("mode").is_none(), "open loop writes no mode");
        spec.as_object_mut().unwrap().remove("mode");
        let spec: CapacitySpec = serde_json::from_value(spec).unwrap();
        assert_eq!(spec.mode, SearchMode::Rate);
        let s = serde_json::to_value(step(1000.0, true)).unwrap();
        assert!(s.get("concurrency").is_none());
        assert!(s.get("loaders").is_none(), "one client writes no loaders");
        let s: SearchStep = serde_json::from_value(s).unwrap();
        assert_eq!((s.concurrency, s.level()), (None, 1000.0));
        assert_eq!((s.loader_count(), s.loader_bound()), (1, false));
        let v: Verdict = serde_json::from_str(
            r#"{"highest_passing_rate_per_s":1000.0,"highest_passing_ops_per_s":990.0,
                "failing_rate_per_s":1500.0,"failed":["x"]}"#,
        )
        .unwrap();
        assert_eq!(
            (v.highest_passing_concurrency, v.failing_concurrency),
            (None, None)
        );
        assert!(v.found_failure());
        assert_eq!((v.loader_bound_step, v.loader_bound.len()), (None, 0));
        // A closed-loop spec round-trips with its mode.
        let c = closed_spec(8, Growth::Factor(1.5), 1);
        let text = serde_json::to_string(&c).unwrap();
        assert!(
            text.contains(r#""mode":{"concurrency":{"start":8}}"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<CapacitySpec>(&text).unwrap(), c);
    }
}
