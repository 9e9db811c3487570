//! Manifests rendered by the real binary (`cqlbench k8s loaders --out FILE`) checked by a real
//! validator: `kubernetes-validate` (PyPI), which validates each document offline against the
//! OpenAPI schemas of the Kubernetes version cqlbench types its objects against
//! ([`KUBERNETES_VERSION`]), in strict mode, so an unknown field fails as well as a wrong type.
//! Deliberately broken manifests must fail it: the check can fail. `scripts/setup.sh` installs
//! the validator; without it these tests fail, they do not skip.

use std::path::Path;
use std::process::{Command, Output};

use cqlbench::k8s::KUBERNETES_VERSION;
use serde::Deserialize;
use serde_yaml::Value;

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
    assert_valid(&file, &["job/kv", "pod/kv-collector"]);
}

#[test]
fn the_golden_manifest_validates_strictly() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/k8s/golden/loaders.yaml");
    assert_valid(
        &golden,
        &[
            "secret/cqlbench-loaders-credentials",
            "persistentvolumeclaim/cqlbench-loaders-results",
            "job/cqlbench-loaders",
            "pod/cqlbench-loaders-collector",
        ],
    );
}

/// The rendered stream of `file` with its Job changed by `change`, written to `dir/NAME.yaml`.
fn broken(dir: &Path, file: &Path, name: &str, change: impl Fn(&mut Value)) -> std::path::PathBuf {
    let text = std::fs::read_to_string(file).unwrap();
    let mut docs: Vec<Value> = serde_yaml::Deserializer::from_str(&text)
        .map(|d| Value::deserialize(d).unwrap())
        .collect();
    let job = docs.iter_mut().find(|d| d["kind"] == "Job").unwrap();
    change(job);
    let out = dir.join(format!("{name}.yaml"));
    let docs: Vec<String> = docs
        .iter()
        .map(|d| serde_yaml::to_string(d).unwrap())
        .collect();
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
        container.as_mapping_mut().unwrap().remove("name");
    });
    assert_invalid(&missing, "'name' is a required property");
}
