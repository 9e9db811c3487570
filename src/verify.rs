//! `cqlbench verify RUN.json`: reads back every row the run's acknowledged-write ledger says
//! the cluster acknowledged, at a chosen consistency level, and compares it column by column
//! with what the generator wrote (row content is a pure function of the row number). Rows
//! written only by writes of unknown outcome (failed or timed out) are read too, to say how
//! many of them landed.
//!
//! A user-profile run's rows are (partition, row) pairs: its inserts' cycles map to them
//! through [`RowPlan`], as do `INSERT` queries binding one row, and on a counter table the
//! increments of its `UPDATE … c = c + ?` queries. A counter row must then hold its
//! increment times the writes acknowledged, plus at most one more per write of unknown
//! outcome.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use roaring::RoaringTreemap;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};

use crate::load::session::{ConnectSpec, Credentials};
use crate::result::ledger::{Ledger, Mapping};
use crate::result::verify::{FIRST_KEPT as FIRST, Mismatch, VERIFY_VERSION, VerifyResult};
use crate::spec::{Cl, OpKind, WorkloadSpec};
use crate::stats::writes::Outcome;
use crate::workload::image;
use crate::workload::keys::Keys;
use crate::workload::profile::check::{RowIndex, check_rows, row_id};
use crate::workload::profile::cql::{CqlType, Query, Verb};
use crate::workload::profile::run::{INSERT, RowPlan};
use crate::workload::profile::{Fields, Profile};

/// What to verify and how.
#[derive(Debug, Clone)]
pub struct VerifySpec {
    pub run: PathBuf,
    pub consistency: Cl,
    /// Reads in flight.
    pub concurrency: usize,
    /// Contact points instead of the run's own.
    pub hosts: Vec<String>,
    pub credentials: Option<Credentials>,
    pub timeout: Duration,
    /// Attempts per read before it counts as unreadable.
    pub attempts: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("{0}")]
    Profile(String),
    #[error(
        "{0}: the run deleted rows (delete is in its mix): a row missing could be a delete, not a lost write, so it cannot be verified"
    )]
    Deletes(PathBuf),
    #[error(transparent)]
    Result(#[from] crate::result::ResultError),
    #[error(transparent)]
    Ledger(#[from] crate::result::ledger::LedgerError),
    #[error(
        "{0}: no write ledger next to the run result (runs before the ledger existed cannot be verified)"
    )]
    NoLedger(PathBuf),
    #[error("{0}")]
    Connect(String),
    #[error("preparing the read-back statement: {0}")]
    Prepare(String),
    #[error("starting the client runtime: {0}")]
    Runtime(std::io::Error),
}

/// The rows a ledger's cycles wrote, acknowledged and of unknown outcome only.
pub fn rows(ledger: &Ledger, workload: &WorkloadSpec) -> (RoaringTreemap, RoaringTreemap) {
    let keys = Keys::new(workload.key_dist, workload.rows);
    let of = |outcome| {
        let mut rows = RoaringTreemap::new();
        for (tag, cycles) in ledger.of(outcome) {
            let sequential = tag.mapping == Mapping::Sequential;
            match tag.op.name() {
                _ if sequential || tag.op == OpKind::Write => {
                    rows.extend(cycles.iter().map(|c| keys.write_row(c, sequential)))
                }
                "batch" => rows.extend(
                    cycles
                        .iter()
                        .flat_map(|c| crate::workload::batch_rows(&keys, c)),
                ),
                // An lwt rewrites a row only as it is; a counter writes another table.
                _ => {}
            }
        }
        rows
    };
    let acked = of(Outcome::Acked);
    let unknown = of(Outcome::Unknown) - &acked;
    (acked, unknown)
}

/// A profile run's rows (`row_id`s): acknowledged, of unknown outcome only, and on a
/// counter table each row's increments (acknowledged, unknown).
#[derive(Debug, Default)]
pub struct ProfileRows {
    pub acked: RoaringTreemap,
    pub unknown: RoaringTreemap,
    pub increments: std::collections::HashMap<u64, (u64, u64)>,
}

/// Maps a profile run's ledger to rows.
pub fn profile_rows(ledger: &Ledger, profile: &Profile, workload: &WorkloadSpec) -> ProfileRows {
    let plan = RowPlan::new(profile, workload);
    let counter = profile.columns.iter().any(|c| c.ty == CqlType::Counter);
    let mut out = ProfileRows::default();
    for outcome in [Outcome::Acked, Outcome::Unknown] {
        let mut rows = RoaringTreemap::new();
        for (tag, cycles) in ledger.of(outcome) {
            let sequential = tag.mapping == Mapping::Sequential;
            let name = tag.op.name();
            let query = profile.queries.get(name).map(|q| {
                let fields = profile.file.queries[name].fields.unwrap_or(Fields::Samerow);
                (q.verb, fields)
            });
            for c in cycles.iter() {
                let written = if sequential || name == INSERT {
                    plan.insert_rows(profile, c, sequential)
                } else {
                    match query {
                        // One row's INSERT (an LWT's too: applied or not, the row is there).
                        Some((Verb::Insert, Fields::Samerow)) => {
                            let (p, r) = plan.query_row(profile, Fields::Samerow, c);
                            vec![(p, r.expect("samerow"))]
                        }
                        // A counter increment of one row.
                        Some((Verb::Update, Fields::Samerow)) if counter => {
                            let (p, r) = plan.query_row(profile, Fields::Samerow, c);
                            vec![(p, r.expect("samerow"))]
                        }
                        _ => Vec::new(),
                    }
                };
                for (p, r) in written {
                    let id = row_id(p, r);
                    rows.insert(id);
                    if counter {
                        let e = out.increments.entry(id).or_default();
                        match outcome {
                            Outcome::Acked => e.0 += 1,
                            Outcome::Unknown => e.1 += 1,
                        }
                    }
                }
            }
        }
        match outcome {
            Outcome::Acked => out.acked = rows,
            Outcome::Unknown => out.unknown = rows,
        }
    }
    out.unknown -= &out.acked;
    out
}

/// What a profile verification reads rows with.
pub struct ProfileCheck {
    pub profile: Profile,
    pub index: RowIndex,
    /// The primary key's columns (indices, in the read's marker order).
    pub keys: Vec<usize>,
    /// The read: every primary-key column bound with `=`.
    pub query: Query,
    pub increments: std::collections::HashMap<u64, (u64, u64)>,
}

impl ProfileCheck {
    pub fn new(profile: Profile, partitions: u64, rows: &ProfileRows) -> ProfileCheck {
        let t = &profile.table;
        let key_names: Vec<String> = t
            .partition_key
            .iter()
            .chain(&t.clustering)
            .cloned()
            .collect();
        let keys = key_names.iter().map(|k| profile.index_of(k)).collect();
        let query = Query {
            verb: Verb::Select,
            binds: key_names.clone(),
            lwt: false,
            equal: key_names,
            only_equalities: true,
            limit: None,
        };
        ProfileCheck {
            index: RowIndex::new(&profile, partitions),
            profile,
            keys,
            query,
            increments: rows.increments.clone(),
        }
    }

    /// `SELECT * FROM <table> WHERE <every key column> = ?`.
    pub fn select(&self, keyspace: &str) -> String {
        let cond: Vec<String> = self
            .query
            .binds
            .iter()
            .map(|k| format!("\"{k}\" = ?"))
            .collect();
        format!(
            "SELECT * FROM {keyspace}.{} WHERE {}",
            self.profile.table.name,
            cond.join(" AND ")
        )
    }

    /// Row `id`'s key values.
    pub fn key(&self, id: u64) -> Vec<CqlValue> {
        self.profile.values(id >> 32, id & 0xFFFF_FFFF, &self.keys)
    }

    /// Compares what the read of row `id` returned with the generator.
    pub fn compare(&self, id: u64, names: &[String], rows: &[Row]) -> Check {
        let (p, r) = (id >> 32, id & 0xFFFF_FFFF);
        let verdict = check_rows(
            &self.profile,
            &self.index,
            "verify",
            &self.query,
            Fields::Samerow,
            p,
            Some(r),
            names,
            rows,
            &|_| true,
        );
        let difference = |column: String, expected: String, found: String| {
            Check::Different(Mismatch {
                op: String::new(),
                row: format!("{p}/{r}"),
                column,
                expected,
                found,
            })
        };
        match verdict {
            crate::workload::check::Verdict::Matched(_) => {}
            crate::workload::check::Verdict::Unchecked => {
                return Check::Unreadable("the row read back could not be identified".into());
            }
            crate::workload::check::Verdict::Mismatch(m) if m.row_missing() => {
                return Check::Missing;
            }
            crate::workload::check::Verdict::Mismatch(m) => {
                return difference(m.column, m.expected, m.found);
            }
        }
        // Counters: the increment times the writes, when no other row shares the key.
        let Some(&(acked, unknown)) = self.increments.get(&id) else {
            return Check::Present;
        };
        if self
            .index
            .sharing_key(&self.profile, p, r)
            .is_none_or(|rows| rows != [(p, r)])
        {
            return Check::Present;
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
                return difference(c.name.clone(), expected, n.0.to_string());
            }
        }
        Check::Present
    }
}

/// What one row read back shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    Present,
    Missing,
    Different(Mismatch),
    Unreadable(String),
}

/// Compares a row as read with what row `k` must hold.
pub fn compare(columns: &[String], k: u64, expected: &[CqlValue], found: Option<&Row>) -> Check {
    let Some(row) = found else {
        return Check::Missing;
    };
    for (i, want) in expected.iter().enumerate() {
        let got = row.columns.get(i).and_then(|c| c.as_ref());
        if got != Some(want) {
            return Check::Different(Mismatch {
                op: String::new(),
                row: k.to_string(),
                column: columns.get(i).cloned().unwrap_or_else(|| format!("#{i}")),
                expected: show(Some(want)),
                found: show(got),
            });
        }
    }
    Check::Present
}

use crate::workload::check::show;

/// Verifies the run; `progress` sees (rows checked, rows to check) now and then.
pub fn verify(
    spec: &VerifySpec,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<VerifyResult, VerifyError> {
    let run = crate::result::read_run(&spec.run)?;
    if crate::workload::mixes(&run.workload, "delete") {
        return Err(VerifyError::Deletes(spec.run.clone()));
    }
    let ledger_path = spec.run.with_extension("ledger");
    if !ledger_path.exists() {
        return Err(VerifyError::NoLedger(spec.run.clone()));
    }
    let ledger = Ledger::read(&ledger_path)?;
    let (acked, unknown, profile) = if run.workload.kind == crate::spec::WorkloadKind::Profile {
        let p = crate::workload::profile_of(&run.workload)
            .map_err(|e| VerifyError::Profile(format!("{}: {e}", spec.run.display())))?;
        // A mix that deletes rows or writes other rows' values leaves rows the generator
        // cannot tell.
        let ops = run
            .workload
            .ratio
            .0
            .iter()
            .map(|(k, w)| (k.name().to_string(), *w))
            .collect();
        p.check_verifiable(&ops)
            .map_err(|e| VerifyError::Profile(format!("{}: {e}", spec.run.display())))?;
        let rows = profile_rows(&ledger, &p, &run.workload);
        let check = ProfileCheck::new(p, run.workload.rows.max(1), &rows);
        (rows.acked, rows.unknown, Some(check))
    } else {
        let (a, u) = rows(&ledger, &run.workload);
        (a, u, None)
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(VerifyError::Runtime)?;
    let t0 = Instant::now();
    let hosts = if spec.hosts.is_empty() {
        run.target.hosts.clone()
    } else {
        spec.hosts.clone()
    };
    let connect = ConnectSpec {
        hosts,
        local_dc: run.target.local_dc.clone(),
        timeout: spec.timeout,
        credentials: spec.credentials.clone(),
    };
    let (acked_checks, unknown_checks) = rt.block_on(async {
        let session = crate::load::session::connect(&connect)
            .await
            .map_err(|e| VerifyError::Connect(e.to_string()))?;
        let select = match &profile {
            Some(p) => p.select(&run.workload.keyspace),
            None => image::select(&run.workload),
        };
        let mut stmt = session
            .prepare(select)
            .await
            .map_err(|e| VerifyError::Prepare(e.to_string()))?;
        stmt.set_consistency(spec.consistency.to_driver());
        stmt.set_is_idempotent(true);
        let total = acked.len() + unknown.len();
        let ctx = Arc::new(Ctx {
            session,
            stmt,
            workload: run.workload.clone(),
            attempts: spec.attempts.max(1),
            profile,
        });
        let mut done = 0u64;
        let mut last = Instant::now();
        let mut tick = |n: u64| {
            done += n;
            if last.elapsed() >= Duration::from_secs(2) {
                progress(done, total);
                last = Instant::now();
            }
        };
        let a = check_all(&ctx, &acked, spec.concurrency, &mut tick).await;
        let u = check_all(&ctx, &unknown, spec.concurrency, &mut tick).await;
        progress(done, total);
        Ok::<_, VerifyError>((a, u))
    })?;
    let mut r = VerifyResult {
        schema_version: VERIFY_VERSION,
        kind: "verify".into(),
        run: spec.run.clone(),
        consistency: spec.consistency,
        write_consistency: run.workload.write_cl,
        ledger_truncated: ledger.truncated,
        acked_writes: ledger.count(Outcome::Acked),
        acked_rows: acked.len(),
        present: 0,
        missing: 0,
        different: 0,
        unreadable: 0,
        unknown_writes: ledger.count(Outcome::Unknown),
        unknown_rows: unknown.len(),
        unknown_landed: 0,
        first_differences: Vec::new(),
        first_missing: Vec::new(),
        elapsed_s: 0.0,
        profile_rows: run.workload.kind == crate::spec::WorkloadKind::Profile,
    };
    // Reads complete out of order: the first rows listed are the lowest-numbered ones.
    let mut acked_checks = acked_checks;
    acked_checks.sort_unstable_by_key(|(k, _)| *k);
    for (k, c) in acked_checks {
        match c {
            Check::Present => r.present += 1,
            Check::Missing => {
                r.missing += 1;
                if r.first_missing.len() < FIRST {
                    r.first_missing.push(k);
                }
            }
            Check::Different(d) => {
                r.different += 1;
                if r.first_differences.len() < FIRST {
                    r.first_differences.push(d);
                }
            }
            Check::Unreadable(_) => r.unreadable += 1,
        }
    }
    r.unknown_landed = unknown_checks
        .iter()
        .filter(|(_, c)| *c == Check::Present)
        .count() as u64;
    r.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(r)
}

/// What every read of a verification shares.
struct Ctx {
    session: Arc<Session>,
    stmt: PreparedStatement,
    workload: WorkloadSpec,
    attempts: u32,
    profile: Option<ProfileCheck>,
}

/// Reads every row of `rows` with `concurrency` in flight.
async fn check_all(
    ctx: &Arc<Ctx>,
    rows: &RoaringTreemap,
    concurrency: usize,
    tick: &mut dyn FnMut(u64),
) -> Vec<(u64, Check)> {
    let columns = image::columns(&ctx.workload);
    let mut out = Vec::with_capacity(rows.len() as usize);
    let mut stream = futures::stream::iter(rows.iter())
        .map(|k| {
            let ctx = ctx.clone();
            let columns = columns.clone();
            async move { (k, check_one(&ctx, &columns, k).await) }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some(x) = stream.next().await {
        tick(1);
        out.push(x);
    }
    out
}

async fn check_one(ctx: &Ctx, columns: &[String], k: u64) -> Check {
    let Ctx {
        session,
        stmt,
        workload,
        attempts,
        profile,
    } = ctx;
    let key = match profile {
        Some(p) => p.key(k),
        None => image::key(workload, k),
    };
    let mut last_error = String::new();
    for attempt in 0..*attempts {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200 << attempt.min(4))).await;
        }
        let rows = match session.execute_unpaged(stmt, &key).await {
            Ok(r) => r,
            Err(e) => {
                last_error = e.to_string();
                continue;
            }
        };
        if let Some(p) = profile {
            match crate::workload::returned(rows) {
                Ok((names, rows)) => return p.compare(k, &names, &rows),
                Err(e) => {
                    last_error = e;
                    continue;
                }
            }
        }
        let first = rows
            .into_rows_result()
            .map_err(|e| e.to_string())
            .and_then(|r| r.maybe_first_row::<Row>().map_err(|e| e.to_string()));
        match first {
            Ok(row) => return compare(columns, k, &image::expected(workload, k), row.as_ref()),
            Err(e) => last_error = e,
        }
    }
    Check::Unreadable(last_error)
}

/// Writes the verification next to the run.
pub fn write(r: &VerifyResult, run: &Path) -> Result<PathBuf, crate::result::ResultError> {
    let path = VerifyResult::path_for(run);
    crate::result::file::write(&path, r)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ledger::LedgerWriter;
    use crate::spec::{OpKind, WorkloadKind};
    use crate::stats::writes::Writes;
    use crate::workload::profile::run::RowPlan;

    /// Acknowledged writes of `cycles`.
    fn acked(cycles: std::ops::Range<u64>) -> Writes {
        let mut w = Writes::default();
        for c in cycles {
            w.record(OpKind::Write, c, Outcome::Acked);
        }
        w
    }

    #[test]
    fn cycles_map_to_rows_as_the_writes_chose_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.ledger");
        let mut l = LedgerWriter::create(&path).unwrap();
        l.append("rampup", Mapping::Sequential, &acked(0..100))
            .unwrap();
        let mut w = acked(0..50);
        w.record(OpKind::Write, 50, Outcome::Unknown);
        l.append("main", Mapping::Hashed, &w).unwrap();
        let mut spec = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
        spec.rows = 1000;
        let (acked, unknown) = rows(&Ledger::read(&path).unwrap(), &spec);
        // Rampup wrote rows 0..100; the main phase's 50 hashed writes land anywhere in 0..1000.
        assert!((0..100).all(|k| acked.contains(k)));
        let keys = Keys::new(spec.key_dist, 1000);
        let hashed: RoaringTreemap = (0..50).map(|c| keys.write_row(c, false)).collect();
        assert!(hashed.iter().all(|k| acked.contains(k)));
        assert_eq!(
            acked.len(),
            (hashed | (0..100).collect::<RoaringTreemap>()).len()
        );
        let u = keys.write_row(50, false);
        assert_eq!(unknown.len(), u64::from(!acked.contains(u)));
    }

    #[test]
    fn main_phase_writes_map_to_rows_through_the_runs_key_distribution() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.ledger");
        let mut l = LedgerWriter::create(&path).unwrap();
        l.append("main", Mapping::Hashed, &acked(0..2000)).unwrap();
        let ledger = Ledger::read(&path).unwrap();
        let mut spec = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
        spec.rows = 100_000;
        spec.key_dist = "zipf:1.2".parse().unwrap();
        let (zipf, _) = rows(&ledger, &spec);
        let keys = Keys::new(spec.key_dist, spec.rows);
        let want: RoaringTreemap = (0..2000).map(|c| keys.write_row(c, false)).collect();
        assert_eq!(zipf, want);
        // Skewed: 2,000 zipfian writes touch far fewer rows than 2,000 uniform ones.
        spec.key_dist = Default::default();
        let (uniform, _) = rows(&ledger, &spec);
        assert!(
            zipf.len() * 2 < uniform.len(),
            "{} vs {}",
            zipf.len(),
            uniform.len()
        );
        assert!(zipf.contains(0), "the hottest key was written");
    }

    #[test]
    fn a_row_is_present_missing_or_different() {
        let spec = WorkloadSpec::defaults(WorkloadKind::Iot);
        let cols = image::columns(&spec);
        let want = image::expected(&spec, 7);
        let row = |v: Vec<CqlValue>| Row {
            columns: v.into_iter().map(Some).collect(),
        };
        assert_eq!(
            compare(&cols, 7, &want, Some(&row(want.clone()))),
            Check::Present
        );
        assert_eq!(compare(&cols, 7, &want, None), Check::Missing);
        let mut changed = want.clone();
        if let CqlValue::Blob(b) = &mut changed[1] {
            b[3] ^= 1;
        }
        let Check::Different(d) = compare(&cols, 7, &want, Some(&row(changed))) else {
            panic!("a changed byte is a difference");
        };
        assert_eq!((d.row.as_str(), d.column.as_str()), ("7", "payload"));
        assert_ne!(d.expected, d.found);
        assert!(
            d.expected
                .ends_with(&format!("({} bytes)", spec.value_size))
        );
        // Another row's values are not this row's.
        let other = image::expected(&spec, 8);
        assert!(matches!(
            compare(&cols, 7, &want, Some(&row(other))),
            Check::Different(_)
        ));
    }

    #[test]
    fn profile_cycles_map_to_rows_and_counter_increments() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/counters.yaml");
        let profile = Profile::load(&path).unwrap();
        let mut spec = WorkloadSpec::defaults(WorkloadKind::Profile);
        spec.rows = 10;
        let (_, chunks) = profile.rampup_chunks();
        let dir = tempfile::tempdir().unwrap();
        let lp = dir.path().join("c.ledger");
        let mut l = LedgerWriter::create(&lp).unwrap();
        l.append("rampup", Mapping::Sequential, &acked(0..10 * chunks))
            .unwrap();
        let view = OpKind::profile_op("view", true);
        let mut w = Writes::default();
        for c in 0..50 {
            w.record(view, c, Outcome::Acked);
        }
        w.record(view, 50, Outcome::Unknown);
        l.append("main", Mapping::Hashed, &w).unwrap();
        let ledger = Ledger::read(&lp).unwrap();
        let rows = profile_rows(&ledger, &profile, &spec);
        // Rampup wrote every row of the 10 partitions once.
        let all: u64 = (0..10)
            .map(|p| profile.rows_in(p).iter().product::<u64>())
            .sum();
        assert_eq!(rows.acked.len(), all);
        let plan = RowPlan::new(&profile, &spec);
        let (p, r) = plan.query_row(&profile, Fields::Samerow, 7);
        let id = row_id(p, r.unwrap());
        let views = (0..50)
            .filter(|&c| plan.query_row(&profile, Fields::Samerow, c) == (p, r))
            .count() as u64;
        assert_eq!(rows.increments[&id].0, 1 + views);
        let (p50, r50) = plan.query_row(&profile, Fields::Samerow, 50);
        assert_eq!(rows.increments[&row_id(p50, r50.unwrap())].1, 1);
        // A row only an unknown write touched is not in the acknowledged set: none here, as
        // rampup wrote them all.
        assert!(rows.unknown.is_empty());
    }
}
