//! Load generators on Kubernetes: one `cqlbench run` split into N shards, as an Indexed Job.
//!
//! Every pod mounts the run's order (a ConfigMap holding the typed step as JSON,
//! `step::order`) and pod `i` runs `cqlbench shard /etc/cqlbench/order/order.json --index i
//! --out /results/ID/shard-i.json`, `i` coming from the pod's completion-index annotation
//! through the downward API (for a capacity search, `--out /results/ID/shard-i/capacity.json`:
//! one search, pod 0 coordinating). Every shard writes its result to one ReadWriteMany claim; a collector pod
//! mounting the same claim is where `kubectl cp` fetches them, and `cqlbench merge` adds their
//! histograms. Database credentials reach the pods from a Secret as `CQLBENCH_USERNAME` /
//! `CQLBENCH_PASSWORD`, never on a command line.
//!
//! Here the spec, the objects' names and [`render`]; the checks in `validate`, the objects in
//! `objects`, the printed workflow in `workflow`.

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Secret};

use super::KUBERNETES_VERSION;
use crate::error::Invalid;
use crate::load::session::Credentials;
use crate::step::order::Task;

mod objects;
pub mod validate;
mod workflow;

pub use objects::{order, order_config_map, order_volume, shard_args, with_tls_files};

impl LoadersSpec {
    /// The pods run one capacity search, not one run.
    pub fn is_capacity(&self) -> bool {
        self.task.is_capacity()
    }
}

/// Where every loader container mounts the order ConfigMap, and the order's key in it.
pub const ORDER_DIR: &str = "/etc/cqlbench/order";
pub const ORDER_KEY: &str = "order.json";

/// Where every container mounts the results claim.
pub const RESULTS_DIR: &str = "/results";
/// The environment variable holding the pod's shard index.
pub const SHARD_INDEX_ENV: &str = "SHARD_INDEX";
/// The annotation the Job controller sets to each pod's completion index.
pub const COMPLETION_INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
/// Keys of the credentials Secret (rendered or existing).
pub const USERNAME_KEY: &str = "username";
pub const PASSWORD_KEY: &str = "password";
/// Longest `--name`: the longest derived name, NAME-credentials, must stay a 63-character label
/// (NAME-order and NAME-collector are shorter).
pub const MAX_NAME_LEN: usize = 63 - "-credentials".len();
/// Kubernetes' limit on the completions of an Indexed Job.
pub const MAX_SHARDS: u32 = 100_000;
/// Where the loaders' database credentials come from.
#[derive(Debug, Clone)]
pub enum CredentialsSource {
    /// The cluster needs none.
    None,
    /// An existing Secret holding the keys `username` and `password`.
    Secret(String),
    /// Rendered into a new Secret, NAME-credentials (e.g. read from a credentials file).
    Given(Credentials),
}

/// The claim the shards write their results to.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultsClaim {
    /// Create NAME-results, ReadWriteMany, of this size (a Kubernetes quantity, e.g. `1Gi`), in
    /// this storage class [default: the cluster's default class].
    New {
        size: String,
        storage_class: Option<String>,
    },
    /// Use an existing claim; every loader pod and the collector mount it at once, so it must
    /// be ReadWriteMany (or all pods land on one node).
    Existing(String),
    /// No claim: each pod writes to a volume of its own (emptyDir) and, once its run has ended,
    /// prints its files to its log ([`super::pod_files`]), where `cqlbench k8s run` reads them
    /// through the API. Works on a cluster with no ReadWriteMany storage class.
    PodLogs,
}

/// The loader container's resources (Kubernetes quantities); absent ones are left unset.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resources {
    pub cpu_request: Option<String>,
    pub cpu_limit: Option<String>,
    pub memory_request: Option<String>,
    pub memory_limit: Option<String>,
}

/// An existing Secret with the client's TLS files under cert-manager's (and
/// `kubernetes.io/tls`'s) keys: `ca.crt`, and with `client_cert` also `tls.crt` and `tls.key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSecret {
    pub name: String,
    /// The pods present `tls.crt` / `tls.key` as their client certificate (mutual TLS).
    pub client_cert: bool,
}

/// Where a loader pod finds the TLS Secret's files.
pub const TLS_DIR: &str = "/etc/cqlbench/tls";

/// N `cqlbench run` shards as an Indexed Job, with their results claim and a collector pod.
#[derive(Debug, Clone)]
pub struct LoadersSpec {
    /// The Job's name (a DNS-1123 label of at most [`MAX_NAME_LEN`] characters); the other
    /// objects are named NAME-collector, NAME-results and NAME-credentials.
    pub name: String,
    pub namespace: String,
    /// A container image whose PATH holds `cqlbench` (and `sleep` and `tar`, for the collector
    /// and `kubectl cp`).
    pub image: String,
    /// Shards of the run: the Job's completions and its parallelism. All run at once: the
    /// shards of a run meet at a barrier before their main phase (`cqlbench run --shard`), so
    /// a Job running fewer pods than shards at a time could never complete.
    pub shards: u32,
    /// Pod failures before the Job fails (0: a failed shard is not rerun, late and alone).
    pub backoff_limit: u32,
    /// Names the run: the results directory, the merged file and a label on every object.
    pub run_id: String,
    /// What every pod runs (its shard, the run id and its result path set per pod): a run, or
    /// one capacity search run by the N pods, pod 0 coordinating (`--shard I/N`), whose
    /// capacity result is pod 0's. None of the options the renderer owns may be set
    /// (`validate::validate_task`).
    pub task: Task,
    pub credentials: CredentialsSource,
    /// Client TLS from an existing Secret, mounted read-only in every loader pod.
    pub tls: Option<TlsSecret>,
    pub results: ResultsClaim,
    pub resources: Resources,
    /// The pods use the node's network (a cluster reached at the node's own addresses, e.g. a
    /// local cqlbench cluster on the node's loopback).
    pub host_network: bool,
    /// How long the printed workflow waits for the Job to complete.
    pub wait_timeout: Duration,
    /// The file the manifests are written to, for `kubectl apply -f` (None: standard input).
    pub manifest: Option<String>,
}

/// One step of the printed workflow: what it does and the shell line that does it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub what: String,
    pub line: String,
}

/// The rendered objects and the commands that apply and collect them.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Only when the credentials were given (rendered from a file).
    pub secret: Option<Secret>,
    /// NAME-order: the pods' order.
    pub config_map: ConfigMap,
    /// Only when no existing claim was named.
    pub claim: Option<PersistentVolumeClaim>,
    pub job: Job,
    /// None with [`ResultsClaim::PodLogs`]: the pods' logs carry the results.
    pub collector: Option<Pod>,
    /// In order: apply, wait for the Job, wait for the collector, copy, merge, clean up.
    pub steps: Vec<Step>,
    header: String,
}

impl Rendered {
    /// Every object as one multi-document YAML stream (Secret, order, claim, Job, collector).
    pub fn yaml(&self) -> String {
        let mut docs = Vec::new();
        if let Some(secret) = &self.secret {
            docs.push(super::to_yaml(secret));
        }
        docs.push(super::to_yaml(&self.config_map));
        if let Some(claim) = &self.claim {
            docs.push(super::to_yaml(claim));
        }
        docs.push(super::to_yaml(&self.job));
        if let Some(collector) = &self.collector {
            docs.push(super::to_yaml(collector));
        }
        super::yaml_stream(&self.header, &docs)
    }
}

/// The collector pod's name.
pub fn collector_name(spec: &LoadersSpec) -> String {
    format!("{}-collector", spec.name)
}

/// The results claim's name (rendered or existing); None when the pods' logs carry the results.
pub fn claim_name(spec: &LoadersSpec) -> Option<String> {
    match &spec.results {
        ResultsClaim::New { .. } => Some(format!("{}-results", spec.name)),
        ResultsClaim::Existing(name) => Some(name.clone()),
        ResultsClaim::PodLogs => None,
    }
}

/// The order ConfigMap's name.
pub fn order_name(spec: &LoadersSpec) -> String {
    format!("{}-order", spec.name)
}

/// The credentials Secret's name, if any.
pub fn secret_name(spec: &LoadersSpec) -> Option<String> {
    match &spec.credentials {
        CredentialsSource::None => None,
        CredentialsSource::Secret(name) => Some(name.clone()),
        CredentialsSource::Given(_) => Some(format!("{}-credentials", spec.name)),
    }
}

/// Checks `spec` and builds its objects and workflow; refused input gets a one-line error.
pub fn render(spec: &LoadersSpec) -> Result<Rendered, Invalid> {
    let resources = validate::validate(spec)?;
    Ok(Rendered {
        secret: objects::secret(spec),
        config_map: objects::config_map(spec),
        claim: objects::claim(spec),
        job: objects::job(spec, resources),
        collector: (spec.results != ResultsClaim::PodLogs).then(|| objects::collector(spec)),
        steps: workflow::steps(spec)?,
        header: format!(
            "# cqlbench k8s loaders: run {}, {} shards (Kubernetes {KUBERNETES_VERSION} API).\n",
            spec.run_id, spec.shards
        ),
    })
}

#[cfg(test)]
mod tests;
