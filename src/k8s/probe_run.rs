//! `cqlbench k8s probe --run`: the probe Jobs applied through the API, followed until each
//! completed, each pod's log (its result, one line of JSON) written to `DIR/NODE.json` and read
//! back as a probe result, then the Jobs deleted (their volumes go with their pods).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ListParams, LogParams, PostParams};

use super::job_run::{
    JobRunError, api, client, create_error, delete_job, delete_object, finished, last_lines, phase,
    runtime, stuck_reason, write_new,
};
use super::probe::{ProbeJobsSpec, job_name, order_name, render};
use crate::cancel::Cancel;

const POLL: Duration = Duration::from_secs(1);

/// The probes to run and where their results go.
#[derive(Debug, Clone)]
pub struct ProbeRun {
    pub spec: ProbeJobsSpec,
    pub kubeconfig: Option<PathBuf>,
    /// The local directory the results are written to (`NODE.json`); it must not exist yet.
    pub dir: PathBuf,
    /// Leave the Jobs in the cluster.
    pub keep: bool,
}

/// What `k8s probe --run` tells its caller as it goes.
pub enum ProbeEvent<'a> {
    Created {
        jobs: usize,
        namespace: &'a str,
    },
    Pod {
        node: &'a str,
        pod: &'a str,
        phase: &'a str,
    },
    Collected {
        node: &'a str,
        path: &'a Path,
    },
    Deleted {
        jobs: usize,
    },
}

/// Runs the probes; returns each node's result file, in the order of the spec's nodes.
pub fn run(
    p: &ProbeRun,
    cancel: &Cancel,
    on: &mut dyn FnMut(ProbeEvent),
) -> Result<Vec<PathBuf>, JobRunError> {
    let rendered = render(&p.spec)?;
    if p.dir.exists() {
        return Err(crate::invalid!(
            "--results {}: it exists; give a new directory for the probes' results",
            p.dir.display()
        )
        .into());
    }
    runtime(&p.dir)?.block_on(async {
        let client = client(p.kubeconfig.as_deref()).await?;
        let ns = &p.spec.namespace;
        let jobs = Api::<Job>::namespaced(client.clone(), ns);
        let maps = Api::<ConfigMap>::namespaced(client.clone(), ns);
        let order = order_name(&p.spec);
        maps.create(&PostParams::default(), &rendered.config_map)
            .await
            .map_err(create_error("ConfigMap", &order, ns))?;
        let mut created = 0;
        let mut outcome = Ok(Vec::new());
        for job in &rendered.jobs {
            let name = job.metadata.name.clone().unwrap_or_default();
            if let Err(e) = jobs.create(&PostParams::default(), job).await {
                outcome = Err(create_error("Job", &name, ns)(e));
                break;
            }
            created += 1;
        }
        if outcome.is_ok() {
            on(ProbeEvent::Created {
                jobs: created,
                namespace: ns,
            });
            outcome = follow_and_collect(&client, p, cancel, on).await;
        }
        if !p.keep {
            for i in 0..created {
                delete_job(&client, ns, &job_name(&p.spec, i)).await?;
            }
            delete_object(maps, "ConfigMap", &order).await?;
            on(ProbeEvent::Deleted { jobs: created });
        }
        outcome
    })
}

async fn follow_and_collect(
    client: &kube::Client,
    p: &ProbeRun,
    cancel: &Cancel,
    on: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<Vec<PathBuf>, JobRunError> {
    let ns = &p.spec.namespace;
    let jobs = Api::<Job>::namespaced(client.clone(), ns);
    let pods = Api::<Pod>::namespaced(client.clone(), ns);
    let names: Vec<String> = (0..p.spec.nodes.len())
        .map(|i| job_name(&p.spec, i))
        .collect();
    let mut phases = vec![String::new(); names.len()];
    let mut done: Vec<Option<String>> = vec![None; names.len()];
    let start = Instant::now();
    while done.iter().any(Option::is_none) {
        for (i, name) in names.iter().enumerate() {
            let node = &p.spec.nodes[i];
            let select =
                ListParams::default().labels(&format!("batch.kubernetes.io/job-name={name}"));
            let listed = pods
                .list(&select)
                .await
                .map_err(api("listing the probe pods"))?;
            for pod in &listed.items {
                let pod_name = pod.metadata.name.clone().unwrap_or_default();
                if let Some(why) = stuck_reason(pod) {
                    return Err(probe_failed(node, &pod_name, "cannot start", why));
                }
                let now = phase(pod);
                if now != phases[i] {
                    on(ProbeEvent::Pod {
                        node,
                        pod: &pod_name,
                        phase: &now,
                    });
                    phases[i] = now.clone();
                }
                if now == "Succeeded" {
                    done[i] = Some(pod_name.clone());
                }
            }
            let job = jobs
                .get(name)
                .await
                .map_err(api(format!("reading Job {name}")))?;
            if finished(&job) == Some(false) {
                let pod = listed.items.iter().find_map(|p| p.metadata.name.clone());
                let last = match &pod {
                    Some(pod) => last_lines(&pods, pod).await,
                    None => String::new(),
                };
                return Err(probe_failed(node, &pod.unwrap_or_default(), "failed", last));
            }
        }
        if cancel.is_cancelled() {
            return Err(JobRunError::Cancelled {
                job: p.spec.name.clone(),
            });
        }
        if start.elapsed() > p.spec.wait_timeout {
            return Err(JobRunError::Timeout {
                job: names.join(", "),
                timeout: p.spec.wait_timeout,
            });
        }
        if done.iter().any(Option::is_none) {
            tokio::time::sleep(POLL).await;
        }
    }
    std::fs::create_dir_all(&p.dir).map_err(|source| JobRunError::Io {
        what: "creating",
        path: p.dir.clone(),
        source,
    })?;
    let mut paths = Vec::new();
    for (node, pod) in p.spec.nodes.iter().zip(done.into_iter().flatten()) {
        let log = pods
            .logs(&pod, &LogParams::default())
            .await
            .map_err(api(format!("reading pod {pod}'s log")))?;
        let path = p.dir.join(format!("{node}.json"));
        write_new(&path, log.as_bytes()).map_err(|source| JobRunError::Io {
            what: "writing",
            path: path.clone(),
            source,
        })?;
        crate::result::file::read_probe(&path)
            .map_err(|e| probe_failed(node, &pod, "printed no probe result", e.to_string()))?;
        on(ProbeEvent::Collected { node, path: &path });
        paths.push(path);
    }
    Ok(paths)
}

fn probe_failed(node: &str, pod: &str, how: &str, last: String) -> JobRunError {
    JobRunError::Probe {
        node: node.into(),
        pod: pod.into(),
        how: how.into(),
        last,
    }
}
