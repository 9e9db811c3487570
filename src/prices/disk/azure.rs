//! Azure managed-disk formulas: size tiers (Standard HDD/SSD, Premium SSD) and Ultra Disk.

use serde::{Deserialize, Serialize};

use super::{DiskQuote, DiskRequest, QuoteItem, over, size_indexed};
use crate::format::{rate, thousands};
use crate::prices::PriceError;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzureTier {
    #[serde(deserialize_with = "crate::prices::load::fields::text")]
    pub name: String,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub size_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub mbps: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzureTiers {
    pub tiers: Vec<AzureTier>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzureUltra {
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_gb_hour: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_iops_hour: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_mbps_hour: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub min_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops_per_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_mbps_per_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_gb: f64,
}

impl AzureTiers {
    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        size_indexed(disk, req, "fixed per size tier")?;
        let tier = self
            .tiers
            .iter()
            .filter(|t| t.size_gb >= req.size_gb)
            .min_by(|a, b| a.size_gb.total_cmp(&b.size_gb))
            .ok_or_else(|| PriceError::disk(disk, "no tier is large enough"))?;
        q.size_gb = tier.size_gb;
        q.items.push(QuoteItem {
            what: format!("tier {}", tier.name),
            how: format!(
                "{} GB tier for {} GB, ${}/month",
                thousands(tier.size_gb),
                thousands(req.size_gb),
                rate(tier.usd_per_month)
            ),
            monthly_usd: tier.usd_per_month,
        });
        q.iops = tier.iops;
        q.mbps = tier.mbps;
        q.limits.push(format!(
            "{} IOPS and {} MB/s for tier {}",
            thousands(tier.iops),
            thousands(tier.mbps),
            tier.name
        ));
        Ok(())
    }
}

impl AzureUltra {
    /// Ultra disks are billed at the next provisioned size: powers of two up to 512 GiB, then
    /// whole TiB.
    pub fn billed_gb(size: f64) -> f64 {
        if size <= 512.0 {
            size.max(1.0).log2().ceil().exp2()
        } else {
            (size / 1024.0).ceil() * 1024.0
        }
    }

    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        hours: f64,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        let need = || {
            PriceError::disk(
                disk,
                format!("needs IOPS and MB/s, e.g. {disk}:4TB:10000iops:200mbps"),
            )
        };
        let (iops, mbps) = (req.iops.ok_or_else(need)?, req.mbps.ok_or_else(need)?);
        let size = Self::billed_gb(req.size_gb);
        let max_iops = self.max_iops.min(size * self.max_iops_per_gb);
        if iops < self.min_iops || iops > max_iops {
            return Err(PriceError::disk(
                disk,
                format!(
                    "{} IOPS is outside {}..{} ({} IOPS/GB × {} GB, at most {})",
                    thousands(iops),
                    thousands(self.min_iops),
                    thousands(max_iops),
                    self.max_iops_per_gb,
                    thousands(size),
                    thousands(self.max_iops)
                ),
            ));
        }
        let max_mbps = self.max_mbps.min(iops * self.max_mbps_per_iops);
        if mbps > max_mbps {
            let why = format!(
                "{} MB/s per IOPS, at most {}",
                self.max_mbps_per_iops, self.max_mbps
            );
            return Err(over(disk, "MB/s", mbps, max_mbps, &why));
        }
        q.size_gb = size;
        let per_hour = |what: &str, n: f64, unit: &str, price: f64| QuoteItem {
            what: what.into(),
            how: format!(
                "{} {unit} × ${}/{unit}-hour × {hours} h",
                thousands(n),
                rate(price)
            ),
            monthly_usd: n * price * hours,
        };
        q.items
            .push(per_hour("capacity", size, "GB", self.usd_per_gb_hour));
        q.items.push(per_hour(
            "provisioned IOPS",
            iops,
            "IOPS",
            self.usd_per_iops_hour,
        ));
        q.items.push(per_hour(
            "provisioned throughput",
            mbps,
            "MB/s",
            self.usd_per_mbps_hour,
        ));
        q.iops = iops;
        q.mbps = mbps;
        q.limits.push(format!(
            "{} IOPS and {} MB/s as provisioned",
            thousands(iops),
            thousands(mbps)
        ));
        Ok(())
    }
}
