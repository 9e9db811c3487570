//! The capacity search's overload criteria: each step's checks (latency bounds, pending
//! compactions after the step, node CPU, error rate, achieved rate, a node that died, a
//! loader that fell behind), each passed, failed or unverified with why.

use crate::metrics::sampler::NotMeasured;
use crate::result::capacity::{
    Criteria, CriterionCheck as Check, LatencyBound, StepLoaders, StepShard,
};
use crate::result::{Merged, PhaseSummary, RunResult};

/// The loaders' part of a step from their merged result: each one's achieved rate and, for
/// each that fell behind, why ([`crate::shards::behind`]). A loader kept to its schedule when
/// it sent at least the search's achieved-rate criterion (`min_achieved`) of it on time, the
/// share the merged step is held to (else [`ON_TIME`](crate::shards::behind::ON_TIME)): a
/// loader is not called behind for a shortfall the step itself would pass.
pub fn step_loaders(m: &Merged, count: u64, min_achieved: Option<f64>) -> StepLoaders {
    let on_time = min_achieved.unwrap_or(crate::shards::behind::ON_TIME);
    let behind = crate::shards::behind::behind_all(&m.shards, on_time);
    StepLoaders {
        count,
        start_spread_ms: m.start_spread_ms,
        shards: m
            .shards
            .iter()
            .zip(behind)
            .map(|(f, behind)| StepShard {
                index: f.index,
                ops_per_s: f.ops_per_s,
                target_rate_per_s: f.target_rate_per_s,
                behind,
            })
            .collect(),
    }
}

/// A loader that fell behind fails the step as loader-bound: what it measured is the
/// loaders' limit, not the cluster's.
pub fn loaders_check(l: &StepLoaders) -> Check {
    let behind = l.behind();
    Check {
        criterion: if behind.is_empty() {
            format!("every loader kept up ({} loaders)", l.count)
        } else {
            format!("every loader kept up ({})", behind.join("; "))
        },
        value: Some(behind.len() as f64),
        limit: 0.0,
        unit: " behind".into(),
        passed: behind.is_empty(),
        unverified: None,
    }
}

/// Highest mean CPU of any node over the step's measured window, as a share of its CPUs:
/// from /proc for local nodes, else from the node's own process CPU metric, else from its
/// host's node exporter (the host's busy share: user + system).
pub fn max_node_cpu(run: &RunResult, node_cpus: &[f64]) -> Option<f64> {
    let m = run.metrics.as_ref()?;
    let main = run.main_phase()?;
    let from = main.offset_s + main.load.warmup_s;
    let to = main.offset_s + main.intervals.last().map(|i| i.end_s).unwrap_or(0.0);
    let window: Vec<_> = m
        .samples
        .iter()
        .filter(|s| s.t_s > from && s.t_s <= to + 0.5)
        .collect();
    let mean =
        |vals: Vec<f64>| (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64);
    // A node exporter's host's busy share, per sample of the window.
    let exporter = |j: usize| -> Vec<f64> {
        window
            .iter()
            .filter_map(|s| s.node_hosts.get(j).cloned().flatten())
            .map(|h| h.cpu_busy())
            .collect()
    };
    let mut exporters_used = vec![false; m.node_hosts.len()];
    let mut found: Vec<f64> = (0..m.nodes.len())
        .filter_map(|i| {
            let cpus = node_cpus.get(i).copied().filter(|c| *c > 0.0);
            let vals: Vec<f64> = window
                .iter()
                .filter_map(|s| {
                    // Local nodes: cores from /proc (or the exporter) over the node's CPUs;
                    // remote nodes: the JVM's own share of its host's CPUs.
                    let cores = s
                        .host
                        .as_ref()
                        .and_then(|h| h.node_cpu_cores.get(i).copied().flatten())
                        .or_else(|| s.nodes.get(i).and_then(|n| n.cpu_cores));
                    match (cores, cpus) {
                        (Some(c), Some(n)) => Some(c / n),
                        _ => s.nodes.get(i).and_then(|n| n.cpu_share),
                    }
                })
                .collect();
            let host = m
                .node_hosts
                .iter()
                .position(|h| same_node(&m.nodes[i], &h.node));
            if let Some(j) = host {
                exporters_used[j] = true;
            }
            mean(vals).or_else(|| host.and_then(|j| mean(exporter(j))))
        })
        .collect();
    // Hosts of nodes with no server metrics of their own.
    for (j, used) in exporters_used.iter().enumerate() {
        if !used {
            found.extend(mean(exporter(j)));
        }
    }
    found.into_iter().reduce(f64::max)
}

/// Whether a series' node name (`node1`, `10.0.0.5:7300`) is the node a node exporter was
/// given for (`node1`, `10.0.0.5`).
fn same_node(series_node: &str, given: &str) -> bool {
    series_node == given
        || series_node
            .rsplit_once(':')
            .is_some_and(|(host, _)| host == given)
}

/// A node that died during a step is an overload criterion of its own.
pub fn node_death_check(died: &[&str]) -> Check {
    Check {
        criterion: if died.is_empty() {
            "no node died".to_string()
        } else {
            format!("no node died ({} did)", died.join(", "))
        },
        value: Some(died.len() as f64),
        limit: 0.0,
        unit: " died".into(),
        passed: died.is_empty(),
        unverified: None,
    }
}

/// The response-time percentile a bound names, in ms, or why the step has none.
fn latency_of(summary: &PhaseSummary, b: &LatencyBound) -> Result<f64, NotMeasured> {
    let name = b.op.map(|k| k.name()).unwrap_or("all");
    let none = || NotMeasured(format!("no {name} operations completed in the step"));
    let op = match b.op {
        Some(k) => summary.by_op.get(&k).ok_or_else(none)?,
        None => &summary.all,
    };
    if op.ok == 0 {
        return Err(none());
    }
    let h = crate::stats::decode(&op.response_histogram_ns).map_err(|e| NotMeasured(e.0))?;
    Ok(h.value_at_quantile(b.percentile / 100.0) as f64 / 1e6)
}

/// Describes a latency bound, e.g. "read p50 ≤ 20 ms".
pub fn describe(b: &LatencyBound) -> String {
    let op = b.op.map(|k| k.name()).unwrap_or("all");
    format!("{op} p{} ≤ {} ms", trim(b.percentile), trim(b.max_ms))
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Applies every enabled criterion to a step. A value that could not be measured (`Err`
/// with why) makes its check unverified, never passed.
pub fn apply(
    c: &Criteria,
    s: &PhaseSummary,
    pending_after: Result<f64, NotMeasured>,
    node_cpu: Result<f64, NotMeasured>,
) -> Vec<Check> {
    let mut out = Vec::new();
    let check = |(criterion, unit): (String, &str),
                 value: Result<f64, NotMeasured>,
                 limit: f64,
                 ok: &dyn Fn(f64) -> bool| {
        let (value, passed, unverified) = match value {
            Ok(v) => (Some(v), ok(v), None),
            Err(why) => (None, false, Some(why.0)),
        };
        Check {
            criterion,
            value,
            limit,
            unit: unit.to_string(),
            passed,
            unverified,
        }
    };
    let upper = |criterion, value, limit: f64| check(criterion, value, limit, &|v| v <= limit);
    for b in &c.latency {
        out.push(upper((describe(b), " ms"), latency_of(s, b), b.max_ms));
    }
    if let Some(max) = c.max_pending_compactions {
        out.push(upper(
            (
                format!(
                    "pending compactions {}s after the step ≤ {}",
                    trim(c.pending_after_s),
                    trim(max)
                ),
                " pending",
            ),
            pending_after,
            max,
        ));
    }
    if let Some(max) = c.max_node_cpu {
        out.push(upper(
            (format!("node CPU ≤ {}%", trim(max * 100.0)), "%"),
            node_cpu.map(|v| v * 100.0),
            max * 100.0,
        ));
    }
    if let Some(max) = c.max_error_rate {
        let ops = (s.ok + s.errors).max(1) as f64;
        out.push(upper(
            (format!("error rate ≤ {}%", trim(max * 100.0)), "%"),
            Ok(100.0 * s.errors as f64 / ops),
            max * 100.0,
        ));
    }
    if let Some(min) = c.min_achieved {
        let limit = min * 100.0;
        out.push(check(
            (format!("achieved rate ≥ {}% of target", trim(limit)), "%"),
            s.achieved_ratio.map(|a| a * 100.0).ok_or_else(|| {
                NotMeasured("no schedule to compare with (not an open-loop step)".into())
            }),
            limit,
            &|v| v >= limit,
        ));
    }
    out
}
