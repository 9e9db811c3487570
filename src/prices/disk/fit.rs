//! Sizing a volume for a need: the smallest request of a disk type that holds `need_gb` and
//! sustains `need_iops` and `need_mbps`, as the planner asks. Size-indexed types grow; types with
//! provisioned performance provision it.

use super::{DiskFormula, DiskQuote, DiskRequest};
use crate::format::thousands;
use crate::prices::PriceError;

/// What one node's volume must hold and sustain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskNeed {
    pub gb: f64,
    pub iops: f64,
    pub mbps: f64,
}

impl DiskFormula {
    /// The cheapest request of this type meeting `need` under the formula, priced. An unmet
    /// need (beyond the type's limits) is an error naming the limit.
    pub fn fit(
        &self,
        disk: &str,
        need: &DiskNeed,
        hours_per_month: f64,
    ) -> Result<DiskQuote, PriceError> {
        let req = self.request_for(need);
        let q = self.quote(disk, &req, hours_per_month)?;
        if q.iops + 0.5 < need.iops {
            return Err(PriceError::disk(
                disk,
                format!(
                    "reaches {} IOPS at most, {} needed",
                    thousands(q.iops),
                    thousands(need.iops)
                ),
            ));
        }
        if q.mbps + 0.5 < need.mbps {
            return Err(PriceError::disk(
                disk,
                format!(
                    "reaches {} MB/s at most, {} needed",
                    thousands(q.mbps),
                    thousands(need.mbps)
                ),
            ));
        }
        Ok(q)
    }

    fn request_for(&self, need: &DiskNeed) -> DiskRequest {
        let size = |gb: f64| gb.ceil();
        let sized = |gb: f64| DiskRequest {
            size_gb: size(gb),
            iops: None,
            mbps: None,
        };
        match self {
            DiskFormula::Gp2(f) => {
                let mut gb = need.gb.max(need.iops / f.iops_per_gb);
                if need.mbps > f.small_volume_mbps {
                    gb = gb.max(f.small_volume_gb + 1.0);
                }
                sized(gb.min(f.max_gb))
            }
            DiskFormula::Gp3(f) => {
                let iops = f
                    .included_iops
                    .max(need.iops)
                    .max(need.mbps / f.max_mbps_per_iops);
                let mbps = f.included_mbps.max(need.mbps);
                DiskRequest {
                    size_gb: size(need.gb.max(iops / f.max_iops_per_gb)),
                    iops: Some(iops.ceil()),
                    mbps: Some(mbps.ceil()),
                }
            }
            DiskFormula::ProvisionedIops(f) => {
                let iops = f.min_iops.max(need.iops).max(need.mbps / f.mbps_per_iops);
                DiskRequest {
                    size_gb: size(need.gb.max(iops / f.max_iops_per_gb)),
                    iops: Some(iops.ceil()),
                    mbps: None,
                }
            }
            DiskFormula::Hdd(f) => sized(
                need.gb
                    .max(f.min_gb)
                    .max(need.mbps * 1024.0 / f.baseline_mbps_per_tb)
                    .min(f.max_gb),
            ),
            DiskFormula::GcpPd(f) => {
                let per_gb = f.read_iops_per_gb.min(f.write_iops_per_gb);
                let gb = need
                    .gb
                    .max((need.iops - f.baseline_iops) / per_gb)
                    .max((need.mbps - f.baseline_mbps) / f.mbps_per_gb);
                sized(gb.min(f.max_gb))
            }
            DiskFormula::GcpPdExtreme(f) => DiskRequest {
                size_gb: size(need.gb),
                iops: Some(f.min_iops.max(need.iops).ceil()),
                mbps: None,
            },
            DiskFormula::AzureTiers(f) => {
                let tier = f
                    .tiers
                    .iter()
                    .filter(|t| t.size_gb >= need.gb && t.iops >= need.iops && t.mbps >= need.mbps)
                    .min_by(|a, b| a.usd_per_month.total_cmp(&b.usd_per_month));
                // No tier meets the need: ask for the largest and let the check report it.
                let gb = tier.map_or_else(
                    || f.tiers.iter().map(|t| t.size_gb).fold(need.gb, f64::max),
                    |t| t.size_gb,
                );
                sized(gb)
            }
            DiskFormula::AzureUltra(f) => {
                let iops = f
                    .min_iops
                    .max(need.iops)
                    .max(need.mbps / f.max_mbps_per_iops);
                DiskRequest {
                    size_gb: size(need.gb.max(iops / f.max_iops_per_gb)),
                    iops: Some(iops.ceil()),
                    mbps: Some(need.mbps.max(1.0).ceil()),
                }
            }
        }
    }
}
