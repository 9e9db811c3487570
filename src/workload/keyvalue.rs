//! `keyvalue`: single-row writes and reads by key (`key bigint PRIMARY KEY, value blob`), and
//! when the mix has them `delete`, `lwt` (a conditional update that keeps the row as written),
//! `batch` (a logged batch of [`BATCH_ROWS`] rows) and `counter` (an increment in
//! [`COUNTER_TABLE`]).

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::statement::batch::{Batch, BatchType};
use scylla::value::CqlValue;

use super::Schema;
use super::builtin::{self, Builtin, ReadAt, Statements};
use super::check::RowId;
use super::data::mix;
use super::keys::Keys;
use crate::spec::{OpKind, WorkloadSpec};

/// Rows a `batch` writes (a logged batch of single-row partitions).
pub const BATCH_ROWS: u64 = 5;

/// The table of the `counter` operation.
pub const COUNTER_TABLE: &str = "kv_counts";

/// The rows a `batch` of `cycle` writes (the first drawn like a write's).
pub fn batch_rows(rows: &Keys, cycle: u64) -> impl Iterator<Item = u64> + '_ {
    (0..BATCH_ROWS).map(move |j| rows.pick(if j == 0 { cycle } else { mix(cycle ^ j) }, true))
}

#[derive(Debug)]
pub struct Keyvalue {
    spec: WorkloadSpec,
    rows: Keys,
}

impl Builtin for Keyvalue {
    const TABLE: &'static str = "kv";
    const KEY_COLUMNS: &'static [&'static str] = &["key"];

    fn of(spec: &WorkloadSpec) -> Keyvalue {
        Keyvalue {
            spec: spec.clone(),
            rows: Keys::new(spec.key_dist, spec.rows),
        }
    }

    fn rows(&self) -> (&WorkloadSpec, &Keys) {
        (&self.spec, &self.rows)
    }

    fn operations(&self) -> Vec<OpKind> {
        let more = crate::spec::workload::MORE_OPS
            .iter()
            .map(|n| n.parse::<OpKind>().expect("built-in"));
        [OpKind::Write, OpKind::Read]
            .into_iter()
            .chain(more)
            .collect()
    }

    fn cql(&self, op: OpKind) -> Option<String> {
        let (ks, t) = (&self.spec.keyspace, Self::TABLE);
        Some(match op.name() {
            "write" | "batch" => format!("INSERT INTO {ks}.{t} (key, value) VALUES (?, ?)"),
            "read" => format!("SELECT value FROM {ks}.{t} WHERE key = ?"),
            "delete" => format!("DELETE FROM {ks}.{t} WHERE key = ?"),
            // A conditional update that keeps the row as written: Paxos on a live row.
            "lwt" => format!("UPDATE {ks}.{t} SET value = ? WHERE key = ? IF value = ?"),
            "counter" => format!("UPDATE {ks}.{COUNTER_TABLE} SET n = n + 1 WHERE key = ?"),
            _ => return None,
        })
    }

    fn create(&self) -> Schema {
        let mut s = builtin::schema(self, "key bigint PRIMARY KEY, value blob", Vec::new());
        if self.spec.ratio.has("counter") {
            s.tables.push(format!(
                "CREATE TABLE IF NOT EXISTS {}.{COUNTER_TABLE} (key bigint PRIMARY KEY, n counter)",
                self.spec.keyspace
            ));
        }
        s
    }

    fn key_of(&self, k: u64) -> Vec<CqlValue> {
        vec![CqlValue::BigInt(k as i64)]
    }

    fn value_columns(&self) -> Vec<&str> {
        vec!["value"]
    }

    fn values(&self, k: u64) -> Vec<CqlValue> {
        vec![CqlValue::Blob(builtin::blob(k, self.spec.value_size))]
    }

    fn read_at(&self, _op: OpKind, cycle: u64) -> ReadAt {
        ReadAt::Row(self.rows.pick(cycle, false))
    }

    async fn send_write(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        k: u64,
    ) -> Result<QueryResult, ExecutionError> {
        let v = builtin::blob(k, self.spec.value_size);
        session.execute_unpaged(st.get(op), (k as i64, v)).await
    }

    async fn send_read(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> Result<QueryResult, ExecutionError> {
        let ReadAt::Row(k) = at else {
            unreachable!("a keyvalue read is by key: {at:?}");
        };
        session.execute_unpaged(st.get(op), (k as i64,)).await
    }

    /// `delete`, `lwt`, `batch` and `counter` of `cycle`.
    async fn send_more(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        cycle: u64,
    ) -> Result<(), ExecutionError> {
        let stmt = st.get(op);
        let k = self.rows.pick(cycle, true);
        let value = |k: u64| builtin::blob(k, self.spec.value_size);
        match op.name() {
            "delete" | "counter" => {
                session.execute_unpaged(stmt, (k as i64,)).await?;
            }
            "lwt" => {
                let v = value(k);
                session.execute_unpaged(stmt, (&v, k as i64, &v)).await?;
            }
            "batch" => {
                let mut batch = Batch::new(BatchType::Logged);
                let mut values = Vec::new();
                for r in batch_rows(&self.rows, cycle) {
                    batch.append_statement(stmt.clone());
                    values.push((r as i64, value(r)));
                }
                batch.set_consistency(stmt.get_consistency().unwrap_or_default());
                batch.set_execution_profile_handle(stmt.get_execution_profile_handle().cloned());
                batch.set_is_idempotent(true);
                // The statements' history listener (the run's driver counters) counts the
                // batch's retries too.
                if let Some(l) = stmt.clone().remove_history_listener() {
                    batch.set_history_listener(l);
                }
                session.batch(&batch, values).await?;
            }
            other => unreachable!("keyvalue has no operation {other}"),
        }
        Ok(())
    }

    /// A batch's rows; an lwt only rewrites a row as it is, a delete or a counter writes none.
    fn more_written(&self, op: OpKind, cycle: u64, sequential: bool, out: &mut Vec<RowId>) {
        if op.name() == "batch" && !sequential {
            out.extend(batch_rows(&self.rows, cycle));
        }
    }
}
