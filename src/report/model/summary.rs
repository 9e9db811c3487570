//! The summary on top of the report: one row per run, whatever its scenario — its load (fixed
//! rate, closed loop, or a share of another run's throughput, with the rate that came to and
//! the run it came from), what it achieved, response and service time side by side, errors —
//! and a second table of the settings the numbers depend on (replication, consistency, data
//! size, nodes, heap, Cassandra version) and the host's CPU over the measured window, and a
//! third of the server settings, schema options and nodes that differ between the runs. Also the
//! check `cqlbench compare` makes before comparing two runs ([`not_comparable`]).

use std::path::{Path, PathBuf};

use super::{share_text, spectrum};
use crate::format::Table;
use crate::report::ReportError;
use crate::report::capacity::{Cell, Column, rows_table};
use crate::result::{PhaseResult, PhaseSummary, RunResult};
use crate::spec::LoadMode;
use crate::stats::{Percentiles, decode};

/// The title of the runs table; [`LEGEND`] goes under it.
pub const SUMMARY_TITLE: &str = "Runs (latency in ms)";
/// The title of the settings table.
pub const SETTINGS_TITLE: &str = "Run settings and host CPU";
/// The title of the table of server settings that differ between runs.
pub const SERVER_SETTINGS_TITLE: &str =
    "Server settings, schema and nodes that differ between runs (as the node asked reports them)";
/// At most this many differing settings are listed; a last row counts the rest.
const SERVER_SETTINGS_ROWS: usize = 40;
/// What the two kinds of latency in the runs table are, in one line.
pub const LEGEND: &str = "response time (resp) = from the intended start, includes queueing (coordinated omission corrected); service time (svc) = from the actual send; in closed loop the two coincide; send lag = how late the open-loop client sent against its schedule (its p99; response includes it)";

/// The legend that goes under `table`: [`LEGEND`] under the runs table.
pub fn legend_of(table: &Table) -> Option<&'static str> {
    (table.title == SUMMARY_TITLE).then_some(LEGEND)
}

/// How a run's main phase was loaded.
#[derive(Debug, Clone, PartialEq)]
pub enum RunLoad {
    /// Closed loop: requests in flight, as fast as they complete (a throughput test).
    Closed { concurrency: usize },
    /// Open loop at a rate given in ops/s.
    Fixed { rate_per_s: f64 },
    /// Open loop at a share of another run's measured throughput (`--rate 35% --of RUN`).
    Share {
        share: f64,
        /// The rate the share came to.
        rate_per_s: f64,
        /// The throughput result it is a share of, as the run recorded it, and its ops/s.
        of: PathBuf,
        of_ops_per_s: f64,
    },
}

impl RunLoad {
    pub fn of(run: &RunResult, main: &PhaseResult) -> RunLoad {
        match (main.load.mode, &run.rate_share) {
            (LoadMode::Closed { concurrency }, _) => RunLoad::Closed { concurrency },
            (LoadMode::Open { rate_per_s, .. }, Some(s)) => RunLoad::Share {
                share: s.share,
                rate_per_s,
                of: s.of.clone(),
                of_ops_per_s: s.of_ops_per_s,
            },
            (LoadMode::Open { rate_per_s, .. }, None) => RunLoad::Fixed { rate_per_s },
        }
    }

    /// `closed loop`, `fixed rate`, `share of a run`.
    pub fn mode(&self) -> &'static str {
        match self {
            RunLoad::Closed { .. } => "closed loop",
            RunLoad::Fixed { .. } => "fixed rate",
            RunLoad::Share { .. } => "share of a run",
        }
    }

    /// Open loop, at a rate.
    pub fn is_open(&self) -> bool {
        !matches!(self, RunLoad::Closed { .. })
    }

    /// `64 in flight`, `700 ops/s`, `2,451 ops/s = 35% of 7,003`.
    pub fn target(&self) -> String {
        let ops = |v: f64| crate::format::cell(Some(v), 0);
        match self {
            RunLoad::Closed { concurrency } => format!("{concurrency} in flight"),
            RunLoad::Fixed { rate_per_s } => format!("{} ops/s", ops(*rate_per_s)),
            RunLoad::Share {
                share,
                rate_per_s,
                of_ops_per_s,
                ..
            } => format!(
                "{} ops/s = {} of {}",
                ops(*rate_per_s),
                share_text(*share),
                ops(*of_ops_per_s)
            ),
        }
    }
}

/// The host's CPU over the main phase's measured window (see [`crate::result::host_cpu`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostCpu {
    /// Mean user + system share of all the host's CPUs, 0–1.
    pub share: f64,
    /// cqlbench's CPU, in cores.
    pub client_cores: f64,
    /// The local nodes' CPU, in cores, when they ran on this host.
    pub nodes_cores: Option<f64>,
}

/// What a run's numbers depend on besides its load, as far as the result records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `3`, or `dc1:3,dc2:1` with several data centres.
    pub replication: String,
    /// `LOCAL_QUORUM/ONE` (writes/reads).
    pub consistency: String,
    pub rows: u64,
    pub rows_per_partition: u64,
    /// The local cluster's nodes, heap per node (`default` when Cassandra sized it) and
    /// Cassandra version; none when the run went to a cluster cqlbench did not start.
    pub nodes: Option<usize>,
    /// How long the local cluster's last start took, in seconds (none: not recorded).
    pub cluster_start_s: Option<f64>,
    pub heap: Option<String>,
    pub cassandra: Option<String>,
    /// The Java version of the node asked (Cassandra 4.0+), if recorded.
    pub java: Option<String>,
    /// How the client connected (`ClientSpec::summary`); None in results that predate it.
    pub client: Option<String>,
    pub host_cores: usize,
    /// The server's settings, schema and nodes as the run recorded them ([`server_facts`];
    /// empty: not recorded).
    pub server: std::collections::BTreeMap<String, String>,
}

impl Settings {
    fn of(run: &RunResult) -> Settings {
        let w = &run.workload;
        let replication = match w.replication.len() {
            1 => w.replication.values().next().map(u32::to_string),
            _ => None,
        }
        .unwrap_or_else(|| {
            let dcs: Vec<String> = w
                .replication
                .iter()
                .map(|(dc, rf)| format!("{dc}:{rf}"))
                .collect();
            dcs.join(",")
        });
        let cluster = run.fingerprint.cluster.as_ref();
        let cassandra = run.fingerprint.cassandra_version.clone().or_else(|| {
            match cluster.map(|c| &c.cassandra) {
                Some(crate::spec::CassandraSource::Maven { version }) => Some(version.clone()),
                _ => None,
            }
        });
        Settings {
            replication,
            consistency: format!("{}/{}", w.write_cl, w.read_cl),
            // A fill's key space is far larger than what it writes: its rows are those written.
            rows: run.fill.as_ref().map_or(w.rows, |f| f.rows_written),
            rows_per_partition: w.partsize,
            nodes: cluster.map(|c| c.node_count()),
            cluster_start_s: run.fingerprint.cluster_start.as_ref().map(|s| s.took_s),
            heap: cluster.map(|c| c.jvm.heap.map_or("default".into(), |h| h.to_string())),
            cassandra,
            java: run.fingerprint.java_version.clone(),
            client: run.fingerprint.client.as_ref().map(|c| c.summary()),
            host_cores: run.fingerprint.host.cores,
            server: server_facts(&run.fingerprint),
        }
    }
}

/// What a run recorded of its server, as one map to compare between runs: the settings as
/// named by `system_views.settings`, the schema as `schema.NAME` (`schema.keyspace.replication`,
/// `schema.TABLE.compaction`, …), and the nodes as `cluster.nodes` (count per DC and rack),
/// `cluster.versions` and `cluster.tokens_per_node`, and a node's setting that differs from the
/// asked node's as `node ADDRESS: NAME`.
fn server_facts(fp: &crate::result::Fingerprint) -> std::collections::BTreeMap<String, String> {
    use std::collections::BTreeMap;
    let mut out = fp.server_settings.clone();
    for n in &fp.nodes {
        out.extend(
            n.settings_differ
                .iter()
                .map(|(k, v)| (format!("node {}: {k}", n.address), v.clone())),
        );
    }
    out.extend(
        fp.schema
            .iter()
            .map(|(k, v)| (format!("schema.{k}"), v.clone())),
    );
    if !fp.nodes.is_empty() {
        let counted = |key: &dyn Fn(&crate::result::NodeFacts) -> String| {
            let mut n: BTreeMap<String, usize> = BTreeMap::new();
            for node in &fp.nodes {
                *n.entry(key(node)).or_default() += 1;
            }
            let v: Vec<String> = n.iter().map(|(k, c)| format!("{k}: {c}")).collect();
            v.join(", ")
        };
        let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        out.insert(
            "cluster.nodes".into(),
            counted(&|n| format!("{}/{}", or_dash(&n.dc), or_dash(&n.rack))),
        );
        out.insert(
            "cluster.versions".into(),
            counted(&|n| or_dash(&n.release_version)),
        );
        out.insert(
            "cluster.tokens_per_node".into(),
            counted(&|n| n.tokens.to_string()),
        );
    }
    out
}

/// One run, as the summary shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// 1-based, in file order: how other rows refer to it.
    pub index: usize,
    pub env: String,
    pub path: PathBuf,
    pub workload: String,
    pub load: RunLoad,
    /// A share run: the row of the run it is a share of, when that run is in the report.
    pub source: Option<usize>,
    /// The main phase's achieved throughput and errors over the measured window.
    pub ops_per_s: f64,
    pub errors: u64,
    pub response: Percentiles,
    pub service: Percentiles,
    /// How late the open-loop client sent against its schedule (none in closed loop, and in
    /// results from before send lag was recorded).
    pub send_lag: Option<Percentiles>,
    /// The latency spectra of the run's own histograms: (percentile, ms), see [`spectrum`].
    pub response_spectrum: Vec<(f64, f64)>,
    pub service_spectrum: Vec<(f64, f64)>,
    pub settings: Settings,
    pub host: Option<HostCpu>,
    /// The hosts the run sampled over its measured window: the local host (/proc) and the
    /// nodes' hosts (node exporters), see [`super::hosts`].
    pub hosts: Vec<super::hosts::HostSummary>,
}

impl RunRow {
    /// The row of the run at `path`, whose main phase is `main` with `summary`.
    pub fn of(
        index: usize,
        path: &Path,
        run: &RunResult,
        main: &PhaseResult,
        summary: &PhaseSummary,
    ) -> Result<RunRow, ReportError> {
        let spectrum_of = |encoded: &str| {
            decode(encoded)
                .map(|h| spectrum(&h))
                .map_err(|e| ReportError::BadHistogram {
                    path: path.to_path_buf(),
                    message: e.0,
                })
        };
        let host = run
            .metrics
            .as_deref()
            .and_then(|m| crate::result::host_cpu(main, m))
            .map(|(share, client_cores, nodes_cores)| HostCpu {
                share,
                client_cores,
                nodes_cores,
            });
        Ok(RunRow {
            index,
            env: run.env.clone(),
            path: path.to_path_buf(),
            workload: run.workload.label(),
            load: RunLoad::of(run, main),
            source: None,
            ops_per_s: summary.ops_per_s,
            errors: summary.errors,
            response: summary.all.response,
            service: summary.all.service,
            send_lag: summary.send_lag,
            response_spectrum: spectrum_of(&summary.all.response_histogram_ns)?,
            service_spectrum: spectrum_of(&summary.all.service_histogram_ns)?,
            settings: Settings::of(run),
            host,
            hosts: run
                .metrics
                .as_deref()
                .map(|m| super::hosts::summaries(main, m))
                .unwrap_or_default(),
        })
    }

    /// The file name of the run (its path when it has none).
    pub fn name(&self) -> String {
        file_name(&self.path)
    }

    /// The load's target, and for a share the run it came from: `#1 tput.json` when that run
    /// is in the report, else the path the run recorded.
    pub fn target(&self) -> String {
        match (&self.load, self.source) {
            (RunLoad::Share { of, .. }, Some(i)) => {
                format!("{} (#{i} {})", self.load.target(), file_name(of))
            }
            (RunLoad::Share { of, .. }, None) => {
                format!("{} ({})", self.load.target(), of.display())
            }
            _ => self.load.target(),
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

fn num(v: f64) -> Cell {
    Cell::Num(Some(v))
}

macro_rules! ms {
    ($label:literal, $kind:ident, $f:ident) => {
        Column {
            key: $label,
            label: $label,
            decimals: 2,
            get: |r: &RunRow| num(r.$kind.$f),
        }
    };
}

/// The runs table's columns, after the run's number.
pub const SUMMARY_COLUMNS: [Column<RunRow>; 15] = [
    Column {
        key: "env",
        label: "env",
        decimals: 0,
        get: |r| text(&r.env),
    },
    Column {
        key: "run",
        label: "run",
        decimals: 0,
        get: |r| text(r.name()),
    },
    Column {
        key: "workload",
        label: "workload",
        decimals: 0,
        get: |r| text(&r.workload),
    },
    Column {
        key: "load",
        label: "load",
        decimals: 0,
        get: |r| text(r.load.mode()),
    },
    Column {
        key: "target",
        label: "target",
        decimals: 0,
        get: |r| text(r.target()),
    },
    Column {
        key: "ops_per_s",
        label: "ops/s",
        decimals: 0,
        get: |r| num(r.ops_per_s),
    },
    ms!("resp p50", response, p50_ms),
    ms!("resp p99", response, p99_ms),
    ms!("resp p99.9", response, p999_ms),
    ms!("svc p50", service, p50_ms),
    ms!("svc p99", service, p99_ms),
    ms!("svc p99.9", service, p999_ms),
    Column {
        key: "send lag p99",
        label: "send lag p99",
        decimals: 2,
        get: |r| Cell::Num(r.send_lag.map(|l| l.p99_ms)),
    },
    Column {
        key: "errors",
        label: "errors",
        decimals: 0,
        get: |r| num(r.errors as f64),
    },
    Column {
        key: "host_cpu_pct",
        label: "host CPU %",
        decimals: 0,
        get: |r| Cell::Num(r.host.map(|h| 100.0 * h.share)),
    },
];

/// The settings table's columns, after the run's number.
pub const SETTINGS_COLUMNS: [Column<RunRow>; 15] = [
    Column {
        key: "env",
        label: "env",
        decimals: 0,
        get: |r| text(&r.env),
    },
    Column {
        key: "rf",
        label: "RF",
        decimals: 0,
        get: |r| text(&r.settings.replication),
    },
    Column {
        key: "consistency",
        label: "CL write/read",
        decimals: 0,
        get: |r| text(&r.settings.consistency),
    },
    Column {
        key: "rows",
        label: "rows",
        decimals: 0,
        get: |r| num(r.settings.rows as f64),
    },
    Column {
        key: "rows_per_partition",
        label: "rows/partition",
        decimals: 0,
        get: |r| num(r.settings.rows_per_partition as f64),
    },
    Column {
        key: "nodes",
        label: "nodes",
        decimals: 0,
        get: |r| Cell::Num(r.settings.nodes.map(|n| n as f64)),
    },
    Column {
        key: "cluster_start_s",
        label: "start-up s",
        decimals: 0,
        get: |r| Cell::Num(r.settings.cluster_start_s),
    },
    Column {
        key: "heap",
        label: "heap",
        decimals: 0,
        get: |r| text(r.settings.heap.as_deref().unwrap_or("-")),
    },
    Column {
        key: "cassandra",
        label: "Cassandra",
        decimals: 0,
        get: |r| text(r.settings.cassandra.as_deref().unwrap_or("-")),
    },
    Column {
        key: "java",
        label: "Java",
        decimals: 0,
        get: |r| text(r.settings.java.as_deref().unwrap_or("-")),
    },
    Column {
        key: "client",
        label: "client",
        decimals: 0,
        get: |r| text(r.settings.client.as_deref().unwrap_or("-")),
    },
    Column {
        key: "host_cores",
        label: "host cores",
        decimals: 0,
        get: |r| num(r.settings.host_cores as f64),
    },
    Column {
        key: "host_cpu_pct",
        label: "host CPU %",
        decimals: 0,
        get: |r| Cell::Num(r.host.map(|h| 100.0 * h.share)),
    },
    Column {
        key: "cqlbench_cores",
        label: "cqlbench cores",
        decimals: 2,
        get: |r| Cell::Num(r.host.map(|h| h.client_cores)),
    },
    Column {
        key: "nodes_cores",
        label: "nodes cores",
        decimals: 2,
        get: |r| Cell::Num(r.host.and_then(|h| h.nodes_cores)),
    },
];

/// The runs table, the settings table, the server settings that differ, and the hosts the
/// runs sampled ([`super::hosts`]); none without runs.
pub fn tables(runs: &[RunRow]) -> Vec<Table> {
    if runs.is_empty() {
        return Vec::new();
    }
    let items: Vec<(String, &RunRow)> = runs.iter().map(|r| (format!("#{}", r.index), r)).collect();
    let mut out = vec![
        rows_table(SUMMARY_TITLE.into(), "#", &SUMMARY_COLUMNS, &items),
        rows_table(SETTINGS_TITLE.into(), "#", &SETTINGS_COLUMNS, &items),
    ];
    out.extend(server_settings_table(runs));
    out.extend(super::hosts::tables(&host_lines(runs)));
    out
}

/// Every host of every run, in run order (the rows of [`super::hosts::tables`]).
pub fn host_lines(runs: &[RunRow]) -> Vec<super::hosts::HostLine> {
    runs.iter()
        .flat_map(|r| {
            r.hosts.iter().map(|h| super::hosts::HostLine {
                run: r.index,
                env: r.env.clone(),
                summary: h.clone(),
            })
        })
        .collect()
}

/// The server settings whose values differ between the runs that recorded them, one row per
/// setting and one column per run (`-`: the run's server has no such setting); none when
/// fewer than two runs recorded settings or they all agree.
pub fn server_settings_table(runs: &[RunRow]) -> Option<Table> {
    let recorded: Vec<&RunRow> = runs
        .iter()
        .filter(|r| !r.settings.server.is_empty())
        .collect();
    if recorded.len() < 2 {
        return None;
    }
    let names: std::collections::BTreeSet<&String> = recorded
        .iter()
        .flat_map(|r| r.settings.server.keys())
        .collect();
    let mut rows: Vec<Vec<String>> = names
        .into_iter()
        .filter_map(|name| {
            let values: Vec<Option<&String>> = recorded
                .iter()
                .map(|r| r.settings.server.get(name))
                .collect();
            if !crate::result::compared_setting(name, &values) {
                return None;
            }
            // A table or keyspace exists only in the runs of its workload: its options are
            // compared among those runs, not against the runs of other workloads.
            let compared: Vec<&Option<&String>> = if name.starts_with("schema.") {
                values.iter().filter(|v| v.is_some()).collect()
            } else {
                values.iter().collect()
            };
            let differ = compared.iter().any(|v| *v != compared[0]);
            differ.then(|| {
                std::iter::once(name.clone())
                    .chain(values.iter().map(|v| v.map_or("-".into(), |v| v.clone())))
                    .collect()
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    if rows.len() > SERVER_SETTINGS_ROWS {
        let more = rows.len() - SERVER_SETTINGS_ROWS;
        rows.truncate(SERVER_SETTINGS_ROWS);
        rows.push(vec![format!(
            "… and {more} more (in each result's fingerprint)"
        )]);
    }
    Some(Table {
        title: SERVER_SETTINGS_TITLE.into(),
        header: std::iter::once("setting".to_string())
            .chain(recorded.iter().map(|r| format!("#{} {}", r.index, r.env)))
            .collect(),
        rows,
        text_columns: (1..=recorded.len()).collect(),
    })
}

/// Each share run's source row, when the run it is a share of is in the report.
pub(super) fn link_sources(runs: &mut [RunRow]) {
    let paths: Vec<(usize, PathBuf)> = runs.iter().map(|r| (r.index, r.path.clone())).collect();
    for r in runs.iter_mut() {
        if let RunLoad::Share { of, .. } = &r.load {
            r.source = paths
                .iter()
                .find(|(_, p)| crate::fsutil::same_file(p, of))
                .map(|(i, _)| *i);
        }
    }
}

/// Runs of the same workload with two or more runs, in order of their first run: the runs
/// whose latency spectra are drawn together.
pub fn comparable(runs: &[RunRow]) -> Vec<(String, Vec<&RunRow>)> {
    let mut out: Vec<(String, Vec<&RunRow>)> = Vec::new();
    for r in runs {
        match out.iter_mut().find(|(w, _)| *w == r.workload) {
            Some((_, v)) => v.push(r),
            None => out.push((r.workload.clone(), vec![r])),
        }
    }
    out.retain(|(_, v)| v.len() >= 2);
    out
}

/// Why the latencies of runs `a` and `b` do not compare, in one line: their load modes differ
/// (open loop at a rate against closed loop) or their targets do (rates more than 1% apart,
/// other concurrencies, other shares). Runs at the same share of each one's own throughput
/// compare, as the report's scenarios do. None when they compare or either has no main phase.
pub fn not_comparable(a: &RunResult, b: &RunResult) -> Option<String> {
    let load = |r: &RunResult| {
        let main = r.main_phase()?;
        Some(RunLoad::of(r, main))
    };
    let (la, lb) = (load(a)?, load(b)?);
    let describe = |l: &RunLoad| match l {
        RunLoad::Closed { .. } => format!("closed loop ({})", l.target()),
        RunLoad::Fixed { .. } => format!("a fixed rate ({})", l.target()),
        RunLoad::Share { .. } => format!("a share of a run ({})", l.target()),
    };
    let same_target = match (&la, &lb) {
        (RunLoad::Closed { concurrency: x }, RunLoad::Closed { concurrency: y }) => x == y,
        (RunLoad::Share { share: x, .. }, RunLoad::Share { share: y, .. }) => (x - y).abs() < 1e-9,
        (RunLoad::Closed { .. }, _) | (_, RunLoad::Closed { .. }) => false,
        (x, y) => {
            let rate = |l: &RunLoad| match l {
                RunLoad::Fixed { rate_per_s } | RunLoad::Share { rate_per_s, .. } => *rate_per_s,
                RunLoad::Closed { .. } => 0.0,
            };
            (rate(x) - rate(y)).abs() <= 0.01 * rate(x).max(rate(y))
        }
    };
    if same_target {
        return None;
    }
    let why = match la.is_open() == lb.is_open() {
        true => "their targets differ",
        false => "open loop against closed loop: closed-loop latency leaves the queueing out",
    };
    Some(format!(
        "A is {}, B is {}: {why}, so their latencies are not comparable",
        describe(&la),
        describe(&lb)
    ))
}
