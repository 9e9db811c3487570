//! The loader image (`scripts/image.sh`) through the real tools: built with buildah from this
//! test build's binary, loaded by podman into a container storage of the test's own (nothing in
//! the host's), its collector and probe tools present, and run with the host network against a
//! local node: a short open-loop run writes its result into a mounted directory.
//!
//! podman runs it with runc: crun refuses this machine's cgroups (v1 beside an empty v2
//! hierarchy), and the container's open-file and process limits are set below the host's,
//! which the sandbox does not let a container raise.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use cqlbench::result::{RunResult, RunStatus};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn image_sh(args: &[&str]) -> Output {
    Command::new(repo().join("scripts/image.sh"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// podman on a storage of the test's own.
fn podman(storage: &Path, args: &[&str]) -> Output {
    let runc = ["/usr/sbin/runc", "/usr/bin/runc"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("runc is installed (scripts/setup.sh)");
    Command::new("podman")
        .arg("--root")
        .arg(storage.join("root"))
        .arg("--runroot")
        .arg(storage.join("run"))
        .args(["--storage-driver", "vfs", "--runtime", runc])
        .args(args)
        .output()
        .unwrap()
}

const LIMITS: [&str; 4] = [
    "--ulimit",
    "nofile=4096:4096",
    "--ulimit",
    "nproc=2048:2048",
];

fn run_in(storage: &Path, image: &str, extra: &[&str], cmd: &[&str]) -> Output {
    let mut args = vec!["run", "--rm", "--network", "host"];
    args.extend(LIMITS);
    args.extend(extra);
    args.push(image);
    args.extend(cmd);
    podman(storage, &args)
}

#[test]
fn the_loader_image_runs_a_load_against_a_local_node() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("loader.oci.tar");
    let name = format!("cqlbench-loader:test-{}", std::process::id());
    let out = image_sh(&[
        "--binary",
        env!("CARGO_BIN_EXE_cqlbench"),
        "--name",
        &name,
        "--out",
        archive.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains(&format!("image {name}")), "{said}");
    assert!(said.contains("MiB)") && said.contains("built in"), "{said}");
    // An OCI archive: its layout file and index beside the blobs.
    let listing = Command::new("tar")
        .arg("-tf")
        .arg(&archive)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout).to_string();
    for f in ["oci-layout", "index.json", "blobs/sha256/"] {
        assert!(listing.lines().any(|l| l == f), "{f} not in:\n{listing}");
    }

    let storage = dir.path().join("containers");
    let loaded = podman(&storage, &["load", "-i", archive.to_str().unwrap()]);
    assert!(loaded.status.success(), "{}", text(&loaded));
    let image = format!("localhost/{name}");
    assert!(text(&loaded).contains(&image), "{}", text(&loaded));

    // What the Job's pods run: cqlbench, sleep (the collector) and tar (`kubectl cp`); and
    // what a probe runs: fio and sysbench.
    for cmd in [
        &["cqlbench", "--version"][..],
        &["sleep", "0"],
        &["tar", "--version"],
        &["fio", "--version"],
        &["sysbench", "--version"],
    ] {
        let o = run_in(&storage, &image, &[], cmd);
        assert!(o.status.success(), "{cmd:?}: {}", text(&o));
    }

    // On 127.0.2.1: beside, not instead of, a node another run keeps on 127.0.0.1.
    let mut s = spec("img", "dc1:1");
    s.address_prefix = "127.0.2.".into();
    let tc = TestCluster::create(s);
    tc.start();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let mount = format!("{}:/results", results.display());
    let o = run_in(
        &storage,
        &image,
        &["-v", &mount],
        &[
            "cqlbench",
            "run",
            "keyvalue",
            "--hosts",
            "127.0.2.1",
            "--dc",
            "dc1",
            "--rf",
            "1",
            "--rows",
            "500",
            "--rate",
            "200",
            "--duration",
            "4s",
            "--no-metrics",
            "--out",
            "/results/r.json",
            "-q",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = RunResult::read(&results.join("r.json")).unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    let main = r.phases.last().unwrap().summary.as_ref().unwrap();
    // The run's own schedule, and operations done without error (how close a loaded host
    // keeps to the rate is load_real's to check, not the image's).
    assert_eq!(main.target_rate_per_s, Some(200.0), "{main:?}");
    assert!(main.ok > 0 && main.errors == 0, "{main:?}");
    tc.finish();
    let removed = podman(&storage, &["rmi", "--force", &image]);
    assert!(removed.status.success(), "{}", text(&removed));
}

#[test]
fn the_image_script_refuses_bad_arguments_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &["--frobnicate"],
            2,
            "image: unknown argument '--frobnicate'",
        ),
        (
            &[
                "--name",
                "Bad Name",
                "--binary",
                env!("CARGO_BIN_EXE_cqlbench"),
            ],
            2,
            "image: 'Bad Name' is not an image name",
        ),
        (
            &["--binary", "/nonexistent/cqlbench"],
            1,
            "image: '/nonexistent/cqlbench' is not an executable file",
        ),
        (
            &[
                "--binary",
                env!("CARGO_BIN_EXE_cqlbench"),
                "--out",
                dir.path().to_str().unwrap(),
            ],
            2,
            "is a directory: give the archive's file name",
        ),
        (&["--binary"], 1, "--binary needs a path"),
    ];
    for (args, code, says) in cases {
        let o = image_sh(args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}
