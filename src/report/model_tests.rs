//! Model and exporter tests; exporters are compared with golden files in
//! `src/report/golden/` (`UPDATE_GOLDEN=1` rewrites them).

use std::path::PathBuf;

use super::model::{EnvRuns, RUN_SECTIONS};
use super::{Input, Report, csv, markdown, series, text};
use crate::result::fixture::{RunShape, capacity, run};
use crate::result::probe::ProbeResult;
use crate::stats::{Percentiles, decode};

fn golden(name: &str, actual: &str) {
    crate::testutil::assert_golden(&format!("src/report/golden/{name}"), actual);
}

fn run_input(env: &str, shape: RunShape) -> Input {
    Input::Run {
        path: PathBuf::from(format!("{env}-{}.json", shape.seed)),
        result: run(env, &shape),
    }
}

fn probe_input(env: &str, started: u64, cpu: f64) -> Input {
    let mut result: ProbeResult =
        serde_json::from_str(include_str!("../probe/testdata/probe-result.json")).unwrap();
    result.env = env.into();
    result.started_unix_s = started;
    result.summary.cpu_events_s = Some(cpu);
    Input::Probe {
        path: PathBuf::from(format!("probe-{env}-{started}.json")),
        result,
    }
}

/// Two environments, repeated throughput runs in one, a latency test in both, a capacity
/// search in both (one interrupted), probes.
fn inputs() -> Vec<Input> {
    let tput = |seed, ops_per_s, latency_ms| RunShape {
        ops_per_s,
        latency_ms,
        seed,
        ..RunShape::default()
    };
    let lat = |seed, latency_ms| RunShape {
        ops_per_s: 700.0,
        ops_per_s_sd: 5.0,
        latency_ms,
        rate_per_s: Some(700.0),
        seed,
        ..RunShape::default()
    };
    let mut slow = run("k8s", &lat(12, 3.0));
    slow.warnings.push(crate::result::Warning::RateNotAchieved {
        phase: "main".into(),
        target_per_s: 700.0,
        achieved_per_s: 690.0,
    });
    let mut interrupted = capacity("k8s", &[1_000.0, 2_000.0, 3_000.0], 0);
    interrupted.steps.truncate(2);
    interrupted.status = crate::result::capacity::CapacityStatus::Interrupted;
    interrupted.verdict = None;
    vec![
        run_input("ec2", tput(1, 2_300.0, 2.0)),
        run_input("k8s", tput(2, 2_200.0, 2.6)),
        run_input("ec2", tput(3, 1_900.0, 2.2)),
        run_input("ec2", tput(4, 2_250.0, 2.1)),
        run_input("ec2", lat(11, 1.2)),
        Input::Run {
            path: "k8s-12.json".into(),
            result: slow,
        },
        Input::Capacity {
            path: "ec2-capacity.json".into(),
            result: capacity("ec2", &[1_000.0, 2_000.0, 3_000.0, 4_000.0], 4),
        },
        Input::Capacity {
            path: "k8s-capacity.json".into(),
            result: interrupted,
        },
        probe_input("ec2", 100, 6_901.0),
        probe_input("ec2", 200, 6_902.0),
        probe_input("laptop", 100, 3_156.0),
    ]
}

#[test]
fn exporters_match_their_golden_files() {
    let report = Report::build(&inputs()).unwrap();
    golden("report.txt", &text::render(&report));
    golden("report.md", &markdown::render(&report));
    golden("report.csv", &csv::render(&report));
}

#[test]
fn a_send_window_makes_a_scenario_of_its_own() {
    let shape = RunShape {
        rate_per_s: Some(700.0),
        ..RunShape::default()
    };
    let on_time = run("ec2", &shape);
    let mut batched = run("ec2", &shape);
    for p in &mut batched.phases {
        p.load.send_window_s = 0.0015;
    }
    assert_eq!(
        super::model::scenario_of(&on_time).unwrap(),
        "keyvalue, open loop, 700 ops/s"
    );
    assert_eq!(
        super::model::scenario_of(&batched).unwrap(),
        "keyvalue, open loop, 700 ops/s, sends batched within 1.5ms"
    );
}

#[test]
fn groups_by_scenario_and_env_and_keeps_the_latest_probe() {
    let report = Report::build(&inputs()).unwrap();
    let names: Vec<&str> = report.groups.iter().map(|g| g.scenario.as_str()).collect();
    assert_eq!(
        names,
        [
            "keyvalue, closed loop, 64 in flight",
            "keyvalue, open loop, 700 ops/s"
        ]
    );
    let ec2 = &report.groups[0].envs[0];
    assert_eq!((ec2.env.as_str(), ec2.runs()), ("ec2", 3));
    assert_eq!(report.groups[0].envs[1].runs(), 1);
    assert_eq!(report.probes.len(), 2);
    assert_eq!(report.probes[0].summary.cpu_events_s, Some(6_902.0));
    assert!(report.notes.iter().any(|n| n.contains("2 probes")));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("achieved 690 ops/s"))
    );
}

#[test]
fn percentiles_come_from_merged_histograms_not_averages() {
    let fast = run(
        "e",
        &RunShape {
            latency_ms: 1.0,
            seed: 1,
            ..RunShape::default()
        },
    );
    let slow = run(
        "e",
        &RunShape {
            latency_ms: 10.0,
            seed: 2,
            ..RunShape::default()
        },
    );
    let mut merged = decode(&fast.main_summary().unwrap().all.response_histogram_ns).unwrap();
    merged
        .add(decode(&slow.main_summary().unwrap().all.response_histogram_ns).unwrap())
        .unwrap();
    let want = Percentiles::of(&merged);
    let inputs = [fast.clone(), slow.clone()].map(|result| Input::Run {
        path: "x.json".into(),
        result,
    });
    let report = Report::build(&inputs).unwrap();
    let got = report.groups[0].envs[0].response;
    assert_eq!(got, want);
    assert_eq!(
        got.count,
        fast.main_summary().unwrap().ok + slow.main_summary().unwrap().ok
    );
    // Averaging p99s would be wrong: the merged p99 is near the slow run's.
    let avg_p99 = (fast.main_summary().unwrap().all.response.p99_ms
        + slow.main_summary().unwrap().all.response.p99_ms)
        / 2.0;
    assert!(got.p99_ms > avg_p99 * 1.3, "{got:?} vs average {avg_p99}");
}

#[test]
fn spread_and_best_of_n() {
    let e = EnvRuns {
        env: "e".into(),
        ops_per_s: vec![100.0, 120.0, 90.0],
        response: Percentiles::default(),
        spectrum: Vec::new(),
        sstables_per_read: None,
        peak_pending: None,
    };
    assert_eq!(e.spread(), Some((90.0, 100.0, 120.0)));
    assert!((e.relative_spread_pct().unwrap() - 30.0).abs() < 1e-12);
    assert!((e.mean_ops_per_s() - 310.0 / 3.0).abs() < 1e-12);
    let even = EnvRuns {
        ops_per_s: vec![100.0, 120.0, 90.0, 110.0],
        ..e.clone()
    };
    assert_eq!(even.spread(), Some((90.0, 105.0, 120.0)));
    let one = EnvRuns {
        ops_per_s: vec![100.0],
        ..e
    };
    assert_eq!(one.spread(), None);
    // The best of N runs is the max column.
    let best = RUN_SECTIONS[1]
        .fields
        .iter()
        .find(|f| f.key == "max_ops_per_s")
        .unwrap();
    assert_eq!((best.get)(&even), Some(120.0));
    assert_eq!((best.get)(&one), None);
}

#[test]
fn csv_steps_carry_their_requests_in_flight_or_their_target_rate() {
    let inputs = [
        Input::Capacity {
            path: "open.json".into(),
            result: capacity("ec2", &[1_000.0, 2_000.0], 2),
        },
        Input::Capacity {
            path: "closed.json".into(),
            result: crate::result::fixture::capacity_closed("lab", &[4, 8, 16], 3),
        },
    ];
    let out = csv::render(&Report::build(&inputs).unwrap());
    let lines: Vec<&str> = out.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let at = |key: &str| header.iter().position(|k| *k == key).unwrap();
    assert_eq!(at("in_flight"), at("target_rate_per_s") + 1, "{}", lines[0]);
    // The scenario label is quoted and holds a comma: cells after it, from the env on.
    let cells = |l: &str| -> Vec<String> {
        let (_, rest) = l.split_once("\",").expect("a quoted scenario");
        std::iter::once(String::new())
            .chain(rest.split(',').map(String::from))
            .collect()
    };
    let level = |l: &str| {
        let c = cells(l);
        (
            c[at("target_rate_per_s")].clone(),
            c[at("in_flight")].clone(),
        )
    };
    assert_eq!(lines.len(), 6, "{out}");
    assert_eq!(level(lines[1]), ("1000".to_string(), String::new()));
    assert_eq!(level(lines[2]), ("2000".to_string(), String::new()));
    let closed: Vec<(String, String)> = lines[3..].iter().map(|l| level(l)).collect();
    assert_eq!(
        closed,
        [
            (String::new(), "4".to_string()),
            (String::new(), "8".to_string()),
            (String::new(), "16".to_string())
        ]
    );
}

#[test]
fn numbers_are_grouped_and_rounded() {
    assert_eq!(crate::format::cell(Some(22_864.4), 0), "22,864");
    assert_eq!(crate::format::cell(Some(1_234_567.891), 2), "1,234,567.89");
    assert_eq!(crate::format::cell(Some(-1_500.0), 0), "-1,500");
    assert_eq!(crate::format::cell(Some(2.204), 2), "2.20");
    assert_eq!(crate::format::cell(Some(999.0), 0), "999");
    assert_eq!(crate::format::cell(None, 2), "-");
}

#[test]
fn csv_columns_follow_the_model() {
    let out = csv::render(&Report::build(&inputs()).unwrap());
    let lines: Vec<&str> = out.lines().collect();
    let fields = RUN_SECTIONS.iter().map(|s| s.fields.len()).sum::<usize>()
        + super::model::PROBE_SECTION.fields.len()
        + super::capacity::STEP_COLUMNS.len();
    assert_eq!(lines[0].split(',').count(), 2 + fields);
    // Two scenarios × two envs, 4 + 2 capacity steps, plus the probe-only laptop.
    assert_eq!(lines.len(), 12);
    assert!(lines[5].starts_with("\"capacity search, keyvalue\",ec2,"));
    assert!(lines[9].starts_with("\"capacity search, keyvalue (interrupted)\",k8s,"));
    assert!(lines[11].starts_with(",laptop,"));
    // Count cells outside quotes (scenario labels hold commas).
    let cells = |l: &str| {
        let mut quoted = false;
        1 + l
            .chars()
            .filter(|&c| {
                if c == '"' {
                    quoted = !quoted;
                }
                c == ',' && !quoted
            })
            .count()
    };
    for l in &lines[1..] {
        assert_eq!(cells(l), 2 + fields, "{l}");
    }
    assert!(lines[1].starts_with("\"keyvalue, closed loop, 64 in flight\",ec2,"));
    // Without a capacity search, no step columns.
    let runs_only: Vec<Input> = inputs()
        .into_iter()
        .filter(|i| !matches!(i, Input::Capacity { .. }))
        .collect();
    let out = csv::render(&Report::build(&runs_only).unwrap());
    assert!(out.lines().next().unwrap().ends_with(",disk_read_p99_ms"));
}

#[test]
fn runs_without_a_main_summary_are_noted_and_left_out() {
    let mut r = run("e", &RunShape::default());
    r.phases[0].summary = None;
    let report = Report::build(&[Input::Run {
        path: "cut.json".into(),
        result: r,
    }])
    .unwrap();
    assert!(report.groups.is_empty());
    assert_eq!(
        report.notes,
        ["e (cut.json): no main-phase summary, left out"]
    );
    assert!(text::render(&report).starts_with("no results"));
}

#[test]
fn bad_histograms_name_the_file() {
    let mut r = run("e", &RunShape::default());
    r.phases[0]
        .summary
        .as_mut()
        .unwrap()
        .all
        .response_histogram_ns = "!!".into();
    let e = Report::build(&[Input::Run {
        path: "h.json".into(),
        result: r,
    }])
    .unwrap_err();
    assert!(
        e.to_string().starts_with("h.json: main-phase histogram"),
        "{e}"
    );
}

#[test]
fn series_are_the_measured_intervals_of_the_main_phase() {
    let shape = RunShape::default();
    let r = run("e", &shape);
    let s = series::of(&r).unwrap();
    let names: Vec<&str> = s.iter().map(|s| s.metric.as_str()).collect();
    assert_eq!(
        names,
        [
            "throughput ops/s",
            "write response p50 ms",
            "write response p99 ms",
            "read response p50 ms",
            "read response p99 ms"
        ]
    );
    let measured: Vec<f64> = r.phases[0].intervals[shape.warmup..]
        .iter()
        .map(|i| i.ops_per_s)
        .collect();
    assert_eq!(s[0].values, measured);
    assert_eq!(s[4].values.len(), shape.intervals - shape.warmup);
    let mut no_main = r.clone();
    no_main.phases[0].name = "rampup".into();
    assert!(series::of(&no_main).is_err());
}

#[test]
fn a_deployment_prices_its_environment_against_what_it_sustained() {
    use super::cost::{Deployment, rows, table};
    let mut report = Report::build(&inputs()).unwrap();
    let cat = crate::prices::default_catalog().unwrap();
    let deployments: Vec<Deployment> = ["ec2=r5.2xlarge,3,gp3:4TB", "laptop=i3.xlarge,1,3y"]
        .iter()
        .map(|d| d.parse().unwrap())
        .collect();
    report.costs = rows(&report, &deployments, &cat).unwrap();
    let ec2 = &report.costs[0];
    // ec2 has a capacity search: its highest passing step's throughput is the basis.
    let verdict = report.capacity.iter().find(|c| c.env == "ec2").unwrap();
    assert_eq!(ec2.basis, "capacity verdict");
    assert_eq!(ec2.ops_per_s, verdict.verdict.highest_passing_ops_per_s);
    let priced = crate::cost::price_cluster(
        &cat,
        &crate::cost::CloudCluster {
            nodes: 3,
            instance: "r5.2xlarge".into(),
            disk: Some("gp3:4TB".parse().unwrap()),
            k8s: None,
            pricing: crate::prices::Pricing::OnDemand,
        },
    )
    .unwrap();
    assert_eq!(ec2.monthly_usd, priced.total_monthly_usd);
    let per_1k = ec2.per_1k_ops_usd.unwrap();
    assert!((per_1k - ec2.monthly_usd / (ec2.ops_per_s.unwrap() / 1000.0)).abs() < 1e-9);
    // laptop has only probe figures: priced, with no throughput to divide by.
    let laptop = &report.costs[1];
    assert_eq!((laptop.ops_per_s, laptop.per_1k_ops_usd), (None, None));
    assert_eq!(laptop.basis, "no throughput result");
    let t = table(&report.costs).unwrap();
    assert_eq!(t.header, ["", "ec2", "laptop"]);
    assert!(text::render(&report).contains("$ per 1,000 ops/s"));
    // CSV: the cost columns on every row of a priced environment, empty on the others.
    let out = csv::render(&report);
    let header: Vec<&str> = out.lines().next().unwrap().split(',').collect();
    assert!(header.ends_with(csv::COST_COLUMNS), "{header:?}");
    let monthly = format!(",{},", (ec2.monthly_usd * 1e6).round() / 1e6);
    let ec2_rows: Vec<&str> = out.lines().filter(|l| l.contains(",ec2,")).collect();
    assert!(!ec2_rows.is_empty());
    for l in &ec2_rows {
        assert!(l.contains("3 × r5.2xlarge") && l.contains(&monthly), "{l}");
        assert!(l.contains(",capacity verdict,"), "{l}");
    }
    let k8s = out.lines().find(|l| l.contains(",k8s,")).unwrap();
    assert!(k8s.ends_with(",,,,,"), "{k8s}");
    // An instance the catalogue lacks is an error naming it.
    let bad: Vec<Deployment> = vec!["ec2=nosuch,3".parse().unwrap()];
    assert!(
        rows(&report, &bad, &cat)
            .unwrap_err()
            .to_string()
            .contains("nosuch")
    );
}

#[test]
fn fixed_rate_runs_make_one_table_of_p99_by_rate() {
    // Reference 002's table: one workload at three rates, two environments (one missing a rate).
    let mut inputs = Vec::new();
    for (env, rates) in [
        ("laptop", &[100.0, 500.0, 1000.0][..]),
        ("vm", &[100.0, 1000.0]),
    ] {
        for (i, rate) in rates.iter().enumerate() {
            let shape = RunShape {
                ops_per_s: *rate,
                rate_per_s: Some(*rate),
                latency_ms: 1.0 + *rate / 500.0,
                seed: i as u64 + 7,
                ..RunShape::default()
            };
            inputs.push(Input::Run {
                path: format!("{env}-{rate}.json").into(),
                result: run(env, &shape),
            });
        }
    }
    // A closed-loop run of the same workload is no row of it.
    inputs.push(Input::Run {
        path: "tp.json".into(),
        result: run("laptop", &RunShape::default()),
    });
    let report = Report::build(&inputs).unwrap();
    let tables = report.by_rate_tables();
    assert_eq!(tables.len(), 1);
    let t = &tables[0];
    assert!(
        t.title.starts_with("Response time p99 (ms) by rate"),
        "{}",
        t.title
    );
    assert_eq!(t.header, ["target ops/s", "laptop", "vm"]);
    let rates: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(rates, ["100", "500", "1,000"]);
    assert_eq!(t.rows[1][2], "-", "vm has no 500 ops/s run");
    // Each cell is that group's merged p99.
    let g500 = report
        .groups
        .iter()
        .find(|g| g.open_rate_per_s == Some(500.0))
        .unwrap();
    assert_eq!(
        t.rows[1][1],
        crate::format::cell(Some(g500.envs[0].response.p99_ms), 2)
    );
    assert!(text::render(&report).contains("Response time p99 (ms) by rate"));
    assert!(super::html::render(&report).contains("id=\"by-rate-0\""));
}

#[test]
fn runs_at_a_share_of_each_environments_throughput_are_one_scenario() {
    // Reference 000's latency test: 35% of each environment's own maximum, so the rates differ.
    let mut inputs = Vec::new();
    for (env, rate, seed) in [("large", 700.0, 3), ("small", 300.0, 4)] {
        let mut result = run(
            env,
            &RunShape {
                ops_per_s: rate,
                rate_per_s: Some(rate),
                seed,
                ..RunShape::default()
            },
        );
        result.rate_share = Some(crate::result::RateShare {
            share: 0.35,
            of: format!("{env}-tp.json").into(),
            of_ops_per_s: rate / 0.35,
        });
        inputs.push(Input::Run {
            path: format!("{env}-lat.json").into(),
            result,
        });
    }
    let report = Report::build(&inputs).unwrap();
    assert_eq!(report.groups.len(), 1, "{:?}", report.groups);
    let g = &report.groups[0];
    assert!(
        g.scenario
            .ends_with("open loop, 35% of the measured throughput"),
        "{}",
        g.scenario
    );
    let envs: Vec<&str> = g.envs.iter().map(|e| e.env.as_str()).collect();
    assert_eq!(envs, ["large", "small"]);
    // Not a row of the table by rate: its rate is each environment's own.
    assert_eq!(g.open_rate_per_s, None);
    assert!(report.by_rate_tables().is_empty());
}

/// A 30 s run at 1,000 ops/s: node2 killed at 10 s (5 s of 300 ops/s and 50 unavailable
/// errors a second follow), restarted at 20 s (taking 6 s); and its verification.
fn faulted_run() -> (Input, Input) {
    let mut r = run(
        "lab",
        &RunShape {
            ops_per_s: 1_000.0,
            ops_per_s_sd: 0.0,
            intervals: 30,
            warmup: 0,
            rate_per_s: Some(1_000.0),
            ..RunShape::default()
        },
    );
    let offset = 3.0;
    let main = &mut r.phases[0];
    main.offset_s = offset;
    for iv in &mut main.intervals[10..15] {
        iv.ok = 300;
        iv.ops_per_s = 300.0;
        iv.errors = 50;
        iv.errors_by_kind = [(crate::stats::ErrorKind::Unavailable, 50)].into();
    }
    let event = |s: &str, at: f64, took: f64| crate::result::fault::FaultEvent {
        fault: s.parse().unwrap(),
        started_s: offset + at,
        finished_s: Some(offset + at + took),
        error: None,
    };
    r.events = vec![
        event("10s:kill:node2", 10.0, 0.1),
        event("20s:restart:node2", 20.0, 6.0),
    ];
    let path = PathBuf::from("lab-faults.json");
    let verify = crate::result::VerifyResult {
        schema_version: crate::result::verify::VERIFY_VERSION,
        kind: "verify".into(),
        run: path.clone(),
        consistency: crate::spec::Cl::Quorum,
        write_consistency: crate::spec::Cl::Quorum,
        ledger_truncated: false,
        acked_writes: 60_000,
        acked_rows: 45_000,
        present: 45_000,
        missing: 0,
        different: 0,
        unreadable: 0,
        unknown_writes: 250,
        unknown_rows: 200,
        unknown_landed: 120,
        first_differences: vec![],
        first_missing: vec![],
        profile_rows: false,
        elapsed_s: 12.0,
    };
    (
        Input::Run { path, result: r },
        Input::Verify {
            path: "lab-faults.verify.json".into(),
            result: verify,
        },
    )
}

#[test]
fn faults_show_their_recovery_availability_and_errors_and_the_verification_its_counts() {
    let (run, verify) = faulted_run();
    let report = Report::build(&[run, verify]).unwrap();
    let timeline = &report.groups[0].runs[0];
    let impacts = timeline.fault_impacts();
    assert_eq!(impacts.len(), 2);
    let kill = &impacts[0];
    assert_eq!(kill.at_s, 10.0);
    assert_eq!(kill.before_ops_per_s, Some(1_000.0));
    assert_eq!(kill.min_availability, Some(300.0 / 350.0));
    // Intervals 10..15 are below 950 ops/s: back at 15 s, 5 s after the fault.
    assert_eq!(kill.recovery_s, Some(5.0));
    assert_eq!(
        kill.errors,
        [(crate::stats::ErrorKind::Unavailable, 250)].into()
    );
    let restart = &impacts[1];
    // The 10 s before the restart: five intervals at 300, five at 1,000.
    assert_eq!(restart.before_ops_per_s, Some(650.0));
    assert_eq!(restart.recovery_s, Some(0.0));
    assert!(restart.errors.is_empty());
    // A second fault inside the last error interval (14.3 s, in 14..15): that interval's
    // errors are counted once, for the fault its midpoint follows.
    let mut close = timeline.clone();
    close.events[1].started_s = close.events[0].started_s + 4.3;
    let impacts = close.fault_impacts();
    let total = |f: &super::model::FaultImpact| f.errors.values().sum::<u64>();
    assert_eq!(total(&impacts[0]) + total(&impacts[1]), 250);
    assert_eq!((total(&impacts[0]), total(&impacts[1])), (200, 50));
    // In open loop the level to recover to is at most the target: a backlog caught up
    // before a fault (1,500 ops/s here) does not raise it.
    let mut caught_up = timeline.clone();
    for iv in &mut caught_up.intervals[10..20] {
        iv.ops_per_s = 1_500.0;
    }
    for iv in &mut caught_up.intervals[20..] {
        iv.ops_per_s = 990.0;
    }
    let impacts = caught_up.fault_impacts();
    assert_eq!(impacts[1].before_ops_per_s, Some(1_000.0));
    assert_eq!(impacts[1].recovery_s, Some(0.0));
    let availability = timeline.availability().unwrap();
    assert!(
        (availability - (30_000.0 - 3_500.0) / (30_000.0 - 3_250.0)).abs() < 1e-12,
        "{availability}"
    );

    let tables = report.tables();
    let faults = tables
        .iter()
        .find(|t| t.title.starts_with("Faults — lab"))
        .expect("a fault table");
    assert_eq!(
        faults.rows[0],
        vec![
            "10.0",
            "kill node2",
            "0.1",
            "1,000",
            "85.71",
            "5",
            "unavailable=250",
            "ok"
        ]
    );
    assert_eq!(faults.rows[1][1], "restart node2");
    assert_eq!(faults.rows[1][2], "6.0");
    let v = tables
        .iter()
        .find(|t| t.title.starts_with("Acknowledged writes read back"))
        .expect("a verification table");
    let row = |label: &str| {
        v.rows
            .iter()
            .find(|r| r[0] == label)
            .map(|r| r[1].clone())
            .unwrap()
    };
    assert_eq!(row("present"), "45,000");
    assert_eq!(row("missing"), "0");
    assert_eq!(row("rows read back at"), "QUORUM");
    assert_eq!(row("unknown-outcome writes: rows landed"), "120 of 200");

    // The page marks both faults on every chart of the run, with availability charted.
    let html = super::html::render(&report);
    assert!(html.contains("Availability (% of attempted operations that succeeded)"));
    // The run's stack: response time, throughput, availability.
    assert_eq!(html.matches(r#"class="marker""#).count(), 2 * 3);
    assert!(html.contains(">kill node2</text>"));
    assert!(html.contains("restart node2 at 23.0 s"));

    // A fault in the last interval has no whole interval after it: no recovery figure, and
    // not "not recovered". One never applied has no impact row figures and no marker.
    let mut late = timeline.clone();
    let at = |s: &str, started: f64, finished: Option<f64>, error: Option<&str>| {
        crate::result::fault::FaultEvent {
            fault: s.parse().unwrap(),
            started_s: 3.0 + started,
            finished_s: finished.map(|f| 3.0 + f),
            error: error.map(String::from),
        }
    };
    late.events = vec![
        at("29.5s:kill:node3", 29.5, Some(29.6), None),
        at(
            "40s:kill:node1",
            33.0,
            None,
            Some("not applied: the main phase ended first"),
        ),
    ];
    let impacts = late.fault_impacts();
    assert_eq!(impacts.len(), 1);
    assert_eq!(impacts[0].intervals_after, 0);
    assert_eq!(impacts[0].recovery_s, None);
    let table = late.fault_table().unwrap();
    assert_eq!(table.rows.len(), 2);
    assert_eq!(table.rows[0][5], "-");
    assert_eq!(table.rows[1][..3], ["40.0", "kill node1", "-"]);
    assert_eq!(table.rows[1][7], "not applied: the main phase ended first");
    let mut report = report;
    report.groups[0].runs[0] = late;
    let html = super::html::render(&report);
    assert_eq!(html.matches(r#"class="marker""#).count(), 3);
    assert!(!html.contains("kill node1 at"));
}

#[test]
fn a_verification_of_a_run_not_in_the_report_is_a_note() {
    let (_, verify) = faulted_run();
    let report = Report::build(&[verify]).unwrap();
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("verifies lab-faults.json, which is not in this report")),
        "{:?}",
        report.notes
    );
}

#[test]
fn a_verification_beside_a_run_goes_with_it_however_its_path_was_spelled() {
    let (Input::Run { result: run, .. }, Input::Verify { result: mut v, .. }) = faulted_run()
    else {
        unreachable!()
    };
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("moved.json");
    run.write(&run_path).unwrap();
    // Verified where it was before being moved here.
    v.run = PathBuf::from("/elsewhere/lab-faults.json");
    crate::verify::write(&v, &run_path).unwrap();
    let inputs = super::load_all(std::slice::from_ref(&run_path)).unwrap();
    assert_eq!(inputs.len(), 2);
    let report = Report::build(&inputs).unwrap();
    assert!(report.groups[0].runs[0].verify.is_some());
    assert!(
        !report
            .notes
            .iter()
            .any(|n| n.contains("not in this report")),
        "{:?}",
        report.notes
    );
}

#[test]
fn reads_compared_under_verify_are_shown_with_the_reasons_others_were_not() {
    use crate::result::verify::{ReadsVerified, Unchecked};
    let (Input::Run { mut result, path }, _) = faulted_run() else {
        unreachable!()
    };
    result.reads_verified = Some(ReadsVerified {
        reads_checked: 5_033,
        rows_checked: 5_033,
        reads_unchecked: 15_048,
        mismatches: 0,
        first: vec![],
        unchecked: [(
            "read".to_string(),
            [
                (Unchecked::NotYetWritten, 48),
                (Unchecked::NoRowRequired, 15_000),
            ]
            .into(),
        )]
        .into(),
    });
    let report = Report::build(&[Input::Run { result, path }]).unwrap();
    let tables = report.tables();
    let t = tables
        .iter()
        .find(|t| {
            t.title
                .starts_with("Reads compared with the generator (--verify)")
        })
        .expect("a reads table");
    assert_eq!(t.header[1], "lab (lab-faults.json)");
    let row = |label: &str| {
        t.rows
            .iter()
            .find(|r| r[0] == label)
            .map(|r| r[1].clone())
            .unwrap_or_else(|| panic!("no row {label}: {:?}", t.rows))
    };
    assert_eq!(row("reads compared"), "5,033");
    assert_eq!(row("reads not compared"), "15,048");
    assert_eq!(row("mismatches"), "0");
    assert_eq!(
        row(&format!("  read: {}", Unchecked::NoRowRequired.describe())),
        "15,000"
    );
    assert_eq!(
        row(&format!("  read: {}", Unchecked::NotYetWritten.describe())),
        "48"
    );
    // The page shows it too.
    let html = super::html::render(&report);
    assert!(html.contains("Reads compared with the generator"));
    assert!(html.contains(Unchecked::NoRowRequired.describe()));
}

/// A run against a remote cluster whose two nodes' hosts were sampled through node
/// exporters, beside the local host's /proc.
fn remote_run_input() -> Input {
    let mut result =
        crate::result::fixture::run_with_metrics("remote", &RunShape::default(), 2, &["sda"]);
    crate::result::fixture::with_node_hosts(
        result.metrics.as_mut().unwrap(),
        &["node1", "node2"],
        &["nvme0n1", "nvme1n1"],
    );
    Input::Run {
        path: "remote-1.json".into(),
        result,
    }
}

#[test]
fn hosts_sampled_through_node_exporters_are_in_every_exporter() {
    let report =
        Report::build(&[remote_run_input(), run_input("ec2", RunShape::default())]).unwrap();
    golden("hosts.txt", &text::render(&report));
    golden("hosts.md", &markdown::render(&report));
    golden("hosts.csv", &csv::render(&report));
    let html = super::html::render(&report);
    for caption in [
        super::model::hosts::HOSTS_TITLE,
        super::model::hosts::DEVICES_TITLE,
    ] {
        assert!(
            html.contains(&format!("<caption>{caption}</caption>")),
            "{caption}"
        );
    }
    assert!(html.contains("<td class=\"text\">node exporter 10.0.0.2:9100</td>"));
    // The CSV: one row per host device, its host's figures on it.
    let rendered = csv::render(&report);
    let mut reader = ::csv::Reader::from_reader(rendered.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |k: &str| header.iter().position(|h| h == k).unwrap();
    let rows: Vec<::csv::StringRecord> = reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[col("host")] == "node2")
        .collect();
    assert_eq!(rows.len(), 2, "{rendered}");
    assert_eq!(
        &rows[1][col("scenario")],
        "keyvalue, closed loop, 64 in flight"
    );
    assert_eq!(&rows[1][col("device")], "nvme1n1");
    assert_eq!(&rows[1][col("host_source")], "node exporter 10.0.0.2:9100");
    assert_eq!(&rows[1][col("cpu_user_pct")], "40");
    assert_eq!(&rows[1][col("write_iops")], "100");
    assert_eq!(&rows[1][col("run")], "remote-1.json");
}
