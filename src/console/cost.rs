//! The text `cqlbench cost` prints: one line per priced item with its arithmetic and where the
//! number came from, the disk's limits, $ per 1,000 ops/s and the probe flags.

use std::fmt::Write as _;

use crate::cost::price::{CostBreakdown, Origin};
use crate::cost::probe_check::ProbeFlag;
use crate::cost::throughput::Throughput;
use crate::format::{Table, thousands, usd};
use crate::prices::catalog::Instance;

/// Renders a breakdown for the terminal.
/// `instance` (the catalogue's entry of the instance priced) lets a measured throughput be
/// compared with it.
pub fn cost_text(
    b: &CostBreakdown,
    instance: Option<&Instance>,
    throughput: Option<&Throughput>,
    probe: Option<(&str, &[ProbeFlag])>,
) -> String {
    let mut out = String::new();
    let disk = match (&b.disk, b.local_disk_gb > 0.0) {
        (Some(q), _) => format!(" + {} {} GB per node", q.disk, thousands(q.size_gb)),
        (None, true) => format!(" (local disk {} GB per node)", thousands(b.local_disk_gb)),
        (None, false) => String::new(),
    };
    let _ = writeln!(
        out,
        "{} × {} ({}: {} vCPU, {} GB RAM){disk}, {}",
        b.nodes, b.instance, b.provider, b.vcpus, b.ram_gb, b.pricing
    );
    let mut rows: Vec<Vec<String>> = b
        .lines
        .iter()
        .map(|l| {
            vec![
                l.item.clone(),
                format!("{}/month", usd(l.monthly_usd)),
                format!("{}  [{}]", l.how, l.origin),
            ]
        })
        .collect();
    rows.push(vec![
        "total".into(),
        format!("{}/month", usd(b.total_monthly_usd)),
    ]);
    out.push_str(&lines(rows, &[2]));
    if let Some(q) = &b.disk {
        let _ = writeln!(
            out,
            "  disk limits per node: {} IOPS, {} MB/s  [formula: disk {}]",
            thousands(q.iops),
            thousands(q.mbps),
            q.disk
        );
        for l in &q.limits {
            let _ = writeln!(out, "    {l}");
        }
        for n in &q.notes {
            let _ = writeln!(out, "    note: {n}");
        }
    }
    if let Some(t) = throughput
        && let Some(per_1k) = b.cost_per_1k_ops_usd(t.ops_per_s)
    {
        let (label, origin) = match t.origin {
            Origin::Input => (
                "$ per 1,000 ops/s (your --ops figure, not measured)",
                "input: your own figure".to_string(),
            ),
            ref o => ("$ per 1,000 measured ops/s", o.to_string()),
        };
        let _ = writeln!(
            out,
            "  {label}: {} = {} / ({} ops/s / 1,000)  [{origin}]",
            usd(per_1k),
            usd(b.total_monthly_usd),
            thousands(t.ops_per_s),
        );
        if let (Some(m), Some(inst)) = (&t.measured, instance) {
            let _ = writeln!(out, "  measured on: {}", m.describe());
            let _ = writeln!(
                out,
                "  priced as:   {} × {} with {} vCPU and {} GB RAM per node",
                b.nodes,
                inst.name,
                inst.vcpus,
                thousands(inst.ram_gb)
            );
            for w in t.warnings_against(inst, b.nodes) {
                let _ = writeln!(out, "  warning: {w}");
            }
        }
    }
    if let Some((file, flags)) = probe {
        if flags.is_empty() {
            let _ = writeln!(
                out,
                "  probe {file}: no IOPS or MB/s figures found (see docs/cost.md)"
            );
        }
        for f in flags {
            let _ = writeln!(out, "  probe {file}: {}", f.line());
        }
    }
    for n in &b.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out
}

/// Labelled lines (a label, an amount, how it was reached, where it came from) aligned by the
/// one table model, without a header or the table's closing blank line: they belong to the
/// block around them.
pub(super) fn lines(rows: Vec<Vec<String>>, text_columns: &[usize]) -> String {
    let t = Table {
        title: String::new(),
        header: Vec::new(),
        rows,
        text_columns: text_columns.to_vec(),
    };
    format!("{}\n", t.text().trim_end())
}
