//! The load engine against one real Cassandra node: coordinated omission made visible by a
//! paused node, data that is a function of the cycle, results that survive Ctrl-C, and
//! one-line errors for bad input.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::daemon::{Daemon, Reap, free_port};
use common::*;
use cqlbench::load::session::ConnectSpec;
use cqlbench::load::{RunPlan, run};
use cqlbench::result::{RunResult, RunStatus, TargetRecord};
use cqlbench::spec::{Cycles, LoadMode, LoadSpec, OpKind, Stop, WorkloadKind, WorkloadSpec};

fn plan(out: &std::path::Path, workload: WorkloadSpec, main: LoadSpec, rampup: bool) -> RunPlan {
    let rampup = rampup.then(|| LoadSpec {
        mode: LoadMode::Closed { concurrency: 32 },
        stop: Stop::Ops {
            count: workload.rows,
        },
        warmup_s: 0.0,
        cycles: Cycles {
            start: 0,
            end: workload.rows,
        },
        ..main.clone()
    });
    RunPlan {
        env: "test".into(),
        workload,
        rampup,
        main,
        connect: ConnectSpec {
            hosts: vec!["127.0.0.1".into()],
            local_dc: Some("dc1".into()),
            timeout: Duration::from_secs(10),
            credentials: None,
            client: Default::default(),
        },
        target: TargetRecord {
            hosts: vec!["127.0.0.1".into()],
            local_dc: Some("dc1".into()),
            cluster: None,
            netns: None,
            reach: None,
        },
        cluster: None,
        cluster_start: None,
        drop_keyspace: true,
        out: out.to_path_buf(),
        metrics: Default::default(),
        local_rf: None,
        rate_share: None,
        sequential_main: false,
        until: None,
        faults: Vec::new(),
        nodes: None,
        end_on_node_death: false,
        shard: None,
        probe: None,
        tags: Vec::new(),
        threads_by_rate: false,
    }
}

fn load(mode: LoadMode, stop: Stop) -> LoadSpec {
    LoadSpec {
        mode,
        stop,
        warmup_s: 0.0,
        threads: 2,
        timeout_s: 10.0,
        max_errors: 0,
        cycles: Cycles {
            start: 0,
            end: u64::MAX,
        },
        share: Default::default(),
        send_window_s: 0.0,
    }
}

fn cqlbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("cqlbench").unwrap()
}

/// `cqlbench run WORKLOAD` against the test node (RF 1 in dc1), its home under `home`.
fn run_on_the_node(home: &std::path::Path, workload: &str) -> assert_cmd::Command {
    let mut c = cqlbench();
    c.env("CQLBENCH_HOME", home)
        .args(["run", workload, "--hosts", "127.0.0.1", "--dc", "dc1"])
        .args(["--rf", "1"]);
    c
}

#[test]
fn load_engine_against_a_real_node() {
    let tc = TestCluster::create(spec("load", "dc1:1"));
    tc.start();
    let dir = tempfile::tempdir().unwrap();

    data_is_a_function_of_the_cycle_and_results_are_complete(&tc, dir.path());
    a_paused_node_shows_in_response_time_not_in_service_time(&tc, dir.path());
    requests_past_the_timeout_fail_as_client_timeouts(&tc, dir.path());
    ctrl_c_leaves_a_valid_result_of_what_was_measured(dir.path());
    a_client_killed_mid_run_leaves_a_ledger_verify_reads(dir.path());
    shards_of_one_run_start_together_and_merge_into_one(dir.path());
    zipf_keys_show_their_skew_in_the_servers_partition_counts(&tc, dir.path());
    live_metrics_feed_the_shipped_dashboard_through_a_real_prometheus(&tc, dir.path());
    a_nodes_series_fetched_from_prometheus_match_the_runs_own_scrapes(&tc, dir.path());
    reference_shapes_write_the_articles_rows_and_verify(&tc, dir.path());
    profile_rows_round_trip_through_a_real_node(&tc);
    profiles_run_through_the_binary_without_errors(&tc, dir.path());
    verify_reports_rows_changed_behind_the_tools_back(&tc, dir.path());
    keyvalue_deletes_lwts_batches_and_counters(&tc, dir.path());
    a_send_window_holds_each_send_that_long_after_it_is_due(dir.path());
    a_slow_recording_does_not_hold_one_threads_sends(dir.path());
    bad_input_gets_one_line_errors(dir.path());

    tc.finish();
}

fn data_is_a_function_of_the_cycle_and_results_are_complete(
    tc: &TestCluster,
    dir: &std::path::Path,
) {
    let out = dir.join("kv.json");
    let mut w = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
    w.rows = 2000;
    w.value_size = 16;
    w.replication = [("dc1".to_string(), 1)].into();
    let p = plan(
        &out,
        w,
        load(
            LoadMode::Closed { concurrency: 16 },
            Stop::Ops { count: 3000 },
        ),
        true,
    );
    let r = run(&p, Arc::new(AtomicBool::new(false)), &mut |_| {}).expect("run");
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(
        r.phases.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        vec!["rampup", "main"]
    );
    let rampup = r.phases[0].summary.as_ref().unwrap();
    assert_eq!(rampup.ok, 2000, "rampup writes every row once");
    let main = r.main_summary().unwrap();
    assert_eq!(main.ok + main.errors, 3000);
    assert_eq!(main.errors, 0);
    // A closed loop has no schedule to be late against: no send lag.
    assert!(main.send_lag.is_none() && main.send_lag_histogram_ns.is_none());
    let reads = main.by_op[&OpKind::Read].ok;
    assert!(
        (1200..1800).contains(&reads),
        "50/50 mix gave {reads} reads of 3000"
    );
    assert!(
        r.fingerprint
            .cassandra_version
            .as_deref()
            .unwrap_or("")
            .starts_with("5.0")
    );
    // The node's settings are recorded (system_views.settings).
    let settings = &r.fingerprint.server_settings;
    assert!(
        settings
            .get("concurrent_reads")
            .is_some_and(|v| v.parse::<u32>().is_ok_and(|n| n > 0)),
        "{} settings recorded: {:?}",
        settings.len(),
        settings.get("concurrent_reads")
    );
    // The node's own view of the main phase (system_views.coordinator_*_latency), beside the
    // client's: the one node coordinated every read and write of it.
    let coordinated = |op: &str| {
        let rows = r
            .server_latency
            .iter()
            .filter(|s| s.op == op && s.table == "kv");
        rows.map(|s| s.ops).sum::<u64>()
    };
    eprintln!("server latency: {:?}", r.server_latency);
    assert_eq!(coordinated("read"), reads, "{:?}", r.server_latency);
    assert_eq!(
        coordinated("write"),
        main.ok - reads,
        "{:?}",
        r.server_latency
    );
    // As served, in whole milliseconds (the tables' step): on loopback the p50 is below half
    // of one and reads 0, so only the order of the percentiles and the step are checked.
    for s in r.server_latency.iter().filter(|s| s.ops > 0) {
        assert!(
            s.p50_ms >= 0.0
                && s.p99_ms >= s.p50_ms
                && s.max_ms >= s.p99_ms
                && s.resolution_ms == 1.0
                && s.p99_ms.fract() == 0.0,
            "{s:?}"
        );
    }
    // The file on disk is the same, complete result, and its histograms decode.
    let back = RunResult::read(&out).unwrap();
    assert!(
        back == r,
        "the result file differs from the returned result"
    );
    let h = cqlbench::stats::decode(&main.all.response_histogram_ns).unwrap();
    assert_eq!(h.len(), main.ok);
    // The HDR interval log has the main phase's histograms, tagged, adding up to the ops.
    let log = cqlbench::result::hlog::read(&out.with_extension("hlog")).unwrap();
    let logged: u64 = log
        .iter()
        .filter(|e| e.0 == "main/read/response" || e.0 == "main/write/response")
        .map(|e| e.3.len())
        .sum();
    assert_eq!(logged, main.ok);
    // The per-interval CSV beside it: one `all` row per interval, whose ok add up to the
    // intervals' (the drain's included), and one row per kind with its percentiles.
    let mut csv = csv::Reader::from_path(cqlbench::result::intervals_csv::path_for(&out)).unwrap();
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    let main_phase = r.phases.iter().find(|p| p.name == "main").unwrap();
    let all: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|row| &row[0] == "main" && &row[6] == "all")
        .collect();
    assert_eq!(all.len(), main_phase.intervals.len());
    let csv_ok: u64 = all.iter().map(|row| row[7].parse::<u64>().unwrap()).sum();
    let json_ok: u64 = main_phase.intervals.iter().map(|i| i.ok).sum();
    assert_eq!(csv_ok, json_ok);
    assert!(
        rows.iter()
            .any(|row| &row[0] == "main" && &row[6] == "read" && row[11].parse::<f64>().is_ok())
    );

    // Row k holds exactly the bytes the workload derives from k.
    let rt = runtime();
    rt.block_on(async {
        let s = session(tc.c()).await;
        for k in [0i64, 1, 999, 1999] {
            let row = s
                .query_unpaged("SELECT value FROM cqlbench.kv WHERE key = ?", (k,))
                .await
                .unwrap()
                .into_rows_result()
                .unwrap()
                .maybe_first_row::<(Vec<u8>,)>()
                .unwrap()
                .expect("rampup wrote the row");
            let mut expected = vec![0u8; 16];
            cqlbench::workload::data::fill(k as u64, &mut expected);
            assert_eq!(row.0, expected, "row {k}");
        }
    });
}

fn a_paused_node_shows_in_response_time_not_in_service_time(
    tc: &TestCluster,
    dir: &std::path::Path,
) {
    let out = dir.join("co.json");
    let mut w = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
    w.rows = 1000;
    w.replication = [("dc1".to_string(), 1)].into();
    // 1,000 ops/s with at most 4 in flight: while the node is frozen only 4 requests wait on
    // it (service time), the rest wait in the client (response time from the intended start).
    let main = load(
        LoadMode::Open {
            rate_per_s: 1000.0,
            max_in_flight: 4,
        },
        Stop::Duration { secs: 10.0 },
    );
    let p = plan(&out, w, main, true);
    let (pauser, mut observe) = freeze_during_main(tc, 4.0, 2.0);
    let r = run(&p, Arc::new(AtomicBool::new(false)), &mut observe).expect("run");
    pauser.join().unwrap();
    let s = r.main_summary().unwrap();
    eprintln!(
        "paused node: response p99.9 {:.1} ms, service p99.9 {:.1} ms, achieved {:.3}, ops {}",
        s.all.response.p999_ms,
        s.all.service.p999_ms,
        s.achieved_ratio.unwrap(),
        s.ok
    );
    // A write the node had accepted just before the freeze can outlive the node's own 2 s
    // write_request_timeout (the frozen time counts against it) and come back as a server
    // write timeout: at most the 4 requests that were in flight, and nothing else.
    assert!(
        s.errors <= 4
            && s.errors_by_kind
                .keys()
                .all(|k| *k == cqlbench::stats::ErrorKind::WriteTimeout),
        "errors by kind: {:?}",
        s.errors_by_kind
    );
    assert!(
        s.all.response.p999_ms >= 1500.0,
        "response p99.9 {} ms hides the 2 s pause",
        s.all.response.p999_ms
    );
    assert!(
        s.all.service.p999_ms < 1000.0 && s.all.service.p999_ms < s.all.response.p999_ms / 2.0,
        "service p99.9 {} ms should stay below response p99.9 {} ms",
        s.all.service.p999_ms,
        s.all.response.p999_ms
    );
    assert!(
        s.max_backlog > 100,
        "the backlog during the pause was not recorded: {}",
        s.max_backlog
    );
    // Nothing was dropped: every intended operation ran.
    assert!(
        (9_800..=10_000).contains(&(s.ok + s.errors)),
        "{} ops of 10,000 intended",
        s.ok + s.errors
    );
    // The wait in the client is the send lag: every operation's, recorded; its tail holds
    // the pause as the response time's does, its median stays under the response time's,
    // and its maximum is the one the intervals saw.
    let lag = s.send_lag.expect("an open loop records its send lag");
    eprintln!(
        "paused node: send lag p50 {:.3} ms, p99.9 {:.1} ms, max {:.1} ms",
        lag.p50_ms, lag.p999_ms, lag.max_ms
    );
    assert_eq!(lag.count, s.ok + s.errors);
    assert!(lag.p999_ms >= 1000.0, "send lag p99.9 {} ms", lag.p999_ms);
    assert!(lag.p50_ms <= s.all.response.p50_ms, "{lag:?}");
    assert!(
        (lag.max_ms - s.max_send_lag_ms).abs() <= 0.01 * s.max_send_lag_ms,
        "{} vs {}",
        lag.max_ms,
        s.max_send_lag_ms
    );
    let h = cqlbench::stats::decode(s.send_lag_histogram_ns.as_ref().unwrap()).unwrap();
    assert_eq!(h.len(), lag.count);
    // Per interval too: the intervals of the pause have a send-lag p99 of a second or more.
    let main = r.phases.iter().find(|p| p.name == "main").unwrap();
    assert!(
        main.intervals.iter().any(|i| i.send_lag_p99_ms >= 500.0),
        "{:?}",
        main.intervals
            .iter()
            .map(|i| i.send_lag_p99_ms)
            .collect::<Vec<_>>()
    );
}

/// Freezes node 1 for `for_s` seconds, `after_s` seconds into the main phase (timed from the
/// phase's start, which a loaded host can delay by seconds of connecting and rampup): the
/// pausing thread, and the observer to hand `run`.
fn freeze_during_main(
    tc: &TestCluster,
    after_s: f64,
    for_s: f64,
) -> (
    std::thread::JoinHandle<()>,
    impl FnMut(cqlbench::load::Event<'_>),
) {
    let c = tc.c().clone();
    let (main_started, started) = std::sync::mpsc::channel::<()>();
    let pauser = std::thread::spawn(move || {
        started
            .recv_timeout(Duration::from_secs(300))
            .expect("the main phase started");
        std::thread::sleep(Duration::from_secs_f64(after_s));
        c.pause(1).unwrap();
        std::thread::sleep(Duration::from_secs_f64(for_s));
        c.resume(1).unwrap();
    });
    let observe = move |e: cqlbench::load::Event<'_>| {
        if let cqlbench::load::Event::PhaseStarted { name: "main", .. } = e {
            let _ = main_started.send(());
        }
    };
    (pauser, observe)
}

/// The executor enforces `--timeout` itself (the driver's per-request timer is off for the
/// workload's statements): requests to a frozen node fail as client timeouts about one
/// timeout after they were sent, and the run goes on once the node is back.
fn requests_past_the_timeout_fail_as_client_timeouts(tc: &TestCluster, dir: &std::path::Path) {
    let out = dir.join("timeout.json");
    let mut w = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
    w.rows = 1000;
    w.replication = [("dc1".to_string(), 1)].into();
    let mut main = load(
        LoadMode::Closed { concurrency: 4 },
        Stop::Duration { secs: 8.0 },
    );
    main.timeout_s = 0.5;
    let p = plan(&out, w, main, true);
    // 1.6 s: every request sent during the freeze times out on the client (0.5 s) before the
    // node's own 2 s write timeout could answer for it.
    let (pauser, mut observe) = freeze_during_main(tc, 2.0, 1.6);
    let r = run(&p, Arc::new(AtomicBool::new(false)), &mut observe).expect("run");
    pauser.join().unwrap();
    let phase = r.phases.iter().find(|p| p.name == "main").unwrap();
    let s = phase.summary.as_ref().unwrap();
    let timeouts = s
        .errors_by_kind
        .get(&cqlbench::stats::ErrorKind::ClientTimeout)
        .copied()
        .unwrap_or(0);
    eprintln!(
        "timeout: {} ok, errors {:?}, {} intervals",
        s.ok,
        s.errors_by_kind,
        phase.intervals.len()
    );
    // 4 slots, each failing once per 0.5 s (+ up to one 50 ms tick) of a 1.6 s freeze: 2 to 3
    // rounds of 4 (seen: 8 and 12), a 4th for requests sent just before the freeze. Without the
    // executor's deadline there would be none: the freeze is shorter than the node's own
    // 2 s write timeout and the driver's timer is off.
    assert!(
        (4..=16).contains(&timeouts),
        "client timeouts {timeouts} of a 1.6 s freeze with a 0.5 s timeout and 4 slots"
    );
    assert_eq!(
        s.errors, timeouts,
        "only client timeouts: {:?}",
        s.errors_by_kind
    );
    // Work resumed after the freeze: the last intervals hold successful operations.
    let tail_ok: u64 = phase.intervals[phase.intervals.len() - 2..]
        .iter()
        .map(|i| i.ok)
        .sum();
    assert!(
        tail_ok > 100,
        "{tail_ok} ops in the last 2 s after the freeze"
    );
}

fn ctrl_c_leaves_a_valid_result_of_what_was_measured(dir: &std::path::Path) {
    let out = dir.join("interrupted.json");
    // A private cqlbench home holding a host probe of this environment ("vm"): the run must
    // refer to it.
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("probes")).unwrap();
    let probe = home.join("probes").join("vm-sample.json");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/probe/testdata/probe-result.json"
        ),
        &probe,
    )
    .unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cqlbench"))
        .env("CQLBENCH_HOME", &home)
        .args([
            "run",
            "keyvalue",
            "--hosts",
            "127.0.0.1",
            "--dc",
            "dc1",
            "--rf",
            "1",
            "--rows",
            "500",
            "--rate",
            "200",
        ])
        .args([
            "--env",
            "vm",
            "--duration",
            "60s",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a few main-phase intervals are on disk.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let n = RunResult::read(&out).ok().and_then(|r| {
            r.phases
                .iter()
                .find(|p| p.name == "main")
                .map(|p| p.intervals.len())
        });
        if n.unwrap_or(0) >= 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no main-phase intervals written"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let signalled = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    // Interrupted: its result kept, the exit code 128 + SIGINT, within seconds.
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "took {:?} to stop",
        signalled.elapsed()
    );
    let r = RunResult::read(&out).unwrap();
    assert_eq!(r.status, RunStatus::Interrupted);
    let s = r.main_summary().expect("summary of the measured part");
    assert!(s.ok >= 400, "{} ops", s.ok);
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, cqlbench::result::Warning::Interrupted))
    );
    // The tests' binary is the dev build: recorded, and warned about.
    let build = r.fingerprint.client_build.as_ref().expect("build recorded");
    assert_eq!(
        (build.profile.as_str(), build.opt_level.as_str()),
        ("debug", "0")
    );
    assert!(r.warnings.iter().any(|w| matches!(
        w,
        cqlbench::result::Warning::UnoptimisedClient { profile, .. } if profile == "debug"
    )));
    let p = r
        .fingerprint
        .probe
        .expect("the run refers to the host probe of its environment");
    assert_eq!(p.path, probe);
    assert_eq!(p.summary.disk_iops.map(|v| v.round()), Some(37200.0));
}

/// SIGKILL, not Ctrl-C: the client has no chance to finish its files. The result and the
/// ledger on disk are still readable, and `verify` reads back what the ledger holds.
fn a_client_killed_mid_run_leaves_a_ledger_verify_reads(dir: &std::path::Path) {
    let out = dir.join("killed.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cqlbench"))
        .env("CQLBENCH_HOME", dir.join("home-killed"))
        .args(["run", "keyvalue", "--hosts", "127.0.0.1", "--dc", "dc1"])
        .args([
            "--rf",
            "1",
            "--rows",
            "2000",
            "--rate",
            "400",
            "--duration",
            "60s",
        ])
        .args(["--keyspace", "killed", "--out", out.to_str().unwrap(), "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let n = RunResult::read(&out).ok().and_then(|r| {
            r.phases
                .iter()
                .find(|p| p.name == "main")
                .map(|p| p.intervals.len())
        });
        if n.unwrap_or(0) >= 4 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no main-phase intervals written"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
    let r = RunResult::read(&out).expect("the result of a killed client is readable");
    assert_eq!(
        r.status,
        RunStatus::Running,
        "nothing could mark it finished"
    );
    let ledger = cqlbench::result::ledger::Ledger::read(&out.with_extension("ledger"))
        .expect("the ledger of a killed client is readable");
    let acked = ledger.count(cqlbench::stats::writes::Outcome::Acked);
    // Rampup's 2,000 rows and at least the 4 main-phase intervals seen (about 200 writes each).
    assert!(
        acked >= 2_000 + 600,
        "{acked} acknowledged writes in the ledger"
    );
    let o = cqlbench()
        .args(["verify", out.to_str().unwrap(), "--consistency", "ONE"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = cqlbench::result::read_verify(&out.with_extension("verify.json")).unwrap();
    eprintln!("killed client: {}", v.headline());
    // What the killed client's result counted as written: the ledger holds those and at most
    // the one interval appended before the result was rewritten (400 ops/s).
    let counted: u64 = r
        .phases
        .iter()
        .flat_map(|p| &p.intervals)
        .filter_map(|iv| iv.by_op.get(&cqlbench::spec::OpKind::Write))
        .map(|o| o.ok)
        .sum();
    assert!(
        (counted..=counted + 400).contains(&v.acked_writes),
        "{} acknowledged write cycles verified, the result counted {counted} writes",
        v.acked_writes
    );
    assert_eq!(v.acked_writes, acked);
    assert_eq!((v.missing, v.different, v.unreadable), (0, 0, 0));
    assert_eq!(v.present, v.acked_rows);
}

/// `run --metrics-listen` against the local cluster, scraped by Debian's Prometheus with the
/// shipped scrape configuration: every query of the shipped Grafana dashboard returns series
/// while the run goes, and the counters match the result written afterwards.
fn live_metrics_feed_the_shipped_dashboard_through_a_real_prometheus(
    tc: &TestCluster,
    dir: &std::path::Path,
) {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (metrics_port, prom_port) = (free_port(), free_port());
    // The shipped configuration, pointed at this run and scraping every second.
    let shipped = std::fs::read_to_string(repo.join("monitoring/prometheus.yml")).unwrap();
    for from in [
        "127.0.0.1:9500",
        "scrape_interval: 5s",
        "scrape_timeout: 4s",
    ] {
        assert!(
            shipped.contains(from),
            "monitoring/prometheus.yml lost {from}"
        );
    }
    let config = shipped
        .replace("127.0.0.1:9500", &format!("127.0.0.1:{metrics_port}"))
        .replace("scrape_interval: 5s", "scrape_interval: 1s")
        .replace("scrape_timeout: 4s", "scrape_timeout: 1s");
    let pdir = dir.join("prometheus");
    std::fs::create_dir_all(&pdir).unwrap();
    std::fs::write(pdir.join("prometheus.yml"), config).unwrap();
    let prometheus = Reap(
        std::process::Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                pdir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                pdir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(pdir.join("log")).unwrap())
            .spawn()
            .expect("prometheus (Debian's package, installed by scripts/setup.sh)"),
    );
    let out = dir.join("live.json");
    let run = Reap(
        std::process::Command::new(assert_cmd::cargo::cargo_bin("cqlbench"))
            .env("CQLBENCH_HOME", dir.join("home-live"))
            .env("CQLBENCH_CLUSTERS_DIR", tc.root())
            .args(["run", "keyvalue", "--cluster", tc.c().name()])
            .args(["--rf", "1", "--keyspace", "live", "--rows", "2000"])
            .args(["--rate", "300", "--duration", "40s"])
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")])
            .args(["--metrics-linger", "5s"])
            .args(["--out", out.to_str().unwrap(), "-q"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join("live.err")).unwrap())
            .spawn()
            .unwrap(),
    );
    let query = |expr: &str| -> Option<serde_json::Value> {
        let body = ureq::get(format!("http://127.0.0.1:{prom_port}/api/v1/query"))
            .query("query", expr)
            .call()
            .ok()?
            .body_mut()
            .read_to_string()
            .ok()?;
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        assert_eq!(v["status"], "success", "{expr}: {v}");
        Some(v["data"]["result"].clone())
    };
    // The dashboard's queries as Grafana sends them with every run and environment chosen.
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join("monitoring/grafana-dashboard.json")).unwrap(),
    )
    .unwrap();
    let exprs: Vec<(String, String)> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            let title = p["title"].as_str().unwrap().to_string();
            p["targets"].as_array().unwrap().iter().map(move |t| {
                let e = t["expr"]
                    .as_str()
                    .unwrap()
                    .replace("$__rate_interval", "15s")
                    .replace("$run", ".*")
                    .replace("$env", ".*");
                (title.clone(), e)
            })
        })
        .collect();
    assert!(exprs.len() >= 10, "{exprs:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    let mut empty: Vec<String>;
    loop {
        empty = exprs
            .iter()
            .filter(|(_, e)| {
                query(e)
                    .and_then(|r| r.as_array().map(|a| a.len()))
                    .unwrap_or(0)
                    == 0
            })
            .map(|(t, e)| format!("{t}: {e}"))
            .collect();
        if empty.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "dashboard queries without series after 90 s: {empty:#?}\nprometheus log: {}\ncqlbench: {}",
            std::fs::read_to_string(pdir.join("log")).unwrap_or_default(),
            std::fs::read_to_string(dir.join("live.err")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_secs(2));
    }
    // The series carry the run's labels, and the target is the asked rate.
    let target = query(r#"cqlbench_target_ops_per_second{step="run",phase="main"}"#).unwrap();
    assert_eq!(target[0]["value"][1], "300", "{target}");
    assert_eq!(
        target[0]["metric"]["env"],
        tc.c().name().to_string(),
        "{target}"
    );
    let up = query(r#"up{job="cqlbench"}"#).unwrap();
    assert_eq!(up[0]["value"][1], "1", "{up}");
    // The run ends well; the endpoint served on for a last scrape, so that Prometheus holds
    // what the result holds: the same operation count, and the window's p99 from the same
    // merged histograms.
    let mut run = run;
    let status = run.0.wait().unwrap();
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.join("live.err")).unwrap_or_default()
    );
    let r = RunResult::read(&out).unwrap();
    let main_ok: u64 = r
        .phases
        .iter()
        .find(|p| p.name == "main")
        .unwrap()
        .intervals
        .iter()
        .map(|i| i.ok)
        .sum();
    let scraped =
        query(r#"sum(max_over_time(cqlbench_operations_total{phase="main"}[5m]))"#).unwrap();
    let scraped: f64 = scraped[0]["value"][1].as_str().unwrap().parse().unwrap();
    assert_eq!(
        scraped, main_ok as f64,
        "Prometheus saw {scraped} main-phase operations, the result {main_ok}"
    );
    let p99 = query(
        r#"last_over_time(cqlbench_window_response_time_seconds{phase="main",op="all",quantile="0.99"}[5m])"#,
    )
    .unwrap();
    let p99_ms = 1000.0 * p99[0]["value"][1].as_str().unwrap().parse::<f64>().unwrap();
    let want = r.main_summary().unwrap().all.response.p99_ms;
    assert!(
        (p99_ms - want).abs() <= 1e-6 * want,
        "Prometheus's window p99 {p99_ms} ms, the result's {want} ms"
    );
    eprintln!(
        "live metrics: {} dashboard queries answered; {scraped} of {main_ok} main-phase operations scraped; window p99 {p99_ms:.3} ms (result {want:.3} ms)",
        exprs.len()
    );
    // Written outside the home's directories (--out), the result is in its catalogue.
    let listed = std::process::Command::new(assert_cmd::cargo::cargo_bin("cqlbench"))
        .env("CQLBENCH_HOME", dir.join("home-live"))
        .args(["runs", "--kind", "run"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&std::fs::canonicalize(&out).unwrap().display().to_string()),
        "{listed}"
    );
    drop(prometheus);
}

/// `run --hosts … --prometheus ENDPOINT --node-exporter … --prometheus-server URL` against the
/// test node, with Debian's Prometheus scraping the node's own metrics endpoint and a node
/// exporter every second: after the run, the node's series and its host's are fetched from
/// the server, mapped to the node by address, and their figures agree with those the run
/// scraped itself; the report gives the fetched host a row.
fn a_nodes_series_fetched_from_prometheus_match_the_runs_own_scrapes(
    tc: &TestCluster,
    dir: &std::path::Path,
) {
    let endpoint = tc.c().metrics_endpoints()[0].clone();
    let instance = endpoint
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string();
    let pdir = dir.join("prometheus-fetch");
    std::fs::create_dir_all(&pdir).unwrap();
    let (exporter_port, prom_port) = (free_port(), free_port());
    let packages = "prometheus prometheus-node-exporter";
    let mut exporter = Daemon::start(
        "prometheus-node-exporter",
        &[
            format!("--web.listen-address=127.0.0.1:{exporter_port}"),
            format!("--collector.textfile.directory={}", pdir.display()),
        ],
        &pdir.join("exporter.log"),
        packages,
    );
    exporter.wait_until(Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", exporter_port)).is_ok()
    });
    std::fs::write(
        pdir.join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n\
             \x20 - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n\
             \x20 - job_name: cassandra\n    static_configs:\n      - targets: ['{instance}']\n"
        ),
    )
    .unwrap();
    let mut prometheus = Daemon::start(
        "prometheus",
        &[
            format!("--config.file={}", pdir.join("prometheus.yml").display()),
            format!("--storage.tsdb.path={}", pdir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{prom_port}"),
        ],
        &pdir.join("prometheus.log"),
        packages,
    );
    let url = format!("http://127.0.0.1:{prom_port}");
    // Ready when both targets have been scraped successfully.
    let both_up = || {
        ureq::get(format!("{url}/api/v1/query"))
            .query("query", "sum(up)")
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
            .and_then(|b| serde_json::from_str::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["data"]["result"][0]["value"][1] == "2")
    };
    prometheus.wait_until(Duration::from_secs(60), both_up);

    let out = dir.join("fetched.json");
    let run = cqlbench()
        .env("CQLBENCH_HOME", dir.join("home-fetch"))
        .args(["run", "keyvalue", "--hosts", "127.0.0.1", "--dc", "dc1"])
        .args(["--rf", "1", "--keyspace", "fetch", "--rows", "2000"])
        .args(["--rate", "300", "--duration", "20s"])
        .args(["--prometheus", &endpoint])
        .args([
            "--node-exporter",
            &format!("127.0.0.1=http://127.0.0.1:{exporter_port}"),
        ])
        .args(["--prometheus-server", &url])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stderr}");
    let console = format!("{stdout}{stderr}");
    let line = console
        .lines()
        .find(|l| l.starts_with(&format!("series from Prometheus {url}")))
        .unwrap_or_else(|| panic!("no fetch line:\n{console}"));
    assert!(
        line.contains(&format!("hosts 127.0.0.1 = 127.0.0.1:{exporter_port}"))
            && line.contains(&format!("Cassandra nodes 127.0.0.1 = {instance}")),
        "{line}"
    );

    let r = RunResult::read(&out).unwrap();
    let m = r.metrics.as_ref().expect("metrics");
    let f = m.fetched.as_ref().expect("fetched series");
    assert_eq!(f.nodes.len(), 1, "{:?}", f.nodes);
    assert_eq!(
        (f.nodes[0].instance.as_str(), f.nodes[0].job.as_deref()),
        (instance.as_str(), Some("cassandra"))
    );
    assert_eq!(f.hosts.len(), 1, "{:?}", f.hosts);
    // The JMX exporter of a local node serves every figure but the JVM's own CPU share and
    // the Management API's or MCAC's names.
    assert!(
        f.missing.iter().all(|m| !m.contains("pending compactions")
            && !m.contains("process CPU seconds")
            && !m.contains("local reads,")),
        "{:?}",
        f.missing
    );
    // The same node two ways over the run's main phase: its CPU (cores) and local reads per
    // second, means of the samples with the figure.
    let (start, end) = {
        let main = r.phases.iter().find(|p| p.name == "main").unwrap();
        let first = main.intervals.first().unwrap();
        let last = main.intervals.last().unwrap();
        (main.offset_s + first.start_s, main.offset_s + last.end_s)
    };
    let mean = |samples: &[cqlbench::result::series::Sample],
                get: fn(&cqlbench::result::series::NodeSample) -> Option<f64>| {
        let v: Vec<f64> = samples
            .iter()
            .filter(|s| s.t_s > start + 2.0 && s.t_s < end - 2.0)
            .filter_map(|s| s.nodes.first().and_then(get))
            .collect();
        (v.iter().sum::<f64>() / v.len().max(1) as f64, v.len())
    };
    let (own_cpu, own_n) = mean(&m.samples, |n| n.cpu_cores);
    let (fetched_cpu, fetched_n) = mean(&f.samples, |n| n.cpu_cores);
    let (own_reads, _) = mean(&m.samples, |n| n.local_reads_per_s);
    let (fetched_reads, _) = mean(&f.samples, |n| n.local_reads_per_s);
    assert!(
        own_n >= 5 && fetched_n >= 5,
        "{own_n} and {fetched_n} samples"
    );
    assert!(
        own_cpu > 0.0 && fetched_cpu > 0.0,
        "{own_cpu} {fetched_cpu}"
    );
    assert!(
        (own_cpu - fetched_cpu).abs() <= 0.25 * own_cpu + 0.05,
        "node CPU: scraped {own_cpu:.3} cores, fetched {fetched_cpu:.3}"
    );
    assert!(own_reads > 50.0, "local reads {own_reads}/s");
    assert!(
        (own_reads - fetched_reads).abs() <= 0.15 * own_reads,
        "local reads: scraped {own_reads:.1}/s, fetched {fetched_reads:.1}/s"
    );

    // The report gives the fetched host a row of its own.
    let report = cqlbench().arg("report").arg(&out).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(
        text.contains(&format!("Prometheus {url} (127.0.0.1:{exporter_port})")),
        "{text}"
    );
    eprintln!(
        "fetched from Prometheus: node CPU scraped {own_cpu:.3} cores ({own_n} samples), fetched {fetched_cpu:.3} ({fetched_n}); local reads scraped {own_reads:.1}/s, fetched {fetched_reads:.1}/s; not found: {:?}",
        f.missing
    );

    // A capacity search reading the node from the server alone (--hosts, no endpoint of its
    // own): its pending-compactions and node-CPU criteria are judged on the server's latest
    // samples of the node — measured, not unverified — and each step's series says in which
    // dialect.
    let cap = dir.join("server-cap").join("cap.json");
    let o = cqlbench()
        .env("CQLBENCH_HOME", dir.join("home-fetch"))
        .args([
            "capacity",
            "keyvalue",
            "--hosts",
            "127.0.0.1",
            "--dc",
            "dc1",
        ])
        .args(["--rf", "1", "--keyspace", "fetch", "--rows", "2000"])
        .args(["--skip-rampup", "--start-rate", "200", "--factor", "2"])
        .args(["--max-steps", "2", "--step", "4s", "--step-warmup", "1s"])
        .args(["--pending-after", "2s", "--settle-timeout", "20s"])
        .args(["--max-latency", "all:p99:5s"])
        .args(["--prometheus-server", &url])
        .args(["--out", cap.to_str().unwrap()])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    let c = cqlbench::result::capacity::CapacityResult::read(&cap).unwrap();
    assert_eq!(c.steps.len(), 2, "{text}");
    for step in &c.steps {
        let pending = step
            .checks
            .iter()
            .find(|k| k.criterion.starts_with("pending compactions"))
            .unwrap();
        assert!(
            pending.unverified.is_none()
                && pending.value.is_some()
                && pending
                    .criterion
                    .ends_with("(the Prometheus server's latest samples)"),
            "{pending:?}\n{text}"
        );
        // Node CPU too: the JVM's share of its host, from the server's latest samples.
        let cpu = step
            .checks
            .iter()
            .find(|k| k.criterion.starts_with("node CPU"))
            .unwrap();
        assert!(
            cpu.unverified.is_none() && cpu.value.is_some_and(|v| v > 0.0),
            "{cpu:?}\n{text}"
        );
        let run = RunResult::read(&cap.parent().unwrap().join(&step.result)).unwrap();
        let series = run.metrics.as_ref().expect("the step's series");
        assert_eq!(series.nodes, ["127.0.0.1"], "{text}");
        assert_eq!(
            series.dialects,
            vec![Some(cqlbench::metrics::names::DIALECTS[0].to_string())]
        );
    }
    prometheus.stop();
    exporter.stop();
}

/// `--key-dist zipf:1.2` through the binary: the node's own per-partition read counts
/// (`nodetool toppartitions`, sampled while the run reads) fall off as 1/(k+1)^1.2.
fn zipf_keys_show_their_skew_in_the_servers_partition_counts(
    tc: &TestCluster,
    dir: &std::path::Path,
) {
    const S: f64 = 1.2;
    let out = dir.join("zipf.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cqlbench"))
        .env("CQLBENCH_HOME", dir.join("home-zipf"))
        .args(["run", "keyvalue", "--hosts", "127.0.0.1", "--dc", "dc1"])
        .args(["--rf", "1", "--keyspace", "zipf", "--rows", "10000"])
        .args(["--ratio", "read=1", "--key-dist", "zipf:1.2"])
        .args(["--rate", "1000", "--duration", "22s"])
        .args(["--out", out.to_str().unwrap(), "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while RunResult::read(&out)
        .ok()
        .and_then(|r| {
            r.phases
                .iter()
                .find(|p| p.name == "main")
                .map(|p| p.intervals.len())
        })
        .unwrap_or(0)
        < 2
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no main-phase intervals written"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let node = tc.c().nodes()[0].index;
    let top = tc
        .c()
        .nodetool(
            node,
            &[
                "toppartitions",
                "-a",
                "READS",
                "-k",
                "8",
                "-s",
                "1024",
                "zipf",
                "kv",
                "8000",
            ],
        )
        .unwrap();
    let text = String::from_utf8_lossy(&top.stdout).to_string();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(top.status.success(), "toppartitions: {text}");
    // "   zipf.kv 0         1014  0  ": table, partition key, count, error bound.
    let counts: Vec<(u64, f64)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 3 && f[0] == "zipf.kv")
                .then(|| (f[1].parse().unwrap(), f[2].parse().unwrap()))
        })
        .collect();
    eprintln!("zipf:1.2 top partitions (key, reads): {counts:?}");
    assert_eq!(counts.len(), 8, "{text}");
    let keys: Vec<u64> = counts.iter().map(|c| c.0).collect();
    assert_eq!(
        &keys[..3],
        &[0, 1, 2],
        "the hottest keys are the first ones: {text}"
    );
    assert!(
        keys.iter().all(|&k| k < 12),
        "only low keys are hot: {text}"
    );
    // The exponent fitted to log(count) against log(key + 1) over the top 8.
    let pts: Vec<(f64, f64)> = counts
        .iter()
        .map(|&(k, c)| (((k + 1) as f64).ln(), c.ln()))
        .collect();
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
        / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
    eprintln!("fitted exponent {:.3} (asked {S})", -slope);
    assert!(
        (-slope - S).abs() < 0.15,
        "fitted exponent {:.3}, asked {S}: {text}",
        -slope
    );
    let r = RunResult::read(&out).unwrap();
    assert_eq!(r.workload.key_dist.to_string(), "zipf:1.2");
    assert_eq!(r.main_summary().unwrap().errors, 0);
}

/// `--loaders 2`: two processes split the run, meet at the barrier in the cluster, start their
/// main phases together and are merged into one result that `report` and `verify` read.
fn shards_of_one_run_start_together_and_merge_into_one(dir: &std::path::Path) {
    let out = dir.join("loaders.json");
    let o = run_on_the_node(&dir.join("home-loaders"), "keyvalue")
        .args([
            "--rows",
            "2000",
            "--rate",
            "2000",
            "--duration",
            "10s",
            "--warmup",
            "2s",
        ])
        .args(["--loaders", "2", "--keyspace", "shards", "-q"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let merged = RunResult::read(&out).unwrap();
    let m = merged.merged.as_ref().expect("a merged result");
    assert_eq!(m.shards.len(), 2);
    eprintln!(
        "loaders: main phases started {:.3} ms apart; {:?}",
        m.start_spread_ms,
        m.shards.iter().map(|s| s.ops_per_s).collect::<Vec<_>>()
    );
    assert!(m.start_spread_ms < 50.0, "{}", m.start_spread_ms);
    // The rampup wrote every row once, half each.
    let rampup: Vec<u64> = m
        .shards
        .iter()
        .map(|s| {
            RunResult::read(&s.path).unwrap().phases[0]
                .summary
                .as_ref()
                .unwrap()
                .ok
        })
        .collect();
    assert_eq!(rampup, [1000, 1000]);
    let main = merged.main_summary().unwrap();
    assert_eq!(main.target_rate_per_s, Some(2000.0));
    let shard_mains: Vec<_> = m
        .shards
        .iter()
        .map(|s| {
            RunResult::read(&s.path)
                .unwrap()
                .main_summary()
                .unwrap()
                .clone()
        })
        .collect();
    // The merged schedule is the two shards' 1,000 ops/s each. The window counts what
    // completed in it: beyond its own schedule, the warmup's backlog it caught up (carried
    // over) and the operations in flight when it opened, which a stall at its start on a
    // loaded host makes hundreds (seen: 2,120 ops/s with 391 carried over).
    let scheduled = main.scheduled_ops.expect("open loop") as f64;
    let sent = main.sent_on_schedule.expect("open loop") as f64;
    let figures = format!(
        "{} ops/s, {} ok, {sent} of {scheduled} scheduled sent over {} s, {:?} carried over",
        main.ops_per_s, main.ok, main.measured_s, main.carried_over_ops
    );
    eprintln!("loaders merged: {figures}");
    assert!(
        (scheduled / main.measured_s - 2000.0).abs() < 0.01 * 2000.0,
        "{figures}"
    );
    // The merge adds the shards' schedules, what they sent on it, their operations and their
    // windows' throughputs exactly.
    let sum =
        |f: fn(&cqlbench::result::PhaseSummary) -> u64| shard_mains.iter().map(f).sum::<u64>();
    assert_eq!(main.scheduled_ops, Some(sum(|s| s.scheduled_ops.unwrap())));
    assert_eq!(
        main.sent_on_schedule,
        Some(sum(|s| s.sent_on_schedule.unwrap()))
    );
    assert_eq!(main.ok, sum(|s| s.ok));
    let shards_sum: f64 = m.shards.iter().map(|s| s.ops_per_s).sum();
    assert!(
        (main.ops_per_s - shards_sum).abs() <= 0.001 * shards_sum,
        "{figures}; shards {shards_sum}"
    );
    // How much of its schedule each shard sent on time is the host's (here usually 99–100%;
    // a CI run with a CPU hog and builds beside it saw 89.5% merged): both shards ran their
    // share, and what completed in the window is what was sent in it, within 10%, and at most
    // the schedule plus the catch-up seen above.
    for s in &shard_mains {
        let (own, sent) = (s.scheduled_ops.unwrap(), s.sent_on_schedule.unwrap());
        assert!(
            sent as f64 >= 0.5 * own as f64,
            "a shard sent {sent} of {own}: {figures}"
        );
    }
    assert!(
        main.ops_per_s >= 0.9 * sent / main.measured_s && main.ops_per_s < 1.1 * 2000.0,
        "{figures}"
    );
    // The report reads the merged result, and the two shards given together, as one run.
    for files in [
        vec![out.clone()],
        m.shards.iter().map(|s| s.path.clone()).collect(),
    ] {
        let r = cqlbench().arg("report").args(&files).output().unwrap();
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert!(text.contains("Shards — "), "{text}");
        assert_eq!(text.matches("Average throughput").count(), 1, "{text}");
    }
    // A second process claiming a shard of the same run is refused at the barrier.
    let again = cqlbench()
        .env("CQLBENCH_HOME", dir.join("home-loaders"))
        .args([
            "run",
            "keyvalue",
            "--hosts",
            "127.0.0.1",
            "--dc",
            "dc1",
            "--rf",
            "1",
        ])
        .args([
            "--rows",
            "2000",
            "--skip-rampup",
            "--rate",
            "100",
            "--duration",
            "2s",
        ])
        .args([
            "--keyspace",
            "shards",
            "--shard",
            "1/2",
            "--run-id",
            &m.run_id,
        ])
        .arg("--out")
        .arg(dir.join("again.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success());
    assert!(err.contains("is registered already"), "{err}");
    // The merged ledger is the union of the shards': verify reads every row back.
    let v = cqlbench()
        .args(["verify", out.to_str().unwrap(), "--consistency", "ONE"])
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    let v = cqlbench::result::read_verify(&out.with_extension("verify.json")).unwrap();
    assert_eq!((v.missing, v.different, v.unreadable), (0, 0, 0));
    assert!(v.acked_rows >= 2000, "{}", v.headline());
}

/// nb-tabular2, nb-iot and stress through the binary: the tables have the reference
/// workloads' column types, the rows their sizes, and `verify` finds every written row.
fn reference_shapes_write_the_articles_rows_and_verify(tc: &TestCluster, dir: &std::path::Path) {
    // (workload, table, its columns and their CQL types)
    type Columns = &'static [(&'static str, &'static str)];
    let expected_columns: [(&str, &str, Columns); 3] = [
        (
            "nb-tabular2",
            "tabular2",
            &[
                ("part", "text"),
                ("clust", "text"),
                ("data0", "text"),
                ("data1", "text"),
                ("data2", "text"),
                ("data3", "text"),
                ("data4", "text"),
                ("data5", "text"),
                ("data6", "text"),
                ("data7", "text"),
            ],
        ),
        (
            "nb-iot",
            "nb_iot",
            &[
                ("machine_id", "uuid"),
                ("sensor_name", "text"),
                ("time", "timestamp"),
                ("sensor_value", "double"),
                ("station_id", "uuid"),
                ("data", "text"),
            ],
        ),
        (
            "stress",
            "standard1",
            &[
                ("key", "blob"),
                ("c0", "blob"),
                ("c1", "blob"),
                ("c2", "blob"),
                ("c3", "blob"),
                ("c4", "blob"),
            ],
        ),
    ];
    for (kind, table, columns) in expected_columns {
        let ks = format!("shape_{}", table);
        let out = dir.join(format!("{table}.json"));
        let o = run_on_the_node(&dir.join("home-shapes"), kind)
            .args([
                "--keyspace",
                &ks,
                "--rows",
                "3000",
                "--ops",
                "3000",
                "--concurrency",
                "16",
            ])
            .args(["--out", out.to_str().unwrap(), "-q"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r = RunResult::read(&out).unwrap();
        assert_eq!(r.main_summary().unwrap().errors, 0, "{kind}");
        let o = cqlbench()
            .args(["verify", out.to_str().unwrap(), "--consistency", "ONE"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{kind} verify: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v = cqlbench::result::read_verify(&out.with_extension("verify.json")).unwrap();
        assert_eq!((v.missing, v.different, v.unreadable), (0, 0, 0), "{kind}");
        assert!(v.present >= 3000, "{kind}: {} rows present", v.present);
        runtime().block_on(async {
            let s = session(tc.c()).await;
            let rows = s
                .query_unpaged(
                    "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?",
                    (ks.as_str(), table),
                )
                .await
                .unwrap()
                .into_rows_result()
                .unwrap();
            let mut got: Vec<(String, String)> =
                rows.rows::<(String, String)>().unwrap().map(|r| r.unwrap()).collect();
            got.sort();
            let mut want: Vec<(String, String)> =
                columns.iter().map(|(c, t)| (c.to_string(), t.to_string())).collect();
            want.sort();
            assert_eq!(got, want, "{kind}: column types");
            // The stored values' sizes, over 200 rows.
            let bytes: Vec<i64> = match kind {
                "nb-tabular2" => {
                    let q = format!("SELECT data0, data1, data2, data3, data4, data5, data6, data7 FROM {ks}.{table} LIMIT 200");
                    let r = s.query_unpaged(q, ()).await.unwrap().into_rows_result().unwrap();
                    r.rows::<(String, String, String, String, String, String, String, String)>()
                        .unwrap()
                        .map(|r| {
                            let r = r.unwrap();
                            [r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7].iter().map(|d| d.len() as i64).sum()
                        })
                        .collect()
                }
                "nb-iot" => {
                    let q = format!("SELECT data FROM {ks}.{table} LIMIT 200");
                    let r = s.query_unpaged(q, ()).await.unwrap().into_rows_result().unwrap();
                    r.rows::<(String,)>().unwrap().map(|r| r.unwrap().0.len() as i64).collect()
                }
                _ => {
                    let q = format!("SELECT key, c0, c1, c2, c3, c4 FROM {ks}.{table} LIMIT 200");
                    let r = s.query_unpaged(q, ()).await.unwrap().into_rows_result().unwrap();
                    r.rows::<(Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>)>()
                        .unwrap()
                        .map(|r| {
                            let r = r.unwrap();
                            assert_eq!(r.0.len(), 10, "cassandra-stress keys are 10 bytes");
                            [r.1, r.2, r.3, r.4, r.5].iter().map(|c| c.len() as i64).sum()
                        })
                        .collect()
                }
            };
            assert_eq!(bytes.len(), 200, "{kind}");
            let mean = bytes.iter().sum::<i64>() as f64 / bytes.len() as f64;
            let (lo, hi) = match kind {
                "nb-tabular2" => (823.0, 907.0), // 865 B ± 5%
                "nb-iot" => (950.0, 1050.0),     // 800-1,200 characters, 1,000 on average
                _ => (170.0, 170.0),             // 5 × 34 B
            };
            assert!((lo..=hi).contains(&mean), "{kind}: {mean} B of values per row");
            eprintln!("{kind}: {mean:.0} B of values per row, {} rows verified", v.present);
        });
    }
}

/// Order-free form of a value: sets and maps compared as sorted lists (the server orders
/// them by the element type's comparator).
fn normalised(v: &scylla::value::CqlValue) -> String {
    use scylla::value::CqlValue;
    match v {
        CqlValue::Set(e) => {
            let mut e: Vec<String> = e.iter().map(normalised).collect();
            e.sort();
            format!("set{e:?}")
        }
        CqlValue::Map(p) => {
            let mut p: Vec<String> = p
                .iter()
                .map(|(k, v)| format!("{}:{}", normalised(k), normalised(v)))
                .collect();
            p.sort();
            format!("map{p:?}")
        }
        other => format!("{other:?}"),
    }
}

/// The shipped profiles' tables created on a real node and rows generated for them written
/// and read back unchanged: every generated type is one Cassandra accepts and returns as is.
fn profile_rows_round_trip_through_a_real_node(tc: &TestCluster) {
    use cqlbench::workload::profile::Profile;
    use scylla::value::CqlValue;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    runtime().block_on(async {
        let s = session(tc.c()).await;
        for file in [
            "alltypes.yaml",
            "timeseries.yaml",
            "collections.yaml",
            "lwt.yaml",
            "counters.yaml",
        ] {
            let p = Profile::load(&dir.join(file)).unwrap();
            let ks = &p.file.keyspace;
            s.query_unpaged(format!("DROP KEYSPACE IF EXISTS {ks}"), ()).await.unwrap();
            s.query_unpaged(
                format!("CREATE KEYSPACE {ks} WITH replication = {{'class': 'NetworkTopologyStrategy', 'dc1': 1}}"),
                (),
            )
            .await
            .unwrap();
            s.use_keyspace(ks.as_str(), false).await.unwrap();
            s.query_unpaged(p.file.table_definition.clone().unwrap(), ()).await.unwrap();
            for extra in &p.file.extra_definitions {
                s.query_unpaged(extra.as_str(), ()).await.unwrap();
            }
            s.await_schema_agreement().await.unwrap();
            let t = &p.table;
            let keys: Vec<&String> = t.partition_key.iter().chain(&t.clustering).collect();
            let values: Vec<&String> =
                t.columns.iter().map(|c| &c.name).filter(|c| !t.is_key(c)).collect();
            let counter = file == "counters.yaml";
            let write = if counter {
                format!(
                    "UPDATE {} SET {} WHERE {}",
                    t.name,
                    values.iter().map(|c| format!("{c} = {c} + ?")).collect::<Vec<_>>().join(", "),
                    keys.iter().map(|k| format!("{k} = ?")).collect::<Vec<_>>().join(" AND ")
                )
            } else {
                let all: Vec<&String> = t.columns.iter().map(|c| &c.name).collect();
                format!(
                    "INSERT INTO {} ({}) VALUES ({})",
                    t.name,
                    all.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", "),
                    vec!["?"; all.len()].join(", ")
                )
            };
            let read = format!(
                "SELECT {} FROM {} WHERE {}",
                values.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", "),
                t.name,
                keys.iter().map(|k| format!("{k} = ?")).collect::<Vec<_>>().join(" AND ")
            );
            let write = s.prepare(write).await.unwrap();
            let read = s.prepare(read).await.unwrap();
            let mut rows = 0;
            for part in 0..20u64 {
                for r in 0..5u64 {
                    let row = p.row(part, r);
                    let get = |name: &String| row.iter().find(|(n, _)| n == name).unwrap().1.clone();
                    let key_values: Vec<CqlValue> = keys.iter().map(|k| get(k)).collect();
                    let bound: Vec<CqlValue> = if counter {
                        values.iter().map(|c| get(c)).chain(key_values.clone()).collect()
                    } else {
                        row.iter().map(|(_, v)| v.clone()).collect()
                    };
                    s.execute_unpaged(&write, bound).await.unwrap_or_else(|e| panic!("{file}: {e}"));
                    let back = s
                        .execute_unpaged(&read, key_values)
                        .await
                        .unwrap()
                        .into_rows_result()
                        .unwrap();
                    let got = back.rows::<scylla::value::Row>().unwrap().next().unwrap().unwrap();
                    for (i, c) in values.iter().enumerate() {
                        let want = get(c);
                        let got = got.columns[i].as_ref();
                        // Collections written empty read back as null.
                        let empty = matches!(&want, CqlValue::List(v) | CqlValue::Set(v) if v.is_empty())
                            || matches!(&want, CqlValue::Map(m) if m.is_empty());
                        match got {
                            None => assert!(empty, "{file}: {c} of partition {part} row {r} is null"),
                            Some(g) if counter => {
                                // A row can be incremented twice when two rows share its key.
                                let (CqlValue::Counter(g), CqlValue::Counter(w)) = (g, &want) else {
                                    panic!("{file}: {c}: {g:?}")
                                };
                                assert!(g.0 >= w.0, "{file}: {c}: {} < {}", g.0, w.0);
                            }
                            Some(g) => assert_eq!(normalised(g), normalised(&want), "{file}: {c} of partition {part} row {r}"),
                        }
                    }
                    rows += 1;
                }
            }
            eprintln!("{file}: {rows} generated rows written and read back unchanged");
            s.query_unpaged(format!("DROP KEYSPACE {ks}"), ()).await.unwrap();
        }
    });
}

/// Each shipped profile run with its mix through the real binary: every operation of the mix
/// ran, none failed, and the result names the operations and carries the profile.
fn profiles_run_through_the_binary_without_errors(tc: &TestCluster, dir: &std::path::Path) {
    let profiles = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    for (file, mix, ops) in [
        (
            "timeseries.yaml",
            "ops(insert=3,latest=1,window=1)",
            &["insert", "latest", "window"][..],
        ),
        (
            "collections.yaml",
            "ops(insert=1,by_id=4,by_email=1)",
            &["insert", "by_id", "by_email"][..],
        ),
        (
            "lwt.yaml",
            "ops(insert=1,create=1,transfer=2,read=4)",
            &["insert", "create", "transfer", "read"][..],
        ),
        ("counters.yaml", "ops(view=4,read=1)", &["view", "read"][..]),
        (
            "alltypes.yaml",
            "ops(insert=1,one=1)",
            &["insert", "one"][..],
        ),
    ] {
        let out = dir.join(format!("profile-{file}.json"));
        let o = run_on_the_node(&dir.join("home-profiles"), "profile")
            .arg("--profile")
            .arg(profiles.join(file))
            .args([
                "--profile-ops",
                mix,
                "--rows",
                "100",
                "--rate",
                "200",
                "--duration",
                "6s",
            ])
            .args([
                "--keyspace",
                "profiles",
                "--drop",
                "--verify",
                "--out",
                out.to_str().unwrap(),
                "-q",
            ])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r = RunResult::read(&out).unwrap();
        let main = r.main_summary().unwrap();
        // The errors by kind, to tell a busy host's timeouts from a profile's fault.
        let kinds: Vec<String> = r
            .phases
            .iter()
            .filter(|p| p.name == "main")
            .flat_map(|p| &p.intervals)
            .flat_map(|i| i.errors_by_kind.iter())
            .map(|(k, n)| format!("{k:?}: {n}"))
            .collect();
        assert_eq!(main.errors, 0, "{file}: {kinds:?}");
        // --verify: the reads' rows were compared, and all were as written.
        let v = r.reads_verified.as_ref().expect("--verify counts reads");
        assert_eq!(v.mismatches, 0, "{file}: {:?}", v.first);
        let loaded = cqlbench::workload::profile::Profile::load(&profiles.join(file)).unwrap();
        let reads: u64 = main
            .by_op
            .iter()
            .filter(|(k, _)| !cqlbench::workload::profile::run::op_kind(&loaded, k.name()).writes())
            .map(|(_, o)| o.ok)
            .sum();
        assert!(
            v.reads_checked * 10 >= reads * 9 && v.rows_checked >= v.reads_checked,
            "{file}: {} of {reads} reads checked",
            v.reads_checked
        );
        let names: Vec<&str> = main.by_op.keys().map(|k| k.name()).collect();
        for op in ops {
            assert!(names.contains(op), "{file}: {op} not in {names:?}");
            assert!(main.by_op[&OpKind::named(op)].ok > 0, "{file}: no {op}");
        }
        // Rampup: chunks of every partition, together every row of the 100 partitions.
        let profile = cqlbench::workload::profile::Profile::load(&profiles.join(file)).unwrap();
        let chunks = profile.rampup_chunks().1;
        assert_eq!(
            r.phases[0].summary.as_ref().unwrap().ok,
            100 * chunks,
            "{file}: rampup writes each partition in {chunks} operations"
        );
        let t = &profile.table;
        if !t
            .columns
            .iter()
            .any(|c| c.ty == cqlbench::workload::profile::cql::CqlType::Counter)
        {
            let keys: Vec<usize> = t
                .partition_key
                .iter()
                .chain(&t.clustering)
                .map(|k| profile.index_of(k))
                .collect();
            let mut distinct = std::collections::BTreeSet::new();
            for p in 0..100 {
                let n: u64 = profile.rows_in(p).iter().product();
                for row in 0..n {
                    distinct.insert(format!("{:?}", profile.values(p, row, &keys)));
                }
            }
            let count = runtime().block_on(async {
                let s = session(tc.c()).await;
                s.query_unpaged(format!("SELECT COUNT(*) FROM profiles.{}", t.name), ())
                    .await
                    .unwrap()
                    .into_rows_result()
                    .unwrap()
                    .first_row::<(i64,)>()
                    .unwrap()
                    .0
            });
            assert_eq!(count as usize, distinct.len(), "{file}: rows in the table");
        }
        assert!(
            r.workload
                .profile
                .as_ref()
                .is_some_and(|p| p.text.contains("table_definition"))
        );
        eprintln!("{file}: {} ops, 0 errors, operations {names:?}", main.ok);
    }
}

/// `--verify` on reads: rows changed behind the tool's back (a built-in's value, a profile's
/// column) fail the reads that return them as `mismatch`, and the run prints the difference.
fn verify_reports_rows_changed_behind_the_tools_back(tc: &TestCluster, dir: &std::path::Path) {
    use cqlbench::stats::ErrorKind;
    use cqlbench::workload::profile::Profile;
    let home = dir.join("home-changed");
    let run = |workload: &str, extra: &[&str], out: &std::path::Path| {
        run_on_the_node(&home, workload)
            .args(extra)
            .args(["--out", out.to_str().unwrap()])
            .output()
            .unwrap()
    };
    // A built-in: 50 rows written, row 7's value replaced, then reads of all 50 rows.
    let fill = dir.join("changed-fill.json");
    let o = run(
        "keyvalue",
        &[
            "--keyspace",
            "changed",
            "--drop",
            "--rows",
            "50",
            "--ops",
            "10",
            "-q",
        ],
        &fill,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    runtime().block_on(async {
        let s = session(tc.c()).await;
        s.query_unpaged("UPDATE changed.kv SET value = 0x00ff WHERE key = 7", ())
            .await
            .unwrap();
    });
    let out = dir.join("changed-read.json");
    let o = run(
        "keyvalue",
        &[
            "--keyspace",
            "changed",
            "--rows",
            "50",
            "--skip-rampup",
            "--ratio",
            "read=1",
            "--ops",
            "600",
            "--warmup",
            "0s",
            "--verify",
        ],
        &out,
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let r = RunResult::read(&out).unwrap();
    let v = r.reads_verified.as_ref().unwrap();
    let main = r.main_summary().unwrap();
    // 600 uniform reads of 50 rows read row 7 about 12 times; the other 49 rows match.
    assert!(v.mismatches >= 3, "{v:?}");
    assert_eq!(
        main.errors_by_kind.get(&ErrorKind::Mismatch).copied(),
        Some(v.mismatches),
        "{:?}",
        main.errors_by_kind
    );
    assert!(
        v.first.iter().all(|m| m.row == "7" && m.column == "value"),
        "{:?}",
        v.first
    );
    assert!(v.first[0].found == "0x00ff", "{}", v.first[0].found);
    assert_eq!(v.reads_checked + v.mismatches, main.ok + main.errors);
    assert!(
        stdout.contains("mismatch: read row 7 column value: expected 0x"),
        "{stdout}"
    );

    // A profile: partition 3's name changed; by_id reads of the 20 users find it.
    let profile =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/collections.yaml");
    let p = Profile::load(&profile).unwrap();
    let id = p.values(3, 0, &[p.index_of("user_id")]).remove(0);
    let fill = dir.join("changed-profile-fill.json");
    let common = [
        "--profile",
        profile.to_str().unwrap(),
        "--keyspace",
        "changed_p",
        "--rows",
        "20",
    ];
    let o = run(
        "profile",
        &[&common[..], &["--drop", "--ops", "1", "-q"]].concat(),
        &fill,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    runtime().block_on(async {
        let s = session(tc.c()).await;
        s.query_unpaged(
            "UPDATE changed_p.users SET name = 'someone else' WHERE user_id = ?",
            (id,),
        )
        .await
        .unwrap();
    });
    let out = dir.join("changed-profile-read.json");
    let o = run(
        "profile",
        &[
            &common[..],
            &[
                "--skip-rampup",
                "--profile-ops",
                "by_id=1",
                "--ops",
                "300",
                "--verify",
            ],
        ]
        .concat(),
        &out,
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let r = RunResult::read(&out).unwrap();
    let v = r.reads_verified.as_ref().unwrap();
    assert!(v.mismatches >= 3, "{v:?}");
    assert!(
        v.first
            .iter()
            .all(|m| m.row == "3/0" && m.column == "name" && m.found == "'someone else'"),
        "{:?}",
        v.first
    );
    assert!(
        stdout.contains("mismatch: by_id row 3/0 column name"),
        "{stdout}"
    );
    eprintln!(
        "--verify: keyvalue run {} mismatch errors on row 7, profile run {} on partition 3; first: {}",
        main.errors, v.mismatches, v.first[0]
    );

    // `cqlbench verify` of the profile's fill reads all 20 rows back and finds the changed one.
    let o = cqlbench()
        .env("CQLBENCH_HOME", &home)
        .args(["verify", fill.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("19 of 20 acknowledged rows present, 0 missing, 1 different"),
        "{stdout}"
    );
    assert!(stdout.contains("row 3/0: name expected"), "{stdout}");

    // Counters: every row holds its increment times the acknowledged writes; one row
    // incremented behind the tool's back is reported with both figures.
    let counters = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/counters.yaml");
    let c = Profile::load(&counters).unwrap();
    let run_out = dir.join("changed-counters.json");
    let o = run(
        "profile",
        &[
            "--profile",
            counters.to_str().unwrap(),
            "--keyspace",
            "changed_c",
            "--rows",
            "10",
            "--drop",
            "--profile-ops",
            "view=3,read=1",
            "--ops",
            "400",
            "-q",
        ],
        &run_out,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let verify = || {
        cqlbench()
            .env("CQLBENCH_HOME", &home)
            .args(["verify", run_out.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let o = verify();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{stdout}");
    assert!(stdout.contains(" 0 missing, 0 different"), "{stdout}");
    let key: Vec<scylla::value::CqlValue> =
        c.values(2, 0, &[c.index_of("site"), c.index_of("page")]);
    runtime().block_on(async {
        let s = session(tc.c()).await;
        s.query_unpaged(
            "UPDATE changed_c.page_views SET views = views + 1000 WHERE site = ? AND page = ?",
            key,
        )
        .await
        .unwrap();
    });
    let o = verify();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("row 2/0: views expected"), "{stdout}");
    assert!(stdout.contains(" 1 different"), "{stdout}");
    eprintln!(
        "verify of counters: {}",
        stdout.lines().find(|l| l.contains("row 2/0")).unwrap()
    );
}

/// keyvalue's delete, lwt, batch and counter operations against the node: no errors, each
/// in the result, and the counter table holds exactly one increment per acknowledged counter
/// operation.
fn keyvalue_deletes_lwts_batches_and_counters(tc: &TestCluster, dir: &std::path::Path) {
    let out = dir.join("more-ops.json");
    let o = run_on_the_node(&dir.join("home-more"), "keyvalue")
        .args(["--keyspace", "more_ops", "--drop", "--rows", "300"])
        .args(["--ratio", "write=1,read=1,delete=1,lwt=1,batch=1,counter=1"])
        .args([
            "--ops", "1800", "--rate", "600", "--warmup", "0s", "-q", "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = RunResult::read(&out).unwrap();
    let main = r.main_summary().unwrap();
    assert_eq!(main.errors, 0, "{:?}", main.errors_by_kind);
    for op in ["write", "read", "delete", "lwt", "batch", "counter"] {
        let k: OpKind = op.parse().unwrap();
        assert!(
            main.by_op.get(&k).is_some_and(|o| o.ok > 150),
            "{op}: {:?}",
            main.by_op.keys()
        );
    }
    let counters = main.by_op[&"counter".parse::<OpKind>().unwrap()].ok;
    let (sum, rows) = runtime().block_on(async {
        let s = session(tc.c()).await;
        let rows = |q: &'static str| {
            let s = &s;
            async move {
                s.query_unpaged(q, ())
                    .await
                    .unwrap()
                    .into_rows_result()
                    .unwrap()
            }
        };
        let sum = rows("SELECT SUM(n) FROM more_ops.kv_counts")
            .await
            .first_row::<(scylla::value::Counter,)>()
            .unwrap()
            .0
            .0;
        let count = rows("SELECT COUNT(*) FROM more_ops.kv")
            .await
            .first_row::<(i64,)>()
            .unwrap()
            .0;
        (sum, count)
    });
    assert_eq!(
        sum as u64, counters,
        "one increment per acknowledged counter operation"
    );
    // Deletes took rows out that rampup wrote (writes and batches put some back).
    assert!(rows < 300, "{rows} rows left of 300");
    let o = cqlbench()
        .env("CQLBENCH_HOME", dir.join("home-more"))
        .args(["verify", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("the run deleted rows"),
        "{err}"
    );
    eprintln!("keyvalue more ops: {counters} counter ops, SUM(n) {sum}; {rows} of 300 rows left");
}

/// `--send-window 8ms` at 50 ops/s: sends are 20 ms apart, so each is alone in its window and
/// leaves no sooner than 8 ms after its intended start (only an operation claimed late, as the
/// first is, leaves at once); the result keeps the window.
fn a_send_window_holds_each_send_that_long_after_it_is_due(dir: &std::path::Path) {
    let out = dir.join("send-window.json");
    let o = run_on_the_node(&dir.join("home-window"), "keyvalue")
        .args([
            "--keyspace",
            "window",
            "--rows",
            "100",
            "--no-metrics",
            "-q",
        ])
        .args([
            "--rate",
            "50",
            "--send-window",
            "8ms",
            "--duration",
            "4s",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = RunResult::read(&out).unwrap();
    let (phase, s, lag) = main_phase_send_lag(&r);
    assert_eq!(phase.load.send_window_s, 0.008);
    eprintln!(
        "send window 8ms at 50 ops/s: send lag p50 {:.2} ms, p99 {:.2} ms, {} ops",
        lag.p50_ms, lag.p99_ms, s.ok
    );
    assert!(s.ok >= 150, "{} operations", s.ok);
    assert!(lag.p50_ms >= 8.0, "send lag p50 {} ms", lag.p50_ms);
}

/// One client thread at a fixed rate: each interval's recording (here an observer that takes
/// 400 ms, as a slow disk's fsync of the result would) runs on the calling thread, and the
/// sends go on meanwhile on the runtime's own thread. Were they one thread, 40 % of the
/// sends would wait out the 400 ms: send lag p90 over 300 ms.
fn a_slow_recording_does_not_hold_one_threads_sends(dir: &std::path::Path) {
    let out = dir.join("slow-recording.json");
    let mut w = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
    w.keyspace = "slowrec".into();
    w.rows = 200;
    w.replication = [("dc1".to_string(), 1)].into();
    let mut main = load(
        LoadMode::Open {
            rate_per_s: 200.0,
            max_in_flight: 64,
        },
        Stop::Duration { secs: 5.0 },
    );
    main.threads = 1;
    let p = plan(&out, w, main, true);
    let caller = std::thread::current().id();
    let mut recorded_here = 0;
    let mut senders_named = 0;
    let mut observe = |e: cqlbench::load::Event<'_>| {
        if let cqlbench::load::Event::Interval { phase: "main", .. } = e {
            recorded_here += usize::from(std::thread::current().id() == caller);
            senders_named += usize::from(thread_names().iter().any(|n| n == "cqlbench-load"));
            std::thread::sleep(Duration::from_millis(400));
        }
    };
    let r = run(&p, Arc::new(AtomicBool::new(false)), &mut observe).expect("run");
    let (phase, s, lag) = main_phase_send_lag(&r);
    assert_eq!(phase.load.threads, 1);
    eprintln!(
        "400 ms recordings at 200 ops/s on one thread: send lag p50 {:.2} p90 {:.2} max {:.2} ms, {} ops, {recorded_here} intervals",
        lag.p50_ms, lag.p90_ms, lag.max_ms, s.ok
    );
    assert!(
        recorded_here >= 4,
        "{recorded_here} intervals seen on the calling thread"
    );
    assert_eq!(
        senders_named, recorded_here,
        "the runtime's thread ran beside each recording"
    );
    assert!(s.ok >= 800, "{} operations", s.ok);
    assert!(lag.p90_ms < 100.0, "send lag p90 {} ms", lag.p90_ms);
}

/// A fixed-rate run's main phase, its summary and its send lag (which an open loop records).
fn main_phase_send_lag(
    r: &RunResult,
) -> (
    &cqlbench::result::PhaseResult,
    &cqlbench::result::PhaseSummary,
    &cqlbench::stats::Percentiles,
) {
    let phase = r.main_phase().expect("a main phase");
    let s = phase.summary.as_ref().expect("the main phase's summary");
    let lag = s
        .send_lag
        .as_ref()
        .expect("an open loop records its send lag");
    (phase, s, lag)
}

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim_end().to_string())
        .collect()
}

fn bad_input_gets_one_line_errors(dir: &std::path::Path) {
    let out = dir.join("x.json").to_str().unwrap().to_string();
    let cases: [(&[&str], &str); 6] = [
        (
            &["run", "keyvalue", "--hosts", "127.0.0.1", "--rate", "0"],
            "positive",
        ),
        (
            &["run", "keyvalue", "--hosts", "127.0.0.1", "--rate", "fast"],
            "not a rate",
        ),
        (&["run", "keyvalue"], "--cluster NAME"),
        (
            &["run", "keyvalue", "--hosts", "127.0.0.1", "--timeout", "0s"],
            "--timeout must be at least",
        ),
        (
            &[
                "run",
                "keyvalue",
                "--hosts",
                "127.0.0.1",
                "--ratio",
                "range=1",
            ],
            "no range operation",
        ),
        (
            &[
                "run",
                "keyvalue",
                "--hosts",
                "127.0.0.99",
                "--duration",
                "2s",
                "--out",
                &out,
            ],
            "cannot connect",
        ),
    ];
    for (args, needle) in cases {
        let o = cqlbench().args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&o.stderr);
        let line = err.lines().find(|l| l.starts_with("error")).unwrap_or("");
        assert!(line.contains(needle), "{args:?}: '{needle}' not in: {err}");
        assert_eq!(
            err.trim()
                .lines()
                .filter(|l| l.starts_with("error"))
                .count(),
            1,
            "{err}"
        );
    }
}
