//! The `capacity` step (`cqlbench capacity WORKLOAD`): the step-by-step capacity search of
//! reference 001, with each overload criterion as a key (or flag).

use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::run::RunStep;
use super::{argv, de};
use crate::error::Invalid;
use crate::result::capacity::{
    CapacityResult, CapacitySpec, CapacityStatus, Criteria, Growth, LatencyBound, Settle,
};
use crate::scenario::capacity;
use crate::scenario::event::Event;
use crate::scenario::{Context, ScenarioError};
use crate::spec::load::parse_rate;
use crate::spec::{OpKind, parse_duration};

/// A capacity step: the run (workload, target, sampling) and the search.
#[derive(Debug, Clone, Args)]
pub struct CapacityStep {
    #[command(flatten)]
    pub run: RunStep,
    #[command(flatten)]
    pub search: CapacitySearch,
}

impl<'de> Deserialize<'de> for CapacityStep {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (search, run) = de::split(d)?;
        Ok(CapacityStep { run, search })
    }
}

fn default_start_rate() -> f64 {
    1000.0
}
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
fn default_max_pending() -> String {
    "20".into()
}
fn default_pending_after() -> Duration {
    Duration::from_secs(60)
}
fn default_max_node_cpu() -> String {
    "90%".into()
}
fn default_max_error_rate() -> String {
    "1%".into()
}
fn default_min_achieved() -> String {
    "98%".into()
}

/// How the capacity search steps, and when a step is overloaded.
#[derive(Debug, Clone, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CapacitySearch {
    /// Rate of the first step (ops/s).
    #[arg(long, value_parser = parse_rate, default_value = "1000")]
    #[serde(default = "default_start_rate", deserialize_with = "de::rate")]
    pub start_rate: f64,
    /// Each step's rate is the previous one times this [default: 1.5].
    #[arg(long, conflicts_with = "increment")]
    #[serde(default)]
    pub factor: Option<f64>,
    /// Each step's rate is the previous one plus this (ops/s), instead of --factor.
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
    /// the lowest failing rate (each bisection halves the uncertainty).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub refine: usize,
    /// Before each step, wait until every node has at most this many pending compactions …
    #[arg(long, default_value_t = 0.0)]
    #[serde(default)]
    pub settle_pending: f64,
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
    #[serde(default = "default_max_pending", deserialize_with = "de::text")]
    pub max_pending: String,
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
    #[serde(default = "default_max_node_cpu", deserialize_with = "de::text")]
    pub max_node_cpu: String,
    /// Overloaded when errors ÷ operations is above this (off to disable).
    #[arg(long, default_value = "1%")]
    #[serde(default = "default_max_error_rate", deserialize_with = "de::text")]
    pub max_error_rate: String,
    /// Overloaded when the achieved rate is below this share of the target (off to disable).
    #[arg(long, default_value = "98%")]
    #[serde(default = "default_min_achieved", deserialize_with = "de::text")]
    pub min_achieved: String,

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

/// `off`, a number, or a percentage (as a fraction when `percent`).
fn parse_limit(flag: &str, s: &str, percent: bool) -> Result<Option<f64>, Invalid> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("off") || t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let (num, share) = match t.strip_suffix('%') {
        Some(n) => (n, true),
        None => (t, false),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| crate::invalid!("--{flag} '{s}': expected a number, a percentage or off"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(crate::invalid!("--{flag} '{s}': must not be negative"));
    }
    Ok(Some(match (percent, share) {
        (true, true) => v / 100.0,
        (true, false) if v > 1.0 => {
            return Err(crate::invalid!(
                "--{flag} '{s}': give a share as 0.9 or 90%"
            ));
        }
        _ => v,
    }))
}

impl CapacitySearch {
    /// The search spec (and the checks of every value).
    pub fn spec(&self) -> Result<CapacitySpec, Invalid> {
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
            start_rate_per_s: self.start_rate,
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
                timeout_s: self.settle_timeout.as_secs_f64(),
            },
            criteria: Criteria {
                latency,
                max_pending_compactions: parse_limit("max-pending", &self.max_pending, false)?,
                pending_after_s: self.pending_after.as_secs_f64(),
                max_node_cpu: parse_limit("max-node-cpu", &self.max_node_cpu, true)?,
                max_error_rate: parse_limit("max-error-rate", &self.max_error_rate, true)?,
                min_achieved: parse_limit("min-achieved", &self.min_achieved, true)?,
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
            de::from_value(serde_yaml::Value::Mapping(Default::default()))
                .expect("the defaults are a valid search");
        let mut a = self.run.args_shown(command);
        a.extend(argv::part_flags(&self.search, Some(&defaults)));
        a
    }

    /// The run step each search step runs: the start rate (each step sets its own), `--step`
    /// long with `--step-warmup`.
    fn step_run(&self) -> Result<(RunStep, CapacitySpec), Invalid> {
        let a = self;
        if a.run.rate.is_some() || a.run.concurrency.is_some() {
            return Err(crate::invalid!(
                "capacity sets each step's rate: give --start-rate and --factor or --increment"
            ));
        }
        if a.run.duration.is_some() || a.run.ops.is_some() {
            return Err(crate::invalid!(
                "capacity steps last --step each (not --duration / --ops)"
            ));
        }
        if !a.run.fault.is_empty() {
            return Err(crate::invalid!(
                "--fault is for run, throughput and latency (a capacity search's steps are short)"
            ));
        }
        if a.run.shard.is_some() || a.run.loaders.is_some() {
            return Err(crate::invalid!(
                "--shard and --loaders are for run, throughput and latency (a capacity search runs one client)"
            ));
        }
        if a.search.resume && a.run.out.is_none() {
            return Err(crate::invalid!(
                "--resume continues the search in --out: give --out"
            ));
        }
        let spec = a.search.spec()?;
        let mut run = a.run.clone();
        run.rate = Some(crate::spec::load::RateArg::PerSecond(spec.start_rate_per_s));
        run.duration = Some(a.search.step);
        run.warmup = a.search.step_warmup;
        run.validate()?;
        Ok((run, spec))
    }

    /// Checks every value that can be checked without the cluster.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.step_run().map(|_| ())
    }
}

pub fn run(a: &CapacityStep, ctx: &Context) -> Result<CapacityResult, ScenarioError> {
    let (mut run, spec) = a.step_run()?;
    if run.out.is_none() {
        run.out = Some(run.default_out(ctx, "capacity"));
    }
    let mut plan = run.to_plan(ctx)?;
    if a.search.resume {
        plan.rampup = None;
        plan.drop_keyspace = false;
    }
    super::prepare_out(&plan.out)?;
    if plan.metrics.endpoints.is_empty() {
        ctx.emit(Event::CapacityWithoutMetrics);
    }
    let at = Event::ResultAt {
        what: "capacity result",
        path: &plan.out,
    };
    ctx.emit(at);
    let result = capacity::run(&plan, &spec, a.search.resume, &ctx.cancel, &mut |p| {
        ctx.emit(Event::Capacity(p))
    })?;
    ctx.emit(Event::CapacityDone { result: &result });
    ctx.emit(Event::ResultAt {
        what: "capacity result",
        path: &plan.out,
    });
    match &result.status {
        CapacityStatus::Failed { reason } => Err(ScenarioError::RunEnded(format!(
            "the search failed: {reason}"
        ))),
        _ => Ok(result),
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

    #[test]
    fn limits_are_numbers_shares_or_off() {
        assert_eq!(parse_limit("x", "off", true).unwrap(), None);
        assert_eq!(parse_limit("x", "90%", true).unwrap(), Some(0.9));
        assert_eq!(parse_limit("x", "0.5", true).unwrap(), Some(0.5));
        assert!(parse_limit("x", "90", true).is_err());
        assert_eq!(parse_limit("x", "20", false).unwrap(), Some(20.0));
        assert!(parse_limit("x", "-1", false).is_err());
        assert!(parse_limit("x", "lots", false).is_err());
    }
}
