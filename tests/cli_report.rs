//! `cqlbench report` and `cqlbench compare` through the real binary, on synthetic result files
//! written in the test (no cluster).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cqlbench::result::fixture::{RunShape, run};
use predicates::prelude::*;

const BIN: &str = env!("CARGO_BIN_EXE_cqlbench");

fn write_run(dir: &Path, name: &str, env: &str, shape: RunShape) -> PathBuf {
    let path = dir.join(name);
    run(env, &shape).write(&path).unwrap();
    path
}

fn shape(seed: u64, ops_per_s: f64, latency_ms: f64) -> RunShape {
    RunShape {
        ops_per_s,
        latency_ms,
        intervals: 32,
        seed,
        ..RunShape::default()
    }
}

fn cmd() -> Command {
    Command::new(BIN)
}

/// The line of `out` that starts (after indentation) with `metric`.
fn line<'a>(out: &'a str, metric: &str) -> &'a str {
    out.lines()
        .find(|l| l.trim_start().starts_with(metric))
        .unwrap_or_else(|| panic!("no line for {metric} in\n{out}"))
}

#[test]
fn report_prints_environments_side_by_side_in_three_formats() {
    let dir = tempfile::tempdir().unwrap();
    let a1 = write_run(dir.path(), "a1.json", "ec2", shape(1, 2_300.0, 2.0));
    let a2 = write_run(dir.path(), "a2.json", "ec2", shape(2, 2_100.0, 2.0));
    let b = write_run(dir.path(), "b.json", "k8s", shape(3, 1_800.0, 3.0));
    let out = cmd().arg("report").args([&a1, &a2, &b]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // The summary on top, one row per run, then the environments side by side.
    assert!(text.starts_with("Runs (latency in ms)\n"), "{text}");
    for (row, name, env) in [
        ("#1", "a1.json", "ec2"),
        ("#2", "a2.json", "ec2"),
        ("#3", "b.json", "k8s"),
    ] {
        let cells: Vec<&str> = line(&text, row).split_whitespace().collect();
        assert_eq!(cells[..3], [row, env, name], "{text}");
    }
    line(&text, "response time (resp) = from the intended start");
    let at = text
        .find("Average throughput (ops/s) — keyvalue, closed loop, 64 in flight\n")
        .expect("the scenario's tables");
    let header = text[at..].lines().nth(1).unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["ec2", "k8s"]
    );
    assert!(line(&text, "runs").ends_with("2    1"), "{text}");
    for p in ["p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99"] {
        line(&text, p);
    }

    let md = dir.path().join("report.md");
    cmd()
        .arg("report")
        .args([&a1, &b])
        .arg("--markdown")
        .arg("--out")
        .arg(&md)
        .assert()
        .success()
        .stdout("");
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.contains("| p99.99 |") && md.contains("|:--|--:|--:|"),
        "{md}"
    );

    cmd()
        .arg("report")
        .args([&a1, &b])
        .arg("--csv")
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "scenario,env,mean_ops_per_s,runs,",
        ))
        .stdout(predicate::str::contains(",k8s,"));
}

#[test]
fn report_rejects_missing_and_malformed_files_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_run(dir.path(), "good.json", "ec2", shape(1, 2_000.0, 2.0));
    let missing = dir.path().join("missing.json");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 1, \"phases\": 3}").unwrap();
    for (path, what) in [(&missing, "No such file"), (&bad, "not a valid run result")] {
        let out = cmd().arg("report").arg(&good).arg(path).assert().failure();
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("error: {}", path.display())),
            "{err}"
        );
        assert!(err.contains(what), "{err}");
    }
    let out = cmd()
        .arg("compare")
        .arg(&good)
        .arg(&missing)
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing.json"), "{err}");
}

#[test]
fn compare_tells_same_from_handicapped() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_run(dir.path(), "a.json", "ec2", shape(1, 2_000.0, 2.0));
    let same = write_run(dir.path(), "same.json", "ec2", shape(2, 2_000.0, 2.0));
    let slow = write_run(dir.path(), "slow.json", "half-cpu", shape(3, 1_700.0, 2.6));

    let out = cmd().arg("compare").arg(&a).arg(&same).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        line(&text, "throughput ops/s").ends_with("not distinguishable"),
        "{text}"
    );

    let out = cmd().arg("compare").arg(&a).arg(&slow).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for metric in [
        "throughput ops/s",
        "write response p99 ms",
        "read response p50 ms",
    ] {
        assert!(line(&text, metric).ends_with("worse"), "{text}");
    }
    // And the other way round, the baseline is better than the handicapped run.
    let out = cmd().arg("compare").arg(&slow).arg(&a).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        line(&text, "throughput ops/s").ends_with("better"),
        "{text}"
    );
}

#[test]
fn compare_warns_when_the_loads_differ() {
    let dir = tempfile::tempdir().unwrap();
    let closed = write_run(dir.path(), "closed.json", "ec2", shape(1, 2_000.0, 2.0));
    let at = |name: &str, rate: f64, seed: u64| {
        let shape = RunShape {
            rate_per_s: Some(rate),
            ops_per_s_sd: 5.0,
            ..shape(seed, rate, 2.0)
        };
        write_run(dir.path(), name, "ec2", shape)
    };
    let (r700, r1400, again) = (
        at("r700.json", 700.0, 2),
        at("r1400.json", 1_400.0, 3),
        at("again.json", 700.0, 4),
    );
    let stderr = |a: &Path, b: &Path| {
        let out = cmd().arg("compare").arg(a).arg(b).assert().success();
        let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        // The comparison is still made.
        line(&stdout, "throughput ops/s");
        String::from_utf8(out.get_output().stderr.clone()).unwrap()
    };
    let err = stderr(&closed, &r700);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("warning: A is closed loop (64 in flight), B is a fixed rate (700 ops/s): open loop against closed loop"),
        "{err}"
    );
    assert!(
        err.trim_end()
            .ends_with("so their latencies are not comparable"),
        "{err}"
    );
    let err = stderr(&r700, &r1400);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("B is a fixed rate (1,400 ops/s): their targets differ"),
        "{err}"
    );
    // The same load: no warning.
    assert_eq!(stderr(&r700, &again), "");
}

#[test]
fn report_reads_capacity_results_and_writes_html_next_to_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = cqlbench::result::fixture::write_showcase(dir.path()).unwrap();
    let html = dir.path().join("report.html");
    let out = cmd()
        .arg("report")
        .args(&inputs)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("Capacity search — ec2, keyvalue\n"), "{text}");
    assert!(line(&text, "ec2  keyvalue").contains("3,000"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains(r#"<svg class="chart" data-chart="capacity-rate""#));

    // With --out the tables go to the file and nothing is printed.
    let tables = dir.path().join("report.md");
    cmd()
        .arg("report")
        .args(&inputs)
        .arg("--markdown")
        .arg("--out")
        .arg(&tables)
        .arg("--html")
        .arg(&html)
        .assert()
        .success()
        .stdout("");
    assert!(
        std::fs::read_to_string(&tables)
            .unwrap()
            .contains("### Capacity verdict")
    );
}

#[test]
fn a_deployment_adds_the_cost_per_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_run(dir.path(), "a.json", "ec2", shape(1, 2000.0, 2.0));
    let out = cmd()
        .arg("report")
        .arg(&a)
        .args(["--deployment", "ec2=r5.2xlarge,3,gp3:1TB,1y"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        line(&text, "deployment").contains("3 × r5.2xlarge"),
        "{text}"
    );
    assert!(
        line(&text, "throughput from").contains("throughput test"),
        "{text}"
    );
    let per_1k = line(&text, "$ per 1,000 ops/s");
    assert!(per_1k.chars().any(|c| c.is_ascii_digit()), "{per_1k}");
    for bad in ["ec2=r5.2xlarge", "ec2=r5.2xlarge,0", "ec2=nosuch,3"] {
        cmd()
            .arg("report")
            .arg(&a)
            .args(["--deployment", bad])
            .assert()
            .failure()
            .stderr(predicate::str::contains("error:"));
    }
}
