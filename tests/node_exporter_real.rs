//! Host metrics from a real node exporter (Debian's `prometheus-node-exporter`), started on a
//! free loopback port by the test itself and stopped by its PID at the end: two scrapes
//! through the sampler's node-exporter source give CPU shares and block-device figures.
//! No Cassandra needed.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cqlbench::metrics::node_exporter::{self, Hosts, NodeExporter};

const BINARY: &str = "prometheus-node-exporter";

/// The exporter's process, killed by its PID when dropped (a failing test too).
struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn a_node_exporters_host_gives_cpu_shares_and_device_counters() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = Command::new(BINARY)
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!(
            "--collector.textfile.directory={}",
            dir.path().display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("exporter.log")).unwrap(),
        ))
        .spawn()
        .unwrap_or_else(|e| {
            panic!("{BINARY} did not start ({e}): apt-get install -y prometheus-node-exporter")
        });
    let mut exporter = Exporter(child);
    let e = NodeExporter {
        node: "node1".into(),
        host: "127.0.0.1".into(),
        port,
    };
    // Ready when it answers with CPU counters.
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Err(err) = node_exporter::scrape(&e, Duration::from_secs(2)) {
        if let Some(status) = exporter.0.try_wait().unwrap() {
            let log = std::fs::read_to_string(dir.path().join("exporter.log")).unwrap_or_default();
            panic!("{BINARY} exited ({status}):\n{log}");
        }
        assert!(Instant::now() < deadline, "{BINARY} never answered: {err}");
        std::thread::sleep(Duration::from_millis(100));
    }

    let mut hosts = Hosts::new(vec![e]);
    let (first, errors) = hosts.sample(Duration::from_secs(5));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        first,
        [None],
        "the first reading has nothing to take rates against"
    );
    std::thread::sleep(Duration::from_secs(1));
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
    let busy: f64 = shares.iter().sum();
    assert!(busy <= 1.0 + 1e-9, "shares sum to {busy}: {h:?}");
    // This machine is never idle while a test suite builds and runs.
    assert!(h.cpu_user + h.cpu_system > 0.0, "{h:?}");
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

    let pid = exporter.0.id();
    drop(exporter);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}/stat")).exists(),
        "the exporter (PID {pid}) is still running"
    );
    eprintln!(
        "node exporter test: {:.1}s, devices {devices:?}, CPU user {:.3} system {:.3} iowait {:.3} steal {:.3}",
        started.elapsed().as_secs_f64(),
        h.cpu_user,
        h.cpu_system,
        h.cpu_iowait,
        h.cpu_steal
    );
}
