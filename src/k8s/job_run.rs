//! `cqlbench k8s run`: the loaders' Indexed Job applied, followed, collected and merged through
//! the Kubernetes API (kube-rs), then deleted — no kubectl, no shared volume.
//!
//! Each pod runs its shard with its results on a volume of its own and prints them to its log
//! once done ([`super::pod_files`]); the log of every pod is read back through the API into one
//! local directory, laid out as the pods wrote it under `/results/RUN_ID`:
//! `shard-I.json` (+ `.hlog`, ledger, CSV) for a run, merged into `RUN_ID.json`; or
//! `shard-I/capacity.json` and its steps for a capacity search, whose result is pod 0's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams, PropagationPolicy};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use tokio::sync::mpsc;

use super::loaders::{COMPLETION_INDEX_ANNOTATION, LoadersSpec, Rendered, ResultsClaim};
use super::pod_files;
use crate::cancel::Cancel;
use crate::error::Invalid;
use crate::result::RunResult;

/// How often the Job and its pods are read.
const POLL: Duration = Duration::from_secs(1);
/// The label the Job controller puts on each of its pods.
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// Container states that will not get better by waiting.
const STUCK: [&str; 6] = [
    "ErrImageNeverPull",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
];

/// What to run, where, and where its results go.
#[derive(Debug, Clone)]
pub struct JobRun {
    /// The loaders (their results must be [`ResultsClaim::PodLogs`]).
    pub spec: LoadersSpec,
    /// The kubeconfig to use [default: $KUBECONFIG, ~/.kube/config, or the pod's service account].
    pub kubeconfig: Option<PathBuf>,
    /// The local directory the pods' files are collected in; it must not exist yet.
    pub dir: PathBuf,
    /// Leave the Job (and its pods and Secret) in the cluster.
    pub keep: bool,
}

/// What `k8s run` tells its caller as it goes.
pub enum JobEvent<'a> {
    Created {
        job: &'a str,
        namespace: &'a str,
        shards: u32,
    },
    Pod {
        index: u32,
        pod: &'a str,
        phase: &'a str,
        node: &'a str,
    },
    /// A line of a pod's own output (its results blocks left out).
    Line {
        index: u32,
        line: &'a str,
    },
    Collected {
        index: u32,
        files: usize,
        bytes: usize,
    },
    Deleted {
        job: &'a str,
    },
}

/// The collected result.
#[derive(Debug)]
pub enum Outcome {
    /// The shards' results merged into one, written to this path.
    Run(Box<RunResult>, PathBuf),
    /// The capacity search's result (pod 0's), at this path.
    Capacity(PathBuf),
}

#[derive(Debug, thiserror::Error)]
pub enum JobRunError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error("the Kubernetes configuration: {0}")]
    Config(String),
    #[error("{what}: {source}")]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("shard {index} (pod {pod}) {how}{}", if last.is_empty() { String::new() } else { format!(": {last}") })]
    Shard {
        index: u32,
        pod: String,
        how: String,
        last: String,
    },
    #[error("the probe of node {node} (pod {pod}) {how}{}", if last.is_empty() { String::new() } else { format!(": {last}") })]
    Probe {
        node: String,
        pod: String,
        how: String,
        last: String,
    },
    #[error("the Job {job} did not complete within {timeout:?}")]
    Timeout { job: String, timeout: Duration },
    #[error("stopped: the Job {job} was deleted")]
    Cancelled { job: String },
}

pub(super) fn api(what: impl Into<String>) -> impl FnOnce(kube::Error) -> JobRunError {
    let what = what.into();
    move |source| JobRunError::Api { what, source }
}

/// Applies the Job, waits for every shard, collects and merges their results, deletes the Job
/// (unless `keep`), on a runtime of its own.
pub fn run(
    j: &JobRun,
    cancel: &Cancel,
    on: &mut dyn FnMut(JobEvent),
) -> Result<Outcome, JobRunError> {
    if j.spec.results != ResultsClaim::PodLogs {
        return Err(crate::invalid!("k8s run collects the results from the pods' logs").into());
    }
    let rendered = super::loaders::render(&j.spec)?;
    if j.dir.exists() {
        return Err(crate::invalid!(
            "--out {}: it exists; give a new directory for the pods' results",
            j.dir.display()
        )
        .into());
    }
    runtime(&j.dir)?.block_on(async {
        let client = client(j.kubeconfig.as_deref()).await?;
        create(&client, j, &rendered).await?;
        on(JobEvent::Created {
            job: &j.spec.name,
            namespace: &j.spec.namespace,
            shards: j.spec.shards,
        });
        let pods = follow(&client, &j.spec, cancel, on).await;
        let collected = match pods {
            Ok(pods) => collect(&client, j, &pods, on).await,
            Err(e) => Err(e),
        };
        if !j.keep {
            delete(&client, &j.spec).await?;
            on(JobEvent::Deleted { job: &j.spec.name });
        }
        collected?;
        merge(j)
    })
}

pub(super) async fn client(kubeconfig: Option<&Path>) -> Result<Client, JobRunError> {
    let config = match kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path).map_err(|e| {
                JobRunError::Config(format!("--kubeconfig {}: {e}", path.display()))
            })?;
            Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                .await
                .map_err(|e| JobRunError::Config(format!("--kubeconfig {}: {e}", path.display())))?
        }
        None => Config::infer().await.map_err(|e| {
            JobRunError::Config(format!("{e} (give --kubeconfig or set KUBECONFIG)"))
        })?,
    };
    Client::try_from(config).map_err(api("connecting to the Kubernetes API"))
}

/// Why creating `kind` `name` in namespace `ns` failed, in one line: taken, no such
/// namespace, or the API's own error.
pub(super) fn create_error(
    kind: &str,
    name: &str,
    ns: &str,
) -> impl FnOnce(kube::Error) -> JobRunError + use<> {
    let (kind, name, ns) = (kind.to_string(), name.to_string(), ns.to_string());
    move |e: kube::Error| match &e {
        kube::Error::Api(s) if s.code == 409 => JobRunError::Invalid(crate::invalid!(
            "{kind} {name} already exists in namespace {ns}: delete it or give another --name"
        )),
        kube::Error::Api(s) if s.code == 404 => JobRunError::Invalid(crate::invalid!(
            "namespace {ns}: not found (create it first, or give --namespace)"
        )),
        _ => api(format!("creating {kind} {name} in namespace {ns}"))(e),
    }
}

async fn create(client: &Client, j: &JobRun, rendered: &Rendered) -> Result<(), JobRunError> {
    let ns = &j.spec.namespace;
    let secrets = Api::<Secret>::namespaced(client.clone(), ns);
    let maps = Api::<ConfigMap>::namespaced(client.clone(), ns);
    let secret = rendered.secret.as_ref().map(|s| {
        let name = s.metadata.name.clone().unwrap_or_default();
        (s, name)
    });
    if let Some((s, name)) = &secret {
        secrets
            .create(&PostParams::default(), s)
            .await
            .map_err(create_error("Secret", name, ns))?;
    }
    // The order, then the Job; a Job refused takes the order made for it along (an order
    // ConfigMap that was there before is not ours to delete).
    let order = super::loaders::order_name(&j.spec);
    let made = async {
        maps.create(&PostParams::default(), &rendered.config_map)
            .await
            .map_err(create_error("ConfigMap", &order, ns))?;
        let job = Api::<Job>::namespaced(client.clone(), ns)
            .create(&PostParams::default(), &rendered.job)
            .await;
        if let Err(e) = job {
            let _ = maps.delete(&order, &DeleteParams::default()).await;
            return Err(create_error("Job", &j.spec.name, ns)(e));
        }
        Ok(())
    }
    .await;
    if let (Err(_), Some((_, name))) = (&made, &secret) {
        // The Secret made just now would refuse the next attempt: it goes with the Job.
        let _ = secrets.delete(name, &DeleteParams::default()).await;
    }
    made
}

/// The runtime `k8s run` and `k8s probe --run` drive the API on.
pub(super) fn runtime(dir: &Path) -> Result<tokio::runtime::Runtime, JobRunError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| JobRunError::Io {
            what: "starting a runtime for",
            path: dir.to_path_buf(),
            source,
        })
}

/// Deletes a Job and its pods (a Job already gone is fine).
pub(super) async fn delete_job(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<(), JobRunError> {
    delete_object(
        Api::<Job>::namespaced(client.clone(), namespace),
        "Job",
        name,
    )
    .await
}

/// Deletes one object, and with it what it owns (in the background); one already gone is fine.
pub(super) async fn delete_object<K>(
    objects: Api<K>,
    kind: &str,
    name: &str,
) -> Result<(), JobRunError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let background = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..Default::default()
    };
    match objects.delete(name, &background).await {
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(api(format!("deleting {kind} {name}"))(e)),
        Ok(_) => Ok(()),
    }
}

/// A pod of the Job as far as following it goes.
#[derive(Debug, Clone, PartialEq)]
struct PodState {
    name: String,
    index: u32,
    phase: String,
    node: String,
    /// A container waiting for a reason that will not pass ([`STUCK`]), with its message.
    stuck: Option<String>,
}

/// Why a container of the pod waits, when waiting will not help ([`STUCK`]).
pub(super) fn stuck_reason(p: &Pod) -> Option<String> {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|c| c.state.as_ref()?.waiting.as_ref())
        .find(|w| STUCK.contains(&w.reason.as_deref().unwrap_or("")))
        .map(|w| {
            format!(
                "{}: {}",
                w.reason.as_deref().unwrap_or(""),
                w.message.as_deref().unwrap_or("")
            )
        })
}

/// A pod's phase (Pending until it has a status).
pub(super) fn phase(p: &Pod) -> String {
    p.status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_else(|| "Pending".into())
}

/// The last lines a pod printed, joined on one line.
pub(super) async fn last_lines(pods: &Api<Pod>, name: &str) -> String {
    let tail = LogParams {
        tail_lines: Some(3),
        ..Default::default()
    };
    let last = pods.logs(name, &tail).await.unwrap_or_default();
    last.lines().map(str::trim).collect::<Vec<_>>().join(" / ")
}

fn pod_state(p: &Pod) -> Option<PodState> {
    let index = p
        .metadata
        .annotations
        .as_ref()?
        .get(COMPLETION_INDEX_ANNOTATION)?
        .parse()
        .ok()?;
    let stuck = stuck_reason(p);
    Some(PodState {
        name: p.metadata.name.clone()?,
        index,
        phase: phase(p),
        node: p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        stuck,
    })
}

/// Follows the Job until it completes: each pod's phase as it changes, each pod's output as it
/// comes. Returns the pod that completed each index.
async fn follow(
    client: &Client,
    spec: &LoadersSpec,
    cancel: &Cancel,
    on: &mut dyn FnMut(JobEvent<'_>),
) -> Result<BTreeMap<u32, String>, JobRunError> {
    let jobs = Api::<Job>::namespaced(client.clone(), &spec.namespace);
    let pods = Api::<Pod>::namespaced(client.clone(), &spec.namespace);
    let select = ListParams::default().labels(&format!("{JOB_NAME_LABEL}={}", spec.name));
    let (lines_tx, mut lines) = mpsc::unbounded_channel::<(u32, String)>();
    let mut seen: BTreeMap<String, PodState> = BTreeMap::new();
    let start = Instant::now();
    loop {
        let listed = pods
            .list(&select)
            .await
            .map_err(api("listing the Job's pods"))?;
        for p in listed.items.iter().filter_map(pod_state) {
            if let Some(why) = &p.stuck {
                return Err(JobRunError::Shard {
                    index: p.index,
                    pod: p.name.clone(),
                    how: "cannot start".into(),
                    last: why.clone(),
                });
            }
            let before = seen.insert(p.name.clone(), p.clone());
            if before.as_ref().map(|b| &b.phase) != Some(&p.phase) {
                on(JobEvent::Pod {
                    index: p.index,
                    pod: &p.name,
                    phase: &p.phase,
                    node: &p.node,
                });
                if before.is_none_or(|b| b.phase == "Pending") && p.phase != "Pending" {
                    tokio::spawn(stream_lines(pods.clone(), p.clone(), lines_tx.clone()));
                }
            }
        }
        while let Ok((index, line)) = lines.try_recv() {
            on(JobEvent::Line { index, line: &line });
        }
        let job = jobs.get(&spec.name).await.map_err(api("reading the Job"))?;
        match finished(&job) {
            Some(true) => break,
            Some(false) => return Err(failed_shard(&pods, &seen).await),
            None => {}
        }
        if cancel.is_cancelled() {
            return Err(JobRunError::Cancelled {
                job: spec.name.clone(),
            });
        }
        if start.elapsed() > spec.wait_timeout {
            return Err(JobRunError::Timeout {
                job: spec.name.clone(),
                timeout: spec.wait_timeout,
            });
        }
        tokio::time::sleep(POLL).await;
    }
    // The output still in flight from the streams.
    tokio::time::sleep(Duration::from_millis(200)).await;
    while let Ok((index, line)) = lines.try_recv() {
        on(JobEvent::Line { index, line: &line });
    }
    Ok(seen
        .into_values()
        .filter(|p| p.phase == "Succeeded")
        .map(|p| (p.index, p.name))
        .collect())
}

/// Some(true) when the Job completed, Some(false) when it failed.
pub(super) fn finished(job: &Job) -> Option<bool> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    let set = |kind: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == kind && c.status == "True")
    };
    if set("Complete") {
        Some(true)
    } else if set("Failed") {
        Some(false)
    } else {
        None
    }
}

/// The first failed pod, with the last lines it printed.
async fn failed_shard(pods: &Api<Pod>, seen: &BTreeMap<String, PodState>) -> JobRunError {
    let Some(p) = seen.values().find(|p| p.phase == "Failed") else {
        return JobRunError::Shard {
            index: 0,
            pod: String::new(),
            how: "failed: the Job failed with no failed pod (deadline or deleted pods)".into(),
            last: String::new(),
        };
    };
    JobRunError::Shard {
        index: p.index,
        pod: p.name.clone(),
        how: "failed".into(),
        last: last_lines(pods, &p.name).await,
    }
}

/// A pod's output as it comes, up to its first results block.
async fn stream_lines(pods: Api<Pod>, p: PodState, tx: mpsc::UnboundedSender<(u32, String)>) {
    let follow = LogParams {
        follow: true,
        ..Default::default()
    };
    let Ok(stream) = pods.log_stream(&p.name, &follow).await else {
        return;
    };
    let mut lines = stream.lines();
    while let Some(Ok(line)) = lines.next().await {
        if pod_files::is_block_line(&line) {
            return;
        }
        if tx.send((p.index, line)).is_err() {
            return;
        }
    }
}

/// Each completed pod's log, read whole through the API, unpacked into `j.dir`.
async fn collect(
    client: &Client,
    j: &JobRun,
    pods: &BTreeMap<u32, String>,
    on: &mut dyn FnMut(JobEvent<'_>),
) -> Result<(), JobRunError> {
    let api_pods = Api::<Pod>::namespaced(client.clone(), &j.spec.namespace);
    for index in 0..j.spec.shards {
        let Some(pod) = pods.get(&index) else {
            return Err(JobRunError::Shard {
                index,
                pod: String::new(),
                how: "has no completed pod".into(),
                last: String::new(),
            });
        };
        let log = api_pods
            .logs(pod, &LogParams::default())
            .await
            .map_err(api(format!("reading pod {pod}'s log")))?;
        let files = pod_files::parse(&log).map_err(|e| JobRunError::Shard {
            index,
            pod: pod.clone(),
            how: "left no readable results".into(),
            last: e.to_string(),
        })?;
        let mut bytes = 0;
        for f in &files {
            let path = j.dir.join(&f.path);
            let io = |source| JobRunError::Io {
                what: "writing",
                path: path.clone(),
                source,
            };
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            write_new(&path, &f.bytes).map_err(io)?;
            bytes += f.bytes.len();
        }
        on(JobEvent::Collected {
            index,
            files: files.len(),
            bytes,
        });
    }
    Ok(())
}

/// Writes a file that must not exist yet (a pod naming one file twice cannot overwrite it).
pub(super) fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(bytes)
}

async fn delete(client: &Client, spec: &LoadersSpec) -> Result<(), JobRunError> {
    delete_job(client, &spec.namespace, &spec.name).await?;
    if let (super::loaders::CredentialsSource::Given(_), Some(secret)) =
        (&spec.credentials, super::loaders::secret_name(spec))
    {
        let secrets = Api::<Secret>::namespaced(client.clone(), &spec.namespace);
        delete_object(secrets, "Secret", &secret).await?;
    }
    let maps = Api::<ConfigMap>::namespaced(client.clone(), &spec.namespace);
    delete_object(maps, "ConfigMap", &super::loaders::order_name(spec)).await?;
    Ok(())
}

/// The collected files as one result: the shards merged for a run, pod 0's for a capacity search.
fn merge(j: &JobRun) -> Result<Outcome, JobRunError> {
    if j.spec.is_capacity() {
        let path = j.dir.join("shard-0").join("capacity.json");
        if !path.is_file() {
            return Err(crate::invalid!(
                "pod 0 coordinated the capacity search but left no {}",
                path.display()
            )
            .into());
        }
        return Ok(Outcome::Capacity(path));
    }
    let shards: Vec<PathBuf> = (0..j.spec.shards)
        .map(|i| j.dir.join(format!("shard-{i}.json")))
        .collect();
    let out = j.dir.join(format!("{}.json", j.spec.run_id));
    let merged = crate::shards::merge_files(&shards, &out)?;
    Ok(Outcome::Run(Box::new(merged), out))
}
