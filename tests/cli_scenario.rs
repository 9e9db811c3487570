//! Scenario files through the CLI, without a cluster: every shipped file turns into valid
//! typed steps (the cluster section and every value checked), and a broken one fails before
//! anything starts, in one line.

use std::path::Path;

fn cqlbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("cqlbench").unwrap()
}

#[test]
fn every_shipped_scenario_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        5,
        "one scenario per reference article: {files:?}"
    );
    let out = tempfile::tempdir().unwrap();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(
            text.lines().any(|l| l.starts_with("# Scaled")),
            "{} says what was scaled down",
            f.display()
        );
        let a = cqlbench()
            .args(["scenario", f.to_str().unwrap(), "--dry-run", "--dir"])
            .arg(out.path())
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        assert!(stdout.contains("the scenario is valid"), "{stdout}");
        assert!(
            !out.path().join("scenario.yaml").exists(),
            "a dry run writes nothing"
        );
    }
}

#[test]
fn a_bad_step_fails_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.yaml");
    std::fs::write(
        &f,
        "name: bad\ncluster: {name: never-created, nodes: 1}\nsteps:\n  - probe: {quick: true}\n  - latency: {workload: keyvalue, rate: fast}\n",
    )
    .unwrap();
    let out = cqlbench()
        .env("CQLBENCH_CLUSTERS_DIR", dir.path())
        .env("CQLBENCH_HOME", dir.path())
        .args(["scenario", f.to_str().unwrap(), "--dir"])
        .arg(dir.path().join("out"))
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("step 2 (latency)") && err.contains("fast"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        !dir.path().join("never-created").exists(),
        "no cluster was created"
    );
    assert!(!dir.path().join("out").exists());
}

/// Bad scenario files, each refused by `--dry-run` (and by a real run) with one line naming
/// what is wrong, before any cluster is created.
#[test]
fn bad_files_are_refused_in_one_line_before_anything_starts() {
    let cases: &[(&str, &str)] = &[
        // (file, what the error names)
        (
            "name: u\nsteps: [{run: {workload: keyvalue, concurency: 8}}]",
            "concurency",
        ),
        (
            "name: r\nsteps: [{latency: {workload: keyvalue, rate: -1}}]",
            "rate: '-1'",
        ),
        (
            "name: c\nsteps: [{throughput: {workload: keyvalue, concurrency: 0}}]",
            "--concurrency",
        ),
        (
            "name: d\nsteps: [{run: {workload: keyvalue, duration: 99999999999999999999h}}]",
            "duration",
        ),
        (
            "name: k\ncluster: {nodes: 1, heap: 999999G}\nsteps: [{probe: {}}]",
            "heap",
        ),
        (
            "name: n\ncluster: {nodes: 0}\nsteps: [{probe: {}}]",
            "--nodes",
        ),
        (
            "name: t\ncluster: {set: {num_tokens: 16}}\nsteps: [{probe: {}}]",
            "num_tokens",
        ),
        (
            "name: x\ncluster: {nodez: 3}\nsteps: [{probe: {}}]",
            "nodez",
        ),
        ("name: e\nsteps: [{probe: {env: 'a/../../x'}}]", "env"),
        (
            "name: m\nsteps: [{capacity: {workload: stress, max-latency: 'read:p0:1ms'}}]",
            "percentile",
        ),
        (
            "name: f\nsteps: [{fill: {workload: stress, bytes: 0M}}]",
            "bytes: '0M'",
        ),
        (
            "name: p\ndeployments: ['p=nosuch']\nsteps: [{probe: {}}]",
            "deployments",
        ),
        (
            "name: v\nsteps:\n  - throughput: {workload: stress}\n  - latency: {workload: stress, rate: '{throughput.rate}'}",
            "a throughput step offers no 'rate'",
        ),
        (
            "name: w\nsteps:\n  - latency: {workload: stress, rows: '{fill.rows}', rate: 100}",
            "'{fill.rows}' names no earlier step",
        ),
        (
            "name: z\nenvironments: [{name: a}, {name: a}]\nsteps: [{probe: {}}]",
            "'a' is given twice",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (text, names)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.yaml"));
        std::fs::write(&f, text).unwrap();
        for dry in [true, false] {
            let mut cmd = cqlbench();
            cmd.env("CQLBENCH_CLUSTERS_DIR", dir.path().join("clusters"))
                .env("CQLBENCH_HOME", dir.path())
                .args(["scenario", f.to_str().unwrap(), "--dir"])
                .arg(dir.path().join("out"));
            if dry {
                cmd.arg("--dry-run");
            }
            let out = cmd.assert().failure();
            let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
            assert!(err.contains(names), "case {i} ({text}): {err}");
            assert_eq!(err.trim().lines().count(), 1, "case {i}: {err}");
            assert!(!err.contains("panicked"), "case {i}: {err}");
        }
        assert!(
            !dir.path().join("clusters").exists(),
            "case {i}: no cluster"
        );
        assert!(!dir.path().join("out").exists(), "case {i}: no results");
    }
}
