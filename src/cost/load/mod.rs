//! Loading and validating a catalogue file. Every problem is reported on one line naming the
//! file, the entry and the field, e.g.
//! `prices.yaml: instance "r5.2xlarge": field "vcpus": expected a positive integer`.

use std::collections::HashSet;
use std::path::Path;

use crate::yaml::Value;

mod disks;
mod entry;

use disks::parse_disk;
use entry::Entry;

use super::CostError;
use super::catalog::{
    AssumedCapacity, Catalog, DEFAULT_CATALOG, DEFAULT_CATALOG_NAME, Instance, KubernetesFee,
    ReservedDiscount, ReservedPrice,
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
    let root: Value = crate::yaml::from_str(text)
        .map_err(|e| file_err(format!("not valid YAML: {}", crate::yaml::first_line(&e))))?;
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
            .as_array()
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

#[cfg(test)]
mod tests;
