//! The model from loaded results: runs grouped by scenario and environment (their response
//! histograms merged), verifications attached to their runs, capacity searches and scaling
//! runs in file order, each environment's latest probe; and a note for every warning a result
//! carries and every choice made.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use super::summary::RunRow;
use super::{EnvRuns, ProbeRow, Report, RunTimeline, ScenarioGroup, scenario_of, spectrum};
use crate::report::capacity::SearchReport;
use crate::report::{Input, ReportError};
use crate::result::probe::ProbeResult;
use crate::result::{CapacityResult, PhaseResult, PhaseSummary, RunResult, ScalingResult};
use crate::result::{VerifyResult, capacity::CapacityStatus};
use crate::spec::LoadMode;
use crate::stats::{Percentiles, decode, new_histogram};

impl Report {
    /// Builds the model from loaded results, in the order given (environments appear in the
    /// order of their first file).
    pub fn build(inputs: &[Input]) -> Result<Report, ReportError> {
        let mut b = Builder::default();
        for input in inputs {
            match input {
                Input::Run { path, result } => b.run(path, result)?,
                Input::Verify { .. } => {}
                Input::Scaling { path, result } => b.scaling(path, result),
                Input::Capacity { path, result } => b.capacity(path, result),
                Input::Probe { path, result } => b.probe(path, result),
            }
        }
        // Verifications go with the run they verified.
        for input in inputs {
            if let Input::Verify { path, result } = input {
                b.verify(path, result);
            }
        }
        Ok(b.finish())
    }
}

/// The runs of one scenario as they are gathered.
struct GroupAcc {
    scenario: String,
    workload: String,
    open_rate_per_s: Option<f64>,
    /// Per environment, in order of first appearance.
    envs: Vec<EnvAcc>,
    runs: Vec<RunTimeline>,
}

/// One environment's runs of a scenario as they are gathered: their throughputs, merged
/// response histogram, and server figures.
struct EnvAcc {
    env: String,
    ops_per_s: Vec<f64>,
    histogram: Histogram<u64>,
    /// Each run's mean SSTables per read, where it has one.
    sstables_per_read: Vec<f64>,
    peak_pending: Option<f64>,
}

/// A run's server figures over its main phase's measured window: the mean of the nodes'
/// SSTables per read and the highest pending compactions, from its own samples, else from the
/// series fetched from a Prometheus server; and whether they are the fetched ones.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct ServerFigures {
    sstables_per_read: Option<f64>,
    peak_pending: Option<f64>,
    fetched: bool,
}

fn server_figures(result: &RunResult) -> ServerFigures {
    let window = main_phase(result).and_then(crate::result::measured_window);
    let (Some(m), Some((from, to))) = (&result.metrics, window) else {
        return ServerFigures::default();
    };
    let of = |samples: &[crate::result::series::Sample], fetched: bool| {
        let nodes = || {
            samples
                .iter()
                .filter(|s| s.t_s > from && s.t_s <= to + 0.5)
                .flat_map(|s| s.nodes.iter())
        };
        let spr: Vec<f64> = nodes().filter_map(|n| n.sstables_per_read).collect();
        ServerFigures {
            sstables_per_read: (!spr.is_empty())
                .then(|| spr.iter().sum::<f64>() / spr.len() as f64),
            peak_pending: nodes()
                .filter_map(|n| n.pending_compactions)
                .reduce(f64::max),
            fetched,
        }
    };
    let own = of(&m.samples, false);
    match &m.fetched {
        Some(f) if own.sstables_per_read.is_none() && own.peak_pending.is_none() => {
            of(&f.samples, true)
        }
        _ => own,
    }
}

/// The report so far.
#[derive(Default)]
struct Builder<'a> {
    report: Report,
    groups: Vec<GroupAcc>,
    /// Each environment's latest probe and how many it has.
    probes: BTreeMap<String, (PathBuf, &'a ProbeResult, usize)>,
    /// Environments in order of their first probe.
    probe_order: Vec<String>,
}

fn main_phase(result: &RunResult) -> Option<&PhaseResult> {
    result.main_phase()
}

impl<'a> Builder<'a> {
    fn note(&mut self, note: String) {
        self.report.notes.push(note);
    }

    /// A run into its scenario's group: its timeline, its throughput, its histogram and its
    /// server figures.
    fn run(&mut self, path: &Path, result: &RunResult) -> Result<(), ReportError> {
        for w in &result.warnings {
            self.note(format!("{} ({}): {w}", result.env, path.display()));
        }
        if let Some(l) = crate::result::server_latency::line(&result.server_latency) {
            self.note(format!("{} ({}): {l}", result.env, path.display()));
        }
        let (Some(scenario), Some(summary)) = (scenario_of(result), result.main_summary()) else {
            self.note(format!(
                "{} ({}): no main-phase summary, left out",
                result.env,
                path.display()
            ));
            return Ok(());
        };
        if let Some(main) = main_phase(result) {
            let index = self.report.runs.len() + 1;
            let row = RunRow::of(index, path, result, main, summary)?;
            self.report.runs.push(row);
        }
        let server = server_figures(result);
        if server.fetched && (server.sstables_per_read.is_some() || server.peak_pending.is_some()) {
            self.note(format!(
                "{} ({}): server figures from the series fetched from the Prometheus server (the run sampled none itself)",
                result.env,
                path.display()
            ));
        }
        let group = self.group(scenario, result);
        if let Some(main) = main_phase(result) {
            group.runs.push(RunTimeline::of(path, result, main));
        }
        group.add(path, &result.env, summary, server)
    }

    /// The group of `scenario`, made (with `result`'s workload and rate) if it is the first.
    fn group(&mut self, scenario: String, result: &RunResult) -> &mut GroupAcc {
        let gi = match self.groups.iter().position(|g| g.scenario == scenario) {
            Some(i) => i,
            None => {
                let rate = main_phase(result).and_then(|p| match p.load.mode {
                    // A share is a different rate per environment: not a row of the table by
                    // rate.
                    LoadMode::Open { .. } if result.rate_share.is_some() => None,
                    LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
                    LoadMode::Closed { .. } => None,
                });
                self.groups.push(GroupAcc {
                    scenario,
                    workload: result.workload.label(),
                    open_rate_per_s: rate,
                    envs: Vec::new(),
                    runs: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        &mut self.groups[gi]
    }

    fn scaling(&mut self, path: &Path, result: &ScalingResult) {
        if result.status != CapacityStatus::Completed {
            self.note(format!(
                "{} ({}): scaling run not completed: {} of {} sizes searched",
                result.env,
                path.display(),
                result.points.len(),
                result.sizes.len()
            ));
        }
        self.report.scaling.push(result.clone());
    }

    fn capacity(&mut self, path: &Path, result: &CapacityResult) {
        let search = SearchReport::of(path.to_path_buf(), result);
        if let Some(status) = &search.status {
            self.note(format!(
                "{} ({}): capacity search {status}: verdict from the steps so far",
                result.env,
                path.display()
            ));
        }
        self.report.capacity.push(search);
    }

    /// Keeps the latest probe of each environment, and counts them.
    fn probe(&mut self, path: &Path, result: &'a ProbeResult) {
        if !result.complete {
            self.note(format!(
                "{} ({}): probe incomplete, figures of the profiles it finished",
                result.env,
                path.display()
            ));
        }
        let order = &mut self.probe_order;
        let slot = self.probes.entry(result.env.clone()).or_insert_with(|| {
            order.push(result.env.clone());
            (path.to_path_buf(), result, 0)
        });
        slot.2 += 1;
        if result.started_unix_s > slot.1.started_unix_s {
            (slot.0, slot.1) = (path.to_path_buf(), result);
        }
    }

    /// A verification, with the run it verified.
    fn verify(&mut self, path: &Path, result: &VerifyResult) {
        let run = self
            .groups
            .iter_mut()
            .flat_map(|g| g.runs.iter_mut())
            .find(|r| crate::fsutil::same_file(&r.path, &result.run));
        match run {
            Some(r) => r.verify = Some(result.clone()),
            None => self.note(format!(
                "{}: verifies {}, which is not in this report",
                path.display(),
                result.run.display()
            )),
        }
    }

    /// The groups with their percentiles and spectra, and each environment's latest probe.
    fn finish(mut self) -> Report {
        super::summary::link_sources(&mut self.report.runs);
        self.report.groups = self.groups.into_iter().map(GroupAcc::finish).collect();
        for env in self.probe_order {
            let (path, result, count) = &self.probes[&env];
            if *count > 1 {
                self.report.notes.push(format!(
                    "{env}: {count} probes, the latest ({}) is shown",
                    path.display()
                ));
            }
            self.report.probes.push(ProbeRow {
                env,
                host: result.host_label(),
                summary: result.summary.clone(),
            });
        }
        self.report
    }
}

impl GroupAcc {
    /// A run's throughput, response histogram and server figures, under its environment.
    fn add(
        &mut self,
        path: &Path,
        env: &str,
        summary: &PhaseSummary,
        server: ServerFigures,
    ) -> Result<(), ReportError> {
        let ei = match self.envs.iter().position(|e| e.env == env) {
            Some(i) => i,
            None => {
                self.envs.push(EnvAcc {
                    env: env.to_string(),
                    ops_per_s: Vec::new(),
                    histogram: new_histogram(),
                    sstables_per_read: Vec::new(),
                    peak_pending: None,
                });
                self.envs.len() - 1
            }
        };
        let e = &mut self.envs[ei];
        merged(path, &summary.all.response_histogram_ns, &mut e.histogram)?;
        e.ops_per_s.push(summary.ops_per_s);
        e.sstables_per_read.extend(server.sstables_per_read);
        e.peak_pending = e
            .peak_pending
            .into_iter()
            .chain(server.peak_pending)
            .reduce(f64::max);
        Ok(())
    }

    fn finish(self) -> ScenarioGroup {
        ScenarioGroup {
            scenario: self.scenario,
            workload: self.workload,
            open_rate_per_s: self.open_rate_per_s,
            envs: self
                .envs
                .into_iter()
                .map(|e| EnvRuns {
                    response: Percentiles::of(&e.histogram),
                    spectrum: spectrum(&e.histogram),
                    sstables_per_read: (!e.sstables_per_read.is_empty()).then(|| {
                        e.sstables_per_read.iter().sum::<f64>() / e.sstables_per_read.len() as f64
                    }),
                    peak_pending: e.peak_pending,
                    env: e.env,
                    ops_per_s: e.ops_per_s,
                })
                .collect(),
            runs: self.runs,
        }
    }
}

impl RunTimeline {
    /// The run's main phase on the run's time axis.
    fn of(path: &Path, result: &RunResult, main: &PhaseResult) -> RunTimeline {
        RunTimeline {
            env: result.env.clone(),
            path: path.to_path_buf(),
            offset_s: main.offset_s,
            intervals: main.intervals.clone(),
            metrics: result.metrics.as_deref().cloned(),
            target_rate_per_s: match main.load.mode {
                LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
                LoadMode::Closed { .. } => None,
            },
            events: result.events.clone(),
            verify: None,
            reads_verified: result.reads_verified.clone(),
            merged: result.merged.clone(),
        }
    }
}

/// Adds the histogram `encoded` (of the run at `path`) into `into`.
fn merged(path: &Path, encoded: &str, into: &mut Histogram<u64>) -> Result<(), ReportError> {
    let bad = |message: String| ReportError::BadHistogram {
        path: path.to_path_buf(),
        message,
    };
    let h = decode(encoded).map_err(|e| bad(e.0))?;
    into.add(&h).map_err(|e| bad(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::{RunShape, run_with_metrics};
    use crate::result::series::Fetched;

    /// A run's own samples give its server figures; a run that sampled none of them (its
    /// nodes read only by a Prometheus server after it) takes them from the fetched series,
    /// and says so.
    #[test]
    fn server_figures_come_from_the_fetched_series_when_the_run_sampled_none() {
        let r = run_with_metrics("lab", &RunShape::default(), 2, &["vda"]);
        let own = server_figures(&r);
        assert!(!own.fetched);
        assert!(
            own.sstables_per_read
                .is_some_and(|v| (v - 1.2).abs() < 1e-9)
        );
        assert!(own.peak_pending.is_some_and(|p| p >= 6.0));

        let mut only_fetched = r.clone();
        let m = only_fetched.metrics.as_mut().unwrap();
        let mut fetched_samples = m.samples.clone();
        for s in &mut fetched_samples {
            for n in &mut s.nodes {
                n.sstables_per_read = Some(2.5);
                n.pending_compactions = Some(3.0);
            }
        }
        for s in &mut m.samples {
            for n in &mut s.nodes {
                n.sstables_per_read = None;
                n.pending_compactions = None;
            }
        }
        m.fetched = Some(Box::new(Fetched {
            server: "http://10.0.0.9:9090".into(),
            samples: fetched_samples,
            ..Fetched::default()
        }));
        let f = server_figures(&only_fetched);
        assert!(f.fetched, "{f:?}");
        assert!(f.sstables_per_read.is_some_and(|v| (v - 2.5).abs() < 1e-9));
        assert_eq!(f.peak_pending, Some(3.0));
        // With its own figures, the fetched ones are not used.
        let mut both = r.clone();
        both.metrics.as_mut().unwrap().fetched =
            only_fetched.metrics.as_ref().unwrap().fetched.clone();
        assert_eq!(server_figures(&both), own);
    }
}
