//! Fill (reference 001): write rows in order until the nodes hold a data size — a multiple of
//! their RAM or a byte count — then wait for compactions to finish. The nodes' load is read from
//! their metrics endpoints or their `system_views.disk_usage`, so it counts flushed data
//! (memtables are not on disk yet).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::metrics::sampler::{MetricsPlan, scrape_all};

/// Mean load over the nodes that answered, bytes; `None` when none did.
pub fn mean_load(plan: &MetricsPlan) -> Option<f64> {
    let loads: Vec<f64> = scrape_all(plan, Duration::from_secs(2))
        .into_iter()
        .filter_map(|r| r.ok().and_then(|r| r.load_bytes))
        .collect();
    (!loads.is_empty()).then(|| loads.iter().sum::<f64>() / loads.len() as f64)
}

/// Watches the nodes' mean load and sets `until` once it reaches `target_bytes`.
pub struct Watcher {
    pub until: Arc<AtomicBool>,
    /// Judging starts once this is set (the load before it is only reported).
    pub armed: Arc<AtomicBool>,
    quit: Arc<AtomicBool>,
    handle: Option<JoinHandle<Option<f64>>>,
}

/// When the watcher may call the target reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// From the first reading: the data already there counts.
    AtOnce,
    /// The fill drops its keyspace first: from when [`Watcher::armed`] is set (the run's main
    /// phase began, so the drop is done) and a reading below the target has been seen (the
    /// nodes' load no longer counts the dropped data).
    AfterDrop,
}

impl Watcher {
    pub fn start(
        metrics: MetricsPlan,
        target_bytes: f64,
        judge: Judge,
        mut progress: impl FnMut(f64) + Send + 'static,
    ) -> Watcher {
        let until = Arc::new(AtomicBool::new(false));
        let armed = Arc::new(AtomicBool::new(judge == Judge::AtOnce));
        let quit = Arc::new(AtomicBool::new(false));
        let (u, a, q) = (until.clone(), armed.clone(), quit.clone());
        let handle = std::thread::spawn(move || {
            let mut last = None;
            let mut next_report = Instant::now();
            let mut seen_below = judge == Judge::AtOnce;
            while !q.load(Ordering::Relaxed) {
                if let Some(load) = mean_load(&metrics) {
                    last = Some(load);
                    if Instant::now() >= next_report {
                        progress(load);
                        next_report = Instant::now() + Duration::from_secs(5);
                    }
                    if a.load(Ordering::Relaxed) {
                        seen_below |= load < target_bytes;
                        if seen_below && load >= target_bytes {
                            u.store(true, Ordering::Relaxed);
                            return last;
                        }
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
            last
        });
        Watcher {
            until,
            armed,
            quit,
            handle: Some(handle),
        }
    }

    /// Stops watching; the last mean load seen.
    pub fn finish(mut self) -> Option<f64> {
        self.quit.store(true, Ordering::Relaxed);
        self.handle.take().and_then(|h| h.join().ok()).flatten()
    }
}
