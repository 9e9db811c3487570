//! One step of a search across machines, as the coordinator (shard 0) and as a follower
//! (shards 1..N) run it. Each machine starts its own shard of the step as a local loader
//! process ([`crate::shards::launch`], only its own index of N).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{
    Awaited, ERROR_FILE, Exchange, ExchangeError, FILES, Next, Seen, StepRow, StepState, chunks_of,
    step_run_id, wait_for_step, wait_for_uploads,
};
use crate::cancel::Cancel;
use crate::result::RunResult;
use crate::shards::launch::{self, Launch, shard_out};

/// The coordinator's side of a search of `count` machines meeting under `run`.
pub struct Coordinator<'a> {
    pub ex: &'a dyn Exchange,
    pub run: &'a str,
    pub count: u64,
    /// How long, after its own shard of a step ended, it waits for the others' files.
    pub upload_wait: Duration,
}

impl Coordinator<'_> {
    /// Before the first step: a new search refuses a run id whose steps are published
    /// already (its shards could not register again); a resumed one continues them. The
    /// tables not being there yet (nor the keyspace) is a new search.
    pub fn begin(&self, resume: bool) -> Result<(), ExchangeError> {
        let rows = self.ex.steps(self.run).unwrap_or_default();
        if !resume && !rows.is_empty() {
            return Err(ExchangeError::Published {
                run: self.run.to_string(),
            });
        }
        Ok(())
    }

    /// Runs step `step` at `level` (`rate:R`, `concurrency:C`): starts its own shard (index
    /// 0 of `launch`, whose run id it sets), publishes the step once the keyspace is there,
    /// waits for its shard and then for the others' files, writes them beside its own
    /// (`NAME.step-KK.shard-I.json`, `.hlog`) and merges them into `launch.out`.
    pub fn step(
        &self,
        launch: &Launch,
        step: usize,
        level: &str,
        cancel: &Cancel,
    ) -> Result<RunResult, ExchangeError> {
        let before = self.ex.steps(self.run).unwrap_or_default();
        let before = before.iter().find(|r| r.step == step);
        let step_run = step_run_id(self.run, step, before.map(|r| r.step_run.as_str()));
        let launch = Launch {
            indices: vec![0],
            count: self.count,
            run_id: step_run.clone(),
            ..launch.clone()
        };
        let row = StepRow {
            step,
            level: level.to_string(),
            step_run: step_run.clone(),
            state: StepState::Open,
        };
        // The first step's shard 0 creates the keyspace the tables go in: it starts first,
        // and the wait for the keyspace ends when it does (or the search is cancelled).
        let own = Cancel::new();
        let own_over = Cancel::new();
        let (mine, published) = std::thread::scope(|s| {
            let h = s.spawn(|| {
                let r = launch::run_shards(&launch, &own, &mut |_| {});
                own_over.cancel();
                r
            });
            let stop = || cancel.is_cancelled() || own_over.is_cancelled();
            let published = self
                .ex
                .prepare(&stop)
                .and_then(|()| self.ex.publish(self.run, &row));
            if published.is_err() {
                own.cancel();
            }
            while !h.is_finished() {
                if cancel.is_cancelled() {
                    own.cancel();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            (h.join().expect("the launch does not panic"), published)
        });
        // Its own shard's failure first: the keyspace wait ended because of it.
        let mine = mine?;
        published?;
        if cancel.is_cancelled() {
            return Err(ExchangeError::Interrupted);
        }
        let awaited = Awaited {
            run: self.run,
            step,
            step_run: &step_run,
            shards: (1..self.count).collect(),
            count: self.count,
        };
        let files = wait_for_uploads(self.ex, &awaited, self.upload_wait, cancel)?;
        let mut shards = mine;
        for (shard, f) in files {
            let json = shard_out(&launch.out, shard);
            for name in FILES {
                let path = json.with_extension(name);
                std::fs::write(&path, &f[name]).map_err(|source| ExchangeError::Io {
                    what: "writing",
                    path,
                    source,
                })?;
            }
            shards.push(json);
        }
        let merged = crate::shards::merge_files(&shards, &launch.out)?;
        self.ex.publish(
            self.run,
            &StepRow {
                state: StepState::Done,
                ..row
            },
        )?;
        Ok(merged)
    }

    /// After the last step (or when the search stops): the `end` row at `step`, the step
    /// that will not run, so the followers exit. It keeps the run id of a step it replaces
    /// (one interrupted), so that step run again gets a new one.
    pub fn end(&self, step: usize) -> Result<(), ExchangeError> {
        let rows = self.ex.steps(self.run).unwrap_or_default();
        let replaced = rows.into_iter().find(|r| r.step == step);
        self.ex.publish(
            self.run,
            &StepRow {
                step,
                level: String::new(),
                step_run: replaced.map(|r| r.step_run).unwrap_or_default(),
                state: StepState::End,
            },
        )
    }
}

/// A follower's side of a search: shard `index` of `count`, meeting under `run`.
pub struct Follower<'a> {
    pub ex: &'a dyn Exchange,
    pub run: &'a str,
    pub index: u64,
    pub count: u64,
    /// How long it waits for the coordinator's next publication.
    pub step_wait: Duration,
}

/// What a follower tells its caller.
pub enum FollowEvent<'a> {
    StepStarted { row: &'a StepRow },
    StepUploaded { row: &'a StepRow, result: &'a Path },
}

impl Follower<'_> {
    /// Runs every step the coordinator publishes until its `end` row: `launch_of` gives the
    /// launch of a step (its arguments at the step's level, its `out`); this shard's result
    /// and HDR log are uploaded after each. Returns the steps run. A step that fails uploads
    /// its error for the coordinator to name, and ends the following.
    pub fn follow(
        &self,
        launch_of: &dyn Fn(&StepRow) -> Result<Launch, ExchangeError>,
        cancel: &Cancel,
        on: &mut dyn FnMut(FollowEvent),
    ) -> Result<usize, ExchangeError> {
        let mut seen = Seen::at_start(&self.ex.steps(self.run).unwrap_or_default());
        loop {
            let row = match wait_for_step(self.ex, self.run, &seen, self.step_wait, cancel)? {
                Next::End => return Ok(seen.ran.len()),
                Next::Wait => unreachable!("wait_for_step returns a step or the end"),
                Next::Run(row) => row,
            };
            on(FollowEvent::StepStarted { row: &row });
            let at_step = |source: ExchangeError| ExchangeError::AtStep {
                step: row.step,
                source: Box::new(source),
            };
            match self.run_step(&row, launch_of, cancel) {
                Ok(result) => on(FollowEvent::StepUploaded {
                    row: &row,
                    result: &result,
                }),
                Err(e) => {
                    // Best effort: the coordinator then names this shard's error at once.
                    for c in chunks_of(self.index, ERROR_FILE, e.to_string().as_bytes()) {
                        let _ = self.ex.upload(&row.step_run, &c);
                    }
                    return Err(at_step(e));
                }
            }
            if cancel.is_cancelled() {
                return Err(ExchangeError::Interrupted);
            }
            seen.ran.insert(row.step_run);
        }
    }

    fn run_step(
        &self,
        row: &StepRow,
        launch_of: &dyn Fn(&StepRow) -> Result<Launch, ExchangeError>,
        cancel: &Cancel,
    ) -> Result<PathBuf, ExchangeError> {
        let launch = Launch {
            indices: vec![self.index],
            count: self.count,
            run_id: row.step_run.clone(),
            ..launch_of(row)?
        };
        let mine = launch::run_shards(&launch, cancel, &mut |_| {})?;
        let json = mine
            .into_iter()
            .next()
            .unwrap_or_else(|| shard_out(&launch.out, self.index));
        for name in FILES {
            let path = json.with_extension(name);
            let data = std::fs::read(&path).map_err(|source| ExchangeError::Io {
                what: "reading",
                path: path.clone(),
                source,
            })?;
            for c in chunks_of(self.index, name, &data) {
                self.ex.upload(&row.step_run, &c)?;
            }
        }
        Ok(json)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::Fake;
    use super::*;

    /// A "cqlbench" that writes its shard's result and HDR log where `--out` says (the
    /// contents do not matter to the follower, which only uploads them).
    fn fake_exe(dir: &Path) -> PathBuf {
        let exe = dir.join("fake");
        std::fs::write(
            &exe,
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n\
             echo '{}' > \"$out\"; echo hlog > \"${out%.json}.hlog\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    #[test]
    fn a_follower_runs_each_published_step_uploads_its_files_and_exits_on_end() {
        let dir = tempfile::tempdir().unwrap();
        let ex = Fake::default();
        let exe = fake_exe(dir.path());
        let out = dir.path().to_path_buf();
        let launch_of = |row: &StepRow| -> Result<Launch, ExchangeError> {
            Ok(Launch::all(
                exe.clone(),
                crate::step::order::test_task("db1"),
                2,
                String::new(),
                out.join(format!("cap.step-{:02}.json", row.step)),
            ))
        };
        let f = Follower {
            ex: &ex,
            run: "r",
            index: 1,
            count: 2,
            step_wait: Duration::from_secs(10),
        };
        let coordinator = Coordinator {
            ex: &ex,
            run: "r",
            count: 2,
            upload_wait: Duration::from_secs(10),
        };
        let open = |step: usize| StepRow {
            step,
            level: "rate:100".into(),
            step_run: step_run_id("r", step, None),
            state: StepState::Open,
        };
        ex.publish("r", &open(1)).unwrap();
        let steps = std::thread::scope(|s| {
            let h = s.spawn(|| f.follow(&launch_of, &Cancel::new(), &mut |_| {}));
            // The coordinator's side, by hand: the upload of step 1, then step 2, then end.
            let a = |step_run| Awaited {
                run: "r",
                step: 1,
                step_run,
                shards: vec![1],
                count: 2,
            };
            let files = wait_for_uploads(&ex, &a("r-s01"), Duration::from_secs(10), &Cancel::new())
                .unwrap();
            assert_eq!(files[&1]["json"], b"{}\n");
            assert_eq!(files[&1]["hlog"], b"hlog\n");
            ex.publish("r", &open(2)).unwrap();
            wait_for_uploads(&ex, &a("r-s02"), Duration::from_secs(10), &Cancel::new()).unwrap();
            coordinator.end(3).unwrap();
            h.join().unwrap()
        })
        .unwrap();
        assert_eq!(steps, 2);
        // Its own results stay on its machine too.
        assert!(dir.path().join("cap.step-02.shard-1.json").is_file());
    }

    #[test]
    fn a_search_under_a_run_id_used_before_is_refused_unless_resumed() {
        let ex = Fake::default();
        let c = Coordinator {
            ex: &ex,
            run: "r",
            count: 2,
            upload_wait: Duration::from_secs(1),
        };
        c.begin(false).unwrap();
        c.end(1).unwrap();
        let e = c.begin(false).unwrap_err().to_string();
        assert!(e.starts_with("run r has published steps already"), "{e}");
        c.begin(true).unwrap();
    }

    #[test]
    fn the_coordinator_runs_its_own_shard_publishes_the_step_and_names_a_silent_shard() {
        let dir = tempfile::tempdir().unwrap();
        let ex = Fake::default();
        let out = dir.path().join("cap.step-01.json");
        let launch = Launch::all(
            fake_exe(dir.path()),
            crate::step::order::test_task("db1"),
            2,
            "ignored".into(),
            out.clone(),
        );
        let c = Coordinator {
            ex: &ex,
            run: "r",
            count: 2,
            upload_wait: Duration::from_millis(300),
        };
        let e = c
            .step(&launch, 1, "rate:100", &Cancel::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("shard 1/2 uploaded no result of step 1 (r-s01) within 300ms"),
            "{e}"
        );
        // Its own shard ran, under the step's run id; the step is published, still open.
        assert!(dir.path().join("cap.step-01.shard-0.json").is_file());
        let log = std::fs::read_to_string(dir.path().join("cap.step-01.shard-0.log"));
        assert!(log.is_ok());
        let rows = ex.steps("r").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].step_run.as_str(), rows[0].state),
            ("r-s01", StepState::Open)
        );
        assert_eq!(rows[0].level, "rate:100");
        // Run again (a resumed search): a new run id; the follower's files are written beside
        // its own and merged (these fakes are not results: the merge refuses them).
        let c = Coordinator {
            upload_wait: Duration::from_secs(10),
            ..c
        };
        let e = std::thread::scope(|s| {
            let h = s.spawn(|| c.step(&launch, 1, "rate:100", &Cancel::new()));
            while ex.steps("r").unwrap()[0].step_run != "r-s01-a2" {
                std::thread::sleep(Duration::from_millis(20));
            }
            for name in FILES {
                for chunk in chunks_of(1, name, format!("shard 1 {name}").as_bytes()) {
                    ex.upload("r-s01-a2", &chunk).unwrap();
                }
            }
            h.join().unwrap()
        })
        .unwrap_err();
        assert!(matches!(e, ExchangeError::Merge(_)), "{e}");
        // Interrupted there: the end row keeps the attempt's id, so a third gets a new one.
        c.end(1).unwrap();
        let rows = ex.steps("r").unwrap();
        assert_eq!(
            (rows[0].step_run.as_str(), rows[0].state),
            ("r-s01-a2", StepState::End)
        );
        assert_eq!(step_run_id("r", 1, Some(&rows[0].step_run)), "r-s01-a3");
        let theirs = dir.path().join("cap.step-01.shard-1.json");
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "shard 1 json");
        assert_eq!(
            std::fs::read_to_string(theirs.with_extension("hlog")).unwrap(),
            "shard 1 hlog"
        );
    }
}
