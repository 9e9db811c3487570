//! The cluster directory: `<root>/<name>/cluster.json` (spec, plan, distribution) and one
//! `nodeN/` per node with `conf/`, `data/`, `logs/` and `run.json` (PID and log offset).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ClusterError;
use super::dist::Distribution;
use super::plan::{ClusterPlan, NodePlan};
use super::render::NodePaths;
use crate::spec::ClusterSpec;

/// Version of the persisted [`ClusterState`] layout.
pub const STATE_VERSION: u32 = 1;

/// What `cluster.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterState {
    pub schema_version: u32,
    pub spec: ClusterSpec,
    pub plan: ClusterPlan,
    pub dist: Distribution,
    pub created_unix_s: u64,
}

/// What `nodeN/run.json` holds about the last start of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRun {
    pub pid: u32,
    pub started_unix_s: u64,
    /// Size of `system.log` when the node was started: readiness reads from here.
    pub log_offset: u64,
}

/// Names of the clusters under `root`, sorted.
pub fn list(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("cluster.json").exists())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Paths of one node inside a cluster directory.
#[derive(Debug, Clone)]
pub struct NodeDirs {
    pub node: PathBuf,
    /// The cluster's certificates (`--tls`).
    pub tls: PathBuf,
    pub conf: PathBuf,
    pub data: PathBuf,
    pub logs: PathBuf,
}

impl NodeDirs {
    pub fn new(cluster_dir: &Path, node: &NodePlan) -> NodeDirs {
        let n = cluster_dir.join(&node.name);
        NodeDirs {
            conf: n.join("conf"),
            data: n.join("data"),
            logs: n.join("logs"),
            node: n,
            tls: cluster_dir.join(super::TLS_DIR),
        }
    }

    pub fn as_paths(&self) -> NodePaths<'_> {
        NodePaths {
            node_dir: &self.node,
            conf_dir: &self.conf,
            data_dir: &self.data,
            log_dir: &self.logs,
            tls_dir: &self.tls,
        }
    }

    pub fn system_log(&self) -> PathBuf {
        self.logs.join("system.log")
    }

    pub fn run_file(&self) -> PathBuf {
        self.node.join("run.json")
    }
}

pub(crate) fn read_state(dir: &Path, name: &str) -> Result<ClusterState, ClusterError> {
    let path = dir.join("cluster.json");
    let text = std::fs::read_to_string(&path).map_err(|_| ClusterError::NotFound {
        name: name.to_string(),
        root: dir.parent().unwrap_or(dir).to_path_buf(),
    })?;
    let state: ClusterState = serde_json::from_str(&text).map_err(|e| ClusterError::BadState {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    if state.schema_version != STATE_VERSION {
        return Err(ClusterError::BadState {
            path,
            detail: format!(
                "schema_version {} is not {STATE_VERSION}; recreate the cluster",
                state.schema_version
            ),
        });
    }
    Ok(state)
}

pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), ClusterError> {
    let bytes = serde_json::to_vec_pretty(value).expect("state serializes");
    crate::fsutil::write_atomic(path, &bytes).map_err(|e| ClusterError::io(path, e))
}

pub(crate) fn read_run(dirs: &NodeDirs) -> Option<NodeRun> {
    serde_json::from_str(&std::fs::read_to_string(dirs.run_file()).ok()?).ok()
}
