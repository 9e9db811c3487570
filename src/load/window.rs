//! The measured window of a phase and what the open loop's schedule asked of it. Pure
//! arithmetic, no clock: the executor hands in what it saw.
//!
//! A phase's operations do not all finish inside its scheduled window: the last ones are still
//! in flight when the schedule ends and complete during the *drain*. Dividing the operations
//! by the window plus the drain reads every short run low (a 2 s window with a 48 ms drain
//! reads 2.4% under its rate), so the window is the schedule's, throughput counts what
//! completed inside it, and the achieved rate compares the operations sent before the window
//! ended with the number the schedule started in it. The drain is reported on its own.

use crate::spec::load::Share;

/// Intended start of operation `i` at `rate` ops/s, in nanoseconds after the phase's start.
#[inline]
pub fn intended_ns(i: u64, rate: f64) -> u64 {
    (i as f64 * 1e9 / rate) as u64
}

/// How many operations the schedule starts before `ns` nanoseconds after the phase's start:
/// the smallest `i` whose intended start is at or after `ns`.
pub fn scheduled_before(rate: f64, ns: u64) -> u64 {
    let mut i = (ns as f64 * rate / 1e9).ceil().max(0.0) as u64;
    while i > 0 && intended_ns(i - 1, rate) >= ns {
        i -= 1;
    }
    while intended_ns(i, rate) < ns {
        i += 1;
    }
    i
}

/// Nanoseconds in `secs` seconds, as the executor measures a phase's end.
pub fn secs_to_ns(secs: f64) -> u64 {
    std::time::Duration::try_from_secs_f64(secs.max(0.0))
        .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
        .unwrap_or(u64::MAX)
}

/// Where a phase's measured window lies and what the schedule put in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// Start of the first measured interval, seconds after the phase's start.
    pub start_s: f64,
    /// The scheduled end (or when the phase was stopped), seconds after the phase's start.
    pub end_s: f64,
    /// From the window's end until the last operation completed.
    pub drain_s: f64,
    /// Open loop: operations whose intended start lies in [warmup, end).
    pub scheduled: Option<u64>,
}

impl Window {
    /// The window of a phase that measured from `start_s`, ended its schedule at `end_s`
    /// and saw its last completion at `last_s`; `rate` (the whole run's) and `warmup_s` give
    /// the open loop's schedule, of which `share` is this process's part.
    pub fn new(
        start_s: f64,
        end_s: f64,
        last_s: f64,
        rate: Option<f64>,
        warmup_s: f64,
        share: Share,
    ) -> Window {
        // The schedule's end, even when its last operation completed just before it.
        let end_s = end_s.max(start_s);
        Window {
            start_s,
            end_s,
            drain_s: (last_s - end_s).max(0.0),
            scheduled: rate.map(|r| {
                share
                    .local_count(scheduled_before(r, secs_to_ns(end_s)))
                    .saturating_sub(share.local_count(scheduled_before(r, secs_to_ns(warmup_s))))
            }),
        }
    }

    pub fn secs(&self) -> f64 {
        (self.end_s - self.start_s).max(0.0)
    }

    /// Operations per second over the window, of `completed_in_window` operations.
    pub fn rate_of(&self, completed_in_window: u64) -> f64 {
        let s = self.secs();
        if s > 0.0 {
            completed_in_window as f64 / s
        } else {
            0.0
        }
    }

    /// Open loop: the operations sent before the window ended ÷ those the schedule started
    /// in it.
    pub fn achieved_ratio(&self, sent_on_schedule: u64) -> Option<f64> {
        self.scheduled
            .filter(|n| *n > 0)
            .map(|n| sent_on_schedule as f64 / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_counts_operations_by_their_intended_start() {
        assert_eq!(scheduled_before(300.0, 0), 0);
        assert_eq!(scheduled_before(300.0, 1), 1);
        assert_eq!(scheduled_before(300.0, secs_to_ns(1.0)), 300);
        assert_eq!(scheduled_before(300.0, secs_to_ns(3.0)), 900);
        // 1/3 s steps are not exact in floating point; the count still matches the claims.
        for rate in [3.0, 7.0, 300.0, 1234.5, 2000.0] {
            for secs in [0.5, 1.0, 2.0, 3.0, 10.0] {
                let ns = secs_to_ns(secs);
                let n = scheduled_before(rate, ns);
                assert!(n == 0 || intended_ns(n - 1, rate) < ns, "{rate} {secs}");
                assert!(intended_ns(n, rate) >= ns, "{rate} {secs}");
            }
        }
        assert_eq!(secs_to_ns(1e30), u64::MAX);
        assert_eq!(secs_to_ns(-1.0), 0);
    }

    #[test]
    fn a_drain_after_the_schedule_does_not_lower_the_rate() {
        // The hand reproduction of the slow-machine failure: 300 ops/s, a 3 s step with 1 s of
        // warmup, every operation sent on time, the last one completing 47.6 ms late.
        let w = Window::new(1.0, 3.0, 3.0476, Some(300.0), 1.0, Share::WHOLE);
        assert_eq!(w.scheduled, Some(600));
        assert!((w.secs() - 2.0).abs() < 1e-12);
        assert!((w.drain_s - 0.0476).abs() < 1e-9);
        assert_eq!(w.achieved_ratio(600), Some(1.0));
        // The measured intervals saw 614 completions: the 600 of the window's schedule and
        // 14 of the warmup's that completed after it ended; 14 completed in the drain.
        assert!((w.rate_of(614 - 14) - 300.0).abs() < 1e-9);
        // The old arithmetic: all operations over window + drain.
        let old = 600.0 / (2.0 + w.drain_s) / 300.0;
        assert!((old - 0.9767).abs() < 1e-3, "{old}");
        // A client that fell behind: 60 of the schedule were not sent before the end.
        assert!((w.achieved_ratio(540).unwrap() - 0.9).abs() < 1e-12);
    }

    #[test]
    fn a_window_whose_last_operation_completed_before_its_end_keeps_its_length() {
        // 300 ops/s: the last operation is intended at 2.9967 s and completed at 2.999 s.
        let w = Window::new(1.0, 3.0, 2.999, Some(300.0), 1.0, Share::WHOLE);
        assert_eq!((w.secs(), w.drain_s, w.scheduled), (2.0, 0.0, Some(600)));
    }

    #[test]
    fn a_stopped_phase_ends_its_window_where_it_stopped() {
        // Stopped at 2.5 s of a 10 s schedule, the last completion at 2.6 s.
        let w = Window::new(1.0, 2.5, 2.6, Some(100.0), 1.0, Share::WHOLE);
        assert_eq!(w.scheduled, Some(150));
        assert!((w.drain_s - 0.1).abs() < 1e-9);
        // A closed loop has no schedule.
        let c = Window::new(0.0, 5.0, 5.01, None, 0.0, Share::WHOLE);
        assert_eq!((c.scheduled, c.achieved_ratio(10)), (None, None));
        assert!((c.rate_of(500) - 100.0).abs() < 1e-9);
        // Nothing measured (the warmup took the whole phase).
        let e = Window::new(3.0, 2.0, 2.0, Some(10.0), 3.0, Share::WHOLE);
        assert_eq!(
            (e.secs(), e.rate_of(5), e.achieved_ratio(0)),
            (0.0, 0.0, None)
        );
    }
}
