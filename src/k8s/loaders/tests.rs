use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, EnvVar};

use super::*;
use crate::k8s::labels;
use crate::load::session::Credentials;
use crate::step::order::{Order, Task};

const PASSWORD: &str = "s3cr:t \"pw\" #x";

fn given() -> CredentialsSource {
    CredentialsSource::Given(Credentials {
        username: "bench".into(),
        password: PASSWORD.into(),
    })
}

fn task(args: &[&str]) -> Task {
    Task::from_args(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>()).unwrap()
}

fn spec() -> LoadersSpec {
    LoadersSpec {
        name: "cqlbench-loaders".into(),
        namespace: "bench".into(),
        image: "registry.example/cqlbench:0.1".into(),
        shards: 4,
        backoff_limit: 0,
        run_id: "run-20261124-123402".into(),
        task: task(&[
            "keyvalue",
            "--hosts",
            "cassandra-dc1-service",
            "--rate",
            "4000",
            "--duration",
            "5m",
        ]),
        credentials: given(),
        tls: None,
        results: ResultsClaim::New {
            size: "1Gi".into(),
            storage_class: Some("nfs".into()),
        },
        host_network: false,
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
    let want = "shard /etc/cqlbench/order/order.json --index $(SHARD_INDEX) \
                --out /results/run-20261124-123402/shard-$(SHARD_INDEX).json";
    assert_eq!(args.join(" "), want);
    // The order every pod mounts: the typed step, for 4 shards of the run.
    let map = r.config_map.data.as_ref().unwrap();
    let o = Order::from_json(&map["order.json"], "order").unwrap();
    assert_eq!((o.run_id.as_str(), o.shards), ("run-20261124-123402", 4));
    let run = o.task.run().unwrap();
    assert_eq!(run.hosts, ["cassandra-dc1-service"]);
    assert_eq!(run.duration, Some(Duration::from_secs(300)));
    assert_eq!(
        run.args_shown("run")[1..4],
        ["keyvalue", "--hosts", "cassandra-dc1-service"]
    );
    let order_mount = c.volume_mounts.as_ref().unwrap().last().unwrap();
    assert_eq!(
        (
            order_mount.name.as_str(),
            order_mount.mount_path.as_str(),
            order_mount.read_only
        ),
        ("order", "/etc/cqlbench/order", Some(true))
    );
    let pod = r.job.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    let volume = pod.volumes.as_ref().unwrap().last().unwrap();
    assert_eq!(
        volume.config_map.as_ref().unwrap().name,
        r.config_map.metadata.name.clone().unwrap()
    );
    assert_eq!(
        r.config_map.metadata.name.as_deref(),
        Some("cqlbench-loaders-order")
    );
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
fn a_tls_secret_is_mounted_read_only_and_named_in_the_arguments() {
    let mut s = spec();
    s.tls = Some(TlsSecret {
        name: "cluster-client-tls".into(),
        client_cert: true,
    });
    let r = render(&s).unwrap();
    let c = container(&r.job);
    let o = order(&s);
    let run = o.task.run().unwrap();
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    assert_eq!(
        [path(&run.tls_ca), path(&run.tls_cert), path(&run.tls_key)],
        [
            Some("/etc/cqlbench/tls/ca.crt".to_string()),
            Some("/etc/cqlbench/tls/tls.crt".into()),
            Some("/etc/cqlbench/tls/tls.key".into())
        ]
    );
    assert!(
        r.config_map.data.as_ref().unwrap()["order.json"].contains("/etc/cqlbench/tls/tls.key")
    );
    let mount = &c.volume_mounts.as_ref().unwrap()[1];
    assert_eq!(
        (
            mount.name.as_str(),
            mount.mount_path.as_str(),
            mount.read_only
        ),
        ("tls", "/etc/cqlbench/tls", Some(true))
    );
    let pod = r.job.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    let secret = pod.volumes.as_ref().unwrap()[1].secret.as_ref().unwrap();
    assert_eq!(secret.secret_name.as_deref(), Some("cluster-client-tls"));
    assert_eq!(secret.default_mode, Some(0o400));
    // Without the client certificate only the CA is named.
    s.tls = Some(TlsSecret {
        name: "ca-only".into(),
        client_cert: false,
    });
    let run = order(&s).task.run().unwrap().clone();
    assert!(run.tls_ca.is_some() && run.tls_cert.is_none() && run.tls_key.is_none());
    s.tls = Some(TlsSecret {
        name: "Not_A_Name".into(),
        client_cert: false,
    });
    assert!(render(&s).unwrap_err().starts_with("--tls-secret"));
    // TLS files given to the run itself would be paths on this machine, not in the pod.
    s.tls = None;
    s.task.run_mut().unwrap().tls_ca = Some("/home/me/ca.pem".into());
    assert!(render(&s).unwrap_err().contains("--tls-secret"));
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
    let first: Secret = crate::yaml::from_str(yaml.split("---\n").next().unwrap()).unwrap();
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
        r.collector.as_ref().unwrap().spec.as_ref(),
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
        r.collector.as_ref().unwrap().metadata.name.as_deref(),
        Some("cqlbench-loaders-collector")
    );
    let pod = r.collector.as_ref().unwrap().spec.as_ref().unwrap();
    let c = &pod.containers[0];
    assert_eq!(c.image.as_deref(), Some("registry.example/cqlbench:0.1"));
    assert_eq!(c.command.as_ref().unwrap().join(" "), "sleep 3600");
    assert_eq!(c.volume_mounts.as_ref().unwrap()[0].mount_path, "/results");
    let claim = pod.volumes.as_ref().unwrap()[0]
        .persistent_volume_claim
        .as_ref();
    assert_eq!(claim.unwrap().claim_name, "cqlbench-loaders-results");
    let labels = r
        .collector
        .as_ref()
        .unwrap()
        .metadata
        .labels
        .as_ref()
        .unwrap();
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
    assert!(
        r.collector.unwrap().spec.unwrap().containers[0]
            .resources
            .is_none()
    );
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
             configmap/cqlbench-loaders-order secret/cqlbench-loaders-credentials \
             pvc/cqlbench-loaders-results",
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
fn refuses_run_options_the_renderer_owns() {
    let base = ["keyvalue", "--hosts", "h"];
    for (flag, given) in [
        ("--tls-ca", &["--tls-ca", "/ca.pem"][..]),
        ("--shard", &["--shard", "1/2", "--run-id", "r"]),
        ("--run-id", &["--run-id", "r"]),
        ("--out", &["--out", "x.json"]),
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
                "1800000000",
            ],
        ),
    ] {
        let mut s = spec();
        s.task = task(&[&base[..], given].concat());
        let e = render(&s).unwrap_err();
        assert!(
            e.starts_with(&format!("run argument '{flag}' is not allowed: ")),
            "{e}"
        );
    }
    let mut s = spec();
    s.task = task(&["keyvalue", "--cluster", "c"]);
    assert!(
        render(&s)
            .unwrap_err()
            .contains("a pod has no local clusters")
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

#[test]
fn capacity_args_make_the_pods_one_capacity_search_with_pod_0_coordinating() {
    let s = LoadersSpec {
        task: task(&[
            "capacity",
            "keyvalue",
            "--hosts",
            "h",
            "--start-rate",
            "4000",
        ]),
        ..spec()
    };
    assert!(s.is_capacity() && !spec().is_capacity());
    let args = shard_args(&s);
    assert_eq!(
        args[..],
        [
            "shard",
            "/etc/cqlbench/order/order.json",
            "--index",
            "$(SHARD_INDEX)",
            "--out",
            "/results/run-20261124-123402/shard-$(SHARD_INDEX)/capacity.json"
        ]
    );
    assert!(order(&s).task.is_capacity());
    let r = render(&s).unwrap();
    let last_but_one = &r.steps[r.steps.len() - 2];
    assert_eq!(
        last_but_one.line,
        "cqlbench report ./run-20261124-123402/shard-0/capacity.json"
    );
    assert!(!r.steps.iter().any(|s| s.line.contains("cqlbench merge")));
    // Each step's shards meet under RUN_ID-sNN-aA: the run id leaves room for it.
    let e = render(&LoadersSpec {
        run_id: "a".repeat(56),
        ..s.clone()
    })
    .unwrap_err();
    assert!(
        e.contains("at most 55 characters for a capacity search"),
        "{e}"
    );
}

#[test]
fn with_the_logs_carrying_the_results_each_pod_has_its_own_volume_and_prints_its_files() {
    let mut s = spec();
    s.results = ResultsClaim::PodLogs;
    s.host_network = true;
    let r = render(&s).unwrap();
    assert!(r.claim.is_none() && r.collector.is_none());
    let yaml = r.yaml();
    assert!(!yaml.contains("PersistentVolumeClaim"), "{yaml}");
    let pod = r.job.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    assert_eq!(pod.host_network, Some(true));
    let volume = &pod.volumes.as_ref().unwrap()[0];
    assert!(volume.empty_dir.is_some() && volume.persistent_volume_claim.is_none());
    let args = pod.containers[0].args.as_ref().unwrap();
    assert_eq!(
        args[..5],
        [
            "k8s",
            "pod-run",
            "--dir",
            "/results/run-20261124-123402",
            "--"
        ]
    );
    assert_eq!(args[5..], shard_args(&s)[..]);
    // Preferred, not required: a one-node cluster still runs every shard.
    let anti = pod
        .affinity
        .as_ref()
        .unwrap()
        .pod_anti_affinity
        .as_ref()
        .unwrap();
    assert!(
        anti.required_during_scheduling_ignored_during_execution
            .is_none()
    );
    let keys: Vec<_> = anti
        .preferred_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()
        .iter()
        .map(|t| {
            let sel = t.pod_affinity_term.label_selector.as_ref().unwrap();
            sel.match_expressions.as_ref().unwrap()[0].key.clone()
        })
        .collect();
    assert_eq!(
        keys,
        ["cassandra.datastax.com/cluster", "cqlbench.io/run-id"]
    );
    // With a claim, the shard's own arguments, as before.
    let claimed = render(&spec()).unwrap();
    let pod = claimed.job.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.containers[0].args.as_ref().unwrap()[0], "shard");
    assert_eq!(pod.host_network, None);
}
