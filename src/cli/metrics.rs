//! `cqlbench metrics check`: per node, which figures each metric source serves, and what a
//! capacity search or a fill could measure with them.

use std::time::Duration;

use anyhow::bail;
use clap::{Args, Subcommand, ValueEnum};

use crate::format::Table;
use crate::metrics::check::{Figure, MetricsCheck};
use crate::scenario::steps::run::Reach;
use crate::spec::parse_duration;

#[derive(Debug, Subcommand)]
pub enum MetricsCommand {
    /// Read every metric source a load command would (the nodes' metrics endpoints, local
    /// nodes' processes, node exporters, a Prometheus server) and list, per node, which
    /// figures each serves; then which capacity criteria and whether a fill's target could
    /// be measured.
    Check(Box<CheckArgs>),
    /// Print the Prometheus JMX exporter configuration cqlbench gives local nodes (the MBeans
    /// it reads, no rules): install it with the exporter's agent on your own nodes
    /// (`-javaagent:jmx_prometheus_javaagent-1.0.1.jar=PORT:exporter.yaml`) and pass
    /// `--prometheus HOST:PORT,…`.
    ExporterConfig,
}

/// A command whose measurements the check is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum For {
    /// A fill: the nodes' load (its target).
    Fill,
    /// A capacity search: pending compactions on every node, node CPU.
    Capacity,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A local cluster by name (see `cqlbench cluster`).
    #[arg(long, conflicts_with = "hosts")]
    pub cluster: Option<String>,
    /// Any cluster: contact points `host[:port],…` (the names --node-exporter and
    /// --prometheus-instance give nodes by).
    #[arg(long, value_delimiter = ',', value_parser = crate::spec::workload::parse_host)]
    pub hosts: Vec<String>,
    /// The nodes' Prometheus endpoints, [http://]host:port,… (as for `run`; each node is named
    /// by its endpoint's address).
    #[arg(long, value_delimiter = ',')]
    pub prometheus: Vec<String>,
    /// A node's host's node exporter, NODE=URL (repeat for more).
    #[arg(long, value_name = "NODE=URL")]
    pub node_exporter: Vec<String>,
    /// A Prometheus server scraping the nodes and their hosts, http[s]://HOST:PORT: its last
    /// two minutes are read.
    #[arg(long, value_name = "URL")]
    pub prometheus_server: Option<String>,
    /// A node's instance on --prometheus-server, NODE=INSTANCE (repeat for more).
    #[arg(long, value_name = "NODE=INSTANCE", requires = "prometheus_server")]
    pub prometheus_instance: Vec<String>,
    /// Basic-auth credentials for --prometheus-server (two lines: user, password).
    #[arg(long, value_name = "FILE", requires = "prometheus_server")]
    pub prometheus_credentials: Option<std::path::PathBuf>,
    /// A bearer token for --prometheus-server (the file's first line).
    #[arg(
        long,
        value_name = "FILE",
        requires = "prometheus_server",
        conflicts_with = "prometheus_credentials"
    )]
    pub prometheus_token: Option<std::path::PathBuf>,
    /// The CA certificate (PEM) of an https --prometheus-server.
    #[arg(long, value_name = "FILE", requires = "prometheus_server")]
    pub prometheus_ca: Option<std::path::PathBuf>,
    /// How long each source may take to answer.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub timeout: Duration,
    /// Exit 1 (with one line naming what is missing) when this command could not measure
    /// what it needs.
    #[arg(long = "for", value_enum, ignore_case = true, value_name = "COMMAND")]
    pub for_command: Option<For>,
    /// Read from inside this network namespace (a lab's) [default: on a lab cluster, its
    /// first loader namespace].
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Print the check as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: MetricsCommand) -> anyhow::Result<()> {
    match cmd {
        MetricsCommand::Check(a) => check(*a),
        MetricsCommand::ExporterConfig => {
            print!("{}", crate::cluster::render::exporter_yaml());
            Ok(())
        }
    }
}

fn check(a: CheckArgs) -> anyhow::Result<()> {
    if a.timeout < Duration::from_millis(100) {
        bail!("--timeout must be at least 100ms");
    }
    super::enter_netns_for(a.netns.as_deref(), a.cluster.as_deref())?;
    let reach = Reach {
        cluster: a.cluster.as_deref(),
        hosts: &a.hosts,
        dc: None,
        prometheus: &a.prometheus,
        node_exporter: &a.node_exporter,
        prometheus_server: a.prometheus_server.as_deref(),
        prometheus_instance: &a.prometheus_instance,
        prometheus_credentials: a.prometheus_credentials.as_deref(),
        prometheus_token: a.prometheus_token.as_deref(),
        prometheus_ca: a.prometheus_ca.as_deref(),
    };
    let ctx = super::context(None, true);
    let found = crate::scenario::steps::metrics_check::run(&reach, &ctx, a.timeout)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        print!("{}", text(&found));
    }
    // A server that gave nothing (refused the credentials, did not answer, has none of the
    // nodes) fails the check: it was asked for.
    if let Some(e) = &found.server_error {
        bail!("metrics check: {e}");
    }
    match a.for_command {
        Some(For::Fill) => {
            if let Some(why) = found.fill_blind() {
                bail!("metrics check: a fill could not see its target: {why}");
            }
        }
        Some(For::Capacity) => {
            let blind = found.capacity_blind(true, true);
            if !blind.is_empty() {
                bail!(
                    "metrics check: a capacity search could not measure {}",
                    blind.join(" or ")
                );
            }
        }
        None => {}
    }
    Ok(())
}

/// The check as a person reads it: a row per node and source, the exporters, and what each
/// command could measure.
fn text(c: &MetricsCheck) -> String {
    let mark = |from: &Option<String>| {
        from.as_deref()
            .map_or("✗".to_string(), |f| format!("✓ {f}"))
    };
    let mut rows: Vec<Vec<String>> = c
        .nodes
        .iter()
        .map(|n| {
            let mut row = vec![n.node.clone(), n.source.clone()];
            match &n.error {
                Some(e) => row.extend(
                    Figure::ALL
                        .iter()
                        .map(|_| "-".to_string())
                        .chain([e.clone()]),
                ),
                None => row.extend(
                    n.figures
                        .iter()
                        .map(|(_, from)| mark(from))
                        .chain([String::new()]),
                ),
            }
            row
        })
        .collect();
    rows.extend(c.exporters.iter().map(|e| {
        let mut row = vec![e.node.clone(), format!("node exporter {}", e.address)];
        row.extend(Figure::ALL.iter().map(|&f| match (&e.error, f) {
            (None, Figure::Cpu) => "✓ host's CPU".to_string(),
            (None, _) => String::new(),
            (Some(_), _) => "-".to_string(),
        }));
        row.push(e.error.clone().unwrap_or_default());
        row
    }));
    let header = ["node", "source"]
        .into_iter()
        .map(String::from)
        .chain(Figure::ALL.iter().map(|f| f.name().to_string()))
        .chain(["error".to_string()])
        .collect();
    let mut out = Table {
        title: "Metric sources, read now".into(),
        header,
        rows,
        text_columns: (1..=Figure::ALL.len() + 2).collect(),
    }
    .text();
    if let Some(e) = &c.server_error {
        out.push_str(&format!("Prometheus server: {e}\n"));
    }
    if let Some(e) = &c.cql_error {
        out.push_str(&format!("CQL (system_views): {e}\n"));
    }
    let verdict = |missing: Vec<String>| {
        if missing.is_empty() {
            "measurable".to_string()
        } else {
            format!("not measurable: {}", missing.join(", "))
        }
    };
    out.push_str(&format!(
        "capacity search, server-side criteria (pending compactions, node CPU): {}\n",
        verdict(c.capacity_blind(true, true))
    ));
    out.push_str(&format!(
        "fill target (the nodes' load): {}\n",
        verdict(c.fill_blind().into_iter().collect())
    ));
    out
}
