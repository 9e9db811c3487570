//! The planner: candidate clusters for a target throughput and data size, each sized from a
//! per-node capacity (linear scaling) and from data density, with disks sized for data × RF ×
//! compaction headroom and checked for IOPS and throughput, priced on-demand and reserved, and
//! ranked by $/month. Every number carries where it came from.

use serde::Serialize;

use super::disk::DiskNeed;
use super::price::{ClusterSpec, CostBreakdown, Origin, cost_per_1k_ops_usd, price_cluster};
use super::units::{DataSize, DiskSpec, Headroom, Pricing};
use super::{Catalog, CostError};
use crate::format::thousands;

mod capacity;
mod text;

pub use capacity::{Capacity, CapacityArg, capacities};
pub use text::plan_text;

/// A value with where it came from (given, or an assumed default).
#[derive(Debug, Clone, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub origin: Origin,
}

impl<T> Sourced<T> {
    pub fn given(value: T) -> Self {
        Sourced {
            value,
            origin: Origin::Input,
        }
    }

    pub fn assumed(value: T, why: &str) -> Self {
        Sourced {
            value,
            origin: Origin::Assumed(why.to_string()),
        }
    }
}

/// What to plan for.
#[derive(Debug, Clone, Serialize)]
pub struct PlanSpec {
    pub ops_per_s: f64,
    /// Live data before replication.
    pub data: DataSize,
    pub rf: u32,
    pub headroom: Sourced<Headroom>,
    /// Most live (replicated) data one node should hold.
    pub density: Sourced<DataSize>,
    /// IOPS and MB/s one node's data disk must sustain.
    pub min_iops: Sourced<f64>,
    pub min_mbps: Sourced<f64>,
    /// Network disk types for instances without local disks.
    pub disks: Vec<String>,
    /// Providers to consider (empty: all).
    pub providers: Vec<String>,
    /// Add the provider's managed Kubernetes fee.
    pub k8s: bool,
    /// The pricing the candidates are ranked by.
    pub rank_by: Pricing,
}

/// One line of a candidate's explanation.
#[derive(Debug, Clone, Serialize)]
pub struct PlanLine {
    pub what: String,
    pub value: String,
    pub how: String,
    pub origin: Origin,
}

/// A priced candidate cluster.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    pub instance: String,
    pub provider: String,
    /// "local" or the network disk type.
    pub disk: String,
    pub nodes: u32,
    pub ops_per_s_per_node: f64,
    pub capacity_ops_per_s: f64,
    pub capacity_measured: bool,
    pub disk_per_node_gb: f64,
    pub on_demand: CostBreakdown,
    pub reserved_1y: Option<CostBreakdown>,
    pub reserved_3y: Option<CostBreakdown>,
    /// $/month under the ranking pricing (on-demand when that price is missing).
    pub rank_monthly_usd: f64,
    pub cost_per_1k_ops_usd: f64,
    pub lines: Vec<PlanLine>,
}

/// A candidate that could not meet the need, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    pub instance: String,
    pub disk: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub spec: PlanSpec,
    pub candidates: Vec<Candidate>,
    pub rejected: Vec<Rejected>,
}

/// Sizes and prices every candidate and ranks them by $/month.
pub fn plan(cat: &Catalog, spec: &PlanSpec, measured: &[Capacity]) -> Result<Plan, CostError> {
    if spec.ops_per_s.is_nan() || spec.ops_per_s <= 0.0 || spec.rf == 0 {
        return Err(CostError::Plan("--ops and --rf must be positive".into()));
    }
    let mut candidates = Vec::new();
    let mut rejected = Vec::new();
    for cap in capacities(cat, measured)? {
        let inst = cat.instance(&cap.instance)?;
        if !spec.providers.is_empty() && !spec.providers.contains(&inst.provider) {
            continue;
        }
        let disks: Vec<&str> = if inst.local_disk_gb > 0.0 {
            vec!["local"]
        } else {
            spec.disks
                .iter()
                .filter(|d| cat.disk(d).is_ok_and(|d| d.provider == inst.provider))
                .map(String::as_str)
                .collect()
        };
        for disk in disks {
            match candidate(cat, spec, &cap, disk) {
                Ok(c) => candidates.push(c),
                Err(e) => rejected.push(Rejected {
                    instance: cap.instance.clone(),
                    disk: disk.to_string(),
                    reason: e.to_string(),
                }),
            }
        }
    }
    if candidates.is_empty() && rejected.is_empty() {
        return Err(CostError::Plan(
            "no instance with a capacity (measured or assumed) matches the filters".into(),
        ));
    }
    candidates.sort_by(|a, b| a.rank_monthly_usd.total_cmp(&b.rank_monthly_usd));
    Ok(Plan {
        spec: spec.clone(),
        candidates,
        rejected,
    })
}

fn ceil_div(a: f64, b: f64) -> u32 {
    (a / b - 1e-9).ceil().max(1.0) as u32
}

fn candidate(
    cat: &Catalog,
    spec: &PlanSpec,
    cap: &Capacity,
    disk: &str,
) -> Result<Candidate, CostError> {
    let inst = cat.instance(&cap.instance)?;
    let rf = f64::from(spec.rf);
    let headroom = spec.headroom.value.factor;
    let replicated_gb = spec.data.gb * rf;
    let mut lines = Vec::new();
    let mut line = |what: &str, value: String, how: String, origin: Origin| {
        lines.push(PlanLine {
            what: what.into(),
            value,
            how,
            origin,
        })
    };
    line(
        "capacity per node",
        format!("{} ops/s", thousands(cap.ops_per_s_per_node)),
        cap.how.clone(),
        cap.origin.clone(),
    );
    let by_ops = ceil_div(spec.ops_per_s, cap.ops_per_s_per_node);
    line(
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
    line(
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
    let mut nodes = by_ops.max(by_density).max(spec.rf);
    if inst.local_disk_gb > 0.0 {
        let by_local = ceil_div(replicated_gb * headroom, inst.local_disk_gb);
        line(
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
        nodes = nodes.max(by_local);
    }
    nodes = nodes.div_ceil(spec.rf) * spec.rf;
    line(
        "nodes",
        nodes.to_string(),
        format!(
            "the largest of the above and RF, rounded up to a multiple of RF {} (one rack per replica)",
            spec.rf
        ),
        Origin::Formula("max, rounded to racks".into()),
    );
    let data_per_node = replicated_gb / f64::from(nodes);
    let disk_gb = data_per_node * headroom;
    line(
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
    let disk_spec = if disk == "local" {
        line(
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
        DiskSpec {
            kind: "local".into(),
            size: None,
            iops: None,
            mbps: None,
        }
    } else {
        let d = cat.disk(disk)?;
        let need = DiskNeed {
            gb: disk_gb,
            iops: spec.min_iops.value,
            mbps: spec.min_mbps.value,
        };
        let q = d.formula.fit(disk, &need, cat.hours_per_month)?;
        line(
            "IOPS check",
            format!("{} ≥ {}", thousands(q.iops), thousands(need.iops)),
            format!(
                "{} IOPS needed per node; disk: {}",
                thousands(need.iops),
                q.limits.join("; ")
            ),
            spec.min_iops.origin.clone(),
        );
        line(
            "throughput check",
            format!("{} ≥ {} MB/s", thousands(q.mbps), thousands(need.mbps)),
            format!("{} MB/s needed per node", thousands(need.mbps)),
            spec.min_mbps.origin.clone(),
        );
        line(
            "volume",
            format!("{} {} GB", disk, thousands(q.size_gb)),
            "sized for data, IOPS and MB/s under the disk's formula".into(),
            Origin::catalogue(&format!("disk {disk}"), &d.source),
        );
        DiskSpec {
            kind: disk.to_string(),
            size: Some(DataSize::from_gb(q.size_gb)),
            iops: d.formula.provisions_iops().then_some(q.iops),
            mbps: d.formula.provisions_mbps().then_some(q.mbps),
        }
    };
    let k8s = spec
        .k8s
        .then(|| cat.kubernetes_of(&inst.provider).map(|k| k.name.clone()))
        .flatten();
    let price = |pricing| {
        price_cluster(
            cat,
            &ClusterSpec {
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
    let rank = match spec.rank_by {
        Pricing::OnDemand => Some(&on_demand),
        Pricing::Reserved1y => reserved_1y.as_ref(),
        Pricing::Reserved3y => reserved_3y.as_ref(),
    }
    .unwrap_or(&on_demand);
    let rank_monthly_usd = rank.total_monthly_usd;
    let capacity = f64::from(nodes) * cap.ops_per_s_per_node;
    Ok(Candidate {
        instance: inst.name.clone(),
        provider: inst.provider.clone(),
        disk: disk.to_string(),
        nodes,
        ops_per_s_per_node: cap.ops_per_s_per_node,
        capacity_ops_per_s: capacity,
        capacity_measured: matches!(cap.origin, Origin::Measured(_)),
        disk_per_node_gb: disk_gb,
        cost_per_1k_ops_usd: cost_per_1k_ops_usd(rank_monthly_usd, spec.ops_per_s).unwrap_or(0.0),
        on_demand,
        reserved_1y,
        reserved_3y,
        rank_monthly_usd,
        lines,
    })
}

#[cfg(test)]
mod tests;
