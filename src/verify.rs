//! `cqlbench verify RUN.json`: reads back every row the run's acknowledged-write ledger says
//! the cluster acknowledged, at a chosen consistency level, and compares it column by column
//! with what the generator wrote (row content is a pure function of the row number). Rows
//! written only by writes of unknown outcome (failed or timed out) are read too, to say how
//! many of them landed.
//!
//! The run's workload ([`crate::workload::with`]) says which rows each cycle wrote
//! ([`Workload::written_rows`]), how to read one back and what it must hold
//! ([`Workload::check_row`], the comparison `--verify` makes too). A user-profile run's rows
//! are (partition, row) pairs; on a counter table a row must hold its increment times the
//! writes acknowledged, plus at most one more per write of unknown outcome.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use roaring::RoaringTreemap;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;

use crate::load::session::{ConnectSpec, Credentials};
use crate::result::RunResult;
use crate::result::ledger::{Ledger, Mapping};
use crate::result::verify::{FIRST_KEPT as FIRST, Mismatch, VERIFY_VERSION, VerifyResult};
use crate::spec::Cl;
use crate::stats::writes::Outcome;
use crate::workload::check::{RowId, Verdict, returned};
use crate::workload::{Visit, Workload};

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
    /// The run's workload cannot be built again from what the result carries.
    #[error("{}: {source}", run.display())]
    Workload {
        run: PathBuf,
        source: crate::workload::WorkloadError,
    },
    /// The run's mix leaves rows the generator cannot tell.
    #[error("{}: {source}", run.display())]
    Unverifiable {
        run: PathBuf,
        source: crate::workload::profile::ProfileError,
    },
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
    #[error(
        "{ledger}: written by another run (ledger id {found}) than {run} (ledger id {expected}): a ledger left from another run is not read; verify the run that wrote it"
    )]
    OtherRun {
        ledger: PathBuf,
        run: PathBuf,
        found: String,
        expected: String,
    },
    #[error(transparent)]
    Connect(#[from] crate::load::session::ConnectError),
    #[error("preparing the read-back statement: {0}")]
    Prepare(#[from] scylla::errors::PrepareError),
    #[error("starting the client runtime: {0}")]
    Runtime(std::io::Error),
}

/// The rows a ledger's cycles wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Rows an acknowledged write wrote.
    pub acked: RoaringTreemap,
    /// Rows only writes of unknown outcome wrote.
    pub unknown: RoaringTreemap,
    /// When the workload [`Workload::accumulates`]: each row's writes (acknowledged, unknown).
    pub writes: HashMap<RowId, (u64, u64)>,
}

/// Maps a ledger's cycles to the rows they wrote.
pub fn written<W: Workload>(w: &W, ledger: &Ledger) -> Written {
    let count = w.accumulates();
    let mut out = Written::default();
    let mut rows = Vec::new();
    for outcome in [Outcome::Acked, Outcome::Unknown] {
        let mut set = RoaringTreemap::new();
        for (tag, cycles) in ledger.of(outcome) {
            let sequential = tag.mapping == Mapping::Sequential;
            for c in cycles.iter() {
                rows.clear();
                w.written_rows(tag.op, c, sequential, &mut rows);
                for &id in &rows {
                    set.insert(id);
                    if count {
                        let e = out.writes.entry(id).or_default();
                        match outcome {
                            Outcome::Acked => e.0 += 1,
                            Outcome::Unknown => e.1 += 1,
                        }
                    }
                }
            }
        }
        match outcome {
            Outcome::Acked => out.acked = set,
            Outcome::Unknown => out.unknown = set,
        }
    }
    out.unknown -= &out.acked;
    out
}

/// What one row read back shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    Present,
    Missing,
    Different(Mismatch),
    Unreadable(String),
}

impl Check {
    /// What the workload's comparison of the row read back said.
    pub fn of(v: Verdict) -> Check {
        match v {
            Verdict::Matched(_) => Check::Present,
            Verdict::Unchecked(_) => {
                Check::Unreadable("the row read back could not be identified".into())
            }
            Verdict::Mismatch(m) if m.row_missing() => Check::Missing,
            Verdict::Mismatch(m) => Check::Different(m),
        }
    }
}

/// Verifies the run; `progress` sees (rows checked, rows to check) now and then.
pub fn verify(
    spec: &VerifySpec,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<VerifyResult, VerifyError> {
    let run = crate::result::read_run(&spec.run)?;
    if run.workload.ratio.has("delete") {
        return Err(VerifyError::Deletes(spec.run.clone()));
    }
    let ledger_path = spec.run.with_extension("ledger");
    if !ledger_path.exists() {
        return Err(VerifyError::NoLedger(spec.run.clone()));
    }
    let ledger = Ledger::read(&ledger_path)?;
    // A ledger names the run that wrote it; one from another run gives no verdict on this one.
    // (A run result or a ledger from before ids were recorded cannot be matched.)
    if let (Some(expected), Some(found)) = (&run.ledger_id, &ledger.id)
        && expected != found
    {
        return Err(VerifyError::OtherRun {
            ledger: ledger_path,
            run: spec.run.clone(),
            found: found.clone(),
            expected: expected.clone(),
        });
    }
    if run.ledger_id.is_some() != ledger.id.is_some() {
        return Err(VerifyError::OtherRun {
            ledger: ledger_path,
            run: spec.run.clone(),
            found: ledger.id.clone().unwrap_or_else(|| "none".into()),
            expected: run.ledger_id.clone().unwrap_or_else(|| "none".into()),
        });
    }
    let verifying = Verifying {
        spec,
        run: &run,
        ledger: &ledger,
        progress,
    };
    crate::workload::with(&run.workload, verifying).map_err(|source| VerifyError::Workload {
        run: spec.run.clone(),
        source,
    })?
}

/// A verification waiting for the run's workload.
struct Verifying<'a> {
    spec: &'a VerifySpec,
    run: &'a RunResult,
    ledger: &'a Ledger,
    progress: &'a mut dyn FnMut(u64, u64),
}

impl Visit for Verifying<'_> {
    type Output = Result<VerifyResult, VerifyError>;

    fn visit<W: Workload>(self, w: W) -> Self::Output {
        let Verifying {
            spec,
            run,
            ledger,
            progress,
        } = self;
        // A mix that deletes rows or writes other rows' values leaves rows the generator
        // cannot tell.
        w.verifiable().map_err(|source| VerifyError::Unverifiable {
            run: spec.run.clone(),
            source,
        })?;
        let rows = written(&w, ledger);
        let t0 = Instant::now();
        let (acked, unknown) = read_back(spec, run, w, &rows, progress)?;
        let mut r = tally(spec, run, ledger, &rows, acked, &unknown);
        r.elapsed_s = t0.elapsed().as_secs_f64();
        Ok(r)
    }
}

/// Reads back every row acknowledged, then every row of unknown outcome only.
type Checked = Vec<(RowId, Check)>;

fn read_back<W: Workload>(
    spec: &VerifySpec,
    run: &RunResult,
    workload: W,
    rows: &Written,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Checked, Checked), VerifyError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(VerifyError::Runtime)?;
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
        // The run's TLS (its files read again), with the driver's default settings.
        client: crate::spec::client::ClientSpec {
            tls: run.fingerprint.client.as_ref().and_then(|c| c.tls.clone()),
            // Its address map too: the nodes are where the run reached them.
            driver: crate::spec::client::DriverSpec {
                address_map: run
                    .fingerprint
                    .client
                    .as_ref()
                    .map(|c| c.driver.address_map.clone())
                    .unwrap_or_default(),
                ..Default::default()
            },
        },
    };
    rt.block_on(async {
        let session = crate::load::session::connect(&connect).await?;
        let mut stmt = session.prepare(workload.read_back()).await?;
        stmt.set_consistency(spec.consistency.to_driver());
        stmt.set_is_idempotent(true);
        let total = rows.acked.len() + rows.unknown.len();
        let writes = rows.writes.clone();
        let ctx = Arc::new(Ctx {
            session,
            stmt,
            workload,
            attempts: spec.attempts.max(1),
            writes,
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
        let a = check_all(&ctx, &rows.acked, spec.concurrency, &mut tick).await;
        let u = check_all(&ctx, &rows.unknown, spec.concurrency, &mut tick).await;
        progress(done, total);
        Ok::<_, VerifyError>((a, u))
    })
}

/// The verification's figures from what the reads showed.
fn tally(
    spec: &VerifySpec,
    run: &RunResult,
    ledger: &Ledger,
    rows: &Written,
    mut acked: Checked,
    unknown: &Checked,
) -> VerifyResult {
    let mut r = VerifyResult {
        schema_version: VERIFY_VERSION,
        kind: "verify".into(),
        run: spec.run.clone(),
        consistency: spec.consistency,
        write_consistency: run.workload.write_cl,
        ledger_truncated: ledger.truncated,
        acked_writes: ledger.count(Outcome::Acked),
        acked_rows: rows.acked.len(),
        present: 0,
        missing: 0,
        different: 0,
        unreadable: 0,
        unknown_writes: ledger.count(Outcome::Unknown),
        unknown_rows: rows.unknown.len(),
        unknown_landed: 0,
        first_differences: Vec::new(),
        first_missing: Vec::new(),
        elapsed_s: 0.0,
        profile_rows: run.workload.kind == crate::spec::WorkloadKind::Profile,
    };
    // Reads complete out of order: the first rows listed are the lowest-numbered ones.
    acked.sort_unstable_by_key(|(k, _)| *k);
    for (k, c) in acked {
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
    r.unknown_landed = unknown.iter().filter(|(_, c)| *c == Check::Present).count() as u64;
    r
}

/// What every read of a verification shares.
struct Ctx<W> {
    session: Arc<Session>,
    stmt: PreparedStatement,
    workload: W,
    attempts: u32,
    /// Writes per row, for a workload that accumulates them.
    writes: HashMap<RowId, (u64, u64)>,
}

/// Reads every row of `rows` with `concurrency` in flight.
async fn check_all<W: Workload>(
    ctx: &Arc<Ctx<W>>,
    rows: &RoaringTreemap,
    concurrency: usize,
    tick: &mut dyn FnMut(u64),
) -> Checked {
    let mut out = Vec::with_capacity(rows.len() as usize);
    let mut stream = futures::stream::iter(rows.iter())
        .map(|k| {
            let ctx = ctx.clone();
            async move { (k, check_one(&ctx, k).await) }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some(x) = stream.next().await {
        tick(1);
        out.push(x);
    }
    out
}

async fn check_one<W: Workload>(ctx: &Ctx<W>, id: RowId) -> Check {
    let key = ctx.workload.key(id);
    let mut last_error = String::new();
    for attempt in 0..ctx.attempts {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200 << attempt.min(4))).await;
        }
        let result = match ctx.session.execute_unpaged(&ctx.stmt, &key).await {
            Ok(r) => r,
            Err(e) => {
                last_error = e.to_string();
                continue;
            }
        };
        match returned(result) {
            Ok((names, rows)) => {
                let writes = ctx.writes.get(&id).copied();
                return Check::of(ctx.workload.check_row(id, writes, &names, &rows));
            }
            Err(e) => last_error = e.to_string(),
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
    use scylla::value::{CqlValue, Row};

    use crate::spec::{OpKind, WorkloadKind, WorkloadSpec};
    use crate::stats::writes::Writes;
    use crate::workload::iot::Iot;
    use crate::workload::keys::Keys;
    use crate::workload::keyvalue::Keyvalue;
    use crate::workload::profile::check::row_id;
    use crate::workload::profile::run::RowPlan;
    use crate::workload::profile::{Fields, Profile, ProfileWorkload};

    /// The rows a keyvalue run of `spec` wrote: acknowledged, of unknown outcome only.
    fn rows(ledger: &Ledger, spec: &WorkloadSpec) -> (RoaringTreemap, RoaringTreemap) {
        let w = written(&Keyvalue::new(spec).unwrap(), ledger);
        (w.acked, w.unknown)
    }

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
        let mut l = LedgerWriter::create(&path, "t").unwrap();
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
        let mut l = LedgerWriter::create(&path, "t").unwrap();
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
        let iot = Iot::new(&spec).unwrap();
        // What the read-back statement returns: the value columns.
        let cols: Vec<String> = ["value", "payload"].map(String::from).to_vec();
        let want: Vec<CqlValue> = iot.image(7).into_iter().skip(2).map(|(_, v)| v).collect();
        let row = |v: Vec<CqlValue>| Row {
            columns: v.into_iter().map(Some).collect(),
        };
        let compare = |found: &[Row]| Check::of(iot.check_row(7, None, &cols, found));
        assert_eq!(compare(&[row(want.clone())]), Check::Present);
        assert_eq!(compare(&[]), Check::Missing);
        let mut changed = want.clone();
        if let CqlValue::Blob(b) = &mut changed[1] {
            b[3] ^= 1;
        }
        let Check::Different(d) = compare(&[row(changed)]) else {
            panic!("a changed byte is a difference");
        };
        assert_eq!((d.row.as_str(), d.column.as_str()), ("7", "payload"));
        assert_ne!(d.expected, d.found);
        assert!(
            d.expected
                .ends_with(&format!("({} bytes)", spec.value_size))
        );
        // Another row's values are not this row's.
        let other = iot.image(8).into_iter().skip(2).map(|(_, v)| v).collect();
        assert!(matches!(compare(&[row(other)]), Check::Different(_)));
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
        let mut l = LedgerWriter::create(&lp, "t").unwrap();
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
        let rows = written(
            &ProfileWorkload::from_profile(&spec, profile.clone()),
            &ledger,
        );
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
        assert_eq!(rows.writes[&id].0, 1 + views);
        let (p50, r50) = plan.query_row(&profile, Fields::Samerow, 50);
        assert_eq!(rows.writes[&row_id(p50, r50.unwrap())].1, 1);
        // A row only an unknown write touched is not in the acknowledged set: none here, as
        // rampup wrote them all.
        assert!(rows.unknown.is_empty());
    }
}
