//! The text `cqlbench plan` prints: the inputs with their origins, a ranked table, the
//! explanation of the cheapest candidates line by line, and what was rejected.

use std::fmt::Write as _;

use super::cost::lines;
use crate::cost::plan::{Candidate, CostPlan, MeasuredCapacity};
use crate::cost::price::CostBreakdown;
use crate::format::{Table, thousands, usd};

/// Months in the totals compared à la ref 004 (its 3-year heavy-use reservations).
const TOTAL_MONTHS: f64 = 36.0;

fn monthly(b: Option<&CostBreakdown>) -> String {
    b.map_or_else(|| "-".into(), |b| usd(b.total_monthly_usd))
}

/// Renders a plan; `detail` candidates are explained line by line.
pub fn plan_text(plan: &CostPlan, detail: usize) -> String {
    let s = &plan.spec;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "target: {} ops/s  [input]\ndata: {} × RF {} = {} GB replicated  [input]",
        thousands(s.ops_per_s),
        s.data,
        s.rf,
        thousands(s.data.gb * f64::from(s.rf))
    );
    let _ = writeln!(
        out,
        "compaction headroom: {}× ({})  [{}]",
        s.headroom.value.factor, s.headroom.value.label, s.headroom.origin
    );
    let _ = writeln!(
        out,
        "data density: at most {} per node  [{}]",
        s.density.value, s.density.origin
    );
    let _ = writeln!(
        out,
        "disk needs per node: {} IOPS [{}], {} MB/s [{}]",
        thousands(s.min_iops.value),
        s.min_iops.origin,
        thousands(s.min_mbps.value),
        s.min_mbps.origin
    );
    let _ = writeln!(
        out,
        "ranked by {} $/month; 36-month totals = 36 × monthly, as ref 004 compares 3-year costs",
        s.rank_by
    );
    let _ = writeln!(
        out,
        "$/1k target = $/month per 1,000 target ops/s: the planned cluster's cost ÷ the {} ops/s target, not a measured figure",
        thousands(s.ops_per_s)
    );
    for m in &plan.measured {
        measured(&mut out, m);
    }
    let _ = writeln!(out);
    out.push_str(&candidates_table(plan).text());
    let mut near: Vec<(&str, &str)> = Vec::new();
    for c in &plan.candidates {
        if let Some(n) = &c.near_miss
            && !near.iter().any(|(i, _)| *i == c.instance)
        {
            near.push((&c.instance, n));
        }
    }
    for (instance, n) in near {
        let _ = writeln!(out, "near miss, {instance}: {n}");
    }
    for (i, c) in plan.candidates.iter().take(detail).enumerate() {
        explain(&mut out, i + 1, c, s.ops_per_s);
    }
    if !plan.rejected.is_empty() {
        let _ = writeln!(out, "\nrejected:");
        for r in &plan.rejected {
            let _ = writeln!(out, "  {} + {}: {}", r.instance, r.disk, r.reason);
        }
    }
    out
}

/// The candidates ranked, a row each.
fn candidates_table(plan: &CostPlan) -> Table {
    let header = [
        "#",
        "instance",
        "disk",
        "nodes",
        "ops/s",
        "on-demand/mo",
        "1y/mo",
        "3y/mo",
        "36 mo on-dem.",
        "36 mo 3y",
        "$/1k target",
        "capacity",
    ];
    let rows = plan.candidates.iter().enumerate().map(|(i, c)| {
        let capacity = match (c.capacity_measured, c.warnings.len()) {
            (false, _) => "assumed".to_string(),
            (true, 0) => "measured".to_string(),
            (true, 1) => "measured (1 warning)".to_string(),
            (true, n) => format!("measured ({n} warnings)"),
        };
        let near = if c.near_miss.is_some() {
            ", near miss"
        } else {
            ""
        };
        vec![
            (i + 1).to_string(),
            c.instance.clone(),
            c.disk.clone(),
            c.nodes.to_string(),
            thousands(c.capacity_ops_per_s),
            usd(c.on_demand.total_monthly_usd),
            monthly(c.reserved_1y.as_ref()),
            monthly(c.reserved_3y.as_ref()),
            usd(c.on_demand.total_monthly_usd * TOTAL_MONTHS),
            c.reserved_3y
                .as_ref()
                .map_or_else(|| "-".into(), |b| usd(b.total_monthly_usd * TOTAL_MONTHS)),
            usd(c.cost_per_1k_target_ops_usd),
            format!("{capacity}{near}"),
        ]
    });
    Table {
        title: String::new(),
        header: header.map(String::from).to_vec(),
        rows: rows.collect(),
        text_columns: vec![1, 2, 11],
    }
}

fn explain(out: &mut String, rank: usize, c: &Candidate, target: f64) {
    let _ = writeln!(
        out,
        "\n#{rank} {} × {} + {} ({})",
        c.nodes, c.instance, c.disk, c.provider
    );
    // How and where from share the last column: a long formula pads nothing else.
    let row = |what: &str, value: String, how: String, origin: String| {
        let how = if origin.is_empty() {
            how
        } else {
            format!("{how}  {origin}")
        };
        vec![what.to_string(), value, how]
    };
    let mut rows: Vec<Vec<String>> = c
        .lines
        .iter()
        .map(|l| {
            row(
                &l.what,
                l.value.clone(),
                l.how.clone(),
                format!("[{}]", l.origin),
            )
        })
        .collect();
    rows.push(row(
        "cluster capacity",
        format!("{} ops/s", thousands(c.capacity_ops_per_s)),
        format!(
            "{} nodes × {} ops/s",
            c.nodes,
            thousands(c.ops_per_s_per_node)
        ),
        "[formula: linear scaling]".into(),
    ));
    let priced = [
        ("on-demand", Some(&c.on_demand)),
        ("reserved 1y", c.reserved_1y.as_ref()),
        ("reserved 3y", c.reserved_3y.as_ref()),
    ];
    for (name, b) in priced {
        let Some(b) = b else {
            rows.push(row(
                name,
                "-".into(),
                "no price in the catalogue".into(),
                String::new(),
            ));
            continue;
        };
        rows.push(row(
            name,
            usd(b.total_monthly_usd),
            "per month".into(),
            String::new(),
        ));
        for l in &b.lines {
            rows.push(row(
                &format!("  {}", l.item),
                usd(l.monthly_usd),
                l.how.clone(),
                format!("[{}]", l.origin),
            ));
        }
    }
    rows.push(row(
        "$/1k target ops/s",
        usd(c.cost_per_1k_target_ops_usd),
        format!(
            "{} per month / ({} ops/s target / 1,000)",
            usd(c.rank_monthly_usd),
            thousands(target)
        ),
        "[formula: $/month per 1,000 target ops/s, not measured]".into(),
    ));
    out.push_str(&lines(rows, &[2]));
}

/// A measured capacity beside the instance it is priced as, and what differs.
fn measured(out: &mut String, m: &MeasuredCapacity) {
    let _ = writeln!(
        out,
        "measured capacity priced as {}: {} ops/s on {} node{}  [{}]",
        m.instance,
        thousands(m.ops_per_s),
        m.nodes,
        if m.nodes == 1 { "" } else { "s" },
        m.origin
    );
    let _ = writeln!(
        out,
        "  measured on: {}{}",
        m.hardware,
        m.run
            .as_ref()
            .map(|r| format!("  [measured: {r}]"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "  priced as:   {} with {} vCPU and {} GB RAM per node  [catalogue]",
        m.instance,
        m.vcpus,
        thousands(m.ram_gb)
    );
    for w in &m.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::plan::plan;
    use crate::cost::plan::tests::{measured_on, spec};
    use crate::prices::default_catalog;

    #[test]
    fn the_ranked_table_and_an_explained_candidate_are_aligned_and_sourced() {
        let cat = default_catalog().unwrap();
        let p = plan(&cat, &spec(32_000.0, "100GB"), &[measured_on(31_999.0, 3)]).unwrap();
        let text = plan_text(&p, 1);
        // (its hardware was not read: one warning says it is not known)
        assert!(text.contains("measured (1 warning), near miss"), "{text}");
        assert!(
            text.contains("near miss, r5.2xlarge: 31,999 ops/s measured on 3 nodes"),
            "{text}"
        );
        // The ranked table: a header, then rows whose amounts end in one column.
        let table: Vec<&str> = text
            .lines()
            .skip_while(|l| !(l.trim_start().starts_with('#') && l.contains("instance")))
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(table.len() > 2, "{text}");
        let end = |l: &str| l.find("  assumed").or_else(|| l.find("  measured"));
        let ends: Vec<Option<usize>> = table[1..].iter().map(|l| end(l)).collect();
        assert!(ends.iter().all(|e| e.is_some() && *e == ends[0]), "{text}");
        // The explained candidate: every line says where its number came from.
        let block = text.split("\n#1 ").nth(1).expect("#1 explained");
        for line in block.lines().skip(1).take_while(|l| !l.is_empty()) {
            assert!(
                line.ends_with(']') || line.ends_with("per month"),
                "no origin on: {line}"
            );
        }
    }
}
