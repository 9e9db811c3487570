//! `cqlbench probe` through the real binary, with real fio on a temporary directory. Runtimes
//! and file sizes are tiny so the whole file takes seconds.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_cqlbench");

/// `cqlbench probe --dir DIR` with 1 s runs and 16 MiB files.
fn probe(dir: &Path) -> Command {
    let mut cmd = probe_sized(dir, 16);
    cmd.args(["--runtime-s", "1"]);
    cmd
}

fn probe_sized(dir: &Path, size_mib: u64) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("probe")
        .arg("--dir")
        .arg(dir)
        .arg(format!("--size-mib={size_mib}"))
        .env_remove("CQLBENCH_FIO")
        .env_remove("CQLBENCH_SYSBENCH")
        .env("CQLBENCH_HOME", dir.join("home"));
    cmd
}

/// Names of the scratch directories left in `dir` (there must be none).
fn scratch_dirs(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".cqlbench-probe-"))
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn profile<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no profile {name}"))
}

#[test]
fn probe_prints_the_table_and_writes_a_versioned_result() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("result.json");
    let jobs = dir.path().join("jobs");
    let assert = probe(dir.path())
        .args(["--profiles", "rand_read_4k,lcs,mmap_rand_read"])
        .args(["--env", "ci-box", "--out"])
        .arg(&out)
        .arg("--write-jobs")
        .arg(&jobs)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("Disk p99 read latency"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("ci-box ")),
        "{stdout}"
    );
    for name in ["rand_read_4k", "lcs", "mmap_rand_read"] {
        assert!(
            stdout.lines().any(|l| l.trim_start().starts_with(name)),
            "{stdout}"
        );
        assert!(
            jobs.join(format!("{name}.fio")).is_file(),
            "job file {name}"
        );
    }

    let r = read_json(&out);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["env"], "ci-box");
    assert_eq!(r["complete"], true);
    assert!(r["host"]["cores"].as_u64().unwrap() >= 1);
    assert!(r["started_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(r["cpu"]["source"], "sysbench");
    assert!(r["cpu"]["events_s_1_thread"].as_f64().unwrap() > 0.0);
    let rr = profile(&r, "rand_read_4k");
    let iops = rr["read_iops"].as_f64().unwrap();
    assert!(iops > 0.0);
    assert_eq!(rr["write_iops"].as_f64().unwrap(), 0.0);
    let (p50, p99) = (
        rr["read_p50_us"].as_f64().unwrap(),
        rr["read_p99_us"].as_f64().unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99, "p50 {p50} p99 {p99}");
    assert_eq!(r["summary"]["disk_iops"].as_f64().unwrap(), iops);
    assert_eq!(
        r["summary"]["disk_read_p99_us"],
        profile(&r, "lcs")["read_p99_us"]
    );
    assert!(profile(&r, "lcs")["write_mb_s"].as_f64().unwrap() > 0.0);
    // One pass over the 16 MiB file in 4 KiB reads.
    let mmap = profile(&r, "mmap_rand_read");
    assert!(mmap["read_mb_s"].as_f64().unwrap() > 0.0);
    // The job file recorded in the result is the one written for running by hand.
    assert_eq!(
        rr["job_file"].as_str().unwrap(),
        std::fs::read_to_string(jobs.join("rand_read_4k.fio")).unwrap()
    );
    assert!(scratch_dirs(dir.path()).is_empty());
}

#[test]
fn builtin_cpu_score_when_sysbench_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    probe(dir.path())
        .env("CQLBENCH_SYSBENCH", "/nonexistent/sysbench")
        .args(["--profiles", "commitlog", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("(builtin)"));
    let r = read_json(&out);
    assert_eq!(r["cpu"]["source"], "builtin");
    assert_eq!(r["summary"]["cpu_source"], "builtin");
    assert!(r["cpu"]["events_s_all_threads"].as_f64().unwrap() > 0.0);
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .contains("sysbench unavailable")
    );
    let cl = profile(&r, "commitlog");
    assert!(cl["write_iops"].as_f64().unwrap() > 0.0);
    assert!(cl["write_p99_us"].as_f64().unwrap() > 0.0);
    assert!(
        cl["sync_p99_us"].as_f64().unwrap() > 0.0,
        "fdatasync latency"
    );
    assert!(scratch_dirs(dir.path()).is_empty());
}

/// Runs the probe expecting failure; returns stderr, checked to be a single line.
fn one_line_failure(cmd: &mut Command) -> String {
    let out = cmd.assert().failure().get_output().clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<_> = stderr.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "not one line: {stderr}");
    stderr
}

#[test]
fn missing_fio_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = one_line_failure(
        probe(dir.path())
            .env("CQLBENCH_FIO", "/nonexistent/fio")
            .arg("--skip-cpu"),
    );
    assert!(err.contains("fio not found at '/nonexistent/fio'"), "{err}");
    assert!(err.contains("apt-get install -y fio"), "{err}");
    assert!(scratch_dirs(dir.path()).is_empty());
}

#[test]
fn unusable_directories_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = one_line_failure(&mut probe(&dir.path().join("absent")));
    assert!(err.contains("does not exist"), "{err}");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let err = one_line_failure(&mut probe(&file));
    assert!(err.contains("is a file, not a directory"), "{err}");
    // sysfs refuses new directories, even to root.
    let err = one_line_failure(&mut probe(Path::new("/sys")));
    assert!(err.contains("'/sys' is not writable"), "{err}");
    // 100 TiB data files: refused by the statvfs check before anything is written.
    let err = one_line_failure(&mut probe_sized(dir.path(), 100_000_000));
    assert!(err.contains("not enough free space"), "{err}");
    assert!(scratch_dirs(dir.path()).is_empty());
    assert!(!dir.path().join("home").join("probes").exists());
}

/// Runs the probe expecting clap to reject the command line; returns the first line of
/// stderr (clap adds a "For more information" line).
fn usage_error(cmd: &mut Command) -> String {
    let out = cmd.assert().failure().code(2).get_output().clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    stderr.lines().next().unwrap_or_default().to_string()
}

#[test]
fn bad_input_is_rejected_with_the_accepted_values() {
    let dir = tempfile::tempdir().unwrap();
    let err = usage_error(probe(dir.path()).args(["--profiles", "lcs,leveled"]));
    assert!(err.contains("unknown profile 'leveled'"), "{err}");
    assert!(err.contains("mmap_rand_read"), "{err}");
    let err = one_line_failure(probe(dir.path()).args(["--env", "a/b"]));
    assert!(err.contains("invalid environment name 'a/b'"), "{err}");
    let err = usage_error(probe_sized(dir.path(), 16).args(["--runtime-s", "0"]));
    assert!(err.contains("--runtime-s"), "{err}");
    assert!(scratch_dirs(dir.path()).is_empty());
}

#[test]
fn sigint_mid_run_removes_the_scratch_files_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let child = std::process::Command::new(BIN)
        .arg("probe")
        .arg("--dir")
        .arg(dir.path())
        .args(["--skip-cpu", "--profiles", "rand_read_4k"])
        .args(["--runtime-s", "60", "--size-mib", "16", "--out"])
        .arg(&out)
        .env_remove("CQLBENCH_FIO")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Wait until fio has laid out its data file in the scratch directory.
    let deadline = Instant::now() + Duration::from_secs(20);
    let data_file = loop {
        let found = scratch_dirs(dir.path())
            .into_iter()
            .map(|s| dir.path().join(s).join("data.0"))
            .find(|p| p.is_file());
        if let Some(p) = found {
            break p;
        }
        assert!(Instant::now() < deadline, "fio never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(!data_file.exists());
    assert!(scratch_dirs(dir.path()).is_empty());
    // The partial result says it is incomplete.
    let r = read_json(&out);
    assert_eq!(r["complete"], false);
}

/// `--json`: the output is the result alone, one line (what a pod's log holds), which
/// `cqlbench report` reads as a probe result.
#[test]
fn json_prints_only_the_result_which_report_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("kept.json");
    let assert = probe(dir.path())
        .args([
            "--profiles",
            "rand_read_4k",
            "--skip-cpu",
            "--json",
            "--env",
            "node-a",
        ])
        .arg("--out")
        .arg(&out_file)
        .assert()
        .success();
    let out = assert.get_output();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        printed,
        read_json(&out_file),
        "the file is written as usual"
    );
    assert_eq!(printed["env"], "node-a");
    // As `kubectl logs job/… > node-a.json` would leave it.
    let log = dir.path().join("node-a.json");
    std::fs::write(&log, &stdout).unwrap();
    let report = Command::new(BIN)
        .arg("report")
        .arg(&log)
        .env("CQLBENCH_HOME", dir.path().join("home"))
        .assert()
        .success();
    let text = String::from_utf8(report.get_output().stdout.clone()).unwrap();
    assert!(text.contains("node-a"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("IOPS")),
        "{text}"
    );
}
