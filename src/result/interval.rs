//! A phase's intervals: each one's counts, throughput, backlog and percentiles per operation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::spec::OpKind;
use crate::stats::{ErrorKind, Percentiles, Snapshot};

/// One operation kind in one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalOp {
    pub ok: u64,
    pub errors: u64,
    pub response_p50_ms: f64,
    pub response_p99_ms: f64,
    pub response_max_ms: f64,
    pub service_p50_ms: f64,
    pub service_p99_ms: f64,
}

/// One (normally one-second) interval of a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    pub start_s: f64,
    pub end_s: f64,
    /// In the warmup: left out of the summary.
    pub warmup: bool,
    /// After the measured window's end: the window's last operations completing. Its
    /// operations are in the summary's histograms, but not in its throughput.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drain: bool,
    pub ok: u64,
    pub errors: u64,
    pub ops_per_s: f64,
    pub by_op: BTreeMap<OpKind, IntervalOp>,
    /// Open loop: operations whose intended start had passed but were not yet sent.
    pub backlog: u64,
    pub max_send_lag_ms: f64,
    /// Open loop: the interval's send lag (actual send − intended start) at p50 and p99,
    /// all kinds together (0 in closed loop). A shard merge keeps the largest shard's: an
    /// upper bound, not the merged percentile (the HDR log holds no send-lag histograms).
    #[serde(default)]
    pub send_lag_p50_ms: f64,
    #[serde(default)]
    pub send_lag_p99_ms: f64,
    /// CPU time (user + system) the client used in the interval.
    pub client_cpu_s: f64,
    /// The interval's errors by kind (all operations).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
}

/// The operation kinds any of `intervals` saw, in kind order (built-ins first).
pub fn kinds_in<'a>(intervals: impl IntoIterator<Item = &'a IntervalRecord>) -> Vec<OpKind> {
    let kinds: std::collections::BTreeSet<OpKind> = intervals
        .into_iter()
        .flat_map(|i| i.by_op.keys().copied())
        .collect();
    kinds.into_iter().collect()
}

impl IntervalRecord {
    /// Inside the measured window: after the warmup, before the drain. Every figure of the
    /// window (throughput, warnings, comparisons) is taken over these intervals.
    pub fn measured(&self) -> bool {
        !self.warmup && !self.drain
    }

    /// After the warmup, the drain included: when the window's operations were being sent
    /// or completed (the backlog and the send lag are watched over these).
    pub fn after_warmup(&self) -> bool {
        !self.warmup
    }

    /// Successful ÷ attempted operations (None when nothing completed).
    pub fn availability(&self) -> Option<f64> {
        let attempted = self.ok + self.errors;
        (attempted > 0).then(|| self.ok as f64 / attempted as f64)
    }

    pub fn from_snapshot(
        start_s: f64,
        end_s: f64,
        warmup: bool,
        s: &Snapshot,
        backlog: u64,
        client_cpu_s: f64,
    ) -> Self {
        let by_op = s
            .kinds()
            .into_iter()
            .map(|k| {
                let o = s.op(k);
                let r = Percentiles::of(&o.response);
                let sv = Percentiles::of(&o.service);
                let rec = IntervalOp {
                    ok: o.ok,
                    errors: o.error_count(),
                    response_p50_ms: r.p50_ms,
                    response_p99_ms: r.p99_ms,
                    response_max_ms: r.max_ms,
                    service_p50_ms: sv.p50_ms,
                    service_p99_ms: sv.p99_ms,
                };
                (k, rec)
            })
            .collect();
        let secs = (end_s - start_s).max(1e-9);
        let lag = Percentiles::of(&s.send_lag);
        IntervalRecord {
            start_s,
            end_s,
            warmup,
            drain: false,
            ok: s.ok(),
            errors: s.errors(),
            ops_per_s: s.ok() as f64 / secs,
            by_op,
            backlog,
            max_send_lag_ms: s.max_send_lag_ns as f64 / 1e6,
            send_lag_p50_ms: lag.p50_ms,
            send_lag_p99_ms: lag.p99_ms,
            client_cpu_s,
            errors_by_kind: s.all().errors,
        }
    }
}
