//! The catalogue of bad and edge-case input, through the real binary and without a cluster:
//! every documented flag with a bad value (refused in one line naming what is wrong, never a
//! panic) and with valid values (accepted: the command gets past every check to the first
//! thing that needs the outside world — a connection to a port nobody listens on, a fio that
//! is not there, or a heap no host has — and fails there, not earlier).

mod common;
use std::path::Path;

fn cqlbench(home: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.env("CQLBENCH_HOME", home)
        .env("CQLBENCH_CLUSTERS_DIR", home.join("clusters"))
        .env("CQLBENCH_FIO", "/nonexistent/fio");
    c
}

/// What a case must do.
enum Expect {
    /// Refused: exit 1, one `error:` line containing this.
    Refused(&'static str),
    /// Accepted: it fails (if at all) only at this later step, which every check precedes.
    PastChecks(&'static str),
    /// Succeeds.
    Ok,
}
use Expect::*;

// Nobody listens on port 1: a run that gets past its checks fails to connect.
const HOST: &str = "127.0.0.1:1";
const CONNECT: Expect = PastChecks("cannot connect to 127.0.0.1:1");

fn check(home: &Path, args: &[String], expect: &Expect) -> Result<(), String> {
    let out = cqlbench(home).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if out.status.code() == Some(101) || stderr.contains("panicked") {
        return Err(format!("{args:?} panicked:\n{stderr}"));
    }
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    match expect {
        Ok if out.status.success() => Result::Ok(()),
        Ok => Err(format!("{args:?} failed:\n{stderr}")),
        Refused(_) | PastChecks(_) if out.status.success() => Err(format!("{args:?} succeeded")),
        Refused(needle) | PastChecks(needle) => {
            if errors.len() != 1 {
                return Err(format!("{args:?}: one error line expected:\n{stderr}"));
            }
            if !errors[0].contains(needle) {
                return Err(format!("{args:?}: '{needle}' not in: {}", errors[0]));
            }
            Result::Ok(())
        }
    }
}

fn run_catalogue(cases: &[(Vec<String>, Expect)]) -> usize {
    let home = tempfile::tempdir().unwrap();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(args, expect)| check(home.path(), args, expect).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(
        !home.path().join("clusters").exists(),
        "no case created a cluster"
    );
    eprintln!("{} cases, all as expected", cases.len());
    cases.len()
}

fn args(command: &[&str], extra: &[&str]) -> Vec<String> {
    command.iter().chain(extra).map(|s| s.to_string()).collect()
}

#[test]
fn run_flags() {
    let run = ["run", "keyvalue", "--hosts", HOST];
    let mut cases: Vec<(Vec<String>, Expect)> = Vec::new();
    let mut case = |extra: &[&str], e: Expect| cases.push((args(&run, extra), e));
    // Valid values of every flag.
    for extra in [
        &[][..],
        &["--dc", "datacenter1"],
        &["--tag", "baseline"],
        &["--tag", "a,b.c", "--tag", "v4_1-3"],
        &["--keyspace", "ks_1"],
        &["--rf", "3"],
        &["--rf", "dc1:3,dc2:1"],
        &["--drop"],
        &[
            "--table-options",
            "compaction = {'class': 'LeveledCompactionStrategy'}",
        ],
        &["--rows", "1"],
        &["--partsize", "5"],
        &["--value-size", "0"],
        &["--columns", "3"],
        &["--ratio", "write=1,read=3"],
        &["--consistency", "local_quorum"],
        &["--write-cl", "ANY", "--read-cl", "all"],
        &["--concurrency", "1"],
        &["--rate", "2k"],
        &["--rate", "0.5"],
        &["--max-in-flight", "1"],
        &["--rate", "2k", "--send-window", "1ms"],
        &["--rate", "100", "--send-window", "0.25ms"],
        &["--rate", "100", "--send-window", "100ms"],
        &["--send-window", "0s"],
        &["--duration", "1h"],
        &["--ops", "1"],
        &["--warmup", "500ms", "--duration", "1s"],
        &["--threads", "1"],
        &["--timeout", "10ms"],
        &["--max-errors", "5"],
        &["--cycles", "0..100"],
        &["--skip-rampup"],
        &["--rampup-concurrency", "1"],
        &["--metrics-interval", "100ms"],
        &["--no-metrics"],
        &["--prometheus", "10.0.0.1:9500,10.0.0.2:9500"],
        &["--env", "a.b_c-1"],
        &["-q"],
        &["--metrics-listen", "127.0.0.1:0"],
        &["--metrics-listen", "[::1]:0"],
        &["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "1s"],
        &[
            "--address-map",
            "10.0.0.5=203.0.113.7:30042,[fd00::5]=[2001:db8::7]",
        ],
        &[
            "--address-map",
            "10.0.0.5:9042=203.0.113.7",
            "--address-map",
            "10.0.0.6=203.0.113.8",
        ],
        &["--require-all-nodes"],
        &["--duration", "30s", "--fault", "10s:hook:true"],
    ] {
        case(extra, CONNECT);
    }
    // Bad values.
    for (extra, needle) in [
        (&["--dc", "a,b"][..], "give one data centre name"),
        (&["--metrics-listen", "9500"], "--metrics-listen"),
        (&["--metrics-listen", "host:9500"], "--metrics-listen"),
        (
            &["--metrics-linger", "1s"],
            "required arguments were not provided",
        ),
        (
            &[
                "--metrics-listen",
                "127.0.0.1:0",
                "--metrics-linger",
                "soon",
            ],
            "--metrics-linger",
        ),
        (&["--tag", "a b"], "invalid tag 'a b'"),
        (&["--tag", ".hidden"], "invalid tag '.hidden'"),
        (&["--tag", ""], "invalid tag ''"),
        (&["--keyspace", "bad name!"], "keyspace"),
        (&["--keyspace", "1abc"], "keyspace"),
        (&["--rf", "0"], "at least one replica"),
        (&["--rf", "dc1:3,dc1:2"], "given twice"),
        (&["--rf", "dc1:x"], "whole number"),
        (&["--rows", "0"], "--rows"),
        (&["--rows", "-1"], "-1"),
        (&["--partsize", "0"], "--partsize"),
        (&["--columns", "0"], "--columns"),
        (&["--ratio", "write=1,scan=2"], "no range operation"),
        (&["--ratio", "write=1,bake=2"], "bake"),
        (&["--ratio", "range=1"], "no range operation"),
        (&["--consistency", "MOST"], "MOST"),
        (&["--concurrency", "0"], "--concurrency"),
        (
            &["--concurrency", "5", "--rate", "100"],
            "cannot be used with",
        ),
        (&["--rate", "-1"], "'-1'"),
        (&["--rate", "0"], "'0'"),
        (&["--rate", "inf"], "'inf'"),
        (&["--rate", "nan"], "'nan'"),
        (&["--rate", "fast"], "'fast'"),
        (&["--rate", "35%"], "--of"),
        (&["--rate", "0%", "--of", "x.json"], "above 0%"),
        (&["--of", "x.json"], "required arguments"),
        (&["--max-in-flight", "0"], "--max-in-flight"),
        (
            &["--send-window", "1ms"],
            "--send-window batches the sends of a fixed rate",
        ),
        (
            &["--concurrency", "8", "--send-window", "1ms"],
            "--send-window",
        ),
        (
            &["--rate", "100", "--send-window", "101ms"],
            "--send-window 101ms: at most 100ms",
        ),
        (&["--rate", "100", "--send-window", "soon"], "soon"),
        (&["--rate", "100", "--send-window", "-1ms"], "'-1'"),
        (&["--duration", "99999999999999999999h"], "duration"),
        (&["--duration", "soon"], "soon"),
        (&["--duration", "5s", "--ops", "5"], "cannot be used with"),
        (&["--ops", "0"], "--ops"),
        (&["--warmup", "60s"], "--warmup"),
        (&["--threads", "0"], "--threads"),
        (&["--timeout", "1ms"], "--timeout"),
        (&["--cycles", "5..1"], "cycles"),
        (&["--metrics-interval", "10ms"], "--metrics-interval"),
        (&["--env", "a/../../x"], "a/../../x"),
        (&["--env", ""], "env"),
        (&["--prometheus", "nohost"], "metrics endpoint"),
        (
            &["--prometheus", "a:1", "--no-metrics"],
            "cannot be used with",
        ),
        (
            &["--credentials-file", "/nonexistent/creds"],
            "credentials file",
        ),
    ] {
        case(extra, Refused(needle));
    }
    // Where the run goes.
    cases.push((
        args(&["run", "keyvalue"], &[]),
        Refused("give --cluster NAME"),
    ));
    cases.push((
        args(&["run", "keyvalue", "--cluster", "nosuch"], &[]),
        Refused("nosuch"),
    ));
    cases.push((
        args(&["run", "keyvalue", "--hosts", "127.0.0.1:99999"], &[]),
        Refused("the port must be a number from 1 to 65535"),
    ));
    cases.push((
        args(&["run", "nosuch", "--hosts", HOST], &[]),
        Refused("nosuch"),
    ));
    let n = run_catalogue(&cases);
    assert!(n > 60, "{n}");
}

#[test]
fn throughput_latency_capacity_and_fill_flags() {
    let base = ["--hosts", HOST];
    let mut cases: Vec<(Vec<String>, Expect)> = Vec::new();
    let mut case = |cmd: &[&str], extra: &[&str], e: Expect| {
        let mut a = args(cmd, &base);
        a.extend(extra.iter().map(|s| s.to_string()));
        cases.push((a, e));
    };
    let tp = ["throughput", "tabular"];
    case(&tp, &[], CONNECT);
    case(&tp, &["--concurrency", "300"], CONNECT);
    case(
        &tp,
        &["--rate", "100"],
        Refused("throughput runs unthrottled"),
    );
    let lat = ["latency", "tabular"];
    case(&lat, &["--rate", "100"], CONNECT);
    case(&lat, &[], Refused("latency runs at a fixed rate"));
    case(
        &lat,
        &["--rate", "35%", "--of", "/nonexistent.json"],
        Refused("/nonexistent.json"),
    );
    let cap = ["capacity", "keyvalue"];
    for extra in [
        &[][..],
        &["--start-rate", "2k"],
        &["--factor", "1.2"],
        &["--increment", "500"],
        &["--step", "30s", "--step-warmup", "5s"],
        &["--max-steps", "3"],
        &["--refine", "2"],
        &["--settle-pending", "2", "--settle-timeout", "1m"],
        &["--settle-cpu", "50%"],
        &["--settle-cpu", "0.2"],
        &["--settle-cpu", "off"],
        &[
            "--max-latency",
            "read:p50:20ms",
            "--max-latency",
            "all:p99.9:1s",
        ],
        &["--max-pending", "off"],
        &["--pending-after", "0s"],
        &["--max-node-cpu", "0.8"],
        &["--max-error-rate", "off"],
        &["--min-achieved", "95%"],
        &["--send-window", "1ms"],
    ] {
        case(&cap, extra, CONNECT);
    }
    for (extra, needle) in [
        (&["--start-rate", "0"][..], "'0'"),
        (&["--start-rate", "-5"], "'-5'"),
        (&["--factor", "1"], "--factor"),
        (&["--factor", "nan"], "--factor"),
        (
            &["--factor", "2", "--increment", "5"],
            "cannot be used with",
        ),
        (&["--increment", "0"], "'0'"),
        (&["--step", "5s", "--step-warmup", "5s"], "--step-warmup"),
        (&["--max-steps", "0"], "--max-steps"),
        (&["--settle-pending", "-1"], "-1"),
        (&["--settle-pending", "nan"], "--settle-pending"),
        (&["--settle-cpu", "30"], "--settle-cpu"),
        (&["--settle-cpu", "busy"], "--settle-cpu"),
        (&["--max-latency", "read:p50"], "latency bound"),
        (&["--max-latency", "read:p0:1ms"], "percentile"),
        (&["--max-latency", "read:p50:0ms"], "above zero"),
        (&["--max-latency", "scan2:p50:1ms"], "scan2"),
        (&["--max-pending", "lots"], "--max-pending"),
        (&["--max-node-cpu", "90"], "--max-node-cpu"),
        (&["--max-error-rate=-1%"], "--max-error-rate"),
        (&["--min-achieved", "x"], "--min-achieved"),
        (&["--rate", "100"], "capacity sets each step's rate"),
        (&["--duration", "10s"], "--step each"),
        (&["--resume"], "required arguments"),
    ] {
        case(&cap, extra, Refused(needle));
    }
    let fill = ["fill", "stress"];
    case(
        &fill,
        &["--bytes", "10M"],
        // No endpoint: the node's virtual tables, through CQL, which does not answer here.
        CONNECT,
    );
    // Past its checks a fill reads the nodes' load (from an endpoint that answers), then
    // connects; an endpoint that does not answer is refused first.
    let load = common::empty_node_load_endpoint();
    case(&fill, &["--bytes", "10M", "--prometheus", &load], CONNECT);
    case(
        &fill,
        &[
            "--times-ram",
            "2",
            "--node-ram",
            "1G",
            "--prometheus",
            &load,
        ],
        CONNECT,
    );
    case(
        &fill,
        &["--bytes", "10M", "--prometheus", "127.0.0.1:1"],
        Refused("fill: no metrics endpoint answered"),
    );
    for (extra, needle) in [
        (&[][..], "required arguments"),
        (&["--bytes", "0M"], "0M"),
        (&["--times-ram", "0", "--node-ram", "1G"], "--times-ram"),
        (&["--times-ram", "2"], "--node-ram"),
        (&["--bytes", "1M", "--ratio", "write=1"], "fill writes only"),
        // --ops bounds a fill: past its checks, to the metrics it needs.
        (
            &["--bytes", "1M", "--ops", "5"],
            "cannot connect to 127.0.0.1:1",
        ),
        (
            &["--bytes", "1M", "--ops", "5", "--duration", "1m"],
            "cannot be used with",
        ),
        (&["--bytes", "1M", "--compaction-timeout", "x"], "'x'"),
    ] {
        case(&fill, extra, Refused(needle));
    }
    let n = run_catalogue(&cases);
    assert!(n > 40, "{n}");
}

#[test]
fn cluster_create_flags() {
    // An impossible heap makes every create fail at the plan, after every flag was parsed and
    // checked, and before anything is fetched: valid values of the other flags show as that
    // error.
    let create = ["cluster", "create", "c1", "--heap", "999999G"];
    let mut cases: Vec<(Vec<String>, Expect)> = Vec::new();
    let mut case = |extra: &[&str], e: Expect| cases.push((args(&create, extra), e));
    let past = PastChecks("heap");
    for extra in [
        &[][..],
        &["-n", "1"],
        &["--nodes", "5", "--racks", "5"],
        &["--dcs", "dc1:2,dc2:1"],
        &["--dcs", "dc1:3:3,dc2:2"],
        &["--version", "5.0"],
        &["--version", "latest"],
        &["--new-gen", "100M"],
        &["--gc", "zgc"],
        &["--gc", "Parallel"],
        &["--jvm-arg=-XX:+AlwaysPreTouch"],
        &["--cpus-per-node", "1"],
        &["--host-cpus", "1"],
        &["--vnodes", "16"],
        &["--host-cpus", "1", "--cpus-per-node", "1"],
        &["--address-prefix", "127.0.1."],
        &["--netns"],
        &[
            "--netns",
            "--netns-clients",
            "3",
            "--netns-outside",
            "0",
            "--netns-link-mbit",
            "100",
        ],
        &[
            "--set",
            "concurrent_writes=64",
            "--set",
            "compaction_throughput=8MiB/s",
        ],
        &["--start"],
    ] {
        case(extra, past_clone(&past));
    }
    for (extra, needle) in [
        (&["--nodes", "0"][..], "--nodes"),
        (&["--racks", "4", "--nodes", "3"], "--racks"),
        (&["--dcs", "dc1:0"], "dc1:0"),
        (&["--dcs", "dc1:2,dc1:1"], "dc1"),
        (&["--dcs", ""], "data centre"),
        (&["--gc", "zgc2"], "zgc2"),
        (&["--new-gen", "lots"], "lots"),
        (&["--cpus-per-node", "0"], "--cpus-per-node"),
        (&["--host-cpus", "0"], "--host-cpus 0"),
        (&["--vnodes", "0"], "--vnodes 0"),
        (&["--vnodes", "300"], "--vnodes 300"),
        (&["--vnodes", "many"], "many"),
        (&["--host-cpus", "4096"], "--host-cpus 4096"),
        (&["--host-cpus", "one"], "one"),
        (
            &["--host-cpus", "1", "--cpus-per-node", "2"],
            "--cpus-per-node 2",
        ),
        (&["--set", "num_tokens=16"], "num_tokens"),
        (&["--set", "=5"], "cassandra.yaml key"),
        (&["--set", "novalue"], "KEY=VALUE"),
        (&["--cassandra-home", "/nonexistent"], "/nonexistent"),
        (&["--netns", "--netns-clients", "9"], "--netns-clients 9"),
        (&["--netns-outside", "1"], "required arguments"),
        (&["--netns", "--netns-link-mbit", "-1"], "-1"),
    ] {
        case(extra, Refused(needle));
    }
    cases.push((
        args(&["cluster", "create", "bad name"], &[]),
        Refused("bad name"),
    ));
    for sub in ["start", "stop", "status", "destroy", "show"] {
        cases.push((args(&["cluster", sub, "nosuch"], &[]), Refused("nosuch")));
    }
    let n = run_catalogue(&cases);
    assert!(n > 30, "{n}");
}

fn past_clone(e: &Expect) -> Expect {
    match e {
        PastChecks(s) => PastChecks(s),
        Refused(s) => Refused(s),
        Ok => Ok,
    }
}

#[test]
fn probe_report_compare_cost_and_plan_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let run = dir.path().join("run.json");
    cqlbench::result::fixture::run("lab", &cqlbench::result::fixture::RunShape::default())
        .write(&run)
        .unwrap();
    let run = run.to_str().unwrap();
    let no_fio = PastChecks("fio not found");
    let mut cases: Vec<(Vec<String>, Expect)> = Vec::new();
    for extra in [
        &["--dir", d][..],
        &["--dir", d, "--quick"],
        &["--dir", d, "--profiles", "lcs,stcs", "--skip-cpu"],
        &["--dir", d, "--runtime-s", "3600", "--size-mib", "1"],
        &["--dir", d, "--env", "lab", "--out", "/tmp/x.json"],
    ] {
        cases.push((args(&["probe"], extra), past_clone(&no_fio)));
    }
    for (extra, needle) in [
        (&["--profiles", "lcs,nosuch"][..], "nosuch"),
        (&["--runtime-s", "0"], "0"),
        (&["--runtime-s", "3601"], "3601"),
        (&["--size-mib", "0"], "0"),
        (
            &["--dir", file.to_str().unwrap()],
            "is a file, not a directory",
        ),
        (&["--dir", "/nonexistent/dir"], "does not exist"),
        (&["--dir", d, "--cluster", "c"], "cannot be used with"),
        (&["--env", "a b"], "a b"),
        (&["--cluster", "nosuch"], "nosuch"),
    ] {
        cases.push((args(&["probe"], extra), Refused(needle)));
    }
    // report and compare
    cases.push((args(&["report", run], &[]), Ok));
    cases.push((args(&["report", run, "--markdown"], &[]), Ok));
    cases.push((args(&["report", run, "--csv"], &[]), Ok));
    cases.push((
        args(
            &["report", run, "--deployment", "lab=r5.2xlarge,3,gp3:4TB,1y"],
            &[],
        ),
        Ok,
    ));
    cases.push((
        args(&["report", run, "--deployment", "lab=r5.2xlarge"], &[]),
        Refused("node count"),
    ));
    cases.push((
        args(&["report", run, "--deployment", "lab=nosuch,3"], &[]),
        Refused("nosuch"),
    ));
    cases.push((
        args(&["report", run, "--markdown", "--csv"], &[]),
        Refused("cannot be used with"),
    ));
    cases.push((
        args(&["report", file.to_str().unwrap()], &[]),
        Refused("not JSON"),
    ));
    cases.push((args(&["compare", run, run], &[]), Ok));
    cases.push((
        args(&["compare", run, "/nonexistent.json"], &[]),
        Refused("/nonexistent.json"),
    ));
    // --fail-if: every form of rule, held by a run compared with itself.
    for rule in [
        "p99 > +10%",
        "p50>5%",
        "throughput < -5%",
        "throughput < 0%",
        "read.p99 > +0%",
        "write.p50 > +2.5%",
    ] {
        cases.push((args(&["compare", run, run, "--fail-if", rule], &[]), Ok));
    }
    for (rule, needle) in [
        ("p95 > +10%", "METRIC one of"),
        ("p99 = 10%", "write METRIC > +N%"),
        ("p99 > 10", "a percentage"),
        ("p99 > x%", "not a percentage"),
        ("p99 > -10%", "'>' takes a rise"),
        ("throughput < 5%", "'<' takes a fall"),
        ("nosuch.p99 > +10%", "no compared metric matches"),
    ] {
        cases.push((
            args(&["compare", run, run, "--fail-if", rule], &[]),
            Refused(needle),
        ));
    }
    // A set: a directory or a glob of run results.
    let set = dir.path().join("set");
    std::fs::create_dir(&set).unwrap();
    for (i, name) in ["r1.json", "r2.json"].iter().enumerate() {
        let shape = cqlbench::result::fixture::RunShape {
            seed: i as u64 + 1,
            ..Default::default()
        };
        cqlbench::result::fixture::run("lab", &shape)
            .write(&set.join(name))
            .unwrap();
    }
    let set_s = set.to_str().unwrap();
    let glob = format!("{set_s}/r*.json");
    cases.push((args(&["compare", set_s, set_s], &[]), Ok));
    cases.push((args(&["compare", set_s, &glob], &[]), Ok));
    cases.push((
        args(&["compare", run, set_s], &[]),
        Refused("A holds 1 run(s) and B 2"),
    ));
    // A directory whose JSON files are no run results.
    let none = dir.path().join("none");
    std::fs::create_dir(&none).unwrap();
    std::fs::write(none.join("x.json"), "{}").unwrap();
    cases.push((
        args(&["compare", none.to_str().unwrap(), set_s], &[]),
        Refused("A: no run or capacity results in"),
    ));
    cases.push((
        args(&["compare", &format!("{set_s}/x*.json"), set_s], &[]),
        Refused("A: no run or capacity results in"),
    ));
    cases.push((
        args(&["compare", &format!("{set_s}/[.json"), set_s], &[]),
        Refused("not a usable pattern"),
    ));
    cases.push((
        args(&["compare", "id:x", set_s], &[]),
        Refused("ids are numbers"),
    ));
    cases.push((args(&["report", "id:1,x"], &[]), Refused("ids are numbers")));
    cases.push((
        args(&["compare", "tag:nosuch", set_s], &[]),
        Refused("no run in the runs index carries tag 'nosuch'"),
    ));
    cases.push((
        args(&["compare", "tag:a b", set_s], &[]),
        Refused("invalid tag 'a b'"),
    ));
    cases.push((
        args(&["report", "id:424242"], &[]),
        Refused("no result with id 424242"),
    ));
    cases.push((
        args(&["compare", "id:999", set_s], &[]),
        Refused("no result with id 999"),
    ));
    // runs: every filter, valid and not.
    for extra in [
        &[][..],
        &["--kind", "run"],
        &["--kind", "capacity", "--env", "lab"],
        &["--workload", "keyvalue", "--status", "completed"],
        &["--since", "2026-11-01", "--last", "5"],
        &["--import", set_s],
        &["--tag", "baseline"],
    ] {
        cases.push((args(&["runs"], extra), Ok));
    }
    for (extra, needle) in [
        (&["--kind", "nosuch"][..], "nosuch"),
        (&["--since", "2026-13-01"], "not a day as YYYY-MM-DD"),
        (&["--since", "yesterday"], "not a day as YYYY-MM-DD"),
        (&["--last", "0"], "0"),
        (&["--last", "-1"], "-1"),
        (&["--import", "/nonexistent/dir"], "not a directory"),
        (&["--import", run], "not a directory"),
        (&["--tag", "a/b"], "invalid tag 'a/b'"),
    ] {
        cases.push((args(&["runs"], extra), Refused(needle)));
    }
    // cost and plan
    for extra in [
        &["--instance", "r5.2xlarge"][..],
        &[
            "--instance",
            "r5.2xlarge",
            "--nodes",
            "6",
            "--disk",
            "gp3:1TB",
        ],
        &[
            "--instance",
            "r5.2xlarge",
            "--reserved",
            "3y",
            "--ops",
            "45k",
        ],
        &["--instance", "r5.2xlarge", "--json"],
    ] {
        cases.push((args(&["cost"], extra), Ok));
    }
    for (extra, needle) in [
        (&["--instance", "nosuch"][..], "nosuch"),
        (
            &["--instance", "r5.2xlarge", "--nodes", "0"],
            "at least one node",
        ),
        (
            &["--instance", "r5.2xlarge", "--disk", "gp2-3400"],
            "gp2-3400",
        ),
        (&["--instance", "r5.2xlarge", "--ops", "0"], "--ops"),
        (&["--instance", "r5.2xlarge", "--reserved", "2y"], "2y"),
    ] {
        cases.push((args(&["cost"], extra), Refused(needle)));
    }
    for extra in [
        &["--ops", "10000", "--data", "1TB"][..],
        &[
            "--ops",
            "10k",
            "--data",
            "500GB",
            "--rf",
            "5",
            "--compaction",
            "lcs",
        ],
        &[
            "--ops",
            "10000",
            "--data",
            "1TB",
            "--provider",
            "gcp",
            "--top",
            "3",
        ],
    ] {
        cases.push((args(&["plan"], extra), Ok));
    }
    for (extra, needle) in [
        (&["--ops", "inf", "--data", "1TB"][..], "--ops"),
        (&["--ops", "1000", "--data", "lots"], "lots"),
        (&["--ops", "1000", "--data", "1TB", "--rf", "0"], "--rf"),
        (
            &["--ops", "1000", "--data", "1TB", "--disks", "nosuch"],
            "nosuch",
        ),
        (
            &["--ops", "1000", "--data", "1TB", "--capacity", "cap.json"],
            "INSTANCE[:NODES]=",
        ),
    ] {
        cases.push((args(&["plan"], extra), Refused(needle)));
    }
    let n = run_catalogue(&cases);
    assert!(n > 35, "{n}");
}

/// Inputs that were accepted and did the wrong thing: each now refused in one line.
#[test]
fn inputs_that_used_to_slip_through() {
    let run = ["run", "keyvalue", "--hosts", HOST];
    let cases: Vec<(Vec<String>, Expect)> = vec![
        (
            args(
                &run,
                &[
                    "--node-exporter",
                    "node1=10.0.0.5:9100",
                    "--node-exporter",
                    "node1=10.0.0.6:9100",
                ],
            ),
            Refused("node 'node1' is given twice"),
        ),
        (
            args(&run, &["--metrics-listen", "127.0.0.1:70000"]),
            Refused("port 70000 is above 65535"),
        ),
        (
            args(&run, &["--metrics-listen", "localhost:9500"]),
            Refused("'localhost' is not an IP address"),
        ),
        (
            args(&run, &["--metrics-listen", "127.0.0.1"]),
            Refused("no port"),
        ),
        (
            args(&["runs", "--status", "compelted"], &[]),
            Refused("'compelted' is not a status: give one of completed, running"),
        ),
        (args(&["runs", "--status", "completed"], &[]), Ok),
        (
            args(
                &[
                    "cluster",
                    "create",
                    "c1",
                    "--heap",
                    "999999G",
                    "--version",
                    "5.0.x",
                ],
                &[],
            ),
            Refused("Cassandra '5.0.x' is not a version"),
        ),
        (
            args(
                &[
                    "scenario",
                    "scenarios/ref001-capacity-per-node.yaml",
                    "--env",
                    "a/b",
                ],
                &[],
            ),
            Refused("invalid environment name 'a/b'"),
        ),
    ];
    let n = run_catalogue(&cases);
    assert_eq!(n, cases.len());
}
