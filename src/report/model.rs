//! The report model: runs grouped by scenario (the main phase's load mode and workload) and
//! environment, with throughput per run and response-time percentiles from the merged
//! histograms of the environment's runs and each run's timeline for the charts; capacity
//! searches ([`super::capacity`]); probe headline figures per environment.
//!
//! - `sections`: the tables every exporter shows, defined once as lists of [`Field`]s.
//! - `build`: the model from loaded results ([`Report::build`]).
//! - `faults`, `shards`, `verification`, `by_rate`: the tables of faults and their impact, of
//!   a merged run's shards, of verifications, and of response time by rate.
//! - `summary`: the tables on top, one row per run whatever its scenario (load, target,
//!   throughput, response and service time, errors; settings and host CPU).
//! - `hosts`: the hosts each run sampled (the local host's /proc, the nodes' node exporters),
//!   one model from both sources and its tables.

use std::path::PathBuf;

use hdrhistogram::Histogram;

use super::capacity::{self, SearchReport};
use crate::format::Table;
use crate::result::probe::Summary;
use crate::result::series::MetricSeries;
use crate::result::{IntervalRecord, RunResult, VerifyResult};
use crate::spec::LoadMode;
use crate::stats::Percentiles;

mod build;
mod by_rate;
mod faults;
pub mod hosts;
mod sections;
mod shards;
pub mod summary;
mod verification;

pub use faults::FaultImpact;
use sections::section_table;
pub use sections::{Field, PROBE_SECTION, RUN_SECTIONS, Section};

/// The runs of one environment in one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvRuns {
    pub env: String,
    /// Main-phase throughput of each run, in file order.
    pub ops_per_s: Vec<f64>,
    /// Response time of all operations, from the runs' merged histograms.
    pub response: Percentiles,
    /// The latency spectrum of the merged histograms: (percentile, ms), see [`spectrum`].
    pub spectrum: Vec<(f64, f64)>,
    /// The nodes' SSTables read per read over the runs' measured windows, the mean of every
    /// node's samples (reference 000 quotes it); `None` where no run sampled it.
    pub sstables_per_read: Option<f64>,
    /// The highest pending compactions any node had in the runs' measured windows.
    pub peak_pending: Option<f64>,
}

impl EnvRuns {
    pub fn runs(&self) -> usize {
        self.ops_per_s.len()
    }

    pub fn mean_ops_per_s(&self) -> f64 {
        self.ops_per_s.iter().sum::<f64>() / self.runs() as f64
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.ops_per_s.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// Several runs: (min, median, max).
    pub fn spread(&self) -> Option<(f64, f64, f64)> {
        if self.runs() < 2 {
            return None;
        }
        let v = self.sorted();
        let median = crate::stats::median_of_sorted(&v);
        Some((v[0], median, v[v.len() - 1]))
    }

    /// (max − min) / median, in percent.
    pub fn relative_spread_pct(&self) -> Option<f64> {
        self.spread()
            .filter(|(_, median, _)| *median > 0.0)
            .map(|(min, median, max)| 100.0 * (max - min) / median)
    }
}

/// One run on its own time axis (seconds since the run started), for the charts.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTimeline {
    pub env: String,
    pub path: PathBuf,
    /// Seconds from the run's start to its main phase's start.
    pub offset_s: f64,
    /// The main phase's intervals, warmup included (and marked).
    pub intervals: Vec<IntervalRecord>,
    /// Server and host series, when the run sampled them.
    pub metrics: Option<MetricSeries>,
    /// Open loop: the target rate (the level throughput recovers to after a fault).
    pub target_rate_per_s: Option<f64>,
    /// Faults applied during the main phase, on the run's axis.
    pub events: Vec<crate::result::fault::FaultEvent>,
    /// The run's verification (`cqlbench verify`), when there is one.
    pub verify: Option<VerifyResult>,
    /// `--verify`: what its reads showed when compared with the generator.
    pub reads_verified: Option<crate::result::verify::ReadsVerified>,
    /// The shards it was merged from, when it was.
    pub merged: Option<crate::result::Merged>,
}

/// Runs of the same scenario, environments side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioGroup {
    /// e.g. `keyvalue, closed loop, 64 in flight`.
    pub scenario: String,
    /// The workload, and the target rate of an open-loop scenario (for the table of response
    /// time by rate).
    pub workload: String,
    pub open_rate_per_s: Option<f64>,
    pub envs: Vec<EnvRuns>,
    /// Every run of the scenario, in file order.
    pub runs: Vec<RunTimeline>,
}

/// The probe figures of one environment (its latest probe).
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRow {
    pub env: String,
    /// The host measured ([`crate::result::probe::ProbeResult::host_label`]).
    pub host: String,
    pub summary: Summary,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// Every run with a main-phase summary, in file order (the summary on top).
    pub runs: Vec<summary::RunRow>,
    pub groups: Vec<ScenarioGroup>,
    /// Capacity searches, in file order.
    pub capacity: Vec<SearchReport>,
    pub probes: Vec<ProbeRow>,
    /// Scaling runs (capacity at several cluster sizes), in file order.
    pub scaling: Vec<crate::result::ScalingResult>,
    /// Environments priced with their deployment (`report --deployment`).
    pub costs: Vec<super::cost::CostRow>,
    /// Warnings carried by the results and choices the report made, one line each.
    pub notes: Vec<String>,
    /// One figure across the catalogue's runs of the report's pairs (`--history`).
    pub history: Option<super::history::History>,
}

/// How [`scenario_of`] names a closed-loop (throughput) scenario.
const CLOSED_LOOP: &str = "closed loop";

/// The scenario a run belongs to: runs are only compared with runs of the same one.
pub fn scenario_of(run: &RunResult) -> Option<String> {
    let phase = run.main_phase()?;
    let mode = match (phase.load.mode, &run.rate_share) {
        (LoadMode::Closed { concurrency }, _) => {
            format!("{CLOSED_LOOP}, {concurrency} in flight")
        }
        // Each environment's own share: one scenario whatever the rate came to.
        (LoadMode::Open { .. }, Some(s)) => {
            format!(
                "open loop, {} of the measured throughput",
                share_text(s.share)
            )
        }
        (LoadMode::Open { rate_per_s, .. }, None) => format!("open loop, {rate_per_s:.0} ops/s"),
    };
    // Batched sends are another arrival process (and up to the window late): not compared
    // with on-time ones.
    let window = phase.load.send_window().map_or(String::new(), |w| {
        format!(
            ", sends batched within {}",
            crate::step::argv::duration_text(&w)
        )
    });
    Some(format!("{}, {mode}{window}", run.workload.label()))
}

/// `35%`, `12.5%`.
fn share_text(share: f64) -> String {
    let pct = share * 100.0;
    match (pct - pct.round()).abs() < 1e-9 {
        true => format!("{pct:.0}%"),
        false => format!("{pct}%"),
    }
}

/// The latency spectrum of a histogram: (percentile, ms) at points evenly spaced on the
/// 1/(1−p) log scale (20 a decade), from p50 up to where the count of values still supports
/// the percentile (1/(1−p) ≤ count).
pub fn spectrum(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    const PER_DECADE: f64 = 20.0;
    let limit = (h.len() as f64).min(1e7);
    (0..)
        .map(|k| 2.0 * 10f64.powf(k as f64 / PER_DECADE))
        .take_while(|x| *x <= limit)
        .map(|x| {
            let q = 1.0 - 1.0 / x;
            (100.0 * q, h.value_at_quantile(q) as f64 / 1e6)
        })
        .collect()
}

impl ScenarioGroup {
    /// A closed-loop (throughput) scenario, as [`scenario_of`] named it.
    pub fn is_closed_loop(&self) -> bool {
        self.scenario.contains(CLOSED_LOOP)
    }

    /// The run sections with environments as columns (as in the reference articles).
    pub fn tables(&self) -> Vec<Table> {
        let items: Vec<(&str, &EnvRuns)> = self.envs.iter().map(|e| (e.env.as_str(), e)).collect();
        let mut out: Vec<Table> = RUN_SECTIONS
            .iter()
            .filter_map(|s| section_table(format!("{} — {}", s.title, self.scenario), s, &items))
            .collect();
        out.extend(self.runs.iter().filter_map(RunTimeline::fault_table));
        out.extend(self.runs.iter().filter_map(RunTimeline::shard_table));
        let runs: Vec<&RunTimeline> = self.runs.iter().collect();
        out.extend(verification::verify_table(&self.scenario, &runs));
        out.extend(verification::reads_table(&self.scenario, &runs));
        out
    }
}

impl Report {
    /// The probe table, environments as columns, the host each probe measured on top.
    pub fn probe_table(&self) -> Option<Table> {
        let items: Vec<(&str, &ProbeRow)> =
            self.probes.iter().map(|p| (p.env.as_str(), p)).collect();
        let mut table = section_table(PROBE_SECTION.title.to_string(), &PROBE_SECTION, &items)?;
        let hosts = self.probes.iter().map(|p| p.host.clone());
        table.rows.insert(
            0,
            std::iter::once("host".to_string()).chain(hosts).collect(),
        );
        Some(table)
    }

    /// The tables of the terminal and Markdown exporters: the summary of every run and its
    /// settings, per scenario the run sections, the response time by rate, then each capacity
    /// search's steps and the verdicts, then the probe table.
    pub fn tables(&self) -> Vec<Table> {
        let mut out = summary::tables(&self.runs);
        out.extend(self.groups.iter().flat_map(|g| g.tables()));
        out.extend(self.by_rate_tables());
        out.extend(self.capacity.iter().map(capacity::step_table));
        out.extend(capacity::verdict_table(&self.capacity));
        out.extend(self.scaling.iter().map(capacity::scaling_table));
        out.extend(self.probe_table());
        out.extend(super::cost::table(&self.costs));
        out.extend(super::cost::ranking_table(&self.costs));
        out.extend(self.history.iter().flat_map(|h| h.tables()));
        out
    }
}
