//! A cluster across a network, through the CLI: `cluster create --netns` puts each of 3 real
//! nodes in a network namespace of its own behind a gateway; a run from a loader namespace
//! reaches all three; from outside, through the gateway's NAT, a run without an address map
//! reaches none and says so, one with node 1's port-forward mapped reaches 1 of 3 and warns
//! (or, with --require-all-nodes, refuses), one with every node mapped reaches 3 of 3; node 2
//! partitioned for 10 s during an RF 3 QUORUM run loses no acknowledged write; one capacity
//! search by two shards in two namespaces ends in one verdict; destroying the cluster leaves
//! none of the lab's namespaces (and so none of its links, addresses or rules) behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::daemon::{Reap, keygen};
use common::*;
use cqlbench::result::capacity::{CapacityResult, CapacityStatus};
use serde_json::Value;

fn cqlbench(dirs: &Dirs, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
    c.args(args)
        .env("CQLBENCH_CLUSTERS_DIR", &dirs.clusters)
        .env("CQLBENCH_HOME", &dirs.home)
        .stdin(Stdio::null());
    c
}

struct Dirs {
    home: PathBuf,
    clusters: PathBuf,
}

fn ok(mut c: Command) -> String {
    let out = c.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{c:?} failed:\n{text}");
    text
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Takes the lab down even when the test fails: the cluster (its nodes and namespaces) by the
/// CLI, then any namespace of the lab still there.
struct LabGuard<'a> {
    dirs: &'a Dirs,
    name: String,
}

impl LabGuard<'_> {
    fn namespaces(&self) -> Vec<String> {
        let mut ns = vec![format!("cqb-{}", self.name)];
        for suffix in ["n1", "n2", "n3", "c1", "c2", "x1"] {
            ns.push(format!("cqb-{}-{suffix}", self.name));
        }
        ns
    }

    fn present(&self) -> Vec<String> {
        self.namespaces()
            .into_iter()
            .filter(|n| Path::new("/run/netns").join(n).exists())
            .collect()
    }
}

impl Drop for LabGuard<'_> {
    fn drop(&mut self) {
        let _ = cqlbench(self.dirs, &["cluster", "destroy", &self.name]).output();
        for ns in self.present() {
            let _ = Command::new("ip").args(["netns", "del", &ns]).status();
        }
    }
}

/// The network namespace (device, inode) of a process or a named namespace.
fn ns_id(path: &str) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (m.dev(), m.ino())
}

fn summary(r: &Value) -> (f64, u64) {
    let main = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "main")
        .expect("main phase");
    let s = &main["summary"];
    (
        s["ops_per_s"].as_f64().unwrap(),
        s["errors"].as_u64().unwrap_or(0),
    )
}

#[test]
fn a_cluster_across_a_network_lab() {
    let _one = cluster_lock();
    let tmp = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        home: tmp.path().join("home"),
        clusters: tmp.path().join("clusters"),
    };
    // Unique on this machine: namespaces are global.
    let name = format!("lab{}", std::process::id());
    let guard = LabGuard {
        dirs: &dirs,
        name: name.clone(),
    };
    let run = |args: &[&str]| cqlbench(&dirs, args);

    let created = ok(run(&[
        "cluster",
        "create",
        &name,
        "--netns",
        "-n",
        "3",
        "--heap",
        "256M",
        "--start",
        "--netns-clients",
        "2",
        "--netns-outside",
        "1",
        "--netns-link-mbit",
        "1000",
    ]));
    assert!(created.contains("up (UN)"), "{created}");
    assert!(
        created.contains("198.19.0.1:9042 forwards to node1"),
        "{created}"
    );
    assert_eq!(guard.present(), guard.namespaces(), "{created}");
    assert!(
        created.contains("each node's link: 1000 Mbit/s"),
        "{created}"
    );
    let qdisc = Command::new("tc")
        .args(["-n", &format!("cqb-{name}"), "qdisc", "show", "dev", "n1"])
        .output()
        .unwrap();
    let qdisc = String::from_utf8_lossy(&qdisc.stdout);
    assert!(
        qdisc.contains("tbf"),
        "node 1's link is not limited: {qdisc}"
    );

    // Each node in its own namespace, on its own address.
    let status = ok(run(&["cluster", "status", &name]));
    for i in 1..=3 {
        let line = status
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("node{i} ")))
            .unwrap_or_else(|| panic!("node{i} not in:\n{status}"));
        assert!(line.contains(&format!("198.18.0.1{i}")), "{line}");
        assert!(line.contains(" UN "), "{line}");
    }
    let show: Value = serde_json::from_str(&ok(run(&["cluster", "show", &name]))).unwrap();
    let state = cqlbench::cluster::Cluster::open(&dirs.clusters, &name).unwrap();
    for n in state.nodes() {
        let pid = state.pid(n).expect("node running");
        assert_eq!(
            ns_id(&format!("/proc/{pid}/ns/net")),
            ns_id(&format!("/run/netns/cqb-{name}-n{}", n.index)),
            "{} is not in its namespace",
            n.name
        );
        assert_ne!(
            ns_id(&format!("/proc/{pid}/ns/net")),
            ns_id("/proc/self/ns/net")
        );
    }
    assert!(show["spec"]["lab"].is_object(), "{show}");

    // From a namespace that is not the lab's: refused before anything is sent.
    let other = format!("cqbt-other-{}", std::process::id());
    assert!(
        Command::new("ip")
            .args(["netns", "add", &other])
            .status()
            .unwrap()
            .success()
    );
    let args = [
        "run",
        "keyvalue",
        "--cluster",
        &name,
        "--netns",
        &other,
        "--duration",
        "2s",
    ];
    let out = run(&args).output().unwrap();
    let _ = Command::new("ip").args(["netns", "del", &other]).status();
    refused_in_one_line(
        &out,
        &args,
        &["is a network lab", &format!("--netns cqb-{name}-c1")],
    );

    // From a loader namespace inside: every node reached, no error.
    let inside = tmp.path().join("inside.json");
    let text = ok(run(&[
        "run",
        "keyvalue",
        "--cluster",
        &name,
        "--rf",
        "3",
        "--rows",
        "1000",
        "--rate",
        "200",
        "--duration",
        "5s",
        "--out",
        inside.to_str().unwrap(),
    ]));
    assert!(text.contains("connected to 3 of 3 nodes in dc1"), "{text}");
    let r = json(&inside);
    assert_eq!(r["target"]["netns"], format!("cqb-{name}-c1"));
    assert_eq!(summary(&r).1, 0, "errors inside the lab:\n{text}");

    // From outside, through the gateway: the nodes' own addresses are out of reach.
    let outside = format!("cqb-{name}-x1");
    let args = [
        "run",
        "keyvalue",
        "--netns",
        &outside,
        "--hosts",
        "198.19.0.1",
        "--rf",
        "3",
        "--rows",
        "1000",
        "--skip-rampup",
        "--rate",
        "200",
        "--duration",
        "3s",
    ];
    let out = run(&args).output().unwrap();
    refused_in_one_line(&out, &args, &["connected to 0 of 3 nodes", "--address-map"]);

    // Node 1's port-forward mapped: one coordinator of three, warned about and recorded.
    let one = tmp.path().join("one.json");
    let mut args_one: Vec<&str> = args.to_vec();
    args_one.extend([
        "--address-map",
        "198.18.0.11=198.19.0.1",
        "--out",
        one.to_str().unwrap(),
    ]);
    let text = ok(run(&args_one));
    assert!(
        text.contains("connected to 1 of 3 nodes in dc1 (unreachable: 198.18.0.12, 198.18.0.13)"),
        "{text}"
    );
    assert!(
        text.contains("the client reached 1 of the 3 nodes"),
        "{text}"
    );
    let r = json(&one);
    assert_eq!(
        r["target"]["reach"]["connected"],
        serde_json::json!(["198.18.0.11"])
    );
    assert!(
        r["warnings"].to_string().contains("nodes_unreachable"),
        "{}",
        r["warnings"]
    );
    let mut strict = args_one.clone();
    strict.push("--require-all-nodes");
    let out = run(&strict).output().unwrap();
    refused_in_one_line(
        &out,
        &strict,
        &["--require-all-nodes", "connected to 1 of 3", "198.18.0.12"],
    );

    // Every node mapped to its NAT'd address: all three reached from outside.
    let all = tmp.path().join("all.json");
    let map = "198.18.0.11=198.19.1.1,198.18.0.12=198.19.1.2,198.18.0.13=198.19.1.3";
    let text = ok(run(&[
        "run",
        "keyvalue",
        "--netns",
        &outside,
        "--hosts",
        "198.19.0.1",
        "--address-map",
        map,
        "--require-all-nodes",
        "--rf",
        "3",
        "--rows",
        "1000",
        "--skip-rampup",
        "--concurrency",
        "32",
        "--duration",
        "5s",
        "--out",
        all.to_str().unwrap(),
    ]));
    assert!(text.contains("connected to 3 of 3 nodes in dc1"), "{text}");
    let r = json(&all);
    assert_eq!(
        r["fingerprint"]["client"]["driver"]["address_map"]
            .as_array()
            .map(Vec::len),
        Some(3),
        "the map is recorded with the run"
    );
    assert!(summary(&r).0 > 0.0);

    probe_over_ssh_into_a_node_namespace(&run, tmp.path(), &name);
    partition_during_a_quorum_run(&run, tmp.path(), &name);
    capacity_by_shards_in_two_namespaces(&run, tmp.path(), &name);

    let text = ok(run(&["cluster", "destroy", &name]));
    assert!(text.contains("destroyed"), "{text}");
    assert_eq!(
        guard.present(),
        Vec::<String>::new(),
        "lab namespaces left behind"
    );
}

/// Node 2 cut off for 10 s of a 25 s RF 3 QUORUM run, then healed, and later the data centre
/// cut off from the loaders for 2 s: each fault and its undoing applied, and every
/// acknowledged write read back afterwards.
fn partition_during_a_quorum_run(run: &dyn Fn(&[&str]) -> Command, dir: &Path, name: &str) {
    let out = dir.join("partition.json");
    let text = ok(run(&[
        "run",
        "keyvalue",
        "--cluster",
        name,
        "--keyspace",
        "parted",
        "--rf",
        "3",
        "--consistency",
        "QUORUM",
        "--rows",
        "2000",
        "--rate",
        "200",
        "--duration",
        "25s",
        "--fault",
        "5s:partition:node2:10s",
        "--fault",
        "18s:isolate:dc1:2s",
        "--out",
        out.to_str().unwrap(),
    ]));
    let r = json(&out);
    let events = r["events"].as_array().expect("fault events");
    let applied: Vec<(String, bool)> = events
        .iter()
        .map(|e| {
            (
                e["fault"]["action"].as_str().unwrap().to_string(),
                e["error"].is_null() && e["finished_s"].is_number(),
            )
        })
        .collect();
    assert_eq!(
        applied,
        [
            ("partition".to_string(), true),
            ("heal".to_string(), true),
            ("isolate".to_string(), true),
            ("rejoin".to_string(), true)
        ],
        "{text}"
    );
    // Healed: the node's link is up again.
    let link = Command::new("ip")
        .args(["-n", &format!("cqb-{name}"), "link", "show", "n2"])
        .output()
        .unwrap();
    let link = String::from_utf8_lossy(&link.stdout);
    assert!(link.contains("state UP"), "{link}");
    let (ops, errors) = summary(&r);
    println!("partition of node2 for 10 s: {ops:.0} ops/s, {errors} errors");
    let verified = ok(run(&["verify", out.to_str().unwrap()]));
    assert!(verified.contains(" 0 missing, 0 different"), "{verified}");
}

/// One capacity search run by two processes, each in its own loader namespace of the lab,
/// meeting through the cluster: one merged verdict, each shard's result saying where it ran.
fn capacity_by_shards_in_two_namespaces(run: &dyn Fn(&[&str]) -> Command, dir: &Path, name: &str) {
    let coordinator_out = dir.join("cap").join("cap.json");
    let follower_out = dir.join("cap-follower").join("cap.json");
    let search = |shard: &str, netns: String, out: &Path| -> Vec<String> {
        [
            "capacity",
            "keyvalue",
            "--cluster",
            name,
            // The partition run's keyspace and rows, there already (as the across-machines
            // search of tests/capacity_loaders_real.rs has its own): the follower meets the
            // coordinator through the cluster without racing its schema. A search whose
            // keyspace did not exist yet once timed out at the barrier in CI here (1 of 2
            // shards registered), not reproduced since.
            "--keyspace",
            "parted",
            "--rows",
            "2000",
            "--skip-rampup",
            "--shard",
            shard,
            "--netns",
            &netns,
            "--run-id",
            "lab-cap",
            "--barrier-timeout",
            "90s",
            "--start-rate",
            "100",
            "--factor",
            "1.5",
            "--max-steps",
            "2",
            "--step",
            "6s",
            "--step-warmup",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .chain(QUIET_CAPACITY)
        .map(|s| s.to_string())
        .collect()
    };
    let follower_args = search("1/2", format!("cqb-{name}-c2"), &follower_out);
    let args: Vec<&str> = follower_args.iter().map(String::as_str).collect();
    let follower = run(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let coordinator_args = search("0/2", format!("cqb-{name}-c1"), &coordinator_out);
    let args: Vec<&str> = coordinator_args.iter().map(String::as_str).collect();
    let coordinated = run(&args).output().unwrap();
    let text = String::from_utf8_lossy(&coordinated.stdout).to_string()
        + &String::from_utf8_lossy(&coordinated.stderr);
    let out: Output = follower.wait_with_output().unwrap();
    if !coordinated.status.success() {
        // Both sides' words, and the follower's step logs, to see which one did not meet.
        let logs: Vec<String> = std::fs::read_dir(dir.join("cap-follower"))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                    .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        panic!(
            "the coordinator failed:\n{text}\nthe follower ({}):\n{}{}\nits logs:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            logs.join("\n---\n")
        );
    }
    let followed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the follower failed:\n{followed}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = CapacityResult::read(&coordinator_out).unwrap();
    assert_eq!(r.status, CapacityStatus::Completed, "{text}");
    // Two steps on a quiet host; on a busy one (the loaders, three nodes and other work on
    // 2 CPUs) the first can end the search as loader-bound, which is a verdict too.
    assert!((1..=2).contains(&r.steps.len()), "{text}");
    assert!(r.verdict.is_some(), "{text}");
    for s in &r.steps {
        let l = s.loaders.as_ref().expect("the step's loaders");
        assert_eq!(l.shards.len(), 2, "{text}");
        for i in 0..2 {
            let shard = dir
                .join("cap")
                .join(format!("cap.step-{:02}.shard-{i}.json", s.index));
            let shard = json(&shard);
            assert_eq!(
                shard["target"]["netns"],
                format!("cqb-{name}-c{}", i + 1),
                "shard {i} of step {}",
                s.index
            );
        }
    }
    assert!(text.contains("capacity:"), "{text}");
}

/// An sshd inside node 1's namespace, listening on the node's own address only, and `probe
/// --ssh` to it from a loader namespace: the remote host measured over the lab's network.
fn probe_over_ssh_into_a_node_namespace(run: &dyn Fn(&[&str]) -> Command, dir: &Path, name: &str) {
    let server = dir.join("sshd");
    let data = dir.join("probe-data");
    for d in [&server, &data] {
        std::fs::create_dir_all(d).unwrap();
    }
    keygen(&server.join("host_key"));
    keygen(&server.join("client"));
    std::fs::copy(server.join("client.pub"), server.join("authorized_keys")).unwrap();
    std::fs::create_dir_all("/run/sshd").unwrap();
    let d = server.display();
    let config = server.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port 2222\nListenAddress 198.18.0.11\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nPubkeyAuthentication yes\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
             PermitRootLogin prohibit-password\nStrictModes no\nLogLevel ERROR\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(server.join("sshd.log")).unwrap();
    let sshd = Reap(
        Command::new("ip")
            .args(["netns", "exec", &format!("cqb-{name}-n1"), "/usr/sbin/sshd"])
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("sshd (apt-get install -y openssh-server)"),
    );
    let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    let out_json = dir.join("probe-n1.json");
    let dest = format!("{user}@198.18.0.11:2222");
    let identity = server.join("client").display().to_string();
    let known = format!(
        "UserKnownHostsFile={}",
        server.join("known_hosts").display()
    );
    let args = [
        "probe",
        "--netns",
        &format!("cqb-{name}-c1"),
        "--ssh",
        &dest,
        "--ssh-identity",
        &identity,
        "--ssh-option",
        &known,
        "--dir",
        data.to_str().unwrap(),
        "--profiles",
        "rand_read_4k",
        "--quick",
        "--runtime-s",
        "1",
        "--size-mib",
        "16",
        "--out",
        out_json.to_str().unwrap(),
    ];
    // sshd listens within a second; the probe's own connection attempts ride that out.
    let mut tries = 0;
    let text = loop {
        let out = run(&args).env_remove("CQLBENCH_FIO").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            break text;
        }
        tries += 1;
        let log = std::fs::read_to_string(server.join("sshd.log")).unwrap_or_default();
        assert!(tries < 10, "probe over ssh failed:\n{text}\nsshd:\n{log}");
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    assert!(text.contains("over ssh"), "{text}");
    let r = json(&out_json);
    assert_eq!(r["complete"], true, "{text}");
    assert_eq!(r["spec"]["remote"]["dest"]["host"], "198.18.0.11", "{r}");
    assert!(r["profiles"][0]["read_iops"].as_f64().unwrap() > 0.0, "{r}");
    drop(sshd);
}
