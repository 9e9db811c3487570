//! The summary on top of the report (one row per run; settings and host CPU; overlaid
//! spectra) and the comparability check of `cqlbench compare`, on fixture results.

use std::path::PathBuf;

use super::model::summary::{self, RunLoad, not_comparable};
use super::{Input, Report, html, markdown, text};
use crate::result::fixture::{RunShape, run, run_with_metrics};
use crate::result::{RateShare, RunResult};

fn closed(seed: u64) -> RunResult {
    run(
        "laptop",
        &RunShape {
            ops_per_s: 3_000.0,
            latency_ms: 4.0,
            seed,
            ..RunShape::default()
        },
    )
}

fn fixed(rate: f64, seed: u64) -> RunResult {
    run(
        "laptop",
        &RunShape {
            ops_per_s: rate,
            ops_per_s_sd: 5.0,
            latency_ms: 1.5,
            rate_per_s: Some(rate),
            seed,
            ..RunShape::default()
        },
    )
}

/// A run at `share` of `of_ops` (the throughput of the run at `of`).
fn share(share: f64, of: &str, of_ops: f64, seed: u64) -> RunResult {
    let mut r = fixed((share * of_ops).round(), seed);
    r.rate_share = Some(RateShare {
        share,
        of: of.into(),
        of_ops_per_s: of_ops,
    });
    r
}

fn input(path: &str, result: RunResult) -> Input {
    Input::Run {
        path: PathBuf::from(path),
        result,
    }
}

/// The methodology of reference 000: a throughput run, a latency test at a fixed rate, one at
/// 35% of the throughput run's.
fn three() -> (Vec<Input>, f64) {
    let tput = closed(1);
    let measured = tput.main_summary().unwrap().ops_per_s;
    (
        vec![
            input("tput.json", tput),
            input("fixed.json", fixed(700.0, 2)),
            input("lat35.json", share(0.35, "tput.json", measured, 3)),
        ],
        measured,
    )
}

/// The cells of the row of `table` whose first cell is `first`.
fn row<'a>(table: &'a crate::format::Table, first: &str) -> &'a [String] {
    table
        .rows
        .iter()
        .find(|r| r[0] == first)
        .unwrap_or_else(|| panic!("no row {first} in {table:?}"))
}

fn cell<'a>(table: &'a crate::format::Table, first: &str, column: &str) -> &'a str {
    let c = table
        .header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column} in {:?}", table.header));
    &row(table, first)[c]
}

#[test]
fn one_row_per_run_with_its_load_target_and_both_latencies() {
    let (inputs, measured) = three();
    let report = Report::build(&inputs).unwrap();
    assert_eq!(report.runs.len(), 3);
    // Three scenarios, but one summary.
    assert_eq!(report.groups.len(), 3);
    let tables = report.tables();
    let t = &tables[0];
    assert_eq!(t.title, summary::SUMMARY_TITLE);
    let loads: Vec<&str> = ["#1", "#2", "#3"]
        .iter()
        .map(|i| cell(t, i, "load"))
        .collect();
    assert_eq!(loads, ["closed loop", "fixed rate", "share of a run"]);
    assert_eq!(cell(t, "#1", "target"), "64 in flight");
    assert_eq!(cell(t, "#2", "target"), "700 ops/s");
    // The share shows the rate it came to and the run it came from, here #1.
    let rate = (0.35 * measured).round();
    assert_eq!(
        cell(t, "#3", "target"),
        format!(
            "{} ops/s = 35% of {} (#1 tput.json)",
            crate::format::cell(Some(rate), 0),
            crate::format::cell(Some(measured), 0)
        )
    );
    assert_eq!(report.runs[2].source, Some(1));
    // Response and service time are the run's own, side by side.
    for (i, input) in inputs.iter().enumerate() {
        let Input::Run { result, .. } = input else {
            unreachable!()
        };
        let s = result.main_summary().unwrap();
        let first = format!("#{}", i + 1);
        let ms = |v: f64| crate::format::cell(Some(v), 2);
        assert_eq!(
            cell(t, &first, "ops/s"),
            crate::format::cell(Some(s.ops_per_s), 0)
        );
        assert_eq!(cell(t, &first, "resp p99"), ms(s.all.response.p99_ms));
        assert_eq!(cell(t, &first, "resp p99.9"), ms(s.all.response.p999_ms));
        assert_eq!(cell(t, &first, "svc p50"), ms(s.all.service.p50_ms));
        assert_eq!(cell(t, &first, "svc p99"), ms(s.all.service.p99_ms));
        assert_eq!(cell(t, &first, "errors"), "0");
    }
    // The fixtures' service time is 80% of the response time: the columns are not swapped.
    assert!(report.runs[0].service.p99_ms < report.runs[0].response.p99_ms);

    // The legend goes under the runs table, in text and Markdown.
    let text = text::render(&report);
    assert!(text.starts_with(summary::SUMMARY_TITLE), "{text}");
    let legend_at = text.find(summary::LEGEND).expect("legend in the text");
    assert!(legend_at < text.find(summary::SETTINGS_TITLE).unwrap());
    assert!(summary::LEGEND.contains("intended start") && summary::LEGEND.contains("actual send"));
    let md = markdown::render(&report);
    assert!(md.contains("| #3 | laptop | lat35.json |"), "{md}");
    assert!(md.contains(&format!("\n{}\n", summary::LEGEND)), "{md}");
}

#[test]
fn a_share_of_a_run_not_in_the_report_names_its_path() {
    let report = Report::build(&[input(
        "lat.json",
        share(0.35, "results/tput-7.json", 2_000.0, 3),
    )])
    .unwrap();
    let r = &report.runs[0];
    assert_eq!(r.source, None);
    assert!(matches!(r.load, RunLoad::Share { rate_per_s, .. } if rate_per_s == 700.0));
    assert_eq!(r.target(), "700 ops/s = 35% of 2,000 (results/tput-7.json)");
}

#[test]
fn the_settings_table_shows_what_the_result_records() {
    let mut local = closed(1);
    let mut spec = crate::cluster::plan::tests::spec("dc1:3", Some(1024));
    spec.cassandra = crate::spec::CassandraSource::Maven {
        version: "5.0.4".into(),
    };
    local.fingerprint.cluster = Some(spec);
    local.workload.replication = [("dc1".to_string(), 3)].into();
    local.workload.write_cl = crate::spec::Cl::LocalQuorum;
    local.workload.read_cl = crate::spec::Cl::One;
    local.workload.rows = 250_000;
    let mut remote = fixed(700.0, 2);
    remote.fingerprint.cassandra_version = Some("4.1.8".into());
    remote.workload.replication = [("dc1".to_string(), 3), ("dc2".to_string(), 1)].into();
    let report =
        Report::build(&[input("local.json", local), input("remote.json", remote)]).unwrap();
    let tables = report.tables();
    let t = tables
        .iter()
        .find(|t| t.title == summary::SETTINGS_TITLE)
        .unwrap();
    assert_eq!(cell(t, "#1", "RF"), "3");
    assert_eq!(cell(t, "#1", "CL write/read"), "LOCAL_QUORUM/ONE");
    assert_eq!(cell(t, "#1", "rows"), "250,000");
    assert_eq!(cell(t, "#1", "nodes"), "3");
    assert_eq!(cell(t, "#1", "heap"), "1G");
    assert_eq!(cell(t, "#1", "Cassandra"), "5.0.4");
    assert_eq!(cell(t, "#1", "host cores"), "2");
    // Not a local cluster: no nodes or heap known, the version the driver saw.
    assert_eq!(cell(t, "#2", "RF"), "dc1:3,dc2:1");
    assert_eq!(cell(t, "#2", "nodes"), "-");
    assert_eq!(cell(t, "#2", "heap"), "-");
    assert_eq!(cell(t, "#2", "Cassandra"), "4.1.8");
    // Neither sampled the host.
    assert_eq!(cell(t, "#2", "host CPU %"), "-");
}

#[test]
fn the_server_settings_that_differ_between_runs_are_named_and_the_equal_ones_are_not() {
    let settings = |reads: &str, extra: Option<(&str, &str)>| {
        let mut m: std::collections::BTreeMap<String, String> = [
            ("concurrent_reads", reads),
            ("concurrent_writes", "32"),
            ("compaction_throughput", "64MiB/s"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        m.extend(extra.map(|(k, v)| (k.to_string(), v.to_string())));
        m
    };
    // What names a node or cluster differs by construction and is not compared.
    let identity = |node: &str| {
        [
            ("cluster_name", format!("{node}-cluster")),
            ("listen_address", format!("10.0.0.{}", node.len())),
            (
                "seed_provider.parameters",
                format!("{{seeds=10.0.0.{}:7000}}", node.len()),
            ),
            ("commitlog_directory", format!("/var/lib/{node}/commitlog")),
            ("data_file_directories", format!("[/var/lib/{node}/data]")),
            (
                "audit_logging_options_audit_logs_dir",
                format!("/var/log/{node}/audit"),
            ),
            (
                "replica_filtering_protection",
                format!(
                    "org.apache.cassandra.config.Options@{:x}",
                    node.len() * 4099
                ),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
    };
    let mut a = closed(1);
    a.env = "ec2".into();
    a.fingerprint.server_settings = settings("32", None);
    a.fingerprint.server_settings.extend(identity("a"));
    let node = |version: &str| crate::result::NodeFacts {
        address: "10.0.0.1".into(),
        dc: Some("dc1".into()),
        rack: Some("rack1".into()),
        release_version: Some(version.into()),
        tokens: 16,
        settings_differ: Default::default(),
        settings_unread: false,
    };
    a.fingerprint.nodes = vec![node("5.0.4"), node("5.0.4")];
    a.fingerprint.schema = [("keyvalue.compaction".to_string(), "class=STCS".to_string())].into();
    let mut b = closed(2);
    b.env = "k8s".into();
    b.fingerprint.server_settings = settings("64", Some(("cdc_enabled", "false")));
    b.fingerprint.server_settings.extend(identity("bb"));
    b.fingerprint.nodes = vec![node("5.0.4"), node("4.1.8")];
    // One of run b's nodes, asked directly, had another value than the node asked.
    b.fingerprint.nodes[1].settings_differ =
        [("concurrent_reads".to_string(), "96".to_string())].into();
    // Run b also holds another workload's table: its options have nothing to differ from
    // in run a, so they are no difference.
    b.fingerprint.schema = [
        ("keyvalue.compaction", "class=LCS"),
        ("timeseries.compaction", "class=TWCS"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // A run that recorded no settings (before Cassandra 4.0) is left out of the table.
    let c = closed(3);
    let report = Report::build(&[
        input("a.json", a.clone()),
        input("b.json", b),
        input("c.json", c),
    ])
    .unwrap();
    let tables = report.tables();
    let t = tables
        .iter()
        .find(|t| t.title == summary::SERVER_SETTINGS_TITLE)
        .expect("a table of the differing settings");
    assert_eq!(t.header, ["setting", "#1 ec2", "#2 k8s"]);
    assert_eq!(
        t.rows,
        [
            ["cdc_enabled", "-", "false"],
            ["cluster.versions", "5.0.4: 2", "4.1.8: 1, 5.0.4: 1"],
            ["concurrent_reads", "32", "64"],
            ["node 10.0.0.1: concurrent_reads", "-", "96"],
            ["schema.keyvalue.compaction", "class=STCS", "class=LCS"],
        ]
    );
    // The text and HTML reports carry it.
    assert!(text::render(&report).contains(summary::SERVER_SETTINGS_TITLE));
    assert!(html::render(&report).contains("concurrent_reads"));
    // Runs whose settings agree: no table.
    let same = Report::build(&[input("a.json", a.clone()), input("a2.json", a)]).unwrap();
    assert!(
        same.tables()
            .iter()
            .all(|t| t.title != summary::SERVER_SETTINGS_TITLE)
    );
}

#[test]
fn host_cpu_is_the_mean_over_the_measured_window() {
    let r = run_with_metrics("lab", &RunShape::default(), 2, &["sda"]);
    let (share, client, nodes) =
        crate::result::host_cpu(&r.phases[0], r.metrics.as_ref().unwrap()).unwrap();
    let report = Report::build(&[input("lab.json", r)]).unwrap();
    let host = report.runs[0].host.unwrap();
    assert_eq!(
        (host.share, host.client_cores, host.nodes_cores),
        (share, client, nodes)
    );
    let tables = report.tables();
    let t = &tables[1];
    assert_eq!(
        cell(t, "#1", "host CPU %"),
        crate::format::cell(Some(100.0 * share), 0)
    );
    assert_eq!(cell(t, "#1", "nodes cores"), crate::format::cell(nodes, 2));
    assert_ne!(cell(t, "#1", "nodes cores"), "-");
}

#[test]
fn runs_of_one_workload_share_one_spectrum_chart_with_a_line_each() {
    let (inputs, _) = three();
    let report = Report::build(&inputs).unwrap();
    let comparable = summary::comparable(&report.runs);
    assert_eq!(comparable.len(), 1);
    assert_eq!(comparable[0].1.len(), 3);
    let page = html::render(&report);
    let start = page.find(r#"data-chart="latency-spectra""#).unwrap();
    let svg = &page[start..start + page[start..].find("</svg>").unwrap()];
    for i in 1..=3 {
        // Its legend entry, its response line (solid) and its service line (dashed).
        let colour = super::charts::run_colour(i);
        assert!(svg.contains(&format!(">#{i} laptop · ")), "#{i}");
        assert!(svg.contains(&format!(r#"stroke="{colour}""#)), "#{i}");
    }
    assert!(svg.contains("dashed: service time"));
    assert!(svg.matches(r#"stroke-dasharray="6 4""#).count() >= 3);
    // The summary comes first, with the legend, then the settings.
    let summary_at = page.find(r#"<section id="summary">"#).unwrap();
    assert!(summary_at < page.find(r#"<section id="scenario-1">"#).unwrap());
    assert!(page.contains(&format!(
        r#"<p class="meta legend">{}</p>"#,
        super::svg::escape(summary::LEGEND)
    )));
    assert!(page.contains("<caption>Run settings and host CPU</caption>"));

    // A lone run has nothing to be compared with.
    let lone = Report::build(&inputs[..1]).unwrap();
    assert!(summary::comparable(&lone.runs).is_empty());
    assert!(!html::render(&lone).contains(r#"data-chart="latency-spectra""#));
}

#[test]
fn compare_is_warned_off_other_load_modes_and_targets() {
    let (tput, slow) = (closed(1), fixed(700.0, 2));
    let why = not_comparable(&tput, &slow).unwrap();
    assert_eq!(
        why,
        "A is closed loop (64 in flight), B is a fixed rate (700 ops/s): open loop against \
         closed loop: closed-loop latency leaves the queueing out, so their latencies are not \
         comparable"
    );
    let why = not_comparable(&slow, &fixed(1_400.0, 3)).unwrap();
    assert!(why.contains("their targets differ"), "{why}");
    assert!(why.contains("(1,400 ops/s)"), "{why}");
    // Same rate, same concurrency, same share of each one's own throughput: comparable.
    assert_eq!(not_comparable(&slow, &fixed(700.0, 4)), None);
    assert_eq!(not_comparable(&tput, &closed(5)), None);
    assert_eq!(
        not_comparable(
            &share(0.35, "a.json", 2_000.0, 6),
            &share(0.35, "b.json", 3_000.0, 7)
        ),
        None
    );
    let why = not_comparable(
        &share(0.35, "a.json", 2_000.0, 6),
        &share(0.5, "a.json", 2_000.0, 7),
    )
    .unwrap();
    assert!(
        why.contains("35% of 2,000") && why.contains("50% of 2,000"),
        "{why}"
    );
}
