//! How the main phase picks the key (row, partition) each operation touches: the spec value
//! (`--key-dist`, `key-dist:` in scenario steps), persisted in the result as its text form.
//! The sampler that draws from it is `workload::keys`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The exponent `zipf` and `latest` take when none is given (YCSB's zipfian constant).
pub const DEFAULT_ZIPF_S: f64 = 0.99;
/// Standard deviations from the middle of the key space to either end for `gaussian`.
pub const DEFAULT_GAUSSIAN_STDVS: f64 = 3.0;

/// A key distribution.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum KeyDist {
    /// Every key equally likely (the default).
    #[default]
    Uniform,
    /// Key `k` (0-based) drawn with probability proportional to 1/(k+1)^s: key 0 is the hottest.
    Zipf { s: f64 },
    /// Normal around the middle of the key space, `stdvs` standard deviations to either end
    /// (draws outside the key space are drawn again).
    Gaussian { stdvs: f64 },
    /// Cycle `c` uses key `c mod n`: every key in turn.
    Sequential,
    /// Writes go through the keys in order (`c mod n`); a read goes back from the key the
    /// current cycle would write by a zipfian distance with exponent `s`: recent keys are hot.
    Latest { s: f64 },
}

const ACCEPTED: &str =
    "use uniform, zipf[:S] (0 < S <= 10), gaussian[:STDVS] (0 < STDVS <= 100), seq or latest[:S]";

impl FromStr for KeyDist {
    type Err = crate::error::Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (t.as_str(), None),
        };
        let bad = || crate::invalid!("'{s}' is not a key distribution: {ACCEPTED}");
        let num = |default: f64, max: f64| -> Result<f64, crate::error::Invalid> {
            match arg {
                None => Ok(default),
                Some(a) => match a.trim().parse::<f64>() {
                    Ok(v) if v.is_finite() && v > 0.0 && v <= max => Ok(v),
                    _ => Err(bad()),
                },
            }
        };
        let no_arg = |d: KeyDist| if arg.is_none() { Ok(d) } else { Err(bad()) };
        match name {
            "uniform" => no_arg(KeyDist::Uniform),
            "zipf" | "zipfian" => Ok(KeyDist::Zipf {
                s: num(DEFAULT_ZIPF_S, 10.0)?,
            }),
            "gaussian" | "normal" => Ok(KeyDist::Gaussian {
                stdvs: num(DEFAULT_GAUSSIAN_STDVS, 100.0)?,
            }),
            "seq" | "sequential" => no_arg(KeyDist::Sequential),
            "latest" => Ok(KeyDist::Latest {
                s: num(DEFAULT_ZIPF_S, 10.0)?,
            }),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for KeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDist::Uniform => f.write_str("uniform"),
            KeyDist::Zipf { s } => write!(f, "zipf:{s}"),
            KeyDist::Gaussian { stdvs } => write!(f, "gaussian:{stdvs}"),
            KeyDist::Sequential => f.write_str("seq"),
            KeyDist::Latest { s } => write!(f, "latest:{s}"),
        }
    }
}

impl TryFrom<String> for KeyDist {
    type Error = crate::error::Invalid;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<KeyDist> for String {
    fn from(d: KeyDist) -> String {
        d.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses_and_prints_back() {
        for (text, want) in [
            ("uniform", KeyDist::Uniform),
            ("zipf", KeyDist::Zipf { s: DEFAULT_ZIPF_S }),
            ("Zipfian:1.2", KeyDist::Zipf { s: 1.2 }),
            ("gaussian", KeyDist::Gaussian { stdvs: 3.0 }),
            ("normal:2", KeyDist::Gaussian { stdvs: 2.0 }),
            ("seq", KeyDist::Sequential),
            ("sequential", KeyDist::Sequential),
            ("latest", KeyDist::Latest { s: DEFAULT_ZIPF_S }),
            ("latest:0.5", KeyDist::Latest { s: 0.5 }),
        ] {
            let d: KeyDist = text.parse().unwrap();
            assert_eq!(d, want, "{text}");
            assert_eq!(d.to_string().parse::<KeyDist>().unwrap(), d, "{text}");
        }
    }

    #[test]
    fn bad_forms_are_refused_with_what_is_accepted() {
        for bad in [
            "",
            "pareto",
            "zipf:0",
            "zipf:-1",
            "zipf:x",
            "zipf:11",
            "zipf:nan",
            "zipf:inf",
            "uniform:2",
            "seq:1",
            "gaussian:0",
            "gaussian:101",
            "latest:",
        ] {
            let e = bad.parse::<KeyDist>().unwrap_err().to_string();
            assert!(e.contains("is not a key distribution"), "{bad}: {e}");
            assert!(e.contains("zipf[:S]"), "{bad}: {e}");
        }
    }

    #[test]
    fn it_is_persisted_as_its_text_and_absent_means_uniform() {
        let j = serde_json::to_string(&KeyDist::Zipf { s: 1.1 }).unwrap();
        assert_eq!(j, "\"zipf:1.1\"");
        assert_eq!(
            serde_json::from_str::<KeyDist>(&j).unwrap(),
            KeyDist::Zipf { s: 1.1 }
        );
        let e = serde_json::from_str::<KeyDist>("\"zipf:-3\"").unwrap_err();
        assert!(e.to_string().contains("not a key distribution"), "{e}");
    }
}
