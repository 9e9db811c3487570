//! Scenarios against one real node, through the CLI: a fill whose result shows pending
//! compactions and disk writes rising; throughput then latency at 35% of it; a capacity search
//! that ends with a verdict naming the failing criterion; Ctrl-C mid-step keeping every
//! completed step, and --resume continuing the search; a matrix of two environments with
//! repeats, an axis, values between steps and an override, in one report; a scaling run on
//! clusters of 1 and 2 nodes, and a plan from it.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use cqlbench::result::capacity::{CapacityResult, CapacityStatus};
use cqlbench::result::{RunResult, RunStatus};

struct Env<'a> {
    clusters: &'a Path,
    home: &'a Path,
}

impl Env<'_> {
    fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_of(Path::new(env!("CARGO_BIN_EXE_cqlbench")), args)
    }

    fn cmd_of(&self, bin: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(bin);
        c.args(args)
            .env("CQLBENCH_CLUSTERS_DIR", self.clusters)
            .env("CQLBENCH_HOME", self.home);
        c
    }

    fn ok(&self, args: &[&str]) -> String {
        self.ok_of(Path::new(env!("CARGO_BIN_EXE_cqlbench")), args)
    }

    fn ok_of(&self, bin: &Path, args: &[&str]) -> String {
        let out = self.cmd_of(bin, args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "cqlbench {args:?} failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }
}

/// A scaling step: the same capacity search on a 1-node and a 2-node cluster made from the
/// scenario's cluster section, each destroyed after its search; the result's efficiency is its
/// per-node capacities' ratio, the report tabulates it, and `plan` prices from it.
#[test]
fn a_scaling_run_searches_each_size_on_a_cluster_of_its_own() {
    let _lock = cluster_lock();
    let home = tempfile::tempdir().unwrap();
    let clusters = home.path().join("clusters");
    let env = Env {
        clusters: &clusters,
        home: home.path(),
    };
    let file = home.path().join("sc.yaml");
    std::fs::write(
        &file,
        "name: sc\nenv: lab\ncluster: {name: sc, heap: 256M}\nsteps:\n  - scaling: {nodes: [1, 2], workload: keyvalue, rf: 1, consistency: ONE, rows: 2000, start-rate: 300, factor: 2, step: 6s, step-warmup: 2s, pending-after: 1s, max-steps: 2, max-latency: ['all:p99:2s'], quiet: true}\n",
    )
    .unwrap();
    let dir = home.path().join("out");
    let text = env.ok(&[
        "scenario",
        file.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(text.contains("Scaling — keyvalue on lab"), "{text}");
    let s = cqlbench::result::read_scaling(&dir.join("01-scaling.json")).unwrap();
    assert_eq!(s.status, CapacityStatus::Completed);
    assert_eq!(s.sizes, [1, 2]);
    let nodes: Vec<u32> = s.points.iter().map(|p| p.nodes).collect();
    assert_eq!(nodes, [1, 2]);
    for p in &s.points {
        let search = CapacityResult::read(&dir.join(&p.result)).unwrap();
        assert_eq!(search.env, format!("lab-n{}", p.nodes));
        assert_eq!(search.status, CapacityStatus::Completed);
        let cap = search.verdict.as_ref().unwrap().highest_passing_ops_per_s;
        assert_eq!(p.capacity_ops_per_s, cap, "{p:?}");
        // The search ran on a cluster of that size.
        let step = RunResult::read(&dir.join(&search.steps[0].result)).unwrap();
        let spec = step.fingerprint.cluster.expect("a local cluster's spec");
        assert_eq!(spec.node_count(), p.nodes as usize);
        assert_eq!(spec.name, format!("sc-n{}", p.nodes));
    }
    let (one, two) = (&s.points[0], &s.points[1]);
    let (c1, c2) = (
        one.capacity_ops_per_s.unwrap(),
        two.capacity_ops_per_s.unwrap(),
    );
    assert_eq!(one.efficiency, Some(1.0));
    let e = two.efficiency.unwrap();
    assert!((e - (c2 / 2.0) / c1).abs() < 1e-9, "{e} vs {c1}, {c2}");
    // Each size's cluster is gone, and the scenario's own was never made.
    let left: Vec<_> = std::fs::read_dir(&clusters)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.contains("Scaling — keyvalue on lab"));
    assert!(
        report.contains("lab-n2"),
        "each size's search is in the report"
    );
    let plan = env.ok(&[
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
        &format!("i3.2xlarge={}", dir.join("01-scaling.json").display()),
    ]);
    assert!(
        plan.contains("/ 2 nodes (scaling efficiency 1 nodes 100%, 2 nodes"),
        "{plan}"
    );
}

#[test]
fn scenarios_against_a_real_node() {
    // The DC is called as Cassandra's own default names it, not dc1: a run with --hosts must
    // find it by itself.
    let mut s = spec("scen", "datacenter1:1");
    // Small memtables flush often and slow compaction lets pending compactions build up.
    for (k, v) in [
        ("memtable_heap_space", "8MiB"),
        ("compaction_throughput", "4MiB/s"),
    ] {
        s.yaml_overrides
            .insert(k.into(), cqlbench::yaml::Value::String(v.into()));
    }
    let tc = TestCluster::create(s);
    tc.start();
    let home = tempfile::tempdir().unwrap();
    let env = Env {
        clusters: tc.root(),
        home: home.path(),
    };
    let dir = home.path();

    // `metrics check` on the local node: its exporter serves the load, pending compactions
    // and SSTables per read, its process its CPU (a share of the CPUs it has).
    let text = env.ok(&["metrics", "check", "--cluster", "scen", "--for", "capacity"]);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("node1"))
        .expect(&text);
    assert_eq!(row.matches('✓').count(), 4, "{text}");
    assert!(row.contains("process (/proc)"), "{row}");
    assert!(
        text.contains("fill target (the nodes' load): measurable"),
        "{text}"
    );

    // Fill: pending compactions and disk writes rise, and so does the node's load.
    let fill = dir.join("fill.json");
    let text = env.ok(&[
        "fill",
        "keyvalue",
        "--cluster",
        "scen",
        "--bytes",
        "16M",
        "--compaction-timeout",
        "90s",
        "--out",
        fill.to_str().unwrap(),
        "-q",
    ]);
    assert!(text.contains("compactions finished"), "{text}");
    let r = RunResult::read(&fill).unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    // The result says what the fill wrote (its workload's rows are its key space) and that
    // the node reached the target; the cluster's start-up time is recorded too.
    let f = r.fill.as_ref().expect("the fill's record");
    assert_eq!(f.rows_written, r.main_summary().unwrap().ok);
    assert!(
        f.rows_written > 1_000 && f.rows_written < r.workload.rows,
        "{f:?}"
    );
    assert!(f.reached && f.node_load_mib.unwrap() >= 16.0, "{f:?}");
    assert_eq!(f.target_mib, 16.0);
    let start = r
        .fingerprint
        .cluster_start
        .as_ref()
        .expect("the cluster's start");
    assert!(start.took_s > 1.0 && start.nodes == ["node1"], "{start:?}");
    let m = r.metrics.as_ref().expect("metrics series");
    assert!(m.samples.len() >= 3, "{} samples", m.samples.len());
    assert_eq!(m.nodes, ["node1"]);
    let pending: Vec<f64> = m
        .samples
        .iter()
        .filter_map(|s| s.nodes[0].pending_compactions)
        .collect();
    assert!(
        pending.iter().cloned().fold(0.0, f64::max) >= 1.0,
        "pending compactions never rose: {pending:?}"
    );
    let loads: Vec<f64> = m
        .samples
        .iter()
        .filter_map(|s| s.nodes[0].load_bytes)
        .collect();
    assert!(
        loads.last().unwrap() - loads.first().unwrap() > 10e6,
        "load did not grow: {loads:?}"
    );
    let written_mb: f64 = m
        .samples
        .iter()
        .filter_map(|s| s.host.as_ref())
        .flat_map(|h| h.devices.iter().map(|d| d.write_mb_s * m.interval_s))
        .sum();
    assert!(written_mb > 5.0, "disk writes: {written_mb} MB");
    assert!(
        m.samples
            .iter()
            .filter_map(|s| s.host.as_ref())
            .any(|h| h.node_cpu_cores[0].is_some_and(|c| c > 0.1)),
        "node CPU from /proc"
    );

    // The same fill again with --drop to a smaller target: judged after the drop (the node
    // already holds more than 8M of the table it drops), so it writes again.
    let refill = dir.join("refill.json");
    env.ok(&[
        "fill",
        "keyvalue",
        "--cluster",
        "scen",
        "--drop",
        "--bytes",
        "8M",
        "--compaction-timeout",
        "60s",
        "--out",
        refill.to_str().unwrap(),
        "-q",
    ]);
    let r = RunResult::read(&refill).unwrap();
    let rows = r.main_summary().map_or(0, |s| s.ok);
    eprintln!("refill with --drop: {rows} rows");
    assert!(rows > 1_000, "a dropping fill wrote {rows} rows");
    assert_eq!(r.fill.as_ref().map(|f| f.rows_written), Some(rows));

    // Throughput, then latency at 35% of it.
    let tp = dir.join("tp.json");
    env.ok(&[
        "throughput",
        "keyvalue",
        "--cluster",
        "scen",
        "--rows",
        "20000",
        "--concurrency",
        "64",
        "--duration",
        "4s",
        "--out",
        tp.to_str().unwrap(),
        "-q",
    ]);
    let tp_ops = RunResult::read(&tp)
        .unwrap()
        .main_summary()
        .unwrap()
        .ops_per_s;
    let lat = dir.join("lat.json");
    env.ok(&[
        "latency",
        "keyvalue",
        "--cluster",
        "scen",
        "--rows",
        "20000",
        "--skip-rampup",
        "--rate",
        "35%",
        "--of",
        tp.to_str().unwrap(),
        "--duration",
        "3s",
        "--out",
        lat.to_str().unwrap(),
        "-q",
    ]);
    let l = RunResult::read(&lat).unwrap();
    let target = l.main_summary().unwrap().target_rate_per_s.unwrap();
    assert!(
        (target - 0.35 * tp_ops).abs() < 1e-6 * tp_ops,
        "{target} vs {tp_ops}"
    );
    // No --threads: the closed loop ran on every core, the fixed rate without a rampup on
    // the threads its rate needs.
    let cores = std::thread::available_parallelism().unwrap().get();
    let threads = |r: &RunResult| r.main_phase().unwrap().load.threads;
    assert_eq!(threads(&RunResult::read(&tp).unwrap()), cores);
    assert_eq!(threads(&l), cqlbench::load::threads_for_rate(target, cores));

    // A capacity search to a verdict.
    let cap = dir.join("cap.json");
    let text = env.ok(&[
        "capacity",
        "keyvalue",
        "--cluster",
        "scen",
        "--rows",
        "20000",
        "--skip-rampup",
        "--start-rate",
        "1000",
        "--factor",
        "2.5",
        "--step",
        "4s",
        "--step-warmup",
        "1s",
        "--pending-after",
        "1s",
        "--settle-timeout",
        "20s",
        "--max-steps",
        "8",
        "-q",
        "--out",
        cap.to_str().unwrap(),
    ]);
    let c = CapacityResult::read(&cap).unwrap();
    assert_eq!(c.status, CapacityStatus::Completed, "{text}");
    let v = c.verdict.as_ref().unwrap();
    let failing = v.failing_rate_per_s.expect("a failing step within 8 steps");
    assert!(
        !v.failed.is_empty(),
        "the verdict names the failed criteria"
    );
    assert!(text.contains(&v.failed[0]), "{text}");
    // Each step's rate is the one the search rule gives after the steps before it: growth
    // until a failure, or (on a loaded host, where even 1,000 ops/s can fail) halving until
    // a step passes. The failing rate is the lowest failed step's.
    for k in 0..c.steps.len() {
        assert_eq!(
            Some(c.steps[k].target_rate_per_s),
            cqlbench::capacity::policy::next_rate(&c.spec, &c.steps[..k]),
            "step {}: {text}",
            k + 1
        );
    }
    assert_eq!(
        cqlbench::capacity::policy::next_rate(&c.spec, &c.steps),
        None,
        "{text}"
    );
    let lowest_failed = c
        .steps
        .iter()
        .filter(|s| !s.passed)
        .map(|s| s.target_rate_per_s)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(failing, lowest_failed, "{text}");
    if let Some(p) = v.highest_passing_rate_per_s {
        assert!(p < failing);
        assert!(c.steps.iter().any(|s| s.passed && s.target_rate_per_s == p));
    }
    for s in &c.steps {
        let step = RunResult::read(&dir.join(&s.result)).unwrap();
        assert!(step.metrics.is_some(), "step {} has metrics", s.index);
        assert_eq!(
            threads(&step),
            cqlbench::load::threads_for_rate(s.target_rate_per_s, cores),
            "step {}: its rate picks its threads",
            s.index
        );
        assert!(s.pending_after.is_some() && s.node_cpu.is_some());
        // Each step started once its node's CPU (read from /proc by PID) was at most the
        // default --settle-cpu of 30%, unless the settle ran to its 20 s timeout.
        let cpu = s.cpu_before.expect("the node's CPU read before the step");
        assert!(s.settle_s >= 20.0 || cpu <= 0.3, "step {}: {cpu}", s.index);
    }

    // Ctrl-C in step 3 keeps steps 1 and 2; --resume continues with step 3. The criteria
    // cannot fail by accident (only a 60 s p99 bound), so steps 1 and 2 pass on any machine,
    // and the test interrupts once the search has said that step 3 began.
    let cut = dir.join("cut.json");
    let cut_s = cut.to_str().unwrap().to_string();
    let args = [
        "capacity",
        "keyvalue",
        "--cluster",
        "scen",
        "--rows",
        "20000",
        "--skip-rampup",
        "--start-rate",
        "300",
        "--factor",
        "1.2",
        "--step",
        "3s",
        "--step-warmup",
        "1s",
        "--max-pending",
        "off",
        "--settle-timeout",
        "10s",
        "--max-latency",
        "all:p99:60s",
        "--max-node-cpu",
        "off",
        "--max-error-rate",
        "off",
        "--min-achieved",
        "off",
        "--max-steps",
        "3",
        "--threads",
        "2",
        "-q",
        "--out",
        &cut_s,
    ];
    let mut child = env
        .cmd(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The child's output, kept for the failure messages.
    let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (began_tx, began) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let out2 = output.clone();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if line.starts_with("━━ step 3:") {
                let _ = began_tx.send(());
            }
            let mut o = out2.lock().unwrap();
            o.push_str(&line);
            o.push('\n');
        }
    });
    if began.recv_timeout(Duration::from_secs(180)).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        let _ = reader.join();
        let mut err = String::new();
        use std::io::Read;
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("step 3 never began:\n{}\n{err}", output.lock().unwrap());
    }
    // SAFETY: plain kill(2) on our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let seen = output.lock().unwrap().clone();
    // What it measured is kept; the exit code says it was interrupted (128 + SIGINT).
    assert_eq!(
        status.code(),
        Some(130),
        "an interrupted search exits as interrupted:\n{seen}"
    );
    let c = CapacityResult::read(&cut).unwrap();
    assert_eq!(c.status, CapacityStatus::Interrupted, "{seen}");
    assert_eq!(
        c.steps.len(),
        2,
        "completed steps kept, the cut one not:\n{seen}"
    );
    assert!(c.steps.iter().all(|s| s.passed));
    let mut resumed = args.to_vec();
    resumed.push("--resume");
    env.ok(&resumed);
    let c = CapacityResult::read(&cut).unwrap();
    assert_eq!(c.status, CapacityStatus::Completed);
    assert_eq!(c.steps.len(), 3);
    assert!((c.steps[2].target_rate_per_s - 300.0 * 1.2 * 1.2).abs() < 1e-6);
    // Given threads are kept, however light the rate.
    for st in &c.steps {
        let step = RunResult::read(&dir.join(&st.result)).unwrap();
        assert_eq!(
            step.main_phase().unwrap().load.threads,
            2,
            "step {}",
            st.index
        );
    }
    let out = env.cmd(&resumed).output().unwrap();
    assert!(!out.status.success(), "a complete search does not resume");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to resume"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // Against --hosts without a metrics endpoint, the node's own virtual tables are read
    // through CQL: pending compactions are measured there (the criterion says from where);
    // node CPU has no virtual table, and the step and the verdict say it is unverified
    // instead of passing it. Without --dc or --rf the run reads the node's DC and creates the
    // keyspace there.
    let blind = dir.join("blind.json");
    let text = env.ok(&[
        "capacity",
        "keyvalue",
        "--hosts",
        "127.0.0.1",
        "--keyspace",
        "blind",
        "--drop",
        "--rows",
        "20000",
        "--start-rate",
        "200",
        "--step",
        "3s",
        "--step-warmup",
        "1s",
        "--pending-after",
        "1s",
        "--max-steps",
        "1",
        "--out",
        blind.to_str().unwrap(),
    ]);
    let c = CapacityResult::read(&blind).unwrap();
    let step = &c.steps[0];
    let run = RunResult::read(&dir.join(&step.result)).unwrap();
    assert_eq!(run.target.local_dc.as_deref(), Some("datacenter1"));
    assert_eq!(
        run.workload.replication,
        [("datacenter1".to_string(), 1)].into(),
        "{text}"
    );
    assert_eq!(step.summary.errors, 0, "{text}");
    let pending = step
        .checks
        .iter()
        .find(|k| k.criterion.starts_with("pending compactions"))
        .unwrap();
    assert!(
        pending.passed && pending.unverified.is_none() && pending.value.is_some(),
        "{pending:?}"
    );
    assert!(
        pending.criterion.contains("CQL") && pending.criterion.contains("thread_pools"),
        "{pending:?}"
    );
    let v = c.verdict.as_ref().unwrap();
    assert!(
        !v.unverified
            .iter()
            .any(|u| u.contains("pending compactions"))
            && v.unverified.iter().any(|u| u.contains("node CPU")),
        "{:?}",
        v.unverified
    );
    assert!(text.contains("unverified: step 1: node CPU"), "{text}");
    assert!(
        text.contains("the metric sources do not give node CPU"),
        "warned before the first step: {text}"
    );
    // The step's series came through CQL, and says so.
    let series = run.metrics.as_ref().expect("the step's series");
    assert_eq!(
        series.dialects,
        vec![Some(cqlbench::metrics::cql::DIALECT.to_string())],
        "{series:?}"
    );
    assert!(
        series
            .samples
            .iter()
            .any(|s| s.nodes.first().is_some_and(|n| n.load_bytes.is_some())),
        "the node's load sampled through CQL"
    );
    // The achieved rate compares the window's schedule (200 ops/s for 2 s) with what was
    // sent of it; the drain is apart.
    assert_eq!(step.summary.scheduled_ops, Some(400), "{text}");
    assert!(step.summary.sent_on_schedule.is_some_and(|n| n <= 400));
    assert!(step.summary.drain_s >= 0.0 && (step.summary.measured_s - 2.0).abs() < 1e-9);

    through_cql(&env, dir);
    matrix(&env, dir);
    loaders_step(&env, dir);
    tc.finish();
}

/// The node reached by its contact point only (no exporter given): `metrics check` finds its
/// load and pending compactions in its virtual tables, and a fill stops at its target read
/// from `system_views.disk_usage`, which at rest agrees with the node's own Storage Load metric
/// (its JMX exporter, read beside it) within about a MiB per table, never lower.
fn through_cql(env: &Env, dir: &Path) {
    let text = env.ok(&["metrics", "check", "--hosts", "127.0.0.1", "--for", "fill"]);
    let row = text
        .lines()
        .find(|l| l.contains("127.0.0.1:9042 (CQL)"))
        .expect(&text);
    assert_eq!(row.matches("✓ CQL (system_views)").count(), 2, "{row}");
    assert!(
        text.contains("fill target (the nodes' load): measurable"),
        "{text}"
    );
    // The node's load now, by its exporter: the fill's target is 8 MiB above it (the other
    // keyspaces' data counts in the node's load).
    let check: serde_json::Value =
        serde_json::from_str(&env.ok(&["metrics", "check", "--cluster", "scen", "--json"]))
            .unwrap();
    let exporter =
        cqlbench::metrics::sampler::Endpoint::parse(check["nodes"][0]["source"].as_str().unwrap())
            .unwrap();
    let jmx_load = || {
        cqlbench::metrics::scrape::scrape_node(&exporter, std::time::Duration::from_secs(5))
            .unwrap()
            .load_bytes
            .unwrap()
    };
    let before = jmx_load() / 1048576.0;
    let target = format!("{}M", before.ceil() as u64 + 8);
    let out = dir.join("cql-fill.json");
    let text = env.ok(&[
        "fill",
        "keyvalue",
        "--hosts",
        "127.0.0.1",
        // A new keyspace, not dropped: the fill judges the load from its first reading. (With
        // --drop it waits for a reading below the target first, and a compaction of the other
        // keyspaces, which disk_usage counts twice while it runs, once kept every reading above
        // it: the fill wrote on to --duration.)
        "--keyspace",
        "cqlfill",
        "--value-size",
        "1000",
        "--bytes",
        &target,
        "--compaction-timeout",
        "30s",
        "--duration",
        "3m",
        "--out",
        out.to_str().unwrap(),
    ]);
    let r = RunResult::read(&out).unwrap();
    let fill = r.fill.as_ref().expect("a fill record");
    assert!(fill.reached, "{text}");
    let cql = fill.node_load_mib.unwrap();
    assert!(
        cql >= before + 8.0,
        "{cql} MiB reached from {before} MiB: {text}"
    );
    // At rest (the fill waited for its compactions), the node's load both ways at once: the
    // virtual table rounds each table up to a whole MiB and, during a compaction, counts its
    // output too (the fill's last reading above may have been taken then: 38 MiB by CQL against
    // 29 MiB by JMX once in CI), so it may only read higher, by about a MiB per table.
    let connect = cqlbench::load::session::ConnectSpec {
        hosts: vec!["127.0.0.1".into()],
        local_dc: None,
        timeout: std::time::Duration::from_secs(10),
        credentials: None,
        client: Default::default(),
    };
    let plan = cqlbench::metrics::sampler::MetricsPlan {
        through_cql: true,
        ..Default::default()
    };
    let plan = cqlbench::load::server_views::attach(&plan, &connect).unwrap();
    let cql_now = cqlbench::metrics::scrape::scrape_all(&plan, std::time::Duration::from_secs(10))
        [0]
    .as_ref()
    .unwrap()
    .load_bytes
    .unwrap()
        / 1048576.0;
    let jmx = jmx_load() / 1048576.0;
    assert!(
        cql_now >= jmx - 1.0 && cql_now <= jmx + 12.0,
        "at rest: CQL {cql_now} MiB, JMX {jmx} MiB (the fill's last CQL reading {cql} MiB)"
    );
    let series = r.metrics.as_ref().unwrap();
    assert_eq!(
        series.dialects,
        vec![Some(cqlbench::metrics::cql::DIALECT.to_string())]
    );
}

/// A scenario step with `loaders: 2`: two loader processes meet at the barrier, their results
/// are merged into the step's result (histograms added), and the report reads it as one run.
fn loaders_step(env: &Env, dir: &Path) {
    let file = dir.join("loaders.yaml");
    std::fs::write(
        &file,
        "name: loaders
env: two
hosts: [127.0.0.1]
steps:
  - run: {workload: keyvalue, keyspace: loaders, rows: 2000, rate: 400, duration: 6s, warmup: 1s, loaders: 2}
",
    )
    .unwrap();
    let out = dir.join("loaders");
    let text = env.ok(&[
        "scenario",
        file.to_str().unwrap(),
        "--dir",
        out.to_str().unwrap(),
    ]);
    assert!(text.contains("loaders: 2 processes of run"), "{text}");
    let merged = RunResult::read(&out.join("01-run.json")).unwrap();
    assert_eq!(merged.status, RunStatus::Completed, "{text}");
    let m = merged.merged.as_ref().expect("a merged result");
    assert_eq!(m.shards.len(), 2);
    for i in 0..2 {
        let shard = RunResult::read(&out.join(format!("01-run.shard-{i}.json"))).unwrap();
        assert_eq!(shard.shard.as_ref().unwrap().index, i as u64, "{text}");
    }
    // 400 ops/s in all: each shard drove half of it, and the merged throughput is their sum.
    let s = merged.main_summary().unwrap();
    assert_eq!(s.target_rate_per_s, Some(400.0), "{text}");
    assert!(
        (s.ops_per_s - 400.0).abs() < 40.0,
        "{} ops/s\n{text}",
        s.ops_per_s
    );
    // The scenario's report has the merged run as the one run of environment `two`.
    let report = std::fs::read_to_string(out.join("report.txt")).unwrap();
    assert!(report.contains("two"), "{report}");
    let r = env.ok(&["report", out.join("01-run.json").to_str().unwrap()]);
    assert!(r.contains("Shards") || r.contains("shard"), "{r}");
}

/// A matrix on the node: two environments (labels on the same hosts), a repeated throughput
/// step, every environment's latency at 35% of the first one's best run, a rate axis, an
/// override from the command line; one report with the environments as columns; a resume
/// that reruns nothing.
fn matrix(env: &Env, dir: &Path) {
    let file = dir.join("matrix.yaml");
    std::fs::write(
        &file,
        "name: matrix
environments:
  - {name: first, hosts: [127.0.0.1]}
  - {name: second, hosts: 127.0.0.1}
steps:
  - throughput: {workload: keyvalue, keyspace: matrix, rows: 2000, drop: true, concurrency: 16, duration: 20s, warmup: 1s}
    repeat: 2
  - latency: {workload: keyvalue, keyspace: matrix, rows: 2000, skip-rampup: true, rate: 35%, of: '{throughput@first}', duration: 20s, warmup: 1s}
    name: share
  - latency: {workload: keyvalue, keyspace: matrix, rows: 2000, skip-rampup: true, duration: 20s, warmup: 1s}
    name: at
    vary: {rate: [100, 200]}
",
    )
    .unwrap();
    let out = dir.join("matrix");
    let args = [
        "scenario",
        file.to_str().unwrap(),
        "--dir",
        out.to_str().unwrap(),
        "--set",
        "duration=3s",
    ];
    let text = env.ok(&args);
    assert!(text.contains("2 environment(s), 10 steps"), "{text}");
    for e in ["first", "second"] {
        for f in [
            "01-throughput-r1.json",
            "01-throughput-r2.json",
            "02-share.json",
            "03-at-rate-100.json",
            "03-at-rate-200.json",
        ] {
            let r = RunResult::read(&out.join(e).join(f)).unwrap();
            assert_eq!(r.status, RunStatus::Completed, "{e}/{f}\n{text}");
            assert_eq!(r.env, e);
            assert_eq!(r.main_summary().unwrap().errors, 0, "{e}/{f}\n{text}");
            let main = r.phases.iter().rev().find(|p| p.name == "main").unwrap();
            // --set duration=3s reached every step.
            assert_eq!(
                main.load.duration(),
                Some(Duration::from_secs(3)),
                "{e}/{f}"
            );
        }
    }
    // Both environments ran at 35% of the first one's best throughput run.
    let best = ["01-throughput-r1.json", "01-throughput-r2.json"]
        .iter()
        .map(|f| RunResult::read(&out.join("first").join(f)).unwrap())
        .map(|r| r.main_summary().unwrap().ops_per_s)
        .fold(0.0, f64::max);
    for e in ["first", "second"] {
        let r = RunResult::read(&out.join(e).join("02-share.json")).unwrap();
        let share = r.rate_share.as_ref().expect("the share is recorded");
        assert_eq!(share.share, 0.35);
        assert!(
            (share.of_ops_per_s - best).abs() < 1e-6,
            "{share:?} vs {best}"
        );
        let main = r.phases.iter().rev().find(|p| p.name == "main").unwrap();
        let cqlbench::spec::LoadMode::Open { rate_per_s, .. } = main.load.mode else {
            panic!("open loop")
        };
        assert!(
            (rate_per_s - 0.35 * best).abs() < 1e-6,
            "{rate_per_s} vs {best}"
        );
    }
    // One report: the environments as columns of one scenario at 35%, and of one table of
    // p99 by rate with the axis as rows.
    let report = std::fs::read_to_string(out.join("report.txt")).unwrap();
    assert!(
        report.contains("open loop, 35% of the measured throughput"),
        "{report}"
    );
    let table = report
        .split("Response time p99 (ms) by rate")
        .nth(1)
        .unwrap_or_else(|| panic!("no table by rate:\n{report}"));
    let lines: Vec<&str> = table.lines().take(8).collect();
    let header = lines.iter().find(|l| l.contains("target ops/s")).unwrap();
    assert!(
        header.contains("first") && header.contains("second"),
        "{table}"
    );
    assert!(
        lines.iter().any(|l| l.trim_start().starts_with("100")),
        "{table}"
    );
    assert!(
        lines.iter().any(|l| l.trim_start().starts_with("200")),
        "{table}"
    );
    let timing: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("timing.json")).unwrap()).unwrap();
    assert!(timing["estimate_s"].as_f64().unwrap() > 0.0);
    assert!(timing["actual_s"].as_f64().unwrap() > 0.0);

    // Resuming a finished matrix reruns nothing.
    let before = std::fs::metadata(out.join("second/03-at-rate-200.json"))
        .unwrap()
        .modified()
        .unwrap();
    let mut resumed = args.to_vec();
    resumed.push("--resume");
    let text = env.ok(&resumed);
    assert_eq!(text.matches("done before, kept").count(), 10, "{text}");
    let after = std::fs::metadata(out.join("second/03-at-rate-200.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

/// The README's main job (`cqlbench quickstart`), on one node and by the quickstart's own
/// binary (without the `k8s` and `tls` features): the smoke check, the probe, both load tests
/// and the report, which comes before the cluster is stopped; the cluster is stopped at the end
/// and every step's result is complete.
#[test]
fn the_quickstart_reports_before_it_stops_its_cluster() {
    let _lock = cluster_lock();
    let home = tempfile::tempdir().unwrap();
    let clusters = home.path().join("clusters");
    let env = Env {
        clusters: &clusters,
        home: home.path(),
    };
    let dir = home.path().join("qs-out");
    let text = env.ok_of(
        &quickstart_bin(),
        &[
            "quickstart",
            "--name",
            "qs",
            "--nodes",
            "1",
            "--rows",
            "50",
            "--results",
            dir.to_str().unwrap(),
        ],
    );
    // The smoke check wrote and read back every row, several in flight.
    assert!(
        text.contains("smoke check: 50 rows at RF 1, 16 in flight")
            && text.contains("0 mismatches"),
        "{text}"
    );
    let report_at = text.find("━━ report: ").expect("a report line");
    let stop_at = text.find("━━ stopping cluster qs").expect("a stop line");
    assert!(
        report_at < stop_at,
        "the report came after the stop:\n{text}"
    );
    for f in ["report.txt", "report.html", "timing.json"] {
        assert!(dir.join(f).is_file(), "{f} missing:\n{text}");
    }
    let report = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    assert!(report.contains("quickstart"), "{report}");
    // Both load tests completed, the latency test at 35% of the throughput test's rate.
    let runs: Vec<RunResult> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("timing.json"))
        .filter_map(|p| RunResult::read(&p).ok())
        .collect();
    assert_eq!(runs.len(), 2, "{text}");
    assert!(runs.iter().all(|r| r.status == RunStatus::Completed));
    // The cluster is stopped: no JVM of it is left.
    let c = cqlbench::cluster::Cluster::open(&clusters, "qs").unwrap();
    assert!(c.running_addresses().is_empty(), "{text}");
    let conf = c
        .node_dirs(&c.nodes()[0])
        .conf
        .to_string_lossy()
        .to_string();
    assert!(!any_process_with(&conf), "a JVM of qs survived");
    c.destroy().unwrap();
}
