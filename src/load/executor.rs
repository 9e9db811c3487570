//! The executor of one phase. Workers claim operation numbers from one atomic counter;
//! operation i runs cycle `start + i` and, in open loop, has the intended start
//! `t0 + i / rate`. Response time is measured from the intended start, service time from the
//! actual send. Each worker owns its statistics and hands them to the collector once per
//! interval; the collector merges them and reports each interval once every worker has.
//!
//! The measured window ends with the schedule, not with the last completion: what completes
//! after it (the drain) is kept apart, and the open loop's achieved rate counts the window's
//! scheduled operations sent before it ended (see [`super::window`]).
//!
//! The executor runs any [`Operations`]: the real one is a workload on a driver session; the
//! tests below run fake ones on tokio's paused clock.
//!
//! Open loop, a slot holding an operation due later sleeps on tokio's timer wheel until
//! shortly before its intended start, then on the phase's [`PreciseTimer`] (a thread of its
//! own, microsecond resolution) for the rest: sent on tokio's wheel alone, an operation left
//! up to a millisecond tick late, and at light load that wait was most of its response time.
//! Every operation's send lag (actual send − intended start) is recorded in a histogram.
//!
//! The client timeout (`--timeout`) is enforced here rather than by the driver: the driver
//! arms one tokio timer per request (registered, re-registered and removed from the timer
//! wheel for every operation), while a worker scans its few request slots on a coarse tick
//! and fails those past their deadline. A timeout fires up to one tick late (a tenth of the
//! timeout, at most 100 ms). Measured on the 50/50 mix (`stress`, 128 in flight, one client
//! core, 6 alternating 20 s runs each): 153k against 150k operations per client CPU-second,
//! within the runs' ±10% noise.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc;
// tokio's clock: the same as std's in a real run, and one a test can pause and advance.
use tokio::time::Instant;

use super::deadline::{SlotTimer, with_deadline};
use super::timer::PreciseTimer;
use super::window::{self, Window};
use crate::spec::load::Share;
use crate::spec::{LoadMode, LoadSpec, OpKind, Stop};
use crate::stats::writes::Outcome;
use crate::stats::{ErrorKind, Snapshot};

/// Length of a reporting interval.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// How late after its intended start an operation may be sent and still count as sent on
/// schedule when it goes out after the window's end.
pub const SEND_SLACK: Duration = Duration::from_millis(10);

/// Why a phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Completed,
    Interrupted,
    TooManyErrors,
}

/// One merged interval, as handed to the observer.
#[derive(Debug)]
pub struct IntervalReport {
    pub index: u64,
    pub start_s: f64,
    pub end_s: f64,
    pub warmup: bool,
    /// After the window's end: operations of the window still completing.
    pub drain: bool,
    pub snapshot: Snapshot,
    pub backlog: u64,
}

/// What a phase measured outside its warmup.
#[derive(Debug)]
pub struct PhaseOutcome {
    /// Every operation completed after the warmup, the drain's included.
    pub measured: Snapshot,
    /// The part of `measured` that completed after the window ended.
    pub drain: Snapshot,
    /// Open loop: operations of the window's schedule sent before it ended.
    pub on_schedule: u64,
    /// Open loop: operations of the warmup's schedule sent late inside the window.
    pub carried_over: u64,
    pub window: Window,
    pub reason: StopReason,
    pub issued: u64,
}

/// What the executor runs: the operation kind of a cycle, and the operation itself. The real
/// one is a workload on a driver session ([`super::driven::Driven`]); tests run fake ones on a
/// paused clock.
pub trait Operations: Send + Sync + 'static {
    /// What a failed operation returns; [`Operations::kind_of`] sorts it.
    type Error;
    fn op_for(&self, cycle: u64) -> OpKind;
    /// The operation's future, returned as it is (no wrapping future: each level of nesting
    /// copies the ~4 KB driver future once more per operation, see `slot`).
    fn execute(
        &self,
        kind: OpKind,
        cycle: u64,
        rampup: bool,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
    fn kind_of(e: &Self::Error) -> ErrorKind;

    /// Whether open-loop waits end on the [`PreciseTimer`], which keeps std's clock (real
    /// operations); fakes on tokio's paused clock say no, and wait on tokio's wheel alone.
    fn precise_waits(&self) -> bool {
        true
    }
}

/// Shared, read-mostly state of a phase.
struct Ctx<O> {
    ops: Arc<O>,
    rampup: bool,
    t0: Instant,
    end: Option<Instant>,
    max_ops: Option<u64>,
    rate: Option<f64>,
    /// Open loop: the first operation of the measured window's schedule.
    first_measured: u64,
    /// The end of the warmup.
    warmup_end: Instant,
    /// Nanoseconds after `t0` (+1; 0 = not yet) when a stop or `max_ops` ended the claims.
    ended_ns: AtomicU64,
    cycle_start: u64,
    cycle_len: u64,
    /// This process's share of the run: operation `i` here is `share.global(i)` of the run.
    share: Share,
    next: AtomicU64,
    sent: AtomicU64,
    errors: AtomicU64,
    max_errors: u64,
    stop: Arc<AtomicBool>,
    too_many_errors: AtomicBool,
    timeout: Duration,
    /// Open loop: ends the waits for intended starts (None: tokio's wheel alone).
    timer: Option<PreciseTimer>,
}

impl<O> Ctx<O> {
    /// The next operation number and its intended start (`now` in closed loop), or None
    /// when the phase is over.
    fn claim(&self, now: Instant) -> Option<(u64, Instant)> {
        if self.stop.load(Ordering::Relaxed) {
            self.mark_ended(now);
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if self.max_ops.is_some_and(|m| i >= m) {
            self.mark_ended(now);
            return None;
        }
        let intended = match self.rate {
            Some(r) => self.t0 + Duration::from_nanos(window::intended_ns(self.share.global(i), r)),
            None => now,
        };
        if self.end.is_some_and(|e| intended >= e) {
            return None;
        }
        Some((i, intended))
    }

    /// Notes when the claims ended early (the first time only).
    fn mark_ended(&self, now: Instant) {
        let ns = now.saturating_duration_since(self.t0).as_nanos() as u64 + 1;
        let _ = self
            .ended_ns
            .compare_exchange(0, ns, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Open loop: operation `i` of the warmup's schedule went out inside the measured window,
    /// late (a backlog the window caught up).
    fn carried_over(&self, i: u64, intended: Instant, sent: Instant) -> bool {
        self.rate.is_some()
            && i < self.first_measured
            && sent >= self.warmup_end
            && sent.saturating_duration_since(intended) > SEND_SLACK
    }

    /// Open loop: operation `i`, intended for `intended` and sent at `sent`, belongs to the
    /// measured window's schedule and went out before the window ended, or no later than
    /// [`SEND_SLACK`] after its intended start (a timer that wakes a few milliseconds late
    /// for the window's last operation is not a client that fell behind).
    fn on_schedule(&self, i: u64, intended: Instant, sent: Instant) -> bool {
        self.rate.is_some()
            && i >= self.first_measured
            && (self.end.is_none_or(|e| sent < e)
                || sent.saturating_duration_since(intended) <= SEND_SLACK)
    }
}

struct Done {
    kind: OpKind,
    cycle: u64,
    on_schedule: bool,
    carried_over: bool,
    intended: Instant,
    sent: Instant,
    completed: Instant,
    result: Result<(), ErrorKind>,
}

enum Msg {
    Interval {
        worker: usize,
        index: u64,
        snapshot: Snapshot,
    },
    Final {
        worker: usize,
        index: u64,
        snapshot: Snapshot,
        on_schedule: u64,
        carried_over: u64,
    },
}

/// A worker's statistics for the current interval, shared by its slots (all in one task, so
/// the lock is never contended).
struct WorkerStats {
    snap: std::sync::Mutex<Snapshot>,
    /// Operations sent on schedule (see `Ctx::on_schedule`), over the whole phase: counted
    /// apart from the interval snapshots, whose boundaries fall where the worker's tick
    /// happens to run and would put an operation of the window into the warmup.
    on_schedule: AtomicU64,
    /// Operations of the warmup's schedule sent late inside the window.
    carried_over: AtomicU64,
}

impl WorkerStats {
    fn record<O>(&self, ctx: &Ctx<O>, d: Done) {
        if d.on_schedule {
            self.on_schedule.fetch_add(1, Ordering::Relaxed);
        }
        if d.carried_over {
            self.carried_over.fetch_add(1, Ordering::Relaxed);
        }
        let mut snap = self.snap.lock().expect("stats lock");
        if ctx.rate.is_some() {
            snap.record_send_lag(d.sent.saturating_duration_since(d.intended).as_nanos() as u64);
        }
        if d.kind.writes() {
            let outcome = match d.result {
                Ok(()) => Outcome::Acked,
                Err(_) => Outcome::Unknown,
            };
            snap.writes.record(d.kind, d.cycle, outcome);
        }
        match d.result {
            Ok(()) => snap.record_ok(
                d.kind,
                d.completed.duration_since(d.intended).as_nanos() as u64,
                d.completed.duration_since(d.sent).as_nanos() as u64,
            ),
            Err(e) => {
                snap.record_error(d.kind, e);
                let n = ctx.errors.fetch_add(1, Ordering::Relaxed) + 1;
                if ctx.max_errors > 0 && n > ctx.max_errors {
                    ctx.too_many_errors.store(true, Ordering::Relaxed);
                    ctx.stop.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

/// One request slot: claims an operation, waits for its intended start (open loop), runs it,
/// records it, and repeats until the phase is over. A worker runs `limit` slots, so at most
/// `limit` operations are claimed or in flight at once and later ones wait unclaimed (the
/// backlog), their wait still counted from their intended start.
async fn slot<O: Operations>(ctx: &Ctx<O>, stats: &WorkerStats, timer: &SlotTimer) {
    // The completion time of one operation is the claim time of the next.
    let mut now = Instant::now();
    while let Some((i, intended)) = ctx.claim(now) {
        let sent = if intended > now {
            // A slot may hold an operation due seconds ahead (up to max-in-flight ÷ rate): a
            // stop while it waits ends the slot there, unsent.
            if !wait_for_start(ctx, intended).await {
                ctx.mark_ended(Instant::now());
                break;
            }
            Instant::now()
        } else {
            now
        };
        ctx.sent.fetch_add(1, Ordering::Relaxed);
        let cycle = ctx.cycle_start + ctx.share.global(i) % ctx.cycle_len;
        let kind = if ctx.rampup {
            OpKind::Write
        } else {
            ctx.ops.op_for(cycle)
        };
        timer.arm(sent.duration_since(ctx.t0));
        // The operation's future is built here, in this slot's own state, and polled where it
        // stands: passed by value through helper futures it would be copied whole (about 4 KB)
        // at each level, several times per operation (bench/README.md has what that cost).
        let op = std::pin::pin!(ctx.ops.execute(kind, cycle, ctx.rampup));
        let result = match with_deadline(op, timer).await {
            Some(r) => r.map_err(|e| O::kind_of(&e)),
            None => Err(ErrorKind::ClientTimeout),
        };
        timer.disarm();
        let d = Done {
            kind,
            cycle,
            on_schedule: ctx.on_schedule(i, intended, sent),
            carried_over: ctx.carried_over(i, intended, sent),
            intended,
            sent,
            completed: Instant::now(),
            result,
        };
        now = d.completed;
        stats.record(ctx, d);
    }
}

/// How often a slot waiting for an operation's intended start looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Waits until the intended start `at`, unless the phase is stopped first; true when `at`
/// came. On the precise timer (which also watches the stop flag) when the phase has one, else
/// on tokio's wheel.
async fn wait_for_start<O>(ctx: &Ctx<O>, at: Instant) -> bool {
    let Some(timer) = &ctx.timer else {
        return wait_unless_stopped(ctx, at).await;
    };
    timer.wait_until(at.into_std()).await;
    !ctx.stop.load(Ordering::Relaxed)
}

/// Waits until `at`, unless the phase is stopped first (checked every [`STOP_POLL`]); true
/// when `at` came.
async fn wait_unless_stopped<O>(ctx: &Ctx<O>, at: Instant) -> bool {
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        tokio::time::sleep_until(at.min(now + STOP_POLL)).await;
    }
}

async fn worker<O: Operations>(
    ctx: Arc<Ctx<O>>,
    id: usize,
    limit: usize,
    tx: mpsc::UnboundedSender<Msg>,
) {
    let stats = WorkerStats {
        snap: std::sync::Mutex::new(Snapshot::default()),
        on_schedule: AtomicU64::new(0),
        carried_over: AtomicU64::new(0),
    };
    let timers: Vec<SlotTimer> = (0..limit).map(|_| SlotTimer::default()).collect();
    let mut slots: FuturesUnordered<_> = timers.iter().map(|t| slot(&ctx, &stats, t)).collect();
    let mut index = 0u64;
    let mut boundary = ctx.t0 + INTERVAL;
    let sleep = tokio::time::sleep_until(boundary);
    tokio::pin!(sleep);
    let tick = (ctx.timeout / 10).clamp(Duration::from_millis(1), Duration::from_millis(100));
    let mut scan = tokio::time::interval_at(ctx.t0 + tick, tick);
    scan.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = scan.tick() => {
                let limit_ns = ctx.t0.elapsed().saturating_sub(ctx.timeout).as_nanos() as u64;
                for t in &timers {
                    t.expire_if_sent_before(limit_ns);
                }
            }
            _ = &mut sleep => {
                let now = Instant::now();
                while now >= boundary {
                    let s = std::mem::take(&mut *stats.snap.lock().expect("stats lock"));
                    let _ = tx.send(Msg::Interval { worker: id, index, snapshot: s });
                    index += 1;
                    boundary += INTERVAL;
                }
                sleep.as_mut().reset(boundary);
            }
            next = slots.next() => {
                if next.is_none() {
                    break;
                }
            }
        }
    }
    drop(slots);
    let snap = std::mem::take(&mut *stats.snap.lock().expect("stats lock"));
    let _ = tx.send(Msg::Final {
        worker: id,
        index,
        snapshot: snap,
        on_schedule: stats.on_schedule.load(Ordering::Relaxed),
        carried_over: stats.carried_over.load(Ordering::Relaxed),
    });
}

/// Runs one phase on the current tokio runtime with `load.threads` workers. `on_interval`
/// sees every merged interval in order (and the last, partial one).
pub async fn run_phase<O: Operations>(
    ops: Arc<O>,
    load: &LoadSpec,
    rampup: bool,
    stop: Arc<AtomicBool>,
    mut on_interval: impl FnMut(&IntervalReport),
) -> PhaseOutcome {
    let t0 = Instant::now();
    let s = Schedule::of(load);
    let ctx = Arc::new(Ctx::new(ops, load, rampup, stop, t0, &s));
    let workers = load.threads.max(1).min(s.in_flight);
    let (tx, mut rx) = mpsc::unbounded_channel();
    for w in 0..workers {
        let limit = s.in_flight / workers + usize::from(w < s.in_flight % workers);
        tokio::spawn(worker(ctx.clone(), w, limit, tx.clone()));
    }
    drop(tx);
    let mut c = Collector::new(&ctx, load, workers, s.end_ns);
    while let Some(msg) = rx.recv().await {
        c.receive(msg, &mut on_interval);
    }
    c.outcome(load)
}

/// A phase's schedule, from its load.
struct Schedule {
    /// Open loop: the whole run's rate (this process's share of it is `rate_per_s`).
    rate: Option<f64>,
    /// The requests this process may have claimed or in flight at once.
    in_flight: usize,
    /// The schedule's end (ns after the start): a duration's, or in open loop the intended
    /// start of the operation after the last.
    end_ns: Option<u64>,
}

impl Schedule {
    fn of(load: &LoadSpec) -> Schedule {
        let (rate, in_flight) = match load.mode {
            LoadMode::Closed { concurrency } => (None, concurrency.max(1)),
            LoadMode::Open {
                rate_per_s,
                max_in_flight,
            } => (
                Some(rate_per_s * load.share.count as f64),
                max_in_flight.max(1),
            ),
        };
        let end_ns = match (load.stop, rate) {
            (Stop::Duration { secs }, _) => Some(window::secs_to_ns(secs)),
            (Stop::Ops { count }, Some(r)) => Some(window::intended_ns(count, r)),
            (Stop::Ops { .. }, None) => None,
        };
        Schedule {
            rate,
            in_flight,
            end_ns,
        }
    }
}

impl<O: Operations> Ctx<O> {
    fn new(
        ops: Arc<O>,
        load: &LoadSpec,
        rampup: bool,
        stop: Arc<AtomicBool>,
        t0: Instant,
        s: &Schedule,
    ) -> Ctx<O> {
        let share = load.share;
        let rate = s.rate;
        let timer = if rate.is_some() && ops.precise_waits() {
            PreciseTimer::start(stop.clone(), Duration::from_secs_f64(load.send_window_s))
        } else {
            None
        };
        Ctx {
            ops,
            rampup,
            t0,
            end: s.end_ns.map(|ns| t0 + Duration::from_nanos(ns)),
            max_ops: match load.stop {
                Stop::Ops { count } => Some(share.local_count(count)),
                Stop::Duration { .. } => None,
            },
            rate,
            first_measured: rate.map_or(0, |r| {
                share.local_count(window::scheduled_before(
                    r,
                    window::secs_to_ns(load.warmup_s),
                ))
            }),
            ended_ns: AtomicU64::new(0),
            warmup_end: t0 + Duration::from_nanos(window::secs_to_ns(load.warmup_s)),
            cycle_start: load.cycles.start,
            cycle_len: (load.cycles.end - load.cycles.start).max(1),
            share,
            next: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            max_errors: load.max_errors,
            stop,
            too_many_errors: AtomicBool::new(false),
            timeout: Duration::from_secs_f64(load.timeout_s),
            timer,
        }
    }
}

/// Merges the workers' interval snapshots and emits each interval once every worker has
/// reported it; keeps the phase's totals.
struct Collector<'c, O> {
    ctx: &'c Ctx<O>,
    warmup: Duration,
    end_ns: Option<u64>,
    /// Snapshots by interval, until emitted.
    pending: std::collections::BTreeMap<u64, Snapshot>,
    /// Per worker: the intervals reported, and whether it is done.
    progress: Vec<u64>,
    done: Vec<bool>,
    next_emit: u64,
    measured: Snapshot,
    drain: Snapshot,
    on_schedule: u64,
    carried_over: u64,
    window_start: Option<f64>,
    last_end: f64,
}

impl<'c, O> Collector<'c, O> {
    fn new(ctx: &'c Ctx<O>, load: &LoadSpec, workers: usize, end_ns: Option<u64>) -> Self {
        Collector {
            ctx,
            warmup: Duration::from_secs_f64(load.warmup_s),
            end_ns,
            pending: Default::default(),
            progress: vec![0; workers],
            done: vec![false; workers],
            next_emit: 0,
            measured: Snapshot::default(),
            drain: Snapshot::default(),
            on_schedule: 0,
            carried_over: 0,
            window_start: None,
            last_end: 0.0,
        }
    }

    /// Where the window ends: the schedule's end, unless a stop or an operation count ended
    /// the claims first.
    fn window_end_s(&self) -> Option<f64> {
        let ended = self.ctx.ended_ns.load(Ordering::Relaxed);
        if ended > 0 && (self.ctx.stop.load(Ordering::Relaxed) || self.end_ns.is_none()) {
            Some((ended - 1) as f64 / 1e9)
        } else {
            self.end_ns.map(|ns| ns as f64 / 1e9)
        }
    }

    /// Takes a worker's message and emits the intervals every worker has now reported.
    fn receive(&mut self, msg: Msg, on_interval: &mut impl FnMut(&IntervalReport)) {
        let (w, index, snapshot, fin) = match msg {
            Msg::Interval {
                worker,
                index,
                snapshot,
            } => (worker, index, snapshot, false),
            Msg::Final {
                worker,
                index,
                snapshot,
                on_schedule: n,
                carried_over: c,
            } => {
                self.on_schedule += n;
                self.carried_over += c;
                (worker, index, snapshot, true)
            }
        };
        self.pending.entry(index).or_default().add(&snapshot);
        self.progress[w] = index + 1;
        self.done[w] |= fin;
        let all_done = self.done.iter().all(|d| *d);
        let ready_below = (0..self.done.len())
            .filter(|&w| !self.done[w])
            .map(|w| self.progress[w])
            .min()
            .unwrap_or(u64::MAX);
        while self.next_emit < ready_below
            && (self.pending.contains_key(&self.next_emit) || !all_done)
        {
            let snap = self.pending.remove(&self.next_emit).unwrap_or_default();
            let is_last = all_done && self.pending.is_empty();
            on_interval(&self.report(snap, is_last));
            self.next_emit += 1;
            if is_last {
                break;
            }
        }
    }

    /// The next interval to emit, counted into the phase's totals unless in the warmup.
    fn report(&mut self, snap: Snapshot, is_last: bool) -> IntervalReport {
        let t0 = self.ctx.t0;
        let start = (self.next_emit as f64) * INTERVAL.as_secs_f64();
        let end_s = if is_last {
            t0.elapsed().as_secs_f64()
        } else {
            start + INTERVAL.as_secs_f64()
        };
        let in_warmup = Duration::from_secs_f64(end_s) <= self.warmup;
        let window_end = self.window_end_s();
        let in_drain = window_end.is_some_and(|e| start >= e - 1e-9);
        let sent = self.ctx.sent.load(Ordering::Relaxed);
        // Operations due by the interval's end (never past the schedule's) not yet sent.
        let backlog = match self.ctx.rate {
            Some(r) => {
                let due_s = end_s
                    .min(t0.elapsed().as_secs_f64())
                    .min(window_end.unwrap_or(f64::INFINITY));
                self.ctx
                    .share
                    .local_count(window::scheduled_before(r, window::secs_to_ns(due_s)))
                    .saturating_sub(sent)
            }
            None => 0,
        };
        if !in_warmup {
            self.measured.add_stats(&snap);
            self.window_start.get_or_insert(start);
            self.last_end = end_s;
            if in_drain {
                self.drain.add_stats(&snap);
            }
        }
        IntervalReport {
            index: self.next_emit,
            start_s: start,
            end_s,
            warmup: in_warmup,
            drain: in_drain && !in_warmup,
            snapshot: snap,
            backlog,
        }
    }

    /// What the phase measured, once every worker is done.
    fn outcome(self, load: &LoadSpec) -> PhaseOutcome {
        let ctx = self.ctx;
        let reason = if ctx.too_many_errors.load(Ordering::Relaxed) {
            StopReason::TooManyErrors
        } else if ctx.stop.load(Ordering::Relaxed) {
            StopReason::Interrupted
        } else {
            StopReason::Completed
        };
        let window = Window::new(
            self.window_start.unwrap_or(self.last_end),
            self.window_end_s().unwrap_or(self.last_end),
            self.last_end,
            ctx.rate,
            load.warmup_s,
            ctx.share,
        );
        PhaseOutcome {
            measured: self.measured,
            drain: self.drain,
            on_schedule: self.on_schedule,
            carried_over: self.carried_over,
            window,
            reason,
            issued: ctx.sent.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The executor on tokio's paused clock with fake operations: time advances only when
    //! every task waits, so intended starts, latencies and timeouts are exact.

    use super::*;
    use crate::spec::Cycles;

    /// Writes that each take `latency` (the first `slow` of them `slow_latency`), failing
    /// with `fail` if set.
    struct Fake {
        latency: Duration,
        slow: u64,
        slow_latency: Duration,
        fail: Option<ErrorKind>,
        started: AtomicU64,
    }

    impl Fake {
        fn taking(latency: Duration) -> Fake {
            Fake {
                latency,
                slow: 0,
                slow_latency: latency,
                fail: None,
                started: AtomicU64::new(0),
            }
        }
    }

    impl Operations for Fake {
        type Error = ErrorKind;

        fn op_for(&self, _cycle: u64) -> OpKind {
            OpKind::Write
        }

        fn execute(
            &self,
            _kind: OpKind,
            _cycle: u64,
            _rampup: bool,
        ) -> impl Future<Output = Result<(), ErrorKind>> + Send {
            let n = self.started.fetch_add(1, Ordering::Relaxed);
            let latency = if n < self.slow {
                self.slow_latency
            } else {
                self.latency
            };
            let fail = self.fail;
            async move {
                tokio::time::sleep(latency).await;
                fail.map_or(Ok(()), Err)
            }
        }

        fn kind_of(e: &ErrorKind) -> ErrorKind {
            *e
        }

        fn precise_waits(&self) -> bool {
            false
        }
    }

    fn open(rate_per_s: f64, max_in_flight: usize, secs: f64, warmup_s: f64) -> LoadSpec {
        LoadSpec {
            mode: LoadMode::Open {
                rate_per_s,
                max_in_flight,
            },
            stop: Stop::Duration { secs },
            warmup_s,
            threads: 1,
            timeout_s: 10.0,
            max_errors: 0,
            cycles: Cycles {
                start: 0,
                end: 1_000_000,
            },
            share: Share::WHOLE,
            send_window_s: 0.0,
        }
    }

    /// Notes each operation's cycle and when it was sent, after the phase's start.
    struct Recording {
        t0: Instant,
        sent: std::sync::Mutex<Vec<(u64, Duration)>>,
        /// On a real clock: waits end on the precise timer.
        precise: bool,
    }

    impl Operations for Recording {
        type Error = ErrorKind;

        fn op_for(&self, _cycle: u64) -> OpKind {
            OpKind::Write
        }

        fn execute(
            &self,
            _kind: OpKind,
            cycle: u64,
            _rampup: bool,
        ) -> impl Future<Output = Result<(), ErrorKind>> + Send {
            let at = Instant::now().duration_since(self.t0);
            self.sent.lock().unwrap().push((cycle, at));
            async { Ok(()) }
        }

        fn kind_of(e: &ErrorKind) -> ErrorKind {
            *e
        }

        fn precise_waits(&self) -> bool {
            self.precise
        }
    }

    #[tokio::test(start_paused = true)]
    async fn shards_together_send_exactly_the_whole_runs_schedule_and_cycles() {
        // The whole run: 300 ops/s for 2 s; then the same run as three shards.
        let record = |load: LoadSpec| async move {
            let ops = Arc::new(Recording {
                t0: Instant::now(),
                sent: Default::default(),
                precise: false,
            });
            let out = run_phase(
                ops.clone(),
                &load,
                false,
                Arc::new(AtomicBool::new(false)),
                |_| {},
            )
            .await;
            let sent = ops.sent.lock().unwrap().clone();
            (out, sent)
        };
        let whole = open(300.0, 64, 2.0, 0.5);
        let (w, mut all) = record(whole.clone()).await;
        let mut union = Vec::new();
        let mut scheduled = 0;
        for index in 0..3 {
            let mut part = whole.clone();
            part.mode = LoadMode::Open {
                rate_per_s: 100.0,
                max_in_flight: 22,
            };
            part.share = Share { index, count: 3 };
            let (o, sent) = record(part).await;
            assert_eq!(o.issued, 200);
            scheduled += o.window.scheduled.unwrap();
            union.extend(sent);
        }
        assert_eq!(w.issued, 600);
        assert_eq!(scheduled, w.window.scheduled.unwrap());
        all.sort();
        union.sort();
        // The same cycles, each once, sent at the same instants.
        assert_eq!(union, all);
    }

    async fn run(fake: Fake, load: &LoadSpec) -> (PhaseOutcome, Vec<(f64, bool, bool, u64)>) {
        let mut intervals = Vec::new();
        let out = run_phase(
            Arc::new(fake),
            load,
            false,
            Arc::new(AtomicBool::new(false)),
            |r| intervals.push((r.end_s, r.warmup, r.drain, r.backlog)),
        )
        .await;
        (out, intervals)
    }

    fn ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> f64 {
        h.value_at_quantile(q) as f64 / 1e6
    }

    #[tokio::test(start_paused = true)]
    async fn acknowledged_writes_go_out_per_interval_and_not_into_the_phase_totals() {
        let load = open(100.0, 64, 3.0, 1.0);
        let mut cycles = roaring::RoaringTreemap::new();
        let out = run_phase(
            Arc::new(Fake::taking(Duration::from_millis(5))),
            &load,
            false,
            Arc::new(AtomicBool::new(false)),
            |r| {
                for b in r.snapshot.writes.by.values() {
                    cycles |= b;
                }
            },
        )
        .await;
        // Every cycle written, warmup included, reached the observer once...
        assert_eq!(cycles.len(), 300);
        // ...and the phase's totals do not hold them again (a long run's memory).
        assert_eq!(out.measured.op(OpKind::Write).ok, 200);
        assert!(out.measured.writes.is_empty());
        assert!(out.drain.writes.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_loop_that_keeps_its_schedule_reads_its_full_rate() {
        let load = open(100.0, 64, 3.0, 1.0);
        let (o, intervals) = run(Fake::taking(Duration::from_millis(5)), &load).await;
        assert_eq!(o.reason, StopReason::Completed);
        // 300 scheduled, 100 of them in the warmup.
        assert_eq!(o.issued, 300);
        assert_eq!(o.window.scheduled, Some(200));
        assert_eq!(o.on_schedule, 200);
        assert_eq!(o.carried_over, 0);
        assert!((o.window.secs() - 2.0).abs() < 1e-9, "{:?}", o.window);
        // The last operation (intended at 2.99 s) completes 5 ms later: the drain is 0 s, as
        // it completes before the schedule's end at 3 s.
        assert!(o.window.drain_s < 0.001, "{:?}", o.window);
        let w = o.measured.op(OpKind::Write);
        assert_eq!(w.ok, 200);
        assert!((o.window.rate_of(w.ok - o.drain.op(OpKind::Write).ok) - 100.0).abs() < 1e-9);
        assert!(
            (ms(&w.response, 0.99) - 5.0).abs() < 0.01,
            "{}",
            ms(&w.response, 0.99)
        );
        assert_eq!(intervals.iter().filter(|i| i.1).count(), 1, "{intervals:?}");
        assert!(
            intervals.iter().all(|i| i.3 == 0),
            "no backlog: {intervals:?}"
        );
        // Each operation sent at its intended start (the clock is exact): a lag per
        // operation, every one at the histogram's 1 µs floor.
        assert_eq!(o.measured.send_lag.len(), 200);
        let lag = &o.measured.send_lag;
        assert!(lag.equivalent(lag.max(), 1_000), "{}", lag.max());
        assert_eq!(o.measured.max_send_lag_ns, 0);
    }

    /// On a real clock, with the precise timer: no operation leaves before its intended
    /// start, and each one's lag is recorded. (How late they leave depends on the machine:
    /// `bench/send_lag.py` measures it.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn on_a_real_clock_no_operation_is_sent_before_its_intended_start() {
        let ops = Arc::new(Recording {
            t0: Instant::now(),
            sent: Default::default(),
            precise: true,
        });
        let load = open(1000.0, 64, 0.5, 0.0);
        let o = run_phase(
            ops.clone(),
            &load,
            false,
            Arc::new(AtomicBool::new(false)),
            |_| {},
        )
        .await;
        let sent = ops.sent.lock().unwrap().clone();
        assert_eq!(sent.len(), 500);
        for (cycle, at) in &sent {
            // Operation i (cycle i) is intended for i ms after the phase's start, which is
            // after the recorder's t0.
            let intended = Duration::from_millis(*cycle);
            assert!(*at >= intended, "cycle {cycle} sent at {at:?}");
        }
        assert_eq!(o.measured.send_lag.len(), 500);
        let max = o.measured.max_send_lag_ns;
        assert!(
            o.measured
                .send_lag
                .equivalent(o.measured.send_lag.max(), max.max(1_000))
        );
    }

    /// A stop ends a real-clock open loop within its stop poll, the precise timer's waits
    /// included.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn on_a_real_clock_a_stop_ends_the_waits_for_intended_starts() {
        let ops = Arc::new(Recording {
            t0: Instant::now(),
            sent: Default::default(),
            precise: true,
        });
        let load = open(100.0, 1024, 30.0, 0.0);
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            s.store(true, Ordering::Relaxed);
        });
        let t0 = Instant::now();
        let o = run_phase(ops, &load, false, stop, |_| {}).await;
        let took = t0.elapsed();
        assert!(took < Duration::from_millis(1_500), "ended after {took:?}");
        assert_eq!(o.reason, StopReason::Interrupted);
        // About 30 due in the first 300 ms (more if the machine was slow to stop).
        assert!((25..=100).contains(&o.issued), "{}", o.issued);
    }

    #[tokio::test(start_paused = true)]
    async fn a_drain_after_the_window_is_reported_apart() {
        // 50 ms operations: the last ones of the schedule complete after its end.
        let load = open(100.0, 64, 2.0, 1.0);
        let (o, intervals) = run(Fake::taking(Duration::from_millis(50)), &load).await;
        assert_eq!(o.window.scheduled, Some(100));
        assert_eq!(o.on_schedule, 100);
        assert!((o.window.secs() - 1.0).abs() < 1e-9);
        assert!((o.window.drain_s - 0.04).abs() < 0.002, "{:?}", o.window);
        assert_eq!(o.window.achieved_ratio(o.on_schedule), Some(1.0));
        // The drain interval holds the operations intended at 1.96..1.99 s (and the one
        // intended at 1.95 s, completing at the very end, when the tick comes first).
        let last = intervals.last().unwrap();
        assert!(last.2, "the last interval is the drain: {intervals:?}");
        let drained = o.drain.op(OpKind::Write).ok;
        assert!((4..=5).contains(&drained), "{drained}");
        // In the window: 100 completions, give or take the one at its very end (the
        // warmup's last 5 complete in it, the window's last 4 or 5 after it).
        let in_window = o.measured.op(OpKind::Write).ok - o.drain.op(OpKind::Write).ok;
        assert!((in_window as i64 - 100).abs() <= 1, "{in_window}");
    }

    /// A stop ends an open loop at once, though its slots hold operations due seconds ahead
    /// (1024 in flight at 100 ops/s): nothing is sent after it, and the window is cut there.
    #[tokio::test(start_paused = true)]
    async fn a_stop_ends_an_open_loop_without_sending_what_is_due_later() {
        let load = open(100.0, 1024, 30.0, 0.0);
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let t0 = Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(6)).await;
            s.store(true, Ordering::Relaxed);
        });
        let o = run_phase(
            Arc::new(Fake::taking(Duration::from_millis(1))),
            &load,
            false,
            stop,
            |_| {},
        )
        .await;
        let took = t0.elapsed();
        assert!(
            took < Duration::from_millis(6_200),
            "ended {took:?} after the start"
        );
        assert_eq!(o.reason, StopReason::Interrupted);
        // 600 were due in the first 6 s; none of the later ones went out.
        assert!((600..=606).contains(&o.issued), "{}", o.issued);
        let achieved = o.window.achieved_ratio(o.on_schedule).unwrap();
        assert!(
            achieved <= 1.0 && achieved > 0.99,
            "{achieved} {:?}",
            o.window
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_cannot_keep_up_builds_a_backlog_counted_from_intended_starts() {
        // One request in flight of 20 ms: at most 50 ops/s against 100 scheduled.
        let load = open(100.0, 1, 3.0, 1.0);
        let (o, intervals) = run(Fake::taking(Duration::from_millis(20)), &load).await;
        let achieved = o.window.achieved_ratio(o.on_schedule).unwrap();
        // 50 ops/s get sent: the warmup's 100 by 2 s (its last 50 late, inside the window),
        // then 50 of the window's 200 by its end.
        assert!((achieved - 0.25).abs() < 0.011, "{achieved}");
        assert!((49..=50).contains(&o.carried_over), "{}", o.carried_over);
        let w = o.measured.op(OpKind::Write);
        // Service time stays 20 ms; response time, from the intended start, holds the queue.
        assert!((ms(&w.service, 0.99) - 20.0).abs() < 0.1);
        assert!(ms(&w.response, 0.5) > 500.0, "{}", ms(&w.response, 0.5));
        assert!(
            intervals.iter().any(|i| i.3 > 50),
            "backlog grows: {intervals:?}"
        );
        // The send lag is the queue: response time = send lag + service time, operation by
        // operation, so (the service time constant) their percentiles 20 ms apart.
        assert_eq!(o.measured.send_lag.len(), w.ok);
        for q in [0.5, 0.9, 0.99] {
            let (r, l) = (ms(&w.response, q), ms(&o.measured.send_lag, q));
            assert!(
                (r - l - 20.0).abs() < 0.01 * r,
                "q {q}: response {r} lag {l}"
            );
        }
        // Nothing is dropped: every scheduled operation ran, the drain took the rest.
        assert_eq!(o.issued, 300);
        assert!(o.window.drain_s > 2.0, "{:?}", o.window);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_past_the_client_timeout_fail_as_client_timeouts() {
        let mut load = open(10.0, 16, 2.0, 0.0);
        load.timeout_s = 0.5;
        let fake = Fake {
            slow: 3,
            slow_latency: Duration::from_secs(5),
            ..Fake::taking(Duration::from_millis(2))
        };
        let (o, _) = run(fake, &load).await;
        let w = o.measured.op(OpKind::Write);
        assert_eq!(w.errors.get(&ErrorKind::ClientTimeout), Some(&3));
        assert_eq!(w.ok, 17);
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_loop_keeps_its_concurrency_and_counts_errors_by_kind() {
        let load = LoadSpec {
            mode: LoadMode::Closed { concurrency: 4 },
            ..open(1.0, 1, 1.0, 0.0)
        };
        let fake = Fake {
            fail: Some(ErrorKind::Overloaded),
            ..Fake::taking(Duration::from_millis(10))
        };
        let (o, _) = run(fake, &load).await;
        // 4 in flight, 10 ms each, for 1 s: 400 operations, every one failed as overloaded.
        let w = o.measured.op(OpKind::Write);
        assert_eq!(w.errors.get(&ErrorKind::Overloaded), Some(&400));
        assert_eq!(o.window.scheduled, None);
    }
}
