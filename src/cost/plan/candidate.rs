//! One candidate: an instance type and a disk sized for the need — nodes for throughput, data
//! density, local disk and racks; a volume for data, IOPS and MB/s; priced on demand and
//! reserved — every number with a line explaining it.

use super::Capacity;
use super::capacity::nodes_text;
use super::{Candidate, PlanLine, PlanSpec};
use crate::cost::CostError;
use crate::cost::price::{CloudCluster, CostBreakdown, Origin, cost_per_1k_ops_usd, price_cluster};
use crate::format::thousands;
use crate::prices::Catalog;
use crate::prices::catalog::Instance;
use crate::prices::disk::DiskNeed;
use crate::prices::units::{DataSize, DiskSpec, Pricing};

/// The lines explaining a candidate, in the order they are worked out.
#[derive(Default)]
struct Lines(Vec<PlanLine>);

impl Lines {
    fn add(&mut self, what: &str, value: String, how: String, origin: Origin) {
        self.0.push(PlanLine {
            what: what.into(),
            value,
            how,
            origin,
        })
    }
}

fn ceil_div(a: f64, b: f64) -> u32 {
    (a / b - 1e-9).ceil().max(1.0) as u32
}

/// Instance `cap.instance` with `disk` ("local" or a network disk type) sized for `spec` and
/// priced; an error says why it cannot meet the need.
pub(super) fn candidate(
    cat: &Catalog,
    spec: &PlanSpec,
    cap: &Capacity,
    disk: &str,
) -> Result<Candidate, CostError> {
    let inst = cat.instance(&cap.instance)?;
    let mut lines = Lines::default();
    let warnings = cap
        .measured
        .as_ref()
        .map(|m| m.warnings_against(inst))
        .unwrap_or_default();
    if let Some(m) = &cap.measured {
        let origin = match &m.hardware {
            Some(h) => Origin::Measured(h.run.clone()),
            None => cap.origin.clone(),
        };
        lines.add("measured on", nodes_text(m.nodes), m.describe(), origin);
        let catalogue = Origin::Catalogue(format!(
            "instance {}: {} vCPU, {} GB RAM",
            inst.name,
            inst.vcpus,
            thousands(inst.ram_gb)
        ));
        for w in &warnings {
            lines.add("warning", "!".into(), w.clone(), catalogue.clone());
        }
    }
    let (nodes, near_miss) = nodes(spec, cap, inst, &mut lines);
    let (disk_gb, disk_spec) = volume(cat, spec, inst, disk, nodes, &mut lines)?;
    let k8s = spec
        .k8s
        .then(|| cat.kubernetes_of(&inst.provider).map(|k| k.name.clone()))
        .flatten();
    let price = |pricing| {
        price_cluster(
            cat,
            &CloudCluster {
                nodes,
                instance: inst.name.clone(),
                disk: Some(disk_spec.clone()),
                k8s: k8s.clone(),
                pricing,
            },
        )
    };
    let on_demand = price(Pricing::OnDemand)?;
    let reserved_1y = price(Pricing::Reserved1y).ok();
    let reserved_3y = price(Pricing::Reserved3y).ok();
    let rank_monthly_usd = ranked(spec.rank_by, &on_demand, &reserved_1y, &reserved_3y);
    Ok(Candidate {
        instance: inst.name.clone(),
        provider: inst.provider.clone(),
        disk: disk.to_string(),
        nodes,
        ops_per_s_per_node: cap.ops_per_s_per_node,
        capacity_ops_per_s: f64::from(nodes) * cap.ops_per_s_per_node,
        capacity_measured: matches!(cap.origin, Origin::Measured(_)),
        warnings,
        near_miss,
        disk_per_node_gb: disk_gb,
        cost_per_1k_target_ops_usd: cost_per_1k_ops_usd(rank_monthly_usd, spec.ops_per_s)
            .unwrap_or(0.0),
        on_demand,
        reserved_1y,
        reserved_3y,
        rank_monthly_usd,
        lines: lines.0,
    })
}

/// $/month under the pricing candidates are ranked by (on demand when that price is missing).
fn ranked(
    rank_by: Pricing,
    on_demand: &CostBreakdown,
    reserved_1y: &Option<CostBreakdown>,
    reserved_3y: &Option<CostBreakdown>,
) -> f64 {
    match rank_by {
        Pricing::OnDemand => Some(on_demand),
        Pricing::Reserved1y => reserved_1y.as_ref(),
        Pricing::Reserved3y => reserved_3y.as_ref(),
    }
    .unwrap_or(on_demand)
    .total_monthly_usd
}

/// Nodes for the throughput, the data density and (local disks) the data with its headroom,
/// at least RF, rounded up to a multiple of RF; and the near miss when the throughput just
/// missed a smaller cluster.
fn nodes(
    spec: &PlanSpec,
    cap: &Capacity,
    inst: &Instance,
    lines: &mut Lines,
) -> (u32, Option<String>) {
    let replicated_gb = spec.data.gb * f64::from(spec.rf);
    let headroom = spec.headroom.value.factor;
    lines.add(
        "capacity per node",
        format!("{} ops/s", thousands(cap.ops_per_s_per_node)),
        cap.how.clone(),
        cap.origin.clone(),
    );
    let by_ops = ceil_div(spec.ops_per_s, cap.ops_per_s_per_node);
    lines.add(
        "nodes for throughput",
        by_ops.to_string(),
        format!(
            "ceil({} / {})",
            thousands(spec.ops_per_s),
            thousands(cap.ops_per_s_per_node)
        ),
        Origin::Formula("target ÷ per-node capacity, linear scaling".into()),
    );
    let by_density = ceil_div(replicated_gb, spec.density.value.gb);
    lines.add(
        "nodes for data density",
        by_density.to_string(),
        format!(
            "ceil({} GB × RF {} / {} GB per node)",
            thousands(spec.data.gb),
            spec.rf,
            thousands(spec.density.value.gb)
        ),
        spec.density.origin.clone(),
    );
    let mut others = by_density.max(spec.rf);
    if inst.local_disk_gb > 0.0 {
        let by_local = ceil_div(replicated_gb * headroom, inst.local_disk_gb);
        lines.add(
            "nodes for local disk",
            by_local.to_string(),
            format!(
                "ceil({} GB × RF {} × {headroom} / {} GB local)",
                thousands(spec.data.gb),
                spec.rf,
                thousands(inst.local_disk_gb)
            ),
            Origin::catalogue(&format!("instance {}", inst.name), &inst.source),
        );
        others = others.max(by_local);
    }
    let racked = |n: u32| n.max(others).div_ceil(spec.rf) * spec.rf;
    let nodes = racked(by_ops);
    lines.add(
        "nodes",
        nodes.to_string(),
        format!(
            "the largest of the above and RF, rounded up to a multiple of RF {} (one rack per replica)",
            spec.rf
        ),
        Origin::Formula("max, rounded to racks".into()),
    );
    let near = near_miss(spec, cap, by_ops, nodes, racked(by_ops - 1));
    if let Some(n) = &near {
        lines.add(
            "near miss",
            format!("{} short", pct(shortfall(spec, cap, by_ops))),
            n.clone(),
            Origin::Formula(format!(
                "within {:.0}% of the target: measure again, or size the cluster by hand",
                NEAR_MISS * 100.0
            )),
        );
    }
    (nodes, near)
}

/// A throughput this share of the target short of it, or less, is a near miss.
const NEAR_MISS: f64 = 0.05;

/// How far `by_ops − 1` nodes fall short of the target, as a share of it.
fn shortfall(spec: &PlanSpec, cap: &Capacity, by_ops: u32) -> f64 {
    let reach = f64::from(by_ops - 1) * cap.ops_per_s_per_node;
    (spec.ops_per_s - reach) / spec.ops_per_s
}

/// `0.003%`, `0.42%`, `4.2%`.
fn pct(share: f64) -> String {
    let p = share * 100.0;
    match p {
        p if p < 0.1 => format!("{p:.3}%"),
        p if p < 1.0 => format!("{p:.2}%"),
        p => format!("{p:.1}%"),
    }
}

/// When one node fewer for throughput would have reached within [`NEAR_MISS`] of the target
/// and given a smaller cluster (`fewer` nodes instead of `nodes`): the sentence saying so.
fn near_miss(
    spec: &PlanSpec,
    cap: &Capacity,
    by_ops: u32,
    nodes: u32,
    fewer: u32,
) -> Option<String> {
    if by_ops < 2 || fewer >= nodes {
        return None;
    }
    let short = shortfall(spec, cap, by_ops);
    if short > NEAR_MISS {
        return None;
    }
    let k = by_ops - 1;
    let reach = f64::from(k) * cap.ops_per_s_per_node;
    let what = match &cap.measured {
        Some(m) if m.nodes == k => {
            format!(
                "{} ops/s measured on {}",
                thousands(m.ops_per_s),
                nodes_text(k)
            )
        }
        _ => format!(
            "{} × {} ops/s = {} ops/s",
            nodes_text(k),
            thousands(cap.ops_per_s_per_node),
            thousands(reach)
        ),
    };
    Some(format!(
        "{what} against {} needed: {} short, so {nodes} nodes instead of {fewer}",
        thousands(spec.ops_per_s),
        pct(short)
    ))
}

/// Each node's share of the replicated data with its headroom, in GB, and the volume that holds
/// it: the instance's local disk, or `disk` sized for the data, IOPS and MB/s.
fn volume(
    cat: &Catalog,
    spec: &PlanSpec,
    inst: &Instance,
    disk: &str,
    nodes: u32,
    lines: &mut Lines,
) -> Result<(f64, DiskSpec), CostError> {
    let headroom = spec.headroom.value.factor;
    let data_per_node = spec.data.gb * f64::from(spec.rf) / f64::from(nodes);
    let disk_gb = data_per_node * headroom;
    lines.add(
        "disk per node",
        format!("{} GB", thousands(disk_gb)),
        format!(
            "{} GB × RF {} / {nodes} nodes × {headroom} {}",
            thousands(spec.data.gb),
            spec.rf,
            spec.headroom.value.label
        ),
        spec.headroom.origin.clone(),
    );
    if disk == "local" {
        lines.add(
            "local disk",
            format!(
                "{} GB {}",
                thousands(inst.local_disk_gb),
                inst.local_disk_kind.as_deref().unwrap_or("")
            ),
            format!(
                "holds {} GB; IOPS and MB/s not catalogued for local disks: check with cqlbench probe",
                thousands(disk_gb)
            ),
            Origin::catalogue(&format!("instance {}", inst.name), &inst.source),
        );
        let local = DiskSpec {
            kind: "local".into(),
            size: None,
            iops: None,
            mbps: None,
        };
        return Ok((disk_gb, local));
    }
    let d = cat.disk(disk)?;
    let need = DiskNeed {
        gb: disk_gb,
        iops: spec.min_iops.value,
        mbps: spec.min_mbps.value,
    };
    let q = d.formula.fit(disk, &need, cat.hours_per_month)?;
    lines.add(
        "IOPS check",
        format!("{} ≥ {}", thousands(q.iops), thousands(need.iops)),
        format!(
            "{} IOPS needed per node; disk: {}",
            thousands(need.iops),
            q.limits.join("; ")
        ),
        spec.min_iops.origin.clone(),
    );
    lines.add(
        "throughput check",
        format!("{} ≥ {} MB/s", thousands(q.mbps), thousands(need.mbps)),
        format!("{} MB/s needed per node", thousands(need.mbps)),
        spec.min_mbps.origin.clone(),
    );
    lines.add(
        "volume",
        format!("{} {} GB", disk, thousands(q.size_gb)),
        "sized for data, IOPS and MB/s under the disk's formula".into(),
        Origin::catalogue(&format!("disk {disk}"), &d.source),
    );
    let network = DiskSpec {
        kind: disk.to_string(),
        size: Some(DataSize::from_gb(q.size_gb)),
        iops: d.formula.provisions_iops().then_some(q.iops),
        mbps: d.formula.provisions_mbps().then_some(q.mbps),
    };
    Ok((disk_gb, network))
}
