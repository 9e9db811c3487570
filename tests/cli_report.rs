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
    let sub = dir.path().join("runs");
    std::fs::create_dir(&sub).unwrap();
    for (path, what) in [
        (&missing, "No such file"),
        (&bad, "not a valid run result"),
        (
            &sub,
            "a directory, not a result file (name the result files in it",
        ),
    ] {
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

#[test]
fn compare_sets_of_runs_and_gate_on_significant_changes_beyond_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let set = |name: &str, seed: u64, ops_per_s: f64, latency_ms: f64| {
        let d = dir.path().join(name);
        std::fs::create_dir(&d).unwrap();
        for k in 0..3 {
            write_run(
                &d,
                &format!("r{k}.json"),
                name,
                shape(seed + k, ops_per_s, latency_ms),
            );
        }
        // Beside the runs, a file that is not a run result is left out, and said so.
        std::fs::write(d.join("notes.json"), "{}").unwrap();
        d
    };
    let base = set("base", 10, 2_000.0, 2.0);
    let same = set("same", 20, 2_000.0, 2.0);
    let slow = set("slow", 30, 1_700.0, 2.6);
    let gates = ["--fail-if", "p99 > +10%", "--fail-if", "throughput < -5%"];

    // The same distribution: every rule holds, exit 0.
    let out = cmd()
        .arg("compare")
        .arg(&base)
        .arg(&same)
        .args(gates)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains(": main phase, one figure per run"), "{text}");
    assert!(text.contains("3 runs (same)"), "{text}");
    assert!(text.contains("runs A/B"), "{text}");
    assert!(
        line(&text, "throughput ops/s").contains("3.0/3.0"),
        "{text}"
    );
    assert!(text.contains("A: not run results, left out:"), "{text}");
    assert!(text.contains("notes.json"), "{text}");
    assert!(
        line(&text, "fail-if 'p99 > +10%'").ends_with("held"),
        "{text}"
    );
    assert!(
        line(&text, "fail-if 'throughput < -5%'").ends_with("held"),
        "{text}"
    );

    // 15% less throughput and 30% slower: both rules broken, exit 1, one `failed:` line on stderr.
    let out = cmd()
        .arg("compare")
        .arg(&base)
        .arg(&slow)
        .args(gates)
        .assert()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(line(&text, "throughput ops/s").ends_with("worse"), "{text}");
    // The fixture's throughput is 1,700 against 2,000 ops/s, give or take its noise.
    let change: f64 = line(&text, "throughput ops/s")
        .split_whitespace()
        .find(|w| w.ends_with('%'))
        .and_then(|w| w.trim_end_matches('%').parse().ok())
        .unwrap();
    assert!((-18.0..-12.0).contains(&change), "{text}");
    let p99_rule = line(&text, "fail-if 'p99 > +10%'");
    assert!(p99_rule.contains("BROKEN by "), "{text}");
    assert!(p99_rule.contains("write response p99 ms +"), "{text}");
    assert!(p99_rule.contains("read response p99 ms +"), "{text}");
    assert!(
        line(&text, "fail-if 'throughput < -5%'").contains("BROKEN by throughput ops/s -1"),
        "{text}"
    );
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("failed: 2 of 2 --fail-if rule(s) broken:"),
        "{err}"
    );

    // A threshold beyond the change holds; the change is still reported as worse.
    cmd()
        .arg("compare")
        .arg(&base)
        .arg(&slow)
        .args([
            "--fail-if",
            "throughput < -20%",
            "--fail-if",
            "read.p50 > +50%",
        ])
        .assert()
        .success();

    // A glob names a set too; one run against one is compared interval by interval, and
    // gated the same way.
    let glob = format!("{}/r*.json", slow.display());
    cmd()
        .arg("compare")
        .arg(&base)
        .arg(&glob)
        .args(["--fail-if", "throughput < -5%"])
        .assert()
        .code(1);
    let out = cmd()
        .arg("compare")
        .arg(base.join("r0.json"))
        .arg(slow.join("r0.json"))
        .args(["--fail-if", "throughput < -5%"])
        .assert()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("measured one-second intervals"), "{text}");
    assert!(text.contains("n_eff A/B"), "{text}");
}

#[test]
fn runs_lists_the_catalogue_and_compare_takes_its_ids_and_tags() {
    let home = tempfile::tempdir().unwrap();
    let results = home.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    for k in 0..2 {
        write_run(
            &results,
            &format!("base-{k}.json"),
            "base",
            shape(40 + k, 2_000.0, 2.0),
        );
        let mut tagged = run("base", &shape(60 + k, 2_000.0, 2.0));
        tagged.tags = vec!["baseline".into(), "nightly".into()];
        tagged
            .write(&results.join(format!("tagged-{k}.json")))
            .unwrap();
        write_run(
            elsewhere.path(),
            &format!("slow-{k}.json"),
            "slow",
            shape(50 + k, 1_500.0, 3.0),
        );
    }
    let runs = |args: &[&str]| {
        let out = cmd()
            .env("CQLBENCH_HOME", home.path())
            .arg("runs")
            .args(args)
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let ids_of = |text: &str, part: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(part))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    // The home's results are found without asking; a directory elsewhere once imported.
    let text = runs(&[]);
    assert!(
        text.contains("4 of 4 results (index updated: 4 added"),
        "{text}"
    );
    let text = runs(&["--import", elsewhere.path().to_str().unwrap()]);
    assert!(
        text.contains("6 of 6 results (index updated: 2 added"),
        "{text}"
    );
    let text = runs(&["--env", "slow"]);
    assert!(
        text.contains("2 of 6 results (index updated: 0 added, 0 changed, 0 gone"),
        "{text}"
    );
    let ids = ids_of(&text, "/slow-");
    assert_eq!(ids.len(), 2, "{text}");
    assert!(line(&text, &ids[0]).contains(" run "), "{text}");
    assert!(line(&text, &ids[0]).contains("completed"), "{text}");
    let text = runs(&["--tag", "nightly"]);
    assert!(text.contains("2 of 6 results"), "{text}");
    assert!(text.contains("baseline,nightly"), "{text}");
    assert_eq!(ids_of(&text, "/tagged-").len(), 2, "{text}");
    let base_ids = ids_of(&runs(&["--env", "base"]), "/base-");
    assert_eq!(base_ids.len(), 2);
    // compare takes sets by id, and gates on them.
    let out = cmd()
        .env("CQLBENCH_HOME", home.path())
        .arg("compare")
        .arg(format!("id:{}", base_ids.join(",")))
        .arg(format!("id:{}", ids.join(",")))
        .args(["--fail-if", "throughput < -10%"])
        .assert()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("one figure per run"), "{text}");
    assert!(line(&text, "throughput ops/s").ends_with("worse"), "{text}");
    // And by tag: the tagged runs against untagged ones of the same distribution hold.
    let out = cmd()
        .env("CQLBENCH_HOME", home.path())
        .arg("compare")
        .arg("tag:baseline")
        .arg(format!("id:{}", base_ids.join(",")))
        .args(["--fail-if", "throughput < -10%"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("vs A tag:baseline: 2 runs (base)"), "{text}");
    assert!(line(&text, "fail-if").ends_with("held"), "{text}");
    // report takes ids too, beside paths.
    let out = cmd()
        .env("CQLBENCH_HOME", home.path())
        .arg("report")
        .arg(format!("id:{}", ids[0]))
        .arg(format!("id:{}", base_ids[0]))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("slow") && text.contains("base"), "{text}");
    cmd()
        .env("CQLBENCH_HOME", home.path())
        .arg("report")
        .arg("id:9999")
        .assert()
        .failure()
        .stderr(predicate::str::contains("no result with id 9999"));
    // A file removed is gone from the next listing.
    std::fs::remove_file(elsewhere.path().join("slow-0.json")).unwrap();
    let text = runs(&[]);
    assert!(
        text.contains("5 of 5 results (index updated: 0 added, 0 changed, 1 gone"),
        "{text}"
    );
}

#[test]
fn report_history_follows_a_figure_across_the_catalogues_runs() {
    let home = tempfile::tempdir().unwrap();
    let results = home.path().join("results");
    std::fs::create_dir(&results).unwrap();
    // Four nightly runs of one environment and workload, a day apart, and one of another
    // environment that the history of "nightly" leaves out.
    let mut paths = Vec::new();
    for (k, latency) in [2.0, 2.1, 2.0, 4.0].into_iter().enumerate() {
        let mut r = run("nightly", &shape(70 + k as u64, 2_000.0, latency));
        r.started_unix_s = 1_795_000_000 + k as u64 * 86_400;
        r.tags = vec!["nightly".into()];
        let p = results.join(format!("n{k}.json"));
        r.write(&p).unwrap();
        paths.push(p);
    }
    write_run(&results, "other.json", "other", shape(80, 900.0, 9.0));
    let html = home.path().join("h.html");
    let out = cmd()
        .env("CQLBENCH_HOME", home.path())
        .arg("report")
        .arg(&paths[3])
        .args(["--history", "p99", "--html"])
        .arg(&html)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("History of p99 — nightly · keyvalue (4 runs in the runs index)"),
        "{text}"
    );
    // Oldest first, dates in UTC, the report's own run marked, its jump in p99 shown.
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("History of p99"))
        .skip(2)
        .take(4)
        .collect();
    assert!(
        rows[0].trim_start().starts_with("2026-11-18 11:06"),
        "{rows:?}"
    );
    assert!(rows[3].contains("n3.json (this report)"), "{rows:?}");
    assert!(
        rows[3].contains("+"),
        "a change from the run before: {rows:?}"
    );
    assert!(!text.contains("other.json"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(r#"data-chart="history""#), "no history chart");
    assert!(page.contains("History · response p99 (ms)"));
    // By kind, and throughput.
    for figure in ["write.p50", "throughput", "max"] {
        cmd()
            .env("CQLBENCH_HOME", home.path())
            .arg("report")
            .arg(&paths[3])
            .args(["--history", figure])
            .assert()
            .success()
            .stdout(predicate::str::contains(format!(
                "History of {figure} — nightly"
            )));
    }
    // Bad input: one line, no panic.
    for (args, needle) in [
        (vec!["--history", "p98"], "'p98' is not a figure"),
        (vec!["--history", ""], "is not a figure"),
    ] {
        let out = cmd()
            .env("CQLBENCH_HOME", home.path())
            .arg("report")
            .arg(&paths[3])
            .args(&args)
            .assert()
            .failure();
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_ne!(out.get_output().status.code(), Some(101), "{err}");
    }
}

/// A run whose nodes' hosts were sampled through node exporters: `cqlbench report FILE` shows
/// each host (the local /proc one and each node's, named with its exporter) and each host's
/// disks, in the text, Markdown, CSV and HTML outputs.
#[test]
fn report_shows_the_hosts_of_node_exporters_beside_the_local_host() {
    use cqlbench::result::fixture::{run_with_metrics, with_node_hosts};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("remote.json");
    let mut r = run_with_metrics("remote", &shape(1, 2_000.0, 2.0), 2, &["sda"]);
    with_node_hosts(
        r.metrics.as_mut().unwrap(),
        &["10.0.0.5", "10.0.0.6"],
        &["nvme0n1"],
    );
    r.write(&path).unwrap();
    let out = cmd().arg("report").arg(&path).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let hosts = text
        .find("Hosts over the main phase (means of the samples)\n")
        .unwrap_or_else(|| panic!("no hosts table in\n{text}"));
    // The row of a host: # env host source… samples user system iowait steal load …
    let cells = |host: &str| -> Vec<&str> {
        text[hosts..]
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|c| c.get(2) == Some(&host))
            .unwrap_or_else(|| panic!("no row of {host} in\n{text}"))
    };
    let node = cells("10.0.0.6");
    assert_eq!(
        node[..6],
        [
            "#1",
            "remote",
            "10.0.0.6",
            "node",
            "exporter",
            "10.0.0.2:9100"
        ],
        "{text}"
    );
    assert_eq!(node[7..12], ["40.0", "5.0", "2.0", "2.0", "3.00"], "{text}");
    assert_eq!(cells("local")[3], "/proc");
    let disks = text
        .find("Host disks over the main phase (means of the samples)\n")
        .expect("the disks table");
    let disk: Vec<&str> = text[disks..]
        .lines()
        .find(|l| l.contains("10.0.0.5") && l.contains("nvme0n1"))
        .expect("node 10.0.0.5's disk")
        .split_whitespace()
        .collect();
    assert_eq!(
        disk[4..],
        ["100", "50", "4.0", "20.0", "0.50", "1.50", "0.75", "40"]
    );

    let out = cmd()
        .arg("report")
        .arg(&path)
        .arg("--markdown")
        .assert()
        .success();
    let md = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(md.contains("### Hosts over the main phase"), "{md}");
    assert!(
        md.contains("| #1 | remote | 10.0.0.5 | node exporter 10.0.0.1:9100 |"),
        "{md}"
    );

    let out = cmd()
        .arg("report")
        .arg(&path)
        .arg("--csv")
        .assert()
        .success();
    let csv = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for key in [
        "run",
        "host",
        "host_source",
        "cpu_steal_pct",
        "device",
        "util_pct",
    ] {
        assert!(header.contains(&key), "{key} in {header:?}");
    }
    let row = csv
        .lines()
        .find(|l| l.contains(",10.0.0.6,node exporter 10.0.0.2:9100,"))
        .unwrap_or_else(|| panic!("no row of 10.0.0.6 in\n{csv}"));
    assert!(row.contains(",remote.json,"), "{row}");
    assert!(
        row.ends_with(",nvme0n1,200,50,4,20,0.5,1.5,0.75,40"),
        "{row}"
    );

    let html = dir.path().join("report.html");
    cmd()
        .arg("report")
        .arg(&path)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<caption>Hosts over the main phase (means of the samples)</caption>"),
        "no hosts table in the page"
    );
    assert!(page.contains("<td class=\"text\">node exporter 10.0.0.2:9100</td>"));
}

/// Shards are parts of a run: two directories of shards (each one run's), a shard against a
/// whole run, and a gate fed shards are refused, naming the merge that makes them runs.
#[test]
fn compare_refuses_shards_and_names_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let shard = |sub: &str, i: u64, run_id: &str, ops: f64| -> PathBuf {
        let d = dir.path().join(sub);
        std::fs::create_dir_all(&d).unwrap();
        let mut r = run("ec2", &shape(10 + i, ops, 2.0));
        r.shard = Some(cqlbench::result::ShardOf {
            run_id: run_id.into(),
            index: i,
            count: 2,
            start: "barrier".into(),
            main_started_unix_s: None,
        });
        let p = d.join(format!("run.shard-{i}.json"));
        r.write(&p).unwrap();
        p
    };
    for i in 0..2 {
        shard("a", i, "before", 1_000.0);
        shard("b", i, "after", 1_000.0);
    }
    let whole = write_run(dir.path(), "whole.json", "ec2", shape(1, 2_000.0, 2.0));
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    for (x, y, gate) in [
        (a.clone(), b.clone(), false),
        (a.clone(), b.clone(), true),
        (a.join("run.shard-0.json"), whole.clone(), false),
        (whole.clone(), b.join("run.shard-1.json"), false),
    ] {
        let mut c = cmd();
        c.arg("compare").arg(&x).arg(&y);
        if gate {
            c.args(["--fail-if", "throughput < -5%"]);
        }
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{x:?} {y:?}: {stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(
            errors[0].contains("(a part of a run, not a run)"),
            "{stderr}"
        );
        assert!(errors[0].contains("cqlbench merge "), "{stderr}");
        // One shard of two given: the merge asks for all of them, not the one.
        let partial = x.extension().is_some() || y.to_string_lossy().contains("shard");
        assert_eq!(
            errors[0].contains("(all 2 shards of run"),
            partial,
            "{stderr}"
        );
    }
    // Whole runs still compare (the merge itself is tested on real shards in
    // tests/load_real.rs, which need their HDR logs).
    let other = write_run(dir.path(), "other.json", "ec2", shape(2, 2_000.0, 2.0));
    cmd()
        .arg("compare")
        .arg(&whole)
        .arg(&other)
        .assert()
        .success()
        .stdout(predicate::str::contains("throughput ops/s"));
}

/// Capacity searches compared: one a side by their brackets, sets of three by their brackets
/// and spread; `--fail-if 'capacity < -10%'` exits 1 on a real drop and 0 on an A/A pair;
/// rules and sides that do not fit are refused in one line.
#[test]
fn compare_of_capacity_searches_reports_the_change_with_its_interval_and_gates_on_it() {
    use cqlbench::result::fixture::capacity_at;
    let dir = tempfile::tempdir().unwrap();
    // A search that passed at `ops` and failed at 1.1 × `ops`.
    let search = |sub: &str, name: &str, ops: f64| -> PathBuf {
        let d = dir.path().join(sub);
        std::fs::create_dir_all(&d).unwrap();
        let mut r = capacity_at("ec2", ops);
        r.verdict.as_mut().unwrap().failing_rate_per_s = Some(ops * 1.1);
        let p = d.join(name);
        r.write(&p).unwrap();
        p
    };
    let a1 = search("one", "a.json", 1_000.0);
    let b1 = search("one", "b.json", 600.0);
    let a2 = search("one", "a2.json", 1_000.0);
    for (i, ops) in [1_000.0, 1_050.0, 980.0].into_iter().enumerate() {
        search("set-a", &format!("s{i}.json"), ops);
        search("set-a2", &format!("s{i}.json"), ops + 10.0 * i as f64);
    }
    for (i, ops) in [500.0, 520.0, 490.0].into_iter().enumerate() {
        search("set-b", &format!("s{i}.json"), ops);
    }
    let gate = ["--fail-if", "capacity < -10%"];
    let compare = |a: &Path, b: &Path, extra: &[&str]| {
        cmd()
            .arg("compare")
            .arg(a)
            .arg(b)
            .args(extra)
            .output()
            .unwrap()
    };
    // One search a side, brackets apart: worse, with the caveat; a gate on it refused.
    let o = compare(&a1, &b1, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let row = line(&out, "capacity ops/s");
    assert!(row.contains("-40.0%") && row.contains("worse"), "{row}");
    // B in [600, 660), A in [1000, 1100): 600/1100 − 1 .. 660/1000 − 1.
    assert!(row.contains("-45.5%..-34.0%"), "{row}");
    assert!(
        out.contains("one search a side: the brackets hold"),
        "{out}"
    );
    let o = compare(&a1, &a2, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        line(&out, "capacity ops/s").contains("not distinguishable"),
        "{out}"
    );
    // Sets of three: the repeats' interval joins the brackets'.
    let o = compare(&dir.path().join("set-a"), &dir.path().join("set-b"), &gate);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let row = line(&out, "capacity ops/s");
    assert!(row.contains("3/3") && row.contains("worse"), "{row}");
    assert!(out.contains("Welch's t-test"), "{out}");
    let o = compare(&dir.path().join("set-a"), &dir.path().join("set-a2"), &gate);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("fail-if 'capacity < -10%': held"), "{out}");
    // Rules and sides that do not fit.
    let whole = write_run(dir.path(), "whole.json", "ec2", shape(1, 2_000.0, 2.0));
    for (a, b, extra, needle) in [
        (
            a1.clone(),
            b1.clone(),
            &["--fail-if", "p99 > +10%"][..],
            "capacity searches are compared by their capacity only",
        ),
        (
            whole.clone(),
            whole.clone(),
            &gate[..],
            "a capacity rule needs capacity search results on both sides",
        ),
        (
            a1.clone(),
            whole.clone(),
            &[][..],
            "A holds capacity searches and B none",
        ),
        (
            a1.clone(),
            dir.path().join("set-b"),
            &[][..],
            "A holds 1 capacity search(es) and B 3",
        ),
        (
            a1.clone(),
            b1.clone(),
            &gate[..],
            "a capacity gate needs repeated searches (at least 2 a side)",
        ),
    ] {
        let o = compare(&a, &b, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{err}");
        assert!(errors[0].contains(needle), "{needle}: {err}");
    }
}
