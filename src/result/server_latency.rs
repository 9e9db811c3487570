//! The cluster's own view of a run's latency: each node's coordinator latency for the run's
//! tables, as Cassandra 4.0 and later serve it in `system_views.coordinator_read_latency`,
//! `coordinator_write_latency` and `coordinator_scan_latency` (per table: a count and the
//! 50th and 99th percentiles and maximum of a forward-decaying reservoir that favours the last
//! few minutes). Read when the main phase starts and when it ends: a main phase of a minute or
//! more is what the percentiles describe; `ops` is the count's growth over the main phase. The client
//! measures from the moment it sends to the moment it has the answer; the coordinator from the
//! moment its request handler takes the request up to the answer: the difference is the
//! network, the driver, the client's runtime and the wait in the node's native-transport queue
//! (under 256 requests in flight on one 4.0 node: client service p50 66 ms, coordinator p50
//! 0.043 ms). From 4.1 on the tables serve whole milliseconds ([`ServerLatency::resolution_ms`]).

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
    /// The step of the percentiles, in milliseconds (the tables round to three decimals of
    /// their unit, `metrics::cql::column_unit_ms`): 1 from Cassandra 4.1 on, 0.001 on 4.0. A
    /// percentile of 0 is below half a step. 0: a result written before the step was kept,
    /// whose percentiles are the columns as served.
    #[serde(default)]
    pub resolution_ms: f64,
}

/// A percentile as the line shows it: below half the resolution it is "< half", else in the
/// resolution's own digits.
fn shown(ms: f64, resolution_ms: f64) -> String {
    if resolution_ms > 0.0 && ms < resolution_ms / 2.0 {
        format!("< {} ms", resolution_ms / 2.0)
    } else if resolution_ms >= 1.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.3} ms")
    }
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
                "{op} p50 {}, p99 {} ({total} ops; node {})",
                shown(r.p50_ms, r.resolution_ms),
                shown(r.p99_ms, r.resolution_ms),
                r.node
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
            resolution_ms: 1.0,
        }
    }

    #[test]
    fn the_busiest_node_speaks_for_an_operation_and_counts_are_summed() {
        let rows = [
            row("10.0.0.1", "read", 100, 2.0),
            row("10.0.0.2", "read", 300, 3.0),
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
            "server (coordinator latency, system_views): read p50 3 ms, p99 12 ms (400 ops; node 10.0.0.2)"
        );
        assert_eq!(line(&[]), None);
        // Below half the step the node served 0: the line says what that means.
        let fast = [row("10.0.0.1", "write", 10, 0.0)];
        assert_eq!(
            line(&fast).unwrap(),
            "server (coordinator latency, system_views): write p50 < 0.5 ms, p99 < 0.5 ms (10 ops; node 10.0.0.1)"
        );
    }

    #[test]
    fn a_result_written_before_the_step_was_kept_shows_the_columns_as_served() {
        let old = r#"{"node":"127.0.0.1","op":"read","table":"kv","ops":5,"p50_ms":0.0,"p99_ms":0.025,"max_ms":0.1}"#;
        let r: ServerLatency = serde_json::from_str(old).unwrap();
        assert_eq!((r.p99_ms, r.resolution_ms), (0.025, 0.0));
        assert_eq!(
            line(&[r]).unwrap(),
            "server (coordinator latency, system_views): read p50 0.000 ms, p99 0.025 ms (5 ops; node 127.0.0.1)"
        );
        // 4.0's step: thousandths of a millisecond.
        let mut fine = row("127.0.0.1", "write", 5, 0.043);
        fine.resolution_ms = 0.001;
        assert!(
            line(&[fine.clone()])
                .unwrap()
                .contains("write p50 0.043 ms, p99 0.172 ms")
        );
        let back: ServerLatency =
            serde_json::from_str(&serde_json::to_string(&fine).unwrap()).unwrap();
        assert_eq!(back, fine);
    }
}
