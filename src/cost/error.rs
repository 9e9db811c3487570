//! The error type at the boundary of the cost module.

use crate::prices::PriceError;

/// Everything that can go wrong while pricing a cluster or planning one: the catalogue's own
/// refusals, and the results and inputs a price is measured from. Each variant names the input
/// so the CLI can print it on one line.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    /// The price catalogue refused (a file, an entry, a name, a value, a disk's limits).
    #[error(transparent)]
    Price(#[from] PriceError),
    /// A probe or capacity input that cannot be used.
    #[error("{file}: {problem}")]
    InputFile { file: String, problem: String },
    /// A result file that cannot be read.
    #[error(transparent)]
    Result(#[from] crate::result::ResultError),
    /// A deployment names an environment none of the results has.
    #[error(
        "--deployment {env}=…: no result of environment \"{env}\" among the results (their environments: {known})"
    )]
    UnknownEnvironment { env: String, known: String },
    /// The planner cannot produce any candidate.
    #[error("plan: {0}")]
    Plan(String),
}
