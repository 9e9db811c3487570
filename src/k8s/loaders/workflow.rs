//! The printed workflow: apply the objects, wait for the shards and the collector, copy the
//! results out, merge them, clean up.

use super::{
    CredentialsSource, LoadersSpec, RESULTS_DIR, ResultsClaim, Step, claim_name, collector_name,
    order_name, secret_name,
};
use crate::error::Invalid;

/// How long the printed workflow waits for the collector pod to be ready.
const COLLECTOR_READY_TIMEOUT_S: u64 = 300;

/// The workflow's steps, in order.
pub(super) fn steps(spec: &LoadersSpec) -> Result<Vec<Step>, Invalid> {
    let ns = &spec.namespace;
    let id = &spec.run_id;
    let collector = collector_name(spec);
    let manifest = match &spec.manifest {
        Some(file) => shlex::try_quote(file)
            .map_err(|e| crate::invalid!("--out '{file}': {e}"))?
            .into_owned(),
        None => "-".into(),
    };
    let mut created = vec![
        format!("job/{}", spec.name),
        format!("pod/{collector}"),
        format!("configmap/{}", order_name(spec)),
    ];
    if let CredentialsSource::Given(_) = spec.credentials {
        created.extend(secret_name(spec).map(|s| format!("secret/{s}")));
    }
    if let (ResultsClaim::New { .. }, Some(claim)) = (&spec.results, claim_name(spec)) {
        created.push(format!("pvc/{claim}"));
    }
    let step = |what: String, line: String| Step { what, line };
    Ok(vec![
        step(
            format!("create the objects (namespace {ns} must exist)"),
            format!("kubectl apply -f {manifest}"),
        ),
        step(
            format!("wait for all {} shards to complete", spec.shards),
            format!(
                "kubectl -n {ns} wait --for=condition=complete --timeout={}s job/{}",
                spec.wait_timeout.as_secs_f64().ceil() as u64,
                spec.name
            ),
        ),
        step(
            "wait for the collector pod".into(),
            format!(
                "kubectl -n {ns} wait --for=condition=Ready --timeout={COLLECTOR_READY_TIMEOUT_S}s pod/{collector}"
            ),
        ),
        step(
            format!("copy the shards' results to ./{id}"),
            format!("kubectl -n {ns} cp {collector}:{RESULTS_DIR}/{id} ./{id}"),
        ),
        if spec.is_capacity() {
            step(
                "the capacity result: pod 0 coordinated the search and merged every step".into(),
                format!("cqlbench report ./{id}/shard-0/capacity.json"),
            )
        } else {
            step(
                "merge them into one result (histograms added)".into(),
                format!("cqlbench merge ./{id}/shard-*.json --out {id}.json"),
            )
        },
        step(
            "clean up".into(),
            format!("kubectl -n {ns} delete {}", created.join(" ")),
        ),
    ])
}
