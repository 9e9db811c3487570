//! Value types that parse themselves from the command line: sizes ("10TB"), disks
//! ("gp3:5TB:16000iops:1000mbps"), pricing models ("3y") and compaction headroom ("stcs").
//!
//! Sizes follow the providers' billing: a cloud "GB" is a GiB, and 1 TB = 1,024 GB, as in the
//! reference articles' own price arithmetic (ref 003 prices "5TB" as 5,120 GB).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::PriceError;
use crate::format::thousands;

/// A size in (billing) gigabytes.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
pub struct DataSize {
    pub gb: f64,
}

impl DataSize {
    pub fn from_gb(gb: f64) -> Self {
        DataSize { gb }
    }
}

impl FromStr for DataSize {
    type Err = PriceError;

    /// Accepts a number with a unit: `GB`/`G`/`GiB`, `TB`/`T`/`TiB` (case-insensitive), e.g.
    /// `3400GB`, `10TB`, `1.5TiB`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const EXPECTED: &str = "a positive size such as 3400GB or 10TB";
        let t = s.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| PriceError::parse("size", s, EXPECTED))?;
        let (num, unit) = t.split_at(split);
        let value: f64 = num
            .parse()
            .map_err(|_| PriceError::parse("size", s, EXPECTED))?;
        let factor = match unit.trim().to_ascii_lowercase().as_str() {
            "gb" | "g" | "gib" => 1.0,
            "tb" | "t" | "tib" => 1024.0,
            _ => return Err(PriceError::parse("size", s, EXPECTED)),
        };
        if !(value > 0.0 && value.is_finite()) {
            return Err(PriceError::parse("size", s, EXPECTED));
        }
        Ok(DataSize::from_gb(value * factor))
    }
}

impl fmt::Display for DataSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} GB", thousands(self.gb))
    }
}

/// A disk as given on the command line: `TYPE:SIZE[:Niops][:Nmbps]`, e.g. `gp2:3400GB`,
/// `gp3:5TB:16000iops:1000mbps`, `ultra-disk:4TB:10000iops:200mbps`, or `local` for the
/// instance's own disks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskSpec {
    pub kind: String,
    pub size: Option<DataSize>,
    pub iops: Option<f64>,
    pub mbps: Option<f64>,
}

impl DiskSpec {
    /// The instance's local (instance-store) disks, priced with the instance.
    pub fn is_local(&self) -> bool {
        self.kind == "local"
    }
}

impl FromStr for DiskSpec {
    type Err = PriceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const EXPECTED: &str = "TYPE:SIZE[:Niops][:Nmbps] such as gp2:3400GB or \
                                gp3:5TB:16000iops:1000mbps, or local";
        let mut parts = s.trim().split(':');
        let kind = parts.next().unwrap_or_default().trim().to_string();
        if kind.is_empty() {
            return Err(PriceError::parse("disk", s, EXPECTED));
        }
        if kind == "local" {
            if parts.next().is_some() {
                return Err(PriceError::parse("disk", s, EXPECTED));
            }
            return Ok(DiskSpec {
                kind,
                size: None,
                iops: None,
                mbps: None,
            });
        }
        let size = parts
            .next()
            .ok_or_else(|| PriceError::parse("disk", s, EXPECTED))?
            .parse::<DataSize>()
            .map_err(|_| PriceError::parse("disk", s, EXPECTED))?;
        let mut spec = DiskSpec {
            kind,
            size: Some(size),
            iops: None,
            mbps: None,
        };
        for part in parts {
            let p = part.trim().to_ascii_lowercase();
            let (num, slot) = if let Some(n) = p.strip_suffix("iops") {
                (n, &mut spec.iops)
            } else if let Some(n) = p.strip_suffix("mbps").or_else(|| p.strip_suffix("mb/s")) {
                (n, &mut spec.mbps)
            } else {
                return Err(PriceError::parse("disk", s, EXPECTED));
            };
            let v: f64 = num
                .parse()
                .map_err(|_| PriceError::parse("disk", s, EXPECTED))?;
            if v.is_nan() || v <= 0.0 || slot.is_some() {
                return Err(PriceError::parse("disk", s, EXPECTED));
            }
            *slot = Some(v);
        }
        Ok(spec)
    }
}

impl fmt::Display for DiskSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(size) = self.size {
            write!(f, " {size}")?;
        }
        if let Some(iops) = self.iops {
            write!(f, " {} IOPS", thousands(iops))?;
        }
        if let Some(mbps) = self.mbps {
            write!(f, " {} MB/s", thousands(mbps))?;
        }
        Ok(())
    }
}

/// How instances are paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Pricing {
    #[serde(rename = "on-demand")]
    OnDemand,
    #[serde(rename = "reserved-1y")]
    Reserved1y,
    #[serde(rename = "reserved-3y")]
    Reserved3y,
}

impl Pricing {
    /// The reservation term in the catalogue's spelling ("1y", "3y"), none for on-demand.
    pub fn term(self) -> Option<&'static str> {
        match self {
            Pricing::OnDemand => None,
            Pricing::Reserved1y => Some("1y"),
            Pricing::Reserved3y => Some("3y"),
        }
    }

    /// Months in the reservation term.
    pub fn term_months(self) -> f64 {
        match self {
            Pricing::OnDemand => 1.0,
            Pricing::Reserved1y => 12.0,
            Pricing::Reserved3y => 36.0,
        }
    }
}

impl FromStr for Pricing {
    type Err = PriceError;

    /// `on-demand` (or `od`), `1y`, `3y`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on-demand" | "ondemand" | "od" => Ok(Pricing::OnDemand),
            "1y" | "1yr" | "1year" => Ok(Pricing::Reserved1y),
            "3y" | "3yr" | "3year" => Ok(Pricing::Reserved3y),
            _ => Err(PriceError::parse("pricing", s, "on-demand, 1y or 3y")),
        }
    }
}

impl fmt::Display for Pricing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pricing::OnDemand => "on-demand",
            Pricing::Reserved1y => "reserved 1y",
            Pricing::Reserved3y => "reserved 3y",
        })
    }
}

/// Free-space headroom the compaction strategy needs on disk, as a factor of the live data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Headroom {
    pub factor: f64,
    pub label: &'static str,
}

impl FromStr for Headroom {
    type Err = PriceError;

    /// `stcs` (2×: a major compaction may rewrite the largest SSTables next to themselves),
    /// `lcs` (1.2×), `twcs` (1.2×), or a plain factor such as `1.5`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const EXPECTED: &str = "stcs, lcs, twcs or a factor of at least 1.0";
        let t = s.trim().to_ascii_lowercase();
        let (factor, label) = match t.as_str() {
            "stcs" => (2.0, "STCS headroom"),
            "lcs" => (1.2, "LCS headroom"),
            "twcs" => (1.2, "TWCS headroom"),
            other => (
                other
                    .parse::<f64>()
                    .map_err(|_| PriceError::parse("compaction headroom", s, EXPECTED))?,
                "given headroom",
            ),
        };
        if !(factor >= 1.0 && factor.is_finite()) {
            return Err(PriceError::parse("compaction headroom", s, EXPECTED));
        }
        Ok(Headroom { factor, label })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!("3400GB".parse::<DataSize>().unwrap().gb, 3400.0);
        assert_eq!("10TB".parse::<DataSize>().unwrap().gb, 10.0 * 1024.0);
        assert_eq!("1.5tib".parse::<DataSize>().unwrap().gb, 1536.0);
        for bad in ["", "10", "TB", "10PB", "-1GB", "0GB", "1.2.3GB"] {
            assert!(bad.parse::<DataSize>().is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn disks_parse_with_optional_performance() {
        let d: DiskSpec = "gp2:3400GB".parse().unwrap();
        assert_eq!((d.kind.as_str(), d.size.unwrap().gb), ("gp2", 3400.0));
        assert_eq!((d.iops, d.mbps), (None, None));
        let d: DiskSpec = "gp3:5TB:16000iops:1000mbps".parse().unwrap();
        assert_eq!(d.size.unwrap().gb, 5120.0);
        assert_eq!((d.iops, d.mbps), (Some(16000.0), Some(1000.0)));
        assert!("local".parse::<DiskSpec>().unwrap().is_local());
        for bad in [
            "gp2",
            "gp2:",
            ":4TB",
            "gp3:4TB:10iops:20iops",
            "gp3:4TB:fast",
            "local:1TB",
        ] {
            assert!(bad.parse::<DiskSpec>().is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn pricing_and_headroom_parse() {
        assert_eq!("3y".parse::<Pricing>().unwrap(), Pricing::Reserved3y);
        assert_eq!("on-demand".parse::<Pricing>().unwrap(), Pricing::OnDemand);
        assert!("2y".parse::<Pricing>().is_err());
        assert_eq!("stcs".parse::<Headroom>().unwrap().factor, 2.0);
        assert_eq!("LCS".parse::<Headroom>().unwrap().factor, 1.2);
        assert_eq!("1.5".parse::<Headroom>().unwrap().factor, 1.5);
        assert!("0.5".parse::<Headroom>().is_err());
    }
}
