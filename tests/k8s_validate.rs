//! Manifests rendered by the real binary (`cqlbench k8s loaders --out FILE`) checked by a real
//! validator: `kubernetes-validate` (PyPI), which validates each document offline against the
//! OpenAPI schemas of the Kubernetes version cqlbench types its objects against
//! ([`KUBERNETES_VERSION`]), in strict mode, so an unknown field fails as well as a wrong type.
//! Deliberately broken manifests must fail it: the check can fail. `scripts/setup.sh` installs
//! the validator; without it these tests fail, they do not skip.

use std::path::Path;
use std::process::{Command, Output};

use cqlbench::k8s::KUBERNETES_VERSION;
use cqlbench::yaml::Value;

const VALIDATOR: &str = "kubernetes-validate";

/// `kubernetes-validate --strict --kubernetes-version 1.33.0 FILE` (with `strict`).
fn validate(file: &Path, strict: bool) -> Output {
    let mut c = Command::new(VALIDATOR);
    if strict {
        c.arg("--strict");
    }
    c.args(["--kubernetes-version", &format!("{KUBERNETES_VERSION}.0")])
        .arg(file)
        .output()
        .unwrap_or_else(|e| {
            panic!("{VALIDATOR} cannot run ({e}): scripts/setup.sh installs it (pip install kubernetes-validate)")
        })
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Renders `k8s loaders ARGS… -- keyvalue …` into `dir/NAME.yaml` through the binary.
fn render(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.yaml"));
    let out = assert_cmd::Command::cargo_bin("cqlbench")
        .unwrap()
        .current_dir(dir)
        .env("CQLBENCH_HOME", dir.join("home"))
        .args(["k8s", "loaders", "--image", "registry.example/cqlbench:0.1"])
        .args(args)
        .arg("--out")
        .arg(&file)
        .args([
            "--",
            "keyvalue",
            "--hosts",
            "cassandra-dc1-service",
            "--rate",
            "4000",
            "--duration",
            "5m",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    file
}

/// Asserts the validator passed `file`, naming each of `resources` (`kind/name`) as passed.
fn assert_valid(file: &Path, resources: &[&str]) {
    let out = validate(file, true);
    let said = text(&out);
    assert!(
        out.status.success(),
        "{} did not validate:\n{said}",
        file.display()
    );
    let version = format!("against version {KUBERNETES_VERSION}");
    for r in resources {
        let line = format!("passed for resource {r} {version}");
        assert!(said.contains(&line), "'{line}' not in:\n{said}");
    }
    assert_eq!(
        said.matches("passed for resource").count(),
        resources.len(),
        "{said}"
    );
}

#[test]
fn the_validator_knows_the_rendered_kubernetes_version() {
    let out = Command::new(VALIDATOR).arg("--version").output();
    let out = out.unwrap_or_else(|e| panic!("{VALIDATOR}: {e}: run scripts/setup.sh"));
    assert!(out.status.success(), "{}", text(&out));
    // An unknown version is an error, so the checks below really use this one's schemas.
    let dir = tempfile::tempdir().unwrap();
    let file = render(dir.path(), "m", &["--shards", "2"]);
    assert!(validate(&file, true).status.success());
    let out = Command::new(VALIDATOR)
        .args(["--strict", "--kubernetes-version", "0.1.0"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
}

#[test]
fn every_rendered_variant_validates_strictly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("creds"), "bench\np@ss: 'w0rd' #1\n").unwrap();
    let all = [
        "secret/cqlbench-loaders-credentials",
        "configmap/cqlbench-loaders-order",
        "persistentvolumeclaim/cqlbench-loaders-results",
        "job/cqlbench-loaders",
        "pod/cqlbench-loaders-collector",
    ];
    let file = render(
        dir.path(),
        "full",
        &[
            "--shards",
            "8",
            "-n",
            "bench",
            "--run-id",
            "kv-1",
            "--credentials-file",
            "creds",
            "--results-size",
            "5Gi",
            "--storage-class",
            "nfs-client",
            "--cpu",
            "1500m",
            "--memory",
            "2Gi",
            "--backoff-limit",
            "1",
            "--timeout",
            "2h",
        ],
    );
    assert_valid(&file, &all);

    let file = render(dir.path(), "minimal", &["--shards", "1"]);
    assert_valid(&file, &all[1..]);

    let file = render(
        dir.path(),
        "existing",
        &[
            "--shards",
            "3",
            "--name",
            "kv",
            "--secret",
            "db-creds",
            "--results-claim",
            "shared-results",
        ],
    );
    assert_valid(&file, &["configmap/kv-order", "job/kv", "pod/kv-collector"]);

    // Client TLS from a Secret, mounted in every loader pod.
    let file = render(
        dir.path(),
        "tls",
        &[
            "--shards",
            "2",
            "--tls-secret",
            "cluster-client-tls",
            "--tls-client-cert",
        ],
    );
    assert_valid(&file, &all[1..]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("secretName: cluster-client-tls"), "{text}");
    // The pods' order names the Secret's files where they are mounted.
    assert!(text.contains("/etc/cqlbench/tls/tls.key"), "{text}");
}

#[test]
fn the_golden_manifest_validates_strictly() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/k8s/golden/loaders.yaml");
    assert_valid(
        &golden,
        &[
            "secret/cqlbench-loaders-credentials",
            "configmap/cqlbench-loaders-order",
            "persistentvolumeclaim/cqlbench-loaders-results",
            "job/cqlbench-loaders",
            "pod/cqlbench-loaders-collector",
        ],
    );
}

/// The rendered stream of `file` with its Job changed by `change`, written to `dir/NAME.yaml`.
fn broken(dir: &Path, file: &Path, name: &str, change: impl Fn(&mut Value)) -> std::path::PathBuf {
    let text = std::fs::read_to_string(file).unwrap();
    let mut docs: Vec<Value> = cqlbench::yaml::from_str_multiple(&text).unwrap();
    let job = docs.iter_mut().find(|d| d["kind"] == "Job").unwrap();
    change(job);
    let out = dir.join(format!("{name}.yaml"));
    let docs: Vec<String> = docs.iter().map(cqlbench::yaml::to_string).collect();
    std::fs::write(&out, docs.join("---\n")).unwrap();
    out
}

/// Asserts the validator fails `file` on the Job, saying `reason`.
fn assert_invalid(file: &Path, reason: &str) {
    let out = validate(file, true);
    let said = text(&out);
    assert!(
        !out.status.success(),
        "{} validated:\n{said}",
        file.display()
    );
    let line = said
        .lines()
        .find(|l| l.contains("did not validate for resource job/cqlbench-loaders"))
        .unwrap_or_else(|| panic!("no failure for the Job in:\n{said}"));
    assert!(line.contains(reason), "'{reason}' not in: {line}");
    // The other objects still pass: only the breakage is reported.
    assert!(
        said.contains("passed for resource pod/cqlbench-loaders-collector"),
        "{said}"
    );
}

#[test]
fn broken_manifests_fail_the_validator() {
    let dir = tempfile::tempdir().unwrap();
    let good = render(dir.path(), "good", &["--shards", "4"]);

    let unknown = broken(dir.path(), &good, "unknown", |job| {
        job["spec"]["completionz"] = Value::from(4);
    });
    assert_invalid(
        &unknown,
        "Additional properties are not allowed ('completionz' was unexpected)",
    );
    // Only strict mode catches an unknown field: that is why the checks use it.
    assert!(validate(&unknown, false).status.success());

    let wrong_type = broken(dir.path(), &good, "wrong-type", |job| {
        job["spec"]["completions"] = Value::from("four");
    });
    assert_invalid(&wrong_type, "'four' is not of type 'integer'");

    let nested = broken(dir.path(), &good, "nested", |job| {
        let container = &mut job["spec"]["template"]["spec"]["containers"][0];
        container["argz"] = container["args"].clone();
    });
    assert_invalid(&nested, "'argz' was unexpected");

    let missing = broken(dir.path(), &good, "missing", |job| {
        let container = &mut job["spec"]["template"]["spec"]["containers"][0];
        container.as_object_mut().unwrap().remove("name");
    });
    assert_invalid(&missing, "'name' is a required property");
}

// ---- `cqlbench k8s cluster`: StorageClasses through kubernetes-validate, the K8ssandraCluster
// through the schema derived from k8ssandra-operator's CRD (src/k8s/k8ssandra-schema.json),
// checked by the `jsonschema` Python package (a dependency of kubernetes-validate) as JSON
// Schema 2020-12. kubernetes-validate has no schema for the custom resource: it says so and
// skips it, which is why the derived schema exists.

const PYTHON: &str = "python3";

/// Validates `instance` against the derived schema (after checking the schema itself); returns
/// the exit status and one line per error, `path: message`.
const CHECK: &str = r#"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
instance = json.load(open(sys.argv[2]))
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
for e in errors:
    print("/".join(str(p) for p in e.absolute_path) + ": " + e.message)
sys.exit(1 if errors else 0)
"#;

fn derived_schema_check(dir: &Path, name: &str, cluster: &Value) -> Output {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/k8s/k8ssandra-schema.json");
    let json: serde_json::Value = cqlbench::yaml::from_value(cluster.clone()).unwrap();
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    Command::new(PYTHON)
        .args(["-c", CHECK])
        .arg(&schema)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("{PYTHON} cannot run ({e}): scripts/setup.sh installs it"))
}

fn stream(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap();
    cqlbench::yaml::from_str_multiple(&text).unwrap()
}

fn the_cluster(docs: &[Value]) -> Value {
    let k: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == "K8ssandraCluster")
        .collect();
    assert_eq!(k.len(), 1);
    k[0].clone()
}

/// Asserts the StorageClasses of `file` pass kubernetes-validate strictly (and nothing else is
/// validated by it), and its K8ssandraCluster passes the derived schema.
fn assert_cluster_valid(dir: &Path, file: &Path, classes: &[&str]) {
    let out = validate(file, true);
    let said = text(&out);
    assert!(out.status.success(), "{}:\n{said}", file.display());
    for c in classes {
        let line =
            format!("passed for resource storageclass/{c} against version {KUBERNETES_VERSION}");
        assert!(said.contains(&line), "'{line}' not in:\n{said}");
    }
    assert_eq!(
        said.matches("passed for resource").count(),
        classes.len(),
        "{said}"
    );
    assert!(
        said.contains(
            "Couldn't find schema for kind K8ssandraCluster with api version k8ssandra.io/v1alpha1"
        ),
        "{said}"
    );
    let docs = stream(file);
    let name = file.file_stem().unwrap().to_str().unwrap();
    let out = derived_schema_check(dir, name, &the_cluster(&docs));
    assert!(out.status.success(), "{}: {}", file.display(), text(&out));
}

fn render_cluster(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.yaml"));
    let out = assert_cmd::Command::cargo_bin("cqlbench")
        .unwrap()
        .current_dir(dir)
        .env("CQLBENCH_HOME", dir.join("home"))
        .args(["k8s", "cluster"])
        .args(args)
        .arg("--out")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    file
}

#[test]
fn the_reference_clusters_validate() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/k8s/golden");
    assert_cluster_valid(
        dir.path(),
        &golden.join("cluster-ref000.yaml"),
        &["ref000-gp2"],
    );
    assert_cluster_valid(
        dir.path(),
        &golden.join("cluster-ref003.yaml"),
        &["ref003-gp2", "ref003-gp3", "ref003-io1-16000iops"],
    );
}

#[test]
fn every_cloud_and_disk_type_validates() {
    let dir = tempfile::tempdir().unwrap();
    let dcs = "d1:3:3,d2:3:3,d3:3:3,d4:3:3";
    let zones = "z-a,z-b,z-c";
    let base = |cloud: &'static str| ["--cloud", cloud, "--dcs", dcs, "--zones", zones];
    let aws = render_cluster(
        dir.path(),
        "aws",
        &[
            &base("aws")[..],
            &[
                "--storage",
                "gp3:1Ti:6000:250",
                "--storage",
                "d2=io2:2Ti:16000",
                "--storage",
                "d3=io1:1Ti:5000",
                "--storage",
                "d4=st1:1Ti",
                "--heap",
                "8G",
                "--new-gen",
                "2G",
                "--cpu",
                "7",
                "--memory",
                "32Gi",
            ],
        ]
        .concat(),
    );
    assert_cluster_valid(
        dir.path(),
        &aws,
        &[
            "cqlbench-gp3-6000iops-250mbps",
            "cqlbench-io2-16000iops",
            "cqlbench-io1-5000iops",
            "cqlbench-st1",
        ],
    );
    let gcp = render_cluster(
        dir.path(),
        "gcp",
        &[
            &base("gcp")[..],
            &[
                "--storage",
                "pd-balanced:4Ti",
                "--storage",
                "d2=pd-ssd:2Ti",
                "--storage",
                "d3=pd-extreme:2Ti:20000",
                "--storage",
                "d4=pd-standard:1Ti",
                "--gc",
                "zgc",
                "--version",
                "5.0.2",
            ],
        ]
        .concat(),
    );
    assert_cluster_valid(
        dir.path(),
        &gcp,
        &[
            "cqlbench-pd-balanced",
            "cqlbench-pd-ssd",
            "cqlbench-pd-extreme-20000iops",
            "cqlbench-pd-standard",
        ],
    );
    let azure = render_cluster(
        dir.path(),
        "azure",
        &[
            &base("azure")[..],
            &[
                "--storage",
                "premium-ssd:4Ti",
                "--storage",
                "d2=standard-ssd:2Ti",
                "--storage",
                "d3=ultra-disk:4Ti:10000:200",
                "--storage",
                "d4=standard-hdd:1Ti",
                "--name",
                "aks-bench",
                "-n",
                "cass",
                "--version",
                "4.1.8",
            ],
        ]
        .concat(),
    );
    assert_cluster_valid(
        dir.path(),
        &azure,
        &[
            "aks-bench-premium-ssd",
            "aks-bench-standard-ssd",
            "aks-bench-ultra-disk-10000iops-200mbps",
            "aks-bench-standard-hdd",
        ],
    );
}

/// Asserts the derived schema fails the reference-000 K8ssandraCluster changed by `change`,
/// with an error line containing `reason`.
fn assert_schema_fails(dir: &Path, name: &str, change: impl Fn(&mut Value), reason: &str) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/k8s/golden/cluster-ref000.yaml");
    let mut cluster = the_cluster(&stream(&golden));
    change(&mut cluster);
    let out = derived_schema_check(dir, name, &cluster);
    let said = text(&out);
    assert!(!out.status.success(), "{name} passed the derived schema");
    assert!(said.contains(reason), "{name}: '{reason}' not in:\n{said}");
}

#[test]
fn broken_clusters_fail_the_derived_schema() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fn dc(v: &mut Value) -> &mut Value {
        &mut v["spec"]["cassandra"]["datacenters"][0]
    }
    assert_schema_fails(
        d,
        "unknown-in-dc",
        |v| dc(v)["sizee"] = Value::from(3),
        "spec/cassandra/datacenters/0: Additional properties are not allowed ('sizee' was unexpected)",
    );
    assert_schema_fails(
        d,
        "wrong-type",
        |v| dc(v)["size"] = Value::from("three"),
        "spec/cassandra/datacenters/0/size: 'three' is not of type 'integer'",
    );
    assert_schema_fails(
        d,
        "size-zero",
        |v| dc(v)["size"] = Value::from(0),
        "0 is less than the minimum of 1",
    );
    assert_schema_fails(
        d,
        "no-size",
        |v| {
            dc(v).as_object_mut().unwrap().remove("size");
        },
        "'size' is a required property",
    );
    assert_schema_fails(
        d,
        "short-rack",
        |v| dc(v)["racks"][0]["name"] = Value::from("r"),
        "'r' is too short",
    );
    assert_schema_fails(
        d,
        "old-zone-field",
        |v| dc(v)["racks"][0]["zone"] = Value::from("us-west-2a"),
        "('zone' was unexpected)",
    );
    assert_schema_fails(
        d,
        "gc-enum",
        |v| v["spec"]["cassandra"]["config"]["jvmOptions"]["gc"] = Value::from("Parallel"),
        "'Parallel' is not one of ['G1GC', 'CMS', 'ZGC', 'Shenandoah', 'Graal', 'Custom']",
    );
    assert_schema_fails(
        d,
        "jvm-name",
        |v| {
            v["spec"]["cassandra"]["config"]["jvmOptions"]["heap_new_gen_size"] = Value::from("2Gi")
        },
        "('heap_new_gen_size' was unexpected)",
    );
    assert_schema_fails(
        d,
        "percent",
        |v| {
            v["spec"]["cassandra"]["config"]["jvmOptions"]["gc_g1_initiating_heap_occupancy_percent"] =
                Value::from(170)
        },
        "170 is greater than the maximum of 100",
    );
    assert_schema_fails(
        d,
        "version",
        |v| v["spec"]["cassandra"]["serverVersion"] = Value::from("5.0"),
        "'5.0' does not match",
    );
    assert_schema_fails(
        d,
        "quantity",
        |v| {
            dc(v)["storageConfig"]["cassandraDataVolumeClaimSpec"]["resources"]["requests"]["storage"] =
                Value::from("lots")
        },
        "storage: 'lots'",
    );
    assert_schema_fails(
        d,
        "kind",
        |v| v["kind"] = Value::from("CassandraDatacenter"),
        "'K8ssandraCluster' was expected",
    );
}

#[test]
fn broken_storage_classes_fail_the_validator() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/k8s/golden/cluster-ref000.yaml");
    for (name, change, reason) in [
        (
            "sc-unknown",
            Box::new(|sc: &mut Value| sc["reclaimPolicyy"] = Value::from("Retain"))
                as Box<dyn Fn(&mut Value)>,
            "('reclaimPolicyy' was unexpected)",
        ),
        (
            "sc-type",
            Box::new(|sc: &mut Value| sc["allowVolumeExpansion"] = Value::from(3)),
            "3 is not of type 'boolean'",
        ),
        (
            "sc-missing",
            Box::new(|sc: &mut Value| {
                sc.as_object_mut().unwrap().remove("provisioner");
            }),
            "'provisioner' is a required property",
        ),
    ] {
        let mut docs = stream(&golden);
        change(&mut docs[0]);
        let file = dir.path().join(format!("{name}.yaml"));
        let docs: Vec<String> = docs.iter().map(cqlbench::yaml::to_string).collect();
        std::fs::write(&file, docs.join("---\n")).unwrap();
        let out = validate(&file, true);
        let said = text(&out);
        assert!(!out.status.success(), "{name} validated:\n{said}");
        let line = said
            .lines()
            .find(|l| l.contains("did not validate for resource storageclass/ref000-gp2"))
            .unwrap_or_else(|| panic!("no failure for the StorageClass in:\n{said}"));
        assert!(line.contains(reason), "'{reason}' not in: {line}");
    }
}

/// Renders `k8s probe ARGS…` into `dir/NAME.yaml` through the binary.
fn render_probes(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.yaml"));
    let out = assert_cmd::Command::cargo_bin("cqlbench")
        .unwrap()
        .current_dir(dir)
        .env("CQLBENCH_HOME", dir.join("home"))
        .args(["k8s", "probe", "--image", "registry.example/cqlbench:0.1"])
        .arg("--out")
        .arg(&file)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    file
}

#[test]
fn rendered_probe_jobs_validate_strictly_and_a_broken_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = render_probes(
        dir.path(),
        "probes",
        &[
            "--nodes",
            "node-a,ip-10-0-1-5.ec2.internal,node-c",
            "--storage-class",
            "gp3-cassandra",
            "--size",
            "500Gi",
            "-n",
            "k8ssandra",
            "--tolerate-taints",
            "--timeout",
            "45m",
            "--",
            "--quick",
            "--profiles",
            "lcs,rand_read_4k",
        ],
    );
    assert_valid(
        &file,
        &[
            "configmap/cqlbench-probe-order",
            "job/cqlbench-probe-0",
            "job/cqlbench-probe-1",
            "job/cqlbench-probe-2",
        ],
    );
    let minimal = render_probes(
        dir.path(),
        "minimal",
        &[
            "--nodes",
            "n1",
            "--storage-class",
            "standard",
            "--size",
            "10Gi",
        ],
    );
    assert_valid(
        &minimal,
        &["configmap/cqlbench-probe-order", "job/cqlbench-probe-0"],
    );

    // The ephemeral volume's claim template is checked too: a misspelt field in it fails.
    let text = std::fs::read_to_string(&minimal).unwrap();
    let broken_text = text.replace("storageClassName: standard", "storageClassNam: standard");
    assert_ne!(text, broken_text);
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, broken_text).unwrap();
    let out = validate(&broken, true);
    let said = self::text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("did not validate for resource job/cqlbench-probe-0")
            && said.contains("'storageClassNam' was unexpected"),
        "{said}"
    );
}
