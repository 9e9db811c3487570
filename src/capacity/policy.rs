//! The capacity search's policy: which level the next step runs at, from the spec and the
//! steps so far. Pure: no I/O, no clock; the loop that runs the steps is
//! `scenario::capacity`, and the verdict of the steps is part of the persisted record
//! ([`CapacityResult::verdict_of`], which `result` needs for files written before it was
//! stored).

use crate::result::capacity::{CapacityResult, CapacitySpec, Growth, SearchMode, SearchStep};

/// What the next step runs at, or `None` when the search is over: grow until a step fails;
/// when no step has passed yet, halve the lowest failing level until one passes (down to
/// [`lowest_rate`], or one request in flight); then bisect `spec.refine` times between the
/// highest passing and the lowest failing level (in closed loop, while a whole number lies
/// between them). A step where a loader fell behind ends the search: the loaders are the
/// limit, no later step would measure the cluster. With `loaders` processes a
/// closed-loop step has at least one request in flight each: a downward search stops at
/// `loaders` in flight (a level below is raised to it, and one already run ends the search).
pub fn next_level(spec: &CapacitySpec, steps: &[SearchStep], loaders: u64) -> Option<Level> {
    match spec.mode {
        SearchMode::Rate => next_rate(spec, steps).map(Level::Rate),
        SearchMode::Concurrency { .. } => {
            let c = next_in_flight(spec, steps)?;
            let c = c.max(usize::try_from(loaders).unwrap_or(usize::MAX));
            (!steps.iter().any(|s| s.concurrency == Some(c))).then_some(Level::Concurrency(c))
        }
    }
}

/// The next concurrency of a closed-loop search after `c`: grown by `growth`, rounded, and at
/// least one more than `c`.
pub fn next_concurrency(growth: Growth, c: usize) -> usize {
    let grown = growth.next(c as f64).round();
    let grown = if grown.is_finite() && grown < usize::MAX as f64 {
        grown as usize
    } else {
        usize::MAX
    };
    grown.max(c.saturating_add(1))
}

/// What one step runs at: a target rate (open loop) or requests in flight (closed loop).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Level {
    Rate(f64),
    Concurrency(usize),
}

impl Level {
    /// As the coordinator publishes it: `rate:1500`, `concurrency:8`.
    pub fn text(&self) -> String {
        match self {
            Level::Rate(r) => format!("rate:{r}"),
            Level::Concurrency(c) => format!("concurrency:{c}"),
        }
    }

    /// [`Self::text`] read back.
    pub fn parse(s: &str) -> Option<Level> {
        match s.split_once(':')? {
            ("rate", r) => r
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r > 0.0)
                .map(Level::Rate),
            ("concurrency", c) => c
                .parse::<usize>()
                .ok()
                .filter(|c| *c >= 1)
                .map(Level::Concurrency),
            _ => None,
        }
    }
}

/// [`next_level`] of a closed-loop search: whole numbers, each growing step above the
/// last.
pub fn next_in_flight(spec: &CapacitySpec, steps: &[SearchStep]) -> Option<usize> {
    let SearchMode::Concurrency { start } = spec.mode else {
        return None;
    };
    if steps.len() >= spec.max_steps || steps.iter().any(SearchStep::loader_bound) {
        return None;
    }
    let Some(last) = steps.last() else {
        return Some(start);
    };
    let last = last.concurrency.unwrap_or(start);
    let v = CapacityResult::verdict_of(steps);
    match (v.highest_passing_concurrency, v.failing_concurrency) {
        (_, None) => Some(next_concurrency(spec.growth, last)),
        // Even the first step failed: search downward, to one request in flight.
        (None, Some(f)) => Some(f / 2).filter(|c| *c >= 1),
        (Some(p), Some(f)) => {
            (refinements(steps) < spec.refine && f - p > 1).then_some(p + (f - p) / 2)
        }
    }
}

/// How many steps it took to first bracket the capacity (a passing step below a failing
/// one); the steps after are refinements.
fn bracketed_at(steps: &[SearchStep]) -> usize {
    (1..=steps.len())
        .find(|&k| {
            let v = CapacityResult::verdict_of(&steps[..k]);
            v.highest_passing_ops_per_s.is_some() && v.found_failure()
        })
        .unwrap_or(steps.len())
}

/// How many of `steps` are refinements: the steps after the capacity was first bracketed
/// (0 while it is not).
pub fn refinements(steps: &[SearchStep]) -> usize {
    steps.len() - bracketed_at(steps)
}

/// The next step's rate of an open-loop search (see [`next_level`]).
pub fn next_rate(spec: &CapacitySpec, steps: &[SearchStep]) -> Option<f64> {
    if steps.len() >= spec.max_steps || steps.iter().any(SearchStep::loader_bound) {
        return None;
    }
    let Some(last) = steps.last() else {
        return Some(spec.start_rate_per_s);
    };
    let v = CapacityResult::verdict_of(steps);
    match (v.highest_passing_rate_per_s, v.failing_rate_per_s) {
        (_, None) => Some(spec.growth.next(last.target_rate_per_s)),
        // Even the first step failed: search downward.
        (None, Some(f)) => Some(f / 2.0).filter(|r| *r >= lowest_rate(spec)),
        (Some(p), Some(f)) => (refinements(steps) < spec.refine).then_some((p + f) / 2.0),
    }
}

/// The lowest rate a downward search tries: 1/64 of the start rate (six halvings), and at
/// least 1 op/s.
pub fn lowest_rate(spec: &CapacitySpec) -> f64 {
    (spec.start_rate_per_s / 64.0).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::{
        closed_spec, closed_step as closed, search_spec, search_step as step,
    };

    #[test]
    fn the_search_grows_then_bisects_and_the_verdict_brackets_the_capacity() {
        let spec = search_spec();
        let next = |steps: &[SearchStep]| next_rate(&spec, steps);
        let mut steps = vec![];
        assert_eq!(next(&steps), Some(1000.0));
        steps.push(step(1000.0, true));
        assert_eq!(next(&steps), Some(2000.0));
        steps.push(step(2000.0, true));
        steps.push(step(4000.0, false));
        assert_eq!(next(&steps), Some(3000.0), "bisect 2000..4000");
        steps.push(step(3000.0, false));
        assert_eq!(next(&steps), Some(2500.0), "bisect 2000..3000");
        steps.push(step(2500.0, true));
        assert_eq!(next(&steps), None, "two refinements done");
        let v = CapacityResult::verdict_of(&steps);
        assert_eq!(v.highest_passing_rate_per_s, Some(2500.0));
        assert_eq!(v.failing_rate_per_s, Some(3000.0));
        assert_eq!(v.failed, ["x: 1.00"]);
        // Without refinement the search ends at the first failure.
        let plain = CapacitySpec {
            refine: 0,
            ..spec.clone()
        };
        assert_eq!(next_rate(&plain, &steps[..3]), None);
        // max_steps bounds everything.
        let short = CapacitySpec {
            max_steps: 2,
            ..spec.clone()
        };
        assert_eq!(next_rate(&short, &steps[..2]), None);
    }

    #[test]
    fn a_failing_first_step_searches_downward_then_bisects() {
        let spec = CapacitySpec {
            growth: Growth::Factor(1.4),
            max_steps: 20,
            ..search_spec()
        };
        let next = |steps: &[SearchStep]| next_rate(&spec, steps);
        let mut steps = vec![step(1000.0, false)];
        assert_eq!(next(&steps), Some(500.0), "halve");
        steps.push(step(500.0, false));
        assert_eq!(next(&steps), Some(250.0));
        steps.push(step(250.0, true));
        assert_eq!(next(&steps), Some(375.0), "bisect 250..500");
        steps.push(step(375.0, true));
        assert_eq!(next(&steps), Some(437.5), "bisect 375..500");
        steps.push(step(437.5, false));
        assert_eq!(next(&steps), None, "two refinements done");
        let v = CapacityResult::verdict_of(&steps);
        assert_eq!(v.highest_passing_rate_per_s, Some(375.0));
        assert_eq!(v.failing_rate_per_s, Some(437.5));
        // Nothing passes: down to 1/64 of the start, then a clear end.
        let mut rate = 1000.0;
        let mut all_fail = vec![];
        while let Some(r) = next_rate(&spec, &all_fail) {
            assert_eq!(r, rate);
            all_fail.push(step(r, false));
            rate /= 2.0;
        }
        assert_eq!(all_fail.len(), 7, "1000 … 15.6 ops/s");
        assert_eq!(all_fail.last().unwrap().target_rate_per_s, 1000.0 / 64.0);
        assert_eq!(lowest_rate(&spec), 1000.0 / 64.0);
    }

    #[test]
    fn concurrency_grows_in_whole_numbers_each_above_the_last() {
        assert_eq!(next_concurrency(Growth::Factor(1.5), 4), 6);
        assert_eq!(
            next_concurrency(Growth::Factor(1.5), 5),
            8,
            "7.5 rounds to 8"
        );
        assert_eq!(
            next_concurrency(Growth::Factor(1.1), 1),
            2,
            "1.1 rounds to 1: one more"
        );
        assert_eq!(next_concurrency(Growth::Factor(1.2), 2), 3);
        assert_eq!(next_concurrency(Growth::Increment(8.0), 4), 12);
        assert_eq!(next_concurrency(Growth::Increment(0.4), 4), 5);
        assert_eq!(next_concurrency(Growth::Factor(1e300), 4), usize::MAX);
        let spec = closed_spec(1, Growth::Factor(1.3), 0);
        let mut steps = vec![];
        let mut seen = vec![];
        while let Some(c) = next_in_flight(&spec, &steps) {
            seen.push(c);
            steps.push(closed(c, true));
        }
        assert_eq!(seen, [1, 2, 3, 4, 5, 7, 9, 12, 16, 21], "10 steps at most");
        // An open-loop spec has no next concurrency, and the rate search ignores it.
        assert_eq!(next_in_flight(&search_spec(), &[]), None);
        assert_eq!(
            next_level(&spec, &[], 1),
            Some(Level::Concurrency(1)),
            "the level of a closed-loop search"
        );
    }

    #[test]
    fn closed_loop_refinement_bisects_whole_numbers_until_none_is_between() {
        let spec = closed_spec(8, Growth::Factor(2.0), 5);
        let next = |steps: &[SearchStep]| next_in_flight(&spec, steps);
        let mut steps = vec![closed(8, true), closed(16, true)];
        assert_eq!(next(&steps), Some(32));
        steps.push(closed(32, false));
        assert_eq!(next(&steps), Some(24), "bisect 16..32");
        steps.push(closed(24, false));
        assert_eq!(next(&steps), Some(20));
        steps.push(closed(20, true));
        assert_eq!(next(&steps), Some(22));
        steps.push(closed(22, true));
        assert_eq!(next(&steps), Some(23));
        steps.push(closed(23, false));
        assert_eq!(next(&steps), None, "no whole number between 22 and 23");
        let v = CapacityResult::verdict_of(&steps);
        assert_eq!(v.highest_passing_concurrency, Some(22));
        assert_eq!(v.failing_concurrency, Some(23));
        assert_eq!(
            (v.highest_passing_rate_per_s, v.failing_rate_per_s),
            (None, None)
        );
        assert!(v.found_failure());
        assert_eq!(v.failed, ["x: 1.00"]);
        assert!(v.highest_passing_ops_per_s.is_some_and(|o| o > 0.0));
        // Fewer refinements allowed: the search stops after them.
        let two = closed_spec(8, Growth::Factor(2.0), 2);
        assert_eq!(next_in_flight(&two, &steps[..4]), Some(20));
        assert_eq!(next_in_flight(&two, &steps[..5]), None);
        // Without refinement the search ends at the first failure.
        let plain = closed_spec(8, Growth::Factor(2.0), 0);
        assert_eq!(next_in_flight(&plain, &steps[..3]), None);
    }

    #[test]
    fn a_failing_first_closed_loop_step_halves_down_to_one() {
        let spec = closed_spec(8, Growth::Increment(4.0), 3);
        let next = |steps: &[SearchStep]| next_in_flight(&spec, steps);
        let mut steps = vec![closed(8, false)];
        assert_eq!(next(&steps), Some(4));
        steps.push(closed(4, false));
        assert_eq!(next(&steps), Some(2));
        steps.push(closed(2, true));
        assert_eq!(next(&steps), Some(3), "bisect 2..4");
        steps.push(closed(3, true));
        assert_eq!(next(&steps), None, "nothing between 3 and 4");
        let v = CapacityResult::verdict_of(&steps);
        assert_eq!(
            (v.highest_passing_concurrency, v.failing_concurrency),
            (Some(3), Some(4))
        );
        let all_fail = [
            closed(8, false),
            closed(4, false),
            closed(2, false),
            closed(1, false),
        ];
        assert_eq!(next(&all_fail[..3]), Some(1));
        assert_eq!(next(&all_fail), None, "below one request in flight");
        let v = CapacityResult::verdict_of(&all_fail);
        assert_eq!(
            (v.highest_passing_concurrency, v.failing_concurrency),
            (None, Some(1))
        );
        assert_eq!(v.highest_passing_ops_per_s, None);
    }

    /// `--resume` reads the result back and computes the next step from its recorded steps:
    /// a closed-loop search continues exactly where it stopped.
    #[test]
    fn a_resumed_closed_loop_search_continues_from_its_recorded_steps() {
        let spec = closed_spec(4, Growth::Factor(1.5), 2);
        let steps = vec![closed(4, true), closed(6, true), closed(9, false)];
        let text = serde_json::to_string(&(spec.clone(), steps.clone())).unwrap();
        let (read_spec, read_steps): (CapacitySpec, Vec<SearchStep>) =
            serde_json::from_str(&text).unwrap();
        assert_eq!(read_spec.mode, SearchMode::Concurrency { start: 4 });
        assert_eq!(
            next_in_flight(&read_spec, &read_steps),
            next_in_flight(&spec, &steps)
        );
        assert_eq!(next_in_flight(&read_spec, &read_steps), Some(7));
    }

    /// A whole search against a cluster that holds `capacity` (a step passes when its level is
    /// at most that), run by [`next_level`] with `loaders` loaders, as a person reads it: each
    /// step's level and outcome, then the verdict. `behind_at`: the step whose second loader
    /// fell behind.
    fn transcript(
        title: &str,
        spec: &CapacitySpec,
        capacity: f64,
        loaders: u64,
        behind_at: Option<usize>,
    ) -> String {
        use std::fmt::Write;
        let mut out = format!("## {title}\n");
        let mut steps: Vec<SearchStep> = Vec::new();
        while let Some(level) = next_level(spec, &steps, loaders) {
            let index = steps.len() + 1;
            let mut s = match level {
                Level::Rate(r) => step(r, r <= capacity),
                Level::Concurrency(c) => closed(c, c as f64 <= capacity),
            };
            s.index = index;
            if behind_at == Some(index) {
                s.loaders = Some(crate::result::capacity::StepLoaders {
                    count: 2,
                    start_spread_ms: 0.0,
                    shards: (1..=2)
                        .map(|i| crate::result::capacity::StepShard {
                            index: i,
                            ops_per_s: 0.0,
                            target_rate_per_s: None,
                            behind: if i == 2 {
                                vec!["sent 80% on time".into()]
                            } else {
                                vec![]
                            },
                        })
                        .collect(),
                });
                // As the step's loaders check would: a loader behind fails the step.
                s.passed = false;
            }
            let outcome = match (s.loader_bound(), s.passed) {
                (true, _) => "loader-bound",
                (false, true) => "passed",
                (false, false) => "failed",
            };
            let refinements = refinements(&[steps.as_slice(), std::slice::from_ref(&s)].concat());
            let _ = writeln!(
                out,
                "step {index}: {} {outcome} (refinements so far: {refinements})",
                level.text()
            );
            steps.push(s);
        }
        let v = CapacityResult::verdict_of(&steps);
        let show = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x}"));
        let _ = writeln!(
            out,
            "verdict: highest passing rate {} / concurrency {}; failing rate {} / concurrency \
             {}; loader-bound step {}\n",
            show(v.highest_passing_rate_per_s),
            show(v.highest_passing_concurrency.map(|c| c as f64)),
            show(v.failing_rate_per_s),
            show(v.failing_concurrency.map(|c| c as f64)),
            show(v.loader_bound_step.map(|i| i as f64)),
        );
        out
    }

    /// The policy's whole behaviour on the searches an operator runs, as one golden file
    /// (`UPDATE_GOLDEN=1` rewrites it after an intended change; review its diff).
    #[test]
    fn searches_step_as_the_golden_transcripts_say() {
        let spec = search_spec();
        let increment = CapacitySpec {
            growth: Growth::Increment(500.0),
            refine: 3,
            ..search_spec()
        };
        let short = CapacitySpec {
            max_steps: 4,
            ..search_spec()
        };
        let out = [
            transcript(
                "open loop ×2 from 1,000, refine 2, holds 7,300",
                &spec,
                7300.0,
                1,
                None,
            ),
            transcript(
                "open loop +500 from 1,000, refine 3, holds 2,600",
                &increment,
                2600.0,
                1,
                None,
            ),
            transcript(
                "open loop, the first step fails: holds 180",
                &spec,
                180.0,
                1,
                None,
            ),
            transcript("open loop, nothing passes: holds 5", &spec, 5.0, 1, None),
            transcript(
                "open loop, 4 steps at most, none fails",
                &short,
                1e9,
                1,
                None,
            ),
            transcript(
                "open loop, 2 loaders, the second behind at step 3",
                &spec,
                1e9,
                2,
                Some(3),
            ),
            transcript(
                "closed loop ×1.5 from 4, refine 2, holds 20",
                &closed_spec(4, Growth::Factor(1.5), 2),
                20.0,
                1,
                None,
            ),
            transcript(
                "closed loop from 8, the first step fails: holds 2",
                &closed_spec(8, Growth::Factor(2.0), 2),
                2.0,
                1,
                None,
            ),
            transcript(
                "closed loop from 8 with 3 loaders, holds 2: 3 in flight is the floor",
                &closed_spec(8, Growth::Factor(2.0), 2),
                2.0,
                3,
                None,
            ),
        ]
        .concat();
        crate::testutil::assert_golden("src/capacity/golden/policy.txt", &out);
    }
}
