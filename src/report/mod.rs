//! Reports from result files alone: load run, capacity-search and probe results, build one
//! model ([`model::Report`]: environments side by side, grouped by scenario), render it with
//! one exporter per format ([`text`], [`markdown`], [`csv`], [`html`] with SVG charts from
//! [`charts`] and [`svg`]). [`series`] extracts the per-interval series that
//! `cqlbench compare` tests with [`crate::stats::compare`].

use std::path::{Path, PathBuf};

use crate::result::{
    CapacityResult, ProbeResult, ResultFile, RunResult, ScalingResult, VerifyResult,
};

pub mod capacity;
pub mod capacity_change;
pub mod charts;
pub mod compare;
pub mod cost;
pub mod csv;
pub mod history;
pub mod html;
pub mod markdown;
pub mod model;
pub mod series;
pub mod svg;
pub mod text;

pub use model::Report;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Read(#[from] crate::result::ResultError),
    #[error("{path}: main-phase histogram does not decode: {message}")]
    BadHistogram { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Series { path: PathBuf, message: String },
    #[error("{0}")]
    Shards(String),
}

/// One loaded result file.
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per file given on the command line; boxing would only add noise"
)]
pub enum Input {
    Run {
        path: PathBuf,
        result: RunResult,
    },
    Capacity {
        path: PathBuf,
        result: CapacityResult,
    },
    Probe {
        path: PathBuf,
        result: ProbeResult,
    },
    /// A verification of a run (`cqlbench verify`); shown with that run.
    Verify {
        path: PathBuf,
        result: VerifyResult,
    },
    /// Capacity searches at several cluster sizes (a scenario's `scaling` step); its searches
    /// come along as capacity results.
    Scaling {
        path: PathBuf,
        result: ScalingResult,
    },
}

impl Input {
    pub fn path(&self) -> &Path {
        match self {
            Input::Run { path, .. }
            | Input::Capacity { path, .. }
            | Input::Probe { path, .. }
            | Input::Verify { path, .. }
            | Input::Scaling { path, .. } => path,
        }
    }
}

/// Loads a run, capacity-search or probe result (see [`crate::result::read`]).
pub fn load(path: &Path) -> Result<Input, ReportError> {
    let path_buf = path.to_path_buf();
    Ok(match crate::result::read(path)? {
        ResultFile::Run(result) => Input::Run {
            path: path_buf,
            result,
        },
        ResultFile::Capacity(result) => Input::Capacity {
            path: path_buf,
            result,
        },
        ResultFile::Probe(result) => Input::Probe {
            path: path_buf,
            result,
        },
        ResultFile::Verify(result) => Input::Verify {
            path: path_buf,
            result,
        },
        ResultFile::Scaling(result) => Input::Scaling {
            path: path_buf,
            result,
        },
    })
}

/// Loads every file, stopping at the first that fails. A run's verification next to it
/// (`RUN.verify.json`) comes along unless it was given too.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Input>, ReportError> {
    let mut out: Vec<Input> = paths.iter().map(|p| load(p)).collect::<Result<_, _>>()?;
    out = merge_shards(out)?;
    for p in paths {
        let v = VerifyResult::path_for(p);
        if matches!(out.iter().find(|i| i.path() == p), Some(Input::Run { .. }))
            && !paths.contains(&v)
            && let Some(mut result) = VerifyResult::beside(p)
        {
            // Found beside the run, it verifies that run however its path was spelled.
            result.run = p.clone();
            out.push(Input::Verify { path: v, result });
        }
    }
    // A scaling result's capacity searches, unless given too.
    let searches: Vec<PathBuf> = out
        .iter()
        .filter_map(|i| match i {
            Input::Scaling { path, result } => Some(
                result
                    .points
                    .iter()
                    .map(|p| path.parent().unwrap_or(Path::new(".")).join(&p.result))
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    for s in searches {
        if !out.iter().any(|i| crate::fsutil::same_file(i.path(), &s)) {
            out.push(load(&s)?);
        }
    }
    Ok(out)
}

/// Shards of one run given together are that run: merged (as `cqlbench merge` would) in
/// place of the first; a run's shards given only in part are refused.
fn merge_shards(inputs: Vec<Input>) -> Result<Vec<Input>, ReportError> {
    let run_of = |i: &Input| match i {
        Input::Run { result, .. } => result.shard.as_ref().map(|s| s.run_id.clone()),
        _ => None,
    };
    let mut out = Vec::new();
    let mut done: Vec<String> = Vec::new();
    for input in &inputs {
        let Some(run_id) = run_of(input) else {
            out.push(input.clone());
            continue;
        };
        if done.contains(&run_id) {
            continue;
        }
        done.push(run_id.clone());
        let mut shards = inputs
            .iter()
            .filter_map(|i| match i {
                Input::Run { path, result } if run_of(i).as_ref() == Some(&run_id) => Some(
                    crate::shards::input::ShardInput::with_result(path, result.clone()),
                ),
                _ => None,
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ReportError::Shards(e.to_string()))?;
        let (result, _) = crate::shards::merge::merge(&mut shards).map_err(|e| {
            ReportError::Shards(format!(
                "{e}: give every shard of a run, or its merged result (cqlbench merge)"
            ))
        })?;
        out.push(Input::Run {
            path: input.path().to_path_buf(),
            result,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture;

    #[test]
    fn loads_runs_and_probes_and_names_the_file_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        let run_path = dir.path().join("run.json");
        fixture::run("laptop", &fixture::RunShape::default())
            .write(&run_path)
            .unwrap();
        assert!(matches!(load(&run_path).unwrap(), Input::Run { .. }));
        let probe_path = dir.path().join("probe.json");
        std::fs::write(
            &probe_path,
            include_str!("../probe/testdata/probe-result.json"),
        )
        .unwrap();
        assert!(matches!(load(&probe_path).unwrap(), Input::Probe { .. }));
        let capacity_path = dir.path().join("capacity.json");
        fixture::capacity("laptop", &[1_000.0, 2_000.0], 2)
            .write(&capacity_path)
            .unwrap();
        assert!(matches!(
            load(&capacity_path).unwrap(),
            Input::Capacity { .. }
        ));

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{ not json").unwrap();
        let e = load(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: not JSON", bad.display())),
            "{e}"
        );
        std::fs::write(&bad, r#"{"schema_version": 1}"#).unwrap();
        let e = load(&bad).unwrap_err().to_string();
        assert!(e.contains("neither a run result"), "{e}");
        assert!(e.contains("a capacity, scaling or verify result"), "{e}");
        std::fs::write(&bad, r#"{"schema_version": 9, "phases": []}"#).unwrap();
        let e = load(&bad).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: written by another cqlbench (layout version 9; this one reads 1)",
                bad.display()
            )
        );
        std::fs::write(&bad, r#"{"schema_version": 7, "kind": "capacity"}"#).unwrap();
        let e = load(&bad).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: written by another cqlbench (layout version 7; this one reads 1)",
                bad.display()
            )
        );
        let missing = dir.path().join("missing.json");
        let e = load(&missing).unwrap_err().to_string();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        assert!(!e.contains('\n'));
    }
}
#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod summary_tests;
