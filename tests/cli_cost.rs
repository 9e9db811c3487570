//! `cqlbench cost` and `cqlbench plan` through the real binary.

use assert_cmd::Command;
use predicates::prelude::*;

fn cqlbench() -> Command {
    Command::cargo_bin("cqlbench").unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = cqlbench().args(args).arg("--json").assert().success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

/// Reference 000's cost table, in the order of its rows, with its $/month per node.
const REF_000: [(&str, &str, &str, &str, f64); 6] = [
    (
        "AWS EKS r5.2xlarge + EBS gp2",
        "r5.2xlarge",
        "gp2:4TB",
        "eks",
        777.0,
    ),
    (
        "GCP GKE e2-highmem-8 4TB pd-balanced",
        "e2-highmem-8",
        "pd-balanced:4TB",
        "gke",
        673.0,
    ),
    (
        "GCP GKE n2-highmem-8 4TB pd-balanced",
        "n2-highmem-8",
        "pd-balanced:4TB",
        "gke",
        715.0,
    ),
    (
        "Azure AKS E8s_v4 Standard SSD 4TB",
        "Standard_E8s_v4",
        "standard-ssd:4TB",
        "aks",
        675.0,
    ),
    (
        "Azure AKS E8s_v4 Premium SSD 4TB",
        "Standard_E8s_v4",
        "premium-ssd:4TB",
        "aks",
        818.0,
    ),
    (
        "Azure AKS E8s_v4 Ultra SSD 4TB + 10k IOPS + 200MB/s",
        "Standard_E8s_v4",
        "ultra-disk:4TB:10000iops:200mbps",
        "aks",
        1458.0,
    ),
];

fn order_by<F: Fn(usize) -> f64>(cost: F) -> Vec<&'static str> {
    let mut idx: Vec<usize> = (0..REF_000.len()).collect();
    idx.sort_by(|a, b| cost(*a).total_cmp(&cost(*b)));
    idx.into_iter().map(|i| REF_000[i].0).collect()
}

#[test]
fn ref_000_environments_rank_as_in_its_cost_table() {
    // The cost table prices one node per month (its AWS row, $777, is r5.2xlarge $367.92 +
    // 4,096 GB of gp2 at $0.10 = $777.52, although the row's label says 3TB).
    let ours: Vec<f64> = REF_000
        .iter()
        .map(|(_, inst, disk, _, _)| {
            json(&["cost", "--nodes", "1", "--instance", inst, "--disk", disk])["total_monthly_usd"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let expected = order_by(|i| REF_000[i].4);
    assert_eq!(order_by(|i| ours[i]), expected);
    // cheapest to dearest: e2 $673, Standard SSD $675, n2 $715, AWS $777, Premium $818, Ultra
    assert_eq!(expected[0], REF_000[1].0);
    assert_eq!(expected[5], REF_000[5].0);
    // each within 3% of the article's figure
    for (i, ours) in ours.iter().enumerate() {
        let theirs = REF_000[i].4;
        assert!(
            (ours - theirs).abs() / theirs < 0.03,
            "{}: {ours} vs {theirs}",
            REF_000[i].0
        );
    }
    // A 3-node cluster with its Kubernetes fee keeps the same order.
    let clusters: Vec<f64> = REF_000
        .iter()
        .map(|(_, inst, disk, k8s, _)| {
            json(&["cost", "--instance", inst, "--disk", disk, "--k8s", k8s])["total_monthly_usd"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(order_by(|i| clusters[i]), expected);
}

#[test]
fn cost_prints_a_breakdown_and_the_disk_limits() {
    cqlbench()
        .args([
            "cost",
            "--nodes",
            "3",
            "--instance",
            "r5.2xlarge",
            "--disk",
            "gp2:3400GB",
        ])
        .args(["--k8s", "eks", "--ops", "22864"])
        .assert()
        .success()
        // 3 × $0.504 × 730 = $1,103.76; 3 × 3,400 × $0.10 = $1,020; EKS $73
        .stdout(predicate::str::contains("$1,103.76/month"))
        .stdout(predicate::str::contains("$1,020.00/month"))
        .stdout(predicate::str::contains("$73.00/month"))
        .stdout(predicate::str::contains("$2,196.76/month"))
        .stdout(predicate::str::contains("10,200 IOPS, 250 MB/s"))
        // $2,196.76 / 22.864 = $96.08
        .stdout(predicate::str::contains("$ per 1,000 ops/s: $96.08"));
}

#[test]
fn reserved_pricing_uses_ref_004_reservations() {
    // hi1.4xlarge 3y: $10,960 / 36 + $0.482 × 730 = $304.44 + $351.86 = $656.30 per node
    let v = json(&[
        "cost",
        "--nodes",
        "15",
        "--instance",
        "hi1.4xlarge",
        "--disk",
        "local",
        "--reserved",
        "3y",
    ]);
    let monthly = v["total_monthly_usd"].as_f64().unwrap();
    // 36 months × 15 nodes = $354,404.40, ref 004: $354,405
    assert!((monthly * 36.0 - 354_404.40).abs() < 0.01, "{monthly}");
    assert_eq!(v["pricing"], "reserved-3y");
}

#[test]
fn probe_figures_are_flagged_against_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe.json");
    // A probe result as `cqlbench probe` writes it; its commitlog profile: 4,498 IOPS.
    let text = include_str!("../src/probe/testdata/probe-result.json");
    std::fs::write(&probe, text).unwrap();
    cqlbench()
        .args([
            "cost",
            "--instance",
            "r5.2xlarge",
            "--disk",
            "gp2:3400GB",
            "--probe",
        ])
        .arg(&probe)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "commitlog.iops 4,498 IOPS vs limit 10,200 (44%): below the limit",
        ));
    // Anything else is refused, naming the file and what it is.
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"schema_version": 1, "disk": {"iops": 5}}"#).unwrap();
    let out = cqlbench()
        .args(["cost", "--instance", "r5.2xlarge", "--disk", "gp2:3400GB"])
        .arg("--probe")
        .arg(&other)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.starts_with(&format!("error: {}: neither a run result", other.display())),
        "{stderr}"
    );
}

#[test]
fn bad_input_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("catalog.yaml");
    std::fs::write(
        &cat,
        "hours_per_month: 730\ninstances:\n  - {name: r5.2xlarge, provider: aws, region: r, vcpus: eight, ram_gb: 64, usd_per_hour: 0.504, source: s, date: 2024-06}\n",
    )
    .unwrap();
    let out = cqlbench()
        .args(["cost", "--instance", "r5.2xlarge", "--catalog"])
        .arg(&cat)
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(
        stderr,
        format!(
            "error: {}: instance \"r5.2xlarge\": field \"vcpus\": expected a positive integer\n",
            cat.display()
        )
    );
    cqlbench()
        .args(["cost", "--instance", "r5.2xlarge", "--disk", "gp2-3400"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("invalid disk \"gp2-3400\""));
    cqlbench()
        .args([
            "cost",
            "--instance",
            "r5.2xlarge",
            "--disk",
            "gp3:1TB:20000iops",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "disk gp3: 20,000 IOPS is above the limit of 16,000",
        ));
}

#[test]
fn a_throughput_must_be_a_positive_number_and_disks_must_exist() {
    for ops in ["0", "-5", "inf", "nan", "lots"] {
        let flag = format!("--ops={ops}");
        for cmd in [
            vec!["cost", "--instance", "r5.2xlarge", &flag],
            vec!["plan", "--data", "1TB", &flag],
        ] {
            let out = cqlbench().args(&cmd).assert().failure();
            let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
            assert_ne!(
                out.get_output().status.code(),
                Some(101),
                "{cmd:?}: {stderr}"
            );
            assert!(stderr.contains("--ops"), "{cmd:?}: {stderr}");
        }
    }
    // A valid value of each, for contrast.
    cqlbench()
        .args(["cost", "--instance", "r5.2xlarge", "--ops", "45k"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1,000 ops/s"));
    cqlbench()
        .args([
            "plan", "--data", "1TB", "--ops", "10000", "--disks", "nosuch",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "no disk \"nosuch\" in the catalogue",
        ));
}

#[test]
fn plan_explains_every_number() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap.json");
    let search = cqlbench::result::fixture::capacity("lab", &[10_000.0, 20_000.0, 30_000.0], 2);
    search.write(&cap).unwrap();
    let achieved = search.verdict.unwrap().highest_passing_ops_per_s.unwrap();
    let capacity = format!("i3.2xlarge:3={}", cap.display());
    let out = cqlbench()
        .args([
            "plan",
            "--ops",
            "100000",
            "--data",
            "10TB",
            "--rf",
            "3",
            "--provider",
            "aws",
            "--top",
            "40",
            "--capacity",
            &capacity,
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // the measured capacity: the verdict's achieved throughput over 3 nodes
    let thousands = |v: f64| {
        let s = format!("{:.0}", v);
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    assert!(
        text.contains(&format!(
            "{} ops/s / 3 nodes (linear scaling, ref 004)",
            thousands(achieved)
        )),
        "{text}"
    );
    assert!(text.contains(&format!("[measured: {} (", cap.display())));
    // every line of every explained candidate says where its number came from
    let mut explained = 0;
    for block in text.split("\n#").skip(1) {
        explained += 1;
        for line in block.lines().skip(1).filter(|l| !l.trim().is_empty()) {
            let per_month_total = line.trim_end().ends_with("per month");
            assert!(
                per_month_total || (line.contains('[') && line.ends_with(']')),
                "no origin on: {line}"
            );
        }
    }
    assert!(explained > 3, "{text}");
    // the header states the assumed defaults
    assert!(text.contains("compaction headroom: 2× (STCS headroom)  [assumed:"));
    // Without NODES, the node count comes from the search's cluster, which this one (no step
    // results beside it) cannot tell; another kind of result is refused by kind.
    let run = dir.path().join("run.json");
    cqlbench::result::fixture::run("lab", &cqlbench::result::fixture::RunShape::default())
        .write(&run)
        .unwrap();
    for (arg, says) in [
        (
            format!("i3.2xlarge={}", cap.display()),
            "give it as i3.2xlarge:NODES=".to_string(),
        ),
        (
            format!("i3.2xlarge:3={}", run.display()),
            format!(
                "{}: a run result, not a capacity-search or scaling result",
                run.display()
            ),
        ),
        (cap.display().to_string(), "INSTANCE[:NODES]=".to_string()),
        (
            format!("i3.2xlarge:0={}", cap.display()),
            "positive whole number".to_string(),
        ),
    ] {
        let out = cqlbench()
            .args(["plan", "--ops", "1000", "--data", "1TB", "--capacity", &arg])
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        // The first line says it all (clap adds a "--help" hint to a flag it refuses).
        let first = stderr.lines().next().unwrap_or_default();
        assert!(first.contains(&says), "{arg}: {stderr}");
    }
}

/// A scaling result prices from its largest size's capacity per node and names every size's
/// efficiency; a node count given with it is refused.
#[test]
fn plan_reads_a_scaling_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scaling.json");
    let mut s = cqlbench::result::ScalingResult::new("lab", "stress", &[1, 2, 3]);
    for (n, ops) in [(1, 10_000.0), (2, 18_000.0), (3, 24_000.0)] {
        let search = cqlbench::result::fixture::capacity_at("lab", ops);
        s.record(n, &format!("scaling.n{n}.json"), &search);
    }
    s.write(&path).unwrap();
    let arg = format!("i3.2xlarge={}", path.display());
    let out = cqlbench()
        .args([
            "plan",
            "--ops",
            "100000",
            "--data",
            "1TB",
            "--provider",
            "aws",
            "--top",
            "40",
            "--capacity",
            &arg,
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains(
            "24,000 ops/s / 3 nodes (scaling efficiency 1 nodes 100%, 2 nodes 90%, 3 nodes 80%)"
        ),
        "{text}"
    );
    // 100,000 ops/s at 8,000 per node: 13 nodes of i3.2xlarge.
    assert!(text.contains("ceil(100,000 / 8,000)"), "{text}");
    let out = cqlbench()
        .args(["plan", "--ops", "1000", "--data", "1TB", "--capacity"])
        .arg(format!("i3.2xlarge:3={}", path.display()))
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("a scaling result names its cluster sizes: give i3.2xlarge="),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn plan_json_is_ranked() {
    let v = json(&[
        "plan",
        "--ops",
        "50000",
        "--data",
        "2TB",
        "--compaction",
        "lcs",
        "--reserved",
        "3y",
    ]);
    let c = v["candidates"].as_array().unwrap();
    assert!(c.len() > 10);
    let ranked: Vec<f64> = c
        .iter()
        .map(|c| c["rank_monthly_usd"].as_f64().unwrap())
        .collect();
    assert!(ranked.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(v["spec"]["headroom"]["value"]["factor"], 1.2);
}

/// An unknown provider is named as such, with the ones the catalogue has.
#[test]
fn plan_names_an_unknown_provider() {
    let out = cqlbench()
        .args([
            "plan",
            "--ops",
            "10000",
            "--data",
            "1TB",
            "--provider",
            "mars",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(
            "--provider mars: the catalogue has no such provider (it has aws, azure, gcp)"
        ),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
