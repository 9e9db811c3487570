//! How the capacity changed between two capacity searches, or two sets of repeated searches:
//! the change with an interval that holds both sources of doubt a search has.
//!
//! - **The bracket.** A search says the capacity is at least its highest passing step's
//!   throughput and below its lowest failing step's target rate: the true figure is anywhere
//!   in that bracket, however often the search is repeated. Between two searches the change is
//!   then anywhere from (B's low / A's high − 1) to (B's high / A's low − 1).
//! - **The spread over repeats.** Repeated searches on one system land on different steps
//!   (the host, the JIT, compaction): with at least two searches a side, Welch's t-test on the
//!   searches' capacities gives a 95% interval of the change and a p-value.
//!
//! The interval reported is the union of the two (of the brackets' means on sets), so that
//! neither doubt is hidden by the other. With one search a side the brackets alone decide,
//! which holds the step resolution but not how far apart repeated searches land (on a node
//! whose JIT is still warming up, three searches in a row gave 750, 1,872 and 5,095 ops/s):
//! such a verdict is shown with that caveat, and a `--fail-if` gate refuses it. With sets,
//! a change counts when the repeats make it significant and the brackets do not contradict it.

use crate::error::Invalid;
use crate::result::capacity::CapacityResult;
use crate::stats::compare::{
    ALPHA, Direction, MetricComparison, Sampling, Scale, Verdict, compare_scaled,
};

/// The name the comparison goes by in tables and `--fail-if` rules.
pub const METRIC: &str = "capacity ops/s";

/// What one search says of the capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    /// The highest passing step's achieved throughput: the capacity the search reports.
    pub capacity: f64,
    /// The capacity is at least this (= `capacity`; 0 when no step passed).
    pub low: f64,
    /// And below this: the lowest failing step's target rate (open loop). None when no step
    /// failed (the search stopped at its step limit) or in closed loop, whose failing step
    /// has no rate.
    pub high: Option<f64>,
}

impl Bracket {
    /// The bracket of a search; None when it has no verdict yet.
    pub fn of(r: &CapacityResult) -> Option<Bracket> {
        let v = r.verdict.as_ref()?;
        let capacity = v.highest_passing_ops_per_s.unwrap_or(0.0);
        Some(Bracket {
            capacity,
            low: capacity,
            high: v
                .failing_rate_per_s
                .filter(|h| h.is_finite() && *h > capacity),
        })
    }
}

/// The change of capacity from A to B.
#[derive(Debug, Clone)]
pub struct CapacityChange {
    pub a: Vec<Bracket>,
    pub b: Vec<Bracket>,
    /// Mean capacity of each side.
    pub a_mean: f64,
    pub b_mean: f64,
    /// B's mean over A's, less 1.
    pub relative_diff: f64,
    /// The change the brackets allow (on sets, of the brackets' means): from `bracket_low`
    /// to `bracket_high` (None: unbounded above).
    pub bracket_low: f64,
    pub bracket_high: Option<f64>,
    /// Welch's t-test over the searches' capacities (at least 2 a side).
    pub repeats: Option<MetricComparison>,
    /// The interval reported: the union of the brackets' and the repeats' 95% interval.
    pub low: f64,
    pub high: Option<f64>,
    pub verdict: Verdict,
}

impl CapacityChange {
    /// Whether the change is established in its direction (see the module's words): the
    /// brackets exclude no change, or the repeats are significant at `significant` (a gate
    /// decides that over all its rules' comparisons) and the brackets do not say otherwise.
    pub fn established(&self, significant: bool) -> bool {
        let rise = self.relative_diff > 0.0;
        let brackets_exclude_zero = if rise {
            self.bracket_low > 0.0
        } else {
            self.bracket_high.is_some_and(|h| h < 0.0)
        };
        let brackets_allow = if rise {
            self.bracket_high.is_none_or(|h| h > 0.0)
        } else {
            self.bracket_low < 0.0
        };
        match self.repeats {
            // Sets: the spread over repeats decides; the brackets of the means can only
            // veto (a bracket of means says nothing of how far apart repeats land).
            Some(_) => significant && brackets_allow,
            None => brackets_exclude_zero,
        }
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The change of capacity from the searches `a` to the searches `b` (one or at least two a
/// side). A search without a verdict or without a passing step on side A is refused, named by
/// its position.
pub fn compare(a: &[&CapacityResult], b: &[&CapacityResult]) -> Result<CapacityChange, Invalid> {
    let brackets = |side: &str, set: &[&CapacityResult]| -> Result<Vec<Bracket>, Invalid> {
        set.iter()
            .enumerate()
            .map(|(i, r)| {
                Bracket::of(r).ok_or_else(|| {
                    crate::invalid!(
                        "{side}: search {} of {} ({}) has no verdict (it did not finish a step)",
                        i + 1,
                        set.len(),
                        r.env
                    )
                })
            })
            .collect()
    };
    let ba = brackets("A", a)?;
    let bb = brackets("B", b)?;
    match (ba.len(), bb.len()) {
        (1, 1) => {}
        (x, y) if x >= 2 && y >= 2 => {}
        (x, y) => {
            return Err(crate::invalid!(
                "A holds {x} capacity search(es) and B {y}: compare one search with one, or a set of at least 2 repeated searches with a set"
            ));
        }
    }
    let caps = |s: &[Bracket]| s.iter().map(|b| b.capacity).collect::<Vec<_>>();
    let (ca, cb) = (caps(&ba), caps(&bb));
    let a_mean = mean(&ca);
    let b_mean = mean(&cb);
    if a_mean <= 0.0 {
        return Err(
            "A: no step of its search(es) passed, so it has no capacity to compare against".into(),
        );
    }
    let relative_diff = b_mean / a_mean - 1.0;
    let a_low = mean(&ba.iter().map(|x| x.low).collect::<Vec<_>>());
    let b_low = mean(&bb.iter().map(|x| x.low).collect::<Vec<_>>());
    let highs = |s: &[Bracket]| -> Option<f64> {
        s.iter()
            .map(|x| x.high)
            .collect::<Option<Vec<f64>>>()
            .map(|h| mean(&h))
    };
    let (a_high, b_high) = (highs(&ba), highs(&bb));
    // B's lowest over A's highest (A unbounded above: B may be as little as 0% of it), and
    // B's highest over A's lowest.
    let bracket_low = match a_high {
        Some(h) => b_low / h - 1.0,
        None => -1.0,
    };
    let bracket_high = b_high.map(|h| h / a_low - 1.0);
    let repeats = if ba.len() >= 2 {
        Some(
            compare_scaled(
                METRIC,
                Direction::HigherIsBetter,
                &ca,
                &cb,
                Sampling::Runs,
                Scale::Linear,
            )
            .map_err(|e| crate::invalid!("{e}"))?,
        )
    } else {
        None
    };
    // A capacity is not below zero: the t interval of a set with a wide spread can reach past
    // -100%, and is cut there.
    let (low, high) = match &repeats {
        Some(t) => (
            bracket_low.min(t.relative_low).max(-1.0),
            bracket_high.map(|h| h.max(t.relative_high)),
        ),
        None => (bracket_low, bracket_high),
    };
    let mut change = CapacityChange {
        a: ba,
        b: bb,
        a_mean,
        b_mean,
        relative_diff,
        bracket_low,
        bracket_high,
        low,
        high,
        verdict: Verdict::NotDistinguishable,
        repeats,
    };
    let significant = change.repeats.as_ref().is_some_and(|t| t.test.p < ALPHA);
    if relative_diff != 0.0 && change.established(significant) {
        change.verdict = if relative_diff > 0.0 {
            Verdict::Better
        } else {
            Verdict::Worse
        };
    }
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::capacity_at;

    /// A search that passed at `ops` (achieving it) and failed at `fail`.
    fn search(ops: f64, fail: f64) -> CapacityResult {
        let mut r = capacity_at("x", ops);
        let v = r.verdict.as_mut().unwrap();
        v.failing_rate_per_s = Some(fail);
        r
    }

    #[test]
    fn one_search_a_side_is_judged_by_the_brackets() {
        // A in [1000, 1200), B in [700, 800): B is lower whatever the true figures.
        let (a, b) = (search(1000.0, 1200.0), search(700.0, 800.0));
        let c = compare(&[&a], &[&b]).unwrap();
        assert!((c.relative_diff + 0.3).abs() < 1e-9);
        assert!((c.bracket_low - (700.0 / 1200.0 - 1.0)).abs() < 1e-9);
        assert!((c.bracket_high.unwrap() - (800.0 / 1000.0 - 1.0)).abs() < 1e-9);
        assert_eq!(c.verdict, Verdict::Worse);
        // Overlapping brackets: no verdict, though the reported figures differ.
        let (a, b) = (search(1000.0, 1500.0), search(900.0, 1400.0));
        let c = compare(&[&a], &[&b]).unwrap();
        assert_eq!(c.verdict, Verdict::NotDistinguishable);
        assert!(c.low < 0.0 && c.high.unwrap() > 0.0);
        // A/A: nothing.
        let c = compare(&[&a], &[&a]).unwrap();
        assert_eq!(c.verdict, Verdict::NotDistinguishable);
        assert_eq!(c.relative_diff, 0.0);
        // B's search never failed: unbounded above, and a rise is still established by
        // B's low above A's high.
        let mut up = capacity_at("x", 2000.0);
        up.verdict.as_mut().unwrap().failing_rate_per_s = None;
        let c = compare(&[&a], &[&up]).unwrap();
        assert_eq!(c.high, None);
        assert_eq!(c.verdict, Verdict::Better);
    }

    fn refs(s: &[CapacityResult]) -> Vec<&CapacityResult> {
        s.iter().collect()
    }

    #[test]
    fn sets_of_searches_add_their_spread_to_the_brackets() {
        let a: Vec<CapacityResult> = [1000.0, 1050.0, 980.0]
            .iter()
            .map(|&x| search(x, x * 1.1))
            .collect();
        let b: Vec<CapacityResult> = [500.0, 520.0, 490.0]
            .iter()
            .map(|&x| search(x, x * 1.1))
            .collect();
        let c = compare(&refs(&a), &refs(&b)).unwrap();
        let t = c.repeats.as_ref().expect("Welch over the sets");
        assert!(t.test.p < 0.01, "{}", t.test.p);
        assert!(c.low <= t.relative_low && c.low <= c.bracket_low);
        assert!(c.high.unwrap() >= t.relative_high);
        assert_eq!(c.verdict, Verdict::Worse);
        // A/A sets: the same searches both sides.
        let c = compare(&refs(&a), &refs(&a)).unwrap();
        assert_eq!(c.verdict, Verdict::NotDistinguishable);
        assert!(c.low < 0.0 && c.high.unwrap() > 0.0);
        // Sets whose brackets' means are far apart but whose repeats scatter over both:
        // not a change (the repeats decide).
        let a: Vec<CapacityResult> = [750.0, 1_872.0, 5_095.0]
            .iter()
            .map(|&x| search(x, x * 1.2))
            .collect();
        let b: Vec<CapacityResult> = [188.0, 7_595.0, 11_487.0]
            .iter()
            .map(|&x| search(x, x * 1.2))
            .collect();
        let c = compare(&refs(&a), &refs(&b)).unwrap();
        assert!(c.bracket_low > 0.0, "the means' brackets exclude zero");
        assert_eq!(c.verdict, Verdict::NotDistinguishable);
        // One against a set: refused.
        let e = compare(&refs(&a)[..1], &refs(&b)).unwrap_err();
        assert!(e.contains("A holds 1 capacity search(es) and B 3"), "{e}");
    }
}
