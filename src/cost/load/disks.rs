//! A disk entry of the catalogue: its formula, the fields that formula takes (besides the
//! common ones) and their values.

use crate::yaml::Value;

use super::entry::Entry;
use crate::cost::CostError;
use crate::cost::catalog::Disk;
use crate::cost::disk::{
    AzureTier, AzureTiers, AzureUltra, DiskFormula, GcpPd, GcpPdExtreme, Gp2, Gp3, Hdd, IopsTier,
    ProvisionedIops,
};

/// Fields every disk entry may have.
const COMMON: [&str; 6] = ["name", "provider", "formula", "note", "source", "date"];

/// A formula's parser of an entry's values.
type ParseFormula = fn(&Entry) -> Result<DiskFormula, CostError>;

/// Each formula: its name in the catalogue, the fields it takes and its parser.
const FORMULAS: [(&str, &[&str], ParseFormula); 8] = [
    (
        "gp2",
        &[
            "usd_per_gb_month",
            "iops_per_gb",
            "min_iops",
            "max_iops",
            "burst_iops",
            "burst_below_gb",
            "max_mbps",
            "small_volume_gb",
            "small_volume_mbps",
            "max_gb",
        ],
        gp2,
    ),
    (
        "gp3",
        &[
            "usd_per_gb_month",
            "included_iops",
            "included_mbps",
            "usd_per_iops_month",
            "usd_per_mbps_month",
            "max_iops",
            "max_mbps",
            "max_iops_per_gb",
            "max_mbps_per_iops",
            "max_gb",
        ],
        gp3,
    ),
    (
        "provisioned_iops",
        &[
            "usd_per_gb_month",
            "iops_tiers",
            "min_iops",
            "max_iops",
            "max_iops_per_gb",
            "mbps_per_iops",
            "max_mbps",
            "max_gb",
        ],
        provisioned_iops,
    ),
    (
        "hdd",
        &[
            "usd_per_gb_month",
            "baseline_mbps_per_tb",
            "burst_mbps_per_tb",
            "max_mbps",
            "max_iops",
            "min_gb",
            "max_gb",
        ],
        hdd,
    ),
    (
        "gcp_pd",
        &[
            "usd_per_gb_month",
            "baseline_iops",
            "read_iops_per_gb",
            "write_iops_per_gb",
            "baseline_mbps",
            "mbps_per_gb",
            "instance_read_iops",
            "instance_write_iops",
            "instance_read_mbps",
            "instance_write_mbps",
            "max_gb",
        ],
        gcp_pd,
    ),
    (
        "gcp_pd_extreme",
        &[
            "usd_per_gb_month",
            "usd_per_iops_month",
            "min_iops",
            "max_iops",
            "instance_mbps",
            "max_gb",
        ],
        gcp_pd_extreme,
    ),
    ("azure_tiers", &["tiers"], azure_tiers),
    (
        "azure_ultra",
        &[
            "usd_per_gb_hour",
            "usd_per_iops_hour",
            "usd_per_mbps_hour",
            "min_iops",
            "max_iops",
            "max_iops_per_gb",
            "max_mbps",
            "max_mbps_per_iops",
            "max_gb",
        ],
        azure_ultra,
    ),
];

pub(super) fn parse_disk(e: &Entry) -> Result<Disk, CostError> {
    let formula = e.string("formula")?;
    let Some((_, fields, parse)) = FORMULAS.iter().find(|(name, _, _)| *name == formula) else {
        let names: Vec<&str> = FORMULAS.iter().map(|(name, _, _)| *name).collect();
        return Err(e.err("formula", &format!("expected one of {}", names.join(", "))));
    };
    e.allow_with(&COMMON, fields)?;
    let formula = parse(e)?;
    Ok(Disk {
        name: e.string("name")?,
        provider: e.provider()?,
        formula,
        source: e.source()?,
    })
}

fn gp2(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::Gp2(Gp2 {
        usd_per_gb_month: e.pos_num("usd_per_gb_month")?,
        iops_per_gb: e.pos_num("iops_per_gb")?,
        min_iops: e.nonneg_num("min_iops")?,
        max_iops: e.pos_num("max_iops")?,
        burst_iops: e.nonneg_num("burst_iops")?,
        burst_below_gb: e.nonneg_num("burst_below_gb")?,
        max_mbps: e.pos_num("max_mbps")?,
        small_volume_gb: e.nonneg_num("small_volume_gb")?,
        small_volume_mbps: e.pos_num("small_volume_mbps")?,
        max_gb: e.pos_num("max_gb")?,
    }))
}

fn gp3(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::Gp3(Gp3 {
        usd_per_gb_month: e.pos_num("usd_per_gb_month")?,
        included_iops: e.nonneg_num("included_iops")?,
        included_mbps: e.nonneg_num("included_mbps")?,
        usd_per_iops_month: e.nonneg_num("usd_per_iops_month")?,
        usd_per_mbps_month: e.nonneg_num("usd_per_mbps_month")?,
        max_iops: e.pos_num("max_iops")?,
        max_mbps: e.pos_num("max_mbps")?,
        max_iops_per_gb: e.pos_num("max_iops_per_gb")?,
        max_mbps_per_iops: e.pos_num("max_mbps_per_iops")?,
        max_gb: e.pos_num("max_gb")?,
    }))
}

fn provisioned_iops(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::ProvisionedIops(ProvisionedIops {
        usd_per_gb_month: e.pos_num("usd_per_gb_month")?,
        iops_tiers: parse_iops_tiers(e)?,
        min_iops: e.nonneg_num("min_iops")?,
        max_iops: e.pos_num("max_iops")?,
        max_iops_per_gb: e.pos_num("max_iops_per_gb")?,
        mbps_per_iops: e.pos_num("mbps_per_iops")?,
        max_mbps: e.pos_num("max_mbps")?,
        max_gb: e.pos_num("max_gb")?,
    }))
}

fn hdd(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::Hdd(Hdd {
        usd_per_gb_month: e.pos_num("usd_per_gb_month")?,
        baseline_mbps_per_tb: e.pos_num("baseline_mbps_per_tb")?,
        burst_mbps_per_tb: e.pos_num("burst_mbps_per_tb")?,
        max_mbps: e.pos_num("max_mbps")?,
        max_iops: e.pos_num("max_iops")?,
        min_gb: e.nonneg_num("min_gb")?,
        max_gb: e.pos_num("max_gb")?,
    }))
}

fn gcp_pd(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::GcpPd(GcpPd {
        usd_per_gb_month: e.pos_num("usd_per_gb_month")?,
        baseline_iops: e.nonneg_num("baseline_iops")?,
        read_iops_per_gb: e.pos_num("read_iops_per_gb")?,
        write_iops_per_gb: e.pos_num("write_iops_per_gb")?,
        baseline_mbps: e.nonneg_num("baseline_mbps")?,
        mbps_per_gb: e.pos_num("mbps_per_gb")?,
        instance_read_iops: e.pos_num("instance_read_iops")?,
        instance_write_iops: e.pos_num("instance_write_iops")?,
        instance_read_mbps: e.pos_num("instance_read_mbps")?,
        instance_write_mbps: e.pos_num("instance_write_mbps")?,
        max_gb: e.pos_num("max_gb")?,
    }))
}

fn gcp_pd_extreme(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::GcpPdExtreme(GcpPdExtreme {
        usd_per_gb_month: e.pos_num("usd_per_gb_month")?,
        usd_per_iops_month: e.pos_num("usd_per_iops_month")?,
        min_iops: e.nonneg_num("min_iops")?,
        max_iops: e.pos_num("max_iops")?,
        instance_mbps: e.pos_num("instance_mbps")?,
        max_gb: e.pos_num("max_gb")?,
    }))
}

fn azure_tiers(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::AzureTiers(AzureTiers {
        tiers: parse_azure_tiers(e)?,
    }))
}

fn azure_ultra(e: &Entry) -> Result<DiskFormula, CostError> {
    Ok(DiskFormula::AzureUltra(AzureUltra {
        usd_per_gb_hour: e.pos_num("usd_per_gb_hour")?,
        usd_per_iops_hour: e.pos_num("usd_per_iops_hour")?,
        usd_per_mbps_hour: e.pos_num("usd_per_mbps_hour")?,
        min_iops: e.nonneg_num("min_iops")?,
        max_iops: e.pos_num("max_iops")?,
        max_iops_per_gb: e.pos_num("max_iops_per_gb")?,
        max_mbps: e.pos_num("max_mbps")?,
        max_mbps_per_iops: e.pos_num("max_mbps_per_iops")?,
        max_gb: e.pos_num("max_gb")?,
    }))
}

fn parse_iops_tiers(e: &Entry) -> Result<Vec<IopsTier>, CostError> {
    let items = e
        .get("iops_tiers")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            e.err(
                "iops_tiers",
                "expected a non-empty list of IOPS price tiers",
            )
        })?;
    let mut tiers: Vec<IopsTier> = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let t = e.child(&format!("iops tier #{}", i + 1), v)?;
        t.allow(&["up_to_iops", "usd_per_iops_month"])?;
        let up_to = t.opt_pos_num("up_to_iops")?;
        let last = i + 1 == items.len();
        match (up_to, tiers.last().and_then(|p| p.up_to_iops)) {
            (None, _) if !last => {
                return Err(t.err("up_to_iops", "expected a bound on every tier but the last"));
            }
            (Some(top), Some(prev)) if top <= prev => {
                return Err(t.err("up_to_iops", "expected bounds that increase tier by tier"));
            }
            _ => {}
        }
        tiers.push(IopsTier {
            up_to_iops: up_to,
            usd_per_iops_month: t.pos_num("usd_per_iops_month")?,
        });
    }
    Ok(tiers)
}

fn parse_azure_tiers(e: &Entry) -> Result<Vec<AzureTier>, CostError> {
    let items = e
        .get("tiers")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| e.err("tiers", "expected a non-empty list of size tiers"))?;
    let mut tiers = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let name = v.get("name").and_then(Value::as_str);
        let label = name.map_or(format!("tier #{}", i + 1), |n| format!("tier \"{n}\""));
        let t = e.child(&label, v)?;
        t.allow(&["name", "size_gb", "usd_per_month", "iops", "mbps"])?;
        tiers.push(AzureTier {
            name: t.string("name")?,
            size_gb: t.pos_num("size_gb")?,
            usd_per_month: t.pos_num("usd_per_month")?,
            iops: t.pos_num("iops")?,
            mbps: t.pos_num("mbps")?,
        });
    }
    Ok(tiers)
}
