use super::*;
use crate::spec::cluster::parse_dcs;

fn catalog() -> Catalog {
    crate::prices::load::default_catalog().unwrap()
}

fn storage(args: &[&str]) -> Vec<StorageArg> {
    args.iter().map(|s| s.parse().unwrap()).collect()
}

/// Reference 000 on EKS: one DC of 3 r5.2xlarge nodes in 3 racks across 3 zones, 31 GB G1
/// heaps, 3.4 TB gp2 volumes (its Helm values, as a K8ssandraCluster).
pub(crate) fn ref000() -> K8sClusterSpec {
    K8sClusterSpec {
        name: "ref000".into(),
        namespace: "k8ssandra".into(),
        cloud: Cloud::Aws,
        version: "4.0.0".into(),
        dcs: parse_dcs("dc1:3:3").unwrap(),
        heap: Some(MiB(31 * 1024)),
        new_gen: None,
        gc: Gc::G1,
        storage: storage(&["gp2:3400Gi"]),
        zones: vec![
            "us-west-2a".into(),
            "us-west-2b".into(),
            "us-west-2c".into(),
        ],
        cpu: Some("7500m".into()),
        memory: Some("60Gi".into()),
    }
}

/// Reference 003 on AWS: one DC per storage type (default gp2, gp3, io1 with provisioned IOPS)
/// and a coordinator DC, one node each, 2 TB volumes, in one zone.
pub(crate) fn ref003() -> K8sClusterSpec {
    K8sClusterSpec {
        name: "ref003".into(),
        namespace: "k8ssandra".into(),
        cloud: Cloud::Aws,
        version: "4.0.6".into(),
        dcs: parse_dcs("dc1:1,dc2:1,dc3:1,dc4:1").unwrap(),
        heap: None,
        new_gen: None,
        gc: Gc::G1,
        storage: storage(&["gp2:2Ti", "dc2=gp3:2Ti", "dc3=io1:2Ti:16000"]),
        zones: vec!["us-east-2c".into()],
        cpu: None,
        memory: None,
    }
}

#[test]
fn reference_000_renders_like_its_golden_file() {
    let r = render(&ref000(), &catalog()).unwrap();
    crate::testutil::assert_golden("src/k8s/golden/cluster-ref000.yaml", &r.yaml());
}

#[test]
fn reference_003_renders_like_its_golden_file() {
    let r = render(&ref003(), &catalog()).unwrap();
    crate::testutil::assert_golden("src/k8s/golden/cluster-ref003.yaml", &r.yaml());
}

#[test]
fn racks_are_pinned_to_zones_in_order() {
    let r = render(&ref000(), &catalog()).unwrap();
    let dc = &r.cluster.spec.cassandra.datacenters[0];
    assert_eq!(dc.metadata.name, "dc1");
    assert_eq!(dc.size, 3);
    let zones: Vec<(&str, &str)> = dc
        .racks
        .iter()
        .map(|r| {
            let l = r.node_affinity_labels.as_ref().unwrap();
            (r.name.as_str(), l[ZONE_LABEL].as_str())
        })
        .collect();
    assert_eq!(
        zones,
        [
            ("r1", "us-west-2a"),
            ("r2", "us-west-2b"),
            ("r3", "us-west-2c")
        ]
    );
    let mut s = ref000();
    s.zones.clear();
    let r = render(&s, &catalog()).unwrap();
    let racks = &r.cluster.spec.cassandra.datacenters[0].racks;
    assert_eq!(racks.len(), 3);
    assert!(racks.iter().all(|r| r.node_affinity_labels.is_none()));
}

#[test]
fn each_dc_claims_its_own_class_and_classes_are_shared() {
    let r = render(&ref003(), &catalog()).unwrap();
    let names: Vec<&str> = r
        .storage_classes
        .iter()
        .map(|c| c.metadata.name.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["ref003-gp2", "ref003-gp3", "ref003-io1-16000iops"]);
    let claimed: Vec<(&str, &str, &str)> = r
        .cluster
        .spec
        .cassandra
        .datacenters
        .iter()
        .map(|d| {
            let c = &d.storage_config.cassandra_data_volume_claim_spec;
            (
                d.metadata.name.as_str(),
                c.storage_class_name.as_str(),
                c.resources.requests["storage"].0.as_str(),
            )
        })
        .collect();
    assert_eq!(
        claimed,
        [
            ("dc1", "ref003-gp2", "2Ti"),
            ("dc2", "ref003-gp3", "2Ti"),
            ("dc3", "ref003-io1-16000iops", "2Ti"),
            ("dc4", "ref003-gp2", "2Ti"),
        ]
    );
    let io1 = &r.storage_classes[2];
    let p = io1.parameters.as_ref().unwrap();
    assert_eq!((p["type"].as_str(), p["iops"].as_str()), ("io1", "16000"));
}

#[test]
fn jvm_options_use_the_crds_names() {
    let r = render(&ref000(), &catalog()).unwrap();
    let cfg = r.cluster.spec.cassandra.config.as_ref().unwrap();
    let y = crate::yaml::to_value(cfg);
    let j = &y["jvmOptions"];
    assert_eq!(j["heap_initial_size"], "31Gi");
    assert_eq!(j["heap_max_size"], "31Gi");
    assert_eq!(j["gc"], "G1GC");
    assert_eq!(j["gc_g1_max_gc_pause_ms"], 300);
    assert_eq!(j["gc_g1_initiating_heap_occupancy_percent"], 70);
    assert_eq!(j["gc_g1_rset_updating_pause_time_percent"], 5);
    assert!(j.get("additionalJvmServerOptions").is_none());

    let mut s = ref000();
    s.heap = Some(MiB(500));
    s.new_gen = Some(MiB(200));
    s.gc = Gc::Zgc;
    let r = render(&s, &catalog()).unwrap();
    let j = crate::yaml::to_value(&r.cluster.spec.cassandra.config);
    let j = &j["jvmOptions"];
    assert_eq!(j["heap_max_size"], "500Mi");
    assert_eq!(j["gc"], "ZGC");
    assert!(j.get("gc_g1_max_gc_pause_ms").is_none());
    assert_eq!(j["additionalJvmServerOptions"][0], "-Xmn200M");
}

#[test]
fn resources_are_requests_and_limits_of_the_cassandra_container() {
    let r = render(&ref000(), &catalog()).unwrap();
    let res = r.cluster.spec.cassandra.resources.unwrap();
    for m in [res.requests.unwrap(), res.limits.unwrap()] {
        assert_eq!(m["cpu"].0, "7500m");
        assert_eq!(m["memory"].0, "60Gi");
    }
    let r = render(&ref003(), &catalog()).unwrap();
    assert!(r.cluster.spec.cassandra.resources.is_none());
}

#[test]
fn the_rendered_cluster_reads_back_into_the_strict_model() {
    for spec in [ref000(), ref003()] {
        let yaml = render(&spec, &catalog()).unwrap().yaml();
        let docs: Vec<crate::yaml::Value> = crate::yaml::from_str_multiple(&yaml).unwrap();
        let last = docs.last().unwrap().clone();
        let back: K8ssandraCluster = crate::yaml::from_value(last).unwrap();
        assert_eq!(back.kind, "K8ssandraCluster");
        assert_eq!(back.api_version, "k8ssandra.io/v1alpha1");
        for d in &docs[..docs.len() - 1] {
            let sc: StorageClass = crate::yaml::from_value(d.clone()).unwrap();
            assert_eq!(sc.reclaim_policy.as_deref(), Some("Retain"));
        }
    }
}

fn refused(change: impl Fn(&mut K8sClusterSpec), needle: &str) {
    let mut s = ref000();
    change(&mut s);
    let e = render(&s, &catalog()).unwrap_err();
    assert!(e.contains(needle), "'{needle}' not in: {e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn bad_specs_are_refused_in_one_line() {
    refused(
        |s| s.name = "Ref_000".into(),
        "--name 'Ref_000' is not a DNS-1123 label",
    );
    refused(|s| s.name = "a".repeat(41), "1 to 40");
    refused(|s| s.namespace = "-x".into(), "--namespace '-x'");
    for v in [
        "5.0",
        "5.0.x",
        "2.2.19",
        "3.0.29",
        "6.0.0",
        "5.0.4-beta",
        "latest",
    ] {
        refused(
            |s| s.version = v.into(),
            &format!("--version '{v}' is not a Cassandra"),
        );
    }
    refused(
        |s| s.dcs = parse_dcs("DC_1:3:3").unwrap(),
        "data centre name 'DC_1' is not a DNS-1123 label",
    );
    refused(
        |s| {
            s.zones.pop();
        },
        "--zones: 2 zones given but data centre 'dc1' has 3 racks",
    );
    refused(
        |s| s.zones[1] = "us-west-2a".into(),
        "zone 'us-west-2a' is named twice",
    );
    refused(|s| s.zones[0] = "a b".into(), "--zones: zone 'a b'");
    refused(|s| s.gc = Gc::Parallel, "no Parallel collector");
    refused(
        |s| {
            s.heap = None;
            s.new_gen = Some(MiB(100))
        },
        "--new-gen needs --heap",
    );
    refused(
        |s| s.new_gen = Some(MiB(31 * 1024)),
        "must be smaller than --heap 31G",
    );
    refused(
        |s| s.memory = Some("31Gi".into()),
        "--heap 31G must be smaller than the container's --memory 31Gi",
    );
    refused(
        |s| {
            s.heap = Some(crate::spec::MiB(8192));
            s.memory = Some("8G".into());
        },
        "--heap 8G must be smaller than the container's --memory 8G (off-heap memory, the page cache and the management API need room); --memory 8G is 7629 MiB (Kubernetes' G is a power of ten; write Gi for the JVM's)",
    );
    refused(
        |s| s.cpu = Some("lots".into()),
        "--cpu 'lots' is not a positive",
    );
    refused(|s| s.memory = Some("60GB".into()), "--memory '60GB'");
    refused(
        |s| s.storage = storage(&["pd-ssd:1Ti"]),
        "'pd-ssd' is not a disk type of aws",
    );
    refused(
        |s| s.storage = storage(&["gp2:1Ti", "dc9=gp3:1Ti"]),
        "--storage 'dc9=gp3:1Ti': no data centre 'dc9' in --dcs (known: dc1)",
    );
    refused(
        |s| s.storage = storage(&["gp2:1Ti", "gp3:1Ti"]),
        "a second default volume",
    );
    refused(
        |s| s.storage = storage(&["dc1=gp2:1Ti", "dc1=gp3:1Ti"]),
        "data centre 'dc1' is given a volume twice",
    );
    refused(
        |s| s.storage = vec![],
        "data centre 'dc1' has no volume: give --storage DISK:SIZE",
    );
}

#[test]
fn a_memory_in_decimal_units_is_not_compared_with_the_heap() {
    let mut s = ref000();
    s.memory = Some("64G".into());
    assert!(render(&s, &catalog()).is_ok());
    assert_eq!(binary_mib("64Gi"), Some(65536));
    assert_eq!(binary_mib("1.5Gi"), Some(1536));
    // Decimal suffixes: 8G is 8·10⁹ bytes, 7629 MiB, less than an 8 GiB heap.
    assert_eq!(binary_mib("8G"), Some(7629));
    assert_eq!(binary_mib("500M"), Some(476));
    assert_eq!(binary_mib("1073741824"), Some(1024));
    assert_eq!(binary_mib("lots"), None);
    assert_eq!(binary_mib("512Mi"), Some(512));
}

#[test]
fn the_header_names_the_operator_commit_and_the_cloud() {
    let y = render(&ref003(), &catalog()).unwrap().yaml();
    let first = y.lines().next().unwrap();
    assert_eq!(
        first,
        "# cqlbench k8s cluster: K8ssandraCluster ref003 (4 nodes, Cassandra 4.0.6) on aws."
    );
    assert!(y.lines().nth(1).unwrap().contains(&OPERATOR_COMMIT[..12]));
}
