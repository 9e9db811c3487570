//! The console: the one module below the command line that writes for a person. It renders
//! the [`Event`]s a scenario, a step or a command emits — progress, step headers, final
//! tables, verdicts, warnings — as terminal text; the library only emits them, so a test runs
//! a scenario silently and another front end needs no change below this module.

mod capacity;
mod cluster;
mod compare;
mod cost;
/// A capacity search's result as the text a search ends with.
pub use capacity::result_text as capacity_text;
#[cfg(feature = "k8s")]
mod k8s;
mod plan;
mod run;
mod scenario;
mod verify;

use std::sync::{Arc, Mutex};

use crate::scenario::event::{Event, ProbeEvent};
use crate::scenario::{ScenarioError, Sink};
use crate::spec::LoadSpec;

pub use cluster::{created_text, list_line, log_tail_block, started_line, stopped_line};
pub use compare::compare_text;
pub use cost::cost_text;
#[cfg(feature = "k8s")]
pub use k8s::{
    JobOutcome, Manifest, job_event_line, job_outcome_text, manifest_written, probe_event_line,
    probe_results_text,
};
pub use plan::plan_text;
pub use run::{final_text, summary_table};
pub use scenario::{cluster_status, env_plan, lab_summary, plan};
pub use verify::verify_text;

/// Renders events on standard output (progress of a probe and warnings on standard error).
pub struct Console {
    /// Only final tables, verdicts and warnings (`-q`).
    quiet: bool,
    state: Mutex<State>,
}

/// What rendering needs to remember between events.
#[derive(Default)]
struct State {
    /// The phase running and how many operations it has done (for the progress bar).
    phase: Option<LoadSpec>,
    done_ops: u64,
    /// The step running asked for its final table only.
    step_quiet: bool,
}

/// What one event becomes: text for standard output and for standard error.
#[derive(Debug, Default, PartialEq)]
pub struct Text {
    pub out: String,
    pub err: String,
}

impl Text {
    fn out(s: String) -> Text {
        Text {
            out: s,
            err: String::new(),
        }
    }
    fn err(s: String) -> Text {
        Text {
            out: String::new(),
            err: s,
        }
    }
}

impl Console {
    pub fn new(quiet: bool) -> Arc<Console> {
        Arc::new(Console {
            quiet,
            state: Mutex::new(State::default()),
        })
    }

    /// A sink for a [`crate::scenario::Context`] that prints through this console.
    pub fn sink(self: &Arc<Console>) -> Sink {
        let c = self.clone();
        Arc::new(move |e: &Event| c.print(e))
    }

    /// Prints one event.
    pub fn print(&self, e: &Event) {
        use std::io::Write;
        let t = self.text(e);
        if !t.out.is_empty() {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(t.out.as_bytes());
            let _ = o.flush();
        }
        if !t.err.is_empty() {
            let _ = std::io::stderr().lock().write_all(t.err.as_bytes());
        }
    }

    /// What one event prints (every line ends with a newline).
    pub fn text(&self, e: &Event) -> Text {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let quiet = self.quiet || st.step_quiet;
        match e {
            Event::Load(l) => Text::out(run::load_event(l, quiet, &mut st)),
            Event::RunDone { result } => Text::out(run::final_text(result)),
            Event::IntervalThroughput(t) => Text::out(run::interval_throughput(t)),
            Event::Loaders(l) => Text::out(run::loaders(l)),
            // Said before the step and again once written: before, the path is where the
            // result will go, and a step that fails first (an unreachable host) writes nothing.
            Event::ResultAt { what, path } if path.is_file() => {
                Text::out(format!("{what}: {}\n", path.display()))
            }
            Event::ResultAt { what, path } => {
                Text::out(format!("{what}: {} (not written yet)\n", path.display()))
            }
            Event::Capacity(p) => Text::out(capacity::progress(p, quiet)),
            Event::CapacityWithoutMetrics { node_exporters } => Text::out(if *node_exporters {
                "note: no metrics endpoints (--cluster or --prometheus): compactions are not awaited and the pending-compaction criterion cannot be measured; node CPU comes from the node exporters\n".into()
            } else {
                "note: no metrics endpoints (--cluster or --prometheus): compactions are not awaited and the pending-compaction and node-CPU criteria cannot be measured\n".into()
            }),
            Event::CapacityDone { result } => Text::out(capacity::result_text(result)),
            Event::Fill(f) => Text::out(run::fill(f, quiet)),
            Event::Probe(ProbeEvent::Done { result }) => {
                Text::out(crate::probe::table::render(result))
            }
            Event::Probe(p) => Text::err(scenario::probe(p)),
            Event::StepStarted { quiet: q, .. } => {
                st.step_quiet = *q;
                Text::out(scenario::text(e))
            }
            Event::Warning(_)
            | Event::SeriesFetched { .. }
            | Event::Cluster(crate::scenario::event::ClusterEvent::LogTail { .. }) => {
                Text::err(scenario::text(e))
            }
            _ => Text::out(scenario::text(e)),
        }
    }
}

/// A scenario error as the one line a person reads (`error: step 2 (latency): …`).
pub fn error_line(e: &ScenarioError) -> String {
    format!("error: {}", e.one_line())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without metrics endpoints, node CPU is unmeasured unless node exporters are given.
    #[test]
    fn a_search_without_endpoints_says_which_criteria_it_cannot_measure() {
        let c = Console::new(false);
        let without = c.text(&Event::CapacityWithoutMetrics {
            node_exporters: false,
        });
        assert!(
            without
                .out
                .contains("pending-compaction and node-CPU criteria cannot")
        );
        let with = c.text(&Event::CapacityWithoutMetrics {
            node_exporters: true,
        });
        assert!(with.out.contains("node CPU comes from the node exporters"));
        assert!(!with.out.contains("node-CPU criteria cannot"));
    }
}
