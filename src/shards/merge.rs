//! The shards of one run merged into one result, exactly: per interval of a common grid (the
//! shards' main phases start together), counts and throughputs are summed and latency
//! histograms added per operation kind, from each shard's HDR interval log; the phases'
//! histograms are added the same way. Percentiles are always those of the merged histograms,
//! never an average of the shards' percentiles. Every shard's own figures are kept, and a shard
//! that fell behind is named.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::error::Invalid;
use crate::result::hlog::LogEntry;
use crate::result::{
    IntervalOp, IntervalRecord, Merged, OpSummary, PhaseResult, PhaseSummary, RunResult, RunStatus,
    ShardFigures, Warning, phase_warnings,
};
use crate::spec::LoadMode;
use crate::spec::load::Share;
use crate::stats::{Percentiles, decode, encode, new_histogram};

/// One shard as read: its result and its HDR interval log.
#[derive(Debug, Clone)]
pub struct ShardInput {
    pub path: PathBuf,
    pub result: RunResult,
    pub hlog: Vec<LogEntry>,
}

impl ShardInput {
    /// Reads a shard's result and the HDR log beside it (`NAME.hlog`).
    pub fn read(path: &Path) -> Result<ShardInput, Invalid> {
        let result = RunResult::read(path).map_err(|e| crate::invalid!("{e}"))?;
        Self::with_result(path, result)
    }

    /// A shard whose result is already read: only its HDR log is read.
    pub fn with_result(path: &Path, result: RunResult) -> Result<ShardInput, Invalid> {
        let hlog_path = path.with_extension("hlog");
        let hlog = crate::result::hlog::read(&hlog_path).map_err(|e| {
            crate::invalid!(
                "{}: {e} (merging needs each shard's HDR log beside its result)",
                hlog_path.display()
            )
        })?;
        Ok(ShardInput {
            path: path.to_path_buf(),
            result,
            hlog,
        })
    }
}

/// Checks that `shards` are every shard of one run, each once; returns them in index order.
pub fn check(shards: &mut [ShardInput]) -> Result<(), Invalid> {
    let Some(first) = shards.first() else {
        return Err(crate::invalid!("no shard results to merge"));
    };
    let Some(of) = first.result.shard.clone() else {
        return Err(crate::invalid!(
            "{}: not a shard's result (it was not run with --shard or --loaders)",
            first.path.display()
        ));
    };
    for s in shards.iter() {
        let Some(sh) = &s.result.shard else {
            return Err(crate::invalid!(
                "{}: not a shard's result (it was not run with --shard or --loaders)",
                s.path.display()
            ));
        };
        if sh.run_id != of.run_id || sh.count != of.count {
            return Err(crate::invalid!(
                "{}: shard {}/{} of run {}, not of run {} ({} shards) like {}",
                s.path.display(),
                sh.index,
                sh.count,
                sh.run_id,
                of.run_id,
                of.count,
                first.path.display()
            ));
        }
        if s.result.workload != first.result.workload {
            return Err(crate::invalid!(
                "{}: ran another workload than {}: shards of one run run the same one",
                s.path.display(),
                first.path.display()
            ));
        }
    }
    shards.sort_by_key(|s| s.result.shard.as_ref().map_or(0, |s| s.index));
    for w in shards.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.result.shard.as_ref().map(|s| s.index) == b.result.shard.as_ref().map(|s| s.index) {
            return Err(crate::invalid!(
                "shard {}/{} of run {} given twice: {} and {}",
                a.result.shard.as_ref().map_or(0, |s| s.index),
                of.count,
                of.run_id,
                a.path.display(),
                b.path.display()
            ));
        }
    }
    let have: Vec<u64> = shards
        .iter()
        .filter_map(|s| s.result.shard.as_ref().map(|s| s.index))
        .collect();
    let missing: Vec<String> = (0..of.count)
        .filter(|i| !have.contains(i))
        .map(|i| format!("{i}/{}", of.count))
        .collect();
    if !missing.is_empty() {
        return Err(crate::invalid!(
            "run {}: shard{} {} missing (have {} of {})",
            of.run_id,
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            shards.len(),
            of.count
        ));
    }
    Ok(())
}

type Key = (String, i64);

fn ms(t_s: f64) -> i64 {
    (t_s * 1000.0).round() as i64
}

fn add_into(into: &mut Histogram<u64>, h: &Histogram<u64>, what: &str) -> Result<(), Invalid> {
    into.add(h)
        .map_err(|e| crate::invalid!("adding the histograms of {what}: {e:?}"))
}

/// Merges the shards (checked by [`check`]) into one run result and its HDR interval log.
pub fn merge(shards: &mut [ShardInput]) -> Result<(RunResult, Vec<LogEntry>), Invalid> {
    check(shards)?;
    let first = &shards[0].result;
    let of = first.shard.clone().expect("checked");
    let started = shards
        .iter()
        .map(|s| s.result.started_unix_s)
        .min()
        .unwrap_or(first.started_unix_s);
    // Each shard's HDR log, by (tag, start in ms on its own axis).
    let logs: Vec<HashMap<Key, &Histogram<u64>>> = shards
        .iter()
        .map(|s| {
            s.hlog
                .iter()
                .map(|(tag, start, _, h)| ((tag.clone(), ms(*start)), h))
                .collect()
        })
        .collect();
    let mut out_log: Vec<LogEntry> = Vec::new();
    let mut phases = Vec::new();
    for (pi, p0) in first.phases.iter().enumerate() {
        let mut parts: Vec<(usize, &PhaseResult)> = Vec::new();
        for (si, s) in shards.iter().enumerate() {
            let p = s.result.phases.get(pi).filter(|p| p.name == p0.name);
            match p {
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
        // The phase starts when the earliest shard's did, on the merged run's axis.
        let abs = |si: usize, p: &PhaseResult| shards[si].result.started_unix_s as f64 + p.offset_s;
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
            let ivs: Vec<(usize, &PhaseResult, &IntervalRecord)> = parts
                .iter()
                .filter_map(|(si, p)| p.intervals.get(k).map(|iv| (*si, *p, iv)))
                .collect();
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
                by_op: BTreeMap::new(),
                backlog: 0,
                max_send_lag_ms: 0.0,
                client_cpu_s: 0.0,
                errors_by_kind: BTreeMap::new(),
            };
            let mut hists: BTreeMap<(crate::spec::OpKind, &str), Histogram<u64>> = BTreeMap::new();
            for (si, p, iv) in &ivs {
                rec.ok += iv.ok;
                rec.errors += iv.errors;
                rec.ops_per_s += iv.ops_per_s;
                rec.backlog += iv.backlog;
                rec.max_send_lag_ms = rec.max_send_lag_ms.max(iv.max_send_lag_ms);
                rec.client_cpu_s += iv.client_cpu_s;
                for (kind, n) in &iv.errors_by_kind {
                    *rec.errors_by_kind.entry(*kind).or_default() += n;
                }
                for (op, o) in &iv.by_op {
                    let e = rec.by_op.entry(*op).or_insert(IntervalOp {
                        ok: 0,
                        errors: 0,
                        response_p50_ms: 0.0,
                        response_p99_ms: 0.0,
                        response_max_ms: 0.0,
                        service_p50_ms: 0.0,
                        service_p99_ms: 0.0,
                    });
                    e.ok += o.ok;
                    e.errors += o.errors;
                    for which in ["response", "service"] {
                        let tag = format!("{}/{op}/{which}", p.name);
                        let key = (tag, ms(p.offset_s + iv.start_s));
                        match logs[*si].get(&key) {
                            Some(h) => add_into(
                                hists.entry((*op, which)).or_insert_with(new_histogram),
                                h,
                                &shards[*si].path.display().to_string(),
                            )?,
                            None if o.ok > 0 => {
                                return Err(crate::invalid!(
                                    "{}: no {} histogram at {:.3}s for {} ok operations: its HDR log does not go with its result",
                                    shards[*si].path.with_extension("hlog").display(),
                                    key.0,
                                    p.offset_s + iv.start_s,
                                    o.ok
                                ));
                            }
                            None => {}
                        }
                    }
                }
            }
            for ((op, which), h) in &hists {
                let pc = Percentiles::of(h);
                let e = rec.by_op.get_mut(op).expect("entry made above");
                if *which == "response" {
                    (e.response_p50_ms, e.response_p99_ms, e.response_max_ms) =
                        (pc.p50_ms, pc.p99_ms, pc.max_ms);
                } else {
                    (e.service_p50_ms, e.service_p99_ms) = (pc.p50_ms, pc.p99_ms);
                }
                out_log.push((
                    format!("{}/{op}/{which}", p0.name),
                    offset_s + rec.start_s,
                    rec.end_s - rec.start_s,
                    h.clone(),
                ));
            }
            intervals.push(rec);
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
        let mut load = p0.load.clone();
        load.share = Share::WHOLE;
        load.threads = threads;
        load.mode = match p0.load.mode {
            LoadMode::Open { .. } => LoadMode::Open {
                rate_per_s: parts
                    .iter()
                    .map(|(_, p)| match p.load.mode {
                        LoadMode::Open { rate_per_s, .. } => rate_per_s,
                        LoadMode::Closed { .. } => 0.0,
                    })
                    .sum(),
                max_in_flight: parts
                    .iter()
                    .map(|(_, p)| match p.load.mode {
                        LoadMode::Open { max_in_flight, .. } => max_in_flight,
                        LoadMode::Closed { concurrency } => concurrency,
                    })
                    .sum(),
            },
            LoadMode::Closed { .. } => LoadMode::Closed {
                concurrency: parts
                    .iter()
                    .map(|(_, p)| match p.load.mode {
                        LoadMode::Open { max_in_flight, .. } => max_in_flight,
                        LoadMode::Closed { concurrency } => concurrency,
                    })
                    .sum(),
            },
        };
        phases.push(PhaseResult {
            name: p0.name.clone(),
            offset_s,
            load,
            intervals,
            summary,
        });
    }

    // Every shard's own figures, and the ones that fell behind.
    let mut figures = Vec::new();
    let mut behind = Vec::new();
    for s in shards.iter() {
        let r = &s.result;
        let index = r.shard.as_ref().map_or(0, |s| s.index);
        let main = r.phases.iter().rev().find(|p| p.name == "main");
        let summary = main.and_then(|p| p.summary.as_ref());
        let final_backlog = main
            .and_then(|p| p.intervals.iter().rev().find(|iv| !iv.drain))
            .map_or(0, |iv| iv.backlog);
        let f = ShardFigures {
            index,
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
        };
        figures.push(f);
    }
    for (f, reasons) in figures.iter().zip(behind_all(&figures)) {
        if !reasons.is_empty() {
            behind.push(Warning::ShardBehind {
                shard: format!("{}/{}", f.index, of.count),
                reasons,
            });
        }
    }
    let starts: Vec<f64> = figures
        .iter()
        .filter_map(|f| f.main_started_unix_s)
        .collect();
    let start_spread_ms = if starts.len() == figures.len() && !starts.is_empty() {
        let lo = starts.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (hi - lo) * 1000.0
    } else {
        0.0
    };

    let mut warnings: Vec<Warning> = Vec::new();
    for p in &phases {
        if let Some(s) = &p.summary {
            warnings.extend(phase_warnings(&p.name, s));
        }
    }
    warnings.extend(behind);
    if start_spread_ms > 50.0 {
        warnings.push(Warning::ShardStartSpread {
            spread_ms: start_spread_ms,
        });
    }
    // What the shards saw of the cluster (a node dying, compactions in the window) stands.
    for s in shards.iter() {
        for w in &s.result.warnings {
            let keep = matches!(
                w,
                Warning::NodeDied { .. }
                    | Warning::LedgerFailed { .. }
                    | Warning::Interrupted
                    | Warning::CompactionsInWindow { .. }
            );
            if keep && !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    let status = shards
        .iter()
        .map(|s| s.result.status.clone())
        .find(|st| *st != RunStatus::Completed)
        .unwrap_or(RunStatus::Completed);
    let merged = RunResult {
        started_unix_s: started,
        finished_unix_s: shards
            .iter()
            .map(|s| s.result.finished_unix_s)
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max()),
        status,
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
    Ok((merged, out_log))
}

/// Why each shard fell behind, if it did (see [`behind_reasons`]).
pub fn behind_all(figures: &[ShardFigures]) -> Vec<Vec<String>> {
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
            behind_reasons(f, median)
        })
        .collect()
}

/// Why a shard fell behind, if it did: its achieved rate under its target, a backlog left at
/// the window's end, its client CPU near saturation, or a median service time far above the
/// other shards' (`others_service_p50_ms`, their median) against the same cluster: a client
/// too slow to take its responses in time (CPU-starved, say) inflates the latencies it
/// records without missing its schedule.
pub fn behind_reasons(f: &ShardFigures, others_service_p50_ms: Option<f64>) -> Vec<String> {
    let mut r = Vec::new();
    if let Some(ratio) = f.achieved_ratio
        && ratio < 0.99
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

fn merge_summaries(
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
    let mut kinds: Vec<crate::spec::OpKind> = Vec::new();
    for x in s {
        for k in x.by_op.keys() {
            if !kinds.contains(k) {
                kinds.push(*k);
            }
        }
    }
    let merge_op = |ops: Vec<&OpSummary>| -> Result<OpSummary, Invalid> {
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
    };
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
        for (k, n) in &x.errors_by_kind {
            *errors_by_kind.entry(*k).or_default() += n;
        }
    }
    let client_cpu_s: f64 = s.iter().map(|x| x.client_cpu_s).sum();
    let ops_per_s: f64 = s.iter().map(|x| x.ops_per_s).sum();
    let scheduled_ops = opt_sum(|x| x.scheduled_ops);
    let sent_on_schedule = opt_sum(|x| x.sent_on_schedule);
    Ok(PhaseSummary {
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
        client_cpu_s,
        client_cpu_util: client_cpu_s / (measured_s * threads.max(1) as f64).max(1e-9),
        ops_per_client_cpu_s: ops_per_s * measured_s / client_cpu_s.max(1e-9),
        client_max_rss_bytes: s.iter().map(|x| x.client_max_rss_bytes).max().unwrap_or(0),
        // The run's backlog at any moment is the shards' summed, per interval.
        max_backlog: intervals
            .iter()
            .filter(|iv| !iv.warmup)
            .map(|iv| iv.backlog)
            .max()
            .unwrap_or(0),
        max_send_lag_ms: s.iter().map(|x| x.max_send_lag_ms).fold(0.0, f64::max),
    })
}

/// Writes the merged result, its HDR log and, when every shard left one, the union of their
/// acknowledged-write ledgers (so `verify` reads the merged run), next to `out`.
pub fn write(
    merged: &RunResult,
    log: &[LogEntry],
    shards: &[ShardInput],
    out: &Path,
) -> Result<(), Invalid> {
    let hlog_path = out.with_extension("hlog");
    let io = |p: &Path, e: std::io::Error| crate::invalid!("writing {}: {e}", p.display());
    let mut hlog =
        crate::result::hlog::IntervalLog::create(&hlog_path, merged.started_unix_s as f64)
            .map_err(|e| io(&hlog_path, e))?;
    for (tag, start, len, h) in log {
        hlog.append(tag, *start, *len, h)
            .map_err(|e| io(&hlog_path, e))?;
    }
    hlog.flush().map_err(|e| io(&hlog_path, e))?;
    let ledgers: Vec<PathBuf> = shards
        .iter()
        .map(|s| s.path.with_extension("ledger"))
        .collect();
    if ledgers.iter().all(|p| p.exists()) {
        merge_ledgers(&ledgers, &out.with_extension("ledger"))?;
    }
    merged.write(out).map_err(|e| io(out, e))?;
    Ok(())
}

/// The union of shards' ledgers, one frame per phase, mapping and outcome.
pub fn merge_ledgers(paths: &[PathBuf], out: &Path) -> Result<(), Invalid> {
    use crate::result::ledger::{Ledger, LedgerWriter};
    use crate::stats::writes::Writes;
    let mut union: BTreeMap<(String, crate::result::ledger::Mapping), Writes> = BTreeMap::new();
    for p in paths {
        let l = Ledger::read(p).map_err(|e| crate::invalid!("{}: {e}", p.display()))?;
        for (tag, bitmap) in &l.bitmaps {
            let w = union.entry((tag.phase.clone(), tag.mapping)).or_default();
            *w.by.entry((tag.op, tag.outcome)).or_default() |= bitmap;
        }
    }
    let io = |e: std::io::Error| crate::invalid!("writing {}: {e}", out.display());
    let mut w = LedgerWriter::create(out).map_err(io)?;
    for ((phase, mapping), writes) in &union {
        w.append(phase, *mapping, writes).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ShardOf;
    use crate::result::fixture;
    use crate::spec::OpKind;
    use crate::stats::Snapshot;

    /// Shard `index` of 2 of run "r1": 10 one-second intervals of `per_s` writes whose
    /// response times are `latency(k, j)` ms (service time: 80% of it).
    fn shard(index: u64, per_s: u64, latency: impl Fn(u64, u64) -> f64) -> ShardInput {
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

    fn fast(k: u64, j: u64) -> f64 {
        1.0 + ((k * 37 + j * 11) % 100) as f64 / 100.0
    }
    fn slow(k: u64, j: u64) -> f64 {
        20.0 + ((k * 13 + j * 7) % 400) as f64 / 10.0
    }

    #[test]
    fn merged_percentiles_are_those_of_every_value_in_one_histogram_not_averages() {
        let mut shards = vec![shard(0, 900, fast), shard(1, 100, slow)];
        let (merged, log) = merge(&mut shards).unwrap();
        // One histogram fed with every value both shards recorded.
        let mut all = new_histogram();
        for k in 0..10 {
            for j in 0..900 {
                crate::stats::record(&mut all, (fast(k, j) * 1e6) as u64);
            }
            for j in 0..100 {
                crate::stats::record(&mut all, (slow(k, j) * 1e6) as u64);
            }
        }
        let want = Percentiles::of(&all);
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
