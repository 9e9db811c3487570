//! `cqlbench k8s run` on a real Kubernetes: the single-node lab of `scripts/k8s/lab.sh` (etcd,
//! kube-apiserver, controller manager, scheduler, containerd and kubelet built from Go modules
//! by `scripts/k8s/build.sh`), in a state directory of the test's own, with the loader image of
//! `scripts/image.sh` built from this test build's binary and imported into the lab's containerd.
//! The loaders reach a real local node on the host's loopback (`--host-network`).
//!
//! - A two-shard fixed-rate run as an Indexed Job: both pods complete, their results come back
//!   through their logs, merged at the target rate, and the Job is gone afterwards; the same run
//!   by `--loaders 2` on the host gives the same rate.
//! - A two-shard capacity search as a Job: one verdict, each step run by both pods.
//!
//! The lab's ports (16443, 12379, 20250 …) are fixed: it cannot run beside another lab.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use common::*;
use cqlbench::result::RunResult;
use cqlbench::result::capacity::{CapacityResult, CapacityStatus};

const IMAGE: &str = "localhost/cqlbench-loader:k8s-real";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The built binaries' folder: K8S_CACHE, or build.sh's default under the user's home (not the
/// test's CQLBENCH_HOME: the binaries are built once per machine).
fn k8s_cache() -> PathBuf {
    std::env::var_os("K8S_CACHE").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".local/share/cqlbench/cache/k8s/v1.34.3/bin")
        },
        PathBuf::from,
    )
}

fn script(name: &str, lab: &Path, args: &[&str]) -> Output {
    Command::new(repo().join("scripts").join(name))
        .args(args)
        .env("K8S_CACHE", k8s_cache())
        .env("K8S_LAB_DIR", lab)
        .output()
        .unwrap()
}

/// The lab, stopped (`lab.sh down`) however the test ends.
struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn up() -> Lab {
        let started = Instant::now();
        let build = script("k8s/build.sh", Path::new("/nonexistent"), &[]);
        assert!(build.status.success(), "build.sh:\n{}", text(&build));
        eprintln!(
            "k8s binaries ready after {:.0}s",
            started.elapsed().as_secs_f64()
        );
        let lab = Lab {
            dir: tempfile::tempdir().unwrap(),
        };
        let up = script("k8s/lab.sh", lab.dir.path(), &["up"]);
        assert!(up.status.success(), "lab.sh up:\n{}", text(&up));
        lab
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new(k8s_cache().join("kubectl"))
            .arg("--kubeconfig")
            .arg(self.kubeconfig())
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let down = script("k8s/lab.sh", self.dir.path(), &["down"]);
        if !down.status.success() {
            eprintln!("lab.sh down:\n{}", text(&down));
        }
    }
}

fn cqlbench(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(args)
        .env("CQLBENCH_HOME", home)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

fn ok(home: &Path, args: &[&str]) -> String {
    let out = cqlbench(home, args);
    assert!(out.status.success(), "{args:?}:\n{}", text(&out));
    text(&out)
}

#[test]
fn loaders_run_as_an_indexed_job_on_a_real_kubernetes() {
    let lab = Lab::up();
    let work = tempfile::tempdir().unwrap();
    let image = work.path().join("loader.oci.tar");
    let built = Command::new(repo().join("scripts/image.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_cqlbench"), "--name", IMAGE])
        .arg("--out")
        .arg(&image)
        .output()
        .unwrap();
    assert!(built.status.success(), "image.sh:\n{}", text(&built));
    let load = script(
        "k8s/lab.sh",
        lab.dir.path(),
        &["load", image.to_str().unwrap()],
    );
    assert!(load.status.success(), "lab.sh load:\n{}", text(&load));

    let tc = TestCluster::create(spec("k8sreal", "dc1:1"));
    tc.start();
    let home = work.path().join("home");
    let kubeconfig = lab.kubeconfig();
    let job = |run_id: &str, out: &Path, run: &[&str]| {
        let mut args = vec![
            "k8s",
            "run",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--shards",
            "2",
            "--image",
            IMAGE,
            "--host-network",
            "--timeout",
            "5m",
            "--run-id",
            run_id,
            "--out",
            out.to_str().unwrap(),
        ];
        if !run.contains(&"--") {
            args.push("--");
        }
        args.extend(run);
        ok(&home, &args)
    };

    // A fixed-rate run by two pods.
    let run = [
        "keyvalue",
        "--hosts",
        "127.0.0.1",
        "--keyspace",
        "k8sreal",
        "--rows",
        "1000",
        "--rate",
        "200",
        "--duration",
        "10s",
    ];
    let dir = work.path().join("job-run");
    let shown = job("k8s-real-run", &dir, &run);
    for i in 0..2 {
        assert!(
            shown.contains(&format!("shard {i}: pod cqlbench-loaders-{i}-")),
            "{shown}"
        );
        let shard = RunResult::read(&dir.join(format!("shard-{i}.json"))).unwrap();
        assert!(dir.join(format!("shard-{i}.hlog")).is_file());
        assert_eq!(shard.shard.as_ref().map(|s| s.index), Some(i));
    }
    let merged = RunResult::read(&dir.join("k8s-real-run.json")).unwrap();
    // What the two pods sent on their schedules, per second of the window (what the client
    // controls), within 1% of the target; what completed in it (a stall at its start on a busy
    // host carries operations over) within 5%.
    let sent_rate = |r: &RunResult| {
        let main = r.main_summary().expect("a main phase");
        main.sent_on_schedule.expect("open loop") as f64 / main.measured_s
    };
    let main = merged.main_summary().unwrap();
    let rate = sent_rate(&merged);
    assert!((rate - 200.0).abs() <= 2.0, "merged rate {rate}\n{shown}");
    assert!((main.ops_per_s - 200.0).abs() <= 10.0, "{}", main.ops_per_s);
    assert_eq!(merged.merged.as_ref().map(|m| m.shards.len()), Some(2));
    // Collected, then deleted: no Job and no pod of it is left.
    let jobs = lab.kubectl(&["get", "jobs,pods", "-o", "name"]);
    assert!(jobs.status.success(), "{}", text(&jobs));
    assert!(
        !String::from_utf8_lossy(&jobs.stdout).contains("cqlbench-loaders"),
        "{}",
        text(&jobs)
    );

    // The same run by two loader processes on the host.
    let host = work.path().join("host.json");
    let mut args = vec!["run"];
    args.extend(run);
    args.extend(["--loaders", "2", "--out", host.to_str().unwrap()]);
    ok(&home, &args);
    let on_host = sent_rate(&RunResult::read(&host).unwrap());
    eprintln!("k8s run: {rate:.1} ops/s; --loaders 2 on the host: {on_host:.1} ops/s");
    assert!(
        (rate - on_host).abs() <= 0.01 * on_host,
        "{rate} vs {on_host}"
    );

    // One capacity search by two pods, pod 0 coordinating.
    let dir = work.path().join("job-capacity");
    let args = [
        &[
            "--keep",
            "--",
            "capacity",
            "keyvalue",
            "--hosts",
            "127.0.0.1",
            "--keyspace",
            "k8scap",
            "--rows",
            "2000",
            "--start-rate",
            "200",
            "--max-steps",
            "2",
            "--factor",
            "1.5",
            "--step",
            "8s",
            "--step-warmup",
            "2s",
        ][..],
        QUIET_CAPACITY,
    ]
    .concat();
    let shown = job("k8s-real-cap", &dir, &args);
    let r = CapacityResult::read(&dir.join("shard-0/capacity.json")).unwrap();
    assert_eq!(r.status, CapacityStatus::Completed, "{shown}");
    assert_eq!(r.steps.len(), 2, "{shown}");
    for s in &r.steps {
        let l = s.loaders.as_ref().expect("the step's loaders");
        assert_eq!(l.count, 2, "{shown}");
        assert!(
            (s.summary.ops_per_s - s.target_rate_per_s).abs() < 0.02 * s.target_rate_per_s,
            "step {}: {} of {}",
            s.index,
            s.summary.ops_per_s,
            s.target_rate_per_s
        );
    }
    assert!(shown.contains("capacity: at least 300 ops/s"), "{shown}");
    // --keep: the Job is still there, its pods completed.
    let kept = lab.kubectl(&[
        "get",
        "job",
        "cqlbench-loaders",
        "-o",
        "jsonpath={.status.succeeded}",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&kept.stdout),
        "2",
        "{}",
        text(&kept)
    );
    let deleted = lab.kubectl(&["delete", "job", "cqlbench-loaders", "--wait=true"]);
    assert!(deleted.status.success(), "{}", text(&deleted));
    tc.finish();

    probe_jobs(&lab, work.path(), &home);
}

/// `k8s probe --run` on the lab: a volume of a StorageClass (no provisioner: a hostPath
/// PersistentVolume made here, in the test's directory), the pod's result read back and shown by
/// `report` beside a probe of the host.
fn probe_jobs(lab: &Lab, work: &Path, home: &Path) {
    let volume = work.join("probe-volume");
    std::fs::create_dir(&volume).unwrap();
    let objects = format!(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: lab-local\n\
         provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n---\n\
         apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: lab-probe\nspec:\n  \
         storageClassName: lab-local\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  \
         persistentVolumeReclaimPolicy: Retain\n  hostPath:\n    path: {}\n    type: Directory\n",
        volume.display()
    );
    let file = work.join("lab-local.yaml");
    std::fs::write(&file, objects).unwrap();
    let applied = lab.kubectl(&["apply", "-f", file.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", text(&applied));

    let kubeconfig = lab.kubeconfig();
    let results = work.join("probes");
    let quick = [
        "--quick",
        "--profiles",
        "rand_read_4k",
        "--runtime-s",
        "2",
        "--size-mib",
        "64",
    ];
    let mut args = vec![
        "k8s",
        "probe",
        "--run",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "--nodes",
        "cqlbench-lab",
        "--storage-class",
        "lab-local",
        "--size",
        "1Gi",
        "--image",
        IMAGE,
        "--timeout",
        "5m",
        "--results",
        results.to_str().unwrap(),
        "--keep",
        "--",
    ];
    args.extend(quick);
    let shown = ok(home, &args);
    let node = results.join("cqlbench-lab.json");
    assert!(shown.contains(node.to_str().unwrap()), "{shown}");
    let probe = cqlbench::result::file::read_probe(&node).unwrap();
    assert_eq!(probe.env, "cqlbench-lab");
    // The pod measured the volume it was given: its test files were on the hostPath.
    assert!(volume.join("result.json").is_file());
    // --keep left the Job.
    let kept = lab.kubectl(&["get", "job", "cqlbench-probe-0", "-o", "name"]);
    assert!(kept.status.success(), "{}", text(&kept));

    let host_dir = work.join("host-probe");
    std::fs::create_dir(&host_dir).unwrap();
    let host = work.join("host-probe.json");
    let mut args = vec![
        "probe",
        "--dir",
        host_dir.to_str().unwrap(),
        "--env",
        "host",
        "--out",
        host.to_str().unwrap(),
    ];
    args.extend(quick);
    ok(home, &args);
    let report = ok(
        home,
        &["report", node.to_str().unwrap(), host.to_str().unwrap()],
    );
    let header = report
        .lines()
        .find(|l| l.contains("cqlbench-lab"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(header.contains("host"), "side by side: {report}");
    assert!(report.contains("IOPS"), "{report}");
}
