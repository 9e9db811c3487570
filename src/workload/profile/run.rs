//! Which rows a profile's operations touch, as a pure function of the cycle like the
//! built-ins' (the statements and their values are [`super::workload`]'s):
//!
//! - `insert` (rampup): cycle `c` writes chunk `c mod K` of partition `c / K`
//!   ([`Profile::rampup_chunks`]), so all cycles together write every row. Main phase: touches
//!   `insert.partitions` partitions (the first drawn by the key distribution), and of each
//!   the rows `insert.select` chooses (at least one); rows go in batches of `batchtype` (a
//!   counter table's in counter batches) of at most [`BATCH_BYTES`] each, one after another.
//! - A query: partition drawn by the key distribution, a row of it; `samerow` binds every
//!   marker from that row, `multirow` each marker from a row of its own in the partition.

use super::cql::Verb;
use super::dist::{Dist, Ratio};
use super::{DEFAULT_PARTITIONS, DEFAULT_SELECT, Fields, Profile};
use crate::spec::{OpKind, WorkloadSpec};
use crate::workload::data::{below, mix, mix2, mix3};
use crate::workload::keys::Keys;

/// A batch holds rows up to about this many bytes of values (Cassandra warns above 5 KiB).
pub const BATCH_BYTES: usize = 4096;

/// The operation name of a profile's writes.
pub const INSERT: &str = "insert";

/// The kind of a profile operation: `insert`, or a query (writing unless it is a SELECT).
pub fn op_kind(profile: &Profile, name: &str) -> OpKind {
    let writes = name == INSERT
        || profile
            .queries
            .get(name)
            .is_some_and(|q| q.verb != Verb::Select);
    OpKind::profile_op(name, writes)
}

/// `CREATE TABLE|INDEX|…` made idempotent: `IF NOT EXISTS` after the object's keyword.
pub fn if_not_exists(stmt: &str) -> String {
    let t = stmt.trim().trim_end_matches(';');
    let lower = t.to_ascii_lowercase();
    if lower.contains("if not exists") || !lower.starts_with("create") {
        return t.to_string();
    }
    for object in ["table", "index", "type", "materialized view"] {
        if let Some(i) = lower.find(object) {
            let end = i + object.len();
            return format!("{} IF NOT EXISTS{}", &t[..end], &t[end..]);
        }
    }
    t.to_string()
}

/// Which rows a cycle of a profile run writes or reads: a pure function of the profile, the
/// run's key space and distribution, and the cycle (so `verify` maps a ledger's cycles to
/// rows without a session).
#[derive(Debug)]
pub struct RowPlan {
    partitions_keys: Keys,
    partitions: Dist,
    select: Ratio,
}

impl RowPlan {
    pub fn new(profile: &Profile, spec: &WorkloadSpec) -> RowPlan {
        let f = &profile.file.insert;
        RowPlan {
            partitions_keys: Keys::new(spec.key_dist, spec.rows),
            partitions: f
                .partitions
                .clone()
                .unwrap_or_else(|| DEFAULT_PARTITIONS.parse().expect("valid")),
            select: f
                .select
                .clone()
                .unwrap_or_else(|| DEFAULT_SELECT.parse().expect("valid")),
        }
    }

    /// The rows an insert of `cycle` writes, as (partition, row) pairs.
    pub fn insert_rows(&self, profile: &Profile, cycle: u64, rampup: bool) -> Vec<(u64, u64)> {
        let rows_of = |p: u64| profile.rows_in(p).iter().product::<u64>().max(1);
        if rampup {
            let (p, rows) = profile.rampup_rows(cycle, self.partitions_keys.n());
            return rows.map(|r| (p, r)).collect();
        }
        let n = self.partitions.sample(cycle, cycle).max(1) as u64;
        let share = self.select.sample(mix3(cycle));
        let mut out = Vec::new();
        for j in 0..n {
            let p = self
                .partitions_keys
                .pick(if j == 0 { cycle } else { mix(cycle ^ j) }, true);
            let total = rows_of(p);
            let before = out.len();
            for r in 0..total {
                if (below(mix(cycle ^ mix(p ^ r)), 1 << 20) as f64) < share * (1 << 20) as f64 {
                    out.push((p, r));
                }
            }
            if out.len() == before {
                out.push((p, below(mix2(cycle ^ p), total)));
            }
        }
        out
    }

    /// A query's partition at `cycle`, and its row when every marker binds from one row.
    pub fn query_row(&self, profile: &Profile, fields: Fields, cycle: u64) -> (u64, Option<u64>) {
        let p = self.partitions_keys.pick(cycle, false);
        let total = profile.rows_in(p).iter().product::<u64>().max(1);
        match fields {
            Fields::Samerow => (p, Some(below(mix3(cycle), total))),
            Fields::Multirow => (p, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_become_idempotent() {
        assert_eq!(
            if_not_exists("CREATE TABLE t (k int PRIMARY KEY);"),
            "CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY)"
        );
        assert_eq!(
            if_not_exists("create index users_by_email ON users (email)"),
            "create index IF NOT EXISTS users_by_email ON users (email)"
        );
        assert_eq!(
            if_not_exists("CREATE INDEX IF NOT EXISTS i ON t (v)"),
            "CREATE INDEX IF NOT EXISTS i ON t (v)"
        );
    }
}
