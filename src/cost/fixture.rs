//! Results measured on a local cluster of a given shape, for the cost tests: a capacity search
//! and its steps' run results, whose fingerprints record the cluster and its host.

use std::path::{Path, PathBuf};

use crate::result::RunResult;
use crate::result::fixture::{RunShape, capacity_at, run};
use crate::spec::cluster::CLUSTER_SPEC_VERSION;
use crate::spec::{CassandraSource, ClusterSpec, DcSpec, Gc, JvmSpec};

/// The host and cluster a fixture result was measured on.
#[derive(Debug, Clone)]
pub struct Shape {
    pub nodes: usize,
    pub host_cpus: usize,
    pub host_ram_gib: u64,
    /// `--cpus-per-node` and `--node-memory` (MiB) of the local cluster.
    pub cpus_per_node: Option<usize>,
    pub node_memory_mib: Option<u64>,
}

impl Shape {
    /// One node on a 2-CPU, 8 GiB laptop, nothing emulated.
    pub fn laptop() -> Shape {
        Shape {
            nodes: 1,
            host_cpus: 2,
            host_ram_gib: 8,
            cpus_per_node: None,
            node_memory_mib: None,
        }
    }
}

/// A local cluster's spec of `nodes` nodes in one data centre.
pub fn cluster_spec(s: &Shape) -> ClusterSpec {
    ClusterSpec {
        schema_version: CLUSTER_SPEC_VERSION,
        name: "laptop".into(),
        cassandra: CassandraSource::Maven {
            version: "5.0.9".into(),
        },
        java: None,
        dcs: vec![DcSpec {
            name: "dc1".into(),
            nodes: s.nodes,
            racks: 1,
        }],
        jvm: JvmSpec {
            heap: None,
            new_gen: None,
            gc: Gc::G1,
            extra_args: vec![],
        },
        cpus_per_node: s.cpus_per_node,
        host_cpus: None,
        vnodes: 1,
        address_prefix: "127.0.0.".into(),
        yaml_overrides: Default::default(),
        storage: Default::default(),
        node_memory: s.node_memory_mib.map(crate::spec::MiB),
        tls: None,
        lab: None,
    }
}

/// `run` as if it went to a local cluster shaped `s`.
pub fn on_cluster(run: &mut RunResult, s: &Shape) {
    run.fingerprint.cluster = Some(cluster_spec(s));
    run.fingerprint.host.cores = s.host_cpus;
    run.fingerprint.host.ram_bytes = s.host_ram_gib << 30;
    run.target.cluster = Some("laptop".into());
    run.target.hosts = (1..=s.nodes).map(|n| format!("127.0.0.{n}")).collect();
}

/// A closed-loop run of `env` at `ops_per_s` on a local cluster shaped `s`.
pub fn throughput_run(env: &str, ops_per_s: f64, s: &Shape) -> RunResult {
    let mut r = run(
        env,
        &RunShape {
            ops_per_s,
            ops_per_s_sd: 0.0,
            ..RunShape::default()
        },
    );
    on_cluster(&mut r, s);
    r
}

/// Writes `STEM.json` into `dir`, a capacity search of `env` that passed at `ops` ops/s, and
/// its steps' run results beside it (`STEM-step-N.json`), measured on a cluster shaped `s`.
pub fn write_capacity(
    dir: &Path,
    stem: &str,
    env: &str,
    ops: f64,
    s: &Shape,
) -> std::io::Result<PathBuf> {
    let mut search = capacity_at(env, ops);
    for step in &mut search.steps {
        let name = format!("{stem}-step-{}.json", step.index);
        let mut r = throughput_run(env, step.summary.ops_per_s, s);
        r.phases[0].summary = Some(step.summary.clone());
        r.write(&dir.join(&name))?;
        step.result = PathBuf::from(name);
    }
    let path = dir.join(format!("{stem}.json"));
    search.write(&path)?;
    Ok(path)
}
