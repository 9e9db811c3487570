//! Which server figures a cluster lets cqlbench read, node by node and source by source, and so
//! which of a capacity search's criteria and whether a fill's target can be measured
//! (`cqlbench metrics check`; a capacity search runs the same check before its first step).

use std::time::{Duration, Instant};

use serde::Serialize;

use super::node_exporter::{self, NodeExporter};
use super::reading::NodeReading;
use super::sampler::{MetricsPlan, scrape_all};
use super::scrape::ScrapeError;
use crate::result::series::{Fetched, NodeSample};

/// A figure the criteria and the fill read from the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Figure {
    /// The data a node holds (a fill's target).
    Load,
    /// Pending compactions (a capacity criterion, and the settle before each step).
    Pending,
    /// The node's CPU as a share of its CPUs (a capacity criterion).
    Cpu,
    /// SSTables read per read (shown in the report; reference 000 quotes it).
    SstablesPerRead,
}

impl Figure {
    pub const ALL: [Figure; 4] = [
        Figure::Load,
        Figure::Pending,
        Figure::Cpu,
        Figure::SstablesPerRead,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Figure::Load => "load",
            Figure::Pending => "pending compactions",
            Figure::Cpu => "node CPU",
            Figure::SstablesPerRead => "SSTables per read",
        }
    }
}

/// One node's figures from one source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeCheck {
    pub node: String,
    /// Where they were read: `host:port` of its metrics endpoint, or the Prometheus server.
    pub source: String,
    /// Why the source gave nothing (it did not answer), if so.
    pub error: Option<String>,
    /// Each figure of [`Figure::ALL`] and where it came from (`None`: not served).
    pub figures: Vec<(Figure, Option<String>)>,
}

impl NodeCheck {
    pub fn has(&self, f: Figure) -> bool {
        self.figures
            .iter()
            .any(|(g, from)| *g == f && from.is_some())
    }
}

/// A node exporter's answer: the host CPU it gives the node it names, or why none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExporterCheck {
    pub node: String,
    pub address: String,
    pub error: Option<String>,
}

/// Everything a check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MetricsCheck {
    pub nodes: Vec<NodeCheck>,
    pub exporters: Vec<ExporterCheck>,
    /// Why a Prometheus server asked gave nothing, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_error: Option<String>,
    /// Why the nodes could not be read through CQL (no endpoint was given), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cql_error: Option<String>,
}

impl MetricsCheck {
    /// The nodes (by name) that serve `f` from some source, and those that do not.
    pub fn coverage(&self, f: Figure) -> (Vec<&str>, Vec<&str>) {
        let mut names: Vec<&str> = self.nodes.iter().map(|n| n.node.as_str()).collect();
        names.sort();
        names.dedup();
        names.into_iter().partition(|name| {
            self.nodes.iter().any(|n| n.node == *name && n.has(f))
                || (f == Figure::Cpu && self.exporter_of(name).is_some())
        })
    }

    /// What of `f` is missing: `None` when every node serves it, else the nodes without it
    /// ("pending compactions (node2, node3)", or "… (no source)" with no node at all).
    pub fn missing(&self, f: Figure) -> Option<String> {
        let (with, without) = self.coverage(f);
        match (with.is_empty(), without.is_empty()) {
            (_, false) => Some(format!("{} ({})", f.name(), without.join(", "))),
            (true, true) => Some(format!("{} (no source)", f.name())),
            (false, true) => None,
        }
    }

    /// What a capacity search could not measure of its server-side criteria: pending
    /// compactions on every node (the settle and the criterion read all of them), node CPU on
    /// at least one node (the criterion takes the busiest that gives it).
    pub fn capacity_blind(&self, pending: bool, cpu: bool) -> Vec<String> {
        let mut out = Vec::new();
        if pending && let Some(m) = self.missing(Figure::Pending) {
            out.push(m);
        }
        if cpu && self.coverage(Figure::Cpu).0.is_empty() {
            out.push(format!("{} (no node gives it)", Figure::Cpu.name()));
        }
        out
    }

    /// A node exporter that answered for node `name` (its host's CPU stands in for the node's).
    fn exporter_of(&self, name: &str) -> Option<&ExporterCheck> {
        self.exporters.iter().find(|e| {
            e.error.is_none()
                && self
                    .nodes
                    .iter()
                    .any(|n| n.node == name && (e.node == n.node || host_of(&n.source) == e.node))
        })
    }

    /// Why a fill could not see its target, if it could not: no node's load is readable.
    pub fn fill_blind(&self) -> Option<String> {
        let (with, _) = self.coverage(Figure::Load);
        if !with.is_empty() {
            return None;
        }
        let answered: Vec<&str> = self
            .nodes
            .iter()
            .filter(|n| n.error.is_none())
            .map(|n| n.source.as_str())
            .collect();
        Some(match self.nodes.iter().find_map(|n| n.error.as_deref()) {
            _ if self.nodes.is_empty() => match &self.cql_error {
                Some(e) => format!(
                    "no metrics endpoint, and the nodes' virtual tables could not be read through CQL ({e}); give --prometheus host:port,…, or a local cluster"
                ),
                None => "no metrics endpoint (--prometheus host:port,…, or a local cluster)".into(),
            },
            Some(e) if answered.is_empty() => format!("no metrics endpoint answered ({e})"),
            _ => format!(
                "{} answered without the nodes' load (Cassandra's Storage Load metric, in the naming of cqlbench's JMX exporter rules, the Management API or MCAC; or system_views.disk_usage through CQL)",
                answered.join(", ")
            ),
        })
    }
}

/// `host` of `host:port`.
fn host_of(address: &str) -> &str {
    address.rsplit_once(':').map_or(address, |(h, _)| h)
}

/// Each node's CPU seconds now, aligned with `readings` (a scrape of each endpoint): a local
/// node's process's by its PID (`pids`, aligned the same way), else the endpoint's process CPU
/// counter.
pub fn cpu_seconds(
    pids: &[Option<u32>],
    readings: &[Result<NodeReading, ScrapeError>],
) -> Vec<Option<f64>> {
    (0..readings.len())
        .map(|i| match pids.get(i).copied().flatten() {
            Some(pid) => super::procfs::pid_cpu_seconds(pid),
            None => readings[i].as_ref().ok().and_then(|r| r.cpu_seconds),
        })
        .collect()
}

/// Reads `plan`'s sources twice, a second apart (CPU is a rate), each within `timeout`: every
/// metrics endpoint with its node's process where local, and every node exporter.
pub fn check(plan: &MetricsPlan, timeout: Duration) -> MetricsCheck {
    let first = scrape_all(plan, timeout);
    let (t0, cpu0) = (Instant::now(), cpu_seconds(&plan.pids, &first));
    std::thread::sleep(Duration::from_secs(1));
    let second = scrape_all(plan, timeout);
    let cpu1 = cpu_seconds(&plan.pids, &second);
    let secs = t0.elapsed().as_secs_f64();
    let nodes = plan
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let reading = second[i].as_ref().or(first[i].as_ref());
            let local = plan.pids.get(i).copied().flatten().is_some();
            let cpus = plan.node_cpus.get(i).copied().unwrap_or(0.0);
            // Its CPU time counted over the second, and the CPUs to divide it by.
            let counted = cpus > 0.0
                && secs > 0.0
                && matches!((cpu1[i], cpu0[i]), (Some(n), Some(p)) if n >= p);
            let cpu = match reading {
                _ if counted && local => Some("process (/proc)".to_string()),
                Ok(_) if counted => Some("endpoint (process CPU)".into()),
                Ok(r) if r.cpu_share.is_some() => Some("endpoint (JVM's share of its host)".into()),
                _ => None,
            };
            let r = reading.ok();
            // A figure is served in the node's dialect (its endpoint's naming, or CQL).
            let dialect = r.and_then(|r| r.dialect).unwrap_or("endpoint");
            let served = |has: bool| has.then(|| dialect.to_string());
            let via = if plan.through_cql { " (CQL)" } else { "" };
            NodeCheck {
                node: e.node.clone(),
                source: format!("{}:{}{via}", e.host, e.port),
                error: reading.err().map(|err| err.message.clone()),
                figures: vec![
                    (
                        Figure::Load,
                        served(r.is_some_and(|r| r.load_bytes.is_some())),
                    ),
                    (
                        Figure::Pending,
                        served(r.is_some_and(|r| r.pending_compactions.is_some())),
                    ),
                    (Figure::Cpu, cpu),
                    (
                        Figure::SstablesPerRead,
                        served(r.is_some_and(|r| r.sstables_per_read.is_some())),
                    ),
                ],
            }
        })
        .collect();
    MetricsCheck {
        nodes,
        exporters: plan
            .node_exporters
            .iter()
            .map(|e| exporter(e, timeout))
            .collect(),
        server_error: None,
        cql_error: None,
    }
}

fn exporter(e: &NodeExporter, timeout: Duration) -> ExporterCheck {
    ExporterCheck {
        node: e.node.clone(),
        address: e.address(),
        error: node_exporter::scrape(e, timeout)
            .err()
            .map(|e| e.to_string()),
    }
}

/// The nodes' figures in what a Prometheus server returned for a recent window: a figure is
/// served where any step of the window holds it; a node's CPU where its own series give it
/// (the JVM's share) or its host has a node exporter's series on the server.
pub fn from_server(f: &Fetched) -> Vec<NodeCheck> {
    let any = |i: usize, get: fn(&NodeSample) -> bool| {
        f.samples.iter().any(|s| s.nodes.get(i).is_some_and(get))
    };
    // A host instance is one with `node_cpu_seconds_total`: its CPU is there (its rate needs
    // two scrapes, which a window just after the server started may not hold yet).
    let host_cpu = |node: &str| f.hosts.iter().any(|h| h.node == node);
    let from = |has: bool, what: &str| has.then(|| what.to_string());
    let mut out: Vec<NodeCheck> = f
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| NodeCheck {
            node: n.node.clone(),
            source: format!("{} (instance {})", f.server, n.instance),
            error: None,
            figures: vec![
                (
                    Figure::Load,
                    from(any(i, |s| s.load_bytes.is_some()), "Prometheus server"),
                ),
                (
                    Figure::Pending,
                    from(
                        any(i, |s| s.pending_compactions.is_some()),
                        "Prometheus server",
                    ),
                ),
                (
                    Figure::Cpu,
                    from(
                        any(i, |s| s.cpu_share.is_some()),
                        "Prometheus server (JVM's share)",
                    )
                    .or_else(|| from(host_cpu(&n.node), "Prometheus server (node exporter)")),
                ),
                (
                    Figure::SstablesPerRead,
                    from(
                        any(i, |s| s.sstables_per_read.is_some()),
                        "Prometheus server",
                    ),
                ),
            ],
        })
        .collect();
    // Hosts whose node has no Cassandra series on the server: its CPU alone.
    for h in &f.hosts {
        if !out.iter().any(|n| n.node == h.node) {
            out.push(NodeCheck {
                node: h.node.clone(),
                source: format!("{} (instance {})", f.server, h.exporter),
                error: None,
                figures: Figure::ALL
                    .iter()
                    .map(|&g| {
                        (
                            g,
                            from(
                                g == Figure::Cpu && host_cpu(&h.node),
                                "Prometheus server (node exporter)",
                            ),
                        )
                    })
                    .collect(),
            });
        }
    }
    out
}
