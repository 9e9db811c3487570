//! Each shard's own figures, kept in the merged result, and the shards that fell behind: their
//! schedule, their backlog, their client CPU or their service times against the others'.

use super::input::ShardInput;
use crate::result::{ShardFigures, Warning};

/// Every shard's own main-phase figures, in shard order.
pub fn shard_figures(shards: &[ShardInput]) -> Vec<ShardFigures> {
    shards
        .iter()
        .map(|s| {
            let r = &s.result;
            let main = r.main_phase();
            let summary = main.and_then(|p| p.summary.as_ref());
            let final_backlog = main
                .and_then(|p| p.intervals.iter().rev().find(|iv| !iv.drain))
                .map_or(0, |iv| iv.backlog);
            ShardFigures {
                index: r.shard.as_ref().map_or(0, |s| s.index),
                path: s.path.clone(),
                status: r.status.clone(),
                main_started_unix_s: r.shard.as_ref().and_then(|s| s.main_started_unix_s),
                ops_per_s: summary.map_or(0.0, |s| s.ops_per_s),
                target_rate_per_s: summary.and_then(|s| s.target_rate_per_s),
                achieved_ratio: summary.and_then(|s| s.achieved_ratio),
                client_cpu_s: summary.map_or(0.0, |s| s.client_cpu_s),
                client_cpu_util: summary.map_or(0.0, |s| s.client_cpu_util),
                max_backlog: summary.map_or(0, |s| s.max_backlog),
                final_backlog,
                service_p50_ms: summary.map_or(0.0, |s| s.all.service.p50_ms),
            }
        })
        .collect()
}

/// Latest minus earliest main-phase start, in ms; 0 unless every shard recorded its start.
pub fn start_spread_ms(figures: &[ShardFigures]) -> f64 {
    let starts: Vec<f64> = figures
        .iter()
        .filter_map(|f| f.main_started_unix_s)
        .collect();
    if starts.len() == figures.len() && !starts.is_empty() {
        let lo = starts.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (hi - lo) * 1000.0
    } else {
        0.0
    }
}

/// The share of its schedule a shard must send on time to have kept up, unless the caller
/// judges by its own threshold (a capacity search: its achieved-rate criterion).
pub const ON_TIME: f64 = 0.99;

/// A warning for each of the `count` shards that fell behind, naming why.
pub fn behind_warnings(figures: &[ShardFigures], count: u64) -> Vec<Warning> {
    figures
        .iter()
        .zip(behind_all(figures, ON_TIME))
        .filter(|(_, reasons)| !reasons.is_empty())
        .map(|(f, reasons)| Warning::ShardBehind {
            shard: format!("{}/{count}", f.index),
            reasons,
        })
        .collect()
}

/// Why each shard fell behind, if it did (see [`behind_reasons`]).
pub fn behind_all(figures: &[ShardFigures], on_time: f64) -> Vec<Vec<String>> {
    figures
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut others: Vec<f64> = figures
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, o)| o.service_p50_ms)
                .collect();
            others.sort_by(f64::total_cmp);
            let median = (!others.is_empty()).then(|| crate::stats::median_of_sorted(&others));
            behind_reasons(f, median, on_time)
        })
        .collect()
}

/// Why a shard fell behind, if it did: under `on_time` of its schedule sent on time, a backlog left at
/// the window's end, its client CPU near saturation, or a median service time far above the
/// other shards' (`others_service_p50_ms`, their median) against the same cluster: a client
/// too slow to take its responses in time (CPU-starved, say) inflates the latencies it
/// records without missing its schedule.
pub fn behind_reasons(
    f: &ShardFigures,
    others_service_p50_ms: Option<f64>,
    on_time: f64,
) -> Vec<String> {
    let mut r = Vec::new();
    if let Some(ratio) = f.achieved_ratio
        && ratio < on_time
    {
        r.push(format!(
            "sent {:.1}% of its schedule on time",
            ratio * 100.0
        ));
    }
    if let Some(t) = f.target_rate_per_s
        && f.final_backlog as f64 > 0.1 * t
    {
        r.push(format!(
            "{} operations behind its schedule at the end",
            f.final_backlog
        ));
    }
    if f.client_cpu_util > 0.9 {
        r.push(format!(
            "client CPU {:.0}% of its threads",
            f.client_cpu_util * 100.0
        ));
    }
    if let Some(o) = others_service_p50_ms
        && f.service_p50_ms > 3.0 * o
        && f.service_p50_ms > o + 1.0
    {
        r.push(format!(
            "median service time {:.2} ms against the other shards' {o:.2} ms",
            f.service_p50_ms
        ));
    }
    r
}
