//! Local Apache Cassandra clusters: `plan` (pure topology) · `render` (config files and JVM
//! options, pure) · `dist` (jars) · `state` (the cluster directory) · `process` and
//! `supervise` (processes, readiness) · `status` (what nodetool and the processes say).

pub mod cds;
pub mod cql;
pub mod dist;
pub mod jdk;
pub mod lease;
pub mod memory;
pub mod plan;
pub mod process;
pub mod readiness;
pub mod render;
pub mod smoke;
pub mod state;
pub mod status;
pub mod storage;
pub mod supervise;
pub mod versions;

use std::path::{Path, PathBuf};

pub use state::{ClusterState, NodeDirs};
pub use supervise::{StartOptions, StartReport, StopOptions};

use crate::spec::ClusterSpec;

/// Errors of the cluster manager; each names the cluster, node, port or path concerned.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Storage(#[from] storage::StorageError),
    #[error(transparent)]
    Memory(#[from] memory::MemoryError),
    #[error("no cluster named '{name}' in {root}")]
    NotFound { name: String, root: PathBuf },
    #[error("a cluster named '{name}' already exists in {root}")]
    AlreadyExists { name: String, root: PathBuf },
    #[error("cluster '{name}' is already running (all its nodes are up); stop it first")]
    AlreadyRunning { name: String },
    #[error("{node}: port {addr}:{port} is already in use (another cluster or process?)")]
    PortInUse {
        node: String,
        addr: String,
        port: u16,
    },
    #[error("{node} is not ready after {waited_s}s: {missing} (log: {log})")]
    StartTimeout {
        node: String,
        waited_s: u64,
        missing: String,
        log: PathBuf,
        tail: String,
    },
    #[error("{node} exited during start-up (log: {log})")]
    NodeDied {
        node: String,
        log: PathBuf,
        tail: String,
    },
    #[error("cluster '{name}' has no node {index} (it has nodes 1..={count})")]
    NoSuchNode {
        name: String,
        index: usize,
        count: usize,
    },
    #[error("{node} is not running")]
    NodeNotRunning { node: String },
    #[error("--set {key}: Cassandra {version} has no cassandra.yaml key '{key}' ({hint})")]
    UnknownSetting {
        key: String,
        version: String,
        hint: String,
    },
    #[error("CQL check failed: {0}")]
    Cql(String),
    #[error(
        "--tls needs Cassandra 4.1 or later ({version} reads only JKS/PKCS12 key stores; cqlbench writes PEM ones)"
    )]
    TlsNeeds41 { version: String },
    #[error("{0}")]
    Tls(crate::error::Invalid),
    #[error("{path}: unreadable cluster state: {detail}")]
    BadState { path: PathBuf, detail: String },
    #[error(transparent)]
    Lab(#[from] crate::lab::LabError),
    #[error(transparent)]
    Netns(#[from] crate::netns::NetnsError),
    #[error(transparent)]
    Plan(#[from] plan::PlanError),
    #[error(transparent)]
    Dist(#[from] dist::DistError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ClusterError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> ClusterError {
        ClusterError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The node log tail carried by start failures, shown after the one-line error.
    pub fn log_tail(&self) -> Option<&str> {
        match self {
            ClusterError::StartTimeout { tail, .. } | ClusterError::NodeDied { tail, .. } => {
                Some(tail)
            }
            _ => None,
        }
    }
}

/// A local cluster, opened from its directory.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub dir: PathBuf,
    pub state: ClusterState,
}

/// The address prefix of the first local cluster.
pub const FIRST_ADDRESS_PREFIX: &str = "127.0.0.";

/// The address prefix recorded for a network lab's cluster (its nodes' addresses are
/// [`crate::spec::lab::node_address`]es, one subnet per data centre).
pub const LAB_ADDRESS_PREFIX: &str = "198.18.0.";

/// The first `127.0.N.` that no cluster in `root` uses: clusters on different prefixes listen
/// on different addresses (and JMX ports, see [`plan::jmx_port`]), so they can run at once.
pub fn free_address_prefix(root: &Path) -> String {
    let used = Cluster::prefixes_in(root);
    (0..=255)
        .map(|n| format!("127.0.{n}."))
        .find(|p| !used.contains(p))
        .unwrap_or_else(|| FIRST_ADDRESS_PREFIX.into())
}

/// The cluster directory's subdirectory of its CA, node and client certificates.
pub const TLS_DIR: &str = "tls";

/// Refuses a cassandra.yaml setting of the spec that `line` does not know (its nodes would
/// not start).
pub fn check_settings(
    spec: &ClusterSpec,
    line: versions::Line,
    version: &str,
) -> Result<(), ClusterError> {
    // The version asked for, or the line when only the line is known.
    let version = match version.trim() {
        "" => line.to_string(),
        v => v.to_string(),
    };
    if spec.tls.is_some() && line == versions::Line::V40 {
        return Err(ClusterError::TlsNeeds41 { version });
    }
    match spec.yaml_overrides.keys().find(|k| !line.knows_key(k)) {
        Some(key) => Err(ClusterError::UnknownSetting {
            key: key.clone(),
            version,
            hint: line.unknown_key_hint(key),
        }),
        None => Ok(()),
    }
}

impl Cluster {
    /// Creates the cluster directory from a spec: plans the topology for this host, resolves
    /// the Cassandra jars (fetching them if needed) and writes `cluster.json`. Nothing is
    /// started. An existing cluster of that name is an error and is left untouched.
    pub fn create(
        root: &Path,
        spec: ClusterSpec,
        tc: &dist::Toolchain,
    ) -> Result<Cluster, ClusterError> {
        let dir = root.join(&spec.name);
        if dir.join("cluster.json").exists() {
            return Err(ClusterError::AlreadyExists {
                name: spec.name,
                root: root.to_path_buf(),
            });
        }
        if spec.tls.is_some() {
            crate::tls::available("cluster create --tls").map_err(ClusterError::Tls)?;
        }
        let host = crate::host::HostFacts::read();
        let plan = plan::plan(&spec, host.ram_bytes, host.cores)?;
        // The settings a line does not know are refused before its jars are fetched, when the
        // version asked for names the line.
        let asked = match &spec.cassandra {
            crate::spec::CassandraSource::Maven { version } => Some((
                versions::Line::of(version).map_err(dist::DistError::from)?,
                version,
            )),
            crate::spec::CassandraSource::Home { .. } => None,
        };
        if let Some((line, version)) = asked {
            check_settings(&spec, line, version)?;
        }
        let dist = dist::resolve(&spec.cassandra, tc, spec.java.as_deref())?;
        if let (None, Some(line)) = (asked, dist.line()) {
            check_settings(&spec, line, &dist.version)?;
        }
        let state = ClusterState {
            schema_version: state::STATE_VERSION,
            spec,
            plan,
            dist,
            created_unix_s: crate::host::unix_now_s(),
        };
        if !state.spec.storage.is_empty() {
            storage::check_supported()?;
        }
        if state.spec.node_memory.is_some() {
            memory::check_supported()?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| ClusterError::io(&dir, e))?;
        if state.spec.tls.is_some() {
            let addrs: Vec<String> = state.plan.nodes.iter().map(|n| n.address.clone()).collect();
            if let Err(e) = crate::tls::LocalCa::at(dir.join(TLS_DIR)).create(&addrs) {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(ClusterError::Tls(e));
            }
        }
        state::write_json(&dir.join("cluster.json"), &state)?;
        let cluster = Cluster { dir, state };
        if let Some(lab) = cluster.lab()
            && let Err(e) = lab.create()
        {
            let _ = std::fs::remove_dir_all(&cluster.dir);
            return Err(e.into());
        }
        if let Err(e) = cluster.attach_disks(cluster.nodes()) {
            // Nothing left behind: the disks attached so far, and the directory.
            for n in cluster.nodes() {
                if let Some((disk, _)) = cluster.disk(n) {
                    let _ = disk.detach();
                }
            }
            if let Some(lab) = cluster.lab() {
                let _ = lab.destroy();
            }
            let _ = std::fs::remove_dir_all(&cluster.dir);
            return Err(e);
        }
        Ok(cluster)
    }

    /// The memory group of `node` (`--node-memory`).
    pub fn memory_group(&self, node: &plan::NodePlan) -> Result<PathBuf, ClusterError> {
        let dirs = self.node_dirs(node);
        Ok(memory::group(self.name(), &node.name, &dirs.node)?)
    }

    /// The network lab the nodes live in (`--netns`), if the cluster has one.
    pub fn lab(&self) -> Option<crate::lab::Lab> {
        let spec = self.state.spec.lab?;
        let dc_index = |dc: &str| {
            self.state
                .spec
                .dcs
                .iter()
                .position(|d| d.name == dc)
                .unwrap_or(0)
        };
        let nodes = self
            .nodes()
            .iter()
            .map(|n| crate::lab::LabNode {
                index: n.index,
                dc_index: dc_index(&n.dc),
            })
            .collect();
        Some(crate::lab::Lab::new(self.name(), spec, nodes))
    }

    /// The network namespace node `node` runs in (a lab's), if any.
    pub fn node_netns(&self, node: &plan::NodePlan) -> Option<String> {
        self.state
            .spec
            .lab
            .map(|_| crate::spec::lab::node_ns(self.name(), node.index))
    }

    /// The namespace from which this cluster's nodes are managed and reached: a lab's
    /// gateway; None when they are on this host's own network.
    pub fn admin_netns(&self) -> Option<String> {
        self.state
            .spec
            .lab
            .map(|_| crate::spec::lab::gateway_ns(self.name()))
    }

    /// Runs `f`, which talks to the nodes over the network, from where they are reached: a
    /// lab's gateway (on a thread of its own there), else here. Never from this host's own
    /// network towards a lab's addresses, which exist only inside the lab.
    pub fn reach_nodes<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, ClusterError> {
        match self.admin_netns() {
            Some(ns) => Ok(crate::netns::run_in(&ns, f)?),
            None => Ok(f()),
        }
    }

    /// The namespace a loader of this cluster runs in by default: a lab's first loader
    /// namespace inside; None when the nodes are on this host's own network.
    pub fn client_netns(&self) -> Option<String> {
        self.state
            .spec
            .lab
            .map(|_| crate::spec::lab::client_ns(self.name(), 1))
    }

    /// The emulated disk of `node` and its class, if its data centre has one.
    pub fn disk(
        &self,
        node: &plan::NodePlan,
    ) -> Option<(storage::NodeDisk, &crate::spec::storage::DiskClass)> {
        let class = self.state.spec.storage.get(&node.dc)?;
        let dirs = self.node_dirs(node);
        Some((storage::NodeDisk::new(&dirs.node, &dirs.data), class))
    }

    /// Attaches and mounts the emulated disks of `nodes` (those whose DC has a class) and
    /// applies their limits; disks already mounted only get their limits again.
    pub fn attach_disks(&self, nodes: &[plan::NodePlan]) -> Result<(), ClusterError> {
        for n in nodes {
            if let Some((disk, class)) = self.disk(n) {
                std::fs::create_dir_all(&self.node_dirs(n).node)
                    .map_err(|e| ClusterError::io(&self.node_dirs(n).node, e))?;
                disk.attach(class)?;
            }
        }
        Ok(())
    }

    /// The address prefixes of the clusters in `root`.
    pub fn prefixes_in(root: &Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(root) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|e| state::read_state(&e.path(), &e.file_name().to_string_lossy()).ok())
            .map(|s| s.spec.address_prefix)
            .collect()
    }

    /// Opens an existing cluster.
    pub fn open(root: &Path, name: &str) -> Result<Cluster, ClusterError> {
        crate::spec::cluster::validate_name(name).map_err(|_| ClusterError::NotFound {
            name: name.to_string(),
            root: root.to_path_buf(),
        })?;
        let dir = root.join(name);
        let state = state::read_state(&dir, name)?;
        Ok(Cluster { dir, state })
    }

    /// Where the last start is recorded (see [`Self::last_start`]).
    fn last_start_path(&self) -> PathBuf {
        self.dir.join("last-start.json")
    }

    /// Records a start that ended with its nodes ready, for the results of the runs on it.
    pub(crate) fn record_start(&self, r: &supervise::StartReport) -> Result<(), ClusterError> {
        let start = crate::result::ClusterStart {
            started_unix_s: crate::host::unix_now_s().saturating_sub(r.elapsed.as_secs()),
            took_s: r.elapsed.as_secs_f64(),
            nodes: r.started.clone(),
        };
        state::write_json(&self.last_start_path(), &start)
    }

    /// The cluster's last start that ended with its nodes ready: when, how long it took, and
    /// which nodes it started; None when none is recorded (or the record cannot be read).
    pub fn last_start(&self) -> Option<crate::result::ClusterStart> {
        let text = std::fs::read_to_string(self.last_start_path()).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn name(&self) -> &str {
        &self.state.spec.name
    }

    pub fn nodes(&self) -> &[plan::NodePlan] {
        &self.state.plan.nodes
    }

    /// The node with 1-based `index`.
    pub fn node(&self, index: usize) -> Result<&plan::NodePlan, ClusterError> {
        self.nodes()
            .get(index.wrapping_sub(1))
            .ok_or_else(|| ClusterError::NoSuchNode {
                name: self.name().to_string(),
                index,
                count: self.nodes().len(),
            })
    }

    pub fn node_dirs(&self, node: &plan::NodePlan) -> NodeDirs {
        NodeDirs::new(&self.dir, node)
    }

    /// PID of the node if its JVM is running.
    pub fn pid(&self, node: &plan::NodePlan) -> Option<u32> {
        let dirs = self.node_dirs(node);
        let run = state::read_run(&dirs)?;
        let marker = dirs.conf.to_string_lossy().to_string();
        process::is_alive(run.pid, &marker).then_some(run.pid)
    }

    /// Addresses of the nodes whose JVM is running.
    pub fn running_addresses(&self) -> Vec<String> {
        self.nodes()
            .iter()
            .filter(|n| self.pid(n).is_some())
            .map(|n| n.address.clone())
            .collect()
    }

    /// The cluster's certificate authority, when it was created with `--tls`.
    pub fn local_ca(&self) -> Option<crate::tls::LocalCa> {
        self.state
            .spec
            .tls
            .map(|_| crate::tls::LocalCa::at(self.dir.join(TLS_DIR)))
    }

    /// What a client of this cluster connects with: its CA and client certificate when it
    /// has TLS.
    pub fn client_tls(&self) -> Option<crate::spec::client::TlsSpec> {
        self.local_ca().map(|ca| ca.client_spec())
    }

    /// CQL contact points (`address:9042`) of all nodes.
    pub fn contact_points(&self) -> Vec<String> {
        self.nodes()
            .iter()
            .map(|n| format!("{}:{}", n.address, plan::NATIVE_PORT))
            .collect()
    }

    /// Prometheus endpoints (`http://address:port/metrics`) of all nodes.
    pub fn metrics_endpoints(&self) -> Vec<String> {
        self.nodes()
            .iter()
            .map(|n| format!("http://{}:{}/metrics", n.address, n.metrics_port))
            .collect()
    }

    /// Stops every node (killing it if it does not stop in time) and removes the directory.
    pub fn destroy(self) -> Result<(), ClusterError> {
        self.stop(&StopOptions {
            kill: true,
            ..StopOptions::default()
        })?;
        for n in self.nodes() {
            if let Some((disk, _)) = self.disk(n) {
                disk.detach()?;
            }
        }
        if let Some(lab) = self.lab() {
            lab.destroy()?;
        }
        std::fs::remove_dir_all(&self.dir).map_err(|e| ClusterError::io(&self.dir, e))
    }

    /// ERROR lines in all node logs (whole files), for tests and `status`.
    pub fn log_errors(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for n in self.nodes() {
            for e in readiness::read_from(&self.node_dirs(n).system_log(), 0).errors {
                out.push((n.name.clone(), e));
            }
        }
        out
    }
}
