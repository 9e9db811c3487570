//! A phase of a run: its load, its intervals and the summary of its measured window, per
//! operation and all together, with the raw histograms.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::IntervalRecord;
use crate::spec::{LoadSpec, OpKind};
use crate::stats::{ErrorKind, OpStats, Percentiles, encode};

/// Whole-phase figures for one operation kind (or all merged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    pub ok: u64,
    pub errors: u64,
    pub ops_per_s: f64,
    pub response: Percentiles,
    pub service: Percentiles,
    /// HDR histograms, V2-deflate, base64, in nanoseconds.
    pub response_histogram_ns: String,
    pub service_histogram_ns: String,
}

impl OpSummary {
    pub fn of(o: &OpStats, secs: f64) -> OpSummary {
        Self::with_rate(o, o.ok as f64 / secs.max(1e-9))
    }

    /// `o`'s figures with a throughput worked out by the caller.
    pub fn with_rate(o: &OpStats, ops_per_s: f64) -> OpSummary {
        OpSummary {
            ok: o.ok,
            errors: o.error_count(),
            ops_per_s,
            response: Percentiles::of(&o.response),
            service: Percentiles::of(&o.service),
            response_histogram_ns: encode(&o.response),
            service_histogram_ns: encode(&o.service),
        }
    }
}

/// The measured window of a phase (warmup excluded).
/// Retries and speculative executions the driver made during a phase: an operation retried
/// or sped up is still one operation, and its response time includes them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverCounts {
    /// Requests sent again after an attempt failed (by the retry policy).
    pub retries: u64,
    /// Extra requests sent because the first was slow to answer.
    pub speculative_executions: u64,
    /// The attempt errors that were retried, by kind (whether the retry then succeeded or
    /// not: an operation that failed in the end is also in `errors_by_kind`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retried_errors: BTreeMap<ErrorKind, u64>,
}

impl DriverCounts {
    /// What happened between two snapshots.
    pub fn since(&self, before: &DriverCounts) -> DriverCounts {
        DriverCounts {
            retries: self.retries.saturating_sub(before.retries),
            speculative_executions: self
                .speculative_executions
                .saturating_sub(before.speculative_executions),
            retried_errors: self
                .retried_errors
                .iter()
                .map(|(k, n)| {
                    (
                        *k,
                        n.saturating_sub(before.retried_errors.get(k).copied().unwrap_or(0)),
                    )
                })
                .filter(|(_, n)| *n > 0)
                .collect(),
        }
    }

    /// Adds another shard's counts.
    pub fn add(&mut self, other: &DriverCounts) {
        self.retries += other.retries;
        self.speculative_executions += other.speculative_executions;
        crate::stats::add_errors(&mut self.retried_errors, &other.retried_errors);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    /// The window: from the end of the warmup to the end of the schedule (or the stop).
    pub measured_s: f64,
    /// Every operation of the window, those completing in the drain included.
    pub ok: u64,
    pub errors: u64,
    /// Successful operations completed inside the window ÷ the window.
    pub ops_per_s: f64,
    pub target_rate_per_s: Option<f64>,
    /// Open loop: operations of the window's schedule sent before it ended ÷ those it
    /// scheduled (so a run that kept its schedule reads 1.0, however short).
    pub achieved_ratio: Option<f64>,
    /// Open loop: operations whose intended start lay in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_ops: Option<u64>,
    /// Open loop: how many of them were sent before the window ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_on_schedule: Option<u64>,
    /// From the window's end until the last operation completed.
    #[serde(default)]
    pub drain_s: f64,
    /// Open loop: operations the warmup scheduled but sent late, inside the window (the
    /// window caught up a backlog; its throughput includes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_over_ops: Option<u64>,
    pub by_op: BTreeMap<OpKind, OpSummary>,
    pub all: OpSummary,
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    /// What the driver did beyond one request per operation, over the whole phase (warmup
    /// included); None in results written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<DriverCounts>,
    pub client_cpu_s: f64,
    /// Client CPU ÷ (window × client threads).
    pub client_cpu_util: f64,
    pub ops_per_client_cpu_s: f64,
    pub client_max_rss_bytes: u64,
    pub max_backlog: u64,
    pub max_send_lag_ms: f64,
    /// Open loop: how late the client sent each operation of the window (actual send −
    /// intended start), all kinds together. Response time = send lag + service time, per
    /// operation: a send lag near the gap between response and service time means that gap
    /// is the client's, not the cluster's. None in closed loop and in results written before
    /// it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag: Option<Percentiles>,
    /// The send lags as an HDR histogram (V2-deflate, base64, nanoseconds): a shard merge
    /// adds them, so the merged percentiles are exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_histogram_ns: Option<String>,
}

impl PhaseSummary {
    /// Sets the send-lag figures from the window's histogram (None: not recorded).
    pub fn set_send_lag(&mut self, h: Option<&hdrhistogram::Histogram<u64>>) {
        self.send_lag = h.map(Percentiles::of);
        self.send_lag_histogram_ns = h.map(encode);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    /// Seconds from the run's start to the phase's start: an interval's time on the run's
    /// axis (the one [`crate::result::series::Sample::t_s`] uses) is `offset_s + start_s`.
    #[serde(default)]
    pub offset_s: f64,
    pub load: LoadSpec,
    pub intervals: Vec<IntervalRecord>,
    pub summary: Option<PhaseSummary>,
}
