//! `cqlbench probe` (placeholder until the probe lands).

/// Arguments of `cqlbench probe`.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {}

pub fn run(_args: ProbeArgs) -> anyhow::Result<()> {
    anyhow::bail!("probe is not available in this build yet")
}
