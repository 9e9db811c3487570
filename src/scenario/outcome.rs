//! What a step returns: the typed result it wrote, and where.

use std::path::{Path, PathBuf};

use crate::result::capacity::CapacityResult;
use crate::result::probe::ProbeResult;
use crate::result::{ResultError, ResultFile, RunResult, ScalingResult};

/// A step's result, as written to its file.
#[derive(Debug, Clone)]
pub enum Outcome {
    Probe(Box<ProbeResult>),
    /// A run, throughput, latency or fill step's run.
    Run(Box<RunResult>),
    Capacity(Box<CapacityResult>),
    Scaling(Box<ScalingResult>),
    /// A smoke check (its figures; it writes no result file).
    Smoke(crate::cluster::smoke::SmokeReport),
}

impl Outcome {
    /// The outcome a result file holds (a step kept on `--resume`).
    pub fn read(path: &Path) -> Result<Outcome, ResultError> {
        Ok(match crate::result::read(path)? {
            ResultFile::Run(r) => Outcome::Run(Box::new(r)),
            ResultFile::Capacity(r) => Outcome::Capacity(Box::new(r)),
            ResultFile::Scaling(r) => Outcome::Scaling(Box::new(r)),
            ResultFile::Probe(r) => Outcome::Probe(Box::new(r)),
            ResultFile::Verify(_) => {
                return Err(ResultError::Invalid {
                    path: path.to_path_buf(),
                    kind: crate::result::file::Kind::Verify,
                    message: "a verification is not a step's result".into(),
                });
            }
        })
    }

    /// The run, when the step was a run.
    pub fn run(&self) -> Option<&RunResult> {
        match self {
            Outcome::Run(r) => Some(r),
            _ => None,
        }
    }
}

/// One step of a scenario as it ended.
#[derive(Debug, Clone)]
pub struct StepOutcome {
    pub name: String,
    /// Its result file (none for a smoke check).
    pub out: Option<PathBuf>,
    pub outcome: Outcome,
    /// Kept from an earlier run of the scenario (`--resume`), not run now.
    pub kept: bool,
}
