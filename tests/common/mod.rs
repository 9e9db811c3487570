//! Shared harness for tests against real Cassandra nodes: clusters live in a temporary
//! directory, jars in the normal cqlbench cache; a guard stops and removes the cluster even
//! when a test panics, and checks the node logs hold no ERROR lines.

#![allow(dead_code)]

pub mod daemon;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use cqlbench::cluster::{Cluster, StartOptions};
use cqlbench::spec::cluster::{CLUSTER_SPEC_VERSION, parse_dcs};
use cqlbench::spec::{CassandraSource, ClusterSpec, Gc, JvmSpec, MiB};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;

/// The overload criteria of the capacity searches the real tests run on a 2-CPU host the
/// loaders share with the nodes, then `-q`: only a loader that falls behind (an operation's p99
/// over 5 s) ends a step (a fresh node on a busy host timed 28% of a step's writes out once);
/// the error rate, the node's CPU and pending compactions are not criteria.
pub const QUIET_CAPACITY: &[&str] = &[
    "--settle-timeout",
    "5s",
    "--pending-after",
    "1s",
    "--max-latency",
    "all:p99:5s",
    "--max-error-rate",
    "off",
    "--max-node-cpu",
    "off",
    "--max-pending",
    "off",
    "-q",
];

/// Real clusters bind the same loopback addresses and ports: one at a time per process
/// (cargo runs test binaries one after another).
static CLUSTER_LOCK: Mutex<()> = Mutex::new(());

/// The lock a test holds while clusters it did not create through [`TestCluster`] run (a
/// scenario's own clusters).
#[allow(dead_code, reason = "not every test binary starts such clusters")]
pub fn cluster_lock() -> MutexGuard<'static, ()> {
    CLUSTER_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn spec(name: &str, dcs: &str) -> ClusterSpec {
    ClusterSpec {
        schema_version: CLUSTER_SPEC_VERSION,
        name: name.into(),
        cassandra: CassandraSource::Maven {
            version: "5.0".into(),
        },
        java: None,
        dcs: parse_dcs(dcs).unwrap(),
        jvm: JvmSpec {
            heap: Some(MiB(256)),
            new_gen: None,
            gc: Gc::G1,
            extra_args: vec![],
        },
        cpus_per_node: None,
        host_cpus: None,
        vnodes: 1,
        address_prefix: "127.0.0.".into(),
        yaml_overrides: Default::default(),
        storage: Default::default(),
        node_memory: None,
        tls: None,
        lab: None,
    }
}

/// A created (not yet started) cluster that is destroyed when dropped.
pub struct TestCluster {
    pub cluster: Option<Cluster>,
    _root: tempfile::TempDir,
    _lock: MutexGuard<'static, ()>,
}

impl TestCluster {
    pub fn create(spec: ClusterSpec) -> TestCluster {
        let lock = CLUSTER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let root = tempfile::tempdir().unwrap();
        let cluster = Cluster::create(root.path(), spec, &cqlbench::cli::toolchain())
            .expect("create cluster");
        TestCluster {
            cluster: Some(cluster),
            _root: root,
            _lock: lock,
        }
    }

    /// Creates the cluster through the real binary (`cqlbench cluster create NAME ARGS…`), so
    /// the flags a user types are what the test runs.
    pub fn create_via_cli(name: &str, args: &[&str]) -> TestCluster {
        let lock = CLUSTER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let root = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cqlbench"))
            .args(["cluster", "create", name])
            .args(args)
            .env("CQLBENCH_CLUSTERS_DIR", root.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "cluster create {name} {args:?}:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = Cluster::open(root.path(), name).expect("open the created cluster");
        TestCluster {
            cluster: Some(cluster),
            _root: root,
            _lock: lock,
        }
    }

    pub fn c(&self) -> &Cluster {
        self.cluster.as_ref().unwrap()
    }

    pub fn root(&self) -> &Path {
        self._root.path()
    }

    pub fn start(&self) -> Duration {
        let r = self
            .c()
            .start(&StartOptions::default())
            .unwrap_or_else(|e| {
                panic!("start failed: {e}\n{}", e.log_tail().unwrap_or(""));
            });
        eprintln!(
            "{}: {} up in {:.1}s",
            self.c().name(),
            r.started.join(", "),
            r.elapsed.as_secs_f64()
        );
        r.elapsed
    }

    /// Asserts no ERROR line in any node log, then stops and removes the cluster, and
    /// asserts no process of it is left.
    pub fn finish(self) {
        self.finish_allowing(&[]);
    }

    /// [`Self::finish`], but ERROR lines containing one of `expected` pass: what a test
    /// caused on purpose (a node it killed resets its peers' connections mid-handshake,
    /// which Cassandra logs as an ERROR "failed to connect").
    pub fn finish_allowing(mut self, expected: &[&str]) {
        let c = self.cluster.take().unwrap();
        let errors: Vec<(String, String)> = c
            .log_errors()
            .into_iter()
            .filter(|(_, line)| !expected.iter().any(|e| line.contains(e)))
            .collect();
        // With the lines after each ERROR (its stack trace), before the logs go.
        let traces: Vec<String> = c
            .nodes()
            .iter()
            .filter(|_| !errors.is_empty())
            .filter_map(|n| std::fs::read_to_string(c.node_dirs(n).system_log()).ok())
            .flat_map(|log| {
                let lines: Vec<String> = log.lines().map(String::from).collect();
                lines
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| {
                        l.starts_with("ERROR") && !expected.iter().any(|e| l.contains(e))
                    })
                    .map(|(i, _)| lines[i..(i + 25).min(lines.len())].join("\n"))
                    .collect::<Vec<_>>()
            })
            .collect();
        let conf_markers: Vec<String> = c
            .nodes()
            .iter()
            .map(|n| c.node_dirs(n).conf.to_string_lossy().to_string())
            .collect();
        let dir = c.dir.clone();
        c.destroy().expect("destroy");
        assert!(!dir.exists(), "destroy left {}", dir.display());
        for m in &conf_markers {
            assert!(!any_process_with(m), "a JVM of {m} survived destroy");
        }
        assert!(
            errors.is_empty(),
            "ERROR lines in node logs: {errors:#?}\n{}",
            traces.join("\n---\n")
        );
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        if let Some(c) = self.cluster.take() {
            let _ = c.destroy();
        }
    }
}

/// Is there a live process whose command line contains `marker`?
pub fn any_process_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        name.parse::<u32>().is_ok_and(|pid| {
            pid != std::process::id() && cqlbench::cluster::process::is_alive(pid, marker)
        })
    })
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

pub async fn session(c: &Cluster) -> Session {
    SessionBuilder::new()
        .known_nodes(c.contact_points())
        .build()
        .await
        .expect("CQL session")
}

/// The quickstart's binary, built without the `k8s` and `tls` features as scripts/quickstart.sh
/// builds it: `CQLBENCH_QUICKSTART_BIN`, which scripts/test.sh sets (the real tier fails, not
/// skips, without it).
pub fn quickstart_bin() -> std::path::PathBuf {
    let bin = std::env::var_os("CQLBENCH_QUICKSTART_BIN").expect(
        "CQLBENCH_QUICKSTART_BIN is not set: run scripts/test.sh, or `cargo build \
         --no-default-features --bin cqlbench`, copy target/debug/cqlbench elsewhere and set \
         CQLBENCH_QUICKSTART_BIN to the copy",
    );
    let bin = std::path::PathBuf::from(bin);
    assert!(
        bin.is_file(),
        "CQLBENCH_QUICKSTART_BIN {}: no such file",
        bin.display()
    );
    bin
}

/// Checks that the binary refused a command as a user error: a non-zero exit that is not a
/// panic, and exactly one `error:` line (clap adds a usage hint below its own), naming each of
/// `needles`. Returns that line.
pub fn refused_in_one_line(out: &std::process::Output, args: &[&str], needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_ne!(out.status.code(), Some(101), "{args:?} panicked:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}:\n{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        errors.len(),
        1,
        "{args:?}: one error line expected:\n{stderr}"
    );
    for needle in needles {
        assert!(
            errors[0].contains(needle),
            "{args:?}: '{needle}' not in: {}",
            errors[0]
        );
    }
    errors[0].to_string()
}

/// A metrics endpoint that answers every scrape with a node load of 0 bytes in the JMX
/// exporter's naming, for tests of what a fill does once it can see the nodes' load (its
/// loaders, its bounds) without a node; served until the test process ends. Returns
/// `127.0.0.1:PORT`.
pub fn empty_node_load_endpoint() -> String {
    metrics_endpoint(
        "# TYPE org_apache_cassandra_metrics_storage_count untyped\norg_apache_cassandra_metrics_storage_count{name=\"Load\",} 0.0\n",
    )
}

/// A metrics endpoint that answers every scrape with `body`, served until the test process
/// ends. Returns `127.0.0.1:PORT`.
pub fn metrics_endpoint(body: &'static str) -> String {
    let server = tiny_http::Server::http("127.0.0.1:0").expect("a free loopback port");
    let addr = server
        .server_addr()
        .to_ip()
        .expect("an IP address")
        .to_string();
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let _ = request.respond(tiny_http::Response::from_string(body));
        }
    });
    addr
}
