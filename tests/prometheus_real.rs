//! Host series fetched from a real Prometheus server (Debian's `prometheus`) that scrapes a
//! real node exporter (`prometheus-node-exporter`) every second, both started by the test on
//! free loopback ports with their own temporary directories and stopped by their PIDs at the
//! end. The test samples the same exporter directly over a window, as a run's sampler does,
//! then fetches the window from the server through `metrics::prometheus_server::fetch` and
//! compares the two. No Cassandra needed.

use std::time::{Duration, Instant};

use cqlbench::metrics::node_exporter::{self, Hosts, NodeExporter};
use cqlbench::metrics::prometheus_server::{FetchSpec, NodeInstance, Server, fetch};
use cqlbench::result::series::HostSample;

mod common;
use common::daemon::{BusyCpu, Daemon, free_port};

const PACKAGES: &str = "prometheus prometheus-node-exporter";

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// A real node exporter on `port` (its log and text-file directory in `dir`), named as node
/// `node`, once it answers a scrape.
fn start_exporter(dir: &std::path::Path, port: u16, node: &str) -> (Daemon, NodeExporter) {
    let mut exporter = Daemon::start(
        "prometheus-node-exporter",
        &[
            format!("--web.listen-address=127.0.0.1:{port}"),
            format!("--collector.textfile.directory={}", dir.display()),
        ],
        &dir.join("exporter.log"),
        PACKAGES,
    );
    let e = NodeExporter {
        node: node.into(),
        host: "127.0.0.1".into(),
        port,
    };
    exporter.wait_until(Duration::from_secs(30), || {
        node_exporter::scrape(&e, Duration::from_secs(2)).is_ok()
    });
    (exporter, e)
}

#[test]
fn a_window_fetched_from_prometheus_matches_the_exporters_own_samples() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let (exporter_port, prometheus_port) = (free_port(), free_port());

    let (exporter, e) = start_exporter(dir.path(), exporter_port, "node1");

    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: node\n    params:\n      collect[]: [cpu, diskstats, loadavg, meminfo, netdev]\n    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
        ),
    )
    .unwrap();
    let prometheus_log = dir.path().join("prometheus.log");
    let mut prometheus = Daemon::start(
        "prometheus",
        &[
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", dir.path().join("data").display()),
            format!("--web.listen-address=127.0.0.1:{prometheus_port}"),
        ],
        &prometheus_log,
        PACKAGES,
    );
    let url = format!("http://127.0.0.1:{prometheus_port}");
    let ready = || {
        ureq::get(&format!("{url}/-/ready"))
            .call()
            .is_ok_and(|r| r.status() == 200)
    };
    prometheus.wait_until(Duration::from_secs(60), ready);
    // A few scrapes before the window.
    std::thread::sleep(Duration::from_secs(3));

    // The window: the exporter sampled once a second, as the run's sampler does.
    let window_s = 10.0;
    let t0 = unix_now().ceil();
    std::thread::sleep(Duration::from_secs_f64((t0 - unix_now()).max(0.0)));
    // A thread of this test spins through the window, so that both ways have CPU time to
    // show however quiet the rest of the machine is.
    let spin = BusyCpu::start();
    let mut hosts = Hosts::new(vec![e.clone()]);
    let mut direct: Vec<(f64, HostSample)> = Vec::new();
    let (_, errors) = hosts.sample(Duration::from_secs(2));
    assert!(errors.is_empty(), "{errors:?}");
    for k in 1..=window_s as u32 {
        std::thread::sleep(Duration::from_secs_f64(
            (t0 + k as f64 - unix_now()).max(0.0),
        ));
        let (s, errors) = hosts.sample(Duration::from_secs(2));
        assert!(errors.is_empty(), "{errors:?}");
        direct.push((unix_now() - t0, s[0].clone().expect("a second reading")));
    }
    let end = t0 + window_s;
    drop(spin);
    // The window's last scrape stored.
    std::thread::sleep(Duration::from_secs(2));

    let spec = FetchSpec {
        access: Default::default(),
        server: Server::parse(&url).unwrap(),
        instances: vec![],
        nodes: vec![("node1".into(), "127.0.0.1".into())],
        start_unix_s: t0,
        end_unix_s: end,
        t0_unix_s: t0,
        step_s: 1.0,
        timeout: Duration::from_secs(20),
    };
    let fetched = fetch(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fetched.hosts.len(), 1, "{:?}", fetched.hosts);
    let h = &fetched.hosts[0];
    assert_eq!(
        (h.node.as_str(), h.exporter.as_str(), h.job.as_deref()),
        (
            "node1",
            format!("127.0.0.1:{exporter_port}").as_str(),
            Some("node")
        ),
        "the node is mapped to its address's instance"
    );
    // The server scrapes no Cassandra node: the node's own series are not there, and that is
    // said; its host's are all there.
    assert!(fetched.nodes.is_empty(), "{:?}", fetched.nodes);
    assert_eq!(
        fetched.missing,
        [
            "node1: no Cassandra metrics instance with host 127.0.0.1 (give --prometheus-instance node1=INSTANCE)"
        ]
    );
    assert!(!h.devices.is_empty(), "no block device fetched");
    assert!(
        h.devices.iter().all(|d| !d.starts_with("loop")),
        "{:?}",
        h.devices
    );
    // One sample per step of the window (both ends included).
    let steps = (window_s / fetched.step_s).round() as usize + 1;
    assert_eq!(
        fetched.samples.len(),
        steps,
        "{} samples",
        fetched.samples.len()
    );
    let figures: Vec<(f64, HostSample)> = fetched
        .samples
        .iter()
        .filter_map(|s| Some((s.t_s, s.node_hosts[0].clone()?)))
        .collect();
    // A scrape that timed out (this machine is loaded while tests run) leaves its steps
    // without figures; most have them.
    assert!(
        2 * figures.len() >= steps,
        "only {} of {steps} steps have figures",
        figures.len()
    );
    for (t, f) in &figures {
        assert!((0.0..=window_s + 1e-9).contains(t), "t_s {t}");
        let shares = [f.cpu_user, f.cpu_system, f.cpu_iowait, f.cpu_steal];
        assert!(
            shares.iter().all(|s| (0.0..=1.0).contains(s)),
            "CPU share out of [0, 1]: {f:?}"
        );
        assert!(shares.iter().sum::<f64>() <= 1.0 + 1e-9, "{f:?}");
        assert!(f.mem_used_bytes.is_some_and(|m| m > 0.0), "{f:?}");
        assert!(f.load1.is_some(), "{f:?}");
        assert_eq!(f.devices.len(), h.devices.len());
    }
    // The same host over the same window, two ways.
    let busy =
        |v: &[(f64, HostSample)]| mean(&v.iter().map(|(_, s)| s.cpu_busy()).collect::<Vec<_>>());
    let (direct_busy, fetched_busy) = (busy(&direct), busy(&figures));
    assert!(
        fetched_busy > 0.0,
        "no CPU time fetched while a thread of this test spun"
    );
    assert!(
        (direct_busy - fetched_busy).abs() < 0.2,
        "CPU busy: exporter {direct_busy:.3}, Prometheus {fetched_busy:.3}"
    );

    // An instance that is not there is named; an existing one given is used as given.
    let spec_given = FetchSpec {
        instances: vec![
            NodeInstance::parse(&format!("nodeA=127.0.0.1:{exporter_port}")).unwrap(),
            NodeInstance::parse("nodeB=10.9.9.9:9100").unwrap(),
        ],
        nodes: vec![],
        ..spec.clone()
    };
    let f = fetch(&spec_given).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.hosts.len(), 1);
    assert_eq!(f.hosts[0].node, "nodeA");
    assert_eq!(f.missing.len(), 1, "{:?}", f.missing);
    assert!(
        f.missing[0].starts_with("nodeB: instance '10.9.9.9:9100'"),
        "{:?}",
        f.missing
    );

    // The server answering an error (a path it does not serve: HTTP 404) is named with it.
    let wrong = FetchSpec {
        access: Default::default(),
        server: Server::parse(&format!("{url}/no/such/prefix")).unwrap(),
        ..spec.clone()
    };
    let err = fetch(&wrong).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("Prometheus server {url}/no/such/prefix: "))
            && err.contains("404"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");

    prometheus.stop();
    exporter.stop();
    eprintln!(
        "prometheus test: {:.1}s; {} of {steps} steps with figures, devices {:?}; mean CPU busy over the window: exporter sampled directly {:.4}, fetched from Prometheus {:.4} (difference {:.4})",
        started.elapsed().as_secs_f64(),
        figures.len(),
        h.devices,
        direct_busy,
        fetched_busy,
        (direct_busy - fetched_busy).abs()
    );
}

/// `cqlbench metrics check` against a real Prometheus server behind its own basic auth
/// (`--web.config.file`, a bcrypt hash), scraping a real node exporter: with the credentials
/// the check lists the node's CPU from the server; with wrong ones, or none, it is refused in
/// one line naming the refusal; a malformed credentials file is refused before any request.
#[test]
fn a_server_behind_basic_auth_is_reached_with_its_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let (exporter_port, prometheus_port) = (free_port(), free_port());
    let (exporter, _) = start_exporter(dir.path(), exporter_port, "127.0.0.1");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
        ),
    )
    .unwrap();
    let web = dir.path().join("web.yml");
    let hash = bcrypt::hash("s3cret pass", 4).unwrap();
    std::fs::write(&web, format!("basic_auth_users:\n  cqb: '{hash}'\n")).unwrap();
    let mut prometheus = Daemon::start(
        "prometheus",
        &[
            format!("--config.file={}", config.display()),
            format!("--web.config.file={}", web.display()),
            format!("--storage.tsdb.path={}", dir.path().join("data").display()),
            format!("--web.listen-address=127.0.0.1:{prometheus_port}"),
        ],
        &dir.path().join("prometheus.log"),
        PACKAGES,
    );
    let url = format!("http://127.0.0.1:{prometheus_port}");
    // Ready once it asks for credentials (the readiness endpoint sits behind them too).
    prometheus.wait_until(Duration::from_secs(60), || {
        ureq::get(&format!("{url}/-/ready"))
            .config()
            .http_status_as_error(false)
            .build()
            .call()
            .is_ok_and(|r| r.status() == 401)
    });
    let good = dir.path().join("good");
    std::fs::write(&good, "cqb\ns3cret pass\n").unwrap();
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "cqb\nguess\n").unwrap();
    let bad = dir.path().join("bad");
    std::fs::write(&bad, "cqb\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let check = |extra: &[&str]| {
        let mut c = assert_cmd::Command::cargo_bin("cqlbench").unwrap();
        c.env("CQLBENCH_HOME", home.path())
            .env("CQLBENCH_CLUSTERS_DIR", home.path().join("clusters"))
            .args([
                "metrics",
                "check",
                "--hosts",
                "127.0.0.1",
                "--prometheus-server",
                &url,
            ])
            .args(extra);
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // Until the server has stored a scrape of the exporter (its first comes a scrape interval
    // or so after it starts).
    let t0 = Instant::now();
    let (code, out, err) = loop {
        let (code, out, err) = check(&["--prometheus-credentials", good.to_str().unwrap()]);
        if code == Some(0) || t0.elapsed() > Duration::from_secs(30) {
            break (code, out, err);
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    assert_eq!(code, Some(0), "{out}{err}");
    let row = out
        .lines()
        .find(|l| l.contains(&format!("instance 127.0.0.1:{exporter_port}")))
        .expect(&out);
    assert!(row.contains("✓ Prometheus server (node exporter)"), "{row}");
    for extra in [
        &["--prometheus-credentials", wrong.to_str().unwrap()][..],
        &[],
    ] {
        let (code, out, err) = check(extra);
        assert_eq!(code, Some(1), "{extra:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("HTTP 401") && err.contains("refused the credentials"),
            "{extra:?}: {err}"
        );
    }
    let (code, _, err) = check(&["--prometheus-credentials", bad.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("expected two lines"), "{err}");
    prometheus.stop();
    exporter.stop();
}
