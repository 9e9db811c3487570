//! `tabular`: partitions of up to `partsize` rows (`part bigint, row bigint, value blob`);
//! row writes and reads of [`SLICE_ROWS`]-row slices (reference 000). Row `k` is row
//! `k / partitions` of partition `k mod partitions`.

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use super::Schema;
use super::builtin::{self, Builtin, ReadAt, SLICE_ROWS, Statements};
use super::check::column;
use super::data::{below, mix3};
use super::keys::Keys;
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

impl Builtin for Tabular {
    const TABLE: &'static str = "tabular";
    const KEY_COLUMNS: &'static [&'static str] = &["part", "row"];

    fn of(spec: &WorkloadSpec) -> Tabular {
        Tabular {
            spec: spec.clone(),
            rows: Keys::new(spec.key_dist, spec.rows),
            parts: Keys::new(spec.key_dist, partitions(spec)),
        }
    }

    fn rows(&self) -> (&WorkloadSpec, &Keys) {
        (&self.spec, &self.rows)
    }

    fn operations(&self) -> Vec<OpKind> {
        vec![OpKind::Write, OpKind::Range]
    }

    fn cql(&self, op: OpKind) -> Option<String> {
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

    fn create(&self) -> Schema {
        let body = "part bigint, row bigint, value blob, PRIMARY KEY (part, row)";
        builtin::schema(self, body, Vec::new())
    }

    fn key_of(&self, k: u64) -> Vec<CqlValue> {
        let parts = partitions(&self.spec);
        vec![
            CqlValue::BigInt((k % parts) as i64),
            CqlValue::BigInt((k / parts) as i64),
        ]
    }

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

    async fn send_write(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        k: u64,
    ) -> Result<QueryResult, ExecutionError> {
        let parts = partitions(&self.spec);
        let v = builtin::blob(k, self.spec.value_size);
        let values = ((k % parts) as i64, (k / parts) as i64, v);
        session.execute_unpaged(st.get(op), values).await
    }

    async fn send_read(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> Result<QueryResult, ExecutionError> {
        let ReadAt::Slice { part, start } = at else {
            unreachable!("a tabular read is a slice: {at:?}");
        };
        session
            .execute_unpaged(st.get(op), (part as i64, start as i64))
            .await
    }
}
