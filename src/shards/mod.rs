//! One run split over several loader processes (shards): launching them and merging their
//! results, HDR logs and ledgers into one run.
//!
//! - [`launch`]: `--loaders N`, the shard processes of one run started and waited for.
//! - [`input`]: the shards as read, checked to be every shard of one run.
//! - [`merge`]: intervals, histograms and phases merged into one run result.
//! - [`behind`]: each shard's own figures, and the shards that fell behind.
//! - [`exchange`]: `capacity --shard I/N`, one search run by N machines through the cluster.
//! - [`write`]: the merged result, its HDR log and the shards' ledgers written out.

pub mod behind;
pub mod exchange;
pub mod input;
pub mod launch;
pub mod merge;
mod summary;
pub mod write;

use std::path::{Path, PathBuf};

use crate::error::Invalid;
use crate::result::RunResult;
use input::ShardInput;
use merge::merge;
use write::write;

/// The files a result at `json` stands for: the result, its HDR log, its ledger and its
/// per-interval CSV.
fn files_of(json: &Path) -> [PathBuf; 4] {
    [
        json.to_path_buf(),
        json.with_extension("hlog"),
        json.with_extension("ledger"),
        crate::result::intervals_csv::path_for(json),
    ]
}

/// Reads, merges and writes; returns the merged result. Refused before anything is written:
/// an `out` that is a directory or lies under a file, and an `out` whose result, HDR log,
/// ledger or CSV would be one of the shards' own files.
pub fn merge_files(shards: &[PathBuf], out: &Path) -> Result<RunResult, Invalid> {
    crate::fsutil::check_out_path(out)?;
    for shard in shards {
        for theirs in files_of(shard) {
            if let Some(ours) = files_of(out)
                .into_iter()
                .find(|o| crate::fsutil::same_file(o, &theirs))
            {
                return Err(crate::invalid!(
                    "--out {}: its {} would overwrite {}, a file of shard {}: give another path",
                    out.display(),
                    ours.display(),
                    theirs.display(),
                    shard.display()
                ));
            }
        }
    }
    // Every input a shard's result, before any HDR log is read.
    let mut results = Vec::new();
    for p in shards {
        let r = RunResult::read(p).map_err(|e| Invalid(e.to_string()))?;
        if r.shard.is_none() {
            return Err(crate::invalid!(
                "{}: not a shard's result (it was not run with --shard or --loaders)",
                p.display()
            ));
        }
        results.push((p, r));
    }
    let mut inputs = results
        .into_iter()
        .map(|(p, r)| ShardInput::with_result(p, r))
        .collect::<Result<Vec<_>, _>>()?;
    let (merged, log) = merge(&mut inputs)?;
    write(&merged, &log, &inputs, out)?;
    Ok(merged)
}
