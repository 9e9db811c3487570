//! The tables every exporter shows, defined once as lists of [`Field`]s: the run sections
//! (environments as columns) and the probe table. The CSV exporter takes its columns from the
//! same fields, by key.

use super::{EnvRuns, ProbeRow};
use crate::format::Table;

/// One row of a table: a figure of `T`, with its CSV key, label and decimals.
pub struct Field<T> {
    pub key: &'static str,
    pub label: &'static str,
    pub decimals: usize,
    pub get: fn(&T) -> Option<f64>,
}

/// A titled list of fields, shown as one table.
pub struct Section<T: 'static> {
    pub title: &'static str,
    pub fields: &'static [Field<T>],
}

macro_rules! pct {
    ($key:literal, $label:literal, $f:ident) => {
        Field {
            key: $key,
            label: $label,
            decimals: 2,
            get: |e: &EnvRuns| Some(e.response.$f),
        }
    };
}

/// The run tables, in order.
pub const RUN_SECTIONS: [Section<EnvRuns>; 4] = [
    Section {
        title: "Average throughput (ops/s)",
        fields: &[Field {
            key: "mean_ops_per_s",
            label: "ops/s",
            decimals: 0,
            get: |e| Some(e.mean_ops_per_s()),
        }],
    },
    Section {
        title: "Throughput over repeated runs (ops/s)",
        fields: &[
            Field {
                key: "runs",
                label: "runs",
                decimals: 0,
                get: |e| Some(e.runs() as f64),
            },
            Field {
                key: "min_ops_per_s",
                label: "min",
                decimals: 0,
                get: |e| e.spread().map(|s| s.0),
            },
            Field {
                key: "median_ops_per_s",
                label: "median",
                decimals: 0,
                get: |e| e.spread().map(|s| s.1),
            },
            Field {
                key: "max_ops_per_s",
                label: "max",
                decimals: 0,
                get: |e| e.spread().map(|s| s.2),
            },
            Field {
                key: "spread_pct",
                label: "spread % ((max-min)/median)",
                decimals: 1,
                get: EnvRuns::relative_spread_pct,
            },
        ],
    },
    Section {
        title: "Response time (ms, merged histograms)",
        fields: &[
            pct!("mean_ms", "mean", mean_ms),
            pct!("p50_ms", "p50", p50_ms),
            pct!("p75_ms", "p75", p75_ms),
            pct!("p90_ms", "p90", p90_ms),
            pct!("p95_ms", "p95", p95_ms),
            pct!("p99_ms", "p99", p99_ms),
            pct!("p999_ms", "p99.9", p999_ms),
            pct!("p9999_ms", "p99.99", p9999_ms),
            pct!("max_ms", "max", max_ms),
        ],
    },
    Section {
        title: "Server during the runs (the nodes' metrics over the measured window)",
        fields: &[
            Field {
                key: "sstables_per_read",
                label: "SSTables per read (mean)",
                decimals: 2,
                get: |e| e.sstables_per_read,
            },
            Field {
                key: "peak_pending_compactions",
                label: "pending compactions (peak)",
                decimals: 0,
                get: |e| e.peak_pending,
            },
        ],
    },
];

/// The probe table.
pub const PROBE_SECTION: Section<ProbeRow> = Section {
    title: "Host probe",
    fields: &[
        Field {
            key: "cpu_events_s",
            label: "CPU (events/s)",
            decimals: 0,
            get: |p| p.summary.cpu_events_s,
        },
        Field {
            key: "disk_iops",
            label: "IOPS",
            decimals: 0,
            get: |p| p.summary.disk_iops,
        },
        Field {
            key: "disk_mb_s",
            label: "Disk throughput (MB/s)",
            decimals: 0,
            get: |p| p.summary.disk_mb_s,
        },
        Field {
            key: "disk_read_p99_ms",
            label: "Disk p99 read latency (ms)",
            decimals: 2,
            get: |p| p.summary.disk_read_p99_us.map(|us| us / 1000.0),
        },
    ],
};

/// A section as a table, items as columns; none when no item has any of its figures.
pub(super) fn section_table<T>(
    title: String,
    section: &Section<T>,
    items: &[(&str, &T)],
) -> Option<Table> {
    let rows: Vec<Vec<String>> = section
        .fields
        .iter()
        .map(|f| {
            std::iter::once(f.label.to_string())
                .chain(
                    items
                        .iter()
                        .map(|(_, t)| crate::format::cell((f.get)(t), f.decimals)),
                )
                .collect()
        })
        .collect();
    let any = section
        .fields
        .iter()
        .any(|f| items.iter().any(|(_, t)| (f.get)(t).is_some()));
    // The repeated-runs table is only worth showing when some environment has several runs.
    let several = section
        .fields
        .iter()
        .filter(|f| f.key != "runs")
        .any(|f| items.iter().any(|(_, t)| (f.get)(t).is_some()));
    (any && several).then(|| Table {
        title,
        header: std::iter::once(String::new())
            .chain(items.iter().map(|(env, _)| env.to_string()))
            .collect(),
        rows,
        text_columns: Vec::new(),
    })
}
