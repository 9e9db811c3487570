//! Host metrics from a real node exporter (Debian's `prometheus-node-exporter`), started on a
//! free loopback port by the test itself and stopped by its PID at the end: two scrapes
//! through the sampler's node-exporter source give CPU shares and block-device figures.
//! No Cassandra needed.

use std::time::{Duration, Instant};

use cqlbench::metrics::node_exporter::{self, Hosts, NodeExporter};

mod common;
use common::daemon::{BusyCpu, Daemon, free_port};

#[test]
fn a_node_exporters_host_gives_cpu_shares_and_device_counters() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut exporter = Daemon::start(
        "prometheus-node-exporter",
        &[
            format!("--web.listen-address=127.0.0.1:{port}"),
            format!("--collector.textfile.directory={}", dir.path().display()),
        ],
        &dir.path().join("exporter.log"),
        "prometheus-node-exporter",
    );
    let e = NodeExporter {
        node: "node1".into(),
        host: "127.0.0.1".into(),
        port,
    };
    // Ready when it answers with CPU counters.
    exporter.wait_until(Duration::from_secs(20), || {
        node_exporter::scrape(&e, Duration::from_secs(2)).is_ok()
    });

    let mut hosts = Hosts::new(vec![e]);
    let (first, errors) = hosts.sample(Duration::from_secs(5));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        first,
        [None],
        "the first reading has nothing to take rates against"
    );
    // Between the two readings this test keeps one CPU busy itself, so that the shares
    // have user time to show however quiet the rest of the machine is.
    let busy = BusyCpu::start();
    std::thread::sleep(Duration::from_secs(2));
    let (second, errors) = hosts.sample(Duration::from_secs(5));
    assert!(errors.is_empty(), "{errors:?}");
    let h = second[0].clone().expect("a second reading gives figures");

    let shares = [h.cpu_user, h.cpu_system, h.cpu_iowait, h.cpu_steal];
    for s in shares {
        assert!(
            (0.0..=1.0).contains(&s),
            "CPU share {s} out of [0, 1]: {h:?}"
        );
    }
    drop(busy);
    let sum: f64 = shares.iter().sum();
    assert!(sum <= 1.0 + 1e-9, "shares sum to {sum}: {h:?}");
    // A thread of this test spun through the whole interval.
    assert!(
        h.cpu_user > 0.0,
        "no user time while a thread of this test spun: {h:?}"
    );
    assert!(h.load1.is_some_and(|l| l >= 0.0), "{h:?}");
    assert!(h.mem_used_bytes.is_some_and(|m| m > 0.0), "{h:?}");
    assert!(h.page_cache_bytes.is_some(), "{h:?}");

    let devices = &hosts.devices[0];
    assert!(
        !devices.is_empty(),
        "no block device in the exporter's answer"
    );
    assert!(
        devices.iter().all(|d| !d.starts_with("loop")),
        "{devices:?}"
    );
    assert_eq!(h.devices.len(), devices.len());
    for d in &h.devices {
        assert!(
            d.read_iops >= 0.0 && d.write_iops >= 0.0 && d.util <= 1.0,
            "{d:?}"
        );
    }

    // An endpoint that answers in a dialect without the nodes' load (a node exporter's host
    // figures, where a fill was told to read its nodes): refused before anything is written,
    // not a fill that writes on to its --duration bound.
    let home = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("cqlbench")
        .unwrap()
        .env("CQLBENCH_HOME", home.path())
        .args([
            "fill",
            "keyvalue",
            "--hosts",
            "127.0.0.1:1",
            "--bytes",
            "1M",
        ])
        .args(["--prometheus", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "fill: 127.0.0.1:{port} answered without the nodes' load"
        )) && stderr.trim().lines().count() == 1,
        "{stderr}"
    );
    let results = home.path().join("results");
    assert!(
        std::fs::read_dir(&results).map_or(true, |d| d.count() == 0),
        "a result was written in {}",
        results.display()
    );

    exporter.stop();
    eprintln!(
        "node exporter test: {:.1}s, devices {devices:?}, CPU user {:.3} system {:.3} iowait {:.3} steal {:.3}",
        started.elapsed().as_secs_f64(),
        h.cpu_user,
        h.cpu_system,
        h.cpu_iowait,
        h.cpu_steal
    );
}
