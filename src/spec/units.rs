//! Memory sizes as users write them: `256M`, `1G`, `1.5G`, `512MiB`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A size in mebibytes. Parses `256M`, `256MB`, `256MiB`, `1G`, `1.5GiB`, `1024K`; a bare number
/// is mebibytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MiB(pub u64);

impl FromStr for MiB {
    type Err = crate::error::Invalid;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let value: f64 = num.parse().map_err(|_| {
            format!("'{s}' is not a size: expected a number with a unit, e.g. 256M or 1G")
        })?;
        let factor = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "m" | "mb" | "mib" => 1.0,
            "g" | "gb" | "gib" => 1024.0,
            "k" | "kb" | "kib" => 1.0 / 1024.0,
            other => {
                return Err(crate::invalid!(
                    "'{s}': unknown unit '{other}': use K, M or G"
                ));
            }
        };
        let mib = (value * factor).round();
        if mib < 1.0 {
            return Err(crate::invalid!("'{s}' is below 1 MiB"));
        }
        Ok(MiB(mib as u64))
    }
}

impl fmt::Display for MiB {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_multiple_of(1024) {
            write!(f, "{}G", self.0 / 1024)
        } else {
            write!(f, "{}M", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!("256M".parse::<MiB>().unwrap(), MiB(256));
        assert_eq!("256MiB".parse::<MiB>().unwrap(), MiB(256));
        assert_eq!("1G".parse::<MiB>().unwrap(), MiB(1024));
        assert_eq!("1.5g".parse::<MiB>().unwrap(), MiB(1536));
        assert_eq!("2048K".parse::<MiB>().unwrap(), MiB(2));
        assert_eq!("300".parse::<MiB>().unwrap(), MiB(300));
        assert!("abc".parse::<MiB>().is_err());
        assert!("10T".parse::<MiB>().is_err());
        assert!("0M".parse::<MiB>().is_err());
    }

    #[test]
    fn displays_round_gibibytes_as_g() {
        assert_eq!(MiB(2048).to_string(), "2G");
        assert_eq!(MiB(500).to_string(), "500M");
    }
}

/// Parses a duration: `500ms`, `30s`, `2m`, `1h`, `1.5s`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, crate::error::Invalid> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        crate::invalid!("'{s}' is not a duration: expected e.g. 500ms, 30s, 2m or 1h")
    })?;
    let secs = match unit {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(crate::invalid!(
                "'{s}': unknown unit '{other}': use ms, s, m or h"
            ));
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(crate::invalid!("'{s}' is not a valid duration"));
    }
    std::time::Duration::try_from_secs_f64(secs)
        .map_err(|_| crate::invalid!("'{s}' is too long a duration"))
}

#[cfg(test)]
mod duration_tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("1d").is_err());
        assert!(parse_duration("fast").is_err());
        // Once an overflow panic inside Duration::from_secs_f64.
        assert_eq!(
            parse_duration("99999999999999999999h").unwrap_err(),
            "'99999999999999999999h' is too long a duration"
        );
    }
}
