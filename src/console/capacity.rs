//! A capacity search as a person follows it: settling, each step and its checks, then the
//! steps table and the verdict.

use std::fmt::Write;

use crate::format::Table;
use crate::result::capacity::{CapacityResult, CapacityStatus, SearchMode, Verdict};
use crate::scenario::capacity::{Estimate, Progress};

/// ", node CPU: N%" where the settle read it.
fn node_cpu(cpu: &Option<f64>) -> String {
    cpu.map_or_else(String::new, |c| format!(", node CPU: {:.0}%", c * 100.0))
}

pub(super) fn progress(p: &Progress, quiet: bool) -> String {
    let pending = |p: &Option<f64>| p.map_or_else(|| "?".into(), |v| format!("{v:.0}"));
    match p {
        Progress::Plan(e) => estimate(e),
        Progress::Unmeasurable(what) => format!(
            "warning: the metric sources do not give {}: the verdict will mark {} unverified (see `cqlbench metrics check`)\n",
            what.join(" or "),
            if what.len() == 1 { "it" } else { "them" }
        ),
        Progress::Settling { pending: p, cpu } => {
            format!(
                "waiting for the nodes to settle (pending compactions: {}{})\n",
                pending(p),
                node_cpu(cpu)
            )
        }
        Progress::Settled {
            secs,
            pending: p,
            cpu,
        } => {
            format!(
                "settled after {secs:.0}s (pending compactions: {}{})\n",
                pending(p),
                node_cpu(cpu)
            )
        }
        Progress::StepStarted {
            index,
            rate,
            concurrency,
            loaders,
        } => {
            let by = match loaders {
                1 => String::new(),
                n => format!(", {n} loaders"),
            };
            match concurrency {
                Some(c) => format!("━━ step {index}: {c} in flight (closed loop{by})\n"),
                None if by.is_empty() => format!("━━ step {index}: {rate:.0} ops/s\n"),
                None => format!("━━ step {index}: {rate:.0} ops/s ({})\n", &by[2..]),
            }
        }
        Progress::WaitingAfter { secs } => {
            format!("waiting {secs:.0}s to read pending compactions after the step\n")
        }
        Progress::StepDone { step } => {
            let verdict = match (step.passed, step.loader_bound()) {
                (true, _) => "passed",
                (false, true) => "LOADER-BOUND",
                (false, false) => "OVERLOADED",
            };
            let mut out = match step.concurrency {
                Some(c) => format!(
                    "step {}: {:.0} ops/s achieved with {c} in flight: {verdict}\n",
                    step.index, step.summary.ops_per_s,
                ),
                None => format!(
                    "step {}: {:.0} ops/s achieved of {:.0}: {verdict}\n",
                    step.index, step.summary.ops_per_s, step.target_rate_per_s,
                ),
            };
            for c in step.checks.iter().filter(|c| !c.passed || !quiet) {
                let _ = writeln!(
                    out,
                    "  {:<10} {}: {}",
                    c.outcome(),
                    c.criterion,
                    c.measured()
                );
            }
            if let Some(l) = &step.loaders {
                let each: Vec<String> = l
                    .shards
                    .iter()
                    .map(|s| format!("{:.0}", s.ops_per_s))
                    .collect();
                let _ = writeln!(
                    out,
                    "  {} loaders started within {:.0} ms; each achieved {} ops/s (summed {:.0})",
                    l.count,
                    l.start_spread_ms,
                    each.join(" + "),
                    l.ops_per_s()
                );
            }
            if step.loader_bound() {
                let _ = writeln!(
                    out,
                    "  the loaders, not the cluster, are the limit here: the search stops"
                );
            }
            if !step.passed && step.host_saturated() {
                let _ = writeln!(
                    out,
                    "  note: this host's CPUs were {:.0}% busy during the step: the client and the nodes share them, so the failure may be the host's or the load generator's, not Cassandra's",
                    step.host_cpu.unwrap_or(0.0) * 100.0
                );
            }
            out
        }
        Progress::Run(crate::load::Event::Interval { phase, record, .. }) if !quiet => format!(
            "  {phase:<6} {:>5.0}s {:>8.0} ops/s{}\n",
            record.end_s,
            record.ops_per_s,
            if record.warmup { " (warmup)" } else { "" }
        ),
        Progress::Run(_) => String::new(),
    }
}

/// "capacity search: up to 10 steps × 90–210 s ≈ at most 35 min (…)".
fn estimate(e: &Estimate) -> String {
    let mut parts = vec![format!(
        "{} s step ({} s of it warmup)",
        e.step_s, e.warmup_s
    )];
    if e.settle_max_s > 0.0 {
        parts.insert(
            0,
            format!("settling compactions up to {} s", e.settle_max_s),
        );
    }
    if e.pending_after_s > 0.0 {
        parts.push(format!(
            "{} s wait to read pending compactions (--pending-after)",
            e.pending_after_s
        ));
    }
    let each = if e.step_min_s() == e.step_max_s() {
        format!("{} s", e.step_min_s())
    } else {
        format!("{}–{} s", e.step_min_s(), e.step_max_s())
    };
    format!(
        "capacity search: up to {} step{} × {each} ≈ at most {}, plus the first step's rampup (each step: {})\n",
        e.steps,
        if e.steps == 1 { "" } else { "s" },
        humantime::format_duration(std::time::Duration::from_secs(
            e.total_max_s().round() as u64
        )),
        parts.join(" + ")
    )
}

/// The steps as a table: each step's target rate, or its requests in flight in a closed-loop
/// search.
pub(super) fn steps_table(r: &CapacityResult) -> Table {
    let opt = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.0}"));
    let closed = matches!(r.spec.mode, SearchMode::Concurrency { .. });
    let mut t = Table {
        title: String::new(),
        header: [
            "step",
            if closed { "in flight" } else { "target/s" },
            "ops/s",
            "p50 ms",
            "p99 ms",
            "pending",
            "cpu %",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows: r
            .steps
            .iter()
            .map(|s| {
                vec![
                    s.index.to_string(),
                    match s.concurrency {
                        Some(c) => c.to_string(),
                        None => format!("{:.0}", s.target_rate_per_s),
                    },
                    format!("{:.0}", s.summary.ops_per_s),
                    format!("{:.2}", s.summary.all.response.p50_ms),
                    format!("{:.2}", s.summary.all.response.p99_ms),
                    opt(s.pending_after),
                    opt(s.node_cpu.map(|c| c * 100.0)),
                    step_outcome(s).to_string(),
                ]
            })
            .collect(),
        text_columns: vec![7],
    };
    // Steps run by several loaders: how many, and how far apart their main phases started.
    if r.steps.iter().any(|s| s.loader_count() > 1) {
        let at = 3;
        t.header.insert(at, "loaders".into());
        t.header.insert(at + 1, "spread ms".into());
        for (row, s) in t.rows.iter_mut().zip(&r.steps) {
            row.insert(at, s.loader_count().to_string());
            row.insert(at + 1, opt(s.loaders.as_ref().map(|l| l.start_spread_ms)));
        }
        t.text_columns = vec![9];
    }
    t
}

/// "ok", "overloaded" or "loader-bound" (a loader fell behind: the loaders' limit).
fn step_outcome(s: &crate::result::capacity::SearchStep) -> &'static str {
    match (s.passed, s.loader_bound()) {
        (true, _) => "ok",
        (false, true) => "loader-bound",
        (false, false) => "overloaded",
    }
}

/// How far `--refine` got.
enum Refinement {
    /// It was not given.
    NotAsked,
    /// Every bisection it asked for ran.
    Done,
    /// `--max-steps` ended the search after `ran` of them.
    MaxSteps { ran: usize },
    /// The search was interrupted before they all ran.
    Interrupted,
    /// The search stopped before they all ran for another reason (a node died).
    Stopped,
}

fn refinement(r: &CapacityResult) -> Refinement {
    let ran = crate::capacity::policy::refinements(&r.steps);
    if r.spec.refine == 0 {
        Refinement::NotAsked
    } else if ran >= r.spec.refine {
        Refinement::Done
    } else if r.status == CapacityStatus::Interrupted {
        Refinement::Interrupted
    } else if r.steps.len() >= r.spec.max_steps {
        Refinement::MaxSteps { ran }
    } else {
        Refinement::Stopped
    }
}

/// "--max-steps 6 ended the search before refinement" (or before it finished, after `ran` of
/// `--refine`'s bisections).
fn max_steps_ended(r: &CapacityResult, ran: usize) -> String {
    match ran {
        0 => format!(
            "--max-steps {} ended the search before refinement",
            r.spec.max_steps
        ),
        _ => format!(
            "--max-steps {} ended the search before refinement finished ({ran} of --refine {}'s bisections ran)",
            r.spec.max_steps, r.spec.refine
        ),
    }
}

/// What would bisect a closed-loop verdict's concurrencies, more than one apart.
fn concurrency_advice(r: &CapacityResult) -> String {
    match refinement(r) {
        Refinement::NotAsked => " (--refine bisects the concurrencies between)".into(),
        Refinement::Done => " (a higher --refine bisects the concurrencies between)".into(),
        Refinement::MaxSteps { ran } => format!(
            " ({}: raise it to bisect the concurrencies between)",
            max_steps_ended(r, ran)
        ),
        Refinement::Interrupted => {
            " (the search was interrupted before refinement finished: --resume continues it)".into()
        }
        Refinement::Stopped => String::new(),
    }
}

/// How wide the verdict's bracket is, and how `--refine` would narrow it (and what it costs).
fn bracket_advice(
    out: &mut String,
    r: &CapacityResult,
    passed: f64,
    failed: f64,
) -> std::fmt::Result {
    let width = (failed - passed) / passed;
    if width <= 0.1 {
        return writeln!(out, "  the capacity is known within {:.0}%", width * 100.0);
    }
    // Each bisection halves the bracket; enough of them to bring it within 10%.
    let more = (width / 0.1).log2().ceil().max(1.0) as usize;
    let per_step_s = r.spec.step_s + r.spec.criteria.pending_after_s;
    let cost = format!(
        "about {:.1} min more: {} steps of {:.0}s plus {:.0}s for pending compactions each",
        more as f64 * per_step_s / 60.0,
        more,
        r.spec.step_s,
        r.spec.criteria.pending_after_s
    );
    let pct = width * 100.0;
    match refinement(r) {
        Refinement::MaxSteps { ran } => writeln!(
            out,
            "  the capacity lies in a bracket {pct:.0}% wide: {}: --max-steps {} --refine {} bisects it to within 10% ({cost})",
            max_steps_ended(r, ran),
            r.steps.len() + more,
            r.spec.refine.max(ran + more)
        ),
        Refinement::Interrupted => writeln!(
            out,
            "  the capacity lies in a bracket {pct:.0}% wide: the search was interrupted before refinement finished (--resume continues it)"
        ),
        _ => writeln!(
            out,
            "  the capacity lies in a bracket {pct:.0}% wide: --refine {} bisects it to within 10% ({cost})",
            r.spec.refine + more
        ),
    }
}

/// The steps table and the verdict.
pub fn result_text(r: &CapacityResult) -> String {
    let mut out = format!("\n{}", steps_table(r).text());
    let Some(v) = &r.verdict else {
        return out;
    };
    if v.loader_bound_step.is_some() && !v.found_failure() {
        loader_bound_verdict(&mut out, r, v);
    } else if matches!(r.spec.mode, SearchMode::Concurrency { .. }) {
        closed_verdict(&mut out, r, v);
    } else {
        let _ = rate_verdict(&mut out, r, v);
    }
    if let Some(k) = v.loader_bound_step.filter(|_| v.found_failure()) {
        let _ = writeln!(
            out,
            "note: step {k} was loader-bound ({}): the search stopped there",
            v.loader_bound.join("; ")
        );
    }
    for u in &v.unverified {
        let _ = writeln!(out, "unverified: {u}");
    }
    let failing_level = v
        .failing_concurrency
        .map(|c| c as f64)
        .or(v.failing_rate_per_s);
    let failing = r
        .steps
        .iter()
        .find(|s| !s.passed && Some(s.level()) == failing_level);
    if let Some(f) = failing.filter(|s| s.host_saturated()) {
        let _ = writeln!(
            out,
            "note: the host's CPUs were {:.0}% busy in the failing step {}: with the client on the same host, the capacity may be the host's or the load generator's limit rather than Cassandra's",
            f.host_cpu.unwrap_or(0.0) * 100.0,
            f.index
        );
    }
    if r.status == CapacityStatus::Interrupted {
        let _ = writeln!(out, "the search was interrupted; completed steps are kept");
    }
    out
}

/// The verdict of a search a loader-bound step ended before any step overloaded the
/// cluster: the capacity is at least the highest passing step's, the loaders the limit.
fn loader_bound_verdict(out: &mut String, r: &CapacityResult, v: &Verdict) {
    let Some(step) = r
        .steps
        .iter()
        .find(|s| Some(s.index) == v.loader_bound_step)
    else {
        return;
    };
    let at = match step.concurrency {
        Some(c) => format!("{c} in flight"),
        None => format!("{:.0} ops/s", step.target_rate_per_s),
    };
    let floor = match (
        v.highest_passing_ops_per_s,
        v.highest_passing_concurrency,
        v.highest_passing_rate_per_s,
    ) {
        (Some(ops), Some(c), _) => format!("at least {ops:.0} ops/s with {c} in flight"),
        (Some(ops), None, Some(p)) => format!("at least {p:.0} ops/s ({ops:.0} achieved)"),
        _ => "not measured (no step passed)".into(),
    };
    let _ = writeln!(
        out,
        "capacity: {floor}; the loaders, not the cluster, are the limit: at {at} (step {}) {}: add loaders or client CPUs to go further",
        step.index,
        v.loader_bound.join("; ")
    );
}

/// The verdict of a closed-loop search: the highest passing concurrency and its throughput
/// (the capacity), the first failing concurrency and why.
fn closed_verdict(out: &mut String, r: &CapacityResult, v: &Verdict) {
    let ops = v.highest_passing_ops_per_s.unwrap_or(0.0);
    let _ = match (v.highest_passing_concurrency, v.failing_concurrency) {
        (Some(p), Some(f)) => writeln!(
            out,
            "capacity: {ops:.0} ops/s with {p} in flight (passed); {f} in flight failed: {}{}",
            v.failed.join("; "),
            if f - p > 1 {
                concurrency_advice(r)
            } else {
                String::new()
            }
        ),
        (None, Some(f)) => writeln!(
            out,
            "capacity: every step failed, down to {f} in flight{}: {}",
            match r.status {
                CapacityStatus::Interrupted => " before the search was interrupted",
                _ if r
                    .steps
                    .iter()
                    .any(|s| s.concurrency == Some(f) && f as u64 <= s.loader_count()) =>
                    " (the lowest concurrency)",
                _ => " (--max-steps ended the search)",
            },
            v.failed.join("; ")
        ),
        (Some(p), None) => writeln!(
            out,
            "capacity: at least {ops:.0} ops/s with {p} in flight: no step failed{}",
            match r.status {
                CapacityStatus::Interrupted =>
                    " before the search was interrupted (--resume continues it)",
                _ => " within --max-steps",
            }
        ),
        (None, None) => writeln!(out, "capacity: no step completed"),
    };
}

/// The verdict of an open-loop search, by target rate.
fn rate_verdict(out: &mut String, r: &CapacityResult, v: &Verdict) -> std::fmt::Result {
    match (v.highest_passing_rate_per_s, v.failing_rate_per_s) {
        (Some(p), Some(f)) => {
            let _ = writeln!(
                out,
                "capacity: between {p:.0} and {f:.0} ops/s — {p:.0} ops/s passed ({:.0} achieved); {f:.0} ops/s failed: {}",
                v.highest_passing_ops_per_s.unwrap_or(0.0),
                v.failed.join("; ")
            );
            bracket_advice(out, r, p, f)
        }
        (None, Some(f)) => writeln!(
            out,
            "capacity: every step failed, down to {f:.0} ops/s{}: {}",
            match r.status {
                CapacityStatus::Interrupted => " before the search was interrupted",
                _ if f <= crate::capacity::policy::lowest_rate(&r.spec) =>
                    " (the lowest rate the search tries)",
                _ => " (--max-steps ended the search)",
            },
            v.failed.join("; ")
        ),
        (Some(p), None) => writeln!(
            out,
            "capacity: at least {p:.0} ops/s: no step failed{}",
            match r.status {
                CapacityStatus::Interrupted =>
                    " before the search was interrupted (--resume continues it)",
                _ => " within --max-steps",
            }
        ),
        (None, None) => writeln!(out, "capacity: no step completed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::capacity::SearchStep;

    #[test]
    fn the_estimate_says_steps_times_each_step_and_the_total() {
        let e = Estimate {
            steps: 10,
            step_s: 30.0,
            warmup_s: 5.0,
            settle_max_s: 120.0,
            pending_after_s: 60.0,
        };
        assert_eq!(
            progress(&Progress::Plan(e.clone()), false),
            "capacity search: up to 10 steps × 90–210 s ≈ at most 35m, plus the first step's rampup (each step: settling compactions up to 120 s + 30 s step (5 s of it warmup) + 60 s wait to read pending compactions (--pending-after))\n"
        );
        let blind = Estimate {
            steps: 1,
            settle_max_s: 0.0,
            pending_after_s: 0.0,
            ..e
        };
        assert_eq!(
            progress(&Progress::Plan(blind), true),
            "capacity search: up to 1 step × 30 s ≈ at most 30s, plus the first step's rampup (each step: 30 s step (5 s of it warmup))\n"
        );
    }

    #[test]
    fn a_closed_loop_search_shows_its_concurrencies_and_names_them_in_the_verdict() {
        let r = crate::result::fixture::capacity_closed("lab", &[4, 8, 16, 32], 4);
        let text = result_text(&r);
        assert!(text.contains("in flight"), "{text}");
        assert!(!text.contains("target/s"), "{text}");
        assert!(
            text.contains(" ops/s with 16 in flight (passed); 32 in flight failed: "),
            "{text}"
        );
        assert!(text.contains("--refine bisects"), "{text}");
        let step = &r.steps[1];
        let started = progress(
            &Progress::StepStarted {
                index: 2,
                rate: 0.0,
                concurrency: Some(8),
                loaders: 1,
            },
            false,
        );
        assert_eq!(started, "━━ step 2: 8 in flight (closed loop)\n");
        let by_two = |concurrency| {
            progress(
                &Progress::StepStarted {
                    index: 3,
                    rate: 3000.0,
                    concurrency,
                    loaders: 2,
                },
                false,
            )
        };
        assert_eq!(
            by_two(Some(8)),
            "━━ step 3: 8 in flight (closed loop, 2 loaders)\n"
        );
        assert_eq!(by_two(None), "━━ step 3: 3000 ops/s (2 loaders)\n");
        let done = progress(&Progress::StepDone { step }, true);
        assert!(
            done.contains(" ops/s achieved with 8 in flight: passed"),
            "{done}"
        );
        let open = result_text(&crate::result::fixture::capacity(
            "lab",
            &[1000.0, 2000.0],
            2,
        ));
        assert!(
            open.contains("target/s") && !open.contains("in flight"),
            "{open}"
        );
    }

    /// The closed-loop verdict's line and the open-loop verdict's bracket line.
    fn verdict_lines(r: &CapacityResult) -> (String, String) {
        let text = result_text(r);
        let line = |start: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(start))
                .unwrap_or_else(|| panic!("no line starting {start:?} in {text}"))
                .to_string()
        };
        match r.spec.mode {
            SearchMode::Concurrency { .. } => (line("capacity:"), String::new()),
            SearchMode::Rate => (line("capacity:"), line("the capacity lies")),
        }
    }

    #[test]
    fn the_closed_loop_hint_says_when_max_steps_ended_the_search_before_refinement() {
        // 4, 8, 16 pass, 32 fails at the fourth and last step (--max-steps 4).
        let mut r = crate::result::fixture::capacity_closed("lab", &[4, 8, 16, 32], 4);
        let (line, _) = verdict_lines(&r);
        assert!(
            line.ends_with(" (--refine bisects the concurrencies between)"),
            "{line}"
        );
        r.spec.refine = 2;
        let (line, _) = verdict_lines(&r);
        assert!(
            line.ends_with(
                " (--max-steps 4 ended the search before refinement: raise it to bisect the concurrencies between)"
            ),
            "{line}"
        );
        assert!(!line.contains("--refine bisects"), "{line}");
        // One bisection (24, passed) ran of three before --max-steps 5 ended the search.
        let mut r = crate::result::fixture::capacity_closed("lab", &[4, 8, 16, 32], 4);
        let extra = crate::result::fixture::capacity_closed("lab", &[24], 0).steps[0].clone();
        r.steps.push(SearchStep { index: 5, ..extra });
        r.spec.max_steps = 5;
        r.spec.refine = 3;
        r.verdict = Some(CapacityResult::verdict_of(&r.steps));
        let (line, _) = verdict_lines(&r);
        assert!(
            line.contains("with 24 in flight (passed); 32 in flight failed"),
            "{line}"
        );
        assert!(
            line.ends_with(
                " (--max-steps 5 ended the search before refinement finished (1 of --refine 3's bisections ran): raise it to bisect the concurrencies between)"
            ),
            "{line}"
        );
        // Every bisection asked for ran: a higher --refine, not --max-steps, goes further.
        r.spec.refine = 1;
        let (line, _) = verdict_lines(&r);
        assert!(
            line.ends_with(" (a higher --refine bisects the concurrencies between)"),
            "{line}"
        );
    }

    #[test]
    fn the_open_loop_hint_says_when_max_steps_ended_the_search_before_refinement() {
        // 1,000 and 2,000 pass, 4,000 fails at the third and last step (--max-steps 3): a
        // bracket 100% wide, four bisections from 10%.
        let mut r = crate::result::fixture::capacity("lab", &[1000.0, 2000.0, 4000.0], 3);
        let (verdict, line) = verdict_lines(&r);
        assert!(verdict.contains("between 2000 and 4000 ops/s"), "{verdict}");
        assert_eq!(
            line,
            "  the capacity lies in a bracket 100% wide: --refine 4 bisects it to within 10% (about 4.4 min more: 4 steps of 6s plus 60s for pending compactions each)"
        );
        r.spec.refine = 2;
        let (_, line) = verdict_lines(&r);
        assert_eq!(
            line,
            "  the capacity lies in a bracket 100% wide: --max-steps 3 ended the search before refinement: --max-steps 7 --refine 4 bisects it to within 10% (about 4.4 min more: 4 steps of 6s plus 60s for pending compactions each)"
        );
        // Interrupted before refinement finished: --resume, not --max-steps.
        r.spec.max_steps = 10;
        r.status = CapacityStatus::Interrupted;
        let (_, line) = verdict_lines(&r);
        assert_eq!(
            line,
            "  the capacity lies in a bracket 100% wide: the search was interrupted before refinement finished (--resume continues it)"
        );
    }

    #[test]
    fn a_loader_bound_search_shows_its_loaders_and_names_them_as_the_limit() {
        let r = crate::result::fixture::capacity_loader_bound("lab");
        let text = result_text(&r);
        let header = text.lines().find(|l| l.contains("target/s")).unwrap();
        assert!(
            header.contains("loaders") && header.contains("spread ms"),
            "{text}"
        );
        let row3 = text
            .lines()
            .find(|l| l.trim_start().starts_with("3 "))
            .unwrap();
        assert!(row3.contains("loader-bound"), "{row3}");
        assert!(
            text.contains(
                "; the loaders, not the cluster, are the limit: at 3000 ops/s (step 3) loader 1 of 2 fell behind: sent 71.3% of its schedule on time: add loaders or client CPUs to go further"
            ),
            "{text}"
        );
        assert!(text.contains("capacity: at least 2000 ops/s ("), "{text}");
        let done = progress(&Progress::StepDone { step: &r.steps[2] }, true);
        assert!(done.contains(": LOADER-BOUND"), "{done}");
        assert!(
            done.contains("2 loaders started within 9 ms; each achieved 1500 + 1070 ops/s"),
            "{done}"
        );
        assert!(
            done.contains("the loaders, not the cluster, are the limit"),
            "{done}"
        );
        // One client: no loader columns.
        let single = result_text(&crate::result::fixture::capacity("lab", &[1000.0], 0));
        assert!(!single.contains("spread ms"), "{single}");
    }
}
