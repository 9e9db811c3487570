//! The cluster's own view of a run's latency: each node's coordinator latency for the run's
//! tables, as Cassandra 4.0 and later serve it in `system_views.coordinator_read_latency`,
//! `coordinator_write_latency` and `coordinator_scan_latency` (per table: a count and the
//! 50th and 99th percentiles and maximum of a forward-decaying reservoir that favours the last
//! few minutes). Read when the main phase starts and when it ends: a main phase of a minute or
//! more is what the percentiles describe; `ops` is the count's growth over the main phase. The client
//! measures from the moment it sends to the moment it has the answer; the coordinator from the
//! moment the request is read to the moment the answer is written: the difference is the
//! network, the driver and the client's runtime.

use serde::{Deserialize, Serialize};

/// One node's coordinator latency of one kind of operation on one table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerLatency {
    /// The node's address.
    pub node: String,
    /// `read`, `write` or `range` (the scan table).
    pub op: String,
    pub table: String,
    /// Operations it coordinated on the table during the main phase, its warmup included
    /// (the count's growth). With `--loaders`/`--shard`, each shard reads around its own main
    /// phase and a merged result keeps shard 0's: all loaders' operations in that window.
    pub ops: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The coordinator figures of `op` over every node: operations summed, the percentiles of
/// the node that coordinated most (a weighted mean of percentiles would be no percentile).
pub fn busiest<'a>(rows: &'a [ServerLatency], op: &str) -> Option<(&'a ServerLatency, u64)> {
    let of_op: Vec<&ServerLatency> = rows.iter().filter(|r| r.op == op && r.ops > 0).collect();
    let total = of_op.iter().map(|r| r.ops).sum();
    of_op.into_iter().max_by_key(|r| r.ops).map(|r| (r, total))
}

/// The cluster's view in one line, beside the client's table: per operation kind, the busiest
/// node's coordinator p50 and p99 and the operations all nodes coordinated; None when the
/// nodes served no coordinator latency.
pub fn line(rows: &[ServerLatency]) -> Option<String> {
    let parts: Vec<String> = ["read", "write", "range"]
        .iter()
        .filter_map(|op| {
            let (r, total) = busiest(rows, op)?;
            Some(format!(
                "{op} p50 {:.3} ms, p99 {:.3} ms ({total} ops; node {})",
                r.p50_ms, r.p99_ms, r.node
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "server (coordinator latency, system_views): {}",
            parts.join(" · ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(node: &str, op: &str, ops: u64, p50: f64) -> ServerLatency {
        ServerLatency {
            node: node.into(),
            op: op.into(),
            table: "kv".into(),
            ops,
            p50_ms: p50,
            p99_ms: p50 * 4.0,
            max_ms: p50 * 10.0,
        }
    }

    #[test]
    fn the_busiest_node_speaks_for_an_operation_and_counts_are_summed() {
        let rows = [
            row("10.0.0.1", "read", 100, 0.2),
            row("10.0.0.2", "read", 300, 0.3),
            row("10.0.0.2", "write", 0, 9.0),
        ];
        let (r, total) = busiest(&rows, "read").unwrap();
        assert_eq!((r.node.as_str(), total), ("10.0.0.2", 400));
        assert!(
            busiest(&rows, "write").is_none(),
            "no write was coordinated"
        );
        assert!(busiest(&rows, "range").is_none());
        assert_eq!(
            line(&rows).unwrap(),
            "server (coordinator latency, system_views): read p50 0.300 ms, p99 1.200 ms (400 ops; node 10.0.0.2)"
        );
        assert_eq!(line(&[]), None);
    }
}
