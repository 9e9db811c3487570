//! `capacity --loaders 2` and `fill --loaders 2` against one real local node, through the CLI:
//! each step run by two loader processes whose shares add up to the step's rate, started
//! together, judged on their merged result; a loader stopped (SIGSTOP) for a few seconds
//! mid-step makes the step loader-bound and ends the search; one search run by two processes
//! as two machines run it (`--shard 0/2` coordinating, `--shard 1/2` following, through the
//! cluster); a sharded fill writes exactly the rows asked for, counted back.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use cqlbench::result::RunResult;
use cqlbench::result::capacity::{CapacityResult, CapacityStatus};

fn cqlbench(clusters: &Path, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
    c.args(args)
        .env("CQLBENCH_CLUSTERS_DIR", clusters)
        .env("CQLBENCH_HOME", home);
    c
}

fn ok(mut c: Command) -> String {
    let out = c.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{c:?} failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The PID of the process whose command line holds every one of `words`, if one runs.
fn pid_with(words: &[&str]) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_string_lossy().parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        words
            .iter()
            .all(|w| args.iter().any(|a| a == w))
            .then_some(pid)
    })
}

const SEARCH: &[&str] = &[
    "--keyspace",
    "caploaders",
    "--rows",
    "2000",
    "--loaders",
    "2",
    "--factor",
    "1.5",
];

#[test]
fn a_capacity_search_and_a_fill_by_two_loaders() {
    let tc = TestCluster::create(spec("caploaders", "dc1:1"));
    tc.start();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let run = |args: &[&str]| cqlbench(tc.root(), dir, args);

    // Two steps of two loaders each: 200 then 300 ops/s, 100 and 150 each (at 400 ops/s a
    // fresh 256 MiB node on a host with another node's run beside it answered at a p50 of
    // 2.7 s, and the loaders, holding their most requests in flight, fell behind).
    let cap = dir.join("cap.json");
    let mut args = vec!["capacity", "keyvalue", "--cluster", "caploaders"];
    args.extend(SEARCH);
    args.extend(QUIET_CAPACITY);
    args.extend([
        "--start-rate",
        "200",
        "--max-steps",
        "2",
        "--step",
        "8s",
        "--step-warmup",
        "2s",
        "--out",
        cap.to_str().unwrap(),
    ]);
    let text = ok(run(&args));
    let r = CapacityResult::read(&cap).unwrap();
    assert_eq!(r.status, CapacityStatus::Completed, "{text}");
    assert_eq!(r.steps.len(), 2, "{text}");
    for (s, rate) in r.steps.iter().zip([200.0, 300.0]) {
        assert_eq!(s.target_rate_per_s, rate);
        let l = s.loaders.as_ref().expect("the step's loaders");
        assert_eq!(l.count, 2);
        assert_eq!(l.shards.len(), 2);
        // Started together at the barrier.
        assert!(
            l.start_spread_ms < 500.0,
            "step {}: {} ms",
            s.index,
            l.start_spread_ms
        );
        for (i, sh) in l.shards.iter().enumerate() {
            assert_eq!(sh.index, i as u64);
            assert_eq!(sh.target_rate_per_s, Some(rate / 2.0));
            assert!(sh.ops_per_s > 0.8 * rate / 2.0, "step {}: {sh:?}", s.index);
            assert!(sh.behind.is_empty(), "step {}: {sh:?}", s.index);
        }
        // The step's figures are the merged ones: the loaders' rates summed.
        assert!(
            (l.ops_per_s() - s.summary.ops_per_s).abs() < 0.02 * rate,
            "step {}: {} against {}",
            s.index,
            l.ops_per_s(),
            s.summary.ops_per_s
        );
        assert!(s.passed, "step {}: {:?}", s.index, s.failed_checks());
        assert!(!s.loader_bound());
        for i in 0..2 {
            let shard = dir.join(format!("cap.step-{:02}.shard-{i}.json", s.index));
            RunResult::read(&shard).unwrap();
        }
        let merged = RunResult::read(&dir.join(&s.result)).unwrap();
        assert!(merged.merged.is_some());
    }
    let v = r.verdict.as_ref().unwrap();
    assert_eq!(v.highest_passing_rate_per_s, Some(300.0));
    assert_eq!((v.failing_rate_per_s, v.loader_bound_step), (None, None));
    let table = ok(run(&["report", cap.to_str().unwrap()]));
    assert!(table.contains("start spread ms"), "{table}");

    // A loader stopped for 4 s of a 12 s step: the step is loader-bound, and the search ends.
    let starved = dir.join("starved.json");
    let mut args = vec!["capacity", "keyvalue", "--cluster", "caploaders"];
    args.extend(SEARCH);
    args.extend(QUIET_CAPACITY);
    args.extend([
        "--skip-rampup",
        "--start-rate",
        "200",
        "--max-steps",
        "3",
        "--step",
        "12s",
        "--step-warmup",
        "2s",
        "--out",
        starved.to_str().unwrap(),
    ]);
    let search = run(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shard_out: PathBuf = dir.join("starved.step-01.shard-1.json");
    let shard_out = shard_out.to_str().unwrap().to_string();
    let started = Instant::now();
    let pid = loop {
        if let Some(pid) = pid_with(&["shard", "--index", "1", &shard_out]) {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "loader 1 never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // Past its rampup, the barrier and the step's 2 s warmup, late in the 12 s step: 9 of its
    // main phase's seconds appended to its per-interval CSV (the rampup's rows are another
    // phase's). Stopped from there past the window's end, it cannot send its last seconds'
    // operations inside the window; stopped earlier, it caught up before the window ended
    // (sent late but inside it, which the achieved share counts) and nothing fell behind.
    let csv = PathBuf::from(&shard_out).with_extension("intervals.csv");
    loop {
        let main_rows = std::fs::read_to_string(&csv)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("main,"))
            .count();
        if main_rows >= 9 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "loader 1 never reached its main phase: {}",
            csv.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill(2) on the loader found by its command line, a child of the search we
    // started; the search waits for it before it can be reaped.
    unsafe {
        assert_eq!(libc::kill(pid, libc::SIGSTOP), 0);
    }
    std::thread::sleep(Duration::from_secs(6));
    // SAFETY: as above: the same loader, still our search's unreaped child.
    unsafe {
        assert_eq!(libc::kill(pid, libc::SIGCONT), 0);
    }
    let out = search.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = CapacityResult::read(&starved).unwrap();
    assert_eq!(
        r.steps.len(),
        1,
        "the search stops at the loader-bound step: {text}"
    );
    let s = &r.steps[0];
    assert!(s.loader_bound() && !s.passed, "{:?}", s.loaders);
    let v = r.verdict.as_ref().unwrap();
    assert_eq!(v.loader_bound_step, Some(1));
    assert!(
        v.loader_bound[0].starts_with("loader 1 of 2 fell behind: "),
        "{:?}",
        v.loader_bound
    );
    assert_eq!(v.failing_rate_per_s, None, "not the cluster's failure");
    assert!(
        text.contains("the loaders, not the cluster, are the limit"),
        "{text}"
    );

    across_machines(&run, dir);

    // A fill by two loaders: exactly the rows asked for, each written once.
    let fill = dir.join("fill.json");
    ok(run(&[
        "fill",
        "keyvalue",
        "--cluster",
        "caploaders",
        "--keyspace",
        "fillloaders",
        "--loaders",
        "2",
        "--bytes",
        "10G",
        "--ops",
        "5000",
        "--out",
        fill.to_str().unwrap(),
        "-q",
    ]));
    let merged = RunResult::read(&fill).unwrap();
    assert_eq!(merged.merged.as_ref().unwrap().shards.len(), 2);
    // The merged result records the fill: every row asked for, the 10G target not reached.
    let f = merged.fill.as_ref().expect("the fill's record");
    assert_eq!(f.rows_written, 5000, "{f:?}");
    assert!(!f.reached && f.target_mib == 10.0 * 1024.0, "{f:?}");
    let count = runtime().block_on(async {
        let s = session(tc.c()).await;
        s.query_unpaged("SELECT COUNT(*) FROM fillloaders.kv", ())
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .first_row::<(i64,)>()
            .unwrap()
            .0
    });
    assert_eq!(count, 5000);
    tc.finish();
}

/// One search on two machines, as two processes here: `--shard 1/2` follows the steps
/// `--shard 0/2` publishes in the cluster, uploads its results there and exits 0 at the end;
/// the coordinator's capacity result has both shards of every step, each half the rate.
fn across_machines(run: &dyn Fn(&[&str]) -> Command, dir: &Path) {
    let coordinator_out = dir.join("across.json");
    let follower_out = dir.join("follower").join("across.json");
    let search = |shard: &'static str, out: &Path| -> Vec<String> {
        [
            "capacity",
            "keyvalue",
            "--cluster",
            "caploaders",
            "--keyspace",
            "caploaders",
            "--rows",
            "2000",
            "--skip-rampup",
            "--shard",
            shard,
            "--run-id",
            "across-1",
            "--barrier-timeout",
            "60s",
            "--start-rate",
            "200",
            "--factor",
            "1.5",
            "--max-steps",
            "2",
            "--step",
            "6s",
            "--step-warmup",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .chain(QUIET_CAPACITY)
        .map(|s| s.to_string())
        .collect()
    };
    let args = search("1/2", &follower_out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let follower = run(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let args = search("0/2", &coordinator_out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = ok(run(&args));
    let out = follower.wait_with_output().unwrap();
    let followed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the follower failed:\n{followed}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        followed.contains("the coordinator (shard 0) holds the capacity result"),
        "{followed}"
    );
    let r = CapacityResult::read(&coordinator_out).unwrap();
    assert_eq!(r.status, CapacityStatus::Completed, "{text}");
    assert_eq!(r.steps.len(), 2, "{text}");
    for (s, rate) in r.steps.iter().zip([200.0, 300.0]) {
        assert_eq!(s.target_rate_per_s, rate);
        let l = s.loaders.as_ref().expect("the step's loaders");
        assert_eq!(l.count, 2);
        assert_eq!(l.shards.len(), 2);
        for (i, sh) in l.shards.iter().enumerate() {
            assert_eq!(sh.index, i as u64);
            assert_eq!(sh.target_rate_per_s, Some(rate / 2.0));
            assert!(sh.ops_per_s > 0.8 * rate / 2.0, "step {}: {sh:?}", s.index);
        }
        // The follower's result, uploaded, beside the coordinator's own; and on its machine.
        for i in 0..2 {
            let shard = dir.join(format!("across.step-{:02}.shard-{i}.json", s.index));
            RunResult::read(&shard).unwrap();
        }
        let theirs = dir
            .join("follower")
            .join(format!("across.step-{:02}.shard-1.json", s.index));
        RunResult::read(&theirs).unwrap();
        assert!(s.passed, "step {}: {:?}", s.index, s.failed_checks());
    }
}
