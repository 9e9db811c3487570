//! The topology plan: a pure function from a [`ClusterSpec`] and the host's facts to the
//! concrete nodes (addresses, DC/rack, tokens, ports, heap, CPUs). No I/O.

use serde::{Deserialize, Serialize};

use crate::spec::{ClusterSpec, MiB};

/// CQL port; every node listens on its own address.
pub const NATIVE_PORT: u16 = 9042;
/// Internode port; every node listens on its own address.
pub const STORAGE_PORT: u16 = 7000;
/// JMX binds to 127.0.0.1 only, so node n of the first prefix (127.0.0.) uses
/// `JMX_PORT_BASE + n`, and other prefixes a range of their own ([`jmx_port`]).
pub const JMX_PORT_BASE: u16 = 7200;
/// The Prometheus JMX exporter of node n listens on `<address>:METRICS_PORT_BASE + n`.
pub const METRICS_PORT_BASE: u16 = 7300;
/// At most this many nodes per cluster (loopback addresses and port ranges).
pub const MAX_NODES: usize = 99;

/// One node of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePlan {
    /// 1-based node number; the node is called `node<index>`.
    pub index: usize,
    pub name: String,
    pub address: String,
    pub dc: String,
    pub rack: String,
    /// The node's first Murmur3 token (its only one without vnodes).
    pub token: i64,
    /// All its tokens with vnodes (`num_tokens` > 1, `initial_token` lists them); empty: the
    /// single `token`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vnode_tokens: Vec<i64>,
    pub jmx_port: u16,
    pub metrics_port: u16,
    pub heap: MiB,
    pub new_gen: Option<MiB>,
    /// CPUs the node is pinned to; empty = not pinned.
    pub cpus: Vec<usize>,
}

/// The whole cluster's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterPlan {
    pub nodes: Vec<NodePlan>,
    /// How the heap was chosen, for status output and result fingerprints.
    pub heap_reason: String,
}

/// Why a spec cannot be planned on this host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("a cluster needs at least one node")]
    NoNodes,
    #[error("{0} nodes requested; at most {MAX_NODES} are supported")]
    TooManyNodes(usize),
    #[error("--cpus-per-node 0: a node needs at least one CPU")]
    NoCpus,
    #[error("--cpus-per-node {asked} exceeds the {cores} CPUs of this host")]
    TooManyCpus { asked: usize, cores: usize },
    #[error("--vnodes {0}: give 1 (one token per node) to {max}", max = crate::spec::cluster::MAX_VNODES)]
    BadVnodes(usize),
    #[error("--host-cpus {asked}: give 1 to the {cores} CPUs of this host")]
    BadHostCpus { asked: usize, cores: usize },
    #[error("address prefix '{0}' must look like 127.0.0. (three octets and a dot)")]
    BadAddressPrefix(String),
    #[error("heap {heap} is below the 128M Cassandra needs to start")]
    HeapTooSmall { heap: MiB },
    #[error("heap {heap} × {nodes} nodes is more than this host's {ram} of memory")]
    HeapTooLarge { heap: MiB, nodes: usize, ram: MiB },
    #[error("new generation {new_gen} must be smaller than the heap {heap}")]
    NewGenTooLarge { new_gen: MiB, heap: MiB },
    #[error(
        "--node-memory {memory} leaves less than {MIN_OFF_HEAP} beside the {heap} heap for the JVM's own memory and the page cache: give at least {least}"
    )]
    NodeMemoryTooSmall { memory: MiB, heap: MiB, least: MiB },
    #[error("--node-memory {memory} × {nodes} nodes is more than this host's {ram} of memory")]
    NodeMemoryTooLarge { memory: MiB, nodes: usize, ram: MiB },
}

/// The least a node's memory limit leaves beside its heap: a 256M-heap Cassandra 5.0 node
/// under load was measured here at 590 MB of anonymous memory (heap, metaspace, code, direct
/// buffers, threads), 330 MB beyond its heap.
pub const MIN_OFF_HEAP: MiB = MiB(384);

/// Cassandra's default heap for a host: max(min(½ RAM, 1 GiB), min(¼ RAM, 8 GiB)).
pub fn cassandra_default_heap(ram_bytes: u64) -> MiB {
    let ram_mib = ram_bytes / (1024 * 1024);
    MiB((ram_mib / 2).min(1024).max((ram_mib / 4).min(8192)))
}

/// Plans the nodes of `spec` on a host with `ram_bytes` of memory and `cores` CPUs.
pub fn plan(spec: &ClusterSpec, ram_bytes: u64, cores: usize) -> Result<ClusterPlan, PlanError> {
    let (octets, pool) = check_layout(spec, cores)?;
    let (heap, heap_reason) = heap(spec, ram_bytes)?;
    check_memory(spec, heap, ram_bytes)?;
    Ok(ClusterPlan {
        nodes: nodes(spec, &octets, pool, heap),
        heap_reason,
    })
}

/// Checks the node count, the address prefix, vnodes and CPUs; returns the prefix's octets and
/// the CPUs the nodes may use (the host's, or the emulated host's first K).
fn check_layout(spec: &ClusterSpec, cores: usize) -> Result<(Vec<&str>, usize), PlanError> {
    let n = spec.node_count();
    if n == 0 {
        return Err(PlanError::NoNodes);
    }
    if n > MAX_NODES {
        return Err(PlanError::TooManyNodes(n));
    }
    let octets: Vec<&str> = spec.address_prefix.split('.').collect();
    if octets.len() != 4
        || !octets[3].is_empty()
        || octets[..3].iter().any(|o| o.parse::<u8>().is_err())
    {
        return Err(PlanError::BadAddressPrefix(spec.address_prefix.clone()));
    }
    if spec.cpus_per_node == Some(0) {
        return Err(PlanError::NoCpus);
    }
    if spec.vnodes == 0 || spec.vnodes > crate::spec::cluster::MAX_VNODES {
        return Err(PlanError::BadVnodes(spec.vnodes));
    }
    if let Some(h) = spec.host_cpus
        && (h == 0 || h > cores)
    {
        return Err(PlanError::BadHostCpus { asked: h, cores });
    }
    let pool = spec.host_cpus.unwrap_or(cores);
    if let Some(k) = spec.cpus_per_node
        && k > pool
    {
        return Err(PlanError::TooManyCpus {
            asked: k,
            cores: pool,
        });
    }
    Ok((octets, pool))
}

/// Each node's heap and how it was chosen: the spec's, else Cassandra's default for this host
/// divided among the co-located nodes (every node on this host would otherwise compute the
/// whole host's default, reference 002).
fn heap(spec: &ClusterSpec, ram_bytes: u64) -> Result<(MiB, String), PlanError> {
    let n = spec.node_count();
    let (heap, heap_reason) = match spec.jvm.heap {
        Some(h) => (h, format!("{h} per node (--heap)")),
        None => {
            let host = cassandra_default_heap(ram_bytes);
            let per_node = MiB((host.0 / n as u64).max(128));
            (
                per_node,
                format!(
                    "{per_node} per node: Cassandra's default {host} for this host divided among {n} nodes"
                ),
            )
        }
    };
    if heap.0 < 128 {
        return Err(PlanError::HeapTooSmall { heap });
    }
    // Every node of a local cluster runs on this host: their heaps together must fit in it.
    let ram = MiB(ram_bytes / (1024 * 1024));
    if ram.0 > 0 && heap.0.saturating_mul(n as u64) > ram.0 {
        return Err(PlanError::HeapTooLarge {
            heap,
            nodes: n,
            ram,
        });
    }
    if let Some(ng) = spec.jvm.new_gen
        && ng >= heap
    {
        return Err(PlanError::NewGenTooLarge { new_gen: ng, heap });
    }
    Ok((heap, heap_reason))
}

/// A node's memory limit, when given, must hold its heap and more, and the nodes' limits
/// together must fit in this host.
fn check_memory(spec: &ClusterSpec, heap: MiB, ram_bytes: u64) -> Result<(), PlanError> {
    let Some(memory) = spec.node_memory else {
        return Ok(());
    };
    let n = spec.node_count();
    let ram = MiB(ram_bytes / (1024 * 1024));
    let least = MiB(heap.0 + MIN_OFF_HEAP.0);
    if memory < least {
        return Err(PlanError::NodeMemoryTooSmall {
            memory,
            heap,
            least,
        });
    }
    if ram.0 > 0 && memory.0.saturating_mul(n as u64) > ram.0 {
        return Err(PlanError::NodeMemoryTooLarge {
            memory,
            nodes: n,
            ram,
        });
    }
    Ok(())
}

/// The nodes, DC by DC: addresses from the prefix, racks round-robin, tokens, ports, and CPUs
/// from `pool`.
fn nodes(spec: &ClusterSpec, octets: &[&str], pool: usize, heap: MiB) -> Vec<NodePlan> {
    let mut nodes = Vec::with_capacity(spec.node_count());
    for (dc_index, dc) in spec.dcs.iter().enumerate() {
        for i in 0..dc.nodes {
            let index = nodes.len() + 1;
            let address = match spec.lab {
                Some(_) => crate::spec::lab::node_address(dc_index, index),
                None => format!("{}{}", spec.address_prefix, index),
            };
            let cpus = match (spec.cpus_per_node, spec.host_cpus) {
                (Some(k), _) => (0..k).map(|j| ((index - 1) * k + j) % pool).collect(),
                (None, Some(h)) => (0..h).collect(),
                (None, None) => Vec::new(),
            };
            // With vnodes, node i of n owns positions i, n + i, 2n + i, … of n × vnodes.
            let vnode_tokens: Vec<i64> = match spec.vnodes {
                1 => Vec::new(),
                v => (0..v)
                    .map(|j| token_for(j * dc.nodes + i, dc.nodes * v, dc_index))
                    .collect(),
            };
            nodes.push(NodePlan {
                index,
                name: format!("node{index}"),
                address,
                dc: dc.name.clone(),
                rack: format!("rack{}", i % dc.racks + 1),
                token: vnode_tokens
                    .first()
                    .copied()
                    .unwrap_or(token_for(i, dc.nodes, dc_index)),
                vnode_tokens,
                jmx_port: jmx_port(octets, index),
                metrics_port: METRICS_PORT_BASE + index as u16,
                heap,
                new_gen: spec.jvm.new_gen,
                cpus,
            });
        }
    }
    nodes
}

impl ClusterPlan {
    /// Seed addresses with port, as written into every node's seed list: every node. With one
    /// seed per DC, the seed spent ~5 s of a 3-node start in its gossip shadow round waiting
    /// for a non-seed to finish its own (measured on 2 cores: all-UN in 18.2–19.5 s with one
    /// seed, 13.8–15.3 s with three), and a non-seed started before its seed listened could
    /// give up ("Unable to gossip with any peers"). Nodes never bootstrap here
    /// (`auto_bootstrap: false`), which is what a seed may not do. Derived, not stored, so
    /// clusters planned with one seed per DC start this way too.
    pub fn seeds(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| format!("{}:{STORAGE_PORT}", n.address))
            .collect()
    }
}

/// Node `index`'s local JMX port: `JMX_PORT_BASE + index` on 127.0.0., else one of 450
/// ranges of 100 ports from 20000 chosen by the prefix's middle octets (all JMX servers bind
/// 127.0.0.1, whatever the node's address).
pub fn jmx_port(octets: &[&str], index: usize) -> u16 {
    let octet = |i: usize| {
        octets
            .get(i)
            .and_then(|o| o.parse::<u32>().ok())
            .unwrap_or(0)
    };
    match octet(1) * 256 + octet(2) {
        0 => JMX_PORT_BASE + index as u16,
        k => (20_000 + (k % 450) * 100 + index as u32) as u16,
    }
}

/// Evenly spaced Murmur3 tokens per data centre, offset by the DC's index so that no two
/// nodes share a token (each DC owns the whole ring for its own replicas).
fn token_for(i: usize, nodes_in_dc: usize, dc_index: usize) -> i64 {
    let span: i128 = 1i128 << 64;
    let t = i64::MIN as i128 + span * i as i128 / nodes_in_dc as i128 + dc_index as i128 * 100;
    t as i64
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::spec::cluster::{CLUSTER_SPEC_VERSION, parse_dcs};
    use crate::spec::{CassandraSource, ClusterSpec, Gc, JvmSpec};

    pub(crate) fn spec(dcs: &str, heap: Option<u64>) -> ClusterSpec {
        ClusterSpec {
            schema_version: CLUSTER_SPEC_VERSION,
            name: "t".into(),
            cassandra: CassandraSource::Maven {
                version: "5.0.9".into(),
            },
            java: None,
            dcs: parse_dcs(dcs).unwrap(),
            jvm: JvmSpec {
                heap: heap.map(MiB),
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

    #[test]
    fn node_memory_must_hold_the_heap_and_more_and_fit_the_host() {
        let mut s = spec("dc1:3", Some(256));
        s.node_memory = Some(MiB(640));
        plan(&s, 8 << 30, 2).unwrap();
        s.node_memory = Some(MiB(600));
        let e = plan(&s, 8 << 30, 2).unwrap_err().to_string();
        assert!(e.contains("give at least 640M"), "{e}");
        s.node_memory = Some(MiB(4096));
        let e = plan(&s, 8 << 30, 2).unwrap_err().to_string();
        assert!(e.contains("× 3 nodes is more than"), "{e}");
    }

    const GIB: u64 = 1024 * 1024 * 1024;

    #[test]
    fn default_heap_follows_cassandra_formula() {
        // 2 GiB RAM: max(min(1024, 1024), min(512, 8192)) = 1024
        assert_eq!(cassandra_default_heap(2 * GIB), MiB(1024));
        // 24 GiB: max(min(12288, 1024), min(6144, 8192)) = 6144
        assert_eq!(cassandra_default_heap(24 * GIB), MiB(6144));
        // 64 GiB: max(1024, min(16384, 8192)) = 8192
        assert_eq!(cassandra_default_heap(64 * GIB), MiB(8192));
        // 1 GiB: max(min(512, 1024), min(256, 8192)) = 512
        assert_eq!(cassandra_default_heap(GIB), MiB(512));
    }

    #[test]
    fn default_heap_is_divided_among_colocated_nodes() {
        let p = plan(&spec("dc1:3", None), 24 * GIB, 2).unwrap();
        assert!(p.nodes.iter().all(|n| n.heap == MiB(2048)));
        assert!(p.heap_reason.contains("divided among 3 nodes"));
        let p = plan(&spec("dc1:3", Some(256)), 24 * GIB, 2).unwrap();
        assert!(p.nodes.iter().all(|n| n.heap == MiB(256)));
    }

    #[test]
    fn multi_dc_layout_tokens_and_seeds() {
        let p = plan(&spec("dc1:3:3,dc2:2", Some(256)), 24 * GIB, 2).unwrap();
        let summary: Vec<_> = p
            .nodes
            .iter()
            .map(|n| (n.address.as_str(), n.dc.as_str(), n.rack.as_str()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("127.0.0.1", "dc1", "rack1"),
                ("127.0.0.2", "dc1", "rack2"),
                ("127.0.0.3", "dc1", "rack3"),
                ("127.0.0.4", "dc2", "rack1"),
                ("127.0.0.5", "dc2", "rack1"),
            ]
        );
        // Every node is a seed.
        let seeds: Vec<String> = (1..=5).map(|i| format!("127.0.0.{i}:7000")).collect();
        assert_eq!(p.seeds(), seeds);
        let tokens: Vec<i64> = p.nodes.iter().map(|n| n.token).collect();
        // dc1: thirds of the ring; dc2: halves, offset by 100.
        assert_eq!(tokens[0], i64::MIN);
        assert_eq!(tokens[1], -3074457345618258603);
        assert_eq!(tokens[2], 3074457345618258602);
        assert_eq!(tokens[3], i64::MIN + 100);
        assert_eq!(tokens[4], 100);
        let mut unique = tokens.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), tokens.len());
        assert_eq!(p.nodes[4].jmx_port, 7205);
        assert_eq!(p.nodes[4].metrics_port, 7305);
    }

    #[test]
    fn cpu_pinning_wraps_around_the_host() {
        let mut s = spec("dc1:3", Some(256));
        s.cpus_per_node = Some(1);
        let p = plan(&s, 24 * GIB, 2).unwrap();
        let cpus: Vec<_> = p.nodes.iter().map(|n| n.cpus.clone()).collect();
        assert_eq!(cpus, vec![vec![0], vec![1], vec![0]]);
        s.cpus_per_node = Some(3);
        assert_eq!(
            plan(&s, 24 * GIB, 2),
            Err(PlanError::TooManyCpus { asked: 3, cores: 2 })
        );
    }

    #[test]
    fn vnodes_are_planned_interleaved_over_the_ring() {
        let mut s = spec("dc1:3,dc2:2", Some(256));
        s.vnodes = 4;
        let p = plan(&s, 24 * GIB, 2).unwrap();
        for dc in ["dc1", "dc2"] {
            let nodes: Vec<&NodePlan> = p.nodes.iter().filter(|n| n.dc == dc).collect();
            let mut all: Vec<(i64, usize)> = nodes
                .iter()
                .flat_map(|n| n.vnode_tokens.iter().map(move |t| (*t, n.index)))
                .collect();
            assert_eq!(all.len(), nodes.len() * 4);
            all.sort();
            // Evenly spaced, and the owners take turns around the ring.
            let gap = (all[1].0 as i128) - (all[0].0 as i128);
            for w in all.windows(2) {
                assert!(((w[1].0 as i128) - (w[0].0 as i128) - gap).abs() <= 1);
                assert_ne!(w[0].1, w[1].1);
            }
            for n in &nodes {
                assert_eq!(n.token, n.vnode_tokens[0]);
            }
        }
        // One token per node is the plan of old.
        s.vnodes = 1;
        assert!(
            plan(&s, 24 * GIB, 2)
                .unwrap()
                .nodes
                .iter()
                .all(|n| n.vnode_tokens.is_empty())
        );
        for v in [0, 257] {
            s.vnodes = v;
            assert_eq!(plan(&s, 24 * GIB, 2), Err(PlanError::BadVnodes(v)));
        }
    }

    #[test]
    fn jmx_ports_are_by_address_prefix() {
        let octets = |p: &'static str| p.split('.').collect::<Vec<_>>();
        assert_eq!(jmx_port(&octets("127.0.0."), 3), 7203);
        assert_eq!(jmx_port(&octets("127.0.1."), 3), 20103);
        assert_eq!(jmx_port(&octets("127.0.255."), 99), 20000 + 255 * 100 + 99);
        assert_eq!(jmx_port(&octets("127.1.0."), 1), 20000 + 256 * 100 + 1);
        let mut s = spec("dc1:2", Some(256));
        s.address_prefix = "127.0.2.".into();
        let p = plan(&s, 24 * GIB, 2).unwrap();
        assert_eq!(
            p.nodes.iter().map(|n| n.jmx_port).collect::<Vec<_>>(),
            [20201, 20202]
        );
    }

    #[test]
    fn a_smaller_host_is_its_first_cpus() {
        let mut s = spec("dc1:3", Some(256));
        s.host_cpus = Some(1);
        let p = plan(&s, 24 * GIB, 4).unwrap();
        let cpus: Vec<_> = p.nodes.iter().map(|n| n.cpus.clone()).collect();
        assert_eq!(cpus, vec![vec![0], vec![0], vec![0]]);
        s.host_cpus = Some(3);
        s.cpus_per_node = Some(2);
        let p = plan(&s, 24 * GIB, 4).unwrap();
        let cpus: Vec<_> = p.nodes.iter().map(|n| n.cpus.clone()).collect();
        assert_eq!(cpus, vec![vec![0, 1], vec![2, 0], vec![1, 2]]);
        s.cpus_per_node = Some(4);
        assert_eq!(
            plan(&s, 24 * GIB, 4),
            Err(PlanError::TooManyCpus { asked: 4, cores: 3 })
        );
        for h in [0, 5] {
            s.host_cpus = Some(h);
            assert_eq!(
                plan(&s, 24 * GIB, 4),
                Err(PlanError::BadHostCpus { asked: h, cores: 4 })
            );
        }
    }

    #[test]
    fn rejects_bad_specs() {
        let mut s = spec("dc1:1", Some(64));
        assert_eq!(
            plan(&s, 24 * GIB, 2),
            Err(PlanError::HeapTooSmall { heap: MiB(64) })
        );
        s.jvm.heap = Some(MiB(256));
        s.jvm.new_gen = Some(MiB(256));
        assert!(matches!(
            plan(&s, 24 * GIB, 2),
            Err(PlanError::NewGenTooLarge { .. })
        ));
        s.jvm.new_gen = None;
        s.address_prefix = "127.0.0".into();
        assert!(matches!(
            plan(&s, 24 * GIB, 2),
            Err(PlanError::BadAddressPrefix(_))
        ));
    }
}
