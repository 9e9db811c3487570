//! The `smoke` step (the quickstart's first): the cluster's status, then rows written and read
//! back at QUORUM and compared, on the scenario's local cluster. No result file: its figures
//! are the step's outcome, and a row read back wrong fails it.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::cluster::Cluster;
use crate::cluster::smoke::SmokeReport;
use crate::scenario::error::refuse;
use crate::scenario::event::Event;
use crate::scenario::{Context, ScenarioError};

fn default_rows() -> u32 {
    300
}

/// A smoke check: how many rows.
#[derive(Debug, Clone, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SmokeStep {
    /// Rows written and read back.
    #[arg(long, default_value_t = default_rows())]
    #[serde(default = "default_rows")]
    pub rows: u32,
    /// The local cluster (set by the scenario, not a key).
    #[arg(skip)]
    #[serde(skip)]
    pub cluster: Option<String>,
}

impl SmokeStep {
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.rows == 0 {
            refuse!("rows: write at least 1 row");
        }
        Ok(())
    }
}

pub fn run(a: &SmokeStep, ctx: &Context) -> Result<SmokeReport, ScenarioError> {
    a.validate()?;
    let Some(name) = &a.cluster else {
        refuse!("a smoke step checks the scenario's local cluster (`cluster:`); this one has none");
    };
    let c = Cluster::open(&ctx.clusters, name)?;
    let rows = c.status()?;
    ctx.emit(Event::ClusterStatus {
        cluster: &c,
        nodes: &rows,
    });
    let r = crate::cluster::smoke::write_read_check(&c, a.rows)?;
    ctx.emit(Event::Smoke(&r));
    if r.mismatches > 0 {
        return Err(ScenarioError::RunEnded(format!(
            "smoke check: {} of {} rows read back wrong",
            r.mismatches, r.rows
        )));
    }
    Ok(r)
}
