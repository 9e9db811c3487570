//! The shards of one run merged into one result, exactly: per interval of a common grid (the
//! shards' main phases start together), counts and throughputs are summed and latency
//! histograms added per operation kind, from each shard's HDR interval log; the phases'
//! histograms are added the same way. Percentiles are always those of the merged histograms,
//! never an average of the shards' percentiles. Every shard's own figures are kept, and a shard
//! that fell behind is named.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::behind::{behind_warnings, shard_figures, start_spread_ms};
use super::input::{ShardInput, check};
use super::summary::merge_summaries;
use crate::error::Invalid;
use crate::result::hlog::LogEntry;
use crate::result::{
    IntervalRecord, Merged, PhaseResult, PhaseSummary, RunResult, RunStatus, ShardFigures, Warning,
    phase_warnings,
};
use crate::spec::load::Share;
use crate::spec::{LoadMode, LoadSpec, OpKind};
use crate::stats::{Percentiles, new_histogram};

/// A histogram's place in a shard's HDR log: its tag and its start, in ms on the shard's axis.
type Key = (String, i64);

/// The `k`th interval of a phase in one shard: (shard, its phase, the interval).
type ShardInterval<'a> = (usize, &'a PhaseResult, &'a IntervalRecord);

fn ms(t_s: f64) -> i64 {
    (t_s * 1000.0).round() as i64
}

pub(super) fn add_into(
    into: &mut Histogram<u64>,
    h: &Histogram<u64>,
    what: &str,
) -> Result<(), Invalid> {
    into.add(h)
        .map_err(|e| crate::invalid!("adding the histograms of {what}: {e:?}"))
}

/// Merges the shards (checked by [`check`]) into one run result and its HDR interval log.
pub fn merge(shards: &mut [ShardInput]) -> Result<(RunResult, Vec<LogEntry>), Invalid> {
    check(shards)?;
    let shards: &[ShardInput] = shards;
    let first = &shards[0].result;
    let of = first.shard.clone().expect("checked");
    let started = shards
        .iter()
        .map(|s| s.result.started_unix_s)
        .min()
        .unwrap_or(first.started_unix_s);
    let sources = Sources::new(shards);
    let mut log: Vec<LogEntry> = Vec::new();
    let mut phases = Vec::new();
    for (pi, p0) in first.phases.iter().enumerate() {
        let parts = sources.parts(pi, p0)?;
        phases.push(sources.phase(&parts, p0, started, &mut log)?);
    }
    let figures = shard_figures(shards);
    let start_spread_ms = start_spread_ms(&figures);
    let warnings = warnings(shards, &phases, &figures, of.count, start_spread_ms);
    let merged = RunResult {
        started_unix_s: started,
        finished_unix_s: shards
            .iter()
            .map(|s| s.result.finished_unix_s)
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max()),
        status: shards
            .iter()
            .map(|s| s.result.status.clone())
            .find(|st| *st != RunStatus::Completed)
            .unwrap_or(RunStatus::Completed),
        phases,
        warnings,
        shard: None,
        reads_verified: shards
            .iter()
            .filter_map(|s| s.result.reads_verified.as_ref())
            .fold(
                None,
                |acc: Option<crate::result::verify::ReadsVerified>, r| {
                    let mut a = acc.unwrap_or_default();
                    a.add(r, crate::result::verify::FIRST_KEPT);
                    Some(a)
                },
            ),
        merged: Some(Merged {
            run_id: of.run_id.clone(),
            start_spread_ms,
            shards: figures,
        }),
        ..first.clone()
    };
    Ok((merged, log))
}

/// The merged run's warnings: each phase's, the shards that fell behind, a wide spread of their
/// starts, and what the shards saw of the cluster (a node dying, compactions in the window, a
/// node whose settings differ), each once.
fn warnings(
    shards: &[ShardInput],
    phases: &[PhaseResult],
    figures: &[ShardFigures],
    count: u64,
    start_spread_ms: f64,
) -> Vec<Warning> {
    let mut warnings: Vec<Warning> = Vec::new();
    for p in phases {
        if let Some(s) = &p.summary {
            warnings.extend(phase_warnings(&p.name, s));
        }
    }
    warnings.extend(behind_warnings(figures, count));
    if start_spread_ms > 50.0 {
        warnings.push(Warning::ShardStartSpread {
            spread_ms: start_spread_ms,
        });
    }
    for s in shards {
        for w in &s.result.warnings {
            let keep = matches!(
                w,
                Warning::NodeDied { .. }
                    | Warning::LedgerFailed { .. }
                    | Warning::Interrupted
                    | Warning::CompactionsInWindow { .. }
                    | Warning::HlogFailed { .. }
                    | Warning::IntervalCsvFailed { .. }
                    | Warning::HostSaturated { .. }
                    | Warning::NodeSettingsDiffer { .. }
            );
            if keep && !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    warnings
}

/// The shards being merged, with each one's HDR log by [`Key`].
struct Sources<'a> {
    shards: &'a [ShardInput],
    /// In start order: an interval a long run kept merged ([`crate::result::kept_width_s`])
    /// adds up the histograms of every second it spans.
    logs: Vec<BTreeMap<Key, &'a Histogram<u64>>>,
}

impl<'a> Sources<'a> {
    fn new(shards: &'a [ShardInput]) -> Sources<'a> {
        let logs = shards
            .iter()
            .map(|s| {
                s.hlog
                    .iter()
                    .map(|(tag, start, _, h)| ((tag.clone(), ms(*start)), h))
                    .collect()
            })
            .collect();
        Sources { shards, logs }
    }

    /// Phase `pi` of every shard, which must be shard 0's `p0`.
    fn parts(&self, pi: usize, p0: &PhaseResult) -> Result<Vec<(usize, &'a PhaseResult)>, Invalid> {
        let mut parts = Vec::new();
        for (si, s) in self.shards.iter().enumerate() {
            match s.result.phases.get(pi).filter(|p| p.name == p0.name) {
                Some(p) => parts.push((si, p)),
                None => {
                    return Err(crate::invalid!(
                        "{}: has no {} phase where shard 0 has one: merge shards of one run, all finished",
                        s.path.display(),
                        p0.name
                    ));
                }
            }
        }
        Ok(parts)
    }

    /// One phase from its `parts` (see [`Sources::parts`]): its intervals (their histograms
    /// appended to `log`), summary and load.
    fn phase(
        &self,
        parts: &[(usize, &PhaseResult)],
        p0: &PhaseResult,
        started: u64,
        log: &mut Vec<LogEntry>,
    ) -> Result<PhaseResult, Invalid> {
        // The phase starts when the earliest shard's did, on the merged run's axis.
        let abs =
            |si: usize, p: &PhaseResult| self.shards[si].result.started_unix_s as f64 + p.offset_s;
        let phase_start = parts
            .iter()
            .map(|(si, p)| abs(*si, p))
            .fold(f64::INFINITY, f64::min);
        let offset_s = phase_start - started as f64;
        let n = parts
            .iter()
            .map(|(_, p)| p.intervals.len())
            .max()
            .unwrap_or(0);
        let mut intervals = Vec::with_capacity(n);
        for k in 0..n {
            let ivs: Vec<ShardInterval> = parts
                .iter()
                .filter_map(|(si, p)| p.intervals.get(k).map(|iv| (*si, *p, iv)))
                .collect();
            intervals.push(self.interval(&ivs, &p0.name, offset_s, log)?);
        }
        let summaries: Vec<&PhaseSummary> = parts
            .iter()
            .filter_map(|(_, p)| p.summary.as_ref())
            .collect();
        let threads: usize = parts.iter().map(|(_, p)| p.load.threads).sum();
        let summary = if summaries.len() == parts.len() && !summaries.is_empty() {
            Some(merge_summaries(&summaries, &intervals, threads)?)
        } else {
            None
        };
        Ok(PhaseResult {
            name: p0.name.clone(),
            offset_s,
            load: merged_load(&p0.load, parts, threads),
            intervals,
            summary,
        })
    }

    /// One interval of the shards' `ivs` of phase `phase`: counts summed, percentiles from the
    /// added histograms, which are appended to `log` at `offset_s` + the interval's start.
    fn interval(
        &self,
        ivs: &[ShardInterval],
        phase: &str,
        offset_s: f64,
        log: &mut Vec<LogEntry>,
    ) -> Result<IntervalRecord, Invalid> {
        let mut rec = summed(ivs);
        for ((op, which), h) in &self.histograms(ivs)? {
            let pc = Percentiles::of(h);
            let e = rec
                .by_op
                .get_mut(op)
                .expect("summed made an entry per operation");
            if *which == "response" {
                (e.response_p50_ms, e.response_p99_ms, e.response_max_ms) =
                    (pc.p50_ms, pc.p99_ms, pc.max_ms);
            } else {
                (e.service_p50_ms, e.service_p99_ms) = (pc.p50_ms, pc.p99_ms);
            }
            log.push((
                format!("{phase}/{op}/{which}"),
                offset_s + rec.start_s,
                rec.end_s - rec.start_s,
                h.clone(),
            ));
        }
        Ok(rec)
    }

    /// The response and service histograms of each operation in `ivs`, added over the shards
    /// from their HDR logs; a shard with operations but no histogram for them is refused.
    fn histograms(
        &self,
        ivs: &[ShardInterval],
    ) -> Result<BTreeMap<(OpKind, &'static str), Histogram<u64>>, Invalid> {
        let mut hists: BTreeMap<(OpKind, &str), Histogram<u64>> = BTreeMap::new();
        for (si, p, iv) in ivs {
            for (op, o) in &iv.by_op {
                for which in ["response", "service"] {
                    let tag = format!("{}/{op}/{which}", p.name);
                    let from = (tag.clone(), ms(p.offset_s + iv.start_s));
                    let to = (tag, ms(p.offset_s + iv.end_s));
                    let mut found = false;
                    for h in self.logs[*si].range(from.clone()..to).map(|(_, h)| h) {
                        add_into(
                            hists.entry((*op, which)).or_insert_with(new_histogram),
                            h,
                            &self.shards[*si].path.display().to_string(),
                        )?;
                        found = true;
                    }
                    if !found && o.ok > 0 {
                        return Err(crate::invalid!(
                            "{}: no {} histogram at {:.3}s for {} ok operations: its HDR log does not go with its result",
                            self.shards[*si].path.with_extension("hlog").display(),
                            from.0,
                            p.offset_s + iv.start_s,
                            o.ok
                        ));
                    }
                }
            }
        }
        Ok(hists)
    }
}

/// The shards' intervals as one, before its percentiles: counts, throughputs, backlogs and
/// errors summed (per operation too), the largest send lag.
fn summed(ivs: &[ShardInterval]) -> IntervalRecord {
    let (_, _, iv0) = ivs[0];
    let mut rec = IntervalRecord {
        start_s: ivs
            .iter()
            .map(|x| x.2.start_s)
            .fold(f64::INFINITY, f64::min),
        end_s: ivs.iter().map(|x| x.2.end_s).fold(0.0, f64::max),
        warmup: iv0.warmup,
        drain: iv0.drain,
        ok: 0,
        errors: 0,
        ops_per_s: 0.0,
        by_op: Default::default(),
        backlog: 0,
        max_send_lag_ms: 0.0,
        send_lag_p50_ms: 0.0,
        send_lag_p99_ms: 0.0,
        client_cpu_s: 0.0,
        errors_by_kind: BTreeMap::new(),
    };
    for (_, _, iv) in ivs {
        rec.ok += iv.ok;
        rec.errors += iv.errors;
        rec.ops_per_s += iv.ops_per_s;
        rec.backlog += iv.backlog;
        rec.max_send_lag_ms = rec.max_send_lag_ms.max(iv.max_send_lag_ms);
        // The largest shard's: an upper bound of the merged percentiles (no histogram here).
        rec.send_lag_p50_ms = rec.send_lag_p50_ms.max(iv.send_lag_p50_ms);
        rec.send_lag_p99_ms = rec.send_lag_p99_ms.max(iv.send_lag_p99_ms);
        rec.client_cpu_s += iv.client_cpu_s;
        for (kind, n) in &iv.errors_by_kind {
            *rec.errors_by_kind.entry(*kind).or_default() += n;
        }
        for (op, o) in &iv.by_op {
            let e = rec.by_op.entry(*op).or_default();
            e.ok += o.ok;
            e.errors += o.errors;
        }
    }
    rec
}

/// The phase's load as the shards drove it together: the whole of it, their threads, rates and
/// requests in flight summed.
fn merged_load(load: &LoadSpec, parts: &[(usize, &PhaseResult)], threads: usize) -> LoadSpec {
    let in_flight: usize = parts
        .iter()
        .map(|(_, p)| match p.load.mode {
            LoadMode::Open { max_in_flight, .. } => max_in_flight,
            LoadMode::Closed { concurrency } => concurrency,
        })
        .sum();
    let mut load = load.clone();
    load.share = Share::WHOLE;
    load.threads = threads;
    load.mode = match load.mode {
        LoadMode::Open { .. } => LoadMode::Open {
            rate_per_s: parts
                .iter()
                .map(|(_, p)| match p.load.mode {
                    LoadMode::Open { rate_per_s, .. } => rate_per_s,
                    LoadMode::Closed { .. } => 0.0,
                })
                .sum(),
            max_in_flight: in_flight,
        },
        LoadMode::Closed { .. } => LoadMode::Closed {
            concurrency: in_flight,
        },
    };
    load
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::result::fixture;
    use crate::result::{OpSummary, ShardOf};
    use crate::spec::OpKind;
    use crate::stats::Snapshot;

    /// Shard `index` of 2 of run "r1": 10 one-second intervals of `per_s` writes whose
    /// response times are `latency(k, j)` ms (service time: 80% of it, send lag the rest).
    pub(crate) fn shard(index: u64, per_s: u64, latency: impl Fn(u64, u64) -> f64) -> ShardInput {
        let mut r = fixture::run("lab", &fixture::RunShape::default());
        let offset = 0.25 + index as f64 * 0.5;
        let mut measured = Snapshot::default();
        let mut intervals = Vec::new();
        let mut hlog = Vec::new();
        for k in 0..10u64 {
            let mut snap = Snapshot::default();
            for j in 0..per_s {
                let ns = (latency(k, j) * 1e6) as u64;
                snap.record_ok(OpKind::Write, ns, ns * 8 / 10);
                snap.record_send_lag(ns - ns * 8 / 10);
            }
            let start = k as f64;
            let o = snap.op(OpKind::Write);
            hlog.push((
                "main/write/response".into(),
                offset + start,
                1.0,
                o.response.clone(),
            ));
            hlog.push((
                "main/write/service".into(),
                offset + start,
                1.0,
                o.service.clone(),
            ));
            intervals.push(IntervalRecord::from_snapshot(
                start,
                start + 1.0,
                false,
                &snap,
                3,
                0.2,
            ));
            measured.add_stats(&snap);
        }
        let p = &mut r.phases[0];
        p.offset_s = offset;
        p.intervals = intervals;
        p.load.mode = LoadMode::Open {
            rate_per_s: per_s as f64,
            max_in_flight: 512,
        };
        let s = p.summary.as_mut().unwrap();
        s.measured_s = 10.0;
        s.ok = measured.ok();
        s.ops_per_s = measured.ok() as f64 / 10.0;
        s.target_rate_per_s = Some(per_s as f64);
        s.scheduled_ops = Some(10 * per_s);
        s.sent_on_schedule = Some(10 * per_s);
        s.achieved_ratio = Some(1.0);
        s.by_op = [(
            OpKind::Write,
            OpSummary::of(measured.op(OpKind::Write), 10.0),
        )]
        .into();
        s.all = OpSummary::of(&measured.all(), 10.0);
        s.set_send_lag(Some(&measured.send_lag));
        s.max_send_lag_ms = measured.max_send_lag_ns as f64 / 1e6;
        r.shard = Some(ShardOf {
            run_id: "r1".into(),
            index,
            count: 2,
            start: "barrier".into(),
            main_started_unix_s: Some(1_000.0 + index as f64 * 0.004),
        });
        ShardInput {
            path: format!("r1.shard-{index}.json").into(),
            result: r,
            hlog,
        }
    }

    pub(crate) fn fast(k: u64, j: u64) -> f64 {
        1.0 + ((k * 37 + j * 11) % 100) as f64 / 100.0
    }
    fn slow(k: u64, j: u64) -> f64 {
        20.0 + ((k * 13 + j * 7) % 400) as f64 / 10.0
    }

    /// One histogram of every response time both shards recorded in `seconds`.
    fn both_shards(seconds: std::ops::Range<u64>) -> Histogram<u64> {
        let mut all = new_histogram();
        for k in seconds {
            for j in 0..900 {
                crate::stats::record(&mut all, (fast(k, j) * 1e6) as u64);
            }
            for j in 0..100 {
                crate::stats::record(&mut all, (slow(k, j) * 1e6) as u64);
            }
        }
        all
    }

    #[test]
    fn a_record_a_long_run_kept_merged_takes_every_second_it_spans_from_the_hdr_logs() {
        let mut shards = vec![shard(0, 900, fast), shard(1, 100, slow)];
        // Each shard's result keeps 2 s records (as a phase over an hour old keeps 10 s ones);
        // its HDR log keeps every second.
        for s in &mut shards {
            let p = &mut s.result.phases[0];
            p.intervals = p
                .intervals
                .chunks(2)
                .map(|two| {
                    let mut r = two[0].clone();
                    r.end_s = two[1].end_s;
                    r.ok += two[1].ok;
                    let w = r.by_op.get_mut(&OpKind::Write).unwrap();
                    w.ok += two[1].by_op[&OpKind::Write].ok;
                    r
                })
                .collect();
        }
        let (merged, _) = merge(&mut shards).unwrap();
        let p = &merged.phases[0];
        assert_eq!(p.intervals.len(), 5);
        let want = Percentiles::of(&both_shards(2..4));
        let iv = &p.intervals[1];
        assert_eq!((iv.start_s, iv.end_s, iv.ok), (2.0, 4.0, 2_000));
        let got = &iv.by_op[&OpKind::Write];
        assert!((got.response_p99_ms - want.p99_ms).abs() <= want.p99_ms * 1e-3);
        assert!((got.response_p50_ms - want.p50_ms).abs() <= want.p50_ms * 1e-3);
    }

    #[test]
    fn merged_percentiles_are_those_of_every_value_in_one_histogram_not_averages() {
        let mut shards = vec![shard(0, 900, fast), shard(1, 100, slow)];
        let (merged, log) = merge(&mut shards).unwrap();
        // One histogram fed with every value both shards recorded.
        let want = Percentiles::of(&both_shards(0..10));
        let main = merged.main_summary().unwrap();
        let got = &main.by_op[&OpKind::Write].response;
        // p50 … p99.99 and max: equal within HDR precision (3 significant digits).
        for (g, w) in got.values().iter().zip(want.values()) {
            assert!((g - w).abs() <= w * 1e-3, "{got:?} vs {want:?}");
        }
        assert_eq!(got.count, 10_000);
        // Averaging the shards' percentiles would have been wrong: the p99 of every value
        // lies among the slow shard's (≥ 20 ms), the average of the two p99s far from it.
        let p99 = |s: &ShardInput| {
            s.result.main_summary().unwrap().by_op[&OpKind::Write]
                .response
                .p99_ms
        };
        let averaged = (p99(&shards[0]) + p99(&shards[1])) / 2.0;
        assert!(want.p99_ms > 50.0, "{want:?}");
        assert!(
            (averaged - want.p99_ms).abs() > 0.3 * want.p99_ms,
            "{averaged}"
        );
        let p50_avg = (shards[0].result.main_summary().unwrap().all.response.p50_ms
            + shards[1].result.main_summary().unwrap().all.response.p50_ms)
            / 2.0;
        assert!(p50_avg > 2.0 * want.p50_ms, "{p50_avg} vs {}", want.p50_ms);
        // The send lags likewise: the shards' histograms added, so their percentiles exact.
        let mut lags = new_histogram();
        for k in 0..10 {
            let fast_ns = (0..900).map(|j| (fast(k, j) * 1e6) as u64);
            let slow_ns = (0..100).map(|j| (slow(k, j) * 1e6) as u64);
            for ns in fast_ns.chain(slow_ns) {
                crate::stats::record(&mut lags, ns - ns * 8 / 10);
            }
        }
        let want_lag = Percentiles::of(&lags);
        let got_lag = main.send_lag.unwrap();
        assert_eq!(got_lag.count, 10_000);
        for (g, w) in got_lag.values().iter().zip(want_lag.values()) {
            assert!((g - w).abs() <= w * 1e-3, "{got_lag:?} vs {want_lag:?}");
        }
        assert!(main.send_lag_histogram_ns.is_some());

        // Per interval too: summed throughput, histograms added from the HDR logs.
        let p = &merged.phases[0];
        assert_eq!(p.intervals.len(), 10);
        let iv = &p.intervals[3];
        assert_eq!((iv.ok, iv.backlog), (1_000, 6));
        assert!((iv.ops_per_s - 1_000.0).abs() < 1e-9);
        let mut h3 = new_histogram();
        for j in 0..900 {
            crate::stats::record(&mut h3, (fast(3, j) * 1e6) as u64);
        }
        for j in 0..100 {
            crate::stats::record(&mut h3, (slow(3, j) * 1e6) as u64);
        }
        let w3 = Percentiles::of(&h3);
        let g3 = &iv.by_op[&OpKind::Write];
        assert!((g3.response_p99_ms - w3.p99_ms).abs() <= w3.p99_ms * 1e-3);
        assert!((g3.response_p50_ms - w3.p50_ms).abs() <= w3.p50_ms * 1e-3);
        // The merged HDR log holds one response and one service histogram per interval.
        assert_eq!(log.len(), 20);
        assert_eq!(log[6].3.len(), 1_000);
        // The run's rate and figures.
        assert_eq!(main.target_rate_per_s, Some(1_000.0));
        assert_eq!(main.achieved_ratio, Some(1.0));
        assert!((main.ops_per_s - 1_000.0).abs() < 1e-9);
        let m = merged.merged.as_ref().unwrap();
        assert_eq!(m.shards.len(), 2);
        assert!(
            (m.start_spread_ms - 4.0).abs() < 1e-6,
            "{}",
            m.start_spread_ms
        );
        assert!(merged.shard.is_none());
        // Against one cluster, the slow shard's service times stand far above the other's:
        // it is named, the fast one is not.
        let behind: Vec<String> = merged
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::ShardBehind { .. }))
            .map(|w| w.to_string())
            .collect();
        assert_eq!(behind.len(), 1, "{behind:?}");
        assert!(
            behind[0].starts_with("shard 1/2 fell behind (median service time"),
            "{behind:?}"
        );
        assert!(matches!(
            merged.phases[0].load.mode,
            LoadMode::Open { rate_per_s, max_in_flight: 1024 } if rate_per_s == 1_000.0
        ));
    }

    #[test]
    fn a_shard_without_send_lags_leaves_the_merged_send_lag_out_rather_than_partial() {
        let mut shards = vec![shard(0, 100, fast), shard(1, 100, fast)];
        let lone = shards[0].result.main_summary().unwrap().send_lag.unwrap();
        // Shard 1 as a result written before send lags were recorded.
        let s1 = shards[1].result.phases[0].summary.as_mut().unwrap();
        s1.set_send_lag(None);
        let (merged, _) = merge(&mut shards).unwrap();
        let main = merged.main_summary().unwrap();
        assert!(main.send_lag.is_none() && main.send_lag_histogram_ns.is_none());
        // The largest lag is still the shards' largest.
        assert!(main.max_send_lag_ms > 0.0);
        assert!(lone.count == 1_000);
    }

    #[test]
    fn a_shard_that_fell_behind_is_named_and_the_other_is_not() {
        let mut lagging = shard(1, 100, fast);
        {
            let p = &mut lagging.result.phases[0];
            p.intervals.last_mut().unwrap().backlog = 400;
            let s = p.summary.as_mut().unwrap();
            s.achieved_ratio = Some(0.82);
            s.client_cpu_util = 0.97;
        }
        let mut shards = vec![shard(0, 100, fast), lagging];
        let (merged, _) = merge(&mut shards).unwrap();
        let behind: Vec<String> = merged
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::ShardBehind { .. }))
            .map(|w| w.to_string())
            .collect();
        assert_eq!(behind.len(), 1, "{behind:?}");
        assert!(
            behind[0].starts_with("shard 1/2 fell behind"),
            "{}",
            behind[0]
        );
        assert!(behind[0].contains("82.0% of its schedule"), "{}", behind[0]);
        assert!(behind[0].contains("400 operations behind"), "{}", behind[0]);
        assert!(behind[0].contains("client CPU 97%"), "{}", behind[0]);
    }

    #[test]
    fn missing_duplicate_and_foreign_shards_are_refused_in_one_line() {
        let e = merge(&mut [shard(0, 10, fast)]).unwrap_err().to_string();
        assert_eq!(e, "run r1: shard 1/2 missing (have 1 of 2)");
        let e = merge(&mut [shard(1, 10, fast), shard(1, 10, fast)])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("shard 1/2 of run r1 given twice"), "{e}");
        let mut other = shard(1, 10, fast);
        other.result.shard.as_mut().unwrap().run_id = "r2".into();
        let e = merge(&mut [shard(0, 10, fast), other])
            .unwrap_err()
            .to_string();
        assert!(e.contains("of run r2, not of run r1"), "{e}");
        let mut whole = shard(1, 10, fast);
        whole.result.shard = None;
        let e = merge(&mut [shard(0, 10, fast), whole])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a shard's result"), "{e}");
        let mut no_log = shard(1, 10, fast);
        no_log.hlog.clear();
        let e = merge(&mut [shard(0, 10, fast), no_log])
            .unwrap_err()
            .to_string();
        assert!(e.contains("its HDR log does not go with its result"), "{e}");
        assert!(!e.contains('\n'));
    }
}
