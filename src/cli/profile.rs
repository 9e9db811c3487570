//! `cqlbench profile FILE`: check a cassandra-stress user profile and show what its
//! operations write and read, without touching a cluster.

use std::path::PathBuf;

use clap::Args;

use crate::workload::profile::{Profile, parse_ops};

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The profile (cassandra-stress's YAML format, unmodified).
    pub file: PathBuf,
    /// The operation mix to check against it, e.g. "ops(insert=1,simple1=9)": the same flag
    /// as `run --profile-ops`.
    #[arg(long, value_name = "MIX")]
    pub profile_ops: Option<String>,
    /// (Not this command's: the mix is --profile-ops, as on `run`.)
    #[arg(long, value_name = "MIX", hide = true)]
    pub ops: Option<String>,
}

pub fn run(a: ProfileArgs) -> anyhow::Result<()> {
    if a.ops.is_some() {
        anyhow::bail!(
            "--ops: a profile's operation mix is --profile-ops (as on `run`, where --ops is the main phase's operation count)"
        );
    }
    let profile = Profile::load(&a.file)?;
    let ops = match &a.profile_ops {
        Some(text) => {
            let ops = parse_ops(text).map_err(|e| anyhow::anyhow!("--profile-ops {e}"))?;
            profile.check_ops(&ops)?;
            Some(ops)
        }
        None => None,
    };
    print!("{}", profile.describe(ops.as_ref()));
    println!(
        "\nthe profile is valid: run it with `cqlbench run profile --profile {} --profile-ops MIX …`",
        a.file.display()
    );
    Ok(())
}
