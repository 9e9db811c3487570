//! `nb-tabular2`: NoSQLBench's `cql-tabular2` row (reference 000, [`shapes`]): text partition
//! and clustering keys, eight text fields of ~865 bytes together; row writes, reads of 1 to
//! [`SLICE_ROWS`] rows of a partition. Partitions as [`tabular`](super::tabular)'s.

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use super::Schema;
use super::builtin::{self, Builtin, ReadAt, SLICE_ROWS, Statements};
use super::check::column;
use super::data::{below, mix3};
use super::keys::Keys;
use super::shapes::{self, TABULAR2_DATA};
use super::tabular::partitions;
use crate::spec::{OpKind, WorkloadSpec};

#[derive(Debug)]
pub struct NbTabular2 {
    spec: WorkloadSpec,
    rows: Keys,
    /// The partitions reads choose, by the spec's key distribution.
    parts: Keys,
}

impl Builtin for NbTabular2 {
    const TABLE: &'static str = "tabular2";
    const KEY_COLUMNS: &'static [&'static str] = &["part", "clust"];

    fn of(spec: &WorkloadSpec) -> NbTabular2 {
        NbTabular2 {
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
                "INSERT INTO {ks}.{t} (part, clust, {}) VALUES ({})",
                TABULAR2_DATA.join(", "),
                ["?"; 2 + TABULAR2_DATA.len()].join(", ")
            )),
            OpKind::Range => Some(format!("SELECT * FROM {ks}.{t} WHERE part = ? LIMIT ?")),
            _ => None,
        }
    }

    fn create(&self) -> Schema {
        let body = format!(
            "part text, clust text, {} text, PRIMARY KEY (part, clust)",
            TABULAR2_DATA.join(" text, ")
        );
        builtin::schema(self, &body, Vec::new())
    }

    fn key_of(&self, row: u64) -> Vec<CqlValue> {
        let (part, clust) = shapes::tabular2_key(row, partitions(&self.spec));
        vec![CqlValue::Text(part), CqlValue::Text(clust)]
    }

    fn value_columns(&self) -> Vec<&str> {
        TABULAR2_DATA.to_vec()
    }

    fn values(&self, k: u64) -> Vec<CqlValue> {
        shapes::tabular2_fields(k)
            .into_iter()
            .map(CqlValue::Text)
            .collect()
    }

    /// cql-tabular2 reads 1 to 10 rows of a partition.
    fn read_at(&self, _op: OpKind, cycle: u64) -> ReadAt {
        ReadAt::Partition {
            part: self.parts.pick(cycle, false),
            limit: 1 + below(mix3(cycle), SLICE_ROWS as u64) as i32,
            h: 0,
        }
    }

    fn identify(&self, at: ReadAt, names: &[String], row: &Row) -> Option<u64> {
        let ReadAt::Partition { part, .. } = at else {
            return None;
        };
        match column(names, row, "clust")? {
            CqlValue::Text(c) => Some(part + c.parse::<u64>().ok()? * partitions(&self.spec)),
            _ => None,
        }
    }

    fn must_return(&self, at: ReadAt) -> Option<u64> {
        match at {
            ReadAt::Partition { part, .. } => Some(part),
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
        let [d0, d1, d2, d3, d4, d5, d6, d7] = shapes::tabular2_fields(k);
        let (part, clust) = shapes::tabular2_key(k, self.parts.n());
        let values = (part, clust, d0, d1, d2, d3, d4, d5, d6, d7);
        session.execute_unpaged(st.get(op), values).await
    }

    async fn send_read(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> Result<QueryResult, ExecutionError> {
        let ReadAt::Partition { part, limit, .. } = at else {
            unreachable!("a tabular2 read is a partition's: {at:?}");
        };
        session
            .execute_unpaged(st.get(op), (part.to_string(), limit))
            .await
    }
}
