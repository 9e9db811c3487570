//! A cluster spec rendered for K8ssandra: one `K8ssandraCluster` (version, data centres and
//! racks pinned to zones, JVM heap / new generation / collector, container resources, each
//! data centre's data volume) and one StorageClass per distinct volume type. Pure: nothing here
//! talks to a cluster, and no K8ssandra operator was available to apply the result to.

use std::collections::BTreeMap;

use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::k8ssandra::{
    API_VERSION, CassandraClusterTemplate, CassandraConfig, DatacenterMeta, DatacenterTemplate,
    GcName, JvmOptions, K8ssandraCluster, KIND, OPERATOR_COMMIT, Rack, Resources, Spec,
    StorageConfig, VolumeClaimSpec, VolumeResources, ZONE_LABEL,
};
use super::storage::{Cloud, check, storage_class};
use super::{
    COMPONENT_LABEL, KUBERNETES_VERSION, NAME_LABEL, binary_mib, dns_label, label_value, quantity,
};
use crate::error::Invalid;
use crate::prices::catalog::Catalog;
use crate::spec::MiB;
use crate::spec::cluster::{DcSpec, Gc};
use crate::spec::storage::{StorageArg, Volume};

/// The label naming the cluster an object belongs to.
pub const CLUSTER_LABEL: &str = "cqlbench.io/cluster";

/// Longest `--name`: the operator derives service and pod names from it and the data centre's.
pub const MAX_NAME: usize = 40;
/// Longest data centre name, for the same reason.
pub const MAX_DC_NAME: usize = 20;

/// What `cqlbench k8s cluster` renders.
#[derive(Debug, Clone, PartialEq)]
pub struct K8sClusterSpec {
    /// The K8ssandraCluster's name (also Cassandra's cluster name).
    pub name: String,
    pub namespace: String,
    pub cloud: Cloud,
    /// Cassandra `X.Y.Z`.
    pub version: String,
    pub dcs: Vec<DcSpec>,
    pub heap: Option<MiB>,
    pub new_gen: Option<MiB>,
    pub gc: Gc,
    /// At most one without a data centre (the default); every data centre needs a volume.
    pub storage: Vec<StorageArg>,
    /// One zone per rack, in rack order; empty leaves racks unpinned.
    pub zones: Vec<String>,
    /// The cassandra container's CPU, request and limit.
    pub cpu: Option<String>,
    /// The cassandra container's memory, request and limit.
    pub memory: Option<String>,
}

/// The objects, in the order they must be applied.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub storage_classes: Vec<StorageClass>,
    pub cluster: K8ssandraCluster,
    header: String,
}

impl Rendered {
    /// StorageClasses, then the K8ssandraCluster, as one YAML stream.
    pub fn yaml(&self) -> String {
        let mut docs: Vec<String> = self.storage_classes.iter().map(super::to_yaml).collect();
        docs.push(super::to_yaml(&self.cluster));
        super::yaml_stream(&self.header, &docs)
    }
}

/// Checks `spec` and builds its objects; refused input gets a one-line error.
pub fn render(spec: &K8sClusterSpec, catalog: &Catalog) -> Result<Rendered, Invalid> {
    validate(spec)?;
    let volumes = volumes(spec, catalog)?;
    let labels = |component: &str| {
        BTreeMap::from([
            (NAME_LABEL.to_string(), "cqlbench".to_string()),
            (COMPONENT_LABEL.to_string(), component.to_string()),
            (CLUSTER_LABEL.to_string(), spec.name.clone()),
        ])
    };
    let mut classes: Vec<StorageClass> = Vec::new();
    let mut datacenters = Vec::new();
    for (dc, volume) in spec.dcs.iter().zip(&volumes) {
        let class = format!("{}-{}", spec.name, volume.class_suffix());
        if !classes
            .iter()
            .any(|c| c.metadata.name.as_ref() == Some(&class))
        {
            classes.push(storage_class(spec.cloud, &class, labels("storage"), volume));
        }
        datacenters.push(datacenter(spec, dc, volume, class));
    }
    let cluster = K8ssandraCluster {
        api_version: API_VERSION.to_string(),
        kind: KIND.to_string(),
        metadata: ObjectMeta {
            name: Some(spec.name.clone()),
            namespace: Some(spec.namespace.clone()),
            labels: Some(labels("cassandra")),
            ..Default::default()
        },
        spec: Spec {
            cassandra: CassandraClusterTemplate {
                server_version: spec.version.clone(),
                resources: resources(spec)?,
                config: Some(CassandraConfig {
                    jvm_options: jvm_options(spec),
                }),
                datacenters,
            },
        },
    };
    let nodes: usize = spec.dcs.iter().map(|d| d.nodes).sum();
    Ok(Rendered {
        storage_classes: classes,
        cluster,
        header: format!(
            "# cqlbench k8s cluster: K8ssandraCluster {} ({} nodes, Cassandra {}) on {}.\n\
             # K8ssandraCluster fields as in k8ssandra-operator's CRD at commit {}; \
             StorageClasses: Kubernetes {KUBERNETES_VERSION} API.\n",
            spec.name,
            nodes,
            spec.version,
            spec.cloud,
            &OPERATOR_COMMIT[..12],
        ),
    })
}

fn validate(spec: &K8sClusterSpec) -> Result<(), Invalid> {
    dns_label("--name", &spec.name, MAX_NAME)?;
    dns_label("--namespace", &spec.namespace, 63)?;
    version(&spec.version)?;
    if spec.dcs.is_empty() {
        return Err(crate::invalid!("--dcs: give at least one data centre"));
    }
    for dc in &spec.dcs {
        dns_label("data centre name", &dc.name, MAX_DC_NAME)?;
        if i32::try_from(dc.nodes).is_err() {
            return Err(crate::invalid!("data centre '{}': too many nodes", dc.name));
        }
    }
    if !spec.zones.is_empty() {
        for (i, z) in spec.zones.iter().enumerate() {
            label_value("--zones: zone", z)?;
            if spec.zones[..i].contains(z) {
                return Err(crate::invalid!("--zones: zone '{z}' is named twice"));
            }
        }
        if let Some(dc) = spec.dcs.iter().find(|d| d.racks != spec.zones.len()) {
            return Err(crate::invalid!(
                "--zones: {} zones given but data centre '{}' has {} racks: give one zone per \
                 rack (--dcs NAME:NODES:RACKS)",
                spec.zones.len(),
                dc.name,
                dc.racks
            ));
        }
    }
    if spec.gc == Gc::Parallel {
        return Err(crate::invalid!(
            "--gc parallel: K8ssandra's jvmOptions.gc has no Parallel collector: give g1 or zgc"
        ));
    }
    match (spec.heap, spec.new_gen) {
        (None, Some(_)) => {
            return Err(crate::invalid!(
                "--new-gen needs --heap (the young generation is part of the heap)"
            ));
        }
        (Some(heap), Some(ng)) if ng.0 >= heap.0 => {
            return Err(crate::invalid!(
                "--new-gen {ng} must be smaller than --heap {heap}"
            ));
        }
        _ => {}
    }
    if let (Some(heap), Some(memory)) = (spec.heap, &spec.memory)
        && let Some(mem_mib) = binary_mib(memory)
        && heap.0 >= mem_mib
    {
        // Kubernetes' k/M/G/T are powers of ten, the JVM's powers of two: say so when the
        // units differ (`--memory 8G` is 7,629 MiB, less than `--heap 8G`).
        let decimal = memory.trim().ends_with(['k', 'M', 'G', 'T', 'P', 'E']);
        let units = if decimal {
            format!(
                "; --memory {memory} is {mem_mib} MiB (Kubernetes' {} is a power of ten; write Gi for the JVM's)",
                memory.trim().chars().last().unwrap_or('G')
            )
        } else {
            String::new()
        };
        return Err(crate::invalid!(
            "--heap {heap} must be smaller than the container's --memory {memory} (off-heap \
             memory, the page cache and the management API need room){units}"
        ));
    }
    Ok(())
}

/// `X.Y.Z` of a Cassandra line K8ssandra supports: 3.11, 4.x or 5.x.
fn version(v: &str) -> Result<(), Invalid> {
    let parts: Vec<&str> = v.split('.').collect();
    let numeric = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()));
    let supported = numeric && matches!((parts[0], parts[1]), ("3", "11") | ("4", _) | ("5", _));
    if !supported {
        return Err(crate::invalid!(
            "--version '{v}' is not a Cassandra version K8ssandra runs: give X.Y.Z of 3.11, 4.x \
             or 5.x, e.g. 5.0.4"
        ));
    }
    Ok(())
}

/// Each data centre's volume, in `spec.dcs` order.
fn volumes(spec: &K8sClusterSpec, catalog: &Catalog) -> Result<Vec<Volume>, Invalid> {
    let mut default: Option<&StorageArg> = None;
    let mut named: BTreeMap<&str, &StorageArg> = BTreeMap::new();
    for arg in &spec.storage {
        check(spec.cloud, catalog, arg)?;
        match &arg.dc {
            None if default.is_some() => {
                return Err(crate::invalid!(
                    "--storage '{}': a second default volume: name its data centre (DC=DISK:SIZE)",
                    arg.text
                ));
            }
            None => default = Some(arg),
            Some(dc) => {
                if !spec.dcs.iter().any(|d| &d.name == dc) {
                    let known: Vec<&str> = spec.dcs.iter().map(|d| d.name.as_str()).collect();
                    return Err(crate::invalid!(
                        "--storage '{}': no data centre '{dc}' in --dcs (known: {})",
                        arg.text,
                        known.join(", ")
                    ));
                }
                if named.insert(dc, arg).is_some() {
                    return Err(crate::invalid!(
                        "--storage '{}': data centre '{dc}' is given a volume twice",
                        arg.text
                    ));
                }
            }
        }
    }
    spec.dcs
        .iter()
        .map(|dc| {
            named
                .get(dc.name.as_str())
                .copied()
                .or(default)
                .map(|a| a.volume.clone())
                .ok_or_else(|| {
                    crate::invalid!(
                        "data centre '{}' has no volume: give --storage DISK:SIZE (every data \
                         centre) or --storage {}=DISK:SIZE",
                        dc.name,
                        dc.name
                    )
                })
        })
        .collect()
}

fn datacenter(
    spec: &K8sClusterSpec,
    dc: &DcSpec,
    volume: &Volume,
    class: String,
) -> DatacenterTemplate {
    let racks = (0..dc.racks)
        .map(|i| Rack {
            name: format!("r{}", i + 1),
            node_affinity_labels: spec
                .zones
                .get(i)
                .map(|z| BTreeMap::from([(ZONE_LABEL.to_string(), z.clone())])),
        })
        .collect();
    DatacenterTemplate {
        metadata: DatacenterMeta {
            name: dc.name.clone(),
        },
        size: i32::try_from(dc.nodes).expect("checked in validate"),
        racks,
        storage_config: StorageConfig {
            cassandra_data_volume_claim_spec: VolumeClaimSpec {
                storage_class_name: class,
                access_modes: vec!["ReadWriteOnce".to_string()],
                resources: VolumeResources {
                    requests: BTreeMap::from([(
                        "storage".to_string(),
                        Quantity(volume.quantity()),
                    )]),
                },
            },
        },
    }
}

fn resources(spec: &K8sClusterSpec) -> Result<Option<Resources>, Invalid> {
    let mut both = BTreeMap::new();
    if let Some(cpu) = &spec.cpu {
        both.insert("cpu".to_string(), quantity("--cpu", cpu, "7500m or 8")?);
    }
    if let Some(memory) = &spec.memory {
        both.insert(
            "memory".to_string(),
            quantity("--memory", memory, "16Gi or 60Gi")?,
        );
    }
    Ok((!both.is_empty()).then(|| Resources {
        requests: Some(both.clone()),
        limits: Some(both),
    }))
}

/// A heap size as a quantity: `31Gi`, `500Mi`.
fn heap_quantity(m: MiB) -> Quantity {
    Quantity(if m.0.is_multiple_of(1024) {
        format!("{}Gi", m.0 / 1024)
    } else {
        format!("{}Mi", m.0)
    })
}

fn jvm_options(spec: &K8sClusterSpec) -> JvmOptions {
    let mut o = JvmOptions {
        heap_initial_size: spec.heap.map(heap_quantity),
        heap_max_size: spec.heap.map(heap_quantity),
        ..Default::default()
    };
    match spec.gc {
        // The G1 settings of reference 000 (and of local clusters' `--gc g1`).
        Gc::G1 => {
            o.gc = Some(GcName::G1GC);
            o.gc_g1_max_gc_pause_ms = Some(300);
            o.gc_g1_initiating_heap_occupancy_percent = Some(70);
            o.gc_g1_rset_updating_pause_time_percent = Some(5);
        }
        Gc::Zgc => o.gc = Some(GcName::ZGC),
        Gc::Parallel => unreachable!("refused in validate"),
    }
    if let Some(ng) = spec.new_gen {
        o.additional_jvm_server_options = Some(vec![format!("-Xmn{}M", ng.0)]);
    }
    o
}

#[cfg(test)]
mod tests;
