//! `capacity --shard I/N`: one capacity search run by N machines, which talk only through
//! two tables in the workload's keyspace of the cluster under test.
//!
//! - [`STEPS_TABLE`]: shard 0 (the coordinator) publishes each step it opens — its level and
//!   the run id its shards meet under — and, at the end, an `end` row. Every publication is
//!   the search's highest step, so a follower only ever looks at the highest row.
//! - [`FILES_TABLE`]: after a step, each other shard uploads its result and HDR log there,
//!   in chunks of at most [`CHUNK_BYTES`]; the coordinator reassembles and merges them.
//!
//! The statements are behind [`Exchange`] ([`cql::CqlExchange`] in the cluster), so the
//! choices and waits here are tested with an in-memory fake.

pub mod cql;
pub mod step;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use crate::cancel::Cancel;

pub const STEPS_TABLE: &str = "cqlbench_capacity";
pub const FILES_TABLE: &str = "cqlbench_capacity_files";
/// The largest chunk of a file in [`FILES_TABLE`].
pub const CHUNK_BYTES: usize = 1 << 20;
/// How often a wait reads the tables.
pub const POLL: Duration = Duration::from_millis(200);
/// What each follower uploads after a step: its result and its HDR log (the extensions of
/// the files beside `NAME.step-KK.shard-I`).
pub const FILES: [&str; 2] = ["json", "hlog"];
/// The file a follower uploads instead when its part of a step failed: the error's text.
pub const ERROR_FILE: &str = "error";

/// Where a step of the search is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    /// Published: its shards run it.
    Open,
    /// Merged and judged by the coordinator.
    Done,
    /// No step here: the search is over.
    End,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Open => "open",
            StepState::Done => "done",
            StepState::End => "end",
        }
    }

    pub fn parse(s: &str) -> Option<StepState> {
        match s {
            "open" => Some(StepState::Open),
            "done" => Some(StepState::Done),
            "end" => Some(StepState::End),
            _ => None,
        }
    }
}

/// One row of [`STEPS_TABLE`] for a search.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    pub step: usize,
    /// The step's level as `rate:1500` or `concurrency:8` (empty in the `end` row).
    pub level: String,
    /// The run id the step's shards meet under (empty in the `end` row).
    pub step_run: String,
    pub state: StepState,
}

/// One chunk of one shard's file in [`FILES_TABLE`].
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub shard: u64,
    /// [`FILES`] or [`ERROR_FILE`].
    pub name: String,
    pub chunk: u32,
    pub chunks: u32,
    pub data: Vec<u8>,
}

/// Why the machines of a search could not exchange a step.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// A statement on the exchange tables failed (the driver's message).
    #[error("{doing}: {error}")]
    Query { doing: String, error: String },
    #[error(
        "run {run} has published steps already (an earlier search with this --run-id): give a new --run-id, or --resume with shard 0's --out"
    )]
    Published { run: String },
    #[error(
        "shard {shard}/{count} uploaded no result of step {step} ({step_run}) within {}; were all {count} machines started with --run-id {run}? (--barrier-timeout sets the wait)",
        humantime::format_duration(*waited)
    )]
    NoUpload {
        shard: u64,
        count: u64,
        step: usize,
        step_run: String,
        run: String,
        waited: Duration,
    },
    #[error("shard {shard}/{count} failed step {step}: {message}")]
    ShardFailed {
        shard: u64,
        count: u64,
        step: usize,
        message: String,
    },
    #[error(
        "the coordinator (shard 0) published no step of run {run} within {} ({last}); is it running with --run-id {run}?",
        humantime::format_duration(*waited)
    )]
    NoStep {
        run: String,
        waited: Duration,
        last: String,
    },
    #[error("run {run}: step {step} has level '{level}': expected rate:R or concurrency:C")]
    BadLevel {
        run: String,
        step: usize,
        level: String,
    },
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Connect(#[from] crate::load::session::ConnectError),
    #[error(transparent)]
    Launch(#[from] super::launch::LaunchError),
    #[error("merging the shards: {0}")]
    Merge(#[from] crate::error::Invalid),
    #[error("step {step}: {source}")]
    AtStep {
        step: usize,
        #[source]
        source: Box<ExchangeError>,
    },
    #[error("interrupted")]
    Interrupted,
}

/// The statements of the exchange, for one search in one keyspace.
pub trait Exchange: Sync {
    /// Makes the tables (the coordinator), once the keyspace exists: it waits for it until
    /// `stop` says to give up ([`ExchangeError::Interrupted`]).
    fn prepare(&self, stop: &dyn Fn() -> bool) -> Result<(), ExchangeError>;
    /// Writes (or overwrites) a step's row.
    fn publish(&self, run: &str, row: &StepRow) -> Result<(), ExchangeError>;
    /// Every row of the search `run`.
    fn steps(&self, run: &str) -> Result<Vec<StepRow>, ExchangeError>;
    fn upload(&self, step_run: &str, chunk: &Chunk) -> Result<(), ExchangeError>;
    /// Every chunk uploaded for the step `step_run`.
    fn chunks(&self, step_run: &str) -> Result<Vec<Chunk>, ExchangeError>;
    /// [`Self::chunks`] without their data (what a wait polls).
    fn listed(&self, step_run: &str) -> Result<Vec<Chunk>, ExchangeError>;
}

/// `data` as chunks of at most [`CHUNK_BYTES`] (one, empty, for an empty file).
pub fn chunks_of(shard: u64, name: &str, data: &[u8]) -> Vec<Chunk> {
    chunks_sized(shard, name, data, CHUNK_BYTES)
}

fn chunks_sized(shard: u64, name: &str, data: &[u8], size: usize) -> Vec<Chunk> {
    let parts: Vec<&[u8]> = if data.is_empty() {
        vec![data]
    } else {
        data.chunks(size).collect()
    };
    let chunks = parts.len() as u32;
    parts
        .into_iter()
        .enumerate()
        .map(|(i, d)| Chunk {
            shard,
            name: name.to_string(),
            chunk: i as u32,
            chunks,
            data: d.to_vec(),
        })
        .collect()
}

/// The files of each shard whose every chunk is there, put together: shard → name → bytes.
/// A file missing a chunk (still being uploaded) is left out.
pub fn reassemble(chunks: &[Chunk]) -> BTreeMap<u64, BTreeMap<String, Vec<u8>>> {
    let mut parts: BTreeMap<(u64, &str), BTreeMap<u32, &Chunk>> = BTreeMap::new();
    for c in chunks {
        parts
            .entry((c.shard, c.name.as_str()))
            .or_default()
            .insert(c.chunk, c);
    }
    let mut files: BTreeMap<u64, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for ((shard, name), part) in parts {
        let want = part.values().next().map_or(0, |c| c.chunks);
        let whole = part.len() as u32 == want
            && part.keys().copied().eq(0..want)
            && part.values().all(|c| c.chunks == want);
        if whole {
            let data = part.values().flat_map(|c| c.data.iter().copied()).collect();
            files
                .entry(shard)
                .or_default()
                .insert(name.to_string(), data);
        }
    }
    files
}

/// What a follower does next, from the search's rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Run this step.
    Run(StepRow),
    /// The coordinator ended the search.
    End,
    /// Nothing new yet.
    Wait,
}

/// What a follower has seen of a search.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// The step run ids it has run (a step run again has a new one).
    pub ran: HashSet<String>,
    /// The `end` row's step when the follower started: that of an earlier, interrupted
    /// attempt, which a resumed coordinator replaces (not the end of this one).
    pub stale_end: Option<usize>,
}

impl Seen {
    /// What a follower starting now sees in `rows`.
    pub fn at_start(rows: &[StepRow]) -> Seen {
        Seen {
            ran: HashSet::new(),
            stale_end: rows
                .iter()
                .max_by_key(|r| r.step)
                .filter(|r| r.state == StepState::End)
                .map(|r| r.step),
        }
    }
}

/// The follower's choice: the search's highest row is the coordinator's latest publication;
/// an open step it has not run (by step run id: a re-run step has a new one) is to run, and
/// an `end` row ends it unless it was there before the follower started.
pub fn next(rows: &[StepRow], seen: &Seen) -> Next {
    let ran = &seen.ran;
    match rows.iter().max_by_key(|r| r.step) {
        Some(r) if r.state == StepState::End && seen.stale_end == Some(r.step) => Next::Wait,
        Some(r) if r.state == StepState::End => Next::End,
        Some(r) if r.state == StepState::Open && !ran.contains(&r.step_run) => Next::Run(r.clone()),
        _ => Next::Wait,
    }
}

/// The step run id of a step published anew: `RUN-sKK` the first time, `RUN-sKK-aA` (A = 2,
/// 3 …) when the step was published before (a resumed search re-runs it: its shards could
/// not register again under the old id).
pub fn step_run_id(run: &str, step: usize, before: Option<&str>) -> String {
    let first = format!("{run}-s{step:02}");
    match before {
        None => first,
        Some(b) => {
            let attempt = b
                .strip_prefix(&first)
                .and_then(|rest| rest.strip_prefix("-a"))
                .and_then(|a| a.parse::<u32>().ok())
                .unwrap_or(1);
            format!("{first}-a{}", attempt + 1)
        }
    }
}

/// Polls the search `run` until [`next`] has something for a follower that has `seen`;
/// read errors (the keyspace or tables not made yet) are retried until `timeout`.
pub fn wait_for_step(
    ex: &dyn Exchange,
    run: &str,
    seen: &Seen,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<Next, ExchangeError> {
    let t0 = Instant::now();
    loop {
        let last = match ex.steps(run) {
            Ok(rows) => match next(&rows, seen) {
                Next::Wait => format!("{} rows, none new", rows.len()),
                n => return Ok(n),
            },
            Err(e) => e.to_string(),
        };
        if t0.elapsed() >= timeout {
            return Err(ExchangeError::NoStep {
                run: run.to_string(),
                waited: timeout,
                last,
            });
        }
        if !cancel.sleep(POLL) {
            return Err(ExchangeError::Interrupted);
        }
    }
}

/// What the coordinator waits for after a step.
pub struct Awaited<'a> {
    pub run: &'a str,
    pub step: usize,
    pub step_run: &'a str,
    /// The shards whose files are awaited (1..N).
    pub shards: Vec<u64>,
    pub count: u64,
}

/// Polls until every shard of `a.shards` has uploaded all of [`FILES`] for the step; a shard
/// that uploads [`ERROR_FILE`] instead fails the wait with its message, and one that has not
/// uploaded everything within `timeout` fails it by name. Read errors are retried.
pub fn wait_for_uploads(
    ex: &dyn Exchange,
    a: &Awaited,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<BTreeMap<u64, BTreeMap<String, Vec<u8>>>, ExchangeError> {
    let t0 = Instant::now();
    let has_all = |f: Option<&BTreeMap<String, Vec<u8>>>| {
        f.is_some_and(|f| FILES.iter().all(|n| f.contains_key(*n)))
    };
    loop {
        // What is there, without the data, until it is all there (or a shard failed).
        let listed = ex.listed(a.step_run).map(|c| reassemble(&c));
        if let Ok(l) = &listed {
            let failed = a
                .shards
                .iter()
                .any(|s| l.get(s).is_some_and(|f| f.contains_key(ERROR_FILE)));
            if failed || a.shards.iter().all(|s| has_all(l.get(s))) {
                let mut files = reassemble(&ex.chunks(a.step_run)?);
                files.retain(|s, _| a.shards.contains(s));
                for (shard, f) in &files {
                    if let Some(msg) = f.get(ERROR_FILE) {
                        return Err(ExchangeError::ShardFailed {
                            shard: *shard,
                            count: a.count,
                            step: a.step,
                            message: String::from_utf8_lossy(msg).into_owned(),
                        });
                    }
                }
                if a.shards.iter().all(|s| has_all(files.get(s))) {
                    return Ok(files);
                }
            }
        }
        if t0.elapsed() >= timeout {
            let have = listed.unwrap_or_default();
            let missing = a
                .shards
                .iter()
                .copied()
                .find(|s| !has_all(have.get(s)))
                .unwrap_or(0);
            return Err(ExchangeError::NoUpload {
                shard: missing,
                count: a.count,
                step: a.step,
                step_run: a.step_run.to_string(),
                run: a.run.to_string(),
                waited: timeout,
            });
        }
        if !cancel.sleep(POLL) {
            return Err(ExchangeError::Interrupted);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The two tables in memory.
    #[derive(Default)]
    pub struct Fake {
        pub rows: Mutex<BTreeMap<(String, usize), StepRow>>,
        pub files: Mutex<Vec<(String, Chunk)>>,
    }

    impl Exchange for Fake {
        fn prepare(&self, _: &dyn Fn() -> bool) -> Result<(), ExchangeError> {
            Ok(())
        }
        fn publish(&self, run: &str, row: &StepRow) -> Result<(), ExchangeError> {
            let mut rows = self.rows.lock().unwrap();
            rows.insert((run.to_string(), row.step), row.clone());
            Ok(())
        }
        fn steps(&self, run: &str) -> Result<Vec<StepRow>, ExchangeError> {
            let rows = self.rows.lock().unwrap();
            Ok(rows
                .iter()
                .filter(|((r, _), _)| r == run)
                .map(|(_, row)| row.clone())
                .collect())
        }
        fn upload(&self, step_run: &str, chunk: &Chunk) -> Result<(), ExchangeError> {
            let mut files = self.files.lock().unwrap();
            files.retain(|(r, c)| {
                !(r == step_run
                    && c.shard == chunk.shard
                    && c.name == chunk.name
                    && c.chunk == chunk.chunk)
            });
            files.push((step_run.to_string(), chunk.clone()));
            Ok(())
        }
        fn chunks(&self, step_run: &str) -> Result<Vec<Chunk>, ExchangeError> {
            let files = self.files.lock().unwrap();
            Ok(files
                .iter()
                .filter(|(r, _)| r == step_run)
                .map(|(_, c)| c.clone())
                .collect())
        }
        fn listed(&self, step_run: &str) -> Result<Vec<Chunk>, ExchangeError> {
            let mut c = self.chunks(step_run)?;
            c.iter_mut().for_each(|c| c.data.clear());
            Ok(c)
        }
    }

    fn row(step: usize, step_run: &str, state: StepState) -> StepRow {
        StepRow {
            step,
            level: "rate:1000".into(),
            step_run: step_run.into(),
            state,
        }
    }

    #[test]
    fn files_go_up_in_chunks_and_come_back_whole_only_when_every_chunk_is_there() {
        let data: Vec<u8> = (0..2_500u32).map(|i| (i % 251) as u8).collect();
        let parts = chunks_sized(1, "hlog", &data, 1_000);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|c| c.chunks == 3 && c.data.len() <= 1_000));
        // In any order, beside another shard's file; an empty file is one empty chunk.
        let mut all: Vec<Chunk> = parts.iter().rev().cloned().collect();
        all.extend(chunks_of(2, "json", b""));
        let files = reassemble(&all);
        assert_eq!(files[&1]["hlog"], data);
        assert_eq!(files[&2]["json"], b"");
        // A chunk missing: the file is not there yet.
        let partial: Vec<Chunk> = parts[..2].to_vec();
        assert!(reassemble(&partial).is_empty());
        // The real size: 2.5 MiB is three chunks of at most 1 MiB.
        let big = vec![7u8; CHUNK_BYTES * 5 / 2];
        let c = chunks_of(0, "json", &big);
        assert_eq!(c.len(), 3);
        assert!(c.iter().all(|c| c.data.len() <= CHUNK_BYTES));
        assert_eq!(reassemble(&c)[&0]["json"], big);
    }

    #[test]
    fn a_follower_runs_the_highest_open_step_it_has_not_run_and_ends_on_the_end_row() {
        let mut seen = Seen::default();
        assert_eq!(next(&[], &seen), Next::Wait);
        let one = vec![row(1, "r-s01", StepState::Open)];
        assert_eq!(next(&one, &seen), Next::Run(one[0].clone()));
        seen.ran.insert("r-s01".to_string());
        assert_eq!(next(&one, &seen), Next::Wait, "run already");
        // A follower that joins late runs the open step, not the done ones before it.
        let three = vec![
            row(1, "r-s01", StepState::Done),
            row(3, "r-s03", StepState::Open),
            row(2, "r-s02", StepState::Done),
        ];
        assert_eq!(next(&three, &seen), Next::Run(three[1].clone()));
        // A step re-published (a resumed coordinator) under a new id is run again.
        seen.ran.insert("r-s03".to_string());
        let again = vec![row(3, "r-s03-a2", StepState::Open)];
        assert_eq!(next(&again, &seen), Next::Run(again[0].clone()));
        let end = vec![row(1, "r-s01", StepState::Done), row(2, "", StepState::End)];
        assert_eq!(next(&end, &seen), Next::End);
        // An end row there before the follower started is an interrupted attempt's: it
        // waits for the resumed coordinator to publish that step again.
        let late = Seen::at_start(&end);
        assert_eq!(late.stale_end, Some(2));
        assert_eq!(next(&end, &late), Next::Wait);
        let resumed = vec![end[0].clone(), row(2, "r-s02-a2", StepState::Open)];
        assert_eq!(next(&resumed, &late), Next::Run(resumed[1].clone()));
        let ended = vec![
            end[0].clone(),
            row(2, "r-s02-a2", StepState::Done),
            row(3, "", StepState::End),
        ];
        assert_eq!(next(&ended, &late), Next::End);
    }

    #[test]
    fn a_step_published_again_gets_a_new_run_id() {
        assert_eq!(step_run_id("r1", 3, None), "r1-s03");
        assert_eq!(step_run_id("r1", 3, Some("r1-s03")), "r1-s03-a2");
        assert_eq!(step_run_id("r1", 3, Some("r1-s03-a2")), "r1-s03-a3");
        assert_eq!(step_run_id("r1", 3, Some("")), "r1-s03-a2");
    }

    fn awaited(step_run: &str) -> Awaited<'_> {
        Awaited {
            run: "r",
            step: 2,
            step_run,
            shards: vec![1, 2],
            count: 3,
        }
    }

    #[test]
    fn the_coordinator_names_the_shard_that_never_uploaded() {
        let ex = Fake::default();
        for name in FILES {
            for c in chunks_of(1, name, b"x") {
                ex.upload("r-s02", &c).unwrap();
            }
        }
        // Shard 2 uploaded its result but not its HDR log.
        ex.upload("r-s02", &chunks_of(2, "json", b"{}")[0]).unwrap();
        let t0 = Instant::now();
        let e = wait_for_uploads(
            &ex,
            &awaited("r-s02"),
            Duration::from_millis(300),
            &Cancel::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(t0.elapsed() >= Duration::from_millis(300));
        assert!(
            e.starts_with("shard 2/3 uploaded no result of step 2 (r-s02) within 300ms"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        // Once it has, the wait returns both shards' files.
        ex.upload("r-s02", &chunks_of(2, "hlog", b"h")[0]).unwrap();
        let files = wait_for_uploads(
            &ex,
            &awaited("r-s02"),
            Duration::from_secs(5),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!(files.keys().copied().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(files[&2]["hlog"], b"h");
    }

    #[test]
    fn a_shard_that_failed_its_step_is_named_with_its_error() {
        let ex = Fake::default();
        ex.upload("r-s02", &chunks_of(1, ERROR_FILE, b"cannot connect")[0])
            .unwrap();
        let e = wait_for_uploads(
            &ex,
            &awaited("r-s02"),
            Duration::from_secs(5),
            &Cancel::new(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "shard 1/3 failed step 2: cannot connect");
    }

    #[test]
    fn a_follower_whose_coordinator_never_publishes_gives_up_in_one_line() {
        let ex = Fake::default();
        let e = wait_for_step(
            &ex,
            "r",
            &Seen::default(),
            Duration::from_millis(300),
            &Cancel::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("the coordinator (shard 0) published no step of run r within 300ms"),
            "{e}"
        );
        ex.publish("r", &row(1, "r-s01", StepState::Open)).unwrap();
        let n = wait_for_step(
            &ex,
            "r",
            &Seen::default(),
            Duration::from_secs(5),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!(n, Next::Run(row(1, "r-s01", StepState::Open)));
    }
}
