//! Loading and validating a catalogue file. Every problem is reported on one line naming the
//! file, the entry and the field, e.g.
//! `prices.yaml: instance "r5.2xlarge": field "vcpus": expected a positive integer`.

use std::collections::HashSet;
use std::path::Path;

use serde_yaml::Value;

mod entry;

use entry::Entry;

use super::CostError;
use super::catalog::{
    AssumedCapacity, Catalog, DEFAULT_CATALOG, DEFAULT_CATALOG_NAME, Disk, Instance, KubernetesFee,
    ReservedDiscount, ReservedPrice,
};
use super::disk::{
    AzureTier, AzureTiers, AzureUltra, DiskFormula, GcpPd, GcpPdExtreme, Gp2, Gp3, Hdd, IopsTier,
    ProvisionedIops,
};

/// The catalogue built into the binary.
pub fn default_catalog() -> Result<Catalog, CostError> {
    parse_catalog(DEFAULT_CATALOG, DEFAULT_CATALOG_NAME)
}

/// Reads and validates a catalogue file.
pub fn load_catalog(path: &Path) -> Result<Catalog, CostError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CostError::CatalogFile {
        file: file.clone(),
        problem: format!("cannot read: {e}"),
    })?;
    parse_catalog(&text, &file)
}

/// Parses and validates catalogue text; `file` names it in errors.
pub fn parse_catalog(text: &str, file: &str) -> Result<Catalog, CostError> {
    let file_err = |problem: String| CostError::CatalogFile {
        file: file.to_string(),
        problem,
    };
    let root: Value =
        serde_yaml::from_str(text).map_err(|e| file_err(format!("not valid YAML: {e}")))?;
    let top = Entry::top(file, &root)?;
    top.allow(&[
        "hours_per_month",
        "currency",
        "note",
        "instances",
        "disks",
        "kubernetes",
        "reserved_discounts",
        "capacities",
    ])?;
    if let Some(c) = top.opt_string("currency")?
        && c != "USD"
    {
        return Err(top.err("currency", "expected USD (the only currency priced)"));
    }
    let catalog = Catalog {
        hours_per_month: top.pos_num("hours_per_month")?,
        instances: top.list(file, "instances", "instance", parse_instance)?,
        disks: top.list(file, "disks", "disk", parse_disk)?,
        kubernetes: top.list(file, "kubernetes", "kubernetes", parse_kubernetes)?,
        reserved_discounts: top.list(
            file,
            "reserved_discounts",
            "reserved discount",
            parse_discount,
        )?,
        capacities: top.list(file, "capacities", "capacity", parse_capacity)?,
    };
    unique(file, "instance", catalog.instances.iter().map(|i| &i.name))?;
    unique(file, "disk", catalog.disks.iter().map(|d| &d.name))?;
    unique(
        file,
        "kubernetes",
        catalog.kubernetes.iter().map(|k| &k.name),
    )?;
    for cap in &catalog.capacities {
        if catalog.instance(&cap.instance).is_err() {
            return Err(CostError::CatalogField {
                file: file.to_string(),
                entry: format!("capacity \"{}\"", cap.instance),
                field: "instance".into(),
                problem: "no instance of that name in the catalogue".into(),
            });
        }
    }
    Ok(catalog)
}

fn unique<'a>(
    file: &str,
    kind: &str,
    names: impl Iterator<Item = &'a String>,
) -> Result<(), CostError> {
    let mut seen = HashSet::new();
    for name in names {
        if !seen.insert(name) {
            return Err(CostError::CatalogFile {
                file: file.to_string(),
                problem: format!("{kind} \"{name}\" is listed twice"),
            });
        }
    }
    Ok(())
}

const SOURCE_FIELDS: [&str; 2] = ["source", "date"];

fn parse_instance(e: &Entry) -> Result<Instance, CostError> {
    e.allow_with(
        &[
            "name",
            "provider",
            "region",
            "vcpus",
            "ram_gb",
            "local_disk_gb",
            "local_disk_kind",
            "usd_per_hour",
            "sustained_use_discount",
            "reserved",
            "note",
        ],
        &SOURCE_FIELDS,
    )?;
    let local_disk_gb = e.opt_nonneg_num("local_disk_gb")?.unwrap_or(0.0);
    let local_disk_kind = e.opt_string("local_disk_kind")?;
    if let Some(kind) = &local_disk_kind
        && !["nvme", "ssd", "hdd"].contains(&kind.as_str())
    {
        return Err(e.err("local_disk_kind", "expected nvme, ssd or hdd"));
    }
    if local_disk_gb > 0.0 && local_disk_kind.is_none() {
        return Err(e.err(
            "local_disk_kind",
            "expected nvme, ssd or hdd when local_disk_gb > 0",
        ));
    }
    let mut reserved = Vec::new();
    if let Some(list) = e.get("reserved") {
        let items = list
            .as_sequence()
            .ok_or_else(|| e.err("reserved", "expected a list of reserved prices"))?;
        for (i, v) in items.iter().enumerate() {
            let r = e.child(&format!("reserved #{}", i + 1), v)?;
            r.allow_with(&["term", "upfront_usd", "usd_per_hour"], &SOURCE_FIELDS)?;
            reserved.push(ReservedPrice {
                term: r.term("term")?,
                upfront_usd: r.opt_nonneg_num("upfront_usd")?.unwrap_or(0.0),
                usd_per_hour: r.nonneg_num("usd_per_hour")?,
                source: r.source()?,
            });
        }
    }
    Ok(Instance {
        name: e.string("name")?,
        provider: e.provider()?,
        region: e.string("region")?,
        vcpus: e.pos_int("vcpus")?,
        ram_gb: e.pos_num("ram_gb")?,
        local_disk_gb,
        local_disk_kind,
        usd_per_hour: e.pos_num("usd_per_hour")?,
        sustained_use_discount: e.opt_fraction("sustained_use_discount")?.unwrap_or(0.0),
        reserved,
        source: e.source()?,
    })
}

fn parse_kubernetes(e: &Entry) -> Result<KubernetesFee, CostError> {
    e.allow_with(
        &["name", "provider", "usd_per_hour", "note"],
        &SOURCE_FIELDS,
    )?;
    Ok(KubernetesFee {
        name: e.string("name")?,
        provider: e.provider()?,
        usd_per_hour: e.nonneg_num("usd_per_hour")?,
        source: e.source()?,
    })
}

fn parse_discount(e: &Entry) -> Result<ReservedDiscount, CostError> {
    e.allow_with(&["provider", "term", "discount", "note"], &SOURCE_FIELDS)?;
    Ok(ReservedDiscount {
        provider: e.provider()?,
        term: e.term("term")?,
        discount: e
            .opt_fraction("discount")?
            .ok_or_else(|| e.missing("discount"))?,
        source: e.source()?,
    })
}

fn parse_capacity(e: &Entry) -> Result<AssumedCapacity, CostError> {
    e.allow_with(&["instance", "ops_per_s_per_node", "note"], &SOURCE_FIELDS)?;
    Ok(AssumedCapacity {
        instance: e.string("instance")?,
        ops_per_s_per_node: e.pos_num("ops_per_s_per_node")?,
        note: e.opt_string("note")?,
        source: e.source()?,
    })
}

fn parse_disk(e: &Entry) -> Result<Disk, CostError> {
    let formula = e.string("formula")?;
    let common = ["name", "provider", "formula", "note", "source", "date"];
    let fields: &[&str] = match formula.as_str() {
        "gp2" => &[
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
        "gp3" => &[
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
        "provisioned_iops" => &[
            "usd_per_gb_month",
            "iops_tiers",
            "min_iops",
            "max_iops",
            "max_iops_per_gb",
            "mbps_per_iops",
            "max_mbps",
            "max_gb",
        ],
        "hdd" => &[
            "usd_per_gb_month",
            "baseline_mbps_per_tb",
            "burst_mbps_per_tb",
            "max_mbps",
            "max_iops",
            "min_gb",
            "max_gb",
        ],
        "gcp_pd" => &[
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
        "gcp_pd_extreme" => &[
            "usd_per_gb_month",
            "usd_per_iops_month",
            "min_iops",
            "max_iops",
            "instance_mbps",
            "max_gb",
        ],
        "azure_tiers" => &["tiers"],
        "azure_ultra" => &[
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
        _ => {
            return Err(e.err(
                "formula",
                "expected one of gp2, gp3, provisioned_iops, hdd, gcp_pd, gcp_pd_extreme, \
                 azure_tiers, azure_ultra",
            ));
        }
    };
    e.allow_with(&common, fields)?;
    let p = |f: &str| e.pos_num(f);
    let z = |f: &str| e.nonneg_num(f);
    let formula = match formula.as_str() {
        "gp2" => DiskFormula::Gp2(Gp2 {
            usd_per_gb_month: p("usd_per_gb_month")?,
            iops_per_gb: p("iops_per_gb")?,
            min_iops: z("min_iops")?,
            max_iops: p("max_iops")?,
            burst_iops: z("burst_iops")?,
            burst_below_gb: z("burst_below_gb")?,
            max_mbps: p("max_mbps")?,
            small_volume_gb: z("small_volume_gb")?,
            small_volume_mbps: p("small_volume_mbps")?,
            max_gb: p("max_gb")?,
        }),
        "gp3" => DiskFormula::Gp3(Gp3 {
            usd_per_gb_month: p("usd_per_gb_month")?,
            included_iops: z("included_iops")?,
            included_mbps: z("included_mbps")?,
            usd_per_iops_month: z("usd_per_iops_month")?,
            usd_per_mbps_month: z("usd_per_mbps_month")?,
            max_iops: p("max_iops")?,
            max_mbps: p("max_mbps")?,
            max_iops_per_gb: p("max_iops_per_gb")?,
            max_mbps_per_iops: p("max_mbps_per_iops")?,
            max_gb: p("max_gb")?,
        }),
        "provisioned_iops" => DiskFormula::ProvisionedIops(ProvisionedIops {
            usd_per_gb_month: p("usd_per_gb_month")?,
            iops_tiers: parse_iops_tiers(e)?,
            min_iops: z("min_iops")?,
            max_iops: p("max_iops")?,
            max_iops_per_gb: p("max_iops_per_gb")?,
            mbps_per_iops: p("mbps_per_iops")?,
            max_mbps: p("max_mbps")?,
            max_gb: p("max_gb")?,
        }),
        "hdd" => DiskFormula::Hdd(Hdd {
            usd_per_gb_month: p("usd_per_gb_month")?,
            baseline_mbps_per_tb: p("baseline_mbps_per_tb")?,
            burst_mbps_per_tb: p("burst_mbps_per_tb")?,
            max_mbps: p("max_mbps")?,
            max_iops: p("max_iops")?,
            min_gb: z("min_gb")?,
            max_gb: p("max_gb")?,
        }),
        "gcp_pd" => DiskFormula::GcpPd(GcpPd {
            usd_per_gb_month: p("usd_per_gb_month")?,
            baseline_iops: z("baseline_iops")?,
            read_iops_per_gb: p("read_iops_per_gb")?,
            write_iops_per_gb: p("write_iops_per_gb")?,
            baseline_mbps: z("baseline_mbps")?,
            mbps_per_gb: p("mbps_per_gb")?,
            instance_read_iops: p("instance_read_iops")?,
            instance_write_iops: p("instance_write_iops")?,
            instance_read_mbps: p("instance_read_mbps")?,
            instance_write_mbps: p("instance_write_mbps")?,
            max_gb: p("max_gb")?,
        }),
        "gcp_pd_extreme" => DiskFormula::GcpPdExtreme(GcpPdExtreme {
            usd_per_gb_month: p("usd_per_gb_month")?,
            usd_per_iops_month: p("usd_per_iops_month")?,
            min_iops: z("min_iops")?,
            max_iops: p("max_iops")?,
            instance_mbps: p("instance_mbps")?,
            max_gb: p("max_gb")?,
        }),
        "azure_tiers" => DiskFormula::AzureTiers(AzureTiers {
            tiers: parse_azure_tiers(e)?,
        }),
        _ => DiskFormula::AzureUltra(AzureUltra {
            usd_per_gb_hour: p("usd_per_gb_hour")?,
            usd_per_iops_hour: p("usd_per_iops_hour")?,
            usd_per_mbps_hour: p("usd_per_mbps_hour")?,
            min_iops: z("min_iops")?,
            max_iops: p("max_iops")?,
            max_iops_per_gb: p("max_iops_per_gb")?,
            max_mbps: p("max_mbps")?,
            max_mbps_per_iops: p("max_mbps_per_iops")?,
            max_gb: p("max_gb")?,
        }),
    };
    Ok(Disk {
        name: e.string("name")?,
        provider: e.provider()?,
        formula,
        source: e.source()?,
    })
}

fn parse_iops_tiers(e: &Entry) -> Result<Vec<IopsTier>, CostError> {
    let items = e
        .get("iops_tiers")
        .and_then(Value::as_sequence)
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
        .and_then(Value::as_sequence)
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

#[cfg(test)]
mod tests;
