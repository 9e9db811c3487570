//! The network flags through the real binary, without a cluster: a lab's shape, address maps,
//! namespaces and network faults refused in one line before anything is built or connected
//! (tests/lab_real.rs runs the valid ones against a real lab).

mod common;

fn cqlbench(home: &std::path::Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.env("CQLBENCH_HOME", home)
        .env("CQLBENCH_CLUSTERS_DIR", home.join("clusters"));
    c
}

fn refused(args: &[&str], needles: &[&str]) {
    let home = tempfile::tempdir().unwrap();
    let out = cqlbench(home.path()).args(args).output().unwrap();
    common::refused_in_one_line(&out, args, needles);
    // Nothing was made for a refused lab.
    assert!(!home.path().join("clusters").join("x").exists(), "{args:?}");
}

// Never listened on: these must fail before trying it, or trying it.
const HOST: &str = "127.0.0.1:1";

#[test]
fn a_lab_shape_out_of_range_is_refused_before_anything_is_built() {
    for (args, needles) in [
        (
            vec!["--netns", "--netns-clients", "0"],
            vec!["--netns-clients 0", "1 to 8"],
        ),
        (
            vec!["--netns", "--netns-outside", "9"],
            vec!["--netns-outside 9", "0 to 8"],
        ),
        (
            vec!["--netns", "--netns-link-mbit", "0"],
            vec!["--netns-link-mbit 0", "1 Mbit/s"],
        ),
        (
            vec!["--netns", "--address-prefix", "127.0.5."],
            vec!["--address-prefix and --netns"],
        ),
        (
            vec!["--netns-clients", "2"],
            vec!["required arguments were not provided"],
        ),
        (vec!["--netns", "--netns-clients", "two"], vec!["two"]),
    ] {
        let mut all = vec!["cluster", "create", "x"];
        all.extend(args);
        refused(&all, &needles);
    }
}

#[test]
fn address_maps_are_checked_and_a_valid_one_gets_to_connecting() {
    let run = |map: &str| {
        vec![
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--duration",
            "1s",
            "--address-map",
        ]
        .into_iter()
        .chain([map])
        .map(String::from)
        .collect::<Vec<String>>()
    };
    for (map, needle) in [
        ("198.18.0.11", "no '='"),
        ("node1=198.19.1.1", "the internal address is not IP[:PORT]"),
        ("198.18.0.11=lb.example", "the external address"),
        ("198.18.0.11=1.1.1.1,198.18.0.11=1.1.1.2", "mapped twice"),
        ("@/no/such/map", "@/no/such/map"),
    ] {
        let args = run(map);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, &["--address-map", needle]);
    }
    // Twice the same node in two flags.
    let mut twice = run("198.18.0.11=1.1.1.1");
    twice.extend(["--address-map".into(), "198.18.0.11=1.1.1.2".into()]);
    let args: Vec<&str> = twice.iter().map(String::as_str).collect();
    refused(&args, &["198.18.0.11:9042 is mapped twice"]);
    // Valid maps, a list and a file: accepted, the run gets as far as the contact point.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("map.txt");
    std::fs::write(&file, "# internal = external\n10.0.0.5=203.0.113.7:30042\n").unwrap();
    for map in [
        "10.0.0.5=203.0.113.7:30042,10.0.0.6:9042=203.0.113.8".to_string(),
        format!("@{}", file.display()),
    ] {
        let args = run(&map);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, &["127.0.0.1:1"]);
    }
}

#[test]
fn a_namespace_that_does_not_exist_is_named() {
    for ns in ["cqlbench-test-no-such-ns", "../etc"] {
        refused(
            &["run", "keyvalue", "--hosts", HOST, "--netns", ns],
            &[&format!("network namespace '{ns}' does not exist")],
        );
        refused(
            &["verify", "no-such-result.json", "--netns", ns],
            &[&format!("network namespace '{ns}' does not exist")],
        );
    }
}

#[test]
fn network_faults_need_a_lab_and_well_formed_durations() {
    let run = |fault: &str| {
        [
            "run",
            "keyvalue",
            "--hosts",
            HOST,
            "--duration",
            "20s",
            "--fault",
        ]
        .into_iter()
        .chain([fault])
        .map(String::from)
        .collect::<Vec<String>>()
    };
    for (fault, needles) in [
        (
            "2s:partition:node1",
            vec!["node faults need a local cluster"],
        ),
        ("2s:isolate:dc2:5s", vec!["isolate needs a lab cluster"]),
        (
            "2s:partition:node1:0s",
            vec!["a partition must last more than 0s"],
        ),
        ("2s:heal:node1:3s", vec!["unexpected ':3s'"]),
        ("2s:isolate:", vec!["is not a data centre name"]),
        ("2s:isolate:dc/2", vec!["'dc/2' is not a data centre name"]),
        (
            "15s:partition:node1:10s",
            vec!["its end at 25s is beyond the main phase"],
        ),
    ] {
        let args = run(fault);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, &needles);
    }
}
