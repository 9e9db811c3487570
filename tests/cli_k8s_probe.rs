//! `cqlbench k8s probe` through the real binary: every flag, valid values reaching the right
//! field of the Jobs read back from the printed YAML, the workflow printed, and bad values
//! refused in one line with a non-zero exit, nothing printed or written.

mod common;

use std::path::Path;

use k8s_openapi::api::batch::v1::Job;

const BASE: [&str; 8] = [
    "--image",
    "reg/cqlbench:0.1",
    "--nodes",
    "node-a,node-b",
    "--storage-class",
    "gp3-cassandra",
    "--size",
    "500Gi",
];

fn k8s_probe(dir: &Path, args: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("cqlbench")
        .unwrap()
        .current_dir(dir)
        .env("CQLBENCH_HOME", dir.join("home"))
        .args(["k8s", "probe"])
        .args(args)
        .output()
        .unwrap()
}

/// The Jobs of a rendered stream, and the order (its ConfigMap, first) they read.
fn jobs(yaml: &str) -> Vec<Job> {
    jobs_and_order(yaml).0
}

fn jobs_and_order(yaml: &str) -> (Vec<Job>, cqlbench::step::order::Order) {
    let mut docs: Vec<cqlbench::yaml::Value> = cqlbench::yaml::from_str_multiple(yaml).unwrap();
    let map = docs.remove(0);
    assert_eq!(map["kind"], "ConfigMap", "{yaml}");
    let text = map["data"]["order.json"].as_str().unwrap();
    let order = cqlbench::step::order::Order::from_json(text, "order").unwrap();
    let jobs = docs
        .into_iter()
        .map(|d| cqlbench::yaml::from_value(d).unwrap())
        .collect();
    (jobs, order)
}

#[test]
fn every_flag_reaches_the_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = BASE.to_vec();
    args.extend([
        "--name",
        "probe",
        "-n",
        "k8ssandra",
        "--run-id",
        "p-1",
        "--tolerate-taints",
        "--timeout",
        "45m",
        "--",
        "--quick",
        "--profiles",
        "lcs,rand_read_4k",
        "--skip-cpu",
    ]);
    let out = k8s_probe(dir.path(), &args);
    assert!(out.status.success(), "{out:?}");
    let yaml = String::from_utf8(out.stdout).unwrap();
    let (jobs, order) = jobs_and_order(&yaml);
    assert_eq!(jobs.len(), 2);
    assert_eq!((order.run_id.as_str(), order.shards), ("p-1", 2));
    for (i, (job, node)) in jobs.iter().zip(["node-a", "node-b"]).enumerate() {
        assert_eq!(
            job.metadata.name.as_deref(),
            Some(format!("probe-{i}").as_str())
        );
        assert_eq!(job.metadata.namespace.as_deref(), Some("k8ssandra"));
        assert_eq!(
            job.metadata.labels.as_ref().unwrap()["cqlbench.io/run-id"],
            "p-1"
        );
        assert_eq!(
            job.metadata.annotations.as_ref().unwrap()["cqlbench.io/node"],
            node
        );
        let spec = job.spec.as_ref().unwrap();
        assert_eq!(spec.active_deadline_seconds, Some(2700));
        let pod = spec.template.spec.as_ref().unwrap();
        let term = &pod
            .affinity
            .as_ref()
            .unwrap()
            .node_affinity
            .as_ref()
            .unwrap()
            .required_during_scheduling_ignored_during_execution
            .as_ref()
            .unwrap()
            .node_selector_terms[0];
        assert_eq!(
            term.match_fields.as_ref().unwrap()[0].values.as_deref(),
            Some(&[node.to_string()][..])
        );
        assert_eq!(
            pod.tolerations.as_ref().unwrap()[0].operator.as_deref(),
            Some("Exists")
        );
        let c = &pod.containers[0];
        assert_eq!(c.image.as_deref(), Some("reg/cqlbench:0.1"));
        assert_eq!(
            c.args.as_ref().unwrap().join(" "),
            format!("shard /etc/cqlbench/order/order.json --index {i} --out /probe/result.json")
        );
        // What pod i runs, read from the order as it reads it.
        let cqlbench::step::order::Task::Probe(p) = order
            .for_shard(i as u64, "/probe/result.json".into())
            .unwrap()
        else {
            panic!("a probe task")
        };
        let p = p.probe;
        assert_eq!(p.env.as_deref(), Some(node));
        assert_eq!(p.dir.as_deref(), Some(Path::new("/probe")));
        assert!(p.json && p.quick && p.skip_cpu);
        assert_eq!(
            p.profiles.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            ["lcs", "rand_read_4k"]
        );
        let claim = &pod.volumes.as_ref().unwrap()[0]
            .ephemeral
            .as_ref()
            .unwrap()
            .volume_claim_template
            .as_ref()
            .unwrap()
            .spec;
        assert_eq!(claim.storage_class_name.as_deref(), Some("gp3-cassandra"));
        assert_eq!(
            claim.resources.as_ref().unwrap().requests.as_ref().unwrap()["storage"].0,
            "500Gi"
        );
    }
    // Without --out the workflow goes to stderr.
    let workflow = String::from_utf8(out.stderr).unwrap();
    assert!(
        workflow.contains("kubectl -n k8ssandra logs job/probe-1 > ./p-1/node-b.json"),
        "{workflow}"
    );
    assert!(
        workflow.contains("cqlbench report ./p-1/*.json"),
        "{workflow}"
    );
}

#[test]
fn out_writes_the_manifests_and_prints_the_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = BASE.to_vec();
    args.extend(["--out", "probes.yaml"]);
    let out = k8s_probe(dir.path(), &args);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with("wrote probes.yaml: run probe-"),
        "{stdout}"
    );
    assert!(stdout.contains("kubectl apply -f probes.yaml"), "{stdout}");
    assert!(
        stdout.contains("--timeout=1800s job/cqlbench-probe-0 job/cqlbench-probe-1"),
        "{stdout}"
    );
    let yaml = std::fs::read_to_string(dir.path().join("probes.yaml")).unwrap();
    assert_eq!(jobs(&yaml).len(), 2);
    // No toleration unless asked.
    assert!(!yaml.contains("tolerations"), "{yaml}");
}

#[test]
fn bad_values_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    // BASE with `flag`'s value replaced (or the flag added), then `rest`.
    let with =
        |flag: &'static str, value: &'static str, rest: &[&'static str]| -> Vec<&'static str> {
            let mut a = BASE.to_vec();
            match a.iter().position(|x| *x == flag) {
                Some(i) => a[i + 1] = value,
                None => a.extend([flag, value]),
            }
            a.extend_from_slice(rest);
            a
        };
    let extra = |rest: &[&'static str]| -> Vec<&'static str> {
        let mut a = BASE.to_vec();
        a.extend_from_slice(rest);
        a
    };
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        (
            with("--nodes", "a,,b", &[]),
            &["--nodes holds an empty name"],
        ),
        (with("--nodes", "a,a", &[]), &["names 'a' twice"]),
        (
            with("--nodes", "Node_A", &[]),
            &["node 'Node_A'", "DNS-1123"],
        ),
        (
            with("--storage-class", "Fast SSD", &[]),
            &["--storage-class 'Fast SSD'"],
        ),
        (with("--size", "big", &[]), &["--size 'big'", "quantity"]),
        (
            with("--size", "500", &[]),
            &["--size '500': less than 1Gi", "without a unit is bytes"],
        ),
        (with("--timeout", "0s", &[]), &["--timeout 0s"]),
        (with("--name", "Probe", &[]), &["--name 'Probe'"]),
        (with("-n", "a_b", &[]), &["--namespace 'a_b'"]),
        (with("--image", "a b", &[]), &["--image 'a b'"]),
        (with("--run-id", "bad!", &[]), &["--run-id 'bad!'"]),
        (with("--timeout", "soon", &[]), &["soon"]),
        (
            extra(&["--", "--dir", "/x"]),
            &["--dir is not accepted here"],
        ),
        (extra(&["--", "--env=x"]), &["--env is not accepted here"]),
        (
            extra(&["--", "--profiles", "leveled"]),
            &["probe arguments", "unknown profile 'leveled'"],
        ),
        (
            extra(&["--", "--runtime-s", "0"]),
            &["probe arguments", "--runtime-s"],
        ),
        (extra(&["--", "--bogus"]), &["probe arguments", "--bogus"]),
        (
            vec!["--image", "i", "--storage-class", "s", "--size", "1Gi"],
            &["the following required arguments were not provided"],
        ),
    ];
    for (args, needles) in &cases {
        let out = k8s_probe(dir.path(), args);
        common::refused_in_one_line(&out, args, needles);
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
    assert!(!dir.path().join("home").exists());
}
