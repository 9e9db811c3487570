//! `cqlbench k8s run` and `k8s pod-run` through the real binary, with no Kubernetes: bad input
//! and an unreachable API refused in one line, quickly, with nothing created; `--host-network`
//! reaching the rendered Job; and the pod side (run a command, then print its files) read back
//! with the parser `k8s run` uses. The Job run on a real Kubernetes is tests/k8s_real.rs.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

const RUN: [&str; 7] = [
    "--",
    "keyvalue",
    "--hosts",
    "127.0.0.1",
    "--rate=100",
    "--duration",
    "1s",
];

fn cqlbench(dir: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.current_dir(dir)
        .env("CQLBENCH_HOME", dir.join("home"))
        .env_remove("KUBECONFIG")
        .env("HOME", dir);
    c
}

fn k8s_run(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut c = cqlbench(dir);
    c.args(["k8s", "run", "--shards", "2", "--image", "reg/cqlbench:0.1"])
        .args(args);
    if !args.contains(&"--") {
        c.args(RUN);
    }
    c.timeout(Duration::from_secs(60)).output().unwrap()
}

/// A kubeconfig for an API server at `server`, with a token (no client certificate to make).
fn kubeconfig(dir: &Path, server: &str) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn bad_input_and_an_unreachable_api_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let refused = |args: &[&str], needles: &[&str]| {
        let started = Instant::now();
        let out = k8s_run(d, args);
        common::refused_in_one_line(&out, args, needles);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{args:?} took {:?}",
            started.elapsed()
        );
    };
    refused(
        &["--kubeconfig", "/nonexistent/kubeconfig"],
        &["the Kubernetes configuration", "/nonexistent/kubeconfig"],
    );
    // No kubeconfig anywhere (HOME is the test's directory, KUBECONFIG unset).
    refused(&[], &["the Kubernetes configuration", "--kubeconfig"]);
    let unreachable = kubeconfig(d, "https://127.0.0.1:9");
    // The first object made: the pods' order.
    refused(
        &["--kubeconfig", &unreachable],
        &["creating ConfigMap cqlbench-loaders-order in namespace default"],
    );
    // Refused before the API is asked: the run's own arguments, the results directory.
    refused(
        &[
            "--kubeconfig",
            &unreachable,
            "--",
            "keyvalue",
            "--rate",
            "fast",
        ],
        &["run arguments", "--rate"],
    );
    std::fs::create_dir(d.join("taken")).unwrap();
    refused(
        &["--kubeconfig", &unreachable, "--out", "taken"],
        &["--out taken", "it exists"],
    );
    refused(
        &["--kubeconfig", &unreachable, "--run-id", "../up"],
        &["--run-id"],
    );
    assert!(!d.join("home/results").exists(), "nothing was collected");
}

#[test]
fn pod_run_runs_its_command_then_prints_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir_all(results.join("shard-0")).unwrap();
    std::fs::write(results.join("shard-0.json"), "{}\n").unwrap();
    std::fs::write(results.join("shard-0/capacity.json"), [0u8, 1, 2, 255]).unwrap();
    let out = cqlbench(dir.path())
        .args(["k8s", "pod-run", "--dir"])
        .arg(&results)
        .args(["--", "--version"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let log = String::from_utf8(out.stdout).unwrap();
    assert!(
        log.starts_with("cqlbench "),
        "the command's own output first: {log}"
    );
    let files = cqlbench::k8s::pod_files::parse(&log).unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].path, Path::new("shard-0/capacity.json"));
    assert_eq!(files[0].bytes, [0u8, 1, 2, 255]);
    assert_eq!(files[1].bytes, b"{}\n");

    // A command that fails: its exit is the pod's, and the log still ends complete (no files).
    let out = cqlbench(dir.path())
        .args(["k8s", "pod-run", "--dir"])
        .arg(dir.path().join("never-written"))
        .args(["--", "run", "no-such-workload"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let log = String::from_utf8(out.stdout).unwrap();
    assert_eq!(cqlbench::k8s::pod_files::parse(&log).unwrap(), []);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the shard ended with exit status"), "{err}");
}

#[test]
fn host_network_reaches_the_rendered_job() {
    let dir = tempfile::tempdir().unwrap();
    let out = cqlbench(dir.path())
        .args([
            "k8s",
            "loaders",
            "--shards",
            "2",
            "--image",
            "reg/cqlbench:0.1",
            "--host-network",
        ])
        .args(RUN)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let yaml = String::from_utf8(out.stdout).unwrap();
    let job: k8s_openapi::api::batch::v1::Job = cqlbench::yaml::from_str_multiple(&yaml)
        .unwrap()
        .into_iter()
        .find(|v: &cqlbench::yaml::Value| v["kind"] == "Job")
        .map(|v| cqlbench::yaml::from_value(v).unwrap())
        .unwrap();
    let pod = job.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.host_network, Some(true));
}

#[test]
fn probe_run_refuses_bad_input_and_an_unreachable_api_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let unreachable = kubeconfig(d, "https://127.0.0.1:9");
    std::fs::create_dir(d.join("taken")).unwrap();
    let probe = |extra: &[&str]| {
        let mut c = cqlbench(d);
        c.args([
            "k8s",
            "probe",
            "--nodes",
            "node-a",
            "--storage-class",
            "gp3",
            "--size",
            "100Gi",
            "--image",
            "reg/cqlbench:0.1",
        ])
        .args(extra);
        c.timeout(Duration::from_secs(60)).output().unwrap()
    };
    for (args, needles) in [
        (
            vec!["--run", "--kubeconfig", unreachable.as_str()],
            vec!["creating ConfigMap cqlbench-probe-order in namespace default"],
        ),
        (
            vec!["--run", "--kubeconfig", "/nonexistent/kc"],
            vec!["the Kubernetes configuration", "/nonexistent/kc"],
        ),
        (
            vec![
                "--run",
                "--kubeconfig",
                unreachable.as_str(),
                "--results",
                "taken",
            ],
            vec!["--results taken", "it exists"],
        ),
        // The --run options without --run, and --run with --out (a manifest file) are refused.
        (vec!["--keep"], vec!["required arguments were not provided"]),
        (
            vec!["--results", "r"],
            vec!["required arguments were not provided"],
        ),
        (vec!["--run", "--out", "probes.yaml"], vec!["--out"]),
    ] {
        let out = probe(&args);
        common::refused_in_one_line(&out, &args, &needles);
    }
    assert!(!d.join("home/results").exists(), "nothing was collected");
}
