//! cassandra-stress's value distributions (`size:`, `population:`, `cluster:`,
//! `partitions:`, `select:`), drawn as a pure function of a seed:
//! `FIXED(v)`, `UNIFORM(min..max)`, `GAUSSIAN(min..max[,stdvs])` or
//! `GAUSSIAN(min..max,mean,stdev)` (aliases `gauss`, `normal`, `norm`), `EXP(min..max)`,
//! `EXTREME(min..max,shape)` (aliases `extr`, `weibull`), `SEQ(min..max)`; `~` before the name
//! inverts it (`~EXP(1..10)` gives 10 most often). Numbers take k, m, b (thousand, million,
//! billion). Parameters as cassandra-stress defines them: a gaussian without stdvs has 3
//! standard deviations to either end; the exponential's mean and the Weibull scale put the
//! 1 − √(1/(max−min)) quantile at max; values outside [min, max] are clamped.

use std::fmt;
use std::str::FromStr;

use rand_distr::{Distribution, Exp, Normal, Weibull};
use rand_xoshiro::SplitMix64;
use rand_xoshiro::rand_core::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::workload::data::{below, mix};

/// The shape of a distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Fixed,
    Uniform,
    Gaussian {
        mean: f64,
        stdev: f64,
    },
    Exp {
        mean: f64,
    },
    Extreme {
        shape: f64,
        scale: f64,
    },
    /// The index itself, wrapped into [min, max]: every value in turn.
    Seq,
}

/// A distribution over the whole numbers `min..=max`, as written in a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Dist {
    pub text: String,
    pub shape: Shape,
    pub min: i64,
    pub max: i64,
    pub inverted: bool,
}

impl Dist {
    /// A value for `seed`; `index` is what `SEQ` steps through.
    pub fn sample(&self, seed: u64, index: u64) -> i64 {
        let span = (self.max - self.min) as f64;
        let mut rng = SplitMix64::seed_from_u64(mix(seed));
        let offset = match self.shape {
            Shape::Fixed => 0.0,
            Shape::Uniform => {
                let n = (self.max - self.min) as u64 + 1;
                below(mix(seed ^ 0x5EED), n) as f64
            }
            Shape::Seq => {
                let n = (self.max - self.min) as u64 + 1;
                (index % n) as f64
            }
            Shape::Gaussian { mean, stdev } => {
                Normal::new(mean, stdev)
                    .expect("checked when parsed")
                    .sample(&mut rng)
                    - self.min as f64
            }
            Shape::Exp { mean } => Exp::new(1.0 / mean)
                .expect("checked when parsed")
                .sample(&mut rng),
            Shape::Extreme { shape, scale } => Weibull::new(scale, shape)
                .expect("checked when parsed")
                .sample(&mut rng),
        };
        let v = self.min + offset.round().clamp(0.0, span) as i64;
        if self.inverted {
            self.max - (v - self.min)
        } else {
            v
        }
    }

    /// The mean of the distribution (for sizes and counts shown before a run).
    pub fn mean(&self) -> f64 {
        let n = 20_000u64;
        (0..n).map(|i| self.sample(i, i) as f64).sum::<f64>() / n as f64
    }
}

/// A count, distribution or ratio that does not parse: the text given, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistError {
    #[error("'{0}' is not a whole number (suffixes k, m, b)")]
    Count(String),
    #[error("'{text}': {why} (use {FORMS})")]
    Dist { text: String, why: String },
    #[error("'{0}': expected DIST/N, e.g. uniform(1..10)/10")]
    RatioForm(String),
    #[error("'{0}': the denominator must be a whole number above 0")]
    Denominator(String),
}

/// A count with cassandra-stress's suffixes: 10, 5k, 1M, 100B.
pub fn parse_count(s: &str) -> Result<i64, DistError> {
    let t = s.trim().to_ascii_lowercase();
    let (digits, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1_000i64),
        Some('m') => (&t[..t.len() - 1], 1_000_000),
        Some('b') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (t.as_str(), 1),
    };
    digits
        .trim()
        .parse::<i64>()
        .ok()
        .and_then(|v| v.checked_mul(mult))
        .ok_or_else(|| DistError::Count(s.to_string()))
}

const FORMS: &str = "FIXED(v), UNIFORM(min..max), GAUSSIAN(min..max[,stdvs]), GAUSSIAN(min..max,mean,stdev), EXP(min..max), EXTREME(min..max,shape) or SEQ(min..max), ~ before the name inverts";

impl FromStr for Dist {
    type Err = DistError;
    fn from_str(s: &str) -> Result<Self, DistError> {
        let bad = |why: &str| DistError::Dist {
            text: s.to_string(),
            why: why.to_string(),
        };
        let t = s.trim();
        let (inverted, t) = match t.strip_prefix('~') {
            Some(rest) => (true, rest.trim()),
            None => (false, t),
        };
        let open = t.find('(').ok_or_else(|| bad("no '(' after the name"))?;
        let body = t[open + 1..]
            .strip_suffix(')')
            .ok_or_else(|| bad("no closing ')'"))?;
        let name = t[..open].trim().to_ascii_lowercase();
        let args: Vec<&str> = body.split(',').map(str::trim).collect();
        let number = |a: &str| -> Result<f64, DistError> {
            a.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("'{a}' is not a number")))
        };
        let range = || -> Result<(i64, i64), DistError> {
            let (a, b) = args[0]
                .split_once("..")
                .ok_or_else(|| bad("the first argument must be min..max"))?;
            let (min, max) = (
                parse_count(a).map_err(|e| bad(&e.to_string()))?,
                parse_count(b.trim_start_matches('.')).map_err(|e| bad(&e.to_string()))?,
            );
            if min > max {
                return Err(bad("min is above max"));
            }
            Ok((min, max))
        };
        let arity = |n: std::ops::RangeInclusive<usize>| {
            if n.contains(&args.len()) {
                Ok(())
            } else {
                Err(bad(&format!("{name} takes {n:?} arguments")))
            }
        };
        // 1 − √(1/span): the quantile cassandra-stress puts at max.
        let edge = |min: i64, max: i64| -> f64 {
            let span = ((max - min) as f64).max(2.0);
            -(span.recip().sqrt()).ln()
        };
        let (shape, min, max) = match name.as_str() {
            "fixed" => {
                arity(1..=1)?;
                let v = parse_count(args[0]).map_err(|e| bad(&e.to_string()))?;
                (Shape::Fixed, v, v)
            }
            "uniform" => {
                arity(1..=1)?;
                let (min, max) = range()?;
                (Shape::Uniform, min, max)
            }
            "seq" => {
                arity(1..=1)?;
                let (min, max) = range()?;
                (Shape::Seq, min, max)
            }
            "gaussian" | "gauss" | "normal" | "norm" => {
                arity(1..=3)?;
                let (min, max) = range()?;
                let (mean, stdev) = if args.len() == 3 {
                    (number(args[1])?, number(args[2])?)
                } else {
                    let stdvs = if args.len() == 2 {
                        number(args[1])?
                    } else {
                        3.0
                    };
                    if stdvs <= 0.0 {
                        return Err(bad("stdvs must be above 0"));
                    }
                    ((min + max) as f64 / 2.0, (max - min) as f64 / 2.0 / stdvs)
                };
                if stdev < 0.0 {
                    return Err(bad("the standard deviation must not be negative"));
                }
                (Shape::Gaussian { mean, stdev }, min, max)
            }
            "exp" => {
                arity(1..=1)?;
                let (min, max) = range()?;
                let mean = ((max - min) as f64 / edge(min, max)).max(f64::MIN_POSITIVE);
                (Shape::Exp { mean }, min, max)
            }
            "extreme" | "extr" | "weibull" => {
                arity(2..=2)?;
                let (min, max) = range()?;
                let shape = number(args[1])?;
                if shape <= 0.0 {
                    return Err(bad("the shape must be above 0"));
                }
                let scale =
                    ((max - min) as f64 / edge(min, max).powf(1.0 / shape)).max(f64::MIN_POSITIVE);
                (Shape::Extreme { shape, scale }, min, max)
            }
            "qextreme" | "qextr" => {
                return Err(bad("the quantised extreme distribution is not supported"));
            }
            _ => return Err(bad(&format!("unknown distribution '{name}'"))),
        };
        Ok(Dist {
            text: s.trim().to_string(),
            shape,
            min,
            max,
            inverted,
        })
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl TryFrom<String> for Dist {
    type Error = DistError;
    fn try_from(s: String) -> Result<Self, DistError> {
        s.parse()
    }
}

impl From<Dist> for String {
    fn from(d: Dist) -> String {
        d.text
    }
}

/// cassandra-stress's `select:` ratio: a distribution over a denominator, e.g.
/// `uniform(1..10)/10` or `fixed(1)/1` (every row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Ratio {
    pub text: String,
    pub numerator: Dist,
    pub denominator: i64,
}

impl Ratio {
    /// The share of rows chosen for `seed`, in 0..=1.
    pub fn sample(&self, seed: u64) -> f64 {
        (self.numerator.sample(seed, seed) as f64 / self.denominator as f64).clamp(0.0, 1.0)
    }
}

impl FromStr for Ratio {
    type Err = DistError;
    fn from_str(s: &str) -> Result<Self, DistError> {
        let (d, n) = s
            .rsplit_once('/')
            .ok_or_else(|| DistError::RatioForm(s.to_string()))?;
        let denominator = parse_count(n)
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| DistError::Denominator(s.to_string()))?;
        Ok(Ratio {
            text: s.trim().to_string(),
            numerator: d.parse()?,
            denominator,
        })
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl TryFrom<String> for Ratio {
    type Error = DistError;
    fn try_from(s: String) -> Result<Self, DistError> {
        s.parse()
    }
}

impl From<Ratio> for String {
    fn from(r: Ratio) -> String {
        r.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: &str, n: u64) -> Vec<i64> {
        let d: Dist = d.parse().unwrap();
        (0..n).map(|i| d.sample(i, i)).collect()
    }

    #[test]
    fn every_form_stays_in_its_range_and_is_a_function_of_the_seed() {
        for d in [
            "fixed(7)",
            "uniform(1..10)",
            "UNIFORM(1..1M)",
            "gaussian(1..1000)",
            "gauss(1..1000,2)",
            "normal(0..100,50,10)",
            "exp(1..100)",
            "extreme(1..100,1.5)",
            "weibull(1..100,0.8)",
            "~exp(1..100)",
            "seq(5..9)",
        ] {
            let dist: Dist = d.parse().unwrap();
            let a = draws(d, 2000);
            assert_eq!(a, draws(d, 2000), "{d}");
            assert!(
                a.iter().all(|v| (dist.min..=dist.max).contains(v)),
                "{d}: {:?}",
                a.iter().max()
            );
        }
        assert!(draws("fixed(7)", 10).iter().all(|&v| v == 7));
        assert_eq!(draws("seq(5..7)", 5), vec![5, 6, 7, 5, 6]);
    }

    #[test]
    fn shapes_have_their_centre_and_inversion_mirrors() {
        let mean = |v: Vec<i64>| v.iter().sum::<i64>() as f64 / v.len() as f64;
        assert!((mean(draws("uniform(1..10)", 20_000)) - 5.5).abs() < 0.1);
        let g = draws("gaussian(0..600)", 20_000);
        assert!((mean(g.clone()) - 300.0).abs() < 3.0);
        // 3 standard deviations to either end: 100 either side holds about 68%.
        let within = g.iter().filter(|v| (200..=400).contains(*v)).count() as f64 / 20_000.0;
        assert!((0.66..0.70).contains(&within), "{within}");
        let e = mean(draws("exp(1..1000)", 20_000));
        let inv = mean(draws("~exp(1..1000)", 20_000));
        assert!(e < 300.0, "exp is low-heavy: {e}");
        assert!((e + inv - 1001.0).abs() < 1.0, "{e} + {inv}");
        // Every value of a uniform range is reached.
        let mut seen = draws("uniform(1..10)", 1000);
        seen.sort();
        seen.dedup();
        assert_eq!(seen, (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn counts_take_suffixes_and_bad_forms_say_what_is_accepted() {
        assert_eq!(parse_count("100B").unwrap(), 100_000_000_000);
        assert_eq!(parse_count("1M").unwrap(), 1_000_000);
        assert_eq!(parse_count("5k").unwrap(), 5_000);
        assert!(parse_count("99999999999b").is_err(), "overflow is refused");
        for bad in [
            "pareto(1..2)",
            "uniform(1..)",
            "uniform(10..1)",
            "uniform 1..2",
            "uniform(1..2",
            "fixed(x)",
            "gaussian(1..10,0)",
            "extreme(1..10)",
            "qextreme(1..10,1,2)",
            "exp(1..10,2)",
        ] {
            let e = bad.parse::<Dist>().unwrap_err();
            assert!(
                matches!(&e, DistError::Dist { text, .. } if text == bad),
                "{e:?}"
            );
            assert!(e.to_string().contains("FIXED(v)"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_select_ratio_is_a_share_of_rows() {
        let r: Ratio = "uniform(1..10)/10".parse().unwrap();
        let shares: Vec<f64> = (0..1000).map(|i| r.sample(i)).collect();
        assert!(shares.iter().all(|s| (0.1..=1.0).contains(s)));
        let all: Ratio = "fixed(1)/1".parse().unwrap();
        assert_eq!(all.sample(3), 1.0);
        assert_eq!(
            "uniform(1..10)".parse::<Ratio>(),
            Err(DistError::RatioForm("uniform(1..10)".into()))
        );
        assert_eq!(
            "fixed(1)/0".parse::<Ratio>(),
            Err(DistError::Denominator("fixed(1)/0".into()))
        );
    }
}
