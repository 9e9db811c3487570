//! One run split over several loader processes (shards): merging their results, HDR logs and
//! ledgers into one run.

pub mod launch;
pub mod merge;

use std::path::PathBuf;

use merge::{ShardInput, merge, write};

/// Reads, merges and writes; returns the merged result.
pub fn merge_files(
    shards: &[PathBuf],
    out: &std::path::Path,
) -> Result<crate::result::RunResult, crate::error::Invalid> {
    let mut inputs = shards
        .iter()
        .map(|p| ShardInput::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let (merged, log) = merge(&mut inputs)?;
    write(&merged, &log, &inputs, out)?;
    Ok(merged)
}
