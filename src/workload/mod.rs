//! Workloads: what a run creates, what each cycle does, and what every row holds. Each is a
//! [`Workload`]: the six built-ins one file each ([`keyvalue`], [`tabular`], [`iot`],
//! [`stress`], [`nb_tabular2`], [`nb_iot`], sharing [`builtin`]) and a user profile
//! ([`profile::ProfileWorkload`]). Data is a pure function of the cycle: row `k`'s content
//! depends on `k` alone, so rampup writes exactly what reads ask for and what a later
//! verification expects.
//!
//! Dispatch is static: [`with`] builds the spec's workload and hands it to a [`Visit`] — the one
//! place the kinds are told apart — and the load engine and `verify` are generic over it from
//! there. The executor is then compiled for each workload: an operation's future is the
//! workload's own (no match on the kind per operation, no box, no wrapping future that would
//! copy it), as large as that workload's state and no larger.

pub mod builtin;
pub mod check;
pub mod data;
pub mod iot;
pub mod keys;
pub mod keyvalue;
pub mod literal;
pub mod nb_iot;
pub mod nb_tabular2;
pub mod profile;
pub mod shapes;
pub mod stress;
pub mod tabular;

use std::future::Future;
use std::sync::Arc;

use scylla::client::execution_profile::ExecutionProfileHandle;
use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};

use crate::spec::{OpKind, WorkloadKind, WorkloadSpec};
use check::{ReadVerifier, RowId, Verdict};
use data::{below, mix2};

/// A workload: its schema, its statements, for a cycle the operation and its values, and what
/// every row holds. Everything but [`Workload::prepare`] and [`Workload::execute`] is a pure
/// function of the spec.
pub trait Workload: Sized + Send + Sync + 'static {
    /// Its statements, prepared on a session.
    type Statements: Send + Sync + 'static;

    /// The workload of `spec` (a profile's is checked again from the text the spec carries).
    fn new(spec: &WorkloadSpec) -> Result<Self, WorkloadError>;

    fn spec(&self) -> &WorkloadSpec;

    /// The operations it offers.
    fn offers(&self) -> Vec<OpKind>;

    /// The CQL of operation `op` (None: not offered).
    fn statement(&self, op: OpKind) -> Option<String>;

    /// What creates its keyspace and tables.
    fn schema(&self) -> Schema;

    /// Prepares the statements of the operations in the spec's mix (and the writes, for
    /// rampup), each configured by `how`.
    fn prepare(
        &self,
        session: &Session,
        how: &Preparer,
    ) -> impl Future<Output = Result<Self::Statements, WorkloadError>> + Send;

    /// The operation cycle `cycle` performs in the main phase.
    #[inline]
    fn op_for(&self, cycle: u64) -> OpKind {
        let ratio = &self.spec().ratio;
        ratio.pick(below(mix2(cycle), ratio.total() as u64) as u32)
    }

    /// Runs operation `op` of `cycle`. `rampup` writes the cycle's row in order (a sequential
    /// fill); otherwise rows are drawn by the key distribution. Under `--verify` a read
    /// compares what it got with the generator ([`Prepared::checking`]). The executor polls
    /// this future where it stands: it should await the driver directly.
    fn execute<'a>(
        p: &'a Prepared<Self>,
        session: &'a Session,
        op: OpKind,
        cycle: u64,
        rampup: bool,
    ) -> impl Future<Output = Result<(), OpError>> + Send + 'a;

    /// Appends to `out` the rows a write `op` of `cycle` wrote (`sequential`: in rampup or
    /// fill order): what `--verify` learns once acknowledged, and what `verify` reads back.
    fn written_rows(&self, op: OpKind, cycle: u64, sequential: bool, out: &mut Vec<RowId>);

    /// Row `row` as any write of it leaves it: (column, value), key columns first.
    fn image(&self, row: RowId) -> Vec<(&str, CqlValue)>;

    /// The statement reading one row back by its primary key (`verify`).
    fn read_back(&self) -> String;

    /// The values [`Workload::read_back`]'s markers take for row `row`.
    fn key(&self, row: RowId) -> Vec<CqlValue>;

    /// What reading row `row` back returned (`names` its columns), against its image;
    /// `writes` counts the writes of the row, (acknowledged, of unknown outcome), when the
    /// workload [`Workload::accumulates`].
    fn check_row(
        &self,
        row: RowId,
        writes: Option<(u64, u64)>,
        names: &[String],
        rows: &[Row],
    ) -> Verdict {
        let _ = writes;
        let label = self.label(row);
        let Some(first) = rows.first() else {
            return check::missing("", label);
        };
        let image = self.image(row);
        let image = image.iter().map(|(n, v)| (*n, v));
        let exact = |_: &str, want: &CqlValue, got: Option<&CqlValue>| check::same(want, got);
        match check::first_difference(names, first, image, exact) {
            Some(d) => check::differs("", label, d),
            None => Verdict::Matched(1),
        }
    }

    /// How results name row `row`.
    fn label(&self, row: RowId) -> String {
        row.to_string()
    }

    /// Whether `verify` can compare the rows of its mix with the generator's (why not).
    fn verifiable(&self) -> Result<(), profile::ProfileError> {
        Ok(())
    }

    /// A row's content depends on how many writes touched it (counters): `verify` counts them.
    fn accumulates(&self) -> bool {
        false
    }
}

/// What creates a workload's keyspace and tables (each statement idempotent).
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub keyspace: String,
    pub tables: Vec<String>,
    /// The tables' statements name them without the keyspace (a profile's own definitions):
    /// the session uses the keyspace first.
    pub in_keyspace: bool,
}

impl Schema {
    /// The keyspace's statement, then the tables'.
    pub fn statements(&self) -> Vec<String> {
        std::iter::once(self.keyspace.clone())
            .chain(self.tables.iter().cloned())
            .collect()
    }
}

/// A workload prepared on a session: what the load engine runs.
pub struct Prepared<W: Workload> {
    pub workload: W,
    pub statements: W::Statements,
    /// `--verify`: what reads compare against, and their counts.
    pub verify: Option<Arc<ReadVerifier>>,
}

impl<W: Workload> Prepared<W> {
    /// Prepares `workload`'s statements on `session`.
    pub async fn new(
        workload: W,
        session: &Session,
        settings: &StatementSettings,
    ) -> Result<Prepared<W>, WorkloadError> {
        let how = Preparer::new(session, workload.spec(), settings);
        let statements = workload.prepare(session, &how).await?;
        let verify = workload
            .spec()
            .verify_reads
            .then(|| Arc::new(ReadVerifier::default()));
        Ok(Prepared {
            workload,
            statements,
            verify,
        })
    }

    /// The verifier, when operation `op` is a read it checks (`--verify`, not in rampup).
    #[inline]
    pub fn checking(&self, op: OpKind, rampup: bool) -> Option<&ReadVerifier> {
        self.verify.as_deref().filter(|_| !rampup && !op.writes())
    }
}

/// What a run sets on every statement beside the workload's own settings.
#[derive(Default, Clone)]
pub struct StatementSettings {
    /// Told of every retry and speculative execution (the run's driver counters).
    pub listener: Option<Arc<dyn scylla::observability::history::HistoryListener>>,
    /// Rows per page of a read (`--page-size`); the driver's default when None.
    pub page_size: Option<u32>,
}

/// How every statement of a run is configured: its consistency level, the execution
/// profile without a driver timeout, its history listener and page size.
pub struct Preparer {
    handle: ExecutionProfileHandle,
    write_cl: scylla::statement::Consistency,
    read_cl: scylla::statement::Consistency,
    settings: StatementSettings,
}

impl Preparer {
    pub fn new(session: &Session, spec: &WorkloadSpec, settings: &StatementSettings) -> Preparer {
        let handle = session
            .get_default_execution_profile_handle()
            .pointee_to_builder()
            .request_timeout(None)
            .build()
            .into_handle();
        Preparer {
            handle,
            write_cl: spec.write_cl.to_driver(),
            read_cl: spec.read_cl.to_driver(),
            settings: settings.clone(),
        }
    }

    /// Configures a statement that writes (or reads).
    pub fn configure(&self, p: &mut PreparedStatement, writes: bool) {
        p.set_consistency(if writes { self.write_cl } else { self.read_cl });
        p.set_is_idempotent(true);
        // Reads: the server leaves the result metadata (column names and types) out of
        // every response and the driver uses the copy it got when preparing — smaller
        // responses, less to read per operation. The schema does not change during a run.
        p.set_use_cached_result_metadata(true);
        // The executor times requests out itself.
        p.set_execution_profile_handle(Some(self.handle.clone()));
        if let Some(l) = &self.settings.listener {
            p.set_history_listener(l.clone());
        }
        if let Some(n) = self.settings.page_size {
            // Checked to fit an i32 (`DriverSpec::check`).
            p.set_page_size(n.min(i32::MAX as u32) as i32);
        }
    }
}

/// Something to do with a workload, whichever it is ([`with`] calls it with the spec's).
pub trait Visit {
    type Output;
    fn visit<W: Workload>(self, workload: W) -> Self::Output;
}

/// Builds the workload of `spec` and hands it to `v`: the one place the kinds are told apart.
pub fn with<V: Visit>(spec: &WorkloadSpec, v: V) -> Result<V::Output, WorkloadError> {
    Ok(match spec.kind {
        WorkloadKind::Keyvalue => v.visit(keyvalue::Keyvalue::new(spec)?),
        WorkloadKind::Tabular => v.visit(tabular::Tabular::new(spec)?),
        WorkloadKind::Iot => v.visit(iot::Iot::new(spec)?),
        WorkloadKind::Stress => v.visit(stress::Stress::new(spec)?),
        WorkloadKind::NbTabular2 => v.visit(nb_tabular2::NbTabular2::new(spec)?),
        WorkloadKind::NbIot => v.visit(nb_iot::NbIot::new(spec)?),
        WorkloadKind::Profile => v.visit(profile::ProfileWorkload::new(spec)?),
    })
}

/// Operations a built-in workload offers (a profile's are `insert` and its queries, checked
/// against the profile: none here).
pub fn offers(kind: WorkloadKind) -> Vec<OpKind> {
    struct Offers;
    impl Visit for Offers {
        type Output = Vec<OpKind>;
        fn visit<W: Workload>(self, w: W) -> Vec<OpKind> {
            w.offers()
        }
    }
    with(&WorkloadSpec::defaults(kind), Offers).unwrap_or_default()
}

/// Checks a workload spec, wherever it was built: its values ([`WorkloadSpec::check`]) and,
/// for a built-in workload, that its mix asks only for operations it offers.
pub fn check_spec(spec: &WorkloadSpec) -> Result<(), crate::error::Invalid> {
    spec.check()?;
    if spec.kind == WorkloadKind::Profile {
        return Ok(());
    }
    let offered = offers(spec.kind);
    if let Some(op) = spec.ratio.0.keys().find(|op| !offered.contains(op)) {
        let names: Vec<&str> = offered.iter().map(|o| o.name()).collect();
        return Err(crate::invalid!(
            "--ratio: workload {} has no {op} operation (it offers {})",
            spec.kind,
            names.join(", ")
        ));
    }
    Ok(())
}

/// How long a schema statement may take: a `DROP KEYSPACE` flushes and snapshots the keyspace
/// on every node first (`auto_snapshot`), which took more than the 5 s request timeout on
/// three nodes sharing a loaded 2-CPU host.
pub const SCHEMA_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Creates the workload's schema (optionally dropping the keyspace first) and waits for
/// agreement. Each statement may take [`SCHEMA_TIMEOUT`], whatever the run's request timeout.
pub async fn create_schema<W: Workload>(
    workload: &W,
    session: &Session,
    drop_first: bool,
) -> Result<(), WorkloadError> {
    let spec = workload.spec();
    let schema = workload.schema();
    let mut stmts = Vec::new();
    if drop_first {
        stmts.push(format!("DROP KEYSPACE IF EXISTS {}", spec.keyspace));
    }
    stmts.push(schema.keyspace);
    let first_table = stmts.len();
    let in_keyspace = schema.in_keyspace && !schema.tables.is_empty();
    stmts.extend(schema.tables);
    for (i, s) in stmts.into_iter().enumerate() {
        if i == first_table && in_keyspace {
            session
                .use_keyspace(spec.keyspace.as_str(), false)
                .await
                .map_err(|e| WorkloadError::Schema {
                    stmt: format!("USE {}", spec.keyspace),
                    detail: e.to_string(),
                })?;
        }
        let mut statement = scylla::statement::unprepared::Statement::new(s.as_str());
        statement.set_request_timeout(Some(SCHEMA_TIMEOUT));
        session
            .query_unpaged(statement, &[])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offered_operation_has_a_statement_and_others_none() {
        struct Statements;
        impl Visit for Statements {
            type Output = ();
            fn visit<W: Workload>(self, w: W) {
                let kind = w.spec().kind;
                let more = crate::spec::workload::MORE_OPS.map(|n| n.parse::<OpKind>().unwrap());
                for op in OpKind::ALL.into_iter().chain(more) {
                    assert_eq!(
                        w.statement(op).is_some(),
                        offers(kind).contains(&op),
                        "{kind} {op}"
                    );
                }
                assert!(
                    w.spec().ratio.0.keys().all(|op| offers(kind).contains(op)),
                    "default ratio of {kind}"
                );
            }
        }
        for kind in [
            WorkloadKind::Keyvalue,
            WorkloadKind::Tabular,
            WorkloadKind::Iot,
            WorkloadKind::Stress,
            WorkloadKind::NbTabular2,
            WorkloadKind::NbIot,
        ] {
            with(&WorkloadSpec::defaults(kind), Statements).unwrap();
        }
        assert!(offers(WorkloadKind::Profile).is_empty());
    }
}
