//! Scenario files through the CLI, without a cluster: every shipped file turns into valid
//! typed steps (the cluster section and every value checked), and a broken one fails before
//! anything starts, in one line.

use std::path::Path;

fn cqlbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("cqlbench").unwrap()
}

#[test]
fn every_shipped_scenario_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let article = |p: &Path| p.file_name().unwrap().to_string_lossy().starts_with("ref");
    assert_eq!(
        files.iter().filter(|f| article(f)).count(),
        6,
        "one scenario per reference article, and ref 004's scaling run: {files:?}"
    );
    let out = tempfile::tempdir().unwrap();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // The header of an article's scenario lists every difference from the article as
        // `- TOPIC: THE ARTICLE / HERE`; other scenarios have none to list.
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        let differences = header
            .iter()
            .position(|l| l.starts_with("# Differences, the article / here"));
        assert!(header.len() >= 3, "{} says what it measures", f.display());
        assert_eq!(
            differences.is_some(),
            article(f),
            "{}: an article's scenario lists its differences from the article, another none",
            f.display()
        );
        let from = differences.unwrap_or(header.len());
        // Each item with its continuation lines (`#   …`).
        let mut items: Vec<String> = Vec::new();
        for l in header.iter().skip(from + 1) {
            if let Some(item) = l.strip_prefix("# - ") {
                items.push(item.to_string());
            } else if let (Some(more), Some(last)) = (l.strip_prefix("#   "), items.last_mut()) {
                last.push(' ');
                last.push_str(more);
            }
        }
        assert!(
            items.len() >= 3 || !article(f),
            "{}: {items:?}",
            f.display()
        );
        for item in &items {
            assert!(
                item.contains(": ") && item.contains(" / "),
                "{}: a difference names the article's and this file's: {item}",
                f.display()
            );
        }
        let a = cqlbench()
            .args(["scenario", f.to_str().unwrap(), "--dry-run", "--dir"])
            .arg(out.path())
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        assert!(stdout.contains("the scenario is valid"), "{stdout}");
        assert!(
            !out.path().join("scenario.yaml").exists(),
            "a dry run writes nothing"
        );
        // The article's own sizes, against a real cluster's hosts.
        let yaml: cqlbench::yaml::Value = cqlbench::yaml::from_str(&text).unwrap();
        assert!(
            yaml["scales"]["full"].is_array(),
            "{} has a full scale",
            f.display()
        );
        let full = |extra: &[&str]| {
            let mut c = cqlbench();
            c.args(["scenario", f.to_str().unwrap(), "--dry-run", "--dir"])
                .arg(out.path())
                .args(["--scale", "full", "--hosts", "10.0.0.1"])
                .args(extra);
            if let Some(first) = yaml["environments"][0]["name"].as_str() {
                c.args(["--env", first]);
            }
            c
        };
        if text.contains("- scaling:") {
            // A scaling run makes its own local clusters: hosts are refused in one line.
            let a = full(&[]).assert().failure();
            let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
            assert!(
                err.contains("makes its clusters from the scenario's local cluster"),
                "{err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            continue;
        }
        let mut extra: &[&str] = &[];
        if text.contains(":repair:") {
            // Node faults need a local cluster: refused in one line against hosts, accepted
            // once the header's `--set 'fault=~'` leaves them out.
            let a = full(&[]).assert().failure();
            let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
            assert!(err.contains("node faults need a local cluster"), "{err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(text.contains("--set 'fault=~'"), "{} says how", f.display());
            extra = &["--set", "fault=~"];
        }
        let a = full(extra).assert().success();
        let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        assert!(stdout.contains("--hosts 10.0.0.1"), "{stdout}");
        assert!(!stdout.contains("--fault"), "{stdout}");
    }
}

/// What the headers say the shipped scenarios take from their articles is in the files: the
/// dry run's commands and the cluster sections carry the article's settings.
#[test]
fn shipped_scenarios_use_their_articles_settings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let out = tempfile::tempdir().unwrap();
    let dry = |file: &str, extra: &[&str]| {
        let a = cqlbench()
            .args([
                "scenario",
                dir.join(file).to_str().unwrap(),
                "--dry-run",
                "--dir",
            ])
            .arg(out.path())
            .args(extra)
            .assert()
            .success();
        String::from_utf8_lossy(&a.get_output().stdout).to_string()
    };
    let yaml = |file: &str| -> cqlbench::yaml::Value {
        cqlbench::yaml::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap()
    };

    // Ref 000: the latency test's threads=150 bound what is in flight.
    let s = dry("ref000-k8ssandra-vs-ec2.yaml", &[]);
    assert!(
        s.contains("latency nb-tabular2") && s.contains("--max-in-flight 150"),
        "{s}"
    );
    assert_eq!(yaml("ref000-k8ssandra-vs-ec2.yaml")["cluster"]["racks"], 3);

    // Ref 002: rampup-cycles=1k, async=100, cql-iot's rf 1, 70/30; the full scale its 10k cycles.
    let s = dry("ref002-laptop.yaml", &[]);
    for rate in ["100", "500", "1000", "1500"] {
        let line = s
            .lines()
            .find(|l| l.contains(&format!("--rate {rate} ")))
            .unwrap_or_else(|| panic!("rate {rate}: {s}"));
        for flag in [
            "--rows 1000 ",
            "--max-in-flight 100 ",
            "--rf 1 ",
            "--ratio write=7,range=3",
        ] {
            assert!(line.contains(flag), "{flag}: {line}");
        }
    }
    let s = dry(
        "ref002-laptop.yaml",
        &["--scale", "full", "--hosts", "10.0.0.1"],
    );
    assert_eq!(s.matches("--ops 10000 ").count(), 4, "{s}");
    assert!(!s.contains("--duration"), "{s}");

    // Ref 003: repairs during the load, and the nodes' concurrent_reads/writes.
    let s = dry("ref003-storage-on-kubernetes.yaml", &[]);
    assert!(s.contains("--fault 30s:repair:node1"), "{s}");
    let c = &yaml("ref003-storage-on-kubernetes.yaml")["cluster"];
    assert_eq!(c["set"]["concurrent_reads"], 256);
    assert_eq!(c["set"]["concurrent_writes"], 256);

    // Ref 004: its JVM flag and cassandra.yaml tuning, heap : new gen 5 : 1, in both files; the
    // full scale of the SSD run gives its 10G / 2G.
    for file in ["ref004-ssd-instances.yaml", "ref004-scaling.yaml"] {
        let c = &yaml(file)["cluster"];
        assert_eq!(c["jvm-arg"][0], "-XX:+UseCondCardMark", "{file}");
        let set = &c["set"];
        assert_eq!(set["concurrent_reads"], 128, "{file}");
        assert_eq!(set["concurrent_writes"], 128, "{file}");
        assert_eq!(set["dynamic_snitch_update_interval"], "100ms", "{file}");
        assert_eq!(set["dynamic_snitch_reset_interval"], "60000ms", "{file}");
        assert_eq!(set["dynamic_snitch_badness_threshold"], 0.2, "{file}");
        let mib = |v: &cqlbench::yaml::Value| {
            v.as_str()
                .unwrap()
                .trim_end_matches('M')
                .parse::<f64>()
                .unwrap()
        };
        let ratio = mib(&c["heap"]) / mib(&c["new-gen"]);
        assert!(
            (4.5..=5.5).contains(&ratio),
            "{file}: heap / new gen {ratio}"
        );
    }
    let full = yaml("ref004-ssd-instances.yaml")["scales"]["full"].clone();
    let full: Vec<&str> = full
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        full.contains(&"cluster.heap=10G") && full.contains(&"cluster.new-gen=2G"),
        "{full:?}"
    );
}

#[test]
fn a_bad_step_fails_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.yaml");
    std::fs::write(
        &f,
        "name: bad\ncluster: {name: never-created, nodes: 1}\nsteps:\n  - probe: {quick: true}\n  - latency: {workload: keyvalue, rate: fast}\n",
    )
    .unwrap();
    let out = cqlbench()
        .env("CQLBENCH_CLUSTERS_DIR", dir.path())
        .env("CQLBENCH_HOME", dir.path())
        .args(["scenario", f.to_str().unwrap(), "--dir"])
        .arg(dir.path().join("out"))
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("step 2 (latency)") && err.contains("fast"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        !dir.path().join("never-created").exists(),
        "no cluster was created"
    );
    assert!(!dir.path().join("out").exists());
}

/// `verify` and `key-dist` as step keys: a dry run accepts them and prints them as flags.
#[test]
fn verify_and_key_dist_are_step_keys() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("v.yaml");
    std::fs::write(
        &f,
        "name: v\nsteps: [{latency: {workload: keyvalue, rate: 100, verify: true, key-dist: 'zipf:1.1'}}]\n",
    )
    .unwrap();
    let a = cqlbench()
        .env("CQLBENCH_HOME", dir.path())
        .args([
            "scenario",
            f.to_str().unwrap(),
            "--dry-run",
            "--hosts",
            "10.0.0.1",
            "--dir",
        ])
        .arg(dir.path().join("out"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(
        stdout
            .contains("latency keyvalue --hosts 10.0.0.1 --key-dist zipf:1.1 --verify --rate 100"),
        "{stdout}"
    );
}

/// `send-window` as a step key: with a rate the dry run prints it as a flag; without one (a
/// closed loop) the scenario is refused in one line naming the step.
#[test]
fn send_window_is_a_step_key() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.yaml");
    std::fs::write(
        &f,
        "name: w\nsteps:\n  - {latency: {workload: keyvalue, rate: 100, send-window: 1500us}}\n",
    )
    .unwrap();
    let dry = |f: &Path| {
        cqlbench()
            .env("CQLBENCH_HOME", dir.path())
            .args([
                "scenario",
                f.to_str().unwrap(),
                "--dry-run",
                "--hosts",
                "10.0.0.1",
                "--dir",
            ])
            .arg(dir.path().join("out"))
            .assert()
    };
    // Not a unit the durations take: refused, naming it.
    let err = dry(&f).failure().get_output().stderr.clone();
    let err = String::from_utf8_lossy(&err);
    assert!(err.contains("1500us") && err.lines().count() == 1, "{err}");
    std::fs::write(
        &f,
        "name: w\nsteps:\n  - {latency: {workload: keyvalue, rate: 100, send-window: 1.5ms}}\n",
    )
    .unwrap();
    let out = dry(&f).success().get_output().stdout.clone();
    let out = String::from_utf8_lossy(&out);
    assert!(out.contains("--send-window 1.5ms"), "{out}");
    std::fs::write(
        &f,
        "name: w\nsteps:\n  - {run: {workload: keyvalue, concurrency: 8, send-window: 1ms}}\n",
    )
    .unwrap();
    let err = dry(&f).failure().get_output().stderr.clone();
    let err = String::from_utf8_lossy(&err);
    assert!(
        err.contains("step 1 (run)")
            && err.contains("--send-window batches the sends of a fixed rate"),
        "{err}"
    );
}

/// `scenario FILE --dry-run` succeeds and says the scenario is valid; its output.
fn dry_run_valid(file: &Path, dir: &Path) -> String {
    let a = cqlbench()
        .args(["scenario", file.to_str().unwrap(), "--dry-run", "--dir"])
        .arg(dir)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(stdout.contains("the scenario is valid"), "{stdout}");
    stdout
}

/// `version:` and `java:` of a cluster section: valid values make a valid plan, naming the
/// version in each environment's cluster.
#[test]
fn version_and_java_are_cluster_keys() {
    let dir = tempfile::tempdir().unwrap();
    let java = std::fs::canonicalize(cqlbench::cli::toolchain().java).unwrap();
    let file = dir.path().join("v.yaml");
    std::fs::write(
        &file,
        format!(
            "name: v\ncluster: {{nodes: 1, java: {}}}\nenvironments:\n  - {{name: v40, cluster: {{version: 4.0.10, java: ~}}}}\n  - {{name: v50, cluster: {{version: '5.0'}}}}\nsteps: [{{probe: {{quick: true}}}}]\n",
            java.display()
        ),
    )
    .unwrap();
    let stdout = dry_run_valid(&file, dir.path());
    assert!(
        stdout.contains("environment v40") && stdout.contains("environment v50"),
        "{stdout}"
    );
}

#[test]
fn tls_and_driver_settings_are_keys_of_clusters_and_run_steps() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.yaml");
    std::fs::write(
        &file,
        "name: t\ncluster: {nodes: 1, tls: true}\nenvironments:\n  - {name: plain, cluster: {tls: false}}\n  - {name: mtls, cluster: {tls-client-auth: true, tls-internode: true}}\n  - {name: optional, cluster: {tls-optional: true}}\nsteps:\n  - {latency: {workload: keyvalue, rate: 100, duration: 5s, retry: 2, speculative: p99:1, compression: lz4, connections-per-host: 2, page-size: 100, tls-min-version: '1.3'}}\n",
    )
    .unwrap();
    let stdout = dry_run_valid(&file, dir.path());
    // The step's command line carries the driver settings.
    assert!(
        stdout.contains("--retry 2") && stdout.contains("--compression lz4"),
        "{stdout}"
    );
}

/// Bad scenario files, each refused by `--dry-run` (and by a real run) with one line naming
/// what is wrong, before any cluster is created.
#[test]
fn bad_files_are_refused_in_one_line_before_anything_starts() {
    let cases: &[(&str, &str)] = &[
        // (file, what the error names)
        (
            "name: u\nsteps: [{run: {workload: keyvalue, concurency: 8}}]",
            "concurency",
        ),
        (
            "name: p\nsteps: [{run: {workload: keyvalue, prometheus-server: '10.0.0.9:9090'}}]",
            "--prometheus-server '10.0.0.9:9090' is not a Prometheus server URL",
        ),
        (
            "name: p\nsteps: [{run: {workload: keyvalue, prometheus-instance: [node1=a]}}]",
            "--prometheus-instance maps nodes on a --prometheus-server",
        ),
        (
            "name: p\nsteps: [{run: {workload: keyvalue, prometheus-server: 'http://h:9090', prometheus-instance: [node1]}}]",
            "--prometheus-instance 'node1' is not a node's instance: no '='",
        ),
        (
            "name: p\nsteps: [{run: {workload: keyvalue, prometheus-credentials: /x}}]",
            "--prometheus-credentials, --prometheus-token and --prometheus-ca are for a --prometheus-server",
        ),
        (
            "name: p\nsteps: [{run: {workload: keyvalue, prometheus-server: 'http://h:9090', prometheus-token: /nonexistent/token}}]",
            "--prometheus-token /nonexistent/token",
        ),
        (
            "name: p\nsteps: [{capacity: {workload: keyvalue, prometheus-instance: ['node1=10.0.0.5:9100']}}]",
            "--prometheus-instance maps nodes on a --prometheus-server: give one",
        ),
        (
            "name: r\nsteps: [{latency: {workload: keyvalue, rate: -1}}]",
            "rate: '-1'",
        ),
        (
            "name: c\nsteps: [{throughput: {workload: keyvalue, concurrency: 0}}]",
            "--concurrency",
        ),
        (
            "name: d\nsteps: [{run: {workload: keyvalue, duration: 99999999999999999999h}}]",
            "duration",
        ),
        (
            "name: k\ncluster: {nodes: 1, heap: 999999G}\nsteps: [{probe: {}}]",
            "heap",
        ),
        (
            "name: n\ncluster: {nodes: 0}\nsteps: [{probe: {}}]",
            "--nodes",
        ),
        (
            "name: t\ncluster: {set: {num_tokens: 16}}\nsteps: [{probe: {}}]",
            "num_tokens",
        ),
        (
            "name: x\ncluster: {nodez: 3}\nsteps: [{probe: {}}]",
            "nodez",
        ),
        // Versions no local cluster runs, and a setting the environment's version lacks.
        (
            "name: v\ncluster: {version: 3.11.17}\nsteps: [{probe: {}}]",
            "Cassandra 3.11.17 runs only on Java 8",
        ),
        (
            "name: v\ncluster: {version: '9.9'}\nsteps: [{probe: {}}]",
            "Cassandra '9.9' is not a version local clusters run",
        ),
        (
            "name: v\ncluster: {set: {sai_options: {}}}\nenvironments: [{name: old, cluster: {version: 4.0.10}}]\nsteps: [{probe: {}}]",
            "cluster v-old: --set sai_options: Cassandra 4.0.10 has no cassandra.yaml key 'sai_options'",
        ),
        (
            "name: j\ncluster: {java: /nonexistent/jdk}\nsteps: [{probe: {}}]",
            "java /nonexistent/jdk: no such file",
        ),
        // TLS and driver keys.
        (
            "name: t\ncluster: {tls-client-auth: true}\nsteps: [{probe: {}}]",
            "need tls: true",
        ),
        (
            "name: t\ncluster: {tls: true, tls-client-auth: true, tls-optional: true}\nsteps: [{probe: {}}]",
            "cannot go with tls-client-auth",
        ),
        (
            "name: t\ncluster: {tls: true}\nenvironments: [{name: old, cluster: {version: 4.0.10}}]\nsteps: [{probe: {}}]",
            "--tls needs Cassandra 4.1 or later",
        ),
        (
            "name: t\nsteps: [{run: {workload: keyvalue, retry: often}}]",
            "--retry 'often'",
        ),
        (
            "name: t\nsteps: [{latency: {workload: keyvalue, rate: 10, speculative: p101}}]",
            "between 0 and 100",
        ),
        (
            "name: t\nsteps: [{run: {workload: keyvalue, tls-cert: c.pem, tls-key: k.pem}}]",
            "need --tls-ca",
        ),
        ("name: e\nsteps: [{probe: {env: 'a/../../x'}}]", "env"),
        // A name that would place results outside the home (a scenario file is passed around).
        (
            "name: ../../escaped\nsteps: [{probe: {}}]",
            "name '../../escaped': give 1-64 of",
        ),
        (
            "name: s\nsteps: [{probe: {}, name: ../up}]",
            "step 1: name '../up'",
        ),
        (
            "name: s\nsteps: [{latency: {workload: keyvalue, rate: 100, duration: '{x}'}}]",
            "given to of, rows, ops, rate, start-rate only",
        ),
        (
            "name: m\nsteps: [{capacity: {workload: stress, max-latency: 'read:p0:1ms'}}]",
            "percentile",
        ),
        (
            "name: f\nsteps: [{fill: {workload: stress, bytes: 0M}}]",
            "bytes: '0M'",
        ),
        (
            "name: p\ndeployments: ['p=nosuch']\nsteps: [{probe: {}}]",
            "deployments",
        ),
        (
            "name: d\nenv: lab\ndeployments: ['ec2=r5.xlarge,3']\nsteps: [{probe: {}}]",
            "deployments: 'ec2' names no environment of this scenario (its environments: lab)",
        ),
        (
            "name: v\nsteps:\n  - throughput: {workload: stress}\n  - latency: {workload: stress, rate: '{throughput.rate}'}",
            "a throughput step offers no 'rate'",
        ),
        (
            "name: k\nsteps:\n  - capacity: {workload: stress, start-concurrency: 4}\n  - latency: {workload: stress, rate: '{capacity.rate}'}",
            "'{capacity.rate}': 'capacity' is a closed-loop capacity search (start-concurrency), which has no rate: refer to '{capacity.capacity}'",
        ),
        (
            "name: w\nsteps:\n  - latency: {workload: stress, rows: '{fill.rows}', rate: 100}",
            "'{fill.rows}' names no earlier step",
        ),
        (
            "name: z\nenvironments: [{name: a}, {name: a}]\nsteps: [{probe: {}}]",
            "'a' is given twice",
        ),
        (
            "name: a\nsteps:\n  - latency: {workload: stress, rate: 100}\n    vary: {rat: [1, 2]}",
            "a latency step has no option 'rat'",
        ),
        (
            "name: a\nsteps:\n  - latency: {workload: stress}\n    vary: {rate: [100, fast]}",
            "fast",
        ),
        (
            "name: h\ncluster: {nodes: 1}\nhosts: [10.0.0.1]\nsteps: [{probe: {}}]",
            "give cluster or hosts, not both",
        ),
        (
            "name: kd\nsteps: [{latency: {workload: keyvalue, rate: 100, key-dist: 'zipf:0'}}]",
            "key-dist: 'zipf:0' is not a key distribution",
        ),
        (
            "name: v\nsteps: [{latency: {workload: keyvalue, rate: 100, verify: often}}]",
            "verify",
        ),
        (
            "name: nm\ncluster: {nodes: 1, heap: 256M, node-memory: 300M}\nsteps: [{probe: {}}]",
            "give at least 640M",
        ),
        // Scaling steps: every key of theirs, each bad value refused.
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: [2, 1], workload: stress, rf: 1}}]",
            "ascending",
        ),
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: 'one', workload: stress, rf: 1}}]",
            "nodes: ",
        ),
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: [0], workload: stress, rf: 1}}]",
            "at least 1 node",
        ),
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: [1, 2], workload: stress}}]",
            "needs rf",
        ),
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: [1, 2], workload: stress, rf: 2}}]",
            "smallest size is 1",
        ),
        (
            "name: s\nhosts: [10.0.0.1]\nsteps: [{scaling: {nodes: [1], workload: stress, rf: 1}}]",
            "scenario's local cluster",
        ),
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: [1], workload: stress, rf: 1, cluster: other}}]",
            "its own clusters",
        ),
        (
            "name: s\ncluster: {dcs: 'a:1,b:1', heap: 256M}\nsteps: [{scaling: {nodes: [1], workload: stress, rf: 1}}]",
            "one data centre",
        ),
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: [1], workload: stress, rf: 1, start-rate: 0}}]",
            "start-rate",
        ),
        (
            "name: s\ncluster: {heap: 256M}\nsteps: [{scaling: {nodes: [1, 500], workload: stress, rf: 1}}]",
            "the 500-node cluster",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (text, names)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.yaml"));
        std::fs::write(&f, text).unwrap();
        for dry in [true, false] {
            let mut cmd = cqlbench();
            cmd.env("CQLBENCH_CLUSTERS_DIR", dir.path().join("clusters"))
                .env("CQLBENCH_HOME", dir.path())
                .args(["scenario", f.to_str().unwrap(), "--dir"])
                .arg(dir.path().join("out"));
            if dry {
                cmd.arg("--dry-run");
            }
            let out = cmd.assert().failure();
            let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
            assert!(err.contains(names), "case {i} ({text}): {err}");
            assert_eq!(err.trim().lines().count(), 1, "case {i}: {err}");
            assert!(!err.contains("panicked"), "case {i}: {err}");
        }
        assert!(
            !dir.path().join("clusters").exists(),
            "case {i}: no cluster"
        );
        assert!(!dir.path().join("out").exists(), "case {i}: no results");
    }
}

/// `--set`, `--scale`, `--env` and `--hosts` through the real binary: what they change shows
/// in the dry run's plan, and a bad one is refused in one line naming it.
#[test]
fn command_line_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.yaml");
    std::fs::write(
        &f,
        "name: o
cluster: {nodes: 1, heap: 256M}
environments:
  - {name: big}
  - {name: small, cluster: {cpus-per-node: 1}}
scales:
  full: ['duration=30m', 'cluster.heap=1G']
steps:
  - throughput: {workload: stress, concurrency: 64, duration: 20s}
  - latency: {workload: stress, skip-rampup: true, duration: 10s}
    name: lat
    vary: {rate: [100, 200]}
",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let a = cqlbench()
            .env("CQLBENCH_CLUSTERS_DIR", dir.path().join("clusters"))
            .env("CQLBENCH_HOME", dir.path())
            .args(["scenario", f.to_str().unwrap(), "--dry-run", "--dir"])
            .arg(dir.path().join("out"))
            .args(extra)
            .output()
            .unwrap();
        (
            a.status.success(),
            String::from_utf8_lossy(&a.stdout).to_string(),
            String::from_utf8_lossy(&a.stderr).to_string(),
        )
    };
    let (ok, out, err) = run(&[]);
    assert!(ok, "{err}");
    assert!(out.contains("2 environment(s), 6 steps"), "{out}");
    assert!(
        out.contains("lat-rate-100") && out.contains("--rate 200"),
        "{out}"
    );
    let (ok, out, err) = run(&["--set", "duration=5s", "--set", "lat.rate=300"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("--duration 5s") && !out.contains("--duration 20s"),
        "{out}"
    );
    assert!(
        out.contains("--rate 300") && !out.contains("lat-rate-100"),
        "{out}"
    );
    let (ok, out, err) = run(&["--scale", "full", "--env", "small"]);
    assert!(ok, "{err}");
    assert!(out.contains("1 environment(s), 3 steps"), "{out}");
    assert!(out.contains("--duration 1800s"), "{out}");
    let (ok, out, err) = run(&["--env", "big", "--hosts", "10.0.0.1,10.0.0.2"]);
    assert!(ok, "{err}");
    assert!(out.contains("--hosts 10.0.0.1,10.0.0.2"), "{out}");
    assert!(!out.contains("--cluster"), "{out}");
    for (args, names) in [
        (&["--set", "duration"][..], "KEY=VALUE"),
        (
            &["--set", "concurency=8"],
            "no step of the scenario takes 'concurency'",
        ),
        (&["--set", "rate=fast"], "fast"),
        (&["--set", "nosuch.rate=5"], "no step is named 'nosuch'"),
        (&["--set", "repeat=0"], "1 or more"),
        (&["--set", "cluster.heap=lots"], "heap"),
        (&["--scale", "tiny"], "--scale tiny"),
        (&["--env", "medium"], "no such environment"),
        (
            &["--hosts", "10.0.0.1"],
            "choose the one these hosts are with --env",
        ),
        (
            &[
                "--env",
                "big",
                "--hosts",
                "10.0.0.1",
                "--set",
                "cluster.heap=1G",
            ],
            "no local cluster",
        ),
    ] {
        let (ok, _, err) = run(args);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(names), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!dir.path().join("clusters").exists());
    assert!(!dir.path().join("out").exists());
}

/// A probe step whose fio is missing stops a real run before any cluster is created (a dry
/// run does not need the tools).
#[test]
fn a_missing_tool_stops_the_run_before_the_cluster_starts() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nofio.yaml");
    std::fs::write(
        &f,
        "name: nofio\ncluster: {nodes: 1}\nsteps:\n  - probe: {quick: true, fio: /nonexistent/fio}\n",
    )
    .unwrap();
    let run = |dry: bool| {
        let mut cmd = cqlbench();
        cmd.env("CQLBENCH_CLUSTERS_DIR", dir.path().join("clusters"))
            .env("CQLBENCH_HOME", dir.path())
            .args(["scenario", f.to_str().unwrap(), "--dir"])
            .arg(dir.path().join("out"));
        if dry {
            cmd.arg("--dry-run");
        }
        cmd.output().unwrap()
    };
    assert!(run(true).status.success());
    let out = run(false);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success());
    assert!(
        err.contains("step 1 (probe)") && err.contains("fio not found at '/nonexistent/fio'"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        !dir.path().join("clusters").exists(),
        "no cluster was created"
    );
}

#[test]
fn shard_keys_are_not_scenario_step_keys() {
    // A step's shard options are each process's own (--shard, --run-id, --start-at): a step
    // naming them is refused as an unknown key before anything starts. `loaders: N` and
    // `barrier-timeout` are keys: the step starts the shard processes itself.
    for key in ["shard: 0/2", "run-id: r1", "start-at: 1795526000"] {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.yaml");
        std::fs::write(
            &f,
            format!(
                "name: bad\nhosts: [10.0.0.1]\nsteps:\n  - run: {{workload: keyvalue, {key}}}\n"
            ),
        )
        .unwrap();
        let out = cqlbench()
            .env("CQLBENCH_CLUSTERS_DIR", dir.path())
            .env("CQLBENCH_HOME", dir.path())
            .args(["scenario", f.to_str().unwrap(), "--dry-run", "--dir"])
            .arg(dir.path().join("out"))
            .assert()
            .failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        let name = key.split(':').next().unwrap();
        assert!(
            err.contains(&format!("unknown field `{name}`")),
            "{key}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// A mistyped key, step command or `--set` option is refused in one line naming the closest
/// known one; a flag too (clap's suggestions). A name far from every known one gets no guess.
#[test]
fn a_mistyped_name_gets_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |yaml: &str, extra: &[&str]| -> String {
        let f = dir.path().join("s.yaml");
        std::fs::write(&f, yaml).unwrap();
        let a = cqlbench()
            .args(["scenario", "--dry-run", f.to_str().unwrap()])
            .args(extra)
            .assert()
            .failure();
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    let step = "steps:\n  - run: {workload: keyvalue, duration: 5s}\n";
    let cases: Vec<(String, Vec<&str>, &str, &str)> = vec![
        (
            "name: x\nsteps:\n  - run: {workload: keyvalue, concurency: 4}\n".into(),
            vec![],
            "unknown field `concurency`",
            "concurrency",
        ),
        (
            format!("name: x\nclustr: {{nodes: 1}}\n{step}"),
            vec![],
            "unknown field `clustr`",
            "cluster",
        ),
        (
            "name: x\nsteps:\n  - runn: {workload: keyvalue}\n".into(),
            vec![],
            "'runn' is not a step command",
            "run",
        ),
        (
            format!("name: x\n{step}"),
            vec!["--set", "durtion=3s"],
            "no step of the scenario takes 'durtion'",
            "duration",
        ),
        (
            format!("name: x\n{step}"),
            vec!["--set", "run.ratee=3"],
            "a run step has no option 'ratee'",
            "rate",
        ),
    ];
    for (yaml, extra, want, meant) in cases {
        let err = refused(&yaml, &extra);
        assert!(err.contains(want), "{err}");
        assert!(
            err.trim_end()
                .ends_with(&format!("; did you mean `{meant}`?")),
            "{err}"
        );
    }
    // Nothing close: no guess.
    let err = refused(
        "name: x\nsteps:\n  - run: {workload: keyvalue, flux-capacitor: 4}\n",
        &[],
    );
    assert!(
        err.contains("unknown field `flux-capacitor`") && !err.contains("did you mean"),
        "{err}"
    );
    // A mistyped flag: clap names the one meant.
    let a = cqlbench()
        .args(["run", "keyvalue", "--concurency", "4"])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("a similar argument exists: '--concurrency'"),
        "{err}"
    );
    let a = cqlbench().args(["scenaro"]).assert().failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("a similar subcommand exists: 'scenario'"),
        "{err}"
    );
}

#[test]
fn a_scenario_refuses_a_busy_metrics_address_before_writing_anything() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ref002-laptop.yaml");
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("out");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let a = cqlbench()
        .env("CQLBENCH_HOME", home.path())
        .args(["scenario", file.to_str().unwrap(), "--dir"])
        .arg(&dir)
        .args(["--metrics-listen", &addr])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains(&format!("--metrics-listen {addr}: ")),
        "{err}"
    );
    assert!(!dir.exists(), "nothing is written: {}", dir.display());
    // Not an address: refused by the flag's parser.
    let a = cqlbench()
        .env("CQLBENCH_HOME", home.path())
        .args([
            "scenario",
            file.to_str().unwrap(),
            "--metrics-listen",
            "here",
        ])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("--metrics-listen"), "{err}");
    assert_ne!(a.get_output().status.code(), Some(101), "{err}");
    // A valid address with --dry-run: accepted (nothing listens, nothing runs).
    cqlbench()
        .env("CQLBENCH_HOME", home.path())
        .args(["scenario", file.to_str().unwrap(), "--dry-run"])
        .args(["--metrics-listen", "127.0.0.1:0"])
        .assert()
        .success();
}

/// `prometheus-server` and `prometheus-instance` are keys of run-like steps: valid values
/// make a valid plan whose command lines carry them.
#[test]
fn prometheus_server_and_instances_are_run_step_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.yaml");
    std::fs::write(
        &file,
        "name: p\nsteps:\n  - {throughput: {workload: keyvalue, hosts: 10.0.0.1, duration: 5s, prometheus-server: 'http://10.0.0.9:9090', prometheus-instance: [node1=10.0.0.1:9100, 'node2=exporter-2']}}\n",
    )
    .unwrap();
    let stdout = dry_run_valid(&file, dir.path());
    assert!(
        stdout.contains("--prometheus-server http://10.0.0.9:9090")
            && stdout.contains("--prometheus-instance node1=10.0.0.1:9100")
            && stdout.contains("--prometheus-instance node2=exporter-2"),
        "{stdout}"
    );
    // The server's credentials, token and CA: keys of the step and of `connection:`, their
    // files read by the dry run.
    let creds = dir.path().join("creds");
    std::fs::write(&creds, "u\np\n").unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "t0k\n").unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["prom".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, cert.pem()).unwrap();
    std::fs::write(
        &file,
        format!(
            "name: p\nconnection: {{prometheus-server: 'https://10.0.0.9:9090', prometheus-ca: {}}}\nsteps:\n  - {{throughput: {{workload: keyvalue, hosts: 10.0.0.1, duration: 5s, prometheus-credentials: {}}}}}\n  - {{throughput: {{workload: keyvalue, hosts: 10.0.0.1, duration: 5s, prometheus-token: {}}}}}\n",
            ca.display(),
            creds.display(),
            token.display()
        ),
    )
    .unwrap();
    let stdout = dry_run_valid(&file, dir.path());
    assert!(
        stdout.contains(&format!("--prometheus-credentials {}", creds.display()))
            && stdout.contains(&format!("--prometheus-token {}", token.display()))
            && stdout.contains(&format!("--prometheus-ca {}", ca.display())),
        "{stdout}"
    );
}

/// Two environments reached differently in one file (reference 000's columns): each its own
/// CA, client certificate, credentials and data centre, merged over the scenario's
/// `connection:`; the dry run reads every file and prints each environment's settings, and a
/// missing CA, a credentials file of one line or an unknown key is refused in one line naming
/// the environment.
#[test]
fn environments_give_their_own_connection_settings() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        cqlbench::tls::LocalCa::at(dir.path().join("a")),
        cqlbench::tls::LocalCa::at(dir.path().join("b")),
    );
    a.create(&["10.0.0.5".into()]).unwrap();
    b.create(&["10.1.0.5".into()]).unwrap();
    let creds = dir.path().join("creds");
    std::fs::write(&creds, "bench\nsecret\n").unwrap();
    let p = |x: std::path::PathBuf| x.to_str().unwrap().to_string();
    let text = format!(
        "name: two
connection: {{timeout: 2s, retry: 1}}
environments:
  - name: ec2
    hosts: [10.0.0.5]
    connection: {{dc: us-east, tls-ca: {}, tls-cert: {}, tls-key: {}, credentials-file: {}}}
  - name: eks
    hosts: [10.1.0.5]
    connection: {{dc: dc1, tls-ca: {}, address-map: '10.1.0.5=203.0.113.7:30042'}}
steps:
  - throughput: {{workload: keyvalue, duration: 5s, concurrency: 8}}
  - latency: {{workload: keyvalue, rate: 35%, of: '{{throughput@ec2}}', duration: 5s}}
",
        p(a.ca()),
        p(a.client_cert()),
        p(a.client_key()),
        p(creds.clone()),
        p(b.ca()),
    );
    let file = dir.path().join("two.yaml");
    std::fs::write(&file, &text).unwrap();
    let stdout = dry_run_valid(&file, &dir.path().join("out"));
    let (ec2, eks) = stdout.split_once("environment eks").unwrap();
    assert!(
        ec2.contains("connection: timeout=2s retry=1 dc=us-east")
            && ec2.contains(&format!("--tls-ca {}", p(a.ca())))
            && ec2.contains("--credentials-file")
            && ec2.contains("--retry 1"),
        "{ec2}"
    );
    assert!(
        eks.contains(&format!("--tls-ca {}", p(b.ca())))
            && eks.contains("--dc dc1")
            && eks.contains("--address-map 10.1.0.5:9042=203.0.113.7:30042")
            && !eks.contains("--credentials-file"),
        "{eks}"
    );
    let refused = |text: String, want: &str| {
        std::fs::write(&file, text).unwrap();
        let out = cqlbench()
            .args(["scenario", file.to_str().unwrap(), "--dry-run", "--dir"])
            .arg(dir.path().join("out"))
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(want), "{want}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    };
    refused(
        text.replace(&p(b.ca()), "/nonexistent/ca.pem"),
        "/nonexistent/ca.pem",
    );
    std::fs::write(&creds, "only-a-user\n").unwrap();
    refused(text.clone(), "expected two lines");
    std::fs::write(&creds, "bench\nsecret\n").unwrap();
    refused(
        text.replace("dc: dc1", "dcc: dc1"),
        "'dcc' is not a connection setting",
    );
    // The error names the environment at fault.
    refused(text.replace("dc: dc1", "dc: 'a:b'"), "eks");
}
