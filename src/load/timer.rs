//! A high-resolution wait for open-loop sends.
//!
//! tokio's timer wheel ticks every millisecond: a `sleep_until` wakes on the first tick at or
//! after its deadline, so an operation left up to a tick (and the driver's wake-up) after its
//! intended start, and at light load that wait was most of its response time (issue 38: at
//! 2,000 ops/s against an idle node, response p50 1.11 ms against service p50 0.28 ms). A slot
//! now waits for its intended start on this timer alone: one thread per open-loop phase keeps
//! the slots' deadlines in a heap and sleeps on a futex until the earliest (an hrtimer; the
//! thread's timer slack is set to 1 µs, against Linux's default 50 µs), then wakes each slot
//! whose deadline has passed. Nothing spins: the cost is one futex wake-up of this thread per
//! deadline and one wake-up of the runtime's thread per send, which a busy runtime takes from
//! its queue. The thread also watches the phase's stop flag (at least every [`STOP_POLL`]) and
//! ends every wait when it is raised.
//!
//! What an open loop costs is its wake-ups, not its work. On the project's 2-core VM one
//! wake-up of a sleeping thread costs 25–30 µs of CPU (a bare loop of absolute sleeps, printed
//! by `bench/send_lag.py --windows`), and an on-time send at a light rate pays at least one per
//! operation, often two (the send, then the response): 7–13k operations per client CPU-second
//! at 1,000–4,000 ops/s against about 120k in closed loop, where the client never sleeps
//! (issue 59). A timerfd on the runtime's reactor in place of this thread halved the context
//! switches and left the CPU per operation where it was (two alternating pairs each at
//! 1,000 and 4,000 ops/s, within the runs' noise). What does cut it is fewer wake-ups: with a window W
//! (`--send-window`) this thread sleeps until W after the earliest deadline, then ends every
//! wait due by then — one wake-up for the sends of up to W, each up to W late, which the
//! send lag and the response time show, and a burst the node sees as one. At 4,000 ops/s
//! (two runs each, bench/README.md): no window 11.7–11.9k ops per client CPU-second (send lag
//! p50 0.07 ms); 1 ms 24.5–25.6k (0.60 ms, the node's service p50 0.30–0.40 → 0.59 ms); 2 ms
//! 29.1–31.0k (1.13 ms, service p50 0.82–0.87 ms).
//!
//! A wait never ends before its deadline unless the phase stopped: the slot's future
//! completes only once the clock has reached it, whoever woke it.

use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the timer's thread looks at the stop flag when no deadline comes sooner.
pub const STOP_POLL: Duration = Duration::from_millis(50);

/// A deadline and the slot to wake at it.
struct Entry {
    at: Instant,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed: the heap's top is the earliest deadline.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.at.cmp(&self.at)
    }
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Entry>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// The phase's stop flag: raised, every wait ends.
    stop: Arc<AtomicBool>,
    /// How long after the earliest deadline the thread sleeps on (`--send-window`).
    window: Duration,
}

/// The timer thread of one phase; dropping it stops and joins the thread.
pub struct PreciseTimer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl PreciseTimer {
    /// Starts the timer's thread, its waits ended early by `stop` (None if the thread could
    /// not be started: the waits then end on tokio's wheel, a tick late at worst). With a
    /// `window`, the thread wakes that long after the earliest deadline and ends every wait
    /// due by then: one wake-up for all of them, each wait up to `window` late.
    pub fn start(stop: Arc<AtomicBool>, window: Duration) -> Option<PreciseTimer> {
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            wake: Condvar::new(),
            stop,
            window,
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("cqlbench-send-timer".into())
            .spawn(move || run(&s))
            .ok()?;
        Some(PreciseTimer {
            shared,
            thread: Some(thread),
        })
    }

    /// A future that completes at `at` (at once if it has passed), or when the phase stops.
    pub fn wait_until(&self, at: Instant) -> Wait<'_> {
        Wait {
            shared: &self.shared,
            at,
            registered: None,
        }
    }
}

impl Drop for PreciseTimer {
    fn drop(&mut self) {
        self.shared.state.lock().expect("timer lock").shutdown = true;
        self.shared.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// [`PreciseTimer::wait_until`]'s future.
pub struct Wait<'t> {
    shared: &'t Shared,
    at: Instant,
    /// The waker last handed to the timer thread.
    registered: Option<Waker>,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at || self.shared.stop.load(Ordering::Relaxed) {
            return Poll::Ready(());
        }
        // Registered once per waker: a poll by the same task (woken early by something
        // else) leaves the entry in place.
        if self
            .registered
            .as_ref()
            .is_none_or(|w| !w.will_wake(cx.waker()))
        {
            let waker = cx.waker().clone();
            self.registered = Some(waker.clone());
            let at = self.at;
            let mut st = self.shared.state.lock().expect("timer lock");
            let earliest = st.heap.peek().is_none_or(|e| at < e.at);
            st.heap.push(Entry { at, waker });
            drop(st);
            if earliest {
                self.shared.wake.notify_one();
            }
        }
        Poll::Pending
    }
}

/// The timer thread: wakes every slot whose deadline has passed, then sleeps until the next.
fn run(shared: &Shared) {
    reduce_timer_slack();
    let mut due: Vec<Waker> = Vec::new();
    let mut st = shared.state.lock().expect("timer lock");
    loop {
        if st.shutdown {
            return;
        }
        let now = Instant::now();
        let stopped = shared.stop.load(Ordering::Relaxed);
        // The earliest's window over (at once without one), every wait due by now ends.
        if st
            .heap
            .peek()
            .is_some_and(|e| stopped || e.at + shared.window <= now)
        {
            while st.heap.peek().is_some_and(|e| stopped || e.at <= now) {
                due.push(st.heap.pop().expect("peeked").waker);
            }
        }
        if !due.is_empty() {
            // Woken outside the lock: a slot polled at once may register its next deadline.
            drop(st);
            due.drain(..).for_each(Waker::wake);
            st = shared.state.lock().expect("timer lock");
            continue;
        }
        let next = st
            .heap
            .peek()
            .map_or(STOP_POLL, |e| {
                (e.at + shared.window).saturating_duration_since(now)
            })
            .min(STOP_POLL);
        st = shared.wake.wait_timeout(st, next).expect("timer lock").0;
    }
}

/// Linux lets a sleeping thread wake up to its timer slack (50 µs by default) after its
/// deadline, to batch wake-ups; this thread's deadlines are the sends, so 1 µs.
fn reduce_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer and changes only this thread's slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_wait_never_ends_before_its_deadline_and_the_lag_is_recorded_as_it_is() {
        let timer = PreciseTimer::start(Arc::default(), Duration::ZERO).unwrap();
        let t0 = Instant::now();
        let mut lags = Vec::new();
        for i in 1..=200u64 {
            let at = t0 + Duration::from_micros(1_000 * i);
            timer.wait_until(at).await;
            let now = Instant::now();
            assert!(now >= at, "ended {:?} early", at - now);
            lags.push(now - at);
        }
        lags.sort();
        // The machine runs other jobs, so no bound on the tail here (bench/send_lag.py
        // measures it); but the median of 200 waits spaced 1 ms apart is well under the
        // tick that tokio's wheel would add.
        let p50 = lags[lags.len() / 2];
        assert!(p50 < Duration::from_micros(500), "p50 {p50:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_waiters_each_wake_at_their_own_deadline_in_any_order_of_registration() {
        let timer = Arc::new(PreciseTimer::start(Arc::default(), Duration::ZERO).unwrap());
        let t0 = Instant::now();
        // Registered latest-first: the heap, not the order of arrival, decides.
        let handles: Vec<_> = (0..50u64)
            .rev()
            .map(|i| {
                let timer = timer.clone();
                let at = t0 + Duration::from_millis(5) + Duration::from_micros(200 * i);
                tokio::spawn(async move {
                    timer.wait_until(at).await;
                    Instant::now() >= at
                })
            })
            .collect();
        for h in handles {
            assert!(h.await.unwrap());
        }
        // A deadline already past completes at once, with no thread involved.
        timer.wait_until(t0).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn with_a_window_the_waits_due_within_it_end_together_that_long_after_the_earliest() {
        let window = Duration::from_millis(30);
        let timer = Arc::new(PreciseTimer::start(Arc::default(), window).unwrap());
        let t0 = Instant::now() + Duration::from_millis(20);
        let ends: Vec<_> = [0u64, 10, 20]
            .into_iter()
            .map(|ms| {
                let timer = timer.clone();
                let at = t0 + Duration::from_millis(ms);
                tokio::spawn(async move {
                    timer.wait_until(at).await;
                    Instant::now()
                })
            })
            .collect();
        for end in ends {
            // Each one, even the last due, no sooner than the earliest's window.
            let end = end.await.unwrap();
            assert!(end >= t0 + window, "ended {:?} early", (t0 + window) - end);
        }
        // A wait due after the window's end waits for a window of its own.
        let at = Instant::now() + Duration::from_millis(5);
        timer.wait_until(at).await;
        assert!(Instant::now() >= at + window);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_stop_ends_every_wait_within_its_poll() {
        let stop = Arc::new(AtomicBool::new(false));
        let timer = Arc::new(PreciseTimer::start(stop.clone(), Duration::ZERO).unwrap());
        let t0 = Instant::now();
        let far = t0 + Duration::from_secs(3600);
        let waits: Vec<_> = (0..3)
            .map(|_| {
                let timer = timer.clone();
                tokio::spawn(async move { timer.wait_until(far).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;
        stop.store(true, Ordering::Relaxed);
        for w in waits {
            w.await.unwrap();
        }
        // Within the stop poll, with room for a loaded host.
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        // A wait begun after the stop ends at once.
        timer.wait_until(far).await;
    }

    #[test]
    fn dropping_the_timer_stops_its_thread_with_waits_still_registered() {
        let timer = PreciseTimer::start(Arc::default(), Duration::ZERO).unwrap();
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut w = Box::pin(timer.wait_until(Instant::now() + Duration::from_secs(3600)));
        assert!(w.as_mut().poll(&mut cx).is_pending());
        drop(w);
        let t = Instant::now();
        drop(timer);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
