//! `cqlbench cluster …`

#[derive(Debug, clap::Subcommand)]
pub enum ClusterCommand {}

pub fn run(cmd: ClusterCommand) -> anyhow::Result<()> {
    match cmd {}
}
