//! One phase of a run: a shard's main phase waits for the others first; the executor runs the
//! phase while faults are applied beside it and nodes are watched; each interval is recorded,
//! `--verify` learns the rows its writes acknowledged, and the observer is told; at its end the
//! phase's summary and the warnings it calls for.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::driven::Driven;
use super::executor::{IntervalReport, PhaseOutcome, StopReason, run_phase};
use super::recorder::Recorder;
use super::{Event, LoadError, RunPlan, ShardPlan, barrier};
use crate::result::{
    DriverCounts, IntervalRecord, OpSummary, PhaseResult, PhaseSummary, RunStatus, Warning,
};
use crate::spec::{LoadMode, LoadSpec};
use crate::stats::writes::Outcome;
use crate::workload::Workload;

/// A run's phases, on a prepared workload.
pub(super) struct Engine<'a, W: Workload> {
    pub plan: &'a RunPlan,
    pub stop: Arc<AtomicBool>,
    pub observer: &'a mut dyn FnMut(Event<'_>),
    pub ops: Arc<Driven<W>>,
    pub rec: Recorder,
    /// The run's start (Unix seconds).
    pub started: f64,
}

impl<W: Workload> Engine<'_, W> {
    /// Runs phase `name` (`rampup`: writes rows in order) and records it; says why it ended.
    pub async fn phase(
        &mut self,
        name: &str,
        load: &LoadSpec,
        rampup: bool,
    ) -> Result<StopReason, LoadError> {
        if name == "main"
            && let Some(sh) = &self.plan.shard
        {
            self.start_together(sh).await?;
        }
        (self.observer)(Event::PhaseStarted { name, load });
        let offset_s = crate::host::unix_now() - self.started;
        self.rec.start_phase(PhaseResult {
            name: name.into(),
            offset_s,
            load: load.clone(),
            intervals: Vec::new(),
            summary: None,
        });
        let (phase_stop, forward) = self.phase_stop(name);
        let driver_before = self.ops.counters.snapshot();
        // The fault schedule runs beside the main phase, from its start.
        let started = self.started;
        let faults = match (&self.plan.nodes, name) {
            (Some(inj), "main") if !self.plan.faults.is_empty() => Some(
                crate::fault::Running::start(&self.plan.faults, inj.clone(), move || {
                    crate::host::unix_now() - started
                }),
            ),
            _ => None,
        };
        let mut intervals = Intervals {
            plan: self.plan,
            ops: &self.ops,
            rec: &mut self.rec,
            observer: &mut *self.observer,
            faults: faults.as_ref(),
            watch: NodeWatch::new(self.plan),
            started,
            name,
            offset_s,
            rampup,
            cpu_prev: crate::host::process_cpu_seconds(),
            cpu_measured: 0.0,
        };
        let mut outcome = run_phase(self.ops.clone(), load, rampup, phase_stop, |rep| {
            intervals.record(rep)
        })
        .await;
        let cpu_measured = intervals.cpu_measured;
        if let Some(f) = faults {
            self.rec.set_events(f.finish());
        }
        if let Some(task) = forward {
            task.abort();
            if outcome.reason == StopReason::Interrupted && !self.stop.load(Ordering::Relaxed) {
                outcome.reason = StopReason::Completed;
            }
        }
        self.rec.check_writes()?;
        self.end(name, load, &outcome, cpu_measured, &driver_before);
        Ok(outcome.reason)
    }

    /// A shard's main phase starts with the others': at the time given, or once every shard
    /// has met at the barrier after its rampup.
    async fn start_together(&mut self, sh: &ShardPlan) -> Result<(), LoadError> {
        let meet = LoadError::Barrier;
        let session = &self.ops.session;
        let ks = self.ops.workload.workload.spec().keyspace.as_str();
        let at = match sh.start_at {
            Some(at) => at,
            None => {
                barrier::register(session, ks, &sh.run_id, "main", sh.share)
                    .await
                    .map_err(meet)?;
                let arrived = barrier::wait(
                    session,
                    ks,
                    &sh.run_id,
                    "main",
                    sh.barrier_timeout,
                    |a| barrier::complete(a, sh.share, &sh.run_id),
                    "every shard to finish its rampup",
                )
                .await
                .map_err(meet)?;
                barrier::start_of(&arrived)
            }
        };
        let wait_s = at - crate::host::unix_now();
        if sh.start_at.is_some() && wait_s < -1.0 {
            return Err(LoadError::StartPassed {
                late_s: -wait_s,
                shard: sh.share.to_string(),
                out: self.plan.out.clone(),
            });
        }
        if wait_s > 0.0 {
            tokio::time::sleep(std::time::Duration::from_secs_f64(wait_s)).await;
        }
        self.rec.main_started(crate::host::unix_now());
        Ok(())
    }

    /// What ends the phase: the run's stop, and for the main phase also `until` (a
    /// phase-local flag carries both, set by a task the caller aborts after the phase).
    fn phase_stop(&self, name: &str) -> (Arc<AtomicBool>, Option<tokio::task::JoinHandle<()>>) {
        match (&self.plan.until, name) {
            (Some(until), "main") => {
                let flag = Arc::new(AtomicBool::new(false));
                let (f, u, s) = (flag.clone(), until.clone(), self.stop.clone());
                let task = tokio::spawn(async move {
                    while !u.load(Ordering::Relaxed) && !s.load(Ordering::Relaxed) {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                    f.store(true, Ordering::Relaxed);
                });
                (flag, Some(task))
            }
            _ => (self.stop.clone(), None),
        }
    }

    /// The phase's summary and warnings; the run's status when the phase did not complete.
    fn end(
        &mut self,
        name: &str,
        load: &LoadSpec,
        outcome: &PhaseOutcome,
        cpu_s: f64,
        driver_before: &DriverCounts,
    ) {
        self.rec.flush_intervals();
        let intervals = self.rec.phase_intervals();
        let mut summary = summarize(outcome, load, cpu_s, &intervals);
        drop(intervals);
        summary.driver = Some(self.ops.counters.snapshot().since(driver_before));
        self.rec.end_phase(name, summary);
        let summary = self.rec.phase_summary().expect("just ended");
        (self.observer)(Event::PhaseDone { name, summary });
        match outcome.reason {
            StopReason::Completed => {}
            StopReason::Interrupted => {
                self.rec.set_status(RunStatus::Interrupted);
                self.rec.warn(Warning::Interrupted);
            }
            StopReason::TooManyErrors => self.rec.set_status(RunStatus::TooManyErrors),
        }
    }
}

/// What each interval of a phase goes through.
struct Intervals<'p, W: Workload> {
    plan: &'p RunPlan,
    ops: &'p Driven<W>,
    rec: &'p mut Recorder,
    observer: &'p mut dyn FnMut(Event<'_>),
    faults: Option<&'p crate::fault::Running>,
    watch: NodeWatch,
    started: f64,
    name: &'p str,
    offset_s: f64,
    rampup: bool,
    /// The process's CPU time at the previous interval, and over the measured ones.
    cpu_prev: f64,
    cpu_measured: f64,
}

impl<W: Workload> Intervals<'_, W> {
    fn record(&mut self, rep: &IntervalReport) {
        let cpu = crate::host::process_cpu_seconds();
        let cpu_d = cpu - self.cpu_prev;
        self.cpu_prev = cpu;
        if !rep.warmup {
            self.cpu_measured += cpu_d;
        }
        let mut rec = IntervalRecord::from_snapshot(
            rep.start_s,
            rep.end_s,
            rep.warmup,
            &rep.snapshot,
            rep.backlog,
            cpu_d,
        );
        rec.drain = rep.drain;
        self.learn(rep);
        self.speculate(rep);
        self.rec
            .interval(self.name, self.offset_s, self.rampup, rep, rec);
        if let Some(f) = self.faults {
            self.rec.set_events(f.snapshot());
        }
        for w in self
            .watch
            .deaths(self.plan, self.rec, self.name, self.started)
        {
            self.rec.warn(w);
        }
        self.rec.save_if_due();
        let sample = self.rec.latest_sample();
        (self.observer)(Event::Interval {
            phase: self.name,
            record: self.rec.last_interval(),
            sample: sample.as_ref(),
            snapshot: Some(&rep.snapshot),
        });
    }

    /// `--speculative pNN`: the next speculative requests wait this interval's service-time
    /// percentile (all operations together); an interval without operations changes nothing.
    fn speculate(&self, rep: &IntervalReport) {
        if let crate::spec::client::Speculative::Percentile { percentile, .. } =
            self.plan.connect.client.driver.speculative
        {
            let all = rep.snapshot.all();
            if !all.service.is_empty() {
                let ns = all.service.value_at_quantile(percentile / 100.0);
                self.ops
                    .counters
                    .set_speculative_delay(std::time::Duration::from_nanos(ns));
            }
        }
    }

    /// `--verify`: rows acknowledged in this interval are known written from now on.
    fn learn(&mut self, rep: &IntervalReport) {
        let Some(v) = &self.ops.workload.verify else {
            return;
        };
        let mut rows = Vec::new();
        for ((op, outcome), cycles) in &rep.snapshot.writes.by {
            if *outcome == Outcome::Acked {
                for c in cycles.iter() {
                    let w = &self.ops.workload.workload;
                    w.written_rows(*op, c, self.rampup, &mut rows);
                }
            }
        }
        v.learn(rows);
        self.rec.set_reads_verified(v.summary());
    }
}

/// Nodes that go down during a phase without a fault naming them.
struct NodeWatch {
    down_at_start: Vec<String>,
    reported: Vec<String>,
}

impl NodeWatch {
    fn new(plan: &RunPlan) -> NodeWatch {
        NodeWatch {
            down_at_start: plan
                .nodes
                .as_ref()
                .and_then(|n| n.down())
                .unwrap_or_default(),
            reported: Vec::new(),
        }
    }

    /// A warning for each node newly down without a fault naming it; with
    /// `end_on_node_death`, the main phase ends.
    fn deaths(
        &mut self,
        plan: &RunPlan,
        rec: &Recorder,
        phase: &str,
        started: f64,
    ) -> Vec<Warning> {
        let Some(down) = plan.nodes.as_ref().and_then(|n| n.down()) else {
            return Vec::new();
        };
        let scheduled = crate::result::fault::taken_down(&rec.result().events);
        let mut out = Vec::new();
        for node in down {
            let scheduled = scheduled.contains(&node);
            if self.down_at_start.contains(&node) || self.reported.contains(&node) || scheduled {
                continue;
            }
            out.push(Warning::NodeDied {
                phase: phase.to_string(),
                node: node.clone(),
                at_s: crate::host::unix_now() - started,
            });
            self.reported.push(node);
            if plan.end_on_node_death
                && let Some(u) = &plan.until
            {
                u.store(true, Ordering::Relaxed);
            }
        }
        out
    }
}

fn summarize(
    o: &PhaseOutcome,
    load: &LoadSpec,
    cpu_s: f64,
    intervals: &[IntervalRecord],
) -> PhaseSummary {
    let w = &o.window;
    let secs = w.secs();
    let all = o.measured.all();
    // Throughput counts what completed inside the window, not the drain after it.
    let in_window =
        |m: &crate::stats::OpStats, d: &crate::stats::OpStats| w.rate_of(m.ok.saturating_sub(d.ok));
    let by_op = o
        .measured
        .kinds()
        .into_iter()
        .map(|k| {
            let m = o.measured.op(k);
            (k, OpSummary::with_rate(m, in_window(m, o.drain.op(k))))
        })
        .collect();
    let target = match load.mode {
        LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
        LoadMode::Closed { .. } => None,
    };
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let threads = load.threads.clamp(1, cores) as f64;
    let measured: Vec<&IntervalRecord> = intervals.iter().filter(|i| i.after_warmup()).collect();
    let all_ops_per_s = in_window(&all, &o.drain.all());
    let mut summary = PhaseSummary {
        measured_s: secs,
        ok: all.ok,
        errors: all.error_count(),
        ops_per_s: all_ops_per_s,
        target_rate_per_s: target,
        achieved_ratio: w.achieved_ratio(o.on_schedule),
        scheduled_ops: w.scheduled,
        sent_on_schedule: w.scheduled.map(|_| o.on_schedule),
        carried_over_ops: w.scheduled.map(|_| o.carried_over),
        drain_s: w.drain_s,
        by_op,
        errors_by_kind: all.errors.clone(),
        driver: None,
        all: OpSummary::with_rate(&all, all_ops_per_s),
        client_cpu_s: cpu_s,
        // The CPU was measured over the window and its drain.
        client_cpu_util: if secs + w.drain_s > 0.0 {
            cpu_s / ((secs + w.drain_s) * threads)
        } else {
            0.0
        },
        ops_per_client_cpu_s: if cpu_s > 0.0 {
            all.ok as f64 / cpu_s
        } else {
            0.0
        },
        client_max_rss_bytes: crate::host::max_rss_bytes(),
        max_backlog: measured.iter().map(|i| i.backlog).max().unwrap_or(0),
        max_send_lag_ms: measured
            .iter()
            .map(|i| i.max_send_lag_ms)
            .fold(0.0, f64::max),
        send_lag: None,
        send_lag_histogram_ns: None,
    };
    summary.set_send_lag(target.map(|_| &o.measured.send_lag));
    summary
}
