//! A user profile as a [`Workload`]: its table (the profile's own definitions, in the run's
//! keyspace), its insert and the queries of the mix prepared, and for a cycle the rows
//! ([`RowPlan`]) and values ([`Profile::values`]) the operation binds. A row is known by its
//! [`row_id`]; rows read back are compared as [`super::check`] describes (keys that collide,
//! counters).

use std::sync::OnceLock;

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::statement::batch::{Batch, BatchType as DriverBatch};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};

use super::check::{RowIndex, check_rows, row_id};
use super::cql::{CqlType, Query, Verb};
use super::run::{BATCH_BYTES, INSERT, RowPlan, if_not_exists, op_kind};
use super::{BatchType, Fields, Profile, values};
use crate::result::verify::Mismatch;
use crate::spec::{OpKind, WorkloadSpec};
use crate::workload::check::{self, ReadVerifier, RowId, Verdict};
use crate::workload::data::{below, mix};
use crate::workload::{OpError, Prepared, Preparer, Schema, Workload, WorkloadError, builtin};

/// A query of the mix: its kind, its markers as column indices, and where they bind from.
#[derive(Debug)]
struct QueryOp {
    kind: OpKind,
    binds: Vec<usize>,
    fields: Fields,
}

/// A profile run's workload.
#[derive(Debug)]
pub struct ProfileWorkload {
    spec: WorkloadSpec,
    pub profile: Profile,
    /// Which rows a cycle writes or reads.
    pub plan: RowPlan,
    counter: bool,
    batch: BatchType,
    /// The insert's markers as column indices (table order; a counter update's deltas,
    /// then its key).
    insert_columns: Vec<usize>,
    /// The queries of the mix, in the profile's order.
    queries: Vec<QueryOp>,
    /// The primary key's columns (indices: the partition key, then the clustering columns).
    key_columns: Vec<usize>,
    /// Reading one row back: every primary-key column bound with `=`.
    read_back: Query,
    /// The generator's rows by key, for reads to look theirs up (`--verify`, `verify`).
    index: OnceLock<RowIndex>,
}

/// The profile's statements: its insert, and its queries in the order of the workload's.
pub struct ProfileStatements {
    insert: PreparedStatement,
    queries: Vec<PreparedStatement>,
}

impl ProfileWorkload {
    /// The workload of `profile`, run as `spec` says (its mix, rows, key distribution).
    pub fn from_profile(spec: &WorkloadSpec, profile: Profile) -> ProfileWorkload {
        let t = &profile.table;
        let key_names: Vec<String> = t
            .partition_key
            .iter()
            .chain(&t.clustering)
            .cloned()
            .collect();
        let key_columns: Vec<usize> = key_names.iter().map(|k| profile.index_of(k)).collect();
        let counter = t.columns.iter().any(|c| c.ty == CqlType::Counter);
        let insert_columns = if counter {
            let deltas = (0..profile.columns.len()).filter(|i| !key_columns.contains(i));
            deltas.chain(key_columns.iter().copied()).collect()
        } else {
            (0..profile.columns.len()).collect()
        };
        let queries = profile
            .queries
            .iter()
            .map(|(name, q)| QueryOp {
                kind: op_kind(&profile, name),
                binds: q.binds.iter().map(|b| profile.index_of(b)).collect(),
                fields: profile.file.queries[name].fields.unwrap_or(Fields::Samerow),
            })
            .filter(|q| spec.ratio.0.contains_key(&q.kind))
            .collect();
        ProfileWorkload {
            spec: spec.clone(),
            plan: RowPlan::new(&profile, spec),
            counter,
            batch: profile.file.insert.batchtype.unwrap_or(BatchType::Logged),
            insert_columns,
            queries,
            key_columns,
            read_back: Query {
                verb: Verb::Select,
                binds: key_names.clone(),
                lwt: false,
                equal: key_names,
                only_equalities: true,
                limit: None,
            },
            index: OnceLock::new(),
            profile,
        }
    }

    /// The generator's rows by key (built when first needed).
    fn index(&self) -> &RowIndex {
        self.index
            .get_or_init(|| RowIndex::new(&self.profile, self.spec.rows.max(1)))
    }

    /// The insert: an `UPDATE … SET c = c + ?` on a counter table.
    fn insert_cql(&self) -> String {
        let name = |i: &usize| self.profile.columns[*i].name.as_str();
        let t = &self.profile.table.name;
        if self.counter {
            let n = self.insert_columns.len() - self.key_columns.len();
            let deltas: Vec<String> = self.insert_columns[..n]
                .iter()
                .map(name)
                .map(|c| format!("\"{c}\" = \"{c}\" + ?"))
                .collect();
            let keys: Vec<String> = self
                .key_columns
                .iter()
                .map(name)
                .map(|k| format!("\"{k}\" = ?"))
                .collect();
            format!(
                "UPDATE {t} SET {} WHERE {}",
                deltas.join(", "),
                keys.join(" AND ")
            )
        } else {
            let all: Vec<String> = self
                .insert_columns
                .iter()
                .map(name)
                .map(|c| format!("\"{c}\""))
                .collect();
            format!(
                "INSERT INTO {t} ({}) VALUES ({})",
                all.join(", "),
                vec!["?"; all.len()].join(", ")
            )
        }
    }

    /// The values of the insert statement for row `r` of partition `p`, and their bytes.
    fn insert_values(&self, p: u64, r: u64) -> (Vec<CqlValue>, usize) {
        let v = self.profile.values(p, r, &self.insert_columns);
        let bytes = v.iter().map(values::wire_bytes).sum();
        (v, bytes)
    }

    /// Query `op` at `cycle`: its index in `queries`, its partition, the row it binds
    /// (samerow; None for multirow) and the values bound.
    fn query_binds(&self, op: OpKind, cycle: u64) -> (usize, u64, Option<u64>, Vec<CqlValue>) {
        let i = self
            .queries
            .iter()
            .position(|q| q.kind == op)
            .expect("a prepared statement for every operation in the mix");
        let QueryOp { binds, fields, .. } = &self.queries[i];
        let (p, r) = self.plan.query_row(&self.profile, *fields, cycle);
        let total = self.profile.rows_in(p).iter().product::<u64>().max(1);
        match (fields, r) {
            (Fields::Samerow, Some(r)) => (i, p, Some(r), self.profile.values(p, r, binds)),
            _ => {
                let bound = binds
                    .iter()
                    .enumerate()
                    .flat_map(|(i, &c)| {
                        let r = below(mix(cycle ^ (i as u64 + 1)), total);
                        self.profile.values(p, r, &[c])
                    })
                    .collect();
                (i, p, None, bound)
            }
        }
    }

    async fn insert(
        &self,
        st: &ProfileStatements,
        session: &Session,
        cycle: u64,
        rampup: bool,
    ) -> Result<(), ExecutionError> {
        let rows = self.plan.insert_rows(&self.profile, cycle, rampup);
        if rows.is_empty() {
            // A rampup chunk past the end of a narrower partition.
            return Ok(());
        }
        if rows.len() == 1 {
            let (v, _) = self.insert_values(rows[0].0, rows[0].1);
            session.execute_unpaged(&st.insert, v).await?;
            return Ok(());
        }
        let kind = match (self.counter, self.batch) {
            (true, _) => DriverBatch::Counter,
            (false, BatchType::Logged) => DriverBatch::Logged,
            (false, BatchType::Unlogged) => DriverBatch::Unlogged,
        };
        let mut values: Vec<Vec<CqlValue>> = Vec::new();
        let mut bytes = 0;
        for (p, r) in rows {
            let (v, b) = self.insert_values(p, r);
            if !values.is_empty() && bytes + b > BATCH_BYTES {
                self.send(st, session, kind, std::mem::take(&mut values))
                    .await?;
                bytes = 0;
            }
            values.push(v);
            bytes += b;
        }
        self.send(st, session, kind, values).await
    }

    async fn send(
        &self,
        st: &ProfileStatements,
        session: &Session,
        kind: DriverBatch,
        values: Vec<Vec<CqlValue>>,
    ) -> Result<(), ExecutionError> {
        if values.len() == 1 {
            session.execute_unpaged(&st.insert, &values[0]).await?;
            return Ok(());
        }
        let mut batch = Batch::new(kind);
        for _ in 0..values.len() {
            batch.append_statement(st.insert.clone());
        }
        batch.set_consistency(st.insert.get_consistency().unwrap_or_default());
        batch.set_execution_profile_handle(st.insert.get_execution_profile_handle().cloned());
        batch.set_is_idempotent(!self.counter);
        // The statements' history listener (the run's driver counters) counts the batch's
        // retries too.
        if let Some(l) = st.insert.clone().remove_history_listener() {
            batch.set_history_listener(l);
        }
        session.batch(&batch, values).await?;
        Ok(())
    }

    /// Runs read `op` of `cycle` and compares what it returned with the generator
    /// (`--verify`).
    async fn read_verified(
        p: &Prepared<Self>,
        session: &Session,
        v: &ReadVerifier,
        op: OpKind,
        cycle: u64,
    ) -> Result<(), OpError> {
        let w = &p.workload;
        let (i, part, r, bound) = w.query_binds(op, cycle);
        // Whether the bound row is known written, as of sending the read.
        let known_before = r.map(|r| row_id(part, r)).filter(|&id| v.knows(id));
        let result = session
            .execute_unpaged(&p.statements.queries[i], bound)
            .await?;
        let verdict = match (w.profile.queries.get(op.name()), check::returned(result)) {
            (None, _) => Verdict::Unchecked(check::Unchecked::NotChecked),
            (Some(q), Ok((names, rows))) => check_rows(
                &w.profile,
                w.index(),
                op.name(),
                q,
                w.queries[i].fields,
                part,
                r,
                &names,
                &rows,
                &|id| known_before == Some(id),
            ),
            (Some(_), Err(e)) => check::mismatch(
                op.name(),
                format!("{part}/?"),
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

    /// A counter row read back: its increment times the writes acknowledged, plus at most one
    /// more per write of unknown outcome — checked when no other generator row shares its key.
    fn check_counts(
        &self,
        row: RowId,
        (acked, unknown): (u64, u64),
        names: &[String],
        rows: &[Row],
    ) -> Verdict {
        let (p, r) = (row >> 32, row & 0xFFFF_FFFF);
        if self
            .index()
            .sharing_key(&self.profile, p, r)
            .is_none_or(|rows| rows != [(p, r)])
        {
            return Verdict::Matched(1);
        }
        for (i, c) in self.profile.columns.iter().enumerate() {
            if c.ty != CqlType::Counter {
                continue;
            }
            let (Some(CqlValue::Counter(d)), Some(Some(CqlValue::Counter(n)))) = (
                self.profile.values(p, r, &[i]).pop(),
                names
                    .iter()
                    .position(|x| *x == c.name)
                    .and_then(|j| rows.first().map(|row| row.columns[j].clone())),
            ) else {
                continue;
            };
            let (lo, hi) = (d.0 * acked as i64, d.0 * (acked + unknown) as i64);
            if n.0 < lo || n.0 > hi {
                let expected = if lo == hi {
                    format!("{lo} ({acked} × {})", d.0)
                } else {
                    format!(
                        "{lo}..{hi} ({acked} acknowledged + up to {unknown} unknown × {})",
                        d.0
                    )
                };
                return check::mismatch("", self.label(row), &c.name, expected, n.0.to_string());
            }
        }
        Verdict::Matched(1)
    }
}

impl Workload for ProfileWorkload {
    type Statements = ProfileStatements;

    fn new(spec: &WorkloadSpec) -> Result<ProfileWorkload, WorkloadError> {
        Ok(ProfileWorkload::from_profile(
            spec,
            crate::workload::profile_of(spec)?,
        ))
    }

    fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    fn offers(&self) -> Vec<OpKind> {
        std::iter::once(INSERT)
            .chain(self.profile.queries.keys().map(String::as_str))
            .map(|name| op_kind(&self.profile, name))
            .collect()
    }

    fn statement(&self, op: OpKind) -> Option<String> {
        match op.name() {
            INSERT => Some(self.insert_cql()),
            name => self.profile.file.queries.get(name).map(|q| q.cql.clone()),
        }
    }

    fn schema(&self) -> Schema {
        let f = &self.profile.file;
        let table = if_not_exists(f.table_definition.as_deref().unwrap_or_default());
        let extras = f.extra_definitions.iter().map(|d| if_not_exists(d));
        Schema {
            keyspace: builtin::keyspace(&self.spec),
            tables: std::iter::once(table).chain(extras).collect(),
            in_keyspace: true,
        }
    }

    async fn prepare(
        &self,
        session: &Session,
        how: &Preparer,
    ) -> Result<ProfileStatements, WorkloadError> {
        let ks = self.spec.keyspace.as_str();
        session
            .use_keyspace(ks, false)
            .await
            .map_err(|e| WorkloadError::Profile(format!("USE {ks}: {e}")))?;
        let prepare = |cql: String, writes: bool| async move {
            let mut p = session
                .prepare(cql.clone())
                .await
                .map_err(|e| WorkloadError::Profile(format!("preparing '{cql}' failed: {e}")))?;
            how.configure(&mut p, writes);
            // Counter updates and LWTs must not be retried as if idempotent.
            p.set_is_idempotent(!writes);
            Ok::<_, WorkloadError>(p)
        };
        let insert = prepare(self.insert_cql(), true).await?;
        let mut queries = Vec::new();
        for q in &self.queries {
            let cql = self.profile.file.queries[q.kind.name()].cql.clone();
            queries.push(prepare(cql, q.kind.writes()).await?);
        }
        if self.spec.verify_reads {
            // Built now rather than by the first checked read, inside the measured phase.
            self.index();
        }
        Ok(ProfileStatements { insert, queries })
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
            return Box::pin(Self::read_verified(p, session, v, op, cycle)).await;
        }
        let w = &p.workload;
        if op.name() == INSERT || rampup {
            return Ok(w.insert(&p.statements, session, cycle, rampup).await?);
        }
        let (i, _, _, bound) = w.query_binds(op, cycle);
        session
            .execute_unpaged(&p.statements.queries[i], bound)
            .await?;
        Ok(())
    }

    /// An insert's rows; a query's when it writes one row the generator knows: an `INSERT`
    /// binding one row (an LWT's too: applied or not, the row is there), or on a counter
    /// table an increment of one row.
    fn written_rows(&self, op: OpKind, cycle: u64, sequential: bool, out: &mut Vec<RowId>) {
        let name = op.name();
        if sequential || name == INSERT {
            let rows = self.plan.insert_rows(&self.profile, cycle, sequential);
            out.extend(rows.into_iter().map(|(p, r)| row_id(p, r)));
            return;
        }
        let Some(q) = self.profile.queries.get(name) else {
            return;
        };
        let fields = self.profile.file.queries[name]
            .fields
            .unwrap_or(Fields::Samerow);
        let one_row = match q.verb {
            Verb::Insert => fields == Fields::Samerow,
            Verb::Update => fields == Fields::Samerow && self.counter,
            _ => false,
        };
        if one_row {
            let (p, r) = self.plan.query_row(&self.profile, Fields::Samerow, cycle);
            out.push(row_id(p, r.expect("samerow")));
        }
    }

    fn image(&self, row: RowId) -> Vec<(&str, CqlValue)> {
        let all: Vec<usize> = (0..self.profile.columns.len()).collect();
        let names = self.profile.columns.iter().map(|c| c.name.as_str());
        names
            .zip(self.profile.values(row >> 32, row & 0xFFFF_FFFF, &all))
            .collect()
    }

    /// `SELECT * FROM <table> WHERE <every key column> = ?`.
    fn read_back(&self) -> String {
        let cond: Vec<String> = self
            .read_back
            .binds
            .iter()
            .map(|k| format!("\"{k}\" = ?"))
            .collect();
        format!(
            "SELECT * FROM {}.{} WHERE {}",
            self.spec.keyspace,
            self.profile.table.name,
            cond.join(" AND ")
        )
    }

    fn key(&self, row: RowId) -> Vec<CqlValue> {
        self.profile
            .values(row >> 32, row & 0xFFFF_FFFF, &self.key_columns)
    }

    /// The row's columns as [`check_rows`] compares them, its key possibly another
    /// generator row's too; on a counter table, each counter against its writes.
    fn check_row(
        &self,
        row: RowId,
        writes: Option<(u64, u64)>,
        names: &[String],
        rows: &[Row],
    ) -> Verdict {
        let (p, r) = (row >> 32, row & 0xFFFF_FFFF);
        let verdict = check_rows(
            &self.profile,
            self.index(),
            "",
            &self.read_back,
            Fields::Samerow,
            p,
            Some(r),
            names,
            rows,
            &|_| true,
        );
        match (verdict, writes) {
            (Verdict::Mismatch(m), _) => Verdict::Mismatch(Mismatch {
                row: self.label(row),
                ..m
            }),
            (Verdict::Matched(_), Some(writes)) => self.check_counts(row, writes, names, rows),
            (v, _) => v,
        }
    }

    fn label(&self, row: RowId) -> String {
        format!("{}/{}", row >> 32, row & 0xFFFF_FFFF)
    }

    fn verifiable(&self) -> Result<(), super::ProfileError> {
        let ops = self
            .spec
            .ratio
            .0
            .iter()
            .map(|(k, w)| (k.name().to_string(), *w))
            .collect();
        self.profile.check_verifiable(&ops)
    }

    fn accumulates(&self) -> bool {
        self.counter
    }
}
