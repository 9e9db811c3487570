//! `cqlbench quickstart`

#[derive(Debug, clap::Args)]
pub struct QuickstartArgs {}

pub fn run(_args: QuickstartArgs) -> anyhow::Result<()> {
    anyhow::bail!("quickstart is not available in this build yet")
}
