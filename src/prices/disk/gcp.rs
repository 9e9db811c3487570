//! GCP persistent-disk formulas: pd-standard, pd-balanced, pd-ssd, pd-extreme.

use serde::{Deserialize, Serialize};

use super::{
    DiskQuote, DiskRequest, QuoteItem, over, provisioned_iops, size_indexed, storage_item,
};
use crate::format::{rate, thousands};
use crate::prices::PriceError;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcpPd {
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_gb_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub baseline_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub read_iops_per_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub write_iops_per_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub baseline_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub mbps_per_gb: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub instance_read_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub instance_write_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub instance_read_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub instance_write_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_gb: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcpPdExtreme {
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_gb_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub usd_per_iops_month: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::nonneg")]
    pub min_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_iops: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub instance_mbps: f64,
    #[serde(deserialize_with = "crate::prices::load::fields::pos")]
    pub max_gb: f64,
}

impl GcpPd {
    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        size_indexed(disk, req, "IOPS and MB/s per GB")?;
        let size = req.size_gb;
        q.items.push(storage_item(size, self.usd_per_gb_month));
        let read = (self.baseline_iops + size * self.read_iops_per_gb).min(self.instance_read_iops);
        let write =
            (self.baseline_iops + size * self.write_iops_per_gb).min(self.instance_write_iops);
        let by_size_mbps = self.baseline_mbps + size * self.mbps_per_gb;
        let read_mbps = by_size_mbps.min(self.instance_read_mbps);
        let write_mbps = by_size_mbps.min(self.instance_write_mbps);
        q.iops = read.min(write);
        q.mbps = read_mbps.min(write_mbps);
        q.limits.push(format!(
            "read {} IOPS = {} + {} IOPS/GB × {} GB, capped at {} per instance; write {} IOPS \
             ({} IOPS/GB, cap {})",
            thousands(read),
            thousands(self.baseline_iops),
            self.read_iops_per_gb,
            thousands(size),
            thousands(self.instance_read_iops),
            thousands(write),
            self.write_iops_per_gb,
            thousands(self.instance_write_iops)
        ));
        q.limits.push(format!(
            "{} MB/s = {} + {} MB/s per GB × {} GB = {}, capped at {} read / {} write per instance",
            thousands(q.mbps),
            thousands(self.baseline_mbps),
            self.mbps_per_gb,
            thousands(size),
            thousands(by_size_mbps),
            thousands(self.instance_read_mbps),
            thousands(self.instance_write_mbps)
        ));
        q.notes.push(
            "per-instance caps are those of the largest VMs; smaller VMs (fewer vCPUs) get lower \
             caps, so measure with cqlbench probe"
                .into(),
        );
        Ok(())
    }
}

impl GcpPdExtreme {
    pub(super) fn quote(
        &self,
        disk: &str,
        req: &DiskRequest,
        q: &mut DiskQuote,
    ) -> Result<(), PriceError> {
        let size = req.size_gb;
        let iops = provisioned_iops(disk, req)?;
        if iops < self.min_iops || iops > self.max_iops {
            return Err(PriceError::disk(
                disk,
                format!(
                    "{} IOPS is outside {}..{}",
                    thousands(iops),
                    thousands(self.min_iops),
                    thousands(self.max_iops)
                ),
            ));
        }
        if let Some(asked) = req.mbps.filter(|m| *m > self.instance_mbps) {
            return Err(over(
                disk,
                "MB/s",
                asked,
                self.instance_mbps,
                "per instance",
            ));
        }
        q.items.push(storage_item(size, self.usd_per_gb_month));
        q.items.push(QuoteItem {
            what: "provisioned IOPS".into(),
            how: format!(
                "{} IOPS × ${}/IOPS-month",
                thousands(iops),
                rate(self.usd_per_iops_month)
            ),
            monthly_usd: iops * self.usd_per_iops_month,
        });
        q.iops = iops;
        q.mbps = self.instance_mbps;
        q.limits
            .push(format!("{} IOPS as provisioned", thousands(iops)));
        q.limits
            .push(format!("{} MB/s per-instance cap", thousands(q.mbps)));
        Ok(())
    }
}
