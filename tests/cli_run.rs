//! `cqlbench run` and `capacity` through the real binary, without a cluster: bad values are
//! refused in one line, before any connection, and never with a panic.

mod common;

fn cqlbench(home: &std::path::Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.env("CQLBENCH_HOME", home)
        .env("CQLBENCH_CLUSTERS_DIR", home.join("clusters"));
    c
}

/// Runs `args`, expects a non-zero exit (not a panic) and one `error:` line containing
/// `needle` (clap adds a usage hint below its own).
fn refused(args: &[&str], needle: &str) {
    refused_naming(args, &[needle]);
}

/// [`refused`], the one error line naming each of `needles`.
fn refused_naming(args: &[&str], needles: &[&str]) {
    let home = tempfile::tempdir().unwrap();
    let out = cqlbench(home.path()).args(args).output().unwrap();
    common::refused_in_one_line(&out, args, needles);
}

// 127.0.0.1:1 is never listened on: these must fail before trying it.
const HOST: &str = "127.0.0.1:1";

#[test]
fn a_local_dc_must_be_one_data_centre_name() {
    for dc in ["a,b", "eu:west", " dc1", ""] {
        refused(
            &["run", "keyvalue", "--hosts", HOST, "--dc", dc],
            "give one data centre name",
        );
    }
}

#[test]
fn a_data_centre_given_twice_in_the_replication_is_refused() {
    refused(
        &["run", "keyvalue", "--hosts", HOST, "--rf", "dc1:3,dc1:2"],
        "data centre 'dc1' is given twice",
    );
    refused(
        &["run", "keyvalue", "--hosts", HOST, "--rf", ":3"],
        "no data centre name",
    );
    refused(
        &["run", "keyvalue", "--hosts", HOST, "--rf", "0"],
        "at least one replica",
    );
}

#[test]
fn an_overflowing_duration_is_refused_not_a_panic() {
    for flag in ["--duration", "--warmup", "--timeout"] {
        refused(
            &[
                "run",
                "keyvalue",
                "--hosts",
                HOST,
                flag,
                "99999999999999999999h",
            ],
            "too long a duration",
        );
    }
    refused(
        &[
            "capacity",
            "keyvalue",
            "--hosts",
            HOST,
            "--step",
            "99999999999999999999h",
        ],
        "too long a duration",
    );
}

#[test]
fn an_environment_label_cannot_name_a_path() {
    for env in ["a/../../x", "../x", ".hidden", ""] {
        refused(
            &["run", "keyvalue", "--hosts", HOST, "--env", env],
            "invalid environment name",
        );
    }
}

#[test]
fn keyspaces_contact_points_and_result_files_are_checked() {
    refused(
        &[
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--keyspace",
            "bad name!",
        ],
        "is not a keyspace name",
    );
    refused(
        &["run", "keyvalue", "--hosts", "127.0.0.1:99999"],
        "the port must be a number from 1 to 65535",
    );
    // A JSON file that is no result, given where a throughput result is expected.
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"a": 1}"#).unwrap();
    let of = other.to_str().unwrap();
    refused(
        &[
            "latency", "keyvalue", "--hosts", HOST, "--rate", "35%", "--of", of,
        ],
        "neither a run result",
    );
    // A result of another kind: a probe result where a throughput result is expected.
    let probe = dir.path().join("probe.json");
    std::fs::write(
        &probe,
        include_str!("../src/probe/testdata/probe-result.json"),
    )
    .unwrap();
    let probe = probe.to_str().unwrap();
    refused(
        &[
            "latency", "keyvalue", "--hosts", HOST, "--rate", "35%", "--of", probe,
        ],
        "a probe result, not a run result",
    );
}

#[test]
fn cluster_settings_cqlbench_plans_itself_are_refused_at_create() {
    for set in ["num_tokens=16", "initial_token=0", "auto_bootstrap=true"] {
        refused(
            &["cluster", "create", "x", "--set", set],
            "cqlbench sets num_tokens, initial_token, auto_bootstrap itself",
        );
    }
    refused(
        &["cluster", "create", "x", "--set", "=5"],
        "is not a cassandra.yaml key",
    );
    refused(
        &["cluster", "create", "x", "--cpus-per-node", "0"],
        "a node needs at least one CPU",
    );
    refused(
        &["cluster", "create", "x", "--heap", "999999G"],
        "is more than this host's",
    );
}

#[test]
fn bad_fault_schedules_are_refused_before_the_run() {
    let run = |extra: &[&str], needle: &str| {
        let mut args = vec!["run", "keyvalue", "--hosts", HOST, "--duration", "90s"];
        args.extend_from_slice(extra);
        refused(&args, needle);
    };
    run(
        &["--fault", "30s:explode:node2"],
        "unknown action 'explode'",
    );
    run(
        &["--fault", "95s:kill:node2"],
        "beyond the main phase (90s)",
    );
    run(&["--fault", "89s:pause:node2:2s"], "its end at 91s");
    run(&["--fault", "30s:kill"], "kill needs a node");
    run(&["--fault", "30s:kill:db2"], "is not a node");
    run(&["--fault", "soon:kill:node2"], "is not a duration");
    run(
        &["--fault", "30s:kill:node2"],
        "node faults need a local cluster",
    );
    refused(
        &[
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--ops",
            "100",
            "--fault",
            "1s:hook:true",
        ],
        "faults need --duration",
    );
    refused(
        &[
            "capacity",
            "keyvalue",
            "--hosts",
            HOST,
            "--fault",
            "1s:hook:true",
        ],
        "--fault is for run, throughput and latency",
    );
    refused(
        &[
            "fill",
            "keyvalue",
            "--hosts",
            HOST,
            "--bytes",
            "10M",
            "--fault",
            "1s:hook:true",
        ],
        "--fault is for run, throughput and latency",
    );
}

#[test]
fn a_valid_fault_schedule_gets_as_far_as_connecting() {
    // Every form parses; the run then fails on the unreachable host, not on the schedule.
    refused(
        &[
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--duration",
            "90s",
            "--fault",
            "10s:hook:echo fault",
            "--fault",
            "1m:hook:true",
        ],
        "cannot connect to 127.0.0.1:1",
    );
}

#[test]
fn an_unreachable_host_writes_no_result_and_says_none_was_written() {
    let home = tempfile::tempdir().unwrap();
    let out_path = home.path().join("r.json");
    let args = [
        "run",
        "keyvalue",
        "--hosts",
        HOST,
        "--duration",
        "2s",
        "--out",
        out_path.to_str().unwrap(),
    ];
    let out = cqlbench(home.path()).args(args).output().unwrap();
    common::refused_in_one_line(&out, &args, &["cannot connect to 127.0.0.1:1"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("result: {} (not written yet)", out_path.display())),
        "{stdout}"
    );
    assert!(!out_path.exists());
}

#[test]
fn verify_refuses_what_it_cannot_verify_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    refused(
        &["verify", missing.to_str().unwrap()],
        "missing.json: No such file",
    );
    // A run result without a ledger next to it.
    let run = dir.path().join("run.json");
    cqlbench::result::fixture::run("laptop", &Default::default())
        .write(&run)
        .unwrap();
    refused(
        &["verify", run.to_str().unwrap()],
        "no write ledger next to the run result",
    );
    // A ledger that is not one.
    std::fs::write(dir.path().join("run.ledger"), "{}").unwrap();
    refused(
        &["verify", run.to_str().unwrap()],
        "run.ledger: not a cqlbench write ledger",
    );
    let probe = dir.path().join("probe.json");
    std::fs::write(
        &probe,
        include_str!("../src/probe/testdata/probe-result.json"),
    )
    .unwrap();
    refused(
        &["verify", probe.to_str().unwrap()],
        "a probe result, not a run result",
    );
    refused(
        &["verify", probe.to_str().unwrap(), "--consistency", "SOME"],
        "invalid value 'SOME'",
    );
    refused(
        &["verify", probe.to_str().unwrap(), "--concurrency", "0"],
        "--concurrency must be at least 1",
    );
    refused(
        &["verify", probe.to_str().unwrap(), "--timeout", "forever"],
        "is not a duration",
    );
}

#[test]
fn bad_shard_values_are_refused_before_the_run() {
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "keyvalue", "--hosts", HOST];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let cases: [(&[&str], &str); 14] = [
        (
            &["--loaders", "2", "--drop"],
            "--drop with --shard or --loaders",
        ),
        (&["--shard", "2/2", "--run-id", "r1"], "not a shard"),
        (&["--shard", "1/0", "--run-id", "r1"], "not a shard"),
        (&["--shard", "one/two", "--run-id", "r1"], "not a shard"),
        (
            &["--shard", "0/99999", "--run-id", "r1"],
            "at most 10000 shards",
        ),
        (&["--shard", "0/2"], "required arguments were not provided"),
        (&["--shard", "0/2", "--run-id", "Run_1"], "not a run id"),
        (&["--shard", "0/2", "--run-id", "r1-"], "not a run id"),
        (
            &["--shard", "0/2", "--run-id", "r1", "--start-at", "tomorrow"],
            "not a start time",
        ),
        (
            &["--start-at", "1795526000"],
            "required arguments were not provided",
        ),
        (&["--loaders", "0"], "give 1 to 64 local processes"),
        (
            &["--loaders", "2", "--shard", "0/2", "--run-id", "r1"],
            "cannot be used with",
        ),
        (
            &["--loaders", "2", "--fault", "5s:kill:node1"],
            "--fault applies to one client",
        ),
        (
            &[
                "--shard",
                "0/2",
                "--run-id",
                "r1",
                "--barrier-timeout",
                "0s",
            ],
            "--barrier-timeout must be at least 1s",
        ),
    ];
    for (extra, needle) in cases {
        let args = run(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, needle);
    }
}

/// `capacity --loaders N` and `fill --loaders N` get past their checks (to the loaders
/// connecting, or the fill's metrics); a capacity search across machines is refused.
#[test]
fn capacity_and_fill_take_loaders_and_capacity_takes_shards() {
    refused(
        &[
            "capacity",
            "keyvalue",
            "--hosts",
            HOST,
            "--timeout",
            "1s",
            "--loaders",
            "2",
        ],
        "step 1: shard ",
    );
    // One search on two machines: shard 0 connects for the exchange first.
    refused(
        &[
            "capacity",
            "keyvalue",
            "--hosts",
            HOST,
            "--timeout",
            "1s",
            "--shard",
            "0/2",
            "--run-id",
            "r1",
        ],
        "cannot connect to",
    );
    refused(
        &[
            "fill",
            "keyvalue",
            "--hosts",
            HOST,
            "--bytes",
            "1G",
            "--loaders",
            "2",
        ],
        // No endpoint: the node's virtual tables through CQL, at a host that refuses.
        "cannot connect to",
    );
}

#[test]
fn throughput_and_latency_take_shard_flags() {
    // Accepted: refused only by the unreachable host.
    refused(
        &[
            "throughput",
            "keyvalue",
            "--hosts",
            HOST,
            "--timeout",
            "1s",
            "--shard",
            "0/2",
            "--run-id",
            "r1",
        ],
        "127.0.0.1:1",
    );
    refused(
        &[
            "latency",
            "keyvalue",
            "--hosts",
            HOST,
            "--timeout",
            "1s",
            "--rate",
            "100",
            "--shard",
            "1/2",
            "--run-id",
            "r1",
        ],
        "127.0.0.1:1",
    );
}

#[test]
fn valid_shard_flags_get_as_far_as_connecting() {
    // Every shard flag with a valid value: refused only by the unreachable host.
    for extra in [
        &[
            "--shard",
            "1/3",
            "--run-id",
            "run-0412",
            "--barrier-timeout",
            "30s",
        ][..],
        &[
            "--shard",
            "0/2",
            "--run-id",
            "r.2",
            "--start-at",
            "2026-11-24T13:00:00Z",
        ][..],
        &[
            "--shard",
            "0/1",
            "--run-id",
            "r3",
            "--start-at",
            "1795526000.5",
        ][..],
    ] {
        let mut args = vec!["run", "keyvalue", "--hosts", HOST, "--timeout", "1s"];
        args.extend_from_slice(extra);
        refused(&args, "127.0.0.1:1");
    }
}

#[test]
fn merge_refuses_what_is_not_a_whole_run_in_one_line() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("missing.json");
    refused(
        &["merge", missing.to_str().unwrap(), "--out", "x.json"],
        "missing.json",
    );
    refused(&["merge", "--out", "x.json"], "required");
    let plain = home.path().join("plain.json");
    cqlbench::result::fixture::run("lab", &cqlbench::result::fixture::RunShape::default())
        .write(&plain)
        .unwrap();
    let p = plain.to_str().unwrap();
    // Without an HDR log beside it, it is still named for what it is: not a shard's result.
    refused(&["merge", p, "--out", "y.json"], "not a shard's result");
    std::fs::write(plain.with_extension("hlog"), "").unwrap();
    refused(&["merge", p, "--out", "y.json"], "not a shard's result");
    refused(&["merge", p, "--out", p], "would overwrite");
}

/// `merge --out` never writes over a shard's own files (its result, HDR log or ledger, also
/// when `--out` names them without the extension) nor leaves anything behind when refused.
#[test]
fn merge_never_overwrites_a_shards_files() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let shards: Vec<std::path::PathBuf> = (0..2)
        .map(|i| {
            let mut r = cqlbench::result::fixture::run(
                "lab",
                &cqlbench::result::fixture::RunShape::default(),
            );
            r.shard = Some(cqlbench::result::ShardOf {
                run_id: "r1".into(),
                index: i,
                count: 2,
                start: "barrier".into(),
                main_started_unix_s: Some(1.0),
            });
            let p = dir.join(format!("shard-{i}.json"));
            r.write(&p).unwrap();
            std::fs::write(p.with_extension("hlog"), format!("hlog {i}")).unwrap();
            std::fs::write(p.with_extension("ledger"), format!("ledger {i}")).unwrap();
            p
        })
        .collect();
    let bytes = |p: &std::path::Path| std::fs::read(p).unwrap();
    let before: Vec<Vec<u8>> = shards
        .iter()
        .flat_map(|p| {
            [
                p.clone(),
                p.with_extension("hlog"),
                p.with_extension("ledger"),
            ]
        })
        .map(|p| bytes(&p))
        .collect();
    let (a, b) = (shards[0].to_str().unwrap(), shards[1].to_str().unwrap());
    let stem = dir.join("shard-0");
    refused(
        &["merge", a, b, "--out", stem.to_str().unwrap()],
        "shard-0.hlog would overwrite",
    );
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    refused(
        &["merge", a, b, "--out", sub.to_str().unwrap()],
        "is a directory",
    );
    refused(
        &["merge", a, b, "--out", &format!("{a}/r.json")],
        "is a file, not a directory",
    );
    let after: Vec<Vec<u8>> = shards
        .iter()
        .flat_map(|p| {
            [
                p.clone(),
                p.with_extension("hlog"),
                p.with_extension("ledger"),
            ]
        })
        .map(|p| bytes(&p))
        .collect();
    assert_eq!(before, after, "a shard's file changed");
    assert!(!dir.join("sub.hlog").exists(), "nothing left behind");
}

#[test]
fn key_distributions_are_checked_before_the_run() {
    for (bad, needle) in [
        ("pareto", "'pareto' is not a key distribution"),
        ("zipf:0", "zipf[:S] (0 < S <= 10)"),
        ("zipf:1e400", "is not a key distribution"),
        ("gaussian:-1", "is not a key distribution"),
        ("uniform:3", "is not a key distribution"),
        ("", "is not a key distribution"),
    ] {
        refused(
            &["run", "keyvalue", "--hosts", HOST, "--key-dist", bad],
            needle,
        );
    }
    // Every form, on every command that runs a workload, gets as far as connecting.
    for dist in [
        "uniform",
        "zipf",
        "zipf:1.2",
        "zipfian:0.5",
        "gaussian",
        "gaussian:2",
        "seq",
        "sequential",
        "latest",
        "latest:1.1",
    ] {
        refused(
            &[
                "run",
                "keyvalue",
                "--hosts",
                HOST,
                "--timeout",
                "1s",
                "--key-dist",
                dist,
            ],
            HOST,
        );
    }
    // A fill reads its nodes' load before it connects: from an endpoint that answers.
    let load = common::empty_node_load_endpoint();
    for cmd in [
        &["throughput", "tabular"][..],
        &["latency", "iot", "--rate", "100"][..],
        &["capacity", "stress"][..],
        &["fill", "stress", "--bytes", "1M", "--prometheus", &load][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--hosts", HOST, "--timeout", "1s", "--key-dist", "zipf:1.1"]);
        refused(&args, HOST);
    }
}

#[test]
fn verify_reads_is_a_flag_of_every_command_that_runs_a_workload() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.yaml");
    let base = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/collections.yaml"),
    )
    .unwrap();
    std::fs::write(
        &profile,
        base + "  forget:\n    cql: delete from users where user_id = ?\n",
    )
    .unwrap();
    let p = profile.to_str().unwrap();
    // A mix that deletes rows cannot be verified: refused before connecting.
    refused_naming(
        &[
            "run",
            "profile",
            "--profile",
            p,
            "--profile-ops",
            "insert=1,forget=1",
            "--hosts",
            HOST,
            "--verify",
        ],
        &["--verify: ", "queries.forget: 'forget' deletes rows"],
    );
    // Without --verify the same mix gets as far as connecting; so does every command with it.
    refused(
        &[
            "run",
            "profile",
            "--profile",
            p,
            "--profile-ops",
            "insert=1,forget=1",
            "--hosts",
            HOST,
            "--timeout",
            "1s",
        ],
        HOST,
    );
    for cmd in [
        &["run", "keyvalue"][..],
        &["run", "profile", "--profile", p, "--profile-ops", "by_id=1"][..],
        &["throughput", "tabular"][..],
        &["latency", "iot", "--rate", "100"][..],
        &["capacity", "stress"][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--hosts", HOST, "--timeout", "1s", "--verify"]);
        refused(&args, HOST);
    }
    refused(&["run", "keyvalue", "--verify=yes"], "--verify");
    refused(
        &[
            "run",
            "keyvalue",
            "--ratio",
            "read=1,delete=1",
            "--verify",
            "--hosts",
            HOST,
        ],
        "--verify with delete in the mix",
    );
}

#[test]
fn keyvalue_offers_deletes_lwts_batches_and_counters() {
    // Each gets as far as connecting, alone and together.
    for ratio in [
        "delete=1",
        "lwt=1",
        "batch=1",
        "counter=1",
        "write=4,read=4,delete=1,lwt=1,batch=1,counter=1",
    ] {
        refused(
            &[
                "run",
                "keyvalue",
                "--ratio",
                ratio,
                "--hosts",
                HOST,
                "--timeout",
                "1s",
            ],
            HOST,
        );
    }
    // Other workloads do not have them; unknown names list what there is.
    refused(
        &[
            "run",
            "tabular",
            "--ratio",
            "write=1,lwt=1",
            "--hosts",
            HOST,
        ],
        "workload tabular has no lwt operation",
    );
    refused(
        &["run", "keyvalue", "--ratio", "upsert=1", "--hosts", HOST],
        "use write, read, range, delete, lwt, batch or counter",
    );
}

#[test]
fn reference_shapes_are_workloads_whose_row_is_fixed() {
    for w in ["nb-tabular2", "nb-iot"] {
        for knob in [["--value-size", "100"], ["--columns", "3"]] {
            let mut args = vec!["run", w, "--hosts", HOST];
            args.extend(knob);
            refused(&args, "writes its reference workload's row as it is");
        }
        // The knobs they take, and their operations, get as far as connecting.
        refused(
            &[
                "run",
                w,
                "--hosts",
                HOST,
                "--timeout",
                "1s",
                "--partsize",
                "100",
                "--ratio",
                "write=1,range=1",
                "--key-dist",
                "latest",
            ],
            HOST,
        );
        refused(
            &["run", w, "--hosts", HOST, "--ratio", "read=1"],
            "has no read operation",
        );
    }
    refused(
        &[
            "run",
            "stress",
            "--hosts",
            HOST,
            "--timeout",
            "1s",
            "--value-size",
            "34",
        ],
        HOST,
    );
}

#[test]
fn profile_runs_are_checked_before_the_run() {
    let lwt = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/lwt.yaml");
    refused(
        &["run", "profile", "--hosts", HOST],
        "workload profile needs --profile FILE",
    );
    refused(
        &["run", "keyvalue", "--hosts", HOST, "--profile", lwt],
        "--profile goes with the workload profile",
    );
    refused(
        &[
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--profile-ops",
            "ops(insert=1)",
        ],
        "required arguments were not provided",
    );
    refused(
        &[
            "run",
            "profile",
            "--hosts",
            HOST,
            "--profile",
            lwt,
            "--profile-ops",
            "ops(insert=1,nosuch=2)",
        ],
        "ops: 'nosuch' is neither insert nor a query of the profile (it offers insert, create, read, transfer)",
    );
    refused(
        &[
            "run",
            "profile",
            "--hosts",
            HOST,
            "--profile",
            lwt,
            "--profile-ops",
            "ops(insert)",
        ],
        "--profile-ops 'insert' in 'ops(insert)'",
    );
    refused(
        &[
            "run",
            "profile",
            "--hosts",
            HOST,
            "--profile",
            lwt,
            "--ratio",
            "write=1",
        ],
        "--ratio and --partsize",
    );
    refused(
        &[
            "run",
            "profile",
            "--hosts",
            HOST,
            "--profile",
            "/nonexistent/p.yaml",
        ],
        "/nonexistent/p.yaml: file:",
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(lwt)
            .unwrap()
            .replace("owner text", "owner duration"),
    )
    .unwrap();
    refused(
        &[
            "run",
            "profile",
            "--hosts",
            HOST,
            "--profile",
            bad.to_str().unwrap(),
        ],
        "table_definition: column owner: type 'duration' has no value generator",
    );
    // Valid: refused only by the unreachable host, on every command that runs a workload.
    for cmd in [
        &["run"][..],
        &["throughput"][..],
        &["latency", "--rate", "100"][..],
        &["capacity"][..],
    ] {
        let mut args = vec![cmd[0], "profile"];
        args.extend(&cmd[1..]);
        args.extend(["--hosts", HOST, "--timeout", "1s", "--profile", lwt]);
        args.extend([
            "--profile-ops",
            "ops(insert=1,create=1,transfer=2,read=4)",
            "--key-dist",
            "zipf",
        ]);
        refused(&args, HOST);
    }
}

/// A result path that runs through a file (`FILE/r.json`) is named as such, for a run's
/// `--out` and a report's `--html` and `--out`, before anything connects or is written.
#[test]
fn an_output_path_under_a_file_is_refused_naming_the_file() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("FILE");
    std::fs::write(&file, "x").unwrap();
    let under = |name: &str| file.join(name).to_str().unwrap().to_string();
    refused(
        &[
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--out",
            &under("r.json"),
        ],
        "FILE is a file, not a directory",
    );
    let run = home.path().join("run.json");
    cqlbench::result::fixture::run("lab", &cqlbench::result::fixture::RunShape::default())
        .write(&run)
        .unwrap();
    let r = run.to_str().unwrap();
    for flag in ["--html", "--out"] {
        refused(
            &["report", r, flag, &under("r.html")],
            "FILE is a file, not a directory",
        );
    }
    refused(
        &[
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--out",
            home.path().to_str().unwrap(),
        ],
        "is a directory",
    );
}

/// A missing result file is named with its OS error once, by every command that reads one.
#[test]
fn a_missing_result_says_its_os_error_once() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("missing.json");
    let m = missing.to_str().unwrap();
    for args in [
        vec!["report", m],
        vec!["compare", m, m],
        vec!["verify", m, "--hosts", HOST],
        vec![
            "plan",
            "--ops",
            "1000",
            "--data",
            "1TB",
            "--capacity",
            &format!("r5.large={m}"),
        ],
    ] {
        let out = cqlbench(home.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains("missing.json"), "{args:?}: {err}");
        assert_eq!(
            err.matches("No such file or directory").count(),
            1,
            "{args:?}: {err}"
        );
    }
}

/// Two options of which one would be ignored are refused, whichever value the first has.
#[test]
fn options_that_would_be_ignored_are_refused() {
    refused(
        &["cluster", "create", "x", "--nodes", "5", "--dcs", "a:1,b:1"],
        "--dcs",
    );
    refused(
        &[
            "capacity",
            "keyvalue",
            "--hosts",
            HOST,
            "--factor",
            "1.5",
            "--increment",
            "100",
        ],
        "--increment",
    );
    // The same in a scenario file's cluster section and capacity step.
    let home = tempfile::tempdir().unwrap();
    for (text, needle) in [
        (
            "name: n\ncluster: {nodes: 5, dcs: 'a:1,b:1'}\nsteps: [{probe: {}}]",
            "give --nodes (5) or --dcs",
        ),
        (
            "name: f\nhosts: [h]\nsteps: [{capacity: {workload: stress, factor: 1.5, increment: 100}}]",
            "give --factor or --increment, not both",
        ),
    ] {
        let f = home.path().join("s.yaml");
        std::fs::write(&f, text).unwrap();
        refused(&["scenario", f.to_str().unwrap(), "--dry-run"], needle);
    }
}

/// `verify` reads a ledger only for the run that wrote it: one left by another run at the
/// same path is refused by name before anything connects, not read as missing rows.
#[test]
fn verify_refuses_a_ledger_another_run_wrote() {
    let home = tempfile::tempdir().unwrap();
    let run = home.path().join("run.json");
    let mut r =
        cqlbench::result::fixture::run("lab", &cqlbench::result::fixture::RunShape::default());
    r.ledger_id = Some("lab-1-1".into());
    r.write(&run).unwrap();
    let ledger = run.with_extension("ledger");
    let mut w = cqlbench::result::ledger::LedgerWriter::create(&ledger, "lab-2-2").unwrap();
    w.append(
        "main",
        cqlbench::result::ledger::Mapping::Hashed,
        &Default::default(),
    )
    .unwrap();
    drop(w);
    refused(
        &["verify", run.to_str().unwrap(), "--hosts", HOST],
        "written by another run (ledger id lab-2-2) than",
    );
    // A ledger from before ledgers named their run, beside a result that names one.
    std::fs::write(&ledger, b"CQLBLDG1").unwrap();
    refused(
        &["verify", run.to_str().unwrap(), "--hosts", HOST],
        "written by another run (ledger id none)",
    );
}

/// Before its first step, a capacity search says how long it can take: its most steps times
/// a step's length with its waits. Nothing listens on the address, so the first step fails
/// to connect right after the estimate.
#[test]
fn a_capacity_search_starts_with_its_time_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.json");
    let estimate = |extra: &[&str]| -> String {
        let a = cqlbench(dir.path())
            .args([
                "capacity",
                "keyvalue",
                "--hosts",
                "127.0.99.1",
                "--rows",
                "100",
            ])
            .args(["--out", out.to_str().unwrap()])
            .args(extra)
            .timeout(std::time::Duration::from_secs(120))
            .assert()
            .failure();
        let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(stderr.contains("cannot connect"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        stdout
            .lines()
            .find(|l| l.starts_with("capacity search: "))
            .unwrap_or_else(|| panic!("no estimate in:\n{stdout}"))
            .to_string()
    };
    // Without a metrics endpoint there are no compaction waits: 20 steps of 60 s.
    let line = estimate(&[]);
    assert!(
        line.contains("up to 20 steps × 60 s ≈ at most 20m"),
        "{line}"
    );
    // With one (nothing answers it), each step may wait to settle and waits --pending-after.
    let line = estimate(&[
        "--prometheus",
        "http://127.0.99.1:9",
        "--max-steps",
        "4",
        "--step",
        "30s",
        "--step-warmup",
        "5s",
        "--settle-timeout",
        "1s",
        "--pending-after",
        "60s",
    ]);
    assert!(
        line.contains("up to 4 steps × 90–91 s ≈ at most 6m 4s"),
        "{line}"
    );
    assert!(
        line.contains("60 s wait to read pending compactions (--pending-after)"),
        "{line}"
    );
}

#[test]
fn bad_tls_and_driver_settings_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let ca = cqlbench::tls::LocalCa::at(dir.path().join("tls"));
    ca.create(&["127.0.0.1".into()]).unwrap();
    let p = |x: std::path::PathBuf| x.to_str().unwrap().to_string();
    let (ca_pem, cert, key) = (p(ca.ca()), p(ca.client_cert()), p(ca.client_key()));
    let missing = p(dir.path().join("missing.pem"));
    let (enc, _) = encrypted_key(dir.path(), &key);
    let wrong = p(dir.path().join("wrong-password"));
    std::fs::write(&wrong, "not the password\n").unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "keyvalue", "--hosts", HOST, "--timeout", "1s"];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (run(&["--retry", "many"]), "--retry 'many'"),
        (run(&["--retry", "11"]), "1 to 10"),
        (run(&["--speculative", "p100"]), "between 0 and 100"),
        (run(&["--speculative", "20ms:9"]), "1 to 4 extra requests"),
        (run(&["--speculative", "soon"]), "--speculative 'soon'"),
        (run(&["--compression", "zstd"]), "none, lz4 or snappy"),
        (
            run(&["--connections-per-host", "0"]),
            "--connections-per-host 0",
        ),
        (run(&["--page-size", "0"]), "--page-size 0"),
        (run(&["--rack", "r1"]), "--rack needs the local data centre"),
        (run(&["--tls-min-version", "1.1"]), "1.2 or 1.3"),
        (
            run(&["--tls-min-version", "1.3"]),
            "--tls-min-version 1.3: this run is plain text",
        ),
        (
            run(&["--tls-cert", &cert, "--tls-key", &key]),
            "need --tls-ca",
        ),
        (
            run(&["--tls-ca", &ca_pem, "--tls-cert", &cert]),
            "--tls-cert needs --tls-key",
        ),
        (run(&["--tls-ca", &ca_pem, "--no-tls"]), "--no-tls"),
        (
            run(&[
                "--tls-ca",
                &ca_pem,
                "--tls-server-name",
                "db",
                "--tls-no-hostname-check",
            ]),
            "--tls-no-hostname-check",
        ),
        // Files are read before any connection: each names the flag and the file.
        (run(&["--tls-ca", &missing]), "cannot read it"),
        (run(&["--tls-ca", &key]), "no certificate in it"),
        (
            run(&["--tls-ca", &ca_pem, "--tls-cert", &cert, "--tls-key", &cert]),
            "no private key in it",
        ),
        // An encrypted key's password: from a file or the environment, never a flag value.
        (
            run(&["--tls-key-password-file", &missing]),
            "(and its password)",
        ),
        (
            run(&[
                "--tls-ca",
                &ca_pem,
                "--tls-key-password-file",
                &missing,
                "--tls-key-password-env",
                "PW",
            ]),
            "--tls-key-password-env",
        ),
        (
            run(&["--tls-ca", &ca_pem, "--tls-key-password-env", "PW"]),
            "need --tls-key",
        ),
        (
            run(&["--tls-ca", &ca_pem, "--tls-cert", &cert, "--tls-key", &enc]),
            "the key is encrypted: give its password with --tls-key-password-file",
        ),
        (
            run(&[
                "--tls-ca",
                &ca_pem,
                "--tls-cert",
                &cert,
                "--tls-key",
                &enc,
                "--tls-key-password-file",
                &wrong,
            ]),
            "does not open it",
        ),
        (
            run(&[
                "--tls-ca",
                &ca_pem,
                "--tls-cert",
                &cert,
                "--tls-key",
                &enc,
                "--tls-key-password-file",
                &missing,
            ]),
            "--tls-key-password-file",
        ),
        (
            run(&[
                "--tls-ca",
                &ca_pem,
                "--tls-cert",
                &cert,
                "--tls-key",
                &enc,
                "--tls-key-password-env",
                "CQLBENCH_TEST_UNSET_PASSWORD_VARIABLE",
            ]),
            "is not set",
        ),
    ];
    for (args, needle) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, needle);
    }
    // The same through capacity and fill, which take the run's flags.
    refused(
        &["capacity", "keyvalue", "--hosts", HOST, "--retry", "x"],
        "--retry 'x'",
    );
    refused(
        &[
            "fill",
            "keyvalue",
            "--hosts",
            HOST,
            "--compression",
            "x",
            "--rows",
            "10",
        ],
        "none, lz4 or snappy",
    );
}

#[test]
fn valid_tls_and_driver_settings_get_as_far_as_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let ca = cqlbench::tls::LocalCa::at(dir.path().join("tls"));
    ca.create(&["127.0.0.1".into()]).unwrap();
    let p = |x: std::path::PathBuf| x.to_str().unwrap().to_string();
    let (ca_pem, cert, key) = (p(ca.ca()), p(ca.client_cert()), p(ca.client_key()));
    let (enc, password) = encrypted_key(dir.path(), &key);
    for extra in [
        vec![
            "--retry",
            "none",
            "--speculative",
            "p99.9:2",
            "--compression",
            "snappy",
        ],
        vec![
            "--retry",
            "default",
            "--speculative",
            "off",
            "--compression",
            "none",
        ],
        vec![
            "--retry",
            "3",
            "--speculative",
            "25ms",
            "--compression",
            "LZ4",
        ],
        vec![
            "--connections-per-host",
            "4",
            "--page-size",
            "500",
            "--dc",
            "dc1",
            "--rack",
            "r1",
        ],
        vec!["--tls-ca", &ca_pem, "--tls-min-version", "1.3"],
        vec!["--tls-ca", &ca_pem, "--tls-cert", &cert, "--tls-key", &key],
        vec![
            "--tls-ca",
            &ca_pem,
            "--tls-cert",
            &cert,
            "--tls-key",
            &enc,
            "--tls-key-password-file",
            &password,
        ],
        vec![
            "--tls-ca",
            &ca_pem,
            "--tls-cert",
            &cert,
            "--tls-key",
            &enc,
            "--tls-key-password-env",
            "CQLBENCH_TEST_KEY_PASSWORD",
        ],
        vec!["--tls-ca", &ca_pem, "--tls-server-name", "db.example.com"],
        vec!["--tls-ca", &ca_pem, "--tls-no-hostname-check"],
        vec!["--no-tls"],
    ] {
        let mut args = vec!["run", "keyvalue", "--hosts", HOST, "--timeout", "1s"];
        args.extend_from_slice(&extra);
        let o = cqlbench(&dir.path().join("home"))
            .args(&args)
            .env("CQLBENCH_TEST_KEY_PASSWORD", "pass phrase")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(
            err.contains("cannot connect to 127.0.0.1:1"),
            "{args:?}: {err}"
        );
    }
}

/// `key` encrypted as PKCS#8 (AES-256-CBC) by openssl with the password in a file: the
/// encrypted key's path and the password file's.
fn encrypted_key(dir: &std::path::Path, key: &str) -> (String, String) {
    let password = dir.join("password");
    std::fs::write(&password, "pass phrase\n").unwrap();
    let enc = dir.join("client-key.enc.pem");
    let o = std::process::Command::new("openssl")
        .args(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", key, "-out"])
        .arg(&enc)
        .arg("-passout")
        .arg(format!("file:{}", password.display()))
        .output()
        .expect("openssl runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = |x: std::path::PathBuf| x.to_str().unwrap().to_string();
    (p(enc), p(password))
}

#[test]
fn metrics_listen_takes_a_socket_address_and_refuses_a_busy_one() {
    for bad in [
        "nonsense",
        "127.0.0.1",
        "localhost:9500",
        "127.0.0.1:99999",
        "",
    ] {
        refused(
            &["run", "keyvalue", "--hosts", HOST, "--metrics-listen", bad],
            "--metrics-listen",
        );
    }
    // A port something else holds: refused, naming the flag and the address, before the run.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for cmd in ["run", "throughput", "latency", "capacity", "fill"] {
        let mut args = vec![cmd, "keyvalue", "--hosts", HOST, "--metrics-listen", &addr];
        match cmd {
            "latency" => args.extend(["--rate", "100"]),
            "fill" => args.extend(["--bytes", "10M"]),
            _ => {}
        }
        refused_naming(&args, &[&format!("--metrics-listen {addr}: "), "in use"]);
    }
    // A free one (port 0: any): the endpoint is announced, and the run then fails on the
    // unreachable host, not on the flag.
    let home = tempfile::tempdir().unwrap();
    let out = cqlbench(home.path())
        .args(["run", "keyvalue", "--hosts", HOST, "--timeout", "1s"])
        .args(["--metrics-listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_ne!(out.status.code(), Some(101), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("live metrics: http://127.0.0.1:") && l.ends_with("/metrics")),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error:") && l.contains("127.0.0.1:1")),
        "{stderr}"
    );
}

#[test]
fn a_malformed_node_exporter_is_refused_in_one_line() {
    let run = |value: &str, needle: &str| {
        refused_naming(
            &["run", "keyvalue", "--hosts", HOST, "--node-exporter", value],
            &["--node-exporter", value, needle],
        );
    };
    run("10.0.0.5:9100", "expected NODE=host:port");
    run("node1=10.0.0.5", "no port");
    run("node1=10.0.0.5:ninety", "bad port 'ninety'");
    run("=10.0.0.5:9100", "no node name");
}

#[test]
fn a_malformed_prometheus_server_or_instance_is_refused_in_one_line() {
    for cmd in ["run", "throughput", "latency"] {
        let mut args = vec![cmd, "keyvalue", "--hosts", HOST];
        if cmd == "latency" {
            args.extend(["--rate", "100"]);
        }
        let with = |extra: &[&'static str]| {
            let mut a = args.clone();
            a.extend(extra);
            a
        };
        for (value, needle) in [
            ("10.0.0.9:9090", "must start with http:// or https://"),
            ("http://", "empty host"),
            ("http://h:99999", "invalid port"),
            ("http://h:9090/?q=1", "no query or fragment"),
        ] {
            refused_naming(
                &with(&["--prometheus-server", value]),
                &["--prometheus-server", value, needle, "http[s]://host:port"],
            );
        }
        for (value, needle) in [
            ("node1", "no '='"),
            ("=10.0.0.5:9100", "no node name"),
            ("node1=", "no instance"),
            ("node1=a b", "no spaces"),
        ] {
            refused_naming(
                &with(&[
                    "--prometheus-server",
                    "http://127.0.0.1:9090",
                    "--prometheus-instance",
                    value,
                ]),
                &["--prometheus-instance", needle, "NODE=INSTANCE"],
            );
        }
        // An instance needs a server; --no-metrics and a server do not go together.
        refused_naming(
            &with(&["--prometheus-instance", "node1=10.0.0.5:9100"]),
            &["--prometheus-server"],
        );
        refused_naming(
            &with(&["--prometheus-server", "http://h:9090", "--no-metrics"]),
            &["--no-metrics", "--prometheus-server"],
        );
    }
    for cmd in ["capacity", "fill"] {
        let mut args = vec![cmd, "keyvalue", "--hosts", HOST];
        if cmd == "fill" {
            args.extend(["--bytes", "10M"]);
        }
        // Accepted: the nodes are listed over CQL first (to map them to the server's
        // instances), which the unreachable host refuses.
        args.extend(["--prometheus-server", "http://h:9090"]);
        refused_naming(&args, &["cannot connect to 127.0.0.1:1"]);
    }
}

/// Valid values get past the checks: the run then fails on the unreachable host, not on
/// the flags, and no fetch is tried for a run that never started.
#[test]
fn valid_prometheus_server_and_instances_are_accepted() {
    for server in ["http://127.0.0.1:9090", "https://prom.example/prometheus/"] {
        let home = tempfile::tempdir().unwrap();
        let out = cqlbench(home.path())
            .args(["run", "keyvalue", "--hosts", HOST, "--timeout", "1s"])
            .args(["--prometheus-server", server])
            .args(["--prometheus-instance", "node1=10.0.0.5:9100"])
            .args(["--prometheus-instance", "127.0.0.1=[::1]:9100"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_ne!(out.status.code(), Some(101), "{stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(errors[0].contains("127.0.0.1:1"), "{stderr}");
        assert!(!stderr.contains("prometheus"), "{stderr}");
    }
}

/// The server's credentials, token and CA files: each read and checked before the run (a bad
/// one refused in one line naming the flag and the file), none without a server; valid ones
/// get the run past its checks to the unreachable host.
#[test]
fn prometheus_server_credentials_token_and_ca_are_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (good, one_line) = (file("good", "u\np w\n"), file("one", "u\n"));
    let (token, no_token) = (file("token", "abc.def\n"), file("none", "\n"));
    let not_pem = file("ca.txt", "not a certificate\n");
    let ca = dir.path().join("ca.pem");
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["prom".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    std::fs::write(&ca, cert.pem()).unwrap();
    let ca = ca.to_str().unwrap().to_string();
    let base = ["run", "keyvalue", "--hosts", HOST, "--timeout", "1s"];
    let server = ["--prometheus-server", "https://127.0.0.1:9090"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter()
            .chain(&server)
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    for (extra, needles) in [
        (
            vec!["--prometheus-credentials", &one_line],
            vec!["--prometheus-credentials", "expected two lines"],
        ),
        (
            vec!["--prometheus-credentials", "/nonexistent/c"],
            vec!["--prometheus-credentials", "/nonexistent/c"],
        ),
        (
            vec!["--prometheus-token", &no_token],
            vec!["--prometheus-token", "a token on its first line"],
        ),
        (
            vec!["--prometheus-token", "/nonexistent/t"],
            vec!["--prometheus-token", "/nonexistent/t"],
        ),
        (
            vec!["--prometheus-ca", &not_pem],
            vec!["--prometheus-ca", "no certificate"],
        ),
        (
            vec!["--prometheus-ca", "/nonexistent/ca"],
            vec!["--prometheus-ca", "/nonexistent/ca"],
        ),
        (
            vec![
                "--prometheus-credentials",
                &good,
                "--prometheus-token",
                &token,
            ],
            vec!["--prometheus-token", "cannot be used with"],
        ),
    ] {
        let args = with(&extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused_naming(&args, &needles);
    }
    // Without a server, each is refused.
    for flag in [
        "--prometheus-credentials",
        "--prometheus-token",
        "--prometheus-ca",
    ] {
        refused_naming(
            &[&base[..], &[flag, good.as_str()]].concat(),
            &["--prometheus-server"],
        );
    }
    for extra in [
        vec![
            "--prometheus-credentials",
            good.as_str(),
            "--prometheus-ca",
            ca.as_str(),
        ],
        vec!["--prometheus-token", token.as_str()],
    ] {
        let home = tempfile::tempdir().unwrap();
        let out = cqlbench(home.path()).args(with(&extra)).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{extra:?}: {stderr}");
        assert!(errors[0].contains("127.0.0.1:1"), "{extra:?}: {stderr}");
    }
}

/// A capacity search whose first step fails (nothing listens at the contact point) leaves a
/// result that says it failed and why, not "running".
#[test]
fn a_capacity_search_failing_before_its_first_step_says_so_in_its_result() {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("cap.json");
    let o = cqlbench(home.path())
        .args([
            "capacity", "keyvalue", "--hosts", HOST, "--dc", "dc1", "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let reason = r["status"]["failed"]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("step 1: "), "{}", r["status"]);
    assert!(reason.contains("127.0.0.1:1"), "{reason}");
    assert!(r["finished_unix_s"].is_number(), "{r}");
}

/// `--metrics-linger` keeps the endpoint up after a command that finished; one that failed
/// has no final figures to serve and exits at once.
#[test]
fn a_failed_command_does_not_linger() {
    let home = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let o = cqlbench(home.path())
        .args(["run", "keyvalue", "--hosts", HOST, "--dc", "dc1"])
        .args(["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60s"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(30),
        "lingered {:?}",
        t0.elapsed()
    );
}

/// `cqlbench shard ORDER --index I --out FILE`, what loaders run: an order that cannot be
/// read, is not one, is from a newer cqlbench, or has no such shard is refused in one line,
/// and nothing is written.
#[test]
fn a_loader_refuses_a_bad_order_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.shard-1.json");
    let out_s = out.to_str().unwrap();
    let order = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // A real order, as `--loaders 2` writes it.
    let run: cqlbench::step::RunStep =
        cqlbench::step::parse_args("run", &["keyvalue", "--hosts", HOST].map(String::from))
            .unwrap();
    let good = cqlbench::step::order::Order::new(
        "r1".into(),
        2,
        cqlbench::step::order::Task::Run(Box::new(run)),
    )
    .to_json();
    let cases: Vec<(String, &str)> = vec![
        (
            dir.path().join("none.json").to_str().unwrap().into(),
            "cannot read the order",
        ),
        (order("bad.json", "run keyvalue"), "not a cqlbench order"),
        (
            order(
                "new.json",
                &good.replace("\"version\": 1", "\"version\": 9"),
            ),
            "order version 9 was written by a newer cqlbench",
        ),
        (
            order("key.json", &good.replace("\"rows\"", "\"rowz\"")),
            "unknown field `rowz`",
        ),
    ];
    for (file, needle) in &cases {
        refused(&["shard", file, "--index", "1", "--out", out_s], needle);
    }
    let file = order("good.json", &good);
    refused(
        &["shard", &file, "--index", "2", "--out", out_s],
        "--index 2: the order has 2 shards (0 to 1)",
    );
    refused(
        &["shard", &file, "--out", out_s],
        "the following required arguments",
    );
    assert!(!out.exists());
}
