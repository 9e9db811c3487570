//! Disk pricing formulas of the providers: what a volume of a given size (and provisioned IOPS
//! and throughput) costs per month, and which IOPS and MB/s limits it gets. The numbers come from
//! the catalogue; the shape of each formula is here.

use serde::Serialize;

use super::PriceError;
use crate::format::{rate, thousands};

mod aws;
mod azure;
mod fit;
mod gcp;

pub use aws::{Gp2, Gp3, Hdd, IopsTier, ProvisionedIops};
pub use azure::{AzureTier, AzureTiers, AzureUltra};
pub use fit::DiskNeed;
pub use gcp::{GcpPd, GcpPdExtreme};

/// One provider formula with its catalogue figures.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "formula", rename_all = "snake_case")]
pub enum DiskFormula {
    /// AWS gp2: IOPS indexed to size (3 IOPS/GB) with a floor, a ceiling and burst credits.
    Gp2(Gp2),
    /// AWS gp3: a baseline of IOPS and MB/s included, more provisioned at a price.
    Gp3(Gp3),
    /// AWS io1/io2: every IOPS provisioned and priced, io2 in tiers.
    ProvisionedIops(ProvisionedIops),
    /// AWS st1/sc1: throughput indexed to size, in MB/s per TB.
    Hdd(Hdd),
    /// GCP pd-standard/pd-balanced/pd-ssd: IOPS and MB/s per GB with per-instance caps.
    GcpPd(GcpPd),
    /// GCP pd-extreme: provisioned IOPS.
    GcpPdExtreme(GcpPdExtreme),
    /// Azure Standard HDD/Standard SSD/Premium SSD: fixed size tiers.
    AzureTiers(AzureTiers),
    /// Azure Ultra Disk: size, IOPS and MB/s each provisioned and priced per hour.
    AzureUltra(AzureUltra),
}

/// What is asked of one volume.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskRequest {
    pub size_gb: f64,
    pub iops: Option<f64>,
    pub mbps: Option<f64>,
}

/// One priced component of a volume (storage, provisioned IOPS, provisioned throughput).
#[derive(Debug, Clone, Serialize)]
pub struct QuoteItem {
    pub what: String,
    /// The arithmetic, e.g. "5,120 GB × $0.08/GB-month".
    pub how: String,
    pub monthly_usd: f64,
}

/// The price and performance limits of one volume.
#[derive(Debug, Clone, Serialize)]
pub struct DiskQuote {
    pub disk: String,
    /// The size billed (Azure tiers and Ultra round up).
    pub size_gb: f64,
    /// Sustained IOPS limit (the lower of read and write where they differ).
    pub iops: f64,
    /// Sustained throughput limit in MB/s (the lower of read and write where they differ).
    pub mbps: f64,
    pub monthly_usd: f64,
    pub items: Vec<QuoteItem>,
    /// How the IOPS and MB/s limits follow from the formula.
    pub limits: Vec<String>,
    /// Burst behaviour, caps that depend on the VM, simplifications.
    pub notes: Vec<String>,
}

impl DiskFormula {
    /// Prices one volume and derives its limits; a request outside the disk type's limits is an
    /// error naming the limit.
    pub fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        hours_per_month: f64,
    ) -> Result<DiskQuote, PriceError> {
        let mut q = DiskQuote {
            disk: disk.to_string(),
            size_gb: req.size_gb,
            iops: 0.0,
            mbps: 0.0,
            monthly_usd: 0.0,
            items: Vec::new(),
            limits: Vec::new(),
            notes: Vec::new(),
        };
        let size = req.size_gb;
        if size > self.max_gb() {
            return Err(PriceError::disk(
                disk,
                format!(
                    "{} GB is above the largest volume of {} GB",
                    thousands(size),
                    thousands(self.max_gb())
                ),
            ));
        }
        match self {
            DiskFormula::Gp2(f) => f.quote(disk, req, &mut q)?,
            DiskFormula::Gp3(f) => f.quote(disk, req, &mut q)?,
            DiskFormula::ProvisionedIops(f) => f.quote(disk, req, &mut q)?,
            DiskFormula::Hdd(f) => f.quote(disk, req, &mut q)?,
            DiskFormula::GcpPd(f) => f.quote(disk, req, &mut q)?,
            DiskFormula::GcpPdExtreme(f) => f.quote(disk, req, &mut q)?,
            DiskFormula::AzureTiers(f) => f.quote(disk, req, &mut q)?,
            DiskFormula::AzureUltra(f) => f.quote(disk, req, hours_per_month, &mut q)?,
        }
        q.monthly_usd = q.items.iter().map(|i| i.monthly_usd).sum();
        Ok(q)
    }

    fn max_gb(&self) -> f64 {
        match self {
            DiskFormula::Gp2(f) => f.max_gb,
            DiskFormula::Gp3(f) => f.max_gb,
            DiskFormula::ProvisionedIops(f) => f.max_gb,
            DiskFormula::Hdd(f) => f.max_gb,
            DiskFormula::GcpPd(f) => f.max_gb,
            DiskFormula::GcpPdExtreme(f) => f.max_gb,
            DiskFormula::AzureTiers(f) => f.tiers.iter().map(|t| t.size_gb).fold(0.0, f64::max),
            DiskFormula::AzureUltra(f) => f.max_gb,
        }
    }

    /// Whether MB/s are provisioned rather than derived.
    pub fn provisions_mbps(&self) -> bool {
        matches!(self, DiskFormula::Gp3(_) | DiskFormula::AzureUltra(_))
    }

    /// Whether IOPS are provisioned rather than indexed to size.
    pub fn provisions_iops(&self) -> bool {
        matches!(
            self,
            DiskFormula::Gp3(_)
                | DiskFormula::ProvisionedIops(_)
                | DiskFormula::GcpPdExtreme(_)
                | DiskFormula::AzureUltra(_)
        )
    }
}

pub(super) fn storage_item(size: f64, usd_per_gb_month: f64) -> QuoteItem {
    QuoteItem {
        what: "storage".into(),
        how: format!(
            "{} GB × ${}/GB-month",
            thousands(size),
            rate(usd_per_gb_month)
        ),
        monthly_usd: size * usd_per_gb_month,
    }
}

/// The provisioned IOPS a request must give for a provisioned-IOPS disk type.
pub(super) fn provisioned_iops(disk: &str, req: &DiskRequest) -> Result<f64, PriceError> {
    req.iops.ok_or_else(|| {
        PriceError::disk(
            disk,
            format!("needs provisioned IOPS, e.g. {disk}:1TB:10000iops"),
        )
    })
}

pub(super) fn size_indexed(disk: &str, req: &DiskRequest, how: &str) -> Result<(), PriceError> {
    if req.iops.is_some() || req.mbps.is_some() {
        return Err(PriceError::disk(
            disk,
            format!(
                "IOPS and throughput follow the size ({how}); grow the volume, or use a type \
                 with provisioned IOPS (gp3, io1, io2, pd-extreme, ultra-disk)"
            ),
        ));
    }
    Ok(())
}

pub(super) fn over(disk: &str, what: &str, asked: f64, limit: f64, why: &str) -> PriceError {
    PriceError::disk(
        disk,
        format!(
            "{} {what} is above the limit of {} {what} ({why})",
            thousands(asked),
            thousands(limit)
        ),
    )
}

#[cfg(test)]
mod tests;

/// `arg`'s volume of catalogue disk `disk`, quoted: IOPS and MB/s given where (and only
/// where) the type provisions them, and within its limits. Shared by the StorageClasses
/// `k8s` renders and the disks local clusters emulate (`cluster::storage`).
pub fn quote_volume(
    disk: &crate::prices::catalog::Disk,
    arg: &crate::spec::storage::StorageArg,
    hours_per_month: f64,
) -> Result<DiskQuote, crate::error::Invalid> {
    let v = &arg.volume;
    let s = &arg.text;
    let f = &disk.formula;
    let iops_required = f.provisions_iops() && !matches!(f, DiskFormula::Gp3(_));
    if iops_required && v.iops.is_none() {
        return Err(crate::invalid!(
            "--storage '{s}': {} provisions its IOPS: give {}:SIZE:IOPS",
            v.disk,
            v.disk
        ));
    }
    if !f.provisions_iops() && v.iops.is_some() {
        return Err(crate::invalid!(
            "--storage '{s}': {} IOPS follow from its size and cannot be provisioned: give {}:SIZE",
            v.disk,
            v.disk
        ));
    }
    if !f.provisions_mbps() && v.mbps.is_some() {
        return Err(crate::invalid!(
            "--storage '{s}': {} MB/s cannot be provisioned: give {}:SIZE{}",
            v.disk,
            v.disk,
            if f.provisions_iops() { "[:IOPS]" } else { "" }
        ));
    }
    let request = DiskRequest {
        size_gb: v.size_gib as f64,
        iops: v.iops.map(|n| n as f64),
        mbps: v.mbps.map(|n| n as f64),
    };
    f.quote(&v.disk, &request, hours_per_month)
        .map_err(|e| crate::invalid!("--storage '{s}': {e}"))
}
