//! A disk entry of the catalogue: the fields every disk has, then its formula's own, read by
//! serde into the formula's struct (whose fields say how each is checked).

use serde::Deserialize;

use super::entry::Entry;
use super::fields;
use crate::prices::PriceError;
use crate::prices::catalog::{Disk, Source};
use crate::prices::disk::DiskFormula;
use crate::yaml::{Mapping, Value};

/// Fields every disk entry has (or may have: a note).
const COMMON: [&str; 6] = ["name", "provider", "formula", "note", "source", "date"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiskEntry {
    #[serde(deserialize_with = "fields::text")]
    name: String,
    #[serde(deserialize_with = "fields::provider")]
    provider: String,
    #[serde(deserialize_with = "fields::text")]
    formula: String,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<Value>,
    #[serde(deserialize_with = "fields::text")]
    source: String,
    #[serde(deserialize_with = "fields::date")]
    date: String,
}

/// A formula's reader of an entry's other fields.
type ReadFormula = fn(&Entry, &Value) -> Result<DiskFormula, PriceError>;

/// Each formula: its name in the catalogue and its reader.
const FORMULAS: [(&str, ReadFormula); 8] = [
    ("gp2", |e, v| Ok(DiskFormula::Gp2(e.read(v)?))),
    ("gp3", |e, v| Ok(DiskFormula::Gp3(e.read(v)?))),
    ("provisioned_iops", |e, v| {
        Ok(DiskFormula::ProvisionedIops(e.read(v)?))
    }),
    ("hdd", |e, v| Ok(DiskFormula::Hdd(e.read(v)?))),
    ("gcp_pd", |e, v| Ok(DiskFormula::GcpPd(e.read(v)?))),
    ("gcp_pd_extreme", |e, v| {
        Ok(DiskFormula::GcpPdExtreme(e.read(v)?))
    }),
    ("azure_tiers", |e, v| {
        Ok(DiskFormula::AzureTiers(e.read(v)?))
    }),
    ("azure_ultra", |e, v| {
        Ok(DiskFormula::AzureUltra(e.read(v)?))
    }),
];

pub(super) fn parse_disk(e: &Entry, v: &Value) -> Result<Disk, PriceError> {
    let (mut common, mut rest) = (Mapping::new(), Mapping::new());
    if let Some(map) = v.as_object() {
        for (k, x) in map {
            let side = if COMMON.contains(&k.as_str()) {
                &mut common
            } else {
                &mut rest
            };
            side.insert(k.clone(), x.clone());
        }
    }
    let common = Value::Object(common);
    let d: DiskEntry = e.read(if v.is_object() { &common } else { v })?;
    let Some((_, read)) = FORMULAS.iter().find(|(name, _)| *name == d.formula) else {
        let names: Vec<&str> = FORMULAS.iter().map(|(name, _)| *name).collect();
        return Err(e.err("formula", &format!("expected one of {}", names.join(", "))));
    };
    let formula = read(e, &Value::Object(rest))?;
    check_tiers(e, &formula)?;
    Ok(Disk {
        name: d.name,
        provider: d.provider,
        formula,
        source: Source {
            source: d.source,
            date: d.date,
        },
    })
}

/// A formula's tiers: at least one, and IOPS tiers bounded, each above the last, but the last.
fn check_tiers(e: &Entry, formula: &DiskFormula) -> Result<(), PriceError> {
    match formula {
        DiskFormula::ProvisionedIops(p) => {
            if p.iops_tiers.is_empty() {
                return Err(e.err(
                    "iops_tiers",
                    "expected a non-empty list of IOPS price tiers",
                ));
            }
            let mut previous: Option<f64> = None;
            for (i, t) in p.iops_tiers.iter().enumerate() {
                let tier = Entry {
                    file: e.file,
                    label: format!("{} iops tier #{}", e.label, i + 1),
                };
                match (t.up_to_iops, previous) {
                    (None, _) if i + 1 < p.iops_tiers.len() => {
                        return Err(
                            tier.err("up_to_iops", "expected a bound on every tier but the last")
                        );
                    }
                    (Some(top), Some(prev)) if top <= prev => {
                        return Err(
                            tier.err("up_to_iops", "expected bounds that increase tier by tier")
                        );
                    }
                    _ => {}
                }
                previous = t.up_to_iops.or(previous);
            }
            Ok(())
        }
        DiskFormula::AzureTiers(a) if a.tiers.is_empty() => {
            Err(e.err("tiers", "expected a non-empty list of size tiers"))
        }
        _ => Ok(()),
    }
}
