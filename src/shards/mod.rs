//! One run split over several loader processes (shards): merging their results, HDR logs and
//! ledgers into one run.
//!
//! - [`input`]: the shards as read, checked to be every shard of one run.
//! - [`merge`]: intervals, histograms and phases merged into one run result.
//! - [`behind`]: each shard's own figures, and the shards that fell behind.
//! - [`write`]: the merged result, its HDR log and the shards' ledgers written out.

pub mod behind;
pub mod input;
pub mod merge;
mod summary;
pub mod write;

use std::path::PathBuf;

use input::ShardInput;
use merge::merge;
use write::write;

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
