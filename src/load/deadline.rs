//! A request's timeout, enforced by the worker: each request slot's send time, scanned by its
//! worker, which fails the requests past their timeout by waking their slots.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use futures::task::AtomicWaker;

/// A request slot's deadline: when its current request was sent (nanoseconds after the
/// phase's start, 0 when idle), whether the worker's scan found it past the timeout, and the
/// waker of the slot to fail it.
#[derive(Default)]
pub(super) struct SlotTimer {
    sent_ns: AtomicU64,
    expired: AtomicBool,
    waker: AtomicWaker,
}

impl SlotTimer {
    /// Starts timing a request sent `since_t0` after the phase's start.
    pub(super) fn arm(&self, since_t0: Duration) {
        // +1: 0 means idle, and an operation may be sent at the phase's very start.
        self.sent_ns
            .store(since_t0.as_nanos() as u64 + 1, Ordering::Relaxed);
    }

    /// The slot is idle again.
    pub(super) fn disarm(&self) {
        self.sent_ns.store(0, Ordering::Relaxed);
        self.expired.store(false, Ordering::Relaxed);
    }

    /// Marks the request expired and wakes its slot if it was sent at or before `limit_ns`.
    pub(super) fn expire_if_sent_before(&self, limit_ns: u64) {
        let sent = self.sent_ns.load(Ordering::Relaxed);
        if sent != 0 && sent <= limit_ns && !self.expired.swap(true, Ordering::AcqRel) {
            self.waker.wake();
        }
    }
}

/// Polls `fut` until it completes or `timer` expires (None). It takes the future pinned in
/// place rather than by value: an operation's future is about 4 KB before its first poll and
/// every move of it copies all of it (see `slot`).
pub(super) fn with_deadline<'a, F: Future>(
    mut fut: Pin<&'a mut F>,
    timer: &'a SlotTimer,
) -> impl Future<Output = Option<F::Output>> + 'a {
    futures::future::poll_fn(move |cx| {
        if let Poll::Ready(r) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(r));
        }
        timer.waker.register(cx.waker());
        if timer.expired.load(Ordering::Acquire) {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    })
}
