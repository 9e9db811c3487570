//! `cqlbench merge SHARD.json… --out RUN.json`: the shards of one run as one result.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Every shard's result of one run (each with its HDR log, NAME.hlog, beside it).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// The merged result (its HDR log, ledger and per-interval CSV go beside it).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(a: MergeArgs) -> anyhow::Result<()> {
    let merged = crate::shards::merge_files(&a.shards, &a.out)?;
    print!("{}", crate::console::final_text(&merged));
    if let Some(m) = &merged.merged {
        for s in &m.shards {
            println!(
                "  shard {}/{}: {:.0} ops/s{}, client CPU {:.0}%, max backlog {}  ({})",
                s.index,
                m.shards.len(),
                s.ops_per_s,
                s.target_rate_per_s
                    .map(|t| format!(" of {t:.0}"))
                    .unwrap_or_default(),
                s.client_cpu_util * 100.0,
                s.max_backlog,
                s.path.display()
            );
        }
        println!(
            "merged {} shards of run {} (main phases started within {:.1} ms): {}",
            m.shards.len(),
            m.run_id,
            m.start_spread_ms,
            a.out.display()
        );
    }
    Ok(())
}
