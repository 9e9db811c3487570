//! Built-in workloads: schema, prepared statements and, for a cycle number, the operation and
//! its values. Row `k`'s content depends on `k` alone, so rampup writes exactly what reads
//! ask for and what a later verification expects.

pub mod check;
pub mod data;
pub mod keys;
pub mod profile;
pub mod shapes;

use std::sync::Arc;

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::Row;

use crate::spec::{OpKind, WorkloadKind, WorkloadSpec};
use data::{below, fill, mix, mix2, mix3};
use keys::Keys;

/// Rows returned by one range/slice read.
pub const SLICE_ROWS: i32 = 10;

/// A workload ready to run: its spec and prepared statements.
#[derive(Debug)]
pub struct Workload {
    pub spec: WorkloadSpec,
    stmts: [Option<PreparedStatement>; 3],
    /// keyvalue's `delete`, `lwt`, `batch` and `counter`, those in the mix.
    more: Vec<(OpKind, PreparedStatement)>,
    /// The main phase's rows, drawn by the spec's key distribution.
    rows: Keys,
    /// The partitions (tabular) or devices (iot) reads choose, by the same distribution.
    parts: Keys,
    /// A user profile's statements (the `profile` workload).
    pub profile: Option<profile::run::ProfileOps>,
    /// `--verify`: what reads compare against, and their counts.
    pub verify: Option<Arc<check::ReadVerifier>>,
}

/// Why an operation failed: the driver said so, or (`--verify`) a read returned other rows
/// than the generator wrote.
// Unboxed: as large as the driver's error, which the operation's result already was.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum OpError {
    Driver(ExecutionError),
    Mismatch,
}

impl From<ExecutionError> for OpError {
    fn from(e: ExecutionError) -> OpError {
        OpError::Driver(e)
    }
}

/// A read's rows and the names of their columns (`--verify`).
pub fn returned(r: QueryResult) -> Result<(Vec<String>, Vec<Row>), String> {
    let rows = r.into_rows_result().map_err(|e| e.to_string())?;
    let names = rows
        .column_specs()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let rows = rows
        .rows::<Row>()
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<Row>, _>>()
        .map_err(|e| e.to_string())?;
    Ok((names, rows))
}

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("schema statement failed: {stmt}: {detail}")]
    Schema { stmt: String, detail: String },
    #[error("preparing the {op} statement failed: {detail}")]
    Prepare { op: OpKind, detail: String },
    #[error("workload {kind} has no {op} operation (it offers: {offers})")]
    NoSuchOp {
        kind: WorkloadKind,
        op: OpKind,
        offers: String,
    },
    #[error("schema agreement: {0}")]
    Agreement(String),
    #[error("{0}")]
    Profile(String),
}

/// The profile a `profile` workload runs, checked again from the text the spec carries.
pub fn profile_of(spec: &WorkloadSpec) -> Result<profile::Profile, WorkloadError> {
    let src = spec
        .profile
        .as_ref()
        .ok_or_else(|| WorkloadError::Profile("a profile workload without its profile".into()))?;
    profile::Profile::parse(&src.path, &src.text).map_err(|e| WorkloadError::Profile(e.to_string()))
}

/// The statement array slot of a built-in kind.
fn slot(op: OpKind) -> usize {
    match op {
        OpKind::Write => 0,
        OpKind::Read => 1,
        OpKind::Range => 2,
        OpKind::Named(_) => unreachable!("built-in workloads have built-in kinds"),
    }
}

/// The table name of a workload.
pub fn table(kind: WorkloadKind) -> &'static str {
    match kind {
        WorkloadKind::Keyvalue => "kv",
        WorkloadKind::Tabular => "tabular",
        WorkloadKind::Iot => "iot",
        WorkloadKind::Stress => "standard1",
        WorkloadKind::NbTabular2 => "tabular2",
        WorkloadKind::NbIot => "nb_iot",
        // The profile names its own table (`profile::Profile::table`).
        WorkloadKind::Profile => "",
    }
}

/// Rows a keyvalue `batch` writes (a logged batch of single-row partitions).
pub const BATCH_ROWS: u64 = 5;

/// The table of keyvalue's `counter` operation.
pub const COUNTER_TABLE: &str = "kv_counts";

/// Operations a workload offers.
pub fn offers(kind: WorkloadKind) -> Vec<OpKind> {
    match kind {
        WorkloadKind::Keyvalue => {
            let mut v = vec![OpKind::Write, OpKind::Read];
            v.extend(
                crate::spec::workload::MORE_OPS
                    .iter()
                    .map(|n| n.parse::<OpKind>().expect("built-in")),
            );
            v
        }
        WorkloadKind::Tabular
        | WorkloadKind::Iot
        | WorkloadKind::NbTabular2
        | WorkloadKind::NbIot => vec![OpKind::Write, OpKind::Range],
        WorkloadKind::Stress => vec![OpKind::Write, OpKind::Read, OpKind::Range],
        // A profile offers `insert` and its queries (checked against the profile).
        WorkloadKind::Profile => Vec::new(),
    }
}

/// The rows a keyvalue `batch` of `cycle` writes (the first drawn like a write's).
pub fn batch_rows(rows: &Keys, cycle: u64) -> impl Iterator<Item = u64> + '_ {
    (0..BATCH_ROWS).map(move |j| rows.pick(if j == 0 { cycle } else { mix(cycle ^ j) }, true))
}

/// Whether the run's mix has keyvalue's `op` (`delete`, `lwt`, `batch`, `counter`).
pub fn mixes(spec: &WorkloadSpec, op: &str) -> bool {
    spec.ratio.has(op)
}

/// CQL that creates the keyspace and table (idempotent).
pub fn schema(spec: &WorkloadSpec) -> Vec<String> {
    let repl: Vec<String> = spec
        .replication
        .iter()
        .map(|(dc, rf)| format!("'{dc}': {rf}"))
        .collect();
    let ks = &spec.keyspace;
    let mut out = vec![format!(
        "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'NetworkTopologyStrategy', {}}}",
        repl.join(", ")
    )];
    let t = table(spec.kind);
    let body = match spec.kind {
        WorkloadKind::Keyvalue => "key bigint PRIMARY KEY, value blob".to_string(),
        WorkloadKind::Tabular => {
            "part bigint, row bigint, value blob, PRIMARY KEY (part, row)".to_string()
        }
        WorkloadKind::Iot => {
            "device bigint, ts bigint, value double, payload blob, PRIMARY KEY (device, ts)"
                .to_string()
        }
        WorkloadKind::Stress => {
            let cols: Vec<String> = (0..spec.columns).map(|i| format!("c{i} blob")).collect();
            format!("key blob PRIMARY KEY, {}", cols.join(", "))
        }
        WorkloadKind::NbTabular2 => format!(
            "part text, clust text, {} text, PRIMARY KEY (part, clust)",
            shapes::TABULAR2_DATA.join(" text, ")
        ),
        WorkloadKind::Profile => {
            let mut out = out;
            if let Ok(p) = profile_of(spec) {
                out.push(profile::run::if_not_exists(
                    p.file.table_definition.as_deref().unwrap_or_default(),
                ));
                out.extend(
                    p.file
                        .extra_definitions
                        .iter()
                        .map(|d| profile::run::if_not_exists(d)),
                );
            }
            return out;
        }
        WorkloadKind::NbIot => "machine_id uuid, sensor_name text, time timestamp, \
            sensor_value double, station_id uuid, data text, \
            PRIMARY KEY ((machine_id, sensor_name), time)"
            .to_string(),
    };
    let mut options: Vec<String> = Vec::new();
    match spec.kind {
        WorkloadKind::Iot => options.push("CLUSTERING ORDER BY (ts DESC)".into()),
        WorkloadKind::NbIot => {
            options.push("CLUSTERING ORDER BY (time DESC)".into());
            // cql-iot's compaction, unless the run gives its own.
            if !spec
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
        }
        _ => {}
    }
    if let Some(o) = &spec.table_options {
        options.push(o.clone());
    }
    let with = if options.is_empty() {
        String::new()
    } else {
        format!(" WITH {}", options.join(" AND "))
    };
    out.push(format!(
        "CREATE TABLE IF NOT EXISTS {ks}.{t} ({body}){with}"
    ));
    if spec.kind == WorkloadKind::Keyvalue && mixes(spec, "counter") {
        out.push(format!(
            "CREATE TABLE IF NOT EXISTS {ks}.{COUNTER_TABLE} (key bigint PRIMARY KEY, n counter)"
        ));
    }
    out
}

fn statement(spec: &WorkloadSpec, op: OpKind) -> Option<String> {
    let ks = &spec.keyspace;
    let t = table(spec.kind);
    let s = match (spec.kind, op) {
        (WorkloadKind::Keyvalue, OpKind::Write) => {
            format!("INSERT INTO {ks}.{t} (key, value) VALUES (?, ?)")
        }
        (WorkloadKind::Keyvalue, OpKind::Read) => {
            format!("SELECT value FROM {ks}.{t} WHERE key = ?")
        }
        (WorkloadKind::Keyvalue, OpKind::Named(_)) => match op.name() {
            "delete" => format!("DELETE FROM {ks}.{t} WHERE key = ?"),
            // A conditional update that keeps the row as written: Paxos on a live row.
            "lwt" => format!("UPDATE {ks}.{t} SET value = ? WHERE key = ? IF value = ?"),
            "batch" => format!("INSERT INTO {ks}.{t} (key, value) VALUES (?, ?)"),
            "counter" => format!("UPDATE {ks}.{COUNTER_TABLE} SET n = n + 1 WHERE key = ?"),
            _ => return None,
        },
        (WorkloadKind::Tabular, OpKind::Write) => {
            format!("INSERT INTO {ks}.{t} (part, row, value) VALUES (?, ?, ?)")
        }
        (WorkloadKind::Tabular, OpKind::Range) => {
            format!(
                "SELECT row, value FROM {ks}.{t} WHERE part = ? AND row >= ? LIMIT {SLICE_ROWS}"
            )
        }
        (WorkloadKind::Iot, OpKind::Write) => {
            format!("INSERT INTO {ks}.{t} (device, ts, value, payload) VALUES (?, ?, ?, ?)")
        }
        (WorkloadKind::Iot, OpKind::Range) => {
            format!("SELECT ts, value FROM {ks}.{t} WHERE device = ? LIMIT ?")
        }
        (WorkloadKind::Stress, OpKind::Write) => {
            let cols: Vec<String> = (0..spec.columns).map(|i| format!("c{i}")).collect();
            let marks = vec!["?"; spec.columns + 1].join(", ");
            format!(
                "INSERT INTO {ks}.{t} (key, {}) VALUES ({marks})",
                cols.join(", ")
            )
        }
        (WorkloadKind::Stress, OpKind::Read) => format!("SELECT * FROM {ks}.{t} WHERE key = ?"),
        (WorkloadKind::Stress, OpKind::Range) => {
            format!("SELECT * FROM {ks}.{t} WHERE token(key) >= ? LIMIT {SLICE_ROWS}")
        }
        (WorkloadKind::NbTabular2, OpKind::Write) => format!(
            "INSERT INTO {ks}.{t} (part, clust, {}) VALUES ({})",
            shapes::TABULAR2_DATA.join(", "),
            ["?"; 2 + shapes::TABULAR2_DATA.len()].join(", ")
        ),
        (WorkloadKind::NbTabular2, OpKind::Range) => {
            format!("SELECT * FROM {ks}.{t} WHERE part = ? LIMIT ?")
        }
        (WorkloadKind::NbIot, OpKind::Write) => format!(
            "INSERT INTO {ks}.{t} (machine_id, sensor_name, time, sensor_value, station_id, data) \
             VALUES (?, ?, ?, ?, ?, ?)"
        ),
        (WorkloadKind::NbIot, OpKind::Range) => {
            format!("SELECT * FROM {ks}.{t} WHERE machine_id = ? AND sensor_name = ? LIMIT ?")
        }
        _ => return None,
    };
    Some(s)
}

/// The stress workload's key of row `k`: 10 bytes, like cassandra-stress.
fn stress_key(k: u64) -> [u8; 10] {
    let mut key = [0u8; 10];
    key[..8].copy_from_slice(&k.to_be_bytes());
    key[8..].copy_from_slice(&(mix(k) as u16).to_be_bytes());
    key
}

impl Workload {
    /// Creates the schema (optionally dropping the keyspace first) and waits for agreement.
    pub async fn create_schema(
        session: &Session,
        spec: &WorkloadSpec,
        drop_first: bool,
    ) -> Result<(), WorkloadError> {
        let mut stmts = Vec::new();
        if drop_first {
            stmts.push(format!("DROP KEYSPACE IF EXISTS {}", spec.keyspace));
        }
        let schema = schema(spec);
        let profile_definitions = match spec.kind {
            WorkloadKind::Profile => schema.len() - 1,
            _ => 0,
        };
        stmts.extend(schema);
        let first_definition = stmts.len() - profile_definitions;
        for (i, s) in stmts.into_iter().enumerate() {
            // A profile's definitions name their table without its keyspace.
            if i == first_definition && profile_definitions > 0 {
                session
                    .use_keyspace(spec.keyspace.as_str(), false)
                    .await
                    .map_err(|e| WorkloadError::Schema {
                        stmt: format!("USE {}", spec.keyspace),
                        detail: e.to_string(),
                    })?;
            }
            session
                .query_unpaged(s.as_str(), &[])
                .await
                .map_err(|e| WorkloadError::Schema {
                    stmt: s.clone(),
                    detail: e.to_string(),
                })?;
        }
        session
            .await_schema_agreement()
            .await
            .map_err(|e| WorkloadError::Agreement(e.to_string()))?;
        Ok(())
    }

    /// Prepares the statements of the operations in the spec's ratio (and writes, for rampup).
    pub async fn prepare(
        session: &Session,
        spec: &WorkloadSpec,
    ) -> Result<Workload, WorkloadError> {
        let handle = session
            .get_default_execution_profile_handle()
            .pointee_to_builder()
            .request_timeout(None)
            .build()
            .into_handle();
        let configure = |p: &mut PreparedStatement, writes: bool| {
            p.set_consistency(if writes {
                spec.write_cl.to_driver()
            } else {
                spec.read_cl.to_driver()
            });
            p.set_is_idempotent(true);
            // Reads: the server leaves the result metadata (column names and types) out of
            // every response and the driver uses the copy it got when preparing — smaller
            // responses, less to read per operation. The schema does not change during a run.
            p.set_use_cached_result_metadata(true);
            // The executor times requests out itself.
            p.set_execution_profile_handle(Some(handle.clone()));
        };
        let mut stmts: [Option<PreparedStatement>; 3] = [None, None, None];
        let profile = match spec.kind {
            WorkloadKind::Profile => {
                let profile = profile_of(spec)?;
                session
                    .use_keyspace(spec.keyspace.as_str(), false)
                    .await
                    .map_err(|e| WorkloadError::Profile(format!("USE {}: {e}", spec.keyspace)))?;
                let ops = profile::run::ProfileOps::prepare(session, spec, profile, |p, w| {
                    configure(p, w);
                    // Counter updates and LWTs must not be retried as if idempotent.
                    p.set_is_idempotent(!w);
                })
                .await
                .map_err(|(cql, e)| {
                    WorkloadError::Profile(format!("preparing '{cql}' failed: {}", e.0))
                })?;
                Some(ops)
            }
            _ => None,
        };
        let offered = offers(spec.kind);
        let mut more = Vec::new();
        for op in spec.ratio.0.keys().copied().chain([OpKind::Write]) {
            if profile.is_some() {
                break;
            }
            if !offered.contains(&op) {
                let offers = offered
                    .iter()
                    .map(|o| o.name())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(WorkloadError::NoSuchOp {
                    kind: spec.kind,
                    op,
                    offers,
                });
            }
            let text = statement(spec, op).expect("offered operations have statements");
            let mut p = session
                .prepare(text)
                .await
                .map_err(|e| WorkloadError::Prepare {
                    op,
                    detail: e.to_string(),
                })?;
            configure(&mut p, op.writes());
            if let OpKind::Named(_) = op {
                // Not retried as if idempotent: an increment, or a Paxos round.
                p.set_is_idempotent(!matches!(op.name(), "counter" | "lwt"));
                more.push((op, p));
            } else {
                stmts[slot(op)] = Some(p);
            }
        }
        Ok(Workload {
            spec: spec.clone(),
            stmts,
            more,
            rows: Keys::new(spec.key_dist, spec.rows),
            parts: Keys::new(spec.key_dist, partitions(spec)),
            profile,
            verify: spec
                .verify_reads
                .then(|| Arc::new(check::ReadVerifier::default())),
        })
    }

    /// The operation cycle `c` performs in the main phase.
    #[inline]
    pub fn op_for(&self, cycle: u64) -> OpKind {
        self.spec
            .ratio
            .pick(below(mix2(cycle), self.spec.ratio.total() as u64) as u32)
    }

    /// Runs operation `op` for cycle `c`. `rampup` writes row `c` itself (sequential fill);
    /// otherwise the row is drawn from the key space by the key distribution.
    pub async fn execute(
        &self,
        session: &Session,
        op: OpKind,
        cycle: u64,
        rampup: bool,
    ) -> Result<(), OpError> {
        if let Some(v) = &self.verify
            && !rampup
            && !op.writes()
        {
            // Boxed, like profiles: the checked read's state stays out of the plain path's.
            return Box::pin(self.read_verified(session, v, op, cycle)).await;
        }
        if let Some(p) = &self.profile {
            // Boxed: the profile's larger future stays out of the built-ins' state.
            return Ok(Box::pin(p.execute(session, op, cycle, rampup)).await?);
        }
        if let OpKind::Named(_) = op
            && !rampup
        {
            return Ok(Box::pin(self.more(session, op, cycle)).await?);
        }
        let stmt = self.stmts[slot(op)]
            .as_ref()
            .expect("statement prepared for every op in the ratio");
        let rows = self.spec.rows.max(1);
        let k = match rampup {
            true => cycle % rows,
            false => self.rows.pick(cycle, op.writes()),
        };
        let size = self.spec.value_size;
        match (self.spec.kind, op) {
            (WorkloadKind::Keyvalue, OpKind::Write) => {
                let mut v = vec![0u8; size];
                fill(k, &mut v);
                session.execute_unpaged(stmt, (k as i64, v)).await?;
            }
            (WorkloadKind::Keyvalue, _) => {
                session.execute_unpaged(stmt, (k as i64,)).await?;
            }
            (WorkloadKind::Tabular, OpKind::Write) => {
                let parts = rows.div_ceil(self.spec.partsize.max(1));
                let mut v = vec![0u8; size];
                fill(k, &mut v);
                session
                    .execute_unpaged(stmt, ((k % parts) as i64, (k / parts) as i64, v))
                    .await?;
            }
            (WorkloadKind::Tabular, _) => {
                let (part, start) = match self.read_at(op, cycle) {
                    check::ReadAt::Slice { part, start } => (part as i64, start as i64),
                    other => unreachable!("a tabular read is a slice: {other:?}"),
                };
                session.execute_unpaged(stmt, (part, start)).await?;
            }
            (WorkloadKind::Iot, OpKind::Write) => {
                let devices = iot_devices(rows);
                let mut v = vec![0u8; size];
                fill(k, &mut v);
                let value = (mix(k) % 10_000) as f64 / 100.0;
                session
                    .execute_unpaged(stmt, ((k % devices) as i64, (k / devices) as i64, value, v))
                    .await?;
            }
            (WorkloadKind::Iot, _) => {
                let check::ReadAt::Partition { part, limit, .. } = self.read_at(op, cycle) else {
                    unreachable!("an iot read is a partition's");
                };
                session.execute_unpaged(stmt, (part as i64, limit)).await?;
            }
            (WorkloadKind::Stress, OpKind::Write) => {
                let key = stress_key(k);
                let mut buf = vec![0u8; size * self.spec.columns];
                fill(k, &mut buf);
                let mut values: Vec<&[u8]> = Vec::with_capacity(self.spec.columns + 1);
                values.push(&key);
                values.extend(buf.chunks(size.max(1)));
                session.execute_unpaged(stmt, values).await?;
            }
            (WorkloadKind::Stress, OpKind::Read) => {
                let key = stress_key(k);
                session.execute_unpaged(stmt, (&key[..],)).await?;
            }
            (WorkloadKind::Stress, _) => {
                let check::ReadAt::Token(t) = self.read_at(op, cycle) else {
                    unreachable!("a stress range reads from a token");
                };
                session.execute_unpaged(stmt, (t,)).await?;
            }
            (WorkloadKind::NbTabular2, OpKind::Write) => {
                let [d0, d1, d2, d3, d4, d5, d6, d7] = shapes::tabular2_fields(k);
                let (part, clust) = shapes::tabular2_key(k, self.parts.n());
                session
                    .execute_unpaged(stmt, (part, clust, d0, d1, d2, d3, d4, d5, d6, d7))
                    .await?;
            }
            (WorkloadKind::NbTabular2, _) => {
                let check::ReadAt::Partition { part, limit, .. } = self.read_at(op, cycle) else {
                    unreachable!("a tabular2 read is a partition's");
                };
                session
                    .execute_unpaged(stmt, (part.to_string(), limit))
                    .await?;
            }
            (WorkloadKind::NbIot, OpKind::Write) => {
                let machines = self.parts.n();
                let (machine, sensor, time) = shapes::iot_key(k, machines);
                let (value, station, data) = shapes::iot_values(k, machines);
                session
                    .execute_unpaged(stmt, (machine, sensor, time, value, station, data))
                    .await?;
            }
            (WorkloadKind::NbIot, _) => {
                let check::ReadAt::Partition { part, limit, h } = self.read_at(op, cycle) else {
                    unreachable!("an nb-iot read is a partition's");
                };
                let (machine, sensor) = shapes::iot_partition(part, h);
                session
                    .execute_unpaged(stmt, (machine, sensor, limit))
                    .await?;
            }
            (WorkloadKind::Profile, _) => unreachable!("profile operations returned above"),
        }
        Ok(())
    }
}

impl Workload {
    /// keyvalue's `delete`, `lwt`, `batch` and `counter` of `cycle`.
    async fn more(&self, session: &Session, op: OpKind, cycle: u64) -> Result<(), ExecutionError> {
        let stmt = &self
            .more
            .iter()
            .find(|(k, _)| *k == op)
            .expect("a statement for every operation in the mix")
            .1;
        let k = self.rows.pick(cycle, true);
        let value = |k: u64| {
            let mut v = vec![0u8; self.spec.value_size];
            fill(k, &mut v);
            v
        };
        match op.name() {
            "delete" | "counter" => {
                session.execute_unpaged(stmt, (k as i64,)).await?;
            }
            "lwt" => {
                let v = value(k);
                session.execute_unpaged(stmt, (&v, k as i64, &v)).await?;
            }
            "batch" => {
                let mut batch = scylla::statement::batch::Batch::new(
                    scylla::statement::batch::BatchType::Logged,
                );
                let mut values = Vec::new();
                for r in batch_rows(&self.rows, cycle) {
                    batch.append_statement(stmt.clone());
                    values.push((r as i64, value(r)));
                }
                batch.set_consistency(stmt.get_consistency().unwrap_or_default());
                batch.set_execution_profile_handle(stmt.get_execution_profile_handle().cloned());
                batch.set_is_idempotent(true);
                session.batch(&batch, values).await?;
            }
            other => unreachable!("keyvalue has no operation {other}"),
        }
        Ok(())
    }

    /// What a built-in read of `cycle` asks for (keys drawn by the spec's distribution).
    #[inline]
    fn read_at(&self, op: OpKind, cycle: u64) -> check::ReadAt {
        use check::ReadAt;
        let partsize = self.spec.partsize.max(1);
        match (self.spec.kind, op) {
            (WorkloadKind::Tabular, _) => ReadAt::Slice {
                part: self.parts.pick(cycle, false),
                start: below(mix3(cycle), partsize),
            },
            (WorkloadKind::Iot | WorkloadKind::NbIot, _) => ReadAt::Partition {
                part: self.parts.pick(cycle, false),
                limit: partsize as i32,
                h: mix3(cycle),
            },
            // cql-tabular2 reads 1 to 10 rows of a partition.
            (WorkloadKind::NbTabular2, _) => ReadAt::Partition {
                part: self.parts.pick(cycle, false),
                limit: 1 + below(mix3(cycle), SLICE_ROWS as u64) as i32,
                h: 0,
            },
            (WorkloadKind::Stress, OpKind::Range) => ReadAt::Token(mix3(cycle) as i64),
            _ => ReadAt::Row(self.rows.pick(cycle, false)),
        }
    }

    /// The row ids a write of `op` at `cycle` wrote (`--verify` learns them once
    /// acknowledged): a built-in's row number, a profile's `partition << 32 | row`.
    pub fn written_rows(&self, op: OpKind, cycle: u64, rampup: bool) -> Vec<u64> {
        match &self.profile {
            Some(p) => p.written_rows(op, cycle, rampup),
            None if op == OpKind::Write || rampup => vec![self.rows.write_row(cycle, rampup)],
            None if op.name() == "batch" => batch_rows(&self.rows, cycle).collect(),
            // An lwt only rewrites a row as it is; a delete or a counter writes none of it.
            None => Vec::new(),
        }
    }

    /// A read whose rows are compared with the generator's (`--verify`).
    async fn read_verified(
        &self,
        session: &Session,
        v: &check::ReadVerifier,
        op: OpKind,
        cycle: u64,
    ) -> Result<(), OpError> {
        if let Some(p) = &self.profile {
            let verdict = p.read_checked(session, op, cycle, v).await?;
            return if v.count(verdict) {
                Err(OpError::Mismatch)
            } else {
                Ok(())
            };
        }
        let stmt = self.stmts[slot(op)]
            .as_ref()
            .expect("statement prepared for every op in the ratio");
        let at = self.read_at(op, cycle);
        let known_before = check::must_row(&self.spec, at).filter(|&k| v.knows(k));
        let r = match (self.spec.kind, at) {
            (WorkloadKind::Stress, check::ReadAt::Row(k)) => {
                session.execute_unpaged(stmt, (&stress_key(k)[..],)).await?
            }
            (_, check::ReadAt::Row(k)) => session.execute_unpaged(stmt, (k as i64,)).await?,
            (_, check::ReadAt::Slice { part, start }) => {
                session
                    .execute_unpaged(stmt, (part as i64, start as i64))
                    .await?
            }
            (WorkloadKind::NbTabular2, check::ReadAt::Partition { part, limit, .. }) => {
                session
                    .execute_unpaged(stmt, (part.to_string(), limit))
                    .await?
            }
            (WorkloadKind::NbIot, check::ReadAt::Partition { part, limit, h }) => {
                let (machine, sensor) = shapes::iot_partition(part, h);
                session
                    .execute_unpaged(stmt, (machine, sensor, limit))
                    .await?
            }
            (_, check::ReadAt::Partition { part, limit, .. }) => {
                session.execute_unpaged(stmt, (part as i64, limit)).await?
            }
            (_, check::ReadAt::Token(t)) => session.execute_unpaged(stmt, (t,)).await?,
        };
        let verdict = match returned(r) {
            Ok((names, rows)) => {
                check::check_builtin(&self.spec, op.name(), at, &names, &rows, &|k| {
                    known_before == Some(k)
                })
            }
            Err(e) => check::mismatch(op.name(), "?".into(), "(result)", "rows".into(), e),
        };
        if v.count(verdict) {
            Err(OpError::Mismatch)
        } else {
            Ok(())
        }
    }
}

/// The partitions reads choose from: tabular partitions, iot devices, else rows.
pub fn partitions(spec: &WorkloadSpec) -> u64 {
    let rows = spec.rows.max(1);
    match spec.kind {
        WorkloadKind::Tabular | WorkloadKind::NbTabular2 => rows.div_ceil(spec.partsize.max(1)),
        WorkloadKind::Iot | WorkloadKind::NbIot => iot_devices(rows),
        WorkloadKind::Keyvalue | WorkloadKind::Stress | WorkloadKind::Profile => rows,
    }
}

/// Reading row `k` back as its write stored it: the statement, the key to bind and the
/// columns it must return (the same generator as the writes in [`Workload::execute`]).
pub mod image {
    use scylla::value::CqlValue;

    use super::*;

    /// `SELECT <written columns> FROM <table> WHERE <key> = ?`.
    pub fn select(spec: &WorkloadSpec) -> String {
        let ks = &spec.keyspace;
        let t = table(spec.kind);
        let cols = columns(spec).join(", ");
        let key = match spec.kind {
            WorkloadKind::Keyvalue | WorkloadKind::Stress => "key = ?",
            WorkloadKind::Tabular => "part = ? AND row = ?",
            WorkloadKind::Iot => "device = ? AND ts = ?",
            WorkloadKind::NbTabular2 => "part = ? AND clust = ?",
            WorkloadKind::NbIot => "machine_id = ? AND sensor_name = ? AND time = ?",
            // `verify` refuses profile runs before it asks.
            WorkloadKind::Profile => "",
        };
        format!("SELECT {cols} FROM {ks}.{t} WHERE {key}")
    }

    /// Names of the columns [`expected`] returns.
    pub fn columns(spec: &WorkloadSpec) -> Vec<String> {
        match spec.kind {
            WorkloadKind::Keyvalue | WorkloadKind::Tabular => vec!["value".into()],
            WorkloadKind::Iot => vec!["value".into(), "payload".into()],
            WorkloadKind::Stress => (0..spec.columns).map(|i| format!("c{i}")).collect(),
            WorkloadKind::NbTabular2 => shapes::TABULAR2_DATA.map(String::from).to_vec(),
            WorkloadKind::NbIot => vec!["sensor_value".into(), "station_id".into(), "data".into()],
            WorkloadKind::Profile => Vec::new(),
        }
    }

    /// The key of row `k`, in the order of [`select`]'s markers.
    pub fn key(spec: &WorkloadSpec, k: u64) -> Vec<CqlValue> {
        let rows = spec.rows.max(1);
        match spec.kind {
            WorkloadKind::Keyvalue => vec![CqlValue::BigInt(k as i64)],
            WorkloadKind::Tabular => {
                let parts = rows.div_ceil(spec.partsize.max(1));
                vec![
                    CqlValue::BigInt((k % parts) as i64),
                    CqlValue::BigInt((k / parts) as i64),
                ]
            }
            WorkloadKind::Iot => {
                let devices = iot_devices(rows);
                vec![
                    CqlValue::BigInt((k % devices) as i64),
                    CqlValue::BigInt((k / devices) as i64),
                ]
            }
            WorkloadKind::Stress => vec![CqlValue::Blob(stress_key(k).to_vec())],
            WorkloadKind::NbTabular2 => {
                let (part, clust) = shapes::tabular2_key(k, partitions(spec));
                vec![CqlValue::Text(part), CqlValue::Text(clust)]
            }
            WorkloadKind::Profile => Vec::new(),
            WorkloadKind::NbIot => {
                let (machine, sensor, time) = shapes::iot_key(k, partitions(spec));
                vec![
                    CqlValue::Uuid(machine),
                    CqlValue::Text(sensor.into()),
                    CqlValue::Timestamp(time),
                ]
            }
        }
    }

    /// What row `k`'s columns hold after any write of it.
    pub fn expected(spec: &WorkloadSpec, k: u64) -> Vec<CqlValue> {
        let size = spec.value_size;
        let blob = |len: usize| {
            let mut v = vec![0u8; len];
            fill(k, &mut v);
            v
        };
        match spec.kind {
            WorkloadKind::Keyvalue | WorkloadKind::Tabular => vec![CqlValue::Blob(blob(size))],
            WorkloadKind::Iot => vec![
                CqlValue::Double((mix(k) % 10_000) as f64 / 100.0),
                CqlValue::Blob(blob(size)),
            ],
            WorkloadKind::Stress => blob(size * spec.columns)
                .chunks(size.max(1))
                .map(|c| CqlValue::Blob(c.to_vec()))
                .collect(),
            WorkloadKind::NbTabular2 => shapes::tabular2_fields(k)
                .into_iter()
                .map(CqlValue::Text)
                .collect(),
            WorkloadKind::Profile => Vec::new(),
            WorkloadKind::NbIot => {
                let (value, station, data) = shapes::iot_values(k, partitions(spec));
                vec![
                    CqlValue::Double(value),
                    CqlValue::Uuid(station),
                    CqlValue::Text(data),
                ]
            }
        }
    }
}

/// Devices of the iot workload: one per 1,000 readings of the key space.
pub fn iot_devices(rows: u64) -> u64 {
    (rows / 1000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::WorkloadSpec;

    #[test]
    fn every_offered_operation_has_a_statement_and_others_none() {
        for kind in [
            WorkloadKind::Keyvalue,
            WorkloadKind::Tabular,
            WorkloadKind::Iot,
            WorkloadKind::Stress,
            WorkloadKind::NbTabular2,
            WorkloadKind::NbIot,
        ] {
            let spec = WorkloadSpec::defaults(kind);
            let more = crate::spec::workload::MORE_OPS.map(|n| n.parse::<OpKind>().unwrap());
            for op in OpKind::ALL.into_iter().chain(more) {
                assert_eq!(
                    statement(&spec, op).is_some(),
                    offers(kind).contains(&op),
                    "{kind} {op}"
                );
            }
            assert!(
                spec.ratio.0.keys().all(|op| offers(kind).contains(op)),
                "default ratio of {kind}"
            );
        }
    }

    #[test]
    fn schema_uses_network_topology_and_options() {
        let mut spec = WorkloadSpec::defaults(WorkloadKind::Stress);
        spec.replication = crate::spec::workload::parse_replication("dc1:3,dc2:1").unwrap();
        spec.table_options = Some("compaction = {'class': 'LeveledCompactionStrategy'}".into());
        let s = schema(&spec);
        assert_eq!(
            s[0],
            "CREATE KEYSPACE IF NOT EXISTS cqlbench WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 1}"
        );
        assert_eq!(
            s[1],
            "CREATE TABLE IF NOT EXISTS cqlbench.standard1 (key blob PRIMARY KEY, c0 blob, c1 blob, c2 blob, c3 blob, c4 blob) WITH compaction = {'class': 'LeveledCompactionStrategy'}"
        );
        let iot = schema(&WorkloadSpec::defaults(WorkloadKind::Iot));
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
