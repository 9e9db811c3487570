//! Host probes of Kubernetes nodes (`cqlbench k8s probe`): one Job per node, its pod pinned
//! to that node (node affinity on the node's name, so the scheduler places it and a
//! WaitForFirstConsumer volume is provisioned in the node's zone), with a generic ephemeral
//! volume of the StorageClass the Cassandra pods use, mounted at [`PROBE_DIR`]. Every Job
//! mounts the probes' order (ConfigMap NAME-order: the typed probe step and each Job's node)
//! and Job `i` runs `cqlbench shard ORDER --index i --out /probe/result.json`, which probes as
//! `cqlbench probe --dir /probe --env NODE_i --json …` would: that volume's disk and the node's
//! CPU, its log the result alone (one line of JSON), which `kubectl logs job/… > NODE.json`
//! collects for `cqlbench report`. The volume goes with the pod.
//!
//! Pure: the objects and the kubectl workflow are rendered here; nothing talks to a cluster.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, Container, EnvVar, EphemeralVolumeSource, NodeAffinity, NodeSelector,
    NodeSelectorRequirement, NodeSelectorTerm, PersistentVolumeClaimSpec,
    PersistentVolumeClaimTemplate, PodSpec, PodTemplateSpec, Toleration, Volume, VolumeMount,
    VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::loaders::{ORDER_DIR, ORDER_KEY, Step};
use super::{KUBERNETES_VERSION, dns_label, dns_subdomain, label_value, labels, quantity};
use crate::error::Invalid;
use crate::step::ProbeStep;
use crate::step::order::{Order, ProbeTask, Task};

/// Where each probe pod mounts its volume.
pub const PROBE_DIR: &str = "/probe";
/// The annotation naming the node a Job probes (node names can be longer than label values).
pub const NODE_ANNOTATION: &str = "cqlbench.io/node";
/// Longest `--name`: the Jobs are NAME-0 … NAME-9999, the order NAME-order.
pub const MAX_NAME_LEN: usize = 63 - "-order".len();
/// Most nodes in one rendering.
pub const MAX_NODES: usize = 10_000;

/// The smallest probe volume rendered, in MiB.
pub const MIN_VOLUME_MIB: u64 = 1024;

/// One probe Job per node.
#[derive(Debug, Clone)]
pub struct ProbeJobsSpec {
    /// Prefix of the Jobs' names: NAME-0, NAME-1, … in the order of `nodes`.
    pub name: String,
    pub namespace: String,
    /// The loader image: `cqlbench`, fio and sysbench on its PATH (`scripts/image.sh`).
    pub image: String,
    /// Kubernetes node names (`kubectl get nodes`), each probed once.
    pub nodes: Vec<String>,
    /// The StorageClass of the Cassandra pods' volumes.
    pub storage_class: String,
    /// Size of each probe volume (a Kubernetes quantity): that of Cassandra's volumes, as
    /// many disk types' IOPS and throughput grow with size.
    pub size: String,
    /// Labels the run: a label on every Job and the directory the results are collected in.
    pub run_id: String,
    /// What each pod probes (e.g. `--quick`), none of the options the renderer sets itself
    /// ([`validate_probe`]); each pod runs it with its node's name, its volume and `--json`.
    pub probe: ProbeStep,
    /// The pods tolerate every taint (nodes dedicated to Cassandra are often tainted).
    pub tolerate_taints: bool,
    /// How long the printed workflow waits for the Jobs; also each Job's deadline.
    pub wait_timeout: Duration,
    /// The file the manifests are written to, for `kubectl apply -f` (None: standard input).
    pub manifest: Option<String>,
}

/// The Jobs and the commands that apply and collect them.
#[derive(Debug, Clone)]
pub struct RenderedProbes {
    /// NAME-order: the probe every Job runs, and each one's node.
    pub config_map: ConfigMap,
    pub jobs: Vec<Job>,
    /// In order: apply, wait, collect the logs, report, clean up.
    pub steps: Vec<Step>,
    header: String,
}

impl RenderedProbes {
    /// The order and every Job as one multi-document YAML stream.
    pub fn yaml(&self) -> String {
        let docs: Vec<String> = std::iter::once(super::to_yaml(&self.config_map))
            .chain(self.jobs.iter().map(super::to_yaml))
            .collect();
        super::yaml_stream(&self.header, &docs)
    }
}

/// The order ConfigMap's name.
pub fn order_name(spec: &ProbeJobsSpec) -> String {
    format!("{}-order", spec.name)
}

/// The Jobs' order: probe `i` is the step on node `i`'s volume ([`PROBE_DIR`]), named after it.
pub fn order(spec: &ProbeJobsSpec) -> Order {
    let mut probe = spec.probe.clone();
    probe.dir = Some(PROBE_DIR.into());
    let task = Task::Probe(Box::new(ProbeTask {
        probe,
        envs: spec.nodes.clone(),
    }));
    Order::new(spec.run_id.clone(), spec.nodes.len() as u64, task)
}

/// Job `i`'s name.
pub fn job_name(spec: &ProbeJobsSpec, i: usize) -> String {
    format!("{}-{i}", spec.name)
}

/// Checks `spec` and renders its Jobs and workflow; refused input gets a one-line error.
pub fn render(spec: &ProbeJobsSpec) -> Result<RenderedProbes, Invalid> {
    validate(spec)?;
    Ok(RenderedProbes {
        config_map: super::loaders::order_config_map(
            order_name(spec),
            &spec.namespace,
            &spec.run_id,
            &order(spec),
        ),
        jobs: (0..spec.nodes.len()).map(|i| job(spec, i)).collect(),
        steps: steps(spec)?,
        header: format!(
            "# cqlbench k8s probe: run {}, {} node(s), volumes of StorageClass {} (Kubernetes {KUBERNETES_VERSION} API).\n",
            spec.run_id,
            spec.nodes.len(),
            spec.storage_class
        ),
    })
}

fn validate(spec: &ProbeJobsSpec) -> Result<(), Invalid> {
    dns_label("--name", &spec.name, MAX_NAME_LEN)?;
    dns_label("--namespace", &spec.namespace, 63)?;
    if spec.image.trim().is_empty() || spec.image.chars().any(char::is_whitespace) {
        return Err(crate::invalid!(
            "--image '{}': give one container image reference, e.g. registry.example/cqlbench:0.1",
            spec.image
        ));
    }
    if spec.nodes.is_empty() {
        return Err(crate::invalid!(
            "--nodes is empty: give the Kubernetes node names to probe (kubectl get nodes)"
        ));
    }
    if spec.nodes.len() > MAX_NODES {
        return Err(crate::invalid!(
            "--nodes: {} nodes, at most {MAX_NODES} in one rendering",
            spec.nodes.len()
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for node in &spec.nodes {
        if node.is_empty() {
            return Err(crate::invalid!(
                "--nodes holds an empty name: give node names separated by commas"
            ));
        }
        dns_subdomain("node", node)?;
        // The node's name is the result's environment label and file name.
        crate::spec::probe::validate_env(node).map_err(|_| {
            crate::invalid!(
                "node '{node}': its name labels the result, so it can have at most 64 characters"
            )
        })?;
        if !seen.insert(node) {
            return Err(crate::invalid!("--nodes names '{node}' twice"));
        }
    }
    dns_subdomain("--storage-class", &spec.storage_class)?;
    quantity(
        "--size",
        &spec.size,
        "100Gi, the size of Cassandra's volumes",
    )?;
    // The probe's test files go on the volume (and cloud disks' IOPS grow with size): a
    // quantity without a unit is bytes, which no probe fits in.
    if super::binary_mib(&spec.size).is_some_and(|mib| mib < MIN_VOLUME_MIB) {
        return Err(crate::invalid!(
            "--size '{}': less than {}Gi (a quantity without a unit is bytes); give the volume's size, e.g. 100Gi",
            spec.size,
            MIN_VOLUME_MIB / 1024
        ));
    }
    if spec.wait_timeout.is_zero() {
        return Err(crate::invalid!(
            "--timeout 0s: give how long to wait for the probes, e.g. 30m"
        ));
    }
    label_value("--run-id", &spec.run_id)?;
    validate_probe(&spec.probe)
}

/// Refuses the options of `cqlbench probe` the renderer sets itself in every pod's order, or
/// that make no sense in a pod, each with why.
pub fn validate_probe(p: &ProbeStep) -> Result<(), Invalid> {
    let owned = [
        (
            p.dir.is_some(),
            "--dir",
            "each pod measures its volume, mounted at /probe",
        ),
        (
            p.env.is_some(),
            "--env",
            "each result is named after its node",
        ),
        (
            p.out.is_some(),
            "--out",
            "each pod writes /probe/result.json and prints it",
        ),
        (
            p.json,
            "--json",
            "the pods always print their result as JSON",
        ),
        (
            p.ssh.is_some(),
            "--ssh",
            "each pod probes the node it runs on",
        ),
        (
            p.cluster.is_some(),
            "--cluster",
            "a pod has no local clusters",
        ),
        (
            p.write_jobs.is_some(),
            "--write-jobs",
            "a pod's files go with it",
        ),
    ];
    match owned.into_iter().find(|(set, ..)| *set) {
        Some((_, f, why)) => Err(crate::invalid!(
            "probe arguments: {f} is not accepted here: {why}"
        )),
        None => Ok(()),
    }
}

/// Job `i`'s container arguments after `cqlbench`: probe `i` of the order, its result in the
/// volume (and printed, the pod's log).
pub fn probe_args(i: usize) -> Vec<String> {
    vec![
        "shard".into(),
        format!("{ORDER_DIR}/{ORDER_KEY}"),
        "--index".into(),
        i.to_string(),
        "--out".into(),
        format!("{PROBE_DIR}/result.json"),
    ]
}

fn job(spec: &ProbeJobsSpec, i: usize) -> Job {
    let node = &spec.nodes[i];
    let volume = Volume {
        name: "probe".into(),
        ephemeral: Some(EphemeralVolumeSource {
            volume_claim_template: Some(PersistentVolumeClaimTemplate {
                metadata: Some(ObjectMeta {
                    labels: Some(labels("probe", &spec.run_id)),
                    ..Default::default()
                }),
                spec: PersistentVolumeClaimSpec {
                    access_modes: Some(vec!["ReadWriteOnce".into()]),
                    storage_class_name: Some(spec.storage_class.clone()),
                    resources: Some(VolumeResourceRequirements {
                        requests: Some(BTreeMap::from([(
                            "storage".to_string(),
                            k8s_openapi::apimachinery::pkg::api::resource::Quantity(
                                spec.size.clone(),
                            ),
                        )])),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            }),
        }),
        ..Default::default()
    };
    let (order_volume, order_mount) = super::loaders::order_volume(order_name(spec));
    let container = Container {
        name: "probe".into(),
        image: Some(spec.image.clone()),
        command: Some(vec!["cqlbench".into()]),
        args: Some(probe_args(i)),
        env: Some(vec![EnvVar {
            name: "CQLBENCH_HOME".into(),
            value: Some("/tmp/cqlbench-home".into()),
            ..Default::default()
        }]),
        volume_mounts: Some(vec![
            VolumeMount {
                name: "probe".into(),
                mount_path: PROBE_DIR.into(),
                ..Default::default()
            },
            order_mount,
        ]),
        ..Default::default()
    };
    // The node by its name (a field, as DaemonSets pin their pods), not by a label that may
    // differ from it.
    let affinity = Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: Some(vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: Some(vec![node.clone()]),
                    }]),
                    ..Default::default()
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let deadline = spec.wait_timeout.as_secs().max(1);
    Job {
        metadata: ObjectMeta {
            name: Some(job_name(spec, i)),
            namespace: Some(spec.namespace.clone()),
            labels: Some(labels("probe", &spec.run_id)),
            annotations: Some(BTreeMap::from([(
                NODE_ANNOTATION.to_string(),
                node.clone(),
            )])),
            ..Default::default()
        },
        spec: Some(JobSpec {
            // A probe rerun elsewhere or later would measure something else.
            backoff_limit: Some(0),
            active_deadline_seconds: Some(i64::try_from(deadline).unwrap_or(i64::MAX)),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels("probe", &spec.run_id)),
                    annotations: Some(BTreeMap::from([(
                        NODE_ANNOTATION.to_string(),
                        node.clone(),
                    )])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    affinity: Some(affinity),
                    tolerations: spec.tolerate_taints.then(|| {
                        vec![Toleration {
                            operator: Some("Exists".into()),
                            ..Default::default()
                        }]
                    }),
                    containers: vec![container],
                    volumes: Some(vec![volume, order_volume]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The workflow: apply, wait for every Job, each pod's log into `./RUN_ID/NODE.json`, the
/// report of them side by side, clean up.
fn steps(spec: &ProbeJobsSpec) -> Result<Vec<Step>, Invalid> {
    let ns = &spec.namespace;
    let id = &spec.run_id;
    let manifest = match &spec.manifest {
        Some(file) => shlex::try_quote(file)
            .map_err(|e| crate::invalid!("--out '{file}': {e}"))?
            .into_owned(),
        None => "-".into(),
    };
    let jobs: Vec<String> = (0..spec.nodes.len())
        .map(|i| format!("job/{}", job_name(spec, i)))
        .collect();
    let logs: Vec<String> = spec
        .nodes
        .iter()
        .zip(&jobs)
        .map(|(node, job)| format!("kubectl -n {ns} logs {job} > ./{id}/{node}.json"))
        .collect();
    let step = |what: String, line: String| Step { what, line };
    Ok(vec![
        step(
            format!("create the Jobs (namespace {ns} must exist)"),
            format!("kubectl apply -f {manifest}"),
        ),
        step(
            format!("wait for the {} probe(s) to complete", jobs.len()),
            format!(
                "kubectl -n {ns} wait --for=condition=complete --timeout={}s {}",
                spec.wait_timeout.as_secs().max(1),
                jobs.join(" ")
            ),
        ),
        step(
            format!(
                "collect each result (the pod's log is its result, one line of JSON) in ./{id}"
            ),
            format!("mkdir -p ./{id} && {}", logs.join(" && ")),
        ),
        step(
            "the nodes side by side".into(),
            format!("cqlbench report ./{id}/*.json"),
        ),
        step(
            "clean up (each volume goes with its pod)".into(),
            format!(
                "kubectl -n {ns} delete {} configmap/{}",
                jobs.join(" "),
                order_name(spec)
            ),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ProbeJobsSpec {
        ProbeJobsSpec {
            name: "cqlbench-probe".into(),
            namespace: "k8ssandra".into(),
            image: "reg/cqlbench:0.1".into(),
            nodes: vec!["node-a".into(), "ip-10-0-1-5.ec2.internal".into()],
            storage_class: "gp3-500".into(),
            size: "500Gi".into(),
            run_id: "probe-1".into(),
            probe: crate::step::parse_args("probe", &["--quick".to_string()]).unwrap(),
            tolerate_taints: false,
            wait_timeout: Duration::from_secs(1800),
            manifest: Some("probes.yaml".into()),
        }
    }

    #[test]
    fn one_job_per_node_pinned_with_a_volume_of_the_class() {
        let r = render(&spec()).unwrap();
        assert_eq!(r.jobs.len(), 2);
        let job = &r.jobs[1];
        assert_eq!(job.metadata.name.as_deref(), Some("cqlbench-probe-1"));
        let js = job.spec.as_ref().unwrap();
        assert_eq!(js.backoff_limit, Some(0));
        assert_eq!(js.active_deadline_seconds, Some(1800));
        let pod = js.template.spec.as_ref().unwrap();
        let terms = &pod
            .affinity
            .as_ref()
            .unwrap()
            .node_affinity
            .as_ref()
            .unwrap()
            .required_during_scheduling_ignored_during_execution
            .as_ref()
            .unwrap()
            .node_selector_terms;
        let field = &terms[0].match_fields.as_ref().unwrap()[0];
        assert_eq!(field.key, "metadata.name");
        assert_eq!(
            field.values.as_deref(),
            Some(&["ip-10-0-1-5.ec2.internal".to_string()][..])
        );
        let claim = &pod.volumes.as_ref().unwrap()[0]
            .ephemeral
            .as_ref()
            .unwrap()
            .volume_claim_template
            .as_ref()
            .unwrap()
            .spec;
        assert_eq!(claim.storage_class_name.as_deref(), Some("gp3-500"));
        assert_eq!(
            claim.resources.as_ref().unwrap().requests.as_ref().unwrap()["storage"].0,
            "500Gi"
        );
        let args = pod.containers[0].args.as_ref().unwrap().join(" ");
        assert_eq!(
            args,
            "shard /etc/cqlbench/order/order.json --index 1 --out /probe/result.json"
        );
        // Probe 1 of the order, read as the pod reads it: its node's name, its volume, JSON.
        let text = &r.config_map.data.as_ref().unwrap()["order.json"];
        let order = Order::from_json(text, "order").unwrap();
        let Task::Probe(p) = order.for_shard(1, "/probe/result.json".into()).unwrap() else {
            panic!("a probe task")
        };
        assert_eq!(p.probe.env.as_deref(), Some("ip-10-0-1-5.ec2.internal"));
        assert_eq!(p.probe.dir.as_deref(), Some(std::path::Path::new("/probe")));
        assert!(p.probe.json && p.probe.quick);
        let volume = &pod.volumes.as_ref().unwrap()[1];
        assert_eq!(
            volume.config_map.as_ref().unwrap().name,
            "cqlbench-probe-order"
        );
        assert!(pod.tolerations.is_none());
        let mut tolerant = spec();
        tolerant.tolerate_taints = true;
        let r = render(&tolerant).unwrap();
        let pod = r.jobs[0]
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap();
        assert_eq!(
            pod.tolerations.as_ref().unwrap()[0].operator.as_deref(),
            Some("Exists")
        );
    }

    #[test]
    fn the_workflow_collects_each_log_into_a_file_and_reports_them() {
        let r = render(&spec()).unwrap();
        let lines: Vec<&str> = r.steps.iter().map(|s| s.line.as_str()).collect();
        assert_eq!(
            lines,
            [
                "kubectl apply -f probes.yaml",
                "kubectl -n k8ssandra wait --for=condition=complete --timeout=1800s job/cqlbench-probe-0 job/cqlbench-probe-1",
                "mkdir -p ./probe-1 && kubectl -n k8ssandra logs job/cqlbench-probe-0 > ./probe-1/node-a.json && kubectl -n k8ssandra logs job/cqlbench-probe-1 > ./probe-1/ip-10-0-1-5.ec2.internal.json",
                "cqlbench report ./probe-1/*.json",
                "kubectl -n k8ssandra delete job/cqlbench-probe-0 job/cqlbench-probe-1 configmap/cqlbench-probe-order",
            ]
        );
        assert!(
            r.yaml()
                .starts_with("# cqlbench k8s probe: run probe-1, 2 node(s)")
        );
        assert_eq!(r.yaml().matches("kind: Job").count(), 2);
    }

    #[test]
    fn bad_specs_are_refused_naming_the_value() {
        type Change = fn(&mut ProbeJobsSpec);
        let cases: Vec<(Change, &str)> = vec![
            (|s| s.nodes.clear(), "--nodes is empty"),
            (
                |s| s.nodes.push(String::new()),
                "--nodes holds an empty name",
            ),
            (|s| s.nodes.push("node-a".into()), "names 'node-a' twice"),
            (|s| s.nodes.push("Bad_Node".into()), "node 'Bad_Node'"),
            (
                |s| s.nodes.push(format!("{}.x", "a".repeat(63))),
                "at most 64 characters",
            ),
            (
                |s| s.storage_class = "Fast SSD".into(),
                "--storage-class 'Fast SSD'",
            ),
            (|s| s.size = "lots".into(), "--size 'lots'"),
            (
                |s| s.size = "500".into(),
                "--size '500': less than 1Gi (a quantity without a unit is bytes)",
            ),
            (|s| s.size = "500Mi".into(), "--size '500Mi': less than 1Gi"),
            (
                |s| s.wait_timeout = Duration::ZERO,
                "--timeout 0s: give how long to wait",
            ),
            (|s| s.name = "x".repeat(58), "--name"),
            (|s| s.image = "a b".into(), "--image 'a b'"),
            (
                |s| s.probe.dir = Some("/x".into()),
                "--dir is not accepted here",
            ),
            (
                |s| s.probe.ssh = Some("h".parse().unwrap()),
                "--ssh is not accepted here",
            ),
            (|s| s.probe.json = true, "--json is not accepted here"),
        ];
        for (change, needle) in cases {
            let mut s = spec();
            change(&mut s);
            let err = render(&s).unwrap_err().0;
            assert!(err.contains(needle), "{needle}: {err}");
        }
    }
}
