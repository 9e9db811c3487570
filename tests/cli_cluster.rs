//! `cqlbench cluster` through the real binary: bad input gets a one-line error and a
//! non-zero exit, and never changes an existing cluster.

use assert_cmd::Command;

fn cqlbench(dir: &std::path::Path) -> Command {
    let mut c = Command::cargo_bin("cqlbench").unwrap();
    c.env("CQLBENCH_CLUSTERS_DIR", dir);
    c
}

/// Runs and returns (success, stdout, stderr).
fn run(dir: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = cqlbench(dir).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn assert_one_line_error(res: &(bool, String, String), needle: &str) {
    assert!(!res.0, "expected failure, got success: {}", res.1);
    // Progress lines (e.g. "fetching …") may come first; the error itself is one last line.
    let err_lines: Vec<&str> = res.2.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(err_lines.len(), 1, "expected one error line:\n{}", res.2);
    assert_eq!(
        res.2.trim().lines().last(),
        Some(err_lines[0]),
        "error is not the last line:\n{}",
        res.2
    );
    let err = err_lines[0];
    assert!(err.contains(needle), "error lacks '{needle}': {err}");
}

#[test]
fn unknown_cluster_is_a_one_line_error() {
    let d = tempfile::tempdir().unwrap();
    for cmd in ["start", "stop", "status", "destroy", "show"] {
        assert_one_line_error(
            &run(d.path(), &["cluster", cmd, "nope"]),
            "no cluster named 'nope'",
        );
    }
}

#[test]
fn bad_storage_classes_and_node_memory_are_refused_before_anything_is_created() {
    let d = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (&["--storage", "gp3"][..], "expected a disk type and a size"),
        (
            &["--storage", "gp3:500"][..],
            "is not a whole number of Gi or Ti",
        ),
        (
            &["--storage", "floppy:1Gi"][..],
            "'floppy' is not a disk type of the catalogue",
        ),
        (
            &["--storage", "local:8Gi:3000"][..],
            "no limits to provision",
        ),
        (&["--storage", "dc9=gp3:500Gi"][..], "no data centre 'dc9'"),
        (
            &["--storage", "dc1=gp3:500Gi", "--storage", "dc1=gp2:100Gi"][..],
            "'dc1' is given twice",
        ),
        (
            &["--storage", "gp3:500Gi", "--storage", "gp2:100Gi"][..],
            "more than one without DC=",
        ),
        (
            &["--storage", "=gp3:500Gi"][..],
            "no data centre before '='",
        ),
        (
            &["--heap", "256M", "--node-memory", "600M"][..],
            "give at least 640M",
        ),
        (&["--node-memory", "lots"][..], "'lots' is not a size"),
        (
            &["--nodes", "3", "--heap", "256M", "--node-memory", "1000G"][..],
            "× 3 nodes is more than this host's",
        ),
    ] {
        let mut all = vec!["cluster", "create", "x"];
        all.extend(args);
        let r = run(d.path(), &all);
        // One error line (clap adds a hint line after the malformed ones).
        let errors: Vec<&str> = r.2.lines().filter(|l| l.starts_with("error:")).collect();
        assert!(!r.0 && errors.len() == 1, "{args:?}: {}", r.2);
        assert!(errors[0].contains(needle), "{args:?}: {}", errors[0]);
        assert!(!r.2.contains("panicked"), "{}", r.2);
    }
    assert!(!d.path().join("x").exists(), "nothing created");
}

#[test]
fn probe_of_a_data_centre_names_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let r = run(d.path(), &["probe", "--dc", "dc1"]);
    let errors: Vec<&str> = r.2.lines().filter(|l| l.starts_with("error:")).collect();
    assert!(
        !r.0 && errors.len() == 1 && r.2.contains("--cluster <NAME>"),
        "{}",
        r.2
    );
    let r = run(
        d.path(),
        &["cluster", "create", "p", "--dcs", "east:1,west:1"],
    );
    assert!(r.0, "{}", r.2);
    let r = run(
        d.path(),
        &["probe", "--cluster", "p", "--dc", "north", "--quick"],
    );
    assert_one_line_error(
        &r,
        "--dc north: cluster p has no such data centre (it has east, west)",
    );
}

#[test]
fn malformed_arguments_are_rejected_with_the_accepted_form() {
    let d = tempfile::tempdir().unwrap();
    let r = run(d.path(), &["cluster", "create", "x", "--dcs", "dc1:zero"]);
    assert!(!r.0 && r.2.contains("NAME:NODES"), "{}", r.2);
    let r = run(d.path(), &["cluster", "create", "x", "--heap", "10T"]);
    assert!(!r.0 && r.2.contains("unknown unit"), "{}", r.2);
    let r = run(d.path(), &["cluster", "create", "x", "--heap", "64M"]);
    assert_one_line_error(&r, "below the 128M");
    let r = run(d.path(), &["cluster", "create", "../evil"]);
    assert_one_line_error(&r, "not a valid cluster name");
    let r = run(
        d.path(),
        &["cluster", "create", "x", "--nodes", "3", "--racks", "4"],
    );
    assert_one_line_error(&r, "--racks");
    let r = run(
        d.path(),
        &[
            "cluster",
            "create",
            "x",
            "--cassandra-home",
            "/nonexistent/cassandra",
        ],
    );
    assert_one_line_error(&r, "/nonexistent/cassandra");
    let r = run(
        d.path(),
        &["cluster", "create", "x", "--cpus-per-node", "999"],
    );
    assert_one_line_error(&r, "--cpus-per-node 999");
    assert!(
        !d.path().join("x").exists(),
        "a failed create left a directory"
    );
}

#[test]
fn a_version_that_does_not_exist_is_named_in_the_error() {
    let d = tempfile::tempdir().unwrap();
    let r = run(
        d.path(),
        &["cluster", "create", "x", "--version", "5.0.999"],
    );
    assert_one_line_error(&r, "'5.0.999' was not found on Maven Central");
}

#[test]
fn create_refuses_an_existing_name_and_leaves_it_untouched() {
    let d = tempfile::tempdir().unwrap();
    let r = run(
        d.path(),
        &["cluster", "create", "c1", "--nodes", "2", "--heap", "256M"],
    );
    assert!(r.0, "{}", r.2);
    let spec_before = std::fs::read(d.path().join("c1/cluster.json")).unwrap();
    let r = run(d.path(), &["cluster", "create", "c1", "--nodes", "5"]);
    assert_one_line_error(&r, "already exists");
    assert_eq!(
        std::fs::read(d.path().join("c1/cluster.json")).unwrap(),
        spec_before
    );
    // Another cluster on c1's addresses could never run beside it: refused, naming c1's
    // prefix; a free prefix is taken.
    let r = run(
        d.path(),
        &["cluster", "create", "c2", "--address-prefix", "127.0.0."],
    );
    assert_one_line_error(&r, "--address-prefix 127.0.0.");
    assert!(!d.path().join("c2").exists());
    let r = run(
        d.path(),
        &[
            "cluster",
            "create",
            "c3",
            "--address-prefix",
            "127.0.9.",
            "--heap",
            "256M",
        ],
    );
    assert!(r.0, "{}", r.2);
    let (ok, out, _) = run(d.path(), &["cluster", "show", "c3"]);
    assert!(ok && out.contains("127.0.9.1"), "{out}");
    assert!(run(d.path(), &["cluster", "destroy", "c3"]).0);
    let (ok, out, _) = run(d.path(), &["cluster", "list"]);
    assert!(ok && out.contains("c1\t2 nodes, 0 running"), "{out}");
    let (ok, out, _) = run(d.path(), &["cluster", "show", "c1"]);
    assert!(
        ok && out.contains("\"schema_version\": 1") && out.contains("127.0.0.2"),
        "{out}"
    );
    // Stopping a cluster that is not running is fine and says so.
    let (ok, out, _) = run(d.path(), &["cluster", "stop", "c1"]);
    assert!(ok && out.contains("no node was running"), "{out}");
    let r = run(d.path(), &["cluster", "destroy", "c1"]);
    assert!(r.0, "{}", r.2);
    assert!(!d.path().join("c1").exists());
}

/// `--version` and `--java` at create: lines no local cluster runs, settings the line does
/// not know and a Java the line does not run on are refused in one line before anything is
/// fetched or written; a line's Java is chosen (4.0: Java 11, fetched when the machine has
/// none) or taken from `--java`, and `cluster show` / the create line say which.
#[test]
fn versions_settings_and_java_are_checked_at_create() {
    let d = tempfile::tempdir().unwrap();
    let machine_java = cqlbench::cli::toolchain().java;
    let machine_java = std::fs::canonicalize(&machine_java).unwrap();
    let jdk_dir = machine_java.parent().unwrap().parent().unwrap();
    let jdk_dir = jdk_dir.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["--version", "3.11.17"],
            "Cassandra 3.11.17 runs only on Java 8, which cannot be installed here",
        ),
        (
            vec!["--version", "9.9"],
            "Cassandra '9.9' is not a version local clusters run: give 4.0, 4.1 or 5.0",
        ),
        (
            vec!["--version", "4.0.10", "--set", "sai_options={}"],
            "--set sai_options: Cassandra 4.0.10 has no cassandra.yaml key 'sai_options' (only Cassandra 5.0 has it)",
        ),
        (
            vec!["--version", "4.0.10", "--set", "commitlog_sync_period=5s"],
            "(4.0 calls it 'commitlog_sync_period_in_ms')",
        ),
        (
            vec!["--version", "4.1", "--java", jdk_dir],
            "Cassandra 4.1 runs on Java 11:",
        ),
        (
            vec!["--java", "/nonexistent/jdk"],
            "java /nonexistent/jdk: no such file",
        ),
    ] {
        let mut full = vec!["cluster", "create", "x"];
        full.extend(&args);
        let r = run(d.path(), &full);
        assert_one_line_error(&r, needle);
        assert!(
            !r.2.contains("fetching org.apache"),
            "{args:?} fetched jars: {}",
            r.2
        );
        assert!(!d.path().join("x").exists(), "{args:?} left a cluster");
    }
    // A valid --java (the machine's JDK directory) for 5.0, and 4.0.10 on its own Java 11.
    let r = run(
        d.path(),
        &["cluster", "create", "j", "--nodes", "1", "--java", jdk_dir],
    );
    assert!(r.0, "{}", r.2);
    let (ok, out, _) = run(d.path(), &["cluster", "show", "j"]);
    assert!(ok, "{out}");
    let state: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        state["spec"]["java"].as_str(),
        Some(jdk_dir),
        "the --java given is kept: {out}"
    );
    assert!(
        state["dist"]["java_version"]
            .as_str()
            .unwrap()
            .starts_with("17.")
    );
    let r = run(
        d.path(),
        &[
            "cluster",
            "create",
            "old",
            "--nodes",
            "1",
            "--version",
            "4.0.10",
        ],
    );
    assert!(r.0, "{}", r.2);
    assert!(
        r.1.contains("Cassandra 4.0.10 on Java 11.0.13"),
        "the create line names both: {}",
        r.1
    );
    let (_, out, _) = run(d.path(), &["cluster", "show", "old"]);
    let state: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(state["dist"]["java_version"], "11.0.13");
    assert!(state["dist"]["http_shim"].is_string(), "{out}");
    for name in ["j", "old"] {
        assert!(run(d.path(), &["cluster", "destroy", name]).0);
    }
}
