//! Loading and validating a catalogue file. Every problem is reported on one line naming the
//! file, the entry and the field, e.g.
//! `prices.yaml: instance "r5.2xlarge": field "vcpus": expected a positive integer`.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::yaml::Value;

mod disks;
mod entry;
pub(crate) mod fields;

use disks::parse_disk;
use entry::Entry;

use super::PriceError;
use super::catalog::{
    AssumedCapacity, Catalog, DEFAULT_CATALOG, DEFAULT_CATALOG_NAME, Instance, KubernetesFee,
    ReservedDiscount, ReservedPrice, Source,
};

/// The catalogue built into the binary.
pub fn default_catalog() -> Result<Catalog, PriceError> {
    parse_catalog(DEFAULT_CATALOG, DEFAULT_CATALOG_NAME)
}

/// Reads and validates a catalogue file.
pub fn load_catalog(path: &Path) -> Result<Catalog, PriceError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| PriceError::CatalogFile {
        file: file.clone(),
        problem: format!("cannot read: {e}"),
    })?;
    parse_catalog(&text, &file)
}

/// A catalogue file's top level: its lists are read entry by entry, each named in errors.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    #[serde(deserialize_with = "fields::pos")]
    hours_per_month: f64,
    #[serde(default, deserialize_with = "fields::opt_text")]
    currency: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<Value>,
    #[serde(default)]
    instances: Vec<Value>,
    #[serde(default)]
    disks: Vec<Value>,
    #[serde(default)]
    kubernetes: Vec<Value>,
    #[serde(default)]
    reserved_discounts: Vec<Value>,
    #[serde(default)]
    capacities: Vec<Value>,
}

/// Parses and validates catalogue text; `file` names it in errors.
pub fn parse_catalog(text: &str, file: &str) -> Result<Catalog, PriceError> {
    let file_err = |problem: String| PriceError::CatalogFile {
        file: file.to_string(),
        problem,
    };
    let root: Value = crate::yaml::from_str(text)
        .map_err(|e| file_err(format!("not valid YAML: {}", crate::yaml::first_line(&e))))?;
    if !root.is_object() {
        return Err(file_err(
            "expected a mapping with instances, disks, kubernetes, …".into(),
        ));
    }
    let top = Entry {
        file,
        label: "top level".into(),
    };
    let f: CatalogFile = top.read(&root)?;
    if let Some(c) = &f.currency
        && c != "USD"
    {
        return Err(top.err("currency", "expected USD (the only currency priced)"));
    }
    let catalog = Catalog {
        hours_per_month: f.hours_per_month,
        instances: list(file, &f.instances, "instance", parse_instance)?,
        disks: list(file, &f.disks, "disk", parse_disk)?,
        kubernetes: list(file, &f.kubernetes, "kubernetes", |e, v| {
            Ok(e.read::<KubernetesEntry>(v)?.into())
        })?,
        reserved_discounts: list(file, &f.reserved_discounts, "reserved discount", |e, v| {
            Ok(e.read::<DiscountEntry>(v)?.into())
        })?,
        capacities: list(file, &f.capacities, "capacity", |e, v| {
            Ok(e.read::<CapacityEntry>(v)?.into())
        })?,
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
            return Err(PriceError::CatalogField {
                file: file.to_string(),
                entry: format!("capacity \"{}\"", cap.instance),
                field: "instance".into(),
                problem: "no instance of that name in the catalogue".into(),
            });
        }
    }
    Ok(catalog)
}

/// Reads every item of a list with `parse`, each named by its name (a capacity by its
/// instance) or, without one, its position: `instance "r5.2xlarge"`, `disk #3`.
fn list<T>(
    file: &str,
    items: &[Value],
    kind: &str,
    parse: fn(&Entry, &Value) -> Result<T, PriceError>,
) -> Result<Vec<T>, PriceError> {
    let key = if kind == "capacity" {
        "instance"
    } else {
        "name"
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = item.get(key).and_then(Value::as_str);
        let label = name.map_or(format!("{kind} #{}", i + 1), |n| format!("{kind} \"{n}\""));
        out.push(parse(&Entry { file, label }, item)?);
    }
    Ok(out)
}

fn unique<'a>(
    file: &str,
    kind: &str,
    names: impl Iterator<Item = &'a String>,
) -> Result<(), PriceError> {
    let mut seen = HashSet::new();
    for name in names {
        if !seen.insert(name) {
            return Err(PriceError::CatalogFile {
                file: file.to_string(),
                problem: format!("{kind} \"{name}\" is listed twice"),
            });
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceEntry {
    #[serde(deserialize_with = "fields::text")]
    name: String,
    #[serde(deserialize_with = "fields::provider")]
    provider: String,
    #[serde(deserialize_with = "fields::text")]
    region: String,
    #[serde(deserialize_with = "fields::pos_int")]
    vcpus: u32,
    #[serde(deserialize_with = "fields::pos")]
    ram_gb: f64,
    #[serde(default, deserialize_with = "fields::opt_nonneg")]
    local_disk_gb: Option<f64>,
    #[serde(default, deserialize_with = "fields::opt_disk_kind")]
    local_disk_kind: Option<String>,
    #[serde(deserialize_with = "fields::pos")]
    usd_per_hour: f64,
    #[serde(default, deserialize_with = "fields::opt_fraction")]
    sustained_use_discount: Option<f64>,
    #[serde(default)]
    reserved: Vec<ReservedEntry>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<Value>,
    #[serde(deserialize_with = "fields::text")]
    source: String,
    #[serde(deserialize_with = "fields::date")]
    date: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReservedEntry {
    #[serde(deserialize_with = "fields::term")]
    term: String,
    #[serde(default, deserialize_with = "fields::opt_nonneg")]
    upfront_usd: Option<f64>,
    #[serde(deserialize_with = "fields::nonneg")]
    usd_per_hour: f64,
    #[serde(deserialize_with = "fields::text")]
    source: String,
    #[serde(deserialize_with = "fields::date")]
    date: String,
}

fn parse_instance(e: &Entry, v: &Value) -> Result<Instance, PriceError> {
    let i: InstanceEntry = e.read(v)?;
    let local_disk_gb = i.local_disk_gb.unwrap_or(0.0);
    if local_disk_gb > 0.0 && i.local_disk_kind.is_none() {
        return Err(e.err(
            "local_disk_kind",
            "expected nvme, ssd or hdd when local_disk_gb > 0",
        ));
    }
    Ok(Instance {
        name: i.name,
        provider: i.provider,
        region: i.region,
        vcpus: i.vcpus,
        ram_gb: i.ram_gb,
        local_disk_gb,
        local_disk_kind: i.local_disk_kind,
        usd_per_hour: i.usd_per_hour,
        sustained_use_discount: i.sustained_use_discount.unwrap_or(0.0),
        reserved: i
            .reserved
            .into_iter()
            .map(|r| ReservedPrice {
                term: r.term,
                upfront_usd: r.upfront_usd.unwrap_or(0.0),
                usd_per_hour: r.usd_per_hour,
                source: Source {
                    source: r.source,
                    date: r.date,
                },
            })
            .collect(),
        source: Source {
            source: i.source,
            date: i.date,
        },
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KubernetesEntry {
    #[serde(deserialize_with = "fields::text")]
    name: String,
    #[serde(deserialize_with = "fields::provider")]
    provider: String,
    #[serde(deserialize_with = "fields::nonneg")]
    usd_per_hour: f64,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<Value>,
    #[serde(deserialize_with = "fields::text")]
    source: String,
    #[serde(deserialize_with = "fields::date")]
    date: String,
}

impl From<KubernetesEntry> for KubernetesFee {
    fn from(k: KubernetesEntry) -> KubernetesFee {
        KubernetesFee {
            name: k.name,
            provider: k.provider,
            usd_per_hour: k.usd_per_hour,
            source: Source {
                source: k.source,
                date: k.date,
            },
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiscountEntry {
    #[serde(deserialize_with = "fields::provider")]
    provider: String,
    #[serde(deserialize_with = "fields::term")]
    term: String,
    #[serde(deserialize_with = "fields::fraction")]
    discount: f64,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<Value>,
    #[serde(deserialize_with = "fields::text")]
    source: String,
    #[serde(deserialize_with = "fields::date")]
    date: String,
}

impl From<DiscountEntry> for ReservedDiscount {
    fn from(d: DiscountEntry) -> ReservedDiscount {
        ReservedDiscount {
            provider: d.provider,
            term: d.term,
            discount: d.discount,
            source: Source {
                source: d.source,
                date: d.date,
            },
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CapacityEntry {
    #[serde(deserialize_with = "fields::text")]
    instance: String,
    #[serde(deserialize_with = "fields::pos")]
    ops_per_s_per_node: f64,
    #[serde(default, deserialize_with = "fields::opt_text")]
    note: Option<String>,
    #[serde(deserialize_with = "fields::text")]
    source: String,
    #[serde(deserialize_with = "fields::date")]
    date: String,
}

impl From<CapacityEntry> for AssumedCapacity {
    fn from(c: CapacityEntry) -> AssumedCapacity {
        AssumedCapacity {
            instance: c.instance,
            ops_per_s_per_node: c.ops_per_s_per_node,
            note: c.note,
            source: Source {
                source: c.source,
                date: c.date,
            },
        }
    }
}

#[cfg(test)]
mod tests;
