//! The throughput a cost is expressed against: a figure the user gives (`--ops 45000`), or one
//! read from a result (`--ops cap.json`: a capacity verdict or a throughput test), which then
//! carries the hardware it was measured on.

use std::path::PathBuf;
use std::str::FromStr;

use super::plan::MeasuredOn;
use super::price::Origin;
use super::{CostError, Hardware};
use crate::prices::catalog::Instance;
use crate::result::ResultFile;

/// `--ops`: ops/s (`45000`, `45k`), or a run or capacity-search result file.
#[derive(Debug, Clone, PartialEq)]
pub enum OpsArg {
    PerSecond(f64),
    Result(PathBuf),
}

impl FromStr for OpsArg {
    type Err = crate::error::Invalid;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let number = t.trim_end_matches(['k', 'K']).parse::<f64>().is_ok();
        if number || t.is_empty() {
            return crate::spec::load::parse_rate(s).map(OpsArg::PerSecond);
        }
        if t.ends_with(".json") || t.contains(std::path::MAIN_SEPARATOR) {
            return Ok(OpsArg::Result(PathBuf::from(t)));
        }
        Err(crate::invalid!(
            "'{s}' is not a throughput: expected ops/s (e.g. 45000 or 45k) or a run or capacity-search result file (.json)"
        ))
    }
}

/// A throughput to express the cost against, with where it came from and, when measured, what
/// it was measured on.
#[derive(Debug, Clone)]
pub struct Throughput {
    pub ops_per_s: f64,
    pub origin: Origin,
    pub measured: Option<MeasuredOn>,
}

impl Throughput {
    /// A figure the user gave.
    pub fn given(ops_per_s: f64) -> Throughput {
        Throughput {
            ops_per_s,
            origin: Origin::Input,
            measured: None,
        }
    }

    /// What `arg` stands for: the figure, or the result's measured throughput.
    pub fn of(arg: &OpsArg) -> Result<Throughput, CostError> {
        match arg {
            OpsArg::PerSecond(v) => Ok(Throughput::given(*v)),
            OpsArg::Result(path) => Throughput::read(path),
        }
    }

    /// The throughput a result measured: a capacity search's highest passing step (achieved),
    /// else a run's main phase.
    pub fn read(path: &std::path::Path) -> Result<Throughput, CostError> {
        let file = path.display().to_string();
        let bad = |problem: &str| CostError::InputFile {
            file: file.clone(),
            problem: problem.to_string(),
        };
        let (ops, what, hardware) = match crate::result::read(path)? {
            ResultFile::Capacity(r) => {
                let ops = r
                    .verdict
                    .as_ref()
                    .and_then(|v| v.highest_passing_ops_per_s)
                    .filter(|o| *o > 0.0 && o.is_finite())
                    .ok_or_else(|| bad("no step of the search passed: it measured no capacity"))?;
                let what = format!("capacity verdict, {} on {}", r.workload.kind, r.env);
                (ops, what, Hardware::of_capacity(&r, path))
            }
            ResultFile::Run(r) => {
                let ops = r
                    .main_summary()
                    .map(|s| s.ops_per_s)
                    .filter(|o| *o > 0.0 && o.is_finite())
                    .ok_or_else(|| bad("the run has no main-phase throughput"))?;
                let what = format!("main phase, {} on {}", r.workload.kind, r.env);
                (ops, what, Ok(Hardware::of_run(&r, &file)))
            }
            other => {
                return Err(bad(&format!(
                    "a {} result, not a run or capacity-search result",
                    other.kind().name()
                )));
            }
        };
        let nodes = hardware.as_ref().ok().and_then(|h| h.nodes).unwrap_or(0);
        Ok(Throughput {
            ops_per_s: ops,
            origin: Origin::Measured(format!("{file} ({what})")),
            measured: Some(MeasuredOn::new(ops, nodes, hardware)),
        })
    }

    /// Warnings for dividing the cost of `nodes` × `inst` by this throughput.
    pub fn warnings_against(&self, inst: &Instance, nodes: u32) -> Vec<String> {
        self.measured
            .as_ref()
            .map(|m| m.warnings_against_cluster(inst, nodes))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_a_number_or_a_result_file() {
        assert_eq!(
            "45k".parse::<OpsArg>().unwrap(),
            OpsArg::PerSecond(45_000.0)
        );
        assert_eq!(
            "out/cap.json".parse::<OpsArg>().unwrap(),
            OpsArg::Result("out/cap.json".into())
        );
        for bad in ["0", "-5", "inf", "nan", "lots", ""] {
            assert!(bad.parse::<OpsArg>().is_err(), "{bad}");
        }
        let e = "lots".parse::<OpsArg>().unwrap_err();
        assert!(e.contains("or a run or capacity-search result file"), "{e}");
    }
}
