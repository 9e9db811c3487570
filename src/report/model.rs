//! The report model: runs grouped by scenario (the main phase's load mode and workload) and
//! environment, with throughput per run and response-time percentiles from the merged
//! histograms of the environment's runs and each run's timeline for the charts; capacity
//! searches ([`super::capacity`]); probe headline figures per environment. The tables every
//! exporter shows are defined once, as lists of [`Field`]s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use super::capacity::{self, CapacitySearch};
use super::{Input, ReportError};
use crate::format::Table;
use crate::result::probe::{ProbeResult, Summary};
use crate::result::series::MetricSeries;
use crate::result::{IntervalRecord, RunResult, VerifyResult};
use crate::spec::LoadMode;
use crate::stats::{Percentiles, decode, new_histogram};

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
    pub summary: Summary,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub groups: Vec<ScenarioGroup>,
    /// Capacity searches, in file order.
    pub capacity: Vec<CapacitySearch>,
    pub probes: Vec<ProbeRow>,
    /// Scaling runs (capacity at several cluster sizes), in file order.
    pub scaling: Vec<crate::result::ScalingResult>,
    /// Environments priced with their deployment (`report --deployment`).
    pub costs: Vec<super::cost::CostRow>,
    /// Warnings carried by the results and choices the report made, one line each.
    pub notes: Vec<String>,
}

/// One row of a table: a figure of `T`, with its CSV key, label and decimals.
pub struct Field<T> {
    pub key: &'static str,
    pub label: &'static str,
    pub decimals: usize,
    pub get: fn(&T) -> Option<f64>,
}

/// A titled list of fields, shown as one table.
pub struct Section<T: 'static> {
    pub title: &'static str,
    pub fields: &'static [Field<T>],
}

macro_rules! pct {
    ($key:literal, $label:literal, $f:ident) => {
        Field {
            key: $key,
            label: $label,
            decimals: 2,
            get: |e: &EnvRuns| Some(e.response.$f),
        }
    };
}

/// The run tables, in order.
pub const RUN_SECTIONS: [Section<EnvRuns>; 3] = [
    Section {
        title: "Average throughput (ops/s)",
        fields: &[Field {
            key: "mean_ops_per_s",
            label: "ops/s",
            decimals: 0,
            get: |e| Some(e.mean_ops_per_s()),
        }],
    },
    Section {
        title: "Throughput over repeated runs (ops/s)",
        fields: &[
            Field {
                key: "runs",
                label: "runs",
                decimals: 0,
                get: |e| Some(e.runs() as f64),
            },
            Field {
                key: "min_ops_per_s",
                label: "min",
                decimals: 0,
                get: |e| e.spread().map(|s| s.0),
            },
            Field {
                key: "median_ops_per_s",
                label: "median",
                decimals: 0,
                get: |e| e.spread().map(|s| s.1),
            },
            Field {
                key: "max_ops_per_s",
                label: "max",
                decimals: 0,
                get: |e| e.spread().map(|s| s.2),
            },
            Field {
                key: "spread_pct",
                label: "spread % ((max-min)/median)",
                decimals: 1,
                get: EnvRuns::relative_spread_pct,
            },
        ],
    },
    Section {
        title: "Response time (ms, merged histograms)",
        fields: &[
            pct!("p50_ms", "p50", p50_ms),
            pct!("p75_ms", "p75", p75_ms),
            pct!("p90_ms", "p90", p90_ms),
            pct!("p95_ms", "p95", p95_ms),
            pct!("p99_ms", "p99", p99_ms),
            pct!("p999_ms", "p99.9", p999_ms),
            pct!("p9999_ms", "p99.99", p9999_ms),
            pct!("max_ms", "max", max_ms),
        ],
    },
];

/// The probe table.
pub const PROBE_SECTION: Section<ProbeRow> = Section {
    title: "Host probe",
    fields: &[
        Field {
            key: "cpu_events_s",
            label: "CPU (events/s)",
            decimals: 0,
            get: |p| p.summary.cpu_events_s,
        },
        Field {
            key: "disk_iops",
            label: "IOPS",
            decimals: 0,
            get: |p| p.summary.disk_iops,
        },
        Field {
            key: "disk_mb_s",
            label: "Disk throughput (MB/s)",
            decimals: 0,
            get: |p| p.summary.disk_mb_s,
        },
        Field {
            key: "disk_read_p99_ms",
            label: "Disk p99 read latency (ms)",
            decimals: 2,
            get: |p| p.summary.disk_read_p99_us.map(|us| us / 1000.0),
        },
    ],
};

/// How [`scenario_of`] names a closed-loop (throughput) scenario.
const CLOSED_LOOP: &str = "closed loop";

/// The scenario a run belongs to: runs are only compared with runs of the same one.
pub fn scenario_of(run: &RunResult) -> Option<String> {
    let phase = run.phases.iter().rev().find(|p| p.name == "main")?;
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
    Some(format!("{}, {mode}", run.workload.label()))
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

fn merged(path: &Path, encoded: &str, into: &mut Histogram<u64>) -> Result<(), ReportError> {
    let bad = |message: String| ReportError::BadHistogram {
        path: path.to_path_buf(),
        message,
    };
    let h = decode(encoded).map_err(|e| bad(e.0))?;
    into.add(&h).map_err(|e| bad(format!("{e:?}")))
}

/// What a run did around one fault.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultImpact {
    pub event: crate::result::fault::FaultEvent,
    /// Seconds into the main phase.
    pub at_s: f64,
    /// Mean throughput over the (up to) 10 s before the fault; in open loop at most the
    /// target rate (a backlog being caught up is not the level to recover to).
    pub before_ops_per_s: Option<f64>,
    /// Lowest per-interval availability from the fault until the next one (or the end);
    /// an interval counts for the fault its midpoint follows.
    pub min_availability: Option<f64>,
    /// From the fault until the first interval back at 95% of `before_ops_per_s`: Some(0.0)
    /// when throughput never fell below it, None when it had not recovered by the next fault
    /// (or the end), or when no whole interval followed it.
    pub recovery_s: Option<f64>,
    /// Whole intervals between the fault and the next one (or the end).
    pub intervals_after: usize,
    /// Errors by kind from the fault until the next one (or the end).
    pub errors: BTreeMap<crate::stats::ErrorKind, u64>,
}

impl RunTimeline {
    /// The impact of each fault, in order.
    /// Faults that were never applied (due after the main phase ended) have none.
    pub fn fault_impacts(&self) -> Vec<FaultImpact> {
        let rel = |run_s: f64| run_s - self.offset_s;
        let end = self.intervals.last().map_or(0.0, |i| i.end_s);
        let events: Vec<&crate::result::fault::FaultEvent> =
            self.events.iter().filter(|e| e.applied()).collect();
        let mut out = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let at = rel(e.started_s);
            let until = events.get(i + 1).map_or(end, |n| rel(n.started_s)).max(at);
            let before: Vec<f64> = self
                .intervals
                .iter()
                .filter(|iv| iv.end_s <= at + 1e-9 && iv.start_s >= at - 10.0 && !iv.drain)
                .map(|iv| iv.ops_per_s)
                .collect();
            let before_ops = (!before.is_empty())
                .then(|| before.iter().sum::<f64>() / before.len() as f64)
                .map(|b| self.target_rate_per_s.map_or(b, |t| b.min(t)));
            // Each interval belongs to the fault its midpoint follows: counted once.
            let last = i + 1 == events.len();
            let after: Vec<&IntervalRecord> = self
                .intervals
                .iter()
                .filter(|iv| {
                    let mid = (iv.start_s + iv.end_s) / 2.0;
                    mid >= at && (mid < until || last) && !iv.drain
                })
                .collect();
            let min_availability = after
                .iter()
                .filter_map(|iv| iv.availability())
                .fold(None, |m: Option<f64>, a| Some(m.map_or(a, |m| m.min(a))));
            // Intervals wholly after the fault; the one it fell in is partly before it.
            let whole: Vec<&&IntervalRecord> =
                after.iter().filter(|iv| iv.start_s >= at - 1e-9).collect();
            let recovery_s = before_ops.filter(|_| !whole.is_empty()).and_then(|b| {
                let level = 0.95 * b;
                if whole.iter().all(|iv| iv.ops_per_s >= level) {
                    return Some(0.0);
                }
                let dipped = whole.iter().position(|iv| iv.ops_per_s < level)?;
                whole[dipped..]
                    .iter()
                    .find(|iv| iv.ops_per_s >= level)
                    .map(|iv| iv.start_s - at)
            });
            let mut errors = BTreeMap::new();
            for iv in &after {
                for (k, n) in &iv.errors_by_kind {
                    *errors.entry(*k).or_default() += n;
                }
            }
            out.push(FaultImpact {
                event: (*e).clone(),
                intervals_after: whole.len(),
                at_s: at,
                before_ops_per_s: before_ops,
                min_availability,
                recovery_s,
                errors,
            });
        }
        out
    }

    /// Successful ÷ attempted operations over the main phase.
    pub fn availability(&self) -> Option<f64> {
        let (ok, all) = self.intervals.iter().fold((0u64, 0u64), |(o, a), iv| {
            (o + iv.ok, a + iv.ok + iv.errors)
        });
        (all > 0).then(|| ok as f64 / all as f64)
    }

    /// The shards of a merged run, one row each: what each drove, and whether it kept up.
    pub fn shard_table(&self) -> Option<Table> {
        let m = self.merged.as_ref()?;
        let first = m
            .shards
            .iter()
            .filter_map(|s| s.main_started_unix_s)
            .fold(f64::INFINITY, f64::min);
        let rows = m
            .shards
            .iter()
            .zip(crate::shards::behind::behind_all(&m.shards))
            .map(|(s, behind)| {
                vec![
                    format!("{}/{}", s.index, m.shards.len()),
                    crate::format::cell(Some(s.ops_per_s), 0),
                    crate::format::cell(s.target_rate_per_s, 0),
                    crate::format::cell(s.achieved_ratio.map(|r| r * 100.0), 2),
                    crate::format::cell(Some(s.client_cpu_util * 100.0), 0),
                    s.max_backlog.to_string(),
                    crate::format::cell(s.main_started_unix_s.map(|t| (t - first) * 1000.0), 1),
                    if behind.is_empty() {
                        "kept up".into()
                    } else {
                        format!("behind: {}", behind.join("; "))
                    },
                ]
            })
            .collect();
        Some(Table {
            title: format!(
                "Shards — {} ({}), run {}, main phases started within {:.1} ms",
                self.env,
                self.path.display(),
                m.run_id,
                m.start_spread_ms
            ),
            header: [
                "shard",
                "ops/s",
                "target ops/s",
                "sent on time %",
                "client CPU %",
                "max backlog",
                "start (ms after first)",
                "verdict",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            text_columns: vec![0, 7],
        })
    }

    /// The fault table of this run, when it had faults.
    pub fn fault_table(&self) -> Option<Table> {
        if self.events.is_empty() {
            return None;
        }
        let mut rows: Vec<Vec<String>> = self
            .fault_impacts()
            .into_iter()
            .map(|f| {
                let took = f
                    .event
                    .finished_s
                    .map(|e| format!("{:.1}", e - f.event.started_s));
                let errors: Vec<String> = f
                    .errors
                    .iter()
                    .map(|(k, n)| format!("{}={n}", k.name()))
                    .collect();
                vec![
                    format!("{:.1}", f.at_s),
                    f.event.fault.label(),
                    took.unwrap_or_else(|| "-".into()),
                    crate::format::cell(f.before_ops_per_s, 0),
                    crate::format::cell(f.min_availability.map(|a| a * 100.0), 2),
                    match (f.recovery_s, f.before_ops_per_s) {
                        (Some(s), _) => format!("{s:.0}"),
                        (None, Some(_)) if f.intervals_after > 0 => "not recovered".into(),
                        (None, _) => "-".into(),
                    },
                    if errors.is_empty() {
                        "none".into()
                    } else {
                        errors.join(", ")
                    },
                    f.event.error.clone().unwrap_or_else(|| "ok".into()),
                ]
            })
            .collect();
        // Faults never applied are listed, with nothing measured.
        for e in self.events.iter().filter(|e| !e.applied()) {
            let mut row = vec!["-".to_string(); 8];
            row[0] = format!("{:.1}", e.fault.at_s);
            row[1] = e.fault.label();
            row[7] = e.error.clone().unwrap_or_default();
            rows.push(row);
        }
        Some(Table {
            title: format!(
                "Faults — {} ({}), availability over the main phase {}%",
                self.env,
                self.path.display(),
                crate::format::cell(self.availability().map(|a| a * 100.0), 2)
            ),
            header: [
                "at (s)",
                "fault",
                "took (s)",
                "ops/s before",
                "min availability %",
                "recovered to 95% after (s)",
                "errors until next fault",
                "outcome",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            text_columns: vec![1, 5, 6, 7],
        })
    }
}

/// Verifications of a group's runs, runs as columns.
fn verify_table(scenario: &str, runs: &[&RunTimeline]) -> Option<Table> {
    let verified: Vec<(&RunTimeline, &VerifyResult)> = runs
        .iter()
        .filter_map(|r| r.verify.as_ref().map(|v| (*r, v)))
        .collect();
    if verified.is_empty() {
        return None;
    }
    type Get = fn(&VerifyResult) -> String;
    let fields: [(&str, Get); 9] = [
        ("writes acknowledged at", |v| {
            v.write_consistency.to_string()
        }),
        ("acknowledged write cycles", |v| {
            crate::format::cell(Some(v.acked_writes as f64), 0)
        }),
        ("rows read back at", |v| v.consistency.to_string()),
        ("acknowledged rows", |v| {
            crate::format::cell(Some(v.acked_rows as f64), 0)
        }),
        ("present", |v| {
            crate::format::cell(Some(v.present as f64), 0)
        }),
        ("missing", |v| {
            crate::format::cell(Some(v.missing as f64), 0)
        }),
        ("different", |v| {
            crate::format::cell(Some(v.different as f64), 0)
        }),
        ("unreadable", |v| {
            crate::format::cell(Some(v.unreadable as f64), 0)
        }),
        ("unknown-outcome writes: rows landed", |v| {
            format!("{} of {}", v.unknown_landed, v.unknown_rows)
        }),
    ];
    Some(Table {
        title: format!("Acknowledged writes read back — {scenario}"),
        header: std::iter::once(String::new())
            .chain(verified.iter().map(|(r, _)| {
                format!(
                    "{} ({})",
                    r.env,
                    r.path.file_name().unwrap_or_default().to_string_lossy()
                )
            }))
            .collect(),
        rows: fields
            .iter()
            .map(|(label, get)| {
                std::iter::once(label.to_string())
                    .chain(verified.iter().map(|(_, v)| get(v)))
                    .collect()
            })
            .collect(),
        text_columns: (1..=verified.len()).collect(),
    })
}

impl Report {
    /// Builds the model from loaded results, in the order given (environments appear in the
    /// order of their first file).
    pub fn build(inputs: &[Input]) -> Result<Report, ReportError> {
        let mut report = Report::default();
        // scenario → (env → (throughputs, merged response histogram), runs)
        type Acc = (Vec<f64>, Histogram<u64>);
        type Group = (
            String,
            Vec<(String, Acc)>,
            Vec<RunTimeline>,
            (String, Option<f64>),
        );
        let mut groups: Vec<Group> = Vec::new();
        let mut probes: BTreeMap<String, (PathBuf, &ProbeResult, usize)> = BTreeMap::new();
        let mut probe_order = Vec::new();
        for input in inputs {
            match input {
                Input::Run { path, result } => {
                    for w in &result.warnings {
                        report
                            .notes
                            .push(format!("{} ({}): {w}", result.env, path.display()));
                    }
                    let (Some(scenario), Some(summary)) =
                        (scenario_of(result), result.main_summary())
                    else {
                        report.notes.push(format!(
                            "{} ({}): no main-phase summary, left out",
                            result.env,
                            path.display()
                        ));
                        continue;
                    };
                    let gi = match groups.iter().position(|g| g.0 == scenario) {
                        Some(i) => i,
                        None => {
                            let rate = result
                                .phases
                                .iter()
                                .rev()
                                .find(|p| p.name == "main")
                                .and_then(|p| match p.load.mode {
                                    // A share is a different rate per environment: not a row
                                    // of the table by rate.
                                    LoadMode::Open { .. } if result.rate_share.is_some() => None,
                                    LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
                                    LoadMode::Closed { .. } => None,
                                });
                            let kind = (result.workload.label(), rate);
                            groups.push((scenario, Vec::new(), Vec::new(), kind));
                            groups.len() - 1
                        }
                    };
                    if let Some(main) = result.phases.iter().rev().find(|p| p.name == "main") {
                        groups[gi].2.push(RunTimeline {
                            env: result.env.clone(),
                            path: path.clone(),
                            offset_s: main.offset_s,
                            intervals: main.intervals.clone(),
                            metrics: result.metrics.as_deref().cloned(),
                            target_rate_per_s: match main.load.mode {
                                LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
                                LoadMode::Closed { .. } => None,
                            },
                            events: result.events.clone(),
                            verify: None,
                            merged: result.merged.clone(),
                        });
                    }
                    let envs = &mut groups[gi].1;
                    let ei = match envs.iter().position(|e| e.0 == result.env) {
                        Some(i) => i,
                        None => {
                            envs.push((result.env.clone(), (Vec::new(), new_histogram())));
                            envs.len() - 1
                        }
                    };
                    let acc = &mut envs[ei].1;
                    merged(path, &summary.all.response_histogram_ns, &mut acc.1)?;
                    acc.0.push(summary.ops_per_s);
                }
                Input::Verify { .. } => {}
                Input::Scaling { path, result } => {
                    if result.status != crate::result::capacity::CapacityStatus::Completed {
                        report.notes.push(format!(
                            "{} ({}): scaling run not completed: {} of {} sizes searched",
                            result.env,
                            path.display(),
                            result.points.len(),
                            result.sizes.len()
                        ));
                    }
                    report.scaling.push(result.clone());
                }
                Input::Capacity { path, result } => {
                    let search = CapacitySearch::of(path.clone(), result);
                    if let Some(status) = &search.status {
                        report.notes.push(format!(
                            "{} ({}): capacity search {status}: verdict from the steps so far",
                            result.env,
                            path.display()
                        ));
                    }
                    report.capacity.push(search);
                }
                Input::Probe { path, result } => {
                    if !result.complete {
                        report.notes.push(format!(
                            "{} ({}): probe incomplete, figures of the profiles it finished",
                            result.env,
                            path.display()
                        ));
                    }
                    let slot = probes.entry(result.env.clone()).or_insert_with(|| {
                        probe_order.push(result.env.clone());
                        (path.clone(), result, 0)
                    });
                    slot.2 += 1;
                    if result.started_unix_s > slot.1.started_unix_s {
                        (slot.0, slot.1) = (path.clone(), result);
                    }
                }
            }
        }
        // Verifications go with the run they verified.
        for input in inputs {
            let Input::Verify { path, result } = input else {
                continue;
            };
            let run = groups
                .iter_mut()
                .flat_map(|g| g.2.iter_mut())
                .find(|r| crate::fsutil::same_file(&r.path, &result.run));
            match run {
                Some(r) => r.verify = Some(result.clone()),
                None => report.notes.push(format!(
                    "{}: verifies {}, which is not in this report",
                    path.display(),
                    result.run.display()
                )),
            }
        }
        report.groups = groups
            .into_iter()
            .map(
                |(scenario, envs, runs, (workload, open_rate_per_s))| ScenarioGroup {
                    scenario,
                    workload,
                    open_rate_per_s,
                    envs: envs
                        .into_iter()
                        .map(|(env, (ops_per_s, h))| EnvRuns {
                            env,
                            ops_per_s,
                            response: Percentiles::of(&h),
                            spectrum: spectrum(&h),
                        })
                        .collect(),
                    runs,
                },
            )
            .collect();
        for env in probe_order {
            let (path, result, count) = &probes[&env];
            if *count > 1 {
                report.notes.push(format!(
                    "{env}: {count} probes, the latest ({}) is shown",
                    path.display()
                ));
            }
            report.probes.push(ProbeRow {
                env,
                summary: result.summary.clone(),
            });
        }
        Ok(report)
    }
}

fn section_table<T>(title: String, section: &Section<T>, items: &[(&str, &T)]) -> Option<Table> {
    let rows: Vec<Vec<String>> = section
        .fields
        .iter()
        .map(|f| {
            std::iter::once(f.label.to_string())
                .chain(
                    items
                        .iter()
                        .map(|(_, t)| crate::format::cell((f.get)(t), f.decimals)),
                )
                .collect()
        })
        .collect();
    let any = section
        .fields
        .iter()
        .any(|f| items.iter().any(|(_, t)| (f.get)(t).is_some()));
    // The repeated-runs table is only worth showing when some environment has several runs.
    let several = section
        .fields
        .iter()
        .filter(|f| f.key != "runs")
        .any(|f| items.iter().any(|(_, t)| (f.get)(t).is_some()));
    (any && several).then(|| Table {
        title,
        header: std::iter::once(String::new())
            .chain(items.iter().map(|(env, _)| env.to_string()))
            .collect(),
        rows,
        text_columns: Vec::new(),
    })
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
        out.extend(verify_table(&self.scenario, &runs));
        out
    }
}

impl Report {
    /// The probe table, environments as columns.
    pub fn probe_table(&self) -> Option<Table> {
        let items: Vec<(&str, &ProbeRow)> =
            self.probes.iter().map(|p| (p.env.as_str(), p)).collect();
        section_table(PROBE_SECTION.title.to_string(), &PROBE_SECTION, &items)
    }

    /// Per workload run at two or more fixed rates: response-time p99 by rate, rates as rows
    /// and environments as columns (reference 002's table).
    pub fn by_rate_tables(&self) -> Vec<Table> {
        let mut workloads: Vec<&str> = Vec::new();
        for g in &self.groups {
            if g.open_rate_per_s.is_some() && !workloads.contains(&g.workload.as_str()) {
                workloads.push(&g.workload);
            }
        }
        let mut out = Vec::new();
        for w in workloads {
            let mut groups: Vec<&ScenarioGroup> = self
                .groups
                .iter()
                .filter(|g| g.workload == w && g.open_rate_per_s.is_some())
                .collect();
            if groups.len() < 2 {
                continue;
            }
            groups.sort_by(|a, b| {
                let rate = |g: &&ScenarioGroup| g.open_rate_per_s.unwrap_or(0.0);
                rate(a).total_cmp(&rate(b))
            });
            let mut envs: Vec<&str> = Vec::new();
            for g in &groups {
                for e in &g.envs {
                    if !envs.contains(&e.env.as_str()) {
                        envs.push(&e.env);
                    }
                }
            }
            let header = std::iter::once("target ops/s".to_string())
                .chain(envs.iter().map(|e| e.to_string()))
                .collect();
            let rows = groups
                .iter()
                .map(|g| {
                    std::iter::once(crate::format::cell(g.open_rate_per_s, 0))
                        .chain(envs.iter().map(|env| {
                            crate::format::cell(
                                g.envs
                                    .iter()
                                    .find(|e| e.env == *env)
                                    .map(|e| e.response.p99_ms),
                                2,
                            )
                        }))
                        .collect()
                })
                .collect();
            out.push(Table {
                title: format!("Response time p99 (ms) by rate — {w}, open loop"),
                header,
                rows,
                text_columns: vec![],
            });
        }
        out
    }

    /// The tables of the terminal and Markdown exporters: per scenario the run sections, the
    /// response time by rate, then each capacity search's steps and the verdicts, then the
    /// probe table.
    pub fn tables(&self) -> Vec<Table> {
        let mut out: Vec<Table> = self.groups.iter().flat_map(|g| g.tables()).collect();
        out.extend(self.by_rate_tables());
        out.extend(self.capacity.iter().map(capacity::step_table));
        out.extend(capacity::verdict_table(&self.capacity));
        out.extend(self.scaling.iter().map(capacity::scaling_table));
        out.extend(self.probe_table());
        out.extend(super::cost::table(&self.costs));
        out
    }
}
