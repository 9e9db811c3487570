//! `cqlbench cost` and `cqlbench plan` (placeholders until the cost model lands).

/// Arguments of `cqlbench cost`.
#[derive(Debug, clap::Args)]
pub struct CostArgs {}

/// Arguments of `cqlbench plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {}

pub fn run_cost(_args: CostArgs) -> anyhow::Result<()> {
    anyhow::bail!("cost is not available in this build yet")
}

pub fn run_plan(_args: PlanArgs) -> anyhow::Result<()> {
    anyhow::bail!("plan is not available in this build yet")
}
