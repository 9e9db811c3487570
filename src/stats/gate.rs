//! `compare --fail-if` rules: a change of a metric beyond a threshold, counted only when it is
//! also significant (a regression within the noise of the runs fails nothing). Pure: a rule's
//! text in, the comparisons it trips out.

use std::fmt;
use std::str::FromStr;

use super::compare::{ALPHA, MetricComparison};

/// Which way a rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `METRIC > +N%`: a significant rise of more than N%.
    Above,
    /// `METRIC < -N%`: a significant fall of more than N%.
    Below,
}

/// The metrics a rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateMetric {
    Throughput,
    /// The capacity of capacity searches (`capacity < -10%`).
    Capacity,
    /// Response time at `p50` or `p99`, of one operation kind or (None) of every kind.
    Response {
        kind: Option<String>,
        percentile: u8,
    },
}

/// One `--fail-if` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub metric: GateMetric,
    pub bound: Bound,
    /// The threshold as a fraction: ≥ 0 for [`Bound::Above`], ≤ 0 for [`Bound::Below`].
    pub limit: f64,
}

/// Why a `--fail-if` rule was refused; each names the rule as written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateError {
    #[error(
        "'{0}': write METRIC > +N% or METRIC < -N%, METRIC one of throughput, p50, p99, \
         KIND.p50, KIND.p99 (KIND an operation such as read), capacity (of capacity searches)"
    )]
    Form(String),
    #[error("'{0}': the change is a percentage, such as +10%")]
    NoPercentSign(String),
    #[error("'{rule}': '{change}' is not a percentage, such as +10%")]
    NotAPercentage { rule: String, change: String },
    #[error("'{0}': '>' takes a rise, such as +10%")]
    RiseExpected(String),
    #[error("'{0}': '<' takes a fall, such as -5%")]
    FallExpected(String),
}

impl FromStr for Gate {
    type Err = GateError;

    fn from_str(s: &str) -> Result<Gate, GateError> {
        let form = || GateError::Form(s.to_string());
        let (at, bound) = match (s.find('>'), s.find('<')) {
            (Some(i), None) => (i, Bound::Above),
            (None, Some(i)) => (i, Bound::Below),
            _ => return Err(form()),
        };
        let name = s[..at].trim();
        let change = s[at + 1..].trim();
        let metric = match name.split_once('.') {
            None if name == "throughput" => GateMetric::Throughput,
            None if name == "capacity" => GateMetric::Capacity,
            None => GateMetric::Response {
                kind: None,
                percentile: percentile(name).ok_or_else(form)?,
            },
            Some((kind, p)) if !kind.is_empty() => GateMetric::Response {
                kind: Some(kind.to_string()),
                percentile: percentile(p).ok_or_else(form)?,
            },
            Some(_) => return Err(form()),
        };
        let number = change
            .strip_suffix('%')
            .ok_or_else(|| GateError::NoPercentSign(s.to_string()))?
            .trim();
        let value: f64 = number
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| GateError::NotAPercentage {
                rule: s.to_string(),
                change: change.to_string(),
            })?;
        let signed_right = match bound {
            Bound::Above => value >= 0.0,
            Bound::Below => value <= 0.0 && (number.starts_with('-') || value == 0.0),
        };
        if !signed_right {
            return Err(match bound {
                Bound::Above => GateError::RiseExpected(s.to_string()),
                Bound::Below => GateError::FallExpected(s.to_string()),
            });
        }
        Ok(Gate {
            metric,
            bound,
            limit: value / 100.0,
        })
    }
}

fn percentile(s: &str) -> Option<u8> {
    match s {
        "p50" => Some(50),
        "p99" => Some(99),
        _ => None,
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.metric {
            GateMetric::Throughput => f.write_str("throughput")?,
            GateMetric::Capacity => f.write_str("capacity")?,
            GateMetric::Response {
                kind: Some(k),
                percentile,
            } => write!(f, "{k}.p{percentile}")?,
            GateMetric::Response {
                kind: None,
                percentile,
            } => write!(f, "p{percentile}")?,
        }
        match self.bound {
            Bound::Above => write!(f, " > {:+}%", 100.0 * self.limit),
            Bound::Below => write!(f, " < -{}%", (100.0 * self.limit).abs()),
        }
    }
}

impl Gate {
    /// Whether the comparison of `metric` (a series name such as `throughput ops/s` or
    /// `read response p99 ms`) is one this rule looks at.
    pub fn looks_at(&self, metric: &str) -> bool {
        match &self.metric {
            GateMetric::Throughput => metric.starts_with("throughput"),
            GateMetric::Capacity => metric.starts_with("capacity"),
            GateMetric::Response { kind, percentile } => {
                let tail = format!(" response p{percentile} ms");
                match (metric.strip_suffix(&tail), kind) {
                    (Some(_), None) => true,
                    (Some(k), Some(want)) => k == want,
                    (None, _) => false,
                }
            }
        }
    }

    /// Whether `c`'s change is beyond the threshold, in the rule's direction.
    pub fn beyond(&self, c: &MetricComparison) -> bool {
        self.beyond_change(c.relative_diff)
    }

    /// Whether a relative change (B / A − 1) is beyond the threshold, in the rule's
    /// direction.
    pub fn beyond_change(&self, relative_diff: f64) -> bool {
        match self.bound {
            Bound::Above => relative_diff > self.limit && relative_diff > 0.0,
            Bound::Below => relative_diff < self.limit && relative_diff < 0.0,
        }
    }

    /// Whether `c` alone breaks this rule: beyond the threshold and significant at [`ALPHA`].
    /// A gate of several comparisons decides significance over all of them ([`holm`]).
    pub fn tripped_by(&self, c: &MetricComparison) -> bool {
        self.beyond(c) && c.test.p < ALPHA
    }
}

/// Holm's step-down procedure over a family of tests: which of `ps` are significant so that
/// the chance of calling any of them significant when none of the changes is real stays at
/// most `alpha` (the smallest p-value must be below alpha/m, the next below alpha/(m−1), …,
/// stopping at the first that is not). A gate looks at several metrics at once — throughput
/// and each operation's p50 and p99 — and without this, each one's own 5% add up.
pub fn holm(ps: &[f64], alpha: f64) -> Vec<bool> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut out = vec![false; m];
    for (rank, &i) in order.iter().enumerate() {
        if ps[i] < alpha / (m - rank) as f64 {
            out[i] = true;
        } else {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::compare::{Direction, Sampling, compare_sampled};

    #[test]
    fn rules_parse_and_print_back() {
        for (text, printed) in [
            ("p99 > +10%", "p99 > +10%"),
            ("p99>10%", "p99 > +10%"),
            ("throughput < -5%", "throughput < -5%"),
            ("read.p50 > +2.5%", "read.p50 > +2.5%"),
            ("write.p99 > 0%", "write.p99 > +0%"),
            ("throughput < 0%", "throughput < -0%"),
            ("capacity < -10%", "capacity < -10%"),
        ] {
            let g: Gate = text.parse().unwrap();
            assert_eq!(g.to_string(), printed, "{text}");
        }
        let g: Gate = "read.p99 > +10%".parse().unwrap();
        assert_eq!(
            g,
            Gate {
                metric: GateMetric::Response {
                    kind: Some("read".into()),
                    percentile: 99
                },
                bound: Bound::Above,
                limit: 0.1
            }
        );
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for (text, needle) in [
            ("p99 +10%", "write METRIC > +N%"),
            ("p99 > < 10%", "write METRIC > +N%"),
            ("p95 > +10%", "METRIC one of"),
            ("latency > +10%", "METRIC one of"),
            (".p99 > +10%", "METRIC one of"),
            ("read.p90 > +10%", "METRIC one of"),
            ("p99 > +10", "a percentage"),
            ("p99 > ten%", "not a percentage"),
            ("p99 > inf%", "not a percentage"),
            ("p99 > -10%", "'>' takes a rise"),
            ("throughput < 5%", "'<' takes a fall"),
            ("throughput < +5%", "'<' takes a fall"),
        ] {
            let e = text.parse::<Gate>().unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn holm_keeps_the_familys_error_at_alpha() {
        // One test: the plain threshold.
        assert_eq!(holm(&[0.04], 0.05), [true]);
        // Three tests: 0.01 < 0.05/3, then 0.02 < 0.05/2, then 0.04 < 0.05/1.
        assert_eq!(holm(&[0.04, 0.01, 0.02], 0.05), [true, true, true]);
        // 0.03 is not below 0.05/2: it and every larger p stop there.
        assert_eq!(holm(&[0.001, 0.03, 0.04], 0.05), [true, false, false]);
        // The smallest not below 0.05/3: none.
        assert_eq!(holm(&[0.02, 0.03, 0.04], 0.05), [false, false, false]);
        assert!(holm(&[], 0.05).is_empty());
    }

    #[test]
    fn a_rule_trips_only_on_a_significant_change_beyond_it() {
        let g: Gate = "p99 > +10%".parse().unwrap();
        assert!(g.looks_at("read response p99 ms"));
        assert!(g.looks_at("write response p99 ms"));
        assert!(!g.looks_at("read response p50 ms"));
        assert!(!g.looks_at("throughput ops/s"));
        let g_read: Gate = "read.p99 > +10%".parse().unwrap();
        assert!(g_read.looks_at("read response p99 ms"));
        assert!(!g_read.looks_at("write response p99 ms"));
        let runs = |xs: &[f64], ys: &[f64]| {
            compare_sampled(
                "read response p99 ms",
                Direction::LowerIsBetter,
                xs,
                ys,
                Sampling::Runs,
            )
            .unwrap()
        };
        // +20%, tight: tripped.
        assert!(g.tripped_by(&runs(&[10.0, 10.1, 9.9], &[12.0, 12.1, 11.9])));
        // +5%, tight: within the threshold.
        assert!(!g.tripped_by(&runs(&[10.0, 10.1, 9.9], &[10.5, 10.6, 10.4])));
        // +20% on average but the runs scatter widely: not significant, not tripped.
        let noisy = runs(&[5.0, 15.0, 10.0], &[18.0, 6.0, 12.0]);
        assert!(
            noisy.relative_diff > 0.1 && noisy.test.p > ALPHA,
            "{noisy:?}"
        );
        assert!(!g.tripped_by(&noisy));
        // A fall of p99 never trips a rise rule.
        assert!(!g.tripped_by(&runs(&[12.0, 12.1, 11.9], &[10.0, 10.1, 9.9])));
        let t: Gate = "throughput < -5%".parse().unwrap();
        let tp = |xs: &[f64], ys: &[f64]| {
            compare_sampled(
                "throughput ops/s",
                Direction::HigherIsBetter,
                xs,
                ys,
                Sampling::Runs,
            )
            .unwrap()
        };
        assert!(t.tripped_by(&tp(&[1000.0, 1010.0, 990.0], &[900.0, 905.0, 895.0])));
        assert!(!t.tripped_by(&tp(&[1000.0, 1010.0, 990.0], &[980.0, 985.0, 975.0])));
        assert!(!t.tripped_by(&tp(&[1000.0, 1010.0, 990.0], &[1100.0, 1105.0, 1095.0])));
    }
}
