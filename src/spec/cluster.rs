//! The cluster spec: everything needed to (re)create a local cluster, persisted in the
//! cluster directory with a `schema_version`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::MiB;

/// Version of the persisted [`ClusterSpec`] layout.
pub const CLUSTER_SPEC_VERSION: u32 = 1;

/// A local cluster: N Cassandra nodes on consecutive loopback addresses, one JVM each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterSpec {
    pub schema_version: u32,
    pub name: String,
    pub cassandra: CassandraSource,
    /// The `java` (or JDK directory) the nodes run on, when given (`--java`); else chosen for
    /// the Cassandra line (see `cluster::dist::choose_java`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java: Option<PathBuf>,
    /// Data centres in order; nodes are numbered across them (dc1's first, then dc2's, …).
    pub dcs: Vec<DcSpec>,
    pub jvm: JvmSpec,
    /// CPUs each node is pinned to (`sched_setaffinity`), to emulate smaller hosts; `None`
    /// leaves nodes unpinned.
    pub cpus_per_node: Option<usize>,
    /// The nodes share the host's first K CPUs (a host of K CPUs, to emulate a smaller
    /// instance); with `cpus_per_node` they are pinned round-robin within them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpus: Option<usize>,
    /// Tokens per node (`num_tokens`): 1 is a single token per node; more are vnodes, placed
    /// by the plan evenly interleaved over the ring.
    #[serde(default = "one_token")]
    pub vnodes: usize,
    /// Nodes listen on `<address_prefix><n>`, n = 1, 2, …
    pub address_prefix: String,
    /// Extra top-level cassandra.yaml settings, applied over the rendered defaults.
    #[serde(default)]
    pub yaml_overrides: BTreeMap<String, crate::yaml::Value>,
    /// Emulated disks by data centre (`--storage`): each node of the DC gets its own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub storage: BTreeMap<String, crate::spec::storage::DiskClass>,
    /// Each node's memory limit (`--node-memory`): heap, off-heap and page cache together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_memory: Option<MiB>,
    /// Client (and optionally internode) encryption with the cluster's own certificate
    /// authority (`--tls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<ClusterTls>,
    /// Each node in a network namespace of its own, behind a gateway (`--netns`); addresses
    /// from [`crate::spec::lab`] instead of the prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<crate::spec::lab::LabSpec>,
}

/// A local cluster's encryption: client connections always, internode optionally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterTls {
    /// Clients must present a certificate the cluster's CA signed.
    pub client_auth: bool,
    /// Plain-text clients are accepted too, on the same port (to compare both on one
    /// cluster).
    pub optional: bool,
    /// Nodes encrypt the traffic between them as well.
    pub internode: bool,
}

fn one_token() -> usize {
    1
}

/// The most tokens per node a local cluster takes (Cassandra's own default is 16).
pub const MAX_VNODES: usize = 256;

impl ClusterSpec {
    pub fn node_count(&self) -> usize {
        self.dcs.iter().map(|d| d.nodes).sum()
    }
}

/// Where the Cassandra jars come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CassandraSource {
    /// `org.apache.cassandra:cassandra-all:<version>` and its dependencies from Maven Central.
    Maven { version: String },
    /// An existing installation: its `lib/*.jar` are used.
    Home { path: PathBuf },
}

/// One data centre: its name, node count and rack count (nodes are spread over racks
/// round-robin).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DcSpec {
    pub name: String,
    pub nodes: usize,
    pub racks: usize,
}

impl FromStr for DcSpec {
    type Err = crate::error::Invalid;

    /// `NAME:NODES` or `NAME:NODES:RACKS`, e.g. `dc1:3` or `dc1:3:3`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split(':').collect();
        let bad = || {
            crate::invalid!(
                "'{s}' is not a data centre: expected NAME:NODES or NAME:NODES:RACKS, e.g. dc1:3 or dc1:3:3"
            )
        };
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let name = parts[0].trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(crate::invalid!(
                "'{s}': data centre name must be letters, digits, '_' or '-'"
            ));
        }
        let nodes: usize = parts[1].parse().map_err(|_| bad())?;
        let racks: usize = match parts.get(2) {
            Some(r) => r.parse().map_err(|_| bad())?,
            None => 1,
        };
        if nodes == 0 {
            return Err(crate::invalid!(
                "'{s}': a data centre needs at least one node"
            ));
        }
        if racks == 0 || racks > nodes {
            return Err(crate::invalid!(
                "'{s}': racks must be between 1 and the node count ({nodes})"
            ));
        }
        Ok(DcSpec {
            name: name.to_string(),
            nodes,
            racks,
        })
    }
}

/// Parses `dc1:3,dc2:2:2` into data centres; names must be distinct.
pub fn parse_dcs(s: &str) -> Result<Vec<DcSpec>, crate::error::Invalid> {
    let dcs: Vec<DcSpec> = s
        .split(',')
        .map(|p| p.trim().parse())
        .collect::<Result<_, _>>()?;
    for (i, dc) in dcs.iter().enumerate() {
        if dcs[..i].iter().any(|d| d.name == dc.name) {
            return Err(crate::invalid!("data centre '{}' is named twice", dc.name));
        }
    }
    Ok(dcs)
}

/// JVM settings applied to every node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JvmSpec {
    /// Heap per node; `None` = Cassandra's formula divided among the co-located nodes.
    pub heap: Option<MiB>,
    /// Young generation (`-Xmn`); `None` lets the collector size it.
    pub new_gen: Option<MiB>,
    pub gc: Gc,
    /// Further JVM arguments, appended last (so they win over the defaults).
    #[serde(default)]
    pub extra_args: Vec<String>,
}

/// Garbage collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Gc {
    /// G1 with the flags of reference 000 (MaxGCPauseMillis=300, IHOP 70, RSet 5%).
    G1,
    /// ZGC.
    Zgc,
    /// Parallel (throughput) collector.
    Parallel,
}

impl fmt::Display for Gc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Gc::G1 => "G1",
            Gc::Zgc => "ZGC",
            Gc::Parallel => "Parallel",
        })
    }
}

/// Checks a cluster name: used as a directory name and in cassandra.yaml.
pub fn validate_name(name: &str) -> Result<(), crate::error::Invalid> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(crate::invalid!(
            "'{name}' is not a valid cluster name: use 1-48 letters, digits, '_' or '-'"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_data_centres() {
        let dcs = parse_dcs("dc1:3,dc2:2:2").unwrap();
        assert_eq!(
            dcs[0],
            DcSpec {
                name: "dc1".into(),
                nodes: 3,
                racks: 1
            }
        );
        assert_eq!(
            dcs[1],
            DcSpec {
                name: "dc2".into(),
                nodes: 2,
                racks: 2
            }
        );
        assert!(parse_dcs("dc1:0").is_err());
        assert!(parse_dcs("dc1:2:3").unwrap_err().contains("racks"));
        assert!(parse_dcs("dc1:3,dc1:2").unwrap_err().contains("twice"));
        assert!(parse_dcs("dc1").is_err());
        assert!(parse_dcs("d c:1").is_err());
    }

    #[test]
    fn validates_names() {
        assert!(validate_name("demo-1").is_ok());
        assert!(validate_name("").is_err());
        assert!(validate_name("../x").is_err());
        assert!(validate_name("-x").is_err());
    }
}
