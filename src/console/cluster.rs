//! What `cqlbench cluster` says of a local cluster: its creation, starts and stops, its list,
//! and a failed node's log.

use std::path::Path;

use crate::cluster::Cluster;
use crate::cluster::StartReport;

/// A created cluster: its nodes, distribution, heap and directory, the client certificates
/// when it encrypts, and its lab when it has one.
pub fn created_text(c: &Cluster) -> String {
    let mut out = format!(
        "created {}: {} nodes, {}, heap {} in {}\n",
        c.name(),
        c.nodes().len(),
        c.state.dist.describe(),
        c.state.plan.heap_reason,
        c.dir.display()
    );
    if let (Some(t), Some(ca)) = (c.state.spec.tls, c.local_ca()) {
        out.push_str(&format!(
            "client encryption {}{}{}: CA {}, client certificate {} and key {}\n",
            if t.optional { "optional" } else { "required" },
            if t.client_auth {
                ", client certificates required"
            } else {
                ""
            },
            if t.internode { ", internode too" } else { "" },
            ca.ca().display(),
            ca.client_cert().display(),
            ca.client_key().display()
        ));
    }
    if let Some(lab) = c.lab() {
        out.push_str(&super::lab_summary(&lab));
        out.push('\n');
    }
    out
}

/// Nodes started, and how long they took.
pub fn started_line(name: &str, r: &StartReport) -> String {
    format!(
        "{name}: {} up (UN) in {:.1}s",
        r.started.join(", "),
        r.elapsed.as_secs_f64()
    )
}

/// Nodes stopped (none was running: said so), and how long it took.
pub fn stopped_line(name: &str, stopped: &[String], secs: f64) -> String {
    if stopped.is_empty() {
        format!("{name}: no node was running")
    } else {
        format!("{name}: stopped {} in {secs:.1}s", stopped.join(", "))
    }
}

/// One cluster of `cluster list`: its name, nodes, how many run, and its directory.
pub fn list_line(name: &str, nodes: usize, running: usize, dir: &Path) -> String {
    format!(
        "{name}\t{nodes} nodes, {running} running\t{}",
        dir.display()
    )
}

/// The last lines of a node's log that failed to start, set apart.
pub fn log_tail_block(tail: &str) -> String {
    format!("--- last lines of the node's log ---\n{tail}\n---")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn starts_stops_and_lists_read_as_one_line_each() {
        let r = StartReport {
            started: vec!["node1".into(), "node2".into()],
            elapsed: Duration::from_millis(27_640),
        };
        assert_eq!(started_line("qs", &r), "qs: node1, node2 up (UN) in 27.6s");
        assert_eq!(stopped_line("qs", &[], 0.1), "qs: no node was running");
        assert_eq!(
            stopped_line("qs", &["node1".into()], 3.25),
            "qs: stopped node1 in 3.2s"
        );
        assert_eq!(
            list_line("qs", 3, 2, Path::new("/c/qs")),
            "qs\t3 nodes, 2 running\t/c/qs"
        );
        assert!(log_tail_block("boom").starts_with("--- last lines of the node's log ---\nboom"));
    }
}
