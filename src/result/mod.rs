//! Results: what every measurement leaves behind, as versioned JSON documents read and written
//! through one module ([`file`], with the typed [`ResultError`]). Here the run result, written
//! as the run goes: it carries its specs, the environment fingerprint, per-interval series and
//! raw histograms, so any report can be re-rendered from the file alone. [`capacity`] holds the
//! capacity-search result; the probe result is [`ProbeResult`] (built by [`crate::probe`]).
//!
//! The run result's parts, re-exported here: a phase (`phase`: its load and summary) and its
//! intervals (`interval`), its warnings (`warning`), and the shards of a split run (`shard`).

pub mod capacity;
pub mod fault;
pub mod file;
/// Synthetic results for tests (unit and CLI) and the report showcase; not in a release build.
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod hlog;
pub mod intervals_csv;
pub mod ledger;
pub mod probe;
pub mod scaling;
pub mod series;
pub mod server_latency;
pub mod verify;

mod interval;
mod phase;
mod shard;
mod streamed;
mod warning;

pub use capacity::CapacityResult;
pub use file::{
    ResultError, ResultFile, read, read_capacity, read_probe, read_run, read_scaling, read_verify,
};
pub use interval::{ByOp, Coarsening, IntervalOp, IntervalRecord, kept_width_s, kinds_in};
pub use phase::{DriverCounts, OpSummary, PhaseResult, PhaseSummary};
pub use probe::ProbeResult;
pub use scaling::ScalingResult;
pub use shard::{Merged, ShardFigures, ShardOf};
pub use streamed::Spilled;
pub use verify::VerifyResult;
pub use warning::{
    Warning, compaction_warning, host_cpu, host_warning, measured_window, phase_warnings,
};

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::host::HostFacts;
use crate::spec::{ClusterSpec, WorkloadSpec};

/// Version of the [`RunResult`] layout.
pub const RESULT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Completed,
    /// Stopped by Ctrl-C / SIGTERM; what was measured is kept.
    Interrupted,
    /// Stopped because `--max-errors` was exceeded.
    TooManyErrors,
    Failed {
        reason: String,
    },
}

/// Where the load went, as the result records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRecord {
    pub hosts: Vec<String>,
    pub local_dc: Option<String>,
    /// Name of the local cluster, when run with `--cluster`.
    pub cluster: Option<String>,
    /// The network namespace the client ran in (a lab's loader namespace), if not this
    /// host's own network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netns: Option<String>,
    /// Which of the cluster's nodes the client reached once connected; None in results
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<Reach>,
}

/// Which nodes of the data centre the client routes to the cluster reports
/// (`system.local` and `system.peers_v2`, as the driver read them), and to which of them the
/// driver held connections once connected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    /// The client's data centre; None when every node counts.
    pub dc: Option<String>,
    /// The nodes reported there, by the address the driver connects to.
    pub nodes: Vec<String>,
    /// Those of them the driver held a connection to.
    pub connected: Vec<String>,
    /// Nodes reported in other data centres (not routed to).
    #[serde(default)]
    pub other_dcs: usize,
}

impl Reach {
    /// The reported nodes the driver holds no connection to.
    pub fn unreachable(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| !self.connected.contains(n))
            .cloned()
            .collect()
    }

    /// Every reported node of the data centre reached.
    pub fn complete(&self) -> bool {
        self.unreachable().is_empty()
    }

    /// `connected to 3 of 3 nodes in dc1`.
    pub fn line(&self) -> String {
        let mut l = format!(
            "connected to {} of {} node{}",
            self.connected.len(),
            self.nodes.len(),
            if self.nodes.len() == 1 { "" } else { "s" }
        );
        if let Some(dc) = &self.dc {
            l.push_str(&format!(" in {dc}"));
        }
        let missing = self.unreachable();
        if !missing.is_empty() {
            l.push_str(&format!(" (unreachable: {})", missing.join(", ")));
        }
        l
    }
}

/// What the numbers depend on besides the specs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub cqlbench_version: String,
    pub driver: String,
    pub cassandra_version: Option<String>,
    /// The Java version of the node the client asked (`system_views.system_properties`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java_version: Option<String>,
    /// The settings of the node the client asked, by name, from `system_views.settings`
    /// (Cassandra 4.0 and later; empty before, or when the table cannot be read). Settings
    /// named like a password are left out.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub server_settings: std::collections::BTreeMap<String, String>,
    /// The cluster's nodes as the node asked sees them (`system.local`, `system.peers_v2`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeFacts>,
    /// The workload's keyspace and tables as the server has them once the run created them
    /// (`system_schema`: replication, compaction, compression, caching, …), flattened to
    /// name → value (`keyspace.replication`, `TABLE.compaction`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub schema: std::collections::BTreeMap<String, String>,
    pub host: HostFacts,
    /// The local cluster's spec (JVM flags, heap, cassandra.yaml overrides), if any.
    pub cluster: Option<ClusterSpec>,
    /// The newest complete host probe with the same environment label, if one exists.
    #[serde(default)]
    pub probe: Option<ProbeRef>,
    /// How the client connected: TLS (files and checks, never keys' contents) and the driver
    /// settings; None in results written before they were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<crate::spec::client::ClientSpec>,
    /// How the client binary was built; None in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_build: Option<ClientBuild>,
    /// The local cluster's last start (every node it started ready: CQL listening, the others
    /// seen UP); None for a cluster cqlbench did not start, or results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_start: Option<ClusterStart>,
}

/// How long a local cluster's start took, as `cluster start` (or a scenario) measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterStart {
    pub started_unix_s: u64,
    /// From the first node spawned to the last one ready.
    pub took_s: f64,
    /// The nodes it started.
    pub nodes: Vec<String>,
}

/// How the client binary that wrote a result was built: an unoptimised build (opt-level 0,
/// as the quickstart's `quick` profile and `cargo build` without `--release` make) spends
/// several times the release build's CPU per operation, so at high rates it measures itself
/// rather than the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientBuild {
    /// Cargo's profile: `release`, `quick`, `debug` (dev).
    pub profile: String,
    /// Its optimisation level (`0`, `1`, `2`, `3`, `s`, `z`).
    pub opt_level: String,
    pub debug_assertions: bool,
}

impl ClientBuild {
    /// This binary's build.
    pub fn current() -> ClientBuild {
        ClientBuild {
            profile: env!("CQLBENCH_BUILD_PROFILE").to_string(),
            opt_level: env!("CQLBENCH_BUILD_OPT_LEVEL").to_string(),
            debug_assertions: cfg!(debug_assertions),
        }
    }

    /// Built without optimisation of its own code.
    pub fn unoptimised(&self) -> bool {
        self.opt_level == "0"
    }
}

/// One node of the cluster, as `system.local` / `system.peers_v2` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFacts {
    /// Its broadcast address (`peer` for the others).
    pub address: String,
    pub dc: Option<String>,
    pub rack: Option<String>,
    pub release_version: Option<String>,
    /// How many tokens it owns (vnodes).
    pub tokens: usize,
    /// Its settings (`system_views.settings`, asked of the node itself) that differ from the
    /// node the client asked's ([`Fingerprint::server_settings`]): name → this node's value,
    /// [`ABSENT`] where it has no such setting. Empty for the node asked, for nodes like it,
    /// and where unread.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings_differ: std::collections::BTreeMap<String, String>,
    /// Its settings could not be read (the node down, or its table not there).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settings_unread: bool,
}

/// The value a setting has on a node that does not have it.
pub const ABSENT: &str = "(absent)";

/// Settings that name a node or a cluster rather than configure it (its addresses, token,
/// seeds, name and directories) differ between any two nodes or clusters by construction, and
/// a Java object's default `Class@1a2b3c` text differs between processes: none is compared.
pub fn compared_setting(name: &str, values: &[Option<&String>]) -> bool {
    const IDENTITY: [&str; 7] = [
        "cluster_name",
        "listen_address",
        "rpc_address",
        "broadcast_address",
        "broadcast_rpc_address",
        "initial_token",
        "seed_provider",
    ];
    let object_identity = |v: &str| {
        v.rsplit_once('@').is_some_and(|(class, hash)| {
            class.contains('.') && !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit())
        })
    };
    // `seed_provider` on 4.x, `seed_provider.parameters` and `.class_name` on 5.0.
    let base = name.split('.').next().unwrap_or(name);
    !(IDENTITY.contains(&base)
        || name.ends_with("_directory")
        || name.ends_with("_directories")
        || name.ends_with("_dir")
        || values.iter().flatten().any(|v| object_identity(v)))
}

/// The settings of `other` that differ from `asked`'s: name → `other`'s value ([`ABSENT`]
/// where `other` has no such setting), leaving out those that differ by nature
/// ([`compared_setting`]).
pub fn settings_differing(
    asked: &std::collections::BTreeMap<String, String>,
    other: &std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeMap<String, String> {
    let mut out: std::collections::BTreeMap<String, String> = other
        .iter()
        .filter(|(k, v)| asked.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for k in asked.keys().filter(|k| !other.contains_key(*k)) {
        out.insert(k.clone(), ABSENT.to_string());
    }
    out.retain(|k, _| compared_setting(k, &[asked.get(k), other.get(k)]));
    out
}

/// A host probe a run refers to: where it is and its headline figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRef {
    pub path: std::path::PathBuf,
    pub summary: crate::result::probe::Summary,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    /// Environment label used to group results in reports.
    pub env: String,
    pub started_unix_s: u64,
    pub finished_unix_s: Option<u64>,
    pub status: RunStatus,
    pub workload: WorkloadSpec,
    pub target: TargetRecord,
    pub fingerprint: Fingerprint,
    pub phases: Vec<PhaseResult>,
    pub warnings: Vec<Warning>,
    /// Server and host metrics sampled during the run, if sampling was on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Box<crate::result::series::MetricSeries>>,
    /// The rate was given as a share of a throughput result (`--rate 35% --of …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_share: Option<RateShare>,
    /// Faults applied during the main phase, on the run's time axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::result::fault::FaultEvent>,
    /// This result is one shard of a run split across processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
    /// This result is the merge of a run's shards (`cqlbench merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Merged>,
    /// `--verify`: the main phase's reads compared with the generator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_verified: Option<verify::ReadsVerified>,
    /// The id its acknowledged-write ledger (`NAME.ledger`) carries: `verify` reads a ledger
    /// only for the run that wrote it (none in results written before ledgers had one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_id: Option<String>,
    /// The run's tags (`--tag`), for the catalogue.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// A fill (`cqlbench fill`): what it wrote and whether the nodes reached the target. Its
    /// workload's `rows` is the fill's key space (far more than it writes), not its rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<FillRecord>,
    /// Each node's coordinator latency for the run's tables over the main phase (Cassandra
    /// 4.0+; empty before, or when the nodes could not be asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_latency: Vec<server_latency::ServerLatency>,
}

/// What a fill wrote and reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FillRecord {
    /// The writes that succeeded: the rows later steps read (`{fill.rows}`).
    pub rows_written: u64,
    /// The data size each node was to hold, in MiB.
    pub target_mib: f64,
    /// The nodes' mean load reached the target (else the fill ended at its --duration or
    /// --ops bound, or was interrupted).
    pub reached: bool,
    /// The nodes' mean load at the end, in MiB, as last read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_load_mib: Option<f64>,
}

/// An open-loop rate given as a share of a measured throughput: runs at the same share of
/// each environment's own throughput are one scenario in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateShare {
    /// 0.35 for 35%.
    pub share: f64,
    /// The throughput result it is a share of, and that result's throughput.
    pub of: std::path::PathBuf,
    pub of_ops_per_s: f64,
}

/// The name of a run's measured phase (after any warmup and rampup).
pub const MAIN_PHASE: &str = "main";

impl RunResult {
    /// Writes the result atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::write_json(path, self)
    }

    /// Writes the result atomically with its spilled records and samples streamed in, each
    /// before those in memory ([`Spilled`]).
    pub fn write_with(&self, path: &Path, spilled: Spilled<'_>) -> std::io::Result<()> {
        let value = serde_json::to_value(self).map_err(std::io::Error::other)?;
        crate::fsutil::write_json(
            path,
            &streamed::Doc {
                value: &value,
                spilled,
            },
        )
    }

    /// Reads a run result file, checking its kind and version.
    pub fn read(path: &Path) -> Result<RunResult, ResultError> {
        file::read_run(path)
    }

    /// The main phase (the last one so named), if the run got that far.
    pub fn main_phase(&self) -> Option<&PhaseResult> {
        self.phases.iter().rev().find(|p| p.name == MAIN_PHASE)
    }

    /// The main phase, to change.
    pub fn main_phase_mut(&mut self) -> Option<&mut PhaseResult> {
        self.phases.iter_mut().rev().find(|p| p.name == MAIN_PHASE)
    }

    /// The main phase's summary, if the run got that far.
    pub fn main_summary(&self) -> Option<&PhaseSummary> {
        self.main_phase().and_then(|p| p.summary.as_ref())
    }
}
