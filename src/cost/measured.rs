//! The hardware a throughput was measured on, as its run result records it (the fingerprint:
//! host facts, the local cluster's spec with its emulation settings, the host probe), and how
//! it compares with the instance type a cost prices.
//!
//! A capacity measured on one laptop node, the client on the same CPUs, says little about an
//! 8-vCPU cloud instance: wherever a measured throughput is priced, this is printed beside the
//! instance, and what differs is said as a warning.

use std::path::Path;

use serde::Serialize;

use crate::format::thousands;
use crate::prices::catalog::Instance;
use crate::result::capacity::CapacityResult;
use crate::result::{RunResult, ScalingResult};

/// RAM per node within this share of the instance's counts as the same (a host reports a little
/// less than its nominal RAM).
const RAM_TOLERANCE: f64 = 0.10;

/// What a local cluster emulated on its host (`cqlbench cluster create` flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Emulation {
    /// `--host-cpus`: the nodes shared the host's first K CPUs.
    pub host_cpus: Option<usize>,
    /// `--cpus-per-node`: each node pinned to this many CPUs.
    pub cpus_per_node: Option<usize>,
    /// `--node-memory`: each node's memory limit, MiB.
    pub node_memory_mib: Option<u64>,
    /// `--storage`: the emulated disks, e.g. "dc1: gp3 500 GiB: 3000 IOPS, 125 MB/s".
    pub disks: Vec<String>,
}

impl Emulation {
    fn is_empty(&self) -> bool {
        *self == Emulation::default()
    }
}

/// The hardware a throughput was measured on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hardware {
    /// The run result the facts come from.
    pub run: String,
    /// CPUs and RAM of the host cqlbench ran on (the client's host).
    pub host_cpus: usize,
    pub host_ram_gb: f64,
    pub cpu_model: String,
    /// The servers ran on that host: a local cluster, or contact points on the loopback.
    pub servers_on_host: bool,
    /// Nodes of the local cluster (none when cqlbench did not start the cluster).
    pub nodes: Option<u32>,
    /// The client ran on the host the nodes ran on (none: not known).
    pub client_on_host: Option<bool>,
    pub emulation: Emulation,
    /// The host probe the run refers to, e.g. "probe.json: CPU 1,234 events/s, 4k read 9,000 IOPS".
    pub probe: Option<String>,
    /// The contact points, when the servers were elsewhere.
    pub hosts: Vec<String>,
}

fn loopback(host: &str) -> bool {
    let h = host.rsplit_once(':').map_or(host, |(h, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) && !h.ends_with(':') {
            h
        } else {
            host
        }
    });
    let h = h.trim_start_matches('[').trim_end_matches(']');
    h == "localhost" || h.starts_with("127.") || h == "::1"
}

/// `7.6 GB`, `64 GB`.
fn gb(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1} GB")
    } else {
        format!("{} GB", thousands(v))
    }
}

/// `2`, `0.67`.
fn cpus(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Why the hardware a result was measured on is not known.
#[derive(Debug, thiserror::Error)]
pub enum HardwareError {
    #[error(transparent)]
    Read(#[from] crate::result::ResultError),
    #[error("the search has no step")]
    NoStep,
    #[error("no size measured a capacity")]
    NoSize,
    /// Whose run results were left unread (a result given by its figures alone).
    #[error("{0} were not read")]
    NotRead(&'static str),
}

impl Hardware {
    /// The facts of `run`, read from `file`.
    pub fn of_run(run: &RunResult, file: &str) -> Hardware {
        let f = &run.fingerprint;
        let cluster = f.cluster.as_ref();
        let servers_on_host = cluster.is_some()
            || (!run.target.hosts.is_empty() && run.target.hosts.iter().all(|h| loopback(h)));
        let emulation = cluster
            .map(|c| Emulation {
                host_cpus: c.host_cpus,
                cpus_per_node: c.cpus_per_node,
                node_memory_mib: c.node_memory.map(|m| m.0),
                disks: c
                    .storage
                    .iter()
                    .map(|(dc, d)| format!("{dc}: {}", d.describe()))
                    .collect(),
            })
            .unwrap_or_default();
        let probe = f.probe.as_ref().map(|p| {
            let s = &p.summary;
            let mut figures = Vec::new();
            if let Some(c) = s.cpu_events_s {
                figures.push(format!("CPU {} events/s", thousands(c)));
            }
            if let Some(i) = s.disk_iops {
                figures.push(format!("4k random read {} IOPS", thousands(i)));
            }
            if let Some(m) = s.disk_mb_s {
                figures.push(format!("64k write {} MB/s", thousands(m)));
            }
            match figures.is_empty() {
                true => p.path.display().to_string(),
                false => format!("{}: {}", p.path.display(), figures.join(", ")),
            }
        });
        Hardware {
            run: file.to_string(),
            host_cpus: f.host.cores,
            host_ram_gb: f.host.ram_bytes as f64 / f64::from(1u32 << 30),
            cpu_model: f.host.cpu_model.clone(),
            servers_on_host,
            nodes: cluster.and_then(|c| u32::try_from(c.node_count()).ok()),
            client_on_host: servers_on_host.then_some(true),
            emulation,
            probe,
            hosts: if servers_on_host {
                Vec::new()
            } else {
                run.target.hosts.clone()
            },
        }
    }

    /// The facts of the run result at `path`.
    pub fn read_run(path: &Path) -> Result<Hardware, HardwareError> {
        let run = crate::result::read_run(path)?;
        Ok(Hardware::of_run(&run, &path.display().to_string()))
    }

    /// The facts of the step a capacity search's verdict rests on (its highest passing step,
    /// else its first), whose run result lies beside the search's file at `path`.
    pub fn of_capacity(r: &CapacityResult, path: &Path) -> Result<Hardware, HardwareError> {
        let step = r
            .highest_passing_step()
            .or(r.steps.first())
            .ok_or(HardwareError::NoStep)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Hardware::read_run(&dir.join(&step.result))
    }

    /// The facts of the capacity-search result at `path`.
    pub fn read_capacity(path: &Path) -> Result<Hardware, HardwareError> {
        let r = crate::result::read_capacity(path)?;
        Hardware::of_capacity(&r, path)
    }

    /// The facts of a scaling run's largest size with a capacity (its search's file lies beside
    /// the scaling result at `path`).
    pub fn of_scaling(s: &ScalingResult, path: &Path) -> Result<Hardware, HardwareError> {
        let p = s.largest_measured().ok_or(HardwareError::NoSize)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Hardware::read_capacity(&dir.join(&p.result))
    }

    /// CPUs and RAM (GB) one node had, when the servers ran on this host and their number is
    /// known: pinned CPUs, else the host's (or `--host-cpus`) shared by the nodes; the node
    /// memory limit, else the host's RAM shared by the nodes.
    pub fn per_node(&self) -> Option<(f64, f64)> {
        if !self.servers_on_host {
            return None;
        }
        let n = f64::from(self.nodes?.max(1));
        let shared = self.emulation.host_cpus.unwrap_or(self.host_cpus) as f64;
        let cpu = match self.emulation.cpus_per_node {
            Some(c) if c as f64 * n <= shared => c as f64,
            _ => shared / n,
        };
        let ram = match self.emulation.node_memory_mib {
            Some(m) => m as f64 / 1024.0,
            None => self.host_ram_gb / n,
        };
        Some((cpu, ram))
    }

    /// One line: the nodes, their host, the client, the emulation and the probe (the run it
    /// comes from is [`Hardware::run`]).
    pub fn describe(&self) -> String {
        let host = format!(
            "{} CPUs{}, {} RAM",
            self.host_cpus,
            if self.cpu_model.is_empty() || self.cpu_model == "none" {
                String::new()
            } else {
                format!(" ({})", self.cpu_model)
            },
            gb(self.host_ram_gb)
        );
        let mut parts = Vec::new();
        match (self.servers_on_host, self.nodes) {
            (true, Some(1)) => parts.push(format!("1 node on one host of {host}")),
            (true, Some(n)) => parts.push(format!("{n} nodes packed on one host of {host}")),
            (true, None) => parts.push(format!(
                "nodes on the client's host of {host}, their number not recorded"
            )),
            (false, _) => parts.push(format!(
                "a cluster cqlbench did not start ({}): its nodes' CPUs and RAM are not recorded; the client's host: {host}",
                if self.hosts.is_empty() {
                    "hosts not recorded".to_string()
                } else {
                    self.hosts.join(", ")
                }
            )),
        }
        if let Some((c, r)) = self.per_node() {
            parts.push(format!("{} CPUs and {} RAM per node", cpus(c), gb(r)));
        }
        match self.client_on_host {
            Some(true) => parts.push("the client on the same host".into()),
            Some(false) => parts.push("the client on another host".into()),
            None => {}
        }
        let e = &self.emulation;
        if e.is_empty() {
            if self.nodes.is_some() {
                parts.push("no emulation".into());
            }
        } else {
            let mut em = Vec::new();
            if let Some(k) = e.host_cpus {
                em.push(format!("host-cpus {k}"));
            }
            if let Some(c) = e.cpus_per_node {
                em.push(format!("cpus-per-node {c}"));
            }
            if let Some(m) = e.node_memory_mib {
                em.push(format!("node-memory {m}M"));
            }
            for d in &e.disks {
                em.push(format!("disk {d}"));
            }
            parts.push(format!("emulated: {}", em.join(", ")));
        }
        if let Some(p) = &self.probe {
            parts.push(format!("probe {p}"));
        }
        parts.join("; ")
    }

    /// A few words for a table cell: `1 node, 2 CPUs 8.0 GB each, client on host`.
    pub fn short(&self) -> String {
        let mut out = match (self.nodes, self.per_node()) {
            (Some(n), Some((c, r))) => format!(
                "{n} node{}, {} CPUs {} each",
                if n == 1 { "" } else { "s" },
                cpus(c),
                gb(r)
            ),
            _ if self.servers_on_host => format!(
                "nodes on a {}-CPU {} host",
                self.host_cpus,
                gb(self.host_ram_gb)
            ),
            _ => "not recorded".to_string(),
        };
        if self.client_on_host == Some(true) {
            out.push_str(", client on host");
        }
        if !self.emulation.is_empty() {
            out.push_str(", emulated");
        }
        out
    }

    /// Warnings when this hardware is not the instance priced: CPUs or RAM per node unlike
    /// its vCPUs and RAM, the client sharing the nodes' host, or nothing recorded to compare.
    pub fn against(&self, inst: &Instance) -> Vec<String> {
        let mut out = Vec::new();
        let priced = format!(
            "{} has {} vCPU and {} RAM per node",
            inst.name,
            inst.vcpus,
            gb(inst.ram_gb)
        );
        match self.per_node() {
            Some((c, r)) => {
                let cpu_differs = (c - f64::from(inst.vcpus)).abs() > 1e-6;
                let ram_differs = (r - inst.ram_gb).abs() > RAM_TOLERANCE * inst.ram_gb;
                if cpu_differs || ram_differs {
                    out.push(format!(
                        "measured on hardware unlike {}: {} CPUs and {} RAM per node measured, {priced}",
                        inst.name,
                        cpus(c),
                        gb(r)
                    ));
                }
            }
            None if self.servers_on_host => {
                let fewer_cpus = self.host_cpus < inst.vcpus as usize;
                let less_ram = self.host_ram_gb < (1.0 - RAM_TOLERANCE) * inst.ram_gb;
                if fewer_cpus || less_ram {
                    out.push(format!(
                        "measured on hardware unlike {}: the nodes shared one host of {} CPUs and {} RAM, {priced}",
                        inst.name,
                        self.host_cpus,
                        gb(self.host_ram_gb)
                    ));
                } else {
                    out.push(format!(
                        "the number of nodes on the measuring host is not recorded: check that each had what {priced}"
                    ));
                }
            }
            None => out.push(format!(
                "the measured nodes' CPUs and RAM are not recorded (a cluster cqlbench did not start): check that they were {}",
                inst.name
            )),
        }
        if self.client_on_host == Some(true) {
            out.push(
                "the client ran on the nodes' host, taking CPU from them: a cloud client runs on its own instances"
                    .into(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests;
