//! `cqlbench capacity --start-concurrency` (a closed-loop capacity search) through the real
//! binary, without a cluster: valid values get as far as connecting (to an address nothing
//! listens on) or make a valid scenario plan; bad ones are refused in one line, before any
//! connection, and never with a panic.

mod common;

use std::path::Path;

fn cqlbench(home: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.env("CQLBENCH_HOME", home)
        .env("CQLBENCH_CLUSTERS_DIR", home.join("clusters"));
    c
}

/// Runs `args`; expects a non-zero exit (not a panic) and one `error:` line containing
/// `needle` (clap adds a usage hint below its own).
fn refused(args: &[&str], needle: &str) {
    let home = tempfile::tempdir().unwrap();
    let out = cqlbench(home.path())
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    common::refused_in_one_line(&out, args, &[needle]);
}

// 127.0.0.1:1 is never listened on: a search whose flags are valid fails to connect to it.
const HOST: &str = "127.0.0.1:1";

fn capacity(extra: &[&str]) -> Vec<String> {
    ["capacity", "keyvalue", "--hosts", HOST, "--timeout", "1s"]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

fn refused_capacity(extra: &[&str], needle: &str) {
    let args = capacity(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&args, needle);
}

#[test]
fn valid_closed_loop_flags_get_as_far_as_connecting() {
    for extra in [
        &["--start-concurrency", "8"][..],
        &["--start-concurrency", "1", "--factor", "2", "--refine", "3"],
        &[
            "--start-concurrency",
            "4",
            "--increment",
            "4",
            "--max-steps",
            "5",
        ],
        &["--start-concurrency", "4", "--min-achieved", "off"],
        &[
            "--start-concurrency",
            "16",
            "--step",
            "30s",
            "--step-warmup",
            "5s",
            "--max-latency",
            "read:p50:20ms",
        ],
    ] {
        // Past every check of the flags: the error is the address.
        refused_capacity(extra, HOST);
    }
}

#[test]
fn a_send_window_is_refused_for_a_closed_loop_search() {
    refused_capacity(
        &["--start-concurrency", "8", "--send-window", "1ms"],
        "--send-window batches the sends of a fixed rate",
    );
}

#[test]
fn bad_start_concurrencies_are_refused() {
    for bad in ["0", "-1", "-8", "x", "1.5", "", "99999999999999999999999"] {
        refused_capacity(
            &["--start-concurrency", bad],
            "whole number of requests in flight",
        );
    }
}

#[test]
fn closed_loop_is_not_mixed_with_rates_or_a_fixed_concurrency() {
    refused_capacity(
        &["--start-concurrency", "8", "--start-rate", "1000"],
        "give --start-rate (open loop) or --start-concurrency (closed loop), not both",
    );
    for flag in [["--rate", "100"], ["--concurrency", "8"]] {
        refused_capacity(
            &[&["--start-concurrency", "8"][..], &flag[..]].concat(),
            "capacity sets each step's rate (--start-rate) or concurrency (--start-concurrency)",
        );
        // And without it, as before.
        refused_capacity(&flag, "capacity sets each step's rate");
    }
    refused_capacity(
        &["--start-concurrency", "8", "--min-achieved", "90%"],
        "--min-achieved is a share of a target rate",
    );
    refused_capacity(
        &[
            "--start-concurrency",
            "8",
            "--factor",
            "1.5",
            "--increment",
            "2",
        ],
        "--increment",
    );
    refused_capacity(
        &["--start-concurrency", "8", "--factor", "1"],
        "--factor must be above 1",
    );
    refused_capacity(
        &["--start-concurrency", "8", "--max-steps", "0"],
        "--max-steps must be at least 1",
    );
    refused_capacity(&["--start-concurrency", "8", "--increment", "-2"], "-2");
    refused_capacity(&["--start-concurrency", "8", "--refine", "x"], "--refine");
}

/// The same as scenario keys: a valid closed-loop step makes a valid plan that shows its
/// flags; bad values are refused by `--dry-run` in one line.
#[test]
fn start_concurrency_is_a_capacity_step_key() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.yaml");
    std::fs::write(
        &f,
        "name: c\nhosts: [h]\nsteps: [{capacity: {workload: keyvalue, start-concurrency: 8, factor: 2, refine: 2}}]\n",
    )
    .unwrap();
    let a = cqlbench(dir.path())
        .args(["scenario", f.to_str().unwrap(), "--dry-run", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(stdout.contains("the scenario is valid"), "{stdout}");
    assert!(stdout.contains("--start-concurrency 8"), "{stdout}");
    for (step, needle) in [
        ("start-concurrency: 0", "at least 1"),
        ("start-concurrency: 8, start-rate: 100", "not both"),
        ("start-concurrency: 8, min-achieved: 95%", "--min-achieved"),
        (
            "start-concurrency: 8, concurrency: 4",
            "capacity sets each step's rate",
        ),
        ("start-concurrency: many", "start-concurrency"),
        ("start-concurrency: -1", "start-concurrency"),
    ] {
        std::fs::write(
            &f,
            format!("name: c\nhosts: [h]\nsteps: [{{capacity: {{workload: keyvalue, {step}}}}}]\n"),
        )
        .unwrap();
        refused(&["scenario", f.to_str().unwrap(), "--dry-run"], needle);
    }
}
