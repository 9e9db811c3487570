//! The runs index (`cqlbench runs`): every result file (runs, shards, capacity searches,
//! probes, verifications, scaling series) under the directories it knows, kept in an embedded
//! SQLite database (`catalogue.sqlite` under the cqlbench home: the name it had when this was
//! called the results catalogue, kept so that ids survive). The files stay the source of
//! truth: each listing first brings the index up to date with them (files added, changed by
//! size or modification time, or gone), so deleting the database loses nothing but the ids.
//! Ids are never reused.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};

use crate::error::Invalid;
use crate::result::{ResultFile, RunStatus};

/// The database's file name under the cqlbench home.
pub const FILE: &str = "catalogue.sqlite";

/// Where probes are kept under the cqlbench home.
pub const PROBES_DIR: &str = "probes";

/// The directories of the cqlbench home the index always searches.
pub const HOME_DIRS: [&str; 3] = ["results", "scenarios", PROBES_DIR];

/// Directory levels below a root that are searched for results.
const MAX_DEPTH: usize = 6;

/// The index's layout; a database of another version is an older index, made again.
const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS roots (dir TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    kind TEXT NOT NULL,
    env TEXT NOT NULL,
    workload TEXT NOT NULL,
    started_unix_s INTEGER NOT NULL,
    status TEXT NOT NULL,
    ops_per_s REAL,
    p99_ms REAL,
    cassandra TEXT,
    tags TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS results_started ON results (started_unix_s);
";

/// One result as the index holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: i64,
    pub path: PathBuf,
    /// run, shard, capacity, probe, verify or scaling.
    pub kind: String,
    pub env: String,
    /// The workload's label (a probe's: its directory; a verification's: the run it read).
    pub workload: String,
    pub started_unix_s: i64,
    /// completed, running, interrupted, too_many_errors, failed (probes: complete/incomplete;
    /// verifications: ok or failed).
    pub status: String,
    /// Headline throughput: a run's main phase; a capacity search's highest passing ops/s.
    pub ops_per_s: Option<f64>,
    /// A run's main-phase response p99 over all kinds.
    pub p99_ms: Option<f64>,
    pub cassandra: Option<String>,
    /// A run's tags (`--tag`).
    pub tags: Vec<String>,
}

/// What a listing keeps: every field given must match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub kind: Option<String>,
    pub env: Option<String>,
    /// A part of the workload's label.
    pub workload: Option<String>,
    pub status: Option<String>,
    pub since_unix_s: Option<i64>,
    /// Carrying this tag.
    pub tag: Option<String>,
    /// The latest N.
    pub last: Option<usize>,
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Synced {
    pub added: usize,
    pub updated: usize,
    pub removed: usize,
    /// JSON files under the roots that are not results cqlbench reads.
    pub skipped: usize,
}

pub struct RunsIndex {
    conn: Connection,
}

fn db(path: &Path, e: rusqlite::Error) -> Invalid {
    crate::invalid!("the runs index {}: {e}", path.display())
}

/// Every status an indexed result can have (runs, capacity searches, probes,
/// verifications).
pub const STATUSES: [&str; 8] = [
    "completed",
    "running",
    "interrupted",
    "too_many_errors",
    "failed",
    "complete",
    "incomplete",
    "ok",
];

/// `--status`: one of [`STATUSES`].
pub fn parse_status(s: &str) -> Result<String, crate::error::Invalid> {
    let t = s.trim().to_ascii_lowercase();
    match STATUSES.contains(&t.as_str()) {
        true => Ok(t),
        false => Err(crate::invalid!(
            "'{s}' is not a status: give one of {}",
            STATUSES.join(", ")
        )),
    }
}

fn status_word(s: &RunStatus) -> &'static str {
    match s {
        RunStatus::Running => "running",
        RunStatus::Completed => "completed",
        RunStatus::Interrupted => "interrupted",
        RunStatus::TooManyErrors => "too_many_errors",
        RunStatus::Failed { .. } => "failed",
    }
}

fn capacity_status(s: &crate::result::capacity::CapacityStatus) -> &'static str {
    use crate::result::capacity::CapacityStatus as S;
    match s {
        S::Running => "running",
        S::Completed => "completed",
        S::Interrupted => "interrupted",
        S::Failed { .. } => "failed",
    }
}

/// The entry of a result file (id 0 until stored).
pub fn entry_of(path: &Path, file: &ResultFile) -> Entry {
    let base = |kind: &str, env: &str, workload: String, started: u64, status: &str| Entry {
        id: 0,
        path: path.to_path_buf(),
        kind: kind.into(),
        env: env.into(),
        workload,
        started_unix_s: started as i64,
        status: status.into(),
        ops_per_s: None,
        p99_ms: None,
        cassandra: None,
        tags: Vec::new(),
    };
    match file {
        ResultFile::Run(r) => {
            let kind = if r.shard.is_some() { "shard" } else { "run" };
            let main = r.main_summary();
            Entry {
                ops_per_s: main.map(|m| m.ops_per_s),
                p99_ms: main
                    .filter(|m| m.all.response.count > 0)
                    .map(|m| m.all.response.p99_ms),
                cassandra: r.fingerprint.cassandra_version.clone(),
                tags: r.tags.clone(),
                ..base(
                    kind,
                    &r.env,
                    r.workload.label(),
                    r.started_unix_s,
                    status_word(&r.status),
                )
            }
        }
        ResultFile::Capacity(c) => Entry {
            ops_per_s: c.verdict.as_ref().and_then(|v| v.highest_passing_ops_per_s),
            tags: c.tags.clone(),
            ..base(
                "capacity",
                &c.env,
                c.workload.label(),
                c.started_unix_s,
                capacity_status(&c.status),
            )
        },
        ResultFile::Probe(p) => Entry {
            tags: p.spec.tags.clone(),
            ..base(
                "probe",
                &p.env,
                p.dir.clone(),
                p.started_unix_s,
                if p.complete { "complete" } else { "incomplete" },
            )
        },
        ResultFile::Verify(v) => base(
            "verify",
            "",
            v.run.display().to_string(),
            0,
            if v.missing == 0 && v.different == 0 && v.unreadable == 0 {
                "ok"
            } else {
                "failed"
            },
        ),
        ResultFile::Scaling(s) => base(
            "scaling",
            &s.env,
            s.workload.clone(),
            s.started_unix_s,
            capacity_status(&s.status),
        ),
    }
}

/// Size and modification time (ns) of a file.
fn stamp(path: &Path) -> Option<(i64, i64)> {
    let m = std::fs::metadata(path).ok()?;
    let t = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((m.len() as i64, t.as_nanos() as i64))
}

/// The `.json` files under `dir`, `depth` levels down at most, not following links.
fn json_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(t) = e.file_type() else { continue };
        let p = e.path();
        if t.is_dir() && depth > 0 {
            json_files(&p, depth - 1, out);
        } else if t.is_file() && p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// Tags as stored: `,a,b,` so that `LIKE '%,a,%'` finds one whole tag.
fn tags_text(tags: &[String]) -> String {
    match tags {
        [] => String::new(),
        _ => format!(",{},", tags.join(",")),
    }
}

/// The entries `arg` names in the runs index of `home`, brought up to date first: ids
/// (`id:3` or `id:3,4,5`), or the runs carrying a tag (`tag:baseline`, shards left out);
/// None when `arg` names neither.
pub fn named_by(home: &Path, arg: &str) -> Result<Option<Vec<Entry>>, Invalid> {
    if let Some(tag) = arg.strip_prefix("tag:") {
        crate::spec::probe::validate_tag(tag)?;
        let mut c = RunsIndex::at_home(home)?;
        c.sync()?;
        let runs = c.list(&Filter {
            kind: Some("run".into()),
            tag: Some(tag.into()),
            ..Filter::default()
        })?;
        if runs.is_empty() {
            return Err(crate::invalid!(
                "{arg}: no run in the runs index carries tag '{tag}'"
            ));
        }
        return Ok(Some(runs));
    }
    let Some(list) = arg.strip_prefix("id:") else {
        return Ok(None);
    };
    let ids: Vec<i64> = list
        .split(',')
        .map(|s| {
            s.trim().parse::<i64>().map_err(|_| {
                crate::invalid!("{arg}: ids are numbers, as `cqlbench runs` lists them")
            })
        })
        .collect::<Result<_, _>>()?;
    let mut c = RunsIndex::at_home(home)?;
    c.sync()?;
    let mut out = Vec::new();
    for id in ids {
        out.push(
            c.get(id)?.ok_or_else(|| {
                crate::invalid!("{arg}: no result with id {id} in the runs index")
            })?,
        );
    }
    Ok(Some(out))
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl RunsIndex {
    /// The runs index of the cqlbench home `home`, its default directories known (`results/`,
    /// `scenarios/`, the probes).
    pub fn at_home(home: &Path) -> Result<RunsIndex, Invalid> {
        let c = RunsIndex::open(&home.join(FILE))?;
        for dir in HOME_DIRS.map(|d| home.join(d)) {
            if dir.is_dir() {
                c.add_root(&dir)?;
            }
        }
        Ok(c)
    }

    /// Opens (creating if need be) the index at `path`.
    pub fn open(path: &Path) -> Result<RunsIndex, Invalid> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| crate::invalid!("{}: {e}", parent.display()))?;
        }
        let conn = Connection::open(path).map_err(|e| db(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| db(path, e))?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db(path, e))?;
        if version != SCHEMA_VERSION {
            // Only an index: its results are read again from the files (roots are kept).
            conn.execute_batch(&format!(
                "DROP TABLE IF EXISTS results; PRAGMA user_version = {SCHEMA_VERSION};"
            ))
            .map_err(|e| db(path, e))?;
        }
        conn.execute_batch(SCHEMA).map_err(|e| db(path, e))?;
        Ok(RunsIndex { conn })
    }

    fn path(&self) -> PathBuf {
        self.conn.path().map(PathBuf::from).unwrap_or_default()
    }

    fn err(&self, e: rusqlite::Error) -> Invalid {
        db(&self.path(), e)
    }

    /// Adds a directory to search (its absolute path); false when it was known.
    pub fn add_root(&self, dir: &Path) -> Result<bool, Invalid> {
        if !dir.is_dir() {
            return Err(crate::invalid!("{}: not a directory", dir.display()));
        }
        let abs =
            std::fs::canonicalize(dir).map_err(|e| crate::invalid!("{}: {e}", dir.display()))?;
        let n = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO roots (dir) VALUES (?1)",
                params![text(&abs)],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    /// Adds one result file to index wherever it is (a run's `--out` outside the roots), as
    /// its absolute path; false when it was known, or lies under a root (found there). It is
    /// read at the next sync, and forgotten once it is gone.
    pub fn add_file(&self, file: &Path) -> Result<bool, Invalid> {
        let abs =
            std::fs::canonicalize(file).map_err(|e| crate::invalid!("{}: {e}", file.display()))?;
        if self.roots()?.iter().any(|r| abs.starts_with(r)) {
            return Ok(false);
        }
        let n = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO files (path) VALUES (?1)",
                params![text(&abs)],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    /// The paths a one-column query gives.
    fn paths(&self, sql: &str) -> Result<Vec<PathBuf>, Invalid> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(PathBuf::from).map_err(|e| self.err(e)))
            .collect()
    }

    /// The files added one by one.
    pub fn files(&self) -> Result<Vec<PathBuf>, Invalid> {
        self.paths("SELECT path FROM files ORDER BY path")
    }

    /// The directories searched.
    pub fn roots(&self) -> Result<Vec<PathBuf>, Invalid> {
        self.paths("SELECT dir FROM roots ORDER BY dir")
    }

    /// Brings the index up to date with the files under its roots and those added one by
    /// one: reads the result files that are new or changed, forgets those gone (under roots
    /// that still exist, and added files that no longer exist).
    pub fn sync(&mut self) -> Result<Synced, Invalid> {
        let roots = self.roots()?;
        let added = self.files()?;
        let path = self.path();
        let tx = self.conn.transaction().map_err(|e| db(&path, e))?;
        let known: HashMap<String, (i64, i64)> = {
            let mut st = tx
                .prepare("SELECT path, size, mtime_ns FROM results")
                .map_err(|e| db(&path, e))?;
            let rows = st
                .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
                .map_err(|e| db(&path, e))?;
            rows.collect::<Result<_, _>>().map_err(|e| db(&path, e))?
        };
        let mut done = Synced::default();
        let mut seen = std::collections::HashSet::new();
        let mut gone = Vec::new();
        // Each root's files in path order (new results get ids in turn: a set's r1, r2, …),
        // then the files added one by one that no root holds.
        let mut batches: Vec<Vec<PathBuf>> = Vec::new();
        for root in roots.iter().filter(|r| r.is_dir()) {
            let mut files = Vec::new();
            json_files(root, MAX_DEPTH, &mut files);
            files.sort();
            batches.push(files);
        }
        let in_roots: std::collections::HashSet<&PathBuf> = batches.iter().flatten().collect();
        let mut lone = Vec::new();
        for f in added {
            if !f.is_file() {
                gone.push(f);
            } else if !in_roots.contains(&f) {
                lone.push(f);
            }
        }
        batches.push(lone);
        for files in batches {
            for f in files {
                let key = text(&f);
                let Some((size, mtime)) = stamp(&f) else {
                    continue;
                };
                seen.insert(key.clone());
                let before = known.get(&key);
                if before == Some(&(size, mtime)) {
                    continue;
                }
                let Ok(file) = crate::result::read(&f) else {
                    done.skipped += 1;
                    if before.is_some() {
                        tx.execute("DELETE FROM results WHERE path = ?1", params![key])
                            .map_err(|e| db(&path, e))?;
                        done.removed += 1;
                    }
                    continue;
                };
                let e = entry_of(&f, &file);
                tx.execute(
                    "INSERT INTO results (path, mtime_ns, size, kind, env, workload,
                        started_unix_s, status, ops_per_s, p99_ms, cassandra, tags)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                     ON CONFLICT (path) DO UPDATE SET mtime_ns = ?2, size = ?3, kind = ?4,
                        env = ?5, workload = ?6, started_unix_s = ?7, status = ?8,
                        ops_per_s = ?9, p99_ms = ?10, cassandra = ?11, tags = ?12",
                    params![
                        key,
                        mtime,
                        size,
                        e.kind,
                        e.env,
                        e.workload,
                        e.started_unix_s,
                        e.status,
                        e.ops_per_s,
                        e.p99_ms,
                        e.cassandra,
                        tags_text(&e.tags)
                    ],
                )
                .map_err(|e| db(&path, e))?;
                match before {
                    Some(_) => done.updated += 1,
                    None => done.added += 1,
                }
            }
        }
        for f in &gone {
            tx.execute("DELETE FROM files WHERE path = ?1", params![text(f)])
                .map_err(|e| db(&path, e))?;
        }
        // Files gone from roots that are still there, and added files gone.
        for p in known.keys().filter(|p| !seen.contains(*p)) {
            let under_live_root = roots
                .iter()
                .any(|r| r.is_dir() && Path::new(p).starts_with(r));
            if under_live_root || !roots.iter().any(|r| Path::new(p).starts_with(r)) {
                tx.execute("DELETE FROM results WHERE path = ?1", params![p])
                    .map_err(|e| db(&path, e))?;
                done.removed += 1;
            }
        }
        tx.commit().map_err(|e| db(&path, e))?;
        Ok(done)
    }

    fn entries(&self, sql: &str, args: &[&dyn rusqlite::ToSql]) -> Result<Vec<Entry>, Invalid> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map(args, |r| {
                Ok(Entry {
                    id: r.get(0)?,
                    path: PathBuf::from(r.get::<_, String>(1)?),
                    kind: r.get(2)?,
                    env: r.get(3)?,
                    workload: r.get(4)?,
                    started_unix_s: r.get(5)?,
                    status: r.get(6)?,
                    ops_per_s: r.get(7)?,
                    p99_ms: r.get(8)?,
                    cassandra: r.get(9)?,
                    tags: r
                        .get::<_, String>(10)?
                        .split(',')
                        .filter(|t| !t.is_empty())
                        .map(String::from)
                        .collect(),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    const COLUMNS: &'static str =
        "id, path, kind, env, workload, started_unix_s, status, ops_per_s, p99_ms, cassandra, tags";

    /// The entries `f` keeps, oldest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<Entry>, Invalid> {
        let like = f.workload.as_ref().map(|w| format!("%{w}%"));
        let tag = f.tag.as_ref().map(|t| format!("%,{t},%"));
        let last = f.last.map_or(-1, |n| n as i64);
        let sql = format!(
            "SELECT * FROM (SELECT {} FROM results
               WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR env = ?2)
                 AND (?3 IS NULL OR workload LIKE ?3) AND (?4 IS NULL OR status = ?4)
                 AND (?5 IS NULL OR started_unix_s >= ?5) AND (?7 IS NULL OR tags LIKE ?7)
               ORDER BY started_unix_s DESC, id DESC LIMIT ?6)
             ORDER BY started_unix_s, id",
            Self::COLUMNS
        );
        self.entries(
            &sql,
            &[
                &f.kind,
                &f.env,
                &like,
                &f.status,
                &f.since_unix_s,
                &last,
                &tag,
            ],
        )
    }

    /// The entry with id `id`.
    pub fn get(&self, id: i64) -> Result<Option<Entry>, Invalid> {
        let sql = format!("SELECT {} FROM results WHERE id = ?1", Self::COLUMNS);
        Ok(self.entries(&sql, &[&id])?.into_iter().next())
    }

    /// How many entries the index holds.
    pub fn len(&self) -> Result<usize, Invalid> {
        self.conn
            .query_row("SELECT COUNT(*) FROM results", [], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))
            .map(|n| n as usize)
    }

    pub fn is_empty(&self) -> Result<bool, Invalid> {
        Ok(self.len()? == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::{RunShape, run};

    #[test]
    fn files_added_one_by_one_are_indexed_until_they_are_gone() {
        let home = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let results = home.path().join("results");
        std::fs::create_dir_all(&results).unwrap();
        let inside = results.join("in.json");
        let outside = elsewhere.path().join("out.json");
        run("lab", &RunShape::default()).write(&inside).unwrap();
        run("far", &RunShape::default()).write(&outside).unwrap();
        // A sibling of the added file is not indexed: only the file itself.
        run("far", &RunShape::default())
            .write(&elsewhere.path().join("other.json"))
            .unwrap();
        let mut c = RunsIndex::open(&home.path().join(FILE)).unwrap();
        c.add_root(&results).unwrap();
        assert!(c.add_file(&outside).unwrap());
        assert!(!c.add_file(&outside).unwrap(), "known already");
        // One under a root: found there, not added.
        assert!(!c.add_file(&inside).unwrap());
        let s = c.sync().unwrap();
        assert_eq!((s.added, s.removed), (2, 0));
        let envs: Vec<String> = c
            .list(&Filter::default())
            .unwrap()
            .into_iter()
            .map(|e| e.env)
            .collect();
        assert_eq!(envs.len(), 2, "{envs:?}");
        assert!(envs.contains(&"far".to_string()));
        assert_eq!(c.sync().unwrap().added, 0, "nothing new");
        std::fs::remove_file(&outside).unwrap();
        let s = c.sync().unwrap();
        assert_eq!(s.removed, 1);
        assert!(c.files().unwrap().is_empty(), "the gone file is forgotten");
        assert!(c.add_file(&outside).is_err(), "no such file");
    }

    #[test]
    fn capacity_searches_carry_their_tags_into_the_index() {
        let home = tempfile::tempdir().unwrap();
        let mut cap = crate::result::fixture::capacity_at("lab", 5_000.0);
        cap.tags = vec!["sizing".into()];
        cap.write(&home.path().join("cap.json")).unwrap();
        let mut c = RunsIndex::open(&home.path().join(FILE)).unwrap();
        c.add_root(home.path()).unwrap();
        c.sync().unwrap();
        let all = c
            .list(&Filter {
                tag: Some("sizing".into()),
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(
            (all[0].kind.as_str(), all[0].tags.clone()),
            ("capacity", vec!["sizing".to_string()])
        );
    }

    #[test]
    fn the_index_follows_the_files() {
        let home = tempfile::tempdir().unwrap();
        let results = home.path().join("results");
        let nested = results.join("scenario/ec2");
        std::fs::create_dir_all(&nested).unwrap();
        let a = results.join("a.json");
        let b = nested.join("b.json");
        run("lab", &RunShape::default()).write(&a).unwrap();
        let mut r = run(
            "ec2",
            &RunShape {
                seed: 2,
                ..RunShape::default()
            },
        );
        r.started_unix_s += 100;
        r.tags = vec!["baseline".into(), "v5".into()];
        r.write(&b).unwrap();
        std::fs::write(results.join("notes.json"), "{}").unwrap();
        let mut c = RunsIndex::open(&home.path().join(FILE)).unwrap();
        assert!(c.add_root(&results).unwrap());
        assert!(!c.add_root(&results).unwrap(), "known already");
        let s = c.sync().unwrap();
        assert_eq!((s.added, s.updated, s.removed, s.skipped), (2, 0, 0, 1));
        let all = c.list(&Filter::default()).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].env, "lab", "oldest first");
        assert_eq!(all[1].path, std::fs::canonicalize(&b).unwrap());
        assert_eq!(all[0].kind, "run");
        assert_eq!(all[0].status, "completed");
        assert!(all[0].ops_per_s.unwrap() > 0.0 && all[0].p99_ms.unwrap() > 0.0);
        // Unchanged files are not read again; a changed one is; ids stay.
        assert_eq!(
            c.sync().unwrap(),
            Synced {
                skipped: 1,
                ..Synced::default()
            }
        );
        let mut again = run("lab2", &RunShape::default());
        again.started_unix_s = all[0].started_unix_s as u64;
        again.write(&a).unwrap();
        let s = c.sync().unwrap();
        assert_eq!((s.added, s.updated), (0, 1));
        let first = c.get(all[0].id).unwrap().unwrap();
        assert_eq!(first.env, "lab2");
        // Filters.
        let f = |f: Filter| c.list(&f).unwrap().len();
        assert_eq!(
            f(Filter {
                env: Some("ec2".into()),
                ..Filter::default()
            }),
            1
        );
        assert_eq!(
            f(Filter {
                workload: Some("keyval".into()),
                ..Filter::default()
            }),
            2
        );
        assert_eq!(
            f(Filter {
                kind: Some("probe".into()),
                ..Filter::default()
            }),
            0
        );
        let tagged = |t: &str| {
            f(Filter {
                tag: Some(t.into()),
                ..Filter::default()
            })
        };
        assert_eq!((tagged("baseline"), tagged("v5")), (1, 1));
        assert_eq!(tagged("base"), 0, "whole tags only");
        assert_eq!(all[1].tags, ["baseline", "v5"]);
        assert_eq!(
            f(Filter {
                status: Some("completed".into()),
                ..Filter::default()
            }),
            2
        );
        let since = Some(all[1].started_unix_s);
        assert_eq!(
            f(Filter {
                since_unix_s: since,
                ..Filter::default()
            }),
            1
        );
        let latest = c
            .list(&Filter {
                last: Some(1),
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(latest[0].env, "ec2");
        // A file gone is forgotten; a new one gets a new id, never an old one.
        std::fs::remove_file(&b).unwrap();
        assert_eq!(c.sync().unwrap().removed, 1);
        assert!(c.get(all[1].id).unwrap().is_none());
        run("lab", &RunShape::default()).write(&b).unwrap();
        c.sync().unwrap();
        let ids: Vec<i64> = c
            .list(&Filter::default())
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids.len(), 2);
        assert!(ids.iter().all(|id| *id != all[1].id), "{ids:?}");
        // The database is only an index: rebuilt from the files, it lists the same results.
        drop(c);
        std::fs::remove_file(home.path().join(FILE)).unwrap();
        let mut c = RunsIndex::open(&home.path().join(FILE)).unwrap();
        c.add_root(&results).unwrap();
        assert_eq!(c.sync().unwrap().added, 2);
        assert_eq!(c.len().unwrap(), 2);
    }
}
