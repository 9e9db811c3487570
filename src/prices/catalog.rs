//! The price catalogue: instances, disks with their providers' formulas, managed Kubernetes
//! fees, reserved-pricing discounts and assumed per-node capacities. Every price carries the
//! source and the date it was taken from. Loading and validation live in `load.rs`.

use serde::Serialize;

use super::PriceError;
use super::disk::DiskFormula;

/// The catalogue shipped with cqlbench (`catalog/prices.yaml`), used unless `--catalog` says
/// otherwise.
pub const DEFAULT_CATALOG: &str = include_str!("../../catalog/prices.yaml");
/// The name the embedded catalogue is reported under in errors.
pub const DEFAULT_CATALOG_NAME: &str = "catalog/prices.yaml (built in)";

/// Where a figure came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    pub source: String,
    /// `YYYY-MM` or `YYYY-MM-DD`: when the price was in force.
    pub date: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Catalog {
    /// Hours billed in a month (730 = 8,760 / 12, the providers' convention).
    pub hours_per_month: f64,
    pub instances: Vec<Instance>,
    pub disks: Vec<Disk>,
    pub kubernetes: Vec<KubernetesFee>,
    pub reserved_discounts: Vec<ReservedDiscount>,
    pub capacities: Vec<AssumedCapacity>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Instance {
    pub name: String,
    pub provider: String,
    pub region: String,
    pub vcpus: u32,
    pub ram_gb: f64,
    /// Total instance-store (local) disk, 0 for network-disk-only instances.
    pub local_disk_gb: f64,
    /// "nvme", "ssd" or "hdd" when `local_disk_gb` > 0.
    pub local_disk_kind: Option<String>,
    /// On-demand price.
    pub usd_per_hour: f64,
    /// Automatic discount for a full month of use (GCP sustained-use discounts), 0..1.
    pub sustained_use_discount: f64,
    pub reserved: Vec<ReservedPrice>,
    pub source: Source,
}

/// An explicit reserved price of one instance (e.g. ref 004's 3-year heavy-use reservations):
/// an upfront payment plus an hourly rate over the term.
#[derive(Debug, Clone, Serialize)]
pub struct ReservedPrice {
    pub term: String,
    pub upfront_usd: f64,
    pub usd_per_hour: f64,
    pub source: Source,
}

/// A provider-wide reserved/committed-use discount off the on-demand price, used for an
/// instance that has no explicit reserved price for the term.
#[derive(Debug, Clone, Serialize)]
pub struct ReservedDiscount {
    pub provider: String,
    pub term: String,
    pub discount: f64,
    pub source: Source,
}

#[derive(Debug, Clone, Serialize)]
pub struct Disk {
    pub name: String,
    pub provider: String,
    pub formula: DiskFormula,
    pub source: Source,
}

#[derive(Debug, Clone, Serialize)]
pub struct KubernetesFee {
    pub name: String,
    pub provider: String,
    /// Control-plane fee per cluster.
    pub usd_per_hour: f64,
    pub source: Source,
}

/// A per-node capacity used by the planner when no measured capacity is given: an
/// assumption, always reported as one.
#[derive(Debug, Clone, Serialize)]
pub struct AssumedCapacity {
    pub instance: String,
    pub ops_per_s_per_node: f64,
    /// How the figure was derived, e.g. "36,494 / 3".
    pub note: Option<String>,
    pub source: Source,
}

impl Catalog {
    pub fn instance(&self, name: &str) -> Result<&Instance, PriceError> {
        self.instances
            .iter()
            .find(|i| i.name == name)
            .ok_or_else(|| unknown("instance", name, self.instances.iter().map(|i| &i.name)))
    }

    pub fn disk(&self, name: &str) -> Result<&Disk, PriceError> {
        self.disks
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| unknown("disk", name, self.disks.iter().map(|d| &d.name)))
    }

    pub fn kubernetes(&self, name: &str) -> Result<&KubernetesFee, PriceError> {
        self.kubernetes
            .iter()
            .find(|k| k.name == name)
            .ok_or_else(|| {
                unknown(
                    "kubernetes service",
                    name,
                    self.kubernetes.iter().map(|k| &k.name),
                )
            })
    }

    /// The managed Kubernetes service of a provider (the first listed).
    pub fn kubernetes_of(&self, provider: &str) -> Option<&KubernetesFee> {
        self.kubernetes.iter().find(|k| k.provider == provider)
    }

    pub fn reserved_discount(&self, provider: &str, term: &str) -> Option<&ReservedDiscount> {
        self.reserved_discounts
            .iter()
            .find(|d| d.provider == provider && d.term == term)
    }

    pub fn assumed_capacity(&self, instance: &str) -> Option<&AssumedCapacity> {
        self.capacities.iter().find(|c| c.instance == instance)
    }
}

fn unknown<'a>(
    kind: &'static str,
    name: &str,
    names: impl Iterator<Item = &'a String>,
) -> PriceError {
    let names: Vec<&str> = names.map(String::as_str).collect();
    PriceError::Unknown {
        kind,
        name: name.to_string(),
        known: names.join(", "),
    }
}
