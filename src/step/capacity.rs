//! The `capacity` step as typed input: the run (workload, target, sampling) and the search
//! (how it steps, when a step is overloaded), as flags, scenario keys and what a pod of a
//! sharded search is sent. The search itself is `scenario::capacity`.

use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::run::RunStep;
use super::{argv, de};
use crate::error::Invalid;
use crate::result::capacity::{CapacitySpec, Criteria, Growth, LatencyBound, SearchMode, Settle};
use crate::spec::load::{CountLimit, ShareLimit, parse_rate};
use crate::spec::{OpKind, parse_duration};

/// A capacity step: the run (workload, target, sampling) and the search.
#[derive(Debug, Clone, Args, Serialize)]
pub struct CapacityStep {
    #[command(flatten)]
    #[serde(flatten)]
    pub run: RunStep,
    #[command(flatten)]
    #[serde(flatten)]
    pub search: CapacitySearch,
}

impl<'de> Deserialize<'de> for CapacityStep {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (search, run) = de::split(d)?;
        Ok(CapacityStep { run, search })
    }
}

const DEFAULT_START_RATE: f64 = 1000.0;
fn default_factor() -> f64 {
    1.5
}
fn default_step() -> Duration {
    Duration::from_secs(60)
}
fn default_step_warmup() -> Duration {
    Duration::from_secs(10)
}
fn default_max_steps() -> usize {
    20
}
fn default_settle_timeout() -> Duration {
    Duration::from_secs(300)
}
fn default_max_pending() -> CountLimit {
    "20".parse().expect("a valid default")
}
fn default_pending_after() -> Duration {
    Duration::from_secs(60)
}
fn default_settle_cpu() -> ShareLimit {
    "30%".parse().expect("a valid default")
}
fn default_max_node_cpu() -> ShareLimit {
    "90%".parse().expect("a valid default")
}
fn default_max_error_rate() -> ShareLimit {
    "1%".parse().expect("a valid default")
}
const DEFAULT_MIN_ACHIEVED: f64 = 0.98;

/// `--start-concurrency`: a whole number of requests in flight, 1 or more.
pub fn parse_concurrency(s: &str) -> Result<usize, Invalid> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(crate::invalid!(
            "--start-concurrency '{s}': expected a whole number of requests in flight, 1 or more"
        )),
    }
}

/// How the capacity search steps, and when a step is overloaded.
#[derive(Debug, Clone, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CapacitySearch {
    /// Rate of the first step (ops/s): an open-loop search, stepping the target rate
    /// [default: 1000].
    #[arg(long, value_parser = parse_rate)]
    #[serde(default, deserialize_with = "de::opt_rate")]
    pub start_rate: Option<f64>,
    /// Requests in flight in the first step: a closed-loop search instead, stepping the
    /// concurrency (whole numbers, each step above the last), as reference 001 raised client
    /// threads.
    #[arg(long, value_parser = parse_concurrency, allow_hyphen_values = true)]
    #[serde(default)]
    pub start_concurrency: Option<usize>,
    /// Each step's rate (or concurrency) is the previous one times this [default: 1.5].
    #[arg(long, conflicts_with = "increment")]
    #[serde(default)]
    pub factor: Option<f64>,
    /// Each step's rate (or concurrency) is the previous one plus this, instead of --factor.
    #[arg(long, value_parser = parse_rate)]
    #[serde(default, deserialize_with = "de::opt_rate")]
    pub increment: Option<f64>,
    /// Length of each step, warmup included.
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    #[serde(
        default = "default_step",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub step: Duration,
    /// Leading part of each step left out of its figures.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    #[serde(
        default = "default_step_warmup",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub step_warmup: Duration,
    /// Give up after this many steps (the verdict then names no failing step).
    #[arg(long, default_value_t = 20)]
    #[serde(default = "default_max_steps")]
    pub max_steps: usize,
    /// After the first failing step, bisect this many times between the highest passing and
    /// the lowest failing rate or concurrency (each bisection halves the uncertainty; a
    /// closed-loop search stops when no whole number is left between).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub refine: usize,
    /// Before each step, wait until every node has at most this many pending compactions …
    #[arg(long, default_value_t = 0.0)]
    #[serde(default)]
    pub settle_pending: f64,
    /// … and no node uses more than this share of its CPUs over a second (off to disable: a
    /// cluster that serves other traffic never goes quiet, and each step would wait the
    /// timeout) …
    #[arg(long, default_value = "30%")]
    #[serde(
        default = "default_settle_cpu",
        deserialize_with = "de::parsed",
        serialize_with = "argv::display"
    )]
    pub settle_cpu: ShareLimit,
    /// … or this long, whichever comes first.
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    #[serde(
        default = "default_settle_timeout",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub settle_timeout: Duration,

    /// Latency bound OP:PERCENTILE:LIMIT, repeatable; OP is read, write, range or all; e.g.
    /// read:p50:20ms (reference 001) [default: read:p50:20ms and all:p99:500ms].
    #[arg(long, value_parser = parse_latency_bound)]
    #[serde(
        default,
        deserialize_with = "de::latency_bounds",
        serialize_with = "argv::list_display"
    )]
    pub max_latency: Vec<LatencyBound>,
    /// Overloaded when a node has more than this many pending compactions (off to disable) …
    #[arg(long, default_value = "20")]
    #[serde(
        default = "default_max_pending",
        deserialize_with = "de::parsed",
        serialize_with = "argv::display"
    )]
    pub max_pending: CountLimit,
    /// … this long after the step (reference 001: one minute).
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    #[serde(
        default = "default_pending_after",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub pending_after: Duration,
    /// Overloaded when a node's mean CPU over the step is above this share of its CPUs (off to disable).
    #[arg(long, default_value = "90%")]
    #[serde(
        default = "default_max_node_cpu",
        deserialize_with = "de::parsed",
        serialize_with = "argv::display"
    )]
    pub max_node_cpu: ShareLimit,
    /// Overloaded when errors ÷ operations is above this (off to disable).
    #[arg(long, default_value = "1%")]
    #[serde(
        default = "default_max_error_rate",
        deserialize_with = "de::parsed",
        serialize_with = "argv::display"
    )]
    pub max_error_rate: ShareLimit,
    /// Overloaded when the achieved rate is below this share of the target (off to disable)
    /// [default: 98%; open loop only: a closed-loop step has no target rate].
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub min_achieved: Option<ShareLimit>,

    /// Continue the interrupted search in --out after its last completed step.
    #[arg(long, requires = "out")]
    #[serde(default)]
    pub resume: bool,
}

/// `read:p50:20ms`, `all:p99.9:1s`.
pub fn parse_latency_bound(s: &str) -> Result<LatencyBound, crate::error::Invalid> {
    let bad = || {
        crate::invalid!(
            "'{s}' is not a latency bound: expected OP:pPERCENTILE:LIMIT, e.g. read:p50:20ms"
        )
    };
    let mut parts = s.split(':');
    let (Some(op), Some(p), Some(limit), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let op = match op.trim() {
        "all" => None,
        o => Some(o.parse::<OpKind>()?),
    };
    let percentile: f64 = p
        .trim()
        .trim_start_matches('p')
        .parse()
        .map_err(|_| bad())?;
    if !(0.0..=100.0).contains(&percentile) || percentile == 0.0 {
        return Err(crate::invalid!("'{s}': the percentile must be in (0, 100]"));
    }
    let limit = parse_duration(limit.trim()).map_err(|_| bad())?;
    if limit.is_zero() {
        return Err(crate::invalid!("'{s}': the limit must be above zero"));
    }
    Ok(LatencyBound {
        op,
        percentile,
        max_ms: limit.as_secs_f64() * 1000.0,
    })
}

impl CapacitySearch {
    /// The search spec (and the checks of every value).
    pub fn spec(&self) -> Result<CapacitySpec, Invalid> {
        let mode = match (self.start_rate, self.start_concurrency) {
            (Some(_), Some(_)) => {
                return Err(crate::invalid!(
                    "give --start-rate (open loop) or --start-concurrency (closed loop), not both"
                ));
            }
            (_, Some(0)) => return Err(crate::invalid!("--start-concurrency must be at least 1")),
            (_, Some(start)) => SearchMode::Concurrency { start },
            (_, None) => SearchMode::Rate,
        };
        let closed = matches!(mode, SearchMode::Concurrency { .. });
        let min_achieved = match (self.min_achieved, closed) {
            (Some(ShareLimit(Some(_))), true) => {
                return Err(crate::invalid!(
                    "--min-achieved is a share of a target rate, which a closed-loop search (--start-concurrency) has not: leave it out"
                ));
            }
            (_, true) => None,
            (Some(m), false) => m.0,
            (None, false) => Some(DEFAULT_MIN_ACHIEVED),
        };
        if self.increment.is_some() && self.factor.is_some() {
            return Err(crate::invalid!("give --factor or --increment, not both"));
        }
        let factor = self.factor.unwrap_or_else(default_factor);
        if !(factor > 1.0 && factor.is_finite()) && self.increment.is_none() {
            return Err(crate::invalid!(
                "--factor must be above 1 (or give --increment)"
            ));
        }
        if !(self.settle_pending >= 0.0 && self.settle_pending.is_finite()) {
            return Err(crate::invalid!(
                "--settle-pending must be a number of compactions (0 or more)"
            ));
        }
        if self.step_warmup >= self.step {
            return Err(crate::invalid!("--step-warmup must be shorter than --step"));
        }
        if self.max_steps == 0 {
            return Err(crate::invalid!("--max-steps must be at least 1"));
        }
        let latency = if self.max_latency.is_empty() {
            vec![
                parse_latency_bound("read:p50:20ms").expect("valid default"),
                parse_latency_bound("all:p99:500ms").expect("valid default"),
            ]
        } else {
            self.max_latency.clone()
        };
        Ok(CapacitySpec {
            mode,
            start_rate_per_s: if closed {
                0.0
            } else {
                self.start_rate.unwrap_or(DEFAULT_START_RATE)
            },
            growth: match self.increment {
                Some(i) => Growth::Increment(i),
                None => Growth::Factor(factor),
            },
            step_s: self.step.as_secs_f64(),
            warmup_s: self.step_warmup.as_secs_f64(),
            max_steps: self.max_steps,
            refine: self.refine,
            settle: Settle {
                max_pending: self.settle_pending,
                max_cpu: self.settle_cpu.0,
                timeout_s: self.settle_timeout.as_secs_f64(),
            },
            criteria: Criteria {
                latency,
                max_pending_compactions: self.max_pending.0,
                pending_after_s: self.pending_after.as_secs_f64(),
                max_node_cpu: self.max_node_cpu.0,
                max_error_rate: self.max_error_rate.0,
                min_achieved,
            },
        })
    }
}

impl CapacityStep {
    /// The step as the arguments of `capacity` that make it again (every option set).
    pub fn args(&self) -> Vec<String> {
        let mut a = self.run.args("capacity");
        a.extend(argv::part_flags(&self.search, None));
        a
    }

    /// [`Self::args`] without the options left at their defaults.
    pub fn args_shown(&self, command: &str) -> Vec<String> {
        let defaults: CapacitySearch =
            de::from_value(crate::yaml::Value::Object(Default::default()))
                .expect("the defaults are a valid search");
        let mut a = self.run.args_shown(command);
        a.extend(argv::part_flags(&self.search, Some(&defaults)));
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_bounds_parse() {
        let b = parse_latency_bound("read:p50:20ms").unwrap();
        assert_eq!(b.op, Some(OpKind::Read));
        assert_eq!((b.percentile, b.max_ms), (50.0, 20.0));
        let b = parse_latency_bound("all:99.9:1s").unwrap();
        assert_eq!((b.op, b.percentile, b.max_ms), (None, 99.9, 1000.0));
        assert!(parse_latency_bound("read:p50").is_err());
        assert!(parse_latency_bound("scan:p50:1ms").is_ok());
        assert!(
            parse_latency_bound("foo:p50:1ms")
                .unwrap_err()
                .contains("unknown operation")
        );
        assert!(parse_latency_bound("read:p0:1ms").is_err());
        assert!(parse_latency_bound("read:p50:0ms").is_err());
    }

    fn search(yaml: &str) -> Result<CapacitySpec, String> {
        let v: crate::yaml::Value = crate::yaml::from_str(yaml).unwrap();
        let v = if v.is_null() {
            crate::yaml::Value::Object(Default::default())
        } else {
            v
        };
        let s: CapacitySearch = de::from_value(v).map_err(|e| e.to_string())?;
        s.spec().map_err(|e| e.to_string())
    }

    #[test]
    fn start_concurrency_makes_a_closed_loop_search() {
        let open = search("{}").unwrap();
        assert_eq!(open.mode, SearchMode::Rate);
        assert_eq!(open.start_rate_per_s, 1000.0);
        assert_eq!(open.criteria.min_achieved, Some(0.98));
        let c = search("{start-concurrency: 8, increment: 8, refine: 2}").unwrap();
        assert_eq!(c.mode, SearchMode::Concurrency { start: 8 });
        assert_eq!(c.growth, Growth::Increment(8.0));
        assert_eq!(c.criteria.min_achieved, None, "no target rate to share");
        assert_eq!(
            search("{start-concurrency: 4, min-achieved: off}")
                .unwrap()
                .criteria
                .min_achieved,
            None
        );
        for (yaml, needle) in [
            ("{start-concurrency: 4, start-rate: 100}", "not both"),
            ("{start-concurrency: 0}", "at least 1"),
            (
                "{start-concurrency: 4, min-achieved: 90%}",
                "--min-achieved",
            ),
            (
                "{start-concurrency: 4, factor: 1}",
                "--factor must be above 1",
            ),
        ] {
            let e = search(yaml).unwrap_err();
            assert!(e.contains(needle), "{yaml}: {e}");
            assert!(!e.contains('\n'), "{yaml}: {e}");
        }
        assert!(search("{start-concurrency: -1}").is_err());
        assert!(search("{start-concurrency: many}").is_err());
        assert_eq!(parse_concurrency(" 16 ").unwrap(), 16);
        for bad in ["0", "-1", "1.5", "x", ""] {
            assert!(
                parse_concurrency(bad)
                    .unwrap_err()
                    .contains("whole number of requests in flight"),
                "{bad}"
            );
        }
    }
}
