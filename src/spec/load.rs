//! The load spec: how hard and how long to drive a workload.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Closed loop (a fixed number of requests in flight) or open loop (a fixed arrival rate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum LoadMode {
    /// `concurrency` requests in flight; each starts when one completes.
    Closed { concurrency: usize },
    /// Operation i has the intended start `t0 + i / rate_per_s`; at most `max_in_flight`
    /// requests are outstanding, later ones wait (and their wait counts in response time).
    Open {
        rate_per_s: f64,
        max_in_flight: usize,
    },
}

/// When a phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// After this long (warmup included).
    Duration { secs: f64 },
    /// After this many operations.
    Ops { count: u64 },
}

/// A half-open range of cycle numbers `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cycles {
    pub start: u64,
    pub end: u64,
}

impl FromStr for Cycles {
    type Err = String;

    /// `A..B` (half-open) or `N` (= `0..N`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad =
            || format!("'{s}' is not a cycle range: expected A..B (e.g. 0..1000000) or a count");
        let (a, b) = match s.split_once("..") {
            Some((a, b)) => (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ),
            None => (0, s.trim().parse().map_err(|_| bad())?),
        };
        if b <= a {
            return Err(format!(
                "'{s}': the range is empty (end must be above start)"
            ));
        }
        Ok(Cycles { start: a, end: b })
    }
}

impl fmt::Display for Cycles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Parses a rate: `2000`, `2k`, `1.5k` ops/s; must be positive and finite.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1000.0),
        None => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a rate: expected ops/s, e.g. 2000 or 2k"))?;
    let v = v * mult;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!(
            "'{s}': the rate must be a positive number of ops/s"
        ));
    }
    Ok(v)
}

/// Everything about driving one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSpec {
    pub mode: LoadMode,
    pub stop: Stop,
    /// Results from the first `warmup_s` are kept apart and left out of the summary.
    pub warmup_s: f64,
    /// Worker threads of the client.
    pub threads: usize,
    /// Client-side request timeout.
    pub timeout_s: f64,
    /// Stop the run once this many errors occurred (0 = never).
    pub max_errors: u64,
    /// Cycle numbers this process covers; operation i uses cycle `start + i` (wrapping
    /// within the range).
    pub cycles: Cycles,
}

impl LoadSpec {
    pub fn duration(&self) -> Option<Duration> {
        match self.stop {
            Stop::Duration { secs } => Some(Duration::from_secs_f64(secs)),
            Stop::Ops { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cycles_and_rates() {
        assert_eq!(
            "10..20".parse::<Cycles>().unwrap(),
            Cycles { start: 10, end: 20 }
        );
        assert_eq!("5".parse::<Cycles>().unwrap(), Cycles { start: 0, end: 5 });
        assert!("20..10".parse::<Cycles>().is_err());
        assert!("a..b".parse::<Cycles>().is_err());
        assert_eq!(parse_rate("2k").unwrap(), 2000.0);
        assert_eq!(parse_rate("1500").unwrap(), 1500.0);
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-5").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("inf").is_err());
    }
}
