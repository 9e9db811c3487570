//! AWS EBS formulas: gp2, gp3, io1/io2, st1/sc1.

use serde::{Deserialize, Serialize};

use super::{
    DiskQuote, DiskRequest, QuoteItem, over, provisioned_iops, size_indexed, storage_item,
};
use crate::format::{rate, thousands};
use crate::prices::PriceError;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gp2 {
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_gb_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub iops_per_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub min_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub burst_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub burst_below_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub small_volume_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub small_volume_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_gb: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gp3 {
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_gb_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub included_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub included_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub usd_per_iops_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub usd_per_mbps_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops_per_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_mbps_per_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_gb: f64,
}

/// A price band of provisioned IOPS: the IOPS up to `up_to_iops` (none = no upper bound) cost
/// `usd_per_iops_month` each.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IopsTier {
    #[serde(default, deserialize_with = "crate::prices::load::fields::opt_pos")]
    pub up_to_iops: Option<f64>,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_iops_month: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvisionedIops {
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_gb_month: f64,
    pub iops_tiers: Vec<IopsTier>,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub min_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops_per_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub mbps_per_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_gb: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hdd {
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_gb_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub baseline_mbps_per_tb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub burst_mbps_per_tb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub min_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_gb: f64,
}

impl Gp2 {
    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        size_indexed(disk, req, "3 IOPS/GB")?;
        let size = req.size_gb;
        q.items.push(storage_item(size, self.usd_per_gb_month));
        let raw = size * self.iops_per_gb;
        q.iops = raw.clamp(self.min_iops, self.max_iops);
        q.limits.push(format!(
            "{} IOPS = {} IOPS/GB × {} GB, kept within {}..{}",
            thousands(q.iops),
            self.iops_per_gb,
            thousands(size),
            thousands(self.min_iops),
            thousands(self.max_iops)
        ));
        q.mbps = if size <= self.small_volume_gb {
            self.small_volume_mbps
        } else {
            self.max_mbps
        };
        q.limits.push(format!(
            "{} MB/s ({} MB/s up to {} GB, {} MB/s above)",
            thousands(q.mbps),
            thousands(self.small_volume_mbps),
            thousands(self.small_volume_gb),
            thousands(self.max_mbps)
        ));
        if size < self.burst_below_gb {
            q.notes.push(format!(
                "bursts to {} IOPS while I/O credits last (volumes under {} GB); the sustained \
                 figure is the baseline above",
                thousands(self.burst_iops),
                thousands(self.burst_below_gb)
            ));
        }
        Ok(())
    }
}

impl Gp3 {
    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        let size = req.size_gb;
        let iops = req
            .iops
            .unwrap_or(self.included_iops)
            .max(self.included_iops);
        let mbps = req
            .mbps
            .unwrap_or(self.included_mbps)
            .max(self.included_mbps);
        if iops > self.max_iops {
            return Err(over(disk, "IOPS", iops, self.max_iops, "per volume"));
        }
        if iops > size * self.max_iops_per_gb {
            let why = format!("{} IOPS/GB × {} GB", self.max_iops_per_gb, thousands(size));
            return Err(over(disk, "IOPS", iops, size * self.max_iops_per_gb, &why));
        }
        if mbps > self.max_mbps {
            return Err(over(disk, "MB/s", mbps, self.max_mbps, "per volume"));
        }
        if mbps > iops * self.max_mbps_per_iops {
            let why = format!("{} MB/s per provisioned IOPS", self.max_mbps_per_iops);
            return Err(over(
                disk,
                "MB/s",
                mbps,
                iops * self.max_mbps_per_iops,
                &why,
            ));
        }
        q.items.push(storage_item(size, self.usd_per_gb_month));
        let extra_iops = iops - self.included_iops;
        q.items.push(QuoteItem {
            what: "IOPS above the included".into(),
            how: format!(
                "({} − {}) IOPS × ${}/IOPS-month",
                thousands(iops),
                thousands(self.included_iops),
                rate(self.usd_per_iops_month)
            ),
            monthly_usd: extra_iops * self.usd_per_iops_month,
        });
        let extra_mbps = mbps - self.included_mbps;
        q.items.push(QuoteItem {
            what: "throughput above the included".into(),
            how: format!(
                "({} − {}) MB/s × ${}/MB/s-month",
                thousands(mbps),
                thousands(self.included_mbps),
                rate(self.usd_per_mbps_month)
            ),
            monthly_usd: extra_mbps * self.usd_per_mbps_month,
        });
        q.iops = iops;
        q.mbps = mbps;
        q.limits.push(format!(
            "{} IOPS and {} MB/s as provisioned ({} IOPS and {} MB/s included)",
            thousands(iops),
            thousands(mbps),
            thousands(self.included_iops),
            thousands(self.included_mbps)
        ));
        Ok(())
    }
}

impl ProvisionedIops {
    /// The monthly price of `iops` provisioned IOPS across the tiers.
    pub fn iops_usd(&self, iops: f64) -> (f64, Vec<String>) {
        let mut left = iops;
        let mut floor = 0.0;
        let mut total = 0.0;
        let mut parts = Vec::new();
        for tier in &self.iops_tiers {
            if left <= 0.0 {
                break;
            }
            let band = tier.up_to_iops.map_or(left, |top| (top - floor).min(left));
            total += band * tier.usd_per_iops_month;
            parts.push(format!(
                "{} × ${}",
                thousands(band),
                rate(tier.usd_per_iops_month)
            ));
            left -= band;
            floor = tier.up_to_iops.unwrap_or(floor);
        }
        (total, parts)
    }

    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        let size = req.size_gb;
        let iops = provisioned_iops(disk, req)?;
        if iops < self.min_iops {
            return Err(PriceError::disk(
                disk,
                format!(
                    "{} IOPS is below the minimum of {}",
                    thousands(iops),
                    thousands(self.min_iops)
                ),
            ));
        }
        if iops > self.max_iops {
            return Err(over(disk, "IOPS", iops, self.max_iops, "per volume"));
        }
        if iops > size * self.max_iops_per_gb {
            let why = format!("{} IOPS/GB × {} GB", self.max_iops_per_gb, thousands(size));
            return Err(over(disk, "IOPS", iops, size * self.max_iops_per_gb, &why));
        }
        let mbps = (iops * self.mbps_per_iops).min(self.max_mbps);
        if let Some(asked) = req.mbps.filter(|m| *m > mbps) {
            let why = format!(
                "{} MB/s per IOPS, at most {}",
                self.mbps_per_iops, self.max_mbps
            );
            return Err(over(disk, "MB/s", asked, mbps, &why));
        }
        q.items.push(storage_item(size, self.usd_per_gb_month));
        let (iops_usd, parts) = self.iops_usd(iops);
        q.items.push(QuoteItem {
            what: "provisioned IOPS".into(),
            how: format!("{} /IOPS-month", parts.join(" + ")),
            monthly_usd: iops_usd,
        });
        q.iops = iops;
        q.mbps = mbps;
        q.limits
            .push(format!("{} IOPS as provisioned", thousands(iops)));
        q.limits.push(format!(
            "{} MB/s = min({} MB/s per IOPS × {} IOPS, {})",
            thousands(mbps),
            self.mbps_per_iops,
            thousands(iops),
            thousands(self.max_mbps)
        ));
        Ok(())
    }
}

impl Hdd {
    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        size_indexed(disk, req, "MB/s per TB")?;
        let size = req.size_gb;
        if size < self.min_gb {
            return Err(PriceError::disk(
                disk,
                format!(
                    "{} GB is below the smallest volume of {} GB",
                    thousands(size),
                    thousands(self.min_gb)
                ),
            ));
        }
        q.items.push(storage_item(size, self.usd_per_gb_month));
        let tb = size / 1024.0;
        q.mbps = (tb * self.baseline_mbps_per_tb).min(self.max_mbps);
        let burst = (tb * self.burst_mbps_per_tb).min(self.max_mbps);
        q.iops = self.max_iops;
        q.limits.push(format!(
            "{} MB/s baseline = {} MB/s per TB × {:.2} TB, at most {}",
            thousands(q.mbps),
            self.baseline_mbps_per_tb,
            tb,
            thousands(self.max_mbps)
        ));
        q.limits.push(format!(
            "{} IOPS (1 MiB sequential I/Os)",
            thousands(q.iops)
        ));
        q.notes.push(format!(
            "bursts to {} MB/s while credits last; small random reads are slow on HDD and do \
             not suit Cassandra's read path",
            thousands(burst)
        ));
        Ok(())
    }
}
