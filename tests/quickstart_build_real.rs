//! The quickstart's binary (built without the `k8s` and `tls` features, as scripts/quickstart.sh
//! builds it): what it leaves out is refused in one line that says how to get it, before
//! anything is fetched or written; the quickstart itself runs on it (tests/scenario_real.rs).

mod common;

use common::{quickstart_bin, refused_in_one_line};

fn run(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(quickstart_bin())
        .args(args)
        .env("CQLBENCH_HOME", home)
        .env("CQLBENCH_CLUSTERS_DIR", home.join("clusters"))
        .output()
        .unwrap()
}

#[test]
fn what_the_quickstart_build_leaves_out_is_refused_in_one_line() {
    let home = tempfile::tempdir().unwrap();
    let ca = home.path().join("ca.pem");
    std::fs::write(&ca, "not a certificate\n").unwrap();
    let ca = ca.to_str().unwrap();
    let out_file = home.path().join("r.json");
    let out_file = out_file.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["k8s", "loaders", "--loaders", "2"],
            &[
                "cqlbench k8s needs the Kubernetes client, which is not in this build",
                "cargo build --release",
            ],
        ),
        (
            &["k8s", "--help"],
            &["cqlbench k8s needs the Kubernetes client, which is not in this build"],
        ),
        (
            &[
                "run",
                "keyvalue",
                "--hosts",
                "198.51.100.1",
                "--tls-ca",
                ca,
                "--duration",
                "1s",
                "--out",
                out_file,
            ],
            &[
                "--tls-ca needs TLS",
                "without the `tls` feature",
                "cargo build --release",
            ],
        ),
        (
            &["cluster", "create", "tl", "--nodes", "1", "--tls"],
            &["cluster create --tls needs TLS", "cargo build --release"],
        ),
        (
            &[
                "metrics",
                "check",
                "--hosts",
                "127.0.0.1",
                "--prometheus-server",
                "https://198.51.100.1:9090",
            ],
            &["'https://198.51.100.1:9090' needs TLS"],
        ),
        (
            &[
                "metrics",
                "check",
                "--hosts",
                "127.0.0.1",
                "--prometheus-server",
                "http://198.51.100.1:9090",
                "--prometheus-ca",
                ca,
            ],
            &["--prometheus-ca", "needs TLS"],
        ),
    ];
    for (args, needles) in cases {
        let out = run(home.path(), args);
        refused_in_one_line(&out, args, needles);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Refused before anything is fetched (the jars of `cluster create`).
        assert!(!stderr.contains("fetching"), "{args:?}:\n{stderr}");
    }
    // Nothing was written: no cluster, no result, no jar cache.
    let mut left: Vec<String> = std::fs::read_dir(home.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n != "ca.pem")
        .collect();
    left.sort();
    let clusters = home.path().join("clusters");
    let created = clusters.is_dir() && std::fs::read_dir(&clusters).unwrap().next().is_some();
    assert!(!created, "a cluster directory was created: {left:?}");
    assert!(
        !left.iter().any(|n| n == "r.json" || n == "cache"),
        "{left:?}"
    );
}

#[test]
fn the_quickstart_build_runs_what_the_quickstart_needs() {
    let home = tempfile::tempdir().unwrap();
    // Its help lists the commands the quickstart and a first benchmark use, not `k8s`.
    let out = run(home.path(), &["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for command in ["quickstart", "cluster", "run", "report"] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(command)),
            "{command} missing:\n{help}"
        );
    }
    assert!(
        !help.lines().any(|l| l.trim_start().starts_with("k8s")),
        "{help}"
    );
    // A plain-text Prometheus URL is still accepted (refused only for being unreachable, not
    // for TLS).
    let args = [
        "metrics",
        "check",
        "--hosts",
        "127.0.0.1",
        "--prometheus-server",
        "http://127.0.0.1:9",
    ];
    let out = run(home.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("needs TLS"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
}
