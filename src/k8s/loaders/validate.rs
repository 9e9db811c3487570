//! Checking a loaders spec before anything is rendered: names, image, shards, run id and
//! task, credentials, results claim and resources, each refused in one line.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::ResourceRequirements;

use super::{CredentialsSource, LoadersSpec, MAX_NAME_LEN, MAX_SHARDS, Resources, ResultsClaim};
use crate::error::Invalid;
use crate::k8s::{dns_label, dns_subdomain, quantity};
use crate::step::order::Task;

/// Checks `spec`; returns the loader container's resources.
pub(super) fn validate(spec: &LoadersSpec) -> Result<ResourceRequirements, Invalid> {
    dns_label("--name", &spec.name, MAX_NAME_LEN)?;
    dns_label("--namespace", &spec.namespace, 63)?;
    if spec.image.trim().is_empty() {
        return Err(crate::invalid!(
            "--image is empty: give the cqlbench container image, e.g. registry.example/cqlbench:0.1"
        ));
    }
    if spec
        .image
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(crate::invalid!(
            "--image '{}' contains white space: give one image reference",
            spec.image
        ));
    }
    if spec.shards == 0 || spec.shards > MAX_SHARDS {
        return Err(crate::invalid!(
            "--shards {}: give 1 to {MAX_SHARDS} (Kubernetes' limit for an Indexed Job)",
            spec.shards
        ));
    }
    if spec.backoff_limit > i32::MAX as u32 {
        return Err(crate::invalid!(
            "--backoff-limit {}: give at most {}",
            spec.backoff_limit,
            i32::MAX
        ));
    }
    run_id(&spec.run_id)?;
    if spec.is_capacity() && spec.run_id.len() > 55 {
        return Err(crate::invalid!(
            "--run-id '{}': at most 55 characters for a capacity search (each step's shards meet under RUN_ID-sNN-aA)",
            spec.run_id
        ));
    }
    if spec.wait_timeout < Duration::from_secs(1) {
        return Err(crate::invalid!("--timeout must be at least 1s"));
    }
    validate_task(&spec.task)?;
    match &spec.credentials {
        CredentialsSource::None => {}
        CredentialsSource::Secret(name) => dns_subdomain("--secret", name)?,
        CredentialsSource::Given(c) => {
            if c.username.trim().is_empty() || c.password.is_empty() {
                return Err(crate::invalid!(
                    "the credentials need a user name and a password (two lines of the credentials file)"
                ));
            }
        }
    }
    if let Some(t) = &spec.tls {
        dns_subdomain("--tls-secret", &t.name)?;
    }
    match &spec.results {
        ResultsClaim::New {
            size,
            storage_class,
        } => {
            quantity("--results-size", size, "1Gi or 500Mi")?;
            if let Some(class) = storage_class {
                dns_subdomain("--storage-class", class)?;
            }
        }
        ResultsClaim::Existing(name) => dns_subdomain("--results-claim", name)?,
        ResultsClaim::PodLogs => {}
    }
    resources(&spec.resources)
}

/// A run id that `cqlbench run --run-id` accepts (the one rule, `spec::load::parse_run_id`),
/// which is also a Kubernetes label value.
fn run_id(s: &str) -> Result<(), Invalid> {
    // The one rule for run ids, which also makes them Kubernetes label values.
    if crate::spec::load::parse_run_id(s).is_err() {
        return Err(crate::invalid!(
            "--run-id '{s}' is not a run id that is also a Kubernetes label: give 1 to 63 \
             lower-case letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        ));
    }
    Ok(())
}

/// The pods' task as given: none of the options the renderer sets itself in every pod's
/// order (or that make no sense in a pod), each refused with the way to give it instead.
pub fn validate_task(task: &Task) -> Result<(), Invalid> {
    let Some(r) = task.run() else {
        return Err(crate::invalid!(
            "a probe is not a run: use `cqlbench k8s probe`"
        ));
    };
    let secret = "certificates reach the pods from a Secret: give --tls-secret";
    let owned = [
        (r.tls_ca.is_some(), "--tls-ca", format!("{secret} to `k8s loaders` itself")),
        (
            r.tls_cert.is_some(),
            "--tls-cert",
            format!("{secret} and --tls-client-cert to `k8s loaders` itself"),
        ),
        (
            r.tls_key.is_some(),
            "--tls-key",
            format!("{secret} and --tls-client-cert to `k8s loaders` itself"),
        ),
        (r.start_at.is_some(), "--start-at", "`k8s loaders` owns the shards' start".into()),
        (r.shard.is_some(), "--shard", "each pod's shard is set by the Job".into()),
        (r.run_id.is_some(), "--run-id", "give --run-id to `k8s loaders` itself".into()),
        (r.out.is_some(), "--out", "each shard writes /results/RUN_ID/shard-I.json".into()),
        (
            r.credentials_file.is_some(),
            "--credentials-file",
            "credentials reach the pods from a Secret: give --credentials-file or --secret to `k8s loaders` itself".into(),
        ),
        (r.loaders.is_some(), "--loaders", "the Job's shards are the loaders".into()),
        (
            r.cluster.is_some(),
            "--cluster",
            "a pod has no local clusters: give the contact points with --hosts".into(),
        ),
    ];
    match owned.into_iter().find(|(set, ..)| *set) {
        Some((_, flag, why)) => Err(crate::invalid!(
            "run argument '{flag}' is not allowed: {why}"
        )),
        None => Ok(()),
    }
}

fn resources(r: &Resources) -> Result<ResourceRequirements, Invalid> {
    let mut requests = BTreeMap::new();
    let mut limits = BTreeMap::new();
    for (value, flag, key, example, is_limit) in [
        (&r.cpu_request, "--cpu", "cpu", "500m or 2", false),
        (&r.cpu_limit, "--cpu", "cpu", "500m or 2", true),
        (
            &r.memory_request,
            "--memory",
            "memory",
            "512Mi or 2Gi",
            false,
        ),
        (&r.memory_limit, "--memory", "memory", "512Mi or 2Gi", true),
    ] {
        if let Some(v) = value {
            let q = quantity(flag, v, example)?;
            let map = if is_limit { &mut limits } else { &mut requests };
            map.insert(key.to_string(), q);
        }
    }
    Ok(ResourceRequirements {
        requests: (!requests.is_empty()).then_some(requests),
        limits: (!limits.is_empty()).then_some(limits),
        ..Default::default()
    })
}
