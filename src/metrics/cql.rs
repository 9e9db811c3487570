//! Server figures through CQL: Cassandra 4.0 and later serve some of the figures the criteria
//! and the fill read as virtual tables of `system_views`, on the connection the client holds
//! anyway — no exporter, no port, no firewall rule. Each node is asked directly (its own
//! tables describe only itself).
//!
//! What each figure comes from (the tables were read on 4.0.10, 4.1.10 and 5.0.9):
//!
//! | figure | virtual table | note |
//! |---|---|---|
//! | pending compactions | `thread_pools`, `CompactionExecutor`: `active_tasks + pending_tasks` | compactions running and queued; the JMX `Compaction.PendingTasks` adds the strategies' estimate of the backlog, so this reads lower on a node that is far behind |
//! | load | `disk_usage`: `mebibytes`, summed over the tables of the non-system keyspaces | whole MiB per table; during a compaction it also counts the output written so far |
//! | local reads | `local_read_latency`: `count`, summed over tables | a counter, made a rate |
//! | node CPU, GC, dropped messages, SSTables per read, live SSTables, bytes compacted | none | no virtual table up to 5.0; `system_metrics` (all metrics as tables) comes after 5.0 |
//!
//! The queries are run by the load layer (it holds the driver, and implements
//! [`super::scrape::NodeReader`] over it); this module turns their rows into a
//! [`NodeReading`].

use super::reading::NodeReading;

/// The queries a reading asks of each node, in the order of [`Views`]' fields.
pub const THREAD_POOLS: &str =
    "SELECT name, active_tasks, pending_tasks FROM system_views.thread_pools";
pub const DISK_USAGE: &str = "SELECT keyspace_name, mebibytes FROM system_views.disk_usage";
pub const LOCAL_READS: &str = "SELECT count FROM system_views.local_read_latency";

/// Each operation kind's coordinator latency table (`op`, table), read per node for the run's
/// keyspace (`result::server_latency`).
pub const COORDINATOR_LATENCY: [(&str, &str); 3] = [
    ("read", "coordinator_read_latency"),
    ("write", "coordinator_write_latency"),
    ("range", "coordinator_scan_latency"),
];

/// The query of one coordinator latency table: every table's row (its partition key is the
/// keyspace and the table together, so one keyspace's rows are picked out by the reader).
pub fn coordinator_latency_query(table: &str) -> String {
    format!(
        "SELECT keyspace_name, table_name, count, p50th_ms, p99th_ms, max_ms FROM system_views.{table}"
    )
}

/// The query of a node's version, asked with its coordinator latency tables.
pub const RELEASE_VERSION: &str = "SELECT release_version FROM system.local";

/// What one unit of a coordinator latency table's `p50th_ms`, `p99th_ms` and `max_ms`
/// columns is, in milliseconds, on a node of `release_version`. 4.0 serves milliseconds. From
/// 4.1 on the timers keep microseconds and the tables still convert them as from nanoseconds
/// (× 10⁻⁶), so the columns hold seconds: under the same closed-loop load (256 in flight,
/// one node on one CPU) 4.0.19 served p99 43.389 and max 557.075, 4.1 p99 0.051 and max
/// 1.132, against client service p99s of 149 and 156 ms. A version not read is taken as the
/// newer kind.
pub fn column_unit_ms(release_version: Option<&str>) -> f64 {
    let major_minor = release_version.and_then(|v| {
        let mut parts = v.split(['.', '-']);
        Some((
            parts.next()?.parse::<u32>().ok()?,
            parts.next()?.parse::<u32>().ok()?,
        ))
    });
    match major_minor {
        Some((major, minor)) if (major, minor) <= (4, 0) => 1.0,
        _ => 1000.0,
    }
}

/// A column's value in milliseconds: the three decimals the tables round to, times the unit.
pub fn column_ms(column: f64, unit_ms: f64) -> f64 {
    (column * 1000.0).round() / 1000.0 * unit_ms
}

/// One row of a coordinator latency table: a table's count and percentiles on one node, the
/// percentiles as the columns serve them, in units of `unit_ms` ([`column_unit_ms`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Coordinated {
    pub node: String,
    pub op: &'static str,
    pub table: String,
    pub count: i64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub unit_ms: f64,
}

/// The main phase's coordinator latency: the rows read at its end, each with the count's
/// growth since the same row at its start (a row not read then counts from 0, a node that
/// restarted from its own new count), and the percentiles in milliseconds.
pub fn over_phase(
    start: &[Coordinated],
    end: &[Coordinated],
) -> Vec<crate::result::server_latency::ServerLatency> {
    end.iter()
        .map(|e| {
            let before = start
                .iter()
                .find(|s| s.node == e.node && s.op == e.op && s.table == e.table)
                .map_or(0, |s| s.count);
            let ops = if e.count >= before {
                e.count - before
            } else {
                e.count
            };
            crate::result::server_latency::ServerLatency {
                node: e.node.clone(),
                op: e.op.into(),
                table: e.table.clone(),
                ops: ops.max(0) as u64,
                p50_ms: column_ms(e.p50, e.unit_ms),
                p99_ms: column_ms(e.p99, e.unit_ms),
                max_ms: column_ms(e.max, e.unit_ms),
                // Three decimals of the unit.
                resolution_ms: e.unit_ms / 1000.0,
            }
        })
        .collect()
}

/// What the name of a source says in results and checks.
pub const DIALECT: &str = "CQL (system_views)";

/// One thread pool's row of `system_views.thread_pools`.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadPool {
    pub name: String,
    pub active: i64,
    pub pending: i64,
}

/// The rows of one node's virtual tables a reading is made of.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Views {
    pub thread_pools: Vec<ThreadPool>,
    /// `(keyspace, mebibytes)` per table.
    pub disk_usage: Vec<(String, i64)>,
    /// Each table's local read count.
    pub local_reads: Vec<i64>,
}

/// A node's figures from its virtual tables (see the module's table).
pub fn reading(v: &Views) -> NodeReading {
    let compaction = v
        .thread_pools
        .iter()
        .find(|p| p.name == "CompactionExecutor");
    let data: Vec<i64> = v
        .disk_usage
        .iter()
        .filter(|(ks, _)| !ks.starts_with("system"))
        .map(|(_, mib)| *mib)
        .collect();
    NodeReading {
        pending_compactions: compaction.map(|p| (p.active + p.pending) as f64),
        load_bytes: Some(data.iter().sum::<i64>() as f64 * 1024.0 * 1024.0),
        local_reads: (!v.local_reads.is_empty()).then(|| v.local_reads.iter().sum::<i64>() as f64),
        dialect: Some(DIALECT),
        ..NodeReading::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_counts_the_growth_of_each_row() {
        let row = |node: &str, op, count, p50| Coordinated {
            node: node.into(),
            op,
            table: "kv".into(),
            count,
            p50,
            p99: 0.012,
            max: 0.25,
            unit_ms: 1000.0,
        };
        // The columns as a node serves them: seconds, to three decimals.
        let start = [row("a", "read", 1000, 0.001), row("b", "read", 50, 0.001)];
        let end = [
            row("a", "read", 4000, 0.002),
            row("a", "write", 700, 0.0),
            row("b", "read", 20, 0.004),
        ];
        let over = over_phase(&start, &end);
        let ops: Vec<(&str, &str, u64, f64)> = over
            .iter()
            .map(|r| (r.node.as_str(), r.op.as_str(), r.ops, r.p50_ms))
            .collect();
        // a: 3000 reads in the phase; its writes counted from 0; b restarted (20 < 50); the
        // percentiles in milliseconds, whole ones.
        assert_eq!(
            ops,
            [
                ("a", "read", 3000, 2.0),
                ("a", "write", 700, 0.0),
                ("b", "read", 20, 4.0)
            ]
        );
        assert_eq!((over[0].p99_ms, over[0].max_ms), (12.0, 250.0));
        assert!(over.iter().all(|r| r.resolution_ms == 1.0));
        // A 4.0 node's columns are milliseconds already.
        let old = Coordinated {
            p50: 0.043,
            p99: 43.389,
            unit_ms: 1.0,
            ..row("c", "read", 10, 0.0)
        };
        let over = over_phase(&[], &[old]);
        assert_eq!((over[0].p50_ms, over[0].p99_ms), (0.043, 43.389));
        assert_eq!(over[0].resolution_ms, 0.001);
    }

    #[test]
    fn the_unit_of_the_columns_follows_the_version() {
        for (v, unit) in [
            (Some("4.0.19"), 1.0),
            (Some("4.0-beta4"), 1.0),
            (Some("3.11.17"), 1.0),
            (Some("4.1.10"), 1000.0),
            (Some("5.0.9"), 1000.0),
            (Some("5.1-SNAPSHOT"), 1000.0),
            (Some("garbage"), 1000.0),
            (None, 1000.0),
        ] {
            assert_eq!(column_unit_ms(v), unit, "{v:?}");
        }
        assert_eq!(column_ms(0.0125, 1000.0), 13.0);
        assert_eq!(column_ms(43.389, 1.0), 43.389);
        assert!(
            coordinator_latency_query("coordinator_read_latency")
                .ends_with("FROM system_views.coordinator_read_latency")
        );
    }

    #[test]
    fn a_reading_from_the_views_of_a_busy_node() {
        let pool = |name: &str, active, pending| ThreadPool {
            name: name.into(),
            active,
            pending,
        };
        let v = Views {
            thread_pools: vec![
                pool("MemtableFlushWriter", 2, 9),
                pool("CompactionExecutor", 2, 5),
            ],
            disk_usage: vec![
                ("system_schema".into(), 1),
                ("system".into(), 1),
                ("cqlbench".into(), 300),
                ("other".into(), 12),
            ],
            local_reads: vec![10, 0, 32],
        };
        let r = reading(&v);
        assert_eq!(r.pending_compactions, Some(7.0));
        assert_eq!(r.load_bytes, Some(312.0 * 1048576.0));
        assert_eq!(r.local_reads, Some(42.0));
        assert_eq!(r.dialect, Some(DIALECT));
        // What no virtual table serves stays empty, never zero.
        assert_eq!(r.cpu_seconds, None);
        assert_eq!(r.sstables_per_read, None);
        // A node without the compaction pool's row (none seen, but possible) has no pending
        // figure rather than zero; a node with no user table holds no data.
        let bare = reading(&Views::default());
        assert_eq!(bare.pending_compactions, None);
        assert_eq!(bare.load_bytes, Some(0.0));
        assert_eq!(bare.local_reads, None);
    }
}
