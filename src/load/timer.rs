//! A high-resolution wait for open-loop sends, on the runtime's own reactor.
//!
//! tokio's timer wheel ticks every millisecond: a `sleep_until` wakes on the first tick at or
//! after its deadline, so an operation left up to a tick (and the driver's wake-up) after its
//! intended start, and at light load that wait was most of its response time (issue 38). Issue
//! 38's answer was a timer thread that slept on a futex until each deadline and woke the slot
//! from there: on time, but two thread wake-ups per operation (the timer thread's, then the
//! runtime's), about 45 µs of client CPU per operation at 4,000 ops/s against 6–7 µs in closed
//! loop (issue 59).
//!
//! Here each worker has a Linux timerfd (an hrtimer: it fires at its deadline, without the
//! timer slack a sleeping thread gets) registered with tokio's reactor, armed for the earliest
//! deadline of its slots. When it fires, the reactor wakes the worker's task, which wakes every
//! slot whose deadline has passed — all due sends go out in one wake-up of the thread that sends
//! them, and no other thread is involved. A deadline already past completes at once.
//!
//! A wait never ends before its deadline unless the phase stopped: the slot's future completes
//! only once the clock has reached it. The stop flag is the worker's to watch: it calls
//! [`SendTimer::wake_all`] when it sees it raised.

use std::collections::BinaryHeap;
use std::future::Future;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use tokio::io::unix::AsyncFd;

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
    /// The deadline the timerfd is armed for, if any.
    armed: Option<Instant>,
}

/// One worker's send timer: its slots' deadlines and the timerfd armed for the earliest.
pub struct SendTimer {
    fd: AsyncFd<OwnedFd>,
    /// Only the worker's own task touches it (its slots and its loop): never contended.
    state: Mutex<State>,
}

impl SendTimer {
    /// A timer on the current runtime's reactor (None outside Linux, or if the timerfd could
    /// not be made: the waits then end on tokio's wheel, a tick late at worst).
    pub fn new() -> Option<SendTimer> {
        // SAFETY: timerfd_create takes two integers and returns a new descriptor or -1.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a descriptor just returned to us and owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: the OwnedFd is moved into the AsyncFd, which keeps it open (and the same
        // descriptor) until the AsyncFd is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) };
        Some(SendTimer {
            fd: fd.ok()?,
            state: Mutex::default(),
        })
    }

    /// A future that completes at `at` (at once if it has passed), or once `stop` is raised
    /// and the worker has called [`Self::wake_all`].
    pub fn wait_until<'t>(&'t self, at: Instant, stop: &'t AtomicBool) -> Wait<'t> {
        Wait {
            timer: self,
            at,
            stop,
        }
    }

    /// Arms the timerfd for `at` (relative to now: CLOCK_MONOTONIC is std's clock, but an
    /// `Instant` cannot be turned into a timespec).
    fn arm(&self, st: &mut State, at: Instant) {
        let ns = at
            .saturating_duration_since(Instant::now())
            .as_nanos()
            .max(1);
        let value = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        // SAFETY: the descriptor is ours and open; both pointers are to valid itimerspecs
        // (the old value is not asked for).
        unsafe {
            libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut());
        }
        st.armed = Some(at);
    }

    /// Waits until the timerfd fires, then wakes every slot whose deadline has passed and
    /// re-arms for the next. For the worker's loop, beside its slots.
    pub async fn fired(&self) {
        if let Ok(mut guard) = self.fd.readable().await {
            let mut expirations = [0u8; 8];
            // SAFETY: reads at most 8 bytes into an 8-byte buffer from our own descriptor.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    expirations.as_mut_ptr().cast(),
                    expirations.len(),
                )
            };
            if n < 0 {
                guard.clear_ready();
            }
        }
        self.wake_due(false);
    }

    /// Wakes every waiting slot (the phase stopped; each sees the flag and ends).
    pub fn wake_all(&self) {
        self.wake_due(true);
    }

    fn wake_due(&self, all: bool) {
        let now = Instant::now();
        let mut due = Vec::new();
        let mut st = self.state.lock().expect("timer lock");
        while st.heap.peek().is_some_and(|e| all || e.at <= now) {
            due.push(st.heap.pop().expect("peeked").waker);
        }
        st.armed = None;
        if let Some(next) = st.heap.peek().map(|e| e.at) {
            self.arm(&mut st, next);
        }
        drop(st);
        due.into_iter().for_each(Waker::wake);
    }
}

/// [`SendTimer::wait_until`]'s future.
pub struct Wait<'t> {
    timer: &'t SendTimer,
    at: Instant,
    stop: &'t AtomicBool,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at || self.stop.load(Ordering::Relaxed) {
            return Poll::Ready(());
        }
        // Each wake takes the entry out, so every poll that stays pending puts one in (a poll
        // with its entry still in, a spurious one, leaves a duplicate that wakes nothing).
        let at = self.at;
        let mut st = self.timer.state.lock().expect("timer lock");
        st.heap.push(Entry {
            at,
            waker: cx.waker().clone(),
        });
        if st.armed.is_none_or(|armed| at < armed) {
            self.timer.arm(&mut st, at);
        }
        drop(st);
        Poll::Pending
    }
}

/// How long a wait on the timer may take at most beyond its deadline before a test calls it
/// late (the machine runs other jobs; bench/send_lag.py measures the real figures).
#[cfg(test)]
const TEST_P50_BOUND: std::time::Duration = std::time::Duration::from_micros(500);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    /// Runs `f` with a timer, its `fired` loop driven beside it as the worker's loop drives it.
    async fn with_timer<F, Fut>(f: F)
    where
        F: FnOnce(Arc<SendTimer>) -> Fut,
        Fut: Future<Output = ()>,
    {
        let timer = Arc::new(SendTimer::new().expect("a timerfd"));
        let t = timer.clone();
        let driver = async move {
            loop {
                t.fired().await;
            }
        };
        tokio::select! {
            _ = f(timer) => {}
            _ = driver => unreachable!("the driver loops"),
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_wait_never_ends_before_its_deadline_and_ends_soon_after() {
        let stop = AtomicBool::new(false);
        with_timer(|timer| async move {
            let t0 = Instant::now();
            let mut lags = Vec::new();
            for i in 1..=200u64 {
                let at = t0 + Duration::from_micros(1_000 * i);
                timer.wait_until(at, &stop).await;
                let now = Instant::now();
                assert!(now >= at, "ended {:?} early", at - now);
                lags.push(now - at);
            }
            lags.sort();
            let p50 = lags[lags.len() / 2];
            assert!(p50 < TEST_P50_BOUND, "p50 {p50:?}");
        })
        .await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn many_waiters_each_end_at_their_own_deadline_in_any_order_of_registration() {
        let stop = AtomicBool::new(false);
        with_timer(|timer| async move {
            let t0 = Instant::now();
            // Registered latest-first: the heap, not the order of arrival, decides.
            let waits: futures::stream::FuturesUnordered<_> = (0..50u64)
                .rev()
                .map(|i| {
                    let at = t0 + Duration::from_millis(5) + Duration::from_micros(200 * i);
                    let timer = timer.clone();
                    let stop = &stop;
                    async move {
                        timer.wait_until(at, stop).await;
                        (Instant::now() >= at, at)
                    }
                })
                .collect();
            let done: Vec<_> = futures::StreamExt::collect(waits).await;
            assert_eq!(done.len(), 50);
            assert!(done.iter().all(|(on_time, _)| *on_time));
            // They ended in deadline order.
            assert!(done.windows(2).all(|w| w[0].1 <= w[1].1));
            // A deadline already past completes at once.
            timer.wait_until(t0, &stop).await;
        })
        .await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn wake_all_ends_every_wait_once_the_stop_is_raised() {
        let stop = AtomicBool::new(false);
        with_timer(|timer| async move {
            let far = Instant::now() + Duration::from_secs(3600);
            let waits: futures::stream::FuturesUnordered<_> =
                (0..3).map(|_| timer.wait_until(far, &stop)).collect();
            let t0 = Instant::now();
            let ended = async {
                let n = futures::StreamExt::count(waits).await;
                assert_eq!(n, 3);
            };
            let stopper = async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                stop.store(true, Ordering::Relaxed);
                timer.wake_all();
                std::future::pending::<()>().await
            };
            tokio::select! {
                _ = ended => {}
                _ = stopper => unreachable!(),
            }
            assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
            // A wait begun after the stop ends at once.
            timer.wait_until(far, &stop).await;
        })
        .await;
    }
}
