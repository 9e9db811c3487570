use super::*;
use crate::cost::fixture::{Shape, throughput_run, write_capacity};
use crate::prices::default_catalog;

fn r5() -> Instance {
    default_catalog()
        .unwrap()
        .instance("r5.2xlarge")
        .unwrap()
        .clone()
}

#[test]
fn a_laptop_node_is_described_and_flagged_against_the_instance() {
    let h = Hardware::of_run(
        &throughput_run("laptop", 31_999.0, &Shape::laptop()),
        "a.json",
    );
    assert_eq!(h.nodes, Some(1));
    assert_eq!(h.per_node(), Some((2.0, 8.0)));
    let d = h.describe();
    assert!(
        d == "1 node on one host of 2 CPUs, 8.0 GB RAM; 2 CPUs and 8.0 GB RAM per node; the client on the same host; no emulation",
        "{d}"
    );
    let w = h.against(&r5());
    assert_eq!(
        w[0],
        "measured on hardware unlike r5.2xlarge: 2 CPUs and 8.0 GB RAM per node measured, r5.2xlarge has 8 vCPU and 64 GB RAM per node"
    );
    assert!(
        w[1].starts_with("the client ran on the nodes' host"),
        "{w:?}"
    );
}

#[test]
fn emulated_nodes_count_their_pinned_cpus_and_memory_limit() {
    let shape = Shape {
        nodes: 3,
        host_cpus: 32,
        host_ram_gib: 256,
        cpus_per_node: Some(8),
        node_memory_mib: Some(64 * 1024),
    };
    let h = Hardware::of_run(&throughput_run("lab", 1_000.0, &shape), "b.json");
    assert_eq!(h.per_node(), Some((8.0, 64.0)));
    let d = h.describe();
    assert!(
        d.contains("3 nodes packed on one host of 32 CPUs")
            && d.contains("emulated: cpus-per-node 8, node-memory 65536M"),
        "{d}"
    );
    // Only the shared client is left to warn about.
    let w = h.against(&r5());
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("the client ran"), "{w:?}");
    // Pinned CPUs that do not fit the host are shared: 3 nodes × 16 on 32 CPUs.
    let mut h = h;
    h.emulation.cpus_per_node = Some(16);
    let (cpu, _) = h.per_node().unwrap();
    assert!((cpu - 32.0 / 3.0).abs() < 1e-9, "{cpu}");
    assert!(h.against(&r5())[0].contains("10.67 CPUs and 64 GB RAM per node measured"));
}

#[test]
fn a_remote_cluster_is_not_recorded_and_says_so() {
    let mut run = crate::result::fixture::run("hosts", &Default::default());
    run.target.hosts = vec!["10.0.0.5".into()];
    let h = Hardware::of_run(&run, "c.json");
    assert_eq!(
        (h.per_node(), h.client_on_host, h.nodes),
        (None, None, None)
    );
    assert!(
        h.describe()
            .contains("a cluster cqlbench did not start (10.0.0.5)")
    );
    let w = h.against(&r5());
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("not recorded"), "{w:?}");
    // Contact points on the loopback: the nodes shared the client's host.
    run.target.hosts = vec!["127.0.0.1:9042".into(), "localhost".into()];
    let h = Hardware::of_run(&run, "c.json");
    assert!(h.servers_on_host && h.client_on_host == Some(true));
    assert!(h.against(&r5())[0].contains("shared one host of 2 CPUs"));
}

#[test]
fn a_capacity_search_is_measured_on_its_passing_steps_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_capacity(dir.path(), "cap", "laptop", 31_999.0, &Shape::laptop()).unwrap();
    let h = Hardware::read_capacity(&path).unwrap();
    assert!(h.run.ends_with("cap-step-2.json"), "{}", h.run);
    assert_eq!(h.nodes, Some(1));
    std::fs::remove_file(dir.path().join("cap-step-2.json")).unwrap();
    let e = Hardware::read_capacity(&path).unwrap_err().to_string();
    assert!(e.contains("cap-step-2.json"), "{e}");
}
