//! `cqlbench metrics check` through the real binary, against metrics endpoints the test serves
//! (a node's figures in the JMX exporter's naming, or none): what it lists per node, its
//! `--for` refusals in one line, and every flag's bad and valid values. The check against
//! real nodes: through CQL in tests/cluster_real.rs (4.0, 4.1) and tests/scenario_real.rs
//! (5.0), through their exporters in tests/scenario_real.rs.

mod common;
use std::path::Path;
use std::time::{Duration, Instant};

const NODE: &str = "\
org_apache_cassandra_metrics_storage_count{name=\"Load\",} 1048576.0
org_apache_cassandra_metrics_compaction_value{name=\"PendingTasks\",} 3.0
java_lang_operatingsystem_processcpuload 0.25
process_cpu_seconds_total 12.5
";
const NO_LOAD: &str = "jvm_threads_current 42.0\n";

fn cqlbench(home: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.env("CQLBENCH_HOME", home)
        .env("CQLBENCH_CLUSTERS_DIR", home.join("clusters"));
    c
}

fn run(home: &Path, args: &[&str]) -> (Option<i32>, String, String, Duration) {
    let t0 = Instant::now();
    let out = cqlbench(home).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        stderr,
        t0.elapsed(),
    )
}

#[test]
fn a_node_serving_its_figures_is_measurable_for_both_commands() {
    let home = tempfile::tempdir().unwrap();
    let ep = common::metrics_endpoint(NODE);
    let prom = format!("http://{ep}/metrics");
    for command in ["fill", "capacity"] {
        let (code, out, err, _) = run(
            home.path(),
            &[
                "metrics",
                "check",
                "--hosts",
                "127.0.0.1",
                "--prometheus",
                &prom,
                "--for",
                command,
            ],
        );
        assert_eq!(code, Some(0), "{out}{err}");
        // Load, pending and SSTables-per-read absent: load ✓, pending ✓, the CPU from the
        // JVM's share (a remote node's CPU count is not known), SSTables per read ✗.
        let row = out
            .lines()
            .find(|l| l.trim_start().starts_with(&ep))
            .expect(&out);
        assert_eq!(row.matches("✓").count(), 3, "{row}");
        assert!(row.contains("JVM's share") && row.contains('✗'), "{row}");
        assert!(
            out.contains("fill target (the nodes' load): measurable"),
            "{out}"
        );
        assert!(
            out.contains("criteria (pending compactions, node CPU): measurable"),
            "{out}"
        );
    }
    // --json: the same, for a program.
    let (code, out, err, _) = run(
        home.path(),
        &[
            "metrics",
            "check",
            "--hosts",
            "127.0.0.1",
            "--prometheus",
            &prom,
            "--json",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["nodes"][0]["node"], ep.as_str());
    assert_eq!(v["nodes"][0]["figures"][0][0], "load");
    assert!(v["nodes"][0]["figures"][0][1].is_string(), "{v}");
    assert!(v["nodes"][0]["figures"][3][1].is_null(), "{v}");
}

#[test]
fn a_fill_or_a_search_that_would_be_blind_is_refused_in_one_line() {
    let home = tempfile::tempdir().unwrap();
    let none = common::metrics_endpoint(NO_LOAD);
    let with = common::metrics_endpoint(NODE);
    let blind = format!("http://{none}");
    let (code, out, err, took) = run(
        home.path(),
        &[
            "metrics",
            "check",
            "--hosts",
            "127.0.0.1",
            "--prometheus",
            &blind,
            "--for",
            "fill",
        ],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("error: metrics check: a fill could not see its target: {none} answered without the nodes' load")),
        "{err}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    // A search needs pending compactions on every node: node2 lacks them.
    let both = format!("{with},{none}");
    let (code, _, err, _) = run(
        home.path(),
        &[
            "metrics",
            "check",
            "--hosts",
            "127.0.0.1",
            "--prometheus",
            &both,
            "--for",
            "capacity",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "error: metrics check: a capacity search could not measure pending compactions ({none})"
        )
    );
    // An endpoint nobody answers: the fill's line says so, the table names the error.
    let (code, out, err, _) = run(
        home.path(),
        &[
            "metrics",
            "check",
            "--hosts",
            "127.0.0.1",
            "--prometheus",
            "127.0.0.1:1",
            "--for",
            "fill",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no metrics endpoint answered"), "{err}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("127.0.0.1:1 ")),
        "{out}"
    );
    // Nothing to read at all: no endpoint given, and the node's virtual tables cannot be read
    // through CQL (nobody listens on port 1). The check and a fill each say so in one line,
    // within seconds.
    let (code, out, err, took) = run(
        home.path(),
        &[
            "metrics",
            "check",
            "--hosts",
            "127.0.0.1:1",
            "--for",
            "fill",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("no metrics endpoint, and the nodes' virtual tables could not be read through CQL (cannot connect to 127.0.0.1:1"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.contains("CQL (system_views): cannot connect"), "{out}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let (code, _, err, took) = run(
        home.path(),
        &["fill", "stress", "--hosts", "127.0.0.1:1", "--bytes", "10M"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cannot connect to 127.0.0.1:1"), "{err}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn every_flag_bad_and_valid() {
    let home = tempfile::tempdir().unwrap();
    let ep = common::metrics_endpoint(NODE);
    let prom = format!("http://{ep}");
    let base = [
        "metrics",
        "check",
        "--hosts",
        "127.0.0.1",
        "--prometheus",
        prom.as_str(),
    ];
    let refused: &[(&[&str], &str)] = &[
        (&["--timeout", "0s"], "--timeout"),
        (&["--timeout", "soon"], "--timeout"),
        (&["--for", "scan"], "--for"),
        (
            &["--prometheus-instance", "node1=a:1"],
            "--prometheus-server",
        ),
        (&["--prometheus-server", "ftp://x"], "--prometheus-server"),
        (&["--node-exporter", "node1"], "--node-exporter"),
        (&["--netns", "cqb-no-such-ns"], "cqb-no-such-ns"),
    ];
    for (extra, needle) in refused {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        let (code, _, err, _) = run(home.path(), &args);
        // Clap's own refusals (a value it parses) exit 2, cqlbench's 1.
        assert!(matches!(code, Some(1 | 2)), "{args:?}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {err}");
        // (Clap names a missing argument on the line after its error line.)
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    for (args, needle) in [
        (&["metrics", "check"][..], "--cluster"),
        (&["metrics", "check", "--cluster", "nope"], "nope"),
        (
            &[
                "metrics",
                "check",
                "--hosts",
                "127.0.0.1",
                "--prometheus",
                "x:y",
            ],
            "--prometheus",
        ),
        (
            &[
                "metrics",
                "check",
                "--hosts",
                "127.0.0.1",
                "--prometheus",
                "node1=http://h:1",
            ],
            "bad host",
        ),
    ] {
        let (code, _, err, _) = run(home.path(), args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(
            err.trim().lines().count() == 1 && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    // Valid values: each runs the check (a node exporter nobody answers is named in the table).
    let valid: &[&[&str]] = &[
        &["--timeout", "2s"],
        &["--for", "FILL"],
        &["--for", "capacity"],
        &["--node-exporter", "127.0.0.1=127.0.0.1:1"],
        &["--json"],
    ];
    for extra in valid {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        let (code, out, err, _) = run(home.path(), &args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(out.contains(&ep), "{args:?}: {out}");
    }
    assert!(!home.path().join("clusters").exists());
}

#[test]
fn a_capacity_search_names_what_it_cannot_measure_before_its_first_step() {
    let home = tempfile::tempdir().unwrap();
    let none = common::metrics_endpoint(NO_LOAD);
    let out_file = home.path().join("cap.json");
    let (code, out, err, _) = run(
        home.path(),
        &[
            "capacity",
            "keyvalue",
            "--hosts",
            "127.0.0.1:1",
            "--prometheus",
            &none,
            "--settle-timeout",
            "1s",
            "--out",
            out_file.to_str().unwrap(),
        ],
    );
    // Nobody listens on port 1: the search fails at its first step, after the warning.
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("cannot connect to 127.0.0.1:1"), "{err}");
    let warning = out
        .find(&format!(
            "warning: the metric sources do not give pending compactions ({none}) or node CPU (no node gives it): the verdict will mark them unverified"
        ))
        .expect(&out);
    assert!(warning < out.find("step 1").expect(&out), "{out}");
}

#[test]
fn the_exporter_configuration_of_local_nodes_is_printed_for_a_users_own() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err, _) = run(home.path(), &["metrics", "exporter-config"]);
    assert_eq!(code, Some(0), "{err}");
    // YAML the exporter reads, naming the MBeans the criteria and the fill read.
    let v: cqlbench::yaml::Value = cqlbench::yaml::from_str(&out).unwrap();
    let beans: Vec<&str> = v["includeObjectNames"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b.as_str())
        .collect();
    for needed in [
        "org.apache.cassandra.metrics:type=Compaction,name=PendingTasks",
        "org.apache.cassandra.metrics:type=Storage,name=Load",
        "java.lang:type=OperatingSystem",
    ] {
        assert!(beans.contains(&needed), "{out}");
    }
}
