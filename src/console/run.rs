//! A run as a person follows it: a line per phase and per interval (with a progress bar),
//! then the final table of the main phase, its warnings and where the result is.

use std::fmt::Write;

use super::State;
use crate::format::Table;
use crate::load::Event;
use crate::result::{OpSummary, PhaseSummary, RunResult};
use crate::scenario::event::{FillEvent, LoadersEvent};
use crate::scenario::steps::throughput::IntervalThroughput;
use crate::spec::{LoadMode, LoadSpec, Stop};
use crate::stats::PERCENTILES;

/// Progress of a phase in percent, from its stop condition.
pub(super) fn progress(load: &LoadSpec, done_ops: u64, elapsed_s: f64) -> f64 {
    let p = match load.stop {
        Stop::Duration { secs } => elapsed_s / secs,
        Stop::Ops { count } => done_ops as f64 / count as f64,
    };
    (p * 100.0).clamp(0.0, 100.0)
}

pub(super) fn load_event(e: &Event, quiet: bool, st: &mut State) -> String {
    match e {
        Event::PhaseStarted { load, .. } => {
            st.phase = Some((*load).clone());
            st.done_ops = 0;
        }
        Event::Interval { record, .. } => st.done_ops += record.ok + record.errors,
        Event::PhaseDone { .. } | Event::Connected { .. } => {}
    }
    if quiet {
        return String::new();
    }
    match e {
        Event::Connected { reach } => format!("{}\n", reach.line()),
        Event::PhaseStarted { name, load } => {
            let how = match load.mode {
                LoadMode::Closed { concurrency } => format!("{concurrency} in flight"),
                LoadMode::Open { rate_per_s, .. } => format!("{rate_per_s:.0} ops/s"),
            };
            let until = match load.stop {
                Stop::Duration { secs } => format!("{secs:.0}s"),
                Stop::Ops { count } => format!("{count} ops"),
            };
            format!("── {name}: {how}, {until}, {} threads\n", load.threads)
        }
        Event::Interval {
            phase, record: r, ..
        } => {
            let pct = st
                .phase
                .as_ref()
                .map_or(0.0, |l| progress(l, st.done_ops, r.end_s));
            let bar_len = ((pct / 10.0).round() as usize).min(10);
            let mut line = format!(
                "{phase:<6} [{}{}] {pct:>3.0}% {:>6.0}s {:>9.0} ops/s",
                "#".repeat(bar_len),
                ".".repeat(10 - bar_len),
                r.end_s,
                r.ops_per_s
            );
            for (k, o) in &r.by_op {
                let _ = write!(
                    line,
                    "  {k} p50 {:.2} p99 {:.2}",
                    o.response_p50_ms, o.response_p99_ms
                );
            }
            if r.send_lag_p99_ms > 0.0 {
                let _ = write!(line, "  send lag p99 {:.2}", r.send_lag_p99_ms);
            }
            line.push_str(" ms");
            if r.errors > 0 {
                let _ = write!(line, "  errors {}", r.errors);
            }
            if r.backlog > 0 {
                let _ = write!(line, "  backlog {}", r.backlog);
            }
            if r.warmup {
                line.push_str("  (warmup)");
            }
            line.push_str(&partial(r));
            line + "\n"
        }
        Event::PhaseDone { name, summary } => format!(
            "── {name} done: {:.0} ops/s over {:.1}s\n",
            summary.ops_per_s, summary.measured_s
        ),
    }
}

/// What an interval shorter than the others is (its rate is per second of its own length,
/// so a short one does not read as a collapse): the window's tail of operations in flight, or
/// the phase's last, partial interval.
fn partial(r: &crate::result::IntervalRecord) -> String {
    let secs = r.end_s - r.start_s;
    if r.drain {
        format!(
            "  (after the window: {secs:.2}s of operations in flight completing, not in the throughput)"
        )
    } else if secs < 0.95 * crate::load::executor::INTERVAL.as_secs_f64() {
        format!("  (partial: last {secs:.2}s)")
    } else {
        String::new()
    }
}

/// The final text of a run: the main phase's table and totals, server metrics missing,
/// reads verified, warnings.
pub fn final_text(r: &RunResult) -> String {
    let Some(s) = r.main_summary() else {
        return "no main-phase result\n".into();
    };
    let mut out = format!("\n{}", summary_table(s).text());
    if s.send_lag.is_some() {
        out.push_str(WHICH_FIGURE);
    }
    if let Some(window) = r.main_phase().and_then(|p| p.load.send_window()) {
        let _ = writeln!(
            out,
            "sends batched: each waited up to {} after the earliest due one (--send-window), in the send lag and the response time",
            crate::step::argv::duration_text(&window)
        );
    }
    out.push_str(&totals(s));
    if let Some(l) = crate::result::server_latency::line(&r.server_latency) {
        let _ = writeln!(out, "{l}");
    }
    if let Some(m) = &r.metrics {
        let missing: Vec<String> = m
            .missing_by_node()
            .into_iter()
            .filter(|(_, n, _)| *n > 0)
            .map(|(node, n, of)| format!("{node} {n}/{of}"))
            .collect();
        if !missing.is_empty() {
            let _ = writeln!(
                out,
                "samples without server metrics: {}",
                missing.join(", ")
            );
        }
        // A node exporter that did not answer: its host's figures are missing, the rest kept.
        for e in m
            .errors
            .iter()
            .filter(|e| e.starts_with("node exporter of "))
        {
            let _ = writeln!(out, "warning: {e}");
        }
    }
    if let Some(v) = &r.reads_verified {
        let _ = writeln!(out, "{}", v.line());
        for l in v.unchecked_lines() {
            let _ = writeln!(out, "  not compared, {l}");
        }
        for m in &v.first {
            let _ = writeln!(out, "  mismatch: {m}");
        }
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// What the open loop's three figures mean (README's "Which latency figure to quote").
pub const WHICH_FIGURE: &str = "response time counts from each operation's intended start: what a user of the cluster sees at this offered rate, the client's own waiting included; service time counts from the actual send; send lag is how late the client sent (response = send lag + service, per operation): where it is close to the gap between response and service time, that gap is the client's, not the cluster's\n";

/// Response and service time per operation (and of all), then the send lag of all (open
/// loop), in milliseconds.
pub fn summary_table(s: &PhaseSummary) -> Table {
    let header = ["operation", "time", "ops/s", "errors", "mean"]
        .into_iter()
        .map(String::from)
        .chain(PERCENTILES.iter().map(|(label, _)| label.to_string()))
        .chain(["max ms".to_string()])
        .collect();
    let rows: Vec<(String, &OpSummary)> = s
        .by_op
        .iter()
        .map(|(k, o)| (k.to_string(), o))
        .chain([("all".to_string(), &s.all)])
        .collect();
    let mut table = Table {
        title: String::new(),
        header,
        rows: Vec::new(),
        text_columns: vec![1],
    };
    for (name, o) in rows {
        for (what, p) in [("response", &o.response), ("service", &o.service)] {
            let mut row = vec![
                name.clone(),
                what.to_string(),
                format!("{:.0}", o.ops_per_s),
                o.errors.to_string(),
                format!("{:.2}", p.mean_ms),
            ];
            row.extend(p.values().iter().map(|v| format!("{v:.2}")));
            table.rows.push(row);
        }
    }
    if let Some(lag) = &s.send_lag {
        let mut row = vec![
            "all".to_string(),
            "send lag".to_string(),
            String::new(),
            String::new(),
            format!("{:.2}", lag.mean_ms),
        ];
        row.extend(lag.values().iter().map(|v| format!("{v:.2}")));
        table.rows.push(row);
    }
    table
}

/// Errors by kind, then throughput, the target and the client's own cost.
fn totals(s: &PhaseSummary) -> String {
    let mut out = String::new();
    if !s.errors_by_kind.is_empty() {
        let e: Vec<String> = s
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{}={n}", k.name()))
            .collect();
        let _ = writeln!(out, "errors: {}", e.join(", "));
    }
    if let Some(d) = &s.driver
        && (d.retries > 0 || d.speculative_executions > 0)
    {
        let absorbed: Vec<String> = d
            .retried_errors
            .iter()
            .map(|(k, n)| format!("{}={n}", k.name()))
            .collect();
        let _ = writeln!(
            out,
            "driver: {} retries{}, {} speculative executions (an operation retried or sped up counts once; its response time includes them)",
            d.retries,
            if absorbed.is_empty() {
                String::new()
            } else {
                format!(" (after {})", absorbed.join(", "))
            },
            d.speculative_executions
        );
    }
    let target = match (s.target_rate_per_s, s.achieved_ratio) {
        (Some(t), Some(a)) => format!(
            ", target {t:.0} ops/s, achieved {:.2}% ({} of {} scheduled sent in the window)",
            a * 100.0,
            s.sent_on_schedule.unwrap_or(0),
            s.scheduled_ops.unwrap_or(0)
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "throughput {:.0} ops/s over {:.1}s (+{:.0} ms drain){target}; client CPU {:.1}s ({:.0}%), {:.0} ops per client CPU-s, max RSS {:.0} MiB",
        s.ops_per_s,
        s.measured_s,
        s.drain_s * 1000.0,
        s.client_cpu_s,
        s.client_cpu_util * 100.0,
        s.ops_per_client_cpu_s,
        s.client_max_rss_bytes as f64 / 1048576.0
    );
    out
}

pub(super) fn interval_throughput(t: &IntervalThroughput) -> String {
    format!(
        "per-interval throughput over {} intervals: mean {:.0}, min {:.0}, median {:.0}, max {:.0} ops/s, CV {:.1}%\n",
        t.intervals,
        t.mean,
        t.min,
        t.median,
        t.max,
        t.cv * 100.0
    )
}

pub(super) fn loaders(e: &LoadersEvent) -> String {
    match e {
        LoadersEvent::Started { count, run_id } => {
            format!("loaders: {count} processes of run {run_id}\n")
        }
        LoadersEvent::Shard {
            index,
            count,
            out,
            log,
        } => format!(
            "  shard {index}/{count}: {} (log {})\n",
            out.display(),
            log.display()
        ),
        LoadersEvent::Merged {
            count,
            start_spread_ms,
            out,
        } => format!(
            "merged {count} shards (main phases started within {start_spread_ms:.1} ms): {}\n",
            out.display()
        ),
        LoadersEvent::Following { share, run_id } => format!(
            "shard {share} of capacity search {run_id}: following the steps shard 0 publishes\n"
        ),
        LoadersEvent::FollowStep {
            step,
            level,
            step_run,
        } => format!(
            "step {step} ({}): running this shard of run {step_run}\n",
            level.replace(':', " ")
        ),
        LoadersEvent::Followed {
            share,
            run_id,
            steps,
        } => format!(
            "shard {share} ran {steps} step{} of capacity search {run_id}; the coordinator (shard 0) holds the capacity result\n",
            if *steps == 1 { "" } else { "s" }
        ),
    }
}

pub(super) fn fill(e: &FillEvent, quiet: bool) -> String {
    match e {
        FillEvent::Started { target_mib, out } => format!(
            "filling until the nodes hold {target_mib:.0} MiB each (mean load); result: {}\n",
            out.display()
        ),
        FillEvent::NodeLoad { mib, target_mib } => {
            format!("  mean node load {mib:.1} MiB of {target_mib:.0} MiB\n")
        }
        // Its run's progress is the `Writing` lines.
        FillEvent::Run(_) => String::new(),
        FillEvent::Writing { .. } if quiet => String::new(),
        FillEvent::Writing { at_s, ops_per_s } => {
            format!("  {at_s:>6.0}s {ops_per_s:>9.0} writes/s\n")
        }
        FillEvent::Wrote { rows, mean_mib } => format!(
            "wrote {rows} rows (cycles 0..{rows}: later runs read them with --rows {rows} --skip-rampup); mean node load {mean_mib:.1} MiB\n"
        ),
        FillEvent::NotReached { within_s } => {
            format!("the target was not reached within {within_s:.0}s\n")
        }
        FillEvent::WaitingForCompactions { timeout_s } => {
            format!("waiting for compactions to finish (at most {timeout_s:.0}s)\n")
        }
        FillEvent::Pending { compactions } => {
            format!("  pending compactions: {compactions:.0}\n")
        }
        FillEvent::Compacted {
            after_s,
            pending: Some(p),
        } if *p > 0.0 => format!("compactions not finished after {after_s:.0}s: {p:.0} pending\n"),
        FillEvent::Compacted { after_s, .. } => {
            format!("compactions finished after {after_s:.0}s\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::load::{Cycles, Share};

    fn interval(start_s: f64, end_s: f64, ok: u64) -> crate::result::IntervalRecord {
        let mut r = crate::result::IntervalRecord::from_snapshot(
            start_s,
            end_s,
            false,
            &Default::default(),
            0,
            0.0,
        );
        r.ok = ok;
        r.ops_per_s = ok as f64 / (end_s - start_s);
        r
    }

    #[test]
    fn a_short_last_interval_is_marked_partial_not_a_collapse() {
        let mut st = State::default();
        let line = |st: &mut State, r: crate::result::IntervalRecord| {
            load_event(
                &Event::Interval {
                    phase: "main",
                    record: &r,
                    sample: None,
                    snapshot: None,
                },
                false,
                st,
            )
        };
        let full = line(&mut st, interval(9.0, 10.0, 3_000));
        assert!(full.contains("3000 ops/s"), "{full}");
        assert!(!full.contains("partial"), "{full}");
        // 0.3 s holding 900 operations: 3,000 a second, marked partial with its length.
        let last = line(&mut st, interval(10.0, 10.3, 900));
        assert!(last.contains("3000 ops/s"), "{last}");
        assert!(last.contains("(partial: last 0.30s)"), "{last}");
        let mut drain = interval(10.0, 10.05, 12);
        drain.drain = true;
        let tail = line(&mut st, drain);
        assert!(
            tail.contains("after the window: 0.05s of operations in flight completing"),
            "{tail}"
        );
        assert!(!tail.contains("partial"), "{tail}");
    }

    #[test]
    fn progress_follows_the_stop_condition() {
        let mut l = LoadSpec {
            mode: LoadMode::Closed { concurrency: 1 },
            stop: Stop::Duration { secs: 20.0 },
            warmup_s: 0.0,
            threads: 1,
            timeout_s: 1.0,
            max_errors: 0,
            cycles: Cycles { start: 0, end: 10 },
            share: Share::WHOLE,
            send_window_s: 0.0,
        };
        assert_eq!(progress(&l, 0, 5.0), 25.0);
        assert_eq!(progress(&l, 0, 25.0), 100.0);
        l.stop = Stop::Ops { count: 200 };
        assert_eq!(progress(&l, 50, 99.0), 25.0);
    }

    #[test]
    fn the_final_table_has_response_and_service_rows_per_operation() {
        let r = crate::result::fixture::run("lab", &crate::result::fixture::RunShape::default());
        let text = final_text(&r);
        let s = r.main_summary().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("operation") && lines[1].contains("p99.99"),
            "{text}"
        );
        // Two rows per operation and two for all of them.
        let rows = lines
            .iter()
            .filter(|l| l.contains(" response ") || l.contains(" service "))
            .count();
        assert_eq!(rows, 2 * (s.by_op.len() + 1), "{text}");
        assert!(
            text.contains(&format!("throughput {:.0} ops/s", s.ops_per_s)),
            "{text}"
        );
        // A closed loop (or an old result) has no send lag: no row, no statement about it.
        assert!(!text.contains("send lag"), "{text}");
    }

    #[test]
    fn an_open_loop_shows_its_send_lag_under_response_and_service_and_says_which_is_which() {
        let mut r = crate::result::fixture::run(
            "lab",
            &crate::result::fixture::RunShape {
                rate_per_s: Some(2000.0),
                ..Default::default()
            },
        );
        let mut lags = crate::stats::new_histogram();
        for us in [30u64, 40, 50, 60, 900] {
            crate::stats::record(&mut lags, us * 1_000);
        }
        let main = r.main_phase_mut().unwrap();
        main.summary.as_mut().unwrap().set_send_lag(Some(&lags));
        let text = final_text(&r);
        let lines: Vec<&str> = text.lines().collect();
        let lag_row = lines.iter().position(|l| l.contains("send lag")).unwrap();
        // Right under the last service row (of all operations), with the lags' p50 and max.
        assert!(lines[lag_row - 1].contains(" service "), "{text}");
        let cells: Vec<&str> = lines[lag_row].split_whitespace().collect();
        assert_eq!(cells[..3], ["all", "send", "lag"], "{text}");
        assert_eq!(cells[4], "0.05", "p50: {text}");
        assert_eq!(cells.last(), Some(&"0.90"), "max: {text}");
        assert!(text.contains(WHICH_FIGURE), "{text}");
        assert!(!text.contains("sends batched"), "{text}");
        // With a send window, the text says the sends waited for it.
        let main = r.main_phase_mut().unwrap();
        main.load.send_window_s = 0.002;
        let text = final_text(&r);
        assert!(
            text.contains("sends batched: each waited up to 2ms after the earliest due one"),
            "{text}"
        );
    }
}
