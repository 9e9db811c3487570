//! A phase's intervals: each one's counts, throughput, backlog and percentiles per operation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::spec::OpKind;
use crate::stats::{ErrorKind, Percentiles, Snapshot};

/// One operation kind in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalOp {
    pub ok: u64,
    pub errors: u64,
    pub response_p50_ms: f64,
    pub response_p99_ms: f64,
    pub response_max_ms: f64,
    pub service_p50_ms: f64,
    pub service_p99_ms: f64,
}

/// An interval's operations by kind, in kind order: a sorted vector, not a tree. A result
/// holds thousands of records (a day-long run's 8,280), and a `BTreeMap`'s node takes room for
/// eleven kinds where an interval has one to three.
pub type ByOp = litemap::LiteMap<OpKind, IntervalOp>;

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
    pub by_op: ByOp,
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

/// How finely a phase's intervals are kept, by how far into the phase they start (the
/// sampler thins out by the same rule over the run's time): as measured (normally each second)
/// for the first hour, then one record per 10 s, and one per minute after 12 hours. Shards of
/// one run start their phases together, so their records stay aligned. A day-long run keeps 8,280 records instead of 86,400; each coarse record is
/// built from its intervals' merged histograms, so its percentiles are exact. The HDR interval
/// log and the per-interval CSV keep every interval.
pub fn kept_width_s(run_time_s: f64) -> f64 {
    if run_time_s < FULL_RESOLUTION_S {
        0.0
    } else if run_time_s < 12.0 * 3600.0 {
        10.0
    } else {
        60.0
    }
}

/// How long a run's intervals are kept as measured (see [`kept_width_s`]).
pub const FULL_RESOLUTION_S: f64 = 3600.0;

/// Intervals merged into one record of [`kept_width_s`]: their histograms and counts summed,
/// the largest backlog kept, their client CPU added up. A record never spans a change of warmup
/// or drain.
#[derive(Default)]
pub struct Coarsening {
    pending: Option<Pending>,
    /// The last record's snapshot, emptied for the next: a snapshot holds seven HDR histograms
    /// (1.3 MiB of counts), and a new one every 10 s left blocks of that size to the allocator
    /// from the first hour on.
    spare: Option<Snapshot>,
}

struct Pending {
    start_s: f64,
    end_s: f64,
    warmup: bool,
    drain: bool,
    snapshot: Snapshot,
    backlog: u64,
    client_cpu_s: f64,
}

impl Coarsening {
    /// Takes one interval of a phase (`snapshot` its operations, `rec` its record); returns
    /// the records to keep, in order: `rec` itself while the phase is young, a merged record
    /// when one is complete.
    pub fn take(&mut self, snapshot: &Snapshot, rec: IntervalRecord) -> Vec<IntervalRecord> {
        let width = kept_width_s(rec.start_s);
        let mut out = Vec::new();
        if let Some(p) = &self.pending
            && (p.warmup != rec.warmup
                || p.drain != rec.drain
                || rec.end_s - p.start_s > width.max(p.end_s - p.start_s) + 1e-6)
        {
            out.extend(self.flush());
        }
        if width <= 0.0 || rec.end_s - rec.start_s >= width {
            out.push(rec);
            return out;
        }
        let spare = &mut self.spare;
        let p = self.pending.get_or_insert_with(|| Pending {
            start_s: rec.start_s,
            end_s: rec.start_s,
            warmup: rec.warmup,
            drain: rec.drain,
            snapshot: spare.take().unwrap_or_default(),
            backlog: 0,
            client_cpu_s: 0.0,
        });
        p.end_s = rec.end_s;
        p.snapshot.add_stats(snapshot);
        p.backlog = p.backlog.max(rec.backlog);
        p.client_cpu_s += rec.client_cpu_s;
        if p.end_s - p.start_s >= width - 1e-6 {
            out.extend(self.flush());
        }
        out
    }

    /// The record of the intervals taken since the last one returned, if any.
    pub fn flush(&mut self) -> Option<IntervalRecord> {
        let p = self.pending.take()?;
        let mut r = IntervalRecord::from_snapshot(
            p.start_s,
            p.end_s,
            p.warmup,
            &p.snapshot,
            p.backlog,
            p.client_cpu_s,
        );
        r.drain = p.drain;
        let mut snapshot = p.snapshot;
        snapshot.reset();
        self.spare = Some(snapshot);
        Some(r)
    }
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
            errors_by_kind: s.errors_by_kind(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One second of `n` writes at `ms` each, `start_s` into the phase.
    fn second(start_s: f64, n: u64, ms: u64, warmup: bool) -> (Snapshot, IntervalRecord) {
        let mut s = Snapshot::default();
        for _ in 0..n {
            s.record_ok(OpKind::Write, ms * 1_000_000, ms * 900_000);
        }
        let r = IntervalRecord::from_snapshot(start_s, start_s + 1.0, warmup, &s, n / 10, 0.01);
        (s, r)
    }

    #[test]
    fn the_first_hour_is_kept_as_measured_then_ten_seconds_make_one_exact_record() {
        let mut c = Coarsening::default();
        // Ten seconds before the phase's first hour ends, as measured, then merged.
        let mut kept = Vec::new();
        for i in 3_590..3_620 {
            // One slow second among fast ones: the merged p99 is the histograms', not a mean.
            let ms = if i == 3_605 { 100 } else { 1 };
            let (s, r) = second(i as f64, 100, ms, false);
            kept.extend(c.take(&s, r));
        }
        kept.extend(c.flush());
        let widths: Vec<f64> = kept.iter().map(|r| r.end_s - r.start_s).collect();
        assert_eq!(widths[..10], [1.0; 10]);
        assert_eq!(widths[10..], [10.0, 10.0]);
        let slow = &kept[10];
        assert_eq!(
            (slow.start_s, slow.end_s, slow.ok),
            (3_600.0, 3_610.0, 1_000)
        );
        assert_eq!(slow.ops_per_s, 100.0);
        assert_eq!(slow.backlog, 10, "the largest backlog of its seconds");
        assert!((slow.client_cpu_s - 0.1).abs() < 1e-9);
        let w = &slow.by_op[&OpKind::Write];
        // 100 of 1,000 operations took 100 ms: p99 is 100 ms, p50 1 ms.
        assert!((w.response_p99_ms - 100.0).abs() < 0.1, "{w:?}");
        assert!((w.response_p50_ms - 1.0).abs() < 0.01, "{w:?}");
        // The next record starts from an emptied snapshot: nothing of the slow second.
        let next = &kept[11];
        assert_eq!((next.start_s, next.ok, next.backlog), (3_610.0, 1_000, 10));
        let w = &next.by_op[&OpKind::Write];
        assert!((w.response_max_ms - 1.0).abs() < 0.01, "{w:?}");
    }

    #[test]
    fn a_merged_record_never_spans_the_end_of_the_warmup_and_a_day_keeps_few_records() {
        let mut c = Coarsening::default();
        let mut kept = Vec::new();
        for i in 7_200..7_225 {
            let (s, r) = second(i as f64, 10, 1, i < 7_205);
            kept.extend(c.take(&s, r));
        }
        kept.extend(c.flush());
        let spans: Vec<(f64, f64, bool)> = kept
            .iter()
            .map(|r| (r.start_s, r.end_s, r.warmup))
            .collect();
        assert_eq!(
            spans,
            [
                (7_200.0, 7_205.0, true),
                (7_205.0, 7_215.0, false),
                (7_215.0, 7_225.0, false)
            ]
        );
        // Ten minutes of one-second intervals keep 600 records in the first hour, 60 after it
        // and 10 after 12 hours: a day keeps 3,600 + 11 × 360 + 12 × 60 = 8,280.
        let (s, _) = second(0.0, 1, 1, false);
        for (from, want) in [(0, 600), (3_600, 60), (12 * 3_600, 10)] {
            let mut c = Coarsening::default();
            let mut n = 0;
            for i in from..from + 600 {
                let r = IntervalRecord::from_snapshot(i as f64, i as f64 + 1.0, false, &s, 0, 0.0);
                n += c.take(&s, r).len();
            }
            n += c.flush().into_iter().count();
            assert_eq!(n, want, "{from}");
        }
    }
}
