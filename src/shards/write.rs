//! The merged run written out: its result, its HDR interval log, its per-interval CSV and the
//! union of the shards' ledgers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::input::ShardInput;
use crate::error::Invalid;
use crate::result::RunResult;
use crate::result::hlog::LogEntry;

/// Writes the merged result, its HDR log and, when every shard left one, the union of their
/// acknowledged-write ledgers (so `verify` reads the merged run), next to `out`.
pub fn write(
    merged: &RunResult,
    log: &[LogEntry],
    shards: &[ShardInput],
    out: &Path,
) -> Result<(), Invalid> {
    let hlog_path = out.with_extension("hlog");
    let io = |p: &Path, e: std::io::Error| crate::invalid!("writing {}: {e}", p.display());
    let mut hlog =
        crate::result::hlog::IntervalLog::create(&hlog_path, merged.started_unix_s as f64)
            .map_err(|e| io(&hlog_path, e))?;
    for (tag, start, len, h) in log {
        hlog.append(tag, *start, *len, h)
            .map_err(|e| io(&hlog_path, e))?;
    }
    hlog.flush().map_err(|e| io(&hlog_path, e))?;
    let ledgers: Vec<PathBuf> = shards
        .iter()
        .map(|s| s.path.with_extension("ledger"))
        .collect();
    let mut merged = merged.clone();
    merged.ledger_id = None;
    if ledgers.iter().all(|p| p.exists()) {
        let id = crate::result::ledger::new_id(&merged.env);
        merge_ledgers(&ledgers, &out.with_extension("ledger"), &id)?;
        merged.ledger_id = Some(id);
    }
    let csv_path = crate::result::intervals_csv::path_for(out);
    crate::result::intervals_csv::write(&csv_path, &merged).map_err(|e| io(&csv_path, e))?;
    merged.write(out).map_err(|e| io(out, e))?;
    Ok(())
}

/// The union of shards' ledgers, one frame per phase, mapping and outcome.
pub fn merge_ledgers(paths: &[PathBuf], out: &Path, id: &str) -> Result<(), Invalid> {
    use crate::result::ledger::{Ledger, LedgerWriter};
    use crate::stats::writes::Writes;
    let mut union: BTreeMap<(String, crate::result::ledger::Mapping), Writes> = BTreeMap::new();
    for p in paths {
        let l = Ledger::read(p).map_err(|e| crate::invalid!("{}: {e}", p.display()))?;
        for (tag, bitmap) in &l.bitmaps {
            let w = union.entry((tag.phase.clone(), tag.mapping)).or_default();
            *w.by.entry((tag.op, tag.outcome)).or_default() |= bitmap;
        }
    }
    let io = |e: std::io::Error| crate::invalid!("writing {}: {e}", out.display());
    let mut w = LedgerWriter::create(out, id).map_err(io)?;
    for ((phase, mapping), writes) in &union {
        w.append(phase, *mapping, writes).map_err(io)?;
    }
    Ok(())
}
