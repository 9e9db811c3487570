//! A node's reading: the figures read from one scrape, by whichever exporter's names served
//! them ([`super::names`]); and a node's sample from two readings, counters made rates.

use super::names::{Source, sources};
use super::prometheus::Sample as PromSample;
use crate::result::series::NodeSample;

/// Cumulative server counters and gauges read from one scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeReading {
    pub pending_compactions: Option<f64>,
    pub completed_compactions: Option<f64>,
    pub compacted_bytes: Option<f64>,
    pub sstables_per_read: Option<f64>,
    pub live_sstables: Option<f64>,
    pub load_bytes: Option<f64>,
    pub dropped: Option<f64>,
    pub gc_seconds: Option<f64>,
    pub cpu_seconds: Option<f64>,
    pub cpu_share: Option<f64>,
    /// Local reads served (all tables), and their total latency in microseconds.
    pub local_reads: Option<f64>,
    pub local_read_us: Option<f64>,
    /// The naming the node's server figures came in ([`super::names::DIALECTS`], or
    /// [`super::cql::DIALECT`]); `None` when it served none of them.
    pub dialect: Option<&'static str>,
}

/// Reads the figures cqlbench uses from a scrape, by the names of whichever exporter served
/// it (see [`sources`]).
pub fn reading(samples: &[PromSample]) -> NodeReading {
    // The finite values of the samples a source names, in scrape order.
    let values = |&(name, label): &Source| -> Vec<f64> {
        samples
            .iter()
            .filter(|s| s.name == name && label.is_none_or(|(k, v)| s.label(k) == Some(v)))
            .map(|s| s.value)
            .filter(|v| v.is_finite())
            .collect()
    };
    // The first source with a value: its first value …
    let one = |sources: &[Source]| sources.iter().find_map(|s| values(s).first().copied());
    // … or the sum of its values.
    let sum = |sources: &[Source]| {
        sources.iter().find_map(|s| {
            let v = values(s);
            (!v.is_empty()).then(|| v.iter().sum())
        })
    };
    // The dialect: the position, in every figure's list, of the source that served pending
    // compactions, else load.
    let dialect = [sources::PENDING, sources::LOAD]
        .iter()
        .find_map(|f| f.iter().position(|s| !values(s).is_empty()))
        .and_then(|i| super::names::DIALECTS.get(i).copied());
    NodeReading {
        dialect,
        pending_compactions: one(sources::PENDING),
        completed_compactions: one(sources::COMPLETED),
        compacted_bytes: one(sources::COMPACTED_BYTES),
        sstables_per_read: one(sources::SSTABLES_PER_READ),
        live_sstables: one(sources::LIVE_SSTABLES),
        load_bytes: one(sources::LOAD),
        dropped: sum(sources::DROPPED),
        gc_seconds: sum(sources::GC_SECONDS),
        cpu_seconds: one(sources::CPU_SECONDS),
        cpu_share: one(sources::CPU_SHARE).filter(|v| *v >= 0.0),
        local_reads: one(sources::LOCAL_READS),
        local_read_us: one(sources::LOCAL_READ_US),
    }
}

pub(super) fn rate(now: Option<f64>, prev: Option<f64>, secs: f64) -> Option<f64> {
    match (now, prev) {
        (Some(n), Some(p)) if secs > 0.0 => Some(((n - p) / secs).max(0.0)),
        _ => None,
    }
}

/// Turns two consecutive readings into one node sample.
pub fn node_sample(now: &NodeReading, prev: Option<&NodeReading>, secs: f64) -> NodeSample {
    let p = |f: fn(&NodeReading) -> Option<f64>| prev.and_then(f);
    NodeSample {
        up: Some(true),
        missing: None,
        scrape_s: None,
        pending_compactions: now.pending_compactions,
        compactions_per_s: rate(
            now.completed_compactions,
            p(|r| r.completed_compactions),
            secs,
        ),
        compacted_bytes_per_s: rate(now.compacted_bytes, p(|r| r.compacted_bytes), secs),
        sstables_per_read: now.sstables_per_read,
        live_sstables: now.live_sstables,
        load_bytes: now.load_bytes,
        dropped_per_s: rate(now.dropped, p(|r| r.dropped), secs),
        gc_pause_ms_per_s: rate(now.gc_seconds, p(|r| r.gc_seconds), secs).map(|v| v * 1000.0),
        cpu_cores: rate(now.cpu_seconds, p(|r| r.cpu_seconds), secs),
        cpu_share: now.cpu_share,
        local_reads_per_s: rate(now.local_reads, p(|r| r.local_reads), secs),
        local_read_ms: match (
            now.local_reads.zip(p(|r| r.local_reads)),
            now.local_read_us.zip(p(|r| r.local_read_us)),
        ) {
            (Some((n, pn)), Some((us, pus))) if n > pn && us >= pus => {
                Some((us - pus) / (n - pn) / 1000.0)
            }
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::names::NAMES;
    use crate::metrics::prometheus;
    use crate::metrics::scrape::{NotMeasured, ScrapeError, max_pending, max_pending_of_all};

    /// K8ssandra's endpoints give the same figures under their names: the Management API's
    /// (with its labels and the `_by_table_name` map gauge that must not be taken for the
    /// pending count) and MCAC's collectd output.
    #[test]
    fn k8ssandra_endpoints_map_to_the_same_figures() {
        let labels =
            "host=\"5d1c\",instance=\"10.0.0.5\",cluster=\"demo\",datacenter=\"dc1\",rack=\"r1\"";
        let mgmt = format!(
            "\
# TYPE org_apache_cassandra_metrics_compaction_pending_tasks gauge
org_apache_cassandra_metrics_compaction_pending_tasks_by_table_name{{{labels}}} 0.0
org_apache_cassandra_metrics_compaction_pending_tasks{{{labels}}} 7.0
org_apache_cassandra_metrics_compaction_completed_tasks{{{labels}}} 51.0
org_apache_cassandra_metrics_compaction_bytes_compacted{{{labels}}} 1000.0
org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all{{{labels},quantile=\"0.5\"}} 2.0
org_apache_cassandra_metrics_table_ss_tables_per_read_histogram_all{{{labels},quantile=\"0.99\"}} 6.0
org_apache_cassandra_metrics_table_live_ss_table_count_all{{{labels}}} 18.0
org_apache_cassandra_metrics_storage_load{{{labels}}} 117116.0
org_apache_cassandra_metrics_dropped_message_dropped_total{{{labels},message_type=\"MUTATION\"}} 3.0
org_apache_cassandra_metrics_dropped_message_dropped_total{{{labels},message_type=\"READ\"}} 2.0
jvm_gc_collection_seconds_sum{{{labels},gc=\"G1 Young Generation\"}} 0.3
process_cpu_seconds_total{{{labels}}} 10.0
"
        );
        let r = reading(&prometheus::parse_named(&mgmt, NAMES));
        let want = NodeReading {
            pending_compactions: Some(7.0),
            completed_compactions: Some(51.0),
            compacted_bytes: Some(1000.0),
            sstables_per_read: Some(2.0),
            live_sstables: Some(18.0),
            load_bytes: Some(117116.0),
            dropped: Some(5.0),
            gc_seconds: Some(0.3),
            cpu_seconds: Some(10.0),
            cpu_share: None,
            local_reads: None,
            local_read_us: None,
            dialect: Some(crate::metrics::names::DIALECTS[1]),
        };
        assert_eq!(r, want);
        let m = "instance=\"10.0.0.5\",cluster=\"demo\",dc=\"dc1\",rack=\"r1\"";
        let mcac = format!(
            "\
collectd_mcac_gauge{{{m},mcac=\"org.apache.cassandra.metrics.compaction.pending_tasks\"}} 7
collectd_mcac_gauge{{{m},mcac=\"org.apache.cassandra.metrics.compaction.completed_tasks\"}} 51
collectd_mcac_counter_total{{{m},mcac=\"org.apache.cassandra.metrics.compaction.bytes_compacted\"}} 1000
collectd_mcac_histogram_mean{{{m},mcac=\"org.apache.cassandra.metrics.table.ss_tables_per_read_histogram.all\"}} 2
collectd_mcac_gauge{{{m},mcac=\"org.apache.cassandra.metrics.table.live_ss_table_count.all\"}} 18
collectd_mcac_counter_total{{{m},mcac=\"org.apache.cassandra.metrics.storage.load\"}} 117116
"
        );
        let r = reading(&prometheus::parse_named(&mcac, NAMES));
        assert_eq!(
            r,
            NodeReading {
                dropped: None,
                gc_seconds: None,
                cpu_seconds: None,
                dialect: Some(crate::metrics::names::DIALECTS[2]),
                ..want
            }
        );
    }

    /// The JMX exporter's published example rules for Cassandra name the same MBeans
    /// `cassandra_<type>_<name>` (lowercased; a counter's count `_count`; a scope as a label
    /// named after the type): text as those rules would write it, not a live scrape. Its
    /// tables' histograms are per table and all tables under one name: not read.
    #[test]
    fn the_published_example_rules_map_to_the_same_figures() {
        let text = "\
cassandra_compaction_pendingtasks 7.0
cassandra_compaction_completedtasks 51.0
cassandra_compaction_bytescompacted_count 1000.0
cassandra_storage_load_count 117116.0
cassandra_droppedmessage_dropped_count{droppedmessage=\"MUTATION\",} 3.0
cassandra_droppedmessage_dropped_count{droppedmessage=\"READ\",} 2.0
cassandra_table_sstablesperreadhistogram{keyspace=\"ks\",table=\"t\",quantile=\"0.50\",} 2.0
process_cpu_seconds_total 10.0
";
        let r = reading(&prometheus::parse_named(text, NAMES));
        assert_eq!(
            r,
            NodeReading {
                pending_compactions: Some(7.0),
                completed_compactions: Some(51.0),
                compacted_bytes: Some(1000.0),
                load_bytes: Some(117116.0),
                dropped: Some(5.0),
                cpu_seconds: Some(10.0),
                dialect: Some(crate::metrics::names::DIALECTS[3]),
                ..NodeReading::default()
            }
        );
    }

    #[test]
    fn readings_come_from_exporter_names_and_rates_from_two_readings() {
        let text = "\
org_apache_cassandra_metrics_compaction_value{name=\"PendingTasks\"} 7.0
org_apache_cassandra_metrics_compaction_value{name=\"CompletedTasks\"} 51.0
org_apache_cassandra_metrics_compaction_count{name=\"BytesCompacted\"} 1000.0
org_apache_cassandra_metrics_table_mean{name=\"SSTablesPerReadHistogram\"} 2.16
org_apache_cassandra_metrics_table_value{name=\"LiveSSTableCount\"} 18.0
org_apache_cassandra_metrics_storage_count{name=\"Load\"} 117116.0
org_apache_cassandra_metrics_droppedmessage_count{name=\"Dropped\",scope=\"MUTATION\"} 3.0
org_apache_cassandra_metrics_droppedmessage_count{name=\"Dropped\",scope=\"READ\"} 2.0
org_apache_cassandra_metrics_droppedmessage_count{name=\"CrossNodeDroppedLatency\",scope=\"READ\"} 99.0
jvm_gc_collection_seconds_sum{gc=\"G1 Young Generation\"} 0.2
jvm_gc_collection_seconds_sum{gc=\"G1 Old Generation\"} 0.1
process_cpu_seconds_total 10.0
java_lang_operatingsystem_processcpuload 0.25
org_apache_cassandra_metrics_table_count{name=\"ReadLatency\"} 1000.0
org_apache_cassandra_metrics_table_count{name=\"ReadTotalLatency\"} 2000000.0
";
        let r = reading(&prometheus::parse(text));
        assert_eq!(r, reading(&prometheus::parse_named(text, NAMES)));
        assert_eq!(r.pending_compactions, Some(7.0));
        assert_eq!(r.dialect, Some(crate::metrics::names::DIALECTS[0]));
        assert_eq!(r.dropped, Some(5.0));
        assert!((r.gc_seconds.unwrap() - 0.3).abs() < 1e-9);
        let mut later = r.clone();
        later.completed_compactions = Some(53.0);
        later.gc_seconds = Some(0.35);
        later.cpu_seconds = Some(11.5);
        later.dropped = Some(5.0);
        // 100 more local reads in 0.5 s, taking 450,000 µs: 4.5 ms each.
        later.local_reads = Some(1100.0);
        later.local_read_us = Some(2_450_000.0);
        let s = node_sample(&later, Some(&r), 0.5);
        assert_eq!(s.local_reads_per_s, Some(200.0));
        assert_eq!(s.local_read_ms, Some(4.5));
        assert_eq!(node_sample(&r, Some(&r), 0.5).local_read_ms, None);
        assert_eq!(s.compactions_per_s, Some(4.0));
        assert!((s.gc_pause_ms_per_s.unwrap() - 100.0).abs() < 1e-6);
        assert_eq!(s.cpu_cores, Some(3.0));
        assert_eq!(s.dropped_per_s, Some(0.0));
        assert_eq!(s.load_bytes, Some(117116.0));
        assert_eq!(s.cpu_share, Some(0.25));
        // The first reading has no rates.
        assert_eq!(node_sample(&r, None, 1.0).cpu_cores, None);
        let err = |refused| ScrapeError {
            message: "node2: 127.0.0.2:7302: no answer within 2.0s".into(),
            refused,
        };
        assert_eq!(
            max_pending(&[Ok(r.clone()), Err(err(false)), Ok(later.clone())]),
            Some(7.0)
        );
        assert_eq!(max_pending(&[Err(err(false))]), None);
        // Every node or nothing: the node that did not answer may have the most.
        assert_eq!(max_pending_of_all(&[Ok(r.clone()), Ok(later)]), Ok(7.0));
        assert_eq!(
            max_pending_of_all(&[Ok(r.clone()), Err(err(false))]),
            Err(NotMeasured(
                "node2: 127.0.0.2:7302: no answer within 2.0s".into()
            ))
        );
        let mut blank = r.clone();
        blank.pending_compactions = None;
        assert!(
            max_pending_of_all(&[Ok(blank)])
                .unwrap_err()
                .0
                .contains("exports no")
        );
        assert!(max_pending_of_all(&[]).is_err());
    }
}
