//! The `run` step (`cqlbench run WORKLOAD`): what was typed (flags or scenario keys, one
//! struct for both), its checks ([`check`]), its plan for the load engine ([`plan`]) and its
//! execution ([`exec`]); [`RunStep::args`] turns it back into its command line.

mod check;
mod exec;
mod plan;

pub use exec::{execute, launch_loaders};
pub use plan::Reach;

use std::path::PathBuf;

pub use crate::step::run::RunStep;
use crate::step::run::{DEFAULT_DURATION_S, DEFAULT_KEYSPACE};

impl RunStep {
    /// The result path when `--out` is not given:
    /// `<results dir>/<UTC time>-<env>-<what>.json`.
    pub fn default_out(&self, ctx: &crate::scenario::Context, what: &str) -> PathBuf {
        ctx.results_dir().join(format!(
            "{}-{}-{what}.json",
            crate::format::compact_utc(crate::host::unix_now_s()),
            self.env_label()
        ))
    }
}
