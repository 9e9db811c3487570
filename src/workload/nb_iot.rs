//! `nb-iot`: NoSQLBench's `cql-iot` row (reference 002, [`shapes`]): (machine uuid, sensor
//! text) partitions clustered by time, newest first, a double, a station uuid and 800-1,200
//! characters of text; writes of readings, reads of a partition's latest `partsize`. Machines
//! as [`iot`](super::iot)'s devices; cql-iot's time-window compaction unless the run gives
//! its own.

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

use super::Schema;
use super::builtin::{self, Builtin, ReadAt, Statements};
use super::check::column;
use super::data::mix3;
use super::iot::devices;
use super::keys::Keys;
use super::shapes;
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

impl Builtin for NbIot {
    const TABLE: &'static str = "nb_iot";
    const KEY_COLUMNS: &'static [&'static str] = &["machine_id", "sensor_name", "time"];

    fn of(spec: &WorkloadSpec) -> NbIot {
        NbIot {
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
                "INSERT INTO {ks}.{t} (machine_id, sensor_name, time, sensor_value, station_id, data) \
                 VALUES (?, ?, ?, ?, ?, ?)"
            )),
            OpKind::Range => Some(format!(
                "SELECT * FROM {ks}.{t} WHERE machine_id = ? AND sensor_name = ? LIMIT ?"
            )),
            _ => None,
        }
    }

    fn create(&self) -> Schema {
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

    fn key_of(&self, row: u64) -> Vec<CqlValue> {
        let (machine, sensor, time) = shapes::iot_key(row, self.machines());
        vec![
            CqlValue::Uuid(machine),
            CqlValue::Text(sensor.into()),
            CqlValue::Timestamp(time),
        ]
    }

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

    async fn send_write(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        k: u64,
    ) -> Result<QueryResult, ExecutionError> {
        let machines = self.parts.n();
        let (machine, sensor, time) = shapes::iot_key(k, machines);
        let (value, station, data) = shapes::iot_values(k, machines);
        let values = (machine, sensor, time, value, station, data);
        session.execute_unpaged(st.get(op), values).await
    }

    async fn send_read(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> Result<QueryResult, ExecutionError> {
        let ReadAt::Partition { part, limit, h } = at else {
            unreachable!("an nb-iot read is a partition's: {at:?}");
        };
        let (machine, sensor) = shapes::iot_partition(part, h);
        session
            .execute_unpaged(st.get(op), (machine, sensor, limit))
            .await
    }
}
