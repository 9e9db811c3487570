//! `tabular`: partitions of up to `partsize` rows (`part bigint, row bigint, value blob`);
//! row writes and reads of [`SLICE_ROWS`]-row slices (reference 000). Row `k` is row
//! `k / partitions` of partition `k mod partitions`.

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use super::builtin::{self, Builtin, ReadAt, SLICE_ROWS, Statements};
use super::check::{RowId, column};
use super::data::{below, mix3};
use super::keys::Keys;
use super::{OpError, Prepared, Preparer, Schema, Workload, WorkloadError};
use crate::spec::{OpKind, WorkloadSpec};

/// The partitions of the key space: `partsize` rows each.
pub fn partitions(spec: &WorkloadSpec) -> u64 {
    spec.rows.max(1).div_ceil(spec.partsize.max(1))
}

#[derive(Debug)]
pub struct Tabular {
    spec: WorkloadSpec,
    rows: Keys,
    /// The partitions reads choose, by the spec's key distribution.
    parts: Keys,
}

impl Workload for Tabular {
    type Statements = Statements;

    fn new(spec: &WorkloadSpec) -> Result<Tabular, WorkloadError> {
        Ok(Tabular {
            spec: spec.clone(),
            rows: Keys::new(spec.key_dist, spec.rows),
            parts: Keys::new(spec.key_dist, partitions(spec)),
        })
    }

    fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    fn offers(&self) -> Vec<OpKind> {
        vec![OpKind::Write, OpKind::Range]
    }

    fn statement(&self, op: OpKind) -> Option<String> {
        let (ks, t) = (&self.spec.keyspace, Self::TABLE);
        match op {
            OpKind::Write => Some(format!(
                "INSERT INTO {ks}.{t} (part, row, value) VALUES (?, ?, ?)"
            )),
            OpKind::Range => Some(format!(
                "SELECT row, value FROM {ks}.{t} WHERE part = ? AND row >= ? LIMIT {SLICE_ROWS}"
            )),
            _ => None,
        }
    }

    fn schema(&self) -> Schema {
        let body = "part bigint, row bigint, value blob, PRIMARY KEY (part, row)";
        builtin::schema(self, body, Vec::new())
    }

    async fn prepare(
        &self,
        session: &Session,
        how: &Preparer,
    ) -> Result<Statements, WorkloadError> {
        builtin::prepare(self, session, how).await
    }

    async fn execute(
        p: &Prepared<Self>,
        session: &Session,
        op: OpKind,
        cycle: u64,
        rampup: bool,
    ) -> Result<(), OpError> {
        if let Some(v) = p.checking(op, rampup) {
            // Boxed: the checked read's state stays out of the plain path's.
            return Box::pin(builtin::read_verified(p, session, v, op, cycle)).await;
        }
        let w = &p.workload;
        let stmt = p.statements.get(op);
        if op == OpKind::Write {
            let k = builtin::row_of(&w.rows, op, cycle, rampup);
            let parts = partitions(&w.spec);
            let v = builtin::blob(k, w.spec.value_size);
            session
                .execute_unpaged(stmt, ((k % parts) as i64, (k / parts) as i64, v))
                .await?;
        } else {
            let (part, start) = match w.read_at(op, cycle) {
                ReadAt::Slice { part, start } => (part as i64, start as i64),
                other => unreachable!("a tabular read is a slice: {other:?}"),
            };
            session.execute_unpaged(stmt, (part, start)).await?;
        }
        Ok(())
    }

    fn written_rows(&self, op: OpKind, cycle: u64, sequential: bool, out: &mut Vec<RowId>) {
        builtin::written_row(&self.rows, op, cycle, sequential, out);
    }

    fn image(&self, row: RowId) -> Vec<(&str, CqlValue)> {
        builtin::image(self, row)
    }

    fn read_back(&self) -> String {
        builtin::select(self)
    }

    fn key(&self, row: RowId) -> Vec<CqlValue> {
        let parts = partitions(&self.spec);
        vec![
            CqlValue::BigInt((row % parts) as i64),
            CqlValue::BigInt((row / parts) as i64),
        ]
    }
}

impl Builtin for Tabular {
    const TABLE: &'static str = "tabular";
    const KEY_COLUMNS: &'static [&'static str] = &["part", "row"];

    fn value_columns(&self) -> Vec<&str> {
        vec!["value"]
    }

    fn values(&self, k: u64) -> Vec<CqlValue> {
        vec![CqlValue::Blob(builtin::blob(k, self.spec.value_size))]
    }

    fn read_at(&self, _op: OpKind, cycle: u64) -> ReadAt {
        ReadAt::Slice {
            part: self.parts.pick(cycle, false),
            start: below(mix3(cycle), self.spec.partsize.max(1)),
        }
    }

    fn identify(&self, at: ReadAt, names: &[String], row: &Row) -> Option<u64> {
        let ReadAt::Slice { part, .. } = at else {
            return None;
        };
        match column(names, row, "row")? {
            CqlValue::BigInt(r) if *r >= 0 => Some(part + *r as u64 * partitions(&self.spec)),
            _ => None,
        }
    }

    fn must_return(&self, at: ReadAt) -> Option<u64> {
        match at {
            ReadAt::Slice { part, start } => Some(part + start * partitions(&self.spec)),
            _ => None,
        }
    }

    async fn send_read(
        p: &Prepared<Self>,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> Result<QueryResult, ExecutionError> {
        let ReadAt::Slice { part, start } = at else {
            unreachable!("a tabular read is a slice: {at:?}");
        };
        session
            .execute_unpaged(p.statements.get(op), (part as i64, start as i64))
            .await
    }
}
