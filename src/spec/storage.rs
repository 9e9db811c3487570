//! Storage as specified: a volume (`[DC=]DISK:SIZE[:IOPS[:MBPS]]`, for `cluster create
//! --storage` and `k8s cluster --storage`) and the disk class a local data centre's emulated
//! disks were resolved to from the price catalogue.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Invalid;

/// The disk type without limits (instance storage).
pub const LOCAL: &str = "local";
/// One volume per Cassandra pod: a catalogue disk type, a size, and what is provisioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    pub disk: String,
    /// Whole GiB.
    pub size_gib: u64,
    pub iops: Option<u64>,
    pub mbps: Option<u64>,
}

impl Volume {
    /// The claim's size as a Kubernetes quantity (`Ti` when whole, else `Gi`).
    pub fn quantity(&self) -> String {
        if self.size_gib.is_multiple_of(1024) {
            format!("{}Ti", self.size_gib / 1024)
        } else {
            format!("{}Gi", self.size_gib)
        }
    }

    /// What distinguishes its StorageClass: `gp3`, `io2-16000iops`, `gp3-6000iops-250mbps`.
    pub fn class_suffix(&self) -> String {
        let mut s = self.disk.clone();
        if let Some(iops) = self.iops {
            s.push_str(&format!("-{iops}iops"));
        }
        if let Some(mbps) = self.mbps {
            s.push_str(&format!("-{mbps}mbps"));
        }
        s
    }
}

/// `--storage [DC=]DISK:SIZE[:IOPS[:MBPS]]`: the volume of one data centre, or (without `DC=`)
/// of every data centre not named in another `--storage`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageArg {
    /// As given, for error messages.
    pub text: String,
    pub dc: Option<String>,
    pub volume: Volume,
}

const STORAGE_SYNTAX: &str = "[DC=]DISK:SIZE[:IOPS[:MBPS]], e.g. gp3:500Gi, dc3=io2:2Ti:16000";

impl FromStr for StorageArg {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Invalid> {
        let bad = |why: &str| crate::invalid!("--storage '{s}': {why}: give {STORAGE_SYNTAX}");
        let (dc, rest) = match s.split_once('=') {
            Some((dc, rest)) if !dc.is_empty() => (Some(dc.to_string()), rest),
            Some(_) => return Err(bad("no data centre before '='")),
            None => (None, s),
        };
        let parts: Vec<&str> = rest.split(':').collect();
        if !(2..=4).contains(&parts.len()) || parts[0].is_empty() {
            return Err(bad("expected a disk type and a size"));
        }
        let size_gib = size_gib(parts[1]).ok_or_else(|| {
            crate::invalid!(
                "--storage '{s}': size '{}' is not a whole number of Gi or Ti above 0: give e.g. \
                 500Gi or 2Ti",
                parts[1]
            )
        })?;
        let number = |what: &str, v: &str| -> Result<u64, Invalid> {
            v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                crate::invalid!("--storage '{s}': {what} '{v}' is not a whole number above 0")
            })
        };
        let iops = parts.get(2).map(|v| number("IOPS", v)).transpose()?;
        let mbps = parts.get(3).map(|v| number("MB/s", v)).transpose()?;
        Ok(StorageArg {
            text: s.to_string(),
            dc,
            volume: Volume {
                disk: parts[0].to_string(),
                size_gib,
                iops,
                mbps,
            },
        })
    }
}

/// `500Gi` → 500, `2Ti` → 2048.
fn size_gib(s: &str) -> Option<u64> {
    let (n, factor) = if let Some(n) = s.strip_suffix("Gi") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix("Ti") {
        (n, 1024)
    } else {
        return None;
    };
    if n.is_empty() || !n.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    n.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|n| *n > 0)
}

/// A data centre's emulated disk, resolved from the catalogue when the cluster is created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskClass {
    /// The catalogue's disk type (`gp3`, `pd-ssd`, …) or `local`.
    pub disk: String,
    /// The size it is priced at and its limits follow from, GiB.
    pub size_gib: u64,
    /// IOPS and MB/s as provisioned (`gp3:500Gi:6000:250`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_iops: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_mbps: Option<u64>,
    /// The limits applied (None: unthrottled).
    pub iops: Option<u64>,
    pub mbps: Option<u64>,
    /// One volume's monthly price in the catalogue, USD (None for `local`).
    pub monthly_usd: Option<f64>,
    /// The emulated file system's size, GiB.
    pub image_gib: u64,
}

impl DiskClass {
    /// `gp3 500 GiB: 3000 IOPS, 125 MB/s`.
    pub fn describe(&self) -> String {
        match (self.iops, self.mbps) {
            (Some(i), Some(m)) => {
                format!("{} {} GiB: {i} IOPS, {m} MB/s", self.disk, self.size_gib)
            }
            _ => format!("{} {} GiB: no limits", self.disk, self.size_gib),
        }
    }
}
