//! The metric names each figure is read from, in every exporter's dialect (see [`sources`]),
//! and the list of them all a scrape asks for.

/// Where a figure is read: a metric name, and a label the sample must carry.
pub type Source = (&'static str, Option<(&'static str, &'static str)>);

/// Each figure's sources, in the order they are tried (the first with a finite value wins):
/// 1. the Prometheus JMX exporter's names, as configured for local nodes (see
///    `cluster::render::exporter_yaml`);
/// 2. the Management API's metrics endpoint (K8ssandra from operator v1.5 with Management API
///    ≥ 0.1.67, port 9000, `/metrics`): Dropwizard names snake_cased, keyspace, table and
///    message type as labels, all-tables aggregates suffixed `_all`, histograms as quantiles
///    only (so SSTables per read is its median there, not its mean);
/// 3. MCAC's collectd output as served on port 9103 (older K8ssandra), before Prometheus
///    relabelling: the dotted, snake_cased name in the `mcac` label;
/// 4. the JMX exporter with its published example rules for Cassandra
///    (`example_configs/cassandra.yml` of prometheus/jmx_exporter): `cassandra_<type>_<name>`
///    lowercased, a counter's count suffixed `_count`. Only pending compactions, completed
///    compactions, bytes compacted, load and dropped messages are read in it: its tables'
///    series carry the all-tables aggregate and every table under one name, which one source
///    label cannot tell apart.
///
/// Names of 2, 3 and 4 were read from those projects' sources (naming code, relabel rules,
/// dashboards, the example rules), not from a live scrape. MCAC has no dropped-message counter in seconds, GC
/// seconds or process CPU seconds under these names: those figures stay empty from it.
pub mod sources {
    use super::Source;
    pub const PENDING: &[Source] = &[
        (
            "org_apache_cassandra_metrics_compaction_value",
            Some(("name", "PendingTasks")),
        ),
        (
            "org_apache_cassandra_metrics_compaction_pending_tasks",
            None,
        ),
        (
            "collectd_mcac_gauge",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.compaction.pending_tasks",
            )),
        ),
        ("cassandra_compaction_pendingtasks", None),
    ];
    pub const COMPLETED: &[Source] = &[
        (
            "org_apache_cassandra_metrics_compaction_value",
            Some(("name", "CompletedTasks")),
        ),
        (
            "org_apache_cassandra_metrics_compaction_completed_tasks",
            None,
        ),
        (
            "collectd_mcac_gauge",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.compaction.completed_tasks",
            )),
        ),
        ("cassandra_compaction_completedtasks", None),
    ];
    pub const COMPACTED_BYTES: &[Source] = &[
        (
            "org_apache_cassandra_metrics_compaction_count",
            Some(("name", "BytesCompacted")),
        ),
        (
            "org_apache_cassandra_metrics_compaction_bytes_compacted",
            None,
        ),
        (
            "collectd_mcac_counter_total",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.compaction.bytes_compacted",
            )),
        ),
        ("cassandra_compaction_bytescompacted_count", None),
    ];
    pub const SSTABLES_PER_READ: &[Source] = &[
        (
            "org_apache_cassandra_metrics_table_mean",
            Some(("name", "SSTablesPerReadHistogram")),
        ),
        (
            "org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all",
            Some(("quantile", "0.5")),
        ),
        (
            "collectd_mcac_histogram_mean",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.table.ss_tables_per_read_histogram.all",
            )),
        ),
    ];
    pub const LIVE_SSTABLES: &[Source] = &[
        (
            "org_apache_cassandra_metrics_table_value",
            Some(("name", "LiveSSTableCount")),
        ),
        (
            "org_apache_cassandra_metrics_table_live_ss_table_count_all",
            None,
        ),
        (
            "collectd_mcac_gauge",
            Some((
                "mcac",
                "org.apache.cassandra.metrics.table.live_ss_table_count.all",
            )),
        ),
    ];
    pub const LOAD: &[Source] = &[
        (
            "org_apache_cassandra_metrics_storage_count",
            Some(("name", "Load")),
        ),
        ("org_apache_cassandra_metrics_storage_load", None),
        (
            "collectd_mcac_counter_total",
            Some(("mcac", "org.apache.cassandra.metrics.storage.load")),
        ),
        ("cassandra_storage_load_count", None),
    ];
    /// Summed over message types.
    pub const DROPPED: &[Source] = &[
        (
            "org_apache_cassandra_metrics_droppedmessage_count",
            Some(("name", "Dropped")),
        ),
        (
            "org_apache_cassandra_metrics_dropped_message_dropped_total",
            None,
        ),
        ("cassandra_droppedmessage_dropped_count", None),
    ];
    /// Summed over collectors; the Prometheus Java client's name, which both the JMX exporter
    /// and the Management API serve.
    pub const GC_SECONDS: &[Source] = &[("jvm_gc_collection_seconds_sum", None)];
    pub const CPU_SECONDS: &[Source] = &[("process_cpu_seconds_total", None)];
    pub const CPU_SHARE: &[Source] = &[("java_lang_operatingsystem_processcpuload", None)];
    /// Local reads of all tables (the JMX exporter's names only).
    pub const LOCAL_READS: &[Source] = &[(
        "org_apache_cassandra_metrics_table_count",
        Some(("name", "ReadLatency")),
    )];
    pub const LOCAL_READ_US: &[Source] = &[(
        "org_apache_cassandra_metrics_table_count",
        Some(("name", "ReadTotalLatency")),
    )];

    /// Every figure's sources, with the figure's name (what a fetch says it did not find).
    pub const ALL: &[(&str, &[Source])] = &[
        ("pending compactions", PENDING),
        ("completed compactions", COMPLETED),
        ("bytes compacted", COMPACTED_BYTES),
        ("SSTables per read", SSTABLES_PER_READ),
        ("live SSTables", LIVE_SSTABLES),
        ("load", LOAD),
        ("dropped messages", DROPPED),
        ("GC seconds", GC_SECONDS),
        ("process CPU seconds", CPU_SECONDS),
        ("process CPU share", CPU_SHARE),
        ("local reads", LOCAL_READS),
        ("local read latency", LOCAL_READ_US),
    ];
}

/// The dialects of [`sources`], in their order: what a result records a node's server figures
/// came in. Names of the last three were read from those projects' sources, never scraped.
pub const DIALECTS: [&str; 4] = [
    "JMX exporter (cqlbench's rules)",
    "Management API (names from its source; unverified)",
    "MCAC (names from its source; unverified)",
    "JMX exporter (its published Cassandra example rules; names from the rules, unverified)",
];

/// The metric names [`super::reading::reading`] uses (every source's).
pub const NAMES: &[&str] = &[
    "org_apache_cassandra_metrics_compaction_value",
    "org_apache_cassandra_metrics_compaction_count",
    "org_apache_cassandra_metrics_table_mean",
    "org_apache_cassandra_metrics_table_value",
    "org_apache_cassandra_metrics_table_count",
    "org_apache_cassandra_metrics_storage_count",
    "org_apache_cassandra_metrics_droppedmessage_count",
    "org_apache_cassandra_metrics_compaction_pending_tasks",
    "org_apache_cassandra_metrics_compaction_completed_tasks",
    "org_apache_cassandra_metrics_compaction_bytes_compacted",
    "org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all",
    "org_apache_cassandra_metrics_table_live_ss_table_count_all",
    "org_apache_cassandra_metrics_storage_load",
    "org_apache_cassandra_metrics_dropped_message_dropped_total",
    "collectd_mcac_gauge",
    "collectd_mcac_counter_total",
    "collectd_mcac_histogram_mean",
    "cassandra_compaction_pendingtasks",
    "cassandra_compaction_completedtasks",
    "cassandra_compaction_bytescompacted_count",
    "cassandra_storage_load_count",
    "cassandra_droppedmessage_dropped_count",
    "jvm_gc_collection_seconds_sum",
    "process_cpu_seconds_total",
    "java_lang_operatingsystem_processcpuload",
];

/// The names only a Cassandra node serves (not the JVM's or process's generic ones, which
/// other exporters serve too): what tells a node's metrics endpoint among a server's targets.
pub fn cassandra_only(name: &str) -> bool {
    name.starts_with("org_apache_cassandra_")
        || name.starts_with("collectd_mcac_")
        || name.starts_with("cassandra_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_name_is_parsed() {
        for (_, figure) in sources::ALL {
            for (name, _) in *figure {
                assert!(NAMES.contains(name), "{name} is not in NAMES");
            }
        }
    }
}
