//! Cancellation: a token the caller holds and every long step polls — the load engine between
//! operations, the capacity search between steps, a scenario between steps, the probe around
//! its fio and CPU runs — to stop cleanly, keeping what was measured. The library never
//! installs signal handlers: the command line turns SIGINT and SIGTERM into [`Cancel::cancel`]
//! (`cli::signals`); a test cancels a run by calling it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A cancellation token; clones share one state.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks every holder to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The flag itself, for code that polls an `AtomicBool` (the load engine) or for a signal
    /// handler to set.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    /// Sleeps `d` unless cancelled first (checked every 50 ms); true when the whole time passed.
    pub fn sleep(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        while Instant::now() < end {
            if self.is_cancelled() {
                return false;
            }
            std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
        }
        !self.is_cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_state_and_a_sleep_ends_early_when_cancelled() {
        let c = Cancel::new();
        let other = c.clone();
        assert!(!other.is_cancelled());
        assert!(c.sleep(Duration::from_millis(10)));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            other.cancel();
        });
        let started = Instant::now();
        assert!(!c.sleep(Duration::from_secs(10)));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(c.is_cancelled() && c.flag().load(Ordering::Relaxed));
        t.join().unwrap();
    }
}
