//! Where a run goes, and what can be observed there. A local cluster offers its nodes'
//! addresses, processes (CPU), exporters (server metrics) and the host's /proc; a set of hosts
//! offers contact points and whatever Prometheus endpoints are given; its data centre is read
//! from `system.local` when not given. (A Kubernetes deployment will be a third kind.) The
//! session's contact points and local DC, the default replication, the metric sources and
//! which overload criteria can be measured all come from here.

use std::collections::BTreeMap;
use std::path::Path;

use crate::cluster::{Cluster, ClusterError};
use crate::metrics::node_exporter::NodeExporter;
use crate::metrics::sampler::{Endpoint, MetricsPlan};
use crate::spec::ClusterSpec;

/// The kind of place a run goes to.
#[derive(Debug, Clone)]
pub enum Place {
    /// A local cluster cqlbench manages.
    Local(Box<Cluster>),
    /// Any cluster, by contact points `host[:port]`.
    Hosts(Vec<String>),
}

/// Where a run goes.
#[derive(Debug, Clone)]
pub struct Target {
    pub place: Place,
    /// The client's data centre, when given.
    pub dc: Option<String>,
    /// Prometheus endpoints to sample instead of (or, for hosts, as) the server's metrics.
    pub prometheus: Vec<Endpoint>,
    /// The node exporters of the nodes' hosts: their CPU, disks, memory and network.
    pub node_exporters: Vec<NodeExporter>,
    /// The network namespace the client runs in (a lab's), if not this host's own network.
    pub netns: Option<String>,
}

/// What can be observed on a target besides the client's own measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observable {
    /// Server metrics (pending compactions, dropped messages, …) from metrics endpoints.
    pub server_metrics: bool,
    /// Node CPU: from local processes, or the endpoints' process CPU.
    pub node_cpu: bool,
    /// The host's CPU and disks from /proc (the nodes run here).
    pub host: bool,
}

impl Target {
    /// A local cluster by name, looked up in `clusters`.
    pub fn local(clusters: &Path, name: &str) -> Result<Target, ClusterError> {
        Ok(Target {
            place: Place::Local(Box::new(Cluster::open(clusters, name)?)),
            dc: None,
            prometheus: vec![],
            node_exporters: vec![],
            netns: None,
        })
    }

    /// Any cluster by its contact points.
    pub fn hosts(hosts: Vec<String>) -> Target {
        Target {
            place: Place::Hosts(hosts),
            dc: None,
            prometheus: vec![],
            node_exporters: vec![],
            netns: None,
        }
    }

    pub fn cluster(&self) -> Option<&Cluster> {
        match &self.place {
            Place::Local(c) => Some(c),
            Place::Hosts(_) => None,
        }
    }

    /// The spec of a local cluster.
    pub fn cluster_spec(&self) -> Option<ClusterSpec> {
        self.cluster().map(|c| c.state.spec.clone())
    }

    /// A local cluster's own client TLS (its CA and client certificate), when it has TLS.
    pub fn cluster_tls(&self) -> Option<crate::spec::client::TlsSpec> {
        self.cluster().and_then(Cluster::client_tls)
    }

    /// The addresses the client connects to.
    pub fn contact_points(&self) -> Vec<String> {
        match &self.place {
            Place::Local(c) => c.nodes().iter().map(|n| n.address.clone()).collect(),
            Place::Hosts(h) => h.clone(),
        }
    }

    /// The client's data centre: as given, else a local cluster's first; `None` for hosts
    /// means "read it from the node first connected to".
    pub fn local_dc(&self) -> Option<String> {
        self.dc
            .clone()
            .or_else(|| self.cluster().map(|c| c.state.spec.dcs[0].name.clone()))
    }

    /// Replication when none is given: min(3, nodes) in each DC of a local cluster; for hosts,
    /// `None` (one replica in the local DC, once it is known).
    pub fn default_replication(&self) -> Option<BTreeMap<String, u32>> {
        self.cluster().map(|c| {
            c.state
                .spec
                .dcs
                .iter()
                .map(|d| (d.name.clone(), d.nodes.min(3) as u32))
                .collect()
        })
    }

    /// What to sample every `interval_s`: the given Prometheus endpoints (plus the host's /proc
    /// for a local cluster), else a local cluster's exporters, processes and /proc, else the
    /// nodes' virtual tables through CQL.
    /// The node exporters given are sampled beside either.
    pub fn metrics_plan(&self, interval_s: f64) -> MetricsPlan {
        MetricsPlan {
            node_exporters: self.node_exporters.clone(),
            interval_s,
            ..self.server_plan(interval_s)
        }
    }

    fn server_plan(&self, interval_s: f64) -> MetricsPlan {
        if !self.prometheus.is_empty() {
            let n = self.prometheus.len();
            return MetricsPlan {
                endpoints: self.prometheus.clone(),
                pids: vec![None; n],
                node_cpus: vec![0.0; n],
                host: self.cluster().is_some(),
                interval_s,
                node_devices: Vec::new(),
                node_exporters: Vec::new(),
                through_cql: false,
                reader: None,
            };
        }
        match self.cluster() {
            Some(c) => local_plan(c, interval_s),
            // No endpoint given: the nodes' own virtual tables, through CQL.
            None => MetricsPlan {
                through_cql: true,
                interval_s,
                ..MetricsPlan::default()
            },
        }
    }

    /// What the target lets a run observe. Hosts with no endpoint given are read through CQL
    /// (Cassandra 4.0+): whether that serves a figure is for `metrics check` to find.
    pub fn observable(&self) -> Observable {
        let endpoints = !self.prometheus.is_empty() || self.cluster().is_some();
        Observable {
            server_metrics: true,
            node_cpu: endpoints || !self.node_exporters.is_empty(),
            host: self.cluster().is_some(),
        }
    }

    /// The label results get when no environment is given: the cluster's name, else "hosts".
    pub fn label(&self) -> String {
        match &self.place {
            Place::Local(c) => c.name().to_string(),
            Place::Hosts(_) => "hosts".into(),
        }
    }

    /// Where the load went, as the result records it.
    pub fn record(&self) -> crate::result::TargetRecord {
        crate::result::TargetRecord {
            hosts: self.contact_points(),
            local_dc: self.local_dc(),
            cluster: self.cluster().map(|c| c.name().to_string()),
            netns: self.netns.clone(),
            reach: None,
        }
    }
}

/// A local cluster's plan: every node's exporter and process, and the host's /proc.
fn local_plan(c: &Cluster, interval_s: f64) -> MetricsPlan {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64;
    MetricsPlan {
        endpoints: c
            .nodes()
            .iter()
            .map(|n| Endpoint {
                node: n.name.clone(),
                host: n.address.clone(),
                port: n.metrics_port,
            })
            .collect(),
        pids: c.nodes().iter().map(|n| c.pid(n)).collect(),
        node_cpus: c
            .nodes()
            .iter()
            .map(|n| {
                if n.cpus.is_empty() {
                    cores
                } else {
                    n.cpus.len() as f64
                }
            })
            .collect(),
        host: true,
        interval_s,
        node_devices: c
            .nodes()
            .iter()
            .filter_map(|n| {
                let (disk, class) = c.disk(n)?;
                let device = disk.device()?.trim_start_matches("/dev/").to_string();
                Some(crate::result::series::NodeDevice {
                    node: n.name.clone(),
                    dc: n.dc.clone(),
                    device,
                    class: class.describe(),
                    monthly_usd: class.monthly_usd,
                })
            })
            .collect(),
        node_exporters: Vec::new(),
        through_cql: false,
        reader: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_observe_their_endpoints_else_their_virtual_tables() {
        let mut t = Target::hosts(vec!["10.0.0.1".into(), "10.0.0.2:9043".into()]);
        assert_eq!(t.contact_points(), ["10.0.0.1", "10.0.0.2:9043"]);
        assert_eq!(t.local_dc(), None, "read from system.local at connect");
        assert_eq!(t.default_replication(), None);
        assert_eq!(t.label(), "hosts");
        assert_eq!(
            t.observable(),
            Observable {
                server_metrics: true,
                node_cpu: false,
                host: false
            }
        );
        // No endpoint: the nodes are read through CQL, once the load layer connects.
        let cql = t.metrics_plan(1.0);
        assert!(cql.through_cql && cql.endpoints.is_empty() && !cql.is_empty());
        t.prometheus = vec![Endpoint::parse("10.0.0.1:9500").unwrap()];
        t.dc = Some("eu".into());
        assert!(t.observable().server_metrics && !t.observable().host);
        let m = t.metrics_plan(2.0);
        assert_eq!((m.endpoints.len(), m.host, m.interval_s), (1, false, 2.0));
        assert!(!m.through_cql);
        let r = t.record();
        assert_eq!((r.local_dc.as_deref(), r.cluster), (Some("eu"), None));
    }
}
