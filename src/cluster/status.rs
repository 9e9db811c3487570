//! `status` and `nodetool`: per node, what the processes, nodetool and the exporter say.

use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::time::Duration;

use serde::Serialize;

use super::{Cluster, ClusterError, process, render};
use crate::spec::MiB;

/// One row of `cqlbench cluster status`.
#[derive(Debug, Clone, Serialize)]
pub struct NodeStatus {
    pub name: String,
    pub address: String,
    pub dc: String,
    pub rack: String,
    /// `UN`, `DN`, … as nodetool reports it from a live node's view; `DN` when the JVM is not
    /// running; `??` when no live node could be asked.
    pub state: String,
    pub pid: Option<u32>,
    pub paused: bool,
    pub heap: MiB,
    pub heap_used_bytes: Option<u64>,
    /// nodetool's Load column (data on disk).
    pub load: Option<String>,
    /// CPUs the node may run on.
    pub cpus: Option<String>,
}

impl Cluster {
    /// A nodetool command against node `index`, using the cluster's own jars.
    pub fn nodetool_command(&self, index: usize, args: &[String]) -> Result<Command, ClusterError> {
        let n = self.node(index)?;
        let tools_logback = self.dir.join("tools-logback.xml");
        crate::fsutil::write_atomic(&tools_logback, render::tools_logback_xml().as_bytes())
            .map_err(|e| ClusterError::io(&tools_logback, e))?;
        let mut cmd = Command::new(self.state.dist.tools_java());
        cmd.args(["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
            .args(render::JDK17_MODULE_ARGS)
            .arg(format!(
                "-Dlogback.configurationFile={}",
                tools_logback.display()
            ))
            .arg(format!("-Dcassandra.logdir={}", self.dir.display()))
            .arg("-cp")
            .arg(format!("{}/*", self.state.dist.lib_dir.display()))
            .arg("org.apache.cassandra.tools.NodeTool")
            .args(["-h", "127.0.0.1", "-p", &n.jmx_port.to_string()])
            .args(args);
        // A lab node's JMX listens on its own namespace's loopback.
        if let Some(ns) = self.node_netns(n) {
            crate::netns::in_child(&mut cmd, &ns)?;
        }
        Ok(cmd)
    }

    /// Runs nodetool against node `index` and captures its output.
    pub fn nodetool(&self, index: usize, args: &[&str]) -> Result<Output, ClusterError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut cmd = self.nodetool_command(index, &args)?;
        cmd.output()
            .map_err(|e| ClusterError::io(&self.state.dist.java, e))
    }

    /// Status of every node.
    pub fn status(&self) -> Result<Vec<NodeStatus>, ClusterError> {
        let pids: Vec<Option<u32>> = self.nodes().iter().map(|n| self.pid(n)).collect();
        let reference = self
            .nodes()
            .iter()
            .zip(&pids)
            .find(|(_, p)| p.is_some_and(|p| !process::is_paused(p)));
        let gossip = match reference {
            Some((n, _)) => {
                let out = self.nodetool(n.index, &["status"])?;
                parse_nodetool_status(&String::from_utf8_lossy(&out.stdout))
            }
            None => BTreeMap::new(),
        };
        let rows = self
            .nodes()
            .iter()
            .zip(pids)
            .map(|(n, pid)| {
                let (state, load) = match gossip.get(&n.address) {
                    Some((s, l)) if pid.is_some() => (s.clone(), Some(l.clone())),
                    Some((_, l)) => ("DN".to_string(), Some(l.clone())),
                    None if pid.is_none() => ("DN".to_string(), None),
                    None => ("??".to_string(), None),
                };
                let paused = pid.is_some_and(process::is_paused);
                let heap_used_bytes = match pid {
                    Some(_) if !paused => self
                        .reach_nodes(|| heap_used(&n.address, n.metrics_port))
                        .ok()
                        .flatten(),
                    _ => None,
                };
                NodeStatus {
                    name: n.name.clone(),
                    address: n.address.clone(),
                    dc: n.dc.clone(),
                    rack: n.rack.clone(),
                    state,
                    pid,
                    paused,
                    heap: n.heap,
                    heap_used_bytes,
                    load,
                    cpus: pid.and_then(process::cpus_allowed),
                }
            })
            .collect();
        Ok(rows)
    }
}

fn heap_used(addr: &str, port: u16) -> Option<u64> {
    let text = crate::metrics::prometheus::scrape(addr, port, Duration::from_secs(2)).ok()?;
    crate::metrics::prometheus::parse(&text)
        .into_iter()
        .find(|s| s.name == "java_lang_memory_heapmemoryusage_used")
        .map(|s| s.value as u64)
}

/// Parses `nodetool status` into address → (state, load).
pub fn parse_nodetool_status(text: &str) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 3 || t[0].len() != 2 || !matches!(&t[0][..1], "U" | "D") {
            continue;
        }
        let load = if t[2] == "?" {
            "?".to_string()
        } else {
            format!("{} {}", t[2], t.get(3).unwrap_or(&""))
        };
        out.insert(
            t[1].to_string(),
            (t[0].to_string(), load.trim().to_string()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nodetool_status() {
        let text = "Datacenter: dc1\n===============\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n\
--  Address    Load        Owns (effective)  Host ID                               Token                 Rack\n\
UN  127.0.0.1  114.38 KiB  100.0%            df9dc2c3-c749-45fd-98c5-d44ea68e4377  -9223372036854775808  rack1\n\
DN  127.0.0.2  ?           100.0%            df9dc2c3-c749-45fd-98c5-d44ea68e4378  0  rack2\n";
        let m = parse_nodetool_status(text);
        assert_eq!(m["127.0.0.1"], ("UN".to_string(), "114.38 KiB".to_string()));
        assert_eq!(m["127.0.0.2"], ("DN".to_string(), "?".to_string()));
        assert_eq!(m.len(), 2);
    }
}
