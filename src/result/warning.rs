//! Quality problems a reader must see next to the numbers, and the checks of a finished phase
//! that raise them.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{IntervalRecord, PhaseResult, PhaseSummary};

/// Quality problems a reader must see next to the numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Warning {
    RateNotAchieved {
        phase: String,
        target_per_s: f64,
        achieved_per_s: f64,
    },
    ClientSaturated {
        phase: String,
        cpu_util: f64,
    },
    Errors {
        phase: String,
        errors: u64,
        ops: u64,
    },
    TooFewSamples {
        phase: String,
        ops: u64,
    },
    /// The warmup left a backlog that the measured window caught up.
    BacklogCarriedOver {
        phase: String,
        ops: u64,
        scheduled: u64,
        ops_per_s: f64,
        target_per_s: f64,
    },
    /// Compactions (typically of the rampup's writes) were pending when the measured window
    /// began and ran during it: the window's figures include their cost.
    CompactionsInWindow {
        phase: String,
        /// Highest pending compactions of any node at the window's start.
        pending_at_start: f64,
        /// Share of the window's samples with a compaction pending on some node.
        busy_share: f64,
    },
    Interrupted,
    /// This host's CPUs were (nearly) all busy over the measured window: where the client and
    /// the nodes share the host, the figures are the host's limit as much as Cassandra's.
    HostSaturated {
        phase: String,
        /// Mean share of all CPUs busy (user + system) over the window.
        host_cpu: f64,
        /// Mean CPU of cqlbench itself, in cores.
        client_cpu_cores: f64,
        /// Mean CPU of the local nodes' processes together, in cores (none when not local).
        nodes_cpu_cores: Option<f64>,
    },
    /// A node's process went away during the run without a scheduled fault naming it.
    NodeDied {
        phase: String,
        node: String,
        /// Seconds since the run's start.
        at_s: f64,
    },
    /// Appending to the acknowledged-write ledger failed (a full disk, say): the run went on,
    /// but writes acknowledged from then on are not in the ledger, so `verify` cannot vouch
    /// for them.
    LedgerFailed {
        phase: String,
        error: String,
    },
    /// Appending to the HDR interval log failed: the run went on, but the log holds only the
    /// intervals before the failure (the result's own histograms are complete).
    HlogFailed {
        phase: String,
        error: String,
    },
    /// Appending to the per-interval CSV failed: the run went on, but the CSV holds only the
    /// intervals before the failure (the result's JSON holds them all).
    IntervalCsvFailed {
        phase: String,
        error: String,
    },
    /// One shard of a merged run could not keep up: the merged throughput is short by its
    /// part, or the merged latencies include its own delays.
    ShardBehind {
        shard: String,
        reasons: Vec<String>,
    },
    /// The shards' main phases did not start together.
    ShardStartSpread {
        spread_ms: f64,
    },
    /// A node's settings differ from the node the client asked's (whose settings the result
    /// records): `differ` is (name, this node's value, the asked node's value).
    NodeSettingsDiffer {
        node: String,
        asked: String,
        differ: Vec<(String, String, String)>,
    },
    /// The client reached fewer nodes of its data centre than the cluster reports: every
    /// request went through the nodes it reached.
    NodesUnreachable {
        dc: Option<String>,
        connected: usize,
        nodes: usize,
        unreachable: Vec<String>,
    },
    /// The client sent late: its send lag's p99 exceeds the service time's, so the tail of the
    /// response times is more the client's delay (a starved timer or runtime, a host shared
    /// with the nodes) than the cluster's.
    SendLagDominates {
        phase: String,
        send_lag_p99_ms: f64,
        response_p99_ms: f64,
        service_p99_ms: f64,
    },
    /// The client was built without optimisation: its figures at high rates are its own
    /// limits as much as the cluster's.
    UnoptimisedClient {
        profile: String,
        opt_level: String,
    },
}

/// [`Warning::BacklogCarriedOver`] in words.
fn backlog_text(
    phase: &str,
    ops: u64,
    scheduled: u64,
    ops_per_s: f64,
    target_per_s: f64,
) -> String {
    format!(
        "{phase}: {ops} operations scheduled in the warmup were sent late inside the measured window ({:.1}% of its {scheduled}): the client caught up a backlog, and the window's throughput ({ops_per_s:.0} ops/s, {:.1}% of the {target_per_s:.0} targeted) includes it; use a longer warmup",
        100.0 * ops as f64 / scheduled.max(1) as f64,
        100.0 * ops_per_s / target_per_s
    )
}

/// [`Warning::HostSaturated`] in words.
fn host_text(phase: &str, host_cpu: f64, client_cpu_cores: f64, nodes: Option<f64>) -> String {
    format!(
        "{phase}: this host's CPUs were {:.0}% busy over the window (cqlbench {client_cpu_cores:.2} cores{}): the client and the nodes share them, so the figures may be the host's or the load generator's limit rather than Cassandra's",
        host_cpu * 100.0,
        nodes
            .map(|n| format!(", the nodes {n:.2} cores"))
            .unwrap_or_default()
    )
}

/// [`Warning::SendLagDominates`] in words.
fn send_lag_text(phase: &str, lag_p99: f64, response_p99: f64, service_p99: f64) -> String {
    format!(
        "{phase}: the client sent late: its send lag p99 ({lag_p99:.2} ms) exceeds the service time p99 ({service_p99:.2} ms; response time p99 {response_p99:.2} ms), so the tail of the response times is more the client's own delay than the cluster's; give the client CPUs of its own (another host, or taskset apart from the nodes) or fewer --threads"
    )
}

/// [`Warning::NodeSettingsDiffer`] in words: the first few settings that differ.
fn settings_text(node: &str, asked: &str, differ: &[(String, String, String)]) -> String {
    const SHOWN: usize = 5;
    let listed: Vec<String> = differ
        .iter()
        .take(SHOWN)
        .map(|(name, mine, theirs)| format!("{name} {mine} ({theirs})"))
        .collect();
    let mut text = format!(
        "node {node}'s settings differ from those of {asked}, the node asked (its values in brackets): {}",
        listed.join(", ")
    );
    if differ.len() > SHOWN {
        text += &format!(" and {} more", differ.len() - SHOWN);
    }
    text
}

/// [`Warning::NodesUnreachable`] in words.
fn unreachable_text(
    dc: Option<&str>,
    connected: usize,
    nodes: usize,
    unreachable: &[String],
) -> String {
    format!(
        "the client reached {connected} of the {nodes} nodes{} the cluster reports (unreachable: {}): every request went through {} coordinator{}, so the throughput is that of fewer coordinators and token-aware routing was lost for the others' ranges; behind NAT or a load balancer give --address-map INTERNAL=EXTERNAL,…, or --require-all-nodes to refuse such a run",
        dc.map(|d| format!(" in {d}")).unwrap_or_default(),
        unreachable.join(", "),
        connected,
        if connected == 1 { "" } else { "s" }
    )
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::RateNotAchieved {
                phase,
                target_per_s,
                achieved_per_s,
            } => write!(
                f,
                "{phase}: achieved {achieved_per_s:.0} ops/s of the {target_per_s:.0} targeted ({:.1}%): the cluster or the client could not keep up; response times include the queueing",
                100.0 * achieved_per_s / target_per_s
            ),
            Warning::ClientSaturated { phase, cpu_util } => write!(
                f,
                "{phase}: the client used {:.0}% of its threads' CPU: it may be the bottleneck, not the cluster (add --threads or another client)",
                cpu_util * 100.0
            ),
            Warning::Errors { phase, errors, ops } => write!(
                f,
                "{phase}: {errors} errors in {ops} operations ({:.2}%)",
                100.0 * *errors as f64 / (*ops).max(1) as f64
            ),
            Warning::TooFewSamples { phase, ops } => write!(
                f,
                "{phase}: only {ops} operations measured: high percentiles are not meaningful"
            ),
            Warning::BacklogCarriedOver {
                phase,
                ops,
                scheduled,
                ops_per_s,
                target_per_s,
            } => f.write_str(&backlog_text(
                phase,
                *ops,
                *scheduled,
                *ops_per_s,
                *target_per_s,
            )),
            Warning::HostSaturated {
                phase,
                host_cpu,
                client_cpu_cores,
                nodes_cpu_cores,
            } => f.write_str(&host_text(
                phase,
                *host_cpu,
                *client_cpu_cores,
                *nodes_cpu_cores,
            )),
            Warning::SendLagDominates {
                phase,
                send_lag_p99_ms,
                response_p99_ms,
                service_p99_ms,
            } => f.write_str(&send_lag_text(
                phase,
                *send_lag_p99_ms,
                *response_p99_ms,
                *service_p99_ms,
            )),
            Warning::CompactionsInWindow {
                phase,
                pending_at_start,
                busy_share,
            } => write!(
                f,
                "{phase}: {pending_at_start:.0} compactions were pending when the measured window began (the rampup's writes still compacting), and some were pending in {:.0}% of the window's samples: its throughput and latency include their cost; wait for compactions first (e.g. a fill, then --skip-rampup) or use a longer warmup",
                busy_share * 100.0
            ),
            Warning::Interrupted => write!(
                f,
                "the run was interrupted: the result holds what was measured until then"
            ),
            Warning::NodeDied { phase, node, at_s } => write!(
                f,
                "{phase}: {node} died {at_s:.0}s into the run (no scheduled fault named it): the operations it coordinated or replicated failed or went to other replicas from then on"
            ),
            Warning::ShardBehind { shard, reasons } => write!(
                f,
                "shard {shard} fell behind ({}): the merged throughput is short by its part or the merged latencies include its own delays; load from more or larger clients",
                reasons.join("; ")
            ),
            Warning::UnoptimisedClient { profile, opt_level } => write!(
                f,
                "this client was built without optimisation (profile {profile}, opt-level {opt_level}): it does about a third of the release build's operations per CPU-second, so near its CPU limit it measures itself, not the cluster; build with `cargo build --release` for figures to publish"
            ),
            Warning::NodesUnreachable {
                dc,
                connected,
                nodes,
                unreachable,
            } => f.write_str(&unreachable_text(
                dc.as_deref(),
                *connected,
                *nodes,
                unreachable,
            )),
            Warning::NodeSettingsDiffer {
                node,
                asked,
                differ,
            } => f.write_str(&settings_text(node, asked, differ)),
            Warning::ShardStartSpread { spread_ms } => write!(
                f,
                "the shards' main phases started {spread_ms:.0} ms apart: the merged intervals' edges are blurred by that much"
            ),
            Warning::LedgerFailed { phase, error } => write!(
                f,
                "{phase}: the acknowledged-write ledger could not be written ({error}): writes acknowledged from then on are not in it, and verify does not check them"
            ),
            Warning::HlogFailed { phase, error } => write!(
                f,
                "{phase}: the HDR interval log could not be written ({error}): it holds only the intervals before that; the result's histograms are complete"
            ),
            Warning::IntervalCsvFailed { phase, error } => write!(
                f,
                "{phase}: the per-interval CSV could not be written ({error}): it holds only the intervals before that; the result's JSON holds them all"
            ),
        }
    }
}

/// A warning when compactions were pending at the start of a phase's measured window (from
/// the run's server metrics, when sampled).
pub fn compaction_warning(
    phase: &PhaseResult,
    metrics: &crate::result::series::MetricSeries,
) -> Option<Warning> {
    let measured: Vec<&IntervalRecord> = phase.intervals.iter().filter(|i| i.measured()).collect();
    let (first, last) = (measured.first()?, measured.last()?);
    let (start, end) = (phase.offset_s + first.start_s, phase.offset_s + last.end_s);
    // The highest pending count of any node in each sample of the window that has one.
    let pending: Vec<f64> = metrics
        .samples
        .iter()
        .filter(|s| s.t_s >= start && s.t_s <= end)
        .filter_map(|s| {
            s.nodes
                .iter()
                .filter_map(|n| n.pending_compactions)
                .reduce(f64::max)
        })
        .collect();
    let at_start = *pending.first()?;
    if at_start < 1.0 {
        return None;
    }
    let busy = pending.iter().filter(|p| **p >= 1.0).count() as f64 / pending.len() as f64;
    Some(Warning::CompactionsInWindow {
        phase: phase.name.clone(),
        pending_at_start: at_start,
        busy_share: busy,
    })
}

/// The host's CPUs busy at or above this share over a window make it saturated.
pub const HOST_SATURATED: f64 = 0.9;

/// A phase's measured window (its warmup left out) on the run's axis: (start, end) in seconds
/// since the run started, the axis of [`crate::result::series::Sample::t_s`]; none without a
/// measured interval.
pub fn measured_window(phase: &PhaseResult) -> Option<(f64, f64)> {
    let measured: Vec<&IntervalRecord> = phase.intervals.iter().filter(|i| i.measured()).collect();
    let (first, last) = (measured.first()?, measured.last()?);
    Some((phase.offset_s + first.start_s, phase.offset_s + last.end_s))
}

/// The mean host CPU (user + system, a share of all CPUs), cqlbench's and the local nodes'
/// CPU (cores) over a phase's measured window, from the run's host samples.
pub fn host_cpu(
    phase: &PhaseResult,
    metrics: &crate::result::series::MetricSeries,
) -> Option<(f64, f64, Option<f64>)> {
    let (start, end) = measured_window(phase)?;
    let hosts: Vec<&crate::result::series::HostSample> = metrics
        .samples
        .iter()
        .filter(|s| s.t_s >= start && s.t_s <= end)
        .filter_map(|s| s.host.as_ref())
        .collect();
    if hosts.is_empty() {
        return None;
    }
    let n = hosts.len() as f64;
    let cpu = hosts.iter().map(|h| h.cpu_user + h.cpu_system).sum::<f64>() / n;
    let client = hosts.iter().map(|h| h.client_cpu_cores).sum::<f64>() / n;
    let nodes = hosts
        .iter()
        .map(|h| h.node_cpu_cores.iter().flatten().sum::<f64>())
        .sum::<f64>()
        / n;
    let local = hosts.iter().any(|h| !h.node_cpu_cores.is_empty());
    Some((cpu, client, local.then_some(nodes)))
}

/// A warning when the host's CPUs were saturated over a phase's measured window.
pub fn host_warning(
    phase: &PhaseResult,
    metrics: &crate::result::series::MetricSeries,
) -> Option<Warning> {
    let (cpu, client, nodes) = host_cpu(phase, metrics)?;
    (cpu >= HOST_SATURATED).then(|| Warning::HostSaturated {
        phase: phase.name.clone(),
        host_cpu: cpu,
        client_cpu_cores: client,
        nodes_cpu_cores: nodes,
    })
}

/// A send lag p99 below this (ms) is never called the latency figure: a scheduler's ordinary
/// wake-up delays.
pub const SEND_LAG_NOTED_MS: f64 = 1.0;

/// Typed warnings for a finished phase.
pub fn phase_warnings(phase: &str, s: &PhaseSummary) -> Vec<Warning> {
    let mut w = Vec::new();
    if let (Some(target), Some(ratio)) = (s.target_rate_per_s, s.achieved_ratio)
        && ratio < 0.99
    {
        w.push(Warning::RateNotAchieved {
            phase: phase.into(),
            target_per_s: target,
            achieved_per_s: target * ratio,
        });
    }
    if s.client_cpu_util > 0.9 {
        w.push(Warning::ClientSaturated {
            phase: phase.into(),
            cpu_util: s.client_cpu_util,
        });
    }
    if s.errors > 0 && s.errors as f64 > 0.001 * (s.ok + s.errors) as f64 {
        w.push(Warning::Errors {
            phase: phase.into(),
            errors: s.errors,
            ops: s.ok + s.errors,
        });
    }
    if let (Some(carried), Some(scheduled), Some(target)) =
        (s.carried_over_ops, s.scheduled_ops, s.target_rate_per_s)
        && carried as f64 > 0.001 * scheduled as f64
    {
        w.push(Warning::BacklogCarriedOver {
            phase: phase.into(),
            ops: carried,
            scheduled,
            ops_per_s: s.ops_per_s,
            target_per_s: target,
        });
    }
    if let Some(lag) = &s.send_lag
        && lag.p99_ms >= SEND_LAG_NOTED_MS
        && lag.p99_ms >= s.all.service.p99_ms
    {
        w.push(Warning::SendLagDominates {
            phase: phase.into(),
            send_lag_p99_ms: lag.p99_ms,
            response_p99_ms: s.all.response.p99_ms,
            service_p99_ms: s.all.service.p99_ms,
        });
    }
    if s.ok < 1000 {
        w.push(Warning::TooFewSamples {
            phase: phase.into(),
            ops: s.ok,
        });
    }
    w
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn nodes_out_of_reach_are_named_with_what_it_means_and_what_to_do() {
        let w = Warning::UnoptimisedClient {
            profile: "quick".into(),
            opt_level: "0".into(),
        };
        assert!(
            w.to_string().starts_with(
                "this client was built without optimisation (profile quick, opt-level 0)"
            ),
            "{w}"
        );
        let w = Warning::NodesUnreachable {
            dc: Some("dc1".into()),
            connected: 1,
            nodes: 3,
            unreachable: vec!["198.18.0.12".into(), "198.18.0.13".into()],
        };
        let text = w.to_string();
        assert!(
            text.starts_with(
                "the client reached 1 of the 3 nodes in dc1 the cluster reports (unreachable: 198.18.0.12, 198.18.0.13): every request went through 1 coordinator,"
            ),
            "{text}"
        );
        assert!(text.contains("--address-map") && text.contains("--require-all-nodes"));
        let r = crate::result::Reach {
            dc: Some("dc1".into()),
            nodes: vec!["a".into(), "b".into(), "c".into()],
            connected: vec!["a".into()],
            other_dcs: 0,
        };
        assert_eq!(
            r.line(),
            "connected to 1 of 3 nodes in dc1 (unreachable: b, c)"
        );
        assert!(!r.complete());
        let all = crate::result::Reach {
            connected: r.nodes.clone(),
            ..r
        };
        assert_eq!(all.line(), "connected to 3 of 3 nodes in dc1");
        assert!(all.complete());
    }

    #[test]
    fn a_node_whose_settings_differ_is_named_with_both_values_and_the_list_is_bounded() {
        let asked: std::collections::BTreeMap<String, String> = [
            ("concurrent_reads", "32"),
            ("compaction_throughput", "64MiB/s"),
            ("cdc_enabled", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut asked = asked;
        asked.insert("listen_address".into(), "10.0.0.1".into());
        asked.insert("hints_directory".into(), "/n1/hints".into());
        let mut other = asked.clone();
        // Its own address and directories differ by nature: not listed.
        other.insert("listen_address".into(), "10.0.0.2".into());
        other.insert("hints_directory".into(), "/n2/hints".into());
        other.insert("compaction_throughput".into(), "7MiB/s".into());
        other.remove("cdc_enabled");
        other.insert("new_setting".into(), "1".into());
        let differ = crate::result::settings_differing(&asked, &other);
        assert_eq!(
            differ.into_iter().collect::<Vec<_>>(),
            [
                ("cdc_enabled".to_string(), crate::result::ABSENT.to_string()),
                ("compaction_throughput".into(), "7MiB/s".into()),
                ("new_setting".into(), "1".into()),
            ]
        );
        assert!(crate::result::settings_differing(&asked, &asked).is_empty());
        let w = Warning::NodeSettingsDiffer {
            node: "127.0.0.3".into(),
            asked: "127.0.0.1".into(),
            differ: vec![(
                "compaction_throughput".into(),
                "7MiB/s".into(),
                "64MiB/s".into(),
            )],
        };
        assert_eq!(
            w.to_string(),
            "node 127.0.0.3's settings differ from those of 127.0.0.1, the node asked (its values in brackets): compaction_throughput 7MiB/s (64MiB/s)"
        );
        let many = Warning::NodeSettingsDiffer {
            node: "n".into(),
            asked: "a".into(),
            differ: (0..8)
                .map(|i| (format!("s{i}"), "1".into(), "2".into()))
                .collect(),
        };
        assert!(many.to_string().ends_with("s4 1 (2) and 3 more"), "{many}");
    }
    use crate::result::OpSummary;
    use crate::stats::OpStats;

    fn summary(
        target: Option<f64>,
        ratio: Option<f64>,
        util: f64,
        ok: u64,
        errors: u64,
    ) -> PhaseSummary {
        let all = OpSummary::of(&OpStats::default(), 1.0);
        PhaseSummary {
            measured_s: 10.0,
            ok,
            errors,
            ops_per_s: ok as f64 / 10.0,
            target_rate_per_s: target,
            achieved_ratio: ratio,
            scheduled_ops: None,
            sent_on_schedule: None,
            drain_s: 0.0,
            carried_over_ops: None,
            by_op: BTreeMap::new(),
            all,
            errors_by_kind: BTreeMap::new(),
            driver: None,
            client_cpu_s: 1.0,
            client_cpu_util: util,
            ops_per_client_cpu_s: 1.0,
            client_max_rss_bytes: 0,
            max_backlog: 0,
            max_send_lag_ms: 0.0,
            send_lag: None,
            send_lag_histogram_ns: None,
        }
    }

    #[test]
    fn warnings_flag_rate_saturation_errors_and_few_samples() {
        let w = phase_warnings("main", &summary(Some(2000.0), Some(0.9), 0.95, 500, 10));
        assert!(
            matches!(w[0], Warning::RateNotAchieved { achieved_per_s, .. } if (achieved_per_s - 1800.0).abs() < 1e-6)
        );
        assert!(matches!(w[1], Warning::ClientSaturated { .. }));
        assert!(matches!(w[2], Warning::Errors { errors: 10, .. }));
        assert!(matches!(w[3], Warning::TooFewSamples { .. }));
        assert!(w[0].to_string().contains("90.0%"));
        assert!(
            phase_warnings("main", &summary(Some(2000.0), Some(0.995), 0.5, 100_000, 0)).is_empty()
        );
    }

    /// A send lag whose p99 exceeds the service time's says so; a lag under a millisecond, or
    /// one below the service time's p99, does not.
    #[test]
    fn a_send_lag_past_the_service_time_at_p99_is_a_warning() {
        let lagging = |lag_p99: f64, service_p99: f64| {
            let mut s = summary(Some(100.0), Some(1.0), 0.1, 100_000, 0);
            s.all.response.p99_ms = 170.0;
            s.all.service.p99_ms = service_p99;
            s.send_lag = Some(crate::stats::Percentiles {
                p99_ms: lag_p99,
                ..Default::default()
            });
            phase_warnings("main", &s)
        };
        let w = lagging(163.0, 4.0);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            w[0].to_string(),
            "main: the client sent late: its send lag p99 (163.00 ms) exceeds the service time \
             p99 (4.00 ms; response time p99 170.00 ms), so the tail of the response times is \
             more the client's own delay than the cluster's; give the client CPUs of its own \
             (another host, or taskset apart from the nodes) or fewer --threads"
        );
        assert!(lagging(0.9, 0.2).is_empty(), "under a millisecond");
        assert!(lagging(3.0, 5.0).is_empty(), "below the service time's p99");
    }

    #[test]
    fn compactions_pending_at_the_window_start_are_a_warning() {
        use crate::result::series::{MetricSeries, NodeSample, Sample};
        let r = crate::result::fixture::run("lab", &crate::result::fixture::RunShape::default());
        let main = r.main_phase().unwrap().clone();
        let measured: Vec<_> = main.intervals.iter().filter(|i| i.measured()).collect();
        let start = main.offset_s + measured[0].start_s;
        let end = main.offset_s + measured.last().unwrap().end_s;
        // Two nodes sampled each second; node 2 has compactions pending for the first 4 s of
        // the window.
        let series = |pending_for: f64| MetricSeries {
            interval_s: 1.0,
            nodes: vec!["node1".into(), "node2".into()],
            samples: (0..)
                .map(|i| start + f64::from(i))
                .take_while(|t| *t <= end)
                .map(|t| Sample {
                    t_s: t,
                    nodes: vec![
                        NodeSample {
                            pending_compactions: Some(0.0),
                            ..Default::default()
                        },
                        NodeSample {
                            pending_compactions: Some(if t < start + pending_for {
                                3.0
                            } else {
                                0.0
                            }),
                            ..Default::default()
                        },
                    ],
                    host: None,
                    node_hosts: Vec::new(),
                })
                .collect(),
            ..Default::default()
        };
        let s = series(4.0);
        let n = s.samples.len() as f64;
        let w = compaction_warning(&main, &s).expect("pending at the start");
        assert_eq!(
            w,
            Warning::CompactionsInWindow {
                phase: "main".into(),
                pending_at_start: 3.0,
                busy_share: 4.0 / n,
            }
        );
        assert!(w.to_string().contains("3 compactions were pending"), "{w}");
        // None pending at the start: no warning, even if some start later.
        let mut later = series(0.0);
        later.samples.last_mut().unwrap().nodes[1].pending_compactions = Some(2.0);
        assert_eq!(compaction_warning(&main, &later), None);
        // No readings: nothing to say.
        assert_eq!(compaction_warning(&main, &MetricSeries::default()), None);
    }

    #[test]
    fn a_host_busy_over_the_window_is_a_warning_naming_who_used_it() {
        use crate::result::series::{HostSample, MetricSeries, Sample};
        let r = crate::result::fixture::run("lab", &crate::result::fixture::RunShape::default());
        let main = r.main_phase().unwrap();
        let measured: Vec<_> = main.intervals.iter().filter(|i| i.measured()).collect();
        let start = main.offset_s + measured[0].start_s;
        let end = main.offset_s + measured.last().unwrap().end_s;
        // One sample before the window (idle, must not count), then the window at `busy`.
        let series = |busy: f64| MetricSeries {
            interval_s: 1.0,
            nodes: vec!["node1".into()],
            samples: std::iter::once(start - 1.0)
                .chain(
                    (0..)
                        .map(|i| start + f64::from(i))
                        .take_while(|t| *t <= end),
                )
                .map(|t| Sample {
                    t_s: t,
                    nodes: vec![Default::default()],
                    host: Some(HostSample {
                        cpu_user: if t < start { 0.0 } else { busy * 0.8 },
                        cpu_system: if t < start { 0.0 } else { busy * 0.2 },
                        node_cpu_cores: vec![Some(1.2)],
                        client_cpu_cores: 0.7,
                        ..Default::default()
                    }),
                    node_hosts: Vec::new(),
                })
                .collect(),
            ..Default::default()
        };
        let w = host_warning(main, &series(0.95)).expect("95% busy is saturated");
        let Warning::HostSaturated {
            host_cpu,
            client_cpu_cores,
            nodes_cpu_cores,
            ..
        } = &w
        else {
            panic!("{w:?}")
        };
        assert!((host_cpu - 0.95).abs() < 1e-9, "{host_cpu}");
        assert!((client_cpu_cores - 0.7).abs() < 1e-9);
        assert!((nodes_cpu_cores.unwrap() - 1.2).abs() < 1e-9);
        let text = w.to_string();
        assert!(text.contains("95% busy"), "{text}");
        assert!(
            text.contains("cqlbench 0.70 cores, the nodes 1.20 cores"),
            "{text}"
        );
        assert_eq!(host_warning(main, &series(0.6)), None);
        // Not sampled (a remote cluster): nothing to say.
        assert_eq!(host_warning(main, &MetricSeries::default()), None);
    }

    #[test]
    fn a_backlog_caught_up_inside_the_window_is_a_warning_with_its_figures() {
        // The cold-node case: 2,000 ops/s targeted, 105.96% measured in the window because
        // 4,177 operations of the warmup's schedule went out late inside it.
        let mut s = summary(Some(2000.0), Some(1.0), 0.3, 127_152, 0);
        s.ops_per_s = 2119.2;
        s.scheduled_ops = Some(120_000);
        s.carried_over_ops = Some(4_177);
        let w = phase_warnings("main", &s);
        assert_eq!(w.len(), 1, "{w:?}");
        let text = w[0].to_string();
        assert!(
            text.starts_with("main: 4177 operations scheduled in the warmup were sent late"),
            "{text}"
        );
        assert!(
            text.contains("(3.5% of its 120000)") && text.contains("106.0% of the 2000"),
            "{text}"
        );
        // A few late sends at the boundary are not worth a warning.
        s.carried_over_ops = Some(100);
        assert!(phase_warnings("main", &s).is_empty());
    }
}
