//! `cqlbench capacity --loaders N`, `cqlbench capacity --shard I/N` (one search on N
//! machines) and `cqlbench fill --loaders N` through the real binary,
//! without a cluster: valid values get as far as the loaders connecting (to an address nothing
//! listens on), named in one line; bad ones are refused in one line before any loader starts,
//! and never with a panic.

mod common;

use std::path::Path;

fn cqlbench(home: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.env("CQLBENCH_HOME", home)
        .env("CQLBENCH_CLUSTERS_DIR", home.join("clusters"));
    c
}

// 127.0.0.1:1 is never listened on: a loader whose flags are valid fails to connect to it.
const HOST: &str = "127.0.0.1:1";

/// Runs `args`; expects a non-zero exit (not a panic) and one `error:` line containing every
/// one of `needles`; returns the results directory's file names.
fn refused(args: &[&str], needles: &[&str]) -> Vec<String> {
    let home = tempfile::tempdir().unwrap();
    let out = cqlbench(home.path())
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    common::refused_in_one_line(&out, args, needles);
    match std::fs::read_dir(home.path().join("results")) {
        Ok(dir) => dir
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn with(command: &[&str], extra: &[&str]) -> Vec<String> {
    command
        .iter()
        .chain(["--hosts", HOST, "--timeout", "1s"].iter())
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

fn refused_with(command: &[&str], extra: &[&str], needles: &[&str]) -> Vec<String> {
    let args = with(command, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&args, needles)
}

const CAPACITY: &[&str] = &["capacity", "keyvalue"];
const FILL: &[&str] = &["fill", "keyvalue"];

/// [`refused_with`] for a fill whose nodes' load can be read.
fn refused_fill(extra: &[&str], needles: &[&str]) -> Vec<String> {
    let extra = fill(extra);
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    refused_with(FILL, &extra, needles)
}

/// A fill's arguments, its nodes' load read from an endpoint that answers (a fill refuses to
/// start blind).
fn fill(extra: &[&str]) -> Vec<String> {
    static LOAD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let load = LOAD.get_or_init(common::empty_node_load_endpoint);
    extra
        .iter()
        .map(|s| s.to_string())
        .chain(["--prometheus".to_string(), load.clone()])
        .collect()
}

#[test]
fn a_capacity_search_by_loaders_gets_as_far_as_its_first_steps_loaders_connecting() {
    for extra in [
        &["--loaders", "2", "--step", "5s", "--step-warmup", "1s"][..],
        &["--loaders", "3", "--start-rate", "3000", "--refine", "2"],
        &["--loaders", "2", "--start-concurrency", "2"],
        &["--loaders", "2", "--run-id", "cap-1", "--step", "20s"],
        // One loader is one client, as without the flag.
        &["--loaders", "1"],
    ] {
        // A loader's own error (or, with one, this process's): the address.
        refused_with(CAPACITY, extra, &[HOST]);
    }
    // The loaders of step 1 are named, with their logs beside the capacity result.
    let files = refused_with(
        CAPACITY,
        &["--loaders", "2"],
        &["step 1: shard ", "/2 exit status"],
    );
    for i in 0..2 {
        assert!(
            files
                .iter()
                .any(|f| f.ends_with(&format!("-capacity.step-01.shard-{i}.log"))),
            "{files:?}"
        );
    }
}

#[test]
fn capacity_loaders_are_refused_in_one_line_where_they_cannot_work() {
    refused_with(
        CAPACITY,
        &["--loaders", "2", "--start-concurrency", "1"],
        &[
            "--start-concurrency 1 with --loaders 2: each loader keeps at least one request in flight; give --start-concurrency 2 or more",
        ],
    );
    for n in ["0", "65"] {
        refused_with(
            CAPACITY,
            &["--loaders", n],
            &["give 1 to 64 local processes"],
        );
    }
    refused_with(CAPACITY, &["--loaders", "x"], &["--loaders"]);
    refused_with(
        CAPACITY,
        &["--loaders", "2", "--drop"],
        &["--drop with --shard or --loaders"],
    );
    let long = "a".repeat(62);
    refused_with(
        CAPACITY,
        &["--loaders", "2", "--run-id", &long],
        &["at most 59 characters with --loaders"],
    );
    // Nothing was started: no loader's log.
    let files = refused_with(
        CAPACITY,
        &["--loaders", "2", "--start-concurrency", "1"],
        &["--start-concurrency"],
    );
    assert!(!files.iter().any(|f| f.contains(".shard-")), "{files:?}");
}

#[test]
fn a_capacity_search_across_machines_gets_as_far_as_connecting_for_its_exchange() {
    // The coordinator (shard 0) and a follower: past every argument check, each connects
    // for the exchange first, so nothing is started and no result written before it fails.
    for shard in ["0/2", "1/2", "0/1", "2/3"] {
        let files = refused_with(
            CAPACITY,
            &[
                "--shard",
                shard,
                "--run-id",
                "r1",
                "--step",
                "6s",
                "--step-warmup",
                "1s",
            ],
            &["cannot connect to 127.0.0.1:1"],
        );
        assert!(
            !files
                .iter()
                .any(|f| f.ends_with(".json") || f.contains(".shard-")),
            "{files:?}"
        );
    }
    refused_with(
        CAPACITY,
        &[
            "--shard",
            "1/3",
            "--run-id",
            "r1",
            "--start-concurrency",
            "3",
        ],
        &["cannot connect to 127.0.0.1:1"],
    );
}

#[test]
fn a_capacity_search_across_machines_is_refused_in_one_line_where_it_cannot_work() {
    // Every machine needs the same run id: the default one differs between them.
    refused_with(
        CAPACITY,
        &["--shard", "0/2"],
        &["required arguments were not provided"],
    );
    refused_with(
        CAPACITY,
        &["--shard", "0/2", "--run-id", "r1", "--loaders", "2"],
        &["'--shard <I/N>' cannot be used with '--loaders <N>'"],
    );
    refused_with(
        CAPACITY,
        &["--shard", "2/2", "--run-id", "r1"],
        &["'2/2' is not a shard"],
    );
    refused_with(
        CAPACITY,
        &[
            "--shard",
            "0/2",
            "--run-id",
            "r1",
            "--start-at",
            "2030-01-01T00:00:00Z",
        ],
        &["--start-at with capacity --shard 0/2"],
    );
    refused_with(
        CAPACITY,
        &[
            "--shard",
            "1/2",
            "--run-id",
            "r1",
            "--resume",
            "--out",
            "/tmp/x.json",
        ],
        &["--resume with --shard 1/2: only shard 0 (the coordinator) resumes a search"],
    );
    refused_with(
        CAPACITY,
        &[
            "--shard",
            "0/4",
            "--run-id",
            "r1",
            "--start-concurrency",
            "2",
        ],
        &[
            "--start-concurrency 2 with --shard 0/4: each loader keeps at least one request in flight",
        ],
    );
    refused_with(
        CAPACITY,
        &["--shard", "0/2", "--run-id", &"a".repeat(56)],
        &["at most 55 characters with capacity --shard"],
    );
    refused_with(
        CAPACITY,
        &["--shard", "0/2", "--run-id", "r1", "--drop"],
        &["--drop with --shard or --loaders"],
    );
}

#[test]
fn a_fill_by_loaders_gets_as_far_as_its_loaders_connecting() {
    for extra in [
        &["--loaders", "2", "--bytes", "10M"][..],
        &["--loaders", "2", "--bytes", "10M", "--ops", "20000"],
        &[
            "--loaders",
            "3",
            "--times-ram",
            "1",
            "--node-ram",
            "1G",
            "--duration",
            "1m",
        ],
    ] {
        refused_fill(extra, &["shard ", "/", "exit status", HOST]);
    }
    // Without --loaders, --ops bounds a fill of one client too.
    refused_fill(&["--bytes", "10M", "--ops", "1000"], &[HOST]);
    // Endpoints that do not answer, or answer without the nodes' load (a node exporter's
    // host figures only, here), are refused before anything is written.
    refused_with(
        FILL,
        &["--bytes", "10M", "--prometheus", HOST],
        &["fill: no metrics endpoint answered", HOST],
    );
}

#[test]
fn fill_loaders_are_refused_in_one_line_where_they_cannot_work() {
    refused_fill(
        &["--loaders", "2", "--bytes", "10M", "--drop"],
        &["--drop with --shard or --loaders"],
    );
    refused_fill(
        &["--loaders", "0", "--bytes", "10M"],
        &["give 1 to 64 local processes"],
    );
    refused_fill(
        &["--bytes", "10M", "--ops", "1000", "--duration", "1m"],
        &["'--ops <OPS>' cannot be used with '--duration <DURATION>'"],
    );
    refused_fill(&["--bytes", "10M", "--ops", "0"], &["--ops"]);
}
