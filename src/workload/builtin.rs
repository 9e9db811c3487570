//! What the built-in workloads share. Row `k` of the key space `0..rows` has key and value
//! columns that are a pure function of `k` ([`Builtin`]); the schema is one table (keyvalue's
//! counters add one) in a NetworkTopologyStrategy keyspace; statements are prepared for the
//! operations in the mix; a read asks for a row, a slice or a partition ([`ReadAt`]) and under
//! `--verify` the rows it returns are identified and compared with their images
//! ([`check_read`]).

use std::future::Future;

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};

use super::check::{self, ReadVerifier, RowId, Verdict};
use super::data::fill;
use super::keys::Keys;
use super::{OpError, Prepared, Preparer, Schema, Workload, WorkloadError};
use crate::spec::{OpKind, WorkloadSpec};

/// Rows returned by one range/slice read.
pub const SLICE_ROWS: i32 = 10;

/// What a built-in read asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAt {
    /// Row `k` by its key (keyvalue, stress).
    Row(u64),
    /// Partition `part` from clustering row `start` on (tabular).
    Slice { part: u64, start: u64 },
    /// The first `limit` rows of partition `part`; `h` picks nb-iot's sensor.
    Partition { part: u64, limit: i32, h: u64 },
    /// Rows from a token on (stress range).
    Token(i64),
}

/// A built-in workload: its table, its statements, what row `k` holds and how each operation
/// binds its values. Everything else a [`Workload`] is (preparing, the `--verify` path, the
/// image of a row, reading it back) comes from the blanket implementation below, so a new
/// built-in is its row shape and nothing more.
pub trait Builtin: Sized + Send + Sync + 'static {
    /// Its table.
    const TABLE: &'static str;
    /// Its primary key's columns, in the order of [`Builtin::key_of`].
    const KEY_COLUMNS: &'static [&'static str];

    /// The workload of `spec`.
    fn of(spec: &WorkloadSpec) -> Self;

    /// Its spec, and the key space its writes draw rows from.
    fn rows(&self) -> (&WorkloadSpec, &Keys);

    /// The operations it offers.
    fn operations(&self) -> Vec<OpKind>;

    /// The CQL of operation `op` (None: not offered).
    fn cql(&self, op: OpKind) -> Option<String>;

    /// What creates its keyspace and tables ([`schema`] with its columns).
    fn create(&self) -> Schema;

    /// Row `k`'s primary key, in the order of [`Builtin::KEY_COLUMNS`].
    fn key_of(&self, k: u64) -> Vec<CqlValue>;

    /// The columns of [`Builtin::values`].
    fn value_columns(&self) -> Vec<&str>;

    /// What row `k`'s value columns hold after any write of it.
    fn values(&self, k: u64) -> Vec<CqlValue>;

    /// What a read of `op` at `cycle` asks for (keys drawn by the spec's distribution).
    fn read_at(&self, op: OpKind, cycle: u64) -> ReadAt;

    /// The row a returned row of a read at `at` (not by key) holds; None: not one the
    /// generator writes there.
    fn identify(&self, at: ReadAt, names: &[String], row: &Row) -> Option<u64> {
        let _ = (at, names, row);
        None
    }

    /// The row a read at `at` (not by key) must return once it is known written.
    fn must_return(&self, at: ReadAt) -> Option<u64> {
        let _ = at;
        None
    }

    /// Writes row `k` with `op`'s statement (a write, or any operation of rampup).
    fn send_write(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        k: u64,
    ) -> impl Future<Output = Result<QueryResult, ExecutionError>> + Send;

    /// Sends the read at `at` (the plain path drops the rows; `--verify` compares them).
    fn send_read(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        at: ReadAt,
    ) -> impl Future<Output = Result<QueryResult, ExecutionError>> + Send;

    /// Runs a named operation of `cycle` (keyvalue's `delete`, `lwt`, `batch`, `counter`).
    fn send_more(
        &self,
        st: &Statements,
        session: &Session,
        op: OpKind,
        cycle: u64,
    ) -> impl Future<Output = Result<(), ExecutionError>> + Send {
        let _ = (st, session, cycle);
        async move { unreachable!("{} offers no operation {}", Self::TABLE, op.name()) }
    }

    /// Rows a named write `op` of `cycle` writes besides the plain write's (keyvalue's batch).
    fn more_written(&self, op: OpKind, cycle: u64, sequential: bool, out: &mut Vec<RowId>) {
        let _ = (op, cycle, sequential, out);
    }
}

impl<B: Builtin> Workload for B {
    type Statements = Statements;

    fn new(spec: &WorkloadSpec) -> Result<B, WorkloadError> {
        Ok(B::of(spec))
    }

    fn spec(&self) -> &WorkloadSpec {
        self.rows().0
    }

    fn offers(&self) -> Vec<OpKind> {
        self.operations()
    }

    fn statement(&self, op: OpKind) -> Option<String> {
        self.cql(op)
    }

    fn schema(&self) -> Schema {
        self.create()
    }

    async fn prepare(
        &self,
        session: &Session,
        how: &Preparer,
    ) -> Result<Statements, WorkloadError> {
        prepare(self, session, how).await
    }

    async fn execute(
        p: &Prepared<B>,
        session: &Session,
        op: OpKind,
        cycle: u64,
        rampup: bool,
    ) -> Result<(), OpError> {
        if let Some(v) = p.checking(op, rampup) {
            // Boxed: the checked read's state stays out of the plain path's.
            return Box::pin(read_verified(p, session, v, op, cycle)).await;
        }
        let (w, st) = (&p.workload, &p.statements);
        if op == OpKind::Write || rampup {
            let k = row_of(w.rows().1, op, cycle, rampup);
            w.send_write(st, session, op, k).await?;
        } else if let OpKind::Named(_) = op {
            Box::pin(w.send_more(st, session, op, cycle)).await?;
        } else {
            w.send_read(st, session, op, w.read_at(op, cycle)).await?;
        }
        Ok(())
    }

    fn written_rows(&self, op: OpKind, cycle: u64, sequential: bool, out: &mut Vec<RowId>) {
        self.more_written(op, cycle, sequential, out);
        written_row(self.rows().1, op, cycle, sequential, out);
    }

    fn image(&self, row: RowId) -> Vec<(&str, CqlValue)> {
        image(self, row)
    }

    fn read_back(&self) -> String {
        select(self)
    }

    fn key(&self, row: RowId) -> Vec<CqlValue> {
        self.key_of(row)
    }
}

/// A built-in's prepared statements, by operation.
#[derive(Debug, Default)]
pub struct Statements {
    /// write, read, range.
    core: [Option<PreparedStatement>; 3],
    /// keyvalue's `delete`, `lwt`, `batch` and `counter`, those in the mix.
    more: Vec<(OpKind, PreparedStatement)>,
}

impl Statements {
    /// The statement of `op` (prepared for every operation in the mix).
    #[inline]
    pub fn get(&self, op: OpKind) -> &PreparedStatement {
        let p = match op {
            OpKind::Write => self.core[0].as_ref(),
            OpKind::Read => self.core[1].as_ref(),
            OpKind::Range => self.core[2].as_ref(),
            OpKind::Named(_) => self.more.iter().find(|(k, _)| *k == op).map(|(_, p)| p),
        };
        p.expect("a statement prepared for every operation in the mix")
    }

    fn put(&mut self, op: OpKind, p: PreparedStatement) {
        match op {
            OpKind::Write => self.core[0] = Some(p),
            OpKind::Read => self.core[1] = Some(p),
            OpKind::Range => self.core[2] = Some(p),
            OpKind::Named(_) => self.more.push((op, p)),
        }
    }
}

/// CQL that creates the keyspace (idempotent).
pub fn keyspace(spec: &WorkloadSpec) -> String {
    let repl: Vec<String> = spec
        .replication
        .iter()
        .map(|(dc, rf)| format!("'{dc}': {rf}"))
        .collect();
    format!(
        "CREATE KEYSPACE IF NOT EXISTS {} WITH replication = {{'class': 'NetworkTopologyStrategy', {}}}",
        spec.keyspace,
        repl.join(", ")
    )
}

/// The schema of a built-in: its keyspace and its table of columns `body`, with `options`
/// and then the run's own table options.
pub fn schema<B: Builtin>(b: &B, body: &str, mut options: Vec<String>) -> Schema {
    let spec = b.rows().0;
    if let Some(o) = &spec.table_options {
        options.push(o.clone());
    }
    let with = if options.is_empty() {
        String::new()
    } else {
        format!(" WITH {}", options.join(" AND "))
    };
    Schema {
        keyspace: keyspace(spec),
        tables: vec![format!(
            "CREATE TABLE IF NOT EXISTS {}.{} ({body}){with}",
            spec.keyspace,
            B::TABLE
        )],
        in_keyspace: false,
    }
}

/// Prepares the statements of the operations in the spec's mix, and the write (for rampup).
async fn prepare<B: Builtin>(
    b: &B,
    session: &Session,
    how: &Preparer,
) -> Result<Statements, WorkloadError> {
    let spec = b.rows().0;
    let offered = b.operations();
    let mut out = Statements::default();
    for op in spec.ratio.0.keys().copied().chain([OpKind::Write]) {
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
        let text = b.cql(op).expect("offered operations have statements");
        let mut p = session
            .prepare(text)
            .await
            .map_err(|e| WorkloadError::Prepare {
                op,
                detail: e.to_string(),
            })?;
        how.configure(&mut p, op.writes());
        if let OpKind::Named(_) = op {
            // Not retried as if idempotent: an increment, or a Paxos round.
            p.set_is_idempotent(!matches!(op.name(), "counter" | "lwt"));
        }
        out.put(op, p);
    }
    Ok(out)
}

/// The row operation `op` of `cycle` touches: in order in rampup, else drawn.
#[inline]
fn row_of(rows: &Keys, op: OpKind, cycle: u64, rampup: bool) -> u64 {
    if rampup {
        cycle % rows.n()
    } else {
        rows.pick(cycle, op.writes())
    }
}

/// The row a plain write (or any rampup operation) of `cycle` writes.
fn written_row(rows: &Keys, op: OpKind, cycle: u64, sequential: bool, out: &mut Vec<RowId>) {
    if op == OpKind::Write || sequential {
        out.push(rows.write_row(cycle, sequential));
    }
}

/// `len` bytes determined by row `k`.
pub fn blob(k: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    fill(k, &mut v);
    v
}

/// Row `k`'s image: its key columns, then its value columns.
fn image<B: Builtin>(b: &B, k: u64) -> Vec<(&str, CqlValue)> {
    let key = B::KEY_COLUMNS.iter().copied().zip(b.key_of(k));
    key.chain(b.value_columns().into_iter().zip(b.values(k)))
        .collect()
}

/// `SELECT <value columns> FROM <table> WHERE <key columns> = ?`.
fn select<B: Builtin>(b: &B) -> String {
    let key: Vec<String> = B::KEY_COLUMNS.iter().map(|c| format!("{c} = ?")).collect();
    format!(
        "SELECT {} FROM {}.{} WHERE {}",
        b.value_columns().join(", "),
        b.rows().0.keyspace,
        B::TABLE,
        key.join(" AND ")
    )
}

/// The row each returned row of a read at `at` holds.
fn identify<B: Builtin>(b: &B, at: ReadAt, names: &[String], row: &Row) -> Option<u64> {
    match at {
        ReadAt::Row(k) => Some(k),
        _ => b.identify(at, names, row),
    }
}

/// The row a read must return once it is known written: a key's row, a slice's first row,
/// a partition's first row (its row number is the partition's). Its `knows` answer is taken
/// before the read is sent: a write acknowledged while the read was in flight does not make
/// the read's miss a mismatch.
pub fn must_row<B: Builtin>(b: &B, at: ReadAt) -> Option<u64> {
    match at {
        ReadAt::Row(k) => Some(k),
        _ => b.must_return(at),
    }
}

/// Compares a built-in read's rows with the generator: each row identified by its key,
/// its returned key and value columns compared with row `k`'s image.
pub fn check_read<B: Builtin>(
    b: &B,
    op: &str,
    at: ReadAt,
    names: &[String],
    rows: &[Row],
    knows: &dyn Fn(u64) -> bool,
) -> Verdict {
    let exact = |_: &str, want: &CqlValue, got: Option<&CqlValue>| check::same(want, got);
    let mut compared = 0u64;
    let mut seen = Vec::with_capacity(rows.len());
    for row in rows {
        let Some(k) = identify(b, at, names, row) else {
            continue;
        };
        seen.push(k);
        // The key columns returned must be row k's (a row in another row's place).
        let image = image(b, k);
        let image = image.iter().map(|(n, v)| (*n, v));
        if let Some(d) = check::first_difference(names, row, image, exact) {
            return check::differs(op, k.to_string(), d);
        }
        compared += 1;
    }
    let must = must_row(b, at).filter(|_| {
        // A partition's first row only when the read found none of its rows.
        !matches!(at, ReadAt::Partition { .. }) || rows.is_empty()
    });
    let must = must.filter(|k| *k < b.rows().0.rows.max(1) && !seen.contains(k));
    if let Some(k) = must
        && knows(k)
    {
        return check::missing(op, k.to_string());
    }
    if compared > 0 {
        Verdict::Matched(compared)
    } else if !rows.is_empty() {
        Verdict::Unchecked(check::Unchecked::Unidentified)
    } else if must.is_some() {
        Verdict::Unchecked(check::Unchecked::NotYetWritten)
    } else {
        Verdict::Unchecked(check::Unchecked::NoRowRequired)
    }
}

/// A read whose rows are compared with the generator's (`--verify`).
async fn read_verified<B: Builtin>(
    p: &Prepared<B>,
    session: &Session,
    v: &ReadVerifier,
    op: OpKind,
    cycle: u64,
) -> Result<(), OpError> {
    let w = &p.workload;
    let at = w.read_at(op, cycle);
    let known_before = must_row(w, at).filter(|&k| v.knows(k));
    let r = w.send_read(&p.statements, session, op, at).await?;
    let verdict = match check::returned(r) {
        Ok((names, rows)) => check_read(w, op.name(), at, &names, &rows, &|k| {
            known_before == Some(k)
        }),
        Err(e) => check::mismatch(
            op.name(),
            "?".into(),
            "(result)",
            "rows".into(),
            e.to_string(),
        ),
    };
    if v.count(op.name(), verdict) {
        Err(OpError::Mismatch)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::verify::Mismatch;
    use crate::spec::WorkloadKind;
    use crate::workload::keyvalue::Keyvalue;
    use crate::workload::nb_iot::NbIot;
    use crate::workload::shapes;
    use crate::workload::tabular::{self, Tabular};

    fn row(v: Vec<CqlValue>) -> Row {
        Row {
            columns: v.into_iter().map(Some).collect(),
        }
    }

    fn copy(rows: &[Row]) -> Vec<Row> {
        rows.iter()
            .map(|r| Row {
                columns: r.columns.clone(),
            })
            .collect()
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_point_read_matches_differs_or_misses() {
        let spec = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
        let kv = Keyvalue::new(&spec).unwrap();
        let n = names(&["value"]);
        let good = row(kv.values(5));
        let yes = |_: u64| true;
        let no = |_: u64| false;
        let at = ReadAt::Row(5);
        assert_eq!(
            check_read(&kv, "read", at, &n, &[good], &yes),
            Verdict::Matched(1)
        );
        let other = row(kv.values(6));
        let Verdict::Mismatch(m) = check_read(&kv, "read", at, &n, &[other], &yes) else {
            panic!("another row's value is a mismatch");
        };
        assert_eq!((m.row.as_str(), m.column.as_str()), ("5", "value"));
        assert!(m.expected.ends_with("(100 bytes)"), "{}", m.expected);
        // Absent: a mismatch only when known written.
        assert!(matches!(
            check_read(&kv, "read", at, &n, &[], &yes),
            Verdict::Mismatch(Mismatch { ref column, .. }) if column == "(row)"
        ));
        assert_eq!(
            check_read(&kv, "read", at, &n, &[], &no),
            Verdict::Unchecked(check::Unchecked::NotYetWritten)
        );
    }

    #[test]
    fn slices_identify_each_row_by_its_clustering_key() {
        let mut spec = WorkloadSpec::defaults(WorkloadKind::Tabular);
        spec.rows = 1000;
        spec.partsize = 100;
        let t = Tabular::new(&spec).unwrap();
        let parts = tabular::partitions(&spec);
        let n = names(&["row", "value"]);
        let slice: Vec<Row> = (3..6)
            .map(|r| {
                let k = 2 + r * parts;
                let mut v = vec![CqlValue::BigInt(r as i64)];
                v.extend(t.values(k));
                row(v)
            })
            .collect();
        let at = ReadAt::Slice { part: 2, start: 3 };
        let yes = |_: u64| true;
        assert_eq!(
            check_read(&t, "range", at, &n, &slice, &yes),
            Verdict::Matched(3)
        );
        // The first row of the slice absent while known written.
        assert!(matches!(
            check_read(&t, "range", at, &n, &slice[1..], &yes),
            Verdict::Mismatch(Mismatch { ref column, .. }) if column == "(row)"
        ));
        // A row holding another row's value.
        let mut swapped = copy(&slice);
        swapped[2].columns[1] = slice[1].columns[1].clone();
        let Verdict::Mismatch(m) = check_read(&t, "range", at, &n, &swapped, &yes) else {
            panic!("a swapped value is a mismatch");
        };
        assert_eq!(m.row, (2 + 5 * parts).to_string());
    }

    #[test]
    fn nb_iot_rows_are_checked_with_their_keys() {
        let mut spec = WorkloadSpec::defaults(WorkloadKind::NbIot);
        spec.rows = 5000;
        let w = NbIot::new(&spec).unwrap();
        let machines = crate::workload::iot::devices(spec.rows);
        let n = names(&[
            "machine_id",
            "sensor_name",
            "time",
            "data",
            "sensor_value",
            "station_id",
        ]);
        let full = |k: u64| {
            let (m, s, t) = shapes::iot_key(k, machines);
            let (v, st, d) = shapes::iot_values(k, machines);
            row(vec![
                CqlValue::Uuid(m),
                CqlValue::Text(s.into()),
                CqlValue::Timestamp(t),
                CqlValue::Text(d),
                CqlValue::Double(v),
                CqlValue::Uuid(st),
            ])
        };
        let at = ReadAt::Partition {
            part: 1,
            limit: 10,
            h: 0,
        };
        let rows = vec![full(1), full(1 + machines)];
        let yes = |_: u64| true;
        assert_eq!(
            check_read(&w, "range", at, &n, &rows, &yes),
            Verdict::Matched(2)
        );
        let mut bad = copy(&rows);
        bad[1].columns[4] = Some(CqlValue::Double(-1.0));
        assert!(matches!(
            check_read(&w, "range", at, &n, &bad, &yes),
            Verdict::Mismatch(Mismatch { ref column, .. }) if column == "sensor_value"
        ));
    }
}
