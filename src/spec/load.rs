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
    type Err = crate::error::Invalid;

    /// `A..B` (half-open) or `N` (= `0..N`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            crate::invalid!(
                "'{s}' is not a cycle range: expected A..B (e.g. 0..1000000) or a count"
            )
        };
        let (a, b) = match s.split_once("..") {
            Some((a, b)) => (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ),
            None => (0, s.trim().parse().map_err(|_| bad())?),
        };
        if b <= a {
            return Err(crate::invalid!(
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

/// This process's part of a run split `count` ways: its operation `i` is operation
/// `i × count + index` of the whole run (its cycle and, in open loop, its intended start on
/// the whole run's schedule), so the shards' parts are disjoint and together are exactly the
/// run one process would have made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Share {
    pub index: u64,
    pub count: u64,
}

impl Default for Share {
    fn default() -> Self {
        Share::WHOLE
    }
}

impl Share {
    /// The whole run: one process.
    pub const WHOLE: Share = Share { index: 0, count: 1 };

    pub fn is_whole(&self) -> bool {
        self.count <= 1
    }

    /// The whole run's operation number of this share's operation `i`.
    #[inline]
    pub fn global(&self, i: u64) -> u64 {
        i.saturating_mul(self.count).saturating_add(self.index)
    }

    /// How many of the whole run's first `n` operations are this share's.
    pub fn local_count(&self, n: u64) -> u64 {
        n.saturating_sub(self.index).div_ceil(self.count.max(1))
    }

    /// This share of `n` (requests in flight, threads): `n / count`, the remainder to the
    /// lowest indices, at least 1.
    pub fn split(&self, n: usize) -> usize {
        let count = self.count.max(1) as usize;
        (n / count + usize::from((self.index as usize) < n % count)).max(1)
    }
}

impl FromStr for Share {
    type Err = crate::error::Invalid;

    /// `I/N`: shard I (0-based) of N.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad =
            || crate::invalid!("'{s}' is not a shard: expected I/N with 0 <= I < N (e.g. 0/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        if count > 10_000 {
            return Err(crate::invalid!("'{s}': at most 10000 shards"));
        }
        Ok(Share { index, count })
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses a rate: `2000`, `2k`, `1.5k` ops/s; must be positive and finite.
pub fn parse_rate(s: &str) -> Result<f64, crate::error::Invalid> {
    let t = s.trim();
    let (num, mult) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1000.0),
        None => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| crate::invalid!("'{s}' is not a rate: expected ops/s, e.g. 2000 or 2k"))?;
    let v = v * mult;
    if !v.is_finite() || v <= 0.0 {
        return Err(crate::invalid!(
            "'{s}': the rate must be a positive number of ops/s"
        ));
    }
    Ok(v)
}

/// A rate as given on the command line: ops/s, or a share of a measured throughput
/// (`35%` of a result's main-phase ops/s, reference 000's latency test).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateArg {
    PerSecond(f64),
    /// A fraction (0.35 for `35%`).
    Share(f64),
}

impl RateArg {
    /// The rate in ops/s; `of` is the throughput a share refers to.
    pub fn resolve(self, of: Option<f64>) -> Result<f64, crate::error::Invalid> {
        match (self, of) {
            (RateArg::PerSecond(r), _) => Ok(r),
            (RateArg::Share(f), Some(t)) if t > 0.0 => Ok(f * t),
            (RateArg::Share(_), Some(t)) => Err(crate::invalid!(
                "the referenced throughput is {t} ops/s: a share of it is not a rate"
            )),
            (RateArg::Share(f), None) => Err(crate::invalid!(
                "--rate {}% needs --of RESULT.json (the throughput result it is a share of)",
                f * 100.0
            )),
        }
    }
}

impl std::fmt::Display for RateArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RateArg::PerSecond(r) => write!(f, "{r}"),
            RateArg::Share(s) => write!(f, "{}%", s * 100.0),
        }
    }
}

/// Parses `2000`, `2k` (ops/s) or `35%` (of a result given with `--of`).
pub fn parse_rate_arg(s: &str) -> Result<RateArg, crate::error::Invalid> {
    match s.trim().strip_suffix('%') {
        Some(p) => {
            let v: f64 = p.trim().parse().map_err(|_| {
                format!("'{s}' is not a rate: expected ops/s (2000, 2k) or a share (35%)")
            })?;
            if !v.is_finite() || v <= 0.0 {
                return Err(crate::invalid!("'{s}': the share must be above 0%"));
            }
            Ok(RateArg::Share(v / 100.0))
        }
        None => parse_rate(s).map(RateArg::PerSecond),
    }
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
    /// Cycle numbers the run covers; its operation g uses cycle `start + g` (wrapping
    /// within the range).
    pub cycles: Cycles,
    /// This process's share of the run (the rate and requests in flight above are already
    /// its own).
    #[serde(default, skip_serializing_if = "Share::is_whole")]
    pub share: Share,
    /// Open loop: how long after the earliest due send the client may wait so that every send
    /// due by then leaves in one wake-up (0: each on time). A sleeping client pays for every
    /// wake-up, so a window trades send lag, which the response time includes, for client CPU.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub send_window_s: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// The widest `--send-window`: beyond it the sends are a burst per window, not a rate.
pub const MAX_SEND_WINDOW: Duration = Duration::from_millis(100);

impl LoadSpec {
    /// Refuses values no phase can run with, in one line naming the flag (or key) that sets
    /// it: a spec built in code is refused exactly as the command line's.
    pub fn check(&self) -> Result<(), crate::error::Invalid> {
        let no = |why: String| Err(crate::error::Invalid(why));
        if self.threads == 0 {
            return no("--threads must be at least 1".into());
        }
        if !(self.timeout_s >= 0.01 && self.timeout_s.is_finite()) {
            return no("--timeout must be at least 10ms".into());
        }
        match self.mode {
            LoadMode::Closed { concurrency: 0 }
            | LoadMode::Open {
                max_in_flight: 0, ..
            } => {
                return no("--concurrency and --max-in-flight must be at least 1".into());
            }
            LoadMode::Open { rate_per_s, .. } if !(rate_per_s > 0.0 && rate_per_s.is_finite()) => {
                return no(format!("--rate {rate_per_s}: give a rate above 0"));
            }
            _ => {}
        }
        match self.stop {
            Stop::Ops { count: 0 } => return no("--ops must be at least 1".into()),
            Stop::Duration { secs } if !(secs > 0.0 && secs.is_finite()) => {
                return no(format!("--duration {secs}s: give a duration above 0"));
            }
            Stop::Duration { secs } if self.warmup_s >= secs => {
                return no(format!(
                    "--warmup ({:?}) must be shorter than --duration ({secs}s)",
                    Duration::from_secs_f64(self.warmup_s.max(0.0))
                ));
            }
            _ => {}
        }
        if self.cycles.end <= self.cycles.start {
            return no(format!("--cycles {}: the range is empty", self.cycles));
        }
        if self.share.index >= self.share.count {
            return no(format!("--shard {}: not a shard", self.share));
        }
        if !(0.0..=MAX_SEND_WINDOW.as_secs_f64()).contains(&self.send_window_s) {
            return no(format!(
                "--send-window {:?}: at most {MAX_SEND_WINDOW:?}",
                Duration::from_secs_f64(self.send_window_s.max(0.0))
            ));
        }
        Ok(())
    }

    /// The send window of a fixed rate's batched sends (None: each send on time).
    pub fn send_window(&self) -> Option<Duration> {
        (self.send_window_s > 0.0).then(|| Duration::from_secs_f64(self.send_window_s))
    }

    pub fn duration(&self) -> Option<Duration> {
        match self.stop {
            Stop::Duration { secs } => Some(Duration::from_secs_f64(secs)),
            Stop::Ops { .. } => None,
        }
    }
}

/// A run id: 1-63 of a-z 0-9 . _ -, beginning and ending with a letter or digit (it names
/// files and table rows, and is a Kubernetes label value).
pub fn parse_run_id(s: &str) -> Result<String, crate::error::Invalid> {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = (1..=63).contains(&s.len())
        && s.chars().all(|c| alnum(c) || matches!(c, '.' | '_' | '-'))
        && s.starts_with(alnum)
        && s.ends_with(alnum);
    if ok {
        Ok(s.to_string())
    } else {
        Err(crate::invalid!(
            "'{s}' is not a run id: 1-63 of a-z 0-9 . _ -, beginning and ending with a letter or digit (e.g. run-0412)"
        ))
    }
}

/// A run id for a run that names none: `run-YYYYMMDD-HHMMSS`, the UTC time `unix_s`, then
/// `-PID` with a `process` (local loaders started the same second stay apart); an id
/// [`parse_run_id`] takes, and so also a Kubernetes label value.
pub fn default_run_id(unix_s: u64, process: Option<u32>) -> String {
    let t = crate::format::rfc3339_utc(unix_s); // 2026-11-22T02:30:05Z
    let id = format!(
        "run-{}-{}",
        t[..10].replace('-', ""),
        t[11..19].replace(':', "")
    );
    match process {
        Some(pid) => format!("{id}-{pid}"),
        None => id,
    }
}

/// The latest start time accepted: 2100-01-01T00:00:00Z. A later one is a slip (Unix
/// milliseconds given as seconds would be tens of thousands of years ahead).
const LATEST_START_UNIX_S: f64 = 4_102_444_800.0;

/// A wall-clock instant: RFC 3339 (`2026-11-24T13:00:00Z`) or Unix seconds, before 2100.
pub fn parse_start_at(s: &str) -> Result<f64, crate::error::Invalid> {
    let t = s.trim();
    let at = if let Ok(v) = t.parse::<f64>() {
        Some(v).filter(|v| v.is_finite() && *v > 0.0)
    } else {
        humantime::parse_rfc3339_weak(t)
            .ok()
            .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs_f64())
    };
    match at {
        Some(v) if v < LATEST_START_UNIX_S => Ok(v),
        Some(v) if v / 1000.0 < LATEST_START_UNIX_S => Err(crate::invalid!(
            "'{s}' is not a start time: it is after 2100 as seconds; in Unix seconds it would be {:.0} (milliseconds are not taken)",
            (v / 1000.0).floor()
        )),
        Some(_) => Err(crate::invalid!(
            "'{s}' is not a start time: it is after 2100; give RFC 3339 (e.g. 2026-11-24T13:00:00Z) or Unix seconds"
        )),
        None => Err(crate::invalid!(
            "'{s}' is not a start time: give RFC 3339 (e.g. 2026-11-24T13:00:00Z) or Unix seconds"
        )),
    }
}

/// A limit on a share (a capacity criterion or settle condition): `90%` or `0.9`, or `off`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareLimit(pub Option<f64>);

/// A limit on a count (pending compactions): `20`, or `off`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountLimit(pub Option<f64>);

/// `off`/`none`, else a non-negative number with or without `%`: (number, had `%`).
fn limit(s: &str) -> Result<Option<(f64, bool)>, crate::error::Invalid> {
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
        .map_err(|_| crate::invalid!("'{s}': expected a number, a percentage or off"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(crate::invalid!("'{s}': must not be negative"));
    }
    Ok(Some((v, share)))
}

impl FromStr for ShareLimit {
    type Err = crate::error::Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ShareLimit(match limit(s)? {
            None => None,
            Some((v, true)) => Some(v / 100.0),
            Some((v, false)) if v > 1.0 => {
                return Err(crate::invalid!("'{s}': give a share as 0.9 or 90%"));
            }
            Some((v, false)) => Some(v),
        }))
    }
}

impl fmt::Display for ShareLimit {
    /// As a fraction (`0.9`), which reads back exactly.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            None => f.write_str("off"),
            Some(v) => write!(f, "{v}"),
        }
    }
}

impl FromStr for CountLimit {
    type Err = crate::error::Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match limit(s)? {
            Some((_, true)) => Err(crate::invalid!(
                "'{s}': give a number (not a percentage) or off"
            )),
            v => Ok(CountLimit(v.map(|(v, _)| v))),
        }
    }
}

impl fmt::Display for CountLimit {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            None => f.write_str("off"),
            Some(v) => write!(f, "{v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_shares_or_counts_or_off_and_read_back() {
        let share = |s: &str| s.parse::<ShareLimit>().map(|l| l.0);
        assert_eq!(share("off").unwrap(), None);
        assert_eq!(share("90%").unwrap(), Some(0.9));
        assert_eq!(share("0.5").unwrap(), Some(0.5));
        assert!(
            share("90")
                .unwrap_err()
                .contains("give a share as 0.9 or 90%")
        );
        assert!(share("-1%").unwrap_err().contains("must not be negative"));
        let count = |s: &str| s.parse::<CountLimit>().map(|l| l.0);
        assert_eq!(count("20").unwrap(), Some(20.0));
        assert_eq!(count("None").unwrap(), None);
        assert!(count("-1").is_err() && count("lots").is_err() && count("5%").is_err());
        for text in ["30%", "off", "0.5%", "100%", "0.07"] {
            let l: ShareLimit = text.parse().unwrap();
            assert_eq!(l.to_string().parse::<ShareLimit>().unwrap(), l, "{text}");
        }
        assert_eq!(CountLimit(Some(20.0)).to_string(), "20");
    }

    #[test]
    fn the_default_run_id_is_the_readable_utc_time_and_a_run_id() {
        assert_eq!(default_run_id(1_795_314_605, None), "run-20261122-023005");
        let local = default_run_id(1_795_314_605, Some(4242));
        assert_eq!(local, "run-20261122-023005-4242");
        for id in [local.as_str(), "run-20261122-023005"] {
            parse_run_id(id).unwrap();
        }
    }

    #[test]
    fn shards_split_operations_disjointly_and_cover_them_all() {
        assert_eq!(
            "1/4".parse::<Share>().unwrap(),
            Share { index: 1, count: 4 }
        );
        for bad in ["4/4", "1/0", "x/2", "1", "-1/2", "1/2/3", "1/20000"] {
            assert!(bad.parse::<Share>().is_err(), "{bad}");
        }
        let shares: Vec<Share> = (0..3).map(|index| Share { index, count: 3 }).collect();
        let mut seen: Vec<u64> = shares
            .iter()
            .flat_map(|s| (0..s.local_count(10)).map(|i| s.global(i)))
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert_eq!(shares.iter().map(|s| s.split(128)).sum::<usize>(), 128);
        assert_eq!(
            shares.iter().map(|s| s.split(2)).collect::<Vec<_>>(),
            [1, 1, 1]
        );
        assert!(Share::WHOLE.is_whole());
        assert_eq!(Share::WHOLE.global(7), 7);
    }

    #[test]
    fn rates_are_absolute_or_a_share_of_a_result() {
        assert_eq!(parse_rate_arg("2k"), Ok(RateArg::PerSecond(2000.0)));
        assert_eq!(parse_rate_arg("35%"), Ok(RateArg::Share(0.35)));
        assert!(parse_rate_arg("0%").is_err());
        assert!(parse_rate_arg("x%").unwrap_err().contains("not a rate"));
        assert!(parse_rate_arg("-5").is_err());
        assert_eq!(RateArg::Share(0.35).resolve(Some(10_000.0)), Ok(3500.0));
        assert_eq!(RateArg::PerSecond(7.0).resolve(None), Ok(7.0));
        assert!(
            RateArg::Share(0.35)
                .resolve(None)
                .unwrap_err()
                .contains("--of")
        );
        assert!(RateArg::Share(0.35).resolve(Some(0.0)).is_err());
    }

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

    #[test]
    fn start_times_are_seconds_or_rfc3339_before_2100() {
        assert_eq!(parse_start_at("1795314605").unwrap(), 1_795_314_605.0);
        assert_eq!(
            parse_start_at("2026-11-22T02:30:05Z").unwrap(),
            1_795_314_605.0
        );
        let e = parse_start_at("1795314605000").unwrap_err();
        assert!(e.contains("would be 1795314605"), "{e}");
        assert!(parse_start_at("2e19").unwrap_err().contains("after 2100"));
        assert!(parse_start_at("soon").is_err());
        assert!(parse_start_at("-5").is_err());
        assert!(parse_run_id("run-0412").is_ok());
        for bad in ["", "Run", "-a", "a-", &"a".repeat(64), "a/b"] {
            assert!(parse_run_id(bad).is_err(), "{bad:?}");
        }
    }
}
