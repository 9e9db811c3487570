//! `nb-iot`: NoSQLBench's `cql-iot` row (reference 002, [`shapes`]): (machine uuid, sensor
//! text) partitions clustered by time, newest first, a double, a station uuid and 800-1,200
//! characters of text; writes of readings, reads of a partition's latest `partsize`. Machines
//! as [`iot`](super::iot)'s devices; cql-iot's time-window compaction unless the run gives
//! its own.

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use super::builtin::{self, Builtin, ReadAt, Statements};
use super::check::{RowId, column};
use super::data::mix3;
use super::iot::devices;
use super::keys::Keys;
use super::shapes;
use super::{OpError, Prepared, Preparer, Schema, Workload, WorkloadError};
use crate::spec::{OpKind, WorkloadSpec};

#[derive(Debug)]
pub struct NbIot {
    spec: WorkloadSpec,
    rows: Keys,
    /// The machines reads choose, by the spec's key distribution.
    parts: Keys,
}

impl NbIot {
    fn machines(&self) -> u64 {
        devices(self.spec.rows.max(1))
    }
}

impl Workload for NbIot {
    type Statements = Statements;

    fn new(spec: &WorkloadSpec) -> Result<NbIot, WorkloadError> {
        Ok(NbIot {
            spec: spec.clone(),
            rows: Keys::new(spec.key_dist, spec.rows),
            parts: Keys::new(spec.key_dist, devices(spec.rows.max(1))),
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
                "INSERT INTO {ks}.{t} (machine_id, sensor_name, time, sensor_value, station_id, data) \
                 VALUES (?, ?, ?, ?, ?, ?)"
            )),
            OpKind::Range => Some(format!(
                "SELECT * FROM {ks}.{t} WHERE machine_id = ? AND sensor_name = ? LIMIT ?"
            )),
            _ => None,
        }
    }

    fn schema(&self) -> Schema {
        let body = "machine_id uuid, sensor_name text, time timestamp, \
            sensor_value double, station_id uuid, data text, \
            PRIMARY KEY ((machine_id, sensor_name), time)";
        let mut options = vec!["CLUSTERING ORDER BY (time DESC)".to_string()];
        // cql-iot's compaction, unless the run gives its own.
        if !self
            .spec
            .table_options
            .as_deref()
            .is_some_and(|o| o.to_ascii_lowercase().contains("compaction"))
        {
            options.push(
                "compaction = {'class': 'TimeWindowCompactionStrategy', \
                 'compaction_window_size': 60, 'compaction_window_unit': 'MINUTES'}"
                    .into(),
            );
        }
        builtin::schema(self, body, options)
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
            let machines = w.parts.n();
            let (machine, sensor, time) = shapes::iot_key(k, machines);
            let (value, station, data) = shapes::iot_values(k, machines);
            session
                .execute_unpaged(stmt, (machine, sensor, time, value, station, data))
                .await?;
        } else {
            let ReadAt::Partition { part, limit, h } = w.read_at(op, cycle) else {
                unreachable!("an nb-iot read is a partition's");
            };
            let (machine, sensor) = shapes::iot_partition(part, h);
            session
                .execute_unpaged(stmt, (machine, sensor, limit))
                .await?;
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
        let (machine, sensor, time) = shapes::iot_key(row, self.machines());
        vec![
            CqlValue::Uuid(machine),
            CqlValue::Text(sensor.into()),
            CqlValue::Timestamp(time),
        ]
    }
}

impl Builtin for NbIot {
    const TABLE: &'static str = "nb_iot";
    const KEY_COLUMNS: &'static [&'static str] = &["machine_id", "sensor_name", "time"];

    fn value_columns(&self) -> Vec<&str> {
        vec!["sensor_value", "station_id", "data"]
    }

    fn values(&self, k: u64) -> Vec<CqlValue> {
        let (value, station, data) = shapes::iot_values(k, self.machines());
        vec![
            CqlValue::Double(value),
            CqlValue::Uuid(station),
            CqlValue::Text(data),
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
        match column(names, row, "time")? {
            CqlValue::Timestamp(t) if t.0 >= shapes::IOT_EPOCH_MS => {
                let j = (t.0 - shapes::IOT_EPOCH_MS) / shapes::IOT_STEP_MS;
                Some(part + j as u64 * self.machines())
            }
            _ => None,
        }
    }

    async fn send_read(
        p: &Prepared<Self>,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> Result<QueryResult, ExecutionError> {
        let ReadAt::Partition { part, limit, h } = at else {
            unreachable!("an nb-iot read is a partition's: {at:?}");
        };
        let (machine, sensor) = shapes::iot_partition(part, h);
        session
            .execute_unpaged(p.statements.get(op), (machine, sensor, limit))
            .await
    }
}
