//! The text `cqlbench plan` prints: the inputs with their origins, a ranked table, the
//! explanation of the cheapest candidates line by line, and what was rejected.

use std::fmt::Write as _;

use super::{Candidate, CostPlan, MeasuredCapacity};
use crate::cost::price::CostBreakdown;
use crate::format::{thousands, usd};

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
    let _ = writeln!(
        out,
        "{:>3}  {:<18} {:<12} {:>5} {:>13} {:>13} {:>13} {:>13} {:>15} {:>15} {:>11}  capacity",
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
        "$/1k target"
    );
    for (i, c) in plan.candidates.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>3}  {:<18} {:<12} {:>5} {:>13} {:>13} {:>13} {:>13} {:>15} {:>15} {:>11}  {}{}",
            i + 1,
            c.instance,
            c.disk,
            c.nodes,
            thousands(c.capacity_ops_per_s),
            usd(c.on_demand.total_monthly_usd),
            monthly(c.reserved_1y.as_ref()),
            monthly(c.reserved_3y.as_ref()),
            usd(c.on_demand.total_monthly_usd * TOTAL_MONTHS),
            c.reserved_3y
                .as_ref()
                .map_or_else(|| "-".into(), |b| usd(b.total_monthly_usd * TOTAL_MONTHS)),
            usd(c.cost_per_1k_target_ops_usd),
            match (c.capacity_measured, c.warnings.len()) {
                (false, _) => "assumed".to_string(),
                (true, 0) => "measured".to_string(),
                (true, 1) => "measured (1 warning)".to_string(),
                (true, n) => format!("measured ({n} warnings)"),
            },
            if c.near_miss.is_some() {
                ", near miss"
            } else {
                ""
            }
        );
    }
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

fn explain(out: &mut String, rank: usize, c: &Candidate, target: f64) {
    let _ = writeln!(
        out,
        "\n#{rank} {} × {} + {} ({})",
        c.nodes, c.instance, c.disk, c.provider
    );
    for l in &c.lines {
        let _ = writeln!(
            out,
            "  {:<24} {:>16}  {}  [{}]",
            l.what, l.value, l.how, l.origin
        );
    }
    let _ = writeln!(
        out,
        "  {:<24} {:>16}  {} nodes × {} ops/s  [formula: linear scaling]",
        "cluster capacity",
        format!("{} ops/s", thousands(c.capacity_ops_per_s)),
        c.nodes,
        thousands(c.ops_per_s_per_node)
    );
    let priced = [
        ("on-demand", Some(&c.on_demand)),
        ("reserved 1y", c.reserved_1y.as_ref()),
        ("reserved 3y", c.reserved_3y.as_ref()),
    ];
    for (name, b) in priced {
        let Some(b) = b else {
            let _ = writeln!(out, "  {name:<24} {:>16}  no price in the catalogue", "-");
            continue;
        };
        let _ = writeln!(
            out,
            "  {name:<24} {:>16}  per month",
            usd(b.total_monthly_usd)
        );
        for l in &b.lines {
            let _ = writeln!(
                out,
                "    {:<22} {:>16}  {}  [{}]",
                l.item,
                usd(l.monthly_usd),
                l.how,
                l.origin
            );
        }
    }
    let _ = writeln!(
        out,
        "  {:<24} {:>16}  {} per month / ({} ops/s target / 1,000)  [formula: $/month per 1,000 target ops/s, not measured]",
        "$/1k target ops/s",
        usd(c.cost_per_1k_target_ops_usd),
        usd(c.rank_monthly_usd),
        thousands(target)
    );
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
