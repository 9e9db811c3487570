//! Running a profile: its schema, its insert and queries prepared, and for a cycle the
//! operation's values (a pure function of the cycle, like the built-ins').
//!
//! - `insert` (rampup): cycle `c` writes chunk `c mod K` of partition `c / K`
//!   ([`Profile::rampup_chunks`]), so all cycles together write every row. Main phase: touches
//!   `insert.partitions` partitions (the first drawn by the key distribution), and of each
//!   the rows `insert.select` chooses (at least one); rows go in batches of `batchtype` (a
//!   counter table's in counter batches) of at most [`BATCH_BYTES`] each, one after another.
//! - A query: partition drawn by the key distribution, a row of it; `samerow` binds every
//!   marker from that row, `multirow` each marker from a row of its own in the partition.

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::statement::batch::{Batch, BatchType as DriverBatch};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;

use super::check::{RowIndex, check_rows, row_id};
use super::cql::{CqlType, Verb};
use super::dist::{Dist, Ratio};
use super::{BatchType, DEFAULT_PARTITIONS, DEFAULT_SELECT, Fields, Profile, values};
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

/// A profile ready to run on a session.
#[derive(Debug)]
pub struct ProfileOps {
    pub profile: Profile,
    /// Which rows a cycle writes or reads.
    pub plan: RowPlan,
    insert: PreparedStatement,
    counter: bool,
    batch: BatchType,
    /// The insert's markers as column indices (table order; a counter update's deltas,
    /// then its key).
    insert_columns: Vec<usize>,
    /// Each query's statement and its markers as column indices.
    queries: Vec<(OpKind, PreparedStatement, Vec<usize>, Fields)>,
    /// `--verify`: the generator's rows by key, for reads to look theirs up.
    index: Option<RowIndex>,
}

impl ProfileOps {
    /// The statements, prepared (the schema exists and the session uses the keyspace).
    pub async fn prepare(
        session: &Session,
        spec: &WorkloadSpec,
        profile: Profile,
        configure: impl Fn(&mut PreparedStatement, bool),
    ) -> Result<ProfileOps, (String, ExecutionErrorText)> {
        let t = &profile.table;
        let keys: Vec<&String> = t.partition_key.iter().chain(&t.clustering).collect();
        let values: Vec<&String> = t
            .columns
            .iter()
            .map(|c| &c.name)
            .filter(|c| !t.is_key(c))
            .collect();
        let counter = t.columns.iter().any(|c| c.ty == CqlType::Counter);
        let insert_cql = if counter {
            format!(
                "UPDATE {} SET {} WHERE {}",
                t.name,
                values
                    .iter()
                    .map(|c| format!("\"{c}\" = \"{c}\" + ?"))
                    .collect::<Vec<_>>()
                    .join(", "),
                keys.iter()
                    .map(|k| format!("\"{k}\" = ?"))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            )
        } else {
            let all: Vec<String> = t
                .columns
                .iter()
                .map(|c| format!("\"{}\"", c.name))
                .collect();
            format!(
                "INSERT INTO {} ({}) VALUES ({})",
                t.name,
                all.join(", "),
                vec!["?"; all.len()].join(", ")
            )
        };
        let prep = |cql: String| async move {
            session
                .prepare(cql.clone())
                .await
                .map_err(|e| (cql, ExecutionErrorText(e.to_string())))
        };
        let mut insert = prep(insert_cql).await?;
        configure(&mut insert, true);
        let mut queries = Vec::new();
        for (name, q) in &profile.queries {
            let kind = op_kind(&profile, name);
            if !spec.ratio.0.contains_key(&kind) {
                continue;
            }
            let mut p = prep(profile.file.queries[name].cql.clone()).await?;
            configure(&mut p, kind.writes());
            let fields = profile.file.queries[name].fields.unwrap_or(Fields::Samerow);
            let binds = q.binds.iter().map(|b| profile.index_of(b)).collect();
            queries.push((kind, p, binds, fields));
        }
        let insert_columns = if counter {
            let deltas = values.iter().map(|c| profile.index_of(c));
            let keys = keys.iter().map(|k| profile.index_of(k));
            deltas.chain(keys).collect()
        } else {
            (0..profile.columns.len()).collect()
        };
        let f = &profile.file.insert;
        let index = spec
            .verify_reads
            .then(|| RowIndex::new(&profile, spec.rows.max(1)));
        Ok(ProfileOps {
            index,
            insert_columns,
            plan: RowPlan::new(&profile, spec),
            insert,
            counter,
            batch: f.batchtype.unwrap_or(BatchType::Logged),
            queries,
            profile,
        })
    }

    /// The values of the insert statement for row `r` of partition `p`, and their bytes.
    fn insert_values(&self, p: u64, r: u64) -> (Vec<CqlValue>, usize) {
        let v = self.profile.values(p, r, &self.insert_columns);
        let bytes = v.iter().map(values::wire_bytes).sum();
        (v, bytes)
    }

    /// The rows an insert of `cycle` writes, as (partition, row) pairs.
    pub fn insert_rows(&self, cycle: u64, rampup: bool) -> Vec<(u64, u64)> {
        self.plan.insert_rows(&self.profile, cycle, rampup)
    }

    pub async fn execute(
        &self,
        session: &Session,
        op: OpKind,
        cycle: u64,
        rampup: bool,
    ) -> Result<(), ExecutionError> {
        if op.name() == INSERT || rampup {
            return self.insert(session, cycle, rampup).await;
        }
        let (i, _, _, bound) = self.query_binds(op, cycle);
        session.execute_unpaged(&self.queries[i].1, bound).await?;
        Ok(())
    }

    /// Query `op` at `cycle`: its index in `queries`, its partition, the row it binds
    /// (samerow; None for multirow) and the values bound.
    fn query_binds(&self, op: OpKind, cycle: u64) -> (usize, u64, Option<u64>, Vec<CqlValue>) {
        let i = self
            .queries
            .iter()
            .position(|(k, ..)| *k == op)
            .expect("a prepared statement for every operation in the mix");
        let (_, _, binds, fields) = &self.queries[i];
        let (p, r) = self.plan.query_row(&self.profile, *fields, cycle);
        let total = self.profile.rows_in(p).iter().product::<u64>().max(1);
        match (fields, r) {
            (Fields::Samerow, Some(r)) => (i, p, Some(r), self.profile.values(p, r, binds)),
            _ => {
                let bound = binds
                    .iter()
                    .enumerate()
                    .flat_map(|(i, &c)| {
                        let r = below(mix(cycle ^ (i as u64 + 1)), total);
                        self.profile.values(p, r, &[c])
                    })
                    .collect();
                (i, p, None, bound)
            }
        }
    }

    /// The row ids (`check::row_id`) an insert of `cycle` writes; none for queries.
    pub fn written_rows(&self, op: OpKind, cycle: u64, rampup: bool) -> Vec<u64> {
        if !rampup && op.name() != INSERT {
            return Vec::new();
        }
        self.insert_rows(cycle, rampup)
            .into_iter()
            .map(|(p, r)| row_id(p, r))
            .collect()
    }

    /// Runs read `op` of `cycle` and compares what it returned with the generator
    /// (`--verify`; `known` tells the rows known written).
    pub async fn read_checked(
        &self,
        session: &Session,
        op: OpKind,
        cycle: u64,
        known: &crate::workload::check::ReadVerifier,
    ) -> Result<crate::workload::check::Verdict, ExecutionError> {
        use crate::workload::check;
        let (i, p, r, bound) = self.query_binds(op, cycle);
        let (_, stmt, _, fields) = &self.queries[i];
        // Whether the bound row is known written, as of sending the read.
        let known_before = r
            .filter(|&r| known.knows(row_id(p, r)))
            .map(|r| row_id(p, r));
        let result = session.execute_unpaged(stmt, bound).await?;
        let (Some(index), Some(q)) = (&self.index, self.profile.queries.get(op.name())) else {
            return Ok(check::Verdict::Unchecked);
        };
        Ok(match crate::workload::returned(result) {
            Ok((names, rows)) => check_rows(
                &self.profile,
                index,
                op.name(),
                q,
                *fields,
                p,
                r,
                &names,
                &rows,
                &|id| known_before == Some(id),
            ),
            Err(e) => check::mismatch(op.name(), format!("{p}/?"), "(result)", "rows".into(), e),
        })
    }

    async fn insert(
        &self,
        session: &Session,
        cycle: u64,
        rampup: bool,
    ) -> Result<(), ExecutionError> {
        let rows = self.insert_rows(cycle, rampup);
        if rows.is_empty() {
            // A rampup chunk past the end of a narrower partition.
            return Ok(());
        }
        if rows.len() == 1 {
            let (v, _) = self.insert_values(rows[0].0, rows[0].1);
            session.execute_unpaged(&self.insert, v).await?;
            return Ok(());
        }
        let kind = match (self.counter, self.batch) {
            (true, _) => DriverBatch::Counter,
            (false, BatchType::Logged) => DriverBatch::Logged,
            (false, BatchType::Unlogged) => DriverBatch::Unlogged,
        };
        let mut values: Vec<Vec<CqlValue>> = Vec::new();
        let mut bytes = 0;
        for (p, r) in rows {
            let (v, b) = self.insert_values(p, r);
            if !values.is_empty() && bytes + b > BATCH_BYTES {
                self.send(session, kind, std::mem::take(&mut values))
                    .await?;
                bytes = 0;
            }
            values.push(v);
            bytes += b;
        }
        self.send(session, kind, values).await
    }

    async fn send(
        &self,
        session: &Session,
        kind: DriverBatch,
        values: Vec<Vec<CqlValue>>,
    ) -> Result<(), ExecutionError> {
        if values.len() == 1 {
            session.execute_unpaged(&self.insert, &values[0]).await?;
            return Ok(());
        }
        let mut batch = Batch::new(kind);
        for _ in 0..values.len() {
            batch.append_statement(self.insert.clone());
        }
        batch.set_consistency(self.insert.get_consistency().unwrap_or_default());
        batch.set_execution_profile_handle(self.insert.get_execution_profile_handle().cloned());
        batch.set_is_idempotent(!self.counter);
        session.batch(&batch, values).await?;
        Ok(())
    }
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

/// A driver error as text (preparing fails before any operation is counted).
#[derive(Debug)]
pub struct ExecutionErrorText(pub String);

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
