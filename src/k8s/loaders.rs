//! Load generators on Kubernetes: one `cqlbench run` split into N shards, as an Indexed Job.
//!
//! Pod `i` of the Job runs `cqlbench run ARGS… --shard i/N --run-id ID --out
//! /results/ID/shard-i.json`, `i` coming from the pod's completion-index annotation through the
//! downward API. Every shard writes its result to one ReadWriteMany claim; a collector pod
//! mounting the same claim is where `kubectl cp` fetches them, and `cqlbench merge` adds their
//! histograms. Database credentials reach the pods from a Secret as `CQLBENCH_USERNAME` /
//! `CQLBENCH_PASSWORD`, never on a command line.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, ObjectFieldSelector, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource, Pod, PodSpec, PodTemplateSpec,
    ResourceRequirements, Secret, SecretKeySelector, Volume, VolumeMount,
    VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{KUBERNETES_VERSION, dns_label, dns_subdomain, label_value, labels, quantity};
use crate::error::Invalid;
use crate::load::session::Credentials;

/// Where every container mounts the results claim.
pub const RESULTS_DIR: &str = "/results";
/// The environment variable holding the pod's shard index.
pub const SHARD_INDEX_ENV: &str = "SHARD_INDEX";
/// The annotation the Job controller sets to each pod's completion index.
pub const COMPLETION_INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
/// Keys of the credentials Secret (rendered or existing).
pub const USERNAME_KEY: &str = "username";
pub const PASSWORD_KEY: &str = "password";
/// Longest `--name`: the longest derived name, NAME-credentials, must stay a 63-character label.
pub const MAX_NAME_LEN: usize = 63 - "-credentials".len();
/// Kubernetes' limit on the completions of an Indexed Job.
pub const MAX_SHARDS: u32 = 100_000;
/// How long the printed workflow waits for the collector pod to be ready.
const COLLECTOR_READY_TIMEOUT_S: u64 = 300;

/// `cqlbench run` flags the renderer sets itself (or that make no sense in a pod), and why.
const OWNED_FLAGS: [(&str, &str); 7] = [
    ("--shard", "each pod's shard is set by the Job"),
    ("--run-id", "give --run-id to `k8s loaders` itself"),
    ("--out", "each shard writes /results/RUN_ID/shard-I.json"),
    (
        "--credentials-file",
        "credentials reach the pods from a Secret: give --credentials-file or --secret to `k8s loaders` itself",
    ),
    ("--loaders", "the Job's shards are the loaders"),
    ("--start-at", "`k8s loaders` owns the shards' start"),
    (
        "--cluster",
        "a pod has no local clusters: give the contact points with --hosts",
    ),
];

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
}

/// The loader container's resources (Kubernetes quantities); absent ones are left unset.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resources {
    pub cpu_request: Option<String>,
    pub cpu_limit: Option<String>,
    pub memory_request: Option<String>,
    pub memory_limit: Option<String>,
}

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
    /// What follows `cqlbench run` (workload and flags), without the flags the renderer owns.
    pub run_args: Vec<String>,
    pub credentials: CredentialsSource,
    pub results: ResultsClaim,
    pub resources: Resources,
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
    /// Only when no existing claim was named.
    pub claim: Option<PersistentVolumeClaim>,
    pub job: Job,
    pub collector: Pod,
    /// In order: apply, wait for the Job, wait for the collector, copy, merge, clean up.
    pub steps: Vec<Step>,
    header: String,
}

impl Rendered {
    /// Every object as one multi-document YAML stream (Secret, claim, Job, collector).
    pub fn yaml(&self) -> String {
        let mut docs = Vec::new();
        if let Some(secret) = &self.secret {
            docs.push(super::to_yaml(secret));
        }
        if let Some(claim) = &self.claim {
            docs.push(super::to_yaml(claim));
        }
        docs.push(super::to_yaml(&self.job));
        docs.push(super::to_yaml(&self.collector));
        super::yaml_stream(&self.header, &docs)
    }
}

/// The collector pod's name.
pub fn collector_name(spec: &LoadersSpec) -> String {
    format!("{}-collector", spec.name)
}

/// The results claim's name (rendered or existing).
pub fn claim_name(spec: &LoadersSpec) -> String {
    match &spec.results {
        ResultsClaim::New { .. } => format!("{}-results", spec.name),
        ResultsClaim::Existing(name) => name.clone(),
    }
}

/// The credentials Secret's name, if any.
pub fn secret_name(spec: &LoadersSpec) -> Option<String> {
    match &spec.credentials {
        CredentialsSource::None => None,
        CredentialsSource::Secret(name) => Some(name.clone()),
        CredentialsSource::Given(_) => Some(format!("{}-credentials", spec.name)),
    }
}

/// `run-YYYYMMDD-HHMMSS` (UTC) for a Unix time: a run id that is also a DNS-1123 label.
pub fn default_run_id(unix_s: u64) -> String {
    let t = crate::format::rfc3339_utc(unix_s); // 2026-11-22T02:30:05Z
    let date = t[..10].replace('-', "");
    let time = t[11..19].replace(':', "");
    format!("run-{date}-{time}")
}

/// Checks `spec` and builds its objects and workflow; refused input gets a one-line error.
pub fn render(spec: &LoadersSpec) -> Result<Rendered, Invalid> {
    let resources = validate(spec)?;
    Ok(Rendered {
        secret: secret(spec),
        claim: claim(spec),
        job: job(spec, resources),
        collector: collector(spec),
        steps: steps(spec)?,
        header: format!(
            "# cqlbench k8s loaders: run {}, {} shards (Kubernetes {KUBERNETES_VERSION} API).\n",
            spec.run_id, spec.shards
        ),
    })
}

fn validate(spec: &LoadersSpec) -> Result<ResourceRequirements, Invalid> {
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
    if spec.wait_timeout < Duration::from_secs(1) {
        return Err(crate::invalid!("--timeout must be at least 1s"));
    }
    validate_run_args(&spec.run_args)?;
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
    }
    resources(&spec.resources)
}

/// A run id that `cqlbench run --run-id` and a Kubernetes label value both accept.
fn run_id(s: &str) -> Result<(), Invalid> {
    if label_value("--run-id", s).is_err() || s.bytes().any(|c| c.is_ascii_uppercase()) {
        return Err(crate::invalid!(
            "--run-id '{s}' is not a run id that is also a Kubernetes label: give 1 to 63 \
             lower-case letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        ));
    }
    Ok(())
}

fn validate_run_args(args: &[String]) -> Result<(), Invalid> {
    let Some(first) = args.first() else {
        return Err(crate::invalid!(
            "no run arguments: give what follows `cqlbench run` after `--`, e.g. -- keyvalue --hosts cassandra-dc1-service --rate 4000 --duration 5m"
        ));
    };
    if first == "run" {
        return Err(crate::invalid!(
            "the run arguments start with 'run': give only what follows `cqlbench run`, e.g. -- keyvalue --hosts …"
        ));
    }
    for arg in args {
        let flag = arg.split('=').next().unwrap_or(arg);
        if let Some((flag, why)) = OWNED_FLAGS.iter().find(|(f, _)| *f == flag) {
            return Err(crate::invalid!(
                "run argument '{flag}' is not allowed: {why}"
            ));
        }
    }
    Ok(())
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

fn meta(spec: &LoadersSpec, name: String, component: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(spec.namespace.clone()),
        labels: Some(labels(component, &spec.run_id)),
        ..Default::default()
    }
}

fn secret(spec: &LoadersSpec) -> Option<Secret> {
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

fn claim(spec: &LoadersSpec) -> Option<PersistentVolumeClaim> {
    let ResultsClaim::New {
        size,
        storage_class,
    } = &spec.results
    else {
        return None;
    };
    Some(PersistentVolumeClaim {
        metadata: meta(spec, claim_name(spec), "results"),
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

/// The results claim as the pods' volume `results`, and its mount at [`RESULTS_DIR`].
fn results_volume(spec: &LoadersSpec) -> (Volume, VolumeMount) {
    let volume = Volume {
        name: "results".into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: claim_name(spec),
            read_only: None,
        }),
        ..Default::default()
    };
    let mount = VolumeMount {
        name: "results".into(),
        mount_path: RESULTS_DIR.into(),
        ..Default::default()
    };
    (volume, mount)
}

/// `cqlbench run ARGS… --shard $(SHARD_INDEX)/N --run-id ID --out /results/ID/shard-….json`:
/// the container's arguments after `cqlbench` (Kubernetes expands `$(SHARD_INDEX)` because the
/// container's env defines it).
pub fn shard_args(spec: &LoadersSpec) -> Vec<String> {
    let index = format!("$({SHARD_INDEX_ENV})");
    let mut args = vec!["run".to_string()];
    args.extend(spec.run_args.iter().cloned());
    args.extend([
        "--shard".to_string(),
        format!("{index}/{}", spec.shards),
        "--run-id".to_string(),
        spec.run_id.clone(),
        "--out".to_string(),
        format!("{RESULTS_DIR}/{}/shard-{index}.json", spec.run_id),
    ]);
    args
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

fn job(spec: &LoadersSpec, resources: ResourceRequirements) -> Job {
    let (volume, mount) = results_volume(spec);
    let container = Container {
        name: "cqlbench".into(),
        image: Some(spec.image.clone()),
        command: Some(vec!["cqlbench".into()]),
        args: Some(shard_args(spec)),
        env: Some(env(spec)),
        resources: Some(resources),
        volume_mounts: Some(vec![mount]),
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
                    containers: vec![container],
                    volumes: Some(vec![volume]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn collector(spec: &LoadersSpec) -> Pod {
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

fn steps(spec: &LoadersSpec) -> Result<Vec<Step>, Invalid> {
    let ns = &spec.namespace;
    let id = &spec.run_id;
    let collector = collector_name(spec);
    let manifest = match &spec.manifest {
        Some(file) => shlex::try_quote(file)
            .map_err(|e| crate::invalid!("--out '{file}': {e}"))?
            .into_owned(),
        None => "-".into(),
    };
    let mut created = vec![format!("job/{}", spec.name), format!("pod/{collector}")];
    if let CredentialsSource::Given(_) = spec.credentials {
        created.extend(secret_name(spec).map(|s| format!("secret/{s}")));
    }
    if let ResultsClaim::New { .. } = spec.results {
        created.push(format!("pvc/{}", claim_name(spec)));
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
        step(
            "merge them into one result (histograms added)".into(),
            format!("cqlbench merge ./{id}/shard-*.json --out {id}.json"),
        ),
        step(
            "clean up".into(),
            format!("kubectl -n {ns} delete {}", created.join(" ")),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWORD: &str = "s3cr:t \"pw\" #x";

    fn given() -> CredentialsSource {
        CredentialsSource::Given(Credentials {
            username: "bench".into(),
            password: PASSWORD.into(),
        })
    }

    fn spec() -> LoadersSpec {
        LoadersSpec {
            name: "cqlbench-loaders".into(),
            namespace: "bench".into(),
            image: "registry.example/cqlbench:0.1".into(),
            shards: 4,
            backoff_limit: 0,
            run_id: "run-20261124-123402".into(),
            run_args: [
                "keyvalue",
                "--hosts",
                "cassandra-dc1-service",
                "--rate",
                "4000",
                "--duration",
                "5m",
            ]
            .map(String::from)
            .to_vec(),
            credentials: given(),
            results: ResultsClaim::New {
                size: "1Gi".into(),
                storage_class: Some("nfs".into()),
            },
            resources: Resources {
                cpu_request: Some("2".into()),
                cpu_limit: Some("2".into()),
                memory_request: Some("1Gi".into()),
                memory_limit: Some("1Gi".into()),
            },
            wait_timeout: Duration::from_secs(3600),
            manifest: Some("loaders.yaml".into()),
        }
    }

    fn container(job: &Job) -> &Container {
        &job.spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0]
    }

    fn env_var<'a>(c: &'a Container, name: &str) -> Option<&'a EnvVar> {
        c.env.as_ref().unwrap().iter().find(|e| e.name == name)
    }

    #[test]
    fn renders_like_the_golden_manifest() {
        let r = render(&spec()).unwrap();
        crate::testutil::assert_golden("src/k8s/golden/loaders.yaml", &r.yaml());
    }

    #[test]
    fn the_job_is_indexed_with_one_completion_per_shard() {
        let r = render(&spec()).unwrap();
        let js = r.job.spec.as_ref().unwrap();
        assert_eq!(js.completion_mode.as_deref(), Some("Indexed"));
        assert_eq!(js.completions, Some(4));
        assert_eq!(js.parallelism, Some(4));
        assert_eq!(js.backoff_limit, Some(0));
        let pod = js.template.spec.as_ref().unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
        assert_eq!(pod.containers.len(), 1);
        let want = labels("loader", "run-20261124-123402");
        assert_eq!(r.job.metadata.labels.as_ref(), Some(&want));
        assert_eq!(
            js.template.metadata.as_ref().unwrap().labels.as_ref(),
            Some(&want)
        );
        assert_eq!(want["app.kubernetes.io/name"], "cqlbench");
        assert_eq!(want["app.kubernetes.io/component"], "loader");
        assert_eq!(want["cqlbench.io/run-id"], "run-20261124-123402");
    }

    #[test]
    fn each_shard_runs_its_index_of_n_and_writes_its_own_file() {
        let r = render(&spec()).unwrap();
        let c = container(&r.job);
        assert_eq!(c.image.as_deref(), Some("registry.example/cqlbench:0.1"));
        assert_eq!(c.command.as_deref(), Some(&["cqlbench".to_string()][..]));
        let args = c.args.as_ref().unwrap();
        let want = "run keyvalue --hosts cassandra-dc1-service --rate 4000 --duration 5m \
                    --shard $(SHARD_INDEX)/4 --run-id run-20261124-123402 \
                    --out /results/run-20261124-123402/shard-$(SHARD_INDEX).json";
        assert_eq!(args.join(" "), want);
        // $(SHARD_INDEX) is expanded only because the container defines it, from the
        // completion-index annotation.
        let index = env_var(c, "SHARD_INDEX").unwrap();
        let field = index
            .value_from
            .as_ref()
            .unwrap()
            .field_ref
            .as_ref()
            .unwrap();
        assert_eq!(
            field.field_path,
            "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        );
        let home = env_var(c, "CQLBENCH_HOME").unwrap();
        assert_eq!(home.value.as_deref(), Some("/tmp/cqlbench-home"));
        let mount = &c.volume_mounts.as_ref().unwrap()[0];
        assert_eq!(
            (mount.name.as_str(), mount.mount_path.as_str()),
            ("results", "/results")
        );
    }

    #[test]
    fn the_password_is_only_in_the_secret() {
        let r = render(&spec()).unwrap();
        let c = container(&r.job);
        for word in c.args.iter().flatten().chain(c.command.iter().flatten()) {
            assert!(!word.contains("s3cr"), "{word}");
        }
        assert!(
            c.env
                .iter()
                .flatten()
                .all(|e| e.value.as_deref() != Some(PASSWORD))
        );
        for step in &r.steps {
            assert!(!step.line.contains("s3cr"), "{}", step.line);
        }
        let job_yaml = crate::k8s::to_yaml(&r.job) + &crate::k8s::to_yaml(&r.collector);
        assert!(!job_yaml.contains("s3cr"), "{job_yaml}");
        for (var, key) in [
            ("CQLBENCH_USERNAME", "username"),
            ("CQLBENCH_PASSWORD", "password"),
        ] {
            let from = env_var(c, var).unwrap().value_from.as_ref().unwrap();
            let sel = from.secret_key_ref.as_ref().unwrap();
            assert_eq!(
                (sel.name.as_str(), sel.key.as_str()),
                ("cqlbench-loaders-credentials", key)
            );
        }
        let secret = r.secret.as_ref().unwrap();
        assert_eq!(secret.type_.as_deref(), Some("Opaque"));
        assert_eq!(
            secret.metadata.name.as_deref(),
            Some("cqlbench-loaders-credentials")
        );
        let data = secret.string_data.as_ref().unwrap();
        assert_eq!(
            (data["username"].as_str(), data["password"].as_str()),
            ("bench", PASSWORD)
        );
        // The stream holds it once, and it reads back intact despite its quotes, colon and '#'.
        let yaml = r.yaml();
        assert_eq!(yaml.matches("s3cr").count(), 1, "{yaml}");
        let first: Secret = serde_yaml::from_str(yaml.split("---\n").next().unwrap()).unwrap();
        assert_eq!(first.string_data.unwrap()["password"], PASSWORD);
    }

    #[test]
    fn an_existing_secret_is_referenced_and_none_means_no_credentials() {
        let mut s = spec();
        s.credentials = CredentialsSource::Secret("db-creds".into());
        let r = render(&s).unwrap();
        assert!(r.secret.is_none());
        let from = env_var(container(&r.job), "CQLBENCH_PASSWORD").unwrap();
        let sel = from
            .value_from
            .as_ref()
            .unwrap()
            .secret_key_ref
            .as_ref()
            .unwrap();
        assert_eq!(
            (sel.name.as_str(), sel.key.as_str()),
            ("db-creds", "password")
        );
        // Not ours to delete.
        assert!(!r.steps.last().unwrap().line.contains("secret/"));

        s.credentials = CredentialsSource::None;
        let r = render(&s).unwrap();
        assert!(r.secret.is_none());
        let c = container(&r.job);
        assert!(env_var(c, "CQLBENCH_USERNAME").is_none());
        assert!(env_var(c, "CQLBENCH_PASSWORD").is_none());
        assert!(!r.yaml().contains("kind: Secret"));
    }

    #[test]
    fn the_results_claim_is_created_read_write_many_or_an_existing_one_is_used() {
        let r = render(&spec()).unwrap();
        let claim = r.claim.as_ref().unwrap();
        assert_eq!(
            claim.metadata.name.as_deref(),
            Some("cqlbench-loaders-results")
        );
        let cs = claim.spec.as_ref().unwrap();
        assert_eq!(
            cs.access_modes.as_deref(),
            Some(&["ReadWriteMany".to_string()][..])
        );
        assert_eq!(cs.storage_class_name.as_deref(), Some("nfs"));
        let storage = &cs.resources.as_ref().unwrap().requests.as_ref().unwrap()["storage"];
        assert_eq!(storage.0, "1Gi");

        let mut s = spec();
        s.results = ResultsClaim::Existing("shared-results".into());
        let r = render(&s).unwrap();
        assert!(r.claim.is_none());
        for pod in [
            r.job.spec.as_ref().unwrap().template.spec.as_ref(),
            r.collector.spec.as_ref(),
        ] {
            let volume = &pod.unwrap().volumes.as_ref().unwrap()[0];
            let source = volume.persistent_volume_claim.as_ref().unwrap();
            assert_eq!(source.claim_name, "shared-results");
        }
        assert!(!r.steps.last().unwrap().line.contains("pvc/"));
    }

    #[test]
    fn the_collector_sleeps_with_the_claim_mounted() {
        let r = render(&spec()).unwrap();
        assert_eq!(
            r.collector.metadata.name.as_deref(),
            Some("cqlbench-loaders-collector")
        );
        let pod = r.collector.spec.as_ref().unwrap();
        let c = &pod.containers[0];
        assert_eq!(c.image.as_deref(), Some("registry.example/cqlbench:0.1"));
        assert_eq!(c.command.as_ref().unwrap().join(" "), "sleep 3600");
        assert_eq!(c.volume_mounts.as_ref().unwrap()[0].mount_path, "/results");
        let claim = pod.volumes.as_ref().unwrap()[0]
            .persistent_volume_claim
            .as_ref();
        assert_eq!(claim.unwrap().claim_name, "cqlbench-loaders-results");
        let labels = r.collector.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["app.kubernetes.io/component"], "collector");
    }

    #[test]
    fn resources_are_requests_and_limits_of_the_loader_only() {
        let r = render(&spec()).unwrap();
        let res = container(&r.job).resources.as_ref().unwrap();
        for map in [res.requests.as_ref().unwrap(), res.limits.as_ref().unwrap()] {
            assert_eq!(
                (map["cpu"].0.as_str(), map["memory"].0.as_str()),
                ("2", "1Gi")
            );
        }
        let mut s = spec();
        s.resources = Resources {
            memory_request: Some("512Mi".into()),
            ..Default::default()
        };
        let r = render(&s).unwrap();
        let res = container(&r.job).resources.as_ref().unwrap();
        assert_eq!(res.requests.as_ref().unwrap().len(), 1);
        assert!(res.limits.is_none());
        assert!(r.collector.spec.unwrap().containers[0].resources.is_none());
    }

    #[test]
    fn the_workflow_applies_waits_copies_merges_and_cleans_up() {
        let r = render(&spec()).unwrap();
        let lines: Vec<&str> = r.steps.iter().map(|s| s.line.as_str()).collect();
        assert_eq!(
            lines,
            [
                "kubectl apply -f loaders.yaml",
                "kubectl -n bench wait --for=condition=complete --timeout=3600s job/cqlbench-loaders",
                "kubectl -n bench wait --for=condition=Ready --timeout=300s pod/cqlbench-loaders-collector",
                "kubectl -n bench cp cqlbench-loaders-collector:/results/run-20261124-123402 ./run-20261124-123402",
                "cqlbench merge ./run-20261124-123402/shard-*.json --out run-20261124-123402.json",
                "kubectl -n bench delete job/cqlbench-loaders pod/cqlbench-loaders-collector \
                 secret/cqlbench-loaders-credentials pvc/cqlbench-loaders-results",
            ]
        );
        let mut s = spec();
        s.manifest = Some("my dir/it's.yaml".into());
        assert_eq!(
            render(&s).unwrap().steps[0].line,
            r#"kubectl apply -f "my dir/it's.yaml""#
        );
        s.manifest = None;
        assert_eq!(render(&s).unwrap().steps[0].line, "kubectl apply -f -");
    }

    #[test]
    fn the_default_run_id_is_the_utc_time_as_a_dns_label() {
        let id = default_run_id(1_795_314_605);
        assert_eq!(id, "run-20261122-023005");
        assert!(crate::k8s::dns_label("run id", &id, 63).is_ok());
    }

    /// `render` of `spec()` changed by `change` fails with exactly `message`.
    fn refused(change: impl FnOnce(&mut LoadersSpec), message: &str) {
        let mut s = spec();
        change(&mut s);
        let e = render(&s).unwrap_err();
        assert_eq!(e, message);
        assert!(!e.contains('\n'));
    }

    #[test]
    fn refuses_zero_or_too_many_shards_and_bad_job_limits() {
        refused(
            |s| s.shards = 0,
            "--shards 0: give 1 to 100000 (Kubernetes' limit for an Indexed Job)",
        );
        refused(
            |s| s.shards = 100_001,
            "--shards 100001: give 1 to 100000 (Kubernetes' limit for an Indexed Job)",
        );
        refused(
            |s| s.backoff_limit = u32::MAX,
            "--backoff-limit 4294967295: give at most 2147483647",
        );
        refused(
            |s| s.wait_timeout = Duration::from_millis(500),
            "--timeout must be at least 1s",
        );
    }

    #[test]
    fn refuses_names_that_are_not_dns_labels() {
        for bad in ["", "Loaders", "loaders_1", "-loaders", "a.b"] {
            let e = render(&LoadersSpec {
                name: bad.into(),
                ..spec()
            })
            .unwrap_err();
            assert!(
                e.starts_with(&format!("--name '{bad}' is not a DNS-1123 label")),
                "{e}"
            );
        }
        // NAME-credentials must fit in 63 characters.
        assert!(
            render(&LoadersSpec {
                name: "a".repeat(51),
                ..spec()
            })
            .is_ok()
        );
        let e = render(&LoadersSpec {
            name: "a".repeat(52),
            ..spec()
        })
        .unwrap_err();
        assert!(e.contains("give 1 to 51"), "{e}");
        let e = render(&LoadersSpec {
            namespace: "Bench".into(),
            ..spec()
        })
        .unwrap_err();
        assert!(
            e.starts_with("--namespace 'Bench' is not a DNS-1123 label"),
            "{e}"
        );
        // What `cqlbench run --run-id` and a label value both accept.
        for bad in ["run/1", "Run-1", "-run", "run.", "", &"r".repeat(64)] {
            let e = render(&LoadersSpec {
                run_id: bad.into(),
                ..spec()
            })
            .unwrap_err();
            let want = format!("--run-id '{bad}' is not a run id that is also a Kubernetes label");
            assert!(e.starts_with(&want), "{e}");
        }
        for ok in ["r", "kv_1.a-2", &"r".repeat(63)] {
            let id = ok.to_string();
            assert!(
                render(&LoadersSpec {
                    run_id: id,
                    ..spec()
                })
                .is_ok(),
                "{ok}"
            );
        }
    }

    #[test]
    fn refuses_an_empty_image() {
        for bad in ["", "  "] {
            refused(
                |s| s.image = bad.into(),
                "--image is empty: give the cqlbench container image, e.g. registry.example/cqlbench:0.1",
            );
        }
        refused(
            |s| s.image = "a b".into(),
            "--image 'a b' contains white space: give one image reference",
        );
    }

    #[test]
    fn refuses_run_arguments_the_renderer_owns() {
        for flag in [
            "--shard",
            "--run-id",
            "--out",
            "--credentials-file",
            "--loaders",
            "--start-at",
            "--cluster",
        ] {
            for form in [
                vec![flag.to_string(), "x".into()],
                vec![format!("{flag}=x")],
            ] {
                let mut s = spec();
                s.run_args.extend(form);
                let e = render(&s).unwrap_err();
                assert!(
                    e.starts_with(&format!("run argument '{flag}' is not allowed: ")),
                    "{e}"
                );
            }
        }
        // A flag that merely starts like one of them is the run's business.
        let mut s = spec();
        s.run_args
            .extend(["--output-format".into(), "--sharding=x".into()]);
        assert!(render(&s).is_ok());
        refused(
            |s| s.run_args.clear(),
            "no run arguments: give what follows `cqlbench run` after `--`, e.g. -- keyvalue --hosts cassandra-dc1-service --rate 4000 --duration 5m",
        );
        refused(
            |s| s.run_args.insert(0, "run".into()),
            "the run arguments start with 'run': give only what follows `cqlbench run`, e.g. -- keyvalue --hosts …",
        );
    }

    #[test]
    fn refuses_credentials_without_both_lines_and_bad_object_names() {
        let without = |username: &str, password: &str| {
            CredentialsSource::Given(Credentials {
                username: username.into(),
                password: password.into(),
            })
        };
        let message =
            "the credentials need a user name and a password (two lines of the credentials file)";
        refused(|s| s.credentials = without("", "pw"), message);
        refused(|s| s.credentials = without("bench", ""), message);
        let e = render(&LoadersSpec {
            credentials: CredentialsSource::Secret("Creds".into()),
            ..spec()
        });
        assert!(
            e.unwrap_err()
                .starts_with("--secret 'Creds' is not a DNS-1123 subdomain")
        );
        let e = render(&LoadersSpec {
            results: ResultsClaim::Existing("a_b".into()),
            ..spec()
        });
        assert!(
            e.unwrap_err()
                .starts_with("--results-claim 'a_b' is not a DNS-1123 subdomain")
        );
        let class = ResultsClaim::New {
            size: "1Gi".into(),
            storage_class: Some("Fast".into()),
        };
        let e = render(&LoadersSpec {
            results: class,
            ..spec()
        })
        .unwrap_err();
        assert!(
            e.starts_with("--storage-class 'Fast' is not a DNS-1123 subdomain"),
            "{e}"
        );
    }

    #[test]
    fn refuses_quantities_kubernetes_would_not_parse() {
        refused(
            |s| {
                s.results = ResultsClaim::New {
                    size: "1GB".into(),
                    storage_class: None,
                }
            },
            "--results-size '1GB' is not a positive Kubernetes quantity: give e.g. 1Gi or 500Mi",
        );
        refused(
            |s| s.resources.cpu_limit = Some("two".into()),
            "--cpu 'two' is not a positive Kubernetes quantity: give e.g. 500m or 2",
        );
        refused(
            |s| s.resources.memory_request = Some("0".into()),
            "--memory '0' is not a positive Kubernetes quantity: give e.g. 512Mi or 2Gi",
        );
    }
}
