//! `cqlbench k8s loaders` through the real binary: every flag, valid values reaching the right
//! field of the typed objects read back from the printed YAML, and bad values refused in one
//! line with a non-zero exit, nothing printed or written.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, PersistentVolumeClaim, Pod, PodSpec, Secret,
};

const RUN: [&str; 5] = [
    "--",
    "keyvalue",
    "--hosts",
    "cassandra-dc1-service",
    "--rate=4000",
];

fn cqlbench(dir: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
    c.current_dir(dir).env("CQLBENCH_HOME", dir.join("home"));
    c
}

/// `k8s loaders ARGS…`, run in `dir`, with `--image reg/cqlbench:0.1` unless ARGS have an
/// image and `-- keyvalue …` unless they have run arguments.
fn loaders(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut c = cqlbench(dir);
    c.args(["k8s", "loaders"]);
    if !args.contains(&"--image") {
        c.args(["--image", "reg/cqlbench:0.1"]);
    }
    c.args(args);
    if !args.contains(&"--") {
        c.args(RUN);
    }
    c.output().unwrap()
}

/// The objects of a rendered stream, by kind.
#[derive(Default)]
struct Objects {
    secret: Option<Secret>,
    order: Option<ConfigMap>,
    claim: Option<PersistentVolumeClaim>,
    job: Option<Job>,
    collector: Option<Pod>,
    kinds: Vec<String>,
}

impl Objects {
    fn job(&self) -> &Job {
        self.job.as_ref().expect("a Job")
    }
    fn pod(&self) -> &PodSpec {
        let spec = self.job().spec.as_ref().unwrap();
        spec.template.spec.as_ref().unwrap()
    }
    fn container(&self) -> &Container {
        &self.pod().containers[0]
    }
    /// The pods' order, read from its ConfigMap as a pod reads it.
    fn order(&self) -> cqlbench::step::order::Order {
        let map = self.order.as_ref().expect("an order ConfigMap");
        let text = &map.data.as_ref().unwrap()["order.json"];
        cqlbench::step::order::Order::from_json(text, "order").unwrap()
    }
    /// What each pod runs, as the `run` command line that makes it.
    fn run_args(&self) -> Vec<String> {
        self.order().task.run().unwrap().args_shown("run")
    }
    fn env(&self, name: &str) -> Option<cqlbench::yaml::Value> {
        let env = self.container().env.as_ref().unwrap();
        let var = env.iter().find(|e| e.name == name)?;
        Some(cqlbench::yaml::to_value(var))
    }
}

fn parse(yaml: &str) -> Objects {
    let mut o = Objects::default();
    for v in cqlbench::yaml::from_str_multiple::<cqlbench::yaml::Value>(yaml).unwrap() {
        let kind = v["kind"].as_str().unwrap().to_string();
        match kind.as_str() {
            "Secret" => o.secret = Some(cqlbench::yaml::from_value(v).unwrap()),
            "ConfigMap" => o.order = Some(cqlbench::yaml::from_value(v).unwrap()),
            "PersistentVolumeClaim" => o.claim = Some(cqlbench::yaml::from_value(v).unwrap()),
            "Job" => o.job = Some(cqlbench::yaml::from_value(v).unwrap()),
            "Pod" => o.collector = Some(cqlbench::yaml::from_value(v).unwrap()),
            other => panic!("unexpected kind {other}"),
        }
        o.kinds.push(kind);
    }
    o
}

/// Runs `loaders(args)`, expects success and returns the objects printed and stderr.
fn rendered(args: &[&str]) -> (Objects, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = loaders(dir.path(), args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}:\n{stderr}");
    (parse(&String::from_utf8(out.stdout).unwrap()), stderr)
}

/// Runs `loaders(args)`, expects a non-zero exit (not a panic), one `error:` line containing
/// `needle` (clap adds a usage hint below its own) and nothing on stdout.
fn refused(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    refused_in(dir.path(), args, needle);
}

fn refused_in(dir: &Path, args: &[&str], needle: &str) {
    let out = loaders(dir, args);
    common::refused_in_one_line(&out, args, &[needle]);
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
}

/// A run argument that contradicts what the renderer gives the pods is refused at render
/// time, not by each pod after `kubectl apply`.
#[test]
fn run_arguments_are_checked_with_the_tls_the_pods_get() {
    for extra in [
        &["--shards", "2", "--tls-secret", "client-tls"][..],
        &[
            "--shards",
            "2",
            "--tls-secret",
            "client-tls",
            "--tls-client-cert",
        ],
    ] {
        let mut args = extra.to_vec();
        args.extend([
            "--",
            "keyvalue",
            "--hosts",
            "cassandra-dc1-service",
            "--no-tls",
        ]);
        refused(&args, "--no-tls and --tls-ca contradict each other");
        let mut capacity = extra.to_vec();
        capacity.extend(["--", "capacity", "keyvalue", "--hosts", "h", "--no-tls"]);
        refused(&capacity, "--no-tls and --tls-ca contradict each other");
    }
}

#[test]
fn shards_make_an_indexed_job_with_the_defaults() {
    let (o, stderr) = rendered(&["--shards", "4"]);
    assert_eq!(
        o.kinds,
        ["ConfigMap", "PersistentVolumeClaim", "Job", "Pod"]
    );
    let job = o.job();
    assert_eq!(job.metadata.name.as_deref(), Some("cqlbench-loaders"));
    assert_eq!(job.metadata.namespace.as_deref(), Some("default"));
    let spec = job.spec.as_ref().unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(4), Some(4)));
    assert_eq!(spec.backoff_limit, Some(0));
    assert_eq!(o.pod().restart_policy.as_deref(), Some("Never"));
    let c = o.container();
    assert_eq!(c.image.as_deref(), Some("reg/cqlbench:0.1"));
    assert_eq!(c.command.as_ref().unwrap(), &["cqlbench"]);
    // The default run id: run-YYYYMMDD-HHMMSS.
    let run_id = job.metadata.labels.as_ref().unwrap()["cqlbench.io/run-id"].clone();
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    assert!(
        run_id.len() == 19
            && run_id.starts_with("run-")
            && digits(&run_id[4..12])
            && digits(&run_id[13..]),
        "{run_id}"
    );
    let args = c.args.as_ref().unwrap().join(" ");
    assert_eq!(
        args,
        format!(
            "shard /etc/cqlbench/order/order.json --index $(SHARD_INDEX) \
             --out /results/{run_id}/shard-$(SHARD_INDEX).json"
        )
    );
    // The typed step every pod reads, for 4 shards of the run.
    let order = o.order();
    assert_eq!((order.run_id.as_str(), order.shards), (run_id.as_str(), 4));
    assert_eq!(
        o.run_args().join(" "),
        "run keyvalue --hosts cassandra-dc1-service --rate 4000"
    );
    let map = o.order.as_ref().unwrap();
    assert_eq!(map.metadata.name.as_deref(), Some("cqlbench-loaders-order"));
    let index = o.env("SHARD_INDEX").unwrap();
    assert_eq!(
        index["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    assert_eq!(
        o.env("CQLBENCH_HOME").unwrap()["value"],
        "/tmp/cqlbench-home"
    );
    assert!(o.env("CQLBENCH_USERNAME").is_none() && o.secret.is_none());
    assert!(c.resources.as_ref().unwrap().requests.is_none());
    // The default claim: 1Gi, ReadWriteMany, the cluster's default class.
    let claim = o.claim.as_ref().unwrap().spec.as_ref().unwrap();
    let storage = &claim.resources.as_ref().unwrap().requests.as_ref().unwrap()["storage"];
    assert_eq!(storage.0, "1Gi");
    assert_eq!(claim.access_modes.as_ref().unwrap(), &["ReadWriteMany"]);
    assert!(claim.storage_class_name.is_none());
    let collector = o.collector.as_ref().unwrap();
    assert_eq!(
        collector.metadata.name.as_deref(),
        Some("cqlbench-loaders-collector")
    );
    // Without --out the workflow goes to stderr, applying from standard input.
    assert!(stderr.contains("\nkubectl apply -f -\n"), "{stderr}");
    assert!(stderr.contains(
        "kubectl -n default wait --for=condition=complete --timeout=3600s job/cqlbench-loaders"
    ));
    assert!(stderr.contains(&format!(
        "cqlbench merge ./{run_id}/shard-*.json --out {run_id}.json"
    )));
}

#[test]
fn shards_must_be_a_positive_number() {
    refused(&["--shards", "0"], "--shards 0: give 1 to 100000");
    refused(&["--shards", "100001"], "--shards 100001: give 1 to 100000");
    refused(
        &["--shards=-1"],
        "invalid value '-1' for '--shards <SHARDS>'",
    );
    refused(&["--shards", "-1"], "unexpected argument '-1'");
    refused(
        &["--shards", "four"],
        "invalid value 'four' for '--shards <SHARDS>'",
    );
    refused(&[], "the following required arguments were not provided");
}

#[test]
fn name_namespace_and_run_id_name_every_object() {
    for ns_flag in ["--namespace", "-n"] {
        let (o, stderr) = rendered(&[
            "--shards", "2", "--name", "kv-load", ns_flag, "bench", "--run-id", "kv-1",
        ]);
        let job = o.job();
        assert_eq!(job.metadata.name.as_deref(), Some("kv-load"));
        assert_eq!(job.metadata.namespace.as_deref(), Some("bench"));
        assert_eq!(
            job.metadata.labels.as_ref().unwrap()["cqlbench.io/run-id"],
            "kv-1"
        );
        let claim = o.claim.as_ref().unwrap();
        assert_eq!(claim.metadata.name.as_deref(), Some("kv-load-results"));
        assert_eq!(claim.metadata.namespace.as_deref(), Some("bench"));
        let collector = o.collector.as_ref().unwrap();
        assert_eq!(
            collector.metadata.name.as_deref(),
            Some("kv-load-collector")
        );
        assert_eq!(collector.metadata.namespace.as_deref(), Some("bench"));
        let args = o.container().args.as_ref().unwrap().join(" ");
        assert!(
            args.ends_with("--out /results/kv-1/shard-$(SHARD_INDEX).json"),
            "{args}"
        );
        assert_eq!(o.order().run_id, "kv-1");
        let map = o.order.as_ref().unwrap();
        assert_eq!(map.metadata.name.as_deref(), Some("kv-load-order"));
        assert_eq!(map.metadata.namespace.as_deref(), Some("bench"));
        assert!(
            stderr.contains("kubectl -n bench cp kv-load-collector:/results/kv-1 ./kv-1\n"),
            "{stderr}"
        );
        assert!(stderr.contains(
            "kubectl -n bench delete job/kv-load pod/kv-load-collector configmap/kv-load-order pvc/kv-load-results\n"
        ));
    }
}

#[test]
fn bad_names_are_refused() {
    for bad in ["Loaders", "kv_load", "-kv", ""] {
        refused(
            &["--shards", "2", &format!("--name={bad}")],
            &format!("--name '{bad}' is not a DNS-1123 label"),
        );
    }
    refused(
        &["--shards", "2", "--name", &"a".repeat(52)],
        "give 1 to 51",
    );
    refused(
        &["--shards", "2", "-n", "Bench"],
        "--namespace 'Bench' is not a DNS-1123 label",
    );
    // What `cqlbench run --run-id` and a Kubernetes label value both accept.
    for bad in ["a/b", "..", "Run-1", "run-", &"r".repeat(64)] {
        refused(
            &["--shards", "2", "--run-id", bad],
            &format!("--run-id '{bad}' is not a run id that is also a Kubernetes label"),
        );
    }
}

#[test]
fn the_image_is_required_and_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    let out = cqlbench(dir.path())
        .args(["k8s", "loaders", "--shards", "2"])
        .args(RUN)
        .output()
        .unwrap();
    // clap's usage error: exit code 2, the missing flag named below its error line.
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\n  --image <IMAGE>\n"));
    assert!(out.stdout.is_empty());
    refused(&["--shards", "2", "--image", ""], "--image is empty");
    refused(
        &["--shards", "2", "--image", "a b"],
        "--image 'a b' contains white space",
    );
    let (o, _) = rendered(&["--shards", "2", "--image", "ghcr.io/x/cqlbench@sha256:0f"]);
    assert_eq!(
        o.container().image.as_deref(),
        Some("ghcr.io/x/cqlbench@sha256:0f")
    );
    let collector = o.collector.as_ref().unwrap().spec.as_ref().unwrap();
    assert_eq!(
        collector.containers[0].image.as_deref(),
        Some("ghcr.io/x/cqlbench@sha256:0f")
    );
}

#[test]
fn a_credentials_file_becomes_a_secret_and_never_an_argument() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("creds"), "bench\np@ss: 'w0rd' #1\n").unwrap();
    let out = loaders(
        dir.path(),
        &["--shards", "3", "--credentials-file", "creds"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).unwrap();
    let o = parse(&yaml);
    assert_eq!(
        o.kinds,
        ["Secret", "ConfigMap", "PersistentVolumeClaim", "Job", "Pod"]
    );
    let secret = o.secret.as_ref().unwrap();
    assert_eq!(
        secret.metadata.name.as_deref(),
        Some("cqlbench-loaders-credentials")
    );
    assert_eq!(secret.type_.as_deref(), Some("Opaque"));
    let data = secret.string_data.as_ref().unwrap();
    assert_eq!(data["username"], "bench");
    assert_eq!(data["password"], "p@ss: 'w0rd' #1");
    assert_eq!(yaml.matches("w0rd").count(), 1, "{yaml}");
    let c = o.container();
    let words = c.args.iter().chain(c.command.iter()).flatten();
    assert!(
        words
            .clone()
            .all(|w| !w.contains("w0rd") && !w.contains("creds"))
    );
    for (var, key) in [
        ("CQLBENCH_USERNAME", "username"),
        ("CQLBENCH_PASSWORD", "password"),
    ] {
        let env = o.env(var).unwrap();
        let sel = &env["valueFrom"]["secretKeyRef"];
        assert_eq!(sel["name"], "cqlbench-loaders-credentials");
        assert_eq!(sel["key"], key);
    }
    assert!(String::from_utf8_lossy(&out.stderr).contains(" secret/cqlbench-loaders-credentials "));
}

#[test]
fn a_credentials_file_needs_two_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one"), "bench\n").unwrap();
    std::fs::write(dir.path().join("empty-user"), "\npassword\n").unwrap();
    for file in ["one", "empty-user"] {
        refused_in(
            dir.path(),
            &["--shards", "2", "--credentials-file", file],
            "expected two lines: user name, then password",
        );
    }
    refused_in(
        dir.path(),
        &["--shards", "2", "--credentials-file", "missing"],
        "credentials file missing:",
    );
}

#[test]
fn an_existing_secret_is_referenced_not_rendered() {
    let (o, stderr) = rendered(&["--shards", "2", "--secret", "db-creds"]);
    assert!(o.secret.is_none());
    let env = o.env("CQLBENCH_PASSWORD").unwrap();
    assert_eq!(env["valueFrom"]["secretKeyRef"]["name"], "db-creds");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["key"], "password");
    assert!(
        !stderr.contains("secret/"),
        "the user's Secret is not ours to delete"
    );
    refused(
        &["--shards", "2", "--secret", "DB"],
        "--secret 'DB' is not a DNS-1123 subdomain",
    );
    refused(
        &["--shards", "2", "--secret", "s", "--credentials-file", "f"],
        "cannot be used with",
    );
}

#[test]
fn an_existing_results_claim_replaces_the_created_one() {
    let (o, stderr) = rendered(&["--shards", "2", "--results-claim", "shared-results"]);
    assert!(o.claim.is_none());
    assert_eq!(o.kinds, ["ConfigMap", "Job", "Pod"]);
    for pod in [
        o.pod(),
        o.collector.as_ref().unwrap().spec.as_ref().unwrap(),
    ] {
        let volume = &pod.volumes.as_ref().unwrap()[0];
        assert_eq!(
            volume.persistent_volume_claim.as_ref().unwrap().claim_name,
            "shared-results"
        );
    }
    assert!(
        !stderr.contains("pvc/"),
        "the user's claim is not ours to delete"
    );
    refused(
        &["--shards", "2", "--results-claim", "Shared"],
        "--results-claim 'Shared' is not a DNS-1123 subdomain",
    );
    refused(
        &[
            "--shards",
            "2",
            "--results-claim",
            "c",
            "--results-size",
            "2Gi",
        ],
        "cannot be used with",
    );
    refused(
        &[
            "--shards",
            "2",
            "--results-claim",
            "c",
            "--storage-class",
            "nfs",
        ],
        "cannot be used with",
    );
}

#[test]
fn results_size_and_storage_class_shape_the_claim() {
    let (o, _) = rendered(&[
        "--shards",
        "2",
        "--results-size",
        "5Gi",
        "--storage-class",
        "efs.csi",
    ]);
    let claim = o.claim.as_ref().unwrap().spec.as_ref().unwrap();
    assert_eq!(
        claim.resources.as_ref().unwrap().requests.as_ref().unwrap()["storage"].0,
        "5Gi"
    );
    assert_eq!(claim.storage_class_name.as_deref(), Some("efs.csi"));
    refused(
        &["--shards", "2", "--results-size", "5GB"],
        "--results-size '5GB' is not a positive Kubernetes quantity",
    );
    refused(
        &["--shards", "2", "--results-size", "0"],
        "--results-size '0' is not a positive Kubernetes quantity",
    );
    refused(
        &["--shards", "2", "--storage-class", "NFS"],
        "--storage-class 'NFS' is not a DNS-1123 subdomain",
    );
}

#[test]
fn cpu_and_memory_are_the_loaders_requests_and_limits() {
    let (o, _) = rendered(&["--shards", "2", "--cpu", "1500m", "--memory", "2Gi"]);
    let res = o.container().resources.as_ref().unwrap();
    for map in [res.requests.as_ref().unwrap(), res.limits.as_ref().unwrap()] {
        assert_eq!(
            (map["cpu"].0.as_str(), map["memory"].0.as_str()),
            ("1500m", "2Gi")
        );
    }
    let (o, _) = rendered(&["--shards", "2", "--cpu", "2"]);
    let res = o.container().resources.as_ref().unwrap();
    assert!(!res.requests.as_ref().unwrap().contains_key("memory"));
    refused(
        &["--shards", "2", "--cpu", "two"],
        "--cpu 'two' is not a positive Kubernetes quantity: give e.g. 500m or 2",
    );
    refused(
        &["--shards", "2", "--memory", "1GB"],
        "--memory '1GB' is not a positive Kubernetes quantity: give e.g. 512Mi or 2Gi",
    );
    refused(
        &["--shards", "2", "--memory=-1Gi"],
        "--memory '-1Gi' is not a positive Kubernetes quantity",
    );
}

#[test]
fn every_shard_runs_at_once_and_backoff_limit_reaches_the_job() {
    let (o, _) = rendered(&["--shards", "4", "--backoff-limit", "3"]);
    let spec = o.job().spec.as_ref().unwrap();
    assert_eq!(
        (spec.completions, spec.parallelism, spec.backoff_limit),
        (Some(4), Some(4), Some(3))
    );
    // The shards meet at a barrier: a Job running fewer of them at a time could not complete.
    refused(
        &["--shards", "4", "--parallelism", "2"],
        "unexpected argument '--parallelism'",
    );
    refused(
        &["--shards", "4", "--backoff-limit=-1"],
        "invalid value '-1' for '--backoff-limit <BACKOFF_LIMIT>'",
    );
    refused(
        &["--shards", "4", "--backoff-limit", "3000000000"],
        "--backoff-limit 3000000000: give at most 2147483647",
    );
}

#[test]
fn timeout_is_the_wait_for_the_job() {
    let (_, stderr) = rendered(&["--shards", "2", "--timeout", "90m"]);
    assert!(
        stderr.contains("--timeout=5400s job/cqlbench-loaders\n"),
        "{stderr}"
    );
    let (_, stderr) = rendered(&["--shards", "2", "--timeout", "1.5s"]);
    assert!(stderr.contains("--timeout=2s job/"), "{stderr}");
    refused(
        &["--shards", "2", "--timeout", "0"],
        "--timeout must be at least 1s",
    );
    refused(
        &["--shards", "2", "--timeout", "soon"],
        "'soon' is not a duration",
    );
}

#[test]
fn out_writes_the_manifests_and_prints_the_workflow() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("creds"), "bench\npw\n").unwrap();
    let out = loaders(
        dir.path(),
        &[
            "--shards",
            "2",
            "--run-id",
            "r1",
            "--credentials-file",
            "creds",
            "--out",
            "m dir.yaml",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let file = dir.path().join("m dir.yaml");
    let o = parse(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(
        o.kinds,
        ["Secret", "ConfigMap", "PersistentVolumeClaim", "Job", "Pod"]
    );
    // It holds a password: the owner's alone.
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "wrote m dir.yaml: run r1, 2 shards of `cqlbench run` in namespace default",
            "kubectl apply -f 'm dir.yaml'",
            "kubectl -n default wait --for=condition=complete --timeout=3600s job/cqlbench-loaders",
            "kubectl -n default wait --for=condition=Ready --timeout=300s pod/cqlbench-loaders-collector",
            "kubectl -n default cp cqlbench-loaders-collector:/results/r1 ./r1",
            "cqlbench merge ./r1/shard-*.json --out r1.json",
            "kubectl -n default delete job/cqlbench-loaders pod/cqlbench-loaders-collector \
             configmap/cqlbench-loaders-order secret/cqlbench-loaders-credentials \
             pvc/cqlbench-loaders-results",
        ]
    );
    assert!(!stdout.contains("pw\n") && !stdout.contains("kind:"));
    assert!(String::from_utf8_lossy(&out.stderr).is_empty());
    // Without a Secret the manifest is an ordinary file; an existing one is replaced.
    let out = loaders(dir.path(), &["--shards", "2", "--out", "m dir.yaml"]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert!(
        parse(&std::fs::read_to_string(&file).unwrap())
            .secret
            .is_none()
    );
    // Nowhere to write: one line, no file left behind.
    refused_in(
        dir.path(),
        &["--shards", "2", "--out", "no/such/dir.yaml"],
        "writing no/such/dir.yaml",
    );
    refused_in(
        dir.path(),
        &["--shards", "0", "--out", "bad.yaml"],
        "--shards 0",
    );
    assert!(!dir.path().join("bad.yaml").exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn run_args_pass_through_but_not_the_flags_the_renderer_owns() {
    let (o, _) = rendered(&[
        "--shards",
        "2",
        "--run-id",
        "r",
        "--",
        "stress",
        "--ratio",
        "write=10,read=10,range=1",
        "--duration",
        "5m",
        "--consistency",
        "QUORUM",
    ]);
    // Parsed by `cqlbench run`'s own parser into the typed step the pods read: shown as
    // its one command line, the options in the order `run` declares them.
    let args = o.run_args();
    assert_eq!(
        args[..8],
        [
            "run",
            "stress",
            "--ratio",
            "write=10,read=10,range=1",
            "--consistency",
            "QUORUM",
            "--duration",
            "300s"
        ]
    );
    // The options the renderer sets in every pod's order, each given a valid value.
    for (flag, given) in [
        ("--shard", &["--shard", "1/2", "--run-id", "r"][..]),
        ("--run-id", &["--run-id", "r"]),
        ("--out", &["--out", "x.json"]),
        ("--out", &["--out=x.json"]),
        ("--credentials-file", &["--credentials-file", "c"]),
        ("--loaders", &["--loaders", "2"]),
        (
            "--start-at",
            &[
                "--shard",
                "0/2",
                "--run-id",
                "r",
                "--start-at",
                "2026-11-24T13:00:00Z",
            ],
        ),
        ("--cluster", &["--cluster", "c"]),
    ] {
        let mut args = vec!["--shards", "2", "--", "keyvalue"];
        args.extend(given);
        refused(&args, &format!("run argument '{flag}' is not allowed"));
    }
    refused(
        &["--shards", "2", "--", "keyvalue", "--rat", "5"],
        "run arguments: unexpected argument '--rat' found",
    );
    refused(
        &["--shards", "2", "--"],
        "no run arguments: give what follows `cqlbench run` after `--`",
    );
    refused(
        &["--shards", "2", "--", "run", "keyvalue"],
        "the run arguments start with 'run'",
    );
    // What every pod would refuse after `kubectl apply` is refused now, by run's own checks.
    refused(
        &[
            "--shards", "4", "--", "keyvalue", "--hosts", "h", "--rate", "fast",
        ],
        "run arguments: invalid value 'fast' for '--rate",
    );
    refused(
        &[
            "--shards",
            "4",
            "--",
            "keyvalue",
            "--hosts",
            "h",
            "--concurrency",
            "0",
        ],
        "run arguments: --concurrency and --max-in-flight must be at least 1",
    );
    refused(
        &[
            "--shards", "4", "--", "keyvalue", "--hosts", "h", "--ratio", "range=1",
        ],
        "run arguments: --ratio: workload keyvalue has no range operation",
    );
}

// ---- `cqlbench k8s cluster` ------------------------------------------------------------------

/// The flags of reference 000 as documented in docs/k8s.md.
const REF000: &[&str] = &[
    "--name",
    "ref000",
    "-n",
    "k8ssandra",
    "--cloud",
    "aws",
    "--version",
    "4.0.0",
    "--dcs",
    "dc1:3:3",
    "--zones",
    "us-west-2a,us-west-2b,us-west-2c",
    "--storage",
    "gp2:3400Gi",
    "--heap",
    "31G",
    "--gc",
    "g1",
    "--cpu",
    "7500m",
    "--memory",
    "60Gi",
];

/// The flags of reference 003 as documented in docs/k8s.md.
const REF003: &[&str] = &[
    "--name",
    "ref003",
    "-n",
    "k8ssandra",
    "--cloud",
    "aws",
    "--version",
    "4.0.6",
    "--dcs",
    "dc1:1,dc2:1,dc3:1,dc4:1",
    "--zones",
    "us-east-2c",
    "--storage",
    "gp2:2Ti",
    "--storage",
    "dc2=gp3:2Ti",
    "--storage",
    "dc3=io1:2Ti:16000",
];

fn k8s_cluster(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut c = cqlbench(dir);
    c.args(["k8s", "cluster"]).args(args);
    c.output().unwrap()
}

/// `k8s cluster ARGS…` must succeed; returns its stdout.
fn cluster_ok(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = k8s_cluster(dir.path(), args);
    assert!(
        out.status.success(),
        "{args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The documents of a rendered stream as YAML values.
fn docs(yaml: &str) -> Vec<cqlbench::yaml::Value> {
    cqlbench::yaml::from_str_multiple(yaml).unwrap()
}

fn golden(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/k8s/golden")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn the_documented_reference_flags_render_the_golden_files() {
    assert_eq!(cluster_ok(REF000), golden("cluster-ref000.yaml"));
    assert_eq!(cluster_ok(REF003), golden("cluster-ref003.yaml"));
}

#[test]
fn cluster_defaults_and_every_flag_reach_their_field() {
    // Only --cloud and --storage are required.
    let d = docs(&cluster_ok(&[
        "--cloud",
        "gcp",
        "--storage",
        "pd-balanced:500Gi",
    ]));
    assert_eq!(d.len(), 2);
    let (sc, k8c) = (&d[0], &d[1]);
    assert_eq!(sc["kind"], "StorageClass");
    assert_eq!(sc["metadata"]["name"], "cqlbench-pd-balanced");
    assert_eq!(sc["provisioner"], "pd.csi.storage.gke.io");
    assert_eq!(sc["parameters"]["type"], "pd-balanced");
    assert_eq!(k8c["metadata"]["name"], "cqlbench");
    assert_eq!(k8c["metadata"]["namespace"], "default");
    let c = &k8c["spec"]["cassandra"];
    assert_eq!(c["serverVersion"], "5.0.4");
    assert_eq!(c["config"]["jvmOptions"]["gc"], "G1GC");
    assert!(c["config"]["jvmOptions"].get("heap_max_size").is_none());
    assert!(c.get("resources").is_none());
    let dc = &c["datacenters"][0];
    assert_eq!(dc["metadata"]["name"], "dc1");
    assert_eq!(dc["size"], 3);
    assert_eq!(dc["racks"].as_array().unwrap().len(), 3);
    assert!(dc["racks"][0].get("nodeAffinityLabels").is_none());

    let d = docs(&cluster_ok(&[
        "--name",
        "bench",
        "--namespace",
        "cass",
        "--cloud",
        "AZURE",
        "--version",
        "5.0.2",
        "--dcs",
        "east:2:2,west:4:2",
        "--zones",
        "1,2",
        "--storage",
        "premium-ssd:1Ti",
        "--storage",
        "west=ultra-disk:4Ti:10000:200",
        "--heap",
        "500M",
        "--new-gen",
        "200M",
        "--gc",
        "zgc",
        "--cpu",
        "4",
        "--memory",
        "16Gi",
    ]));
    let names: Vec<&str> = d
        .iter()
        .map(|x| x["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bench-premium-ssd",
            "bench-ultra-disk-10000iops-200mbps",
            "bench"
        ]
    );
    assert_eq!(d[0]["parameters"]["skuName"], "Premium_LRS");
    assert_eq!(d[1]["parameters"]["skuName"], "UltraSSD_LRS");
    assert_eq!(d[1]["parameters"]["DiskIOPSReadWrite"], "10000");
    assert_eq!(d[1]["parameters"]["DiskMBpsReadWrite"], "200");
    let k8c = &d[2];
    assert_eq!(k8c["metadata"]["namespace"], "cass");
    let c = &k8c["spec"]["cassandra"];
    assert_eq!(c["serverVersion"], "5.0.2");
    let j = &c["config"]["jvmOptions"];
    assert_eq!(j["heap_initial_size"], "500Mi");
    assert_eq!(j["gc"], "ZGC");
    assert_eq!(j["additionalJvmServerOptions"][0], "-Xmn200M");
    assert_eq!(c["resources"]["requests"]["cpu"], "4");
    assert_eq!(c["resources"]["limits"]["memory"], "16Gi");
    let west = &c["datacenters"][1];
    assert_eq!(west["size"], 4);
    assert_eq!(
        west["racks"][1]["nodeAffinityLabels"]["topology.kubernetes.io/zone"],
        "2"
    );
    let claim = &west["storageConfig"]["cassandraDataVolumeClaimSpec"];
    assert_eq!(
        claim["storageClassName"],
        "bench-ultra-disk-10000iops-200mbps"
    );
    assert_eq!(claim["resources"]["requests"]["storage"], "4Ti");
    assert_eq!(
        c["datacenters"][0]["storageConfig"]["cassandraDataVolumeClaimSpec"]["storageClassName"],
        "bench-premium-ssd"
    );
}

#[test]
fn cluster_out_writes_the_file_and_prints_how_to_apply_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = REF000.to_vec();
    args.extend(["--out", "k8c.yaml"]);
    let out = k8s_cluster(dir.path(), &args);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("wrote k8c.yaml: 1 StorageClass(es) and K8ssandraCluster ref000 in namespace k8ssandra\n"), "{stdout}");
    assert!(stdout.contains("\nkubectl apply -f k8c.yaml\n"), "{stdout}");
    let written = std::fs::read_to_string(dir.path().join("k8c.yaml")).unwrap();
    assert_eq!(written, golden("cluster-ref000.yaml"));
    let mode = std::fs::metadata(dir.path().join("k8c.yaml"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
}

/// `k8s cluster ARGS…` (REF000 with `change` applied) must fail in one `error:` line
/// containing `needle`, print nothing on stdout and write no file.
fn cluster_refused(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = k8s_cluster(dir.path(), args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_ne!(out.status.code(), Some(101), "{args:?} panicked:\n{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        errors.len(),
        1,
        "{args:?}: one error line expected:\n{stderr}"
    );
    assert!(
        errors[0].contains(needle),
        "{args:?}: '{needle}' not in: {}",
        errors[0]
    );
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(
        left.iter()
            .all(|e| e.as_ref().unwrap().file_name() == "home"),
        "{left:?}"
    );
}

/// REF000 with `flag`'s value replaced by `value` (or the pair appended).
fn ref000_with(flag: &str, value: &str) -> Vec<String> {
    let mut v: Vec<String> = REF000.iter().map(|s| s.to_string()).collect();
    match v.iter().position(|a| a == flag) {
        Some(i) => v[i + 1] = value.to_string(),
        None => v.extend([flag.to_string(), value.to_string()]),
    }
    v.extend(["--out".to_string(), "k8c.yaml".to_string()]);
    v
}

#[test]
fn bad_cluster_flags_are_refused_in_one_line() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "--name",
            "Ref000",
            "--name 'Ref000' is not a DNS-1123 label",
        ),
        ("-n", "k8s_sandra", "--namespace 'k8s_sandra'"),
        ("--cloud", "oracle", "invalid value 'oracle' for '--cloud"),
        (
            "--version",
            "5.0",
            "--version '5.0' is not a Cassandra version K8ssandra runs",
        ),
        ("--version", "2.1.22", "--version '2.1.22'"),
        ("--dcs", "dc1:0", "at least one node"),
        ("--dcs", "dc1:3:4", "racks must be between 1"),
        (
            "--dcs",
            "DC1:3:3",
            "data centre name 'DC1' is not a DNS-1123 label",
        ),
        ("--dcs", "dc1:3:3,dc1:3:3", "named twice"),
        (
            "--zones",
            "a,b",
            "--zones: 2 zones given but data centre 'dc1' has 3 racks",
        ),
        ("--zones", "a,a,b", "zone 'a' is named twice"),
        (
            "--storage",
            "gp2:3400GB",
            "size '3400GB' is not a whole number of Gi or Ti",
        ),
        (
            "--storage",
            "pd-ssd:1Ti",
            "'pd-ssd' is not a disk type of aws: give one of gp2, gp3",
        ),
        (
            "--storage",
            "dc2=gp2:1Ti",
            "no data centre 'dc2' in --dcs (known: dc1)",
        ),
        ("--storage", "io2:1Ti", "io2 provisions its IOPS"),
        ("--storage", "gp2:1Ti:5000", "gp2 IOPS follow from its size"),
        ("--storage", "io2:1Ti:999999", "disk io2"),
        ("--heap", "lots", "invalid value 'lots' for '--heap"),
        (
            "--heap",
            "64G",
            "--heap 64G must be smaller than the container's --memory 60Gi",
        ),
        (
            "--new-gen",
            "31G",
            "--new-gen 31G must be smaller than --heap 31G",
        ),
        ("--gc", "parallel", "no Parallel collector"),
        ("--gc", "cms", "invalid value 'cms' for '--gc"),
        (
            "--cpu",
            "0",
            "--cpu '0' is not a positive Kubernetes quantity",
        ),
        (
            "--memory",
            "60GB",
            "--memory '60GB' is not a positive Kubernetes quantity",
        ),
    ];
    for (flag, value, needle) in cases {
        let args = ref000_with(flag, value);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cluster_refused(&args, needle);
    }
    let missing = "the following required arguments were not provided";
    cluster_refused(&["--cloud", "aws"], missing);
    cluster_refused(&["--storage", "gp3:1Ti"], missing);
    cluster_refused(
        &[
            "--cloud",
            "aws",
            "--storage",
            "gp3:1Ti",
            "--storage",
            "gp2:1Ti",
        ],
        "a second default volume",
    );
    cluster_refused(
        &[
            "--cloud",
            "aws",
            "--dcs",
            "a1:1,b1:1",
            "--storage",
            "a1=gp3:1Ti",
        ],
        "data centre 'b1' has no volume",
    );
    cluster_refused(
        &[
            "--cloud",
            "aws",
            "--storage",
            "gp3:1Ti",
            "--new-gen",
            "100M",
        ],
        "--new-gen needs --heap",
    );
}

#[test]
fn capacity_arguments_make_the_pods_one_capacity_search() {
    let (o, stderr) = rendered(&[
        "--shards",
        "3",
        "--run-id",
        "cap-7",
        "--",
        "capacity",
        "keyvalue",
        "--hosts",
        "cassandra-dc1-service",
        "--start-rate",
        "4000",
    ]);
    let args = o.pod().containers[0].args.clone().unwrap();
    assert_eq!(
        args.join(" "),
        "shard /etc/cqlbench/order/order.json --index $(SHARD_INDEX) \
         --out /results/cap-7/shard-$(SHARD_INDEX)/capacity.json"
    );
    // The order is a capacity search for 3 shards of cap-7, its search options typed.
    let order = o.order();
    assert_eq!((order.run_id.as_str(), order.shards), ("cap-7", 3));
    let cqlbench::step::order::Task::Capacity(cap) = &order.task else {
        panic!("a capacity task: {:?}", order.task)
    };
    assert_eq!(cap.search.start_rate, Some(4000.0));
    assert_eq!(cap.run.hosts, ["cassandra-dc1-service"]);
    // Pod 0 holds the capacity result; nothing to merge.
    assert!(
        stderr.contains("cqlbench report ./cap-7/shard-0/capacity.json"),
        "{stderr}"
    );
    assert!(!stderr.contains("cqlbench merge"), "{stderr}");
    // Checked as pod 0 would run it.
    refused(
        &[
            "--shards",
            "3",
            "--",
            "capacity",
            "keyvalue",
            "--hosts",
            "h",
            "--start-concurrency",
            "2",
        ],
        "--start-concurrency 2 with --shard 0/3",
    );
    refused(
        &[
            "--shards", "2", "--", "capacity", "keyvalue", "--hosts", "h", "--rate", "5",
        ],
        "capacity arguments: capacity sets each step's rate",
    );
    refused(
        &["--shards", "2", "--", "capacity"],
        "no capacity arguments",
    );
}
