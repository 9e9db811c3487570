//! `iot`: a time series per device (`device bigint, ts bigint, value double, payload blob`,
//! newest first); writes of readings, reads of a device's latest `partsize` (reference 002).
//! Row `k` is reading `k / devices` of device `k mod devices`.

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use super::Schema;
use super::builtin::{self, Builtin, ReadAt, Statements};
use super::check::column;
use super::data::{mix, mix3};
use super::keys::Keys;
use crate::spec::{OpKind, WorkloadSpec};

/// Devices of the key space (of `rows` readings): one per 1,000 readings.
pub fn devices(rows: u64) -> u64 {
    (rows / 1000).max(1)
}

/// Row `k`'s reading.
fn reading(k: u64) -> f64 {
    (mix(k) % 10_000) as f64 / 100.0
}

#[derive(Debug)]
pub struct Iot {
    spec: WorkloadSpec,
    rows: Keys,
    /// The devices reads choose, by the spec's key distribution.
    parts: Keys,
}

impl Iot {
    fn devices(&self) -> u64 {
        devices(self.spec.rows.max(1))
    }
}

impl Builtin for Iot {
    const TABLE: &'static str = "iot";
    const KEY_COLUMNS: &'static [&'static str] = &["device", "ts"];

    fn of(spec: &WorkloadSpec) -> Iot {
        Iot {
            spec: spec.clone(),
            rows: Keys::new(spec.key_dist, spec.rows),
            parts: Keys::new(spec.key_dist, devices(spec.rows.max(1))),
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
                "INSERT INTO {ks}.{t} (device, ts, value, payload) VALUES (?, ?, ?, ?)"
            )),
            OpKind::Range => Some(format!(
                "SELECT ts, value FROM {ks}.{t} WHERE device = ? LIMIT ?"
            )),
            _ => None,
        }
    }

    fn create(&self) -> Schema {
        let body = "device bigint, ts bigint, value double, payload blob, PRIMARY KEY (device, ts)";
        builtin::schema(self, body, vec!["CLUSTERING ORDER BY (ts DESC)".into()])
    }

    fn key_of(&self, k: u64) -> Vec<CqlValue> {
        let devices = self.devices();
        vec![
            CqlValue::BigInt((k % devices) as i64),
            CqlValue::BigInt((k / devices) as i64),
        ]
    }

    fn value_columns(&self) -> Vec<&str> {
        vec!["value", "payload"]
    }

    fn values(&self, k: u64) -> Vec<CqlValue> {
        vec![
            CqlValue::Double(reading(k)),
            CqlValue::Blob(builtin::blob(k, self.spec.value_size)),
        ]
    }

    fn read_at(&self, _op: OpKind, cycle: u64) -> ReadAt {
        ReadAt::Partition {
            part: self.parts.pick(cycle, false),
            limit: self.spec.partsize.max(1) as i32,
            h: mix3(cycle),
        }
    }

    fn identify(&self, at: ReadAt, names: &[String], row: &Row) -> Option<u64> {
        let ReadAt::Partition { part, .. } = at else {
            return None;
        };
        match column(names, row, "ts")? {
            CqlValue::BigInt(t) if *t >= 0 => Some(part + *t as u64 * self.devices()),
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
        let devices = self.devices();
        let v = builtin::blob(k, self.spec.value_size);
        let values = ((k % devices) as i64, (k / devices) as i64, reading(k), v);
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
            unreachable!("an iot read is a partition's: {at:?}");
        };
        session
            .execute_unpaged(st.get(op), (part as i64, limit))
            .await
    }
}
