//! A capacity search as a person follows it: settling, each step and its checks, then the
//! steps table and the verdict.

use std::fmt::Write;

use crate::format::Table;
use crate::result::capacity::{CapacityResult, CapacityStatus, SearchMode, Verdict};
use crate::scenario::capacity::{Estimate, Progress};

pub(super) fn progress(p: &Progress, quiet: bool) -> String {
    let pending = |p: &Option<f64>| p.map_or_else(|| "?".into(), |v| format!("{v:.0}"));
    match p {
        Progress::Plan(e) => estimate(e),
        Progress::Settling { pending: p } => {
            format!(
                "waiting for compactions to settle (pending: {})\n",
                pending(p)
            )
        }
        Progress::Settled { secs, pending: p } => {
            format!("settled after {secs:.0}s (pending: {})\n", pending(p))
        }
        Progress::StepStarted {
            index,
            concurrency: Some(c),
            ..
        } => format!("━━ step {index}: {c} in flight (closed loop)\n"),
        Progress::StepStarted { index, rate, .. } => format!("━━ step {index}: {rate:.0} ops/s\n"),
        Progress::WaitingAfter { secs } => {
            format!("waiting {secs:.0}s to read pending compactions after the step\n")
        }
        Progress::StepDone { step } => {
            let verdict = if step.passed { "passed" } else { "OVERLOADED" };
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
    Table {
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
                    if s.passed { "ok" } else { "overloaded" }.to_string(),
                ]
            })
            .collect(),
        text_columns: vec![7],
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
    writeln!(
        out,
        "  the capacity lies in a bracket {:.0}% wide: --refine {} bisects it to within 10% (about {:.1} min more: {} steps of {:.0}s plus {:.0}s for pending compactions each)",
        width * 100.0,
        r.spec.refine + more,
        more as f64 * per_step_s / 60.0,
        more,
        r.spec.step_s,
        r.spec.criteria.pending_after_s
    )
}

/// The steps table and the verdict.
pub fn result_text(r: &CapacityResult) -> String {
    let mut out = format!("\n{}", steps_table(r).text());
    let Some(v) = &r.verdict else {
        return out;
    };
    if matches!(r.spec.mode, SearchMode::Concurrency { .. }) {
        closed_verdict(&mut out, r, v);
    } else {
        let _ = rate_verdict(&mut out, r, v);
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
                " (--refine bisects the concurrencies between)"
            } else {
                ""
            }
        ),
        (None, Some(f)) => writeln!(
            out,
            "capacity: every step failed, down to {f} in flight{}: {}",
            match r.status {
                CapacityStatus::Interrupted => " before the search was interrupted",
                _ if f <= 1 => " (the lowest concurrency)",
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
                _ if f <= CapacityResult::lowest_rate(&r.spec) =>
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
            },
            false,
        );
        assert_eq!(started, "━━ step 2: 8 in flight (closed loop)\n");
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
}
