//! Capacity searches in the report: every step (target and achieved rate, response time,
//! pending compactions, node CPU, pass or fail) and the verdict. The columns are defined once,
//! as lists of [`Column`]s, for the tables and the CSV.

use std::path::PathBuf;

use crate::format::Table;
use crate::result::capacity::{
    CapacityResult, CapacityStatus, LatencyBound, SearchMode, SearchStep, Verdict,
};

/// One step of a capacity search.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    /// 1-based.
    pub index: usize,
    /// The open-loop step's target rate (0 in a closed-loop step).
    pub target_rate_per_s: f64,
    /// The closed-loop step's requests in flight.
    pub concurrency: Option<usize>,
    pub ops_per_s: f64,
    /// Response time of all operations over the step's measured window.
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub pending_after: Option<f64>,
    /// Highest mean CPU of any node over the step, 0–1.
    pub node_cpu: Option<f64>,
    pub passed: bool,
    /// A loader fell behind: the step measured the loaders' limit, not the cluster's.
    pub loader_bound: bool,
    /// The loader processes that ran the step (1: one client).
    pub loaders: u64,
    /// How far apart their main phases started (several loaders).
    pub start_spread_ms: Option<f64>,
    /// The criteria the step failed, with the measured value ("p99 ≤ 20 ms: 35.20").
    pub failed: Vec<String>,
    /// The criteria the step could not measure, with why.
    pub unverified: Vec<String>,
    /// The step's part in the verdict.
    pub role: Option<Role>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    HighestPassing,
    Failing,
}

/// One capacity-search result as the report shows it: its steps as rows, its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchReport {
    pub env: String,
    pub path: PathBuf,
    pub workload: String,
    /// Not completed: the verdict is from the steps so far.
    pub status: Option<String>,
    pub steps: Vec<StepRow>,
    /// The search stepped the requests in flight (closed loop), not the target rate.
    pub closed_loop: bool,
    pub verdict: Verdict,
    /// The response-time bounds of the search, e.g. ("read p99 ≤ 20 ms", 20.0).
    pub latency_limits: Vec<(String, f64)>,
}

/// A table cell before formatting.
pub enum Cell {
    Num(Option<f64>),
    Text(String),
}

/// One column of a capacity table: CSV key, label, decimals of a number.
pub struct Column<T> {
    pub key: &'static str,
    pub label: &'static str,
    pub decimals: usize,
    pub get: fn(&T) -> Cell,
}

// By hand: a derive would ask `T: Copy`, which a column of `T` does not need.
impl<T> Clone for Column<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Column<T> {}

impl Cell {
    /// As shown in a table.
    pub fn display(&self, decimals: usize) -> String {
        match self {
            Cell::Num(v) => crate::format::cell(*v, decimals),
            Cell::Text(s) => s.clone(),
        }
    }

    /// As written to CSV (unquoted): numbers to 6 decimal places, absent empty.
    pub fn raw(&self) -> String {
        match self {
            Cell::Num(v) => v
                .map(|v| ((v * 1e6).round() / 1e6).to_string())
                .unwrap_or_default(),
            Cell::Text(s) => s.clone(),
        }
    }
}

/// The columns of the step table, in order.
pub const STEP_COLUMNS: [Column<StepRow>; 12] = [
    Column {
        key: "step",
        label: "step",
        decimals: 0,
        get: |s| Cell::Num(Some(s.index as f64)),
    },
    Column {
        key: "target_rate_per_s",
        label: "target ops/s",
        decimals: 0,
        // A closed-loop step has no target (it has requests in flight).
        get: |s| Cell::Num(s.concurrency.is_none().then_some(s.target_rate_per_s)),
    },
    Column {
        key: "in_flight",
        label: "in flight",
        decimals: 0,
        // An open-loop step has none (it has a target rate).
        get: |s| Cell::Num(s.concurrency.map(|c| c as f64)),
    },
    Column {
        key: "achieved_ops_per_s",
        label: "achieved ops/s",
        decimals: 0,
        get: |s| Cell::Num(Some(s.ops_per_s)),
    },
    Column {
        key: "step_p50_ms",
        label: "p50 ms",
        decimals: 2,
        get: |s| Cell::Num(Some(s.p50_ms)),
    },
    Column {
        key: "step_p99_ms",
        label: "p99 ms",
        decimals: 2,
        get: |s| Cell::Num(Some(s.p99_ms)),
    },
    Column {
        key: "pending_compactions_after",
        label: "pending after",
        decimals: 0,
        get: |s| Cell::Num(s.pending_after),
    },
    Column {
        key: "node_cpu_pct",
        label: "node CPU %",
        decimals: 1,
        get: |s| Cell::Num(s.node_cpu.map(|c| 100.0 * c)),
    },
    Column {
        key: "step_result",
        label: "result",
        decimals: 0,
        get: |s| {
            Cell::Text(
                match (s.passed, s.loader_bound) {
                    (true, _) => "pass",
                    (false, true) => "loader-bound",
                    (false, false) => "fail",
                }
                .into(),
            )
        },
    },
    Column {
        key: "verdict",
        label: "verdict",
        decimals: 0,
        get: |s| {
            Cell::Text(
                match s.role {
                    Some(Role::HighestPassing) => "highest passing",
                    Some(Role::Failing) => "failing",
                    None => "",
                }
                .into(),
            )
        },
    },
    Column {
        key: "failed_criteria",
        label: "failed criteria",
        decimals: 0,
        get: |s| Cell::Text(s.failed.join("; ")),
    },
    Column {
        key: "unverified_criteria",
        label: "unverified criteria",
        decimals: 0,
        get: |s| Cell::Text(s.unverified.join("; ")),
    },
];

/// The columns a step table adds when several loaders ran a step (after "achieved ops/s").
pub const LOADER_COLUMNS: [Column<StepRow>; 2] = [
    Column {
        key: "loaders",
        label: "loaders",
        decimals: 0,
        get: |s| Cell::Num(Some(s.loaders as f64)),
    },
    Column {
        key: "start_spread_ms",
        label: "start spread ms",
        decimals: 0,
        get: |s| Cell::Num(s.start_spread_ms),
    },
];

/// The columns of the verdict table (one row per search).
pub const VERDICT_COLUMNS: [Column<SearchReport>; 6] = [
    Column {
        key: "workload",
        label: "workload",
        decimals: 0,
        get: |c| Cell::Text(c.workload.clone()),
    },
    Column {
        key: "highest_passing_rate_per_s",
        label: "highest passing ops/s",
        decimals: 0,
        get: |c| Cell::Num(c.verdict.highest_passing_rate_per_s),
    },
    Column {
        key: "highest_passing_ops_per_s",
        label: "achieved there ops/s",
        decimals: 0,
        get: |c| Cell::Num(c.verdict.highest_passing_ops_per_s),
    },
    Column {
        key: "failing_rate_per_s",
        label: "failing ops/s",
        decimals: 0,
        get: |c| Cell::Num(c.verdict.failing_rate_per_s),
    },
    Column {
        key: "failed_criteria",
        label: "failed criteria",
        decimals: 0,
        // A loader-bound step is named too: the search stopped at the loaders' limit.
        get: |c| {
            let v = &c.verdict;
            let bound = v.loader_bound_step.map(|k| {
                format!(
                    "loader-bound at step {k} (the loaders, not the cluster, were the limit): {}",
                    v.loader_bound.join("; ")
                )
            });
            Cell::Text(
                v.failed
                    .iter()
                    .cloned()
                    .chain(bound)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        },
    },
    Column {
        key: "unverified_criteria",
        label: "unverified criteria",
        decimals: 0,
        get: |c| Cell::Text(c.verdict.unverified.join("; ")),
    },
];

fn bound_label(b: &LatencyBound) -> String {
    let op = b.op.map(|o| format!("{} ", o.name())).unwrap_or_default();
    format!("{op}p{} ≤ {} ms", b.percentile, b.max_ms)
}

impl SearchReport {
    /// The report's view of a capacity result; a result without a verdict yet (running,
    /// interrupted) gets the verdict of its steps so far.
    pub fn of(path: PathBuf, result: &CapacityResult) -> SearchReport {
        let verdict = result
            .verdict
            .clone()
            .unwrap_or_else(|| CapacityResult::verdict_of(&result.steps));
        // The verdict's steps: with refinement (bisection) they need not be the last ones.
        let level =
            |rate: Option<f64>, concurrency: Option<usize>| concurrency.map(|c| c as f64).or(rate);
        let failing = level(verdict.failing_rate_per_s, verdict.failing_concurrency);
        let passing = level(
            verdict.highest_passing_rate_per_s,
            verdict.highest_passing_concurrency,
        );
        let role_of = |s: &SearchStep| {
            if !s.passed && Some(s.level()) == failing {
                Some(Role::Failing)
            } else if s.passed && Some(s.level()) == passing {
                Some(Role::HighestPassing)
            } else {
                None
            }
        };
        let steps = result
            .steps
            .iter()
            .map(|s| StepRow {
                index: s.index,
                target_rate_per_s: s.target_rate_per_s,
                concurrency: s.concurrency,
                ops_per_s: s.summary.ops_per_s,
                p50_ms: s.summary.all.response.p50_ms,
                p99_ms: s.summary.all.response.p99_ms,
                pending_after: s.pending_after,
                node_cpu: s.node_cpu,
                passed: s.passed,
                loader_bound: s.loader_bound(),
                loaders: s.loader_count(),
                start_spread_ms: s.loaders.as_ref().map(|l| l.start_spread_ms),
                failed: s.failed_checks(),
                unverified: s.unverified_checks(),
                role: role_of(s),
            })
            .collect();
        let status = match &result.status {
            CapacityStatus::Completed => None,
            CapacityStatus::Running => Some("still running".to_string()),
            CapacityStatus::Interrupted => Some("interrupted".to_string()),
            CapacityStatus::Failed { reason } => Some(format!("failed: {reason}")),
        };
        SearchReport {
            env: result.env.clone(),
            path,
            workload: result.workload.kind.to_string(),
            status,
            steps,
            closed_loop: matches!(result.spec.mode, SearchMode::Concurrency { .. }),
            verdict,
            latency_limits: result
                .spec
                .criteria
                .latency
                .iter()
                .map(|b| (bound_label(b), b.max_ms))
                .collect(),
        }
    }

    /// e.g. `ec2, keyvalue` or `ec2, keyvalue (interrupted: verdict from the steps so far)`.
    pub fn title(&self) -> String {
        match &self.status {
            None => format!("{}, {}", self.env, self.workload),
            Some(s) => format!(
                "{}, {} ({s}: verdict from the steps so far)",
                self.env, self.workload
            ),
        }
    }
}

/// A table with one row per item; the first column holds `first(item)`. Text columns are
/// aligned left.
pub(crate) fn rows_table<T>(
    title: String,
    first_header: &str,
    columns: &[Column<T>],
    items: &[(String, &T)],
) -> Table {
    let text_columns = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            items
                .first()
                .is_some_and(|(_, t)| matches!((c.get)(t), Cell::Text(_)))
        })
        .map(|(i, _)| i + 1)
        .collect();
    Table {
        title,
        header: std::iter::once(first_header.to_string())
            .chain(columns.iter().map(|c| c.label.to_string()))
            .collect(),
        rows: items
            .iter()
            .map(|(first, t)| {
                std::iter::once(first.clone())
                    .chain(columns.iter().map(|c| (c.get)(t).display(c.decimals)))
                    .collect()
            })
            .collect(),
        text_columns,
    }
}

/// The step table of one search; a closed-loop search shows each step's requests in flight
/// where an open-loop one shows its target rate.
pub fn step_table(search: &SearchReport) -> Table {
    let items: Vec<(String, &StepRow)> = search
        .steps
        .iter()
        .map(|s| (s.index.to_string(), s))
        .collect();
    // The step number is the row label already; the loaders' columns after the achieved
    // rate when several loaders ran a step.
    let sharded = search.steps.iter().any(|s| s.loaders > 1);
    let columns: Vec<Column<StepRow>> = STEP_COLUMNS[1..]
        .iter()
        .flat_map(|c| {
            let loaders = (sharded && c.key == "achieved_ops_per_s").then_some(LOADER_COLUMNS);
            std::iter::once(*c).chain(loaders.into_iter().flatten())
        })
        .collect();
    let mut t = rows_table(
        format!("Capacity search — {}", search.title()),
        "step",
        &columns,
        &items,
    );
    // One of the two level columns: the other is empty in every row.
    let other = match search.closed_loop {
        true => "target_rate_per_s",
        false => "in_flight",
    };
    let at = 1 + columns
        .iter()
        .position(|c| c.key == other)
        .expect("a step column");
    t.header.remove(at);
    for row in &mut t.rows {
        row.remove(at);
    }
    t.text_columns = t
        .text_columns
        .iter()
        .filter(|&&i| i != at)
        .map(|&i| if i > at { i - 1 } else { i })
        .collect();
    t
}

/// The verdict table: one row per search.
pub fn verdict_table(searches: &[SearchReport]) -> Option<Table> {
    let items: Vec<(String, &SearchReport)> = searches.iter().map(|c| (c.env.clone(), c)).collect();
    let mut t = (!items.is_empty())
        .then(|| rows_table("Capacity verdict".into(), "env", &VERDICT_COLUMNS, &items))?;
    // Closed-loop searches name their concurrencies, after the rates (the workload, then
    // the three rate columns).
    if searches.iter().any(|c| c.closed_loop) {
        let at = 5;
        t.header.insert(at, "passing in flight".into());
        t.header.insert(at + 1, "failing in flight".into());
        let n = |c: Option<usize>| c.map_or_else(|| "-".into(), |c| c.to_string());
        for (row, c) in t.rows.iter_mut().zip(searches) {
            row.insert(at, n(c.verdict.highest_passing_concurrency));
            row.insert(at + 1, n(c.verdict.failing_concurrency));
        }
        t.text_columns = t
            .text_columns
            .iter()
            .map(|&i| if i >= at { i + 2 } else { i })
            .collect();
    }
    Some(t)
}

/// A scaling run: per cluster size its capacity, per node, and the efficiency against the
/// smallest size.
pub fn scaling_table(r: &crate::result::ScalingResult) -> Table {
    let base = r.base_nodes();
    Table {
        title: format!(
            "Scaling — {} on {}: capacity by cluster size{}",
            r.workload,
            r.env,
            match base {
                Some(1) | None => String::new(),
                Some(n) => format!(" (efficiency against {n} nodes)"),
            }
        ),
        header: [
            "nodes",
            "capacity ops/s",
            "ops/s per node",
            "efficiency",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows: r
            .points
            .iter()
            .map(|p| {
                vec![
                    p.nodes.to_string(),
                    format!(
                        "{}{}",
                        if p.lower_bound { "≥ " } else { "" },
                        crate::format::cell(p.capacity_ops_per_s, 0)
                    ),
                    crate::format::cell(p.ops_per_s_per_node, 0),
                    p.efficiency
                        .map(|e| format!("{:.0}%", e * 100.0))
                        .unwrap_or("-".into()),
                    p.verdict.clone(),
                ]
            })
            .collect(),
        text_columns: vec![4],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture;

    #[test]
    fn refined_searches_mark_the_verdicts_steps_not_the_first_failure() {
        // Grows to 4,000 (fails), bisects to 3,000 (fails) and 2,500 (passes).
        let mut result =
            fixture::capacity("ec2", &[1_000.0, 2_000.0, 4_000.0, 3_000.0, 2_500.0], 0);
        for i in [2, 3] {
            result.steps[i].passed = false;
            result.steps[i].checks[0].passed = false;
        }
        result.verdict = Some(CapacityResult::verdict_of(&result.steps));
        let c = SearchReport::of("cap.json".into(), &result);
        let roles: Vec<Option<Role>> = c.steps.iter().map(|s| s.role).collect();
        assert_eq!(
            roles,
            [
                None,
                None,
                None,
                Some(Role::Failing),
                Some(Role::HighestPassing)
            ]
        );
    }

    #[test]
    fn steps_carry_their_part_in_the_verdict() {
        let result = fixture::capacity("ec2", &[1_000.0, 2_000.0, 3_000.0, 4_000.0], 4);
        let c = SearchReport::of("cap.json".into(), &result);
        let roles: Vec<Option<Role>> = c.steps.iter().map(|s| s.role).collect();
        assert_eq!(
            roles,
            [None, None, Some(Role::HighestPassing), Some(Role::Failing)]
        );
        assert_eq!(c.verdict.highest_passing_rate_per_s, Some(3_000.0));
        assert_eq!(c.verdict.failing_rate_per_s, Some(4_000.0));
        assert!(
            c.steps[3].failed[0].starts_with("p99 ≤ 20 ms: "),
            "{:?}",
            c.steps[3]
        );
        assert_eq!(c.latency_limits, [("p99 ≤ 20 ms".to_string(), 20.0)]);
        assert!(c.status.is_none());
    }

    #[test]
    fn an_unfinished_search_gets_the_verdict_of_its_steps() {
        let mut result = fixture::capacity("ec2", &[1_000.0, 2_000.0], 0);
        result.status = CapacityStatus::Interrupted;
        result.verdict = None;
        let c = SearchReport::of("cap.json".into(), &result);
        assert_eq!(c.verdict.highest_passing_rate_per_s, Some(2_000.0));
        assert_eq!(c.verdict.failing_rate_per_s, None);
        assert_eq!(c.steps[1].role, Some(Role::HighestPassing));
        assert!(c.title().contains("interrupted"), "{}", c.title());
        let t = step_table(&c);
        assert_eq!(t.header[0], "step");
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1][7], "pass");
        assert_eq!(t.rows[1][8], "highest passing");
    }

    #[test]
    fn a_closed_loop_search_shows_requests_in_flight() {
        let result = fixture::capacity_closed("lab", &[4, 8, 16, 32], 4);
        let c = SearchReport::of("cap.json".into(), &result);
        assert!(c.closed_loop);
        let roles: Vec<Option<Role>> = c.steps.iter().map(|s| s.role).collect();
        assert_eq!(
            roles,
            [None, None, Some(Role::HighestPassing), Some(Role::Failing)]
        );
        let t = step_table(&c);
        assert_eq!(t.header[1..3], ["in flight", "achieved ops/s"]);
        assert!(t.rows.iter().all(|r| r.len() == t.header.len()));
        let col: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(col, ["4", "8", "16", "32"]);
        assert_eq!(t.text_columns, [7, 8, 9, 10]);
        let open = SearchReport::of("o.json".into(), &fixture::capacity("ec2", &[1e3, 2e3], 2));
        let o = step_table(&open);
        assert_eq!(o.header[1..3], ["target ops/s", "achieved ops/s"]);
        assert_eq!(o.rows[1][1], "2,000");
        assert_eq!(o.text_columns, t.text_columns);
        let v = verdict_table(&[open, c]).unwrap();
        assert_eq!(v.header[5..7], ["passing in flight", "failing in flight"]);
        assert_eq!(v.rows[1][5..7], ["16", "32"]);
        assert_eq!(v.rows[0][5..7], ["-", "-"]);
        assert_eq!(v.rows[0].len(), v.header.len());
    }

    #[test]
    fn a_search_by_several_loaders_shows_them_and_its_loader_bound_step() {
        let c = SearchReport::of("cap.json".into(), &fixture::capacity_loader_bound("lab"));
        let t = step_table(&c);
        assert_eq!(
            t.header[1..5],
            [
                "target ops/s",
                "achieved ops/s",
                "loaders",
                "start spread ms"
            ]
        );
        assert!(t.rows.iter().all(|r| r.len() == t.header.len()));
        let at = |name: &str| t.header.iter().position(|h| h == name).unwrap();
        assert_eq!(t.rows[2][at("loaders")], "2");
        assert_eq!(t.rows[2][at("start spread ms")], "9");
        assert_eq!(t.rows[2][at("result")], "loader-bound");
        // Not the cluster's failing step: the highest passing one is step 2.
        assert_eq!(c.steps[2].role, None);
        assert_eq!(c.steps[1].role, Some(Role::HighestPassing));
        let v = verdict_table(std::slice::from_ref(&c)).unwrap();
        let failed = &v.rows[0][v
            .header
            .iter()
            .position(|h| h == "failed criteria")
            .unwrap()];
        assert_eq!(
            failed,
            "loader-bound at step 3 (the loaders, not the cluster, were the limit): loader 1 of 2 fell behind: sent 71.3% of its schedule on time"
        );
        // One client: no loader columns.
        let one = SearchReport::of("o.json".into(), &fixture::capacity("ec2", &[1e3], 0));
        assert!(!step_table(&one).header.iter().any(|h| h == "loaders"));
    }
}
