//! History (`report --history FIGURE`): one figure of every run the runs index holds of the
//! report's workloads and environments, over time — the nightly run's p99 across the weeks,
//! this run marked among them.
//!
//! The series are taken per (environment, workload label) of the report's own runs, from the
//! indexed runs of exactly that pair; each point is read from its result file (the files
//! are the source of truth), and a run without a summarised main phase, or whose file no
//! longer reads, is counted and left out.

use std::path::{Path, PathBuf};

use crate::error::Invalid;
use crate::format::Table;
use crate::result::RunResult;
use crate::runs_index::{Filter, RunsIndex};

/// The figure followed across runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// The main phase's throughput, ops/s.
    Throughput,
    /// A response-time percentile of the main phase (coordinated-omission corrected), of
    /// every operation together or of one kind.
    Response { kind: Option<String>, q: Quantile },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantile {
    P50,
    P90,
    P99,
    P999,
    Max,
}

const QUANTILES: [(&str, Quantile); 5] = [
    ("p50", Quantile::P50),
    ("p90", Quantile::P90),
    ("p99", Quantile::P99),
    ("p999", Quantile::P999),
    ("max", Quantile::Max),
];

impl std::str::FromStr for Figure {
    type Err = Invalid;

    /// `throughput`, `p50`, `p90`, `p99`, `p999`, `max`, or `KIND.pNN` (`read.p99`).
    fn from_str(s: &str) -> Result<Figure, Invalid> {
        let t = s.trim();
        if t == "throughput" {
            return Ok(Figure::Throughput);
        }
        let (kind, q) = match t.rsplit_once('.') {
            Some((k, q)) if !k.is_empty() => (Some(k.to_string()), q),
            _ => (None, t),
        };
        let q = QUANTILES
            .iter()
            .find(|(n, _)| *n == q)
            .map(|(_, q)| *q)
            .ok_or_else(|| {
                crate::invalid!(
                    "'{s}' is not a figure: throughput, p50, p90, p99, p999, max, or KIND.pNN (read.p99)"
                )
            })?;
        Ok(Figure::Response { kind, q })
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Figure::Throughput => write!(f, "throughput"),
            Figure::Response { kind, q } => {
                let q = QUANTILES
                    .iter()
                    .find(|(_, x)| x == q)
                    .map_or("", |(n, _)| n);
                match kind {
                    Some(k) => write!(f, "{k}.{q}"),
                    None => write!(f, "{q}"),
                }
            }
        }
    }
}

impl Figure {
    /// The figure as a column header: its name and unit.
    pub fn heading(&self) -> String {
        match self {
            Figure::Throughput => "throughput (ops/s)".into(),
            Figure::Response { .. } => format!("response {self} (ms)"),
        }
    }

    /// The figure of `r`'s main phase, if it has a summary (and, for a kind, operations of it).
    pub fn of(&self, r: &RunResult) -> Option<f64> {
        let s = r.main_summary()?;
        match self {
            Figure::Throughput => Some(s.ops_per_s),
            Figure::Response { kind, q } => {
                let p = match kind {
                    None => &s.all.response,
                    Some(k) => {
                        let op = s.by_op.iter().find(|(kind, _)| kind.name() == k)?.1;
                        &op.response
                    }
                };
                if p.count == 0 {
                    return None;
                }
                Some(match q {
                    Quantile::P50 => p.p50_ms,
                    Quantile::P90 => p.p90_ms,
                    Quantile::P99 => p.p99_ms,
                    Quantile::P999 => p.p999_ms,
                    Quantile::Max => p.max_ms,
                })
            }
        }
    }
}

/// One run's point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub id: i64,
    pub started_unix_s: i64,
    pub value: f64,
    pub path: PathBuf,
    pub tags: Vec<String>,
    /// One of the report's own runs.
    pub in_report: bool,
}

/// The figure across the indexed runs of one environment and workload, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub env: String,
    pub workload: String,
    pub points: Vec<Point>,
    /// Indexed runs of the pair left out: no summarised main phase or no such figure, or
    /// a file that no longer reads.
    pub left_out: usize,
}

/// The history section of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub figure: Figure,
    pub series: Vec<Series>,
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The history of `figure` for each (environment, workload) of `runs` (the report's runs:
/// path and result), from the indexed runs of that pair. `index` is brought up to
/// date by the caller.
pub fn build(
    figure: &Figure,
    index: &RunsIndex,
    runs: &[(&Path, &RunResult)],
) -> Result<History, Invalid> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (_, r) in runs {
        let pair = (r.env.clone(), r.workload.label());
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    let mut series = Vec::new();
    for (env, workload) in pairs {
        let entries = index.list(&Filter {
            kind: Some("run".into()),
            env: Some(env.clone()),
            workload: Some(workload.clone()),
            ..Filter::default()
        })?;
        let mut points = Vec::new();
        let mut left_out = 0;
        // The filter matches a part of the label: keep the exact workload.
        for e in entries.into_iter().filter(|e| e.workload == workload) {
            let value = RunResult::read(&e.path).ok().and_then(|r| figure.of(&r));
            let Some(value) = value else {
                left_out += 1;
                continue;
            };
            let in_report = runs.iter().any(|(p, _)| same_file(p, &e.path));
            points.push(Point {
                id: e.id,
                started_unix_s: e.started_unix_s,
                value,
                path: e.path,
                tags: e.tags,
                in_report,
            });
        }
        points.sort_by_key(|p| (p.started_unix_s, p.id));
        series.push(Series {
            env,
            workload,
            points,
            left_out,
        });
    }
    Ok(History {
        figure: figure.clone(),
        series,
    })
}

/// `2026-11-26 17:05` (UTC).
pub fn when(unix_s: i64) -> String {
    let t = crate::format::rfc3339_utc(unix_s.max(0) as u64);
    t.get(..16).unwrap_or(&t).replace('T', " ")
}

impl History {
    /// One table per series: each run's start, id, figure and change from the run before it.
    pub fn tables(&self) -> Vec<Table> {
        self.series
            .iter()
            .map(|s| {
                let mut rows = Vec::new();
                let mut prev: Option<f64> = None;
                for p in &s.points {
                    let change = match prev {
                        Some(v) if v != 0.0 => format!("{:+.1}%", (p.value - v) / v * 100.0),
                        _ => String::new(),
                    };
                    prev = Some(p.value);
                    let file = p
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    rows.push(vec![
                        when(p.started_unix_s),
                        p.id.to_string(),
                        format!("{:.2}", p.value),
                        change,
                        p.tags.join(","),
                        if p.in_report {
                            format!("{file} (this report)")
                        } else {
                            file
                        },
                    ]);
                }
                let mut title = format!(
                    "History of {} — {} · {} ({} runs in the runs index)",
                    self.figure,
                    s.env,
                    s.workload,
                    s.points.len()
                );
                if s.left_out > 0 {
                    title.push_str(&format!(
                        "; {} left out: no summarised main phase or no such figure",
                        s.left_out
                    ));
                }
                Table {
                    title,
                    header: vec![
                        "started (UTC)".into(),
                        "id".into(),
                        self.figure.heading(),
                        "change".into(),
                        "tags".into(),
                        "result".into(),
                    ],
                    rows,
                    text_columns: vec![4, 5],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture;

    #[test]
    fn figures_parse_and_print_back() {
        for s in [
            "throughput",
            "p50",
            "p90",
            "p99",
            "p999",
            "max",
            "read.p99",
            "by_id.p50",
        ] {
            let f: Figure = s.parse().unwrap();
            assert_eq!(f.to_string(), s);
        }
        for bad in ["", "p98", "read.", ".p99", "latency", "read.p99.9"] {
            let e = bad.parse::<Figure>().unwrap_err().to_string();
            assert!(e.contains("is not a figure"), "{bad}: {e}");
        }
    }

    fn set_throughput(r: &mut RunResult, ops: f64) {
        let main = r.main_phase_mut();
        main.and_then(|p| p.summary.as_mut()).unwrap().ops_per_s = ops;
    }

    #[test]
    fn the_history_follows_the_indexed_runs_of_the_reports_pairs() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results");
        std::fs::create_dir_all(&results).unwrap();
        // Three runs of one environment and workload over three days, one of another
        // environment (not in the history), and one with no main phase summary.
        let mut paths = Vec::new();
        for (i, (env, ops, day)) in [
            ("lab", 1000.0, 0),
            ("lab", 1100.0, 1),
            ("lab", 990.0, 2),
            ("prod", 5000.0, 1),
        ]
        .into_iter()
        .enumerate()
        {
            let mut r = fixture::run(env, &fixture::RunShape::default());
            r.started_unix_s = 1_795_000_000 + day * 86_400;
            set_throughput(&mut r, ops);
            let p = results.join(format!("r{i}.json"));
            r.write(&p).unwrap();
            paths.push(p);
        }
        let mut broken = fixture::run("lab", &fixture::RunShape::default());
        broken.phases.clear();
        broken.write(&results.join("broken.json")).unwrap();
        let mut cat = RunsIndex::open(&dir.path().join("c.sqlite")).unwrap();
        cat.add_root(&results).unwrap();
        cat.sync().unwrap();
        let latest = RunResult::read(&paths[2]).unwrap();
        let h = build(&Figure::Throughput, &cat, &[(paths[2].as_path(), &latest)]).unwrap();
        assert_eq!(h.series.len(), 1);
        let s = &h.series[0];
        assert_eq!(s.env, "lab");
        let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        assert_eq!(values, [1000.0, 1100.0, 990.0], "oldest first");
        assert_eq!(
            s.points.iter().map(|p| p.in_report).collect::<Vec<_>>(),
            [false, false, true]
        );
        assert_eq!(s.left_out, 1, "the run without a summary");
        let t = &h.tables()[0];
        assert_eq!(t.rows[1][3], "+10.0%");
        assert_eq!(t.rows[2][3], "-10.0%");
        assert!(t.rows[2][5].ends_with("(this report)"), "{:?}", t.rows[2]);
        assert!(t.title.contains("1 left out"), "{}", t.title);
    }
}
