//! The Kubernetes objects of a run's loaders: the credentials Secret, the order ConfigMap, the
//! results claim, the Indexed Job of shards and the collector pod.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, ConfigMapVolumeSource, Container, EmptyDirVolumeSource, EnvVar,
    EnvVarSource, ObjectFieldSelector, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource, Pod, PodAffinityTerm, PodAntiAffinity, PodSpec,
    PodTemplateSpec, ResourceRequirements, Secret, SecretKeySelector, SecretVolumeSource, Volume,
    VolumeMount, VolumeResourceRequirements, WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};

use super::{
    COMPLETION_INDEX_ANNOTATION, CredentialsSource, LoadersSpec, ORDER_DIR, ORDER_KEY,
    PASSWORD_KEY, RESULTS_DIR, ResultsClaim, SHARD_INDEX_ENV, TLS_DIR, USERNAME_KEY, claim_name,
    collector_name, order_name, secret_name,
};
use crate::k8s::labels;
use crate::step::RunStep;
use crate::step::order::Order;

fn meta(spec: &LoadersSpec, name: String, component: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(spec.namespace.clone()),
        labels: Some(labels(component, &spec.run_id)),
        ..Default::default()
    }
}

pub(super) fn secret(spec: &LoadersSpec) -> Option<Secret> {
    let CredentialsSource::Given(c) = &spec.credentials else {
        return None;
    };
    Some(Secret {
        metadata: meta(spec, secret_name(spec)?, "credentials"),
        type_: Some("Opaque".into()),
        string_data: Some(BTreeMap::from([
            (USERNAME_KEY.to_string(), c.username.clone()),
            (PASSWORD_KEY.to_string(), c.password.clone()),
        ])),
        ..Default::default()
    })
}

pub(super) fn claim(spec: &LoadersSpec) -> Option<PersistentVolumeClaim> {
    let ResultsClaim::New {
        size,
        storage_class,
    } = &spec.results
    else {
        return None;
    };
    Some(PersistentVolumeClaim {
        metadata: meta(spec, claim_name(spec)?, "results"),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteMany".into()]),
            storage_class_name: storage_class.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    Quantity(size.clone()),
                )])),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The results claim as the pods' volume `results` (each pod's own emptyDir when the logs carry
/// the results), and its mount at [`RESULTS_DIR`].
fn results_volume(spec: &LoadersSpec) -> (Volume, VolumeMount) {
    let volume = match claim_name(spec) {
        Some(claim_name) => Volume {
            name: "results".into(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name,
                read_only: None,
            }),
            ..Default::default()
        },
        None => Volume {
            name: "results".into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Default::default()
        },
    };
    let mount = VolumeMount {
        name: "results".into(),
        mount_path: RESULTS_DIR.into(),
        ..Default::default()
    };
    (volume, mount)
}

/// The TLS Secret as a read-only volume (files readable by the pod's user only) and its mount.
fn tls_volume(spec: &LoadersSpec) -> Option<(Volume, VolumeMount)> {
    let t = spec.tls.as_ref()?;
    let volume = Volume {
        name: "tls".into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(t.name.clone()),
            default_mode: Some(0o400),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mount = VolumeMount {
        name: "tls".into(),
        mount_path: TLS_DIR.into(),
        read_only: Some(true),
        ..Default::default()
    };
    Some((volume, mount))
}

/// The pods' order: the spec's task as every pod runs it (the TLS files at the Secret's
/// mount), for `shards` loaders under the run id.
pub fn order(spec: &LoadersSpec) -> Order {
    let mut task = spec.task.clone();
    if let (Some(t), Some(run)) = (&spec.tls, task.run_mut()) {
        with_tls_files(run, t.client_cert);
    }
    Order::new(spec.run_id.clone(), u64::from(spec.shards), task)
}

/// `run` with the TLS Secret's files where a pod mounts them: the CA, and with `client_cert`
/// the client's certificate and key.
pub fn with_tls_files(run: &mut RunStep, client_cert: bool) {
    let dir = std::path::Path::new(TLS_DIR);
    run.tls_ca = Some(dir.join("ca.crt"));
    if client_cert {
        run.tls_cert = Some(dir.join("tls.crt"));
        run.tls_key = Some(dir.join("tls.key"));
    }
}

/// The ConfigMap NAME-order holding the pods' order.
pub(super) fn config_map(spec: &LoadersSpec) -> ConfigMap {
    order_config_map(
        order_name(spec),
        &spec.namespace,
        &spec.run_id,
        &order(spec),
    )
}

/// The ConfigMap `name` in `namespace` holding `order` as [`ORDER_KEY`], labelled as the
/// order of run `run_id` (loaders' and probe Jobs' alike).
pub fn order_config_map(name: String, namespace: &str, run_id: &str, order: &Order) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(namespace.to_string()),
            labels: Some(labels("order", run_id)),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(ORDER_KEY.to_string(), order.to_json())])),
        ..Default::default()
    }
}

/// The order ConfigMap `map` as the read-only volume `order` and its mount at [`ORDER_DIR`].
pub fn order_volume(map: String) -> (Volume, VolumeMount) {
    let volume = Volume {
        name: "order".into(),
        config_map: Some(ConfigMapVolumeSource {
            name: map,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mount = VolumeMount {
        name: "order".into(),
        mount_path: ORDER_DIR.into(),
        read_only: Some(true),
        ..Default::default()
    };
    (volume, mount)
}

/// `shard /etc/cqlbench/order/order.json --index $(SHARD_INDEX) --out
/// /results/ID/shard-$(SHARD_INDEX).json`: the container's arguments after `cqlbench`
/// (Kubernetes expands `$(SHARD_INDEX)` because the container's env defines it). A capacity
/// search's pods write their steps beside their own capacity result (pod 0's is the search's).
pub fn shard_args(spec: &LoadersSpec) -> Vec<String> {
    let index = format!("$({SHARD_INDEX_ENV})");
    let out = if spec.task.is_capacity() {
        format!("{RESULTS_DIR}/{}/shard-{index}/capacity.json", spec.run_id)
    } else {
        format!("{RESULTS_DIR}/{}/shard-{index}.json", spec.run_id)
    };
    vec![
        "shard".into(),
        format!("{ORDER_DIR}/{ORDER_KEY}"),
        "--index".into(),
        index,
        "--out".into(),
        out,
    ]
}

fn env(spec: &LoadersSpec) -> Vec<EnvVar> {
    let mut env = vec![
        EnvVar {
            name: SHARD_INDEX_ENV.into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: format!("metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
        EnvVar {
            name: "CQLBENCH_HOME".into(),
            value: Some("/tmp/cqlbench-home".into()),
            ..Default::default()
        },
    ];
    if let Some(secret) = secret_name(spec) {
        for (name, key) in [
            ("CQLBENCH_USERNAME", USERNAME_KEY),
            ("CQLBENCH_PASSWORD", PASSWORD_KEY),
        ] {
            env.push(EnvVar {
                name: name.into(),
                value_from: Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: secret.clone(),
                        key: key.into(),
                        optional: Some(false),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
    }
    env
}

/// The container's arguments after `cqlbench`: the shard's own, or with the logs carrying the
/// results, `k8s pod-run --dir /results/ID -- <the shard's>` (the image has no shell: cqlbench
/// runs the shard as its child, then prints what it wrote).
pub fn container_args(spec: &LoadersSpec) -> Vec<String> {
    if spec.results != ResultsClaim::PodLogs {
        return shard_args(spec);
    }
    ["k8s", "pod-run", "--dir"]
        .into_iter()
        .map(String::from)
        .chain([format!("{RESULTS_DIR}/{}", spec.run_id), "--".into()])
        .chain(shard_args(spec))
        .collect()
}

/// Loader pods prefer nodes with no Cassandra pod (cass-operator's and K8ssandra's label) and
/// no other loader of the run: preferred, not required, so a one-node cluster still runs them.
fn anti_affinity(spec: &LoadersSpec) -> Affinity {
    let term = |weight: i32, key: &str, values: Option<Vec<String>>| WeightedPodAffinityTerm {
        weight,
        pod_affinity_term: PodAffinityTerm {
            label_selector: Some(LabelSelector {
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: key.into(),
                    operator: if values.is_some() { "In" } else { "Exists" }.into(),
                    values,
                }]),
                ..Default::default()
            }),
            topology_key: "kubernetes.io/hostname".into(),
            ..Default::default()
        },
    };
    Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                term(100, CASSANDRA_POD_LABEL, None),
                term(
                    50,
                    crate::k8s::RUN_ID_LABEL,
                    Some(vec![spec.run_id.clone()]),
                ),
            ]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The label cass-operator puts on every Cassandra pod it runs (K8ssandra's included).
pub const CASSANDRA_POD_LABEL: &str = "cassandra.datastax.com/cluster";

pub(super) fn job(spec: &LoadersSpec, resources: ResourceRequirements) -> Job {
    let (volume, mount) = results_volume(spec);
    let container = Container {
        name: "cqlbench".into(),
        image: Some(spec.image.clone()),
        command: Some(vec!["cqlbench".into()]),
        args: Some(container_args(spec)),
        env: Some(env(spec)),
        resources: Some(resources),
        volume_mounts: Some(
            std::iter::once(mount)
                .chain(tls_volume(spec).map(|(_, m)| m))
                .chain([order_volume(order_name(spec)).1])
                .collect(),
        ),
        ..Default::default()
    };
    // Bounded by validate(): shards ≤ MAX_SHARDS, backoff_limit ≤ i32::MAX.
    let int = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    Job {
        metadata: meta(spec, spec.name.clone(), "loader"),
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: Some(int(spec.shards)),
            parallelism: Some(int(spec.shards)),
            backoff_limit: Some(int(spec.backoff_limit)),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels("loader", &spec.run_id)),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    affinity: Some(anti_affinity(spec)),
                    host_network: spec.host_network.then_some(true),
                    containers: vec![container],
                    volumes: Some(
                        std::iter::once(volume)
                            .chain(tls_volume(spec).map(|(v, _)| v))
                            .chain([order_volume(order_name(spec)).0])
                            .collect(),
                    ),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub(super) fn collector(spec: &LoadersSpec) -> Pod {
    let (volume, mount) = results_volume(spec);
    Pod {
        metadata: meta(spec, collector_name(spec), "collector"),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "collector".into(),
                image: Some(spec.image.clone()),
                command: Some(vec!["sleep".into(), "3600".into()]),
                volume_mounts: Some(vec![mount]),
                ..Default::default()
            }],
            volumes: Some(vec![volume]),
            ..Default::default()
        }),
        ..Default::default()
    }
}
