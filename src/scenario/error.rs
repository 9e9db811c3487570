//! Why a scenario, or one of its steps, stopped. Each variant carries the input, path, step or
//! cluster at fault; wrappers (a step, an environment, a cluster) name where it happened and
//! leave the cause to their `source`, so a one-line rendering of the chain (`a: b: c`) says
//! everything once.

use std::path::{Path, PathBuf};

use crate::error::Invalid;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// Input refused: a key's or flag's value, a combination, a file's content.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(transparent)]
    Load(#[from] crate::load::LoadError),
    #[error(transparent)]
    Capacity(#[from] super::capacity::CapacityError),
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
    #[error(transparent)]
    Result(#[from] crate::result::ResultError),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    #[error(transparent)]
    Cost(#[from] crate::cost::CostError),
    #[error(transparent)]
    Price(#[from] crate::prices::PriceError),
    #[error(transparent)]
    Profile(#[from] crate::workload::profile::ProfileError),
    #[error(transparent)]
    Launch(#[from] crate::shards::launch::LaunchError),
    #[error(transparent)]
    Exchange(#[from] crate::shards::exchange::ExchangeError),
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A run that ended other than completed or interrupted.
    #[error("{0}")]
    RunEnded(String),
    /// Cancelled (SIGINT / SIGTERM, or the caller's token): what was measured is kept.
    #[error("interrupted {when}; {kept}")]
    Interrupted { when: String, kept: String },
    #[error("step {index} ({name})")]
    Step {
        index: usize,
        name: String,
        #[source]
        source: Box<ScenarioError>,
    },
    #[error("environment {label}")]
    Environment {
        label: String,
        #[source]
        source: Box<ScenarioError>,
    },
    /// Something done to a named thing (a cluster, a size of a scaling step) failed.
    #[error("{what}")]
    Doing {
        what: String,
        #[source]
        source: Box<ScenarioError>,
    },
}

impl ScenarioError {
    pub fn io(what: &'static str, path: &Path, source: std::io::Error) -> ScenarioError {
        ScenarioError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }

    /// This error, as what happened while doing `what` (e.g. "starting cluster c1").
    pub fn doing(self, what: impl Into<String>) -> ScenarioError {
        ScenarioError::Doing {
            what: what.into(),
            source: Box::new(self),
        }
    }

    /// This error, as step `index` (`name`)'s.
    pub fn in_step(self, index: usize, name: &str) -> ScenarioError {
        ScenarioError::Step {
            index,
            name: name.to_string(),
            source: Box::new(self),
        }
    }

    /// The innermost cause's text, whatever wraps it (for tests and one-line summaries).
    pub fn root_cause(&self) -> String {
        let mut e: &dyn std::error::Error = self;
        while let Some(s) = e.source() {
            e = s;
        }
        e.to_string()
    }

    /// The whole chain on one line: `step 2 (latency): --rate: …`.
    pub fn one_line(&self) -> String {
        let mut parts = vec![self.to_string()];
        let mut e: &dyn std::error::Error = self;
        while let Some(s) = e.source() {
            let text = s.to_string();
            // A transparent wrapper repeats its source's text, and some errors end with their
            // source's text already: say it once.
            if !parts.last().is_some_and(|p| p.ends_with(&text)) {
                parts.push(text);
            }
            e = s;
        }
        parts.join(": ")
    }
}

/// `bail!`'s counterpart for refused input: `refuse!("--rate {r}: …")` returns
/// `Err(ScenarioError::Invalid(…))`.
macro_rules! refuse {
    ($($t:tt)*) => {
        return Err($crate::scenario::ScenarioError::Invalid($crate::invalid!($($t)*)))
    };
}
pub(crate) use refuse;

/// A `Result` whose error is a [`ScenarioError`].
pub type Result<T, E = ScenarioError> = std::result::Result<T, E>;

/// Adds a step/what context to any error that converts into a [`ScenarioError`].
pub trait Doing<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<ScenarioError>> Doing<T> for std::result::Result<T, E> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| e.into().doing(what()))
    }
}
