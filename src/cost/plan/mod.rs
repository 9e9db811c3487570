//! The planner: candidate clusters for a target throughput and data size, each sized from a
//! per-node capacity (linear scaling) and from data density, with disks sized for data × RF ×
//! compaction headroom and checked for IOPS and throughput, priced on-demand and reserved, and
//! ranked by $/month. Every number carries where it came from.

use serde::Serialize;

use super::CostError;
use super::price::{CostBreakdown, Origin};
use crate::prices::Catalog;
use crate::prices::units::{DataSize, Headroom, Pricing};

mod candidate;
mod capacity;

use candidate::candidate;

pub use capacity::{Capacity, CapacityArg, MeasuredOn, capacities};

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
    /// A measured capacity: how its hardware differs from this instance, and any contradiction
    /// in how it was given (empty for an assumed capacity).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The throughput just missed a smaller cluster: what, by how much, and the nodes it cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_miss: Option<String>,
    pub disk_per_node_gb: f64,
    pub on_demand: CostBreakdown,
    pub reserved_1y: Option<CostBreakdown>,
    pub reserved_3y: Option<CostBreakdown>,
    /// $/month under the ranking pricing (on-demand when that price is missing).
    pub rank_monthly_usd: f64,
    /// $/month (ranking pricing) per 1,000 ops/s of the TARGET throughput: what the planned
    /// cluster costs for what it is sized for, not a measured figure.
    pub cost_per_1k_target_ops_usd: f64,
    pub lines: Vec<PlanLine>,
}

/// A measured capacity beside the instance it is priced as.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredCapacity {
    pub instance: String,
    /// The priced instance's vCPUs and RAM per node, from the catalogue.
    pub vcpus: u32,
    pub ram_gb: f64,
    /// The measured cluster's throughput and node count.
    pub ops_per_s: f64,
    pub nodes: u32,
    pub origin: Origin,
    /// The measured hardware in one line (or why it is not known), and the run it comes from.
    pub hardware: String,
    pub run: Option<String>,
    /// What differs between the measured hardware and the instance, and any contradiction.
    pub warnings: Vec<String>,
}

/// A candidate that could not meet the need, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    pub instance: String,
    pub disk: String,
    pub reason: String,
}

/// The planner's answer: the candidates ranked by $/month, and those that could not meet the
/// need.
#[derive(Debug, Clone, Serialize)]
pub struct CostPlan {
    pub spec: PlanSpec,
    /// The measured capacities, each with the hardware it was measured on beside the instance
    /// it is priced as.
    pub measured: Vec<MeasuredCapacity>,
    pub candidates: Vec<Candidate>,
    pub rejected: Vec<Rejected>,
}

/// Sizes and prices every candidate and ranks them by $/month.
pub fn plan(cat: &Catalog, spec: &PlanSpec, measured: &[Capacity]) -> Result<CostPlan, CostError> {
    if spec.ops_per_s.is_nan() || spec.ops_per_s <= 0.0 || spec.rf == 0 {
        return Err(CostError::Plan("--ops and --rf must be positive".into()));
    }
    let mut known: Vec<&str> = cat.instances.iter().map(|i| i.provider.as_str()).collect();
    known.sort_unstable();
    known.dedup();
    if let Some(p) = spec.providers.iter().find(|p| !known.contains(&p.as_str())) {
        return Err(CostError::Plan(format!(
            "--provider {p}: the catalogue has no such provider (it has {})",
            known.join(", ")
        )));
    }
    let mut candidates = Vec::new();
    let mut rejected = Vec::new();
    let mut beside = Vec::new();
    for cap in measured {
        let inst = cat.instance(&cap.instance)?;
        if let Some(m) = &cap.measured {
            beside.push(MeasuredCapacity {
                instance: inst.name.clone(),
                vcpus: inst.vcpus,
                ram_gb: inst.ram_gb,
                ops_per_s: m.ops_per_s,
                nodes: m.nodes,
                origin: cap.origin.clone(),
                hardware: m.describe(),
                run: m.hardware.as_ref().map(|h| h.run.clone()),
                warnings: m.warnings_against(inst),
            });
        }
    }
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
    Ok(CostPlan {
        spec: spec.clone(),
        measured: beside,
        candidates,
        rejected,
    })
}

#[cfg(test)]
pub(crate) mod tests;
