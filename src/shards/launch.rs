//! `--loaders N`: one run as N local loader processes, shards 0..N of it, which meet at the
//! barrier in the cluster under test; their results are merged into one when all have ended.
//! The first loader to fail stops the others (they would wait for it at the barrier).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::cancel::Cancel;
use crate::result::RunResult;
use crate::step::order::{Order, Task};

/// What to launch.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The cqlbench executable the loaders run.
    pub exe: PathBuf,
    /// What every loader runs; each gets its own shard, the run id and its result path from
    /// the order written beside `out` ([`order_path`], [`Order::for_shard`]).
    pub task: Task,
    pub count: u64,
    /// The shard indices (of `count`) this process starts: every one, `0..count`, for
    /// `--loaders`; only its own for one machine of `capacity --shard I/N`.
    pub indices: Vec<u64>,
    pub run_id: String,
    /// The merged result; each shard's goes beside it ([`shard_out`]).
    pub out: PathBuf,
}

impl Launch {
    /// Every shard `0..count` of a run, started here.
    pub fn all(exe: PathBuf, task: Task, count: u64, run_id: String, out: PathBuf) -> Launch {
        Launch {
            exe,
            task,
            count,
            indices: (0..count).collect(),
            run_id,
            out,
        }
    }
}

/// What the launcher tells its caller.
pub enum LaunchEvent<'a> {
    Started {
        index: u64,
        count: u64,
        out: &'a Path,
        log: &'a Path,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("shard {index}/{count} {status}: {last} (log {}); the other loaders were stopped", log.display())]
    Failed {
        index: u64,
        count: u64,
        status: std::process::ExitStatus,
        last: String,
        log: PathBuf,
    },
    #[error("merging the shards: {0}")]
    Merge(#[from] crate::error::Invalid),
}

/// Where shard `index`'s result goes: beside `out`, as `NAME.shard-I.json`.
pub fn shard_out(out: &Path, index: u64) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "run".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.shard-{index}.json"))
}

/// Where a launch's order goes: beside `out`, as `NAME.order.json`.
pub fn order_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "run".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.order.json"))
}

struct Loader {
    index: u64,
    child: Child,
    out: PathBuf,
    log: PathBuf,
    running: bool,
}

/// Starts the loaders, waits for all of them (stopping the rest when one fails, and every
/// one when `cancel` is set: they keep what they measured), then merges their results.
pub fn run(
    l: &Launch,
    cancel: &Cancel,
    on: &mut dyn FnMut(LaunchEvent),
) -> Result<RunResult, LaunchError> {
    let shards = run_shards(l, cancel, on)?;
    Ok(super::merge_files(&shards, &l.out)?)
}

/// Starts the loaders of `l.indices` and waits for all of them (stopping the rest when one
/// fails, and every one when `cancel` is set); returns their results' paths, in `indices`
/// order, unmerged.
pub fn run_shards(
    l: &Launch,
    cancel: &Cancel,
    on: &mut dyn FnMut(LaunchEvent),
) -> Result<Vec<PathBuf>, LaunchError> {
    let order = order_path(&l.out);
    // Each loader's output is its log: only its final table, as `-q`; the parent serves the
    // run's live metrics, on a port of its own.
    let mut task = l.task.clone();
    if let Some(run) = task.run_mut() {
        run.quiet = true;
        run.metrics_listen = None;
        run.metrics_linger = None;
    }
    let doc = Order::new(l.run_id.clone(), l.count, task).to_json();
    crate::fsutil::write_atomic(&order, doc.as_bytes()).map_err(|source| LaunchError::Io {
        what: "writing the loaders' order",
        path: order.clone(),
        source,
    })?;
    let mut loaders = Vec::new();
    for &index in &l.indices {
        let loader = match start(l, &order, index) {
            Ok(loader) => loader,
            Err(e) => {
                stop_all(&mut loaders, libc::SIGKILL);
                return Err(e);
            }
        };
        on(LaunchEvent::Started {
            index,
            count: l.count,
            out: &loader.out,
            log: &loader.log,
        });
        loaders.push(loader);
    }
    let mut failed = None;
    let mut signalled = false;
    while loaders.iter().any(|x| x.running) {
        for x in loaders.iter_mut().filter(|x| x.running) {
            let status = x.child.try_wait().map_err(|source| LaunchError::Io {
                what: "waiting for loader",
                path: x.log.clone(),
                source,
            })?;
            let Some(status) = status else { continue };
            x.running = false;
            if !status.success() && failed.is_none() && !cancel.is_cancelled() {
                let text = std::fs::read_to_string(&x.log).unwrap_or_default();
                failed = Some(LaunchError::Failed {
                    index: x.index,
                    count: l.count,
                    status,
                    last: crate::fsutil::last_line(&text),
                    log: x.log.clone(),
                });
            }
        }
        if failed.is_some() {
            stop_all(&mut loaders, libc::SIGKILL);
        } else if cancel.is_cancelled() && !signalled {
            // Each loader stops as an interrupted run and writes what it measured.
            stop_all_softly(&mut loaders);
            signalled = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if let Some(f) = failed {
        return Err(f);
    }
    Ok(loaders.into_iter().map(|x| x.out).collect())
}

/// Starts loader `index`: `cqlbench shard ORDER --index I --out NAME.shard-I.json`.
fn start(l: &Launch, order: &Path, index: u64) -> Result<Loader, LaunchError> {
    let out = shard_out(&l.out, index);
    let log = out.with_extension("log");
    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| LaunchError::Io { what, path, source }
    };
    let file = std::fs::File::create(&log).map_err(io("creating", &log))?;
    let err = file.try_clone().map_err(io("creating", &log))?;
    let child = Command::new(&l.exe)
        .arg("shard")
        .arg(order)
        .args(["--index", &index.to_string()])
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(io("starting a loader with", &l.exe))?;
    Ok(Loader {
        index,
        child,
        out,
        log,
        running: true,
    })
}

fn stop_all(loaders: &mut [Loader], signal: i32) {
    for x in loaders.iter_mut().filter(|x| x.running) {
        signal_child(&x.child, signal);
        let _ = x.child.wait();
        x.running = false;
    }
}

fn stop_all_softly(loaders: &mut [Loader]) {
    for x in loaders.iter().filter(|x| x.running) {
        signal_child(&x.child, libc::SIGTERM);
    }
}

fn signal_child(child: &Child, signal: i32) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on our own child's PID, which has not been reaped (we have not
        // waited for it yet), so the PID cannot have been reused.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> Task {
        crate::step::order::test_task("db1")
    }

    #[test]
    fn shards_go_beside_the_merged_result() {
        assert_eq!(
            shard_out(Path::new("/r/run.json"), 2),
            Path::new("/r/run.shard-2.json")
        );
    }

    #[test]
    fn a_failing_loader_stops_the_others_and_is_named() {
        let dir = tempfile::tempdir().unwrap();
        // A "cqlbench" that fails at once for shard 1 and sleeps for the others.
        let exe = dir.path().join("fake");
        std::fs::write(
            &exe,
            "#!/bin/sh\ncase \"$*\" in *'--index 1 '*) echo 'boom: no cluster'; exit 3;; esac\nexec sleep 30\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let l = Launch::all(exe, task(), 3, "r1".into(), dir.path().join("run.json"));
        let started = std::time::Instant::now();
        let mut seen = Vec::new();
        let err = run(&l, &Cancel::new(), &mut |e| {
            let LaunchEvent::Started { index, .. } = e;
            seen.push(index);
        })
        .unwrap_err();
        assert_eq!(seen, [0, 1, 2]);
        let text = err.to_string();
        assert!(
            text.starts_with("shard 1/3 exit status: 3: boom: no cluster"),
            "{text}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the others were stopped"
        );
    }

    #[test]
    fn a_launch_of_some_indices_starts_only_those_shards_of_n() {
        let dir = tempfile::tempdir().unwrap();
        // A "cqlbench" that records its arguments in the log and succeeds.
        let exe = dir.path().join("fake");
        std::fs::write(&exe, "#!/bin/sh\necho \"$*\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The parent's live-metrics port is its own, not its loaders'.
        let mut parents = task();
        parents.run_mut().unwrap().metrics_listen = Some("127.0.0.1:9500".parse().unwrap());
        let l = Launch {
            indices: vec![1],
            ..Launch::all(
                exe,
                parents,
                3,
                "r1-s02".into(),
                dir.path().join("cap.step-02.json"),
            )
        };
        let mut seen = Vec::new();
        let outs = run_shards(&l, &Cancel::new(), &mut |e| {
            let LaunchEvent::Started { index, count, .. } = e;
            seen.push((index, count));
        })
        .unwrap();
        assert_eq!(seen, [(1, 3)]);
        assert_eq!(outs, [dir.path().join("cap.step-02.shard-1.json")]);
        let log = std::fs::read_to_string(outs[0].with_extension("log")).unwrap();
        let order = dir.path().join("cap.step-02.order.json");
        assert_eq!(
            log.trim(),
            format!(
                "shard {} --index 1 --out {}",
                order.display(),
                outs[0].display()
            )
        );
        // The order names the run and its shards, and carries the typed step.
        let o = Order::read(&order).unwrap();
        assert_eq!((o.run_id.as_str(), o.shards), ("r1-s02", 3));
        assert_eq!(o.task.run().unwrap().hosts, ["db1"]);
        assert!(
            o.task.run().unwrap().quiet,
            "a local loader's output is its log"
        );
        assert_eq!(o.metrics_listen, None);
        assert!(!dir.path().join("cap.step-02.shard-0.log").exists());
    }
}
