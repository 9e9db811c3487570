//! `stress`: cassandra-stress's default `standard1` row (a 10-byte key, `columns` blobs of
//! `value_size` bytes); writes, reads by key, and [`SLICE_ROWS`]-row reads from a token
//! (reference 001).

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use super::Schema;
use super::builtin::{self, Builtin, ReadAt, SLICE_ROWS, Statements};
use super::check::column;
use super::data::{fill, mix, mix3};
use super::keys::Keys;
use crate::spec::{OpKind, WorkloadSpec};

/// Row `k`'s key: 10 bytes, like cassandra-stress's.
fn stress_key(k: u64) -> [u8; 10] {
    let mut key = [0u8; 10];
    key[..8].copy_from_slice(&k.to_be_bytes());
    key[8..].copy_from_slice(&(mix(k) as u16).to_be_bytes());
    key
}

#[derive(Debug)]
pub struct Stress {
    spec: WorkloadSpec,
    rows: Keys,
    /// `c0`, `c1`, …
    columns: Vec<String>,
}

impl Builtin for Stress {
    const TABLE: &'static str = "standard1";
    const KEY_COLUMNS: &'static [&'static str] = &["key"];

    fn of(spec: &WorkloadSpec) -> Stress {
        Stress {
            spec: spec.clone(),
            rows: Keys::new(spec.key_dist, spec.rows),
            columns: (0..spec.columns).map(|i| format!("c{i}")).collect(),
        }
    }

    fn rows(&self) -> (&WorkloadSpec, &Keys) {
        (&self.spec, &self.rows)
    }

    fn operations(&self) -> Vec<OpKind> {
        vec![OpKind::Write, OpKind::Read, OpKind::Range]
    }

    fn cql(&self, op: OpKind) -> Option<String> {
        let (ks, t) = (&self.spec.keyspace, Self::TABLE);
        match op {
            OpKind::Write => {
                let marks = vec!["?"; self.columns.len() + 1].join(", ");
                Some(format!(
                    "INSERT INTO {ks}.{t} (key, {}) VALUES ({marks})",
                    self.columns.join(", ")
                ))
            }
            OpKind::Read => Some(format!("SELECT * FROM {ks}.{t} WHERE key = ?")),
            OpKind::Range => Some(format!(
                "SELECT * FROM {ks}.{t} WHERE token(key) >= ? LIMIT {SLICE_ROWS}"
            )),
            OpKind::Named(_) => None,
        }
    }

    fn create(&self) -> Schema {
        let cols: Vec<String> = self.columns.iter().map(|c| format!("{c} blob")).collect();
        let body = format!("key blob PRIMARY KEY, {}", cols.join(", "));
        builtin::schema(self, &body, Vec::new())
    }

    fn key_of(&self, row: u64) -> Vec<CqlValue> {
        vec![CqlValue::Blob(stress_key(row).to_vec())]
    }

    fn value_columns(&self) -> Vec<&str> {
        self.columns.iter().map(String::as_str).collect()
    }

    fn values(&self, k: u64) -> Vec<CqlValue> {
        let size = self.spec.value_size;
        builtin::blob(k, size * self.spec.columns)
            .chunks(size.max(1))
            .map(|c| CqlValue::Blob(c.to_vec()))
            .collect()
    }

    fn read_at(&self, op: OpKind, cycle: u64) -> ReadAt {
        match op {
            OpKind::Range => ReadAt::Token(mix3(cycle) as i64),
            _ => ReadAt::Row(self.rows.pick(cycle, false)),
        }
    }

    fn identify(&self, at: ReadAt, names: &[String], row: &Row) -> Option<u64> {
        let ReadAt::Token(_) = at else {
            return None;
        };
        match column(names, row, "key")? {
            CqlValue::Blob(b) if b.len() == 10 => {
                let k = u64::from_be_bytes(b[..8].try_into().ok()?);
                (k < self.spec.rows.max(1) && stress_key(k)[..] == b[..]).then_some(k)
            }
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
        let key = stress_key(k);
        let size = self.spec.value_size;
        let mut buf = vec![0u8; size * self.spec.columns];
        fill(k, &mut buf);
        let mut values: Vec<&[u8]> = Vec::with_capacity(self.spec.columns + 1);
        values.push(&key);
        values.extend(buf.chunks(size.max(1)));
        session.execute_unpaged(st.get(op), values).await
    }

    async fn send_read(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> Result<QueryResult, ExecutionError> {
        let stmt = st.get(op);
        match at {
            ReadAt::Row(k) => session.execute_unpaged(stmt, (&stress_key(k)[..],)).await,
            ReadAt::Token(t) => session.execute_unpaged(stmt, (t,)).await,
            other => unreachable!("a stress read is by key or token: {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;

    #[test]
    fn schema_uses_network_topology_and_options() {
        let mut spec = WorkloadSpec::defaults(crate::spec::WorkloadKind::Stress);
        spec.replication = crate::spec::workload::parse_replication("dc1:3,dc2:1").unwrap();
        spec.table_options = Some("compaction = {'class': 'LeveledCompactionStrategy'}".into());
        let s = Stress::new(&spec).unwrap().schema().statements();
        assert_eq!(
            s[0],
            "CREATE KEYSPACE IF NOT EXISTS cqlbench WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 1}"
        );
        assert_eq!(
            s[1],
            "CREATE TABLE IF NOT EXISTS cqlbench.standard1 (key blob PRIMARY KEY, c0 blob, c1 blob, c2 blob, c3 blob, c4 blob) WITH compaction = {'class': 'LeveledCompactionStrategy'}"
        );
        let iot =
            crate::workload::iot::Iot::new(&WorkloadSpec::defaults(crate::spec::WorkloadKind::Iot))
                .unwrap()
                .schema()
                .statements();
        assert!(
            iot[1].ends_with("WITH CLUSTERING ORDER BY (ts DESC)"),
            "{}",
            iot[1]
        );
    }

    #[test]
    fn stress_keys_are_distinct_and_stable() {
        assert_eq!(stress_key(5), stress_key(5));
        assert_ne!(stress_key(5), stress_key(6));
    }
}
