//! The shards as read, and the check that they are every shard of one run, each once.

use std::path::{Path, PathBuf};

use crate::error::Invalid;
use crate::result::RunResult;
use crate::result::hlog::LogEntry;

/// One shard as read: its result and its HDR interval log.
#[derive(Debug, Clone)]
pub struct ShardInput {
    pub path: PathBuf,
    pub result: RunResult,
    pub hlog: Vec<LogEntry>,
}

impl ShardInput {
    /// Reads a shard's result and the HDR log beside it (`NAME.hlog`).
    pub fn read(path: &Path) -> Result<ShardInput, Invalid> {
        let result = RunResult::read(path).map_err(|e| crate::invalid!("{e}"))?;
        Self::with_result(path, result)
    }

    /// A shard whose result is already read: only its HDR log is read.
    pub fn with_result(path: &Path, result: RunResult) -> Result<ShardInput, Invalid> {
        let hlog_path = path.with_extension("hlog");
        let hlog = crate::result::hlog::read(&hlog_path).map_err(|e| {
            crate::invalid!(
                "{}: {e} (merging needs each shard's HDR log beside its result)",
                hlog_path.display()
            )
        })?;
        Ok(ShardInput {
            path: path.to_path_buf(),
            result,
            hlog,
        })
    }
}

/// Checks that `shards` are every shard of one run, each once; returns them in index order.
pub fn check(shards: &mut [ShardInput]) -> Result<(), Invalid> {
    let Some(first) = shards.first() else {
        return Err(crate::invalid!("no shard results to merge"));
    };
    let Some(of) = first.result.shard.clone() else {
        return Err(crate::invalid!(
            "{}: not a shard's result (it was not run with --shard or --loaders)",
            first.path.display()
        ));
    };
    for s in shards.iter() {
        let Some(sh) = &s.result.shard else {
            return Err(crate::invalid!(
                "{}: not a shard's result (it was not run with --shard or --loaders)",
                s.path.display()
            ));
        };
        if sh.run_id != of.run_id || sh.count != of.count {
            return Err(crate::invalid!(
                "{}: shard {}/{} of run {}, not of run {} ({} shards) like {}",
                s.path.display(),
                sh.index,
                sh.count,
                sh.run_id,
                of.run_id,
                of.count,
                first.path.display()
            ));
        }
        if s.result.workload != first.result.workload {
            return Err(crate::invalid!(
                "{}: ran another workload than {}: shards of one run run the same one",
                s.path.display(),
                first.path.display()
            ));
        }
    }
    shards.sort_by_key(|s| s.result.shard.as_ref().map_or(0, |s| s.index));
    for w in shards.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.result.shard.as_ref().map(|s| s.index) == b.result.shard.as_ref().map(|s| s.index) {
            return Err(crate::invalid!(
                "shard {}/{} of run {} given twice: {} and {}",
                a.result.shard.as_ref().map_or(0, |s| s.index),
                of.count,
                of.run_id,
                a.path.display(),
                b.path.display()
            ));
        }
    }
    let have: Vec<u64> = shards
        .iter()
        .filter_map(|s| s.result.shard.as_ref().map(|s| s.index))
        .collect();
    let missing: Vec<String> = (0..of.count)
        .filter(|i| !have.contains(i))
        .map(|i| format!("{i}/{}", of.count))
        .collect();
    if !missing.is_empty() {
        return Err(crate::invalid!(
            "run {}: shard{} {} missing (have {} of {})",
            of.run_id,
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            shards.len(),
            of.count
        ));
    }
    Ok(())
}
