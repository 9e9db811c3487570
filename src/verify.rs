//! `cqlbench verify RUN.json`: reads back every row the run's acknowledged-write ledger says
//! the cluster acknowledged, at a chosen consistency level, and compares it column by column
//! with what the generator wrote (row content is a pure function of the row number). Rows
//! written only by writes of unknown outcome (failed or timed out) are read too, to say how
//! many of them landed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use roaring::RoaringTreemap;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};

use crate::load::ledger::{Ledger, Mapping, Outcome};
use crate::load::session::{ConnectSpec, Credentials};
use crate::result::verify::{Difference, VERIFY_VERSION, VerifyResult};
use crate::spec::{Cl, WorkloadSpec};
use crate::workload::image;
use crate::workload::keys::Keys;

/// How many differences and missing rows the result lists.
const FIRST: usize = 10;

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
    #[error(
        "{0}: a user-profile run: verify reads back built-in workloads only (profile rows are not mapped from the ledger yet)"
    )]
    Profile(PathBuf),
    #[error(transparent)]
    Result(#[from] crate::result::ResultError),
    #[error(transparent)]
    Ledger(#[from] crate::load::ledger::LedgerError),
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
            rows.extend(cycles.iter().map(|c| keys.write_row(c, sequential)));
        }
        rows
    };
    let acked = of(Outcome::Acked);
    let unknown = of(Outcome::Unknown) - &acked;
    (acked, unknown)
}

/// What one row read back shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    Present,
    Missing,
    Different(Difference),
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
            return Check::Different(Difference {
                row: k,
                column: columns.get(i).cloned().unwrap_or_else(|| format!("#{i}")),
                expected: show(Some(want)),
                found: show(got),
            });
        }
    }
    Check::Present
}

/// A value for a difference line: blobs as a hex prefix and their length.
fn show(v: Option<&CqlValue>) -> String {
    match v {
        None => "null".into(),
        Some(CqlValue::Blob(b)) => {
            let hex: String = b.iter().take(8).map(|x| format!("{x:02x}")).collect();
            format!(
                "0x{hex}{} ({} byte{})",
                if b.len() > 8 { "…" } else { "" },
                b.len(),
                if b.len() == 1 { "" } else { "s" }
            )
        }
        Some(other) => format!("{other:?}"),
    }
}

/// Verifies the run; `progress` sees (rows checked, rows to check) now and then.
pub fn verify(
    spec: &VerifySpec,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<VerifyResult, VerifyError> {
    let run = crate::result::read_run(&spec.run)?;
    if run.workload.kind == crate::spec::WorkloadKind::Profile {
        return Err(VerifyError::Profile(spec.run.clone()));
    }
    let ledger_path = spec.run.with_extension("ledger");
    if !ledger_path.exists() {
        return Err(VerifyError::NoLedger(spec.run.clone()));
    }
    let ledger = Ledger::read(&ledger_path)?;
    let (acked, unknown) = rows(&ledger, &run.workload);
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
        let mut stmt = session
            .prepare(image::select(&run.workload))
            .await
            .map_err(|e| VerifyError::Prepare(e.to_string()))?;
        stmt.set_consistency(spec.consistency.to_driver());
        stmt.set_is_idempotent(true);
        let total = acked.len() + unknown.len();
        let ctx = Arc::new((session, stmt, run.workload.clone(), spec.attempts.max(1)));
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

type Ctx = (Arc<Session>, PreparedStatement, WorkloadSpec, u32);

/// Reads every row of `rows` with `concurrency` in flight.
async fn check_all(
    ctx: &Arc<Ctx>,
    rows: &RoaringTreemap,
    concurrency: usize,
    tick: &mut dyn FnMut(u64),
) -> Vec<(u64, Check)> {
    let columns = image::columns(&ctx.2);
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
    let (session, stmt, workload, attempts) = ctx;
    let key = image::key(workload, k);
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
    use crate::load::ledger::{LedgerWriter, Writes};
    use crate::spec::{OpKind, WorkloadKind};

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
        assert_eq!((d.row, d.column.as_str()), (7, "payload"));
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
}
