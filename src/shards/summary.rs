//! A phase's summary over the shards: counts, rates and CPU summed, histograms added (so its
//! percentiles are those of every operation), the backlog from the merged intervals.

use std::collections::BTreeMap;

use super::merge::add_into;
use crate::error::Invalid;
use crate::result::{IntervalRecord, OpSummary, PhaseSummary};
use crate::spec::OpKind;
use crate::stats::{Percentiles, decode, encode, new_histogram};
use hdrhistogram::Histogram;

/// The shards' summaries of one phase as one; `intervals` are the merged phase's.
pub(super) fn merge_summaries(
    s: &[&PhaseSummary],
    intervals: &[IntervalRecord],
    threads: usize,
) -> Result<PhaseSummary, Invalid> {
    let sum = |f: fn(&PhaseSummary) -> u64| s.iter().map(|x| f(x)).sum::<u64>();
    let opt_sum = |f: fn(&PhaseSummary) -> Option<u64>| {
        s.iter()
            .map(|x| f(x))
            .collect::<Option<Vec<u64>>>()
            .map(|v| v.iter().sum::<u64>())
    };
    let measured_s = s.iter().map(|x| x.measured_s).fold(0.0, f64::max);
    let mut kinds: Vec<OpKind> = Vec::new();
    for x in s {
        for k in x.by_op.keys() {
            if !kinds.contains(k) {
                kinds.push(*k);
            }
        }
    }
    let mut by_op = BTreeMap::new();
    for k in kinds {
        by_op.insert(
            k,
            merge_op(s.iter().filter_map(|x| x.by_op.get(&k)).collect())?,
        );
    }
    let all = merge_op(s.iter().map(|x| &x.all).collect())?;
    let mut errors_by_kind = BTreeMap::new();
    for x in s {
        crate::stats::add_errors(&mut errors_by_kind, &x.errors_by_kind);
    }
    let client_cpu_s: f64 = s.iter().map(|x| x.client_cpu_s).sum();
    let ops_per_s: f64 = s.iter().map(|x| x.ops_per_s).sum();
    let scheduled_ops = opt_sum(|x| x.scheduled_ops);
    let sent_on_schedule = opt_sum(|x| x.sent_on_schedule);
    let send_lag = merge_send_lag(s)?;
    let mut merged = PhaseSummary {
        measured_s,
        ok: sum(|x| x.ok),
        errors: sum(|x| x.errors),
        ops_per_s,
        target_rate_per_s: s
            .iter()
            .map(|x| x.target_rate_per_s)
            .collect::<Option<Vec<f64>>>()
            .map(|v| v.iter().sum()),
        achieved_ratio: match (sent_on_schedule, scheduled_ops) {
            (Some(sent), Some(n)) if n > 0 => Some(sent as f64 / n as f64),
            _ => None,
        },
        scheduled_ops,
        sent_on_schedule,
        drain_s: s.iter().map(|x| x.drain_s).fold(0.0, f64::max),
        carried_over_ops: opt_sum(|x| x.carried_over_ops),
        by_op,
        all,
        errors_by_kind,
        driver: s
            .iter()
            .map(|x| x.driver.as_ref())
            .collect::<Option<Vec<_>>>()
            .map(|v| {
                let mut d = crate::result::DriverCounts::default();
                v.iter().for_each(|x| d.add(x));
                d
            }),
        client_cpu_s,
        client_cpu_util: client_cpu_s / (measured_s * threads.max(1) as f64).max(1e-9),
        ops_per_client_cpu_s: ops_per_s * measured_s / client_cpu_s.max(1e-9),
        client_max_rss_bytes: s.iter().map(|x| x.client_max_rss_bytes).max().unwrap_or(0),
        // The run's backlog at any moment is the shards' summed, per interval.
        max_backlog: intervals
            .iter()
            .filter(|iv| iv.after_warmup())
            .map(|iv| iv.backlog)
            .max()
            .unwrap_or(0),
        max_send_lag_ms: s.iter().map(|x| x.max_send_lag_ms).fold(0.0, f64::max),
        send_lag: None,
        send_lag_histogram_ns: None,
    };
    merged.set_send_lag(send_lag.as_ref());
    Ok(merged)
}

/// The shards' send lags added into one histogram (so its percentiles are exact); None
/// unless every shard recorded them (closed loop, or a shard's result written before they
/// were).
fn merge_send_lag(s: &[&PhaseSummary]) -> Result<Option<Histogram<u64>>, Invalid> {
    let mut merged = new_histogram();
    for x in s {
        let Some(h) = &x.send_lag_histogram_ns else {
            return Ok(None);
        };
        add_into(&mut merged, &decode(h)?, "a phase's send lag")?;
    }
    Ok(Some(merged))
}

/// One operation kind (or all) over the shards: counts and throughputs summed, histograms added.
fn merge_op(ops: Vec<&OpSummary>) -> Result<OpSummary, Invalid> {
    let mut response = new_histogram();
    let mut service = new_histogram();
    for o in &ops {
        add_into(&mut response, &decode(&o.response_histogram_ns)?, "a phase")?;
        add_into(&mut service, &decode(&o.service_histogram_ns)?, "a phase")?;
    }
    Ok(OpSummary {
        ok: ops.iter().map(|o| o.ok).sum(),
        errors: ops.iter().map(|o| o.errors).sum(),
        ops_per_s: ops.iter().map(|o| o.ops_per_s).sum(),
        response: Percentiles::of(&response),
        service: Percentiles::of(&service),
        response_histogram_ns: encode(&response),
        service_histogram_ns: encode(&service),
    })
}
